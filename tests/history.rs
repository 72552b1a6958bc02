//! The history: every run kept whole, found again by its keys and tags,
//! checked against the runs before it; safe when written by two processes
//! at once, when a writer is killed, and when the disk is full.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

fn null_run(history: &Path, out: &Path, latency: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--engine",
        "null",
        "--null-latency",
        latency,
        "--rate-iops",
        "2000",
        "--runtime",
        "2s",
        "--history",
        history.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    run(&args)
}

fn history(h: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["history", "--history", h.to_str().unwrap()];
    all.extend(args);
    run(&all)
}

#[test]
fn runs_are_kept_found_by_tag_and_checked_against_the_runs_before() {
    let dir = tempdir();
    let h = dir.path().join("h/history.db");
    let out = dir.path().join("r.json");
    for (latency, tag) in [("100us", "before"), ("100us", "before"), ("150us", "after")] {
        let tag = format!("change={tag}");
        let o = null_run(&h, &out, latency, &["--tag", &tag]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // The slower run says so at its end, against the two before it.
    let o = null_run(&h, &out, "150us", &[]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("vs the last 3 run(s)"), "{said}");
    let o = null_run(&h, &out, "100us", &["--no-history"]);
    assert!(o.status.success());
    let listed = history(&h, &["export", "--output-format", "csv"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(
        listed.lines().filter(|l| l.contains("randread")).count(),
        4,
        "{listed}"
    );
    let before = history(&h, &["--tag", "change=before"]);
    let before = String::from_utf8_lossy(&before.stdout);
    assert_eq!(
        before
            .lines()
            .filter(|l| l.contains("change=before"))
            .count(),
        2
    );

    // The last run (150 µs, id 4) against the runs tagged before: the
    // median regressed; against id 3 (150 µs too), within noise.
    let new = dir.path().join("new.json");
    let shown = history(&h, &["show", "4", "-o", new.to_str().unwrap()]);
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let hs = h.to_str().unwrap();
    let n = new.to_str().unwrap();
    let o = run(&[
        "check",
        n,
        "--against",
        "tag:change=before",
        "--history",
        hs,
        "--fail-on-regression",
        "10%",
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run(&[
        "check",
        n,
        "--against",
        "last:1",
        "--history",
        hs,
        "--output-format",
        "json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let p50 = v["directions"][0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["figure"] == "p50")
        .unwrap()
        .clone();
    assert!(p50["low"].as_f64().unwrap() < 0.1, "{p50}");

    // Export holds each document whole; a run removed is gone.
    let exported = history(&h, &["export"]);
    let docs: Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(docs.as_array().unwrap().len(), 4);
    assert!(
        docs[0]["document"]["results"][0]["total"]["read"]["intervals"][0]["histogram"].is_string()
    );
    assert!(history(&h, &["remove", "1"]).status.success());
    let o = history(&h, &["show", "1"]);
    assert_eq!(o.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "no run 1");
}

#[test]
fn a_store_that_cannot_be_written_keeps_the_result_and_says_so() {
    let dir = tempdir();
    let out = dir.path().join("r.json");
    // Not a database.
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
    let o = null_run(&junk, &out, "100us", &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(out.exists());
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("history not updated") && said.contains("not a fathom history"),
        "{said}"
    );
    assert_eq!(history(&junk, &[]).status.code(), Some(2));

    // Written by a later fathom.
    let later = dir.path().join("later.db");
    std::fs::remove_file(&out).unwrap();
    assert!(null_run(&later, &out, "100us", &[]).status.success());
    let conn = rusqlite::Connection::open(&later).unwrap();
    conn.execute("UPDATE fathom SET value = '99' WHERE key = 'schema'", [])
        .unwrap();
    drop(conn);
    let o = null_run(&later, &out, "100us", &["--overwrite"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("later fathom"));
    let o = history(&later, &[]);
    assert_eq!(o.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "later fathom");

    // A full file system.
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    if !mount_tmpfs(&full, "size=256k") {
        return;
    }
    let filler = full.join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 256 << 10]);
    let o = null_run(&full.join("history.db"), &out, "100us", &["--overwrite"]);
    unmount(&full);
    assert_eq!(o.status.code(), Some(0));
    assert!(out.exists());
    assert!(String::from_utf8_lossy(&o.stderr).contains("history not updated"));
}

/// Imports, each killed at a different moment, and two processes
/// importing at once: the store stays whole (SQLite's own check), every
/// document in it reads back, and nothing is half there.
#[test]
fn a_writer_killed_or_racing_another_leaves_the_store_whole() {
    let dir = tempdir();
    let h = dir.path().join("history.db");
    let doc = dir.path().join("doc.json");
    assert!(
        null_run(&h, &doc, "100us", &["--no-history"])
            .status
            .success()
    );
    let import = || {
        fathom()
            .args([
                "history",
                "--history",
                h.to_str().unwrap(),
                "import",
                doc.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    for delay_ms in [0u64, 2, 5, 10, 20, 40] {
        let mut child = import();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
    }
    let racing: Vec<_> = (0..6).map(|_| import()).collect();
    for mut c in racing {
        assert!(c.wait().unwrap().success());
    }
    let conn = rusqlite::Connection::open(&h).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let (documents, results): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM results)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(documents >= 6, "{documents}");
    assert_eq!(
        documents, results,
        "every document with its result, none half there"
    );
    let mut stmt = conn.prepare("SELECT json FROM documents").unwrap();
    for json in stmt.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        let _: Value = serde_json::from_str(&json.unwrap()).unwrap();
    }
}
