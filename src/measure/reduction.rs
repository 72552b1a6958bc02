//! How far what was written reduces: measured on the first blocks each
//! worker wrote, with real compressors (zstd at level 1 and lz4, per 4 KiB
//! unit, as arrays and file systems compress) and by counting distinct
//! units (as they deduplicate). Never the generator's own arithmetic: the
//! bytes themselves.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// The unit data is compressed and deduplicated in, unless blocks are
/// smaller.
pub const UNIT: usize = 4096;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataReduction {
    /// Bytes of written blocks measured.
    pub sampled_bytes: u64,
    /// The unit compressed and compared, in bytes.
    pub unit_bytes: u64,
    /// Bytes in over bytes out, each unit compressed alone (a unit that
    /// grows is counted as stored as it is).
    pub compress_zstd: f64,
    pub compress_lz4: f64,
    /// Units over distinct units.
    pub dedupe: f64,
    /// What was asked (`--compress`, `--dedupe` as ratios); absent for
    /// zeros and patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_compress: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_dedupe: Option<f64>,
}

impl DataReduction {
    /// Whether data meant to be incompressible and unique reduced anyway.
    pub fn reducible(&self) -> bool {
        self.compress_zstd > 1.05 || self.dedupe > 1.05
    }
}

/// Measures `written` (whole blocks of `bs` bytes, in the order written);
/// None when nothing was written.
/// The ratios asked for are the caller's to fill in.
pub fn measure(written: &[u8], bs: u64) -> Option<DataReduction> {
    let unit = (bs as usize).clamp(1, UNIT);
    let units = written.len() / unit;
    if units == 0 {
        return None;
    }
    let mut zstd_out = 0usize;
    let mut lz4_out = 0usize;
    let mut distinct: HashSet<u64> = HashSet::with_capacity(units);
    let mut compressor = zstd::bulk::Compressor::new(1).ok()?;
    for u in written.chunks_exact(unit) {
        let z = compressor.compress(u).map_or(unit, |c| c.len());
        zstd_out += z.min(unit);
        lz4_out += lz4_flex::block::compress(u).len().min(unit);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        u.hash(&mut h);
        distinct.insert(h.finish());
    }
    let bytes = units * unit;
    Some(DataReduction {
        sampled_bytes: bytes as u64,
        unit_bytes: unit as u64,
        compress_zstd: bytes as f64 / zstd_out.max(1) as f64,
        compress_lz4: bytes as f64 / lz4_out.max(1) as f64,
        dedupe: units as f64 / distinct.len().max(1) as f64,
        asked_compress: None,
        asked_dedupe: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn random_data_does_not_reduce_and_zeros_do() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let mut random = vec![0u8; 1 << 20];
        rng.fill(&mut random[..]);
        let r = measure(&random, 4096).unwrap();
        assert!(r.compress_zstd < 1.01 && r.dedupe == 1.0, "{r:?}");
        assert!(!r.reducible());
        let zeros = vec![0u8; 1 << 20];
        let z = measure(&zeros, 4096).unwrap();
        assert!(z.compress_zstd > 50.0 && z.dedupe == 256.0, "{z:?}");
        assert!(z.reducible());
    }

    #[test]
    fn half_random_half_zero_compresses_two_to_one() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(2);
        let mut data = vec![0u8; 1 << 20];
        for chunk in data.chunks_mut(512) {
            rng.fill(&mut chunk[..256]);
        }
        let r = measure(&data, 4096).unwrap();
        assert!((r.compress_zstd - 2.0).abs() < 0.1, "{r:?}");
        assert!((r.compress_lz4 - 2.0).abs() < 0.15, "{r:?}");
    }
}
