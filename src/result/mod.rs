//! The result document: the contract that reports, comparisons and other
//! tools build on. A header (who ran what, where, when, under which label)
//! and the results in the order they were produced, each one of a few kinds.
//! Documented field by field in docs/json-schema.md; bump `SCHEMA` on any
//! change that breaks a reader.

pub mod capacity;
pub mod certify;
pub mod change;
pub mod cluster;
pub mod from_fio;
pub mod kind;
pub mod limit;
pub mod merge;
pub mod meta;
pub mod object;
pub mod pod;
pub mod pts;
pub mod repeats;
pub mod replay;
pub mod settings;
pub mod streams;
pub mod train;
pub mod tree;
pub mod warning;
pub mod workload;

pub use workload::{
    CpuUsage, DirectionPair, DirectionResult, DiskUsage, Interval, LatencySummary, PriorityLatency,
    SyncResult, TargetResult, TemperatureSample, UnfinishedIos, WorkloadResult,
};

use crate::measure::facts::HostFacts;
use capacity::CapacityResult;
use certify::CertifyResult;
use meta::MetaResult;
use serde::{Deserialize, Serialize};
use streams::StreamsResult;
use warning::Warning;

/// Schema 2: `results`, a list of tagged results, replaced schema 1's
/// `workloads`, `meta` and `certify` fields; `label` was added.
pub const SCHEMA: u32 = 2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub fathom_version: String,
    /// The commit fathom was built from, when built from a git checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fathom_commit: Option<String>,
    pub schema: u32,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub host: HostFacts,
    /// The system under test as reports and comparisons name it (`--label`);
    /// readers fall back on the file's stem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// True when a signal stopped the run: figures cover what was measured
    /// before it.
    pub interrupted: bool,
    pub results: Vec<RunResult>,
    /// Present when `results` are the merge of several hosts' runs: each
    /// host's own figures and how closely they ran together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<cluster::Cluster>,
    /// Why the run stopped before its plan was done (a target that went
    /// away between two workloads, a run that failed): `results` hold what
    /// was measured before it, and the run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// What went wrong beside the measuring, which changes no figure (a
    /// Pushgateway that stopped answering mid-run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Present when this run was one pod of a Kubernetes run (`fathom k8s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<pod::Pod>,
}

/// One finished (or interrupted) piece of work. Every exporter and
/// `compare` match on this exhaustively: a new kind that nobody renders does
/// not compile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// A document holds a handful of results, each far larger on the heap than
// inline: boxing would only add noise to every match.
#[allow(clippy::large_enum_variant)]
pub enum RunResult {
    /// `fathom run`, `seqread`: an I/O workload.
    Workload(WorkloadResult),
    /// `fathom meta`: create/stat/delete phases.
    Meta(MetaResult),
    /// `fathom certify`: a latency certification.
    Certify(CertifyResult),
    /// `fathom run` with streams: several workloads at the same time.
    Streams(StreamsResult),
    /// `fathom capacity`: the most load that meets a latency objective.
    Capacity(CapacityResult),
    /// `fathom pts`: a test of SNIA's Solid State Performance Test
    /// Specification.
    Pts(pts::PtsResult),
    /// `fathom tree`: a tree of directories and files, made and measured
    /// in phases.
    Tree(tree::TreeResult),
    /// `fathom run s3://...`: requests to an object store.
    Object(object::ObjectResult),
    /// `fathom train`: training data read through simulated
    /// accelerators, or a model's checkpoint written and read back.
    Train(train::TrainResult),
}

impl Document {
    pub fn new(host: HostFacts, label: Option<String>) -> Self {
        Document {
            fathom_version: env!("CARGO_PKG_VERSION").to_string(),
            fathom_commit: Some(env!("FATHOM_COMMIT"))
                .filter(|c| !c.is_empty())
                .map(String::from),
            schema: SCHEMA,
            started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            host,
            label,
            interrupted: false,
            results: Vec::new(),
            cluster: None,
            failure: None,
            notes: Vec::new(),
            pod: None,
        }
    }

    pub fn workloads(&self) -> impl Iterator<Item = &WorkloadResult> {
        self.results.iter().filter_map(RunResult::get)
    }

    pub fn workloads_mut(&mut self) -> impl Iterator<Item = &mut WorkloadResult> {
        self.results.iter_mut().filter_map(RunResult::get_mut)
    }

    /// True when a target failed (`TargetResult::failed`) or a certification
    /// did: the run did not do or prove what was asked.
    pub fn failed(&self) -> bool {
        let rank_failed = self.cluster.as_ref().is_some_and(|c| !c.failed.is_empty());
        rank_failed || self.failure.is_some() || self.results.iter().any(|r| r.kind().failed())
    }

    /// Every warning of every result, with the run it concerns (a workload's
    /// label, or "meta").
    pub fn warnings(&self) -> Vec<(String, &Warning)> {
        self.raised()
            .into_iter()
            .map(|r| (r.by, r.warning))
            .collect()
    }

    /// Every warning with what raised it: a run, a stream of one, or a step
    /// of a capacity search.
    pub fn raised(&self) -> Vec<Raised<'_>> {
        self.results
            .iter()
            .flat_map(|r| r.kind().raised())
            .collect()
    }

    /// Every problem of every target, prefixed with the target's name.
    pub fn problems(&self) -> Vec<String> {
        self.results
            .iter()
            .flat_map(|r| r.kind().disk_workloads())
            .flat_map(|(_, w)| &w.targets)
            .flat_map(|t| {
                t.problems()
                    .into_iter()
                    .map(move |p| format!("target {}: {p}", t.name))
            })
            .chain(
                self.failure
                    .iter()
                    .map(|f| format!("the run stopped before its plan was done: {f}")),
            )
            .collect()
    }

    /// Reads a document of this schema or an older one.
    pub fn from_json(text: &str) -> Result<Document, String> {
        #[derive(Deserialize)]
        struct Header {
            schema: u32,
        }
        let not_ours = |e: serde_json::Error| format!("not a fathom result: {e}");
        let header: Header = match serde_json::from_str(text) {
            Ok(header) => header,
            Err(e) => {
                // fio's own output, perhaps after lines fio printed first.
                let json = text.find('{').map_or(text, |i| &text[i..]);
                return match serde_json::from_str::<serde_json::Value>(json) {
                    Ok(doc) if from_fio::is_fio_output(&doc) => from_fio::document(&doc),
                    _ => Err(not_ours(e)),
                };
            }
        };
        match header.schema {
            1 => Ok(serde_json::from_str::<DocumentV1>(text)
                .map_err(not_ours)?
                .upgrade()),
            SCHEMA => serde_json::from_str(text).map_err(not_ours),
            newer if newer > SCHEMA => Err(format!(
                "result schema {newer} is newer than this fathom understands ({SCHEMA})"
            )),
            other => Err(format!("result schema {other} is unknown")),
        }
    }
}

/// Schema 1: one optional field per kind of result.
#[derive(Deserialize)]
struct DocumentV1 {
    fathom_version: String,
    started_at: String,
    host: HostFacts,
    interrupted: bool,
    workloads: Vec<WorkloadResult>,
    #[serde(default)]
    meta: Option<MetaResult>,
    #[serde(default)]
    certify: Option<CertifyResult>,
}

impl DocumentV1 {
    fn upgrade(self) -> Document {
        let results = self
            .workloads
            .into_iter()
            .map(RunResult::Workload)
            .chain(self.meta.map(RunResult::Meta))
            .chain(self.certify.map(RunResult::Certify))
            .collect();
        Document {
            fathom_version: self.fathom_version,
            fathom_commit: None,
            schema: SCHEMA,
            started_at: self.started_at,
            host: self.host,
            label: None,
            interrupted: self.interrupted,
            results,
            cluster: None,
            failure: None,
            notes: Vec::new(),
            pod: None,
        }
    }
}

/// What raised a warning: a run, one stream of a run, or one step of a
/// capacity search; reports count them by that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaisedBy {
    Run,
    Stream,
    Step,
}

impl RaisedBy {
    /// "1 run", "3 streams", "10 steps".
    pub fn count(self, n: usize) -> String {
        let noun = match self {
            RaisedBy::Run => "run",
            RaisedBy::Stream => "stream",
            RaisedBy::Step => "step",
        };
        match n {
            1 => format!("1 {noun}"),
            n => format!("{n} {noun}s"),
        }
    }
}

/// A warning and the run, stream or step that raised it.
pub struct Raised<'a> {
    pub by: String,
    pub kind: RaisedBy,
    pub warning: &'a Warning,
}

impl<'a> Raised<'a> {
    pub(crate) fn new(by: String, kind: RaisedBy, warning: &'a Warning) -> Self {
        Raised { by, kind, warning }
    }
}

/// Results built by hand, for unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::measure::histogram::LatencyHistogram;
    use crate::measure::per_second;

    /// A direction of `values` (latencies in ns) over `runtime_s`, with
    /// `seconds[i]` I/Os in second i.
    pub fn direction(values: &[u64], runtime_s: f64, seconds: &[u64]) -> DirectionResult {
        let mut h = LatencyHistogram::new();
        values.iter().for_each(|&v| h.record(v));
        DirectionResult {
            ios: values.len() as u64,
            bytes: values.len() as u64 * 4096,
            iops: per_second(values.len() as u64, runtime_s),
            bw_bytes: per_second(values.len() as u64 * 4096, runtime_s),
            lat_ns: h.summary(),
            histogram: h.encode(),
            intervals: seconds
                .iter()
                .enumerate()
                .map(|(i, &ios)| Interval {
                    t_s: i as f64,
                    dur_s: 1.0,
                    ios,
                    iops: ios as f64,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    /// Whole seconds from second 0, at `iops[i]` I/Os a second in second i.
    pub fn seconds_at(iops: &[f64]) -> Vec<Interval> {
        iops.iter()
            .enumerate()
            .map(|(i, &x)| Interval {
                t_s: i as f64,
                dur_s: 1.0,
                iops: x,
                ..Default::default()
            })
            .collect()
    }

    /// A file target that did nothing.
    pub fn empty_target(name: &str) -> super::TargetResult {
        super::TargetResult::of_file(name, Default::default())
    }

    /// A workload that did nothing, on one target "/tmp/x".
    pub fn empty_workload() -> WorkloadResult {
        let nothing = || DirectionResult {
            histogram: LatencyHistogram::new().encode(),
            ..Default::default()
        };
        WorkloadResult::of(
            crate::spec::WorkloadSpec::defaults(vec!["/tmp/x".into()]),
            Vec::new(),
            DirectionPair {
                read: nothing(),
                write: nothing(),
                trim: nothing(),
            },
            CpuUsage::default(),
            0.0,
        )
    }
}
