//! The session: the targets a plan's runs share, prepared once, and what
//! is left of them when it ends.

use super::check::{CheckedPlan, check_plan};
use super::{Barrier, RunOptions, Stream, run_streams, run_workload};
use crate::measure::facts;
use crate::result::repeats::Repeats;
use crate::result::streams::StreamsResult;
use crate::result::{Document, RunResult, WorkloadResult};
use crate::run::target::{self, PreparedTarget};
use crate::spec::WorkloadSpec;
use crate::util::error::UsageError;
use crate::util::stop::{Interrupted, StopFlag};
use std::collections::HashMap;
use std::io::IsTerminal;

/// Runs workloads one after the other and keeps the targets they share.
pub struct Session {
    stop: StopFlag,
    /// Results of an earlier, interrupted run of the same plan (`--resume`).
    previous: Vec<WorkloadResult>,
    live: bool,
    /// Targets laid out, by absolute path: `t.dat`, `./t.dat` and a link
    /// to it are one target, laid out once.
    prepared: HashMap<std::path::PathBuf, PreparedTarget>,
    /// What checking the plan found of each target, taken as each is
    /// prepared: a target is inspected once and prepared once.
    checked: CheckedPlan,
    /// Targets whose overridden refusal has been said.
    announced: std::collections::HashSet<String>,
    document: Document,
    /// When the first workload starts (`--start-at`); later ones follow it.
    start_at: Option<std::time::SystemTime>,
    /// Waits for the other hosts before each workload (`--mpi`).
    barrier: Option<Box<Barrier>>,
    /// Where every I/O of the (one) workload is recorded (`--record`).
    record: Option<std::path::PathBuf>,
    /// Where the figures go while they are measured (`--metrics-listen`,
    /// `--live`, `--metrics-push`).
    board: Option<std::sync::Arc<crate::measure::live::LiveBoard>>,
    /// Called after each completed second reached the board.
    after_second: Option<Box<dyn Fn()>>,
}

impl Session {
    pub fn new(stop: StopFlag) -> Self {
        Session {
            stop,
            previous: Vec::new(),
            live: std::io::stderr().is_terminal(),
            prepared: HashMap::new(),
            checked: CheckedPlan::default(),
            announced: Default::default(),
            document: Document::new(facts::host_facts(), None),
            start_at: None,
            barrier: None,
            record: None,
            board: None,
            after_second: None,
        }
    }

    /// Hands every completed second to `board`, for those watching.
    pub fn watched(
        mut self,
        board: Option<std::sync::Arc<crate::measure::live::LiveBoard>>,
    ) -> Self {
        self.board = board;
        self
    }

    /// Calls `after` on the session's thread after each completed second
    /// reached the board (under `--mpi`: the seconds relayed to rank 0).
    pub fn after_each_second(mut self, after: Option<Box<dyn Fn()>>) -> Self {
        self.after_second = after;
        self
    }

    /// Says what the command is doing now to those watching (a capacity
    /// step, a PTS round), and how far along it is.
    pub fn phase(&self, phase: impl Into<String>, progress: Option<(u64, u64)>) {
        if let Some(board) = &self.board {
            board.phase(phase, progress);
        }
    }

    /// Where this session's figures go while they are measured.
    pub fn board(&self) -> Option<std::sync::Arc<crate::measure::live::LiveBoard>> {
        self.board.clone()
    }

    /// A verdict reached, for those watching.
    pub fn verdict(&self, said: impl Into<String>) {
        if let Some(board) = &self.board {
            board.verdict(said);
        }
    }

    /// Records every I/O the session's workload issues into `path`.
    pub fn recording(mut self, path: Option<std::path::PathBuf>) -> Self {
        self.record = path;
        self
    }

    /// Waits on `barrier` before each workload starts (the targets laid
    /// out); when it says another host failed, the session stops.
    pub fn with_barrier(mut self, barrier: Box<Barrier>) -> Self {
        self.barrier = Some(barrier);
        self
    }

    /// Starts the first workload at `at` on the wall clock (its targets are
    /// laid out before), so that runs on several hosts start together.
    pub fn starting_at(mut self, at: Option<std::time::SystemTime>) -> Self {
        self.start_at = at;
        self
    }

    /// How the next workload runs: the start time applies once.
    pub(super) fn options(&mut self, live: bool) -> RunOptions<'_> {
        RunOptions {
            live,
            keep_intervals: true,
            start_at: self.start_at.take(),
            barrier: self.barrier.as_deref(),
            record: self.record.as_deref(),
            board: self.board.as_deref(),
            after_second: self.after_second.as_deref(),
        }
    }

    /// Names the system under test in the document (`--label`).
    pub fn labelled(mut self, label: Option<String>) -> Self {
        self.document.label = label;
        self
    }

    /// The empty result document of this session (host facts, start time).
    pub fn document(&self) -> &Document {
        &self.document
    }

    /// How many of `specs` a finished workload of `previous` stands for:
    /// the runs `--resume` skips.
    pub fn already_done(specs: &[WorkloadSpec], previous: &[WorkloadResult]) -> usize {
        let mut left: Vec<&WorkloadResult> = previous.iter().filter(|w| !w.interrupted).collect();
        specs
            .iter()
            .filter(|spec| match left.iter().position(|w| w.spec == **spec) {
                Some(i) => {
                    left.swap_remove(i);
                    true
                }
                None => false,
            })
            .count()
    }

    /// What keeps `--resume` from going on with `previous`: a result in the
    /// file that no run of the plan stands for was made with other settings,
    /// and going on would drop it. Names the settings that differ from the
    /// closest run of the plan.
    pub fn resume_conflict(specs: &[WorkloadSpec], previous: &[WorkloadResult]) -> Option<String> {
        let stray = previous.iter().find(|w| !specs.contains(&w.spec))?;
        let fields = |spec: &WorkloadSpec| match serde_json::to_value(spec) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        let theirs = fields(&stray.spec);
        let differences = |spec: &WorkloadSpec| -> Vec<String> {
            let ours = fields(spec);
            let mut keys: Vec<&String> = theirs.keys().chain(ours.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .filter(|k| theirs.get(*k) != ours.get(*k))
                .map(|k| {
                    let show = |v: Option<&serde_json::Value>| {
                        v.map_or_else(|| "unset".to_string(), |v| v.to_string())
                    };
                    format!(
                        "{k} {} in the file, {} now",
                        show(theirs.get(k)),
                        show(ours.get(k))
                    )
                })
                .collect()
        };
        let closest = specs.iter().map(differences).min_by_key(Vec::len)?;
        Some(format!(
            "the file holds a result of other settings ({}): going on would drop it; run without --resume to start again, or write to another file",
            closest.join(", ")
        ))
    }

    /// Workloads of `previous` whose spec is in the plan are taken as done.
    pub fn resume_from(mut self, previous: Vec<WorkloadResult>) -> Self {
        self.previous = previous;
        self
    }

    /// Runs `specs` in order, handing the document to `progress` after each
    /// run; stops early on a signal. Files fathom created are removed when
    /// the session is dropped.
    pub fn run(
        mut self,
        specs: &[WorkloadSpec],
        progress: &mut dyn FnMut(&Document) -> anyhow::Result<()>,
    ) -> anyhow::Result<Document> {
        self.checked = check_plan(specs)?;
        for (i, spec) in specs.iter().enumerate() {
            if self.stop.is_set() {
                break;
            }
            self.phase(
                format!("run {} of {}: {}", i + 1, specs.len(), spec.name),
                Some((i as u64, specs.len() as u64)),
            );
            if let Some(board) = &self.board {
                let (seconds, bytes) = spec.planned();
                board.planned(seconds, bytes);
            }
            if let Some(done) = self
                .previous
                .iter()
                .position(|w| w.spec == *spec && !w.interrupted)
            {
                let done = self.previous.swap_remove(done);
                self.document.results.push(RunResult::Workload(done));
                continue;
            }
            let result = match self.run_checked(spec) {
                Ok(r) => r,
                Err(e) if e.is::<Interrupted>() => break,
                Err(e) => {
                    // The plan was checked before the first run: what goes
                    // wrong now (a device detached, a file system gone) is
                    // a failure of the run, not bad input, and what was
                    // measured before it is kept.
                    let e = match e.downcast::<UsageError>() {
                        Ok(usage) => anyhow::anyhow!("{} (after the run had started)", usage.0),
                        Err(e) => e,
                    };
                    if self.document.results.is_empty() {
                        return Err(e);
                    }
                    self.document.failure = Some(format!("{e:#}"));
                    break;
                }
            };
            self.document.results.push(result);
            progress(&self.document)?;
        }
        self.document.interrupted |= self.stop.is_set();
        let Session {
            document, prepared, ..
        } = self;
        drop(prepared);
        Ok(document)
    }

    /// Runs one workload (or streams workload) on this session's targets,
    /// laying out those not yet laid out, and returns its result without
    /// adding it to the document: for callers that decide the next run from
    /// the last (capacity search). A signal during the layout is an
    /// [`Interrupted`] error; one during the run, an interrupted result.
    /// Only the spec's own knobs are checked: the caller checks the plan
    /// ([`check_plan`]) before the first run, while no target fathom lays
    /// out exists yet (after, one would look like a file it did not create).
    pub fn run_one(&mut self, spec: &WorkloadSpec) -> anyhow::Result<RunResult> {
        spec.validate()?;
        self.run_checked(spec)
    }

    pub(super) fn run_checked(&mut self, spec: &WorkloadSpec) -> anyhow::Result<RunResult> {
        if let Some(board) = &self.board {
            board.workload(&spec.name);
        }
        let result = if spec.streams.is_empty() {
            let targets = self.prepare_targets(spec)?;
            let mut runs = Vec::with_capacity(spec.repeat as usize);
            for _ in 0..spec.repeat {
                runs.push(self.run_prepared(spec, &targets)?);
                if self.stop.is_set() {
                    break;
                }
            }
            let result = match spec.repeat {
                1 => runs.pop().expect("one run"),
                _ => Repeats::choose(runs, spec.pick),
            };
            self.document.interrupted |= result.interrupted;
            RunResult::Workload(result)
        } else {
            let result = self.run_streams_workload(spec)?;
            self.document.interrupted |= result.interrupted;
            RunResult::Streams(result)
        };
        Ok(result)
    }

    /// Runs a plain workload once on its prepared targets, judged.
    fn run_prepared(
        &mut self,
        spec: &WorkloadSpec,
        targets: &[PreparedTarget],
    ) -> anyhow::Result<WorkloadResult> {
        let context = warning_context(targets);
        let live = self.live;
        let stop = self.stop.clone();
        let mut result = run_workload(spec, targets, &stop, self.options(live))?;
        result.warnings = crate::run::warnings::check(&result, &context);
        let shared = crate::run::warnings::shared_device(&[&result], &result.disks);
        result.warnings.extend(shared);
        result.limited_by = crate::run::limit::judge(&result);
        if let Some(limit) = &result.limited_by {
            self.verdict(format!("{}: limited by {}", spec.name, limit.by.name()));
        }
        Ok(result)
    }

    /// Runs the streams of `spec` at the same time, each on its own targets
    /// (a target two streams share is laid out once).
    pub(super) fn run_streams_workload(
        &mut self,
        spec: &WorkloadSpec,
    ) -> anyhow::Result<StreamsResult> {
        let mut prepared = Vec::with_capacity(spec.streams.len());
        for stream in &spec.streams {
            prepared.push(self.prepare_targets(stream)?);
        }
        let streams: Vec<Stream> = spec
            .streams
            .iter()
            .zip(&prepared)
            .map(|(spec, targets)| Stream { spec, targets })
            .collect();
        let stop = self.stop.clone();
        let mut results = run_streams(&streams, &stop, self.options(false), &mut |_, _| {})?;
        for (result, targets) in results.iter_mut().zip(&prepared) {
            let context = warning_context(targets);
            result.warnings = crate::run::warnings::check(result, &context);
        }
        // The disks are the group's: judged against every stream's I/O, said
        // once, on the first stream.
        let all: Vec<&WorkloadResult> = results.iter().collect();
        let shared = all
            .first()
            .map(|r| crate::run::warnings::shared_device(&all, &r.disks))
            .unwrap_or_default();
        if let Some(first) = results.first_mut() {
            first.warnings.extend(shared);
        }
        for result in &mut results {
            result.limited_by = crate::run::limit::judge(result);
            if let Some(limit) = &result.limited_by {
                self.verdict(format!(
                    "{}: limited by {}",
                    result.spec.name,
                    limit.by.name()
                ));
            }
        }
        StreamsResult::new(spec.clone(), results).map_err(|e| anyhow::anyhow!(e))
    }

    /// Checks `spec` and prepares its targets, for callers that drive the
    /// workers themselves (certify). The session removes what it created
    /// when dropped.
    pub fn prepare(&mut self, spec: &WorkloadSpec) -> anyhow::Result<Vec<PreparedTarget>> {
        self.checked = check_plan(std::slice::from_ref(spec))?;
        self.prepare_targets(spec)
    }

    /// Prepares this workload's targets, each from what checking the plan
    /// found of it (inspected again only where the run was not in the
    /// plan: a capacity search's steps). A target used by an earlier
    /// workload is reused (and extended if this one needs more of it)
    /// rather than laid out again; the session owns it and removes it at
    /// the end.
    pub(super) fn prepare_targets(
        &mut self,
        spec: &WorkloadSpec,
    ) -> anyhow::Result<Vec<PreparedTarget>> {
        let mut out = Vec::with_capacity(spec.targets.len());
        for (i, name) in spec.targets.iter().enumerate() {
            let key = crate::gate::absolute(std::path::Path::new(name));
            let prepared = match self.prepared.get(&key) {
                None => {
                    let plan = match self.checked.take(spec, name) {
                        Some(plan) => plan,
                        None => target::inspect(spec, name, i)?,
                    };
                    if let Some(notice) = plan.own_file_notice(spec.keep) {
                        crate::util::terminal::say(&format!("fathom: {notice}"));
                    }
                    self.announce(&plan);
                    let created = target::prepare(plan, spec.keep, &self.stop)?;
                    let shared = created.shared();
                    self.prepared.insert(key, created);
                    shared
                }
                Some(first) => {
                    let plan = if first.plan.create {
                        target::inspect_own_file(spec, name, &first.plan.path)?
                    } else {
                        target::inspect(spec, name, i)?
                    };
                    self.announce(&plan);
                    target::prepare(plan, true, &self.stop)?
                }
            };
            out.push(prepared);
        }
        Ok(out)
    }

    /// Says what an override lifted for a target, once a session.
    fn announce(&mut self, plan: &target::TargetPlan) {
        if let Some(notice) = plan.override_notice()
            && self.announced.insert(plan.name.clone())
        {
            crate::util::terminal::say(&format!("fathom: {notice}"));
        }
    }
}

/// What the plausibility checks need to know of prepared targets.
pub(super) fn warning_context(targets: &[PreparedTarget]) -> crate::run::warnings::Context {
    crate::run::warnings::Context {
        available_memory: crate::run::warnings::available_memory(),
        sparse: targets
            .iter()
            .map(|t| {
                std::fs::metadata(&t.plan.path).is_ok_and(|m| crate::run::warnings::is_sparse(&m))
            })
            .collect(),
    }
}
