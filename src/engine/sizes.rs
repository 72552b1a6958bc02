//! How long each I/O is: one block size, or a draw from `--bssplit`'s
//! shares for the I/O's direction.

use super::Direction;
use crate::spec::BlockSizeSplit;
use crate::spec::block_sizes::BlockShare;
use rand::RngExt;
use rand::rngs::SmallRng;

pub struct BlockSizes {
    /// Per direction (read, write): (size, cumulative percent up to it).
    shares: [Vec<(u32, u8)>; 2],
    largest: u32,
    /// Every I/O of either direction has this size.
    fixed: Option<u32>,
}

impl BlockSizes {
    pub fn fixed(bs: u32) -> Self {
        BlockSizes {
            shares: [vec![(bs, 100)], vec![(bs, 100)]],
            largest: bs,
            fixed: Some(bs),
        }
    }

    pub fn split(split: &BlockSizeSplit) -> Self {
        let cumulative = |shares: &[BlockShare]| {
            let mut upto = 0u8;
            shares
                .iter()
                .map(|s| {
                    upto += s.percent;
                    (s.bs as u32, upto)
                })
                .collect()
        };
        BlockSizes {
            shares: [cumulative(&split.read), cumulative(&split.write)],
            largest: split.largest() as u32,
            fixed: split.is_uniform().then(|| split.largest() as u32),
        }
    }

    /// The largest size: what a buffer slot must hold.
    pub fn largest(&self) -> u32 {
        self.largest
    }

    /// The length of the next I/O in direction `dir`; draws from the rng
    /// only when the direction has several sizes.
    #[inline]
    pub fn pick(&self, dir: Direction, rng: &mut SmallRng) -> u32 {
        if let Some(bs) = self.fixed {
            return bs;
        }
        // Trims take the sizes of writes, as a trim stands where a write
        // would (trimwrite trims exactly the block it writes next).
        let shares = match dir {
            Direction::Read => &self.shares[0],
            Direction::Write | Direction::Trim => &self.shares[1],
        };
        if let [(bs, _)] = shares.as_slice() {
            return *bs;
        }
        let r = rng.random_range(0..100u8);
        shares
            .iter()
            .find(|(_, upto)| r < *upto)
            .unwrap_or(&shares[shares.len() - 1])
            .0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn each_direction_draws_its_own_sizes_in_their_shares() {
        let split: BlockSizeSplit = "4k/25:64k/75,16k/100".parse().unwrap();
        let sizes = BlockSizes::split(&split);
        let mut rng = SmallRng::seed_from_u64(1);
        let big = (0..10_000)
            .filter(|_| sizes.pick(Direction::Read, &mut rng) == 65536)
            .count();
        assert!((7_200..7_800).contains(&big), "{big}");
        assert!((0..100).all(|_| sizes.pick(Direction::Write, &mut rng) == 16384));
        assert_eq!(sizes.largest(), 65536);
        assert_eq!(
            BlockSizes::fixed(4096).pick(Direction::Write, &mut rng),
            4096
        );
    }
}
