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
}

impl Limiter {
    /// Whether the figures are the target's: a miss under this verdict is
    /// the target's miss, not the host's or fathom's.
    pub fn is_the_targets(self) -> bool {
        matches!(
            self,
            Limiter::Device | Limiter::PageCache | Limiter::RateAsked
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Limiter::Device => "device",
            Limiter::Host => "host CPU",
            Limiter::Fathom => "fathom",
            Limiter::PageCache => "page cache",
            Limiter::RateAsked => "rate asked",
        }
    }
}

/// The verdict and the figures that decided it, in one line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitedBy {
    pub by: Limiter,
    pub evidence: String,
}

impl std::fmt::Display for LimitedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.by.name(), self.evidence)
    }
}
