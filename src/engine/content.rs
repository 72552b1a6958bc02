//! What each write carries. The slots are shaped once, before the clock
//! starts (random bytes with the compressible share of each chunk zeroed,
//! or zeros, or a pattern); per write only a few words change: a stamp that
//! makes the block unique, or, for a repeat, the stamp of an earlier write
//! made from the same slot, which rebuilds that block byte for byte. No
//! write copies or allocates, so content costs what the stamp always cost.
//!
//! The first writes of each worker are also copied aside, so that what was
//! written can be measured afterwards (`measure/reduction.rs`).

use crate::spec::content::{DataContent, DataPattern};
use crate::util::buffers::{Buffers, SECTOR};
use rand::Rng;
use rand::rngs::SmallRng;

/// Bytes of written blocks each worker keeps to measure: enough for a
/// ratio within a percent, little enough for many workers.
pub const SAMPLE_BYTES: usize = 8 << 20;

/// An earlier unique write of a slot: enough to write it again.
#[derive(Clone, Copy)]
struct Written {
    offset: u64,
    sequence: u64,
    len: usize,
}

pub struct ContentWriter {
    /// Random data stamped per write; false for zeros and patterns, whose
    /// blocks are meant to be alike.
    stamped: bool,
    /// Bytes between two stamps: a sector, or the compress chunk when that
    /// is larger (so the zeroed share of each chunk stays zero).
    stride: usize,
    dedupe_pct: u8,
    /// A draw below this repeats an earlier write: `dedupe_pct` of 2^32.
    repeat_below: u32,
    /// Per slot, earlier unique writes a repeat reproduces.
    earlier: Vec<Vec<Written>>,
    earlier_cap: usize,
    sample: Vec<u8>,
    sample_cap: usize,
}

impl ContentWriter {
    /// Shapes every slot of `buffers` for `content`. `working_set_blocks`
    /// is this worker's share of the blocks repeats are drawn from.
    pub fn new(
        content: &DataContent,
        buffers: &mut Buffers,
        working_set_blocks: usize,
        sample_cap: usize,
    ) -> ContentWriter {
        for slot in 0..buffers.slots() {
            shape(content, buffers.slot_mut(slot));
        }
        let slots = buffers.slots().max(1);
        let stride = if content.compress_pct > 0 {
            (content.compress_chunk as usize).max(SECTOR)
        } else {
            SECTOR
        };
        ContentWriter {
            stamped: content.pattern == DataPattern::Random,
            stride,
            dedupe_pct: content.dedupe_pct,
            repeat_below: ((u64::from(content.dedupe_pct.min(100)) << 32) / 100)
                .min(u64::from(u32::MAX)) as u32,
            earlier: vec![Vec::new(); slots],
            earlier_cap: (working_set_blocks / slots).clamp(1, 4096),
            sample: Vec::new(),
            sample_cap,
        }
    }

    /// Makes slot `slot` hold the block to write at `offset`: a new unique
    /// block, or a repeat of an earlier one.
    pub fn prepare(
        &mut self,
        buffers: &mut Buffers,
        slot: usize,
        len: usize,
        offset: u64,
        sequence: u64,
        rng: &mut SmallRng,
    ) {
        if !self.stamped {
            return;
        }
        if self.dedupe_pct == 0 {
            buffers.stamp_every(slot, len, offset, sequence, self.stride);
            return;
        }
        // One draw per write: its low half decides whether this write
        // repeats, its high half which earlier write (or which to forget).
        let draw = rng.next_u64();
        let earlier = &mut self.earlier[slot];
        let pick = (((draw >> 32) * earlier.len() as u64) >> 32) as usize;
        if (draw as u32) < self.repeat_below && !earlier.is_empty() {
            let w = earlier[pick];
            if w.len == len {
                buffers.stamp_every(slot, len, w.offset, w.sequence, self.stride);
                return;
            }
        }
        buffers.stamp_every(slot, len, offset, sequence, self.stride);
        let w = Written {
            offset,
            sequence,
            len,
        };
        if earlier.len() < self.earlier_cap {
            earlier.push(w);
        } else {
            earlier[pick] = w;
        }
    }

    /// Keeps a copy of the block about to be written while the sample has
    /// room.
    #[inline]
    pub fn sample(&mut self, block: &[u8]) {
        if self.sample.len() + block.len() <= self.sample_cap {
            if self.sample.capacity() == 0 {
                self.sample.reserve_exact(self.sample_cap);
            }
            self.sample.extend_from_slice(block);
        }
    }

    /// The blocks sampled, in the order written.
    pub fn take_sample(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.sample)
    }
}

/// One slot's lasting content.
fn shape(content: &DataContent, slot: &mut [u8]) {
    match &content.pattern {
        DataPattern::Zeros => slot.fill(0),
        DataPattern::Bytes(p) => {
            for (b, x) in slot.iter_mut().zip(p.iter().cycle()) {
                *b = *x;
            }
        }
        DataPattern::Random => {
            if content.compress_pct > 0 {
                let chunk = content.compress_chunk as usize;
                let zeros = chunk * content.compress_pct as usize / 100;
                for c in slot.chunks_mut(chunk) {
                    let keep = c.len().saturating_sub(zeros);
                    c[keep..].fill(0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn writer(content: DataContent, slots: usize, bs: usize) -> (ContentWriter, Buffers, SmallRng) {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut buffers = Buffers::new(slots, bs, &mut rng);
        let w = ContentWriter::new(&content, &mut buffers, 64, 1 << 20);
        (w, buffers, rng)
    }

    #[test]
    fn a_repeat_rebuilds_an_earlier_block_byte_for_byte() {
        let content = DataContent {
            dedupe_pct: 100,
            ..Default::default()
        };
        let (mut w, mut buffers, mut rng) = writer(content, 1, 4096);
        w.prepare(&mut buffers, 0, 4096, 8192, 1, &mut rng);
        let first = buffers.slot_mut(0).to_vec();
        // Every later write repeats the only earlier one.
        w.prepare(&mut buffers, 0, 4096, 4096 * 9, 2, &mut rng);
        assert_eq!(buffers.slot_mut(0), &first[..]);
    }

    #[test]
    fn unique_writes_differ_in_every_sector() {
        let (mut w, mut buffers, mut rng) = writer(DataContent::default(), 1, 4096);
        w.prepare(&mut buffers, 0, 4096, 0, 1, &mut rng);
        let a = buffers.slot_mut(0).to_vec();
        w.prepare(&mut buffers, 0, 4096, 0, 2, &mut rng);
        let b = buffers.slot_mut(0).to_vec();
        for (x, y) in a.chunks(SECTOR).zip(b.chunks(SECTOR)) {
            assert_ne!(x, y);
        }
    }

    #[test]
    fn the_compressible_share_of_each_chunk_is_zero_and_stays_zero() {
        let content = DataContent {
            compress_pct: 75,
            compress_chunk: 4096,
            ..Default::default()
        };
        let (mut w, mut buffers, mut rng) = writer(content, 2, 8192);
        w.prepare(&mut buffers, 1, 8192, 0, 5, &mut rng);
        let slot = buffers.slot_mut(1);
        for chunk in slot.chunks(4096) {
            assert!(chunk[1024..].iter().all(|&b| b == 0));
            assert!(chunk[..1024].iter().filter(|&&b| b != 0).count() > 900);
        }
    }

    #[test]
    fn zeros_and_patterns_are_left_as_they_are() {
        let content = DataContent {
            pattern: DataPattern::Bytes(b"ab".to_vec()),
            ..Default::default()
        };
        let (mut w, mut buffers, mut rng) = writer(content, 1, 4096);
        w.prepare(&mut buffers, 0, 4096, 0, 1, &mut rng);
        assert!(buffers.slot_mut(0).chunks(2).all(|c| c == b"ab"));
    }

    #[test]
    fn the_sample_stops_at_its_cap() {
        let (mut w, _, _) = writer(DataContent::default(), 1, 4096);
        w.sample_cap = 8192;
        for _ in 0..5 {
            w.sample(&[1u8; 4096]);
        }
        assert_eq!(w.take_sample().len(), 8192);
    }
}
