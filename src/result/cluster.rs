//! Results of several hosts (ranks) that ran the same plan at the same time:
//! each rank's own figures, with its rank and host, and how far apart the
//! ranks started and ended. The document's `results` hold the concurrent
//! merge of all ranks ([`concurrent_documents`]).

use super::merge::{concurrent, concurrent_sync};
use super::streams::StreamsResult;
use super::{CpuUsage, DirectionPair, DirectionResult, DiskUsage, Document, RunResult};
use super::{SyncResult, WorkloadResult};
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
    /// Ranks that failed and sent no results (an error fathom saw on that
    /// rank): the document holds the others' and is marked interrupted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<RankFailure>,
}

/// A rank that failed, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankFailure {
    pub rank: u32,
    pub error: String,
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
    /// The pods of a Kubernetes Indexed Job (`fathom k8s`), started at an
    /// agreed time and joined by `fathom k8s collect`; a rank is a pod's
    /// index.
    Kubernetes,
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

/// Documents of ranks (hosts) that ran the same plan at the same time, as
/// one cluster document: each result is the concurrent merge of the ranks'
/// (counts and histograms added, rates over the longest rank's time, each
/// target named after its rank and host), and `cluster` keeps each rank's
/// own results. Ranks are numbered in the order given.
pub fn concurrent_documents(ranks: Vec<Document>, launcher: Launcher) -> Result<Document, String> {
    concurrent_ranks(
        ranks
            .into_iter()
            .enumerate()
            .map(|(r, d)| (r as u32, d))
            .collect(),
        launcher,
    )
}

/// As `concurrent_documents`, each document with its rank's number (a rank
/// that failed sent none, and the others keep their numbers).
pub fn concurrent_ranks(
    numbered: Vec<(u32, Document)>,
    launcher: Launcher,
) -> Result<Document, String> {
    let numbers: Vec<u32> = numbered.iter().map(|(r, _)| *r).collect();
    let ranks: Vec<Document> = numbered.into_iter().map(|(_, d)| d).collect();
    let Some(first) = ranks.first() else {
        return Err("no documents".into());
    };
    if let Some(i) = ranks.iter().position(|d| d.cluster.is_some()) {
        return Err(format!("document {} is already a cluster's merge", i + 1));
    }
    let results = first.results.len();
    if let Some(i) = ranks.iter().position(|d| d.results.len() != results) {
        return Err(format!(
            "document {} has {} results, document 1 has {results}: the ranks did not run the same plan",
            i + 1,
            ranks[i].results.len()
        ));
    }
    let names: Vec<RankName> = ranks
        .iter()
        .zip(&numbers)
        .map(|(d, r)| RankName {
            number: *r,
            label: format!("rank{r}@{}", d.host.hostname),
            host: d.host.hostname.clone(),
        })
        .collect();
    let mut merged = Vec::with_capacity(results);
    for k in 0..results {
        let parts: Vec<&RunResult> = ranks.iter().map(|d| &d.results[k]).collect();
        merged.push(concurrent_result(k, &parts, &names)?);
    }
    let first_starts: Vec<f64> = ranks
        .iter()
        .filter_map(|d| d.results.first().and_then(started_and_runtime))
        .map(|(start, _)| start)
        .collect();
    let ends: Vec<f64> = ranks
        .iter()
        .filter_map(|d| d.results.last().and_then(started_and_runtime))
        .map(|(start, runtime)| start + runtime)
        .collect();
    let spread = |v: &[f64]| {
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            - v.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let mut hosts: Vec<String> = Vec::new();
    for d in &ranks {
        if !hosts.contains(&d.host.hostname) {
            hosts.push(d.host.hostname.clone());
        }
    }
    let mut out = Document {
        fathom_version: first.fathom_version.clone(),
        fathom_commit: first.fathom_commit.clone(),
        schema: first.schema,
        started_at: first.started_at.clone(),
        host: first.host.clone(),
        label: first.label.clone(),
        interrupted: ranks.iter().any(|d| d.interrupted),
        results: merged,
        cluster: None,
        failure: None,
        notes: Vec::new(),
        pod: None,
    };
    out.cluster = Some(Cluster {
        ranks: ranks.len() as u32,
        hosts,
        launcher,
        mpi_library: None,
        start_spread_s: if first_starts.len() > 1 {
            spread(&first_starts)
        } else {
            0.0
        },
        end_spread_s: if ends.len() > 1 { spread(&ends) } else { 0.0 },
        failed: Vec::new(),
        per_rank: ranks
            .into_iter()
            .zip(numbers)
            .map(|(d, r)| Rank {
                rank: r,
                host: d.host.hostname,
                started_at: d.started_at,
                interrupted: d.interrupted,
                results: d.results,
            })
            .collect(),
    });
    Ok(out)
}

/// When a result started measuring (seconds since the epoch) and for how
/// long it ran; None for results that do not say.
fn started_and_runtime(r: &RunResult) -> Option<(f64, f64)> {
    r.kind().span()
}

/// Result `k` of every rank, merged.
fn concurrent_result(
    k: usize,
    parts: &[&RunResult],
    ranks: &[RankName],
) -> Result<RunResult, String> {
    parts[0]
        .kind()
        .concurrent(parts, ranks)
        .map_err(|e| format!("result {}: {e}", k + 1))
}

/// A streams run as every rank ran it, at the same time: stream by stream.
pub(super) fn concurrent_streams(
    ss: &[&StreamsResult],
    ranks: &[RankName],
) -> Result<StreamsResult, String> {
    let first = ss[0];
    if ss.iter().any(|s| s.streams.len() != first.streams.len()) {
        return Err("the ranks ran different workloads".into());
    }
    let mut streams = Vec::with_capacity(first.streams.len());
    for i in 0..first.streams.len() {
        let ws: Vec<&WorkloadResult> = ss.iter().map(|s| &s.streams[i]).collect();
        streams.push(concurrent_workloads(&ws, ranks)?);
    }
    let mut merged = StreamsResult::new(first.spec.clone(), streams)?;
    merged.disks = ranks_disks(ss.iter().map(|s| s.disks.as_slice()), ranks);
    Ok(merged)
}

/// One workload as every rank ran it, at the same time.
pub(super) fn concurrent_workloads(
    parts: &[&WorkloadResult],
    ranks: &[RankName],
) -> Result<WorkloadResult, String> {
    let first = parts[0];
    for p in parts {
        if p.spec.name != first.spec.name
            || p.spec.rw != first.spec.rw
            || p.spec.bs != first.spec.bs
        {
            return Err(format!(
                "workload {} on one rank, {} on another",
                first.spec.label(),
                p.spec.label()
            ));
        }
    }
    let span_s = parts.iter().map(|p| p.runtime_s).fold(0.0, f64::max);
    let side = |pick: fn(&DirectionPair) -> &DirectionResult| -> Result<DirectionResult, String> {
        concurrent(
            &parts.iter().map(|p| pick(&p.total)).collect::<Vec<_>>(),
            span_s,
        )
    };
    let total = DirectionPair {
        read: side(|d| &d.read)?,
        write: side(|d| &d.write)?,
        trim: side(|d| &d.trim)?,
    };
    let syncs: Vec<&SyncResult> = parts.iter().filter_map(|p| p.sync.as_ref()).collect();
    let resets: Vec<&SyncResult> = parts
        .iter()
        .filter_map(|p| p.zone_resets.as_ref())
        .collect();
    let cpu = CpuUsage::added(parts.iter().map(|p| &p.cpu), total.ios());
    let targets = parts
        .iter()
        .zip(ranks)
        .flat_map(|(p, rank)| {
            p.targets.iter().map(move |t| {
                let mut t = t.clone();
                t.name = format!("{}:{}", rank.label, t.name);
                t
            })
        })
        .collect();
    let warnings = parts
        .iter()
        .zip(ranks)
        .flat_map(|(p, rank)| {
            p.warnings.iter().map(move |w| {
                let mut w = w.clone();
                w.target = format!("{}:{}", rank.label, w.target);
                w
            })
        })
        .collect();
    Ok(WorkloadResult {
        spec: first.spec.clone(),
        targets,
        total,
        cpu,
        runtime_s: span_s,
        interrupted: parts.iter().any(|p| p.interrupted),
        warnings,
        sync: if syncs.is_empty() {
            None
        } else {
            Some(concurrent_sync(&syncs, span_s)?)
        },
        zone_resets: if resets.is_empty() {
            None
        } else {
            Some(concurrent_sync(&resets, span_s)?)
        },
        steady_state: None,
        // Each rank measured its own writes; the first rank's stands for
        // all (they wrote the same kind of content).
        data: first.data.clone(),
        // What the ranks chose agrees when their hosts are alike; the first
        // rank's stands for the group (each rank's own results keep theirs).
        engine_tuning: first.engine_tuning.clone(),
        // Replays are of one host.
        replay: first.replay.clone(),
        queue_depths: parts.iter().fold(Default::default(), |mut q, p| {
            q.add(&p.queue_depths);
            q
        }),
        // Each rank keeps its own; the group's figures are as good as its
        // most limited rank's.
        issue: None,
        limited_by: most_limited(parts, ranks),
        // Ranks run without repeats (`--mpi` refuses `--repeat`).
        repeats: None,
        // Each rank's temperatures stay in its own results.
        temperature: Vec::new(),
        disks: ranks_disks(parts.iter().map(|p| p.disks.as_slice()), ranks),
        // Each rank's drives stay in its own results, as its temperatures.
        devices: Vec::new(),
        started_unix_s: parts
            .iter()
            .filter_map(|p| p.started_unix_s)
            .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s)))),
    })
}

/// The verdict of the rank that says the least for the group's figures
/// (a busy host over fathom over the page cache over the device over the
/// schedule), named by its rank.
fn most_limited(parts: &[&WorkloadResult], ranks: &[RankName]) -> Option<super::limit::LimitedBy> {
    use super::limit::Limiter;
    let rank = |by: Limiter| match by {
        Limiter::Host => 0,
        Limiter::Fathom => 1,
        Limiter::PageCache => 2,
        Limiter::Device | Limiter::Store => 3,
        Limiter::RateAsked => 4,
    };
    parts
        .iter()
        .zip(ranks)
        .filter_map(|(p, r)| Some((p.limited_by.as_ref()?, r)))
        .min_by_key(|(l, _)| rank(l.by))
        .map(|(l, r)| super::limit::LimitedBy {
            by: l.by,
            evidence: format!("{}: {}", r.label, l.evidence),
        })
}

/// A rank as merged results name it: `rank3@node7`, and its host.
pub struct RankName {
    pub number: u32,
    label: String,
    host: String,
}

/// Each rank's disks, named after the rank's host; ranks on one host see the same
/// counters, so a host's disks are taken from its first rank only.
fn ranks_disks<'a>(
    parts: impl Iterator<Item = &'a [DiskUsage]>,
    ranks: &[RankName],
) -> Vec<DiskUsage> {
    let mut seen_hosts: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for (disks, rank) in parts.zip(ranks) {
        let host = rank.host.as_str();
        if seen_hosts.contains(&host) {
            continue;
        }
        seen_hosts.push(host);
        out.extend(disks.iter().map(|d| DiskUsage {
            name: format!("{host}:{}", d.name),
            ..d.clone()
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::result::test_support::{direction, empty_workload};

    fn workload(read: DirectionResult, runtime_s: f64) -> WorkloadResult {
        let mut w = empty_workload();
        w.total.read = read;
        w.runtime_s = runtime_s;
        w.started_unix_s = Some(1000.0 + runtime_s);
        w
    }

    fn document(w: WorkloadResult, host: &str) -> Document {
        let mut d = Document::new(crate::measure::facts::host_facts(), None);
        d.host.hostname = host.into();
        d.results.push(RunResult::Workload(w));
        d
    }

    #[test]
    fn hosts_side_by_side_merge_histograms_not_percentiles() {
        use crate::result::limit::Limiter;
        // Three hosts: two fast, one slow; the slow one's p99 is not diluted
        // into a mean of p99s, and counts add up.
        let fast = || direction(&[1_000; 98], 2.0, &[49, 49]);
        let slow = direction(&[9_000_000; 98], 2.5, &[49, 49]);
        let docs = vec![
            document(workload(fast(), 2.0), "a"),
            document(workload(fast(), 2.0), "b"),
            document(workload(slow, 2.5), "c"),
        ];
        let merged = concurrent_documents(docs, Launcher::Merge).unwrap();
        let RunResult::Workload(w) = &merged.results[0] else {
            panic!("a workload")
        };
        assert_eq!(w.total.read.ios, 294);
        assert_eq!(w.runtime_s, 2.5);
        assert!((w.total.read.iops - 294.0 / 2.5).abs() < 1e-9);
        // A third of the I/Os were slow: p50 is fast, p99 slow.
        assert!(w.total.read.lat_ns.p50 < 2_000);
        assert!(w.total.read.lat_ns.p99 >= 8_990_000);
        assert_eq!(w.total.read.intervals[1].ios, 147);
        let c = merged.cluster.as_ref().unwrap();
        assert_eq!((c.ranks, c.hosts.len()), (3, 3));
        assert!((c.start_spread_s - 0.5).abs() < 1e-9);
        assert!((c.end_spread_s - 1.0).abs() < 1e-9);
        assert_eq!(c.per_rank[2].host, "c");

        // The group's verdict is its most limited rank's, named.
        let verdict = |by, evidence: &str| {
            Some(crate::result::limit::LimitedBy {
                by,
                evidence: evidence.into(),
            })
        };
        let mut parts: Vec<WorkloadResult> = (0..2).map(|_| workload(fast(), 2.0)).collect();
        parts[0].limited_by = verdict(Limiter::Device, "slots full");
        parts[1].limited_by = verdict(Limiter::Host, "waited for a CPU 40%");
        let docs = parts
            .into_iter()
            .zip(["a", "b"])
            .map(|(w, h)| document(w, h));
        let merged = concurrent_documents(docs.collect(), Launcher::Merge).unwrap();
        let RunResult::Workload(w) = &merged.results[0] else {
            panic!("a workload")
        };
        let limit = w.limited_by.as_ref().unwrap();
        assert_eq!(limit.by, Limiter::Host);
        assert!(
            limit.evidence.ends_with(": waited for a CPU 40%"),
            "{limit}"
        );
        assert!(limit.evidence.contains('b'), "{limit}");

        // Ranks that ran different plans are not merged.
        let one = document(workload(direction(&[1_000], 1.0, &[1]), 1.0), "a");
        let mut two = one.clone();
        two.results.push(two.results[0].clone());
        let e = concurrent_documents(vec![one.clone(), two], Launcher::Merge).unwrap_err();
        assert!(e.contains("did not run the same plan"), "{e}");
        let merged = concurrent_documents(vec![one.clone(), one], Launcher::Merge).unwrap();
        let e = concurrent_documents(vec![merged], Launcher::Merge).unwrap_err();
        assert!(e.contains("already a cluster"), "{e}");
    }
}
