//! Files fathom reads as input (result files, traces, recordings): only
//! regular files, and never more than a bound. A path that names a device,
//! a FIFO or /dev/zero would otherwise be read until memory runs out, deaf
//! to Ctrl-C.

use crate::util::error::UsageError;
use std::io::Read;
use std::path::Path;

/// Refuses anything but a regular file (links followed), naming what it is.
pub fn regular_file(path: &Path, what: &str) -> Result<std::fs::Metadata, UsageError> {
    let err = |m: String| UsageError(format!("{}: {m}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if meta.is_file() {
        return Ok(meta);
    }
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let kind = if t.is_dir() {
        "a directory"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(err(format!("is {kind}, not {what} (give a regular file)")))
}

/// Reads a regular file of at most `max` bytes as text.
pub fn read_bounded(path: &Path, max: u64, what: &str) -> Result<String, UsageError> {
    let bytes = read_bytes_bounded(path, max, what)?;
    String::from_utf8(bytes)
        .map_err(|_| UsageError(format!("{}: not text, so not {what}", path.display())))
}

/// Reads a regular file of at most `max` bytes (the bound holds even if the
/// file grows while it is read).
pub fn read_bytes_bounded(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, UsageError> {
    let err = |m: String| UsageError(format!("{}: {m}", path.display()));
    let meta = regular_file(path, what)?;
    let too_large = |len: u64| {
        err(format!(
            "{} is too large for {what} (at most {})",
            crate::util::units::format_bytes(len),
            crate::util::units::format_bytes(max)
        ))
    };
    if meta.len() > max {
        return Err(too_large(meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(e.to_string()))?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_fifos_are_refused_and_files_read_within_the_bound() {
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20, "a result file").unwrap_err();
        assert!(e.0.contains("a character device"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(&p, "{}").unwrap();
        assert_eq!(read_bounded(&p, 2, "a result file").unwrap(), "{}");
        let e = read_bounded(&p, 1, "a result file").unwrap_err();
        assert!(e.0.contains("too large"), "{e}");
        let e = read_bounded(dir.path(), 1, "a result file").unwrap_err();
        assert!(e.0.contains("a directory"), "{e}");
    }
}
