//! How the workers spent their time and how promptly they issued each I/O
//! once it could go: what tells a slow device from a busy host or from
//! fathom's own limits.

use super::histogram::{LatencyHistogram, LatencySummary};
use serde::{Deserialize, Serialize};

/// An I/O that went out more than this long after it could is late.
pub const LATE_NS: u64 = 1_000_000;

/// Issue lags of one worker's second, counted in a small log-linear table
/// (eight steps an octave: each value to within 1/8 of itself) instead of
/// an HDR histogram: recording must cost next to nothing per I/O, and the
/// table fits in a few cache lines' worth of what the hot loop touches.
/// `drain_into` turns it into the histogram the results carry.
#[derive(Clone)]
pub struct LagCounts {
    counts: Box<[u64; LAG_BUCKETS]>,
    recorded: bool,
}

const LAG_BUCKETS: usize = 16 + 60 * 8;

impl Default for LagCounts {
    fn default() -> Self {
        LagCounts {
            counts: Box::new([0; LAG_BUCKETS]),
            recorded: false,
        }
    }
}

impl LagCounts {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[lag_bucket(ns)] += 1;
        self.recorded = true;
    }

    /// Adds every count to `h` at the highest value its bucket holds (a
    /// lag is never reported shorter than it was), and empties the table.
    pub fn drain_into(&mut self, h: &mut LatencyHistogram) {
        if !self.recorded {
            return;
        }
        for (i, n) in self.counts.iter_mut().enumerate() {
            if *n > 0 {
                h.record_n(lag_bucket_top(i), *n);
                *n = 0;
            }
        }
        self.recorded = false;
    }
}

/// Values under 16 have a bucket each; above, eight buckets an octave.
#[inline]
fn lag_bucket(ns: u64) -> usize {
    if ns < 16 {
        return ns as usize;
    }
    let octave = 63 - ns.leading_zeros() as usize;
    let step = ((ns >> (octave - 3)) & 7) as usize;
    16 + (octave - 4) * 8 + step
}

fn lag_bucket_top(i: usize) -> u64 {
    if i < 16 {
        return i as u64;
    }
    let (octave, step) = ((i - 16) / 8 + 4, (i - 16) % 8);
    let width = 1u64 << (octave - 3);
    ((8 + step as u64) << (octave - 3)).saturating_add(width - 1)
}

/// Where the workers' time went, added over workers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WorkerTime {
    /// From the start gate to the worker's end.
    pub ran_ns: u64,
    /// Of that, ready to run but waiting for a CPU (the scheduler's
    /// run_delay); None where the kernel does not say.
    pub waited_for_cpu_ns: Option<u64>,
    /// Inside the engine's submit-and-wait call and flushes: issuing I/Os
    /// and waiting for the device.
    pub in_engine_ns: u64,
    /// Idle on purpose: the schedule's next I/O not due, a think time.
    pub paused_ns: u64,
}

impl WorkerTime {
    pub fn add(&mut self, other: &WorkerTime) {
        self.ran_ns += other.ran_ns;
        self.waited_for_cpu_ns =
            super::cpu::add_known(self.waited_for_cpu_ns, other.waited_for_cpu_ns);
        self.in_engine_ns += other.in_engine_ns;
        self.paused_ns += other.paused_ns;
    }

    /// Of the time the workers ran, the share they waited for a CPU.
    pub fn waited_for_cpu_share(&self) -> Option<f64> {
        self.waited_for_cpu_ns
            .filter(|_| self.ran_ns > 0)
            .map(|w| w as f64 / self.ran_ns as f64)
    }
}

/// How promptly I/Os went out, and where the workers' time went.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IssueTiming {
    /// Issue lag: from when each I/O could go (due on its schedule, and a
    /// slot free for it) to when it went, over every direction.
    pub lag_ns: LatencySummary,
    /// Its histogram (HdrHistogram V2, base64).
    pub lag_histogram: String,
    /// Share of I/Os that went out more than 1 ms after they could.
    pub late_share: f64,
    /// Of the time an I/O slot spent between one I/O going out and the
    /// next, the share it sat free waiting for fathom: mean issue lag
    /// against mean lag plus mean latency. Near 0, the device had all the
    /// I/Os it was offered; large, it waited for fathom or the host.
    pub idle_slot_share: f64,
    /// Of the time the workers ran: inside the engine (issuing I/Os and
    /// waiting for the device), idle on purpose (a schedule, a think time),
    /// and the rest, their own work (choosing, recording, checking),
    /// waiting for a CPU left out.
    pub in_engine_share: f64,
    pub paused_share: f64,
    pub own_share: f64,
}

impl IssueTiming {
    /// The figures of `lag` (every I/O's issue lag), the mean latency of
    /// the same I/Os and the workers' time; None when nothing was issued
    /// while measuring or no time was counted.
    pub fn of(lag: &LatencyHistogram, mean_latency_ns: f64, time: &WorkerTime) -> Option<Self> {
        if lag.count() == 0 || time.ran_ns == 0 {
            return None;
        }
        let summary = lag.summary();
        let ran = time.ran_ns as f64;
        let share = |ns: u64| (ns as f64 / ran).clamp(0.0, 1.0);
        let in_engine_share = share(time.in_engine_ns);
        let paused_share = share(time.paused_ns);
        let waited = share(time.waited_for_cpu_ns.unwrap_or(0));
        let cycle = summary.mean + mean_latency_ns;
        Some(IssueTiming {
            late_share: lag.share_above(LATE_NS),
            idle_slot_share: if cycle > 0.0 {
                summary.mean / cycle
            } else {
                0.0
            },
            own_share: (1.0 - in_engine_share - paused_share - waited).max(0.0),
            in_engine_share,
            paused_share,
            lag_ns: summary,
            lag_histogram: lag.encode(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_buckets_hold_each_value_to_within_an_eighth() {
        for ns in [0, 1, 15, 16, 17, 100, 999, 1_000_000, 123_456_789, u64::MAX] {
            let top = lag_bucket_top(lag_bucket(ns));
            assert!(top >= ns && top - ns <= ns / 8, "{ns} -> {top}");
        }
        assert!(lag_bucket(u64::MAX) < LAG_BUCKETS);
        let mut counts = LagCounts::default();
        let mut h = LatencyHistogram::new();
        counts.record(5_000);
        counts.record(5_000);
        counts.record(2_000_000);
        counts.drain_into(&mut h);
        assert_eq!(h.count(), 3);
        assert!(h.share_above(LATE_NS) > 0.3);
        counts.drain_into(&mut h);
        assert_eq!(h.count(), 3, "drained: nothing twice");
    }

    #[test]
    fn slots_free_half_the_time_are_half_idle() {
        let mut lag = LatencyHistogram::new();
        for _ in 0..99 {
            lag.record(10_000);
        }
        lag.record(2_000_000);
        let time = WorkerTime {
            ran_ns: 1_000,
            waited_for_cpu_ns: Some(100),
            in_engine_ns: 500,
            paused_ns: 100,
        };
        let t = IssueTiming::of(&lag, lag.summary().mean, &time).unwrap();
        assert!((t.idle_slot_share - 0.5).abs() < 1e-9);
        assert!((t.late_share - 0.01).abs() < 1e-9);
        assert!((t.own_share - 0.3).abs() < 1e-9, "{}", t.own_share);
        assert_eq!(t.in_engine_share, 0.5);
        assert!(IssueTiming::of(&LatencyHistogram::new(), 1.0, &time).is_none());
    }
}
