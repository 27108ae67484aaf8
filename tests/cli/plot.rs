//! Figures: each figure type drawn as SVG and PNG from a small study output, the plot file's
//! format checks, the long CSV read back, and `apusim study ... --plot` / `apusim plot`.

use crate::common;

use apusim_experiments::{Record, StudyOutput};
use apusim_sweep::plot::{self, study, Format, PanelKind};
use common::apusim;
use std::path::Path;

fn rec(config: &str, workload: &str, policy: &str, metric: &str, value: f64) -> Record {
    Record::new(config, workload, policy, metric, value)
}

fn output(study: &str, title: &str, records: Vec<Record>) -> StudyOutput {
    StudyOutput {
        study: study.into(),
        title: title.into(),
        paper: String::new(),
        records,
    }
}

/// A small output of each figure type, with the panel kind it must give.
fn samples() -> Vec<(StudyOutput, PanelKind)> {
    let mut bars = Vec::new();
    for (scene, nru, gspc) in [("courtyard", 1.04, 0.93), ("lake", 1.1, 0.88)] {
        bars.push(rec("8MB", scene, "DRRIP", "misses_norm", 1.0));
        bars.push(rec("8MB", scene, "NRU", "misses_norm", nru));
        bars.push(rec("8MB", scene, "GSPC", "misses_norm", gspc));
    }
    bars.push(rec("8MB", "mean", "GSPC", "misses_norm", 0.905));
    let mut curves = Vec::new();
    for (i, v) in [1.2, 0.95, 1.05, 1.01].into_iter().enumerate() {
        curves.push(rec("1C1G", &format!("S{}", i + 1), "DRP", "cpu_speedup", v));
        curves.push(rec(
            "1C1G",
            &format!("S{}", i + 1),
            "DRP",
            "gpu_speedup",
            2.0 - v,
        ));
    }
    let mut lines = Vec::new();
    for (w, base) in [("lbm", 20.0), ("bfs", 3.0)] {
        for (k, size) in ["256KB", "512KB", "1024KB"].into_iter().enumerate() {
            lines.push(rec("type A", w, size, "cpi", base / (k + 1) as f64));
        }
    }
    let mut stacked = Vec::new();
    for (title, shares) in [("Crysis", [0.4, 0.3, 0.3]), ("HL2", [0.2, 0.5, 0.3])] {
        for (s, v) in ["C", "T", "Z"].iter().zip(shares) {
            stacked.push(rec("4C1G", title, s, "dram_read_share", v));
        }
    }
    vec![
        (
            output("gspc-fig12", "LLC misses normalized to DRRIP", bars),
            PanelKind::Bars,
        ),
        (
            output("drp-fig12", "DRP speedup per mix", curves),
            PanelKind::Curves,
        ),
        (
            output("tap-fig2", "CPI against LLC ways", lines),
            PanelKind::Lines,
        ),
        (
            output("crit-fig2", "DRAM reads by stream", stacked),
            PanelKind::Stacked,
        ),
    ]
}

/// `s` as the SVG writes text: XML-escaped.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The PNG's width and height, decoded (which checks the whole image data).
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let decoder = png::Decoder::new(bytes);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    // Something besides the white background was drawn.
    assert!(buf[..info.buffer_size()].iter().any(|&b| b < 128));
    (info.width, info.height)
}

#[test]
fn every_figure_kind_renders_to_svg_and_png_with_its_labels() {
    for (out, kind) in samples() {
        let fig = study::figure(&out, None).unwrap();
        assert!(
            fig.panels.iter().all(|p| p.kind == kind),
            "{}: {:?}",
            out.study,
            fig.panels.iter().map(|p| p.kind).collect::<Vec<_>>()
        );
        let svg = String::from_utf8(plot::render(&fig, Format::Svg).unwrap()).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains(&xml(&out.title)), "{}: no title", out.study);
        for p in &fig.panels {
            assert!(
                svg.contains(&xml(&p.y_label)),
                "{}: no {}",
                out.study,
                p.y_label
            );
            assert!(
                svg.contains(&xml(&p.x_label)),
                "{}: no {}",
                out.study,
                p.x_label
            );
        }
        // Every policy (the legend's series; the x positions of lines) is named.
        for r in &out.records {
            assert!(
                svg.contains(&xml(&r.policy)),
                "{}: no {}",
                out.study,
                r.policy
            );
        }
        let png = plot::render(&fig, Format::Png).unwrap();
        let (w, h) = png_size(&png);
        assert_eq!(w, 1280, "{}", out.study);
        assert!(
            h >= 400 * fig.panels.len() as u32 && h < 600 * fig.panels.len() as u32,
            "{}: {h} pixels high for {} panels",
            out.study,
            fig.panels.len()
        );
    }
}

#[test]
fn normalized_bars_have_a_geomean_and_units_on_the_axes() {
    let (out, _) = samples().remove(0);
    let fig = study::figure(&out, None).unwrap();
    let svg = String::from_utf8(plot::render(&fig, Format::Svg).unwrap()).unwrap();
    for word in [
        "geomean",
        "LLC misses normalized to 2-bit DRRIP",
        "scene",
        "courtyard",
        "lake",
    ] {
        assert!(svg.contains(word), "{word} missing");
    }
    // The study's own `mean` row is not a group: the plot draws its geometric mean.
    let p = &fig.panels[0];
    assert_eq!(p.groups, ["courtyard", "lake", "geomean"]);
    let g = p.values[2][2].unwrap();
    assert!((g - (0.93f64 * 0.88).sqrt()).abs() < 1e-12, "{g}");
    // Stacked shares get a mean bar; sorted curves are ascending in the last policy.
    let all = samples();
    let crit = study::figure(&all[3].0, None).unwrap();
    assert_eq!(crit.panels[0].groups, ["Crysis", "HL2", "mean"]);
    let drp = study::figure(&all[1].0, Some("cpu_speedup")).unwrap();
    assert_eq!(drp.panels.len(), 1);
    let v: Vec<f64> = drp.panels[0].values.iter().map(|r| r[0].unwrap()).collect();
    assert_eq!(v, [0.95, 1.01, 1.05, 1.2]);
}

#[test]
fn plot_files_are_svg_or_png() {
    assert_eq!(Format::of(Path::new("a.svg")), Ok(Format::Svg));
    assert_eq!(Format::of(Path::new("dir/a.PNG")), Ok(Format::Png));
    for bad in ["a.pdf", "a.jpg", "a"] {
        let e = Format::of(Path::new(bad)).unwrap_err();
        assert!(e.contains(".svg or .png"), "{e}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = samples().remove(0);
    let fig = study::figure(&out, None).unwrap();
    let bad = dir.path().join("fig.eps");
    assert!(plot::write_figure(&bad, &fig).is_err());
    assert!(!bad.exists());
    // Written atomically: the file and nothing else in the directory.
    let good = dir.path().join("fig.png");
    plot::write_figure(&good, &fig).unwrap();
    png_size(&std::fs::read(&good).unwrap());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn the_long_csv_reads_back_and_bad_lines_are_named() {
    let mut out = samples().remove(0).0;
    out.records.push(rec(
        "4C1G, inclusive",
        "a \"b\"",
        "GSPC",
        "misses_norm",
        0.5,
    ));
    let text = out.to_csv();
    let back = study::parse_csv(&text, "fig.csv").unwrap();
    assert_eq!(back.study, out.study);
    assert_eq!(back.records, out.records);
    // The title is the paper's caption, as the CSV holds no title.
    assert!(back.title.contains("gspc Fig. 12"), "{}", back.title);
    let header = "study,config,workload,policy,metric,value\n";
    for (body, want) in [
        (
            "gspc-fig12,8MB,lake,GSPC,misses_norm\n",
            "fig.csv:2: 5 fields",
        ),
        (
            "gspc-fig12,8MB,lake,GSPC,misses_norm,1\ngspc-fig12,8MB,lake,GSPC,misses_norm,x\n",
            "fig.csv:3: value `x`",
        ),
        (
            "gspc-fig12,\"8MB,lake,GSPC,misses_norm,1\n",
            "fig.csv:2: an unclosed quote",
        ),
        (
            "gspc-fig12,8MB,lake,GSPC,m,1\ngspc-fig11,8MB,lake,GSPC,m,1\n",
            "fig.csv:3: study `gspc-fig11`",
        ),
        ("", "fig.csv: no records"),
    ] {
        let e = study::parse_csv(&format!("{header}{body}"), "fig.csv").unwrap_err();
        assert!(e.to_string().contains(want), "{e} (wanted {want})");
    }
    let e = study::parse_csv("a,b\n", "fig.csv").unwrap_err();
    assert!(
        e.to_string().contains("fig.csv:1: expected the header"),
        "{e}"
    );
}

#[test]
fn results_refuse_a_plot_file_of_another_format_before_opening_the_database() {
    let o = apusim(&[
        "results",
        "/nonexistent/runs.db",
        "--pivot",
        "--metric",
        "read_misses",
        "--plot",
        "pivot.gif",
    ]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(!o.status.success());
    assert!(
        err.contains("--plot") && err.contains("`.gif` is not a plot format"),
        "{err}"
    );
    assert!(!err.contains("runs.db"), "{err}");
}

#[test]
fn every_study_command_has_a_figure() {
    let o = apusim(&["study", "--help"]);
    assert!(o.status.success());
    let help = String::from_utf8(o.stdout).unwrap();
    let names: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .collect();
    assert!(names.len() >= 30, "{names:?}");
    for n in &names {
        assert!(study::spec(n).is_some(), "`apusim study {n}` has no figure");
    }
    // The commands are the registry's studies, in its order.
    assert_eq!(names, study::studies().collect::<Vec<_>>());
}

#[test]
fn a_study_draws_its_figure_and_apusim_plot_redraws_it_from_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("fig11.png");
    let csv = dir.path().join("fig11.csv");
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let (png_s, csv_s) = (arg(&png), arg(&csv));
    let study = [
        "study",
        "gspc-fig11",
        "--scenes",
        "lake",
        "--width",
        "160",
        "--height",
        "100",
        "--frames",
        "1",
        "--llc",
        "256K",
        "--no-cache",
        "--threads",
        "2",
    ];
    // A plot file of another format is refused when the command line is read.
    let bad = dir.path().join("fig11.pdf");
    let o = apusim(&[&study[..], &["--plot", bad.to_str().unwrap()]].concat());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(!o.status.success());
    assert!(
        err.contains("--plot") && err.contains(".svg or .png") && !err.contains("panicked"),
        "{err}"
    );
    assert!(!bad.exists());
    let o = apusim(&[&study[..], &["--plot", &png_s, "--csv", &csv_s]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (w, _) = png_size(&std::fs::read(&png).unwrap());
    assert_eq!(w, 1280);
    // Lines over t: the swept values along x.
    let svg = dir.path().join("again.svg");
    let o = apusim(&["plot", &csv_s, "-o", svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    for word in ["gspc-fig11", "t=2", "t=16", "GSPZTC threshold t", "lake"] {
        assert!(text.contains(word), "{word} missing");
    }
    // A malformed CSV names its line; an unknown metric lists the study's.
    let broken = dir.path().join("broken.csv");
    std::fs::write(
        &broken,
        "study,config,workload,policy,metric,value\ngspc-fig11,256KB,lake,t=2\n",
    )
    .unwrap();
    let o = apusim(&[
        "plot",
        broken.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        !o.status.success() && err.contains("broken.csv:2:"),
        "{err}"
    );
    let o = apusim(&["plot", &csv_s, "-o", &png_s, "--metric", "ipc"]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        !o.status.success() && err.contains("misses_change_pct_vs_t16"),
        "{err}"
    );
}
