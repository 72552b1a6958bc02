//! Turning what was collected into results: per stream and target, a
//! replay's own figures, flushes, what verify read back.

use super::collect::{Progress, TargetAccumulator};
use super::{Stream, test_handshake};
use crate::measure::cpu::CpuTime;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::{DIRECTIONS, DirectionSample};
use crate::measure::per_second;
use crate::result::TemperatureSample;
use crate::result::{
    CpuUsage, DirectionPair, DirectionResult, Interval, SyncResult, TargetResult, WorkloadResult,
};
use crate::run::target::PreparedTarget;
use crate::spec::{VerifyMode, WorkloadSpec};
use crate::util::stop::StopFlag;
use crate::util::verify::{self};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// What was measured of the group as a whole.
pub(super) struct Measured {
    pub(super) start: Instant,
    pub(super) start_wall: std::time::SystemTime,
    pub(super) cpu: CpuTime,
    pub(super) disks: Vec<crate::result::DiskUsage>,
    pub(super) devices: Vec<crate::measure::drive::DeviceReport>,
    pub(super) temperature: Vec<TemperatureSample>,
    pub(super) interrupted: bool,
}

/// One result per stream from its targets' accumulators (in stream order)
/// and its merged seconds.
pub(super) fn stream_results(
    streams: &[Stream],
    progress: Progress,
    m: Measured,
) -> Vec<WorkloadResult> {
    // CPU time is the process's: with several streams, each reports the
    // group's, per I/O of the whole group.
    let group_ios: u64 = progress
        .accumulators
        .iter()
        .map(|a| a.totals.iter().map(|d| d.ios).sum::<u64>())
        .sum();
    let began: Vec<Option<Instant>> = (0..streams.len())
        .map(|s| {
            let of_stream = progress.accumulators.iter().filter(|a| a.stream == s);
            of_stream.filter_map(|a| a.began).min()
        })
        .collect();
    let mut results = Vec::with_capacity(streams.len());
    let mut accumulators = progress.accumulators.into_iter().peekable();
    for ((s, stream), series) in streams.iter().enumerate().zip(progress.totals) {
        let spec = stream.spec;
        // A stream that started late (--start-delay, --wait-for) measures
        // from its own start.
        let began = began[s].unwrap_or(m.start);
        let measure_start = began + Duration::from_secs_f64(spec.ramp_s);
        let mut sums = StreamSums::default();
        let mut target_results = Vec::with_capacity(stream.targets.len());
        while let Some(acc) = accumulators.next_if(|a| a.stream == s) {
            let runtime = acc.end.map_or(0.0, |e| {
                e.saturating_duration_since(measure_start).as_secs_f64()
            });
            sums.add(&acc, runtime);
            let target = &stream.targets[acc.target];
            target_results.push(target_result(spec, target, acc, runtime));
        }
        let StreamSums {
            total,
            sync,
            zone_resets,
            queue_depths,
            runtime_s,
            written,
            late_ios,
            worst_lag_ns,
            time,
        } = sums;
        let issue = issue_timing(&total, &time);
        let [read_iv, write_iv, trim_iv] = series.finish();
        let [read, write, trim] = total;
        let total = DirectionPair {
            read: direction_result(read, runtime_s, read_iv),
            write: direction_result(write, runtime_s, write_iv),
            trim: direction_result(trim, runtime_s, trim_iv),
        };
        let issued = total.read.ios + total.write.ios + total.trim.ios + sync.count();
        results.push(WorkloadResult {
            spec: spec.clone(),
            cpu: CpuUsage {
                waited_for_cpu_share: time.waited_for_cpu_share(),
                ..CpuUsage::new(m.cpu, group_ios)
            },
            targets: target_results,
            total,
            runtime_s,
            interrupted: m.interrupted,
            warnings: Vec::new(),
            engine_tuning: None,
            issue,
            limited_by: None,
            repeats: None,
            replay: spec.replay.as_ref().map(|replay| {
                let mut r = replay_result(replay, stream.targets.len(), late_ios, worst_lag_ns);
                r.issued_ios = Some(issued);
                r
            }),
            queue_depths,
            disks: m.disks.clone(),
            devices: m.devices.clone(),
            temperature: m.temperature.clone(),
            started_unix_s: (m.start_wall + measure_start.saturating_duration_since(m.start))
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs_f64()),
            sync: sync_result(&sync, spec.flush_every(), runtime_s),
            zone_resets: zone_reset_result(&zone_resets, spec, runtime_s),
            // An engine that works on the target but moves no data
            // (falloc, ftruncate) wrote none of the buffers' bytes; the
            // null engine's are what a device would have been sent.
            data: (spec.engine.caps().moves_data || !spec.engine.caps().does_io)
                .then(|| crate::measure::reduction::measure(&written, spec.bs))
                .flatten()
                .map(|mut d| {
                    d.asked_compress = spec.content.asked_compression();
                    d.asked_dedupe = spec.content.asked_dedupe();
                    d
                }),
            steady_state: spec.steady_state.map(|criterion| {
                crate::measure::steady::SteadyStateResult {
                    criterion,
                    reached: progress.steady_at[s].is_some(),
                    at_s: progress.steady_at[s],
                }
            }),
        });
    }
    results
}

/// What a stream's targets add up to.
#[derive(Default)]
struct StreamSums {
    total: [DirectionSample; DIRECTIONS],
    sync: LatencyHistogram,
    zone_resets: LatencyHistogram,
    queue_depths: crate::measure::queue::QueueDepths,
    /// The longest of its targets' measured times.
    runtime_s: f64,
    written: Vec<u8>,
    late_ios: u64,
    worst_lag_ns: u64,
    time: crate::measure::issue::WorkerTime,
}

impl StreamSums {
    fn add(&mut self, acc: &TargetAccumulator, runtime_s: f64) {
        self.late_ios += acc.late_issues;
        self.worst_lag_ns = self.worst_lag_ns.max(acc.worst_lag_ns);
        self.runtime_s = self.runtime_s.max(runtime_s);
        for (sum, d) in self.total.iter_mut().zip(&acc.totals) {
            sum.add(d);
        }
        self.sync.add(&acc.sync);
        self.zone_resets.add(&acc.zone_resets);
        self.queue_depths.add(&acc.queue);
        self.written.extend_from_slice(&acc.written);
        self.time.add(&acc.time);
    }
}

/// How promptly the stream's I/Os went out (every direction's issue lag
/// merged) and where its workers' time went.
fn issue_timing(
    total: &[DirectionSample; DIRECTIONS],
    time: &crate::measure::issue::WorkerTime,
) -> Option<crate::measure::issue::IssueTiming> {
    let mut lag = LatencyHistogram::new();
    let mut latency = LatencyHistogram::new();
    for d in total {
        lag.add(&d.issue_lag);
        latency.add(&d.latency);
    }
    crate::measure::issue::IssueTiming::of(&lag, latency.summary().mean, time)
}

/// One target's result, of what its workers reported over `runtime` s.
fn target_result(
    spec: &WorkloadSpec,
    target: &PreparedTarget,
    acc: TargetAccumulator,
    runtime: f64,
) -> TargetResult {
    // A second's histogram is kept once, on the workload's total (what
    // `fathom check` resamples): on every target too, it would double
    // what a long run's result grows by each second.
    let [read_iv, write_iv, trim_iv] = acc.series.finish().map(|mut series| {
        for second in &mut series {
            second.histogram = None;
        }
        series
    });
    let [read, write, trim] = acc.totals;
    TargetResult {
        name: spec.target_label(acc.target).to_string(),
        facts: target.facts.clone(),
        offset: target.plan.offset,
        size: target.plan.size,
        runtime_s: runtime,
        errors: acc.errors,
        ended_early: acc.ended_early,
        verify: acc.verify,
        io: DirectionPair {
            read: direction_result(read, runtime, read_iv),
            write: direction_result(write, runtime, write_iv),
            trim: direction_result(trim, runtime, trim_iv),
        },
        sync: sync_result(&acc.sync, spec.flush_every(), runtime),
        zone_resets: zone_reset_result(&acc.zone_resets, spec, runtime),
        unfinished: (acc.unfinished.ios > 0).then_some(crate::result::UnfinishedIos {
            ios: acc.unfinished.ios,
            oldest_ns: acc.unfinished.oldest_ns,
        }),
    }
}

/// A replay's own figures: what it was to play, how late it issued.
pub(super) fn replay_result(
    replay: &crate::spec::replay::ReplaySpec,
    targets: usize,
    late_ios: u64,
    worst_lag_ns: u64,
) -> crate::result::replay::ReplayResult {
    use crate::result::replay::ReplayResult;
    let Some(trace) = &replay.loaded else {
        return ReplayResult::default();
    };
    let ios: u64 = (0..targets)
        .filter_map(|t| trace.device(replay.devices.get(t)?))
        .map(|d| trace.of_device(d).ios)
        .sum();
    let loops = replay.loops.max(1);
    let (original, original_seconds) = match trace.has_latencies() {
        true => crate::result::replay::original(trace, replay.speed),
        false => Default::default(),
    };
    ReplayResult {
        trace_ios: ios * u64::from(loops),
        issued_ios: None,
        trace_span_s: replay
            .speed
            .map_or(0.0, |s| trace.last_ns() as f64 / s / 1e9 * f64::from(loops)),
        late_ios,
        worst_lag_ns,
        original,
        original_seconds,
    }
}

/// The flushes of a target or workload run with `--fsync` or `--fdatasync`;
/// None without.
/// Flushes of a workload that makes them (`--fsync`, or a replayed trace's
/// sync points), even none.
pub(super) fn sync_result(
    h: &LatencyHistogram,
    fsync_every: u32,
    runtime_s: f64,
) -> Option<SyncResult> {
    (fsync_every > 0 || h.count() > 0).then(|| timed_operations(h, runtime_s))
}

/// How many of a timed operation (flush, zone reset) were made over
/// `runtime_s`, and how long each took.
fn timed_operations(h: &LatencyHistogram, runtime_s: f64) -> SyncResult {
    SyncResult {
        count: h.count(),
        rate: per_second(h.count(), runtime_s),
        lat_ns: h.summary(),
        histogram: h.encode(),
    }
}

/// The zone resets of a target or workload run with `--zonemode zbd`, even
/// none (fio counts them in that mode alone); None in any other.
fn zone_reset_result(
    h: &LatencyHistogram,
    spec: &WorkloadSpec,
    runtime_s: f64,
) -> Option<SyncResult> {
    spec.zoned.is_zbd().then(|| timed_operations(h, runtime_s))
}

/// The `--verify` pass after the workload: blocks this run wrote are checked
/// against the block map; with a read-only workload, every block of the
/// region is checked against its own header.
pub(super) fn read_back(
    spec: &WorkloadSpec,
    acc: &mut TargetAccumulator,
    target: &PreparedTarget,
    stop: &StopFlag,
) {
    let writes = spec.rw.writes(spec.rwmix_read);
    if writes && spec.verify == VerifyMode::Interleaved {
        // Interleaved checks already ran; blocks whose write failed are
        // reported as not checked.
        if let (Some(map), Some(report)) = (&acc.map, acc.verify.as_mut()) {
            report.uncertain = map.uncertain_blocks();
        }
        return;
    }
    if writes {
        test_handshake(stop);
    }
    let blocks = target.plan.size / spec.bs;
    let began = Instant::now();
    let result = target.open(spec.direct, false).and_then(|file| {
        if !spec.direct {
            // Read what the device holds, not what the page cache remembers.
            file.sync_all()?;
            // SAFETY: advisory call on an open descriptor.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
        let map = if writes { acc.map.as_deref() } else { None };
        Ok(verify::read_back(
            &file,
            target.plan.offset,
            spec.bs,
            blocks,
            map,
            stop,
        )?)
    });
    match result {
        Ok(mut report) => {
            report.read_s = began.elapsed().as_secs_f64();
            acc.verify = Some(report)
        }
        Err(e) => {
            acc.ended_early
                .get_or_insert_with(|| format!("verify read-back failed: {e:#}"));
        }
    }
}

pub(super) fn direction_result(
    sample: DirectionSample,
    runtime_s: f64,
    intervals: Vec<Interval>,
) -> DirectionResult {
    let histogram: &LatencyHistogram = &sample.latency;
    DirectionResult {
        ios: sample.ios,
        bytes: sample.bytes,
        iops: per_second(sample.ios, runtime_s),
        bw_bytes: per_second(sample.bytes, runtime_s),
        lat_ns: histogram.summary(),
        histogram: histogram.encode(),
        sched_lat_ns: (sample.scheduled.count() > 0).then(|| sample.scheduled.summary()),
        sched_histogram: (sample.scheduled.count() > 0).then(|| sample.scheduled.encode()),
        slat_ns: (sample.submission.count() > 0).then(|| sample.submission.summary()),
        slat_histogram: (sample.submission.count() > 0).then(|| sample.submission.encode()),
        unanswered: sample.unanswered,
        intervals,
        by_priority: sample
            .by_priority
            .iter()
            .flat_map(|both| both.iter().enumerate())
            .filter(|(_, h)| h.count() > 0)
            .map(|(own, h)| crate::result::PriorityLatency {
                cmdprio: own == 1,
                ios: h.count(),
                lat_ns: h.summary(),
                histogram: h.encode(),
            })
            .collect(),
    }
}
