//! Every result says what limited its figures: the device, the host, fathom
//! itself, the page cache or the rate asked, with the evidence. A busy host
//! may change the figures, but never silently: either the answer is still
//! right or the verdict names the host.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use serde_json::Value;

/// The verdict of the first workload of a run.
fn limit(doc: &Value) -> (String, String) {
    let l = &doc["results"][0]["limited_by"];
    (
        l["by"]
            .as_str()
            .unwrap_or_else(|| panic!("no verdict: {doc}"))
            .to_string(),
        l["evidence"].as_str().unwrap().to_string(),
    )
}

/// `expected`, or the host with what it took from fathom's threads as its
/// evidence (the time they waited for a CPU, or the CPU time the
/// hypervisor gave other guests): the only other honest answer on a
/// machine others use.
fn is_or_host(doc: &Value, expected: &str) {
    let (by, evidence) = limit(doc);
    if by == "host" {
        assert!(
            evidence.contains("waited for a CPU") || evidence.contains("hypervisor gave"),
            "{evidence}"
        );
        eprintln!("the host was busy; the verdict says so: {evidence}");
    } else {
        assert_eq!(by, expected, "{evidence}");
    }
}

/// A run of `target` on a simulated device of 2 ms per I/O with 4 in
/// flight (2,000 I/Os a second), with `more` flags.
fn slow_device(target: &str, more: &[&str]) -> Value {
    let mut args = vec![
        target,
        "--engine",
        "null",
        "--null-latency",
        "2ms",
        "--iodepth",
        "4",
        "--size",
        "1m",
    ];
    args.extend_from_slice(more);
    run_json(&args)
}

#[test]
fn each_run_names_what_limited_it() {
    let dir = tempdir();
    let path = dir.path().join("t.dat");
    let f = path.to_str().unwrap();
    // The null engine does no I/O: the figure is fathom's own speed.
    let null = run_json(&[f, "--engine", "null", "--runtime", "300ms", "--size", "1m"]);
    is_or_host(&null, "fathom");
    assert!(limit(&null).1.contains("does no I/O") || limit(&null).0 == "host");
    // A simulated device of 2 ms per I/O: the workers wait for it.
    let slow = slow_device(f, &["--runtime", "500ms"]);
    is_or_host(&slow, "device");
    // On a schedule well inside what the device does: the rate decides.
    let rated = slow_device(f, &["--rate-iops", "200", "--runtime", "1s"]);
    is_or_host(&rated, "rate_asked");
    // Buffered reads of a region far smaller than memory: the page cache.
    let cached = run_json(&[
        f,
        "--buffered",
        "--engine",
        "sync",
        "--runtime",
        "300ms",
        "--size",
        "4m",
    ]);
    is_or_host(&cached, "page_cache");
    // The figures behind the verdicts are in every result.
    let issue = &slow["results"][0]["issue"];
    assert!(issue["lag_ns"]["p99"].as_u64().is_some(), "{issue}");
    let late = issue["late_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&late), "{issue}");
}

/// A device of known speed (2 ms per I/O, 4 in flight: 2,000 I/Os a second)
/// measured while every CPU is kept busy by other threads: the figure is
/// still right, or the verdict says the host held the run back. Never a
/// slow device that is really a busy host.
#[test]
fn a_busy_host_never_passes_for_a_slow_device() {
    let dir = tempdir();
    let path = dir.path().join("t.dat");
    let target = path.to_str().unwrap();
    let quiet = slow_device(target, &["--runtime", "1s"]);
    let hogs = Hogs::start(3);
    let busy = slow_device(target, &["--runtime", "1s"]);
    drop(hogs);
    for (name, doc) in [("quiet", &quiet), ("busy", &busy)] {
        let iops = f(&doc["results"][0]["total"]["read"]["iops"]);
        let (by, evidence) = limit(doc);
        match by.as_str() {
            "device" => assert!(
                (2000.0 * 0.85..=2000.0 * 1.02).contains(&iops),
                "{name}: {iops} I/Os a second said to be the device's: {evidence}"
            ),
            "host" => assert!(evidence.contains("waited for a CPU"), "{evidence}"),
            other => panic!("{name}: limited by {other}: {evidence}"),
        }
    }
}
