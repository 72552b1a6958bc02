//! A SNIA PTS test as the specification lays its report out: the test
//! set-up, the rounds of the tracking variable (its convergence), the
//! measurement window against the rule's limits, and the steady-state
//! figures of every cell. Shared by the text, Markdown, CSV and HTML
//! exporters; the HTML adds the convergence and steady-state charts.

use super::charts::{self, LineChart, Rendered, Series, XAxis};
use crate::result::pts::{PtsCell, PtsResult};
use crate::spec::pts::PtsTest;
use crate::util::units::{format_block_size, format_bytes, format_duration, latency, thousands};

/// A table with its caption: (caption, header, rows).
pub type Captioned = (String, Vec<String>, Vec<Vec<String>>);

/// The figure a test's cells are judged and compared by.
pub fn steady_figure(test: PtsTest, cell: &PtsCell) -> f64 {
    cell.figure(test)
}

pub fn format_figure(test: PtsTest, value: f64) -> String {
    match test {
        PtsTest::Iops | PtsTest::WriteSaturation => {
            format!("{} IOPS", thousands(value.round() as u64))
        }
        PtsTest::Throughput => crate::util::units::bandwidth(value),
        PtsTest::Latency => latency(value),
    }
}

fn strings<const N: usize>(cells: [&str; N]) -> Vec<String> {
    cells.iter().map(|s| s.to_string()).collect()
}

/// "pts iops on /dev/nvme0n1: steady state in rounds 3-7".
pub fn caption(p: &PtsResult) -> String {
    format!(
        "pts {} on {}: {}",
        p.spec.test,
        p.spec.device,
        match (&p.window, p.spec.test) {
            (_, PtsTest::WriteSaturation) => p.end.describe().to_string(),
            (Some(w), _) if w.holds => format!(
                "steady state in rounds {}-{} of {}",
                w.first_round, w.last_round, p.spec.max_rounds
            ),
            _ => format!("{} after {} rounds", p.end.describe(), p.rounds.len()),
        }
    )
}

/// The tables of the report, in the specification's order.
pub fn tables(p: &PtsResult) -> Vec<Captioned> {
    let mut out = vec![setup(p), rounds(p)];
    if let Some(w) = window(p) {
        out.push(w);
    }
    out.push(steady(p));
    out
}

fn setup(p: &PtsResult) -> Captioned {
    let device = p.target.device.as_ref();
    let s = &p.spec;
    let mut rows = vec![
        strings(["test", s.test.name()]),
        vec!["device".into(), s.device.clone()],
        vec![
            "model".into(),
            device
                .and_then(|d| d.model.clone())
                .unwrap_or_else(|| "-".into()),
        ],
        vec![
            "capacity".into(),
            device
                .and_then(|d| d.size_bytes)
                .map_or("-".into(), format_bytes),
        ],
        vec![
            "active range".into(),
            format!(
                "{}% ({})",
                s.active_range_pct,
                format_bytes(p.active_range_bytes)
            ),
        ],
        vec![
            "purge".into(),
            match p.purge_s {
                Some(t) => format!("{} ({})", s.purge.name(), format_duration(t)),
                None => "none".into(),
            },
        ],
        vec![
            "preconditioning".into(),
            format!(
                "{} of 128k sequential writes in {}, then the test's own rounds",
                format_bytes(p.precondition_bytes),
                format_duration(p.precondition_s)
            ),
        ],
        vec![
            "outstanding I/O".into(),
            format!("{} (T{}Q{})", s.threads * s.depth, s.threads, s.depth),
        ],
        vec!["each cell".into(), format_duration(s.round_s)],
        vec!["tracking".into(), p.tracking.clone()],
        vec![
            "compliant".into(),
            if p.departures.is_empty() {
                "yes".into()
            } else {
                format!("no: {}", p.departures.join("; "))
            },
        ],
    ];
    if s.test == PtsTest::Latency {
        rows[7][1] = "1 (T1Q1)".into();
    }
    ("test set-up".into(), strings(["item", "value"]), rows)
}

fn rounds(p: &PtsResult) -> Captioned {
    let rows = p
        .rounds
        .iter()
        .map(|r| {
            let in_window = p
                .window
                .is_some_and(|w| (w.first_round..=w.last_round).contains(&r.round));
            vec![
                r.round.to_string(),
                format_figure(p.spec.test, r.tracking_value),
                if in_window {
                    "window".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    (
        format!("rounds: {} each", p.tracking),
        strings(["round", "tracking", ""]),
        rows,
    )
}

fn window(p: &PtsResult) -> Option<Captioned> {
    let w = p.window?;
    let f = |v: f64| format_figure(p.spec.test, v);
    let verdict = |ok: bool| if ok { "within" } else { "beyond" };
    let rows = vec![
        vec!["average".into(), f(w.average), String::new(), String::new()],
        vec![
            "range (max - min)".into(),
            f(w.range),
            format!("{} (20%)", f(w.range_limit)),
            verdict(w.range <= w.range_limit * (1.0 + 1e-12)).into(),
        ],
        vec![
            "slope excursion".into(),
            f(w.excursion),
            format!("{} (10%)", f(w.excursion_limit)),
            verdict(w.excursion <= w.excursion_limit * (1.0 + 1e-12)).into(),
        ],
        vec![
            "steady state".into(),
            if w.holds { "yes" } else { "no" }.into(),
            String::new(),
            String::new(),
        ],
    ];
    Some((
        format!(
            "measurement window: rounds {}-{}",
            w.first_round, w.last_round
        ),
        strings(["measure", "value", "limit", "verdict"]),
        rows,
    ))
}

fn steady(p: &PtsResult) -> Captioned {
    let cells = p.steady_cells();
    let caption = match p.spec.test {
        PtsTest::WriteSaturation => "IOPS per round".to_string(),
        _ => "steady state: the window's average".to_string(),
    };
    match p.spec.test {
        PtsTest::Iops => {
            let mut header = vec!["block size".to_string()];
            header.extend(p.spec.mixes.iter().map(|m| format!("{m}/{}", 100 - m)));
            let rows = p
                .spec
                .block_sizes
                .iter()
                .map(|bs| {
                    let mut row = vec![format_block_size(*bs)];
                    row.extend(p.spec.mixes.iter().map(|m| {
                        cells
                            .iter()
                            .find(|c| c.bs == *bs && c.read_pct == *m)
                            .map_or("-".into(), |c| thousands(c.iops.round() as u64))
                    }));
                    row
                })
                .collect();
            (format!("{caption}, IOPS"), header, rows)
        }
        PtsTest::Throughput => {
            let rows = cells
                .iter()
                .map(|c| vec![c.label(), crate::util::units::bandwidth(c.bw_bytes)])
                .collect();
            (caption, strings(["cell", "bandwidth"]), rows)
        }
        PtsTest::Latency => {
            let rows = cells
                .iter()
                .map(|c| {
                    vec![
                        c.label(),
                        latency(c.mean_ns),
                        latency(c.max_ns as f64),
                        latency(c.p99_999_ns as f64),
                    ]
                })
                .collect();
            (
                caption,
                strings(["cell", "mean", "max", "five nines"]),
                rows,
            )
        }
        PtsTest::WriteSaturation => {
            let mut written = 0u64;
            let rows = p
                .rounds
                .iter()
                .map(|r| {
                    written += r.cells.iter().map(|c| c.written_bytes).sum::<u64>();
                    vec![
                        r.round.to_string(),
                        thousands(r.tracking_value.round() as u64),
                        format_bytes(written),
                    ]
                })
                .collect();
            (caption, strings(["round", "IOPS", "written"]), rows)
        }
    }
}

/// Every cell of every round, one CSV row each.
pub fn csv_rows(p: &PtsResult) -> Vec<Vec<String>> {
    p.rounds
        .iter()
        .flat_map(|r| {
            r.cells.iter().map(move |c| {
                vec![
                    p.spec.test.name().to_string(),
                    p.spec.device.clone(),
                    r.round.to_string(),
                    c.label(),
                    c.bs.to_string(),
                    c.read_pct.to_string(),
                    c.sequential.to_string(),
                    format!("{:.1}", c.iops),
                    format!("{:.0}", c.bw_bytes),
                    format!("{:.0}", c.mean_ns),
                    c.max_ns.to_string(),
                    c.p99_999_ns.to_string(),
                    p.window
                        .is_some_and(|w| {
                            w.holds && (w.first_round..=w.last_round).contains(&r.round)
                        })
                        .to_string(),
                ]
            })
        })
        .collect()
}

pub const CSV_HEADER: [&str; 13] = [
    "test",
    "device",
    "round",
    "cell",
    "bs",
    "read_pct",
    "sequential",
    "iops",
    "bw_bytes",
    "mean_ns",
    "max_ns",
    "p99_999_ns",
    "steady_window",
];

/// The convergence chart (the tracking mix of every block size, round by
/// round, the window shaded) and the steady-state chart (each mix across
/// block sizes).
pub fn charts(p: &PtsResult, prefix: &str) -> anyhow::Result<Vec<Rendered>> {
    let test = p.spec.test;
    let (unit, scale) = match test {
        PtsTest::Iops | PtsTest::WriteSaturation => ("IOPS", 1.0),
        PtsTest::Throughput => ("MiB/s", (1u64 << 20) as f64),
        PtsTest::Latency => {
            let slowest = p
                .rounds
                .iter()
                .flat_map(|r| r.cells.iter().map(|c| c.mean_ns))
                .fold(0.0, f64::max);
            let (div, unit) = charts::latency_unit(slowest);
            (unit, div)
        }
    };
    let y_label = match test {
        PtsTest::Latency => format!("mean latency ({unit})"),
        _ => unit.to_string(),
    };
    let Some(first) = p.rounds.first() else {
        return Ok(Vec::new());
    };
    // The cells drawn: those of the tracking mix (iops), or every cell.
    let tracked_mix = first
        .cells
        .iter()
        .find(|c| c.label() == p.tracking.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .map(|c| c.read_pct);
    let drawn: Vec<usize> = first
        .cells
        .iter()
        .enumerate()
        .filter(|(_, c)| test != PtsTest::Iops || Some(c.read_pct) == tracked_mix)
        .map(|(i, _)| i)
        .collect();
    let series = drawn
        .iter()
        .map(|&i| Series {
            name: first.cells[i].label(),
            points: p
                .rounds
                .iter()
                .filter_map(|r| {
                    Some((r.round as f64, steady_figure(test, r.cells.get(i)?) / scale))
                })
                .collect(),
        })
        .collect();
    let mut convergence = LineChart {
        x_axis: XAxis::Whole,
        ..LineChart::new(
            format!("{prefix}pts {test}: convergence, round by round"),
            "round",
            &y_label,
            series,
        )
    };
    if let Some(w) = p.window.filter(|w| w.holds) {
        convergence.shaded.push(charts::Span {
            name: "steady-state window".into(),
            from: f64::from(w.first_round),
            to: f64::from(w.last_round),
        });
    }
    let mut out = vec![charts::line_chart(&convergence)?];
    if test == PtsTest::Iops && p.spec.block_sizes.len() >= 2 {
        let cells = p.steady_cells();
        let series = p
            .spec
            .mixes
            .iter()
            .map(|m| Series {
                name: format!("{m}/{}", 100 - m),
                points: cells
                    .iter()
                    .filter(|c| c.read_pct == *m)
                    .map(|c| (c.bs as f64, c.iops))
                    .collect(),
            })
            .collect();
        out.push(charts::line_chart(&LineChart {
            x_axis: XAxis::PowersOfTwo(|v| format_block_size(v.round() as u64)),
            ..LineChart::new(
                format!("{prefix}pts iops: steady-state IOPS by block size"),
                "block size",
                "IOPS",
                series,
            )
        })?);
    }
    Ok(out)
}
