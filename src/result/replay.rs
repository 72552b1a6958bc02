//! What a replay adds to a workload's result: how well the target kept to
//! the trace's times, and the latency the trace itself recorded.

use crate::measure::histogram::{LatencyHistogram, LatencySummary};
use crate::trace::{Op, Trace};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReplayResult {
    /// I/Os of the trace to play (all passes, all targets), sync points
    /// included.
    pub trace_ios: u64,
    /// I/Os of it issued (sync points included): fewer than `trace_ios`
    /// when the run ended first (`--runtime`, a signal, an error). Absent
    /// from results of fathom before 0.1 kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_ios: Option<u64>,
    /// How long the trace (or its window) lasts at the speed played, all
    /// passes; 0 as fast as possible.
    pub trace_span_s: f64,
    /// I/Os issued more than 1 ms after they were due: the target (or
    /// fathom) could not take them on time. Their latency from when they
    /// were due is in each direction's `sched_lat_ns`.
    pub late_ios: u64,
    /// The longest an I/O waited past its due time to be issued, in ns.
    pub worst_lag_ns: u64,
    /// The latency each direction had when the trace was taken, where the
    /// trace says (blkparse's completions, a CSV's latency column).
    #[serde(default, skip_serializing_if = "OriginalLatency::is_empty")]
    pub original: OriginalLatency,
    /// The recorded latency second by second, on the replay's clock (the
    /// trace's times divided by the speed), first pass only: what the
    /// replayed p99 per second is drawn against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub original_seconds: Vec<OriginalSecond>,
}

/// One second of the recorded latency, of every direction.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OriginalSecond {
    /// Start, in seconds from the replay's first I/O.
    pub t_s: f64,
    pub ios: u64,
    pub p99_ns: u64,
}

/// The latencies `trace` recorded: per direction, and second by second
/// on the replay's clock (the trace's times divided by `speed`; none as
/// fast as possible). Read from the file in one pass; a trace that can no
/// longer be read gives nothing.
pub fn original(trace: &Trace, speed: Option<f64>) -> (OriginalLatency, Vec<OriginalSecond>) {
    let mut per_op: [LatencyHistogram; 3] = std::array::from_fn(|_| LatencyHistogram::new());
    let mut seconds = Vec::new();
    let mut current: Option<(u64, LatencyHistogram)> = None;
    let close = |(s, h): (u64, LatencyHistogram), seconds: &mut Vec<OriginalSecond>| {
        seconds.push(OriginalSecond {
            t_s: s as f64,
            ios: h.count(),
            p99_ns: h.value_at_percentile(99.0),
        })
    };
    let Ok(answers) = trace.answers() else {
        return Default::default();
    };
    for answer in answers {
        let Ok(a) = answer else {
            return Default::default();
        };
        let ns = a.latency_ns.max(1);
        match a.op {
            Op::Read => per_op[0].record(ns),
            Op::Write => per_op[1].record(ns),
            Op::Trim => per_op[2].record(ns),
            Op::Sync => continue,
        }
        let Some(speed) = speed else { continue };
        let second = (a.t_ns as f64 / speed / 1e9) as u64;
        if current.as_ref().is_some_and(|(s, _)| *s != second) {
            close(current.take().expect("just seen"), &mut seconds);
        }
        current
            .get_or_insert_with(|| (second, LatencyHistogram::new()))
            .1
            .record(ns);
    }
    if let Some(last) = current {
        close(last, &mut seconds);
    }
    let [read, write, trim] = per_op.map(|h| (h.count() > 0).then(|| h.summary()));
    (OriginalLatency { read, write, trim }, seconds)
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OriginalLatency {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<LatencySummary>,
}

impl OriginalLatency {
    pub fn is_empty(&self) -> bool {
        self.read.is_none() && self.write.is_none() && self.trim.is_none()
    }

    /// Each direction with its name.
    pub fn named(&self) -> [(&'static str, Option<&LatencySummary>); 3] {
        [
            ("read", self.read.as_ref()),
            ("write", self.write.as_ref()),
            ("trim", self.trim.as_ref()),
        ]
    }
}
