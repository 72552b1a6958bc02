//! Files fathom reads and parses: job files and their includes, traces,
//! results, history imports, ack logs, profiles and markers. Only regular
//! files (links followed), opened without blocking so that a FIFO is
//! refused instead of waited on, within a bound for each kind of input,
//! and each one claimed, so that nothing this run writes lands on it.

use crate::util::error::UsageError;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// A kind of input: how messages name it, and how large it may be.
#[derive(Debug, Clone, Copy)]
pub struct Input {
    /// In a message's words: "a job file", "a result file".
    pub what: &'static str,
    /// The most bytes a file of this kind may hold (`u64::MAX`: streamed).
    pub max: u64,
    /// Whether reading it claims it, so that nothing this run writes may
    /// land on it (the result file `--resume` continues is read to be
    /// rewritten, and does not).
    pub claims: bool,
}

pub const JOB_FILE: Input = Input {
    what: "a job file",
    max: 1 << 20,
    claims: true,
};
pub const RESULT: Input = Input {
    what: "a result file",
    max: 1 << 30,
    claims: true,
};
pub const TRACE: Input = Input {
    what: "a trace",
    max: u64::MAX,
    claims: true,
};
pub const ACK_LOG: Input = Input {
    what: "an ack log",
    max: 1 << 30,
    claims: true,
};
pub const PROFILE: Input = Input {
    what: "a profile",
    max: 1 << 20,
    claims: true,
};
pub const RESUMED: Input = Input {
    what: "the result file to resume",
    max: 1 << 30,
    claims: false,
};
pub const AWS_FILE: Input = Input {
    what: "an AWS credentials or config file",
    max: 1 << 20,
    claims: true,
};
/// A pod's own result, read back to name the pod in it and rewritten.
pub const OWN_RESULT: Input = Input {
    what: "this pod's result",
    max: 1 << 30,
    claims: false,
};
pub const MARKER: Input = Input {
    what: "a marker",
    max: 1 << 20,
    claims: true,
};

/// Opens `path` for reading: a regular file, or refused with what it is.
/// The open itself does not block (a FIFO with no writer would wait
/// forever, deaf to Ctrl-C); the file is claimed as `input.what`.
pub fn open(path: &Path, input: Input) -> Result<File, UsageError> {
    let err = |m: String| UsageError(format!("{}: {m}", path.display()));
    let file = open_nonblocking(path, libc::O_RDONLY).map_err(|e| err(e.to_string()))?;
    let meta = file.metadata().map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err(format!(
            "is {}, not {} (give a regular file)",
            super::kind_of(meta.file_type()),
            input.what
        )));
    }
    if meta.len() > input.max {
        return Err(too_large(path, meta.len(), input));
    }
    blocking(&file);
    if input.claims {
        super::claims::claim_open(&file, path, input.what);
    }
    Ok(file)
}

/// Refuses anything but a regular file (links followed), naming what it is,
/// without opening it: for inputs another library opens (SQLite).
pub fn regular_file(path: &Path, input: Input) -> Result<std::fs::Metadata, UsageError> {
    let err = |m: String| UsageError(format!("{}: {m}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if meta.is_file() {
        return Ok(meta);
    }
    Err(err(format!(
        "is {}, not {} (give a regular file)",
        super::kind_of(meta.file_type()),
        input.what
    )))
}

/// Reads a regular file of this kind whole, within its bound (which holds
/// even if the file grows while it is read).
pub fn bytes(path: &Path, input: Input) -> Result<Vec<u8>, UsageError> {
    let err = |m: String| UsageError(format!("{}: {m}", path.display()));
    let file = open(path, input)?;
    let len = file.metadata().map_or(0, |m| m.len());
    let mut out = Vec::with_capacity(len.min(input.max) as usize);
    file.take(input.max.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| err(e.to_string()))?;
    if out.len() as u64 > input.max {
        return Err(too_large(path, out.len() as u64, input));
    }
    Ok(out)
}

/// Reads a regular file of this kind whole, as text.
pub fn text(path: &Path, input: Input) -> Result<String, UsageError> {
    String::from_utf8(bytes(path, input)?).map_err(|_| {
        UsageError(format!(
            "{}: not text, so not {}",
            path.display(),
            input.what
        ))
    })
}

/// The first `n` bytes of a regular file (fewer if it is shorter), or
/// None when it is not one: for recognising what a file is before
/// replacing it. Not claimed: this is a look, not an input.
pub fn head(path: &Path, n: usize) -> Option<Vec<u8>> {
    let file = open_nonblocking(path, libc::O_RDONLY).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    file.take(n as u64).read_to_end(&mut out).ok()?;
    Some(out)
}

/// The last `n` bytes of a regular file, as [`head`].
pub fn tail(path: &Path, n: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file = open_nonblocking(path, libc::O_RDONLY).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let from = meta.len().saturating_sub(n as u64);
    let mut out = vec![0u8; (meta.len() - from) as usize];
    file.read_exact_at(&mut out, from).ok()?;
    Some(out)
}

/// A file of the host's own (`/proc`, `/sys`, `/etc`) as text, or None:
/// facts about the host, never a file a user named.
pub fn host_text(path: impl AsRef<Path>) -> Option<String> {
    let path = path.as_ref();
    // The unit tests of the facts read a sysfs laid out in a temporary
    // directory.
    let host = ["/proc", "/sys", "/etc"]
        .iter()
        .any(|top| path.starts_with(top));
    if !host && !cfg!(test) {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The size of an existing file or block device (a FIFO or a character
/// device has none and is refused), without blocking in the open.
pub fn size_of(path: &Path) -> Result<u64, String> {
    use std::io::Seek;
    use std::os::unix::fs::FileTypeExt;
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = open_nonblocking(path, libc::O_RDONLY).map_err(fail)?;
    let t = file.metadata().map_err(fail)?.file_type();
    if !(t.is_file() || t.is_block_device()) {
        return Err(format!(
            "{}: is {}, not a file or a block device",
            path.display(),
            super::kind_of(t)
        ));
    }
    file.seek(std::io::SeekFrom::End(0)).map_err(fail)
}

/// `open(2)` with `O_NONBLOCK` and `O_CLOEXEC` added to `flags`.
pub(super) fn open_nonblocking(path: &Path, flags: libc::c_int) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options
        .read(flags & libc::O_ACCMODE != libc::O_WRONLY)
        .write(flags & libc::O_ACCMODE != libc::O_RDONLY)
        .custom_flags((flags & !libc::O_ACCMODE) | libc::O_NONBLOCK | libc::O_CLOEXEC);
    options.open(path)
}

/// A device under a target, opened read-only to ask it what it counted
/// (NVMe's admin commands): a block or character device in `/dev`, never
/// a file a user named or anything that could block the open.
pub fn device_to_query(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::FileTypeExt;
    if !path.starts_with("/dev") {
        return Err(std::io::Error::other(format!(
            "{}: not a device node",
            path.display()
        )));
    }
    let file = open_nonblocking(path, libc::O_RDONLY)?;
    let t = file.metadata()?.file_type();
    if !(t.is_block_device() || t.is_char_device()) {
        return Err(std::io::Error::other(format!(
            "{}: is {}, not a device",
            path.display(),
            super::kind_of(t)
        )));
    }
    Ok(file)
}

/// `/dev/null`, for reading nothing.
pub fn dev_null() -> std::io::Result<File> {
    File::open("/dev/null")
}

/// Clears `O_NONBLOCK` from an open file: reads and writes then wait as
/// usual.
pub(super) fn blocking(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor, and flags read from it.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
}

fn too_large(path: &Path, len: u64, input: Input) -> UsageError {
    UsageError(format!(
        "{}: {} is too large for {} (at most {})",
        path.display(),
        crate::util::units::format_bytes(len),
        input.what,
        crate::util::units::format_bytes(input.max)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Input = Input {
        what: "a result file",
        max: 2,
        claims: false,
    };

    #[test]
    fn devices_and_fifos_are_refused_at_once_and_files_read_within_the_bound() {
        let e = text(Path::new("/dev/zero"), RESULT).unwrap_err();
        assert!(e.0.contains("a character device"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(&p, "{}").unwrap();
        assert_eq!(text(&p, SMALL).unwrap(), "{}");
        let e = text(&p, Input { max: 1, ..SMALL }).unwrap_err();
        assert!(e.0.contains("too large"), "{e}");
        let e = text(dir.path(), SMALL).unwrap_err();
        assert!(e.0.contains("a directory"), "{e}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        let e = text(&fifo, JOB_FILE).unwrap_err();
        assert!(e.0.contains("a FIFO"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(size_of(&fifo).unwrap_err().contains("a FIFO"));
    }

    #[test]
    fn kernel_files_are_read_and_nothing_else_through_that_door() {
        assert!(host_text("/proc/self/status").is_some());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, "x").unwrap();
        assert_eq!(head(&p, 10).unwrap(), b"x");
        assert!(head(Path::new("/dev/zero"), 10).is_none());
    }
}
