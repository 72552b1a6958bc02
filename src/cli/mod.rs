//! The command line: flags named as fio users expect, resolved into workload
//! specs. Everything else lives in the library.

pub mod presets;
pub mod tools;

use crate::jobfile;
use crate::spec::knobs;
use crate::units;

use crate::error::{UsageError, exit};
use crate::plan;
use crate::report::{self, OutputFormat, Report};
use crate::result::Document;
use crate::run::Session;
use crate::spec::WorkloadSpec;
use crate::stop::{Interrupted, StopFlag};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "fathom",
    version,
    about = "Storage I/O benchmark: IOPS, bandwidth and latency percentiles (HDR histogram, 3 significant digits) of files, file systems and block devices",
    long_about = "Storage I/O benchmark: IOPS, bandwidth and latency percentiles (HDR histogram, 3 significant digits) of files, file systems and block devices.\n\nWith no arguments, runs a quick benchmark (4k random read at depth 32 and 1, 1M sequential read; about 20 s) on a temporary file in the current directory."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a workload, a sweep (comma lists) or a job file on targets.
    Run(Box<RunArgs>),
    /// Tables and charts from result files: text, markdown, csv or html.
    Report(ReportArgs),
    /// List the presets `fathom run --preset NAME` runs.
    Presets,
    /// File-system metadata speed (bonnie++ -n): create, stat and delete
    /// N x 1024 files in order and at random.
    Meta(tools::MetaArgs),
    /// Sequential read speed, cached (page cache) and uncached (O_DIRECT),
    /// as hdparm -tT.
    Seqread(tools::SeqreadArgs),
    /// ACT-style latency certification: streams at fixed rates, slow-I/O
    /// shares per interval, pass or fail against a profile.
    Certify(tools::CertifyArgs),
    /// The same workloads of two result files side by side, with ratios.
    Compare {
        /// The baseline result.
        a: PathBuf,
        /// The result compared with it.
        b: PathBuf,
    },
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// Result files (JSON) from fathom run; runs of the same workload in
    /// several files are merged (percentiles from merged histograms).
    #[arg(required = true)]
    files: Vec<PathBuf>,

    /// text, markdown, csv or html.
    #[arg(long, default_value = "text", value_parser = parse_format)]
    format: OutputFormat,

    /// Write the report there instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// A job file (NAME.toml) and/or targets: files, directories (fathom
    /// creates its own file there) or block devices; LABEL=PATH names a
    /// target in reports. Default: a temporary file in the current directory.
    targets: Vec<String>,

    /// A labelled target, LABEL=PATH (repeatable); the label is its name in
    /// reports.
    #[arg(long = "target", value_name = "LABEL=PATH")]
    labelled: Vec<String>,

    /// Access pattern: read, write, randread, randwrite, readwrite, randrw
    /// [default: randread]. A comma list sweeps: randread,randwrite.
    #[arg(long)]
    rw: Option<String>,

    /// Percentage of reads in readwrite/randrw [default: 50].
    #[arg(long = "rwmix-read", value_name = "PCT")]
    rwmix_read: Option<String>,

    /// Block size, 512 to 16m, k/m suffixes [default: 4k]. A comma list
    /// sweeps: 4k,8k,64k.
    #[arg(long)]
    bs: Option<String>,

    /// I/Os in flight per worker [default: 1]. A comma list sweeps: 1,4,16,64.
    #[arg(long)]
    iodepth: Option<String>,

    /// Worker threads per target [default: 1]. A comma list sweeps.
    #[arg(long)]
    numjobs: Option<String>,

    /// Bytes of each target to use (default: the whole device or file; 1g for
    /// a new file).
    #[arg(long)]
    size: Option<String>,

    /// Where the used region starts in each target [default: 0].
    #[arg(long)]
    offset: Option<String>,

    /// Run for this long (30s, 5m, 1h); without it, one pass over --size.
    #[arg(long)]
    runtime: Option<String>,

    /// Warm-up before measuring, excluded from the results [default: 0].
    #[arg(long)]
    ramp: Option<String>,

    /// O_DIRECT: bypass the page cache (the default).
    #[arg(long, overrides_with = "buffered")]
    direct: bool,

    /// Go through the page cache instead of O_DIRECT.
    #[arg(long, overrides_with = "direct")]
    buffered: bool,

    /// I/O engine: io_uring (default), sync (pread/pwrite) or null (no I/O:
    /// fathom's own overhead).
    #[arg(long)]
    engine: Option<String>,

    /// fsync after every N writes of each worker [default: 0, never].
    #[arg(long, value_name = "N")]
    fsync: Option<String>,

    /// Spread of random offsets: uniform (default) or zipf:THETA.
    #[arg(long = "random-distribution")]
    random_distribution: Option<String>,

    /// Seed for offsets and data, so runs repeat exactly.
    #[arg(long)]
    seed: Option<String>,

    /// Issue I/Os at this fixed rate per target (I/Os per second), on
    /// schedule; latency is also measured from when each I/O was due.
    #[arg(long = "rate-iops", value_name = "N")]
    rate_iops: Option<String>,

    /// Stop once a figure holds steady: iops:2% or lat:5% (every second of
    /// the last 10 within the band of their mean; :30s for another window).
    /// --runtime is the longest the run may take.
    #[arg(long = "steady-state", value_name = "METRIC:BAND%")]
    steady_state: Option<String>,

    /// Before measuring, write the whole region sequentially (128k) and then
    /// randomly (4k), as SNIA's performance test specification
    /// preconditions SSDs. Reported as workloads of their own.
    #[arg(long)]
    precondition: bool,

    /// As --rate-iops, in bytes per second (e.g. 18m/s).
    #[arg(long = "rate-bw", value_name = "SIZE/s")]
    rate_bw: Option<String>,

    /// Keep the files fathom created.
    #[arg(long)]
    keep: bool,

    /// Allow writes to an existing file that fathom did not create.
    #[arg(long)]
    overwrite: bool,

    /// Allow writes to a block device that is mounted, in use, or carries a
    /// file system, partition table or volume signature.
    #[arg(long = "i-know-this-destroys-data")]
    destroy_data: bool,

    /// Stamp every written block with a checked header and read everything
    /// back after the workload, reporting intact, stale, misplaced and
    /// corrupt blocks. With a read-only --rw, checks blocks an earlier
    /// --verify --keep run wrote.
    #[arg(long)]
    verify: bool,

    /// As --verify, reading each block back as soon as its write completes.
    #[arg(long = "verify-interleaved")]
    verify_interleaved: bool,

    /// Count I/O errors and keep going instead of ending the target at the
    /// first one.
    #[arg(long = "continue-on-error")]
    continue_on_error: bool,

    /// Name of the workload in results [default: run].
    #[arg(long)]
    name: Option<String>,

    /// Run a preset (see `fathom presets`): quick, desktop, database,
    /// sas-sweep.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,

    /// Print the plan (runs and estimated time) and stop.
    #[arg(long = "dry-run")]
    dry_run: bool,

    /// Skip runs whose results are already in --output (an interrupted sweep
    /// goes on where it stopped).
    #[arg(long, requires = "output")]
    resume: bool,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct OutputArgs {
    /// text, json, markdown, csv or html.
    #[arg(long = "output-format", default_value = "text", value_parser = parse_format)]
    pub output_format: OutputFormat,

    /// Write the result there instead of standard output (the text table is
    /// still printed).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Name of the system under test in reports and comparisons (default:
    /// the result file's name without its extension).
    #[arg(long, value_name = "NAME", value_parser = parse_label)]
    pub label: Option<String>,
}

impl Default for OutputArgs {
    fn default() -> Self {
        OutputArgs {
            output_format: OutputFormat::Text,
            output: None,
            label: None,
        }
    }
}

fn parse_label(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.is_empty() || s.len() > 64 || s.chars().any(|c| c.is_control()) {
        return Err(format!(
            "'{s}' is not a label (1 to 64 printable characters)"
        ));
    }
    Ok(s.to_string())
}

fn parse_format(s: &str) -> Result<OutputFormat, String> {
    s.parse()
}

impl RunArgs {
    /// Knob flags given on the command line, as (knob, text) pairs.
    fn knob_flags(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let text = [
            ("rw", &self.rw),
            ("rwmix_read", &self.rwmix_read),
            ("bs", &self.bs),
            ("iodepth", &self.iodepth),
            ("numjobs", &self.numjobs),
            ("size", &self.size),
            ("offset", &self.offset),
            ("runtime", &self.runtime),
            ("ramp", &self.ramp),
            ("engine", &self.engine),
            ("fsync", &self.fsync),
            ("random_distribution", &self.random_distribution),
            ("seed", &self.seed),
            ("rate_iops", &self.rate_iops),
            ("rate_bw", &self.rate_bw),
            ("steady_state", &self.steady_state),
            ("name", &self.name),
        ];
        for (knob, value) in text {
            if let Some(v) = value {
                out.push((knob.to_string(), v.clone()));
            }
        }
        let flags = [
            ("direct", self.direct),
            ("buffered", self.buffered),
            ("keep", self.keep),
            ("overwrite", self.overwrite),
            ("i_know_this_destroys_data", self.destroy_data),
            ("continue_on_error", self.continue_on_error),
        ];
        for (knob, set) in flags {
            if set {
                out.push((knob.to_string(), "true".to_string()));
            }
        }
        if self.verify_interleaved {
            out.push(("verify".into(), "interleaved".into()));
        } else if self.verify {
            out.push(("verify".into(), "after-write".into()));
        }
        out
    }

    /// The workloads these arguments ask for: a job file's, or one workload
    /// from the flags, swept over any comma lists.
    fn resolve(&self) -> Result<Vec<WorkloadSpec>, UsageError> {
        let mut positional = self.targets.clone();
        let job = match positional.first() {
            Some(first) if first.ends_with(".toml") && !Path::new(first).is_dir() => {
                Some(PathBuf::from(positional.remove(0)))
            }
            _ => None,
        };
        let mut overrides = jobfile::Overrides {
            targets: positional
                .into_iter()
                .chain(self.labelled.clone())
                .collect(),
            ..Default::default()
        };
        for (knob, value) in self.knob_flags() {
            let values: Vec<String> = value.split(',').map(|v| v.trim().to_string()).collect();
            if values.len() > 1 && knobs::SWEEPABLE_FLAGS.contains(&knob.as_str()) {
                overrides.sweep.push((knob, values));
            } else {
                overrides.knobs.push((knob, value));
            }
        }
        let specs = match (job, &self.preset) {
            (Some(_), Some(_)) => {
                return Err(UsageError(
                    "--preset: give either a job file or a preset, not both".into(),
                ));
            }
            (None, Some(name)) => presets::load(name, &overrides)?,
            (Some(path), None) => jobfile::load(&path, &overrides)?,
            (None, None) => {
                if overrides.targets.is_empty() {
                    overrides.targets.push(".".into());
                }
                from_flags(&overrides)?
            }
        };
        Ok(if self.precondition {
            precondition(specs)
        } else {
            specs
        })
    }
}

/// Two passes over each target before the workloads: sequential 128k
/// writes, then random 4k writes (SNIA PTS's workload-independent and
/// -dependent preconditioning, shortened to one pass each).
fn precondition(specs: Vec<WorkloadSpec>) -> Vec<WorkloadSpec> {
    let Some(first) = specs.first() else {
        return specs;
    };
    let pass = |name: &str, rw: crate::spec::RwMode, bs: u64| WorkloadSpec {
        name: name.into(),
        rw,
        rwmix_read: 0,
        bs,
        iodepth: 32,
        numjobs: 1,
        runtime_s: None,
        ramp_s: 0.0,
        rate_iops: None,
        rate_bw: None,
        steady_state: None,
        verify: crate::spec::VerifyMode::Off,
        ..first.clone()
    };
    let mut out = vec![
        pass("precondition-seq", crate::spec::RwMode::Write, 128 << 10),
        pass("precondition-random", crate::spec::RwMode::RandWrite, 4096),
    ];
    out.extend(specs);
    out
}

/// One workload from flags, expanded over the flags' sweeps.
fn from_flags(o: &jobfile::Overrides) -> Result<Vec<WorkloadSpec>, UsageError> {
    let flag_error =
        |knob: &str, m: String| UsageError(format!("--{}: {m}", knob.replace('_', "-")));
    plan::check_size(&o.sweep, 1).map_err(UsageError)?;
    let mut specs = Vec::new();
    for bindings in plan::expand(&o.sweep) {
        let mut b = knobs::SpecBuilder::new(plan::default_spec(Vec::new()));
        for (k, v) in o.knobs.iter().chain(&bindings) {
            b.set(k, v).map_err(|m| flag_error(k, m))?;
        }
        b.spec.name = plan::point_name(&b.spec.name, &bindings);
        let mut spec = b.finish();
        jobfile::set_targets(&mut spec, &o.targets);
        specs.push(spec);
    }
    Ok(specs)
}

/// Parses the arguments, runs, prints, and returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return 0;
            }
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            eprintln!("fathom: {}", first.trim_start_matches("error: "));
            return exit::USAGE;
        }
    };
    let result = match cli.command {
        None => presets::load("quick", &jobfile::Overrides::default())
            .map_err(anyhow::Error::from)
            .and_then(|specs| execute(&specs, &OutputArgs::default(), false)),
        Some(Command::Meta(args)) => tools::meta_command(&args),
        Some(Command::Seqread(args)) => tools::seqread_command(&args),
        Some(Command::Certify(args)) => tools::certify_command(&args),
        Some(Command::Presets) => {
            print!("{}", presets::listing());
            Ok(0)
        }
        Some(Command::Run(args)) => args
            .resolve()
            .map_err(anyhow::Error::from)
            .and_then(|specs| {
                if args.dry_run {
                    print_plan(&specs)
                } else {
                    execute(&specs, &args.output, args.resume)
                }
            }),
        Some(Command::Report(args)) => report_command(&args),
        Some(Command::Compare { a, b }) => compare_command(&a, &b),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if let Some(usage) = e.downcast_ref::<UsageError>() {
                eprintln!("fathom: {usage}");
                exit::USAGE
            } else if e.is::<Interrupted>() {
                eprintln!("fathom: interrupted");
                exit::SIGINT
            } else {
                eprintln!("fathom: {e:#}");
                exit::RUNTIME_ERROR
            }
        }
    }
}

fn print_plan(specs: &[WorkloadSpec]) -> anyhow::Result<i32> {
    crate::run::check_plan(specs)?;
    println!("plan: {}", plan::summary(specs));
    for (i, spec) in specs.iter().enumerate() {
        let bound = match spec.runtime_s {
            Some(r) => units::format_duration(r + spec.ramp_s),
            None => "one pass".into(),
        };
        let targets: Vec<&str> = (0..spec.targets.len())
            .map(|t| spec.target_label(t))
            .collect();
        println!(
            "{:>4}. {}  [{}]  {}  {}",
            i + 1,
            spec.name,
            spec.label(),
            targets.join(", "),
            bound
        );
    }
    Ok(0)
}

fn execute(specs: &[WorkloadSpec], output: &OutputArgs, resume: bool) -> anyhow::Result<i32> {
    if let Some(path) = &output.output {
        check_output_path(path)?;
    }
    let previous = match (&output.output, resume) {
        (Some(path), true) if path.exists() => {
            let text = read_result_file(path)?;
            Document::from_json(&text)
                .map_err(|e| UsageError(format!("--resume: {}: {e}", path.display())))?
                .workloads()
                .cloned()
                .collect()
        }
        _ => Vec::new(),
    };
    if specs.len() > 1 {
        eprintln!("fathom: plan: {}", plan::summary(specs));
    }
    let stop = StopFlag::on_signals()?;
    let stream_to = output
        .output
        .as_ref()
        .filter(|_| output.output_format == OutputFormat::Json);
    // Each finished run is written at once, so an interrupted sweep keeps
    // every run it finished.
    let mut stream = |doc: &Document| -> anyhow::Result<()> {
        if let Some(path) = stream_to {
            write_atomically(path, &json(doc)?)?;
        }
        Ok(())
    };
    let document = Session::new(stop.clone())
        .labelled(output.label.clone())
        .resume_from(previous)
        .run(specs, &mut stream)?;
    emit(&document, output)?;
    let problems = document.problems();
    for problem in &problems {
        eprintln!("fathom: {problem}");
    }
    Ok(exit_code(&stop, document.failed()))
}

fn report_command(args: &ReportArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        check_output_path(path)?;
    }
    let report = load_report(&args.files)?;
    if report.is_empty() {
        return Err(UsageError("the result files hold no finished result".into()).into());
    }
    let rendered = report::exporter(args.format).render(&report)?;
    match &args.output {
        Some(path) => write_atomically(path, &rendered)?,
        None => print!("{rendered}"),
    }
    Ok(0)
}

/// Reads result files; each is named by its label or else its stem, and
/// files of one name are merged.
fn load_report(paths: &[PathBuf]) -> anyhow::Result<Report> {
    let mut docs = Vec::with_capacity(paths.len());
    for path in paths {
        let text = read_result_file(path)?;
        let document = Document::from_json(&text)
            .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
        docs.push((stem(path), document));
    }
    Ok(Report::from_documents(docs).map_err(UsageError)?)
}

/// `fathom compare A B`: exit 2 when nothing in A has a counterpart in B.
fn compare_command(a: &Path, b: &Path) -> anyhow::Result<i32> {
    let a = load_report(&[a.to_path_buf()])?;
    let b = load_report(&[b.to_path_buf()])?;
    let comparison = report::compare::compare(&a.systems[0], &b.systems[0]);
    if comparison.matched == 0 {
        return Err(UsageError(format!(
            "nothing to compare: no result of {} matches one of {} ({})",
            a.systems[0].label,
            b.systems[0].label,
            comparison.unmatched.join(", ")
        ))
        .into());
    }
    print!("{}", comparison.text);
    Ok(0)
}

/// A file's name without its extension: the default label of its system.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "result".into(), |s| s.to_string_lossy().into_owned())
}

/// 143 or 130 after SIGTERM or SIGINT, 1 when the run `failed`, else 0.
pub(crate) fn exit_code(stop: &StopFlag, failed: bool) -> i32 {
    match stop.signal() {
        Some(signal_hook::consts::SIGTERM) => exit::SIGTERM,
        Some(_) => exit::SIGINT,
        None if failed => exit::RUNTIME_ERROR,
        None => 0,
    }
}

/// Writes the document in the chosen format to `--output` (and the text
/// table to stdout), or prints it.
pub(crate) fn emit(document: &Document, output: &OutputArgs) -> anyhow::Result<()> {
    let report = Report::single(document.clone(), &output_label(output));
    let rendered = report::exporter(output.output_format).render(&report)?;
    match &output.output {
        Some(path) => {
            write_atomically(path, &rendered)?;
            print!("{}", report::exporter(OutputFormat::Text).render(&report)?);
        }
        None => print!("{rendered}"),
    }
    Ok(())
}

/// The name a fresh run goes by in its own report: its label, else the
/// output file's stem, else "this run".
pub(crate) fn output_label(output: &OutputArgs) -> String {
    output
        .label
        .clone()
        .or_else(|| output.output.as_deref().map(stem))
        .unwrap_or_else(|| "this run".into())
}

/// The document as JSON, for writing after each finished run.
pub(crate) fn json(document: &Document) -> anyhow::Result<String> {
    report::exporter(OutputFormat::Json).render(&Report::single(document.clone(), ""))
}

/// Reads a result file given on the command line; the size cap keeps a
/// wrong path (a disk image, say) from being read into memory.
pub fn read_result_file(path: &Path) -> Result<String, UsageError> {
    const MAX_RESULT_FILE: u64 = 1 << 30;
    let err = |m: String| UsageError(format!("{}: {m}", path.display()));
    let len = std::fs::metadata(path)
        .map_err(|e| err(e.to_string()))?
        .len();
    if len > MAX_RESULT_FILE {
        return Err(err(format!("{len} bytes is too large for a fathom result")));
    }
    std::fs::read_to_string(path).map_err(|e| err(e.to_string()))
}

pub(crate) fn check_output_path(path: &Path) -> Result<(), UsageError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "--output {}: directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(UsageError(format!(
            "--output {} is a directory",
            path.display()
        )));
    }
    Ok(())
}

/// Writes through a temporary file and a rename, so a reader never sees half
/// a result.
pub(crate) fn write_atomically(path: &Path, contents: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, contents)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
