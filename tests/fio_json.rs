//! `--output-format fio-json`: fio's JSON layout from fathom's measurements,
//! checked key by key and type by type against what fio itself writes for
//! the same job file on this machine, read with a parser written against
//! fio's documented format, and drawn by fio-plot.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A job both fio and fathom run: 4k random reads at depth 4, direct.
fn job_file(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("rr.fio");
    std::fs::write(
        &p,
        format!(
            "[global]\nioengine=libaio\ndirect=1\nsize=8m\nruntime=1\ntime_based\nfilename={}\n\n\
             [rr]\nrw=randread\nbs=4k\niodepth=4\nnumjobs=1\n",
            dir.join("data").display()
        ),
    )
    .unwrap();
    p
}

fn fathom_fio_json(job: &Path) -> Value {
    let out = run(&["run", job.to_str().unwrap(), "--output-format", "fio-json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("fio-json is JSON")
}

/// The fio to compare with: FIO=path (fio 3.42 built from its source,
/// say), else the one on PATH.
fn fio() -> String {
    std::env::var("FIO").unwrap_or_else(|_| "fio".into())
}

fn fio_installed() -> bool {
    std::process::Command::new(fio())
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// "number", "string", "object", ...; integers and fractions are both
/// numbers, as JSON readers take them.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key fathom writes is one fio writes at the same place, with a
/// value of the same type; `required` keys must be there.
fn same_shape(path: &str, ours: &Value, fio: &Value, problems: &mut Vec<String>) {
    if kind(ours) != kind(fio) {
        problems.push(format!(
            "{path}: {} in fathom, {} in fio",
            kind(ours),
            kind(fio)
        ));
        return;
    }
    match (ours, fio) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    // Job options are whatever each side was given.
                    Some(w) if k != "job options" => {
                        same_shape(&format!("{path}.{k}"), v, w, problems)
                    }
                    Some(_) => {}
                    None => problems.push(format!("{path}.{k}: not in fio's output")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if let (Some(x), Some(y)) = (a.first(), b.first()) {
                same_shape(&format!("{path}[0]"), x, y, problems);
            }
        }
        _ => {}
    }
}

#[test]
fn fio_json_has_fios_keys_and_types() {
    if !fio_installed() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempdir();
    let job = job_file(dir.path());
    let fio = std::process::Command::new(fio())
        .args([job.to_str().unwrap(), "--output-format=json"])
        .output()
        .unwrap();
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let fio: Value = serde_json::from_slice(&fio.stdout).unwrap();
    let _ = std::fs::remove_file(dir.path().join("data"));
    let ours = fathom_fio_json(&job);

    let mut problems = Vec::new();
    // fathom names itself in the one key of its own fio's output lacks.
    let mut shaped = ours.clone();
    assert!(
        shaped
            .as_object_mut()
            .unwrap()
            .remove("fathom version")
            .is_some()
    );
    // The keys fio 3.42 writes that an older fio does not: fathom writes
    // them, and they are compared only with a fio that has them.
    let release = fio["fio version"].as_str().unwrap_or_default();
    let minor: u32 = release
        .strip_prefix("fio-3.")
        .and_then(|m| m.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if minor < 42 {
        let job = shaped["jobs"][0].as_object_mut().unwrap();
        assert!(
            job.remove("job_start")
                .is_some_and(|v| v.as_u64() > Some(1_700_000_000_000))
        );
        if let Some(disk) = shaped["disk_util"][0].as_object_mut() {
            for key in ["read_sectors", "write_sectors"] {
                assert!(disk.remove(key).is_some(), "{key}");
            }
        }
    }
    same_shape("", &shaped, &fio, &mut problems);
    assert!(problems.is_empty(), "{release}: {problems:#?}");
    // What the tools built on fio read is all there.
    let job = &ours["jobs"][0];
    for key in [
        "jobname",
        "groupid",
        "job_runtime",
        "usr_cpu",
        "sys_cpu",
        "read",
        "write",
        "trim",
        "latency_ns",
        "latency_us",
        "latency_ms",
    ] {
        assert!(job.get(key).is_some(), "jobs[0].{key} missing");
    }
    for key in [
        "io_bytes",
        "io_kbytes",
        "bw",
        "bw_bytes",
        "iops",
        "runtime",
        "total_ios",
        "short_ios",
        "drop_ios",
        "lat_ns",
        "clat_ns",
        "slat_ns",
    ] {
        assert!(job["read"].get(key).is_some(), "jobs[0].read.{key} missing");
    }
    // The percentiles fio lists, keyed as fio keys them.
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(
        keys(&job["read"]["clat_ns"]["percentile"]),
        keys(&fio["jobs"][0]["read"]["clat_ns"]["percentile"])
    );
    for table in ["latency_ns", "latency_us", "latency_ms"] {
        assert_eq!(keys(&job[table]), keys(&fio["jobs"][0][table]), "{table}");
    }
    assert_eq!(
        ours["fio version"], "fio-3.42",
        "the fio level fathom speaks"
    );
    assert!(
        ours["fathom version"]
            .as_str()
            .unwrap()
            .starts_with("fathom-")
    );
    assert_eq!(job["job options"]["rw"], "randread");
    assert_eq!(job["job options"]["iodepth"], "4");
}

/// fio's JSON as its documentation describes it (HOWTO, "Terse / JSON
/// output"), written without looking at fathom's exporter.
#[derive(Deserialize)]
struct FioOutput {
    #[serde(rename = "fio version")]
    version: String,
    timestamp: u64,
    jobs: Vec<FioJob>,
    disk_util: Vec<DiskUtil>,
}

#[derive(Deserialize)]
struct FioJob {
    jobname: String,
    groupid: u32,
    job_runtime: u64,
    usr_cpu: f64,
    sys_cpu: f64,
    read: FioDirection,
    write: FioDirection,
    latency_us: BTreeMap<String, f64>,
    latency_ms: BTreeMap<String, f64>,
}

#[derive(Deserialize)]
struct FioDirection {
    io_bytes: u64,
    io_kbytes: u64,
    bw: u64,
    bw_bytes: u64,
    iops: f64,
    runtime: u64,
    total_ios: u64,
    lat_ns: FioLatency,
    clat_ns: FioLatency,
}

#[derive(Deserialize)]
struct FioLatency {
    min: u64,
    max: u64,
    mean: f64,
    #[serde(rename = "N")]
    n: u64,
    #[serde(default)]
    percentile: BTreeMap<String, u64>,
}

#[derive(Deserialize)]
struct DiskUtil {
    name: String,
    read_ios: u64,
    util: f64,
}

#[test]
fn a_parser_written_to_fios_documentation_reads_fathoms_figures() {
    let dir = tempdir();
    let job = job_file(dir.path());
    let doc = fathom_fio_json(&job);
    let out: FioOutput = serde_json::from_value(doc.clone()).expect("fio's documented layout");
    assert!(out.version == "fio-3.42" && out.timestamp > 1_600_000_000);
    assert_eq!(out.jobs.len(), 1);
    let j = &out.jobs[0];
    assert_eq!((j.jobname.as_str(), j.groupid), ("rr", 0));
    let r = &j.read;
    assert!(r.total_ios > 0 && j.write.total_ios == 0);
    assert_eq!(r.io_bytes, r.total_ios * 4096);
    assert_eq!(r.io_kbytes, r.io_bytes / 1024);
    assert_eq!(r.bw, (r.bw_bytes as f64 / 1024.0).round() as u64);
    // IOPS and bandwidth agree with each other and with the runtime.
    let runtime_s = r.runtime as f64 / 1000.0;
    assert!((r.iops * runtime_s - r.total_ios as f64).abs() <= r.total_ios as f64 * 0.01 + 1.0);
    assert!(j.job_runtime >= 1000 && j.usr_cpu + j.sys_cpu > 0.0);
    // Percentiles rise, and lie between min and max.
    let p: Vec<u64> = r.clat_ns.percentile.values().copied().collect();
    assert_eq!(p.len(), 17);
    let p99 = r.clat_ns.percentile["99.000000"];
    let p50 = r.clat_ns.percentile["50.000000"];
    assert!(r.clat_ns.min <= p50 && p50 <= p99 && p99 <= r.clat_ns.max);
    assert_eq!((r.lat_ns.n, r.clat_ns.n), (r.total_ios, r.total_ios));
    assert!(r.lat_ns.mean > 0.0);
    // lat = slat + clat, as tools built on fio add them (libaio submits
    // apart from queueing: its slat is counted).
    let slat = &doc["jobs"][0]["read"]["slat_ns"];
    let slat_mean = slat["mean"].as_f64().unwrap();
    if slat["N"].as_u64().unwrap() > 0 {
        assert!(slat_mean > 0.0);
        let sum = slat_mean + r.clat_ns.mean;
        assert!(
            (sum - r.lat_ns.mean).abs() <= 1.0,
            "slat {slat_mean} + clat {} is not lat {}",
            r.clat_ns.mean,
            r.lat_ns.mean
        );
        assert!(r.clat_ns.mean < r.lat_ns.mean);
    }
    // The latency tables cover every I/O once.
    let total: f64 = j.latency_us.values().sum::<f64>()
        + j.latency_ms.values().sum::<f64>()
        + doc["jobs"][0]["latency_ns"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_f64().unwrap())
            .sum::<f64>();
    assert!((total - 100.0).abs() < 0.01, "{total}");
    // The disk under the file, when there is one.
    if let Some(d) = out.disk_util.first() {
        assert!(!d.name.is_empty() && d.read_ios > 0 && d.util > 0.0);
    }
}

#[test]
fn fio_plot_draws_from_fathoms_output() {
    let installed = std::process::Command::new("fio-plot")
        .arg("--help")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!("skipped: fio-plot is not installed (pip install fio-plot)");
        return;
    }
    // Laid out as bench-fio lays out its results: one file per depth.
    let dir = tempdir();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    for depth in ["1", "4"] {
        let out = results.join(format!("randread-{depth}-1.json"));
        let o = run(&[
            "run",
            dir.path().to_str().unwrap(),
            "--size",
            "8m",
            "--runtime",
            "300ms",
            "--rw",
            "randread",
            "--iodepth",
            depth,
            "--output-format",
            "fio-json",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let png = dir.path().join("out.png");
    let o = std::process::Command::new("fio-plot")
        .args([
            "-i",
            results.to_str().unwrap(),
            "-T",
            "fathom",
            "-l",
            "-r",
            "randread",
        ])
        .args(["-d", "1", "4", "-n", "1", "-o", png.to_str().unwrap()])
        .env("MPLBACKEND", "Agg")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let bytes = std::fs::read(&png).expect("fio-plot wrote its chart");
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{} bytes",
        bytes.len()
    );
}

/// `fio-json+` carries fio's latency bins: every I/O in one bin, bins
/// keyed as fio keys them, and fio's own `fio_jsonplus_clat2csv` turns
/// them into one row per bin.
#[test]
fn json_plus_bins_are_read_by_fios_own_script() {
    let dir = tempdir();
    let job = job_file(dir.path());
    let out = run(&["run", job.to_str().unwrap(), "--output-format", "fio-json+"]);
    let doc: Value = json_out(&out);
    let read = &doc["jobs"][0]["read"];
    let bins = read["clat_ns"]["bins"].as_object().expect("clat_ns.bins");
    let counted: u64 = bins.values().map(u).sum();
    assert_eq!(counted, u(&read["total_ios"]), "every I/O in one bin");
    assert!(bins.len() > 1, "{bins:?}");
    for key in bins.keys() {
        let ns: u64 = key.parse().expect("bins are keyed by ns");
        assert!(ns >= u(&read["clat_ns"]["min"]) / 2 && ns <= u(&read["clat_ns"]["max"]) * 2);
    }
    let json = dir.path().join("plus.json");
    std::fs::write(&json, serde_json::to_string(&doc).unwrap()).unwrap();
    let script = "/usr/bin/fio_jsonplus_clat2csv";
    if !Path::new(script).exists() {
        eprintln!("SKIP (script part): {script} is not installed (apt-get install fio)");
        return;
    }
    let out = std::process::Command::new("python3")
        .args([
            script,
            json.to_str().unwrap(),
            dir.path().join("bins.csv").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    succeeded(&out);
    let csv = std::fs::read_to_string(dir.path().join("bins_job0.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        1 + bins.len(),
        "a header and a row per bin"
    );
    let last = csv.lines().last().unwrap();
    let cols: Vec<&str> = last.split(", ").collect();
    // nsec, then read slat (empty), read clat: count, cumulative, percentile.
    assert_eq!(cols[5].trim().parse::<u64>().unwrap(), counted, "{last}");
}

/// fio's own JSON and json+ are results `report` and `compare` read: a
/// job fio ran compares with the same job run by fathom, and reports in
/// every format, percentiles from json+'s bins.
#[test]
fn fios_own_results_are_reported_and_compared_with_fathoms() {
    if !fio_installed() {
        eprintln!("SKIP: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempdir();
    let job = job_file(dir.path());
    let mut docs = Vec::new();
    for format in ["json", "json+"] {
        let out_file = dir.path().join(format!("fio-{format}.json"));
        let status = std::process::Command::new("fio")
            .args([job.to_str().unwrap(), &format!("--output-format={format}")])
            .arg(format!("--output={}", out_file.display()))
            .status()
            .unwrap();
        assert!(status.success());
        docs.push(out_file);
    }
    let ours = dir.path().join("fathom.json");
    run_ok(&[
        "run",
        job.to_str().unwrap(),
        "-o",
        ours.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    for fio in &docs {
        let out = run_ok(&["compare", fio.to_str().unwrap(), ours.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("randread 4k QD4"), "{text}");
        assert!(text.contains("1 result in both"), "{text}");
        // Only what both sides recorded: fio's JSON keeps no kernel, CPU,
        // memory or file system, so none of them is a difference.
        let notes = String::from_utf8_lossy(&out.stderr).to_string() + &text;
        for unrecorded in [
            "kernel  vs",
            "memory 0 B",
            "CPUs 0 vs",
            "the targets differ",
        ] {
            assert!(!notes.contains(unrecorded), "{unrecorded}: {notes}");
        }
        for format in ["text", "markdown", "csv", "html", "fio-json"] {
            let out = run(&["report", fio.to_str().unwrap(), "--format", format]);
            assert!(
                out.status.success(),
                "{format}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // json+: the p99 fathom reports is fio's to its bin's precision.
    let fio_plus: Value =
        serde_json::from_str(&std::fs::read_to_string(&docs[1]).unwrap()).unwrap();
    let fio_p99 = f(&fio_plus["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"]);
    let out = run_ok(&["report", docs[1].to_str().unwrap(), "--format", "fio-json"]);
    let report: Value = json_out(&out);
    let ours_p99 = f(&report["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"]);
    assert!(
        (ours_p99 - fio_p99).abs() <= fio_p99 * 0.04,
        "p99 {ours_p99} against fio's {fio_p99}"
    );
    let text = run_ok(&["report", docs[0].to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("'s JSON: percentiles"), "{text}");
}

/// iodepth_level, iodepth_submit and iodepth_complete are counted by the
/// workers, ctx and the page faults come from getrusage: at depth 4 the
/// I/Os go out with up to 4 in flight, one per submission.
#[test]
fn queue_depths_and_context_switches_are_measured() {
    let dir = tempdir();
    let job = job_file(dir.path());
    let doc = fathom_fio_json(&job);
    let j = &doc["jobs"][0];
    let level = j["iodepth_level"].as_object().unwrap();
    let total: f64 = level.values().map(f).sum();
    assert!((total - 100.0).abs() < 0.01, "{level:?}");
    // Never more than the depth, and up to it after each reap.
    assert!(f(&j["iodepth_level"]["4"]) > 0.0, "{level:?}");
    assert_eq!(f(&j["iodepth_level"]["8"]), 0.0, "{level:?}");
    assert!(
        f(&j["iodepth_submit"]["4"]) > 99.0,
        "one I/O per submission: {j}"
    );
    let complete: f64 = j["iodepth_complete"]
        .as_object()
        .unwrap()
        .values()
        .map(f)
        .sum();
    assert!((complete - 100.0).abs() < 0.01);
    assert!(u(&j["ctx"]) > 0 && u(&j["minf"]) > 0, "{}", j["ctx"]);
}

/// A `group_reporting` job of two clones: fio's JSON has the group as one
/// job, fathom's document each clone as a target; compare sets the
/// group's total beside fathom's total (both about 4,000 IOPS), not beside
/// one clone (a false 2x).
#[test]
fn a_group_reported_as_one_job_is_compared_with_all_its_clones() {
    let dir = tempdir();
    let job = dir.path().join("g.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nsize=64m\nruntime=1\ntime_based\ngroup_reporting\nrate_iops=2000\n\
         [rr]\nrw=randread\nbs=4k\nnumjobs=2\n",
    )
    .unwrap();
    let as_fio = dir.path().join("fio.json");
    let ours = dir.path().join("fathom.json");
    let job = job.to_str().unwrap();
    run_ok(&[
        "run",
        job,
        "--output-format",
        "fio-json",
        "-o",
        as_fio.to_str().unwrap(),
    ]);
    run_ok(&["run", job, "-o", ours.to_str().unwrap()]);
    let out = run(&[
        "compare",
        as_fio.to_str().unwrap(),
        ours.to_str().unwrap(),
        "--output-format",
        "csv",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().skip(1).filter(|l| !l.is_empty()).collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].contains("1 target / 2 targets (totals)"), "{text}");
    // B/A is the first plain decimal after the two quoted IOPS.
    let ratio: f64 = rows[0]
        .rsplit_once("\",")
        .and_then(|(_, rest)| rest.split(',').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        (0.75..1.34).contains(&ratio),
        "group total against one clone: B/A {ratio}"
    );
}
