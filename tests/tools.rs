//! `fathom meta` (bonnie++ -n style) and `fathom seqread` (hdparm -tT
//! style), with small counts.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::process::Stdio;

fn meta_json(dir: &str, extra: &[&str]) -> Value {
    let mut args = vec!["meta", dir, "-n", "1", "--output-format", "json"];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn check_meta(doc: &Value, dir: &std::path::Path) {
    let meta = &doc["results"][0];
    let ops = meta["ops"].as_array().unwrap();
    let names: Vec<&str> = ops.iter().map(|o| o["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "create_seq",
            "stat_seq",
            "delete_seq",
            "create_random",
            "stat_random",
            "delete_random"
        ]
    );
    for o in ops {
        assert_eq!(u(&o["ops"]), 1024);
        let rate = f(&o["ops_per_s"]);
        assert!((rate - 1024.0 / f(&o["elapsed_s"])).abs() < 1e-6 * rate);
        assert!(u(&o["lat_ns"]["p50"]) <= u(&o["lat_ns"]["max"]));
    }
    assert!(entries(dir).is_empty(), "meta removed its files");
}

#[test]
fn meta_on_the_work_disk_and_on_tmpfs() {
    let dir = tempdir();
    let doc = meta_json(
        dir.path().to_str().unwrap(),
        &["--files-per-dir", "100", "--file-size", "1k"],
    );
    check_meta(&doc, dir.path());

    let tmpfs = tempdir();
    if !mount_tmpfs(tmpfs.path(), "size=64m") {
        return;
    }
    let doc = meta_json(tmpfs.path().to_str().unwrap(), &[]);
    assert_eq!(doc["results"][0]["filesystem"], "tmpfs");
    check_meta(&doc, tmpfs.path());
    unmount(tmpfs.path());
}

#[test]
fn meta_report_formats_and_bad_input() {
    let dir = tempdir();
    let out = dir.path().join("m.json");
    let work = tempdir();
    let o = run(&[
        "meta",
        work.path().to_str().unwrap(),
        "-n",
        "1",
        "--output-format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let md =
        String::from_utf8(run(&["report", out.to_str().unwrap(), "--format", "markdown"]).stdout)
            .unwrap();
    assert!(md.contains("| create seq |"), "{md}");
    let csv = String::from_utf8(run(&["report", out.to_str().unwrap(), "--format", "csv"]).stdout)
        .unwrap();
    assert_eq!(csv.lines().count(), 7);
    let html =
        String::from_utf8(run(&["report", out.to_str().unwrap(), "--format", "html"]).stdout)
            .unwrap();
    assert!(html.contains("metadata operations per second"));

    let bad = run(&["meta", "/nonexistent-fathom-dir"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = run(&["meta", work.path().to_str().unwrap(), "-n", "0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("-n"));
}

#[test]
fn interrupted_meta_cleans_up() {
    let dir = tempdir();
    let child = fathom()
        .args([
            "meta",
            dir.path().to_str().unwrap(),
            "-n",
            "256",
            "--output-format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Interrupted while it has files of its own in the directory.
    wait_until("meta created files", || {
        std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .any(|d| std::fs::read_dir(d.path()).is_ok_and(|mut e| e.next().is_some()))
    });
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["interrupted"], true);
    assert!(
        entries(dir.path()).is_empty(),
        "left {:?}",
        entries(dir.path())
    );
}

#[test]
fn seqread_reports_cached_and_uncached() {
    let dir = tempdir();
    let file = dir.path().join("seq");
    let out = run(&[
        "seqread",
        file.to_str().unwrap(),
        "--size",
        "16m",
        "--duration",
        "500ms",
        "--output-format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = doc["results"].as_array().unwrap();
    let by = |name: &str| {
        w.iter()
            .find(|w| w["spec"]["name"] == name)
            .unwrap()
            .clone()
    };
    let (cached, uncached) = (by("cached"), by("uncached"));
    assert_eq!(cached["spec"]["direct"], false);
    assert_eq!(uncached["spec"]["direct"], true);
    assert_eq!(u(&uncached["spec"]["bs"]), 2 << 20);
    for w in [&cached, &uncached] {
        let read = &w["total"]["read"];
        let (ios, bytes) = (u(&read["ios"]), u(&read["bytes"]));
        assert!(ios > 0, "{read}");
        // Whole 2 MiB reads, and bandwidth is bytes over the measured time,
        // which is the --duration given.
        assert_eq!(bytes, ios * (2 << 20), "{read}");
        let runtime = f(&w["runtime_s"]);
        assert!((0.45..=0.75).contains(&runtime), "runtime {runtime}");
        let bw = f(&read["bw_bytes"]);
        assert!((bw * runtime / bytes as f64 - 1.0).abs() < 0.01, "{read}");
    }
    // The cached figure re-reads one 2 MiB region; the uncached one walks.
    assert_eq!(u(&cached["targets"][0]["size"]), 2 << 20);
    assert!(!file.exists(), "the file seqread created is removed");

    let text = String::from_utf8(
        run(&[
            "seqread",
            file.to_str().unwrap(),
            "--size",
            "16m",
            "--duration",
            "300ms",
        ])
        .stdout,
    )
    .unwrap();
    assert!(text.contains("Timing cached reads") && text.contains("Timing O_DIRECT disk reads"));
    assert!(text.contains("MiB/s"));
}
