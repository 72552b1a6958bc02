//! I/O engines behind one small table of operations, as in fio: the worker
//! loop (`worker.rs`) queues, submits and reaps without knowing which engine
//! it drives. One file per engine.

pub mod content;
pub mod falloc;
pub mod ftruncate;
pub mod http1;
pub mod inline;
pub mod io_uring;
pub mod io_uring_cmd;
pub mod null;
pub mod pace;
pub mod pattern;
pub mod request;
pub mod rw_flags;
pub mod s3;
pub mod sizes;
pub mod sync;
pub mod trim;
pub mod tuning;
pub mod wait_probe;
pub mod worker;
pub mod zones;

use crate::spec::{EngineKind, IoFlags, RingOptions};
use crate::util::buffers::Buffers;
use std::fs::File;
use std::io;
use std::time::Duration;

/// Read, write or trim: the spec's vocabulary, used throughout the engine.
pub use crate::spec::Direction;

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One I/O to issue: `len` bytes at `offset` through buffer slot `slot`.
#[derive(Debug, Clone, Copy)]
pub struct IoRequest {
    pub slot: u32,
    pub dir: Direction,
    pub offset: u64,
    pub len: u32,
    /// The I/O's own priority (ioprio_set(2)'s value), or 0 for the
    /// worker's: engines whose caps say `priority_per_io` honour it.
    pub ioprio: u16,
}

/// A finished I/O: bytes transferred, or a negative errno.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: u32,
    pub result: i32,
}

/// Longest a worker sleeps in the kernel before it looks at the clock and the
/// stop flags again, so a stalled device cannot hold up the end of a run.
pub const WAIT_SLICE: Duration = Duration::from_millis(100);

/// The operations every engine provides.
pub trait Engine {
    /// Buffers the I/Os read into and write from, one per slot.
    fn buffers(&mut self) -> &mut Buffers;
    /// Adds an I/O to the batch sent by the next `submit_and_wait`, or sends
    /// it at once when [`Engine::submits_on_queue`].
    fn queue(&mut self, request: IoRequest);
    /// Whether `queue` sends each I/O to the device at once; the worker then
    /// timestamps each I/O as it queues it rather than the batch as a whole.
    fn submits_on_queue(&self) -> bool {
        false
    }
    /// Whether a call can block on the target, without end if it hangs
    /// (a read of a stuck device or file system): the worker then shows the
    /// coordinator when each call began. An engine that touches no target
    /// (null) says no, and pays nothing for it.
    fn may_block(&self) -> bool {
        true
    }
    /// Whether every I/O is answered within the call that takes it, with
    /// no device behind it to wait for (null without a latency): there is
    /// no issue lag or time in the engine to tell apart from the worker's
    /// own, and the worker measures none, so that fathom's own speed is
    /// measured without the cost of measuring it.
    fn answers_inline(&self) -> bool {
        false
    }
    /// Sends the batch and waits until at least `min_complete` I/Os have
    /// completed or `timeout` has passed, whichever is first.
    fn submit_and_wait(&mut self, min_complete: u32, timeout: Duration) -> io::Result<()>;
    /// Moves every completion available now into `out`.
    fn reap(&mut self, out: &mut Vec<Completion>);
    /// What `--completion-wait auto` measured and chose, for an engine that
    /// decides how it waits.
    fn wait_choices(&self) -> Vec<crate::spec::WaitChoice> {
        Vec::new()
    }
    /// Drops the cached pages of `len` bytes at `offset` (fio's
    /// invalidation at each pass of a buffered run); nothing for an engine
    /// without a file.
    fn drop_cached(&mut self, _offset: u64, _len: u64) {}
    /// Makes written data durable. Called only with nothing in flight.
    /// Makes the writes so far durable: fsync, or fdatasync (data, and only
    /// the metadata needed to read it back) when `data_only`.
    fn sync(&mut self, data_only: bool) -> io::Result<()>;
}

/// Calls `call` (a system call that returns 0 or -1 with errno) until it is
/// not interrupted: `counted` bytes when it succeeds, else the negative
/// errno, as a completion carries it.
pub(crate) fn retried(mut call: impl FnMut() -> libc::c_int, counted: u32) -> i32 {
    loop {
        if call() == 0 {
            return counted as i32;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return -err.raw_os_error().unwrap_or(libc::EIO);
        }
    }
}

/// fsync, or fdatasync when `data_only`: the `sync` of the engines that
/// call the kernel themselves.
fn sync_file(file: &File, data_only: bool) -> io::Result<()> {
    if data_only {
        file.sync_data()
    } else {
        file.sync_all()
    }
}

/// Builds the engine of `kind` over an opened target file; `null_latency`
/// is the null engine's service time per I/O, `ring` how io_uring submits
/// and completes, `flags` what each read and write passes to the kernel,
/// `tuning` how io_uring submits and waits.
pub fn open(
    kind: EngineKind,
    file: File,
    depth: u32,
    buffers: Buffers,
    null_latency: Duration,
    (ring, flags): (RingOptions, IoFlags),
    tuning: Option<&tuning::EngineTuning>,
) -> io::Result<Box<dyn Engine>> {
    let wait = tuning::WaitPolicy::of(tuning);
    Ok(match kind {
        EngineKind::IoUring => Box::new(io_uring::IoUringEngine::with_io(
            io_uring::BlockIo { flags },
            file,
            depth,
            buffers,
            ring,
            wait,
        )?),
        EngineKind::IoUringCmd => Box::new(io_uring_cmd::open(file, depth, buffers, ring, wait)?),
        EngineKind::Sync => Box::new(sync::SyncEngine::new(file, buffers, flags)?),
        EngineKind::Null => Box::new(null::NullEngine::new(buffers, null_latency)),
        EngineKind::Falloc => Box::new(falloc::engine(file, buffers)),
        EngineKind::Ftruncate => Box::new(ftruncate::engine(file, buffers)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_half_and_half_load_counts_as_reads() {
        assert_eq!(Direction::mostly(100), Direction::Read);
        assert_eq!(Direction::mostly(50), Direction::Read);
        assert_eq!(Direction::mostly(49), Direction::Write);
        assert_eq!(Direction::mostly(0), Direction::Write);
        assert_eq!(
            (Direction::Read.name(), Direction::Write.name()),
            ("read", "write")
        );
    }
}
