//! The history's listings: the runs kept, as a table or CSV, and each
//! workload's figures run by run.

use crate::history::Entry;
use crate::result::{Document, RunResult};
use crate::util::units::{latency, thousands};
use comfy_table::Table;
use comfy_table::presets::UTF8_FULL_CONDENSED;

fn tags(e: &Entry) -> String {
    e.tags
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// An entry's keys, in the listing's columns (lists joined by `sep`).
fn columns(e: &Entry, sep: &str) -> Vec<String> {
    vec![
        e.id.to_string(),
        e.started_at.clone(),
        e.host.clone(),
        e.kind.clone(),
        e.workloads.join(sep),
        e.targets.join(sep),
        e.label.clone().unwrap_or_default(),
        tags(e),
    ]
}

const COLUMNS: [&str; 8] = [
    "id",
    "started",
    "host",
    "kind",
    "workloads",
    "targets",
    "label",
    "tags",
];

/// The runs kept, one row each, no wider than `fit` when given.
pub fn list(entries: &[Entry], fit: Option<usize>) -> String {
    if entries.is_empty() {
        return "no runs kept match\n".into();
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(COLUMNS);
    for e in entries {
        let mut row = columns(e, ", ");
        // A sweep's dozens of workloads would make a row hundreds of
        // characters wide: counted here, listed in full by csv and show.
        row[4] = super::fit::list_cell(&e.workloads, "workloads", ", ");
        row[5] = super::fit::list_cell(&e.targets, "targets", ", ");
        table.add_row(row);
    }
    super::fit::narrow(&mut table, fit);
    format!("{table}\n")
}

pub fn csv(entries: &[Entry]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = COLUMNS.to_vec();
    header[1] = "started_at";
    header.extend(["fathom_version", "fathom_commit"]);
    w.write_record(header)?;
    for e in entries {
        let mut row = columns(e, "; ");
        row.push(e.fathom_version.clone());
        row.push(e.fathom_commit.clone().unwrap_or_default());
        w.write_record(row)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The smallest and largest of a part's whole seconds' rates: how far
/// its seconds spread.
fn spread(seconds: &[crate::measure::intervals::Interval]) -> String {
    let full: Vec<f64> = seconds
        .iter()
        .filter(|i| i.dur_s >= 0.999)
        .map(|i| i.iops)
        .collect();
    match (
        full.iter().copied().reduce(f64::min),
        full.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => format!(
            "{}-{}",
            thousands(lo.round() as u64),
            thousands(hi.round() as u64)
        ),
        _ => String::new(),
    }
}

/// A result's key in the trend: its workload and its target.
fn trend_key(r: &RunResult) -> (String, String) {
    let kind = r.kind();
    (
        kind.workload_key().unwrap_or_else(|| kind.described()),
        kind.target_key().unwrap_or_default(),
    )
}

/// The results of every run that have parts to follow (every kind with
/// per-second figures), in order.
fn followed(doc: &Document) -> impl Iterator<Item = &RunResult> {
    doc.results.iter().filter(|r| !r.kind().series().is_empty())
}

/// Each workload (on each target) run by run, oldest first: every kind
/// with per-second figures, a row per run and part (a disk's direction,
/// an object store's operation, a phase, a training run's samples); no
/// wider than `fit` when given.
pub fn trend(runs: &[(Entry, Document)], fit: Option<usize>) -> String {
    let mut out = String::new();
    let mut keys: Vec<(String, String)> = Vec::new();
    for (_, doc) in runs {
        for r in followed(doc) {
            let key = trend_key(r);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    for key in keys {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_header([
            "id",
            "started",
            "part",
            "rate",
            "seconds' rate",
            "p50",
            "p99",
            "p99.9",
        ]);
        for (e, doc) in runs {
            for r in followed(doc).filter(|r| trend_key(r) == key) {
                for part in r.kind().series().into_iter().filter(|p| p.ops > 0) {
                    table.add_row([
                        e.id.to_string(),
                        e.started_at.clone(),
                        part.part.clone(),
                        format!("{} {}", rate(part.per_s), part.rate.name()),
                        spread(part.seconds),
                        latency(part.lat_ns.p50 as f64),
                        latency(part.lat_ns.p99 as f64),
                        latency(part.lat_ns.p99_9 as f64),
                    ]);
                }
            }
        }
        super::fit::narrow(&mut table, fit);
        let (workload, target) = key;
        out.push_str(&format!("{workload} on {target}\n{table}\n"));
    }
    if out.is_empty() {
        out.push_str("no runs kept match\n");
    }
    crate::util::terminal::wrap_at(out, fit)
}

/// A rate as the trend shows it: a few a second keep a decimal.
fn rate(x: f64) -> String {
    match x < 100.0 {
        true => format!("{x:.1}"),
        false => thousands(x.round() as u64),
    }
}

/// Each workload's figures run by run as one self-contained HTML page:
/// a chart per figure, the x axis the runs oldest first; IOPS drawn with
/// its slowest and fastest second, so a run's spread shows beside its
/// value.
pub fn trend_html(runs: &[(Entry, Document)]) -> anyhow::Result<String> {
    use super::charts::{LineChart, XAxis, line_chart};
    use super::html::{STYLE, escape};
    use crate::result::kind::Series;
    type Figure = (&'static str, &'static str, fn(&Series) -> f64);
    let figures: [Figure; 4] = [
        ("rate", "operations a second", |p| p.per_s),
        ("p50", "µs", |p| p.lat_ns.p50 as f64 / 1000.0),
        ("p99", "µs", |p| p.lat_ns.p99 as f64 / 1000.0),
        ("p99.9", "µs", |p| p.lat_ns.p99_9 as f64 / 1000.0),
    ];
    let seconds = |p: &Series, most: bool| {
        p.seconds
            .iter()
            .filter(|i| i.dur_s >= 0.999)
            .map(|i| i.iops)
            .reduce(if most { f64::max } else { f64::min })
    };
    let mut charts = String::new();
    for (figure, unit, of) in figures {
        let mut series: Vec<super::charts::Series> = Vec::new();
        let mut add =
            |name: String, x: f64, y: f64| match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((x, y)),
                None => series.push(super::charts::Series {
                    name,
                    points: vec![(x, y)],
                }),
            };
        for (n, (_, doc)) in runs.iter().enumerate() {
            let x = (n + 1) as f64;
            for r in followed(doc) {
                let (key, target) = trend_key(r);
                for part in r.kind().series().into_iter().filter(|p| p.ops > 0) {
                    let name = format!("{key} {} on {target}", part.part);
                    add(name.clone(), x, of(&part));
                    if figure == "rate" {
                        for (most, said) in [(false, "slowest second"), (true, "fastest second")] {
                            if let Some(v) = seconds(&part, most) {
                                add(format!("{name}: {said}"), x, v);
                            }
                        }
                    }
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        let mut chart = LineChart::new(
            format!("{figure}, run by run"),
            "run (oldest first)",
            unit,
            series,
        );
        chart.x_axis = XAxis::Whole;
        let rendered = line_chart(&chart)?;
        charts.push_str(&format!(
            "<figure class=\"chart\">{}</figure>\n",
            rendered.svg
        ));
    }
    let mut rows = String::new();
    for (n, (e, _)) in runs.iter().enumerate() {
        rows.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            n + 1,
            e.id,
            escape(&e.started_at),
            escape(&e.workloads.join(", ")),
            escape(&tags(e))
        ));
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fathom history</title><style>{STYLE}</style></head><body>\n\
         <h1>fathom history</h1>\n<div class=\"charts\">\n{charts}</div>\n\
         <h2>Runs</h2>\n<table><tr><th>run</th><th>id</th><th>started</th><th>workloads</th><th>tags</th></tr>\n{rows}</table>\n</body></html>\n"
    ))
}
