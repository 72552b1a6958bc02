//! Ctrl-C and SIGTERM stop a run cleanly: it reports what it measured,
//! removes what it created and exits 130 / 143.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn interrupt_with(signal: i32, expected_code: i32) {
    let dir = tempdir();
    let child = fathom()
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--size",
            "4m",
            "--runtime",
            "60s",
            "--iodepth",
            "4",
            "--output-format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Measuring has begun once the workers run; I/Os are then in flight and
    // are drained and counted after the signal.
    wait_for_workers(child.id());
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stops promptly"
    );
    assert_eq!(
        out.status.code(),
        Some(expected_code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("partial result is JSON");
    assert_eq!(doc["interrupted"], true);
    let w = &doc["results"][0];
    assert_eq!(w["interrupted"], true);
    assert!(
        u(&w["total"]["read"]["ios"]) > 0,
        "reports what it measured"
    );
    let runtime = f(&w["runtime_s"]);
    assert!(runtime > 0.0 && runtime < 60.0, "runtime {runtime}");
    assert!(
        entries(dir.path()).is_empty(),
        "created file removed: {:?}",
        entries(dir.path())
    );
}

#[test]
fn sigint_reports_partial_results_and_cleans_up() {
    interrupt_with(libc::SIGINT, 130);
}

#[test]
fn sigterm_reports_partial_results_and_cleans_up() {
    interrupt_with(libc::SIGTERM, 143);
}
