//! Targets: the files and devices fathom runs I/O on, written on purpose.
//! What may be written is decided by the checks before (`gate::device`,
//! the target plan); here every target is opened one way: never through a
//! FIFO or a socket (the open does not block, so a FIFO named as a target
//! is refused at once instead of waited on), and claimed, so that no
//! result, log or history is ever written over it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// How a target is opened.
#[derive(Debug, Clone, Copy, Default)]
pub struct Access {
    pub write: bool,
    /// Made new (`O_EXCL`): a file of that name that appeared since the
    /// checks is someone else's, and the open fails.
    pub create_new: bool,
    /// Made if missing (`O_CREAT`).
    pub create: bool,
    /// Flags besides the access mode (`O_DIRECT`, `O_DSYNC`).
    pub flags: libc::c_int,
}

/// Opens the target at `path` for reading (and writing, if `access.write`).
pub fn open(path: &Path, access: Access) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options
        .read(!access.create_new || !access.write)
        .write(access.write)
        .create_new(access.create_new)
        .create(access.create)
        .custom_flags(access.flags | libc::O_NONBLOCK | libc::O_CLOEXEC);
    if access.create_new || access.create {
        options.read(true);
    }
    let file = options.open(path)?;
    let t = file.metadata()?.file_type();
    if t.is_fifo() || t.is_socket() {
        return Err(io::Error::other(format!(
            "is {}, not a file or a device",
            super::kind_of(t)
        )));
    }
    super::read::blocking(&file);
    super::claims::claim_open(&file, path, "a target");
    Ok(file)
}

/// An unnamed file in `dir` (`O_TMPFILE`), gone when closed: for probing
/// what the file system under a target can do.
pub fn unnamed_in(dir: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
}

/// `/dev/null`, the target of a run that needs none.
pub fn dev_null(write: bool) -> io::Result<File> {
    OpenOptions::new().read(true).write(write).open("/dev/null")
}

/// Removes `path` if it still names the file of device `dev` and inode
/// `ino` (the one fathom created); true when it did.
pub fn remove_if_still(path: &Path, dev: u64, ino: u64) -> bool {
    let names_it = std::fs::symlink_metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == (dev, ino));
    let removed = names_it && std::fs::remove_file(path).is_ok();
    if removed {
        super::claims::release(dev, ino);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_no_target_and_a_new_file_is_never_an_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open(&fifo, Access::default()).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let file = dir.path().join("t.dat");
        std::fs::write(&file, "theirs").unwrap();
        let new = Access {
            write: true,
            create_new: true,
            ..Access::default()
        };
        assert_eq!(
            open(&file, new).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        let made = dir.path().join("made.dat");
        let f = open(&made, new).unwrap();
        let m = f.metadata().unwrap();
        assert!(!remove_if_still(&made, m.dev(), m.ino() + 1));
        assert!(remove_if_still(&made, m.dev(), m.ino()));
        assert!(!made.exists());
    }
}
