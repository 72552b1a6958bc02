//! The terminal table: one row per workload x target x direction.

use super::Exporter;
use super::format::{bandwidth, latency, thousands};
use crate::result::{DirectionResult, Document, WorkloadResult};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

pub struct TextExporter;

impl Exporter for TextExporter {
    fn render(&self, document: &Document) -> anyhow::Result<String> {
        if let Some(meta) = &document.meta {
            let (header, rows) = super::table::meta_cells(meta);
            let mut table = Table::new();
            table.load_style(UTF8_FULL_CONDENSED).set_header(header);
            for row in rows {
                table.add_row(row);
            }
            for column in 1..8 {
                if let Some(c) = table.column_mut(column) {
                    c.set_cell_alignment(CellAlignment::Right);
                }
            }
            let mut out = format!("{}\n{table}\n", super::table::meta_caption(meta));
            if meta.interrupted {
                out.push_str("interrupted: figures cover the operations done before the stop\n");
            }
            return Ok(out);
        }
        if document.workloads.len() > 1 {
            return Ok(sweep(document));
        }
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_header(vec![
            "workload",
            "target",
            "dir",
            "IOPS",
            "bandwidth",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "p99.99",
            "max",
        ]);
        for workload in &document.workloads {
            add_rows(&mut table, workload);
        }
        for column in 3..11 {
            if let Some(c) = table.column_mut(column) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        let mut out = table.to_string();
        out.push('\n');
        out.push_str(&notes(document));
        Ok(out)
    }
}

/// The sweep table: one row per point and target, swept knobs as columns.
fn sweep(document: &Document) -> String {
    let (header, rows) = super::table::cells(&super::table::build(document));
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(header.clone());
    for row in rows {
        table.add_row(row);
    }
    for (i, h) in header.iter().enumerate() {
        if (h.starts_with("read ") || h.starts_with("write "))
            && let Some(c) = table.column_mut(i)
        {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = table.to_string();
    out.push('\n');
    out.push_str(&notes(document));
    out
}

const MAX_CPU_LINES: usize = 8;

/// CPU cost, verification, errors and interruption, under the table.
fn notes(document: &Document) -> String {
    let mut out = String::new();
    {
        // A long sweep's CPU lines would bury the table: they are in the CSV.
        let cpu_lines = if document.workloads.len() <= MAX_CPU_LINES {
            &document.workloads[..]
        } else {
            out.push_str(&format!(
                "{} workloads; CPU time per workload: --format csv\n",
                document.workloads.len()
            ));
            &[]
        };
        for workload in cpu_lines {
            out.push_str(&format!(
                "{} ({}): {:.1} s measured, CPU {:.2} s user + {:.2} s sys = {:.2} µs per I/O\n",
                workload.spec.name,
                workload.spec.label(),
                workload.runtime_s,
                workload.cpu.user_s,
                workload.cpu.sys_s,
                workload.cpu.per_io_us
            ));
        }
        for workload in &document.workloads {
            for target in &workload.targets {
                for (dir, d) in [("read", &target.io.read), ("write", &target.io.write)] {
                    if let Some(s) = d.sched_lat_ns.filter(|_| d.ios > 0) {
                        out.push_str(&format!(
                            "{}: {dir} latency from schedule: p50 {}, p99 {}, max {} (from submission: p50 {}, p99 {})\n",
                            target.name,
                            super::format::latency(s.p50 as f64),
                            super::format::latency(s.p99 as f64),
                            super::format::latency(s.max as f64),
                            super::format::latency(d.lat_ns.p50 as f64),
                            super::format::latency(d.lat_ns.p99 as f64),
                        ));
                    }
                }
                if let Some(v) = target.verify.as_ref().filter(|v| v.failed() == 0) {
                    out.push_str(&format!(
                        "{}: verify ({}): {}\n",
                        target.name,
                        v.mode,
                        v.summary()
                    ));
                }
                for problem in target.problems() {
                    out.push_str(&format!("{}: {problem}\n", target.name));
                }
            }
        }
        for warning in document.warnings() {
            out.push_str(&format!("warning: {warning}\n"));
        }
        if document.interrupted {
            out.push_str("interrupted: figures cover the time measured before the stop\n");
        }
    }
    out
}

fn add_rows(table: &mut Table, workload: &WorkloadResult) {
    let label = workload.spec.label();
    let mut rows: Vec<(String, &DirectionResult, &str)> = Vec::new();
    for target in &workload.targets {
        rows.push((target.name.clone(), &target.io.read, "read"));
        rows.push((target.name.clone(), &target.io.write, "write"));
    }
    if workload.targets.len() > 1 {
        rows.push(("total".into(), &workload.total.read, "read"));
        rows.push(("total".into(), &workload.total.write, "write"));
    }
    for (target, d, dir) in rows {
        if d.ios == 0 {
            continue;
        }
        let l = &d.lat_ns;
        table.add_row(vec![
            label.clone(),
            target,
            dir.to_string(),
            thousands(d.iops.round() as u64),
            bandwidth(d.bw_bytes),
            latency(l.mean),
            latency(l.p50 as f64),
            latency(l.p99 as f64),
            latency(l.p99_9 as f64),
            latency(l.p99_99 as f64),
            latency(l.max as f64),
        ]);
    }
}
