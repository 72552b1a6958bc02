//! `fathom certify`: streams at fixed rates, per-interval slow-I/O shares,
//! a verdict, and the result file written as intervals finish.

mod common;

use common::*;
use serde_json::Value;

#[test]
fn certify_reports_each_interval_and_a_verdict() {
    let dir = tempdir();
    let target = dir.path().join("act");
    let out = dir.path().join("act.json");
    let o = run(&[
        "certify",
        target.to_str().unwrap(),
        "--profile",
        "act-3x",
        "--size",
        "64m",
        "--scale",
        "0.1",
        "--duration",
        "4s",
        "--interval",
        "2s",
        "-o",
        out.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("verdict: "), "{text}");
    assert!(text.contains(">64"), "{text}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let c = &doc["certify"];
    assert_eq!(
        c["thresholds_ms"],
        serde_json::json!([1, 2, 4, 8, 16, 32, 64])
    );
    let intervals = c["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 2);
    assert_eq!(
        intervals[0]["judged"], false,
        "the first interval is stabilisation"
    );
    assert_eq!(intervals[1]["judged"], true);
    for i in intervals {
        let streams = i["streams"].as_array().unwrap();
        assert_eq!(streams.len(), 2);
        let read = streams.iter().find(|s| s["direction"] == "read").unwrap();
        let write = streams.iter().find(|s| s["direction"] == "write").unwrap();
        // 0.1 x 6,000 reads/s and 0.1 x 18 MB/s of writes: never ahead of
        // the schedule; behind it only if the disk is (another test may be
        // loading it), so the lower bound is loose.
        let (r, w) = (f(&read["iops"]) / 600.0, f(&write["bw_bytes"]) / 1.8e6);
        assert!((0.3..=1.02).contains(&r), "{read}");
        assert!((0.3..=1.02).contains(&w), "{write}");
        let shares: Vec<f64> = read["over_pct"].as_array().unwrap().iter().map(f).collect();
        assert_eq!(shares.len(), 7);
        assert!(
            shares.windows(2).all(|w| w[0] >= w[1]),
            "shares fall as thresholds rise"
        );
    }
    let pass = c["pass"].as_bool().unwrap();
    assert_eq!(pass, o.status.code() == Some(0));
    assert_eq!(pass, c["reasons"].as_array().unwrap().is_empty());
    assert!(!target.exists(), "the file certify created is removed");
}

#[test]
fn certify_refuses_bad_input_before_writing() {
    let dir = tempdir();
    let target = dir.path().join("x");
    let t = target.to_str().unwrap();
    for (args, needle) in [
        (vec!["certify", t, "--profile", "nope"], "--profile"),
        (
            vec!["certify", t, "--interval", "2h", "--duration", "1h"],
            "--interval",
        ),
        (vec!["certify", t, "--scale", "0"], "--scale"),
        (vec!["certify", t, "--duration", "forever"], "--duration"),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{args:?}"
        );
        assert!(!target.exists());
    }
    let profile = dir.path().join("p.toml");
    std::fs::write(&profile, "[certify]\nduration = \"1m\"\n").unwrap();
    let o = run(&["certify", t, "--profile", profile.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line"));
}
