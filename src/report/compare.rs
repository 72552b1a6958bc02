//! `fathom compare A B`: the same workloads of two result files side by
//! side, with the ratio B/A, and whether a change stands out from the
//! run-to-run noise the per-second intervals show.

use super::format::{latency, thousands};
use crate::result::{DirectionResult, Document, Interval};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

/// Relative standard error of a run's mean IOPS, from its whole seconds.
/// None with fewer than two of them: no spread can be measured.
pub fn relative_error(intervals: &[Interval]) -> Option<f64> {
    let iops: Vec<f64> = intervals
        .iter()
        .filter(|i| i.dur_s >= 0.99)
        .map(|i| i.iops)
        .collect();
    let n = iops.len() as f64;
    if n < 2.0 {
        return None;
    }
    let mean = iops.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = iops.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean / n.sqrt())
}

/// "+12.3% beyond noise (±2.1%)" or "within noise (±4.0%)".
pub fn verdict(a: &DirectionResult, b: &DirectionResult) -> String {
    let ratio = b.iops / a.iops;
    let change = (ratio - 1.0) * 100.0;
    match (relative_error(&a.intervals), relative_error(&b.intervals)) {
        (Some(ea), Some(eb)) => {
            // Three standard errors of the difference: a change this large
            // is rarely noise.
            let noise = 3.0 * (ea * ea + eb * eb).sqrt() * 100.0;
            if change.abs() > noise.max(1.0) {
                format!("{change:+.1}% beyond noise (±{noise:.1}%)")
            } else {
                format!("within noise (±{noise:.1}%)")
            }
        }
        _ => format!("{change:+.1}% (noise unknown: under 2 s of intervals)"),
    }
}

pub fn compare(a: &Document, b: &Document) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(vec![
        "workload",
        "target",
        "dir",
        "IOPS A",
        "IOPS B",
        "B/A",
        "p99 A",
        "p99 B",
        "p99 B/A",
        "IOPS change",
    ]);
    let mut matched = 0;
    let mut unmatched: Vec<String> = Vec::new();
    for wa in &a.workloads {
        let Some(wb) = b
            .workloads
            .iter()
            .find(|w| w.spec.name == wa.spec.name && w.spec.label() == wa.spec.label())
        else {
            unmatched.push(format!("{} ({})", wa.spec.name, wa.spec.label()));
            continue;
        };
        matched += 1;
        for (i, ta) in wa.targets.iter().enumerate() {
            let Some(tb) = wb
                .targets
                .iter()
                .find(|t| t.name == ta.name)
                .or(wb.targets.get(i))
            else {
                continue;
            };
            for (dir, da, db) in [
                ("read", &ta.io.read, &tb.io.read),
                ("write", &ta.io.write, &tb.io.write),
            ] {
                if da.ios == 0 || db.ios == 0 {
                    continue;
                }
                let target = if ta.name == tb.name {
                    ta.name.clone()
                } else {
                    format!("{} / {}", ta.name, tb.name)
                };
                table.add_row(vec![
                    wa.spec.label(),
                    target,
                    dir.into(),
                    thousands(da.iops.round() as u64),
                    thousands(db.iops.round() as u64),
                    format!("{:.3}", db.iops / da.iops),
                    latency(da.lat_ns.p99 as f64),
                    latency(db.lat_ns.p99 as f64),
                    format!("{:.3}", db.lat_ns.p99 as f64 / da.lat_ns.p99.max(1) as f64),
                    verdict(da, db),
                ]);
            }
        }
    }
    for c in 3..9 {
        if let Some(col) = table.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = table.to_string();
    out.push('\n');
    out.push_str(&format!(
        "{matched} workload(s) in both; A: {} ({}), B: {} ({})\n",
        a.started_at, a.host.hostname, b.started_at, b.host.hostname
    ));
    for u in unmatched {
        out.push_str(&format!("only in A: {u}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(iops: &[f64]) -> DirectionResult {
        DirectionResult {
            ios: 1,
            iops: iops.iter().sum::<f64>() / iops.len() as f64,
            intervals: iops
                .iter()
                .enumerate()
                .map(|(i, &x)| Interval {
                    t_s: i as f64,
                    dur_s: 1.0,
                    iops: x,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn steady_runs_show_small_changes() {
        let a = run(&[1000.0, 1002.0, 998.0, 1001.0, 999.0]);
        let b = run(&[1100.0, 1102.0, 1098.0, 1101.0, 1099.0]);
        assert!(
            verdict(&a, &b).contains("beyond noise"),
            "{}",
            verdict(&a, &b)
        );
    }

    #[test]
    fn noisy_runs_hide_small_changes() {
        let a = run(&[500.0, 1500.0, 700.0, 1300.0, 1000.0]);
        let b = run(&[1100.0, 600.0, 1500.0, 900.0, 1400.0]);
        assert!(
            verdict(&a, &b).contains("within noise"),
            "{}",
            verdict(&a, &b)
        );
    }
}
