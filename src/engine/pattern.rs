//! Where each I/O goes: sequential (with holes, or backwards), or random
//! block offsets inside a worker's region, spread uniformly, by Zipf,
//! Pareto or a bell, or by zones, with runs of sequential I/Os mixed in.

use crate::spec::Distribution;
use rand::RngExt;
use rand::rngs::SmallRng;
use rand_distr::{Distribution as _, Normal, Zipf};

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

/// Where the next I/O of a worker goes.
pub struct OffsetPattern {
    region: Region,
    spread: Spread,
    /// The block after the previous I/O: where a sequential I/O goes.
    next_block: u64,
    /// Sequential: blocks skipped after each I/O; negative walks backwards.
    stride: i64,
    /// Random: percent of I/Os at a random offset; the rest follow on.
    random_percent: u8,
    /// Random: I/Os per random offset (the first at it, the rest after it).
    run: u32,
    left_in_run: u32,
    /// `--zones`: the region above is one zone's width, moved along.
    zones: Option<Zones>,
}

/// Where the zone I/O goes in now is, and how much it has done there.
struct Zones {
    /// Bytes of I/O in each zone.
    io: u64,
    /// From one zone's start to the next's: its width and the skip.
    step: u64,
    /// The whole region the zones move through.
    total: u64,
    /// The current zone's start, from the region's.
    at: u64,
    done: u64,
}

/// How random offsets are drawn; `None` for a sequential pattern.
enum Spread {
    Sequential,
    Uniform,
    Zipf {
        zipf: Zipf<f64>,
        /// Spreads hot ranks over the region instead of packing them at its
        /// start (as fio hashes them), so they are not all in one cache line
        /// of the device's mapping table.
        scatter: u64,
    },
    Pareto {
        power: f64,
        scatter: u64,
    },
    Normal(Normal<f64>),
    /// Zones as (cumulative percent of I/Os up to and including this
    /// zone, first block, blocks).
    Zoned(Vec<(u8, u64, u64)>),
    /// fio's `sequence`: the I/O numbered n goes to block `order[n % len]`,
    /// moved on by `len` blocks for each whole pass when `strided`. (Drawn
    /// in `pick` like the others, so that the hot path has no arm of its
    /// own for it: one cost 2.6% of the null engine's IOPS at depth 32.)
    Sequence {
        order: Vec<u64>,
        strided: bool,
        issued: std::cell::Cell<u64>,
    },
    /// Uniform, each block once a pass (fio's random map).
    Shuffled(Shuffle),
}

/// Each block of `0..n` once a pass, in an order drawn afresh for each
/// pass: a keyed Feistel permutation of the power of four at or above n,
/// walked on until it lands below n, so that it needs no memory whatever
/// the region's size (fio keeps a bitmap, or an LFSR whose order is the
/// same every pass). The workers of a target share the key and take
/// turns: worker j of k takes places j, j + k, j + 2k, ... of each pass.
struct Shuffle {
    n: u64,
    half_bits: u32,
    seed: u64,
    next: std::cell::Cell<u64>,
    step: u64,
}

impl Shuffle {
    fn new(n: u64, seed: u64, worker: u64, workers: u64) -> Self {
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        Shuffle {
            n,
            half_bits: bits.div_ceil(2),
            seed,
            next: std::cell::Cell::new(worker),
            step: workers.max(1),
        }
    }

    fn block(&self) -> u64 {
        let i = self.next.get();
        self.next.set(i + self.step);
        let key = mix(self.seed ^ mix(i / self.n));
        let mut x = i % self.n;
        // A walk of at most a few steps: the domain is under 4n.
        loop {
            x = self.permute(x, key);
            if x < self.n {
                return x;
            }
        }
    }

    fn permute(&self, x: u64, key: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for round in 0..4 {
            (left, right) = (right, left ^ (mix(right ^ key.wrapping_add(round)) & mask));
        }
        (left << self.half_bits) | right
    }
}

/// SplitMix64's finalizer: a cheap, well-spread hash of a word.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl OffsetPattern {
    /// Block after block, wrapping to the start at the end; `stride` bytes
    /// are skipped after each I/O (negative: backwards, as fio's `rw=read:-8k`).
    pub fn sequential(region: Region, stride: i64) -> Self {
        OffsetPattern {
            region,
            spread: Spread::Sequential,
            next_block: 0,
            stride: stride / region.bs.max(1) as i64,
            random_percent: 100,
            run: 1,
            left_in_run: 0,
            zones: None,
        }
    }

    /// Random offsets spread by `distribution`; `random_percent` of the
    /// I/Os at a random offset and each random offset starting a run of
    /// `run` I/Os. Fails when a `zoned_abs` zone reaches past the region.
    pub fn random(
        region: Region,
        distribution: &Distribution,
        random_percent: u8,
        run: u32,
    ) -> Result<Self, String> {
        let n = region.blocks.max(1);
        let spread = match distribution {
            Distribution::Uniform => Spread::Uniform,
            Distribution::Zipf { theta } => Spread::Zipf {
                zipf: Zipf::new(n as f64, *theta).expect("theta validated by the spec"),
                scatter: coprime_multiplier(n),
            },
            Distribution::Pareto { h } => Spread::Pareto {
                power: h.ln() / (1.0 - h).ln(),
                scatter: coprime_multiplier(n),
            },
            Distribution::Normal { deviation } => Spread::Normal(
                Normal::new(n as f64 / 2.0, (n as f64 * deviation / 100.0).max(0.5))
                    .expect("deviation validated by the spec"),
            ),
            Distribution::Zoned { zones } => {
                Spread::Zoned(zoned(n, zones.iter().map(|z| (z.percent, z.size, 100))))
            }
            Distribution::ZonedAbs { zones } => {
                let covered: u64 = zones.iter().map(|z| z.size).sum();
                if covered > region.len() {
                    return Err(format!(
                        "the zones of {distribution} cover {}, more than the region's {}",
                        crate::util::units::format_bytes(covered),
                        crate::util::units::format_bytes(region.len())
                    ));
                }
                Spread::Zoned(zoned(
                    n,
                    zones.iter().map(|z| (z.percent, z.size, region.len())),
                ))
            }
            Distribution::Sequence { blocks, strided } => {
                if let Some(past) = blocks.iter().find(|&&b| b >= n) {
                    return Err(format!(
                        "block {past} of {distribution} is past the region's {n} blocks"
                    ));
                }
                if blocks.is_empty() {
                    return Err(format!("{distribution} names no block"));
                }
                Spread::Sequence {
                    order: blocks.clone(),
                    strided: *strided,
                    issued: std::cell::Cell::new(0),
                }
            }
        };
        Ok(OffsetPattern {
            region,
            spread,
            next_block: 0,
            stride: 0,
            random_percent,
            run: run.max(1),
            left_in_run: 0,
            zones: None,
        })
    }

    /// A uniform spread takes each block once a pass (fio's random map),
    /// `worker` of `workers` taking its turns in an order all of them
    /// draw from `seed`; other spreads are left as they are.
    pub fn with_random_map(mut self, seed: u64, worker: u64, workers: u64) -> Self {
        if matches!(self.spread, Spread::Uniform) {
            self.spread = Spread::Shuffled(Shuffle::new(
                self.region.blocks.max(1),
                seed,
                worker,
                workers,
            ));
        }
        self
    }

    /// The pattern moved from zone to zone through `total` bytes: its
    /// region is one zone's width; after `zones.io` bytes in a zone the
    /// next starts `range + skip` further, and at the end the first again
    /// (fio's `zonemode=strided`).
    pub fn in_zones(mut self, zones: crate::spec::StridedZones, total: u64) -> Self {
        self.zones = Some(Zones {
            io: zones.io,
            step: zones.range + zones.skip,
            total,
            at: 0,
            done: 0,
        });
        self
    }

    /// The region the offsets fall in.
    pub fn region(&self) -> Region {
        self.region
    }

    pub fn is_sequential(&self) -> bool {
        matches!(self.spread, Spread::Sequential)
    }

    /// A sequential pattern goes on after `[offset, offset + len)`, where
    /// the I/O was moved to (a zone's write pointer), as fio's does.
    pub fn follow(&mut self, offset: u64, len: u64) {
        if self.is_sequential() && self.zones.is_none() && self.stride == 0 {
            let next = (offset + len).saturating_sub(self.region.start) / self.region.bs.max(1);
            self.next_block = next % self.region.blocks.max(1);
        }
    }

    /// The offset of the next I/O, `len` bytes long (a multiple of the
    /// region's block size); the I/O never reaches past the region.
    #[inline]
    pub fn next_offset(&mut self, rng: &mut SmallRng, len: u64) -> u64 {
        match self.zones.is_some() {
            false => self.next_in_region(rng, len),
            true => self.next_in_zone(rng, len),
        }
    }

    fn next_in_zone(&mut self, rng: &mut SmallRng, len: u64) -> u64 {
        let width = self.region.len();
        let z = self.zones.as_mut().expect("zoned");
        if z.done >= z.io {
            z.done = 0;
            z.at += z.step;
            // A zone that would reach past the end starts over at the first.
            if z.at + width > z.total {
                z.at = 0;
            }
            self.next_block = 0;
        }
        z.done += len;
        let at = z.at;
        at + self.next_in_region(rng, len)
    }

    #[inline]
    fn next_in_region(&mut self, rng: &mut SmallRng, len: u64) -> u64 {
        let blocks = self.region.blocks;
        // Most I/Os are one block: no division for them.
        let span = if len == self.region.bs {
            1
        } else {
            len.div_ceil(self.region.bs).clamp(1, blocks.max(1))
        };
        let block = match &self.spread {
            Spread::Sequential => {
                let block = if self.next_block + span > blocks {
                    0
                } else {
                    self.next_block
                };
                let next = (block + span) as i64 + self.stride;
                // As fio: walking backwards past the start goes on from the
                // end, one stride before it.
                self.next_block = if next < 0 {
                    (blocks as i64 + self.stride).max(0) as u64
                } else {
                    next as u64
                };
                return self.region.start + block * self.region.bs;
            }
            _ if self.left_in_run > 0 => {
                self.left_in_run -= 1;
                self.follow_on(span)
            }
            _ if self.random_percent < 100 && rng.random_range(0..100u8) >= self.random_percent => {
                self.follow_on(span)
            }
            spread => {
                self.left_in_run = self.run - 1;
                spread.pick(rng, blocks, span)
            }
        };
        self.next_block = block + span;
        self.region.start + block * self.region.bs
    }

    /// The block after the previous I/O, or the start when that one ended
    /// the region.
    fn follow_on(&self, span: u64) -> u64 {
        if self.next_block + span > self.region.blocks {
            0
        } else {
            self.next_block
        }
    }
}

impl Spread {
    /// A random block of `blocks` where `span` blocks fit.
    #[inline]
    fn pick(&self, rng: &mut SmallRng, blocks: u64, span: u64) -> u64 {
        let last = blocks.saturating_sub(span);
        let block = match self {
            Spread::Sequential => 0,
            // A strided pass past the region's end starts over at the
            // first pass (fio ends the job there; fathom's time-bound runs
            // go on).
            Spread::Sequence {
                order,
                strided,
                issued,
            } => {
                let n = issued.get();
                let len = order.len() as u64;
                let base = order[(n % len) as usize];
                let (block, next) = match *strided {
                    true if (n / len) * len + base + span <= blocks => {
                        ((n / len) * len + base, n + 1)
                    }
                    true => (base, n % len + 1),
                    false => (base, n + 1),
                };
                issued.set(next);
                block
            }
            Spread::Uniform => return rng.random_range(0..last + 1),
            Spread::Shuffled(shuffle) => shuffle.block(),
            Spread::Zipf { zipf, scatter } => {
                // Zipf ranks run from 1 to n; rank 1 is the hottest.
                let rank = (zipf.sample(rng) as u64).clamp(1, blocks) - 1;
                scattered(rank, *scatter, blocks)
            }
            Spread::Pareto { power, scatter } => {
                let r: f64 = rng.random();
                let rank = ((blocks - 1) as f64 * r.powf(*power)) as u64;
                scattered(rank, *scatter, blocks)
            }
            Spread::Normal(normal) => {
                // Redraw the tails that fall off the region, as a bell
                // truncated to it.
                let mut x = normal.sample(rng);
                for _ in 0..8 {
                    if (0.0..=last as f64).contains(&x) {
                        break;
                    }
                    x = normal.sample(rng);
                }
                x.clamp(0.0, last as f64) as u64
            }
            Spread::Zoned(zones) => {
                let r = rng.random_range(0..100u8);
                let &(_, first, n) = zones
                    .iter()
                    .find(|(upto, _, _)| r < *upto)
                    .unwrap_or(zones.last().expect("a zoned distribution has zones"));
                first + rng.random_range(0..n.max(1))
            }
        };
        block.min(last)
    }
}

fn scattered(rank: u64, scatter: u64, blocks: u64) -> u64 {
    ((rank as u128 * scatter as u128) % blocks as u128) as u64
}

/// Zones of `(percent of I/Os, size, size of the whole)` as block ranges of
/// a region of `blocks`, with the cumulative percent of I/Os of each.
fn zoned(blocks: u64, zones: impl Iterator<Item = (u8, u64, u64)>) -> Vec<(u8, u64, u64)> {
    let mut out = Vec::new();
    let (mut upto, mut covered) = (0u8, 0u128);
    for (percent, size, whole) in zones {
        let first = (covered * blocks as u128 / whole as u128) as u64;
        covered += size as u128;
        let end = ((covered * blocks as u128 / whole as u128) as u64).min(blocks);
        upto = upto.saturating_add(percent);
        if percent > 0 {
            out.push((
                upto,
                first.min(blocks - 1),
                end.saturating_sub(first).max(1),
            ));
        }
    }
    out
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

    #[test]
    fn a_random_map_takes_each_block_once_a_pass_in_a_new_order() {
        let mut rng = SmallRng::seed_from_u64(1);
        for n in [1u64, 2, 3, 5, 64, 1000, 4097] {
            let mut p = OffsetPattern::random(blocks(n), &Distribution::Uniform, 100, 1)
                .unwrap()
                .with_random_map(7, 0, 1);
            let pass = |p: &mut OffsetPattern, rng: &mut SmallRng| {
                (0..n)
                    .map(|_| p.next_offset(rng, 4096) / 4096)
                    .collect::<Vec<_>>()
            };
            let (first, second) = (pass(&mut p, &mut rng), pass(&mut p, &mut rng));
            for order in [&first, &second] {
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n = {n}");
            }
            if n >= 64 {
                assert_ne!(first, second, "a new order each pass");
                assert_ne!(first, (0..n).collect::<Vec<_>>(), "not in order");
            }
        }
    }

    #[test]
    fn the_workers_of_a_target_share_one_pass_between_them() {
        let mut rng = SmallRng::seed_from_u64(1);
        let n = 1000u64;
        let mut seen: Vec<u64> = (0..3u64)
            .flat_map(|j| {
                let mut p = OffsetPattern::random(blocks(n), &Distribution::Uniform, 100, 1)
                    .unwrap()
                    .with_random_map(7, j, 3);
                let share = n / 3 + u64::from(j < n % 3);
                (0..share)
                    .map(|_| p.next_offset(&mut rng, 4096) / 4096)
                    .collect::<Vec<_>>()
            })
            .collect();
        seen.sort();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn zones_move_on_after_their_io_and_wrap_at_the_end() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mib = 1u64 << 20;
        let zone = Region {
            start: 0,
            blocks: 16,
            bs: 64 << 10,
        };
        let zones = crate::spec::StridedZones {
            io: mib,
            range: mib,
            skip: 3 * mib,
        };
        let mut p = OffsetPattern::sequential(zone, 0).in_zones(zones, 16 * mib);
        let offsets: Vec<u64> = (0..16 * 5)
            .map(|_| p.next_offset(&mut rng, 64 << 10))
            .collect();
        // 16 I/Os in each zone, zones 4 MiB apart, the fifth back at 0.
        for (z, start) in [0, 4, 8, 12, 0].iter().enumerate() {
            let got = &offsets[z * 16..(z + 1) * 16];
            assert_eq!(got[0], start * mib, "zone {z}");
            assert!(
                got.windows(2).all(|w| w[1] == w[0] + (64 << 10)),
                "zone {z}"
            );
        }
        // Random offsets stay inside the zone of the moment.
        let mut p = OffsetPattern::random(zone, &Distribution::Uniform, 100, 1)
            .unwrap()
            .in_zones(zones, 16 * mib);
        for i in 0..64u64 {
            let o = p.next_offset(&mut rng, 64 << 10);
            let start = (i / 16) * 4 * mib;
            assert!((start..start + mib).contains(&o), "I/O {i} at {o}");
        }
    }
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
        let mut p = OffsetPattern::sequential(region(), 0);
        let offsets: Vec<u64> = (0..101).map(|_| p.next_offset(&mut rng, 4096)).collect();
        assert_eq!(offsets[0], 8192);
        assert_eq!(offsets[1], 8192 + 4096);
        assert_eq!(offsets[99], 8192 + 99 * 4096);
        assert_eq!(offsets[100], 8192);
    }

    #[test]
    fn uniform_stays_in_region_aligned_and_covers_it() {
        let mut rng = SmallRng::seed_from_u64(3);
        let r = region();
        let mut p = OffsetPattern::random(r, &Distribution::Uniform, 100, 1).unwrap();
        let mut seen = vec![false; r.blocks as usize];
        for _ in 0..10_000 {
            let off = p.next_offset(&mut rng, r.bs);
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
        let mut p = OffsetPattern::random(r, &Distribution::Zipf { theta: 1.2 }, 100, 1).unwrap();
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            let off = p.next_offset(&mut rng, r.bs);
            assert!(off < r.len() && off.is_multiple_of(512));
            counts[(off / 512) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top_ten: u32 = counts[..10].iter().sum();
        // A uniform spread would put 1% of I/Os on the 10 hottest blocks.
        assert!(top_ten > 30_000, "top ten blocks got {top_ten}");
    }

    fn offsets(p: &mut OffsetPattern, len: u64, n: usize) -> Vec<u64> {
        let mut rng = SmallRng::seed_from_u64(7);
        (0..n).map(|_| p.next_offset(&mut rng, len)).collect()
    }

    fn blocks(n: u64) -> Region {
        Region {
            start: 0,
            blocks: n,
            bs: 4096,
        }
    }

    /// fio 3.36's io_u.c: block `seq[n % len]`, plus `(n / len) * len`
    /// with random_sequence_stride; a block past the region is refused.
    #[test]
    fn a_sequence_repeats_or_walks_on_as_fios() {
        let mut rng = SmallRng::seed_from_u64(0);
        let seq = |strided| Distribution::Sequence {
            blocks: vec![2, 0, 1],
            strided,
        };
        let mut p = OffsetPattern::random(blocks(12), &seq(false), 100, 1).unwrap();
        let got: Vec<u64> = (0..6)
            .map(|_| p.next_offset(&mut rng, 4096) / 4096)
            .collect();
        assert_eq!(got, [2, 0, 1, 2, 0, 1]);
        let mut p = OffsetPattern::random(blocks(12), &seq(true), 100, 1).unwrap();
        let got: Vec<u64> = (0..14)
            .map(|_| p.next_offset(&mut rng, 4096) / 4096)
            .collect();
        // Past the region's end the walk starts over (fio ends the job).
        assert_eq!(got, [2, 0, 1, 5, 3, 4, 8, 6, 7, 11, 9, 10, 2, 0]);
        assert!(OffsetPattern::random(blocks(2), &seq(false), 100, 1).is_err());
        let parsed: Distribution = "sequence:2,0,1:strided".parse().unwrap();
        assert_eq!(parsed, seq(true));
        assert_eq!(parsed.to_string(), "sequence:2,0,1:strided");
    }

    #[test]
    fn strides_leave_holes_and_negative_ones_walk_back_as_fio_does() {
        let mut holes = OffsetPattern::sequential(blocks(256), 8192);
        let o = offsets(&mut holes, 4096, 4);
        assert_eq!(o, [0, 12288, 24576, 36864]);
        // fio's rw=read:-8k at 4k on 1m: 0, then 1040384 and down by 4k.
        let mut back = OffsetPattern::sequential(blocks(256), -8192);
        let o = offsets(&mut back, 4096, 257);
        assert_eq!(&o[..3], [0, 1040384, 1036288]);
        assert_eq!(o[255], 0);
        assert_eq!(o[256], 1040384);
    }

    #[test]
    fn larger_blocks_never_cross_the_end_of_the_region() {
        let r = blocks(10);
        let mut seq = OffsetPattern::sequential(r, 0);
        for off in offsets(&mut seq, 3 * 4096, 50) {
            assert!(off + 3 * 4096 <= r.len(), "{off}");
        }
        for d in [
            "uniform",
            "zipf:1.1",
            "pareto:0.3",
            "normal:40",
            "zoned:50/10:50/90",
        ] {
            let d: Distribution = d.parse().unwrap();
            let mut p = OffsetPattern::random(r, &d, 100, 1).unwrap();
            for off in offsets(&mut p, 4 * 4096, 2000) {
                assert!(
                    off + 4 * 4096 <= r.len() && off.is_multiple_of(4096),
                    "{d}: {off}"
                );
            }
        }
    }

    #[test]
    fn runs_follow_a_random_offset_as_fios_randread_colon_n() {
        let mut p = OffsetPattern::random(blocks(1 << 20), &Distribution::Uniform, 100, 8).unwrap();
        let o = offsets(&mut p, 4096, 16);
        for run in o.chunks(8) {
            for pair in run.windows(2) {
                assert_eq!(pair[1], pair[0] + 4096);
            }
        }
        assert_ne!(o[8], o[7] + 4096, "a new run starts at a new random offset");
    }

    #[test]
    fn a_share_of_random_offsets_leaves_the_rest_sequential() {
        let mut p = OffsetPattern::random(blocks(1 << 20), &Distribution::Uniform, 25, 1).unwrap();
        let o = offsets(&mut p, 4096, 10_000);
        let follow_on = o.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        assert!(
            (7000..8000).contains(&follow_on),
            "{follow_on} of 9,999 followed on"
        );
    }

    #[test]
    fn zones_get_their_share_of_the_ios() {
        let d: Distribution = "zoned:60/10:30/20:10/70".parse().unwrap();
        let mut p = OffsetPattern::random(blocks(1000), &d, 100, 1).unwrap();
        let o = offsets(&mut p, 4096, 100_000);
        let first = o.iter().filter(|&&x| x < 100 * 4096).count();
        let second = o
            .iter()
            .filter(|&&x| (100 * 4096..300 * 4096).contains(&x))
            .count();
        assert!((58_000..62_000).contains(&first), "{first}");
        assert!((28_000..32_000).contains(&second), "{second}");
        let abs: Distribution = "zoned_abs:90/40k:10/360k".parse().unwrap();
        let mut p = OffsetPattern::random(blocks(100), &abs, 100, 1).unwrap();
        let o = offsets(&mut p, 4096, 10_000);
        let hot = o.iter().filter(|&&x| x < 40 * 1024).count();
        assert!((8_800..9_200).contains(&hot), "{hot}");
        let too_big: Distribution = "zoned_abs:50/1m:50/1m".parse().unwrap();
        let e = OffsetPattern::random(blocks(100), &too_big, 100, 1)
            .err()
            .unwrap();
        assert!(e.contains("more than the region"), "{e}");
    }

    #[test]
    fn pareto_and_normal_are_skewed() {
        let r = blocks(1000);
        let hottest_tenth = |d: &str| {
            let d: Distribution = d.parse().unwrap();
            let mut p = OffsetPattern::random(r, &d, 100, 1).unwrap();
            let mut counts = vec![0u32; 1000];
            for off in offsets(&mut p, 4096, 50_000) {
                counts[(off / 4096) as usize] += 1;
            }
            counts.sort_unstable_by(|a, b| b.cmp(a));
            counts[..100].iter().sum::<u32>()
        };
        // Uniform puts 10% (5,000) on the hottest tenth, a little more by chance.
        assert!(hottest_tenth("uniform") < 8_000);
        assert!(hottest_tenth("pareto:0.2") > 25_000);
        assert!(hottest_tenth("normal:5") > 25_000);
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
