//! A rated worker's schedule: when each I/O is due, and the I/Os due by
//! a deadline that were never issued.

use super::BACKLOG_STEPS;
use crate::measure::histogram::LatencyHistogram;
use std::time::{Duration, Instant};

/// A fixed schedule: I/O `n` is due at `start + n / rate`.
pub(super) struct Schedule {
    pub(super) start: Instant,
    pub(super) rate: f64,
    /// I/Os issued so far (the index of the next one).
    pub(super) issued: u64,
}

impl Schedule {
    pub(super) fn due(&self, n: u64) -> Instant {
        self.start + Duration::from_secs_f64(n as f64 / self.rate)
    }

    /// How many I/Os were due at or before `at`.
    pub(super) fn due_by(&self, at: Instant) -> u64 {
        (at.saturating_duration_since(self.start).as_secs_f64() * self.rate).floor() as u64 + 1
    }
}

/// The I/Os `schedule` owed by `deadline` and never issued, at their age
/// then, into `late` (at most [`BACKLOG_STEPS`] entries).
pub(super) fn count_backlog(schedule: &Schedule, deadline: Instant, late: &mut LatencyHistogram) {
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
