//! What a worker and the run that starts it exchange: the worker's
//! configuration, the start gate, the events it sends (intervals, totals,
//! snapshots), its pulse, and what it could not finish.

use crate::engine::Direction;
use crate::engine::pattern::OffsetPattern;
use crate::engine::sizes::BlockSizes;
use crate::measure::errors::IoErrors;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::{DIRECTIONS, DirectionSample, IntervalReport};
use crate::trace::record::RecordSink;
use crate::trace::script::Script;
use crate::util::verify::{BlockMap, VerifyReport};
use std::fs::File;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

/// Bytes of a target: where they start, how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    pub offset: u64,
    pub len: u64,
}

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
    /// What each read and write passes to the kernel (`--uncached`,
    /// `--atomic`).
    pub io_flags: crate::spec::IoFlags,
    /// How an io_uring worker submits and waits (chosen per run:
    /// `tuning.rs`).
    pub tuning: Option<crate::engine::tuning::EngineTuning>,
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
    /// Size bound: stop after issuing this many bytes (ramp excluded
    /// unless `ramp_in_budget`).
    pub budget_bytes: Option<u64>,
    /// Count bound: stop after issuing this many I/Os (as the bytes).
    pub budget_ios: Option<u64>,
    /// The ramp's I/O counts toward the budgets (fio's ramp_time).
    pub ramp_in_budget: bool,
    pub ramp: Duration,
    /// Time bound, measured from the end of the ramp.
    pub runtime: Option<Duration>,
    /// Flush after every N writes; 0 = never.
    pub fsync_every: u32,
    /// A buffered time-bound run with fio's invalidation: each time the
    /// worker has issued this many bytes (its region's size: a pass), the
    /// region's cached pages are dropped, as fio drops them at each pass.
    pub invalidate_each: Option<ByteRange>,
    /// The I/O priority to run at (ioprio_set(2) of the worker's thread).
    pub ioprio: Option<crate::spec::IoPriority>,
    /// The CPUs the workers run on and how they share them
    /// (`--cpus-allowed`, `--cpus-allowed-policy`); None: wherever the
    /// scheduler puts them.
    pub cpus: Option<(crate::spec::CpuList, crate::spec::CpuPolicy)>,
    /// Rated I/Os arrive as a Poisson process rather than evenly (fio's
    /// `rate_process=poisson`).
    pub poisson: bool,
    /// Flush with fdatasync rather than fsync.
    pub sync_data_only: bool,
    pub verify: Option<WorkerVerify>,
    /// `--zonemode zbd`: the device's zones, shared by its workers.
    pub zoned: Option<Arc<crate::engine::zones::ZonedDevice>>,
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
    /// When this worker starts its I/O, after the gate opens.
    pub start_after: StartAfter,
    /// Its flow group and weight (`--flow`): its I/Os are held back while
    /// its share of the group's is above its weight's.
    pub flow: Option<(Arc<FlowGroup>, u32)>,
    /// How long it sleeps when held back, its I/Os done (`--flow-sleep`).
    pub flow_sleep: Duration,
    /// `--cmdprio`: the share of I/Os (by block size, or of all) issued at
    /// a priority of their own, and that priority.
    pub cmdprio: Option<crate::spec::CommandPriority>,
    /// Its stream's workers still running, for the streams that wait for
    /// it.
    pub stream_end: Arc<StreamEnd>,
}

/// When a worker of a stream starts: once the streams it waits for have
/// ended (`--wait-for`), and `delay` after that (`--start-delay`); at the
/// gate by default.
#[derive(Clone, Default)]
pub struct StartAfter {
    pub delay: Duration,
    pub streams: Vec<Arc<StreamEnd>>,
}

/// Looks for the streams waited for this often: a stream's end is timed
/// where it happens, so this only delays the waiting workers' wake-up.
const WAIT_POLL: Duration = Duration::from_millis(1);

impl StartAfter {
    /// Waits until this worker may start (or a stop or halt comes) and
    /// returns its start: the gate's opening, or the last awaited stream's
    /// end, plus the delay.
    pub(super) fn wait(&self, gate: Instant, leave: &dyn Fn() -> bool) -> Instant {
        let mut from = gate;
        for stream in &self.streams {
            loop {
                if let Some(at) = stream.ended() {
                    from = from.max(at);
                    break;
                }
                if leave() {
                    return Instant::now();
                }
                std::thread::sleep(WAIT_POLL);
            }
        }
        let start = from + self.delay;
        loop {
            let now = Instant::now();
            if now >= start || leave() {
                return start.min(now.max(from));
            }
            std::thread::sleep((start - now).min(Duration::from_millis(50)));
        }
    }
}

/// The workers that share a flow group (fio's `flow_id`): the I/Os they
/// issued, and their weights, of those running. The count starts at one,
/// as fio's, so the first I/O's share is defined.
#[derive(Debug)]
pub struct FlowGroup {
    issued: std::sync::atomic::AtomicU64,
    weight: std::sync::atomic::AtomicU64,
}

impl Default for FlowGroup {
    fn default() -> Self {
        FlowGroup {
            issued: 1.into(),
            weight: 0.into(),
        }
    }
}

/// One worker's place in its flow group: added when it starts, taken out
/// (its I/Os and weight) when it is dropped, so those still running share
/// the group between them.
pub(super) struct FlowShare {
    group: Arc<FlowGroup>,
    weight: u64,
    issued: u64,
}

impl FlowShare {
    pub(super) fn join(group: Arc<FlowGroup>, weight: u32) -> FlowShare {
        group.weight.fetch_add(u64::from(weight), Ordering::AcqRel);
        FlowShare {
            group,
            weight: u64::from(weight),
            issued: 0,
        }
    }

    /// Whether this worker's share of the group's I/Os is above its share
    /// of the weight: it waits (fio's `flow_threshold_exceeded`).
    pub(super) fn ahead(&self) -> bool {
        let all = self.group.issued.load(Ordering::Relaxed).max(1) as f64;
        let weights = self.group.weight.load(Ordering::Relaxed).max(1) as f64;
        self.issued as f64 / all > self.weight as f64 / weights
    }

    /// Counts an I/O issued.
    pub(super) fn issued(&mut self) {
        self.group.issued.fetch_add(1, Ordering::Relaxed);
        self.issued += 1;
    }
}

impl Drop for FlowShare {
    fn drop(&mut self) {
        self.group.issued.fetch_sub(self.issued, Ordering::AcqRel);
        self.group.weight.fetch_sub(self.weight, Ordering::AcqRel);
    }
}

/// How many of a stream's workers are still running, and when the last
/// one ended.
#[derive(Debug, Default)]
pub struct StreamEnd {
    running: std::sync::atomic::AtomicUsize,
    at: OnceLock<Instant>,
}

impl StreamEnd {
    pub fn new(workers: usize) -> Self {
        StreamEnd {
            running: workers.into(),
            at: OnceLock::new(),
        }
    }

    /// A worker of the stream is done (whatever its outcome).
    pub(super) fn worker_done(&self) {
        if self.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _ = self.at.set(Instant::now());
        }
    }

    pub fn ended(&self) -> Option<Instant> {
        self.at.get().copied()
    }
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

    pub(super) fn wait(&self) -> Instant {
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
    pub(super) fn block(&self, origin: Instant, at: Instant, dir: Direction) {
        self.block_many(origin, at, dir, 1);
    }

    pub(super) fn block_many(&self, origin: Instant, at: Instant, dir: Direction, in_flight: u32) {
        self.in_flight.store(in_flight, Ordering::Relaxed);
        self.blocked_dir.store(dir as u8, Ordering::Relaxed);
        let ns = at.saturating_duration_since(origin).as_nanos() as u64;
        self.blocked_since.store(ns + 1, Ordering::Release);
    }

    pub(super) fn unblock(&self) {
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
    /// When this worker started its I/O (the gate's opening unless it
    /// waited for other streams or a delay); its ramp counts from then.
    pub began: Option<Instant>,
    /// When this worker stopped counting: its deadline, or its last
    /// completion for size-bound and interrupted runs.
    pub end: Option<Instant>,
    /// Duration of each fsync made during measurement.
    pub sync: LatencyHistogram,
    /// Duration of each zone reset made during measurement.
    pub zone_resets: LatencyHistogram,
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
    /// What `--completion-wait auto` measured and chose.
    pub wait_choices: Vec<crate::spec::WaitChoice>,
    /// Where the worker's time went: running, waiting for a CPU, in the
    /// engine, idle on purpose.
    pub time: crate::measure::issue::WorkerTime,
}
