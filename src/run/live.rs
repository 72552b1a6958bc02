//! The live line on a terminal while a run goes.

use crate::engine::Direction;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::{IntervalReport, IntervalSeries};
use crate::spec::WorkloadSpec;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Instant;

/// The line on stderr that shows progress while a workload runs; only on a
/// terminal, so logs and pipes stay clean.
pub(super) struct LiveLine {
    pub(super) bar: Option<ProgressBar>,
    pub(super) slow: LatencyHistogram,
    pub(super) label: String,
    pub(super) planned_s: Option<f64>,
}

impl LiveLine {
    pub(super) fn new(live: bool, spec: &WorkloadSpec) -> Self {
        let bar = live.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(ProgressStyle::with_template("{msg}").expect("valid template"));
            bar
        });
        let live_line = LiveLine {
            bar,
            slow: LatencyHistogram::new(),
            label: spec.label(),
            planned_s: spec.runtime_s.map(|r| r + spec.ramp_s),
        };
        if let Some(bar) = &live_line.bar {
            bar.set_message(format!("{}: starting", live_line.label));
        }
        live_line
    }

    /// Rate-limited runs also show the share of slow I/Os so far (from when
    /// each I/O was due), the figure certification judges.
    pub(super) fn update(
        &mut self,
        start: Instant,
        series: &IntervalSeries,
        report: &IntervalReport,
    ) {
        let Some(bar) = &self.bar else { return };
        for d in &report.directions {
            self.slow.add(&d.scheduled);
        }
        let elapsed = start.elapsed().as_secs_f64();
        let mut msg = match self.planned_s {
            Some(p) => format!("{}: {:>4.0}s / {:.0}s", self.label, elapsed, p),
            None => format!("{}: {:>4.0}s", self.label, elapsed),
        };
        for (dir, interval) in Direction::ALL.iter().zip(series.latest()) {
            let name = dir.name();
            if let Some(i) = interval.filter(|i| i.ios > 0) {
                msg.push_str(&format!(
                    "  {name} {} IOPS {}/s",
                    crate::util::units::thousands(i.iops.round() as u64),
                    crate::util::units::format_bytes(i.bw_bytes as u64)
                ));
            }
        }
        if self.slow.count() > 0 {
            msg.push_str("  slow:");
            for ms in [1u64, 8, 64] {
                let share = self.slow.share_above(ms * 1_000_000) * 100.0;
                msg.push_str(&format!(" >{ms}ms {share:.2}%"));
            }
        }
        bar.set_message(msg);
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
