//! The command line: flags named as fio users expect, resolved into workload
//! specs. Everything else lives in the library.

pub mod units;

use crate::error::{UsageError, exit};
use crate::plan;
use crate::report::{self, OutputFormat};
use crate::run::Session;
use crate::spec::{Distribution, EngineKind, RwMode, VerifyMode, WorkloadSpec};
use crate::stop::{Interrupted, StopFlag};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "fathom",
    version,
    about = "Storage I/O benchmark: IOPS, bandwidth and exact latency percentiles of files, file systems and block devices",
    long_about = "Storage I/O benchmark: IOPS, bandwidth and exact latency percentiles of files, file systems and block devices.\n\nWith no arguments, runs a quick benchmark (4k random read at depth 32 and 1, 1M sequential read; about 20 s) on a temporary file in the current directory."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one workload on one or more targets.
    Run(Box<RunArgs>),
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Files, directories (fathom creates its own file there) or block
    /// devices. Default: a temporary file in the current directory.
    targets: Vec<String>,

    /// Access pattern: read, write, randread, randwrite, readwrite, randrw.
    #[arg(long, default_value = "randread", value_parser = parse_rw)]
    rw: RwMode,

    /// Percentage of reads in readwrite/randrw.
    #[arg(long = "rwmix-read", value_name = "PCT", default_value_t = 50, value_parser = clap::value_parser!(u8).range(0..=100))]
    rwmix_read: u8,

    /// Block size, 512 to 16m (k/m suffixes).
    #[arg(long, default_value = "4k", value_parser = parse_size)]
    bs: u64,

    /// I/Os in flight per worker.
    #[arg(long, default_value_t = 1)]
    iodepth: u32,

    /// Worker threads per target.
    #[arg(long, default_value_t = 1)]
    numjobs: u32,

    /// Bytes of each target to use (default: the whole device or file; 1g for
    /// a new file).
    #[arg(long, value_parser = parse_size)]
    size: Option<u64>,

    /// Where the used region starts in each target.
    #[arg(long, default_value = "0", value_parser = parse_size)]
    offset: u64,

    /// Run for this long (30s, 5m, 1h); without it, one pass over --size.
    #[arg(long, value_parser = parse_seconds)]
    runtime: Option<f64>,

    /// Warm-up before measuring, excluded from the results.
    #[arg(long, value_parser = parse_seconds, default_value = "0")]
    ramp: f64,

    /// O_DIRECT: bypass the page cache (the default).
    #[arg(long, overrides_with = "buffered")]
    direct: bool,

    /// Go through the page cache instead of O_DIRECT.
    #[arg(long, overrides_with = "direct")]
    buffered: bool,

    /// I/O engine: io_uring, sync (pread/pwrite) or null (no I/O: fathom's own
    /// overhead).
    #[arg(long, default_value = "io_uring", value_parser = parse_engine)]
    engine: EngineKind,

    /// fsync after every N writes of each worker (0: never).
    #[arg(long, value_name = "N", default_value_t = 0)]
    fsync: u32,

    /// Spread of random offsets: uniform or zipf:THETA.
    #[arg(long = "random-distribution", default_value = "uniform", value_parser = parse_distribution)]
    random_distribution: Distribution,

    /// Seed for offsets and data, so runs repeat exactly.
    #[arg(long, default_value_t = plan::DEFAULT_SEED)]
    seed: u64,

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

    /// Name of the workload in results.
    #[arg(long, default_value = "run")]
    name: String,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct OutputArgs {
    /// text or json.
    #[arg(long = "output-format", default_value = "text", value_parser = parse_format)]
    output_format: OutputFormat,

    /// Write the result there instead of standard output (the text table is
    /// still printed).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

impl Default for OutputArgs {
    fn default() -> Self {
        OutputArgs {
            output_format: OutputFormat::Text,
            output: None,
        }
    }
}

fn parse_rw(s: &str) -> Result<RwMode, String> {
    s.parse()
}
fn parse_engine(s: &str) -> Result<EngineKind, String> {
    s.parse()
}
fn parse_distribution(s: &str) -> Result<Distribution, String> {
    s.parse()
}
fn parse_format(s: &str) -> Result<OutputFormat, String> {
    s.parse()
}
fn parse_size(s: &str) -> Result<u64, String> {
    units::parse_size(s)
}
fn parse_seconds(s: &str) -> Result<f64, String> {
    units::parse_duration(s).map(|d| d.as_secs_f64())
}

impl RunArgs {
    fn into_spec(self) -> (WorkloadSpec, OutputArgs) {
        let targets = if self.targets.is_empty() {
            vec![".".to_string()]
        } else {
            self.targets
        };
        let spec = WorkloadSpec {
            name: self.name,
            targets,
            rw: self.rw,
            rwmix_read: self.rw.read_percent(self.rwmix_read),
            bs: self.bs,
            iodepth: self.iodepth,
            numjobs: self.numjobs,
            size: self.size,
            offset: self.offset,
            runtime_s: self.runtime,
            ramp_s: self.ramp,
            direct: !self.buffered,
            engine: self.engine,
            fsync: self.fsync,
            random_distribution: self.random_distribution,
            seed: self.seed,
            keep: self.keep,
            overwrite: self.overwrite,
            destroy_data: self.destroy_data,
            verify: if self.verify_interleaved {
                VerifyMode::Interleaved
            } else if self.verify {
                VerifyMode::AfterWrite
            } else {
                VerifyMode::Off
            },
            continue_on_error: self.continue_on_error,
        };
        (spec, self.output)
    }
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
    let (specs, output) = match cli.command {
        None => (plan::quick(".".into()), OutputArgs::default()),
        Some(Command::Run(args)) => {
            let (spec, output) = args.into_spec();
            (vec![spec], output)
        }
    };
    match execute(&specs, &output) {
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

fn execute(specs: &[WorkloadSpec], output: &OutputArgs) -> anyhow::Result<i32> {
    if let Some(path) = &output.output {
        check_output_path(path)?;
    }
    let stop = StopFlag::on_signals()?;
    let document = Session::new(stop.clone()).run(specs)?;
    let rendered = report::exporter(output.output_format).render(&document)?;
    match &output.output {
        Some(path) => {
            write_atomically(path, &rendered)?;
            print!(
                "{}",
                report::exporter(OutputFormat::Text).render(&document)?
            );
        }
        None => print!("{rendered}"),
    }
    let problems = document.problems();
    for problem in &problems {
        eprintln!("fathom: {problem}");
    }
    Ok(match stop.signal() {
        Some(signal_hook::consts::SIGTERM) => exit::SIGTERM,
        Some(_) => exit::SIGINT,
        None if document.failed() => exit::RUNTIME_ERROR,
        None => 0,
    })
}

fn check_output_path(path: &Path) -> Result<(), UsageError> {
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
fn write_atomically(path: &Path, contents: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, contents)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
