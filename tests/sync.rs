//! Flushes (`--fsync N`, `--fdatasync N`) are timed into a histogram of
//! their own and shown as a `sync` direction in every format.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;

#[test]
fn flushes_are_counted_timed_and_shown_everywhere() {
    let dir = tempdir();
    let out = dir.path().join("wal.json");
    let target = dir.path().join("wal");
    let text = String::from_utf8(
        run_ok(&[
            "run",
            target.to_str().unwrap(),
            "--rw",
            "write",
            "--fdatasync",
            "2",
            "--size",
            "1m",
            "--output-format",
            "json",
            "-o",
            out.to_str().unwrap(),
        ])
        .stdout,
    )
    .unwrap();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let t = &doc["results"][0]["targets"][0];
    // One pass over 1 MiB in 4 KiB writes, a flush after every second.
    assert_eq!(u(&t["write"]["ios"]), 256);
    assert_eq!(u(&t["sync"]["count"]), 128);
    assert_eq!(doc["results"][0]["spec"]["fdatasync"], 2);
    let h = fathom::measure::histogram::LatencyHistogram::decode(
        t["sync"]["histogram"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(h.count(), 128);
    let p99 = fathom::util::units::latency(u(&t["sync"]["lat_ns"]["p99"]) as f64);

    let sync_row = |text: &str| {
        text.lines()
            .find(|l| l.contains(" sync ") || l.contains("| sync |"))
            .map(String::from)
    };
    assert!(sync_row(&text).is_some_and(|r| r.contains(&p99)), "{text}");
    let path = out.to_str().unwrap();
    let csv = String::from_utf8(run_ok(&["report", path, "--format", "csv"]).stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let sync = rows
        .iter()
        .find(|r| &r[col("direction")] == "sync")
        .expect("a sync row");
    assert_eq!(&sync[col("ios")], "128");
    // The HTML draws the flushes' latency beside the writes'.
    let html = dir.path().join("wal.html");
    run_ok(&["report", path, "-o", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("latency of I/Os and flushes"),
        "no flush chart"
    );
    assert_charts_drawn(&html, page.matches("<figure class=\"chart\"").count());
    // A sweep's table gets flush columns.
    let swept = dir.path().join("sweep.json");
    run_ok(&[
        "run",
        target.to_str().unwrap(),
        "--rw",
        "write",
        "--fsync",
        "4",
        "--size",
        "256k",
        "--bs",
        "4k,8k",
        "--output-format",
        "json",
        "-o",
        swept.to_str().unwrap(),
    ]);
    let md = String::from_utf8(
        run_ok(&["report", swept.to_str().unwrap(), "--format", "markdown"]).stdout,
    )
    .unwrap();
    assert!(md.contains("sync/s") && md.contains("sync p99"), "{md}");
    let compared = String::from_utf8(run_ok(&["compare", path, path]).stdout).unwrap();
    assert!(
        sync_row(&compared).is_some_and(|r| r.contains("1.000")),
        "{compared}"
    );
}

#[test]
fn fsync_and_fdatasync_exclude_each_other() {
    let dir = tempdir();
    let target = dir.path().join("t");
    let t = target.to_str().unwrap();
    let out = run(&[
        "run",
        t,
        "--rw",
        "write",
        "--fsync",
        "1",
        "--fdatasync",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let job = dir.path().join("j.toml");
    std::fs::write(
        &job,
        format!("[defaults]\ntargets = [\"{t}\"]\nrw = \"write\"\nfsync = 1\nfdatasync = 1\n"),
    )
    .unwrap();
    let out = run(&["run", job.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fsync and --fdatasync"));
    assert!(!target.exists(), "nothing created");
}
