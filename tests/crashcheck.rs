//! `fathom crashcheck`: a writer killed mid-flight loses nothing it was
//! told was durable (the page cache survives a process crash), so its
//! read-back passes; a file system that drops acknowledged writes (the
//! tests' FUSE layer) fails, naming the blocks.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use crate::faultfs;

use common::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Stdio};

fn ack_lines(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

fn writer(args: &[&str]) -> Child {
    fathom()
        .arg("crashcheck")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Kills `child` with SIGKILL once `log` holds `acks` acknowledgements.
fn kill_after(mut child: Child, log: &Path, acks: usize) {
    wait_until("acknowledgements are logged", || ack_lines(log) >= acks);
    child.kill().unwrap();
    child.wait().unwrap();
}

fn verify(target: &Path, log: &Path) -> (Option<i32>, String) {
    let out = run(&[
        "crashcheck",
        "--verify",
        target.to_str().unwrap(),
        "--ack-log",
        log.to_str().unwrap(),
    ]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_writer_killed_mid_flight_loses_nothing_it_acknowledged() {
    let dir = tempdir(); // on the disk
    let logs = tempdir_in_shm(); // another device, where there is one
    let target = dir.path().join("target");
    let log = logs.path().join("acks");
    if std::fs::metadata(dir.path()).unwrap().dev() == std::fs::metadata(logs.path()).unwrap().dev()
    {
        eprintln!("SKIP: no second device for the ack log here");
        return;
    }
    let child = writer(&[
        target.to_str().unwrap(),
        "--ack-log",
        log.to_str().unwrap(),
        "--size",
        "4m",
        "--iodepth",
        "2",
    ]);
    kill_after(child, &log, 300);
    let (code, out) = verify(&target, &log);
    eprintln!("{out}");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("verdict: PASS"), "{out}");
    assert!(out.contains(" 0 older generation, 0 lost"), "{out}");
}

#[test]
fn a_device_that_drops_acknowledged_writes_fails_naming_the_blocks() {
    let Some(fs) = faultfs::skip_or_mount() else {
        return;
    };
    let logs = tempdir();
    let target = fs.path("target");
    let log = logs.path().join("acks");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    // Every write after the 50th is acknowledged, flushed, and forgotten.
    fs.control.set(faultfs::Plan {
        armed: true,
        drop_writes: true,
        drop_writes_after: 50,
        ..Default::default()
    });
    let out = run(&[
        "crashcheck",
        target.to_str().unwrap(),
        "--ack-log",
        log.to_str().unwrap(),
        "--size",
        "1m",
        "--overwrite",
        "--sync",
        "fsync",
        "--runtime",
        "1s",
        "--rate-iops",
        "300",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs.control.seen().dropped > 0);
    let (code, report) = verify(&target, &log);
    eprintln!("{report}");
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("verdict: FAIL"), "{report}");
    // Blocks are named with what they hold and what was acknowledged.
    assert!(
        report.contains("was acknowledged") && report.contains("block "),
        "{report}"
    );
}

#[test]
fn acknowledgements_sent_to_a_listener_verify_the_same() {
    let dir = tempdir();
    let logs = tempdir_in_shm();
    let target = dir.path().join("target");
    let log = logs.path().join("received");
    let mut listener = fathom()
        .args(["crashcheck", "--listen", "127.0.0.1:0", "--ack-log"])
        .arg(&log)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // "fathom: listening on 127.0.0.1:PORT, ..."
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(listener.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split_whitespace()
        .nth(3)
        .unwrap()
        .trim_end_matches(',')
        .to_string();
    let child = writer(&[target.to_str().unwrap(), "--ack-to", &addr, "--size", "4m"]);
    kill_after(child, &log, 200);
    // Anyone else's lines: one without a run's header (read as an
    // acknowledgement of the run before, it would fail a good device), and
    // a megabyte without a newline. Neither reaches the log.
    use std::io::Write;
    // (What the killed writer had sent is in the log by now.)
    std::thread::sleep(std::time::Duration::from_millis(300));
    let before = std::fs::read(&log).unwrap();
    let mut forged = std::net::TcpStream::connect(&addr).unwrap();
    forged.write_all(b"3 999999\n").unwrap();
    drop(forged);
    let mut endless = std::net::TcpStream::connect(&addr).unwrap();
    let _ = endless.write_all(&vec![b'7'; 1 << 20]);
    drop(endless);
    std::thread::sleep(std::time::Duration::from_millis(500));
    unsafe { libc::kill(listener.id() as i32, libc::SIGINT) };
    listener.wait().unwrap();
    assert_eq!(
        std::fs::read(&log).unwrap(),
        before,
        "a stranger's lines reached the log"
    );
    let (code, out) = verify(&target, &log);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("verdict: PASS"), "{out}");
}

#[test]
fn an_ack_log_beside_the_target_or_a_listener_out_of_reach_is_refused() {
    let dir = tempdir();
    let target = dir.path().join("target");
    let beside = dir.path().join("acks");
    for (args, says) in [
        (vec!["--ack-log", beside.to_str().unwrap()], "same device"),
        (vec!["--ack-to", "127.0.0.1:1"], "cannot connect"),
        (vec![], "--ack-log or --ack-to"),
    ] {
        let mut full = vec!["crashcheck", target.to_str().unwrap(), "--runtime", "1s"];
        full.extend_from_slice(&args);
        let out = run(&full);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        names_the_problem(&stderr, says);
        assert!(!target.exists(), "nothing written");
    }
}

#[test]
fn counts_are_grouped_in_thousands_as_everywhere_in_text() {
    let dir = tempdir();
    let logs = tempdir_in_shm();
    let out = run_of_size(
        &dir.path().join("big"),
        &logs.path().join("acks"),
        "64m",
        &[],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("writing 16,384 blocks of 4 KiB"), "{said}");
}

/// A writer on `target` for half a second, logging to `log`; its output.
fn short_run(target: &Path, log: &Path, extra: &[&str]) -> std::process::Output {
    run_of_size(target, log, "256k", extra)
}

/// The same on a target of `size`.
fn run_of_size(target: &Path, log: &Path, size: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["crashcheck", target.to_str().unwrap()];
    args.extend(["--ack-log", log.to_str().unwrap(), "--size", size]);
    args.extend(["--runtime", "0.5s", "--rate-iops", "200"]);
    args.extend(extra);
    run(&args)
}

#[test]
fn a_log_that_holds_a_run_is_refused_unless_appended_and_each_run_verifies_its_own_target() {
    let dir = tempdir();
    let logs = tempdir_in_shm();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let log = logs.path().join("acks");
    assert!(short_run(&first, &log, &[]).status.success());
    let before = std::fs::read(&log).unwrap();
    let out = short_run(&second, &log, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already holds a run") && err.contains("--append"),
        "{err}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is untouched");
    assert!(!second.exists(), "nothing created");
    // Told to add a run, it does; each target then verifies against its own.
    assert!(short_run(&second, &log, &["--append"]).status.success());
    for target in [&first, &second] {
        let (code, out) = verify(target, &log);
        assert_eq!(code, Some(0), "{out}");
        assert!(
            out.contains("the log holds 2 runs") && out.contains("verdict: PASS"),
            "{out}"
        );
    }
}

#[test]
fn a_log_that_acknowledged_nothing_checks_nothing_and_does_not_pass() {
    let dir = tempdir();
    let logs = tempdir_in_shm();
    let target = dir.path().join("target");
    std::fs::write(&target, vec![0u8; 64 << 10]).unwrap();
    let log = logs.path().join("acks");
    std::fs::write(
        &log,
        "fathom-crashcheck 1 run_id=ab bs=4096 blocks=16 seed=1\n",
    )
    .unwrap();
    let (code, out) = verify(&target, &log);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("NOTHING CHECKED") && !out.contains("PASS"),
        "{out}"
    );
    // A log whose blocks go past the end of the target names the mismatch.
    std::fs::write(
        &log,
        "fathom-crashcheck 1 run_id=ab bs=4096 blocks=64 seed=1\n3 1\n",
    )
    .unwrap();
    let out = run(&[
        "crashcheck",
        "--verify",
        target.to_str().unwrap(),
        "--ack-log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is this the target the log was written for")
    );
}

#[test]
fn a_refused_writer_creates_no_ack_log() {
    let dir = tempdir();
    let logs = tempdir_in_shm();
    let target = dir.path().join("theirs");
    std::fs::write(&target, b"not fathom's").unwrap();
    let log = logs.path().join("acks");
    let out = short_run(&target, &log, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--overwrite"));
    assert!(!log.exists(), "the ack log was created before the refusal");
    assert_eq!(std::fs::read(&target).unwrap(), b"not fathom's");
}

/// The writer can be watched as a run is: `--live` lines of its
/// acknowledged writes (each timed to its durability call) that add up to
/// what it says it wrote, and a metrics port it cannot serve on is refused
/// before anything is created.
#[test]
fn the_writer_can_be_watched_and_its_seconds_add_up_to_its_acknowledgements() {
    let dir = tempdir();
    let logs = tempdir_in_shm();
    let lines = dir.path().join("live.jsonl");
    let out = run_of_size(
        &dir.path().join("t"),
        &logs.path().join("acks"),
        "256k",
        &["--live", lines.to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said: u64 = stdout
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    let mut summed = 0;
    for line in std::fs::read_to_string(&lines).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["phase"], "crashcheck: writing", "{v}");
        let write = &v["directions"]["write"];
        summed += write["ios"].as_u64().unwrap();
        assert!(write["lat_ns"]["max"].as_u64().unwrap() > 0, "{v}");
    }
    assert!(said > 0);
    assert_eq!(summed, said, "{stdout}");
    assert_eq!(summed, ack_lines(&logs.path().join("acks")) as u64);

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().to_string();
    let target = dir.path().join("never");
    let out = run_of_size(
        &target,
        &logs.path().join("acks2"),
        "256k",
        &["--metrics-listen", &port],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
    assert!(!target.exists() && !logs.path().join("acks2").exists());
}
