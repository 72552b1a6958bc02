//! Results of `fathom train`: a training run's accelerator utilization
//! (AU) with its pass or fail, the exact tails of each batch's wait for
//! data and of each sample's read, and, with `--find-max-accelerators`,
//! the curve of AU against accelerators; a checkpoint run's time per
//! checkpoint, its rate and each file's tails.

use super::workload::LatencySummary;
use crate::measure::cpu::CpuTime;
use crate::spec::train::{CheckpointSpec, TrainingSpec};
use serde::{Deserialize, Serialize};

/// A histogram's summary beside the histogram itself (encoded as a
/// workload's), so that merged runs keep exact tails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tails {
    /// Operations timed.
    pub count: u64,
    pub lat_ns: LatencySummary,
    pub histogram: String,
    /// Each second's operations with their histogram: what `fathom
    /// check` resamples. Absent in older results and checkpoints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<crate::measure::intervals::Interval>,
}

impl Tails {
    pub fn of(h: &crate::measure::histogram::LatencyHistogram) -> Tails {
        Tails {
            count: h.count(),
            lat_ns: h.summary(),
            histogram: h.encode(),
            intervals: Vec::new(),
        }
    }
}

/// The dataset a training run read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetFacts {
    pub files: u64,
    pub bytes: u64,
    /// Whether this run made it (untimed) or found it kept by an earlier
    /// run.
    pub made: bool,
    /// Seconds making it took.
    pub generation_s: f64,
    /// The host's memory, and the dataset's size as a multiple of it:
    /// below 5 the page cache can hold much of it, and the run says so.
    pub memory_bytes: u64,
    pub times_memory: f64,
    /// Why the figures may come from memory rather than the storage, when
    /// they may.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk: Option<String>,
    /// What was scaled down from MLPerf's workload (`--files`,
    /// `--sample-size`), beside the full-size dataset MLPerf's rule asks
    /// for at the workload's own sample size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaled: Option<String>,
    /// Samples each epoch leaves out: each accelerator's last partial
    /// batch, dropped as DLIO drops it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_per_epoch: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One epoch, all accelerators together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochResult {
    pub epoch: u32,
    /// Batches each accelerator took.
    pub steps: u64,
    pub elapsed_s: f64,
    /// The mean of the accelerators' AU over the epoch, first step left
    /// out as MLPerf leaves it.
    pub au: f64,
    pub samples: u64,
    pub bytes: u64,
}

/// One accelerator over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceleratorResult {
    /// Under `--mpi`, the rank it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    pub au: f64,
    pub steps: u64,
    pub compute_s: f64,
    pub wait_s: f64,
    /// Time its steps took past their compute time: the host held it
    /// back (lost, as a wait is, not counted as compute).
    #[serde(default)]
    pub overslept_s: f64,
}

/// One step of `--find-max-accelerators`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    pub accelerators: u32,
    pub au: f64,
    pub passed: bool,
    pub samples_per_s: f64,
    pub bytes_per_s: f64,
    pub batch_wait_p99_ns: u64,
    /// The share of the step the host took, not the storage: the
    /// accelerators' oversleep or the loaders' wait for a CPU, whichever
    /// is larger (a busy host's; its AU is suspect past a few percent).
    #[serde(default)]
    pub host_share: f64,
}

/// The largest count of accelerators whose AU met the threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceleratorSearch {
    /// None when not even one accelerator passed.
    pub max_accelerators: Option<u32>,
    /// Every count measured, in the order measured.
    pub steps: Vec<SearchStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingResult {
    pub spec: TrainingSpec,
    pub filesystem: Option<String>,
    pub dataset: DatasetFacts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<f64>,
    /// From the first batch asked for to the last one computed.
    pub elapsed_s: f64,
    /// MLPerf's figure: the mean over epochs of the accelerators' mean
    /// AU (0 to 1).
    pub au: f64,
    pub au_threshold: f64,
    pub passed: bool,
    pub epochs: Vec<EpochResult>,
    pub accelerators: Vec<AcceleratorResult>,
    pub samples: u64,
    pub bytes: u64,
    pub samples_per_s: f64,
    pub bytes_per_s: f64,
    /// Each batch's wait for its data, as the accelerator saw it.
    pub batch_wait: Tails,
    /// Each sample's read, as its loader thread timed it (a rate cap's
    /// wait included).
    pub sample_read: Tails,
    /// Each second's AU, all accelerators together.
    pub au_intervals: Vec<f64>,
    /// Of the time the loader threads ran, the share they waited for a
    /// CPU (None where the kernel does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaders_waited_for_cpu_share: Option<f64>,
    /// The process's CPU time, and per sample read.
    pub cpu: CpuTime,
    pub cpu_ns_per_sample: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<AcceleratorSearch>,
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// The checkpoints written, or read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointPhase {
    pub checkpoints: u32,
    /// Bytes of one checkpoint (this run's ranks' share).
    pub bytes: u64,
    /// Seconds each checkpoint took, from its first rank's start to its
    /// last rank's end (fsync included when written).
    pub seconds: Vec<f64>,
    pub mean_s: f64,
    /// Bytes of every checkpoint over the time they took.
    pub bytes_per_s: f64,
    /// Each file's write (open to fsync and close) or read.
    pub file: Tails,
    pub files: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointResult {
    pub spec: CheckpointSpec,
    pub filesystem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<f64>,
    pub elapsed_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<CheckpointPhase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<CheckpointPhase>,
    /// Whether the page cache was dropped between writing and reading
    /// back; where it was not (it needs root), the reads may come from
    /// memory, and this says so.
    pub cache: String,
    /// A read-back of checkpoints an earlier run kept (`--writes 0`): how
    /// long after their writing ended this run was launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relaunch: Option<Relaunch>,
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// The gap between a checkpoint's write phase and a read phase launched
/// apart from it, as MLPerf Storage v3.0 (Rules 4.7.1) measures it: from
/// the last checkpoint written to the reading process's start, so that a
/// failover step between the two (a cache flush, a remount) is a short
/// programmatic one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Relaunch {
    /// Seconds; negative when the writing and reading hosts' clocks
    /// disagree.
    pub gap_s: f64,
    /// The rules' bound (30 s under v3.0; none under v2.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_s: Option<f64>,
}

impl Relaunch {
    /// Whether the gap broke the rules' bound. A negative gap is the
    /// clocks', not the run's, and is said, not failed.
    pub fn broken(&self) -> bool {
        self.limit_s.is_some_and(|limit| self.gap_s > limit)
    }

    /// The gap as the report says it.
    pub fn describe(&self) -> String {
        let rule = match self.limit_s {
            Some(limit) if self.broken() => {
                format!(": FAILED Rules 4.7.1, which asks for {limit:.0} s at most")
            }
            Some(limit) => format!(" (Rules 4.7.1: within {limit:.0} s)"),
            None => String::new(),
        };
        if self.gap_s < 0.0 {
            return format!(
                "launched {:.1} s before the kept checkpoints' writing ended by the clocks: the writing and reading hosts' clocks disagree{rule}",
                -self.gap_s
            );
        }
        format!(
            "launched {:.1} s after the kept checkpoints' writing ended{rule}",
            self.gap_s
        )
    }
}

/// A `fathom train` run's result: `"run": "training"` or
/// `"checkpoint"` beside the result's `"kind": "train"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "run", rename_all = "lowercase")]
// A document holds a result or two: boxing would only add noise.
#[allow(clippy::large_enum_variant)]
pub enum TrainResult {
    Training(TrainingResult),
    Checkpoint(CheckpointResult),
}

impl TrainResult {
    pub fn failure(&self) -> Option<&String> {
        match self {
            TrainResult::Training(t) => t.failure.as_ref(),
            TrainResult::Checkpoint(c) => c.failure.as_ref(),
        }
    }

    pub fn interrupted(&self) -> bool {
        match self {
            TrainResult::Training(t) => t.interrupted,
            TrainResult::Checkpoint(c) => c.interrupted,
        }
    }

    pub fn started_unix_s(&self) -> Option<f64> {
        match self {
            TrainResult::Training(t) => t.started_unix_s,
            TrainResult::Checkpoint(c) => c.started_unix_s,
        }
    }

    pub fn elapsed_s(&self) -> f64 {
        match self {
            TrainResult::Training(t) => t.elapsed_s,
            TrainResult::Checkpoint(c) => c.elapsed_s,
        }
    }

    pub fn dir(&self) -> &str {
        match self {
            TrainResult::Training(t) => &t.spec.dir,
            TrainResult::Checkpoint(c) => &c.spec.dir,
        }
    }

    pub fn filesystem(&self) -> Option<&String> {
        match self {
            TrainResult::Training(t) => t.filesystem.as_ref(),
            TrainResult::Checkpoint(c) => c.filesystem.as_ref(),
        }
    }

    /// "unet3d on 4 b200", "retinanet on 1 h100 (whatif)",
    /// "checkpoint-llama3-8b".
    pub fn named(&self) -> String {
        match self {
            TrainResult::Training(t) => format!(
                "{} on {} {}{}",
                t.spec.model.name(),
                t.spec.accelerators,
                t.spec.accelerator,
                if t.spec.whatif { " (whatif)" } else { "" }
            ),
            TrainResult::Checkpoint(c) => format!("checkpoint-{}", c.spec.model.name()),
        }
    }
}

impl TrainingResult {
    /// The share of the accelerators' time the host took past their
    /// compute (a busy host's oversleep): AU counts it as lost.
    pub fn host_lag_share(&self) -> f64 {
        let (lag, all) = self.accelerators.iter().fold((0.0, 0.0), |(l, a), x| {
            (
                l + x.overslept_s,
                a + x.compute_s + x.wait_s + x.overslept_s,
            )
        });
        if all > 0.0 { lag / all } else { 0.0 }
    }

    /// The share of the run the host took, not the storage: the
    /// accelerators' oversleep or the loaders' wait for a CPU, whichever
    /// is larger.
    pub fn host_share(&self) -> f64 {
        self.host_lag_share()
            .max(self.loaders_waited_for_cpu_share.unwrap_or(0.0))
    }
}

impl TrainResult {
    /// A run that failed, or a training run whose AU missed its threshold
    /// (a search: one that found no count that passed).
    pub fn failed(&self) -> bool {
        match self {
            TrainResult::Training(t) => {
                t.failure.is_some()
                    || match &t.search {
                        Some(s) => s.max_accelerators.is_none(),
                        None => !t.passed,
                    }
            }
            TrainResult::Checkpoint(c) => {
                c.failure.is_some() || c.relaunch.is_some_and(|r| r.broken())
            }
        }
    }
}

impl Tails {
    fn merged<'a>(all: impl Iterator<Item = &'a Tails> + Clone) -> Result<Tails, String> {
        let mut h = crate::measure::histogram::LatencyHistogram::new();
        for t in all.clone() {
            h.add(&crate::measure::histogram::LatencyHistogram::decode(
                &t.histogram,
            )?);
        }
        Ok(Tails {
            intervals: super::merge::concurrent_intervals(all.map(|t| t.intervals.as_slice()))?,
            ..Tails::of(&h)
        })
    }
}

/// One run as every rank (a host of accelerators) ran it at the same
/// time: AU averaged over every accelerator as MLPerf averages over its
/// ranks, counts added, tails merged exactly, rates over the slowest
/// rank's time; a checkpoint's time per checkpoint the slowest rank's.
pub fn concurrent(ranks: &[(u32, &TrainResult)]) -> Result<TrainResult, String> {
    let Some((_, first)) = ranks.first() else {
        return Err("no training results".into());
    };
    match first {
        TrainResult::Training(_) => {
            let runs = ranks
                .iter()
                .map(|(n, r)| match r {
                    TrainResult::Training(t) => Ok((*n, t)),
                    TrainResult::Checkpoint(_) => Err("the ranks ran different workloads".into()),
                })
                .collect::<Result<Vec<_>, String>>()?;
            concurrent_training(&runs).map(TrainResult::Training)
        }
        TrainResult::Checkpoint(_) => {
            let runs = ranks
                .iter()
                .map(|(n, r)| match r {
                    TrainResult::Checkpoint(c) => Ok((*n, c)),
                    TrainResult::Training(_) => Err("the ranks ran different workloads".into()),
                })
                .collect::<Result<Vec<_>, String>>()?;
            concurrent_checkpoint(&runs).map(TrainResult::Checkpoint)
        }
    }
}

fn first_failure<'a>(ranks: impl Iterator<Item = (u32, Option<&'a String>)>) -> Option<String> {
    ranks
        .into_iter()
        .find_map(|(n, f)| f.map(|f| format!("rank {n}: {f}")))
}

fn concurrent_training(ranks: &[(u32, &TrainingResult)]) -> Result<TrainingResult, String> {
    let first = ranks[0].1;
    let mut out = first.clone();
    out.elapsed_s = ranks.iter().map(|(_, r)| r.elapsed_s).fold(0.0, f64::max);
    out.started_unix_s = ranks
        .iter()
        .filter_map(|(_, r)| r.started_unix_s)
        .reduce(f64::min);
    out.accelerators = ranks
        .iter()
        .flat_map(|(n, r)| {
            r.accelerators.iter().map(|a| AcceleratorResult {
                rank: Some(*n),
                ..a.clone()
            })
        })
        .collect();
    out.spec.accelerators = out.accelerators.len() as u32;
    let weight = |r: &TrainingResult| r.accelerators.len() as f64;
    let all: f64 = ranks.iter().map(|(_, r)| weight(r)).sum::<f64>().max(1.0);
    out.au = ranks.iter().map(|(_, r)| r.au * weight(r)).sum::<f64>() / all;
    out.passed = ranks.iter().all(|(_, r)| r.failure.is_none()) && out.au >= out.au_threshold;
    out.epochs = first
        .epochs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let theirs: Vec<&EpochResult> =
                ranks.iter().filter_map(|(_, r)| r.epochs.get(i)).collect();
            EpochResult {
                epoch: e.epoch,
                steps: e.steps,
                elapsed_s: theirs.iter().map(|t| t.elapsed_s).fold(0.0, f64::max),
                au: ranks
                    .iter()
                    .filter_map(|(_, r)| Some(r.epochs.get(i)?.au * weight(r)))
                    .sum::<f64>()
                    / all,
                samples: theirs.iter().map(|t| t.samples).sum(),
                bytes: theirs.iter().map(|t| t.bytes).sum(),
            }
        })
        .collect();
    out.samples = ranks.iter().map(|(_, r)| r.samples).sum();
    out.bytes = ranks.iter().map(|(_, r)| r.bytes).sum();
    out.samples_per_s = out.samples as f64 / out.elapsed_s.max(1e-9);
    out.bytes_per_s = out.bytes as f64 / out.elapsed_s.max(1e-9);
    out.batch_wait = Tails::merged(ranks.iter().map(|(_, r)| &r.batch_wait))?;
    out.sample_read = Tails::merged(ranks.iter().map(|(_, r)| &r.sample_read))?;
    let seconds = ranks
        .iter()
        .map(|(_, r)| r.au_intervals.len())
        .min()
        .unwrap_or(0);
    out.au_intervals = (0..seconds)
        .map(|s| {
            ranks
                .iter()
                .map(|(_, r)| r.au_intervals[s] * weight(r))
                .sum::<f64>()
                / all
        })
        .collect();
    out.cpu = CpuTime {
        user_s: ranks.iter().map(|(_, r)| r.cpu.user_s).sum(),
        sys_s: ranks.iter().map(|(_, r)| r.cpu.sys_s).sum(),
        ..CpuTime::default()
    };
    out.cpu_ns_per_sample = out.cpu.total_s() * 1e9 / out.samples.max(1) as f64;
    // The busiest host's: one held back holds its accelerators back.
    out.loaders_waited_for_cpu_share = ranks
        .iter()
        .filter_map(|(_, r)| r.loaders_waited_for_cpu_share)
        .reduce(f64::max);
    out.interrupted = ranks.iter().any(|(_, r)| r.interrupted);
    out.failure = first_failure(ranks.iter().map(|(n, r)| (*n, r.failure.as_ref())));
    out.search = None;
    Ok(out)
}

fn concurrent_phase(phases: &[&CheckpointPhase]) -> Result<Option<CheckpointPhase>, String> {
    if phases.is_empty() {
        return Ok(None);
    }
    let n = phases.iter().map(|p| p.seconds.len()).min().unwrap_or(0);
    let seconds: Vec<f64> = (0..n)
        .map(|i| phases.iter().map(|p| p.seconds[i]).fold(0.0, f64::max))
        .collect();
    let bytes: u64 = phases.iter().map(|p| p.bytes).sum();
    let total: f64 = seconds.iter().sum();
    Ok(Some(CheckpointPhase {
        checkpoints: n as u32,
        bytes,
        mean_s: total / n.max(1) as f64,
        bytes_per_s: bytes as f64 * n as f64 / total.max(1e-9),
        seconds,
        file: Tails::merged(phases.iter().map(|p| &p.file))?,
        files: phases.iter().map(|p| p.files).sum(),
    }))
}

fn concurrent_checkpoint(ranks: &[(u32, &CheckpointResult)]) -> Result<CheckpointResult, String> {
    let mut out = ranks[0].1.clone();
    out.elapsed_s = ranks.iter().map(|(_, r)| r.elapsed_s).fold(0.0, f64::max);
    out.spec.ranks = ranks.iter().map(|(_, r)| r.spec.ranks).sum();
    let writes: Vec<&CheckpointPhase> =
        ranks.iter().filter_map(|(_, r)| r.write.as_ref()).collect();
    let reads: Vec<&CheckpointPhase> = ranks.iter().filter_map(|(_, r)| r.read.as_ref()).collect();
    out.write = concurrent_phase(&writes)?;
    out.read = concurrent_phase(&reads)?;
    out.interrupted = ranks.iter().any(|(_, r)| r.interrupted);
    out.failure = first_failure(ranks.iter().map(|(n, r)| (*n, r.failure.as_ref())));
    // The run's gap is its last rank's: every rank must have been
    // launched in time.
    out.relaunch = ranks
        .iter()
        .filter_map(|(_, r)| r.relaunch)
        .max_by(|a, b| a.gap_s.total_cmp(&b.gap_s));
    Ok(out)
}
