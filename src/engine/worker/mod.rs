//! The job loop of one worker thread. It keeps `depth` I/Os in flight through
//! whichever engine it is given and sends one interval report per second.
//!
//! The loop is cut where fio cuts it: `fill` queues I/Os into free slots,
//! `submit` timestamps the batch and hands it to the engine, `reap` takes
//! every completion's timestamp first and only then does the per-I/O work
//! (interleaved verification, errors, recording), and `flush_interval` closes
//! a second. Work done between completions therefore never shows up as
//! latency of the completions after it.

mod check;
mod contract;

use crate::engine::pace::{BACKLOG_STEPS, Schedule, count_backlog};
use check::{Checker, describe_failure};
pub use contract::{
    ByteRange, FlowGroup, GRACE_AFTER_SIGNAL, GRACE_AT_END, StartAfter, StartGate, StreamEnd,
    Trims, Unfinished, WorkerConfig, WorkerEvent, WorkerPulse, WorkerTotals, WorkerVerify,
};

use super::content::ContentWriter;
use super::zones::{TrimPlace, WritePlace};
use super::{Completion, Direction, Engine, IoRequest, WAIT_SLICE};
use crate::measure::errors::Operation;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::{DIRECTIONS, DirectionSample, IntervalReport};
use crate::trace::Op;
use crate::trace::script::Script;
use crate::util::buffers::Buffers;
use crate::util::stop::StopFlag;
use crate::util::verify::header::BlockHeader;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

const INTERVAL: Duration = Duration::from_secs(1);
/// Offsets a verifying writer tries before waiting for a block to be free.
const CLAIM_TRIES: usize = 16;
/// How long before an idle replay worker's next I/O is due it stops
/// sleeping and spins: about what waking from a sleep takes (its timer
/// slack is set to nothing).
const REPLAY_SPIN: Duration = Duration::from_micros(20);

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
        (config.ring, config.io_flags),
        config.tuning.as_ref(),
    );
    let stream_end = config.stream_end.clone();
    let opened = gate.wait();
    let start = config.start_after.wait(opened, &|| {
        stop.is_set() || halt.load(std::sync::atomic::Ordering::Relaxed)
    });
    let waited_before = crate::measure::cpu::thread_runnable_wait_ns();
    let (outcome, last_interval) = match engine {
        Ok(engine) => {
            let mut job = Job::new(config, engine, content, rng, start, &events);
            let mut outcome = job.run(stop, halt);
            if let Ok(totals) = &mut outcome {
                totals.time.ran_ns = start.elapsed().as_nanos() as u64;
                totals.time.waited_for_cpu_ns = waited_before
                    .zip(crate::measure::cpu::thread_runnable_wait_ns())
                    .map(|(before, after)| after.saturating_sub(before));
            }
            (outcome, job.last_interval)
        }
        Err(e) => (
            Err(format!("cannot set up the {} engine: {e}", config.engine)),
            None,
        ),
    };
    // Before its totals go out: a stream that waits for this one may start
    // as soon as the coordinator has them all.
    stream_end.worker_done();
    let _ = events.send(WorkerEvent::Finished {
        worker,
        target,
        last_interval,
        outcome,
    });
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
    /// When its last I/O's completion was seen (or the slot was last made
    /// ready again after a pause): from then on the slot could take the
    /// next I/O, and the time until it does is issue lag.
    freed_at: Instant,
    /// Issued on a schedule: its lateness is measured.
    paced: bool,
    /// Issued at a priority of its own (`--cmdprio`).
    prioritized: bool,
    busy: bool,
}

/// Where an I/O on a zoned device goes, if anywhere now.
enum ZonedStep {
    Go(u64, u32),
    /// Its zone must be reset and writes to it are in flight: reap first.
    Wait,
    /// No zone holds anything to read.
    End,
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
    issued_ios: u64,
    /// Bytes issued since the region's cached pages were last dropped
    /// (`invalidate_each`).
    pass_bytes: u64,
    writes_since_sync: u32,
    write_sequence: u64,
    /// Every block the pattern offered was being written by another worker;
    /// wait for completions before trying again.
    blocked: bool,
    /// `--zonemode zbd`: where the last sequential read ended.
    zoned_read_end: u64,
    /// Its share of a flow group (`--flow`), and whether it is holding
    /// back for the others.
    flow: Option<contract::FlowShare>,
    flow_held: bool,
    /// The engine sends each I/O as it is queued: each is timestamped then.
    submits_on_queue: bool,
    /// The engine's calls can block on the target (see `Engine::may_block`).
    may_block: bool,
    /// Issue lag and the time in the engine are measured: the engine has
    /// something to wait for (see `Engine::answers_inline`).
    timed: bool,
    stopping: bool,
    /// Set once the I/Os still due at the deadline have been counted.
    outstanding_counted: bool,
    /// I/Os issued since the last think-time pause.
    since_pause: u32,
    /// A think-time pause is due once the I/Os in flight complete.
    pause_due: bool,
    /// When the current call into the engine to submit and wait began.
    in_engine_since: Instant,
    /// An engine that submits as it queues: when the last I/O went into
    /// it, until the next is timestamped (the time between is the engine's
    /// call, and a little of the worker's own bookkeeping).
    queued_since: Option<Instant>,
    /// This second's issue lags, per direction.
    lags: [crate::measure::issue::LagCounts; DIRECTIONS],
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
        let schedule = |rate: f64, seed: u64| match config.poisson {
            true => Schedule::poisson(start, rate, seed),
            false => Schedule::even(start, rate),
        };
        Job {
            deadline: config.runtime.map(|r| measure_start + r),
            // The schedule starts when the gate opened, as measuring does:
            // a worker that wakes late owes the I/Os due meanwhile (they
            // count late), instead of offering fewer over the run.
            schedule: config.rate.map(|rate| schedule(rate, config.seed)),
            unpaced: config.rate.is_none() && config.direction_rates.iter().all(Option::is_none),
            // Each direction's Poisson gaps drawn apart from the other's.
            direction_schedules: std::array::from_fn(|d| {
                config.direction_rates[d]
                    .map(|rate| schedule(rate, config.seed ^ (0x5eed_0001 + d as u64)))
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
                    freed_at: now,
                    paced: false,
                    prioritized: false,
                    busy: false,
                };
                depth
            ],
            free: (0..depth as u32).rev().collect(),
            batch: Vec::with_capacity(depth),
            completions: Vec::with_capacity(depth),
            reaped: Vec::with_capacity(depth),
            issued_bytes: 0,
            issued_ios: 0,
            pass_bytes: 0,
            writes_since_sync: 0,
            write_sequence: 0,
            blocked: false,
            zoned_read_end: 0,
            flow: config
                .flow
                .take()
                .map(|(group, weight)| contract::FlowShare::join(group, weight)),
            flow_held: false,
            submits_on_queue: engine.submits_on_queue(),
            may_block: engine.may_block(),
            timed: !engine.answers_inline(),
            stopping: false,
            outstanding_counted: false,
            since_pause: 0,
            pause_due: false,
            in_engine_since: now,
            queued_since: None,
            lags: Default::default(),
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
            totals: WorkerTotals {
                began: Some(start),
                ..WorkerTotals::default()
            },
        }
    }

    fn run(&mut self, stop: &StopFlag, halt: &AtomicBool) -> Result<Box<WorkerTotals>, String> {
        if let Some(priority) = self.config.ioprio {
            set_io_priority(priority)?;
        }
        if let Some((list, policy)) = &self.config.cpus {
            // Split by the worker's place in the run: the clones of an fio
            // job are streams of their own, each with a first worker.
            crate::spec::CpuList::bind_this_thread(&list.for_worker(*policy, self.config.worker))?;
        }
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
        // What it did is kept: the run reports it, ended by this error.
        if let Some(e) = self.config.script.as_ref().and_then(Script::failure) {
            self.totals
                .ended_by_error
                .get_or_insert_with(|| format!("the replay stopped early: {e}"));
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

    /// Whether the size or count bound is reached.
    fn budget_spent(&self) -> bool {
        self.config
            .budget_bytes
            .is_some_and(|b| self.issued_bytes >= b)
            || self.config.budget_ios.is_some_and(|n| self.issued_ios >= n)
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
            if self.budget_spent() {
                self.stopping = true;
                break;
            }
            if self.flow.as_ref().is_some_and(|f| f.ahead()) {
                // Ahead of its weight: the others catch up meanwhile.
                self.flow_held = true;
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
            let (len, offset) = match (placed, self.trimmed.take()) {
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
            let (mut offset, len) = match self.config.zoned.is_some() {
                false => (offset, len),
                true => match self.place_in_zone(dir, offset, len) {
                    ZonedStep::Go(offset, len) => (offset, len),
                    ZonedStep::Wait => {
                        self.blocked = true;
                        break;
                    }
                    ZonedStep::End => {
                        self.stopping = true;
                        break;
                    }
                },
            };
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
            if let Some(flow) = &mut self.flow {
                flow.issued();
            }
            let booked = self.config.script.is_some() || self.config.record.is_some();
            let issued_at = (self.submits_on_queue || booked).then(Instant::now);
            if let (true, Some(at)) = (booked, issued_at) {
                self.issued(at, dir, due, offset, len);
            }
            if let (true, Some(at)) = (self.submits_on_queue, issued_at) {
                let in_flight = (self.slots.len() - self.free.len()) as u32;
                self.totals.queue.submitted_at(in_flight, 1);
                self.slots[slot as usize].submitted_at = at;
                self.totals.queue.submission(1);
                // Such an engine enters the kernel as it queues: the time
                // since the last I/O went in was mostly that call's.
                if self.timed {
                    self.queued_at(at);
                }
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
            // A priority's value is never 0: its class is in the top bits.
            let ioprio = match &self.config.cmdprio {
                Some(c) if self.rng.random_range(0..100u8) < c.percent_of(u64::from(len)) => {
                    c.priority.value()
                }
                _ => 0,
            };
            self.engine.queue(IoRequest {
                slot,
                dir,
                offset,
                len,
                ioprio,
            });
            if watched {
                self.config.pulse.unblock();
            }
            if let (true, Some(at)) = (self.submits_on_queue, issued_at)
                && self.counts(at)
            {
                let submitted = Instant::now().saturating_duration_since(at);
                self.interval[dir as usize]
                    .submission
                    .record(submitted.as_nanos() as u64);
            }
            let state = &mut self.slots[slot as usize];
            (state.dir, state.offset, state.len, state.generation) = (dir, offset, len, generation);
            state.due_at = due_at;
            state.paced = due.is_some();
            state.prioritized = ioprio != 0;
            state.busy = true;
            if let (true, true, Some(at)) = (self.timed, self.submits_on_queue, issued_at)
                && self.counts(at)
            {
                self.record_issue_lag(slot, at);
            }
            self.after_queued(slot, dir, len);
        }
    }

    /// Where an I/O goes on a zoned device (`--zonemode zbd`): a write at
    /// its zone's write pointer, after resetting a full zone (timed and
    /// counted); a read below the pointer.
    #[cold]
    #[inline(never)]
    fn place_in_zone(&mut self, dir: Direction, offset: u64, len: u32) -> ZonedStep {
        let Some(zoned) = self.config.zoned.clone() else {
            return ZonedStep::Go(offset, len);
        };
        let region = self.config.pattern.region();
        let range = (region.start, region.len());
        let min_len = region.bs as u32;
        let random = !self.config.pattern.is_sequential();
        let mut table = zoned.table();
        let (at, len) = match dir {
            Direction::Read => {
                let wrap = self.config.runtime.is_some() && self.config.budget_bytes.is_none();
                // A sequential pass ends at the region's end, as fio's does
                // (fio reads each written block once): the pattern going
                // back to its start is that end.
                if !random && !wrap && offset < self.zoned_read_end {
                    return ZonedStep::End;
                }
                match table.place_read(offset, len, min_len, random, wrap, range) {
                    Some(placed) => {
                        self.zoned_read_end = placed.0 + u64::from(placed.1);
                        placed
                    }
                    None => return ZonedStep::End,
                }
            }
            Direction::Trim => match table.place_trim(offset, random, range) {
                Some(TrimPlace::At(start)) => (start, len),
                Some(TrimPlace::Wait) => return ZonedStep::Wait,
                None => return ZonedStep::End,
            },
            Direction::Write => {
                match table.place_write(offset, len, min_len, range, self.config.worker) {
                    WritePlace::At { offset, len } => (offset, len),
                    WritePlace::Wait => return ZonedStep::Wait,
                    WritePlace::ResetThen {
                        zone_start,
                        zone_len,
                        len,
                    } => {
                        drop(table);
                        match zoned.reset(zone_start, zone_len) {
                            Ok(took) => {
                                if let Some(v) = &self.verify {
                                    v.map.forget(zone_start, zone_len);
                                }
                                if self.counts(Instant::now()) {
                                    self.totals.zone_resets.record(took.as_nanos() as u64);
                                }
                            }
                            Err(e) => {
                                let why = format!("resetting the zone at {zone_start} failed: {e}");
                                self.totals.errors.record(
                                    Operation::Trim,
                                    -e.raw_os_error().unwrap_or(libc::EIO),
                                    || why.clone(),
                                );
                                self.totals.ended_by_error.get_or_insert(why);
                                zoned.table().write_done(zone_start, min_len);
                                return ZonedStep::End;
                            }
                        }
                        (zone_start, len)
                    }
                }
            }
        };
        self.config.pattern.follow(at, u64::from(len));
        ZonedStep::Go(at, len)
    }

    /// A write to a zoned device ended: its zone may close.
    #[cold]
    #[inline(never)]
    fn zoned_write_done(&self, offset: u64) {
        if let Some(zoned) = &self.config.zoned {
            let min_len = self.config.pattern.region().bs as u32;
            zoned.table().write_done(offset, min_len);
        }
    }

    /// What follows an I/O put in `slot`: the schedule moves on, the batch
    /// takes it (for an engine that submits later), and the size budget,
    /// cache invalidation and think time count it.
    fn after_queued(&mut self, slot: u32, dir: Direction, len: u32) {
        if let Some(schedule) = &mut self.schedule {
            schedule.advance();
        } else if let Some(schedule) = &mut self.direction_schedules[dir as usize] {
            schedule.advance();
        }
        if !self.submits_on_queue {
            self.batch.push(slot);
        }
        // As in fio, trimwrite's size is what it writes: the trim before
        // each write is not counted again.
        let counted = dir != Direction::Trim || self.config.trims == Trims::Every;
        if (self.now >= self.measure_start || self.config.ramp_in_budget) && counted {
            self.issued_bytes += u64::from(len);
            self.issued_ios += 1;
        }
        if let Some(region) = self.config.invalidate_each {
            self.pass_bytes += u64::from(len);
            if self.pass_bytes >= region.len {
                self.pass_bytes = 0;
                self.engine.drop_cached(region.offset, region.len);
            }
        }
        if let Some(think) = self.config.think {
            self.since_pause += 1;
            if self.since_pause >= think.every {
                self.since_pause = 0;
                self.pause_due = true;
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
                    let before = Instant::now();
                    while Instant::now() < due {
                        std::hint::spin_loop();
                    }
                    self.now = Instant::now();
                    self.rested_since(before);
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
        if self.flow_held && !self.stopping {
            // The others of its flow group are behind: they catch up within
            // a few of their I/Os, so this worker looks again at once (as
            // fio does without flow_sleep) or after --flow-sleep.
            self.flow_held = false;
            if !self.config.flow_sleep.is_zero() {
                return self.pause(self.config.flow_sleep.min(WAIT_SLICE), stop, halt);
            }
            let before = Instant::now();
            std::thread::yield_now();
            self.now = Instant::now();
            self.rested_since(before);
            self.stopping = self.must_stop(stop, halt);
            return Idle::Continue;
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
        let before = Instant::now();
        std::thread::sleep(wait);
        self.now = Instant::now();
        self.rested_since(before);
        self.stopping = self.must_stop(stop, halt);
        Idle::Continue
    }

    /// The worker idled on purpose from `since` until now (a schedule, a
    /// think time, a flush): that time is neither its own work nor issue
    /// lag, so every free slot is ready again from now.
    fn rested_since(&mut self, since: Instant) {
        self.totals.time.paused_ns += self.now.saturating_duration_since(since).as_nanos() as u64;
        self.free_slots_ready_now();
    }

    /// Every free slot could take an I/O from now on: the wait before was
    /// not issue lag.
    fn free_slots_ready_now(&mut self) {
        for &slot in &self.free {
            self.slots[slot as usize].freed_at = self.now;
        }
    }

    /// Counts the time from the last I/O an engine that submits as it
    /// queues was given to `at` as the engine's.
    #[inline]
    fn queued_at(&mut self, at: Instant) {
        if let Some(since) = self.queued_since.replace(at) {
            self.totals.time.in_engine_ns += at.saturating_duration_since(since).as_nanos() as u64;
        }
    }

    /// Books how long slot `slot`'s I/O, issued at `at` while measuring,
    /// waited to go out once it could (due on its schedule, and the slot
    /// free): the time fathom or its host, not the device, held it back.
    #[inline]
    fn record_issue_lag(&mut self, slot: u32, at: Instant) {
        let s = &self.slots[slot as usize];
        let ready = match s.paced {
            true => s.due_at.max(s.freed_at),
            false => s.freed_at,
        };
        let lag = at.saturating_duration_since(ready).as_nanos() as u64;
        self.lags[s.dir as usize].record(lag);
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
        self.totals.time.in_engine_ns +=
            self.now.saturating_duration_since(started).as_nanos() as u64;
        self.free_slots_ready_now();
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
            let n = self.batch.len() as u32;
            let in_flight = (self.slots.len() - self.free.len()) as u32;
            self.totals.queue.submitted_at(in_flight, n);
            self.totals.queue.submission(n);
        }
        for &slot in &self.batch {
            self.slots[slot as usize].submitted_at = submit_time;
        }
        if self.timed {
            if self.counts(submit_time) {
                for i in 0..self.batch.len() {
                    self.record_issue_lag(self.batch[i], submit_time);
                }
            }
            self.queued_at(submit_time);
            self.queued_since = None;
            self.in_engine_since = submit_time;
        }
        self.batch.clear();
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
        if self.timed {
            self.totals.time.in_engine_ns += self
                .now
                .saturating_duration_since(self.in_engine_since)
                .as_nanos() as u64;
        }
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
        if self.timed {
            self.slots[slot].freed_at = at;
        }
        self.free.push(c.slot);
        if self.config.zoned.is_some() && state.dir == Direction::Write {
            self.zoned_write_done(state.offset);
        }
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
            if self.counts(at) {
                // In its second, for those watching the run.
                while at >= self.next_boundary {
                    self.flush_interval(INTERVAL);
                }
                self.interval[state.dir as usize].errors += 1;
            }
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
        let latency = at.duration_since(state.submitted_at).as_nanos() as u64;
        sample.latency.record(latency);
        if self.config.cmdprio.is_some() {
            sample.record_by_priority(latency, state.prioritized);
        }
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
        for (lags, sample) in self.lags.iter_mut().zip(&mut self.interval) {
            lags.drain_into(&mut sample.issue_lag);
        }
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
        self.totals.wait_choices = self.engine.wait_choices();
        for choice in &mut self.totals.wait_choices {
            choice.worker = self.config.worker;
        }
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

/// Sets this thread's I/O priority (ioprio_set(2), IOPRIO_WHO_PROCESS of
/// the calling thread), as fio sets its job's.
fn set_io_priority(priority: crate::spec::IoPriority) -> Result<(), String> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: a system call with integer arguments only.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            libc::c_long::from(priority.value()),
        )
    };
    if rc < 0 {
        return Err(format!(
            "cannot run at I/O priority {priority}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_counts_what_was_due() {
        let start = Instant::now();
        let s = Schedule::even(start, 1000.0);
        assert_eq!(s.due(0), start);
        assert_eq!(s.due(500), start + Duration::from_millis(500));
        // I/O 0 is due at once; by 10 ms, I/Os 0 to 10 are.
        assert_eq!(s.due_by(start), 1);
        assert_eq!(s.due_by(start + Duration::from_millis(10)), 11);
        assert_eq!(s.due_by(start + Duration::from_micros(10_999)), 11);
    }
}
