//! `fathom check NEW --against BASELINE`: verdicts that know the noise, on
//! real runs of the null engine (whose device time is set exactly).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;

fn null_run(dir: &std::path::Path, name: &str, latency: &str, rw: &str) -> String {
    null_run_for(dir, name, latency, rw, "3s")
}

fn null_run_for(
    dir: &std::path::Path,
    name: &str,
    latency: &str,
    rw: &str,
    runtime: &str,
) -> String {
    null_run_with(
        dir,
        name,
        &[
            "--null-latency",
            latency,
            "--rw",
            rw,
            "--rate-iops",
            "2000",
            "--runtime",
            runtime,
        ],
    )
}

/// A run of the null engine with `args`, its result in `dir/name`.
fn null_run_with(dir: &std::path::Path, name: &str, args: &[&str]) -> String {
    let out = dir.join(name);
    let mut full = vec!["run", "--engine", "null"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-o", out.to_str().unwrap()]);
    run_ok(&full);
    out.to_str().unwrap().to_string()
}

#[test]
fn the_same_workload_is_within_noise_and_a_slower_device_regressed() {
    let dir = tempdir();
    let a = null_run(dir.path(), "a.json", "100us", "randread");
    let b = null_run(dir.path(), "b.json", "100us", "randread");
    // Three times the service time: a busy host adds tens of microseconds
    // to a median, not hundreds, so the verdict cannot flip on it.
    let slow = null_run(dir.path(), "slow.json", "300us", "randread");

    // At a fixed rate the I/Os a second are the same, whatever the host;
    // the tails of two real runs are the host's, so only these are held.
    let same = run(&["check", &b, "--against", &a]);
    let text = String::from_utf8_lossy(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{text}");
    for figure in ["IOPS", "bandwidth"] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(figure))
            .unwrap();
        assert!(line.contains("within noise"), "{text}");
    }

    // A run against a copy of itself: every interval holds zero, so even
    // a gate of 0% passes.
    let copy = dir.path().join("copy.json");
    std::fs::copy(&a, &copy).unwrap();
    let itself = run(&[
        "check",
        &a,
        "--against",
        copy.to_str().unwrap(),
        "--fail-on-regression",
        "0%",
    ]);
    let text = String::from_utf8_lossy(&itself.stdout);
    assert_eq!(itself.status.code(), Some(0), "{text}");
    assert!(!text.contains("regressed"), "{text}");

    // 200 µs more on every I/O: the median's whole interval is past 10%.
    let worse = run(&[
        "check",
        &slow,
        "--against",
        &a,
        "--against",
        &b,
        "--fail-on-regression",
        "10%",
        "--output-format",
        "json",
    ]);
    let text = String::from_utf8_lossy(&worse.stdout);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let changes = v["directions"][0]["changes"].as_array().unwrap();
    let p50 = changes.iter().find(|c| c["figure"] == "p50").unwrap();
    // Never passed: regressed (exit 1), or, where a busy host limited a
    // side, inconclusive and the gate cannot judge (exit 3), saying why.
    match worse.status.code() {
        Some(1) => assert_eq!(p50["verdict"], "regressed", "{p50}"),
        Some(3) => {
            assert_eq!(p50["verdict"], "inconclusive", "{p50}");
            assert!(text.contains("the change may be the host's"), "{text}");
        }
        other => panic!("exit {other:?}: {text}"),
    }
    assert!(p50["low"].as_f64().unwrap() > 0.1, "{p50}");
    assert!(p50["low"].as_f64().unwrap() <= p50["change"].as_f64().unwrap());
    assert!(p50["change"].as_f64().unwrap() <= p50["high"].as_f64().unwrap());
    assert_eq!(
        v["directions"][0]["seconds"][0], 6,
        "two baseline runs of 3 s"
    );

    // Three times the latency is 200% worse: a gate of 1000% is not
    // passed by any figure, whatever their verdicts, so it passes.
    let lenient = run(&[
        "check",
        &slow,
        "--against",
        &a,
        "--against",
        &b,
        "--fail-on-regression",
        "1000%",
    ]);
    let text = String::from_utf8_lossy(&lenient.stdout);
    assert_eq!(lenient.status.code(), Some(0), "{text}");
}

/// IOPS, where more is better: a device three times slower at depth 1
/// with no rate set does a third of the I/Os, and the gate marks the IOPS
/// line past it (not only the latencies, whose side is the other one).
#[test]
fn fewer_iops_are_a_regression_past_the_gate() {
    let dir = tempdir();
    let unthrottled = |name: &str, latency: &str| {
        null_run_with(
            dir.path(),
            name,
            &[
                "--null-latency",
                latency,
                "--iodepth",
                "1",
                "--runtime",
                "3s",
            ],
        )
    };
    let a = unthrottled("a.json", "1ms");
    let slow = unthrottled("slow.json", "3ms");
    let o = run(&[
        "check",
        &slow,
        "--against",
        &a,
        "--fail-on-regression",
        "10%",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let iops = text
        .lines()
        .find(|l| l.trim_start().starts_with("IOPS"))
        .unwrap_or_else(|| panic!("no IOPS line: {text}"));
    match o.status.code() {
        Some(1) => assert!(iops.ends_with("regressed, past 10%"), "{text}"),
        // A side the host limited: inconclusive, never passed.
        Some(3) => assert!(!iops.contains("regressed"), "{text}"),
        other => panic!("exit {other:?}: {text}"),
    }
}

#[test]
fn results_of_different_workloads_are_not_compared() {
    let dir = tempdir();
    let a = null_run(dir.path(), "a.json", "100us", "randread");
    let w = null_run(dir.path(), "w.json", "100us", "randwrite");
    let o = run(&["check", &w, "--against", &a]);
    assert_eq!(o.status.code(), Some(2));
    names_the_problem(
        &String::from_utf8_lossy(&o.stderr),
        "not the baseline's workload",
    );
    let o = run(&["check", &w, "--against", "/nonexistent.json"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["check", &w, "--against", &a, "--fail-on-regression", "lots"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_gate_that_cannot_judge_says_so_and_exits_3() {
    let dir = tempdir();
    let short =
        |name: &str, latency: &str| null_run_for(dir.path(), name, latency, "randread", "1s");
    // Runs of a second: nothing to resample, so a run twice as slow
    // must not pass with nothing changed.
    let a = short("a.json", "100us");
    let slow = short("slow.json", "200us");
    let o = run(&[
        "check",
        &slow,
        "--against",
        &a,
        "--fail-on-regression",
        "5%",
    ]);
    // Its own exit code, not bad input's: a gate may choose to pass it.
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "cannot judge");
}

/// A change past the gate on a run that the host or fathom limited is not
/// the target's: the verdict is "inconclusive" and the gate cannot judge
/// (exit 3), never "regressed".
#[test]
fn a_change_on_a_run_not_the_target_limited_is_inconclusive() {
    let dir = tempdir();
    let run_to = |name: &str, more: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec!["run", "--engine", "null", "--runtime", "3s", "-o"];
        args.push(out.to_str().unwrap());
        args.extend_from_slice(more);
        run_ok(&args);
        out.to_str().unwrap().to_string()
    };
    // The null engine with no latency: fathom's own speed is the figure.
    let fathoms = run_to("fathom.json", &[]);
    let device = run_to("device.json", &["--null-latency", "200us"]);
    let o = run(&[
        "check",
        &device,
        "--against",
        &fathoms,
        "--fail-on-regression",
        "5%",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{text}");
    assert!(
        text.contains("inconclusive") && !text.contains("regressed"),
        "{text}"
    );
    names_the_problem(&String::from_utf8_lossy(&o.stderr), "cannot judge");
}

/// Runs of one workload on targets of different kinds (tmpfs against a
/// disk's file system) are compared as asked, never without saying so.
#[test]
fn a_check_across_kinds_of_target_says_they_differ() {
    let dir = tempdir();
    let shm = tempdir_in_shm();
    let run_on = |target: &std::path::Path, out: &str| {
        let out = dir.path().join(out);
        run_ok(&[
            "run",
            target.to_str().unwrap(),
            "--size",
            "4m",
            "--runtime",
            "2s",
            "-o",
            out.to_str().unwrap(),
        ]);
        out.to_str().unwrap().to_string()
    };
    let disk = run_on(&dir.path().join("d.dat"), "disk.json");
    let memory = run_on(&shm.path().join("m.dat"), "shm.json");
    let o = run(&["check", &memory, "--against", &disk]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("the targets differ") && text.contains("tmpfs"),
        "{text}"
    );
}

/// `fathom compare` and `fathom check` judge a pair by one analysis: each
/// change compare shows is check's figure, interval and verdict.
#[test]
fn compare_and_check_give_the_same_verdict_on_the_same_pair() {
    let dir = tempdir();
    let a = null_run(dir.path(), "a.json", "100us", "randread");
    let slow = null_run(dir.path(), "slow.json", "300us", "randread");
    let csv = String::from_utf8(run_ok(&["compare", &a, &slow, "--output-format", "csv"]).stdout)
        .unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row = lines.next().unwrap();
    // Cells are quoted where they hold a comma ("+1.0% [...], improved").
    let mut cells: Vec<String> = Vec::new();
    let mut rest = row;
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').unwrap();
            cells.push(quoted[..end].to_string());
            rest = quoted[end + 1..].trim_start_matches(',');
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            cells.push(rest[..end].to_string());
            rest = rest.get(end + 1..).unwrap_or("");
        }
    }
    let cell = |name: &str| cells[header.iter().position(|h| *h == name).unwrap()].clone();
    let checked = run(&["check", &slow, "--against", &a]);
    let text = String::from_utf8_lossy(&checked.stdout);
    for (figure, column) in [("IOPS", "IOPS change"), ("p99", "p99 change")] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{figure} ")))
            .unwrap();
        let said = cell(column);
        let (change, verdict) = said.split_once(", ").unwrap();
        assert!(
            line.contains(change) && line.trim_end().ends_with(verdict),
            "compare: {said}\ncheck: {text}"
        );
    }
    assert!(cell("p99 change").contains('['), "{csv}");
}

/// compare's text table: figures right-aligned, words (the target, the
/// direction, a verdict) left-aligned as they read.
#[test]
fn compare_aligns_figures_right_and_words_left() {
    let dir = tempdir();
    let a = null_run_for(dir.path(), "a.json", "100us", "randread", "1s");
    let b = null_run_for(dir.path(), "b.json", "100us", "randread", "1s");
    let out = run_ok(&["compare", &a, &b]);
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.contains("randread"))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.trim_matches('│').split('┆').collect();
    // The target's cell (narrower than its header): its word first; IOPS
    // A's (five characters under six): its figure last.
    assert!(cells[1].starts_with(" . "), "{row}");
    let iops = cells[3];
    assert!(
        iops.starts_with("  ") && iops.trim().chars().all(|c| c.is_ascii_digit() || c == ','),
        "{row}"
    );
    // Markdown says the same in its rule line: words left, figures right.
    let out = run_ok(&["compare", &a, &b, "--output-format", "markdown"]);
    let md = String::from_utf8_lossy(&out.stdout);
    let rule = md
        .lines()
        .find(|l| l.starts_with('|') && l.contains("---"))
        .unwrap_or_else(|| panic!("{md}"));
    let marks: Vec<&str> = rule.trim_matches('|').split('|').map(str::trim).collect();
    assert!(!marks[1].ends_with(':'), "{rule}");
    assert!(
        marks[3].ends_with(':') && !marks[3].starts_with(':'),
        "{rule}"
    );
}

/// A comparison names what differs besides the target: the host's kernel
/// (here edited into B's document) and a workload's engine settings.
#[test]
fn compare_names_the_settings_that_differ() {
    let dir = tempdir();
    let a = null_run_for(dir.path(), "a.json", "100us", "randread", "1s");
    let b = null_run_with(
        dir.path(),
        "b.json",
        &[
            "--null-latency",
            "100us",
            "--rw",
            "randread",
            "--rate-iops",
            "2000",
            "--runtime",
            "1s",
            "--completion-wait",
            "sleep",
        ],
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    doc["host"]["kernel"] = "9.9.9-elsewhere".into();
    std::fs::write(&b, doc.to_string()).unwrap();
    let out = run_ok(&["compare", &a, &b]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("vs 9.9.9-elsewhere"), "{text}");
    assert!(text.contains("completion wait auto vs sleep"), "{text}");
}

/// Runs `fathom KIND DIR ARGS`, its result in `out` (a training run
/// under its AU threshold exits 1 with its result written).
fn kind_run(kind: &str, target: &std::path::Path, out: &std::path::Path, args: &[&str]) -> String {
    let mut full = vec![kind, target.to_str().unwrap()];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = run(&full);
    assert!(
        matches!(o.status.code(), Some(0 | 1)) && out.exists(),
        "{full:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out.to_str().unwrap().to_string()
}

/// `check`'s verdict on NEW against BASELINE as JSON, with its exit code.
fn check_json(new: &str, baseline: &str, extra: &[&str]) -> (Option<i32>, serde_json::Value) {
    let mut args = vec![
        "check",
        new,
        "--against",
        baseline,
        "--output-format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), v)
}

/// Every part of `v` has an interval around its change for each figure.
fn every_part_judged(v: &serde_json::Value, rate: &str, parts: &[&str]) {
    let directions = v["directions"].as_array().unwrap();
    for part in parts {
        let d = directions
            .iter()
            .find(|d| d["direction"] == *part)
            .unwrap_or_else(|| panic!("no part {part}: {v}"));
        assert_eq!(d["rate"], rate, "{d}");
        let changes = d["changes"].as_array().unwrap();
        for figure in ["iops", "p50", "p99"] {
            let c = changes
                .iter()
                .find(|c| c["figure"] == figure)
                .unwrap_or_else(|| panic!("{part}: no {figure}: {d}"));
            assert!(
                c["low"].as_f64().unwrap() <= c["change"].as_f64().unwrap()
                    && c["change"].as_f64().unwrap() <= c["high"].as_f64().unwrap(),
                "{c}"
            );
        }
    }
}

/// Tree and metadata runs are judged phase by phase with intervals, as a
/// disk run's directions are: their phases' operations are kept in
/// slices short enough that a phase of milliseconds has several.
#[test]
fn tree_and_metadata_runs_are_checked_phase_by_phase() {
    let dir = tempdir();
    let target = tempdir();
    let tree = ["--depth", "1", "--width", "2", "--files", "300"];
    let a = kind_run("tree", target.path(), &dir.path().join("ta.json"), &tree);
    let b = kind_run("tree", target.path(), &dir.path().join("tb.json"), &tree);
    let (code, v) = check_json(&b, &a, &[]);
    assert_eq!(code, Some(0), "{v}");
    every_part_judged(&v, "operations", &["create", "stat", "read", "delete"]);

    let meta = ["-n", "1"];
    let a = kind_run("meta", target.path(), &dir.path().join("ma.json"), &meta);
    let b = kind_run("meta", target.path(), &dir.path().join("mb.json"), &meta);
    let (code, v) = check_json(&b, &a, &[]);
    assert_eq!(code, Some(0), "{v}");
    every_part_judged(
        &v,
        "operations",
        &["create seq", "stat seq", "delete random"],
    );
    // The text names the slices and the rate in the kind's own words.
    let text = run(&["check", &b, "--against", &a]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("slices of"), "{text}");
    assert!(text.contains("ops/s"), "{text}");

    // A tree and a metadata run are not the same workload.
    let tree_a = dir.path().join("ta.json");
    let out = run(&["check", &b, "--against", tree_a.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(
        &String::from_utf8_lossy(&out.stderr),
        "no result of its kind",
    );
}

/// A training run is judged on its samples a second, their reads' tails,
/// its batches' waits and its AU: at half the read rate every one of them
/// is past the gate. The runs last 4 s and 9 s: seconds enough to
/// resample on a busy host (runs of 2 s and 4 s left AU's interval too
/// wide to clear the noise on CI beside the NVMe guest).
#[test]
fn a_training_run_at_half_the_read_rate_regressed_in_au_and_samples() {
    let dir = tempdir();
    let data = tempdir_in_shm();
    let run_at = |name: &str, rate: &str| {
        let out = dir.path().join(name);
        kind_run(
            "train",
            data.path(),
            &out,
            &[
                "--workload",
                "unet3d",
                "--files",
                "280",
                "--sample-size",
                "16k",
                "--epochs",
                "1",
                "--compute-time",
                "50ms",
                "--read-threads",
                "1",
                "--prefetch",
                "2",
                "--keep",
                "--read-rate",
                rate,
            ],
        )
    };
    let a = run_at("a.json", "1m");
    let half = run_at("half.json", "512k");
    let (code, v) = check_json(&half, &a, &["--fail-on-regression", "10%"]);
    assert_eq!(code, Some(1), "{v}");
    every_part_judged(&v, "samples", &["samples"]);
    let samples = v["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["direction"] == "samples")
        .unwrap();
    for figure in ["iops", "au"] {
        let c = samples["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["figure"] == figure)
            .unwrap_or_else(|| panic!("no {figure}: {samples}"));
        assert_eq!(c["verdict"], "regressed", "{c}");
        assert!(c["high"].as_f64().unwrap() < -0.1, "{c}");
    }
    // compare draws the same judgement beside its ratios.
    let out = run_ok(&["compare", &a, &half]);
    let text = String::from_utf8_lossy(&out.stdout);
    let au = text.lines().find(|l| l.contains("AU")).unwrap();
    assert!(au.contains("regressed"), "{text}");
}
