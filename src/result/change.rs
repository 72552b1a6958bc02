//! How a result changed against a baseline, with the noise taken into
//! account: each figure's relative change with a confidence interval from
//! a moving-block bootstrap over the runs' seconds (percentiles from the
//! resampled seconds' histograms), and a verdict: improved, regressed or
//! within noise. Seconds are resampled in blocks, not one by one, because
//! a device's seconds are not independent (a slow stretch of garbage
//! collection lasts several): blocks keep that correlation, so a run that
//! wanders gets the wide interval it deserves.

use super::kind::{Kind, Rate, Series};
use super::workload::{DirectionPair, WorkloadResult};
use super::{Document, RunResult};
use crate::measure::histogram::{LatencyHistogram, percentile_of_counts};
use crate::measure::intervals::Interval;
use crate::util::error::UsageError;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

/// A figure compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Figure {
    Iops,
    Bandwidth,
    P50,
    P99,
    #[serde(rename = "p99.9")]
    P999,
    /// A training run's accelerator utilization.
    Au,
}

impl Figure {
    pub const ALL: [Figure; 6] = [
        Figure::Iops,
        Figure::Bandwidth,
        Figure::P50,
        Figure::P99,
        Figure::P999,
        Figure::Au,
    ];

    /// The figure's name; the rate's is the series' own (`Rate::name`).
    pub fn name(self) -> &'static str {
        match self {
            Figure::Au => "AU",
            Figure::Iops => "IOPS",
            Figure::Bandwidth => "bandwidth",
            Figure::P50 => "p50",
            Figure::P99 => "p99",
            Figure::P999 => "p99.9",
        }
    }

    /// Whether more is better (rates) or worse (latencies).
    pub fn more_is_better(self) -> bool {
        matches!(self, Figure::Iops | Figure::Bandwidth | Figure::Au)
    }

    /// How far this figure differs between runs of one workload on one
    /// host beyond what a run's seconds show, at the least: `noise` for
    /// the counts and the median; more for the tails, which a busy host
    /// moves from run to run far more than the median (five identical
    /// null-engine runs beside stress-ng --cpu 2 differed at p99.9 with
    /// intervals reaching +19% at their low end, and the change itself up
    /// to +172%; p99 moves less).
    pub fn noise_floor(self, noise: f64) -> f64 {
        match self {
            Figure::Iops | Figure::Bandwidth | Figure::P50 | Figure::Au => noise,
            Figure::P99 => noise.max(0.10),
            Figure::P999 => noise.max(0.25),
        }
    }

    /// The slowest 1% and beyond: a few hundred I/Os of a short run or
    /// fewer, where a busy host's time slices land first.
    fn is_tail(self) -> bool {
        matches!(self, Figure::P99 | Figure::P999)
    }

    fn percentile(self) -> Option<f64> {
        match self {
            Figure::P50 => Some(50.0),
            Figure::P99 => Some(99.0),
            Figure::P999 => Some(99.9),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    /// The whole interval inside the noise floor.
    WithinNoise,
    /// The interval reaches past the noise floor without being all past
    /// it: it may have changed, by less than it shows or not at all.
    Uncertain,
    /// Past the noise, but a side was limited by something not the target
    /// (the host, fathom, the rate asked): the change may be theirs, so it
    /// is neither a regression nor an improvement of the target.
    Inconclusive,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within noise",
            Verdict::Uncertain => "uncertain",
            Verdict::Inconclusive => "inconclusive",
        })
    }
}

/// One figure's change: `new / baseline - 1`, with its interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub figure: Figure,
    pub baseline: f64,
    pub new: f64,
    pub change: f64,
    /// The interval's bounds (relative changes), at `confidence`.
    pub low: f64,
    pub high: f64,
    /// How far past zero the whole interval must reach for a change to
    /// count (a share): what runs of one workload differ by beyond their
    /// seconds (`Figure::noise_floor`).
    #[serde(default)]
    pub noise_floor: f64,
    pub verdict: Verdict,
}

impl Change {
    /// Whether the whole interval is past `threshold` (a share, e.g.
    /// 0.05) on the worse side, and the target's doing (an inconclusive
    /// change never is).
    pub fn regressed_beyond(&self, threshold: f64) -> bool {
        self.verdict == Verdict::Regressed && self.worse_beyond(threshold)
    }

    /// Whether a busy host that took `share` of the workers' time could
    /// have made this change: a rate moved by no more than it reaches, a
    /// percentile in the slowest I/Os it reaches.
    fn within_reach_of(&self, share: f64) -> bool {
        let reach = share * HOST_REACH;
        match self.figure.percentile() {
            Some(p) => 1.0 - p / 100.0 <= reach,
            None => self.change.abs() <= reach,
        }
    }
    /// Whether the runs suggest a change worse than `threshold` (a central
    /// figure's estimate is past twice it) that their noise keeps from
    /// being shown (the interval reaches back inside it).
    pub fn too_noisy_for(&self, threshold: f64) -> bool {
        // A tail from seconds of I/O rests on a few hundred samples or
        // fewer: its estimate strays past a few percent between identical
        // runs as often as not, so only a clear change of it counts. The
        // central figures move with any slowdown worth stopping, and only
        // an estimate of twice the threshold is held up: a busy host moves
        // identical runs' rates by the threshold itself.
        if self.figure.is_tail() {
            return false;
        }
        let worse = match self.figure.more_is_better() {
            true => -self.change,
            false => self.change,
        };
        worse > 2.0 * threshold && !self.worse_beyond(threshold)
    }

    /// Whether the whole interval is past `threshold` on the worse side,
    /// whoever's doing it is.
    pub fn worse_beyond(&self, threshold: f64) -> bool {
        match self.figure.more_is_better() {
            true => self.high < -threshold,
            false => self.low > threshold,
        }
    }
}

/// A workload's direction compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionChange {
    pub workload: String,
    /// The part compared: a disk's direction, an object store's
    /// operation, a tree or metadata phase, a training run's samples.
    pub direction: String,
    /// What the part's rate counts (its `iops` figure): I/Os, requests,
    /// samples, operations.
    #[serde(default)]
    pub rate: Rate,
    /// Slices (seconds, unless `slice_s` says otherwise) each side had to
    /// resample.
    pub seconds: (usize, usize),
    /// The new run's slice length: a second, or less for the short
    /// phases of tree and metadata runs.
    #[serde(default = "one_second")]
    pub slice_s: f64,
    pub changes: Vec<Change>,
    /// The most a busy host took of a side's workers' time, where the
    /// host held a side back: the figures it reaches are left unjudged,
    /// the rest judged as the target's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_share: Option<f64>,
    /// Why figures are missing (a result without per-second histograms
    /// has no percentile intervals).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub confidence: f64,
    pub resamples: usize,
    pub directions: Vec<DirectionChange>,
    /// What was left out, each with why: results without a counterpart,
    /// parts with too few slices to resample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_checked: Vec<String>,
}

impl CheckResult {
    /// Whether any figure's whole interval is worse than the baseline by
    /// more than `threshold` (a share): a change within the noise never is.
    pub fn regressed_beyond(&self, threshold: f64) -> bool {
        self.directions
            .iter()
            .flat_map(|d| &d.changes)
            .any(|c| c.regressed_beyond(threshold))
    }

    /// The first central figure whose estimate is worse than twice
    /// `threshold` but whose interval reaches back inside it: a gate
    /// cannot pass it (a run twice as slow on a busy host, its seconds
    /// spread wide) nor fail it.
    pub fn too_noisy_for(&self, threshold: f64) -> Option<(&DirectionChange, &Change)> {
        self.directions.iter().find_map(|d| {
            d.changes
                .iter()
                .find(|c| c.too_noisy_for(threshold))
                .map(|c| (d, c))
        })
    }

    /// Whether a figure is worse by more than `threshold` while a side was
    /// limited by something not the target: the gate cannot judge it.
    pub fn inconclusive_beyond(&self, threshold: f64) -> bool {
        self.directions.iter().any(|d| {
            // Where a busy host's reach left its tails unjudged, the
            // central figures past it decide. A tail judged alone decides
            // nothing: a host that holds a worker for its time slices puts
            // both runs' p99.9 at the slice, whatever the target did.
            let judged = d.host_share.is_some()
                && d.changes
                    .iter()
                    .any(|c| !c.figure.is_tail() && c.verdict != Verdict::Inconclusive);
            !judged
                && d.changes
                    .iter()
                    .any(|c| c.verdict == Verdict::Inconclusive && c.worse_beyond(threshold))
        })
    }
}

fn one_second() -> f64 {
    1.0
}

/// Settings of the bootstrap.
#[derive(Debug, Clone, Copy)]
pub struct Bootstrap {
    pub resamples: usize,
    pub confidence: f64,
    /// How far runs of the same workload differ beyond what their seconds
    /// show (a share): a change counts only past it.
    pub noise: f64,
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 2000,
            confidence: 0.95,
            noise: 0.02,
            seed: 0x5eed,
        }
    }
}

/// A disk workload's key: equal for runs of the same workload, whatever
/// they ran on (the history finds earlier runs by it).
pub use super::kind::workload_key;

/// Why two results cannot be compared, if they cannot: the knobs that
/// make them different workloads.
pub fn differences(baseline: &dyn Kind, new: &dyn Kind) -> Vec<String> {
    let (a, b) = (baseline.knobs(), new.knobs());
    if a.len() != b.len() {
        return vec![format!(
            "workload: {} against {}",
            baseline.described(),
            new.described()
        )];
    }
    a.into_iter()
        .zip(b)
        .filter(|((_, x), (_, y))| x != y)
        .map(|((what, x), (_, y))| format!("{what}: {x} against {y}"))
        .collect()
}

/// Compares `new` with `baseline`, part by part (those either did
/// anything in): a disk workload's directions, an object store's
/// operations, a tree's phases, a training run's samples. `baseline` may
/// be several runs of the workload: then runs are resampled too, so that
/// how much they differ from each other widens the intervals (a noise no
/// single run's seconds show).
pub fn compare(
    baseline: &[&dyn Kind],
    new: &dyn Kind,
    settings: Bootstrap,
) -> Vec<DirectionChange> {
    compare_sides(baseline, new, ["a baseline run", "the new run"], settings)
}

/// [`compare`], its notes calling a baseline run `sides[0]` and the new
/// one `sides[1]` (`fathom compare`'s "A" and "B").
pub fn compare_sides(
    baseline: &[&dyn Kind],
    new: &dyn Kind,
    sides: [&str; 2],
    settings: Bootstrap,
) -> Vec<DirectionChange> {
    let (notes, hand) = notes_on(baseline, new, sides);
    let base: Vec<Vec<Series>> = baseline.iter().map(|b| b.series()).collect();
    judge(new.described(), &base, &new.series(), notes, hand, settings)
}

/// Compares one direction table of `new` (its total, or one target's)
/// with the same table of each `baseline` run, judged as [`compare`]
/// judges totals: `fathom compare` judges each target's rows by it. The
/// notes call a baseline run `sides[0]` and the new one `sides[1]`.
pub fn compare_tables(
    baseline: &[&WorkloadResult],
    baseline_tables: &[&DirectionPair],
    new: &WorkloadResult,
    new_table: &DirectionPair,
    sides: [&str; 2],
    settings: Bootstrap,
) -> Vec<DirectionChange> {
    let kinds: Vec<&dyn Kind> = baseline.iter().map(|b| *b as &dyn Kind).collect();
    let (notes, hand) = notes_on(&kinds, new, sides);
    let base: Vec<Vec<Series>> = baseline_tables.iter().map(|t| table_series(t)).collect();
    let new_series = table_series(new_table);
    judge(new.described(), &base, &new_series, notes, hand, settings)
}

/// A direction table's directions as series.
fn table_series(t: &DirectionPair) -> Vec<Series<'_>> {
    t.named()
        .into_iter()
        .map(|(direction, d)| Series {
            part: direction.into(),
            rate: Rate::Iops,
            seconds: &d.intervals,
            utilization: None,
            ops: d.ios,
            per_s: d.iops,
            lat_ns: d.lat_ns,
        })
        .collect()
}

/// A document's results with parts to judge: every kind but
/// certifications, capacity searches and PTS tests, which keep no
/// per-second figures.
fn judged(d: &Document) -> Vec<&RunResult> {
    d.results
        .iter()
        .filter(|r| !r.kind().series().is_empty())
        .collect()
}

/// Each part of `new` that it or a baseline run did anything in, judged
/// against the same part of every baseline run.
fn judge(
    workload: String,
    base: &[Vec<Series>],
    new: &[Series],
    notes: Vec<String>,
    hand: OtherHand,
    settings: Bootstrap,
) -> Vec<DirectionChange> {
    let same = |run: &'_ [Series<'_>], part: &str| -> Option<usize> {
        run.iter().position(|s| s.part == part)
    };
    new.iter()
        .filter(|n| {
            n.ops > 0
                || base
                    .iter()
                    .any(|run| same(run, &n.part).is_some_and(|k| run[k].ops > 0))
        })
        .map(|n| {
            let theirs: Vec<&Series> = base
                .iter()
                .filter_map(|run| same(run, &n.part).map(|k| &run[k]))
                .collect();
            let runs: Vec<(&[Interval], Option<&[f64]>)> =
                theirs.iter().map(|s| (s.seconds, s.utilization)).collect();
            let (sa, sb) = (
                Seconds::of(&runs),
                Seconds::of(&[(n.seconds, n.utilization)]),
            );
            let mut d = DirectionChange {
                workload: workload.clone(),
                direction: n.part.clone(),
                rate: n.rate,
                seconds: (sa.len(), sb.len()),
                slice_s: n.seconds.first().map_or(1.0, |i| i.dur_s),
                changes: Vec::new(),
                host_share: None,
                notes: notes.clone(),
            }
            .filled(sa, sb, settings);
            let mut reached: Vec<String> = Vec::new();
            for c in d
                .changes
                .iter_mut()
                .filter(|c| c.verdict != Verdict::WithinNoise)
            {
                let theirs = match hand {
                    OtherHand::None => false,
                    OtherHand::Other => true,
                    OtherHand::Host(share) => c.within_reach_of(share),
                };
                if theirs {
                    c.verdict = Verdict::Inconclusive;
                    reached.push(c.figure.name().to_string());
                }
            }
            if let OtherHand::Host(share) = hand {
                d.host_share = Some(share);
                let verdict = match reached.as_slice() {
                    [] => "no change lay within that reach, so every figure is judged as the target's"
                        .to_string(),
                    figures => format!(
                        "{} changed within it and {} left unjudged, the rest judged as the target's",
                        figures.join(", "),
                        if figures.len() == 1 { "is" } else { "are" }
                    ),
                };
                let reach = (share * HOST_REACH * 100.0).min(100.0);
                d.notes.push(format!(
                    "the host took up to {:.0}% of the workers' time, enough to move a rate by {reach:.0}% and the slowest {reach:.0}% of I/Os: {verdict}",
                    share * 100.0,
                ));
            }
            d
        })
        .collect()
}

/// How much further than its share of the workers' time a busy host's
/// hold reaches into the figures: a host that took 3% of the time may
/// have delayed about 3% of I/Os, and the bound leaves as much again.
const HOST_REACH: f64 = 2.0;

/// Who besides the target had a hand in the figures of a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
enum OtherHand {
    /// No one: every side's figures are the target's.
    None,
    /// A busy host, which took at most this share of a side's workers'
    /// time: a change past its reach is still the target's.
    Host(f64),
    /// fathom, or something whose reach is not known: no change past
    /// the noise is the target's.
    Other,
}

impl OtherHand {
    /// The hand of sides some of which were limited or held back: the
    /// host's when it is all the host's and each side says how much it
    /// took, else another's.
    fn of<'a>(sides: impl Iterator<Item = &'a dyn Kind>) -> OtherHand {
        let mut most: f64 = 0.0;
        for side in sides {
            if side
                .limited_not_by_the_target()
                .is_some_and(|by| by != super::limit::Limiter::Host)
            {
                return OtherHand::Other;
            }
            match side.host_share() {
                Some(share) => most = most.max(share),
                None => return OtherHand::Other,
            }
        }
        OtherHand::Host(most)
    }
}

/// What a comparison of `new` with `baseline` must say beside its figures,
/// and whether a side was limited or held back by something not the
/// target (then no change past the noise is the target's).
fn notes_on(
    baseline: &[&dyn Kind],
    new: &dyn Kind,
    [then, now]: [&str; 2],
) -> (Vec<String>, OtherHand) {
    // A change in a figure the target did not decide says nothing of the
    // target: say which run the host or fathom limited, or held back.
    let mut not_the_targets: Vec<String> = baseline
        .iter()
        .map(|b| (then, *b))
        .chain([(now, new)])
        .filter_map(|(which, r)| {
            let why = r.not_the_targets()?;
            Some(format!("{which}{why}: the change may be the host's"))
        })
        .collect();
    not_the_targets.dedup();
    let mut notes = not_the_targets;
    let hand = match notes.is_empty() {
        true => OtherHand::None,
        false => OtherHand::of(baseline.iter().copied().chain([new])),
    };
    // Runs of one workload on different targets are compared as asked, but
    // never without saying so: a change may be the target's kind.
    let shown = |p: Option<super::kind::Place>| p.map_or("no target".into(), |p| p.shown);
    let here = new.place();
    for b in baseline {
        let there = b.place();
        let said = format!(
            "the targets differ: {} against {}",
            shown(there.clone()),
            shown(here.clone())
        );
        // A side that recorded nothing of its target (fio's JSON keeps no
        // file system or model) differs from no target.
        let known = |p: &Option<super::kind::Place>| {
            p.as_ref().is_some_and(|p| {
                let (fs, model, store) = p.identity();
                fs.is_some() || model.is_some() || store.is_some()
            })
        };
        let differ = known(&there)
            && known(&here)
            && there.as_ref().map(|p| p.identity()) != here.as_ref().map(|p| p.identity());
        if differ && !notes.contains(&said) {
            notes.push(said);
        }
    }
    (notes, hand)
}

/// What `check` found: the directions compared, and the workloads it
/// could not compare, each with why.
#[derive(Debug, Clone)]
pub struct Checked {
    pub result: CheckResult,
    pub unmatched: Vec<String>,
}

/// Finds the earlier runs of a result's workload (a history's last runs
/// of it).
pub type EarlierRuns<'a> = &'a mut dyn FnMut(&RunResult) -> Result<Vec<RunResult>, UsageError>;

/// Each workload of `new` against the same workload in every baseline
/// document (the one of the same name, else the one in the same place)
/// and in the runs `earlier` finds for it (a history's last runs). A
/// workload whose counterpart is missing or is another workload is left
/// out and said so; none compared at all is the caller's mistake.
pub fn check(
    new: &Document,
    baselines: &[Document],
    mut earlier: Option<EarlierRuns>,
    settings: Bootstrap,
) -> anyhow::Result<Checked> {
    let base_runs: Vec<Vec<&RunResult>> = baselines.iter().map(judged).collect();
    let new_r = judged(new);
    if base_runs.iter().any(Vec::is_empty) || new_r.is_empty() {
        return Err(UsageError(
            "check compares results with per-second figures (run, s3, train, tree, meta); one of the files holds none (certify, capacity and pts results keep none)".into(),
        )
        .into());
    }
    let mut checked = Checked {
        result: CheckResult {
            confidence: settings.confidence,
            resamples: settings.resamples,
            directions: Vec::new(),
            not_checked: Vec::new(),
        },
        unmatched: Vec::new(),
    };
    'results: for n in &new_r {
        let kind = n.kind();
        // The same kind's results of a baseline, in order: a result's
        // counterpart is the one of its workload, else the one in its place.
        let place = new_r
            .iter()
            .filter(|r| r.kind_name() == n.kind_name())
            .position(|r| std::ptr::eq(*r, *n))
            .unwrap_or(0);
        let mut matched: Vec<RunResult> = Vec::new();
        for base in &base_runs {
            let alike: Vec<&&RunResult> = base
                .iter()
                .filter(|b| b.kind_name() == n.kind_name())
                .collect();
            let b = alike
                .iter()
                .find(|b| differences(b.kind(), kind).is_empty())
                .or_else(|| alike.get(place))
                .copied();
            let Some(b) = b else {
                let why = format!(
                    "{}: no result of its kind in the baseline",
                    kind.described()
                );
                checked.unmatched.push(why);
                continue 'results;
            };
            let differ = differences(b.kind(), kind);
            if !differ.is_empty() {
                checked.unmatched.push(format!(
                    "{}: not the baseline's workload ({})",
                    kind.described(),
                    differ.join("; ")
                ));
                continue 'results;
            }
            matched.push((*b).clone());
        }
        if let Some(find) = earlier.as_mut() {
            let runs = find(n)?;
            if runs.is_empty() {
                checked.unmatched.push(format!(
                    "{}: no earlier run of it on this target in the history",
                    kind.described()
                ));
                continue 'results;
            }
            matched.extend(runs);
        }
        let matched: Vec<&dyn Kind> = matched.iter().map(RunResult::kind).collect();
        checked
            .result
            .directions
            .extend(compare(&matched, kind, settings));
    }
    if checked.result.directions.is_empty() {
        return Err(UsageError(format!(
            "nothing to check: {}",
            checked.unmatched.join("; ")
        ))
        .into());
    }
    // A gate that cannot judge says so: a result none of whose parts had
    // a figure compared (runs under 2 s, no I/O) would otherwise pass with
    // nothing changed. A part of a result judged otherwise (a tree's phase
    // of a few milliseconds) is named as not checked.
    let why = |d: &DirectionChange| match d.notes.is_empty() {
        true => "no I/O to compare".to_string(),
        false => d.notes.join("; "),
    };
    let directions = &checked.result.directions;
    let judged_any = |workload: &str| {
        directions
            .iter()
            .any(|d| d.workload == workload && !d.changes.is_empty())
    };
    let (unjudged, partly): (Vec<&DirectionChange>, Vec<&DirectionChange>) = directions
        .iter()
        .filter(|d| d.changes.is_empty())
        .partition(|d| !judged_any(&d.workload));
    for d in partly {
        checked
            .unmatched
            .push(format!("{} {}: {}", d.workload, d.direction, why(d)));
    }
    if !unjudged.is_empty() {
        let said: Vec<String> = unjudged
            .iter()
            .map(|d| format!("{} {}: {}", d.workload, d.direction, why(d)))
            .collect();
        return Err(crate::util::error::CannotJudge(format!(
            "{} (run each side for 2 s or more, with I/O): {}",
            crate::util::units::counted(said.len() as u64, "direction"),
            said.join("; ")
        ))
        .into());
    }
    checked.result.not_checked = checked.unmatched.clone();
    Ok(checked)
}

impl DirectionChange {
    /// A figure's name for this part: its rate in the part's own words
    /// ("requests/s"), the others as they are.
    pub fn figure_name(&self, figure: Figure) -> &'static str {
        match figure {
            Figure::Iops => self.rate.name(),
            other => other.name(),
        }
    }

    fn filled(mut self, sa: Seconds, sb: Seconds, settings: Bootstrap) -> Self {
        let none = sa.runs.is_empty()
            || sb.runs.is_empty()
            || sa.runs.iter().chain(&sb.runs).any(|(r, _)| r.is_empty());
        if none || sa.runs.iter().chain(&sb.runs).any(|(r, _)| r.len() < 2) {
            self.notes.push(
                if none {
                    "a run has no per-second figures (fio's JSON keeps none): nothing to resample"
                } else {
                    "fewer than 2 seconds in a run: nothing to resample"
                }
                .into(),
            );
            return self;
        }
        let histograms = sa.histograms.is_some() && sb.histograms.is_some();
        if !histograms {
            self.notes.push(
                "a run has no per-second histograms (an older or fio result): no percentile intervals"
                    .into(),
            );
        }
        let utilization = sa.utilization.is_some() && sb.utilization.is_some();
        let figures: Vec<Figure> = Figure::ALL
            .into_iter()
            .filter(|f| histograms || f.percentile().is_none())
            .filter(|f| utilization || *f != Figure::Au)
            .collect();
        let values = Values::of(&sa, &sb);
        let all = |s: &Seconds| (0..s.len()).collect::<Vec<usize>>();
        let point_a = sa.figures(&figures, &values, &all(&sa));
        let point_b = sb.figures(&figures, &values, &all(&sb));
        let mut rng = SmallRng::seed_from_u64(settings.seed);
        let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(settings.resamples); figures.len()];
        for _ in 0..settings.resamples {
            let x = sa.figures(&figures, &values, &sa.resample(&mut rng));
            let y = sb.figures(&figures, &values, &sb.resample(&mut rng));
            for (k, (x, y)) in x.iter().zip(&y).enumerate() {
                if *x > 0.0 {
                    draws[k].push(y / x - 1.0);
                }
            }
        }
        let tail = (1.0 - settings.confidence) / 2.0;
        for (k, &figure) in figures.iter().enumerate() {
            let (base, new) = (point_a[k], point_b[k]);
            if base <= 0.0 || draws[k].is_empty() {
                continue;
            }
            let d = &mut draws[k];
            d.sort_by(f64::total_cmp);
            let at = |q: f64| d[((d.len() - 1) as f64 * q).round() as usize];
            let (low, high) = (at(tail), at(1.0 - tail));
            let noise = figure.noise_floor(settings.noise);
            let verdict = verdict_of(low, high, noise, figure.more_is_better());
            self.changes.push(Change {
                figure,
                baseline: base,
                new,
                change: new / base - 1.0,
                low,
                high,
                noise_floor: noise,
                verdict,
            });
        }
        self
    }
}

/// The verdict of a change whose interval is `low..high`: a change once
/// the whole interval is past the noise floor (what one run's seconds
/// cannot show of how runs differ); within noise when the interval holds
/// no change (zero is in it) or only one inside the floor; uncertain when
/// it leaves out zero and reaches past the floor without being all past
/// it. The words never deny the interval.
fn verdict_of(low: f64, high: f64, noise: f64, more_is_better: bool) -> Verdict {
    let (up, down) = match more_is_better {
        true => (Verdict::Improved, Verdict::Regressed),
        false => (Verdict::Regressed, Verdict::Improved),
    };
    if low > noise {
        up
    } else if high < -noise {
        down
    } else if (low <= 0.0 && high >= 0.0) || (low >= -noise && high <= noise) {
        Verdict::WithinNoise
    } else {
        Verdict::Uncertain
    }
}

/// A run's seconds, ready to resample.
struct Seconds {
    ios: Vec<u64>,
    bytes: Vec<u64>,
    dur: Vec<f64>,
    /// Each second's latencies: (value, count), lowest first.
    histograms: Option<Vec<Vec<(u64, u64)>>>,
    /// Each second's utilization (training's AU), where every run has it.
    utilization: Option<Vec<f64>>,
    /// Each run's seconds (a range of the above) and its block length.
    runs: Vec<(std::ops::Range<usize>, usize)>,
}

/// The distinct latency values of both runs' seconds, sorted: a common
/// index for adding resampled seconds' counts.
struct Values(Vec<u64>);

impl Values {
    fn of(a: &Seconds, b: &Seconds) -> Values {
        let mut all: Vec<u64> = [a, b]
            .iter()
            .filter_map(|s| s.histograms.as_ref())
            .flatten()
            .flat_map(|second| second.iter().map(|&(v, _)| v))
            .collect();
        all.sort_unstable();
        all.dedup();
        Values(all)
    }

    fn index(&self, value: u64) -> usize {
        self.0.partition_point(|&v| v < value)
    }
}

impl Seconds {
    /// The seconds of each run, with each second's utilization where
    /// the run has one (only the seconds it covers are kept).
    fn of(runs: &[(&[Interval], Option<&[f64]>)]) -> Seconds {
        let mut out = Seconds {
            ios: Vec::new(),
            bytes: Vec::new(),
            dur: Vec::new(),
            histograms: Some(Vec::new()),
            utilization: Some(Vec::new()),
            runs: Vec::new(),
        };
        for (intervals, utilization) in runs {
            // Seconds with no time (a zero-length tail) say nothing; with a
            // utilization, only the seconds it covers.
            let covered = utilization.map_or(intervals.len(), |u| u.len().min(intervals.len()));
            let kept: Vec<(usize, &Interval)> = intervals[..covered]
                .iter()
                .enumerate()
                .filter(|(_, i)| i.dur_s > 0.0)
                .collect();
            if kept.is_empty() {
                continue;
            }
            let start = out.ios.len();
            for (k, i) in &kept {
                out.ios.push(i.ios);
                out.bytes.push(i.bytes);
                out.dur.push(i.dur_s);
                match (utilization, out.utilization.as_mut()) {
                    (Some(u), Some(us)) => us.push(u[*k]),
                    _ => out.utilization = None,
                }
                let decoded = i
                    .histogram
                    .as_deref()
                    .and_then(|h| LatencyHistogram::decode(h).ok());
                match (decoded, out.histograms.as_mut()) {
                    (Some(h), Some(hs)) => hs.push(h.recorded().collect()),
                    // A second without I/O has no histogram, and no latencies.
                    (None, Some(hs)) if i.ios == 0 => hs.push(Vec::new()),
                    _ => out.histograms = None,
                }
            }
            let n = kept.len();
            // Künsch's rule of thumb: blocks of about n^(1/3) seconds.
            let block = ((n as f64).cbrt().round() as usize).clamp(1, n);
            out.runs.push((start..start + n, block));
        }
        if out.runs.is_empty() {
            out.utilization = None;
        }
        out
    }

    fn len(&self) -> usize {
        self.ios.len()
    }

    /// A resample: as many runs as there are, drawn with replacement, and
    /// of each, a moving-block resample of its seconds (blocks of
    /// consecutive seconds at random starts, as many seconds as it had).
    fn resample(&self, rng: &mut SmallRng) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.len() + 8);
        for _ in 0..self.runs.len() {
            let (range, block) = &self.runs[match self.runs.len() {
                1 => 0,
                k => rng.random_range(0..k),
            }];
            let n = range.len();
            let starts = n - block + 1;
            let end = out.len() + n;
            while out.len() < end {
                let s = range.start + rng.random_range(0..starts);
                out.extend(s..s + block);
            }
            out.truncate(end);
        }
        out
    }

    /// The figures over the seconds `pick` (a second may be picked more
    /// than once).
    fn figures(&self, figures: &[Figure], values: &Values, pick: &[usize]) -> Vec<f64> {
        let dur: f64 = pick.iter().map(|&i| self.dur[i]).sum();
        let mut counts = Vec::new();
        if let Some(hs) = self
            .histograms
            .as_ref()
            .filter(|_| figures.iter().any(|f| f.percentile().is_some()))
        {
            counts = vec![0u64; values.0.len()];
            for &i in pick {
                for &(v, c) in &hs[i] {
                    counts[values.index(v)] += c;
                }
            }
        }
        figures
            .iter()
            .map(|&f| match f.percentile() {
                None if f == Figure::Iops => {
                    pick.iter().map(|&i| self.ios[i]).sum::<u64>() as f64 / dur
                }
                None if f == Figure::Au => match &self.utilization {
                    Some(u) => pick.iter().map(|&i| u[i] * self.dur[i]).sum::<f64>() / dur,
                    None => 0.0,
                },
                None => pick.iter().map(|&i| self.bytes[i]).sum::<u64>() as f64 / dur,
                Some(q) => percentile_of_counts(&counts, &values.0, q) as f64,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn the_verdict_never_denies_its_interval() {
        // p99 +107% [+2.1% +473%] against a 10% floor: not within noise.
        assert_eq!(verdict_of(0.021, 4.73, 0.10, false), Verdict::Uncertain);
        assert_eq!(verdict_of(0.12, 4.73, 0.10, false), Verdict::Regressed);
        assert_eq!(verdict_of(0.12, 4.73, 0.10, true), Verdict::Improved);
        assert_eq!(verdict_of(-0.50, -0.11, 0.10, false), Verdict::Improved);
        assert_eq!(verdict_of(-0.05, 0.08, 0.10, false), Verdict::WithinNoise);
        // Zero in the interval: no change shown, however wide.
        assert_eq!(verdict_of(-0.12, 0.08, 0.10, true), Verdict::WithinNoise);
        // Left out, but only inside the floor.
        assert_eq!(verdict_of(0.01, 0.015, 0.02, true), Verdict::WithinNoise);
        assert_eq!(verdict_of(-0.30, -0.05, 0.10, true), Verdict::Uncertain);
        // Identical runs: an interval of nothing.
        assert_eq!(verdict_of(0.0, 0.0, 0.02, true), Verdict::WithinNoise);
    }

    /// `n` seconds at `level` I/Os a second times `wobble(i)`.
    fn seconds(n: usize, mut wobble: impl FnMut(usize) -> f64) -> Vec<Interval> {
        (0..n)
            .map(|i| {
                let ios = (10_000.0 * wobble(i)).round() as u64;
                let mut h = LatencyHistogram::new();
                h.record_n(1_000_000_000 / 10_000, ios);
                Interval {
                    t_s: i as f64,
                    dur_s: 1.0,
                    ios,
                    bytes: ios * 4096,
                    histogram: Some(h.encode()),
                    ..Default::default()
                }
            })
            .collect()
    }

    fn changes(base: &[&[Interval]], new: &[Interval], settings: Bootstrap) -> Vec<Change> {
        DirectionChange {
            workload: "w".into(),
            direction: "read".into(),
            rate: Rate::Iops,
            seconds: (0, 0),
            slice_s: 1.0,
            changes: Vec::new(),
            host_share: None,
            notes: Vec::new(),
        }
        .filled(
            Seconds::of(&base.iter().map(|b| (*b, None)).collect::<Vec<_>>()),
            Seconds::of(&[(new, None)]),
            settings,
        )
        .changes
    }

    fn iops_change(base: &[&[Interval]], new: &[Interval], settings: Bootstrap) -> Change {
        changes(base, new, settings)
            .into_iter()
            .find(|c| c.figure == Figure::Iops)
            .expect("an IOPS change")
    }

    /// A run whose workers waited for a CPU (a busy host) may owe a change
    /// to the host: past the noise it is inconclusive, never regressed,
    /// and the note says which run waited and how long.
    #[test]
    fn a_busy_hosts_reach_is_left_unjudged_and_what_lies_past_it_judged() {
        let run = |level: f64, waited: f64| {
            let mut w = crate::result::test_support::empty_workload();
            w.total.read.intervals = seconds(10, |i| level + 0.01 * (i % 3) as f64);
            w.total.read.ios = w.total.read.intervals.iter().map(|s| s.ios).sum();
            w.cpu.waited_for_cpu_share = Some(waited);
            // The device kept its slots busy: the host's hand is a share.
            w.issue = Some(Default::default());
            w
        };
        let settings = Bootstrap::default();
        let (base, slower) = (run(1.0, 0.01), run(0.7, 0.01));
        let quiet = compare(&[&base], &slower, settings);
        let iops = |d: &[DirectionChange]| {
            d[0].changes
                .iter()
                .find(|c| c.figure == Figure::Iops)
                .cloned()
                .unwrap()
        };
        assert_eq!(iops(&quiet).verdict, Verdict::Regressed);
        assert!(quiet[0].notes.is_empty(), "{:?}", quiet[0].notes);

        // A host that took 7% of the time can explain a rate 14% lower,
        // not 30%: a drop past its reach is the target's.
        let held_back = run(0.7, 0.07);
        let busy = compare(&[&base], &held_back, settings);
        assert_eq!(iops(&busy).verdict, Verdict::Regressed);
        assert_eq!(busy[0].host_share, Some(0.07));
        assert!(
            busy[0]
                .notes
                .iter()
                .any(|n| n.contains("the new run") && n.contains("7%"))
                && busy[0].notes.iter().any(|n| n.contains("up to 7%")),
            "{:?}",
            busy[0].notes
        );
        let within_reach = compare(&[&base], &run(0.9, 0.07), settings);
        assert_eq!(iops(&within_reach).verdict, Verdict::Inconclusive);
        let gate = |directions: &[DirectionChange]| CheckResult {
            confidence: 0.95,
            resamples: 0,
            directions: directions.to_vec(),
            not_checked: Vec::new(),
        };
        // The latency past the host's reach was judged (unchanged): the
        // gate can judge, and the rate's drop is left to the host.
        assert!(
            within_reach[0]
                .changes
                .iter()
                .any(|c| c.verdict != Verdict::Inconclusive),
            "{within_reach:?}"
        );
        assert!(!gate(&within_reach).inconclusive_beyond(0.05));

        // A host that held the workers for its time slices: the rate and
        // the median moved within its reach, and only the p99.9 (the
        // slice, in both runs) was judged. That judges nothing.
        let mut sliced = within_reach.clone();
        for c in &mut sliced[0].changes {
            if c.figure == Figure::P999 {
                c.verdict = Verdict::WithinNoise;
            } else if !c.figure.is_tail() {
                c.verdict = Verdict::Inconclusive;
            }
        }
        assert!(gate(&sliced).inconclusive_beyond(0.05), "{sliced:?}");

        // But not a side that fathom itself limited: its reach is unknown.
        let mut fathoms = run(0.5, 0.01);
        fathoms.limited_by = Some(crate::result::limit::LimitedBy {
            by: crate::result::limit::Limiter::Fathom,
            evidence: String::new(),
        });
        let unjudged = compare(&[&base], &fathoms, settings);
        assert_eq!(iops(&unjudged).verdict, Verdict::Inconclusive);
        assert_eq!(unjudged[0].host_share, None);
        assert!(gate(&unjudged).inconclusive_beyond(0.05));
        // Nor one whose slots sat free for its own workers: a CPU-bound
        // rate may be the host's whole.
        let mut cpu_bound = run(0.5, 0.14);
        cpu_bound.issue = Some(crate::measure::issue::IssueTiming {
            idle_slot_share: 0.6,
            ..Default::default()
        });
        let unjudged = compare(&[&base], &cpu_bound, settings);
        assert_eq!(iops(&unjudged).verdict, Verdict::Inconclusive);
    }

    /// With nothing changed, about 95% of the intervals contain 0: the
    /// intervals are as wide as the noise, no wider and no narrower.
    #[test]
    fn intervals_of_unchanged_runs_contain_zero_about_95_percent_of_the_time() {
        let mut rng = SmallRng::seed_from_u64(11);
        let settings = Bootstrap {
            resamples: 400,
            noise: 0.0,
            ..Bootstrap::default()
        };
        let pairs = 200;
        let mut covered = 0;
        for _ in 0..pairs {
            let mut draw = |_| 1.0 + rng.random_range(-0.2..0.2);
            let a = seconds(30, &mut draw);
            let b = seconds(30, &mut draw);
            let c = iops_change(&[&a], &b, settings);
            if c.low <= 0.0 && 0.0 <= c.high {
                covered += 1;
            }
        }
        let share = covered as f64 / pairs as f64;
        assert!((0.88..=0.99).contains(&share), "coverage {share}");
    }

    #[test]
    fn a_clear_step_is_a_regression_and_the_threshold_is_on_the_worse_side() {
        let base = seconds(20, |i| 1.0 + 0.02 * (i % 3) as f64);
        let slower = seconds(20, |i| 0.7 + 0.02 * (i % 3) as f64);
        let c = iops_change(&[&base], &slower, Bootstrap::default());
        assert_eq!(c.verdict, Verdict::Regressed, "{c:?}");
        assert!(c.high < 0.0 && c.low > -0.4, "{c:?}");
        assert!(c.regressed_beyond(0.2) && !c.regressed_beyond(0.35));
        let faster = iops_change(&[&slower], &base, Bootstrap::default());
        assert_eq!(faster.verdict, Verdict::Improved);
        assert!(!faster.regressed_beyond(0.0));
    }

    /// A gate's three answers for one figure: a change past the threshold
    /// all through its interval fails; one the estimate puts past it but
    /// the interval reaches back from is too noisy to pass (a central
    /// figure's, put at twice the threshold); the rest pass.
    #[test]
    fn a_change_past_the_gate_with_an_interval_back_inside_it_is_too_noisy() {
        let p50 = |change: f64, low: f64, high: f64| Change {
            figure: Figure::P50,
            baseline: 100.0,
            new: 100.0 * (1.0 + change),
            change,
            low,
            high,
            noise_floor: 0.02,
            verdict: verdict_of(low, high, 0.02, false),
        };
        let slow_and_clear = p50(1.0, 0.6, 1.4);
        assert!(slow_and_clear.regressed_beyond(0.05) && !slow_and_clear.too_noisy_for(0.05));
        let slow_and_noisy = p50(1.0, -0.1, 3.0);
        assert!(!slow_and_noisy.regressed_beyond(0.05) && slow_and_noisy.too_noisy_for(0.05));
        let same = p50(0.01, -0.2, 0.3);
        assert!(!same.too_noisy_for(0.05));
        for tail in [Figure::P99, Figure::P999] {
            let tail_and_noisy = Change {
                figure: tail,
                ..slow_and_noisy.clone()
            };
            assert!(!tail_and_noisy.too_noisy_for(0.05));
        }
        // Better by far, however noisy, is no regression to judge.
        assert!(!p50(-0.5, -0.9, 0.2).too_noisy_for(0.05));
        // Past the threshold, short of twice it: a busy host's own reach.
        assert!(!p50(0.08, -0.01, 0.2).too_noisy_for(0.05));
    }

    /// Baseline runs that spread 20% between them: a run 10% below their
    /// middle is no regression (its interval reaches into the floor); the
    /// same step against one steady run is.
    #[test]
    fn the_spread_between_baseline_runs_is_part_of_the_noise() {
        let runs: Vec<Vec<Interval>> = [0.9, 1.0, 1.1]
            .iter()
            .map(|&level| seconds(20, move |i| level + 0.01 * (i % 2) as f64))
            .collect();
        let base: Vec<&[Interval]> = runs.iter().map(Vec::as_slice).collect();
        let new = seconds(20, |i| 0.9 + 0.01 * (i % 2) as f64);
        let c = iops_change(&base, &new, Bootstrap::default());
        assert!(c.high > -c.noise_floor, "{c:?}");
        assert!(
            matches!(c.verdict, Verdict::WithinNoise | Verdict::Uncertain),
            "{c:?}"
        );
        let steady = iops_change(&base[1..2], &new, Bootstrap::default());
        assert_eq!(steady.verdict, Verdict::Regressed, "{steady:?}");
    }

    #[test]
    fn percentiles_come_from_the_resampled_seconds_histograms() {
        let base = seconds(10, |_| 1.0);
        let mut slow = seconds(10, |_| 1.0);
        for s in &mut slow {
            let mut h = LatencyHistogram::new();
            h.record_n(150_000, s.ios);
            s.histogram = Some(h.encode());
        }
        let d = changes(&[&base], &slow, Bootstrap::default());
        let p99 = d.iter().find(|c| c.figure == Figure::P99).unwrap();
        assert!((p99.change - 0.5).abs() < 0.01, "{p99:?}");
        // A latency is worse higher: past 20% on that side, not past 60%.
        assert!(p99.worse_beyond(0.2) && !p99.worse_beyond(0.6), "{p99:?}");
        assert_eq!(p99.verdict, Verdict::Regressed);
        let iops = d.iter().find(|c| c.figure == Figure::Iops).unwrap();
        assert_eq!(iops.verdict, Verdict::WithinNoise);
    }
}
