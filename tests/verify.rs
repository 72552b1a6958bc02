//! `--verify`: blocks tampered with between the write phase and the
//! read-back are reported as the right kind, at the right offset.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::Path;

const BS: u64 = 4096;

fn read_block(file: &Path, index: u64) -> Vec<u8> {
    let f = std::fs::File::open(file).unwrap();
    let mut b = vec![0u8; BS as usize];
    f.read_exact_at(&mut b, index * BS).unwrap();
    b
}

fn write_block(file: &Path, index: u64, data: &[u8]) {
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(data, index * BS).unwrap();
    f.sync_all().unwrap();
}

fn verify_report(doc: &Value) -> &Value {
    &doc["results"][0]["targets"][0]["verify"]
}

fn failures_of_kind(report: &Value, kind: &str) -> Vec<u64> {
    report["first_failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .map(|f| u(&f["offset"]))
        .collect()
}

#[test]
fn clean_write_verifies_intact_and_read_only_check_passes() {
    let dir = tempdir();
    let file = dir.path().join("v");
    let f = file.to_str().unwrap();
    for mode in ["--verify", "--verify-interleaved"] {
        for rw in ["write", "randwrite", "randrw"] {
            let doc = run_json(&[
                f,
                "--rw",
                rw,
                "--size",
                "1m",
                "--iodepth",
                "8",
                "--numjobs",
                "2",
                mode,
                "--keep",
                "--overwrite",
            ]);
            let v = verify_report(&doc);
            assert!(u(&v["checked"]) > 0, "{rw} {mode}: {v}");
            assert_eq!(u(&v["checked"]), u(&v["intact"]), "{rw} {mode}: {v}");
            // No write failed: no block is uncertain.
            assert_eq!(u(&v["uncertain"]), 0, "{rw} {mode}: {v}");
        }
    }
    // A sequential pass stamps every block; a later read-only check sees them.
    run_json(&[
        f,
        "--rw",
        "write",
        "--size",
        "1m",
        "--verify",
        "--keep",
        "--overwrite",
    ]);
    let doc = run_json(&[f, "--rw", "read", "--size", "1m", "--verify"]);
    let v = verify_report(&doc);
    assert_eq!(v["mode"], "read-only");
    assert_eq!(u(&v["intact"]), (1 << 20) / BS, "{v}");
    assert!(file.exists(), "a file fathom did not create is kept");

    // A file no fathom run wrote: every block of the region (300 blocks,
    // more than one 1 MiB read and less than the file) is counted
    // unwritten, and a check that found nothing to check is no pass.
    let blank = dir.path().join("blank");
    std::fs::write(&blank, vec![0u8; 2 << 20]).unwrap();
    let out = run(&[
        "run",
        blank.to_str().unwrap(),
        "--rw",
        "read",
        "--size",
        "1200k",
        "--verify",
        "--output-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NOTHING CHECKED"));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = verify_report(&doc);
    assert_eq!(u(&v["checked"]), 300, "{v}");
    assert_eq!(u(&v["unwritten"]), 300, "{v}");
    assert_eq!(u(&v["intact"]), 0, "{v}");
}

#[test]
fn tampering_between_write_and_verify_is_classified() {
    tampering_is_classified(&[]);
}

/// Blocks whose payloads repeat (all zeros, or every write a repeat of an
/// earlier one) are told apart by their headers: a swap, a stale block and
/// a flipped bit are found as with fresh data.
#[test]
fn tampering_is_classified_when_payloads_repeat() {
    tampering_is_classified(&["--pattern", "zeros"]);
    tampering_is_classified(&["--dedupe", "100"]);
}

fn tampering_is_classified(content: &[&str]) {
    let dir = tempdir();
    let file = dir.path().join("v");
    let f = file.to_str().unwrap();
    // An earlier run's copy of block 9, to put back later (a lost write).
    let mut first = vec![f, "--rw", "write", "--size", "256k", "--verify", "--keep"];
    first.extend_from_slice(content);
    run_json(&first);
    let old_block_9 = read_block(&file, 9);

    let handshake = tempfile::tempdir_in(dir.path()).unwrap();
    let mut args = vec![
        "run",
        f,
        "--rw",
        "write",
        "--size",
        "256k",
        "--verify",
        "--keep",
        "--overwrite",
        "--output-format",
        "json",
    ];
    args.extend_from_slice(content);
    let child = spawn_with_handshake(&args, handshake.path());
    wait_until("fathom finished writing", || {
        handshake.path().join("written").exists()
    });
    // Bit flip in the payload of block 3.
    let mut b3 = read_block(&file, 3);
    b3[2000] ^= 0x04;
    write_block(&file, 3, &b3);
    // Blocks 5 and 6 swapped.
    let (b5, b6) = (read_block(&file, 5), read_block(&file, 6));
    write_block(&file, 5, &b6);
    write_block(&file, 6, &b5);
    // Block 9 back to what the earlier run wrote.
    write_block(&file, 9, &old_block_9);
    std::fs::write(handshake.path().join("go"), b"").unwrap();

    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "verify failures exit 1");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("verify: 4 of 64 blocks failed"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = verify_report(&doc);
    assert_eq!(
        (
            u(&v["corrupt"]),
            u(&v["misplaced"]),
            u(&v["stale"]),
            u(&v["intact"])
        ),
        (1, 2, 1, 60),
        "{v}"
    );
    assert_eq!(failures_of_kind(v, "corrupt"), vec![3 * BS]);
    assert_eq!(failures_of_kind(v, "misplaced"), vec![5 * BS, 6 * BS]);
    assert_eq!(failures_of_kind(v, "stale"), vec![9 * BS]);

    // Later corruption is found by a read-only check, without writing.
    let mut b20 = read_block(&file, 20);
    b20[100] ^= 0x80;
    write_block(&file, 20, &b20);
    let before = std::fs::read(&file).unwrap();
    let out = run(&[
        "run",
        f,
        "--rw",
        "randread",
        "--size",
        "256k",
        "--verify",
        "--output-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "read-only check wrote"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = verify_report(&doc);
    let corrupt = failures_of_kind(v, "corrupt");
    assert!(
        corrupt.contains(&(20 * BS)) && corrupt.contains(&(3 * BS)),
        "{v}"
    );
    assert_eq!(failures_of_kind(v, "misplaced"), vec![5 * BS, 6 * BS]);
}

#[test]
fn verify_with_null_engine_is_refused() {
    let dir = tempdir();
    let target = dir.path().join("x");
    let out = run(&[
        "run",
        target.to_str().unwrap(),
        "--rw",
        "write",
        "--engine",
        "null",
        "--verify",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--verify"));
    assert!(!target.exists());
}
