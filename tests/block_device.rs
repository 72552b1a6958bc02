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
