//! What the kernel says about a target's per-I/O flags before a run
//! passes them: whether its file system or device takes RWF_DONTCACHE,
//! and the atomic write unit it reports (statx STATX_WRITE_ATOMIC). Both
//! are asked of a file that is only read, so nothing is changed.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Reads one byte of `file` with RWF_DONTCACHE: the kernel refuses the
/// flag (EOPNOTSUPP) before reading where the file system or device does
/// not drop pages after the I/O.
pub fn takes_uncached(file: &File) -> io::Result<()> {
    let mut byte = 0u8;
    let iov = libc::iovec {
        iov_base: (&raw mut byte).cast(),
        iov_len: 1,
    };
    // SAFETY: the iovec points at one byte owned by this frame.
    let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, 0, libc::RWF_DONTCACHE) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The sizes a single atomic write may take, as statx reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicUnit {
    pub min: u32,
    pub max: u32,
}

impl AtomicUnit {
    /// A write of `len` bytes is atomic when `len` is a power of two
    /// between the unit's bounds (the kernel's rule, generic_atomic_write_valid).
    pub fn takes(&self, len: u64) -> bool {
        len.is_power_of_two() && (u64::from(self.min)..=u64::from(self.max)).contains(&len)
    }
}

/// The atomic write unit the kernel reports for `file`, or None where it
/// reports none (a kernel before 6.11, or a file system or device without
/// atomic writes).
pub fn atomic_write_unit(file: &File) -> io::Result<Option<AtomicUnit>> {
    // SAFETY: statx fills the zeroed struct it is handed; an empty path
    // with AT_EMPTY_PATH names the descriptor itself.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_WRITE_ATOMIC,
            &mut stx,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let reported = stx.stx_mask & libc::STATX_WRITE_ATOMIC != 0;
    Ok(
        (reported && stx.stx_atomic_write_unit_max > 0).then_some(AtomicUnit {
            min: stx.stx_atomic_write_unit_min,
            max: stx.stx_atomic_write_unit_max,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_unit_takes_powers_of_two_within_its_bounds() {
        let unit = AtomicUnit {
            min: 4096,
            max: 65536,
        };
        assert!(unit.takes(4096));
        assert!(unit.takes(16384));
        assert!(unit.takes(65536));
        assert!(!unit.takes(2048), "below the unit");
        assert!(!unit.takes(131072), "above the unit");
        assert!(!unit.takes(12288), "not a power of two");
    }
}
