//! `fathom check`'s verdict as text: per workload and direction, each
//! figure's baseline, new value, change and interval, and the verdict.

use crate::result::change::{Change, CheckResult, Figure, Verdict};
use crate::util::units::{format_bytes, latency, thousands};

fn value(figure: Figure, x: f64) -> String {
    match figure {
        // A training run's few samples a second keep their decimal.
        Figure::Iops if x < 100.0 => format!("{x:.1}"),
        Figure::Iops => thousands(x.round() as u64),
        Figure::Au => format!("{:.1}%", x * 100.0),
        Figure::Bandwidth => format!("{}/s", format_bytes(x.round() as u64)),
        _ => latency(x),
    }
}

fn percent(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// A change in a few words: "+10.0% [+9.8% +10.2%], improved".
pub fn judged(c: &Change) -> String {
    format!(
        "{} [{} {}], {}",
        percent(c.change),
        percent(c.low),
        percent(c.high),
        verdict(c)
    )
}

/// The verdict in words, with the floor it was held to (what runs of one
/// workload differ by) where the interval reaches past it.
fn verdict(c: &Change) -> String {
    match c.verdict {
        Verdict::Uncertain => format!(
            "uncertain (reaches past ±{:.0}%, not all of it)",
            c.noise_floor * 100.0
        ),
        v => v.to_string(),
    }
}

pub fn text(result: &CheckResult, fail_on: Option<f64>) -> String {
    let mut out = String::new();
    for d in &result.directions {
        let slices = match (d.slice_s - 1.0).abs() < 1e-3 {
            true => format!("{} s against {} s", d.seconds.1, d.seconds.0),
            false => format!(
                "{} slices of {} against {}",
                d.seconds.1,
                latency(d.slice_s * 1e9),
                d.seconds.0
            ),
        };
        out.push_str(&format!(
            "{} ({}), {slices}, {:.0}% intervals:\n",
            d.workload,
            d.direction,
            result.confidence * 100.0
        ));
        for c in &d.changes {
            let past = fail_on.filter(|&t| c.regressed_beyond(t));
            out.push_str(&format!(
                "  {:<10} {:>12} -> {:<12} {} [{} {}]  {}{}\n",
                d.figure_name(c.figure),
                value(c.figure, c.baseline),
                value(c.figure, c.new),
                percent(c.change),
                percent(c.low),
                percent(c.high),
                verdict(c),
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

/// What a run's end says of each direction of a workload against the
/// last runs of it in the history: IOPS and p99, each change with its
/// interval and verdict, one line per direction.
pub fn against_earlier(id: i64, earlier: &crate::history::Earlier) -> Vec<String> {
    // A result of many parts (a tree's phases) says each part that moved,
    // and the rest in one line.
    let many = earlier.changes.len() > 2;
    let moved = |d: &crate::result::change::DirectionChange| {
        d.changes
            .iter()
            .any(|c| c.verdict != crate::result::change::Verdict::WithinNoise)
    };
    let mut lines: Vec<String> = earlier
        .changes
        .iter()
        .filter(|d| !many || moved(d))
        .filter_map(|d| {            let said: Vec<String> = d
                .changes
                .iter()
                .filter(|c| matches!(c.figure, Figure::Iops | Figure::P99))
                .map(|c| format!("{} {}", d.figure_name(c.figure), judged(c)))
                .collect();
            // A change the host or fathom may owe says whose it may be.
            let not_the_targets = d
                .changes
                .iter()
                .any(|c| c.verdict == crate::result::change::Verdict::Inconclusive)
                .then(|| d.notes.iter().find(|n| n.contains("not the target") || n.contains("a busy host")))
                .flatten()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            (!said.is_empty()).then(|| {
                format!(
                    "history run {id}: {} ({}) vs the last {} run(s) of it on this target with the same settings: {}{not_the_targets}",
                    earlier.workload,
                    d.direction,
                    earlier.runs,
                    said.join("; ")
                )
            })
        })
        .collect();
    let steady: Vec<&str> = earlier
        .changes
        .iter()
        .filter(|d| many && !moved(d) && !d.changes.is_empty())
        .map(|d| d.direction.as_str())
        .collect();
    if !steady.is_empty() {
        lines.push(format!(
            "history run {id}: {} vs the last {} run(s) of it on this target with the same settings: within noise in {}",
            earlier.workload,
            earlier.runs,
            steady.join(", ")
        ));
    }
    if earlier.set_apart > 0 {
        let compared = match earlier.runs {
            0 => "none of the same settings to compare with".to_string(),
            n => format!("compared with the {n} of the same settings"),
        };
        lines.push(format!(
            "history run {id}: {}: {} earlier run(s) of other settings ({}) left out; {compared}",
            earlier.workload,
            earlier.set_apart,
            earlier.differing.join(", ")
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p99(low: f64, high: f64) -> Change {
        Change {
            figure: Figure::P99,
            baseline: 100.0,
            new: 207.0,
            change: 1.07,
            low,
            high,
            noise_floor: 0.10,
            verdict: if low <= 0.0 || high <= 0.10 {
                Verdict::WithinNoise
            } else {
                Verdict::Uncertain
            },
        }
    }

    #[test]
    fn an_interval_past_the_floor_is_never_called_noise() {
        let said = judged(&p99(0.021, 4.73));
        assert!(
            said.ends_with("uncertain (reaches past ±10%, not all of it)"),
            "{said}"
        );
        assert!(!said.contains("noise"), "{said}");
        let said = judged(&p99(-0.05, 0.08));
        assert!(said.ends_with(", within noise"), "{said}");
    }
}
