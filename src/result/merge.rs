//! The two ways results combine, percentiles always from merged histograms,
//! never from averaging:
//! - [`sequential`]: runs one after another (a resumed sweep, a workload
//!   run again): counts and times add up, rates are over the summed time;
//! - [`concurrent`]: sources that ran at the same time (workers, targets,
//!   streams, hosts): counts and histograms add up, rates are over the common
//!   wall-clock span.

use super::cluster::{Cluster, Launcher, Rank};
use super::streams::StreamsResult;
use super::{CpuUsage, DiskUsage, WorkloadResult};
use super::{DirectionPair, DirectionResult, Document, Interval, RunResult, SyncResult};
use crate::measure::histogram::LatencyHistogram;
use crate::measure::per_second;

/// Documents run one after another, as one: runs of the same workload (the
/// same resolved spec) are merged; other results follow in order. The frame
/// (host, version, label) is the first document's.
pub fn sequential(mut documents: Vec<Document>) -> Result<Document, String> {
    if documents.is_empty() {
        return Err("no documents".into());
    }
    let mut out = documents.remove(0);
    for doc in documents {
        out.interrupted |= doc.interrupted;
        for result in doc.results {
            match result {
                RunResult::Workload(w) => {
                    if let Some(existing) = out.workloads_mut().find(|o| o.spec == w.spec) {
                        merge_workload(existing, &w)?;
                    } else {
                        out.results.push(RunResult::Workload(w));
                    }
                }
                other @ (RunResult::Meta(_) | RunResult::Certify(_) | RunResult::Streams(_)) => {
                    out.results.push(other)
                }
            }
        }
    }
    Ok(out)
}

/// Directions measured at the same time, over `span_s` seconds of wall
/// clock from a common start: counts and histograms add up, and each second
/// of the intervals sums the parts' seconds. An interval's p99 is the largest
/// of the parts' (their histograms per second are not kept): an upper bound.
pub fn concurrent(parts: &[&DirectionResult], span_s: f64) -> Result<DirectionResult, String> {
    let mut out = DirectionResult::default();
    let mut latency = LatencyHistogram::new();
    let mut scheduled: Option<LatencyHistogram> = None;
    for part in parts {
        out.ios += part.ios;
        out.bytes += part.bytes;
        out.unanswered += part.unanswered;
        latency.add(&LatencyHistogram::decode(&part.histogram)?);
        if let Some(s) = &part.sched_histogram {
            scheduled
                .get_or_insert_with(LatencyHistogram::new)
                .add(&LatencyHistogram::decode(s)?);
        }
        for (i, second) in part.intervals.iter().enumerate() {
            if out.intervals.len() <= i {
                out.intervals.push(Interval {
                    t_s: second.t_s,
                    dur_s: second.dur_s,
                    ..Default::default()
                });
            }
            let sum = &mut out.intervals[i];
            sum.ios += second.ios;
            sum.bytes += second.bytes;
            sum.dur_s = sum.dur_s.max(second.dur_s);
            sum.iops = per_second(sum.ios, sum.dur_s);
            sum.bw_bytes = per_second(sum.bytes, sum.dur_s);
            sum.p99_ns = sum.p99_ns.max(second.p99_ns);
        }
    }
    out.iops = per_second(out.ios, span_s);
    out.bw_bytes = per_second(out.bytes, span_s);
    out.lat_ns = latency.summary();
    out.histogram = latency.encode();
    out.sched_lat_ns = scheduled.as_ref().map(|s| s.summary());
    out.sched_histogram = scheduled.as_ref().map(|s| s.encode());
    Ok(out)
}

fn merge_workload(into: &mut WorkloadResult, other: &WorkloadResult) -> Result<(), String> {
    for t in &other.targets {
        match into.targets.iter_mut().find(|o| o.name == t.name) {
            Some(existing) => {
                merge_pair(&mut existing.io, &t.io, existing.runtime_s, t.runtime_s)?;
                existing.runtime_s += t.runtime_s;
                merge_sync(&mut existing.sync, &t.sync, existing.runtime_s)?;
                existing.errors.merge(&t.errors);
            }
            None => into.targets.push(t.clone()),
        }
    }
    merge_pair(
        &mut into.total,
        &other.total,
        into.runtime_s,
        other.runtime_s,
    )?;
    into.runtime_s += other.runtime_s;
    merge_sync(&mut into.sync, &other.sync, into.runtime_s)?;
    into.cpu.user_s += other.cpu.user_s;
    into.cpu.sys_s += other.cpu.sys_s;
    let ios = into.total.ios();
    into.cpu.per_io_us = if ios == 0 {
        0.0
    } else {
        (into.cpu.user_s + into.cpu.sys_s) * 1e6 / ios as f64
    };
    into.interrupted |= other.interrupted;
    Ok(())
}

fn merge_pair(
    into: &mut DirectionPair,
    other: &DirectionPair,
    runtime_a: f64,
    runtime_b: f64,
) -> Result<(), String> {
    merge_direction(&mut into.read, &other.read, runtime_a, runtime_b)?;
    merge_direction(&mut into.write, &other.write, runtime_a, runtime_b)
}

fn merge_direction(
    into: &mut DirectionResult,
    other: &DirectionResult,
    runtime_a: f64,
    runtime_b: f64,
) -> Result<(), String> {
    let h = merged(&into.histogram, &other.histogram)?;
    let runtime = runtime_a + runtime_b;
    into.ios += other.ios;
    into.bytes += other.bytes;
    into.iops = per_second(into.ios, runtime);
    into.bw_bytes = per_second(into.bytes, runtime);
    into.lat_ns = h.summary();
    into.histogram = h.encode();
    if let (Some(a), Some(b)) = (&into.sched_histogram, &other.sched_histogram) {
        let s = merged(a, b)?;
        into.sched_lat_ns = Some(s.summary());
        into.sched_histogram = Some(s.encode());
    }
    into.unanswered += other.unanswered;
    // The second run's seconds follow the first's.
    into.intervals.extend(other.intervals.iter().map(|i| {
        let mut i = i.clone();
        i.t_s += runtime_a;
        i
    }));
    Ok(())
}

/// Documents of ranks (hosts) that ran the same plan at the same time, as
/// one cluster document: each result is the concurrent merge of the ranks'
/// (counts and histograms added, rates over the longest rank's time, each
/// target named after its rank and host), and `cluster` keeps each rank's
/// own results. Ranks are numbered in the order given.
pub fn concurrent_documents(ranks: Vec<Document>, launcher: Launcher) -> Result<Document, String> {
    let Some(first) = ranks.first() else {
        return Err("no documents".into());
    };
    if let Some(i) = ranks.iter().position(|d| d.cluster.is_some()) {
        return Err(format!("document {} is already a cluster's merge", i + 1));
    }
    let results = first.results.len();
    if let Some(i) = ranks.iter().position(|d| d.results.len() != results) {
        return Err(format!(
            "document {} has {} results, document 1 has {results}: the ranks did not run the same plan",
            i + 1,
            ranks[i].results.len()
        ));
    }
    let names: Vec<String> = ranks
        .iter()
        .enumerate()
        .map(|(r, d)| format!("rank{r}@{}", d.host.hostname))
        .collect();
    let mut merged = Vec::with_capacity(results);
    for k in 0..results {
        let parts: Vec<&RunResult> = ranks.iter().map(|d| &d.results[k]).collect();
        merged.push(concurrent_result(k, &parts, &names)?);
    }
    let starts = |k: usize| -> Vec<f64> {
        ranks
            .iter()
            .filter_map(|d| d.results.get(k).and_then(started_and_runtime))
            .map(|(start, _)| start)
            .collect()
    };
    let ends: Vec<f64> = ranks
        .iter()
        .filter_map(|d| d.results.last().and_then(started_and_runtime))
        .map(|(start, runtime)| start + runtime)
        .collect();
    let spread = |v: &[f64]| {
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            - v.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let first_starts = starts(0);
    let mut hosts: Vec<String> = Vec::new();
    for d in &ranks {
        if !hosts.contains(&d.host.hostname) {
            hosts.push(d.host.hostname.clone());
        }
    }
    let mut out = Document {
        fathom_version: first.fathom_version.clone(),
        schema: first.schema,
        started_at: first.started_at.clone(),
        host: first.host.clone(),
        label: first.label.clone(),
        interrupted: ranks.iter().any(|d| d.interrupted),
        results: merged,
        cluster: None,
    };
    out.cluster = Some(Cluster {
        ranks: ranks.len() as u32,
        hosts,
        launcher,
        mpi_library: None,
        start_spread_s: if first_starts.len() > 1 {
            spread(&first_starts)
        } else {
            0.0
        },
        end_spread_s: if ends.len() > 1 { spread(&ends) } else { 0.0 },
        per_rank: ranks
            .into_iter()
            .enumerate()
            .map(|(r, d)| Rank {
                rank: r as u32,
                host: d.host.hostname,
                started_at: d.started_at,
                interrupted: d.interrupted,
                results: d.results,
            })
            .collect(),
    });
    Ok(out)
}

/// When a result started measuring (seconds since the epoch) and for how
/// long it ran; None for results that do not say.
fn started_and_runtime(r: &RunResult) -> Option<(f64, f64)> {
    match r {
        RunResult::Workload(w) => Some((w.started_unix_s?, w.runtime_s)),
        RunResult::Streams(s) => Some((s.streams.first()?.started_unix_s?, s.runtime_s)),
        RunResult::Meta(_) | RunResult::Certify(_) => None,
    }
}

/// Result `k` of every rank, merged.
fn concurrent_result(
    k: usize,
    parts: &[&RunResult],
    ranks: &[String],
) -> Result<RunResult, String> {
    let differ = || format!("result {}: the ranks ran different workloads", k + 1);
    match parts[0] {
        RunResult::Workload(_) => {
            let ws = parts
                .iter()
                .map(|p| match p {
                    RunResult::Workload(w) => Ok(w),
                    _ => Err(differ()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(RunResult::Workload(
                concurrent_workloads(&ws, ranks).map_err(|e| format!("result {}: {e}", k + 1))?,
            ))
        }
        RunResult::Streams(first) => {
            let ss = parts
                .iter()
                .map(|p| match p {
                    RunResult::Streams(s) if s.streams.len() == first.streams.len() => Ok(s),
                    _ => Err(differ()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut streams = Vec::with_capacity(first.streams.len());
            for i in 0..first.streams.len() {
                let ws: Vec<&WorkloadResult> = ss.iter().map(|s| &s.streams[i]).collect();
                streams.push(concurrent_workloads(&ws, ranks)?);
            }
            let mut merged = StreamsResult::new(first.spec.clone(), streams)?;
            merged.disks = ranks_disks(ss.iter().map(|s| s.disks.as_slice()), ranks);
            Ok(RunResult::Streams(merged))
        }
        RunResult::Meta(_) | RunResult::Certify(_) => Err(format!(
            "result {}: metadata and certification results of several hosts are not merged (run them per host)",
            k + 1
        )),
    }
}

/// One workload as every rank ran it, at the same time.
fn concurrent_workloads(
    parts: &[&WorkloadResult],
    ranks: &[String],
) -> Result<WorkloadResult, String> {
    let first = parts[0];
    for p in parts {
        if p.spec.name != first.spec.name
            || p.spec.rw != first.spec.rw
            || p.spec.bs != first.spec.bs
        {
            return Err(format!(
                "workload {} on one rank, {} on another",
                first.spec.label(),
                p.spec.label()
            ));
        }
    }
    let span_s = parts.iter().map(|p| p.runtime_s).fold(0.0, f64::max);
    let side = |pick: fn(&DirectionPair) -> &DirectionResult| -> Result<DirectionResult, String> {
        concurrent(
            &parts.iter().map(|p| pick(&p.total)).collect::<Vec<_>>(),
            span_s,
        )
    };
    let total = DirectionPair {
        read: side(|d| &d.read)?,
        write: side(|d| &d.write)?,
    };
    let syncs: Vec<&SyncResult> = parts.iter().filter_map(|p| p.sync.as_ref()).collect();
    let mut cpu = CpuUsage::default();
    for p in parts {
        cpu.user_s += p.cpu.user_s;
        cpu.sys_s += p.cpu.sys_s;
    }
    let ios = total.ios();
    cpu.per_io_us = if ios == 0 {
        0.0
    } else {
        (cpu.user_s + cpu.sys_s) * 1e6 / ios as f64
    };
    let targets = parts
        .iter()
        .zip(ranks)
        .flat_map(|(p, rank)| {
            p.targets.iter().map(move |t| {
                let mut t = t.clone();
                t.name = format!("{rank}:{}", t.name);
                t
            })
        })
        .collect();
    let warnings = parts
        .iter()
        .zip(ranks)
        .flat_map(|(p, rank)| {
            p.warnings.iter().map(move |w| {
                let mut w = w.clone();
                w.target = format!("{rank}:{}", w.target);
                w
            })
        })
        .collect();
    Ok(WorkloadResult {
        spec: first.spec.clone(),
        targets,
        total,
        cpu,
        runtime_s: span_s,
        interrupted: parts.iter().any(|p| p.interrupted),
        warnings,
        sync: if syncs.is_empty() {
            None
        } else {
            Some(concurrent_sync(&syncs, span_s)?)
        },
        steady_state: None,
        disks: ranks_disks(parts.iter().map(|p| p.disks.as_slice()), ranks),
        started_unix_s: parts
            .iter()
            .filter_map(|p| p.started_unix_s)
            .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s)))),
    })
}

/// Each rank's disks, named after the rank; ranks on one host see the same
/// counters, so a host's disks are taken from its first rank only.
fn ranks_disks<'a>(
    parts: impl Iterator<Item = &'a [DiskUsage]>,
    ranks: &[String],
) -> Vec<DiskUsage> {
    let mut seen_hosts: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for (disks, rank) in parts.zip(ranks) {
        let host = rank.split_once('@').map_or(rank.as_str(), |(_, h)| h);
        if seen_hosts.contains(&host) {
            continue;
        }
        seen_hosts.push(host);
        out.extend(disks.iter().map(|d| DiskUsage {
            name: format!("{host}:{}", d.name),
            ..d.clone()
        }));
    }
    out
}

/// Flushes made at the same time, over `span_s` seconds.
pub fn concurrent_sync(parts: &[&SyncResult], span_s: f64) -> Result<SyncResult, String> {
    let mut h = LatencyHistogram::new();
    let mut count = 0;
    for part in parts {
        h.add(&LatencyHistogram::decode(&part.histogram)?);
        count += part.count;
    }
    Ok(SyncResult {
        count,
        rate: per_second(count, span_s),
        lat_ns: h.summary(),
        histogram: h.encode(),
    })
}

/// Flushes of two runs: counts add up, latency from the merged histograms,
/// the rate over `runtime`, the runs' time together.
fn merge_sync(
    into: &mut Option<SyncResult>,
    other: &Option<SyncResult>,
    runtime: f64,
) -> Result<(), String> {
    // Over their time together, two runs' flushes add up as if side by side.
    if let (Some(a), Some(b)) = (into.as_ref(), other) {
        *into = Some(concurrent_sync(&[a, b], runtime)?);
    }
    Ok(())
}

/// The histogram of two encoded histograms added together.
fn merged(a: &str, b: &str) -> Result<LatencyHistogram, String> {
    let mut h = LatencyHistogram::decode(a)?;
    h.add(&LatencyHistogram::decode(b)?);
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direction(values: &[u64], runtime_s: f64, seconds: &[u64]) -> DirectionResult {
        let mut h = LatencyHistogram::new();
        values.iter().for_each(|&v| h.record(v));
        DirectionResult {
            ios: values.len() as u64,
            bytes: values.len() as u64 * 4096,
            iops: per_second(values.len() as u64, runtime_s),
            bw_bytes: per_second(values.len() as u64 * 4096, runtime_s),
            lat_ns: h.summary(),
            histogram: h.encode(),
            intervals: seconds
                .iter()
                .enumerate()
                .map(|(i, &ios)| Interval {
                    t_s: i as f64,
                    dur_s: 1.0,
                    ios,
                    iops: ios as f64,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn sequential_runs_add_their_times_and_concurrent_ones_share_theirs() {
        // Two 2-second runs of 4 I/Os each, one fast and one slow.
        let fast = direction(&[1_000; 4], 2.0, &[2, 2]);
        let slow = direction(&[9_000_000; 4], 2.0, &[2, 2]);

        let mut one_after_other = fast.clone();
        merge_direction(&mut one_after_other, &slow, 2.0, 2.0).unwrap();
        assert_eq!((one_after_other.ios, one_after_other.iops), (8, 2.0));
        assert_eq!(one_after_other.intervals.len(), 4);
        assert_eq!(one_after_other.intervals[2].t_s, 2.0);

        let side_by_side = concurrent(&[&fast, &slow], 2.0).unwrap();
        assert_eq!((side_by_side.ios, side_by_side.iops), (8, 4.0));
        assert_eq!(side_by_side.intervals.len(), 2);
        assert_eq!(side_by_side.intervals[1].ios, 4);
        // Percentiles of the merged histogram: half the I/Os were slow.
        assert!(side_by_side.lat_ns.p50 < 2_000, "{:?}", side_by_side.lat_ns);
        assert!(
            side_by_side.lat_ns.p99 >= 8_990_000,
            "{:?}",
            side_by_side.lat_ns
        );
        assert_eq!(one_after_other.lat_ns, side_by_side.lat_ns);
    }

    fn workload(read: DirectionResult, runtime_s: f64) -> WorkloadResult {
        WorkloadResult {
            spec: crate::spec::WorkloadSpec::defaults(vec!["/tmp/x".into()]),
            targets: Vec::new(),
            total: DirectionPair {
                read,
                write: DirectionResult {
                    histogram: LatencyHistogram::new().encode(),
                    ..Default::default()
                },
            },
            cpu: CpuUsage::default(),
            runtime_s,
            interrupted: false,
            warnings: Vec::new(),
            sync: None,
            steady_state: None,
            disks: Vec::new(),
            started_unix_s: Some(1000.0 + runtime_s),
        }
    }

    fn document(w: WorkloadResult, host: &str) -> Document {
        let mut d = Document::new(crate::measure::facts::host_facts(), None);
        d.host.hostname = host.into();
        d.results.push(RunResult::Workload(w));
        d
    }

    #[test]
    fn hosts_side_by_side_merge_histograms_not_percentiles() {
        // Three hosts: two fast, one slow; the slow one's p99 is not diluted
        // into a mean of p99s, and counts add up.
        let fast = || direction(&[1_000; 98], 2.0, &[49, 49]);
        let slow = direction(&[9_000_000; 98], 2.5, &[49, 49]);
        let docs = vec![
            document(workload(fast(), 2.0), "a"),
            document(workload(fast(), 2.0), "b"),
            document(workload(slow, 2.5), "c"),
        ];
        let merged = concurrent_documents(docs, Launcher::Merge).unwrap();
        let RunResult::Workload(w) = &merged.results[0] else {
            panic!("a workload")
        };
        assert_eq!(w.total.read.ios, 294);
        assert_eq!(w.runtime_s, 2.5);
        assert!((w.total.read.iops - 294.0 / 2.5).abs() < 1e-9);
        // A third of the I/Os were slow: p50 is fast, p99 slow.
        assert!(w.total.read.lat_ns.p50 < 2_000);
        assert!(w.total.read.lat_ns.p99 >= 8_990_000);
        assert_eq!(w.total.read.intervals[1].ios, 147);
        let c = merged.cluster.as_ref().unwrap();
        assert_eq!((c.ranks, c.hosts.len()), (3, 3));
        assert!((c.start_spread_s - 0.5).abs() < 1e-9);
        assert!((c.end_spread_s - 1.0).abs() < 1e-9);
        assert_eq!(c.per_rank[2].host, "c");

        // Ranks that ran different plans are not merged.
        let one = document(workload(direction(&[1_000], 1.0, &[1]), 1.0), "a");
        let mut two = one.clone();
        two.results.push(two.results[0].clone());
        let e = concurrent_documents(vec![one.clone(), two], Launcher::Merge).unwrap_err();
        assert!(e.contains("did not run the same plan"), "{e}");
        let merged = concurrent_documents(vec![one.clone(), one], Launcher::Merge).unwrap();
        let e = concurrent_documents(vec![merged], Launcher::Merge).unwrap_err();
        assert!(e.contains("already a cluster"), "{e}");
    }

    fn encoded(values: &[u64]) -> String {
        let mut h = LatencyHistogram::new();
        values.iter().for_each(|&v| h.record(v));
        h.encode()
    }

    #[test]
    fn flushes_and_unanswered_ios_of_two_runs_add_up() {
        let sync = |count: u64, values: &[u64]| {
            Some(SyncResult {
                count,
                rate: 0.0,
                lat_ns: Default::default(),
                histogram: encoded(values),
            })
        };
        let mut a = sync(2, &[1_000, 2_000]);
        merge_sync(&mut a, &sync(1, &[9_000_000]), 3.0).unwrap();
        let a = a.unwrap();
        assert_eq!((a.count, a.rate), (3, 1.0));
        assert!(a.lat_ns.max >= 8_990_000, "{:?}", a.lat_ns);

        let direction = |unanswered: u64| DirectionResult {
            histogram: encoded(&[1_000]),
            unanswered,
            ..Default::default()
        };
        let mut d = direction(5);
        merge_direction(&mut d, &direction(7), 1.0, 1.0).unwrap();
        assert_eq!(d.unanswered, 12);
    }
}
