//! Why a figure may not be true. Each warning has a kind, so that a sweep
//! that trips the same check in every run is reported once, with the range
//! of the figures and the runs it concerns.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// Buffered reads of a region that fits in free memory.
    PageCacheReads,
    /// Buffered writes without flushes that fit in free memory.
    PageCacheWrites,
    /// Reads of a file with holes.
    SparseFile,
    /// More random read IOPS than a rotating disk can give.
    RotationalIops,
    /// A median random read faster than a rotating disk can seek.
    RotationalLatency,
    /// A median read faster than any storage device.
    BelowDeviceFloor,
    /// bonnie++'s block tests on a file that fits in free memory.
    BlockFileInMemory,
    /// A lasting change of per-second IOPS during the run.
    IopsDrift,
    /// A lasting change of per-second p99 latency during the run.
    LatencyDrift,
    /// A file on a memory file system (tmpfs, devtmpfs, ramfs).
    MemoryTarget,
    /// The disk did clearly more I/O than fathom issued to it: another load
    /// shared the device.
    SharedDevice,
    /// Figures read from fio's JSON rather than measured by fathom.
    FioInput,
    /// Written data that compresses or deduplicates though none was asked
    /// for: a device that reduces data was given an easy job.
    ReducibleData,
    /// The workers waited for a CPU a good share of the time they ran: the
    /// host, not the device, limited the figures.
    BusyHost,
    /// The drive counted far fewer bytes written than fathom wrote to it
    /// directly: the writes landed somewhere else first.
    UnseenWrites,
    /// A warning from before warnings had kinds (schema 1).
    Other,
}

impl WarningKind {
    /// The doubt, in a few words.
    pub fn summary(self) -> &'static str {
        match self {
            WarningKind::PageCacheReads => {
                "buffered reads of a region that fits in free memory: likely served from the page cache, not the disk"
            }
            WarningKind::PageCacheWrites => {
                "buffered writes without --fsync that fit in free memory: the page cache absorbed them"
            }
            WarningKind::SparseFile => {
                "reads of a sparse file: never-written regions are answered without touching the disk"
            }
            WarningKind::RotationalIops => {
                "more random read IOPS than a rotating disk can give: a cache is serving reads, or the device is not what it says"
            }
            WarningKind::RotationalLatency => {
                "median random read faster than a rotating disk can seek: a cache answered"
            }
            WarningKind::BelowDeviceFloor => {
                "median read latency below any storage device's floor: memory answered these reads"
            }
            WarningKind::BlockFileInMemory => {
                "block tests on a file smaller than the free memory: random seeks may be served from the page cache"
            }
            WarningKind::IopsDrift => {
                "the device changed during the run: per-second IOPS moved to a new level and stayed there"
            }
            WarningKind::LatencyDrift => {
                "the device changed during the run: per-second p99 latency moved to a new level and stayed there"
            }
            WarningKind::MemoryTarget => {
                "the target is a file in memory (tmpfs, devtmpfs or ramfs), not on a disk: the figures are memory's"
            }
            WarningKind::SharedDevice => {
                "the disk did much more I/O than fathom issued: another load shared the device"
            }
            WarningKind::FioInput => {
                "figures read from fio's JSON: percentiles as fine as fio's bins or percentile list allow"
            }
            WarningKind::ReducibleData => {
                "the data written compresses or deduplicates though incompressible, unique data was asked for: a reducing device had an easy job"
            }
            WarningKind::BusyHost => {
                "the workers often waited for a CPU: the host limited this run, not only the device"
            }
            WarningKind::UnseenWrites => {
                "the drive counted far fewer bytes written than fathom wrote to it: the writes went to a cache in between, or to another device"
            }
            WarningKind::Other => "",
        }
    }

    /// What to change.
    pub fn advice(self) -> &'static str {
        match self {
            WarningKind::PageCacheReads => "use --direct or a region larger than memory",
            WarningKind::PageCacheWrites => "use --direct or --fsync N",
            WarningKind::SparseFile => "let fathom lay out a new file, or write this one first",
            WarningKind::RotationalIops | WarningKind::RotationalLatency => {
                "use a region larger than any cache"
            }
            WarningKind::BelowDeviceFloor => "use --direct and a region larger than any cache",
            WarningKind::BlockFileInMemory => "use a --block of twice the memory, as bonnie++ does",
            WarningKind::IopsDrift | WarningKind::LatencyDrift => {
                "look at the per-second figures: a write cache filling up, thermal throttling or another load on the device; precondition, or run longer"
            }
            WarningKind::MemoryTarget => "put the target on the disk you mean to measure",
            WarningKind::SharedDevice => {
                "run when the device is otherwise idle (iostat or /proc/diskstats show who uses it)"
            }
            WarningKind::FioInput => {
                "run fio with --output-format=json+ for its latency bins, or run the job with fathom"
            }
            WarningKind::ReducibleData => {
                "look for what made the data alike (a pattern in the job, a file system under the target that rewrites it)"
            }
            WarningKind::BusyHost => {
                "run on an idle host, with no more workers than CPUs; the figures are partly the host's"
            }
            WarningKind::UnseenWrites => {
                "check what lies between the target and the drive (a RAID or hypervisor cache, a device mapper) and that the target is the drive you mean"
            }
            WarningKind::Other => "",
        }
    }

    /// A figure of this kind as people read it.
    pub fn format(self, figure: f64) -> String {
        use crate::util::units::{latency, thousands};
        match self {
            WarningKind::RotationalIops => format!("{} IOPS", thousands(figure.round() as u64)),
            WarningKind::RotationalLatency | WarningKind::BelowDeviceFloor => latency(figure),
            WarningKind::IopsDrift | WarningKind::LatencyDrift => format!("{figure:+.0}%"),
            WarningKind::BusyHost => format!("{:.0}%", figure * 100.0),
            _ => crate::util::units::format_bytes(figure as u64),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    pub kind: WarningKind,
    /// The target (or directory) it concerns.
    pub target: String,
    /// The figure that raised it: IOPS, nanoseconds or bytes, by kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figure: Option<f64>,
    /// The whole warning: what, why and what to change.
    pub message: String,
    /// Seconds of measuring at which it happened, for a change during the
    /// run (drift); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
}

/// Schema 1 had the message only.
impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Fields {
            kind: WarningKind,
            target: String,
            #[serde(default)]
            figure: Option<f64>,
            message: String,
            #[serde(default)]
            at_s: Option<f64>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Fields(Fields),
            Message(String),
        }
        Ok(match Either::deserialize(d)? {
            Either::Fields(f) => Warning {
                kind: f.kind,
                target: f.target,
                figure: f.figure,
                message: f.message,
                at_s: f.at_s,
            },
            Either::Message(message) => Warning {
                kind: WarningKind::Other,
                target: String::new(),
                figure: None,
                message,
                at_s: None,
            },
        })
    }
}
