//! Plots of a [`Pivot`] as SVG: grouped bars (one group per row, one bar per column, and a
//! `geomean` group when the table is normalized) or lines over a swept parameter (the rows
//! along the x axis, one line per column).

use crate::results::Pivot;
use anyhow::{anyhow, bail, Result};
use plotters::prelude::*;
use std::path::Path;

/// The shape of a plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotKind {
    Bars,
    Lines,
}

const SIZE: (u32, u32) = (960, 540);
/// Pixels right of the plot for the legend.
const LEGEND_WIDTH: u32 = 170;

/// The pivot as an SVG document; `what` names the plotted metric on the y axis.
pub fn svg(p: &Pivot, kind: PlotKind, what: &str) -> Result<String> {
    let mut groups: Vec<(String, Vec<Option<f64>>)> = p
        .rows
        .iter()
        .cloned()
        .zip(p.cells.iter().cloned())
        .collect();
    if let (PlotKind::Bars, Some(g)) = (kind, &p.geomean) {
        groups.push(("geomean".into(), g.clone()));
    }
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .filter(|v| v.is_finite())
        .collect();
    if values.is_empty() {
        bail!("nothing to plot: no cell of the table has a value");
    }
    let top = values.iter().fold(0f64, |a, &b| a.max(b));
    let top = if top > 0.0 { top * 1.12 } else { 1.0 };
    let bottom = values.iter().fold(0f64, |a, &b| a.min(b));
    let n = groups.len();
    let y_desc = match &p.baseline {
        Some(b) => format!("{what}, normalized to {} = {b}", p.col_param),
        None => what.to_string(),
    };
    let e = |e: &dyn std::fmt::Display| anyhow!("drawing the plot: {e}");
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{what} by {} and {}", p.row_param, p.col_param),
                ("sans-serif", 20).into_font(),
            )
            .margin(20)
            .margin_right(LEGEND_WIDTH + 20)
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..n as f64, bottom..top)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.max(2))
            .x_label_formatter(&|_| String::new())
            .y_desc(y_desc)
            .draw()
            .map_err(|x| e(&x))?;
        let label_style = ("sans-serif", 14).into_font().color(&BLACK);
        for (i, (name, _)) in groups.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64 + 0.5, bottom));
            let w = name.len() as i32 * 7;
            root.draw(&Text::new(
                name.clone(),
                (x - w / 2, y + 10),
                label_style.clone(),
            ))
            .map_err(|x| e(&x))?;
        }
        let cols = p.cols.len();
        match kind {
            PlotKind::Bars => {
                let width = 0.8 / cols as f64;
                for (c, _) in p.cols.iter().enumerate() {
                    let color = Palette99::pick(c).to_rgba();
                    let bars = groups.iter().enumerate().filter_map(|(g, (_, v))| {
                        let val = v.get(c).copied().flatten()?;
                        let x0 = g as f64 + 0.1 + c as f64 * width;
                        Some(Rectangle::new(
                            [(x0, 0f64.max(bottom)), (x0 + width, val)],
                            color.filled(),
                        ))
                    });
                    chart.draw_series(bars).map_err(|x| e(&x))?;
                }
            }
            PlotKind::Lines => {
                for (c, _) in p.cols.iter().enumerate() {
                    let color = Palette99::pick(c).to_rgba();
                    let points: Vec<(f64, f64)> = groups
                        .iter()
                        .enumerate()
                        .filter_map(|(g, (_, v))| {
                            v.get(c).copied().flatten().map(|y| (g as f64 + 0.5, y))
                        })
                        .collect();
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            points.clone(),
                            color.stroke_width(2),
                        )))
                        .map_err(|x| e(&x))?;
                    chart
                        .draw_series(points.iter().map(|&pt| Circle::new(pt, 4, color.filled())))
                        .map_err(|x| e(&x))?;
                }
            }
        }
        // The legend: one swatch and name per column, right of the plot.
        for (c, name) in p.cols.iter().enumerate() {
            let color = Palette99::pick(c).to_rgba();
            let (x, y) = (SIZE.0 as i32 - LEGEND_WIDTH as i32, 60 + 20 * c as i32);
            root.draw(&Rectangle::new([(x, y), (x + 14, y + 14)], color.filled()))
                .map_err(|x| e(&x))?;
            root.draw(&Text::new(
                name.clone(),
                (x + 20, y),
                ("sans-serif", 14).into_font().color(&BLACK),
            ))
            .map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))?;
    }
    Ok(out)
}

/// Write the pivot's plot to `path` (atomically); the format is the file's extension (`.svg`).
pub fn write(path: &Path, p: &Pivot, kind: PlotKind, what: &str) -> Result<()> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => {}
        Some(other) => bail!(
            "{}: plots are written as SVG; `.{other}` is not supported (name the file .svg)",
            path.display()
        ),
        None => bail!("{}: name the plot file .svg", path.display()),
    }
    let text = svg(p, kind, what)?;
    apusim_sim::report::write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pivot(baseline: Option<&str>) -> Pivot {
        Pivot {
            row_param: "mix".into(),
            col_param: "policy".into(),
            rows: vec!["S1".into(), "D1".into()],
            cols: vec!["lru".into(), "srrip".into()],
            cells: vec![vec![Some(1.0), Some(0.5)], vec![Some(1.0), None]],
            baseline: baseline.map(String::from),
            geomean: baseline.map(|_| vec![Some(1.0), Some(0.5)]),
        }
    }

    #[test]
    fn bars_and_lines_name_every_row_and_column() {
        let s = svg(&pivot(Some("lru")), PlotKind::Bars, "read_misses").unwrap();
        assert!(s.starts_with("<svg"), "{}", &s[..40]);
        for word in [
            "S1",
            "D1",
            "geomean",
            "lru",
            "srrip",
            "normalized to policy = lru",
        ] {
            assert!(s.contains(word), "{word} missing");
        }
        // Three bars with values (S1 lru, S1 srrip, D1 lru) and two geomean bars, plus the
        // legend's two swatches and the background.
        let rects = s.matches("<rect").count();
        assert!(rects >= 5 + 2, "{rects} rectangles");
        let s = svg(&pivot(None), PlotKind::Lines, "ipc").unwrap();
        assert!(s.contains("<circle") && s.contains("<polyline"));
        assert!(!s.contains("geomean"));
    }

    #[test]
    fn only_svg_files_and_tables_with_values_are_plotted() {
        let dir = tempfile::tempdir().unwrap();
        let e = write(&dir.path().join("a.png"), &pivot(None), PlotKind::Bars, "x").unwrap_err();
        assert!(e.to_string().contains(".svg"), "{e}");
        let mut empty = pivot(None);
        empty.cells = vec![vec![None, None], vec![None, None]];
        assert!(svg(&empty, PlotKind::Bars, "x").is_err());
        let path = dir.path().join("a.svg");
        write(&path, &pivot(Some("lru")), PlotKind::Bars, "x").unwrap();
        assert!(std::fs::read_to_string(path).unwrap().contains("</svg>"));
    }
}
