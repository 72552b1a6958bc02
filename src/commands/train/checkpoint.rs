//! Checkpoints: every rank writes its share of a model's checkpoint (a
//! model-state file and an optimizer-state file, each made durable with
//! fsync), all ranks at once; the checkpoints are then read back, after
//! their pages are dropped from the cache. They live in
//! `DIR/fathom-checkpoint`, marked as fathom's as a dataset is, and only
//! the names this layout makes are ever removed.

use crate::gate::remove::{DirId, MadeDir};
use crate::gate::workload::{self, WorkDir};
use crate::measure::histogram::LatencyHistogram;
use crate::result::train::{CheckpointPhase, Relaunch, Tails};
use crate::spec::train::{CheckpointModel, CheckpointSpec};
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use crate::util::units::format_bytes;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::dataset::{MARKER, held_work};
/// Bytes written or read in one call.
const CHUNK: usize = 1 << 20;
/// Random bytes every rank writes from, each chunk from a place of its
/// own, so that no two chunks of a checkpoint share their blocks (an
/// array that deduplicates would otherwise store one).
const POOL: usize = 8 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Marker {
    model: CheckpointModel,
    ranks: u32,
    checkpoint_bytes: u64,
    /// Checkpoints whole on disk.
    written: u32,
    /// When the last of them was whole, in seconds since the epoch: a
    /// read-back launched apart measures its gap from it (Rules 4.7.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    written_end_unix_s: Option<f64>,
    root: DirId,
}

pub fn root_in(dir: &Path) -> PathBuf {
    dir.join("fathom-checkpoint")
}

fn file_name(checkpoint: u32, rank: u32, part: &str) -> String {
    format!("global_step{checkpoint}_rank{rank:04}_{part}.pt")
}

/// The checkpoints' directory while the run goes.
pub struct Checkpoints {
    spec: CheckpointSpec,
    dir: MadeDir,
    /// `dir` held open: every checkpoint file is made and read in it by
    /// name, never through a path walked again.
    work: WorkDir,
    root: PathBuf,
    written: u32,
    written_end_unix_s: Option<f64>,
}

/// Checks DIR for a run: a directory of checkpoints there must be
/// fathom's; one kept by an earlier run is read back (`--writes 0`) or,
/// with `--overwrite`, replaced. Also checks the room for what is written.
pub fn check(spec: &CheckpointSpec, overwrite: bool) -> Result<(), UsageError> {
    let root = root_in(Path::new(&spec.dir));
    let kept = kept(&root)?.map(|(m, _)| m);
    match (&kept, spec.writes) {
        (Some(m), 0) if m.written == 0 || !same_shape(m, spec) => {
            return Err(UsageError(format!(
                "{}: holds no checkpoint of this shape to read back: write one first (--writes 1 --keep)",
                root.display()
            )));
        }
        (None, 0) => {
            return Err(UsageError(format!(
                "--writes 0: nothing to read back in {} (write a checkpoint first with --keep)",
                spec.dir
            )));
        }
        (Some(_), w) if w > 0 && !overwrite => {
            return Err(UsageError(format!(
                "{}: checkpoints of fathom's are there already (kept with --keep): read them with --writes 0, or pass --overwrite to replace them",
                root.display()
            )));
        }
        _ => {}
    }
    let need = spec.bytes() * u64::from(spec.writes);
    if let Some(space) = crate::util::space::of(Path::new(&spec.dir))
        && need > space.free_bytes
    {
        return Err(UsageError(format!(
            "{}: {} checkpoint(s) of {} need {} and the file system has {} free: pass --checkpoint-size to scale them down",
            spec.dir,
            spec.writes,
            format_bytes(spec.bytes()),
            format_bytes(need),
            format_bytes(space.free_bytes)
        )));
    }
    Ok(())
}

fn same_shape(m: &Marker, spec: &CheckpointSpec) -> bool {
    m.model == spec.model && m.ranks == spec.ranks && m.checkpoint_bytes == spec.checkpoint_bytes
}

/// The checkpoints' directory kept by an earlier run, held, if there is
/// one.
fn kept(root: &Path) -> Result<Option<(Marker, MadeDir)>, UsageError> {
    match std::fs::symlink_metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(UsageError(format!("{}: {e}", root.display()))),
        Ok(_) => super::dataset::read_marked(root, |m: &Marker| m.root).map(Some),
    }
}

impl Checkpoints {
    /// Makes the directory, or (after `check`) holds the kept one: read
    /// back as it is, or emptied to be written again.
    pub fn open(spec: &CheckpointSpec) -> anyhow::Result<Checkpoints> {
        let root = root_in(Path::new(&spec.dir));
        if let Some((marker, dir)) = kept(&root)? {
            let mut found = Checkpoints {
                spec: CheckpointSpec {
                    model: marker.model,
                    ranks: marker.ranks,
                    checkpoint_bytes: marker.checkpoint_bytes,
                    ..spec.clone()
                },
                work: held_work(&dir, &root)?,
                dir,
                root,
                written: marker.written,
                written_end_unix_s: marker.written_end_unix_s,
            };
            if spec.writes > 0 {
                found.remove_files();
                found.spec = spec.clone();
                found.written = 0;
                found.written_end_unix_s = None;
            } else {
                // Read back, not written: what was kept stays kept.
                found.spec.keep = true;
            }
            found.save()?;
            return Ok(found);
        }
        let dir = MadeDir::make(&root)
            .map_err(|e| anyhow::anyhow!("{}: cannot be made: {e}", root.display()))?;
        let made = Checkpoints {
            spec: spec.clone(),
            work: held_work(&dir, &root)?,
            dir,
            root,
            written: 0,
            written_end_unix_s: None,
        };
        made.save()?;
        Ok(made)
    }

    fn save(&self) -> anyhow::Result<()> {
        let marker = Marker {
            model: self.spec.model,
            ranks: self.spec.ranks,
            checkpoint_bytes: self.spec.checkpoint_bytes,
            written: self.written,
            written_end_unix_s: self.written_end_unix_s,
            root: self.dir.id(),
        };
        self.dir
            .write_file(
                Path::new(MARKER),
                serde_json::to_string(&marker)?.as_bytes(),
            )
            .map_err(|e| anyhow::anyhow!("{}: the marker: {e}", self.root.display()))
    }

    /// Writes checkpoint after checkpoint, `interval` apart.
    pub fn write_all(&mut self, stop: &StopFlag) -> (Option<CheckpointPhase>, Option<String>) {
        let mut phase = Timing::default();
        for c in 0..self.spec.writes {
            if c > 0 && pause(self.spec.interval_s, stop) {
                break;
            }
            match self.one(c, true, stop) {
                Ok(Some(t)) => {
                    self.written = c + 1;
                    self.written_end_unix_s = crate::util::unix_now_s();
                    phase.add(t);
                    if let Err(e) = self.save() {
                        return (phase.result(&self.spec), Some(e.to_string()));
                    }
                }
                Ok(None) => break,
                Err(e) => return (phase.result(&self.spec), Some(e)),
            }
        }
        (phase.result(&self.spec), None)
    }

    /// For a read-back of kept checkpoints (nothing written by this run):
    /// how long after their writing ended this process was launched.
    pub fn relaunch(&self) -> Option<Relaunch> {
        if self.spec.writes > 0 {
            return None;
        }
        let gap_s = crate::measure::facts::process_started_unix_s()? - self.written_end_unix_s?;
        // The kernel keeps a process's start in clock ticks (10 ms), cut
        // down: a read launched as the write ended can seem to start a
        // tick before it. Only a gap past that is the clocks' disagreeing.
        const START_RESOLUTION_S: f64 = 0.02;
        let gap_s = match gap_s {
            g if (-START_RESOLUTION_S..0.0).contains(&g) => 0.0,
            g => g,
        };
        Some(Relaunch {
            gap_s,
            limit_s: self.spec.mlperf_version.relaunch_limit_s(),
        })
    }

    /// Drops the checkpoints' own cached pages, each file synced first
    /// (a `--no-fsync` checkpoint's pages are still dirty, and a dirty
    /// page is not dropped): never the host's whole cache, which on a
    /// database host is the database's. Says what was done.
    pub fn drop_cached(&self) -> String {
        let mut unsynced = 0u64;
        for c in 0..self.written {
            for r in 0..self.spec.ranks {
                for (part, _) in self.spec.rank_files() {
                    if let Ok(f) = self.work.read_file(&file_name(c, r, part), false) {
                        if f.sync_data().is_err() {
                            unsynced += 1;
                        }
                        workload::drop_cached_pages(&f);
                    }
                }
            }
        }
        match unsynced {
            0 => "each file synced and its pages dropped (posix_fadvise; tmpfs keeps them)".into(),
            n => format!(
                "each file's pages dropped (posix_fadvise; tmpfs keeps them), but {n} could not be synced: their dirty pages stayed cached"
            ),
        }
    }

    /// Reads the written checkpoints back, the first again after the last.
    pub fn read_all(&self, stop: &StopFlag) -> (Option<CheckpointPhase>, Option<String>) {
        let mut phase = Timing::default();
        for c in 0..self.spec.reads {
            if self.written == 0 {
                break;
            }
            match self.one(c % self.written, false, stop) {
                Ok(Some(t)) => phase.add(t),
                Ok(None) => break,
                Err(e) => return (phase.result(&self.spec), Some(e)),
            }
        }
        (phase.result(&self.spec), None)
    }

    /// One checkpoint written or read by every rank at once: its time and
    /// each file's; None when a signal cut it.
    fn one(&self, c: u32, write: bool, stop: &StopFlag) -> Result<Option<Taken>, String> {
        let pool = write.then(|| {
            let mut pool = vec![0u8; POOL];
            rand::rngs::SmallRng::seed_from_u64(u64::from(c)).fill_bytes(&mut pool);
            pool
        });
        let began = Instant::now();
        let results: Vec<Result<LatencyHistogram, String>> = std::thread::scope(|s| {
            let pool = pool.as_deref();
            let handles: Vec<_> = (0..self.spec.ranks)
                .map(|r| s.spawn(move || self.rank(c, r, pool, stop)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a rank's thread"))
                .collect()
        });
        let took = began.elapsed();
        let mut files = LatencyHistogram::new();
        for r in results {
            files.add(&r?);
        }
        if stop.is_set() {
            return Ok(None);
        }
        Ok(Some(Taken { took, files }))
    }

    /// Rank `r`'s files of checkpoint `c`: written from `pool`, or read
    /// when there is none.
    fn rank(
        &self,
        c: u32,
        r: u32,
        pool: Option<&[u8]>,
        stop: &StopFlag,
    ) -> Result<LatencyHistogram, String> {
        let mut files = LatencyHistogram::new();
        let mut at = (r as usize).wrapping_mul(4099) % (POOL - CHUNK);
        for (part, bytes) in self.spec.rank_files() {
            if stop.is_set() {
                break;
            }
            let name = file_name(c, r, part);
            let path = self.root.join(&name);
            let named = |e: std::io::Error| format!("{}: {e}", path.display());
            let began = Instant::now();
            if let Some(pool) = pool {
                let mut f = self.work.new_file(&name).map_err(named)?;
                let mut left = bytes;
                while left > 0 && !stop.is_set() {
                    let n = left.min(CHUNK as u64) as usize;
                    f.write_all(&pool[at..at + n]).map_err(named)?;
                    left -= n as u64;
                    at = (at + 4099 * 7) % (POOL - CHUNK);
                }
                if self.spec.fsync {
                    f.sync_all().map_err(named)?;
                }
            } else {
                let mut buffer = vec![0u8; CHUNK];
                let mut f = self.work.read_file(&name, false).map_err(named)?;
                loop {
                    let n = f.read(&mut buffer).map_err(named)?;
                    if n == 0 || stop.is_set() {
                        break;
                    }
                }
            }
            files.record(began.elapsed().as_nanos() as u64);
        }
        Ok(files)
    }

    fn remove_files(&self) {
        for c in 0..self.written.max(self.spec.writes) {
            for r in 0..self.spec.ranks {
                for (part, _) in self.spec.rank_files() {
                    let _ = self.dir.remove_file(Path::new(&file_name(c, r, part)));
                }
            }
        }
    }
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        if self.spec.keep || !self.dir.still_there() {
            return;
        }
        self.remove_files();
        let _ = self.dir.remove_file(Path::new(MARKER));
        if let Ok(dir) = self.dir.try_clone() {
            let _ = dir.remove();
        }
    }
}

/// Sleeps `seconds`, waking for a signal: whether one came.
fn pause(seconds: f64, stop: &StopFlag) -> bool {
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < until {
        if stop.is_set() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
    stop.is_set()
}

struct Taken {
    took: Duration,
    files: LatencyHistogram,
}

#[derive(Default)]
struct Timing {
    seconds: Vec<f64>,
    files: LatencyHistogram,
}

impl Timing {
    fn add(&mut self, t: Taken) {
        self.seconds.push(t.took.as_secs_f64());
        self.files.add(&t.files);
    }

    fn result(&self, spec: &CheckpointSpec) -> Option<CheckpointPhase> {
        if self.seconds.is_empty() {
            return None;
        }
        let total: f64 = self.seconds.iter().sum();
        let n = self.seconds.len();
        Some(CheckpointPhase {
            checkpoints: n as u32,
            bytes: spec.bytes(),
            mean_s: total / n as f64,
            bytes_per_s: spec.bytes() as f64 * n as f64 / total.max(1e-9),
            seconds: self.seconds.clone(),
            file: Tails::of(&self.files),
            files: self.files.count(),
        })
    }
}
