//! Results of `fathom tree`: per phase, operations a second and the exact
//! latency of each operation, in total and per thread, and how far the
//! slowest thread fell behind when a phase was cut at `--phase-time`.

use super::workload::LatencySummary;
use crate::spec::tree::{TreePhase, TreeSpec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadOps {
    pub ops: u64,
    pub elapsed_s: f64,
    pub lat_ns: LatencySummary,
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
    /// The size of a leaf directory once its files were created: how the
    /// file system stores a directory of that many entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_dir_bytes: Option<u64>,
    /// The tree was left in place (`--leave`) for a later run's phases.
    #[serde(default)]
    pub kept: bool,
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
}
