//! The command line: flags named as fio users expect, resolved into workload
//! specs. Everything else lives in the library.

mod capacity;
mod check;
mod crashcheck;
mod driver;
mod fio;
mod history;
mod knob_args;
mod pts;
mod replay;
pub mod tools;
mod tree;

use driver::Driver;
use knob_args::KnobArgs;

use crate::input::{jobfile, presets, resolve};
use crate::spec::knobs;
use crate::util::units;

use crate::input::plan;
use crate::report::{self, OutputFormat, Report, destination};
use crate::result::Document;
use crate::run::Session;
use crate::spec::WorkloadSpec;
use crate::util::error::{UsageError, exit};
use crate::util::stop::{Interrupted, StopFlag};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "fathom",
    version,
    about = "Storage I/O benchmark: IOPS, bandwidth and latency percentiles (HDR histogram, 3 significant digits) of files, file systems and block devices",
    long_about = "Storage I/O benchmark: IOPS, bandwidth and latency percentiles (HDR histogram, 3 significant digits) of files, file systems and block devices.\n\nWith no arguments, runs a quick benchmark (4k random read at depth 32 and 1, 1M sequential read; about 20 s) on a temporary file in the current directory.",
    after_help = EXIT_CODES
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// Running as one rank of an MPI job, for every command that can.
#[derive(Args, Debug, Clone)]
pub struct MpiArgs {
    /// Run as one rank of an MPI job (mpirun -n N fathom COMMAND --mpi ...):
    /// rank 0's plan runs on every rank, each workload (or phase) starts on
    /// a barrier, and rank 0 writes one cluster document. Needs a fathom
    /// built with --features mpi.
    #[arg(long)]
    pub mpi: bool,

    /// With --mpi: how long a rank waits for the others where they meet
    /// (the plan, the vote before each workload, the results); a rank that
    /// does not come in time (stopped, hung) is reported as failed, and
    /// rank 0 writes what the others measured and ends the job.
    #[arg(long = "mpi-timeout", value_name = "TIME", default_value = "120s", value_parser = parse_timeout, requires = "mpi")]
    pub mpi_timeout: std::time::Duration,
}

/// The exit codes, as `--help` and the man page give them.
const EXIT_CODES: &str = "Exit status:\n  0    the run (or report) finished, and every check it made passed\n  1    a certification or crashcheck FAIL, or a run ended by I/O errors or a failure\n  2    bad input (flags, job files, targets): nothing was run or written\n  130  interrupted by Ctrl-C (143 by SIGTERM): what was measured is reported, what fathom created removed";

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a workload, a sweep (comma lists) or a job file on targets.
    Run(Box<RunArgs>),
    /// Tables and charts from result files: text, markdown, csv, html, fio-json, fio-json+, fio-normal or fio-terse.
    Report(ReportArgs),
    /// List the presets `fathom run --preset NAME` runs.
    Presets,
    /// File-system metadata speed (bonnie++ -n): create, stat and delete
    /// N x 1024 files in order and at random.
    Meta(tools::MetaArgs),
    /// File trees as mdtest and elbencho measure them: --depth levels of
    /// --width directories, --files in each leaf, made and measured in
    /// phases (mkdir, create, stat, read, rename, delete, rmdir) by
    /// --threads, each operation's latency exact.
    Tree(tree::TreeArgs),
    /// Sequential read speed, cached (page cache) and uncached (O_DIRECT),
    /// as hdparm -tT.
    Seqread(tools::SeqreadArgs),
    /// ACT-style latency certification: streams at fixed rates, slow-I/O
    /// shares per interval, pass or fail against a profile.
    Certify(tools::CertifyArgs),
    /// The most load a workload can be offered while its latency (from when
    /// each I/O was due) meets an objective: steps at fixed rates climb
    /// until one misses, then bisection; reports the answer, the knee and
    /// every step. Each step runs --ramp then --runtime (here 2s and 10s
    /// unless given).
    Capacity(Box<capacity::CapacityArgs>),
    /// Whether a device keeps what it acknowledged through a power cut:
    /// write stamped blocks, flush each, log what was acknowledged on
    /// another device (or machine); after the cut, --verify reads them back.
    Crashcheck(Box<crashcheck::CrashcheckArgs>),
    /// Play a recorded workload (an fio iolog, blkparse's text, a CSV or a
    /// fathom recording) on targets at the recorded times or faster, with
    /// latency from when each I/O was due: will this workload fit here?
    Replay(Box<replay::ReplayArgs>),
    /// A test of SNIA's Solid State Performance Test Specification on a
    /// block device: purge, precondition, rounds until steady state, and
    /// the report in the specification's layout. Destroys what it holds.
    Pts(Box<pts::PtsArgs>),
    /// The same workloads of two result files side by side, with ratios.
    Compare(CompareArgs),
    /// Whether a result regressed against a baseline, beyond the noise:
    /// each figure's change with a confidence interval from the runs'
    /// seconds (block bootstrap), and improved / regressed / within
    /// noise; --fail-on-regression makes it a CI gate (exit 1).
    Check(Box<check::CheckArgs>),
    /// The runs kept in the history (every run's result is, unless
    /// --no-history): list and filter them, show one, export, remove,
    /// import results made elsewhere, and each workload's trend.
    History(Box<history::HistoryCommandArgs>),
    /// Results of runs that ran at the same time on several hosts (started
    /// with --start-at) as one cluster document: totals from merged
    /// histograms, each host's own figures kept.
    Merge(MergeArgs),
    /// fio's command line, job files and outputs, run by fathom: fathom
    /// fio --name=j --filename=F --rw=randread --direct=1
    /// --output-format=json (fathom called through a link named fio does
    /// the same). `fathom fio --help` lists fio's own options it takes.
    #[command(disable_help_flag = true)]
    Fio {
        /// fio's arguments, as fio takes them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Print a completion script for a shell (bash, zsh, fish, elvish,
    /// powershell), made from the same definitions as --help.
    Completions { shell: clap_complete::Shell },
    /// Print fathom's man page (roff), made from the same definitions as
    /// --help: fathom man > /usr/local/share/man/man1/fathom.1; fathom man
    /// run prints fathom-run(1); --dir DIR writes every page there.
    Man {
        /// The subcommand whose page to print (run, certify, ...).
        subcommand: Option<String>,
        /// Write fathom.1 and a page per subcommand (fathom-run.1, ...) into
        /// this directory instead.
        #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
        dir: Option<PathBuf>,
    },
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    PerRank,
    Shared,
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// One result file (JSON) per host or rank, in rank order.
    #[arg(required = true, num_args = 2..)]
    files: Vec<PathBuf>,

    /// Write the cluster document there instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,

    /// Replace an existing --output file that is not a fathom result.
    #[arg(long)]
    overwrite: bool,

    /// Warn when the hosts started measuring further apart than this.
    #[arg(long, default_value = "1s", value_parser = parse_tolerance)]
    tolerance: f64,
}

fn parse_timeout(text: &str) -> Result<std::time::Duration, String> {
    units::parse_duration(text).and_then(|d| {
        if d.is_zero() {
            Err("a timeout above 0".into())
        } else {
            Ok(d)
        }
    })
}

fn parse_tolerance(text: &str) -> Result<f64, String> {
    units::parse_duration(text).map(|d| d.as_secs_f64())
}

#[derive(Args, Debug)]
struct CompareArgs {
    /// The baseline result (fathom's JSON, or fio's json/json+).
    a: PathBuf,
    /// The result compared with it.
    b: PathBuf,

    /// text, markdown or csv. Default: the --output file's extension (.md, .csv), else text.
    #[arg(long = "output-format", alias = "format", value_name = "FORMAT", value_parser = parse_compare_format)]
    format: Option<report::compare::Layout>,

    /// Write the comparison there instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,

    /// Replace an existing --output file that is not a fathom result.
    #[arg(long)]
    overwrite: bool,
}

fn parse_compare_format(s: &str) -> Result<report::compare::Layout, String> {
    let format: OutputFormat = s.parse()?;
    report::compare::Layout::of(format)
        .ok_or_else(|| format!("compare writes text, markdown or csv, not {s}"))
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// Result files (JSON) from fathom run; runs of the same workload in
    /// several files are merged (percentiles from merged histograms).
    #[arg(required = true)]
    files: Vec<PathBuf>,

    /// text, json, markdown, csv, html, fio-json (fio's JSON layout, for tools built on fio) fio-json+ (with fio's latency bins, as fio's json+), fio-normal (fio's text output) or fio-terse (fio's --minimal line, version 3). Default: the --output file's extension (.json, .csv, .md, .html), else text.
    #[arg(long = "output-format", alias = "format", value_name = "FORMAT", value_parser = parse_format)]
    format: Option<OutputFormat>,

    /// Write the report there instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,

    /// Replace an existing --output file that is not a fathom result.
    #[arg(long)]
    overwrite: bool,
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
    #[arg(long = "target", value_name = "LABEL=PATH")]
    pub(crate) labelled: Vec<String>,

    #[command(flatten)]
    pub(crate) knobs: KnobArgs,

    /// A stream of the workload, run at the same time as the others:
    /// NAME:KNOB=VALUE,... with knobs named as the flags (rw=write,bs=16k,
    /// fsync=1,rate-iops=500); targets=a|b picks targets by label. Each
    /// starts from the other flags. Repeatable.
    #[arg(long = "stream", value_name = "NAME:KNOB=VALUE,...", value_parser = knobs::parse_stream)]
    pub(crate) streams: Vec<(String, Vec<(String, String)>)>,
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    workload: WorkloadArgs,

    /// Before measuring, write the whole region sequentially (128k) and then
    /// randomly (4k), as SNIA's performance test specification
    /// preconditions SSDs. Reported as workloads of their own.
    #[arg(long)]
    precondition: bool,

    /// Run a preset (see `fathom presets`): quick, desktop, desktop-nvme,
    /// desktop-mix, database, sas-sweep.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,

    #[command(flatten)]
    mpi: MpiArgs,

    /// With --mpi: per-rank (each rank its own paths; {rank} and {host} in
    /// a target expand per rank) or shared (every rank its own disjoint
    /// slice of --size on the same targets).
    #[arg(long, value_enum, default_value = "per-rank", requires = "mpi")]
    layout: Layout,

    /// Start measuring at this wall-clock time (RFC 3339, or +30s from now),
    /// after the targets are laid out: runs started on several hosts by any
    /// launcher then run together (merge them with `fathom merge`).
    #[arg(long = "start-at", value_name = "TIME")]
    start_at: Option<String>,

    /// Print the fathom job file an fio job file translates to (with how
    /// the two differ) and stop.
    #[arg(long)]
    explain: bool,

    /// Print the plan (runs and estimated time) and stop.
    #[arg(long = "dry-run")]
    dry_run: bool,

    /// Skip runs whose results are already in --output (an interrupted sweep
    /// goes on where it stopped).
    #[arg(long, requires = "output")]
    resume: bool,

    /// Record every I/O issued into FILE (fathom's trace format), to replay
    /// with `fathom replay FILE TARGET...`. One workload, without --mpi.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,

    #[command(flatten)]
    output: OutputArgs,
}

/// Permission to write what fathom otherwise refuses to, for the commands
/// that write outside the knob table (crashcheck, replay).
#[derive(Args, Debug, Clone, Copy)]
pub struct WriteFlags {
    /// Allow writing an existing file fathom did not create (and replacing
    /// an --output file that is not a fathom result).
    #[arg(long)]
    pub overwrite: bool,

    /// Allow writing a block device that carries a file system, partition
    /// table or volume signature, destroying what it holds.
    #[arg(long = "i-know-this-destroys-data")]
    pub destroy_data: bool,

    /// Allow writing a block device in use right now (mounted, swap, held
    /// by LVM, RAID or dm-crypt), with --i-know-this-destroys-data.
    #[arg(long = "even-if-mounted")]
    pub even_if_mounted: bool,
}

#[derive(Args, Debug, Default)]
pub struct OutputArgs {
    /// text, json, markdown, csv, html, fio-json (fio's JSON layout, for tools built on fio) fio-json+ (with fio's latency bins, as fio's json+), fio-normal (fio's text output) or fio-terse (fio's --minimal line, version 3). Default: the --output file's extension (.json, .csv, .md, .html), else text.
    #[arg(long = "output-format", alias = "format", value_name = "FORMAT", value_parser = parse_format)]
    pub output_format: Option<OutputFormat>,

    /// Write the result there instead of standard output (the text table is
    /// still printed).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Name of the system under test in reports and comparisons (default:
    /// the result file's name without its extension).
    #[arg(long, value_name = "NAME", value_parser = parse_label)]
    pub label: Option<String>,

    #[command(flatten)]
    pub watch: WatchArgs,

    #[command(flatten)]
    pub history: history::HistoryArgs,
}

/// Watching a run while it runs.
#[derive(Args, Debug, Default, Clone)]
pub struct WatchArgs {
    /// Serve the figures measured so far at http://ADDR:PORT/metrics in
    /// Prometheus' text format while the command runs: I/O and byte
    /// counters, latency histograms and exact quantiles per workload,
    /// stream and direction, the phase (port 0: any free port, said on
    /// stderr)
    #[arg(long = "metrics-listen", value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,

    /// Write each completed second as a line of JSON (figures and the
    /// second's latency histogram) to FILE, or `-` for standard output
    #[arg(long = "live", value_name = "FILE")]
    pub live: Option<PathBuf>,

    /// Push the figures to a Prometheus Pushgateway (http://HOST:9091)
    /// every second and at the end, for runs that end before a scrape
    #[arg(long = "metrics-push", value_name = "URL")]
    pub metrics_push: Option<String>,
}

impl WatchArgs {
    pub fn options(&self) -> crate::report::live::WatchOptions {
        crate::report::live::WatchOptions {
            listen: self.metrics_listen.clone(),
            lines: self.live.clone(),
            push: self.metrics_push.clone(),
            host: crate::measure::facts::host_facts().hostname,
        }
    }
}

impl OutputArgs {
    /// The format asked for, else the one the --output file's extension
    /// names, else text.
    pub fn format(&self) -> OutputFormat {
        format_for(self.output_format, self.output.as_deref())
    }

    /// Where each finished part of a long run is written as it comes, so an
    /// interrupted run keeps it: a JSON --output that is a regular file (a
    /// stream takes the result once, at the end).
    pub fn progress_file(&self) -> Option<&Path> {
        self.output
            .as_deref()
            .filter(|path| self.format() == OutputFormat::Json && destination::is_rewritable(path))
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

/// `given`, else the format `output`'s extension names, else text.
fn format_for(given: Option<OutputFormat>, output: Option<&Path>) -> OutputFormat {
    given
        .or_else(|| output.and_then(OutputFormat::of_path))
        .unwrap_or(OutputFormat::Text)
}

impl RunArgs {
    /// The workloads these arguments ask for: a preset's, a job file's, or
    /// one workload from the flags, swept over any comma lists.
    #[cfg(feature = "mpi")]
    fn resolve(&self) -> Result<Vec<WorkloadSpec>, UsageError> {
        match self.asked()? {
            Asked::Workloads(specs) => Ok(specs),
            Asked::Tree(_) => Err(UsageError(TREE_JOBS.into())),
        }
    }

    /// What these arguments ask for: workloads, or the tree run of an fio
    /// job file of file-operation jobs (`ioengine=filecreate` and the
    /// like).
    fn asked(&self) -> Result<Asked, UsageError> {
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
enum Asked {
    Workloads(Vec<WorkloadSpec>),
    /// fio jobs of a file-operation engine, which run as a tree.
    Tree(crate::spec::tree::TreeSpec),
}

/// Said where a tree run of fio jobs cannot go.
const TREE_JOBS: &str = "this fio job file's jobs use a file-operation engine (filecreate, filestat, ...): `fathom run JOB.fio` or `fathom fio JOB.fio` runs them as a tree run";

impl WorkloadArgs {
    /// The workloads of a preset, a job file or the flags; `defaults` are
    /// knobs set when neither the flags nor a job file set them. With
    /// `explain`, prints the translated fio job file and returns none.
    fn resolve(
        &self,
        preset: Option<&str>,
        explain: bool,
        defaults: &[(&str, &str)],
    ) -> Result<Vec<WorkloadSpec>, UsageError> {
        match self.asked(preset, explain, defaults)? {
            Asked::Workloads(specs) => Ok(specs),
            Asked::Tree(_) => Err(UsageError(TREE_JOBS.into())),
        }
    }

    /// As `resolve`, and an fio job file of file-operation jobs as the
    /// tree run it translates to.
    fn asked(
        &self,
        preset: Option<&str>,
        explain: bool,
        defaults: &[(&str, &str)],
    ) -> Result<Asked, UsageError> {
        let resolved = resolve::resolve(&resolve::Request {
            positional: &self.targets,
            labelled: &self.labelled,
            streams: &self.streams,
            knobs: &self.knobs.given,
            preset,
            explain,
            defaults,
        })?;
        if let Some(explained) = resolved.explained {
            print!("{explained}");
            return Ok(Asked::Workloads(Vec::new()));
        }
        let notes = resolved.notes.clone();
        let asked = match resolved.tree {
            Some(tree) => Asked::Tree(tree),
            None => Asked::Workloads(as_run(resolved)?),
        };
        for n in &notes {
            eprintln!("note: {n}");
        }
        Ok(asked)
    }
}

/// The specs an fio job file's translation runs: as they are, or each made
/// the replay of the iolog it plays (`read_iolog`).
fn as_run(resolved: resolve::Resolved) -> Result<Vec<WorkloadSpec>, UsageError> {
    match &resolved.replay {
        Some(r) => resolved
            .specs
            .iter()
            .map(|s| crate::commands::replay::of_job(s, r.trace.clone(), r.speed))
            .collect(),
        None => Ok(resolved.specs),
    }
}

/// `fathom run`: the workloads the arguments ask for, planned, dry-run or
/// run.
fn run_command(args: &RunArgs, specs: Vec<WorkloadSpec>) -> anyhow::Result<i32> {
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

/// Parses the arguments, runs, prints, and returns the exit code.
pub fn main() -> i32 {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.first().is_some_and(|p| fio::called_as_fio(p)) {
        args.insert(1, "fio".into());
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return 0;
            }
            // The parser's whole message: the problem on the first line,
            // then what it knows (the missing names, a "did you mean",
            // the usage line).
            let rendered = e.render().to_string();
            let mut lines = rendered.trim_end().lines().peekable();
            let first = lines.next().unwrap_or("invalid arguments");
            if e.kind() == ErrorKind::MissingRequiredArgument {
                // Name what is missing on the first line.
                let mut missing = Vec::new();
                while let Some(name) = lines.next_if(|l| l.starts_with("  ")) {
                    missing.push(name.trim());
                }
                eprintln!("fathom: missing {}", missing.join(", "));
            } else {
                let said = first.trim_start_matches("error: ");
                eprintln!("fathom: {}", report::printable(said));
            }
            for line in lines {
                eprintln!("{}", report::printable(line));
            }
            return exit::USAGE;
        }
    };
    let result = match cli.command {
        None => presets::load("quick", &jobfile::Overrides::default())
            .map_err(anyhow::Error::from)
            .and_then(|specs| execute(&specs, &OutputArgs::default(), false, None, None)),
        Some(Command::Meta(args)) => tools::meta_command(&args),
        Some(Command::Tree(args)) => tree::tree_command(&args),
        Some(Command::Seqread(args)) => tools::seqread_command(&args),
        Some(Command::Certify(args)) => tools::certify_command(&args),
        Some(Command::Capacity(args)) => capacity::capacity_command(&args),
        Some(Command::Crashcheck(args)) => crashcheck::crashcheck_command(&args),
        Some(Command::Replay(args)) => replay::replay_command(&args),
        Some(Command::Pts(args)) => pts::pts_command(&args),
        Some(Command::Presets) => {
            print!("{}", presets::listing());
            Ok(0)
        }
        Some(Command::Run(args)) if args.mpi.mpi => mpi_run(&args),
        Some(Command::Run(args)) => match args.asked() {
            Ok(Asked::Tree(spec)) => tree::run_fio_tree(&spec, &args.output),
            Ok(Asked::Workloads(specs)) => run_command(&args, specs),
            Err(e) => Err(e.into()),
        },
        Some(Command::Fio { args }) => fio::fio_command(&args),
        Some(Command::Report(args)) => report_command(&args),
        Some(Command::Compare(args)) => compare_command(&args),
        Some(Command::Check(args)) => check::check_command(&args),
        Some(Command::History(args)) => history::history_command(&args),
        Some(Command::Merge(args)) => merge_command(&args),
        Some(Command::Completions { shell }) => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "fathom", &mut std::io::stdout());
            Ok(0)
        }
        Some(Command::Man { subcommand, dir }) => {
            man_command(subcommand.as_deref(), dir.as_deref())
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if let Some(usage) = e.downcast_ref::<UsageError>() {
                // A job file's problems come one per line, each its own.
                for line in report::printable(&usage.to_string()).lines() {
                    eprintln!("fathom: {line}");
                }
                exit::USAGE
            } else if e.is::<Interrupted>() {
                eprintln!("fathom: interrupted");
                exit::SIGINT
            } else {
                eprintln!("fathom: {}", report::printable(&format!("{e:#}")));
                exit::RUNTIME_ERROR
            }
        }
    }
}

/// `fathom man [SUBCOMMAND | --dir DIR]`: the pages, from the same
/// definitions as --help, each subcommand's with every flag and default.
fn man_command(subcommand: Option<&str>, dir: Option<&Path>) -> anyhow::Result<i32> {
    use clap::CommandFactory;
    let top = Cli::command();
    let page = |cmd: clap::Command| -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        Ok(out)
    };
    let sub_page = |sub: &clap::Command| {
        let name = format!("fathom-{}", sub.get_name());
        page(
            sub.clone()
                .name(name.clone())
                .bin_name(format!("fathom {}", sub.get_name())),
        )
        .map(|text| (name, text))
    };
    match (subcommand, dir) {
        (Some(name), _) => {
            let Some(sub) = top.find_subcommand(name) else {
                let names: Vec<&str> = top.get_subcommands().map(|c| c.get_name()).collect();
                return Err(UsageError(format!(
                    "man {name}: no such subcommand (one of {})",
                    names.join(", ")
                ))
                .into());
            };
            let (_, text) = sub_page(sub)?;
            std::io::Write::write_all(&mut std::io::stdout(), &text)?;
        }
        (None, Some(dir)) => {
            crate::gate::write::make_dirs(dir, "man --dir")?;
            if !dir.is_dir() {
                return Err(
                    UsageError(format!("man --dir {}: not a directory", dir.display())).into(),
                );
            }
            let pages = std::iter::once(Ok(("fathom".to_string(), page(top.clone())?)))
                .chain(top.get_subcommands().map(sub_page));
            for p in pages {
                let (name, text) = p?;
                crate::gate::write::replace(&dir.join(format!("{name}.1")), MAN_PAGE, &text)?;
            }
        }
        (None, None) => {
            std::io::Write::write_all(&mut std::io::stdout(), &page(top)?)?;
        }
    }
    Ok(0)
}

fn print_plan(specs: &[WorkloadSpec]) -> anyhow::Result<i32> {
    crate::run::check_plan(specs)?;
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

fn execute(
    specs: &[WorkloadSpec],
    output: &OutputArgs,
    resume: bool,
    start_at: Option<std::time::SystemTime>,
    record: Option<PathBuf>,
) -> anyhow::Result<i32> {
    crate::run::claim_targets(specs);
    let driver = Driver::start(output, specs.iter().any(|s| s.overwrite))?;
    let previous = match (&output.output, resume) {
        (Some(path), true) if path.exists() => {
            let text = crate::gate::read::text(path, crate::gate::read::RESUMED)?;
            Document::from_json(&text)
                .map_err(|e| UsageError(format!("--resume: {}: {e}", path.display())))?
                .workloads()
                .cloned()
                .collect()
        }
        _ => Vec::new(),
    };
    if resume {
        if let Some(conflict) = Session::resume_conflict(specs, &previous) {
            return Err(UsageError(format!(
                "--resume: {}: {conflict}",
                output.output.as_deref().unwrap_or(Path::new("")).display()
            ))
            .into());
        }
        let done = Session::already_done(specs, &previous);
        eprintln!(
            "fathom: --resume: {done} of {} already in the result file, {} to run",
            units::counted(specs.len() as u64, "run"),
            specs.len() - done
        );
    }
    if specs.len() > 1 {
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

fn report_command(args: &ReportArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        let inputs: Vec<&Path> = args.files.iter().map(PathBuf::as_path).collect();
        destination::check_not_input(path, &inputs, "the result file")?;
        destination::check(path, args.overwrite)?;
    }
    let report = load_report(&args.files)?;
    if report.is_empty() {
        return Err(UsageError("the result files hold no finished result".into()).into());
    }
    let format = format_for(args.format, args.output.as_deref());
    let rendered = report::exporter(format).render(&report)?;
    match &args.output {
        Some(path) => destination::write(path, &rendered)?,
        None => print!("{rendered}"),
    }
    Ok(0)
}

/// Reads result files; each is named by its label or else its stem, and
/// files of one name are merged.
fn load_report(paths: &[PathBuf]) -> anyhow::Result<Report> {
    let mut docs = Vec::with_capacity(paths.len());
    for path in paths {
        docs.push((stem(path), load_document(path)?));
    }
    Ok(Report::from_documents(docs).map_err(UsageError)?)
}

/// A result file (fathom's JSON, or fio's) as a document; what is wrong
/// with it is bad input, naming the file.
pub(crate) fn load_document(path: &Path) -> Result<Document, UsageError> {
    let text = read_result_file(path)?;
    Document::from_json(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())))
}

/// `fathom compare A B`: exit 2 when nothing in A has a counterpart in B.
fn compare_command(args: &CompareArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        destination::check_not_input(path, &[&args.a, &args.b], "the result file")?;
        destination::check(path, args.overwrite)?;
    }
    let a = load_report(std::slice::from_ref(&args.a))?;
    let b = load_report(std::slice::from_ref(&args.b))?;
    let layout = args.format.unwrap_or_else(|| {
        args.output
            .as_deref()
            .and_then(OutputFormat::of_path)
            .and_then(report::compare::Layout::of)
            .unwrap_or(report::compare::Layout::of(OutputFormat::Text).expect("text compares"))
    });
    let comparison = report::compare::compare(&a.systems[0], &b.systems[0], layout);
    if comparison.matched == 0 {
        return Err(UsageError(report::compare::nothing_in_common(
            &a.systems[0],
            &b.systems[0],
        ))
        .into());
    }
    match &args.output {
        Some(path) => destination::write(path, &comparison.text)?,
        None => print!("{}", report::printable(&comparison.text)),
    }
    Ok(0)
}

/// `fathom run --mpi`: this process is one rank; rank 0 writes the result.
#[cfg(feature = "mpi")]
fn mpi_run(args: &RunArgs) -> anyhow::Result<i32> {
    use crate::commands::ranks;
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
            o.listen = o.listen.map(|a| crate::report::live::port_plus(&a, rank));
            o.lines = o.lines.map(|p| crate::report::live::per_rank(&p, rank));
            Some(crate::report::live::Watch::start(&o).map_err(|e| e.0))
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
    let document = ranks::run(
        ranks,
        plan,
        shared,
        stop.clone(),
        args.output.label.clone(),
        board,
        &|said| eprintln!("fathom: {said}"),
    );
    mpi_finish(kept, document, &args.output, &stop)
}

/// How every rank of an MPI job ends, whatever it ran: rank 0 emits the
/// cluster document (or says the error every rank shares); the other ranks
/// wait until it has, then leave; a job with a lost rank, or one being
/// stopped, ends without MPI's finalise (which would wait for the lost).
#[cfg(feature = "mpi")]
pub(crate) fn mpi_finish(
    kept: std::rc::Rc<crate::commands::ranks::Ranks>,
    document: anyhow::Result<Option<crate::result::Document>>,
    output: &OutputArgs,
    stop: &StopFlag,
) -> anyhow::Result<i32> {
    let root = kept.rank() == 0;
    let outcome = match document {
        Ok(Some(document)) => emit(&document, output).map(|()| {
            history::remember(&document, &output.history);
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
fn mpi_run(_: &RunArgs) -> anyhow::Result<i32> {
    Err(UsageError(
        "--mpi: this fathom was built without MPI (cargo build --release --features mpi)".into(),
    )
    .into())
}

/// `fathom merge A B ...`: one cluster document from runs of several hosts.
fn merge_command(args: &MergeArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        let inputs: Vec<&Path> = args.files.iter().map(PathBuf::as_path).collect();
        destination::check_not_input(path, &inputs, "the result file")?;
        destination::check(path, args.overwrite)?;
    }
    let mut documents: Vec<Document> = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let text = read_result_file(path)?;
        let doc = Document::from_json(&text)
            .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
        // The same run given twice would count one host's I/O twice.
        if let Some(j) = documents.iter().position(|d| {
            d.host == doc.host && d.started_at == doc.started_at && d.results == doc.results
        }) {
            return Err(UsageError(format!(
                "{} and {} are the same run (host {}, started {}): merge joins the runs of different hosts",
                args.files[j].display(),
                path.display(),
                doc.host.hostname,
                doc.started_at
            ))
            .into());
        }
        documents.push(doc);
    }
    let merged = crate::result::cluster::concurrent_documents(
        documents,
        crate::result::cluster::Launcher::Merge,
    )
    .map_err(UsageError)?;
    if let Some(c) = &merged.cluster
        && c.start_spread_s > args.tolerance
    {
        eprintln!(
            "fathom: warning: the hosts started measuring {:.3} s apart, more than --tolerance {}: their seconds do not line up, and totals per second mix different moments",
            c.start_spread_s,
            units::format_duration(args.tolerance)
        );
    }
    let text = json(&merged)?;
    match &args.output {
        Some(path) => destination::write(path, &text)?,
        None => print!("{text}"),
    }
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
    for log in report::fio_logs::write(document, Path::new("."))? {
        eprintln!("fathom: wrote fio log {}", log.display());
    }
    let report = Report::single(document.clone(), &output_label(output));
    let rendered = report::exporter(output.format()).render(&report)?;
    match &output.output {
        Some(path) if destination::is_stdout(path) => print!("{rendered}"),
        Some(path) => {
            destination::write(path, &rendered)?;
            print!("{}", report::exporter(OutputFormat::Text).render(&report)?);
        }
        None => print!("{rendered}"),
    }
    Ok(())
}

/// Refuses fio's JSON for results fio's format has no place for, before
/// anything runs.
pub(crate) fn no_fio_form(output: &OutputArgs, what: &str) -> Result<(), UsageError> {
    if matches!(
        output.format(),
        OutputFormat::FioJson
            | OutputFormat::FioJsonPlus
            | OutputFormat::FioNormal
            | OutputFormat::FioTerse
    ) {
        return Err(UsageError(format!(
            "--output-format fio-json: fio's JSON has no place for {what} (use json, or another format)"
        )));
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

/// A man page of fathom's, as the write gate knows it: replacing only
/// another of fathom's pages.
const MAN_PAGE: crate::gate::write::Output = crate::gate::write::Output {
    flag: "man --dir",
    what: "a man page of fathom's",
    streams: false,
    ours: |path| {
        crate::gate::read::head(path, 512)
            .is_some_and(|h| String::from_utf8_lossy(&h).contains(".TH fathom"))
    },
    overwrite_hint: None,
};

/// The document as JSON, for writing after each finished run.
pub(crate) fn json(document: &Document) -> anyhow::Result<String> {
    report::json::document_text(document)
}

/// Reads a result file given on the command line; the size cap keeps a
/// wrong path (a disk image, say) from being read into memory.
pub fn read_result_file(path: &Path) -> Result<String, UsageError> {
    crate::gate::read::text(path, crate::gate::read::RESULT)
}
