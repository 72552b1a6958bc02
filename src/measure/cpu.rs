//! CPU time of the whole process (every worker thread), with its context
//! switches and page faults, from getrusage.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTime {
    pub user_s: f64,
    pub sys_s: f64,
    /// Voluntary and involuntary context switches (fio's `ctx`).
    #[serde(default)]
    pub context_switches: u64,
    /// Page faults that read from a disk (fio's `majf`) and that did not
    /// (`minf`).
    #[serde(default)]
    pub major_faults: u64,
    #[serde(default)]
    pub minor_faults: u64,
    /// The whole host's CPU time (every CPU, every state) and, of it, the
    /// time a hypervisor gave to other guests while this one wanted to run
    /// (`steal` in /proc/stat), in seconds; 0 where unknown.
    #[serde(default)]
    pub host_s: f64,
    #[serde(default)]
    pub host_steal_s: f64,
    /// Of `host_s`, the time every CPU spent in software interrupts (where
    /// network and block completions run), in seconds.
    #[serde(default)]
    pub host_softirq_s: f64,
    /// Of `context_switches`, those the scheduler forced (a thread's time
    /// slice ran out with another waiting): contention for the CPUs.
    #[serde(default)]
    pub involuntary_switches: u64,
}

/// The host's CPU time in all, stolen and in software interrupts, in
/// seconds, from /proc/stat's first line (`cpu user nice system idle iowait
/// irq softirq steal ...`).
fn host_cpu() -> (f64, f64, f64) {
    let Some(text) = crate::gate::read::host_text("/proc/stat") else {
        return (0.0, 0.0, 0.0);
    };
    let Some(line) = text.lines().next().filter(|l| l.starts_with("cpu ")) else {
        return (0.0, 0.0, 0.0);
    };
    // SAFETY: sysconf takes no pointers.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let ticks: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|t| t.parse().ok())
        .collect();
    let softirq = ticks.get(6).copied().unwrap_or(0.0);
    let steal = ticks.get(7).copied().unwrap_or(0.0);
    (ticks.iter().sum::<f64>() / hz, steal / hz, softirq / hz)
}

/// How long the calling thread has waited, ready to run, for a CPU (the
/// second field of `/proc/thread-self/schedstat`: the scheduler's
/// `run_delay`), in ns; None where the kernel keeps no such count.
pub fn thread_runnable_wait_ns() -> Option<u64> {
    let text = crate::gate::read::host_text("/proc/thread-self/schedstat")?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// This thread's CPU time, in ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes into the local timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Two counts added, where either is known.
pub fn add_known(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

impl CpuTime {
    pub fn now() -> CpuTime {
        // SAFETY: getrusage only writes into the struct we pass.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        let (host_s, host_steal_s, host_softirq_s) = host_cpu();
        CpuTime {
            host_s,
            host_steal_s,
            host_softirq_s,
            involuntary_switches: usage.ru_nivcsw.max(0) as u64,
            user_s: secs(usage.ru_utime),
            sys_s: secs(usage.ru_stime),
            context_switches: (usage.ru_nvcsw + usage.ru_nivcsw).max(0) as u64,
            major_faults: usage.ru_majflt.max(0) as u64,
            minor_faults: usage.ru_minflt.max(0) as u64,
        }
    }

    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
            context_switches: self
                .context_switches
                .saturating_sub(earlier.context_switches),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            host_s: (self.host_s - earlier.host_s).max(0.0),
            host_steal_s: (self.host_steal_s - earlier.host_steal_s).max(0.0),
            host_softirq_s: (self.host_softirq_s - earlier.host_softirq_s).max(0.0),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
        }
    }

    pub fn total_s(self) -> f64 {
        self.user_s + self.sys_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_the_time_used_between_two_readings() {
        let earlier = CpuTime {
            user_s: 1.0,
            sys_s: 0.25,
            context_switches: 10,
            ..Default::default()
        };
        let later = CpuTime {
            user_s: 3.5,
            sys_s: 1.25,
            context_switches: 15,
            ..Default::default()
        };
        let used = later.since(earlier);
        assert_eq!(
            used,
            CpuTime {
                user_s: 2.5,
                sys_s: 1.0,
                context_switches: 5,
                ..Default::default()
            }
        );
        assert_eq!(used.total_s(), 3.5);
        assert_eq!(earlier.since(later), CpuTime::default());
    }

    #[test]
    fn cpu_time_grows_with_work() {
        let wall = std::time::Instant::now();
        let start = CpuTime::now();
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let used = CpuTime::now().since(start);
        assert!(used.user_s > 0.0);
        // The process's threads cannot have used more CPU than every core
        // for the whole time (other tests run beside this one).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let limit = wall.elapsed().as_secs_f64() * cores + 0.05;
        assert!(used.total_s() <= limit, "{used:?} in at most {limit} s");
    }
}
