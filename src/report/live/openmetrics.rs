//! The live figures in Prometheus' text exposition format (0.0.4), which
//! Prometheus, the Pushgateway and OpenMetrics parsers all read: counters
//! of I/Os and bytes, latency as a histogram of fine log-spaced buckets
//! (so `histogram_quantile` and `sum by` work across hosts) and, beside
//! it, fathom's exact quantiles of the last second and of the run so far.

use crate::measure::histogram::LatencyHistogram;
use crate::measure::live::{Board, Series};
use std::fmt::Write;

pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Bucket bounds: four a doubling from 1 µs to about 134 s, each rounded
/// to three significant digits so the `le` labels read well ("0.00102").
fn bounds_ns() -> impl Iterator<Item = f64> {
    (0..=108).map(|k| {
        let ns = 1000.0 * 2f64.powf(k as f64 / 4.0);
        let scale = 10f64.powi(ns.log10().floor() as i32 - 2);
        (ns / scale).round() * scale
    })
}

/// The quantiles given exactly, as the label says them.
const QUANTILES: [(&str, f64); 5] = [
    ("0.5", 50.0),
    ("0.99", 99.0),
    ("0.999", 99.9),
    ("0.9999", 99.99),
    ("1", 100.0),
];

/// Escapes a label value: backslash, double quote and newline.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(s: &Series, host: &str) -> String {
    format!(
        "host=\"{}\",workload=\"{}\",stream=\"{}\",direction=\"{}\"",
        label(host),
        label(&s.workload),
        label(&s.stream),
        s.direction
    )
}

/// The whole exposition of `board`, its series labelled with `host`.
pub fn render(board: &Board, host: &str) -> String {
    let mut out = String::new();
    let host_label = format!("host=\"{}\"", label(host));
    let _ = writeln!(
        out,
        "# HELP fathom_up 1 while the run goes on, 0 once it has ended (the figures are final).\n# TYPE fathom_up gauge\nfathom_up{{{host_label}}} {}",
        u8::from(!board.finished)
    );
    let _ = writeln!(
        out,
        "# HELP fathom_phase_info What the command is doing now.\n# TYPE fathom_phase_info gauge\nfathom_phase_info{{{host_label},phase=\"{}\",workload=\"{}\"}} 1",
        label(&board.phase),
        label(&board.workload)
    );
    if let Some(ratio) = board.progress_ratio() {
        let _ = writeln!(
            out,
            "# HELP fathom_progress_ratio Share of the planned runs or rounds done, the one going on by its planned time or bytes.\n# TYPE fathom_progress_ratio gauge\nfathom_progress_ratio{{{host_label}}} {ratio}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP fathom_verdict_info The latest verdict the command reached (none yet: empty).\n# TYPE fathom_verdict_info gauge\nfathom_verdict_info{{{host_label},verdict=\"{}\"}} 1",
        label(board.verdicts.last().map_or("", String::as_str))
    );
    type Figure = fn(&Series) -> u64;
    let counters: [(&str, &str, Figure); 5] = [
        ("fathom_ios_total", "I/Os completed.", |s| s.ios),
        (
            "fathom_bytes_total",
            "Bytes moved by completed I/Os.",
            |s| s.bytes,
        ),
        (
            "fathom_late_ios_total",
            "I/Os that went out more than 1 ms after they could.",
            |s| s.late,
        ),
        ("fathom_errors_total", "I/Os that failed.", |s| s.errors),
        (
            "fathom_unanswered_ios_total",
            "Rated I/Os due that had no answer at the end of their second.",
            |s| s.unanswered,
        ),
    ];
    for (name, help, figure) in counters {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for s in &board.series {
            let _ = writeln!(out, "{name}{{{}}} {}", labels(s, host), figure(s));
        }
    }
    let _ = writeln!(
        out,
        "# HELP fathom_latency_seconds Completion latency of every I/O so far.\n# TYPE fathom_latency_seconds histogram"
    );
    for s in &board.series {
        histogram(&mut out, &labels(s, host), &s.run);
    }
    let _ = writeln!(
        out,
        "# HELP fathom_latency_quantile_seconds Exact latency quantiles (HDR histograms) of the last second and of the run so far.\n# TYPE fathom_latency_quantile_seconds gauge"
    );
    for s in &board.series {
        quantiles(
            &mut out,
            "fathom_latency_quantile_seconds",
            &labels(s, host),
            &s.run,
            s.last.as_ref().map(|l| &l.latency),
        );
    }
    let _ = writeln!(
        out,
        "# HELP fathom_second_iops I/Os a second in the last completed second.\n# TYPE fathom_second_iops gauge"
    );
    for s in &board.series {
        if let Some(last) = &s.last {
            let _ = writeln!(
                out,
                "fathom_second_iops{{{}}} {}",
                labels(s, host),
                crate::measure::per_second(last.ios, last.dur_s)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP fathom_in_flight Mean I/Os in flight over the last completed second (Little's law: its completions' latencies summed over its length).\n# TYPE fathom_in_flight gauge"
    );
    for s in &board.series {
        if let Some(last) = &s.last {
            let _ = writeln!(
                out,
                "fathom_in_flight{{{}}} {}",
                labels(s, host),
                last.in_flight()
            );
        }
    }
    if !board.cluster.is_empty() {
        cluster(&mut out, &board.cluster);
    }
    out
}

/// Every rank's seconds merged at rank 0 (`--mpi`): metrics of their own,
/// so that a `sum` over hosts of the per-host ones never counts them twice.
fn cluster(out: &mut String, series: &[Series]) {
    let labels = |s: &Series| {
        format!(
            "workload=\"{}\",stream=\"{}\",direction=\"{}\"",
            label(&s.workload),
            label(&s.stream),
            s.direction
        )
    };
    let _ = writeln!(
        out,
        "# HELP fathom_cluster_ranks The ranks whose seconds the cluster's last merged second holds.\n# TYPE fathom_cluster_ranks gauge"
    );
    for s in series {
        let _ = writeln!(
            out,
            "fathom_cluster_ranks{{{}}} {}",
            labels(s),
            s.ranks.unwrap_or(0)
        );
    }
    let _ = writeln!(
        out,
        "# HELP fathom_cluster_second_iops I/Os a second of every rank together in the last merged second.\n# TYPE fathom_cluster_second_iops gauge"
    );
    for s in series {
        if let Some(last) = &s.last {
            let _ = writeln!(
                out,
                "fathom_cluster_second_iops{{{}}} {}",
                labels(s),
                crate::measure::per_second(last.ios, last.dur_s)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP fathom_cluster_latency_quantile_seconds Exact latency quantiles of every rank's I/Os together (their HDR histograms merged), of the last merged second and of the run so far.\n# TYPE fathom_cluster_latency_quantile_seconds gauge"
    );
    for s in series {
        let l = labels(s);
        quantiles(
            out,
            "fathom_cluster_latency_quantile_seconds",
            &l,
            &s.run,
            s.last.as_ref().map(|l| &l.latency),
        );
    }
}

/// The exact quantiles of `run` and `second`, as `name` with `labels`.
fn quantiles(
    out: &mut String,
    name: &str,
    labels: &str,
    run: &LatencyHistogram,
    second: Option<&LatencyHistogram>,
) {
    for (window, h) in [("run", Some(run)), ("second", second)] {
        let Some(h) = h.filter(|h| h.count() > 0) else {
            continue;
        };
        for (q, pct) in QUANTILES {
            let _ = writeln!(
                out,
                "{name}{{{labels},window=\"{window}\",quantile=\"{q}\"}} {}",
                h.value_at_percentile(pct) as f64 / 1e9
            );
        }
    }
}

/// Cumulative counts at each bound, `+Inf`, the count and the sum (the
/// histogram's mean times its count: HDR keeps no exact sum).
fn histogram(out: &mut String, labels: &str, h: &LatencyHistogram) {
    let mut values: Vec<(u64, u64)> = h.recorded().collect();
    values.sort_unstable();
    let mut at = 0;
    let mut below = 0u64;
    for bound in bounds_ns() {
        while at < values.len() && values[at].0 as f64 <= bound {
            below += values[at].1;
            at += 1;
        }
        let _ = writeln!(
            out,
            "fathom_latency_seconds_bucket{{{labels},le=\"{}\"}} {below}",
            (bound / 1e9 * 1e12).round() / 1e12
        );
    }
    let count = h.count();
    let _ = writeln!(
        out,
        "fathom_latency_seconds_bucket{{{labels},le=\"+Inf\"}} {count}\nfathom_latency_seconds_count{{{labels}}} {count}\nfathom_latency_seconds_sum{{{labels}}} {}",
        h.summary().mean * count as f64 / 1e9
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::intervals::{CompletedSecond, DirectionSample};
    use crate::measure::live::LiveBoard;

    #[test]
    fn counters_buckets_and_exact_quantiles_are_exposed() {
        let board = LiveBoard::new();
        board.workload("rr \"4k\"");
        board.phase("run 1 of 1", Some((0, 1)));
        let mut read = DirectionSample::default();
        for ns in [10_000u64, 20_000, 40_000, 2_000_000] {
            read.ios += 1;
            read.bytes += 4096;
            read.latency.record(ns);
        }
        board.second(
            "rr",
            &CompletedSecond {
                index: 0,
                dur_s: 1.0,
                directions: [read, DirectionSample::default(), DirectionSample::default()],
            },
        );
        let text = render(&board.snapshot(), "h1");
        let l = "host=\"h1\",workload=\"rr \\\"4k\\\"\",stream=\"rr\",direction=\"read\"";
        assert!(
            text.contains(&format!("fathom_ios_total{{{l}}} 4\n")),
            "{text}"
        );
        assert!(text.contains(&format!("fathom_bytes_total{{{l}}} 16384\n")));
        assert!(text.contains(&format!(
            "fathom_latency_seconds_bucket{{{l},le=\"+Inf\"}} 4\n"
        )));
        // 1.02 ms holds the three fast ones, not the 2 ms one.
        assert!(
            text.contains(&format!(
                "fathom_latency_seconds_bucket{{{l},le=\"0.00102\"}} 3\n"
            )),
            "{text}"
        );
        let max =
            format!("fathom_latency_quantile_seconds{{{l},window=\"run\",quantile=\"1\"}} 0.002");
        assert!(text.contains(&max), "{text}");
        // Little's law: 2.07 ms of latency completed within one second.
        let in_flight: f64 = text
            .lines()
            .find_map(|line| line.strip_prefix(&format!("fathom_in_flight{{{l}}} ")))
            .expect("an in-flight gauge")
            .parse()
            .unwrap();
        assert!((in_flight - 0.00207).abs() < 0.00001, "{in_flight}");
        assert!(!text.contains("fathom_cluster_"), "not under --mpi");
        assert!(text.contains("fathom_progress_ratio{host=\"h1\"} 0\n"));
        assert!(text.contains("fathom_up{host=\"h1\"} 1\n"));
        // Every sample line is NAME{LABELS} VALUE.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }

    #[test]
    fn a_clusters_merged_seconds_have_metrics_of_their_own() {
        use crate::measure::live::{Second, Update};
        let board = LiveBoard::new();
        let mut latency = LatencyHistogram::new();
        for ns in [1_000u64, 5_000_000] {
            latency.record(ns);
        }
        board.cluster_second(Update {
            unix_s: 0.0,
            phase: "run 1 of 1".into(),
            workload: "w".into(),
            stream: "s".into(),
            index: 0,
            dur_s: 1.0,
            directions: vec![(
                "read",
                Second {
                    index: 0,
                    dur_s: 1.0,
                    ios: 2,
                    bytes: 8192,
                    errors: 0,
                    latency,
                },
            )],
            ranks: Some(4),
        });
        let text = render(&board.snapshot(), "h");
        let l = "workload=\"w\",stream=\"s\",direction=\"read\"";
        assert!(
            text.contains(&format!("fathom_cluster_ranks{{{l}}} 4\n")),
            "{text}"
        );
        assert!(text.contains(&format!("fathom_cluster_second_iops{{{l}}} 2\n")));
        assert!(
            text.contains(&format!(
                "fathom_cluster_latency_quantile_seconds{{{l},window=\"second\",quantile=\"1\"}} 0.005"
            )),
            "{text}"
        );
        // Not among the hosts' series: a sum over hosts counts each I/O once.
        assert!(!text.contains("fathom_ios_total{"), "{text}");
    }

    #[test]
    fn the_grafana_dashboard_asks_only_for_metrics_fathom_serves() {
        let board = LiveBoard::new();
        board.phase("run 1 of 1", Some((0, 1)));
        board.verdict("interval 1: pass");
        let mut read = DirectionSample {
            ios: 1,
            ..Default::default()
        };
        read.latency.record(1000);
        board.second(
            "s",
            &CompletedSecond {
                index: 0,
                dur_s: 1.0,
                directions: [read, DirectionSample::default(), DirectionSample::default()],
            },
        );
        let served = render(&board.snapshot(), "h");
        let dashboard: serde_json::Value =
            serde_json::from_str(include_str!("../../../docs/grafana-fathom.json")).unwrap();
        let mut asked = 0;
        for panel in dashboard["panels"].as_array().unwrap() {
            for target in panel["targets"].as_array().unwrap() {
                let expr = target["expr"].as_str().unwrap();
                for (at, _) in expr.match_indices("fathom_") {
                    let name: String = expr[at..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    assert!(
                        served.contains(&format!("\n{name}{{")),
                        "{name} is not served"
                    );
                    asked += 1;
                }
            }
        }
        assert!(asked >= 8, "{asked}");
    }
}
