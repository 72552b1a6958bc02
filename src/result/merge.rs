//! The two ways results combine, percentiles always from merged histograms,
//! never from averaging:
//! - [`sequential`]: runs one after another (a resumed sweep, a workload
//!   run again): counts and times add up, rates are over the summed time;
//! - [`concurrent`]: sources that ran at the same time (workers, targets,
//!   streams, hosts): counts and histograms add up, rates are over the common
//!   wall-clock span.

use super::{CpuUsage, WorkloadResult};
use super::{DirectionPair, DirectionResult, Document, Interval, SyncResult};
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
            // Runs of the same workload (the same resolved spec) merge.
            if let Some(w) = result.get::<WorkloadResult>()
                && let Some(existing) = out.workloads_mut().find(|o| o.spec == w.spec)
            {
                merge_workload(existing, w)?;
            } else {
                out.results.push(result);
            }
        }
    }
    Ok(out)
}

/// Directions measured at the same time, over `span_s` seconds of wall
/// clock from a common start: counts and histograms add up, and each second
/// of the intervals sums the parts' seconds. An interval's p99 is that of
/// the parts' seconds' histograms merged; where a part has none (an older
/// result), the largest of the parts' p99s: an upper bound.
pub fn concurrent(parts: &[&DirectionResult], span_s: f64) -> Result<DirectionResult, String> {
    let mut out = DirectionResult::default();
    let mut latency = LatencyHistogram::new();
    let mut scheduled: Option<LatencyHistogram> = None;
    let mut submission: Option<LatencyHistogram> = None;
    let mut by_priority: [Option<(u64, LatencyHistogram)>; 2] = [None, None];
    for part in parts {
        for p in &part.by_priority {
            let (ios, h) = by_priority[usize::from(p.cmdprio)]
                .get_or_insert_with(|| (0, LatencyHistogram::new()));
            *ios += p.ios;
            h.add(&LatencyHistogram::decode(&p.histogram)?);
        }
        out.ios += part.ios;
        out.bytes += part.bytes;
        out.unanswered += part.unanswered;
        latency.add(&LatencyHistogram::decode(&part.histogram)?);
        if let Some(s) = &part.sched_histogram {
            scheduled
                .get_or_insert_with(LatencyHistogram::new)
                .add(&LatencyHistogram::decode(s)?);
        }
        if let Some(s) = &part.slat_histogram {
            submission
                .get_or_insert_with(LatencyHistogram::new)
                .add(&LatencyHistogram::decode(s)?);
        }
    }
    out.intervals = concurrent_intervals(parts.iter().map(|p| p.intervals.as_slice()))?;
    out.iops = per_second(out.ios, span_s);
    out.bw_bytes = per_second(out.bytes, span_s);
    out.lat_ns = latency.summary();
    out.histogram = latency.encode();
    out.by_priority = by_priority
        .iter()
        .enumerate()
        .filter_map(|(own, p)| {
            let (ios, h) = p.as_ref()?;
            Some(crate::result::PriorityLatency {
                cmdprio: own == 1,
                ios: *ios,
                lat_ns: h.summary(),
                histogram: h.encode(),
            })
        })
        .collect();
    out.sched_lat_ns = scheduled.as_ref().map(|s| s.summary());
    out.sched_histogram = scheduled.as_ref().map(|s| s.encode());
    out.slat_ns = submission.as_ref().map(|s| s.summary());
    out.slat_histogram = submission.as_ref().map(|s| s.encode());
    Ok(out)
}

/// Concurrent parts' seconds as one series: second i of every part
/// added, its histograms merged exactly where every part kept one.
pub fn concurrent_intervals<'a>(
    parts: impl IntoIterator<Item = &'a [Interval]>,
) -> Result<Vec<Interval>, String> {
    let mut out: Vec<Interval> = Vec::new();
    let mut seconds_latency: Vec<Option<LatencyHistogram>> = Vec::new();
    for part in parts {
        for (i, second) in part.iter().enumerate() {
            if out.len() <= i {
                out.push(Interval {
                    t_s: second.t_s,
                    dur_s: second.dur_s,
                    ..Default::default()
                });
            }
            let sum = &mut out[i];
            let ios = sum.ios + second.ios;
            if ios > 0 {
                sum.mean_ns = (sum.mean_ns * sum.ios as f64 + second.mean_ns * second.ios as f64)
                    / ios as f64;
            }
            sum.ios += second.ios;
            sum.bytes += second.bytes;
            sum.dur_s = sum.dur_s.max(second.dur_s);
            sum.iops = per_second(sum.ios, sum.dur_s);
            sum.bw_bytes = per_second(sum.bytes, sum.dur_s);
            sum.p99_ns = sum.p99_ns.max(second.p99_ns);
            seconds_latency.resize_with(out.len(), || Some(LatencyHistogram::new()));
            // A second is merged exactly only when every part's has its
            // histogram.
            let merged = &mut seconds_latency[i];
            match (merged.as_mut(), &second.histogram) {
                (Some(h), Some(text)) => h.add(&LatencyHistogram::decode(text)?),
                (Some(_), None) if second.ios > 0 => *merged = None,
                _ => {}
            }
        }
    }
    for (second, h) in out.iter_mut().zip(seconds_latency) {
        if let Some(h) = h.filter(|h| h.count() > 0) {
            second.p99_ns = h.value_at_percentile(99.0);
            second.histogram = Some(h.encode());
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
                merge_sync(
                    &mut existing.zone_resets,
                    &t.zone_resets,
                    existing.runtime_s,
                )?;
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
    merge_sync(&mut into.zone_resets, &other.zone_resets, into.runtime_s)?;
    into.cpu = CpuUsage::added([&into.cpu, &other.cpu], into.total.ios());
    into.queue_depths.add(&other.queue_depths);
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
    if let (Some(a), Some(b)) = (&into.slat_histogram, &other.slat_histogram) {
        let s = merged(a, b)?;
        into.slat_ns = Some(s.summary());
        into.slat_histogram = Some(s.encode());
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

    use crate::result::test_support::direction;

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
