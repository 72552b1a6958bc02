//! `fathom fio ARGS...`, and fathom called through a link named `fio`:
//! fio's whole command line, run as fio runs it, its outputs written as
//! fio writes them, so tools that run `fio` run fathom.

use super::{OutputArgs, driver::Driver};
use fathom::commands::benchmark::Benchmark;
use fathom::input::fio::cmdline::{self, FioAction, FioOutput};
use fathom::input::fio::help;
use fathom::input::resolve;
use fathom::measure::live::LiveBoard;
use fathom::report::{OutputFormat, Report, destination, exporter};
use fathom::run::Session;
use fathom::spec::WorkloadSpec;
use fathom::util::error::UsageError;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fathom::report::fio_normal::FIO_RELEASE;

const HELP: &str = "\
fathom fio: fio's command line, job files and outputs, run by fathom

Usage: fathom fio [options] [job options] <job file(s)>
       fio [options] [job options] <job file(s)>   (through a link named fio)

  --name=NAME          start a job; the job options after it are its own
  --OPTION=VALUE       a job option (as in a job file); before the first
                       --name, a default for every job
  --output=FILE        write the output there
  --output-format=LIST normal (default), json, json+, terse (comma list);
                       --minimal is terse
  --section=NAME       run only the named job(s)
  --status-interval=T  also print the report of the figures so far (from
                       each job's start) every T while the jobs run
  --parse-only         check the jobs, run nothing
  --showcmd JOB        print a job file as fio's command line
  --cmdhelp[=OPT]      what fathom does with fio's options (all, or OPT)
  --enghelp[=ENGINE[,OPT]]
                       the engines fathom runs, or an engine's options
  --readonly           refuse jobs that write
  --version, --help

fathom's own (fio's parser claims none of them):
  --fathom-overwrite   let --output replace a file fathom did not write (or
                       set FATHOM_OVERWRITE=1); the jobs write the files
                       they name, as fio does, and keep the files they lay
                       out unless unlink=1
  --no-history         keep the run out of fathom's history (or set
                       FATHOM_NO_HISTORY=1); the history says nothing on
                       stderr either way, as fio prints nothing there
  --i-know-this-destroys-data
                       let the jobs write block devices (fathom refuses
                       one without it, signature or none; or set
                       FATHOM_I_KNOW_THIS_DESTROYS_DATA=1, or
                       allow_mounted_write=1 in the job)
  --even-if-mounted    with the above, let them write one in use (or
                       allow_mounted_write=1 in the job)

What fathom does differently for an option is said on stderr as a note; an
option it does not carry out is refused with its reason (docs/fio-options.md).
";

/// Whether the program was called through a link named `fio`.
pub fn called_as_fio(program: &std::ffi::OsStr) -> bool {
    std::path::Path::new(program)
        .file_name()
        .is_some_and(|name| name == "fio")
}

/// Runs fio's command line `args`; returns the exit code.
pub fn fio_command(args: &[String]) -> anyhow::Result<i32> {
    let mut command = cmdline::parse(args)?;
    command.overwrite |= destination::overwrite_from_env();
    command.permission.destroy_data |= std::env::var("FATHOM_I_KNOW_THIS_DESTROYS_DATA")
        .is_ok_and(|v| matches!(v.as_str(), "1" | "yes" | "true"));
    command.no_history |= std::env::var("FATHOM_NO_HISTORY")
        .is_ok_and(|v| matches!(v.as_str(), "1" | "yes" | "true"));
    match command.action {
        FioAction::Help => {
            print!("{HELP}");
            return Ok(0);
        }
        FioAction::Version => {
            println!("{FIO_RELEASE} (fathom {})", env!("CARGO_PKG_VERSION"));
            return Ok(0);
        }
        FioAction::ShowCmd => {
            print!("{}", command.shown);
            return Ok(0);
        }
        FioAction::CmdHelp | FioAction::EngHelp => {
            let topic = command.help_topic.as_deref();
            let answer = match command.action {
                FioAction::CmdHelp => help::cmdhelp(topic),
                _ => help::enghelp(topic),
            };
            print!("{}", answer.text);
            return Ok(answer.code);
        }
        FioAction::Run | FioAction::ParseOnly => {}
    }
    let resolved = resolve::from_fio_command(&mut command)?;
    if let Some(spec) = resolved.tree.clone() {
        if command.readonly {
            // Every file engine's job makes (and removes) files or
            // directories first.
            return Err(UsageError(format!(
                "--readonly: the jobs create and remove {} (a file-operation engine)",
                if spec.shape.depth == 0 {
                    "files"
                } else {
                    "directories"
                }
            ))
            .into());
        }
        let mut notes = resolved.notes.clone();
        if command.status_interval.is_some() {
            notes.push(
                "--status-interval: file-operation jobs are reported once, at the end".into(),
            );
        }
        say_notes(&notes);
        if command.action == FioAction::ParseOnly {
            return Ok(0);
        }
        let bench = fathom::commands::benchmark::TreeBench { overwrite: false };
        let checked = bench.check(&spec)?;
        let output = fio_output(&command)?;
        let driver = Driver::start(&output, false)?;
        let document = driver.measure(&bench, vec![checked])?;
        return emit_as_fio(&command, &document, &driver, &StatusDumps::default());
    }
    let notes = resolved.notes.clone();
    let mut specs = super::as_run(resolved)?;
    if command.readonly {
        // fio refuses to extend a file under --readonly as well.
        for spec in specs.iter_mut() {
            spec.overwrite = false;
            spec.streams.iter_mut().for_each(|s| s.overwrite = false);
        }
    }
    if specs.iter().any(|s| {
        s.targets
            .iter()
            .any(|t| fathom::spec::object::is_object_target(t))
    }) {
        return Err(UsageError(
            "ioengine=http: an object-store run's results have no place in fio's output; run the job file with `fathom run JOB.fio`".into(),
        )
        .into());
    }
    if command.readonly
        && let Some(writer) = specs
            .iter()
            .flat_map(|s| std::iter::once(s).chain(&s.streams))
            .find(|s| s.modifies_target())
    {
        return Err(UsageError(format!(
            "--readonly: job {} writes to its file (rw={}, ioengine={})",
            writer.name, writer.rw, writer.engine
        ))
        .into());
    }
    say_notes(&notes);
    if command.action == FioAction::ParseOnly {
        return Ok(0);
    }
    fathom::run::check_plan(&specs).map_err(in_fios_words)?;
    fathom::run::claim_targets(&specs);
    let output = fio_output(&command)?;
    let driver = Driver::start(&output, specs.iter().any(|s| s.overwrite))?;
    let dumps = Rc::new(RefCell::new(StatusDumps::default()));
    let session = match command.status_interval {
        Some(every) => with_status(driver.session(), every, &specs, &command, dumps.clone()),
        None => driver.session(),
    };
    let document = session.run(&specs, &mut |_| Ok(()))?;
    let dumps = dumps.take();
    emit_as_fio(&command, &document, &driver, &dumps)
}

/// What `--status-interval` reported before the end.
#[derive(Default)]
struct StatusDumps {
    /// Any report was made (fio's starting lines went with the first).
    made: bool,
    /// The reports kept for `--output`'s file.
    kept: String,
}

/// fio's `--status-interval`: every `every` while the jobs run, the report
/// of what they did so far (from their start), in the command's output
/// forms: on stdout as it comes, or kept in `dumps` for `--output`, whose
/// file is written once at the end (before the final report, as fio's
/// holds them).
fn with_status(
    session: Session,
    every: Duration,
    specs: &[WorkloadSpec],
    command: &cmdline::FioCommand,
    dumps: Rc<RefCell<StatusDumps>>,
) -> Session {
    let board = Arc::new(LiveBoard::new());
    let base = session.document().clone();
    let specs = specs.to_vec();
    let outputs = command.outputs.clone();
    let to_stdout = command.output.is_none();
    let last: Cell<Option<Instant>> = Cell::new(None);
    let watched = board.clone();
    let dump = move || {
        let now = Instant::now();
        // The first second just ended: the clock starts a second ago.
        let since = last.get().unwrap_or_else(|| now - Duration::from_secs(1));
        last.set(Some(since));
        // Seconds end a little early or late; a tenth of one is the same.
        if now.duration_since(since) + Duration::from_millis(100) < every {
            return;
        }
        last.set(Some(now));
        let so_far = fathom::run::status::so_far(&specs, &watched.snapshot(), &base);
        let mut dumps = dumps.borrow_mut();
        let Ok(rendered) = render_as_fio(&outputs, &so_far, !dumps.made) else {
            return;
        };
        dumps.made = true;
        if to_stdout {
            print!("{rendered}");
            let _ = std::io::Write::flush(&mut std::io::stdout());
        } else {
            dumps.kept.push_str(&rendered);
        }
    };
    session
        .watched(Some(board))
        .after_each_second(Some(Box::new(dump)))
}

/// A refusal as fio's command line can answer it: `--overwrite` is a job
/// option of fio's, with another meaning.
fn in_fios_words(e: UsageError) -> UsageError {
    let words = [
        (
            "pass --overwrite to write anyway",
            "set FATHOM_OVERWRITE=1 or pass --fathom-overwrite to write anyway",
        ),
        // Only --readonly keeps a job from growing the file it names.
        (
            "or pass --overwrite to let it grow the file",
            "as --readonly keeps the file as it is",
        ),
        (
            "pass --i-know-this-destroys-data --even-if-mounted to write anyway",
            "set allow_mounted_write=1 in the job to write anyway",
        ),
        (
            "or pass --even-if-mounted as well",
            "or set allow_mounted_write=1 in the job",
        ),
        (
            "pass --i-know-this-destroys-data to write anyway",
            "pass --i-know-this-destroys-data, set FATHOM_I_KNOW_THIS_DESTROYS_DATA=1 (for a tool that runs fio) or allow_mounted_write=1 in the job to write anyway",
        ),
    ];
    UsageError(
        words
            .iter()
            .fold(e.0, |message, (ours, fios)| message.replace(ours, fios)),
    )
}

/// `document` in each of fio's output forms in `outputs`, one after the
/// other.
fn render_as_fio(
    outputs: &[FioOutput],
    document: &fathom::result::Document,
    header: bool,
) -> anyhow::Result<String> {
    let report = Report::single(document.clone(), "fio");
    let mut rendered = String::new();
    for format in outputs {
        if *format == FioOutput::Normal && !header {
            // The lines fio prints as its jobs start, it prints once.
            let fio = fathom::report::fio_json::document(&report, false)?;
            rendered.push_str(&fathom::report::fio_normal::body(&fio));
            continue;
        }
        let format = match format {
            FioOutput::Normal => OutputFormat::FioNormal,
            FioOutput::Json => OutputFormat::FioJson,
            FioOutput::JsonPlus => OutputFormat::FioJsonPlus,
            FioOutput::Terse => OutputFormat::FioTerse,
        };
        rendered.push_str(&exporter(format).render(&report)?);
    }
    Ok(rendered)
}

/// Tools that run fio take anything on its stderr for an error: the notes
/// are said to a person at a terminal (and by `fathom run JOB.fio
/// --explain`), not to a script.
fn say_notes(notes: &[String]) {
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        for n in notes {
            eprintln!("note: {n}");
        }
    }
}

/// What a run of fio's command line writes through: fio's JSON, its
/// `--output` checked first (fio replaces it each run, as tools that call
/// it again with the same name expect).
fn fio_output(command: &cmdline::FioCommand) -> anyhow::Result<OutputArgs> {
    if let Some(path) = &command.output {
        fathom::gate::write::check(path, destination::FIO_OUTPUT, command.overwrite)?;
    }
    Ok(OutputArgs {
        output_format: Some(OutputFormat::Json),
        output: None,
        label: Some("fio".into()),
        view: Default::default(),
        watch: Default::default(),
        history: Default::default(),
    })
}

/// Writes `document` in each of fio's output forms the command asked for,
/// says its problems, and returns the exit code.
fn emit_as_fio(
    command: &cmdline::FioCommand,
    document: &fathom::result::Document,
    driver: &Driver,
    dumps: &StatusDumps,
) -> anyhow::Result<i32> {
    // The logs the jobs ask for, where fio writes them (said nowhere, as
    // fio says nothing of them).
    fathom::report::fio_logs::write(document, std::path::Path::new("."))?;
    let rendered = format!(
        "{}{}",
        dumps.kept,
        render_as_fio(&command.outputs, document, !dumps.made)?
    );
    match &command.output {
        Some(path) => {
            fathom::gate::write::replace(path, destination::FIO_OUTPUT, rendered.as_bytes())?
        }
        None => print!("{rendered}"),
    }
    let history = super::history::HistoryArgs {
        no_history: command.no_history,
        ..Default::default()
    };
    // Kept in the history alone: tools that run fio take a line on stderr
    // for a failure.
    let _ = super::history::remember(document, &history);
    for problem in document.problems() {
        eprintln!("fathom: {problem}");
    }
    Ok(driver.exit(document.failed()))
}
