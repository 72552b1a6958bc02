//! The job loop of one worker thread. It keeps `depth` I/Os in flight through
//! whichever engine it is given and sends one interval report per second.
//!
//! The loop is cut where fio cuts it: `fill` queues I/Os into free slots,
//! `submit` timestamps the batch and hands it to the engine, `reap` takes
//! every completion's timestamp first and only then does the per-I/O work
//! (interleaved verification, errors, recording), and `flush_interval` closes
//! a second. Work done between completions therefore never shows up as
//! latency of the completions after it.

use super::content::ContentWriter;
use super::pattern::OffsetPattern;
use super::sizes::BlockSizes;
use super::{Completion, Direction, Engine, IoRequest};
use crate::measure::errors::{IoErrors, Operation};
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::{DIRECTIONS, DirectionSample, IntervalReport};
use crate::trace::Op;
use crate::trace::record::RecordSink;
use crate::trace::script::Script;
use crate::util::buffers::Buffers;
use crate::util::stop::StopFlag;
use crate::util::verify::header::BlockHeader;
use crate::util::verify::{BlockMap, VerifyReport};
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
/// At most this many histogram entries stand for the backlog of a rated
/// worker at its deadline (each entry carries its share of the count), so a
/// long stall cannot make the end of a run slow.
const BACKLOG_STEPS: u64 = 10_000;
/// How long before an idle replay worker's next I/O is due it stops
/// sleeping and spins: about what waking from a sleep takes (its timer
/// slack is set to nothing).
const REPLAY_SPIN: Duration = Duration::from_micros(20);

pub struct WorkerConfig {
    pub target: usize,
    /// This worker's place among the run's workers.
    pub worker: usize,
    /// Read by the coordinator while this worker may be stuck in a call.
    pub pulse: Arc<WorkerPulse>,
    /// Send the totals each second, for the coordinator to end the run
    /// with if this worker gets stuck in a call (runs of a few workers: a
    /// copy costs a couple of MB).
    pub snapshots: bool,
    pub seed: u64,
    pub engine: crate::spec::EngineKind,
    /// The null engine's service time per I/O (`--null-latency`).
    pub null_latency: Duration,
    /// How io_uring submits and completes (`--hipri`, `--sqpoll`).
    pub ring: crate::spec::RingOptions,
    /// How an io_uring worker submits and waits (chosen per run:
    /// `tuning.rs`).
    pub tuning: Option<super::tuning::EngineTuning>,
    pub pattern: OffsetPattern,
    /// How long each I/O is.
    pub sizes: BlockSizes,
    /// After every `every` I/Os, wait for those in flight and idle this
    /// long (`--think-time`).
    pub think: Option<crate::spec::ThinkTime>,
    pub depth: u32,
    /// Share of reads, 0 to 100.
    pub read_percent: u8,
    /// Which of the I/Os that are not reads are trims.
    pub trims: Trims,
    /// Size bound: stop after issuing this many bytes (ramp excluded).
    pub budget_bytes: Option<u64>,
    pub ramp: Duration,
    /// Time bound, measured from the end of the ramp.
    pub runtime: Option<Duration>,
    /// Flush after every N writes; 0 = never.
    pub fsync_every: u32,
    /// Flush with fdatasync rather than fsync.
    pub sync_data_only: bool,
    pub verify: Option<WorkerVerify>,
    /// Count failed I/Os and go on, instead of ending at the first.
    pub continue_on_error: bool,
    /// I/Os per second this worker issues on a fixed schedule; None: as
    /// fast as the depth allows.
    pub rate: Option<f64>,
    /// Rates of reads and of writes on schedules of their own, in I/Os per
    /// second (fio's `rate=R,W`); a direction without one goes as fast as
    /// the depth allows. Not with `rate`.
    pub direction_rates: [Option<f64>; DIRECTIONS],
    /// What writes carry (`--compress`, `--dedupe`, `--pattern`).
    pub content: crate::spec::content::DataContent,
    /// This worker's share of the blocks `--dedupe` repeats.
    pub working_set_blocks: usize,
    /// Bytes of its first writes this worker keeps to measure.
    pub sample_bytes: usize,
    /// `fathom replay`: the I/Os to issue, each when it is due, instead of
    /// the pattern's.
    pub script: Option<Script>,
    /// Where every I/O issued is recorded (`--record`).
    pub record: Option<RecordSink>,
}

/// Which I/Os of a worker discard their blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Trims {
    /// None: reads and writes only.
    #[default]
    None,
    /// Every I/O (`--rw trim`, `randtrim`).
    Every,
    /// Each block is trimmed, then written (`--rw trimwrite`, `randtrimwrite`).
    BeforeEachWrite,
}

impl Trims {
    pub fn of(rw: crate::spec::RwMode) -> Trims {
        use crate::spec::RwMode;
        match rw {
            RwMode::Trim | RwMode::RandTrim => Trims::Every,
            RwMode::TrimWrite | RwMode::RandTrimWrite => Trims::BeforeEachWrite,
            _ => Trims::None,
        }
    }
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
    /// A worker whose engine's calls can block on the target sends its
    /// totals each second (in runs of a few workers): if a call never
    /// returns, the coordinator ends the run with these.
    Snapshot {
        worker: usize,
        last_interval: Option<u64>,
        totals: Box<WorkerTotals>,
    },
    Finished {
        worker: usize,
        target: usize,
        last_interval: Option<u64>,
        outcome: Result<Box<WorkerTotals>, String>,
    },
}

/// How long a worker waits for its I/Os in flight once its run is over, and
/// once a signal asked it to stop; what is still in flight then is
/// abandoned: counted at its age, never waited for.
pub const GRACE_AT_END: Duration = Duration::from_secs(5);
pub const GRACE_AFTER_SIGNAL: Duration = Duration::from_millis(500);

/// I/Os that never completed: abandoned after the grace (a stuck device or
/// file system).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unfinished {
    pub ios: u64,
    /// The age of the oldest, when it was abandoned.
    pub oldest_ns: u64,
}

impl Unfinished {
    pub fn add(&mut self, age_ns: u64) {
        self.ios += 1;
        self.oldest_ns = self.oldest_ns.max(age_ns);
    }

    /// Another worker's, added to these.
    pub fn merge(&mut self, other: &Unfinished) {
        self.ios += other.ios;
        self.oldest_ns = self.oldest_ns.max(other.oldest_ns);
    }
}

/// What a worker whose engine blocks in its calls shows the coordinator
/// while it may be stuck: when the call it is in was made, and for which
/// direction. A blocked thread can send nothing.
#[derive(Debug, Default)]
pub struct WorkerPulse {
    /// ns from `origin` to the call now blocking, plus one; 0: none.
    blocked_since: std::sync::atomic::AtomicU64,
    blocked_dir: std::sync::atomic::AtomicU8,
    /// I/Os in flight during the call.
    in_flight: std::sync::atomic::AtomicU32,
}

impl WorkerPulse {
    fn block(&self, origin: Instant, at: Instant, dir: Direction) {
        self.block_many(origin, at, dir, 1);
    }

    fn block_many(&self, origin: Instant, at: Instant, dir: Direction, in_flight: u32) {
        self.in_flight.store(in_flight, Ordering::Relaxed);
        self.blocked_dir.store(dir as u8, Ordering::Relaxed);
        let ns = at.saturating_duration_since(origin).as_nanos() as u64;
        self.blocked_since.store(ns + 1, Ordering::Release);
    }

    fn unblock(&self) {
        self.blocked_since.store(0, Ordering::Release);
    }

    /// I/Os in flight during the call now blocking.
    pub fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::Relaxed).max(1)
    }

    /// When the call now blocking was made, and its direction.
    pub fn blocked(&self, origin: Instant) -> Option<(Instant, Direction)> {
        let ns = self.blocked_since.load(Ordering::Acquire);
        let dir = match self.blocked_dir.load(Ordering::Relaxed) {
            0 => Direction::Read,
            1 => Direction::Write,
            _ => Direction::Trim,
        };
        (ns > 0).then(|| (origin + Duration::from_nanos(ns - 1), dir))
    }
}

#[derive(Debug, Default, Clone)]
pub struct WorkerTotals {
    pub directions: [DirectionSample; DIRECTIONS],
    /// When this worker stopped counting: its deadline, or its last
    /// completion for size-bound and interrupted runs.
    pub end: Option<Instant>,
    /// Duration of each fsync made during measurement.
    pub sync: LatencyHistogram,
    pub errors: IoErrors,
    /// Why this worker ended before its deadline or budget, if an I/O error
    /// ended it.
    pub ended_by_error: Option<String>,
    /// Interleaved checks of this worker's writes.
    pub verify: Option<VerifyReport>,
    /// How full the queue was at each submission, and what each
    /// submission and reap carried.
    pub queue: crate::measure::queue::QueueDepths,
    /// The first blocks this worker wrote, as written.
    pub written_sample: Vec<u8>,
    /// A replay at a speed: I/Os issued more than 1 ms after they were due,
    /// and the longest any waited to be issued.
    pub late_issues: u64,
    pub worst_lag_ns: u64,
    /// I/Os abandoned in flight after the grace.
    pub unfinished: Unfinished,
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
    let worker = config.worker;
    let mut rng = SmallRng::seed_from_u64(config.seed);
    let mut buffers = Buffers::new(
        config.depth as usize,
        config.sizes.largest() as usize,
        &mut rng,
    );
    let content = ContentWriter::new(
        &config.content,
        &mut buffers,
        config.working_set_blocks,
        config.sample_bytes,
    );
    let engine = super::open(
        config.engine,
        file,
        config.depth,
        buffers,
        config.null_latency,
        config.ring,
        config.tuning.as_ref(),
    );
    let start = gate.wait();
    let (outcome, last_interval) = match engine {
        Ok(engine) => {
            let mut job = Job::new(config, engine, content, rng, start, &events);
            let outcome = job.run(stop, halt);
            (outcome, job.last_interval)
        }
        Err(e) => (
            Err(format!("cannot set up the {} engine: {e}", config.engine)),
            None,
        ),
    };
    let _ = events.send(WorkerEvent::Finished {
        worker,
        target,
        last_interval,
        outcome,
    });
}

/// A fixed schedule: I/O `n` is due at `start + n / rate`.
struct Schedule {
    start: Instant,
    rate: f64,
    /// I/Os issued so far (the index of the next one).
    issued: u64,
}

impl Schedule {
    fn due(&self, n: u64) -> Instant {
        self.start + Duration::from_secs_f64(n as f64 / self.rate)
    }

    /// How many I/Os were due at or before `at`.
    fn due_by(&self, at: Instant) -> u64 {
        (at.saturating_duration_since(self.start).as_secs_f64() * self.rate).floor() as u64 + 1
    }
}

/// What each buffer slot's I/O is, while it is in flight.
#[derive(Clone, Copy)]
struct SlotState {
    dir: Direction,
    offset: u64,
    len: u32,
    generation: u64,
    submitted_at: Instant,
    due_at: Instant,
    /// Issued on a schedule: its lateness is measured.
    paced: bool,
    busy: bool,
}

/// What the loop does after `idle` looked at a worker with nothing in flight.
enum Idle {
    Continue,
    Stop,
}

struct Job<'a> {
    config: WorkerConfig,
    /// Dropped with the job, unless I/Os were abandoned in it: the kernel
    /// may still write into its buffers, which must then outlive the job.
    engine: std::mem::ManuallyDrop<Box<dyn Engine>>,
    /// When the worker began to stop, for the grace its I/Os get.
    stopping_since: Option<Instant>,
    abandoned: bool,
    content: ContentWriter,
    rng: SmallRng,
    events: &'a Sender<WorkerEvent>,
    verify: Option<WorkerVerify>,
    /// Interleaved checks run on a thread of their own, so the time they
    /// take is never counted as latency of the I/Os completing meanwhile.
    checker: Option<Checker>,
    measure_start: Instant,
    deadline: Option<Instant>,
    schedule: Option<Schedule>,
    /// With rates per direction: the schedule of reads and of writes.
    direction_schedules: [Option<Schedule>; DIRECTIONS],
    /// With `--rw trimwrite` or `randtrimwrite`: the block just trimmed,
    /// written next.
    trimmed: Option<(u64, u32)>,
    /// When the workers started: time zero of a replay's script.
    started: Instant,
    /// The script reached a sync point: flush once the I/Os before it are
    /// done.
    script_sync_due: bool,
    /// No schedule at all: every I/O goes as soon as a slot is free.
    unpaced: bool,
    /// The next I/O's due time when the schedule held `fill` back.
    next_due: Option<Instant>,
    slots: Vec<SlotState>,
    free: Vec<u32>,
    batch: Vec<u32>,
    completions: Vec<Completion>,
    /// Completions of one reap with the instant each was seen.
    reaped: Vec<(Completion, Instant)>,
    issued_bytes: u64,
    writes_since_sync: u32,
    write_sequence: u64,
    /// Every block the pattern offered was being written by another worker;
    /// wait for completions before trying again.
    blocked: bool,
    /// The engine sends each I/O as it is queued: each is timestamped then.
    submits_on_queue: bool,
    /// The engine's calls can block on the target (see `Engine::may_block`).
    may_block: bool,
    stopping: bool,
    /// Set once the I/Os still due at the deadline have been counted.
    outstanding_counted: bool,
    /// I/Os issued since the last think-time pause.
    since_pause: u32,
    /// A think-time pause is due once the I/Os in flight complete.
    pause_due: bool,
    now: Instant,
    interval: [DirectionSample; DIRECTIONS],
    interval_index: u64,
    next_boundary: Instant,
    last_interval: Option<u64>,
    totals: WorkerTotals,
}

impl<'a> Job<'a> {
    fn new(
        mut config: WorkerConfig,
        engine: Box<dyn Engine>,
        content: ContentWriter,
        mut rng: SmallRng,
        start: Instant,
        events: &'a Sender<WorkerEvent>,
    ) -> Self {
        let measure_start = start + config.ramp;
        let depth = config.depth as usize;
        let mut verify = config.verify.take();
        let checker = verify.as_mut().and_then(|v| {
            let file = v.read_back.take()?;
            let bs = config.sizes.largest() as usize;
            let scratch = Buffers::new(1, bs, &mut rng);
            Some(Checker::start(file, v.map.clone(), scratch, bs))
        });
        let now = Instant::now();
        Job {
            deadline: config.runtime.map(|r| measure_start + r),
            // The schedule starts when the gate opened, as measuring does:
            // a worker that wakes late owes the I/Os due meanwhile (they
            // count late), instead of offering fewer over the run.
            schedule: config.rate.map(|rate| Schedule {
                start,
                rate,
                issued: 0,
            }),
            unpaced: config.rate.is_none() && config.direction_rates.iter().all(Option::is_none),
            direction_schedules: config.direction_rates.map(|r| {
                r.map(|rate| Schedule {
                    start,
                    rate,
                    issued: 0,
                })
            }),
            next_due: None,
            trimmed: None,
            started: start,
            script_sync_due: false,
            slots: vec![
                SlotState {
                    dir: Direction::Read,
                    offset: 0,
                    len: 0,
                    generation: 0,
                    submitted_at: now,
                    due_at: now,
                    paced: false,
                    busy: false,
                };
                depth
            ],
            free: (0..depth as u32).rev().collect(),
            batch: Vec::with_capacity(depth),
            completions: Vec::with_capacity(depth),
            reaped: Vec::with_capacity(depth),
            issued_bytes: 0,
            writes_since_sync: 0,
            write_sequence: 0,
            blocked: false,
            submits_on_queue: engine.submits_on_queue(),
            may_block: engine.may_block(),
            stopping: false,
            outstanding_counted: false,
            since_pause: 0,
            pause_due: false,
            now,
            config,
            engine: std::mem::ManuallyDrop::new(engine),
            stopping_since: None,
            abandoned: false,
            content,
            rng,
            events,
            verify,
            checker,
            measure_start,
            interval: Default::default(),
            interval_index: 0,
            next_boundary: measure_start + INTERVAL,
            last_interval: None,
            totals: WorkerTotals::default(),
        }
    }

    fn run(&mut self, stop: &StopFlag, halt: &AtomicBool) -> Result<Box<WorkerTotals>, String> {
        if self.config.script.as_ref().is_some_and(|s| s.paced) {
            // A replay sleeps until each I/O is due: its sleeps end on time
            // rather than up to the default 50 µs of timer slack later.
            // SAFETY: prctl on the calling thread, no pointers.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        }
        loop {
            if !self.stopping && !self.fsync_due() && !self.pause_due {
                self.fill();
            }
            if self.free.len() == self.slots.len() {
                // Nothing in flight.
                match self.idle(stop, halt) {
                    Idle::Continue => continue,
                    Idle::Stop => break,
                }
            }
            if let Err(e) = self.submit() {
                self.finish();
                // In-flight I/Os were not accepted; nothing left to drain.
                return Err(format!("cannot submit I/O: {e}"));
            }
            self.reap(halt);
            self.stopping = self.stopping || self.must_stop(stop, halt);
            if self.stopping && self.free.len() < self.slots.len() {
                let since = *self.stopping_since.get_or_insert(self.now);
                let grace = match stop.is_set() {
                    true => GRACE_AFTER_SIGNAL,
                    false => GRACE_AT_END,
                };
                if self.now.saturating_duration_since(since) >= grace {
                    self.abandon();
                    break;
                }
            }
        }
        self.finish();
        if let Some(e) = self.config.script.as_ref().and_then(Script::failure) {
            return Err(format!("the replay stopped early: {e}"));
        }
        Ok(Box::new(std::mem::take(&mut self.totals)))
    }

    /// Gives up on the I/Os still in flight after the grace: each is counted
    /// at its age, in the count of unfinished I/Os and in its direction's
    /// latency, so the maximum is at least that age.
    fn abandon(&mut self) {
        let now = Instant::now();
        for s in self.slots.iter().filter(|s| s.busy) {
            let age = now.saturating_duration_since(s.submitted_at).as_nanos() as u64;
            self.totals.unfinished.add(age);
            self.interval[s.dir as usize].latency.record(age);
        }
        self.abandoned = true;
    }

    fn fsync_due(&self) -> bool {
        self.script_sync_due
            || (self.config.fsync_every > 0 && self.writes_since_sync >= self.config.fsync_every)
    }

    /// Queues I/Os into free slots until none is free, the schedule says
    /// wait, an fsync is due or the size budget is spent.
    fn fill(&mut self) {
        while let Some(&slot) = self.free.last() {
            if self.fsync_due() || self.pause_due {
                break;
            }
            if self
                .config
                .budget_bytes
                .is_some_and(|b| self.issued_bytes >= b)
            {
                self.stopping = true;
                break;
            }
            let mut placed = None;
            let (dir, due) = if self.config.script.is_some() {
                match self.next_scripted() {
                    Some((dir, due, offset, len)) => {
                        placed = Some((len, offset));
                        (dir, due)
                    }
                    None => break,
                }
            } else if self.unpaced {
                (self.next_direction(), None)
            } else {
                match self.next_io() {
                    Some(next) => next,
                    None => break,
                }
            };
            let due_at = due.unwrap_or(self.now);
            let (len, mut offset) = match (placed, self.trimmed.take()) {
                (Some(placed), _) => placed,
                (None, Some((offset, len))) if dir == Direction::Write => (len, offset),
                _ => {
                    let len = self.config.sizes.pick(dir, &mut self.rng);
                    let offset = self
                        .config
                        .pattern
                        .next_offset(&mut self.rng, u64::from(len));
                    (len, offset)
                }
            };
            if dir == Direction::Trim && self.config.trims == Trims::BeforeEachWrite {
                self.trimmed = Some((offset, len));
            }
            let mut generation = 0;
            if dir == Direction::Write {
                match self.prepare_write(slot, offset, len) {
                    Some((o, g)) => (offset, generation) = (o, g),
                    None => {
                        self.blocked = true;
                        break;
                    }
                }
            }
            self.free.pop();
            let booked = self.config.script.is_some() || self.config.record.is_some();
            let issued_at = (self.submits_on_queue || booked).then(Instant::now);
            if let (true, Some(at)) = (booked, issued_at) {
                self.issued(at, dir, due, offset, len);
            }
            let in_flight = (self.slots.len() - self.free.len()) as u32;
            self.totals.queue.submitted_at(in_flight);
            if let (true, Some(at)) = (self.submits_on_queue, issued_at) {
                self.slots[slot as usize].submitted_at = at;
                self.totals.queue.submission(1);
            }
            // An engine that issues each I/O as it is queued can block in
            // that call (io_uring issues inline on a file system that cannot
            // take I/O without blocking, FUSE): the coordinator must see it,
            // should it never return.
            let watched = self.may_block && self.submits_on_queue;
            if let (true, Some(at)) = (watched, issued_at) {
                let in_flight = (self.slots.len() - self.free.len()) as u32;
                self.config
                    .pulse
                    .block_many(self.started, at, dir, in_flight);
            }
            self.engine.queue(IoRequest {
                slot,
                dir,
                offset,
                len,
            });
            if watched {
                self.config.pulse.unblock();
            }
            let state = &mut self.slots[slot as usize];
            (state.dir, state.offset, state.len, state.generation) = (dir, offset, len, generation);
            state.due_at = due_at;
            state.paced = due.is_some();
            state.busy = true;
            if let Some(schedule) = &mut self.schedule {
                schedule.issued += 1;
            } else if let Some(schedule) = &mut self.direction_schedules[dir as usize] {
                schedule.issued += 1;
            }
            if !self.submits_on_queue {
                self.batch.push(slot);
            }
            // As in fio, trimwrite's size is what it writes: the trim before
            // each write is not counted again.
            let counted = dir != Direction::Trim || self.config.trims == Trims::Every;
            if self.now >= self.measure_start && counted {
                self.issued_bytes += u64::from(len);
            }
            if let Some(think) = self.config.think {
                self.since_pause += 1;
                if self.since_pause >= think.every {
                    self.since_pause = 0;
                    self.pause_due = true;
                }
            }
        }
    }

    /// The direction of the next I/O and, on a schedule, when it was due;
    /// None when the schedule says wait (`next_due` says until when).
    /// With rates per direction the mix picks a direction, and the other
    /// goes instead when the picked one is ahead of its schedule and the
    /// other is not (fio's `rate_ddir`).
    #[inline]
    fn next_io(&mut self) -> Option<(Direction, Option<Instant>)> {
        if let Some(schedule) = &self.schedule {
            let due = schedule.due(schedule.issued);
            if due > self.now {
                self.next_due = Some(due);
                return None;
            }
            self.next_due = None;
            return Some((self.next_direction(), Some(due)));
        }
        let dir = self.next_direction();
        if self.direction_schedules.iter().all(Option::is_none) {
            return Some((dir, None));
        }
        let due_of = |d: Direction| {
            self.direction_schedules[d as usize]
                .as_ref()
                .map(|s| s.due(s.issued))
        };
        let other = dir.other();
        let mixed = !matches!(self.config.read_percent, 0 | 100);
        let mut wait = None;
        for d in [dir, other] {
            if d == other && !mixed {
                break;
            }
            match due_of(d) {
                None => return Some((d, None)),
                Some(due) if due <= self.now => {
                    self.next_due = None;
                    return Some((d, Some(due)));
                }
                Some(due) => wait = Some(wait.map_or(due, |w: Instant| w.min(due))),
            }
        }
        self.next_due = wait;
        None
    }

    /// The next I/O of a replay's script and when it was due; None when the
    /// next is not due yet (`next_due` says when), is a sync point (then
    /// due), or the script is done (then the worker stops).
    fn next_scripted(&mut self) -> Option<(Direction, Option<Instant>, u64, u32)> {
        let script = self.config.script.as_mut()?;
        let Some(io) = script.peek(0) else {
            self.stopping = true;
            return None;
        };
        let due = self.measure_start + Duration::from_nanos(io.due_ns);
        // As fast as possible still starts when measuring does.
        let ready = if script.paced {
            due
        } else {
            self.measure_start
        };
        if ready > self.now {
            self.next_due = Some(ready);
            return None;
        }
        self.next_due = None;
        script.advance();
        let dir = match io.op {
            Op::Read => Direction::Read,
            Op::Write => Direction::Write,
            Op::Trim => Direction::Trim,
            Op::Sync => {
                self.script_sync_due = true;
                return None;
            }
        };
        Some((dir, script.paced.then_some(due), io.offset, io.len))
    }

    /// Books an I/O as it is issued: how late a replay issues it, and the
    /// recording.
    #[inline]
    fn issued(
        &mut self,
        now: Instant,
        dir: Direction,
        due: Option<Instant>,
        offset: u64,
        len: u32,
    ) {
        if let Some(due) = due
            && self.counts(now)
        {
            let lag = now.saturating_duration_since(due).as_nanos() as u64;
            if lag > 1_000_000 {
                self.totals.late_issues += 1;
            }
            self.totals.worst_lag_ns = self.totals.worst_lag_ns.max(lag);
        }
        if let Some(record) = &mut self.config.record {
            let op = match dir {
                Direction::Read => Op::Read,
                Direction::Write => Op::Write,
                Direction::Trim => Op::Trim,
            };
            let t_ns = now.saturating_duration_since(self.started).as_nanos() as u64;
            record.push(t_ns, op, offset, len);
        }
    }

    /// Fills slot `slot` with the block to write at `offset`. With
    /// `--verify` the block is claimed in the map first (another offset is
    /// tried while it is being written by someone else); returns the offset
    /// and generation, or None when no block could be claimed.
    fn prepare_write(&mut self, slot: u32, mut offset: u64, len: u32) -> Option<(u64, u64)> {
        let bs = len as usize;
        let sequence = self.write_sequence;
        let mut generation = 0;
        if let Some(v) = &self.verify {
            let mut claimed = v.map.begin_write(offset);
            for _ in 0..CLAIM_TRIES {
                if claimed.is_some() {
                    break;
                }
                offset = self
                    .config
                    .pattern
                    .next_offset(&mut self.rng, u64::from(len));
                claimed = v.map.begin_write(offset);
            }
            generation = claimed?;
        }
        let buffers = self.engine.buffers();
        self.content
            .prepare(buffers, slot as usize, bs, offset, sequence, &mut self.rng);
        if let Some(v) = &self.verify {
            let block = &mut buffers.slot_mut(slot as usize)[..bs];
            BlockHeader::stamp_flagged(
                block,
                offset,
                generation,
                v.map.run_id,
                v.map.seed,
                v.map.flags,
            );
        }
        self.content.sample(&buffers.slot_mut(slot as usize)[..bs]);
        self.write_sequence += 1;
        self.writes_since_sync += 1;
        Some((offset, generation))
    }

    /// Nothing is in flight: wait for the next due I/O or for blocks other
    /// workers hold, make a due fsync, or end.
    fn idle(&mut self, stop: &StopFlag, halt: &AtomicBool) -> Idle {
        let fsync_due = self.fsync_due();
        if !self.stopping
            && !fsync_due
            && let Some(due) = self.next_due
        {
            // Sleep in slices, so the stop flags and the deadline are still
            // looked at.
            let left = due.saturating_duration_since(Instant::now());
            if self.config.script.is_some() {
                // A replay issues each I/O at its time: a sleep ends up to
                // a timer slack late, so the last stretch is spun.
                if left <= REPLAY_SPIN {
                    while Instant::now() < due {
                        std::hint::spin_loop();
                    }
                    self.now = Instant::now();
                    return Idle::Continue;
                }
                return self.pause((left - REPLAY_SPIN).min(WAIT_SLICE), stop, halt);
            }
            return self.pause(left.min(WAIT_SLICE), stop, halt);
        }
        if self.pause_due && !self.stopping {
            // Every I/O before the pause has completed: think.
            self.pause_due = false;
            let pause = Duration::from_nanos(self.config.think.map_or(0, |t| t.pause_ns));
            return self.think(pause, stop, halt);
        }
        if self.blocked && !self.stopping {
            // Other workers hold every block offered; they finish soon.
            self.blocked = false;
            return self.pause(Duration::from_micros(100), stop, halt);
        }
        if fsync_due {
            if !self.flush(halt) {
                return Idle::Stop;
            }
            if !self.stopping {
                return Idle::Continue;
            }
        }
        Idle::Stop
    }

    /// Idles for a think-time pause, in slices so that a stop or the
    /// deadline ends it.
    fn think(&mut self, pause: Duration, stop: &StopFlag, halt: &AtomicBool) -> Idle {
        let until = Instant::now() + pause;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || self.stopping {
                return Idle::Continue;
            }
            self.pause(left.min(WAIT_SLICE), stop, halt);
        }
    }

    /// Sleeps for `wait`, then looks at the clock and the stop flags.
    fn pause(&mut self, wait: Duration, stop: &StopFlag, halt: &AtomicBool) -> Idle {
        std::thread::sleep(wait);
        self.now = Instant::now();
        self.stopping = self.must_stop(stop, halt);
        Idle::Continue
    }

    /// Makes the writes so far durable and times it; false when a failed
    /// fsync ends the worker.
    fn flush(&mut self, halt: &AtomicBool) -> bool {
        let started = Instant::now();
        if let Some(record) = &mut self.config.record {
            let t_ns = started.saturating_duration_since(self.started).as_nanos() as u64;
            record.push(t_ns, Op::Sync, 0, 0);
        }
        if self.may_block {
            self.config
                .pulse
                .block(self.started, started, Direction::Write);
        }
        let outcome = self.engine.sync(self.config.sync_data_only);
        if self.may_block {
            self.config.pulse.unblock();
        }
        self.now = Instant::now();
        self.writes_since_sync = 0;
        self.script_sync_due = false;
        match outcome {
            Ok(()) => {
                if self.counts(self.now) {
                    let ns = self.now.duration_since(started).as_nanos() as u64;
                    self.totals.sync.record(ns);
                }
                true
            }
            Err(e) => {
                let errno = -e.raw_os_error().unwrap_or(libc::EIO);
                self.totals
                    .errors
                    .record(Operation::Flush, errno, || format!("fsync failed: {e}"));
                if self.config.continue_on_error {
                    return true;
                }
                self.totals.ended_by_error = Some(format!("fsync failed: {e}"));
                halt.store(true, Ordering::Relaxed);
                false
            }
        }
    }

    /// Timestamps the queued batch and sends it, waiting for at least one
    /// completion (or the next due I/O, or a slice).
    fn submit(&mut self) -> std::io::Result<()> {
        let submit_time = Instant::now();
        if !self.batch.is_empty() {
            self.totals.queue.submission(self.batch.len() as u32);
        }
        for slot in self.batch.drain(..) {
            self.slots[slot as usize].submitted_at = submit_time;
        }
        let wait = match self.next_due {
            Some(due) => due
                .saturating_duration_since(Instant::now())
                .min(WAIT_SLICE),
            None => WAIT_SLICE,
        };
        // The sync engine makes its I/Os in this call.
        let watched =
            self.may_block && !self.submits_on_queue && self.free.len() < self.slots.len();
        if watched {
            let oldest = self
                .slots
                .iter()
                .filter(|s| s.busy)
                .map(|s| (s.submitted_at, s.dir))
                .min_by_key(|(at, _)| *at);
            if let Some((at, dir)) = oldest {
                let in_flight = (self.slots.len() - self.free.len()) as u32;
                self.config
                    .pulse
                    .block_many(self.started, at, dir, in_flight);
            }
        }
        let outcome = self.engine.submit_and_wait(1, wait);
        if watched {
            self.config.pulse.unblock();
        }
        outcome
    }

    /// Takes every available completion's time first, then checks, counts
    /// and records each.
    fn reap(&mut self, halt: &AtomicBool) {
        self.engine.reap(&mut self.completions);
        if !self.completions.is_empty() {
            self.totals.queue.reap(self.completions.len() as u32);
        }
        self.blocked = false;
        self.now = Instant::now();
        for c in self.completions.drain(..) {
            self.reaped.push((c, Instant::now()));
        }
        let mut reaped = std::mem::take(&mut self.reaped);
        for &(c, at) in &reaped {
            self.complete(c, at, halt);
        }
        if let Some(&(_, last)) = reaped.last() {
            self.now = self.now.max(last);
        }
        reaped.clear();
        self.reaped = reaped;
    }

    fn complete(&mut self, c: Completion, at: Instant, halt: &AtomicBool) {
        let slot = c.slot as usize;
        if self.deadline.is_some_and(|d| at >= d) {
            // Before this slot is freed: it was one of those outstanding.
            self.count_outstanding();
        }
        let state = self.slots[slot];
        let bs = state.len;
        self.slots[slot].busy = false;
        self.free.push(c.slot);
        // A trim answers 0 when done; a read or write the bytes it moved.
        let ok = match state.dir {
            Direction::Trim => c.result >= 0,
            _ => c.result == bs as i32,
        };
        if state.dir == Direction::Write
            && let Some(v) = &self.verify
        {
            match &self.checker {
                // The checker releases the block once it has read it back.
                Some(checker) if ok => checker.check(state.offset, state.generation),
                _ => v.map.end_write(state.offset, state.generation, ok),
            }
        }
        if !ok {
            let describe = || describe_failure(c.result, state.dir, state.offset, bs);
            let op = match state.dir {
                Direction::Read => Operation::Read,
                Direction::Write => Operation::Write,
                Direction::Trim => Operation::Trim,
            };
            self.totals.errors.record(op, c.result, describe);
            if !self.config.continue_on_error && self.totals.ended_by_error.is_none() {
                self.totals.ended_by_error = Some(describe());
                self.stopping = true;
                // The target's other workers stop too.
                halt.store(true, Ordering::Relaxed);
            }
            return;
        }
        if !self.counts(at) {
            return;
        }
        while at >= self.next_boundary {
            self.flush_interval(INTERVAL);
        }
        let sample = &mut self.interval[state.dir as usize];
        sample.ios += 1;
        sample.bytes += bs as u64;
        sample
            .latency
            .record(at.duration_since(state.submitted_at).as_nanos() as u64);
        if state.paced {
            let late = at.duration_since(state.due_at).as_nanos() as u64;
            sample.scheduled.record(late);
        }
        self.totals.end = Some(at);
    }

    /// Whether something that happened at `at` is measured: not during the
    /// ramp, not after the deadline.
    fn counts(&self, at: Instant) -> bool {
        at >= self.measure_start && self.deadline.is_none_or(|d| at < d)
    }

    /// At the deadline of a rated worker, every I/O that was due and has no
    /// answer (in flight, or waiting for a slot behind a slow device) is
    /// counted as late by its age then: a stall at the end of a run must not
    /// disappear because the run ended before the I/Os did.
    fn count_outstanding(&mut self) {
        let Some(deadline) = self.deadline else {
            return;
        };
        let scripted = self.config.script.as_ref().is_some_and(|s| s.paced);
        let paced = self.schedule.is_some()
            || self.direction_schedules.iter().any(Option::is_some)
            || scripted;
        if !paced || self.outstanding_counted || deadline < self.measure_start {
            return;
        }
        self.outstanding_counted = true;
        let mut late: [LatencyHistogram; DIRECTIONS] =
            std::array::from_fn(|_| LatencyHistogram::new());
        for s in self
            .slots
            .iter()
            .filter(|s| s.busy && s.paced && s.due_at < deadline)
        {
            late[s.dir as usize].record(deadline.duration_since(s.due_at).as_nanos() as u64);
        }
        if let Some(script) = self.config.script.as_mut().filter(|s| s.paced) {
            // The script's I/Os due by now and not issued: late by their age.
            let mut n = 0;
            while let Some(io) = script.peek(n) {
                let due = self.measure_start + Duration::from_nanos(io.due_ns);
                if due >= deadline || n >= BACKLOG_STEPS as usize {
                    break;
                }
                let dir = match io.op {
                    Op::Read => Direction::Read,
                    Op::Write | Op::Sync => Direction::Write,
                    Op::Trim => Direction::Trim,
                };
                late[dir as usize].record(deadline.duration_since(due).as_nanos() as u64);
                n += 1;
            }
        }
        match &self.schedule {
            Some(schedule) => {
                // One schedule for the mix: the I/Os it has not issued have no
                // direction, and everything late goes with the direction the
                // worker mostly issues.
                let mut all = LatencyHistogram::new();
                for h in &mut late {
                    all.add(h);
                    *h = LatencyHistogram::new();
                }
                count_backlog(schedule, deadline, &mut all);
                late[self.mostly() as usize] = all;
            }
            None => {
                for (d, schedule) in self.direction_schedules.iter().enumerate() {
                    if let Some(schedule) = schedule {
                        count_backlog(schedule, deadline, &mut late[d]);
                    }
                }
            }
        }
        if late.iter().all(|h| h.count() == 0) {
            return;
        }
        while deadline > self.next_boundary {
            self.flush_interval(INTERVAL);
        }
        for (d, late) in late.iter().enumerate() {
            self.interval[d].scheduled.add(late);
            self.interval[d].unanswered += late.count();
        }
    }

    /// A signal, a halt of this target, or the deadline.
    fn must_stop(&mut self, stop: &StopFlag, halt: &AtomicBool) -> bool {
        let past_deadline = self.deadline.is_some_and(|d| self.now >= d);
        if past_deadline {
            self.count_outstanding();
        }
        stop.is_set() || halt.load(Ordering::Relaxed) || past_deadline
    }

    /// The direction this worker issues most: the one the I/Os a single
    /// schedule has not issued are counted in.
    fn mostly(&self) -> Direction {
        match (
            Direction::mostly(self.config.read_percent),
            self.config.trims,
        ) {
            (Direction::Write, Trims::Every) => Direction::Trim,
            (dir, _) => dir,
        }
    }

    #[inline]
    fn next_direction(&mut self) -> Direction {
        match self.config.trims {
            Trims::None => {}
            Trims::Every => return Direction::Trim,
            Trims::BeforeEachWrite if self.trimmed.is_some() => return Direction::Write,
            Trims::BeforeEachWrite => return Direction::Trim,
        }
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
        // Only a worker that can get stuck in a call needs them.
        if self.config.snapshots && self.may_block {
            let _ = self.events.send(WorkerEvent::Snapshot {
                worker: self.config.worker,
                last_interval: self.last_interval,
                totals: Box::new(self.totals.clone()),
            });
        }
    }

    /// Ends measurement: the end is the deadline when the run reached it,
    /// else the last completion; flushes the intervals up to it.
    fn finish(&mut self) {
        let end = match self.deadline {
            Some(d) if self.now >= d => d,
            _ => self
                .totals
                .end
                .unwrap_or(self.measure_start)
                .max(self.measure_start),
        };
        while end >= self.next_boundary {
            self.flush_interval(INTERVAL);
        }
        // The last, partial second is kept even when nothing completed in
        // it (a stall at the end is a second of 0 I/Os), so that the
        // intervals cover the whole measured time. Nothing is recorded
        // after `end`, so an empty remainder holds nothing.
        let partial = end.saturating_duration_since(self.next_boundary - INTERVAL);
        if !partial.is_zero() {
            self.flush_interval(partial);
        }
        self.totals.end = Some(end);
        self.totals.written_sample = self.content.take_sample();
        if let Some(checker) = self.checker.take() {
            self.totals.verify = Some(checker.finish());
        }
    }
}

impl Drop for Job<'_> {
    fn drop(&mut self) {
        if !self.abandoned {
            // SAFETY: dropped once, here; nothing uses it after.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.engine) };
        }
    }
}

/// The thread that reads each written block back right after its write
/// (`--verify-interleaved`) and then releases it in the block map.
struct Checker {
    blocks: Option<std::sync::mpsc::Sender<(u64, u64)>>,
    thread: std::thread::JoinHandle<VerifyReport>,
}

impl Checker {
    fn start(file: File, map: Arc<BlockMap>, mut scratch: Buffers, bs: usize) -> Self {
        let (blocks, written) = std::sync::mpsc::channel::<(u64, u64)>();
        let thread = std::thread::spawn(move || {
            let mut report = VerifyReport::new("interleaved");
            for (offset, generation) in written {
                let block = &mut scratch.slot_mut(0)[..bs];
                crate::util::verify::check_one(&file, block, offset, generation, &map, &mut report);
                map.end_write(offset, generation, true);
            }
            report
        });
        Checker {
            blocks: Some(blocks),
            thread,
        }
    }

    fn check(&self, offset: u64, generation: u64) {
        if let Some(blocks) = &self.blocks {
            let _ = blocks.send((offset, generation));
        }
    }

    /// Waits for the checks still queued and returns the report.
    fn finish(mut self) -> VerifyReport {
        self.blocks = None;
        self.thread
            .join()
            .unwrap_or_else(|_| VerifyReport::new("interleaved"))
    }
}

/// The I/Os `schedule` owed by `deadline` and never issued, at their age
/// then, into `late` (at most [`BACKLOG_STEPS`] entries).
fn count_backlog(schedule: &Schedule, deadline: Instant, late: &mut LatencyHistogram) {
    let backlog = schedule.due_by(deadline).saturating_sub(schedule.issued);
    if backlog == 0 {
        return;
    }
    let step = backlog.div_ceil(BACKLOG_STEPS);
    let mut n = schedule.issued;
    while n < schedule.issued + backlog {
        let count = step.min(schedule.issued + backlog - n);
        let age = deadline.saturating_duration_since(schedule.due(n));
        late.record_n(age.as_nanos() as u64, count);
        n += count;
    }
}

fn describe_failure(result: i32, dir: Direction, offset: u64, bs: u32) -> String {
    let what = dir.name();
    if result < 0 {
        format!(
            "{what} of {bs} bytes at offset {offset} failed: {}",
            std::io::Error::from_raw_os_error(-result)
        )
    } else {
        format!("short {what} at offset {offset}: {result} of {bs} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_counts_what_was_due() {
        let start = Instant::now();
        let s = Schedule {
            start,
            rate: 1000.0,
            issued: 0,
        };
        assert_eq!(s.due(0), start);
        assert_eq!(s.due(500), start + Duration::from_millis(500));
        // I/O 0 is due at once; by 10 ms, I/Os 0 to 10 are.
        assert_eq!(s.due_by(start), 1);
        assert_eq!(s.due_by(start + Duration::from_millis(10)), 11);
        assert_eq!(s.due_by(start + Duration::from_micros(10_999)), 11);
    }
}
