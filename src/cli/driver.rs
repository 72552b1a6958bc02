//! The sequence every measuring command follows, in one place: `--output`
//! checked before anything runs, signals caught, a session labelled as
//! the output says, the document written as it grows (JSON to a file) and
//! emitted at the end, its problems said, and the exit code chosen.

use super::{OutputArgs, emit, exit_code, json};
use fathom::commands::benchmark::{self, Benchmark, Context};
use fathom::report::destination;
use fathom::result::Document;
use fathom::run::Session;
use fathom::util::error::UsageError;
use fathom::util::stop::{Interrupted, StopFlag};

pub(crate) struct Driver<'a> {
    pub output: &'a OutputArgs,
    pub stop: StopFlag,
    /// Those watching the run (`--metrics-listen`, `--live`,
    /// `--metrics-push`); the last figures go out when the driver is
    /// dropped.
    watch: Option<fathom::report::live::Watch>,
}

impl<'a> Driver<'a> {
    /// Checks that `--output` can be written (`overwrite`: a file that is
    /// not a result may be replaced), then catches SIGINT and SIGTERM.
    pub fn start(output: &'a OutputArgs, overwrite: bool) -> anyhow::Result<Self> {
        if let Some(path) = &output.output {
            destination::check(path, overwrite)?;
        }
        super::history::check_store(&output.history)?;
        let options = output.watch.options();
        let watch = match options.any() {
            true => Some(fathom::report::live::Watch::start(&options)?),
            false => None,
        };
        if let Some(addr) = watch.as_ref().and_then(|w| w.listening) {
            eprintln!("fathom: serving live metrics at http://{addr}/metrics");
        }
        Ok(Driver {
            output,
            stop: StopFlag::on_signals()?,
            watch,
        })
    }

    /// A session that stops with the signals, labelled as asked.
    pub fn session(&self) -> Session {
        Session::new(self.stop.clone())
            .labelled(self.output.label.clone())
            .watched(self.watch.as_ref().map(|w| w.board()))
    }

    /// Writes `document` so far to the JSON `--output`, if that is where
    /// it goes: an interrupted command leaves what it measured.
    pub fn progress(&self, document: &Document) -> anyhow::Result<()> {
        if let Some(path) = self.output.progress_file() {
            destination::write(path, &json(document)?)?;
        }
        Ok(())
    }

    /// Emits `document`, says its problems, and returns the exit code
    /// (`failed`: the command's verdict or run failed).
    pub fn finish(mut self, document: &Document, failed: bool) -> anyhow::Result<i32> {
        let mut document = document.clone();
        if let Some(trouble) = self.watch.take().and_then(|w| w.finish()) {
            document.notes.push(trouble);
        }
        let document = &document;
        emit(document, self.output)?;
        super::history::remember_and_say(document, &self.output.history);
        for problem in document.problems() {
            eprintln!("fathom: {problem}");
        }
        Ok(self.exit(failed))
    }

    /// Runs each of `bench`'s `checked` runs in turn, until a signal, into
    /// the session's document, written as it grows.
    pub fn measure<B: Benchmark>(
        &self,
        bench: &B,
        checked: Vec<B::Checked>,
    ) -> anyhow::Result<Document> {
        let mut document = self.session().document().clone();
        let board = self.session().board();
        let say = |line: &str| fathom::util::terminal::say(&format!("fathom: {line}"));
        for run in checked {
            if self.stop.is_set() {
                break;
            }
            let cx = Context {
                stop: &self.stop,
                board: board.as_deref(),
                meet: None,
                say: &say,
            };
            let result = match bench.run(run, &cx) {
                Ok(result) => result,
                // Bad input and a signal end the command as they always
                // do. A run that failed (its dataset's writes on a full
                // file system) ends the plan: what was measured before it
                // is written, with why, and the exit code is 1.
                Err(e) if e.is::<UsageError>() || e.is::<Interrupted>() => return Err(e),
                Err(e) => {
                    document.failure = Some(format!("{e:#}"));
                    break;
                }
            };
            benchmark::add(&mut document, result);
            self.progress(&document)?;
        }
        Ok(document)
    }

    /// The exit code: the signal's if one stopped the command, else 1 when
    /// `failed`, else 0.
    pub fn exit(&self, failed: bool) -> i32 {
        exit_code(&self.stop, failed)
    }
}

/// Any kind of run on the benchmark contract, alone on this host: every
/// spec checked before anything is made; with `dry_run` the plan only;
/// else each run in turn under one driver, the document written as it
/// grows, and the exit code of the whole.
pub(crate) fn drive<B: Benchmark>(
    bench: &B,
    specs: &[B::Spec],
    output: &OutputArgs,
    overwrite: bool,
    dry_run: bool,
) -> anyhow::Result<i32> {
    if dry_run {
        // The plan only: nothing is made, opened or removed.
        let n = specs.len();
        // "a tree run" is what one is; the plan counts them.
        let what = B::WHAT.split_once(' ').map_or(B::WHAT, |(_, w)| w);
        println!("plan: {n} {what}{}", if n == 1 { "" } else { "s" });
        for (i, spec) in specs.iter().enumerate() {
            println!("{:>4}. {}", i + 1, bench.plan(spec)?);
        }
        return Ok(0);
    }
    let mut checked = Vec::new();
    for spec in specs {
        checked.push(bench.check(spec)?);
    }
    let driver = Driver::start(output, overwrite)?;
    let document = driver.measure(bench, checked)?;
    let failed = document.failed();
    driver.finish(&document, failed)
}
