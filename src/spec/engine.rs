//! The engines fathom drives, their settings, and what each can do: the
//! rest of fathom asks an engine's capabilities ([`EngineKind::caps`]),
//! never its name (as fio asks its engines' FIO_SYNCIO and FIO_DISKLESSIO
//! flags).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The engine an fio job named where fathom runs it on one of its own
/// (libaio on io_uring, sync on pread/pwrite): fio's outputs echo the name
/// the job gave, as fio echoes its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioEngine {
    Libzbc,
    Libaio,
    Posixaio,
    Sync,
    Pvsync,
    Pvsync2,
}

impl FioEngine {
    pub const ALL: [FioEngine; 6] = [
        FioEngine::Libzbc,
        FioEngine::Libaio,
        FioEngine::Posixaio,
        FioEngine::Sync,
        FioEngine::Pvsync,
        FioEngine::Pvsync2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FioEngine::Libzbc => "libzbc",
            FioEngine::Libaio => "libaio",
            FioEngine::Posixaio => "posixaio",
            FioEngine::Sync => "sync",
            FioEngine::Pvsync => "pvsync",
            FioEngine::Pvsync2 => "pvsync2",
        }
    }

    pub fn parse(name: &str) -> Option<FioEngine> {
        FioEngine::ALL.into_iter().find(|e| e.name() == name)
    }

    /// fathom's engine that runs the job.
    pub fn runs_on(self) -> EngineKind {
        match self {
            // libzbc's reads and writes of a zoned drive are the block
            // layer's here; its zone commands are the kernel's
            // (BLKREPORTZONE, BLKRESETZONE).
            FioEngine::Libzbc => EngineKind::Sync,
            FioEngine::Libaio | FioEngine::Posixaio => EngineKind::IoUring,
            FioEngine::Sync | FioEngine::Pvsync | FioEngine::Pvsync2 => EngineKind::Sync,
        }
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
    /// Measured: each worker tries both waits in turn and keeps the one
    /// that completes more I/Os a second (the cheaper one in CPU when they
    /// tie; from depth 4, polling only where it gains more in rate than in
    /// CPU per I/O), and measures again when its completion rate moves; `sleep`
    /// when the run has more workers than CPUs, or more I/Os in flight
    /// than a device queues.
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
    /// fio's `io_uring_cmd` (`cmd_type=nvme`): NVMe read, write and flush
    /// commands sent through io_uring (`IORING_OP_URING_CMD`) to a
    /// namespace's generic char node (`/dev/ngXnY`), past the block layer.
    IoUringCmd,
    Sync,
    Null,
    /// fio's `falloc`: each I/O allocates its range (`fallocate`): a read
    /// keeps the file's size, a write may extend it, a trim punches a hole.
    Falloc,
    /// fio's `ftruncate`: each write sets the file's length to its offset.
    Ftruncate,
}

impl EngineKind {
    pub const ALL: [EngineKind; 6] = [
        EngineKind::IoUring,
        EngineKind::IoUringCmd,
        EngineKind::Sync,
        EngineKind::Null,
        EngineKind::Falloc,
        EngineKind::Ftruncate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::IoUringCmd => "io_uring_cmd",
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
            EngineKind::Falloc => "falloc",
            EngineKind::Ftruncate => "ftruncate",
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
            "io_uring_cmd" | "io-uring-cmd" => Ok(EngineKind::IoUringCmd),
            "sync" | "psync" => Ok(EngineKind::Sync),
            "null" => Ok(EngineKind::Null),
            "falloc" => Ok(EngineKind::Falloc),
            "ftruncate" => Ok(EngineKind::Ftruncate),
            _ => Err(format!(
                "unknown engine '{s}' (expected io_uring, io_uring_cmd, sync, null, falloc or ftruncate)"
            )),
        }
    }
}

/// What an engine can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineCaps {
    /// Keeps more than one I/O in flight per worker (false: one at a
    /// time, so a depth above 1 needs more workers).
    pub queues: bool,
    /// Reads and writes the target: false for an engine whose latency is
    /// fathom's own, which nothing can verify and no device limits.
    pub does_io: bool,
    /// Takes io_uring's settings (polled completions, a polling
    /// submission thread, spinning for completions).
    pub ring_settings: bool,
    /// Waits a latency it is given (`--null-latency`).
    pub simulates_latency: bool,
    /// Gives each I/O a priority of its own (`--cmdprio`; io_uring's
    /// per-request ioprio), beside the worker's (`--ioprio`).
    pub priority_per_io: bool,
    /// Moves the blocks' bytes between memory and the target, so that what
    /// was written can be read back (`--verify`) and its content matters.
    pub moves_data: bool,
    /// Works on block devices as well as files.
    pub block_devices: bool,
    /// Opens its target for writing whatever the direction: falloc's read
    /// allocates (keeping the size), as fio opens it O_RDWR.
    pub opens_read_write: bool,
    /// Takes writes alone (ftruncate: a read or a trim has no call).
    pub only_writes: bool,
    /// Sends NVMe commands to a namespace's generic char node (`/dev/ngXnY`),
    /// past the block layer and the page cache: its I/O is always direct,
    /// and it has reads, writes and flushes, no trim.
    pub nvme_passthrough: bool,
    /// Passes each read and write flags of its own to the kernel
    /// (preadv2/pwritev2's, an io_uring entry's `rw_flags`): `--uncached`
    /// and `--atomic`.
    pub rw_flags: bool,
}

/// The flags each read and each write passes to the kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoFlags {
    pub read: libc::c_int,
    pub write: libc::c_int,
}

impl IoFlags {
    /// `uncached`: buffered I/O whose pages leave the cache once done
    /// (RWF_DONTCACHE); `atomic`: each write lands whole or not at all
    /// (RWF_ATOMIC).
    pub fn of(uncached: bool, atomic: bool) -> IoFlags {
        let dontcache = if uncached { libc::RWF_DONTCACHE } else { 0 };
        let whole = if atomic { libc::RWF_ATOMIC } else { 0 };
        IoFlags {
            read: dontcache,
            write: dontcache | whole,
        }
    }
}

impl EngineKind {
    pub const fn caps(self) -> EngineCaps {
        match self {
            EngineKind::IoUring => EngineCaps {
                queues: true,
                does_io: true,
                ring_settings: true,
                simulates_latency: false,
                priority_per_io: true,
                moves_data: true,
                block_devices: true,
                opens_read_write: false,
                only_writes: false,
                nvme_passthrough: false,
                rw_flags: true,
            },
            EngineKind::IoUringCmd => EngineCaps {
                queues: true,
                does_io: true,
                ring_settings: true,
                simulates_latency: false,
                // An NVMe command has no I/O priority of the block layer's.
                priority_per_io: false,
                moves_data: true,
                block_devices: true,
                opens_read_write: false,
                only_writes: false,
                nvme_passthrough: true,
                rw_flags: false,
            },
            EngineKind::Sync => EngineCaps {
                queues: false,
                does_io: true,
                ring_settings: false,
                simulates_latency: false,
                priority_per_io: false,
                moves_data: true,
                block_devices: true,
                opens_read_write: false,
                only_writes: false,
                nvme_passthrough: false,
                rw_flags: true,
            },
            EngineKind::Null => EngineCaps {
                queues: true,
                does_io: false,
                ring_settings: false,
                simulates_latency: true,
                // It only marks them: their latency is reported apart, as
                // on a device.
                priority_per_io: true,
                moves_data: false,
                block_devices: true,
                opens_read_write: false,
                only_writes: false,
                nvme_passthrough: false,
                rw_flags: false,
            },
            // Allocation and length are a file's: a device's fallocate only
            // punches holes, and it has no length to set.
            EngineKind::Falloc | EngineKind::Ftruncate => EngineCaps {
                queues: false,
                does_io: true,
                ring_settings: false,
                simulates_latency: false,
                priority_per_io: false,
                moves_data: false,
                block_devices: false,
                opens_read_write: true,
                only_writes: matches!(self, EngineKind::Ftruncate),
                nvme_passthrough: false,
                rw_flags: false,
            },
        }
    }
}

/// What was chosen for a run, as recorded in its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineTuning {
    /// `spin` or `sleep`, or `auto` when the workers measured which (what
    /// they chose is in `choices`).
    pub completion_wait: CompletionWait,
    /// With `spin` (or `auto` while it polls): the longest poll before
    /// sleeping, in microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_limit_us: Option<u64>,
    /// Why, in words.
    pub why: String,
    /// With `auto`: what the workers measured and chose, in order (at most
    /// [`EngineTuning::MAX_CHOICES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<WaitChoice>,
}

/// One decision of `auto`: both waits measured in turn, one kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitChoice {
    /// The worker that measured (its index in the run).
    pub worker: usize,
    /// When it decided, in seconds from the workers' start.
    pub at_s: f64,
    /// `spin` or `sleep`.
    pub chose: CompletionWait,
    /// Completions a second of wall time while polling, and while sleeping.
    pub spin_per_s: f64,
    pub sleep_per_s: f64,
    /// The worker thread's CPU time per completion, in ns, each way.
    pub spin_cpu_ns: f64,
    pub sleep_cpu_ns: f64,
}

impl EngineTuning {
    /// The most decisions a result lists.
    pub const MAX_CHOICES: usize = 32;

    /// The poll a worker makes before sleeping, if any.
    pub fn spin_limit(&self) -> Option<Duration> {
        self.spin_limit_us.map(Duration::from_micros)
    }
}
