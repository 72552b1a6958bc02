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

/// Opens a file of a training dataset or checkpoint for reading, never
/// through a link; `direct`: with O_DIRECT, past the page cache.
pub fn open_for_reading(path: &Path, direct: bool) -> io::Result<File> {
    let mut flags = libc::O_NOFOLLOW;
    if direct {
        flags |= libc::O_DIRECT;
    }
    OpenOptions::new().read(true).custom_flags(flags).open(path)
}

/// Asks the kernel to drop the clean cached pages of a file fathom made,
/// so that the next read of it reaches the storage (a hint: tmpfs keeps
/// them, as it must).
pub fn drop_cached_pages(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor; the call reads no memory of ours.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}
