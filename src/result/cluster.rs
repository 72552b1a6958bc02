//! Results of several hosts (ranks) that ran the same plan at the same time:
//! each rank's own figures, with its rank and host, and how far apart the
//! ranks started and ended. The document's `results` hold the concurrent
//! merge of all ranks (see [`super::merge::concurrent_documents`]).

use super::RunResult;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub ranks: u32,
    /// Distinct host names, in rank order.
    pub hosts: Vec<String>,
    pub launcher: Launcher,
    /// The MPI library the ranks ran under ("Open MPI v4.1.4"); absent
    /// without MPI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi_library: Option<String>,
    /// Seconds between the first and the last rank's start of measurement
    /// (of the first result), and between the first and the last rank's end
    /// (of the last result).
    pub start_spread_s: f64,
    pub end_spread_s: f64,
    /// Each rank's own results, in rank order.
    pub per_rank: Vec<Rank>,
}

/// How the ranks were started together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Launcher {
    /// `mpirun`/`srun ... fathom run --mpi`: a barrier before each workload.
    Mpi,
    /// Separate runs started at an agreed time (`--start-at`) and merged
    /// with `fathom merge`.
    Merge,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rank {
    pub rank: u32,
    pub host: String,
    /// When this rank's document was started (RFC 3339).
    pub started_at: String,
    /// True when a signal stopped this rank.
    pub interrupted: bool,
    pub results: Vec<RunResult>,
}

impl Rank {
    /// "rank 3 (node7)".
    pub fn label(&self) -> String {
        format!("rank {} ({})", self.rank, self.host)
    }
}
