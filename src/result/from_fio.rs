//! fio's own JSON output (`--output-format=json` or `json+`) read as a
//! fathom document, so that years of fio results are reported and compared
//! beside fathom's runs.
//!
//! Each fio job becomes a workload. fio's `lat_ns` (submission to
//! completion) is what fathom measures; its min, max, mean and deviation
//! are taken as they are. The percentiles come from `clat_ns`, fio's
//! completion latency, which leaves out fio's submission time (small for
//! asynchronous engines, zero for synchronous ones): from its `bins`
//! (json+) at fio's bin precision, else from its percentile list, which
//! gives exact figures only at the percentiles fio listed. A warning of
//! kind `fio_input` on each workload says which.

use super::warning::{Warning, WarningKind};
use super::workload::{CpuUsage, DirectionPair, DirectionResult, TargetResult, WorkloadResult};
use super::{Document, RunResult, SCHEMA, StreamsResult};
use crate::measure::facts::HostFacts;
use crate::measure::histogram::{LatencyHistogram, LatencySummary};
use crate::spec::WorkloadSpec;
use serde_json::Value;

/// Whether `doc` looks like fio's output rather than fathom's.
pub fn is_fio_output(doc: &Value) -> bool {
    doc.get("fio version").is_some() && doc.get("jobs").is_some_and(Value::is_array)
}

/// fio's JSON document `doc` as a fathom document.
pub fn document(doc: &Value) -> Result<Document, String> {
    let version = doc["fio version"].as_str().unwrap_or("fio").to_string();
    let global = doc.get("global options").cloned().unwrap_or(Value::Null);
    let jobs = doc["jobs"].as_array().ok_or("fio's output has no jobs")?;
    let mut results = Vec::new();
    let mut first = 0;
    while first < jobs.len() {
        // The jobs of one reporting group ran at the same time (a
        // stonewall starts a new group): one result of several streams,
        // as fathom runs them.
        let group = &jobs[first]["groupid"];
        let end = first
            + jobs[first..]
                .iter()
                .take_while(|j| j["groupid"] == *group)
                .count();
        let members = jobs[first..end]
            .iter()
            .enumerate()
            .map(|(i, job)| {
                workload(job, &global, &version).map_err(|e| format!("fio job {}: {e}", first + i))
            })
            .collect::<Result<Vec<_>, String>>()?;
        results.push(group_result(members)?);
        first = end;
    }
    let started_at = doc["timestamp"]
        .as_u64()
        .map(|s| {
            humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(s),
            )
            .to_string()
        })
        .unwrap_or_default();
    Ok(Document {
        fathom_version: version,
        fathom_commit: None,
        schema: SCHEMA,
        started_at,
        host: HostFacts {
            hostname: "fio's JSON".into(),
            kernel: String::new(),
            os: String::new(),
            cpu_model: String::new(),
            cpus: 0,
            memory_bytes: 0,
        },
        label: None,
        interrupted: false,
        results,
        cluster: None,
        failure: None,
        notes: Vec::new(),
        pod: None,
    })
}

/// One job as a workload; several jobs that ran together as the streams
/// of one workload, named as fathom names a translated job file's (the
/// jobs' names joined by `+`, a job's clones `NAME.0`, `NAME.1`, ...).
fn group_result(mut members: Vec<WorkloadResult>) -> Result<RunResult, String> {
    if members.len() == 1 {
        return Ok(RunResult::Workload(members.remove(0)));
    }
    let names: Vec<String> = members.iter().map(|m| m.spec.name.clone()).collect();
    let mut distinct: Vec<&str> = Vec::new();
    for name in &names {
        if !distinct.contains(&name.as_str()) {
            distinct.push(name);
        }
    }
    for (i, member) in members.iter_mut().enumerate() {
        let name = &names[i];
        if names.iter().filter(|n| *n == name).count() > 1 {
            let nth = names[..i].iter().filter(|n| *n == name).count();
            member.spec.name = format!("{name}.{nth}");
            member.spec.clone_of = Some(name.clone());
        }
    }
    let mut spec = members[0].spec.clone();
    spec.name = distinct.join("+");
    spec.clone_of = None;
    spec.streams = members.iter().map(|m| m.spec.clone()).collect();
    Ok(RunResult::Streams(StreamsResult::new(spec, members)?))
}

/// The spec of the job: its options (over the global ones) read through
/// fathom's one table of fio's options.
fn spec_of(job: &Value, global: &Value, name: &str) -> WorkloadSpec {
    let pairs = |v: &'_ Value| -> Vec<(String, String)> {
        v.as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect()
    };
    let mut options = pairs(global);
    options.extend(pairs(&job["job options"]));
    crate::input::fio::spec_of_options(name, options.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

fn workload(job: &Value, global: &Value, version: &str) -> Result<WorkloadResult, String> {
    let name = job["jobname"].as_str().ok_or("no jobname")?.to_string();
    let spec = spec_of(job, global, &name);
    let runtime_ms = job["job_runtime"]
        .as_u64()
        .or_else(|| job["read"]["runtime"].as_u64())
        .unwrap_or(0);
    let runtime_s = runtime_ms as f64 / 1000.0;
    let mut from_bins = true;
    let read = direction(&job["read"], runtime_s, &mut from_bins)?;
    let write = direction(&job["write"], runtime_s, &mut from_bins)?;
    let trim = match &job["trim"] {
        Value::Null => DirectionResult::default(),
        t => direction(t, runtime_s, &mut from_bins)?,
    };
    let pct = |k: &str| job[k].as_f64().unwrap_or(0.0) / 100.0 * runtime_s;
    let ios = read.ios + write.ios + trim.ios;
    let cpu = CpuUsage::new(
        crate::measure::cpu::CpuTime {
            user_s: pct("usr_cpu"),
            sys_s: pct("sys_cpu"),
            context_switches: job["ctx"].as_u64().unwrap_or(0),
            major_faults: job["majf"].as_u64().unwrap_or(0),
            minor_faults: job["minf"].as_u64().unwrap_or(0),
            ..Default::default()
        },
        ios,
    );
    let how = if from_bins {
        "from fio's latency bins (json+), as precise as fio's bins (1.6%)"
    } else {
        "from fio's percentile list: exact only at the percentiles fio listed, between them a step"
    };
    let warning = Warning {
        kind: WarningKind::FioInput,
        target: name.clone(),
        figure: None,
        message: format!(
            "read from {version}'s JSON: percentiles are of fio's completion latency (clat) {how}; no per-second figures beyond fio's own"
        ),
        at_s: None,
    };
    let total = DirectionPair { read, write, trim };
    let mut target = TargetResult::of_file(&spec.targets.join(":"), total.clone());
    target.size = spec.size.unwrap_or(0);
    target.runtime_s = runtime_s;
    let mut result = WorkloadResult::of(spec, vec![target], total, cpu, runtime_s);
    result.warnings.push(warning);
    Ok(result)
}

/// One direction of a fio job; `from_bins` is cleared when its
/// percentiles had to come from fio's percentile list.
fn direction(d: &Value, runtime_s: f64, from_bins: &mut bool) -> Result<DirectionResult, String> {
    let ios = d["total_ios"].as_u64().unwrap_or(0);
    let bytes = d["io_bytes"].as_u64().unwrap_or(0);
    if ios == 0 {
        return Ok(DirectionResult {
            histogram: LatencyHistogram::new().encode(),
            ..Default::default()
        });
    }
    let clat = &d["clat_ns"];
    let lat = if d["lat_ns"]["N"].as_u64().unwrap_or(0) > 0 {
        &d["lat_ns"]
    } else {
        clat
    };
    let mut h = LatencyHistogram::new();
    if let Some(bins) = clat["bins"].as_object() {
        for (ns, count) in bins {
            let ns: u64 = ns
                .parse()
                .map_err(|_| format!("bin '{ns}' is not a latency"))?;
            h.record_n(ns, count.as_u64().unwrap_or(0));
        }
    } else if let Some(list) = clat["percentile"].as_object() {
        *from_bins = false;
        let mut points: Vec<(f64, u64)> = list
            .iter()
            .filter_map(|(p, v)| Some((p.parse::<f64>().ok()?, v.as_u64()?)))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Each listed value stands for the I/Os between the percentile
        // before it and its own; the rest are at the maximum.
        let mut counted = 0u64;
        for (p, ns) in points {
            let upto = ((p / 100.0) * ios as f64).round() as u64;
            h.record_n(ns, upto.saturating_sub(counted));
            counted = counted.max(upto);
        }
        let max = lat["max"].as_u64().unwrap_or(0);
        h.record_n(max, ios.saturating_sub(counted));
    } else {
        *from_bins = false;
        let mean = lat["mean"].as_f64().unwrap_or(0.0) as u64;
        h.record_n(mean, ios);
    }
    let summary = h.summary();
    let value = |k: &str| lat[k].as_f64().unwrap_or(0.0);
    Ok(DirectionResult {
        ios,
        bytes,
        iops: d["iops"].as_f64().unwrap_or(if runtime_s > 0.0 {
            ios as f64 / runtime_s
        } else {
            0.0
        }),
        bw_bytes: d["bw_bytes"].as_f64().unwrap_or(0.0),
        lat_ns: LatencySummary {
            min: value("min") as u64,
            mean: value("mean"),
            max: value("max") as u64,
            stddev: value("stddev"),
            ..summary
        },
        histogram: h.encode(),
        sched_lat_ns: None,
        sched_histogram: None,
        // fio's slat is not read back: its summary carries no histogram.
        slat_ns: None,
        slat_histogram: None,
        unanswered: 0,
        intervals: Vec::new(),
        // fio's per-priority figures (`prios`) are not read back.
        by_priority: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::EngineKind;
    use serde_json::json;

    /// The reader and the translator are one: every engine fio names is
    /// read as the job file translator runs it (`falloc` stays falloc),
    /// and what the writer of fio's JSON says of a spec reads back as it.
    #[test]
    fn fios_options_read_back_as_they_were_written() {
        for (fio, fathom) in [
            ("falloc", EngineKind::Falloc),
            ("ftruncate", EngineKind::Ftruncate),
            ("libaio", EngineKind::IoUring),
            ("pvsync2", EngineKind::Sync),
            ("null", EngineKind::Null),
        ] {
            let job = json!({"job options": {"ioengine": fio}});
            assert_eq!(spec_of(&job, &Value::Null, "j").engine, fathom, "{fio}");
        }
        let mut spec = WorkloadSpec::defaults(vec!["/dev/x".into()]);
        spec.rw = crate::spec::RwMode::RandRw;
        spec.rwmix_read = 70;
        spec.bs = 16384;
        spec.iodepth = 8;
        spec.numjobs = 2;
        spec.engine = EngineKind::Falloc;
        spec.direct = true;
        spec.runtime_s = Some(3.0);
        spec.fsync = 4;
        let options: serde_json::Map<String, Value> = crate::input::fio::table::written(&spec)
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::String(v)))
            .collect();
        let back = spec_of(&json!({ "job options": options }), &Value::Null, "j");
        assert_eq!(
            (
                back.rw,
                back.rwmix_read,
                back.bs,
                back.iodepth,
                back.numjobs
            ),
            (spec.rw, 70, 16384, 8, 2)
        );
        assert_eq!(
            (
                back.engine,
                back.direct,
                back.runtime_s,
                back.fsync,
                back.targets
            ),
            (EngineKind::Falloc, true, Some(3.0), 4, spec.targets)
        );
    }

    fn fio_doc(clat: Value) -> Value {
        json!({
            "fio version": "fio-3.33",
            "timestamp": 1_700_000_000u64,
            "global options": {"ioengine": "libaio", "direct": "1"},
            "jobs": [{
                "jobname": "rr",
                "job options": {"rw": "randread", "bs": "4k", "iodepth": "16", "filename": "/dev/nvme0n1"},
                "job_runtime": 2000,
                "usr_cpu": 10.0, "sys_cpu": 20.0,
                "read": {
                    "io_bytes": 4096000, "total_ios": 1000, "iops": 500.0, "bw_bytes": 2048000,
                    "runtime": 2000,
                    "clat_ns": clat,
                    "lat_ns": {"min": 900, "max": 90000, "mean": 10000.0, "stddev": 3000.0, "N": 1000}
                },
                "write": {"io_bytes": 0, "total_ios": 0, "clat_ns": {"N": 0}, "lat_ns": {"N": 0}}
            }]
        })
    }

    #[test]
    fn a_fio_job_is_a_workload_with_its_options_and_figures() {
        let clat = json!({"N": 1000, "min": 800, "max": 89000, "mean": 9000.0,
            "percentile": {"50.000000": 8000, "99.000000": 40000, "99.900000": 80000}});
        let doc = document(&fio_doc(clat)).unwrap();
        let w = doc.workloads().next().unwrap();
        assert_eq!(w.spec.name, "rr");
        assert_eq!(
            (w.spec.iodepth, w.spec.engine, w.spec.direct),
            (16, EngineKind::IoUring, true)
        );
        assert_eq!(w.total.read.ios, 1000);
        assert_eq!(w.total.read.lat_ns.max, 90000);
        // Exact to the histogram's three significant digits.
        assert!(w.total.read.lat_ns.p50.abs_diff(8000) <= 8);
        assert!(w.total.read.lat_ns.p99.abs_diff(40000) <= 40);
        assert!((w.cpu.user_s - 0.2).abs() < 1e-9);
        assert!(
            w.warnings[0].message.contains("percentile list"),
            "{}",
            w.warnings[0].message
        );
    }

    #[test]
    fn json_plus_bins_give_the_histogram() {
        let clat = json!({"N": 1000, "min": 800, "max": 89000, "mean": 9000.0,
            "bins": {"8000": 500, "9000": 490, "80000": 10}});
        let doc = document(&fio_doc(clat)).unwrap();
        let w = doc.workloads().next().unwrap();
        let h = LatencyHistogram::decode(&w.total.read.histogram).unwrap();
        assert_eq!(h.count(), 1000);
        assert!(h.value_at_percentile(99.5).abs_diff(80000) < 100);
        assert!(w.warnings[0].message.contains("bins"));
    }
}
