//! A training dataset on disk: `DIR/fathom-train`, marked as fathom's by
//! a file naming the directory's device and inode and the dataset's
//! shape, so that a later run can use it again and nothing but what the
//! layout names is ever removed (through the held directory,
//! `gate::remove::MadeDir`). Each file's size is drawn from the seed, so
//! the layout is computed, never listed.

use crate::gate::marked::{self, Unmarked};
use crate::gate::remove::{DirId, MadeDir};
use crate::gate::workload::{self, WorkDir};
use crate::spec::train::{SampleFormat, TrainingModel, TrainingShape};
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use crate::util::units::{format_bytes, thousands};
use rand::{Rng, RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::gate::marked::MARKER;

/// What a dataset holds: enough to name and size every file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub model: TrainingModel,
    pub format: SampleFormat,
    pub files: u64,
    pub samples_per_file: u64,
    pub sample_bytes: u64,
    pub sample_bytes_stdev: u64,
    pub seed: u64,
}

impl Layout {
    pub fn new(model: TrainingModel, shape: &TrainingShape, files: u64, seed: u64) -> Layout {
        Layout {
            model,
            format: shape.format,
            files,
            samples_per_file: shape.samples_per_file,
            sample_bytes: shape.sample_bytes,
            sample_bytes_stdev: shape.sample_bytes_stdev,
            seed,
        }
    }

    /// `img_0000042_of_0000168.npz`, as DLIO names them.
    pub fn file_name(&self, i: u64) -> String {
        format!(
            "img_{i:07}_of_{:07}.{}",
            self.files,
            self.format.extension()
        )
    }

    /// Bytes of each sample in file `i`: drawn from a normal distribution
    /// of the workload's mean and deviation (as DLIO's generator draws
    /// record lengths), kept within a sixteenth of the mean and four
    /// deviations above it.
    pub fn record_bytes(&self, i: u64) -> u64 {
        let mean = self.sample_bytes as f64;
        if self.sample_bytes_stdev == 0 {
            return self.sample_bytes.max(1);
        }
        let mut rng =
            rand::rngs::SmallRng::seed_from_u64(self.seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let normal = rand_distr::Normal::new(mean, self.sample_bytes_stdev as f64)
            .expect("a finite deviation");
        let drawn: f64 = rng.sample(normal);
        let low = (mean / 16.0).max(1.0);
        let high = mean + 4.0 * self.sample_bytes_stdev as f64;
        drawn.clamp(low, high) as u64
    }

    pub fn file_bytes(&self, i: u64) -> u64 {
        self.samples_per_file * self.record_bytes(i)
    }

    pub fn total_bytes(&self) -> u64 {
        (0..self.files).map(|i| self.file_bytes(i)).sum()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Marker {
    layout: Layout,
    /// The directory the marker was made for: trusted only there.
    root: DirId,
    /// Set once every file is written: a dataset cut short is not used.
    complete: bool,
}

pub fn root_in(dir: &Path) -> PathBuf {
    dir.join("fathom-train")
}

/// What DIR holds for a run: nothing yet, or a whole dataset of fathom's
/// kept by an earlier run.
pub enum Found {
    Nothing,
    Kept(Layout),
}

/// Looks at `DIR/fathom-train` without changing anything: a directory
/// there must be a dataset fathom made, whole, holding nothing else.
pub fn inspect(dir: &Path) -> Result<Found, UsageError> {
    let root = root_in(dir);
    let err = |m: String| UsageError(format!("{}: {m}", root.display()));
    match std::fs::symlink_metadata(&root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(err(e.to_string())),
        Ok(m) if !m.is_dir() => {
            return Err(err("exists and is not a dataset of fathom's".into()));
        }
        Ok(_) => {}
    }
    let (marker, _dir) = open_marked(&root)?;
    let names: std::collections::HashSet<String> = (0..marker.layout.files)
        .map(|i| marker.layout.file_name(i))
        .collect();
    let entries = std::fs::read_dir(&root).map_err(|e| err(e.to_string()))?;
    for entry in entries {
        let entry = entry.map_err(|e| err(e.to_string()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != MARKER && !names.contains(&name) {
            return Err(err(format!(
                "holds {name}, which fathom did not make: fathom leaves the directory alone; give another DIR"
            )));
        }
    }
    if !marker.complete {
        return Err(err(
            "holds a dataset whose making was cut short: pass --overwrite to make it again".into(),
        ));
    }
    Ok(Found::Kept(marker.layout))
}

fn open_marked(root: &Path) -> Result<(Marker, MadeDir), UsageError> {
    read_marked(root, |m: &Marker| m.root)
}

/// A directory of fathom's at `root` (a dataset's, checkpoints'): its
/// marker `M` read, and the directory the marker names (`root_of`) held;
/// one without a marker, or not the directory it names, is refused.
pub(super) fn read_marked<M: serde::de::DeserializeOwned>(
    root: &Path,
    root_of: impl Fn(&M) -> DirId,
) -> Result<(M, MadeDir), UsageError> {
    let err = |m: String| UsageError(format!("{}: {m}", root.display()));
    marked::open(root, |m| Some(root_of(m))).map_err(|why| match why {
        Unmarked::Missing => err("holds files fathom did not make (no marker of fathom's in it): fathom leaves it alone; give another DIR".into()),
        Unmarked::Unreadable(e) => err(format!("its marker cannot be read ({e})")),
        Unmarked::NotMadeHere(why) => err(format!(
            "is not a directory fathom can prove it made ({why}): remove it yourself or give another DIR"
        )),
    })
}

/// The held directory `held`, for its files.
pub(super) fn held_work(held: &MadeDir, root: &Path) -> Result<WorkDir, UsageError> {
    WorkDir::below(held, Path::new(""))
        .map_err(|e| UsageError(format!("{}: cannot be opened: {e}", root.display())))
}

/// A dataset in use: removed when dropped if this run made it, unless
/// kept.
pub struct Dataset {
    pub layout: Layout,
    pub root: PathBuf,
    dir: MadeDir,
    /// The directory held open: every file is made and read in it by
    /// name, so that the directory swapped for a link mid-run is never
    /// followed.
    work: WorkDir,
    made_here: bool,
    keep: bool,
}

impl Dataset {
    /// Opens the dataset `inspect` found whole.
    pub fn open_kept(dir: &Path) -> Result<Dataset, UsageError> {
        let root = root_in(dir);
        let (marker, held) = open_marked(&root)?;
        Ok(Dataset {
            layout: marker.layout,
            work: held_work(&held, &root)?,
            root,
            dir: held,
            made_here: false,
            keep: true,
        })
    }

    /// Removes a kept dataset (`--overwrite`), by its layout's names.
    pub fn replace(dir: &Path) -> Result<(), UsageError> {
        let root = root_in(dir);
        let (marker, held) = open_marked(&root)?;
        let mut old = Dataset {
            layout: marker.layout,
            work: held_work(&held, &root)?,
            root,
            dir: held,
            made_here: true,
            keep: false,
        };
        old.remove();
        old.keep = true;
        Ok(())
    }

    /// Makes the dataset, untimed, `threads` files at a time; each file is
    /// made durable and its pages dropped from the cache, so that the
    /// first epoch reads the storage. Stops early at a signal (what was
    /// made is removed when the dataset is dropped).
    pub fn make(
        dir: &Path,
        layout: Layout,
        threads: u32,
        keep: bool,
        stop: &StopFlag,
    ) -> anyhow::Result<Dataset> {
        let root = root_in(dir);
        let held = MadeDir::make(&root)
            .map_err(|e| anyhow::anyhow!("{}: cannot be made: {e}", root.display()))?;
        let dataset = Dataset {
            layout,
            work: held_work(&held, &root)?,
            root,
            dir: held,
            made_here: true,
            keep,
        };
        dataset.save(false)?;
        let next = AtomicU64::new(0);
        let failed = std::sync::Mutex::new(None::<String>);
        std::thread::scope(|s| {
            for t in 0..threads.max(1) {
                let (dataset, next, failed) = (&dataset, &next, &failed);
                s.spawn(move || {
                    let mut pool = vec![0u8; 8 << 20];
                    rand::rngs::SmallRng::seed_from_u64(dataset.layout.seed ^ t as u64)
                        .fill_bytes(&mut pool);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= dataset.layout.files || stop.is_set() {
                            return;
                        }
                        if let Err(e) = dataset.write_file(i, &pool) {
                            *failed.lock().unwrap() = Some(e);
                            stop.set();
                            return;
                        }
                    }
                });
            }
        });
        if let Some(e) = failed.into_inner().unwrap() {
            anyhow::bail!("making the dataset: {e}");
        }
        if !stop.is_set() {
            dataset.save(true)?;
        }
        Ok(dataset)
    }

    fn save(&self, complete: bool) -> anyhow::Result<()> {
        let marker = Marker {
            layout: self.layout.clone(),
            root: self.dir.id(),
            complete,
        };
        let text = serde_json::to_string(&marker)?;
        self.dir
            .write_file(Path::new(MARKER), text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: the marker: {e}", self.root.display()))
    }

    /// File `i`'s bytes, from the pool at a place of the file's own, so
    /// that no two files hold the same blocks.
    fn write_file(&self, i: u64, pool: &[u8]) -> Result<(), String> {
        let path = self.path(i);
        let named = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut file = self
            .work
            .new_file(&self.layout.file_name(i))
            .map_err(named)?;
        let mut left = self.layout.file_bytes(i);
        let chunk = 1usize << 20;
        let mut at = (i as usize).wrapping_mul(4099) % (pool.len() - chunk);
        while left > 0 {
            let n = left.min(chunk as u64) as usize;
            file.write_all(&pool[at..at + n]).map_err(named)?;
            left -= n as u64;
            at = (at + 4099 * 7) % (pool.len() - chunk);
        }
        file.sync_all().map_err(named)?;
        workload::drop_cached_pages(&file);
        Ok(())
    }

    pub fn path(&self, i: u64) -> PathBuf {
        self.root.join(self.layout.file_name(i))
    }

    /// File `i`, opened for reading in the held directory.
    pub fn open(&self, i: u64, direct: bool) -> std::io::Result<std::fs::File> {
        self.work.read_file(&self.layout.file_name(i), direct)
    }

    /// Drops every file's cached pages, so that a kept dataset's first
    /// epoch reads the storage too.
    pub fn drop_cached(&self) {
        for i in 0..self.layout.files {
            if let Ok(f) = self.open(i, false) {
                workload::drop_cached_pages(&f);
            }
        }
    }

    pub fn made_here(&self) -> bool {
        self.made_here
    }

    fn remove(&mut self) {
        if !self.dir.still_there() {
            return;
        }
        for i in 0..self.layout.files {
            let _ = self.dir.remove_file(Path::new(&self.layout.file_name(i)));
        }
        let _ = self.dir.remove_file(Path::new(MARKER));
        if let Ok(dir) = self.dir.try_clone() {
            let _ = dir.remove();
        }
    }
}

impl Drop for Dataset {
    fn drop(&mut self) {
        if self.made_here && !self.keep {
            self.remove();
        }
    }
}

/// Refuses a dataset the file system has no room for.
pub fn check_room(dir: &Path, layout: &Layout) -> Result<(), UsageError> {
    let Some(space) = crate::util::space::of(dir) else {
        return Ok(());
    };
    let block = space.block.max(512);
    let bytes: u64 = (0..layout.files)
        .map(|i| layout.file_bytes(i).div_ceil(block) * block)
        .sum();
    if bytes > space.free_bytes {
        return Err(UsageError(format!(
            "{}: the dataset needs {} ({} files) and the file system has {} free: pass --files to make fewer",
            dir.display(),
            format_bytes(bytes),
            thousands(layout.files),
            format_bytes(space.free_bytes)
        )));
    }
    if space.inodes > 0 && space.inodes_avail < layout.files + 2 {
        return Err(UsageError(format!(
            "{}: the dataset needs {} inodes and the file system has {} free",
            dir.display(),
            thousands(layout.files + 2),
            thousands(space.inodes_avail)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(files: u64) -> Layout {
        let mut shape = TrainingModel::Unet3d.shape();
        shape.sample_bytes = 64 << 10;
        shape.sample_bytes_stdev = 16 << 10;
        Layout::new(TrainingModel::Unet3d, &shape, files, 7)
    }

    #[test]
    fn record_lengths_are_drawn_from_the_seed_within_their_bounds() {
        let l = layout(200);
        let sizes: Vec<u64> = (0..200).map(|i| l.record_bytes(i)).collect();
        assert_eq!(
            sizes,
            (0..200).map(|i| l.record_bytes(i)).collect::<Vec<_>>()
        );
        assert!(
            sizes
                .iter()
                .all(|&s| (4096..=(64 << 10) + 4 * (16 << 10)).contains(&s))
        );
        let mean = sizes.iter().sum::<u64>() as f64 / 200.0;
        assert!((mean - 65536.0).abs() < 65536.0 * 0.1, "{mean}");
    }

    #[test]
    fn a_dataset_is_made_used_again_and_removed_by_its_names_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let stop = StopFlag::default();
        let made = Dataset::make(tmp.path(), layout(5), 2, true, &stop).unwrap();
        assert_eq!(
            std::fs::metadata(made.path(3)).unwrap().len(),
            made.layout.file_bytes(3)
        );
        drop(made);
        let Found::Kept(found) = inspect(tmp.path()).unwrap() else {
            panic!("the kept dataset is found")
        };
        assert_eq!(found, layout(5));
        // A stranger's file in it: refused, and left alone.
        let stranger = root_in(tmp.path()).join("notes.txt");
        std::fs::write(&stranger, "mine").unwrap();
        let e = inspect(tmp.path()).err().unwrap();
        assert!(
            e.0.contains("notes.txt, which fathom did not make"),
            "{}",
            e.0
        );
        std::fs::remove_file(&stranger).unwrap();
        Dataset::replace(tmp.path()).unwrap();
        assert!(!root_in(tmp.path()).exists());
    }

    /// The dataset's directory swapped for a link to a user's directory
    /// while it is made: the rest of the files go on into the directory
    /// fathom made (wherever it now is), the reads come from there, and
    /// nothing lands in or is removed from the user's.
    #[test]
    fn a_dataset_directory_swapped_for_a_link_mid_make_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let users = tmp.path().join("users");
        std::fs::create_dir(&users).unwrap();
        let theirs = users.join(layout(300).file_name(299));
        std::fs::write(&theirs, "the user's").unwrap();
        let root = root_in(tmp.path());
        let moved = tmp.path().join("moved");
        let stop = StopFlag::default();
        let made = std::thread::scope(|s| {
            s.spawn(|| {
                while !root.join(layout(300).file_name(0)).exists() {
                    std::thread::yield_now();
                }
                std::fs::rename(&root, &moved).unwrap();
                std::os::unix::fs::symlink(&users, &root).unwrap();
            });
            Dataset::make(tmp.path(), layout(300), 1, false, &stop).unwrap()
        });
        assert_eq!(std::fs::read_dir(&users).unwrap().count(), 1);
        assert_eq!(std::fs::read(&theirs).unwrap(), b"the user's");
        let files = std::fs::read_dir(&moved).unwrap().count();
        assert_eq!(files, 300 + 1, "every file and the marker in fathom's own");
        let held = made.open(299, false).unwrap();
        assert_eq!(held.metadata().unwrap().len(), made.layout.file_bytes(299));
        drop(made);
        assert_eq!(std::fs::read(&theirs).unwrap(), b"the user's");
    }

    #[test]
    fn a_directory_without_the_marker_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(root_in(tmp.path())).unwrap();
        std::fs::write(root_in(tmp.path()).join("a"), "x").unwrap();
        let e = inspect(tmp.path()).err().unwrap();
        assert!(e.0.contains("fathom did not make"), "{}", e.0);
    }
}
