//! Markdown: the sweep table, ready for a README, a wiki or an issue.

use super::Exporter;
use super::table;
use crate::result::Document;

pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn render(&self, document: &Document) -> anyhow::Result<String> {
        let (header, rows) = match &document.meta {
            Some(meta) => table::meta_cells(meta),
            None => table::cells(&table::build(document)),
        };
        let mut out = String::new();
        if let Some(meta) = &document.meta {
            out.push_str(&format!("{}\n\n", table::meta_caption(meta)));
        }
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
    header.starts_with("read ")
        || header.starts_with("write ")
        || ["files", "ops/s", "mean", "p50", "p99", "p99.9", "max"].contains(&header)
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
