//! The resolved description of one workload: every knob with its final value.
//! Flags, job files and presets produce it through the knob table
//! (`knobs.rs`); the runner consumes it; it is written verbatim into the
//! result document so a run can be repeated.

pub mod block_sizes;
pub mod capacity;
pub mod content;
pub mod knobs;
pub mod meta;
pub mod pts;
pub mod replay;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub use block_sizes::BlockSizeSplit;

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

/// How an io_uring engine submits and completes: by interrupts and
/// `io_uring_enter` unless told otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingOptions {
    /// Poll the device for completions (IORING_SETUP_IOPOLL).
    pub hipri: bool,
    /// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
}

/// How an io_uring worker waits for its I/Os to complete.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompletionWait {
    /// `spin` while the run has no more workers than the machine has CPUs,
    /// `sleep` otherwise.
    #[default]
    Auto,
    /// Sleep in the kernel until a completion arrives.
    Sleep,
    /// Poll the ring for a short while before sleeping, when recent
    /// completions arrived within that while.
    Spin,
}

impl CompletionWait {
    pub fn name(self) -> &'static str {
        match self {
            CompletionWait::Auto => "auto",
            CompletionWait::Sleep => "sleep",
            CompletionWait::Spin => "spin",
        }
    }
}

impl fmt::Display for CompletionWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CompletionWait {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [
            CompletionWait::Auto,
            CompletionWait::Sleep,
            CompletionWait::Spin,
        ]
        .into_iter()
        .find(|w| w.name() == s)
        .ok_or_else(|| format!("unknown completion wait '{s}' (expected auto, sleep or spin)"))
    }
}

/// Which I/O engine drives the workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    IoUring,
    Sync,
    Null,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "io_uring" | "io-uring" | "uring" => Ok(EngineKind::IoUring),
            "sync" | "psync" => Ok(EngineKind::Sync),
            "null" => Ok(EngineKind::Null),
            _ => Err(format!(
                "unknown engine '{s}' (expected io_uring, sync or null)"
            )),
        }
    }
}

/// How random offsets are spread over the region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent `theta` (> 0, != 1 is not required): a few blocks are hot.
    Zipf {
        theta: f64,
    },
    /// Pareto with fio's power `h` (0 < h < 1), computed as fio does: the
    /// smaller `h`, the more I/Os the hottest blocks get.
    Pareto {
        h: f64,
    },
    /// A bell around the middle of the region whose standard deviation is
    /// `deviation` percent of it.
    Normal {
        deviation: f64,
    },
    /// `percent` of the I/Os fall in the next `share` percent of the region,
    /// zone after zone (fio's `zoned:60/10:30/20:10/70`).
    Zoned {
        zones: Vec<Zone>,
    },
    /// As `Zoned`, with each zone's size in bytes (fio's `zoned_abs`).
    ZonedAbs {
        zones: Vec<Zone>,
    },
}

/// One zone of a zoned distribution: the share of I/Os it gets, and its
/// size (percent of the region, or bytes for `zoned_abs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub percent: u8,
    pub size: u64,
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let zones = |f: &mut fmt::Formatter<'_>, zones: &[Zone], bytes: bool| {
            for (i, z) in zones.iter().enumerate() {
                let sep = if i == 0 { "" } else { ":" };
                if bytes {
                    write!(
                        f,
                        "{sep}{}/{}",
                        z.percent,
                        crate::util::units::format_block_size(z.size)
                    )?;
                } else {
                    write!(f, "{sep}{}/{}", z.percent, z.size)?;
                }
            }
            Ok(())
        };
        match self {
            Distribution::Uniform => f.write_str("uniform"),
            Distribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            Distribution::Pareto { h } => write!(f, "pareto:{h}"),
            Distribution::Normal { deviation } => write!(f, "normal:{deviation}"),
            Distribution::Zoned { zones: z } => {
                f.write_str("zoned:")?;
                zones(f, z, false)
            }
            Distribution::ZonedAbs { zones: z } => {
                f.write_str("zoned_abs:")?;
                zones(f, z, true)
            }
        }
    }
}

/// `60/10:30/20:10/70` (sizes in percent) or `60/20g:40/100g` (bytes).
fn parse_zones(text: &str, bytes: bool) -> Result<Vec<Zone>, String> {
    let mut zones = Vec::new();
    for entry in text.split(':') {
        let (pct, size) = entry
            .split_once('/')
            .ok_or_else(|| format!("zone '{entry}' is not PCT/SIZE"))?;
        let percent = pct
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|p| *p <= 100)
            .ok_or_else(|| format!("zone '{entry}': '{pct}' is not a percentage"))?;
        let size = if bytes {
            crate::util::units::parse_size(size.trim())
                .map_err(|e| format!("zone '{entry}': {e}"))?
        } else {
            size.trim()
                .parse::<u64>()
                .ok()
                .filter(|s| (1..=100).contains(s))
                .ok_or_else(|| {
                    format!("zone '{entry}': '{size}' is not a percentage of the region")
                })?
        };
        if size == 0 {
            return Err(format!("zone '{entry}' has no size"));
        }
        zones.push(Zone { percent, size });
    }
    if zones.len() > 256 {
        return Err(format!("{} zones: at most 256", zones.len()));
    }
    let total: u32 = zones.iter().map(|z| u32::from(z.percent)).sum();
    if total != 100 {
        return Err(format!("the zones get {total}% of the I/Os, not 100%"));
    }
    if !bytes {
        let covered: u64 = zones.iter().map(|z| z.size).sum();
        if covered != 100 {
            return Err(format!(
                "the zones cover {covered}% of the region, not 100%"
            ));
        }
    }
    Ok(zones)
}

impl FromStr for Distribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "uniform" || s == "random" {
            return Ok(Distribution::Uniform);
        }
        let number = |name: &str, v: &str| -> Result<f64, String> {
            // fio's optional second value (where the hot spot sits) is
            // not supported: fathom scatters the hot blocks.
            if v.contains(':') {
                return Err(format!(
                    "{name}:{v}: the second value (where the distribution is centred) is not supported"
                ));
            }
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{name} value '{v}' is not a number"))
        };
        if let Some(theta) = s.strip_prefix("zipf:") {
            let theta = number("zipf", theta)?;
            if !(theta > 0.0 && theta <= 100.0) {
                return Err(format!(
                    "zipf theta {theta} must be above 0 and at most 100"
                ));
            }
            return Ok(Distribution::Zipf { theta });
        }
        if let Some(h) = s.strip_prefix("pareto:") {
            let h = number("pareto", h)?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("pareto h {h} must be between 0 and 1"));
            }
            return Ok(Distribution::Pareto { h });
        }
        if let Some(d) = s.strip_prefix("normal:").or(s.strip_prefix("gauss:")) {
            let deviation = number("normal", d)?;
            if !(deviation > 0.0 && deviation <= 100.0) {
                return Err(format!(
                    "normal deviation {deviation} must be above 0 and at most 100 (percent of the region)"
                ));
            }
            return Ok(Distribution::Normal { deviation });
        }
        // fio spells the absolute form both zoned_abs: and zoned_abs=.
        if let Some(z) = s
            .strip_prefix("zoned_abs:")
            .or(s.strip_prefix("zoned_abs="))
        {
            return Ok(Distribution::ZonedAbs {
                zones: parse_zones(z, true)?,
            });
        }
        if let Some(z) = s.strip_prefix("zoned:") {
            return Ok(Distribution::Zoned {
                zones: parse_zones(z, false)?,
            });
        }
        Err(format!(
            "unknown distribution '{s}' (expected uniform, zipf:THETA, pareto:H, normal:DEV%, zoned:PCT/PCT:... or zoned_abs:PCT/SIZE:...)"
        ))
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
    pub offset: u64,
    /// Time bound; `None` means one pass over `size` per target.
    pub runtime_s: Option<f64>,
    pub ramp_s: f64,
    pub direct: bool,
    /// Buffered runs: drop the targets' cached pages before starting, so
    /// reads come from the device (`--invalidate`, fio's `invalidate`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invalidate: bool,
    pub engine: EngineKind,
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
    /// fio's JSON reports the streams of this workload as one job, as fio's
    /// `group_reporting` does (`--group-reporting`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group_reporting: bool,
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
    /// Streams that run at the same time, started and stopped together,
    /// each a workload of its own on some of the targets; empty for a plain
    /// workload. This spec's own knobs are what the streams inherited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<WorkloadSpec>,
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

impl WorkloadSpec {
    /// The spec of a run nothing has changed, on `targets`.
    pub fn defaults(targets: Vec<String>) -> WorkloadSpec {
        WorkloadSpec {
            name: "run".into(),
            labels: targets.clone(),
            targets,
            rw: RwMode::RandRead,
            rwmix_read: 100,
            bs: 4096,
            bssplit: None,
            iodepth: 1,
            io_size: None,
            numjobs: 1,
            size: None,
            offset: 0,
            runtime_s: None,
            ramp_s: 0.0,
            direct: true,
            invalidate: false,
            engine: EngineKind::IoUring,
            null_latency_ns: 0,
            hipri: false,
            sqpoll: false,
            completion_wait: CompletionWait::Auto,
            group_reporting: false,
            percentile_list: Vec::new(),
            clone_of: None,
            fsync: 0,
            fdatasync: 0,
            random_distribution: Distribution::Uniform,
            random_percent: 100,
            sequential_run: 0,
            stride: 0,
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
            rate_iops: None,
            rate_bw: None,
            direction_rates: DirectionRates::default(),
            steady_state: None,
            drift: Default::default(),
            streams: Vec::new(),
        }
    }

    /// What this workload may write over on a block device.
    pub fn write_permission(&self) -> crate::util::safety::WritePermission {
        crate::util::safety::WritePermission {
            destroy_data: self.destroy_data,
            even_if_mounted: self.even_if_mounted,
        }
    }

    /// How io_uring submits and completes for this workload.
    pub fn ring_options(&self) -> RingOptions {
        RingOptions {
            hipri: self.hipri,
            sqpoll: self.sqpoll,
        }
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
        if self.name == "run" {
            self.label()
        } else {
            self.name.clone()
        }
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
    }
}

/// Limits that catch typos and absurd values before anything runs.
pub mod limits {
    pub const MIN_BS: u64 = 512;
    pub const MAX_BS: u64 = 16 << 20;
    pub const MAX_IODEPTH: u32 = 4096;
    pub const MAX_NUMJOBS: u32 = 1024;
    /// Long certification runs last days; years are a typo.
    pub const MAX_RUNTIME_S: f64 = 30.0 * 86400.0;
    /// All buffers of one workload must fit comfortably in memory.
    pub const MAX_BUFFER_BYTES: u64 = 4 << 30;
}

impl WorkloadSpec {
    /// Checks the knobs that do not depend on the target.
    pub fn validate(&self) -> Result<(), crate::util::error::UsageError> {
        use crate::util::units::format_bytes;
        use limits::*;
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        if !self.streams.is_empty() {
            return self.validate_streams();
        }
        if self.fsync > 0 && self.fdatasync > 0 {
            return fail("--fsync and --fdatasync: give one of them".into());
        }
        if self.targets.is_empty() {
            return fail("no target given".into());
        }
        if !(MIN_BS..=MAX_BS).contains(&self.bs) {
            return fail(format!("--bs {} is outside 512 to 16m", self.bs));
        }
        if let Some(split) = &self.bssplit {
            split
                .validate(MIN_BS, MAX_BS)
                .map_err(|e| crate::util::error::UsageError(format!("--bssplit {split}: {e}")))?;
            if split.smallest() != self.bs {
                return fail(format!(
                    "--bs {} and --bssplit {split}: give one of them",
                    crate::util::units::format_block_size(self.bs)
                ));
            }
            if self.verify != VerifyMode::Off && !split.is_uniform() {
                return fail(format!(
                    "--verify checks blocks of one size: --bssplit {split} mixes sizes"
                ));
            }
        }
        if self.random_percent > 100 {
            return fail(format!(
                "--random-percent {} is above 100",
                self.random_percent
            ));
        }
        if (self.random_percent < 100 || self.sequential_run > 1) && !self.rw.is_random() {
            let knob = if self.random_percent < 100 {
                "--random-percent"
            } else {
                "--sequential-run"
            };
            return fail(format!(
                "{knob} shapes random offsets: it needs a random --rw (this workload is {})",
                self.rw
            ));
        }
        let c = &self.content;
        if (c.compress_pct > 0 || c.dedupe_pct > 0) && c.pattern != content::DataPattern::Random {
            return fail(format!(
                "--compress and --dedupe shape random data: not with --pattern {}",
                c.pattern
            ));
        }
        if c.compress_pct > 0 && c.compress_chunk < 64 {
            return fail(format!(
                "--compress-chunk {}: at least 64 bytes, so each chunk keeps a part unique to its write",
                c.compress_chunk
            ));
        }
        if self.stride != 0 && self.rw.is_random() {
            return fail(format!(
                "--stride skips between sequential I/Os: it needs a sequential --rw (this workload is {}; --sequential-run makes runs of a random one)",
                self.rw
            ));
        }
        if !self.stride.unsigned_abs().is_multiple_of(self.bs) {
            return fail(format!(
                "--stride {} is not a multiple of the block size, {}",
                self.stride, self.bs
            ));
        }
        if self.stride != 0 && self.verify != VerifyMode::Off {
            return fail(
                "--verify reads back every block of the region: --stride leaves holes".into(),
            );
        }
        if let Some(t) = self.think_time
            && (t.pause_ns == 0
                || t.every == 0
                || t.pause_ns > MAX_RUNTIME_S as u64 * 1_000_000_000)
        {
            return fail(
                "--think-time: a pause above 0 and up to 30 days, after every 1 or more I/Os (--think-every)".into(),
            );
        }
        if self.iodepth == 0 || self.iodepth > MAX_IODEPTH {
            return fail(format!(
                "--iodepth {} is outside 1 to {MAX_IODEPTH}",
                self.iodepth
            ));
        }
        if self.numjobs == 0 || self.numjobs > MAX_NUMJOBS {
            return fail(format!(
                "--numjobs {} is outside 1 to {MAX_NUMJOBS}",
                self.numjobs
            ));
        }
        if self.rwmix_read > 100 {
            return fail(format!("--rwmix-read {} is above 100", self.rwmix_read));
        }
        if self.engine == EngineKind::Sync && self.iodepth > 1 {
            return fail(format!(
                "--iodepth {} needs an asynchronous engine: --engine sync does one I/O at a time per worker (use --numjobs, or --engine io_uring)",
                self.iodepth
            ));
        }
        if let Some(io) = self.io_size
            && io < self.bs * u64::from(self.numjobs)
        {
            return fail(format!(
                "--io-size {io} is less than one block of --bs {} for each of --numjobs {}",
                self.bs, self.numjobs
            ));
        }
        if let Some(r) = self.runtime_s
            && !(r > 0.0 && r <= MAX_RUNTIME_S)
        {
            return fail(format!("--runtime {r}s is outside 1ms to 30 days"));
        }
        if !(0.0..=MAX_RUNTIME_S).contains(&self.ramp_s) {
            return fail(format!("--ramp {}s is longer than 30 days", self.ramp_s));
        }
        for (flag, set) in [
            ("--hipri", self.hipri),
            ("--sqpoll", self.sqpoll),
            (
                "--completion-wait spin",
                self.completion_wait == CompletionWait::Spin,
            ),
        ] {
            if set && self.engine != EngineKind::IoUring {
                return fail(format!(
                    "{flag} is an io_uring setting: it needs --engine io_uring (this workload uses {})",
                    self.engine
                ));
            }
        }
        if self.hipri && !self.direct {
            return fail("--hipri polls for completions of direct I/O: it needs --direct".into());
        }
        if self.hipri && self.flush_every() > 0 {
            return fail(
                "--hipri: a polled ring takes only reads and writes, not the flushes of --fsync or --fdatasync".into(),
            );
        }
        if self.rw.trims() && self.verify != VerifyMode::Off {
            return fail(format!(
                "--verify checks blocks against what was written: --rw {} discards blocks, which then read back as zeros or as they were, as the device chooses",
                self.rw
            ));
        }
        if self.rw.trims() && self.hipri {
            return fail(format!(
                "--hipri: a polled ring takes only reads and writes, not the trims of --rw {}",
                self.rw
            ));
        }
        if self.verify != VerifyMode::Off && self.engine == EngineKind::Null {
            return fail("--verify needs real I/O: --engine null reads and writes nothing".into());
        }
        if self.null_latency_ns > 0 && self.engine != EngineKind::Null {
            return fail(format!(
                "--null-latency: only --engine null waits (this workload uses {})",
                self.engine
            ));
        }
        if self.null_latency_ns > MAX_RUNTIME_S as u64 * 1_000_000_000 {
            return fail("--null-latency is longer than 30 days".into());
        }
        if !self.direction_rates.is_empty() {
            if self.target_rate().is_some() {
                return fail(
                    "--rate-read/--rate-write and --rate-iops/--rate-bw: give a rate per direction, or one for the mix".into(),
                );
            }
            let reads = self.rw.read_percent(self.rwmix_read);
            for (knob, given, issued) in [
                (
                    "--rate-read",
                    self.direction_rates.read.is_some(),
                    reads > 0,
                ),
                (
                    "--rate-write",
                    self.direction_rates.write.is_some(),
                    reads < 100,
                ),
            ] {
                if given && !issued {
                    return fail(format!("{knob}: --rw {} issues no such I/O", self.rw));
                }
            }
            let total: f64 = self.direction_iops().iter().flatten().sum();
            let slots = self.iodepth as f64 * self.numjobs as f64;
            if self.engine != EngineKind::Null && total > slots * MAX_IOPS_PER_SLOT {
                return fail(format!(
                    "--rate-read/--rate-write: {} I/Os per second is more than --iodepth {} x --numjobs {} can carry",
                    crate::util::units::thousands(total.round() as u64),
                    self.iodepth,
                    self.numjobs
                ));
            }
        }
        if self.rate_iops.is_some() && self.rate_bw.is_some() {
            return fail("--rate-iops and --rate-bw: give one rate, not both".into());
        }
        if let Some(r) = self.target_rate()
            && !(r.is_finite() && r > 0.0 && r <= 1e8)
        {
            return fail(format!(
                "--rate-iops {r} is outside 1 I/O per second to 100 million"
            ));
        }
        // Each worker keeps its share of the rate: a share under one I/O a
        // second leaves seconds with nothing to measure.
        let rates = [self.target_rate()]
            .into_iter()
            .chain(self.direction_iops())
            .flatten();
        for r in rates {
            let per_worker = r / f64::from(self.numjobs.max(1));
            if per_worker < 1.0 {
                let knob = match (self.rate_bw.is_some(), self.rate_iops.is_some()) {
                    (true, _) => "--rate-bw",
                    (_, true) => "--rate-iops",
                    _ => "--rate-read/--rate-write",
                };
                return fail(format!(
                    "{knob}: {} I/Os per second over --numjobs {} is {per_worker:.3} a second per worker, under one: give at least {} I/Os per second",
                    if r >= 1.0 {
                        crate::util::units::thousands(r.round() as u64)
                    } else {
                        format!("{r}")
                    },
                    self.numjobs,
                    self.numjobs
                ));
            }
        }
        if let Some(r) = self.target_rate()
            && !self.queue_carries_rate()
        {
            let knob = if self.rate_bw.is_some() {
                "--rate-bw"
            } else {
                "--rate-iops"
            };
            return fail(format!(
                "{knob}: {} I/Os per second is more than --iodepth {} x --numjobs {} can carry \
                     ({} a second per slot: each I/O would have to finish in under 0.5 µs)",
                crate::util::units::thousands(r.round() as u64),
                self.iodepth,
                self.numjobs,
                crate::util::units::thousands(MAX_IOPS_PER_SLOT as u64)
            ));
        }
        if self.steady_state.is_some() && self.runtime_s.is_none() {
            return fail("--steady-state needs --runtime as the longest the run may take".into());
        }
        if self.size == Some(0) {
            return fail("--size is 0".into());
        }
        let buffers = self.largest_block_size()
            * self.iodepth as u64
            * self.numjobs as u64
            * self.targets.len() as u64;
        if buffers > MAX_BUFFER_BYTES {
            return fail(format!(
                "--bs x --iodepth x --numjobs x targets needs {} of buffers, more than {}",
                format_bytes(buffers),
                format_bytes(MAX_BUFFER_BYTES)
            ));
        }
        Ok(())
    }
}

/// The most I/Os a second one queue slot (one of `iodepth` x `numjobs`)
/// is allowed to be asked for: one every 0.5 µs.
pub const MAX_IOPS_PER_SLOT: f64 = 2_000_000.0;

impl WorkloadSpec {
    /// Whether a target's queue can carry the rate asked of it (true
    /// without a rate). Little's law: a target's iodepth x numjobs slots
    /// each carry at most one I/O per latency. Past this bound every I/O
    /// would have to finish in under 0.5 µs, faster than a page-cache hit
    /// (1-2 µs on a typical machine), so the schedule could only fall
    /// behind; the null engine does no I/O and is not bound.
    pub fn queue_carries_rate(&self) -> bool {
        let slots = self.iodepth as f64 * self.numjobs as f64;
        match self.target_rate() {
            Some(r) => self.engine == EngineKind::Null || r <= slots * MAX_IOPS_PER_SLOT,
            None => true,
        }
    }

    /// What actually runs: a streams workload's streams, or the workload
    /// itself.
    pub fn runs(&self) -> &[WorkloadSpec] {
        if self.streams.is_empty() {
            std::slice::from_ref(self)
        } else {
            &self.streams
        }
    }

    /// The streams of a streams workload: each valid on its own, names
    /// unique, and no region written by two streams while `--verify` checks
    /// it (neither could tell the other's blocks from corruption).
    fn validate_streams(&self) -> Result<(), crate::util::error::UsageError> {
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        for (i, s) in self.streams.iter().enumerate() {
            s.validate().map_err(|e| {
                crate::util::error::UsageError(format!("stream {}: {}", s.name, e.0))
            })?;
            if self.streams[..i].iter().any(|o| o.name == s.name) {
                return fail(format!("stream {}: two streams of one name", s.name));
            }
            if s.verify == VerifyMode::Off || !s.rw.writes(s.rwmix_read) {
                continue;
            }
            for o in self.streams.iter().filter(|o| o.name != s.name) {
                let shared = s.targets.iter().any(|t| o.targets.contains(t));
                let (a, b) = (s.offset, o.offset);
                let overlap = match (s.size, o.size) {
                    (Some(sa), Some(sb)) => a < b + sb && b < a + sa,
                    _ => true,
                };
                if shared && overlap && o.rw.writes(o.rwmix_read) {
                    return fail(format!(
                        "stream {}: --verify with stream {} writing the same region; give them disjoint --offset/--size",
                        s.name, o.name
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod validate_tests {
    use super::*;

    pub fn spec() -> WorkloadSpec {
        WorkloadSpec {
            name: "t".into(),
            seed: 1,
            ..WorkloadSpec::defaults(vec!["/tmp/x".into()])
        }
    }

    #[test]
    fn a_rate_is_bound_by_the_slots_that_carry_it() {
        let rated = |iops: f64, engine: EngineKind| WorkloadSpec {
            iodepth: 4,
            numjobs: 2,
            rate_iops: Some(iops),
            engine,
            ..spec()
        };
        let most = 8.0 * MAX_IOPS_PER_SLOT;
        assert!(rated(most, EngineKind::IoUring).validate().is_ok());
        let e = rated(most + 1.0, EngineKind::IoUring)
            .validate()
            .unwrap_err();
        assert!(e.0.contains("--iodepth 4 x --numjobs 2"), "{}", e.0);
        assert!(rated(most + 1.0, EngineKind::Null).validate().is_ok());
    }

    #[test]
    fn accepts_sane_and_rejects_absurd_values() {
        assert!(spec().validate().is_ok());
        type Mutation = Box<dyn Fn(&mut WorkloadSpec)>;
        let cases: Vec<(Mutation, &str)> = vec![
            (Box::new(|s| s.bs = 0), "--bs"),
            (Box::new(|s| s.bs = 32 << 20), "--bs"),
            (Box::new(|s| s.iodepth = 0), "--iodepth"),
            (Box::new(|s| s.iodepth = 100_000), "--iodepth"),
            (Box::new(|s| s.numjobs = 0), "--numjobs"),
            (
                Box::new(|s| s.runtime_s = Some(10.0 * 365.0 * 86400.0)),
                "--runtime",
            ),
            (
                Box::new(|s| {
                    s.engine = EngineKind::Sync;
                    s.iodepth = 8
                }),
                "--iodepth",
            ),
            (
                Box::new(|s| {
                    s.bs = 16 << 20;
                    s.iodepth = 4096
                }),
                "buffers",
            ),
            (Box::new(|s| s.targets.clear()), "target"),
        ];
        for (mutate, needle) in cases {
            let mut s = spec();
            mutate(&mut s);
            let err = s.validate().unwrap_err().0;
            assert!(err.contains(needle), "{err} should name {needle}");
        }
    }
}
