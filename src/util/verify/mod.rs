//! `--verify`: every written block carries a header (see `header.rs`); the
//! block map remembers which generation of each block was acknowledged, and
//! the read-back judges what the target holds against it.

pub mod header;

use crate::util::buffers::Buffers;
use header::{Expected, Verdict};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU32, Ordering};

/// Set while a write of the block is in flight: nobody else may write or
/// check it, so the device never sees two writes of one block at once and the
/// acknowledged generation is always the one that must be there.
const BUSY: u32 = 1 << 31;
/// Set when a write of the block failed: what it holds now is unknown.
const UNCERTAIN: u32 = 1 << 30;
/// Set when the block was erased on purpose (its zone reset): not checked
/// until written again, with the next generation.
const ERASED: u32 = 1 << 29;
const GENERATION: u32 = ERASED - 1;
/// The map costs 4 bytes per block.
pub const MAX_BLOCKS: u64 = 1 << 26;

/// Per block of the region: the last acknowledged generation (0 = not
/// written in this run).
pub struct BlockMap {
    pub run_id: u64,
    pub seed: u64,
    /// Header flags of this run's blocks ([`header::IN_ORDER`]).
    pub flags: u32,
    start: u64,
    bs: u64,
    generations: Box<[AtomicU32]>,
}

impl BlockMap {
    pub fn new(start: u64, bs: u64, blocks: u64, run_id: u64, seed: u64) -> Self {
        assert!(
            blocks <= MAX_BLOCKS,
            "checked when the target was inspected"
        );
        BlockMap {
            run_id,
            seed,
            flags: 0,
            start,
            bs,
            generations: (0..blocks).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    fn index(&self, offset: u64) -> usize {
        ((offset - self.start) / self.bs) as usize
    }

    /// Claims the block at `offset` for a write and returns the generation
    /// to write, or `None` if another write of it is in flight.
    pub fn begin_write(&self, offset: u64) -> Option<u64> {
        let cell = &self.generations[self.index(offset)];
        let mut current = cell.load(Ordering::Acquire);
        loop {
            if current & BUSY != 0 {
                return None;
            }
            match cell.compare_exchange_weak(
                current,
                current | BUSY,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(((current & GENERATION) + 1) as u64),
                Err(now) => current = now,
            }
        }
    }

    /// Releases the block: `generation` was acknowledged, or the write failed
    /// and the block's content is unknown until written again.
    pub fn end_write(&self, offset: u64, generation: u64, acknowledged: bool) {
        let generation = (generation as u32) & GENERATION;
        let value = if acknowledged {
            generation
        } else {
            generation | UNCERTAIN
        };
        self.generations[self.index(offset)].store(value, Ordering::Release);
    }

    /// Forgets what was written to `len` bytes at `offset` (a zone that was
    /// reset, its blocks erased by the workload itself): they are not
    /// checked until written again.
    pub fn forget(&self, offset: u64, len: u64) {
        let end = self.start + self.generations.len() as u64 * self.bs;
        let (from, to) = (offset.max(self.start), (offset + len).min(end));
        if from >= to {
            return;
        }
        for cell in &self.generations[self.index(from)..self.index(to - 1) + 1] {
            cell.fetch_or(ERASED, Ordering::AcqRel);
        }
    }

    /// Blocks whose last write failed.
    pub fn uncertain_blocks(&self) -> u64 {
        self.generations
            .iter()
            .filter(|g| g.load(Ordering::Acquire) & (UNCERTAIN | ERASED) == UNCERTAIN)
            .count() as u64
    }

    fn expected(&self, index: usize) -> Option<Result<Expected, ()>> {
        let v = self.generations[index].load(Ordering::Acquire);
        if v & ERASED != 0 {
            return None;
        }
        if v & UNCERTAIN != 0 {
            return Some(Err(()));
        }
        let generation = (v & GENERATION) as u64;
        (generation > 0).then_some(Ok(Expected {
            run_id: self.run_id,
            generation,
        }))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockFailure {
    pub offset: u64,
    pub kind: Verdict,
    pub detail: String,
}

/// Counts per verdict; the first failures are listed with their offsets.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VerifyReport {
    /// `after-write`, `interleaved`, or `read-only` (a check of blocks an
    /// earlier run wrote: stale writes cannot be told from it).
    pub mode: String,
    pub checked: u64,
    pub intact: u64,
    pub stale: u64,
    pub misplaced: u64,
    pub corrupt: u64,
    /// Blocks without a fathom header (read-only checks).
    pub unwritten: u64,
    /// Blocks whose last write failed, so their content is unknown.
    pub uncertain: u64,
    pub first_failures: Vec<BlockFailure>,
    /// Seconds the read-back after the run took (`after-write` and
    /// `read-only`; interleaved checks run while writing).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_s: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

const LISTED_FAILURES: usize = 16;

impl VerifyReport {
    pub fn new(mode: &str) -> Self {
        VerifyReport {
            mode: mode.to_string(),
            ..Default::default()
        }
    }

    pub fn failed(&self) -> u64 {
        self.stale + self.misplaced + self.corrupt
    }

    /// No block read held a fathom header to judge: the check proved
    /// nothing, which is no pass.
    pub fn nothing_checked(&self) -> bool {
        self.checked == self.unwritten && self.failed() == 0
    }

    /// Whether the check fails the run: blocks failed, or none was checked.
    pub fn is_failure(&self) -> bool {
        self.failed() > 0 || self.nothing_checked()
    }

    pub fn record(&mut self, offset: u64, verdict: Verdict, detail: String) {
        self.checked += 1;
        match verdict {
            Verdict::Intact => self.intact += 1,
            Verdict::Stale => self.stale += 1,
            Verdict::Misplaced => self.misplaced += 1,
            Verdict::Corrupt => self.corrupt += 1,
            Verdict::Unwritten => self.unwritten += 1,
        }
        let failure = matches!(
            verdict,
            Verdict::Stale | Verdict::Misplaced | Verdict::Corrupt
        );
        if failure && self.first_failures.len() < LISTED_FAILURES {
            self.first_failures.push(BlockFailure {
                offset,
                kind: verdict,
                detail,
            });
        }
    }

    pub fn merge(&mut self, other: &VerifyReport) {
        self.checked += other.checked;
        self.intact += other.intact;
        self.stale += other.stale;
        self.misplaced += other.misplaced;
        self.corrupt += other.corrupt;
        self.unwritten += other.unwritten;
        self.uncertain += other.uncertain;
        // Targets are read back one after the other.
        self.read_s += other.read_s;
        for f in &other.first_failures {
            if self.first_failures.len() < LISTED_FAILURES {
                self.first_failures.push(f.clone());
            }
        }
        self.first_failures.sort_by_key(|f| f.offset);
    }

    /// "3 of 512 blocks failed: 1 stale, 2 corrupt; first at offset 8192 (stale: ...)".
    pub fn summary(&self) -> String {
        if self.nothing_checked() {
            let mut s = format!(
                "NOTHING CHECKED: none of the {} blocks read holds a fathom header (was the region written with --verify?)",
                self.checked
            );
            if self.uncertain > 0 {
                s.push_str(&format!(
                    "; {} blocks not checked (their last write failed)",
                    self.uncertain
                ));
            }
            return s;
        }
        let mut parts = Vec::new();
        for (n, what) in [
            (self.stale, "stale"),
            (self.misplaced, "misplaced"),
            (self.corrupt, "corrupt"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        let mut s = if parts.is_empty() {
            format!(
                "{} blocks checked, all intact",
                self.checked - self.unwritten
            )
        } else {
            format!(
                "{} of {} blocks failed: {}",
                self.failed(),
                self.checked,
                parts.join(", ")
            )
        };
        if let Some(f) = self.first_failures.first() {
            s.push_str(&format!(
                "; first at offset {} ({:?}: {})",
                f.offset, f.kind, f.detail
            ));
        }
        if self.unwritten > 0 {
            s.push_str(&format!(
                "; {} blocks hold no fathom header",
                self.unwritten
            ));
        }
        if self.uncertain > 0 {
            s.push_str(&format!(
                "; {} blocks not checked (their last write failed)",
                self.uncertain
            ));
        }
        s
    }
}

/// Bytes read per call during the read-back.
const READ_CHUNK: usize = 1 << 20;

/// Reads `[start, start + blocks * bs)` of `file` and judges every block:
/// against `map` when this run wrote it (blocks it did not write are
/// skipped), or against itself when there is no map.
pub fn read_back(
    file: &File,
    start: u64,
    bs: u64,
    blocks: u64,
    map: Option<&BlockMap>,
    stop: &crate::util::stop::StopFlag,
) -> std::io::Result<VerifyReport> {
    let mode = if map.is_some() {
        "after-write"
    } else {
        "read-only"
    };
    let mut report = VerifyReport::new(mode);
    let per_read = (READ_CHUNK as u64 / bs).max(1);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0);
    let mut buffer = Buffers::new(1, (per_read * bs) as usize, &mut rng);
    let mut gaps = Gaps::default();
    let mut block = 0;
    while block < blocks {
        if stop.is_set() {
            break;
        }
        let n = per_read.min(blocks - block);
        let len = (n * bs) as usize;
        let offset = start + block * bs;
        let chunk = &mut buffer.slot_mut(0)[..len];
        file.read_exact_at(chunk, offset)?;
        for i in 0..n {
            let index = (block + i) as usize;
            let at = offset + i * bs;
            let data = &chunk[(i * bs) as usize..((i + 1) * bs) as usize];
            let expected = match map.map(|m| m.expected(index)) {
                None => None,
                Some(None) => continue,
                Some(Some(Err(()))) => {
                    report.uncertain += 1;
                    continue;
                }
                Some(Some(Ok(e))) => Some(e),
            };
            let (verdict, detail) = header::judge(data, at, expected);
            if map.is_none() {
                gaps.see(data, at, verdict, &mut report);
            }
            report.record(at, verdict, detail);
        }
        block += n;
    }
    Ok(report)
}

/// In a read-only check, the blocks without a header seen since the last
/// block of an in-order run: once a later block of that run turns up, they
/// were written and lost. Kept as runs of offsets, so a region of millions
/// of blocks costs a few entries.
#[derive(Default)]
struct Gaps {
    /// (first offset, blocks) of each run of header-less blocks.
    pending: Vec<(u64, u64)>,
    bs: u64,
}

impl Gaps {
    fn see(&mut self, data: &[u8], at: u64, verdict: Verdict, report: &mut VerifyReport) {
        self.bs = data.len() as u64;
        match verdict {
            Verdict::Unwritten => match self.pending.last_mut() {
                Some((first, n)) if *first + *n * self.bs == at => *n += 1,
                _ => self.pending.push((at, 1)),
            },
            _ => {
                let in_order = header::BlockHeader::parse(data)
                    .ok()
                    .flatten()
                    .is_some_and(|h| h.flags & header::IN_ORDER != 0);
                if !in_order {
                    self.pending.clear();
                    return;
                }
                for (first, n) in self.pending.drain(..) {
                    for i in 0..n {
                        // Counted again as lost, not as never written.
                        report.unwritten -= 1;
                        report.checked -= 1;
                        report.record(
                            first + i * self.bs,
                            Verdict::Corrupt,
                            "no fathom header where the in-order pass that wrote the blocks after it wrote one".into(),
                        );
                    }
                }
            }
        }
    }
}

/// Lets the tests make each interleaved check slow
/// (`FATHOM_TEST_CHECK_DELAY_MS=N`), to show that the time it takes is not
/// counted as latency of the I/Os completing around it.
#[cfg(feature = "test-hooks")]
fn test_check_delay() -> Option<std::time::Duration> {
    static DELAY: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    *DELAY.get_or_init(|| {
        std::env::var("FATHOM_TEST_CHECK_DELAY_MS")
            .ok()?
            .parse()
            .ok()
            .map(std::time::Duration::from_millis)
    })
}

#[cfg(not(feature = "test-hooks"))]
fn test_check_delay() -> Option<std::time::Duration> {
    None
}

/// Checks one block right after its write completed (interleaved mode).
pub fn check_one(
    file: &File,
    scratch: &mut [u8],
    offset: u64,
    generation: u64,
    map: &BlockMap,
    report: &mut VerifyReport,
) {
    let expected = Expected {
        run_id: map.run_id,
        generation,
    };
    if let Some(delay) = test_check_delay() {
        std::thread::sleep(delay);
    }
    match file.read_exact_at(scratch, offset) {
        Ok(()) => {
            let (verdict, detail) = header::judge(scratch, offset, Some(expected));
            report.record(offset, verdict, detail);
        }
        Err(e) => report.record(offset, Verdict::Corrupt, format!("cannot read back: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_serialises_writes_of_one_block() {
        let map = BlockMap::new(4096, 4096, 8, 1, 1);
        let g = map.begin_write(8192).unwrap();
        assert_eq!(g, 1);
        assert_eq!(map.begin_write(8192), None, "second writer must wait");
        map.end_write(8192, g, true);
        assert_eq!(map.begin_write(8192), Some(2));
        map.end_write(8192, 2, false);
        assert_eq!(map.expected(1), Some(Err(())));
        map.forget(8192, 4096);
        assert_eq!(
            map.expected(1),
            None,
            "a reset zone's blocks are not checked"
        );
        assert_eq!(map.begin_write(8192), Some(3), "generations keep rising");
        assert_eq!(map.expected(0), None);
    }

    #[test]
    fn report_counts_and_lists() {
        let mut r = VerifyReport::new("after-write");
        r.record(0, Verdict::Intact, String::new());
        r.record(4096, Verdict::Stale, "old".into());
        r.record(8192, Verdict::Corrupt, "bad".into());
        assert_eq!((r.checked, r.failed()), (3, 2));
        assert!(
            r.summary()
                .starts_with("2 of 3 blocks failed: 1 stale, 1 corrupt")
        );
        assert_eq!(r.first_failures[0].offset, 4096);
    }

    #[test]
    fn the_summary_names_only_what_happened() {
        let mut r = VerifyReport::new("after-write");
        r.record(0, Verdict::Intact, String::new());
        assert_eq!(r.summary(), "1 blocks checked, all intact");
        r.record(4096, Verdict::Unwritten, String::new());
        r.uncertain = 2;
        assert_eq!(
            r.summary(),
            "1 blocks checked, all intact; 1 blocks hold no fathom header; 2 blocks not checked (their last write failed)"
        );
    }

    /// Per-worker reports (interleaved checks) add up, and the list of
    /// failures stays at its cap, in offset order.
    #[test]
    fn reports_of_workers_merge_into_one() {
        let mut a = VerifyReport::new("interleaved");
        let mut b = VerifyReport::new("interleaved");
        for (i, verdict) in [
            Verdict::Intact,
            Verdict::Stale,
            Verdict::Misplaced,
            Verdict::Corrupt,
            Verdict::Unwritten,
        ]
        .into_iter()
        .enumerate()
        {
            a.record(i as u64 * 4096, verdict, String::new());
            b.record((10 + i as u64) * 4096, verdict, String::new());
            b.record((20 + i as u64) * 4096, verdict, String::new());
        }
        a.uncertain = 1;
        b.uncertain = 2;
        let mut sum = VerifyReport::new("interleaved");
        sum.merge(&b);
        sum.merge(&a);
        assert_eq!(
            (
                sum.checked,
                sum.intact,
                sum.stale,
                sum.misplaced,
                sum.corrupt,
                sum.unwritten,
                sum.uncertain
            ),
            (15, 3, 3, 3, 3, 3, 3)
        );
        assert_eq!(sum.failed(), 9);
        let offsets: Vec<u64> = sum.first_failures.iter().map(|f| f.offset / 4096).collect();
        assert_eq!(offsets, vec![1, 2, 3, 11, 12, 13, 21, 22, 23]);

        // At most LISTED_FAILURES are kept, when recorded or merged.
        let mut many = VerifyReport::new("after-write");
        for i in 0..40 {
            many.record(i * 4096, Verdict::Corrupt, String::new());
        }
        assert_eq!(many.first_failures.len(), LISTED_FAILURES);
        assert_eq!(many.corrupt, 40);
        let mut merged = VerifyReport::new("after-write");
        merged.merge(&many);
        merged.merge(&many);
        assert_eq!(merged.first_failures.len(), LISTED_FAILURES);
        assert_eq!(merged.corrupt, 80);
    }
}
