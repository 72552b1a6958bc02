//! What `fathom meta` does: bonnie++'s file-creation test (-n), sized, and
//! with `--block`, its block I/O and seek tests (-s) first.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaSpec {
    pub dir: String,
    /// Files in units of 1024, as bonnie++ -n.
    pub files_k: u32,
    /// Files per subdirectory; 0 puts them all in one directory.
    pub files_per_dir: u32,
    /// Bytes written into each file when it is created.
    pub file_size: u64,
    pub seed: u64,
    /// Bytes of the file the block tests write, rewrite, read and seek in;
    /// 0 runs the file-creation tests only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub block_size: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
