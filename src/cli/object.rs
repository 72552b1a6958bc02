//! `fathom run s3://BUCKET[/PREFIX]`: object-store runs, each checked
//! against its store before any writes a byte, run, and the document out.

use super::driver::drive;
use super::run::RunArgs;
use fathom::commands::benchmark::ObjectBench;
use fathom::spec::object::ObjectSpec;

pub(crate) fn object_command(args: &RunArgs, specs: &[ObjectSpec]) -> anyhow::Result<i32> {
    super::no_fio_form(&args.output, "an object-store run")?;
    if args.explain {
        return Ok(0);
    }
    let overwrite = specs.iter().any(|s| s.overwrite);
    drive(&ObjectBench, specs, &args.output, overwrite, args.dry_run)
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
    super::mpi_bench(&args.mpi, &args.output, overwrite, ObjectBench, spec)
}
