//! The one pacer of every kind of run: a rated worker's schedule (when
//! each I/O or request is due, evenly or as a Poisson process, and those
//! due by a deadline that were never issued), the wait until one is due,
//! and a rate of bytes a second that workers share (a path's time each
//! transfer books in turn: training's `--read-rate`).

use crate::measure::histogram::LatencyHistogram;
use crate::util::stop::StopFlag;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// When rated I/Os are due: evenly, I/O `n` at `start + n / rate`, or as
/// a Poisson process (fio's `rate_process=poisson`), the gaps between them
/// drawn from an exponential distribution of mean `1 / rate`.
pub struct Schedule {
    pub start: Instant,
    pub rate: f64,
    /// I/Os issued so far (the index of the next one).
    pub issued: u64,
    poisson: Option<RefCell<PoissonTimes>>,
}

/// The arrival times of a Poisson process, drawn as they are asked for and
/// forgotten once their I/O is issued.
struct PoissonTimes {
    rng: SmallRng,
    /// The index of `times[0]`.
    base: u64,
    /// Seconds from the start.
    times: VecDeque<f64>,
}

impl PoissonTimes {
    fn time(&mut self, n: u64, rate: f64) -> f64 {
        while self.base + (self.times.len() as u64) <= n {
            let last = self.times.back().copied().unwrap_or(0.0);
            // 1 - U is in (0, 1]: its logarithm is finite.
            let u: f64 = 1.0 - self.rng.random::<f64>();
            self.times.push_back(last - u.ln() / rate);
        }
        self.times[(n - self.base) as usize]
    }

    fn forget_before(&mut self, n: u64) {
        // The newest time is kept: the next gap is drawn from it.
        while self.base < n && self.times.len() > 1 {
            self.times.pop_front();
            self.base += 1;
        }
    }
}

impl Schedule {
    /// Even: I/O `n` due at `start + n / rate`.
    pub fn even(start: Instant, rate: f64) -> Schedule {
        Schedule {
            start,
            rate,
            issued: 0,
            poisson: None,
        }
    }

    /// A Poisson process of `rate` arrivals a second, I/O 0 at `start`;
    /// `seed` makes the same worker draw the same gaps.
    pub fn poisson(start: Instant, rate: f64, seed: u64) -> Schedule {
        Schedule {
            poisson: Some(RefCell::new(PoissonTimes {
                rng: SmallRng::seed_from_u64(seed),
                base: 0,
                times: VecDeque::from([0.0]),
            })),
            ..Schedule::even(start, rate)
        }
    }

    pub fn due(&self, n: u64) -> Instant {
        let seconds = match &self.poisson {
            None => n as f64 / self.rate,
            Some(times) => times.borrow_mut().time(n, self.rate),
        };
        self.start + Duration::from_secs_f64(seconds)
    }

    /// How many I/Os were due at or before `at`.
    pub fn due_by(&self, at: Instant) -> u64 {
        let seconds = at.saturating_duration_since(self.start).as_secs_f64();
        let Some(times) = &self.poisson else {
            return (seconds * self.rate).floor() as u64 + 1;
        };
        let mut times = times.borrow_mut();
        let mut n = self.issued;
        while times.time(n, self.rate) <= seconds {
            n += 1;
        }
        n
    }

    /// One more I/O went out.
    pub fn advance(&mut self) {
        self.issued += 1;
        if let Some(times) = &self.poisson {
            times.borrow_mut().forget_before(self.issued);
        }
    }
}

/// The most entries a backlog's count records: beyond, I/Os are counted
/// in steps of as many.
pub const BACKLOG_STEPS: u64 = 10_000;

/// Sleeps until `due`, waking for a stop at least every 50 ms.
pub fn sleep_until(due: Instant, stop: &StopFlag) {
    loop {
        let now = Instant::now();
        if now >= due || stop.is_set() {
            return;
        }
        std::thread::sleep((due - now).min(Duration::from_millis(50)));
    }
}

/// A cap on the bytes a second of every worker together: each transfer
/// books its turn of the path's time, and ends no sooner than its turn.
pub struct SharedRate {
    bytes_per_s: f64,
    next_free: Mutex<Option<Instant>>,
}

impl SharedRate {
    pub fn new(bytes_per_s: u64) -> SharedRate {
        SharedRate {
            bytes_per_s: bytes_per_s as f64,
            next_free: Mutex::new(None),
        }
    }

    /// Books `bytes` of the path's time; returns when the booking ends.
    pub fn book(&self, bytes: u64) -> Instant {
        let mut next = self.next_free.lock().expect("not poisoned");
        let now = Instant::now();
        let start = next.map_or(now, |n| n.max(now));
        let end = start + Duration::from_secs_f64(bytes as f64 / self.bytes_per_s);
        *next = Some(end);
        end
    }
}

/// The I/Os `schedule` owed by `deadline` and never issued, at their age
/// then, into `late` (at most [`BACKLOG_STEPS`] entries).
pub fn count_backlog(schedule: &Schedule, deadline: Instant, late: &mut LatencyHistogram) {
    let backlog = schedule.due_by(deadline).saturating_sub(schedule.issued);
    if backlog == 0 {
        return;
    }
    let step = backlog.div_ceil(BACKLOG_STEPS);
    let mut n = schedule.issued;
    while n < schedule.issued + backlog {
        let count = step.min(schedule.issued + backlog - n);
        let age = deadline.saturating_duration_since(schedule.due(n));
        late.record_n(age.as_nanos() as u64, count);
        n += count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_rate_books_the_path_back_to_back() {
        let gate = SharedRate::new(1_000_000);
        let first = gate.book(500_000);
        let second = gate.book(500_000);
        let gap = second - first;
        assert!((gap.as_secs_f64() - 0.5).abs() < 1e-6, "{gap:?}");
    }

    #[test]
    fn poisson_arrivals_keep_the_rate_with_exponential_gaps() {
        let start = Instant::now();
        let mut s = Schedule::poisson(start, 1000.0, 7);
        assert_eq!(s.due(0), start);
        let mut gaps = Vec::new();
        let mut last = s.due(0);
        for _ in 0..20_000 {
            s.advance();
            let due = s.due(s.issued);
            gaps.push((due - last).as_secs_f64());
            last = due;
        }
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 0.001).abs() < 0.0001, "mean gap {mean}");
        // Exponential: about 37% of gaps are longer than the mean (even
        // arrivals: none), and the spread equals the mean.
        let longer = gaps.iter().filter(|g| **g > 0.001).count() as f64 / gaps.len() as f64;
        assert!((0.33..0.41).contains(&longer), "{longer}");
        // By one second about 1,000 more were due; the same seed draws the
        // same times.
        let by = s.due_by(last + Duration::from_secs(1)) - s.issued;
        assert!((900..1100).contains(&by), "{by}");
        let again = Schedule::poisson(start, 1000.0, 7);
        let mut first = Schedule::poisson(start, 1000.0, 7);
        first.advance();
        again.due(5);
        assert_eq!(again.due(1), first.due(1));
    }
}
