//! Results of `fathom tree`: per phase, operations a second and the exact
//! latency of each operation, in total and per thread, and how far the
//! slowest thread fell behind when a phase was cut at `--phase-time`.

use super::workload::LatencySummary;
use crate::spec::tree::{TreePhase, TreeSpec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadOps {
    /// Under `--mpi`, in a cluster's merge: the rank the thread ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    pub ops: u64,
    pub elapsed_s: f64,
    pub lat_ns: LatencySummary,
    /// The thread's own HDR histogram, encoded as the phase's.
    #[serde(default)]
    pub histogram: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreePhaseResult {
    pub phase: TreePhase,
    /// Operations done: directories for mkdir and rmdir, files otherwise.
    pub ops: u64,
    /// Operations the phase had to do; more than `ops` when it was cut.
    pub planned: u64,
    /// From the phase's start to its last thread's end.
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    /// Bytes written (create) or read (read).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bytes: u64,
    pub lat_ns: LatencySummary,
    /// The HDR histogram of every operation's latency, encoded as a
    /// workload's.
    pub histogram: String,
    pub threads: Vec<ThreadOps>,
    /// Ended by `--phase-time` before every thread had done its share.
    #[serde(default)]
    pub stonewalled: bool,
    /// Operations the slowest thread did fewer than the fastest: what a
    /// rate over the fastest alone would hide.
    #[serde(default)]
    pub behind: u64,
    /// Every thread's operations in each tenth of a second, with their
    /// histogram: what `fathom check` resamples. Absent in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<crate::measure::intervals::Interval>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeResult {
    pub spec: TreeSpec,
    pub filesystem: Option<String>,
    pub phases: Vec<TreePhaseResult>,
    /// Inodes the tree took, by the file system's count of free ones
    /// before the tree was made and after its files were created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inodes_used: Option<u64>,
    /// The entries the tree made (its directory, marker, directories and
    /// files), beside `inodes_used`: where they differ, other processes
    /// made or removed files meanwhile. Absent for a shared tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inodes_made: Option<u64>,
    /// The size of a leaf directory once its files were created: how the
    /// file system stores a directory of that many entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_dir_bytes: Option<u64>,
    /// The tree was left in place (`--leave`) for a later run's phases.
    #[serde(default)]
    pub kept: bool,
    /// When the first phase began (seconds since the Unix epoch): under
    /// `--mpi`, how closely the ranks started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<f64>,
    /// What ended the run early (a full file system), when something did;
    /// the phases measured before it are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub interrupted: bool,
}

impl TreeResult {
    pub fn phase(&self, phase: TreePhase) -> Option<&TreePhaseResult> {
        self.phases.iter().find(|p| p.phase == phase)
    }

    /// The phases' time together.
    pub fn elapsed_s(&self) -> f64 {
        self.phases.iter().map(|p| p.elapsed_s).sum()
    }
}

/// The tree runs of ranks that ran the same phases at the same time, as
/// one: counts add up, histograms merge exactly, each phase's rate is over
/// its slowest rank's time, and every rank's threads are kept (with their
/// rank) so that how far the slowest fell behind is the cluster's.
pub fn concurrent(ranks: &[(u32, &TreeResult)]) -> Result<TreeResult, String> {
    use crate::measure::histogram::LatencyHistogram;
    let Some((_, first)) = ranks.first() else {
        return Err("no tree results".into());
    };
    let mut out = (*first).clone();
    out.phases.clear();
    for (i, p) in first.phases.iter().enumerate() {
        let mut merged = TreePhaseResult {
            ops: 0,
            planned: 0,
            elapsed_s: 0.0,
            bytes: 0,
            threads: Vec::new(),
            stonewalled: false,
            ..p.clone()
        };
        let mut latency = LatencyHistogram::new();
        for (rank, r) in ranks {
            let theirs = r
                .phases
                .get(i)
                .filter(|q| q.phase == p.phase)
                .ok_or_else(|| format!("rank {rank} did not run the {} phase", p.phase))?;
            merged.ops += theirs.ops;
            merged.planned += theirs.planned;
            merged.bytes += theirs.bytes;
            merged.elapsed_s = merged.elapsed_s.max(theirs.elapsed_s);
            merged.stonewalled |= theirs.stonewalled;
            latency.add(
                &LatencyHistogram::decode(&theirs.histogram)
                    .map_err(|e| format!("rank {rank}, {} phase: {e}", p.phase))?,
            );
            merged
                .threads
                .extend(theirs.threads.iter().map(|t| ThreadOps {
                    rank: Some(*rank),
                    ..t.clone()
                }));
        }
        merged.ops_per_s = crate::measure::per_second(merged.ops, merged.elapsed_s);
        merged.intervals = super::merge::concurrent_intervals(
            ranks
                .iter()
                .filter_map(|(_, r)| r.phases.get(i))
                .map(|q| q.intervals.as_slice()),
        )?;
        merged.lat_ns = latency.summary();
        merged.histogram = latency.encode();
        let most = merged.threads.iter().map(|t| t.ops).max().unwrap_or(0);
        let least = merged.threads.iter().map(|t| t.ops).min().unwrap_or(0);
        merged.behind = if merged.stonewalled { most - least } else { 0 };
        out.phases.push(merged);
    }
    // Ranks sharing one tree leave its count to rank 0.
    out.inodes_used = ranks
        .iter()
        .filter_map(|(_, r)| r.inodes_used)
        .reduce(|a, b| a + b);
    out.kept = ranks.iter().all(|(_, r)| r.kept);
    out.interrupted = ranks.iter().any(|(_, r)| r.interrupted);
    out.failure = ranks
        .iter()
        .find_map(|(rank, r)| r.failure.as_ref().map(|f| format!("rank {rank}: {f}")));
    Ok(out)
}
