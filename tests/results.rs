//! The results model as users meet it: systems named by `--label` (or the
//! file's name) side by side in every format, certification reports, and
//! `compare` on every kind of result.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/schema1");

fn text(args: &[&str]) -> String {
    String::from_utf8(run_ok(args).stdout).unwrap()
}

fn meta_file(dir: &Path, work: &Path, label: &str) -> (String, Value) {
    let out = dir.join(format!("{label}.json"));
    run_ok(&[
        "meta",
        work.to_str().unwrap(),
        "-n",
        "1",
        "--block",
        "1m",
        "--label",
        label,
        "--output-format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["label"], label);
    (out.to_str().unwrap().to_string(), doc)
}

/// A phase's rate as bonnie++ gives it: KiB/s for block tests, else per
/// second.
fn rate(doc: &Value, op: &str) -> f64 {
    let op = doc["results"][0]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == op)
        .unwrap();
    match op["bw_bytes"].as_f64() {
        Some(bw) => bw / 1024.0,
        None => op["ops_per_s"].as_f64().unwrap(),
    }
}

const PHASES: [&str; 10] = [
    "seq write",
    "rewrite",
    "seq read",
    "random seeks",
    "create seq",
    "stat seq",
    "delete seq",
    "create random",
    "stat random",
    "delete random",
];

/// bonnie++'s whole set (block tests and file creation) on two file
/// systems: one table with a column per system and their ratio, one chart.
#[test]
fn two_systems_bonnie_side_by_side_in_every_format() {
    let dir = tempdir();
    let (disk_work, shm_work) = (tempdir(), tempdir_in_shm());
    let (disk, disk_doc) = meta_file(dir.path(), disk_work.path(), "disk");
    let (shm, shm_doc) = meta_file(dir.path(), shm_work.path(), "shm");

    let table = text(&["report", &disk, &shm]);
    for column in ["disk", "shm", "shm/disk", "disk p99", "shm p99"] {
        assert!(table.contains(column), "no column {column}:\n{table}");
    }
    for (phase, name) in PHASES.iter().zip(PHASES.map(|p| p.replace(' ', "_"))) {
        let ratio = rate(&shm_doc, &name) / rate(&disk_doc, &name);
        let row = table
            .lines()
            .find(|l| l.contains(&format!(" {phase} ")))
            .unwrap_or_else(|| panic!("no {phase} row:\n{table}"));
        assert!(row.contains(&format!("{ratio:.2}")), "{ratio:.2} in {row}");
        if name.starts_with("seq") || name == "rewrite" {
            assert!(row.contains("KiB/s"), "{row}");
        } else {
            assert!(!row.contains("KiB/s") && row.contains("/s"), "{row}");
        }
    }
    assert!(table.contains("smaller than the free memory"), "{table}");

    let csv = text(&["report", &disk, &shm, "--format", "csv"]);
    let systems: Vec<String> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect();
    assert_eq!(systems.len(), 20, "{csv}");
    assert_eq!(systems.iter().filter(|s| *s == "shm").count(), 10);

    let markdown = text(&["report", &disk, &shm, "--format", "markdown"]);
    assert!(
        markdown.contains("| operation | disk | shm | shm/disk | disk p99 | shm p99 |"),
        "{markdown}"
    );

    let html = dir.path().join("meta.html");
    run_ok(&[
        "report",
        &disk,
        &shm,
        "--format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    // The block tests (KiB/s) and the file operations (operations/s) on
    // charts of their own, each with one colour per system.
    assert_eq!(
        page.matches("data-colours=\"#1F77B4,#FF7F0E\"").count(),
        2,
        "two systems on each chart"
    );
    assert!(page.contains("KiB/s") && page.contains("operations/s"));
    assert_charts_drawn(&html, 2);

    let compared = text(&["compare", &disk, &shm]);
    assert!(
        compared.contains("rate A") && compared.contains("stat random"),
        "{compared}"
    );
    let ratio = rate(&shm_doc, "seq_read") / rate(&disk_doc, "seq_read");
    assert!(compared.contains(&format!("{ratio:.3}")), "{compared}");
}

#[test]
fn certification_reports_in_every_format_and_compare() {
    let dir = tempdir();
    let mut files = Vec::new();
    for name in ["ssd-a", "ssd-b"] {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::copy(format!("{FIXTURES}/certify.json"), &path).unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let c = &doc["certify"];
    let intervals = c["intervals"].as_array().unwrap();
    let streams = intervals[0]["streams"].as_array().unwrap().len();
    let verdict = match c["pass"].as_bool() {
        Some(true) => "PASS",
        Some(false) => "FAIL",
        None => "not judged",
    };

    let table = text(&["report", &files[0], &files[1]]);
    assert!(table.contains("ssd-a: certify act-3x"), "{table}");
    assert!(table.contains("ssd-b: certify act-3x"), "{table}");
    assert_eq!(
        table.matches(&format!("verdict: {verdict}")).count(),
        2,
        "{table}"
    );
    assert!(table.contains(">64"), "the slow-share columns: {table}");
    // Each interval's line: reads as I/Os per second, writes as MiB/s, as
    // every other report.
    let first = &intervals[0]["streams"];
    let (read, write) = (&first[0], &first[1]);
    assert_eq!(
        (read["direction"].as_str(), write["direction"].as_str()),
        (Some("read"), Some("write"))
    );
    let read_rate = format!(
        "{} r/s",
        thousands(read["iops"].as_f64().unwrap().round() as u64)
    );
    let mib = write["bw_bytes"].as_f64().unwrap() / (1 << 20) as f64;
    let write_rate = if mib >= 100.0 {
        format!("{mib:.0} MiB/s")
    } else {
        format!("{mib:.1} MiB/s")
    };
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap_or_else(|| panic!("no line for interval 1:\n{table}"));
    assert!(
        line.contains(&read_rate) && line.contains(&write_rate),
        "{line}"
    );

    let csv = text(&["report", &files[0], &files[1], "--format", "csv"]);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert!(header.iter().any(|h| h == ">1 ms %"), "{header:?}");
    let rows: Vec<_> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 2 * intervals.len() * streams);
    let first_share = intervals[0]["streams"][0]["over_pct"][0].as_f64().unwrap();
    let column = header.iter().position(|h| h == ">1 ms %").unwrap();
    assert_eq!(rows[0][column], format!("{first_share:.2}"));

    let markdown = text(&["report", &files[0], "--format", "markdown"]);
    assert!(
        markdown.contains(&format!("**verdict: {verdict}**")),
        "{markdown}"
    );

    // One chart per system and stream of its slow shares against its limits
    // (act-3x limits reads at 1, 8 and 64 ms and writes at 64 ms).
    let html = dir.path().join("c.html");
    run_ok(&[
        "report",
        &files[0],
        &files[1],
        "--format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("limit 5% &gt; 1 ms"), "limits drawn as lines");
    assert!(page.contains("limit 1% &gt; 64 ms"), "the write limit too");
    assert_charts_drawn(&html, 4);

    let compared = text(&["compare", &files[0], &files[1]]);
    assert!(compared.contains("1 result in both"), "{compared}");
    assert!(
        compared.contains("> 1 ms") && compared.contains("> 64 ms"),
        "{compared}"
    );
}

#[test]
fn compare_fails_when_nothing_matches() {
    let run_file = format!("{FIXTURES}/run.json");
    let meta_file = format!("{FIXTURES}/meta.json");
    let out = run(&["compare", &run_file, &meta_file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].contains("nothing to compare"), "{err}");
    // What each file holds, in a short list each, and the closest pair.
    assert!(lines.len() <= 4, "{err}");
    assert!(lines.iter().any(|l| l.contains("run holds ")), "{err}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("meta holds 1: metadata run")),
        "{err}"
    );
    assert!(lines.iter().any(|l| l.contains("closest: ")), "{err}");
}
