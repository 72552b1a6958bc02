//! Careless and hostile use: each test is one way a user made fathom
//! destroy data, hang, or report a wrong number without a word (found by a
//! hostile review; the number in a test's comment is its item there), and
//! proves fathom now refuses it or does it right.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
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
    unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        ) == 0
    }
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

/// A small ext4 (1 KiB blocks, so its second group and a backup
/// superblock start at 8 MiB) is named once, as the file system it is,
/// not again as one "where a partition starts".
#[test]
fn a_file_systems_backup_superblock_is_not_a_second_file_system() {
    let mut made = false;
    let Some(dev) = device_with(|i| made = mkfs("mkfs.ext4", &["-q", "-F", "-b", "1024"], i))
    else {
        return;
    };
    if !made {
        return;
    }
    let out = run(&[
        "run",
        &dev.path,
        "--rw",
        "randwrite",
        "--runtime",
        "1s",
        "--size",
        "1m",
    ]);
    assert_eq!(out.status.code(), Some(2), "an ext4 device was written");
    let said = String::from_utf8_lossy(&out.stderr);
    names_the_problem(&said, "ext2/ext3/ext4 file system");
    assert_eq!(said.matches("ext2/ext3/ext4").count(), 1, "{said}");
    assert!(!said.contains("where a partition starts"), "{said}");
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
            "run",
            &dev.path,
            "--rw",
            "randwrite",
            "--runtime",
            "1s",
            "--size",
            "1m",
        ]);
        assert_eq!(out.status.code(), Some(2), "{name} was written");
        names_the_problem(&String::from_utf8_lossy(&out.stderr), name);
        assert!(
            std::fs::read(dev.image()).unwrap() == before,
            "{name}: image changed"
        );
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
        format!(
            "[w]\nfilename={}\nrw=randwrite\nsize=1m\nruntime=1\n",
            dev.path
        ),
    )
    .unwrap();
    // A job file's notes may come before the refusal.
    let out = run(&["run", job.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("refusing to write: it carries an Oracle ASM disk")
    );
    refused(
        &[
            "pts",
            "iops",
            &dev.path,
            "--round",
            "1s",
            "--block-sizes",
            "4k",
        ],
        "Oracle ASM",
    );
}

/// Runs fathom with `args`, killing it if it has not ended within
/// `seconds`: a hang fails the test instead of holding the suite.
fn run_within(seconds: u64, args: &[&str]) -> std::process::Output {
    let mut child = fathom()
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "fathom {args:?} hung for {seconds} s: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A second of the null engine, its result written to `out`.
fn null_result(out: &Path) {
    run_ok(&[
        "run",
        "--engine",
        "null",
        "--runtime",
        "1s",
        "--size",
        "1m",
        "-o",
        out.to_str().unwrap(),
    ]);
}

fn csv_trace(path: &Path, n: u64) {
    let mut text = String::from("time_ns,offset,length,rw\n");
    for i in 0..n {
        text.push_str(&format!("{},{},4096,read\n", i * 1_000_000, i * 4096));
    }
    std::fs::write(path, text).unwrap();
}

// A device node whose name starts with '-' is a path to libblkid, not an
// option: a ceph BlueStore signature (libblkid's alone) on a node named
// `-h` is refused as it is under the device's own name.
#[test]
fn a_device_named_like_an_option_is_probed_as_a_device() {
    use std::os::unix::fs::MetadataExt;
    let Some(dev) = device_with(|i| poke(i, 0, b"bluestore block device\n")) else {
        return;
    };
    let rdev = std::fs::metadata(&dev.path).unwrap().rdev();
    let dir = tempdir();
    let made = Command::new("mknod")
        .current_dir(dir.path())
        .args(["--", "-h", "b"])
        .args([libc::major(rdev).to_string(), libc::minor(rdev).to_string()])
        .status()
        .ok()
        .filter(|s| s.success());
    if made.is_none() {
        eprintln!("SKIP: cannot make a device node here");
        return;
    }
    let before = std::fs::read(dev.image()).unwrap();
    let out = fathom()
        .current_dir(dir.path())
        .args([
            "run",
            "--rw",
            "randwrite",
            "--size",
            "1m",
            "--runtime",
            "1s",
            "--",
            "-h",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "the node named -h was written");
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "ceph_bluestore");
    assert!(
        std::fs::read(dev.image()).unwrap() == before,
        "the image changed"
    );
}

// A kept file that later became a file system on a loop device is the
// device: writing it needs --i-know-this-destroys-data, and once the
// device is mounted, --even-if-mounted as well (the keep mark survives
// mkfs, so it cannot be what decides).
#[test]
fn a_kept_file_backing_a_loop_device_is_written_only_as_that_device() {
    let dir = tempdir();
    let img = dir.path().join("img.dat");
    let img = img.to_str().unwrap();
    run_ok(&[
        "run", img, "--rw", "write", "--bs", "1m", "--size", "16m", "--keep",
    ]);
    if !mkfs("mkfs.ext4", &["-q", "-F"], Path::new(img)) {
        return;
    }
    let attached = Command::new("losetup")
        .args(["--find", "--show", img])
        .output();
    let Some(dev) = attached
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    else {
        eprintln!("SKIP: cannot attach a loop device");
        return;
    };
    let detach = Detach(dev.clone());
    let before = std::fs::read(img).unwrap();
    let write = |extra: &[&str]| {
        let mut args = vec![
            "run",
            img,
            "--rw",
            "randwrite",
            "--size",
            "16m",
            "--runtime",
            "1s",
        ];
        args.extend(extra);
        run(&args)
    };
    let out = write(&[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a file backing {dev} was written"
    );
    let said = String::from_utf8_lossy(&out.stderr);
    names_the_problem(&said, &format!("it backs the block device {dev}"));
    names_the_problem(&said, "ext2/ext3/ext4");
    assert!(std::fs::read(img).unwrap() == before, "the image changed");
    // (Mounting changes the image itself: only the refusal is checked.)
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if mount(&dev, &mnt) {
        let out = write(&["--i-know-this-destroys-data"]);
        unmount(&mnt);
        assert_eq!(
            out.status.code(),
            Some(2),
            "the file under a mounted {dev} was written"
        );
        names_the_problem(&String::from_utf8_lossy(&out.stderr), "--even-if-mounted");
    }
    drop(detach);
}

struct Detach(String);

impl Drop for Detach {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

fn mount(dev: &str, on: &Path) -> bool {
    Command::new("mount")
        .arg(dev)
        .arg(on)
        .status()
        .is_ok_and(|s| s.success())
}

// 3. A recording never replaces the trace being played, whatever names it:
// the same path, a symbolic link or a hard link.
#[test]
fn a_recording_never_replaces_the_trace_through_a_hard_link() {
    let dir = tempdir();
    let trace = dir.path().join("t.csv");
    csv_trace(&trace, 16);
    let before = std::fs::read(&trace).unwrap();
    let hard = dir.path().join("hard.trace");
    std::fs::hard_link(&trace, &hard).unwrap();
    let target = dir.path().join("data");
    refused(
        &[
            "replay",
            trace.to_str().unwrap(),
            target.to_str().unwrap(),
            "--record",
            hard.to_str().unwrap(),
        ],
        "the trace being played",
    );
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    assert!(!target.exists(), "nothing is created");
}

// 4. An output that is one of the inputs is refused: report's result file,
// through a link too, and a recording given as --output.
#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = tempdir();
    let r = dir.path().join("r.json");
    null_result(&r);
    let before = std::fs::read(&r).unwrap();
    refused(
        &["report", r.to_str().unwrap(), "-o", r.to_str().unwrap()],
        "that is the result file",
    );
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&r, &link).unwrap();
    refused(
        &["report", r.to_str().unwrap(), "-o", link.to_str().unwrap()],
        "that is the result file",
    );
    refused(
        &[
            "compare",
            r.to_str().unwrap(),
            r.to_str().unwrap(),
            "-o",
            link.to_str().unwrap(),
        ],
        "that is the result file",
    );
    assert_eq!(std::fs::read(&r).unwrap(), before);
    // --record X -o X: the recording would be replaced by the result.
    let rec = dir.path().join("x.trace");
    let target = dir.path().join("data");
    run_ok(&[
        "run",
        target.to_str().unwrap(),
        "--size",
        "1m",
        "--runtime",
        "1s",
        "--record",
        rec.to_str().unwrap(),
    ]);
    let recorded = std::fs::read(&rec).unwrap();
    refused(
        &[
            "run",
            target.to_str().unwrap(),
            "--size",
            "1m",
            "--runtime",
            "1s",
            "--record",
            rec.to_str().unwrap(),
            "-o",
            rec.to_str().unwrap(),
        ],
        "that is the --record file",
    );
    assert_eq!(std::fs::read(&rec).unwrap(), recorded);
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(p.as_ptr(), 0o600) }, 0);
}

// 7. A FIFO with no reader, as --output (run, report, --resume) or as
// --record, is refused at once instead of blocking in open() forever.
#[test]
fn a_fifo_without_a_reader_is_refused_not_waited_for() {
    let dir = tempdir();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let r = dir.path().join("r.json");
    null_result(&r);
    let null_run = ["run", "--engine", "null", "--runtime", "1s", "--size", "1m"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        ([&null_run[..], &["-o", f]].concat(), "no reader"),
        (vec!["report", r.to_str().unwrap(), "-o", f], "no reader"),
        (
            [
                &null_run[..],
                &["-o", f, "--resume", "--output-format", "json"],
            ]
            .concat(),
            "a FIFO",
        ),
        (
            [&null_run[..], &["--record", f]].concat(),
            "not a regular file",
        ),
    ];
    for (args, needle) in cases {
        let out = run_within(20, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        names_the_problem(&String::from_utf8_lossy(&out.stderr), needle);
    }
    // With a reader, the result goes through the FIFO whole.
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::read_to_string(fifo).unwrap()
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let out = run_within(
        30,
        &[&null_run[..], &["-o", f, "--output-format", "json"]].concat(),
    );
    succeeded(&out);
    let text = reader.join().unwrap();
    assert!(text.contains("\"fathom_version\""), "{text}");
}

// 8. Inputs that are not regular files are refused, not read without end.
#[test]
fn inputs_that_are_not_regular_files_are_refused() {
    let dir = tempdir();
    let target = dir.path().join("t.dat");
    for args in [
        vec!["report", "/dev/zero"],
        vec!["compare", "/dev/zero", "/dev/zero"],
        vec!["replay", "/dev/zero", target.to_str().unwrap()],
    ] {
        let out = run_within(20, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("a character device"),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let job = dir.path().join("iolog.fio");
    std::fs::write(
        &job,
        format!("[r]\nfilename={}\nread_iolog=/dev/zero\n", target.display()),
    )
    .unwrap();
    let out = run_within(20, &["run", job.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!target.exists());
}

/// The most memory (KiB) `fathom args` held at once, and whether it
/// succeeded: its own rusage, not the test process's other children's.
// The child is reaped by wait4, which gives its rusage; std's wait cannot.
#[allow(clippy::zombie_processes)]
fn peak_kib(args: &[&str]) -> (i64, bool) {
    let child = spawn_quiet(args);
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for the child spawned above, writing into locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    (
        usage.ru_maxrss,
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    )
}

// 8. A trace is streamed, not held: a replay of 400,000 I/Os takes about
// the memory of one of 1,000 (held, they took some 30 MiB more).
#[test]
fn a_long_trace_is_streamed_not_held_in_memory() {
    let dir = tempdir();
    let (short, long) = (dir.path().join("short.csv"), dir.path().join("long.csv"));
    csv_trace(&short, 1_000);
    csv_trace(&long, 400_000);
    let target = dir.path().join("t.dat");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let replay = |trace: &Path| {
        peak_kib(&[
            "replay",
            trace.to_str().unwrap(),
            target.to_str().unwrap(),
            "--engine",
            "null",
            "--as-fast-as-possible",
            "--wrap",
            "--overwrite",
        ])
    };
    let (small, ok_small) = replay(&short);
    let (large, ok_large) = replay(&long);
    assert!(ok_small && ok_large, "both replays run");
    assert!(
        large - small < 12 * 1024,
        "400,000 I/Os took {} KiB more than 1,000",
        large - small
    );
}

// 16. An --output that cannot be written is found before measuring, naming
// the path; a full file system leaves no temporary file behind.
#[test]
fn an_output_that_cannot_be_written_is_refused_before_measuring() {
    let Some(fs) = SmallTmpfs::new("64k") else {
        return;
    };
    let full = fs.dir.path().join("fill");
    let _ = std::fs::write(&full, vec![0u8; 64 << 10]);
    let out_path = fs.dir.path().join("r.json");
    let three_seconds_to = || {
        run(&[
            "run",
            "--engine",
            "null",
            "--runtime",
            "3s",
            "--size",
            "1m",
            "-o",
            out_path.to_str().unwrap(),
        ])
    };
    let started = std::time::Instant::now();
    let out = three_seconds_to();
    assert_eq!(out.status.code(), Some(2));
    assert!(started.elapsed().as_secs() < 3, "measured first");
    let err = String::from_utf8_lossy(&out.stderr);
    names_the_problem(&err, &fs.dir.path().display().to_string());
    assert!(err.contains("No space left"), "{err}");
    assert_eq!(entries(fs.dir.path()), ["fill"]);
    // Read-only: the same, named.
    let remount = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(fs.dir.path())
        .status();
    if remount.is_ok_and(|s| s.success()) {
        let _ = std::fs::remove_file(&full);
        let out = three_seconds_to();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        names_the_problem(&err, "Read-only file system");
        assert!(err.contains(&fs.dir.path().display().to_string()), "{err}");
    }
}

// 20. --record under /dev is the same rule as a target: no file is made there.
#[test]
fn a_recording_is_never_created_under_dev() {
    let dir = tempdir();
    let target = dir.path().join("data");
    refused(
        &[
            "run",
            target.to_str().unwrap(),
            "--size",
            "1m",
            "--runtime",
            "1s",
            "--record",
            "/dev/fathom-missing-recording",
        ],
        "under /dev",
    );
    assert!(!Path::new("/dev/fathom-missing-recording").exists());
}

// 22. -o x.json without --output-format writes JSON (csv, md, html alike).
#[test]
fn the_output_format_follows_the_extension() {
    let dir = tempdir();
    let json = dir.path().join("x.json");
    null_result(&json);
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        serde_json::from_str::<serde_json::Value>(&text).is_ok(),
        "{text}"
    );
    for (ext, starts) in [("csv", "system,"), ("md", "|"), ("html", "<!DOCTYPE html>")] {
        let p = dir.path().join(format!("x.{ext}"));
        run_ok(&["report", json.to_str().unwrap(), "-o", p.to_str().unwrap()]);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.trim_start().starts_with(starts), "{ext}: {text}");
    }
    // An explicit format wins over the extension.
    let t = dir.path().join("y.json");
    run_ok(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        t.to_str().unwrap(),
        "--output-format",
        "csv",
    ]);
    assert!(std::fs::read_to_string(&t).unwrap().starts_with("system,"));
}

// 5. --resume with other settings refuses, naming what differs, instead of
// dropping the earlier results.
#[test]
fn resume_with_other_settings_is_refused_naming_them() {
    let dir = tempdir();
    let r = dir.path().join("r.json");
    let base = ["run", "--engine", "null", "--runtime", "1s", "--size", "1m"];
    run_ok(&[&base[..], &["--name", "a", "-o", r.to_str().unwrap()]].concat());
    let before = std::fs::read(&r).unwrap();
    let out = run(&[
        &base[..],
        &["--name", "b", "-o", r.to_str().unwrap(), "--resume"],
    ]
    .concat());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    names_the_problem(&err, "--resume");
    assert!(err.contains("name \"a\" in the file, \"b\" now"), "{err}");
    assert_eq!(
        std::fs::read(&r).unwrap(),
        before,
        "the earlier result is kept"
    );
    // The same settings resume as before.
    succeeded(&run(&[
        &base[..],
        &["--name", "a", "-o", r.to_str().unwrap(), "--resume"],
    ]
    .concat()));
}

// 10. The clones of an fio job draw their own offsets.
#[test]
fn clones_of_an_fio_job_draw_their_own_offsets() {
    let dir = tempdir();
    let data = dir.path().join("data");
    let job = dir.path().join("clones.fio");
    std::fs::write(
        &job,
        format!(
            "[r]\nfilename={}\nrw=randread\nbs=4k\nsize=1m\nnorandommap\nnumjobs=2\nioengine=psync\n",
            data.display()
        ),
    )
    .unwrap();
    let rec = dir.path().join("clones.trace");
    let out = run(&[
        "run",
        job.to_str().unwrap(),
        "--record",
        rec.to_str().unwrap(),
    ]);
    succeeded(&out);
    let trace = fathom::trace::load(&rec).unwrap();
    let offsets: Vec<u64> = trace.ios.iter().map(|io| io.offset).collect();
    assert_eq!(offsets.len(), 512, "two clones of 256 reads");
    let distinct = offsets
        .iter()
        .collect::<std::collections::HashSet<_>>()
        .len();
    // Two independent draws of 256 over 256 blocks touch about 221 blocks;
    // one sequence drawn twice, about 162.
    assert!(distinct > 195, "{distinct} distinct offsets of 512 reads");
    // The seeds each clone drew with are in the result.
    let doc = run_json(&[job.to_str().unwrap()]);
    let streams = doc["results"][0]["streams"].as_array().unwrap();
    let seeds: Vec<&serde_json::Value> = streams.iter().map(|s| &s["spec"]["seed"]).collect();
    assert_eq!(seeds.len(), 2);
    assert_ne!(seeds[0], seeds[1], "{seeds:?}");
}

// 11. One target given twice (the same path, ./path, a link) is refused.
#[test]
fn a_target_given_twice_is_refused() {
    let dir = tempdir();
    let x = dir.path().join("x");
    std::fs::write(&x, vec![0u8; 1 << 20]).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&x, &link).unwrap();
    let dotted = format!("{}/./x", dir.path().display());
    for second in [x.to_str().unwrap(), &dotted, link.to_str().unwrap()] {
        refused(
            &[
                "run",
                x.to_str().unwrap(),
                second,
                "--runtime",
                "1s",
                "--size",
                "1m",
            ],
            "are the same file",
        );
    }
    // A file still to be created, named twice.
    let new = dir.path().join("new");
    refused(
        &[
            "run",
            new.to_str().unwrap(),
            &format!("{}/./new", dir.path().display()),
            "--runtime",
            "1s",
        ],
        "are the same file",
    );
    assert!(!new.exists());
}

// 12. A read-only --verify that finds no fathom block is "nothing checked",
// exit 1; a block an in-order pass wrote and that is gone is a failure.
#[test]
fn a_read_only_verify_fails_what_it_cannot_check_or_no_longer_finds() {
    let dir = tempdir();
    let zeros = dir.path().join("zeros");
    std::fs::write(&zeros, vec![0u8; 1 << 20]).unwrap();
    let out = run(&[
        "run",
        zeros.to_str().unwrap(),
        "--rw",
        "read",
        "--size",
        "1m",
        "--verify",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NOTHING CHECKED"));

    let stamped = dir.path().join("stamped");
    run_ok(&[
        "run",
        stamped.to_str().unwrap(),
        "--rw",
        "write",
        "--size",
        "1m",
        "--verify",
        "--keep",
    ]);
    let read_only = [
        "run",
        stamped.to_str().unwrap(),
        "--rw",
        "read",
        "--size",
        "1m",
        "--verify",
    ];
    succeeded(&run(&read_only));
    // Zero three blocks in the middle: lost, not "never written".
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&stamped)
        .unwrap();
    f.write_all_at(&[0u8; 3 * 4096], 10 * 4096).unwrap();
    f.sync_all().unwrap();
    let out = run(&read_only);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("3 of 256 blocks failed") && err.contains("offset 40960"),
        "{err}"
    );
}

// 14. Workloads that differ only in their seed each keep their row in text,
// markdown and html.
#[test]
fn workloads_that_differ_only_in_seed_each_keep_their_row() {
    let dir = tempdir();
    let job = dir.path().join("seeds.toml");
    std::fs::write(
        &job,
        format!(
            "[defaults]\nengine = \"null\"\nsize = \"1m\"\nruntime = \"1s\"\ntargets = [\"{}\"]\n\
             [workload.w]\nseed = 1\n[workload.w2]\nname = \"w\"\nseed = 2\n",
            dir.path().join("t").display()
        ),
    )
    .unwrap();
    let r = dir.path().join("s.json");
    run_ok(&["run", job.to_str().unwrap(), "-o", r.to_str().unwrap()]);
    let text = String::from_utf8(run_ok(&["report", r.to_str().unwrap()]).stdout).unwrap();
    let rows = text.lines().filter(|l| l.contains("randread")).count();
    assert!(rows >= 2 && text.contains("seed"), "{text}");
    let md = String::from_utf8(
        run_ok(&["report", r.to_str().unwrap(), "--output-format", "markdown"]).stdout,
    )
    .unwrap();
    assert_eq!(
        md.lines()
            .filter(|l| l.starts_with("| 1 ") || l.starts_with("| 2 "))
            .count(),
        2,
        "{md}"
    );
    let html = String::from_utf8(
        run_ok(&["report", r.to_str().unwrap(), "--output-format", "html"]).stdout,
    )
    .unwrap();
    assert!(html.contains("<td>1</td>") && html.contains("<td>2</td>"));
}

// 17. A path that exists is a path, even with '=' in its name.
#[test]
fn a_path_with_an_equals_sign_is_a_path() {
    let dir = tempdir();
    let odd = dir.path().join("k=v.dat");
    std::fs::write(&odd, vec![7u8; 1 << 20]).unwrap();
    let doc = run_json(&[odd.to_str().unwrap(), "--runtime", "1s", "--size", "1m"]);
    let t = &doc["results"][0]["targets"][0];
    assert_eq!(t["name"], odd.to_str().unwrap(), "{t}");
    assert!(!dir.path().join("v.dat").exists() && !Path::new("v.dat").exists());
    // And a label is given in front of it.
    let labelled = format!("data={}", odd.display());
    let doc = run_json(&[&labelled, "--runtime", "1s", "--size", "1m"]);
    assert_eq!(doc["results"][0]["targets"][0]["name"], "data");
}

// 18. A rate under one I/O a second per worker (fio's `rate=300` bytes a
// second of 4k blocks) runs on its schedule: I/O n due at n / rate, each
// worker its share, and the table shows the rate that is not whole.
#[test]
fn a_rate_under_one_io_a_second_per_worker_runs_on_its_schedule() {
    // 0.5 a second for 3 s: due at 0 s and 2 s.
    let doc = run_json(&["--engine", "null", "--rate-iops", "0.5", "--runtime", "3s"]);
    let read = &doc["results"][0]["total"]["read"];
    assert_eq!(u(&read["ios"]), 2, "{read}");
    // 3 a second over 4 workers: 0.75 each, due at 0 s and 1.33 s of 2 s.
    let doc = run_json(&[
        "--engine",
        "null",
        "--rate-iops",
        "3",
        "--numjobs",
        "4",
        "--runtime",
        "2s",
    ]);
    let read = &doc["results"][0]["total"]["read"];
    assert_eq!(u(&read["ios"]), 8, "{read}");
    let saved = tempdir();
    let path = saved.path().join("slow.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = run_ok(&["report", path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(" 4 ") || text.contains(" 4.00 "), "{text}");
    let out = run(&[
        "run",
        "--engine",
        "null",
        "--rate-iops",
        "0",
        "--runtime",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

// 15. Trace times past a year and a day are refused, naming the line.
#[test]
fn absurd_trace_times_are_refused() {
    let dir = tempdir();
    let target = dir.path().join("t.dat");
    for (name, text, line) in [
        (
            "secs.csv",
            "time,offset,length,rw\n0,0,4096,read\n1e13,4096,4096,read\n",
            3,
        ),
        (
            "ns.csv",
            "time_ns,offset,length,rw\n0,0,4096,read\n18446744073709551615,4096,4096,read\n",
            3,
        ),
        (
            "v3.log",
            "fio version 3 iolog\n0 f add\n0 f open\n18446744073709551 f read 0 4096\n",
            4,
        ),
    ] {
        let trace = dir.path().join(name);
        std::fs::write(&trace, text).unwrap();
        let out = run(&["replay", trace.to_str().unwrap(), target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        names_the_problem(&err, &format!("{name}:{line}"));
        assert!(err.contains("more than a year"), "{err}");
        assert!(!target.exists());
    }
}

// 21. An offset O_DIRECT cannot take is refused before starting, naming the
// trace's line.
#[test]
fn an_unaligned_trace_under_o_direct_is_refused_naming_the_line() {
    let dir = tempdir();
    let trace = dir.path().join("t.csv");
    std::fs::write(
        &trace,
        "time,offset,length,rw\n0,0,4096,read\n0.001,1000,4096,read\n",
    )
    .unwrap();
    let target = dir.path().join("t.dat");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let out = run(&["replay", trace.to_str().unwrap(), target.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "t.csv:3");
    // Buffered, it plays.
    succeeded(&run(&[
        "replay",
        trace.to_str().unwrap(),
        target.to_str().unwrap(),
        "--buffered",
    ]));
}

// 13. The disks' counters cover the measured window however many workers
// start: the device cannot have done fewer reads than fathom measured.
#[test]
fn disk_counters_cover_the_window_at_a_thousand_workers() {
    let dir = tempdir();
    let data = dir.path().join("many");
    let doc = run_json(&[
        data.to_str().unwrap(),
        "--numjobs",
        "1000",
        "--runtime",
        "1s",
        "--size",
        "16m",
    ]);
    let w = &doc["results"][0];
    let Some(disk) = w["disks"].as_array().and_then(|d| d.first()) else {
        eprintln!("SKIP: no disk under {}", dir.path().display());
        return;
    };
    let ours = u(&w["total"]["read"]["ios"]);
    let theirs = u(&disk["read_ios"]) + u(&disk["read_merges"]);
    // The last completions may be accounted a moment after they are
    // signalled: a depth's worth per worker at most.
    assert!(
        theirs + 1000 >= ours,
        "the disk counted {theirs} reads where fathom measured {ours}"
    );
}

// fio's cap of 1,024 jobs is memory per job, not a histogram's 270 KiB
// dozens of times over: a job keeps counts only where it records (11.9 GB
// of resident memory for this run before, 132 MB after).
#[test]
// The child is reaped by wait4, for its own resource usage.
#[allow(clippy::zombie_processes)]
fn a_thousand_jobs_take_memory_for_what_they_record() {
    let dir = tempdir();
    let mut child = fathom()
        .current_dir(dir.path())
        .args([
            "fio",
            "--name=many",
            "--ioengine=null",
            "--size=1m",
            "--runtime=1s",
            "--time_based",
            "--numjobs=1024",
            "--output-format=json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The child's own peak, not the suite's other children's.
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    let mut out = child.stdout.take().unwrap();
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut out, &mut text).unwrap();
    let pid = child.id() as i32;
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    let doc: serde_json::Value = serde_json::from_slice(&text).unwrap();
    assert_eq!(doc["jobs"].as_array().unwrap().len(), 1024);
    let peak_mib = usage.ru_maxrss / 1024;
    assert!(peak_mib < 1024, "1,024 null jobs took {peak_mib} MiB");
}

// 23. A target that goes away mid-plan is a run failure (exit 1) with what
// was measured before it, not bad input (exit 2).
#[test]
fn a_target_gone_mid_plan_is_a_failure_with_what_was_measured() {
    let dir = tempdir();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let data = sub.join("x.dat");
    std::fs::write(&data, vec![1u8; 1 << 20]).unwrap();
    let r = dir.path().join("r.json");
    let child = fathom()
        .args([
            "run",
            data.to_str().unwrap(),
            "--bs",
            "4k,8k,16k",
            "--runtime",
            "1s",
            "--size",
            "1m",
            "-o",
            r.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the first run's result", || r.exists());
    // fathom may lay out the next run's file in `sub` while it is being
    // removed (ENOTEMPTY on a busy host): removed again until it is gone.
    wait_until("the target's directory removed", || {
        std::fs::remove_dir_all(&sub).is_ok() || !sub.exists()
    });
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&r).unwrap()).unwrap();
    assert!(!doc["results"].as_array().unwrap().is_empty());
    assert!(
        doc["failure"]
            .as_str()
            .is_some_and(|f| f.contains("does not exist") || f.contains("No such file")),
        "{doc}"
    );
}

// 19. Right after an io_uring run, the file system under its target can be
// unmounted: the ring's files are released before fathom exits.
#[test]
fn a_file_system_unmounts_right_after_an_io_uring_run() {
    for round in 0..5 {
        let Some(dev) = LoopDevice::new(64 << 20, 512) else {
            return;
        };
        if !mkfs("mkfs.ext4", &["-q", "-F"], Path::new(&dev.path)) {
            return;
        }
        let dir = tempdir();
        let mounted = Command::new("mount")
            .arg(&dev.path)
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("SKIP: cannot mount here");
            return;
        }
        let out = run(&[
            "run",
            dir.path().join("x").to_str().unwrap(),
            "--size",
            "8m",
            "--runtime",
            "1s",
            "--engine",
            "io_uring",
            "--iodepth",
            "16",
        ]);
        let first = Command::new("umount").arg(dir.path()).output().unwrap();
        if !first.status.success() {
            unmount(dir.path());
        }
        succeeded(&out);
        assert!(
            first.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&first.stderr)
        );
    }
}
