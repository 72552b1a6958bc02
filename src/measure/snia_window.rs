//! SNIA PTS's steady-state rule for a tracking variable measured once a
//! round: over a window of the last 5 rounds, the range of the values is
//! at most 20% of their average, and the range of the least-squares line
//! through them (its slope times the window's width) at most 10%.

use serde::{Deserialize, Serialize};

/// Rounds in the measurement window.
pub const WINDOW: usize = 5;
/// Largest range of the values, as a share of their average.
pub const RANGE_LIMIT: f64 = 0.20;
/// Largest range of the fitted line, as a share of the average.
pub const EXCURSION_LIMIT: f64 = 0.10;

/// The rule applied to one window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WindowVerdict {
    /// Rounds of the window, counted from 1.
    pub first_round: u32,
    pub last_round: u32,
    pub average: f64,
    /// Largest value less the smallest.
    pub range: f64,
    /// Least-squares slope, per round.
    pub slope: f64,
    /// The fitted line's range over the window: |slope| x (rounds - 1).
    pub excursion: f64,
    pub range_limit: f64,
    pub excursion_limit: f64,
    pub holds: bool,
}

/// The verdict on the last [`WINDOW`] of `values` (one per round, the
/// first being round 1); None with fewer rounds.
pub fn judge(values: &[f64]) -> Option<WindowVerdict> {
    if values.len() < WINDOW {
        return None;
    }
    let first = values.len() - WINDOW;
    let y = &values[first..];
    let n = y.len() as f64;
    let average = y.iter().sum::<f64>() / n;
    let (lo, hi) = y
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    let x_mean = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in y.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (v - average);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    let excursion = slope.abs() * (n - 1.0);
    let range_limit = RANGE_LIMIT * average;
    let excursion_limit = EXCURSION_LIMIT * average;
    // A value exactly at a limit passes; the tolerance absorbs rounding of
    // the sums only.
    let within = |v: f64, limit: f64| v <= limit * (1.0 + 1e-12);
    Some(WindowVerdict {
        first_round: first as u32 + 1,
        last_round: values.len() as u32,
        average,
        range: hi - lo,
        slope,
        excursion,
        range_limit,
        excursion_limit,
        holds: average > 0.0 && within(hi - lo, range_limit) && within(excursion, excursion_limit),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand. Rounds x = 0..4, mean x 2, sum of (x - 2)^2 = 10.
    #[test]
    fn the_rule_holds_at_its_limits_and_fails_just_past_them() {
        // Range at the limit: average 100, range 20 (20%). Slope: the sum
        // of (x-2)(y-100) is (-2)(-10) + (-1)(10) = 10, over 10: 1 per
        // round, an excursion of 4 (4%).
        let v = judge(&[90.0, 110.0, 100.0, 100.0, 100.0]).unwrap();
        assert_eq!(
            (v.average, v.range, v.slope, v.excursion),
            (100.0, 20.0, 1.0, 4.0)
        );
        assert!(v.holds);
        // A range of 22: 22% of the average.
        let v = judge(&[89.0, 111.0, 100.0, 100.0, 100.0]).unwrap();
        assert_eq!(v.range, 22.0);
        assert!(!v.holds);
        // A line of slope 2.5 through 100: the sum of (x-2)(y-100) is
        // 10 + 2.5 + 2.5 + 10 = 25, over 10: 2.5, an excursion of 10 (10%,
        // at the limit); its range 10 is well inside 20.
        let v = judge(&[95.0, 97.5, 100.0, 102.5, 105.0]).unwrap();
        assert_eq!((v.slope, v.excursion, v.excursion_limit), (2.5, 10.0, 10.0));
        assert!(v.holds);
        // Slope 2.6: an excursion of 10.4, past 10.
        let v = judge(&[94.8, 97.4, 100.0, 102.6, 105.2]).unwrap();
        assert!((v.excursion - 10.4).abs() < 1e-9, "{v:?}");
        assert!(v.range < v.range_limit);
        assert!(!v.holds);
        // Falling as steeply: the slope's sign does not matter.
        let v = judge(&[105.2, 102.6, 100.0, 97.4, 94.8]).unwrap();
        assert!(v.slope < 0.0 && !v.holds);
    }

    #[test]
    fn the_window_is_the_last_five_rounds() {
        assert!(judge(&[1.0, 1.0, 1.0, 1.0]).is_none());
        let v = judge(&[500.0, 10.0, 100.0, 100.0, 100.0, 100.0, 100.0]).unwrap();
        assert_eq!((v.first_round, v.last_round), (3, 7));
        assert!(v.holds);
        assert!(
            !judge(&[0.0; 5]).unwrap().holds,
            "nothing measured holds nothing"
        );
    }
}
