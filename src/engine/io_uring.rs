//! The default engine: one io_uring per worker thread, `iodepth` I/Os in
//! flight, buffers and the file registered with the ring so each I/O skips
//! the kernel's per-call page pinning and file lookup.
//!
//! Each I/O is submitted as it is queued, as fio does by default
//! (`iodepth_batch_submit=1`): a whole refill submitted at once reaches the
//! device as a burst, and measured 10-15% fewer IOPS at depth 16-64 on a
//! virtio disk and a loop device. How a worker waits is chosen per run
//! (`tuning.rs`).
//!
//! A worker that sleeps must still wake now and then to look at the clock
//! and the stop flags, or a stalled device would hold up the end of the
//! run. A timeout given with each wait arms and cancels a kernel timer per
//! wait (on a VM, each a trap to the hypervisor); instead the ring carries
//! one repeating timeout that completes every [`WAIT_SLICE`] for the whole
//! run, and a wait that may last that long sets no timer of its own.

use super::trim::{BLOCK_URING_CMD_DISCARD, TrimMethod};
use super::tuning::WaitPolicy;
use super::wait_probe::WaitProbe;
use super::{Completion, Direction, Engine, IoRequest, WAIT_SLICE};
use crate::spec::RingOptions;
use crate::util::buffers::Buffers;
use crate::util::error::UsageError;
use io_uring::{IoUring, cqueue, opcode, squeue, types};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const FSYNC_USER_DATA: u64 = u64::MAX;
/// The repeating timeout's completions: a wake-up, not an I/O.
const TICK_USER_DATA: u64 = u64::MAX - 1;
/// The repeating timeout's period, in memory that outlives every ring: the
/// kernel reads it when it takes the entry (later, with `--sqpoll`).
static TICK: types::Timespec = types::Timespec::new()
    .sec(WAIT_SLICE.as_secs())
    .nsec(WAIT_SLICE.subsec_nanos());
/// Looks at the ring between two readings of the clock while polling.
const SPIN_CHECKS_PER_CLOCK: u32 = 16;
/// `IORING_ENTER_GETEVENTS` of linux/io_uring.h.
const ENTER_GETEVENTS: u32 = 1;

/// What a ring carries: its entries' sizes, and how a read, a write and a
/// flush become entries. The block layer's (below), or NVMe commands
/// (`io_uring_cmd.rs`); the rest of the engine (depth, registered buffers
/// and file, how it waits) is the same for both.
pub trait RingIo {
    type Sqe: squeue::EntryMarker;
    type Cqe: cqueue::EntryMarker;
    /// The entry that reads or writes `request` with `buf`, the buffer of
    /// its slot; `fixed`: the buffers are registered, one per slot.
    fn read_write(&mut self, request: &IoRequest, buf: *mut u8, fixed: bool) -> Self::Sqe;
    /// The entry that makes what was written durable.
    fn flush(&self, data_only: bool) -> Self::Sqe;
    /// A completion's result as the worker takes it: bytes moved, or a
    /// negative errno.
    fn outcome(&self, slot: u32, result: i32) -> i32 {
        let _ = slot;
        result
    }
}

/// Reads and writes of a file or a block device, through the block layer,
/// each with the flags it passes to the kernel.
#[derive(Default)]
pub struct BlockIo {
    pub flags: crate::spec::IoFlags,
}

impl RingIo for BlockIo {
    type Sqe = squeue::Entry;
    type Cqe = cqueue::Entry;

    #[inline]
    fn read_write(&mut self, request: &IoRequest, buf: *mut u8, fixed: bool) -> squeue::Entry {
        let fd = types::Fixed(0);
        let slot = request.slot as u16;
        match (request.dir, fixed) {
            (Direction::Read, true) => opcode::ReadFixed::new(fd, buf, request.len, slot)
                .offset(request.offset)
                .ioprio(request.ioprio)
                .rw_flags(self.flags.read)
                .build(),
            (Direction::Read, false) => opcode::Read::new(fd, buf, request.len)
                .offset(request.offset)
                .ioprio(request.ioprio)
                .rw_flags(self.flags.read)
                .build(),
            (_, true) => opcode::WriteFixed::new(fd, buf, request.len, slot)
                .offset(request.offset)
                .ioprio(request.ioprio)
                .rw_flags(self.flags.write)
                .build(),
            (_, false) => opcode::Write::new(fd, buf, request.len)
                .offset(request.offset)
                .ioprio(request.ioprio)
                .rw_flags(self.flags.write)
                .build(),
        }
    }

    fn flush(&self, data_only: bool) -> squeue::Entry {
        let flags = if data_only {
            types::FsyncFlags::DATASYNC
        } else {
            types::FsyncFlags::empty()
        };
        opcode::Fsync::new(types::Fixed(0)).flags(flags).build()
    }
}

pub struct IoUringEngine<K: RingIo = BlockIo> {
    ring: IoUring<K::Sqe, K::Cqe>,
    io: K,
    // Kept open for the ring's registered-file table, and for trims made
    // in this thread.
    file: File,
    /// How the target discards, and whether the ring can do it.
    trim: TrimMethod,
    ring_trims: bool,
    /// Trims done in this thread (a device on a kernel without io_uring's
    /// discard command), waiting to be reaped.
    done: Vec<Completion>,
    buffers: Buffers,
    /// False when the kernel refused to register the buffers (e.g. locked
    /// memory limit); plain Read/Write are used then.
    fixed_buffers: bool,
    /// How long to poll for a completion before sleeping; None: never poll
    /// (see `tuning.rs` for why a worker polls at all).
    spin_limit: Option<Duration>,
    /// With `auto`: what decides `spin_limit` as the worker goes, and the
    /// completions reaped since it last looked.
    probe: Option<WaitProbe>,
    reaped: u64,
    /// The error of a submission made while queueing, reported by the next
    /// wait.
    submit_error: Option<io::Error>,
    /// Moving average of how long the first completion took to arrive once
    /// a wait began, in ns; the worker polls only while it is within
    /// `spin_limit`. Starts at 0, so that a run finds out by polling.
    expected_wait_ns: u64,
    /// Whether the ring's repeating timeout is armed, so that a wait of a
    /// whole slice needs no timer of its own. A kernel that refuses it
    /// (multishot timeouts came in Linux 6.4) answers at once, and the
    /// waits are timed one by one as before.
    ticking: bool,
}

impl<K: RingIo> Drop for IoUringEngine<K> {
    fn drop(&mut self) {
        // The ring's own teardown runs later, in the kernel's workqueue, and
        // holds the registered file until then: a umount right after fathom
        // exits would find the file system busy. Unregistering is done now,
        // in this thread, and the file is released on the way back.
        let _ = self.ring.submitter().unregister_files();
        if self.fixed_buffers {
            let _ = self.ring.submitter().unregister_buffers();
        }
    }
}

impl<K: RingIo> IoUringEngine<K> {
    pub fn with_io(
        io: K,
        file: File,
        depth: u32,
        buffers: Buffers,
        options: RingOptions,
        wait: WaitPolicy,
    ) -> io::Result<Self> {
        let ring = build_ring::<K::Sqe, K::Cqe>(depth, options)?;
        ring.submitter().register_files(&[file.as_raw_fd()])?;
        let iovecs = buffers.iovecs();
        let fixed_buffers = iovecs.len() <= u16::MAX as usize
            // SAFETY: the buffers outlive the ring: both are owned by this
            // engine and the ring field is declared (so dropped) first.
            && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let trim = TrimMethod::of(&file)?;
        Ok(IoUringEngine {
            ring,
            io,
            ring_trims: trim == TrimMethod::PunchHole
                || (trim == TrimMethod::Discard && kernel_discards_through_io_uring()),
            trim,
            done: Vec::new(),
            file,
            buffers,
            fixed_buffers,
            spin_limit: match wait {
                WaitPolicy::Spin(limit) => Some(limit),
                WaitPolicy::Sleep | WaitPolicy::Measure(_) => None,
            },
            probe: match wait {
                WaitPolicy::Measure(limit) => Some(WaitProbe::new(limit, depth, Instant::now())),
                _ => None,
            },
            reaped: 0,
            submit_error: None,
            expected_wait_ns: 0,
            ticking: false,
        }
        .with_tick(!options.hipri))
    }

    /// Arms the repeating timeout (not on a polled ring, whose waits poll
    /// the device and take no timer).
    fn with_tick(mut self, arm: bool) -> Self {
        if arm {
            let entry = opcode::Timeout::new(&TICK)
                .flags(types::TimeoutFlags::MULTISHOT)
                .build()
                .user_data(TICK_USER_DATA);
            self.push(entry);
            self.ticking = self.ring.submit().is_ok();
        }
        self
    }

    /// Waits for `min_complete` completions, at most `timeout`: with no
    /// timer of its own when the ring's timeout wakes it within that.
    fn wait(&mut self, min_complete: u32, timeout: Duration) -> io::Result<()> {
        let timer = !self.ticking || timeout < WAIT_SLICE;
        self.enter(min_complete, timer.then_some(timeout))
    }

    /// One `io_uring_enter` that submits what is queued and waits for
    /// `min_complete` completions or `timeout`; None: with no timer (and
    /// with `min_complete` 0, not waiting at all, but still posting the
    /// completions that are done, which a ring with deferred task running
    /// does only when asked with GETEVENTS).
    fn enter(&mut self, min_complete: u32, timeout: Option<Duration>) -> io::Result<()> {
        let outcome = match timeout {
            Some(timeout) => {
                let ts = types::Timespec::from(timeout);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring
                    .submitter()
                    .submit_with_args(min_complete as usize, &args)
            }
            None => {
                let to_submit = self.ring.submission().len() as u32;
                // SAFETY: no argument is passed; the flags are the plain
                // GETEVENTS every completion wait uses.
                unsafe {
                    self.ring.submitter().enter::<libc::sigset_t>(
                        to_submit,
                        min_complete,
                        ENTER_GETEVENTS,
                        None,
                    )
                }
            }
        };
        settled(outcome)
    }

    fn has_completions(&mut self) -> bool {
        !self.ring.completion().is_empty()
    }

    /// Polls for up to `budget`; true when a completion arrived. The ring
    /// flags deferred completions (IORING_SQ_TASKRUN), so the poll reads
    /// memory and enters the kernel only to post them.
    fn spin(&mut self, started: Instant, budget: Duration) -> io::Result<bool> {
        loop {
            for _ in 0..SPIN_CHECKS_PER_CLOCK {
                if self.ring.submission().taskrun() {
                    self.enter(0, None)?;
                }
                if self.has_completions() {
                    return Ok(true);
                }
                std::hint::spin_loop();
            }
            if started.elapsed() >= budget {
                // Deferred completions of a ring without the flag.
                self.enter(0, None)?;
                return Ok(self.has_completions());
            }
        }
    }

    fn learn(&mut self, waited: Duration) {
        let ns = waited.as_nanos().min(u64::MAX as u128) as u64;
        self.expected_wait_ns = self.expected_wait_ns - self.expected_wait_ns / 8 + ns / 8;
    }

    fn push(&mut self, entry: impl Into<K::Sqe>) {
        let entry = entry.into();
        // SAFETY: the entry points at buffers owned by self that stay valid
        // and untouched until the completion is reaped.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            // The worker never queues more than `depth` I/Os and the ring holds
            // at least that many entries, so a full queue is a logic error.
            panic!("io_uring submission queue full");
        }
    }
}

/// Whether `cqe` is the repeating timeout's, a wake-up to pass over. One
/// that does not promise more (the kernel refused it, or it ended) turns
/// the timed waits back on.
fn tick_seen(cqe: &cqueue::Entry, ticking: &mut bool) -> bool {
    if cqe.user_data() != TICK_USER_DATA {
        return false;
    }
    *ticking &= cqueue::more(cqe.flags());
    true
}

/// An `io_uring_enter`'s outcome for the worker: timed out, interrupted by
/// a signal, or completions must be reaped first are not errors (the worker
/// loop reaps and comes back).
fn settled(outcome: io::Result<usize>) -> io::Result<()> {
    match outcome {
        Ok(_) => Ok(()),
        Err(e) => match e.raw_os_error() {
            Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN) => {
                Ok(())
            }
            _ => Err(e),
        },
    }
}

/// Whether io_uring takes discards of a block device (the block layer's
/// `BLOCK_URING_CMD_DISCARD`, Linux 6.12); before it a device is trimmed
/// in the worker's thread, as fio's io_uring engine always does.
fn kernel_discards_through_io_uring() -> bool {
    kernel_at_least(6, 12)
}

/// Whether the running kernel is Linux `major.minor` or later (false when
/// its release cannot be read).
pub fn kernel_at_least(major: u32, minor: u32) -> bool {
    crate::gate::read::host_text("/proc/sys/kernel/osrelease")
        .is_some_and(|release| release_at_least(&release, (major, minor)))
}

/// Whether a kernel `release` (`6.1.0-27-amd64`) is `version` or later.
pub fn release_at_least(release: &str, version: (u32, u32)) -> bool {
    let mut numbers = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse::<u32>().ok());
    (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0)) >= version
}

/// How long the submission thread of `--sqpoll` spins without work before
/// it sleeps (and the next submission wakes it with a system call).
const SQPOLL_IDLE_MS: u32 = 1000;

/// Single-issuer, deferred task running is cheapest (the worker thread is
/// the only one touching its ring); older kernels fall back step by step.
/// `--sqpoll` and `--hipri` are added to every attempt: a kernel that
/// refuses them refuses the run (checked before anything is created, by
/// [`check_options`]). A submission thread is a second issuer, so
/// `--sqpoll` rings skip the single-issuer attempt.
fn build_ring<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    depth: u32,
    options: RingOptions,
) -> io::Result<IoUring<S, C>> {
    let entries = depth.next_power_of_two().max(1);
    type Step<S, C> = fn(&mut io_uring::Builder<S, C>) -> &mut io_uring::Builder<S, C>;
    let attempts: [Step<S, C>; 3] = [
        |b| {
            b.setup_single_issuer()
                .setup_defer_taskrun()
                .setup_taskrun_flag()
        },
        |b| b.setup_coop_taskrun(),
        |b| b,
    ];
    let mut last_error = None;
    for configure in attempts.iter().skip(usize::from(options.sqpoll)) {
        let mut builder = IoUring::<S, C>::builder();
        configure(&mut builder);
        if options.sqpoll {
            builder.setup_sqpoll(SQPOLL_IDLE_MS);
        }
        if options.hipri {
            builder.setup_iopoll();
        }
        match builder.build(entries) {
            Ok(ring) => return Ok(ring),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.expect("at least one attempt"))
}

/// Whether this kernel builds a ring with `options`, before anything is
/// created: one line naming the option when it does not.
pub fn check_options(options: RingOptions) -> Result<(), UsageError> {
    if options == RingOptions::default() {
        return Ok(());
    }
    build_ring::<squeue::Entry, cqueue::Entry>(1, options)
        .map(drop)
        .map_err(|e| {
            let flag = match (options.sqpoll, options.hipri) {
                (true, true) => "--sqpoll --hipri",
                (true, false) => "--sqpoll",
                _ => "--hipri",
            };
            UsageError(format!(
                "{flag}: this kernel refuses such an io_uring ring ({e})"
            ))
        })
}

impl<K: RingIo> Engine for IoUringEngine<K> {
    fn buffers(&mut self) -> &mut Buffers {
        &mut self.buffers
    }

    fn queue(&mut self, request: IoRequest) {
        let slot = request.slot as usize;
        let buf = self.buffers.slot_ptr(slot);
        let fd = types::Fixed(0);
        let entry: K::Sqe = match (request.dir, self.fixed_buffers) {
            (Direction::Trim, _) if !self.ring_trims => {
                let result = self.trim.trim(&self.file, request.offset, request.len);
                self.done.push(Completion {
                    slot: request.slot,
                    result,
                });
                return;
            }
            (Direction::Trim, _) => match self.trim {
                TrimMethod::PunchHole => opcode::Fallocate::new(fd, u64::from(request.len))
                    .offset(request.offset)
                    .mode(TrimMethod::PUNCH_HOLE_MODE)
                    .build()
                    .into(),
                TrimMethod::ResetZone => unreachable!("zone resets are done in this thread"),
                TrimMethod::Discard => {
                    // The command's length is the sqe's addr3, where its
                    // command bytes begin; the start is in addr.
                    let mut cmd = [0u8; 16];
                    cmd[..8].copy_from_slice(&u64::from(request.len).to_ne_bytes());
                    opcode::UringCmd16::new(fd, BLOCK_URING_CMD_DISCARD)
                        .addr(Some(request.offset))
                        .cmd(cmd)
                        .build()
                        .into()
                }
            },
            (_, fixed) => self.io.read_write(&request, buf, fixed),
        };
        let mut entry = entry;
        squeue::EntryMarker::set_user_data(&mut entry, request.slot as u64);
        self.push(entry);
        if self.submit_error.is_none() {
            // A failed submission is reported by the next wait, which the
            // worker makes before it queues anything else.
            if let Err(e) = self.ring.submit() {
                self.submit_error = Some(e);
            }
        }
    }

    fn submits_on_queue(&self) -> bool {
        true
    }

    fn submit_and_wait(&mut self, min_complete: u32, timeout: Duration) -> io::Result<()> {
        if let Some(e) = self.submit_error.take() {
            return Err(e);
        }
        if !self.done.is_empty() {
            // Trims done in this thread: the worker reaps them now.
            return self.enter(0, None);
        }
        if let Some(probe) = &mut self.probe {
            self.spin_limit = probe.next(Instant::now(), std::mem::take(&mut self.reaped));
        }
        let Some(limit) = self.spin_limit.filter(|_| min_complete > 0) else {
            return self.wait(min_complete, timeout);
        };
        // Submit, and take what is already done without waiting.
        self.enter(0, None)?;
        if self.has_completions() {
            return Ok(());
        }
        let started = Instant::now();
        if self.expected_wait_ns <= limit.as_nanos() as u64 {
            let budget = limit.min(timeout);
            if self.spin(started, budget)? {
                self.learn(started.elapsed());
                return Ok(());
            }
            if budget == timeout {
                return Ok(());
            }
        }
        // A whole slice asked for is one still: the poll took microseconds.
        let left = match timeout >= WAIT_SLICE {
            true => timeout,
            false => timeout.saturating_sub(started.elapsed()),
        };
        self.wait(min_complete, left)?;
        // Slept: a lower bound of how long completions take now (the wake-up
        // adds to it), which is what stops polling for a slow device.
        self.learn(started.elapsed());
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<Completion>) {
        let before = out.len();
        out.append(&mut self.done);
        for cqe in self.ring.completion() {
            let cqe: cqueue::Entry = cqe.into();
            if !tick_seen(&cqe, &mut self.ticking) {
                let slot = cqe.user_data() as u32;
                out.push(Completion {
                    slot,
                    result: self.io.outcome(slot, cqe.result()),
                });
            }
        }
        self.reaped += (out.len() - before) as u64;
    }

    fn wait_choices(&self) -> Vec<crate::spec::WaitChoice> {
        self.probe
            .as_ref()
            .map_or_else(Vec::new, |p| p.choices().to_vec())
    }

    fn drop_cached(&mut self, offset: u64, len: u64) {
        crate::util::advise(&self.file, offset, len, libc::POSIX_FADV_DONTNEED);
    }

    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        let mut entry = self.io.flush(data_only);
        squeue::EntryMarker::set_user_data(&mut entry, FSYNC_USER_DATA);
        self.push(entry);
        loop {
            self.ring.submit_and_wait(1)?;
            let mut done = None;
            for cqe in self.ring.completion() {
                let cqe: cqueue::Entry = cqe.into();
                if !tick_seen(&cqe, &mut self.ticking) {
                    debug_assert_eq!(cqe.user_data(), FSYNC_USER_DATA);
                    done = Some(self.io.outcome(u32::MAX, cqe.result()));
                }
            }
            if let Some(result) = done {
                return if result < 0 {
                    Err(io::Error::from_raw_os_error(-result))
                } else {
                    Ok(())
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::sync::mpsc;

    fn engine(wait: WaitPolicy) -> (tempfile::NamedTempFile, IoUringEngine<BlockIo>) {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.as_file().set_len(1 << 20).unwrap();
        let file = File::options()
            .read(true)
            .write(true)
            .open(tmp.path())
            .unwrap();
        let buffers = Buffers::new(2, 4096, &mut rand::rngs::SmallRng::seed_from_u64(1));
        let engine = IoUringEngine::with_io(
            BlockIo::default(),
            file,
            2,
            buffers,
            RingOptions::default(),
            wait,
        )
        .unwrap();
        (tmp, engine)
    }

    fn read(slot: u32, offset: u64) -> IoRequest {
        IoRequest {
            ioprio: 0,
            slot,
            dir: Direction::Read,
            offset,
            len: 4096,
        }
    }

    /// A wait of a whole slice sets no timer of its own; the ring's
    /// repeating timeout must still end it when nothing completes (a
    /// stalled device), and its wake-ups are not I/Os.
    #[test]
    fn a_wait_with_nothing_in_flight_ends_and_reaps_nothing() {
        let (done, waited) = mpsc::channel();
        std::thread::spawn(move || {
            let (_tmp, mut e) = engine(WaitPolicy::Sleep);
            let mut out = Vec::new();
            for _ in 0..3 {
                e.submit_and_wait(1, WAIT_SLICE).unwrap();
                e.reap(&mut out);
            }
            done.send(out.len()).unwrap();
        });
        // Three slices take 0.3 s; a wait without end never answers.
        let reaped = waited.recv_timeout(Duration::from_secs(60));
        assert_eq!(
            reaped,
            Ok(0),
            "the waits did not end, or a wake-up was reaped as an I/O"
        );
    }

    #[test]
    fn reads_complete_and_a_sync_is_not_confused_by_the_timeout() {
        let (_tmp, mut e) = engine(WaitPolicy::Spin(Duration::from_micros(50)));
        e.queue(read(0, 0));
        e.queue(read(1, 4096));
        let mut out = Vec::new();
        while out.len() < 2 {
            e.submit_and_wait(1, WAIT_SLICE).unwrap();
            e.reap(&mut out);
        }
        let mut slots: Vec<_> = out.iter().map(|c| (c.slot, c.result)).collect();
        slots.sort();
        assert_eq!(slots, [(0, 4096), (1, 4096)]);
        // Long enough for the repeating timeout to complete at least once
        // before the sync, whose wait must pass over it.
        std::thread::sleep(WAIT_SLICE * 2);
        e.sync(false).unwrap();
        e.submit_and_wait(0, Duration::ZERO).unwrap();
        out.clear();
        e.reap(&mut out);
        assert!(out.is_empty(), "{:?}", out.len());
    }
}
