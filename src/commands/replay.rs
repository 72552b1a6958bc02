//! `fathom replay`: a trace and the targets to play it on, made into a
//! workload. The trace is read and checked against the targets here, before
//! anything is created; the run itself is an ordinary workload whose
//! workers follow the trace (`trace::script`).

use crate::spec::replay::ReplaySpec;
use crate::spec::{RwMode, WorkloadSpec};
use crate::trace::Trace;
use crate::trace::file::DeviceIos;
use crate::util::error::UsageError;
use crate::util::units::format_bytes;
use std::path::PathBuf;
use std::sync::Arc;

/// The trace's first I/O is due this long after the workers start (the
/// replay's ramp), so that every worker is past its start-up and the first
/// I/Os are not late for fathom's own reasons.
pub const LEAD_S: f64 = 0.01;

/// Replay's depth when none is given: a trace's bursts need room to be
/// issued when they are due (fio's replay is closed-loop at its iodepth).
pub const DEFAULT_IODEPTH: u32 = 32;

/// What to replay and how, as asked.
#[derive(Debug, Clone)]
pub struct ReplayRequest {
    pub trace: PathBuf,
    /// DEVICE=TARGET pairs: which of the trace's devices each target plays.
    pub map: Vec<(String, String)>,
    /// None: as fast as possible.
    pub speed: Option<f64>,
    pub loops: u32,
    pub from_s: f64,
    pub to_s: Option<f64>,
    pub wrap: bool,
    /// The workload settings the replay runs with ([`kept`]): its
    /// targets, depth, engine, direct I/O, time limit and write
    /// permissions. What it does comes from the trace.
    pub spec: WorkloadSpec,
}

/// The settings of `job` a replay of a trace keeps: its targets, name,
/// depth, engine, direct I/O, time limit and write permissions; what the
/// job would have done itself is not.
pub fn kept(job: &WorkloadSpec) -> WorkloadSpec {
    let mut spec = WorkloadSpec::defaults(job.targets.clone());
    spec.name = job.name.clone();
    spec.iodepth = job.iodepth;
    spec.runtime_s = job.runtime_s;
    spec.direct = job.direct;
    spec.engine = job.engine;
    spec.null_latency_ns = job.null_latency_ns;
    spec.overwrite = job.overwrite;
    spec.destroy_data = job.destroy_data;
    spec.even_if_mounted = job.even_if_mounted;
    spec
}

/// The workload that plays `request`, its trace read and windowed.
pub fn workload(request: &ReplayRequest) -> Result<WorkloadSpec, UsageError> {
    check(request)?;
    let seconds = |s: f64| (s * 1e9).round() as u64;
    let trace = Trace::open(
        &request.trace,
        seconds(request.from_s),
        request.to_s.map(seconds),
    )
    .map_err(|e| UsageError(e.to_string()))?;
    playing(request, Arc::new(trace))
}

/// The settings of `request` that need no trace.
fn check(request: &ReplayRequest) -> Result<(), UsageError> {
    let fail = |m: String| Err(UsageError(m));
    if let Some(s) = request.speed
        && !(s.is_finite() && s > 0.0)
    {
        return fail(format!(
            "--speed {s}: a speed above 0 (2x plays twice as fast)"
        ));
    }
    if request.loops == 0 {
        return fail("--loop 0: play the trace at least once".into());
    }
    if request.to_s.is_some_and(|to| to <= request.from_s) {
        return fail("--to must be later than --from".into());
    }
    Ok(())
}

/// The workload that plays `request` from `trace`, read and windowed as
/// the request says.
fn playing(request: &ReplayRequest, trace: Arc<Trace>) -> Result<WorkloadSpec, UsageError> {
    let fail = |m: String| Err(UsageError(m));
    let name = request.trace.display().to_string();
    if trace.timeless && request.speed.is_some() {
        return fail(format!(
            "{name}: a {} has no times to play it at: play it --as-fast-as-possible",
            trace.format
        ));
    }
    if trace.all().ios == 0 {
        return fail(format!("{name}: no I/O between --from and --to"));
    }
    let devices = assign(&trace, &request.spec.targets, &request.map, &name)?;
    let played: Vec<DeviceIos> = devices
        .iter()
        .filter_map(|d| trace.device(d))
        .map(|d| trace.of_device(d))
        .collect();
    let ops = |count: fn(&DeviceIos) -> u64| played.iter().map(count).sum::<u64>();
    let (reads, writes, trims) = (ops(|d| d.reads), ops(|d| d.writes), ops(|d| d.trims));
    let mut spec = request.spec.clone();
    (spec.rw, spec.rwmix_read) = match (reads, writes, trims) {
        (_, 0, 0) => (RwMode::RandRead, 100),
        (0, _, 0) => (RwMode::RandWrite, 0),
        (r, w, 0) => (RwMode::RandRw, (r * 100 / (r + w)) as u8),
        (_, 0, _) => (RwMode::RandTrim, 0),
        _ => (RwMode::TrimWrite, 0),
    };
    if spec.direct
        && let Some(io) = played
            .iter()
            .filter_map(|d| d.first_unaligned)
            .min_by_key(|io| (io.line, io.t_ns))
    {
        let place = match io.line {
            0 => format!("{name}: an I/O at {:.6} s", io.t_ns as f64 / 1e9),
            line => format!("{name}:{line}"),
        };
        return fail(format!(
            "{place}: {} of {} bytes at offset {} is not aligned to 512 bytes, which O_DIRECT needs: play the trace --buffered",
            io.op.name(),
            io.len,
            io.offset
        ));
    }
    spec.bs = trace.alignment().max(512);
    spec.ramp_s = LEAD_S;
    let extent = played.iter().map(|d| d.extent).max().unwrap_or(0);
    let extent = extent.div_ceil(spec.bs).max(1) * spec.bs;
    spec.size = (!request.wrap).then_some(extent);
    check_extents(&spec, &trace, &devices, request.wrap, &name)?;
    spec.replay = Some(ReplaySpec {
        trace: name,
        format: trace.format.to_string(),
        devices,
        speed: request.speed,
        wrap: request.wrap,
        from_s: request.from_s,
        to_s: request.to_s,
        loops: request.loops,
        loaded: Some(trace),
    });
    Ok(spec)
}

/// The workload of a job that plays `trace` on its targets (a fio job
/// file's `read_iolog`, already read whole): the job's name, depth, engine,
/// direct I/O, time limit and write permissions are kept; what it would
/// have done itself is not.
pub fn of_job(
    job: &WorkloadSpec,
    trace: Arc<Trace>,
    speed: Option<f64>,
) -> Result<WorkloadSpec, UsageError> {
    let request = ReplayRequest {
        trace: trace.path().to_path_buf(),
        map: Vec::new(),
        speed,
        loops: 1,
        from_s: 0.0,
        to_s: None,
        wrap: false,
        spec: kept(job),
    };
    check(&request)?;
    playing(&request, trace)
}

/// Which trace device each target plays: those `--map` names, the rest in
/// order. Every device of the trace is played unless `--map` picks some.
fn assign(
    trace: &Trace,
    targets: &[String],
    map: &[(String, String)],
    name: &str,
) -> Result<Vec<String>, UsageError> {
    let listed = || trace.devices.join(", ");
    let mut devices: Vec<Option<String>> = vec![None; targets.len()];
    for (device, target) in map {
        if !trace.devices.contains(device) {
            return Err(UsageError(format!(
                "--map {device}={target}: {name} has no device {device} (it has {})",
                listed()
            )));
        }
        let Some(t) = targets.iter().position(|x| x == target) else {
            return Err(UsageError(format!(
                "--map {device}={target}: {target} is not one of the targets given"
            )));
        };
        devices[t] = Some(device.clone());
    }
    if map.is_empty() {
        if trace.devices.len() > targets.len() {
            return Err(UsageError(format!(
                "{name} names {} devices ({}) and {} given: give a target for each, or --map DEVICE=TARGET the ones to play",
                trace.devices.len(),
                listed(),
                match targets.len() {
                    1 => "1 target was".to_string(),
                    n => format!("{n} targets were"),
                }
            )));
        }
        for (slot, device) in devices.iter_mut().zip(&trace.devices) {
            *slot = Some(device.clone());
        }
    }
    Ok(devices.into_iter().map(|d| d.unwrap_or_default()).collect())
}

/// Without `--wrap`, every existing target must hold the furthest I/O of
/// the device it plays.
fn check_extents(
    spec: &WorkloadSpec,
    trace: &Trace,
    devices: &[String],
    wrap: bool,
    name: &str,
) -> Result<(), UsageError> {
    let mut whole = spec.clone();
    whole.size = None;
    for (t, target) in spec.targets.iter().enumerate() {
        let Some(d) = devices.get(t).and_then(|x| trace.device(x)) else {
            continue;
        };
        let plan = crate::run::target::inspect(&whole, target, t)?;
        let played = trace.of_device(d);
        let largest = u64::from(played.largest);
        if plan.size < largest {
            return Err(UsageError(format!(
                "target {target}: {} is smaller than an I/O of {name} ({})",
                format_bytes(plan.size),
                format_bytes(largest)
            )));
        }
        let extent = played.extent;
        if !wrap && !plan.create && plan.size < extent {
            return Err(UsageError(format!(
                "target {target}: {name} reaches {} on {}, past its end ({}): give --wrap to fold the offsets into it",
                format_bytes(extent),
                trace.devices[d as usize],
                format_bytes(plan.size)
            )));
        }
    }
    Ok(())
}
