//! Per-second time series. Each worker sends one report per second of
//! measurement; a series merges the reports of one second from all of its
//! workers (histograms merged, never percentiles averaged) and keeps only the
//! summary, so memory stays flat however long the run.

use super::histogram::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Directions an I/O can go, and so the length of every per-direction
/// array: read, write and trim, indexed by `Direction as usize`.
pub const DIRECTIONS: usize = super::direction::Direction::ALL.len();

/// One second of a run (the last one may be shorter).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Interval {
    /// Start, in seconds since the start of measurement.
    pub t_s: f64,
    pub dur_s: f64,
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub p99_ns: u64,
    /// Mean latency of the interval; 0 in older results.
    #[serde(default)]
    pub mean_ns: f64,
    /// p99 of the interval's issue lag (from when an I/O could go to when
    /// it went); absent in older results and where nothing was issued.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lag_p99_ns: u64,
    /// The second's latency histogram, encoded as a direction's: what
    /// `fathom check` resamples for its percentiles' intervals. Absent in
    /// older results, fio's, and seconds without I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// Operations that failed in the interval (not in `ios`): an object
    /// store's requests answered with an error.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub errors: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Interval {
    /// A slice from `t_s` of `dur_s` seconds: its operations, bytes and
    /// failures (`counts`), its rates, and its latencies' p99, mean and
    /// histogram.
    pub fn of(
        t_s: f64,
        dur_s: f64,
        (ios, bytes, errors): (u64, u64, u64),
        latency: &LatencyHistogram,
    ) -> Interval {
        let dur = dur_s.max(1e-9);
        Interval {
            t_s,
            dur_s,
            ios,
            bytes,
            iops: ios as f64 / dur,
            bw_bytes: bytes as f64 / dur,
            p99_ns: latency.value_at_percentile(99.0),
            mean_ns: latency.summary().mean,
            lag_p99_ns: 0,
            histogram: (latency.count() > 0).then(|| latency.encode()),
            errors,
        }
    }
}

/// What one worker did in one direction during one interval.
#[derive(Clone, Debug, Default)]
pub struct DirectionSample {
    pub ios: u64,
    pub bytes: u64,
    pub latency: LatencyHistogram,
    /// Latency from when the I/O was due (rate-limited runs only).
    pub scheduled: LatencyHistogram,
    /// Submission latency (fio's slat): from when the I/O was handed to an
    /// engine that submits as it queues (io_uring) until the submission
    /// returned. Empty for engines that do their I/O in that call.
    pub submission: LatencyHistogram,
    /// Rated runs: I/Os that were due but had no answer at the deadline;
    /// `scheduled` holds them at their age then.
    pub unanswered: u64,
    /// Issue lag: from when each I/O could go (due on its schedule, and a
    /// slot free) to when it went.
    pub issue_lag: LatencyHistogram,
    /// I/Os that failed (not in `ios`).
    pub errors: u64,
    /// With `--cmdprio`: the latency of the I/Os issued at the worker's
    /// priority (0) and of those at their own (1), both also in `latency`.
    pub by_priority: Option<Box<[LatencyHistogram; 2]>>,
}

impl DirectionSample {
    pub fn add(&mut self, other: &DirectionSample) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.latency.add(&other.latency);
        self.scheduled.add(&other.scheduled);
        self.submission.add(&other.submission);
        self.unanswered += other.unanswered;
        self.issue_lag.add(&other.issue_lag);
        self.errors += other.errors;
        if let Some(theirs) = &other.by_priority {
            let ours = self.by_priority.get_or_insert_with(Default::default);
            ours[0].add(&theirs[0]);
            ours[1].add(&theirs[1]);
        }
    }

    /// Records a completion of `ns` at the worker's priority or the I/O's
    /// own (`prioritized`).
    pub fn record_by_priority(&mut self, ns: u64, prioritized: bool) {
        self.by_priority.get_or_insert_with(Default::default)[usize::from(prioritized)].record(ns);
    }
}

/// One worker's interval `index` (second `index` of measurement).
#[derive(Clone, Debug)]
pub struct IntervalReport {
    pub target: usize,
    pub index: u64,
    pub dur_s: f64,
    /// Indexed by `Direction as usize`.
    pub directions: [DirectionSample; DIRECTIONS],
}

#[derive(Default)]
struct Pending {
    reports: usize,
    dur_s: f64,
    directions: [DirectionSample; DIRECTIONS],
}

/// One second of a set of workers, merged, histograms kept.
#[derive(Clone, Debug)]
pub struct CompletedSecond {
    pub index: u64,
    pub dur_s: f64,
    pub directions: [DirectionSample; DIRECTIONS],
}

/// The merged series of a set of workers (one target, or all of them).
pub struct IntervalSeries {
    workers: usize,
    /// Keep every second's summary (false: only the latest, so a day-long
    /// run that reports elsewhere does not grow).
    keep_all: bool,
    /// When set, completed seconds with their histograms, until drained.
    samples: Option<Vec<CompletedSecond>>,
    /// Last interval index of each worker that has finished (None: finished
    /// before reporting any).
    finished: Vec<Option<u64>>,
    pending: BTreeMap<u64, Pending>,
    complete: [Vec<Interval>; DIRECTIONS],
}

impl IntervalSeries {
    pub fn new(workers: usize) -> Self {
        IntervalSeries {
            workers,
            keep_all: true,
            samples: None,
            finished: Vec::new(),
            pending: BTreeMap::new(),
            complete: Default::default(),
        }
    }

    /// Keeps only the latest summary instead of the whole series.
    pub fn latest_only(mut self) -> Self {
        self.keep_all = false;
        self
    }

    /// Also keeps each completed second with its histograms until
    /// `drain_completed` takes them.
    pub fn with_completed(mut self) -> Self {
        self.samples = Some(Vec::new());
        self
    }

    /// Seconds completed (all workers merged) since the last call.
    pub fn drain_completed(&mut self) -> Vec<CompletedSecond> {
        self.samples
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Completes every second still waiting (workers that stopped early or
    /// were interrupted).
    pub fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for (index, p) in pending {
            self.push(index, p);
        }
    }

    pub fn add(&mut self, report: &IntervalReport) {
        let pending = self.pending.entry(report.index).or_default();
        pending.reports += 1;
        pending.dur_s = pending.dur_s.max(report.dur_s);
        for (sum, sample) in pending.directions.iter_mut().zip(&report.directions) {
            sum.add(sample);
        }
        self.complete_ready();
    }

    pub fn worker_finished(&mut self, last_index: Option<u64>) {
        self.finished.push(last_index);
        self.complete_ready();
    }

    /// The most recent complete interval in each direction, for the live line.
    pub fn latest(&self) -> [Option<&Interval>; DIRECTIONS] {
        std::array::from_fn(|d| self.complete[d].last())
    }

    /// Whole seconds completed so far.
    pub fn completed(&self) -> usize {
        self.complete[0].len()
    }

    /// Per completed second: IOPS of all directions, the highest p99, or
    /// the mean latency of all the second's I/Os.
    pub fn values(&self, metric: super::steady::SteadyMetric) -> Vec<f64> {
        (0..self.complete[0].len())
            .filter(|&i| self.complete[0][i].dur_s >= 0.99)
            .map(|i| {
                let seconds = self.complete.iter().map(|series| &series[i]);
                match metric {
                    super::steady::SteadyMetric::Iops => seconds.map(|s| s.iops).sum(),
                    super::steady::SteadyMetric::Lat => {
                        seconds.map(|s| s.p99_ns).max().unwrap_or(0) as f64
                    }
                    super::steady::SteadyMetric::MeanLat => {
                        let (sum, ios) = seconds.fold((0.0, 0u64), |(sum, ios), s| {
                            (sum + s.mean_ns * s.ios as f64, ios + s.ios)
                        });
                        if ios == 0 { 0.0 } else { sum / ios as f64 }
                    }
                }
            })
            .collect()
    }

    /// Finishes every interval still waiting (workers that stopped early or
    /// were interrupted) and returns the read, write and trim series.
    pub fn finish(mut self) -> [Vec<Interval>; DIRECTIONS] {
        self.flush();
        self.complete
    }

    fn expected_reports(&self, index: u64) -> usize {
        let gone = self
            .finished
            .iter()
            .filter(|last| last.is_none_or(|l| l < index))
            .count();
        self.workers.saturating_sub(gone)
    }

    fn complete_ready(&mut self) {
        while let Some((&index, pending)) = self.pending.first_key_value() {
            if pending.reports < self.expected_reports(index) {
                break;
            }
            let pending = self.pending.remove(&index).expect("first key exists");
            self.push(index, pending);
        }
    }

    fn push(&mut self, index: u64, pending: Pending) {
        for (series, sample) in self.complete.iter_mut().zip(&pending.directions) {
            if !self.keep_all {
                series.clear();
            }
            let counts = (sample.ios, sample.bytes, sample.errors);
            series.push(Interval {
                lag_p99_ns: sample.issue_lag.value_at_percentile(99.0),
                ..Interval::of(index as f64, pending.dur_s, counts, &sample.latency)
            });
        }
        if let Some(samples) = &mut self.samples {
            samples.push(CompletedSecond {
                index,
                dur_s: pending.dur_s,
                directions: pending.directions,
            });
        }
    }
}

/// Calls `tick(n)` at the end of each whole second n (from 1) since
/// `started`, until `done`: the clock of a run's per-second sampler
/// thread, which wakes at least every 20 ms to notice the end.
pub fn each_whole_second(
    started: std::time::Instant,
    done: &std::sync::atomic::AtomicBool,
    mut tick: impl FnMut(u64),
) {
    use std::time::{Duration, Instant};
    let mut second = 1u64;
    while !done.load(std::sync::atomic::Ordering::Relaxed) {
        let due = started + Duration::from_secs(second);
        let now = Instant::now();
        if now < due {
            std::thread::sleep((due - now).min(Duration::from_millis(20)));
            continue;
        }
        tick(second);
        second += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(index: u64, ios: u64, lat: u64) -> IntervalReport {
        let mut read = DirectionSample {
            ios,
            bytes: ios * 4096,
            ..Default::default()
        };
        for _ in 0..ios {
            read.latency.record(lat);
        }
        IntervalReport {
            target: 0,
            index,
            dur_s: 1.0,
            directions: [read, DirectionSample::default(), DirectionSample::default()],
        }
    }

    #[test]
    fn a_part_second_reports_its_rates_per_second() {
        let mut s = IntervalSeries::new(1);
        let mut half = report(0, 100, 1000);
        half.dur_s = 0.5;
        s.add(&half);
        s.flush();
        let read = s.latest()[0].unwrap();
        assert_eq!((read.ios, read.dur_s), (100, 0.5));
        assert_eq!(read.iops, 200.0);
        assert_eq!(read.bw_bytes, 200.0 * 4096.0);
    }

    #[test]
    fn the_steady_state_iops_of_a_mix_adds_reads_and_writes() {
        let mut s = IntervalSeries::new(1);
        let mut mixed = report(0, 100, 1000);
        mixed.directions[1] = DirectionSample {
            ios: 30,
            bytes: 30 * 4096,
            ..Default::default()
        };
        mixed.directions[1].latency.record(5_000_000);
        s.add(&mixed);
        assert_eq!(s.values(super::super::steady::SteadyMetric::Iops), [130.0]);
        let p99 = s.values(super::super::steady::SteadyMetric::Lat)[0];
        assert!(p99 >= 4_990_000.0, "the higher p99 of the two: {p99}");
        // The mean of all 130 I/Os, each direction's mean weighed by its count.
        let mean = s.values(super::super::steady::SteadyMetric::MeanLat)[0];
        let expected = (100.0 * 1000.0 + 30.0 * 5_000_000.0) / 130.0;
        assert!((mean / expected - 1.0).abs() < 0.01, "{mean} vs {expected}");
    }

    #[test]
    fn waits_for_every_worker_then_merges() {
        let mut s = IntervalSeries::new(2);
        s.add(&report(0, 100, 1000));
        assert!(s.latest()[0].is_none());
        s.add(&report(0, 50, 100_000));
        let read = s.latest()[0].unwrap();
        assert_eq!(read.ios, 150);
        assert_eq!(read.iops, 150.0);
        // A third of the I/Os were slow: p99 comes from the merged histogram.
        assert!(read.p99_ns >= 99_000);
    }

    #[test]
    fn finished_workers_are_not_waited_for() {
        let mut s = IntervalSeries::new(2);
        s.add(&report(0, 10, 1000));
        s.add(&report(0, 10, 1000));
        s.worker_finished(Some(0));
        s.add(&report(1, 10, 1000));
        assert_eq!(s.latest()[0].unwrap().t_s, 1.0);
        let [read, write, _] = s.finish();
        assert_eq!(read.len(), 2);
        assert_eq!(write.len(), 2);
        assert_eq!(write[0].ios, 0);
    }

    #[test]
    fn finish_flushes_pending() {
        let mut s = IntervalSeries::new(3);
        s.add(&report(0, 10, 1000));
        let [read, ..] = s.finish();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].ios, 10);
    }
}
