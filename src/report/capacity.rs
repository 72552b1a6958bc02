//! Capacity searches as people read them: the plan, one row per step
//! (offered and achieved rate, latency from the due time, whether the
//! objective held), then the answer and the knee; the same cells feed
//! Markdown, CSV and HTML.

use crate::result::capacity::{CapacityResult, CapacityStep, SearchEnd};
use crate::spec::WorkloadSpec;
use crate::spec::capacity::{CapacitySpec, percentile_name};
use crate::util::units::{format_duration, latency, mib_per_s, thousands};

/// Columns before this one are names; from it on, figures.
pub const FIRST_FIGURE: usize = 2;

fn rate(iops: f64) -> String {
    thousands(iops.round() as u64)
}

/// "randread 4k QD16 on /dev/nvme0n1: p99 ≤ 2.00 ms (latency from when each
/// I/O was due)".
pub fn caption(c: &CapacityResult) -> String {
    format!(
        "capacity of {}: {} (latency from when each I/O was due)",
        workload_name(&c.spec),
        c.search.slo
    )
}

fn workload_name(spec: &WorkloadSpec) -> String {
    if spec.streams.is_empty() {
        let targets: Vec<&str> = (0..spec.targets.len())
            .map(|t| match spec.target_label(t) {
                "." => "the current directory",
                label => label,
            })
            .collect();
        format!("{} on {}", spec.label(), targets.join(", "))
    } else {
        let rated: Vec<&str> = spec
            .streams
            .iter()
            .filter(|s| s.target_rate().is_some())
            .map(|s| s.name.as_str())
            .collect();
        format!(
            "{} (streams {} scaled together)",
            spec.name,
            rated.join(", ")
        )
    }
}

/// What the search will do and how long it may take, before it starts.
pub fn plan(base: &WorkloadSpec, search: &CapacitySpec, step_s: f64) -> String {
    format!(
        "capacity: {}; steps of {} from {}/s, x{} until a step misses or the target saturates, then up to {} halvings to {}%; at most {} (--max-time)",
        search.slo,
        step_length(base),
        rate(search.start_iops),
        search.growth,
        search.bisection_steps(),
        search.precision * 100.0,
        format_duration(search.max_time_s.max(step_s))
    )
}

fn step_length(base: &WorkloadSpec) -> String {
    let first = &base.runs()[0];
    let (ramp, runtime) = (first.ramp_s, first.runtime_s.unwrap_or(0.0));
    if ramp > 0.0 {
        format!(
            "{} warm-up + {}",
            format_duration(ramp),
            format_duration(runtime)
        )
    } else {
        format_duration(runtime)
    }
}

pub fn header(search: &CapacitySpec) -> Vec<String> {
    let mut h: Vec<String> = ["step", "phase", "offered/s", "achieved/s", "MiB/s", "p50"]
        .into_iter()
        .map(String::from)
        .collect();
    for t in &search.slo.0 {
        h.push(format!(
            "{} (≤ {})",
            percentile_name(t.percentile),
            latency(t.limit_ns as f64)
        ));
    }
    h.extend(["max", "unanswered", "objective"].map(String::from));
    h
}

/// "met", "missed", "saturated" or "interrupted".
pub fn outcome(s: &CapacityStep) -> &'static str {
    if s.interrupted {
        "interrupted"
    } else if s.saturated {
        "saturated"
    } else if s.met {
        "met"
    } else {
        "missed"
    }
}

/// "climb", or "climb, again" for the repeat of a step that missed.
pub fn phase(s: &CapacityStep) -> String {
    if s.repeat {
        format!("{}, again", s.phase.name())
    } else {
        s.phase.name().to_string()
    }
}

pub fn row(index: usize, s: &CapacityStep) -> Vec<String> {
    if s.interrupted {
        // Cut short, maybe in its warm-up: its figures measure nothing.
        let mut r = vec![(index + 1).to_string(), phase(s), rate(s.offered_iops)];
        r.extend(std::iter::repeat_n("-".to_string(), 6 + s.slo_ns.len()));
        r.push(outcome(s).to_string());
        return r;
    }
    let mut r = vec![
        (index + 1).to_string(),
        phase(s),
        rate(s.offered_iops),
        rate(s.achieved_iops),
        mib_per_s(s.bw_bytes),
        latency(s.lat_ns.p50 as f64),
    ];
    r.extend(s.slo_ns.iter().map(|v| latency(*v as f64)));
    r.push(latency(s.lat_ns.max as f64));
    r.push(thousands(s.unanswered));
    r.push(outcome(s).to_string());
    r
}

/// Header and one row per step, in the order they ran.
pub fn cells(c: &CapacityResult) -> (Vec<String>, Vec<Vec<String>>) {
    (
        header(&c.search),
        c.steps.iter().enumerate().map(|(i, s)| row(i, s)).collect(),
    )
}

/// The answer, the knee and why the search ended, one line each.
pub fn conclusion(c: &CapacityResult) -> Vec<String> {
    let mut out = Vec::new();
    match (c.answer_iops, c.missed_iops) {
        (Some(a), missed) => {
            let bw = c
                .answer_bw_bytes
                .map(|b| format!(" ({})", crate::util::units::bandwidth(b)))
                .unwrap_or_default();
            let above = match missed {
                Some(m) => format!("; {}/s did not", rate(m)),
                None => String::new(),
            };
            out.push(format!(
                "answer: {}/s{bw} met {}{above}",
                rate(a),
                c.search.slo
            ));
            if let Some(at_1x) = c.trace_iops {
                out.push(format!(
                    "the trace ({}/s as recorded) fits {:.2} times over: played that much faster, it still met the objective",
                    rate(at_1x),
                    a / at_1x
                ));
            }
        }
        (None, _) => out.push("answer: none (no step finished)".into()),
    }
    match c.knee_iops {
        Some(k) => out.push(format!("knee: latency climbs steeply above {}/s", rate(k))),
        None => out.push("knee: none found (too few steps, or latency never doubled)".into()),
    }
    if c.end != SearchEnd::Converged {
        out.push(c.end.describe().to_string());
    }
    if let Some(check) = &c.self_check {
        let highest = c.steps.iter().map(|s| s.offered_iops).fold(0.0, f64::max);
        out.push(match check.note(highest) {
            Some(note) => format!("self-check: the highest step {note}"),
            None => format!(
                "self-check: this host's workers issued {}/s with no device behind them, far above every step",
                rate(check.iops)
            ),
        });
    }
    for (i, step) in c.steps.iter().enumerate() {
        if let Some(limit) = step.limited_by.as_ref().filter(|_| step.missed_by_host) {
            out.push(format!(
                "step {} at {}/s missed because of the {limit}",
                i + 1,
                rate(step.offered_iops)
            ));
        }
    }
    out.push(format!(
        "{} steps in {}",
        c.steps.len(),
        format_duration(c.runtime_s)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::LatencySummary;
    use crate::result::capacity::Phase;

    fn step(offered: f64, met: bool, saturated: bool) -> CapacityStep {
        CapacityStep {
            phase: Phase::Climb,
            repeat: false,
            offered_iops: offered,
            achieved_iops: offered,
            bw_bytes: offered * 4096.0,
            lat_ns: LatencySummary {
                p50: 1_000_000,
                max: 9_000_000,
                ..Default::default()
            },
            histogram: String::new(),
            completion_lat_ns: LatencySummary::default(),
            unanswered: 3,
            slo_ns: vec![2_500_000],
            met,
            saturated,
            interrupted: false,
            warnings: Vec::new(),
            limited_by: None,
            missed_by_host: false,
        }
    }

    #[test]
    fn each_step_is_a_row_with_its_objective_terms_and_outcome() {
        let search = CapacitySpec {
            slo: "p99:2ms".parse().unwrap(),
            start_iops: 1000.0,
            growth: 2.0,
            precision: 0.05,
            max_time_s: 60.0,
            self_check: false,
        };
        assert_eq!(
            header(&search),
            vec![
                "step",
                "phase",
                "offered/s",
                "achieved/s",
                "MiB/s",
                "p50",
                "p99 (≤ 2.00 ms)",
                "max",
                "unanswered",
                "objective"
            ]
        );
        assert_eq!(
            row(1, &step(2000.0, false, false)),
            vec![
                "2", "climb", "2,000", "2,000", "7.8", "1.00 ms", "2.50 ms", "9.00 ms", "3",
                "missed"
            ]
        );
        assert_eq!(outcome(&step(2000.0, false, true)), "saturated");
        assert_eq!(outcome(&step(2000.0, true, false)), "met");
    }
}
