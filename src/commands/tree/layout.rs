//! Where each directory and file of a tree is, computed from its index, so
//! that a tree of millions of files needs no list of them in memory; and
//! the orders they are visited in, each a permutation computed item by
//! item rather than a shuffled list.

use crate::spec::tree::TreeShape;
use std::path::{Path, PathBuf};

pub struct Layout {
    pub root: PathBuf,
    pub shape: TreeShape,
}

impl Layout {
    /// Directory `index` of level `level` (1 or deeper): `d3/d0/d7`, one
    /// digit in base `width` per level.
    pub fn dir(&self, level: u32, index: u64) -> PathBuf {
        self.root.join(self.dir_below(level, index))
    }

    /// Directory `index` of level `level`, below the root (level 0: the
    /// root, an empty path).
    pub fn dir_below(&self, level: u32, index: u64) -> PathBuf {
        let mut path = PathBuf::new();
        let width = self.shape.width as u64;
        let mut digits = Vec::with_capacity(level as usize);
        let mut rest = index;
        for _ in 0..level {
            digits.push(rest % width);
            rest /= width;
        }
        for d in digits.iter().rev() {
            path.push(format!("d{d}"));
        }
        path
    }

    /// Directory `index` of level `level` (1 or deeper) as the directory
    /// it is in (its level and index) and its name there.
    pub fn parent_of_dir(&self, level: u32, index: u64) -> ((u32, u64), String) {
        let width = self.shape.width as u64;
        ((level - 1, index / width), format!("d{}", index % width))
    }

    /// The leaf's level and index, as `dir_below` takes them.
    pub fn leaf_dir(&self, leaf: u64) -> (u32, u64) {
        (
            self.shape.depth,
            if self.shape.depth == 0 { 0 } else { leaf },
        )
    }

    /// The directory leaf `leaf`'s files are in.
    pub fn leaf(&self, leaf: u64) -> PathBuf {
        match self.shape.depth {
            0 => self.root.clone(),
            depth => self.dir(depth, leaf),
        }
    }

    /// File `item` (leaf by leaf), by its name before or after the rename
    /// phase.
    pub fn file(&self, item: u64, renamed: bool) -> PathBuf {
        let files = self.shape.files.max(1);
        let mut path = self.leaf(item / files);
        path.push(file_name(item % files, renamed));
        path
    }

    /// The leaf `item` is in.
    pub fn leaf_of(&self, item: u64) -> u64 {
        item / self.shape.files.max(1)
    }

    /// The marker of rank `rank`'s part of the tree: the tree's own marker
    /// for rank 0 (or a tree of one process), a part of it for the other
    /// ranks sharing it (their threads' counts).
    pub fn marker(&self, rank: u32) -> PathBuf {
        crate::gate::marked::part_in(&self.root, rank)
    }
}

pub fn file_name(k: u64, renamed: bool) -> String {
    if renamed {
        format!("r{k}")
    } else {
        format!("f{k}")
    }
}

/// The tree's own directory inside DIR: `fathom-tree`, or under `--mpi`
/// each rank's own, `fathom-tree.rankN`, unless the ranks share one.
pub fn root_in(dir: &Path, rank: Option<u32>, shared: bool) -> PathBuf {
    match rank {
        Some(r) if !shared => dir.join(format!("fathom-tree.rank{r}")),
        _ => dir.join("fathom-tree"),
    }
}

/// The share of `n` items that thread `t` of `threads` works on: a run of
/// consecutive items, so that threads work in directories of their own
/// (as mdtest's ranks do) unless the leaves are fewer than the threads.
pub fn share(n: u64, t: u32, threads: u32) -> std::ops::Range<u64> {
    let t = t as u64;
    let threads = threads.max(1) as u64;
    (n * t / threads)..(n * (t + 1) / threads)
}

/// A permutation of `0..n` drawn from a seed, computed one position at a
/// time: a four-round Feistel network on the smallest even power of two
/// that holds `n`, walked until it lands inside (each walk takes fewer
/// than four steps on average), so a million items need no list.
#[derive(Clone, Copy, Debug)]
pub struct Shuffle {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Shuffle {
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut state = seed;
        let keys = [(); 4].map(|_| {
            state = splitmix(state);
            state
        });
        Shuffle { n, half_bits, keys }
    }

    /// The item at position `i` (below `n`).
    pub fn at(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = i;
        loop {
            x = self.round_trip(x);
            if x < self.n {
                return x;
            }
        }
    }

    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            let f = splitmix(right ^ key) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }
}

/// SplitMix64's finaliser: a well-mixed 64-bit value from any other.
pub fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The order a phase visits a thread's items in: as made, or shuffled.
#[derive(Clone, Copy, Debug)]
pub enum Order {
    AsMade,
    Shuffled(Shuffle),
}

impl Order {
    pub fn new(n: u64, random: bool, seed: u64) -> Self {
        match random {
            true => Order::Shuffled(Shuffle::new(n, seed)),
            false => Order::AsMade,
        }
    }

    pub fn at(&self, i: u64) -> u64 {
        match self {
            Order::AsMade => i,
            Order::Shuffled(s) => s.at(i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shuffle_is_a_permutation_and_not_the_identity() {
        for n in [1u64, 2, 3, 10, 1000, 4097] {
            let s = Shuffle::new(n, 7);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = s.at(i);
                assert!(!seen[x as usize], "{x} twice in {n}");
                seen[x as usize] = true;
            }
            if n >= 10 {
                assert!((0..n).filter(|&i| s.at(i) == i).count() < n as usize / 2);
            }
        }
        let (a, b) = (Shuffle::new(1000, 1), Shuffle::new(1000, 2));
        assert!((0..1000).any(|i| a.at(i) != b.at(i)), "the seed matters");
    }

    #[test]
    fn paths_follow_the_shape_and_shares_cover_every_item_once() {
        let layout = Layout {
            root: PathBuf::from("/t"),
            shape: TreeShape {
                depth: 2,
                width: 3,
                files: 4,
            },
        };
        assert_eq!(layout.dir(1, 2), Path::new("/t/d2"));
        assert_eq!(layout.dir(2, 5), Path::new("/t/d1/d2"));
        assert_eq!(layout.file(4 * 5 + 3, false), Path::new("/t/d1/d2/f3"));
        assert_eq!(layout.file(0, true), Path::new("/t/d0/d0/r0"));
        let flat = Layout {
            root: PathBuf::from("/t"),
            shape: TreeShape {
                depth: 0,
                width: 3,
                files: 4,
            },
        };
        assert_eq!(flat.file(3, false), Path::new("/t/f3"));
        let n = 37;
        let mut covered = 0;
        for t in 0..5 {
            let r = share(n, t, 5);
            assert_eq!(r.start, covered);
            covered = r.end;
        }
        assert_eq!(covered, n);
    }
}
