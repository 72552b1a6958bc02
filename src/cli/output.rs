//! Where and how a command's document goes: the output, watch and write
//! flags every command shares, and emitting the document through the gate.

use super::*;

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

/// `--overwrite` of the commands whose one file is their --output.
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct ReplaceOutput {
    /// Replace an existing --output file that is not a fathom result.
    #[arg(long)]
    pub overwrite: bool,
}

#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// text, json, markdown, csv, html, fio-json (fio's JSON layout, for tools built on fio) fio-json+ (with fio's latency bins, as fio's json+), fio-normal (fio's text output) or fio-terse (fio's --minimal line, version 3). Default: the --output file's extension (.json, .csv, .md, .html), else text.
    #[arg(long = "output-format", alias = "format", value_name = "FORMAT", hide_possible_values = true,
          value_parser = super::knob_args::Offered::new(OutputFormat::NAMES.to_vec(), parse_format))]
    pub output_format: Option<OutputFormat>,

    /// Write the result there instead of standard output (the text table is
    /// still printed).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Name of the system under test in reports and comparisons [default:
    /// the result file's name without its extension]
    #[arg(long, value_name = "NAME", value_parser = parse_label)]
    pub label: Option<String>,

    #[command(flatten)]
    pub view: TextView,

    #[command(flatten)]
    pub watch: WatchArgs,

    #[command(flatten)]
    pub history: history::HistoryArgs,
}

/// How much of the text report a terminal shows.
#[derive(Args, Debug, Default, Clone, Copy)]
pub struct TextView {
    /// Print every column of the text table, however wide: on a terminal
    /// the least telling columns are left out to fit it, and named under
    /// the table (a pipe or a file always gets every column)
    #[arg(long)]
    pub wide: bool,

    /// Under a table of several runs, print each run's own lines (CPU,
    /// what limited it, its disks, its data) instead of their summary
    #[arg(long)]
    pub verbose: bool,
}

impl TextView {
    /// The text exporter for standard output, or `format`'s.
    pub fn exporter(self, format: OutputFormat) -> Box<dyn report::Exporter> {
        report::exporter_fitted(format, self.fit(), self.verbose)
    }

    /// The characters a text table printed on standard output may take:
    /// the terminal's columns, or None (every column) with `--wide` or
    /// when standard output is not a terminal.
    pub fn fit(self) -> Option<usize> {
        if self.wide {
            return None;
        }
        fathom::util::terminal::stdout_columns()
    }
}

/// Watching a run while it runs.
#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "Live metrics")]
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
    pub fn options(&self) -> fathom::report::live::WatchOptions {
        fathom::report::live::WatchOptions {
            listen: self.metrics_listen.clone(),
            lines: self.live.clone(),
            push: self.metrics_push.clone(),
            host: fathom::measure::facts::host_facts().hostname,
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

pub(crate) fn parse_label(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.is_empty() || s.len() > 64 || s.chars().any(|c| c.is_control()) {
        return Err(format!(
            "'{s}' is not a label (1 to 64 printable characters)"
        ));
    }
    Ok(s.to_string())
}

pub(crate) fn parse_format(s: &str) -> Result<OutputFormat, String> {
    s.parse()
}

/// `given`, else the format `output`'s extension names, else text.
pub(crate) fn format_for(given: Option<OutputFormat>, output: Option<&Path>) -> OutputFormat {
    given
        .or_else(|| output.and_then(OutputFormat::of_path))
        .unwrap_or(OutputFormat::Text)
}

/// Writes the document in the chosen format to `--output` (and the text
/// table to stdout), or prints it.
pub(crate) fn emit(document: &Document, output: &OutputArgs) -> anyhow::Result<()> {
    for log in report::fio_logs::write(document, Path::new("."))? {
        eprintln!("fathom: wrote fio log {}", log.display());
    }
    let report = Report::single(document.clone(), &output_label(output));
    let view = output.view;
    match &output.output {
        Some(path) if !destination::is_stdout(path) => {
            destination::write(path, &report::exporter(output.format()).render(&report)?)?;
            print!("{}", view.exporter(OutputFormat::Text).render(&report)?);
        }
        _ => print!("{}", view.exporter(output.format()).render(&report)?),
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

/// The document as JSON, for writing after each finished run.
pub(crate) fn json(document: &Document) -> anyhow::Result<String> {
    report::json::document_text(document)
}
