//! `fathom crashcheck`: does a device keep what it acknowledged when the
//! power goes? (diskchecker.pl's question.)
//!
//! The writer stamps blocks with the verify header (offset, generation, run
//! id, checksums), makes each durable (fsync, fdatasync or O_DSYNC), and only
//! then appends "block generation" to an ack log kept somewhere the power
//! cut cannot reach: a file on another device, or a listener on another
//! machine. After the cut and a reboot, `--verify` reads every block the log
//! names and says whether each still holds its last acknowledged
//! generation. A write that was in flight at the cut may or may not be
//! there; an acknowledged one must be.

use crate::measure::intervals::DirectionSample;
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use crate::util::verify::header::{BlockHeader, HEADER_LEN};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The first line of an ack log names the format.
const LOG_MAGIC: &str = "fathom-crashcheck 1";

/// An ack log, as the write gate knows it: kept in a file, added to only
/// when it is one.
pub const ACK_LOG: crate::gate::write::Output = crate::gate::write::Output {
    flag: "--ack-log",
    what: "a fathom crashcheck ack log",
    streams: false,
    ours: is_ack_log,
    overwrite_hint: None,
};

fn is_ack_log(path: &Path) -> bool {
    crate::gate::read::head(path, LOG_MAGIC.len()).is_some_and(|h| h == LOG_MAGIC.as_bytes())
}

/// How each write is made durable before it is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    Fsync,
    Fdatasync,
    /// The file is opened with O_DSYNC: each write returns once durable.
    Dsync,
}

impl Durability {
    pub fn name(self) -> &'static str {
        match self {
            Durability::Fsync => "fsync",
            Durability::Fdatasync => "fdatasync",
            Durability::Dsync => "O_DSYNC",
        }
    }
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fsync" => Ok(Durability::Fsync),
            "fdatasync" => Ok(Durability::Fdatasync),
            "dsync" | "o_dsync" => Ok(Durability::Dsync),
            _ => Err(format!(
                "'{s}' is not a way to flush (expected fsync, fdatasync or dsync)"
            )),
        }
    }
}

/// Where acknowledgements go.
#[derive(Debug, Clone)]
pub enum AckSink {
    /// A file on another device, appended with O_DSYNC.
    File(PathBuf),
    /// A `fathom crashcheck --listen` on another machine.
    Listener(String),
}

#[derive(Debug, Clone)]
pub struct WriterSpec {
    pub target: PathBuf,
    pub sink: AckSink,
    pub bs: u64,
    /// Bytes of the target written (from offset 0).
    pub size: u64,
    /// Writers, each on its own blocks, each with one write in flight.
    pub jobs: u32,
    pub durability: Durability,
    /// Acknowledged writes per second over all writers; None: as fast as
    /// the device acknowledges.
    pub rate_iops: Option<f64>,
    /// Stop after this long; None: until killed (the point).
    pub runtime: Option<Duration>,
    /// Allow writing a file fathom did not create.
    pub overwrite: bool,
    /// Allow writing a block device that carries a signature, and one in
    /// use (`even_if_mounted`).
    pub permission: crate::gate::device::WritePermission,
    /// Add this run to an existing ack log instead of refusing it.
    pub append: bool,
}

/// What the writer did before it was stopped.
#[derive(Debug, Clone)]
pub struct WriterSummary {
    pub acknowledged: u64,
    pub seconds: f64,
    pub run_id: u64,
}

/// The device numbers of the disk under `path` (a file, its directory if it
/// does not exist yet, or a block device itself).
fn device_of(path: &Path) -> Option<u64> {
    let parent = crate::util::directory_of(path);
    let meta = std::fs::metadata(path)
        .or_else(|_| std::fs::metadata(parent))
        .ok()?;
    use std::os::unix::fs::FileTypeExt;
    Some(if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    })
}

/// Whether two device numbers are the same disk (partitions of one disk
/// are).
fn same_disk(a: u64, b: u64) -> bool {
    if a == b {
        return true;
    }
    let facts = |d: u64| crate::measure::facts::device_facts(libc::major(d), libc::minor(d));
    match (facts(a), facts(b)) {
        (Some(x), Some(y)) => x.name == y.name,
        _ => false,
    }
}

/// Refuses an ack log that would die with the target.
pub fn check_log_placement(target: &Path, log: &Path) -> Result<(), UsageError> {
    if let (Some(t), Some(l)) = (device_of(target), device_of(log))
        && same_disk(t, l)
    {
        return Err(UsageError(format!(
            "--ack-log {}: it is on the same device as the target, and would be lost with it (put it on another disk or an NFS mount, or use --ack-to)",
            log.display()
        )));
    }
    Ok(())
}

/// Appends acknowledgements, each line durable (file) or sent (listener)
/// before the call returns.
struct AckLog {
    out: Box<dyn Write + Send>,
}

impl AckLog {
    fn open(sink: &AckSink) -> Result<AckLog, UsageError> {
        let out: Box<dyn Write + Send> = match sink {
            AckSink::File(path) => Box::new(crate::gate::write::append(path, ACK_LOG, true)?),
            AckSink::Listener(addr) => {
                let addrs: Vec<_> = addr
                    .to_socket_addrs()
                    .map_err(|e| UsageError(format!("--ack-to {addr}: {e}")))?
                    .collect();
                let stream = addrs
                    .iter()
                    .find_map(|a| TcpStream::connect_timeout(a, Duration::from_secs(5)).ok())
                    .ok_or_else(|| {
                        UsageError(format!(
                            "--ack-to {addr}: cannot connect (is `fathom crashcheck --listen` running there?)"
                        ))
                    })?;
                stream.set_nodelay(true).ok();
                Box::new(stream)
            }
        };
        Ok(AckLog { out })
    }

    fn line(&mut self, text: &str) -> std::io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }
}

/// Writes, flushes and logs until stopped (or `runtime`). A SIGKILL or a
/// power cut ends it anywhere: the log then holds every write that was
/// acknowledged, and perhaps not the last few. `ready` is called once the
/// ack log and the target are open, before the first write.
pub fn write(
    spec: &WriterSpec,
    stop: &StopFlag,
    board: Option<&crate::measure::live::LiveBoard>,
    ready: &mut dyn FnMut(u64),
    say: &mut dyn FnMut(String),
) -> anyhow::Result<WriterSummary> {
    if spec.bs == 0 || !spec.bs.is_multiple_of(512) {
        return Err(UsageError(format!(
            "--bs {}: a multiple of 512 of at least 512 bytes",
            spec.bs
        ))
        .into());
    }
    let blocks = spec.size / spec.bs;
    if blocks < spec.jobs as u64 {
        return Err(UsageError(format!(
            "--size holds {blocks} blocks, fewer than --iodepth {}",
            spec.jobs
        ))
        .into());
    }
    if let AckSink::File(log) = &spec.sink {
        check_log_placement(&spec.target, log)?;
        check_log_is_new(log, spec.append)?;
    }
    let overridden = check_target(spec)?;
    // The log next: a listener that cannot be reached leaves nothing
    // created.
    let mut log = AckLog::open(&spec.sink)?;
    if !overridden.is_empty() {
        say(format!(
            "{}: writing anyway, as told: {}",
            spec.target.display(),
            overridden.join("; ")
        ));
    }
    let file = open_target(spec)?;
    ready(blocks);
    let run_id: u64 = rand::random();
    let seed: u64 = rand::random();
    log.line(&format!(
        "{LOG_MAGIC} run_id={run_id:x} bs={} blocks={blocks} seed={seed:x}\n",
        spec.bs
    ))?;
    let log = Arc::new(Mutex::new(log));
    let file = Arc::new(file);
    let started = Instant::now();
    let acknowledged = Arc::new(std::sync::atomic::AtomicU64::new(0));
    // Each acknowledged write's time (the write and its durability call),
    // for those watching: taken out once a second by this thread.
    let second = Arc::new(Mutex::new(DirectionSample::default()));
    let per_job_rate = spec.rate_iops.map(|r| r / spec.jobs as f64);
    let result: anyhow::Result<()> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.jobs)
            .map(|job| {
                let (file, log, acknowledged) = (file.clone(), log.clone(), acknowledged.clone());
                let second = second.clone();
                let watched = board.is_some();
                scope.spawn(move || -> anyhow::Result<()> {
                    let mut rng = SmallRng::seed_from_u64(seed ^ job as u64);
                    let mut generations: HashMap<u64, u64> = HashMap::new();
                    let mut block = vec![0u8; spec.bs as usize];
                    let mut n = 0u64;
                    // This writer's blocks: job, job + jobs, job + 2 jobs...
                    let mine = (blocks - job as u64).div_ceil(spec.jobs as u64);
                    while !stop.is_set() && spec.runtime.is_none_or(|r| started.elapsed() < r) {
                        if let Some(rate) = per_job_rate {
                            let due = started + Duration::from_secs_f64(n as f64 / rate);
                            let now = Instant::now();
                            if due > now {
                                std::thread::sleep((due - now).min(Duration::from_millis(100)));
                                continue;
                            }
                        }
                        let index = job as u64 + rng.random_range(0..mine) * spec.jobs as u64;
                        let generation = generations.get(&index).copied().unwrap_or(0) + 1;
                        rng.fill(&mut block[HEADER_LEN..]);
                        let offset = index * spec.bs;
                        BlockHeader::stamp(&mut block, offset, generation, run_id, seed);
                        let began = Instant::now();
                        file.write_all_at(&block, offset)?;
                        match spec.durability {
                            Durability::Fsync => file.sync_all()?,
                            Durability::Fdatasync => file.sync_data()?,
                            Durability::Dsync => {}
                        }
                        if watched {
                            let mut s = second.lock().expect("no writer panics holding it");
                            s.ios += 1;
                            s.bytes += spec.bs;
                            s.latency.record(began.elapsed().as_nanos() as u64);
                        }
                        generations.insert(index, generation);
                        log.lock()
                            .expect("no writer panics holding the log")
                            .line(&format!("{index} {generation}\n"))?;
                        acknowledged.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        n += 1;
                    }
                    Ok(())
                })
            })
            .collect();
        if let Some(board) = board {
            board.workload("crashcheck");
            board.phase("crashcheck: writing", None);
            report_seconds(board, &second, started, &handles);
        }
        for h in handles {
            h.join().expect("a writer panicked")?;
        }
        Ok(())
    });
    result?;
    Ok(WriterSummary {
        acknowledged: acknowledged.load(std::sync::atomic::Ordering::Relaxed),
        seconds: started.elapsed().as_secs_f64(),
        run_id,
    })
}

/// Hands the writers' acknowledged writes to `board` once a second until
/// every writer has ended, and the last part second then.
fn report_seconds<T>(
    board: &crate::measure::live::LiveBoard,
    second: &Mutex<DirectionSample>,
    started: Instant,
    writers: &[std::thread::ScopedJoinHandle<'_, T>],
) {
    let mut index = 0u64;
    loop {
        let due = started + Duration::from_secs(index + 1);
        while Instant::now() < due && !writers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(
                due.saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(20)),
            );
        }
        let ended = writers.iter().all(|w| w.is_finished());
        let now = Instant::now();
        let sample = std::mem::take(&mut *second.lock().expect("no writer panics holding it"));
        let begun = started + Duration::from_secs(index);
        let dur_s = now.saturating_duration_since(begun).as_secs_f64().min(1.0);
        if sample.ios > 0 || !ended {
            let mut directions: [DirectionSample; crate::measure::intervals::DIRECTIONS] =
                Default::default();
            directions[crate::spec::Direction::Write as usize] = sample;
            board.second(
                "crashcheck",
                &crate::measure::intervals::CompletedSecond {
                    index,
                    dur_s,
                    directions,
                },
            );
        }
        if ended {
            return;
        }
        index += 1;
    }
}

/// An ack log that already holds a run would get a second one, and a
/// `--verify` of the first run's target against it would judge the wrong
/// run: refused unless told to add to it.
fn check_log_is_new(log: &Path, append: bool) -> Result<(), UsageError> {
    crate::gate::write::place(log, ACK_LOG, false)
        .map_err(|m| UsageError(format!("--ack-log {}: {m}", log.display())))?;
    match std::fs::metadata(log) {
        Ok(m) if m.len() > 0 && !append => Err(UsageError(format!(
            "--ack-log {}: it already holds a run (verify that one first, or name a new log; --append adds this run to it)",
            log.display()
        ))),
        _ => Ok(()),
    }
}

/// Everything that would refuse the target, checked before anything is
/// created; returns what a permission overrode on a device.
fn check_target(spec: &WriterSpec) -> Result<Vec<String>, UsageError> {
    use std::os::unix::fs::FileTypeExt;
    let err = |m: String| UsageError(format!("{}: {m}", spec.target.display()));
    let meta = match std::fs::metadata(&spec.target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(&spec.target).is_ok() {
                return Err(err("is a symbolic link to nothing".into()));
            }
            None
        }
        Err(e) => return Err(err(e.to_string())),
    };
    match meta {
        Some(m) if m.file_type().is_block_device() => {
            let len = crate::gate::target::open(&spec.target, Default::default())
                .map_err(|e| err(e.to_string()))
                .and_then(|f| target_len(&f).map_err(|e| err(e.to_string())))?;
            // A device with no signature needs the flag as well (NO_SIGNATURE).
            crate::gate::device::risks_of_writing(&spec.target, len)
                .map_err(|e| err(format!("cannot check the device before writing: {e}")))?
                .judge(spec.permission)
                .map_err(err)
        }
        Some(m) if m.is_file() && !spec.overwrite => Err(err(
            "refusing to write to an existing file (pass --overwrite)".into(),
        )),
        Some(m) if !m.is_file() => Err(err("not a regular file or block device".into())),
        _ => Ok(Vec::new()),
    }
}

fn open_target(spec: &WriterSpec) -> anyhow::Result<File> {
    use std::os::unix::fs::FileTypeExt;
    let device = std::fs::metadata(&spec.target).is_ok_and(|m| m.file_type().is_block_device());
    let access = crate::gate::target::Access {
        write: true,
        create: !device,
        flags: match spec.durability {
            Durability::Dsync => libc::O_DSYNC,
            _ => 0,
        },
        ..Default::default()
    };
    let file = crate::gate::target::open(&spec.target, access)
        .map_err(|e| UsageError(format!("{}: {e}", spec.target.display())))?;
    if !device && file.metadata()?.len() < spec.size {
        file.set_len(spec.size)?;
    }
    Ok(file)
}

/// What an ack log says: the run, and each block's last acknowledged
/// generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Acknowledged {
    pub run_id: u64,
    pub bs: u64,
    pub blocks: u64,
    pub last: HashMap<u64, u64>,
    /// Acknowledgements in the log.
    pub count: u64,
}

/// Reads every run of an ack log (a listener's log, or one a writer was
/// told to add to with `--append`, holds several); a last line cut short
/// (the log's own write was in flight) is ignored.
pub fn read_runs(path: &Path) -> Result<Vec<Acknowledged>, UsageError> {
    let err = |m: String| UsageError(format!("--ack-log {}: {m}", path.display()));
    let text = crate::gate::read::text(path, crate::gate::read::ACK_LOG).map_err(|e| {
        err(e
            .0
            .trim_start_matches(&format!("{}: ", path.display()))
            .to_string())
    })?;
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    if !complete.starts_with(LOG_MAGIC) {
        return Err(err("not a fathom crashcheck ack log".into()));
    }
    let mut runs: Vec<Acknowledged> = Vec::new();
    for (i, line) in complete.lines().enumerate() {
        let at = |m: String| err(format!("line {}: {m}", i + 1));
        if line.starts_with(LOG_MAGIC) {
            runs.push(parse_header(line).map_err(at)?);
            continue;
        }
        let acked = runs.last_mut().expect("the log starts with a header");
        let mut parts = line.split_whitespace().map(str::parse::<u64>);
        let (Some(Ok(block)), Some(Ok(generation)), None) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(at(format!("'{line}' is not BLOCK GENERATION")));
        };
        if block >= acked.blocks {
            return Err(at(format!("block {block} is past the end")));
        }
        let last = acked.last.entry(block).or_insert(0);
        *last = (*last).max(generation);
        acked.count += 1;
    }
    Ok(runs)
}

fn parse_header(header: &str) -> Result<Acknowledged, String> {
    let field = |name: &str| -> Result<&str, String> {
        header
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .ok_or_else(|| format!("its header has no {name}"))
    };
    let hex = |name: &str| -> Result<u64, String> {
        u64::from_str_radix(field(name)?, 16).map_err(|e| format!("{name}: {e}"))
    };
    let dec = |name: &str| -> Result<u64, String> {
        field(name)?.parse().map_err(|e| format!("{name}: {e}"))
    };
    let bs = dec("bs")?;
    if bs < HEADER_LEN as u64 || !bs.is_multiple_of(512) {
        return Err(format!("bs={bs} is not a block size crashcheck writes"));
    }
    Ok(Acknowledged {
        run_id: hex("run_id")?,
        bs,
        blocks: dec("blocks")?,
        last: HashMap::new(),
        count: 0,
    })
}

/// Each acknowledged block, as found after the cut.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrashReport {
    /// Blocks the log names.
    pub blocks: u64,
    /// Acknowledged writes the log holds for the run: more than `blocks`
    /// when blocks were written again (only each block's last acknowledged
    /// write can be checked).
    pub writes: u64,
    /// Holding their last acknowledged generation.
    pub intact: u64,
    /// Holding a later generation: a write in flight at the cut landed.
    pub newer: u64,
    /// Holding an earlier generation than acknowledged: the device lost an
    /// acknowledged write.
    pub older: u64,
    /// Holding no block of this run at all: lost.
    pub lost: u64,
    /// Checksums do not match (a partial block). Counted as a loss unless
    /// the header says a newer, unacknowledged write was being made.
    pub torn: u64,
    pub torn_in_flight: u64,
    /// The first failures, described.
    pub failures: Vec<String>,
    /// The run verified, and every run the log holds (run ids, in order).
    pub run_id: u64,
    pub runs: Vec<u64>,
    /// Of a sample of the run's acknowledged blocks, how many hold a block
    /// of the run at all (none: the wrong target, or a device that lost
    /// everything).
    pub sample: (u64, u64),
}

impl CrashReport {
    /// No acknowledged write lost, and at least one checked: a log that
    /// acknowledged nothing tested nothing.
    pub fn pass(&self) -> bool {
        self.blocks > 0 && self.older == 0 && self.lost == 0 && self.torn == self.torn_in_flight
    }

    fn fail(&mut self, what: String) {
        if self.failures.len() < 20 {
            self.failures.push(what);
        }
    }
}

/// Reads back every block the log names and judges it.
pub fn verify(target: &Path, log: &Path) -> anyhow::Result<CrashReport> {
    let runs = read_runs(log)?;
    let file = crate::gate::target::open(target, Default::default())
        .map_err(|e| UsageError(format!("{}: {e}", target.display())))?;
    let len = target_len(&file)?;
    let (chosen, sample) = run_on_target(&file, &runs)?;
    let acked = &runs[chosen];
    if len < acked.blocks * acked.bs {
        return Err(UsageError(format!(
            "{}: {} bytes, smaller than the {} blocks of {} the log's run {:x} wrote: is this the target the log was written for?",
            target.display(),
            len,
            acked.blocks,
            acked.bs,
            acked.run_id
        ))
        .into());
    }
    let mut report = CrashReport {
        run_id: acked.run_id,
        writes: acked.count,
        runs: runs.iter().map(|r| r.run_id).collect(),
        sample,
        ..Default::default()
    };
    let mut blocks: Vec<(&u64, &u64)> = acked.last.iter().collect();
    blocks.sort();
    let mut buf = vec![0u8; acked.bs as usize];
    for (&index, &generation) in blocks {
        report.blocks += 1;
        let offset = index * acked.bs;
        let read = read_full_at(&file, &mut buf, offset)?;
        let found = if read < buf.len() {
            Found::Lost("the target ends before it".into())
        } else {
            judge(&buf, offset, acked.run_id, generation)
        };
        match found {
            Found::Intact => report.intact += 1,
            Found::Newer => report.newer += 1,
            Found::Older(g) => {
                report.older += 1;
                report.fail(format!(
                    "block {index} (offset {offset}): generation {g}, but {generation} was acknowledged"
                ));
            }
            Found::Lost(why) => {
                report.lost += 1;
                report.fail(format!(
                    "block {index} (offset {offset}): {why}; generation {generation} was acknowledged"
                ));
            }
            Found::Torn { in_flight } => {
                report.torn += 1;
                if in_flight {
                    report.torn_in_flight += 1;
                } else {
                    report.fail(format!(
                        "block {index} (offset {offset}): torn (a partial block); generation {generation} was acknowledged"
                    ));
                }
            }
        }
    }
    Ok(report)
}

/// A file's or block device's length.
fn target_len(file: &File) -> anyhow::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = file;
    Ok(f.seek(SeekFrom::End(0))?)
}

/// Which of the log's runs the target holds: the one whose header most of a
/// sample of its acknowledged blocks carry (the last on a tie), with
/// (blocks holding it, blocks sampled). Blocks of that run whose length is
/// not the log's block size mean the log and target disagree.
fn run_on_target(file: &File, runs: &[Acknowledged]) -> anyhow::Result<(usize, (u64, u64))> {
    const SAMPLE: usize = 64;
    let mut best = (runs.len() - 1, (0, 0));
    for (i, run) in runs.iter().enumerate() {
        let mut blocks: Vec<u64> = run.last.keys().copied().collect();
        blocks.sort_unstable();
        let step = blocks.len().div_ceil(SAMPLE).max(1);
        let mut buf = vec![0u8; run.bs as usize];
        let (mut held, mut sampled) = (0, 0);
        for &index in blocks.iter().step_by(step) {
            sampled += 1;
            if read_full_at(file, &mut buf, index * run.bs)? < buf.len() {
                continue;
            }
            if let Ok(Some(h)) = BlockHeader::parse(&buf)
                && h.run_id == run.run_id
            {
                if u64::from(h.length) != run.bs {
                    return Err(UsageError(format!(
                        "the log says run {:x} wrote blocks of {} bytes, but its block {index} on the target is {} bytes",
                        run.run_id, run.bs, h.length
                    ))
                    .into());
                }
                held += 1;
            }
        }
        if held >= best.1.0 && (held > 0 || i == runs.len() - 1) {
            best = (i, (held, sampled));
        }
    }
    Ok(best)
}

fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64)? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}

enum Found {
    Intact,
    Newer,
    Older(u64),
    Lost(String),
    Torn { in_flight: bool },
}

fn judge(block: &[u8], offset: u64, run_id: u64, acknowledged: u64) -> Found {
    let header = match BlockHeader::parse(block) {
        Ok(Some(h)) => h,
        Ok(None) => return Found::Lost("no fathom header".into()),
        Err(_) => return Found::Torn { in_flight: false },
    };
    if header.run_id != run_id {
        return Found::Lost("holds a block of another run".into());
    }
    if header.offset != offset {
        return Found::Lost(format!("holds the block for offset {}", header.offset));
    }
    if header.length as usize != block.len()
        || crc32c::crc32c(&block[HEADER_LEN..]) != header.payload_crc
    {
        return Found::Torn {
            in_flight: header.generation > acknowledged,
        };
    }
    match header.generation.cmp(&acknowledged) {
        std::cmp::Ordering::Equal => Found::Intact,
        std::cmp::Ordering::Greater => Found::Newer,
        std::cmp::Ordering::Less => Found::Older(header.generation),
    }
}

/// The longest line a writer sends (its header is about 80 bytes).
const MAX_ACK_LINE: usize = 1024;

/// `--listen`: takes acknowledgements from writers on other machines and
/// appends them to `log` (one connection at a time, each a run). Calls
/// `ready` with the address it listens on.
pub fn listen(
    addr: &str,
    log: &Path,
    stop: &StopFlag,
    ready: &mut dyn FnMut(std::net::SocketAddr),
) -> anyhow::Result<()> {
    let listener =
        TcpListener::bind(addr).map_err(|e| UsageError(format!("--listen {addr}: {e}")))?;
    listener.set_nonblocking(true)?;
    ready(listener.local_addr()?);
    let mut out = crate::gate::write::append(log, ACK_LOG, true)?;
    while !stop.is_set() {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(Duration::from_millis(200)))?;
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        let mut lines = 0u64;
        loop {
            // No line of a writer's is longer: a sender of endless bytes
            // without a newline is cut off, not buffered without bound.
            let room = (MAX_ACK_LINE - line.len()) as u64;
            match (&mut reader).take(room).read_line(&mut line) {
                Ok(0) => break,
                Ok(_) if line.ends_with('\n') => {
                    // Each connection is one run, and starts with its
                    // header: lines sent without one would be read as
                    // acknowledgements of the run before.
                    if lines == 0 && !line.starts_with(LOG_MAGIC) {
                        break;
                    }
                    out.write_all(line.as_bytes())?;
                    lines += 1;
                    line.clear();
                }
                Ok(_) if line.len() >= MAX_ACK_LINE => break,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if stop.is_set() {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(offset: u64, generation: u64, run_id: u64) -> Vec<u8> {
        let mut b = vec![7u8; 4096];
        BlockHeader::stamp(&mut b, offset, generation, run_id, 1);
        b
    }

    #[test]
    fn each_block_is_judged_against_its_last_acknowledged_generation() {
        assert!(matches!(
            judge(&block(4096, 3, 9), 4096, 9, 3),
            Found::Intact
        ));
        assert!(matches!(
            judge(&block(4096, 4, 9), 4096, 9, 3),
            Found::Newer
        ));
        assert!(matches!(
            judge(&block(4096, 2, 9), 4096, 9, 3),
            Found::Older(2)
        ));
        assert!(matches!(
            judge(&block(4096, 3, 8), 4096, 9, 3),
            Found::Lost(_)
        ));
        assert!(matches!(judge(&block(0, 3, 9), 4096, 9, 3), Found::Lost(_)));
        assert!(matches!(judge(&[0u8; 4096], 4096, 9, 3), Found::Lost(_)));
        // A block half written: the payload no longer matches.
        let mut torn = block(4096, 3, 9);
        torn[2048..].fill(0);
        assert!(matches!(
            judge(&torn, 4096, 9, 3),
            Found::Torn { in_flight: false }
        ));
        let mut torn_newer = block(4096, 4, 9);
        torn_newer[2048..].fill(0);
        assert!(matches!(
            judge(&torn_newer, 4096, 9, 3),
            Found::Torn { in_flight: true }
        ));
    }

    #[test]
    fn an_ack_log_keeps_each_blocks_last_generation_and_ignores_a_cut_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("acks");
        std::fs::write(
            &path,
            format!("{LOG_MAGIC} run_id=ff bs=4096 blocks=8 seed=1\n3 1\n5 1\n3 2\n5"),
        )
        .unwrap();
        let acked = read_runs(&path).unwrap().pop().unwrap();
        assert_eq!((acked.run_id, acked.bs, acked.blocks), (255, 4096, 8));
        assert_eq!(acked.count, 3);
        assert_eq!(acked.last[&3], 2);
        assert_eq!(acked.last[&5], 1);
        std::fs::write(
            &path,
            format!("{LOG_MAGIC} run_id=ff bs=4096 blocks=8 seed=1\n9 1\n"),
        )
        .unwrap();
        assert!(
            read_runs(&path)
                .unwrap_err()
                .0
                .contains("line 2: block 9 is past the end")
        );
        // A listener's log of two runs: both are read, each its own.
        std::fs::write(
            &path,
            format!("{LOG_MAGIC} run_id=1 bs=4096 blocks=8 seed=1\n1 1\n{LOG_MAGIC} run_id=2 bs=4096 blocks=8 seed=1\n2 7\n"),
        )
        .unwrap();
        let runs = read_runs(&path).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].run_id, runs[0].count, runs[0].last[&1]), (1, 1, 1));
        assert_eq!((runs[1].run_id, runs[1].count, runs[1].last[&2]), (2, 1, 7));
        std::fs::write(&path, "hello\n").unwrap();
        assert!(read_runs(&path).unwrap_err().0.contains("not a fathom"));
        std::fs::write(&path, format!("{LOG_MAGIC} run_id=1 bs=100 blocks=8\n")).unwrap();
        assert!(read_runs(&path).unwrap_err().0.contains("bs=100"));
    }
}
