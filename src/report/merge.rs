//! Several result files as one document. Runs of the same workload (the same
//! resolved spec) in different files are merged: counts and times add up and
//! percentiles come from the merged histograms, never from averaging.

use crate::measure::histogram::LatencyHistogram;
use crate::result::{DirectionPair, DirectionResult, Document, WorkloadResult};

/// Merges `documents` into the first one's frame (host, version).
pub fn merge(mut documents: Vec<Document>) -> Result<Document, String> {
    let mut out = documents.remove(0);
    for doc in documents {
        out.interrupted |= doc.interrupted;
        for w in doc.workloads {
            match out.workloads.iter_mut().find(|o| o.spec == w.spec) {
                Some(existing) => merge_workload(existing, &w)?,
                None => out.workloads.push(w),
            }
        }
    }
    Ok(out)
}

fn merge_workload(into: &mut WorkloadResult, other: &WorkloadResult) -> Result<(), String> {
    for t in &other.targets {
        match into.targets.iter_mut().find(|o| o.name == t.name) {
            Some(existing) => {
                merge_pair(&mut existing.io, &t.io, existing.runtime_s, t.runtime_s)?;
                existing.runtime_s += t.runtime_s;
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
    let mut h = LatencyHistogram::decode(&into.histogram)?;
    h.add(&LatencyHistogram::decode(&other.histogram)?);
    let runtime = runtime_a + runtime_b;
    into.ios += other.ios;
    into.bytes += other.bytes;
    (into.iops, into.bw_bytes) = if runtime > 0.0 {
        (into.ios as f64 / runtime, into.bytes as f64 / runtime)
    } else {
        (0.0, 0.0)
    };
    into.lat_ns = h.summary();
    into.histogram = h.encode();
    if let (Some(a), Some(b)) = (&into.sched_histogram, &other.sched_histogram) {
        let mut s = LatencyHistogram::decode(a)?;
        s.add(&LatencyHistogram::decode(b)?);
        into.sched_lat_ns = Some(s.summary());
        into.sched_histogram = Some(s.encode());
    }
    // The second run's seconds follow the first's.
    into.intervals.extend(other.intervals.iter().map(|i| {
        let mut i = i.clone();
        i.t_s += runtime_a;
        i
    }));
    Ok(())
}
