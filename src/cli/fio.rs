//! `fathom fio ARGS...`, and fathom called through a link named `fio`:
//! fio's whole command line, run as fio runs it, its outputs written as
//! fio writes them, so tools that run `fio` run fathom.

use super::{OutputArgs, driver::Driver};
use fathom::input::fio::cmdline::{self, FioAction, FioOutput};
use fathom::input::resolve;
use fathom::report::{OutputFormat, Report, destination, exporter};
use fathom::util::error::UsageError;

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
  --parse-only         check the jobs, run nothing
  --readonly           refuse jobs that write
  --version, --help

fathom's own (fio's parser claims neither):
  --fathom-overwrite   let the jobs write files that exist and that fathom
                       did not create (or set FATHOM_OVERWRITE=1)
  --no-history         keep the run out of fathom's history (or set
                       FATHOM_NO_HISTORY=1); the history says nothing on
                       stderr either way, as fio prints nothing there

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
        say_notes(&resolved.notes);
        if command.action == FioAction::ParseOnly {
            return Ok(0);
        }
        let phases = fathom::commands::tree::check(&spec, false)?;
        let output = fio_output(&command)?;
        let driver = Driver::start(&output, false)?;
        let document = super::tree::measure(&spec, &phases, false, &driver)?;
        return emit_as_fio(&command, &document, &driver);
    }
    let notes = resolved.notes.clone();
    let specs = super::as_run(resolved)?;
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
    let document = driver.session().run(&specs, &mut |_| Ok(()))?;
    emit_as_fio(&command, &document, &driver)
}

/// A refusal as fio's command line can answer it: `--overwrite` is a job
/// option of fio's, with another meaning.
fn in_fios_words(e: UsageError) -> UsageError {
    UsageError(e.0.replace(
        "pass --overwrite to write anyway",
        "set FATHOM_OVERWRITE=1 or pass --fathom-overwrite to write anyway",
    ))
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
        fathom::gate::write::check(
            path,
            destination::FIO_OUTPUT,
            destination::overwrite_from_env(),
        )?;
    }
    Ok(OutputArgs {
        output_format: Some(OutputFormat::Json),
        output: None,
        label: Some("fio".into()),
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
) -> anyhow::Result<i32> {
    // The logs the jobs ask for, where fio writes them (said nowhere, as
    // fio says nothing of them).
    fathom::report::fio_logs::write(document, std::path::Path::new("."))?;
    let report = Report::single(document.clone(), "fio");
    let mut rendered = String::new();
    for format in &command.outputs {
        let format = match format {
            FioOutput::Normal => OutputFormat::FioNormal,
            FioOutput::Json => OutputFormat::FioJson,
            FioOutput::JsonPlus => OutputFormat::FioJsonPlus,
            FioOutput::Terse => OutputFormat::FioTerse,
        };
        rendered.push_str(&exporter(format).render(&report)?);
    }
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
