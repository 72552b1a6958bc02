//! `fathom pts` on loop devices (skipped, saying why, where the machine
//! has none): each test end to end with rounds of a second and a part of
//! its matrix, the report's convergence chart drawn, and what must be
//! refused refused before anything is written.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Runs `fathom pts ARGS --output-format json -o FILE`, asserting success;
/// the document and the html report of it.
fn pts(dir: &Path, args: &[&str]) -> Value {
    let json = dir.join("pts.json");
    let mut full = vec!["pts"];
    full.extend_from_slice(args);
    // Each test's device is a blank loop device: one to destroy.
    full.extend_from_slice(&["--i-know-this-destroys-data"]);
    full.extend_from_slice(&["--output-format", "json", "-o", json.to_str().unwrap()]);
    succeeded(&run(&full));
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn html_of(dir: &Path) -> (std::path::PathBuf, String) {
    let html = dir.join("pts.html");
    let out = run(&[
        "report",
        dir.join("pts.json").to_str().unwrap(),
        "--output-format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    succeeded(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    (html, page)
}

/// The rounds ran until the rule held, or all of them did.
fn judged(p: &Value) {
    let rounds = p["rounds"].as_array().unwrap();
    match p["end"].as_str().unwrap() {
        "steady_state" => {
            let w = &p["window"];
            assert_eq!(w["holds"], true, "{w}");
            assert_eq!(u(&w["last_round"]), rounds.len() as u64);
            assert!(f(&w["range"]) <= f(&w["range_limit"]) * 1.000001);
            assert!(f(&w["excursion"]) <= f(&w["excursion_limit"]) * 1.000001);
        }
        "max_rounds" => assert_eq!(rounds.len() as u64, u(&p["spec"]["max_rounds"])),
        other => panic!("ended {other}"),
    }
    // Every round before the last five did not hold.
    assert!(rounds.len() >= 5);
}

#[test]
fn iops_purges_preconditions_and_runs_rounds_until_steady() {
    let Some(dev) = LoopDevice::new(32 << 20, 4096) else {
        return;
    };
    let dir = tempdir();
    let doc = pts(
        dir.path(),
        &[
            "iops",
            &dev.path,
            "--round",
            "1s",
            "--block-sizes",
            "4k,64k",
            "--mixes",
            "100,0",
            "--max-rounds",
            "6",
        ],
    );
    let p = &doc["results"][0];
    assert_eq!(p["kind"], "pts");
    assert_eq!(u(&p["active_range_bytes"]), 32 << 20);
    assert!(p["purge_s"].is_number(), "purged by discard");
    assert_eq!(
        u(&p["precondition_bytes"]),
        64 << 20,
        "twice the active range"
    );
    assert_eq!(p["tracking"], "4k 0/100 IOPS");
    judged(p);
    let first = &p["rounds"][0]["cells"];
    assert_eq!(first.as_array().unwrap().len(), 4);
    assert!(
        first
            .as_array()
            .unwrap()
            .iter()
            .all(|c| f(&c["iops"]) > 0.0)
    );
    let departures = p["departures"].as_array().unwrap();
    assert!(
        !departures.is_empty(),
        "a part of the matrix is not compliant"
    );
    let (html, page) = html_of(dir.path());
    assert!(page.contains("convergence, round by round"));
    assert!(page.contains("steady-state IOPS by block size"));
    assert!(page.contains("measurement window"));
    assert_charts_drawn(&html, 2);
    // The text report has the specification's tables.
    let out = run(&["report", dir.path().join("pts.json").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    for table in [
        "test set-up",
        "rounds: 4k 0/100 IOPS each",
        "steady state: the window's average, IOPS",
    ] {
        assert!(text.contains(table), "{table}: {text}");
    }
}

#[test]
fn throughput_latency_and_write_saturation_run_end_to_end() {
    let Some(dev) = LoopDevice::new(16 << 20, 4096) else {
        return;
    };
    let dir = tempdir();
    let doc = pts(
        dir.path(),
        &[
            "throughput",
            &dev.path,
            "--round",
            "1s",
            "--block-sizes",
            "1m",
            "--max-rounds",
            "5",
        ],
    );
    let p = &doc["results"][0];
    assert_eq!(p["tracking"], "1m seq write bandwidth");
    let cells = p["rounds"][0]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "1m sequential writes and reads");
    assert!(
        cells
            .iter()
            .all(|c| c["sequential"] == true && f(&c["bw_bytes"]) > 0.0)
    );
    judged(p);

    let doc = pts(
        dir.path(),
        &[
            "latency",
            &dev.path,
            "--round",
            "1s",
            "--block-sizes",
            "4k",
            "--mixes",
            "0",
            "--max-rounds",
            "5",
        ],
    );
    let p = &doc["results"][0];
    assert_eq!(p["tracking"], "4k 0/100 mean latency");
    let cell = &p["rounds"][0]["cells"][0];
    assert!(f(&cell["mean_ns"]) > 0.0);
    assert!(u(&cell["p99_999_ns"]) <= u(&cell["max_ns"]));
    judged(p);
    let out = run(&["report", dir.path().join("pts.json").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("five nines"));

    let doc = pts(
        dir.path(),
        &[
            "write-saturation",
            &dev.path,
            "--round",
            "1s",
            "--purge",
            "none",
        ],
    );
    let p = &doc["results"][0];
    assert!(p["purge_s"].is_null());
    let written: u64 = p["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["cells"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| u(&c["written_bytes"]))
        })
        .sum();
    match p["end"].as_str().unwrap() {
        "written" => assert!(written >= 4 * (16 << 20), "{written}"),
        other => panic!("ended {other}"),
    }
    assert!(
        p["departures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == "no purge before the test"),
        "{}",
        p["departures"]
    );
}

#[test]
fn what_cannot_be_tested_is_refused_before_anything_is_written() {
    let Some(dev) = LoopDevice::new(8 << 20, 4096) else {
        return;
    };
    // A mark at the start of the device that nothing may touch.
    let mark = vec![0x5au8; 4096];
    std::fs::write(&dev.path, &mark).unwrap();
    let dir = tempdir();
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    for (args, needle) in [
        (vec!["iops", &dev.path, "--round", "500ms"], "--round"),
        (vec!["iops", &dev.path, "--active-range", "1"], "too small"),
        (vec!["iops", &dev.path, "--purge", "sanitize"], "--purge"),
        (vec!["iops", file.to_str().unwrap()], "not a block device"),
        (vec!["iops", &dev.path, "--max-rounds", "3"], "--max-rounds"),
        (vec!["fastest", &dev.path], "unknown test"),
    ] {
        let mut full = vec!["pts"];
        full.extend_from_slice(&args);
        refused(&full, needle);
    }
    let head = std::fs::read(&dev.path).unwrap();
    assert_eq!(&head[..4096], &mark[..], "the device was not written");
    // A device with a file system is refused, named, without the flag.
    let mkfs = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev.path])
        .status();
    if !mkfs.is_ok_and(|s| s.success()) {
        eprintln!("SKIP: mkfs.ext4 unavailable");
        return;
    }
    let args = [
        "pts",
        "iops",
        &dev.path,
        "--round",
        "1s",
        "--block-sizes",
        "4k",
    ];
    refused(&args, &dev.path);
    refused(&args, "ext2/ext3/ext4");
}

#[test]
fn an_interrupted_test_is_resumed_after_its_last_round() {
    let Some(dev) = LoopDevice::new(8 << 20, 4096) else {
        return;
    };
    let dir = tempdir();
    let json = dir.path().join("pts.json");
    let args = [
        "pts",
        "latency",
        dev.path.as_str(),
        "--i-know-this-destroys-data",
        "--round",
        "1s",
        "--block-sizes",
        "4k",
        "--mixes",
        "0",
        "--max-rounds",
        "6",
        "--output-format",
        "json",
        "-o",
        json.to_str().unwrap(),
    ];
    let rounds_in = |path: &Path| -> usize {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|d| d["results"][0]["rounds"].as_array().map(Vec::len))
            .unwrap_or(0)
    };
    let child = spawn_quiet(&args);
    wait_until("two rounds written", || rounds_in(&json) >= 2);
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(130));
    let before: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let before = &before["results"][0];
    assert_eq!(before["interrupted"], true);
    let done = before["rounds"].as_array().unwrap().len();
    assert!(done >= 2);
    let mut resume = args.to_vec();
    resume.push("--resume");
    let out = run(&resume);
    succeeded(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("going on from round {}", done + 1))
    );
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let after = &after["results"][0];
    assert_eq!(after["interrupted"], false);
    assert_eq!(after["purge_s"], before["purge_s"], "not purged again");
    let rounds = after["rounds"].as_array().unwrap();
    assert!(rounds.len() >= 5);
    assert_eq!(rounds[..done], before["rounds"].as_array().unwrap()[..done]);
    let numbers: Vec<u64> = rounds.iter().map(|r| u(&r["round"])).collect();
    assert_eq!(numbers, (1..=rounds.len() as u64).collect::<Vec<_>>());
    // Finished: nothing more to resume.
    refused(&resume, "ran to its end");
}

/// --dry-run prints the plan and how long it can take, and touches nothing;
/// the same bound is said when the test starts.
#[test]
fn dry_run_gives_the_plan_and_its_bound_and_writes_nothing() {
    let Some(dev) = LoopDevice::new(8 << 20, 4096) else {
        return;
    };
    std::fs::write(dev.image(), vec![0xabu8; 8 << 20]).unwrap();
    let out = run(&[
        "pts",
        "iops",
        &dev.path,
        "--i-know-this-destroys-data",
        "--round",
        "2s",
        "--block-sizes",
        "4k",
        "--mixes",
        "100,0",
        "--max-rounds",
        "5",
        "--dry-run",
    ]);
    succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    // 2 cells x 2 s x 5 rounds.
    assert!(text.contains("at most 20s (5 rounds)"), "{text}");
    assert!(text.contains("16 MiB written"), "{text}");
    let image = std::fs::read(dev.image()).unwrap();
    assert!(
        image.iter().all(|b| *b == 0xab),
        "nothing purged or written"
    );
}
