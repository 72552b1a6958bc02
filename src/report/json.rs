//! The JSON result document, pretty-printed (see docs/json-schema.md); the
//! documents of several systems as a JSON array of documents.

use super::{Exporter, Report};

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        let mut text = match &report.systems[..] {
            [one] => serde_json::to_string_pretty(&one.document)?,
            several => serde_json::to_string_pretty(
                &several.iter().map(|s| &s.document).collect::<Vec<_>>(),
            )?,
        };
        text.push('\n');
        Ok(text)
    }
}
