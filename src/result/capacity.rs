//! Results of a capacity search (`fathom capacity`): every step's offered
//! and achieved rate and latency from the due time, the highest rate that
//! met the objective, and where latency started to climb.

use super::LatencySummary;
use super::warning::Warning;
use crate::spec::WorkloadSpec;
use crate::spec::capacity::CapacitySpec;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    /// The workload searched, as given: each step ran it at its own rate.
    pub spec: WorkloadSpec,
    pub search: CapacitySpec,
    /// In the order they ran.
    pub steps: Vec<CapacityStep>,
    /// The highest offered rate (I/Os per second over every target) whose
    /// step met the objective; None when none did.
    pub answer_iops: Option<f64>,
    /// `answer_iops` in bytes per second.
    pub answer_bw_bytes: Option<f64>,
    /// The lowest offered rate whose step missed the objective or could not
    /// be delivered; None when the search never found one.
    pub missed_iops: Option<f64>,
    /// The offered rate after which latency climbs steeply (the knee of the
    /// latency-against-load curve); None with fewer than three steps or when
    /// latency never climbed to twice its level there.
    pub knee_iops: Option<f64>,
    /// A search over a replay's speed: the trace's own I/Os per second as
    /// recorded, so that a rate is that many times the trace
    /// (`answer_iops / trace_iops`: "it fits 3.4 times over").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_iops: Option<f64>,
    pub end: SearchEnd,
    /// What the self-check before the first step found; absent with
    /// `--no-self-check`, for a streams workload and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_check: Option<super::limit::SelfCheck>,
    /// Seconds the whole search took, laying out targets included.
    pub runtime_s: f64,
    pub interrupted: bool,
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchEnd {
    /// The answer is known to the precision asked.
    Converged,
    /// The next step would have ended after `--max-time`.
    MaxTime,
    /// The next step would ask the queue (iodepth x numjobs) for more than
    /// it can carry.
    QueueLimit,
    /// A step missed twice, each time because the host (or fathom), not
    /// the target, could not issue the load on time.
    HostLimited,
    /// A signal stopped it.
    Interrupted,
}

impl SearchEnd {
    pub fn describe(self) -> &'static str {
        match self {
            SearchEnd::Converged => "the answer is within the precision asked",
            SearchEnd::MaxTime => {
                "stopped by --max-time before reaching the precision asked: the answer is a lower bound"
            }
            SearchEnd::QueueLimit => {
                "stopped: a higher rate would ask --iodepth x --numjobs for more than they can carry; the answer is a lower bound (raise --iodepth)"
            }
            SearchEnd::HostLimited => {
                "stopped: the host, not the target, missed the last step twice (the workers could not issue the load on time); the answer is a lower bound of the target's capacity: run on an idle host"
            }
            SearchEnd::Interrupted => "interrupted: the answer covers the steps that finished",
        }
    }
}

/// Climbing geometrically to find a rate that misses, or bisecting between
/// the highest that met and the lowest that missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Climb,
    Bisect,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Climb => "climb",
            Phase::Bisect => "bisect",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityStep {
    pub phase: Phase,
    /// A second try at the rate of the step before, which missed: a rate
    /// counts as missed only when its repeat misses too, so that one
    /// passing stall (not the load) cannot decide the answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeat: bool,
    /// I/Os per second the schedule asked for, over every target.
    pub offered_iops: f64,
    /// I/Os per second that completed while measuring.
    pub achieved_iops: f64,
    pub bw_bytes: f64,
    /// Latency from when each I/O was due to its completion, I/Os without
    /// an answer at the end counted at their age: what a client that sends
    /// at this rate sees.
    pub lat_ns: LatencySummary,
    /// That latency's histogram (HdrHistogram V2, base64).
    pub histogram: String,
    /// Submission to completion: the device's own share of `lat_ns`.
    pub completion_lat_ns: LatencySummary,
    /// I/Os due but not answered when the step ended.
    pub unanswered: u64,
    /// The objective's percentiles, one per term in order, from `histogram`.
    pub slo_ns: Vec<u64>,
    /// Every term held and the rate was delivered.
    pub met: bool,
    /// Achieved fell clearly (more than 10%) short of offered: the target
    /// could not keep up at any latency.
    pub saturated: bool,
    /// The step was cut short by a signal; it decides nothing.
    pub interrupted: bool,
    /// Why the figures may not be true (page cache, ...); empty when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// What limited the step (of several judged streams, the one that
    /// says least for the target); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<super::limit::LimitedBy>,
    /// The step missed, and the host (or fathom), not the target, accounts
    /// for it: it decides nothing about the target.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missed_by_host: bool,
}

impl CapacityResult {
    /// The steps that decided their rate (a step that was repeated did
    /// not: its repeat did), finished ones only, by offered rate.
    pub fn by_rate(&self) -> Vec<&CapacityStep> {
        let repeated = |i: usize| self.steps.get(i + 1).is_some_and(|next| next.repeat);
        let mut steps: Vec<&CapacityStep> = self
            .steps
            .iter()
            .enumerate()
            .filter(|&(i, s)| !s.interrupted && !repeated(i))
            .map(|(_, s)| s)
            .collect();
        steps.sort_by(|a, b| a.offered_iops.total_cmp(&b.offered_iops));
        steps
    }
}
