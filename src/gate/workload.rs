//! The timed operations of the metadata workloads (`tree`, `meta`): made,
//! read and removed by path, one system call each, because a path lookup
//! is part of what mdtest and bonnie++ measure and what these workloads
//! reproduce. They act only on names a layout made below a directory
//! fathom made ([`super::remove::MadeDir`]) and checked by inode; the
//! untimed clean-up after them goes through that directory instead.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Makes a new file (never an existing one) holding `payload`.
pub fn create_file(path: &Path, payload: &[u8]) -> io::Result<()> {
    let mut f = new_file(path)?;
    if !payload.is_empty() {
        f.write_all(payload)?;
    }
    Ok(())
}

/// Makes a new file (never an existing one), open for writing and reading.
pub fn new_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Opens a file of the workload's for reading, never through a link.
pub fn open_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

pub fn remove_file(path: &Path) -> io::Result<()> {
    fs::remove_file(path)
}

pub fn make_dir(path: &Path) -> io::Result<()> {
    fs::create_dir(path)
}

pub fn remove_dir(path: &Path) -> io::Result<()> {
    fs::remove_dir(path)
}

pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

/// Writes the kernel's knob at `path` (`/proc/sys/vm/drop_caches`), or
/// says whether it could be opened for writing when `contents` is empty.
pub fn write_kernel_knob(path: &str, contents: &[u8]) -> io::Result<()> {
    if !path.starts_with("/proc/sys/") {
        return Err(io::Error::other("not a kernel knob"));
    }
    let mut f = OpenOptions::new().write(true).open(path)?;
    if !contents.is_empty() {
        f.write_all(contents)?;
    }
    Ok(())
}
