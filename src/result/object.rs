//! Results of an object-store run: per operation, requests a second,
//! bytes a second and the exact latency of each request (for GETs, to
//! the first byte and to the last), errors by status, and the requests
//! of each second.

use crate::measure::histogram::{LatencyHistogram, LatencySummary};
use crate::spec::object::{ObjectOp, ObjectSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One operation's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectOpResult {
    pub op: ObjectOp,
    /// Requests that succeeded.
    pub ops: u64,
    /// Requests that failed, by HTTP status and S3 error code ("503
    /// SlowDown"), or "transport" when no answer came.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    /// Requests sent again after a kept-alive connection failed before
    /// any answer (each counted once, in `ops` or `errors`).
    #[serde(default)]
    pub retries: u64,
    /// Requests the store had not answered by the run's end (and its
    /// half-second grace), or when a signal stopped it: cut there, as a
    /// disk's unfinished I/Os are, in neither `ops` nor `errors`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unfinished: u64,
    /// Object bytes read (get) or written (put).
    pub bytes: u64,
    pub ops_per_s: f64,
    pub bytes_per_s: f64,
    /// This operation's share of every request made, and the share the
    /// mix asked for.
    pub share: f64,
    pub share_asked: f64,
    /// From before the request was sent to its answer's last byte (for a
    /// multipart PUT: from its start to its completion).
    pub lat_ns: LatencySummary,
    pub histogram: String,
    /// GET only: to the answer's first byte (its status line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb_ns: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb_histogram: Option<String>,
    /// Rated runs (`--rate-iops`): from when each request was due to its
    /// last byte, so that a store falling behind shows in the tails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_ns: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_histogram: Option<String>,
    /// Each second's successful requests with their histogram (failed
    /// ones in `errors`): what `fathom check` resamples. Absent in older
    /// results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<crate::measure::intervals::Interval>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A multipart PUT's parts: each one's latency beside the whole object's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartsResult {
    pub parts: u64,
    pub bytes: u64,
    pub lat_ns: LatencySummary,
    pub histogram: String,
}

/// Requests of one gateway, when the run spread its workers over several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointResult {
    pub endpoint: String,
    pub ops: u64,
    pub errors: u64,
    pub lat_ns: LatencySummary,
    /// GETs' time to first byte at this gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb_ns: Option<LatencySummary>,
}

/// The requests completed in one second, by operation (failed ones too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectInterval {
    /// Seconds from the timed run's start to this second's end.
    pub t_s: f64,
    pub ops: BTreeMap<ObjectOp, u64>,
}

/// The workers' time on a CPU and waiting for one, summed over workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientTime {
    pub cpu_s: f64,
    /// None where the kernel keeps no count (schedstat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_s: Option<f64>,
    /// `cpu_s` over every request made, in microseconds.
    pub cpu_per_request_us: f64,
}

/// The untimed upload of the objects the run reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preparation {
    pub objects: u64,
    pub bytes: u64,
    pub elapsed_s: f64,
}

/// What was removed when the run ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Cleanup {
    pub deleted: u64,
    /// Objects that could not be deleted (named in `failure`).
    pub failed: u64,
    /// Left in place (`--keep`).
    pub kept: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectResult {
    pub spec: ObjectSpec,
    /// Where the credentials came from (never the credentials).
    pub credentials_from: String,
    #[serde(default)]
    pub bucket_created: bool,
    /// The prefix the run worked under, marked as fathom's.
    pub run_prefix: String,
    pub preparation: Preparation,
    /// When the timed run began (seconds since the Unix epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<f64>,
    /// The timed run, from its first request to its last answer.
    pub elapsed_s: f64,
    pub ops: Vec<ObjectOpResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<PartsResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<EndpointResult>,
    pub intervals: Vec<ObjectInterval>,
    /// The workers' own time during the timed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientTime>,
    /// What limited the requests: the store, the host's CPUs, or fathom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<super::limit::LimitedBy>,
    pub cleanup: Cleanup,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub interrupted: bool,
}

impl ObjectResult {
    pub fn op(&self, op: ObjectOp) -> Option<&ObjectOpResult> {
        self.ops.iter().find(|o| o.op == op)
    }

    pub fn total_ops(&self) -> u64 {
        self.ops.iter().map(|o| o.ops).sum()
    }

    pub fn total_errors(&self) -> u64 {
        self.ops.iter().flat_map(|o| o.errors.values()).sum()
    }
}

/// One operation's measurements while the run goes, per worker, merged
/// at its end.
#[derive(Debug, Clone, Default)]
pub struct OpTally {
    pub ops: u64,
    pub bytes: u64,
    pub retries: u64,
    pub errors: BTreeMap<String, u64>,
    pub latency: LatencyHistogram,
    pub ttfb: LatencyHistogram,
    /// Rated runs: from when each request was due to its last byte.
    pub from_due: LatencyHistogram,
}

impl OpTally {
    pub fn add(&mut self, other: &OpTally) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.retries += other.retries;
        for (k, n) in &other.errors {
            *self.errors.entry(k.clone()).or_default() += n;
        }
        self.latency.add(&other.latency);
        self.ttfb.add(&other.ttfb);
        self.from_due.add(&other.from_due);
    }

    pub fn requests(&self) -> u64 {
        self.ops + self.errors.values().sum::<u64>()
    }

    /// The figures of `op` over `elapsed_s`, of `all_requests` made.
    pub fn result(
        &self,
        op: ObjectOp,
        elapsed_s: f64,
        all_requests: u64,
        share_asked: f64,
    ) -> ObjectOpResult {
        let per_s = |n: u64| {
            if elapsed_s > 0.0 {
                n as f64 / elapsed_s
            } else {
                0.0
            }
        };
        let with_ttfb = op == ObjectOp::Get && self.ttfb.count() > 0;
        ObjectOpResult {
            op,
            ops: self.ops,
            errors: self.errors.clone(),
            retries: self.retries,
            unfinished: 0,
            bytes: self.bytes,
            ops_per_s: per_s(self.ops),
            bytes_per_s: per_s(self.bytes),
            share: self.requests() as f64 / all_requests.max(1) as f64,
            share_asked,
            lat_ns: self.latency.summary(),
            histogram: self.latency.encode(),
            ttfb_ns: with_ttfb.then(|| self.ttfb.summary()),
            ttfb_histogram: with_ttfb.then(|| self.ttfb.encode()),
            due_ns: (self.from_due.count() > 0).then(|| self.from_due.summary()),
            due_histogram: (self.from_due.count() > 0).then(|| self.from_due.encode()),
            intervals: Vec::new(),
        }
    }
}

/// The object-store runs of ranks that ran the same spec at the same
/// time, as one: requests and bytes add up, histograms merge exactly,
/// rates are over the slowest rank's time, each second's requests add
/// up, and the verdict is the one that says least for the store.
pub fn concurrent(ranks: &[(u32, &ObjectResult)]) -> Result<ObjectResult, String> {
    let Some((_, first)) = ranks.first() else {
        return Err("no object-store results".into());
    };
    let mut out = (*first).clone();
    out.elapsed_s = ranks.iter().map(|(_, r)| r.elapsed_s).fold(0.0, f64::max);
    out.started_unix_s = ranks
        .iter()
        .filter_map(|(_, r)| r.started_unix_s)
        .reduce(f64::min);
    out.interrupted = ranks.iter().any(|(_, r)| r.interrupted);
    out.failure = ranks
        .iter()
        .find_map(|(n, r)| r.failure.as_ref().map(|f| format!("rank {n}: {f}")));
    out.preparation = Preparation {
        objects: ranks.iter().map(|(_, r)| r.preparation.objects).sum(),
        bytes: ranks.iter().map(|(_, r)| r.preparation.bytes).sum(),
        elapsed_s: ranks
            .iter()
            .map(|(_, r)| r.preparation.elapsed_s)
            .fold(0.0, f64::max),
    };
    out.cleanup = Cleanup {
        deleted: ranks.iter().map(|(_, r)| r.cleanup.deleted).sum(),
        failed: ranks.iter().map(|(_, r)| r.cleanup.failed).sum(),
        kept: ranks.iter().map(|(_, r)| r.cleanup.kept).sum(),
    };
    let mut tallies: Vec<OpTally> = Vec::new();
    for (i, op) in first.ops.iter().enumerate() {
        let mut tally = OpTally::default();
        for (n, r) in ranks {
            let theirs = r
                .ops
                .get(i)
                .filter(|o| o.op == op.op)
                .ok_or_else(|| format!("rank {n} made other operations"))?;
            tally.add(&OpTally::of(theirs)?);
        }
        tallies.push(tally);
    }
    let all: u64 = tallies.iter().map(OpTally::requests).sum();
    out.ops = first
        .ops
        .iter()
        .zip(&tallies)
        .enumerate()
        .map(|(i, (op, t))| {
            let mut result = t.result(op.op, out.elapsed_s, all, op.share_asked);
            result.unfinished = ranks
                .iter()
                .filter_map(|(_, r)| r.ops.get(i))
                .map(|o| o.unfinished)
                .sum();
            result.intervals = super::merge::concurrent_intervals(
                ranks
                    .iter()
                    .filter_map(|(_, r)| r.ops.get(i))
                    .map(|o| o.intervals.as_slice()),
            )?;
            Ok(result)
        })
        .collect::<Result<_, String>>()?;
    out.intervals = first
        .intervals
        .iter()
        .map(|second| {
            let mut ops = BTreeMap::new();
            for (_, r) in ranks {
                if let Some(theirs) = r.intervals.iter().find(|i| i.t_s == second.t_s) {
                    for (op, n) in &theirs.ops {
                        *ops.entry(*op).or_insert(0) += n;
                    }
                }
            }
            ObjectInterval {
                t_s: second.t_s,
                ops,
            }
        })
        .collect();
    out.client = ranks
        .iter()
        .filter_map(|(_, r)| r.client.clone())
        .reduce(|a, b| ClientTime {
            cpu_s: a.cpu_s + b.cpu_s,
            cpu_wait_s: a.cpu_wait_s.zip(b.cpu_wait_s).map(|(x, y)| x + y),
            cpu_per_request_us: 0.0,
        })
        .map(|mut c| {
            c.cpu_per_request_us = c.cpu_s * 1e6 / all.max(1) as f64;
            c
        });
    out.limited_by = super::limit::LimitedBy::least_the_targets(
        ranks.iter().filter_map(|(_, r)| r.limited_by.as_ref()),
    )
    .cloned();
    out.parts = None;
    for (_, r) in ranks {
        if let Some(p) = &r.parts {
            let hist = LatencyHistogram::decode(&p.histogram)?;
            let merged = out.parts.get_or_insert_with(|| PartsResult {
                parts: 0,
                bytes: 0,
                lat_ns: hist.summary(),
                histogram: String::new(),
            });
            let mut all = match merged.histogram.is_empty() {
                true => LatencyHistogram::new(),
                false => LatencyHistogram::decode(&merged.histogram)?,
            };
            all.add(&hist);
            merged.parts += p.parts;
            merged.bytes += p.bytes;
            merged.lat_ns = all.summary();
            merged.histogram = all.encode();
        }
    }
    // Each rank's gateways' tails have no histograms to merge: a
    // cluster's result gives none rather than one rank's.
    out.endpoints = Vec::new();
    Ok(out)
}

impl OpTally {
    /// A result's figures back as a tally, from its histograms.
    fn of(result: &ObjectOpResult) -> Result<OpTally, String> {
        let decode = |h: &str| LatencyHistogram::decode(h);
        Ok(OpTally {
            ops: result.ops,
            bytes: result.bytes,
            retries: result.retries,
            errors: result.errors.clone(),
            latency: decode(&result.histogram)?,
            ttfb: match &result.ttfb_histogram {
                Some(h) => decode(h)?,
                None => LatencyHistogram::new(),
            },
            from_due: match &result.due_histogram {
                Some(h) => decode(h)?,
                None => LatencyHistogram::new(),
            },
        })
    }
}
