//! Trims: how a range is discarded on each kind of target, shared by the
//! engines that do it in the worker's own thread (sync, and io_uring where
//! the kernel has no opcode for it).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;

/// linux/fs.h: discard a byte range of a block device, `_IO(0x12, 119)`.
const BLKDISCARD: libc::c_ulong = 0x1277;
/// linux/blkdev.h: the io_uring command that discards, `_IO(0x12, 0)`
/// (Linux 6.12 and later).
pub const BLOCK_URING_CMD_DISCARD: u32 = 0x1200;

/// How a target discards a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimMethod {
    /// A block device: a discard request to the device (BLKDISCARD).
    Discard,
    /// A file: a hole punched in it, its size kept (`fallocate`
    /// PUNCH_HOLE | KEEP_SIZE), which frees the blocks under it.
    PunchHole,
    /// A host-managed zoned device: the zones in the range reset (BLKRESETZONE),
    /// as fio trims one under zonemode=zbd; a discard would leave their
    /// write pointers where they are.
    ResetZone,
}

/// linux/blkzoned.h: `_IOW(0x12, 131, struct blk_zone_range)`.
const BLKRESETZONE: libc::c_ulong = 0x4010_1283;

/// Resets the write pointers of the zones in `len` bytes at `offset` (both
/// whole zones): 0 when done, or a negative errno.
pub fn reset_zones(file: &File, offset: u64, len: u64) -> i32 {
    let range: [u64; 2] = [offset / 512, len / 512];
    // SAFETY: the ioctl reads one blk_zone_range (two u64s), which lives on
    // this stack frame, from a descriptor `file` keeps open.
    super::retried(
        || unsafe { libc::ioctl(file.as_raw_fd(), BLKRESETZONE, range.as_ptr()) },
        0,
    )
}

impl TrimMethod {
    pub fn of(file: &File) -> io::Result<TrimMethod> {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata()?;
        if !meta.file_type().is_block_device() {
            return Ok(TrimMethod::PunchHole);
        }
        let rdev = meta.rdev();
        // A host-aware device takes discards; a host-managed one's zones
        // are emptied only by a reset.
        let zoned = crate::measure::facts::device_facts(libc::major(rdev), libc::minor(rdev))
            .and_then(|d| d.zoned)
            .is_some_and(|z| z.model == crate::measure::facts::ZoneModel::HostManaged);
        Ok(match zoned {
            true => TrimMethod::ResetZone,
            false => TrimMethod::Discard,
        })
    }

    /// The `fallocate` mode that punches a hole and keeps the size.
    pub const PUNCH_HOLE_MODE: i32 = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;

    /// Discards `len` bytes at `offset` now: 0 when done, or a negative
    /// errno, as a completion carries it.
    pub fn trim(self, file: &File, offset: u64, len: u32) -> i32 {
        let fd = file.as_raw_fd();
        match self {
            TrimMethod::ResetZone => reset_zones(file, offset, u64::from(len)),
            TrimMethod::Discard => {
                let range: [u64; 2] = [offset, u64::from(len)];
                // SAFETY: the range BLKDISCARD reads lives on this stack
                // frame; `file` keeps the descriptor open.
                super::retried(|| unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) }, 0)
            }
            // SAFETY: a plain syscall on a descriptor `file` keeps open.
            TrimMethod::PunchHole => super::retried(
                || unsafe {
                    libc::fallocate(
                        fd,
                        Self::PUNCH_HOLE_MODE,
                        offset as libc::off_t,
                        libc::off_t::from(len),
                    )
                },
                0,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_punched_range_of_a_file_reads_back_as_zeros_and_keeps_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut file = File::options()
            .create(true)
            .read(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.write_all(&vec![0xa5u8; 64 << 10]).unwrap();
        file.sync_all().unwrap();
        let method = TrimMethod::of(&file).unwrap();
        assert_eq!(method, TrimMethod::PunchHole);
        let r = method.trim(&file, 16 << 10, 16 << 10);
        if r == -libc::EOPNOTSUPP {
            eprintln!("SKIP: the file system of the temporary directory cannot punch holes");
            return;
        }
        assert_eq!(r, 0);
        let mut back = vec![0u8; 64 << 10];
        file.read_exact_at(&mut back, 0).unwrap();
        assert!(back[..16 << 10].iter().all(|&b| b == 0xa5));
        assert!(back[16 << 10..32 << 10].iter().all(|&b| b == 0));
        assert!(back[32 << 10..].iter().all(|&b| b == 0xa5));
        assert_eq!(file.metadata().unwrap().len(), 64 << 10);
    }
}
