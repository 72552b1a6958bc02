//! Results of `fathom meta`: rate and latency of each phase: with
//! `--block`, sequential block write, rewrite, sequential block read and
//! random seeks; then create/stat/delete in order and at random.

use super::workload::LatencySummary;
use crate::spec::meta::MetaSpec;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaOp {
    /// `seq_write`, `rewrite`, `seq_read`, `random_seeks` (with
    /// `--block`), `create_seq`, `stat_seq`, `delete_seq`, `create_random`,
    /// `stat_random`, `delete_random`.
    pub name: String,
    /// Operations done: files, chunks (block tests) or seeks.
    pub ops: u64,
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    /// Sequential block tests only: bytes moved (a rewrite counts each chunk
    /// once) and bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_bytes: Option<f64>,
    pub lat_ns: LatencySummary,
    pub histogram: String,
    /// The phase's operations in each tenth of a second, with their
    /// histogram: what `fathom check` resamples. Absent in older results
    /// and in the block tests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<crate::measure::intervals::Interval>,
}

impl MetaOp {
    /// The figure bonnie++ reports for the phase: KiB/s for block I/O,
    /// operations per second otherwise, with its unit.
    pub fn rate(&self) -> (f64, &'static str) {
        match self.bw_bytes {
            Some(bw) => (bw / 1024.0, "KiB/s"),
            None => (self.ops_per_s, "/s"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaResult {
    pub spec: MetaSpec,
    pub filesystem: Option<String>,
    pub ops: Vec<MetaOp>,
    pub interrupted: bool,
    /// Why a figure may not be true (block tests on a file smaller than the
    /// free memory); empty when nothing is suspect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<super::warning::Warning>,
}
