//! Several hosts at once without MPI: runs started at one agreed time
//! (`--start-at`) and merged into one cluster document (`fathom merge`).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use fathom::measure::histogram::LatencyHistogram;
use serde_json::Value;

#[test]
fn four_runs_started_together_merge_into_one_cluster_document() {
    let dir = tempdir();
    let mut children = Vec::new();
    for rank in 0..4 {
        let target = dir.path().join(format!("rank{rank}.dat"));
        let out = dir.path().join(format!("rank{rank}.json"));
        children.push(
            fathom()
                .args([
                    "run",
                    target.to_str().unwrap(),
                    "--size",
                    "4m",
                    "--runtime",
                    "500ms",
                ])
                .args([
                    "--iodepth",
                    "2",
                    "--start-at",
                    "+3s",
                    "--output-format",
                    "json",
                ])
                .args(["-o", out.to_str().unwrap()])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let files: Vec<String> = (0..4)
        .map(|r| {
            dir.path()
                .join(format!("rank{r}.json"))
                .display()
                .to_string()
        })
        .collect();
    let merged = dir.path().join("cluster.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", merged.to_str().unwrap()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();

    let c = &doc["cluster"];
    assert_eq!(c["ranks"], 4);
    assert_eq!(c["launcher"], "merge");
    let ranks = c["per_rank"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    // Started at the agreed time: the four runs began measuring together
    // (loosely: a busy 2-core machine may hold a process off the CPU).
    assert!(f(&c["start_spread_s"]) < 1.0, "{}", c["start_spread_s"]);

    // The total is the ranks' I/Os added, and its p99 that of their
    // histograms merged, not a mean of their p99s.
    let total = &doc["results"][0]["total"]["read"];
    let per_rank: Vec<&Value> = ranks
        .iter()
        .map(|r| &r["results"][0]["total"]["read"])
        .collect();
    assert_eq!(
        u(&total["ios"]),
        per_rank.iter().map(|r| u(&r["ios"])).sum::<u64>()
    );
    let mut merged_h = LatencyHistogram::new();
    for r in &per_rank {
        merged_h.add(&LatencyHistogram::decode(r["histogram"].as_str().unwrap()).unwrap());
    }
    assert_eq!(
        u(&total["lat_ns"]["p99"]),
        merged_h.value_at_percentile(99.0)
    );
    let targets: Vec<&str> = doc["results"][0]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(targets.len(), 4);
    assert!(targets[2].starts_with("rank2@"), "{targets:?}");

    // The report shows the totals and one row per rank.
    let text = String::from_utf8(run(&["report", merged.to_str().unwrap()]).stdout).unwrap();
    assert!(text.contains("4 ranks on 1 host"), "{text}");
    for rank in 0..4 {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("│ {rank} "))),
            "{text}"
        );
    }
}

#[test]
fn runs_of_different_plans_or_times_already_past_are_refused() {
    let dir = tempdir();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for (out, bs) in [(&a, "4k"), (&b, "8k")] {
        let o = run(&[
            "run",
            dir.path().to_str().unwrap(),
            "--size",
            "1m",
            "--runtime",
            "100ms",
            "--bs",
            bs,
            "--output-format",
            "json",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success());
    }
    let o = run(&["merge", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("on one rank"));

    let o = run(&[
        "run",
        dir.path().to_str().unwrap(),
        "--start-at",
        "2001-01-01T00:00:00Z",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--start-at") && err.contains("already past"),
        "{err}"
    );
}
