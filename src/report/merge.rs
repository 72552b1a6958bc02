//! Several result files as one document. Runs of the same workload (the same
//! resolved spec) in different files are merged: counts and times add up and
//! percentiles come from the merged histograms, never from averaging.

use crate::measure::histogram::LatencyHistogram;
use crate::measure::per_second;
use crate::result::{DirectionPair, DirectionResult, Document, SyncResult, WorkloadResult};

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

/// Flushes of two runs: counts add up, latency from the merged histograms,
/// the rate over `runtime`, the runs' time together.
fn merge_sync(
    into: &mut Option<SyncResult>,
    other: &Option<SyncResult>,
    runtime: f64,
) -> Result<(), String> {
    if let (Some(into), Some(other)) = (into.as_mut(), other) {
        let h = merged(&into.histogram, &other.histogram)?;
        into.count += other.count;
        into.rate = per_second(into.count, runtime);
        into.lat_ns = h.summary();
        into.histogram = h.encode();
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
