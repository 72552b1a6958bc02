//! Where a command's workloads come from: a preset, a TOML job file, an
//! fio job file (translated, `--explain` shows how), or the flags with
//! their sweeps; the flags' targets, streams and knobs override what the
//! file or preset says. Prints nothing: notes and the explanation are
//! returned for the command line to show.

use super::{fio, jobfile, plan, presets};
use crate::spec::WorkloadSpec;
use crate::spec::knobs;
use crate::util::error::UsageError;
use std::path::{Path, PathBuf};

/// What the command line gave.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Positional arguments: a job file first, if any, then targets.
    pub positional: &'a [String],
    /// Targets given with a label (`--target LABEL=PATH`).
    pub labelled: &'a [String],
    /// `--stream NAME: knob=value, ...` definitions, parsed.
    pub streams: &'a [(String, Vec<(String, String)>)],
    /// Knobs given as flags, in table order: a comma list of a sweepable
    /// knob sweeps it.
    pub knobs: &'a [(String, String)],
    pub preset: Option<&'a str>,
    /// Translate an fio job file and explain it, running nothing.
    pub explain: bool,
    /// Knobs a command sets when neither the flags nor a file set them.
    pub defaults: &'a [(&'a str, &'a str)],
}

/// The workloads asked for.
#[derive(Debug, Default)]
pub struct Resolved {
    pub specs: Vec<WorkloadSpec>,
    /// What differs from fio, for an fio job file.
    pub notes: Vec<String>,
    /// With `explain`: the fathom job file an fio job file translates to,
    /// its notes first as comments (its specs are checked, as a run checks
    /// them, before it is printed).
    pub explained: Option<String>,
    /// The trace an fio job file plays (`read_iolog`): each spec is to be
    /// made its replay (`commands::replay::of_job`).
    pub replay: Option<fio::FioReplay>,
    /// fio jobs of a file-operation engine: a tree run (and no specs).
    pub tree: Option<fio::FioTree>,
    /// The keys an fio http job signs with, kept out of the specs.
    pub credentials: Option<crate::input::aws::AwsCredentials>,
}

/// The workloads `request` asks for, each checked (`spec::validate`) as it
/// is built: a mistake is found here, before any command plans a run.
pub fn resolve(request: &Request) -> Result<Resolved, UsageError> {
    let resolved = source(request)?;
    // A job that plays a trace is checked once it is the replay.
    if resolved.replay.is_none() {
        for spec in &resolved.specs {
            spec.validate()?;
        }
    }
    Ok(resolved)
}

fn source(request: &Request) -> Result<Resolved, UsageError> {
    let mut positional = request.positional.to_vec();
    let job = match positional.first() {
        Some(first)
            if (first.ends_with(".toml") && !Path::new(first).is_dir())
                || fio::is_fio_job(Path::new(first)) =>
        {
            Some(PathBuf::from(positional.remove(0)))
        }
        _ => None,
    };
    if request.explain && !job.as_deref().is_some_and(fio::is_fio_job) {
        return Err(UsageError(
            "--explain: give an fio job file (NAME.fio) to translate".into(),
        ));
    }
    let mut overrides = jobfile::Overrides {
        targets: positional
            .into_iter()
            .chain(request.labelled.iter().cloned())
            .collect(),
        streams: request.streams.to_vec(),
        ..Default::default()
    };
    for (knob, value) in request.knobs {
        let values: Vec<String> = value.split(',').map(|v| v.trim().to_string()).collect();
        if values.len() > 1 && knobs::is_sweepable(knob) {
            overrides.sweep.push((knob.clone(), values));
        } else {
            overrides.knobs.push((knob.clone(), value.clone()));
        }
    }
    if job.is_none() && request.preset.is_none() {
        for (knob, value) in request.defaults {
            if !overrides.knobs.iter().any(|(k, _)| k == knob) {
                overrides.knobs.push((knob.to_string(), value.to_string()));
            }
        }
    }
    let specs = match (job, request.preset) {
        (Some(_), Some(_)) => {
            return Err(UsageError(
                "--preset: give either a job file or a preset, not both".into(),
            ));
        }
        (None, Some(name)) => presets::load(name, &overrides)?,
        (Some(path), None) if fio::is_fio_job(&path) => {
            return from_fio(&path, &overrides, request.explain);
        }
        (Some(path), None) => jobfile::load(&path, &overrides)?,
        (None, None) => {
            if overrides.targets.is_empty() {
                overrides.targets.push(".".into());
            }
            from_flags(&overrides)?
        }
    };
    let notes = unmixed_share(request.knobs, &specs).into_iter().collect();
    Ok(Resolved {
        specs,
        notes,
        ..Resolved::default()
    })
}

/// `--rwmix-read` given where no workload (nor stream) mixes reads and
/// writes: said, since it changes nothing.
fn unmixed_share(knobs: &[(String, String)], specs: &[WorkloadSpec]) -> Option<String> {
    let (_, share) = knobs.iter().find(|(k, _)| k == "rwmix_read")?;
    let mixes = |s: &WorkloadSpec| s.rw.is_mixed() || s.streams.iter().any(|t| t.rw.is_mixed());
    let rw = specs.iter().find(|s| !mixes(s))?.rw;
    (!specs.iter().any(mixes)).then(|| {
        format!(
            "--rwmix-read {share} shares out the I/Os of a mixed --rw (readwrite, randrw): {rw} does not mix, so it changes nothing"
        )
    })
}

/// The workloads of an fio job file, through its translation.
fn from_fio(
    path: &Path,
    overrides: &jobfile::Overrides,
    explain: bool,
) -> Result<Resolved, UsageError> {
    let t = fio::translate(path, !overrides.targets.is_empty())?;
    if t.tree.is_some() {
        return Ok(tree_of(t, explain));
    }
    let source = format!("{} (as translated: see --explain)", path.display());
    let specs = jobfile::parse(&t.toml, &source, "fio", overrides)?;
    if explain {
        // The notes are in the explanation; the specs are checked as a
        // run would check them before it is printed.
        let mut explained: String = t.notes.iter().map(|n| format!("# note: {n}\n")).collect();
        explained.push_str(&t.toml);
        return Ok(Resolved {
            specs,
            explained: Some(explained),
            replay: t.replay,
            ..Resolved::default()
        });
    }
    Ok(Resolved {
        specs,
        notes: t.notes,
        explained: None,
        replay: t.replay,
        tree: None,
        credentials: t.credentials,
    })
}

/// A translation that is a tree run: explained, or to be run.
fn tree_of(t: fio::Translation, explain: bool) -> Resolved {
    if explain {
        let mut explained: String = t.notes.iter().map(|n| format!("# note: {n}\n")).collect();
        explained.push_str(&t.toml);
        return Resolved {
            explained: Some(explained),
            ..Resolved::default()
        };
    }
    Resolved {
        notes: t.notes,
        tree: t.tree,
        ..Resolved::default()
    }
}

/// The workloads of fio's command line (`fathom fio`), each checked as
/// [`resolve`] checks them.
pub fn from_fio_command(command: &mut fio::cmdline::FioCommand) -> Result<Resolved, UsageError> {
    let t = fio::translate_command(command)?;
    if t.tree.is_some() {
        return Ok(tree_of(t, false));
    }
    let source = "fio's command line (as translated)";
    let overrides = jobfile::Overrides {
        knobs: [
            ("overwrite", command.overwrite),
            ("i_know_this_destroys_data", command.permission.destroy_data),
            ("even_if_mounted", command.permission.even_if_mounted),
        ]
        .into_iter()
        .filter(|(_, given)| *given)
        .map(|(knob, _)| (knob.to_string(), "true".to_string()))
        .collect(),
        ..Default::default()
    };
    let specs = jobfile::parse(&t.toml, source, "fio", &overrides)?;
    if t.replay.is_none() {
        for spec in &specs {
            spec.validate()?;
        }
    }
    Ok(Resolved {
        specs,
        notes: t.notes,
        explained: None,
        replay: t.replay,
        tree: None,
        credentials: t.credentials,
    })
}

/// One workload from flags, expanded over the flags' sweeps.
pub fn from_flags(o: &jobfile::Overrides) -> Result<Vec<WorkloadSpec>, UsageError> {
    plan::check_size(&o.sweep, 1).map_err(UsageError)?;
    let mut specs = Vec::new();
    for bindings in plan::expand(&o.sweep) {
        let mut b = knobs::SpecBuilder::new(WorkloadSpec::defaults(Vec::new()));
        for (k, v) in o.knobs.iter().chain(&bindings) {
            b.set(k, v).map_err(|m| jobfile::flag_error(k, m))?;
        }
        b.spec.name = plan::point_name(&b.spec, &bindings);
        let streams = jobfile::flag_streams(&b, &o.targets, &o.streams)?;
        let mut spec = b.finish();
        jobfile::set_targets(&mut spec, &o.targets);
        spec.streams = streams;
        specs.push(spec);
    }
    Ok(specs)
}
