//! bonnie++'s block I/O tests: write a file sequentially in 8 KiB chunks,
//! rewrite it (read each chunk, change it, write it back in place), read it
//! sequentially, then seek: three workers read 8 KiB at random offsets and
//! write 10% of those chunks back. Every chunk is timed into a histogram.
//!
//! Writes are flushed (fsync) inside the timed phase, and the file is dropped
//! from the page cache before every phase that reads, so a figure is the
//! device's and not the cache's (bonnie++ relies on a file twice the size of
//! memory for that).

use crate::measure::histogram::LatencyHistogram;
use crate::run::target::drop_cached;
use crate::util::stop::StopFlag;
use rand::{Rng, RngExt, SeedableRng};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// bonnie++'s chunk size.
pub const CHUNK: u64 = 8192;
/// bonnie++'s seek workers and seeks in all.
pub const SEEKERS: u64 = 3;
pub const SEEKS: u64 = 8000;
/// Every this many seeks, the chunk read is written back.
const REWRITE_EVERY: u64 = 10;

/// One timed phase.
pub struct Phase {
    pub name: &'static str,
    pub ops: u64,
    /// Bytes moved, for the phases bonnie++ reports in KiB/s; None for the
    /// seeks, which it reports per second.
    pub bytes: Option<u64>,
    pub elapsed_s: f64,
    pub latency: LatencyHistogram,
}

/// The block file's name in the workspace.
pub const NAME: &str = "block";

/// Runs the four phases on a new file of `size` bytes, named [`NAME`] in
/// the run's directory `dir`; stops after the phase a signal interrupts
/// (returning what it did).
pub fn run(
    dir: &crate::gate::workload::WorkDir,
    size: u64,
    seed: u64,
    stop: &StopFlag,
) -> anyhow::Result<Vec<Phase>> {
    let chunks = size / CHUNK;
    let file = dir.new_file(NAME)?;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut phases = Vec::new();
    let mut buf = vec![0u8; CHUNK as usize];

    // Fresh random bytes in every chunk: nothing to compress or deduplicate.
    let write = timed("seq_write", &file, chunks, stop, |i| {
        rng.fill_bytes(&mut buf);
        file.write_all_at(&buf, i * CHUNK)
    })?;
    let written = write.ops;
    phases.push(write);
    if stop.is_set() {
        return Ok(phases);
    }
    phases.push(timed("rewrite", &file, written, stop, |i| {
        file.read_exact_at(&mut buf, i * CHUNK)?;
        buf[0] ^= 0xff;
        file.write_all_at(&buf, i * CHUNK)
    })?);
    if stop.is_set() {
        return Ok(phases);
    }
    phases.push(timed("seq_read", &file, written, stop, |i| {
        file.read_exact_at(&mut buf, i * CHUNK)
    })?);
    if stop.is_set() {
        return Ok(phases);
    }
    phases.push(seeks(&file, written, seed, stop)?);
    Ok(phases)
}

/// Runs `op` on chunks 0..chunks in order, timing each, then flushes (in
/// the phase's time) and drops the file from the page cache.
fn timed(
    name: &'static str,
    file: &File,
    chunks: u64,
    stop: &StopFlag,
    mut op: impl FnMut(u64) -> std::io::Result<()>,
) -> anyhow::Result<Phase> {
    let mut latency = LatencyHistogram::new();
    let start = Instant::now();
    let mut done = 0;
    while done < chunks && !stop.is_set() {
        let t = Instant::now();
        op(done)?;
        latency.record(t.elapsed().as_nanos() as u64);
        done += 1;
    }
    file.sync_all()?;
    let elapsed_s = start.elapsed().as_secs_f64();
    drop_cached(file);
    Ok(Phase {
        name,
        ops: done,
        bytes: Some(done * CHUNK),
        elapsed_s,
        latency,
    })
}

/// SEEKERS workers at once, SEEKS reads in all at random chunks, every
/// tenth chunk written back.
fn seeks(file: &File, chunks: u64, seed: u64, stop: &StopFlag) -> anyhow::Result<Phase> {
    let start = Instant::now();
    let per_worker = SEEKS / SEEKERS;
    let results: Vec<std::io::Result<(u64, LatencyHistogram)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..SEEKERS)
            .map(|w| {
                s.spawn(move || {
                    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed ^ (w + 1));
                    let mut buf = vec![0u8; CHUNK as usize];
                    let mut latency = LatencyHistogram::new();
                    let mut done = 0;
                    while done < per_worker && !stop.is_set() {
                        let offset = rng.random_range(0..chunks.max(1)) * CHUNK;
                        let t = Instant::now();
                        file.read_exact_at(&mut buf, offset)?;
                        if done % REWRITE_EVERY == 0 {
                            buf[0] ^= 0xff;
                            file.write_all_at(&buf, offset)?;
                        }
                        latency.record(t.elapsed().as_nanos() as u64);
                        done += 1;
                    }
                    Ok((done, latency))
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("seek worker panicked"))
            .collect()
    });
    let elapsed_s = start.elapsed().as_secs_f64();
    let mut latency = LatencyHistogram::new();
    let mut ops = 0;
    for r in results {
        let (done, h) = r?;
        ops += done;
        latency.add(&h);
    }
    Ok(Phase {
        name: "random_seeks",
        ops,
        bytes: None,
        elapsed_s,
        latency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::remove::MadeDir;
    use crate::gate::workload::WorkDir;
    use std::path::Path;

    /// A directory made as a run makes its own, and it held open.
    fn made(dir: &tempfile::TempDir) -> (MadeDir, WorkDir, std::path::PathBuf) {
        let made = MadeDir::make(&dir.path().join("w")).unwrap();
        let work = WorkDir::below(&made, Path::new("")).unwrap();
        let path = made.path().join(NAME);
        (made, work, path)
    }

    #[test]
    fn four_phases_over_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let (_made, work, path) = made(&dir);
        let phases = run(&work, 64 * CHUNK, 7, &StopFlag::default()).unwrap();
        let names: Vec<&str> = phases.iter().map(|p| p.name).collect();
        assert_eq!(names, ["seq_write", "rewrite", "seq_read", "random_seeks"]);
        for p in &phases[..3] {
            assert_eq!((p.ops, p.bytes), (64, Some(64 * CHUNK)), "{}", p.name);
            assert_eq!(p.latency.count(), 64);
        }
        let seeks = &phases[3];
        assert_eq!((seeks.ops, seeks.bytes), (SEEKS / SEEKERS * SEEKERS, None));
        assert_eq!(seeks.latency.count(), seeks.ops);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 64 * CHUNK);
        // Every chunk holds its own bytes.
        let data = std::fs::read(&path).unwrap();
        let mut distinct: Vec<&[u8]> = data.chunks(4096).collect();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 128);
    }

    #[test]
    fn an_existing_file_is_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let (_made, work, path) = made(&dir);
        std::fs::write(&path, b"keep").unwrap();
        assert!(run(&work, 8 * CHUNK, 7, &StopFlag::default()).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"keep");
    }
}
