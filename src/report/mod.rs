//! Output formats, one file each behind one trait (as hyperfine's exporters):
//! adding a format is one new file and one line in `exporter`.

pub mod format;
pub mod json;
pub mod text;

use crate::result::Document;
use std::str::FromStr;

pub trait Exporter {
    fn render(&self, document: &Document) -> anyhow::Result<String>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
}

impl FromStr for OutputFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(OutputFormat::Text),
            "json" => Ok(OutputFormat::Json),
            _ => Err(format!(
                "unknown output format '{s}' (expected text or json)"
            )),
        }
    }
}

pub fn exporter(format: OutputFormat) -> Box<dyn Exporter> {
    match format {
        OutputFormat::Text => Box::new(text::TextExporter),
        OutputFormat::Json => Box::new(json::JsonExporter),
    }
}
