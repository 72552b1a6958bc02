//! `fathom certify`: ACT-style latency certification. Several streams (for
//! ACT: small random reads and large sequential writes) run together at
//! fixed rates on one target for the whole duration; each interval reports
//! the share of reads and writes slower than 1, 2, 4 ... 64 ms (from when
//! each I/O was due), and the run passes when every judged interval stays
//! under the profile's limits and delivered the load it was given.
//!
//! The streams run once, on one continuous schedule: an I/O still in flight
//! at an interval's end is counted in the interval where it completes, at
//! its whole age, and the schedule does not start afresh, so a device that
//! falls behind cannot catch up by an interval boundary. Intervals are cut
//! from the per-second reports and their histograms dropped once summarised,
//! so memory does not grow with the duration.

use crate::engine::Direction;
use crate::measure::intervals::{CompletedSecond, DirectionSample};
use crate::measure::per_second;
use crate::result::certify::{
    CertifyInterval, CertifyResult, Limit, Profile, StreamInterval, THRESHOLDS_MS,
};
use crate::result::limit::LimitedBy;
use crate::run::target::PreparedTarget;
use crate::run::{RunOptions, Stream};
use crate::spec::WorkloadSpec;
use crate::spec::knobs::SpecBuilder;
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use crate::util::units::{format_duration, parse_duration};
use serde::Deserialize;

/// A judged interval fails when a stream delivered fewer I/Os than its
/// schedule asked for by more than this share ...
pub const RATE_TOLERANCE: f64 = 0.01;
/// ... plus this many I/Os, for the ones due just before the interval's end
/// that complete just after it (counted in the next one).
pub const RATE_SLACK_IOS: f64 = 2.0;

/// What the command line changes in a profile.
#[derive(Debug, Clone, Default)]
pub struct ProfileOverrides {
    pub duration: Option<String>,
    pub interval: Option<String>,
    pub stabilisation: Option<String>,
    pub scale: f64,
    /// The devices (or files) certified together; every stream runs at its
    /// rate on each.
    pub targets: Vec<String>,
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
    if interval_s < 1.0 || interval_s > duration_s || interval_s.fract() != 0.0 {
        return Err(UsageError(format!(
            "--interval {} must be whole seconds, at least 1s and at most --duration {}",
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
    let mut unjudged = Vec::new();
    for (sname, body) in &file.stream {
        let body = body
            .as_table()
            .ok_or_else(|| err(format!("stream.{sname} must be a table")))?;
        let mut b = SpecBuilder::new(crate::spec::WorkloadSpec::defaults(o.targets.clone()));
        b.spec.name = sname.clone();
        for (k, v) in body {
            if k == "judged" {
                match v.as_bool() {
                    Some(true) => {}
                    Some(false) => unjudged.push(sname.clone()),
                    None => return Err(err(format!("stream.{sname}.judged: true or false"))),
                }
                continue;
            }
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
        spec.runtime_s = Some(duration_s);
        spec.ramp_s = 0.0;
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
        unjudged,
    })
}

/// A certification ready to run: the profile as the command line changed
/// it, and how it differs from the profile as written.
#[derive(Debug, Clone)]
pub struct Plan {
    pub profile: Profile,
    pub notes: Vec<String>,
    /// What the self-check before the run found, when one ran.
    pub self_check: Option<crate::result::limit::SelfCheck>,
}

impl Plan {
    /// I/Os a second the profile's streams ask of all the devices.
    pub fn offered_iops(&self) -> f64 {
        let devices = self.targets().len() as f64;
        self.profile
            .streams
            .iter()
            .filter_map(WorkloadSpec::target_rate)
            .sum::<f64>()
            * devices
    }

    /// Runs the self-check on the plan's prepared `targets` (a burst of
    /// the null engine at the sizing stream's depth and jobs) and notes a
    /// profile that asks for more than half of what it found.
    pub fn self_check(
        &mut self,
        targets: &[PreparedTarget],
        stop: &StopFlag,
    ) -> anyhow::Result<()> {
        let check = crate::run::self_check::measure(self.sizing_stream(), targets, stop)?;
        if let Some(note) = check.note(self.offered_iops()) {
            self.notes.push(format!("self-check: the profile {note}"));
        }
        self.self_check = Some(check);
        Ok(())
    }
}

/// Reads a profile and adapts it to the run: a run shorter than twice the
/// stabilisation period judges all but its first interval.
pub fn plan(text: &str, name: &str, o: &ProfileOverrides) -> Result<Plan, UsageError> {
    let mut profile = parse_profile(text, name, o)?;
    let mut notes = Vec::new();
    if profile.duration_s < 2.0 * profile.stabilisation_s {
        notes.push(format!(
            "stabilisation shortened from {} to the first interval: the run is shorter than twice it",
            format_duration(profile.stabilisation_s)
        ));
        profile.stabilisation_s = profile.interval_s;
    }
    let judged_from = profile.stabilisation_s + profile.interval_s;
    if profile.duration_s < judged_from {
        return Err(UsageError(format!(
            "--duration {} leaves no interval to judge after the stabilisation's {}: give at least {}",
            format_duration(profile.duration_s),
            format_duration(profile.stabilisation_s),
            format_duration(judged_from)
        )));
    }
    Ok(Plan {
        profile,
        notes,
        self_check: None,
    })
}

impl Plan {
    /// The devices, as named on the command line.
    pub fn targets(&self) -> &[String] {
        &self.profile.streams[0].targets
    }

    /// "/dev/sdb" or "/dev/sdb, /dev/sdc".
    pub fn target_list(&self) -> String {
        self.targets().join(", ")
    }

    /// The stream the targets are prepared for: the first that writes, so
    /// that a new file is laid out at the size writes need; else the first.
    pub fn sizing_stream(&self) -> &WorkloadSpec {
        let streams = &self.profile.streams;
        streams
            .iter()
            .find(|s| s.rw.writes(s.rwmix_read))
            .unwrap_or(&streams[0])
    }
}

/// Runs the profile's streams together on every device for the whole
/// duration and cuts the result into intervals, per device and over all of
/// them. `targets` are the plan's, prepared. `on_interval` is called with
/// the result so far after each interval (to print it, or rewrite a file).
pub fn run(
    plan: &Plan,
    targets: &[PreparedTarget],
    stop: &StopFlag,
    board: Option<&crate::measure::live::LiveBoard>,
    on_interval: &mut dyn FnMut(&CertifyResult) -> anyhow::Result<()>,
) -> anyhow::Result<CertifyResult> {
    let profile = &plan.profile;
    let mut result = CertifyResult {
        target: plan.target_list(),
        thresholds_ms: THRESHOLDS_MS.to_vec(),
        intervals: Vec::new(),
        pass: None,
        reasons: Vec::new(),
        notes: plan.notes.clone(),
        interrupted: false,
        profile: profile.clone(),
        limited_by: None,
        host_decided: false,
        self_check: plan.self_check.clone(),
    };
    let per_device = per_device(profile, targets.len());
    let streams: Vec<Stream> = per_device
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let d = i % targets.len();
            Stream {
                spec,
                targets: &targets[d..=d],
            }
        })
        .collect();
    let options = RunOptions {
        live: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        keep_intervals: false,
        start_at: None,
        barrier: None,
        record: None,
        board,
        after_second: None,
    };
    if let Some(board) = board {
        board.workload(&profile.name);
    }
    let mut cutter = IntervalCutter::new(profile, plan.targets().to_vec());
    let mut callback_error = None;
    // Those watching learn the verdict so far at each interval's end.
    let said = |result: &CertifyResult| {
        if let (Some(board), Some(last)) = (board, result.intervals.last()) {
            let so_far = match verdict(profile, &result.intervals).0 {
                Some(true) => "pass so far",
                Some(false) => "fail",
                None => "not judged yet",
            };
            board.verdict(format!("certify interval {}: {so_far}", last.index));
        }
    };
    let runs = crate::run::run_streams(&streams, stop, options, &mut |s, second| {
        for interval in cutter.add(s, second) {
            result.intervals.push(interval);
            said(&result);
            if callback_error.is_none() {
                callback_error = on_interval(&result).err();
            }
        }
    })?;
    if let Some(e) = callback_error {
        return Err(e);
    }
    for interval in cutter.finish() {
        result.intervals.push(interval);
        said(&result);
        on_interval(&result)?;
    }
    result.interrupted = stop.is_set();
    let verdicts: Vec<LimitedBy> = runs.iter().filter_map(crate::run::limit::judge).collect();
    result.limited_by = LimitedBy::least_the_targets(&verdicts).cloned();
    if !result.interrupted {
        let (pass, reasons) = verdict(profile, &result.intervals);
        result.pass = pass;
        result.reasons.extend(reasons);
        let late = result.reasons.iter().any(|r| r.contains(HOST_DECIDED_MARK));
        let host = result
            .limited_by
            .as_ref()
            .is_some_and(|l| !l.by.is_the_targets());
        result.host_decided = pass == Some(false) && (late || host);
        if let Some(limit) = result.limited_by.as_ref().filter(|_| result.host_decided) {
            result.reasons.push(format!(
                "the host, not the target, decided this verdict: {limit}; certify on an idle host"
            ));
        }
    }
    if let (Some(board), Some(limit)) = (board, &result.limited_by) {
        board.verdict(format!("certify: limited by {}", limit.by.name()));
    }
    Ok(result)
}

/// One stream per profile stream and device (stream-major), so that each
/// device's seconds arrive on their own; each device draws its own offsets.
fn per_device(profile: &Profile, devices: usize) -> Vec<WorkloadSpec> {
    profile
        .streams
        .iter()
        .flat_map(|spec| {
            (0..devices).map(move |d| WorkloadSpec {
                seed: spec.seed.wrapping_add(d as u64),
                ..spec.clone()
            })
        })
        .collect()
}

/// The interval a stream is filling on one device: its index and the
/// seconds so far.
#[derive(Clone, Default)]
struct OpenInterval {
    index: u64,
    sample: DirectionSample,
    dur_s: f64,
}

/// Gathers the seconds of each stream on each device into the profile's
/// intervals and hands out an interval once every one has finished it.
/// Streams are numbered stream-major: stream `p` on device `d` is
/// `p * devices + d`.
struct IntervalCutter<'a> {
    profile: &'a Profile,
    devices: Vec<String>,
    seconds_per_interval: u64,
    /// Per stream and device: the interval being filled.
    open: Vec<OpenInterval>,
    /// Intervals some streams have finished, by index.
    done: std::collections::BTreeMap<u64, Vec<Option<OpenInterval>>>,
}

impl<'a> IntervalCutter<'a> {
    fn new(profile: &'a Profile, devices: Vec<String>) -> Self {
        let slots = profile.streams.len() * devices.len();
        IntervalCutter {
            profile,
            devices,
            seconds_per_interval: profile.interval_s as u64,
            open: vec![OpenInterval::default(); slots],
            done: Default::default(),
        }
    }

    fn spec(&self, slot: usize) -> &'a WorkloadSpec {
        &self.profile.streams[slot / self.devices.len()]
    }

    fn add(&mut self, slot: usize, second: &CompletedSecond) -> Vec<CertifyInterval> {
        let index = second.index / self.seconds_per_interval;
        while self.open[slot].index < index {
            self.close(slot);
        }
        let direction = main_direction(self.spec(slot));
        let open = &mut self.open[slot];
        open.sample.add(&second.directions[direction as usize]);
        open.dur_s += second.dur_s;
        self.ready()
    }

    fn finish(mut self) -> Vec<CertifyInterval> {
        for slot in 0..self.open.len() {
            let open = &self.open[slot];
            if open.dur_s > 0.0 || open.sample.scheduled.count() > 0 {
                self.close(slot);
            }
        }
        let mut out = self.ready();
        // Intervals some stream never reported (an interrupted run): that
        // stream shows nothing for them.
        for (index, slots) in std::mem::take(&mut self.done) {
            let slots = slots.into_iter().map(Option::unwrap_or_default).collect();
            out.push(self.interval(index, slots));
        }
        out
    }

    fn close(&mut self, slot: usize) {
        let open = std::mem::take(&mut self.open[slot]);
        let index = open.index;
        self.open[slot].index = index + 1;
        let slots = self.open.len();
        self.done.entry(index).or_insert_with(|| vec![None; slots])[slot] = Some(open);
    }

    fn ready(&mut self) -> Vec<CertifyInterval> {
        let mut out = Vec::new();
        while let Some(entry) = self.done.first_entry() {
            if entry.get().iter().any(Option::is_none) {
                break;
            }
            let (index, slots) = entry.remove_entry();
            out.push(self.interval(index, slots.into_iter().flatten().collect()));
        }
        out
    }

    /// Interval `index` from every stream's and device's seconds: with
    /// several devices, a row per device and one over all of them.
    fn interval(&self, index: u64, slots: Vec<OpenInterval>) -> CertifyInterval {
        let mut streams = Vec::new();
        for (p, spec) in self.profile.streams.iter().enumerate() {
            let of_stream = &slots[p * self.devices.len()..(p + 1) * self.devices.len()];
            let mut all = DirectionSample::default();
            let mut dur_s: f64 = 0.0;
            for (device, slot) in self.devices.iter().zip(of_stream) {
                all.add(&slot.sample);
                dur_s = dur_s.max(slot.dur_s);
                if self.devices.len() > 1 {
                    streams.push(summarise(spec, Some(device), 1, &slot.sample, slot.dur_s));
                }
            }
            streams.push(summarise(spec, None, self.devices.len(), &all, dur_s));
        }
        let start_s = (index * self.seconds_per_interval) as f64;
        // The schedule's length, not what the streams managed: a stream
        // that delivered nothing still had a whole interval to deliver in.
        let dur_s = (self.profile.duration_s - start_s).min(self.profile.interval_s);
        CertifyInterval {
            index: index as u32 + 1,
            start_s,
            dur_s,
            judged: start_s >= self.profile.stabilisation_s,
            streams,
        }
    }
}

/// The direction a stream is judged on: the one it mostly issues.
fn main_direction(spec: &WorkloadSpec) -> Direction {
    Direction::mostly(spec.rw.read_percent(spec.rwmix_read))
}

/// A stream's figures for one interval on `target` (None: over all
/// `devices` of them, each offered the stream's rate).
fn summarise(
    spec: &WorkloadSpec,
    target: Option<&String>,
    devices: usize,
    d: &DirectionSample,
    dur_s: f64,
) -> StreamInterval {
    // Shares are of every I/O that was due: completed ones, and at the end
    // of the run those without an answer, at their age.
    let h = &d.scheduled;
    StreamInterval {
        name: spec.name.clone(),
        target: target.cloned(),
        direction: main_direction(spec),
        ios: d.ios,
        iops: per_second(d.ios, dur_s),
        bw_bytes: per_second(d.bytes, dur_s),
        offered_iops: spec.target_rate().unwrap_or(0.0) * devices as f64,
        unanswered: d.unanswered,
        over_pct: THRESHOLDS_MS
            .iter()
            .map(|ms| h.share_above(ms * 1_000_000) * 100.0)
            .collect(),
        p99_ns: h.value_at_percentile(99.0),
        max_ns: h.summary().max,
        late_issue_pct: d.issue_lag.share_above(crate::measure::issue::LATE_NS) * 100.0,
    }
}

impl StreamInterval {
    /// Why this stream did not deliver its load over `dur_s`, if it did not.
    fn shortfall(&self, dur_s: f64) -> Option<String> {
        let expected = self.offered_iops * dur_s;
        let floor = expected * (1.0 - RATE_TOLERANCE) - RATE_SLACK_IOS;
        ((self.ios as f64) < floor).then(|| {
            format!(
                "delivered {} of {:.0} {}s due ({:.1}%), more than {}% short of the schedule",
                self.ios,
                expected,
                self.direction,
                self.ios as f64 * 100.0 / expected,
                RATE_TOLERANCE * 100.0
            )
        })
    }
}

/// What a reason says when I/Os that went out late account for it.
const HOST_DECIDED_MARK: &str = "went out more than 1 ms late";

/// Pass or fail against the profile's limits, with the reasons. A failure
/// that I/Os issued late account for says so: the host, not the target,
/// made them slow.
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
            if let Some(why) = s.shortfall(interval.dur_s) {
                reasons.push(format!(
                    "interval {} ({}): stream {}: {why}",
                    interval.index,
                    format_duration(interval.start_s),
                    s.label()
                ));
            }
            for l in profile.stream_limits(&s.name, s.direction) {
                let i = THRESHOLDS_MS
                    .iter()
                    .position(|t| *t == l.over_ms)
                    .expect("validated");
                if s.over_pct[i] > l.max_pct {
                    let late = match s.over_pct[i] - s.late_issue_pct <= l.max_pct {
                        true => format!(
                            "; {:.2}% of them {HOST_DECIDED_MARK} (the host held them back, not the target)",
                            s.late_issue_pct
                        ),
                        false => String::new(),
                    };
                    reasons.push(format!(
                        "interval {} ({}): stream {}: {:.2}% of {}s slower than {} ms, limit {}%{late}",
                        interval.index,
                        format_duration(interval.start_s),
                        s.label(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn overrides() -> ProfileOverrides {
        ProfileOverrides {
            scale: 1.0,
            targets: vec!["/tmp/x".into()],
            ..Default::default()
        }
    }

    const ACT: &str = include_str!("../../presets/act-3x.toml");

    /// The columns line up: the `|` of each stream sits in the same column
    /// in the heading, a stabilisation interval's line and a judged one's,
    /// and reads carry thousands separators.
    #[test]
    fn the_interval_table_lines_up() {
        use crate::result::certify::{CertifyInterval, StreamInterval};
        let p = parse_profile(ACT, "act-3x", &overrides()).unwrap();
        let stream = |s: &crate::spec::WorkloadSpec| StreamInterval {
            name: s.name.clone(),
            target: None,
            direction: crate::spec::Direction::Read,
            ios: 1,
            iops: 6000.0,
            bw_bytes: 1e6,
            offered_iops: 6000.0,
            unanswered: 0,
            over_pct: vec![0.0; crate::result::certify::THRESHOLDS_MS.len()],
            p99_ns: 1,
            max_ns: 1,
            late_issue_pct: 0.0,
        };
        let interval = |judged| CertifyInterval {
            index: 1,
            start_s: 3600.0,
            dur_s: 3600.0,
            judged,
            streams: p.streams.iter().map(stream).collect(),
        };
        let bars = |line: &str| -> Vec<usize> {
            line.char_indices()
                .filter(|(_, c)| *c == '|')
                .map(|(i, _)| line[..i].chars().count())
                .collect()
        };
        let heading = crate::report::certify::header_line(&p);
        let heading = heading.lines().next().unwrap().to_string();
        let stab = crate::report::certify::interval_line(&interval(false));
        let judged = crate::report::certify::interval_line(&interval(true));
        assert_eq!(bars(&heading), bars(&stab), "\n{heading}\n{stab}");
        assert_eq!(bars(&heading), bars(&judged), "\n{heading}\n{judged}");
        assert!(
            stab.contains("(stab)") && stab.contains("6,000 r/s"),
            "{stab}"
        );
    }

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
        // One interval as long as the whole run is allowed; a fraction of a
        // second is not.
        let whole = ProfileOverrides {
            duration: Some("20s".into()),
            interval: Some("20s".into()),
            ..overrides()
        };
        assert!(parse_profile(ACT, "x", &whole).is_ok());
        let fraction = ProfileOverrides {
            interval: Some("1500ms".into()),
            ..whole
        };
        assert!(
            parse_profile(ACT, "x", &fraction)
                .unwrap_err()
                .0
                .contains("whole seconds")
        );
        // The line named is the one at fault.
        let e = parse_profile("[certify]\n\nduration = 1h\n", "x", &overrides()).unwrap_err();
        assert!(e.0.starts_with("profile x: line 3:"), "{}", e.0);
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
        delivering(index, judged, read_over_1ms, 20_000)
    }

    /// An interval of 20 s at an offered 1,000 reads/s that delivered `ios`.
    fn delivering(index: u32, judged: bool, read_over_1ms: f64, ios: u64) -> CertifyInterval {
        CertifyInterval {
            index,
            start_s: index as f64 * 20.0,
            dur_s: 20.0,
            judged,
            streams: vec![StreamInterval {
                name: "read".into(),
                target: None,
                direction: Direction::Read,
                ios,
                iops: ios as f64 / 20.0,
                bw_bytes: 1.0,
                offered_iops: 1000.0,
                unanswered: 0,
                over_pct: vec![read_over_1ms, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                p99_ns: 0,
                max_ns: 0,
                late_issue_pct: 0.0,
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
        // A limit is a share allowed: exactly 5% over 1 ms still passes.
        assert_eq!(verdict(&p, &[interval(1, true, 5.0)]).0, Some(true));
    }

    #[test]
    fn a_failure_that_late_issues_explain_is_the_hosts() {
        let p = parse_profile(ACT, "act-3x", &overrides()).unwrap();
        let mut late = interval(1, true, 6.5);
        late.streams[0].late_issue_pct = 2.0;
        let (pass, reasons) = verdict(&p, &[late.clone()]);
        assert_eq!(pass, Some(false));
        assert!(reasons[0].contains(HOST_DECIDED_MARK), "{reasons:?}");
        // Too few went out late to explain the failure: the target's.
        late.streams[0].late_issue_pct = 1.0;
        let (_, reasons) = verdict(&p, &[late]);
        assert!(!reasons[0].contains(HOST_DECIDED_MARK), "{reasons:?}");
    }

    #[test]
    fn an_interval_short_of_its_load_fails_even_with_no_slow_io() {
        let p = parse_profile(ACT, "act-3x", &overrides()).unwrap();
        // 1% of 20,000 plus the slack of 2 is the most that may be missing.
        let just = 20_000 - 200 - 2;
        assert_eq!(verdict(&p, &[delivering(1, true, 0.0, just)]).0, Some(true));
        let (pass, reasons) = verdict(&p, &[delivering(1, true, 0.0, just - 1)]);
        assert_eq!(pass, Some(false));
        assert!(
            reasons[0].contains("delivered 19797 of 20000"),
            "{reasons:?}"
        );
        // Nothing completed at all: an empty histogram is no pass.
        let (pass, reasons) = verdict(&p, &[delivering(1, true, 0.0, 0)]);
        assert_eq!(pass, Some(false), "{reasons:?}");
        // Stabilisation intervals are not judged on their rate either.
        assert_eq!(
            verdict(&p, &[delivering(0, false, 0.0, 0), interval(1, true, 0.0)]).0,
            Some(true)
        );
    }

    /// A second of stream 0 (reads) or 1 (writes).
    fn second(index: u64, ios: u64, late_ns: u64) -> CompletedSecond {
        let mut sample = DirectionSample {
            ios,
            bytes: ios * 1536,
            ..Default::default()
        };
        sample.scheduled.record_n(late_ns, ios);
        let mut directions: [DirectionSample; 3] = Default::default();
        // The tests give writes 10 I/Os a second, reads 100.
        directions[usize::from(ios == 10)] = sample;
        CompletedSecond {
            index,
            dur_s: 1.0,
            directions,
        }
    }

    #[test]
    fn intervals_are_cut_from_seconds_once_every_stream_has_them() {
        let o = ProfileOverrides {
            duration: Some("4s".into()),
            interval: Some("2s".into()),
            ..overrides()
        };
        let p = parse_profile(ACT, "act-3x", &o).unwrap();
        let mut cutter = IntervalCutter::new(&p, vec!["/tmp/x".into()]);
        assert!(cutter.add(0, &second(0, 100, 500_000)).is_empty());
        assert!(cutter.add(0, &second(1, 100, 5_000_000)).is_empty());
        // The read stream starts interval 2: interval 1 waits for writes.
        assert!(cutter.add(0, &second(2, 100, 500_000)).is_empty());
        assert!(cutter.add(1, &second(0, 10, 500_000)).is_empty());
        assert!(cutter.add(1, &second(1, 10, 500_000)).is_empty());
        let first = cutter.add(1, &second(2, 10, 500_000));
        assert_eq!(first.len(), 1);
        let read = &first[0].streams[0];
        assert_eq!((read.ios, first[0].index, first[0].dur_s), (200, 1, 2.0));
        // Half of the reads of the first two seconds were over 4 ms.
        assert!(
            (read.over_pct[2] - 50.0).abs() < 0.01,
            "{:?}",
            read.over_pct
        );
        let rest = cutter.finish();
        assert_eq!(rest.len(), 1);
        assert_eq!((rest[0].index, rest[0].start_s), (2, 2.0));
        assert_eq!(rest[0].streams[1].ios, 10);
    }

    #[test]
    fn the_last_interval_is_reported_even_when_nothing_completed_in_it() {
        let o = ProfileOverrides {
            duration: Some("4s".into()),
            interval: Some("2s".into()),
            ..overrides()
        };
        let p = parse_profile(ACT, "act-3x", &o).unwrap();
        let stalled = |index| CompletedSecond {
            index,
            dur_s: 1.0,
            directions: Default::default(),
        };
        let mut cutter = IntervalCutter::new(&p, vec!["/tmp/x".into()]);
        for (stream, ios) in [(0, 100), (1, 10)] {
            cutter.add(stream, &second(0, ios, 500_000));
            cutter.add(stream, &second(1, ios, 500_000));
            // The device stalls: the third second completes nothing.
            cutter.add(stream, &stalled(2));
        }
        let rest = cutter.finish();
        assert_eq!(rest.len(), 1, "{rest:?}");
        assert_eq!((rest[0].index, rest[0].streams[0].ios), (2, 0));

        // I/Os that had no answer at the end arrive with no time of their
        // own: they still close the interval they belong to.
        let mut cutter = IntervalCutter::new(&p, vec!["/tmp/x".into()]);
        let mut unanswered = second(2, 100, 9_000_000);
        unanswered.dur_s = 0.0;
        cutter.add(0, &second(0, 100, 500_000));
        cutter.add(0, &second(1, 100, 500_000));
        cutter.add(0, &unanswered);
        for i in 0..2 {
            cutter.add(1, &second(i, 10, 500_000));
        }
        let rest = cutter.finish();
        let last = rest.last().expect("the unanswered interval");
        assert_eq!((last.index, last.streams[0].ios), (2, 100));

        // A run that ends on an interval boundary has nothing left over.
        let mut cutter = IntervalCutter::new(&p, vec!["/tmp/x".into()]);
        let mut cut = Vec::new();
        for i in 0..4 {
            cut.extend(cutter.add(0, &second(i, 100, 500_000)));
            cut.extend(cutter.add(1, &second(i, 10, 500_000)));
        }
        cut.extend(cutter.finish());
        assert_eq!(cut.len(), 2, "{cut:?}");
        // Stopped before any second was reported: no interval at all.
        assert!(
            IntervalCutter::new(&p, vec!["/tmp/x".into()])
                .finish()
                .is_empty()
        );

        // A run of 3 s in intervals of 2 s: the last interval is 1 s long,
        // and its schedule is judged over that second only.
        let o = ProfileOverrides {
            duration: Some("3s".into()),
            interval: Some("2s".into()),
            stabilisation: Some("1s".into()),
            ..overrides()
        };
        let p = parse_profile(ACT, "act-3x", &o).unwrap();
        let mut cutter = IntervalCutter::new(&p, vec!["/tmp/x".into()]);
        for i in 0..3 {
            cutter.add(0, &second(i, 100, 500_000));
            cutter.add(1, &second(i, 10, 500_000));
        }
        let last = cutter.finish();
        assert_eq!(
            (last[0].index, last[0].start_s, last[0].dur_s),
            (2, 2.0, 1.0)
        );
    }

    #[test]
    fn act6_derives_its_large_block_load_and_judges_only_record_reads() {
        let text = include_str!("../../presets/act6-3x.toml");
        let p = parse_profile(text, "act6-3x", &overrides()).unwrap();
        let rate = |name: &str| {
            p.streams
                .iter()
                .find(|s| s.name == name)
                .and_then(|s| s.rate_iops)
                .unwrap()
        };
        assert_eq!(rate("read"), 6000.0);
        // 3,000 record writes/s, 85 records of 1536 B per 128 KiB block,
        // defrag amplification 2.
        let large = 3000.0 / (131072 / 1536) as f64 * 2.0;
        assert!((rate("large_block_write") - large).abs() < 0.001);
        assert!((rate("large_block_read") - large).abs() < 0.001);
        assert_eq!(p.unjudged, ["large_block_read", "large_block_write"]);
        assert!(
            p.stream_limits("large_block_read", Direction::Read)
                .is_empty()
        );
        assert_eq!(p.stream_limits("read", Direction::Read).len(), 3);
        let bad = text.replace("judged = false", "judged = \"no\"");
        let e = parse_profile(&bad, "x", &overrides()).unwrap_err();
        assert!(e.0.contains("judged: true or false"), "{}", e.0);
    }

    #[test]
    fn unjudged_streams_must_still_deliver_their_load() {
        let text = include_str!("../../presets/act6-3x.toml");
        let p = parse_profile(text, "act6-3x", &overrides()).unwrap();
        let large = |ios: u64| {
            let mut i = delivering(1, true, 90.0, ios);
            i.streams[0].name = "large_block_read".into();
            i
        };
        // 90% over 1 ms is not judged on a large-block stream ...
        assert_eq!(verdict(&p, &[large(20_000)]).0, Some(true));
        // ... but falling behind its schedule is.
        let (pass, reasons) = verdict(&p, &[large(10_000)]);
        assert_eq!(pass, Some(false));
        assert!(
            reasons[0].contains("stream large_block_read: delivered"),
            "{reasons:?}"
        );
    }

    #[test]
    fn each_device_draws_its_own_offsets() {
        let p = parse_profile(ACT, "act-3x", &overrides()).unwrap();
        let specs = per_device(&p, 3);
        assert_eq!(specs.len(), 6);
        let seeds: Vec<u64> = specs[..3].iter().map(|s| s.seed).collect();
        assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2], "{seeds:?}");
        assert_eq!(specs[3].name, p.streams[1].name, "stream-major");
    }

    #[test]
    fn several_devices_give_a_row_each_and_one_over_all() {
        let o = ProfileOverrides {
            duration: Some("2s".into()),
            interval: Some("2s".into()),
            stabilisation: Some("0s".into()),
            targets: vec!["a".into(), "b".into()],
            ..overrides()
        };
        let p = parse_profile(ACT, "act-3x", &o).unwrap();
        let mut cutter = IntervalCutter::new(&p, vec!["a".into(), "b".into()]);
        // Slots: read on a, read on b, write on a, write on b.
        let mut cut = Vec::new();
        for i in 0..2 {
            cut.extend(cutter.add(0, &second(i, 100, 500_000)));
            cut.extend(cutter.add(1, &second(i, 100, 5_000_000)));
            cut.extend(cutter.add(2, &second(i, 10, 500_000)));
            cut.extend(cutter.add(3, &second(i, 10, 500_000)));
        }
        cut.extend(cutter.finish());
        assert_eq!(cut.len(), 1);
        let rows = &cut[0].streams;
        let labels: Vec<String> = rows.iter().map(StreamInterval::label).collect();
        assert_eq!(
            labels,
            [
                "read on a",
                "read on b",
                "read",
                "write on a",
                "write on b",
                "write"
            ]
        );
        // Reads on b were all over 4 ms; over both devices, half were.
        assert_eq!(rows[1].over_pct[2], 100.0);
        assert!((rows[2].over_pct[2] - 50.0).abs() < 0.01);
        assert_eq!((rows[2].ios, rows[2].offered_iops), (400, 12_000.0));
        assert_eq!((rows[0].ios, rows[0].offered_iops), (200, 6_000.0));
        // The write rows are the write stream's seconds, not the reads'.
        assert_eq!((rows[3].ios, rows[4].ios, rows[5].ios), (20, 20, 40));
        // Each device is judged on its own as well as the total (these
        // seconds are far short of ACT's rate too: only the slow shares are
        // looked at here).
        let (pass, reasons) = verdict(&p, &cut);
        assert_eq!(pass, Some(false));
        let slow: Vec<&String> = reasons.iter().filter(|r| r.contains("slower")).collect();
        assert!(
            slow.iter().any(|r| r.contains("stream read on b:")),
            "{slow:?}"
        );
        assert!(slow.iter().any(|r| r.contains("stream read:")), "{slow:?}");
        assert!(
            !slow.iter().any(|r| r.contains("stream read on a:")),
            "{slow:?}"
        );
    }

    #[test]
    fn a_run_shorter_than_twice_its_stabilisation_judges_all_but_its_first_interval() {
        let o = |duration: &str| ProfileOverrides {
            duration: Some(duration.into()),
            interval: Some("10s".into()),
            stabilisation: Some("30s".into()),
            ..overrides()
        };
        let short = plan(ACT, "act-3x", &o("50s")).unwrap();
        assert_eq!(short.profile.stabilisation_s, 10.0);
        assert_eq!(short.notes.len(), 1);
        assert!(
            short.notes[0].contains("shortened from 30s"),
            "{:?}",
            short.notes
        );
        // Exactly twice is long enough.
        for duration in ["60s", "2m"] {
            let long = plan(ACT, "act-3x", &o(duration)).unwrap();
            assert_eq!(long.profile.stabilisation_s, 30.0, "{duration}");
            assert!(long.notes.is_empty(), "{:?}", long.notes);
        }
    }

    #[test]
    fn at_most_100000_intervals() {
        let o = |duration: &str| ProfileOverrides {
            duration: Some(duration.into()),
            interval: Some("1s".into()),
            stabilisation: Some("1s".into()),
            ..overrides()
        };
        assert!(parse_profile(ACT, "act-3x", &o("100000s")).is_ok());
        let e = parse_profile(ACT, "act-3x", &o("100001s")).unwrap_err();
        assert!(e.0.contains("100,000 intervals"), "{}", e.0);
    }
}
