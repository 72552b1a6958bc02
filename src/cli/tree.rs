//! `fathom tree`: flags into a tree spec, the library's checks and run,
//! and the document out.

use super::OutputArgs;
use super::driver::drive;
use clap::Args;
use fathom::commands::benchmark::TreeBench;
use fathom::spec::tree::{TreePhase, TreeShape, TreeSpec, TreeSync};
use fathom::util::error::UsageError;
use fathom::util::units::{parse_duration, parse_size};

#[derive(Args, Debug)]
pub struct TreeArgs {
    /// Directory to work in; fathom makes its tree in `fathom-tree` there
    /// and removes only what it made. Under --mpi, `{rank}` and `{host}` in
    /// it are each rank's own (a path of its own per rank or per host).
    pub dir: String,

    /// Levels of directories below the tree's own (0: every file in one
    /// directory).
    #[arg(long, default_value_t = 2)]
    pub depth: u32,

    /// Directories in each directory above the leaves.
    #[arg(long, default_value_t = 10)]
    pub width: u32,

    /// Files in each leaf directory.
    #[arg(long, default_value_t = 100)]
    pub files: u64,

    /// Bytes written into each file: a size (0 allowed) or a range LOW-HIGH,
    /// each file's drawn from the seed.
    #[arg(long = "file-size", value_name = "SIZE|LOW-HIGH", default_value = "0")]
    pub file_size: String,

    /// What is made durable while creating: none, each file (before it is
    /// closed, timed with it) or each leaf directory (once its files are
    /// made).
    #[arg(long, value_name = "none|file|dir", default_value = "none")]
    pub fsync: TreeSync,

    /// The phases to run, in this order whatever the order given: mkdir,
    /// dirstat, create, stat, read, rename, delete, rmdir. Later phases
    /// alone run on a tree kept with --leave.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "mkdir,dirstat,create,stat,read,rename,delete,rmdir"
    )]
    pub phases: Vec<TreePhase>,

    /// Threads, each on a share of the tree's items of its own.
    #[arg(long, default_value_t = 1)]
    pub threads: u32,

    /// End each file phase (not rename) for every thread this long after it
    /// began, as mdtest's stonewall: the result says what each thread did
    /// and how far the slowest fell behind; later phases work on the files
    /// made.
    #[arg(long = "phase-time", value_name = "DURATION")]
    pub phase_time: Option<String>,

    /// Visit items shuffled rather than in the order they were made.
    #[arg(long)]
    pub random: bool,

    /// Keep the tree when the run ends, for a later run's --phases.
    #[arg(long)]
    pub leave: bool,

    /// Sync and drop the kernel's page, dentry and inode caches before each
    /// phase (needs root), so that stat and read reach the file system
    /// instead of what create left cached.
    #[arg(long = "drop-caches")]
    pub drop_caches: bool,

    /// Seed of the shuffled orders and the file sizes.
    #[arg(long, default_value_t = fathom::spec::DEFAULT_SEED)]
    pub seed: u64,

    /// Replace a tree of fathom's already in DIR (and an existing --output
    /// file that is not a fathom result).
    #[arg(long)]
    pub overwrite: bool,

    /// With --mpi: every rank works in one tree (`DIR/fathom-tree`), each
    /// thread of each rank on a share of its own, the ranks meeting
    /// between the levels of the directory phases and at the end of each
    /// phase.
    #[arg(long = "shared-dir", overrides_with = "unique_dir")]
    pub shared_dir: bool,

    /// With --mpi: each rank works in a tree of its own
    /// (`DIR/fathom-tree.rankN`); the default.
    #[arg(long = "unique-dir", overrides_with = "shared_dir")]
    pub unique_dir: bool,

    #[command(flatten)]
    pub mpi: super::MpiArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// `SIZE` or `LOW-HIGH`.
fn file_sizes(text: &str) -> Result<(u64, u64), UsageError> {
    let err = |e: String| UsageError(format!("--file-size {text}: {e}"));
    match text.split_once('-') {
        Some((low, high)) => Ok((
            parse_size(low).map_err(err)?,
            parse_size(high).map_err(err)?,
        )),
        None => parse_size(text).map(|n| (n, n)).map_err(err),
    }
}

pub fn tree_command(args: &TreeArgs) -> anyhow::Result<i32> {
    super::no_fio_form(&args.output, "a tree run")?;
    let (file_size_min, file_size_max) = file_sizes(&args.file_size)?;
    let phase_time_s = args
        .phase_time
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| UsageError(format!("--phase-time: {e}")))?
        .map(|d| d.as_secs_f64());
    let spec = TreeSpec {
        dir: args.dir.clone(),
        shape: TreeShape {
            depth: args.depth,
            width: args.width,
            files: args.files,
        },
        file_size_min,
        file_size_max,
        fsync: args.fsync,
        phases: args.phases.clone(),
        threads: args.threads,
        phase_time_s,
        random: args.random,
        leave: args.leave,
        drop_caches: args.drop_caches,
        rank: None,
        ranks: None,
        shared_dir: args.shared_dir,
        seed: args.seed,
        fio: None,
    };
    let bench = TreeBench {
        overwrite: args.overwrite,
    };
    if args.mpi.mpi {
        return super::mpi_bench(&args.mpi, &args.output, args.overwrite, bench, Ok(spec));
    }
    if args.shared_dir {
        return Err(UsageError(
            "--shared-dir: the ranks of an --mpi run share a tree; add --mpi".into(),
        )
        .into());
    }
    drive(&bench, &[spec], &args.output, args.overwrite, false)
}

/// fio's file-operation jobs (`ioengine=filecreate` and the like) as
/// the tree run they translate to, for `fathom run JOB.fio`.
pub(super) fn run_fio_tree(
    spec: &TreeSpec,
    output: &OutputArgs,
    dry_run: bool,
) -> anyhow::Result<i32> {
    let bench = TreeBench { overwrite: false };
    drive(&bench, std::slice::from_ref(spec), output, false, dry_run)
}
