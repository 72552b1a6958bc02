//! `--hipri` (completions by polling), `--sqpoll` (submission by a kernel
//! thread) and `--completion-wait`: refused, in one line and before
//! anything is created, where the device, the engine or the other flags
//! cannot do them; run and recorded in the result where they can.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;

#[test]
fn hipri_on_a_device_without_poll_queues_is_refused_before_anything_is_written() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    let before = std::fs::read(&dev.path).unwrap();
    // A loop device has no poll queues.
    refused(
        &[
            "run",
            &dev.path,
            "--rw",
            "randwrite",
            "--hipri",
            "--size",
            "1m",
        ],
        "does not complete I/O by polling",
    );
    assert!(
        std::fs::read(&dev.path).unwrap() == before,
        "device written"
    );
}

#[test]
fn hipri_on_a_file_names_its_disk_and_creates_nothing() {
    let dir = tempdir();
    let file = dir.path().join("polled.dat");
    let out = run(&["run", file.to_str().unwrap(), "--hipri", "--size", "1m"]);
    if out.status.success() {
        eprintln!("SKIP: the disk under the test directory polls (queue/io_poll is 1)");
        return;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--hipri: ") && err.contains("poll"), "{err}");
    assert!(entries(dir.path()).is_empty(), "nothing created");
}

#[test]
fn ring_options_need_io_uring_direct_io_and_no_flushes() {
    let dir = tempdir();
    let f = dir.path().join("x.dat");
    let f = f.to_str().unwrap();
    for (extra, says) in [
        (
            vec!["--hipri", "--engine", "sync"],
            "needs --engine io_uring",
        ),
        (
            vec!["--sqpoll", "--engine", "null"],
            "needs --engine io_uring",
        ),
        (
            vec!["--completion-wait", "spin", "--engine", "sync"],
            "needs --engine io_uring",
        ),
        (
            vec!["--completion-wait", "poll"],
            "expected auto, sleep or spin",
        ),
        (vec!["--hipri", "--buffered"], "needs --direct"),
        (
            vec!["--hipri", "--rw", "write", "--fsync", "1"],
            "not the flushes",
        ),
    ] {
        let mut args = vec!["run", f, "--size", "1m"];
        args.extend(extra);
        refused(&args, says);
    }
    assert!(entries(dir.path()).is_empty(), "nothing created");
}

#[test]
fn sqpoll_runs_and_is_recorded() {
    let dir = tempdir();
    let f = dir.path().join("sq.dat");
    let out = run(&[
        "run",
        f.to_str().unwrap(),
        "--sqpoll",
        "--rw",
        "randrw",
        "--iodepth",
        "8",
        "--size",
        "4m",
        "--io-size",
        "2m",
        // Bound by bytes, not time: a busy machine slows the run, it does
        // not change what is counted. The runtime only stops a stalled ring.
        "--runtime",
        "60s",
        "--output-format",
        "json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && err.contains("this kernel refuses") {
        eprintln!("SKIP: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &doc["results"][0];
    assert_eq!(w["spec"]["sqpoll"], true, "{}", w["spec"]);
    assert!(w["spec"].get("hipri").is_none(), "off is not written");
    let (reads, writes) = (
        u(&w["total"]["read"]["ios"]),
        u(&w["total"]["write"]["ios"]),
    );
    assert_eq!(reads + writes, 512, "2 MiB in 4 KiB I/Os: {}", w["total"]);
    assert!(reads > 0 && writes > 0, "{}", w["total"]);
}

/// What `auto` measured and chose is recorded with its reason, what was
/// asked for wins, and the engines without a choice record none.
#[test]
fn the_completion_wait_chosen_is_recorded() {
    let dir = tempdir();
    let f = dir.path().join("wait.dat");
    let f = f.to_str().unwrap();
    let tuning = |extra: &[&str]| {
        let mut args = vec![f, "--size", "1m"];
        if !extra.contains(&"--runtime") {
            args.extend(["--runtime", "0.2s"]);
        }
        args.extend(extra);
        run_json(&args)["results"][0]["engine_tuning"].clone()
    };
    let cpus = std::thread::available_parallelism().unwrap().get();
    // Long enough for the worker to measure both waits (300 ms).
    let auto = tuning(&["--runtime", "0.6s"]);
    assert_eq!(auto["completion_wait"], "auto", "{auto}");
    let choice = &auto["choices"][0];
    assert!(
        ["spin", "sleep"].contains(&choice["chose"].as_str().unwrap()),
        "{auto}"
    );
    for figure in ["spin_per_s", "sleep_per_s", "spin_cpu_ns", "sleep_cpu_ns"] {
        assert!(choice[figure].as_f64().unwrap() > 0.0, "{figure}: {auto}");
    }
    assert!(
        auto["why"]
            .as_str()
            .unwrap()
            .contains(&format!("1 worker on {cpus} CPUs")),
        "{auto}"
    );
    assert_eq!(auto["spin_limit_us"], 50, "{auto}");
    let crowded = tuning(&["--numjobs", &(cpus + 1).to_string()]);
    assert_eq!(crowded["completion_wait"], "sleep", "{crowded}");
    assert!(crowded.get("spin_limit_us").is_none(), "{crowded}");
    let asked = tuning(&["--completion-wait", "sleep"]);
    assert_eq!(asked["completion_wait"], "sleep", "{asked}");
    assert!(tuning(&["--engine", "sync"]).is_null());
}
