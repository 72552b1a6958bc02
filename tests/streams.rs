//! Workloads of several streams at once: from flags and job files, each
//! stream reported on its own and all of them merged, flushes timed.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;

fn stream<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["results"][0]["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["spec"]["name"] == name)
        .unwrap_or_else(|| panic!("no stream {name}"))
}

fn ios(d: &Value) -> u64 {
    u(&d["ios"])
}

#[test]
fn streams_from_flags_run_together_and_add_up() {
    let dir = tempdir();
    let data = format!("data={}", dir.path().join("data").display());
    let logs = format!("logs={}", dir.path().join("logs").display());
    let doc = run_json(&[
        "--target",
        &data,
        "--target",
        &logs,
        "--size",
        "8m",
        "--runtime",
        "1s",
        "--buffered",
        "--stream",
        "reads:rw=randread,bs=8k,iodepth=4,rate-iops=500,targets=data",
        "--stream",
        "wal:rw=write,bs=16k,fsync=1,targets=logs",
        "--stream",
        "background:rw=randwrite,bs=128k,iodepth=2,targets=data",
    ]);
    let r = &doc["results"][0];
    assert_eq!(r["kind"], "streams");
    let names: Vec<&str> = r["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["spec"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["reads", "wal", "background"]);

    // Each stream on the targets it named.
    let reads = stream(&doc, "reads");
    let targets: Vec<&str> = reads["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["data"]);
    assert_eq!(stream(&doc, "wal")["targets"][0]["name"], "logs");

    // The rated stream keeps its schedule beside the closed-loop ones:
    // never ahead of it, and what it did not answer is reported.
    let read = &reads["total"]["read"];
    let unanswered = read["unanswered"].as_u64().unwrap_or(0);
    assert!(ios(read) <= 510, "{read}");
    assert!(ios(read) + unanswered >= 490, "{read}");
    assert!(read["sched_lat_ns"]["p99"].is_u64());

    // Every WAL write is followed by a timed flush.
    let wal = stream(&doc, "wal");
    let sync = &wal["sync"];
    assert!(u(&sync["count"]) > 0);
    let written = ios(&wal["total"]["write"]);
    assert!(
        u(&sync["count"]).abs_diff(written) <= 1,
        "{sync} vs {written} writes"
    );
    let h =
        fathom::measure::histogram::LatencyHistogram::decode(sync["histogram"].as_str().unwrap())
            .unwrap();
    assert_eq!(h.count(), u(&sync["count"]));

    // All streams together: counts add up, flushes too.
    let background = ios(&stream(&doc, "background")["total"]["write"]);
    assert!(background > 0, "the closed-loop stream takes what is left");
    assert_eq!(ios(&r["total"]["write"]), written + background);
    assert_eq!(ios(&r["total"]["read"]), ios(read));
    assert_eq!(u(&r["sync"]["count"]), u(&sync["count"]));
    assert!(
        entries(dir.path()).is_empty(),
        "the files fathom made are removed"
    );
}

const JOB: &str = r#"
[defaults]
targets = ["data=${dir}/data", "logs=${dir}/logs"]
size = "8m"
runtime = "1500ms"
buffered = true

[sweep]
dir = ["DIR"]
iodepth = [1, 2]

[workload.db.stream.reads]
rw = "randread"
targets = ["data"]

[workload.db.stream.wal]
rw = "write"
bs = "16k"
iodepth = 1
fsync = 1
targets = ["logs"]
"#;

#[test]
fn streams_from_a_job_file_sweep_with_the_workload() {
    let dir = tempdir();
    let job = dir.path().join("db.toml");
    std::fs::write(&job, JOB.replace("DIR", dir.path().to_str().unwrap())).unwrap();
    let out = dir.path().join("db.json");
    run_ok(&[
        "run",
        job.to_str().unwrap(),
        "--output-format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        2,
        "one streams workload per point of the sweep"
    );
    for (r, depth) in results.iter().zip([1, 2]) {
        assert_eq!(r["kind"], "streams");
        let streams = r["streams"].as_array().unwrap();
        // A swept knob reaches the streams that do not set it.
        assert_eq!(streams[0]["spec"]["iodepth"], depth);
        assert_eq!(streams[1]["spec"]["iodepth"], 1);
        assert_eq!(streams[1]["spec"]["fsync"], 1);
    }

    // Reports show each stream as a row under its workload; compare matches
    // streams by name.
    let path = out.to_str().unwrap();
    let md = String::from_utf8(run_ok(&["report", path, "--format", "markdown"]).stdout).unwrap();
    assert!(
        md.contains("| db-qd1/reads |") || md.contains("/reads |"),
        "{md}"
    );
    assert!(md.contains("| sync |"), "{md}");
    let html = dir.path().join("db.html");
    run_ok(&[
        "report",
        path,
        "--format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("IOPS per second, per stream"));
    // Every chart drawn, no tick label repeated, no legend over the data.
    assert_charts_drawn(&html, page.matches("<figure class=\"chart\"").count());
    let compared = String::from_utf8(run_ok(&["compare", path, path]).stdout).unwrap();
    assert!(
        compared.contains("/wal") && compared.contains("2 results in both"),
        "{compared}"
    );
}

#[test]
fn bad_streams_are_refused_before_anything_is_created() {
    let dir = tempdir();
    let data = format!("data={}", dir.path().join("data").display());
    let refuse = |streams: &[&str], why: &str| {
        let mut args = vec!["run", "--target", &data, "--size", "1m"];
        for s in streams {
            args.extend_from_slice(&["--stream", s]);
        }
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{streams:?}: {err}");
        names_the_problem(&err, why);
        assert!(entries(dir.path()).is_empty(), "nothing created");
    };
    refuse(&["a:rw=read,targets=logs"], "no target labelled 'logs'");
    refuse(&["a:rw=read", "a:rw=write"], "two streams of one name");
    refuse(
        &["a:rw=write,verify=true", "b:rw=randwrite"],
        "stream a: --verify with stream b writing the same region",
    );
    refuse(&["a:iodepth=deep"], "--stream a: iodepth");
    // A rate its queue cannot carry: 4 slots at 2 million a second each.
    refuse(
        &["a:rw=randread,iodepth=4,rate-iops=8000001"],
        "stream a: --rate-iops: 8,000,001 I/Os per second is more than --iodepth 4 x --numjobs 1",
    );
    refuse(
        &["a:rw=randread,iodepth=2,numjobs=2,rate-bw=40g"],
        "stream a: --rate-bw",
    );
    refuse(&["a:colour=blue"], "colour");
}

#[test]
fn streams_that_wait_for_each_other_or_for_no_one_are_refused() {
    let dir = tempdir();
    let t = format!("d={}", dir.path().join("d.dat").display());
    let stream = |s: &str| format!("--stream={s}");
    for (streams, says) in [
        (
            vec!["a:rw=read,wait-for=b", "b:rw=read,wait-for=a"],
            "never start",
        ),
        (
            vec!["a:rw=read,wait-for=a", "b:rw=read"],
            "waits for itself",
        ),
        (
            vec!["a:rw=read,wait-for=c", "b:rw=read"],
            "no stream of the group",
        ),
    ] {
        let mut args = vec!["run".to_string(), "--target".into(), t.clone()];
        args.extend(streams.iter().map(|s| stream(s)));
        args.extend(["--runtime".into(), "1s".into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, says);
    }
    refused(&["run", ".", "--wait-for", "x"], "not a stream");
    assert!(entries(dir.path()).is_empty(), "nothing created");
}

/// Clones of one fio job that one thing limited are named on one line of
/// the text, not a line each with the same words.
#[test]
fn clones_limited_alike_are_said_once() {
    let dir = tempdir();
    let job = dir.path().join("clones.fio");
    std::fs::write(
        &job,
        "[j]\nioengine=null\nsize=8m\nrw=randread\nruntime=1\ntime_based\nnumjobs=3\n",
    )
    .unwrap();
    let out = run_ok(&["run", job.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let limits: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains(" limited by "))
        .collect();
    assert_eq!(limits.len(), 1, "{text}");
    assert!(
        limits[0].starts_with("  j.0, j.1, j.2 (clones of j) limited by "),
        "{text}"
    );
}
