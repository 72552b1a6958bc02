//! The gate: the one way fathom writes, reads or removes a file that a user
//! named or that fathom made where a user pointed it. Each new path that
//! opened files its own way re-opened a defect an older path had closed
//! (a device truncated, a FIFO that hangs, a file deleted through a link),
//! so none may: `tests/gate.rs` fails when code outside this folder calls
//! the standard library's opening, writing, renaming or removing functions.
//!
//! - [`read`]: regular files only, opened without blocking, bounded per
//!   kind of input, deaf to nothing (a stop flag is polled while reading).
//! - [`write`]: what fathom writes (results, `--live`, logs, the history,
//!   recordings, ack logs, fio's `--output`): never a device, never a FIFO
//!   without a reader, never the run's own inputs or targets, never a file
//!   of another kind unless told; written beside and renamed over.
//! - [`remove`]: removal relative to directories fathom made and can
//!   prove it made (device, inode, owner), never through a link.
//! - [`claims`]: what this process reads and runs on, by device and
//!   inode, so that no write lands on it whatever path names it.
//! - [`target`]: targets, which fathom writes on purpose: opened through
//!   the same refusals of links to nothing and of FIFOs, after [`device`]
//!   has said what a device holds and whether the user allowed writing it.
//! - [`helper`]: the programs fathom asks (blkid, smartctl), from the
//!   system's directories, handed absolute paths, waited for a bounded time.
//!
//! docs/SAFETY.md lists each rule with the test that holds it.

// The gate is where the calls clippy.toml refuses elsewhere are made.
#![allow(clippy::disallowed_methods)]

pub mod bucket;
pub mod claims;
pub mod device;
pub mod helper;
pub mod marked;
pub mod mounts;
pub mod read;
pub mod remove;
pub mod target;
pub mod workload;
pub mod write;

use std::path::{Path, PathBuf};

/// Whether `path` is, or is under, a place fathom never creates files in:
/// the kernel's process and system trees, and the file system of device
/// nodes (devtmpfs, or whatever is mounted on /dev), where a file would be
/// memory reported as a disk and a typo's device node a new file. File
/// systems mounted below /dev (/dev/shm) are places for files.
pub fn in_kernel_tree(path: &Path) -> bool {
    let absolute = absolute(path);
    if ["/proc", "/sys"]
        .iter()
        .any(|top| absolute.starts_with(top))
    {
        return true;
    }
    if !absolute.starts_with("/dev") {
        return false;
    }
    // The nearest existing directory decides which mount it is.
    let existing = absolute
        .ancestors()
        .find(|a| a.is_dir())
        .unwrap_or(Path::new("/"));
    mounts::mount_of(existing)
        .is_none_or(|(fstype, mount_point)| fstype == "devtmpfs" || mount_point == "/dev")
}

/// Whether `a` and `b` name one file, or one file to be made: by device
/// and inode where both exist (a link, a hard link, `./` before a name),
/// by absolute name where not.
pub fn same_place(a: &Path, b: &Path) -> bool {
    match (crate::util::file_id(a), crate::util::file_id(b)) {
        (Some(x), Some(y)) => x == y,
        _ => absolute(a) == absolute(b),
    }
}

/// `path` made absolute against the working directory, with its existing
/// directories' links resolved (the file itself need not exist).
pub fn absolute(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let dir = crate::util::directory_of(path);
    let base = std::fs::canonicalize(dir).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|cwd| cwd.join(dir))
            .unwrap_or_else(|_| dir.to_path_buf())
    });
    match path.file_name() {
        Some(name) => base.join(name),
        None => base,
    }
}

/// The tests' handshake (`FATHOM_TEST_VERIFY_HANDSHAKE=DIR`): makes
/// `DIR/written`, then waits, at most a minute and while `stopped` says
/// no, for the test to make `DIR/go`, which it then removes. Only in the
/// tests' build (`--features test-hooks`).
#[cfg(feature = "test-hooks")]
pub fn handshake_for_tests(dir: &Path, stopped: &dyn Fn() -> bool) {
    if std::fs::write(dir.join("written"), b"").is_err() {
        return;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !dir.join("go").exists() && std::time::Instant::now() < deadline && !stopped() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = std::fs::remove_file(dir.join("go"));
}

/// What kind of file a file type is, in a message's words.
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_trees_are_found_through_links_and_relative_names() {
        assert!(in_kernel_tree(Path::new("/dev/loop0")));
        assert!(in_kernel_tree(Path::new("/proc/self/status")));
        assert!(in_kernel_tree(Path::new("/dev/new/dir/file")));
        if Path::new("/dev/shm").is_dir() {
            assert!(!in_kernel_tree(Path::new("/dev/shm/x")));
        }
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("d");
        std::os::unix::fs::symlink("/dev", &link).unwrap();
        assert!(in_kernel_tree(&link.join("x")));
        assert!(!in_kernel_tree(&dir.path().join("x")));
        assert!(!in_kernel_tree(Path::new("/development/x")));
    }
}
