//! Device counters: what the disk under a target did while fathom measured,
//! beside what fathom issued.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;

#[test]
fn the_disk_reports_at_least_the_direct_reads_fathom_made() {
    let dir = tempdir();
    let doc = run_json(&[
        dir.path().to_str().unwrap(),
        "--size",
        "8m",
        "--runtime",
        "500ms",
        "--rw",
        "randread",
        "--bs",
        "16k",
    ]);
    let w = &doc["results"][0];
    if w["targets"][0]["facts"]["device"].is_null() {
        eprintln!("skipped: the temporary directory has no disk under it (tmpfs?)");
        assert!(w.get("disks").is_none(), "no disk, no counters: {w}");
        return;
    }
    let disks = w["disks"].as_array().expect("counters of the disk");
    assert_eq!(disks.len(), 1);
    let d = &disks[0];
    assert_eq!(d["name"], w["targets"][0]["facts"]["device"]["name"]);
    // O_DIRECT reads all reach the disk (others' I/O can only add to it).
    let made = u(&w["total"]["read"]["bytes"]);
    assert!(made > 0);
    assert!(
        u(&d["read_bytes"]) as f64 >= made as f64 * 0.95,
        "disk read {} bytes, fathom {made}",
        u(&d["read_bytes"])
    );
    let util = f(&d["util_pct"]);
    assert!(util > 0.0 && util <= 100.0, "{util}");
}
