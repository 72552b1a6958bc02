//! Markdown: the tables of every result, ready for a README, a wiki or an
//! issue.

use super::{Exporter, Report, Section, certify, table};

pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        let systems = report.compares_systems();
        let mut out = String::new();
        for section in report.sections() {
            if !out.is_empty() {
                out.push('\n');
            }
            match section {
                Section::Workloads(workloads) => {
                    match workloads.as_slice() {
                        [one] => {
                            let (header, rows) = table::detail_cells(one, systems);
                            out.push_str(&markdown_table(
                                &header,
                                &rows,
                                table::DETAIL_FIRST_FIGURE,
                            ));
                        }
                        _ => {
                            let sweep = table::build(&workloads, systems);
                            let (header, rows) = table::cells(&sweep);
                            out.push_str(&markdown_table(&header, &rows, sweep.knobs.len() + 1));
                        }
                    }
                    if !table::notes(&workloads).is_empty() {
                        out.push('\n');
                        for line in table::notes(&workloads) {
                            out.push_str(&format!("- {line}\n"));
                        }
                    }
                }
                Section::Meta(metas) => {
                    for meta in &metas {
                        out.push_str(&format!("{}\n\n", table::meta_caption(meta, systems)));
                    }
                    let (header, rows) = table::meta_cells(&metas);
                    out.push_str(&markdown_table(&header, &rows, 1));
                }
                Section::Tree(trees) => {
                    for tree in &trees {
                        let caption = table::tree_caption(tree, systems).replace('\n', "\n\n");
                        out.push_str(&format!("{caption}\n\n"));
                    }
                    let (header, rows) = table::tree_cells(&trees);
                    out.push_str(&markdown_table(&header, &rows, 1));
                }
                Section::Object(runs) => {
                    for run in &runs {
                        let caption = super::object::caption(run, systems).replace('\n', "\n\n");
                        out.push_str(&format!("{caption}\n\n"));
                    }
                    let (header, rows) = super::object::cells(&runs, systems);
                    out.push_str(&markdown_table(&header, &rows, 1));
                }
                Section::Train(runs) => {
                    for run in &runs {
                        let caption = super::train::caption(run, systems).replace('\n', "\n\n");
                        out.push_str(&format!("{caption}\n\n"));
                    }
                    let (header, rows) = super::train::cells(&runs, systems);
                    out.push_str(&markdown_table(&header, &rows, 1));
                }
                Section::Streams(groups) => {
                    for s in groups {
                        let (header, rows) = table::streams_cells(&s, systems);
                        out.push_str(&markdown_table(&header, &rows, 3));
                    }
                }
                Section::Capacity(searches) => {
                    for c in searches {
                        if systems {
                            out.push_str(&format!("**{}**: ", c.system));
                        }
                        out.push_str(&format!("{}\n\n", super::capacity::caption(&c)));
                        let (header, rows) = super::capacity::cells(&c);
                        out.push_str(&markdown_table(
                            &header,
                            &rows,
                            super::capacity::FIRST_FIGURE,
                        ));
                        out.push('\n');
                        for line in super::capacity::conclusion(&c) {
                            out.push_str(&format!("- {line}\n"));
                        }
                    }
                }
                Section::Pts(tests) => {
                    for t in tests {
                        if systems {
                            out.push_str(&format!("**{}**: ", t.system));
                        }
                        out.push_str(&format!("{}\n\n", super::pts::caption(&t)));
                        for (caption, header, rows) in super::pts::tables(&t) {
                            out.push_str(&format!("{caption}\n\n"));
                            out.push_str(&markdown_table(&header, &rows, 1));
                            out.push('\n');
                        }
                    }
                }
                Section::Certify(certifications) => {
                    for c in certifications {
                        if systems {
                            out.push_str(&format!("**{}**: ", c.system));
                        }
                        out.push_str(&format!("{}\n\n", certify::caption(&c.profile, &c.target)));
                        let (header, rows) = certify::cells(&c);
                        out.push_str(&markdown_table(&header, &rows, certify::FIRST_FIGURE));
                        out.push_str(&format!("\n**verdict: {}**\n", certify::verdict(&c)));
                        for r in c.reasons.iter().chain(&c.notes) {
                            out.push_str(&format!("- {r}\n"));
                        }
                    }
                }
            }
        }
        for (label, c) in super::cluster::clusters(report) {
            let name = if systems {
                format!("**{label}**: ")
            } else {
                String::new()
            };
            out.push_str(&format!("\n{name}{}\n\n", super::cluster::caption(c)));
            let (header, rows) = super::cluster::cells(c);
            out.push_str(&markdown_table(
                &header,
                &rows,
                super::cluster::FIRST_FIGURE,
            ));
        }
        out.push_str(&footnote(report));
        for warning in report.warnings() {
            out.push_str(&format!("\n> **warning**: {warning}\n"));
        }
        Ok(out)
    }
}

/// A table whose columns from `first_figure` on are right-aligned numbers.
fn markdown_table(header: &[String], rows: &[Vec<String>], first_figure: usize) -> String {
    let mut out = format!("| {} |\n", header.join(" | "));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i >= first_figure { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for row in rows {
        let escaped: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", escaped.join(" | ")));
    }
    out
}

/// Where the figures come from, under the tables: one line per system.
pub fn footnote(report: &Report) -> String {
    let mut out = String::from("\n");
    for system in &report.systems {
        let d = &system.document;
        let h = &d.host;
        let results = d.results.len();
        let label = match report.compares_systems() {
            true => format!("{}: ", system.label),
            false => String::new(),
        };
        let plural = if results == 1 { "" } else { "s" };
        // fio's JSON names fio's version and records no host.
        if d.fathom_version.starts_with("fio") {
            out.push_str(&format!(
                "{label}{}'s JSON, {results} result{plural}, {}; fio does not record the host.\n",
                d.fathom_version, d.started_at
            ));
            continue;
        }
        out.push_str(&format!(
            "{label}fathom {}, {results} result{plural}, {}; host {} ({} CPUs, Linux {}).\n",
            d.fathom_version, d.started_at, h.hostname, h.cpus, h.kernel
        ));
    }
    out
}
