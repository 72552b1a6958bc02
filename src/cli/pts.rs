//! `fathom pts`: flags into a SNIA PTS test, the library's run, and the
//! document out.

use super::OutputArgs;
use super::driver::Driver;
use super::knob_args::knob;
use clap::Args;
use fathom::commands::pts;
use fathom::result::RunResult;
use fathom::result::pts::PtsResult;
use fathom::spec::EngineKind;
use fathom::spec::pts::{PtsSpec, PtsTest, Purge};
use fathom::util::units;

#[derive(Args, Debug)]
pub struct PtsArgs {
    /// iops (block sizes x read/write mixes, random), throughput (128k and
    /// 1024k sequential), latency (0.5k, 4k, 8k at T1Q1: mean, max, five
    /// nines) or write-saturation (4k random writes until 4x the active
    /// range is written).
    #[arg(hide_possible_values = true, value_parser = super::knob_args::Offered::new(
        PtsTest::ALL.iter().map(|t| t.name()), str::parse::<PtsTest>))]
    test: PtsTest,

    /// The block device: purged, preconditioned and tested; what it holds
    /// is destroyed.
    device: String,

    /// Share of the device tested, from its start, in percent.
    #[arg(long = "active-range", value_name = "PCT", default_value_t = 100)]
    active_range: u8,

    /// How long each cell of a round runs (write saturation: each round).
    #[arg(long, value_name = "TIME", default_value = "1m", value_parser = units::parse_seconds)]
    round: f64,

    /// Rounds before the test stops without steady state.
    #[arg(long = "max-rounds", value_name = "N", default_value_t = 25)]
    max_rounds: u32,

    /// discard (BLKDISCARD of the active range), format (NVMe Format NVM
    /// with a user data erase, of the whole namespace), sanitize (refused
    /// for now, with the controller's reason) or none (not compliant).
    #[arg(long, value_name = "METHOD", default_value = "discard")]
    purge: Purge,

    /// Workers of each cell (outstanding I/O = threads x depth).
    #[arg(long, value_name = "N", default_value_t = 4)]
    threads: u32,

    /// I/Os in flight per worker.
    #[arg(long, value_name = "N", default_value_t = 8)]
    depth: u32,

    /// Only these block sizes of the test's matrix (not compliant), e.g.
    /// 4k,64k.
    #[arg(long = "block-sizes", value_name = "LIST", value_delimiter = ',', value_parser = units::parse_size)]
    block_sizes: Vec<u64>,

    /// Only these read shares of the test's matrix (not compliant), e.g.
    /// 100,0.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    mixes: Vec<u8>,

    /// Write saturation: the longest it runs.
    #[arg(long = "max-time", value_name = "TIME", default_value = "6h", value_parser = units::parse_seconds)]
    max_time: f64,

    /// The I/O engine, as `run --engine` takes it.
    #[arg(long, value_name = "ENGINE", default_value = "io_uring", value_parser = knob("engine", |s| s.engine))]
    engine: EngineKind,

    /// Go on with the interrupted test in --output (a JSON file): its
    /// purge and preconditioning stand, rounds go on after its last.
    #[arg(long, requires = "output")]
    resume: bool,

    /// Print the plan and how long it can take, and stop: nothing is
    /// purged or written.
    #[arg(long = "dry-run")]
    dry_run: bool,

    #[command(flatten)]
    write: super::WriteFlags,

    #[command(flatten)]
    output: OutputArgs,
}

/// The interrupted test of `spec` in the result file `path`; a finished
/// one, or another test, is refused.
fn earlier(
    path: &std::path::Path,
    spec: &PtsSpec,
) -> Result<Option<PtsResult>, fathom::util::error::UsageError> {
    use fathom::util::error::UsageError;
    let text = fathom::gate::read::text(path, fathom::gate::read::RESUMED)?;
    let doc = fathom::result::Document::from_json(&text)
        .map_err(|e| UsageError(format!("--resume: {}: {e}", path.display())))?;
    let found = doc
        .results
        .into_iter()
        .filter_map(RunResult::into_kind::<fathom::result::pts::PtsResult>)
        .find(|p| p.spec == *spec);
    match found {
        Some(p) if p.interrupted => Ok(Some(p)),
        Some(_) => Err(UsageError(format!(
            "--resume: the test in {} ran to its end; nothing to resume",
            path.display()
        ))),
        None => Err(UsageError(format!(
            "--resume: {} holds no interrupted pts {} of these settings",
            path.display(),
            spec.test
        ))),
    }
}

pub fn pts_command(args: &PtsArgs) -> anyhow::Result<i32> {
    super::no_fio_form(&args.output, "a SNIA PTS test")?;
    let pick = |given: &[u64], all: Vec<u64>| {
        if given.is_empty() {
            all
        } else {
            given.to_vec()
        }
    };
    let spec = PtsSpec {
        test: args.test,
        device: args.device.clone(),
        active_range_pct: args.active_range,
        round_s: args.round,
        max_rounds: args.max_rounds,
        purge: args.purge,
        threads: args.threads,
        depth: args.depth,
        block_sizes: pick(&args.block_sizes, args.test.block_sizes()),
        mixes: if args.mixes.is_empty() {
            args.test.mixes()
        } else {
            args.mixes.clone()
        },
        max_time_s: args.max_time,
        destroy_data: args.write.destroy_data,
        even_if_mounted: args.write.even_if_mounted,
        engine: args.engine,
    };
    let plan = pts::check(&spec)?;
    let cells: Vec<String> = plan.cells.iter().map(|c| c.label()).collect();
    let bound = format!(
        "pts {} on {}: {} of active range; purge ({}), then preconditioning ({} written in 128k sequential writes, at the device's speed), then rounds of {} cells ({}) of {} each, tracking {}: the rounds take at most {} ({} rounds), less once steady",
        spec.test,
        spec.device,
        units::format_bytes(plan.active_range),
        spec.purge.name(),
        units::format_bytes(plan.precondition_bytes()),
        plan.cells.len(),
        fathom::report::sections::abridged(&cells),
        units::format_duration(spec.round_s),
        plan.tracking_label(spec.test),
        units::format_duration(plan.rounds_bound_s(&spec)),
        spec.max_rounds
    );
    if args.dry_run {
        println!("{bound}");
        return Ok(0);
    }
    let resumed = match (&args.output.output, args.resume) {
        (Some(path), true) if path.exists() => earlier(path, &spec)?,
        _ => None,
    };
    let driver = Driver::start(&args.output, args.write.overwrite)?;
    if let Some(r) = &resumed {
        eprintln!(
            "fathom: --resume: {} already in {}, going on from round {}",
            fathom::util::units::counted(r.rounds.len() as u64, "round"),
            args.output
                .output
                .as_deref()
                .unwrap_or(std::path::Path::new(""))
                .display(),
            r.rounds.len() + 1
        );
    }
    eprintln!("fathom: {bound}");
    let stop = driver.stop.clone();
    let mut session = driver.session();
    let mut document = session.document().clone();
    let result = pts::run(
        &spec,
        &plan,
        &mut session,
        &stop,
        resumed,
        &mut |so_far: &PtsResult| {
            if let Some(r) = so_far.rounds.last() {
                let verdict = so_far.window.map_or(String::new(), |w| {
                    format!(
                        "; window {}-{}: range {:.1}%, excursion {:.1}%{}",
                        w.first_round,
                        w.last_round,
                        w.range / w.average * 100.0,
                        w.excursion / w.average * 100.0,
                        if w.holds { ", steady" } else { "" }
                    )
                });
                let left = match so_far.window.is_some_and(|w| w.holds) {
                    true => String::new(),
                    false => format!(
                        "; at most {} left",
                        units::format_duration(plan.rounds_left_s(&spec, r.round))
                    ),
                };
                eprintln!(
                    "fathom: round {}: {} {}{verdict}{left}",
                    r.round,
                    so_far.tracking,
                    fathom::report::pts::format_figure(spec.test, r.tracking_value)
                );
            }
            // Written while the test goes on: until it ends, it reads as
            // interrupted, so that --resume takes it up after a crash.
            let mut snapshot = so_far.clone();
            snapshot.interrupted = true;
            snapshot.end = fathom::result::pts::PtsEnd::Interrupted;
            document.results = vec![RunResult::Pts(snapshot)];
            driver.progress(&document)
        },
    )?;
    drop(session);
    document.interrupted = result.interrupted;
    document.results = vec![RunResult::Pts(result)];
    driver.finish(&document, false)
}
