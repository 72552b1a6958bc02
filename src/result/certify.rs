//! Results of `fathom certify`: the profile that was run, each interval's
//! slow-I/O shares per stream, and the verdict.

use crate::engine::Direction;
use crate::spec::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Thresholds of the slow-I/O shares, in milliseconds (ACT's buckets).
pub const THRESHOLDS_MS: [u64; 7] = [1, 2, 4, 8, 16, 32, 64];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub over_ms: u64,
    /// Largest share, in percent, of I/Os slower than `over_ms`.
    pub max_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    pub duration_s: f64,
    pub interval_s: f64,
    pub stabilisation_s: f64,
    pub read_limits: Vec<Limit>,
    pub write_limits: Vec<Limit>,
    /// Rates already multiplied by the scale.
    pub streams: Vec<WorkloadSpec>,
    pub scale: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamInterval {
    pub name: String,
    /// The direction this stream's figures are for.
    pub direction: Direction,
    pub ios: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    /// I/Os per second the schedule asked for.
    #[serde(default)]
    pub offered_iops: f64,
    /// I/Os that were due but had no answer when the run ended (last
    /// interval only); they count as slow at their age then.
    #[serde(default)]
    pub unanswered: u64,
    /// Percent of I/Os slower than each of `THRESHOLDS_MS`, measured from
    /// when each I/O was due on the schedule.
    pub over_pct: Vec<f64>,
    pub p99_ns: u64,
    pub max_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CertifyInterval {
    pub index: u32,
    pub start_s: f64,
    pub dur_s: f64,
    /// False for intervals inside the stabilisation period.
    pub judged: bool,
    pub streams: Vec<StreamInterval>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CertifyResult {
    pub profile: Profile,
    pub target: String,
    pub thresholds_ms: Vec<u64>,
    pub intervals: Vec<CertifyInterval>,
    /// None until the run ends (or when it was interrupted).
    pub pass: Option<bool>,
    /// Why it failed, or why it could not be judged.
    pub reasons: Vec<String>,
    /// How the run differed from the profile (e.g. a shortened
    /// stabilisation).
    #[serde(default)]
    pub notes: Vec<String>,
    pub interrupted: bool,
}

impl Profile {
    /// The limits the I/Os of a stream mostly doing `direction` are judged by.
    pub fn limits(&self, direction: Direction) -> &[Limit] {
        match direction {
            Direction::Read => &self.read_limits,
            Direction::Write => &self.write_limits,
        }
    }
}

impl CertifyResult {
    /// Each stream that reported, with the direction it is judged on, in
    /// the order they first appear.
    pub fn streams(&self) -> Vec<(String, Direction)> {
        let mut seen: Vec<(String, Direction)> = Vec::new();
        for s in self.intervals.iter().flat_map(|i| &i.streams) {
            if !seen.iter().any(|(name, _)| *name == s.name) {
                seen.push((s.name.clone(), s.direction));
            }
        }
        seen
    }
}
