//! `fathom run`: the workload arguments, what they ask for (workloads or
//! a tree run), the plan shown, and the runs executed through the driver.

use super::*;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    PerRank,
    Shared,
}

/// What to run and where: a job file or knob flags, targets, streams.
#[derive(Args, Debug)]
pub(crate) struct WorkloadArgs {
    /// A job file (NAME.toml, or an fio job file: NAME.fio or INI content)
    /// and/or targets: files, directories (fathom
    /// creates its own file there) or block devices; LABEL=PATH names a
    /// target in reports. Default: a temporary file in the current directory.
    pub(crate) targets: Vec<String>,

    /// A labelled target, LABEL=PATH (repeatable); the label is its name in
    /// reports.
    #[arg(
        long = "target",
        value_name = "LABEL=PATH",
        help_heading = "Targets and streams"
    )]
    pub(crate) labelled: Vec<String>,

    /// fio's spelling of the targets (`--filename=a:b`), taken as they are
    /// given after the command.
    #[arg(long = "filename", value_name = "PATH[:PATH...]", hide = true)]
    pub(crate) filename: Vec<String>,

    #[command(flatten)]
    pub(crate) knobs: KnobArgs,

    /// A stream of the workload, run at the same time as the others:
    /// NAME:KNOB=VALUE,... with knobs named as the flags (rw=write,bs=16k,
    /// fsync=1,rate-iops=500); targets=a|b picks targets by label. Each
    /// starts from the other flags. Repeatable.
    #[arg(long = "stream", value_name = "NAME:KNOB=VALUE,...", value_parser = knobs::parse_stream, help_heading = "Targets and streams")]
    pub(crate) streams: Vec<(String, Vec<(String, String)>)>,
}

#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,

    /// Before measuring, write the whole region sequentially (128k) and then
    /// randomly (4k), as SNIA's performance test specification
    /// preconditions SSDs. Reported as workloads of their own.
    #[arg(long, help_heading = "What to run")]
    pub(crate) precondition: bool,

    /// Run a preset (see `fathom presets`): quick, desktop, desktop-nvme,
    /// desktop-mix, database, sas-sweep.
    #[arg(long, value_name = "NAME", help_heading = "What to run", hide_possible_values = true,
          value_parser = super::knob_args::Offered::new(
              fathom::input::presets::PRESETS.iter().map(|p| p.name), |v| Ok(v.to_string())))]
    pub(crate) preset: Option<String>,

    #[command(flatten)]
    pub(crate) mpi: MpiArgs,

    /// With --mpi: per-rank (each rank its own paths; {rank} and {host} in
    /// a target expand per rank) or shared (every rank its own disjoint
    /// slice of --size on the same targets).
    #[arg(
        long,
        value_enum,
        default_value = "per-rank",
        requires = "mpi",
        help_heading = "Many hosts"
    )]
    pub(crate) layout: Layout,

    /// Start measuring at this wall-clock time (RFC 3339, or +30s from now),
    /// after the targets are laid out: runs started on several hosts by any
    /// launcher then run together (merge them with `fathom merge`).
    #[arg(long = "start-at", value_name = "TIME", help_heading = "Many hosts")]
    pub(crate) start_at: Option<String>,

    /// Print the fathom job file an fio job file translates to (with how
    /// the two differ) and stop.
    #[arg(long, help_heading = "What to run")]
    pub(crate) explain: bool,

    /// Print the plan (runs and estimated time) and stop.
    #[arg(long = "dry-run", help_heading = "What to run")]
    pub(crate) dry_run: bool,

    /// Skip runs whose results are already in --output (an interrupted sweep
    /// goes on where it stopped).
    #[arg(long, requires = "output", help_heading = "What to run")]
    pub(crate) resume: bool,

    /// Record every I/O issued into FILE (fathom's trace format), to replay
    /// with `fathom replay FILE TARGET...`. One workload, without --mpi.
    #[arg(long, value_name = "FILE", help_heading = "What to run")]
    pub(crate) record: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

impl RunArgs {
    /// The workloads these arguments ask for: a preset's, a job file's, or
    /// one workload from the flags, swept over any comma lists.
    #[cfg(feature = "mpi")]
    pub(crate) fn resolve(&self) -> Result<Vec<WorkloadSpec>, UsageError> {
        match self.asked()? {
            Asked::Workloads(specs) => Ok(specs),
            Asked::Tree(_) => Err(UsageError(TREE_JOBS.into())),
            Asked::Objects(_) => Err(UsageError(OBJECT_RUNS.into())),
        }
    }

    /// What these arguments ask for: workloads, or the tree run of an fio
    /// job file of file-operation jobs (`ioengine=filecreate` and the
    /// like).
    pub(crate) fn asked(&self) -> Result<Asked, UsageError> {
        Ok(
            match self
                .workload
                .asked(self.preset.as_deref(), self.explain, &[])?
            {
                Asked::Workloads(specs) if self.precondition => {
                    Asked::Workloads(plan::preconditioned(specs))
                }
                asked => asked,
            },
        )
    }
}

/// What a command's workload arguments ask for.
pub(crate) enum Asked {
    Workloads(Vec<WorkloadSpec>),
    /// fio jobs of a file-operation engine, which run as a tree.
    Tree(fathom::spec::tree::TreeSpec),
    /// Runs on an object store (`s3://` targets).
    Objects(Vec<fathom::spec::object::ObjectSpec>),
}

/// Said where an object-store run cannot go (yet).
pub(crate) const OBJECT_RUNS: &str =
    "an s3:// target runs with `fathom run s3://BUCKET[/PREFIX]` on one host, without --mpi";

/// Said where a tree run of fio jobs cannot go.
pub(crate) const TREE_JOBS: &str = "this fio job file's jobs use a file-operation engine (filecreate, filestat, ...): `fathom run JOB.fio` or `fathom fio JOB.fio` runs them as a tree run";

impl WorkloadArgs {
    /// The workloads of a preset, a job file or the flags; `defaults` are
    /// knobs set when neither the flags nor a job file set them. With
    /// `explain`, prints the translated fio job file and returns none.
    pub(crate) fn resolve(
        &self,
        preset: Option<&str>,
        explain: bool,
        defaults: &[(&str, &str)],
    ) -> Result<Vec<WorkloadSpec>, UsageError> {
        match self.asked(preset, explain, defaults)? {
            Asked::Workloads(specs) => Ok(specs),
            Asked::Tree(_) => Err(UsageError(TREE_JOBS.into())),
            Asked::Objects(_) => Err(UsageError(OBJECT_RUNS.into())),
        }
    }

    /// As `resolve`, and an fio job file of file-operation jobs as the
    /// tree run it translates to.
    /// The workloads as resolved, an object store's too (a capacity
    /// search sets their rates); the tree run of fio's file-operation
    /// jobs is refused.
    pub(crate) fn resolve_any_target(
        &self,
        defaults: &[(&str, &str)],
    ) -> Result<Vec<WorkloadSpec>, UsageError> {
        let resolved = self.resolved(None, false, defaults)?;
        if resolved.tree.is_some() {
            return Err(UsageError(TREE_JOBS.into()));
        }
        for n in &resolved.notes {
            fathom::util::terminal::say(&format!("note: {n}"));
        }
        as_run(resolved)
    }

    fn resolved(
        &self,
        preset: Option<&str>,
        explain: bool,
        defaults: &[(&str, &str)],
    ) -> Result<resolve::Resolved, UsageError> {
        let positional: Vec<String> = self
            .targets
            .iter()
            .cloned()
            .chain(
                self.filename
                    .iter()
                    .flat_map(|f| f.split(':').map(String::from)),
            )
            .collect();
        resolve::resolve(&resolve::Request {
            positional: &positional,
            labelled: &self.labelled,
            streams: &self.streams,
            knobs: &self.knobs.given,
            preset,
            explain,
            defaults,
        })
    }

    pub(crate) fn asked(
        &self,
        preset: Option<&str>,
        explain: bool,
        defaults: &[(&str, &str)],
    ) -> Result<Asked, UsageError> {
        let resolved = self.resolved(preset, explain, defaults)?;
        let explained = resolved.explained.clone();
        let notes = resolved.notes.clone();
        let bs_given = self.knobs.given.iter().any(|(k, _)| k == "bs");
        let credentials = resolved.credentials.clone();
        let asked = match resolved.tree {
            Some(tree) => Asked::Tree(tree),
            None => match objects_or_workloads(as_run(resolved)?, bs_given, &self.knobs.given)? {
                Asked::Objects(mut specs) => {
                    for s in &mut specs {
                        s.credentials = credentials.clone();
                    }
                    Asked::Objects(specs)
                }
                asked => asked,
            },
        };
        for n in &notes {
            fathom::util::terminal::say(&format!("note: {n}"));
        }
        if let Some(explained) = explained {
            // What a run would refuse, the explanation refuses too.
            if let Asked::Workloads(specs) = &asked {
                fathom::run::check_plan(specs)?;
            }
            print!("{explained}");
            return Ok(Asked::Workloads(Vec::new()));
        }
        Ok(asked)
    }
}

/// Object-store runs when the workloads' targets are `s3://` (every
/// workload's), the workloads as they are otherwise.
fn objects_or_workloads(
    specs: Vec<WorkloadSpec>,
    bs_given: bool,
    given: &[(String, String)],
) -> Result<Asked, UsageError> {
    use fathom::commands::object;
    use fathom::spec::knobs::{TargetClass, refuse_unused};
    let mut stores = Vec::new();
    for spec in &specs {
        if object::is_object_workload(spec)? {
            stores.push(object::spec_of(spec, bs_given)?);
        }
    }
    match stores.len() {
        // A file's object-store knobs are refused by is_object_workload,
        // from the spec (job files' too).
        0 => Ok(Asked::Workloads(specs)),
        n if n == specs.len() => {
            refuse_unused(given, TargetClass::ObjectStore)?;
            Ok(Asked::Objects(stores))
        }
        _ => Err(UsageError(
            "an s3:// target runs alone: give file and device targets a run of their own".into(),
        )),
    }
}

/// The specs an fio job file's translation runs: as they are, or each made
/// the replay of the iolog it plays (`read_iolog`).
pub(crate) fn as_run(resolved: resolve::Resolved) -> Result<Vec<WorkloadSpec>, UsageError> {
    match &resolved.replay {
        Some(r) => resolved
            .specs
            .iter()
            .map(|s| fathom::commands::replay::of_job(s, r.trace.clone(), r.speed))
            .collect(),
        None => Ok(resolved.specs),
    }
}

/// `fathom run`: the workloads the arguments ask for, planned, dry-run or
/// run.
pub(crate) fn run_command(args: &RunArgs, specs: Vec<WorkloadSpec>) -> anyhow::Result<i32> {
    if args.explain {
        return Ok(0);
    }
    if args.dry_run {
        return print_plan(&specs);
    }
    let start_at = args
        .start_at
        .as_deref()
        .map(|t| units::parse_start_at(t, std::time::SystemTime::now()))
        .transpose()
        .map_err(|m| UsageError(format!("--start-at: {m}")))?;
    if let Some(record) = &args.record {
        if specs.len() != 1 {
            return Err(UsageError(format!(
                "--record records one workload: this plan has {}",
                specs.len()
            ))
            .into());
        }
        replay::check_record_file(record, Path::new(""), args.output.output.as_deref())?;
    }
    execute(
        &specs,
        &args.output,
        args.resume,
        start_at,
        args.record.clone(),
    )
}

pub(crate) fn print_plan(specs: &[WorkloadSpec]) -> anyhow::Result<i32> {
    fathom::run::check_plan(specs)?;
    println!("plan: {}", plan::summary(specs));
    for (i, spec) in specs.iter().enumerate() {
        let mut bound = match spec.runtime_s {
            Some(r) => units::format_duration(r + spec.ramp_s),
            None => "one pass".into(),
        };
        if spec.repeat > 1 {
            bound = format!("{bound} x {} ({} reported)", spec.repeat, spec.pick);
        }
        let targets: Vec<&str> = (0..spec.targets.len())
            .map(|t| spec.target_label(t))
            .collect();
        // A group of streams is its streams, not the knobs they started from.
        let label = match spec.streams.as_slice() {
            [] => spec.label(),
            streams => {
                let each: Vec<String> = streams
                    .iter()
                    .map(|s| format!("{}: {}", s.name, s.label()))
                    .collect();
                format!("{} streams: {}", streams.len(), each.join("; "))
            }
        };
        println!(
            "{:>4}. {}  [{label}]  {}  {}",
            i + 1,
            spec.name,
            targets.join(", "),
            bound
        );
    }
    Ok(0)
}

pub(crate) fn execute(
    specs: &[WorkloadSpec],
    output: &OutputArgs,
    resume: bool,
    start_at: Option<std::time::SystemTime>,
    record: Option<PathBuf>,
) -> anyhow::Result<i32> {
    fathom::run::claim_targets(specs);
    let driver = Driver::start(output, specs.iter().any(|s| s.overwrite))?;
    let previous = match (&output.output, resume) {
        (Some(path), true) if path.exists() => {
            let text = fathom::gate::read::text(path, fathom::gate::read::RESUMED)?;
            Document::from_json(&text)
                .map_err(|e| UsageError(format!("--resume: {}: {e}", path.display())))?
                .workloads()
                .cloned()
                .collect()
        }
        _ => Vec::new(),
    };
    let mut done = 0;
    if resume {
        if let Some(conflict) = Session::resume_conflict(specs, &previous) {
            return Err(UsageError(format!(
                "--resume: {}: {conflict}",
                output.output.as_deref().unwrap_or(Path::new("")).display()
            ))
            .into());
        }
        done = Session::already_done(specs, &previous);
        eprintln!(
            "fathom: --resume: {done} of {} already in the result file, {} to run",
            units::counted(specs.len() as u64, "run"),
            specs.len() - done
        );
    }
    // A resumed plan is the runs left, which the line above counts.
    if specs.len() > 1 && done == 0 {
        eprintln!("fathom: plan: {}", plan::summary(specs));
    }
    let stream_to = output.progress_file();
    // Finished runs are written as they come, so an interrupted sweep keeps
    // them; the document grows with each, so it is rewritten only once the
    // time since the last write is ten times what that write took: a sweep
    // of thousands of short runs spends a tenth of its time writing at most,
    // not a time that grows with the square of its runs.
    let mut pacer = destination::RewritePacer::default();
    let mut stream = |doc: &Document| -> anyhow::Result<()> {
        let Some(path) = stream_to else {
            return Ok(());
        };
        if pacer.due(std::time::Instant::now()) {
            let started = std::time::Instant::now();
            destination::write(path, &json(doc)?)?;
            pacer.wrote(started, std::time::Instant::now());
        }
        Ok(())
    };
    let document = driver
        .session()
        .resume_from(previous)
        .starting_at(start_at)
        .recording(record)
        .run(specs, &mut stream)?;
    driver.finish(&document, document.failed())
}
