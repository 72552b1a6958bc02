//! The history: every run kept whole, found again by its keys and tags,
//! checked against the runs before it; safe when written by two processes
//! at once, when a writer is killed, and when the disk is full. The same
//! tests run against SQLite (a file) and a real PostgreSQL server.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use crate::postgres_server;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

fn null_run(store: &str, out: &Path, latency: &str, extra: &[&str]) -> std::process::Output {
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
        store,
        "-o",
        out.to_str().unwrap(),
        "--overwrite",
    ];
    args.extend(extra);
    run(&args)
}

fn history(store: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["history", "--history", store];
    all.extend(args);
    run(&all)
}

/// (documents, results) in the store, read by the database's own client.
fn counts(store: &str) -> (i64, i64) {
    let sql = "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM results)";
    match store.starts_with("postgres://") {
        true => {
            let mut c = postgres::Client::connect(store, postgres::NoTls).unwrap();
            let row = c.query_one(sql, &[]).unwrap();
            (row.get(0), row.get(1))
        }
        false => {
            let conn = rusqlite::Connection::open(store).unwrap();
            let check: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(check, "ok");
            conn.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
        }
    }
}

fn set_layout(store: &str, layout: &str) {
    let sql = format!("UPDATE fathom SET value = '{layout}' WHERE key = 'schema'");
    match store.starts_with("postgres://") {
        true => {
            let mut c = postgres::Client::connect(store, postgres::NoTls).unwrap();
            c.execute(&sql, &[]).unwrap();
        }
        false => {
            rusqlite::Connection::open(store)
                .unwrap()
                .execute(&sql, [])
                .unwrap();
        }
    }
}

fn kept_found_and_checked(store: &str, dir: &Path) {
    let out = dir.join("r.json");
    for (latency, tag) in [("100us", "before"), ("100us", "before"), ("300us", "after")] {
        let tag = format!("change={tag}");
        let o = null_run(store, &out, latency, &["--tag", &tag]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(!said.contains("not updated"), "{said}");
    }
    // A run says how it did against the runs of it before.
    let o = null_run(store, &out, "300us", &[]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("vs the last 3 run(s)"), "{said}");
    let o = null_run(store, &out, "100us", &["--no-history"]);
    assert!(o.status.success());
    let listed = history(store, &["export", "--output-format", "csv"]);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(
        listed.lines().filter(|l| l.contains("randread")).count(),
        4,
        "{listed}"
    );
    let before = history(store, &["--tag", "change=before"]);
    let before = String::from_utf8_lossy(&before.stdout);
    assert_eq!(
        before
            .lines()
            .filter(|l| l.contains("change=before"))
            .count(),
        2
    );

    // The last run (300 µs, id 4) against the runs tagged before: the
    // median regressed; against the run before it (300 µs too), not. The
    // service times are three times apart so that a busy host, which adds
    // tens of microseconds to a median, cannot move either verdict.
    let new = dir.join("new.json");
    let shown = history(store, &["show", "4", "-o", new.to_str().unwrap()]);
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let n = new.to_str().unwrap();
    let o = run(&[
        "check",
        n,
        "--against",
        "tag:change=before",
        "--history",
        store,
        "--fail-on-regression",
        "10%",
    ]);
    // Never passed: regressed (exit 1), or, where a busy host limited a
    // side, the gate cannot judge it (exit 3) and says why.
    let said = String::from_utf8_lossy(&o.stdout);
    match o.status.code() {
        Some(1) => {}
        Some(3) => assert!(said.contains("the change may be the host's"), "{said}"),
        other => panic!("exit {other:?}: {said}"),
    }
    let o = run(&[
        "check",
        n,
        "--against",
        "last:1",
        "--history",
        store,
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

    // The trend: a row per run and direction; in html, a chart per figure.
    let trend = history(store, &["trend"]);
    let trend = String::from_utf8_lossy(&trend.stdout);
    assert_eq!(
        trend.lines().filter(|l| l.contains(" read ")).count(),
        4,
        "{trend}"
    );
    let html = history(store, &["trend", "--output-format", "html"]);
    assert_eq!(
        String::from_utf8_lossy(&html.stdout)
            .matches("<svg")
            .count(),
        4
    );

    // Export holds each document whole; a run removed is gone.
    let exported = history(store, &["export"]);
    let docs: Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(docs.as_array().unwrap().len(), 4);
    assert!(
        docs[0]["document"]["results"][0]["total"]["read"]["intervals"][0]["histogram"].is_string()
    );
    assert!(history(store, &["remove", "1"]).status.success());
    let o = history(store, &["show", "1"]);
    assert_eq!(o.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "no run 1");
    assert_eq!(counts(store), (3, 3));

    // A run of other settings is compared with none of them, and says so.
    let o = null_run(store, &out, "300us", &["--completion-wait", "sleep"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("3 earlier run(s) of other settings (completion wait auto vs sleep) left out; none of the same settings"),
        "{said}"
    );
    assert!(!said.contains("vs the last"), "{said}");
}

/// Imports, each killed at a different moment, and six processes
/// importing at once: the store stays whole, every document in it reads
/// back, and nothing is half there.
fn killed_and_racing_writers(store: &str, dir: &Path) {
    let doc = dir.join("doc.json");
    assert!(
        null_run(store, &doc, "100us", &["--no-history"])
            .status
            .success()
    );
    let import = |stderr: Stdio| {
        fathom()
            .args(["history", "--history", store, "import"])
            .arg(&doc)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap()
    };
    for delay_ms in [0u64, 2, 5, 10, 20, 40] {
        let mut child = import(Stdio::null());
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
    }
    let racing: Vec<_> = (0..6).map(|_| import(Stdio::piped())).collect();
    for c in racing {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (documents, results) = counts(store);
    assert!(documents >= 6, "{documents}");
    assert_eq!(
        documents, results,
        "every document with its result, none half there"
    );
    let exported = history(store, &["export"]);
    let docs: Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(docs.as_array().unwrap().len() as i64, documents);
}

/// A store of a later layout: a run still writes its result and says so;
/// `history` refuses it.
fn a_later_layout_is_refused(store: &str, dir: &Path) {
    let out = dir.join("later.json");
    assert!(null_run(store, &out, "100us", &[]).status.success());
    set_layout(store, "99");
    std::fs::remove_file(&out).unwrap();
    let o = null_run(store, &out, "100us", &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(out.exists());
    assert!(String::from_utf8_lossy(&o.stderr).contains("later fathom"));
    let o = history(store, &[]);
    assert_eq!(o.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "later fathom");
}

#[test]
fn runs_are_kept_found_by_tag_and_checked_against_the_runs_before() {
    let dir = tempdir();
    // A --history in a directory that is not there is refused before the
    // run, and the directory is not made (only the default one's is).
    let store = dir.path().join("h/history.db");
    let o = null_run(
        store.to_str().unwrap(),
        &dir.path().join("r.json"),
        "100us",
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "does not exist");
    assert!(!dir.path().join("h").exists(), "the directory was made");
    std::fs::create_dir(dir.path().join("h")).unwrap();
    kept_found_and_checked(store.to_str().unwrap(), dir.path());
}

#[test]
fn a_writer_killed_or_racing_another_leaves_the_store_whole() {
    let dir = tempdir();
    let store = dir.path().join("history.db");
    killed_and_racing_writers(store.to_str().unwrap(), dir.path());
}

#[test]
fn the_same_history_works_in_postgresql() {
    let Some(server) = postgres_server::skip_or_start() else {
        return;
    };
    let dir = tempdir();
    kept_found_and_checked(&server.database("kept"), dir.path());
    killed_and_racing_writers(&server.database("racing"), dir.path());
    a_later_layout_is_refused(&server.database("later"), dir.path());
    // A server that cannot be reached: the run's result is still written.
    let out = dir.path().join("unreached.json");
    let nowhere = format!("postgres://postgres:secret@127.0.0.1:{}/x", server.port + 1);
    let o = null_run(&nowhere, &out, "100us", &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(out.exists());
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("history not updated") && said.contains("cannot connect"),
        "{said}"
    );
    assert!(!said.contains("secret"), "the password is not said: {said}");
    assert_eq!(history(&nowhere, &[]).status.code(), Some(2));
    // The server's reason is said, not only "db error".
    let missing = format!("postgres://postgres@127.0.0.1:{}/no_such_db", server.port);
    let o = history(&missing, &[]);
    assert_eq!(o.status.code(), Some(2));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("does not exist"), "{said}");
    // Another program's database: nothing of fathom's is added to it, not
    // its tables and not an index on the program's own `tags`.
    let app = server.database("appdb");
    let mut c = postgres::Client::connect(&app, postgres::NoTls).unwrap();
    c.batch_execute("CREATE TABLE tags (key text, value text); CREATE TABLE orders (id int);")
        .unwrap();
    let o = null_run(&app, &dir.path().join("app.json"), "100us", &[]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("tables of its own (orders, tags)"), "{said}");
    let tables: Vec<String> = c
        .query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(tables, ["orders", "tags"]);
    let indexes: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(indexes, 0, "an index was added to the program's tables");
    assert_eq!(history(&app, &[]).status.code(), Some(2));
}

#[test]
fn a_store_that_cannot_be_written_keeps_the_result_and_says_so() {
    let dir = tempdir();
    let out = dir.path().join("r.json");
    // Not a database: refused before the run, which writes nothing (the
    // store is checked up front; one that fails only at the end, below,
    // keeps the result).
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
    let junk = junk.to_str().unwrap();
    let o = null_run(junk, &out, "100us", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("not a fathom history"), "{said}");
    assert_eq!(std::fs::read(junk).unwrap(), vec![b'x'; 4096]);
    assert_eq!(history(junk, &[]).status.code(), Some(2));

    a_later_layout_is_refused(dir.path().join("later.db").to_str().unwrap(), dir.path());

    // A full file system.
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    if !mount_tmpfs(&full, "size=256k") {
        return;
    }
    let _ = std::fs::write(full.join("filler"), vec![0u8; 256 << 10]);
    let _ = std::fs::remove_file(&out);
    let o = null_run(
        full.join("history.db").to_str().unwrap(),
        &out,
        "100us",
        &[],
    );
    unmount(&full);
    assert_eq!(o.status.code(), Some(0));
    assert!(out.exists());
    assert!(String::from_utf8_lossy(&o.stderr).contains("history not updated"));
}

/// `history remove` says how many it removed (a run named twice is one),
/// and a filter given with ids bounds them: a run it leaves out is not
/// removed, and then none is.
#[test]
fn remove_counts_what_it_removed_and_keeps_to_its_filter() {
    let dir = tempdir();
    let store = dir.path().join("h.db");
    let store = store.to_str().unwrap();
    for i in 0..2 {
        let out = dir.path().join(format!("r{i}.json"));
        let o = null_run(store, &out, "100us", &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = history(store, &["remove", "1", "1", "1"]);
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "removed 1 run(s)"
    );
    assert_eq!(counts(store).0, 1);
    let o = history(store, &["remove", "2", "--tag", "nope=1"]);
    assert_eq!(o.status.code(), Some(2));
    names_the_problem(
        &String::from_utf8_lossy(&o.stderr),
        "does not match the filter",
    );
    assert_eq!(counts(store).0, 1, "run 2 is kept");
}

/// A PostgreSQL history that accepts connections and never answers is a
/// wait with a bound: `history list` gives up within seconds, naming it,
/// and a run whose result is written ends within a second of Ctrl-C
/// while it waits to remember it.
#[test]
fn a_history_server_that_never_answers_is_given_up() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let store = format!(
        "postgres://u@127.0.0.1:{}/db",
        listener.local_addr().unwrap().port()
    );
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let began = std::time::Instant::now();
    let o = run(&["history", "list", "--history", &store]);
    assert_eq!(o.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "did not answer");
    assert!(began.elapsed().as_secs() < 20, "{:?}", began.elapsed());

    let dir = tempdir();
    let out = dir.path().join("r.json");
    let mut child = fathom()
        .arg("run")
        .arg(dir.path().join("t"))
        .args([
            "--engine",
            "null",
            "--runtime",
            "1s",
            "--history",
            &store,
            "-o",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The report on stdout comes once the result is emitted, just before
    // the history is opened.
    let mut report = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    std::io::Read::read_exact(&mut report, &mut first).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let signalled = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let after = signalled.elapsed();
    // A second is the rule; the other is a busy host's slack.
    assert!(
        after.as_secs_f64() < 2.0,
        "ended {after:?} after the signal"
    );
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "history not updated");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(!doc["results"].as_array().unwrap().is_empty());
}

/// `history show -o` replaces a report it wrote before, and a file that
/// is no fathom result only with `--overwrite`, as every `-o` does.
#[test]
fn history_show_replaces_its_report_and_other_files_with_overwrite() {
    let dir = tempdir();
    let store = dir.path().join("h.db");
    let store = store.to_str().unwrap();
    succeeded(&null_run(store, &dir.path().join("r.json"), "10us", &[]));
    let report = dir.path().join("rep.html");
    let report = report.to_str().unwrap();
    for _ in 0..2 {
        succeeded(&history(store, &["show", "1", "-o", report]));
    }
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "mine\n").unwrap();
    let notes = notes.to_str().unwrap();
    let o = history(store, &["show", "1", "-o", notes]);
    assert_eq!(o.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "--overwrite");
    assert_eq!(std::fs::read_to_string(notes).unwrap(), "mine\n");
    succeeded(&history(store, &["show", "1", "-o", notes, "--overwrite"]));
    assert_ne!(std::fs::read_to_string(notes).unwrap(), "mine\n");
}
