//! Markdown: the sweep table, ready for a README, a wiki or an issue.

use super::Exporter;
use super::table;
use crate::result::Document;

pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn render(&self, document: &Document) -> anyhow::Result<String> {
        let (header, rows) = table::cells(&table::build(document));
        let mut out = String::new();
        out.push_str(&format!("| {} |\n", header.join(" | ")));
        let align: Vec<&str> = header
            .iter()
            .map(|h| if is_figure(h) { "---:" } else { "---" })
            .collect();
        out.push_str(&format!("|{}|\n", align.join("|")));
        for row in rows {
            let escaped: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
            out.push_str(&format!("| {} |\n", escaped.join(" | ")));
        }
        out.push_str(&footnote(document));
        for warning in document.warnings() {
            out.push_str(&format!("\n> **warning**: {warning}\n"));
        }
        Ok(out)
    }
}

fn is_figure(header: &str) -> bool {
    header.starts_with("read ") || header.starts_with("write ")
}

/// Where the figures come from, under the table.
pub fn footnote(document: &Document) -> String {
    let h = &document.host;
    format!(
        "\nfathom {}, {} workload{}, {}; host {} ({} CPUs, Linux {}).\n",
        document.fathom_version,
        document.workloads.len(),
        if document.workloads.len() == 1 {
            ""
        } else {
            "s"
        },
        document.started_at,
        h.hostname,
        h.cpus,
        h.kernel
    )
}
