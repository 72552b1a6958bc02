//! `fathom train`: the storage side of AI training as MLPerf Storage
//! measures it. A training run makes (untimed) or finds a dataset of
//! sample files, reads it epoch by epoch through simulated accelerators
//! and their data loaders (`reader.rs`), and judges the accelerator
//! utilization (AU) against the workload's threshold; with
//! `--find-max-accelerators` it looks for the most accelerators that
//! still pass, doubling and then halving the gap as `capacity` does. A
//! checkpoint run writes a model's checkpoint rank by rank and reads it
//! back (`checkpoint.rs`).

pub mod checkpoint;
pub mod dataset;
pub mod reader;

use crate::measure::cpu::CpuTime;
use crate::measure::live::LiveBoard;
use crate::result::train::{
    AcceleratorSearch, CheckpointResult, DatasetFacts, SearchStep, Tails, TrainResult,
    TrainingResult,
};
use crate::run::search::Outcome;
use crate::spec::train::{
    AcceleratorType, CheckpointModel, CheckpointSpec, MlperfVersion, SampleFormat, TrainSpec,
    TrainingModel, TrainingSpec, dataset_files,
};
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use crate::util::units::thousands;
use dataset::{Dataset, Found, Layout};
use std::path::Path;
use std::time::Instant;

/// A training run as asked: a preset and what was changed of it.
#[derive(Debug, Clone, Default)]
pub struct TrainingAsk {
    pub dir: String,
    pub accelerators: u32,
    pub files: Option<u64>,
    pub sample_bytes: Option<u64>,
    pub sample_bytes_stdev: Option<u64>,
    pub batch_size: Option<u64>,
    pub read_threads: Option<u32>,
    pub prefetch: Option<u32>,
    pub epochs: Option<u32>,
    pub compute_s: Option<f64>,
    pub direct: bool,
    pub read_rate: Option<u64>,
    pub seed: u64,
    pub keep: bool,
}

/// The spec of a training run: the preset's figures (of `version`, for
/// `accelerator`), changed where asked, and the dataset sized by MLPerf's
/// rule from this host's memory unless `--files` says otherwise; refused
/// when the release has no preset for the pair.
pub fn training_spec(
    model: TrainingModel,
    version: MlperfVersion,
    accelerator: AcceleratorType,
    ask: &TrainingAsk,
) -> Result<TrainingSpec, UsageError> {
    let preset = model.preset(version, accelerator).map_err(UsageError)?;
    let full = preset.shape.clone();
    let mut shape = preset.shape.clone();
    if let Some(b) = ask.sample_bytes {
        shape.sample_bytes = b;
        // The deviation scales with the mean it was given for.
        shape.sample_bytes_stdev =
            (full.sample_bytes_stdev as f64 * b as f64 / full.sample_bytes as f64) as u64;
    }
    if let Some(d) = ask.sample_bytes_stdev {
        shape.sample_bytes_stdev = d;
    }
    if let Some(b) = ask.batch_size {
        shape.batch_size = b;
    }
    if let Some(t) = ask.read_threads {
        shape.read_threads = t;
    }
    if let Some(p) = ask.prefetch {
        shape.prefetch = p;
    }
    if let Some(e) = ask.epochs {
        shape.epochs = e;
    }
    let memory = crate::measure::facts::host_facts().memory_bytes;
    // MLPerf's rule at the workload's own sample size (the dataset it
    // really needs); a cut sample size sizes a dataset by the same rule.
    let rule = dataset_files(&full, memory, ask.accelerators.max(1));
    let files = ask
        .files
        .unwrap_or_else(|| dataset_files(&shape, memory, ask.accelerators.max(1)));
    Ok(TrainingSpec {
        dir: ask.dir.clone(),
        model,
        mlperf_version: version,
        accelerator,
        whatif: preset.whatif,
        accelerators: ask.accelerators,
        rule_files: (files < rule || ask.sample_bytes.is_some()).then_some(rule),
        full_sample_bytes: ask
            .sample_bytes
            .filter(|&b| b != full.sample_bytes)
            .map(|_| full.sample_bytes),
        files,
        shape,
        compute_s: ask.compute_s.unwrap_or(preset.compute_s),
        direct: ask.direct,
        read_rate: ask.read_rate,
        seed: ask.seed,
        keep: ask.keep,
    })
}

/// A training run checked against its flags and what DIR holds.
pub struct CheckedTraining {
    pub spec: TrainingSpec,
    layout: Layout,
    kept: bool,
    overwrite: bool,
}

/// Everything checked before anything is written.
pub fn check_training(spec: &TrainingSpec, overwrite: bool) -> Result<CheckedTraining, UsageError> {
    let fail = |m: String| Err(UsageError(m));
    if spec.accelerators == 0 {
        return fail("--accelerators 0: a run feeds one accelerator at least".into());
    }
    if spec.shape.batch_size == 0 || spec.shape.epochs == 0 || spec.files == 0 {
        return fail("--batch-size, --epochs and --files: each at least 1".into());
    }
    if spec.shape.sample_bytes == 0 {
        return fail("--sample-size 0: a sample holds a byte at least".into());
    }
    if !(spec.compute_s >= 0.0 && spec.compute_s.is_finite()) {
        return fail(format!(
            "--compute-time {}: a time of 0 or more",
            spec.compute_s
        ));
    }
    if spec.read_rate == Some(0) {
        return fail("--read-rate 0: a rate above zero".into());
    }
    if spec.direct && spec.shape.samples_per_file > 1 {
        return fail(format!(
            "--direct: {}'s samples sit at unaligned places in {} files, which O_DIRECT cannot read",
            spec.model.name(),
            match spec.shape.format {
                SampleFormat::Npz => "npz",
                SampleFormat::Tfrecord => "TFRecord",
                SampleFormat::Jpeg => "JPEG",
            }
        ));
    }
    if spec.steps_per_epoch() == 0 {
        return fail(format!(
            "a batch of {} samples for each of {} accelerator(s) is more than the dataset's {} samples: give more --files or fewer --accelerators",
            spec.shape.batch_size,
            spec.accelerators,
            thousands(spec.samples())
        ));
    }
    let dir = Path::new(&spec.dir);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return fail(format!("{}: not a directory", spec.dir)),
        Err(e) => return fail(format!("{}: {e}", spec.dir)),
    }
    let layout = Layout::new(spec.model, &spec.shape, spec.files, spec.seed);
    let found = dataset::inspect(dir)?;
    let kept = match &found {
        Found::Nothing => false,
        Found::Kept(found) if *found == layout => true,
        Found::Kept(_) if overwrite => false,
        Found::Kept(found) => {
            return fail(format!(
                "{}: holds a dataset of fathom's of another shape ({} {} files of {} samples of {} B, seed {}): pass --overwrite to replace it",
                dataset::root_in(dir).display(),
                thousands(found.files),
                found.model.name(),
                found.samples_per_file,
                found.sample_bytes,
                found.seed
            ));
        }
    };
    // A dataset replaced frees its room first: its run checks then.
    if matches!(found, Found::Nothing) {
        dataset::check_room(dir, &layout)?;
    }
    Ok(CheckedTraining {
        spec: spec.clone(),
        layout,
        kept,
        overwrite,
    })
}

/// The dataset a checked run reads: the kept one, or one made now
/// (replacing a kept one of another shape with `--overwrite`).
fn dataset_for(checked: &CheckedTraining, stop: &StopFlag) -> anyhow::Result<(Dataset, f64)> {
    let dir = Path::new(&checked.spec.dir);
    if checked.kept {
        let found = Dataset::open_kept(dir)?;
        found.drop_cached();
        return Ok((found, 0.0));
    }
    if checked.overwrite && matches!(dataset::inspect(dir)?, Found::Kept(_)) {
        Dataset::replace(dir)?;
        dataset::check_room(dir, &checked.layout)?;
    }
    let began = Instant::now();
    let threads = checked.spec.shape.read_threads.clamp(1, 8);
    let made = Dataset::make(
        dir,
        checked.layout.clone(),
        threads,
        checked.spec.keep,
        stop,
    )?;
    Ok((made, began.elapsed().as_secs_f64()))
}

fn dataset_facts(spec: &TrainingSpec, dataset: &Dataset, generation_s: f64) -> DatasetFacts {
    let memory = crate::measure::facts::host_facts().memory_bytes;
    let bytes = dataset.layout.total_bytes();
    let times = bytes as f64 / memory.max(1) as f64;
    let shrunk = (times < 5.0).then(|| {
        let mut why = format!(
            "the dataset ({}) is smaller than MLPerf's 5 x this host's memory ({}): after the first epoch the page cache may serve its reads",
            crate::util::units::format_bytes(bytes),
            crate::util::units::format_bytes(5 * memory)
        );
        if spec.rule_files.is_some() {
            why.push_str("; it was scaled down (below)");
        }
        why
    });
    let scaled = spec.rule_files.map(|rule| {
        // The workload's own sample: the one cut from, else the one read.
        let full_sample = spec.full_sample_bytes.unwrap_or(spec.shape.sample_bytes);
        let full_bytes = rule * spec.shape.samples_per_file * full_sample;
        let mut said = format!(
            "{} files of the {} MLPerf's rule asks for ({}, at the workload's {} samples)",
            thousands(dataset.layout.files),
            thousands(rule),
            crate::util::units::format_bytes(full_bytes),
            crate::util::units::format_bytes(full_sample)
        );
        if let Some(b) = spec.full_sample_bytes {
            said.push_str(&format!(
                "; samples cut to {} from {}",
                crate::util::units::format_bytes(spec.shape.sample_bytes),
                crate::util::units::format_bytes(b)
            ));
        }
        said
    });
    DatasetFacts {
        files: dataset.layout.files,
        bytes,
        made: dataset.made_here(),
        generation_s,
        memory_bytes: memory,
        times_memory: times,
        shrunk,
        scaled,
        dropped_per_epoch: spec.dropped_per_epoch(),
    }
}

/// Runs a checked training run: the dataset, then every epoch.
pub fn run_training(
    checked: &CheckedTraining,
    stop: &StopFlag,
    board: Option<&LiveBoard>,
) -> anyhow::Result<TrainingResult> {
    if let Some(board) = board {
        board.workload(checked.spec.model.name());
        board.phase(
            format!("train: making the dataset in {}", checked.spec.dir),
            None,
        );
    }
    let (dataset, generation_s) = dataset_for(checked, stop)?;
    let facts = dataset_facts(&checked.spec, &dataset, generation_s);
    Ok(measure(&checked.spec, &dataset, facts, stop, board))
}

/// One measured run of `spec` over a dataset in hand.
fn measure(
    spec: &TrainingSpec,
    dataset: &Dataset,
    facts: DatasetFacts,
    stop: &StopFlag,
    board: Option<&LiveBoard>,
) -> TrainingResult {
    if let Some(board) = board {
        board.phase(
            format!(
                "train: {} on {} accelerator(s)",
                spec.model.name(),
                spec.accelerators
            ),
            None,
        );
    }
    let gate = spec.read_rate.map(crate::engine::pace::SharedRate::new);
    let started_unix_s = crate::util::unix_now_s();
    let cpu_before = CpuTime::now();
    let mut m = reader::train(dataset, spec, gate.as_ref(), stop, board);
    let mut tails = |op: reader::TrainOp, h: &crate::measure::histogram::LatencyHistogram| Tails {
        intervals: m.seconds.remove(&op).unwrap_or_default(),
        ..Tails::of(h)
    };
    let batch_wait = tails(reader::TrainOp::BatchWait, &m.batch_wait);
    let sample_read = tails(reader::TrainOp::SampleRead, &m.sample_read);
    let cpu = CpuTime::now().since(cpu_before);
    let elapsed_s = m.elapsed.as_secs_f64();
    let au = match m.epochs.is_empty() {
        true => 0.0,
        false => m.epochs.iter().map(|e| e.au).sum::<f64>() / m.epochs.len() as f64,
    };
    let n = f64::from(spec.accelerators);
    let au_intervals = m
        .compute_per_second
        .iter()
        .take(elapsed_s.floor() as usize)
        .map(|s| s / n)
        .collect();
    TrainingResult {
        spec: spec.clone(),
        filesystem: crate::measure::facts::mount_of(Path::new(&spec.dir)).map(|(fs, _)| fs),
        dataset: facts,
        started_unix_s,
        elapsed_s,
        au,
        au_threshold: spec.shape.au_threshold,
        passed: !m.epochs.is_empty() && au >= spec.shape.au_threshold && m.error.is_none(),
        epochs: m.epochs,
        accelerators: m.accelerators,
        samples: m.samples,
        bytes: m.bytes,
        samples_per_s: m.samples as f64 / elapsed_s.max(1e-9),
        bytes_per_s: m.bytes as f64 / elapsed_s.max(1e-9),
        batch_wait,
        sample_read,
        au_intervals,
        cpu_ns_per_sample: cpu.total_s() * 1e9 / m.samples.max(1) as f64,
        loaders_waited_for_cpu_share: m.loaders.waited_for_cpu_share(),
        cpu,
        search: None,
        interrupted: stop.is_set(),
        failure: m.error,
    }
}

/// The most accelerators whose AU meets the threshold: from the count
/// asked, doubling while it passes, then halving the gap between the
/// last count that passed and the first that failed. Counts whose
/// batches the dataset cannot fill end the climb. Returns the run of the
/// largest count that passed (else of the last measured) with the curve.
pub fn find_max_accelerators(
    checked: &CheckedTraining,
    stop: &StopFlag,
    board: Option<&LiveBoard>,
    said: &dyn Fn(&str),
) -> anyhow::Result<TrainingResult> {
    // Each accelerator is a thread and its loaders more: past this the
    // host's threads, not the storage, would be measured.
    const MOST: u32 = 1024;
    let (dataset, generation_s) = dataset_for(checked, stop)?;
    let mut steps: Vec<SearchStep> = Vec::new();
    let mut best: Option<TrainingResult> = None;
    let mut last: Option<TrainingResult> = None;
    let probe = checked.spec.clone();
    let ladder = crate::run::search::counts(MOST, move |n| {
        TrainingSpec {
            accelerators: n,
            ..probe.clone()
        }
        .steps_per_epoch()
            > 0
    });
    let bracket = ladder.search(checked.spec.accelerators, |n, _| {
        let mut spec = checked.spec.clone();
        spec.accelerators = n;
        let facts = dataset_facts(&spec, &dataset, generation_s);
        let run = measure(&spec, &dataset, facts, stop, board);
        said(&format!(
            "{n} accelerator(s): AU {:.1}% ({})",
            run.au * 100.0,
            if run.passed { "passed" } else { "failed" }
        ));
        steps.push(SearchStep {
            accelerators: n,
            au: run.au,
            passed: run.passed,
            samples_per_s: run.samples_per_s,
            bytes_per_s: run.bytes_per_s,
            batch_wait_p99_ns: run.batch_wait.lat_ns.p99,
            host_share: run.host_share(),
        });
        let outcome = if run.interrupted || run.failure.is_some() {
            Outcome::End
        } else if run.passed {
            Outcome::Met
        } else {
            Outcome::Missed
        };
        if outcome == Outcome::Met {
            best = Some(run);
        } else {
            last = Some(run);
        }
        Ok(outcome)
    })?;
    let low = bracket.met.unwrap_or(0);
    let mut result = best.or(last).expect("one step at least");
    result.search = Some(AcceleratorSearch {
        max_accelerators: (low > 0).then_some(low),
        steps,
    });
    Ok(result)
}

/// A `fathom train` run checked, ready to run.
pub enum Checked {
    Training(Box<CheckedTraining>),
    Checkpoint(CheckpointSpec),
}

/// Everything about a run checked before anything is written.
pub fn check(spec: &TrainSpec, overwrite: bool) -> Result<Checked, UsageError> {
    match spec {
        TrainSpec::Training(t) => Ok(Checked::Training(Box::new(check_training(t, overwrite)?))),
        TrainSpec::Checkpoint(c) => {
            check_checkpoint(c, overwrite)?;
            Ok(Checked::Checkpoint(c.clone()))
        }
    }
}

/// Runs a checked run; `find_max`: a training run's search for the most
/// accelerators, each step said through `say`.
pub fn run(
    checked: Checked,
    stop: &StopFlag,
    board: Option<&LiveBoard>,
    find_max: bool,
    say: &dyn Fn(&str),
) -> anyhow::Result<TrainResult> {
    match checked {
        Checked::Training(t) if find_max => {
            find_max_accelerators(&t, stop, board, say).map(TrainResult::Training)
        }
        Checked::Training(t) => run_training(&t, stop, board).map(TrainResult::Training),
        Checked::Checkpoint(c) => run_checkpoint(&c, stop, board).map(TrainResult::Checkpoint),
    }
}

/// A checkpoint run as asked.
#[derive(Debug, Clone)]
pub struct CheckpointAsk {
    pub dir: String,
    pub ranks: Option<u32>,
    pub checkpoint_bytes: Option<u64>,
    pub writes: u32,
    pub reads: u32,
    pub fsync: bool,
    pub interval_s: f64,
    pub keep: bool,
}

pub fn checkpoint_spec(
    model: CheckpointModel,
    version: MlperfVersion,
    accelerator: AcceleratorType,
    ask: &CheckpointAsk,
) -> CheckpointSpec {
    CheckpointSpec {
        dir: ask.dir.clone(),
        model,
        mlperf_version: version,
        accelerator,
        ranks_in_all: None,
        ranks: ask.ranks.unwrap_or(model.ranks()),
        checkpoint_bytes: ask.checkpoint_bytes.unwrap_or(model.checkpoint_bytes()),
        scaled: ask
            .checkpoint_bytes
            .is_some_and(|b| b != model.checkpoint_bytes()),
        writes: ask.writes,
        reads: ask.reads,
        fsync: ask.fsync,
        interval_s: ask.interval_s,
        keep: ask.keep,
    }
}

/// MLPerf Storage v3.0's rules for a checkpoint of the model's own size
/// (one scaled down with --checkpoint-size is no MLPerf run, and is not
/// held to them): the accelerators' memory together holds the checkpoint
/// (Rules 4.3.4), and only the 8B model has a subset run (4.3.5).
fn check_rules(spec: &CheckpointSpec) -> Result<(), String> {
    if spec.mlperf_version != MlperfVersion::V3_0 || spec.scaled {
        return Ok(());
    }
    let all = spec.ranks_in_all.unwrap_or(spec.ranks);
    let per = spec.accelerator.memory_bytes();
    let held = u64::from(all) * per;
    let size = spec.model.checkpoint_bytes();
    if held < size {
        return Err(format!(
            "{all} x {} ({} each) hold {} of accelerator memory, less than {}'s {} checkpoint (MLPerf Storage v3.0 Rules 4.3.4): give {} accelerators at least, or --checkpoint-size to scale it down (no longer an MLPerf run)",
            spec.accelerator,
            crate::util::units::format_decimal_bytes(per),
            crate::util::units::format_decimal_bytes(held),
            spec.model.name(),
            crate::util::units::format_decimal_bytes(size),
            size.div_ceil(per)
        ));
    }
    let whole = spec.model.ranks();
    if all < whole && spec.model != CheckpointModel::Llama3_8b {
        return Err(format!(
            "{all} of {}'s {whole} ranks is a subset run, which MLPerf Storage v3.0 defines for llama3-8b alone (Rules 4.3.5): give all {whole} (under --mpi, across the hosts), or --checkpoint-size to scale it down (no longer an MLPerf run)",
            spec.model.name()
        ));
    }
    Ok(())
}

pub fn check_checkpoint(spec: &CheckpointSpec, overwrite: bool) -> Result<(), UsageError> {
    let most = spec.model.ranks();
    if spec.ranks == 0 || spec.ranks > most {
        return Err(UsageError(format!(
            "--accelerators {}: {} is written by {most} ranks; give 1 to {most} (fewer: a host's subset of it)",
            spec.ranks,
            spec.model.name()
        )));
    }
    if spec.rank_bytes() < 2 {
        return Err(UsageError(format!(
            "--checkpoint-size {}: too small to share among {most} ranks",
            spec.checkpoint_bytes
        )));
    }
    if spec.writes == 0 && spec.reads == 0 {
        return Err(UsageError("--writes 0 --reads 0: nothing to do".into()));
    }
    check_rules(spec).map_err(UsageError)?;
    if !(spec.interval_s >= 0.0 && spec.interval_s.is_finite()) {
        return Err(UsageError(format!(
            "--checkpoint-interval {}: a time of 0 or more",
            spec.interval_s
        )));
    }
    match std::fs::metadata(&spec.dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(UsageError(format!("{}: not a directory", spec.dir))),
        Err(e) => return Err(UsageError(format!("{}: {e}", spec.dir))),
    }
    checkpoint::check(spec, overwrite)
}

pub fn run_checkpoint(
    spec: &CheckpointSpec,
    stop: &StopFlag,
    board: Option<&LiveBoard>,
) -> anyhow::Result<CheckpointResult> {
    if let Some(board) = board {
        board.workload(&format!("checkpoint-{}", spec.model.name()));
        board.phase("checkpoint: writing", None);
    }
    let started = Instant::now();
    let started_unix_s = crate::util::unix_now_s();
    let mut store = checkpoint::Checkpoints::open(spec)?;
    let relaunch = store.relaunch();
    let (write, mut failure) = store.write_all(stop);
    let cache = store.drop_cached();
    let mut read = None;
    if failure.is_none() && !stop.is_set() {
        if let Some(board) = board {
            board.phase("checkpoint: reading back", None);
        }
        let (r, f) = store.read_all(stop);
        read = r;
        failure = f;
    }
    Ok(CheckpointResult {
        spec: spec.clone(),
        filesystem: crate::measure::facts::mount_of(Path::new(&spec.dir)).map(|(fs, _)| fs),
        started_unix_s,
        elapsed_s: started.elapsed().as_secs_f64(),
        write,
        read,
        cache,
        relaunch,
        interrupted: stop.is_set(),
        failure,
    })
}
