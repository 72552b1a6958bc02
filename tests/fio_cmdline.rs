//! `fathom fio` and fathom called as `fio`: fio's command line typed as fio
//! users type it does the same work as fio 3.33 (counts, bytes, block
//! sizes), its normal text has fio's lines, and fio-plot's bench-fio, which
//! runs a `fio` binary, runs fathom and draws from what it wrote.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fio_installed() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A directory holding a link named `fio` to the fathom under test.
fn fio_link(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("fio");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fathom"), &link).unwrap();
    link
}

fn json_of(out: &Output, who: &str) -> Value {
    assert!(
        out.status.success(),
        "{who}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text
        .find('{')
        .unwrap_or_else(|| panic!("{who}: no JSON in {text}"));
    serde_json::from_str(&text[start..]).unwrap_or_else(|e| panic!("{who}: {e}: {text}"))
}

/// The line fio users type: three jobs at once, one sequential and bounded
/// by size, one random with a runtime but no time_based (so one pass over
/// its size, whichever comes first), one whose named file is `filesize`
/// long; direct, fio's psync engine.
fn command_line(dir: &Path) -> Vec<String> {
    let data = |n: &str| dir.join(n).display().to_string();
    [
        "--ioengine=psync".to_string(),
        "--direct".into(),
        "1".into(),
        "--bs=4k".into(),
        "--name=seq".into(),
        format!("--filename={}", data("seq.dat")),
        "--size=4m".into(),
        "--rw=read".into(),
        "--name".into(),
        "rnd".into(),
        format!("--filename={}", data("rnd.dat")),
        "--size=2m".into(),
        "--rw=randread".into(),
        "--runtime=30".into(),
        // filesize with filename: the named file is that long.
        "--name=fs".into(),
        format!("--filename={}", data("fs.dat")),
        "--filesize=3m".into(),
        "--rw=read".into(),
        "--output-format=json".into(),
    ]
    .into()
}

#[test]
fn a_fio_command_line_does_the_work_fio_does() {
    if !fio_installed() {
        eprintln!("SKIP: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempdir();
    let args = command_line(dir.path());
    let fio = json_of(&Command::new("fio").args(&args).output().unwrap(), "fio");
    // fio leaves its files; fathom lays out its own (laying out is work
    // compared too).
    for f in ["seq.dat", "rnd.dat", "fs.dat"] {
        std::fs::remove_file(dir.path().join(f)).unwrap();
    }
    let ours = json_of(
        &Command::new(fio_link(dir.path()))
            .args(&args)
            .output()
            .unwrap(),
        "fathom as fio",
    );
    let jobs = |doc: &Value| -> Vec<(String, u64, u64, u64)> {
        let mut jobs: Vec<_> = doc["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["jobname"].as_str().unwrap().to_string(),
                    u(&j["read"]["total_ios"]),
                    u(&j["read"]["io_bytes"]),
                    u(&j["write"]["total_ios"]),
                )
            })
            .collect();
        jobs.sort();
        jobs
    };
    assert_eq!(
        jobs(&ours),
        jobs(&fio),
        "jobs, reads, bytes and writes as fio's"
    );
    assert_eq!(
        jobs(&fio),
        [
            ("fs".to_string(), 768, 3 << 20, 0),
            ("rnd".to_string(), 512, 2 << 20, 0),
            ("seq".to_string(), 1024, 4 << 20, 0)
        ]
    );
    // fathom leaves the files it laid out, as fio does.
    for f in ["seq.dat", "rnd.dat", "fs.dat"] {
        assert!(dir.path().join(f).exists(), "{f} left as fio leaves it");
    }
}

/// A line of fio's text with its figures and units taken out: what a
/// script that reads it matches on.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut last_digit = false;
    for c in line.chars() {
        if c.is_ascii_digit() || (c == '.' && last_digit) {
            if !last_digit {
                out.push('#');
            }
            last_digit = true;
            continue;
        }
        last_digit = false;
        out.push(c);
    }
    for (unit, by) in [
        ("nsec", "U"),
        ("usec", "U"),
        ("msec", "U"),
        ("KiB", "B"),
        ("MiB", "B"),
        ("GiB", "B"),
        ("#k", "#"),
        ("#M", "#"),
        ("kB", "B"),
        ("MB", "B"),
        ("GB", "B"),
    ] {
        out = out.replace(unit, by);
    }
    // Padding of numbers differs with their width (fio pads to five:
    // "stdev= 0.00", "[   66]").
    let mut out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for (padded, bare) in [("= ", "="), ("[ ", "[")] {
        while out.contains(padded) {
            out = out.replace(padded, bare);
        }
    }
    out
}

#[test]
fn normal_output_has_the_lines_fio_prints() {
    if !fio_installed() {
        eprintln!("SKIP: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempdir();
    let data = dir.path().join("n.dat").display().to_string();
    let args: Vec<String> = [
        "--name=n",
        &format!("--filename={data}"),
        "--size=4m",
        "--rw=randread",
        "--bs=4k",
        "--direct=1",
        "--ioengine=io_uring",
        "--iodepth=4",
        "--runtime=1",
        "--time_based",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let fio = Command::new("fio").args(&args).output().unwrap();
    succeeded(&fio);
    std::fs::remove_file(&data).unwrap();
    let ours = Command::new(fio_link(dir.path()))
        .args(&args)
        .output()
        .unwrap();
    succeeded(&ours);
    let ours: Vec<String> = String::from_utf8_lossy(&ours.stdout)
        .lines()
        .map(shape)
        .collect();
    // The lines fio prints as its jobs start, and those of its job block
    // and run status that carry figures.
    let keys = [
        "n: (g=#): rw=randread, bs=(R) #B-#B, (W) #B-#B, (T) #B-#B, ioengine=io_uring, iodepth=#",
        "fio-#",
        "Starting # process",
        "read: IOPS=",
        "slat (",
        "clat (",
        "lat (",
        "clat percentiles (",
        "| #",
        "bw (",
        "iops :",
        "cpu :",
        "IO depths :",
        "submit :",
        "complete :",
        "issued rwts:",
        "Run status group",
        "READ: bw=",
    ];
    let mut missing = Vec::new();
    for line in String::from_utf8_lossy(&fio.stdout).lines().map(shape) {
        // fio's per-job header (its pid and clock) is not compared.
        if !keys.iter().any(|k| line.starts_with(k)) {
            continue;
        }
        // How many latency buckets had I/O in them is the run's, not
        // the format's: a bucket line is matched by its start.
        let found = match line.strip_prefix("lat (U) : ") {
            Some(_) => ours.iter().any(|o| o.starts_with("lat (U) : #=#%")),
            None => ours.contains(&line),
        };
        if !found {
            missing.push(line);
        }
    }
    assert!(
        missing.is_empty(),
        "fio's lines not in fathom's output: {missing:#?}\nfathom's:\n{}",
        ours.join("\n")
    );
}

/// fio's slat: the submission's own time where the engine submits as it
/// queues (io_uring), one per I/O and inside the I/O's latency; none for a
/// synchronous engine, as fio prints none for its own.
#[test]
fn slat_is_the_submissions_time_for_io_uring_and_absent_for_psync() {
    let dir = tempdir();
    let data = dir.path().join("s.dat").display().to_string();
    let fio = fio_link(dir.path());
    for (engine, timed) in [("io_uring", true), ("psync", false)] {
        let out = Command::new(&fio)
            .args([
                "--name=s",
                &format!("--filename={data}"),
                "--size=4m",
                "--rw=randread",
                "--bs=4k",
                "--direct=1",
                &format!("--ioengine={engine}"),
                "--iodepth=4",
                "--output-format=json",
            ])
            .output()
            .unwrap();
        succeeded(&out);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let read = &doc["jobs"][0]["read"];
        let (slat, total) = (&read["slat_ns"], read["total_ios"].as_u64().unwrap());
        assert_eq!(total, 1024, "{engine}");
        match timed {
            true => {
                assert_eq!(slat["N"].as_u64(), Some(total), "{engine}: {slat}");
                let mean = slat["mean"].as_f64().unwrap();
                assert!(mean > 0.0, "{engine}: {slat}");
                assert!(mean <= read["lat_ns"]["mean"].as_f64().unwrap(), "{read}");
            }
            false => assert_eq!(slat["N"].as_u64(), Some(0), "{engine}: {slat}"),
        }
    }
}

/// The `IO depths`, `submit` and `complete` lines of one run's normal text.
fn depth_lines(out: &Output) -> Vec<String> {
    succeeded(out);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            ["IO depths", "submit", "complete"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    lines
}

/// The depth lines are counted as fio counts them: where the two tools
/// queue alike (a synchronous engine at any depth, an asynchronous one at
/// depth 1) they print the same lines. Deeper, the two queues differ by
/// design: fio reaps one completion per call (its default
/// `iodepth_batch_complete_max` is `iodepth_batch_complete_min`, 1), so it
/// refills at full depth; fathom takes every completion ready, so it can
/// refill from a shallower queue. Its lines still never count an I/O
/// deeper than the depth asked for, and their shares add up.
#[test]
fn io_depth_lines_are_fios_where_the_queues_are_alike() {
    if !fio_installed() {
        eprintln!("SKIP: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempdir();
    let data = dir.path().join("q.dat").display().to_string();
    let fio_named = fio_link(dir.path());
    let job = |engine: &str, depth: u32| -> Vec<String> {
        [
            "--name=q".to_string(),
            format!("--filename={data}"),
            "--size=4m".into(),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--direct=1".into(),
            format!("--ioengine={engine}"),
            format!("--iodepth={depth}"),
        ]
        .into()
    };
    for (engine, depth) in [("psync", 8), ("io_uring", 1), ("libaio", 1)] {
        let args = job(engine, depth);
        let theirs = depth_lines(&Command::new("fio").args(&args).output().unwrap());
        let ours = depth_lines(&Command::new(&fio_named).args(&args).output().unwrap());
        assert_eq!(ours, theirs, "{engine} at depth {depth}");
    }
    let ours = depth_lines(
        &Command::new(&fio_named)
            .args(job("io_uring", 16))
            .output()
            .unwrap(),
    );
    let shares = |line: &str| -> Vec<(String, f64)> {
        line.split(':')
            .nth(1)
            .unwrap()
            .split(',')
            .map(|cell| {
                let (bucket, pct) = cell.trim().rsplit_once('=').unwrap();
                let pct = pct.trim_end_matches('%');
                (
                    bucket.to_string(),
                    pct.parse().unwrap_or_else(|_| panic!("{pct:?} in {line}")),
                )
            })
            .collect()
    };
    for line in &ours {
        let total: f64 = shares(line).iter().map(|(_, p)| p).sum();
        assert!(
            (99.0..=101.0).contains(&total),
            "shares add to {total}: {line}"
        );
    }
    for (bucket, pct) in shares(&ours[0]) {
        if bucket == "32" || bucket == ">=64" {
            assert_eq!(pct, 0.0, "deeper than 16: {}", ours[0]);
        }
    }
}

#[test]
fn bench_fio_runs_fathom_and_fio_plot_draws_it() {
    let installed = |tool: &str| {
        Command::new(tool)
            .arg("--help")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !installed("bench-fio") || !installed("fio-plot") {
        eprintln!("SKIP: fio-plot is not installed (pip install fio-plot)");
        return;
    }
    let dir = tempdir();
    let bin = fio_link(dir.path());
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let target = dir.path().join("target.dat");
    std::fs::write(&target, vec![0u8; 8 << 20]).unwrap();
    let results = dir.path().join("results");
    let o = Command::new("bench-fio")
        .args(["-d", target.to_str().unwrap(), "-t", "file", "-s", "8m"])
        .args([
            "-o",
            results.to_str().unwrap(),
            "-b",
            "4k",
            "-m",
            "randread",
        ])
        .args(["--iodepth", "1", "4", "--numjobs", "1", "--runtime", "1"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let written = results.join("target.dat").join("4k");
    for depth in ["1", "4"] {
        let doc: Value = serde_json::from_str(
            &std::fs::read_to_string(written.join(format!("randread-{depth}-1.json")))
                .expect("bench-fio wrote fathom's JSON"),
        )
        .unwrap();
        assert_eq!(
            doc["fio version"], "fio-3.42",
            "the fio level, where tools read it"
        );
        assert!(
            doc["fathom version"]
                .as_str()
                .unwrap()
                .starts_with("fathom-")
        );
        assert!(u(&doc["jobs"][0]["read"]["total_ios"]) > 0);
    }
    let png = dir.path().join("chart.png");
    let o = Command::new("fio-plot")
        .args(["-i", written.to_str().unwrap(), "-T", "fathom as fio", "-l"])
        .args(["-r", "randread", "-d", "1", "4", "-n", "1"])
        .args(["-o", png.to_str().unwrap()])
        .env("MPLBACKEND", "Agg")
        .output()
        .unwrap();
    succeeded(&o);
    let bytes = std::fs::read(&png).expect("fio-plot wrote its chart");
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
}

#[test]
fn fios_command_line_mistakes_are_one_line_and_run_nothing() {
    for (args, needle) in [
        (vec!["fio", "--size=1m"], "no job(s) defined"),
        (vec!["fio", "--name=a", "--bs"], "--bs: needs a value"),
        (vec!["fio", "--client=h", "--name=a"], "--client"),
        (
            vec!["fio", "--name=a", "--iodepht=4"],
            "did you mean 'iodepth'",
        ),
        (
            vec!["fio", "--name=a", "--output-format=xml"],
            "--output-format=xml",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let dir = tempdir();
    let data = dir.path().join("w.dat");
    let out = run(&[
        "fio",
        "--readonly",
        "--name=w",
        &format!("--filename={}", data.display()),
        "--size=1m",
        "--rw=write",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--readonly: job w writes"));
    assert!(!data.exists(), "nothing written");
    let version = run(&["fio", "--version"]);
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("fio-3."));
}

#[test]
fn the_null_engine_makes_no_file_and_does_fios_count_of_ios() {
    let dir = tempdir();
    let args = [
        "--name=null",
        "--ioengine=null",
        "--size=1g",
        "--rw=randread",
        "--bs=4k",
        "--norandommap",
        "--output-format=json",
    ];
    let ours = json_of(
        &Command::new(fio_link(dir.path()))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap(),
        "fathom as fio",
    );
    assert_eq!(u(&ours["jobs"][0]["read"]["total_ios"]), 262_144);
    assert_eq!(entries(dir.path()), ["bin"], "no data file was made");
    if fio_installed() {
        let fio = json_of(
            &Command::new("fio")
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap(),
            "fio",
        );
        assert_eq!(u(&fio["jobs"][0]["read"]["total_ios"]), 262_144);
        assert_eq!(entries(dir.path()), ["bin"], "fio makes none either");
    }
}

#[test]
fn fios_clones_and_jobs_are_each_reported_and_compared_by_name() {
    if !fio_installed() {
        eprintln!("SKIP: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempdir();
    let job = dir.path().join("two.fio");
    std::fs::write(
        &job,
        "[global]\nbs=4k\nioengine=null\nsize=64m\nruntime=1\ntime_based\n\
         [a]\nrw=randread\nnumjobs=2\n[b]\nrw=write\n",
    )
    .unwrap();
    let fio_json = dir.path().join("fio.json");
    let o = Command::new("fio")
        .arg(&job)
        .arg("--output-format=json")
        .arg(format!("--output={}", fio_json.display()))
        .current_dir(dir.path())
        .output()
        .unwrap();
    succeeded(&o);
    let text = run_ok(&["report", fio_json.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    for row in ["a+b/a.0", "a+b/a.1", "a+b/b"] {
        assert!(text.contains(row), "{row} in:\n{text}");
    }
    let ours = dir.path().join("fathom.json");
    run_ok(&["run", job.to_str().unwrap(), "-o", ours.to_str().unwrap()]);
    let compared = run_ok(&[
        "compare",
        fio_json.to_str().unwrap(),
        ours.to_str().unwrap(),
    ]);
    let compared = String::from_utf8_lossy(&compared.stdout);
    for row in ["a+b/a.0", "a+b/a.1", "a+b/b"] {
        assert!(compared.contains(row), "{row} in:\n{compared}");
    }
}

/// fio's buffered random job on a small file: fio hints random access and
/// drops the file's cached pages at each pass, so its reads reach the
/// disk; so do fathom's, which read the file's bytes from the disk many
/// times over rather than once.
#[test]
fn a_buffered_time_based_job_drops_the_cache_at_each_pass() {
    let dir = tempdir();
    let data = dir.path().join("small.dat");
    let out = Command::new(fio_link(dir.path()))
        .args([
            "--name=buffered",
            &format!("--filename={}", data.display()),
            "--size=4m",
            "--rw=randread",
            "--bs=4k",
            "--runtime=1",
            "--time_based",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    let doc = json_of(&out, "fathom as fio");
    let Some(disk) = doc["disk_util"].as_array().and_then(|d| d.first()) else {
        eprintln!("SKIP: the temporary directory is on no disk with counters");
        return;
    };
    let read_ios = u(&disk["read_ios"]);
    if read_ios == 0 {
        eprintln!("SKIP: the disk's counters did not move (not the file's disk)");
        return;
    }
    // One pass is 1,024 reads of 4k; without a drop at each pass the disk
    // would see at most that many. A busy host may leave the job too few
    // passes in its second for the two to differ.
    let job_reads = u(&doc["jobs"][0]["read"]["total_ios"]);
    if job_reads < 4 * 1024 {
        eprintln!(
            "SKIP: the host let the job do only {job_reads} reads in its second: too few passes to tell a dropped cache"
        );
        return;
    }
    assert!(
        read_ios > 2 * 1024,
        "the disk served {read_ios} reads: the cache was not dropped at each pass"
    );
}

/// The (offset, length) of every I/O fathom issues running `job`.
fn recorded_ios(job: &std::path::Path, dir: &std::path::Path) -> Vec<(u64, u32)> {
    let recording = dir.join("ios.rec");
    run_ok(&[
        "run",
        job.to_str().unwrap(),
        "--record",
        recording.to_str().unwrap(),
    ]);
    let trace = fathom::trace::Trace::open(&recording, 0, None).unwrap();
    trace
        .ios()
        .unwrap()
        .map(|io| io.map(|io| (io.offset, io.len)).unwrap())
        .collect()
}

/// The offsets of the reads fio issues running `job`, from its own iolog.
fn fio_read_offsets(job: &std::path::Path, dir: &std::path::Path) -> Vec<u64> {
    let log = dir.join("fio.log");
    let o = Command::new("fio")
        .arg(job)
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output-format=json")
        .output()
        .unwrap();
    succeeded(&o);
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"read")).then(|| f[3].parse().unwrap())
        })
        .collect()
}

/// blockalign=4k under a bssplit of 512 and 64k: every offset on a 4k
/// boundary, as fio's own iolog of the same job shows them.
#[test]
fn blockalign_aligns_every_random_offset_as_fio_does() {
    let dir = tempdir();
    let job = dir.path().join("align.fio");
    let data = dir.path().join("align.dat");
    std::fs::write(
        &job,
        format!(
            "[align]\nfilename={}\nsize=8m\nrw=randread\nbssplit=512/50:64k/50\nblockalign=4k\nio_size=2m\n",
            data.display()
        ),
    )
    .unwrap();
    let offsets = recorded_ios(&job, dir.path());
    assert!(offsets.len() > 50, "{} I/Os", offsets.len());
    let unaligned = offsets.iter().filter(|(o, _)| o % 4096 != 0).count();
    assert_eq!(unaligned, 0, "of {} offsets", offsets.len());
    assert!(
        offsets.iter().any(|(_, len)| *len == 512),
        "both sizes issued"
    );
    assert!(
        offsets
            .iter()
            .all(|(o, len)| o + u64::from(*len) <= 8 << 20)
    );
    if !fio_installed() {
        eprintln!("SKIP (fio's part): fio is not installed (apt-get install fio)");
        return;
    }
    let fio_offsets = fio_read_offsets(&job, dir.path());
    assert!(!fio_offsets.is_empty());
    assert!(
        fio_offsets.iter().all(|o| o % 4096 == 0),
        "fio aligns them too"
    );
}

/// Starts fathom as `fio ARGS` (the link), its output discarded.
fn spawn_fio(dir: &Path, args: &[&str]) -> std::process::Child {
    Command::new(fio_link(dir))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// The /proc directories of process `pid`'s worker threads (fathom-w0,
/// fathom-w1, …; not fathom-watch), while it runs.
fn worker_threads(pid: u32) -> Vec<PathBuf> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .map(|t| t.path())
        .filter(|t| {
            std::fs::read_to_string(t.join("comm")).is_ok_and(|c| {
                c.trim()
                    .strip_prefix("fathom-w")
                    .is_some_and(|n| n.parse::<usize>().is_ok())
            })
        })
        .collect()
}

/// prioclass and prio: the workers run at that I/O priority, as ionice
/// reads it from their threads while they run.
#[test]
fn prio_and_prioclass_set_the_workers_io_priority() {
    let installed = Command::new("ionice")
        .arg("-p")
        .arg("1")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!("SKIP: ionice is not installed (util-linux)");
        return;
    }
    let dir = tempdir();
    let data = dir.path().join("p.dat");
    let mut child = spawn_fio(
        dir.path(),
        &[
            "--name=p",
            "--prioclass=3",
            &format!("--filename={}", data.display()),
            "--size=4m",
            "--rw=randread",
            "--runtime=3",
            "--time_based",
            "--output-format=json",
        ],
    );
    let pid = child.id();
    let mut seen = None;
    // A worker sets its priority as it starts: asked again until it has.
    wait_until("a worker thread runs at the idle I/O class", || {
        let Some(worker) = worker_threads(pid).into_iter().next() else {
            return false;
        };
        let out = Command::new("ionice")
            .arg("-p")
            .arg(worker.file_name().unwrap())
            .output()
            .unwrap();
        seen = Some(String::from_utf8_lossy(&out.stdout).trim().to_string());
        seen.as_deref() == Some("idle")
    });
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(seen.as_deref(), Some("idle"));
}

/// cpus_allowed with cpus_allowed_policy=split: each clone's worker bound
/// to a CPU of its own, as the kernel reports each thread's affinity while
/// they run; a CPU this process may not use is refused before anything.
#[test]
fn cpus_allowed_binds_each_worker_to_its_cpus() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = tempdir();
    let data = dir.path().join("c.dat");
    let list = if cpus >= 2 { "0-1" } else { "0" };
    let mut child = spawn_fio(
        dir.path(),
        &[
            "--name=c",
            &format!("--cpus_allowed={list}"),
            "--cpus_allowed_policy=split",
            "--numjobs=2",
            "--ioengine=null",
            &format!("--filename={}", data.display()),
            "--size=4m",
            "--rw=randread",
            "--runtime=3",
            "--time_based",
            "--output-format=json",
        ],
    );
    let pid = child.id();
    let mut seen: Vec<String> = Vec::new();
    // A worker binds itself as it starts: asked again until both have.
    wait_until("both workers bound to their CPUs", || {
        seen = worker_threads(pid)
            .iter()
            .filter_map(|t| {
                let status = std::fs::read_to_string(t.join("status")).ok()?;
                let line = status
                    .lines()
                    .find(|l| l.starts_with("Cpus_allowed_list:"))?;
                Some(line.split_whitespace().nth(1)?.to_string())
            })
            .collect();
        seen.sort();
        seen.len() == 2 && seen.iter().all(|s| !s.contains(['-', ',']))
    });
    let _ = child.kill();
    let _ = child.wait();
    let expected = if cpus >= 2 { ["0", "1"] } else { ["0", "0"] };
    assert_eq!(seen, expected, "each worker on one CPU of {list}");
    refused(
        &["run", ".", "--cpus-allowed", "1000", "--runtime", "1s"],
        "CPU 1000",
    );
}

/// rate_process=poisson: the I/Os keep the rate, their gaps exponential
/// (as spread as they are long), where linear's are even.
#[test]
fn rate_process_poisson_spaces_io_as_a_poisson_process() {
    let dir = tempdir();
    let spread_of = |process: &str| -> (usize, f64) {
        let job = dir.path().join(format!("{process}.fio"));
        std::fs::write(
            &job,
            format!(
                "[p]\nioengine=null\nfilename={}\nsize=16m\nrw=randread\nrate_iops=2000\nrate_process={process}\nruntime=2\ntime_based\n",
                dir.path().join("p.dat").display()
            ),
        )
        .unwrap();
        let rec = dir.path().join(format!("{process}.rec"));
        run_ok(&[
            "run",
            job.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
        ]);
        let times: Vec<u64> = fathom::trace::Trace::open(&rec, 0, None)
            .unwrap()
            .ios()
            .unwrap()
            .map(|io| io.unwrap().t_ns)
            .collect();
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        (times.len(), sd / mean)
    };
    // 2 s at 2,000 a second, give or take the process's own spread (a
    // late I/O still goes out: the schedule owes it). How even linear's
    // gaps are depends on how busy the host is, so only Poisson's spread
    // is held to a bound (a busy host spreads gaps more, not less); the
    // schedule's own gaps are checked exactly in engine::worker::pace.
    let (poisson_ios, poisson_cv) = spread_of("poisson");
    let (linear_ios, _) = spread_of("linear");
    assert!((3_000..5_000).contains(&poisson_ios), "{poisson_ios}");
    assert!((3_000..5_000).contains(&linear_ios), "{linear_ios}");
    assert!(poisson_cv > 0.7, "poisson gaps spread {poisson_cv}");
}

/// exitall: the job that has it ends, and so do the jobs running with it.
#[test]
fn exitall_ends_the_other_jobs_with_the_first() {
    let dir = tempdir();
    let started = std::time::Instant::now();
    let out = Command::new(fio_link(dir.path()))
        .current_dir(dir.path())
        .args([
            "--ioengine=null",
            "--name=short",
            "--exitall",
            "--size=1m",
            "--rw=read",
            "--name=long",
            "--size=1m",
            "--rw=randread",
            "--runtime=60",
            "--time_based",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    let doc = json_of(&out, "fathom as fio");
    let long = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "long")
        .expect("the long job is reported");
    assert!(
        u(&long["job_runtime"]) < 30_000,
        "the long job ran {} ms of its 60 s",
        long["job_runtime"]
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(50));
}

/// fio's slope criterion: a flat job stops once the least-squares slope of
/// its window is under the limit, long before its runtime.
#[test]
fn a_slope_steady_state_ends_a_flat_job_early() {
    let dir = tempdir();
    let out = Command::new(fio_link(dir.path()))
        .current_dir(dir.path())
        .args([
            "--name=flat",
            "--ioengine=null",
            "--size=64m",
            "--rw=randread",
            "--runtime=60",
            "--time_based",
            "--steadystate=iops_slope:90%",
            "--ss_dur=3",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    let doc = json_of(&out, "fathom as fio");
    let ran = u(&doc["jobs"][0]["job_runtime"]);
    assert!(ran < 40_000, "ran {ran} ms of 60 s");
}

/// --minimal (fio's terse version 3): one line a job with as many fields
/// as fio's own line for the same job, the same counts where fio's are.
#[test]
fn minimal_is_fios_terse_line() {
    if !fio_installed() {
        eprintln!("SKIP: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempdir();
    let data = dir.path().join("t.dat").display().to_string();
    let args = [
        "--name=t".to_string(),
        format!("--filename={data}"),
        "--size=4m".into(),
        "--rw=randread".into(),
        "--bs=4k".into(),
        "--direct=1".into(),
        "--minimal".into(),
    ];
    let fio = Command::new("fio").args(&args).output().unwrap();
    succeeded(&fio);
    std::fs::remove_file(&data).unwrap();
    let ours = Command::new(fio_link(dir.path()))
        .args(&args)
        .output()
        .unwrap();
    succeeded(&ours);
    let fields = |out: &Output| -> Vec<String> {
        String::from_utf8_lossy(&out.stdout)
            .trim_end()
            .split(';')
            .map(String::from)
            .collect()
    };
    let (theirs, ours) = (fields(&fio), fields(&ours));
    assert_eq!(ours.len(), theirs.len(), "{ours:?}\n{theirs:?}");
    // Terse version, name, group, error, KiB read; the write side all
    // zeros. The fio release is the level fathom speaks, whichever fio is
    // installed here.
    assert_eq!(ours[0], theirs[0]);
    assert_eq!(ours[1], "fio-3.42");
    assert!(theirs[1].starts_with("fio-3."), "{}", theirs[1]);
    assert_eq!(ours[2..5], theirs[2..5]);
    assert_eq!(ours[5], "4096");
    assert_eq!(ours[46..50], ["0", "0", "0", "0"]);
}

/// end_fsync: buffered writes reach the disk before the run ends (the
/// flush is inside the disks' window), where without it they would sit in
/// the page cache for the kernel's half minute.
#[test]
fn end_fsync_flushes_what_was_written_before_the_run_ends() {
    let dir = tempdir();
    let data = dir.path().join("w.dat");
    let job = dir.path().join("w.fio");
    std::fs::write(
        &job,
        format!(
            "[w]\nfilename={}\nsize=16m\nrw=write\nbs=64k\nend_fsync=1\n",
            data.display()
        ),
    )
    .unwrap();
    let doc = run_json(&[job.to_str().unwrap()]);
    let w = &doc["results"][0];
    assert_eq!(u(&w["targets"][0]["write"]["bytes"]), 16 << 20);
    let Some(disk) = w["disks"].as_array().and_then(|d| d.first()) else {
        eprintln!("SKIP: the temporary directory is on no disk with counters");
        return;
    };
    assert!(
        u(&disk["write_bytes"]) >= 16 << 20,
        "16 MiB written, and the disk took {} bytes",
        disk["write_bytes"]
    );
}

/// group_reporting: text shows the group's totals only, as fio prints one
/// block for the group.
#[test]
fn group_reporting_shows_the_group_as_one() {
    let dir = tempdir();
    let job = dir.path().join("g.fio");
    std::fs::write(
        &job,
        format!(
            "[g]\nioengine=null\nfilename={}\nsize=16m\nrw=randread\nnumjobs=3\nruntime=300ms\ntime_based\ngroup_reporting\n",
            dir.path().join("g.dat").display()
        ),
    )
    .unwrap();
    let out = run_ok(&["run", job.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("all streams (group_reporting)"), "{text}");
    assert!(
        !text.lines().any(|l| l.starts_with("│ g/g.")),
        "no row per clone: {text}"
    );
}

/// zonesize and zoneskip (fio's strided zones): fathom reads the same
/// offsets in the same order as fio's own iolog of the same job.
#[test]
fn strided_zones_read_what_fio_reads_in_its_order() {
    let dir = tempdir();
    let job = dir.path().join("zones.fio");
    let data = dir.path().join("zones.dat");
    std::fs::write(
        &job,
        format!(
            "[zones]\nfilename={}\nsize=16m\nrw=read\nbs=64k\nzonemode=strided\nzonesize=1m\nzoneskip=3m\n",
            data.display()
        ),
    )
    .unwrap();
    let ours: Vec<u64> = recorded_ios(&job, dir.path())
        .iter()
        .map(|(o, _)| *o)
        .collect();
    assert_eq!(ours.len(), 256, "one pass of size");
    let mib = 1u64 << 20;
    assert!(
        ours.iter().all(|o| (o / mib).is_multiple_of(4)),
        "only the zones are read"
    );
    if !fio_installed() {
        eprintln!("SKIP (fio's part): fio is not installed (apt-get install fio)");
        return;
    }
    let fio = fio_read_offsets(&job, dir.path());
    assert_eq!(ours, fio, "the same offsets in the same order");
}

/// The logs a job asks for are written where fio writes them and named as
/// fio 3.33 names them; stderr stays empty (tools that run fio take a line
/// there for a failure), a second run's history line included. The run is
/// kept in the history unless `--no-history` or FATHOM_NO_HISTORY says no.
#[test]
fn the_logs_a_job_asks_for_are_written_as_fio_names_them_and_stderr_stays_empty() {
    let dir = tempdir();
    let link = fio_link(dir.path());
    let args = |data: &Path| -> Vec<String> {
        [
            "--name=lg".to_string(),
            format!("--filename={}", data.display()),
            "--size=4m".into(),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--runtime=1".into(),
            "--time_based".into(),
            "--write_bw_log=lg".into(),
            "--write_lat_log=lg".into(),
            "--write_iops_log=lg".into(),
            "--log_avg_msec=1000".into(),
            "--output-format=json".into(),
        ]
        .to_vec()
    };
    let logs_in = |d: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".log"))
            .collect();
        names.sort();
        names
    };
    let ours = dir.path().join("ours");
    let xdg = dir.path().join("xdg");
    std::fs::create_dir_all(&ours).unwrap();
    for round in 0..2 {
        let out = Command::new(&link)
            .current_dir(&ours)
            .env("XDG_DATA_HOME", &xdg)
            .args(args(&ours.join("lg.dat")))
            .output()
            .unwrap();
        json_of(&out, "fathom as fio");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "round {round}: stderr"
        );
    }
    assert!(
        xdg.join("fathom/history.db").exists(),
        "the runs are kept in the history"
    );
    let written = logs_in(&ours);
    assert_eq!(
        written,
        [
            "lg_bw.1.log",
            "lg_clat.1.log",
            "lg_iops.1.log",
            "lg_lat.1.log",
            "lg_slat.1.log"
        ],
        "{written:?}"
    );
    for log in &written {
        let text = std::fs::read_to_string(ours.join(log)).unwrap();
        // The submission latency fathom does not measure: no sample.
        if log.contains("slat") {
            assert!(text.is_empty(), "{log}: {text}");
            continue;
        }
        let first = text.lines().next().unwrap_or_default();
        assert_eq!(first.split(", ").count(), 5, "{log}: {first}");
    }
    // Out of the history, by switch and by the environment.
    for (switch, env) in [(Some("--no-history"), None), (None, Some("1"))] {
        let quiet = dir.path().join("quiet");
        let mut command = Command::new(&link);
        command
            .current_dir(&ours)
            .env("XDG_DATA_HOME", &quiet)
            .args(switch)
            .args(args(&ours.join("lg.dat")));
        if let Some(v) = env {
            command.env("FATHOM_NO_HISTORY", v);
        }
        json_of(&command.output().unwrap(), "fathom as fio, no history");
        assert!(
            !quiet.join("fathom/history.db").exists(),
            "{switch:?} {env:?}"
        );
    }
    if !fio_installed() {
        eprintln!("SKIP: fio is not installed: the log names are not compared with its own");
        return;
    }
    let theirs = dir.path().join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    succeeded(
        &Command::new("fio")
            .current_dir(&theirs)
            .args(args(&theirs.join("lg.dat")))
            .output()
            .unwrap(),
    );
    let fios = logs_in(&theirs);
    assert_eq!(written, fios, "the logs fio writes, by name");
}

/// In fio's language a job file is the user's word for their files, as
/// it is to fio: a file made with dd is written (and grown to the job's
/// size) without a word of fathom's, the file a job laid out stays for the
/// script's own `rm` (dbench's sequence), and `unlink=1` removes what the
/// job laid out, never a file that was there before.
#[test]
fn files_are_written_and_left_as_fio_writes_and_leaves_them() {
    let dir = tempdir();
    let link = fio_link(dir.path());
    let fio = |args: &[&str]| {
        Command::new(&link)
            .current_dir(dir.path())
            .env_remove("FATHOM_OVERWRITE")
            .args(args)
            .args(["--size=2m", "--output-format=json"])
            .output()
            .unwrap()
    };
    let made_by_dd = dir.path().join("dd.dat");
    std::fs::write(&made_by_dd, vec![7u8; 1 << 20]).unwrap();
    let dd = format!("--filename={}", made_by_dd.display());
    let doc = json_of(
        &fio(&["--name=w", &dd, "--rw=randwrite"]),
        "randwrite on dd's file",
    );
    assert_eq!(u(&doc["jobs"][0]["write"]["io_bytes"]), 2 << 20);
    let after = std::fs::read(&made_by_dd).unwrap();
    assert_eq!(
        after.len(),
        2 << 20,
        "grown to the job's size, as fio lays it out"
    );
    assert_ne!(&after[..1 << 20], &vec![7u8; 1 << 20][..], "written");
    // Under --readonly fio does not extend a file, and neither does fathom.
    let out = fio(&["--name=r", &dd, "--rw=read", "--readonly", "--filesize=4m"]);
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "--readonly");
    assert_eq!(std::fs::metadata(&made_by_dd).unwrap().len(), 2 << 20);
    // unlink=1 does not take a file that was there before the job.
    json_of(
        &fio(&["--name=r", &dd, "--rw=read", "--unlink=1"]),
        "unlink on dd's file",
    );
    assert!(
        made_by_dd.exists(),
        "a file that was there before is never removed"
    );

    // dbench: fio lays out fiotest, and the script removes it after.
    json_of(
        &fio(&["--name=d", "--filename=fiotest", "--rw=randrw"]),
        "dbench's job",
    );
    let kept = dir.path().join("fiotest");
    assert_eq!(
        std::fs::metadata(&kept).unwrap().len(),
        2 << 20,
        "left as fio leaves it"
    );
    // Run again, the kept file is the job's own to write.
    json_of(
        &fio(&["--name=d", "--filename=fiotest", "--rw=randwrite"]),
        "again",
    );
    std::fs::remove_file(&kept).unwrap();
    // unlink=1: the file the job laid out is gone when it ends.
    json_of(
        &fio(&["--name=u", "--filename=gone", "--rw=write", "--unlink=1"]),
        "unlink=1",
    );
    assert!(
        !dir.path().join("gone").exists(),
        "unlink=1 removes what the job laid out"
    );
}

/// numjobs as fio reports it: each clone's options say the job's numjobs,
/// and a group's report line counts its jobs (fio-plot reads both).
#[test]
fn numjobs_is_reported_as_fio_reports_it() {
    let dir = tempdir();
    let link = fio_link(dir.path());
    let data = dir.path().join("n.dat");
    let common = [
        format!("--filename={}", data.display()),
        "--size=1m".into(),
        "--rw=randread".into(),
        "--runtime=1".into(),
        "--time_based".into(),
    ];
    let json = json_of(
        &Command::new(&link)
            .args(["--name=n", "--numjobs=2", "--output-format=json"])
            .args(&common)
            .output()
            .unwrap(),
        "fathom as fio, numjobs=2",
    );
    let said: Vec<&str> = json["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job options"]["numjobs"].as_str().unwrap())
        .collect();
    assert_eq!(said, ["2", "2"]);
    let text = Command::new(&link)
        .args(["--name=g", "--numjobs=4", "--group_reporting"])
        .args(&common)
        .output()
        .unwrap();
    succeeded(&text);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("g: (groupid=0, jobs=4)"), "{text}");
    if !fio_installed() {
        eprintln!("SKIP: fio is not installed: not compared with its own report");
        return;
    }
    let fio = Command::new("fio")
        .args(["--name=g", "--numjobs=4", "--group_reporting"])
        .args(&common)
        .output()
        .unwrap();
    succeeded(&fio);
    assert!(
        String::from_utf8_lossy(&fio.stdout).contains("g: (groupid=0, jobs=4)"),
        "fio 3.33 says it so"
    );
}

/// Every JSON document in `text`, one after the other, as fio's
/// `--status-interval` prints them.
fn json_documents(text: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .map(|v| v.unwrap_or_else(|e| panic!("{e}: {text}")))
        .collect()
}

#[test]
fn status_interval_prints_the_figures_so_far_as_fio_does() {
    let dir = tempdir();
    let link = fio_link(dir.path());
    let args = |data: &str| {
        vec![
            "--name=st".to_string(),
            format!("--filename={}", dir.path().join(data).display()),
            "--size=4m".into(),
            "--rw=randread".into(),
            "--runtime=3".into(),
            "--time_based".into(),
            "--status-interval=1".into(),
            "--output-format=json".into(),
        ]
    };
    let out = Command::new(&link).args(args("st.dat")).output().unwrap();
    succeeded(&out);
    let ours = json_documents(&String::from_utf8_lossy(&out.stdout));
    let ios: Vec<u64> = ours
        .iter()
        .map(|d| d["jobs"][0]["read"]["total_ios"].as_u64().unwrap())
        .collect();
    // Two or three reports while it runs (the third second may end with
    // the run), then the final one.
    assert!((3..=4).contains(&ours.len()), "{ios:?}");
    assert!(
        ios.windows(2).all(|w| w[0] <= w[1]),
        "so far only grows: {ios:?}"
    );
    assert!(ios[0] > 0 && ios[0] < ios[ios.len() - 1], "{ios:?}");
    let runtimes: Vec<u64> = ours
        .iter()
        .map(|d| d["jobs"][0]["read"]["runtime"].as_u64().unwrap())
        .collect();
    assert!((900..=1_200).contains(&runtimes[0]), "{runtimes:?}");

    // With --output, the file holds the reports so far, then the last.
    let file = dir.path().join("st.json");
    let mut with_file = args("st2.dat");
    with_file.push(format!("--output={}", file.display()));
    let out = Command::new(&link).args(&with_file).output().unwrap();
    succeeded(&out);
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let kept = json_documents(&std::fs::read_to_string(&file).unwrap());
    assert!(kept.len() >= 3, "{} documents", kept.len());

    if !fio_installed() {
        eprintln!("SKIP: fio is not installed: not compared with its own reports");
        return;
    }
    let fio = Command::new("fio").args(args("fio.dat")).output().unwrap();
    succeeded(&fio);
    let theirs = json_documents(&String::from_utf8_lossy(&fio.stdout));
    assert!(
        theirs.len().abs_diff(ours.len()) <= 1,
        "fio 3.33 printed {} reports, fathom {}",
        theirs.len(),
        ours.len()
    );
}

#[test]
fn one_dash_options_run_and_the_engine_named_is_echoed_as_fio_echoes_it() {
    let dir = tempdir();
    let file = dir.path().join("f");
    let fio = fio_link(dir.path());
    let out = Command::new(&fio)
        .args([
            "-name=x",
            "-rw=read",
            "-size=1m",
            &format!("-filename={}", file.display()),
            "-ioengine=libaio",
            "-iodepth=4",
            "-direct=1",
            "-output-format=json,normal",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let json_start = text.find("{\n").expect("a JSON document");
    let json_end = json_start + text[json_start..].find("\n}\n").expect("its end") + 3;
    let ours: Value = serde_json::from_str(&text[json_start..json_end]).unwrap();
    let job = &ours["jobs"][0];
    assert_eq!(job["job options"]["ioengine"], "libaio");
    assert_eq!(u(&job["read"]["io_bytes"]), 1 << 20);
    assert!(u(&job["job_start"]) > 1_700_000_000_000);
    assert!(text.contains("ioengine=libaio, iodepth=4"), "{text}");
    let v = Command::new(&fio).arg("-v").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&v.stdout)
            .trim_end()
            .split(' ')
            .next(),
        Some("fio-3.42")
    );
}

#[test]
fn showcmd_prints_a_job_file_as_fios_command_line() {
    let dir = tempdir();
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        "[global]\nsize=1m\nioengine=psync\ntime_based\n[a]\nrw=read\n[b]\nrw=write\nbs=8k\n",
    )
    .unwrap();
    let out = Command::new(fio_link(dir.path()))
        .args(["--showcmd", job.to_str().unwrap()])
        .output()
        .unwrap();
    succeeded(&out);
    let ours = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        ours,
        "fio --size=1m --ioengine=psync --time_based --name=a --rw=read --name=b --rw=write --bs=8k \n"
    );
    assert_eq!(entries(dir.path()), ["bin", "j.fio"], "nothing run");
    if fio_installed() {
        let fio = Command::new("fio")
            .args(["--showcmd", job.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&fio.stdout), ours, "fio's own");
    }
}

/// fio's introspection is answered in fio's layout, with what fathom does
/// with each option: the same labels at the same columns, the same lines
/// for an engine without options, the same exit codes; nothing run.
#[test]
fn cmdhelp_and_enghelp_answer_in_fios_layout() {
    let dir = tempdir();
    let link = fio_link(dir.path());
    let ask = |program: &Path, arg: &str| {
        let out = Command::new(program)
            .current_dir(dir.path())
            .arg(arg)
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).to_string(),
            out.status.code(),
        )
    };
    let (rw, code) = ask(&link, "--cmdhelp=rw");
    assert_eq!(code, Some(0));
    assert!(
        rw.starts_with("                  rw: translated: `--rw`"),
        "{rw}"
    );
    let (all, _) = ask(&link, "--cmdhelp");
    assert!(
        all.lines()
            .any(|l| l.starts_with("iodepth                 : ")),
        "{all}"
    );
    let (engines, code) = ask(&link, "--enghelp");
    assert_eq!(
        (engines.lines().next(), code),
        (Some("Available IO engines:"), Some(0))
    );
    assert!(engines.contains("\n\tlibaio\n"), "{engines}");
    let (ring, _) = ask(&link, "--enghelp=io_uring");
    assert!(
        ring.lines()
            .any(|l| l.starts_with("sqthread_poll           : ")),
        "{ring}"
    );
    let none = ask(&link, "--enghelp=psync");
    assert_eq!(none, ("IO engine psync has no options\n".into(), Some(1)));
    assert_eq!(entries(dir.path()), ["bin"], "nothing run");
    if fio_installed() {
        assert_eq!(ask(Path::new("fio"), "--enghelp=psync"), none, "fio's own");
        let (theirs, _) = ask(Path::new("fio"), "--cmdhelp=rw");
        assert_eq!(
            theirs.find(": "),
            rw.find(": "),
            "the same column: {theirs}"
        );
    }
}
