//! SVG charts drawn with plotters: line charts (IOPS against depth, latency
//! percentiles, bandwidth against block size, per-second series) and grouped
//! bar charts. An axis turns logarithmic when its values span more than two
//! decades, so a 100x range stays readable.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// Colours of successive series (Tableau 10), listed on each chart so the
/// browser test can find every series among the drawn marks.
pub const PALETTE: &[&str] = &[
    "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F",
    "#BCBD22", "#17BECF",
];

const SIZE: (u32, u32) = (640, 400);

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Formats x tick labels (block sizes as "4k", depths as "32").
    pub x_format: fn(f64) -> String,
    /// Powers of two along x (block sizes, depths): a log2 axis with a tick
    /// at each power, as storage people read these curves.
    pub x_log2: bool,
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

/// Whether values spanning `lo..=hi` need a logarithmic axis.
pub fn wants_log(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo > 100.0
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

pub fn line_chart(chart: &LineChart) -> anyhow::Result<Rendered> {
    // A log2 axis is drawn as a linear one over log2 of x, with a tick at
    // each whole power labelled with the value itself (4k, 8k, ...).
    let log2 = chart.x_log2;
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
    let (y_lo, y_hi) = bounds(points().map(|p| p.1));
    anyhow::ensure!(x_lo.is_finite(), "chart {} has no data", chart.title);
    let x_log = !log2 && wants_log(x_lo, x_hi);
    let y_log = wants_log(y_lo, y_hi);
    let x = if log2 {
        x_lo.floor() - 0.25..x_hi.ceil() + 0.25
    } else if x_hi > x_lo {
        x_lo..x_hi
    } else {
        x_lo * 0.5..x_hi * 1.5 + 1.0
    };
    let format = chart.x_format;
    let x_label = move |v: f64| {
        if !log2 {
            format(v)
        } else if (v - v.round()).abs() < 1e-6 {
            format(v.round().exp2())
        } else {
            String::new()
        }
    };
    let x_ticks = if log2 {
        (x_hi.ceil() - x_lo.floor()) as usize + 1
    } else {
        10
    };
    let chart = LineChart {
        title: chart.title.clone(),
        x_label: chart.x_label.clone(),
        y_label: chart.y_label.clone(),
        series,
        x_format: chart.x_format,
        x_log2: log2,
    };
    let axis = XAxis {
        label: &x_label,
        ticks: x_ticks,
    };
    let y = if y_log {
        y_lo * 0.8..y_hi * 1.25
    } else {
        0.0..(y_hi * 1.1).max(1.0)
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        match (x_log, y_log) {
            (false, false) => draw_lines(&root, &chart, &axis, x, y)?,
            (true, false) => draw_lines(&root, &chart, &axis, x.log_scale(), y)?,
            (false, true) => draw_lines(&root, &chart, &axis, x, y.log_scale())?,
            (true, true) => draw_lines(&root, &chart, &axis, x.log_scale(), y.log_scale())?,
        }
        root.present()?;
    }
    Ok(Rendered {
        svg,
        colours: (0..chart.series.len())
            .map(|i| PALETTE[i % PALETTE.len()])
            .collect(),
        mark: "polyline,circle",
    })
}

/// How the x axis is labelled: the text at a tick, and how many ticks.
struct XAxis<'a> {
    label: &'a dyn Fn(f64) -> String,
    ticks: usize,
}

fn draw_lines<X, Y>(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    chart: &LineChart,
    axis: &XAxis,
    x: X,
    y: Y,
) -> anyhow::Result<()>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    root.fill(&WHITE)?;
    let mut c = frame(root, &chart.title).build_cartesian_2d(x, y)?;
    c.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .x_labels(axis.ticks)
        .x_label_formatter(&|v| (axis.label)(*v))
        .y_label_formatter(&|v| short_number(*v))
        .draw()?;
    for (i, s) in chart.series.iter().enumerate() {
        let style = colour(i).stroke_width(2);
        c.draw_series(LineSeries::new(s.points.iter().copied(), style))?
            .label(&s.name)
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour(i).filled())
            });
        c.draw_series(
            s.points
                .iter()
                .map(|&p| Circle::new(p, 3, colour(i).filled())),
        )?;
    }
    if chart.series.len() > 1 {
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    Ok(())
}

/// The caption, margins and label areas every chart shares.
fn frame<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(72);
    builder
}

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
    let n = chart.categories.len() as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        if log {
            draw_bars(
                &root,
                chart,
                -0.5..n - 0.5,
                (lo * 0.5..hi * 1.3).log_scale(),
                lo * 0.5,
            )?;
        } else {
            draw_bars(&root, chart, -0.5..n - 0.5, 0.0..hi * 1.15, 0.0)?;
        }
        root.present()?;
    }
    Ok(Rendered {
        svg,
        colours: (0..chart.groups.len())
            .map(|i| PALETTE[i % PALETTE.len()])
            .collect(),
        mark: "rect",
    })
}

fn draw_bars<Y>(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    chart: &BarChart,
    x: std::ops::Range<f64>,
    y: Y,
    base: f64,
) -> anyhow::Result<()>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    root.fill(&WHITE)?;
    let mut c = frame(root, &chart.title).build_cartesian_2d(x, y)?;
    let categories = chart.categories.clone();
    c.configure_mesh()
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
        .y_label_formatter(&|v| short_number(*v))
        .draw()?;
    let groups = chart.groups.len().max(1) as f64;
    let width = 0.8 / groups;
    for (g, group) in chart.groups.iter().enumerate() {
        let left = -0.4 + g as f64 * width;
        c.draw_series(group.points.iter().filter(|p| p.1 > 0.0).map(|&(cat, v)| {
            Rectangle::new(
                [(cat + left, base), (cat + left + width * 0.9, v)],
                colour(g).filled(),
            )
        }))?
        .label(&group.name)
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour(g).filled()));
    }
    if chart.groups.len() > 1 {
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    Ok(())
}

/// 1500 -> "1.5k", 2300000 -> "2.3M": axis ticks stay short.
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    let (x, unit) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if x.abs() >= 100.0 || x.fract().abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    };
    format!("{text}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(points: Vec<(f64, f64)>) -> LineChart {
        LineChart {
            title: "t".into(),
            x_label: "iodepth".into(),
            y_label: "IOPS".into(),
            series: vec![Series {
                name: "4k".into(),
                points,
            }],
            x_format: |v| format!("{v}"),
            x_log2: false,
        }
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
    fn log_axis_only_beyond_two_decades() {
        assert!(wants_log(1.0, 128.0));
        assert!(!wants_log(10.0, 900.0));
        assert!(!wants_log(0.0, 1e6));
    }

    #[test]
    fn a_log2_axis_ticks_each_power_of_two_with_its_value() {
        let mut c = chart(vec![(4096.0, 10.0), (65536.0, 20.0), (1_048_576.0, 30.0)]);
        c.x_format = |v| crate::units::format_block_size(v as u64);
        c.x_log2 = true;
        let svg = line_chart(&c).unwrap().svg;
        for label in ["4k", "8k", "64k", "256k", "1m"] {
            assert!(svg.contains(&format!(">\n{label}\n<")), "no tick {label}");
        }
        // No tick between the powers, and no raw byte counts.
        assert!(!svg.contains(">\n4096\n<") && !svg.contains(">\n10000\n<"));
    }

    #[test]
    fn empty_chart_is_an_error() {
        assert!(line_chart(&chart(Vec::new())).is_err());
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(short_number(1500.0), "1.5k");
        assert_eq!(short_number(2_000_000.0), "2M");
        assert_eq!(short_number(12.5), "12.5");
    }
}
