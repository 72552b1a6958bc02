//! Files fathom did not create are not fathom's: a read run never grows
//! one, a replaced target's new file is never removed, and `-o` never
//! replaces what is not a fathom result. Every refusal exits 2 and leaves
//! nothing behind. The property test runs random sequences of runs on a
//! directory of user files and checks that no byte changes unless
//! `--overwrite` named the file.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use proptest::prelude::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Size, content (hashed, so a failure prints a line, not the file) and
/// modification time: what "untouched" means.
#[derive(Debug, PartialEq, Clone)]
struct Snapshot {
    len: u64,
    content_hash: u64,
    mtime_ns: i64,
}

fn snapshot(path: &Path) -> Snapshot {
    use std::hash::{Hash, Hasher};
    let meta = std::fs::metadata(path).unwrap();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(path).unwrap().hash(&mut hasher);
    Snapshot {
        len: meta.len(),
        content_hash: hasher.finish(),
        mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
    }
}

fn user_file(dir: &Path, name: &str, len: usize) -> PathBuf {
    let path = dir.join(name);
    let content: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn a_read_run_never_grows_a_file_it_did_not_create() {
    let dir = tempdir();
    let file = user_file(dir.path(), "user.dat", 1 << 20);
    let f = file.to_str().unwrap();
    let before = snapshot(&file);
    for (rw, extra) in [
        ("randread", vec!["--size", "4m"]),
        ("read", vec!["--size", "4m"]),
        ("read", vec!["--offset", "2m", "--size", "64k"]),
    ] {
        let mut args = vec!["run", f, "--rw", rw];
        args.extend(extra);
        refused(&args, "the file is 1 MiB");
        assert_eq!(snapshot(&file), before, "{args:?}");
    }
    // A read-only file too (root can write it, and must not).
    let mut perms = std::fs::metadata(&file).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o444);
    std::fs::set_permissions(&file, perms).unwrap();
    refused(
        &["run", f, "--rw", "randread", "--size", "2m"],
        "--overwrite",
    );
    assert_eq!(snapshot(&file), before);
    // Inside the file, reading is fine and changes nothing.
    run_json(&[f, "--rw", "randread", "--size", "1m", "--buffered"]);
    assert_eq!(snapshot(&file), before);
    assert_eq!(entries(dir.path()), ["user.dat"]);
}

#[test]
fn overwrite_lets_a_run_grow_a_file() {
    let dir = tempdir();
    let file = user_file(dir.path(), "grow.dat", 1 << 20);
    let f = file.to_str().unwrap();
    run_json(&[f, "--rw", "randread", "--size", "2m", "--overwrite"]);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 2 << 20);
}

/// Starts a 3-second write run on a new file and waits for its workers.
fn spawn_writer(file: &Path) -> std::process::Child {
    let child = fathom()
        .args(["run", file.to_str().unwrap(), "--rw", "randwrite"])
        .args(["--size", "4m", "--runtime", "3s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_workers(child.id());
    child
}

/// Starts a write run on the new `file`, lets `replace` put a user's file
/// in its place mid-run, checks the user's file survived the end of the
/// run, and returns what fathom said.
fn replaced_mid_run(file: &Path, replace: impl FnOnce()) -> String {
    let child = spawn_writer(file);
    replace();
    std::fs::write(file, "precious\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        std::fs::read_to_string(file).unwrap(),
        "precious\n",
        "{err}"
    );
    err
}

#[test]
fn a_file_put_in_place_of_the_target_during_a_run_survives() {
    let dir = tempdir();
    let file = dir.path().join("repl.dat");
    // rm + create: fathom's file is gone, the user's new one stays.
    let err = replaced_mid_run(&file, || std::fs::remove_file(&file).unwrap());
    assert!(
        err.contains("no longer names the file fathom created"),
        "{err}"
    );
    assert_eq!(entries(dir.path()), ["repl.dat"]);
    // mv + create: the user's new file stays, and fathom says where its
    // own went.
    std::fs::remove_file(&file).unwrap();
    let moved = dir.path().join("repl.moved");
    let err = replaced_mid_run(&file, || std::fs::rename(&file, &moved).unwrap());
    let real = std::fs::canonicalize(&moved).unwrap();
    assert!(
        err.contains(&format!("fathom's file is now {}", real.display())),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&moved).unwrap().len(), 4 << 20);
}

#[test]
fn a_missing_device_node_is_refused_not_made_a_file() {
    for path in ["/dev/fathom-nonexistent", "/dev/sdz9"] {
        if Path::new(path).exists() {
            continue;
        }
        refused(
            &["run", path, "--rw", "randwrite", "--size", "1m"],
            "no such device",
        );
        assert!(!Path::new(path).exists(), "{path} was created");
    }
}

#[test]
fn a_dangling_link_and_a_target_in_memory() {
    let dir = tempdir();
    let link = dir.path().join("link.dat");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
    refused(
        &["run", link.to_str().unwrap(), "--size", "1m"],
        "symbolic link",
    );
    assert!(!dir.path().join("nowhere").exists());
    // A file fathom lays out in memory is named as memory.
    let shm = tempdir_in_shm();
    let fs = String::from_utf8_lossy(
        &std::process::Command::new("stat")
            .args(["-f", "-c", "%T"])
            .arg(shm.path())
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();
    if fs != "tmpfs" {
        eprintln!("SKIP: no tmpfs here ({} is {fs})", shm.path().display());
        return;
    }
    let target = shm.path().join("mem.dat");
    let doc = run_json(&[
        target.to_str().unwrap(),
        "--size",
        "1m",
        "--buffered",
        "--runtime",
        "0.3s",
    ]);
    let warnings = doc["results"][0]["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w["kind"] == "memory_target"
            && w["message"]
                .as_str()
                .unwrap()
                .contains("memory, not a disk")),
        "{warnings:?}"
    );
}

/// A quick run whose result goes to `out`.
fn to_output(dir: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let target = dir.join("o.dat");
    let mut args = vec!["run", target.to_str().unwrap(), "--engine", "null"];
    args.extend([
        "--size",
        "1m",
        "--runtime",
        "0.1s",
        "--output-format",
        "json",
    ]);
    args.extend(["-o", out.to_str().unwrap()]);
    args.extend(extra);
    run(&args)
}

#[test]
fn output_replaces_only_fathom_results_unless_told() {
    let dir = tempdir();
    let notes = user_file(dir.path(), "notes.md", 100);
    let before = snapshot(&notes);
    let out = to_output(dir.path(), &notes, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a fathom result") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(snapshot(&notes), before);
    assert_eq!(entries(dir.path()), ["notes.md"], "nothing created");
    // A result of fathom's is replaced (and resumed) freely.
    let result = dir.path().join("r.json");
    for _ in 0..2 {
        assert!(to_output(dir.path(), &result, &[]).status.success());
    }
    assert!(
        to_output(dir.path(), &result, &["--resume"])
            .status
            .success()
    );
    // Told, it replaces the user's file.
    assert!(
        to_output(dir.path(), &notes, &["--overwrite"])
            .status
            .success()
    );
    assert!(
        std::fs::read_to_string(&notes)
            .unwrap()
            .contains("fathom_version")
    );
    // report and merge take the same rule.
    let other = user_file(dir.path(), "other.txt", 10);
    let out = run(&[
        "report",
        result.to_str().unwrap(),
        "-o",
        other.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&other).unwrap().len(), 10);
}

#[test]
fn output_to_a_link_a_fifo_or_stdout_is_written_in_place() {
    let dir = tempdir();
    // A link to a result file: the file is replaced, the link stays.
    let real = dir.path().join("real.json");
    std::fs::write(&real, "").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert!(to_output(dir.path(), &link, &[]).status.success());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("fathom_version")
    );
    // A FIFO with a reader gets the document, and stays a FIFO.
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    assert!(to_output(dir.path(), &fifo, &[]).status.success());
    let got = reader.join().unwrap();
    let doc: serde_json::Value = serde_json::from_str(&got).expect("one whole document");
    assert_eq!(doc["schema"], 2);
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A link to /dev/stdout: the document reaches stdout, the link stays.
    let to_stdout = dir.path().join("stdout.json");
    std::os::unix::fs::symlink("/dev/stdout", &to_stdout).unwrap();
    let out = to_output(dir.path(), &to_stdout, &[]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(doc["schema"], 2);
    assert!(
        std::fs::symlink_metadata(&to_stdout)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn output_on_a_block_device_is_refused_and_the_device_unchanged() {
    let Some(dev) = LoopDevice::new(16 << 20, 512) else {
        return;
    };
    let made = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev.path])
        .status();
    if !matches!(made, Ok(s) if s.success()) {
        eprintln!("SKIP: mkfs.ext4 unavailable or failed");
        return;
    }
    let before = std::fs::read(&dev.path).unwrap();
    let dir = tempdir();
    let out = to_output(dir.path(), Path::new(&dev.path), &["--overwrite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a block device"));
    let meta = std::fs::symlink_metadata(&dev.path).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_block_device(
        &meta.file_type()
    ));
    assert!(
        std::fs::read(&dev.path).unwrap() == before,
        "device changed"
    );
}

use std::os::unix::fs::FileTypeExt;

#[test]
fn streams_that_open_one_file_direct_and_buffered_are_refused() {
    let dir = tempdir();
    let target = dir.path().join("shared.dat");
    let t = format!("data={}", target.display());
    refused(
        &[
            "run",
            "--target",
            &t,
            "--size",
            "1m",
            "--runtime",
            "1s",
            "--stream",
            "pages:rw=randwrite,buffered=true,targets=data",
            "--stream",
            "log:rw=write,fdatasync=1,targets=data",
        ],
        "streams log (O_DIRECT) and pages (buffered) both open",
    );
    assert!(entries(dir.path()).is_empty(), "nothing created");
}

/// One step of a user's session in a directory of their files.
#[derive(Debug, Clone)]
struct Step {
    /// 0..3: a user file; 3: a new file; 4: the directory itself.
    target: usize,
    rw: &'static str,
    size_k: u64,
    offset_k: u64,
    keep: bool,
    overwrite: bool,
    /// Write the result to a user file (`notes.md`) or a result file.
    output_to_notes: bool,
    resume: bool,
    /// Before the run, forge fathom's keep mark on the user file targeted:
    /// 1, a length alone; 2, the shape of a real mark naming another inode.
    forge: u8,
    /// Name the user file through a hard link of its own.
    via_hard_link: bool,
}

fn forge_mark(path: &std::path::Path, how: u8) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    let value = match how {
        1 => meta.len().to_string(),
        _ => format!(
            "fathom-kept:2:ino={}:born=0:len={}",
            meta.ino() + 1,
            meta.len()
        ),
    };
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated strings and a buffer of its length. A file
    // system without user attributes keeps no mark, which is no forgery.
    unsafe {
        libc::setxattr(
            p.as_ptr(),
            c"user.fathom.kept".as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        );
    }
}

fn step() -> impl Strategy<Value = Step> {
    (
        0usize..5,
        prop::sample::select(vec!["read", "randread", "write", "randwrite", "randrw"]),
        prop::sample::select(vec![4u64, 64, 256]),
        prop::sample::select(vec![0u64, 64]),
        any::<bool>(),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.2),
        any::<bool>(),
        (0u8..3, prop::bool::weighted(0.3)),
    )
        .prop_map(
            |(
                target,
                rw,
                size_k,
                offset_k,
                keep,
                overwrite,
                output_to_notes,
                resume,
                (forge, via_hard_link),
            )| Step {
                target,
                rw,
                size_k,
                offset_k,
                keep,
                overwrite,
                output_to_notes,
                resume,
                forge,
                via_hard_link,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn no_user_byte_changes_unless_overwrite_names_the_file(steps in prop::collection::vec(step(), 1..6)) {
        let dir = tempdir();
        let users: Vec<PathBuf> = [("a.dat", 128usize << 10), ("b.dat", 64 << 10), ("c.log", 1000)]
            .iter()
            .map(|(name, len)| user_file(dir.path(), name, *len))
            .collect();
        let notes = user_file(dir.path(), "notes.md", 300);
        let mut expected: Vec<Snapshot> = users.iter().map(|p| snapshot(p)).collect();
        let notes_before = snapshot(&notes);
        let mut notes_is_users = true;
        let result = dir.path().join("result.json");
        for s in &steps {
            let target = match s.target {
                i @ 0..3 => {
                    if s.forge > 0 {
                        forge_mark(&users[i], s.forge);
                    }
                    if s.via_hard_link {
                        let link = dir.path().join(format!("link{i}.dat"));
                        let _ = std::fs::remove_file(&link);
                        std::fs::hard_link(&users[i], &link).unwrap();
                        link
                    } else {
                        users[i].clone()
                    }
                }
                3 => dir.path().join("new.dat"),
                _ => dir.path().to_path_buf(),
            };
            let size = format!("{}k", s.size_k);
            let offset = format!("{}k", s.offset_k);
            let out = if s.output_to_notes { &notes } else { &result };
            let mut args = vec![
                "run", target.to_str().unwrap(), "--rw", s.rw, "--bs", "4k",
                "--size", &size, "--offset", &offset, "--buffered",
                "--output-format", "json", "-o", out.to_str().unwrap(),
            ];
            if s.keep { args.push("--keep"); }
            if s.overwrite { args.push("--overwrite"); }
            if s.resume { args.push("--resume"); }
            let ran = run(&args);
            let code = ran.status.code();
            prop_assert!(matches!(code, Some(0) | Some(2)), "{args:?}: {}", String::from_utf8_lossy(&ran.stderr));
            for (i, user) in users.iter().enumerate() {
                if s.overwrite && s.target == i {
                    expected[i] = snapshot(user);
                }
                prop_assert_eq!(&snapshot(user), &expected[i], "{:?} after {:?}", user, args);
            }
            if notes_is_users && s.overwrite && s.output_to_notes && code == Some(0) {
                // Told to replace it: from now on it is a fathom result.
                notes_is_users = false;
            }
            if notes_is_users {
                prop_assert_eq!(&snapshot(&notes), &notes_before, "notes.md after {:?}", args);
            }
        }
    }
}
