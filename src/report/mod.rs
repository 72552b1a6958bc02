//! Output formats, one file each behind one trait (as hyperfine's exporters):
//! adding a format is one new file and one line in `exporter`. Every format
//! renders a [`Report`]: one or more systems' documents, each under its
//! label, cut into [`Section`]s by kind of result; each exporter matches on
//! the sections exhaustively, so a new kind of result nobody renders does not
//! compile.

pub mod capacity;
pub mod certify;
pub mod change;
pub mod charts;
pub mod cluster;
pub mod compare;
pub mod csv;
pub mod destination;
pub mod fio_json;
pub mod fio_logs;
pub mod fio_normal;
pub mod fio_terse;
pub mod fit;
pub mod history;
pub mod html;
pub mod json;
pub mod live;
pub mod markdown;
pub mod object;
pub mod pts;
pub mod sections;
pub mod table;
pub mod text;
pub mod train;

pub use sections::{Labelled, Report, Section, System};
use std::str::FromStr;

pub trait Exporter {
    fn render(&self, report: &Report) -> anyhow::Result<String>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    Markdown,
    Csv,
    Html,
    FioJson,
    /// fio's `json+`: fio's JSON with latency bins.
    FioJsonPlus,
    /// fio's `normal` text output.
    FioNormal,
    /// fio's terse output, version 3.
    FioTerse,
}

impl FromStr for OutputFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(OutputFormat::Text),
            "json" => Ok(OutputFormat::Json),
            "markdown" | "md" => Ok(OutputFormat::Markdown),
            "csv" => Ok(OutputFormat::Csv),
            "html" => Ok(OutputFormat::Html),
            "fio-json" => Ok(OutputFormat::FioJson),
            "fio-json+" => Ok(OutputFormat::FioJsonPlus),
            "fio-normal" => Ok(OutputFormat::FioNormal),
            "fio-terse" => Ok(OutputFormat::FioTerse),
            _ => Err(format!(
                "unknown format '{s}' (expected text, json, markdown, csv, html, fio-json, fio-json+, fio-normal or fio-terse)"
            )),
        }
    }
}

impl OutputFormat {
    /// Every format's name, as `--output-format` takes it.
    pub const NAMES: [&'static str; 9] = [
        "text",
        "json",
        "markdown",
        "csv",
        "html",
        "fio-json",
        "fio-json+",
        "fio-normal",
        "fio-terse",
    ];

    /// The format a file's extension names (`r.json`, `r.csv`, `r.md`,
    /// `r.html`), for an `--output` given without `--output-format`.
    pub fn of_path(path: &std::path::Path) -> Option<OutputFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "json" => Some(OutputFormat::Json),
            "csv" => Some(OutputFormat::Csv),
            "md" | "markdown" => Some(OutputFormat::Markdown),
            "html" | "htm" => Some(OutputFormat::Html),
            "txt" | "text" => Some(OutputFormat::Text),
            _ => None,
        }
    }
}

/// A format read on a terminal, its control characters shown escaped:
/// names and tags come from users and files, and an escape sequence in
/// one (OSC 0 retitling the terminal, OSC 52 writing the clipboard) must
/// be seen, not obeyed.
struct Printable<E>(E);

impl<E: Exporter> Exporter for Printable<E> {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        self.0.render(report).map(|text| printable(&text))
    }
}

/// `text` with every control character but newline and tab written as
/// `\u{..}`.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The exporter of `format` for a reader whose terminal is `fit`
/// characters wide (None: every column, as in a file or a pipe), each
/// run's own lines shown under a table of several when `verbose`; only
/// the text table is cut or summed up.
pub fn exporter_fitted(
    format: OutputFormat,
    fit: Option<usize>,
    verbose: bool,
) -> Box<dyn Exporter> {
    match format {
        OutputFormat::Text => Box::new(Printable(text::TextExporter { fit, verbose })),
        other => exporter(other),
    }
}

pub fn exporter(format: OutputFormat) -> Box<dyn Exporter> {
    match format {
        OutputFormat::Text => Box::new(Printable(text::TextExporter {
            fit: None,
            verbose: true,
        })),
        OutputFormat::Json => Box::new(json::JsonExporter),
        OutputFormat::Markdown => Box::new(Printable(markdown::MarkdownExporter)),
        OutputFormat::Csv => Box::new(csv::CsvExporter),
        OutputFormat::Html => Box::new(html::HtmlExporter),
        OutputFormat::FioJson => Box::new(fio_json::FioJsonExporter { plus: false }),
        OutputFormat::FioJsonPlus => Box::new(fio_json::FioJsonExporter { plus: true }),
        OutputFormat::FioNormal => Box::new(fio_normal::FioNormalExporter),
        OutputFormat::FioTerse => Box::new(fio_terse::FioTerseExporter),
    }
}
