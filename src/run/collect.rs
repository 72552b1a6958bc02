//! Collecting what the workers report while a run goes: per-target
//! accumulators, the progress of the run, workers that stop answering.

use super::{MeasureClock, RunOptions, Stream};
use crate::engine::worker::{self, WorkerEvent, WorkerTotals};
use crate::measure::errors::IoErrors;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::{
    CompletedSecond, DIRECTIONS, DirectionSample, IntervalReport, IntervalSeries,
};
use crate::run::target::{self};
use crate::spec::WorkloadSpec;
use crate::util::stop::StopFlag;
use crate::util::verify::{BlockMap, VerifyReport};
use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub(super) struct TargetAccumulator {
    /// Index of the stream this target belongs to.
    pub(super) stream: usize,
    /// Index of the target within its stream.
    pub(super) target: usize,
    pub(super) series: IntervalSeries,
    pub(super) totals: [DirectionSample; DIRECTIONS],
    pub(super) sync: LatencyHistogram,
    pub(super) zone_resets: LatencyHistogram,
    pub(super) end: Option<Instant>,
    /// When the first of its workers started its I/O.
    pub(super) began: Option<Instant>,
    pub(super) errors: IoErrors,
    pub(super) ended_early: Option<String>,
    pub(super) verify: Option<VerifyReport>,
    /// Workers of this target still running.
    pub(super) running: usize,
    /// A descriptor kept to notice the target vanishing mid-run.
    pub(super) watch: File,
    pub(super) map: Option<Arc<BlockMap>>,
    pub(super) queue: crate::measure::queue::QueueDepths,
    /// The first blocks the workers wrote, as written.
    pub(super) written: Vec<u8>,
    /// A replay: I/Os issued more than 1 ms late, the longest lag.
    pub(super) late_issues: u64,
    pub(super) worst_lag_ns: u64,
    /// I/Os its workers abandoned in flight.
    pub(super) unfinished: worker::Unfinished,
    /// What the workers' `auto` waits measured and chose.
    pub(super) wait_choices: Vec<crate::spec::WaitChoice>,
    /// Where the workers' time went.
    pub(super) time: crate::measure::issue::WorkerTime,
}

impl TargetAccumulator {
    /// The accumulator of stream `s`'s target `t` (`at`), before any
    /// report: `watch` is a descriptor of the target, `map` what verify
    /// checks against.
    pub(super) fn new(
        at: (usize, usize),
        spec: &WorkloadSpec,
        keep_intervals: bool,
        watch: File,
        map: Option<Arc<BlockMap>>,
    ) -> Self {
        let mut series = IntervalSeries::new(spec.numjobs as usize);
        if !keep_intervals {
            series = series.latest_only();
        }
        TargetAccumulator {
            stream: at.0,
            target: at.1,
            series,
            totals: Default::default(),
            sync: LatencyHistogram::new(),
            zone_resets: LatencyHistogram::new(),
            end: None,
            began: None,
            errors: IoErrors::default(),
            ended_early: None,
            verify: None,
            running: spec.numjobs as usize,
            watch,
            map,
            queue: Default::default(),
            written: Vec::new(),
            late_issues: 0,
            worst_lag_ns: 0,
            unfinished: crate::engine::worker::Unfinished::default(),
            wait_choices: Vec::new(),
            time: Default::default(),
        }
    }
}

/// What the coordinating thread knows while the workers run: each target's
/// figures, each stream's seconds, and which workers are still at it.
pub(super) struct Progress<'a> {
    pub(super) streams: &'a [Stream<'a>],
    pub(super) accumulators: Vec<TargetAccumulator>,
    /// One per accumulator: set, that target's workers stop.
    pub(super) halts: Vec<Arc<AtomicBool>>,
    /// Each stream's seconds, all its workers merged.
    pub(super) totals: Vec<IntervalSeries>,
    /// When each stream reached its steady state, in seconds of measuring.
    pub(super) steady_at: Vec<Option<f64>>,
    pub(super) failures: Vec<String>,
    pub(super) finished: usize,
    /// Per worker: what it shows while it may be stuck, whether it has
    /// finished, its last totals (engines that block send them each
    /// second), and whether the run went on without it.
    pub(super) watched: Vec<Watched>,
    pub(super) done: Vec<bool>,
    pub(super) snapshots: Vec<Option<(Option<u64>, Box<WorkerTotals>)>>,
    pub(super) abandoned: Vec<bool>,
    /// When the workers started, and when the last of them is due to end.
    pub(super) origin: Option<Instant>,
    pub(super) deadline: Option<Instant>,
    /// When a signal was first seen.
    pub(super) signalled: Option<Instant>,
    /// Looks at the targets' paths on a thread of its own: a stat on a
    /// stuck file system would otherwise hold the coordinator.
    pub(super) watcher: Option<TargetWatcher>,
}

/// Whether each target's path still names the file the run opened, looked
/// at every 200 ms by a thread that nobody waits for.
pub(super) struct TargetWatcher {
    pub(super) gone: Arc<Vec<AtomicBool>>,
    pub(super) done: Arc<AtomicBool>,
}

impl TargetWatcher {
    pub(super) fn start(targets: Vec<(std::path::PathBuf, (u64, u64, u64))>) -> TargetWatcher {
        let gone: Arc<Vec<AtomicBool>> =
            Arc::new(targets.iter().map(|_| AtomicBool::new(false)).collect());
        let done = Arc::new(AtomicBool::new(false));
        let (g, d) = (gone.clone(), done.clone());
        let _ = std::thread::Builder::new()
            .name("fathom-watch".into())
            .spawn(move || {
                while !d.load(Ordering::Relaxed) {
                    for (i, (path, id)) in targets.iter().enumerate() {
                        let now = std::fs::metadata(path).map(|m| target::identity(&m));
                        if now.ok() != Some(*id) {
                            g[i].store(true, Ordering::Relaxed);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
        TargetWatcher { gone, done }
    }

    pub(super) fn gone(&self, i: usize) -> bool {
        self.gone[i].load(Ordering::Relaxed)
    }
}

impl Drop for TargetWatcher {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

impl<'a> Progress<'a> {
    pub(super) fn new(
        streams: &'a [Stream<'a>],
        accumulators: Vec<TargetAccumulator>,
        stream_workers: &[usize],
        options: RunOptions,
    ) -> Self {
        let totals = stream_workers
            .iter()
            .map(|&w| {
                let series = IntervalSeries::new(w).with_completed();
                if options.keep_intervals {
                    series
                } else {
                    series.latest_only()
                }
            })
            .collect();
        Progress {
            streams,
            halts: (0..accumulators.len())
                .map(|_| Arc::new(AtomicBool::new(false)))
                .collect(),
            accumulators,
            totals,
            steady_at: vec![None; streams.len()],
            failures: Vec::new(),
            finished: 0,
            watched: Vec::new(),
            done: Vec::new(),
            snapshots: Vec::new(),
            abandoned: Vec::new(),
            origin: None,
            deadline: None,
            signalled: None,
            watcher: None,
        }
    }

    /// The workers to watch, and when they started: from then on a worker
    /// stuck in a call past the grace is left behind.
    pub(super) fn watch(&mut self, watched: Vec<Watched>, origin: Instant) {
        let targets = self
            .accumulators
            .iter()
            .map(|acc| {
                let path = self.streams[acc.stream].targets[acc.target]
                    .plan
                    .path
                    .clone();
                let id = acc
                    .watch
                    .metadata()
                    .map_or((0, 0, 0), |m| target::identity(&m));
                (path, id)
            })
            .collect();
        self.watcher = Some(TargetWatcher::start(targets));
        let n = watched.len();
        self.watched = watched;
        self.done = vec![false; n];
        self.snapshots = (0..n).map(|_| None).collect();
        self.abandoned = vec![false; n];
        self.origin = Some(origin);
        // A stream that waits for another ends when that one's end allows:
        // no deadline is known.
        let ends: Option<Vec<f64>> = self
            .streams
            .iter()
            .map(|s| {
                let starts = s.spec.wait_for.is_empty();
                s.spec
                    .runtime_s
                    .filter(|_| starts)
                    .map(|r| r + s.spec.ramp_s + s.spec.start_delay_s)
            })
            .collect();
        self.deadline =
            ends.map(|e| origin + Duration::from_secs_f64(e.into_iter().fold(0.0, f64::max)));
    }

    /// Whether the run goes on without the workers still out: a signal was
    /// seen and the workers' own grace (and half a second more) has passed,
    /// or the same after the last deadline. A worker waits out its grace by
    /// itself where it can; this is for one stuck inside a call.
    pub(super) fn past_grace(&self, now: Instant) -> bool {
        let margin = Duration::from_millis(500);
        let signalled = self
            .signalled
            .is_some_and(|at| now >= at + worker::GRACE_AFTER_SIGNAL + margin);
        let overdue = self
            .deadline
            .is_some_and(|d| now >= d + worker::GRACE_AT_END + margin * 2);
        signalled || overdue
    }

    /// Ends the workers still out with what they last sent, each call they
    /// are stuck in counted as an unfinished I/O at its age.
    pub(super) fn leave_stuck_workers(
        &mut self,
        second_done: &mut dyn FnMut(usize, &CompletedSecond),
    ) {
        let now = Instant::now();
        let origin = self.origin.unwrap_or(now);
        for w in 0..self.watched.len() {
            if self.done[w] {
                continue;
            }
            // Only a worker inside a call for longer than the grace is left:
            // one that is merely slow to be scheduled is waited for.
            let pulse = &self.watched[w].pulse;
            let Some((since, dir)) = pulse.blocked(origin) else {
                continue;
            };
            let stuck_for = now.saturating_duration_since(since);
            if stuck_for < worker::GRACE_AFTER_SIGNAL {
                continue;
            }
            let (last_interval, mut totals) = self.snapshots[w]
                .take()
                .unwrap_or_else(|| (None, Box::default()));
            let had_snapshot = last_interval.is_some() || totals.end.is_some();
            let age = stuck_for.as_nanos() as u64;
            for _ in 0..pulse.in_flight() {
                totals.unfinished.add(age);
            }
            totals.directions[dir as usize].latency.record(age);
            let target = self.watched[w].target;
            let acc = &mut self.accumulators[target];
            acc.ended_early.get_or_insert_with(|| {
                format!(
                    "a worker was stuck in a call to the target for {} and was left behind; {}",
                    crate::util::units::format_duration(stuck_for.as_secs_f64()),
                    if had_snapshot {
                        "its figures after its last whole second are missing"
                    } else {
                        "its figures are missing from the totals (the per-second figures have them)"
                    }
                )
            });
            self.abandoned[w] = true;
            self.done[w] = true;
            self.on_finished(target, last_interval, Ok(totals), second_done);
        }
    }

    /// Takes the workers' events until every worker has finished (or all
    /// have gone), ending targets and streams as they must. `interval` is
    /// shown each worker's second, with its stream, after it is added.
    pub(super) fn collect(
        &mut self,
        rx: &mpsc::Receiver<WorkerEvent>,
        clock: &mut MeasureClock,
        stop: &StopFlag,
        interval: &mut dyn FnMut(&Self, usize, &IntervalReport),
        second_done: &mut dyn FnMut(usize, &CompletedSecond),
    ) {
        let workers: usize = self.accumulators.iter().map(|a| a.running).sum();
        while self.finished < workers {
            let event = rx.recv_timeout(clock.next_wait());
            clock.tick();
            if stop.is_set() {
                self.halt_all();
                self.signalled.get_or_insert_with(Instant::now);
            }
            self.check_targets_are_still_there();
            match event {
                Ok(WorkerEvent::Interval(report)) => {
                    let s = self.on_interval(&report, second_done);
                    interval(self, s, &report);
                }
                Ok(WorkerEvent::Snapshot {
                    worker,
                    last_interval,
                    totals,
                }) => {
                    if let Some(slot) = self.snapshots.get_mut(worker) {
                        *slot = Some((last_interval, totals));
                    }
                }
                Ok(WorkerEvent::Finished {
                    worker,
                    target,
                    last_interval,
                    outcome,
                }) => {
                    if self.abandoned.get(worker).copied().unwrap_or(false) {
                        continue;
                    }
                    if let Some(done) = self.done.get_mut(worker) {
                        *done = true;
                    }
                    self.snapshots.get_mut(worker).map(Option::take);
                    self.on_finished(target, last_interval, outcome, second_done)
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if self.finished < workers && self.past_grace(Instant::now()) {
                self.leave_stuck_workers(second_done);
            }
        }
    }

    pub(super) fn halt_all(&self) {
        for halt in &self.halts {
            halt.store(true, Ordering::Relaxed);
        }
    }

    /// A target removed or replaced mid-run ends that target (as the
    /// watcher thread found it).
    pub(super) fn check_targets_are_still_there(&mut self) {
        let Some(watcher) = &self.watcher else { return };
        for (i, (acc, halt)) in self.accumulators.iter_mut().zip(&self.halts).enumerate() {
            let target = &self.streams[acc.stream].targets[acc.target];
            if acc.running > 0
                && acc.ended_early.is_none()
                && !target.plan.absent
                && watcher.gone(i)
            {
                acc.ended_early = Some(format!(
                    "{} was removed or replaced during the run",
                    target.plan.path.display()
                ));
                halt.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Adds a worker's second; returns its stream. A stream that reaches
    /// its steady state stops.
    pub(super) fn on_interval(
        &mut self,
        report: &IntervalReport,
        second_done: &mut dyn FnMut(usize, &CompletedSecond),
    ) -> usize {
        let s = self.accumulators[report.target].stream;
        self.accumulators[report.target].series.add(report);
        self.totals[s].add(report);
        for second in self.totals[s].drain_completed() {
            second_done(s, &second);
        }
        if let Some(criterion) = self.streams[s].spec.steady_state
            && self.steady_at[s].is_none()
            && criterion.reached(&self.totals[s].values(criterion.metric))
        {
            self.steady_at[s] = Some(self.totals[s].completed() as f64);
            for (acc, halt) in self.accumulators.iter().zip(&self.halts) {
                if acc.stream == s {
                    halt.store(true, Ordering::Relaxed);
                }
            }
        }
        s
    }

    /// A worker ended: its totals join its target's, or its failure stops
    /// every worker.
    pub(super) fn on_finished(
        &mut self,
        target: usize,
        last_interval: Option<u64>,
        outcome: Result<Box<WorkerTotals>, String>,
        second_done: &mut dyn FnMut(usize, &CompletedSecond),
    ) {
        self.finished += 1;
        let acc = &mut self.accumulators[target];
        acc.running -= 1;
        let stream = acc.stream;
        if self.streams[stream].spec.exitall
            && self
                .accumulators
                .iter()
                .all(|a| a.stream != stream || a.running == 0)
        {
            // fio's exitall: this stream is done, and so is its workload.
            self.halt_all();
        }
        let acc = &mut self.accumulators[target];
        acc.series.worker_finished(last_interval);
        self.totals[acc.stream].worker_finished(last_interval);
        for second in self.totals[acc.stream].drain_completed() {
            second_done(acc.stream, &second);
        }
        match outcome {
            Ok(worker_totals) => merge_totals(acc, *worker_totals),
            Err(e) => {
                let name = &self.streams[acc.stream].targets[acc.target].plan.name;
                self.failures.push(format!("target {name}: {e}"));
                self.halt_all();
            }
        }
    }
}

pub(super) fn merge_totals(acc: &mut TargetAccumulator, totals: WorkerTotals) {
    for (sum, d) in acc.totals.iter_mut().zip(&totals.directions) {
        sum.add(d);
    }
    acc.sync.add(&totals.sync);
    acc.zone_resets.add(&totals.zone_resets);
    acc.queue.add(&totals.queue);
    acc.end = acc.end.max(totals.end);
    acc.began = acc.began.into_iter().chain(totals.began).min();
    acc.errors.merge(&totals.errors);
    acc.written.extend_from_slice(&totals.written_sample);
    acc.late_issues += totals.late_issues;
    acc.worst_lag_ns = acc.worst_lag_ns.max(totals.worst_lag_ns);
    acc.unfinished.merge(&totals.unfinished);
    acc.wait_choices.extend(totals.wait_choices);
    acc.time.add(&totals.time);
    if acc.ended_early.is_none() {
        acc.ended_early = totals.ended_by_error;
    }
    if let Some(report) = &totals.verify {
        acc.verify
            .get_or_insert_with(|| VerifyReport::new(&report.mode))
            .merge(report);
    }
}

/// What the coordinator knows of one worker beside its events.
pub(super) struct Watched {
    pub(super) target: usize,
    pub(super) pulse: Arc<crate::engine::worker::WorkerPulse>,
}
