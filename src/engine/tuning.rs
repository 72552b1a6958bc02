//! The engine settings fathom chooses per run, where the best one depends on
//! the regime, and the record of that choice in the result (so that the run
//! can be repeated with the same settings).
//!
//! Only one such setting so far: how an io_uring worker waits. A worker that
//! sleeps in the kernel as soon as it has submitted leaves its CPU idle; the
//! scheduler may then run the device's kernel worker (a loop device's
//! kworker, say) there, and three threads take turns on one CPU per I/O
//! while the other idles; polling the ring for a few tens of microseconds
//! before sleeping keeps the worker's CPU busy and the kernel worker runs on
//! another. On one day that doubled a loop device's IOPS at depth 1; on
//! another, on the same kind of VM, polling cost a third of them. So `auto`
//! measures, per worker, while it runs (`wait_probe.rs`), except where
//! polling cannot win: more workers than CPUs, or more I/Os in flight than
//! a device queues ([`SPIN_MAX_IN_FLIGHT`]). A poll lasts at most
//! [`SPIN_LIMIT`], and only while recent completions came within it.

use crate::spec::{CompletionWait, WorkloadSpec};
use std::time::Duration;

/// The longest a worker polls before it sleeps. Below about 20 us a poll
/// gives up before a fast device's completion arrives (measured: 10 us is
/// worse than no poll); a slow device's completions take longer than this,
/// and the worker stops polling for them.
pub const SPIN_LIMIT: Duration = Duration::from_micros(50);

pub use crate::spec::EngineTuning;

/// How an io_uring worker waits, as its run's tuning says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    Sleep,
    /// Polls for up to this long, then sleeps.
    Spin(Duration),
    /// Measures both and keeps the better (`wait_probe.rs`), polling for
    /// up to this long when it polls.
    Measure(Duration),
}

impl WaitPolicy {
    pub fn of(tuning: Option<&EngineTuning>) -> WaitPolicy {
        match tuning {
            Some(t) => match (t.completion_wait, t.spin_limit()) {
                (CompletionWait::Spin, Some(limit)) => WaitPolicy::Spin(limit),
                (CompletionWait::Auto, Some(limit)) => WaitPolicy::Measure(limit),
                _ => WaitPolicy::Sleep,
            },
            None => WaitPolicy::Sleep,
        }
    }
}

/// Above this many I/Os in flight in all, `auto` does not poll. The block
/// layer holds a limited number of requests per device (`nr_requests`, 128
/// on a loop device); past them a submission waits for a free one in
/// io_uring's worker threads, which need the CPU a polling worker holds.
/// Measured on a loop device: polling at 256 in flight (1 worker at depth
/// 256, or 2 at 128) lost up to a third of fio's IOPS; sleeping did not.
/// The device's own `queue/nr_requests` is used where it is known (a file
/// on tmpfs has no device); this is the usual value, and the fallback.
pub const SPIN_MAX_IN_FLIGHT: u64 = 128;

/// What a run is, for its engine settings: `workers` workers in all, with
/// `in_flight` I/Os in flight at most, on a machine with `cpus` CPUs,
/// on devices that queue `queue` requests at once (the fewest of them;
/// None when unknown).
#[derive(Debug, Clone, Copy)]
pub struct Regime {
    pub workers: usize,
    pub in_flight: u64,
    pub cpus: usize,
    pub queue: Option<u32>,
}

/// The settings for `spec` in `regime`; None for engines that have nothing
/// to choose.
pub fn choose(spec: &WorkloadSpec, regime: Regime) -> Option<EngineTuning> {
    let Regime {
        workers,
        in_flight,
        cpus,
        queue,
    } = regime;
    let queued = queue.map_or(SPIN_MAX_IN_FLIGHT, u64::from);
    if !spec.engine.caps().ring_settings {
        return None;
    }
    let ring = spec.ring_options();
    let spin = |why: String| EngineTuning {
        completion_wait: CompletionWait::Spin,
        spin_limit_us: Some(SPIN_LIMIT.as_micros() as u64),
        why,
        choices: Vec::new(),
    };
    let sleep = |why: String| EngineTuning {
        completion_wait: CompletionWait::Sleep,
        spin_limit_us: None,
        why,
        choices: Vec::new(),
    };
    let measure = |why: String| EngineTuning {
        completion_wait: CompletionWait::Auto,
        spin_limit_us: Some(SPIN_LIMIT.as_micros() as u64),
        why,
        choices: Vec::new(),
    };
    Some(match spec.completion_wait {
        _ if ring.hipri => sleep("--hipri: the kernel polls the device itself".into()),
        CompletionWait::Spin => spin("asked for (--completion-wait spin)".into()),
        CompletionWait::Sleep => sleep("asked for (--completion-wait sleep)".into()),
        CompletionWait::Auto if workers > cpus => sleep(format!(
            "{} on {cpus} CPUs: polling would take CPU time other workers need",
            crate::util::units::counted(workers as u64, "worker")
        )),
        CompletionWait::Auto if in_flight > queued => sleep(format!(
            "{in_flight} I/Os in flight, more than the device queues ({queued}{}): the kernel's submission threads need the CPU",
            if queue.is_some() {
                ", its nr_requests"
            } else {
                ", as devices usually do"
            }
        )),
        CompletionWait::Auto => measure(format!(
            "{} on {cpus} CPUs, {in_flight} I/Os in flight: each worker measures polling against sleeping and keeps what completes more{}",
            crate::util::units::counted(workers as u64, "worker"),
            if spec.iodepth >= super::wait_probe::DEEP {
                " (at this depth, polling only where it adds more completions than CPU per completion)"
            } else {
                ""
            }
        )),
    })
}

/// The number of CPUs this process may run on.
pub fn usable_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regime(workers: usize, in_flight: u64, cpus: usize) -> Regime {
        Regime {
            workers,
            in_flight,
            cpus,
            queue: None,
        }
    }

    fn spec(wait: CompletionWait) -> WorkloadSpec {
        let mut spec = WorkloadSpec::defaults(vec!["/tmp/x".into()]);
        spec.completion_wait = wait;
        spec
    }

    #[test]
    fn auto_measures_only_while_each_worker_has_a_cpu() {
        let one = choose(&spec(CompletionWait::Auto), regime(2, 64, 2)).unwrap();
        assert_eq!(one.completion_wait, CompletionWait::Auto);
        assert_eq!(WaitPolicy::of(Some(&one)), WaitPolicy::Measure(SPIN_LIMIT));
        let three = choose(&spec(CompletionWait::Auto), regime(3, 3, 2)).unwrap();
        assert_eq!(three.completion_wait, CompletionWait::Sleep);
        assert_eq!(three.spin_limit(), None);
        assert!(three.why.contains("3 workers on 2 CPUs"), "{}", three.why);
        let deep = choose(&spec(CompletionWait::Auto), regime(1, 256, 2)).unwrap();
        assert_eq!(deep.completion_wait, CompletionWait::Sleep);
        assert!(deep.why.contains("256 I/Os in flight"), "{}", deep.why);
        let small_queue = Regime {
            queue: Some(32),
            ..regime(1, 64, 2)
        };
        let queued = choose(&spec(CompletionWait::Auto), small_queue).unwrap();
        assert_eq!(queued.completion_wait, CompletionWait::Sleep);
        assert!(
            queued.why.contains("(32, its nr_requests)"),
            "{}",
            queued.why
        );
    }

    #[test]
    fn what_is_asked_for_wins_except_under_hipri() {
        let asked = choose(&spec(CompletionWait::Spin), regime(8, 8, 2)).unwrap();
        assert_eq!(asked.completion_wait, CompletionWait::Spin);
        let asked = choose(&spec(CompletionWait::Sleep), regime(1, 1, 8)).unwrap();
        assert_eq!(asked.completion_wait, CompletionWait::Sleep);
        let mut polled = spec(CompletionWait::Spin);
        polled.hipri = true;
        let hipri = choose(&polled, regime(1, 1, 8)).unwrap();
        assert_eq!(hipri.completion_wait, CompletionWait::Sleep);
        let mut sync = spec(CompletionWait::Auto);
        sync.engine = crate::spec::EngineKind::Sync;
        assert_eq!(choose(&sync, regime(1, 1, 8)), None);
    }
}
