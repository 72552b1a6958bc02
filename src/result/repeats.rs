//! A workload run several times in a row (`--repeat N --pick best|median`):
//! which repeat its result reports, and every repeat's figures beside it, so
//! a reader sees the spread the pick came from.

use super::WorkloadResult;
use crate::spec::Pick;
use serde::{Deserialize, Serialize};

/// The repeats of one workload, kept in its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    pub pick: Pick,
    /// Which repeat the result is, counted from 0 in the order they ran.
    pub chosen: usize,
    /// Each repeat's figures, in the order they ran.
    pub runs: Vec<RepeatFigures>,
}

/// One repeat's headline figures (all directions together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatFigures {
    pub iops: f64,
    pub bw_bytes: f64,
    /// The 99th percentile of the direction that did most I/Os.
    pub p99_ns: u64,
    pub runtime_s: f64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl RepeatFigures {
    pub fn of(w: &WorkloadResult) -> RepeatFigures {
        let dirs = [&w.total.read, &w.total.write, &w.total.trim];
        let busiest = dirs.iter().max_by_key(|d| d.ios).expect("three directions");
        RepeatFigures {
            iops: dirs.iter().map(|d| d.iops).sum(),
            bw_bytes: dirs.iter().map(|d| d.bw_bytes).sum(),
            p99_ns: busiest.lat_ns.p99,
            runtime_s: w.runtime_s,
            interrupted: w.interrupted,
        }
    }
}

impl Repeats {
    /// Picks one of `runs` (all of one spec, in the order they ran) and
    /// returns it with the repeats recorded. Repeats a signal cut short are
    /// recorded but picked only when no repeat finished.
    pub fn choose(mut runs: Vec<WorkloadResult>, pick: Pick) -> WorkloadResult {
        let figures: Vec<RepeatFigures> = runs.iter().map(RepeatFigures::of).collect();
        let chosen = Self::index(&figures, pick);
        let interrupted = runs.iter().any(|r| r.interrupted);
        let mut result = runs.swap_remove(chosen);
        result.interrupted |= interrupted;
        result.repeats = Some(Repeats {
            pick,
            chosen,
            runs: figures,
        });
        result
    }

    /// The repeat `pick` names, by bandwidth; the earliest of equals.
    fn index(figures: &[RepeatFigures], pick: Pick) -> usize {
        let mut finished: Vec<usize> = (0..figures.len())
            .filter(|&i| !figures[i].interrupted)
            .collect();
        if finished.is_empty() {
            return figures.len() - 1;
        }
        finished.sort_by(|&a, &b| figures[a].bw_bytes.total_cmp(&figures[b].bw_bytes));
        match pick {
            Pick::Best => {
                let top = figures[*finished.last().expect("not empty")].bw_bytes;
                *finished
                    .iter()
                    .filter(|&&i| figures[i].bw_bytes == top)
                    .min()
                    .expect("the top is one of them")
            }
            Pick::Median => finished[(finished.len() - 1) / 2],
        }
    }

    /// "best of 5 repeats by bandwidth: repeat 3 (MB/s each: 512.3; 520.1; …)".
    pub fn describe(&self) -> String {
        let each: Vec<String> = self
            .runs
            .iter()
            .map(|r| {
                let mark = if r.interrupted { " (cut short)" } else { "" };
                format!("{}{mark}", crate::util::units::mb_per_s(r.bw_bytes))
            })
            .collect();
        format!(
            "{} of {} repeats by bandwidth: repeat {} (MB/s each: {})",
            self.pick,
            self.runs.len(),
            self.chosen + 1,
            each.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(bw: &[f64]) -> Vec<RepeatFigures> {
        bw.iter()
            .map(|&b| RepeatFigures {
                iops: b / 4096.0,
                bw_bytes: b,
                p99_ns: 0,
                runtime_s: 1.0,
                interrupted: false,
            })
            .collect()
    }

    #[test]
    fn best_is_the_most_bandwidth_and_median_the_middle_repeat() {
        let f = figures(&[300.0, 500.0, 100.0, 400.0, 200.0]);
        assert_eq!(Repeats::index(&f, Pick::Best), 1);
        assert_eq!(Repeats::index(&f, Pick::Median), 0);
        // An even count takes the lower middle: a repeat that ran, not a
        // mean of two.
        let f = figures(&[300.0, 100.0, 400.0, 200.0]);
        assert_eq!(Repeats::index(&f, Pick::Median), 3);
        // Equal figures: the earliest.
        let f = figures(&[100.0, 500.0, 500.0]);
        assert_eq!(Repeats::index(&f, Pick::Best), 1);
    }

    #[test]
    fn a_repeat_cut_short_is_picked_only_when_none_finished() {
        let mut f = figures(&[100.0, 900.0]);
        f[1].interrupted = true;
        assert_eq!(Repeats::index(&f, Pick::Best), 0);
        f[0].interrupted = true;
        assert_eq!(Repeats::index(&f, Pick::Best), 1);
    }

    #[test]
    fn the_description_names_the_pick_and_every_repeat() {
        let r = Repeats {
            pick: Pick::Best,
            chosen: 1,
            runs: figures(&[512.3e6, 1520.1e6]),
        };
        assert_eq!(
            r.describe(),
            "best of 2 repeats by bandwidth: repeat 2 (MB/s each: 512.3; 1,520.1)"
        );
    }
}
