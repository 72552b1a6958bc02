//! Where each I/O goes: sequential, uniformly random or Zipf-skewed block
//! offsets inside a worker's region.

use crate::spec::Distribution;
use rand::RngExt;
use rand::rngs::SmallRng;
use rand_distr::{Distribution as _, Zipf};

/// A block-aligned region of the target: `[start, start + blocks * bs)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub blocks: u64,
    pub bs: u64,
}

impl Region {
    pub fn len(&self) -> u64 {
        self.blocks * self.bs
    }

    pub fn is_empty(&self) -> bool {
        self.blocks == 0
    }
}

pub enum OffsetPattern {
    /// Block after block, wrapping to the start at the end.
    Sequential {
        region: Region,
        next_block: u64,
    },
    Uniform {
        region: Region,
    },
    Zipf {
        region: Region,
        zipf: Zipf<f64>,
        /// Spreads hot ranks over the region instead of packing them at its
        /// start (as fio does), so they are not all in one cache line of the
        /// device's mapping table.
        scatter: u64,
    },
}

impl OffsetPattern {
    pub fn sequential(region: Region) -> Self {
        OffsetPattern::Sequential {
            region,
            next_block: 0,
        }
    }

    pub fn random(region: Region, distribution: Distribution) -> Self {
        match distribution {
            Distribution::Uniform => OffsetPattern::Uniform { region },
            Distribution::Zipf { theta } => OffsetPattern::Zipf {
                region,
                zipf: Zipf::new(region.blocks as f64, theta).expect("theta validated by the spec"),
                scatter: coprime_multiplier(region.blocks),
            },
        }
    }

    #[inline]
    pub fn next_offset(&mut self, rng: &mut SmallRng) -> u64 {
        match self {
            OffsetPattern::Sequential { region, next_block } => {
                let block = *next_block;
                *next_block = if block + 1 >= region.blocks {
                    0
                } else {
                    block + 1
                };
                region.start + block * region.bs
            }
            OffsetPattern::Uniform { region } => {
                region.start + rng.random_range(0..region.blocks) * region.bs
            }
            OffsetPattern::Zipf {
                region,
                zipf,
                scatter,
            } => {
                // Zipf ranks run from 1 to n; rank 1 is the hottest.
                let rank = (zipf.sample(rng) as u64).clamp(1, region.blocks) - 1;
                let block = ((rank as u128 * *scatter as u128) % region.blocks as u128) as u64;
                region.start + block * region.bs
            }
        }
    }
}

/// An odd multiplier near the golden ratio of `n` with no factor in common
/// with `n`, so `rank * m mod n` is a permutation of `0..n`.
fn coprime_multiplier(n: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut m = ((n as f64 * 0.618_033_988_7) as u64) | 1;
    while gcd(m, n) != 1 {
        m += 2;
    }
    m
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn region() -> Region {
        Region {
            start: 8192,
            blocks: 100,
            bs: 4096,
        }
    }

    #[test]
    fn sequential_walks_and_wraps() {
        let mut rng = SmallRng::seed_from_u64(0);
        let mut p = OffsetPattern::sequential(region());
        let offsets: Vec<u64> = (0..101).map(|_| p.next_offset(&mut rng)).collect();
        assert_eq!(offsets[0], 8192);
        assert_eq!(offsets[1], 8192 + 4096);
        assert_eq!(offsets[99], 8192 + 99 * 4096);
        assert_eq!(offsets[100], 8192);
    }

    #[test]
    fn uniform_stays_in_region_aligned_and_covers_it() {
        let mut rng = SmallRng::seed_from_u64(3);
        let r = region();
        let mut p = OffsetPattern::random(r, Distribution::Uniform);
        let mut seen = vec![false; r.blocks as usize];
        for _ in 0..10_000 {
            let off = p.next_offset(&mut rng);
            assert!(off >= r.start && off < r.start + r.len());
            assert_eq!((off - r.start) % r.bs, 0);
            seen[((off - r.start) / r.bs) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn zipf_is_skewed_and_in_region() {
        let mut rng = SmallRng::seed_from_u64(3);
        let r = Region {
            start: 0,
            blocks: 1000,
            bs: 512,
        };
        let mut p = OffsetPattern::random(r, Distribution::Zipf { theta: 1.2 });
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            let off = p.next_offset(&mut rng);
            assert!(off < r.len() && off.is_multiple_of(512));
            counts[(off / 512) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top_ten: u32 = counts[..10].iter().sum();
        // A uniform spread would put 1% of I/Os on the 10 hottest blocks.
        assert!(top_ten > 30_000, "top ten blocks got {top_ten}");
    }

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1u64, 2, 3, 10, 64, 1000, 4096] {
            let m = coprime_multiplier(n);
            let mut hit = vec![false; n as usize];
            for rank in 0..n {
                hit[((rank * m) % n) as usize] = true;
            }
            assert!(hit.iter().all(|&h| h), "n={n} m={m}");
        }
    }
}
