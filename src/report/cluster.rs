//! A cluster document as people read it: how many ranks on which hosts, how
//! closely they ran together, and each rank's own figures beside the others
//! (so that a slow host stands out); the same as cells for every format.

use super::Report;
use crate::result::cluster::{Cluster, Launcher};
use crate::result::tree::TreeResult;
use crate::result::{DirectionResult, RunResult};
use crate::util::units::{latency, thousands};

/// "4 ranks on 2 hosts (mpi, Open MPI v4.1.4): measuring started within
/// 3 ms of each other and ended within 12 ms".
pub fn caption(c: &Cluster) -> String {
    let launcher = match (c.launcher, &c.mpi_library) {
        (Launcher::Mpi, Some(lib)) => format!("mpi, {lib}"),
        (Launcher::Mpi, None) => "mpi".into(),
        (Launcher::Merge, _) => "started at one time, merged".into(),
        (Launcher::Kubernetes, _) => "a Kubernetes Job's pods, merged".into(),
    };
    let pods = c.launcher == Launcher::Kubernetes;
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut caption = format!(
        "{} {}{} on {} {}{} ({launcher}): measuring started within {} of each other and ended within {}",
        c.ranks,
        if pods { "pod" } else { "rank" },
        plural(c.ranks as usize),
        c.hosts.len(),
        if pods { "node" } else { "host" },
        plural(c.hosts.len()),
        latency(c.start_spread_s * 1e9),
        latency(c.end_spread_s * 1e9)
    );
    for f in &c.failed {
        caption.push_str(&if pods {
            format!("; index {} LOST ({})", f.rank, f.error)
        } else {
            format!("; rank {} FAILED and sent no results ({})", f.rank, f.error)
        });
    }
    caption
}

/// One row per rank, workload (or stream) and direction that did I/O.
pub fn cells(c: &Cluster) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "rank",
        "host",
        "workload",
        "dir",
        "IOPS",
        "bandwidth",
        "p99",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for r in &c.per_rank {
        for (name, dir, d) in directions(&r.results) {
            rows.push(vec![
                r.rank.to_string(),
                r.host.clone(),
                name,
                dir.into(),
                thousands(d.iops.round() as u64),
                crate::util::units::bandwidth(d.bw_bytes),
                latency(d.lat_ns.p99 as f64),
            ]);
        }
        // A tree run's phases: operations a second in the IOPS column.
        for result in &r.results {
            let Some(t) = result.get::<TreeResult>() else {
                continue;
            };
            for p in &t.phases {
                rows.push(vec![
                    r.rank.to_string(),
                    r.host.clone(),
                    format!("tree {}", p.phase),
                    "ops".into(),
                    thousands(p.ops_per_s.round() as u64),
                    "-".into(),
                    latency(p.lat_ns.p99 as f64),
                ]);
            }
        }
    }
    (header, rows)
}

/// The first column of `cells` that holds a figure.
pub const FIRST_FIGURE: usize = 4;

/// Each workload's (and stream's) directions that did I/O, named.
pub fn directions(results: &[RunResult]) -> Vec<(String, &'static str, &DirectionResult)> {
    let mut pairs = Vec::new();
    for r in results {
        for (name, w) in r.kind().disk_workloads() {
            pairs.push((name, &w.total));
        }
    }
    let mut out = Vec::new();
    for (name, pair) in pairs {
        for (dir, d) in pair.named() {
            if d.ios > 0 {
                out.push((name.clone(), dir, d));
            }
        }
    }
    out
}

/// The cluster of each system that has one, with its label.
pub fn clusters(report: &Report) -> Vec<(&str, &Cluster)> {
    report
        .systems
        .iter()
        .filter_map(|s| Some((s.label.as_str(), s.document.cluster.as_ref()?)))
        .collect()
}
