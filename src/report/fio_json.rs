//! fio's JSON output (`--output-format=json` of fio 3), written from
//! fathom's measurements so that tools built on fio (fio-plot, bench-fio
//! wrappers, dashboards reading `jobs[].read.clat_ns.percentile`) read it
//! unchanged.
//!
//! Each workload is one job; the streams of a workload are jobs of one
//! group, as fio's concurrent jobs are, or one job with `group_reporting`.
//! A stream that is a clone of a fio job (`numjobs`) carries the job's
//! name, as fio's clones do. Totals over a workload's targets and workers
//! are given, as fio's `group_reporting` gives them.
//! fathom times an I/O from submission to completion, which is fio's `lat`;
//! `clat_ns` repeats it (tools read percentiles from `clat_ns`). `slat_ns`
//! is the submission's own time, part of both, for an engine that submits
//! as it queues (io_uring), and empty (N = 0) for the synchronous ones, as
//! fio writes it for its own. Metadata and certification results
//! have no fio counterpart and are left out.
//!
//! `json+` adds fio's latency bins to `clat_ns`: fathom's histogram (three
//! significant digits) regrouped into fio's layout (64 bins per power of
//! two), keyed by each bin's middle in ns as fio keys them, so that
//! `fio_jsonplus_clat2csv` and fio-plot read them.

use super::{Exporter, Report};
use crate::measure::histogram::LatencyHistogram;
use crate::result::streams::StreamsResult;
use crate::result::tree::TreeResult;
use crate::result::{
    CpuUsage, DirectionResult, DiskUsage, LatencySummary, SyncResult, WorkloadResult,
};
use serde_json::{Map, Value, json};

/// The fio release whose command line, job files and outputs fathom
/// follows (and names in the outputs that carry fio's version).
pub const FIO_RELEASE: &str = "fio-3.42";

/// fio's `json` (`plus: false`) or `json+`, which adds each latency
/// histogram as fio's bins.
pub struct FioJsonExporter {
    pub plus: bool,
}

/// The percentiles fio lists by default, keyed as fio keys them.
pub(super) const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// fio's latency buckets: the upper bound of each, in the unit of the
/// table; the last ms bucket is everything from 2,000 ms.
const BUCKETS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

impl Exporter for FioJsonExporter {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        let mut text = serde_json::to_string_pretty(&document(report, self.plus)?)?;
        text.push('\n');
        Ok(text)
    }
}

/// The report as fio's JSON document (`plus`: with json+'s bins): what
/// fio's other outputs (`fio_normal`) are rendered from, as fio renders
/// every output from one `thread_stat`.
pub fn document(report: &Report, plus: bool) -> anyhow::Result<Value> {
    let mut jobs = Vec::new();
    let mut disks: Vec<DiskUsage> = Vec::new();
    let mut started = None;
    let several = report.compares_systems();
    for system in &report.systems {
        let doc = &system.document;
        started.get_or_insert(doc.started_at.clone());
        let prefix = if several {
            format!("{}/", system.label)
        } else {
            String::new()
        };
        // fio's group ids: one per workload, and one more at each stream
        // that starts a new reporting group (`new_group`).
        let mut group = 0;
        for (n, result) in doc.results.iter().enumerate() {
            if n > 0 {
                group += 1;
            }
            if let Some(w) = result.get::<WorkloadResult>() {
                jobs.push(job(&format!("{prefix}{}", w.spec.name), group, w, plus)?);
                add_disks(&mut disks, &w.disks);
            } else if let Some(s) = result.get::<StreamsResult>() {
                let grouped = s.streams.iter().any(|w| w.spec.group_reporting);
                let parts = reporting_groups(&s.streams);
                if grouped {
                    for (k, part) in parts.iter().enumerate() {
                        group += usize::from(k > 0);
                        let merged = crate::result::streams::StreamsResult::new(
                            s.spec.clone(),
                            part.to_vec(),
                        )
                        .map_err(anyhow::Error::msg)?
                        .as_one_workload()
                        .expect("a group has a stream");
                        let name = format!("{prefix}{}", merged.spec.fio_jobname());
                        jobs.push(job(&name, group, &merged, plus)?);
                    }
                } else {
                    for (i, w) in s.streams.iter().enumerate() {
                        group += usize::from(i > 0 && w.spec.new_group);
                        let jobname = w.spec.fio_jobname();
                        let name = format!("{prefix}{jobname}");
                        let mut one = job(&name, group, w, plus)?;
                        // Each clone says the numjobs of its job, as
                        // fio's do.
                        let clones = s
                            .streams
                            .iter()
                            .filter(|c| c.spec.fio_jobname() == jobname)
                            .count();
                        one["job options"]["numjobs"] = json!(clones.to_string());
                        jobs.push(one);
                    }
                }
                add_disks(&mut disks, &s.disks);
            } else if let Some(t) = result.get::<TreeResult>() {
                // fio's file-operation jobs: the phase fio times, a job
                // per thread.
                jobs.extend(tree_jobs(&prefix, group, t, plus)?);
            }
            // fio has no other results: its readers would not know them.
        }
    }
    if jobs.is_empty() {
        // Metadata, certification and capacity results have no fio form:
        // an empty "jobs" would read as a run that did nothing.
        return Err(crate::util::error::UsageError(
                "fio-json: these results hold no I/O workload, and fio's JSON has no place for metadata, certification, capacity or pts results (use json)".into(),
            )
            .into());
    }
    let at = started
        .as_deref()
        .and_then(|s| humantime::parse_rfc3339(s).ok())
        .unwrap_or_else(std::time::SystemTime::now);
    let ms = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    Ok(json!({
        // The fio level fathom speaks, where fio-plot, bench-fio and kubestr
        // read it; fathom names itself in a key of its own.
        "fio version": FIO_RELEASE,
        "fathom version": format!("fathom-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": ms / 1000,
        "timestamp_ms": ms,
        "time": started.unwrap_or_default(),
        "global options": global_options(&jobs),
        "jobs": jobs,
        "disk_util": disks.iter().map(disk_util).collect::<Vec<_>>(),
    }))
}

/// A count in the document (a float rounded, as fio writes some counts).
pub(super) fn count_in(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|x| x.max(0.0).round() as u64))
        .unwrap_or(0)
}

/// A figure in the document; 0 where there is none.
pub(super) fn figure_in(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// A disk of `disk_util` as fio's text outputs list it: read and write
/// I/Os, merges and ticks, then time in queue.
pub(super) fn disk_counts(d: &Value) -> [u64; 7] {
    [
        "read_ios",
        "write_ios",
        "read_merges",
        "write_merges",
        "read_ticks",
        "write_ticks",
        "in_queue",
    ]
    .map(|k| count_in(&d[k]))
}

/// The streams in their reporting groups: a new one at each stream that
/// starts one (fio's `new_group`).
fn reporting_groups(streams: &[WorkloadResult]) -> Vec<&[WorkloadResult]> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, w) in streams.iter().enumerate() {
        if i > 0 && w.spec.new_group {
            parts.push(&streams[start..i]);
            start = i;
        }
    }
    parts.push(&streams[start..]);
    parts
}

/// The job options every job shares, as fio lists its [global] section;
/// nothing for a single job, whose options are its own.
fn global_options(jobs: &[Value]) -> Value {
    let Some(first) = jobs.first().and_then(|j| j["job options"].as_object()) else {
        return json!({});
    };
    if jobs.len() < 2 {
        return json!({});
    }
    first
        .iter()
        .filter(|(k, v)| {
            *k != "name"
                && jobs
                    .iter()
                    .all(|j| j["job options"].get(k.as_str()) == Some(v))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect::<Map<String, Value>>()
        .into()
}

/// Disks of every workload, counters added per disk.
fn add_disks(all: &mut Vec<DiskUsage>, more: &[DiskUsage]) {
    for d in more {
        match all.iter_mut().find(|a| a.name == d.name) {
            Some(a) => a.add(d),
            None => all.push(d.clone()),
        }
    }
}

fn disk_util(d: &DiskUsage) -> Value {
    json!({
        "name": d.name,
        "read_ios": d.read_ios,
        "write_ios": d.write_ios,
        "read_sectors": d.read_bytes / 512,
        "write_sectors": d.write_bytes / 512,
        "read_merges": d.read_merges,
        "write_merges": d.write_merges,
        "read_ticks": d.read_ticks_ms,
        "write_ticks": d.write_ticks_ms,
        "in_queue": d.in_queue_ms,
        "util": d.util_pct,
    })
}

/// fio 3.42's `job_start`: when the job started, in milliseconds of the
/// real-time clock (its `job_start_clock_id`'s default).
fn job_start(started_unix_s: Option<f64>) -> u64 {
    started_unix_s.map_or(0, |s| (s * 1000.0).round() as u64)
}

fn job(name: &str, group: usize, w: &WorkloadResult, plus: bool) -> anyhow::Result<Value> {
    let spec = &w.spec;
    let runtime_ms = (w.runtime_s * 1000.0).round() as u64;
    // The options fio lists for the job, as the one table of fio's options
    // says each of them.
    let options: Map<String, Value> = crate::input::fio::table::written(spec)
        .into_iter()
        .map(|(k, v)| (k.to_string(), Value::String(v)))
        .collect();
    // Each direction's histogram is decoded once: for its percentiles, and
    // added into the job's latency tables.
    let read_h = decoded(&w.total.read)?;
    let write_h = decoded(&w.total.write)?;
    let trim_h = decoded(&w.total.trim)?;
    let mut all = read_h.clone();
    all.add(&write_h);
    all.add(&trim_h);
    let errors: u64 = w.targets.iter().map(|t| t.errors.count).sum();
    let short: u64 = w.targets.iter().map(|t| t.errors.short).sum();
    let out = Shape {
        plus,
        percentiles: &spec.percentile_list,
    };
    let mut read = direction(&w.total.read, &read_h, runtime_ms, short, &out);
    if w.total.read.ios == 0 {
        verify_reads(&mut read, w);
    }
    let mut write = direction(&w.total.write, &write_h, runtime_ms, 0, &out);
    for (json, d) in [(&mut read, &w.total.read), (&mut write, &w.total.write)] {
        if let Some(prios) = prios(spec, d, &out)? {
            json["prios"] = prios;
        }
    }
    let mut job = json!({
        "jobname": name,
        "groupid": group,
        "job_start": job_start(w.started_unix_s),
        "error": u8::from(errors > 0),
        "eta": 0,
        "elapsed": w.runtime_s.ceil() as u64,
        "job options": options,
        "read": read,
        "write": write,
        "trim": direction(&w.total.trim, &trim_h, runtime_ms, 0, &out),
        "sync": sync(w.sync.as_ref(), &spec.percentile_list)?,
        "job_runtime": runtime_ms,
        "usr_cpu": cpu_pct(&w.cpu, true, w.runtime_s),
        "sys_cpu": cpu_pct(&w.cpu, false, w.runtime_s),
        "iodepth_level": depth_shares(&w.queue_depths.in_flight, &["1", "2", "4", "8", "16", "32", ">=64"]),
        "iodepth_submit": depth_shares(&w.queue_depths.per_submit, &BATCH_KEYS),
        "iodepth_complete": depth_shares(&w.queue_depths.per_reap, &BATCH_KEYS),
        "ctx": w.cpu.context_switches,
        "majf": w.cpu.major_faults,
        "minf": w.cpu.minor_faults,
        "latency_ns": buckets(&all, 1),
        "latency_us": buckets(&all, 1_000),
        "latency_ms": ms_buckets(&all),
    });
    // fio counts zone resets in zonemode=zbd alone, and says so then.
    if let Some(resets) = &w.zone_resets {
        job["zone_resets"] = json!(resets.count);
    }
    Ok(job)
}

/// A tree run of fio's file-operation jobs as fio reports them: one job
/// per thread, its operations of the phase fio times counted as I/Os of
/// the job's direction, with no bytes (fio's file engines move none).
/// A tree run of fathom's own has no fio form.
fn tree_jobs(
    prefix: &str,
    group: usize,
    t: &crate::result::tree::TreeResult,
    plus: bool,
) -> anyhow::Result<Vec<Value>> {
    let Some(fio) = &t.spec.fio else {
        return Ok(Vec::new());
    };
    let Some(phase) = t.phase(fio.timed) else {
        return Ok(Vec::new());
    };
    let engine = match fio.timed {
        crate::spec::tree::TreePhase::Mkdir => "dircreate",
        crate::spec::tree::TreePhase::Dirstat => "dirstat",
        crate::spec::tree::TreePhase::Rmdir => "dirdelete",
        crate::spec::tree::TreePhase::Stat => "filestat",
        crate::spec::tree::TreePhase::Delete => "filedelete",
        _ => "filecreate",
    };
    let out = Shape {
        plus,
        percentiles: &[],
    };
    let mut jobs = Vec::new();
    for (name, thread) in fio.jobs.iter().zip(&phase.threads) {
        let h = LatencyHistogram::decode(&thread.histogram).map_err(anyhow::Error::msg)?;
        let runtime_ms = (thread.elapsed_s * 1000.0).round() as u64;
        // fio's JSON counts the engine's I/Os of no data, `bs` each over
        // each file's size, apart from its latency samples (one an
        // operation).
        let bytes = thread.ops * fio.bytes_each;
        let d = DirectionResult {
            ios: thread.ops,
            bytes,
            bw_bytes: crate::measure::per_second(bytes, thread.elapsed_s),
            lat_ns: thread.lat_ns,
            histogram: thread.histogram.clone(),
            ..DirectionResult::default()
        };
        let fake_ios = bytes / fio.bs;
        let none = DirectionResult::default();
        let empty = LatencyHistogram::new();
        let mut done = direction(&d, &h, runtime_ms, 0, &out);
        done["total_ios"] = json!(fake_ios);
        done["iops"] = json!(crate::measure::per_second(fake_ios, thread.elapsed_s));
        let (read, write) = match fio.writes {
            true => (direction(&none, &empty, 0, 0, &out), done),
            false => (done, direction(&none, &empty, 0, 0, &out)),
        };
        jobs.push(json!({
            "jobname": format!("{prefix}{name}"),
            "groupid": group,
            "job_start": job_start(t.started_unix_s),
            "error": u8::from(t.failure.is_some()),
            "eta": 0,
            "elapsed": thread.elapsed_s.ceil() as u64,
            "job options": { "name": name, "ioengine": engine, "directory": t.spec.dir },
            "read": read,
            "write": write,
            "trim": direction(&none, &empty, 0, 0, &out),
            "sync": sync(None, &[])?,
            "job_runtime": runtime_ms,
            "usr_cpu": 0.0,
            "sys_cpu": 0.0,
            "latency_ns": buckets(&h, 1),
            "latency_us": buckets(&h, 1_000),
            "latency_ms": ms_buckets(&h),
        }));
    }
    Ok(jobs)
}

/// fio's `prios` of a direction with `cmdprio`: the completion latency of
/// each priority's I/Os, when two priorities did I/O (as fio prints them).
fn prios(
    spec: &crate::spec::WorkloadSpec,
    d: &DirectionResult,
    out: &Shape,
) -> anyhow::Result<Option<Value>> {
    let Some(cmdprio) = spec.cmdprio.as_ref().filter(|_| d.by_priority.len() >= 2) else {
        return Ok(None);
    };
    let entries: anyhow::Result<Vec<Value>> = d
        .by_priority
        .iter()
        .map(|p| {
            let (class, level) = match (p.cmdprio, spec.ioprio) {
                (true, _) => (cmdprio.priority.class.number(), cmdprio.priority.level),
                (false, Some(ioprio)) => (ioprio.class.number(), ioprio.level),
                // fio's "none": the I/O takes the worker's.
                (false, None) => (0, 0),
            };
            let h = LatencyHistogram::decode(&p.histogram).map_err(anyhow::Error::msg)?;
            Ok(json!({
                "prioclass": class,
                "prio": level,
                "clat_ns": latency(&p.lat_ns, p.ios, Some((&h, out.percentiles))),
            }))
        })
        .collect();
    Ok(Some(Value::Array(entries?)))
}

/// A writing job with verify: fio reads every block back after writing
/// and counts those reads as the job's (its `read` figures are the verify
/// phase's). fathom's read-back after the run is counted the same way:
/// blocks checked, their bytes, the time it took. It times the phase, not
/// each read, so the latencies stay empty.
fn verify_reads(read: &mut Value, w: &WorkloadResult) {
    let reports = w
        .targets
        .iter()
        .filter_map(|t| t.verify.as_ref())
        .filter(|v| v.mode == "after-write");
    let (blocks, seconds) = reports.fold((0u64, 0.0f64), |(b, s), v| (b + v.checked, s + v.read_s));
    if blocks == 0 || seconds <= 0.0 {
        return;
    }
    let bytes = blocks * w.spec.bs;
    read["io_bytes"] = json!(bytes);
    read["io_kbytes"] = json!(bytes / 1024);
    read["total_ios"] = json!(blocks);
    read["runtime"] = json!((seconds * 1000.0).round() as u64);
    read["bw_bytes"] = json!((bytes as f64 / seconds).round() as u64);
    read["bw"] = json!((bytes as f64 / seconds / 1024.0).round() as u64);
    read["iops"] = json!(blocks as f64 / seconds);
}

/// fio's keys for the I/Os one submission or one reap carried.
const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// Counts per bucket as fio writes them: percent of all, under its keys.
fn depth_shares(counts: &[u64; 7], keys: &[&str]) -> Value {
    let total: u64 = counts.iter().sum();
    keys.iter()
        .zip(counts)
        .map(|(k, &n)| {
            let pct = if total == 0 {
                0.0
            } else {
                n as f64 * 100.0 / total as f64
            };
            (k.to_string(), json!(pct))
        })
        .collect::<Map<String, Value>>()
        .into()
}

/// fio gives CPU time as a percentage of the job's runtime.
fn cpu_pct(cpu: &CpuUsage, user: bool, runtime_s: f64) -> f64 {
    let s = if user { cpu.user_s } else { cpu.sys_s };
    if runtime_s > 0.0 {
        s * 100.0 / runtime_s
    } else {
        0.0
    }
}

/// A direction's histogram; empty for a direction that did nothing.
fn decoded(d: &DirectionResult) -> anyhow::Result<LatencyHistogram> {
    if d.ios == 0 {
        return Ok(LatencyHistogram::new());
    }
    LatencyHistogram::decode(&d.histogram).map_err(anyhow::Error::msg)
}

/// `d` in fio's form; `h` is its decoded histogram.
/// What the job asked of fio's output: json+ bins, its percentile list.
struct Shape<'a> {
    plus: bool,
    /// fio's `percentile_list`; empty: fio's default list.
    percentiles: &'a [f64],
}

fn direction(
    d: &DirectionResult,
    h: &LatencyHistogram,
    runtime_ms: u64,
    short_ios: u64,
    out: &Shape,
) -> Value {
    let (plus, percentiles) = (out.plus, out.percentiles);
    let lat = latency(&d.lat_ns, d.ios, None);
    let mut clat = latency(&d.lat_ns, d.ios, Some((h, percentiles)));
    let slat = slat(d);
    // Tools built on fio's JSON add slat and clat to get lat: clat's mean
    // is lat's less slat's (exact; fathom times each I/O once, from its
    // submission, so clat's percentiles stay those of the whole latency).
    if slat["N"].as_u64().is_some_and(|n| n > 0)
        && let Some(s) = slat["mean"].as_f64()
    {
        clat["mean"] = json!((d.lat_ns.mean - s).max(0.0));
    }
    // As fio: a direction without I/O has no bins.
    if plus && h.count() > 0 {
        clat["bins"] = bins(h);
    }
    // Per-second samples give fio's bandwidth and IOPS spread.
    let iops: Vec<f64> = d.intervals.iter().map(|i| i.iops).collect();
    let bw: Vec<f64> = d.intervals.iter().map(|i| i.bw_bytes / 1024.0).collect();
    let (bw_min, bw_max, bw_mean, bw_dev) = spread(&bw);
    let (iops_min, iops_max, iops_mean, iops_dev) = spread(&iops);
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": d.bw_bytes.round() as u64,
        "bw": (d.bw_bytes / 1024.0).round() as u64,
        "iops": d.iops,
        "runtime": if d.ios > 0 { runtime_ms } else { 0 },
        "total_ios": d.ios,
        "short_ios": short_ios,
        "drop_ios": 0,
        "slat_ns": slat,
        "clat_ns": clat,
        "lat_ns": lat,
        "bw_min": bw_min.round() as u64,
        "bw_max": bw_max.round() as u64,
        "bw_agg": if d.ios > 0 { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": bw.len(),
        "iops_min": iops_min.round() as u64,
        "iops_max": iops_max.round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": iops.len(),
    })
}

/// fio's histogram layout (`FIO_IO_U_PLAT_BITS` and friends in stat.h):
/// values below 128 ns have a bin each, above that every power of two is
/// cut into 64 bins; 29 groups in all.
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
const PLAT_NR: u64 = 29 * PLAT_VAL;

/// The bin of `ns`, as fio's `plat_val_to_idx`.
fn plat_index(ns: u64) -> u64 {
    let msb = 63 - ns.max(1).leading_zeros();
    if msb <= PLAT_BITS {
        return ns;
    }
    let error_bits = msb - PLAT_BITS;
    let base = u64::from(error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (ns >> error_bits);
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio keys bin `index` by: the middle of its range, as fio's
/// `plat_idx_to_val`.
fn plat_value(index: u64) -> u64 {
    if index < PLAT_VAL << 1 {
        return index;
    }
    let error_bits = (index >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + u64::from(PLAT_BITS));
    let k = index % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// The histogram as fio's json+ `bins`: {"value in ns": count}, bins with
/// no I/O left out.
fn bins(h: &LatencyHistogram) -> Value {
    let mut counts: std::collections::BTreeMap<u64, u64> = Default::default();
    for (ns, count) in h.recorded() {
        *counts.entry(plat_index(ns)).or_default() += count;
    }
    Value::Object(
        counts
            .into_iter()
            .map(|(index, count)| (plat_value(index).to_string(), json!(count)))
            .collect(),
    )
}

/// Smallest, largest, mean and standard deviation (n - 1, as fio) of
/// per-second samples; zeros without samples.
fn spread(samples: &[f64]) -> (f64, f64, f64, f64) {
    if samples.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let var = if samples.len() > 1 {
        samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max, mean, var.sqrt())
}

/// fio's latency object: min, max, mean, stddev, N, and with a histogram
/// the percentiles, keyed "99.000000".
fn latency(s: &LatencySummary, n: u64, h: Option<(&LatencyHistogram, &[f64])>) -> Value {
    let mut out = json!({
        "min": s.min,
        "max": s.max,
        "mean": s.mean,
        "stddev": s.stddev,
        "N": n,
    });
    if let Some((h, list)) = h.filter(|(h, _)| h.count() > 0) {
        let list = if list.is_empty() {
            &PERCENTILES[..]
        } else {
            list
        };
        let p: Map<String, Value> = list
            .iter()
            .map(|p| (format!("{p:.6}"), json!(h.value_at_percentile(*p))))
            .collect();
        out["percentile"] = Value::Object(p);
    }
    out
}

/// fio's `slat_ns`: fathom's submission time for an engine that submits
/// as it queues; for the others, empty (N = 0), as fio writes it for its
/// synchronous engines.
fn slat(d: &DirectionResult) -> Value {
    let Some(h) = d
        .slat_histogram
        .as_deref()
        .and_then(|h| LatencyHistogram::decode(h).ok())
    else {
        return latency(&LatencySummary::default(), 0, None);
    };
    latency(&h.summary(), h.count(), None)
}

fn sync(s: Option<&SyncResult>, percentiles: &[f64]) -> anyhow::Result<Value> {
    let Some(s) = s else {
        return Ok(json!({
            "total_ios": 0,
            "lat_ns": latency(&LatencySummary::default(), 0, None),
        }));
    };
    let h = LatencyHistogram::decode(&s.histogram).map_err(anyhow::Error::msg)?;
    Ok(json!({
        "total_ios": s.count,
        "lat_ns": latency(&s.lat_ns, s.count, Some((&h, percentiles))),
    }))
}

/// Percent of I/Os in each of fio's buckets: above the previous bound, up
/// to this one, with bounds in units of `unit_ns`. The µs and ms tables
/// start where the one before ends (1,000 of its unit); the ns table at 0.
fn buckets(h: &LatencyHistogram, unit_ns: u64) -> Value {
    let mut out = Map::new();
    let mut below = u64::from(unit_ns > 1);
    for bound in BUCKETS {
        let share = share_between(h, below * unit_ns, bound * unit_ns);
        out.insert(bound.to_string(), json!(share));
        below = bound;
    }
    Value::Object(out)
}

fn ms_buckets(h: &LatencyHistogram) -> Value {
    let Value::Object(mut out) = buckets(h, 1_000_000) else {
        unreachable!("buckets are an object")
    };
    out.insert(
        "2000".into(),
        json!(share_between(h, 1_000_000_000, 2_000_000_000)),
    );
    out.insert(">=2000".into(), json!(h.share_above(2_000_000_000) * 100.0));
    Value::Object(out)
}

fn share_between(h: &LatencyHistogram, above_ns: u64, up_to_ns: u64) -> f64 {
    if h.count() == 0 {
        return 0.0;
    }
    let lower = if above_ns == 0 {
        1.0
    } else {
        h.share_above(above_ns)
    };
    ((lower - h.share_above(up_to_ns)) * 100.0).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_fios() {
        // Values from fio's own tables: below 128 one bin per ns, then 64
        // bins per power of two keyed by their middle.
        assert_eq!((plat_index(100), plat_value(100)), (100, 100));
        assert_eq!(plat_index(128), 128);
        assert_eq!(plat_index(129), 128);
        assert_eq!(plat_value(128), 129);
        assert_eq!(plat_index(1_000_000), 954);
        for ns in [200u64, 5_000, 1_000_000, 123_456_789] {
            let v = plat_value(plat_index(ns));
            assert!(v.abs_diff(ns) * 64 <= ns, "{ns} -> {v}");
        }
        assert_eq!(plat_index(u64::MAX), PLAT_NR - 1);
    }
}
