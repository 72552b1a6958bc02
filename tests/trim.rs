//! Trims (`--rw trim`, `randtrim`, `trimwrite`, `randtrimwrite`): the blocks of a file become
//! holes, a loop device passes its discards to the image under it, results
//! carry a `trim` direction in every format, and what cannot be trimmed is
//! refused before anything runs.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;

const MIB: u64 = 1 << 20;

/// A file of `len` bytes of data, every block allocated.
fn data_file(path: &Path, len: u64) {
    let mut f = std::fs::File::create(path).unwrap();
    let block = vec![0x5au8; MIB as usize];
    for _ in 0..len / MIB {
        f.write_all(&block).unwrap();
    }
    f.sync_all().unwrap();
}

/// `lseek(fd, from, whence)`: the offset found, or None (ENXIO: no data, or
/// no hole, past `from`).
fn seek(path: &Path, from: u64, whence: i32) -> Option<u64> {
    let f = std::fs::File::open(path).unwrap();
    // SAFETY: a plain syscall on a descriptor open for this call.
    let at = unsafe { libc::lseek(f.as_raw_fd(), from as libc::off_t, whence) };
    (at >= 0).then_some(at as u64)
}

/// The start of the first hole at or after `from`, and of the first data.
fn first_hole_and_data(path: &Path, from: u64) -> (Option<u64>, Option<u64>) {
    (
        seek(path, from, libc::SEEK_HOLE),
        seek(path, from, libc::SEEK_DATA),
    )
}

#[test]
fn trimmed_blocks_of_a_file_are_holes_afterwards() {
    let dir = tempdir();
    let path = dir.path().join("data");
    data_file(&path, 4 * MIB);
    let file = path.to_str().unwrap();
    // The file is not fathom's: trimming it is writing to it.
    refused(
        &["run", file, "--rw", "trim", "--bs", "64k", "--size", "2m"],
        "refusing to write to an existing file fathom did not create",
    );
    assert_eq!(first_hole_and_data(&path, 0), (Some(4 * MIB), Some(0)));

    let doc = run_json(&[
        file,
        "--rw",
        "trim",
        "--bs",
        "64k",
        "--size",
        "2m",
        "--overwrite",
    ]);
    let total = &doc["results"][0]["total"];
    assert_eq!(u(&total["trim"]["ios"]), 32, "{total}");
    assert_eq!(u(&total["trim"]["bytes"]), 2 * MIB);
    assert_eq!(u(&total["write"]["ios"]), 0);
    assert_eq!(u(&total["read"]["ios"]), 0);
    assert!(total["trim"]["lat_ns"]["p99"].as_u64().unwrap() > 0);
    // The first 2 MiB are a hole, the rest still data, the size kept.
    assert_eq!(first_hole_and_data(&path, 0), (Some(0), Some(2 * MIB)));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 * MIB);
    let back = std::fs::read(&path).unwrap();
    assert!(back[..(2 * MIB) as usize].iter().all(|&b| b == 0));
    assert!(back[(2 * MIB) as usize..].iter().all(|&b| b == 0x5a));
}

#[test]
fn trimwrite_trims_each_block_before_writing_it() {
    let dir = tempdir();
    let path = dir.path().join("data");
    data_file(&path, 2 * MIB);
    let file = path.to_str().unwrap();
    for rw in ["trimwrite", "randtrimwrite"] {
        for engine in ["io_uring", "sync"] {
            let doc = run_json(&[
                file,
                "--rw",
                rw,
                "--bs",
                "64k",
                "--size",
                "1m",
                "--engine",
                engine,
                "--overwrite",
            ]);
            let w = &doc["results"][0];
            assert_eq!(w["spec"]["rw"], rw);
            let total = &w["total"];
            // As in fio, the size is what is written; each write has its trim.
            assert_eq!(u(&total["write"]["bytes"]), MIB, "{rw} {engine}: {total}");
            assert_eq!(u(&total["trim"]["ios"]), 16, "{rw} {engine}: {total}");
            assert_eq!(u(&total["write"]["ios"]), 16, "{rw} {engine}: {total}");
            // Every block trimmed was written next: data, no hole before
            // the region's end.
            assert_eq!(first_hole_and_data(&path, 0), (Some(2 * MIB), Some(0)));
        }
    }
}

#[test]
fn trims_show_in_every_format() {
    let dir = tempdir();
    let path = dir.path().join("data");
    data_file(&path, MIB);
    let file = path.to_str().unwrap();
    let base = [
        "run",
        file,
        "--rw",
        "randtrim",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--overwrite",
    ];
    let with = |format: &str| {
        let mut args = base.to_vec();
        args.extend(["--output-format", format]);
        let out = run(&args);
        succeeded(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let text = with("text");
    assert!(
        text.lines()
            .any(|l| l.contains(" trim ") && l.contains("randtrim")),
        "{text}"
    );
    let csv = with("csv");
    assert!(csv.lines().any(|l| l.contains(",trim,")), "{csv}");
    assert!(!csv.lines().any(|l| l.contains(",write,")), "{csv}");
    let markdown = with("markdown");
    assert!(markdown.contains("| trim |"), "{markdown}");
    let fio: serde_json::Value = serde_json::from_str(&with("fio-json")).unwrap();
    let job = &fio["jobs"][0];
    assert_eq!(u(&job["trim"]["total_ios"]), 256, "{job}");
    assert_eq!(u(&job["trim"]["io_bytes"]), MIB);
    assert_eq!(u(&job["write"]["total_ios"]), 0);
    assert_eq!(job["job options"]["rw"], "randtrim");
    // A document without trims keeps its shape: no trim object.
    let doc = run_json(&[file, "--rw", "read", "--size", "1m"]);
    assert!(doc["results"][0]["total"].get("trim").is_none());
}

#[test]
fn a_loop_device_passes_its_discards_to_the_image_under_it() {
    let Some(dev) = LoopDevice::new(8 * MIB, 4096) else {
        return;
    };
    let discards = std::fs::read_to_string(format!(
        "/sys/block/{}/queue/discard_max_bytes",
        dev.path.trim_start_matches("/dev/")
    ))
    .unwrap_or_default();
    if discards.trim() == "0" {
        eprintln!("SKIP: this loop device takes no discards");
        return;
    }
    let doc = run_json(&[
        &dev.path,
        "--rw",
        "write",
        "--bs",
        "1m",
        "--i-know-this-destroys-data",
    ]);
    assert_eq!(u(&doc["results"][0]["total"]["write"]["bytes"]), 8 * MIB);
    let image = dev.image().to_path_buf();
    assert_eq!(first_hole_and_data(&image, 0).1, Some(0));
    for (engine, rw) in [("io_uring", "randtrim"), ("sync", "trim")] {
        let doc = run_json(&[
            &dev.path,
            "--rw",
            rw,
            "--bs",
            "64k",
            "--size",
            "2m",
            "--offset",
            "4m",
            "--engine",
            engine,
            "--i-know-this-destroys-data",
        ]);
        let t = &doc["results"][0]["targets"][0];
        assert_eq!(t["facts"]["device"]["discards"], true, "{t}");
        assert!(u(&t["trim"]["ios"]) >= 32, "{engine}: {t}");
        assert_eq!(u(&t["errors"]["count"]), 0, "{engine}: {t}");
        // The device's own counters saw the discards. The kernel counts a
        // request just after it signals its completion, so the last one (at
        // depth 1) may not be counted yet when the run reads them.
        let disk = &doc["results"][0]["disks"][0];
        assert!(u(&disk["discard_ios"]) >= 31, "{engine}: {disk}");
        assert!(
            u(&disk["discard_bytes"]) >= 2 * MIB - 64 * 1024,
            "{engine}: {disk}"
        );
    }
    // The image holds data before the trimmed range and a hole in it.
    assert_eq!(seek(&image, 4 * MIB, libc::SEEK_HOLE), Some(4 * MIB));
    assert_eq!(seek(&image, 4 * MIB, libc::SEEK_DATA), Some(6 * MIB));
}

#[test]
fn what_cannot_be_trimmed_is_refused_before_anything_runs() {
    let dir = tempdir();
    let target = dir.path().join("new");
    let t = target.to_str().unwrap();
    refused(
        &["run", t, "--rw", "trim", "--verify", "--size", "1m"],
        "--verify",
    );
    refused(
        &["run", t, "--rw", "randtrim", "--hipri", "--size", "1m"],
        "--hipri",
    );
    refused(&["run", t, "--rw", "trimread"], "unknown rw");
    assert!(!target.exists(), "nothing created");
}

#[test]
fn fio_trim_jobs_run_as_fio_runs_them() {
    let dir = tempdir();
    let path = dir.path().join("data");
    data_file(&path, 2 * MIB);
    for rw in ["trimwrite", "randtrimwrite"] {
        let job = dir.path().join("t.fio");
        std::fs::write(
            &job,
            format!(
                "[tw]\nfilename={}\nrw={rw}\nbs=64k\nsize=1m\nioengine=io_uring\n",
                path.display()
            ),
        )
        .unwrap();
        let out = fathom()
            .args([
                "run",
                job.to_str().unwrap(),
                "--overwrite",
                "--output-format",
                "fio-json",
            ])
            .output()
            .unwrap();
        let doc = json_out(&out);
        let job = &doc["jobs"][0];
        // What fio 3.33 does with this job on a device (it cannot trim a
        // file): 16 trims and 16 writes.
        assert_eq!(u(&job["trim"]["total_ios"]), 16, "{rw}: {job}");
        assert_eq!(u(&job["write"]["total_ios"]), 16, "{rw}: {job}");
    }
}
