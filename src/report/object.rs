//! An object-store run as the reports show it: a caption, and a row per
//! operation (a GET's time to first byte on a row of its own, a
//! multipart PUT's parts too), the same cells for the terminal, Markdown,
//! HTML and CSV.

use super::sections::Labelled;
use super::table::tail_cells as tails;
use crate::result::object::ObjectResult;
use crate::util::units::{format_bytes, ops_per_s, thousands};

pub const HEADER: [&str; 12] = [
    "op", "ok", "errors", "ops/s", "MB/s", "share", "mean", "p50", "p99", "p99.9", "p99.99", "max",
];

/// A row of tails alone (with its counts, where it has them).
fn latency_row(
    name: String,
    counts: Option<(u64, u64)>,
    l: &crate::measure::histogram::LatencySummary,
) -> Vec<String> {
    let (ok, errors) = counts.map_or((String::new(), String::new()), |(ok, errors)| {
        (thousands(ok), thousands(errors))
    });
    let mut row = vec![
        name,
        ok,
        errors,
        String::new(),
        String::new(),
        String::new(),
    ];
    row.extend(tails(l));
    row
}

/// The header and rows of every run given (each row led by its system
/// when there are several).
pub fn cells(runs: &[Labelled<ObjectResult>], named: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    if named {
        header.insert(0, "system".into());
    }
    let mut rows = Vec::new();
    for run in runs {
        let lead = |row: Vec<String>| -> Vec<String> {
            if named {
                std::iter::once(run.system.to_string()).chain(row).collect()
            } else {
                row
            }
        };
        for op in &run.ops {
            let errors: u64 = op.errors.values().sum();
            let mut row = vec![
                op.op.to_string(),
                thousands(op.ops),
                thousands(errors),
                ops_per_s(op.ops_per_s),
                format!("{:.1}", op.bytes_per_s / 1e6),
                format!("{:.1}%", op.share * 100.0),
            ];
            row.extend(tails(&op.lat_ns));
            rows.push(lead(row));
            if let Some(due) = &op.due_ns {
                rows.push(lead(latency_row(format!("{} from due", op.op), None, due)));
            }
            if let Some(ttfb) = &op.ttfb_ns {
                rows.push(lead(latency_row(
                    format!("{} first byte", op.op),
                    None,
                    ttfb,
                )));
            }
        }
        if let Some(parts) = &run.parts {
            rows.push(lead(latency_row(
                "put part".into(),
                Some((parts.parts, 0)),
                &parts.lat_ns,
            )));
        }
        for e in &run.endpoints {
            rows.push(lead(latency_row(
                format!("at {}", e.endpoint),
                Some((e.ops, e.errors)),
                &e.lat_ns,
            )));
        }
    }
    (header, rows)
}

/// "[system: ]fathom objects: s3://bench/ at http://...: mix get=45,...,
/// 1 MiB objects, 100 uploaded first, 8 workers, 10 s"; then errors and
/// what was left, each on a line of its own.
pub fn caption(run: &Labelled<ObjectResult>, named: bool) -> String {
    let spec = &run.spec;
    let mut text = format!(
        "{}fathom objects: {} at {}: mix {}, {} objects{} ({} uploaded first), {} worker{}, {:.1} s",
        if named {
            format!("{}: ", run.system)
        } else {
            String::new()
        },
        spec.target,
        spec.endpoints.join(", "),
        spec.mix,
        spec.object_size,
        match spec.part_size {
            Some(p) => format!(" in {} parts", format_bytes(p)),
            None => String::new(),
        },
        thousands(run.preparation.objects),
        spec.workers,
        if spec.workers == 1 { "" } else { "s" },
        run.elapsed_s
    );
    if let Some(rate) = spec.rate {
        let done: u64 = run.ops.iter().map(|o| o.ops).sum();
        text.push_str(&format!(
            "\nrate asked {} requests/s, made {}",
            ops_per_s(rate),
            ops_per_s(done as f64 / run.elapsed_s.max(1e-9))
        ));
    }
    for op in &run.ops {
        if !op.errors.is_empty() {
            let each: Vec<String> = op
                .errors
                .iter()
                .map(|(k, n)| format!("{} {k}", thousands(*n)))
                .collect();
            text.push_str(&format!("\n{} errors: {}", op.op, each.join(", ")));
        }
        if op.unfinished > 0 {
            text.push_str(&format!(
                "\n{} unfinished: {} held by the store past the run's end (cut there, in no figure; the rates are over the run's time)",
                op.op,
                thousands(op.unfinished)
            ));
        }
        if op.retries > 0 {
            text.push_str(&format!(
                "\n{} sent again after a dropped connection: {}",
                op.op,
                thousands(op.retries)
            ));
        }
    }
    if let Some(by) = &run.limited_by {
        text.push_str(&format!("\nlimited by {by}"));
    }
    if run.cleanup.kept > 0 {
        text.push_str(&format!(
            "\nkept: {} objects under {}",
            thousands(run.cleanup.kept),
            run.run_prefix
        ));
    }
    if let Some(why) = &run.failure {
        text.push_str(&format!("\nfailed: {why}"));
    }
    text
}
