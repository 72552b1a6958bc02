//! `fathom capacity` on a target whose speed fathom controls: the null
//! engine with a fixed service time (`--null-latency`) and `--iodepth`
//! slots serves exactly iodepth / service time I/Os per second, and no
//! more. The search must find that rate, within its precision below it
//! (and a little above, where a rate just past the capacity has not yet
//! built a backlog longer than the objective within one step).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// One step: a warm-up and a second measured. Objective: p90 within 25 ms
/// of the due time. Just above capacity the backlog grows by (rate -
/// capacity) x 1.3 s, so anything 2% over it misses; p90 rather than p99
/// keeps a busy machine's scheduling stalls (which delay a few I/Os by tens
/// of ms) from deciding a step below capacity.
const STEP: &[&str] = &["--ramp", "300ms", "--runtime", "1s", "--slo", "p90:25ms"];

fn capacity(args: &[&str]) -> std::process::Output {
    let mut full = vec!["capacity", "--engine", "null", "--size", "1m"];
    full.extend_from_slice(STEP);
    full.extend_from_slice(args);
    run(&full)
}

fn search(dir: &Path, args: &[&str]) -> Value {
    let target = dir.join("t.dat");
    let out_file = dir.join("c.json");
    let mut full = vec![
        target.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
        "--output-format",
        "json",
    ];
    full.extend_from_slice(args);
    let out = capacity(&full);
    assert!(
        out.status.success(),
        "capacity {full:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!target.exists(), "the target fathom laid out is removed");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(doc["results"][0]["kind"], "capacity");
    doc["results"][0].clone()
}

/// Every step's outcome follows from its figures; a step that missed is
/// repeated at its rate, and the answer is the highest rate that met, below
/// the lowest whose repeat missed too.
fn check_consistent(c: &Value) {
    let limit = u(&c["search"]["slo"][0]["limit_ns"]);
    let steps = c["steps"].as_array().unwrap();
    let mut highest_met: f64 = 0.0;
    let mut lowest_missed = f64::INFINITY;
    // A search the host stopped ends on a pair of misses the host made:
    // they decide nothing about the target.
    let host_limited = c["end"] == "host_limited";
    let decided = match host_limited {
        true => {
            let [.., first, again] = steps.as_slice() else {
                panic!("a host-limited search ends on a repeated step: {c}");
            };
            assert_eq!(first["met"], false, "{first}");
            assert_eq!(again["repeat"], true);
            assert_eq!(again["missed_by_host"], true, "{again}");
            let by = again["limited_by"]["by"].as_str().unwrap();
            assert!(by == "host" || by == "fathom", "{again}");
            &steps[..steps.len() - 2]
        }
        false => steps.as_slice(),
    };
    for (i, s) in decided.iter().enumerate() {
        let repeated = steps.get(i + 1).is_some_and(|n| n["repeat"] == true);
        if s["repeat"] == true {
            assert_eq!(s["offered_iops"], steps[i - 1]["offered_iops"]);
            assert_eq!(steps[i - 1]["met"], false);
        }
        if s["met"] == false {
            assert!(repeated || s["repeat"] == true, "a miss is repeated: {s}");
        }
        let (offered, achieved) = (f(&s["offered_iops"]), f(&s["achieved_iops"]));
        let saturated = achieved < offered * 0.9;
        assert_eq!(s["saturated"].as_bool().unwrap(), saturated, "{s}");
        let within = u(&s["slo_ns"][0]) <= limit;
        assert_eq!(s["met"].as_bool().unwrap(), within && !saturated, "{s}");
        if repeated {
            continue;
        }
        if s["met"].as_bool().unwrap() {
            highest_met = highest_met.max(offered);
        } else {
            lowest_missed = lowest_missed.min(offered);
        }
    }
    if host_limited {
        assert_eq!(c["answer_iops"].as_f64().unwrap_or(0.0), highest_met);
        assert_eq!(
            c["missed_iops"].as_f64().unwrap_or(f64::INFINITY),
            lowest_missed
        );
        eprintln!("the host limited the search, and the result says so");
        return;
    }
    assert_eq!(f(&c["answer_iops"]), highest_met);
    assert_eq!(f(&c["missed_iops"]), lowest_missed);
    assert!(highest_met < lowest_missed);
    assert_eq!(c["end"], "converged");
    // Converged: within the precision.
    assert!(lowest_missed / highest_met - 1.0 <= 0.05 + 1e-9);
    assert_eq!(steps[0]["phase"], "climb");
    assert_eq!(steps.last().unwrap()["phase"], "bisect");
}

#[test]
fn the_search_finds_the_capacity_of_a_target_of_known_speed() {
    let dir = tempdir();
    // 8 slots of 2 ms: 4,000 I/Os per second; 16 slots: 8,000.
    for (depth, capacity) in [("8", 4000.0), ("16", 8000.0)] {
        let c = search(
            dir.path(),
            &[
                "--null-latency",
                "2ms",
                "--iodepth",
                depth,
                "--start",
                "500",
            ],
        );
        check_consistent(&c);
        let answer = c["answer_iops"].as_f64().unwrap_or(0.0);
        // Timer wake-ups on a busy machine cost a little of the service
        // rate; the answer can never be far above it. Below, only a search
        // that says the host stopped it may be.
        let floor = match c["end"] == "host_limited" {
            true => 0.0,
            false => capacity * 0.8,
        };
        assert!(
            answer >= floor && answer <= capacity * 1.03,
            "depth {depth}: answer {answer}, capacity {capacity}"
        );
        if answer > 0.0 {
            assert_eq!(f(&c["answer_bw_bytes"]), answer * 4096.0);
        }
        // The self-check before the first step measured what the host's
        // workers issue with no device: far more than this device does.
        assert!(
            f(&c["self_check"]["iops"]) > capacity,
            "{}",
            c["self_check"]
        );
        // Latency climbs only past the capacity: the knee is at or below it.
        if let Some(knee) = c["knee_iops"].as_f64() {
            assert!(knee <= capacity * 1.03, "knee {knee}");
        }
    }
}

#[test]
fn a_streams_workload_scales_its_rated_streams_together() {
    let dir = tempdir();
    // reads take 3/4 of the total and have 4 slots of 2 ms (2,000/s): the
    // total fits up to 2,667/s; logs (1/4) would fit 2,000/s on their own.
    let c = search(
        dir.path(),
        &[
            "--null-latency",
            "2ms",
            "--iodepth",
            "4",
            "--start",
            "400",
            "--stream",
            "reads:rw=randread,rate-iops=300",
            "--stream",
            "logs:rw=randwrite,rate-iops=100",
        ],
    );
    check_consistent(&c);
    let answer = c["answer_iops"].as_f64().unwrap_or(0.0);
    let capacity = 2000.0 / 0.75;
    let floor = match c["end"] == "host_limited" {
        true => 0.0,
        false => capacity * 0.8,
    };
    assert!(
        answer >= floor && answer <= capacity * 1.03,
        "answer {answer}, capacity {capacity}"
    );
}

/// --dry-run checks the workload and prints the search's plan, and runs and
/// writes nothing; the help of a command of one workload says nothing of
/// sweeps, which it refuses.
#[test]
fn a_dry_run_prints_the_plan_and_writes_nothing() {
    let dir = tempdir();
    let target = dir.path().join("t.dat");
    let out_file = dir.path().join("c.json");
    let out = capacity(&[
        target.to_str().unwrap(),
        "--dry-run",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.starts_with("capacity: p90 ≤ 25"), "{text}");
    assert!(entries(dir.path()).is_empty(), "nothing written");
    let help = run(&["capacity", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--rw <MODE>"), "{help}");
    assert!(!help.contains("a comma list sweeps"), "{help}");
}

#[test]
fn a_target_that_cannot_carry_the_first_step_is_refused_with_nothing_written() {
    let dir = tempdir();
    let target = dir.path().join("slow.dat");
    let out_file = dir.path().join("c.json");
    // One slot of 10 ms: 100 I/Os per second, asked for 1,000.
    let out = capacity(&[
        target.to_str().unwrap(),
        "--iodepth",
        "1",
        "--null-latency",
        "10ms",
        "--start",
        "1000",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The plan and the first step come before the error.
    let error: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.contains("capacity:") && !l.starts_with("fathom: step "))
        .collect();
    assert_eq!(error.len(), 1, "{stderr}");
    assert!(
        error[0].contains("--start") && error[0].contains("1,000"),
        "{stderr}"
    );
    assert!(!out_file.exists());
    assert!(!target.exists());
}

/// A search given no --iodepth has slots enough for its schedule: 16 I/Os
/// of 2 ms in flight at 1,000 a second need 2; one slot could carry 500.
#[test]
fn a_search_has_slots_enough_by_default() {
    let dir = tempdir();
    let target = dir.path().join("d.dat");
    let out = capacity(&[
        target.to_str().unwrap(),
        "--null-latency",
        "2ms",
        "--start",
        "1000",
        "--max-time",
        "3s",
        "--output-format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let result = &doc["results"][0];
    assert_eq!(result["spec"]["iodepth"], 64, "{result}");
    let first = &result["steps"][0];
    assert_eq!(first["met"], true, "{first}");
}

#[test]
fn bad_objectives_and_settings_get_one_line_and_exit_2() {
    let dir = tempdir();
    let target = dir.path().join("x.dat");
    let t = target.to_str().unwrap();
    for (args, says) in [
        (vec!["--slo", "p101:1ms"], "outside 0 to 100"),
        (vec!["--slo", "p99"], "not an objective"),
        (vec!["--slo", "p99:quickly"], "not a duration"),
        (vec!["--precision", "0"], "--precision"),
        (vec!["--growth", "1"], "--growth"),
        (vec!["--max-time", "5s"], "shorter than one step"),
        (vec!["--rate-iops", "100"], "--start"),
        (vec!["--bs", "4k,8k"], "one workload"),
    ] {
        let mut full = vec!["capacity", t, "--engine", "null"];
        full.extend_from_slice(&args);
        if !args.contains(&"--slo") {
            full.extend_from_slice(&["--slo", "p99:1ms"]);
        }
        let out = run(&full);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        names_the_problem(&stderr, says);
        assert!(!target.exists());
    }
}

#[test]
fn an_interrupted_search_reports_the_steps_it_finished() {
    let dir = tempdir();
    let target = dir.path().join("i.dat");
    let out_file = dir.path().join("c.json");
    let mut args = vec!["capacity", "--engine", "null", "--size", "1m"];
    args.extend_from_slice(STEP);
    args.extend_from_slice(&[
        target.to_str().unwrap(),
        "--null-latency",
        "1ms",
        "--iodepth",
        "64",
        "--start",
        "100",
        "-o",
        out_file.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    let child = fathom()
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The document is rewritten after each step: wait for two.
    wait_until("two steps are written", || {
        std::fs::read_to_string(&out_file)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|d| d["results"][0]["steps"].as_array().unwrap().len() >= 2)
    });
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let c = &doc["results"][0];
    assert_eq!(c["end"], "interrupted");
    let steps = c["steps"].as_array().unwrap();
    assert!(steps.len() >= 2);
    // Nothing missed yet (64 slots of 1 ms carry 64,000/s): every finished
    // step met, and the answer is the last of them.
    let finished: Vec<&Value> = steps.iter().filter(|s| s["interrupted"] == false).collect();
    assert!(finished.iter().all(|s| s["met"] == true));
    assert_eq!(
        f(&c["answer_iops"]),
        f(&finished.last().unwrap()["offered_iops"])
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("interrupted"), "{text}");
    assert!(!target.exists());
}

#[test]
fn capacity_results_render_in_every_format_and_compare() {
    let dir = tempdir();
    let mut a = search(
        dir.path(),
        &["--null-latency", "2ms", "--iodepth", "4", "--start", "1000"],
    );
    // A host busy enough to miss even the first step leaves no answer; this
    // test is about rendering and comparing one, so it supplies one then.
    if a["answer_iops"].is_null() {
        eprintln!("the search found no answer on this busy host; rendering a supplied one");
        a["answer_iops"] = serde_json::json!(1000.0);
    }
    let file = |name: &str, c: &Value| {
        let doc = serde_json::json!({
            "fathom_version": "test", "schema": 2, "started_at": "2026-11-23T00:00:00Z",
            "host": {"hostname": "h", "kernel": "k", "os": "o", "cpu_model": "c", "cpus": 2, "memory_bytes": 1},
            "interrupted": false, "results": [c],
        });
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let pa = file("a.json", &a);
    let mut faster = a.clone();
    faster["answer_iops"] = serde_json::json!(f(&a["answer_iops"]) * 2.0);
    let pb = file("b.json", &faster);
    let (pa, pb) = (pa.to_str().unwrap(), pb.to_str().unwrap());

    let text = String::from_utf8(run_ok(&["report", pa]).stdout).unwrap();
    assert!(text.contains("capacity of randread 4k QD4"), "{text}");
    assert!(text.contains("answer: "), "{text}");
    assert!(text.contains("p90 (≤ 25.0 ms)"), "{text}");
    let md = String::from_utf8(run_ok(&["report", "--format", "markdown", pa]).stdout).unwrap();
    assert!(md.contains("| step | phase | offered/s |"), "{md}");
    let csv = String::from_utf8(run_ok(&["report", "--format", "csv", pa]).stdout).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("system,workload,objective,step,phase,offered_iops"));
    assert_eq!(rows.len(), 1 + a["steps"].as_array().unwrap().len());
    let html = dir.path().join("r.html");
    run_ok(&[
        "report",
        "--format",
        "html",
        pa,
        "-o",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("latency from the due time against load"));
    assert!(page.contains("achieved against offered load"));
    assert_charts_drawn(&html, 2);

    let cmp = String::from_utf8(run_ok(&["compare", pa, pb]).stdout).unwrap();
    assert!(cmp.contains("answer A"), "{cmp}");
    assert!(cmp.contains("2.000"), "{cmp}");
    assert!(cmp.contains("+100.0% beyond the search precision"), "{cmp}");
}
