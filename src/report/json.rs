//! The JSON result document, pretty-printed (see docs/json-schema.md); the
//! documents of several systems as a JSON array of documents.

use super::{Exporter, Report};
use crate::result::Document;

pub struct JsonExporter;

/// One document as fathom writes it.
pub fn document_text(document: &Document) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(document)?;
    text.push('\n');
    Ok(text)
}

impl Exporter for JsonExporter {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        if let [one] = &report.systems[..] {
            return document_text(&one.document);
        }
        let documents: Vec<&Document> = report.systems.iter().map(|s| &s.document).collect();
        let mut text = serde_json::to_string_pretty(&documents)?;
        text.push('\n');
        Ok(text)
    }
}
