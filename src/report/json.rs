//! The JSON result document, pretty-printed (see docs/json-schema.md).

use super::Exporter;
use crate::result::Document;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, document: &Document) -> anyhow::Result<String> {
        let mut text = serde_json::to_string_pretty(document)?;
        text.push('\n');
        Ok(text)
    }
}
