//! Removing what fathom made: only relative to a directory fathom made or
//! proved it made (the device and inode it recorded, owned by the user
//! running fathom), walking down with `O_NOFOLLOW` and staying on that
//! directory's file system, so that a link or a mount put in the tree's
//! place leads nowhere. A name fathom did not make is never removed: the
//! callers name only what their layout made.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Which directory: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DirId {
    pub dev: u64,
    pub ino: u64,
}

/// A directory fathom made, held open: what is removed is removed in it.
#[derive(Debug)]
pub struct MadeDir {
    fd: OwnedFd,
    id: DirId,
    path: PathBuf,
}

impl MadeDir {
    /// Makes the directory `path` (its parent must exist) and holds it.
    pub fn make(path: &Path) -> io::Result<MadeDir> {
        std::fs::create_dir(path)?;
        Self::open(path)
    }

    /// Holds the directory at `path`, which must be the one `id` names
    /// (so one put in its place since is refused) and belong to the user
    /// running fathom (so a directory planted by another user in a shared
    /// directory is refused, even to root).
    pub fn reopen(path: &Path, id: DirId) -> Result<MadeDir, String> {
        let dir = Self::open(path).map_err(|e| e.to_string())?;
        if dir.id != id {
            return Err(
                "is not the directory fathom made there (its marker was copied or the directory replaced)"
                    .into(),
            );
        }
        Ok(dir)
    }

    fn open(path: &Path) -> io::Result<MadeDir> {
        let fd = open_at(libc::AT_FDCWD, path)?;
        let meta = File::from(fd.try_clone()?).metadata()?;
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(io::Error::other(format!(
                "belongs to user {}, not to the user running fathom ({me})",
                meta.uid()
            )));
        }
        Ok(MadeDir {
            fd,
            id: DirId {
                dev: meta.dev(),
                ino: meta.ino(),
            },
            path: path.to_path_buf(),
        })
    }

    pub fn id(&self) -> DirId {
        self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the directory at its path is still this one.
    pub fn still_there(&self) -> bool {
        std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| m.is_dir() && m.dev() == self.id.dev && m.ino() == self.id.ino)
    }

    /// A second handle on the same directory.
    pub fn try_clone(&self) -> io::Result<MadeDir> {
        Ok(MadeDir {
            fd: self.fd.try_clone()?,
            id: self.id,
            path: self.path.clone(),
        })
    }

    /// Writes a file of fathom's own (a marker) below this directory,
    /// never through a link: made, or replaced whole.
    pub fn write_file(&self, relative: &Path, contents: &[u8]) -> io::Result<()> {
        use std::io::Write;
        let (dir, name) = self.parent_of(relative)?;
        let from = dir.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
        let c = cstring(name.as_bytes())?;
        // SAFETY: a valid descriptor and C string; the descriptor returned
        // is owned here.
        let fd = unsafe {
            libc::openat(
                from,
                c.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o644 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened and owned by nothing else.
        let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        file.write_all(contents)
    }

    /// Removes the file `relative` names below this directory.
    pub fn remove_file(&self, relative: &Path) -> io::Result<()> {
        self.unlink(relative, 0)
    }

    /// Removes the empty directory `relative` names below this directory.
    pub fn remove_dir(&self, relative: &Path) -> io::Result<()> {
        self.unlink(relative, libc::AT_REMOVEDIR)
    }

    /// Removes this directory itself, once empty, if its path still names
    /// it.
    pub fn remove(self) -> io::Result<()> {
        let parent = crate::util::directory_of(&self.path);
        let name = self
            .path
            .file_name()
            .ok_or_else(|| io::Error::other("a directory with no name"))?;
        // The parent is the user's path and may be a link (a per-rank
        // directory linked to a mount); what counts is that the entry in it
        // is this directory, looked at without following.
        let parent = open_dir(libc::AT_FDCWD, parent, true)?;
        let entry = stat_at(parent.as_raw_fd(), &cstring(name.as_bytes())?)?;
        if (entry.st_dev, entry.st_ino) != (self.id.dev, self.id.ino) {
            return Err(io::Error::other("the directory was replaced"));
        }
        unlink_at(
            parent.as_raw_fd(),
            &cstring(name.as_bytes())?,
            libc::AT_REMOVEDIR,
        )
    }

    /// The directory `relative` names below this one (this one itself when
    /// it is empty), walked down to without following a link or leaving
    /// this file system, held for a workload's timed operations
    /// (`workload::WorkDir::below`).
    pub(super) fn open_below(&self, relative: &Path) -> io::Result<OwnedFd> {
        if relative.as_os_str().is_empty() {
            return self.fd.try_clone();
        }
        let (dir, name) = self.parent_of(relative)?;
        let from = dir.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
        let fd = open_at(from, Path::new(name))?;
        if File::from(fd.try_clone()?).metadata()?.dev() != self.id.dev {
            return Err(io::Error::other("leads onto another file system"));
        }
        Ok(fd)
    }

    fn unlink(&self, relative: &Path, flags: libc::c_int) -> io::Result<()> {
        let (dir, name) = self.parent_of(relative)?;
        let from = dir.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
        unlink_at(from, &cstring(name.as_bytes())?, flags)
    }

    /// The directory `relative`'s last name is in (None: this one), walked
    /// down to without following links or leaving this file system.
    fn parent_of<'r>(
        &self,
        relative: &'r Path,
    ) -> io::Result<(Option<OwnedFd>, &'r std::ffi::OsStr)> {
        let (dirs, name) = split(relative)?;
        let mut at: Option<OwnedFd> = None;
        for d in dirs {
            let from = at.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
            let next = open_at(from, Path::new(d))?;
            let meta = File::from(next.try_clone()?).metadata()?;
            if meta.dev() != self.id.dev {
                return Err(io::Error::other("leads onto another file system"));
            }
            at = Some(next);
        }
        Ok((at, name))
    }
}

/// The directory names and the last name of a relative path of plain
/// names (no `..`, no root, nothing empty).
fn split(relative: &Path) -> io::Result<(Vec<&std::ffi::OsStr>, &std::ffi::OsStr)> {
    let mut names = Vec::new();
    for c in relative.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            _ => return Err(io::Error::other("not a plain relative path")),
        }
    }
    let last = names
        .pop()
        .ok_or_else(|| io::Error::other("an empty path"))?;
    Ok((names, last))
}

pub(super) fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::other("a name with a NUL byte"))
}

/// Opens the directory `path` relative to `dirfd`, never through a link.
fn open_at(dirfd: libc::c_int, path: &Path) -> io::Result<OwnedFd> {
    open_dir(dirfd, path, false)
}

/// Opens the directory `path` relative to `dirfd`; through a link only if
/// `follow`.
fn open_dir(dirfd: libc::c_int, path: &Path, follow: bool) -> io::Result<OwnedFd> {
    let c = cstring(path.as_os_str().as_bytes())?;
    let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
    // SAFETY: a valid C string; the descriptor returned is owned here.
    let fd = unsafe {
        libc::openat(
            dirfd,
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | nofollow | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened and owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(super) fn stat_at(dirfd: libc::c_int, name: &CString) -> io::Result<libc::stat> {
    // SAFETY: zeroed is a valid stat; fstatat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, C string and stat buffer.
    let r = unsafe { libc::fstatat(dirfd, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

pub(super) fn unlink_at(dirfd: libc::c_int, name: &CString, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: a valid descriptor and C string.
    if unsafe { libc::unlinkat(dirfd, name.as_ptr(), flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removal_stays_below_the_made_directory_and_never_follows_a_link() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("tree");
        let made = MadeDir::make(&root).unwrap();
        std::fs::create_dir(root.join("d0")).unwrap();
        std::fs::write(root.join("d0/f0"), "").unwrap();
        made.remove_file(Path::new("d0/f0")).unwrap();
        assert!(!root.join("d0/f0").exists());
        // A leaf swapped for a link to the user's own files.
        let theirs = base.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("f1"), "keep").unwrap();
        std::fs::remove_dir(root.join("d0")).unwrap();
        std::os::unix::fs::symlink(&theirs, root.join("d0")).unwrap();
        assert!(made.remove_file(Path::new("d0/f1")).is_err());
        assert!(theirs.join("f1").exists());
        assert!(made.remove_file(Path::new("../theirs/f1")).is_err());
        std::fs::remove_file(root.join("d0")).unwrap();
        // A directory put in the tree's place is not removed.
        let id = made.id();
        let moved = base.path().join("moved");
        std::fs::rename(&root, &moved).unwrap();
        std::fs::create_dir(&root).unwrap();
        assert!(!made.still_there());
        assert!(
            MadeDir::reopen(&root, id)
                .unwrap_err()
                .contains("not the directory")
        );
        assert!(made.remove().is_err());
        assert!(root.exists());
        let again = MadeDir::reopen(&moved, id).unwrap();
        again.remove().unwrap();
        assert!(!moved.exists());
        // A directory made below a link to another directory (a per-rank
        // directory linked to a mount) is removed through it.
        let real = base.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let linked = base.path().join("linked");
        std::os::unix::fs::symlink(&real, &linked).unwrap();
        let made = MadeDir::make(&linked.join("tree")).unwrap();
        made.remove().unwrap();
        assert!(!real.join("tree").exists());
    }
}
