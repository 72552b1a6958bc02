//! Page-aligned I/O buffers, one slot per in-flight I/O, allocated once per
//! worker so the hot loop never allocates.

use rand::Rng;
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// O_DIRECT needs buffers aligned to the logical block size; a page covers
/// every device in common use (512 B and 4 KiB sectors).
pub const BUFFER_ALIGN: usize = 4096;

pub struct Buffers {
    base: NonNull<u8>,
    layout: Layout,
    slot_len: usize,
    slots: usize,
}

// The memory is owned exclusively by this value; the engine that holds it
// moves with its worker thread.
unsafe impl Send for Buffers {}

impl Buffers {
    /// `slots` buffers of `slot_len` bytes, filled with random bytes so that
    /// written blocks cannot be compressed or deduplicated by the device.
    pub fn new(slots: usize, slot_len: usize, rng: &mut impl Rng) -> Self {
        let mut buffers = Buffers::zeroed(slots, slot_len);
        for slot in 0..slots {
            rng.fill_bytes(buffers.slot_mut(slot));
        }
        buffers
    }

    /// `slots` buffers of `slot_len` bytes, zeroed: for reads alone,
    /// where filling them would cost time for nothing.
    pub fn zeroed(slots: usize, slot_len: usize) -> Self {
        let slot_len = slot_len.next_multiple_of(BUFFER_ALIGN);
        let size = slot_len.checked_mul(slots).expect("buffer size overflows");
        let layout =
            Layout::from_size_align(size.max(BUFFER_ALIGN), BUFFER_ALIGN).expect("buffer layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let base = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Buffers {
            base,
            layout,
            slot_len,
            slots,
        }
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    pub fn slot_ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots);
        // SAFETY: slot is in bounds of the allocation.
        unsafe { self.base.as_ptr().add(slot * self.slot_len) }
    }

    pub fn slot_mut(&mut self, slot: usize) -> &mut [u8] {
        // SAFETY: in bounds, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(slot), self.slot_len) }
    }

    /// One iovec per slot, for registering the buffers with the kernel.
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|slot| libc::iovec {
                iov_base: self.slot_ptr(slot).cast(),
                iov_len: self.slot_len,
            })
            .collect()
    }

    /// Makes the block about to be written at `offset` unique: every 512-byte
    /// sector of its first `len` bytes starts with two words, one mixed from
    /// the sector's offset and one from this worker's write sequence number
    /// (each mix a bijection, so no two sectors of a worker's writes are
    /// alike, and the words look as random as the rest). Without it every
    /// write of a slot, and every 4 KiB of a large slot, would repeat itself,
    /// and a deduplicating device could store it once. Sixteen bytes per
    /// sector keep it cheap: 2 KiB of stores for a 64 KiB write.
    pub fn stamp(&mut self, slot: usize, len: usize, offset: u64, sequence: u64) {
        self.stamp_every(slot, len, offset, sequence, SECTOR);
    }

    /// As `stamp`, every `stride` bytes (a multiple of a sector: a compress
    /// chunk whose zeroed share must stay zero).
    pub fn stamp_every(
        &mut self,
        slot: usize,
        len: usize,
        offset: u64,
        sequence: u64,
        stride: usize,
    ) {
        let buf = self.slot_mut(slot);
        let len = len.min(buf.len());
        let write = splitmix64(sequence).to_le_bytes();
        for (i, unit) in buf[..len].chunks_mut(stride).enumerate() {
            if unit.len() < 16 {
                break;
            }
            let at = offset + (i * stride) as u64;
            unit[..8].copy_from_slice(&splitmix64(at).to_le_bytes());
            unit[8..16].copy_from_slice(&write);
        }
    }
}

/// SplitMix64's finaliser: a bijection on u64 that spreads every input bit.
#[inline]
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The smallest unit a device can deduplicate: every one written is unique.
pub const SECTOR: usize = 512;

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn slots_are_aligned_and_random() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let mut b = Buffers::new(4, 4096, &mut rng);
        for slot in 0..4 {
            assert_eq!(b.slot_ptr(slot) as usize % BUFFER_ALIGN, 0);
            assert!(b.slot_mut(slot).iter().any(|&x| x != 0));
        }
        assert_ne!(b.slot_mut(0).to_vec(), b.slot_mut(1).to_vec());
    }

    #[test]
    fn odd_sizes_round_up_to_alignment() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let b = Buffers::new(3, 1536, &mut rng);
        assert_eq!(b.slot_len(), 4096);
        assert_eq!(b.iovecs().len(), 3);
    }

    #[test]
    fn stamp_marks_every_sector_with_offset_and_sequence() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let mut b = Buffers::new(1, 4096, &mut rng);
        b.stamp(0, 4096, 0x1234, 7);
        let s = b.slot_mut(0).to_vec();
        let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap());
        assert_eq!(word(0), splitmix64(0x1234));
        assert_eq!(word(8), splitmix64(7));
        let last = 7 * SECTOR;
        assert_eq!(word(last), splitmix64(0x1234 + last as u64));
        assert_eq!(word(last + 8), splitmix64(7));
    }

    #[test]
    fn every_sector_of_every_write_is_unique() {
        use std::collections::HashSet;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let bs = 64 << 10;
        let mut b = Buffers::new(2, bs, &mut rng);
        let mut seen = HashSet::new();
        let mut sectors = 0;
        for sequence in 0..8u64 {
            let slot = (sequence % 2) as usize;
            // The same offset again and again: only the sequence differs.
            b.stamp(slot, bs, 1 << 20, sequence);
            for sector in b.slot_mut(slot)[..bs].chunks(SECTOR) {
                seen.insert(sector.to_vec());
                sectors += 1;
            }
        }
        assert_eq!(seen.len(), sectors);
    }
}
