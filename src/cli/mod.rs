//! The command line: flags named as fio users expect, resolved into workload
//! specs. Everything else lives in the library.

mod capacity;
mod check;
mod crashcheck;
mod documents;
mod driver;
mod fio;
mod help;
mod history;
mod k8s;
mod knob_args;
mod mpi;
mod object;
mod output;
mod pts;
mod replay;
mod run;
pub mod tools;
mod train;
mod tree;

use driver::Driver;
use knob_args::KnobArgs;

pub(crate) use documents::*;
pub(crate) use mpi::*;
pub use output::*;
pub(crate) use run::*;

use fathom::input::{jobfile, presets, resolve};
use fathom::spec::knobs;
use fathom::util::units;

use clap::{Args, Parser, Subcommand};
use fathom::input::plan;
use fathom::report::{self, OutputFormat, Report, destination};
use fathom::result::Document;
use fathom::run::Session;
use fathom::spec::WorkloadSpec;
use fathom::util::error::{UsageError, exit};
use fathom::util::stop::{Interrupted, StopFlag};
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
#[command(next_help_heading = "Many hosts")]
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

/// What `fathom run -h` ends with: the runs people start from.
const RUN_EXAMPLES: &str = "Examples:
  fathom run /var/lib/db --rw randread --bs 8k --iodepth 32 --runtime 30s
  fathom run --preset database /var/lib/db
  fathom run /mnt/data --rw randrw --bs 4k,64k --iodepth 1,32 -o sweep.html
  fathom run /dev/nvme0n1 --rw read --bs 1m --direct --runtime 60s
  fathom run job.fio --dry-run";

/// The exit codes, as `--help` and the man page give them.
const EXIT_CODES: &str = "Exit status:\n  0    the run (or report) finished, and every check it made passed\n  1    a certification or crashcheck FAIL, or a run ended by I/O errors or a failure\n  2    bad input (flags, job files, targets): nothing was run or written\n  3    check cannot judge (what changed is within a busy host's reach, or nothing to compare): neither a pass nor a regression\n  130  interrupted by Ctrl-C (143 by SIGTERM): what was measured is reported, what fathom created removed";

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a workload, a sweep (comma lists) or a job file on targets.
    #[command(after_help = RUN_EXAMPLES)]
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
    /// The storage side of AI training, as MLPerf Storage measures it:
    /// unet3d, resnet50 and cosmoflow datasets read through simulated
    /// accelerators (AU against the workload's threshold, exact tails of
    /// each batch's wait and each sample's read, the most accelerators
    /// that pass), and Llama 3 checkpoints written and read back.
    Train(train::TrainArgs),
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
    /// A StorageClass (or any volume) benchmarked from many pods at once:
    /// prints an Indexed Job of N pods, each running the fathom command
    /// after `--` from one agreed start on a claim of its own or one shared
    /// claim, for `kubectl apply -f -`; `fathom k8s collect` merges what
    /// the pods wrote, naming any index lost.
    K8s(Box<k8s::K8sArgs>),
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

/// fathom's command line, as parsing, --help, completions and the man
/// pages all see it: the derived one, with the knob flags of commands that
/// take one workload saying nothing of sweeps.
fn command() -> clap::Command {
    use clap::CommandFactory;
    help::short_and_long(Cli::command().mut_subcommand("capacity", knob_args::one_workload))
}

/// An unknown `--X` that is one of fio's job options: what fathom's flag
/// for it is (from fio's option table), and where fio's own command line
/// is taken as it is.
fn fio_habit(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let name = given.trim_start_matches('-').split('=').next()?;
    let option = fathom::input::fio::table::find(name)?;
    Some(format!(
        "{given} is fio's option (in fathom: {}); `fathom fio` takes fio's command line as it is",
        option.doc
    ))
}

/// A first word that is no subcommand but a path (`fathom /data`): the
/// run the user most likely meant.
fn path_habit(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let looks_like_a_path =
        given.contains('/') || given.starts_with('.') || Path::new(given).exists();
    looks_like_a_path.then(|| {
        format!(
            "'{given}' is not a subcommand; to benchmark it: `fathom run {given}` (or the quick preset there: `fathom run --preset quick {given}`)"
        )
    })
}

/// Parses the arguments, runs, prints, and returns the exit code.
pub fn main() -> i32 {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.first().is_some_and(|p| fio::called_as_fio(p)) {
        args.insert(1, "fio".into());
    }
    run_args(args)
}

/// Whether `argv` (the program's name first) is a command fathom would
/// run: it parses, and a run's workload resolves into specs; the first
/// line of what is wrong, when not.
pub(crate) fn refusal_of(argv: &[String]) -> Option<String> {
    let cli = match command()
        .try_get_matches_from(argv)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            let said = e.render().to_string();
            let first = said.lines().next().unwrap_or("invalid arguments");
            return Some(first.trim_start_matches("error: ").to_string());
        }
    };
    match cli.command {
        Some(Command::Run(args)) => args.asked().err().map(|e| e.to_string()),
        _ => None,
    }
}

/// `args` (the program's name first) parsed, run and printed: the exit code.
pub(crate) fn run_args(args: Vec<std::ffi::OsString>) -> i32 {
    let cli = match command()
        .try_get_matches_from(args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
    {
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
            } else if let Some(said) = path_habit(&e) {
                fathom::util::terminal::say(&format!("fathom: {}", report::printable(&said)));
                while lines.next_if(|l| !l.starts_with("Usage:")).is_some() {}
            } else if let Some(said) = fio_habit(&e) {
                // fio's option on fathom's command line: what fathom calls
                // it, rather than clap's "-- --time_based" tip.
                fathom::util::terminal::say(&format!("fathom: {}", report::printable(&said)));
                while lines.next_if(|l| !l.starts_with("Usage:")).is_some() {}
            } else {
                let said = first.trim_start_matches("error: ");
                fathom::util::terminal::say(&format!("fathom: {}", report::printable(said)));
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
        Some(Command::Train(args)) => train::train_command(&args),
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
        #[cfg(feature = "mpi")]
        Some(Command::Run(args))
            if args.mpi.mpi
                && args
                    .workload
                    .targets
                    .iter()
                    .any(|t| fathom::spec::object::is_object_target(t)) =>
        {
            match args.asked() {
                Ok(Asked::Objects(specs)) => object::mpi_objects(&args, specs),
                Ok(_) => mpi_run(&args),
                Err(e) => Err(e.into()),
            }
        }
        Some(Command::Run(args)) if args.mpi.mpi => mpi_run(&args),
        Some(Command::Run(args)) => match args.asked() {
            Ok(Asked::Tree(spec)) => tree::run_fio_tree(&spec, &args.output, args.dry_run),
            Ok(Asked::Objects(specs)) => object::object_command(&args, &specs),
            Ok(Asked::Workloads(specs)) => run_command(&args, specs),
            Err(e) => Err(e.into()),
        },
        Some(Command::Fio { args }) => fio::fio_command(&args),
        Some(Command::K8s(args)) => k8s::k8s_command(&args),
        Some(Command::Report(args)) => report_command(&args),
        Some(Command::Compare(args)) => compare_command(&args),
        Some(Command::Check(args)) => check::check_command(&args),
        Some(Command::History(args)) => history::history_command(&args),
        Some(Command::Merge(args)) => merge_command(&args),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(shell, &mut command(), "fathom", &mut std::io::stdout());
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
                    fathom::util::terminal::say(&format!("fathom: {line}"));
                }
                exit::USAGE
            } else if let Some(why) = e.downcast_ref::<fathom::util::error::CannotJudge>() {
                fathom::util::terminal::say(&format!(
                    "fathom: {}",
                    report::printable(&why.to_string())
                ));
                exit::CANNOT_JUDGE
            } else if e.is::<Interrupted>() {
                eprintln!("fathom: interrupted");
                exit::SIGINT
            } else {
                fathom::util::terminal::say(&format!(
                    "fathom: {}",
                    report::printable(&format!("{e:#}"))
                ));
                exit::RUNTIME_ERROR
            }
        }
    }
}

/// `fathom man [SUBCOMMAND | --dir DIR]`: the pages, from the same
/// definitions as --help, each subcommand's with every flag and default.
fn man_command(subcommand: Option<&str>, dir: Option<&Path>) -> anyhow::Result<i32> {
    let top = command();
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
            fathom::gate::write::make_dirs(dir, "man --dir")?;
            if !dir.is_dir() {
                return Err(
                    UsageError(format!("man --dir {}: not a directory", dir.display())).into(),
                );
            }
            let pages = std::iter::once(Ok(("fathom".to_string(), page(top.clone())?)))
                .chain(top.get_subcommands().map(sub_page));
            for p in pages {
                let (name, text) = p?;
                fathom::gate::write::replace(&dir.join(format!("{name}.1")), MAN_PAGE, &text)?;
            }
        }
        (None, None) => {
            std::io::Write::write_all(&mut std::io::stdout(), &page(top)?)?;
        }
    }
    Ok(0)
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

/// A man page of fathom's, as the write gate knows it: replacing only
/// another of fathom's pages.
const MAN_PAGE: fathom::gate::write::Output = fathom::gate::write::Output {
    flag: "man --dir",
    what: "a man page of fathom's",
    streams: false,
    ours: |path| {
        fathom::gate::read::head(path, 512)
            .is_some_and(|h| String::from_utf8_lossy(&h).contains(".TH fathom"))
    },
    overwrite_hint: None,
};
