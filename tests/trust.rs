//! Defects that would make fathom report wrong figures without any other
//! test noticing: each test here fails on the broken behaviour.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

fn target0(doc: &Value) -> &Value {
    &doc["results"][0]["targets"][0]
}

/// Reads of a small page-cached file at `--rate-iops IOPS` plus `extra`: the
/// schedule, not the disk, is under test. Returns the target's read figures.
fn cached_rated_read(iops: &str, extra: &[&str]) -> Value {
    let dir = tempdir();
    let file = dir.path().join("rated");
    let mut args = vec![
        file.to_str().unwrap(),
        "--size",
        "4m",
        "--buffered",
        "--rate-iops",
        iops,
    ];
    args.extend_from_slice(extra);
    target0(&run_json(&args))["read"].clone()
}

/// I/Os a rated run counted, and those it counted plus those that were due
/// but had no answer at the end. On a busy machine the worker may fall
/// behind, so the first can be short of the schedule; the two together
/// never are: every I/O due in the measured time is either counted or
/// reported unanswered.
fn counted_and_due(read: &Value) -> (f64, f64) {
    let ios = u(&read["ios"]) as f64;
    let unanswered = read["unanswered"].as_u64().unwrap_or(0) as f64;
    (ios, ios + unanswered)
}

#[test]
fn io_during_the_ramp_is_not_counted() {
    // At a fixed rate the count follows from the time: 400 I/Os a second
    // for 1 s measured after a 1 s ramp is 400, not the 800 issued.
    let read = cached_rated_read("400", &["--ramp", "1s", "--runtime", "1s"]);
    let (ios, due) = counted_and_due(&read);
    assert!(ios <= 412.0, "{ios} I/Os counted, want at most 400");
    assert!(due >= 388.0, "{due} I/Os counted or unanswered, want 400");
}

#[test]
fn a_rate_is_shared_by_the_workers_not_given_to_each() {
    let read = cached_rated_read("1000", &["--numjobs", "4", "--runtime", "2s"]);
    let (ios, due) = counted_and_due(&read);
    assert!(ios <= 2040.0, "{ios} I/Os in 2 s, want at most 2000");
    assert!(due >= 1960.0, "{due} I/Os counted or unanswered, want 2000");
}

/// Distinct chunks of `chunk` bytes in `path`, and how many there are.
fn distinct_chunks(path: &std::path::Path, chunk: usize) -> (usize, usize) {
    let mut data = Vec::new();
    std::fs::File::open(path)
        .unwrap()
        .read_to_end(&mut data)
        .unwrap();
    let all: Vec<&[u8]> = data.chunks(chunk).collect();
    let distinct: HashSet<&[u8]> = all.iter().copied().collect();
    (distinct.len(), all.len())
}

#[test]
fn written_blocks_do_not_repeat_at_any_block_size() {
    for bs in ["64k", "1m"] {
        let dir = tempdir();
        let file = dir.path().join("dedupe");
        // A buffered write pass over a file that starts empty of fathom's
        // layout (the region is written in full, once, by the workload).
        let f = file.to_str().unwrap();
        run_json(&[
            f,
            "--rw",
            "write",
            "--bs",
            bs,
            "--size",
            "2m",
            "--buffered",
            "--keep",
        ]);
        for chunk in [512, 4096] {
            let (distinct, all) = distinct_chunks(&file, chunk);
            assert_eq!(
                distinct, all,
                "bs {bs}: {distinct} of {all} {chunk}-byte chunks distinct"
            );
        }
    }
}

/// SplitMix64's finaliser, as fathom stamps written sectors with it (see
/// `buffers::stamp`).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn rewriting_a_block_writes_new_data_each_time() {
    // One block written over and over: each write carries the next sequence
    // number, so a device cannot tell a rewrite from the data it holds (a
    // file system that skips identical rewrites would flatter the figures).
    let dir = tempdir();
    let file = dir.path().join("one-block");
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--rw",
        "write",
        "--bs",
        "4k",
        "--size",
        "4k",
        "--engine",
        "sync",
        // Through the page cache: a busy disk could hold one direct write
        // past the whole run.
        "--buffered",
        "--runtime",
        "300ms",
        "--keep",
    ]);
    let writes = u(&target0(&doc)["write"]["ios"]);
    assert!(writes >= 2, "{writes} writes");
    let data = std::fs::read(&file).unwrap();
    let stamped = u64::from_le_bytes(data[8..16].try_into().unwrap());
    let sequence = (1..=writes + 1).find(|k| splitmix64(*k) == stamped);
    assert!(
        sequence.is_some(),
        "the last of {writes} writes carries a later sequence number than the first"
    );
}

#[test]
fn a_new_file_is_laid_out_without_repeats() {
    let dir = tempdir();
    let file = dir.path().join("layout");
    // A read-only run leaves the layout as it was written.
    run_json(&[
        file.to_str().unwrap(),
        "--size",
        "3m",
        "--runtime",
        "100ms",
        "--keep",
    ]);
    for chunk in [512, 4096, 1 << 20] {
        let (distinct, all) = distinct_chunks(&file, chunk);
        assert_eq!(distinct, all, "{chunk}-byte chunks of the layout repeat");
    }
}

#[test]
fn a_block_put_back_to_its_earlier_generation_in_the_same_run_is_stale() {
    let dir = tempdir();
    let file = dir.path().join("stale");
    let f = file.to_str().unwrap();
    let handshake = tempfile::tempdir_in(dir.path()).unwrap();
    // Four blocks written in turn, each about 50 times in 2 s.
    let child = spawn_with_handshake(
        &[
            "run",
            f,
            "--rw",
            "write",
            "--size",
            "16k",
            "--rate-iops",
            "100",
            "--runtime",
            "2s",
            "--verify",
            "--output-format",
            "json",
        ],
        handshake.path(),
    );
    // Keep the first copy of block 0 this run wrote (it has fathom's magic).
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut early: Option<Vec<u8>> = None;
    while !handshake.path().join("written").exists() {
        assert!(Instant::now() < deadline, "fathom never finished writing");
        if early.is_none()
            && let Ok(fh) = std::fs::File::open(&file)
        {
            let mut block = vec![0u8; 4096];
            if fh.read_exact_at(&mut block, 0).is_ok() && &block[..8] == b"FTHMBLK1" {
                early = Some(block);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let early = early.expect("block 0 was seen while the run wrote it");
    let fh = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&file)
        .unwrap();
    let mut now = vec![0u8; 4096];
    fh.read_exact_at(&mut now, 0).unwrap();
    assert_ne!(early, now, "block 0 was written again after the copy");
    fh.write_all_at(&early, 0).unwrap();
    fh.sync_all().unwrap();
    std::fs::write(handshake.path().join("go"), b"").unwrap();

    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a lost write exits 1");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &target0(&doc)["verify"];
    assert_eq!((u(&v["stale"]), u(&v["intact"])), (1, 3), "{v}");
    assert_eq!(v["first_failures"][0]["offset"], 0);
    assert_eq!(v["first_failures"][0]["kind"], "stale");
}

#[test]
fn interleaved_checks_are_not_counted_as_latency() {
    // Each check is made to take 20 ms. Timed before the checks of its
    // batch, a write's latency stays far below that; timed after them, most
    // writes would show one or more checks.
    let dir = tempdir();
    let file = dir.path().join("interleaved");
    let out = fathom()
        .args([
            "run",
            file.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--size",
            "1m",
            "--buffered",
            "--iodepth",
            "16",
            "--runtime",
            "2s",
            "--verify-interleaved",
            "--output-format",
            "json",
        ])
        .env("FATHOM_TEST_CHECK_DELAY_MS", "20")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let write = &target0(&doc)["write"];
    assert!(u(&write["ios"]) > 20, "{write}");
    // The checks did take their 20 ms: each written block is held until
    // checked, so 2 s of checks let through at most the 256 blocks plus
    // about 100 (without the delay, buffered writes number thousands).
    assert!(u(&write["ios"]) < 1000, "{write}");
    let p50 = u(&write["lat_ns"]["p50"]);
    assert!(p50 < 10_000_000, "p50 {p50} ns includes the 20 ms checks");
}

#[test]
fn fsync_is_made_every_n_writes_and_timed() {
    let dir = tempdir();
    let file = dir.path().join("fsync");
    // 256 writes of 4k, an fsync after every 4th: 64 flushes.
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--rw",
        "write",
        "--size",
        "1m",
        "--buffered",
        "--fsync",
        "4",
    ]);
    let w = &doc["results"][0];
    assert_eq!(u(&w["targets"][0]["write"]["ios"]), 256);
    let sync = &w["targets"][0]["sync"];
    assert_eq!(u(&sync["count"]), 64, "{sync}");
    assert!(u(&sync["lat_ns"]["min"]) > 0, "{sync}");
    assert!(f(&sync["rate"]) > 0.0);
    assert_eq!(u(&w["sync"]["count"]), 64, "the workload's total");
    let none = run_json(&[file.to_str().unwrap(), "--rw", "write", "--size", "64k"]);
    assert!(
        target0(&none).get("sync").is_none(),
        "no fsync, no sync figures"
    );
}

#[test]
fn zipf_concentrates_writes_on_few_blocks() {
    // One pass of 1,024 random writes over 1,024 blocks: uniformly, about
    // 1 - 1/e of the blocks are hit; with zipf:1.2 far fewer. `--verify`
    // checks exactly the blocks written, so it counts them.
    let distinct = |dist: &str| {
        let dir = tempdir();
        let file = dir.path().join("zipf");
        let doc = run_json(&[
            file.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--size",
            "4m",
            "--buffered",
            "--random-distribution",
            dist,
            "--verify",
        ]);
        u(&target0(&doc)["verify"]["checked"])
    };
    let uniform = distinct("uniform");
    let zipf = distinct("zipf:1.2");
    assert!(
        (600..=700).contains(&uniform),
        "uniform hit {uniform} blocks"
    );
    assert!(
        zipf < uniform / 2,
        "zipf hit {zipf} blocks, uniform {uniform}"
    );
}
