//! SVG charts drawn with plotters: line charts (IOPS against depth, latency
//! percentiles, bandwidth against block size, per-second series) and
//! grouped bar charts. An axis turns logarithmic when its values span more
//! than two decades, so a 100x range stays readable; on a logarithmic axis
//! values are drawn as points, never as bars (a bar's length would mean
//! nothing). Legends sit beside the plot, so they never cover data.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// Colours of successive series (Tableau 10), listed on each chart so the
/// browser test can find every series among the drawn marks.
pub const PALETTE: &[&str] = &[
    "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F",
    "#BCBD22", "#17BECF",
];

/// The plot's own size; a legend adds width beside it.
pub(crate) const SIZE: (u32, u32) = (640, 400);
/// Horizontal bar and dot charts: wide enough for category names on the
/// left and the values beside them.
const WIDE: u32 = 860;
/// Approximate width of one character of the 13px legend and label text.
const CHAR_PX: u32 = 7;

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// What the x axis holds, which decides its scale and its ticks.
#[derive(Clone, Copy)]
pub enum XAxis {
    /// Numbers: linear, or logarithmic beyond two decades.
    Number,
    /// Whole numbers only (seconds, interval numbers): no tick between two
    /// of them, so no label repeats.
    Whole,
    /// Powers of two (block sizes, depths): a log2 axis with a tick at each
    /// power, labelled by the function ("4k", "32"), as storage people read
    /// these curves.
    PowersOfTwo(fn(f64) -> String),
}

/// A span of x shaded and named in the legend (a stabilisation period).
#[derive(Clone)]
pub struct Span {
    pub from: f64,
    pub to: f64,
    pub name: String,
}

pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub x_axis: XAxis,
    /// The y scale (true: logarithmic) shared by charts meant to be read
    /// side by side; `None` decides from this chart's values.
    pub y_log: Option<bool>,
    pub shaded: Vec<Span>,
}

impl LineChart {
    /// A chart with the x axis and y scale decided from the data.
    pub fn new(title: String, x_label: &str, y_label: &str, series: Vec<Series>) -> LineChart {
        LineChart {
            title,
            x_label: x_label.into(),
            y_label: y_label.into(),
            series,
            x_axis: XAxis::Number,
            y_log: None,
            shaded: Vec::new(),
        }
    }
}

pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// One bar per group in each category.
    pub groups: Vec<Series>,
}

/// A rendered chart: the SVG and the colours its series were drawn in.
pub struct Rendered {
    pub svg: String,
    pub colours: Vec<&'static str>,
    /// CSS selector of what the data is drawn as: lines and their points, or
    /// bars.
    pub mark: &'static str,
}

fn colour(i: usize) -> RGBColor {
    let hex = PALETTE[i % PALETTE.len()];
    let v = u32::from_str_radix(&hex[1..], 16).expect("palette is hex");
    RGBColor((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

const SHADE: RGBColor = RGBColor(0xE4, 0xE4, 0xE4);

/// Whether values spanning `lo..=hi` need a logarithmic axis.
pub fn wants_log(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo > 100.0
}

/// The lowest and highest of `values`.
pub fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// The unit latencies up to `max_ns` read best in, and its size in ns:
/// "7 ms", not "7k µs".
pub fn latency_unit(max_ns: f64) -> (f64, &'static str) {
    if max_ns >= 2e9 {
        (1e9, "s")
    } else if max_ns >= 1e6 {
        (1e6, "ms")
    } else {
        (1e3, "µs")
    }
}

/// The round step between ticks plotters puts about `span / 10` apart:
/// 1, 2, 2.5 or 5 times a power of ten.
fn tick_step(span: f64) -> f64 {
    let raw = span / 10.0;
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let decade = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * decade)
}

/// The SI prefix numbers as large as `a` are written with, and its size.
fn si_unit(a: f64) -> (f64, &'static str) {
    if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    }
}

/// A tick label with as many decimals as ticks `step` apart need to differ
/// ("1.25k" beside "1.5k"), and no more.
pub fn axis_number(v: f64, step: f64) -> String {
    if v.abs() < step.abs() * 1e-6 {
        return "0".into();
    }
    let (div, unit) = si_unit(v.abs());
    // Half the step: plotters sometimes ticks between the round steps.
    let fine = step.abs() / div / 2.0;
    let decimals = (0..=4)
        .find(|d| {
            let scaled = fine * 10f64.powi(*d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(4) as usize;
    let mut text = format!("{:.*}", decimals, v / div);
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if text == "-0" {
        text = "0".into();
    }
    format!("{text}{unit}")
}

/// A logarithmic axis over `r`, ticked at `log_ticks`.
fn log_axis(
    r: std::ops::Range<f64>,
) -> plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<f64>> {
    let ticks = log_ticks(r.start, r.end);
    r.log_scale().with_key_points(ticks)
}

/// The ticks of a logarithmic axis over `lo..=hi`: each decade's 1, 2 and
/// 5, so that data between two powers of ten sit beside a label (only the
/// powers of ten where that would be more than a dozen).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let decades = lo.log10().floor() as i32..=hi.log10().ceil() as i32;
    let within = |steps: &[f64]| -> Vec<f64> {
        decades
            .clone()
            .flat_map(|d| steps.iter().map(move |m| m * 10f64.powi(d)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let fine = within(&[1.0, 2.0, 5.0]);
    match fine.len() > 12 {
        true => within(&[1.0]),
        false => fine,
    }
}

/// A tick of a logarithmic axis, to three significant digits: "0.015",
/// "1.5", "250k" (ticks there are a decade's 1, 2, 5 and steps between).
pub fn log_number(v: f64) -> String {
    let (div, unit) = si_unit(v.abs());
    let x = v / div;
    let decimals = if x.abs() >= 100.0 || x == 0.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        (-x.abs().log10().floor()) as usize + 2
    };
    let mut text = format!("{:.*}", decimals.min(9), x);
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{text}{unit}")
}

/// 1500 -> "1.5k", 2300000 -> "2.3M": short numbers for titles and marks.
pub fn short_number(v: f64) -> String {
    let (div, unit) = si_unit(v.abs());
    let x = v / div;
    let text = if x.abs() >= 100.0 || x.fract().abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    };
    format!("{text}{unit}")
}

/// How legend entries are drawn: a line sample, a square, or a shade.
#[derive(Clone, Copy, PartialEq)]
enum Swatch {
    Line,
    Square,
    Shade,
}

struct LegendEntry {
    name: String,
    colour: String,
    swatch: Swatch,
}

/// The legend's width beside the plot (0: no legend).
fn legend_width(entries: &[LegendEntry]) -> u32 {
    if entries.len() < 2 && !entries.iter().any(|e| e.swatch == Swatch::Shade) {
        return 0;
    }
    let chars = entries
        .iter()
        .map(|e| e.name.chars().count())
        .max()
        .unwrap_or(0) as u32;
    (chars * CHAR_PX + 40).clamp(100, 360)
}

/// The legend as its own SVG group at `x`, beside the plot: the browser
/// test finds it by its class.
fn legend_svg(entries: &[LegendEntry], x: u32, width: u32) -> String {
    let fits = ((width.saturating_sub(36)) / CHAR_PX) as usize;
    let mut out = format!(
        "<g class=\"legend\" font-family=\"sans-serif\" font-size=\"13\"><rect x=\"{}\" y=\"40\" width=\"{}\" height=\"{}\" fill=\"#FFFFFF\" stroke=\"#CCCCCC\"/>",
        x + 2,
        width - 6,
        entries.len() * 20 + 10
    );
    for (i, e) in entries.iter().enumerate() {
        let y = 50 + i as u32 * 20;
        let swatch = match e.swatch {
            Swatch::Line => format!(
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"/>",
                x + 8,
                y + 8,
                x + 26,
                y + 8,
                e.colour
            ),
            Swatch::Square | Swatch::Shade => format!(
                "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>",
                x + 11,
                y + 2,
                e.colour
            ),
        };
        let mut name: String = e.name.chars().take(fits).collect();
        if name.chars().count() < e.name.chars().count() {
            name.pop();
            name.push('…');
        }
        out.push_str(&format!(
            "{swatch}<text x=\"{}\" y=\"{}\">{}</text>",
            x + 32,
            y + 12,
            escape(&name)
        ));
    }
    out.push_str("</g>");
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The SVG without a text drawn twice at one place: plotters puts a tick
/// of a logarithmic axis where a decade and a step meet (1.0 and 0.99999)
/// twice, and one label over another reads as a repeated tick.
fn without_repeated_texts(svg: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        let Some(len) = rest[start..].find("</text>") else {
            break;
        };
        let end = start + len + "</text>".len();
        out.push_str(&rest[..start]);
        let element = &rest[start..end];
        if seen.insert(element) {
            out.push_str(element);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Draws `plot` into an SVG of the plot's size plus the legend's width,
/// then adds the legend beside it.
fn render(
    size: (u32, u32),
    legend: &[LegendEntry],
    plot: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let extra = legend_width(legend);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (size.0 + extra, size.1)).into_drawing_area();
        root.fill(&WHITE)?;
        let (area, _) = root.split_horizontally(size.0);
        plot(&area)?;
        root.present()?;
    }
    let mut svg = without_repeated_texts(&svg);
    if extra > 0 {
        let at = svg.rfind("</svg>").expect("plotters closes its svg");
        svg.insert_str(at, &legend_svg(legend, size.0, extra));
    }
    Ok(svg)
}

pub fn line_chart(chart: &LineChart) -> anyhow::Result<Rendered> {
    // A log2 axis is drawn as a linear one over log2 of x, with a tick at
    // each whole power labelled with the value itself (4k, 8k, ...).
    let log2 = matches!(chart.x_axis, XAxis::PowersOfTwo(_));
    let series: Vec<Series> = chart
        .series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            points: s
                .points
                .iter()
                .filter(|p| !log2 || p.0 > 0.0)
                .map(|&(x, y)| (if log2 { x.log2() } else { x }, y))
                .collect(),
        })
        .collect();
    let points = || series.iter().flat_map(|s| s.points.iter());
    let (x_lo, x_hi) = bounds(points().map(|p| p.0));
    let y_hi = bounds(points().map(|p| p.1)).1;
    anyhow::ensure!(x_lo.is_finite(), "chart {} has no data", chart.title);
    let x_log = matches!(chart.x_axis, XAxis::Number) && wants_log(x_lo, x_hi);
    let positive_lo = bounds(points().map(|p| p.1).filter(|v| *v > 0.0)).0;
    let y_log =
        chart.y_log.unwrap_or_else(|| wants_log(positive_lo, y_hi)) && positive_lo.is_finite();
    let x = if log2 {
        x_lo.floor() - 0.25..x_hi.ceil() + 0.25
    } else if x_hi > x_lo {
        x_lo..x_hi
    } else {
        x_lo * 0.5..x_hi * 1.5 + 1.0
    };
    let (x_ticks, x_step) = match chart.x_axis {
        XAxis::PowersOfTwo(_) => ((x_hi.ceil() - x_lo.floor()) as usize + 1, 1.0),
        // One tick per whole number when they fit, else plotters' round steps.
        XAxis::Whole => (((x.end - x.start).floor() as usize + 1).clamp(2, 10), 1.0),
        XAxis::Number => (10, tick_step(x.end - x.start)),
    };
    let x_axis = chart.x_axis;
    let x_label = move |v: f64| match x_axis {
        XAxis::PowersOfTwo(format) if (v - v.round()).abs() < 1e-6 => format(v.round().exp2()),
        XAxis::PowersOfTwo(_) => String::new(),
        XAxis::Whole if (v - v.round()).abs() < 1e-6 => format!("{}", v.round()),
        XAxis::Whole => String::new(),
        XAxis::Number if x_log => log_number(v),
        XAxis::Number => axis_number(v, x_step),
    };
    let y = if y_log {
        positive_lo * 0.8..y_hi * 1.25
    } else {
        0.0..(y_hi * 1.1).max(1.0)
    };
    let y_step = tick_step(y.end - y.start);
    let y_label = move |v: f64| {
        if y_log {
            log_number(v)
        } else {
            axis_number(v, y_step)
        }
    };
    let axes = Axes {
        x_label: &x_label,
        x_ticks,
        y_label: &y_label,
    };
    let mut legend: Vec<LegendEntry> = chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| LegendEntry {
            name: s.name.clone(),
            colour: PALETTE[i % PALETTE.len()].into(),
            swatch: Swatch::Line,
        })
        .collect();
    legend.extend(chart.shaded.iter().map(|s| LegendEntry {
        name: s.name.clone(),
        colour: "#E4E4E4".into(),
        swatch: Swatch::Shade,
    }));
    let chart = LineChart {
        title: chart.title.clone(),
        x_label: chart.x_label.clone(),
        y_label: chart.y_label.clone(),
        series,
        x_axis: chart.x_axis,
        y_log: Some(y_log),
        shaded: chart.shaded.clone(),
    };
    let log = log_axis;
    let svg = render(SIZE, &legend, |area| match (x_log, y_log) {
        (false, false) => draw_lines(area, &chart, &axes, x.clone(), y.clone()),
        (true, false) => draw_lines(area, &chart, &axes, log(x.clone()), y.clone()),
        (false, true) => draw_lines(area, &chart, &axes, x.clone(), log(y.clone())),
        (true, true) => draw_lines(area, &chart, &axes, log(x.clone()), log(y.clone())),
    })?;
    Ok(Rendered {
        svg,
        colours: (0..chart.series.len())
            .map(|i| PALETTE[i % PALETTE.len()])
            .collect(),
        mark: "polyline,circle",
    })
}

/// How the axes are labelled: the text at an x tick, how many x ticks, the
/// text at a y tick.
struct Axes<'a> {
    x_label: &'a dyn Fn(f64) -> String,
    x_ticks: usize,
    y_label: &'a dyn Fn(f64) -> String,
}

fn draw_lines<X, Y>(
    area: &DrawingArea<SVGBackend, Shift>,
    chart: &LineChart,
    axes: &Axes,
    x: X,
    y: Y,
) -> anyhow::Result<()>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut c = frame(area, &chart.title, 72).build_cartesian_2d(x, y)?;
    let (y_lo, y_hi) = {
        let r = c.plotting_area().get_y_range();
        (r.start, r.end)
    };
    for s in &chart.shaded {
        c.draw_series(std::iter::once(Rectangle::new(
            [(s.from, y_lo), (s.to, y_hi)],
            SHADE.filled(),
        )))?;
    }
    c.configure_mesh()
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .x_labels(axes.x_ticks)
        .x_label_formatter(&|v| (axes.x_label)(*v))
        .y_label_formatter(&|v| (axes.y_label)(*v))
        .draw()?;
    for (i, s) in chart.series.iter().enumerate() {
        let style = colour(i).stroke_width(2);
        c.draw_series(LineSeries::new(s.points.iter().copied(), style))?;
        c.draw_series(
            s.points
                .iter()
                .map(|&p| Circle::new(p, 3, colour(i).filled())),
        )?;
    }
    Ok(())
}

/// The caption, margins and label areas every chart shares.
fn frame<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    y_label_area: u32,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(y_label_area);
    builder
}

/// Grouped bars, one group per series in each category; on a value axis
/// that must be logarithmic, points instead of bars. Categories whose names
/// would collide under vertical bars are listed down the left instead.
pub fn bar_chart(chart: &BarChart) -> anyhow::Result<Rendered> {
    let values = || {
        chart
            .groups
            .iter()
            .flat_map(|g| g.points.iter().map(|p| p.1))
    };
    let (lo, hi) = bounds(values().filter(|v| *v > 0.0));
    anyhow::ensure!(hi.is_finite(), "chart {} has no data", chart.title);
    let log = wants_log(lo, hi);
    let longest = chart
        .categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0) as u32;
    let slot = (SIZE.0 - 100) / chart.categories.len().max(1) as u32;
    let horizontal = log || longest * CHAR_PX > slot;
    let legend: Vec<LegendEntry> = chart
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| LegendEntry {
            name: g.name.clone(),
            colour: PALETTE[i % PALETTE.len()].into(),
            swatch: Swatch::Square,
        })
        .collect();
    let n = chart.categories.len() as f64;
    let svg = if horizontal {
        let rows = chart.categories.len() * chart.groups.len().max(1);
        let height = (rows as u32 * 18 + 130).max(SIZE.1);
        let label_area = (longest * CHAR_PX + 16).min(320);
        render((WIDE, height), &legend, |area| {
            if log {
                draw_across(
                    area,
                    chart,
                    log_axis(lo * 0.5..hi * 2.0),
                    label_area,
                    None,
                    true,
                )
            } else {
                let top = hi * 1.15;
                draw_across(
                    area,
                    chart,
                    0.0..top,
                    label_area,
                    Some(tick_step(top)),
                    false,
                )
            }
        })?
    } else {
        let top = hi * 1.15;
        render(SIZE, &legend, |area| {
            draw_bars(area, chart, -0.5..n - 0.5, 0.0..top, tick_step(top))
        })?
    };
    Ok(Rendered {
        svg,
        colours: (0..chart.groups.len())
            .map(|i| PALETTE[i % PALETTE.len()])
            .collect(),
        mark: if horizontal && log { "circle" } else { "rect" },
    })
}

fn draw_bars(
    area: &DrawingArea<SVGBackend, Shift>,
    chart: &BarChart,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    y_step: f64,
) -> anyhow::Result<()> {
    let mut c = frame(area, &chart.title, 72).build_cartesian_2d(x, y)?;
    let categories = chart.categories.clone();
    c.configure_mesh()
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .disable_x_mesh()
        .x_labels(categories.len().max(2))
        .x_label_formatter(&|v| {
            let i = v.round();
            if (v - i).abs() < 0.01 && i >= 0.0 {
                categories.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc(&chart.y_label)
        .y_label_formatter(&|v| axis_number(*v, y_step))
        .draw()?;
    let groups = chart.groups.len().max(1) as f64;
    let width = 0.8 / groups;
    for (g, group) in chart.groups.iter().enumerate() {
        let left = -0.4 + g as f64 * width;
        c.draw_series(group.points.iter().filter(|p| p.1 > 0.0).map(|&(cat, v)| {
            Rectangle::new(
                [(cat + left, 0.0), (cat + left + width * 0.9, v)],
                colour(g).filled(),
            )
        }))?;
    }
    Ok(())
}

/// Categories down the left, values along x: bars on a linear axis
/// (`step` its tick step), points on a logarithmic one.
fn draw_across<X>(
    area: &DrawingArea<SVGBackend, Shift>,
    chart: &BarChart,
    x: X,
    label_area: u32,
    step: Option<f64>,
    points: bool,
) -> anyhow::Result<()>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let n = chart.categories.len();
    let mut c =
        frame(area, &chart.title, label_area).build_cartesian_2d(x, -0.5..n as f64 - 0.5)?;
    let categories = chart.categories.clone();
    // The first category at the top, as it reads in the table.
    let row = move |cat: f64| (n - 1) as f64 - cat;
    c.configure_mesh()
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .disable_y_mesh()
        .y_labels(n.max(2))
        .y_label_formatter(&|v| {
            let i = v.round();
            if (v - i).abs() < 0.01 && i >= 0.0 && (i as usize) < n {
                categories[n - 1 - i as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc(&chart.y_label)
        .x_label_formatter(&|v| match step {
            Some(step) => axis_number(*v, step),
            None => log_number(*v),
        })
        .draw()?;
    let groups = chart.groups.len().max(1) as f64;
    let height = 0.8 / groups;
    let base = c.plotting_area().get_x_range().start;
    for (g, group) in chart.groups.iter().enumerate() {
        // The first group at the top of its category.
        let top = 0.4 - g as f64 * height;
        let shown = group.points.iter().filter(|p| p.1 > 0.0);
        if points {
            c.draw_series(shown.map(|&(cat, v)| {
                Circle::new((v, row(cat) + top - height / 2.0), 5, colour(g).filled())
            }))?;
        } else {
            c.draw_series(shown.map(|&(cat, v)| {
                Rectangle::new(
                    [(base, row(cat) + top), (v, row(cat) + top - height * 0.9)],
                    colour(g).filled(),
                )
            }))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(points: Vec<(f64, f64)>) -> LineChart {
        LineChart::new(
            "t".into(),
            "iodepth",
            "IOPS",
            vec![Series {
                name: "4k".into(),
                points,
            }],
        )
    }

    /// The text of every `<text>` element of `svg`, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = t.split_once('>')?.1;
                Some(body.split("</text>").next()?.trim().to_string())
            })
            .collect()
    }

    #[test]
    fn line_chart_draws_the_series() {
        let r = line_chart(&chart(vec![(1.0, 100.0), (8.0, 900.0), (128.0, 50_000.0)])).unwrap();
        assert!(r.svg.starts_with("<svg"));
        assert!(r.svg.contains("<polyline"));
        assert!(r.svg.contains(&PALETTE[0].to_lowercase()) || r.svg.contains(PALETTE[0]));
        assert!(r.svg.contains("iodepth") && r.svg.contains("IOPS"));
    }

    #[test]
    fn a_log_axis_is_ticked_at_each_decades_1_2_and_5() {
        assert_eq!(
            log_ticks(0.8, 125.0),
            [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        // Seven decades: the powers of ten alone.
        assert_eq!(log_ticks(1.0, 1e6).len(), 7);
        assert!(log_ticks(0.0, 10.0).is_empty());
        // Latencies near 70 µs between 1 and 100: a label beside them.
        let c = chart(vec![(1.0, 1.0), (2.0, 70.0), (3.0, 120.0)]);
        let mut c = c;
        c.y_log = Some(true);
        let labels = texts(&line_chart(&c).unwrap().svg);
        for label in ["2", "5", "20", "50"] {
            assert!(labels.iter().any(|l| l == label), "{label}: {labels:?}");
        }
    }

    #[test]
    fn log_axis_only_beyond_two_decades() {
        assert!(wants_log(1.0, 128.0));
        assert!(!wants_log(10.0, 900.0));
        assert!(!wants_log(0.0, 1e6));
    }

    #[test]
    fn a_log2_axis_ticks_each_power_of_two_with_its_value() {
        let mut c = chart(vec![(4096.0, 10.0), (65536.0, 20.0), (1_048_576.0, 30.0)]);
        c.x_axis = XAxis::PowersOfTwo(|v| crate::util::units::format_block_size(v as u64));
        let svg = line_chart(&c).unwrap().svg;
        for label in ["4k", "8k", "64k", "256k", "1m"] {
            assert!(svg.contains(&format!(">\n{label}\n<")), "no tick {label}");
        }
        // No tick between the powers, and no raw byte counts.
        assert!(!svg.contains(">\n4096\n<") && !svg.contains(">\n10000\n<"));
    }

    #[test]
    fn a_short_run_of_seconds_labels_each_second_once() {
        let mut c = chart(vec![(1.0, 100.0), (2.0, 120.0), (3.0, 110.0), (4.0, 130.0)]);
        c.x_axis = XAxis::Whole;
        let labels: Vec<String> = texts(&line_chart(&c).unwrap().svg)
            .into_iter()
            .filter(|t| t.parse::<f64>().is_ok())
            .collect();
        for s in ["1", "2", "3", "4"] {
            assert_eq!(labels.iter().filter(|l| *l == s).count(), 1, "{labels:?}");
        }
    }

    #[test]
    fn close_ticks_get_the_decimals_they_need() {
        assert_eq!(axis_number(1250.0, 250.0), "1.25k");
        assert_eq!(axis_number(1500.0, 250.0), "1.5k");
        assert_eq!(axis_number(2000.0, 500.0), "2k");
        assert_eq!(axis_number(0.0, 0.2), "0");
        assert_eq!(axis_number(0.4, 0.2), "0.4");
        assert_eq!(axis_number(1_000_500.0, 100.0), "1.0005M");
        assert_eq!(axis_number(0.0, 20_000.0), "0");
        assert_eq!(axis_number(500.0, 500.0), "500");
        assert_eq!(tick_step(2200.0), 250.0);
    }

    #[test]
    fn the_legend_sits_beside_the_plot() {
        let mut c = chart(vec![(1.0, 10.0), (2.0, 20.0)]);
        c.series.push(Series {
            name: "p99 <fast>".into(),
            points: vec![(1.0, 30.0), (2.0, 40.0)],
        });
        let svg = line_chart(&c).unwrap().svg;
        let legend = svg.split("<g class=\"legend\"").nth(1).expect("a legend");
        assert!(legend.contains("p99 &lt;fast&gt;"));
        // Every legend element starts right of the 640-pixel plot.
        for x in legend.split(" x=\"").skip(1) {
            let x: u32 = x.split('"').next().unwrap().parse().unwrap();
            assert!(x >= 640, "legend element at x={x}");
        }
    }

    #[test]
    fn bars_on_a_log_axis_become_points_across() {
        let drawn = |values: [f64; 2]| {
            bar_chart(&BarChart {
                title: "t".into(),
                y_label: "operations/s".into(),
                categories: vec!["create".into(), "stat".into()],
                groups: vec![Series {
                    name: "ext4".into(),
                    points: vec![(0.0, values[0]), (1.0, values[1])],
                }],
            })
            .unwrap()
            .mark
        };
        assert_eq!(drawn([50.0, 500_000.0]), "circle");
        assert_eq!(drawn([500.0, 900.0]), "rect");
    }

    #[test]
    fn a_label_drawn_twice_at_one_place_is_drawn_once() {
        let svg = "<svg><text x=\"1\">\n1\n</text><text x=\"1\">\n1\n</text><text x=\"2\">\n1\n</text></svg>";
        assert_eq!(
            without_repeated_texts(svg),
            "<svg><text x=\"1\">\n1\n</text><text x=\"2\">\n1\n</text></svg>"
        );
    }

    #[test]
    fn latency_axes_use_the_unit_that_fits() {
        assert_eq!(latency_unit(7_000_000.0).1, "ms");
        assert_eq!(latency_unit(900_000.0).1, "µs");
        assert_eq!(latency_unit(1_600_000.0).1, "ms");
        assert_eq!(latency_unit(3e9).1, "s");
    }

    #[test]
    fn empty_chart_is_an_error() {
        assert!(line_chart(&chart(Vec::new())).is_err());
    }

    #[test]
    fn log_ticks_keep_three_significant_digits() {
        assert_eq!(log_number(0.01), "0.01");
        assert_eq!(log_number(0.015), "0.015");
        assert_eq!(log_number(0.02), "0.02");
        assert_eq!(log_number(1.5), "1.5");
        assert_eq!(log_number(20.0), "20");
        assert_eq!(log_number(250_000.0), "250k");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(short_number(1500.0), "1.5k");
        assert_eq!(short_number(2_000_000.0), "2M");
        assert_eq!(short_number(12.5), "12.5");
    }
}
