//! What limited a workload's figures: the device, the host, fathom itself,
//! the page cache, or the rate asked. A figure means little until the
//! reader knows which of these it measured.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// The target: the workers waited for it with the queue as full as asked.
    Device,
    /// The host's CPUs: the workers waited for one (other processes, more
    /// workers than CPUs, a hypervisor's steal), and I/Os went out late.
    Host,
    /// fathom's own work: slots sat free while the workers prepared and
    /// recorded I/Os, or the engine does no I/O at all.
    Fathom,
    /// Memory answered: buffered I/O of a region that fits in it, or a file
    /// on a memory file system.
    PageCache,
    /// The schedule: the rate asked for was delivered on time.
    RateAsked,
    /// An object store: the workers waited for its answers.
    Store,
}

impl Limiter {
    /// Whether the figures are the target's: a miss under this verdict is
    /// the target's miss, not the host's or fathom's.
    pub fn is_the_targets(self) -> bool {
        matches!(
            self,
            Limiter::Device | Limiter::PageCache | Limiter::RateAsked | Limiter::Store
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Limiter::Device => "device",
            Limiter::Host => "host CPU",
            Limiter::Fathom => "fathom",
            Limiter::PageCache => "page cache",
            Limiter::RateAsked => "rate asked",
            Limiter::Store => "store",
        }
    }
}

/// The verdict and the figures that decided it, in one line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitedBy {
    pub by: Limiter,
    pub evidence: String,
}

impl LimitedBy {
    /// Of several runs' verdicts, the first that is not the target's, else
    /// the first: what says least for the target.
    pub fn least_the_targets<'a>(
        verdicts: impl IntoIterator<Item = &'a LimitedBy>,
    ) -> Option<&'a LimitedBy> {
        let mut first = None;
        for v in verdicts {
            if !v.by.is_the_targets() {
                return Some(v);
            }
            first = first.or(Some(v));
        }
        first
    }
}

impl std::fmt::Display for LimitedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.by.name(), self.evidence)
    }
}

/// A share of their time the workers may wait for a CPU on an idle host
/// (an idle 2-CPU VM shows under 2%): above it, I/Os held back are put
/// down to the host rather than to fathom, and a change between two runs
/// may be the host's.
pub const HOST_HINT: f64 = 0.03;

/// Of the time a slot spends between one I/O and the next, the share it
/// may sit free waiting for fathom before fathom, not the device, is what
/// limited the figures.
pub const FATHOM_IDLE_SLOTS: f64 = 0.25;

/// What this host's workers could issue with no device behind them, found
/// by a short burst of the null engine at the workload's depth and jobs
/// just before a long run: a run that asks for a good share of it measures
/// the host as much as the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfCheck {
    /// I/Os a second the burst completed.
    pub iops: f64,
    /// Of the time its workers ran, the share they waited for a CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_for_cpu_share: Option<f64>,
}

impl SelfCheck {
    /// A run may ask for up to this share of what the burst issued before
    /// it is warned about.
    pub const HEADROOM: f64 = 0.5;

    /// What to say of a run that asks for `asked_iops`; None when it is
    /// well within what the host can issue.
    pub fn note(&self, asked_iops: f64) -> Option<String> {
        (asked_iops > self.iops * Self::HEADROOM).then(|| {
            format!(
                "asks for {} I/Os a second, more than half of the {} this host's workers issued just now with no device behind them (the null engine at the same depth and jobs): the host may decide the figures as much as the target",
                crate::util::units::thousands(asked_iops.round() as u64),
                crate::util::units::thousands(self.iops.round() as u64)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_asking_for_half_of_what_the_host_issues_is_noted() {
        let check = SelfCheck {
            iops: 10_000.0,
            waited_for_cpu_share: None,
        };
        assert!(check.note(5_000.0).is_none());
        let note = check.note(6_000.0).unwrap();
        assert!(note.contains("6,000") && note.contains("10,000"), "{note}");
        assert!(Limiter::Device.is_the_targets() && !Limiter::Host.is_the_targets());
    }

    #[test]
    fn of_several_verdicts_the_one_not_the_targets_stands() {
        let v = |by| LimitedBy {
            by,
            evidence: String::new(),
        };
        let all = [v(Limiter::Device), v(Limiter::Fathom), v(Limiter::Host)];
        assert_eq!(
            LimitedBy::least_the_targets(&all).unwrap().by,
            Limiter::Fathom
        );
        let targets = [v(Limiter::RateAsked), v(Limiter::Device)];
        assert_eq!(
            LimitedBy::least_the_targets(&targets).unwrap().by,
            Limiter::RateAsked
        );
        assert!(LimitedBy::least_the_targets(&[]).is_none());
    }
}
