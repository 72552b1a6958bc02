//! `fathom train`: flags into a training or checkpoint spec, the
//! library's checks and run, and the document out.

use super::OutputArgs;
use super::driver::drive;
use clap::Args;
use fathom::commands::benchmark::TrainBench;
use fathom::commands::train::{self, CheckpointAsk, TrainingAsk};
use fathom::spec::train::{AcceleratorType, MlperfVersion, TrainSpec, TrainWorkload};
use fathom::util::error::UsageError;
use fathom::util::units::{parse_duration, parse_size};

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Directory to work in: the dataset is made in `DIR/fathom-train`
    /// and checkpoints in `DIR/fathom-checkpoint`; fathom removes only
    /// what it made. Under --mpi, `{rank}` or `{host}` in it gives each
    /// rank a directory of its own.
    pub dir: String,

    /// unet3d, retinanet (training; resnet50 and cosmoflow with
    /// --mlperf-version 2.0), or checkpoint-llama3-8b, -70b, -405b, -1t
    /// (checkpoint alone is checkpoint-llama3-8b).
    #[arg(long, default_value = "unet3d", hide_possible_values = true,
          value_parser = super::knob_args::Offered::new(TrainWorkload::names(), str::parse::<TrainWorkload>))]
    pub workload: TrainWorkload,

    /// Accelerators to feed (training, default 1), or ranks writing the
    /// checkpoint (default the model's whole count; fewer: a host's
    /// subset of it).
    #[arg(long)]
    pub accelerators: Option<u32>,

    /// The accelerator emulated: its compute time per batch, and its
    /// memory against a checkpoint. v3.0: b200 (the default) or mi355,
    /// and h100 or a100 as "whatif"; v2.0: h100 (the default) or a100.
    #[arg(long = "accelerator-type", value_name = "TYPE")]
    pub accelerator_type: Option<AcceleratorType>,

    /// The release of MLPerf Storage whose presets and rules the run
    /// follows: 3.0, or 2.0 (resnet50, cosmoflow, h100 and a100 as v2.0
    /// ran them).
    #[arg(long = "mlperf-version", value_name = "VERSION", default_value_t = MlperfVersion::NEWEST)]
    pub mlperf_version: MlperfVersion,

    /// Look for the most accelerators whose AU meets the workload's
    /// threshold: from --accelerators, doubling while it passes, then
    /// halving the gap.
    #[arg(long = "find-max-accelerators")]
    pub find_max: bool,

    /// Files in the dataset (default: MLPerf's rule, 5 x this host's
    /// memory and 500 steps at least); fewer make a dataset the page
    /// cache may hold, and the result says so.
    #[arg(long)]
    pub files: Option<u64>,

    /// Mean bytes of a sample (default the workload's); smaller scale the
    /// dataset down, and the result says so.
    #[arg(long = "sample-size", value_name = "SIZE")]
    pub sample_size: Option<String>,

    /// Standard deviation of the samples' sizes (default the workload's,
    /// scaled with --sample-size; 0: every sample the same size).
    #[arg(long = "sample-size-stdev", value_name = "SIZE")]
    pub sample_size_stdev: Option<String>,

    /// Samples in a batch (default the workload's).
    #[arg(long = "batch-size")]
    pub batch_size: Option<u64>,

    /// Data-loader threads per accelerator (default the workload's).
    #[arg(long = "read-threads")]
    pub read_threads: Option<u32>,

    /// Batches each loader thread may read ahead (default 2; 0: a batch
    /// is read only when its accelerator asks for it).
    #[arg(long)]
    pub prefetch: Option<u32>,

    /// Epochs (default the workload's, 5).
    #[arg(long)]
    pub epochs: Option<u32>,

    /// Compute time per batch (default the workload's for the
    /// accelerator type).
    #[arg(long = "compute-time", value_name = "DURATION")]
    pub compute_time: Option<String>,

    /// Read the samples with O_DIRECT (formats whose samples are whole
    /// files).
    #[arg(long)]
    pub direct: bool,

    /// Cap every loader's reads together at this many bytes a second: a
    /// path of a known rate.
    #[arg(long = "read-rate", value_name = "SIZE")]
    pub read_rate: Option<String>,

    /// Seed of the shuffles and the sample sizes.
    #[arg(long, default_value_t = fathom::spec::DEFAULT_SEED)]
    pub seed: u64,

    /// Bytes of the whole checkpoint, scaled down from the model's (the
    /// result says so).
    #[arg(long = "checkpoint-size", value_name = "SIZE")]
    pub checkpoint_size: Option<String>,

    /// Checkpoints written (0: read back those kept by an earlier run).
    #[arg(long, default_value_t = 10)]
    pub writes: u32,

    /// Checkpoints read back.
    #[arg(long, default_value_t = 10)]
    pub reads: u32,

    /// Time between checkpoints written.
    #[arg(
        long = "checkpoint-interval",
        value_name = "DURATION",
        default_value = "5s"
    )]
    pub checkpoint_interval: String,

    /// Write checkpoints without fsync (MLPerf's rules ask for it).
    #[arg(long = "no-fsync")]
    pub no_fsync: bool,

    /// Keep the dataset or checkpoints this run made, for a later run.
    #[arg(long)]
    pub keep: bool,

    /// Replace a kept dataset or checkpoints of another shape (and an
    /// existing --output file that is not a fathom result).
    #[arg(long)]
    pub overwrite: bool,

    #[command(flatten)]
    pub mpi: super::MpiArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

fn size(flag: &str, text: &Option<String>) -> Result<Option<u64>, UsageError> {
    text.as_deref()
        .map(|t| parse_size(t).map_err(|e| UsageError(format!("{flag} {t}: {e}"))))
        .transpose()
}

fn seconds(flag: &str, text: &str) -> Result<f64, UsageError> {
    parse_duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|e| UsageError(format!("{flag} {text}: {e}")))
}

/// The flags given that the workload has no use for.
fn stray_flags(args: &TrainArgs, checkpoint: bool) -> Option<&'static str> {
    let training = [
        ("--find-max-accelerators", args.find_max),
        ("--files", args.files.is_some()),
        ("--sample-size", args.sample_size.is_some()),
        ("--sample-size-stdev", args.sample_size_stdev.is_some()),
        ("--batch-size", args.batch_size.is_some()),
        ("--read-threads", args.read_threads.is_some()),
        ("--prefetch", args.prefetch.is_some()),
        ("--epochs", args.epochs.is_some()),
        ("--compute-time", args.compute_time.is_some()),
        ("--direct", args.direct),
        ("--read-rate", args.read_rate.is_some()),
    ];
    let checkpointing = [
        ("--checkpoint-size", args.checkpoint_size.is_some()),
        ("--no-fsync", args.no_fsync),
    ];
    let unused: &[(&str, bool)] = if checkpoint {
        &training
    } else {
        &checkpointing
    };
    unused.iter().find(|(_, given)| *given).map(|(f, _)| *f)
}

/// The spec the flags ask for.
pub fn spec_of(args: &TrainArgs) -> Result<TrainSpec, UsageError> {
    let checkpoint = matches!(args.workload, TrainWorkload::Checkpoint(_));
    if let Some(flag) = stray_flags(args, checkpoint) {
        return Err(UsageError(format!(
            "{flag}: {} has no use for it",
            args.workload
        )));
    }
    let version = args.mlperf_version;
    let accelerator = args
        .accelerator_type
        .unwrap_or_else(|| version.default_accelerator());
    match args.workload {
        TrainWorkload::Training(model) => {
            let ask = TrainingAsk {
                dir: args.dir.clone(),
                accelerators: args.accelerators.unwrap_or(1),
                files: args.files,
                sample_bytes: size("--sample-size", &args.sample_size)?,
                sample_bytes_stdev: size("--sample-size-stdev", &args.sample_size_stdev)?,
                batch_size: args.batch_size,
                read_threads: args.read_threads,
                prefetch: args.prefetch,
                epochs: args.epochs,
                compute_s: args
                    .compute_time
                    .as_deref()
                    .map(|t| seconds("--compute-time", t))
                    .transpose()?,
                direct: args.direct,
                read_rate: size("--read-rate", &args.read_rate)?,
                seed: args.seed,
                keep: args.keep,
            };
            Ok(TrainSpec::Training(train::training_spec(
                model,
                version,
                accelerator,
                &ask,
            )?))
        }
        TrainWorkload::Checkpoint(model) => {
            let ask = CheckpointAsk {
                dir: args.dir.clone(),
                ranks: args.accelerators,
                checkpoint_bytes: size("--checkpoint-size", &args.checkpoint_size)?,
                writes: args.writes,
                reads: args.reads,
                fsync: !args.no_fsync,
                interval_s: seconds("--checkpoint-interval", &args.checkpoint_interval)?,
                keep: args.keep,
            };
            Ok(TrainSpec::Checkpoint(train::checkpoint_spec(
                model,
                version,
                accelerator,
                &ask,
            )))
        }
    }
}

pub fn train_command(args: &TrainArgs) -> anyhow::Result<i32> {
    super::no_fio_form(&args.output, "a training run")?;
    let spec = spec_of(args)?;
    let bench = TrainBench {
        overwrite: args.overwrite,
        find_max: args.find_max,
    };
    if args.mpi.mpi {
        return super::mpi_bench(&args.mpi, &args.output, args.overwrite, bench, Ok(spec));
    }
    drive(&bench, &[spec], &args.output, args.overwrite, false)
}
