//! What the rest of fathom shares: units, errors, the stop flag, aligned
//! buffers and the verify header. (Files read, written and removed, and
//! the device safety checks, are the gate's.)

pub mod buffers;
pub mod error;
pub mod space;
pub mod stop;
pub mod terminal;
pub mod units;
pub mod verify;
pub mod yaml;

use std::path::Path;

/// Now, in seconds since the epoch (None on a clock set before it).
pub fn unix_now_s() -> Option<f64> {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs_f64())
}

/// The directory a file at `path` is (or would be) in: `.` for a bare name.
pub fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The file `path` names, by device and inode (links followed): a path, a
/// symbolic link and a hard link of one file are the same file. None when
/// it does not exist.
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `a` and `b` name one existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    file_id(a).is_some_and(|id| file_id(b) == Some(id))
}

/// `posix_fadvise(file, offset, len, advice)`: a hint; the kernel may
/// ignore it, and a failure changes nothing a run measures.
pub fn advise(file: &std::fs::File, offset: u64, len: u64, advice: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: an advisory call on a descriptor the caller holds open.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            advice,
        );
    }
}

/// A value as fathom's JSON names it (`file`, `after-write`), not as Rust
/// spells it: for csv cells and messages.
pub fn json_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_and_a_hard_link_are_the_same_file_and_a_bare_name_is_in_dot() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, "x").unwrap();
        let hard = dir.path().join("hard");
        std::fs::hard_link(&a, &hard).unwrap();
        let soft = dir.path().join("soft");
        std::os::unix::fs::symlink(&a, &soft).unwrap();
        assert!(same_file(&a, &hard) && same_file(&a, &soft));
        let b = dir.path().join("b");
        std::fs::write(&b, "x").unwrap();
        assert!(!same_file(&a, &b));
        assert!(!same_file(
            &dir.path().join("missing"),
            &dir.path().join("missing")
        ));
        assert_eq!(directory_of(Path::new("x.dat")), Path::new("."));
        assert_eq!(directory_of(Path::new("d/x.dat")), Path::new("d"));
    }
}
