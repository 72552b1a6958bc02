//! Faults during a run: a full file system, a target that shrinks or
//! vanishes. Errors are counted per target, never retried, and the other
//! targets' results are kept.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::process::Stdio;

fn target(doc: &Value, i: usize) -> &Value {
    &doc["results"][0]["targets"][i]
}

#[test]
fn enospc_is_counted_and_ends_the_target_unless_told_to_continue() {
    let Some(fs) = SmallTmpfs::new("1m") else {
        return;
    };
    // A sparse 4 MiB file on a 1 MiB file system: writes into its holes
    // need space the file system does not have.
    let file = fs.dir.path().join("sparse");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let f = file.to_str().unwrap();
    let write = |engine: &str, extra: &[&str]| {
        let mut args = vec![
            "run",
            f,
            "--rw",
            "write",
            "--bs",
            "64k",
            "--buffered",
            "--overwrite",
            "--engine",
            engine,
            "--output-format",
            "json",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    for engine in ["io_uring", "sync"] {
        let out = write(engine, &[]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{engine}: an error ends the run with 1"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("ENOSPC"), "{engine}: {stderr}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let t = target(&doc, 0);
        assert!(u(&t["errors"]["enospc"]) >= 1, "{engine}: {t}");
        assert!(
            t["ended_early"].as_str().unwrap().contains("No space"),
            "{t}"
        );
        let written = u(&t["write"]["ios"]);
        assert!(
            written < 64,
            "{engine}: ended before the 64 writes of a full pass"
        );
        assert_eq!(u(&t["write"]["bytes"]), written * 65536);

        let out = write(engine, &["--continue-on-error"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{engine}: errors were tolerated"
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let t = target(&doc, 0);
        let errors = u(&t["errors"]["count"]);
        assert!(errors > 1, "{engine}: kept going: {t}");
        assert_eq!(
            errors + u(&t["write"]["ios"]),
            64,
            "{engine}: every I/O accounted"
        );
        assert!(t["ended_early"].is_null());
    }
}

#[test]
fn a_vanishing_target_ends_alone_and_a_shrinking_one_gives_short_reads() {
    let dir = tempdir();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    for p in [&a, &b, &c] {
        std::fs::write(p, vec![1u8; 4 << 20]).unwrap();
    }
    let child = fathom()
        .args([
            "run",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            c.to_str().unwrap(),
            "--rw",
            "read",
            "--bs",
            "64k",
            "--buffered",
            "--runtime",
            "4s",
            "--output-format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_workers(child.id());
    std::fs::remove_file(&a).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&c)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (ta, tb, tc) = (target(&doc, 0), target(&doc, 1), target(&doc, 2));
    assert!(
        ta["ended_early"].as_str().unwrap().contains("removed"),
        "{}",
        ta["ended_early"]
    );
    assert!(f(&ta["runtime_s"]) < 3.5, "a stopped when removed");
    assert!(u(&ta["read"]["ios"]) > 0, "a's results up to then are kept");
    assert!(tb["ended_early"].is_null(), "b ran to the end");
    assert!(f(&tb["runtime_s"]) > 3.5);
    assert!(u(&tc["errors"]["short"]) >= 1, "{}", tc["errors"]);
    assert!(tc["ended_early"].as_str().unwrap().contains("short read"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("target ") && stderr.contains("removed"),
        "{stderr}"
    );
}
