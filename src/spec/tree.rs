//! What `fathom tree` does: a tree of directories `depth` levels deep,
//! `width` directories in each, `files` files in each leaf, made and
//! measured in phases (mdtest's and elbencho's metadata workloads).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One phase of a tree run, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TreePhase {
    /// Every directory, level by level.
    Mkdir,
    /// Every directory stat'ed, level by level (mdtest's directory stat).
    Dirstat,
    /// Every file: created, its bytes written (and made durable with
    /// `--fsync file`), closed.
    Create,
    Stat,
    /// Every file opened, read to its end and closed.
    Read,
    /// Every file renamed within its directory.
    Rename,
    Delete,
    /// Every directory, deepest level first.
    Rmdir,
}

impl TreePhase {
    pub const ALL: [TreePhase; 8] = [
        TreePhase::Mkdir,
        TreePhase::Dirstat,
        TreePhase::Create,
        TreePhase::Stat,
        TreePhase::Read,
        TreePhase::Rename,
        TreePhase::Delete,
        TreePhase::Rmdir,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TreePhase::Mkdir => "mkdir",
            TreePhase::Dirstat => "dirstat",
            TreePhase::Create => "create",
            TreePhase::Stat => "stat",
            TreePhase::Read => "read",
            TreePhase::Rename => "rename",
            TreePhase::Delete => "delete",
            TreePhase::Rmdir => "rmdir",
        }
    }

    /// Whether the phase works on files (the directories' phases always
    /// complete: a tree missing directories cannot hold its files).
    pub fn on_files(self) -> bool {
        !matches!(
            self,
            TreePhase::Mkdir | TreePhase::Dirstat | TreePhase::Rmdir
        )
    }
}

impl fmt::Display for TreePhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TreePhase {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        TreePhase::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = TreePhase::ALL.iter().map(|p| p.name()).collect();
                format!("'{s}' is not a phase ({})", names.join(", "))
            })
    }
}

/// What is made durable while creating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeSync {
    /// Nothing: the file system writes back when it will.
    #[default]
    None,
    /// Each file, after its bytes and before it is closed (timed with it).
    File,
    /// Each leaf directory, once its thread has created its files there.
    Dir,
}

impl FromStr for TreeSync {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(TreeSync::None),
            "file" => Ok(TreeSync::File),
            "dir" => Ok(TreeSync::Dir),
            _ => Err(format!("'{s}' is not none, file or dir")),
        }
    }
}

impl fmt::Display for TreeSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TreeSync::None => "none",
            TreeSync::File => "file",
            TreeSync::Dir => "dir",
        })
    }
}

/// The tree's shape: what a later run on a kept tree must agree with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeShape {
    /// Levels of directories below the tree's own; 0 puts every file in
    /// the tree's own directory.
    pub depth: u32,
    /// Directories in each directory above the leaves.
    pub width: u32,
    /// Files in each leaf directory.
    pub files: u64,
}

impl TreeShape {
    /// Directories on level `level` (1 = the tree's own directory's
    /// children).
    pub fn dirs_at(&self, level: u32) -> u64 {
        (self.width as u64).pow(level)
    }

    /// Directories below the tree's own.
    pub fn dirs(&self) -> u64 {
        (1..=self.depth).map(|l| self.dirs_at(l)).sum()
    }

    pub fn leaves(&self) -> u64 {
        self.dirs_at(self.depth)
    }

    pub fn total_files(&self) -> u64 {
        self.leaves() * self.files
    }
}

/// Who works on a tree: `workers` threads in all (every rank's, when
/// the ranks share it), of which this process runs `local`, numbered from
/// `first`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeWorkers {
    pub first: u32,
    pub local: u32,
    pub workers: u32,
    /// This process's rank among the ranks sharing the tree (0 alone).
    pub rank: u32,
    /// Ranks sharing the tree (1 when each has its own).
    pub ranks: u32,
}

impl TreeWorkers {
    /// Whether this process makes, marks and finally removes the tree's
    /// own directory (the only process, or rank 0 of a shared tree).
    pub fn leads(&self) -> bool {
        self.rank == 0
    }

    pub fn shared(&self) -> bool {
        self.ranks > 1
    }

    pub fn global(&self, t: u32) -> u32 {
        self.first + t
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeSpec {
    pub dir: String,
    #[serde(flatten)]
    pub shape: TreeShape,
    /// Bytes written into each file: from `min` to `max` (equal: all the
    /// same), each file's drawn from the seed.
    pub file_size_min: u64,
    pub file_size_max: u64,
    pub fsync: TreeSync,
    pub phases: Vec<TreePhase>,
    pub threads: u32,
    /// Each file phase ends for every thread this long after it began
    /// (stonewalling); None: each thread does all its share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_time_s: Option<f64>,
    /// Items visited in a shuffled order instead of the order they were
    /// made in.
    pub random: bool,
    /// Keep the tree when the run ends, for a later run's phases.
    pub leave: bool,
    /// Sync and drop the kernel's page, dentry and inode caches before
    /// each phase, so that stat and read reach the file system.
    #[serde(default)]
    pub drop_caches: bool,
    /// Under `--mpi`: this rank, whose own tree is `DIR/fathom-tree.rankN`
    /// unless the ranks share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// Under `--mpi`: how many ranks run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// Under `--mpi --shared-dir`: every rank works in one tree,
    /// `DIR/fathom-tree`, each thread of each rank on a share of its own,
    /// the ranks meeting between the levels of the directory phases.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_dir: bool,
    pub seed: u64,
    /// A run of fio's file-operation jobs: how fio's reports name and
    /// count what it measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<FioJobs>,
}

impl TreeSpec {
    /// The threads working on this process's tree, and which are its own.
    pub fn workers(&self) -> TreeWorkers {
        let (rank, ranks) = match (self.shared_dir, self.rank, self.ranks) {
            (true, Some(rank), Some(ranks)) => (rank, ranks.max(1)),
            _ => (0, 1),
        };
        TreeWorkers {
            first: rank * self.threads,
            local: self.threads,
            workers: ranks * self.threads,
            rank,
            ranks,
        }
    }
}

/// fio's jobs a tree run stands for (`ioengine=filecreate` and the like):
/// one thread each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FioJobs {
    /// The jobs' names, one per thread, as fio's reports name them.
    pub jobs: Vec<String>,
    /// The phase the engine times; the ones before it make what it needs,
    /// as fio lays out files before a job starts.
    pub timed: TreePhase,
    /// fio counts the operations under the job's direction: writes when
    /// its `rw` writes, reads otherwise.
    pub writes: bool,
    /// fio's engines do "I/O" of no data over each file they handle, which
    /// its JSON counts: `bytes_each` bytes (the file's size) in I/Os of
    /// `bs` per operation.
    #[serde(default)]
    pub bytes_each: u64,
    #[serde(default = "default_bs")]
    pub bs: u64,
}

fn default_bs() -> u64 {
    4096
}
