//! How offsets are drawn over a target: uniform, zipf, pareto, normal or
//! zoned (`--random-distribution`, fio's names).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How random offsets are spread over the region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent `theta` (> 0, != 1 is not required): a few blocks are hot.
    Zipf {
        theta: f64,
    },
    /// Pareto with fio's power `h` (0 < h < 1), computed as fio does: the
    /// smaller `h`, the more I/Os the hottest blocks get.
    Pareto {
        h: f64,
    },
    /// A bell around the middle of the region whose standard deviation is
    /// `deviation` percent of it.
    Normal {
        deviation: f64,
    },
    /// `percent` of the I/Os fall in the next `share` percent of the region,
    /// zone after zone (fio's `zoned:60/10:30/20:10/70`).
    Zoned {
        zones: Vec<Zone>,
    },
    /// As `Zoned`, with each zone's size in bytes (fio's `zoned_abs`).
    ZonedAbs {
        zones: Vec<Zone>,
    },
    /// These blocks, in this order, over and over (fio 3.36's `sequence`);
    /// `strided`: each pass moves on by the sequence's length, so the
    /// pattern walks the region (`random_sequence_stride`).
    Sequence {
        blocks: Vec<u64>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        strided: bool,
    },
}

/// One zone of a zoned distribution: the share of I/Os it gets, and its
/// size (percent of the region, or bytes for `zoned_abs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub percent: u8,
    pub size: u64,
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let zones = |f: &mut fmt::Formatter<'_>, zones: &[Zone], bytes: bool| {
            for (i, z) in zones.iter().enumerate() {
                let sep = if i == 0 { "" } else { ":" };
                if bytes {
                    write!(
                        f,
                        "{sep}{}/{}",
                        z.percent,
                        crate::util::units::format_block_size(z.size)
                    )?;
                } else {
                    write!(f, "{sep}{}/{}", z.percent, z.size)?;
                }
            }
            Ok(())
        };
        match self {
            Distribution::Uniform => f.write_str("uniform"),
            Distribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            Distribution::Pareto { h } => write!(f, "pareto:{h}"),
            Distribution::Normal { deviation } => write!(f, "normal:{deviation}"),
            Distribution::Zoned { zones: z } => {
                f.write_str("zoned:")?;
                zones(f, z, false)
            }
            Distribution::ZonedAbs { zones: z } => {
                f.write_str("zoned_abs:")?;
                zones(f, z, true)
            }
            Distribution::Sequence { blocks, strided } => {
                let list: Vec<String> = blocks.iter().map(u64::to_string).collect();
                write!(f, "sequence:{}", list.join(","))?;
                if *strided {
                    f.write_str(":strided")?;
                }
                Ok(())
            }
        }
    }
}

/// `60/10:30/20:10/70` (sizes in percent) or `60/20g:40/100g` (bytes).
fn parse_zones(text: &str, bytes: bool) -> Result<Vec<Zone>, String> {
    let mut zones = Vec::new();
    let entries: Vec<&str> = text.split(':').collect();
    for (i, entry) in entries.iter().enumerate() {
        let (pct, size) = entry
            .split_once('/')
            .ok_or_else(|| format!("zone '{entry}' is not PCT/SIZE"))?;
        // As fio: the last zone's size left out is the rest of the region.
        let size = match size.trim() {
            "" if !bytes && i == entries.len() - 1 => {
                let taken: u64 = zones.iter().map(|z: &Zone| z.size).sum();
                if taken >= 100 {
                    return Err(format!(
                        "zone '{entry}': the zones before it cover the whole region"
                    ));
                }
                (100 - taken).to_string()
            }
            other => other.to_string(),
        };
        let size = size.as_str();
        let percent = pct
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|p| *p <= 100)
            .ok_or_else(|| format!("zone '{entry}': '{pct}' is not a percentage"))?;
        let size = if bytes {
            crate::util::units::parse_size(size.trim())
                .map_err(|e| format!("zone '{entry}': {e}"))?
        } else {
            size.trim()
                .parse::<u64>()
                .ok()
                .filter(|s| (1..=100).contains(s))
                .ok_or_else(|| {
                    format!("zone '{entry}': '{size}' is not a percentage of the region")
                })?
        };
        if size == 0 {
            return Err(format!("zone '{entry}' has no size"));
        }
        zones.push(Zone { percent, size });
    }
    if zones.len() > 256 {
        return Err(format!("{} zones: at most 256", zones.len()));
    }
    let total: u32 = zones.iter().map(|z| u32::from(z.percent)).sum();
    if total != 100 {
        return Err(format!("the zones get {total}% of the I/Os, not 100%"));
    }
    if !bytes {
        let covered: u64 = zones.iter().map(|z| z.size).sum();
        if covered != 100 {
            return Err(format!(
                "the zones cover {covered}% of the region, not 100%"
            ));
        }
    }
    Ok(zones)
}

impl FromStr for Distribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "uniform" || s == "random" {
            return Ok(Distribution::Uniform);
        }
        let number = |name: &str, v: &str| -> Result<f64, String> {
            // fio's optional second value (where the hot spot sits) is
            // not supported: fathom scatters the hot blocks.
            if v.contains(':') {
                return Err(format!(
                    "{name}:{v}: the second value (where the distribution is centred) is not supported"
                ));
            }
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{name} value '{v}' is not a number"))
        };
        if let Some(theta) = s.strip_prefix("zipf:") {
            let theta = number("zipf", theta)?;
            if !(theta > 0.0 && theta <= 100.0) {
                return Err(format!(
                    "zipf theta {theta} must be above 0 and at most 100"
                ));
            }
            return Ok(Distribution::Zipf { theta });
        }
        if let Some(h) = s.strip_prefix("pareto:") {
            let h = number("pareto", h)?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("pareto h {h} must be between 0 and 1"));
            }
            return Ok(Distribution::Pareto { h });
        }
        if let Some(d) = s.strip_prefix("normal:").or(s.strip_prefix("gauss:")) {
            let deviation = number("normal", d)?;
            if !(deviation > 0.0 && deviation <= 100.0) {
                return Err(format!(
                    "normal deviation {deviation} must be above 0 and at most 100 (percent of the region)"
                ));
            }
            return Ok(Distribution::Normal { deviation });
        }
        // fio spells the absolute form both zoned_abs: and zoned_abs=.
        if let Some(z) = s
            .strip_prefix("zoned_abs:")
            .or(s.strip_prefix("zoned_abs="))
        {
            return Ok(Distribution::ZonedAbs {
                zones: parse_zones(z, true)?,
            });
        }
        if let Some(seq) = s.strip_prefix("sequence:") {
            let (list, strided) = match seq.strip_suffix(":strided") {
                Some(list) => (list, true),
                None => (seq, false),
            };
            let blocks = list
                .split(',')
                .map(|b| b.trim().parse::<u64>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| {
                    format!("sequence:{seq}: expected block numbers, e.g. sequence:2,0,1 or sequence:2,0,1:strided")
                })?;
            if blocks.len() > 4096 {
                return Err(format!("sequence: {} blocks, at most 4096", blocks.len()));
            }
            return Ok(Distribution::Sequence { blocks, strided });
        }
        if let Some(z) = s.strip_prefix("zoned:") {
            return Ok(Distribution::Zoned {
                zones: parse_zones(z, false)?,
            });
        }
        Err(format!(
            "unknown distribution '{s}' (expected uniform, zipf:THETA, pareto:H, normal:DEV%, zoned:PCT/PCT:..., zoned_abs:PCT/SIZE:... or sequence:BLOCK,BLOCK,...[:strided])"
        ))
    }
}
