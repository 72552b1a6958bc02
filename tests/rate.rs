//! Fixed-rate workloads: I/Os go out on schedule, and latency is measured
//! from when each I/O was due as well as from its submission, so a target
//! that falls behind is not flattered (coordinated omission).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;

#[test]
fn a_thousand_iops_for_five_seconds_is_on_schedule() {
    let dir = tempdir();
    let file = dir.path().join("rate");
    // A small region read through the page cache: the schedule, not the
    // disk, is under test.
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--size",
        "4m",
        "--buffered",
        "--iodepth",
        "8",
        "--rate-iops",
        "1000",
        "--runtime",
        "5s",
    ]);
    let read = &doc["results"][0]["targets"][0]["read"];
    // The schedule never runs ahead; on a busy machine it may fall behind,
    // and then what it did not answer is reported, not dropped.
    let ios = u(&read["ios"]) as f64;
    let unanswered = read["unanswered"].as_u64().unwrap_or(0) as f64;
    assert!(ios <= 5050.0, "{ios} I/Os in 5 s at 1000/s");
    assert!(
        ios + unanswered >= 4950.0,
        "{ios} I/Os and {unanswered} unanswered, want 5000 due"
    );
    let intervals = read["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 5);
    // A second after a stall may catch up, but by the end of second k no
    // more than 1000 k I/Os were ever due.
    let mut done = 0.0;
    for (k, i) in intervals.iter().enumerate() {
        done += u(&i["ios"]) as f64;
        let due = 1000.0 * (k + 1) as f64;
        assert!(
            done <= due + 10.0,
            "{done} I/Os by second {}, ahead of the schedule",
            k + 1
        );
    }
    assert!(
        read["sched_lat_ns"]["p50"].is_u64(),
        "scheduled latency reported"
    );
    assert_eq!(
        doc["results"][0]["spec"]["rate_iops"].as_f64(),
        Some(1000.0)
    );
}

#[test]
fn a_target_that_falls_behind_shows_it_in_scheduled_latency() {
    let dir = tempdir();
    let file = dir.path().join("behind");
    // Far more than one I/O at a time can deliver: the backlog grows, and
    // each I/O waits longer past its due time.
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--size",
        "16m",
        "--rate-iops",
        "1500000",
        "--runtime",
        "1s",
    ]);
    let read = &doc["results"][0]["targets"][0]["read"];
    let submitted = u(&read["lat_ns"]["p50"]);
    let scheduled = u(&read["sched_lat_ns"]["p50"]);
    assert!(
        scheduled > 10 * submitted,
        "scheduled p50 {scheduled} ns should dwarf submission p50 {submitted} ns"
    );
    assert!(f(&read["iops"]) < 1_500_000.0);
}

#[test]
fn a_bandwidth_rate_becomes_an_io_rate() {
    let dir = tempdir();
    let file = dir.path().join("bw");
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--size",
        "16m",
        "--iodepth",
        "4",
        "--bs",
        "64k",
        "--rw",
        "write",
        "--rate-bw",
        "8m/s",
        "--runtime",
        "2s",
    ]);
    // 8 MiB/s of 64 KiB is 128 writes a second: 256 due in 2 s. Never
    // ahead of that schedule, and every due write done or reported
    // unanswered (a busy machine may fall behind, never run ahead).
    let write = &doc["results"][0]["targets"][0]["write"];
    let done = u(&write["ios"]);
    let unanswered = write["unanswered"].as_u64().unwrap_or(0);
    assert!(done <= 256 + 4, "{done} writes: ahead of the schedule");
    assert!(
        done + unanswered >= 254,
        "{done} done + {unanswered} unanswered of 256 due"
    );
    assert_eq!(u(&write["bytes"]), done * 65536);
    let out = run(&["run", ".", "--rate-iops", "100", "--rate-bw", "1m/s"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn steady_state_ends_a_run_once_the_window_holds() {
    let dir = tempdir();
    let file = dir.path().join("steady");
    // A fixed rate is as steady as a figure gets: the criterion holds after
    // its 3 s window, long before the 30 s limit.
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--size",
        "4m",
        "--buffered",
        "--iodepth",
        "8",
        "--rate-iops",
        "500",
        "--steady-state",
        "iops:5%:3s",
        "--runtime",
        "30s",
    ]);
    let w = &doc["results"][0];
    assert_eq!(w["steady_state"]["reached"], true, "{}", w["steady_state"]);
    let at = f(&w["steady_state"]["at_s"]);
    assert!((3.0..30.0).contains(&at));
    assert!(f(&w["runtime_s"]) < 29.0, "the run stopped at steady state");
    // Every format says why the run ended.
    let saved = dir.path().join("steady.json");
    std::fs::write(&saved, doc.to_string()).unwrap();
    for format in ["text", "markdown", "html"] {
        let out = run_ok(&["report", saved.to_str().unwrap(), "--output-format", format]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("steady at ") && text.contains("iops:5%:3s"),
            "{format}: {text}"
        );
    }

    let out = run(&["run", ".", "--steady-state", "iops:2%"]);
    assert_eq!(out.status.code(), Some(2), "needs --runtime as a limit");
    let out = run(&["run", ".", "--steady-state", "speed:2%", "--runtime", "5s"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn precondition_writes_the_region_before_measuring() {
    let dir = tempdir();
    let file = dir.path().join("pre");
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--size",
        "8m",
        "--precondition",
        "--runtime",
        "300ms",
    ]);
    let w = doc["results"].as_array().unwrap();
    let names: Vec<&str> = w
        .iter()
        .map(|w| w["spec"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["precondition-seq", "precondition-random", "run"]);
    assert_eq!(
        u(&w[0]["total"]["write"]["bytes"]),
        8 << 20,
        "one sequential pass"
    );
    assert_eq!(
        u(&w[1]["total"]["write"]["bytes"]),
        8 << 20,
        "one random pass"
    );
    assert!(u(&w[2]["total"]["read"]["ios"]) > 0);
}

#[test]
fn at_the_deadline_every_due_io_is_counted_once() {
    // 200,000 reads a second at depth 16: far more than the disk does, so
    // at the deadline 16 are in flight and most of the rest wait behind
    // them. Each due read is either done or unanswered, and none twice.
    let dir = tempdir();
    let file = dir.path().join("due");
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--size",
        "16m",
        "--iodepth",
        "16",
        "--rate-iops",
        "200000",
        "--runtime",
        "1s",
    ]);
    let read = &doc["results"][0]["targets"][0]["read"];
    let done = u(&read["ios"]);
    let unanswered = u(&read["unanswered"]);
    assert!(
        unanswered > 16,
        "the disk keeps up with 200,000 reads/s? {read}"
    );
    // The schedule starts when measuring does, even for a worker that
    // wakes late: 200,000 due in the second, plus the one due at its start.
    let accounted = done + unanswered;
    assert!(
        (199_999..=200_002).contains(&accounted),
        "{done} done + {unanswered} unanswered, for 200,000 due"
    );
}

/// A rated run on a device that answers nothing (a 3 s service time, a
/// 1.5 s run): every due I/O is unanswered, and latency from the schedule
/// counts each at its age when the run ended (the oldest, 1.5 s).
#[test]
fn unanswered_ios_at_the_end_are_in_scheduled_latency_at_their_age() {
    let dir = tempdir();
    let file = dir.path().join("dead");
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "3s",
        "--rate-iops",
        "10",
        "--runtime",
        "1.5s",
        "--size",
        "1m",
    ]);
    let read = &doc["results"][0]["total"]["read"];
    assert_eq!(u(&read["ios"]), 0);
    assert!((14..=16).contains(&u(&read["unanswered"])), "{read}");
    let sched = &read["sched_lat_ns"];
    assert!(u(&sched["max"]) >= 1_400_000_000, "{sched}");
    // The youngest was due at most 0.1 s before the end.
    assert!(u(&sched["min"]) <= 150_000_000, "{sched}");
}
