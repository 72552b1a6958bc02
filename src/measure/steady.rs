//! Steady state: a run stops once a figure stays within a band around its
//! mean over a sliding window of whole seconds (SNIA PTS's criterion, with
//! seconds for rounds).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SteadyMetric {
    /// IOPS of all directions together.
    Iops,
    /// The highest p99 latency of the directions.
    Lat,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    pub metric: SteadyMetric,
    /// Every second of the window within this percentage of its mean.
    pub band_pct: f64,
    pub window_s: u32,
}

impl std::str::FromStr for SteadyState {
    type Err = String;
    /// `iops:2%`, `lat:5%`, optionally `:30s` for the window (default 10s).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not METRIC:BAND%[:WINDOW], e.g. iops:2% or lat:5%:30s");
        let mut parts = s.split(':');
        let metric = match parts.next() {
            Some("iops") => SteadyMetric::Iops,
            Some("lat") => SteadyMetric::Lat,
            _ => return Err(bad()),
        };
        let band_pct: f64 = parts
            .next()
            .and_then(|b| b.strip_suffix('%'))
            .and_then(|b| b.parse().ok())
            .filter(|b: &f64| *b > 0.0 && *b < 100.0)
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
        })
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
        mean > 0.0
            && window
                .iter()
                .all(|v| (v - mean).abs() <= mean * self.band_pct / 100.0)
    }
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
