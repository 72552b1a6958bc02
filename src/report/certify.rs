//! Certification results as people read them: one line per interval with
//! each stream's rate and slow shares, the verdict and each failed limit;
//! the same as cells for Markdown, CSV and HTML.

use crate::result::certify::{CertifyInterval, CertifyResult, Profile, THRESHOLDS_MS};
use crate::spec::Direction;
use crate::util::units::format_duration;
use crate::util::units::latency;

/// One line per interval: rates and slow shares of each stream; with
/// several devices, a line per device follows.
pub fn interval_line(i: &CertifyInterval) -> String {
    let mut line = format!(
        "{:>4}  {:>8}  {:>6}",
        i.index,
        format_duration(i.start_s),
        if i.judged { "" } else { "(stab)" }
    );
    let mut devices: Vec<(&str, String)> = Vec::new();
    for s in &i.streams {
        // Writes read best as bandwidth; a few large reads a second keep
        // a decimal.
        let rate = match s.direction {
            Direction::Write | Direction::Trim => crate::util::units::bandwidth(s.bw_bytes),
            Direction::Read if s.iops < 100.0 => format!("{:.1} r/s", s.iops),
            Direction::Read => format!(
                "{} r/s",
                crate::util::units::thousands(s.iops.round() as u64)
            ),
        };
        let shares: Vec<String> = s.over_pct.iter().map(|p| format!("{p:5.2}")).collect();
        let cell = format!("  | {} {rate:>11}  {}", s.name, shares.join(" "));
        match &s.target {
            None => line.push_str(&cell),
            Some(t) => match devices.iter_mut().find(|(d, _)| d == t) {
                Some((_, l)) => l.push_str(&cell),
                None => devices.push((t, format!("{t:>22}{cell}"))),
            },
        }
    }
    for (_, l) in devices {
        line.push('\n');
        line.push_str(&l);
    }
    line
}

pub fn header_line(profile: &Profile) -> String {
    let thresholds: Vec<String> = THRESHOLDS_MS
        .iter()
        .map(|t| format!("{:>5}", format!(">{t}")))
        .collect();
    let mut line = format!("{:>4}  {:>8}  {:>6}", "#", "start", "");
    for s in &profile.streams {
        line.push_str(&format!(
            "  | {} {:>11}  {}",
            s.name,
            "rate",
            thresholds.join(" ")
        ));
    }
    line.push_str("\n(shares in % of I/Os slower than N ms, from when each I/O was due)");
    if !profile.unjudged.is_empty() {
        line.push_str(&format!(
            "\n({}: reported, not judged on these shares)",
            profile.unjudged.join(", ")
        ));
    }
    line
}

/// "certify act-3x x1 on /dev/nvme0n1 for 24h, intervals of 1h (first 1h
/// not judged)".
pub fn caption(p: &Profile, target: &str) -> String {
    format!(
        "certify {} x{} on {} for {}, intervals of {} (first {} not judged)",
        p.name,
        p.scale,
        target,
        format_duration(p.duration_s),
        format_duration(p.interval_s),
        format_duration(p.stabilisation_s)
    )
}

/// PASS, FAIL, or why there is no verdict.
pub fn verdict(c: &CertifyResult) -> &'static str {
    match c.pass {
        Some(true) => "PASS",
        Some(false) if c.host_decided => "FAIL, decided by the host, not the target",
        Some(false) => "FAIL",
        None if c.interrupted => "interrupted: not judged",
        None => "not judged",
    }
}

/// What the text shows before the intervals: caption, notes and the
/// column headings (`fathom certify` prints it before the run starts).
pub fn opening(p: &Profile, target: &str, notes: &[String]) -> String {
    let mut out = format!("{}\n", caption(p, target));
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.push_str(&header_line(p));
    out.push('\n');
    out
}

/// What the text shows after the intervals: the verdict and every failed
/// limit.
pub fn closing(c: &CertifyResult) -> String {
    let mut out = format!("verdict: {}\n", verdict(c));
    for r in &c.reasons {
        out.push_str(&format!("  {r}\n"));
    }
    out
}

/// The whole result as text: opening, one line per interval, closing.
pub fn text(c: &CertifyResult) -> String {
    let mut out = opening(&c.profile, &c.target, &c.notes);
    for i in &c.intervals {
        out.push_str(&interval_line(i));
        out.push('\n');
    }
    out.push_str(&closing(c));
    out
}

/// The first column of `cells` that holds a figure (the rest are names).
pub const FIRST_FIGURE: usize = 6;

/// One row per interval and stream, for tables and spreadsheets.
pub fn cells(c: &CertifyResult) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header: Vec<String> = [
        "interval", "start", "judged", "stream", "device", "dir", "IOPS",
    ]
    .map(String::from)
    .to_vec();
    header.push("offered IOPS".into());
    header.push("MiB/s".into());
    header.extend(THRESHOLDS_MS.iter().map(|t| format!(">{t} ms %")));
    header.extend(["p99", "max"].map(String::from));
    let rows = c
        .intervals
        .iter()
        .flat_map(|i| {
            i.streams.iter().map(move |s| {
                let mut row = vec![
                    i.index.to_string(),
                    format_duration(i.start_s),
                    if i.judged { "yes" } else { "no" }.to_string(),
                    s.name.clone(),
                    s.target.clone().unwrap_or_else(|| "all".into()),
                    s.direction.to_string(),
                    crate::util::units::thousands(s.iops.round() as u64),
                    crate::util::units::thousands(s.offered_iops.round() as u64),
                    crate::util::units::mib_per_s(s.bw_bytes),
                ];
                row.extend(s.over_pct.iter().map(|p| format!("{p:.2}")));
                row.push(latency(s.p99_ns as f64));
                row.push(latency(s.max_ns as f64));
                row
            })
        })
        .collect();
    (header, rows)
}
