//! HTML: one self-contained page (inline CSS and SVG, no network, no fonts to
//! fetch) with the sweep table, charts of the sweep and per-second series.

use super::charts::{self, BarChart, LineChart, Rendered, Series, Span, XAxis};
use super::table::{self, DIRECTIONS, Figures, Pick, Row, SweepTable};
use super::{Exporter, Labelled, Report, Section};
use crate::result::WorkloadResult;
use crate::result::capacity::CapacityResult;
use crate::result::certify::{CertifyResult, THRESHOLDS_MS};
use crate::result::meta::MetaResult;
use crate::result::streams::StreamsResult;
use crate::result::warning::WarningKind;
use crate::util::units::format_block_size;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub struct HtmlExporter;

/// Per-second charts are drawn for this many runs at most.
const MAX_TIME_SERIES: usize = 6;

// A chart's column is never narrower than the chart is drawn (640 px, but
// on a narrower window): its 12-px labels then never shrink (they were
// 7 px in columns of 420).
pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:1500px}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}\
th,td{border:1px solid #ccc;padding:4px 8px}td.n{text-align:right}th{background:#f3f3f3}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(640px,100%),1fr));gap:12px}\
figure.chart{margin:0;border:1px solid #ddd}figure.chart svg{width:100%;height:auto}\
.meta{color:#555;font-size:14px}.warn li{color:#8a4b00}";

/// Runs in the browser after the page loads: marks each chart drawn when
/// every series left visible marks of its colour on the page, and records
/// the count on <body> for tests.
const CHECK_SCRIPT: &str = r#"
(function () {
  var figs = document.querySelectorAll('figure.chart'), drawn = 0;
  var repeats = [], covered = [];
  function inLegend(el) { return el.closest('g.legend') !== null; }
  function overlap(a, b) {
    return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  }
  figs.forEach(function (f, n) {
    var colours = f.dataset.colours.split(','), mark = f.dataset.mark, ok = true;
    var marks = [];
    colours.forEach(function (c) {
      var seen = 0;
      f.querySelectorAll(mark).forEach(function (el) {
        if (inLegend(el)) return;
        var paint = (el.getAttribute('stroke') || '') + (el.getAttribute('fill') || '');
        var b = el.getBBox();
        if (paint.toUpperCase().indexOf(c) >= 0 && (b.width > 0 || b.height > 0)) {
          seen++;
          marks.push(el);
        }
      });
      if (seen < 1) ok = false;
    });
    f.dataset.drawn = ok ? 'yes' : 'no';
    if (ok) drawn++;
    // Tick labels: texts on one line under the plot (x) or right-aligned
    // at one x (y) are an axis; on an axis no label may repeat.
    var axes = {};
    f.querySelectorAll('svg text').forEach(function (t) {
      if (inLegend(t) || t.textContent.trim() === '' || t.getAttribute('transform')) return;
      var key = t.getAttribute('text-anchor') === 'end'
        ? 'y@' + Math.round(parseFloat(t.getAttribute('x')))
        : 'x@' + Math.round(parseFloat(t.getAttribute('y')));
      (axes[key] = axes[key] || []).push(t.textContent.trim());
    });
    Object.keys(axes).forEach(function (k) {
      var labels = axes[k];
      if (labels.length < 2) return;
      labels.forEach(function (l, i) {
        if (labels.indexOf(l) !== i) repeats.push('chart ' + n + ' ' + k + ': ' + l);
      });
    });
    // No legend covers a drawn point, line or bar.
    var legend = f.querySelector('g.legend');
    if (legend) {
      var box = legend.getBoundingClientRect();
      marks.forEach(function (el) {
        if (overlap(box, el.getBoundingClientRect())) covered.push('chart ' + n);
      });
    }
  });
  document.body.dataset.chartsDrawn = drawn + '/' + figs.length;
  document.body.dataset.repeatedTicks = repeats.length ? repeats.join('; ') : 'none';
  document.body.dataset.coveredByLegend = covered.length ? covered.join('; ') : 'none';
})();
"#;

impl Exporter for HtmlExporter {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        let systems = report.compares_systems();
        let mut results = String::new();
        let mut charts: Vec<Rendered> = Vec::new();
        for section in report.sections() {
            match section {
                Section::Workloads(workloads) => {
                    let table = table::build(&workloads, systems);
                    if let [one] = workloads.as_slice() {
                        let (header, rows) = table::detail_cells(one, systems);
                        results.push_str(&cells_table(&header, &rows, table::DETAIL_FIRST_FIGURE));
                    } else {
                        results.push_str(&html_table(&table));
                    }
                    results.push_str(&notes(&workloads));
                    // What was run, which the figures' table leaves out.
                    results.push_str(&settings_block(&workloads));
                    sweep_charts(&table, &mut charts)?;
                    target_bars(&table, &mut charts)?;
                    time_series(&workloads, systems, &mut charts)?;
                    flush_bars(&workloads, systems, &mut charts)?;
                }
                Section::Meta(metas) => {
                    for meta in &metas {
                        let _ = writeln!(
                            results,
                            "<p>{}</p>",
                            escape(&table::meta_caption(meta, systems))
                        );
                    }
                    let (header, rows) = table::meta_cells(&metas);
                    results.push_str(&cells_table(&header, &rows, 1));
                    meta_bars(&metas, &mut charts)?;
                }
                Section::Tree(trees) => {
                    for tree in &trees {
                        for line in table::tree_caption(tree, systems).lines() {
                            let _ = writeln!(results, "<p>{}</p>", escape(line));
                        }
                    }
                    let (header, rows) = table::tree_cells(&trees);
                    results.push_str(&cells_table(&header, &rows, 1));
                    tree_bars(&trees, &mut charts)?;
                }
                Section::Object(runs) => {
                    for run in &runs {
                        for line in super::object::caption(run, systems).lines() {
                            let _ = writeln!(results, "<p>{}</p>", escape(line));
                        }
                    }
                    let (header, rows) = super::object::cells(&runs, systems);
                    results.push_str(&cells_table(&header, &rows, 1));
                    object_charts(&runs, &mut charts)?;
                }
                Section::Train(runs) => {
                    for run in &runs {
                        for line in super::train::caption(run, systems).lines() {
                            let _ = writeln!(results, "<p>{}</p>", escape(line));
                        }
                    }
                    let (header, rows) = super::train::cells(&runs, systems);
                    results.push_str(&cells_table(&header, &rows, 1));
                    train_charts(&runs, &mut charts)?;
                }
                Section::Streams(groups) => {
                    for s in groups {
                        let (header, rows) = table::streams_cells(&s, systems);
                        results.push_str(&cells_table(&header, &rows, 3));
                        stream_charts(&s, systems, &mut charts)?;
                    }
                }
                Section::Capacity(searches) => {
                    for c in searches {
                        capacity_section(&c, systems, &mut results);
                        capacity_charts(&c, systems, &mut charts)?;
                    }
                }
                Section::Pts(tests) => {
                    for t in tests {
                        let prefix = system_prefix(t.system, systems);
                        let _ = writeln!(
                            results,
                            "<p>{}{}</p>",
                            escape(&prefix),
                            escape(&super::pts::caption(&t))
                        );
                        for (caption, header, rows) in super::pts::tables(&t) {
                            let _ = writeln!(results, "<p>{}</p>", escape(&caption));
                            results.push_str(&cells_table(&header, &rows, 1));
                        }
                        charts.extend(super::pts::charts(&t, &prefix)?);
                    }
                }
                Section::Certify(certifications) => {
                    for c in certifications {
                        certify_section(&c, systems, &mut results);
                        certify_chart(&c, systems, &mut charts)?;
                    }
                }
            }
        }
        for (label, c) in super::cluster::clusters(report) {
            let name = if systems {
                format!("{label}: ")
            } else {
                String::new()
            };
            let _ = writeln!(
                results,
                "<p>{}</p>",
                escape(&format!("{name}{}", super::cluster::caption(c)))
            );
            let (header, rows) = super::cluster::cells(c);
            results.push_str(&cells_table(&header, &rows, super::cluster::FIRST_FIGURE));
            rank_bars(&name, c, &mut charts)?;
        }

        let mut html = String::new();
        write!(
            html,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>fathom report</title><style>{STYLE}</style></head><body>\n\
             <h1>fathom report</h1>\n<p class=\"meta\">{}</p>\n",
            escape(super::markdown::footnote(report).trim()).replace('\n', "<br>")
        )?;
        let warnings = report.warnings();
        if !warnings.is_empty() {
            html.push_str("<h2>Warnings</h2>\n<ul class=\"warn\">\n");
            for w in warnings {
                let _ = writeln!(html, "<li>{}</li>", escape(&w));
            }
            html.push_str("</ul>\n");
        }
        html.push_str("<h2>Results</h2>\n");
        html.push_str(&results);
        html.push_str("<h2>Charts</h2>\n<div class=\"charts\">\n");
        for chart in &charts {
            writeln!(
                html,
                "<figure class=\"chart\" data-colours=\"{}\" data-mark=\"{}\">{}</figure>",
                chart.colours.join(","),
                chart.mark,
                chart.svg
            )?;
        }
        html.push_str("</div>\n<script>");
        html.push_str(CHECK_SCRIPT);
        html.push_str("</script>\n</body></html>\n");
        Ok(html)
    }
}

/// The notes under a workload table: each run's for one run; for
/// several, what they share, and each run's behind a fold.
fn notes(workloads: &[Labelled<WorkloadResult>]) -> String {
    let each = table::notes(workloads);
    let list = |lines: &[String]| {
        let mut out = String::from("<ul>\n");
        for line in lines {
            let _ = writeln!(out, "<li>{}</li>", escape(line));
        }
        out + "</ul>\n"
    };
    if workloads.len() == 1 {
        return if each.is_empty() {
            String::new()
        } else {
            list(&each)
        };
    }
    let shared: Vec<String> = [table::runs_line(workloads), table::limits_line(workloads)]
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let mut out = list(&shared);
    if !each.is_empty() {
        let _ = write!(
            out,
            "<details><summary>each run's notes ({})</summary>\n{}</details>\n",
            each.len(),
            list(&each)
        );
    }
    out
}

/// Under this many seconds, a run of a sweep has no per-second charts:
/// a handful of points says little, and a sweep's would bury its curves.
const SHORTEST_TIME_SERIES_S: f64 = 5.0;

/// One figure of a direction per second, plotted at each second's end;
/// `skip_idle` leaves out seconds in which nothing completed (a latency
/// has no value then, while an IOPS of 0 is one).
fn per_second(
    name: String,
    d: &crate::result::DirectionResult,
    skip_idle: bool,
    value: fn(&crate::result::Interval) -> f64,
) -> Series {
    Series {
        name,
        points: d
            .intervals
            .iter()
            .filter(|i| !skip_idle || i.ios > 0)
            .map(|i| (i.t_s + i.dur_s, value(i)))
            .collect(),
    }
}

/// A vertical line at each drift finding of `kind`, as tall as `series`,
/// named with the change.
fn drift_marks(w: &WorkloadResult, kind: WarningKind, series: &[Series]) -> Vec<Series> {
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    w.warnings
        .iter()
        .filter(|x| x.kind == kind)
        .filter_map(|x| {
            let at = x.at_s?;
            Some(Series {
                name: match x.figure {
                    Some(pct) => format!("changed {pct:+.0}% at {at:.0} s"),
                    None => format!("resumed from nothing at {at:.0} s"),
                },
                points: vec![(at, 0.0), (at, top)],
            })
        })
        .collect()
}

/// A chart of per-second values over the run.
fn over_time(title: String, y_label: &str, series: Vec<Series>) -> anyhow::Result<Rendered> {
    charts::line_chart(&LineChart {
        x_axis: XAxis::Whole,
        ..LineChart::new(title, "time (s)", y_label, series)
    })
}

/// Per-second IOPS of every stream on one chart, and each stream's p99.
fn stream_charts(
    s: &Labelled<StreamsResult>,
    systems: bool,
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    let name = if systems {
        format!("{}: {}", s.system, s.spec.name)
    } else {
        s.spec.name.clone()
    };
    // A stream's IOPS each second: all its directions together.
    let iops_per_second = |w: &WorkloadResult| -> Vec<(f64, f64)> {
        w.total
            .seconds()
            .into_iter()
            .map(|(t_s, dur_s, iops, _)| (t_s + dur_s, iops))
            .collect()
    };
    // Latency per stream: of the direction it mostly does, and of its
    // flushes when it makes them.
    let main = |w: &WorkloadResult| w.total.main().lat_ns;
    let mut categories: Vec<String> = s.streams.iter().map(|w| w.spec.name.clone()).collect();
    let mut summaries: Vec<crate::result::LatencySummary> = s.streams.iter().map(main).collect();
    for w in &s.streams {
        if let Some(sync) = w.sync.as_ref().filter(|x| x.count > 0) {
            categories.push(format!("{} flush", w.spec.name));
            summaries.push(sync.lat_ns);
        }
    }
    out.push(latency_bars(
        format!("{name}: latency per stream"),
        categories,
        &summaries,
    )?);
    let iops: Vec<Series> = s
        .streams
        .iter()
        .map(|w| Series {
            name: w.spec.name.clone(),
            points: iops_per_second(w),
        })
        .filter(|x| x.points.len() >= 2)
        .collect();
    if !iops.is_empty() {
        out.push(over_time(
            format!("{name}: IOPS per second, per stream"),
            "IOPS",
            iops,
        )?);
    }
    Ok(())
}

/// The flushes' latency: of one run beside its I/Os', so a database's
/// commit cost shows; of a sweep's runs side by side. A flush has no
/// seconds of its own, so this is drawn however short the run.
fn flush_bars(
    workloads: &[Labelled<WorkloadResult>],
    systems: bool,
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    let flushed: Vec<(&Labelled<WorkloadResult>, &crate::result::SyncResult)> = workloads
        .iter()
        .filter_map(|w| Some((w, w.sync.as_ref().filter(|x| x.count > 0)?)))
        .collect();
    let who = |w: &Labelled<WorkloadResult>, what: &str| match systems {
        true => format!("{}: {what}", w.system),
        false => what.to_string(),
    };
    let (title, categories, summaries) = match flushed.as_slice() {
        [] => return Ok(()),
        [(w, sync)] => {
            let mut categories = Vec::new();
            let mut summaries = Vec::new();
            for (n, d) in w.total.named().into_iter().filter(|(_, d)| d.ios > 0) {
                categories.push(who(w, n));
                summaries.push(d.lat_ns);
            }
            categories.push(who(w, "flush"));
            summaries.push(sync.lat_ns);
            (
                format!("{}: latency of I/Os and flushes", w.spec.name),
                categories,
                summaries,
            )
        }
        many => (
            "flush latency by run".to_string(),
            many.iter().map(|(w, _)| who(w, &w.spec.name)).collect(),
            many.iter().map(|(_, sync)| sync.lat_ns).collect(),
        ),
    };
    out.push(latency_bars(title, categories, &summaries)?);
    Ok(())
}

/// p50, p99 and p99.9 of each of `summaries` (named by `categories`) as
/// groups of bars, on one latency axis.
fn latency_bars(
    title: String,
    categories: Vec<String>,
    summaries: &[crate::result::LatencySummary],
) -> anyhow::Result<Rendered> {
    type Pick = fn(&crate::result::LatencySummary) -> u64;
    let percentiles: [(&str, Pick); 3] = [
        ("p50", |l| l.p50),
        ("p99", |l| l.p99),
        ("p99.9", |l| l.p99_9),
    ];
    let (div, unit) =
        charts::latency_unit(summaries.iter().map(|l| l.p99_9 as f64).fold(0.0, f64::max));
    charts::bar_chart(&BarChart {
        title,
        y_label: format!("latency ({unit})"),
        categories,
        groups: percentiles
            .iter()
            .map(|(label, pick)| Series {
                name: label.to_string(),
                points: summaries
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (i as f64, pick(l) as f64 / div))
                    .collect(),
            })
            .collect(),
    })
}

/// Each rank's IOPS and p99 of every workload, side by side: a slow host
/// stands out.
fn rank_bars(
    name: &str,
    c: &crate::result::cluster::Cluster,
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    let categories: Vec<String> = c.per_rank.iter().map(|r| r.label()).collect();
    type Pick = fn(&crate::result::DirectionResult) -> f64;
    // (title, axis, figure, whether it is a latency in ns)
    let figures: [(&str, &str, Pick, bool); 2] = [
        ("IOPS", "IOPS", |d| d.iops, false),
        ("p99", "p99 latency", |d| d.lat_ns.p99 as f64, true),
    ];
    for (what, y_label, pick, latency) in figures {
        let mut groups: Vec<Series> = Vec::new();
        for (r, rank) in c.per_rank.iter().enumerate() {
            for (workload, dir, d) in super::cluster::directions(&rank.results) {
                let series = format!("{workload} {dir}");
                let i = match groups.iter().position(|g| g.name == series) {
                    Some(i) => i,
                    None => {
                        groups.push(Series {
                            name: series,
                            points: Vec::new(),
                        });
                        groups.len() - 1
                    }
                };
                groups[i].points.push((r as f64, pick(d)));
            }
        }
        if groups.is_empty() {
            continue;
        }
        let mut y_label = y_label.to_string();
        if latency {
            let top = groups
                .iter()
                .flat_map(|g| g.points.iter().map(|p| p.1))
                .fold(0.0, f64::max);
            let (div, unit) = charts::latency_unit(top);
            groups
                .iter_mut()
                .flat_map(|g| g.points.iter_mut())
                .for_each(|p| p.1 /= div);
            y_label = format!("{y_label} ({unit})");
        }
        out.push(charts::bar_chart(&BarChart {
            title: format!("{name}{what} per rank"),
            y_label,
            categories: categories.clone(),
            groups,
        })?);
    }
    Ok(())
}

/// "laptop: " before a result's caption when several systems are shown.
fn system_prefix(system: &str, systems: bool) -> String {
    if systems {
        format!("{system}: ")
    } else {
        String::new()
    }
}

/// A capacity search's caption, step table, answer and knee.
fn capacity_section(c: &Labelled<CapacityResult>, systems: bool, out: &mut String) {
    let name = system_prefix(c.system, systems);
    let _ = writeln!(
        out,
        "<p>{}{}</p>",
        escape(&name),
        escape(&super::capacity::caption(c))
    );
    let (header, rows) = super::capacity::cells(c);
    out.push_str(&cells_table(&header, &rows, super::capacity::FIRST_FIGURE));
    out.push_str("<ul>\n");
    for line in super::capacity::conclusion(c) {
        let _ = writeln!(out, "<li>{}</li>", escape(&line));
    }
    out.push_str("</ul>\n");
}

/// The hockey stick (latency from the due time against offered load, with
/// the objective's limits) and achieved against offered load.
fn capacity_charts(
    c: &Labelled<CapacityResult>,
    systems: bool,
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    let steps = c.by_rate();
    if steps.is_empty() {
        return Ok(());
    }
    let prefix = system_prefix(c.system, systems);
    let (lo, hi) = (steps[0].offered_iops, steps[steps.len() - 1].offered_iops);
    let slowest = steps
        .iter()
        .flat_map(|s| s.slo_ns.iter().copied().chain([s.lat_ns.p50]))
        .chain(c.search.slo.0.iter().map(|t| t.limit_ns))
        .max()
        .unwrap_or(0);
    let (div, unit) = charts::latency_unit(slowest as f64);
    let scaled = |ns: u64| ns as f64 / div;
    let mut series = vec![Series {
        name: "p50".into(),
        points: steps
            .iter()
            .map(|s| (s.offered_iops, scaled(s.lat_ns.p50)))
            .collect(),
    }];
    for (k, term) in c.search.slo.0.iter().enumerate() {
        let name = crate::spec::capacity::percentile_name(term.percentile);
        series.push(Series {
            name: name.clone(),
            points: steps
                .iter()
                .filter_map(|s| Some((s.offered_iops, scaled(*s.slo_ns.get(k)?))))
                .collect(),
        });
        series.push(Series {
            name: format!(
                "limit {name} {}",
                crate::util::units::latency(term.limit_ns as f64)
            ),
            points: vec![
                (lo, scaled(term.limit_ns)),
                (hi.max(lo * 1.01), scaled(term.limit_ns)),
            ],
        });
    }
    // The answer and the knee as vertical lines across the latencies.
    let (bottom, top) = charts::bounds(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|v| *v > 0.0),
    );
    if bottom.is_finite() {
        let marks = [("answer", c.answer_iops), ("knee", c.knee_iops)];
        for (what, at) in marks {
            if let Some(at) = at {
                series.push(Series {
                    name: format!(
                        "{what}: {} IOPS",
                        crate::util::units::thousands(at.round() as u64)
                    ),
                    points: vec![(at, bottom), (at, top)],
                });
            }
        }
    }
    out.push(charts::line_chart(&LineChart::new(
        format!(
            "{prefix}{}: latency from the due time against load",
            c.spec.title()
        ),
        "offered I/Os per second",
        &format!("latency ({unit})"),
        series,
    ))?);
    out.push(charts::line_chart(&LineChart::new(
        format!("{prefix}{}: achieved against offered load", c.spec.title()),
        "offered I/Os per second",
        "I/Os per second",
        vec![
            Series {
                name: "achieved".into(),
                points: steps
                    .iter()
                    .map(|s| (s.offered_iops, s.achieved_iops))
                    .collect(),
            },
            Series {
                name: "offered".into(),
                points: vec![(lo, lo), (hi.max(lo * 1.01), hi.max(lo * 1.01))],
            },
        ],
    ))?);
    Ok(())
}

/// A certification's caption, interval table, verdict and failed limits.
fn certify_section(c: &Labelled<CertifyResult>, systems: bool, out: &mut String) {
    let name = system_prefix(c.system, systems);
    let _ = writeln!(
        out,
        "<p>{}{}</p>",
        escape(&name),
        escape(&super::certify::caption(&c.profile, &c.target))
    );
    let (header, rows) = super::certify::cells(c);
    out.push_str(&cells_table(&header, &rows, super::certify::FIRST_FIGURE));
    let _ = writeln!(
        out,
        "<p><strong>verdict: {}</strong></p>",
        super::certify::verdict(c)
    );
    // Why it failed, then, apart, how the run differed from the profile
    // (a shortened stabilisation is not a failure).
    for (heading, lines) in [("failed", &c.reasons), ("notes", &c.notes)] {
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<p>{heading}:</p>\n<ul>");
        for r in lines {
            let _ = writeln!(out, "<li>{}</li>", escape(r));
        }
        out.push_str("</ul>\n");
    }
}

/// Per stream, the share of I/Os over each limited threshold, interval by
/// interval, with the profile's limits drawn as flat lines.
fn certify_chart(
    c: &Labelled<CertifyResult>,
    systems: bool,
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    // The stabilisation period, not judged, shaded.
    let unjudged = charts::bounds(
        c.intervals
            .iter()
            .filter(|i| !i.judged)
            .map(|i| i.index as f64),
    );
    let shaded: Vec<Span> = unjudged
        .0
        .is_finite()
        .then(|| Span {
            from: unjudged.0 - 0.5,
            to: unjudged.1 + 0.5,
            name: "stabilisation (not judged)".into(),
        })
        .into_iter()
        .collect();
    for (stream, direction) in c.streams() {
        let mut series = Vec::new();
        for limit in c.profile.stream_limits(&stream, direction) {
            let Some(k) = THRESHOLDS_MS.iter().position(|t| *t == limit.over_ms) else {
                continue;
            };
            let shares: Vec<(f64, f64)> = c
                .intervals
                .iter()
                .filter_map(|i| {
                    let s = i
                        .streams
                        .iter()
                        .find(|s| s.name == stream && s.target.is_none())?;
                    Some((i.index as f64, s.over_pct[k]))
                })
                .collect();
            if shares.is_empty() {
                continue;
            }
            let (first, last) = (shares[0].0, shares[shares.len() - 1].0);
            series.push(Series {
                name: format!("> {} ms", limit.over_ms),
                points: shares,
            });
            series.push(Series {
                name: format!("limit {}% > {} ms", limit.max_pct, limit.over_ms),
                points: vec![
                    (first, limit.max_pct),
                    (last.max(first + 1.0), limit.max_pct),
                ],
            });
        }
        if series.is_empty() {
            continue;
        }
        out.push(charts::line_chart(&LineChart {
            x_axis: XAxis::Whole,
            shaded: shaded.clone(),
            ..LineChart::new(
                format!(
                    "{}{}: % of I/Os slower than the limits",
                    if systems {
                        format!("{}: ", c.system)
                    } else {
                        String::new()
                    },
                    if stream == direction.name() {
                        stream.clone()
                    } else {
                        format!("{stream} ({direction})")
                    }
                ),
                "interval",
                "% of I/Os",
                series,
            )
        })?);
    }
    Ok(())
}

fn html_table(table: &SweepTable) -> String {
    let (header, rows) = table::cells(table);
    cells_table(&header, &rows, table.knobs.len() + 1)
}

/// A table whose columns from `first_figure` on are right-aligned numbers.
/// What was run: for one run its settings; for several, those they
/// share in one row and each run's whole row folded away, so that a
/// sweep's settings do not push its charts off the page.
fn settings_block(workloads: &[Labelled<WorkloadResult>]) -> String {
    let (header, rows) = table::settings_cells(workloads);
    let mut out = String::from("<p class=\"meta\">Settings</p>\n");
    if rows.len() <= 3 {
        out.push_str(&cells_table(&header, &rows, header.len()));
        return out;
    }
    let shared: Vec<usize> = (1..header.len())
        .filter(|&c| rows.iter().all(|r| r.get(c) == rows[0].get(c)))
        .collect();
    if !shared.is_empty() {
        let names: Vec<String> = shared.iter().map(|&c| header[c].clone()).collect();
        let values: Vec<String> = shared.iter().map(|&c| rows[0][c].clone()).collect();
        out.push_str(&cells_table(&names, &[values], names.len()));
    }
    let _ = write!(
        out,
        "<details><summary>each run's settings ({})</summary>\n{}</details>\n",
        rows.len(),
        cells_table(&header, &rows, header.len())
    );
    out
}

fn cells_table(header: &[String], rows: &[Vec<String>], first_figure: usize) -> String {
    let mut out = String::from("<table><thead><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if i >= first_figure {
                " class=\"n\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    out
}

/// The keys of a row other than one knob: what names a series.
fn series_name(table: &SweepTable, row: &Row, without: &[&str]) -> String {
    let parts: Vec<String> = table
        .knobs
        .iter()
        .zip(&row.keys)
        .filter(|(k, _)| !without.contains(k))
        .map(|(k, v)| {
            if *k == "bs" {
                v.clone()
            } else {
                format!("{k} {v}")
            }
        })
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join(", ")
    }
}

fn grouped<'a>(
    table: &'a SweepTable,
    target: &str,
    pick: Pick,
    without: &[&str],
) -> Vec<(String, Vec<(&'a Row, Figures)>)> {
    let mut groups: BTreeMap<String, Vec<(&Row, Figures)>> = BTreeMap::new();
    // "" is every row, the series named by their system too (several
    // systems overlaid on one chart).
    for row in table
        .rows
        .iter()
        .filter(|r| target.is_empty() || r.target == target)
    {
        if let Some(f) = pick(row) {
            let name = match (target.is_empty(), series_name(table, row, without)) {
                (true, name) if name == "all" => row.target.clone(),
                (true, name) => format!("{}, {name}", row.target),
                (false, name) => name,
            };
            groups.entry(name).or_default().push((row, f));
        }
    }
    // Series in numeric order (4k before 64k), not alphabetical.
    let mut groups: Vec<_> = groups.into_iter().collect();
    groups.sort_by_key(|(_, rows)| {
        rows.iter()
            .map(|(r, _)| (r.bs, r.numjobs, r.iodepth))
            .min()
            .unwrap_or_default()
    });
    groups
}

/// The charts' targets: each its own, or with several systems one set of
/// charts ("") on which the systems are overlaid.
fn targets(table: &SweepTable) -> Vec<String> {
    match table.systems {
        true => vec![String::new()],
        false => super::sections::distinct(table.rows.iter().map(|r| r.target.clone())),
    }
}

/// A chart's title, after its target where it has one.
fn titled(target: &str, what: &str) -> String {
    match target {
        "" => what.to_string(),
        t => format!("{t}: {what}"),
    }
}

fn sweep_charts(table: &SweepTable, out: &mut Vec<Rendered>) -> anyhow::Result<()> {
    let depths = table.knobs.contains(&"iodepth");
    let sizes = table.knobs.contains(&"bs");
    let by_depth = XAxis::PowersOfTwo(|v| format!("{}", v.round()));
    let by_size = XAxis::PowersOfTwo(|v| format_block_size(v.round() as u64));
    // Charts of one kind are read side by side (read beside write, one
    // target beside another): they share their scale and latency unit.
    let all = || {
        table
            .rows
            .iter()
            .flat_map(|r| DIRECTIONS.into_iter().filter_map(|(_, pick)| pick(r)))
    };
    let shared_log = |values: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = charts::bounds(values.filter(|v| *v > 0.0));
        charts::wants_log(lo, hi)
    };
    let iops_log = shared_log(&mut all().map(|f| f.iops));
    let bw_log = shared_log(&mut all().map(|f| f.bw_bytes));
    let latency_log = shared_log(&mut all().flat_map(|f| [f.p50_ns as f64, f.p99_9_ns as f64]));
    let (div, unit) = charts::latency_unit(all().map(|f| f.p99_9_ns as f64).fold(0.0, f64::max));
    let latency_label = format!("latency ({unit})");
    for target in targets(table) {
        // Each direction's charts in the same order; then paired, so that
        // the read and the write chart of one kind sit side by side.
        let mut by_direction: [Vec<Rendered>; DIRECTIONS.len()] = Default::default();
        for ((dir, pick), out) in DIRECTIONS.into_iter().zip(&mut by_direction) {
            if depths {
                let groups = grouped(table, &target, pick, &["iodepth", "rw"]);
                if !groups.is_empty() {
                    let series = groups
                        .iter()
                        .map(|(name, rows)| Series {
                            name: name.clone(),
                            points: sorted(rows.iter().map(|(r, f)| (r.iodepth as f64, f.iops))),
                        })
                        .collect();
                    out.push(charts::line_chart(&LineChart {
                        x_axis: by_depth,
                        y_log: Some(iops_log),
                        ..LineChart::new(
                            titled(&target, &format!("{dir} IOPS vs depth")),
                            "iodepth (I/Os in flight)",
                            "IOPS",
                            series,
                        )
                    })?);
                    for (name, rows) in &groups {
                        let pct = |label: &str, v: fn(&Figures) -> u64| Series {
                            name: label.into(),
                            points: sorted(
                                rows.iter()
                                    .map(|(r, f)| (r.iodepth as f64, v(f) as f64 / div)),
                            ),
                        };
                        out.push(charts::line_chart(&LineChart {
                            x_axis: by_depth,
                            y_log: Some(latency_log),
                            ..LineChart::new(
                                titled(&target, &format!("{dir} latency vs depth ({name})")),
                                "iodepth (I/Os in flight)",
                                &latency_label,
                                vec![
                                    pct("p50", |f| f.p50_ns),
                                    pct("p99", |f| f.p99_ns),
                                    pct("p99.9", |f| f.p99_9_ns),
                                ],
                            )
                        })?);
                    }
                }
            }
            if sizes {
                let groups = grouped(table, &target, pick, &["bs", "rw"]);
                if !groups.is_empty() {
                    let series = groups
                        .iter()
                        .map(|(name, rows)| Series {
                            name: name.clone(),
                            points: sorted(
                                rows.iter()
                                    .map(|(r, f)| (r.bs as f64, f.bw_bytes / (1 << 20) as f64)),
                            ),
                        })
                        .collect();
                    out.push(charts::line_chart(&LineChart {
                        x_axis: by_size,
                        y_log: Some(bw_log),
                        ..LineChart::new(
                            titled(&target, &format!("{dir} bandwidth vs block size")),
                            "block size",
                            "bandwidth (MiB/s)",
                            series,
                        )
                    })?);
                }
            }
        }
        let mut each = by_direction.map(Vec::into_iter);
        loop {
            let next: Vec<Rendered> = each.iter_mut().filter_map(Iterator::next).collect();
            if next.is_empty() {
                break;
            }
            out.extend(next);
        }
    }
    Ok(())
}

/// Points in the order of x.
fn sorted(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = points.collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// Several targets (or result files with different targets) side by side.
fn target_bars(table: &SweepTable, out: &mut Vec<Rendered>) -> anyhow::Result<()> {
    let names = super::sections::distinct(table.rows.iter().map(|r| r.target.clone()));
    let by = if table.systems { "system" } else { "target" };
    if names.len() < 2 {
        return Ok(());
    }
    for (dir, pick) in DIRECTIONS {
        let mut categories: Vec<String> = Vec::new();
        for row in &table.rows {
            let c = series_name(table, row, &[]);
            if pick(row).is_some() && !categories.contains(&c) {
                categories.push(c);
            }
        }
        if categories.is_empty() {
            continue;
        }
        let groups = names
            .iter()
            .map(|t| Series {
                name: t.clone(),
                points: table
                    .rows
                    .iter()
                    .filter(|r| &r.target == t)
                    .filter_map(|r| {
                        let c = series_name(table, r, &[]);
                        let i = categories.iter().position(|x| *x == c)?;
                        Some((i as f64, pick(r)?.iops))
                    })
                    .collect(),
            })
            .collect();
        out.push(charts::bar_chart(&BarChart {
            title: format!("{dir} IOPS by {by}"),
            y_label: "IOPS".into(),
            categories,
            groups,
        })?);
    }
    Ok(())
}

fn time_series(
    workloads: &[Labelled<WorkloadResult>],
    systems: bool,
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    let runs = workloads.iter().filter(|w| {
        w.total
            .named()
            .iter()
            .any(|(_, d)| d.intervals.iter().filter(|i| i.ios > 0).count() >= 2)
    });
    // The same workload on several systems: one chart, the systems
    // overlaid on one set of axes (grouped before the charts are counted,
    // so that no system's run of a chart is left out).
    let mut groups: Vec<(String, Vec<&Labelled<WorkloadResult>>)> = Vec::new();
    for w in runs {
        let title = w.spec.title();
        match groups.iter_mut().find(|(t, _)| systems && *t == title) {
            Some((_, members)) => members.push(w),
            None => groups.push((title, vec![w])),
        }
    }
    if groups.len() > 2 {
        groups.retain(|(_, members)| {
            members
                .iter()
                .any(|w| w.runtime_s >= SHORTEST_TIME_SERIES_S)
        });
    }
    groups.truncate(MAX_TIME_SERIES);
    for (name, members) in groups {
        let who = |w: &Labelled<WorkloadResult>, what: &str| {
            if systems {
                format!("{}: {what}", w.system)
            } else {
                what.to_string()
            }
        };
        let mut iops: Vec<Series> = Vec::new();
        let mut p99_ns: Vec<Series> = Vec::new();
        let mut heat: Vec<Series> = Vec::new();
        for w in &members {
            let dirs = w.total.named();
            let present: Vec<_> = dirs.iter().filter(|(_, d)| d.ios > 0).collect();
            let ours: Vec<Series> = present
                .iter()
                .map(|(n, d)| per_second(who(w, n), d, false, |i| i.iops))
                .collect();
            let marks = drift_marks(w, WarningKind::IopsDrift, &ours);
            iops.extend(ours);
            iops.extend(marks);
            let ours: Vec<Series> = present
                .iter()
                .map(|(n, d)| per_second(who(w, &format!("{n} p99")), d, true, |i| i.p99_ns as f64))
                .collect();
            let marks = drift_marks(w, WarningKind::LatencyDrift, &ours);
            // Beside the device's latency, how late fathom issued: a host
            // or a tool that held I/Os back shows here, not in the device.
            let lag: Vec<Series> = dirs
                .iter()
                .filter(|(_, d)| d.intervals.iter().any(|i| i.lag_p99_ns > 0))
                .map(|(n, d)| {
                    let name = who(w, &format!("{n} issue lag p99"));
                    per_second(name, d, true, |i| i.lag_p99_ns as f64)
                })
                .collect();
            p99_ns.extend(ours);
            p99_ns.extend(lag);
            p99_ns.extend(marks);
            // A replay's latency as its trace recorded it, on the same clock.
            if let Some(r) = w.replay.as_ref().filter(|r| r.original_seconds.len() >= 2) {
                p99_ns.push(Series {
                    name: who(w, "p99 as recorded"),
                    points: r
                        .original_seconds
                        .iter()
                        .map(|s| (s.t_s + 1.0, s.p99_ns as f64))
                        .collect(),
                });
            }
            let mut disks: Vec<&str> = w.temperature.iter().map(|t| t.disk.as_str()).collect();
            disks.sort_unstable();
            disks.dedup();
            heat.extend(
                disks
                    .into_iter()
                    .map(|disk| Series {
                        name: who(w, disk),
                        points: w
                            .temperature
                            .iter()
                            .filter(|t| t.disk == disk)
                            .map(|t| (t.t_s, t.celsius))
                            .collect(),
                    })
                    .filter(|s| s.points.len() >= 2),
            );
        }
        out.push(over_time(format!("{name}: IOPS per second"), "IOPS", iops)?);
        if !heat.is_empty() {
            out.push(over_time(
                format!("{name}: device temperature"),
                "°C",
                heat,
            )?);
        }
        let (div, unit) = charts::latency_unit(
            p99_ns
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .fold(0.0, f64::max),
        );
        for s in &mut p99_ns {
            s.points.iter_mut().for_each(|p| p.1 /= div);
        }
        out.push(over_time(
            format!("{name}: p99 latency and issue lag per second"),
            &format!("p99 latency ({unit})"),
            p99_ns,
        )?);
    }
    Ok(())
}

/// The bonnie++ block tests (KiB/s) and the metadata operations
/// (operations/s) of every system, each on its own chart: one unit per
/// axis.
/// Two charts of a tree run's phases: operations a second, and p99 and
/// p99.99 latency, each system a group of bars.
/// Each object-store run's requests a second by operation over the run
/// (the mix holding, or not), and every run's p99 by operation.
fn object_charts(
    runs: &[Labelled<crate::result::object::ObjectResult>],
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    for run in runs {
        let series = run
            .ops
            .iter()
            .map(|op| Series {
                name: op.op.to_string(),
                points: run
                    .intervals
                    .iter()
                    .map(|i| (i.t_s, i.ops.get(&op.op).copied().unwrap_or(0) as f64))
                    .collect(),
            })
            .collect();
        let mut chart = LineChart::new(
            format!("{}: requests per second by operation", run.spec.target),
            "seconds",
            "requests/s",
            series,
        );
        chart.x_axis = XAxis::Whole;
        out.push(charts::line_chart(&chart)?);
    }
    let ops: Vec<crate::spec::object::ObjectOp> = crate::report::sections::distinct(
        runs.iter()
            .flat_map(|r| r.ops.iter().map(|o| o.op.to_string())),
    )
    .iter()
    .filter_map(|name| name.parse().ok())
    .collect();
    let groups = runs
        .iter()
        .map(|r| Series {
            name: if runs.len() > 1 {
                r.system.to_string()
            } else {
                "p99".into()
            },
            points: ops
                .iter()
                .enumerate()
                .filter_map(|(i, op)| Some((i as f64, r.op(*op)?.lat_ns.p99 as f64 / 1e3)))
                .collect(),
        })
        .collect();
    out.push(charts::bar_chart(&BarChart {
        title: "objects: p99 latency by operation".into(),
        y_label: "µs".into(),
        categories: ops.iter().map(|o| o.to_string()).collect(),
        groups,
    })?);
    Ok(())
}

/// Each training run's AU second by second, and its batches by how long
/// they waited for data.
fn train_charts(
    runs: &[Labelled<crate::result::train::TrainResult>],
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    use crate::result::train::TrainResult;
    for run in runs {
        let TrainResult::Training(t) = run.result else {
            continue;
        };
        let threshold = t.au_threshold * 100.0;
        let seconds = t.au_intervals.len();
        let mut chart = LineChart::new(
            format!(
                "{}: accelerator utilization each second",
                run.result.named()
            ),
            "seconds",
            "AU %",
            vec![
                Series {
                    name: "AU".into(),
                    points: t
                        .au_intervals
                        .iter()
                        .enumerate()
                        .map(|(s, au)| ((s + 1) as f64, au * 100.0))
                        .collect(),
                },
                Series {
                    name: "threshold".into(),
                    points: vec![(1.0, threshold), (seconds.max(1) as f64, threshold)],
                },
            ],
        );
        chart.x_axis = XAxis::Whole;
        chart.y_log = Some(false);
        out.push(charts::line_chart(&chart)?);
        let buckets = super::train::wait_buckets(t);
        out.push(charts::bar_chart(&BarChart {
            title: format!("{}: batches by their wait for data", run.result.named()),
            y_label: "batches".into(),
            categories: buckets.iter().map(|(name, _)| name.clone()).collect(),
            groups: vec![Series {
                name: "batches".into(),
                points: buckets
                    .iter()
                    .enumerate()
                    .map(|(i, (_, n))| (i as f64, *n as f64))
                    .collect(),
            }],
        })?);
    }
    Ok(())
}

fn tree_bars(
    trees: &[Labelled<crate::result::tree::TreeResult>],
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    let phases = table::tree_phases(trees);
    type Figure = fn(&crate::result::tree::TreePhaseResult) -> f64;
    let figures: [(&str, &str, Figure); 2] = [
        (
            "tree: operations per second by phase",
            "operations/s",
            |p| p.ops_per_s,
        ),
        ("tree: p99 latency by phase", "µs", |p| {
            p.lat_ns.p99 as f64 / 1e3
        }),
    ];
    for (title, unit, figure) in figures {
        let groups = trees
            .iter()
            .map(|t| Series {
                name: if trees.len() > 1 {
                    t.system.to_string()
                } else {
                    t.filesystem.clone().unwrap_or_else(|| unit.into())
                },
                points: phases
                    .iter()
                    .enumerate()
                    .filter_map(|(i, phase)| Some((i as f64, figure(t.phase(*phase)?))))
                    .collect(),
            })
            .collect();
        out.push(charts::bar_chart(&BarChart {
            title: title.into(),
            y_label: unit.into(),
            categories: phases.iter().map(|p| p.to_string()).collect(),
            groups,
        })?);
    }
    Ok(())
}

fn meta_bars(metas: &[Labelled<MetaResult>], out: &mut Vec<Rendered>) -> anyhow::Result<()> {
    let operations = table::meta_operations(metas);
    let block = |name: &String| {
        metas
            .iter()
            .flat_map(|m| &m.ops)
            .any(|o| &o.name == name && o.bw_bytes.is_some())
    };
    let (blocks, files): (Vec<String>, Vec<String>) = operations.into_iter().partition(block);
    for (categories, title, unit) in [
        (blocks, "block tests: throughput", "KiB/s"),
        (files, "metadata operations per second", "operations/s"),
    ] {
        if categories.is_empty() {
            continue;
        }
        let groups = metas
            .iter()
            .map(|m| Series {
                name: if metas.len() > 1 {
                    m.system.to_string()
                } else {
                    m.filesystem.clone().unwrap_or_else(|| unit.into())
                },
                points: categories
                    .iter()
                    .enumerate()
                    .filter_map(|(i, name)| {
                        let op = m.ops.iter().find(|o| &o.name == name)?;
                        Some((i as f64, op.rate().0))
                    })
                    .collect(),
            })
            .collect();
        out.push(charts::bar_chart(&BarChart {
            title: title.into(),
            y_label: unit.into(),
            categories: categories.iter().map(|c| c.replace('_', " ")).collect(),
            groups,
        })?);
    }
    Ok(())
}

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::warning::Warning;

    /// A chart is never shown narrower than it is drawn, so that its text
    /// keeps the size it was drawn at.
    #[test]
    fn a_charts_column_is_as_wide_as_the_chart() {
        let width = crate::report::charts::SIZE.0;
        assert!(
            STYLE.contains(&format!("minmax(min({width}px,100%),1fr)")),
            "{STYLE}"
        );
    }

    #[test]
    fn a_drift_is_a_line_across_its_chart_at_its_second() {
        let mut w = crate::result::test_support::empty_workload();
        let drift = |kind, at: f64, figure: f64| Warning {
            kind,
            target: "x".into(),
            figure: Some(figure),
            message: String::new(),
            at_s: Some(at),
        };
        w.warnings.push(drift(WarningKind::IopsDrift, 4.0, -49.6));
        w.warnings
            .push(drift(WarningKind::LatencyDrift, 6.0, 120.0));
        let series = [Series {
            name: "read".into(),
            points: vec![(1.0, 900.0), (2.0, 1000.0)],
        }];
        let marks = drift_marks(&w, WarningKind::IopsDrift, &series);
        assert_eq!(marks.len(), 1);
        assert_eq!(marks[0].name, "changed -50% at 4 s");
        assert_eq!(marks[0].points, [(4.0, 0.0), (4.0, 1000.0)]);
    }
}
