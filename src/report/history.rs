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

pub fn list(entries: &[Entry]) -> String {
    if entries.is_empty() {
        return "no runs kept match\n".into();
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "id",
        "started",
        "host",
        "kind",
        "workloads",
        "targets",
        "label",
        "tags",
    ]);
    for e in entries {
        table.add_row([
            e.id.to_string(),
            e.started_at.clone(),
            e.host.clone(),
            e.kind.clone(),
            e.workloads.join(", "),
            e.targets.join(", "),
            e.label.clone().unwrap_or_default(),
            tags(e),
        ]);
    }
    format!("{table}\n")
}

pub fn csv(entries: &[Entry]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "id",
        "started_at",
        "host",
        "kind",
        "workloads",
        "targets",
        "label",
        "tags",
        "fathom_version",
    ])?;
    for e in entries {
        w.write_record([
            e.id.to_string(),
            e.started_at.clone(),
            e.host.clone(),
            e.kind.clone(),
            e.workloads.join("; "),
            e.targets.join("; "),
            e.label.clone().unwrap_or_default(),
            tags(e),
            e.fathom_version.clone(),
        ])?;
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
