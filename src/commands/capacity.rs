//! The capacity search (`fathom capacity`): how much load a workload can be
//! offered while its latency meets an objective.
//!
//! The search is open-loop: each step offers a fixed rate on the rate
//! engine's schedule, and latency counts from when each I/O was due, so an
//! I/O that waits for a slot behind a slow device is charged for the wait
//! (no coordinated omission). Steps climb geometrically from `--start` until
//! one misses the objective or the target cannot deliver the rate; then
//! bisection between the highest rate that met and the lowest that missed
//! narrows the answer to the precision asked.

use crate::measure::histogram::LatencyHistogram;
use crate::result::capacity::{CapacityResult, CapacityStep, Phase, SearchEnd};
use crate::result::limit::LimitedBy;
use crate::result::object::ObjectResult;
use crate::result::streams::StreamsResult;
use crate::result::{RunResult, WorkloadResult};
use crate::run::Session;
use crate::run::search::Outcome;
use crate::spec::WorkloadSpec;
use crate::spec::capacity::CapacitySpec;
use crate::util::error::UsageError;
use crate::util::stop::{Interrupted, StopFlag};
use crate::util::units::thousands;
use std::time::Instant;

/// A step whose achieved rate falls more than this share below its offered
/// rate did not get its load delivered: the target is saturated.
pub const SATURATION_SHORTFALL: f64 = 0.10;

/// Checks a workload and search before anything runs: one workload (a plain
/// one or a streams one), whose rates are the search's to set.
pub fn check(base: &WorkloadSpec, search: &CapacitySpec) -> Result<(), UsageError> {
    search.validate().map_err(UsageError)?;
    if base.replay.is_some() {
        if trace_iops(base).is_none() {
            return Err(UsageError(
                "the trace's I/Os are all at one instant: there is no speed to search over".into(),
            ));
        }
    } else if base.streams.is_empty() {
        if base.target_rate().is_some() {
            return Err(UsageError(
                "--rate-iops/--rate-bw: capacity sets each step's rate (give the first with --start)"
                    .into(),
            ));
        }
    } else if base.streams.iter().all(|s| s.target_rate().is_none()) {
        return Err(UsageError(
            "capacity scales the rated streams of a streams workload, and none has a rate (give rate-iops to those it should scale)"
                .into(),
        ));
    }
    if base.runtime_s.is_none() && base.replay.is_none() {
        return Err(UsageError(
            "--runtime: each step of a capacity search is time-bound; give its length".into(),
        ));
    }
    let step = step_seconds(base);
    if step > search.max_time_s {
        return Err(UsageError(format!(
            "--max-time {} is shorter than one step ({} of --ramp and --runtime)",
            crate::util::units::format_duration(search.max_time_s),
            crate::util::units::format_duration(step)
        )));
    }
    Ok(())
}

/// The workload at `total_iops` offered over every target: a plain
/// workload's rate is split evenly over its targets; a streams workload's
/// rated streams keep their proportions (unrated streams run as they are,
/// as background load).
pub fn at_rate(base: &WorkloadSpec, total_iops: f64) -> WorkloadSpec {
    let mut spec = base.clone();
    if let (Some(replay), Some(at_1x)) = (&mut spec.replay, trace_iops(base)) {
        // A replay's load is its speed: the trace's own rate times it.
        replay.speed = Some(total_iops / at_1x);
    } else if spec.streams.is_empty() {
        spec.rate_iops = Some(total_iops / spec.targets.len() as f64);
        spec.rate_bw = None;
    } else {
        let factor = total_iops / rated_total(base);
        for s in &mut spec.streams {
            if let Some(r) = s.target_rate() {
                s.rate_iops = Some(r * factor);
                s.rate_bw = None;
            }
        }
    }
    spec
}

/// A replay's I/Os per second at the speed recorded (its data I/Os over
/// the time from its first to its last, one pass); None for a workload
/// that is not a replay, or a trace without a span.
pub fn trace_iops(base: &WorkloadSpec) -> Option<f64> {
    let trace = base.replay.as_ref()?.loaded.as_ref()?;
    let ios = trace.all().data_ios();
    let span_s = trace.span_ns() as f64 / 1e9;
    (span_s > 0.0 && ios > 1).then(|| ios as f64 / span_s)
}

/// A replay's mean bytes per data I/O.
fn trace_io_bytes(base: &WorkloadSpec) -> Option<f64> {
    let all = base.replay.as_ref()?.loaded.as_ref()?.all();
    (all.data_ios() > 0).then(|| all.data_bytes as f64 / all.data_ios() as f64)
}

/// I/Os per second the rated streams ask for over all their targets.
fn rated_total(base: &WorkloadSpec) -> f64 {
    base.streams
        .iter()
        .filter_map(|s| Some(s.target_rate()? * s.targets.len() as f64))
        .sum()
}

/// Bytes per second of `total_iops` offered (block sizes may differ
/// between streams).
fn bandwidth_at(base: &WorkloadSpec, total_iops: f64) -> f64 {
    if let Some(bytes) = trace_io_bytes(base) {
        return total_iops * bytes;
    }
    let spec = at_rate(base, total_iops);
    if spec.streams.is_empty() {
        total_iops * spec.bs as f64
    } else {
        spec.streams
            .iter()
            .filter_map(|s| Some(s.target_rate()? * s.targets.len() as f64 * s.bs as f64))
            .sum()
    }
}

/// Whether the queue can be asked for `total_iops` (the rate engine's
/// bound, as a run checks it).
fn queue_carries(base: &WorkloadSpec, total_iops: f64) -> bool {
    at_rate(base, total_iops)
        .runs()
        .iter()
        .all(WorkloadSpec::queue_carries_rate)
}

/// Seconds one step measures and warms up.
pub fn step_seconds(base: &WorkloadSpec) -> f64 {
    if let Some(trace) = base.replay.as_ref().and_then(|r| r.loaded.as_ref()) {
        // At the speed recorded; faster steps are shorter.
        let span_s = trace.span_ns() as f64 / 1e9;
        return base.runtime_s.map_or(span_s, |r| r.min(span_s)) + base.ramp_s;
    }
    base.runs()
        .iter()
        .map(|s| s.runtime_s.unwrap_or(0.0) + s.ramp_s)
        .fold(0.0, f64::max)
}

/// Runs the search on the session's targets. `on_step` is handed the result
/// so far after every step. A step that misses is run once more at the
/// same rate, and the rate counts as missed only if that misses too. A
/// first rate that already misses the objective is a usage error: nothing
/// below it was searched.
pub fn search(
    session: &mut Session,
    base: &WorkloadSpec,
    search: &CapacitySpec,
    stop: &StopFlag,
    on_step: &mut dyn FnMut(&CapacityResult) -> anyhow::Result<()>,
) -> anyhow::Result<CapacityResult> {
    search_with(session, base, search, stop, on_step, &mut |s, spec| {
        s.run_one(spec)
    })
}

/// A step of a search: the workload at a rate, run.
pub type StepRunner<'a> = dyn FnMut(&mut Session, &WorkloadSpec) -> anyhow::Result<RunResult> + 'a;

/// As [`search`], each step run by `run_step` (an object store's steps
/// are object-store runs, not the session's workloads).
pub fn search_with(
    session: &mut Session,
    base: &WorkloadSpec,
    search: &CapacitySpec,
    stop: &StopFlag,
    on_step: &mut dyn FnMut(&CapacityResult) -> anyhow::Result<()>,
    run_step: &mut StepRunner,
) -> anyhow::Result<CapacityResult> {
    check(base, search)?;
    let started = Instant::now();
    let mut result = CapacityResult {
        spec: base.clone(),
        search: search.clone(),
        steps: Vec::new(),
        answer_iops: None,
        answer_bw_bytes: None,
        missed_iops: None,
        knee_iops: None,
        trace_iops: trace_iops(base),
        end: SearchEnd::Converged,
        self_check: None,
        runtime_s: 0.0,
        interrupted: false,
    };
    if search.self_check && base.streams.is_empty() {
        let burst = crate::run::self_check::burst_of(&at_rate(base, search.start_iops));
        match session.run_one(&burst) {
            Ok(run) => {
                result.self_check = run.get::<WorkloadResult>().map(crate::run::self_check::of);
            }
            Err(e) if e.is::<Interrupted>() => {
                result.end = SearchEnd::Interrupted;
                result.interrupted = true;
                return Ok(result);
            }
            Err(e) => return Err(e),
        }
    }
    // The longest step so far (layout included) stands for the next one.
    let mut step_cost = step_seconds(base);
    let ladder = crate::run::search::rates(search.growth, search.precision);
    let mut end = SearchEnd::Converged;
    ladder.search(search.start_iops, |rate, phase| {
        // A step that misses is run once more at the same rate.
        for repeat in [false, true] {
            if stop.is_set() {
                end = SearchEnd::Interrupted;
                return Ok(Outcome::End);
            }
            if started.elapsed().as_secs_f64() + step_cost > search.max_time_s {
                end = SearchEnd::MaxTime;
                return Ok(Outcome::End);
            }
            if !queue_carries(base, rate) {
                end = SearchEnd::QueueLimit;
                return Ok(Outcome::End);
            }
            let step_started = Instant::now();
            let number = result.steps.len() + 1;
            let shown = crate::util::units::thousands(rate.round() as u64);
            session.phase(format!("capacity step {number} at {shown} IOPS"), None);
            let run = match run_step(session, &at_rate(base, rate)) {
                Ok(r) => r,
                Err(e) if e.is::<Interrupted>() => {
                    end = SearchEnd::Interrupted;
                    return Ok(Outcome::End);
                }
                Err(e) => return Err(e),
            };
            step_cost = step_cost.max(step_started.elapsed().as_secs_f64());
            let mut step = judge(base, search, phase, rate, &run)?;
            step.repeat = repeat;
            let (met, interrupted, by_host) = (step.met, step.interrupted, step.missed_by_host);
            let said = if met { "met" } else { "missed" };
            session.verdict(format!("capacity step {number} at {shown} IOPS: {said}"));
            result.steps.push(step);
            if interrupted {
                end = SearchEnd::Interrupted;
                return Ok(Outcome::End);
            }
            if !met && !repeat {
                on_step(&result)?;
                continue;
            }
            if by_host {
                // Twice the host could not issue this rate: bisecting below
                // it would measure the host, and call it the target's
                // capacity.
                end = SearchEnd::HostLimited;
                return Ok(Outcome::End);
            }
            if !met && result.answer_iops.is_none() && result.missed_iops.is_none() {
                return Err(first_step_missed(search, result.steps.last().expect("a step")).into());
            }
            if met {
                result.answer_iops = Some(rate);
            } else {
                result.missed_iops = Some(rate);
            }
            on_step(&result)?;
            return Ok(if met { Outcome::Met } else { Outcome::Missed });
        }
        unreachable!("the second run of a step returns")
    })?;
    result.end = end;
    result.interrupted = result.end == SearchEnd::Interrupted;
    result.answer_bw_bytes = result.answer_iops.map(|r| bandwidth_at(base, r));
    result.knee_iops = knee(&curve(&result));
    result.runtime_s = started.elapsed().as_secs_f64();
    Ok(result)
}

/// Bisection steps left once the answer is bracketed between the rate
/// that met and the one that missed (each step that misses runs twice).
pub fn steps_left(search: &CapacitySpec, met: f64, missed: f64) -> u32 {
    CapacitySpec {
        growth: missed / met,
        ..search.clone()
    }
    .bisection_steps()
}

fn first_step_missed(search: &CapacitySpec, step: &CapacityStep) -> UsageError {
    let offered = thousands(step.offered_iops.round() as u64);
    let why = if step.saturated {
        format!(
            "the target delivered {} of {offered} I/Os per second",
            thousands(step.achieved_iops.round() as u64)
        )
    } else {
        let (term, value) = search
            .slo
            .0
            .iter()
            .zip(&step.slo_ns)
            .find(|(t, v)| **v > t.limit_ns)
            .expect("a step that met every term and was delivered is met");
        format!(
            "{} was {}, over {}",
            crate::spec::capacity::percentile_name(term.percentile),
            crate::util::units::latency(*value as f64),
            term.describe()
        )
    };
    UsageError(format!(
        "--start: the first step, {offered} I/Os per second, already misses the objective ({why}): give a lower --start"
    ))
}

/// The runs of a step whose latency is judged: the workload, or a streams
/// workload's rated streams.
fn judged<'a>(base: &WorkloadSpec, run: &'a RunResult) -> Vec<&'a WorkloadResult> {
    if let Some(w) = run.get::<WorkloadResult>() {
        return vec![w];
    }
    run.get::<StreamsResult>().map_or_else(Vec::new, |s| {
        s.streams
            .iter()
            .zip(&base.streams)
            .filter(|(_, spec)| spec.target_rate().is_some())
            .map(|(w, _)| w)
            .collect()
    })
}

/// What a step measured, whatever ran it: latency from due and from
/// submission, rates, and what limited it.
#[derive(Default)]
struct Measured {
    due: LatencyHistogram,
    completion: LatencyHistogram,
    achieved_iops: f64,
    bw_bytes: f64,
    unanswered: u64,
    warnings: Vec<crate::result::warning::Warning>,
    interrupted: bool,
    limited_by: Option<LimitedBy>,
    /// The share of their time the workers waited for a CPU.
    waited: f64,
}

/// An object-store run's requests as a step: every operation's.
fn measured_objects(o: &ObjectResult) -> anyhow::Result<Measured> {
    let mut m = Measured {
        interrupted: o.interrupted,
        limited_by: o.limited_by.clone(),
        ..Measured::default()
    };
    for op in &o.ops {
        m.completion
            .add(&LatencyHistogram::decode(&op.histogram).map_err(anyhow::Error::msg)?);
        if let Some(h) = &op.due_histogram {
            m.due
                .add(&LatencyHistogram::decode(h).map_err(anyhow::Error::msg)?);
        }
        m.achieved_iops += op.ops_per_s;
        m.bw_bytes += op.bytes_per_s;
    }
    let span = f64::from(o.spec.workers) * o.elapsed_s;
    m.waited = o
        .client
        .as_ref()
        .and_then(|c| c.cpu_wait_s)
        .map_or(0.0, |w| if span > 0.0 { w / span } else { 0.0 });
    Ok(m)
}

/// A workload's (or its judged streams') I/Os as a step.
fn measured_workloads(base: &WorkloadSpec, run: &RunResult) -> anyhow::Result<Measured> {
    let runs = judged(base, run);
    let mut m = Measured {
        limited_by: LimitedBy::least_the_targets(runs.iter().filter_map(|w| w.limited_by.as_ref()))
            .cloned(),
        waited: runs
            .iter()
            .filter_map(|w| w.cpu.waited_for_cpu_share)
            .fold(0.0, f64::max),
        ..Measured::default()
    };
    for w in runs {
        for (_, d) in w.total.named() {
            m.completion
                .add(&LatencyHistogram::decode(&d.histogram).map_err(anyhow::Error::msg)?);
            if let Some(h) = &d.sched_histogram {
                m.due
                    .add(&LatencyHistogram::decode(h).map_err(anyhow::Error::msg)?);
            }
            m.achieved_iops += d.iops;
            m.bw_bytes += d.bw_bytes;
            m.unanswered += d.unanswered;
        }
        m.warnings.extend(w.warnings.iter().cloned());
        m.interrupted |= w.interrupted;
    }
    Ok(m)
}

/// One step's figures and whether it met the objective.
fn judge(
    base: &WorkloadSpec,
    search: &CapacitySpec,
    phase: Phase,
    offered_iops: f64,
    run: &RunResult,
) -> anyhow::Result<CapacityStep> {
    let Measured {
        due,
        completion,
        achieved_iops,
        bw_bytes,
        unanswered,
        warnings,
        interrupted,
        limited_by,
        waited,
    } = match run.get::<ObjectResult>() {
        Some(o) => measured_objects(o)?,
        None => measured_workloads(base, run)?,
    };
    let slo_ns: Vec<u64> = search
        .slo
        .0
        .iter()
        .map(|t| due.value_at_percentile(t.percentile))
        .collect();
    let saturated = achieved_iops < offered_iops * (1.0 - SATURATION_SHORTFALL);
    let within = search
        .slo
        .0
        .iter()
        .zip(&slo_ns)
        .all(|(t, v)| *v <= t.limit_ns);
    let met = within && !saturated && due.count() > 0 && !interrupted;
    let host = limited_by.as_ref().is_some_and(|l| !l.by.is_the_targets());
    // A busy host costs at most about the time the workers waited for a
    // CPU: a shortfall far beyond that is the target's, busy host or not.
    let shortfall = 1.0 - achieved_iops / offered_iops;
    let host_explains = !saturated || shortfall <= 2.0 * waited + SATURATION_SHORTFALL;
    Ok(CapacityStep {
        missed_by_host: !met && !interrupted && host && host_explains,
        phase,
        repeat: false,
        offered_iops,
        achieved_iops,
        bw_bytes,
        lat_ns: due.summary(),
        histogram: due.encode(),
        completion_lat_ns: completion.summary(),
        unanswered,
        met,
        slo_ns,
        saturated,
        interrupted,
        warnings,
        limited_by,
    })
}

/// (offered rate, the first term's percentile) of every finished step, by
/// rate: the latency-against-load curve.
fn curve(result: &CapacityResult) -> Vec<(f64, f64)> {
    result
        .by_rate()
        .iter()
        .filter_map(|s| Some((s.offered_iops, *s.slo_ns.first()? as f64)))
        .collect()
}

/// The knee of a latency-against-load curve (sorted by load): the point
/// farthest below the chord from the first point to the last, both axes
/// scaled to 0..1 (the Kneedle method, Satopää et al. 2011, for a rising
/// convex curve). None with fewer than three points, or when latency at
/// the end is not at least twice that at the knee: no steep climb.
pub fn knee(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 3 {
        return None;
    }
    let (x0, xn) = (points[0].0, points[points.len() - 1].0);
    let (y_lo, y_hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.1), hi.max(p.1))
        });
    if xn <= x0 || y_hi <= y_lo {
        return None;
    }
    let (i, gap) = points
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| (i, (x - x0) / (xn - x0) - (y - y_lo) / (y_hi - y_lo)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let knee = points[i];
    (gap > 0.0 && i + 1 < points.len() && y_hi >= 2.0 * knee.1).then_some(knee.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::search::Bracket;
    use crate::spec::EngineKind;
    use crate::spec::capacity::Slo;

    fn search_spec() -> CapacitySpec {
        CapacitySpec {
            slo: "p99:1ms".parse::<Slo>().unwrap(),
            start_iops: 1000.0,
            growth: 2.0,
            precision: 0.05,
            max_time_s: 600.0,
            self_check: false,
        }
    }

    fn next_rate(s: &CapacitySpec, met: Option<f64>, missed: Option<f64>) -> Option<(f64, Phase)> {
        crate::run::search::rates(s.growth, s.precision).next(Bracket { met, missed })
    }

    #[test]
    fn the_search_climbs_until_a_miss_then_halves_the_bracket() {
        let s = search_spec();
        assert_eq!(
            next_rate(&s, Some(1000.0), None),
            Some((2000.0, Phase::Climb))
        );
        assert_eq!(
            next_rate(&s, Some(2000.0), Some(4000.0)),
            Some((3000.0, Phase::Bisect))
        );
        // 5% apart: done.
        assert_eq!(next_rate(&s, Some(2000.0), Some(2100.0)), None);
        assert_eq!(
            next_rate(&s, Some(2000.0), Some(2101.0)),
            Some((2050.5, Phase::Bisect))
        );
    }

    /// A device of known capacity, as a step would find it: met below it.
    fn simulate(capacity: f64, s: &CapacitySpec) -> (f64, usize) {
        let mut steps = 0;
        let bracket = crate::run::search::rates(s.growth, s.precision)
            .search(s.start_iops, |rate, _| {
                steps += 1;
                Ok(if rate <= capacity {
                    Outcome::Met
                } else {
                    Outcome::Missed
                })
            })
            .unwrap();
        (bracket.met.unwrap(), steps)
    }

    #[test]
    fn the_answer_is_within_the_precision_below_the_capacity() {
        let s = search_spec();
        for capacity in [1000.0, 1500.0, 3999.0, 4000.0, 4001.0, 77_777.0, 1e6] {
            let (answer, steps) = simulate(capacity, &s);
            assert!(answer <= capacity, "{capacity}: {answer}");
            assert!(
                answer >= capacity / (1.0 + s.precision),
                "{capacity}: {answer}"
            );
            let climb = (capacity / s.start_iops).log2().floor() as usize + 1;
            assert!(
                steps <= climb + 1 + s.bisection_steps() as usize,
                "{capacity}: {steps} steps"
            );
        }
    }

    #[test]
    fn a_plain_workload_splits_the_rate_over_its_targets() {
        let mut base = WorkloadSpec::defaults(vec!["/a".into(), "/b".into()]);
        base.runtime_s = Some(1.0);
        let spec = at_rate(&base, 3000.0);
        assert_eq!(spec.rate_iops, Some(1500.0));
        assert_eq!(bandwidth_at(&base, 3000.0), 3000.0 * 4096.0);
    }

    #[test]
    fn a_streams_workload_scales_its_rated_streams_in_proportion() {
        let mut base = WorkloadSpec::defaults(vec!["/a".into()]);
        base.runtime_s = Some(1.0);
        let stream = |name: &str, rate: Option<f64>, bs: u64| WorkloadSpec {
            name: name.into(),
            rate_iops: rate,
            bs,
            ..base.clone()
        };
        base.streams = vec![
            stream("reads", Some(300.0), 4096),
            stream("logs", Some(100.0), 8192),
            stream("background", None, 4096),
        ];
        let spec = at_rate(&base, 800.0);
        let rates: Vec<Option<f64>> = spec.streams.iter().map(|s| s.rate_iops).collect();
        assert_eq!(rates, vec![Some(600.0), Some(200.0), None]);
        assert_eq!(bandwidth_at(&base, 800.0), 600.0 * 4096.0 + 200.0 * 8192.0);
        assert!(check(&base, &search_spec()).is_ok());
        for s in &mut base.streams {
            s.rate_iops = None;
        }
        assert!(check(&base, &search_spec()).is_err());
    }

    #[test]
    fn rates_the_queue_cannot_carry_end_the_climb() {
        let mut base = WorkloadSpec::defaults(vec!["/a".into()]);
        base.runtime_s = Some(1.0);
        base.iodepth = 2;
        assert!(queue_carries(&base, 4e6));
        assert!(!queue_carries(&base, 4.1e6));
        base.engine = EngineKind::Null;
        assert!(queue_carries(&base, 1e9));
    }

    #[test]
    fn a_given_rate_or_no_runtime_is_refused() {
        let mut base = WorkloadSpec::defaults(vec!["/a".into()]);
        assert!(
            check(&base, &search_spec())
                .unwrap_err()
                .0
                .contains("--runtime")
        );
        base.runtime_s = Some(1.0);
        base.rate_iops = Some(5.0);
        assert!(
            check(&base, &search_spec())
                .unwrap_err()
                .0
                .contains("--start")
        );
    }

    #[test]
    fn the_knee_is_the_last_point_before_latency_climbs_steeply() {
        // Flat, then a hockey stick.
        let points = [
            (1000.0, 100.0),
            (2000.0, 105.0),
            (4000.0, 110.0),
            (8000.0, 130.0),
            (16_000.0, 5000.0),
        ];
        assert_eq!(knee(&points), Some(8000.0));
        // A gradual climb bends where it turns.
        let gradual = [
            (1.0, 1.0),
            (2.0, 1.1),
            (3.0, 1.3),
            (4.0, 2.0),
            (5.0, 4.0),
            (6.0, 8.0),
        ];
        assert_eq!(knee(&gradual), Some(4.0));
        // Flat within noise: no knee.
        let flat = [(1.0, 100.0), (2.0, 120.0), (3.0, 110.0), (4.0, 150.0)];
        assert_eq!(knee(&flat), None);
        // Too few points.
        assert_eq!(knee(&points[3..]), None);
    }
}
