//! A cluster's live seconds under `--mpi`: each rank sends rank 0 every
//! second it completes (its histograms encoded as in a result), and rank 0
//! merges the same second of the same stream of every rank exactly, by
//! adding the histograms, never by averaging percentiles. A second is
//! given out once every rank has sent it, or, when a rank is late or gone,
//! once the stream has moved `LATE_BY` seconds past it (without that rank,
//! and saying how many ranks it holds), so one slow rank cannot stop the
//! cluster's figures.

use crate::measure::direction::Direction;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::live::{Second, Update};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A stream this many seconds past a second gives it out without the
/// ranks that have not sent it.
pub const LATE_BY: u64 = 3;

/// One rank's second as it travels to rank 0.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankSecond {
    pub workload: String,
    pub stream: String,
    pub index: u64,
    pub dur_s: f64,
    pub directions: Vec<RankDirection>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankDirection {
    pub direction: String,
    pub ios: u64,
    pub bytes: u64,
    pub errors: u64,
    /// The second's histogram, encoded as in a result.
    pub histogram: String,
}

impl RankSecond {
    pub fn of(update: &Update) -> Self {
        RankSecond {
            workload: update.workload.clone(),
            stream: update.stream.clone(),
            index: update.index,
            dur_s: update.dur_s,
            directions: update
                .directions
                .iter()
                .map(|(d, s)| RankDirection {
                    direction: d.to_string(),
                    ios: s.ios,
                    bytes: s.bytes,
                    errors: s.errors,
                    histogram: s.latency.encode(),
                })
                .collect(),
        }
    }
}

type Key = (String, String, u64);

#[derive(Default)]
struct Pending {
    from: BTreeSet<u32>,
    dur_s: f64,
    directions: Vec<(&'static str, Second)>,
}

/// Rank 0's merging of the ranks' seconds.
pub struct LiveMerge {
    ranks: u32,
    pending: BTreeMap<Key, Pending>,
    /// Per workload and stream, the newest second any rank sent.
    newest: BTreeMap<(String, String), u64>,
    /// Seconds already given out: a late rank's copy is dropped.
    given: BTreeMap<(String, String), u64>,
}

impl LiveMerge {
    /// Merges the seconds of `ranks` ranks.
    pub fn new(ranks: u32) -> Self {
        LiveMerge {
            ranks,
            pending: BTreeMap::new(),
            newest: BTreeMap::new(),
            given: BTreeMap::new(),
        }
    }

    /// Rank `rank`'s second; one that cannot be read, or that comes after
    /// its second was given out without it, is dropped.
    pub fn offer(&mut self, rank: u32, second: RankSecond) {
        let stream = (second.workload.clone(), second.stream.clone());
        if self
            .given
            .get(&stream)
            .is_some_and(|&given| second.index <= given)
        {
            return;
        }
        let newest = self.newest.entry(stream).or_insert(second.index);
        *newest = (*newest).max(second.index);
        let key = (second.workload, second.stream, second.index);
        let pending = self.pending.entry(key).or_default();
        if !pending.from.insert(rank) {
            return;
        }
        pending.dur_s = pending.dur_s.max(second.dur_s);
        for d in second.directions {
            let Some(name) = Direction::ALL
                .iter()
                .map(|d| d.name())
                .find(|n| *n == d.direction)
            else {
                continue;
            };
            let Ok(latency) = LatencyHistogram::decode(&d.histogram) else {
                continue;
            };
            let at = match pending.directions.iter().position(|(n, _)| *n == name) {
                Some(at) => at,
                None => {
                    pending.directions.push((
                        name,
                        Second {
                            index: second.index,
                            dur_s: 0.0,
                            ios: 0,
                            bytes: 0,
                            errors: 0,
                            latency: LatencyHistogram::new(),
                        },
                    ));
                    pending.directions.len() - 1
                }
            };
            let s = &mut pending.directions[at].1;
            s.ios += d.ios;
            s.bytes += d.bytes;
            s.errors += d.errors;
            s.latency.add(&latency);
        }
    }

    /// The seconds every rank has sent, those their stream has moved
    /// `LATE_BY` past, and those of workloads before `workload` (the ranks
    /// met before it started, so no more come), oldest first, each as a
    /// cluster's update in `phase`.
    pub fn ready(&mut self, workload: &str, phase: &str) -> Vec<Update> {
        let done: Vec<Key> = self
            .pending
            .iter()
            .filter(|((w, s, index), p)| {
                p.from.len() as u32 >= self.ranks
                    || w != workload
                    || self
                        .newest
                        .get(&(w.clone(), s.clone()))
                        .is_some_and(|&n| n >= index + LATE_BY)
            })
            .map(|(k, _)| k.clone())
            .collect();
        done.into_iter()
            .filter_map(|k| self.give(k, phase))
            .collect()
    }

    /// Every second held, as it is: the run has ended, and no more come.
    pub fn rest(&mut self, phase: &str) -> Vec<Update> {
        let keys: Vec<Key> = self.pending.keys().cloned().collect();
        keys.into_iter()
            .filter_map(|k| self.give(k, phase))
            .collect()
    }

    fn give(&mut self, key: Key, phase: &str) -> Option<Update> {
        let pending = self.pending.remove(&key)?;
        let (workload, stream, index) = key;
        let given = self
            .given
            .entry((workload.clone(), stream.clone()))
            .or_insert(index);
        *given = (*given).max(index);
        let directions = pending
            .directions
            .into_iter()
            .map(|(n, mut s)| {
                s.dur_s = pending.dur_s;
                (n, s)
            })
            .collect();
        Some(Update {
            unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            phase: phase.to_string(),
            workload,
            stream,
            index,
            dur_s: pending.dur_s,
            directions,
            ranks: Some(pending.from.len() as u32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(index: u64, latencies: &[u64]) -> RankSecond {
        let mut h = LatencyHistogram::new();
        for &ns in latencies {
            h.record(ns);
        }
        RankSecond {
            workload: "w".into(),
            stream: "s".into(),
            index,
            dur_s: 1.0,
            directions: vec![RankDirection {
                direction: "read".into(),
                ios: latencies.len() as u64,
                bytes: 4096 * latencies.len() as u64,
                errors: 0,
                histogram: h.encode(),
            }],
        }
    }

    #[test]
    fn a_second_is_merged_exactly_once_every_rank_sent_it() {
        let mut merge = LiveMerge::new(2);
        merge.offer(0, second(0, &[100_000; 99]));
        assert!(merge.ready("w", "p").is_empty(), "rank 1 has not sent it");
        // Rank 1 is slow: its one I/O is the cluster's max and moves p99.
        merge.offer(1, second(0, &[9_000_000, 100_000]));
        let out = merge.ready("w", "p");
        assert_eq!(out.len(), 1);
        let (name, s) = &out[0].directions[0];
        assert_eq!((*name, s.ios, s.latency.count()), ("read", 101, 101));
        let max = s.latency.value_at_percentile(100.0);
        assert!((9_000_000..9_010_000).contains(&max), "{max}");
        assert_eq!(out[0].ranks, Some(2));
        // Averaging the ranks' p99s would have said 4.5 ms; the merge says
        // what the cluster's 101 I/Os did.
        assert!(s.latency.value_at_percentile(99.0) < 200_000);
    }

    #[test]
    fn a_late_rank_does_not_hold_the_cluster_and_its_late_copy_is_dropped() {
        let mut merge = LiveMerge::new(2);
        for i in 0..LATE_BY {
            merge.offer(0, second(i, &[1000]));
        }
        assert!(merge.ready("w", "p").is_empty());
        merge.offer(0, second(LATE_BY, &[1000]));
        let out = merge.ready("w", "p");
        assert_eq!(out.len(), 1, "second 0 is given out without rank 1");
        assert_eq!((out[0].index, out[0].ranks), (0, Some(1)));
        merge.offer(1, second(0, &[1000]));
        assert!(merge.ready("w", "p").is_empty());
        let rest = merge.rest("p");
        assert_eq!(rest.len(), LATE_BY as usize);
        assert!(rest.iter().all(|u| u.ranks == Some(1)));
        // The next workload began: the last one's seconds are all out.
        merge.offer(0, second(9, &[1000]));
        let out = merge.ready("next", "p");
        assert_eq!((out.len(), out[0].index), (1, 9));
    }
}
