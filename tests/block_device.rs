//! Block-device targets on loop devices (skipped, with the reason, where the
//! machine does not allow them).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;

#[test]
fn loop_device_is_sized_and_described() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    let doc = run_json(&[&dev.path, "--rw", "randread", "--iodepth", "8"]);
    let t = &doc["results"][0]["targets"][0];
    assert_eq!(t["facts"]["kind"], "block_device");
    assert_eq!(u(&t["facts"]["device"]["logical_block_size"]), 512);
    // The whole 16 MiB device, one pass.
    assert_eq!(u(&t["read"]["bytes"]), 16 << 20);
    let doc = run_json(&[
        &dev.path,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "1m",
        "--offset",
        "1m",
        "--i-know-this-destroys-data",
    ]);
    assert_eq!(u(&doc["results"][0]["total"]["write"]["ios"]), 16);
}

#[test]
fn loop_device_checks_block_size_and_bounds() {
    let Some(dev) = LoopDevice::new(8 << 20, 4096) else {
        return;
    };
    let out = run(&["run", &dev.path, "--bs", "512"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--bs") && err.contains("4096"), "{err}");
    let out = run(&["run", &dev.path, "--offset", "4k", "--size", "8m"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("beyond the end"));
    // Buffered I/O has no alignment rule.
    let doc = run_json(&[&dev.path, "--bs", "512", "--buffered", "--size", "64k"]);
    assert_eq!(u(&doc["results"][0]["total"]["read"]["ios"]), 128);
}

/// A loop device this test attached, detached on drop (never one another
/// test may hold).
struct Attached(String);

impl Drop for Attached {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// One loop node over two files is two targets: a run over the second is
/// not checked against the first's as its last run, and compare says the
/// targets differ, naming what each is over.
#[test]
fn one_loop_node_over_two_files_is_two_targets() {
    let Some(first) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    let node = first.path.clone();
    let dir = tempdir();
    let store = dir.path().join("h.db");
    let read = |out: &std::path::Path| {
        let o = run(&[
            "run",
            &node,
            "--rw",
            "randread",
            "--runtime",
            "1s",
            "--history",
            store.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        succeeded(&o);
    };
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    read(&a);
    drop(first);
    let image = tempfile::NamedTempFile::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    image.as_file().set_len(16 << 20).unwrap();
    let attached = std::process::Command::new("losetup")
        .arg(&node)
        .arg(image.path())
        .status();
    if !attached.is_ok_and(|s| s.success()) {
        eprintln!("SKIP: {node} was taken by another test before it could be attached again");
        return;
    }
    let _second = Attached(node.clone());
    read(&b);
    let o = run(&[
        "check",
        b.to_str().unwrap(),
        "--against",
        "last:1",
        "--history",
        store.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "no earlier run of this target: {said}"
    );
    assert!(!said.contains('%'), "nothing compared: {said}");
    let o = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("the targets differ"), "{said}");
    assert!(said.contains(&image.path().display().to_string()), "{said}");
}
