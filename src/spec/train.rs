//! What `fathom train` does: the storage side of training a model, as
//! MLPerf Storage measures it. A training run reads a dataset of sample
//! files in batches, each simulated accelerator's data-loader threads
//! filling a prefetch queue while the accelerator "computes" for a fixed
//! time per batch; a checkpoint run writes a model's checkpoint, rank by
//! rank, and reads it back.
//!
//! The presets' figures are MLPerf Storage's own (mlcommons/storage,
//! `configs/dlio/workload/*.yaml`, `Rules.md` and
//! `Submission_guidelines.md`), of v3.0 unless `--mlperf-version 2.0`;
//! docs/guide/training.md names the file each comes from.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The release of MLPerf Storage whose presets and rules a run follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MlperfVersion {
    #[serde(rename = "2.0")]
    V2_0,
    #[serde(rename = "3.0")]
    V3_0,
}

impl MlperfVersion {
    pub const NEWEST: MlperfVersion = MlperfVersion::V3_0;

    pub fn name(self) -> &'static str {
        match self {
            MlperfVersion::V2_0 => "2.0",
            MlperfVersion::V3_0 => "3.0",
        }
    }

    /// The accelerator a run emulates unless told: the release's own.
    pub fn default_accelerator(self) -> AcceleratorType {
        match self {
            MlperfVersion::V2_0 => AcceleratorType::H100,
            MlperfVersion::V3_0 => AcceleratorType::B200,
        }
    }

    /// The longest a checkpoint read-back launched apart may start after
    /// the write phase ended (v3.0's Rules 4.7.1: 30 s; v2.0 had none).
    pub fn relaunch_limit_s(self) -> Option<f64> {
        match self {
            MlperfVersion::V2_0 => None,
            MlperfVersion::V3_0 => Some(30.0),
        }
    }

    /// The accelerators this release submits results for (v3.0 keeps
    /// h100 and a100 as "whatif" runs only).
    pub fn closed_accelerators(self) -> &'static [AcceleratorType] {
        match self {
            MlperfVersion::V2_0 => &[AcceleratorType::H100, AcceleratorType::A100],
            MlperfVersion::V3_0 => &[AcceleratorType::B200, AcceleratorType::Mi355],
        }
    }
}

impl FromStr for MlperfVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim_start_matches(['v', 'V']) {
            "2.0" | "2" => Ok(MlperfVersion::V2_0),
            "3.0" | "3" => Ok(MlperfVersion::V3_0),
            _ => Err(format!("--mlperf-version {s}: 2.0 or 3.0")),
        }
    }
}

impl fmt::Display for MlperfVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The accelerator whose compute time per batch a training preset uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcceleratorType {
    H100,
    A100,
    B200,
    Mi355,
}

impl AcceleratorType {
    pub fn name(self) -> &'static str {
        match self {
            AcceleratorType::H100 => "h100",
            AcceleratorType::A100 => "a100",
            AcceleratorType::B200 => "b200",
            AcceleratorType::Mi355 => "mi355",
        }
    }

    /// Its memory, as MLPerf counts it against a checkpoint (Rules 4.3.4).
    pub fn memory_bytes(self) -> u64 {
        match self {
            AcceleratorType::H100 | AcceleratorType::A100 => 80_000_000_000,
            AcceleratorType::B200 => 180_000_000_000,
            AcceleratorType::Mi355 => 288_000_000_000,
        }
    }
}

impl FromStr for AcceleratorType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "h100" => Ok(AcceleratorType::H100),
            "a100" => Ok(AcceleratorType::A100),
            "b200" => Ok(AcceleratorType::B200),
            "mi355" | "mi355x" => Ok(AcceleratorType::Mi355),
            _ => Err(format!(
                "--accelerator-type {s}: b200, mi355, h100 or a100 (the types MLPerf Storage gives compute times for)"
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
    /// JPEG images: a file is one sample, read whole.
    Jpeg,
}

impl SampleFormat {
    pub fn extension(self) -> &'static str {
        match self {
            SampleFormat::Npz => "npz",
            SampleFormat::Tfrecord => "tfrecord",
            SampleFormat::Jpeg => "jpeg",
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
    Retinanet,
    Resnet50,
    Cosmoflow,
}

/// A workload's preset for one release and accelerator: the dataset's
/// shape, the compute time per batch, and the configuration file they
/// come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub shape: TrainingShape,
    pub compute_s: f64,
    /// `configs/dlio/workload/NAME.yaml` of the release.
    pub config: &'static str,
    /// A type the release keeps for comparison only (v3.0's h100 and
    /// a100): not a result it takes.
    pub whatif: bool,
}

impl TrainingModel {
    pub const ALL: [TrainingModel; 4] = [
        TrainingModel::Unet3d,
        TrainingModel::Retinanet,
        TrainingModel::Resnet50,
        TrainingModel::Cosmoflow,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TrainingModel::Unet3d => "unet3d",
            TrainingModel::Retinanet => "retinanet",
            TrainingModel::Resnet50 => "resnet50",
            TrainingModel::Cosmoflow => "cosmoflow",
        }
    }

    /// The preset of `version` for `accelerator`, or why there is none.
    pub fn preset(
        self,
        version: MlperfVersion,
        accelerator: AcceleratorType,
    ) -> Result<Preset, String> {
        use AcceleratorType::*;
        use MlperfVersion::*;
        use TrainingModel::*;
        let whatif = !version.closed_accelerators().contains(&accelerator);
        let v2 = |config, compute_s| {
            Ok(Preset {
                shape: self.shape(),
                compute_s,
                config,
                whatif,
            })
        };
        let retinanet = |config, batch_size, compute_s| {
            // retinanet_b200.yaml and _mi355.yaml; the h100 and a100
            // files keep an older, smaller dataset of their own.
            let base = Retinanet.shape();
            let shape = match accelerator {
                B200 | Mi355 => TrainingShape { batch_size, ..base },
                H100 | A100 => TrainingShape {
                    files: 1_743_042,
                    sample_bytes: 153_600,
                    sample_bytes_stdev: 51_200,
                    batch_size,
                    epochs: 5,
                    ..base
                },
            };
            Ok(Preset {
                shape,
                compute_s,
                config,
                whatif,
            })
        };
        match (version, self, accelerator) {
            (V2_0, Retinanet, _) => Err(
                "retinanet is MLPerf Storage v3.0's workload: leave --mlperf-version at 3.0".into(),
            ),
            (V2_0, _, B200 | Mi355) => Err(format!(
                "--accelerator-type {accelerator} is MLPerf Storage v3.0's: v2.0 emulates h100 and a100"
            )),
            (V2_0, Unet3d, H100) => v2("unet3d_h100.yaml", 0.323),
            (V2_0, Unet3d, A100) => v2("unet3d_a100.yaml", 0.636),
            (V2_0, Resnet50, H100) => v2("resnet50_h100.yaml", 0.224),
            (V2_0, Resnet50, A100) => v2("resnet50_a100.yaml", 0.435),
            (V2_0, Cosmoflow, H100) => v2("cosmoflow_h100.yaml", 0.00350),
            (V2_0, Cosmoflow, A100) => v2("cosmoflow_a100.yaml", 0.00551),
            (V3_0, Resnet50 | Cosmoflow, _) => Err(format!(
                "{} is MLPerf Storage v2.0's workload (v3.0 trains unet3d and retinanet): add --mlperf-version 2.0",
                self.name()
            )),
            (V3_0, Unet3d, B200) => Ok(Preset {
                shape: TrainingShape {
                    files: 7200,
                    ..self.shape()
                },
                compute_s: 0.162,
                config: "unet3d_b200.yaml",
                whatif: false,
            }),
            (V3_0, Unet3d, Mi355) => Err(
                "MLPerf Storage v3.0 gives unet3d no mi355 compute time (its configs: unet3d_b200.yaml, and unet3d_h100/_a100.yaml as whatif)".into(),
            ),
            (V3_0, Unet3d, H100) => v2("unet3d_h100.yaml", 0.323),
            (V3_0, Unet3d, A100) => v2("unet3d_a100.yaml", 0.636),
            (V3_0, Retinanet, B200) => retinanet("retinanet_b200.yaml", 24, 0.04755),
            (V3_0, Retinanet, Mi355) => retinanet("retinanet_mi355.yaml", 32, 0.0634),
            (V3_0, Retinanet, H100) => retinanet("retinanet_h100.yaml", 16, 0.180),
            (V3_0, Retinanet, A100) => retinanet("retinanet_a100.yaml", 16, 0.210),
        }
    }

    /// The workload as v2.0's `configs/dlio/workload/MODEL_h100.yaml`
    /// gives it (the a100 files differ in compute time alone); retinanet,
    /// which v2.0 has not, as `retinanet_b200.yaml`.
    pub(crate) fn shape(self) -> TrainingShape {
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
            TrainingModel::Retinanet => TrainingShape {
                format: SampleFormat::Jpeg,
                files: 1_170_301,
                samples_per_file: 1,
                sample_bytes: 322_957,
                sample_bytes_stdev: 0,
                batch_size: 24,
                read_threads: 8,
                prefetch: 2,
                shuffle: Shuffle::Sample,
                epochs: 8,
                au_threshold: 0.85,
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

fn v2_0() -> MlperfVersion {
    MlperfVersion::V2_0
}

fn h100() -> AcceleratorType {
    AcceleratorType::H100
}

/// A training run, as asked and sized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingSpec {
    pub dir: String,
    pub model: TrainingModel,
    /// The release whose preset this is (a result without it is v2.0's).
    #[serde(default = "v2_0")]
    pub mlperf_version: MlperfVersion,
    pub accelerator: AcceleratorType,
    /// The accelerator is one the release keeps for comparison only.
    #[serde(default)]
    pub whatif: bool,
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
    /// The release whose rules the run is checked by (a result without
    /// it is v2.0's).
    #[serde(default = "v2_0")]
    pub mlperf_version: MlperfVersion,
    /// The accelerator the ranks emulate: its memory is what must hold
    /// the checkpoint (Rules 4.3.4).
    #[serde(default = "h100")]
    pub accelerator: AcceleratorType,
    /// Under --mpi, the ranks of every host together; absent, `ranks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_in_all: Option<u32>,
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

    /// Each v3.0 preset holds the figures of its file in mlcommons/storage
    /// `configs/dlio/workload/` (v3.0).
    #[test]
    fn v3_presets_are_their_config_files() {
        use AcceleratorType::*;
        use MlperfVersion::*;
        // (model, accelerator, config, files, sample bytes, stdev, batch,
        // read threads, epochs, compute, AU, whatif)
        let golden = [
            (
                TrainingModel::Unet3d,
                B200,
                "unet3d_b200.yaml",
                7200,
                146_600_628,
                68_341_808,
                7,
                4,
                5,
                0.162,
                0.90,
                false,
            ),
            (
                TrainingModel::Unet3d,
                H100,
                "unet3d_h100.yaml",
                168,
                146_600_628,
                68_341_808,
                7,
                4,
                5,
                0.323,
                0.90,
                true,
            ),
            (
                TrainingModel::Retinanet,
                B200,
                "retinanet_b200.yaml",
                1_170_301,
                322_957,
                0,
                24,
                8,
                8,
                0.04755,
                0.85,
                false,
            ),
            (
                TrainingModel::Retinanet,
                Mi355,
                "retinanet_mi355.yaml",
                1_170_301,
                322_957,
                0,
                32,
                8,
                8,
                0.0634,
                0.85,
                false,
            ),
            (
                TrainingModel::Retinanet,
                H100,
                "retinanet_h100.yaml",
                1_743_042,
                153_600,
                51_200,
                16,
                8,
                5,
                0.180,
                0.85,
                true,
            ),
            (
                TrainingModel::Retinanet,
                A100,
                "retinanet_a100.yaml",
                1_743_042,
                153_600,
                51_200,
                16,
                8,
                5,
                0.210,
                0.85,
                true,
            ),
        ];
        for (
            model,
            acc,
            config,
            files,
            bytes,
            stdev,
            batch,
            threads,
            epochs,
            compute,
            au,
            whatif,
        ) in golden
        {
            let p = model.preset(V3_0, acc).unwrap();
            let s = &p.shape;
            assert_eq!(p.config, config);
            assert_eq!(
                (
                    s.files,
                    s.sample_bytes,
                    s.sample_bytes_stdev,
                    s.batch_size,
                    s.read_threads,
                    s.epochs
                ),
                (files, bytes, stdev, batch, threads, epochs),
                "{config}"
            );
            assert_eq!(
                (p.compute_s, s.au_threshold, p.whatif),
                (compute, au, whatif),
                "{config}"
            );
            assert_eq!(s.samples_per_file, 1, "{config}");
            assert_eq!(s.shuffle, Shuffle::Sample, "{config}");
        }
        assert!(TrainingModel::Unet3d.preset(V3_0, Mi355).is_err());
        assert!(TrainingModel::Resnet50.preset(V3_0, B200).is_err());
        assert!(TrainingModel::Retinanet.preset(V2_0, H100).is_err());
        assert!(TrainingModel::Unet3d.preset(V2_0, B200).is_err());
        assert_eq!(
            TrainingModel::Unet3d.preset(V2_0, A100).unwrap().compute_s,
            0.636
        );
        assert_eq!(MlperfVersion::NEWEST.default_accelerator(), B200);
        assert_eq!("3.0".parse::<MlperfVersion>(), Ok(V3_0));
        assert_eq!("v2.0".parse::<MlperfVersion>(), Ok(V2_0));
    }

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
            mlperf_version: MlperfVersion::V3_0,
            accelerator: AcceleratorType::B200,
            ranks_in_all: None,
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
