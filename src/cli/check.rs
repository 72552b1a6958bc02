//! `fathom check NEW --against BASELINE`: each workload's figures against
//! the baseline's, with intervals that know the runs' noise, and an exit
//! code a CI job can gate on.

use super::load_document;
use clap::Args;
use fathom::report::destination;
use fathom::result::change::{self, Bootstrap, Checked};
use fathom::result::{Document, RunResult};
use fathom::util::error::UsageError;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The result checked (fathom's JSON).
    pub new: PathBuf,

    /// The baseline it is checked against: a result file (fathom's JSON),
    /// or from the history `id:N` (a run), `tag:KEY=VALUE` (every run with
    /// that tag) or `last:N` (the last N runs of each workload on the same
    /// target and host before NEW). Given several times, or naming several
    /// runs, the baseline is those runs together, and how much they differ
    /// from each other is part of the noise.
    #[arg(long, value_name = "RESULT", required = true, value_parser = parse_baseline)]
    pub against: Vec<Baseline>,

    /// The history `id:`, `tag:` and `last:` read [default:
    /// $XDG_DATA_HOME/fathom/history.db]
    #[arg(long, value_name = "PATH")]
    pub history: Option<PathBuf>,

    /// How far runs of the same workload differ beyond what one run's
    /// seconds show: a change counts as improved or regressed only once
    /// its whole interval is past it. The tails have floors of their own,
    /// as a busy host moves them more from run to run: p99 10%, p99.9 25%.
    #[arg(long, value_name = "PERCENT", default_value = "2%", value_parser = parse_percent_share)]
    pub noise: f64,

    /// Exit 1 when a figure's whole interval is worse than the baseline
    /// by more than this (e.g. 5%): a change within the noise never fails.
    #[arg(long = "fail-on-regression", value_name = "PERCENT", value_parser = parse_percent_share)]
    pub fail_on_regression: Option<f64>,

    /// The intervals' confidence, in percent.
    #[arg(long, value_name = "PERCENT", default_value = "95", value_parser = parse_confidence)]
    pub confidence: f64,

    /// text or json.
    #[arg(long = "output-format", value_name = "FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub format: String,

    /// Write the verdict there instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub replace: super::ReplaceOutput,
}

/// Where a baseline comes from.
#[derive(Debug, Clone)]
pub enum Baseline {
    File(PathBuf),
    Id(i64),
    Tag(String, String),
    Last(usize),
}

fn parse_baseline(text: &str) -> Result<Baseline, String> {
    let number = |n: &str| {
        n.parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("'{text}': a number above 0 after the colon"))
    };
    match text.split_once(':') {
        _ if std::path::Path::new(text).exists() => Ok(Baseline::File(text.into())),
        Some(("id", n)) => Ok(Baseline::Id(number(n)? as i64)),
        Some(("last", n)) => Ok(Baseline::Last(number(n)? as usize)),
        Some(("tag", kv)) => super::history::parse_tag(kv).map(|(k, v)| Baseline::Tag(k, v)),
        _ => Ok(Baseline::File(text.into())),
    }
}

/// A share given as a percentage ("5%", up to 1000%): 0.05. Unlike a
/// knob's percentage it is a fraction, and may pass 100%.
fn parse_percent_share(text: &str) -> Result<f64, String> {
    let number = text.strip_suffix('%').unwrap_or(text);
    match number.parse::<f64>() {
        Ok(p) if (0.0..=1000.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!(
            "'{text}' is not a percentage from 0% to 1000%, such as 5%"
        )),
    }
}

fn parse_confidence(text: &str) -> Result<f64, String> {
    match parse_percent_share(text)? {
        c if c > 0.5 && c < 1.0 => Ok(c),
        _ => Err(format!(
            "'{text}': a confidence between 50 and 100 (percent)"
        )),
    }
}

/// Exit 0 (no regression past the threshold), 1 (one is), 2 (bad input:
/// unreadable results, or nothing measured the same workload).
pub fn check_command(args: &CheckArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        let mut inputs: Vec<&std::path::Path> = args
            .against
            .iter()
            .filter_map(|b| match b {
                Baseline::File(p) => Some(p.as_path()),
                _ => None,
            })
            .collect();
        inputs.push(&args.new);
        destination::check_not_input(path, &inputs, "the result file")?;
        destination::check(path, args.replace.overwrite)?;
    }
    let new = load_document(&args.new)?;
    let reads_history = args.against.iter().any(|b| !matches!(b, Baseline::File(_)));
    let mut history = match reads_history {
        true => Some(super::history::open(args.history.as_deref())?),
        false => None,
    };
    let usage = super::history::usage;
    let mut baselines: Vec<Document> = Vec::new();
    let mut last = None;
    for b in &args.against {
        match (b, &mut history) {
            (Baseline::File(p), _) => baselines.push(load_document(p)?),
            (Baseline::Id(id), Some(h)) => baselines.push(h.document(*id).map_err(usage)?),
            (Baseline::Tag(k, v), Some(h)) => {
                let ids = h.tagged(k, v).map_err(usage)?;
                if ids.is_empty() {
                    return Err(UsageError(format!(
                        "--against tag:{k}={v}: no run in the history has it"
                    ))
                    .into());
                }
                for id in ids {
                    baselines.push(h.document(id).map_err(usage)?);
                }
            }
            (Baseline::Last(n), Some(_)) => last = Some(*n),
            _ => unreachable!("the history is open when a baseline needs it"),
        }
    }
    // NEW itself, when the history keeps it, is not its own baseline.
    let itself = match &mut history {
        Some(h) => h.id_of(&new).map_err(usage)?,
        None => None,
    };
    let hostname = &new.host.hostname;
    let mut last_runs;
    let earlier = match (last, history.as_mut()) {
        (Some(n), Some(h)) => {
            last_runs = move |r: &RunResult| -> Result<Vec<RunResult>, UsageError> {
                let runs = h.last_runs(r, hostname, n, itself).map_err(usage)?;
                Ok(runs.into_iter().map(|(_, r)| r).collect())
            };
            Some(&mut last_runs as change::EarlierRuns)
        }
        _ => None,
    };
    let settings = Bootstrap {
        confidence: args.confidence,
        noise: args.noise,
        ..Bootstrap::default()
    };
    let Checked { result, unmatched } = change::check(&new, &baselines, earlier, settings)?;
    let mut text = match args.format.as_str() {
        "json" => serde_json::to_string_pretty(&result)? + "\n",
        _ => fathom::report::change::text(&result, args.fail_on_regression),
    };
    if args.format != "json" {
        for u in &unmatched {
            text.push_str(&format!("not checked: {u}\n"));
        }
        let mut said: Vec<String> = Vec::new();
        for b in &baselines {
            let differ = fathom::result::settings::of_documents(b, &new);
            let line = format!(
                "note: the baseline and NEW were measured with other settings: {}\n",
                differ.join(", ")
            );
            if !differ.is_empty() && !said.contains(&line) {
                said.push(line);
            }
        }
        text.extend(said);
    }
    match &args.output {
        Some(path) => destination::write(path, &text)?,
        None => print!("{}", fathom::report::printable(&text)),
    }
    let Some(t) = args.fail_on_regression else {
        return Ok(0);
    };
    if result.regressed_beyond(t) {
        return Ok(1);
    }
    if result.inconclusive_beyond(t) {
        return Err(fathom::util::error::CannotJudge(format!(
            "a figure is {:.0}% worse or more, but a run was limited or held back by something not the target (see the notes above); run both on a quiet host",
            t * 100.0
        ))
        .into());
    }
    if let Some((d, c)) = result.too_noisy_for(t) {
        return Err(fathom::util::error::CannotJudge(format!(
            "{} {} of {} is {:+.0}% by the runs' estimate, past --fail-on-regression {:.0}%, but its interval ({:+.0}% to {:+.0}%) reaches back inside it: the runs are too noisy to pass or fail; run longer, more often, or on a quieter host",
            d.direction,
            c.figure.name(),
            d.workload,
            c.change * 100.0,
            t * 100.0,
            c.low * 100.0,
            c.high * 100.0
        ))
        .into());
    }
    Ok(0)
}
