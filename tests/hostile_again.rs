//! The second hostile-input pass: each test is one way a hostile or careless
//! user made fathom destroy data, hang, or report a wrong number without a
//! word. The number in each test's comment is the item's number in that
//! pass.

mod common;

use common::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

fn random_file(path: &Path, len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ len as u64;
    for b in bytes.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    std::fs::write(path, &bytes).unwrap();
    bytes
}

fn set_xattr(path: &Path, name: &str, value: &[u8]) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: NUL-terminated strings and a buffer of its length.
    unsafe { libc::setxattr(p.as_ptr(), n.as_ptr(), value.as_ptr().cast(), value.len(), 0) == 0 }
}

fn randwrite(path: &Path) -> std::process::Output {
    run(&[
        "run",
        path.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--runtime",
        "1s",
        "--size",
        "1m",
    ])
}

// 1. A forged mark, or the mark of a kept file copied onto a user's copy,
// does not make a file fathom's.
#[test]
fn a_forged_or_copied_keep_mark_does_not_make_a_file_fathoms() {
    let dir = tempdir();
    let precious = dir.path().join("precious.db");
    let bytes = random_file(&precious, 1 << 20);
    if !set_xattr(&precious, "user.fathom.kept", b"1048576") {
        eprintln!("SKIP: no user extended attributes here");
        return;
    }
    let out = randwrite(&precious);
    assert_eq!(out.status.code(), Some(2), "a forged mark let fathom write");
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "did not create");
    assert_eq!(std::fs::read(&precious).unwrap(), bytes);

    // A file fathom kept is its own; a copy of it, mark and all, is not.
    let kept_dir = dir.path().join("kept");
    std::fs::create_dir(&kept_dir).unwrap();
    run_ok(&[
        "run",
        kept_dir.to_str().unwrap(),
        "--size",
        "1m",
        "--runtime",
        "1s",
        "--keep",
    ]);
    let kept = kept_dir.join(&entries(&kept_dir)[0]);
    succeeded(&randwrite(&kept));
    let copy = dir.path().join("copy.db");
    let cp = Command::new("cp").arg("-a").arg(&kept).arg(&copy).status();
    assert!(cp.unwrap().success());
    let before = std::fs::read(&copy).unwrap();
    let out = randwrite(&copy);
    assert_eq!(out.status.code(), Some(2), "a copied mark let fathom write");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

/// A loop device holding what `make` puts on its image.
fn device_with(make: impl FnOnce(&Path)) -> Option<LoopDevice> {
    let dev = LoopDevice::new(64 << 20, 512)?;
    make(dev.image());
    // The loop device reads the image through its own page cache.
    let _ = Command::new("blockdev")
        .args(["--flushbufs", &dev.path])
        .status();
    Some(dev)
}

fn poke(image: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(image).unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

fn mkfs(tool: &str, args: &[&str], image: &Path) -> bool {
    let ok = Command::new(tool)
        .args(args)
        .arg(image)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP: {tool} unavailable or failed");
    }
    ok
}

// 2. Signatures that fathom's own list missed are found by libblkid's probe
// (or fathom's list), through run, fio job files and pts.
#[test]
fn every_signature_libblkid_knows_is_refused_and_named() {
    type Make = fn(&Path) -> bool;
    let cases: [(&str, Make); 6] = [
        ("minix", |i| mkfs("mkfs.minix", &[], i)),
        ("BFS", |i| mkfs("mkfs.bfs", &[], i)),
        ("Oracle ASM", |i| {
            poke(i, 32, b"ORCLDISK");
            true
        }),
        ("exFAT", |i| {
            // A boot sector without its 0x55AA signature.
            poke(i, 3, b"EXFAT   ");
            true
        }),
        ("cramfs", |i| {
            // cramfs's superblock: its magic, then "Compressed ROMFS".
            poke(i, 0, &0x28cd_3d45u32.to_le_bytes());
            poke(i, 16, b"Compressed ROMFS");
            true
        }),
        ("ext2/ext3/ext4 file system at 2 MiB", |i| {
            mkfs("mkfs.ext4", &["-q", "-F", "-E", "offset=2097152"], i)
        }),
    ];
    for (name, make) in cases {
        let mut made = false;
        let Some(dev) = device_with(|i| made = make(i)) else {
            return;
        };
        if !made {
            continue;
        }
        let before = std::fs::read(dev.image()).unwrap();
        let out = run(&[
            "run", &dev.path, "--rw", "randwrite", "--runtime", "1s", "--size", "1m",
        ]);
        assert_eq!(out.status.code(), Some(2), "{name} was written");
        names_the_problem(&String::from_utf8_lossy(&out.stderr), name);
        assert!(std::fs::read(dev.image()).unwrap() == before, "{name}: image changed");
    }
    // The same rule for a fio job file and for pts.
    let Some(dev) = device_with(|i| {
        poke(i, 32, b"ORCLDISK");
    }) else {
        return;
    };
    let dir = tempdir();
    let job = dir.path().join("dev.fio");
    std::fs::write(
        &job,
        format!("[w]\nfilename={}\nrw=randwrite\nsize=1m\nruntime=1\n", dev.path),
    )
    .unwrap();
    // A job file's notes may come before the refusal.
    let out = run(&["run", job.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to write: it carries an Oracle ASM disk"));
    refused(
        &["pts", "iops", &dev.path, "--round", "1s", "--block-sizes", "4k"],
        "Oracle ASM",
    );
}
