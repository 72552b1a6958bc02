//! `fathom capacity`: flags into a workload and a search, the library's
//! search, and the document out.

use super::driver::Driver;
use super::{OutputArgs, WorkloadArgs};
use clap::Args;
use fathom::commands::capacity;
use fathom::report;
use fathom::result::RunResult;
use fathom::result::capacity::CapacityResult;
use fathom::spec::capacity::{CapacitySpec, Slo};
use fathom::util::error::UsageError;
use fathom::util::units;

const STEP_RUNTIME: &str = "Length of each step (30s, 5m) [default: 10s]";
const STEP_RAMP: &str = "Warm-up of each step, excluded from its figures [default: 2s]";

#[derive(Args, Debug)]
// capacity sets the rate of each step and stops on its own: the rate and
// steady-state knobs are not its to take, and its steps have defaults of
// their own.
#[command(
    mut_arg("runtime", |a| a.help(STEP_RUNTIME).long_help(STEP_RUNTIME)),
    mut_arg("ramp", |a| a.help(STEP_RAMP).long_help(STEP_RAMP)),
    mut_arg("iodepth", |a| a.help(STEP_IODEPTH).long_help(STEP_IODEPTH)),
    mut_arg("rate_iops", |a| a.hide(true)),
    mut_arg("rate_bw", |a| a.hide(true)),
    mut_arg("rate_read", |a| a.hide(true)),
    mut_arg("rate_write", |a| a.hide(true)),
    mut_arg("steady_state", |a| a.hide(true))
)]
pub struct CapacityArgs {
    /// The latency objective, from when each I/O was due: PERCENTILE:LATENCY,
    /// several joined by commas, all of which must hold (p99:1ms,p99.9:5ms;
    /// max:20ms for the largest).
    #[arg(long, value_name = "OBJECTIVE", value_parser = parse_slo)]
    slo: Slo,

    /// Total I/Os per second offered at the first step (over every target)
    /// [default: 1000; for a trace, its own rate as recorded].
    #[arg(long, value_name = "IOPS")]
    start: Option<f64>,

    /// Each climbing step offers this many times the last.
    #[arg(long, value_name = "FACTOR", default_value_t = CapacitySpec::DEFAULT_GROWTH)]
    growth: f64,

    /// Stop when the highest rate that met the objective and the lowest
    /// that missed are this close (5% or 0.05).
    #[arg(long, value_name = "SHARE", default_value = "5%", value_parser = parse_share)]
    precision: f64,

    /// The longest the whole search may take: no step starts that would end
    /// after it.
    #[arg(long = "max-time", value_name = "TIME", default_value = "20m", value_parser = units::parse_seconds)]
    max_time: f64,

    /// Skip the self-check: a 0.3 s burst of the null engine at the
    /// workload's depth and jobs before the first step, which measures what
    /// this host's workers can issue and warns of steps that ask for more
    /// than half of it.
    #[arg(long = "no-self-check")]
    no_self_check: bool,

    /// Check the workload and the targets and print the search's plan:
    /// nothing is written or run.
    #[arg(long = "dry-run")]
    dry_run: bool,

    #[command(flatten)]
    workload: WorkloadArgs,

    #[command(flatten)]
    output: OutputArgs,
}

fn parse_slo(text: &str) -> Result<Slo, String> {
    text.parse()
}

fn parse_share(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    value
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("'{text}' is not a share (expected e.g. 5% or 0.05)"))
}

/// Each step's length when neither the flags nor a job file give one.
const STEP_DEFAULTS: &[(&str, &str)] = &[("runtime", "10s"), ("ramp", "2s")];
/// A disk step's slots: an open-loop schedule needs a slot free for each
/// I/O when it falls due, or the step measures the wait for a slot (one
/// slot at 1,000/s on a disk of 3.7 ms tails missed p99 2 ms, where 16 gave
/// 0.23 ms): 64 slots carry 64k IOPS at 1 ms. An object store's requests
/// have no slots of this kind.
const STEP_IODEPTH_DEFAULT: u32 = 64;
const STEP_IODEPTH: &str = "I/Os of the schedule in flight at once per worker: too few and a step measures the wait for a slot, not the target [default: 64]";

pub fn capacity_command(args: &CapacityArgs) -> anyhow::Result<i32> {
    super::no_fio_form(&args.output, "a capacity search")?;
    let positional = &args.workload.targets;
    let mut specs = match positional.first() {
        Some(first) if positional.len() >= 2 && fathom::trace::looks_like_trace(first.as_ref()) => {
            vec![replay_base(args, first)?]
        }
        _ => args.workload.resolve_any_target(STEP_DEFAULTS)?,
    };
    if specs.len() != 1 {
        return Err(UsageError(format!(
            "capacity searches one workload, and these arguments give {} (a sweep, or a job file of several): give one",
            specs.len()
        ))
        .into());
    }
    let mut base = specs.remove(0);
    let on_store = fathom::commands::object::is_object_workload(&base)?;
    // Where neither the flags nor a job file set it (1 is every job's own
    // default, fio's too).
    if !on_store && !knob_given(args, "iodepth") && base.iodepth == 1 {
        base.iodepth = STEP_IODEPTH_DEFAULT;
    }
    if on_store {
        // A step is an object-store run, with no ramp to run first.
        base.ramp_s = 0.0;
    }
    let start_iops = args
        .start
        .unwrap_or_else(|| capacity::trace_iops(&base).unwrap_or(CapacitySpec::DEFAULT_START_IOPS));
    let search = CapacitySpec {
        slo: args.slo.clone(),
        start_iops,
        growth: args.growth,
        precision: args.precision,
        max_time_s: args.max_time,
        // The self-check measures the I/O path of a disk's workload.
        self_check: !args.no_self_check && !on_store,
    };
    capacity::check(&base, &search)?;
    if on_store {
        let first =
            fathom::commands::object::spec_of(&capacity::at_rate(&base, search.start_iops), false)?;
        fathom::commands::object::check(&first)?;
    } else {
        fathom::run::check_plan(std::slice::from_ref(&capacity::at_rate(
            &base,
            search.start_iops,
        )))?;
    }
    let step_s = capacity::step_seconds(&base);
    let plan = report::capacity::plan(&base, &search, step_s);
    if args.dry_run {
        println!("{plan}");
        return Ok(0);
    }
    if !on_store {
        fathom::run::claim_targets(std::slice::from_ref(&base));
    }
    let driver = Driver::start(&args.output, base.overwrite)?;
    eprintln!("fathom: {plan}");
    let stop = driver.stop.clone();
    let mut session = driver.session();
    let mut document = session.document().clone();
    let json_file = args.output.progress_file();
    // A search refused after its first step (the target cannot carry it)
    // is bad input: the result written after that step goes with it.
    let new_file = json_file.filter(|p| !p.exists());
    let mut bracketed = false;
    let step_stop = stop.clone();
    // An object store's step: the run at the step's rate, checked against
    // the store as any run is, and its objects deleted after it.
    let mut store_step = |_: &mut fathom::run::Session,
                          spec: &fathom::spec::WorkloadSpec|
     -> anyhow::Result<RunResult> {
        use fathom::commands::object;
        let checked = object::check(&object::spec_of(spec, false)?)?;
        Ok(RunResult::Object(object::run(checked, &step_stop, None)))
    };
    let mut session_step =
        |s: &mut fathom::run::Session, spec: &fathom::spec::WorkloadSpec| s.run_one(spec);
    let run_step: &mut capacity::StepRunner = match on_store {
        true => &mut store_step,
        false => &mut session_step,
    };
    let result = capacity::search_with(
        &mut session,
        &base,
        &search,
        &stop,
        &mut |so_far: &CapacityResult| {
            if let Some(step) = so_far.steps.last() {
                eprintln!("fathom: {}", step_line(so_far.steps.len(), step, &search));
            }
            // The climb is over: now the rest of the search can be planned.
            if let (Some(lo), Some(hi), false) = (so_far.answer_iops, so_far.missed_iops, bracketed)
            {
                bracketed = true;
                let left = capacity::steps_left(&search, lo, hi);
                eprintln!(
                    "fathom: bisecting between {}/s and {}/s: up to {left} more steps, about {} (a step that misses runs twice)",
                    units::thousands(lo.round() as u64),
                    units::thousands(hi.round() as u64),
                    units::format_duration(left as f64 * step_s)
                );
            }
            document.results = vec![RunResult::Capacity(so_far.clone())];
            driver.progress(&document)
        },
        run_step,
    )
    .inspect_err(|e| {
        if let Some(path) = new_file
            && e.is::<fathom::util::error::UsageError>()
        {
            fathom::report::destination::discard(path);
        }
    })?;
    // The session removes the files it laid out before the report is out.
    drop(session);
    document.interrupted = result.interrupted;
    document.results = vec![RunResult::Capacity(result)];
    driver.finish(&document, false)
}

/// Whether the knob's flag was given on the command line.
fn knob_given(args: &CapacityArgs, knob: &str) -> bool {
    args.workload.knobs.given.iter().any(|(k, _)| k == knob)
}

/// `fathom capacity TRACE TARGET...`: the replay whose speed is searched,
/// made with the other flags (the engine, its depth, safety); each step
/// plays the whole trace unless --runtime cuts it.
fn replay_base(args: &CapacityArgs, trace: &str) -> anyhow::Result<fathom::spec::WorkloadSpec> {
    use fathom::commands::replay;
    let rest = super::WorkloadArgs {
        targets: args.workload.targets[1..].to_vec(),
        labelled: Vec::new(),
        filename: Vec::new(),
        knobs: args.workload.knobs.clone(),
        streams: Vec::new(),
    };
    let given = |knob: &str| knob_given(args, knob);
    let mut specs = rest.resolve(None, false, &[])?;
    let flags = specs.remove(0);
    let mut kept = replay::kept(&flags);
    kept.name = "replay".into();
    if !given("iodepth") {
        kept.iodepth = replay::DEFAULT_IODEPTH;
    }
    let request = replay::ReplayRequest {
        trace: trace.into(),
        map: Vec::new(),
        speed: Some(1.0),
        loops: 1,
        from_s: 0.0,
        to_s: None,
        wrap: false,
        spec: kept,
    };
    let mut spec = replay::workload(&request)?;
    if given("ramp") {
        spec.ramp_s = flags.ramp_s;
    }
    Ok(spec)
}

/// "step 3 (climb): 4,000/s offered, 3,998/s achieved, p99 1.20 ms: met".
fn step_line(
    n: usize,
    s: &fathom::result::capacity::CapacityStep,
    search: &CapacitySpec,
) -> String {
    let terms: Vec<String> = search
        .slo
        .0
        .iter()
        .zip(&s.slo_ns)
        .map(|(t, v)| {
            format!(
                "{} {}",
                fathom::spec::capacity::percentile_name(t.percentile),
                units::latency(*v as f64)
            )
        })
        .collect();
    format!(
        "step {n} ({}): {}/s offered, {}/s achieved, {}: {}",
        report::capacity::phase(s),
        units::thousands(s.offered_iops.round() as u64),
        units::thousands(s.achieved_iops.round() as u64),
        terms.join(", "),
        report::capacity::outcome(s)
    )
}
