//! What fathom prints never carries a user's secrets or a terminal's
//! escape sequences: passwords in a history's connection string are
//! hidden, and control characters in tags and names are shown escaped.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::{run, run_ok, tempdir};

#[test]
fn escape_sequences_in_tags_and_names_are_shown_not_obeyed() {
    let dir = tempdir();
    let h = dir.path().join("h.db");
    // A target whose very name carries the sequences.
    let target = dir.path().join("t\u{1b}]0;owned\u{7}.dat");
    // OSC 0 (retitle the terminal) and OSC 52 (write the clipboard).
    let title = "\u{1b}]0;owned\u{7}";
    let clip = "\u{1b}]52;c;ZWNobyBoaQ==\u{7}";
    let tag = format!("note={title}{clip}");
    let label = format!("disk{title}");
    let out = run_ok(&[
        "run",
        target.to_str().unwrap(),
        "--size",
        "1m",
        "--runtime",
        "1",
        "--rw",
        "randread",
        "--history",
        h.to_str().unwrap(),
        "--tag",
        &tag,
        "-o",
        dir.path().join("r.json").to_str().unwrap(),
    ]);
    assert!(!out.stdout.contains(&0x1b), "the table printed an escape");
    // Nor does a refusal naming what it refused.
    for bad in [
        run(&["run", &format!("/no/such/{label}/t.dat")]),
        run(&["run", "--label", &label]),
    ] {
        assert_eq!(bad.status.code(), Some(2));
        assert!(
            !bad.stderr.contains(&0x1b),
            "{}",
            String::from_utf8_lossy(&bad.stderr)
        );
    }
    let list = run_ok(&["history", "--history", h.to_str().unwrap(), "list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        !list.stdout.contains(&0x1b) && !list.stdout.contains(&0x07),
        "{text}"
    );
    assert!(text.contains("\\u{1b}]0;owned"), "shown escaped: {text}");
    let report = run_ok(&["report", dir.path().join("r.json").to_str().unwrap()]);
    assert!(!report.stdout.contains(&0x1b));
    assert!(String::from_utf8_lossy(&report.stdout).contains("\\u{1b}"));
}

#[test]
fn a_connection_strings_password_is_never_echoed_nor_made_a_file() {
    let dir = tempdir();
    // A libpq connection string to a port nothing listens on.
    let port = common::free_port();
    let conninfo = format!("host=127.0.0.1 port={port} user=me password=s3cret dbname=h");
    let url = format!("postgres://me@127.0.0.1:{port}/h?password=s3cret&connect_timeout=2");
    for store in [&conninfo, &url] {
        let out = common::fathom()
            .current_dir(dir.path())
            .args(["history", "--history", store, "list"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(!err.contains("s3cret"), "the password was echoed: {err}");
    }
    assert!(
        common::entries(dir.path()).is_empty(),
        "a file was made of the connection string"
    );
}
