//! What `fathom meta` does: bonnie++'s -n file-creation test, sized.

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
}
