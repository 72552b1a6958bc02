//! fio job files run as they are: groups between stonewalls one after the
//! other, the jobs of a group at the same time, fio's defaults kept, and
//! options fathom does not carry out refused before anything is created.

mod common;

use common::*;
use serde_json::Value;

/// A runbook-style job file: two concurrent jobs (random reads at depth 8
/// with 2 workers, a rated sequential writer), then a 70/30 buffered mix
/// on its own after a stonewall.
const RUNBOOK: &str = "\
; database-like load, then a mix
[global]
ioengine=libaio
direct=1
size=8m
runtime=1
time_based
filename=${FATHOM_FIO_FILE}
group_reporting
thread

[reads]
rw=randread
bs=4k
iodepth=8
numjobs=2

[writer]
rw=write
bs=64k
rate_iops=50

[mix]
stonewall
rw=randrw
rwmixread=70
bs=16k
direct=0
ioengine=psync
";

fn job_file(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("job.fio");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn an_fio_job_file_runs_its_groups_in_order_and_its_jobs_together() {
    let dir = tempdir();
    let data = dir.path().join("data");
    let job = job_file(dir.path(), RUNBOOK);
    let out = fathom()
        .env("FATHOM_FIO_FILE", &data)
        .args(["run", job.to_str().unwrap(), "--output-format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // What fathom does differently from fio is said, once each.
    assert!(
        err.contains("note: ioengine=libaio runs on fathom's io_uring engine"),
        "{err}"
    );
    assert!(
        err.contains("runtime") || err.contains("norandommap"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "two groups: {doc}");

    // Group 1: the two jobs at once, as streams.
    let group = &results[0];
    assert_eq!(group["kind"], "streams");
    let streams = group["streams"].as_array().unwrap();
    let names: Vec<&str> = streams
        .iter()
        .map(|s| s["spec"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["reads", "writer"]);
    let reads = &streams[0];
    assert_eq!(reads["spec"]["rw"], "randread");
    assert_eq!(reads["spec"]["iodepth"], 8);
    assert_eq!(reads["spec"]["numjobs"], 2);
    assert_eq!(reads["spec"]["direct"], true);
    assert_eq!(reads["spec"]["engine"], "io_uring");
    assert!(u(&reads["total"]["read"]["ios"]) > 0);
    let writer = &streams[1];
    assert_eq!(writer["spec"]["rw"], "write");
    assert_eq!(writer["spec"]["bs"], 65536);
    // fio's default depth of 1, not fathom's; the rate kept: by the end of
    // its second no more than 50 writes came due.
    assert_eq!(writer["spec"]["iodepth"], 1);
    assert_eq!(f(&writer["spec"]["rate_iops"]), 50.0);
    let written = u(&writer["total"]["write"]["ios"]);
    assert!(
        (1..=52).contains(&written),
        "{written} writes at 50/s for 1 s"
    );

    // Group 2, after the stonewall: the mix alone, buffered, on psync.
    let mix = &results[1];
    assert_eq!(mix["kind"], "workload");
    assert_eq!(mix["spec"]["rw"], "randrw");
    assert_eq!(mix["spec"]["rwmix_read"], 70);
    assert_eq!(mix["spec"]["direct"], false);
    assert_eq!(mix["spec"]["engine"], "sync");
    let (r, w) = (
        u(&mix["total"]["read"]["ios"]) as f64,
        u(&mix["total"]["write"]["ios"]) as f64,
    );
    assert!(r > 0.0 && w > 0.0);
    let share = r / (r + w);
    assert!((0.6..0.8).contains(&share), "70% reads, got {share}");
    assert!(!data.exists(), "the file fathom created is removed");
}

#[test]
fn explain_prints_the_fathom_job_and_flags_override_the_file() {
    let dir = tempdir();
    let job = job_file(dir.path(), RUNBOOK);
    let out = fathom()
        .env("FATHOM_FIO_FILE", dir.path().join("data"))
        .args(["run", job.to_str().unwrap(), "--explain"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[workload.\"reads+writer\".stream.\"reads\"]"),
        "{text}"
    );
    assert!(text.contains("# note: ioengine=libaio"), "{text}");
    assert!(
        entries(dir.path()) == ["job.fio"],
        "explain creates nothing"
    );
    // The printed job file is one fathom runs as it is.
    let toml = dir.path().join("job.toml");
    std::fs::write(&toml, text.as_bytes()).unwrap();
    let plan = run(&["run", toml.to_str().unwrap(), "--dry-run"]);
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );

    // Flags given with the file override it, and targets replace its own.
    let other = dir.path().join("other");
    let out = fathom()
        .env("FATHOM_FIO_FILE", dir.path().join("data"))
        .args([
            "run",
            job.to_str().unwrap(),
            other.to_str().unwrap(),
            "--runtime",
            "300ms",
            "--size",
            "4m",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mix = &doc["results"][1];
    assert_eq!(f(&mix["spec"]["runtime_s"]), 0.3);
    assert_eq!(mix["targets"][0]["size"], 4 << 20);
    assert!(!dir.path().join("data").exists());
}

#[test]
fn unsupported_fio_options_are_refused_before_anything_is_created() {
    let dir = tempdir();
    for (extra, needle) in [
        (
            "bssplit=4k/50:64k/50",
            ":5: option 'bssplit' is not supported",
        ),
        ("latency_target=1ms", "capacity search"),
        ("rw=trim", "trim is not supported"),
    ] {
        let text = format!(
            "[global]\nfilename={}\nsize=1m\n[j]\n{extra}\n",
            dir.path().join("data").display()
        );
        let job = job_file(dir.path(), &text);
        let out = run(&["run", job.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra}: {err}");
        assert!(err.contains(needle), "{extra}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(entries(dir.path()), ["job.fio"], "nothing created");
    }
}
