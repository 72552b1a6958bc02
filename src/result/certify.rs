//! Results of `fathom certify`: the profile that was run, each interval's
//! slow-I/O shares per stream, and the verdict.

use crate::spec::Direction;
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
    /// Rates already multiplied by the scale. Each stream runs at its rate
    /// on every device (`targets`), as ACT's 1x load is per device.
    pub streams: Vec<WorkloadSpec>,
    pub scale: f64,
    /// Streams that are reported but not judged on the slow-I/O limits
    /// (ACT's large-block reads and writes); they must still deliver
    /// their load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unjudged: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamInterval {
    pub name: String,
    /// The device these figures are for, when several were certified
    /// together; None for the stream over all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
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
    /// Percent of I/Os that went out more than 1 ms after they could (due,
    /// and a slot free): held back by the host or fathom, not the target.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub late_issue_pct: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
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
    /// What limited the run (of its streams, the one that says least for
    /// the target); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<super::limit::LimitedBy>,
    /// The verdict was a failure the host (or fathom), not the target,
    /// explains: I/Os went out late enough to account for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_decided: bool,
    /// What the self-check before the run found; absent with
    /// `--no-self-check` and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_check: Option<super::limit::SelfCheck>,
}

impl Profile {
    /// The limits the I/Os of a stream mostly doing `direction` are judged by.
    pub fn limits(&self, direction: Direction) -> &[Limit] {
        match direction {
            Direction::Read => &self.read_limits,
            // A trimming stream is judged as a writing one.
            Direction::Write | Direction::Trim => &self.write_limits,
        }
    }

    /// The limits stream `name`, mostly doing `direction`, is judged by:
    /// none for a stream that is only reported.
    pub fn stream_limits(&self, name: &str, direction: Direction) -> &[Limit] {
        if self.unjudged.iter().any(|u| u == name) {
            &[]
        } else {
            self.limits(direction)
        }
    }
}

impl StreamInterval {
    /// "read", or "read on /dev/sdb" for one device of several.
    pub fn label(&self) -> String {
        match &self.target {
            Some(t) => format!("{} on {t}", self.name),
            None => self.name.clone(),
        }
    }
}

impl CertifyResult {
    /// Every interval's rows for whole streams (over all devices).
    pub fn totals(&self) -> impl Iterator<Item = &StreamInterval> {
        self.intervals
            .iter()
            .flat_map(|i| i.streams.iter().filter(|s| s.target.is_none()))
    }

    /// Each stream that reported, with the direction it is judged on, in
    /// the order they first appear (over all devices, not each device).
    pub fn streams(&self) -> Vec<(String, Direction)> {
        let mut seen: Vec<(String, Direction)> = Vec::new();
        for s in self.totals() {
            if !seen.iter().any(|(name, _)| *name == s.name) {
                seen.push((s.name.clone(), s.direction));
            }
        }
        seen
    }
}
