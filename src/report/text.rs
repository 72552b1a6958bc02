//! The terminal table: one row per workload x target x direction.

use super::Exporter;
use super::{Labelled, Report, Section};
use crate::result::capacity::CapacityResult;
use crate::result::meta::MetaResult;
use crate::result::streams::StreamsResult;
use crate::result::{TargetResult, WorkloadResult};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

/// The terminal table; `fit`: no wider than that many characters;
/// `verbose`: each run's own lines under a table of several.
pub struct TextExporter {
    pub fit: Option<usize>,
    pub verbose: bool,
}

impl Exporter for TextExporter {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        let (fit, verbose) = (self.fit, self.verbose);
        let systems = report.compares_systems();
        let mut out = String::new();
        // The headline figures go last, where the eye lands.
        let mut closing = String::new();
        for section in report.sections() {
            if !out.is_empty() {
                out.push('\n');
            }
            match section {
                Section::Workloads(workloads) => {
                    out.push_str(&workload_tables(&workloads, systems, fit, verbose));
                    closing.push_str(&desktop_block(&workloads, systems));
                }
                Section::Meta(metas) => out.push_str(&meta_table(&metas, systems, fit)),
                Section::Tree(trees) => out.push_str(&tree_table(&trees, systems, fit)),
                Section::Object(runs) => {
                    let (header, rows) = super::object::cells(&runs, systems);
                    let captions = runs.iter().map(|r| super::object::caption(r, systems));
                    out.push_str(&captioned_table(captions, header, rows, fit));
                }
                Section::Train(runs) => {
                    let (header, rows) = super::train::cells(&runs, systems);
                    let captions = runs.iter().map(|r| super::train::caption(r, systems));
                    out.push_str(&captioned_table(captions, header, rows, fit));
                }
                Section::Certify(certifications) => {
                    for c in certifications {
                        if systems {
                            out.push_str(&format!("{}: ", c.system));
                        }
                        out.push_str(&super::certify::text(&c));
                    }
                }
                Section::Streams(groups) => {
                    for s in groups {
                        out.push_str(&streams_table(&s, systems, fit));
                    }
                }
                Section::Capacity(searches) => {
                    for c in searches {
                        out.push_str(&capacity_table(&c, systems, fit));
                    }
                }
                Section::Pts(tests) => {
                    for t in tests {
                        out.push_str(&pts_tables(&t, systems, fit));
                    }
                }
            }
        }
        for (label, c) in super::cluster::clusters(report) {
            let (header, rows) = super::cluster::cells(c);
            let mut table = Table::new();
            table.load_style(UTF8_FULL_CONDENSED).set_header(header);
            for row in rows {
                table.add_row(row);
            }
            right_align(&mut table, super::cluster::FIRST_FIGURE..7);
            super::fit::narrow(&mut table, fit);
            let name = if systems {
                format!("{label}: ")
            } else {
                String::new()
            };
            out.push_str(&format!(
                "\n{name}{}\n{table}\n",
                super::cluster::caption(c)
            ));
        }
        for warning in report.warnings() {
            out.push_str(&format!("warning: {warning}\n"));
        }
        if report.interrupted() {
            out.push_str("interrupted: figures cover what was measured before the stop\n");
        }
        out.push_str(&closing);
        Ok(crate::util::terminal::wrap_at(out, fit))
    }
}

fn right_align(table: &mut Table, columns: impl Iterator<Item = usize>) {
    for column in columns {
        if let Some(c) = table.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// A capacity search: its caption, one row per step, the answer and knee.
/// A SNIA PTS test: its caption, then each table of the report.
fn pts_tables(
    t: &Labelled<crate::result::pts::PtsResult>,
    systems: bool,
    fit: Option<usize>,
) -> String {
    let name = if systems {
        format!("{}: ", t.system)
    } else {
        String::new()
    };
    let mut out = format!("{name}{}\n", super::pts::caption(t));
    for (caption, header, rows) in super::pts::tables(t) {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_header(header);
        for row in rows {
            table.add_row(row);
        }
        // The set-up table is words; the others, figures.
        if caption != "test set-up" {
            let columns = table.column_count();
            right_align(&mut table, 1..columns);
        }
        super::fit::narrow(&mut table, fit);
        out.push_str(&format!("{caption}\n{table}\n"));
    }
    out
}

fn capacity_table(c: &Labelled<CapacityResult>, systems: bool, fit: Option<usize>) -> String {
    let (header, rows) = super::capacity::cells(c);
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(header);
    for row in rows {
        table.add_row(row);
    }
    let columns = table.column_count();
    right_align(&mut table, super::capacity::FIRST_FIGURE..columns);
    super::fit::narrow(&mut table, fit);
    let name = if systems {
        format!("{}: ", c.system)
    } else {
        String::new()
    };
    let mut out = format!("{name}{}\n{table}\n", super::capacity::caption(c));
    for line in super::capacity::conclusion(c) {
        out.push_str(&format!("{line}\n"));
    }
    out
}

/// A streams workload: its table, then each stream's notes (CPU, scheduled
/// latency, verification, errors) as for a workload.
fn streams_table(s: &Labelled<StreamsResult>, systems: bool, fit: Option<usize>) -> String {
    let (header, rows) = super::table::streams_cells(s, systems);
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(header);
    for row in rows {
        table.add_row(row);
    }
    right_align(&mut table, 3..11);
    super::fit::narrow(&mut table, fit);
    // The notes name each target after its stream: two streams may share it.
    let targets = s.streams.iter().flat_map(|w| {
        w.targets
            .iter()
            .map(move |t| (format!("{}/{}", w.spec.name, t.name), t))
    });
    let later: Vec<String> = s
        .streams
        .iter()
        .filter_map(|w| {
            let after = match w.spec.wait_for.as_slice() {
                [] => String::new(),
                names => format!(" once {} ended", names.join(", ")),
            };
            let delay = match w.spec.start_delay_s {
                0.0 => String::new(),
                d => format!(" {} later", crate::util::units::format_duration(d)),
            };
            (!after.is_empty() || !delay.is_empty())
                .then(|| format!("{} started{delay}{after}", w.spec.name))
        })
        .collect();
    let together = match later.as_slice() {
        [] => "at once".to_string(),
        _ => format!("({})", later.join("; ")),
    };
    format!(
        "{table}\n{}: {} streams {together}, {:.1} s measured, CPU {:.2} µs per I/O\n{}{}",
        s.spec.name,
        s.streams.len(),
        s.runtime_s,
        s.cpu.per_io_us,
        stream_limits(s) + &disk_lines(&s.disks),
        target_notes(targets)
    )
}

/// What limited each stream's figures; clones of one job that one thing
/// limited are named on one line, with the first one's evidence.
fn stream_limits(s: &StreamsResult) -> String {
    let mut out = String::new();
    let limited: Vec<_> = s
        .streams
        .iter()
        .filter_map(|w| Some((w, w.limited_by.as_ref()?)))
        .collect();
    let mut rest = limited.as_slice();
    while let [(first, limit), ..] = rest {
        let alike = rest
            .iter()
            .take_while(|(w, l)| {
                first.spec.clone_of.is_some()
                    && w.spec.clone_of == first.spec.clone_of
                    && l.by == limit.by
            })
            .count()
            .max(1);
        let (group, after) = rest.split_at(alike);
        let names: Vec<&str> = group.iter().map(|(w, _)| w.spec.name.as_str()).collect();
        let each = match group.iter().all(|(_, l)| l.evidence == limit.evidence) {
            true => String::new(),
            false => format!(
                " ({}'s figures; each clone's: --output-format json)",
                names[0]
            ),
        };
        match (&first.spec.clone_of, group.len()) {
            (Some(job), 2..) => out.push_str(&format!(
                "  {} (clones of {job}) limited by {limit}{each}\n",
                names.join(", ")
            )),
            _ => out.push_str(&format!("  {} limited by {limit}\n", first.spec.name)),
        }
        rest = after;
    }
    out
}

fn meta_table(metas: &[Labelled<MetaResult>], systems: bool, fit: Option<usize>) -> String {
    let (header, rows) = super::table::meta_cells(metas);
    let captions = metas.iter().map(|m| super::table::meta_caption(m, systems));
    captioned_table(captions, header, rows, fit)
}

fn tree_table(
    trees: &[Labelled<crate::result::tree::TreeResult>],
    systems: bool,
    fit: Option<usize>,
) -> String {
    let (header, rows) = super::table::tree_cells(trees);
    let captions = trees.iter().map(|t| super::table::tree_caption(t, systems));
    captioned_table(captions, header, rows, fit)
}

/// A table of figures (right-aligned after its first column) under its
/// captions, one line each.
fn captioned_table(
    captions: impl Iterator<Item = String>,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    fit: Option<usize>,
) -> String {
    let first = header.first().cloned().unwrap_or_default();
    let (table, left_out) = super::fit::table(header, rows, fit, |h| h != first);
    let mut out = String::new();
    for caption in captions {
        out.push_str(&caption);
        out.push('\n');
    }
    out.push_str(&format!("{table}\n"));
    if let Some(line) = left_out {
        out.push_str(&format!("{line}\n"));
    }
    out
}

fn workload_tables(
    workloads: &[Labelled<WorkloadResult>],
    systems: bool,
    fit: Option<usize>,
    verbose: bool,
) -> String {
    if workloads.len() > 1 {
        return sweep(workloads, systems, fit, verbose);
    }
    let header = super::table::detail_header("workload");
    let rows = workloads
        .iter()
        .flat_map(|w| super::table::detail_cells(w, systems).1)
        .collect();
    let words = ["workload", "target", "system", "dir"];
    let (table, left_out) = super::fit::table(header, rows, fit, |h| !words.contains(&h));
    let mut out = table.to_string();
    out.push('\n');
    if let Some(line) = left_out {
        out.push_str(&format!("{line}\n"));
    }
    out.push_str(&notes(workloads, systems, true));
    out
}

/// The sweep table: one row per point and target, swept knobs as columns.
fn sweep(
    workloads: &[Labelled<WorkloadResult>],
    systems: bool,
    fit: Option<usize>,
    verbose: bool,
) -> String {
    let (header, rows) = super::table::cells(&super::table::build(workloads, systems));
    let (table, left_out) = super::fit::table(header, rows, fit, |h| {
        h.starts_with("read ") || h.starts_with("write ") || h.starts_with("sync")
    });
    let mut out = table.to_string();
    out.push('\n');
    if let Some(line) = left_out {
        out.push_str(&format!("{line}\n"));
    }
    out.push_str(&notes(workloads, systems, verbose));
    out
}

/// The four tests desktop disk benchmarks show, read beside write in
/// decimal MB/s, as those benchmarks lay them out; empty unless the table
/// is of such named tests.
fn desktop_block(workloads: &[Labelled<WorkloadResult>], systems: bool) -> String {
    if workloads.len() < 2 || systems {
        return String::new();
    }
    let (header, rows) = super::table::cells(&super::table::build(workloads, systems));
    let column = |name: &str| header.iter().position(|h| h == name);
    let (Some(read), Some(write)) = (column("read MB/s"), column("write MB/s")) else {
        return String::new();
    };
    if header.first().map(String::as_str) != Some("test") {
        return String::new();
    }
    let name = |row: &Vec<String>| row[0].replace('-', " ");
    let wide = rows
        .iter()
        .map(|r| name(r).chars().count())
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "\n{:wide$}  {:>10}  {:>10}\n",
        "", "Read MB/s", "Write MB/s"
    );
    for row in &rows {
        out.push_str(&format!(
            "{:wide$}  {:>10}  {:>10}\n",
            name(row),
            row[read],
            row[write]
        ));
    }
    out
}

/// CPU cost, verification and errors, under the table: each run's own
/// lines for one run (or with `verbose`), else what the runs share.
fn notes(workloads: &[Labelled<WorkloadResult>], systems: bool, verbose: bool) -> String {
    let mut out = String::new();
    // Several runs' lines would bury the table: they are summed up here,
    // and each run's are in the CSV and under --verbose.
    let cpu_lines = if verbose || workloads.len() == 1 {
        workloads
    } else {
        out.push_str(&format!(
            "{}; each run's CPU, disk and data lines: --verbose (or --output-format csv)\n",
            super::table::runs_line(workloads)
        ));
        out.push_str(&super::table::limits_line(workloads));
        &[]
    };
    for workload in cpu_lines {
        let system = match systems {
            true => format!("{}: ", workload.system),
            false => String::new(),
        };
        out.push_str(&format!(
            "{system}{}: {:.1} s measured, CPU {:.2} s user + {:.2} s sys = {:.2} µs per I/O\n",
            workload.spec.named(),
            workload.runtime_s,
            workload.cpu.user_s,
            workload.cpu.sys_s,
            workload.cpu.per_io_us
        ));
        if let Some(limit) = &workload.limited_by {
            out.push_str(&format!("  limited by {limit}\n"));
        }
        if let Some(line) = super::table::steady_line(workload) {
            out.push_str(&format!("  {line}\n"));
        }
        if let Some(repeats) = &workload.repeats {
            out.push_str(&format!("  {}\n", repeats.describe()));
        }
        for line in super::table::priority_lines(workload) {
            out.push_str(&format!("  {line}\n"));
        }
        out.push_str(&disk_lines(&workload.disks));
        for line in super::table::drive_lines(&workload.devices) {
            out.push_str(&format!("  {line}\n"));
        }
        if let Some(data) = &workload.data {
            out.push_str(&format!("  {}\n", workload.spec.content.describe(data)));
        }
        for line in super::table::replay_lines(workload) {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out.push_str(&target_notes(
        workloads
            .iter()
            .flat_map(|w| w.targets.iter().map(|t| (t.name.clone(), t))),
    ));
    out
}

/// What each disk under the targets was asked to do while measuring.
fn disk_lines(disks: &[crate::result::DiskUsage]) -> String {
    disks
        .iter()
        .map(|d| {
            let discards = match d.discard_ios {
                0 => String::new(),
                n => format!(
                    ", {} discards ({})",
                    crate::util::units::thousands(n),
                    crate::util::units::format_bytes(d.discard_bytes)
                ),
            };
            format!(
                "  disk {}: {} reads ({}), {} writes ({}){discards}, busy {:.0}% of the time\n",
                d.name,
                crate::util::units::thousands(d.read_ios),
                crate::util::units::format_bytes(d.read_bytes),
                crate::util::units::thousands(d.write_ios),
                crate::util::units::format_bytes(d.write_bytes),
                d.util_pct
            )
        })
        .collect()
}

/// Each target's scheduled latency, verification and problems, the target
/// named as given.
fn target_notes<'a>(targets: impl Iterator<Item = (String, &'a TargetResult)>) -> String {
    let mut out = String::new();
    for (name, target) in targets {
        for (dir, d) in target.io.named() {
            if let Some(s) = d.sched_lat_ns.filter(|_| d.ios > 0) {
                out.push_str(&format!(
                    "{name}: {dir} latency from schedule: p50 {}, p99 {}, max {} (from submission: p50 {}, p99 {})\n",
                    crate::util::units::latency(s.p50 as f64),
                    crate::util::units::latency(s.p99 as f64),
                    crate::util::units::latency(s.max as f64),
                    crate::util::units::latency(d.lat_ns.p50 as f64),
                    crate::util::units::latency(d.lat_ns.p99 as f64),
                ));
            }
        }
        if let Some(v) = target.verify.as_ref().filter(|v| !v.is_failure()) {
            out.push_str(&format!("{name}: verify ({}): {}\n", v.mode, v.summary()));
        }
        for problem in target.problems() {
            out.push_str(&format!("{name}: {problem}\n"));
        }
    }
    out
}
