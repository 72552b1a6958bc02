//! How much room a file system has left: bytes and inodes, from statvfs.

use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged writer may still use.
    pub free_bytes: u64,
    /// The file system's fundamental block size.
    pub block: u64,
    /// Inodes in all; 0 where the file system does not count them (btrfs).
    pub inodes: u64,
    /// Inodes free, and those an unprivileged writer may still use.
    pub inodes_free: u64,
    pub inodes_avail: u64,
}

/// The room left on the file system that holds `dir`.
pub fn of(dir: &Path) -> Option<Space> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs writes into the struct we pass.
    let s = unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) != 0 {
            return None;
        }
        s
    };
    Some(Space {
        free_bytes: s.f_bavail * s.f_frsize,
        block: s.f_frsize,
        inodes: s.f_files,
        inodes_free: s.f_ffree,
        inodes_avail: s.f_favail,
    })
}
