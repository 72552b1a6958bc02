//! The one registry of result kinds: what each kind of result tells the
//! commands over results. `check`, `compare`, the history and the trend
//! ask a result's `Kind` for its name, the knobs that make it the workload
//! it is, its target, where it ran, and its per-slice series, instead of
//! matching on the kind themselves; `RunResult::kind` is the one match.
//! A new kind of run is one more implementation here.

use super::capacity::CapacityResult;
use super::certify::CertifyResult;
use super::cluster::RankName;
use super::limit::HOST_HINT;
use super::meta::MetaResult;
use super::object::ObjectResult;
use super::pts::PtsResult;
use super::streams::StreamsResult;
use super::train::TrainResult;
use super::tree::TreeResult;
use super::workload::{LatencySummary, WorkloadResult};
use super::{Raised, RaisedBy, RunResult};
use crate::measure::facts::DeviceFacts;
use crate::measure::intervals::Interval;
use crate::spec::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// What an operation of a series is, for the words of its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// A disk's I/Os.
    #[default]
    Iops,
    /// An object store's requests.
    Requests,
    /// Training samples read.
    Samples,
    /// Batches an accelerator waited for.
    Batches,
    /// File-system operations (tree and metadata phases).
    Operations,
}

impl Rate {
    /// The rate's name in a verdict: "IOPS", "requests/s".
    pub fn name(self) -> &'static str {
        match self {
            Rate::Iops => "IOPS",
            Rate::Requests => "requests/s",
            Rate::Samples => "samples/s",
            Rate::Batches => "batches/s",
            Rate::Operations => "ops/s",
        }
    }
}

/// One part of a result that `check` judges: a disk workload's direction,
/// an object store's operation, a tree or metadata phase, a training
/// run's sample reads or batch waits.
pub struct Series<'a> {
    /// The part's name: "read", "get", "create", "samples".
    pub part: String,
    pub rate: Rate,
    /// Its slices, each with its histogram.
    pub seconds: &'a [Interval],
    /// Training's sample reads: the accelerators' utilization in each
    /// slice, the first `utilization.len()` slices' (AU is judged too).
    pub utilization: Option<&'a [f64]>,
    /// Operations over the whole result (zero: the part did nothing).
    pub ops: u64,
    /// The result's own rate and latency of the part (not rebuilt from
    /// the slices).
    pub per_s: f64,
    pub lat_ns: LatencySummary,
}

impl<'a> Series<'a> {
    fn of(part: impl Into<String>, rate: Rate, seconds: &'a [Interval]) -> Self {
        Series {
            part: part.into(),
            rate,
            seconds,
            utilization: None,
            ops: seconds.iter().map(|s| s.ios).sum(),
            per_s: 0.0,
            lat_ns: LatencySummary::default(),
        }
    }

    fn totals(mut self, ops: u64, per_s: f64, lat_ns: LatencySummary) -> Self {
        (self.ops, self.per_s, self.lat_ns) = (ops, per_s, lat_ns);
        self
    }
}

/// Where a result ran: as a note names it, and what must be equal for two
/// places to be the same kind of target: the file system and device
/// model, or the store.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    pub shown: String,
    pub filesystem: Option<String>,
    pub model: Option<String>,
    /// A target with neither (an object store): its address.
    pub store: Option<String>,
}

impl Place {
    /// Equal for places of the same kind of target.
    pub fn identity(&self) -> (&Option<String>, &Option<String>, &Option<String>) {
        (&self.filesystem, &self.model, &self.store)
    }
}

/// What every kind of result tells the commands over results.
pub trait Kind {
    /// How verdicts and reports name it: "randread 4k QD32", "object-store
    /// run mix of s3://bench".
    fn described(&self) -> String;
    /// How a listing of a file's results names it, where the kinds'
    /// names are side by side ("metadata run").
    fn listed(&self) -> String {
        self.described()
    }
    /// The knobs that make it the workload it is, not its target or the
    /// target's speed: two results are runs of one workload when these
    /// agree.
    fn knobs(&self) -> Vec<(&'static str, String)>;
    /// Equal for runs of the same workload whatever they ran on: the
    /// history finds earlier runs by it.
    fn workload_key(&self) -> Option<String> {
        let knobs = self.knobs();
        (!knobs.is_empty()).then(|| {
            knobs
                .into_iter()
                .map(|(_, v)| v)
                .collect::<Vec<_>>()
                .join(", ")
        })
    }
    /// The target as the history keeps it.
    fn target_key(&self) -> Option<String>;
    /// How it was measured beside its workload (a disk workload's engine
    /// settings), each named: runs that differ in these are set apart.
    fn settings(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// Where it ran.
    fn place(&self) -> Option<Place>;
    /// The parts `check` judges; empty: a kind with no per-slice figures.
    fn series(&self) -> Vec<Series<'_>> {
        Vec::new()
    }
    /// Why a change of it may not be the target's (it was limited or held
    /// back by the host or fathom), to follow the run's name: " was
    /// limited by host CPU, not the target", "'s workers waited ...".
    fn not_the_targets(&self) -> Option<String> {
        None
    }
    /// The share of their time its workers waited for a CPU (a busy
    /// host's hold on it), where measured: two runs the host held back
    /// alike can still be judged against each other.
    fn host_share(&self) -> Option<f64> {
        None
    }
    /// What limited it, where that is not the target: the host, fathom.
    fn limited_not_by_the_target(&self) -> Option<super::limit::Limiter> {
        None
    }
    /// Whether it did not do or prove what was asked: a target failed, a
    /// certification or training run missed its mark, requests failed.
    fn failed(&self) -> bool {
        false
    }
    /// Why the run stopped short of what was asked (a store that failed,
    /// a tree it could not make): what it measured is not the whole run.
    fn failure(&self) -> Option<String> {
        None
    }
    /// Whether it was stopped (Ctrl-C, SIGTERM) before its end.
    fn interrupted(&self) -> bool {
        false
    }
    /// When it started measuring (seconds since the epoch) and for how
    /// long it ran; None for results that do not say.
    fn span(&self) -> Option<(f64, f64)> {
        None
    }
    /// The disk workloads it holds (itself, a run's streams), each named
    /// as reports name it: what fio's formats, target problems and the
    /// ranks' table read.
    fn disk_workloads(&self) -> Vec<(String, &WorkloadResult)> {
        Vec::new()
    }
    /// Its warnings, each with what raised it.
    fn raised(&self) -> Vec<Raised<'_>> {
        Vec::new()
    }
    /// It (the first rank's) and the same result of every other rank in
    /// `parts` (its own first), measured at the same time, merged.
    fn concurrent(&self, parts: &[&RunResult], ranks: &[RankName]) -> Result<RunResult, String> {
        let _ = (parts, ranks);
        Err(format!(
            "{}: results of several hosts are not merged (run it per host)",
            self.listed()
        ))
    }
}

/// A result kind's own type, to and from the document's [`RunResult`]:
/// code that needs one kind's fields (fio's format of a disk job, a
/// tree's phases) asks for it by type, `result.get::<TreeResult>()`,
/// never by listing the kinds.
pub trait OneKind: Kind + Sized {
    fn of(result: &RunResult) -> Option<&Self>;
    fn of_mut(result: &mut RunResult) -> Option<&mut Self>;
    fn into_result(self) -> RunResult;
    fn taken(result: RunResult) -> Option<Self>;
}

macro_rules! one_kind {
    ($($kind:ident: $t:ty),* $(,)?) => {$(
        impl OneKind for $t {
            fn of(result: &RunResult) -> Option<&Self> {
                match result {
                    RunResult::$kind(r) => Some(r),
                    _ => None,
                }
            }
            fn of_mut(result: &mut RunResult) -> Option<&mut Self> {
                match result {
                    RunResult::$kind(r) => Some(r),
                    _ => None,
                }
            }
            fn into_result(self) -> RunResult {
                RunResult::$kind(self)
            }
            fn taken(result: RunResult) -> Option<Self> {
                match result {
                    RunResult::$kind(r) => Some(r),
                    _ => None,
                }
            }
        }
    )*};
}

one_kind!(
    Workload: WorkloadResult,
    Meta: MetaResult,
    Certify: CertifyResult,
    Streams: StreamsResult,
    Capacity: CapacityResult,
    Pts: PtsResult,
    Tree: TreeResult,
    Object: ObjectResult,
    Train: TrainResult,
);

/// Every rank's result of one kind, as `T`; an error where a rank's is of
/// another kind (the ranks ran different workloads).
pub fn each_of<'a, T: OneKind>(parts: &[&'a RunResult]) -> Result<Vec<&'a T>, String> {
    parts
        .iter()
        .map(|p| T::of(p).ok_or_else(|| "the ranks ran different workloads".to_string()))
        .collect()
}

/// As [`each_of`], each with its rank's number.
fn numbered_each<'a, T: OneKind>(
    parts: &[&'a RunResult],
    ranks: &[RankName],
) -> Result<Vec<(u32, &'a T)>, String> {
    Ok(ranks
        .iter()
        .map(|r| r.number)
        .zip(each_of(parts)?)
        .collect())
}

/// The one dispatch to a result's own type, for code that shows every
/// kind its own way (a report's sections, compare's rows): a method per
/// kind, each doing nothing unless the visitor shows that kind.
pub trait Visit<'a> {
    fn workload(&mut self, _: &'a WorkloadResult) {}
    fn meta(&mut self, _: &'a MetaResult) {}
    fn certify(&mut self, _: &'a CertifyResult) {}
    fn streams(&mut self, _: &'a StreamsResult) {}
    fn capacity(&mut self, _: &'a CapacityResult) {}
    fn pts(&mut self, _: &'a PtsResult) {}
    fn tree(&mut self, _: &'a TreeResult) {}
    fn object(&mut self, _: &'a ObjectResult) {}
    fn train(&mut self, _: &'a TrainResult) {}
}

impl RunResult {
    /// It as kind `T`, if it is one.
    pub fn get<T: OneKind>(&self) -> Option<&T> {
        T::of(self)
    }

    pub fn get_mut<T: OneKind>(&mut self) -> Option<&mut T> {
        T::of_mut(self)
    }

    /// It, taken as kind `T`, if it is one.
    pub fn into_kind<T: OneKind>(self) -> Option<T> {
        T::taken(self)
    }

    /// Hands it to the visitor's method for its kind.
    pub fn visit<'a>(&'a self, v: &mut dyn Visit<'a>) {
        match self {
            RunResult::Workload(w) => v.workload(w),
            RunResult::Meta(m) => v.meta(m),
            RunResult::Certify(c) => v.certify(c),
            RunResult::Streams(s) => v.streams(s),
            RunResult::Capacity(c) => v.capacity(c),
            RunResult::Pts(p) => v.pts(p),
            RunResult::Tree(t) => v.tree(t),
            RunResult::Object(o) => v.object(o),
            RunResult::Train(t) => v.train(t),
        }
    }

    /// The result's kind: the one match on the kinds that the commands
    /// over results need.
    pub fn kind(&self) -> &dyn Kind {
        match self {
            RunResult::Workload(w) => w,
            RunResult::Meta(m) => m,
            RunResult::Certify(c) => c,
            RunResult::Streams(s) => s,
            RunResult::Capacity(c) => c,
            RunResult::Pts(p) => p,
            RunResult::Tree(t) => t,
            RunResult::Object(o) => o,
            RunResult::Train(t) => t,
        }
    }

    /// The kind's tag in the document ("workload", "object").
    pub fn kind_name(&self) -> &'static str {
        match self {
            RunResult::Workload(_) => "workload",
            RunResult::Meta(_) => "meta",
            RunResult::Certify(_) => "certify",
            RunResult::Streams(_) => "streams",
            RunResult::Capacity(_) => "capacity",
            RunResult::Pts(_) => "pts",
            RunResult::Tree(_) => "tree",
            RunResult::Object(_) => "object",
            RunResult::Train(_) => "train",
        }
    }
}

fn limited(l: Option<&super::limit::LimitedBy>) -> Option<String> {
    let l = l.filter(|l| !l.by.is_the_targets())?;
    Some(format!(" was limited by {}, not the target", l.by.name()))
}

/// A disk workload's knobs: its shape, O_DIRECT and the rates asked.
fn workload_knobs(spec: &crate::spec::WorkloadSpec) -> Vec<(&'static str, String)> {
    vec![
        ("workload", spec.label()),
        ("O_DIRECT", spec.direct.to_string()),
        (
            "rate",
            spec.rate_iops
                .map_or("none".into(), |r| format!("{r} IOPS")),
        ),
        (
            "bandwidth rate",
            spec.rate_bw.map_or("none".into(), |r| format!("{r} B/s")),
        ),
    ]
}

/// A disk workload's engine settings, each named.
pub fn engine_settings(spec: &WorkloadSpec) -> Vec<(&'static str, String)> {
    let cache = match (spec.direct, spec.uncached) {
        (true, _) => "O_DIRECT",
        (false, true) => "buffered, uncached",
        (false, false) => "buffered",
    };
    vec![
        ("engine", spec.engine.to_string()),
        ("completion wait", spec.completion_wait.to_string()),
        ("hipri", spec.hipri.to_string()),
        ("sqpoll", spec.sqpoll.to_string()),
        ("cache", cache.to_string()),
        ("atomic writes", spec.atomic.to_string()),
    ]
}

/// A disk workload's key: "randread 4k QD32 buffered at 1000 IOPS".
pub fn workload_key(spec: &crate::spec::WorkloadSpec) -> String {
    let knobs = workload_knobs(spec);
    let mut key = knobs[0].1.clone();
    if knobs[1].1 != "true" {
        key.push_str(" buffered");
    }
    for (_, r) in knobs[2..].iter().filter(|(_, r)| r != "none") {
        key.push_str(&format!(" at {r}"));
    }
    key
}

fn file_place(name: &str, filesystem: Option<&String>) -> Place {
    let fs = filesystem.map_or("no file system", String::as_str);
    Place {
        shown: format!("{name} ({fs})"),
        filesystem: filesystem.cloned(),
        model: None,
        store: None,
    }
}

impl Kind for WorkloadResult {
    fn described(&self) -> String {
        self.spec.title()
    }

    fn listed(&self) -> String {
        self.spec.named()
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        workload_knobs(&self.spec)
    }

    fn workload_key(&self) -> Option<String> {
        Some(workload_key(&self.spec))
    }

    fn settings(&self) -> Vec<(&'static str, String)> {
        engine_settings(&self.spec)
    }

    /// A whole drive by its model and serial, which stay when the kernel
    /// names it otherwise after a reboot or a new drive; anything else (a
    /// file, a partition, a drive that gave no serial) by its path.
    fn target_key(&self) -> Option<String> {
        let t = self.targets.first()?;
        let whole_drive =
            t.facts.kind == crate::measure::facts::TargetKind::BlockDevice && !t.facts.partition;
        let drive = whole_drive
            .then(|| {
                let name = &t.facts.device.as_ref()?.name;
                self.devices
                    .iter()
                    .find(|r| &r.name == name)?
                    .identity
                    .as_ref()?
                    .history_key()
            })
            .flatten();
        let over = whole_drive
            .then(|| t.facts.device.as_ref()?.backing.as_deref())
            .flatten();
        Some(drive.unwrap_or_else(|| crate::measure::facts::device_key(&t.name, over)))
    }

    fn place(&self) -> Option<Place> {
        let t = self.targets.first()?;
        let fs = t.facts.filesystem.as_deref().unwrap_or("no file system");
        let model = t.facts.device.as_ref().and_then(DeviceFacts::what);
        Some(Place {
            shown: match &model {
                Some(m) => format!("{} ({fs} on {m})", t.name),
                None => format!("{} ({fs})", t.name),
            },
            filesystem: t.facts.filesystem.clone(),
            model,
            store: None,
        })
    }

    fn series(&self) -> Vec<Series<'_>> {
        self.total
            .named()
            .into_iter()
            .map(|(direction, d)| {
                Series::of(direction, Rate::Iops, &d.intervals).totals(d.ios, d.iops, d.lat_ns)
            })
            .collect()
    }

    /// A worker waiting for a CPU adds the wait to every I/O it times:
    /// two identical null-engine runs beside stress-ng, their workers
    /// waiting 3% and 7% of the time, differed at p99 by +36% [+13% +150%].
    fn not_the_targets(&self) -> Option<String> {
        if let Some(said) = limited(self.limited_by.as_ref()) {
            return Some(said);
        }
        let waited = self.cpu.waited_for_cpu_share.filter(|&s| s >= HOST_HINT)?;
        Some(format!(
            "'s workers waited for a CPU {:.0}% of the time they ran (a busy host)",
            waited * 100.0
        ))
    }

    fn host_share(&self) -> Option<f64> {
        // Only where the target kept the slots busy is the host's hand a
        // share of the time: a run whose slots sat free for its workers
        // (or whose engine does no I/O, so has no slots to time) was bound
        // by the CPU, and all of its rate may be the host's.
        let issue = self.issue.as_ref()?;
        if issue.idle_slot_share >= super::limit::FATHOM_IDLE_SLOTS {
            return None;
        }
        self.cpu.waited_for_cpu_share
    }

    fn limited_not_by_the_target(&self) -> Option<super::limit::Limiter> {
        self.limited_by
            .as_ref()
            .map(|l| l.by)
            .filter(|by| !by.is_the_targets())
    }

    fn failed(&self) -> bool {
        self.targets.iter().any(super::TargetResult::failed)
    }

    fn span(&self) -> Option<(f64, f64)> {
        Some((self.started_unix_s?, self.runtime_s))
    }

    fn disk_workloads(&self) -> Vec<(String, &WorkloadResult)> {
        vec![(self.spec.name.clone(), self)]
    }

    fn raised(&self) -> Vec<Raised<'_>> {
        self.warnings
            .iter()
            .map(|x| Raised::new(self.spec.name.clone(), RaisedBy::Run, x))
            .collect()
    }

    fn concurrent(&self, parts: &[&RunResult], ranks: &[RankName]) -> Result<RunResult, String> {
        let ws = each_of::<WorkloadResult>(parts)?;
        super::cluster::concurrent_workloads(&ws, ranks).map(RunResult::Workload)
    }
}

impl Kind for StreamsResult {
    fn described(&self) -> String {
        format!("streams workload {}", self.spec.name)
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        let mut knobs = vec![("streams", self.spec.name.clone())];
        knobs.extend(
            self.streams
                .iter()
                .map(|w| ("stream", workload_key(&w.spec))),
        );
        knobs
    }

    fn target_key(&self) -> Option<String> {
        self.streams.first().and_then(Kind::target_key)
    }

    fn place(&self) -> Option<Place> {
        self.streams.first().and_then(Kind::place)
    }

    fn series(&self) -> Vec<Series<'_>> {
        self.streams
            .iter()
            .flat_map(|w| {
                w.series().into_iter().map(move |mut s| {
                    s.part = format!("{} {}", w.spec.name, s.part);
                    s
                })
            })
            .collect()
    }

    fn not_the_targets(&self) -> Option<String> {
        self.streams.iter().find_map(Kind::not_the_targets)
    }

    fn host_share(&self) -> Option<f64> {
        self.streams
            .iter()
            .map(Kind::host_share)
            .try_fold(0.0, |most: f64, s| Some(most.max(s?)))
    }

    fn limited_not_by_the_target(&self) -> Option<super::limit::Limiter> {
        self.streams
            .iter()
            .find_map(Kind::limited_not_by_the_target)
    }

    fn failed(&self) -> bool {
        self.streams.iter().any(Kind::failed)
    }

    fn span(&self) -> Option<(f64, f64)> {
        Some((self.streams.first()?.started_unix_s?, self.runtime_s))
    }

    fn disk_workloads(&self) -> Vec<(String, &WorkloadResult)> {
        self.streams
            .iter()
            .map(|w| (format!("{}/{}", self.spec.name, w.spec.name), w))
            .collect()
    }

    fn raised(&self) -> Vec<Raised<'_>> {
        self.disk_workloads()
            .into_iter()
            .flat_map(|(name, w)| {
                w.warnings
                    .iter()
                    .map(move |x| Raised::new(name.clone(), RaisedBy::Stream, x))
            })
            .collect()
    }

    fn concurrent(&self, parts: &[&RunResult], ranks: &[RankName]) -> Result<RunResult, String> {
        let ss = each_of::<StreamsResult>(parts)?;
        super::cluster::concurrent_streams(&ss, ranks).map(RunResult::Streams)
    }
}

impl Kind for ObjectResult {
    fn described(&self) -> String {
        format!(
            "object-store run {} of {}",
            self.spec.name, self.spec.target
        )
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("mix", self.spec.mix.to_string()),
            ("object size", self.spec.object_size.to_string()),
            ("workers", self.spec.workers.to_string()),
            (
                "rate",
                self.spec
                    .rate
                    .map_or("none".into(), |r| format!("{r} requests/s")),
            ),
        ]
    }

    /// Runs alike by mix, sizes and workers (as the history has keyed
    /// them from the first).
    fn workload_key(&self) -> Option<String> {
        let mut key = format!(
            "mix {} of {} objects, {} workers",
            self.spec.mix, self.spec.object_size, self.spec.workers
        );
        if let Some(r) = self.spec.rate {
            key.push_str(&format!(" at {r} requests/s"));
        }
        Some(key)
    }

    fn target_key(&self) -> Option<String> {
        Some(self.spec.target.to_string())
    }

    fn place(&self) -> Option<Place> {
        Some(Place {
            shown: self.spec.target.to_string(),
            filesystem: None,
            model: None,
            store: Some(self.spec.target.to_string()),
        })
    }

    fn series(&self) -> Vec<Series<'_>> {
        self.ops
            .iter()
            .map(|o| {
                Series::of(o.op.name(), Rate::Requests, &o.intervals).totals(
                    o.ops,
                    o.ops_per_s,
                    o.lat_ns,
                )
            })
            .collect()
    }

    fn not_the_targets(&self) -> Option<String> {
        if let Some(said) = limited(self.limited_by.as_ref()) {
            return Some(said);
        }
        let waited = self.host_share()?;
        (waited >= HOST_HINT).then(|| {
            format!(
                "'s workers waited for a CPU {:.0}% of the time they ran (a busy host)",
                waited * 100.0
            )
        })
    }

    fn limited_not_by_the_target(&self) -> Option<super::limit::Limiter> {
        self.limited_by
            .as_ref()
            .map(|l| l.by)
            .filter(|by| !by.is_the_targets())
    }

    fn host_share(&self) -> Option<f64> {
        let span = f64::from(self.spec.workers) * self.elapsed_s;
        Some(self.client.as_ref()?.cpu_wait_s? / span.max(1e-9))
    }

    fn failed(&self) -> bool {
        self.failure.is_some() || self.total_errors() > 0
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    fn interrupted(&self) -> bool {
        self.interrupted
    }

    fn span(&self) -> Option<(f64, f64)> {
        Some((self.started_unix_s?, self.elapsed_s))
    }

    fn concurrent(&self, parts: &[&RunResult], ranks: &[RankName]) -> Result<RunResult, String> {
        super::object::concurrent(&numbered_each::<ObjectResult>(parts, ranks)?)
            .map(RunResult::Object)
    }
}

impl Kind for TrainResult {
    fn described(&self) -> String {
        format!("train {}", self.named())
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![("workload", self.named())]
    }

    fn target_key(&self) -> Option<String> {
        Some(self.dir().to_string())
    }

    fn place(&self) -> Option<Place> {
        Some(file_place(self.dir(), self.filesystem()))
    }

    fn series(&self) -> Vec<Series<'_>> {
        let TrainResult::Training(t) = self else {
            return Vec::new();
        };
        let mut samples = Series::of("samples", Rate::Samples, &t.sample_read.intervals).totals(
            t.samples,
            t.samples_per_s,
            t.sample_read.lat_ns,
        );
        samples.utilization = Some(&t.au_intervals);
        let waits = &t.batch_wait;
        let per_s = waits.count as f64 / t.elapsed_s.max(1e-9);
        vec![
            samples,
            Series::of("batch wait", Rate::Batches, &waits.intervals).totals(
                waits.count,
                per_s,
                waits.lat_ns,
            ),
        ]
    }

    fn not_the_targets(&self) -> Option<String> {
        let TrainResult::Training(t) = self else {
            return None;
        };
        let lag = t.host_lag_share();
        let waited = t.loaders_waited_for_cpu_share.unwrap_or(0.0);
        if lag >= HOST_HINT && lag >= waited {
            Some(format!(
                "'s accelerators were held back by the host {:.0}% of their time (a busy host)",
                lag * 100.0
            ))
        } else if waited >= HOST_HINT {
            Some(format!(
                "'s loaders waited for a CPU {:.0}% of the time they ran (a busy host)",
                waited * 100.0
            ))
        } else {
            None
        }
    }

    fn host_share(&self) -> Option<f64> {
        match self {
            TrainResult::Training(t) => Some(t.host_share()),
            TrainResult::Checkpoint(_) => None,
        }
    }

    fn failed(&self) -> bool {
        TrainResult::failed(self)
    }

    fn failure(&self) -> Option<String> {
        TrainResult::failure(self).cloned()
    }

    fn interrupted(&self) -> bool {
        TrainResult::interrupted(self)
    }

    fn span(&self) -> Option<(f64, f64)> {
        Some((self.started_unix_s()?, self.elapsed_s()))
    }

    fn concurrent(&self, parts: &[&RunResult], ranks: &[RankName]) -> Result<RunResult, String> {
        super::train::concurrent(&numbered_each::<TrainResult>(parts, ranks)?).map(RunResult::Train)
    }
}

impl Kind for TreeResult {
    fn described(&self) -> String {
        format!(
            "tree of depth {}, width {}, {} files a leaf",
            self.spec.shape.depth, self.spec.shape.width, self.spec.shape.files
        )
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("tree", self.described()),
            ("threads", self.spec.threads.to_string()),
            (
                "file size",
                format!("{}-{} B", self.spec.file_size_min, self.spec.file_size_max),
            ),
            ("fsync", format!("{:?}", self.spec.fsync).to_lowercase()),
        ]
    }

    fn target_key(&self) -> Option<String> {
        Some(self.spec.dir.clone())
    }

    fn place(&self) -> Option<Place> {
        Some(file_place(&self.spec.dir, self.filesystem.as_ref()))
    }

    fn series(&self) -> Vec<Series<'_>> {
        self.phases
            .iter()
            .map(|p| {
                Series::of(p.phase.name(), Rate::Operations, &p.intervals).totals(
                    p.ops,
                    p.ops_per_s,
                    p.lat_ns,
                )
            })
            .collect()
    }

    fn failed(&self) -> bool {
        self.failure.is_some()
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    fn interrupted(&self) -> bool {
        self.interrupted
    }

    fn span(&self) -> Option<(f64, f64)> {
        Some((self.started_unix_s?, self.elapsed_s()))
    }

    fn concurrent(&self, parts: &[&RunResult], ranks: &[RankName]) -> Result<RunResult, String> {
        super::tree::concurrent(&numbered_each::<TreeResult>(parts, ranks)?).map(RunResult::Tree)
    }
}

impl Kind for MetaResult {
    fn described(&self) -> String {
        format!(
            "metadata run of {}k files, {} a directory",
            self.spec.files_k, self.spec.files_per_dir
        )
    }

    fn listed(&self) -> String {
        "metadata run".into()
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("files", format!("{}k", self.spec.files_k)),
            ("files a directory", self.spec.files_per_dir.to_string()),
            ("file size", format!("{} B", self.spec.file_size)),
            ("block tests", format!("{} B", self.spec.block_size)),
        ]
    }

    fn target_key(&self) -> Option<String> {
        Some(self.spec.dir.clone())
    }

    fn place(&self) -> Option<Place> {
        Some(file_place(&self.spec.dir, self.filesystem.as_ref()))
    }

    /// The file phases; the block tests keep no slices.
    fn series(&self) -> Vec<Series<'_>> {
        self.ops
            .iter()
            .filter(|o| o.bytes.is_none())
            .map(|o| {
                Series::of(o.name.replace('_', " "), Rate::Operations, &o.intervals).totals(
                    o.ops,
                    o.ops_per_s,
                    o.lat_ns,
                )
            })
            .collect()
    }

    fn interrupted(&self) -> bool {
        self.interrupted
    }

    fn raised(&self) -> Vec<Raised<'_>> {
        self.warnings
            .iter()
            .map(|x| Raised::new("meta".into(), RaisedBy::Run, x))
            .collect()
    }
}

impl Kind for CertifyResult {
    fn described(&self) -> String {
        format!("certification {}", self.profile.name)
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![("profile", self.profile.name.clone())]
    }

    fn target_key(&self) -> Option<String> {
        Some(self.target.clone())
    }

    fn place(&self) -> Option<Place> {
        None
    }

    fn failed(&self) -> bool {
        self.pass == Some(false)
    }
}

impl Kind for CapacityResult {
    fn described(&self) -> String {
        format!(
            "capacity search of {} for {}",
            self.spec.name, self.search.slo
        )
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("workload", workload_key(&self.spec)),
            ("objective", self.search.slo.to_string()),
        ]
    }

    fn target_key(&self) -> Option<String> {
        self.spec.targets.first().cloned()
    }

    fn place(&self) -> Option<Place> {
        None
    }

    fn raised(&self) -> Vec<Raised<'_>> {
        self.steps
            .iter()
            .flat_map(|step| {
                let by = format!(
                    "{} at {}/s",
                    self.spec.name,
                    crate::util::units::thousands(step.offered_iops.round() as u64)
                );
                step.warnings
                    .iter()
                    .map(move |x| Raised::new(by.clone(), RaisedBy::Step, x))
            })
            .collect()
    }
}

impl Kind for PtsResult {
    fn described(&self) -> String {
        format!("pts {}", self.spec.test)
    }

    fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![("test", self.spec.test.to_string())]
    }

    fn target_key(&self) -> Option<String> {
        Some(self.target.path.clone())
    }

    fn place(&self) -> Option<Place> {
        None
    }
}
