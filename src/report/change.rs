//! `fathom check`'s verdict as text: per workload and direction, each
//! figure's baseline, new value, change and interval, and the verdict.

use crate::result::change::{CheckResult, Figure};
use crate::util::units::{format_bytes, latency, thousands};

fn value(figure: Figure, x: f64) -> String {
    match figure {
        Figure::Iops => thousands(x.round() as u64),
        Figure::Bandwidth => format!("{}/s", format_bytes(x.round() as u64)),
        _ => latency(x),
    }
}

fn percent(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

pub fn text(result: &CheckResult, fail_on: Option<f64>) -> String {
    let mut out = String::new();
    for d in &result.directions {
        out.push_str(&format!(
            "{} ({}), {} s against {} s, {:.0}% intervals:\n",
            d.workload,
            d.direction,
            d.seconds.1,
            d.seconds.0,
            result.confidence * 100.0
        ));
        for c in &d.changes {
            let past = fail_on.filter(|&t| c.regressed_beyond(t));
            out.push_str(&format!(
                "  {:<10} {:>12} -> {:<12} {} [{} {}]  {}{}\n",
                c.figure.name(),
                value(c.figure, c.baseline),
                value(c.figure, c.new),
                percent(c.change),
                percent(c.low),
                percent(c.high),
                c.verdict,
                match past {
                    Some(t) => format!(", past {:.0}%", t * 100.0),
                    None => String::new(),
                }
            ));
        }
        for note in &d.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
    }
    out
}
