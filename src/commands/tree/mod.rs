//! `fathom tree`: a tree of directories and files made and measured in
//! phases (mkdir, dirstat, create, stat, read, rename, delete, rmdir), as mdtest and
//! elbencho measure metadata. Every operation is timed into an HDR
//! histogram per thread; threads work on shares of their own and meet
//! between phases. Nothing is kept per file: paths and visiting orders are
//! computed from an item's index (`layout.rs`), so a tree of millions of
//! files costs a few histograms.
//!
//! The tree lives in `DIR/fathom-tree`, marked as fathom's by a file in
//! it that names the directory's device and inode: a marker copied
//! elsewhere (`cp -a`), or a directory another user made, is no tree of
//! fathom's. Only the paths the layout names are ever removed, and only
//! through the held directory (`gate::remove::MadeDir`), never through a
//! link.

pub mod layout;

use crate::gate::marked::{self, Unmarked};
use crate::gate::remove::{DirId, MadeDir};
use crate::gate::workload;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::Interval;
use crate::measure::op_seconds::{OpSeconds, Slicing};
use crate::result::tree::{ThreadOps, TreePhaseResult, TreeResult};
use crate::spec::tree::{TreePhase, TreeShape, TreeSpec, TreeSync, TreeWorkers};
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use crate::util::units::{format_bytes, thousands};
use layout::{Layout, Order};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Limits that keep a typo from filling a file system.
pub const MAX_FILES: u64 = 100_000_000;
pub const MAX_DIRS: u64 = 10_000_000;
pub const MAX_FILE_SIZE: u64 = 64 << 20;
pub const MAX_DEPTH: u32 = 32;

/// What a tree's marker keeps, for a later run on a kept tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Marker {
    shape: TreeShape,
    /// Threads on each rank.
    threads: u32,
    /// Ranks sharing the tree (`--shared-dir`), each with a part of the
    /// marker of its own holding its threads' counts.
    #[serde(default = "one")]
    ranks: u32,
    seed: u64,
    random: bool,
    file_size_min: u64,
    file_size_max: u64,
    /// Files each of this rank's threads created (all of its share unless
    /// stonewalled).
    created: Vec<u64>,
    dirs_present: bool,
    files_present: bool,
    renamed: bool,
    /// The directory the marker was made for: a marker is trusted only
    /// there (one without it, or naming another, was copied or forged).
    #[serde(default)]
    root: Option<DirId>,
}

impl Marker {
    /// Whether the marker's counts are within what fathom makes: a forged
    /// one (2^64 files) is refused rather than walked.
    fn bounded(&self) -> bool {
        let shape = self.shape;
        shape.total_files() <= MAX_FILES
            && (1..=shape.depth).map(|l| shape.dirs_at(l)).sum::<u64>() <= MAX_DIRS
            && shape.depth <= MAX_DEPTH
            && self.file_size_max <= MAX_FILE_SIZE
            && self.file_size_min <= self.file_size_max
            && self.threads as usize == self.created.len()
            && self.created.iter().all(|&c| c <= shape.total_files())
    }
}

fn one() -> u32 {
    1
}

impl Marker {
    /// The threads that made the tree, as rank `rank` of them.
    fn workers(&self, rank: u32) -> TreeWorkers {
        TreeWorkers {
            first: rank * self.threads,
            local: self.threads,
            workers: self.ranks * self.threads,
            rank,
            ranks: self.ranks,
        }
    }
}

/// The shape and flags alone, before anything on disk is looked at.
pub fn validate(spec: &TreeSpec) -> Result<(), UsageError> {
    let fail = |m: String| Err(UsageError(m));
    let s = spec.shape;
    if s.width == 0 {
        return fail("--width 0: a directory holds at least one directory".into());
    }
    if s.files == 0 {
        return fail("--files 0: a leaf holds at least one file".into());
    }
    if s.depth > MAX_DEPTH {
        return fail(format!("--depth {} is above {MAX_DEPTH}", s.depth));
    }
    let dirs = (1..=s.depth).try_fold(0u64, |sum, l| {
        (s.width as u64)
            .checked_pow(l)
            .and_then(|n| sum.checked_add(n))
    });
    match dirs {
        Some(d) if d <= MAX_DIRS => {}
        _ => {
            return fail(format!(
                "--depth {} x --width {} makes more than {} directories",
                s.depth,
                s.width,
                thousands(MAX_DIRS)
            ));
        }
    }
    match s.leaves().checked_mul(s.files) {
        Some(n) if n <= MAX_FILES => {}
        _ => {
            return fail(format!(
                "the tree would hold more than {} files ({} leaves x --files {})",
                thousands(MAX_FILES),
                thousands(s.leaves()),
                thousands(s.files)
            ));
        }
    }
    if spec.file_size_max > MAX_FILE_SIZE || spec.file_size_min > spec.file_size_max {
        return fail(format!(
            "--file-size {}: a size or a range LOW-HIGH up to {}",
            size_text(spec),
            format_bytes(MAX_FILE_SIZE)
        ));
    }
    let most = crate::spec::limits::MAX_NUMJOBS;
    if spec.threads == 0 || spec.threads > most {
        return fail(format!("--threads {} is outside 1 to {most}", spec.threads));
    }
    if let Some(t) = spec.phase_time_s
        && !(t > 0.0 && t.is_finite())
    {
        return fail(format!("--phase-time {t}: a time above zero"));
    }
    if spec.phases.is_empty() {
        return fail("--phases: name at least one phase".into());
    }
    if spec.drop_caches && workload::write_kernel_knob("/proc/sys/vm/drop_caches", b"").is_err() {
        return fail(
            "--drop-caches: /proc/sys/vm/drop_caches cannot be written here (it needs root)".into(),
        );
    }
    let dir = Path::new(&spec.dir);
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => fail(format!("{}: not a directory", spec.dir)),
        Err(e) => fail(format!("{}: {e}", spec.dir)),
    }
}

fn size_text(spec: &TreeSpec) -> String {
    match spec.file_size_min == spec.file_size_max {
        true => format_bytes(spec.file_size_min),
        false => format!(
            "{}-{}",
            format_bytes(spec.file_size_min),
            format_bytes(spec.file_size_max)
        ),
    }
}

/// What the phases find and leave: which of them can run on the tree as
/// it will be when they start.
fn check_phases(phases: &[TreePhase], mut marker: Option<&Marker>) -> Result<(), String> {
    let (mut dirs, mut files) = marker
        .take()
        .map_or((false, false), |m| (m.dirs_present, m.files_present));
    for &phase in phases {
        let missing = match phase {
            TreePhase::Mkdir if dirs => Some("the directories exist already"),
            TreePhase::Create if !dirs => Some("there are no directories: add mkdir"),
            TreePhase::Create if files => Some("the files exist already"),
            TreePhase::Stat | TreePhase::Read | TreePhase::Rename | TreePhase::Delete if !files => {
                Some("there are no files: add create, or keep a tree with --leave")
            }
            TreePhase::Dirstat if !dirs => Some("there are no directories: add mkdir"),
            TreePhase::Rmdir if files => Some("the files are still there: add delete"),
            TreePhase::Rmdir if !dirs => Some("there are no directories"),
            _ => None,
        };
        if let Some(why) = missing {
            return Err(format!("--phases: {phase} cannot run: {why}"));
        }
        match phase {
            TreePhase::Mkdir => dirs = true,
            TreePhase::Create => files = true,
            TreePhase::Delete => files = false,
            TreePhase::Rmdir => dirs = false,
            _ => {}
        }
    }
    Ok(())
}

/// The kept tree in DIR, if there is one: a directory of fathom's with its
/// marker; an entry by that name that is not one is refused. Rank `rank`
/// of a shared tree reads its own part of the marker.
fn kept_tree(root: &Path, rank: u32) -> Result<Option<(Marker, MadeDir)>, UsageError> {
    let err = |m: String| UsageError(format!("{}: {m}", root.display()));
    match fs::symlink_metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e.to_string())),
        Ok(m) if !m.is_dir() => {
            return Err(err(
                "exists and is not a tree of fathom's (not a directory)".into(),
            ));
        }
        Ok(_) => {}
    }
    let untrusted = |why: String| {
        err(format!(
            "is not a tree fathom can prove it made ({why}): fathom leaves it alone; remove it yourself or give another --dir"
        ))
    };
    let (main, dir) = marked::open(root, |m: &Marker| m.root).map_err(|why| match why {
        Unmarked::Missing => err("exists and is not a tree of fathom's (no marker in it)".into()),
        Unmarked::Unreadable(e) => err(format!("its marker cannot be read ({e})")),
        Unmarked::NotMadeHere(why) => untrusted(why),
    })?;
    if !main.bounded() {
        return Err(untrusted(
            "its marker's counts are beyond what fathom makes".into(),
        ));
    }
    if rank == 0 || rank >= main.ranks {
        return Ok(Some((main, dir)));
    }
    let part: Marker = marked::read(&marked::part_in(root, rank)).map_err(|e| {
        let e = match e {
            Unmarked::Unreadable(e) => e,
            _ => "no such file".into(),
        };
        err(format!(
            "its marker's part for rank {rank} cannot be read ({e}): the tree is not whole"
        ))
    })?;
    if part.root != main.root || !part.bounded() {
        return Err(untrusted(format!(
            "its marker's part for rank {rank} was not made here"
        )));
    }
    Ok(Some((part, dir)))
}

/// Refuses a tree the file system has no room for: inodes for every
/// directory and file, and blocks for their bytes.
fn check_room(spec: &TreeSpec, shape: TreeShape, phases: &[TreePhase]) -> Result<(), UsageError> {
    let dir = Path::new(&spec.dir);
    let Some(space) = crate::util::space::of(dir) else {
        return Ok(());
    };
    let mut inodes = 2;
    let mut bytes = 0u64;
    let block = space.block.max(512);
    if phases.contains(&TreePhase::Mkdir) {
        inodes += shape.dirs();
        bytes += shape.dirs() * block;
    }
    if phases.contains(&TreePhase::Create) {
        inodes += shape.total_files();
        let mean = (spec.file_size_min + spec.file_size_max) / 2;
        bytes += shape.total_files() * mean.div_ceil(block) * block;
    }
    // A file system that counts no inodes (btrfs says 0) has no limit to
    // check.
    if space.inodes > 0 && space.inodes_avail < inodes {
        return Err(UsageError(format!(
            "{}: the tree needs {} inodes and the file system has {} free",
            spec.dir,
            thousands(inodes),
            thousands(space.inodes_avail)
        )));
    }
    let free = space.free_bytes;
    if bytes > free {
        return Err(UsageError(format!(
            "{}: the tree needs about {} and the file system has {} free",
            spec.dir,
            format_bytes(bytes),
            format_bytes(free)
        )));
    }
    Ok(())
}

/// Everything checked before anything is created: the shape, the phases
/// against the tree they will find, and the room for it. Returns the
/// phases in the order they run.
pub fn check(spec: &TreeSpec, overwrite: bool) -> Result<Vec<TreePhase>, UsageError> {
    validate(spec)?;
    let mut phases = spec.phases.clone();
    phases.sort();
    phases.dedup();
    let workers = spec.workers();
    let root = layout::root_in(Path::new(&spec.dir), spec.rank, spec.shared_dir);
    // A tree that will be made again is rank 0's to replace: the others'
    // parts of its marker do not matter.
    let making = phases.contains(&TreePhase::Mkdir);
    let kept = kept_tree(&root, if making { 0 } else { workers.rank })?.map(|(m, _)| m);
    if let Some(marker) = &kept {
        if making && !overwrite {
            return Err(UsageError(format!(
                "{}: a tree of fathom's is there already (kept with --leave): run its later phases with --phases, or pass --overwrite to replace it",
                root.display()
            )));
        }
        if !making && marker.threads != spec.threads {
            return Err(UsageError(format!(
                "--threads {}: the kept tree was made by {} threads, each with its share; run it with --threads {}",
                spec.threads, marker.threads, marker.threads
            )));
        }
        if !making && marker.ranks != workers.ranks {
            return Err(UsageError(format!(
                "{}: the kept tree was made by {} rank(s) sharing it, each with its share; run it on as many with --shared-dir",
                root.display(),
                marker.ranks
            )));
        }
    }
    let finds = match making {
        true => None,
        false => kept.as_ref(),
    };
    check_phases(&phases, finds).map_err(UsageError)?;
    let shape = finds.map_or(spec.shape, |m| m.shape);
    check_room(spec, shape, &phases)?;
    Ok(phases)
}

/// The tree on disk while the run goes: what it holds (kept in its marker)
/// and, when the run ends without `--leave`, its removal.
struct Tree {
    layout: Layout,
    marker: Marker,
    workers: TreeWorkers,
    /// The tree's directory, held: what is removed is removed in it, and
    /// another directory put in its place is never touched.
    dir: MadeDir,
    leave: bool,
}

impl Tree {
    fn save(&self) -> std::io::Result<()> {
        let marker = Marker {
            root: Some(self.dir.id()),
            ..self.marker.clone()
        };
        let text = serde_json::to_string(&marker).expect("a marker serialises");
        let name = marked::part_name(self.workers.rank);
        self.dir.write_file(Path::new(&name), text.as_bytes())
    }

    /// `path`, a path the layout made, relative to the tree's directory.
    fn inside<'p>(&self, path: &'p Path) -> &'p Path {
        path.strip_prefix(&self.layout.root).unwrap_or(path)
    }

    /// Removes the files and directories the layout names, and the tree's
    /// own directory: nothing else, and nothing if the directory is not
    /// the one this run made or checked. Of a shared tree, a rank other
    /// than 0 removes its own files and its part of the marker; rank 0,
    /// once the others are done, every rank's files by their parts (what
    /// a rank that failed left) and the rest.
    fn remove(&self) {
        if !self.dir.still_there() {
            return;
        }
        if self.marker.files_present {
            self.remove_files();
        }
        if !self.workers.leads() {
            let _ = self
                .dir
                .remove_file(Path::new(&marked::part_name(self.workers.rank)));
            return;
        }
        for rank in 1..self.marker.ranks {
            if let Ok(Some((theirs, dir))) = kept_tree(&self.layout.root, rank) {
                let tree = Tree {
                    workers: theirs.workers(rank),
                    layout: Layout {
                        root: self.layout.root.clone(),
                        shape: self.layout.shape,
                    },
                    marker: theirs,
                    dir,
                    leave: true,
                };
                if tree.marker.files_present {
                    tree.remove_files();
                }
            }
            let _ = self.dir.remove_file(Path::new(&marked::part_name(rank)));
        }
        let shape = self.layout.shape;
        for level in (1..=shape.depth).rev() {
            for d in 0..shape.dirs_at(level) {
                let _ = self.dir.remove_dir(self.inside(&self.layout.dir(level, d)));
            }
        }
        let _ = self.dir.remove_file(Path::new(&marked::part_name(0)));
        if let Ok(dir) = self.dir.try_clone() {
            let _ = dir.remove();
        }
    }

    /// The seed of local thread `t`'s creation order.
    fn seed(&self, t: u32) -> u64 {
        let worker = self.workers.global(t) as u64;
        self.marker.seed ^ worker.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// Local thread `t`'s share of the files and the order it creates them
    /// in.
    fn creation(&self, t: u32) -> (std::ops::Range<u64>, Order) {
        let share = layout::share(
            self.layout.shape.total_files(),
            self.workers.global(t),
            self.workers.workers,
        );
        let order = Order::new(share.end - share.start, self.marker.random, self.seed(t));
        (share, order)
    }

    /// Removes, untimed, the files the marker says this process's threads
    /// created (by either name).
    fn remove_files(&self) {
        for t in 0..self.workers.local {
            let (share, order) = self.creation(t);
            let made = self.marker.created.get(t as usize).copied().unwrap_or(0);
            for j in 0..made.min(share.end - share.start) {
                for renamed in [false, true] {
                    let file = self.layout.file(share.start + order.at(j), renamed);
                    let _ = self.dir.remove_file(self.inside(&file));
                }
            }
        }
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if !self.leave {
            self.remove();
        }
    }
}

/// One thread's part of a phase.
struct Part {
    ops: u64,
    bytes: u64,
    elapsed: Duration,
    latency: LatencyHistogram,
}

/// What the threads of one phase (or one level of a directory phase) did.
struct Outcome {
    parts: Vec<Part>,
    /// Every thread's operations in each tenth of a second.
    intervals: Vec<Interval>,
    elapsed: Duration,
    stonewalled: bool,
    error: Option<String>,
}

/// Runs `op(thread, j)` for j in `0..counts[thread]` on one thread each,
/// all started together; every thread stops at `deadline` (from the
/// start), at a signal or at the first error of any thread.
fn run_threads(
    counts: &[u64],
    deadline: Option<Duration>,
    stop: &StopFlag,
    op: &(dyn Fn(u32, u64) -> std::io::Result<u64> + Sync),
) -> Outcome {
    let cut = AtomicBool::new(false);
    let error: Mutex<Option<String>> = Mutex::new(None);
    let start = Instant::now();
    let recorder = OpSeconds::new(counts.len(), Slicing::Adaptive, start);
    let (parts, mut series) = recorder.sampled(
        |_, _, _| {},
        |seconds| {
            std::thread::scope(|scope| {
                let handles: Vec<_> = counts
                    .iter()
                    .enumerate()
                    .map(|(t, &count)| {
                        let (cut, error) = (&cut, &error);
                        scope.spawn(move || {
                            let mut part = Part {
                                ops: 0,
                                bytes: 0,
                                elapsed: Duration::ZERO,
                                latency: LatencyHistogram::new(),
                            };
                            for j in 0..count {
                                if cut.load(Ordering::Relaxed) || stop.is_set() {
                                    break;
                                }
                                let began = Instant::now();
                                match op(t as u32, j) {
                                    Ok(bytes) => {
                                        let ended = Instant::now();
                                        let ns = (ended - began).as_nanos() as u64;
                                        part.latency.record(ns);
                                        seconds.record(t, (), ns, bytes);
                                        part.ops += 1;
                                        part.bytes += bytes;
                                        if deadline.is_some_and(|d| ended - start >= d) {
                                            cut.store(true, Ordering::Relaxed);
                                        }
                                    }
                                    Err(e) => {
                                        let mut first = error.lock().expect("not poisoned");
                                        first.get_or_insert_with(|| e.to_string());
                                        cut.store(true, Ordering::Relaxed);
                                        break;
                                    }
                                }
                            }
                            part.elapsed = start.elapsed();
                            part
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a tree thread panicked"))
                    .collect::<Vec<Part>>()
            })
        },
    );
    let elapsed = start.elapsed();
    let stonewalled = parts.iter().zip(counts).any(|(p, &c)| p.ops < c)
        && deadline.is_some_and(|d| elapsed >= d)
        && !stop.is_set();
    Outcome {
        parts,
        intervals: series.remove(&()).unwrap_or_default(),
        elapsed,
        stonewalled,
        error: error.into_inner().expect("not poisoned"),
    }
}

/// Adds one level's outcome to a directory phase's.
fn add_level(total: &mut Option<Outcome>, level: Outcome) {
    match total {
        None => *total = Some(level),
        Some(t) => {
            // A level's slices follow the levels before it.
            let offset = t.elapsed.as_secs_f64();
            t.intervals.extend(level.intervals.into_iter().map(|mut i| {
                i.t_s += offset;
                i
            }));
            for (a, b) in t.parts.iter_mut().zip(level.parts) {
                a.ops += b.ops;
                a.elapsed += b.elapsed;
                a.latency.add(&b.latency);
            }
            t.elapsed += level.elapsed;
            t.error = t.error.take().or(level.error);
        }
    }
}

fn phase_result(phase: TreePhase, planned: u64, outcome: &Outcome) -> TreePhaseResult {
    let mut all = LatencyHistogram::new();
    for p in &outcome.parts {
        all.add(&p.latency);
    }
    let ops: u64 = outcome.parts.iter().map(|p| p.ops).sum();
    let elapsed_s = outcome.elapsed.as_secs_f64();
    let most = outcome.parts.iter().map(|p| p.ops).max().unwrap_or(0);
    let least = outcome.parts.iter().map(|p| p.ops).min().unwrap_or(0);
    TreePhaseResult {
        phase,
        ops,
        planned,
        elapsed_s,
        ops_per_s: crate::measure::per_second(ops, elapsed_s),
        bytes: outcome.parts.iter().map(|p| p.bytes).sum(),
        lat_ns: all.summary(),
        histogram: all.encode(),
        threads: outcome
            .parts
            .iter()
            .map(|p| ThreadOps {
                rank: None,
                ops: p.ops,
                elapsed_s: p.elapsed.as_secs_f64(),
                lat_ns: p.latency.summary(),
                histogram: p.latency.encode(),
            })
            .collect(),
        stonewalled: outcome.stonewalled,
        behind: if outcome.stonewalled { most - least } else { 0 },
        intervals: outcome.intervals.clone(),
    }
}

/// The bytes of file `item`: from the spec's range, drawn from the seed.
fn file_size(marker: &Marker, item: u64) -> u64 {
    let span = marker.file_size_max - marker.file_size_min;
    match span {
        0 => marker.file_size_min,
        _ => marker.file_size_min + layout::splitmix(marker.seed ^ item) % (span + 1),
    }
}

fn free_inodes(dir: &Path) -> Option<u64> {
    crate::util::space::of(dir)
        .filter(|s| s.inodes > 0)
        .map(|s| s.inodes_free)
}

/// The tree a run works on: one kept by an earlier run (it stays kept), a
/// new one made under `root` (replacing a kept one with `overwrite`), or
/// under a shared tree of MPI ranks, the one rank 0 made.
fn open_tree(
    spec: &TreeSpec,
    workers: crate::spec::tree::TreeWorkers,
    root: std::path::PathBuf,
    making: bool,
    overwrite: bool,
) -> anyhow::Result<Tree> {
    let kept = kept_tree(&root, if making { 0 } else { workers.rank })?;
    let fresh = |dir: MadeDir, root: std::path::PathBuf| Tree {
        dir,
        layout: Layout {
            root,
            shape: spec.shape,
        },
        marker: Marker {
            shape: spec.shape,
            threads: spec.threads,
            ranks: workers.ranks,
            seed: spec.seed,
            random: spec.random,
            file_size_min: spec.file_size_min,
            file_size_max: spec.file_size_max,
            created: vec![0; spec.threads as usize],
            dirs_present: false,
            files_present: false,
            renamed: false,
            root: None,
        },
        workers,
        leave: spec.leave,
    };
    let tree = match (kept, making) {
        // A tree kept by an earlier run stays kept: it was not this run's
        // to remove, unless its own rmdir phase empties it.
        (Some((marker, dir)), false) => Tree {
            layout: Layout {
                root,
                shape: marker.shape,
            },
            marker,
            workers,
            dir,
            leave: true,
        },
        (Some((_, dir)), true) if !workers.leads() => {
            // Rank 0 made the tree and its marker, which named it.
            let tree = fresh(dir, root);
            tree.save()?;
            tree
        }
        (None, true) if !workers.leads() => {
            anyhow::bail!("{}: rank 0's tree is not there", root.display());
        }
        (kept, _) => {
            if let Some((marker, dir)) = kept.filter(|_| overwrite) {
                // --overwrite: the old tree goes, by its own layout.
                let old = Tree {
                    layout: Layout {
                        root: root.clone(),
                        shape: marker.shape,
                    },
                    workers: marker.workers(0),
                    marker,
                    dir,
                    leave: false,
                };
                drop(old);
                if root.exists() {
                    anyhow::bail!(
                        "{}: the old tree could not be removed whole (something else is in it)",
                        root.display()
                    );
                }
            }
            let dir = MadeDir::make(&root)
                .map_err(|e| anyhow::anyhow!("{}: cannot make the tree ({e})", root.display()))?;
            let tree = fresh(dir, root);
            tree.save()?;
            tree
        }
    };
    Ok(tree)
}

/// Runs the phases `check` returned on the tree in `spec.dir`.
/// `meet(ok)` is the ranks' barrier under `--mpi` (None alone): whether
/// every rank is fine. It is called before each phase, and of a shared
/// tree also once the tree is there, after each level of a directory
/// phase, at the end of each phase and before the tree is removed; when
/// it says another rank failed, the run stops there.
pub fn run(
    spec: &TreeSpec,
    phases: &[TreePhase],
    overwrite: bool,
    stop: &StopFlag,
    board: Option<&crate::measure::live::LiveBoard>,
    meet: Option<&dyn Fn(bool) -> bool>,
) -> anyhow::Result<TreeResult> {
    let meet = |ok: bool| meet.is_none_or(|meet| meet(ok));
    let workers = spec.workers();
    let shared = workers.shared();
    let dir = Path::new(&spec.dir);
    let root = layout::root_in(dir, spec.rank, spec.shared_dir);
    let making = phases.contains(&TreePhase::Mkdir);
    let before = free_inodes(dir);
    // A shared tree is made (or replaced) by rank 0 alone; the others take
    // it once it is there.
    if shared && !workers.leads() && !meet(true) {
        anyhow::bail!("another rank failed before the tree was made");
    }
    let mut tree = open_tree(spec, workers, root, making, overwrite)?;
    if shared && workers.leads() && !meet(true) {
        anyhow::bail!("another rank failed before the tree was made");
    }
    let mut result = result_of(spec, &tree);
    let deadline = spec.phase_time_s.map(Duration::from_secs_f64);
    let threads = tree.workers.local;
    let shape = tree.layout.shape;
    let biggest = tree.marker.file_size_max as usize;
    let payload = vec![0x5a_u8; biggest];
    for (i, &phase) in phases.iter().enumerate() {
        if stop.is_set() {
            break;
        }
        if !meet(true) {
            result.failure = Some(format!("{phase}: another rank failed"));
            break;
        }
        if result.started_unix_s.is_none() {
            result.started_unix_s = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs_f64());
        }
        if spec.drop_caches {
            drop_caches()?;
        }
        if let Some(board) = board {
            board.workload("tree");
            board.phase(
                format!("tree {phase}"),
                Some((i as u64, phases.len() as u64)),
            );
        }
        if !phase.on_files() && shape.depth == 0 {
            // A tree of one directory: no directories of its own to make
            // or remove, and nothing to report.
            tree.marker.dirs_present = phase == TreePhase::Mkdir;
            if tree.marker.dirs_present {
                tree.save()?;
            }
            continue;
        }
        let (planned, mut outcome) = match phase {
            TreePhase::Mkdir | TreePhase::Dirstat | TreePhase::Rmdir => {
                directory_phase(&tree, phase, stop, &meet)
            }
            _ => file_phase(&mut tree, phase, spec, deadline, &payload, stop),
        };
        // A shared tree's phase ends when every rank's part of it has.
        if shared && outcome.error.is_none() && !meet(!stop.is_set()) && !stop.is_set() {
            outcome.error = Some("another rank failed".into());
        }
        match phase {
            TreePhase::Mkdir => tree.marker.dirs_present = true,
            TreePhase::Rename => tree.marker.renamed = true,
            TreePhase::Delete => {
                // Files a cut delete left are removed untimed, so that the
                // directories can go.
                let left = outcome
                    .parts
                    .iter()
                    .zip(&tree.marker.created)
                    .any(|(p, &c)| p.ops < c);
                if left {
                    tree.remove_files();
                }
                tree.marker.files_present = false;
                tree.marker.renamed = false;
                tree.marker.created = vec![0; threads as usize];
            }
            TreePhase::Rmdir => tree.marker.dirs_present = false,
            _ => {}
        }
        if phase == TreePhase::Create && workers.leads() {
            result.inodes_used = before
                .zip(free_inodes(dir))
                .map(|(b, a)| b.saturating_sub(a));
            // What the tree itself made (its directory and marker, its
            // directories, its files): the file system's count moves with
            // other processes' files too.
            let dirs: u64 = (1..=shape.depth).map(|l| shape.dirs_at(l)).sum();
            result.inodes_made = (!shared && result.inodes_used.is_some())
                .then(|| 2 + dirs + tree.marker.created.iter().sum::<u64>());
            result.leaf_dir_bytes = fs::metadata(tree.layout.leaf(0)).ok().map(|m| m.len());
        }
        let error = outcome.error.clone();
        result.phases.push(phase_result(phase, planned, &outcome));
        if phase != TreePhase::Rmdir || tree.marker.dirs_present {
            tree.save()?;
        }
        if let Some(e) = error {
            result.failure = Some(format!("{phase}: {e}"));
            tree.leave = false;
            break;
        }
    }
    result.interrupted = stop.is_set();
    if !tree.marker.dirs_present {
        // Every directory is gone: there is nothing to keep but the
        // marker, and it goes with the tree's own directory.
        tree.leave = false;
    }
    result.kept = tree.leave;
    if shared {
        // Every rank removes its own files and its part of the marker;
        // rank 0 the rest once all have.
        if !tree.leave && !workers.leads() {
            tree.remove();
            tree.marker.files_present = false;
        }
        meet(result.failure.is_none() && !result.interrupted);
    }
    drop(tree);
    Ok(result)
}

/// The result of a run on `tree` before its phases: the tree's own shape
/// and settings (a kept tree's, which may differ from the flags').
fn result_of(spec: &TreeSpec, tree: &Tree) -> TreeResult {
    TreeResult {
        spec: TreeSpec {
            shape: tree.marker.shape,
            threads: tree.marker.threads,
            seed: tree.marker.seed,
            random: tree.marker.random,
            file_size_min: tree.marker.file_size_min,
            file_size_max: tree.marker.file_size_max,
            ..spec.clone()
        },
        filesystem: crate::measure::facts::mount_of(&tree.layout.root).map(|(fs, _)| fs),
        phases: Vec::new(),
        inodes_used: None,
        inodes_made: None,
        leaf_dir_bytes: None,
        kept: false,
        started_unix_s: None,
        failure: None,
        interrupted: false,
    }
}

/// A directory phase (mkdir, dirstat, rmdir), level by level: the ops
/// planned and how they went. The ranks sharing a tree meet after each
/// level.
fn directory_phase(
    tree: &Tree,
    phase: TreePhase,
    stop: &StopFlag,
    meet: &dyn Fn(bool) -> bool,
) -> (u64, Outcome) {
    let (shape, workers) = (tree.layout.shape, tree.workers);
    let (threads, shared) = (workers.local, workers.shared());
    let levels: Vec<u32> = match phase {
        TreePhase::Mkdir | TreePhase::Dirstat => (1..=shape.depth).collect(),
        _ => (1..=shape.depth).rev().collect(),
    };
    let mut total: Option<Outcome> = None;
    let mut planned = 0;
    for level in levels {
        let n = shape.dirs_at(level);
        let share = |t: u32| layout::share(n, workers.global(t), workers.workers);
        let counts: Vec<u64> = (0..threads)
            .map(|t| share(t).end - share(t).start)
            .collect();
        planned += counts.iter().sum::<u64>();
        let layout = &tree.layout;
        let dirs = workload::WorkDirs::new(&tree.dir, threads);
        let op = |t: u32, j: u64| -> std::io::Result<u64> {
            let index = share(t).start + j;
            let (parent, name) = layout.parent_of_dir(level, index);
            dirs.with(
                t,
                parent,
                || layout.dir_below(parent.0, parent.1),
                |p| match phase {
                    TreePhase::Mkdir => p.make_dir(&name),
                    TreePhase::Dirstat => p.stat(&name),
                    _ => p.remove_dir(&name),
                },
            )
            .map(|()| 0)
            .map_err(|e| named(&layout.dir(level, index), e))
        };
        let outcome = run_threads(&counts, None, stop, &op);
        let failed = outcome.error.is_some() || stop.is_set();
        add_level(&mut total, outcome);
        // The ranks sharing a tree work on a level once every
        // rank has finished the one it stands on.
        if shared && !meet(!failed) && !failed {
            if let Some(t) = total.as_mut() {
                t.error = Some("another rank failed".into());
            }
            break;
        }
        if failed {
            break;
        }
    }
    // A tree of one directory skipped its directory phases
    // above: here there is at least one level.
    let total = total.expect("a directory phase has a level");
    (planned, total)
}

/// A file phase (create, stat, read, rename, delete): the ops planned and
/// how they went; creating records what each thread made in the marker.
fn file_phase(
    tree: &mut Tree,
    phase: TreePhase,
    spec: &TreeSpec,
    deadline: Option<Duration>,
    payload: &[u8],
    stop: &StopFlag,
) -> (u64, Outcome) {
    let threads = tree.workers.local;
    let shares: Vec<std::ops::Range<u64>> = (0..threads).map(|t| tree.creation(t).0).collect();
    let creating = phase == TreePhase::Create;
    let counts: Vec<u64> = match creating {
        true => shares.iter().map(|s| s.end - s.start).collect(),
        false => tree.marker.created.clone(),
    };
    let create_orders: Vec<Order> = (0..threads).map(|t| tree.creation(t).1).collect();
    let visits: Vec<Order> = (0..threads)
        .map(|t| match creating {
            true => Order::AsMade,
            false => Order::new(
                counts[t as usize],
                tree.marker.random,
                tree.seed(t) ^ (phase as u64 + 1).wrapping_mul(0xff51_afd7_ed55_8ccd),
            ),
        })
        .collect();
    let (layout, marker) = (&tree.layout, &tree.marker);
    let renamed = marker.renamed;
    let dirs = workload::WorkDirs::new(&tree.dir, threads);
    let op = |t: u32, j: u64| -> std::io::Result<u64> {
        let item =
            shares[t as usize].start + create_orders[t as usize].at(visits[t as usize].at(j));
        let files = layout.shape.files.max(1);
        let name = layout::file_name(item % files, renamed);
        let leaf = layout.leaf_dir(layout.leaf_of(item));
        let done = dirs.with(
            t,
            leaf,
            || layout.dir_below(leaf.0, leaf.1),
            |d| match phase {
                TreePhase::Create => {
                    let size = file_size(marker, item) as usize;
                    d.new_file(&name).and_then(|mut f| {
                        f.write_all(&payload[..size])?;
                        if spec.fsync == TreeSync::File {
                            f.sync_all()?;
                        }
                        Ok(size as u64)
                    })
                }
                TreePhase::Stat => d.stat(&name).map(|()| 0),
                TreePhase::Read => d.open_file(&name).and_then(|mut f| {
                    let mut buf = [0u8; 64 << 10];
                    let mut read = 0u64;
                    loop {
                        match f.read(&mut buf)? {
                            0 => return Ok(read),
                            n => read += n as u64,
                        }
                    }
                }),
                TreePhase::Rename => d
                    .rename(&name, &layout::file_name(item % files, true))
                    .map(|()| 0),
                _ => d.remove_file(&name).map(|()| 0),
            },
        );
        done.map_err(|e| named(&layout.file(item, renamed), e))
    };
    // Renaming is not cut short: the files after it are known
    // by one name each.
    let cut = deadline.filter(|_| phase != TreePhase::Rename);
    let mut outcome = run_threads(&counts, cut, stop, &op);
    if creating {
        tree.marker.created = outcome.parts.iter().map(|p| p.ops).collect();
        tree.marker.files_present = true;
        if spec.fsync == TreeSync::Dir {
            let started = Instant::now();
            sync_leaves(tree, &shares);
            outcome.elapsed += started.elapsed();
        }
    }
    (counts.iter().sum(), outcome)
}

/// `e`, naming the path it happened on.
fn named(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Writes back and drops the kernel's clean caches (pages, dentries and
/// inodes), so that the next phase finds nothing cached.
fn drop_caches() -> anyhow::Result<()> {
    sync_all_file_systems();
    workload::write_kernel_knob("/proc/sys/vm/drop_caches", b"3").map_err(|e| {
        anyhow::anyhow!("--drop-caches: cannot write /proc/sys/vm/drop_caches ({e}): it needs root")
    })
}

fn sync_all_file_systems() {
    // SAFETY: sync(2) takes nothing and cannot fail.
    unsafe { libc::sync() };
}

/// `--fsync dir`: each leaf that got files, made durable once.
fn sync_leaves(tree: &Tree, shares: &[std::ops::Range<u64>]) {
    let mut leaves: Vec<u64> = Vec::new();
    for (t, share) in shares.iter().enumerate() {
        if tree.marker.created.get(t).copied().unwrap_or(0) == 0 {
            continue;
        }
        let (first, last) = (
            tree.layout.leaf_of(share.start),
            tree.layout.leaf_of(share.end.saturating_sub(1)),
        );
        leaves.extend(first..=last);
    }
    leaves.dedup();
    for leaf in leaves {
        let (level, index) = tree.layout.leaf_dir(leaf);
        if let Ok(d) = workload::WorkDir::below(&tree.dir, &tree.layout.dir_below(level, index)) {
            let _ = d.sync();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path) -> TreeSpec {
        TreeSpec {
            dir: dir.to_str().unwrap().into(),
            shape: TreeShape {
                depth: 2,
                width: 3,
                files: 5,
            },
            file_size_min: 0,
            file_size_max: 100,
            fsync: TreeSync::None,
            phases: TreePhase::ALL.to_vec(),
            threads: 2,
            phase_time_s: None,
            random: true,
            leave: false,
            drop_caches: false,
            rank: None,
            ranks: None,
            shared_dir: false,
            seed: 1,
            fio: None,
        }
    }

    #[test]
    fn every_phase_does_every_item_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let s = spec(dir.path());
        let phases = check(&s, false).unwrap();
        let r = run(&s, &phases, false, &StopFlag::default(), None, None).unwrap();
        let ops: Vec<(TreePhase, u64)> = r.phases.iter().map(|p| (p.phase, p.ops)).collect();
        assert_eq!(
            ops,
            [
                (TreePhase::Mkdir, 12),
                (TreePhase::Dirstat, 12),
                (TreePhase::Create, 45),
                (TreePhase::Stat, 45),
                (TreePhase::Read, 45),
                (TreePhase::Rename, 45),
                (TreePhase::Delete, 45),
                (TreePhase::Rmdir, 12),
            ]
        );
        let read = r.phase(TreePhase::Read).unwrap();
        assert_eq!(read.bytes, r.phase(TreePhase::Create).unwrap().bytes);
        assert_eq!(read.threads.len(), 2);
        assert!(r.failure.is_none() && !r.kept);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn phases_that_cannot_run_on_what_they_find_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path());
        s.phases = vec![TreePhase::Stat];
        assert!(check(&s, false).unwrap_err().0.contains("no files"));
        s.phases = vec![TreePhase::Mkdir, TreePhase::Create, TreePhase::Rmdir];
        assert!(check(&s, false).unwrap_err().0.contains("add delete"));
        s.shape.width = 0;
        assert!(check(&s, false).unwrap_err().0.contains("--width 0"));
    }

    #[test]
    fn a_kept_tree_is_run_later_and_not_replaced_without_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path());
        s.phases = vec![TreePhase::Mkdir, TreePhase::Create];
        s.leave = true;
        let phases = check(&s, false).unwrap();
        let first = run(&s, &phases, false, &StopFlag::default(), None, None).unwrap();
        assert!(first.kept);
        assert!(check(&s, false).unwrap_err().0.contains("--overwrite"));
        s.phases = vec![TreePhase::Stat, TreePhase::Delete, TreePhase::Rmdir];
        s.leave = false;
        let phases = check(&s, false).unwrap();
        let later = run(&s, &phases, false, &StopFlag::default(), None, None).unwrap();
        assert_eq!(later.phase(TreePhase::Stat).unwrap().ops, 45);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        // A directory of that name that is not fathom's is never taken.
        fs::create_dir(dir.path().join("fathom-tree")).unwrap();
        s.phases = TreePhase::ALL.to_vec();
        assert!(
            check(&s, true)
                .unwrap_err()
                .0
                .contains("not a tree of fathom's")
        );
    }

    #[test]
    fn a_stonewalled_create_ends_every_thread_and_later_phases_use_what_was_made() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path());
        s.shape = TreeShape {
            depth: 1,
            width: 4,
            files: 200_000,
        };
        s.file_size_max = 0;
        s.phase_time_s = Some(0.05);
        let phases = check(&s, false).unwrap();
        let r = run(&s, &phases, false, &StopFlag::default(), None, None).unwrap();
        let create = r.phase(TreePhase::Create).unwrap();
        assert!(create.stonewalled, "{create:?}");
        assert!(create.ops < create.planned);
        let made: u64 = create.threads.iter().map(|t| t.ops).sum();
        assert_eq!(made, create.ops);
        // A stat phase no longer than create's sees every file create made
        // only if it is not cut itself; it never sees more.
        let stat = r.phase(TreePhase::Stat).unwrap();
        assert_eq!(stat.planned, create.ops);
        assert!(stat.ops <= create.ops);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Ranks' votes within one process, for two "ranks" on threads: a
    /// barrier that says whether every one said yes (the happy path only).
    struct Votes {
        barrier: std::sync::Barrier,
        ok: Mutex<bool>,
    }

    impl Votes {
        fn vote(&self, ok: bool) -> bool {
            if !ok {
                *self.ok.lock().unwrap() = false;
            }
            self.barrier.wait();
            let all = *self.ok.lock().unwrap();
            self.barrier.wait();
            all
        }
    }

    fn shared_run(s: &TreeSpec, ranks: u32) -> Vec<TreeResult> {
        let votes = Votes {
            barrier: std::sync::Barrier::new(ranks as usize),
            ok: Mutex::new(true),
        };
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..ranks)
                .map(|rank| {
                    let votes = &votes;
                    let mut s = s.clone();
                    s.rank = Some(rank);
                    s.ranks = Some(ranks);
                    s.shared_dir = true;
                    scope.spawn(move || {
                        let phases = check(&s, false).unwrap();
                        // Every rank checks before any makes something.
                        votes.vote(true);
                        let meet = |ok: bool| votes.vote(ok);
                        run(&s, &phases, false, &StopFlag::default(), None, Some(&meet)).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn ranks_sharing_a_tree_each_do_their_share_and_rank_0_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path());
        s.phases = vec![TreePhase::Mkdir, TreePhase::Create];
        s.leave = true;
        let made = shared_run(&s, 3);
        let ops = |rs: &[TreeResult], phase| -> Vec<u64> {
            rs.iter().map(|r| r.phase(phase).unwrap().ops).collect()
        };
        // 12 directories and 45 files over 3 ranks x 2 threads.
        assert_eq!(ops(&made, TreePhase::Mkdir).iter().sum::<u64>(), 12);
        assert_eq!(ops(&made, TreePhase::Create), [15, 15, 15]);
        let files = walkdir(&dir.path().join("fathom-tree"));
        assert_eq!(files.iter().filter(|p| p.is_file()).count(), 45 + 3);
        assert!(made.iter().all(|r| r.kept));
        assert_eq!(made.iter().filter(|r| r.inodes_used.is_some()).count(), 1);
        // The kept tree's later phases: the same ranks, each its own files;
        // with other ranks it is refused.
        s.phases = vec![TreePhase::Stat, TreePhase::Delete, TreePhase::Rmdir];
        s.leave = false;
        let mut two = s.clone();
        (two.rank, two.ranks, two.shared_dir) = (Some(0), Some(2), true);
        assert!(check(&two, false).unwrap_err().0.contains("3 rank(s)"));
        let later = shared_run(&s, 3);
        assert_eq!(ops(&later, TreePhase::Stat), [15, 15, 15]);
        assert_eq!(ops(&later, TreePhase::Rmdir).iter().sum::<u64>(), 12);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    fn walkdir(root: &Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in fs::read_dir(root).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(walkdir(&p));
            }
            out.push(p);
        }
        out
    }
}
