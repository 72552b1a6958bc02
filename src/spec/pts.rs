//! What `fathom pts` runs: one test of SNIA's Solid State Performance Test
//! Specification on one device, and how (active range, rounds, purge,
//! outstanding I/O). Written into the result so a test can be repeated.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The tests of the specification fathom runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PtsTest {
    /// Random IOPS over block sizes and read/write mixes.
    Iops,
    /// 128k and 1024k sequential reads and writes.
    Throughput,
    /// 0.5k, 4k and 8k random at one thread, depth 1: mean, max, five nines.
    Latency,
    /// 4k random writes until 4x the active range is written.
    WriteSaturation,
}

impl PtsTest {
    pub const ALL: [PtsTest; 4] = [
        PtsTest::Iops,
        PtsTest::Throughput,
        PtsTest::Latency,
        PtsTest::WriteSaturation,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PtsTest::Iops => "iops",
            PtsTest::Throughput => "throughput",
            PtsTest::Latency => "latency",
            PtsTest::WriteSaturation => "write-saturation",
        }
    }

    /// The block sizes of the test, as the specification lists them.
    pub fn block_sizes(self) -> Vec<u64> {
        match self {
            PtsTest::Iops => vec![
                512,
                4 << 10,
                8 << 10,
                16 << 10,
                32 << 10,
                64 << 10,
                128 << 10,
                1 << 20,
            ],
            PtsTest::Throughput => vec![128 << 10, 1 << 20],
            PtsTest::Latency => vec![512, 4 << 10, 8 << 10],
            PtsTest::WriteSaturation => vec![4 << 10],
        }
    }

    /// Its read/write mixes, as the share of reads.
    pub fn mixes(self) -> Vec<u8> {
        match self {
            PtsTest::Iops => vec![100, 95, 65, 50, 35, 5, 0],
            PtsTest::Throughput => vec![0, 100],
            PtsTest::Latency => vec![100, 65, 0],
            PtsTest::WriteSaturation => vec![0],
        }
    }
}

impl fmt::Display for PtsTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PtsTest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        PtsTest::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown test '{s}' (expected iops, throughput, latency or write-saturation)"
                )
            })
    }
}

/// How the device is returned to a fresh state before a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purge {
    /// A discard of the whole active range.
    Discard,
    /// NVMe's Format NVM with a user data erase, of the whole namespace.
    Format,
    /// NVMe's Sanitize: refused for now, with the controller's reason.
    Sanitize,
    /// No purge: the test is then not compliant with the specification.
    None,
}

impl Purge {
    pub fn name(self) -> &'static str {
        match self {
            Purge::Discard => "discard",
            Purge::Format => "format",
            Purge::Sanitize => "sanitize",
            Purge::None => "none",
        }
    }
}

impl FromStr for Purge {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "discard" => Ok(Purge::Discard),
            "format" | "nvme-format" => Ok(Purge::Format),
            "sanitize" => Ok(Purge::Sanitize),
            "none" => Ok(Purge::None),
            _ => Err(format!(
                "unknown purge '{s}' (expected discard, format, sanitize or none)"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtsSpec {
    pub test: PtsTest,
    /// The block device, as given.
    pub device: String,
    /// Share of the device the test uses, from its start, in percent.
    pub active_range_pct: u8,
    /// How long each cell of a round runs, in seconds (write saturation:
    /// each round).
    pub round_s: f64,
    /// Rounds before the test stops without steady state.
    pub max_rounds: u32,
    pub purge: Purge,
    /// Workers and I/Os in flight per worker (outstanding I/O = both).
    pub threads: u32,
    pub depth: u32,
    /// The matrix run, when not the whole of the test's (not compliant).
    pub block_sizes: Vec<u64>,
    pub mixes: Vec<u8>,
    /// Write saturation: the longest it runs.
    pub max_time_s: f64,
    #[serde(default)]
    pub destroy_data: bool,
    #[serde(default)]
    pub even_if_mounted: bool,
    pub engine: crate::spec::EngineKind,
}

impl PtsSpec {
    /// Checks what can be checked without the device.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.round_s >= 1.0 && self.round_s.is_finite()) {
            return Err(format!(
                "--round {}s: a round of a cell lasts at least 1s",
                self.round_s
            ));
        }
        if !(1..=100).contains(&self.active_range_pct) {
            return Err(format!(
                "--active-range {}: a share of the device from 1 to 100",
                self.active_range_pct
            ));
        }
        if self.max_rounds < 5 {
            return Err(format!(
                "--max-rounds {}: the steady-state window is 5 rounds",
                self.max_rounds
            ));
        }
        if self.threads == 0 || self.depth == 0 {
            return Err("--threads and --depth: at least 1 each".into());
        }
        if self.block_sizes.is_empty() || self.mixes.is_empty() {
            return Err("--block-sizes and --mixes: at least one each".into());
        }
        if let Some(m) = self.mixes.iter().find(|m| **m > 100) {
            return Err(format!("--mixes: {m} reads in 100"));
        }
        Ok(())
    }

    /// Ways this test departs from the specification (empty: compliant).
    pub fn departures(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.purge == Purge::None {
            out.push("no purge before the test".into());
        }
        if self.block_sizes != self.test.block_sizes() || self.mixes != self.test.mixes() {
            out.push("a part of the test's matrix".into());
        }
        if self.round_s < 60.0 && self.test != PtsTest::WriteSaturation {
            out.push(format!("cells of {}s, not one minute", self.round_s));
        }
        out
    }
}
