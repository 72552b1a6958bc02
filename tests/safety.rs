//! fathom does not destroy data it was not told to: existing files need
//! --overwrite, devices with signs of data need --i-know-this-destroys-data,
//! and writes never leave [offset, offset + size).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use std::process::Command;

#[test]
fn existing_files_need_overwrite_for_writes() {
    let dir = tempdir();
    let file = dir.path().join("precious");
    std::fs::write(&file, vec![7u8; 256 << 10]).unwrap();
    let f = file.to_str().unwrap();
    for rw in ["write", "randwrite", "randrw", "readwrite"] {
        refused(&["run", f, "--rw", rw], "--overwrite");
    }
    assert_eq!(
        std::fs::read(&file).unwrap(),
        vec![7u8; 256 << 10],
        "untouched"
    );
    // Reading is always allowed, and leaves the file as it was.
    run_json(&[f, "--rw", "randread"]);
    assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 256 << 10]);
    run_json(&[f, "--rw", "randwrite", "--overwrite"]);
    assert_ne!(std::fs::read(&file).unwrap(), vec![7u8; 256 << 10]);
    assert!(
        file.exists(),
        "a file fathom did not create is never removed"
    );
}

#[test]
fn writes_stay_inside_offset_and_size() {
    const SENTINEL: u8 = 0xA5;
    let dir = tempdir();
    let file = dir.path().join("sentinels");
    let f = file.to_str().unwrap();
    let (offset, size) = (64 << 10, 500 << 10); // 500k: not a multiple of bs
    let region_end = offset + (size / 16384) * 16384;
    for (rw, extra) in [
        ("write", "1"),
        ("randwrite", "2"),
        ("randrw", "3"),
        ("readwrite", "2"),
    ] {
        std::fs::write(&file, vec![SENTINEL; 1 << 20]).unwrap();
        run_json(&[
            f,
            "--rw",
            rw,
            "--bs",
            "16k",
            "--offset",
            "64k",
            "--size",
            "500k",
            "--numjobs",
            extra,
            "--iodepth",
            "4",
            "--overwrite",
            "--runtime",
            "300ms",
        ]);
        let data = std::fs::read(&file).unwrap();
        assert_eq!(data.len(), 1 << 20, "{rw}: file not extended");
        assert!(
            data[..offset].iter().all(|&b| b == SENTINEL),
            "{rw}: wrote before --offset"
        );
        assert!(
            data[region_end..].iter().all(|&b| b == SENTINEL),
            "{rw}: wrote past the region"
        );
        assert!(
            data[offset..region_end].iter().any(|&b| b != SENTINEL),
            "{rw}: wrote nothing"
        );
    }
}

fn mkfs_ext4(dev: &str) -> bool {
    match Command::new("mkfs.ext4").args(["-q", "-F", dev]).status() {
        Ok(s) if s.success() => true,
        _ => {
            eprintln!("SKIP: mkfs.ext4 unavailable or failed");
            false
        }
    }
}

/// Under fio's language a device that holds data stays refused, and the
/// refusal names fio's ways to say yes, each of which works: the job's
/// `allow_mounted_write=1` and, for a tool that runs fio and passes no
/// flags of fathom's, FATHOM_I_KNOW_THIS_DESTROYS_DATA=1.
#[test]
fn a_device_holding_data_is_written_under_fios_language_only_when_told_in_it() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    if !mkfs_ext4(&dev.path) {
        return;
    }
    let dir = tempdir();
    let fio = |extra: &[&str], env: Option<&str>| {
        let mut c = fathom();
        c.current_dir(dir.path())
            .env_remove("FATHOM_I_KNOW_THIS_DESTROYS_DATA")
            .args(["fio", "--name=w", "--rw=write", "--size=1m", "--offset=8m"])
            .arg(format!("--filename={}", dev.path))
            .args(extra);
        if let Some(v) = env {
            c.env("FATHOM_I_KNOW_THIS_DESTROYS_DATA", v);
        }
        c.output().unwrap()
    };
    let out = fio(&[], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    names_the_problem(&err, "allow_mounted_write=1");
    assert!(err.contains("FATHOM_I_KNOW_THIS_DESTROYS_DATA=1"), "{err}");
    let probe = Command::new("blkid").arg(&dev.path).output().unwrap();
    assert!(
        String::from_utf8_lossy(&probe.stdout).contains("ext4"),
        "file system intact"
    );
    for (extra, env) in [
        (&["--allow_mounted_write=1"][..], None),
        (&[][..], Some("1")),
    ] {
        let out = fio(extra, env);
        assert!(
            out.status.success(),
            "{extra:?} {env:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_blank_device_needs_the_flag_and_a_file_system_is_named() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    // No signature is not proof of no data: a blank device is written only
    // when told.
    refused(
        &["run", &dev.path, "--rw", "randwrite", "--size", "1m"],
        "no signature on it does not make it free",
    );
    run_json(&[
        &dev.path,
        "--rw",
        "randwrite",
        "--size",
        "1m",
        "--i-know-this-destroys-data",
    ]);
    if !mkfs_ext4(&dev.path) {
        return;
    }
    refused(&["run", &dev.path, "--rw", "randwrite"], "ext2/ext3/ext4");
    refused(
        &["run", &dev.path, "--rw", "randrw"],
        "--i-know-this-destroys-data",
    );
    // A trim destroys data as a write does.
    for rw in ["trim", "randtrim", "trimwrite", "randtrimwrite"] {
        refused(&["run", &dev.path, "--rw", rw], "ext2/ext3/ext4");
    }
    // Reading is always allowed.
    run_json(&[&dev.path, "--rw", "randread", "--size", "1m"]);
    let probe = Command::new("blkid").arg(&dev.path).output().unwrap();
    assert!(
        String::from_utf8_lossy(&probe.stdout).contains("ext4"),
        "file system intact"
    );
    // Told explicitly, fathom writes.
    run_json(&[
        &dev.path,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "2m",
        "--i-know-this-destroys-data",
    ]);
}

#[test]
fn partition_tables_and_mounts_are_named() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    write_at(&dev.path, &[(512, b"EFI PART")]);
    refused(&["run", &dev.path, "--rw", "write"], "GPT");
    if !mkfs_ext4(&dev.path) {
        return;
    }
    let mnt = tempdir();
    let Some(_mounted) = mount(&dev.path, mnt.path()) else {
        return;
    };
    refused(&["run", &dev.path, "--rw", "write"], "is mounted on");
    // A live file system takes more than a stale signature does.
    refused(
        &[
            "run",
            &dev.path,
            "--rw",
            "write",
            "--i-know-this-destroys-data",
        ],
        "--even-if-mounted",
    );
    let out = run(&[
        "run",
        &dev.path,
        "--rw",
        "write",
        "--offset",
        "12m",
        "--size",
        "64k",
        "--i-know-this-destroys-data",
        "--even-if-mounted",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("writing anyway, as told: loop") && err.contains("is mounted on"),
        "{err}"
    );
}

#[test]
fn an_override_says_what_it_overrides_before_writing() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    if !mkfs_ext4(&dev.path) {
        return;
    }
    let out = run(&[
        "run",
        &dev.path,
        "--rw",
        "write",
        "--size",
        "64k",
        "--i-know-this-destroys-data",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "target {}: writing anyway, as told: it carries an ext2/ext3/ext4 file system",
            dev.path
        )),
        "{err}"
    );
    // A blank device needs no override, and none is announced.
    let Some(blank) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    let out = run(&["run", &blank.path, "--rw", "write", "--size", "64k"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("writing anyway"));
}

/// Writes `(offset, bytes)` pieces to a device and flushes them.
fn write_at(dev: &str, pieces: &[(u64, &[u8])]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    for (offset, bytes) in pieces {
        f.write_all_at(bytes, *offset).unwrap();
    }
    f.sync_all().unwrap();
}

/// A mount, undone when the guard goes.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Mounts `dev` on `dir`; None (with the reason printed) where it cannot.
fn mount(dev: &str, dir: &std::path::Path) -> Option<Mounted> {
    let mounted = Command::new("mount").arg(dev).arg(dir).status();
    if !matches!(mounted, Ok(s) if s.success()) {
        eprintln!("SKIP: cannot mount {dev} here");
        return None;
    }
    Some(Mounted(dir.to_path_buf()))
}

/// Swap turned on for as long as the guard lives.
struct SwapOn<'a>(&'a str);

impl Drop for SwapOn<'_> {
    fn drop(&mut self) {
        let _ = Command::new("swapoff").arg(self.0).status();
    }
}

#[test]
fn a_device_in_use_as_swap_is_named_as_such() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    let made = Command::new("mkswap").args(["-q", &dev.path]).status();
    if !matches!(made, Ok(s) if s.success()) {
        eprintln!("SKIP: mkswap unavailable or failed");
        return;
    }
    // Its signature alone is one reason; being swapped to is another.
    refused(
        &["run", &dev.path, "--rw", "write"],
        "it carries swap space",
    );
    let idle = run(&["run", &dev.path, "--rw", "write"]);
    assert!(!String::from_utf8_lossy(&idle.stderr).contains("in use as swap"));
    let on = Command::new("swapon").arg(&dev.path).status();
    if !matches!(on, Ok(s) if s.success()) {
        eprintln!("SKIP: cannot turn on swap here");
        return;
    }
    let _swap = SwapOn(&dev.path);
    let name = dev.path.trim_start_matches("/dev/");
    refused(
        &["run", &dev.path, "--rw", "write"],
        &format!("{name} is in use as swap"),
    );
}

#[test]
fn a_mounted_partition_is_named_when_its_disk_is_the_target() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    // One Linux partition, sectors 2048 to 18431, in an MBR.
    let mut entry = vec![0u8, 0, 0, 0, 0x83, 0, 0, 0];
    entry.extend(2048u32.to_le_bytes());
    entry.extend(16384u32.to_le_bytes());
    write_at(&dev.path, &[(446, &entry), (510, &[0x55, 0xAA])]);
    // partx adds the partition where the kernel has not already read the
    // table itself (and fails where it has): what counts is that it is there.
    let _ = Command::new("partx").args(["-a", &dev.path]).status();
    let part = format!("{}p1", dev.path);
    let name = part.trim_start_matches("/dev/");
    let sectors =
        std::fs::read_to_string(format!("/sys/class/block/{name}/size")).unwrap_or_default();
    if sectors.trim() != "16384" {
        eprintln!("SKIP: the kernel does not show partitions of a loop device here");
        return;
    }
    if !mkfs_ext4(&part) {
        return;
    }
    let mnt = tempdir();
    let Some(_mounted) = mount(&part, mnt.path()) else {
        return;
    };
    refused(
        &["run", &dev.path, "--rw", "write"],
        &format!("{name} is mounted on {}", mnt.path().display()),
    );
}

/// falloc's reads allocate a file's holes: they change the file, so they
/// are refused under fio's --readonly, and by `fathom run` on a file
/// fathom did not make without --overwrite, as writes are.
#[test]
fn falloc_reads_change_a_file_and_are_refused_as_writes() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempdir();
    let file = dir.path().join("u.dat");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let blocks = std::fs::metadata(&file).unwrap().blocks();
    let f = format!("--filename={}", file.display());
    let job = [
        "fio",
        "--name=a",
        &f,
        "--size=1m",
        "--rw=read",
        "--ioengine=falloc",
    ];
    refused(&[&job[..], &["--readonly"]].concat(), "--readonly");
    let f = file.to_str().unwrap();
    refused(
        &[
            "run", f, "--size", "1m", "--rw", "read", "--engine", "falloc",
        ],
        "--overwrite",
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().blocks(),
        blocks,
        "holes allocated"
    );
}
