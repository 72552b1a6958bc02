//! The workers of a run: their configurations from the spec (pattern,
//! sizes, seeds, a replay's script), and their threads.

use super::Stream;
use super::collect::{TargetAccumulator, Watched};
use crate::engine::pattern::{OffsetPattern, Region};
use crate::engine::sizes::BlockSizes;
use crate::engine::tuning::{EngineTuning, Regime, choose as choose_tuning};
use crate::engine::worker::{
    self, ByteRange, StartGate, Trims, WorkerConfig, WorkerEvent, WorkerVerify,
};
use crate::run::target::TargetPlan;
use crate::spec::{VerifyMode, WorkloadSpec};
use crate::util::stop::StopFlag;
use crate::util::verify::BlockMap;
use anyhow::Context;
use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

/// Per-worker seeds differ but follow from the workload seed, so a run is
/// repeatable.
pub(super) fn worker_seed(seed: u64, worker: usize) -> u64 {
    seed ^ (worker as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Worker `j` of `jobs`'s offsets on `plan`'s region, and the bytes one
/// pass of them issues: random workers share one pass over the region;
/// sequential ones each stream through their own slice, so they do not
/// read the blocks another has just brought in.
fn worker_pattern(
    spec: &WorkloadSpec,
    plan: &TargetPlan,
    j: u64,
    jobs: u64,
) -> (OffsetPattern, u64) {
    let blocks = plan.size / spec.bs;
    if spec.rw.is_random() {
        // Offsets fall on multiples of the alignment (the block size
        // unless --block-align says otherwise).
        let unit = spec.block_align.unwrap_or(spec.bs);
        let region = Region {
            start: plan.offset,
            blocks: plan.size / unit,
            bs: unit,
        };
        let share = blocks / jobs + u64::from(j < blocks % jobs);
        let region = match spec.zones {
            Some(z) => Region {
                blocks: (z.range / unit).clamp(1, region.blocks.max(1)),
                ..region
            },
            None => region,
        };
        let pattern = OffsetPattern::random(
            region,
            &spec.random_distribution,
            spec.random_percent,
            spec.sequential_run,
        )
        .expect("zones checked against the region by check_region");
        let pattern = match spec.random_map {
            true => pattern.with_random_map(spec.seed, j, jobs),
            false => pattern,
        };
        let pattern = match spec.zones {
            Some(z) => pattern.in_zones(z, plan.size),
            None => pattern,
        };
        return (pattern, share * spec.bs);
    }
    let per = blocks / jobs;
    let slice_blocks = if j == jobs - 1 { blocks - per * j } else { per };
    let region = Region {
        start: plan.offset + per * j * spec.bs,
        blocks: slice_blocks,
        bs: spec.bs,
    };
    // With holes one pass issues one I/O per block and stride, as fio's
    // rw=read:8k does before it reaches the end.
    let pass = match spec.stride {
        stride if stride > 0 => slice_blocks.div_ceil(1 + stride as u64 / spec.bs) * spec.bs,
        _ => region.len(),
    };
    match spec.zones {
        Some(z) => {
            let zone = Region {
                blocks: (z.range / spec.bs).clamp(1, region.blocks.max(1)),
                ..region
            };
            (
                OffsetPattern::sequential(zone, 0).in_zones(z, region.len()),
                pass,
            )
        }
        None => (OffsetPattern::sequential(region, spec.stride), pass),
    }
}

pub(super) fn worker_configs(
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
    let share = |total: u64, j: u64| total / jobs + u64::from(j < total % jobs);
    (0..jobs)
        .map(|j| {
            let (pattern, budget) = worker_pattern(spec, plan, j, jobs);
            let budget = match io_blocks {
                Some(total) => share(total, j) * spec.bs,
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
                io_flags: spec.io_flags(),
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
                budget_ios: spec.number_ios.map(|n| share(n, j)),
                ramp_in_budget: spec.ramp_in_pass,
                ramp: Duration::from_secs_f64(spec.ramp_s),
                runtime: spec.runtime_s.map(Duration::from_secs_f64),
                fsync_every: spec.flush_every(),
                ioprio: spec.ioprio,
                cpus: spec
                    .cpus_allowed
                    .clone()
                    .map(|list| (list, spec.cpus_allowed_policy)),
                poisson: spec.arrivals == crate::spec::Arrivals::Poisson,
                invalidate_each: (spec.invalidate && !spec.direct && spec.runtime_s.is_some())
                    .then_some(ByteRange {
                        offset: plan.offset,
                        len: plan.size,
                    }),
                sync_data_only: spec.fdatasync > 0,
                verify: None,
                zoned: None,
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
                // Given by plan_workers, which knows the group's streams.
                start_after: worker::StartAfter {
                    delay: Duration::from_secs_f64(spec.start_delay_s),
                    streams: Vec::new(),
                },
                stream_end: Arc::default(),
                flow: None,
                flow_sleep: Duration::from_micros(spec.flow_sleep_us),
                cmdprio: spec.cmdprio.clone(),
            }
        })
        .collect()
}

/// The workers of a group of streams, planned: each worker's config and
/// file, one accumulator per stream and target, and the workers per stream.
pub(super) struct Planned {
    pub(super) jobs: Vec<(WorkerConfig, File)>,
    pub(super) accumulators: Vec<TargetAccumulator>,
    pub(super) stream_workers: Vec<usize>,
    /// Per stream: the engine settings chosen for this run.
    pub(super) tunings: Vec<Option<EngineTuning>>,
}

/// Opens each worker's descriptors (and, with `--verify`, the block map of
/// each target a stream writes) before anything starts.
pub(super) fn plan_workers(
    streams: &[Stream],
    keep_intervals: bool,
    recording: Option<&crate::trace::record::Recording>,
) -> anyhow::Result<Planned> {
    let mut jobs = Vec::new();
    let mut accumulators: Vec<TargetAccumulator> = Vec::new();
    let mut stream_workers = vec![0usize; streams.len()];
    let mut zoned_devices = std::collections::HashMap::new();
    for (s, stream) in streams.iter().enumerate() {
        let spec = stream.spec;
        let writes = spec.rw.writes(spec.rwmix_read);
        let run_id: u64 = rand::random();
        for (t, target) in stream.targets.iter().enumerate() {
            let slot = accumulators.len();
            let map = (writes && spec.verify != VerifyMode::Off)
                .then(|| block_map(spec, &target.plan, run_id));
            // One table per device, whichever streams (fio's clones and
            // jobs) write it: their write pointers are the device's.
            let zoned = match zoned_devices.get(&target.plan.path) {
                Some(shared) if spec.zoned.is_zbd() => Some(Arc::clone(shared)),
                _ => zoned_device(spec, target)?,
            };
            if let Some(device) = &zoned {
                zoned_devices
                    .entry(target.plan.path.clone())
                    .or_insert_with(|| Arc::clone(device));
            }
            for mut config in worker_configs(spec, slot, &target.plan, stream_workers[s]) {
                if let Some(replay) = &spec.replay {
                    play(&mut config, replay, t, &target.plan)?;
                }
                if let Some(recording) = recording {
                    config.record = Some(recording.sink(slot as u16));
                }
                let write =
                    spec.rw.modifies(spec.rwmix_read) || spec.engine.caps().opens_read_write;
                let file = target.open_for_engine(spec.direct, write)?;
                if spec.fadvise && !spec.direct {
                    let hint = match spec.rw.is_random() {
                        true => libc::POSIX_FADV_RANDOM,
                        false => libc::POSIX_FADV_SEQUENTIAL,
                    };
                    crate::util::advise(&file, 0, 0, hint);
                }
                if let Some(map) = &map {
                    config.verify = Some(WorkerVerify {
                        map: map.clone(),
                        read_back: match spec.verify {
                            VerifyMode::Interleaved => Some(target.open(spec.direct, false)?),
                            _ => None,
                        },
                    });
                }
                config.zoned = zoned.clone();
                jobs.push((config, file));
                stream_workers[s] += 1;
            }
            let watch = target.open(false, false)?;
            accumulators.push(TargetAccumulator::new(
                (s, t),
                spec,
                keep_intervals,
                watch,
                map,
            ));
        }
    }
    let tunings = tune(streams, &mut jobs, &stream_workers);
    link_waits(streams, &mut jobs, &stream_workers);
    Ok(Planned {
        jobs,
        accumulators,
        stream_workers,
        tunings,
    })
}

/// With `--zonemode zbd`: the device's zones as it reports them, read
/// through a descriptor of its own (zone resets need one open for writing).
fn zoned_device(
    spec: &WorkloadSpec,
    target: &crate::run::PreparedTarget,
) -> anyhow::Result<Option<Arc<crate::engine::zones::ZonedDevice>>> {
    if !spec.zoned.is_zbd() {
        return Ok(None);
    }
    let Some(zones) = target.facts.device.as_ref().and_then(|d| d.zoned) else {
        anyhow::bail!(
            "target {}: --zonemode zbd needs a zoned block device",
            target.plan.name
        );
    };
    let file = target.open(false, spec.rw.modifies(spec.rwmix_read))?;
    let device = crate::engine::zones::ZonedDevice::open(
        file,
        zones.zone_bytes,
        zones.max_open_zones,
        spec.zoned,
    )
    .map_err(|e| anyhow::anyhow!("target {}: cannot read its zones: {e}", target.plan.name))?;
    Ok(Some(Arc::new(device)))
}

/// Gives each worker its stream's end, the ends of the streams its stream
/// waits for (`--wait-for`), and its flow group (`--flow`, one per
/// `--flow-id` among the group's streams).
fn link_waits(streams: &[Stream], jobs: &mut [(WorkerConfig, File)], stream_workers: &[usize]) {
    let ends: Vec<Arc<worker::StreamEnd>> = stream_workers
        .iter()
        .map(|&n| Arc::new(worker::StreamEnd::new(n)))
        .collect();
    let mut flows: std::collections::HashMap<u32, Arc<worker::FlowGroup>> = Default::default();
    let mut first = 0;
    for (s, &count) in stream_workers.iter().enumerate() {
        let awaited: Vec<Arc<worker::StreamEnd>> = streams[s]
            .spec
            .wait_for
            .iter()
            .filter_map(|name| streams.iter().position(|o| o.spec.name == *name))
            .map(|o| ends[o].clone())
            .collect();
        let spec = streams[s].spec;
        let flow = (spec.flow > 0).then(|| {
            let group = flows.entry(spec.flow_id).or_default();
            (group.clone(), spec.flow)
        });
        for (config, _) in &mut jobs[first..first + count] {
            config.stream_end = ends[s].clone();
            config.start_after.streams = awaited.clone();
            config.flow = flow.clone();
        }
        first += count;
    }
}

/// The map of what each block of `plan` holds, for `--verify`.
fn block_map(spec: &WorkloadSpec, plan: &TargetPlan, run_id: u64) -> Arc<BlockMap> {
    let blocks = plan.size / spec.bs;
    let mut map = BlockMap::new(plan.offset, spec.bs, blocks, run_id, spec.seed);
    // One sequential writer leaves no block before its last one unwritten:
    // a later read-only check can tell a lost block.
    if spec.rw == crate::spec::RwMode::Write && spec.numjobs == 1 && spec.replay.is_none() {
        map.flags = crate::util::verify::header::IN_ORDER;
    }
    Arc::new(map)
}

/// Each stream's completion wait, chosen with every stream's workers
/// counted (they share the CPUs), given to its workers.
fn tune(
    streams: &[Stream],
    jobs: &mut [(WorkerConfig, File)],
    stream_workers: &[usize],
) -> Vec<Option<EngineTuning>> {
    let regime = Regime {
        workers: jobs.len(),
        in_flight: jobs.iter().map(|(c, _)| u64::from(c.depth)).sum(),
        cpus: crate::engine::tuning::usable_cpus(),
        queue: streams
            .iter()
            .flat_map(|s| s.targets)
            .filter_map(|t| t.facts.device.as_ref()?.nr_requests)
            .min(),
    };
    let tunings: Vec<Option<EngineTuning>> = streams
        .iter()
        .map(|stream| choose_tuning(stream.spec, regime))
        .collect();
    let mut first = 0;
    for (s, &count) in stream_workers.iter().enumerate() {
        for (config, _) in &mut jobs[first..first + count] {
            config.tuning = tunings[s].clone();
        }
        first += count;
    }
    tunings
}

/// Makes `config` the worker of a replay that plays the trace's device of
/// target `t`: its script, buffers for its longest I/O, no size bound.
pub(super) fn play(
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
    config.budget_ios = None;
    config.script = Some(
        Script::play(trace.clone(), part)
            .with_context(|| format!("cannot start reading {}", trace.path().display()))?,
    );
    Ok(())
}

/// Starts one thread per worker; they wait on `gate`.
pub(super) fn spawn_workers(
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
pub(super) const SNAPSHOT_WORKERS: usize = 8;
