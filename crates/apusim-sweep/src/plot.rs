//! Figures drawn with `plotters`, written as SVG or PNG (chosen by the file's extension).
//!
//! A [`Figure`] is a title over one or more stacked [`Panel`]s; each panel is one of the
//! papers' figure types ([`PanelKind`]): grouped bars (one group per x position, one bar per
//! series, the caller adds a `geomean` group), lines over a swept parameter (one line per
//! series), per-mix sorted curves (S-curves: x is the rank) or stacked bars (one bar per x
//! position, one segment per series). [`study`] builds figures from study outputs;
//! [`write()`] plots a results [`Pivot`].
//!
//! Text is laid out with `ab_glyph` from DejaVu Sans compiled into the binary (crate
//! `dejavu`), so PNGs render the same on a machine without fonts or fontconfig. The font's
//! licence is the DejaVu fonts licence (the Bitstream Vera licence plus public-domain
//! changes): free to use, embed and redistribute.

pub mod study;

use crate::results::Pivot;
use anyhow::{anyhow, bail, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;
use std::path::Path;
use std::sync::Once;

/// The shape of a results plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotKind {
    Bars,
    Lines,
}

/// The file format of a plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

impl Format {
    /// The format named by `path`'s extension: `.svg` or `.png` (either case).
    pub fn of(path: &Path) -> Result<Format, String> {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("svg") => Ok(Format::Svg),
            Some(e) if e.eq_ignore_ascii_case("png") => Ok(Format::Png),
            Some(e) => Err(format!(
                "{}: `.{e}` is not a plot format; name the file .svg or .png",
                path.display()
            )),
            None => Err(format!(
                "{}: name the file .svg or .png (the extension chooses the format)",
                path.display()
            )),
        }
    }
}

/// How a panel draws its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PanelKind {
    /// Grouped bars: one group per x position, one bar per series.
    Bars,
    /// Lines over a swept parameter: the x positions are its values, one line per series.
    Lines,
    /// Sorted curves: the x positions are ranks, one curve per series, no markers.
    Curves,
    /// Stacked bars: one bar per x position, one segment per series.
    Stacked,
}

/// One plot of a figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub kind: PanelKind,
    /// Drawn above the panel (empty: none).
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The x positions' names (groups of bars, swept values, ranks, stacked bars).
    pub groups: Vec<String>,
    /// The legend: bars of a group, lines, curves or segments.
    pub series: Vec<String>,
    /// `values[group][series]`; `None` (or a non-finite value) is not drawn.
    pub values: Vec<Vec<Option<f64>>>,
    /// A horizontal reference line (e.g. 1.0 for values normalized to a baseline).
    pub reference: Option<f64>,
}

/// A titled stack of panels.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub title: String,
    pub panels: Vec<Panel>,
}

const WIDTH: u32 = 1280;
const PANEL_HEIGHT: u32 = 460;
/// Pixels right of each panel for its legend.
const LEGEND_WIDTH: u32 = 220;
const TITLE_SIZE: f64 = 22.0;
const TITLE_LINE: u32 = 28;
const FONT: &str = "sans-serif";

/// Colours of the series: the Tableau 10 palette, then plotters' 99-colour palette.
fn color(i: usize) -> RGBColor {
    const T10: [(u8, u8, u8); 10] = [
        (78, 121, 167),
        (242, 142, 43),
        (225, 87, 89),
        (118, 183, 178),
        (89, 161, 79),
        (237, 201, 72),
        (176, 122, 161),
        (255, 157, 167),
        (156, 117, 95),
        (186, 176, 172),
    ];
    match T10.get(i) {
        Some(&(r, g, b)) => RGBColor(r, g, b),
        None => {
            let c = Palette99::pick(i - T10.len()).to_rgba();
            RGBColor(c.0, c.1, c.2)
        }
    }
}

/// Register DejaVu Sans as the `sans-serif` family that every text of a plot uses.
fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font shipped by the `dejavu` crate; a failure here
        // would be a broken dependency, reported when the first text is drawn.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Split `text` into lines of at most `width` characters at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The title's lines: wrapped to the width, at most four.
fn title_lines(title: &str) -> Vec<String> {
    let mut lines = wrap(title, 105);
    if lines.len() > 4 {
        lines.truncate(4);
        lines[3].push_str(" ...");
    }
    lines
}

/// The image's size for `fig`.
fn size_of(fig: &Figure) -> (u32, u32) {
    let title = title_lines(&fig.title).len().max(1) as u32 * TITLE_LINE + 16;
    (WIDTH, title + PANEL_HEIGHT * fig.panels.len().max(1) as u32)
}

/// `fig` drawn in `format`: the SVG text or the PNG file's bytes.
pub fn render(fig: &Figure, format: Format) -> Result<Vec<u8>> {
    check(fig)?;
    register_fonts();
    let size = size_of(fig);
    match format {
        Format::Svg => {
            let mut out = String::new();
            {
                let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
                draw_figure(&root, fig)?;
            }
            Ok(out.into_bytes())
        }
        Format::Png => {
            let mut rgb = vec![255u8; size.0 as usize * size.1 as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
                draw_figure(&root, fig)?;
            }
            encode_png(&rgb, size)
        }
    }
}

/// The colour of panel `p`'s series `s`: its name's place among the figure's `names`.
fn series_color(names: &[&str], p: &Panel, s: usize) -> RGBColor {
    color(names.iter().position(|n| *n == p.series[s]).unwrap_or(s))
}

/// RGB pixels as a PNG file.
fn encode_png(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Best);
        let mut writer = enc.write_header().context("encoding the PNG")?;
        writer.write_image_data(rgb).context("encoding the PNG")?;
    }
    Ok(out)
}

/// Write `fig` to `path` atomically, as SVG or PNG by the extension.
pub fn write_figure(path: &Path, fig: &Figure) -> Result<()> {
    let format = Format::of(path).map_err(|e| anyhow!(e))?;
    let bytes = render(fig, format)?;
    apusim_sim::report::write_atomic(path, &bytes)
}

/// A figure has panels, each with a value, and every row as long as the series.
fn check(fig: &Figure) -> Result<()> {
    if fig.panels.is_empty() {
        bail!("nothing to plot: the figure has no panel");
    }
    for p in &fig.panels {
        if p.values.len() != p.groups.len() || p.values.iter().any(|v| v.len() != p.series.len()) {
            bail!(
                "panel `{}`: {} groups × {} series, but the values do not match",
                p.title,
                p.groups.len(),
                p.series.len()
            );
        }
        if !p.values.iter().flatten().flatten().any(|v| v.is_finite()) {
            bail!("nothing to plot in panel `{}`: no value", p.title);
        }
    }
    Ok(())
}

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing the plot: {e}")
}

fn draw_figure<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure) -> Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let lines = title_lines(&fig.title);
    let title_h = lines.len().max(1) as u32 * TITLE_LINE + 16;
    let (top, rest) = root.split_vertically(title_h);
    let style = TextStyle::from((FONT, TITLE_SIZE).into_font().style(FontStyle::Bold))
        .pos(Pos::new(HPos::Center, VPos::Top))
        .color(&BLACK);
    for (i, line) in lines.iter().enumerate() {
        top.draw(&Text::new(
            line.clone(),
            (WIDTH as i32 / 2, 10 + i as i32 * TITLE_LINE as i32),
            style.clone(),
        ))
        .map_err(err)?;
    }
    // One colour per series name across the figure, so that a series keeps its colour in
    // panels where another (say the baseline of a normalized metric) is missing.
    let mut names: Vec<&str> = Vec::new();
    for n in fig.panels.iter().flat_map(|p| &p.series) {
        if !names.contains(&n.as_str()) {
            names.push(n);
        }
    }
    let areas = rest.split_evenly((fig.panels.len(), 1));
    for (area, panel) in areas.iter().zip(&fig.panels) {
        draw_panel(area, panel, &names)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// The y range of a panel: bars and lines of values close together (normalized results)
/// start above zero so that their differences show; stacked bars start at zero.
fn y_range(p: &Panel) -> (f64, f64) {
    let finite = || {
        p.values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
    };
    if p.kind == PanelKind::Stacked {
        let top = p
            .values
            .iter()
            .map(|row| row.iter().flatten().filter(|v| v.is_finite()).sum::<f64>())
            .fold(0f64, f64::max);
        return (0.0, if top > 0.0 { top * 1.05 } else { 1.0 });
    }
    let mut lo = finite().fold(f64::INFINITY, f64::min);
    let mut hi = finite().fold(f64::NEG_INFINITY, f64::max);
    if let Some(r) = p.reference {
        lo = lo.min(r);
        hi = hi.max(r);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.12
    } else {
        hi.abs().max(1.0) * 0.1
    };
    match p.kind {
        PanelKind::Bars if lo >= 0.0 && span >= 0.5 * hi => (0.0, hi + pad),
        PanelKind::Bars if lo >= 0.0 => {
            // A "nice" floor below the smallest bar, never below zero.
            let step = 10f64.powf((span.max(hi * 1e-3)).log10().floor()) / 2.0;
            (((lo - 2.0 * pad) / step).floor().max(0.0) * step, hi + pad)
        }
        PanelKind::Bars if hi <= 0.0 => (lo - pad, 0.0),
        PanelKind::Bars => (lo - pad, hi + pad),
        _ => (lo - pad, hi + pad),
    }
}

/// Pixels a text of `chars` characters takes at the label size (DejaVu Sans averages about
/// 0.55 em a character).
fn text_px(chars: usize, size: f64) -> i32 {
    (chars as f64 * size * 0.58) as i32
}

const LABEL_SIZE: f64 = 14.0;

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    names: &[&str],
) -> Result<()> {
    let color = |s: usize| series_color(names, p, s);
    let (plot_area, legend_area) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
    let n = p.groups.len().max(1);
    let (bottom, top) = y_range(p);
    // Group names along the x axis, vertical when they do not fit side by side.
    let plot_px = (WIDTH - LEGEND_WIDTH - 120) as i32;
    let longest = p
        .groups
        .iter()
        .map(|g| g.chars().count())
        .max()
        .unwrap_or(1);
    let curves = p.kind == PanelKind::Curves;
    let vertical = !curves && text_px(longest, LABEL_SIZE) + 8 > plot_px / n as i32;
    // Sorted curves put rank r at x = r; the other kinds centre position g in [g, g + 1).
    let x_range = if curves {
        0.5..n as f64 + 0.5
    } else {
        0.0..n as f64
    };
    let x_of = |g: usize| {
        if curves {
            g as f64 + 1.0
        } else {
            g as f64 + 0.5
        }
    };
    let x_area = if vertical {
        (text_px(longest.min(28), LABEL_SIZE) + 46).min(200) as u32
    } else {
        56
    };
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(&p.title, (FONT, 17).into_font().style(FontStyle::Bold))
        .margin(12)
        .x_label_area_size(x_area)
        .y_label_area_size(100)
        .build_cartesian_2d(x_range.clone(), bottom..top)
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .y_desc(&p.y_label)
        .x_desc(&p.x_label)
        .axis_desc_style((FONT, 15))
        .label_style((FONT, LABEL_SIZE))
        .y_labels(10)
        .light_line_style(WHITE.mix(0.0))
        .y_label_formatter(&|v| format_value(*v));
    if curves {
        // Ranks 1..n under the sorted curves.
        mesh.x_labels(n.min(12))
            .x_label_formatter(&|v| format!("{}", v.round() as i64));
    } else {
        mesh.x_labels(0);
    }
    mesh.draw().map_err(err)?;
    if !curves {
        let label = TextStyle::from((FONT, LABEL_SIZE).into_font()).color(&BLACK);
        // The chart's coordinates are the backend's; the area draws relative to its corner.
        let (bx, by) = plot_area.get_base_pixel();
        for (i, name) in p.groups.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64 + 0.5, bottom));
            let (x, y) = (x - bx, y - by);
            let text = if vertical && name.chars().count() > 28 {
                format!("{}…", name.chars().take(27).collect::<String>())
            } else {
                name.clone()
            };
            if vertical {
                let style = label
                    .clone()
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Right, VPos::Center));
                plot_area
                    .draw(&Text::new(text, (x, y + 6), style))
                    .map_err(err)?;
            } else {
                let style = label.clone().pos(Pos::new(HPos::Center, VPos::Top));
                plot_area
                    .draw(&Text::new(text, (x, y + 6), style))
                    .map_err(err)?;
            }
        }
    }
    let value = |g: usize, s: usize| p.values[g][s].filter(|v| v.is_finite());
    let series = p.series.len().max(1);
    match p.kind {
        PanelKind::Bars => {
            let width = 0.8 / series as f64;
            for s in 0..p.series.len() {
                let c = color(s);
                let bars = (0..p.groups.len()).filter_map(|g| {
                    let v = value(g, s)?;
                    let x0 = g as f64 + 0.1 + s as f64 * width;
                    let base = 0f64.clamp(bottom, top);
                    Some(Rectangle::new([(x0, base), (x0 + width, v)], c.filled()))
                });
                chart.draw_series(bars).map_err(err)?;
            }
        }
        PanelKind::Stacked => {
            for g in 0..p.groups.len() {
                let mut y = 0.0;
                for s in 0..p.series.len() {
                    let Some(v) = value(g, s) else { continue };
                    let r = Rectangle::new(
                        [(g as f64 + 0.15, y), (g as f64 + 0.85, y + v)],
                        color(s).filled(),
                    );
                    chart.draw_series(std::iter::once(r)).map_err(err)?;
                    y += v;
                }
            }
        }
        PanelKind::Lines | PanelKind::Curves => {
            for s in 0..p.series.len() {
                let c = color(s);
                let points: Vec<(f64, f64)> = (0..p.groups.len())
                    .filter_map(|g| value(g, s).map(|v| (x_of(g), v)))
                    .collect();
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        points.clone(),
                        c.stroke_width(2),
                    )))
                    .map_err(err)?;
                if p.kind == PanelKind::Lines || points.len() <= 40 {
                    chart
                        .draw_series(points.iter().map(|&pt| Circle::new(pt, 4, c.filled())))
                        .map_err(err)?;
                }
            }
        }
    }
    if let Some(r) = p.reference.filter(|r| *r > bottom && *r < top) {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x_range.start, r), (x_range.end, r)],
                BLACK.mix(0.6).stroke_width(1),
            )))
            .map_err(err)?;
    }
    draw_legend(&legend_area, p, names)
}

/// One swatch and name per series, from the top of the legend area.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    names: &[&str],
) -> Result<()> {
    let color = |s: usize| series_color(names, p, s);
    let (_, h) = area.dim_in_pixel();
    let count = p.series.len().max(1) as i32;
    let step = ((h as i32 - 60) / count).clamp(12, 22);
    let size = if step < 16 { 11.0 } else { 14.0 };
    let style = TextStyle::from((FONT, size).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (s, name) in p.series.iter().enumerate() {
        let y = 40 + step * s as i32;
        let c = color(s);
        match p.kind {
            PanelKind::Bars | PanelKind::Stacked => area
                .draw(&Rectangle::new([(4, y - 6), (18, y + 6)], c.filled()))
                .map_err(err)?,
            PanelKind::Lines | PanelKind::Curves => {
                area.draw(&PathElement::new(vec![(0, y), (22, y)], c.stroke_width(2)))
                    .map_err(err)?;
                area.draw(&Circle::new((11, y), 3, c.filled()))
                    .map_err(err)?;
            }
        }
        let text: String = if name.chars().count() > 26 {
            format!("{}…", name.chars().take(25).collect::<String>())
        } else {
            name.clone()
        };
        area.draw(&Text::new(text, (28, y), style.clone()))
            .map_err(err)?;
    }
    Ok(())
}

/// A tick value: no more digits than it needs.
fn format_value(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// The pivot as a one-panel figure; `what` names the plotted metric on the y axis. Bars get
/// a `geomean` group when the pivot is normalized.
pub fn pivot_figure(p: &Pivot, kind: PlotKind, what: &str) -> Figure {
    let mut groups = p.rows.clone();
    let mut values = p.cells.clone();
    if let (PlotKind::Bars, Some(g)) = (kind, &p.geomean) {
        groups.push("geomean".into());
        values.push(g.clone());
    }
    let y_label = match &p.baseline {
        Some(b) => format!("{what}, normalized to {} = {b}", p.col_param),
        None => what.to_string(),
    };
    Figure {
        title: format!("{what} by {} and {}", p.row_param, p.col_param),
        panels: vec![Panel {
            kind: match kind {
                PlotKind::Bars => PanelKind::Bars,
                PlotKind::Lines => PanelKind::Lines,
            },
            title: String::new(),
            x_label: p.row_param.clone(),
            y_label,
            groups,
            series: p.cols.clone(),
            values,
            reference: p.baseline.as_ref().map(|_| 1.0),
        }],
    }
}

/// The pivot as an SVG document (see [`pivot_figure`]).
pub fn svg(p: &Pivot, kind: PlotKind, what: &str) -> Result<String> {
    let bytes = render(&pivot_figure(p, kind, what), Format::Svg)?;
    String::from_utf8(bytes).map_err(|e| anyhow!("the SVG is not UTF-8: {e}"))
}

/// Write the pivot's plot to `path` (atomically), as SVG or PNG by the file's extension.
pub fn write(path: &Path, p: &Pivot, kind: PlotKind, what: &str) -> Result<()> {
    let bytes = render_pivot(path, p, kind, what)?;
    apusim_sim::report::write_atomic(path, &bytes)
}

/// The pivot's plot as the bytes of an SVG or PNG file, by the extension of `path`.
pub fn render_pivot(path: &Path, p: &Pivot, kind: PlotKind, what: &str) -> Result<Vec<u8>> {
    let format = Format::of(path).map_err(|e| anyhow!("--plot {e}"))?;
    render(&pivot_figure(p, kind, what), format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_keeps_its_colour_in_panels_without_the_others() {
        let panel = |series: &[&str]| Panel {
            kind: PanelKind::Bars,
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            groups: vec!["g".into()],
            series: series.iter().map(|s| s.to_string()).collect(),
            values: vec![vec![Some(1.0); series.len()]],
            reference: None,
        };
        let (all, some) = (panel(&["LRU", "UCP"]), panel(&["UCP"]));
        let names = ["LRU", "UCP"];
        assert_eq!(
            series_color(&names, &some, 0),
            series_color(&names, &all, 1)
        );
        assert_ne!(series_color(&names, &some, 0), color(0));
        let fig = Figure {
            title: "t".into(),
            panels: vec![all, some],
        };
        assert!(render(&fig, Format::Svg).is_ok());
    }

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
    fn only_svg_and_png_files_and_tables_with_values_are_plotted() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.pdf", "a"] {
            let e = write(&dir.path().join(name), &pivot(None), PlotKind::Bars, "x").unwrap_err();
            let e = e.to_string();
            assert!(e.contains("--plot") && e.contains(".svg or .png"), "{e}");
        }
        let mut empty = pivot(None);
        empty.cells = vec![vec![None, None], vec![None, None]];
        assert!(svg(&empty, PlotKind::Bars, "x").is_err());
        let path = dir.path().join("a.svg");
        write(&path, &pivot(Some("lru")), PlotKind::Bars, "x").unwrap();
        assert!(std::fs::read_to_string(path).unwrap().contains("</svg>"));
        let path = dir.path().join("a.PNG");
        write(&path, &pivot(Some("lru")), PlotKind::Lines, "x").unwrap();
        assert!(std::fs::read(path)
            .unwrap()
            .starts_with(b"\x89PNG\r\n\x1a\n"));
    }

    #[test]
    fn close_values_get_an_axis_above_zero_and_spread_ones_start_at_zero() {
        let mut p = pivot_figure(&pivot(Some("lru")), PlotKind::Bars, "x").panels[0].clone();
        p.values = vec![vec![Some(0.98), Some(1.02)]; 2];
        let (lo, hi) = y_range(&p);
        assert!(lo > 0.5 && lo < 0.98 && hi > 1.02, "{lo}..{hi}");
        p.values = vec![vec![Some(0.2), Some(1.0)]; 2];
        assert_eq!(y_range(&p).0, 0.0);
    }

    #[test]
    fn long_titles_wrap_at_spaces() {
        let t = "word ".repeat(60);
        let lines = title_lines(&t);
        assert!(lines.len() > 1 && lines.iter().all(|l| l.len() <= 105));
        assert_eq!(wrap("a b", 10), vec!["a b"]);
    }
}
