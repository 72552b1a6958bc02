//! `--uncached` (RWF_DONTCACHE) and `--atomic` (RWF_ATOMIC), flags of each
//! read and write: checked against what the target's file system or
//! device reports before anything is created, refused in one line where
//! it lacks them, and passed to the kernel where it has them; fio's
//! `uncached` and `atomic` options say the same.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Pages of `path` in the page cache, by mincore(2) over a mapping of it.
fn resident_pages(path: &Path) -> (usize, usize) {
    let file = File::open(path).unwrap();
    let len = file.metadata().unwrap().len() as usize;
    let page = 4096;
    let pages = len.div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: a read-only shared mapping of a file this frame holds open,
    // unmapped before it returns; mincore writes one byte per page.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(map, libc::MAP_FAILED);
        assert_eq!(libc::mincore(map, len, vec.as_mut_ptr()), 0);
        libc::munmap(map, len);
    }
    (vec.iter().filter(|b| *b & 1 == 1).count(), pages)
}

/// A 32 MiB file of the test's own, on the disk, out of the page cache.
fn uncached_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("data.bin");
    let mut f = File::create(&path).unwrap();
    let chunk: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for _ in 0..32 {
        f.write_all(&chunk).unwrap();
    }
    f.sync_all().unwrap();
    // SAFETY: a plain syscall on a descriptor this frame owns.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    path
}

#[test]
fn uncached_reads_leave_the_file_out_of_the_page_cache_and_buffered_reads_do_not() {
    let dir = tempdir();
    let path = uncached_file(dir.path());
    let p = path.to_str().unwrap();
    let (before, pages) = resident_pages(&path);
    let read = [
        "--rw",
        "read",
        "--bs",
        "128k",
        "--io-size",
        "32m",
        "--buffered",
    ];
    let mut args = vec!["run", p, "--uncached", "--output-format", "json"];
    args.extend_from_slice(&read);
    let out = run(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && err.contains("does not drop pages") {
        eprintln!("SKIP: the file system under the test directory has no RWF_DONTCACHE: {err}");
        return;
    }
    succeeded(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["spec"]["uncached"], true);
    assert_eq!(u(&doc["results"][0]["total"]["read"]["ios"]), 256);
    let (uncached, _) = resident_pages(&path);
    // Readahead may leave some pages behind; the flagged reads do not.
    assert!(
        uncached < pages / 2,
        "{uncached} of {pages} pages cached after uncached reads (before: {before})"
    );
    let mut args = vec!["run", p];
    args.extend_from_slice(&read);
    succeeded(&run(&args));
    let (buffered, _) = resident_pages(&path);
    assert!(
        buffered > pages * 9 / 10,
        "{buffered} of {pages} pages cached after plain buffered reads"
    );
}

#[test]
fn uncached_where_the_file_system_keeps_every_page_is_refused_and_creates_nothing() {
    let dir = tempdir_in_shm();
    let file = dir.path().join("x.dat");
    let out = run(&[
        "run",
        file.to_str().unwrap(),
        "--uncached",
        "--buffered",
        "--size",
        "1m",
        "--rw",
        "randwrite",
    ]);
    if out.status.success() {
        eprintln!("SKIP: the file system under /dev/shm takes RWF_DONTCACHE");
        return;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--uncached: ") && err.contains("does not drop pages"),
        "{err}"
    );
    assert!(entries(dir.path()).is_empty(), "nothing created");
}

#[test]
fn atomic_writes_are_held_to_the_unit_the_target_reports() {
    let dir = tempdir();
    let file = dir.path().join("atomic.dat");
    let f = file.to_str().unwrap();
    let out = run(&[
        "run",
        f,
        "--atomic",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--io-size",
        "1m",
        "--output-format",
        "json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) {
        // ext4 and xfs report a unit only over a device with atomic writes.
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("--atomic: ") && err.contains("atomic write unit"),
            "{err}"
        );
        assert!(entries(dir.path()).is_empty(), "nothing created");
        eprintln!("SKIP the run itself: {err}");
        return;
    }
    succeeded(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["spec"]["atomic"], true);
    assert_eq!(u(&doc["results"][0]["total"]["write"]["ios"]), 256);
    // A size past the unit is refused before anything is written.
    refused(
        &[
            "run",
            f,
            "--atomic",
            "--rw",
            "randwrite",
            "--bs",
            "16m",
            "--size",
            "32m",
        ],
        "atomic write unit it reports",
    );
}

#[test]
fn per_io_flags_need_an_engine_that_passes_them_and_the_cache_mode_they_are_for() {
    let dir = tempdir();
    let f = dir.path().join("x.dat");
    let f = f.to_str().unwrap();
    for (extra, says) in [
        (
            vec!["--uncached", "--buffered", "--engine", "null"],
            "--uncached is a flag of each read and write: it needs --engine io_uring or sync",
        ),
        (
            vec!["--uncached"],
            "--uncached is for buffered I/O (add --buffered)",
        ),
        (
            vec!["--atomic", "--buffered"],
            "--atomic: the kernel takes atomic writes with --direct only",
        ),
        (
            vec!["--atomic", "--rw", "read"],
            "--atomic is a property of writes: --rw read writes nothing",
        ),
        (
            vec!["--atomic", "--bssplit", "4k/50:8k/50"],
            "not --bssplit",
        ),
    ] {
        let mut args = vec!["run", f, "--size", "1m"];
        if !extra.contains(&"--rw") {
            args.extend_from_slice(&["--rw", "randwrite"]);
        }
        args.extend_from_slice(&extra);
        refused(&args, says);
    }
    assert!(entries(dir.path()).is_empty(), "nothing created");
}

#[test]
fn fios_uncached_and_atomic_options_say_the_same() {
    let dir = tempdir();
    let path = uncached_file(dir.path());
    let p = path.to_str().unwrap();
    // Under direct=1 fio passes no RWF_DONTCACHE: the job runs as direct.
    let filename = format!("--filename={p}");
    let fio = |extra: &[&str]| {
        let mut args = vec![
            "fio",
            "--name=x",
            "--rw=read",
            "--bs=128k",
            "--size=32m",
            "--output-format=json",
        ];
        args.push(&filename);
        args.extend_from_slice(extra);
        run(&args)
    };
    let out = fio(&["--direct=1", "--uncached=1"]);
    succeeded(&out);
    // Buffered, it is the run's flag: the file stays out of the cache.
    let out = fio(&["--uncached=1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    if !(out.status.code() == Some(2) && err.contains("does not drop pages")) {
        succeeded(&out);
        let (cached, pages) = resident_pages(&path);
        assert!(cached < pages / 2, "{cached} of {pages} pages cached");
    }
    // A job that writes nothing leaves atomic off, as fio does.
    succeeded(&fio(&["--direct=1", "--atomic=1"]));
}
