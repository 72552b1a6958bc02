//! The self-check before a long run (capacity, certify): a short burst of
//! the null engine at the workload's depth and jobs, on the same targets
//! (which it does not touch), measures what this host's workers can issue
//! right now.

use crate::result::limit::SelfCheck;
use crate::run::target::PreparedTarget;
use crate::spec::{DirectionRates, EngineKind, VerifyMode, WorkloadSpec};
use crate::util::stop::StopFlag;

/// How long the burst runs.
pub const BURST_S: f64 = 0.3;

/// The burst's workload: `spec`'s depth, jobs, block sizes and targets, on
/// the null engine with no latency, no rate and nothing to verify or play.
pub fn burst_of(spec: &WorkloadSpec) -> WorkloadSpec {
    let mut burst = spec.clone();
    burst.name = format!("{} (self-check)", spec.name);
    burst.engine = EngineKind::Null;
    burst.null_latency_ns = 0;
    burst.rate_iops = None;
    burst.rate_bw = None;
    burst.direction_rates = DirectionRates::default();
    burst.replay = None;
    burst.runtime_s = Some(BURST_S);
    burst.ramp_s = 0.0;
    burst.io_size = None;
    burst.verify = VerifyMode::Off;
    burst.steady_state = None;
    burst.think_time = None;
    burst.fsync = 0;
    burst.fdatasync = 0;
    burst.streams = Vec::new();
    burst
}

/// Runs the burst of `spec` on its prepared `targets`.
pub fn measure(
    spec: &WorkloadSpec,
    targets: &[PreparedTarget],
    stop: &StopFlag,
) -> anyhow::Result<SelfCheck> {
    let options = super::RunOptions {
        live: false,
        keep_intervals: false,
        start_at: None,
        barrier: None,
        record: None,
        board: None,
        after_second: None,
    };
    let r = super::run_workload(&burst_of(spec), targets, stop, options)?;
    Ok(of(&r))
}

/// The self-check a burst's result gives.
pub fn of(r: &crate::result::WorkloadResult) -> SelfCheck {
    SelfCheck {
        iops: r.total.iops(),
        waited_for_cpu_share: r.cpu.waited_for_cpu_share,
    }
}
