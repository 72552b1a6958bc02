//! `--live FILE`: each completed second of each stream as one JSON object
//! on a line of its own, written whole, for scripts and `tail -f`. The
//! second's histogram is encoded as in the result document, so a reader
//! can merge seconds exactly.

use crate::measure::live::Update;
use serde_json::json;
use std::path::Path;

/// `--live FILE`, as the write gate knows it: a file of these lines or a
/// stream (a FIFO with a reader, a terminal), replacing only such a file.
pub const OUTPUT: crate::gate::write::Output = crate::gate::write::Output {
    flag: "--live",
    what: "a fathom --live file",
    streams: true,
    ours: is_live_lines,
    overwrite_hint: None,
};

fn is_live_lines(path: &Path) -> bool {
    crate::gate::read::head(path, 16).is_some_and(|h| h.starts_with(b"{\"unix_s\":"))
}

pub fn line(update: &Update, host: &str) -> String {
    let directions: serde_json::Map<String, serde_json::Value> = update
        .directions
        .iter()
        .map(|(d, s)| {
            let lat = s.latency.summary();
            (
                d.to_string(),
                json!({
                    "ios": s.ios,
                    "bytes": s.bytes,
                    "errors": s.errors,
                    "iops": crate::measure::per_second(s.ios, s.dur_s),
                    "bw_bytes": crate::measure::per_second(s.bytes, s.dur_s),
                    "lat_ns": {
                        "p50": lat.p50, "p99": lat.p99, "p99_9": lat.p99_9,
                        "p99_99": lat.p99_99, "max": lat.max, "mean": lat.mean,
                    },
                    "in_flight": s.in_flight(),
                    "histogram": s.latency.encode(),
                }),
            )
        })
        .collect();
    let mut line = json!({
        "unix_s": update.unix_s,
        "host": if update.ranks.is_some() { "cluster" } else { host },
        "phase": update.phase,
        "workload": update.workload,
        "stream": update.stream,
        "second": update.index,
        "dur_s": update.dur_s,
        "directions": directions,
    });
    if let Some(ranks) = update.ranks {
        line["ranks"] = json!(ranks);
    }
    let mut text = line.to_string();
    text.push('\n');
    text
}
