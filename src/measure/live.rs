//! What a run has measured so far, for those who watch it while it runs
//! (`--metrics-listen`, `--live`, `--metrics-push`): counters and exact
//! latency histograms per workload, stream and direction, fed one
//! completed second at a time by the coordinating thread (never by a
//! worker), and the phase the command is in.

use crate::measure::direction::Direction;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::CompletedSecond;
use std::sync::Mutex;
use std::sync::mpsc::Sender;

/// The figures so far, shared between the run and the threads that show
/// them.
#[derive(Default)]
pub struct LiveBoard {
    board: Mutex<Board>,
    /// Where each completed second is also sent as it comes (the `--live`
    /// lines and the pushes), if anyone listens.
    updates: Mutex<Vec<Sender<Update>>>,
}

/// A copy of the figures at one moment.
#[derive(Clone, Default, Debug)]
pub struct Board {
    /// What the command is doing: "run 2 of 8: rr-4k-qd16",
    /// "capacity step 3 at 4,000 IOPS", "PTS round 5".
    pub phase: String,
    /// The workload running now (the name results give it).
    pub workload: String,
    /// Runs done and planned, where the command knows (a sweep, rounds).
    pub progress: Option<(u64, u64)>,
    /// How much of the run going on now is planned, and since when.
    pub current: Option<PlannedRun>,
    /// Verdicts known so far ("interval 3: pass"), newest last.
    pub verdicts: Vec<String>,
    pub series: Vec<Series>,
    /// Under `--mpi`, at rank 0: every rank's seconds merged exactly
    /// (`live_merge.rs`), one series per workload, stream and direction.
    pub cluster: Vec<Series>,
    /// The run has ended: the figures are final.
    pub finished: bool,
}

/// What the run going on now is planned to do: its seconds (ramp
/// included) when time-bound, or its bytes when size-bound.
#[derive(Clone, Debug)]
pub struct PlannedRun {
    pub started: std::time::Instant,
    pub seconds: Option<f64>,
    pub bytes: Option<u64>,
}

impl Board {
    /// The share of the command done: runs done, and the share of the
    /// current one by its planned time or bytes (below 1 until it ends).
    pub fn progress_ratio(&self) -> Option<f64> {
        let (done, of) = self.progress?;
        if of == 0 {
            return Some(0.0);
        }
        let share = match &self.current {
            Some(PlannedRun {
                started,
                seconds: Some(s),
                ..
            }) if *s > 0.0 => started.elapsed().as_secs_f64() / s,
            Some(PlannedRun { bytes: Some(b), .. }) if *b > 0 => {
                let moved: u64 = self
                    .series
                    .iter()
                    .filter(|s| s.workload == self.workload)
                    .map(|s| s.bytes)
                    .sum();
                moved as f64 / *b as f64
            }
            _ => 0.0,
        };
        Some(((done as f64 + share.clamp(0.0, 0.99)) / of as f64).min(1.0))
    }
}

/// One workload's stream's direction.
#[derive(Clone, Debug)]
pub struct Series {
    pub workload: String,
    pub stream: String,
    /// The direction's name (`read`, `write`, `trim`).
    pub direction: &'static str,
    pub ios: u64,
    pub bytes: u64,
    /// Rated runs: I/Os due that had no answer at the deadline.
    pub unanswered: u64,
    /// I/Os that went out more than 1 ms after they could.
    pub late: u64,
    /// I/Os that failed.
    pub errors: u64,
    /// Every completion so far.
    pub run: LatencyHistogram,
    /// The last completed second.
    pub last: Option<Second>,
    /// A cluster series: the ranks its last second merged.
    pub ranks: Option<u32>,
}

impl Series {
    /// The series of `workload`, `stream` and `direction` in `all`, added
    /// (empty) if it is not there yet.
    fn of<'a>(
        all: &'a mut Vec<Series>,
        workload: &str,
        stream: &str,
        direction: &'static str,
    ) -> &'a mut Series {
        let at = all
            .iter()
            .position(|s| s.workload == workload && s.stream == stream && s.direction == direction)
            .unwrap_or_else(|| {
                all.push(Series {
                    workload: workload.to_string(),
                    stream: stream.to_string(),
                    direction,
                    ios: 0,
                    bytes: 0,
                    unanswered: 0,
                    late: 0,
                    errors: 0,
                    run: LatencyHistogram::new(),
                    last: None,
                    ranks: None,
                });
                all.len() - 1
            });
        &mut all[at]
    }
}

/// One second of one series.
#[derive(Clone, Debug)]
pub struct Second {
    pub index: u64,
    pub dur_s: f64,
    pub ios: u64,
    pub bytes: u64,
    pub errors: u64,
    pub latency: LatencyHistogram,
}

impl Second {
    /// The mean number of I/Os in flight over the second, by Little's law
    /// from its completions (their latencies summed over its length): an
    /// I/O still out when the second ended counts in the second it
    /// completes in.
    pub fn in_flight(&self) -> f64 {
        if self.dur_s <= 0.0 {
            return 0.0;
        }
        self.latency.summary().mean * self.latency.count() as f64 / 1e9 / self.dur_s
    }
}

/// A second just completed, as sent to the listeners: the stream's
/// directions that did I/O in it.
#[derive(Clone, Debug)]
pub struct Update {
    pub unix_s: f64,
    pub phase: String,
    pub workload: String,
    pub stream: String,
    pub index: u64,
    pub dur_s: f64,
    pub directions: Vec<(&'static str, Second)>,
    /// A cluster's second (`--mpi`, at rank 0): the ranks it merges.
    pub ranks: Option<u32>,
}

/// Issue lag past this counts an I/O as late (as a replay counts it).
const LATE_NS: u64 = 1_000_000;

impl LiveBoard {
    pub fn new() -> Self {
        Self::default()
    }

    /// Also sends each completed second to `to`.
    pub fn listen(&self, to: Sender<Update>) {
        self.updates.lock().expect("not poisoned").push(to);
    }

    /// Forgets the listeners: their threads end once they have what was
    /// sent.
    pub fn stop_listening(&self) {
        self.updates.lock().expect("not poisoned").clear();
    }

    /// The workload running now and what the command is doing.
    pub fn now(&self) -> (String, String) {
        let b = self.board.lock().expect("not poisoned");
        (b.workload.clone(), b.phase.clone())
    }

    pub fn snapshot(&self) -> Board {
        self.board.lock().expect("not poisoned").clone()
    }

    /// What the command is doing now, and how far along it is.
    pub fn phase(&self, phase: impl Into<String>, progress: Option<(u64, u64)>) {
        let mut b = self.board.lock().expect("not poisoned");
        b.phase = phase.into();
        b.progress = progress.or(b.progress);
    }

    /// What the run starting now is planned to do (None: not known).
    pub fn planned(&self, seconds: Option<f64>, bytes: Option<u64>) {
        self.board.lock().expect("not poisoned").current = Some(PlannedRun {
            started: std::time::Instant::now(),
            seconds,
            bytes,
        });
    }

    /// The workload the next seconds are of.
    pub fn workload(&self, name: &str) {
        self.board.lock().expect("not poisoned").workload = name.to_string();
    }

    /// A verdict the command has reached ("interval 3: pass").
    pub fn verdict(&self, said: impl Into<String>) {
        let mut b = self.board.lock().expect("not poisoned");
        b.verdicts.push(said.into());
        // A day of hourly verdicts, not an unbounded list.
        if b.verdicts.len() > 64 {
            b.verdicts.remove(0);
        }
    }

    pub fn finished(&self) {
        self.board.lock().expect("not poisoned").finished = true;
    }

    /// Second `second` of stream `stream` of the current workload.
    pub fn second(&self, stream: &str, second: &CompletedSecond) {
        let update = {
            let mut b = self.board.lock().expect("not poisoned");
            let workload = b.workload.clone();
            let mut directions = Vec::new();
            for (d, sample) in second.directions.iter().enumerate() {
                let direction = Direction::ALL[d].name();
                if sample.ios == 0 && sample.unanswered == 0 && sample.errors == 0 {
                    continue;
                }
                let this = Second {
                    index: second.index,
                    dur_s: second.dur_s,
                    ios: sample.ios,
                    bytes: sample.bytes,
                    errors: sample.errors,
                    latency: sample.latency.clone(),
                };
                let s = Series::of(&mut b.series, &workload, stream, direction);
                s.ios += sample.ios;
                s.bytes += sample.bytes;
                s.unanswered += sample.unanswered;
                s.errors += sample.errors;
                s.late += (sample.issue_lag.share_above(LATE_NS) * sample.issue_lag.count() as f64)
                    .round() as u64;
                s.run.add(&sample.latency);
                s.last = Some(this.clone());
                directions.push((direction, this));
            }
            Update {
                unix_s: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64()),
                phase: b.phase.clone(),
                workload,
                stream: stream.to_string(),
                index: second.index,
                dur_s: second.dur_s,
                directions,
                ranks: None,
            }
        };
        self.send(update);
    }

    /// A second of every rank merged (`--mpi`, at rank 0): its figures go
    /// beside this host's, and to the listeners as a cluster's line.
    pub fn cluster_second(&self, merged: Update) {
        {
            let mut b = self.board.lock().expect("not poisoned");
            for (direction, second) in &merged.directions {
                let s = Series::of(&mut b.cluster, &merged.workload, &merged.stream, direction);
                s.ios += second.ios;
                s.bytes += second.bytes;
                s.errors += second.errors;
                s.run.add(&second.latency);
                s.last = Some(second.clone());
                s.ranks = merged.ranks;
            }
        }
        self.send(merged);
    }

    fn send(&self, update: Update) {
        let mut listeners = self.updates.lock().expect("not poisoned");
        // A listener that has gone (its thread ended) is dropped.
        listeners.retain(|to| to.send(update.clone()).is_ok());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::intervals::DirectionSample;

    fn second(index: u64, reads: &[u64]) -> CompletedSecond {
        let mut read = DirectionSample::default();
        for &ns in reads {
            read.ios += 1;
            read.bytes += 4096;
            read.latency.record(ns);
        }
        CompletedSecond {
            index,
            dur_s: 1.0,
            directions: [read, DirectionSample::default(), DirectionSample::default()],
        }
    }

    #[test]
    fn seconds_add_up_per_series_and_reach_the_listeners() {
        let board = LiveBoard::new();
        let (tx, rx) = std::sync::mpsc::channel();
        board.listen(tx);
        board.workload("rr");
        board.phase("run 1 of 2: rr", Some((0, 2)));
        board.second("rr", &second(0, &[100_000, 200_000]));
        board.second("rr", &second(1, &[300_000]));
        let b = board.snapshot();
        assert_eq!(b.series.len(), 1, "no series for a direction without I/O");
        let s = &b.series[0];
        assert_eq!((s.ios, s.bytes, s.run.count()), (3, 3 * 4096, 3));
        assert_eq!(s.last.as_ref().map(|l| l.index), Some(1));
        let updates: Vec<Update> = rx.try_iter().collect();
        assert_eq!(updates.len(), 2);
        assert_eq!(updates[1].directions[0].1.ios, 1);
        assert_eq!(updates[0].phase, "run 1 of 2: rr");
        // Another workload's seconds are a series of their own.
        board.workload("rw");
        board.second("rw", &second(0, &[1]));
        assert_eq!(board.snapshot().series.len(), 2);
    }
}
