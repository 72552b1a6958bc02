//! The sequence every measuring command follows, in one place: `--output`
//! checked before anything runs, signals caught, a session labelled as
//! the output says, the document written as it grows (JSON to a file) and
//! emitted at the end, its problems said, and the exit code chosen.

use super::{OutputArgs, emit, exit_code, json};
use fathom::report::destination;
use fathom::result::Document;
use fathom::run::Session;
use fathom::util::stop::StopFlag;

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

    /// The exit code: the signal's if one stopped the command, else 1 when
    /// `failed`, else 0.
    pub fn exit(&self, failed: bool) -> i32 {
        exit_code(&self.stop, failed)
    }
}
