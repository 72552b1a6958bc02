//! A mix of block sizes, per direction: fio's `bssplit` (`4k/50:64k/50`)
//! and its read,write pairs (`bs=4k,64k`, written `4k/100,64k/100`).

use crate::util::units::{format_block_size, parse_size};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One block size and the share of a direction's I/Os that use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockShare {
    pub bs: u64,
    /// Percent of the direction's I/Os, 1 to 100; the shares of a
    /// direction add up to 100.
    pub percent: u8,
}

/// The block sizes reads and writes use (`--bssplit`). Serialized in
/// fio's own syntax, reads then writes: `4k/50:64k/50,16k/100`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct BlockSizeSplit {
    pub read: Vec<BlockShare>,
    pub write: Vec<BlockShare>,
}

impl BlockSizeSplit {
    /// The smallest size: the grid offsets are aligned to.
    pub fn smallest(&self) -> u64 {
        self.sizes().min().unwrap_or(4096)
    }

    pub fn largest(&self) -> u64 {
        self.sizes().max().unwrap_or(4096)
    }

    /// Every size the split issues, of reads and of writes.
    pub fn sizes(&self) -> impl Iterator<Item = u64> + '_ {
        self.read.iter().chain(&self.write).map(|s| s.bs)
    }

    /// Mean bytes per I/O of a workload with `read_percent` reads.
    pub fn mean(&self, read_percent: u8) -> f64 {
        let mean = |shares: &[BlockShare]| {
            shares
                .iter()
                .map(|s| s.bs as f64 * f64::from(s.percent) / 100.0)
                .sum::<f64>()
        };
        let r = f64::from(read_percent) / 100.0;
        r * mean(&self.read) + (1.0 - r) * mean(&self.write)
    }

    /// Whether every I/O has the same size.
    pub fn is_uniform(&self) -> bool {
        self.smallest() == self.largest()
    }

    /// Checks the sizes against the limits a plain `--bs` has and that
    /// each is a multiple of the smallest, so offsets on its grid never
    /// split a larger block.
    pub fn validate(&self, min: u64, max: u64) -> Result<(), String> {
        let small = self.smallest();
        for bs in self.sizes() {
            if !(min..=max).contains(&bs) {
                return Err(format!("block size {bs} is outside 512 to 16m"));
            }
            if !bs.is_multiple_of(small) {
                return Err(format!(
                    "block size {} is not a multiple of the smallest, {}",
                    format_block_size(bs),
                    format_block_size(small)
                ));
            }
        }
        Ok(())
    }
}

fn parse_direction(text: &str) -> Result<Vec<BlockShare>, String> {
    let mut sizes = Vec::new();
    for entry in text.split(':').map(str::trim) {
        let (size, pct) = entry.split_once('/').unwrap_or((entry, ""));
        let bs = parse_size(size.trim()).map_err(|e| format!("'{entry}': {e}"))?;
        let pct =
            match pct.trim() {
                "" => None,
                p => Some(p.parse::<u8>().ok().filter(|p| *p <= 100).ok_or_else(|| {
                    format!("'{entry}': '{p}' is not a percentage from 0 to 100")
                })?),
            };
        sizes.push((bs, pct));
    }
    // As fio: what the given shares leave is split evenly over the sizes
    // given without one.
    let given: u32 = sizes.iter().filter_map(|(_, p)| p.map(u32::from)).sum();
    let open = sizes.iter().filter(|(_, p)| p.is_none()).count() as u32;
    if given > 100 || (open == 0 && given != 100) {
        return Err(format!("'{text}': the shares add up to {given}%, not 100%"));
    }
    let mut left = 100 - given;
    let mut shares = Vec::new();
    let mut open_seen = 0;
    for (bs, pct) in sizes {
        let percent = match pct {
            Some(p) => p,
            None => {
                open_seen += 1;
                let share = if open_seen == open {
                    left
                } else {
                    (100 - given) / open
                };
                left -= share;
                share as u8
            }
        };
        if percent > 0 {
            shares.push(BlockShare { bs, percent });
        }
    }
    if shares.is_empty() {
        return Err(format!("'{text}': no size with a share above 0"));
    }
    Ok(shares)
}

impl FromStr for BlockSizeSplit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let (read, write) = match parts.as_slice() {
            [both] => (*both, *both),
            [read, write] => (*read, *write),
            _ => {
                return Err(format!(
                    "'{s}' is not SIZE/PCT:SIZE/PCT... for both directions, or READS,WRITES"
                ));
            }
        };
        // fio leaves a direction given as empty at its default.
        fn or_default(t: &str) -> &str {
            if t.is_empty() { "4k/100" } else { t }
        }
        Ok(BlockSizeSplit {
            read: parse_direction(or_default(read))?,
            write: parse_direction(or_default(write))?,
        })
    }
}

fn write_direction(f: &mut fmt::Formatter<'_>, shares: &[BlockShare]) -> fmt::Result {
    for (i, s) in shares.iter().enumerate() {
        if i > 0 {
            f.write_str(":")?;
        }
        write!(f, "{}/{}", format_block_size(s.bs), s.percent)?;
    }
    Ok(())
}

impl fmt::Display for BlockSizeSplit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_direction(f, &self.read)?;
        if self.write != self.read {
            f.write_str(",")?;
            write_direction(f, &self.write)?;
        }
        Ok(())
    }
}

impl From<BlockSizeSplit> for String {
    fn from(split: BlockSizeSplit) -> String {
        split.to_string()
    }
}

impl TryFrom<String> for BlockSizeSplit {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fios_syntax_parses_and_prints_back() {
        let s: BlockSizeSplit = "4k/50:64k/50".parse().unwrap();
        assert_eq!(s.read, s.write);
        assert_eq!(
            s.read[1],
            BlockShare {
                bs: 65536,
                percent: 50
            }
        );
        assert_eq!(s.to_string(), "4k/50:64k/50");
        let pair: BlockSizeSplit = "4k/100,64k/100".parse().unwrap();
        assert_eq!((pair.read[0].bs, pair.write[0].bs), (4096, 65536));
        assert_eq!(pair.to_string(), "4k/100,64k/100");
        assert_eq!((pair.smallest(), pair.largest()), (4096, 65536));
        assert_eq!(pair.mean(50), (4096.0 + 65536.0) / 2.0);
    }

    #[test]
    fn open_shares_split_what_is_left_as_fio_does() {
        let s: BlockSizeSplit = "4k/40:8k:16k".parse().unwrap();
        let pcts: Vec<u8> = s.read.iter().map(|x| x.percent).collect();
        assert_eq!(pcts, [40, 30, 30]);
        let s: BlockSizeSplit = "4k/10:8k:16k:32k".parse().unwrap();
        assert_eq!(
            s.read.iter().map(|x| u32::from(x.percent)).sum::<u32>(),
            100
        );
    }

    #[test]
    fn bad_shares_are_refused_with_the_entry() {
        for bad in [
            "4k/60:8k/60",
            "4k/50",
            "4k/x",
            "4q/100",
            "4k,8k,16k",
            "4k/0",
        ] {
            assert!(bad.parse::<BlockSizeSplit>().is_err(), "{bad}");
        }
        let odd: BlockSizeSplit = "4k/50:6k/50".parse().unwrap();
        assert!(
            odd.validate(512, 16 << 20)
                .unwrap_err()
                .contains("multiple")
        );
    }
}
