//! `fathom pts`: one test of SNIA's Solid State Performance Test
//! Specification on one block device. Purge, workload-independent
//! preconditioning (twice the active range in 128k sequential writes), then
//! rounds of the test's matrix until its tracking variable reaches steady
//! state by the specification's rule (`measure::snia_window`) or the
//! rounds run out. Each cell of a round is an ordinary workload run by the
//! session, so the safety rules, engines and figures are those of `run`.

use crate::engine::trim::TrimMethod;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::snia_window;
use crate::result::pts::{PtsCell, PtsEnd, PtsResult, PtsRound};
use crate::result::{RunResult, WorkloadResult};
use crate::run::Session;
use crate::spec::pts::{PtsSpec, PtsTest, Purge};
use crate::spec::{RwMode, WorkloadSpec};
use crate::util::error::UsageError;
use crate::util::stop::{Interrupted, StopFlag};
use crate::util::units::{format_block_size, format_bytes};
use anyhow::Context;
use std::os::unix::fs::FileTypeExt;
use std::time::Instant;

/// The active range rounds down to this.
const RANGE_GRAIN: u64 = 1 << 20;
/// Write saturation ends once this many times the active range is written.
const SATURATION_WRITES: u64 = 4;
/// A purge discards this much at a time, so that a signal stops it soon.
const PURGE_CHUNK: u64 = 1 << 30;

/// One cell of the test's matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellPlan {
    pub bs: u64,
    pub read_pct: u8,
    pub sequential: bool,
}

impl CellPlan {
    /// "4k 65/35", "1m seq write".
    pub fn label(&self) -> String {
        crate::result::pts::cell_label(self.bs, self.read_pct, self.sequential)
    }
}

/// The test checked against its device: what it will run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub active_range: u64,
    pub cells: Vec<CellPlan>,
    /// Index into `cells` of the tracking variable's cell.
    pub tracking: usize,
}

impl Plan {
    /// The longest the rounds can take: every cell for `round_s`, for
    /// `max_rounds` rounds (write saturation: `max_time_s`).
    pub fn rounds_bound_s(&self, spec: &PtsSpec) -> f64 {
        match spec.test {
            PtsTest::WriteSaturation => spec.max_time_s,
            _ => self.cells.len() as f64 * spec.round_s * f64::from(spec.max_rounds),
        }
    }

    /// Rounds after `done` at most: the time left when no earlier round
    /// reaches steady state.
    pub fn rounds_left_s(&self, spec: &PtsSpec, done: u32) -> f64 {
        match spec.test {
            PtsTest::WriteSaturation => spec.max_time_s,
            _ => {
                self.cells.len() as f64
                    * spec.round_s
                    * f64::from(spec.max_rounds.saturating_sub(done))
            }
        }
    }

    /// Bytes the preconditioning writes: twice the active range.
    pub fn precondition_bytes(&self) -> u64 {
        2 * self.active_range
    }

    /// "4k 0/100 IOPS".
    pub fn tracking_label(&self, test: PtsTest) -> String {
        let figure = match test {
            PtsTest::Iops | PtsTest::WriteSaturation => "IOPS",
            PtsTest::Throughput => "bandwidth",
            PtsTest::Latency => "mean latency",
        };
        format!("{} {figure}", self.cells[self.tracking].label())
    }
}

/// The matrix of `spec`, and the cell the specification tracks: 4k writes
/// for IOPS and latency, 1024k sequential writes for throughput (or the
/// first cell, when a partial matrix leaves it out).
pub fn cells(spec: &PtsSpec) -> (Vec<CellPlan>, usize) {
    let sequential = spec.test == PtsTest::Throughput;
    let cells: Vec<CellPlan> = spec
        .block_sizes
        .iter()
        .flat_map(|&bs| {
            spec.mixes.iter().map(move |&read_pct| CellPlan {
                bs,
                read_pct,
                sequential,
            })
        })
        .collect();
    let wanted = match spec.test {
        PtsTest::Throughput => (1 << 20, 0),
        _ => (4 << 10, 0),
    };
    let tracking = cells
        .iter()
        .position(|c| (c.bs, c.read_pct) == wanted)
        .unwrap_or(0);
    (cells, tracking)
}

/// Checks the test against its device before anything is written: a block
/// device large enough for the active range, a purge it can do, and the
/// safety rules of writing to it.
pub fn check(spec: &PtsSpec) -> Result<Plan, UsageError> {
    spec.validate().map_err(UsageError)?;
    let meta =
        std::fs::metadata(&spec.device).map_err(|e| UsageError(format!("{}: {e}", spec.device)))?;
    if !meta.file_type().is_block_device() {
        return Err(UsageError(format!(
            "{}: not a block device (the specification purges and preconditions a whole device)",
            spec.device
        )));
    }
    let mut whole = WorkloadSpec::defaults(vec![spec.device.clone()]);
    whole.destroy_data = spec.destroy_data;
    whole.even_if_mounted = spec.even_if_mounted;
    let plan = crate::run::target::inspect(&whole, &spec.device, 0)?;
    if matches!(spec.purge, Purge::Format | Purge::Sanitize) {
        check_nvme_purge(spec.purge, &spec.device)?;
    }
    let active = plan.size * u64::from(spec.active_range_pct) / 100 / RANGE_GRAIN * RANGE_GRAIN;
    let largest = spec.block_sizes.iter().copied().max().unwrap_or(0);
    if active < 16 * largest {
        return Err(UsageError(format!(
            "{}: an active range of {} ({}% of {}) is too small for 16 blocks of {}",
            spec.device,
            format_bytes(active),
            spec.active_range_pct,
            format_bytes(plan.size),
            format_block_size(largest)
        )));
    }
    if spec.purge == Purge::Discard {
        let rdev = std::os::unix::fs::MetadataExt::rdev(&meta);
        let facts = crate::measure::facts::device_facts(libc::major(rdev), libc::minor(rdev));
        if let Some(d) = facts.filter(|d| d.discards == Some(false)) {
            return Err(UsageError(format!(
                "--purge discard: {} does not take discards (its queue/discard_max_bytes is 0); purge it another way and give --purge none",
                d.name
            )));
        }
    }
    // Writing to the device is checked as `run` checks it (signatures,
    // mounts), naming the device.
    crate::run::check_plan(&[precondition(spec, active)])?;
    let (cells, tracking) = cells(spec);
    Ok(Plan {
        active_range: active,
        cells,
        tracking,
    })
}

/// Refuses a purge by NVMe command that the device cannot take, naming
/// why: not an NVMe namespace, a controller without the command.
fn check_nvme_purge(purge: Purge, device: &str) -> Result<(), UsageError> {
    let flag = format!("--purge {}", purge.name());
    // A format erases the whole namespace at once, past the active range
    // and past any stop: what the namespace holds refuses it whatever the
    // flags say.
    let size = crate::gate::read::size_of(std::path::Path::new(device)).map_err(UsageError)?;
    let risks = crate::gate::device::risks_of_writing(std::path::Path::new(device), size)
        .map_err(|e| UsageError(format!("{flag}: {device}: {e}")))?;
    let signatures = risks
        .holds_data
        .iter()
        .filter(|s| *s != crate::gate::device::NO_SIGNATURE);
    if let Some(what) = risks.in_use.iter().chain(signatures).next() {
        return Err(UsageError(format!(
            "{flag}: {device}: {what}: fathom formats only a namespace that holds no file system, partition table or volume and is not in use (wipe it first, e.g. wipefs -a)"
        )));
    }
    let caps = crate::measure::drive::nvme::capabilities(std::path::Path::new(device))
        .map_err(|why| UsageError(format!("{flag}: {device}: {why}")))?;
    match purge {
        Purge::Format if !caps.format => Err(UsageError(format!(
            "{flag}: {device}'s controller does not support Format NVM (OACS bit 1 is clear); use --purge discard"
        ))),
        Purge::Sanitize if caps.sanitize == 0 => Err(UsageError(format!(
            "{flag}: {device}'s controller has no sanitize operation (SANICAP is 0); use --purge format"
        ))),
        Purge::Sanitize => Err(UsageError(format!(
            "{flag}: fathom does not issue Sanitize yet (its operations run in the background, for minutes to hours); use --purge format, or `nvme sanitize` and --purge none"
        ))),
        _ => Ok(()),
    }
}

/// Twice the active range in 128k sequential writes of fresh data.
fn precondition(spec: &PtsSpec, active: u64) -> WorkloadSpec {
    let mut w = base(spec, "pts-precondition", active);
    w.rw = RwMode::Write;
    w.rwmix_read = 0;
    w.bs = 128 << 10;
    w.numjobs = 1;
    w.iodepth = 32;
    w.io_size = Some(2 * active);
    w.runtime_s = None;
    w
}

fn base(spec: &PtsSpec, name: &str, active: u64) -> WorkloadSpec {
    let mut w = WorkloadSpec::defaults(vec![spec.device.clone()]);
    w.name = name.into();
    w.size = Some(active);
    w.direct = true;
    w.engine = spec.engine;
    w.destroy_data = spec.destroy_data;
    w.even_if_mounted = spec.even_if_mounted;
    w
}

/// The workload of one cell of round `round`.
fn cell_workload(spec: &PtsSpec, cell: CellPlan, round: u32, active: u64) -> WorkloadSpec {
    let mut w = base(spec, &format!("pts-{}-round-{round}", spec.test), active);
    w.rw = match (cell.sequential, cell.read_pct) {
        (true, 100) => RwMode::Read,
        (true, _) => RwMode::Write,
        (false, 100) => RwMode::RandRead,
        (false, 0) => RwMode::RandWrite,
        (false, _) => RwMode::RandRw,
    };
    w.rwmix_read = cell.read_pct;
    w.bs = cell.bs;
    (w.numjobs, w.iodepth) = match spec.test {
        PtsTest::Latency => (1, 1),
        _ => (spec.threads, spec.depth),
    };
    w.runtime_s = Some(spec.round_s);
    w
}

/// Runs the test on `session` (which owns what it prepares). `on_round`
/// is handed the result so far after the purge, the preconditioning and
/// every round. The plan is `check`'s. With `resumed`, an interrupted
/// result of the same test, the rounds go on after its last (its purge and
/// preconditioning stand when it finished a round).
pub fn run(
    spec: &PtsSpec,
    plan: &Plan,
    session: &mut Session,
    stop: &StopFlag,
    resumed: Option<PtsResult>,
    on_round: &mut dyn FnMut(&PtsResult) -> anyhow::Result<()>,
) -> anyhow::Result<PtsResult> {
    let started = Instant::now();
    // A test stopped before its first round may have stopped inside the
    // preconditioning: it starts again.
    let mut result = match resumed.filter(|r| !r.rounds.is_empty()) {
        Some(mut earlier) => {
            earlier.interrupted = false;
            earlier
        }
        None => prepare(spec, plan, session, stop)?,
    };
    let before_s = result.runtime_s;
    on_round(&result)?;
    let mut written: u64 = result
        .rounds
        .iter()
        .flat_map(|r| r.cells.iter().map(|c| c.written_bytes))
        .sum();
    let mut round = result.rounds.len() as u32;
    result.end = loop {
        if stop.is_set() || result.interrupted {
            break PtsEnd::Interrupted;
        }
        round += 1;
        let mut cells = Vec::with_capacity(plan.cells.len());
        for (c, &cell) in plan.cells.iter().enumerate() {
            session.phase(
                format!("PTS round {round}, cell {} of {}", c + 1, plan.cells.len()),
                Some((u64::from(round - 1), u64::from(spec.max_rounds))),
            );
            let w = match session.run_one(&cell_workload(spec, cell, round, plan.active_range)) {
                Err(e) if e.is::<Interrupted>() => break,
                other => workload(other)?,
            };
            result.interrupted |= w.interrupted;
            cells.push(measured(cell, &w)?);
            if w.interrupted {
                break;
            }
        }
        if cells.len() < plan.cells.len() {
            break PtsEnd::Interrupted;
        }
        written += cells.iter().map(|c| c.written_bytes).sum::<u64>();
        let tracking_value = cells[plan.tracking].figure(spec.test);
        result.rounds.push(PtsRound {
            round,
            cells,
            tracking_value,
        });
        result.runtime_s = before_s + started.elapsed().as_secs_f64();
        if spec.test == PtsTest::WriteSaturation {
            on_round(&result)?;
            if written >= SATURATION_WRITES * plan.active_range {
                break PtsEnd::Written;
            }
            if started.elapsed().as_secs_f64() + spec.round_s > spec.max_time_s {
                break PtsEnd::TimeLimit;
            }
            continue;
        }
        let values: Vec<f64> = result.rounds.iter().map(|r| r.tracking_value).collect();
        result.window = snia_window::judge(&values);
        on_round(&result)?;
        if result.window.is_some_and(|w| w.holds) {
            break PtsEnd::SteadyState;
        }
        if round >= spec.max_rounds {
            break PtsEnd::MaxRounds;
        }
    };
    result.interrupted |= result.end == PtsEnd::Interrupted;
    result.runtime_s = before_s + started.elapsed().as_secs_f64();
    Ok(result)
}

/// The purge and the workload-independent preconditioning: a result with
/// no round yet.
fn prepare(
    spec: &PtsSpec,
    plan: &Plan,
    session: &mut Session,
    stop: &StopFlag,
) -> anyhow::Result<PtsResult> {
    let started = Instant::now();
    let purge_s = match spec.purge {
        Purge::Discard => Some(purge(&spec.device, plan.active_range, stop)?),
        Purge::Format => Some(format_purge(&spec.device)?),
        // Refused by `check`.
        Purge::Sanitize => anyhow::bail!("--purge sanitize is not carried out"),
        Purge::None => None,
    };
    let t = Instant::now();
    session.phase("PTS preconditioning", None);
    let pre = workload(session.run_one(&precondition(spec, plan.active_range)))?;
    Ok(PtsResult {
        spec: spec.clone(),
        target: pre
            .targets
            .first()
            .map(|t| t.facts.clone())
            .context("no target")?,
        active_range_bytes: plan.active_range,
        purge_s,
        precondition_bytes: pre.total.write.bytes,
        precondition_s: t.elapsed().as_secs_f64(),
        tracking: plan.tracking_label(spec.test),
        rounds: Vec::new(),
        window: None,
        end: PtsEnd::MaxRounds,
        departures: spec.departures(),
        runtime_s: started.elapsed().as_secs_f64(),
        interrupted: pre.interrupted,
    })
}

fn workload(run: anyhow::Result<RunResult>) -> anyhow::Result<WorkloadResult> {
    run?.into_kind()
        .ok_or_else(|| anyhow::anyhow!("a pts cell ran as something other than one workload"))
}

/// One cell's figures from its workload: every direction together.
fn measured(cell: CellPlan, w: &WorkloadResult) -> anyhow::Result<PtsCell> {
    let mut all = LatencyHistogram::new();
    let (mut iops, mut bw_bytes) = (0.0, 0.0);
    for (_, d) in w.total.named() {
        all.add(&LatencyHistogram::decode(&d.histogram).map_err(anyhow::Error::msg)?);
        iops += d.iops;
        bw_bytes += d.bw_bytes;
    }
    let summary = all.summary();
    Ok(PtsCell {
        bs: cell.bs,
        read_pct: cell.read_pct,
        sequential: cell.sequential,
        iops,
        bw_bytes,
        mean_ns: summary.mean,
        max_ns: summary.max,
        p99_999_ns: all.value_at_percentile(99.999),
        written_bytes: w.total.write.bytes,
    })
}

/// Formats the namespace `device` with a user data erase; the seconds it
/// took.
fn format_purge(device: &str) -> anyhow::Result<f64> {
    let started = Instant::now();
    let write = crate::gate::target::Access {
        write: true,
        ..Default::default()
    };
    let file = crate::gate::target::open(std::path::Path::new(device), write)
        .with_context(|| format!("--purge format: cannot open {device}"))?;
    // A drive may take minutes to erase; the kernel waits this long.
    crate::measure::drive::nvme::format_erasing(&file, std::time::Duration::from_secs(3600))
        .map_err(|why| anyhow::anyhow!("--purge format of {device} failed: {why}"))?;
    Ok(started.elapsed().as_secs_f64())
}

/// Discards the active range of `device`; the seconds it took.
fn purge(device: &str, active: u64, stop: &StopFlag) -> anyhow::Result<f64> {
    let started = Instant::now();
    let write = crate::gate::target::Access {
        write: true,
        ..Default::default()
    };
    let file = crate::gate::target::open(std::path::Path::new(device), write)
        .with_context(|| format!("--purge discard: cannot open {device}"))?;
    let mut at = 0;
    while at < active {
        if stop.is_set() {
            return Err(Interrupted.into());
        }
        let len = (active - at).min(PURGE_CHUNK);
        let r = TrimMethod::Discard.trim(&file, at, len as u32);
        if r < 0 {
            anyhow::bail!(
                "--purge discard of {device} failed at {}: {}",
                format_bytes(at),
                std::io::Error::from_raw_os_error(-r)
            );
        }
        at += len;
    }
    Ok(started.elapsed().as_secs_f64())
}
