//! The history's listings: the runs kept, as a table or CSV, and each
//! workload's figures run by run.

use crate::history::Entry;
use crate::result::Document;
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

pub fn list(entries: &[Entry]) -> String {
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

/// The smallest and largest of a run's whole seconds' IOPS: how far its
/// seconds spread.
fn spread(d: &crate::result::workload::DirectionResult) -> String {
    let full: Vec<f64> = d
        .intervals
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

/// Each workload (on each target) run by run, oldest first.
pub fn trend(runs: &[(Entry, Document)]) -> String {
    let mut out = String::new();
    let mut keys: Vec<(String, String)> = Vec::new();
    for (_, doc) in runs {
        for w in doc.workloads() {
            let key = (
                crate::result::change::workload_key(&w.spec),
                w.targets
                    .first()
                    .map(|t| t.name.clone())
                    .unwrap_or_default(),
            );
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    for (key, target) in keys {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_header([
            "id",
            "started",
            "direction",
            "IOPS",
            "seconds' IOPS",
            "p50",
            "p99",
            "p99.9",
        ]);
        for (e, doc) in runs {
            for w in doc.workloads().filter(|w| {
                crate::result::change::workload_key(&w.spec) == key
                    && w.targets
                        .first()
                        .map(|t| t.name.as_str())
                        .unwrap_or_default()
                        == target
            }) {
                for (name, d) in [("read", &w.total.read), ("write", &w.total.write)] {
                    if d.ios == 0 {
                        continue;
                    }
                    table.add_row([
                        e.id.to_string(),
                        e.started_at.clone(),
                        name.to_string(),
                        thousands(d.iops.round() as u64),
                        spread(d),
                        latency(d.lat_ns.p50 as f64),
                        latency(d.lat_ns.p99 as f64),
                        latency(d.lat_ns.p99_9 as f64),
                    ]);
                }
            }
        }
        out.push_str(&format!("{key} on {target}\n{table}\n"));
    }
    if out.is_empty() {
        out.push_str("no workload runs kept match\n");
    }
    out
}

/// Each workload's figures run by run as one self-contained HTML page:
/// a chart per figure, the x axis the runs oldest first; IOPS drawn with
/// its slowest and fastest second, so a run's spread shows beside its
/// value.
pub fn trend_html(runs: &[(Entry, Document)]) -> anyhow::Result<String> {
    use super::charts::{LineChart, Series, XAxis, line_chart};
    use super::html::{STYLE, escape};
    type Figure = (
        &'static str,
        &'static str,
        fn(&crate::result::workload::DirectionResult) -> f64,
    );
    let figures: [Figure; 4] = [
        ("IOPS", "I/Os a second", |d| d.iops),
        ("p50", "µs", |d| d.lat_ns.p50 as f64 / 1000.0),
        ("p99", "µs", |d| d.lat_ns.p99 as f64 / 1000.0),
        ("p99.9", "µs", |d| d.lat_ns.p99_9 as f64 / 1000.0),
    ];
    let seconds = |d: &crate::result::workload::DirectionResult, most: bool| {
        d.intervals
            .iter()
            .filter(|i| i.dur_s >= 0.999)
            .map(|i| i.iops)
            .reduce(if most { f64::max } else { f64::min })
    };
    let mut charts = String::new();
    for (figure, unit, of) in figures {
        let mut series: Vec<Series> = Vec::new();
        let mut add =
            |name: String, x: f64, y: f64| match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((x, y)),
                None => series.push(Series {
                    name,
                    points: vec![(x, y)],
                }),
            };
        for (n, (_, doc)) in runs.iter().enumerate() {
            let x = (n + 1) as f64;
            for w in doc.workloads() {
                let target = w
                    .targets
                    .first()
                    .map(|t| t.name.as_str())
                    .unwrap_or_default();
                let key = crate::result::change::workload_key(&w.spec);
                for (direction, d) in [("read", &w.total.read), ("write", &w.total.write)] {
                    if d.ios == 0 {
                        continue;
                    }
                    let name = format!("{key} {direction} on {target}");
                    add(name.clone(), x, of(d));
                    if figure == "IOPS" {
                        for (most, said) in [(false, "slowest second"), (true, "fastest second")] {
                            if let Some(v) = seconds(d, most) {
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
