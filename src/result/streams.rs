//! Results of a workload of several streams run at the same time: each
//! stream as a workload of its own, and all of them together.

use super::{CpuUsage, DirectionPair, SyncResult, WorkloadResult};
use crate::spec::WorkloadSpec;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamsResult {
    /// The workload: its name, the knobs its streams started from, and in
    /// `streams` each stream's resolved spec.
    pub spec: WorkloadSpec,
    /// One result per stream, in order, each with its own targets, totals,
    /// intervals and flushes (`spec.name` is the stream's name).
    pub streams: Vec<WorkloadResult>,
    /// All streams together: counts and histograms added, rates over the
    /// common span (the concurrent merge).
    pub total: DirectionPair,
    /// The flushes of every stream that makes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncResult>,
    /// Seconds from the common start to the last completion of any stream.
    pub runtime_s: f64,
    /// CPU time of the whole process while the streams ran.
    pub cpu: CpuUsage,
    pub interrupted: bool,
    /// What the disks under the streams' targets did while they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<super::DiskUsage>,
}

/// The seconds from the first stream's start of measuring to the last
/// one's end: the longest stream's when they all started together, longer
/// when one started later (`--start-delay`, `--wait-for`).
fn span_s(streams: &[WorkloadResult]) -> f64 {
    let longest = streams.iter().map(|s| s.runtime_s).fold(0.0, f64::max);
    let starts: Option<Vec<f64>> = streams.iter().map(|s| s.started_unix_s).collect();
    match starts {
        Some(starts) if !starts.is_empty() => {
            let first = starts.iter().copied().fold(f64::INFINITY, f64::min);
            let last_end = streams
                .iter()
                .zip(&starts)
                .map(|(s, start)| start + s.runtime_s)
                .fold(0.0, f64::max);
            // Starts a few milliseconds apart are the same start: the
            // workers leave the gate one by one.
            match last_end - first {
                span if span > longest + 0.05 => span,
                _ => longest,
            }
        }
        _ => longest,
    }
}

impl StreamsResult {
    /// The streams measured together, as one result.
    pub fn new(spec: WorkloadSpec, streams: Vec<WorkloadResult>) -> Result<Self, String> {
        use super::merge::{concurrent, concurrent_sync};
        let runtime_s = span_s(&streams);
        let total = DirectionPair {
            read: concurrent(
                &streams.iter().map(|s| &s.total.read).collect::<Vec<_>>(),
                runtime_s,
            )?,
            write: concurrent(
                &streams.iter().map(|s| &s.total.write).collect::<Vec<_>>(),
                runtime_s,
            )?,
            trim: concurrent(
                &streams.iter().map(|s| &s.total.trim).collect::<Vec<_>>(),
                runtime_s,
            )?,
        };
        let syncs: Vec<&SyncResult> = streams.iter().filter_map(|s| s.sync.as_ref()).collect();
        let sync = if syncs.is_empty() {
            None
        } else {
            Some(concurrent_sync(&syncs, runtime_s)?)
        };
        // Every stream reports the process's CPU time of the group.
        let cpu = streams.first().map(|s| s.cpu).unwrap_or_default();
        let disks = streams.first().map(|s| s.disks.clone()).unwrap_or_default();
        Ok(StreamsResult {
            disks,
            interrupted: streams.iter().any(|s| s.interrupted),
            spec,
            streams,
            total,
            sync,
            runtime_s,
            cpu,
        })
    }

    /// All streams as one workload, as fio's `group_reporting` shows a
    /// group: the first stream's spec with the workers of all, every
    /// target, the merged totals and flushes; None without streams.
    pub fn as_one_workload(&self) -> Option<WorkloadResult> {
        let mut one = self.streams.first()?.clone();
        one.spec.numjobs = self
            .streams
            .iter()
            .map(|w| w.spec.numjobs)
            .sum::<u32>()
            .max(1);
        one.targets = self
            .streams
            .iter()
            .flat_map(|w| w.targets.clone())
            .collect();
        one.warnings = self
            .streams
            .iter()
            .flat_map(|w| w.warnings.clone())
            .collect();
        one.total = self.total.clone();
        one.sync = self.sync.clone();
        one.runtime_s = self.runtime_s;
        one.cpu = self.cpu;
        one.interrupted = self.interrupted;
        one.disks = self.disks.clone();
        for w in &self.streams[1..] {
            one.queue_depths.add(&w.queue_depths);
        }
        Some(one)
    }
}
