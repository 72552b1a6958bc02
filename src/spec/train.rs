//! What `fathom train` does: the storage side of training a model, as
//! MLPerf Storage measures it. A training run reads a dataset of sample
//! files in batches, each simulated accelerator's data-loader threads
//! filling a prefetch queue while the accelerator "computes" for a fixed
//! time per batch; a checkpoint run writes a model's checkpoint, rank by
//! rank, and reads it back.
//!
//! The presets' figures are MLPerf Storage's own (mlcommons/storage,
//! `configs/dlio/workload/*.yaml` and `Submission_guidelines.md`, v2.0);
//! docs/guide/training.md names the file each comes from.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The accelerator whose compute time per batch a training preset uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcceleratorType {
    H100,
    A100,
}

impl AcceleratorType {
    pub fn name(self) -> &'static str {
        match self {
            AcceleratorType::H100 => "h100",
            AcceleratorType::A100 => "a100",
        }
    }
}

impl FromStr for AcceleratorType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "h100" => Ok(AcceleratorType::H100),
            "a100" => Ok(AcceleratorType::A100),
            _ => Err(format!(
                "--accelerator-type {s}: h100 or a100 (the types MLPerf Storage gives compute times for)"
            )),
        }
    }
}

impl fmt::Display for AcceleratorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a training dataset's files hold their samples, which decides how
/// a sample is read: a whole file, or a record at its place in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleFormat {
    /// NumPy's npz: a file is one sample, read whole.
    Npz,
    /// TensorFlow's TFRecord: records one after another in a file.
    Tfrecord,
}

impl SampleFormat {
    pub fn extension(self) -> &'static str {
        match self {
            SampleFormat::Npz => "npz",
            SampleFormat::Tfrecord => "tfrecord",
        }
    }
}

/// Which order an epoch reads its samples in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shuffle {
    /// In the files' order, each file's samples in order (DLIO's default).
    Off,
    /// The files in a new order each epoch, and the samples of the epoch
    /// in a new order too (DLIO's `file_shuffle: seed` and
    /// `sample_shuffle: seed`).
    Sample,
}

/// A training workload: the dataset's shape and how it is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingShape {
    pub format: SampleFormat,
    /// Files in the dataset as MLPerf's configuration gives it (the run's
    /// count is sized by the rule in [`dataset_files`]).
    pub files: u64,
    pub samples_per_file: u64,
    /// Bytes of a sample: the mean, and the standard deviation each
    /// file's record length is drawn with.
    pub sample_bytes: u64,
    pub sample_bytes_stdev: u64,
    pub batch_size: u64,
    /// Data-loader threads per accelerator.
    pub read_threads: u32,
    /// Batches each loader thread may hold ready ahead of the accelerator
    /// (PyTorch's prefetch_factor; DLIO's `prefetch_size` is 2).
    pub prefetch: u32,
    pub shuffle: Shuffle,
    pub epochs: u32,
    /// The accelerator utilization a run must reach to pass.
    pub au_threshold: f64,
}

/// One of MLPerf Storage's training workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainingModel {
    Unet3d,
    Resnet50,
    Cosmoflow,
}

impl TrainingModel {
    pub const ALL: [TrainingModel; 3] = [
        TrainingModel::Unet3d,
        TrainingModel::Resnet50,
        TrainingModel::Cosmoflow,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TrainingModel::Unet3d => "unet3d",
            TrainingModel::Resnet50 => "resnet50",
            TrainingModel::Cosmoflow => "cosmoflow",
        }
    }

    /// The workload as `configs/dlio/workload/MODEL_h100.yaml` gives it
    /// (the a100 files differ in compute time alone).
    pub fn shape(self) -> TrainingShape {
        match self {
            TrainingModel::Unet3d => TrainingShape {
                format: SampleFormat::Npz,
                files: 168,
                samples_per_file: 1,
                sample_bytes: 146_600_628,
                sample_bytes_stdev: 68_341_808,
                batch_size: 7,
                read_threads: 4,
                prefetch: 2,
                shuffle: Shuffle::Sample,
                epochs: 5,
                au_threshold: 0.90,
            },
            TrainingModel::Resnet50 => TrainingShape {
                format: SampleFormat::Tfrecord,
                files: 1024,
                samples_per_file: 1251,
                sample_bytes: 114_660,
                sample_bytes_stdev: 0,
                batch_size: 400,
                read_threads: 8,
                prefetch: 2,
                shuffle: Shuffle::Off,
                epochs: 5,
                au_threshold: 0.90,
            },
            TrainingModel::Cosmoflow => TrainingShape {
                format: SampleFormat::Tfrecord,
                files: 524_288,
                samples_per_file: 1,
                sample_bytes: 2_828_486,
                sample_bytes_stdev: 71_311,
                batch_size: 1,
                read_threads: 4,
                prefetch: 2,
                shuffle: Shuffle::Sample,
                epochs: 5,
                au_threshold: 0.70,
            },
        }
    }

    /// Seconds an accelerator computes on a batch (`train.computation_time`).
    pub fn compute_s(self, accelerator: AcceleratorType) -> f64 {
        match (self, accelerator) {
            (TrainingModel::Unet3d, AcceleratorType::H100) => 0.323,
            (TrainingModel::Unet3d, AcceleratorType::A100) => 0.636,
            (TrainingModel::Resnet50, AcceleratorType::H100) => 0.224,
            (TrainingModel::Resnet50, AcceleratorType::A100) => 0.435,
            (TrainingModel::Cosmoflow, AcceleratorType::H100) => 0.00350,
            (TrainingModel::Cosmoflow, AcceleratorType::A100) => 0.00551,
        }
    }
}

/// One of MLPerf Storage's checkpointing models (Llama 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckpointModel {
    #[serde(rename = "llama3-8b")]
    Llama3_8b,
    #[serde(rename = "llama3-70b")]
    Llama3_70b,
    #[serde(rename = "llama3-405b")]
    Llama3_405b,
    #[serde(rename = "llama3-1t")]
    Llama3_1t,
}

impl CheckpointModel {
    pub const ALL: [CheckpointModel; 4] = [
        CheckpointModel::Llama3_8b,
        CheckpointModel::Llama3_70b,
        CheckpointModel::Llama3_405b,
        CheckpointModel::Llama3_1t,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CheckpointModel::Llama3_8b => "llama3-8b",
            CheckpointModel::Llama3_70b => "llama3-70b",
            CheckpointModel::Llama3_405b => "llama3-405b",
            CheckpointModel::Llama3_1t => "llama3-1t",
        }
    }

    /// The whole checkpoint's bytes (Submission_guidelines.md, Table 2:
    /// 105 GB, 912 GB, 5.29 TB and 18 TB).
    pub fn checkpoint_bytes(self) -> u64 {
        match self {
            CheckpointModel::Llama3_8b => 105_000_000_000,
            CheckpointModel::Llama3_70b => 912_000_000_000,
            CheckpointModel::Llama3_405b => 5_290_000_000_000,
            CheckpointModel::Llama3_1t => 18_000_000_000_000,
        }
    }

    /// The ranks (GPUs, TP x PP x DP) that write it in a whole run.
    pub fn ranks(self) -> u32 {
        match self {
            CheckpointModel::Llama3_8b => 8,
            CheckpointModel::Llama3_70b => 64,
            CheckpointModel::Llama3_405b => 512,
            CheckpointModel::Llama3_1t => 1024,
        }
    }
}

/// What `fathom train` runs: a training workload or a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TrainWorkload {
    Training(TrainingModel),
    Checkpoint(CheckpointModel),
}

impl TrainWorkload {
    pub fn name(self) -> String {
        match self {
            TrainWorkload::Training(m) => m.name().into(),
            TrainWorkload::Checkpoint(m) => format!("checkpoint-{}", m.name()),
        }
    }

    /// Every preset's name, for help and errors.
    pub fn names() -> Vec<String> {
        TrainingModel::ALL
            .iter()
            .map(|&m| TrainWorkload::Training(m).name())
            .chain(
                CheckpointModel::ALL
                    .iter()
                    .map(|&m| TrainWorkload::Checkpoint(m).name()),
            )
            .collect()
    }
}

impl FromStr for TrainWorkload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let lower = s.to_ascii_lowercase();
        if lower == "checkpoint" {
            return Ok(TrainWorkload::Checkpoint(CheckpointModel::Llama3_8b));
        }
        TrainingModel::ALL
            .iter()
            .map(|&m| TrainWorkload::Training(m))
            .chain(
                CheckpointModel::ALL
                    .iter()
                    .map(|&m| TrainWorkload::Checkpoint(m)),
            )
            .find(|w| w.name() == lower)
            .ok_or_else(|| {
                format!(
                    "{s}: a workload is one of {} (checkpoint alone is checkpoint-llama3-8b)",
                    TrainWorkload::names().join(", ")
                )
            })
    }
}

impl fmt::Display for TrainWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A training run, as asked and sized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingSpec {
    pub dir: String,
    pub model: TrainingModel,
    pub accelerator: AcceleratorType,
    pub accelerators: u32,
    pub shape: TrainingShape,
    /// Files the dataset has (sized by MLPerf's rule unless `--files`).
    pub files: u64,
    /// What the rule asked for, when `--files` or `--sample-size` shrank
    /// the dataset below it: the result says so. At the workload's own
    /// sample size, never the one given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_files: Option<u64>,
    /// The workload's own sample size, when `--sample-size` cut it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_sample_bytes: Option<u64>,
    pub compute_s: f64,
    /// O_DIRECT reads.
    pub direct: bool,
    /// A cap on the loaders' bytes per second, shared by all of them: a
    /// path whose rate fathom sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rate: Option<u64>,
    pub seed: u64,
    pub keep: bool,
}

impl TrainingSpec {
    /// Bytes of one batch, on average.
    pub fn batch_bytes(&self) -> u64 {
        self.shape.batch_size * self.shape.sample_bytes
    }

    pub fn samples(&self) -> u64 {
        self.files * self.shape.samples_per_file
    }

    /// Batches each accelerator takes in an epoch: the samples are shared
    /// out and the last partial batch dropped, as DLIO does.
    pub fn steps_per_epoch(&self) -> u64 {
        self.samples() / (self.shape.batch_size * self.accelerators.max(1) as u64)
    }

    /// Samples an epoch leaves out: what no accelerator's whole batch holds.
    pub fn dropped_per_epoch(&self) -> u64 {
        self.samples()
            - self.steps_per_epoch() * self.shape.batch_size * self.accelerators.max(1) as u64
    }
}

/// Files MLPerf's sizing rule asks for (mlpstorage/rules.py,
/// calculate_training_data_size): the dataset at least five times the
/// hosts' memory, and at least 500 steps of every accelerator's batches.
pub fn dataset_files(shape: &TrainingShape, memory_bytes: u64, accelerators: u32) -> u64 {
    let file_bytes = shape.samples_per_file * shape.sample_bytes;
    let by_bytes = (5 * memory_bytes) / file_bytes.max(1);
    let by_steps = 500 * accelerators as u64 * shape.batch_size / shape.samples_per_file;
    by_bytes.max(by_steps).max(1)
}

/// A checkpoint run, as asked and sized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointSpec {
    pub dir: String,
    pub model: CheckpointModel,
    /// Ranks this run writes for: all of the model's, or a subset (MLPerf's
    /// `subset` mode for a host's own storage: that share of the bytes).
    pub ranks: u32,
    /// Bytes of the whole checkpoint at the model's full rank count.
    pub checkpoint_bytes: u64,
    /// Set when `--checkpoint-size` shrank it from the model's: the result
    /// says so.
    #[serde(default)]
    pub scaled: bool,
    pub writes: u32,
    pub reads: u32,
    pub fsync: bool,
    /// Seconds between checkpoints (`time_between_checkpoints`).
    pub interval_s: f64,
    pub keep: bool,
}

impl CheckpointSpec {
    /// Bytes each rank writes: its share of the whole checkpoint.
    pub fn rank_bytes(&self) -> u64 {
        self.checkpoint_bytes / self.model.ranks() as u64
    }

    /// Of each rank's bytes, the model state's (fp16, 2 bytes a parameter)
    /// and the optimizer's (fp32 weights and two Adam moments, 12 bytes).
    pub fn rank_files(&self) -> [(&'static str, u64); 2] {
        let bytes = self.rank_bytes();
        let model = bytes / 7;
        [("model_states", model), ("optim_states", bytes - model)]
    }

    /// Bytes this run writes per checkpoint.
    pub fn bytes(&self) -> u64 {
        self.rank_bytes() * self.ranks as u64
    }
}

/// A `fathom train` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum TrainSpec {
    Training(TrainingSpec),
    Checkpoint(CheckpointSpec),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_name_parses_back() {
        for name in TrainWorkload::names() {
            assert_eq!(name.parse::<TrainWorkload>().unwrap().name(), name);
        }
        assert!("bert".parse::<TrainWorkload>().is_err());
        assert_eq!(
            "checkpoint".parse::<TrainWorkload>().unwrap(),
            TrainWorkload::Checkpoint(CheckpointModel::Llama3_8b)
        );
    }

    #[test]
    fn the_sizing_rule_takes_the_larger_of_memory_and_steps() {
        let unet = TrainingModel::Unet3d.shape();
        // 128 GiB of memory: 5 x 128 GiB of 146.6 MB files.
        assert_eq!(dataset_files(&unet, 128 << 30, 1), 4_687);
        // Tiny memory: 500 steps x 8 accelerators x batch 7.
        assert_eq!(dataset_files(&unet, 1 << 20, 8), 28_000);
    }

    #[test]
    fn a_checkpoints_files_add_up_to_its_share() {
        let spec = CheckpointSpec {
            dir: "/x".into(),
            model: CheckpointModel::Llama3_8b,
            ranks: 2,
            checkpoint_bytes: 105_000_000_000,
            scaled: false,
            writes: 1,
            reads: 1,
            fsync: true,
            interval_s: 0.0,
            keep: false,
        };
        let per_rank: u64 = spec.rank_files().iter().map(|f| f.1).sum();
        assert_eq!(per_rank, spec.rank_bytes());
        assert_eq!(spec.bytes(), 2 * 105_000_000_000 / 8);
    }
}
