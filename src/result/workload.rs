//! Results of an I/O workload: per target and in total, per direction, with
//! latency histograms and per-second intervals.

use crate::measure::cpu::CpuTime;
pub use crate::measure::disk::DiskUsage;
use crate::measure::errors::IoErrors;
use crate::measure::facts::TargetFacts;
pub use crate::measure::histogram::LatencySummary;
pub use crate::measure::intervals::Interval;
use crate::measure::queue::QueueDepths;
use crate::spec::WorkloadSpec;
use crate::util::verify::VerifyReport;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub spec: WorkloadSpec,
    pub targets: Vec<TargetResult>,
    pub total: DirectionPair,
    pub cpu: CpuUsage,
    /// Measured seconds (ramp excluded), from the start of measurement to the
    /// last completion of any target.
    pub runtime_s: f64,
    pub interrupted: bool,
    /// Why a figure may not be true (page cache, sparse file, a latency no
    /// device can give); empty when nothing is suspect.
    #[serde(default)]
    pub warnings: Vec<super::warning::Warning>,
    /// With `--fsync`: the flushes of all targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncResult>,
    /// With `--zonemode zbd`: the zone resets of all targets (even none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_resets: Option<SyncResult>,
    /// With `--steady-state`: whether and when the criterion held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<crate::measure::steady::SteadyStateResult>,
    /// How far what was written compresses and deduplicates, measured on
    /// the first blocks written; absent when nothing was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<crate::measure::reduction::DataReduction>,
    /// What the disks under the targets did while measuring (of the whole
    /// group, when streams ran together); empty where the kernel has no
    /// counters for them (tmpfs, network file systems).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<DiskUsage>,
    /// What the drives under the targets counted themselves (NVMe's
    /// SMART log): their identity, health before and after, and the bytes
    /// they saw the host read and write; or why they could not say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::measure::drive::DeviceReport>,
    /// When measuring started (after the ramp), in seconds since the Unix
    /// epoch: how runs on several hosts are lined up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<f64>,
    /// The temperature of each disk under the targets that has a sensor,
    /// at the end of every second of measuring.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub temperature: Vec<TemperatureSample>,
    /// The engine settings fathom chose for this run where the best one
    /// depends on the regime (how io_uring workers wait); absent for
    /// engines with nothing to choose and in results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_tuning: Option<crate::spec::EngineTuning>,
    /// `fathom replay`: how well the target kept to the trace's times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<super::replay::ReplayResult>,
    /// How full the queues of all its workers were (fio's `iodepth_level`,
    /// `iodepth_submit`, `iodepth_complete`); absent in older results.
    #[serde(default, skip_serializing_if = "QueueDepths::is_empty")]
    pub queue_depths: QueueDepths,
    /// How promptly I/Os went out once they could, and where the workers'
    /// time went; absent in older results and results read from fio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<crate::measure::issue::IssueTiming>,
    /// What limited the figures (the device, the host, fathom, the page
    /// cache, the rate asked), with the evidence; absent where unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<super::limit::LimitedBy>,
    /// With `--repeat`: which repeat this result is, and every repeat's
    /// figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<super::repeats::Repeats>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemperatureSample {
    /// Kernel name of the disk.
    pub disk: String,
    /// End of the second, in seconds of measuring.
    pub t_s: f64,
    pub celsius: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// The target as given on the command line or in the job file.
    pub name: String,
    pub facts: TargetFacts,
    /// The region used: `size` bytes from `offset` (resolved from the spec
    /// and the target's own size).
    pub offset: u64,
    pub size: u64,
    /// Seconds from the start of measurement to this target's last completion.
    pub runtime_s: f64,
    /// Failed and short I/Os; none are retried.
    #[serde(default)]
    pub errors: IoErrors,
    /// Why the target stopped before its runtime or size was done (an I/O
    /// error, the target vanishing); null when it ran to the end.
    #[serde(default)]
    pub ended_early: Option<String>,
    /// The `--verify` report; absent without `--verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyReport>,
    #[serde(flatten)]
    pub io: DirectionPair,
    /// With `--fsync`: the flushes of this target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncResult>,
    /// With `--zonemode zbd`: this target's zone resets (even none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_resets: Option<SyncResult>,
    /// I/Os still in flight when the run gave up waiting for them (its
    /// runtime and grace were over, or a signal came): a stuck device or
    /// file system. Absent when every I/O completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished: Option<UnfinishedIos>,
}

/// I/Os abandoned in flight: how many, and the age of the oldest when it
/// was abandoned (its direction's maximum latency is at least that).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UnfinishedIos {
    pub ios: u64,
    pub oldest_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DirectionPair {
    pub read: DirectionResult,
    pub write: DirectionResult,
    /// Discards (`--rw trim`, `randtrim`, `trimwrite`, `randtrimwrite`); absent when the
    /// workload trims nothing.
    #[serde(default, skip_serializing_if = "DirectionResult::is_unused")]
    pub trim: DirectionResult,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DirectionResult {
    pub ios: u64,
    pub bytes: u64,
    /// `ios / runtime_s` of the enclosing target (or workload for totals).
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: LatencySummary,
    /// HdrHistogram V2 compressed encoding, base64; merge these, never
    /// average percentiles.
    pub histogram: String,
    /// Rate-limited runs only: latency from when each I/O was due on the
    /// schedule to its completion; it includes time spent waiting for a
    /// free slot behind a device that fell behind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_lat_ns: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_histogram: Option<String>,
    /// Submission latency (fio's slat), for engines that submit as they
    /// queue (io_uring): from handing the I/O over until the submission
    /// returned. It is part of `lat_ns`, which runs from that hand-over to
    /// the completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slat_ns: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slat_histogram: Option<String>,
    /// Rate-limited runs only: I/Os that were due but had no answer when the
    /// run ended (in flight, or waiting behind a device that fell behind).
    /// They are in `sched_lat_ns` at their age then, not in `ios`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered: u64,
    pub intervals: Vec<Interval>,
    /// With `--cmdprio`: the latency of the I/Os at the worker's priority
    /// and of those at their own, apart (each also in `lat_ns`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_priority: Vec<PriorityLatency>,
}

/// The latency of the I/Os of one priority (`--cmdprio`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityLatency {
    /// True for the I/Os issued at `spec.cmdprio`'s priority, false for
    /// the others (at the worker's: `spec.ioprio`, else the default).
    pub cmdprio: bool,
    pub ios: u64,
    pub lat_ns: LatencySummary,
    pub histogram: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl DirectionResult {
    /// Nothing issued in this direction: no I/O, none left unanswered.
    pub fn is_unused(&self) -> bool {
        self.ios == 0 && self.unanswered == 0 && self.intervals.iter().all(|i| i.ios == 0)
    }
}

/// Flushes (`--fsync N`): how many were made while measuring and how long
/// each took.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SyncResult {
    pub count: u64,
    /// Flushes per second of the enclosing target's (or workload's) runtime.
    pub rate: f64,
    pub lat_ns: LatencySummary,
    pub histogram: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) / all I/Os, in microseconds; 0 when nothing completed.
    pub per_io_us: f64,
    /// Context switches and page faults of the process while measuring.
    #[serde(default)]
    pub context_switches: u64,
    #[serde(default)]
    pub major_faults: u64,
    #[serde(default)]
    pub minor_faults: u64,
    /// Of the time the workers ran (all added, ramp included), the share
    /// they were ready to run but waited for a CPU (the scheduler's
    /// run_delay): the host, not the device, held them back for that long.
    /// Absent where the kernel does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_for_cpu_share: Option<f64>,
    /// Of the host's CPU time while measuring (every CPU), the share a
    /// hypervisor gave to other guests (`steal`). Absent where unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_steal_share: Option<f64>,
    /// Of the host's CPU time while measuring, the share in software
    /// interrupts (network and block completions). Absent where unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_softirq_share: Option<f64>,
    /// Of `context_switches`, those the scheduler forced on the process's
    /// threads: they wanted to go on running and another took the CPU.
    #[serde(default)]
    pub involuntary_switches: u64,
}

impl WorkloadResult {
    /// A result of these figures, with nothing else known: no warnings,
    /// flushes, disks or intervals beyond `total`'s.
    pub fn of(
        spec: WorkloadSpec,
        targets: Vec<TargetResult>,
        total: DirectionPair,
        cpu: CpuUsage,
        runtime_s: f64,
    ) -> WorkloadResult {
        WorkloadResult {
            spec,
            targets,
            total,
            cpu,
            runtime_s,
            interrupted: false,
            warnings: Vec::new(),
            sync: None,
            zone_resets: None,
            steady_state: None,
            data: None,
            disks: Vec::new(),
            devices: Vec::new(),
            started_unix_s: None,
            temperature: Vec::new(),
            engine_tuning: None,
            replay: None,
            queue_depths: QueueDepths::default(),
            issue: None,
            limited_by: None,
            repeats: None,
        }
    }
}

impl CpuUsage {
    pub fn new(cpu: CpuTime, ios: u64) -> Self {
        CpuUsage {
            user_s: cpu.user_s,
            sys_s: cpu.sys_s,
            per_io_us: if ios == 0 {
                0.0
            } else {
                cpu.total_s() * 1e6 / ios as f64
            },
            context_switches: cpu.context_switches,
            major_faults: cpu.major_faults,
            minor_faults: cpu.minor_faults,
            waited_for_cpu_share: None,
            host_steal_share: (cpu.host_s > 0.0).then(|| cpu.host_steal_s / cpu.host_s),
            host_softirq_share: (cpu.host_s > 0.0).then(|| cpu.host_softirq_s / cpu.host_s),
            involuntary_switches: cpu.involuntary_switches,
        }
    }

    /// The CPU time of `parts` (runs on other hosts, or one after another)
    /// added, per I/O of all `ios` they did.
    pub fn added<'a>(parts: impl IntoIterator<Item = &'a CpuUsage>, ios: u64) -> Self {
        let mut sum = CpuTime::default();
        let max_known = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let mut waited: Option<f64> = None;
        let mut stolen: Option<f64> = None;
        let mut softirq: Option<f64> = None;
        for p in parts {
            sum.involuntary_switches += p.involuntary_switches;
            softirq = max_known(softirq, p.host_softirq_share);
            sum.user_s += p.user_s;
            sum.sys_s += p.sys_s;
            sum.context_switches += p.context_switches;
            sum.major_faults += p.major_faults;
            sum.minor_faults += p.minor_faults;
            // The busiest host (or run) is the one that held its workers back.
            waited = max_known(waited, p.waited_for_cpu_share);
            stolen = max_known(stolen, p.host_steal_share);
        }
        CpuUsage {
            waited_for_cpu_share: waited,
            host_steal_share: stolen,
            host_softirq_share: softirq,
            ..CpuUsage::new(sum, ios)
        }
    }
}

impl TargetResult {
    /// A file target known by name only, that did `io`.
    pub fn of_file(name: &str, io: DirectionPair) -> TargetResult {
        TargetResult {
            name: name.to_string(),
            facts: TargetFacts {
                kind: crate::measure::facts::TargetKind::File,
                path: name.to_string(),
                filesystem: None,
                mount_point: None,
                device: None,
                partition: false,
            },
            offset: 0,
            size: 0,
            runtime_s: 0.0,
            errors: IoErrors::default(),
            ended_early: None,
            verify: None,
            io,
            sync: None,
            zone_resets: None,
            unfinished: None,
        }
    }

    /// True when the target ended early or verification failed: it did not
    /// do or prove what was asked (errors tolerated by `--continue-on-error`
    /// alone do not count).
    pub fn failed(&self) -> bool {
        self.ended_early.is_some()
            || self.unfinished.is_some()
            || self.verify.as_ref().is_some_and(|v| v.is_failure())
    }

    /// What went wrong on this target, one line each: I/O errors, an early
    /// end, blocks that failed verification.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.errors.is_empty() {
            out.push(self.errors.summary());
        }
        if let Some(why) = &self.ended_early {
            out.push(format!("ended early: {why}"));
        }
        if let Some(u) = &self.unfinished {
            out.push(format!(
                "{} I/O{} never completed: abandoned in flight, the oldest after {} (a stuck device or file system), and counted in the latency at that age; the process itself ends only when the kernel lets go of it",
                u.ios,
                if u.ios == 1 { "" } else { "s" },
                crate::util::units::format_duration(u.oldest_ns as f64 / 1e9)
            ));
        }
        if let Some(v) = self.verify.as_ref().filter(|v| v.is_failure()) {
            out.push(format!("verify: {}", v.summary()));
        }
        out
    }
}

impl DirectionPair {
    pub fn ios(&self) -> u64 {
        self.read.ios + self.write.ios + self.trim.ios
    }

    /// I/Os a second of every direction together.
    pub fn iops(&self) -> f64 {
        self.read.iops + self.write.iops + self.trim.iops
    }

    /// Each second of all directions together: (start, length, IOPS, the
    /// highest p99 of any direction).
    pub fn seconds(&self) -> Vec<(f64, f64, f64, u64)> {
        let series = [
            &self.read.intervals,
            &self.write.intervals,
            &self.trim.intervals,
        ];
        let len = series.iter().map(|s| s.len()).max().unwrap_or(0);
        (0..len)
            .map(|i| {
                let present = series.iter().filter_map(|s| s.get(i));
                let (mut t_s, mut dur_s, mut iops, mut p99) = (i as f64, 0.0, 0.0, 0);
                for (n, s) in present.enumerate() {
                    if n == 0 {
                        (t_s, dur_s) = (s.t_s, s.dur_s);
                    }
                    iops += s.iops;
                    p99 = p99.max(s.p99_ns);
                }
                (t_s, dur_s, iops, p99)
            })
            .collect()
    }

    /// The direction with the most I/Os (reads on a tie).
    pub fn main(&self) -> &DirectionResult {
        self.named()
            .into_iter()
            .map(|(_, d)| d)
            .reduce(|best, d| if d.ios > best.ios { d } else { best })
            .expect("three directions")
    }

    /// Each direction with its name: read, write, trim.
    pub fn named(&self) -> [(&'static str, &DirectionResult); 3] {
        [
            ("read", &self.read),
            ("write", &self.write),
            ("trim", &self.trim),
        ]
    }
}
