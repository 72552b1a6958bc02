//! Steady state: a run stops once a figure settles over a sliding window of
//! whole seconds: every second within a band around the window's mean
//! (SNIA PTS's criterion, with seconds for rounds), or the least-squares
//! slope of the window below a limit (fio's `iops_slope`); a limit is a
//! percentage of the mean, or an amount of the figure itself (fio's
//! `iops:2`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SteadyMetric {
    /// IOPS of all directions together.
    Iops,
    /// The highest p99 latency of the directions.
    Lat,
    /// The mean latency of every I/O (fio's `lat`).
    MeanLat,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    pub metric: SteadyMetric,
    /// The limit: every second of the window within this percentage of its
    /// mean (or, with `slope`, the slope within it).
    pub band_pct: f64,
    pub window_s: u32,
    /// Judged by the least-squares slope of the window, per second, not
    /// by each second's distance from the mean (fio's `iops_slope`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slope: bool,
    /// `band_pct` is an amount of the figure (IOPS, or ns of latency),
    /// not a percentage of the mean (fio's `iops:2`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absolute: bool,
}

impl std::str::FromStr for SteadyState {
    type Err = String;
    /// `iops:2%`, `lat:5%`, `iops_slope:0.1%`, `iops:200` (an amount),
    /// optionally `:30s` for the window (default 10s).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{s}' is not METRIC:LIMIT[:WINDOW], e.g. iops:2%, lat:5%:30s (p99), mean_lat:5%, iops_slope:0.1% or iops:200"
            )
        };
        let mut parts = s.split(':');
        let (metric, slope) = match parts.next() {
            Some("iops") => (SteadyMetric::Iops, false),
            Some("lat") => (SteadyMetric::Lat, false),
            Some("iops_slope") => (SteadyMetric::Iops, true),
            Some("lat_slope") => (SteadyMetric::Lat, true),
            Some("mean_lat") => (SteadyMetric::MeanLat, false),
            Some("mean_lat_slope") => (SteadyMetric::MeanLat, true),
            _ => return Err(bad()),
        };
        let limit = parts.next().ok_or_else(bad)?;
        let (number, absolute) = match limit.strip_suffix('%') {
            Some(pct) => (pct, false),
            None => (limit, true),
        };
        let band_pct: f64 = number
            .parse()
            .ok()
            .filter(|b: &f64| *b > 0.0 && b.is_finite() && (absolute || *b < 100.0))
            .ok_or_else(bad)?;
        let window_s = match parts.next() {
            Some(w) => {
                let secs = crate::util::units::parse_duration(w)?.as_secs();
                u32::try_from(secs)
                    .ok()
                    .filter(|s| (2..=86400).contains(s))
                    .ok_or_else(bad)?
            }
            None => 10,
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(SteadyState {
            metric,
            band_pct,
            window_s,
            slope,
            absolute,
        })
    }
}

/// As it is given: `iops:2%`, `iops_slope:0.1%:30s`, `lat:500000`.
impl std::fmt::Display for SteadyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let metric = match self.metric {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Lat => "lat",
            SteadyMetric::MeanLat => "mean_lat",
        };
        let slope = if self.slope { "_slope" } else { "" };
        let unit = if self.absolute { "" } else { "%" };
        write!(f, "{metric}{slope}:{}{unit}", self.band_pct)?;
        if self.window_s != 10 {
            write!(f, ":{}s", self.window_s)?;
        }
        Ok(())
    }
}

impl SteadyState {
    /// True when the last `window_s` values all lie within the band.
    pub fn reached(&self, values: &[f64]) -> bool {
        let w = self.window_s as usize;
        if values.len() < w {
            return false;
        }
        let window = &values[values.len() - w..];
        let mean = window.iter().sum::<f64>() / w as f64;
        if mean <= 0.0 {
            return false;
        }
        let limit = match self.absolute {
            true => self.band_pct,
            false => mean * self.band_pct / 100.0,
        };
        if self.slope {
            return least_squares_slope(window).abs() <= limit;
        }
        window.iter().all(|v| (v - mean).abs() <= limit)
    }
}

/// The slope, per step, of the least-squares line through `values` taken
/// one step apart.
fn least_squares_slope(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = values.iter().sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, y) in values.iter().enumerate() {
        let dx = i as f64 - mean_x;
        num += dx * (y - mean_y);
        den += dx * dx;
    }
    if den == 0.0 { 0.0 } else { num / den }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateResult {
    pub criterion: SteadyState,
    pub reached: bool,
    /// Seconds of measurement when the window first held.
    pub at_s: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slope_and_an_amount_are_limits_as_fio_takes_them() {
        let slope: SteadyState = "iops_slope:1%:4s".parse().unwrap();
        assert!(slope.slope && !slope.absolute);
        // Climbing 2% of the mean a second: not steady; flat but noisy: steady.
        assert!(!slope.reached(&[980.0, 1000.0, 1020.0, 1040.0]));
        assert!(slope.reached(&[950.0, 1050.0, 1050.0, 950.0]));
        let amount: SteadyState = "iops:20:3s".parse().unwrap();
        assert!(amount.absolute && !amount.slope);
        assert!(amount.reached(&[1000.0, 1010.0, 995.0]));
        assert!(!amount.reached(&[1000.0, 1050.0, 995.0]));
    }

    #[test]
    fn the_band_is_above_0_and_below_100_percent() {
        for bad in ["iops:0%", "iops:100%", "iops:-1%", "iops:150%"] {
            assert!(bad.parse::<SteadyState>().is_err(), "{bad}");
        }
        for good in ["iops:0.1%", "iops:99.9%"] {
            assert!(good.parse::<SteadyState>().is_ok(), "{good}");
        }
    }

    #[test]
    fn a_full_window_is_enough_and_nothing_done_is_not_steady() {
        let s: SteadyState = "iops:2%".parse().unwrap();
        assert!(s.reached(&[1000.0; 10]), "exactly one window");
        assert!(!s.reached(&[1000.0; 9]));
        assert!(!s.reached(&[0.0; 10]), "a stalled run is not steady");
    }

    #[test]
    fn parses_and_judges() {
        let s: SteadyState = "iops:2%".parse().unwrap();
        assert_eq!(
            (s.metric, s.band_pct, s.window_s),
            (SteadyMetric::Iops, 2.0, 10)
        );
        let l: SteadyState = "lat:5%:30s".parse().unwrap();
        assert_eq!((l.metric, l.window_s), (SteadyMetric::Lat, 30));
        assert!("iops".parse::<SteadyState>().is_err());
        assert!("bw:2%".parse::<SteadyState>().is_err());
        let mut v = vec![500.0, 800.0, 1200.0];
        v.extend(std::iter::repeat_n(1000.0, 9));
        assert!(!s.reached(&v), "window still holds a ramp");
        v.push(1010.0);
        assert!(s.reached(&v));
        v.push(1100.0);
        assert!(!s.reached(&v));
    }
}
