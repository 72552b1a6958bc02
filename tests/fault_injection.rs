//! Faults made on purpose, through a FUSE file system of the tests' own
//! (tests/common/faultfs.rs): EIO on chosen reads, writes and flushes,
//! short transfers, and a stalled I/O, through both engines. Skipped, saying
//! why, where FUSE cannot be mounted.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]
// A plan lists byte ranges; one range in a list is what is meant.
#![allow(clippy::single_range_in_vec_init)]

use crate::common;
use crate::faultfs;

use common::*;
use faultfs::{Plan, skip_or_mount};
use serde_json::Value;
use std::time::Duration;

const MIB: usize = 1 << 20;

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)))
}

fn target(doc: &Value) -> &Value {
    &doc["results"][0]["targets"][0]
}

/// One sequential pass of 4k I/Os over the 1 MiB file `path`.
fn pass(path: &str, rw: &str, engine: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        path,
        "--rw",
        rw,
        "--bs",
        "4k",
        "--engine",
        engine,
        "--overwrite",
        "--output-format",
        "json",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn eio_on_reads_and_writes_is_counted_per_target_and_direction() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("data");
    std::fs::write(&file, vec![7u8; MIB]).unwrap();
    let f = file.to_str().unwrap();
    // One block of reads and one of writes fail.
    fs.control.set(Plan {
        armed: true,
        fail_reads: vec![256 << 10..(256 << 10) + 4096],
        fail_writes: vec![512 << 10..(512 << 10) + 4096],
        ..Plan::default()
    });
    for engine in ["io_uring", "sync"] {
        for (rw, direction, at) in [("read", "read", 64), ("write", "write", 128)] {
            // The first error ends the target.
            let out = pass(f, rw, engine, &[]);
            assert_eq!(out.status.code(), Some(1), "{engine} {rw}");
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("EIO")
                    || String::from_utf8_lossy(&out.stderr).contains("Input/output"),
                "{engine} {rw}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let doc = json_of(&out);
            let t = target(&doc);
            assert_eq!(u(&t["errors"]["eio"]), 1, "{engine} {rw}: {t}");
            assert_eq!(u(&t["errors"][direction]), 1, "{engine} {rw}: {t}");
            assert!(t["ended_early"].is_string(), "{t}");
            assert!(
                u(&t[direction]["ios"]) <= at,
                "{engine} {rw}: stopped at the error"
            );

            // Told to go on: every other block is done, the bad one counted,
            // also in the second it failed in, for those watching.
            let watched = tempdir();
            let lines = watched.path().join("live.jsonl");
            let out = pass(
                f,
                rw,
                engine,
                &["--continue-on-error", "--live", lines.to_str().unwrap()],
            );
            let text = std::fs::read_to_string(&lines).unwrap();
            let errors: u64 = text
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .map(|l| u(&l["directions"][direction]["errors"]))
                .sum();
            assert_eq!(errors, 1, "{engine} {rw}: {text}");
            assert_eq!(out.status.code(), Some(0), "{engine} {rw}");
            let doc = json_of(&out);
            let t = target(&doc);
            assert_eq!(u(&t["errors"]["count"]), 1, "{engine} {rw}: {t}");
            assert_eq!(u(&t["errors"]["eio"]), 1);
            assert_eq!(u(&t["errors"][direction]), 1);
            assert_eq!(u(&t[direction]["ios"]), 255, "{engine} {rw}: {t}");
            assert!(t["ended_early"].is_null());
        }
    }
    // The file is the test's: fathom leaves it.
    assert!(file.exists());
}

#[test]
fn a_failed_flush_is_an_eio_of_the_flushes() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("flushed");
    std::fs::write(&file, vec![0u8; MIB]).unwrap();
    fs.control.set(Plan {
        armed: true,
        fail_fsync: true,
        ..Plan::default()
    });
    for engine in ["io_uring", "sync"] {
        let out = pass(file.to_str().unwrap(), "write", engine, &["--fsync", "8"]);
        assert_eq!(out.status.code(), Some(1), "{engine}");
        let doc = json_of(&out);
        let t = target(&doc);
        assert_eq!(u(&t["errors"]["eio"]), 1, "{engine}: {t}");
        assert_eq!(u(&t["errors"]["flush"]), 1, "{engine}: {t}");
        assert_eq!(u(&t["errors"]["write"]), 0, "{engine}: {t}");
        assert!(t["ended_early"].as_str().unwrap().contains("fsync"), "{t}");
    }
}

#[test]
fn short_transfers_are_counted_as_short() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("short");
    std::fs::write(&file, vec![1u8; MIB]).unwrap();
    fs.control.set(Plan {
        armed: true,
        short: vec![0..4096],
        ..Plan::default()
    });
    for engine in ["io_uring", "sync"] {
        let out = pass(
            file.to_str().unwrap(),
            "read",
            engine,
            &["--continue-on-error"],
        );
        assert_eq!(out.status.code(), Some(0), "{engine}");
        let doc = json_of(&out);
        let t = target(&doc);
        assert_eq!(u(&t["errors"]["short"]), 1, "{engine}: {t}");
        assert_eq!(u(&t["errors"]["eio"]), 0);
        assert_eq!(u(&t["read"]["ios"]), 255);
    }
}

#[test]
fn a_stalled_io_shows_in_latency_and_verify_still_judges() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("stall");
    std::fs::write(&file, vec![1u8; MIB]).unwrap();
    let stall = Duration::from_millis(400);
    for engine in ["io_uring", "sync"] {
        // Reads at a fixed rate: the stalled one is late, and so are the
        // ones due behind it.
        fs.control.set(Plan {
            armed: true,
            stall: Some((0..MIB as u64, stall)),
            stall_after: 20,
            ..Plan::default()
        });
        let doc = run_json(&[
            file.to_str().unwrap(),
            "--rw",
            "randread",
            "--engine",
            engine,
            "--rate-iops",
            "200",
            "--runtime",
            "1s",
        ]);
        assert_eq!(fs.control.seen().stalled, 1);
        let read = &target(&doc)["read"];
        let stalled_ns = stall.as_nanos() as u64;
        assert!(u(&read["lat_ns"]["max"]) >= stalled_ns, "{engine}: {read}");
        assert!(
            u(&read["sched_lat_ns"]["max"]) >= stalled_ns,
            "{engine}: {}",
            read["sched_lat_ns"]
        );
        // The median I/O was not stalled.
        assert!(u(&read["lat_ns"]["p50"]) < stalled_ns / 4);

        // Writes with read-back: the stall delays, it does not corrupt.
        fs.control.set(Plan {
            armed: true,
            stall: Some((0..MIB as u64, stall)),
            stall_after: 20,
            ..Plan::default()
        });
        let out = pass(file.to_str().unwrap(), "write", engine, &["--verify"]);
        assert!(
            out.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc = json_of(&out);
        let t = target(&doc);
        assert_eq!(u(&t["verify"]["intact"]), 256, "{engine}: {}", t["verify"]);
        assert_eq!(u(&t["verify"]["checked"]), 256);
        assert!(u(&t["write"]["lat_ns"]["max"]) >= stalled_ns);
    }
}

#[test]
fn ctrl_c_during_a_stall_drains_and_reports() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("stuck");
    std::fs::write(&file, vec![1u8; MIB]).unwrap();
    // The stall comes after the first whole second of reads.
    fs.control.set(Plan {
        armed: true,
        stall: Some((0..MIB as u64, Duration::from_secs(2))),
        stall_after: 60,
        ..Plan::default()
    });
    let child = fathom()
        .args([
            "run",
            file.to_str().unwrap(),
            "--runtime",
            "60s",
            "--iodepth",
            "4",
            "--rate-iops",
            "40",
            "--output-format",
            "json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("an I/O is stalled", || fs.control.seen().stalled == 1);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    // The process ends when the kernel lets go of the stalled request (a
    // FUSE request its server has taken cannot be interrupted), and no
    // later; the result does not wait for it (a_stuck_io_ends_with_the_run_
    // and_is_reported).
    assert!(started.elapsed() < Duration::from_secs(20));
    let doc = json_of(&out);
    assert_eq!(doc["interrupted"], true);
    let t = target(&doc);
    // What was measured before the stall is reported, and the stalled
    // I/O with it.
    assert!(u(&t["read"]["ios"]) >= 1, "{t}");
    assert!(u(&t["unfinished"]["ios"]) >= 1, "{t}");
    assert!(file.exists());
}

/// A write that failed leaves its block's content unknown: the read-back
/// counts it `uncertain`, never intact or corrupt, in both verify modes.
#[test]
fn a_failed_write_makes_its_block_uncertain_not_a_verify_failure() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("verified");
    std::fs::write(&file, vec![0u8; MIB]).unwrap();
    for mode in ["--verify", "--verify-interleaved"] {
        fs.control.set(Plan {
            armed: true,
            fail_writes: vec![512 << 10..(512 << 10) + 4096],
            ..Plan::default()
        });
        let out = pass(
            file.to_str().unwrap(),
            "write",
            "io_uring",
            &[mode, "--continue-on-error"],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc = json_of(&out);
        let v = &target(&doc)["verify"];
        assert_eq!(u(&v["uncertain"]), 1, "{mode}: {v}");
        assert_eq!(u(&v["intact"]), 255, "{mode}: {v}");
        for bad in ["stale", "misplaced", "corrupt"] {
            assert_eq!(u(&v[bad]), 0, "{mode}: {v}");
        }
    }
}

/// Four verifying workers of one target contend for 16 blocks while the
/// file system stalls: the size-bound pass still makes its 16 writes, and
/// every block written reads back intact.
#[test]
fn a_contended_verified_pass_through_a_stall_writes_every_block() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("contended");
    std::fs::write(&file, vec![0u8; 64 << 10]).unwrap();
    fs.control.set(Plan {
        armed: true,
        stall: Some((0..64 << 10, Duration::from_millis(300))),
        stall_after: 2,
        ..Plan::default()
    });
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--size",
        "64k",
        "--numjobs",
        "4",
        "--iodepth",
        "8",
        "--verify",
        "--overwrite",
    ]);
    let t = target(&doc);
    // One pass: 16 writes, 4 to each worker. Random offsets may repeat a
    // block once its earlier write has finished, so up to 16 blocks are
    // checked, and each must read back as its last write left it.
    assert_eq!(u(&t["write"]["ios"]), 16, "{t}");
    let v = &t["verify"];
    let checked = u(&v["checked"]);
    assert!((1..=16).contains(&checked), "{v}");
    assert_eq!(u(&v["intact"]), checked, "{v}");
    for bad in ["stale", "misplaced", "corrupt", "unwritten", "uncertain"] {
        assert_eq!(u(&v[bad]), 0, "{bad}: {v}");
    }
}

#[test]
fn no_mount_outlives_its_test_after_io_uring_used_it() {
    let Some(fs) = skip_or_mount() else { return };
    let dir = fs.dir.clone();
    let file = fs.path("used");
    std::fs::write(&file, vec![0u8; MIB]).unwrap();
    let out = pass(file.to_str().unwrap(), "write", "io_uring", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(faultfs::is_mounted(&dir));
    drop(fs);
    assert!(
        !faultfs::is_mounted(&dir),
        "{} is still mounted",
        dir.display()
    );
}

/// A file system that cannot punch holes (this one has no fallocate) is
/// named before anything runs, and the file is left as it was.
#[test]
fn trims_on_a_file_system_without_holes_are_refused() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("data");
    std::fs::write(&file, vec![7u8; MIB]).unwrap();
    let f = file.to_str().unwrap();
    for rw in ["trim", "randtrim", "trimwrite", "randtrimwrite"] {
        refused(
            &["run", f, "--rw", rw, "--bs", "4k", "--overwrite"],
            "cannot punch holes",
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; MIB]);
}

/// Runs fathom on `args` with `-o` to a file, sending `signal` after
/// `after` (if given); returns the result, how long it took to be written,
/// and fathom's exit code. A process with a thread stuck in a FUSE request
/// its server has taken cannot end before the server answers (the kernel
/// waits that out, uninterruptibly): the result is what must not wait.
fn run_until_written(
    args: &[&str],
    signal: Option<(i32, Duration)>,
) -> (Value, Duration, Option<i32>) {
    let dir = tempdir();
    let out = dir.path().join("r.json");
    let started = std::time::Instant::now();
    let mut child = fathom()
        .args(args)
        .args(["-o", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    if let Some((signal, after)) = signal {
        std::thread::sleep(after);
        // SAFETY: a signal to the child we started.
        unsafe { libc::kill(child.id() as i32, signal) };
    }
    let doc = loop {
        if let Some(doc) = std::fs::read(&out)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        {
            break doc;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no result");
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = started.elapsed();
    let code = child.wait().unwrap().code();
    (doc, took, code)
}

// A stuck I/O holds neither the result past the runtime and a bounded grace,
// nor past a second after a signal, and it is reported: its count and age,
// and a maximum latency at least its age.
#[test]
fn a_stuck_io_ends_with_the_run_and_is_reported() {
    let Some(fs) = skip_or_mount() else { return };
    let file = fs.path("stuck");
    std::fs::write(&file, vec![1u8; MIB]).unwrap();
    let stall = Duration::from_secs(10);
    for engine in ["io_uring", "sync"] {
        for signal in [None, Some((libc::SIGINT, Duration::from_millis(1500)))] {
            fs.control.set(Plan {
                armed: true,
                stall: Some((0..MIB as u64, stall)),
                stall_after: 50,
                ..Plan::default()
            });
            let (doc, took, code) = run_until_written(
                &[
                    "run",
                    file.to_str().unwrap(),
                    "--rw",
                    "randread",
                    "--engine",
                    engine,
                    "--buffered",
                    "--runtime",
                    "1s",
                    "--output-format",
                    "json",
                ],
                signal,
            );
            let what = format!("{engine} {signal:?}");
            match signal {
                // The runtime, the grace of 5 s, and a second's margin.
                None => assert!(took < Duration::from_secs(8), "{what}: {took:?}"),
                Some((_, after)) => {
                    assert!(took < after + Duration::from_secs(2), "{what}: {took:?}");
                    assert_eq!(code, Some(130), "{what}");
                }
            }
            let t = target(&doc);
            let stuck = &t["unfinished"];
            assert!(u(&stuck["ios"]) >= 1, "{what}: {t}");
            let age = u(&stuck["oldest_ns"]);
            assert!(age >= 400_000_000, "{what}: {stuck}");
            assert!(
                u(&t["read"]["lat_ns"]["max"]) >= age,
                "{what}: {}",
                t["read"]["lat_ns"]
            );
        }
    }
}

/// With the file system slowed to a creation every 3 s, `meta`, `tree`
/// and `train` give what they measured once the operation in flight at
/// Ctrl-C ends, not after a batch of them.
#[test]
fn metadata_runs_report_soon_after_ctrl_c_on_a_stalled_file_system() {
    use std::io::Read;
    let Some(fs) = skip_or_mount() else { return };
    for (name, args) in [
        ("meta", vec!["meta", "-n", "1"]),
        (
            "tree",
            vec!["tree", "--depth", "1", "--width", "2", "--files", "8"],
        ),
        (
            "train",
            vec![
                "train",
                "--workload",
                "unet3d",
                "--files",
                "8",
                "--sample-size",
                "4k",
                "--sample-size-stdev",
                "0",
            ],
        ),
    ] {
        let dir = fs.path(name);
        std::fs::create_dir(&dir).unwrap();
        let before = fs.control.seen().creates;
        fs.control.set(Plan {
            armed: true,
            create_delay: Some(Duration::from_secs(3)),
            ..Plan::default()
        });
        let mut child = fathom()
            .args(&args[..1])
            .arg(&dir)
            .args(&args[1..])
            .args(["--output-format", "json", "--no-history"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        wait_until("a creation is held", || fs.control.seen().creates > before);
        std::thread::sleep(Duration::from_millis(300));
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let signalled = std::time::Instant::now();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        let got = stdout.read(&mut first).unwrap();
        let after = signalled.elapsed();
        fs.control.set(Plan::default());
        let _ = child.wait();
        assert_eq!(got, 1, "{name}: no result");
        eprintln!("{name}: the result came {after:?} after Ctrl-C");
        // The creation in flight (3 s at most), and a busy host's slack.
        assert!(
            after < Duration::from_secs(6),
            "{name}: the result came {after:?} after Ctrl-C"
        );
    }
}

/// A training dataset whose writes fail while it is made (a full or
/// broken file system): the run ends with exit 1 and says why, and the
/// result file is still written with the failure in it; nothing of the
/// dataset is left.
#[test]
fn a_dataset_that_cannot_be_made_still_gives_its_result_file() {
    let Some(fs) = skip_or_mount() else { return };
    let dir = fs.path("dataset");
    std::fs::create_dir(&dir).unwrap();
    fs.control.set(Plan {
        armed: true,
        fail_writes_after: Some(8),
        ..Plan::default()
    });
    let out_dir = tempfile::tempdir().unwrap();
    let result = out_dir.path().join("train.json");
    let out = fathom()
        .args(["train", dir.to_str().unwrap(), "--workload", "unet3d"])
        .args(["--files", "28", "--sample-size", "16k", "--epochs", "1"])
        .args(["-o", result.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the run stopped before its plan was done"),
        "{err}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap())
        .unwrap_or_else(|e| panic!("{e}: {err}"));
    assert!(
        doc["failure"].as_str().is_some_and(|f| !f.is_empty()),
        "{doc}"
    );
    fs.control.set(Plan::default());
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "the dataset's files were left: {:?}",
        entries(&dir)
    );
}
