//! What `fathom capacity` searches for: the most load a workload can be
//! offered while its latency, counted from when each I/O was due, meets a
//! service-level objective (`--slo p99:1ms,p99.9:5ms`).

use crate::util::units;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One term of an objective: this percentile of the latency from the due
/// time is at most this long.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SloTerm {
    /// Above 0, at most 100 (`p100` is the maximum).
    pub percentile: f64,
    pub limit_ns: u64,
}

impl SloTerm {
    /// "p99 ≤ 1.00 ms".
    pub fn describe(&self) -> String {
        format!(
            "{} ≤ {}",
            percentile_name(self.percentile),
            units::latency(self.limit_ns as f64)
        )
    }
}

/// "p99", "p99.9", "max".
pub fn percentile_name(p: f64) -> String {
    if p >= 100.0 {
        "max".into()
    } else {
        format!("p{p}")
    }
}

/// Every term must hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Slo(pub Vec<SloTerm>);

impl FromStr for Slo {
    type Err = String;

    /// `p99:1ms`, `p99:1ms,p99.9:5ms`, `max:20ms`.
    fn from_str(text: &str) -> Result<Slo, String> {
        let mut terms = Vec::new();
        for part in text.split(',').map(str::trim) {
            let (name, limit) = part.split_once(':').ok_or_else(|| {
                format!("'{part}' is not an objective (expected PERCENTILE:LATENCY, e.g. p99:1ms)")
            })?;
            let percentile = match name.trim() {
                "max" => 100.0,
                n => n
                    .strip_prefix('p')
                    .and_then(|p| p.parse::<f64>().ok())
                    .filter(|p| p.is_finite())
                    .ok_or_else(|| {
                        format!("'{n}' is not a percentile (expected e.g. p50, p99, p99.9 or max)")
                    })?,
            };
            if !(percentile > 0.0 && percentile <= 100.0) {
                return Err(format!(
                    "percentile {percentile} is outside 0 to 100 (exclusive of 0)"
                ));
            }
            let limit_ns = units::parse_duration(limit)?.as_nanos() as u64;
            if limit_ns == 0 {
                return Err(format!("'{part}': a latency limit of 0 cannot be met"));
            }
            if terms.iter().any(|t: &SloTerm| t.percentile == percentile) {
                return Err(format!("{} is given twice", percentile_name(percentile)));
            }
            terms.push(SloTerm {
                percentile,
                limit_ns,
            });
        }
        Ok(Slo(terms))
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let terms: Vec<String> = self.0.iter().map(SloTerm::describe).collect();
        f.write_str(&terms.join(" and "))
    }
}

/// How the search runs. Each step runs the workload's ramp (its warm-up)
/// and runtime at one offered rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacitySpec {
    pub slo: Slo,
    /// Total I/Os per second offered at the first step, over every target
    /// (and every rated stream).
    pub start_iops: f64,
    /// Each step of the climb offers this many times the last one.
    pub growth: f64,
    /// The search ends when the highest rate that met the objective and the
    /// lowest that did not are within this share of each other.
    pub precision: f64,
    /// The whole search stops before a step that would end after this.
    pub max_time_s: f64,
    /// Before the first step, a short burst of the null engine measures
    /// what this host's workers can issue (`--no-self-check`: not).
    #[serde(default)]
    pub self_check: bool,
}

impl CapacitySpec {
    pub const DEFAULT_START_IOPS: f64 = 1000.0;
    pub const DEFAULT_GROWTH: f64 = 2.0;
    pub const DEFAULT_PRECISION: f64 = 0.05;
    pub const DEFAULT_MAX_TIME_S: f64 = 1200.0;

    /// Checks what the flags cannot: a growth that grows, a precision the
    /// bisection can reach.
    pub fn validate(&self) -> Result<(), String> {
        if self.slo.0.is_empty() {
            return Err("--slo: give at least one objective, e.g. p99:1ms".into());
        }
        if !(self.start_iops.is_finite() && self.start_iops >= 1.0) {
            return Err(format!(
                "--start {}: the first step offers at least 1 I/O per second",
                self.start_iops
            ));
        }
        if !(self.growth.is_finite() && self.growth >= 1.1 && self.growth <= 100.0) {
            return Err(format!(
                "--growth {}: each step offers 1.1 to 100 times the last",
                self.growth
            ));
        }
        if !(self.precision >= 0.001 && self.precision <= 0.5) {
            return Err(format!("--precision {}: give 0.1% to 50%", self.precision));
        }
        if !(self.max_time_s.is_finite() && self.max_time_s > 0.0) {
            return Err("--max-time must be longer than 0".into());
        }
        Ok(())
    }

    /// Bisection steps after the climb to get from one growth factor to
    /// the precision: each halves the bracket.
    pub fn bisection_steps(&self) -> u32 {
        let mut ratio = self.growth;
        let mut steps = 0;
        while ratio - 1.0 > self.precision {
            ratio = 1.0 + (ratio - 1.0) / 2.0;
            steps += 1;
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_with_their_percentiles_and_limits() {
        let slo: Slo = "p99:1ms, p99.9:5ms,max:20ms".parse().unwrap();
        assert_eq!(
            slo.0,
            vec![
                SloTerm {
                    percentile: 99.0,
                    limit_ns: 1_000_000
                },
                SloTerm {
                    percentile: 99.9,
                    limit_ns: 5_000_000
                },
                SloTerm {
                    percentile: 100.0,
                    limit_ns: 20_000_000
                },
            ]
        );
        assert_eq!(
            slo.to_string(),
            "p99 ≤ 1.00 ms and p99.9 ≤ 5.00 ms and max ≤ 20.0 ms"
        );
    }

    #[test]
    fn bad_objectives_are_refused_naming_the_problem() {
        for (text, says) in [
            ("p99", "not an objective"),
            ("p101:1ms", "outside 0 to 100"),
            ("p0:1ms", "outside 0 to 100"),
            ("q99:1ms", "not a percentile"),
            ("pNaN:1ms", "not a percentile"),
            ("p99:soon", "not a duration"),
            ("p99:0ms", "cannot be met"),
            ("p99:1ms,p99:2ms", "given twice"),
            ("", "not an objective"),
        ] {
            let e = text.parse::<Slo>().unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    fn spec() -> CapacitySpec {
        CapacitySpec {
            slo: "p99:1ms".parse().unwrap(),
            start_iops: 1000.0,
            growth: 2.0,
            precision: 0.05,
            max_time_s: 600.0,
            self_check: false,
        }
    }

    #[test]
    fn bisection_halves_the_bracket_until_the_precision() {
        // 2x -> 1.5 -> 1.25 -> 1.125 -> 1.0625 -> 1.03125: five steps.
        assert_eq!(spec().bisection_steps(), 5);
        let fine = CapacitySpec {
            precision: 0.01,
            ..spec()
        };
        assert_eq!(fine.bisection_steps(), 7);
        let coarse = CapacitySpec {
            precision: 0.5,
            ..spec()
        };
        assert_eq!(coarse.bisection_steps(), 1);
    }

    #[test]
    fn settings_out_of_range_are_refused() {
        assert!(spec().validate().is_ok());
        for bad in [
            CapacitySpec {
                growth: 1.0,
                ..spec()
            },
            CapacitySpec {
                precision: 0.0,
                ..spec()
            },
            CapacitySpec {
                start_iops: 0.5,
                ..spec()
            },
            CapacitySpec {
                max_time_s: 0.0,
                self_check: false,
                ..spec()
            },
            CapacitySpec {
                slo: Slo(Vec::new()),
                ..spec()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
