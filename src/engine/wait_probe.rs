//! How `--completion-wait auto` decides, per worker, while it runs: it
//! sleeps and polls in turn for short epochs, counts the completions of
//! each epoch per second of wall time and the worker thread's CPU time per
//! completion, and keeps the wait that completes more (the one cheaper in
//! CPU when the two are within a few percent: a rated worker completes as
//! many either way). When the completion rate then moves by a quarter, it
//! measures again. Polling is then judged by what it keeps doing: short
//! epochs can flatter it (the device's kernel worker has not yet been
//! pushed off the poller's CPU), so a poll whose rate over whole seconds
//! falls below what sleeping measured goes back to sleeping.
//!
//! With [`DEEP`] or more I/Os in flight a poll must also pay for its CPU:
//! it is kept only when it adds more completions than CPU per completion
//! (from 100k a second at 3 us each to 110k at 4 us is not kept). At such
//! depths the device sets the pace more than the wake-up does, and a poller
//! that holds its CPU takes it from the device's kernel work and from the
//! other workers; at depth 1 and 2 each I/O waits for its own wake-up, and
//! polling is how a run reaches the device's latency, so the rate decides.
//!
//! Which wait is faster depends on the host as much as on the device: on
//! one 2-CPU VM polling doubled a loop device's IOPS at depth 1, on another
//! it cut them by a third (the poller and the device's kernel worker
//! competing for the CPU), so no rule fixed in advance can know.

use crate::measure::cpu::thread_cpu_ns;
use crate::spec::{CompletionWait, WaitChoice};
use std::time::{Duration, Instant};

/// One epoch of one wait: long enough that the scheduler's placement of
/// the worker and the device's kernel worker settles within it.
const EPOCH: Duration = Duration::from_millis(50);
/// Epochs of each wait per measurement, taken in turn.
const EPOCHS_EACH: usize = 3;
/// Within this share of each other, two rates tie.
const TIE: f64 = 0.03;
/// A settled rate that moves by more than this share for `MOVED_WINDOWS`
/// windows in a row is measured again, no sooner than the settling time
/// after the last decision: `SETTLE` at first, doubled (up to
/// `SETTLE_MOST`) each time a measurement keeps the wait it had. Measuring
/// costs: on some hosts the polling epochs slow the sleeping that follows
/// for seconds, and a rate that swings by itself (a loop device at depth 1
/// moves between two levels) would otherwise be measured over and over.
const MOVED: f64 = 0.25;
const MOVED_WINDOWS: u32 = 2;
const SETTLE: Duration = Duration::from_secs(2);
const SETTLE_MOST: Duration = Duration::from_secs(64);
/// The window a settled rate is watched over.
const WINDOW: Duration = Duration::from_secs(1);
/// From this many I/Os in flight per worker, a poll must add more
/// completions than it adds CPU per completion.
pub const DEEP: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Measuring: the wait of the epoch under way, and epochs left.
    Probing { spin: bool, left: usize },
    /// Decided at `at`, completing `rate` a second then; `sleep_rate`
    /// is what sleeping completed when measured.
    Settled {
        spin: bool,
        at: Instant,
        rate: f64,
        sleep_rate: f64,
    },
}

/// The decisions of one worker's `auto` wait.
#[derive(Debug)]
pub struct WaitProbe {
    limit: Duration,
    /// At least [`DEEP`] I/Os in flight: a poll must pay for its CPU.
    deep: bool,
    origin: Instant,
    state: State,
    epoch_start: Instant,
    epoch_completions: u64,
    epoch_cpu_ns: u64,
    /// Per wait (sleep, spin): each epoch's completions a second and CPU ns
    /// per completion.
    trials: [Vec<(f64, f64)>; 2],
    choices: Vec<WaitChoice>,
    /// How long a decision stands before a moved rate is measured again.
    settle: Duration,
    /// Windows in a row whose rate moved.
    moved_windows: u32,
    /// Windows in a row a poll completed less than sleeping had.
    behind_windows: u32,
}

impl WaitProbe {
    /// A probe for a worker with `depth` I/Os in flight that polls for up
    /// to `limit` when it polls, starting now.
    pub fn new(limit: Duration, depth: u32, now: Instant) -> Self {
        WaitProbe {
            limit,
            deep: depth >= DEEP,
            origin: now,
            state: State::Probing {
                spin: false,
                left: 2 * EPOCHS_EACH,
            },
            epoch_start: now,
            epoch_completions: 0,
            epoch_cpu_ns: thread_cpu_ns(),
            trials: [Vec::new(), Vec::new()],
            choices: Vec::new(),
            settle: SETTLE,
            moved_windows: 0,
            behind_windows: 0,
        }
    }

    /// The poll to make now (None: sleep), given the completions reaped
    /// since the last call.
    #[inline]
    pub fn next(&mut self, now: Instant, completed: u64) -> Option<Duration> {
        self.epoch_completions += completed;
        let elapsed = now.saturating_duration_since(self.epoch_start);
        match self.state {
            State::Probing { spin, left } if elapsed >= EPOCH => self.end_epoch(now, spin, left),
            State::Settled {
                spin,
                at,
                rate,
                sleep_rate,
            } if elapsed >= WINDOW => {
                let now_rate = self.epoch_completions as f64 / elapsed.as_secs_f64();
                let cpu = thread_cpu_ns().saturating_sub(self.epoch_cpu_ns) as f64
                    / self.epoch_completions.max(1) as f64;
                self.restart_epoch(now);
                let behind = spin && now_rate < sleep_rate * (1.0 - TIE);
                self.behind_windows = if behind { self.behind_windows + 1 } else { 0 };
                if self.behind_windows >= MOVED_WINDOWS {
                    self.back_to_sleeping(now, now_rate, cpu, sleep_rate);
                    return None;
                }
                let moved = rate > 0.0 && ((now_rate - rate) / rate).abs() > MOVED;
                self.moved_windows = if moved { self.moved_windows + 1 } else { 0 };
                if self.moved_windows >= MOVED_WINDOWS
                    && now.saturating_duration_since(at) >= self.settle
                {
                    self.moved_windows = 0;
                    self.trials = [Vec::new(), Vec::new()];
                    self.state = State::Probing {
                        spin: false,
                        left: 2 * EPOCHS_EACH,
                    };
                }
            }
            _ => {}
        }
        let spin = match self.state {
            State::Probing { spin, .. } | State::Settled { spin, .. } => spin,
        };
        spin.then_some(self.limit)
    }

    /// Polling kept completing `kept` a second, less than sleeping's
    /// `sleep_rate`: sleep, and say why.
    fn back_to_sleeping(&mut self, now: Instant, kept: f64, kept_cpu_ns: f64, sleep_rate: f64) {
        self.behind_windows = 0;
        self.moved_windows = 0;
        let sleep_cpu_ns = median(&self.trials[0]).1;
        self.choices.push(WaitChoice {
            worker: 0,
            at_s: now.saturating_duration_since(self.origin).as_secs_f64(),
            chose: CompletionWait::Sleep,
            spin_per_s: kept,
            sleep_per_s: sleep_rate,
            spin_cpu_ns: kept_cpu_ns,
            sleep_cpu_ns,
        });
        // Polling flattered in short epochs would flatter again: the next
        // measurement waits longer.
        self.settle = (self.settle * 2).min(SETTLE_MOST);
        self.state = State::Settled {
            spin: false,
            at: now,
            rate: sleep_rate,
            sleep_rate,
        };
    }

    fn restart_epoch(&mut self, now: Instant) {
        self.epoch_start = now;
        self.epoch_completions = 0;
        self.epoch_cpu_ns = thread_cpu_ns();
    }

    fn end_epoch(&mut self, now: Instant, spin: bool, left: usize) {
        let seconds = now
            .saturating_duration_since(self.epoch_start)
            .as_secs_f64();
        let cpu = thread_cpu_ns().saturating_sub(self.epoch_cpu_ns);
        // An epoch with nothing completed (nothing was in flight) says
        // nothing of either wait: it is taken again.
        let left = if self.epoch_completions > 0 {
            let n = self.epoch_completions as f64;
            self.trials[usize::from(spin)].push((n / seconds, cpu as f64 / n));
            left - 1
        } else {
            left
        };
        self.restart_epoch(now);
        // Every sleeping epoch first, then every polling one: on some hosts a
        // worker that has polled sleeps slower for seconds after (the
        // scheduler keeps the device's kernel worker away from its CPU), so
        // sleeping is measured before any poll.
        self.state = if left > 0 {
            State::Probing {
                spin: left <= EPOCHS_EACH,
                left,
            }
        } else {
            self.decide(now)
        };
    }

    fn decide(&mut self, now: Instant) -> State {
        let [sleep, spin] = [median(&self.trials[0]), median(&self.trials[1])];
        let chose_spin = spin_wins(sleep, spin, self.deep);
        // A measurement that keeps the wait it had doubles the time before
        // the next; one that changes it starts again from the shortest.
        let kept = self
            .choices
            .last()
            .is_some_and(|last| (last.chose == CompletionWait::Spin) == chose_spin);
        self.settle = match kept {
            true => (self.settle * 2).min(SETTLE_MOST),
            false => SETTLE,
        };
        self.choices.push(WaitChoice {
            worker: 0,
            at_s: now.saturating_duration_since(self.origin).as_secs_f64(),
            chose: if chose_spin {
                CompletionWait::Spin
            } else {
                CompletionWait::Sleep
            },
            spin_per_s: spin.0,
            sleep_per_s: sleep.0,
            spin_cpu_ns: spin.1,
            sleep_cpu_ns: sleep.1,
        });
        self.behind_windows = 0;
        State::Settled {
            spin: chose_spin,
            at: now,
            rate: if chose_spin { spin.0 } else { sleep.0 },
            sleep_rate: sleep.0,
        }
    }

    /// What it decided, in order.
    pub fn choices(&self) -> &[WaitChoice] {
        &self.choices
    }
}

/// Whether polling, measured at `spin`, beats sleeping, measured at
/// `sleep` (each as completions a second and CPU ns per completion): the
/// one that completes more, the cheaper when they tie; when `deep`, a poll
/// that completes more must gain more in rate than it costs in CPU per
/// completion.
fn spin_wins(sleep: (f64, f64), spin: (f64, f64), deep: bool) -> bool {
    if spin.0 > sleep.0 * (1.0 + TIE) {
        // spin rate / sleep rate > spin CPU / sleep CPU, without dividing.
        !deep || spin.0 * sleep.1 > sleep.0 * spin.1
    } else if sleep.0 > spin.0 * (1.0 + TIE) {
        false
    } else {
        spin.1 < sleep.1
    }
}

/// The median (by rate) of `trials`, each as (rate, CPU per completion).
fn median(trials: &[(f64, f64)]) -> (f64, f64) {
    let mut sorted = trials.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    sorted.get(sorted.len() / 2).copied().unwrap_or((0.0, 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a probe against a device that completes `sleep` or `spin` I/Os
    /// a second as the probe waits, for `seconds`, in 1 ms steps.
    fn drive(probe: &mut WaitProbe, start: Instant, seconds: f64, rates: (f64, f64)) -> Instant {
        let mut now = start;
        let mut spin = probe.next(now, 0).is_some();
        let steps = (seconds * 1000.0) as u64;
        for _ in 0..steps {
            now += Duration::from_millis(1);
            let rate = if spin { rates.1 } else { rates.0 };
            spin = probe.next(now, (rate / 1000.0) as u64).is_some();
        }
        now
    }

    #[test]
    fn the_wait_that_completes_more_is_kept() {
        let start = Instant::now();
        let limit = Duration::from_micros(50);
        let mut p = WaitProbe::new(limit, 1, start);
        drive(&mut p, start, 0.5, (50_000.0, 35_000.0));
        let c = &p.choices()[0];
        assert_eq!(c.chose, CompletionWait::Sleep, "{c:?}");
        assert!((c.sleep_per_s - 50_000.0).abs() < 2_000.0, "{c:?}");
        assert_eq!(p.next(start + Duration::from_millis(600), 0), None);
        let mut p = WaitProbe::new(limit, 1, start);
        drive(&mut p, start, 0.5, (30_000.0, 60_000.0));
        assert_eq!(p.choices()[0].chose, CompletionWait::Spin);
        assert_eq!(p.next(start + Duration::from_millis(600), 0), Some(limit));
    }

    #[test]
    fn a_rate_that_moves_is_measured_again() {
        let start = Instant::now();
        let mut p = WaitProbe::new(Duration::from_micros(50), 1, start);
        let now = drive(&mut p, start, 3.0, (30_000.0, 60_000.0));
        assert_eq!(p.choices().len(), 1);
        // The device slows down, and now sleeping completes more.
        drive(&mut p, now, 4.0, (20_000.0, 10_000.0));
        let last = p.choices().last().unwrap();
        assert!(p.choices().len() >= 2, "{:?}", p.choices());
        assert_eq!(last.chose, CompletionWait::Sleep);
    }

    #[test]
    fn a_rate_that_swings_by_itself_is_not_measured_over_and_over() {
        let start = Instant::now();
        let mut p = WaitProbe::new(Duration::from_micros(50), 1, start);
        // Settled on sleep at 50k; then the rate swings between 35k and
        // 55k second by second, whatever the wait.
        let mut now = drive(&mut p, start, 1.0, (50_000.0, 40_000.0));
        for second in 0..40 {
            let rate = if second % 2 == 0 { 35_000.0 } else { 55_000.0 };
            now = drive(&mut p, now, 1.0, (rate, rate * 0.8));
        }
        // A window that moves alone does not count; two in a row do, but
        // each measurement that keeps sleeping doubles the wait for the
        // next: a handful in 40 s, not twenty.
        assert!(p.choices().len() <= 4, "{:?}", p.choices());
        assert!(p.choices().iter().all(|c| c.chose == CompletionWait::Sleep));
    }

    #[test]
    fn equal_rates_keep_the_cheaper_wait_and_idle_epochs_do_not_count() {
        let start = Instant::now();
        let mut p = WaitProbe::new(Duration::from_micros(50), 1, start);
        // Nothing completes for a while: no decision from that.
        drive(&mut p, start, 0.3, (0.0, 0.0));
        assert!(p.choices().is_empty());
        drive(
            &mut p,
            start + Duration::from_millis(300),
            0.5,
            (10_000.0, 10_000.0),
        );
        assert_eq!(p.choices().len(), 1);
    }

    #[test]
    fn with_many_in_flight_a_poll_must_add_more_completions_than_cpu() {
        // 10% more completions for a third more CPU each: kept at depth 1,
        // not when deep.
        let (sleep, spin) = ((100_000.0, 3_000.0), (110_000.0, 4_000.0));
        assert!(spin_wins(sleep, spin, false));
        assert!(!spin_wins(sleep, spin, true));
        // Three times the completions for more CPU each: kept either way.
        let (sleep, spin) = ((66_000.0, 7_000.0), (219_000.0, 9_000.0));
        assert!(spin_wins(sleep, spin, true));
        // Slower polling is never kept; a tie goes to the cheaper.
        assert!(!spin_wins((100_000.0, 3_000.0), (90_000.0, 2_000.0), false));
        assert!(spin_wins((100_000.0, 3_000.0), (101_000.0, 2_900.0), true));
        assert!(!spin_wins(
            (100_000.0, 3_000.0),
            (101_000.0, 3_100.0),
            false
        ));
    }

    /// Polling that measured faster in short epochs but completes less
    /// over whole seconds than sleeping did goes back to sleeping, and the
    /// result says so with the rate it kept.
    #[test]
    fn a_poll_that_keeps_completing_less_than_sleeping_goes_back_to_sleep() {
        let start = Instant::now();
        let mut p = WaitProbe::new(Duration::from_micros(50), 1, start);
        let now = drive(&mut p, start, 0.4, (30_000.0, 40_000.0));
        assert_eq!(p.choices()[0].chose, CompletionWait::Spin);
        // Then polling slows to 24k (a fifth below sleeping's 30k).
        drive(&mut p, now, 3.5, (30_000.0, 24_000.0));
        let last = p.choices().last().unwrap();
        assert_eq!(last.chose, CompletionWait::Sleep, "{:?}", p.choices());
        assert!((last.spin_per_s - 24_000.0).abs() < 1_500.0, "{last:?}");
        assert_eq!(p.next(now + Duration::from_secs(4), 0), None);
        // A poll that keeps up is kept.
        let mut p = WaitProbe::new(Duration::from_micros(50), 1, start);
        drive(&mut p, start, 5.0, (30_000.0, 40_000.0));
        assert_eq!(p.choices().len(), 1);
    }
}
