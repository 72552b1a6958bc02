//! `fathom certify`: ACT-style latency certification. Several streams (for
//! ACT: small random reads and large sequential writes) run together at
//! fixed rates on one target; each interval reports the share of reads and
//! writes slower than 1, 2, 4 ... 64 ms, and the run passes when the judged
//! intervals stay under the profile's limits.
//!
//! Each interval is its own run of the streams: its histograms are read,
//! summarised and dropped, so memory does not grow with the duration, and
//! the result file is rewritten after every interval (a crash loses at most
//! one). Queues drain for a few milliseconds at each boundary.

use crate::cli::knobs::SpecBuilder;
use crate::cli::units::{format_duration, parse_duration};
use crate::engine::target::PreparedTarget;
use crate::error::UsageError;
use crate::measure::histogram::LatencyHistogram;
use crate::result::DirectionResult;
use crate::spec::WorkloadSpec;
use crate::stop::StopFlag;
use serde::{Deserialize, Serialize};

/// Thresholds of the slow-I/O shares, in milliseconds (ACT's buckets).
pub const THRESHOLDS_MS: [u64; 7] = [1, 2, 4, 8, 16, 32, 64];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub over_ms: u64,
    /// Largest share, in percent, of I/Os slower than `over_ms`.
    pub max_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    pub duration_s: f64,
    pub interval_s: f64,
    pub stabilisation_s: f64,
    pub read_limits: Vec<Limit>,
    pub write_limits: Vec<Limit>,
    /// Rates already multiplied by the scale.
    pub streams: Vec<WorkloadSpec>,
    pub scale: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamInterval {
    pub name: String,
    /// `read` or `write`: the direction this stream's figures are for.
    pub direction: String,
    pub ios: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    /// Percent of I/Os slower than each of `THRESHOLDS_MS`, measured from
    /// when each I/O was due on the schedule.
    pub over_pct: Vec<f64>,
    pub p99_ns: u64,
    pub max_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CertifyInterval {
    pub index: u32,
    pub start_s: f64,
    pub dur_s: f64,
    /// False for intervals inside the stabilisation period.
    pub judged: bool,
    pub streams: Vec<StreamInterval>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CertifyResult {
    pub profile: Profile,
    pub target: String,
    pub thresholds_ms: Vec<u64>,
    pub intervals: Vec<CertifyInterval>,
    /// None until the run ends (or when it was interrupted).
    pub pass: Option<bool>,
    /// Why it failed, or why it could not be judged.
    pub reasons: Vec<String>,
    /// How the run differed from the profile (e.g. a shortened
    /// stabilisation).
    #[serde(default)]
    pub notes: Vec<String>,
    pub interrupted: bool,
}

/// What the command line changes in a profile.
#[derive(Debug, Clone, Default)]
pub struct ProfileOverrides {
    pub duration: Option<String>,
    pub interval: Option<String>,
    pub stabilisation: Option<String>,
    pub scale: f64,
    pub target: String,
    /// Knobs applied to every stream (safety flags).
    pub knobs: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    certify: CertifySection,
    stream: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CertifySection {
    duration: String,
    interval: String,
    stabilisation: String,
    #[serde(default)]
    read_limits: toml::Table,
    #[serde(default)]
    write_limits: toml::Table,
}

pub fn parse_profile(text: &str, name: &str, o: &ProfileOverrides) -> Result<Profile, UsageError> {
    let err = |m: String| UsageError(format!("profile {name}: {m}"));
    let file: ProfileFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        err(format!("line {line}: {}", e.message()))
    })?;
    let seconds = |flag: &str, v: &str| {
        parse_duration(v)
            .map(|d| d.as_secs_f64())
            .map_err(|m| UsageError(format!("{flag}: {m}")))
    };
    let duration_s = seconds(
        "--duration",
        o.duration.as_deref().unwrap_or(&file.certify.duration),
    )?;
    let interval_s = seconds(
        "--interval",
        o.interval.as_deref().unwrap_or(&file.certify.interval),
    )?;
    let stabilisation_s = seconds(
        "--stabilisation",
        o.stabilisation
            .as_deref()
            .unwrap_or(&file.certify.stabilisation),
    )?;
    if interval_s < 1.0 || interval_s > duration_s {
        return Err(UsageError(format!(
            "--interval {} must be at least 1s and at most --duration {}",
            format_duration(interval_s),
            format_duration(duration_s)
        )));
    }
    if duration_s / interval_s > 100_000.0 {
        return Err(UsageError(
            "--duration / --interval: more than 100,000 intervals".into(),
        ));
    }
    if !(o.scale > 0.0 && o.scale <= 1000.0) {
        return Err(UsageError(format!(
            "--scale {} is outside (0, 1000]",
            o.scale
        )));
    }
    let limits = |table: &toml::Table, which: &str| -> Result<Vec<Limit>, UsageError> {
        let mut out = Vec::new();
        for (k, v) in table {
            let over_ms: u64 = k
                .strip_suffix("ms")
                .and_then(|n| n.parse().ok())
                .filter(|n| THRESHOLDS_MS.contains(n))
                .ok_or_else(|| {
                    err(format!(
                        "{which}.{k}: a threshold is one of 1ms, 2ms, 4ms ... 64ms"
                    ))
                })?;
            let max_pct = v
                .as_float()
                .or(v.as_integer().map(|i| i as f64))
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| err(format!("{which}.{k}: a percentage from 0 to 100")))?;
            out.push(Limit { over_ms, max_pct });
        }
        Ok(out)
    };
    let read_limits = limits(&file.certify.read_limits, "certify.read_limits")?;
    let write_limits = limits(&file.certify.write_limits, "certify.write_limits")?;

    let mut streams = Vec::new();
    for (sname, body) in &file.stream {
        let body = body
            .as_table()
            .ok_or_else(|| err(format!("stream.{sname} must be a table")))?;
        let mut b = SpecBuilder::new(crate::plan::default_spec(vec![o.target.clone()]));
        b.spec.name = sname.clone();
        for (k, v) in body {
            let text = match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            b.set(k, &text)
                .map_err(|m| err(format!("stream.{sname}.{k}: {m}")))?;
        }
        for (k, v) in &o.knobs {
            b.set(k, v).map_err(|m| UsageError(format!("--{k}: {m}")))?;
        }
        let mut spec = b.finish();
        if spec.target_rate().is_none() {
            return Err(err(format!("stream.{sname}: needs rate_iops or rate_bw")));
        }
        spec.rate_iops = spec.rate_iops.map(|r| r * o.scale);
        spec.rate_bw = spec.rate_bw.map(|r| (r as f64 * o.scale) as u64);
        spec.runtime_s = Some(interval_s);
        spec.validate()?;
        streams.push(spec);
    }
    if streams.is_empty() {
        return Err(err("no [stream.NAME] tables".into()));
    }
    Ok(Profile {
        name: name.to_string(),
        duration_s,
        interval_s,
        stabilisation_s,
        read_limits,
        write_limits,
        streams,
        scale: o.scale,
    })
}

/// Runs the streams together for one interval of `dur_s` seconds.
pub fn run_interval(
    profile: &Profile,
    targets: &[PreparedTarget],
    index: u32,
    start_s: f64,
    dur_s: f64,
    stop: &StopFlag,
) -> anyhow::Result<CertifyInterval> {
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = profile
            .streams
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let spec = WorkloadSpec {
                    runtime_s: Some(dur_s),
                    ..spec.clone()
                };
                // One live line on a terminal: the first stream's.
                let live = i == 0 && std::io::IsTerminal::is_terminal(&std::io::stderr());
                scope.spawn(move || crate::run::run_workload(&spec, targets, stop, live))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("stream thread"))
            .collect::<anyhow::Result<Vec<_>>>()
    })?;
    let mut streams = Vec::new();
    for w in &results {
        let (direction, d) = if w.total.write.ios > w.total.read.ios {
            ("write", &w.total.write)
        } else {
            ("read", &w.total.read)
        };
        streams.push(stream_interval(&w.spec.name, direction, d)?);
    }
    Ok(CertifyInterval {
        index,
        start_s,
        dur_s,
        judged: start_s >= profile.stabilisation_s,
        streams,
    })
}

fn stream_interval(
    name: &str,
    direction: &str,
    d: &DirectionResult,
) -> anyhow::Result<StreamInterval> {
    let encoded = d.sched_histogram.as_deref().unwrap_or(&d.histogram);
    let h = LatencyHistogram::decode(encoded).map_err(anyhow::Error::msg)?;
    Ok(StreamInterval {
        name: name.to_string(),
        direction: direction.to_string(),
        ios: d.ios,
        iops: d.iops,
        bw_bytes: d.bw_bytes,
        over_pct: THRESHOLDS_MS
            .iter()
            .map(|ms| h.share_above(ms * 1_000_000) * 100.0)
            .collect(),
        p99_ns: h.value_at_percentile(99.0),
        max_ns: h.summary().max,
    })
}

/// Pass or fail against the profile's limits, with the reasons.
pub fn verdict(profile: &Profile, intervals: &[CertifyInterval]) -> (Option<bool>, Vec<String>) {
    let judged: Vec<&CertifyInterval> = intervals.iter().filter(|i| i.judged).collect();
    if judged.is_empty() {
        return (
            None,
            vec![format!(
                "not judged: no interval after the {} of stabilisation",
                format_duration(profile.stabilisation_s)
            )],
        );
    }
    let mut reasons = Vec::new();
    for interval in &judged {
        for s in &interval.streams {
            let limits = if s.direction == "read" {
                &profile.read_limits
            } else {
                &profile.write_limits
            };
            for l in limits {
                let i = THRESHOLDS_MS
                    .iter()
                    .position(|t| *t == l.over_ms)
                    .expect("validated");
                if s.over_pct[i] > l.max_pct {
                    reasons.push(format!(
                        "interval {} ({}): {:.2}% of {}s slower than {} ms, limit {}%",
                        interval.index,
                        format_duration(interval.start_s),
                        s.over_pct[i],
                        s.direction,
                        l.over_ms,
                        l.max_pct
                    ));
                }
            }
        }
    }
    (Some(reasons.is_empty()), reasons)
}

/// One line per interval: rates and slow shares of each stream.
pub fn interval_line(i: &CertifyInterval) -> String {
    let mut line = format!(
        "{:>4}  {:>8}  {:>5}",
        i.index,
        format_duration(i.start_s),
        if i.judged { "" } else { "(stab)" }
    );
    for s in &i.streams {
        let rate = if s.direction == "read" {
            format!("{:.0} r/s", s.iops)
        } else {
            format!("{:.1} MB/s", s.bw_bytes / 1e6)
        };
        let shares: Vec<String> = s.over_pct.iter().map(|p| format!("{p:5.2}")).collect();
        line.push_str(&format!("  | {} {rate:>11}  {}", s.name, shares.join(" ")));
    }
    line
}

pub fn header_line(profile: &Profile) -> String {
    let thresholds: Vec<String> = THRESHOLDS_MS
        .iter()
        .map(|t| format!("{:>5}", format!(">{t}")))
        .collect();
    let mut line = format!("{:>4}  {:>8}  {:>5}", "#", "start", "");
    for s in &profile.streams {
        line.push_str(&format!(
            "  | {} {:>11}  {}",
            s.name,
            "rate",
            thresholds.join(" ")
        ));
    }
    line.push_str("\n(shares in % of I/Os slower than N ms, from when each I/O was due)");
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overrides() -> ProfileOverrides {
        ProfileOverrides {
            scale: 1.0,
            target: "/tmp/x".into(),
            ..Default::default()
        }
    }

    const ACT: &str = include_str!("../presets/act-3x.toml");

    #[test]
    fn act_profile_parses_and_scales() {
        let p = parse_profile(ACT, "act-3x", &overrides()).unwrap();
        assert_eq!(
            (p.duration_s, p.interval_s, p.stabilisation_s),
            (86400.0, 3600.0, 3600.0)
        );
        assert_eq!(p.streams.len(), 2);
        assert_eq!(p.streams[0].rate_iops, Some(6000.0));
        assert_eq!(p.streams[0].bs, 1536);
        let o = ProfileOverrides {
            scale: 2.0,
            duration: Some("2m".into()),
            interval: Some("20s".into()),
            ..overrides()
        };
        let p = parse_profile(ACT, "act-3x", &o).unwrap();
        assert_eq!(p.streams[0].rate_iops, Some(12000.0));
        assert_eq!(p.streams[1].rate_bw, Some(36_000_000));
        assert_eq!((p.duration_s, p.interval_s), (120.0, 20.0));
        assert!(p.read_limits.contains(&Limit {
            over_ms: 1,
            max_pct: 5.0
        }));
    }

    #[test]
    fn bad_profiles_are_refused() {
        let e = parse_profile("[certify]\nduration='1h'\n", "x", &overrides()).unwrap_err();
        assert!(e.0.starts_with("profile x: line"), "{}", e.0);
        let o = ProfileOverrides {
            interval: Some("2h".into()),
            ..overrides()
        };
        let text = ACT.replace("duration = \"24h\"", "duration = \"1h\"");
        assert!(
            parse_profile(&text, "x", &o)
                .unwrap_err()
                .0
                .contains("--interval")
        );
    }

    fn interval(index: u32, judged: bool, read_over_1ms: f64) -> CertifyInterval {
        CertifyInterval {
            index,
            start_s: index as f64 * 20.0,
            dur_s: 20.0,
            judged,
            streams: vec![StreamInterval {
                name: "read".into(),
                direction: "read".into(),
                ios: 1,
                iops: 1.0,
                bw_bytes: 1.0,
                over_pct: vec![read_over_1ms, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                p99_ns: 0,
                max_ns: 0,
            }],
        }
    }

    #[test]
    fn verdict_ignores_stabilisation_and_names_the_failure() {
        let p = parse_profile(ACT, "act-3x", &overrides()).unwrap();
        let ok = [interval(0, false, 50.0), interval(1, true, 1.0)];
        assert_eq!(verdict(&p, &ok).0, Some(true));
        let bad = [interval(0, false, 0.0), interval(1, true, 6.5)];
        let (pass, reasons) = verdict(&p, &bad);
        assert_eq!(pass, Some(false));
        assert!(
            reasons[0].contains("6.50% of reads slower than 1 ms, limit 5%"),
            "{reasons:?}"
        );
        assert_eq!(verdict(&p, &[interval(0, false, 0.0)]).0, None);
    }
}
