//! Did the device change during the run? An SSD's write cache filling up,
//! thermal throttling, a noisy neighbour on a cloud volume: each shows as a
//! lasting step in the per-second figures, not as noise. A finding is a
//! change of the median over `window` seconds, against the median of the
//! seconds before it, larger than `band` and lasting at least a window.

use serde::{Deserialize, Serialize};

/// What is watched, and how much change is a finding.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DriftCheck {
    /// Percent of change of IOPS (or of p99 latency, for which twice
    /// this) that is a finding.
    pub band_pct: f64,
    /// Seconds a change must last, and over which medians are taken.
    pub window_s: u32,
}

impl Default for DriftCheck {
    fn default() -> Self {
        DriftCheck {
            band_pct: 25.0,
            window_s: 5,
        }
    }
}

impl std::str::FromStr for DriftCheck {
    type Err = String;
    /// `25%:5s` (band, window), or `off`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not BAND%:WINDOW, e.g. 25%:5s");
        let (band, window) = s.split_once(':').ok_or_else(bad)?;
        let band_pct: f64 = band
            .strip_suffix('%')
            .and_then(|b| b.parse().ok())
            .filter(|b: &f64| *b > 0.0 && *b < 1000.0)
            .ok_or_else(bad)?;
        let window_s = crate::util::units::parse_duration(window)?.as_secs();
        let window_s = u32::try_from(window_s)
            .ok()
            .filter(|w| (1..=3600).contains(w))
            .ok_or_else(bad)?;
        Ok(DriftCheck { band_pct, window_s })
    }
}

impl std::fmt::Display for DriftCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}%:{}s", self.band_pct, self.window_s)
    }
}

/// A lasting change of one figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Second of measurement at which the new level starts.
    pub at_s: f64,
    /// How long the new level lasted (to the next finding or the end).
    pub for_s: f64,
    pub before: f64,
    pub after: f64,
}

impl Finding {
    /// Change in percent of the level before (negative: a drop); none
    /// from a level of zero (a device that served nothing, then did).
    pub fn change_pct(&self) -> Option<f64> {
        (self.before > 0.0).then(|| (self.after - self.before) * 100.0 / self.before)
    }
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Lasting changes in `values` (one per second, from second 0) beyond
/// `band_pct`. Needs at least three windows of seconds; the last, partial
/// second is left out by the caller.
pub fn find(values: &[f64], band_pct: f64, window: usize) -> Vec<Finding> {
    let window = window.max(1);
    let mut out: Vec<Finding> = Vec::new();
    if values.len() < 3 * window {
        return out;
    }
    let mut level_start = 0;
    let mut level = median(&values[..window]);
    let mut i = window;
    while i + window <= values.len() {
        let next = median(&values[i..i + window]);
        // From a level of zero, any lasting level is a change (a device
        // that stopped serving and came back).
        let beyond = |value: f64, band: f64| {
            if level > 0.0 {
                (value - level).abs() * 100.0 / level > band
            } else {
                value > 0.0
            }
        };
        if beyond(next, band_pct) {
            // The step starts at the first second of the window that is
            // already on the new level's side.
            let at = (i..i + window)
                .find(|&s| beyond(values[s], band_pct / 2.0))
                .unwrap_or(i);
            // The new level is what follows the step: a transition second
            // half-way between the levels is not the level.
            let after = if at + 1 < values.len() {
                median(&values[at + 1..(at + 1 + window).min(values.len())])
            } else {
                next
            };
            if let Some(prev) = out.last_mut() {
                prev.for_s = (at - level_start) as f64;
            }
            out.push(Finding {
                at_s: at as f64,
                for_s: (values.len() - at) as f64,
                before: level,
                after,
            });
            level_start = at;
            level = after;
            i = at + window;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(level: f64, n: usize, seed: u64) -> Vec<f64> {
        // +-5% of deterministic noise.
        (0..n)
            .map(|i| {
                let x = ((i as u64 * 2654435761 + seed) % 1000) as f64 / 1000.0;
                level * (0.95 + 0.1 * x)
            })
            .collect()
    }

    #[test]
    fn a_transition_second_is_not_the_new_level() {
        // 2,000 a second, one second of 1,240 on the way down, then 1,000.
        let mut iops = vec![2000.0; 10];
        iops.push(1240.0);
        iops.extend([1000.0; 10]);
        let f = find(&iops, 25.0, 5);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].at_s, f[0].before, f[0].after), (10.0, 2000.0, 1000.0));
        assert_eq!(f[0].change_pct(), Some(-50.0));
    }

    #[test]
    fn a_lasting_drop_is_found_with_its_time_and_size() {
        let mut v = noisy(50_000.0, 20, 1);
        v.extend(noisy(30_000.0, 20, 2));
        let found = find(&v, 25.0, 5);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!((f.at_s, f.for_s), (20.0, 20.0));
        let pct = f.change_pct().unwrap();
        assert!((pct + 40.0).abs() < 6.0, "{pct}");
    }

    #[test]
    fn noise_spikes_and_short_runs_are_not_findings() {
        let mut v = noisy(50_000.0, 40, 3);
        // Two seconds of a stall in a 5-second window: not lasting.
        v[17] = 5_000.0;
        v[18] = 5_000.0;
        assert!(find(&v, 25.0, 5).is_empty());
        // Too short a run to judge.
        let mut short = noisy(1000.0, 7, 4);
        short.extend([100.0; 7]);
        assert!(find(&short, 25.0, 5).is_empty());
    }

    #[test]
    fn a_drop_and_a_recovery_are_two_findings() {
        let mut v = noisy(10_000.0, 15, 5);
        v.extend(noisy(2_000.0, 15, 6));
        v.extend(noisy(10_000.0, 15, 7));
        let found = find(&v, 25.0, 5);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].at_s, found[0].for_s), (15.0, 15.0));
        assert_eq!(found[1].at_s, 30.0);
        assert!(found[1].change_pct().unwrap() > 300.0);
    }

    #[test]
    fn three_windows_are_enough_to_judge() {
        let mut v = noisy(1000.0, 10, 8);
        v.extend(noisy(400.0, 5, 9));
        let found = find(&v, 25.0, 5);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].at_s, found[0].for_s), (10.0, 5.0));
        assert_eq!(found[0].before, median(&v[..5]));
        assert!((380.0..=420.0).contains(&found[0].after), "{found:?}");
    }

    #[test]
    fn a_stop_and_a_restart_are_both_found() {
        // A device that stops serving for 10 s, comes back, then slows.
        let mut v = noisy(800.0, 10, 10);
        v.extend([0.0; 10]);
        v.extend(noisy(800.0, 10, 11));
        v.extend(noisy(200.0, 10, 12));
        let found = find(&v, 25.0, 5);
        let steps: Vec<(f64, f64, f64)> =
            found.iter().map(|f| (f.at_s, f.for_s, f.after)).collect();
        assert_eq!(steps.len(), 3, "{found:?}");
        assert_eq!((steps[0].0, steps[0].1, steps[0].2), (10.0, 10.0, 0.0));
        assert!(
            found[0]
                .change_pct()
                .is_some_and(|p| (p + 100.0).abs() < 1e-9)
        );
        assert_eq!((steps[1].0, steps[1].1), (20.0, 10.0));
        assert_eq!(found[1].change_pct(), None);
        assert_eq!(steps[2].0, 30.0);
    }

    #[test]
    fn a_change_of_exactly_the_band_is_not_a_finding() {
        let mut v = vec![100.0; 5];
        v.extend([125.0; 10]);
        assert!(find(&v, 25.0, 5).is_empty());
        // The new level starts at the first second beyond half the band,
        // not at one exactly on it.
        let mut v = vec![100.0; 10];
        v.push(112.5);
        v.extend([150.0; 9]);
        let found = find(&v, 25.0, 5);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].at_s, found[0].after), (11.0, 150.0));
    }

    #[test]
    fn medians_of_even_windows_take_the_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
        assert_eq!(median(&[7.0]), 7.0);
    }

    #[test]
    fn checks_parse() {
        let c: DriftCheck = "10%:3s".parse().unwrap();
        assert_eq!((c.band_pct, c.window_s), (10.0, 3));
        assert_eq!(c.to_string(), "10%:3s");
        // The limits are part of the syntax: a band below 1000%, a window
        // of one second to an hour.
        for good in ["999.5%:1s", "0.5%:3600s"] {
            assert!(good.parse::<DriftCheck>().is_ok(), "{good}");
        }
        for bad in [
            "10",
            "10%",
            "0%:5s",
            "10%:0s",
            "x%:5s",
            "1000%:5s",
            "10%:3601s",
        ] {
            assert!(bad.parse::<DriftCheck>().is_err(), "{bad}");
        }
    }
}
