//! What a workload writes: fresh random data (the default), data that
//! compresses or deduplicates by a chosen share, zeros, or a pattern. Arrays
//! and file systems that compress or deduplicate give figures that depend
//! on it.

use crate::measure::reduction::DataReduction;
use serde::{Deserialize, Serialize};

/// The content of written blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DataContent {
    /// Share of each `compress_chunk` that compresses away (zeros after
    /// random bytes), as fio's `buffer_compress_percentage`.
    pub compress_pct: u8,
    /// The unit the share applies to (fio's `buffer_compress_chunk`).
    pub compress_chunk: u64,
    /// Share of written blocks that repeat an earlier block (fio's
    /// `dedupe_percentage`).
    pub dedupe_pct: u8,
    /// The earlier blocks repeats are drawn from, as a share of the region
    /// (fio's `dedupe_working_set_percentage`).
    pub dedupe_working_set_pct: u8,
    pub pattern: DataPattern,
}

impl Default for DataContent {
    fn default() -> Self {
        DataContent {
            compress_pct: 0,
            compress_chunk: 512,
            dedupe_pct: 0,
            dedupe_working_set_pct: 5,
            pattern: DataPattern::Random,
        }
    }
}

impl DataContent {
    /// The compression ratio asked for (2.0 for 50%); None when the content
    /// is not random data with a chosen share.
    pub fn asked_compression(&self) -> Option<f64> {
        (self.pattern == DataPattern::Random)
            .then(|| 100.0 / (100.0 - self.compress_pct.min(99) as f64))
    }

    /// The deduplication ratio asked for (1.43 for 30%).
    pub fn asked_dedupe(&self) -> Option<f64> {
        (self.pattern == DataPattern::Random)
            .then(|| 100.0 / (100.0 - self.dedupe_pct.min(99) as f64))
    }

    /// What `d` measured of data written as this asked:
    /// `data: compress 2.01:1 (asked 2:1), dedupe 1.43:1 (asked 30%)`.
    pub fn describe(&self, d: &DataReduction) -> String {
        let content = self;
        let mut compress = vec![format!("lz4 {:.2}:1", d.compress_lz4)];
        if let Some(asked) = d.asked_compress.filter(|_| content.compress_pct > 0) {
            compress.insert(0, format!("asked {}:1", trim(asked)));
        }
        let dedupe = match content.dedupe_pct {
            0 => String::new(),
            pct => format!(" (asked {pct}%)"),
        };
        let pattern = match content.pattern {
            crate::spec::content::DataPattern::Random => String::new(),
            ref p => format!(", pattern {p}"),
        };
        format!(
            "data: compress {:.2}:1 ({}), dedupe {:.2}:1{dedupe}{pattern}, from {} written",
            d.compress_zstd,
            compress.join("; "),
            d.dedupe,
            crate::util::units::format_bytes(d.sampled_bytes)
        )
    }

    /// Whether written blocks are fresh random data that neither compresses
    /// nor deduplicates.
    pub fn incompressible(&self) -> bool {
        self.pattern == DataPattern::Random && self.compress_pct == 0 && self.dedupe_pct == 0
    }
}

/// The bytes of each written block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum DataPattern {
    /// Random bytes, unique per sector unless told to repeat.
    Random,
    /// All zeros (fio's `zero_buffers`).
    Zeros,
    /// These bytes over and over (fio's `buffer_pattern`).
    Bytes(Vec<u8>),
}

impl std::str::FromStr for DataPattern {
    type Err = String;

    /// `random`, `zeros`, `0xHEX`, or a quoted string (`'abc'` or `"abc"`).
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        match t {
            "random" => return Ok(DataPattern::Random),
            "zeros" | "zero" => return Ok(DataPattern::Zeros),
            _ => {}
        }
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            if hex.is_empty() || hex.len() % 2 != 0 {
                return Err(format!(
                    "'{t}': a hex pattern needs an even number of digits after 0x"
                ));
            }
            return (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map(DataPattern::Bytes)
                .map_err(|_| format!("'{t}': not hex digits after 0x"));
        }
        for quote in ['\'', '"'] {
            if let Some(inner) = t.strip_prefix(quote).and_then(|r| r.strip_suffix(quote))
                && !inner.is_empty()
            {
                return Ok(DataPattern::Bytes(inner.as_bytes().to_vec()));
            }
        }
        Err(format!(
            "'{t}' is not random, zeros, 0xHEX or a quoted string ('abc')"
        ))
    }
}

impl std::fmt::Display for DataPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataPattern::Random => f.write_str("random"),
            DataPattern::Zeros => f.write_str("zeros"),
            DataPattern::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s)
                    if s.chars().all(|c| c.is_ascii_graphic() || c == ' ') && !s.contains('\'') =>
                {
                    write!(f, "'{s}'")
                }
                _ => {
                    f.write_str("0x")?;
                    b.iter().try_for_each(|x| write!(f, "{x:02x}"))
                }
            },
        }
    }
}

impl From<DataPattern> for String {
    fn from(p: DataPattern) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for DataPattern {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub use crate::util::units::parse_percent;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse_and_print_back() {
        for text in ["random", "zeros", "0xdeadbeef", "'fathom'"] {
            let p: DataPattern = text.parse().unwrap();
            assert_eq!(p.to_string(), text);
        }
        assert_eq!(
            "\"ab\"".parse::<DataPattern>().unwrap(),
            DataPattern::Bytes(b"ab".to_vec())
        );
        for bad in ["0x", "0xabc", "0xzz", "banana", "''"] {
            assert!(bad.parse::<DataPattern>().is_err(), "{bad}");
        }
    }

    #[test]
    fn asked_ratios() {
        let c = DataContent {
            compress_pct: 50,
            dedupe_pct: 30,
            ..Default::default()
        };
        assert_eq!(c.asked_compression(), Some(2.0));
        assert!((c.asked_dedupe().unwrap() - 1.4286).abs() < 1e-3);
        assert!(DataContent::default().incompressible());
    }

    #[test]
    fn percentages_are_0_to_100() {
        assert_eq!(parse_percent("75"), Ok(75));
        assert_eq!(parse_percent("100%"), Ok(100));
        assert!(parse_percent("101").is_err());
        assert!(parse_percent("-1").is_err());
    }

    #[test]
    fn the_line_says_what_was_asked() {
        let content = DataContent {
            compress_pct: 50,
            dedupe_pct: 30,
            ..Default::default()
        };
        let r = DataReduction {
            sampled_bytes: 8 << 20,
            unit_bytes: 4096,
            compress_zstd: 2.01,
            compress_lz4: 1.98,
            dedupe: 1.43,
            asked_compress: content.asked_compression(),
            asked_dedupe: content.asked_dedupe(),
        };
        assert_eq!(
            content.describe(&r),
            "data: compress 2.01:1 (asked 2:1; lz4 1.98:1), dedupe 1.43:1 (asked 30%), from 8 MiB written"
        );
    }
}
