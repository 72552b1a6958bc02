//! HTML: one self-contained page (inline CSS and SVG, no network, no fonts to
//! fetch) with the sweep table, charts of the sweep and per-second series.

use super::charts::{self, BarChart, LineChart, Rendered, Series};
use super::table::{self, DIRECTIONS, Figures, Pick, Row, SweepTable};
use super::{Exporter, Labelled, Report, Section};
use crate::result::WorkloadResult;
use crate::result::capacity::CapacityResult;
use crate::result::certify::{CertifyResult, THRESHOLDS_MS};
use crate::result::meta::MetaResult;
use crate::result::streams::StreamsResult;
use crate::result::warning::WarningKind;
use crate::units::format_block_size;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub struct HtmlExporter;

/// Per-second charts are drawn for this many runs at most.
const MAX_TIME_SERIES: usize = 6;

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:1500px}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}\
th,td{border:1px solid #ccc;padding:4px 8px}td.n{text-align:right}th{background:#f3f3f3}\
.charts{display:flex;flex-wrap:wrap;gap:12px}figure.chart{margin:0;border:1px solid #ddd}\
.meta{color:#555;font-size:14px}.warn li{color:#8a4b00}";

/// Runs in the browser after the page loads: marks each chart drawn when
/// every series left visible marks of its colour on the page, and records
/// the count on <body> for tests.
const CHECK_SCRIPT: &str = r#"
(function () {
  var figs = document.querySelectorAll('figure.chart'), drawn = 0;
  figs.forEach(function (f) {
    var colours = f.dataset.colours.split(','), mark = f.dataset.mark, ok = true;
    colours.forEach(function (c) {
      var seen = 0;
      f.querySelectorAll(mark).forEach(function (el) {
        var paint = (el.getAttribute('stroke') || '') + (el.getAttribute('fill') || '');
        var b = el.getBBox();
        if (paint.toUpperCase().indexOf(c) >= 0 && (b.width > 0 || b.height > 0)) seen++;
      });
      // Bars: the legend swatch is one rect of the colour; data needs more.
      if (seen < (mark === 'rect' && colours.length > 1 ? 2 : 1)) ok = false;
    });
    f.dataset.drawn = ok ? 'yes' : 'no';
    if (ok) drawn++;
  });
  document.body.dataset.chartsDrawn = drawn + '/' + figs.length;
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
                    results.push_str(&html_table(&table));
                    sweep_charts(&table, &mut charts)?;
                    target_bars(&table, &mut charts)?;
                    time_series(&workloads, systems, &mut charts)?;
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
        title,
        x_label: "time (s)".into(),
        y_label: y_label.into(),
        series,
        x_format: |v| format!("{v:.0}"),
        x_log2: false,
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
    // A stream's IOPS each second: its reads and writes together.
    let iops_per_second = |w: &WorkloadResult| -> Vec<(f64, f64)> {
        let (r, wr) = (&w.total.read.intervals, &w.total.write.intervals);
        (0..r.len().max(wr.len()))
            .map(|i| {
                let (read, write) = (r.get(i), wr.get(i));
                let at = read.or(write).map_or(i as f64, |x| x.t_s + x.dur_s);
                (
                    at,
                    read.map_or(0.0, |x| x.iops) + write.map_or(0.0, |x| x.iops),
                )
            })
            .collect()
    };
    // Latency per stream: of the direction it mostly does, and of its
    // flushes when it makes them.
    let main = |w: &WorkloadResult| {
        if w.total.read.ios >= w.total.write.ios {
            w.total.read.lat_ns
        } else {
            w.total.write.lat_ns
        }
    };
    type Pick = fn(&crate::result::LatencySummary) -> u64;
    let percentiles: [(&str, Pick); 3] = [
        ("p50", |l| l.p50),
        ("p99", |l| l.p99),
        ("p99.9", |l| l.p99_9),
    ];
    let mut categories: Vec<String> = s.streams.iter().map(|w| w.spec.name.clone()).collect();
    let mut summaries: Vec<crate::result::LatencySummary> = s.streams.iter().map(main).collect();
    for w in &s.streams {
        if let Some(sync) = w.sync.as_ref().filter(|x| x.count > 0) {
            categories.push(format!("{} flush", w.spec.name));
            summaries.push(sync.lat_ns);
        }
    }
    out.push(charts::bar_chart(&BarChart {
        title: format!("{name}: latency per stream"),
        y_label: "latency (µs)".into(),
        categories,
        groups: percentiles
            .iter()
            .map(|(label, pick)| Series {
                name: label.to_string(),
                points: summaries
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (i as f64, pick(l) as f64 / 1e3))
                    .collect(),
            })
            .collect(),
    })?);
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

/// Each rank's IOPS and p99 of every workload, side by side: a slow host
/// stands out.
fn rank_bars(
    name: &str,
    c: &crate::result::cluster::Cluster,
    out: &mut Vec<Rendered>,
) -> anyhow::Result<()> {
    let categories: Vec<String> = c.per_rank.iter().map(|r| r.label()).collect();
    type Pick = fn(&crate::result::DirectionResult) -> f64;
    let figures: [(&str, &str, Pick); 2] = [
        ("IOPS", "IOPS", |d| d.iops),
        ("p99", "p99 latency (µs)", |d| d.lat_ns.p99 as f64 / 1e3),
    ];
    for (what, y_label, pick) in figures {
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
        out.push(charts::bar_chart(&BarChart {
            title: format!("{name}{what} per rank"),
            y_label: y_label.into(),
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
    let ms = |ns: u64| ns as f64 / 1e6;
    let (lo, hi) = (steps[0].offered_iops, steps[steps.len() - 1].offered_iops);
    let mut series = vec![Series {
        name: "p50".into(),
        points: steps
            .iter()
            .map(|s| (s.offered_iops, ms(s.lat_ns.p50)))
            .collect(),
    }];
    for (k, term) in c.search.slo.0.iter().enumerate() {
        let name = crate::spec::capacity::percentile_name(term.percentile);
        series.push(Series {
            name: name.clone(),
            points: steps
                .iter()
                .filter_map(|s| Some((s.offered_iops, ms(*s.slo_ns.get(k)?))))
                .collect(),
        });
        series.push(Series {
            name: format!(
                "limit {name} {}",
                crate::units::latency(term.limit_ns as f64)
            ),
            points: vec![
                (lo, ms(term.limit_ns)),
                (hi.max(lo * 1.01), ms(term.limit_ns)),
            ],
        });
    }
    out.push(charts::line_chart(&LineChart {
        title: format!(
            "{prefix}{}: latency from the due time against load",
            c.spec.name
        ),
        x_label: "offered I/Os per second".into(),
        y_label: "latency (ms)".into(),
        series,
        x_format: charts::short_number,
        x_log2: false,
    })?);
    out.push(charts::line_chart(&LineChart {
        title: format!("{prefix}{}: achieved against offered load", c.spec.name),
        x_label: "offered I/Os per second".into(),
        y_label: "I/Os per second".into(),
        series: vec![
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
        x_format: charts::short_number,
        x_log2: false,
    })?);
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
    if !c.reasons.is_empty() || !c.notes.is_empty() {
        out.push_str("<ul>\n");
        for r in c.reasons.iter().chain(&c.notes) {
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
    let fmt_interval: fn(f64) -> String = |v| format!("{v:.0}");
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
            title: format!(
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
            x_label: "interval".into(),
            y_label: "% of I/Os".into(),
            series,
            x_format: fmt_interval,
            x_log2: false,
        })?);
    }
    Ok(())
}

fn html_table(table: &SweepTable) -> String {
    let (header, rows) = table::cells(table);
    cells_table(&header, &rows, table.knobs.len() + 1)
}

/// A table whose columns from `first_figure` on are right-aligned numbers.
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
    for row in table.rows.iter().filter(|r| r.target == target) {
        if let Some(f) = pick(row) {
            groups
                .entry(series_name(table, row, without))
                .or_default()
                .push((row, f));
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

fn targets(table: &SweepTable) -> Vec<String> {
    super::sections::distinct(table.rows.iter().map(|r| r.target.clone()))
}

fn sweep_charts(table: &SweepTable, out: &mut Vec<Rendered>) -> anyhow::Result<()> {
    let depths = table.knobs.contains(&"iodepth");
    let sizes = table.knobs.contains(&"bs");
    let fmt_depth: fn(f64) -> String = |v| format!("{}", v.round());
    let fmt_bs: fn(f64) -> String = |v| format_block_size(v.round() as u64);
    for target in targets(table) {
        // Each direction's charts in the same order; then paired, so that
        // the read and the write chart of one kind sit side by side.
        let mut by_direction: [Vec<Rendered>; 2] = [Vec::new(), Vec::new()];
        for ((dir, pick), out) in DIRECTIONS.into_iter().zip(&mut by_direction) {
            if depths {
                let groups = grouped(table, &target, pick, &["iodepth", "rw"]);
                let series =
                    |value: fn(&Figures) -> f64, groups: &[(String, Vec<(&Row, Figures)>)]| {
                        groups
                            .iter()
                            .map(|(name, rows)| {
                                let mut points: Vec<(f64, f64)> = rows
                                    .iter()
                                    .map(|(r, f)| (r.iodepth as f64, value(f)))
                                    .collect();
                                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                                Series {
                                    name: name.clone(),
                                    points,
                                }
                            })
                            .collect::<Vec<_>>()
                    };
                if !groups.is_empty() {
                    out.push(charts::line_chart(&LineChart {
                        title: format!("{target}: {dir} IOPS vs depth"),
                        x_label: "iodepth (I/Os in flight)".into(),
                        y_label: "IOPS".into(),
                        series: series(|f| f.iops, &groups),
                        x_format: fmt_depth,
                        x_log2: true,
                    })?);
                    for (name, rows) in &groups {
                        let mut rows = rows.clone();
                        rows.sort_by_key(|(r, _)| r.iodepth);
                        let pct = |label: &str, v: fn(&Figures) -> u64| Series {
                            name: label.into(),
                            points: rows
                                .iter()
                                .map(|(r, f)| (r.iodepth as f64, v(f) as f64 / 1e3))
                                .collect(),
                        };
                        out.push(charts::line_chart(&LineChart {
                            title: format!("{target}: {dir} latency vs depth ({name})"),
                            x_label: "iodepth (I/Os in flight)".into(),
                            y_label: "latency (µs)".into(),
                            series: vec![
                                pct("p50", |f| f.p50_ns),
                                pct("p99", |f| f.p99_ns),
                                pct("p99.9", |f| f.p99_9_ns),
                            ],
                            x_format: fmt_depth,
                            x_log2: true,
                        })?);
                    }
                }
            }
            if sizes {
                let groups = grouped(table, &target, pick, &["bs", "rw"]);
                if !groups.is_empty() {
                    let series = groups
                        .iter()
                        .map(|(name, rows)| {
                            let mut points: Vec<(f64, f64)> = rows
                                .iter()
                                .map(|(r, f)| (r.bs as f64, f.bw_bytes / (1 << 20) as f64))
                                .collect();
                            points.sort_by(|a, b| a.0.total_cmp(&b.0));
                            Series {
                                name: name.clone(),
                                points,
                            }
                        })
                        .collect();
                    out.push(charts::line_chart(&LineChart {
                        title: format!("{target}: {dir} bandwidth vs block size"),
                        x_label: "block size".into(),
                        y_label: "bandwidth (MiB/s)".into(),
                        series,
                        x_format: fmt_bs,
                        x_log2: true,
                    })?);
                }
            }
        }
        let [read, write] = by_direction;
        let (mut read, mut write) = (read.into_iter(), write.into_iter());
        loop {
            match (read.next(), write.next()) {
                (None, None) => break,
                (r, w) => out.extend(r.into_iter().chain(w)),
            }
        }
    }
    Ok(())
}

/// Several targets (or result files with different targets) side by side.
fn target_bars(table: &SweepTable, out: &mut Vec<Rendered>) -> anyhow::Result<()> {
    let names = targets(table);
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
            title: format!("{dir} IOPS by target"),
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
    let mut runs: Vec<_> = workloads
        .iter()
        .filter(|w| {
            [&w.total.read, &w.total.write]
                .iter()
                .any(|d| d.intervals.iter().filter(|i| i.ios > 0).count() >= 2)
        })
        .collect();
    runs.truncate(MAX_TIME_SERIES);
    for w in runs {
        let name = if systems {
            format!("{}: {}", w.system, w.spec.name)
        } else {
            w.spec.name.clone()
        };
        let dirs = [("read", &w.total.read), ("write", &w.total.write)];
        let present: Vec<_> = dirs.iter().filter(|(_, d)| d.ios > 0).collect();
        let mut iops: Vec<Series> = present
            .iter()
            .map(|(n, d)| Series {
                name: n.to_string(),
                points: d
                    .intervals
                    .iter()
                    .map(|i| (i.t_s + i.dur_s, i.iops))
                    .collect(),
            })
            .collect();
        iops.extend(drift_marks(w, WarningKind::IopsDrift, &iops));
        out.push(over_time(format!("{name}: IOPS per second"), "IOPS", iops)?);
        let mut p99: Vec<Series> = present
            .iter()
            .map(|(n, d)| Series {
                name: format!("{n} p99"),
                points: d
                    .intervals
                    .iter()
                    .filter(|i| i.ios > 0)
                    .map(|i| (i.t_s + i.dur_s, i.p99_ns as f64 / 1e3))
                    .collect(),
            })
            .collect();
        p99.extend(drift_marks(w, WarningKind::LatencyDrift, &p99));
        let mut disks: Vec<&str> = w.temperature.iter().map(|t| t.disk.as_str()).collect();
        disks.sort_unstable();
        disks.dedup();
        let heat: Vec<Series> = disks
            .into_iter()
            .map(|disk| Series {
                name: disk.to_string(),
                points: w
                    .temperature
                    .iter()
                    .filter(|t| t.disk == disk)
                    .map(|t| (t.t_s, t.celsius))
                    .collect(),
            })
            .filter(|s| s.points.len() >= 2)
            .collect();
        if !heat.is_empty() {
            out.push(over_time(
                format!("{name}: device temperature"),
                "°C",
                heat,
            )?);
        }
        out.push(over_time(
            format!("{name}: p99 latency per second"),
            "p99 latency (µs)",
            p99,
        )?);
    }
    Ok(())
}

/// Operations per second of the metadata tests, one bar per system (log
/// axis: they span decades on most file systems).
fn meta_bars(metas: &[Labelled<MetaResult>], out: &mut Vec<Rendered>) -> anyhow::Result<()> {
    let categories = table::meta_operations(metas);
    if categories.is_empty() {
        return Ok(());
    }
    let groups = metas
        .iter()
        .map(|m| Series {
            name: if metas.len() > 1 {
                m.system.to_string()
            } else {
                m.filesystem.clone().unwrap_or_else(|| "ops/s".into())
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
    let block = metas
        .iter()
        .flat_map(|m| &m.ops)
        .any(|o| o.bw_bytes.is_some());
    out.push(charts::bar_chart(&BarChart {
        title: if block {
            "bonnie++ tests: rate per system".into()
        } else {
            "metadata operations per second".into()
        },
        y_label: if block {
            "KiB/s (block tests), operations/s".into()
        } else {
            "operations/s".into()
        },
        categories: categories.iter().map(|c| c.replace('_', " ")).collect(),
        groups,
    })?);
    Ok(())
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::warning::Warning;

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
