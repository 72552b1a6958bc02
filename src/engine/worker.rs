//! The job loop of one worker thread. It keeps `depth` I/Os in flight through
//! whichever engine it is given, timestamps each batch at submission and each
//! I/O at completion, and sends one interval report per second.

use super::buffers::Buffers;
use super::pattern::OffsetPattern;
use super::{Completion, Direction, Engine, IoRequest};
use crate::measure::errors::IoErrors;
use crate::measure::intervals::{DirectionSample, IntervalReport};
use crate::stop::StopFlag;
use crate::verify::header::BlockHeader;
use crate::verify::{BlockMap, VerifyReport};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

const INTERVAL: Duration = Duration::from_secs(1);
/// Longest a worker sleeps in the kernel before it looks at the clock and the
/// stop flags again, so a stalled device cannot hold up the end of a run.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// Offsets a verifying writer tries before waiting for a block to be free.
const CLAIM_TRIES: usize = 16;

pub struct WorkerConfig {
    pub target: usize,
    pub seed: u64,
    pub engine: crate::spec::EngineKind,
    pub pattern: OffsetPattern,
    pub bs: u32,
    pub depth: u32,
    /// Share of reads, 0 to 100.
    pub read_percent: u8,
    /// Size bound: stop after issuing this many bytes (ramp excluded).
    pub budget_bytes: Option<u64>,
    pub ramp: Duration,
    /// Time bound, measured from the end of the ramp.
    pub runtime: Option<Duration>,
    /// fsync after every N writes; 0 = never.
    pub fsync_every: u32,
    pub verify: Option<WorkerVerify>,
    /// Count failed I/Os and go on, instead of ending at the first.
    pub continue_on_error: bool,
    /// I/Os per second this worker issues on a fixed schedule; None: as
    /// fast as the depth allows.
    pub rate: Option<f64>,
}

/// What a worker needs for `--verify`: the target's shared block map, and
/// for interleaved checks its own descriptor to read blocks back through.
pub struct WorkerVerify {
    pub map: Arc<BlockMap>,
    pub read_back: Option<File>,
}

/// Every worker and the coordinating thread meet here so that all start the
/// clock at the same instant, after rings and buffers are set up.
pub struct StartGate {
    ready: Barrier,
    go: Barrier,
    start: OnceLock<Instant>,
}

impl StartGate {
    pub fn new(workers: usize) -> Self {
        StartGate {
            ready: Barrier::new(workers + 1),
            go: Barrier::new(workers + 1),
            start: OnceLock::new(),
        }
    }

    fn wait(&self) -> Instant {
        self.ready.wait();
        self.go.wait();
        *self.start.get().expect("start set before go")
    }

    /// Called by the coordinator: releases the workers and returns the start.
    pub fn open(&self) -> Instant {
        self.ready.wait();
        let start = Instant::now();
        self.start.set(start).expect("gate opened once");
        self.go.wait();
        start
    }
}

pub enum WorkerEvent {
    Interval(Box<IntervalReport>),
    Finished {
        target: usize,
        last_interval: Option<u64>,
        outcome: Result<Box<WorkerTotals>, String>,
    },
}

#[derive(Debug, Default)]
pub struct WorkerTotals {
    pub directions: [DirectionSample; 2],
    /// When this worker stopped counting: its deadline, or its last
    /// completion for size-bound and interrupted runs.
    pub end: Option<Instant>,
    pub fsyncs: u64,
    pub errors: IoErrors,
    /// Why this worker ended before its deadline or budget, if an I/O error
    /// ended it.
    pub ended_by_error: Option<String>,
    /// Interleaved checks of this worker's writes.
    pub verify: Option<VerifyReport>,
}

/// Runs one worker to completion. Always passes the start gate (even when
/// setting up the engine fails) so the others are not left waiting.
pub fn run(
    config: WorkerConfig,
    file: File,
    gate: &StartGate,
    events: Sender<WorkerEvent>,
    stop: &StopFlag,
    halt: &AtomicBool,
) {
    let target = config.target;
    let mut rng = SmallRng::seed_from_u64(config.seed);
    let buffers = Buffers::new(config.depth as usize, config.bs as usize, &mut rng);
    let engine = super::open(config.engine, file, config.depth, buffers);
    let start = gate.wait();
    let (outcome, last_interval) = match engine {
        Ok(engine) => {
            let mut job = Job::new(config, engine, rng, start, &events);
            let outcome = job.run(stop, halt);
            (outcome, job.last_interval)
        }
        Err(e) => (
            Err(format!("cannot set up the {} engine: {e}", config.engine)),
            None,
        ),
    };
    let _ = events.send(WorkerEvent::Finished {
        target,
        last_interval,
        outcome,
    });
}

struct Job<'a> {
    config: WorkerConfig,
    engine: Box<dyn Engine>,
    rng: SmallRng,
    events: &'a Sender<WorkerEvent>,
    measure_start: Instant,
    deadline: Option<Instant>,
    interval: [DirectionSample; 2],
    interval_index: u64,
    next_boundary: Instant,
    last_interval: Option<u64>,
    totals: WorkerTotals,
}

impl<'a> Job<'a> {
    fn new(
        config: WorkerConfig,
        engine: Box<dyn Engine>,
        rng: SmallRng,
        start: Instant,
        events: &'a Sender<WorkerEvent>,
    ) -> Self {
        let measure_start = start + config.ramp;
        Job {
            deadline: config.runtime.map(|r| measure_start + r),
            config,
            engine,
            rng,
            events,
            measure_start,
            interval: Default::default(),
            interval_index: 0,
            next_boundary: measure_start + INTERVAL,
            last_interval: None,
            totals: WorkerTotals::default(),
        }
    }

    fn run(&mut self, stop: &StopFlag, halt: &AtomicBool) -> Result<Box<WorkerTotals>, String> {
        let depth = self.config.depth as usize;
        let bs = self.config.bs;
        let mut free: Vec<u32> = (0..depth as u32).rev().collect();
        let mut slot_dir = vec![Direction::Read; depth];
        let mut slot_offset = vec![0u64; depth];
        let mut slot_generation = vec![0u64; depth];
        let verify = self.config.verify.take();
        let mut scratch = verify
            .as_ref()
            .filter(|v| v.read_back.is_some())
            .map(|_| Buffers::new(1, bs as usize, &mut self.rng));
        if verify.as_ref().is_some_and(|v| v.read_back.is_some()) {
            self.totals.verify = Some(VerifyReport::new("interleaved"));
        }
        // Set when every block the pattern offered was being written by
        // someone else; wait for completions before trying again.
        let mut blocked = false;
        let mut submitted_at = vec![self.measure_start; depth];
        // With a rate, I/O n is due at schedule_start + n / rate. Latency is
        // also measured from that instant, so an I/O that waited for a free
        // slot behind a stalled device shows the wait (no coordinated
        // omission). Late I/Os go out as soon as a slot frees, never ahead
        // of their time.
        let rate = self.config.rate;
        let schedule_start = Instant::now();
        let mut scheduled = 0u64;
        let mut due_at = vec![schedule_start; depth];
        let mut next_due: Option<Instant> = None;
        let mut batch: Vec<u32> = Vec::with_capacity(depth);
        let mut completions: Vec<Completion> = Vec::with_capacity(depth);
        let mut inflight = 0usize;
        let mut issued_bytes = 0u64;
        let mut writes_since_sync = 0u32;
        let mut write_sequence = 0u64;
        let mut stopping = false;
        let mut failure: Option<String> = None;
        let continue_on_error = self.config.continue_on_error;
        let mut now = Instant::now();

        loop {
            let fsync_due =
                self.config.fsync_every > 0 && writes_since_sync >= self.config.fsync_every;
            if !stopping && !fsync_due {
                while let Some(&slot) = free.last() {
                    if self.config.fsync_every > 0 && writes_since_sync >= self.config.fsync_every {
                        break;
                    }
                    if self.config.budget_bytes.is_some_and(|b| issued_bytes >= b) {
                        stopping = true;
                        break;
                    }
                    if let Some(rate) = rate {
                        let due = schedule_start + Duration::from_secs_f64(scheduled as f64 / rate);
                        if due > now {
                            next_due = Some(due);
                            break;
                        }
                        due_at[slot as usize] = due;
                        next_due = None;
                    }
                    let dir = self.next_direction();
                    let mut offset = self.config.pattern.next_offset(&mut self.rng);
                    if dir == Direction::Write {
                        if let Some(v) = &verify {
                            let mut claimed = v.map.begin_write(offset);
                            for _ in 0..CLAIM_TRIES {
                                if claimed.is_some() {
                                    break;
                                }
                                offset = self.config.pattern.next_offset(&mut self.rng);
                                claimed = v.map.begin_write(offset);
                            }
                            let Some(generation) = claimed else {
                                blocked = true;
                                break;
                            };
                            slot_generation[slot as usize] = generation;
                            let block =
                                &mut self.engine.buffers().slot_mut(slot as usize)[..bs as usize];
                            BlockHeader::stamp(block, offset, generation, v.map.run_id, v.map.seed);
                        } else {
                            self.engine
                                .buffers()
                                .stamp(slot as usize, offset, write_sequence);
                        }
                        write_sequence += 1;
                        writes_since_sync += 1;
                    }
                    free.pop();
                    self.engine.queue(IoRequest {
                        slot,
                        dir,
                        offset,
                        len: bs,
                    });
                    slot_dir[slot as usize] = dir;
                    slot_offset[slot as usize] = offset;
                    scheduled += 1;
                    batch.push(slot);
                    inflight += 1;
                    if now >= self.measure_start {
                        issued_bytes += bs as u64;
                    }
                }
            }

            if inflight == 0
                && !stopping
                && !fsync_due
                && let Some(due) = next_due
            {
                // Idle until the next I/O is due (in slices, so the stop
                // flags and the deadline are still looked at).
                let wait = due
                    .saturating_duration_since(Instant::now())
                    .min(WAIT_SLICE);
                std::thread::sleep(wait);
                now = Instant::now();
                stopping = self.must_stop(stop, halt, now);
                continue;
            }
            if inflight == 0 {
                if blocked && !stopping {
                    // Other workers hold every block offered; they finish soon.
                    blocked = false;
                    std::thread::sleep(Duration::from_micros(100));
                    now = Instant::now();
                    stopping = self.must_stop(stop, halt, now);
                    continue;
                }
                if fsync_due {
                    if let Err(e) = self.engine.sync() {
                        let errno = -e.raw_os_error().unwrap_or(libc::EIO);
                        self.totals
                            .errors
                            .record(errno, || format!("fsync failed: {e}"));
                        if !continue_on_error {
                            self.totals.ended_by_error = Some(format!("fsync failed: {e}"));
                            halt.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                    self.totals.fsyncs += 1;
                    writes_since_sync = 0;
                    if !stopping {
                        continue;
                    }
                }
                break;
            }

            let submit_time = Instant::now();
            for slot in batch.drain(..) {
                submitted_at[slot as usize] = submit_time;
            }
            let wait = match next_due {
                Some(due) => due
                    .saturating_duration_since(Instant::now())
                    .min(WAIT_SLICE),
                None => WAIT_SLICE,
            };
            if let Err(e) = self.engine.submit_and_wait(1, wait) {
                failure = Some(format!("cannot submit I/O: {e}"));
                // In-flight I/Os were not accepted; nothing left to drain.
                break;
            }
            self.engine.reap(&mut completions);
            blocked = false;
            now = Instant::now();
            for c in completions.drain(..) {
                now = Instant::now();
                let slot = c.slot as usize;
                free.push(c.slot);
                inflight -= 1;
                let ok = c.result == bs as i32;
                if let Some(v) = verify
                    .as_ref()
                    .filter(|_| slot_dir[slot] == Direction::Write)
                {
                    let (offset, generation) = (slot_offset[slot], slot_generation[slot]);
                    if let (true, Some(file), Some(buf), Some(report)) = (
                        ok,
                        &v.read_back,
                        scratch.as_mut(),
                        self.totals.verify.as_mut(),
                    ) {
                        let block = &mut buf.slot_mut(0)[..bs as usize];
                        crate::verify::check_one(file, block, offset, generation, &v.map, report);
                    }
                    v.map.end_write(offset, generation, ok);
                }
                if !ok {
                    let (dir, offset) = (slot_dir[slot], slot_offset[slot]);
                    self.totals
                        .errors
                        .record(c.result, || describe_failure(c.result, dir, offset, bs));
                    if !continue_on_error && self.totals.ended_by_error.is_none() {
                        self.totals.ended_by_error =
                            Some(describe_failure(c.result, dir, offset, bs));
                        stopping = true;
                        // The target's other workers stop too.
                        halt.store(true, Ordering::Relaxed);
                    }
                    continue;
                }
                if now < self.measure_start || self.deadline.is_some_and(|d| now >= d) {
                    continue;
                }
                while now >= self.next_boundary {
                    self.flush_interval(INTERVAL);
                }
                let d = slot_dir[slot] as usize;
                let latency = now.duration_since(submitted_at[slot]).as_nanos() as u64;
                let sample = &mut self.interval[d];
                sample.ios += 1;
                sample.bytes += bs as u64;
                sample.latency.record(latency);
                if rate.is_some() {
                    let late = now.duration_since(due_at[slot]).as_nanos() as u64;
                    sample.scheduled.record(late);
                }
                self.totals.end = Some(now);
            }

            stopping = stopping || self.must_stop(stop, halt, now);
        }

        let end = match self.deadline {
            Some(d) if now >= d => d,
            _ => self
                .totals
                .end
                .unwrap_or(self.measure_start)
                .max(self.measure_start),
        };
        self.finish_intervals(end);
        self.totals.end = Some(end);
        match failure {
            Some(f) => Err(f),
            None => Ok(Box::new(std::mem::take(&mut self.totals))),
        }
    }

    /// A signal, a halt of this target, or the deadline.
    fn must_stop(&self, stop: &StopFlag, halt: &AtomicBool, now: Instant) -> bool {
        stop.is_set() || halt.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| now >= d)
    }

    #[inline]
    fn next_direction(&mut self) -> Direction {
        match self.config.read_percent {
            100 => Direction::Read,
            0 => Direction::Write,
            pct => {
                if self.rng.random_range(0..100u8) < pct {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
        }
    }

    /// Closes the current interval: adds it to the worker's totals and sends
    /// it to the coordinator.
    fn flush_interval(&mut self, duration: Duration) {
        let directions = std::mem::take(&mut self.interval);
        for (total, sample) in self.totals.directions.iter_mut().zip(&directions) {
            total.add(sample);
        }
        let _ = self
            .events
            .send(WorkerEvent::Interval(Box::new(IntervalReport {
                target: self.config.target,
                index: self.interval_index,
                dur_s: duration.as_secs_f64(),
                directions,
            })));
        self.last_interval = Some(self.interval_index);
        self.interval_index += 1;
        self.next_boundary += INTERVAL;
    }

    /// Flushes the whole intervals up to `end` and the partial one it falls in.
    fn finish_intervals(&mut self, end: Instant) {
        while end >= self.next_boundary {
            self.flush_interval(INTERVAL);
        }
        let partial = end.saturating_duration_since(self.next_boundary - INTERVAL);
        let has_data = self.interval.iter().any(|d| d.ios > 0);
        if has_data || (self.last_interval.is_none() && !partial.is_zero()) {
            self.flush_interval(partial);
        }
    }
}

fn describe_failure(result: i32, dir: Direction, offset: u64, bs: u32) -> String {
    let what = match dir {
        Direction::Read => "read",
        Direction::Write => "write",
    };
    if result < 0 {
        format!(
            "{what} of {bs} bytes at offset {offset} failed: {}",
            std::io::Error::from_raw_os_error(-result)
        )
    } else {
        format!("short {what} at offset {offset}: {result} of {bs} bytes")
    }
}
