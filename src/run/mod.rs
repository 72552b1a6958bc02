//! Runs a plan: prepares targets, starts the workers of each workload, merges
//! their reports into results, shows the live line, and cleans up. One file
//! per job: the plan's checks (`check`), the targets shared by its runs
//! (`session`), the workers' configurations and threads (`workers`), what
//! they report while running (`collect`), the results made of it
//! (`assemble`), the terminal line (`live`); this file runs one workload or
//! streams group from start to end.

mod assemble;
mod check;
mod collect;
pub mod limit;
mod live;
pub mod search;
pub mod self_check;
mod session;
pub mod status;
pub mod target;
pub mod warnings;
mod workers;

use assemble::{Measured, read_back, stream_results};
pub use check::{check_plan, claim_targets};
use collect::Progress;
use live::LiveLine;
pub use session::Session;
use workers::{Planned, plan_workers, spawn_workers};

use crate::engine::worker::{StartGate, WorkerEvent};
use crate::measure::cpu::CpuTime;
use crate::measure::disk::DiskSnapshot;
use crate::measure::facts;
use crate::measure::intervals::CompletedSecond;
use crate::result::TemperatureSample;
use crate::result::WorkloadResult;
use crate::run::target::PreparedTarget;
use crate::spec::{VerifyMode, WorkloadSpec};
use crate::util::stop::{Interrupted, StopFlag};
use anyhow::{Context, bail};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
    /// Hand every completed second to those watching the run.
    pub board: Option<&'a crate::measure::live::LiveBoard>,
    /// Called on this thread after each completed second reached the board
    /// (under `--mpi`, it sends the rank's seconds on to rank 0).
    pub after_second: Option<&'a dyn Fn()>,
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
    let recording = start_recording(streams, options.record)?;
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

    if !all_hosts_ready(&options, stop) {
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
    // What the drives counted is read outside the measured window: an
    // admin command to a drive is not the workload's.
    let drives = crate::measure::drive::DriveWatch::start(&disks.names);
    let counting = MeasureClock::before_start(streams, disks.counted.clone());
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
        if let Some(board) = options.board {
            board.second(&streams[s].spec.name, second);
        }
        if let Some(after) = options.after_second {
            after();
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
    release_workers(&mut progress, handles);
    live_line.finish();
    flush_at_end(streams)?;
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
    let (cpu, mut disk_usage) = clock.stop();
    // The disks moved what others did: an engine that does no I/O has no
    // disk of its own to speak of.
    if streams.iter().all(|s| !s.spec.engine.caps().does_io) {
        disk_usage.clear();
    }
    let devices = drives.finish();
    if let Some(first) = progress.failures.first() {
        bail!("{first}");
    }
    if !stop.is_set() {
        read_back_all(streams, &mut progress, stop);
    }
    let measured = Measured {
        start,
        start_wall,
        cpu,
        disks: disk_usage,
        devices,
        temperature: disks.temperature,
        interrupted: stop.is_set(),
    };
    let mut choices = vec![Vec::new(); streams.len()];
    for acc in &progress.accumulators {
        choices[acc.stream].extend(acc.wait_choices.iter().cloned());
    }
    let mut results = stream_results(streams, progress, measured);
    for ((result, mut tuning), mut choices) in results.iter_mut().zip(tunings).zip(choices) {
        if let Some(tuning) = &mut tuning {
            choices.sort_by(|a, b| a.worker.cmp(&b.worker).then(a.at_s.total_cmp(&b.at_s)));
            choices.truncate(crate::spec::EngineTuning::MAX_CHOICES);
            tuning.choices = choices;
        }
        result.engine_tuning = tuning;
    }
    Ok(results)
}

/// The recording of every I/O issued (`--record`), its targets named.
fn start_recording(
    streams: &[Stream],
    path: Option<&std::path::Path>,
) -> anyhow::Result<Option<crate::trace::record::Recording>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let names: Vec<String> = streams
        .iter()
        .flat_map(|s| s.targets.iter().map(|t| t.plan.name.clone()))
        .collect();
    let recording = crate::trace::record::Recording::create(path, &names)?;
    Ok(Some(recording))
}

/// Waits for the start time and for every host (under MPI); false when a
/// host failed and the run must not start.
fn all_hosts_ready(options: &RunOptions, stop: &StopFlag) -> bool {
    if let Some(at) = options.start_at {
        wait_until(at, stop);
    }
    options.barrier.is_none_or(|barrier| barrier())
}

/// Joins the workers that finished. Closing a file on a stuck file system
/// waits for it (FUSE flushes on close): the descriptors of a target with
/// I/Os abandoned in flight are left open for the process's end to close,
/// and a worker left behind stuck in a call is not waited for: its thread
/// ends with the process.
fn release_workers(progress: &mut Progress, handles: Vec<std::thread::JoinHandle<()>>) {
    for acc in progress.accumulators.iter_mut() {
        if acc.unfinished.ios > 0
            && let Ok(null) = crate::gate::read::dev_null()
        {
            std::mem::forget(std::mem::replace(&mut acc.watch, null));
        }
    }
    for (handle, abandoned) in handles.into_iter().zip(&progress.abandoned) {
        if !abandoned {
            let _ = handle.join();
        }
    }
}

/// Reads back what each verified target was written. A target with I/Os
/// abandoned in flight is not read back: the read-back would wait on it
/// too.
fn read_back_all(streams: &[Stream], progress: &mut Progress, stop: &StopFlag) {
    for acc in progress.accumulators.iter_mut() {
        let stream = streams[acc.stream];
        if stream.spec.verify != VerifyMode::Off && acc.unfinished.ios == 0 {
            read_back(stream.spec, acc, &stream.targets[acc.target], stop);
        }
    }
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

/// The disks under a group's targets: their counters are read when
/// measuring starts and ends, their temperatures every second.
struct DiskWatch {
    names: Vec<String>,
    /// The disks whose block-layer counters see the run's I/O: not one
    /// reached only by NVMe commands, which the block layer does not count
    /// (the drive's own counts still do).
    counted: Vec<String>,
    sensors: Vec<(String, std::path::PathBuf)>,
    temperature: Vec<TemperatureSample>,
}

impl DiskWatch {
    fn new(streams: &[Stream]) -> Self {
        let mut names: Vec<String> = Vec::new();
        let mut counted: Vec<String> = Vec::new();
        let mut sensors = Vec::new();
        for stream in streams {
            for device in stream
                .targets
                .iter()
                .filter_map(|t| t.facts.device.as_ref())
            {
                if !stream.spec.engine.caps().nvme_passthrough && !counted.contains(&device.name) {
                    counted.push(device.name.clone());
                }
            }
        }
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
            counted,
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

/// Sleeps until the wall clock reaches `at`, or a signal stops the run.
fn wait_until(at: std::time::SystemTime, stop: &StopFlag) {
    while !stop.is_set() {
        let Ok(left) = at.duration_since(std::time::SystemTime::now()) else {
            return;
        };
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// fio's end_fsync: each target of a stream that asks is flushed once its
/// workers are done, inside the disks' window.
fn flush_at_end(streams: &[Stream]) -> anyhow::Result<()> {
    for stream in streams.iter().filter(|s| s.spec.end_fsync) {
        for target in stream.targets.iter().filter(|t| !t.plan.absent) {
            target
                .open(false, false)?
                .sync_all()
                .with_context(|| format!("--end-fsync: cannot flush {}", target.plan.name))?;
        }
    }
    Ok(())
}

/// Writes back and drops the cached pages of a target's region (fio's
/// `invalidate`): a buffered run then reads from the device.
fn drop_cached(target: &PreparedTarget) -> anyhow::Result<()> {
    if target.plan.absent {
        return Ok(());
    }
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

/// Lets the tests tamper with a target between the write phase and the
/// read-back: with `FATHOM_TEST_VERIFY_HANDSHAKE=DIR`, fathom creates
/// `DIR/written` and waits (at most a minute) for `DIR/go`.
#[cfg(feature = "test-hooks")]
fn test_handshake(stop: &StopFlag) {
    let Some(dir) = std::env::var_os("FATHOM_TEST_VERIFY_HANDSHAKE") else {
        return;
    };
    crate::gate::handshake_for_tests(std::path::Path::new(&dir), &|| stop.is_set());
}

#[cfg(not(feature = "test-hooks"))]
fn test_handshake(_: &StopFlag) {}
