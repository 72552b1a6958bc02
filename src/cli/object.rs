//! `fathom run s3://BUCKET[/PREFIX]`: object-store runs checked against
//! their store (before anything is written), run, and the document out.

use super::driver::Driver;
use super::run::RunArgs;
use fathom::commands::object;
use fathom::result::RunResult;
use fathom::spec::object::ObjectSpec;

pub(crate) fn object_command(args: &RunArgs, specs: &[ObjectSpec]) -> anyhow::Result<i32> {
    super::no_fio_form(&args.output, "an object-store run")?;
    if args.explain {
        return Ok(0);
    }
    if args.dry_run {
        println!(
            "plan: {} object-store run{}",
            specs.len(),
            if specs.len() == 1 { "" } else { "s" }
        );
        for (i, s) in specs.iter().enumerate() {
            println!(
                "{:>4}. {}  [mix {}, {} objects, {} uploaded first, {} workers]  {}  {}",
                i + 1,
                s.name,
                s.mix,
                s.object_size,
                s.objects,
                s.workers,
                s.target,
                s.runtime_s
                    .map(fathom::util::units::format_duration)
                    .unwrap_or_else(|| "one pass".into())
            );
        }
        return Ok(0);
    }
    // Every run is checked against its store before any writes a byte.
    let mut checked = Vec::new();
    for spec in specs {
        checked.push(object::check(spec)?);
    }
    let driver = Driver::start(&args.output, specs.iter().any(|s| s.overwrite))?;
    let mut document = driver.session().document().clone();
    for run in checked {
        if driver.stop.is_set() {
            break;
        }
        eprintln!(
            "fathom: {}: mix {} at {}",
            run.spec.target,
            run.spec.mix,
            run.spec.endpoints.join(", ")
        );
        let board = driver.session().board();
        let result = object::run(run, &driver.stop, board.as_deref());
        document.interrupted |= result.interrupted;
        document.results.push(RunResult::Object(result));
        driver.progress(&document)?;
    }
    let failed = document.failed();
    driver.finish(&document, failed)
}

/// `fathom run s3://... --mpi`: this process is one rank, on a prefix of
/// its own; rank 0 writes the cluster document.
#[cfg(feature = "mpi")]
pub(crate) fn mpi_objects(args: &RunArgs, specs: Vec<ObjectSpec>) -> anyhow::Result<i32> {
    let spec = match specs.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err("--mpi: one object-store run at a time (no sweep)".to_string()),
    };
    let overwrite = specs.iter().any(|s| s.overwrite);
    super::mpi::mpi_rank(
        &args.mpi,
        &args.output,
        overwrite,
        "an object-store run",
        spec,
        |ranks, spec, stop, document, say| {
            fathom::commands::ranks::on_every_rank(
                ranks,
                fathom::commands::ranks::ObjectRanks { document },
                spec,
                stop,
                say,
            )
        },
    )
}
