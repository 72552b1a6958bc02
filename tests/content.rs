//! What is written: compressible and dedupable data, zeros and patterns,
//! measured afterwards with real compressors; verification with repeated
//! blocks; and a compressing file system that stores less of it.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::process::Command;

/// A write run of 12 MiB over a 64 MiB file with `extra` flags; its result.
fn written(dir: &std::path::Path, extra: &[&str]) -> Value {
    let target = dir.join("c.dat");
    let _ = std::fs::remove_file(&target);
    let mut args = vec![
        target.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--size",
        "64m",
        "--io-size",
        "12m",
        "--iodepth",
        "4",
    ];
    args.extend_from_slice(extra);
    run_json(&args)["results"][0].clone()
}

fn within(measured: f64, asked: f64, share: f64) -> bool {
    (measured / asked - 1.0).abs() <= share
}

#[test]
fn each_content_mode_achieves_what_it_asked_for() {
    let dir = tempdir();
    let cases: [(&[&str], f64, f64); 5] = [
        (&[], 1.0, 1.0),
        (&["--compress", "50"], 2.0, 1.0),
        (&["--compress", "75", "--compress-chunk", "4k"], 4.0, 1.0),
        (&["--dedupe", "30"], 1.0, 1.0 / 0.7),
        (&["--compress", "50", "--dedupe", "30"], 2.0, 1.0 / 0.7),
    ];
    for (flags, compress, dedupe) in cases {
        let r = written(dir.path(), flags);
        let data = &r["data"];
        assert!(f(&data["sampled_bytes"]) >= (8 << 20) as f64, "{data}");
        let zstd = f(&data["compress_zstd"]);
        let lz4 = f(&data["compress_lz4"]);
        let d = f(&data["dedupe"]);
        assert!(within(zstd, compress, 0.05), "{flags:?}: zstd {zstd}");
        assert!(within(lz4, compress, 0.05), "{flags:?}: lz4 {lz4}");
        assert!(within(d, dedupe, 0.05), "{flags:?}: dedupe {d}");
        assert!(within(f(&data["asked_compress"]), compress, 0.001));
        // Nothing reducible was asked of the plain run, and nothing warned.
        let warned = r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "reducible_data");
        assert!(!warned, "{flags:?}");
    }
    let zeros = written(dir.path(), &["--pattern", "zeros"]);
    assert!(f(&zeros["data"]["compress_zstd"]) > 50.0);
    assert!(f(&zeros["data"]["dedupe"]) > 1000.0);
    assert!(zeros["data"].get("asked_compress").is_none());
    let text = String::from_utf8(
        run_ok(&[
            "run",
            dir.path().join("t.dat").to_str().unwrap(),
            "--rw",
            "randwrite",
            "--size",
            "8m",
            "--io-size",
            "4m",
            "--compress",
            "50",
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        text.contains("data: compress ") && text.contains("(asked 2:1; lz4 "),
        "{text}"
    );
}

#[test]
fn verify_finds_every_block_when_blocks_repeat() {
    let dir = tempdir();
    for flags in [
        &["--dedupe", "50"][..],
        &["--pattern", "zeros"],
        &["--pattern", "0xdeadbeef"],
        &["--compress", "60", "--dedupe", "40"],
    ] {
        let r = written(dir.path(), &[flags, &["--verify"]].concat());
        let t = &r["targets"][0];
        assert_eq!(
            t["verify"]["intact"], t["verify"]["checked"],
            "{flags:?}: {}",
            t["verify"]
        );
        assert!(u(&t["verify"]["checked"]) > 0, "{flags:?}: {}", t["verify"]);
    }
}

#[test]
fn bad_content_is_refused_naming_the_knob() {
    let dir = tempdir();
    let target = dir.path().join("x.dat");
    let t = target.to_str().unwrap();
    for (flags, needle) in [
        (&["--compress", "101"][..], "--compress"),
        (&["--dedupe", "200"], "--dedupe"),
        (&["--pattern", "0xabc"], "--pattern"),
        (&["--pattern", "banana"], "--pattern"),
        (&["--compress", "50", "--pattern", "zeros"], "--compress"),
        (&["--dedupe-working-set", "0"], "--dedupe-working-set"),
    ] {
        let mut args = vec!["run", t, "--rw", "randwrite", "--size", "1m"];
        args.extend_from_slice(flags);
        refused(&args, needle);
        assert!(!target.exists(), "{flags:?} created the target");
    }
}

#[test]
fn fios_content_options_translate() {
    let dir = tempdir();
    let job = dir.path().join("c.fio");
    std::fs::write(
        &job,
        format!(
            "[c]\nfilename={}\nrw=randwrite\nsize=8m\nio_size=4m\nbuffer_compress_percentage=50\ndedupe_percentage=20\n",
            dir.path().join("f.dat").display()
        ),
    )
    .unwrap();
    let doc = run_json(&[job.to_str().unwrap()]);
    let spec = &doc["results"][0]["spec"]["content"];
    assert_eq!(spec["compress_pct"], 50);
    assert_eq!(spec["dedupe_pct"], 20);
}

/// On btrfs mounted with compress=zstd, data written --compress 75 takes
/// clearly less room than incompressible data.
#[test]
fn a_compressing_file_system_stores_compressible_data_in_less_room() {
    if Command::new("mkfs.btrfs")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIP: no mkfs.btrfs (apt-get install btrfs-progs)");
        return;
    }
    let btrfs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !btrfs.contains("btrfs") {
        eprintln!("SKIP: this kernel has no btrfs");
        return;
    }
    let Some(dev) = LoopDevice::new(256 << 20, 512) else {
        return;
    };
    let mkfs = Command::new("mkfs.btrfs")
        .args(["-q", "-f", &dev.path])
        .output()
        .unwrap();
    assert!(
        mkfs.status.success(),
        "{}",
        String::from_utf8_lossy(&mkfs.stderr)
    );
    let mnt = tempdir();
    let mounted = Command::new("mount")
        .args(["-o", "compress-force=zstd", &dev.path])
        .arg(mnt.path())
        .status()
        .unwrap();
    if !mounted.success() {
        eprintln!("SKIP: cannot mount btrfs here");
        return;
    }
    // KiB the file system has in use, once everything written is on disk.
    let in_use = || -> u64 {
        Command::new("sync").status().unwrap();
        let _ = Command::new("btrfs")
            .args(["filesystem", "sync"])
            .arg(mnt.path())
            .status();
        let df = Command::new("df")
            .args(["-k", "--output=used"])
            .arg(mnt.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&df.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .unwrap()
    };
    let write = |name: &str, flags: &[&str]| {
        let file = mnt.path().join(name);
        let mut args = vec![
            "run",
            file.to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "128k",
            "--size",
            "48m",
            "--buffered",
            "--fsync",
            "64",
            "--keep",
        ];
        args.extend_from_slice(flags);
        run_ok(&args);
    };
    let base = in_use();
    write("random.dat", &[]);
    let with_random = in_use();
    write(
        "compressible.dat",
        &["--compress", "75", "--compress-chunk", "4k"],
    );
    let with_both = in_use();
    let (random, compressible) = (with_random - base, with_both - with_random);
    unmount(mnt.path());
    assert!(
        (compressible as f64) < random as f64 * 0.5,
        "--compress 75 took {compressible} KiB, random data {random} KiB"
    );
}
