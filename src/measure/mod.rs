//! What is measured during a run: latency histograms, per-second intervals,
//! CPU time, and facts about the host and the targets.

pub mod cpu;
pub mod direction;
pub mod disk;
pub mod drift;
pub mod drive;
pub mod errors;
pub mod facts;
pub mod histogram;
pub mod intervals;
pub mod issue;
pub mod live;
pub mod live_merge;
pub mod op_seconds;
pub mod queue;
pub mod reduction;
pub mod snia_window;
pub mod steady;

/// `count` per second over `seconds`; 0 when no time was measured.
pub fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_time_measured_is_no_rate() {
        assert_eq!(super::per_second(5, 0.0), 0.0);
        assert_eq!(super::per_second(5, 2.0), 2.5);
    }
}
