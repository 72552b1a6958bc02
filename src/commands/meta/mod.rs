//! `fathom meta`: file-system speed as bonnie++ measures it. With
//! `--block SIZE`, first the block tests (`block.rs`: sequential write,
//! rewrite, sequential read, random seeks); then N x 1024 files are
//! created, stat'ed and deleted, first in name order and then in random
//! order. Every operation is timed into a histogram. All of it happens in a
//! directory of fathom's own, removed at the end, also when interrupted.

pub mod block;

use crate::gate::remove::MadeDir;
use crate::gate::workload::{WorkDir, WorkDirs};
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::Interval;
use crate::measure::op_seconds::{OpSeconds, Slicing};
use crate::result::meta::{MetaOp, MetaResult};
use crate::result::warning::{Warning, WarningKind};
use crate::spec::meta::MetaSpec;
use crate::util::stop::StopFlag;
use crate::util::units::format_bytes;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Limits that keep a typo from filling a file system with millions of files.
pub const MAX_FILES_K: u32 = 4096;
pub const MAX_FILE_SIZE: u64 = 1 << 20;

pub fn validate(spec: &MetaSpec) -> Result<(), crate::util::error::UsageError> {
    let fail = |m: String| Err(crate::util::error::UsageError(m));
    if spec.files_k == 0 || spec.files_k > MAX_FILES_K {
        return fail(format!(
            "-n {} is outside 1 to {MAX_FILES_K} (x 1024 files)",
            spec.files_k
        ));
    }
    if spec.file_size > MAX_FILE_SIZE {
        return fail(format!("--file-size {} is above 1m", spec.file_size));
    }
    let dir = Path::new(&spec.dir);
    if !dir.is_dir() {
        return fail(format!("{}: not a directory", spec.dir));
    }
    if spec.block_size > 0 {
        let least = 16 * block::CHUNK;
        if spec.block_size < least {
            return fail(format!(
                "--block {} is below {}",
                format_bytes(spec.block_size),
                format_bytes(least)
            ));
        }
        // The file and the files of the creation tests, with room to spare.
        let needed = spec.block_size + (64 << 20);
        if let Some(free) = crate::run::target::free_bytes(dir)
            && free < needed
        {
            return fail(format!(
                "--block {}: {} has {} free",
                format_bytes(spec.block_size),
                spec.dir,
                format_bytes(free)
            ));
        }
    }
    Ok(())
}

/// The working directory fathom made, held; on drop, the names it made
/// in it are removed through it (never through a link), then itself.
struct Workspace {
    dir: crate::gate::remove::MadeDir,
    /// Subdirectories, by name.
    dirs: Vec<PathBuf>,
    /// Files, relative to the directory.
    files: Vec<PathBuf>,
}

impl Workspace {
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        if !self.dir.still_there() {
            return;
        }
        for file in &self.files {
            let _ = self.dir.remove_file(file);
        }
        for d in &self.dirs {
            let _ = self.dir.remove_dir(d);
        }
        if let Ok(dir) = self.dir.try_clone() {
            let _ = dir.remove();
        }
    }
}

/// Runs the phases in turn, each said to `board` (for those watching) as
/// it starts.
pub fn run(
    spec: &MetaSpec,
    stop: &StopFlag,
    board: Option<&crate::measure::live::LiveBoard>,
) -> anyhow::Result<MetaResult> {
    validate(spec)?;
    let root = Path::new(&spec.dir).join(format!("fathom-meta-{}", std::process::id()));
    let mut workspace = Workspace {
        dir: crate::gate::remove::MadeDir::make(&root)?,
        dirs: Vec::new(),
        files: vec![PathBuf::from(block::NAME)],
    };
    let count = spec.files_k as usize * 1024;
    let per_dir = if spec.files_per_dir == 0 {
        count
    } else {
        spec.files_per_dir as usize
    };
    let dirs = count.div_ceil(per_dir);
    let top = WorkDir::below(&workspace.dir, Path::new(""))?;
    for d in 0..dirs {
        let name = dir_name(d);
        top.make_dir(&name)?;
        workspace.dirs.push(PathBuf::from(name));
    }
    // Names in order, as bonnie's sequential phase (a counter), laid out
    // over the subdirectories.
    let files: Vec<MetaFile> = (0..count)
        .map(|i| MetaFile {
            dir: i / per_dir,
            name: format!("{i:010}"),
        })
        .collect();
    workspace.files.extend(
        files
            .iter()
            .map(|f| Path::new(&dir_name(f.dir)).join(&f.name)),
    );
    let in_order: Vec<&MetaFile> = files.iter().collect();
    let mut shuffled = in_order.clone();
    shuffled.shuffle(&mut rand::rngs::SmallRng::seed_from_u64(spec.seed));
    let payload = vec![0x5a_u8; spec.file_size as usize];

    let mut ops = Vec::new();
    let mut warnings = Vec::new();
    let mut interrupted = false;
    if spec.block_size > 0 {
        for p in block::run(&top, spec.block_size, spec.seed, stop)? {
            interrupted |= stop.is_set();
            ops.push(MetaOp {
                name: p.name.to_string(),
                ops: p.ops,
                elapsed_s: p.elapsed_s,
                ops_per_s: crate::measure::per_second(p.ops, p.elapsed_s),
                bytes: p.bytes,
                bw_bytes: p.bytes.map(|b| crate::measure::per_second(b, p.elapsed_s)),
                lat_ns: p.latency.summary(),
                histogram: p.latency.encode(),
                intervals: Vec::new(),
            });
        }
        workspace.dir.remove_file(Path::new(block::NAME))?;
        if let Some(free) =
            crate::run::warnings::available_memory().filter(|m| *m > spec.block_size)
        {
            warnings.push(Warning {
                kind: WarningKind::BlockFileInMemory,
                target: spec.dir.clone(),
                figure: Some(spec.block_size as f64),
                at_s: None,
                message: format!(
                "block tests: the {} file is smaller than the free memory ({}); the page cache is dropped before each phase that reads, but random seeks that hit a chunk twice may be served from it (bonnie++ uses twice the memory)",
                format_bytes(spec.block_size),
                format_bytes(free)
            ),
            });
        }
    }
    let phases: [(&str, &[&MetaFile], Op); 6] = [
        ("create_seq", &in_order, Op::Create),
        ("stat_seq", &in_order, Op::Stat),
        ("delete_seq", &in_order, Op::Delete),
        ("create_random", &shuffled, Op::Create),
        ("stat_random", &shuffled, Op::Stat),
        ("delete_random", &shuffled, Op::Delete),
    ];
    let planned = phases.len() as u64;
    if let Some(board) = board {
        board.workload("meta");
    }
    for (done_phases, (name, order, op)) in phases.into_iter().enumerate() {
        if stop.is_set() {
            interrupted = true;
            break;
        }
        if let Some(board) = board {
            board.phase(format!("meta {name}"), Some((done_phases as u64, planned)));
        }
        let (done, elapsed, h, intervals) = time_phase(&workspace.dir, order, op, &payload, stop)?;
        interrupted |= done < order.len();
        ops.push(MetaOp {
            name: name.to_string(),
            ops: done as u64,
            elapsed_s: elapsed,
            ops_per_s: crate::measure::per_second(done as u64, elapsed),
            bytes: None,
            bw_bytes: None,
            lat_ns: h.summary(),
            histogram: h.encode(),
            intervals,
        });
        if interrupted {
            break;
        }
    }
    let filesystem = crate::measure::facts::mount_of(workspace.path()).map(|(fs, _)| fs);
    drop(workspace);
    Ok(MetaResult {
        spec: spec.clone(),
        filesystem,
        ops,
        interrupted,
        warnings,
    })
}

/// A file of the creation tests: its subdirectory's number and its name.
struct MetaFile {
    dir: usize,
    name: String,
}

/// The name of subdirectory `d` of the workspace.
fn dir_name(d: usize) -> String {
    format!("d{d:05}")
}

#[derive(Clone, Copy)]
enum Op {
    Create,
    Stat,
    Delete,
}

/// One phase's operations in `order`: how many were done, in how long,
/// their latencies, and each tenth of a second's.
fn time_phase(
    made: &MadeDir,
    order: &[&MetaFile],
    op: Op,
    payload: &[u8],
    stop: &StopFlag,
) -> anyhow::Result<(usize, f64, LatencyHistogram, Vec<Interval>)> {
    let mut h = LatencyHistogram::new();
    let start = Instant::now();
    let recorder = OpSeconds::new(1, Slicing::Adaptive, start);
    let (done, mut series) = recorder.sampled(
        |_, _, _| {},
        |seconds| -> anyhow::Result<usize> {
            let dirs = WorkDirs::new(made, 1);
            let mut done = 0;
            for file in order {
                // Each operation, not each 256th: on a slow file system
                // 256 of them can take minutes.
                if stop.is_set() {
                    break;
                }
                let t = Instant::now();
                let name = file.name.as_str();
                dirs.with(
                    0,
                    file.dir,
                    || PathBuf::from(dir_name(file.dir)),
                    |dir| match op {
                        Op::Create => dir.new_file(name).and_then(|mut f| f.write_all(payload)),
                        Op::Stat => dir.stat(name),
                        Op::Delete => dir.remove_file(name),
                    },
                )
                .map_err(|e| {
                    anyhow::anyhow!(
                        "{}: {e}",
                        made.path().join(dir_name(file.dir)).join(name).display()
                    )
                })?;
                let ns = t.elapsed().as_nanos() as u64;
                h.record(ns);
                seconds.record(0, (), ns, 0);
                done += 1;
            }
            Ok(done)
        },
    );
    let elapsed = start.elapsed().as_secs_f64();
    Ok((done?, elapsed, h, series.remove(&()).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_phases_and_nothing_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let spec = MetaSpec {
            dir: dir.path().to_str().unwrap().into(),
            files_k: 1,
            files_per_dir: 300,
            file_size: 10,
            seed: 1,
            block_size: 0,
        };
        let board = crate::measure::live::LiveBoard::new();
        let r = run(&spec, &StopFlag::default(), Some(&board)).unwrap();
        let watched = board.snapshot();
        assert_eq!(watched.phase, "meta delete_random");
        assert_eq!(watched.progress, Some((5, 6)));
        let names: Vec<&str> = r.ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "create_seq",
                "stat_seq",
                "delete_seq",
                "create_random",
                "stat_random",
                "delete_random"
            ]
        );
        assert!(r.ops.iter().all(|o| o.ops == 1024 && o.ops_per_s > 0.0));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(!r.interrupted);
    }

    #[test]
    fn a_subdirectory_swapped_for_a_link_leads_the_phases_nowhere() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        std::fs::create_dir(&user).unwrap();
        std::fs::write(user.join("0000000000"), b"keep").unwrap();
        let made = MadeDir::make(&dir.path().join("w")).unwrap();
        std::os::unix::fs::symlink(&user, made.path().join(dir_name(0))).unwrap();
        let file = MetaFile {
            dir: 0,
            name: "0000000000".into(),
        };
        let stop = StopFlag::default();
        for op in [Op::Delete, Op::Stat, Op::Create] {
            assert!(time_phase(&made, &[&file], op, b"x", &stop).is_err());
        }
        assert_eq!(std::fs::read(user.join("0000000000")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(&user).unwrap().count(), 1);
        std::fs::remove_file(made.path().join(dir_name(0))).unwrap();
        made.remove().unwrap();
    }

    #[test]
    fn bad_specs_are_refused() {
        let spec = MetaSpec {
            dir: "/nonexistent".into(),
            files_k: 1,
            files_per_dir: 0,
            file_size: 0,
            seed: 1,
            block_size: 0,
        };
        assert!(validate(&spec).unwrap_err().0.contains("not a directory"));
        let spec = MetaSpec {
            dir: "/tmp".into(),
            files_k: 0,
            ..spec
        };
        assert!(validate(&spec).unwrap_err().0.contains("-n"));
    }
}
