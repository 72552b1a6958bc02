//! What is measured during a run: latency histograms, per-second intervals,
//! CPU time, and facts about the host and the targets.

pub mod cpu;
pub mod errors;
pub mod facts;
pub mod histogram;
pub mod intervals;
pub mod steady;
