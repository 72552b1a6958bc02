//! "Did the device change during the run?": a lasting step in the
//! per-second figures is reported, with its time and size; a steady run
//! reports nothing.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;

fn drift_warnings(doc: &Value) -> Vec<String> {
    doc["results"][0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "iops_drift" || w["kind"] == "latency_drift")
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_steady_null_engine_run_has_no_drift() {
    let dir = tempdir();
    let doc = run_json(&[
        dir.path().to_str().unwrap(),
        "--engine",
        "null",
        "--rate-iops",
        "20000",
        "--runtime",
        "3s",
        "--drift",
        "25%:1s",
    ]);
    assert!(
        drift_warnings(&doc).is_empty(),
        "{:?}",
        drift_warnings(&doc)
    );
}

#[test]
fn a_drop_that_lasts_is_reported_with_its_time_and_size() {
    // Two targets read at 1,000 I/Os a second each, one pass over each:
    // the short one is done after 2 s, so from then on the workload does
    // half as many I/Os a second.
    let dir = tempdir();
    let short = dir.path().join("short");
    let long = dir.path().join("long");
    std::fs::write(&short, vec![1u8; 2000 * 4096]).unwrap();
    std::fs::write(&long, vec![1u8; 5000 * 4096]).unwrap();
    let out = dir.path().join("result.json");
    let o = run(&[
        "run",
        short.to_str().unwrap(),
        long.to_str().unwrap(),
        "--rw",
        "read",
        "--buffered",
        "--rate-iops",
        "1000",
        "--drift",
        "25%:1s",
        "-o",
        out.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    assert!(o.status.success());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // The IOPS step, once (p99 may step too: the remaining target's
    // latency changes when the other stops).
    let found: Vec<String> = drift_warnings(&doc)
        .into_iter()
        .filter(|m| m.contains("IOPS"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("IOPS fell"), "{}", found[0]);
    let w = doc["results"][0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "iops_drift")
        .unwrap();
    // Half the I/Os a second from about 2 s on (a busy machine may shift
    // the step by a second, and the levels by a few percent).
    assert!((f(&w["figure"]) + 50.0).abs() < 8.0, "{w}");
    assert!((1.0..=3.0).contains(&f(&w["at_s"])), "{w}");
    // The text report says it too, and why: the short target finished, the
    // device did not change.
    let text = String::from_utf8(run(&["report", out.to_str().unwrap()]).stdout).unwrap();
    let iops_line = text
        .lines()
        .find(|l| l.contains("IOPS fell"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        iops_line.contains("short finished then") && !iops_line.contains("the device changed"),
        "{iops_line}"
    );
    // html marks the change on the per-second chart.
    let html =
        String::from_utf8(run(&["report", out.to_str().unwrap(), "--format", "html"]).stdout)
            .unwrap();
    assert!(
        html.contains("changed -50% at 2 s"),
        "no drift mark in the chart"
    );
}
