//! The result of a SNIA PTS test (`fathom pts`): the set-up, every round's
//! cells, the steady-state window and its verdict.

use crate::measure::facts::TargetFacts;
use crate::measure::snia_window::WindowVerdict;
use crate::spec::pts::PtsSpec;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtsResult {
    pub spec: PtsSpec,
    pub target: TargetFacts,
    /// Bytes of the device the test used, from its start.
    pub active_range_bytes: u64,
    /// The purge as made: seconds it took; absent with `--purge none`.
    pub purge_s: Option<f64>,
    /// Workload-independent preconditioning: bytes written sequentially
    /// in 128k, and how long it took.
    pub precondition_bytes: u64,
    pub precondition_s: f64,
    /// The cell whose figure decides steady state ("4k 0/100 IOPS").
    pub tracking: String,
    pub rounds: Vec<PtsRound>,
    /// The rule on the last 5 rounds; absent before the fifth round and
    /// for write saturation, which has no steady state.
    pub window: Option<WindowVerdict>,
    pub end: PtsEnd,
    /// How the test departs from the specification; empty when compliant.
    pub departures: Vec<String>,
    pub runtime_s: f64,
    pub interrupted: bool,
}

/// Why the test stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PtsEnd {
    SteadyState,
    MaxRounds,
    /// Write saturation: 4x the active range written.
    Written,
    /// Write saturation: its time limit.
    TimeLimit,
    Interrupted,
}

impl PtsEnd {
    pub fn describe(self) -> &'static str {
        match self {
            PtsEnd::SteadyState => "steady state reached",
            PtsEnd::MaxRounds => "no steady state within --max-rounds",
            PtsEnd::Written => "4 times the active range written",
            PtsEnd::TimeLimit => "stopped at --max-time",
            PtsEnd::Interrupted => "interrupted",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtsRound {
    /// From 1.
    pub round: u32,
    pub cells: Vec<PtsCell>,
    /// The tracking variable this round.
    pub tracking_value: f64,
}

/// One cell of a round: a block size and read share, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtsCell {
    pub bs: u64,
    /// Share of reads, percent.
    pub read_pct: u8,
    pub sequential: bool,
    pub iops: f64,
    pub bw_bytes: f64,
    pub mean_ns: f64,
    pub max_ns: u64,
    /// The "five nines" latency: p99.999 of reads and writes together.
    pub p99_999_ns: u64,
    /// Bytes written in the cell.
    pub written_bytes: u64,
}

impl PtsCell {
    /// The figure `test` judges and compares its cells by: IOPS,
    /// bandwidth for throughput, mean latency for latency.
    pub fn figure(&self, test: crate::spec::pts::PtsTest) -> f64 {
        use crate::spec::pts::PtsTest;
        match test {
            PtsTest::Iops | PtsTest::WriteSaturation => self.iops,
            PtsTest::Throughput => self.bw_bytes,
            PtsTest::Latency => self.mean_ns,
        }
    }

    /// "4k 65/35", "1m seq write".
    pub fn label(&self) -> String {
        cell_label(self.bs, self.read_pct, self.sequential)
    }
}

/// A cell by block size and mix: "4k 65/35", "1m seq write".
pub fn cell_label(bs: u64, read_pct: u8, sequential: bool) -> String {
    let bs = crate::util::units::format_block_size(bs);
    match (sequential, read_pct) {
        (true, 100) => format!("{bs} seq read"),
        (true, _) => format!("{bs} seq write"),
        (false, r) => format!("{bs} {r}/{}", 100 - r),
    }
}

impl PtsResult {
    /// The rounds of the steady-state window (all of them when there is
    /// none).
    pub fn window_rounds(&self) -> &[PtsRound] {
        match &self.window {
            Some(w) if w.holds || self.end == PtsEnd::MaxRounds => {
                let from = (w.first_round as usize).saturating_sub(1);
                &self.rounds[from.min(self.rounds.len())..]
            }
            _ => &self.rounds,
        }
    }

    /// Each cell averaged over the window's rounds, in round order.
    pub fn steady_cells(&self) -> Vec<PtsCell> {
        let rounds = self.window_rounds();
        let Some(first) = rounds.first() else {
            return Vec::new();
        };
        first
            .cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let same: Vec<&PtsCell> = rounds.iter().filter_map(|r| r.cells.get(i)).collect();
                let n = same.len() as f64;
                PtsCell {
                    iops: same.iter().map(|c| c.iops).sum::<f64>() / n,
                    bw_bytes: same.iter().map(|c| c.bw_bytes).sum::<f64>() / n,
                    mean_ns: same.iter().map(|c| c.mean_ns).sum::<f64>() / n,
                    max_ns: same.iter().map(|c| c.max_ns).max().unwrap_or(0),
                    p99_999_ns: same.iter().map(|c| c.p99_999_ns).max().unwrap_or(0),
                    written_bytes: same.iter().map(|c| c.written_bytes).sum(),
                    ..c.clone()
                }
            })
            .collect()
    }
}
