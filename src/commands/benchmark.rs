//! The one contract of a kind of run built beside the disk plan: tree,
//! metadata, training and object-store runs each implement [`Benchmark`]
//! once, and one driver runs any of them: the command line's
//! (`cli/driver.rs`: dry run, signals, live figures, the document, history,
//! the exit code) and MPI's (`ranks::Ranked`: every rank's part checked
//! before any rank makes anything, the ranks started together, one merged
//! document). Modelled on warp's `Benchmark` (prepare, start, cleanup) and
//! its one `runBench`: a new kind of run is one more implementation here,
//! not a copy of a driver.
//!
//! `run` prepares, measures and cleans up: what it makes is claimed through
//! the gate as it is made and removed by the claim's guard when the run
//! ends, however it ends, so preparing and cleaning up cannot be split
//! from the run without leaving a window where a made file has no owner.

use crate::measure::live::LiveBoard;
use crate::result::kind::OneKind;
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What a run is handed by its driver.
pub struct Context<'a> {
    pub stop: &'a StopFlag,
    /// Where its figures go while it runs (`--live`, `--metrics-listen`).
    pub board: Option<&'a LiveBoard>,
    /// The other ranks' barrier under MPI: called with whether this rank is
    /// fine, it says whether every rank is. Alone, it is always yes.
    pub meet: Option<&'a dyn Fn(bool) -> bool>,
    /// Progress said to the user (stderr at a terminal; nothing on a rank
    /// but rank 0).
    pub say: &'a dyn Fn(&str),
}

impl Context<'_> {
    /// Meets the other ranks, if any: whether every one is fine.
    pub fn meet(&self, ok: bool) -> bool {
        self.meet.is_none_or(|meet| meet(ok))
    }
}

/// Where a rank of an MPI run is, for a spec to make its own.
pub struct Place<'a> {
    pub rank: u32,
    pub ranks: u32,
    pub host: &'a str,
}

/// One kind of run.
pub trait Benchmark {
    /// What it is asked to do: built from flags or a job file, sent by MPI's
    /// rank 0 to every rank.
    type Spec: Serialize + DeserializeOwned + Clone;
    /// The spec checked against its target, ready to run; nothing made yet.
    type Checked;
    /// What it measured.
    type Result: OneKind;
    /// What it is, in messages ("a tree run").
    const WHAT: &'static str;

    /// Makes `spec` this rank's part of an MPI run (its own directory or
    /// prefix), refusing a spec the ranks could not share.
    fn own_part(&self, spec: &mut Self::Spec, place: &Place) -> Result<(), String> {
        let _ = (spec, place);
        Err(format!("--mpi: {} runs on one host", Self::WHAT))
    }

    /// Everything that can be known wrong before anything is made.
    fn check(&self, spec: &Self::Spec) -> Result<Self::Checked, UsageError>;

    /// The dry run's line for `spec`, from what can be known without
    /// touching its target beyond a look (no store is asked anything).
    fn plan(&self, spec: &Self::Spec) -> Result<String, UsageError>;

    /// Prepares, measures and cleans up, starting when every rank meets
    /// (`cx.meet`) if it does not meet them itself phase by phase.
    fn run(&self, checked: Self::Checked, cx: &Context) -> anyhow::Result<Self::Result>;
}

/// Tree runs (`fathom tree`, fio's file-operation engines).
pub struct TreeBench {
    pub overwrite: bool,
}

impl Benchmark for TreeBench {
    type Spec = crate::spec::tree::TreeSpec;
    type Checked = (Self::Spec, Vec<crate::spec::tree::TreePhase>);
    type Result = crate::result::tree::TreeResult;
    const WHAT: &'static str = "a tree run";

    fn own_part(&self, spec: &mut Self::Spec, place: &Place) -> Result<(), String> {
        spec.rank = Some(place.rank);
        spec.ranks = Some(place.ranks);
        let named = ["{rank}", "{host}"]
            .into_iter()
            .find(|n| spec.dir.contains(n));
        if let Some(n) = named.filter(|_| spec.shared_dir) {
            return Err(format!(
                "--shared-dir: DIR names {n}, so the ranks would not share it"
            ));
        }
        spec.dir = crate::input::plan::rank_path(&spec.dir, place.rank, place.host);
        Ok(())
    }

    fn check(&self, spec: &Self::Spec) -> Result<Self::Checked, UsageError> {
        let phases = super::tree::check(spec, self.overwrite)?;
        Ok((spec.clone(), phases))
    }

    fn plan(&self, spec: &Self::Spec) -> Result<String, UsageError> {
        let (spec, phases) = &self.check(spec)?;
        let names: Vec<&str> = phases.iter().map(|p| p.name()).collect();
        Ok(format!(
            "tree run in {}: {} thread{}, depth {}, width {}, {} files per directory; phases {}",
            spec.dir,
            spec.threads,
            if spec.threads == 1 { "" } else { "s" },
            spec.shape.depth,
            spec.shape.width,
            spec.shape.files,
            names.join(", ")
        ))
    }

    fn run(&self, (spec, phases): Self::Checked, cx: &Context) -> anyhow::Result<Self::Result> {
        // A tree's ranks meet before each phase, not only at the start.
        super::tree::run(&spec, &phases, self.overwrite, cx.stop, cx.board, cx.meet)
    }
}

/// Metadata runs (`fathom meta`, bonnie++ -n).
pub struct MetaBench;

impl Benchmark for MetaBench {
    type Spec = crate::spec::meta::MetaSpec;
    type Checked = Self::Spec;
    type Result = crate::result::meta::MetaResult;
    const WHAT: &'static str = "a metadata run";

    fn check(&self, spec: &Self::Spec) -> Result<Self::Checked, UsageError> {
        super::meta::validate(spec)?;
        Ok(spec.clone())
    }

    fn plan(&self, spec: &Self::Spec) -> Result<String, UsageError> {
        self.check(spec)?;
        Ok(format!(
            "metadata run in {}: {}k files, {} a directory, {} bytes each",
            spec.dir, spec.files_k, spec.files_per_dir, spec.file_size
        ))
    }

    fn run(&self, spec: Self::Checked, cx: &Context) -> anyhow::Result<Self::Result> {
        cx.meet(true);
        super::meta::run(&spec, cx.stop, cx.board)
    }
}

/// Training and checkpoint runs (`fathom train`).
pub struct TrainBench {
    pub overwrite: bool,
    /// Search for the most accelerators the storage keeps busy.
    pub find_max: bool,
}

impl Benchmark for TrainBench {
    type Spec = crate::spec::train::TrainSpec;
    type Checked = super::train::Checked;
    type Result = crate::result::train::TrainResult;
    const WHAT: &'static str = "a training run";

    fn own_part(&self, spec: &mut Self::Spec, place: &Place) -> Result<(), String> {
        use crate::spec::train::TrainSpec;
        if self.find_max {
            return Err(
                "--mpi: --find-max-accelerators searches on one host; run it without MPI".into(),
            );
        }
        let dir = match spec {
            TrainSpec::Training(t) => &mut t.dir,
            TrainSpec::Checkpoint(c) => {
                // MLPerf's rules count the accelerators of every host.
                c.ranks_in_all = Some(c.ranks.saturating_mul(place.ranks));
                &mut c.dir
            }
        };
        made_own(
            dir,
            place,
            "--mpi: name each rank's directory with {rank} or {host} (DIR/{rank}): ranks sharing one directory would each find the others' files there",
        )
    }

    fn check(&self, spec: &Self::Spec) -> Result<Self::Checked, UsageError> {
        super::train::check(spec, self.overwrite)
    }

    fn plan(&self, spec: &Self::Spec) -> Result<String, UsageError> {
        use crate::spec::train::TrainSpec;
        self.check(spec)?;
        Ok(match spec {
            TrainSpec::Training(t) => format!(
                "training run of {} in {}: {} {} accelerators, {} files",
                t.model.name(),
                t.dir,
                t.accelerators,
                t.accelerator,
                t.files
            ),
            TrainSpec::Checkpoint(c) => format!(
                "checkpoint run of {} in {}: {} writes, {} reads",
                c.model.name(),
                c.dir,
                c.writes,
                c.reads
            ),
        })
    }

    fn run(&self, checked: Self::Checked, cx: &Context) -> anyhow::Result<Self::Result> {
        cx.meet(true);
        super::train::run(checked, cx.stop, cx.board, self.find_max, cx.say)
    }
}

/// Object-store runs (`fathom run s3://BUCKET/PREFIX`).
pub struct ObjectBench;

impl Benchmark for ObjectBench {
    type Spec = crate::spec::object::ObjectSpec;
    type Checked = super::object::Checked;
    type Result = crate::result::object::ObjectResult;
    const WHAT: &'static str = "an object-store run";

    fn own_part(&self, spec: &mut Self::Spec, place: &Place) -> Result<(), String> {
        made_own(
            &mut spec.target.prefix,
            place,
            "--mpi: name each rank's prefix with {rank} (s3://BUCKET/PREFIX-{rank}): ranks sharing one prefix would each find the others' objects there",
        )
    }

    fn check(&self, spec: &Self::Spec) -> Result<Self::Checked, UsageError> {
        super::object::check(spec)
    }

    fn plan(&self, s: &Self::Spec) -> Result<String, UsageError> {
        Ok(format!(
            "{}  [mix {}, {} objects, {} uploaded first, {} workers]  {}  {}",
            s.name,
            s.mix,
            s.object_size,
            s.objects,
            s.workers,
            s.target,
            s.runtime_s
                .map(crate::util::units::format_duration)
                .unwrap_or_else(|| "one pass".into())
        ))
    }

    fn run(&self, checked: Self::Checked, cx: &Context) -> anyhow::Result<Self::Result> {
        // The ranks start together, once every one has checked its store.
        cx.meet(true);
        (cx.say)(&format!(
            "{}: mix {} at {}",
            checked.spec.target,
            checked.spec.mix,
            checked.spec.endpoints.join(", ")
        ));
        Ok(super::object::run(checked, cx.stop, cx.board))
    }
}

/// Makes `path` (a directory, a prefix) this rank's own, its `{rank}`
/// and `{host}` filled in; one that names neither would be shared by
/// every rank, and is refused with `refusal`.
fn made_own(path: &mut String, place: &Place, refusal: &str) -> Result<(), String> {
    if !["{rank}", "{host}"].into_iter().any(|n| path.contains(n)) {
        return Err(refusal.into());
    }
    *path = crate::input::plan::rank_path(path, place.rank, place.host);
    Ok(())
}

/// A copy of `document` holding `result`, its interruption and its
/// failure said at the document's level as a disk plan's are.
pub fn holding(
    document: &crate::result::Document,
    result: impl OneKind,
) -> crate::result::Document {
    let mut document = document.clone();
    add(&mut document, result);
    document
}

/// Adds `result` to `document`, its interruption and first failure with it.
pub fn add(document: &mut crate::result::Document, result: impl OneKind) {
    document.interrupted |= result.interrupted();
    if document.failure.is_none() {
        document.failure = result.failure();
    }
    document.results.push(result.into_result());
}
