//! Results that cannot be true are flagged: each situation is created on
//! this machine and the warning checked, in JSON and in the text output.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;

/// Each warning as "KIND: MESSAGE".
fn warnings(doc: &Value) -> Vec<String> {
    doc["results"][0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            format!(
                "{}: {}",
                w["kind"].as_str().unwrap(),
                w["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn buffered_reads_of_a_small_file_are_flagged_as_page_cache() {
    let dir = tempdir();
    let f = dir.path().join("small");
    let doc = run_json(&[
        f.to_str().unwrap(),
        "--buffered",
        "--size",
        "4m",
        "--runtime",
        "300ms",
    ]);
    let w = warnings(&doc);
    assert!(
        w.iter()
            .any(|w| w.starts_with("page_cache_reads:") && w.contains("--direct")),
        "{w:?}"
    );
    let out = run(&[
        "run",
        f.to_str().unwrap(),
        "--buffered",
        "--size",
        "4m",
        "--runtime",
        "300ms",
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("warning:"));

    // The same reads through O_DIRECT are not suspect for that reason.
    let doc = run_json(&[f.to_str().unwrap(), "--size", "4m", "--runtime", "300ms"]);
    assert!(!warnings(&doc).iter().any(|w| w.contains("page cache")));
}

#[test]
fn reads_of_a_sparse_file_are_flagged() {
    let dir = tempdir();
    let f = dir.path().join("sparse");
    std::fs::File::create(&f).unwrap().set_len(8 << 20).unwrap();
    let doc = run_json(&[f.to_str().unwrap(), "--size", "8m", "--runtime", "300ms"]);
    let w = warnings(&doc);
    assert!(w.iter().any(|w| w.starts_with("sparse_file:")), "{w:?}");
    // A file fathom lays out holds real data: no such warning.
    let laid = dir.path().join("laid");
    let doc = run_json(&[laid.to_str().unwrap(), "--size", "8m", "--runtime", "300ms"]);
    assert!(!warnings(&doc).iter().any(|w| w.contains("sparse")));
}

#[test]
fn a_rotational_device_that_answers_like_memory_is_flagged() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    let name = dev.path.trim_start_matches("/dev/");
    let flag = format!("/sys/block/{name}/queue/rotational");
    if std::fs::write(&flag, "1").is_err() {
        eprintln!("SKIP: cannot mark {} rotational", dev.path);
        return;
    }
    // The loop driver serves reads from the backing file's page cache:
    // far faster than any rotating disk.
    let doc = run_json(&[&dev.path, "--iodepth", "16", "--runtime", "500ms"]);
    let read = &doc["results"][0]["targets"][0]["read"];
    let w = warnings(&doc);
    // The rule, both ways: warned exactly when a rotating disk could not
    // have given these figures.
    let impossible = f(&read["iops"]) > 3000.0 || u(&read["lat_ns"]["p50"]) < 500_000;
    let warned = w.iter().any(|w| w.starts_with("rotational_"));
    assert_eq!(warned, impossible, "{read} {w:?}");
    assert!(
        impossible,
        "a page-cached loop device answers like memory: {read}"
    );
}

/// A sweep that trips one check in every run says so once, with the runs
/// and the range of figures, not once per run.
#[test]
fn a_sweep_warns_once_per_kind() {
    let dir = tempdir();
    let f = dir.path().join("small");
    let out = run(&[
        "run",
        f.to_str().unwrap(),
        "--buffered",
        "--size",
        "4m",
        "--runtime",
        "100ms",
        "--iodepth",
        "1,2,4",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("warning:")).collect();
    let page_cache: Vec<&&str> = lines.iter().filter(|l| l.contains("page cache")).collect();
    assert_eq!(page_cache.len(), 1, "{text}");
    assert!(page_cache[0].contains("(3 runs: "), "{}", page_cache[0]);
    assert!(page_cache[0].contains("; target "), "{}", page_cache[0]);

    // One run of three targets is one run, and three targets.
    let targets: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|t| dir.path().join(t).display().to_string())
        .collect();
    let mut args = vec!["run"];
    args.extend(targets.iter().map(String::as_str));
    args.extend(["--buffered", "--size", "4m", "--runtime", "100ms"]);
    let out = run(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("warning:") && l.contains("page cache"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("(1 run: ") && line.contains("3 targets: "),
        "{line}"
    );
}

/// A host kept busy by other processes is named as what held the run back:
/// the workers' time waiting for a CPU, counted by the scheduler, is in the
/// result and raises a `busy_host` warning. Nothing about the device
/// changed; only the host did.
#[test]
fn a_host_busy_with_other_work_is_named_as_the_limit() {
    let dir = tempdir();
    let f = dir.path().join("busy.dat");
    // Twice as many busy threads as CPUs, in this process: a worker gets a
    // CPU a third of the time at most, whatever else the machine is doing.
    let hogs = Hogs::start(2);
    let doc = run_json(&[
        f.to_str().unwrap(),
        "--engine",
        "null",
        "--runtime",
        "1s",
        "--size",
        "1m",
    ]);
    drop(hogs);
    let share = doc["results"][0]["cpu"]["waited_for_cpu_share"]
        .as_f64()
        .expect("the kernel counts run delay");
    assert!(share >= 0.10, "waited {share} of the time");
    let w = warnings(&doc);
    assert!(w.iter().any(|w| w.starts_with("busy_host: ")), "{w:?}");
    let limit = &doc["results"][0]["limited_by"];
    assert_eq!(limit["by"], "host", "{limit}");
    assert!(
        limit["evidence"]
            .as_str()
            .unwrap()
            .contains("waited for a CPU"),
        "{limit}"
    );
}
