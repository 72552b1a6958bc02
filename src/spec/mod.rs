//! The resolved description of one workload: every knob with its final value.
//! Flags, job files and presets produce it through the knob table
//! (`knobs.rs`); the runner consumes it; it is written verbatim into the
//! result document so a run can be repeated.

pub mod block_sizes;
pub mod capacity;
pub mod content;
pub mod cpus;
pub mod direction;
pub mod distribution;
pub mod engine;
pub mod knobs;
pub mod meta;
pub mod object;
pub mod priority;
pub mod pts;
pub mod replay;
pub mod train;
pub mod tree;
mod validate;
pub mod zbd;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub use block_sizes::BlockSizeSplit;
pub use cpus::{CpuList, CpuPolicy};
pub use direction::Direction;
pub use distribution::{Distribution, Zone};
pub use engine::{
    CompletionWait, EngineCaps, EngineKind, EngineTuning, IoFlags, RingOptions, WaitChoice,
};
pub use priority::{CommandPriority, IoPriority};
pub use validate::{MAX_IOPS_PER_SLOT, limits};

/// Access pattern, named as in fio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    ReadWrite,
    RandRw,
    /// Sequential trims (discards): every I/O frees its blocks.
    Trim,
    RandTrim,
    /// Each block trimmed, then written: trim, write, trim the next ...
    TrimWrite,
    /// As trimwrite, at random offsets.
    RandTrimWrite,
}

impl RwMode {
    pub const ALL: [RwMode; 10] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::RandRead,
        RwMode::RandWrite,
        RwMode::ReadWrite,
        RwMode::RandRw,
        RwMode::Trim,
        RwMode::RandTrim,
        RwMode::TrimWrite,
        RwMode::RandTrimWrite,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "readwrite",
            RwMode::RandRw => "randrw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandRw
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }

    /// Whether the mode discards blocks.
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }

    /// Whether the mode changes what the target holds (writes or trims):
    /// what the safety rules and write access are decided on.
    pub fn modifies(self, rwmix_read: u8) -> bool {
        self.writes(rwmix_read) || self.trims()
    }

    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::ReadWrite | RwMode::RandRw)
    }

    /// Share of reads in percent that this mode issues, given the mix setting
    /// that only mixed modes use.
    pub fn read_percent(self, rwmix_read: u8) -> u8 {
        match self {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::Write | RwMode::RandWrite => 0,
            RwMode::ReadWrite | RwMode::RandRw => rwmix_read,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => 0,
        }
    }

    /// Whether the mode issues writes (a trim alone writes nothing).
    pub fn writes(self, rwmix_read: u8) -> bool {
        match self {
            RwMode::Trim | RwMode::RandTrim => false,
            _ => self.read_percent(rwmix_read) < 100,
        }
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RwMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let wanted = match s {
            // fio's aliases
            "rw" => "readwrite",
            other => other,
        };
        RwMode::ALL
            .into_iter()
            .find(|m| m.name() == wanted)
            .ok_or_else(|| {
                format!("unknown rw '{s}' (expected read, write, randread, randwrite, readwrite, randrw, trim, randtrim, trimwrite or randtrimwrite)")
            })
    }
}

/// One workload, fully resolved. Sizes are bytes, times are seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub name: String,
    /// Paths of the targets.
    pub targets: Vec<String>,
    /// Names of the targets in reports, one per target (`--target
    /// LABEL=PATH`); the path where none was given.
    #[serde(default)]
    pub labels: Vec<String>,
    pub rw: RwMode,
    /// Percentage of reads in mixed modes; 100 or 0 for pure modes.
    pub rwmix_read: u8,
    /// Block size; with `bssplit`, the smallest of its sizes, the grid
    /// offsets are aligned to.
    pub bs: u64,
    /// Several block sizes, per direction, each for a share of the I/Os
    /// (`--bssplit`, fio's `bssplit` and `bs=READ,WRITE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<BlockSizeSplit>,
    pub iodepth: u32,
    pub numjobs: u32,
    /// Bytes of each target that the workload touches, starting at `offset`.
    /// `None` until the target is opened: then the whole device or file (or the
    /// default file size for a new file).
    pub size: Option<u64>,
    /// Bytes of I/O per target in all, instead of one pass over `size`
    /// (`--io-size`, fio's `io_size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_size: Option<u64>,
    /// I/Os per target in all (each worker its share): the workload stops
    /// at whichever of this, its bytes and its runtime comes first
    /// (`--number-ios`, fio's `number_ios`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,
    /// Random I/O: offsets aligned to this many bytes instead of the
    /// (smallest) block size (`--block-align`, fio's `blockalign`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_align: Option<u64>,
    pub offset: u64,
    /// Time bound; `None` means one pass over `size` per target.
    pub runtime_s: Option<f64>,
    pub ramp_s: f64,
    /// A size-bound workload's ramp is part of its pass: what follows the
    /// ramp is measured, and the pass is not begun again (`--ramp-in-pass`,
    /// fio's way with `ramp_time`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub ramp_in_pass: bool,
    /// A stream of a group starts its I/O this long after the group does
    /// (`--start-delay`, fio's `startdelay`); its ramp and runtime count
    /// from then.
    #[serde(default, skip_serializing_if = "is_default")]
    pub start_delay_s: f64,
    /// A stream of a group starts once these streams of the group have
    /// finished (`--wait-for`, fio's `wait_for`), and its start delay
    /// after that.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_for: Vec<String>,
    pub direct: bool,
    /// Buffered runs: drop the targets' cached pages before starting, so
    /// reads come from the device (`--invalidate`, fio's `invalidate`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invalidate: bool,
    /// Buffered runs: each worker tells the kernel its access pattern
    /// (POSIX_FADV_RANDOM or SEQUENTIAL), as fio's `fadvise_hint` does by
    /// default; off with `--no-fadvise`. Absent in results of runs before
    /// it, which gave no hint.
    #[serde(default)]
    pub fadvise: bool,
    /// The I/O priority the workers run at (`--ioprio`, fio's `prioclass`
    /// and `prio`); None: the process's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioprio: Option<IoPriority>,
    /// The CPUs the workers may run on (`--cpus-allowed`, fio's
    /// `cpus_allowed`); None: wherever the scheduler puts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_allowed: Option<CpuList>,
    /// How the workers share them (`--cpus-allowed-policy`).
    #[serde(default, skip_serializing_if = "CpuPolicy::is_shared")]
    pub cpus_allowed_policy: CpuPolicy,
    pub engine: EngineKind,
    /// The engine an fio job named, where fathom runs it on another
    /// (`engine`): fio's outputs say the job's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_ioengine: Option<engine::FioEngine>,
    /// The null engine's service time per I/O, in ns (`--null-latency`);
    /// 0 completes at once.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub null_latency_ns: u64,
    /// io_uring completes I/O by polling the device (IORING_SETUP_IOPOLL,
    /// fio's `hipri`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hipri: bool,
    /// A kernel thread submits I/O from the ring (IORING_SETUP_SQPOLL,
    /// fio's `sqthread_poll`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sqpoll: bool,
    /// Buffered I/O whose pages leave the page cache once done
    /// (RWF_DONTCACHE, fio's `uncached`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncached: bool,
    /// Each write lands whole or not at all (RWF_ATOMIC, fio's `atomic`):
    /// direct writes of a size the target's atomic write unit takes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub atomic: bool,
    /// fio's JSON reports the streams of this workload as one job, as fio's
    /// `group_reporting` does (`--group-reporting`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group_reporting: bool,
    /// This stream starts a new reporting group in fio's outputs (fio's
    /// `new_group`): with `group_reporting`, it and the streams after it
    /// are reported apart from those before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub new_group: bool,
    /// The percentiles fio's JSON lists (`--percentile-list`, fio's
    /// `percentile_list`); empty: fio's default list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentile_list: Vec<f64>,
    /// A stream translated from one clone of a fio job with `numjobs`: the
    /// job's name, which fio gives each clone in its reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_of: Option<String>,
    /// How io_uring workers wait for completions (`--completion-wait`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub completion_wait: CompletionWait,
    /// fsync after every N writes per worker; 0 = never.
    pub fsync: u32,
    /// fdatasync after every N writes per worker; 0 = never.
    #[serde(default)]
    pub fdatasync: u32,
    pub random_distribution: Distribution,
    /// Uniform random modes: each block once a pass, in an order drawn
    /// afresh for each pass, the workers of a target sharing it
    /// (`--random-map`, fio's random map); otherwise offsets are drawn
    /// with replacement (fio's `norandommap`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub random_map: bool,
    /// Random modes: the share of I/Os at a random offset; the others
    /// follow on from the previous I/O (`--random-percent`, fio's
    /// `percentage_random`).
    #[serde(default = "all_random", skip_serializing_if = "is_all_random")]
    pub random_percent: u8,
    /// Random modes: each random offset starts a run of this many I/Os
    /// one after the other (`--sequential-run`, fio's `rw=randread:N`);
    /// 0 or 1: every I/O at a new offset.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub sequential_run: u32,
    /// Sequential modes: bytes skipped after each I/O; negative walks the
    /// region backwards (`--stride`, fio's `rw=read:8k`).
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub stride: i64,
    /// I/O in zones: so many bytes in each zone, then on to the next
    /// (`--zones`, fio's `zonemode=strided`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<StridedZones>,
    /// A zoned block device written zone by zone (`--zonemode zbd`).
    #[serde(default, skip_serializing_if = "zbd::ZoneSpec::is_default")]
    pub zoned: zbd::ZoneSpec,
    /// What an object-store target (`s3://`) is and how it is worked.
    #[serde(default, skip_serializing_if = "object::ObjectKnobs::is_default")]
    pub objects: object::ObjectKnobs,
    /// fio's log files to write from the per-second figures
    /// (`--write-bw-log` and friends).
    #[serde(default, skip_serializing_if = "FioLogs::is_empty")]
    pub fio_logs: FioLogs,
    /// A pause after every so many I/Os (`--think-time`, fio's `thinktime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time: Option<ThinkTime>,
    /// What written blocks hold (`--compress`, `--dedupe`, `--pattern`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub content: content::DataContent,
    /// `fathom replay`: the trace whose I/Os are issued instead of the
    /// pattern's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<replay::ReplaySpec>,
    pub seed: u64,
    /// Keep files that fathom created instead of removing them at the end.
    pub keep: bool,
    /// Allow writes to existing files fathom did not create.
    pub overwrite: bool,
    /// Allow writes to block devices that show signs of holding data.
    pub destroy_data: bool,
    /// Allow writes to block devices in use (mounted, swap, held).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub even_if_mounted: bool,
    /// Stamp written blocks and check them (see docs/SAFETY.md).
    #[serde(default)]
    pub verify: VerifyMode,
    /// Count I/O errors and keep going, instead of ending the target at the
    /// first one.
    #[serde(default)]
    pub continue_on_error: bool,
    /// Flush each target (fsync) once the workers are done (`--end-fsync`,
    /// fio's `end_fsync`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end_fsync: bool,
    /// A stream that, when it finishes, stops the workload's other streams
    /// (`--exitall`, fio's `exitall`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exitall: bool,
    /// A share of the I/Os issued at a priority of their own, their
    /// latency reported apart (`--cmdprio`, fio's `cmdprio_percentage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio: Option<CommandPriority>,
    /// How rated I/Os are spaced (`--arrivals`, fio's `rate_process`).
    #[serde(default, skip_serializing_if = "Arrivals::is_even")]
    pub arrivals: Arrivals,
    /// Fixed rate per target, in I/Os per second (`--rate-iops`).
    #[serde(default)]
    pub rate_iops: Option<f64>,
    /// Fixed rate per target, in bytes per second (`--rate-bw`).
    #[serde(default)]
    pub rate_bw: Option<u64>,
    /// Rates of reads and of writes on schedules of their own
    /// (`--rate-read`, `--rate-write`; fio's `rate=R,W` and a rate of a
    /// mixed fio job, which fio applies to each direction).
    #[serde(default, skip_serializing_if = "DirectionRates::is_empty")]
    pub direction_rates: DirectionRates,
    /// Stop once this criterion holds (`--steady-state iops:2%`).
    #[serde(default)]
    pub steady_state: Option<crate::measure::steady::SteadyState>,
    /// What lasting change of per-second IOPS or p99 is reported as the
    /// device changing during the run (`--drift 25%:5s`).
    #[serde(default)]
    pub drift: crate::measure::drift::DriftCheck,
    /// Each worker's weight among the workers of its flow group: their
    /// I/Os are kept in proportion to their weights (`--flow`, fio's
    /// `flow`); 0 for none.
    #[serde(default, skip_serializing_if = "is_default")]
    pub flow: u32,
    /// The flow group `flow` counts in (`--flow-id`, fio's `flow_id`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub flow_id: u32,
    /// How long a worker held back by `flow` sleeps, once its I/Os in
    /// flight have completed (`--flow-sleep`, fio's `flow_sleep`); 0
    /// looks again at once.
    #[serde(default, skip_serializing_if = "is_default")]
    pub flow_sleep_us: u64,
    /// Run the workload this many times in a row and report one of them
    /// (`--repeat`, as desktop benchmarks' "count"); every repeat's figures
    /// are kept in the result's `repeats`.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: u32,
    /// Which repeat is reported (`--pick`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub pick: Pick,
    /// Streams that run at the same time, started and stopped together,
    /// each a workload of its own on some of the targets; empty for a plain
    /// workload. This spec's own knobs are what the streams inherited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<WorkloadSpec>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Zones through the region, as fio's `zonemode=strided`: `io` bytes of
/// I/O inside a zone `range` bytes wide (sequential or random within it),
/// then the next zone starts `range + skip` bytes further, wrapping to the
/// start at the region's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StridedZones {
    pub io: u64,
    pub range: u64,
    pub skip: u64,
}

impl std::str::FromStr for StridedZones {
    type Err = String;
    /// `IO[:RANGE[:SKIP]]`: `256m:256m:2g`; RANGE defaults to IO, SKIP to 0.
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() > 3 {
            return Err(format!("'{s}' is not IO[:RANGE[:SKIP]]"));
        }
        let size = |p: &str| crate::util::units::parse_size(p);
        let io = size(parts[0])?;
        let range = parts.get(1).map(|p| size(p)).transpose()?.unwrap_or(io);
        let skip = parts.get(2).map(|p| size(p)).transpose()?.unwrap_or(0);
        if io == 0 || range == 0 {
            return Err(format!("'{s}': a zone's I/O and width are more than 0"));
        }
        Ok(StridedZones { io, range, skip })
    }
}

impl std::fmt::Display for StridedZones {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::util::units::format_bytes;
        write!(
            f,
            "{}:{}:{}",
            format_bytes(self.io),
            format_bytes(self.range),
            format_bytes(self.skip)
        )
    }
}

/// Which of a workload's repeats its result reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pick {
    /// The repeat whose bandwidth is the median of all (the lower of the
    /// two middle ones for an even count), so one lucky or unlucky run
    /// does not decide the figure.
    #[default]
    Median,
    /// The repeat with the most bandwidth: the peak, as desktop disk
    /// benchmarks report it.
    Best,
}

impl std::str::FromStr for Pick {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "median" => Ok(Pick::Median),
            "best" | "max" => Ok(Pick::Best),
            _ => Err(format!("'{s}' is not a pick (best or median)")),
        }
    }
}

impl std::fmt::Display for Pick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Pick::Median => "median",
            Pick::Best => "best",
        })
    }
}

/// What `--verify` checks (see docs/SAFETY.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyMode {
    #[default]
    Off,
    /// Read everything back after the workload.
    AfterWrite,
    /// Read each block back as soon as its write completes.
    Interleaved,
}

/// The seed of a run that was not given one: the same run issues the same
/// offsets and data.
pub const DEFAULT_SEED: u64 = 0x0fa7_4011;

/// Gives every stream a seed of its own: a stream whose seed an earlier
/// stream already has (fio's clones of one job, streams that did not set
/// one) gets one derived from it and its place, as fio seeds each job and
/// clone apart. Copies of a job on one file would otherwise hit the same
/// block at the same moment and flatter every cache. The seed is in each
/// stream's spec, so the result records it.
pub fn seed_streams_apart(streams: &mut [WorkloadSpec]) {
    for i in 1..streams.len() {
        let (earlier, rest) = streams.split_at_mut(i);
        let stream = &mut rest[0];
        if earlier.iter().any(|e| e.seed == stream.seed) {
            let mut x = stream.seed ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
            // splitmix64's finaliser: nearby inputs, unrelated outputs.
            x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            stream.seed = x ^ (x >> 31);
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

fn all_random() -> u8 {
    100
}

fn is_all_random(p: &u8) -> bool {
    *p == 100
}

/// A rate of one direction: I/Os, or bytes, per second per target.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    Iops(f64),
    Bytes(u64),
}

impl FromStr for Rate {
    type Err = String;
    /// `500` (I/Os per second) or `10m/s` (bytes per second).
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(bytes) = s.strip_suffix("/s") {
            let b = crate::util::units::parse_size(bytes)?;
            return if b > 0 {
                Ok(Rate::Bytes(b))
            } else {
                Err(format!("'{s}' is not a positive rate"))
            };
        }
        s.parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && *r > 0.0)
            .map(Rate::Iops)
            .ok_or_else(|| format!("'{s}' is not a rate (500 I/Os per second, or 10m/s)"))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rate::Iops(r) => write!(f, "{r}"),
            Rate::Bytes(b) => write!(f, "{}/s", crate::util::units::format_bytes(*b)),
        }
    }
}

/// Rates of reads and of writes, each on a schedule of its own; a
/// direction without one goes as fast as the depth allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionRates {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<Rate>,
}

impl DirectionRates {
    pub fn is_empty(&self) -> bool {
        self.read.is_none() && self.write.is_none()
    }
}

/// fio's bandwidth, latency and IOPS logs (`NAME_bw.N.log`, ...), written
/// after the run from its per-second figures, averaged over `avg_s`
/// seconds (fio's `log_avg_msec`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioLogs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<String>,
    /// Seconds per line; 0 means 1.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub avg_s: u32,
}

impl FioLogs {
    pub fn is_empty(&self) -> bool {
        self.bw.is_none() && self.lat.is_none() && self.iops.is_none()
    }
}

/// A worker's pause: after every `every` I/Os it waits for those in
/// flight, then idles `pause_ns` (fio's `thinktime` and `thinktime_blocks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkTime {
    pub pause_ns: u64,
    pub every: u32,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// How a rated workload's I/Os are spaced in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Evenly: I/O n due at n / rate (fio's `rate_process=linear`).
    #[default]
    Even,
    /// A Poisson process: exponential gaps of mean 1 / rate, as independent
    /// clients arrive (fio's `rate_process=poisson`).
    Poisson,
}

impl Arrivals {
    pub fn is_even(&self) -> bool {
        *self == Arrivals::Even
    }
}

impl std::str::FromStr for Arrivals {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "even" | "linear" => Ok(Arrivals::Even),
            "poisson" => Ok(Arrivals::Poisson),
            _ => Err(format!("'{s}' is not an arrival process (even or poisson)")),
        }
    }
}

impl std::fmt::Display for Arrivals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Arrivals::Even => "even",
            Arrivals::Poisson => "poisson",
        })
    }
}

impl WorkloadSpec {
    /// The name of a workload nobody named.
    pub const DEFAULT_NAME: &str = "run";

    /// The spec of a run nothing has changed, on `targets`.
    pub fn defaults(targets: Vec<String>) -> WorkloadSpec {
        WorkloadSpec {
            name: Self::DEFAULT_NAME.into(),
            labels: targets.clone(),
            targets,
            rw: RwMode::RandRead,
            rwmix_read: 100,
            bs: 4096,
            bssplit: None,
            iodepth: 1,
            io_size: None,
            number_ios: None,
            block_align: None,
            numjobs: 1,
            size: None,
            offset: 0,
            runtime_s: None,
            ramp_s: 0.0,
            ramp_in_pass: false,
            start_delay_s: 0.0,
            wait_for: Vec::new(),
            direct: true,
            invalidate: false,
            fadvise: true,
            cpus_allowed: None,
            cpus_allowed_policy: CpuPolicy::Shared,
            ioprio: None,
            engine: EngineKind::IoUring,
            fio_ioengine: None,
            null_latency_ns: 0,
            hipri: false,
            sqpoll: false,
            uncached: false,
            atomic: false,
            completion_wait: CompletionWait::Auto,
            group_reporting: false,
            new_group: false,
            percentile_list: Vec::new(),
            clone_of: None,
            fsync: 0,
            fdatasync: 0,
            random_distribution: Distribution::Uniform,
            random_map: false,
            random_percent: 100,
            sequential_run: 0,
            stride: 0,
            zones: None,
            zoned: zbd::ZoneSpec::default(),
            objects: object::ObjectKnobs::default(),
            think_time: None,
            content: content::DataContent::default(),
            replay: None,
            fio_logs: FioLogs::default(),
            seed: DEFAULT_SEED,
            keep: false,
            overwrite: false,
            destroy_data: false,
            even_if_mounted: false,
            verify: VerifyMode::Off,
            continue_on_error: false,
            exitall: false,
            end_fsync: false,
            cmdprio: None,
            arrivals: Arrivals::Even,
            rate_iops: None,
            rate_bw: None,
            direction_rates: DirectionRates::default(),
            steady_state: None,
            drift: Default::default(),
            flow: 0,
            flow_id: 0,
            flow_sleep_us: 0,
            repeat: 1,
            pick: Pick::Median,
            streams: Vec::new(),
        }
    }

    /// Whether this workload changes its target: it writes or trims, or its
    /// engine changes the file whatever the direction (falloc's reads
    /// allocate a file's holes).
    pub fn modifies_target(&self) -> bool {
        self.rw.modifies(self.rwmix_read) || self.engine.caps().opens_read_write
    }

    /// What this workload may write over on a block device.
    pub fn write_permission(&self) -> crate::gate::device::WritePermission {
        crate::gate::device::WritePermission {
            destroy_data: self.destroy_data,
            even_if_mounted: self.even_if_mounted,
        }
    }

    /// What each read and write passes to the kernel for this workload.
    pub fn io_flags(&self) -> IoFlags {
        IoFlags::of(self.uncached, self.atomic)
    }

    /// How io_uring submits and completes for this workload.
    pub fn ring_options(&self) -> RingOptions {
        RingOptions {
            hipri: self.hipri,
            sqpoll: self.sqpoll,
        }
    }

    /// What one run of the workload is planned to do, for a share of it
    /// done: its seconds (delay and ramp included, each repeat) when
    /// time-bound, or its bytes over all targets when size-bound and the
    /// size is known.
    pub fn planned(&self) -> (Option<f64>, Option<u64>) {
        let repeats = f64::from(self.repeat.max(1));
        let seconds = self
            .runtime_s
            .map(|r| (self.start_delay_s + self.ramp_s + r) * repeats);
        let bytes = match seconds {
            Some(_) => None,
            None => self
                .io_size
                .or(self.size)
                .map(|b| b * self.targets.len() as u64 * u64::from(self.repeat.max(1))),
        };
        (seconds, bytes)
    }

    /// Writes between flushes (`--fsync` or `--fdatasync`); 0 = never.
    pub fn flush_every(&self) -> u32 {
        self.fsync.max(self.fdatasync)
    }

    /// The name target `i` goes by in reports.
    pub fn target_label(&self, i: usize) -> &str {
        self.labels
            .get(i)
            .map(String::as_str)
            .unwrap_or(&self.targets[i])
    }

    /// I/Os per second per target the rate knobs ask for, if any.
    pub fn target_rate(&self) -> Option<f64> {
        self.rate_iops
            .or(self.rate_bw.map(|bw| bw as f64 / self.mean_block_size()))
    }

    /// I/Os per second per target of reads and of writes on their own
    /// schedules (`--rate-read`, `--rate-write`).
    pub fn direction_iops(&self) -> [Option<f64>; 2] {
        let mean = |read: bool| match &self.bssplit {
            Some(split) => split.mean(if read { 100 } else { 0 }),
            None => self.bs as f64,
        };
        let iops = |rate: Option<Rate>, read: bool| {
            rate.map(|r| match r {
                Rate::Iops(n) => n,
                Rate::Bytes(b) => b as f64 / mean(read),
            })
        };
        [
            iops(self.direction_rates.read, true),
            iops(self.direction_rates.write, false),
        ]
    }

    /// Mean bytes per I/O: the block size, or the mean of `bssplit`.
    pub fn mean_block_size(&self) -> f64 {
        match &self.bssplit {
            Some(split) => split.mean(self.rw.read_percent(self.rwmix_read)),
            None => self.bs as f64,
        }
    }

    /// The largest I/O a worker issues: its buffers' size.
    pub fn largest_block_size(&self) -> u64 {
        self.bssplit
            .as_ref()
            .map_or(self.bs, BlockSizeSplit::largest)
    }

    /// The block size as reports show it: `4k`, or the split.
    pub fn block_size_label(&self) -> String {
        match &self.bssplit {
            Some(split) => split.to_string(),
            None => crate::util::units::format_block_size(self.bs),
        }
    }

    /// A short label such as "randread 4k QD32 x1".
    /// What a title calls the workload: its name, or what it does when it
    /// has only the default name ("randread 4k QD32", not "run").
    pub fn title(&self) -> String {
        if self.name == Self::DEFAULT_NAME {
            self.label()
        } else {
            self.name.clone()
        }
    }

    /// Its name, and what it does when the name does not say it:
    /// "nightly (randread 4k QD32)", "randread 4k QD1 engine=sync".
    pub fn named(&self) -> String {
        let label = self.label();
        if self.name.starts_with(&label) {
            self.name.clone()
        } else {
            format!("{} ({label})", self.name)
        }
    }

    /// The name fio gives this job in its reports: a clone's is its job's.
    pub fn fio_jobname(&self) -> &str {
        self.clone_of.as_deref().unwrap_or(&self.name)
    }

    pub fn label(&self) -> String {
        if let Some(replay) = &self.replay {
            return format!("replay {} {}", replay.trace_name(), replay.pace());
        }
        let mut label = format!("{} {} QD{}", self.rw, self.block_size_label(), self.iodepth);
        if self.numjobs > 1 {
            label.push_str(&format!(" x{}", self.numjobs));
        }
        if self.rw.is_mixed() {
            label.push_str(&format!(" {}/{}", self.rwmix_read, 100 - self.rwmix_read));
        }
        label
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rw_modes_parse_and_print() {
        for m in RwMode::ALL {
            assert_eq!(m.name().parse::<RwMode>().unwrap(), m);
        }
        assert_eq!("rw".parse::<RwMode>().unwrap(), RwMode::ReadWrite);
        let err = "randomread".parse::<RwMode>().unwrap_err();
        assert!(err.contains("randomread"));
    }

    #[test]
    fn read_share() {
        assert_eq!(RwMode::RandRead.read_percent(30), 100);
        assert_eq!(RwMode::RandWrite.read_percent(30), 0);
        assert_eq!(RwMode::RandRw.read_percent(30), 30);
        assert!(!RwMode::Read.writes(50));
        assert!(RwMode::ReadWrite.writes(50));
    }

    #[test]
    fn distributions() {
        assert_eq!(
            "uniform".parse::<Distribution>().unwrap(),
            Distribution::Uniform
        );
        assert_eq!(
            "zipf:1.2".parse::<Distribution>().unwrap(),
            Distribution::Zipf { theta: 1.2 }
        );
        assert!("zipf:0".parse::<Distribution>().is_err());
        assert!("zipf:x".parse::<Distribution>().is_err());
        assert!("pareto:1".parse::<Distribution>().is_err());
        for text in [
            "pareto:0.2",
            "normal:10",
            "zoned:60/10:30/20:10/70",
            "zoned_abs:60/1m:40/3m",
        ] {
            let d: Distribution = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
        }
        assert!(
            "zoned:60/10:30/20"
                .parse::<Distribution>()
                .unwrap_err()
                .contains("90%")
        );
        assert!(
            "zoned:60/10:40/20"
                .parse::<Distribution>()
                .unwrap_err()
                .contains("30%")
        );
        assert!("zipf:1.2:0.25".parse::<Distribution>().is_err());
        // fio's last zone without a size: the rest of the region.
        assert_eq!(
            "zoned:50/5:30/15:20/"
                .parse::<Distribution>()
                .unwrap()
                .to_string(),
            "zoned:50/5:30/15:20/80"
        );
    }
}
