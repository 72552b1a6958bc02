//! Every file fathom writes, reads or removes goes through `src/gate/`:
//! outside it, no code calls the standard library's (or libc's) calls
//! that open, create, truncate, rename or remove a file. A new path that
//! opened files its own way has re-opened, each time, a defect an older
//! path had closed; this test fails instead. Test modules are exempt.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use crate::source;
use source::production;

/// The calls that only the gate may make, wherever they are written.
const GATED: &[&str] = &[
    "File::create(",
    "File::open(",
    "OpenOptions::new(",
    "libc::open(",
    "libc::openat(",
    "libc::unlink(",
    "libc::unlinkat(",
    "libc::rename(",
    "libc::renameat(",
    "libc::mkfifo(",
    "Connection::open(",
    "Connection::open_with_flags(",
];

/// `std::fs`'s functions that only the gate may call: as `fs::NAME(` or a
/// bare `NAME(` (imported); a method of the same name (`dir.remove_file(`)
/// or another module's (`workload::remove_file(`) is not one.
const FS_FUNCTIONS: &[&str] = &[
    "write(",
    "read(",
    "read_to_string(",
    "rename(",
    "copy(",
    "hard_link(",
    "remove_file(",
    "remove_dir(",
    "remove_dir_all(",
    "create_dir(",
    "create_dir_all(",
];

/// Calls made around the gate on purpose, each with where and why.
const EXEMPT: &[(&str, &str, &str)] = &[
    (
        "src/history/sqlite.rs",
        "Connection::open(",
        "SQLite opens the path that gate::write::database checked and returned",
    ),
    (
        "src/history/sqlite.rs",
        "Connection::open_with_flags(",
        "read-only, on the path that gate::write::check_database returned",
    ),
];

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.display().to_string(), production(&text)));
        }
    }
}

/// Where a helper program may be started: each place, and why.
const HELPERS: &[(&str, &str)] = &[(
    "src/gate/helper.rs",
    "blkid and smartctl, from the system's directories",
)];

/// `file:line: call` for each gated call in `code` outside comments.
fn gated_calls(name: &str, code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap();
        let mut hit = |call: &str| {
            let exempt = EXEMPT
                .iter()
                .any(|(file, c, _)| name.ends_with(file) && *c == call);
            if !exempt {
                found.push(format!("{name}:{}: {call}", i + 1));
            }
        };
        for call in GATED {
            for (at, _) in line.match_indices(call) {
                // `my_remove_file(` is not `remove_file(`.
                let before = line[..at].chars().last();
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    hit(call);
                }
            }
        }
        for f in FS_FUNCTIONS {
            // `read(` and `write(` bare are too common a name (a closure,
            // a method): for them, the import that would make them std's.
            let common = ["read(", "write(", "copy(", "rename("].contains(f);
            for (at, _) in line.match_indices(f) {
                let before = &line[..at];
                let fs_call = before.ends_with("fs::");
                let bare = !common
                    && !before.ends_with("::")
                    && !before.ends_with('.')
                    && !before
                        .chars()
                        .last()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if fs_call || bare && !before.trim_end().ends_with("fn") {
                    hit(&format!("fs::{f}"));
                }
            }
            let name = f.trim_end_matches('(');
            let imported = line.trim_start().starts_with("use std::fs::")
                && line
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == name);
            if imported {
                hit(&format!("use std::fs::{name}"));
            }
        }
    }
    found
}

#[test]
fn production_code_after_a_test_module_is_read() {
    let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn t() { let x = \"{ \\\" \"; let c = '{'; }\n}\nfn b() { std::fs::write(p, x); }\n";
    let code = production(text);
    assert!(code.contains("fn b() { std::fs::write"), "{code}");
    assert!(!code.contains("fn t()"), "{code}");
    assert_eq!(code.lines().count(), text.lines().count());
    let found = gated_calls("x.rs", &code);
    assert_eq!(found, ["x.rs:6: fs::write("], "{found:?}");
}

/// Helpers are started only where `HELPERS` says.
#[test]
fn helper_programs_are_started_only_where_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let stray: Vec<String> = files
        .iter()
        .filter(|(name, _)| !HELPERS.iter().any(|(f, _)| name.ends_with(f)))
        .flat_map(|(name, code)| {
            code.lines()
                .enumerate()
                .filter(|(_, l)| l.split("//").next().unwrap().contains("Command::new("))
                .map(move |(i, _)| format!("{name}:{}", i + 1))
        })
        .collect();
    assert!(
        stray.is_empty(),
        "helpers started outside HELPERS: {stray:?}"
    );
}

/// clippy.toml makes the gate a compiler rule: a `std::fs::write` planted
/// in a copy of a source file fails `cargo clippy -- -D warnings`, naming
/// the lint, and the same call inside a `gate` module passes.
#[test]
fn a_planted_write_outside_the_gate_fails_clippy() {
    let clippy = std::process::Command::new(env!("CARGO"))
        .args(["clippy", "--version"])
        .output();
    if !clippy.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: cargo clippy is not installed");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let krate = dir.path();
    std::fs::create_dir(krate.join("src")).unwrap();
    std::fs::copy(root.join("clippy.toml"), krate.join("clippy.toml")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"planted\"\nversion = \"0.0.0\"\nedition = \"2024\"\n[workspace]\n",
    )
    .unwrap();
    // A real file of fathom's with no dependencies, and a write planted in it.
    let original = std::fs::read_to_string(root.join("src/util/error.rs")).unwrap();
    let gate = "pub mod gate {\n    #![allow(clippy::disallowed_methods)]\n    pub fn allowed() {\n        let _ = std::fs::write(\"/nonexistent/a\", \"x\");\n    }\n}\n";
    let clippy_on = |lib: &str| {
        std::fs::write(krate.join("src/lib.rs"), lib).unwrap();
        std::process::Command::new(env!("CARGO"))
            .args(["clippy", "--quiet", "--", "-D", "warnings"])
            .current_dir(krate)
            .env("CARGO_TARGET_DIR", krate.join("target"))
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap()
    };
    let clean = clippy_on(&format!("{original}\n{gate}"));
    assert!(
        clean.status.success(),
        "the copy without a planted call: {}",
        String::from_utf8_lossy(&clean.stderr)
    );
    let planted = format!(
        "{original}\n{gate}\npub fn planted() {{\n    let _ = std::fs::write(\"/nonexistent/b\", \"x\");\n}}\n"
    );
    let out = clippy_on(&planted);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "clippy passed a planted write");
    assert!(
        said.contains("disallowed_methods") || said.contains("disallowed method"),
        "{said}"
    );
    assert!(said.contains("write files through src/gate/"), "{said}");
}

#[test]
fn nothing_outside_the_gate_opens_writes_or_removes_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 100, "found the sources");
    let gate = root.join("gate").display().to_string();
    let around: Vec<String> = files
        .iter()
        .filter(|(name, _)| !name.starts_with(&gate))
        .flat_map(|(name, code)| gated_calls(name, code))
        .collect();
    assert!(
        around.is_empty(),
        "files open, write or remove around the gate (use crate::gate):\n{}",
        around.join("\n")
    );
}

#[test]
fn the_check_finds_a_call_around_the_gate_and_passes_over_names_and_comments() {
    let code = "use std::fs::{self, write};\nfn f() {\n    let _ = std::fs::remove_file(p);\n    my_remove_file(p); // fs::write(p)\n    dir.remove_file(p);\n    workload::remove_file(p);\n    remove_dir(p);\n    let _ = File::open(p);\n    read(p);\n}\nfn remove_dir(x: u8) {}\n";
    assert_eq!(
        gated_calls("x.rs", code),
        vec![
            "x.rs:1: use std::fs::write",
            "x.rs:3: fs::remove_file(",
            "x.rs:7: fs::remove_dir(",
            "x.rs:8: File::open("
        ]
    );
    assert!(gated_calls("src/history/sqlite.rs", "Connection::open(p)").is_empty());
    assert!(!gated_calls("src/report/x.rs", "Connection::open(p)").is_empty());
}

// The third hostile pass's findings, each a way a path outside the gate
// lost data or hung; each fails on a fathom that opens files its own way.

use crate::common;
use common::{LoopDevice, fathom, refused, run, run_ok, tempdir};
use std::process::Command;
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A loop device holding an ext4 file system, or None (said why).
fn ext4_device() -> Option<LoopDevice> {
    let dev = LoopDevice::new(16 << 20, 512)?;
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev.path])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("SKIP: mkfs.ext4 unavailable or failed");
        return None;
    }
    Some(dev)
}

/// The first MiB of a device, to show nothing wrote on it.
fn head_of(dev: &str) -> Vec<u8> {
    use std::io::Read;
    let mut head = vec![0u8; 1 << 20];
    std::fs::File::open(dev)
        .unwrap()
        .read_exact(&mut head)
        .unwrap();
    head
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(s(path)).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A quick run's arguments on a new file in `dir`.
fn quick(dir: &Path) -> Vec<String> {
    [
        "run",
        s(&dir.join("t.dat")),
        "--size",
        "1m",
        "--runtime",
        "1",
        "--rw",
        "randread",
    ]
    .map(String::from)
    .to_vec()
}

fn with<'a>(base: &'a [String], more: &[&'a str]) -> Vec<&'a str> {
    base.iter()
        .map(String::as_str)
        .chain(more.iter().copied())
        .collect()
}

#[test]
fn a_history_is_never_kept_on_a_device_nor_in_another_programs_database() {
    let dir = tempdir();
    // A user's SQLite database: no tables added, its journal left as it was.
    let app = dir.path().join("app.sqlite");
    let made = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table orders (id integer)'); c.commit()",
            s(&app),
        ])
        .status()
        .is_ok_and(|st| st.success());
    if made {
        let before = std::fs::read(&app).unwrap();
        refused(
            &["history", "--history", s(&app), "list"],
            "not a fathom history",
        );
        let args = quick(dir.path());
        refused(
            &with(&args, &["--history", s(&app)]),
            "not a fathom history",
        );
        assert_eq!(
            std::fs::read(&app).unwrap(),
            before,
            "the database is as it was"
        );
        assert!(!dir.path().join("app.sqlite-wal").exists());
    } else {
        eprintln!("SKIP (database part): python3's sqlite3 unavailable");
    }
    let Some(dev) = ext4_device() else { return };
    let before = head_of(&dev.path);
    refused(&["history", "--history", &dev.path, "list"], "block device");
    let args = quick(dir.path());
    refused(&with(&args, &["--history", &dev.path]), "block device");
    refused(&with(&args, &["--history", "/dev/fathom-new/h.db"]), "/dev");
    assert!(!Path::new("/dev/fathom-new").exists());
    assert_eq!(head_of(&dev.path), before, "the file system is untouched");
}

/// A history reached through a link, or (as root) a file another user
/// owns, is refused before the run: the user whose HOME a `sudo -E` run
/// keeps cannot point root's history at a file of root's.
#[test]
fn a_history_through_a_link_or_in_another_users_file_is_refused() {
    let dir = tempdir();
    let roots = dir.path().join("roots-file");
    std::fs::write(&roots, b"").unwrap();
    let link = dir.path().join("history.db");
    std::os::unix::fs::symlink(&roots, &link).unwrap();
    let args = quick(dir.path());
    refused(&with(&args, &["--history", s(&link)]), "symbolic link");
    refused(&["history", "--history", s(&link), "list"], "symbolic link");
    assert_eq!(
        std::fs::read(&roots).unwrap(),
        b"",
        "root's file was written"
    );
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIP (ownership part): not root");
        return;
    }
    let theirs = dir.path().join("theirs.db");
    std::fs::write(&theirs, b"").unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    refused(
        &with(&args, &["--history", s(&theirs)]),
        "owned by user 65534",
    );
    assert_eq!(std::fs::read(&theirs).unwrap(), b"");
}

#[test]
fn live_lines_never_replace_an_input_a_target_a_device_or_a_file_of_another_kind() {
    let dir = tempdir();
    let args = quick(dir.path());
    let target = dir.path().join("t.dat");
    std::fs::write(&target, vec![7u8; 1 << 20]).unwrap();
    let job = dir.path().join("job.toml");
    std::fs::write(
        &job,
        format!(
            "[defaults]\ntargets = [\"{}\"]\nsize = \"1m\"\nruntime = \"1s\"\n[workload.r]\nrw = \"randread\"\n",
            s(&target)
        ),
    )
    .unwrap();
    let theirs = dir.path().join("notes.txt");
    std::fs::write(&theirs, "mine\n").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    refused(&with(&args, &["--live", s(&target)]), "a target");
    refused(&with(&args, &["--live", s(&link)]), "a target");
    refused(
        &with(&args, &["--live", s(&theirs)]),
        "not a fathom --live file",
    );
    refused(&["run", s(&job), "--live", s(&job)], "job file");
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let started = Instant::now();
    refused(&with(&args, &["--live", s(&fifo)]), "no reader");
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    assert_eq!(std::fs::read(&target).unwrap(), vec![7u8; 1 << 20]);
    assert_eq!(std::fs::read(&theirs).unwrap(), b"mine\n");
    if let Some(dev) = ext4_device() {
        let before = head_of(&dev.path);
        refused(&with(&args, &["--live", &dev.path]), "block device");
        assert_eq!(head_of(&dev.path), before);
    }
    // Its own file it replaces, whole: every line a second of this run.
    let live = dir.path().join("live.jsonl");
    run_ok(&with(&args, &["--live", s(&live)]));
    run_ok(&with(&args, &["--live", s(&live)]));
    let text = std::fs::read_to_string(&live).unwrap();
    assert!(text.lines().count() >= 1 && text.lines().all(|l| l.starts_with("{\"unix_s\":")));
}

#[test]
fn fios_output_never_lands_on_its_target_its_job_file_or_a_users_file() {
    let dir = tempdir();
    let target = dir.path().join("f.dat");
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[j]\nfilename={}\nsize=1m\nrw=randread\nbs=4k\nioengine=psync\n",
            s(&target)
        ),
    )
    .unwrap();
    let theirs = dir.path().join("notes.txt");
    std::fs::write(&theirs, "mine\n").unwrap();
    let link = dir.path().join("out.json");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    let out = |o: &Path| format!("--output={}", s(o));
    refused(&["fio", &out(&target), s(&job)], "a target");
    refused(&["fio", &out(&job), s(&job)], "job file");
    refused(&["fio", &out(&theirs), s(&job)], "FATHOM_OVERWRITE=1");
    refused(&["fio", &out(&link), s(&job)], "FATHOM_OVERWRITE=1");
    assert_eq!(std::fs::read(&theirs).unwrap(), b"mine\n");
    assert!(std::fs::read_to_string(&job).unwrap().starts_with("[j]"));
    // Its own output, fio's habit, it replaces run after run.
    let mine = dir.path().join("fio.json");
    for _ in 0..2 {
        run_ok(&["fio", &out(&mine), "--output-format=json", s(&job)]);
    }
    assert!(
        std::fs::read_to_string(&mine)
            .unwrap()
            .contains("\"fio version\"")
    );
    // And a file of another kind when the environment says so.
    let o = fathom()
        .env("FATHOM_OVERWRITE", "1")
        .args(["fio", &out(&theirs), s(&job)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn history_show_never_replaces_the_history_it_reads() {
    let dir = tempdir();
    let h = dir.path().join("h.db");
    let args = quick(dir.path());
    run_ok(&with(&args, &["--history", s(&h)]));
    let out = run(&["history", "--history", s(&h), "show", "1", "-o", s(&h)]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = run_ok(&["history", "--history", s(&h), "list"]);
    assert!(String::from_utf8_lossy(&list.stdout).contains("randread"));
}

#[test]
fn an_ack_log_is_never_a_device_a_fifo_or_a_file_of_another_kind() {
    // The target on another device than the logs (an ack log beside its
    // target is refused for that first).
    let dir = tempdir();
    let shm = common::tempdir_in_shm();
    let target = shm.path().join("t.dat");
    let crash = |log: &Path| {
        vec![
            "crashcheck".to_string(),
            s(&target).into(),
            "--ack-log".into(),
            s(log).into(),
            "--size".into(),
            "64k".into(),
            "--runtime".into(),
            "1".into(),
        ]
    };
    let theirs = dir.path().join("notes.txt");
    std::fs::write(&theirs, "mine\n").unwrap();
    let args = crash(&theirs);
    refused(&with(&args, &["--append"]), "ack log");
    assert_eq!(std::fs::read(&theirs).unwrap(), b"mine\n");
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let started = Instant::now();
    let args = crash(&fifo);
    refused(&with(&args, &[]), "a FIFO");
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    let Some(dev) = ext4_device() else { return };
    let before = head_of(&dev.path);
    let args = crash(Path::new(&dev.path));
    refused(&with(&args, &[]), "block device");
    assert_eq!(head_of(&dev.path), before, "the file system is untouched");
}

#[test]
fn job_files_from_devices_and_fifos_are_refused_at_once() {
    let dir = tempdir();
    let fifo = dir.path().join("job.fio");
    mkfifo(&fifo);
    let include = dir.path().join("inc.fio");
    std::fs::write(&include, "[global]\ninclude /dev/zero\n[j]\nrw=read\n").unwrap();
    let started = Instant::now();
    refused(&["fio", "/dev/zero"], "a character device");
    refused(&["fio", s(&fifo)], "a FIFO");
    refused(&["run", s(&fifo)], "a FIFO");
    refused(&["fio", s(&include)], "a character device");
    refused(
        &[
            "fio",
            "--name=j",
            "--filename=x",
            "--size=1m",
            "--numjobs=5000",
        ],
        "at most 1024 jobs",
    );
    assert!(started.elapsed() < Duration::from_secs(20), "no hang");
}

#[test]
fn a_tree_is_removed_only_where_fathom_made_it_and_never_through_a_link() {
    let dir = tempdir();
    let base = dir.path().join("made");
    std::fs::create_dir(&base).unwrap();
    let tree = |d: &Path, more: &[&str]| {
        let mut a = vec!["tree", s(d), "--width", "2", "--depth", "1", "--files", "2"];
        a.extend_from_slice(more);
        run(&a)
    };
    let o = tree(&base, &["--phases", "mkdir,create", "--leave"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The marker copied with `cp -a` into a user's directory of files.
    let user = dir.path().join("user");
    let user_tree = user.join("fathom-tree");
    std::fs::create_dir_all(user_tree.join("d0")).unwrap();
    for f in ["d0/f0", "d0/f1"] {
        std::fs::write(user_tree.join(f), "mine").unwrap();
    }
    let copied = Command::new("cp")
        .args(["-a"])
        .arg(base.join("fathom-tree/fathom.marker"))
        .arg(&user_tree)
        .status()
        .unwrap();
    assert!(copied.success());
    let o = tree(&user, &["--phases", "delete,rmdir"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("can prove it made"));
    assert!(user_tree.join("d0/f0").exists() && user_tree.join("d0/f1").exists());
    // A leaf of fathom's own tree swapped for a link to the user's files.
    let root = base.join("fathom-tree");
    let leaf = root.join("d1");
    for f in std::fs::read_dir(&leaf).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    std::fs::remove_dir(&leaf).unwrap();
    std::os::unix::fs::symlink(user_tree.join("d0"), &leaf).unwrap();
    let o = tree(&base, &["--phases", "stat"]);
    let _ = o;
    assert!(
        user_tree.join("d0/f0").exists() && user_tree.join("d0/f1").exists(),
        "clean-up deleted through the link"
    );
}

/// On a file system without birth times (ext4 with 128-byte inodes), a
/// kept file's mark names only its inode and length: a copy put back onto
/// the same inode with `cp -a` carries it. No file there is taken for a
/// kept one: writing it needs --overwrite.
#[test]
fn without_birth_times_no_file_is_taken_for_a_kept_one() {
    let Some(dev) = LoopDevice::new(32 << 20, 512) else {
        return;
    };
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-I", "128", &dev.path])
        .status()
        .is_ok_and(|st| st.success());
    let mnt = tempdir();
    if !made
        || !Command::new("mount")
            .arg(&dev.path)
            .arg(mnt.path())
            .status()
            .is_ok_and(|st| st.success())
    {
        eprintln!("SKIP: cannot make and mount an ext4 of 128-byte inodes here");
        return;
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(mnt.path());
    let kept = mnt.path().join("k.dat");
    let base = ["run", s(&kept), "--size", "1m", "--runtime", "1", "--rw"];
    let o = run(&[&base[..], &["write", "--keep", "--buffered"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The user's own data, put back onto fathom's inode with its mark.
    let backup = mnt.path().join("backup.dat");
    for (from, to) in [(&kept, &backup), (&backup, &kept)] {
        assert!(
            Command::new("cp")
                .arg("-a")
                .arg(from)
                .arg(to)
                .status()
                .unwrap()
                .success()
        );
    }
    refused(
        &[&base[..], &["write", "--buffered"]].concat(),
        "--overwrite",
    );
}

/// In a shared sticky directory, a tree another user planted (a marker
/// naming its own directory, a leaf linked to root's files) is never
/// taken for root's: refused, and nothing of root's removed or written.
#[test]
fn a_tree_planted_by_another_user_is_refused_even_to_root() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempdir();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let roots = dir.path().join("roots");
    std::fs::create_dir(&roots).unwrap();
    std::fs::write(roots.join("f0"), "root's").unwrap();
    // A real tree's marker, as a model of what the planter writes.
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    run_ok(&[
        "tree",
        s(&model),
        "--width",
        "1",
        "--depth",
        "1",
        "--files",
        "1",
        "--phases",
        "mkdir,create",
        "--leave",
    ]);
    let planted = shared.join("fathom-tree");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::symlink(&roots, planted.join("d0")).unwrap();
    let meta = std::fs::metadata(&planted).unwrap();
    let mut marker: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(model.join("fathom-tree/fathom.marker")).unwrap(),
    )
    .unwrap();
    marker["root"] = serde_json::json!({"dev": meta.dev(), "ino": meta.ino()});
    marker["files_present"] = serde_json::json!(true);
    std::fs::write(planted.join("fathom.marker"), marker.to_string()).unwrap();
    let chowned = Command::new("chown")
        .args(["-hR", "65534:65534"])
        .arg(&planted)
        .status()
        .is_ok_and(|st| st.success());
    if !chowned {
        eprintln!("SKIP: cannot give the planted tree to another user here");
        return;
    }
    let tree = |more: &[&str]| {
        let mut a = vec!["tree", s(&shared)];
        a.extend_from_slice(more);
        run(&a)
    };
    for o in [
        tree(&[
            "--width",
            "1",
            "--depth",
            "1",
            "--files",
            "1",
            "--overwrite",
            "--phases",
            "mkdir",
        ]),
        tree(&["--phases", "stat,read"]),
        tree(&["--phases", "delete,rmdir"]),
    ] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("not to the user running fathom"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(roots.join("f0")).unwrap(), "root's");
    assert_eq!(std::fs::read_dir(&roots).unwrap().count(), 1);
}

/// Live lines that cannot be written (a full disk, /dev/full) are said and
/// noted in the result; the run goes on and its result is whole.
#[test]
fn live_lines_that_cannot_be_written_are_said_not_lost_silently() {
    let dir = tempdir();
    let args = quick(dir.path());
    let out = dir.path().join("r.json");
    let o = run(&with(&args, &["--live", "/dev/full", "-o", s(&out)]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("--live: a line could not be written"), "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        doc.to_string()
            .contains("--live: a line could not be written"),
        "noted in the result"
    );
}

/// The functions in `code` that read `"FATHOM_TEST_...` without being
/// built only with the tests' hooks.
fn hooks_outside_the_feature(name: &str, code: &str) -> Vec<String> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.contains("\"FATHOM_TEST_") || line.trim_start().starts_with("//") {
            continue;
        }
        let Some(f) = (0..i).rev().find(|&j| {
            let t = lines[j].trim_start();
            t.starts_with("fn ") || t.starts_with("pub fn ") || t.starts_with("pub(crate) fn ")
        }) else {
            found.push(format!("{name}:{}: outside a function", i + 1));
            continue;
        };
        let above = lines[..f]
            .iter()
            .rev()
            .take_while(|l| {
                let t = l.trim_start();
                t.starts_with("///") || t.starts_with("#[")
            })
            .any(|l| l.contains(r#"#[cfg(feature = "test-hooks")]"#));
        if !above {
            found.push(format!("{name}:{}: {}", f + 1, lines[f].trim()));
        }
    }
    found
}

/// The tests' hooks (a handshake that writes and removes in a directory
/// an environment variable names) are in the tests' build only: the
/// binary users build reads no `FATHOM_TEST_` variable.
#[test]
fn the_tests_hooks_are_built_only_for_the_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let open: Vec<String> = files
        .iter()
        .flat_map(|(name, code)| hooks_outside_the_feature(name, code))
        .collect();
    assert!(
        open.is_empty(),
        "hooks in every build:\n{}",
        open.join("\n")
    );
    // The check sees a hook outside the feature.
    let planted = "/// x\nfn hook() {\n    std::env::var(\"FATHOM_TEST_X\");\n}\n";
    assert_eq!(hooks_outside_the_feature("p.rs", planted).len(), 1);
    let gated = format!("#[cfg(feature = \"test-hooks\")]\n{planted}");
    assert!(hooks_outside_the_feature("p.rs", &gated).is_empty());
}
