//! `fathom tree`: phases whose counts are what `find` counts on the tree,
//! a kept tree run later, stonewalled phases, bad input refused before
//! anything is made, an interrupted run that removes its tree, and the
//! reports. File systems: the work disk's, tmpfs, and ext4 and xfs on loop
//! devices where they can be made (skipped with the reason otherwise).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn tree_json(dir: &Path, args: &[&str]) -> Value {
    let mut full = vec!["tree", dir.to_str().unwrap()];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--output-format", "json"]);
    json_out(&run(&full))
}

/// Entries under `root` of `kind` (`f` or `d`) as `find` counts them,
/// leaving out the tree's marker.
fn find(root: &Path, kind: &str) -> u64 {
    let out = Command::new("find")
        .arg(root)
        .args([
            "-mindepth",
            "1",
            "-type",
            kind,
            "-not",
            "-name",
            "fathom.marker*",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count() as u64
}

/// A phase's count; a tree of one directory has no directory phases to
/// report, and counts 0 there.
fn ops(doc: &Value, phase: &str) -> u64 {
    let phases = doc["results"][0]["phases"].as_array().unwrap();
    phases
        .iter()
        .find(|p| p["phase"] == phase)
        .map_or(0, |p| u(&p["ops"]))
}

/// Each phase's count against what is on disk after it, for a few shapes,
/// by running the phases one at a time on a kept tree.
fn counts_match_find(dir: &Path) {
    for (depth, width, files, threads) in [
        ("0", "1", "7", "1"),
        ("2", "3", "5", "3"),
        ("1", "5", "4", "2"),
    ] {
        let shape = [
            "--depth",
            depth,
            "--width",
            width,
            "--files",
            files,
            "--threads",
            threads,
        ];
        let root = dir.join("fathom-tree");
        let mut args = shape.to_vec();
        args.extend(["--phases", "mkdir", "--leave"]);
        let doc = tree_json(dir, &args);
        assert_eq!(ops(&doc, "mkdir"), find(&root, "d"), "{shape:?}");
        assert!(doc["results"][0]["kept"].as_bool().unwrap());
        for (phase, kind, after) in [
            ("create", "f", true),
            ("stat", "f", true),
            ("read", "f", true),
            ("rename", "f", true),
            ("delete", "f", false),
        ] {
            let mut args = shape.to_vec();
            args.extend(["--phases", phase, "--leave", "--random"]);
            let doc = tree_json(dir, &args);
            let done = ops(&doc, phase);
            let on_disk = find(&root, kind);
            match after {
                true => assert_eq!(done, on_disk, "{phase} {shape:?}"),
                false => assert_eq!(on_disk, 0, "{phase} {shape:?}"),
            }
            if phase == "rename" {
                let renamed = Command::new("find")
                    .arg(&root)
                    .args(["-type", "f", "-name", "r*"])
                    .output()
                    .unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&renamed.stdout).lines().count() as u64,
                    done
                );
            }
        }
        let mut args = shape.to_vec();
        args.extend(["--phases", "rmdir"]);
        let doc = tree_json(dir, &args);
        let planned = doc["results"][0]["phases"][0]["planned"]
            .as_u64()
            .unwrap_or(0);
        assert_eq!(ops(&doc, "rmdir"), planned);
        assert!(
            !root.exists(),
            "{shape:?}: the tree is gone once its directories are"
        );
        // ext4's lost+found is the file system's, not the tree's.
        assert!(
            entries(dir).iter().all(|e| e == "lost+found"),
            "{:?}",
            entries(dir)
        );
    }
}

#[test]
fn every_phase_counts_what_find_counts_on_the_work_disk_and_tmpfs() {
    let dir = tempdir();
    counts_match_find(dir.path());
    let shm = tempdir_in_shm();
    counts_match_find(shm.path());
}

/// ext4 and xfs on loop devices, where mkfs and loop devices are there.
#[test]
fn every_phase_counts_what_find_counts_on_ext4_and_xfs() {
    for fs in ["ext4", "xfs"] {
        let Some(mounted) = loop_fs(fs) else {
            continue;
        };
        counts_match_find(&mounted.dir);
        let doc = tree_json(
            &mounted.dir,
            &["--depth", "1", "--width", "3", "--files", "20"],
        );
        let r = &doc["results"][0];
        assert_eq!(r["filesystem"], fs);
        // A file system of its own, where nothing else makes files: the
        // inodes its count lost are exactly the tree's (xfs allocates
        // inodes in chunks, so its free count moves in steps).
        if fs == "ext4" {
            assert_eq!(r["inodes_used"], r["inodes_made"], "{r}");
            assert_eq!(r["inodes_made"], 2 + 3 + 60);
        }
    }
}

struct LoopFs {
    dir: std::path::PathBuf,
    device: String,
    _backing: tempfile::TempDir,
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        unmount(&self.dir);
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// A file system of `fs` on a loop device over a file in /dev/shm,
/// mounted; None (saying why) where that cannot be done here.
fn loop_fs(fs: &str) -> Option<LoopFs> {
    let mkfs = format!("mkfs.{fs}");
    if Command::new(&mkfs).arg("-V").output().is_err() {
        eprintln!("SKIP {fs}: {mkfs} not found");
        return None;
    }
    let backing = tempdir_in_shm();
    let image = backing.path().join("fs.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(320 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&image)
        .output()
        .ok()
        .filter(|o| o.status.success());
    let Some(out) = out else {
        eprintln!("SKIP {fs}: no loop device (needs root)");
        return None;
    };
    let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let made = Command::new(&mkfs)
        .args(if fs == "xfs" {
            vec!["-f", "-q"]
        } else {
            vec!["-q", "-F"]
        })
        .arg(&device)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let dir = backing.path().join("mnt");
    std::fs::create_dir(&dir).unwrap();
    let mounted = made
        && Command::new("mount")
            .arg(&device)
            .arg(&dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIP {fs}: cannot make or mount it on {device}");
        let _ = Command::new("losetup").args(["-d", &device]).status();
        return None;
    }
    Some(LoopFs {
        dir,
        device,
        _backing: backing,
    })
}

#[test]
fn a_stonewalled_phase_says_what_each_thread_did_and_later_phases_use_what_was_made() {
    let dir = tempdir_in_shm();
    let doc = tree_json(
        dir.path(),
        &[
            "--depth",
            "1",
            "--width",
            "4",
            "--files",
            "100000",
            "--threads",
            "2",
            "--phase-time",
            "100ms",
            "--phases",
            "mkdir,create,stat,delete,rmdir",
        ],
    );
    let phases = doc["results"][0]["phases"].as_array().unwrap();
    let create = &phases[1];
    assert_eq!(create["phase"], "create");
    assert!(create["stonewalled"].as_bool().unwrap(), "{create}");
    assert!(u(&create["ops"]) < u(&create["planned"]));
    let threads = create["threads"].as_array().unwrap();
    let per: Vec<u64> = threads.iter().map(|t| u(&t["ops"])).collect();
    assert_eq!(per.iter().sum::<u64>(), u(&create["ops"]));
    assert_eq!(
        u(&create["behind"]),
        per.iter().max().unwrap() - per.iter().min().unwrap()
    );
    let stat = &phases[2];
    assert_eq!(u(&stat["planned"]), u(&create["ops"]));
    assert_eq!(entries(dir.path()).len(), 0);
}

#[test]
fn bad_shapes_and_directories_are_refused_before_anything_is_made() {
    let dir = tempdir();
    let d = dir.path().to_str().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    for (args, needle) in [
        (vec!["tree", d, "--width", "0"], "--width"),
        (vec!["tree", d, "--files", "0"], "--files"),
        (vec!["tree", d, "--depth=-1"], "--depth"),
        (
            vec!["tree", d, "--depth", "9", "--width", "10"],
            "directories",
        ),
        (vec!["tree", d, "--threads", "0"], "--threads"),
        (vec!["tree", d, "--file-size", "8k-1k"], "--file-size"),
        (vec!["tree", d, "--phases", "stat"], "no files"),
        (vec!["tree", d, "--phases", "mkdir,nope"], "nope"),
        (vec!["tree", d, "--phase-time", "0s"], "--phase-time"),
        (vec!["tree", file.to_str().unwrap()], "not a directory"),
        (vec!["tree", "/dev/null"], "not a directory"),
        (vec!["tree", d, "--shared-dir"], "--mpi"),
    ] {
        refused(&args, needle);
        assert_eq!(entries(dir.path()), ["a-file"], "{args:?}");
    }
    // A directory of the tree's name that is not fathom's is never used.
    std::fs::create_dir(dir.path().join("fathom-tree")).unwrap();
    refused(&["tree", d, "--overwrite"], "not a tree of fathom's");
}

/// A file system without the inodes or the room for the tree: refused
/// before anything is made.
#[test]
fn a_tree_the_file_system_cannot_hold_is_refused() {
    let dir = tempdir();
    if !mount_tmpfs(dir.path(), "size=1m,nr_inodes=200") {
        return;
    }
    let d = dir.path().to_str().unwrap();
    refused(
        &["tree", d, "--depth", "1", "--width", "3", "--files", "100"],
        "inodes",
    );
    refused(
        &[
            "tree",
            d,
            "--depth",
            "0",
            "--files",
            "50",
            "--file-size",
            "64k",
        ],
        "needs about",
    );
    assert_eq!(entries(dir.path()).len(), 0);
    unmount(dir.path());
}

#[test]
fn an_interrupted_tree_run_reports_what_it_did_and_removes_its_tree() {
    let dir = tempdir_in_shm();
    let out = dir.path().join("t.json");
    let child = fathom()
        .args(["tree", dir.path().to_str().unwrap()])
        .args(["--depth", "1", "--width", "10", "--files", "200000"])
        .args(["-o", out.to_str().unwrap(), "--output-format", "json"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let root = dir.path().join("fathom-tree");
    wait_until("the tree has files", || find(&root, "f") > 1000);
    let pid = child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(doc["interrupted"].as_bool().unwrap());
    assert!(ops(&doc, "create") > 0);
    assert!(!root.exists(), "the tree was removed");
    assert_eq!(entries(dir.path()), ["t.json"]);
}

#[test]
fn tree_results_in_every_format_and_compared() {
    let dir = tempdir_in_shm();
    let work = tempdir();
    let a = work.path().join("a.json");
    let b = work.path().join("b.json");
    for (out, threads) in [(&a, "1"), (&b, "2")] {
        run_ok(&[
            "tree",
            dir.path().to_str().unwrap(),
            "--depth",
            "1",
            "--width",
            "2",
            "--files",
            "30",
            "--threads",
            threads,
            "-o",
            out.to_str().unwrap(),
        ]);
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    assert_eq!(doc["results"][0]["kind"], "tree");
    let show = |format: &str| {
        let o = run_ok(&["report", a.to_str().unwrap(), "--output-format", format]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(show("text").contains("fathom tree: depth 1 x width 2, 30 files a leaf"));
    assert!(show("markdown").contains("| create |"));
    let csv = show("csv");
    assert!(csv.lines().any(|l| l.contains(",create,")), "{csv}");
    let html = work.path().join("r.html");
    run_ok(&[
        "report",
        a.to_str().unwrap(),
        "--output-format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_charts_drawn(&html, 2);
    let o = run_ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("tree phase") && text.contains("rmdir"),
        "{text}"
    );
}

/// fio's file-operation engines run as the tree run they translate to:
/// each job a thread on its own `nrfiles`, timed as fio times them, in
/// fio's JSON as fio writes it (the counts fio itself gives, where fio is
/// installed: an operation's latency sample, and its engine's I/Os of no
/// data, `bs` each over the file's size), and nothing left behind.
#[test]
fn fios_file_operation_jobs_count_what_fio_counts() {
    let dir = tempdir_in_shm();
    let d = dir.path().to_str().unwrap();
    // 300 operations of two 4k "I/Os" each.
    for (engine, rw, counted) in [
        ("filecreate", "read", 600u64),
        ("filestat", "read", 600),
        ("filedelete", "write", 600),
        ("dircreate", "read", 600),
        ("dirstat", "read", 600),
        ("dirdelete", "read", 600),
    ] {
        let job = dir.path().join(format!("{engine}.fio"));
        std::fs::write(
            &job,
            format!(
                "[global]\nioengine={engine}\nrw={rw}\nnrfiles=150\nfilesize=8k\nopenfiles=1\ncreate_on_open=1\ndirectory={d}\n\n[a]\n[b]\n"
            ),
        )
        .unwrap();
        let o = run_ok(&["fio", job.to_str().unwrap(), "--output-format=json"]);
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        let jobs = doc["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 2, "{engine}");
        let ours: Vec<u64> = jobs.iter().map(|j| u(&j[rw]["total_ios"])).collect();
        assert_eq!(ours, [counted / 2, counted / 2], "{engine}");
        assert_eq!(u(&jobs[0][rw]["io_bytes"]), 150 * 8192, "{engine}");
        assert_eq!(u(&jobs[0][rw]["clat_ns"]["N"]), 150, "{engine}");
        assert_eq!(jobs[0]["jobname"], "a");
        assert!(f(&jobs[0][rw]["clat_ns"]["mean"]) > 0.0, "{engine}");
        let left: Vec<String> = entries(dir.path())
            .into_iter()
            .filter(|e| !e.ends_with(".fio"))
            .collect();
        assert!(left.is_empty(), "{engine}: {left:?}");
        // fio's own counts, where fio is here (it leaves its files: removed).
        let theirs = Command::new("fio")
            .arg(&job)
            .arg("--output-format=json")
            .output()
            .ok()
            .filter(|o| o.status.success());
        if let Some(theirs) = theirs {
            let fio: Value = serde_json::from_slice(&theirs.stdout).unwrap();
            let counts: Vec<u64> = fio["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| u(&j[rw]["total_ios"]))
                .collect();
            assert_eq!(counts, ours, "{engine}: fio counts");
            let bytes = u(&fio["jobs"][0][rw]["io_bytes"]);
            assert_eq!(bytes, u(&jobs[0][rw]["io_bytes"]), "{engine}: fio's bytes");
            for e in entries(dir.path())
                .into_iter()
                .filter(|e| !e.ends_with(".fio"))
            {
                let p = dir.path().join(e);
                let _ = std::fs::remove_file(&p).or_else(|_| std::fs::remove_dir(&p));
            }
        }
    }
    refused(
        &[
            "fio",
            "--readonly",
            dir.path().join("filestat.fio").to_str().unwrap(),
        ],
        "--readonly",
    );
    // A tree run through `fathom run JOB.fio` too, with fathom's result.
    let job = dir.path().join("filecreate.fio");
    let o = run_ok(&["run", job.to_str().unwrap(), "--output-format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(ops(&doc, "create"), 300);
    let bad = dir.path().join("bad.fio");
    std::fs::write(
        &bad,
        format!("[a]\nioengine=filestat\nnrfiles=2\nfilesize=4k\nfilename={d}/x\n"),
    )
    .unwrap();
    refused(&["fio", bad.to_str().unwrap()], "with filename");
    std::fs::write(
        &bad,
        format!("[a]\nioengine=filecreate\nnrfiles=2\nfilesize=4k\ndirectory={d}\n[b]\nioengine=psync\nsize=1m\nfilename={d}/x\n"),
    )
    .unwrap();
    refused(
        &["fio", bad.to_str().unwrap()],
        "every job of the file must use it",
    );
    // An I/O engine's job still has a worker per file, so a bound.
    std::fs::write(
        &bad,
        format!("[a]\nnrfiles=5000\nfilesize=4k\ndirectory={d}\n"),
    )
    .unwrap();
    refused(&["fio", bad.to_str().unwrap()], "nrfiles=5000");
}

/// A tree kept by an earlier run stays kept after a run of its later
/// phases without --leave (it was not that run's to remove), and a tree
/// that cannot be made is refused naming where.
#[test]
fn a_kept_tree_stays_kept_and_a_failure_names_its_path() {
    let dir = tempdir_in_shm();
    let d = dir.path().to_str().unwrap();
    let shape = ["--depth", "1", "--width", "2", "--files", "3"];
    run_ok(
        &[
            &["tree", d],
            &shape[..],
            &["--phases", "mkdir,create", "--leave"],
        ]
        .concat(),
    );
    let root = dir.path().join("fathom-tree");
    run_ok(&["tree", d, "--phases", "stat"]);
    assert_eq!(find(&root, "f"), 6, "the kept tree's files are all there");
    // A file where the tree's directory would go.
    let blocked = tempdir_in_shm();
    std::fs::write(blocked.path().join("fathom-tree"), "").unwrap();
    let o = run(&[&["tree", blocked.path().to_str().unwrap()], &shape[..]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("fathom-tree"));
}

/// A kept tree whose leaf was swapped for a link to a user's directory:
/// the timed phases walk down from the tree's own directory without
/// following a link, so delete and rename never reach the user's files,
/// and a rename never replaces a name.
#[test]
fn a_leaf_swapped_for_a_link_leads_the_timed_phases_nowhere() {
    let dir = tempdir_in_shm();
    let d = dir.path().to_str().unwrap();
    let shape = ["--depth", "1", "--width", "2", "--files", "5"];
    run_ok(
        &[
            &["tree", d],
            &shape[..],
            &["--phases", "mkdir,create", "--leave"],
        ]
        .concat(),
    );
    let root = dir.path().join("fathom-tree");
    let users = tempdir_in_shm();
    for i in 0..5 {
        std::fs::write(users.path().join(format!("f{i}")), "mine").unwrap();
        std::fs::write(users.path().join(format!("r{i}")), "mine too").unwrap();
    }
    std::fs::remove_dir_all(root.join("d1")).unwrap();
    std::os::unix::fs::symlink(users.path(), root.join("d1")).unwrap();
    for phase in ["rename", "delete"] {
        let o = run(&[&["tree", d], &shape[..], &["--phases", phase, "--leave"]].concat());
        assert_ne!(
            o.status.code(),
            Some(0),
            "{phase}: the swapped leaf is an error"
        );
        for i in 0..5 {
            let f = users.path().join(format!("f{i}"));
            let r = users.path().join(format!("r{i}"));
            assert_eq!(
                std::fs::read_to_string(&f).unwrap(),
                "mine",
                "{phase}: {f:?}"
            );
            assert_eq!(
                std::fs::read_to_string(&r).unwrap(),
                "mine too",
                "{phase}: {r:?}"
            );
        }
    }
    std::fs::remove_file(root.join("d1")).unwrap();
}
