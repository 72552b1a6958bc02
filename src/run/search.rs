//! The one search of fathom: climb from a start until a step misses, then
//! halve the bracket between the highest step that met and the lowest that
//! missed until it is narrow enough. Capacity searches rates (climbing by
//! a growth factor, stopping at a precision); training's accelerator
//! search counts accelerators (doubling, stopping at a gap of one). What a
//! step is, how it is judged and what ends a search early (the time left,
//! an interrupt, a host that cannot issue the load) are the caller's: the
//! step says so by its outcome.

use crate::result::capacity::Phase;

/// What a step found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Met,
    Missed,
    /// Stop here: the step was not judged (interrupted, out of time, a
    /// host limit), or the caller has what it needs.
    End,
}

/// The bracket a search ended with: the highest value that met, the
/// lowest that missed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bracket<T> {
    pub met: Option<T>,
    pub missed: Option<T>,
}

/// How a search moves: `up` is the next value of the climb from one that
/// met (None: the climb is at its top); `between` is the value between the
/// highest that met (None when nothing has) and the lowest that missed,
/// None once the bracket is narrow enough.
pub struct Ladder<T> {
    pub up: Box<dyn Fn(T) -> Option<T>>,
    pub between: Box<dyn Fn(Option<T>, T) -> Option<T>>,
}

impl<T: Copy> Ladder<T> {
    /// The value to try after `bracket`, and whether it climbs or bisects.
    pub fn next(&self, bracket: Bracket<T>) -> Option<(T, Phase)> {
        match (bracket.met, bracket.missed) {
            (Some(met), None) => (self.up)(met).map(|v| (v, Phase::Climb)),
            (met, Some(missed)) => (self.between)(met, missed).map(|v| (v, Phase::Bisect)),
            (None, None) => None,
        }
    }

    /// Runs `step` from `start` until the ladder has nothing to try or a
    /// step ends the search.
    pub fn search(
        &self,
        start: T,
        mut step: impl FnMut(T, Phase) -> anyhow::Result<Outcome>,
    ) -> anyhow::Result<Bracket<T>> {
        let mut bracket = Bracket {
            met: None,
            missed: None,
        };
        let mut next = Some((start, Phase::Climb));
        while let Some((value, phase)) = next {
            match step(value, phase)? {
                Outcome::Met => bracket.met = Some(value),
                Outcome::Missed => bracket.missed = Some(value),
                Outcome::End => break,
            }
            next = self.next(bracket);
        }
        Ok(bracket)
    }
}

/// A ladder of rates: climbing by `growth`, bisecting until the bracket's
/// ratio is within `precision` (a share).
pub fn rates(growth: f64, precision: f64) -> Ladder<f64> {
    Ladder {
        up: Box::new(move |met| Some(met * growth)),
        // The epsilon keeps a bracket exactly at the precision (2100/2000)
        // from counting as wider through rounding.
        between: Box::new(move |met, missed| {
            let met = met?;
            (missed / met - 1.0 > precision + 1e-9).then_some((met + missed) / 2.0)
        }),
    }
}

/// A ladder of counts: doubling up to `most` while `fits` (a count the
/// workload cannot use ends the climb), bisecting down to a gap of one
/// (from zero when the first count missed).
pub fn counts(most: u32, fits: impl Fn(u32) -> bool + 'static) -> Ladder<u32> {
    Ladder {
        up: Box::new(move |met| {
            let up = met.saturating_mul(2).min(most);
            (up != met && fits(up)).then_some(up)
        }),
        between: Box::new(|met, missed| {
            let low = met.unwrap_or(0);
            (missed - low > 1).then_some(low + (missed - low) / 2)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tried<T: Copy>(
        ladder: &Ladder<T>,
        start: T,
        met: impl Fn(T) -> bool,
    ) -> (Vec<T>, Bracket<T>) {
        let mut seen = Vec::new();
        let bracket = ladder
            .search(start, |v, _| {
                seen.push(v);
                Ok(if met(v) {
                    Outcome::Met
                } else {
                    Outcome::Missed
                })
            })
            .unwrap();
        (seen, bracket)
    }

    #[test]
    fn rates_climb_by_the_growth_then_bisect_to_the_precision() {
        let (seen, bracket) = tried(&rates(2.0, 0.05), 1000.0, |r| r <= 5000.0);
        assert_eq!(&seen[..4], &[1000.0, 2000.0, 4000.0, 8000.0]);
        assert_eq!(bracket.met, Some(5000.0));
        let (met, missed) = (bracket.met.unwrap(), bracket.missed.unwrap());
        assert!(missed / met - 1.0 <= 0.05 + 1e-9, "{bracket:?}");
    }

    #[test]
    fn a_first_rate_that_misses_ends_the_search_with_nothing_met() {
        let (seen, bracket) = tried(&rates(2.0, 0.05), 1000.0, |_| false);
        assert_eq!(seen, vec![1000.0]);
        assert_eq!(bracket.met, None);
    }

    #[test]
    fn counts_double_then_halve_the_gap_to_one() {
        let (seen, bracket) = tried(&counts(1024, |_| true), 1, |n| n <= 5);
        assert_eq!(seen, vec![1, 2, 4, 8, 6, 5]);
        assert_eq!((bracket.met, bracket.missed), (Some(5), Some(6)));
        // A first count that fails is bisected from zero.
        let (seen, bracket) = tried(&counts(1024, |_| true), 8, |n| n <= 3);
        assert_eq!(seen, vec![8, 4, 2, 3]);
        assert_eq!(bracket.met, Some(3));
    }

    #[test]
    fn a_count_the_workload_cannot_use_ends_the_climb() {
        let (seen, bracket) = tried(&counts(1024, |n| n <= 4), 1, |_| true);
        assert_eq!(seen, vec![1, 2, 4]);
        assert_eq!((bracket.met, bracket.missed), (Some(4), None));
        let (seen, _) = tried(&counts(3, |_| true), 1, |_| true);
        assert_eq!(seen, vec![1, 2, 3]);
    }

    #[test]
    fn an_ending_step_stops_the_search() {
        let bracket = rates(2.0, 0.05)
            .search(1000.0, |r, _| {
                Ok(if r < 4000.0 {
                    Outcome::Met
                } else {
                    Outcome::End
                })
            })
            .unwrap();
        assert_eq!((bracket.met, bracket.missed), (Some(2000.0), None));
    }
}
