//! `mpirun -n 4 fathom run --mpi`: four ranks, one cluster document, exact
//! totals, disjoint slices of a shared file. Built and run only with
//! `--features mpi` (CI: `cargo test --features mpi --test mpi`), and skipped
//! with the reason printed where mpirun is missing.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "mpi")]

mod common;
#[path = "common/faultfs.rs"]
mod faultfs;
#[path = "common/s3_server.rs"]
mod s3_server;

use common::*;
use fathom::measure::histogram::LatencyHistogram;
use serde_json::Value;
use std::process::{Command, Output};

/// The tests here run one at a time: each starts several ranks on a
/// 2-core machine, and the launcher gives a rank one second between its
/// SIGTERM and its SIGKILL, which a machine busy with other ranks can
/// miss.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn mpirun(args: &[&str]) -> Option<Output> {
    mpirun_with(4, args)
}

/// `mpirun -n N fathom ARGS`, or None (saying why) without mpirun.
fn mpirun_command(n: u32, args: &[&str]) -> Option<Command> {
    if Command::new("mpirun").arg("--version").output().is_err() {
        eprintln!("skipped: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)");
        return None;
    }
    let mut cmd = Command::new("mpirun");
    cmd.env("XDG_DATA_HOME", test_data_home())
        .args(["--allow-run-as-root", "--oversubscribe", "-n"])
        .arg(n.to_string())
        .arg(env!("CARGO_BIN_EXE_fathom"))
        .args(args);
    Some(cmd)
}

fn mpirun_with(n: u32, args: &[&str]) -> Option<Output> {
    Some(mpirun_command(n, args)?.output().unwrap())
}

fn document(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn four_ranks_make_one_document_with_exact_totals() {
    let _serial = serial();
    let dir = tempdir();
    let out = dir.path().join("cluster.json");
    let pattern = format!("{}/r{{rank}}.dat", dir.path().display());
    let Some(o) = mpirun(&[
        "run",
        "--mpi",
        &pattern,
        "--size",
        "4m",
        "--runtime",
        "500ms",
        "--iodepth",
        "2",
        "-o",
        out.to_str().unwrap(),
        "--output-format",
        "json",
    ]) else {
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&out);
    let c = &doc["cluster"];
    assert_eq!(c["ranks"], 4);
    assert_eq!(c["launcher"], "mpi");
    assert!(c["mpi_library"].as_str().is_some_and(|l| !l.is_empty()));
    let ranks = c["per_rank"].as_array().unwrap();
    let total = &doc["results"][0]["total"]["read"];
    let mut merged = LatencyHistogram::new();
    let mut ios = 0;
    for (r, rank) in ranks.iter().enumerate() {
        assert_eq!(rank["rank"], r);
        let read = &rank["results"][0]["total"]["read"];
        ios += u(&read["ios"]);
        merged.add(&LatencyHistogram::decode(read["histogram"].as_str().unwrap()).unwrap());
        // Each rank ran on its own file.
        let target = rank["results"][0]["targets"][0]["name"].as_str().unwrap();
        assert!(target.ends_with(&format!("r{r}.dat")), "{target}");
    }
    assert_eq!(u(&total["ios"]), ios);
    assert_eq!(u(&total["lat_ns"]["p99"]), merged.value_at_percentile(99.0));
    assert_eq!(
        entries(dir.path()),
        ["cluster.json"],
        "every rank removed its file"
    );
}

#[test]
fn a_shared_file_is_cut_into_disjoint_slices_that_writes_stay_in() {
    let _serial = serial();
    const SENTINEL: u8 = 0x5A;
    let dir = tempdir();
    let file = dir.path().join("shared");
    std::fs::write(&file, vec![SENTINEL; 6 << 20]).unwrap();
    let out = dir.path().join("cluster.json");
    // Random writes, each rank read back with --verify: a block another
    // rank wrote in a rank's slice would fail that rank's verification.
    let Some(o) = mpirun(&[
        "run",
        "--mpi",
        "--layout",
        "shared",
        file.to_str().unwrap(),
        "--offset",
        "1m",
        "--size",
        "4m",
        "--rw",
        "randwrite",
        "--bs",
        "16k",
        "--iodepth",
        "4",
        "--verify",
        "--overwrite",
        "--runtime",
        "500ms",
        "-o",
        out.to_str().unwrap(),
        "--output-format",
        "json",
    ]) else {
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&out);
    let mut slices: Vec<(u64, u64)> = doc["cluster"]["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let t = &r["results"][0]["targets"][0];
            assert_eq!(t["verify"]["corrupt"], 0, "{t}");
            (u(&t["offset"]), u(&t["size"]))
        })
        .collect();
    slices.sort();
    assert_eq!(slices.len(), 4);
    assert_eq!(slices[0].0, 1 << 20);
    for w in slices.windows(2) {
        assert_eq!(
            w[0].0 + w[0].1,
            w[1].0,
            "slices touch and never overlap: {slices:?}"
        );
    }
    let end = slices[3].0 + slices[3].1;
    assert!(end <= 5 << 20);
    let data = std::fs::read(&file).unwrap();
    assert!(
        data[..1 << 20].iter().all(|&b| b == SENTINEL),
        "before the region"
    );
    assert!(
        data[end as usize..].iter().all(|&b| b == SENTINEL),
        "after the region"
    );
}

#[test]
fn one_ranks_bad_input_stops_every_rank_before_anything_is_created() {
    let _serial = serial();
    let dir = tempdir();
    let file = dir.path().join("shared");
    let Some(o) = mpirun(&[
        "run",
        "--mpi",
        "--layout",
        "shared",
        file.to_str().unwrap(),
        "--runtime",
        "1s",
    ]) else {
        return;
    };
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rank 0: workload run: --layout shared needs --size"),
        "{err}"
    );
    assert_eq!(
        err.matches("needs --size").count(),
        1,
        "one rank says it: {err}"
    );
    assert!(entries(dir.path()).is_empty());
}

/// A recording is one process's I/O: under MPI it would be one rank's,
/// so it is refused rather than silently left out.
#[test]
fn recording_is_refused_under_mpi() {
    let _serial = serial();
    let dir = tempdir();
    let file = dir.path().join("f");
    let trace = dir.path().join("t.trace");
    let o = fathom()
        .args(["run", "--mpi", file.to_str().unwrap(), "--size", "1m"])
        .args(["--record", trace.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--record are for runs without MPI"), "{err}");
    assert!(entries(dir.path()).is_empty(), "nothing created");
}

/// A job file that replays an iolog plays one trace from one process:
/// under MPI it is refused, by rank 0 alone, before anything is created.
#[test]
fn a_replay_job_is_refused_under_mpi() {
    let _serial = serial();
    let dir = tempdir();
    let data = dir.path().join("data");
    let log = dir.path().join("io.log");
    std::fs::write(
        &log,
        format!(
            "fio version 3 iolog\n0 {d} add\n1 {d} open\n2 {d} read 0 4096\n",
            d = data.display()
        ),
    )
    .unwrap();
    let job = dir.path().join("play.fio");
    std::fs::write(&job, format!("[play]\nread_iolog={}\n", log.display())).unwrap();
    let Some(o) = mpirun_with(2, &["run", "--mpi", job.to_str().unwrap()]) else {
        return;
    };
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.matches("(read_iolog) is for runs without MPI").count(),
        1,
        "{err}"
    );
    assert_eq!(entries(dir.path()), ["io.log", "play.fio"]);
}

#[test]
fn a_binary_of_another_mpi_than_the_launcher_is_refused() {
    let _serial = serial();
    // Launched "by" a 4-rank MPICH/PMI launcher, but alone in its own MPI.
    let o = fathom()
        .args(["run", "--mpi", "/nonexistent/x", "--runtime", "1s"])
        .env("PMI_SIZE", "4")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("started 4 ranks (PMI_SIZE)"), "{err}");
}

/// Each of `ranks` ranks' files `DIR/r{rank}.dat`, once all are laid out
/// at `len` bytes.
fn laid_out(dir: &std::path::Path, ranks: u32, len: u64) -> Vec<std::path::PathBuf> {
    let files: Vec<_> = (0..ranks).map(|r| dir.join(format!("r{r}.dat"))).collect();
    wait_until("every rank laid out its file", || {
        files
            .iter()
            .all(|f| f.metadata().is_ok_and(|m| m.len() == len))
    });
    files
}

/// `mpirun -n N fathom ARGS`, started.
fn mpirun_spawn(n: u32, args: &[&str]) -> Option<std::process::Child> {
    Some(
        mpirun_command(n, args)?
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// The launcher ends the job when one rank is killed: the others, stopped
/// by its SIGTERM, remove the files they created, as a plain run does.
#[test]
fn ranks_stopped_by_the_launcher_remove_their_files() {
    let _serial = serial();
    let dir = tempdir();
    let pattern = format!("{}/r{{rank}}.dat", dir.path().display());
    let Some(child) = mpirun_spawn(
        3,
        &["run", "--mpi", &pattern, "--size", "8m", "--runtime", "30s"],
    ) else {
        return;
    };
    let files = laid_out(dir.path(), 3, 8 << 20);
    // Rank 2: the fathom process whose command line made r2.dat.
    let ranks = String::from_utf8(
        Command::new("pgrep")
            .args(["-P", &child.id().to_string()])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let victim = ranks
        .split_whitespace()
        .find(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok()
                && std::fs::read_dir(format!("/proc/{pid}/fd"))
                    .map(|fds| {
                        fds.flatten()
                            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == files[2]))
                    })
                    .unwrap_or(false)
        })
        .expect("the rank with r2.dat open")
        .to_string();
    Command::new("kill")
        .args(["-KILL", &victim])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "the job ends in failure");
    // The killed rank could not clean up; the others did.
    assert!(
        !files[0].exists() && !files[1].exists(),
        "{:?}\n{}",
        entries(dir.path()),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A rank that fails (here: its file system is too full to grow its file
/// for the second workload) sends an error instead of results: rank 0
/// writes what the others measured, marked interrupted, naming the rank
/// that failed, and exits 1.
#[test]
fn a_rank_that_fails_is_named_in_the_document_of_the_others() {
    let _serial = serial();
    let Some(small) = SmallTmpfs::new("6m") else {
        return;
    };
    let dir = tempdir();
    // Rank 0 on the disk; ranks 1 and 2 on one 6 MiB tmpfs, where both
    // files fit at 2 MiB, and each fits alone at 4 MiB (the checks pass)
    // but not both.
    std::fs::create_dir(dir.path().join("d0")).unwrap();
    for r in [1, 2] {
        std::os::unix::fs::symlink(small.dir.path(), dir.path().join(format!("d{r}"))).unwrap();
    }
    let pattern = format!("{}/d{{rank}}/r{{rank}}.dat", dir.path().display());
    let job = dir.path().join("grows.toml");
    std::fs::write(
        &job,
        "[defaults]\nruntime = \"300ms\"\n\n[workload.first]\nsize = \"2m\"\n\n[workload.grown]\nsize = \"4m\"\n",
    )
    .unwrap();
    let out_path = dir.path().join("cluster.json");
    let Some(o) = mpirun_with(
        3,
        &[
            "run",
            job.to_str().unwrap(),
            "--mpi",
            &pattern,
            "-o",
            out_path.to_str().unwrap(),
            "--output-format",
            "json",
        ],
    ) else {
        return;
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let doc = document(&out_path);
    assert_eq!(doc["interrupted"], true);
    let failed = doc["cluster"]["failed"].as_array().expect("failed ranks");
    assert!(!failed.is_empty(), "{failed:?}");
    let rank = failed[0]["rank"].as_u64().unwrap();
    assert!(rank == 1 || rank == 2, "{failed:?}");
    assert!(
        failed[0]["error"].as_str().unwrap().contains("space"),
        "{failed:?}"
    );
    // What was measured: the first workload, by the ranks that did not fail.
    assert_eq!(doc["results"].as_array().unwrap().len(), 1);
    assert_eq!(doc["cluster"]["ranks"], 3);
    let reported: Vec<u64> = doc["cluster"]["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_u64().unwrap())
        .collect();
    assert!(
        reported.contains(&0) && !reported.contains(&rank),
        "{reported:?}"
    );
    let text = String::from_utf8(run_ok(&["report", out_path.to_str().unwrap()]).stdout).unwrap();
    assert!(text.contains(&format!("rank {rank} FAILED")), "{text}");
}

/// The pid of rank `rank` among the children of mpirun `child`, from the
/// rank number Open MPI puts in each rank's environment.
fn rank_pid(child: &std::process::Child, rank: u32) -> Option<String> {
    let ranks = String::from_utf8(
        Command::new("pgrep")
            .args(["-P", &child.id().to_string()])
            .output()
            .ok()?
            .stdout,
    )
    .ok()?;
    let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
    ranks.split_whitespace().find_map(|pid| {
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        env.split(|&b| b == 0)
            .any(|v| v == wanted.as_bytes())
            .then(|| pid.to_string())
    })
}

/// Ctrl-C on mpirun (which sends each rank SIGTERM, then SIGKILL a second
/// later): rank 0 still writes what every rank measured, marked
/// interrupted, and says so; the ranks remove their files.
#[test]
fn ctrl_c_on_mpirun_writes_what_the_ranks_measured() {
    let _serial = serial();
    let dir = tempdir();
    let pattern = format!("{}/r{{rank}}.dat", dir.path().display());
    let out_path = dir.path().join("cluster.json");
    let Some(child) = mpirun_spawn(
        2,
        &[
            "run",
            "--mpi",
            &pattern,
            "--size",
            "4m",
            "--runtime",
            "30s",
            "-o",
            out_path.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let files = laid_out(dir.path(), 2, 4 << 20);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: a signal to the launcher we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let err = String::from_utf8_lossy(&out.stderr);
    // mpirun's own exit code after Ctrl-C is 1, whatever its ranks return,
    // and it may stop passing on what they print: the document is the
    // evidence.
    assert!(!out.status.success(), "{err}");
    let doc = document(&out_path);
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["cluster"]["ranks"], 2);
    assert!(u(&doc["results"][0]["total"]["read"]["ios"]) > 0, "{doc}");
    assert!(
        !files[0].exists() && !files[1].exists(),
        "{:?}",
        entries(dir.path())
    );
}

/// A rank stopped (SIGSTOP) mid-run does not hold the others: after
/// --mpi-timeout, rank 0 names it as failed, writes what the others
/// measured and ends the job.
#[test]
fn a_stopped_rank_is_named_failed_after_the_timeout() {
    let _serial = serial();
    let dir = tempdir();
    let pattern = format!("{}/r{{rank}}.dat", dir.path().display());
    let out_path = dir.path().join("cluster.json");
    let Some(child) = mpirun_spawn(
        3,
        &[
            "run",
            "--mpi",
            &pattern,
            "--size",
            "4m",
            "--runtime",
            "2s",
            "--mpi-timeout",
            "3s",
            "-o",
            out_path.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    laid_out(dir.path(), 3, 4 << 20);
    let victim = rank_pid(&child, 2).expect("rank 2's process");
    Command::new("kill")
        .args(["-STOP", &victim])
        .status()
        .unwrap();
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    // The runtime, the timeout, and a margin.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    let doc = document(&out_path);
    assert_eq!(doc["interrupted"], true);
    let failed = doc["cluster"]["failed"].as_array().expect("failed ranks");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["rank"], 2);
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("did not answer"),
        "{failed:?}"
    );
    assert!(u(&doc["results"][0]["total"]["read"]["ios"]) > 0);
}

/// `--live` under `--mpi`: each rank writes its own seconds, to a file of
/// its own, and they add up to the cluster's total.
#[test]
fn each_rank_writes_its_own_live_lines() {
    let _serial = serial();
    let dir = tempdir();
    let out = dir.path().join("cluster.json");
    let lines = dir.path().join("live.jsonl");
    let Some(o) = mpirun_with(
        2,
        &[
            "run",
            "--mpi",
            "--engine",
            "null",
            "--rate-iops",
            "500",
            "--runtime",
            "2s",
            "--live",
            lines.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let total = u(&document(&out)["results"][0]["total"]["read"]["ios"]);
    let mut summed = 0;
    // Per second: the ranks' histograms merged here, and rank 0's
    // cluster line of that second.
    let mut merged: std::collections::BTreeMap<u64, LatencyHistogram> = Default::default();
    let mut cluster: Vec<Value> = Vec::new();
    for rank in 0..2 {
        let text =
            std::fs::read_to_string(dir.path().join(format!("live.rank{rank}.jsonl"))).unwrap();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if v["host"] == "cluster" {
                assert_eq!(rank, 0, "only rank 0 merges: {v}");
                cluster.push(v);
                continue;
            }
            let h =
                LatencyHistogram::decode(v["directions"]["read"]["histogram"].as_str().unwrap())
                    .unwrap();
            merged.entry(u(&v["second"])).or_default().add(&h);
            assert!(
                v["host"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("-rank{rank}")),
                "{v}"
            );
            summed += u(&v["directions"]["read"]["ios"]);
        }
    }
    assert_eq!(summed, total);
    // Rank 0's cluster lines: every second of both ranks, merged exactly
    // (the same histogram as merging the ranks' own lines), not averaged.
    assert_eq!(cluster.len(), merged.len(), "{cluster:?}");
    let mut cluster_ios = 0;
    for line in &cluster {
        let ranks = u(&line["ranks"]);
        assert!((1..=2).contains(&ranks), "{line}");
        let read = &line["directions"]["read"];
        cluster_ios += u(&read["ios"]);
        let theirs = LatencyHistogram::decode(read["histogram"].as_str().unwrap()).unwrap();
        let ours = &merged[&u(&line["second"])];
        if ranks == 2 {
            assert_eq!(theirs.count(), ours.count(), "{line}");
            for p in [50.0, 99.0, 99.99, 100.0] {
                assert_eq!(
                    theirs.value_at_percentile(p),
                    ours.value_at_percentile(p),
                    "{line}"
                );
            }
        }
    }
    assert_eq!(cluster_ios, total);
}

/// A port a rank cannot serve on is bad input: every rank stops at once
/// with the rank's one line and exit 2, nothing written, instead of the
/// others waiting for the plan until the timeout.
#[test]
fn a_rank_that_cannot_serve_its_port_stops_every_rank_at_once() {
    let _serial = serial();
    let dir = tempdir();
    let out = dir.path().join("cluster.json");
    // Rank 1 serves on the port given plus one: that one is taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let given = format!("127.0.0.1:{}", port - 1);
    let started = std::time::Instant::now();
    let Some(o) = mpirun_with(
        2,
        &[
            "run",
            "--mpi",
            "--engine",
            "null",
            "--runtime",
            "1s",
            "--metrics-listen",
            &given,
            "-o",
            out.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot listen"), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "waited for the timeout: {stderr}"
    );
    assert!(!out.exists());
}

/// `fathom tree --mpi`: every rank on a tree of its own, phases started
/// together; the cluster's histograms are the exact merge of the ranks'
/// own, every rank's threads are kept, and nothing is left behind. A
/// stonewalled phase keeps every rank's count, the slowest's too.
#[test]
fn four_ranks_measure_trees_of_their_own_and_merge_them_exactly() {
    let _serial = serial();
    let dir = tempdir();
    let work = tempdir_in_shm();
    let out = dir.path().join("tree.json");
    let Some(o) = mpirun(&[
        "tree",
        work.path().to_str().unwrap(),
        "--mpi",
        "--depth",
        "1",
        "--width",
        "3",
        "--files",
        "40",
        "--threads",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]) else {
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&out);
    let merged = &doc["results"][0];
    let per_rank = doc["cluster"]["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), 4);
    for (i, phase) in merged["phases"].as_array().unwrap().iter().enumerate() {
        let mut ours = LatencyHistogram::new();
        let mut ops = 0;
        for rank in per_rank {
            let theirs = &rank["results"][0]["phases"][i];
            assert_eq!(theirs["phase"], phase["phase"]);
            ops += u(&theirs["ops"]);
            ours.add(&LatencyHistogram::decode(theirs["histogram"].as_str().unwrap()).unwrap());
        }
        assert_eq!(u(&phase["ops"]), ops, "{phase}");
        let cluster = LatencyHistogram::decode(phase["histogram"].as_str().unwrap()).unwrap();
        assert_eq!(cluster.count(), ours.count());
        assert_eq!(
            cluster.value_at_percentile(99.0),
            ours.value_at_percentile(99.0)
        );
        let threads = phase["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 8, "2 threads on each of 4 ranks");
        assert!(threads.iter().all(|t| t["rank"].as_u64().is_some()));
    }
    let create = phase(merged, "create");
    assert_eq!(u(&create["ops"]), 4 * 120);
    assert_eq!(entries(work.path()).len(), 0, "every rank removed its tree");

    // Cut at 100 ms: every rank's threads are counted, and how far the
    // slowest fell behind is the cluster's.
    let Some(o) = mpirun(&[
        "tree",
        work.path().to_str().unwrap(),
        "--mpi",
        "--depth",
        "0",
        "--files",
        "400000",
        "--phase-time",
        "100ms",
        "--phases",
        "mkdir,create,delete,rmdir",
        "-o",
        out.to_str().unwrap(),
        "--overwrite",
    ]) else {
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&out);
    // A tree of one directory has no directory phases: create is the first.
    let create = phase(&doc["results"][0], "create");
    assert!(create["stonewalled"].as_bool().unwrap(), "{create}");
    let counts: Vec<u64> = create["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| u(&t["ops"]))
        .collect();
    assert_eq!(counts.len(), 4);
    assert_eq!(counts.iter().sum::<u64>(), u(&create["ops"]));
    assert_eq!(
        u(&create["behind"]),
        counts.iter().max().unwrap() - counts.iter().min().unwrap()
    );
    assert_eq!(entries(work.path()).len(), 0);
}

/// Every file and directory under `dir`, walked (what `find` counts).
fn find(dir: &std::path::Path) -> (u64, u64) {
    let (mut files, mut dirs) = (0, 0);
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            dirs += 1;
            let (f, d) = find(&e.path());
            files += f;
            dirs += d;
        } else {
            files += 1;
        }
    }
    (files, dirs)
}

fn phase<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == name)
        .unwrap_or_else(|| panic!("no {name} phase in {result}"))
}

/// `fathom tree --mpi --shared-dir`: four ranks in one tree, each thread
/// of each on a share of its own. What `find` counts is what the cluster
/// says it made; its histograms are the exact merge of the ranks' own; a
/// kept shared tree's later phases run on it and rank 0 removes it; DIR
/// naming `{rank}` cannot be shared.
#[test]
fn four_ranks_share_one_tree() {
    let _serial = serial();
    let dir = tempdir();
    let work = tempdir_in_shm();
    let w = work.path().to_str().unwrap();
    let out = dir.path().join("tree.json");
    let o = out.to_str().unwrap();
    let shape = [
        "--depth",
        "2",
        "--width",
        "3",
        "--files",
        "10",
        "--threads",
        "2",
    ];
    let mut args = vec!["tree", w, "--mpi", "--shared-dir", "--leave"];
    args.extend(shape);
    args.extend(["--phases", "mkdir,create", "-o", o]);
    let Some(made) = mpirun(&args) else {
        return;
    };
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let doc = document(&out);
    let merged = &doc["results"][0];
    assert_eq!(u(&phase(merged, "mkdir")["ops"]), 12);
    assert_eq!(u(&phase(merged, "create")["ops"]), 90);
    // The tree's files and its marker with a part per other rank.
    assert_eq!(find(&work.path().join("fathom-tree")), (90 + 4, 12));
    let per_rank = doc["cluster"]["per_rank"].as_array().unwrap();
    for name in ["mkdir", "create"] {
        let mut ours = LatencyHistogram::new();
        for rank in per_rank {
            let theirs = phase(&rank["results"][0], name);
            ours.add(&LatencyHistogram::decode(theirs["histogram"].as_str().unwrap()).unwrap());
        }
        let cluster = phase(merged, name);
        let cluster = LatencyHistogram::decode(cluster["histogram"].as_str().unwrap()).unwrap();
        assert_eq!(cluster.count(), ours.count(), "{name}");
        assert_eq!(
            cluster.value_at_percentile(100.0),
            ours.value_at_percentile(100.0),
            "{name}"
        );
        assert_eq!(phase(merged, name)["threads"].as_array().unwrap().len(), 8);
    }
    assert!(merged["inodes_used"].as_u64().is_some_and(|n| n >= 102));

    // Its later phases, on as many ranks; on fewer it is refused.
    let mut args = vec!["tree", w, "--mpi", "--shared-dir"];
    args.extend(shape);
    args.extend([
        "--phases",
        "stat,read,rename,delete,rmdir",
        "-o",
        o,
        "--overwrite",
    ]);
    let fewer = mpirun_with(2, &args).unwrap();
    assert_eq!(
        fewer.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&fewer.stderr)
    );
    assert!(String::from_utf8_lossy(&fewer.stderr).contains("4 rank(s)"));
    let later = mpirun(&args).unwrap();
    assert!(
        later.status.success(),
        "{}",
        String::from_utf8_lossy(&later.stderr)
    );
    let merged = &document(&out)["results"][0];
    for name in ["stat", "read", "rename", "delete"] {
        assert_eq!(u(&phase(merged, name)["ops"]), 90, "{name}");
    }
    assert_eq!(u(&phase(merged, "rmdir")["ops"]), 12);
    assert_eq!(entries(work.path()).len(), 0, "rank 0 removed the tree");

    let named = format!("{w}/{{rank}}");
    let refused = mpirun(&["tree", &named, "--mpi", "--shared-dir"]).unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("{rank}"));
}

/// A stonewalled phase with one rank slowed: rank 1's tree is on a FUSE
/// file system that answers each creation 20 ms late, the others on
/// tmpfs. The create phase still ends at its time, and the cluster's
/// result holds the slow rank's own count (what the file system saw it
/// create) and how far it fell behind the fastest.
#[test]
fn a_slow_rank_is_counted_when_a_phase_is_cut() {
    let _serial = serial();
    let Some(fs) = faultfs::skip_or_mount() else {
        return;
    };
    let dir = tempdir();
    let work = tempdir_in_shm();
    for rank in [0, 2, 3] {
        std::fs::create_dir(work.path().join(rank.to_string())).unwrap();
    }
    std::os::unix::fs::symlink(&fs.dir, work.path().join("1")).unwrap();
    fs.control.set(faultfs::Plan {
        armed: true,
        create_delay: Some(std::time::Duration::from_millis(20)),
        ..Default::default()
    });
    let out = dir.path().join("tree.json");
    let per_rank_dir = format!("{}/{{rank}}", work.path().display());
    let Some(o) = mpirun(&[
        "tree",
        &per_rank_dir,
        "--mpi",
        "--depth",
        "0",
        "--files",
        "100000",
        "--phase-time",
        "300ms",
        "--phases",
        "mkdir,create,delete,rmdir",
        "-o",
        out.to_str().unwrap(),
    ]) else {
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&out);
    let create = phase(&doc["results"][0], "create");
    assert!(create["stonewalled"].as_bool().unwrap(), "{create}");
    let threads = create["threads"].as_array().unwrap();
    let count = |rank: u64| {
        threads
            .iter()
            .find(|t| t["rank"].as_u64() == Some(rank))
            .map(|t| u(&t["ops"]))
            .unwrap()
    };
    let slow = count(1);
    // Its files, and the tree's marker, are what the file system made.
    assert_eq!(fs.control.seen().creates, slow + 1, "{create}");
    assert!(slow > 0 && slow < 100_000);
    let all: Vec<u64> = (0..4).map(count).collect();
    eprintln!(
        "creates per rank (rank 1 slowed): {all:?}, behind {}",
        create["behind"]
    );
    assert_eq!(all.iter().sum::<u64>(), u(&create["ops"]));
    assert_eq!(
        u(&create["behind"]),
        all.iter().max().unwrap() - all.iter().min().unwrap()
    );
    // The phase ended at its time, not when the slow rank's share would.
    assert!(create["elapsed_s"].as_f64().unwrap() < 30.0, "{create}");
    for rank in 0..4 {
        assert_eq!(entries(&work.path().join(rank.to_string())).len(), 0);
    }
}

/// Two ranks on one object store, each under its own prefix (`{rank}`):
/// one result, every rank's requests in it, everything made deleted; a
/// prefix the ranks would share is refused on every rank.
#[test]
fn ranks_on_an_object_store_merge_into_one_result() {
    let _serial = serial();
    let Some(server) = s3_server::Server::start("seaweedfs") else {
        return;
    };
    let dir = tempdir();
    let out = dir.path().join("cluster.json");
    let run = |prefix: &str, out: &std::path::Path| {
        let mut cmd = mpirun_command(
            2,
            &[
                "run",
                "--mpi",
                prefix,
                "--s3-endpoint",
                &server.endpoint,
                "--mix",
                "get=3,put=1",
                "--object-size",
                "4k",
                "--objects",
                "6",
                "--runtime",
                "1500ms",
                "-o",
                out.to_str().unwrap(),
                "--output-format",
                "json",
            ],
        )?;
        // Ranks on this host inherit mpirun's environment.
        Some(
            cmd.env("AWS_ACCESS_KEY_ID", s3_server::KEY)
                .env("AWS_SECRET_ACCESS_KEY", s3_server::SECRET)
                .output()
                .unwrap(),
        )
    };
    let Some(o) = run("s3://bench/ranks-{rank}", &out) else {
        return;
    };
    succeeded(&o);
    let doc = document(&out);
    let result = &doc["results"][0];
    assert_eq!(result["kind"], "object", "{doc}");
    assert_eq!(result["preparation"]["objects"], 12, "each rank's 6");
    assert_eq!(result["cleanup"]["failed"], 0);
    let ops: u64 = result["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["ops"].as_u64().unwrap())
        .sum();
    let per_second: u64 = result["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["ops"].as_object().unwrap().values())
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert!(per_second <= ops && ops > 0, "{result}");
    let Some(o) = run("s3://bench/shared", &dir.path().join("shared.json")) else {
        return;
    };
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("{rank}"));
}

/// Two ranks, each a host of two accelerators with a dataset of its own:
/// one document whose AU is over all four accelerators, whose tails hold
/// every rank's batches, and nothing left behind; a DIR the ranks would
/// share is refused on every rank.
#[test]
fn ranks_of_a_training_run_merge_into_one_au() {
    let _serial = serial();
    let dir = tempdir();
    let out = dir.path().join("cluster.json");
    let per_rank = format!("{}/{{rank}}", dir.path().display());
    for r in 0..2 {
        std::fs::create_dir(dir.path().join(r.to_string())).unwrap();
    }
    let Some(o) = mpirun_with(
        2,
        &[
            "train",
            &per_rank,
            "--files",
            "56",
            "--sample-size",
            "16k",
            "--epochs",
            "1",
            "--accelerators",
            "2",
            "--compute-time",
            "10ms",
            "--mpi",
            "-o",
            out.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&out);
    let r = &doc["results"][0];
    assert_eq!(r["run"], "training", "{r}");
    let accelerators = r["accelerators"].as_array().unwrap();
    assert_eq!(accelerators.len(), 4, "{r}");
    let ranks: std::collections::BTreeSet<u64> = accelerators
        .iter()
        .map(|a| a["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks.into_iter().collect::<Vec<_>>(), [0, 1]);
    let mean = accelerators
        .iter()
        .map(|a| a["au"].as_f64().unwrap())
        .sum::<f64>()
        / 4.0;
    assert!((r["au"].as_f64().unwrap() - mean).abs() < 1e-9, "{r}");
    // 56 samples, batches of 7 for 2 accelerators: 4 steps each, on each
    // rank.
    assert_eq!(r["batch_wait"]["count"], 16, "{r}");
    assert_eq!(r["samples"], 112, "{r}");
    for rank in ["0", "1"] {
        let left: Vec<_> = std::fs::read_dir(dir.path().join(rank)).unwrap().collect();
        assert!(left.is_empty(), "rank {rank} left {left:?}");
    }
    let shared = dir.path().to_str().unwrap();
    let Some(o) = mpirun_with(2, &["train", shared, "--files", "14", "--mpi"]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("{rank} or {host}"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
