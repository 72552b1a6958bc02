//! The header every block written with `--verify` starts with, and how a
//! block read back is judged. The format is documented in docs/SAFETY.md; it
//! carries enough (run id, generation, write time) for a later power-cut
//! checker to tell which acknowledged writes survived.

use serde::{Deserialize, Serialize};

pub const MAGIC: [u8; 8] = *b"FTHMBLK1";
pub const HEADER_LEN: usize = 64;

/// What a block header says, all fields little-endian on disk:
///
/// | bytes  | field          |
/// |--------|----------------|
/// | 0..8   | magic `FTHMBLK1` |
/// | 8..16  | offset         |
/// | 16..20 | length         |
/// | 20..24 | crc32c of bytes `64..length` (the payload) |
/// | 24..32 | generation     |
/// | 32..40 | run id         |
/// | 40..48 | seed           |
/// | 48..56 | write time, ns since the Unix epoch |
/// | 56..60 | flags: bit 0, the run writes its region in order from the start |
/// | 60..64 | crc32c of bytes `0..60` |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    pub offset: u64,
    pub length: u32,
    pub payload_crc: u32,
    pub generation: u64,
    pub run_id: u64,
    pub seed: u64,
    pub written_at_ns: u64,
    pub flags: u32,
}

/// A header flag: the run that wrote the block writes its region in order
/// from its start (one sequential worker), so every block before the last
/// one it wrote holds one of its headers: a later read-only check knows a
/// block without one was lost, not skipped.
pub const IN_ORDER: u32 = 1;

impl BlockHeader {
    /// Writes the header into the start of `block` (whose length is the
    /// block's) and checksums the payload that follows it.
    pub fn stamp(block: &mut [u8], offset: u64, generation: u64, run_id: u64, seed: u64) {
        Self::stamp_flagged(block, offset, generation, run_id, seed, 0);
    }

    /// As `stamp`, with `flags` ([`IN_ORDER`]).
    pub fn stamp_flagged(
        block: &mut [u8],
        offset: u64,
        generation: u64,
        run_id: u64,
        seed: u64,
        flags: u32,
    ) {
        let payload_crc = crc32c::crc32c(&block[HEADER_LEN..]);
        let written_at_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let length = block.len() as u32;
        let h = &mut block[..HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..16].copy_from_slice(&offset.to_le_bytes());
        h[16..20].copy_from_slice(&length.to_le_bytes());
        h[20..24].copy_from_slice(&payload_crc.to_le_bytes());
        h[24..32].copy_from_slice(&generation.to_le_bytes());
        h[32..40].copy_from_slice(&run_id.to_le_bytes());
        h[40..48].copy_from_slice(&seed.to_le_bytes());
        h[48..56].copy_from_slice(&written_at_ns.to_le_bytes());
        h[56..60].copy_from_slice(&flags.to_le_bytes());
        let header_crc = crc32c::crc32c(&h[..60]);
        h[60..64].copy_from_slice(&header_crc.to_le_bytes());
    }

    /// Parses a header whose magic and checksum are right.
    pub(crate) fn parse(block: &[u8]) -> Result<Option<BlockHeader>, &'static str> {
        let h = &block[..HEADER_LEN];
        if h[0..8] != MAGIC {
            return Ok(None);
        }
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        if crc32c::crc32c(&h[..60]) != u32_at(60) {
            return Err("header checksum mismatch");
        }
        Ok(Some(BlockHeader {
            offset: u64_at(8),
            length: u32_at(16),
            payload_crc: u32_at(20),
            generation: u64_at(24),
            run_id: u64_at(32),
            seed: u64_at(40),
            written_at_ns: u64_at(48),
            flags: u32_at(56),
        }))
    }
}

/// What the writer knows a block should hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    pub run_id: u64,
    pub generation: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Intact,
    /// An older write (or a block from an earlier run) where a newer one was
    /// acknowledged: a lost write.
    Stale,
    /// A valid block written for another offset: a misdirected write or read.
    Misplaced,
    /// Checksums or fields do not add up.
    Corrupt,
    /// No fathom header, where nothing says one should be (read-only checks).
    Unwritten,
}

/// Judges `block` (read from `offset`) against what should be there; with no
/// expectation (a read-only check of an earlier run), only against itself.
pub fn judge(block: &[u8], offset: u64, expected: Option<Expected>) -> (Verdict, String) {
    if block.len() < HEADER_LEN {
        return (Verdict::Corrupt, "block shorter than a header".into());
    }
    let header = match BlockHeader::parse(block) {
        Ok(Some(h)) => h,
        Ok(None) if expected.is_some() => {
            return (
                Verdict::Corrupt,
                "no fathom header where one was written".into(),
            );
        }
        Ok(None) => return (Verdict::Unwritten, "no fathom header".into()),
        Err(why) => return (Verdict::Corrupt, why.into()),
    };
    if header.length as usize != block.len() {
        return (
            Verdict::Corrupt,
            format!(
                "header says {} bytes, block has {}",
                header.length,
                block.len()
            ),
        );
    }
    if crc32c::crc32c(&block[HEADER_LEN..]) != header.payload_crc {
        return (Verdict::Corrupt, "payload checksum mismatch".into());
    }
    if header.offset != offset {
        return (
            Verdict::Misplaced,
            format!("holds the block written for offset {}", header.offset),
        );
    }
    let Some(expected) = expected else {
        return (Verdict::Intact, String::new());
    };
    if header.run_id != expected.run_id {
        return (
            Verdict::Stale,
            format!(
                "holds a block of an earlier run (generation {}), not generation {} of this one",
                header.generation, expected.generation
            ),
        );
    }
    match header.generation.cmp(&expected.generation) {
        std::cmp::Ordering::Equal => (Verdict::Intact, String::new()),
        std::cmp::Ordering::Less => (
            Verdict::Stale,
            format!(
                "generation {} where {} was acknowledged",
                header.generation, expected.generation
            ),
        ),
        std::cmp::Ordering::Greater => (
            Verdict::Corrupt,
            format!(
                "generation {} was never written (last was {})",
                header.generation, expected.generation
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_as_long_as_a_header_is_judged_on_its_content() {
        let (verdict, why) = judge(&[0u8; HEADER_LEN], 0, None);
        assert_eq!(
            (verdict, why.as_str()),
            (Verdict::Unwritten, "no fathom header")
        );
        let (verdict, _) = judge(&[0u8; HEADER_LEN - 1], 0, None);
        assert_eq!(verdict, Verdict::Corrupt);
    }

    fn block(offset: u64, generation: u64) -> Vec<u8> {
        let mut b: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        BlockHeader::stamp(&mut b, offset, generation, 42, 1);
        b
    }

    const EXPECT: Expected = Expected {
        run_id: 42,
        generation: 3,
    };

    #[test]
    fn intact_block_passes() {
        assert_eq!(
            judge(&block(8192, 3), 8192, Some(EXPECT)).0,
            Verdict::Intact
        );
        assert_eq!(judge(&block(8192, 1), 8192, None).0, Verdict::Intact);
    }

    #[test]
    fn each_fault_gets_its_kind() {
        let mut flipped = block(8192, 3);
        flipped[1000] ^= 0x10;
        assert_eq!(judge(&flipped, 8192, Some(EXPECT)).0, Verdict::Corrupt);
        let mut header_flip = block(8192, 3);
        header_flip[30] ^= 1;
        assert_eq!(judge(&header_flip, 8192, None).0, Verdict::Corrupt);
        assert_eq!(
            judge(&block(0, 3), 8192, Some(EXPECT)).0,
            Verdict::Misplaced
        );
        assert_eq!(judge(&block(8192, 2), 8192, Some(EXPECT)).0, Verdict::Stale);
        assert_eq!(
            judge(&block(8192, 4), 8192, Some(EXPECT)).0,
            Verdict::Corrupt
        );
        let other_run = Expected {
            run_id: 7,
            generation: 1,
        };
        assert_eq!(
            judge(&block(8192, 3), 8192, Some(other_run)).0,
            Verdict::Stale
        );
        let blank = vec![0u8; 4096];
        assert_eq!(judge(&blank, 0, Some(EXPECT)).0, Verdict::Corrupt);
        assert_eq!(judge(&blank, 0, None).0, Verdict::Unwritten);
    }

    #[test]
    fn header_round_trips() {
        let b = block(1 << 20, 9);
        let h = BlockHeader::parse(&b).unwrap().unwrap();
        assert_eq!(
            (h.offset, h.length, h.generation, h.run_id, h.seed),
            (1 << 20, 4096, 9, 42, 1)
        );
        assert!(h.written_at_ns > 0);
    }
}
