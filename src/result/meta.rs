//! Results of `fathom meta`: operations per second and latency of each
//! create/stat/delete phase.

use super::workload::LatencySummary;
use crate::spec::meta::MetaSpec;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaOp {
    /// `create_seq`, `stat_seq`, `delete_seq`, `create_random`,
    /// `stat_random`, `delete_random`.
    pub name: String,
    pub ops: u64,
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    pub lat_ns: LatencySummary,
    pub histogram: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaResult {
    pub spec: MetaSpec,
    pub filesystem: Option<String>,
    pub ops: Vec<MetaOp>,
    pub interrupted: bool,
}
