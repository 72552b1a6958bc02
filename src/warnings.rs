//! Results that cannot be true. The worst published storage numbers come
//! from caches nobody noticed; fathom says when a figure is suspect, why, and
//! what to change. Warnings never alter a figure.

use crate::measure::facts::TargetKind;
use crate::result::WorkloadResult;
use crate::result::warning::{Warning, WarningKind};
use crate::spec::EngineKind;

/// Random read IOPS one rotating disk cannot exceed: a 15k rpm disk manages
/// a few hundred; a few thousand means a cache (or many disks behind one
/// controller).
pub const ROTATIONAL_MAX_RANDOM_IOPS: f64 = 3000.0;
/// A rotating disk's median random read cannot beat its seek and rotation.
pub const ROTATIONAL_MIN_P50_NS: u64 = 500_000;
/// No storage device answers a read in under 2 µs; memory does.
pub const DEVICE_MIN_P50_NS: u64 = 2_000;

/// What the checks need beyond the result.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// MemAvailable when the workload started.
    pub available_memory: Option<u64>,
    /// Per target: the file has holes (never-written regions).
    pub sparse: Vec<bool>,
}

pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// True when the file's allocated blocks cover less than its length.
pub fn is_sparse(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.is_file() && meta.blocks() * 512 < meta.len().saturating_sub(64 << 10)
}

pub fn check(result: &WorkloadResult, ctx: &Context) -> Vec<Warning> {
    use crate::units::format_bytes;
    use crate::units::{latency, thousands};
    let spec = &result.spec;
    let mut out = Vec::new();
    if spec.engine == EngineKind::Null {
        return out;
    }
    for (i, t) in result.targets.iter().enumerate() {
        let name = &t.name;
        let warn = |kind, figure: Option<f64>, message: String| Warning {
            kind,
            target: name.clone(),
            figure,
            message,
        };
        let reads = t.io.read.ios > 0;
        let file = t.facts.kind == TargetKind::File;
        if !spec.direct
            && file
            && let Some(mem) = ctx.available_memory.filter(|&m| t.size < m)
        {
            if reads {
                out.push(warn(
                    WarningKind::PageCacheReads,
                    Some(t.size as f64),
                    format!(
                    "{name}: buffered reads of a {} region with {} of memory free: likely served from the page cache, not the disk; use --direct or a region larger than memory",
                    format_bytes(t.size),
                    format_bytes(mem)
                ),
                ));
            }
            if t.io.write.ios > 0 && spec.flush_every() == 0 {
                out.push(warn(
                    WarningKind::PageCacheWrites,
                    Some(mem as f64),
                    format!(
                    "{name}: buffered writes without --fsync fit in the {} of free memory: the page cache absorbed them; use --direct or --fsync N",
                    format_bytes(mem)
                ),
                ));
            }
        }
        if reads && ctx.sparse.get(i).copied().unwrap_or(false) {
            out.push(warn(
                    WarningKind::SparseFile,
                    None,
                    format!(
                "{name}: the file is sparse: reads of never-written regions are answered by the file system without touching the disk; let fathom lay out a new file, or write this one first"
            ),
                ));
        }
        let read = &t.io.read;
        if !reads || !spec.direct {
            continue;
        }
        let rotational = t
            .facts
            .device
            .as_ref()
            .and_then(|d| d.rotational)
            .unwrap_or(false);
        if rotational && spec.rw.is_random() {
            if read.iops > ROTATIONAL_MAX_RANDOM_IOPS {
                out.push(warn(
                    WarningKind::RotationalIops,
                    Some(read.iops),
                    format!(
                    "{name}: {} random read IOPS from a device that reports itself rotational; one rotating disk does a few hundred: a cache is serving reads (RAID controller, the host under a VM), or the device is not what it says; use a region larger than any cache",
                    thousands(read.iops.round() as u64)
                ),
                ));
            } else if read.lat_ns.p50 < ROTATIONAL_MIN_P50_NS {
                out.push(warn(
                    WarningKind::RotationalLatency,
                    Some(read.lat_ns.p50 as f64),
                    format!(
                    "{name}: median random read of {} on a rotational device, below what seek and rotation allow: a cache answered; use a larger region",
                    latency(read.lat_ns.p50 as f64)
                ),
                ));
            }
        }
        if read.lat_ns.p50 < DEVICE_MIN_P50_NS {
            out.push(warn(
                    WarningKind::BelowDeviceFloor,
                    Some(read.lat_ns.p50 as f64),
                    format!(
                "{name}: median read latency {} is below any storage device's floor: memory answered these reads (a cache, or a sparse or thin target)",
                latency(read.lat_ns.p50 as f64)
            ),
                ));
        }
    }
    out
}
