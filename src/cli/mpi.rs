//! `fathom run --mpi`: every rank runs its share of the plan, and rank 0
//! gathers the documents and writes the cluster's.

use super::*;

pub(crate) fn parse_timeout(text: &str) -> Result<std::time::Duration, String> {
    units::parse_duration(text).and_then(|d| {
        if d.is_zero() {
            Err("a timeout above 0".into())
        } else {
            Ok(d)
        }
    })
}

/// `fathom run --mpi`: this process is one rank; rank 0 writes the result.
#[cfg(feature = "mpi")]
pub(crate) fn mpi_run(args: &RunArgs) -> anyhow::Result<i32> {
    use fathom::commands::ranks;
    if args.start_at.is_some()
        || args.explain
        || args.dry_run
        || args.resume
        || args.record.is_some()
    {
        return Err(UsageError(
            "--mpi: --start-at, --explain, --dry-run, --resume and --record are for runs without MPI"
                .into(),
        )
        .into());
    }
    let ranks = std::rc::Rc::new(ranks::Ranks::join(args.mpi.mpi_timeout).map_err(UsageError)?);
    let root = ranks.rank() == 0;
    let plan = if root {
        args.resolve().map_err(|e| e.0).and_then(|plan| {
            if plan.iter().any(|s| s.replay.is_some()) {
                Err(
                    "--mpi: a job that replays an iolog (read_iolog) is for runs without MPI"
                        .into(),
                )
            } else {
                Ok(plan)
            }
        })
    } else {
        Ok(Vec::new())
    };
    // Bad input found here goes to every rank through the plan (rank 0's)
    // or the ranks' first check (any rank's), never by returning early: the
    // others would wait for the plan until the timeout, and this rank in
    // MPI's finalise for them.
    let plan = plan.and_then(|plan| match &args.output.output {
        Some(path) if root => {
            let overwrite = plan.iter().any(|s| s.overwrite);
            destination::check(path, overwrite)
                .map(|()| plan)
                .map_err(|e| e.0)
        }
        _ => Ok(plan),
    });
    // Each rank serves its own figures: on the port given plus its rank,
    // its lines in a file of its own, pushed under its own instance.
    let watch = {
        let mut o = args.output.watch.options();
        if o.any() {
            let rank = ranks.rank();
            o.host = format!("{}-rank{rank}", o.host);
            o.listen = o.listen.map(|a| fathom::report::live::port_plus(&a, rank));
            o.lines = o.lines.map(|p| fathom::report::live::per_rank(&p, rank));
            Some(fathom::report::live::Watch::start(&o).map_err(|e| e.0))
        } else {
            None
        }
    };
    let (watch, board) = match watch {
        Some(Ok(w)) => {
            let board = w.board();
            (Some(w), Ok(Some(board)))
        }
        Some(Err(e)) => (None, Err(e)),
        None => (None, Ok(None)),
    };
    if let Some(addr) = watch.as_ref().and_then(|w| w.listening) {
        eprintln!(
            "fathom: rank {}: serving live metrics at http://{addr}/metrics",
            ranks.rank()
        );
    }
    let stop = StopFlag::on_signals()?;
    let shared = args.layout == Layout::Shared;
    // MPI is finalised when the last handle goes: only after the document
    // is written and any error said. A launcher that is aborting the job
    // (Ctrl-C on mpirun sends each rank SIGTERM, then SIGKILL a second
    // later) never completes a finalise, so a stopped rank skips it.
    let kept = ranks.clone();
    let document = ranks::on_every_rank(
        ranks,
        ranks::PlanRanks::new(shared, args.output.label.clone(), board),
        plan,
        stop.clone(),
        &|said| eprintln!("fathom: {said}"),
    );
    mpi_finish(kept, document, &args.output, &stop)
}

/// One rank of an MPI job of a single run (a tree, an object-store run,
/// a training run): nothing watched, rank 0's spec and its -o checked
/// where it is written, then `work` with the ranks, that spec, a stop
/// flag and this rank's document; ended as every rank ends.
#[cfg(feature = "mpi")]
pub(crate) fn mpi_rank<S>(
    mpi: &MpiArgs,
    output: &OutputArgs,
    overwrite: bool,
    what: &str,
    spec: Result<S, String>,
    work: impl FnOnce(
        std::rc::Rc<fathom::commands::ranks::Ranks>,
        Result<S, String>,
        StopFlag,
        fathom::result::Document,
        &dyn Fn(String),
    ) -> anyhow::Result<Option<fathom::result::Document>>,
) -> anyhow::Result<i32> {
    use fathom::commands::ranks;
    use fathom::report::destination;
    use fathom::util::error::UsageError;
    if output.watch.options().any() {
        return Err(UsageError(format!(
            "--mpi: --metrics-listen, --live and --metrics-push watch {what} without MPI"
        ))
        .into());
    }
    let ranks = std::rc::Rc::new(ranks::Ranks::join(mpi.mpi_timeout).map_err(UsageError)?);
    // Rank 0's spec runs everywhere; its -o is checked where it is written.
    let spec = match &output.output {
        Some(path) if ranks.rank() == 0 => spec.and_then(|s| {
            destination::check(path, overwrite)
                .map(|()| s)
                .map_err(|e| e.0)
        }),
        _ => spec,
    };
    let stop = StopFlag::on_signals()?;
    let document =
        fathom::result::Document::new(fathom::measure::facts::host_facts(), output.label.clone());
    let kept = ranks.clone();
    let cluster = work(ranks, spec, stop.clone(), document, &|said| {
        eprintln!("fathom: {said}")
    });
    mpi_finish(kept, cluster, output, &stop)
}

/// One rank of an MPI job of any kind of run built on the benchmark
/// contract (a tree, an object-store run, a training run).
#[cfg(feature = "mpi")]
pub(crate) fn mpi_bench<B: fathom::commands::benchmark::Benchmark>(
    mpi: &MpiArgs,
    output: &OutputArgs,
    overwrite: bool,
    bench: B,
    spec: Result<B::Spec, String>,
) -> anyhow::Result<i32> {
    mpi_rank(
        mpi,
        output,
        overwrite,
        B::WHAT,
        spec,
        |ranks, spec, stop, document, say| {
            fathom::commands::ranks::on_every_rank(
                ranks,
                fathom::commands::ranks::Ranked { bench, document },
                spec,
                stop,
                say,
            )
        },
    )
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn mpi_bench<B: fathom::commands::benchmark::Benchmark>(
    _: &MpiArgs,
    _: &OutputArgs,
    _: bool,
    _: B,
    _: Result<B::Spec, String>,
) -> anyhow::Result<i32> {
    Err(fathom::util::error::UsageError(
        "--mpi: this fathom was built without MPI (cargo build --release --features mpi)".into(),
    )
    .into())
}

/// How every rank of an MPI job ends, whatever it ran: rank 0 emits the
/// cluster document (or says the error every rank shares); the other ranks
/// wait until it has, then leave; a job with a lost rank, or one being
/// stopped, ends without MPI's finalise (which would wait for the lost).
#[cfg(feature = "mpi")]
pub(crate) fn mpi_finish(
    kept: std::rc::Rc<fathom::commands::ranks::Ranks>,
    document: anyhow::Result<Option<fathom::result::Document>>,
    output: &OutputArgs,
    stop: &StopFlag,
) -> anyhow::Result<i32> {
    let root = kept.rank() == 0;
    let outcome = match document {
        Ok(Some(document)) => emit(&document, output).map(|()| {
            history::remember_and_say(&document, &output.history);
            if stop.is_set() {
                eprintln!(
                    "fathom: interrupted: the cluster document holds what every rank measured before it{}",
                    output
                        .output
                        .as_deref()
                        .map(|p| format!(" ({})", p.display()))
                        .unwrap_or_default()
                );
            }
            exit_code(stop, document.failed())
        }),
        Ok(None) => Ok(exit_code(stop, false)),
        // Rank 0 has this rank's error (a usage error every rank shares, or
        // this rank's failure, gathered) and says it with its exit code. A
        // rank that exited non-zero first would have the launcher kill rank 0
        // before it could.
        Err(_) if !root => Ok(exit_code(stop, false)),
        Err(e) => Err(e),
    };
    // The other ranks wait until rank 0 has written the document: a rank
    // that exits during an abort (Ctrl-C on mpirun) has the launcher kill
    // the rest, rank 0 too, before it could.
    kept.broadcast(Vec::new());
    let lost = kept.lost();
    if root && !lost.is_empty() {
        // A rank that never came would keep the launcher, and so this job,
        // waiting forever: the document is out, the job ends here.
        if let Err(e) = &outcome {
            eprintln!("fathom: {e:#}");
        }
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        kept.abort(exit::RUNTIME_ERROR);
    }
    if stop.is_set() {
        if let Err(e) = &outcome {
            eprintln!("fathom: {e:#}");
        }
        let code = outcome.unwrap_or(exit::RUNTIME_ERROR);
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        std::process::exit(code);
    }
    drop(kept);
    outcome
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn mpi_run(_: &RunArgs) -> anyhow::Result<i32> {
    Err(UsageError(
        "--mpi: this fathom was built without MPI (cargo build --release --features mpi)".into(),
    )
    .into())
}
