//! The timed operations of the metadata workloads (`tree`, `meta`), one
//! system call each. A tree's act on a name in a [`WorkDir`]: a directory
//! of the tree opened below the directory fathom made
//! ([`WorkDir::below`]) without following a link or
//! leaving its file system, so a directory swapped for a link to a user's
//! files, even mid-phase, leads nowhere; nothing is renamed over an
//! existing name. The untimed clean-up after them goes through the made
//! directory.

use super::remove::{MadeDir, cstring, stat_at, unlink_at};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::Hash;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

/// A directory of a workload's, held open: its operations name a file in it.
#[derive(Debug)]
pub struct WorkDir {
    fd: OwnedFd,
}

impl WorkDir {
    /// The directory `relative` names below `made` (`made` itself when it
    /// is empty), walked down to without following a link or leaving its
    /// file system.
    pub fn below(made: &MadeDir, relative: &Path) -> io::Result<WorkDir> {
        Ok(WorkDir {
            fd: made.open_below(relative)?,
        })
    }

    fn open(&self, name: &str, flags: libc::c_int) -> io::Result<File> {
        let c = cstring(name.as_bytes())?;
        // SAFETY: a valid descriptor and C string; the descriptor returned
        // is owned here.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o644 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened and owned by nothing else.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Makes the new file `name` (never an existing one), open for writing
    /// and reading.
    pub fn new_file(&self, name: &str) -> io::Result<File> {
        self.open(name, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL)
    }

    /// Opens the file `name` to read a workload's bytes from it, with
    /// O_DIRECT when `direct`.
    pub fn read_file(&self, name: &str, direct: bool) -> io::Result<File> {
        let direct = if direct { libc::O_DIRECT } else { 0 };
        self.open(name, libc::O_RDONLY | direct)
    }

    /// Opens the file `name` for reading.
    pub fn open_file(&self, name: &str) -> io::Result<File> {
        self.open(name, libc::O_RDONLY | libc::O_NONBLOCK)
    }

    /// Looks `name` up, as `stat` does, not following a link.
    pub fn stat(&self, name: &str) -> io::Result<()> {
        stat_at(self.fd.as_raw_fd(), &cstring(name.as_bytes())?).map(|_| ())
    }

    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        unlink_at(self.fd.as_raw_fd(), &cstring(name.as_bytes())?, 0)
    }

    pub fn make_dir(&self, name: &str) -> io::Result<()> {
        let c = cstring(name.as_bytes())?;
        // SAFETY: a valid descriptor and C string.
        if unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o755) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn remove_dir(&self, name: &str) -> io::Result<()> {
        unlink_at(
            self.fd.as_raw_fd(),
            &cstring(name.as_bytes())?,
            libc::AT_REMOVEDIR,
        )
    }

    /// Renames `from` to `to` in this directory, never over a name there.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (a, b) = (cstring(from.as_bytes())?, cstring(to.as_bytes())?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: valid descriptors and C strings.
        if unsafe { libc::renameat2(fd, a.as_ptr(), fd, b.as_ptr(), libc::RENAME_NOREPLACE) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Makes what the directory holds durable.
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: a valid descriptor.
        if unsafe { libc::fsync(self.fd.as_raw_fd()) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// The directories a workload's threads act in, held open by each thread
/// (at most [`WorkDirs::BUDGET`] descriptors across threads), opened below
/// the directory fathom made when first needed, so the walk down is timed
/// with the operation that needed it, as a path lookup would be.
pub struct WorkDirs<'a, K> {
    made: &'a MadeDir,
    most: usize,
    threads: Vec<Mutex<HashMap<K, WorkDir>>>,
}

impl<'a, K: Hash + Eq + Copy> WorkDirs<'a, K> {
    /// Descriptors the threads hold at the most, together.
    pub const BUDGET: usize = 512;

    pub fn new(made: &'a MadeDir, threads: u32) -> Self {
        WorkDirs {
            made,
            most: (Self::BUDGET / threads.max(1) as usize).max(4),
            threads: (0..threads.max(1)).map(|_| Mutex::default()).collect(),
        }
    }

    /// `f` on thread `t`'s directory `key`, which `relative` names below
    /// the made directory.
    pub fn with<R>(
        &self,
        t: u32,
        key: K,
        relative: impl FnOnce() -> std::path::PathBuf,
        f: impl FnOnce(&WorkDir) -> io::Result<R>,
    ) -> io::Result<R> {
        let mut open = self.threads[t as usize].lock().expect("not poisoned");
        if !open.contains_key(&key) {
            if open.len() >= self.most {
                open.clear();
            }
            open.insert(key, WorkDir::below(self.made, &relative())?);
        }
        f(&open[&key])
    }
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
