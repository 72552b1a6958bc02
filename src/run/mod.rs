//! Runs a plan: prepares targets, starts the workers of each workload, merges
//! their reports into results, shows the live line, and cleans up.

pub mod warnings;

use crate::engine::Direction;
use crate::engine::pattern::{OffsetPattern, Region};
use crate::engine::sizes::BlockSizes;
use crate::engine::target::{self, PreparedTarget, TargetPlan};
use crate::engine::tuning::{EngineTuning, choose as choose_tuning};
use crate::engine::worker::{
    self, StartGate, Trims, WorkerConfig, WorkerEvent, WorkerTotals, WorkerVerify,
};
use crate::util::error::UsageError;
use crate::measure::cpu::CpuTime;
use crate::measure::disk::DiskSnapshot;
use crate::measure::errors::IoErrors;
use crate::measure::facts;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::{
    CompletedSecond, DIRECTIONS, DirectionSample, IntervalReport, IntervalSeries,
};
use crate::measure::per_second;
use crate::result::TemperatureSample;
use crate::result::streams::StreamsResult;
use crate::result::{
    CpuUsage, DirectionPair, DirectionResult, Document, Interval, RunResult, SyncResult,
    TargetResult, WorkloadResult,
};
use crate::spec::{VerifyMode, WorkloadSpec};
use crate::util::stop::{Interrupted, StopFlag};
use crate::util::verify::{self, BlockMap, VerifyReport};
use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::fs::File;
use std::io::IsTerminal;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Checks every workload against every target before anything is created, so
/// a mistake in the last workload does not leave files behind.
pub fn check_plan(specs: &[WorkloadSpec]) -> Result<(), UsageError> {
    for spec in specs {
        spec.validate()?;
        check_cache_modes(spec)?;
        for run in spec.runs() {
            crate::engine::io_uring::check_options(run.ring_options())?;
            let mut seen: Vec<(TargetIdentity, &str)> = Vec::new();
            for (i, name) in run.targets.iter().enumerate() {
                let plan = target::inspect(run, name, i)?;
                let id = TargetIdentity::of(&plan.path);
                if let Some((_, first)) = seen.iter().find(|(other, _)| *other == id) {
                    return Err(UsageError(format!(
                        "targets {first} and {name} are the same {}: its workers would race each other (a verify would blame the device) and its IOPS count twice; give it once (--numjobs runs more workers on it)",
                        if plan.kind == crate::measure::facts::TargetKind::BlockDevice {
                            "device"
                        } else {
                            "file"
                        }
                    )));
                }
                seen.push((id, name));
                check_region(run, &plan).map_err(|e| match spec.streams.is_empty() {
                    true => e,
                    false => UsageError(format!("stream {}: {}", run.name, e.0)),
                })?;
            }
        }
    }
    Ok(())
}

/// What a target is, whatever path names it: a device by its number, a
/// file by its inode, a file still to be created by its real directory and
/// name.
#[derive(Debug, PartialEq, Eq)]
enum TargetIdentity {
    Device(u64),
    File(u64, u64),
    New(std::path::PathBuf),
}

impl TargetIdentity {
    fn of(path: &std::path::Path) -> TargetIdentity {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        match std::fs::metadata(path) {
            Ok(m) if m.file_type().is_block_device() => TargetIdentity::Device(m.rdev()),
            Ok(m) => TargetIdentity::File(m.dev(), m.ino()),
            Err(_) => {
                let dir = crate::util::directory_of(path);
                let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
                TargetIdentity::New(dir.join(path.file_name().unwrap_or_default()))
            }
        }
    }
}

/// Streams run at once, so a file two of them open must be opened the same
/// way: with O_DIRECT beside buffered I/O the kernel cannot keep the page
/// cache coherent ("Page cache invalidation failure on direct I/O"), and a
/// later fsync fails with EIO, which would read as a failing disk.
fn check_cache_modes(spec: &WorkloadSpec) -> Result<(), UsageError> {
    let mut opened: HashMap<std::path::PathBuf, &WorkloadSpec> = HashMap::new();
    for stream in &spec.streams {
        for target in &stream.targets {
            let file = std::fs::canonicalize(target).unwrap_or_else(|_| target.into());
            match opened.get(&file) {
                Some(other) if other.direct != stream.direct => {
                    let (direct, buffered) = match stream.direct {
                        true => (stream, *other),
                        false => (*other, stream),
                    };
                    return Err(UsageError(format!(
                        "streams {} (O_DIRECT) and {} (buffered) both open {target} at once: the kernel cannot keep its page cache coherent with direct I/O to the same file (writes are lost, a flush fails with EIO); make them agree (direct = true or false in both)",
                        direct.name, buffered.name
                    )));
                }
                Some(_) => {}
                None => {
                    opened.insert(file, stream);
                }
            }
        }
    }
    Ok(())
}

fn check_region(spec: &WorkloadSpec, plan: &TargetPlan) -> Result<(), UsageError> {
    let blocks = plan.size / spec.bs;
    let largest = spec.largest_block_size();
    if plan.size < largest {
        return Err(UsageError(format!(
            "target {}: --size {} is smaller than the largest block of --bssplit, {}",
            plan.name,
            crate::util::units::format_bytes(plan.size),
            crate::util::units::format_block_size(largest)
        )));
    }
    if spec.rw.is_random() {
        let region = Region {
            start: plan.offset,
            blocks,
            bs: spec.bs,
        };
        OffsetPattern::random(region, &spec.random_distribution, 100, 1)
            .map_err(|e| UsageError(format!("target {}: --random-distribution: {e}", plan.name)))?;
    }
    if !spec.rw.is_random() && blocks < spec.numjobs as u64 {
        return Err(UsageError(format!(
            "target {}: --size holds {blocks} blocks of --bs, fewer than --numjobs {} sequential workers need",
            plan.name, spec.numjobs
        )));
    }
    if spec.verify != VerifyMode::Off && blocks > crate::util::verify::MAX_BLOCKS {
        return Err(UsageError(format!(
            "target {}: --verify keeps 4 bytes per block and {blocks} blocks of --bs are too many (at most {}): use a larger --bs or a smaller --size",
            plan.name,
            crate::util::verify::MAX_BLOCKS
        )));
    }
    Ok(())
}

/// Runs workloads one after the other and keeps the targets they share.
pub struct Session {
    stop: StopFlag,
    /// Results of an earlier, interrupted run of the same plan (`--resume`).
    previous: Vec<WorkloadResult>,
    live: bool,
    prepared: HashMap<String, PreparedTarget>,
    /// Targets whose overridden refusal has been said.
    announced: std::collections::HashSet<String>,
    document: Document,
    /// When the first workload starts (`--start-at`); later ones follow it.
    start_at: Option<std::time::SystemTime>,
    /// Waits for the other hosts before each workload (`--mpi`).
    barrier: Option<Box<Barrier>>,
    /// Where every I/O of the (one) workload is recorded (`--record`).
    record: Option<std::path::PathBuf>,
}

impl Session {
    pub fn new(stop: StopFlag) -> Self {
        Session {
            stop,
            previous: Vec::new(),
            live: std::io::stderr().is_terminal(),
            prepared: HashMap::new(),
            announced: Default::default(),
            document: Document::new(facts::host_facts(), None),
            start_at: None,
            barrier: None,
            record: None,
        }
    }

    /// Records every I/O the session's workload issues into `path`.
    pub fn recording(mut self, path: Option<std::path::PathBuf>) -> Self {
        self.record = path;
        self
    }

    /// Waits on `barrier` before each workload starts (the targets laid
    /// out); when it says another host failed, the session stops.
    pub fn with_barrier(mut self, barrier: Box<Barrier>) -> Self {
        self.barrier = Some(barrier);
        self
    }

    /// Starts the first workload at `at` on the wall clock (its targets are
    /// laid out before), so that runs on several hosts start together.
    pub fn starting_at(mut self, at: Option<std::time::SystemTime>) -> Self {
        self.start_at = at;
        self
    }

    /// How the next workload runs: the start time applies once.
    fn options(&mut self, live: bool) -> RunOptions<'_> {
        RunOptions {
            live,
            keep_intervals: true,
            start_at: self.start_at.take(),
            barrier: self.barrier.as_deref(),
            record: self.record.as_deref(),
        }
    }

    /// Names the system under test in the document (`--label`).
    pub fn labelled(mut self, label: Option<String>) -> Self {
        self.document.label = label;
        self
    }

    /// The empty result document of this session (host facts, start time).
    pub fn document(&self) -> &Document {
        &self.document
    }

    /// How many of `specs` a finished workload of `previous` stands for:
    /// the runs `--resume` skips.
    pub fn already_done(specs: &[WorkloadSpec], previous: &[WorkloadResult]) -> usize {
        let mut left: Vec<&WorkloadResult> = previous.iter().filter(|w| !w.interrupted).collect();
        specs
            .iter()
            .filter(|spec| match left.iter().position(|w| w.spec == **spec) {
                Some(i) => {
                    left.swap_remove(i);
                    true
                }
                None => false,
            })
            .count()
    }

    /// What keeps `--resume` from going on with `previous`: a result in the
    /// file that no run of the plan stands for was made with other settings,
    /// and going on would drop it. Names the settings that differ from the
    /// closest run of the plan.
    pub fn resume_conflict(specs: &[WorkloadSpec], previous: &[WorkloadResult]) -> Option<String> {
        let stray = previous.iter().find(|w| !specs.contains(&w.spec))?;
        let fields = |spec: &WorkloadSpec| match serde_json::to_value(spec) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        let theirs = fields(&stray.spec);
        let differences = |spec: &WorkloadSpec| -> Vec<String> {
            let ours = fields(spec);
            let mut keys: Vec<&String> = theirs.keys().chain(ours.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .filter(|k| theirs.get(*k) != ours.get(*k))
                .map(|k| {
                    let show = |v: Option<&serde_json::Value>| {
                        v.map_or_else(|| "unset".to_string(), |v| v.to_string())
                    };
                    format!(
                        "{k} {} in the file, {} now",
                        show(theirs.get(k)),
                        show(ours.get(k))
                    )
                })
                .collect()
        };
        let closest = specs.iter().map(differences).min_by_key(Vec::len)?;
        Some(format!(
            "the file holds a result of other settings ({}): going on would drop it; run without --resume to start again, or write to another file",
            closest.join(", ")
        ))
    }

    /// Workloads of `previous` whose spec is in the plan are taken as done.
    pub fn resume_from(mut self, previous: Vec<WorkloadResult>) -> Self {
        self.previous = previous;
        self
    }

    /// Runs `specs` in order, handing the document to `progress` after each
    /// run; stops early on a signal. Files fathom created are removed when
    /// the session is dropped.
    pub fn run(
        mut self,
        specs: &[WorkloadSpec],
        progress: &mut dyn FnMut(&Document) -> anyhow::Result<()>,
    ) -> anyhow::Result<Document> {
        check_plan(specs)?;
        for spec in specs {
            if self.stop.is_set() {
                break;
            }
            if let Some(done) = self
                .previous
                .iter()
                .position(|w| w.spec == *spec && !w.interrupted)
            {
                let done = self.previous.swap_remove(done);
                self.document.results.push(RunResult::Workload(done));
                continue;
            }
            let result = match self.run_checked(spec) {
                Ok(r) => r,
                Err(e) if e.is::<Interrupted>() => break,
                Err(e) => {
                    // The plan was checked before the first run: what goes
                    // wrong now (a device detached, a file system gone) is
                    // a failure of the run, not bad input, and what was
                    // measured before it is kept.
                    let e = match e.downcast::<UsageError>() {
                        Ok(usage) => anyhow::anyhow!("{} (after the run had started)", usage.0),
                        Err(e) => e,
                    };
                    if self.document.results.is_empty() {
                        return Err(e);
                    }
                    self.document.failure = Some(format!("{e:#}"));
                    break;
                }
            };
            self.document.results.push(result);
            progress(&self.document)?;
        }
        self.document.interrupted |= self.stop.is_set();
        let Session {
            document, prepared, ..
        } = self;
        drop(prepared);
        Ok(document)
    }

    /// Runs one workload (or streams workload) on this session's targets,
    /// laying out those not yet laid out, and returns its result without
    /// adding it to the document: for callers that decide the next run from
    /// the last (capacity search). A signal during the layout is an
    /// [`Interrupted`] error; one during the run, an interrupted result.
    /// Only the spec's own knobs are checked: the caller checks the plan
    /// ([`check_plan`]) before the first run, while no target fathom lays
    /// out exists yet (after, one would look like a file it did not create).
    pub fn run_one(&mut self, spec: &WorkloadSpec) -> anyhow::Result<RunResult> {
        spec.validate()?;
        self.run_checked(spec)
    }

    fn run_checked(&mut self, spec: &WorkloadSpec) -> anyhow::Result<RunResult> {
        let result = if spec.streams.is_empty() {
            let targets = self.prepare_targets(spec)?;
            let context = warning_context(&targets);
            let live = self.live;
            let stop = self.stop.clone();
            let mut result = run_workload(spec, &targets, &stop, self.options(live))?;
            result.warnings = crate::run::warnings::check(&result, &context);
            let shared = crate::run::warnings::shared_device(&[&result], &result.disks);
            result.warnings.extend(shared);
            self.document.interrupted |= result.interrupted;
            RunResult::Workload(result)
        } else {
            let result = self.run_streams_workload(spec)?;
            self.document.interrupted |= result.interrupted;
            RunResult::Streams(result)
        };
        Ok(result)
    }

    /// Runs the streams of `spec` at the same time, each on its own targets
    /// (a target two streams share is laid out once).
    fn run_streams_workload(&mut self, spec: &WorkloadSpec) -> anyhow::Result<StreamsResult> {
        let mut prepared = Vec::with_capacity(spec.streams.len());
        for stream in &spec.streams {
            prepared.push(self.prepare_targets(stream)?);
        }
        let streams: Vec<Stream> = spec
            .streams
            .iter()
            .zip(&prepared)
            .map(|(spec, targets)| Stream { spec, targets })
            .collect();
        let stop = self.stop.clone();
        let mut results = run_streams(&streams, &stop, self.options(false), &mut |_, _| {})?;
        for (result, targets) in results.iter_mut().zip(&prepared) {
            let context = warning_context(targets);
            result.warnings = crate::run::warnings::check(result, &context);
        }
        // The disks are the group's: judged against every stream's I/O, said
        // once, on the first stream.
        let all: Vec<&WorkloadResult> = results.iter().collect();
        let shared = all
            .first()
            .map(|r| crate::run::warnings::shared_device(&all, &r.disks))
            .unwrap_or_default();
        if let Some(first) = results.first_mut() {
            first.warnings.extend(shared);
        }
        StreamsResult::new(spec.clone(), results).map_err(|e| anyhow::anyhow!(e))
    }

    /// Checks `spec` and prepares its targets, for callers that drive the
    /// workers themselves (certify). The session removes what it created
    /// when dropped.
    pub fn prepare(&mut self, spec: &WorkloadSpec) -> anyhow::Result<Vec<PreparedTarget>> {
        check_plan(std::slice::from_ref(spec))?;
        self.prepare_targets(spec)
    }

    /// Prepares this workload's targets. A target used by an earlier workload
    /// is reused (and extended if this one needs more of it) rather than laid
    /// out again; the session owns it and removes it at the end.
    fn prepare_targets(&mut self, spec: &WorkloadSpec) -> anyhow::Result<Vec<PreparedTarget>> {
        let mut out = Vec::with_capacity(spec.targets.len());
        for (i, name) in spec.targets.iter().enumerate() {
            if !self.prepared.contains_key(name) {
                let plan = target::inspect(spec, name, i)?;
                if let Some(notice) = plan.own_file_notice(spec.keep) {
                    eprintln!("fathom: {notice}");
                }
                let created = target::prepare(plan, spec.keep, &self.stop)?;
                self.prepared.insert(name.clone(), created);
            }
            let first = &self.prepared[name].plan;
            let plan = if first.create {
                target::inspect_own_file(spec, name, &first.path)?
            } else {
                target::inspect(spec, name, i)?
            };
            if let Some(notice) = plan.override_notice()
                && self.announced.insert(name.clone())
            {
                eprintln!("fathom: {notice}");
            }
            out.push(target::prepare(plan, true, &self.stop)?);
        }
        Ok(out)
    }
}

/// What the plausibility checks need to know of prepared targets.
fn warning_context(targets: &[PreparedTarget]) -> crate::run::warnings::Context {
    crate::run::warnings::Context {
        available_memory: crate::run::warnings::available_memory(),
        sparse: targets
            .iter()
            .map(|t| std::fs::metadata(&t.plan.path).is_ok_and(|m| crate::run::warnings::is_sparse(&m)))
            .collect(),
    }
}

/// Per-worker seeds differ but follow from the workload seed, so a run is
/// repeatable.
fn worker_seed(seed: u64, worker: usize) -> u64 {
    seed ^ (worker as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn worker_configs(
    spec: &WorkloadSpec,
    target_index: usize,
    plan: &TargetPlan,
    first_worker: usize,
) -> Vec<WorkerConfig> {
    let blocks = plan.size / spec.bs;
    let jobs = spec.numjobs as u64;
    // With --io-size the workers share that many bytes, going round the
    // region as often as it takes, whatever the runtime.
    let size_bound = spec.runtime_s.is_none() || spec.io_size.is_some();
    let io_blocks = spec.io_size.map(|io| io / spec.bs);
    (0..jobs)
        .map(|j| {
            let (pattern, budget) = if spec.rw.is_random() {
                let region = Region {
                    start: plan.offset,
                    blocks,
                    bs: spec.bs,
                };
                // One pass over the region in all, shared among the workers.
                let share = blocks / jobs + u64::from(j < blocks % jobs);
                let pattern = OffsetPattern::random(
                    region,
                    &spec.random_distribution,
                    spec.random_percent,
                    spec.sequential_run,
                )
                .expect("zones checked against the region by check_region");
                (pattern, share * spec.bs)
            } else {
                // Sequential workers each stream through their own slice, so
                // they do not read the blocks another has just brought in.
                let per = blocks / jobs;
                let slice_blocks = if j == jobs - 1 { blocks - per * j } else { per };
                let region = Region {
                    start: plan.offset + per * j * spec.bs,
                    blocks: slice_blocks,
                    bs: spec.bs,
                };
                // With holes one pass issues one I/O per block and stride,
                // as fio's rw=read:8k does before it reaches the end.
                let pass = match spec.stride {
                    stride if stride > 0 => {
                        slice_blocks.div_ceil(1 + stride as u64 / spec.bs) * spec.bs
                    }
                    _ => region.len(),
                };
                (OffsetPattern::sequential(region, spec.stride), pass)
            };
            let budget = match io_blocks {
                Some(total) => (total / jobs + u64::from(j < total % jobs)) * spec.bs,
                None => budget,
            };
            WorkerConfig {
                target: target_index,
                worker: 0,
                pulse: Arc::default(),
                snapshots: false,
                seed: worker_seed(spec.seed, first_worker + j as usize),
                engine: spec.engine,
                null_latency: Duration::from_nanos(spec.null_latency_ns),
                ring: spec.ring_options(),
                tuning: None,
                pattern,
                sizes: match &spec.bssplit {
                    Some(split) => BlockSizes::split(split),
                    None => BlockSizes::fixed(spec.bs as u32),
                },
                think: spec.think_time,
                depth: spec.iodepth,
                read_percent: spec.rw.read_percent(spec.rwmix_read),
                trims: Trims::of(spec.rw),
                budget_bytes: size_bound.then_some(budget),
                ramp: Duration::from_secs_f64(spec.ramp_s),
                runtime: spec.runtime_s.map(Duration::from_secs_f64),
                fsync_every: spec.flush_every(),
                sync_data_only: spec.fdatasync > 0,
                verify: None,
                continue_on_error: spec.continue_on_error,
                rate: spec.target_rate().map(|r| r / jobs as f64),
                direction_rates: {
                    let [read, write] = spec.direction_iops().map(|r| r.map(|r| r / jobs as f64));
                    [read, write, None]
                },
                content: spec.content.clone(),
                working_set_blocks: (blocks * u64::from(spec.content.dedupe_working_set_pct)
                    / 100
                    / jobs) as usize,
                sample_bytes: (crate::engine::content::SAMPLE_BYTES as u64 / jobs).max(spec.bs)
                    as usize,
                script: None,
                record: None,
            }
        })
        .collect()
}

struct TargetAccumulator {
    /// Index of the stream this target belongs to.
    stream: usize,
    /// Index of the target within its stream.
    target: usize,
    series: IntervalSeries,
    totals: [DirectionSample; DIRECTIONS],
    sync: LatencyHistogram,
    end: Option<Instant>,
    errors: IoErrors,
    ended_early: Option<String>,
    verify: Option<VerifyReport>,
    /// Workers of this target still running.
    running: usize,
    /// A descriptor kept to notice the target vanishing mid-run.
    watch: File,
    map: Option<Arc<BlockMap>>,
    queue: crate::measure::queue::QueueDepths,
    /// The first blocks the workers wrote, as written.
    written: Vec<u8>,
    /// A replay: I/Os issued more than 1 ms late, the longest lag.
    late_issues: u64,
    worst_lag_ns: u64,
    /// I/Os its workers abandoned in flight.
    unfinished: worker::Unfinished,
}

/// One stream of a group that runs at the same time: a workload on its
/// prepared targets.
#[derive(Clone, Copy)]
pub struct Stream<'a> {
    pub spec: &'a WorkloadSpec,
    pub targets: &'a [PreparedTarget],
}

/// Waits for the other hosts of a cluster before a workload starts; false
/// when one of them failed and the run must stop.
pub type Barrier = dyn Fn() -> bool;

/// How a group of streams is run.
#[derive(Clone, Copy)]
pub struct RunOptions<'a> {
    /// Show the live line on stderr.
    pub live: bool,
    /// Keep every second in the result's `intervals`. Off for day-long runs
    /// that report through the observer instead, so memory stays flat.
    pub keep_intervals: bool,
    /// Start the workers at this wall-clock time (`--start-at`), so that
    /// runs on several hosts start together; targets are ready by then.
    pub start_at: Option<std::time::SystemTime>,
    /// Called once the targets are ready, just before the workers start.
    pub barrier: Option<&'a Barrier>,
    /// Record every I/O issued into this file (`--record`).
    pub record: Option<&'a std::path::Path>,
}

/// Runs one workload on prepared targets and returns its result.
pub fn run_workload(
    spec: &WorkloadSpec,
    targets: &[PreparedTarget],
    stop: &StopFlag,
    options: RunOptions,
) -> anyhow::Result<WorkloadResult> {
    let mut results = run_streams(&[Stream { spec, targets }], stop, options, &mut |_, _| {})?;
    Ok(results.pop().expect("one result per stream"))
}

/// Runs several streams at the same time: all their workers start on one
/// gate, so their schedules share one origin. `observer` is handed each
/// second of each stream (all its workers merged, histograms kept) as soon
/// as it is complete, with the stream's index. Returns one result per
/// stream.
pub fn run_streams(
    streams: &[Stream],
    stop: &StopFlag,
    options: RunOptions,
    observer: &mut dyn FnMut(usize, &CompletedSecond),
) -> anyhow::Result<Vec<WorkloadResult>> {
    for stream in streams
        .iter()
        .filter(|s| s.spec.invalidate && !s.spec.direct)
    {
        for target in stream.targets {
            drop_cached(target)?;
        }
    }
    let recording = match options.record {
        Some(path) => {
            let names: Vec<String> = streams
                .iter()
                .flat_map(|s| s.targets.iter().map(|t| t.plan.name.clone()))
                .collect();
            let recording = crate::trace::record::Recording::create(path, &names)
                .map_err(|e| UsageError(format!("--record {}: {e}", path.display())))?;
            Some(recording)
        }
        None => None,
    };
    let Planned {
        jobs,
        accumulators,
        stream_workers,
        tunings,
    } = plan_workers(streams, options.keep_intervals, recording.as_ref())?;
    let workers = jobs.len();
    let mut disks = DiskWatch::new(streams);
    let gate = Arc::new(StartGate::new(workers));
    let mut progress = Progress::new(streams, accumulators, &stream_workers, options);
    let (tx, rx) = mpsc::channel::<WorkerEvent>();
    let (handles, watched): (Vec<_>, Vec<_>) =
        spawn_workers(jobs, &gate, &progress.halts, tx, stop)?
            .into_iter()
            .unzip();

    if let Some(at) = options.start_at {
        wait_until(at, stop);
    }
    if let Some(barrier) = options.barrier
        && !barrier()
    {
        // Another host failed: the workers leave at once.
        progress.halt_all();
        gate.open();
        for handle in handles {
            let _ = handle.join();
        }
        return Err(Interrupted.into());
    }
    // Counting starts before the gate opens: once it is open, a thousand
    // workers can keep this thread off both CPUs for a good part of a
    // second, and their first I/Os would fall outside the disks' window.
    let counting = MeasureClock::before_start(streams, disks.names.clone());
    let start = gate.open();
    let start_wall = std::time::SystemTime::now();
    let mut clock = counting.started(start);
    progress.watch(watched, start);
    let mut live_line = LiveLine::new(options.live, streams[0].spec);
    // Each completed second of a stream goes to the observer; the disks'
    // temperatures are read at the end of each of the first stream's.
    let mut second_done = |s: usize, second: &CompletedSecond| {
        if s == 0 {
            disks.sample_temperatures(second.index as f64 + second.dur_s);
        }
        observer(s, second);
    };
    progress.collect(
        &rx,
        &mut clock,
        stop,
        &mut |progress, s, report| {
            if s == 0 {
                live_line.update(start, &progress.totals[0], report);
            }
        },
        &mut second_done,
    );
    // Closing a file on a stuck file system waits for it (FUSE flushes on
    // close): the descriptors of a target with I/Os abandoned in flight are
    // left open for the process's end to close.
    for acc in progress.accumulators.iter_mut() {
        if acc.unfinished.ios > 0
            && let Ok(null) = File::open("/dev/null")
        {
            std::mem::forget(std::mem::replace(&mut acc.watch, null));
        }
    }
    // A worker left behind stuck in a call is not waited for: its thread
    // ends with the process.
    for (handle, abandoned) in handles.into_iter().zip(&progress.abandoned) {
        if !abandoned {
            let _ = handle.join();
        }
    }
    live_line.finish();
    if let Some(recording) = recording {
        // Every worker, and so every sink, is gone: the writer ends.
        recording
            .finish()
            .context("--record: cannot write the recording")?;
    }
    for (s, series) in progress.totals.iter_mut().enumerate() {
        series.flush();
        for second in series.drain_completed() {
            second_done(s, &second);
        }
    }
    let (cpu, disk_usage) = clock.stop();
    if let Some(first) = progress.failures.first() {
        bail!("{first}");
    }
    if !stop.is_set() {
        for acc in progress.accumulators.iter_mut() {
            let stream = streams[acc.stream];
            // A target with I/Os abandoned in flight is not read back: the
            // read-back would wait on it too.
            if stream.spec.verify != VerifyMode::Off && acc.unfinished.ios == 0 {
                read_back(stream.spec, acc, &stream.targets[acc.target], stop);
            }
        }
    }
    let measured = Measured {
        start,
        start_wall,
        cpu,
        disks: disk_usage,
        temperature: disks.temperature,
        interrupted: stop.is_set(),
    };
    let mut results = stream_results(streams, progress, measured);
    for (result, tuning) in results.iter_mut().zip(tunings) {
        result.engine_tuning = tuning;
    }
    Ok(results)
}

/// CPU time and the disks' counters are taken from the end of the first
/// ramp to the end of the run.
struct MeasureClock {
    from: Instant,
    cpu: Option<CpuTime>,
    disks: Option<DiskSnapshot>,
    disk_names: Vec<String>,
}

/// A [`MeasureClock`] whose counters, when no ramp delays them, were read
/// just before the workers were let go.
struct UnstartedClock {
    first_ramp: f64,
    cpu: Option<CpuTime>,
    disks: Option<DiskSnapshot>,
    disk_names: Vec<String>,
}

impl UnstartedClock {
    fn started(self, start: Instant) -> MeasureClock {
        MeasureClock {
            from: start + Duration::from_secs_f64(self.first_ramp),
            cpu: self.cpu,
            disks: self.disks,
            disk_names: self.disk_names,
        }
    }
}

impl MeasureClock {
    fn before_start(streams: &[Stream], disk_names: Vec<String>) -> UnstartedClock {
        let first_ramp = streams
            .iter()
            .map(|s| s.spec.ramp_s)
            .fold(f64::INFINITY, f64::min);
        let now = first_ramp == 0.0;
        UnstartedClock {
            first_ramp,
            cpu: now.then(CpuTime::now),
            disks: now.then(|| DiskSnapshot::take(&disk_names)),
            disk_names,
        }
    }

    /// How long the coordinator may wait for an event: not past the end of
    /// the first ramp while counting has not begun.
    fn next_wait(&self) -> Duration {
        match self.cpu {
            None => self
                .from
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(200)),
            Some(_) => Duration::from_millis(200),
        }
    }

    /// Starts counting once the first ramp is over.
    fn tick(&mut self) {
        if self.cpu.is_none() && Instant::now() >= self.from {
            self.cpu = Some(CpuTime::now());
            self.disks = Some(DiskSnapshot::take(&self.disk_names));
        }
    }

    /// The CPU time and disk work since counting began.
    fn stop(self) -> (CpuTime, Vec<crate::result::DiskUsage>) {
        let cpu = CpuTime::now().since(self.cpu.unwrap_or_else(CpuTime::now));
        let disks = self
            .disks
            .map(|start| DiskSnapshot::take(&self.disk_names).since(&start))
            .unwrap_or_default();
        (cpu, disks)
    }
}

/// The workers of a group of streams, planned: each worker's config and
/// file, one accumulator per stream and target, and the workers per stream.
struct Planned {
    jobs: Vec<(WorkerConfig, File)>,
    accumulators: Vec<TargetAccumulator>,
    stream_workers: Vec<usize>,
    /// Per stream: the engine settings chosen for this run.
    tunings: Vec<Option<EngineTuning>>,
}

/// Opens each worker's descriptors (and, with `--verify`, the block map of
/// each target a stream writes) before anything starts.
fn plan_workers(
    streams: &[Stream],
    keep_intervals: bool,
    recording: Option<&crate::trace::record::Recording>,
) -> anyhow::Result<Planned> {
    let mut jobs = Vec::new();
    let mut accumulators: Vec<TargetAccumulator> = Vec::new();
    let mut stream_workers = vec![0usize; streams.len()];
    for (s, stream) in streams.iter().enumerate() {
        let spec = stream.spec;
        let writes = spec.rw.writes(spec.rwmix_read);
        let run_id: u64 = rand::random();
        for (t, target) in stream.targets.iter().enumerate() {
            let slot = accumulators.len();
            let map = (writes && spec.verify != VerifyMode::Off).then(|| {
                let blocks = target.plan.size / spec.bs;
                let mut map = BlockMap::new(target.plan.offset, spec.bs, blocks, run_id, spec.seed);
                // One sequential writer leaves no block before its last one
                // unwritten: a later read-only check can tell a lost block.
                if spec.rw == crate::spec::RwMode::Write
                    && spec.numjobs == 1
                    && spec.replay.is_none()
                {
                    map.flags = crate::util::verify::header::IN_ORDER;
                }
                Arc::new(map)
            });
            for mut config in worker_configs(spec, slot, &target.plan, stream_workers[s]) {
                if let Some(replay) = &spec.replay {
                    play(&mut config, replay, t, &target.plan)?;
                }
                if let Some(recording) = recording {
                    config.record = Some(recording.sink(slot as u16));
                }
                let file = target.open(spec.direct, spec.rw.modifies(spec.rwmix_read))?;
                if let Some(map) = &map {
                    config.verify = Some(WorkerVerify {
                        map: map.clone(),
                        read_back: match spec.verify {
                            VerifyMode::Interleaved => Some(target.open(spec.direct, false)?),
                            _ => None,
                        },
                    });
                }
                jobs.push((config, file));
                stream_workers[s] += 1;
            }
            let mut series = IntervalSeries::new(spec.numjobs as usize);
            if !keep_intervals {
                series = series.latest_only();
            }
            accumulators.push(TargetAccumulator {
                stream: s,
                target: t,
                series,
                totals: Default::default(),
                sync: LatencyHistogram::new(),
                end: None,
                errors: IoErrors::default(),
                ended_early: None,
                verify: None,
                running: spec.numjobs as usize,
                watch: target.open(false, false)?,
                map,
                queue: Default::default(),
                written: Vec::new(),
                late_issues: 0,
                worst_lag_ns: 0,
                unfinished: worker::Unfinished::default(),
            });
        }
    }
    // Chosen with every stream's workers counted: they share the CPUs.
    let in_flight: u64 = jobs.iter().map(|(c, _)| u64::from(c.depth)).sum();
    let tunings: Vec<Option<EngineTuning>> = streams
        .iter()
        .map(|stream| {
            let spec = stream.spec;
            let cpus = crate::engine::tuning::usable_cpus();
            choose_tuning(spec, jobs.len(), in_flight, cpus)
        })
        .collect();
    let mut first = 0;
    for (s, &count) in stream_workers.iter().enumerate() {
        for (config, _) in &mut jobs[first..first + count] {
            config.tuning = tunings[s].clone();
        }
        first += count;
    }
    Ok(Planned {
        jobs,
        accumulators,
        stream_workers,
        tunings,
    })
}

/// Makes `config` the worker of a replay that plays the trace's device of
/// target `t`: its script, buffers for its longest I/O, no size bound.
fn play(
    config: &mut WorkerConfig,
    replay: &crate::spec::replay::ReplaySpec,
    t: usize,
    plan: &TargetPlan,
) -> anyhow::Result<()> {
    use crate::trace::script::{Fold, Part, Script};
    let trace = replay
        .loaded
        .as_ref()
        .context("the replay's trace is not loaded")?;
    let device = replay
        .devices
        .get(t)
        .and_then(|d| trace.device(d))
        .unwrap_or(u32::MAX);
    let played = trace.of_device(device);
    let part = Part {
        device,
        speed: replay.speed,
        fold: replay.wrap.then_some(Fold {
            size: plan.size,
            align: trace.alignment(),
        }),
        loops: replay.loops,
    };
    config.sizes = BlockSizes::fixed(played.largest.max(512));
    config.read_percent = played.read_percent();
    config.budget_bytes = None;
    config.script = Some(
        Script::play(trace.clone(), part)
            .with_context(|| format!("cannot start reading {}", trace.path().display()))?,
    );
    Ok(())
}

/// The disks under a group's targets: their counters are read when
/// measuring starts and ends, their temperatures every second.
struct DiskWatch {
    names: Vec<String>,
    sensors: Vec<(String, std::path::PathBuf)>,
    temperature: Vec<TemperatureSample>,
}

impl DiskWatch {
    fn new(streams: &[Stream]) -> Self {
        let mut names: Vec<String> = Vec::new();
        let mut sensors = Vec::new();
        for target in streams.iter().flat_map(|s| s.targets) {
            if let Some(device) = &target.facts.device
                && !names.contains(&device.name)
            {
                names.push(device.name.clone());
                if let Some(sensor) = &device.temperature_sensor {
                    sensors.push((device.name.clone(), sensor.into()));
                }
            }
        }
        DiskWatch {
            names,
            sensors,
            temperature: Vec::new(),
        }
    }

    /// Reads each disk's temperature, `t_s` seconds into measuring.
    fn sample_temperatures(&mut self, t_s: f64) {
        for (disk, sensor) in &self.sensors {
            if let Some(celsius) = facts::read_temperature(sensor) {
                self.temperature.push(TemperatureSample {
                    disk: disk.clone(),
                    t_s,
                    celsius,
                });
            }
        }
    }
}

/// Starts one thread per worker; they wait on `gate`.
fn spawn_workers(
    jobs: Vec<(WorkerConfig, File)>,
    gate: &Arc<StartGate>,
    halts: &[Arc<AtomicBool>],
    tx: mpsc::Sender<WorkerEvent>,
    stop: &StopFlag,
) -> anyhow::Result<Vec<(std::thread::JoinHandle<()>, Watched)>> {
    let mut handles = Vec::with_capacity(jobs.len());
    let few = jobs.len() <= SNAPSHOT_WORKERS;
    for (i, (mut config, file)) in jobs.into_iter().enumerate() {
        config.worker = i;
        config.snapshots = few;
        let watched = Watched {
            target: config.target,
            pulse: config.pulse.clone(),
        };
        let halt = halts[config.target].clone();
        let (gate, tx, stop) = (gate.clone(), tx.clone(), stop.clone());
        handles.push(
            std::thread::Builder::new()
                .name(format!("fathom-w{i}"))
                .spawn(move || worker::run(config, file, &gate, tx, &stop, &halt))
                .map(|handle| (handle, watched))
                .context("cannot start a worker thread")?,
        );
    }
    Ok(handles)
}

/// Runs of at most this many workers send their totals each second, so a
/// worker stuck in a call can be left behind with its figures; above it, a
/// stuck worker's figures are missing from the totals (and said so).
const SNAPSHOT_WORKERS: usize = 8;

/// What the coordinator knows of one worker beside its events.
struct Watched {
    target: usize,
    pulse: Arc<worker::WorkerPulse>,
}

/// What the coordinating thread knows while the workers run: each target's
/// figures, each stream's seconds, and which workers are still at it.
struct Progress<'a> {
    streams: &'a [Stream<'a>],
    accumulators: Vec<TargetAccumulator>,
    /// One per accumulator: set, that target's workers stop.
    halts: Vec<Arc<AtomicBool>>,
    /// Each stream's seconds, all its workers merged.
    totals: Vec<IntervalSeries>,
    /// When each stream reached its steady state, in seconds of measuring.
    steady_at: Vec<Option<f64>>,
    failures: Vec<String>,
    finished: usize,
    /// Per worker: what it shows while it may be stuck, whether it has
    /// finished, its last totals (engines that block send them each
    /// second), and whether the run went on without it.
    watched: Vec<Watched>,
    done: Vec<bool>,
    snapshots: Vec<Option<(Option<u64>, Box<WorkerTotals>)>>,
    abandoned: Vec<bool>,
    /// When the workers started, and when the last of them is due to end.
    origin: Option<Instant>,
    deadline: Option<Instant>,
    /// When a signal was first seen.
    signalled: Option<Instant>,
    /// Looks at the targets' paths on a thread of its own: a stat on a
    /// stuck file system would otherwise hold the coordinator.
    watcher: Option<TargetWatcher>,
}

/// Whether each target's path still names the file the run opened, looked
/// at every 200 ms by a thread that nobody waits for.
struct TargetWatcher {
    gone: Arc<Vec<AtomicBool>>,
    done: Arc<AtomicBool>,
}

impl TargetWatcher {
    fn start(targets: Vec<(std::path::PathBuf, (u64, u64, u64))>) -> TargetWatcher {
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

    fn gone(&self, i: usize) -> bool {
        self.gone[i].load(Ordering::Relaxed)
    }
}

impl Drop for TargetWatcher {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

impl<'a> Progress<'a> {
    fn new(
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
    fn watch(&mut self, watched: Vec<Watched>, origin: Instant) {
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
        let ends: Option<Vec<f64>> = self
            .streams
            .iter()
            .map(|s| s.spec.runtime_s.map(|r| r + s.spec.ramp_s))
            .collect();
        self.deadline =
            ends.map(|e| origin + Duration::from_secs_f64(e.into_iter().fold(0.0, f64::max)));
    }

    /// Whether the run goes on without the workers still out: a signal was
    /// seen and the workers' own grace (and half a second more) has passed,
    /// or the same after the last deadline. A worker waits out its grace by
    /// itself where it can; this is for one stuck inside a call.
    fn past_grace(&self, now: Instant) -> bool {
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
    fn leave_stuck_workers(&mut self, second_done: &mut dyn FnMut(usize, &CompletedSecond)) {
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
    fn collect(
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

    fn halt_all(&self) {
        for halt in &self.halts {
            halt.store(true, Ordering::Relaxed);
        }
    }

    /// A target removed or replaced mid-run ends that target (as the
    /// watcher thread found it).
    fn check_targets_are_still_there(&mut self) {
        let Some(watcher) = &self.watcher else { return };
        for (i, (acc, halt)) in self.accumulators.iter_mut().zip(&self.halts).enumerate() {
            if acc.running > 0 && acc.ended_early.is_none() && watcher.gone(i) {
                let target = &self.streams[acc.stream].targets[acc.target];
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
    fn on_interval(
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
    fn on_finished(
        &mut self,
        target: usize,
        last_interval: Option<u64>,
        outcome: Result<Box<WorkerTotals>, String>,
        second_done: &mut dyn FnMut(usize, &CompletedSecond),
    ) {
        self.finished += 1;
        let acc = &mut self.accumulators[target];
        acc.running -= 1;
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

/// What was measured of the group as a whole.
struct Measured {
    start: Instant,
    start_wall: std::time::SystemTime,
    cpu: CpuTime,
    disks: Vec<crate::result::DiskUsage>,
    temperature: Vec<TemperatureSample>,
    interrupted: bool,
}

/// One result per stream from its targets' accumulators (in stream order)
/// and its merged seconds.
fn stream_results(streams: &[Stream], progress: Progress, m: Measured) -> Vec<WorkloadResult> {
    // CPU time is the process's: with several streams, each reports the
    // group's, per I/O of the whole group.
    let group_ios: u64 = progress
        .accumulators
        .iter()
        .map(|a| a.totals.iter().map(|d| d.ios).sum::<u64>())
        .sum();
    let mut results = Vec::with_capacity(streams.len());
    let mut accumulators = progress.accumulators.into_iter().peekable();
    for ((s, stream), series) in streams.iter().enumerate().zip(progress.totals) {
        let spec = stream.spec;
        let measure_start = m.start + Duration::from_secs_f64(spec.ramp_s);
        let mut total: [DirectionSample; DIRECTIONS] = Default::default();
        let mut sync = LatencyHistogram::new();
        let mut queue_depths = crate::measure::queue::QueueDepths::default();
        let mut target_results = Vec::with_capacity(stream.targets.len());
        let mut runtime_s: f64 = 0.0;
        let mut written: Vec<u8> = Vec::new();
        let (mut late_ios, mut worst_lag_ns) = (0, 0);
        while let Some(acc) = accumulators.next_if(|a| a.stream == s) {
            late_ios += acc.late_issues;
            worst_lag_ns = worst_lag_ns.max(acc.worst_lag_ns);
            let target = &stream.targets[acc.target];
            let runtime = acc.end.map_or(0.0, |e| {
                e.saturating_duration_since(measure_start).as_secs_f64()
            });
            runtime_s = runtime_s.max(runtime);
            let [read_iv, write_iv, trim_iv] = acc.series.finish();
            for (sum, d) in total.iter_mut().zip(&acc.totals) {
                sum.add(d);
            }
            sync.add(&acc.sync);
            queue_depths.add(&acc.queue);
            written.extend_from_slice(&acc.written);
            let [read, write, trim] = acc.totals;
            target_results.push(TargetResult {
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
                unfinished: (acc.unfinished.ios > 0).then_some(crate::result::UnfinishedIos {
                    ios: acc.unfinished.ios,
                    oldest_ns: acc.unfinished.oldest_ns,
                }),
            });
        }
        let [read_iv, write_iv, trim_iv] = series.finish();
        let [read, write, trim] = total;
        let total = DirectionPair {
            read: direction_result(read, runtime_s, read_iv),
            write: direction_result(write, runtime_s, write_iv),
            trim: direction_result(trim, runtime_s, trim_iv),
        };
        results.push(WorkloadResult {
            spec: spec.clone(),
            cpu: CpuUsage::new(m.cpu, group_ios),
            targets: target_results,
            total,
            runtime_s,
            interrupted: m.interrupted,
            warnings: Vec::new(),
            engine_tuning: None,
            replay: spec
                .replay
                .as_ref()
                .map(|replay| replay_result(replay, stream.targets.len(), late_ios, worst_lag_ns)),
            queue_depths,
            disks: m.disks.clone(),
            temperature: m.temperature.clone(),
            started_unix_s: (m.start_wall + Duration::from_secs_f64(spec.ramp_s))
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs_f64()),
            sync: sync_result(&sync, spec.flush_every(), runtime_s),
            data: crate::measure::reduction::measure(&written, spec.bs).map(|mut d| {
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

/// A replay's own figures: what it was to play, how late it issued.
fn replay_result(
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
        trace_span_s: replay
            .speed
            .map_or(0.0, |s| trace.last_ns() as f64 / s / 1e9 * f64::from(loops)),
        late_ios,
        worst_lag_ns,
        original,
        original_seconds,
    }
}

/// Sleeps until the wall clock reaches `at`, or a signal stops the run.
fn wait_until(at: std::time::SystemTime, stop: &StopFlag) {
    while !stop.is_set() {
        let Ok(left) = at.duration_since(std::time::SystemTime::now()) else {
            return;
        };
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// The flushes of a target or workload run with `--fsync` or `--fdatasync`;
/// None without.
/// Flushes of a workload that makes them (`--fsync`, or a replayed trace's
/// sync points), even none.
fn sync_result(h: &LatencyHistogram, fsync_every: u32, runtime_s: f64) -> Option<SyncResult> {
    (fsync_every > 0 || h.count() > 0).then(|| SyncResult {
        count: h.count(),
        rate: per_second(h.count(), runtime_s),
        lat_ns: h.summary(),
        histogram: h.encode(),
    })
}

/// Writes back and drops the cached pages of a target's region (fio's
/// `invalidate`): a buffered run then reads from the device.
fn drop_cached(target: &PreparedTarget) -> anyhow::Result<()> {
    let file = target.open(false, false)?;
    // Dirty pages cannot be dropped: write them first.
    file.sync_data()?;
    // SAFETY: advisory call on an open descriptor.
    let rc = unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            target.plan.offset as libc::off_t,
            target.plan.size as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    if rc != 0 {
        anyhow::bail!(
            "cannot drop the cached pages of {}: {}",
            target.plan.name,
            std::io::Error::from_raw_os_error(rc)
        );
    }
    Ok(())
}

fn merge_totals(acc: &mut TargetAccumulator, totals: WorkerTotals) {
    for (sum, d) in acc.totals.iter_mut().zip(&totals.directions) {
        sum.add(d);
    }
    acc.sync.add(&totals.sync);
    acc.queue.add(&totals.queue);
    acc.end = acc.end.max(totals.end);
    acc.errors.merge(&totals.errors);
    acc.written.extend_from_slice(&totals.written_sample);
    acc.late_issues += totals.late_issues;
    acc.worst_lag_ns = acc.worst_lag_ns.max(totals.worst_lag_ns);
    acc.unfinished.merge(&totals.unfinished);
    if acc.ended_early.is_none() {
        acc.ended_early = totals.ended_by_error;
    }
    if let Some(report) = &totals.verify {
        acc.verify
            .get_or_insert_with(|| VerifyReport::new(&report.mode))
            .merge(report);
    }
}

/// Lets the tests tamper with a target between the write phase and the
/// read-back: with `FATHOM_TEST_VERIFY_HANDSHAKE=DIR`, fathom creates
/// `DIR/written` and waits (at most a minute) for `DIR/go`.
fn test_handshake(stop: &StopFlag) {
    let Some(dir) = std::env::var_os("FATHOM_TEST_VERIFY_HANDSHAKE") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    if std::fs::write(dir.join("written"), b"").is_err() {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dir.join("go").exists() && Instant::now() < deadline && !stop.is_set() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = std::fs::remove_file(dir.join("go"));
}

/// The `--verify` pass after the workload: blocks this run wrote are checked
/// against the block map; with a read-only workload, every block of the
/// region is checked against its own header.
fn read_back(
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
        Ok(report) => acc.verify = Some(report),
        Err(e) => {
            acc.ended_early
                .get_or_insert_with(|| format!("verify read-back failed: {e:#}"));
        }
    }
}

fn direction_result(
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
        unanswered: sample.unanswered,
        intervals,
    }
}

/// The line on stderr that shows progress while a workload runs; only on a
/// terminal, so logs and pipes stay clean.
struct LiveLine {
    bar: Option<ProgressBar>,
    slow: LatencyHistogram,
    label: String,
    planned_s: Option<f64>,
}

impl LiveLine {
    fn new(live: bool, spec: &WorkloadSpec) -> Self {
        let bar = live.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(ProgressStyle::with_template("{msg}").expect("valid template"));
            bar
        });
        let live_line = LiveLine {
            bar,
            slow: LatencyHistogram::new(),
            label: spec.label(),
            planned_s: spec.runtime_s.map(|r| r + spec.ramp_s),
        };
        if let Some(bar) = &live_line.bar {
            bar.set_message(format!("{}: starting", live_line.label));
        }
        live_line
    }

    /// Rate-limited runs also show the share of slow I/Os so far (from when
    /// each I/O was due), the figure certification judges.
    fn update(&mut self, start: Instant, series: &IntervalSeries, report: &IntervalReport) {
        let Some(bar) = &self.bar else { return };
        for d in &report.directions {
            self.slow.add(&d.scheduled);
        }
        let elapsed = start.elapsed().as_secs_f64();
        let mut msg = match self.planned_s {
            Some(p) => format!("{}: {:>4.0}s / {:.0}s", self.label, elapsed, p),
            None => format!("{}: {:>4.0}s", self.label, elapsed),
        };
        for (dir, interval) in Direction::ALL.iter().zip(series.latest()) {
            let name = dir.name();
            if let Some(i) = interval.filter(|i| i.ios > 0) {
                msg.push_str(&format!(
                    "  {name} {} IOPS {}/s",
                    crate::util::units::thousands(i.iops.round() as u64),
                    crate::util::units::format_bytes(i.bw_bytes as u64)
                ));
            }
        }
        if self.slow.count() > 0 {
            msg.push_str("  slow:");
            for ms in [1u64, 8, 64] {
                let share = self.slow.share_above(ms * 1_000_000) * 100.0;
                msg.push_str(&format!(" >{ms}ms {share:.2}%"));
            }
        }
        bar.set_message(msg);
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
