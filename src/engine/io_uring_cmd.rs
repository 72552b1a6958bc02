//! fio's `io_uring_cmd` engine (`cmd_type=nvme`): NVMe read, write and
//! flush commands sent through io_uring (`IORING_OP_URING_CMD`) to a
//! namespace's generic char node, `/dev/ngXnY`, past the block layer (no
//! scheduler, no merging, no page cache). The ring itself, with its depth,
//! registered buffers and file, and how it waits, is the io_uring engine's
//! (`io_uring.rs`); this file says how an I/O becomes a command, and which
//! block node is the same namespace, for the safety checks and the sizes.
//!
//! The commands are built as fio's `fio_nvme_uring_cmd_prep` builds them
//! (engines/nvme.c): the start block in cdw10-11, the block count less one
//! in cdw12, the buffer in addr and its length in data_len.

use super::io_uring::{IoUringEngine, RingIo};
use super::tuning::WaitPolicy;
use super::{Direction, IoRequest};
use crate::spec::RingOptions;
use crate::util::buffers::Buffers;
use io_uring::{cqueue, opcode, squeue, types};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// linux/nvme_ioctl.h: `_IOWR('N', 0x80, struct nvme_uring_cmd)`, the
/// non-vectored I/O command.
const NVME_URING_CMD_IO: u32 = 0xC048_4E80;
/// linux/nvme_ioctl.h: `_IO('N', 0x40)`, the namespace id of a node.
const NVME_IOCTL_ID: libc::c_ulong = 0x4E40;
/// NVMe's I/O command set: Flush, Write, Read.
const NVME_FLUSH: u8 = 0x00;
const NVME_WRITE: u8 = 0x01;
const NVME_READ: u8 = 0x02;
/// The first kernel with NVMe passthrough through io_uring.
pub const FIRST_KERNEL: (u32, u32) = (5, 19);
/// The first kernel whose NVMe driver takes registered buffers
/// (`IORING_URING_CMD_FIXED`).
const FIXED_BUFFERS_KERNEL: (u32, u32) = (6, 1);

/// Whether a kernel of `release` (its `osrelease`; None: unknown, and let
/// the ring say) has NVMe passthrough through io_uring: the reason when not.
pub fn check_kernel(release: Option<&str>) -> Result<(), String> {
    let Some(release) = release else {
        return Ok(());
    };
    if super::io_uring::release_at_least(release, FIRST_KERNEL) {
        return Ok(());
    }
    Err(format!(
        "NVMe passthrough through io_uring came in Linux {}.{}; this kernel is {}",
        FIRST_KERNEL.0,
        FIRST_KERNEL.1,
        release.trim()
    ))
}

/// Whether the char device `rdev` is an NVMe namespace's generic node.
pub fn is_generic_node(rdev: u64) -> bool {
    let sys = char_sysfs(rdev);
    std::fs::read_link(sys.join("subsystem"))
        .is_ok_and(|class| class.file_name().is_some_and(|n| n == "nvme-generic"))
}

fn char_sysfs(rdev: u64) -> PathBuf {
    PathBuf::from(format!(
        "/sys/dev/char/{}:{}",
        libc::major(rdev),
        libc::minor(rdev)
    ))
}

/// The namespace id the kernel gives the node `file` (a char or a block node).
fn nsid_of(file: &File) -> io::Result<u32> {
    // SAFETY: an ioctl that takes no argument on a descriptor `file` holds.
    let id = unsafe { libc::ioctl(file.as_raw_fd(), NVME_IOCTL_ID) };
    if id < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(id as u32)
}

/// The block nodes of the controller above sysfs directory `node`, as
/// (name, namespace id): `nvme0n1` and its kin, not the char nodes.
fn block_namespaces(controller: &Path) -> Vec<(String, u32)> {
    let Ok(entries) = std::fs::read_dir(controller) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let nsid = crate::gate::read::host_text(e.path().join("nsid"))?;
            (name.starts_with("nvme") && e.path().join("queue").exists())
                .then_some((name, nsid.trim().parse().ok()?))
        })
        .collect()
}

/// The block node of the namespace whose generic char node is
/// `char_node` (`/dev/nvme0n1` for `/dev/ng0n1`), which the safety checks,
/// the zone report and the sizes read: found through the controller both
/// hang under, by namespace id.
pub fn block_node_of_char_node(char_node: &Path) -> io::Result<PathBuf> {
    let file = crate::gate::read::device_to_query(char_node)?;
    let rdev = file.metadata()?.rdev();
    let nsid = nsid_of(&file)?;
    let controller = char_sysfs(rdev).join("device");
    let (name, _) = block_namespaces(&controller)
        .into_iter()
        .find(|(name, id)| *id == nsid && Path::new("/dev").join(name).exists())
        .ok_or_else(|| {
            io::Error::other(format!(
                "no block node of namespace {nsid} is in /dev (the safety checks read it)"
            ))
        })?;
    Ok(Path::new("/dev").join(name))
}

/// The generic char node of the NVMe namespace whose block node is
/// `block_node`, if it has one: what to name instead, in a refusal.
pub fn char_node_of_block_node(block_node: &Path) -> Option<PathBuf> {
    let file = crate::gate::read::device_to_query(block_node).ok()?;
    let nsid = nsid_of(&file).ok()?;
    let rdev = file.metadata().ok()?.rdev();
    let sys = PathBuf::from(format!(
        "/sys/dev/block/{}:{}/device",
        libc::major(rdev),
        libc::minor(rdev)
    ));
    std::fs::read_dir(sys)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("ng"))
        .map(|name| Path::new("/dev").join(name))
        .find(|node| {
            crate::gate::read::device_to_query(node)
                .ok()
                .filter(|f| f.metadata().is_ok_and(|m| m.file_type().is_char_device()))
                .and_then(|f| nsid_of(&f).ok())
                == Some(nsid)
        })
}

/// NVMe commands of one namespace: its id, its block size, and each slot's
/// length (a command completes with 0, not with the bytes it moved).
pub struct NvmeCommands {
    nsid: u32,
    lba_shift: u32,
    lens: Vec<u32>,
    /// Whether the driver takes registered buffers (Linux 6.1).
    fixed_buffers: bool,
}

impl NvmeCommands {
    fn command(&self, opcode: u8, cdw10_12: [u32; 3], addr: u64, len: u32) -> [u8; 80] {
        // struct nvme_uring_cmd: opcode at 0, nsid at 4, addr at 24,
        // data_len at 36, cdw10-12 at 40-51; 72 bytes of the sqe's 80.
        let mut cmd = [0u8; 80];
        cmd[0] = opcode;
        cmd[4..8].copy_from_slice(&self.nsid.to_ne_bytes());
        cmd[24..32].copy_from_slice(&addr.to_ne_bytes());
        cmd[36..40].copy_from_slice(&len.to_ne_bytes());
        for (i, dw) in cdw10_12.iter().enumerate() {
            cmd[40 + 4 * i..44 + 4 * i].copy_from_slice(&dw.to_ne_bytes());
        }
        cmd
    }
}

impl RingIo for NvmeCommands {
    type Sqe = squeue::Entry128;
    type Cqe = cqueue::Entry32;

    fn read_write(&mut self, request: &IoRequest, buf: *mut u8, fixed: bool) -> squeue::Entry128 {
        let slba = request.offset >> self.lba_shift;
        let nlb = (request.len >> self.lba_shift).saturating_sub(1);
        let opcode = match request.dir {
            Direction::Read => NVME_READ,
            _ => NVME_WRITE,
        };
        self.lens[request.slot as usize] = request.len;
        let cmd = self.command(
            opcode,
            [slba as u32, (slba >> 32) as u32, nlb],
            buf as u64,
            request.len,
        );
        let fixed = fixed && self.fixed_buffers;
        opcode::UringCmd80::new(types::Fixed(0), NVME_URING_CMD_IO)
            .cmd(cmd)
            .buf_index(fixed.then_some(request.slot as u16))
            .build()
    }

    fn flush(&self, _data_only: bool) -> squeue::Entry128 {
        let cmd = self.command(NVME_FLUSH, [0; 3], 0, 0);
        opcode::UringCmd80::new(types::Fixed(0), NVME_URING_CMD_IO)
            .cmd(cmd)
            .build()
    }

    /// 0 is done (the bytes asked for); a negative errno is the kernel's;
    /// a positive result is the NVMe status the drive answered, an error
    /// of the I/O (EIO), as fio takes it.
    fn outcome(&self, slot: u32, result: i32) -> i32 {
        match result {
            0 => self.lens.get(slot as usize).map_or(0, |&len| len as i32),
            r if r > 0 => -libc::EIO,
            r => r,
        }
    }
}

/// The logical block size of namespace `nsid` of the controller above the
/// char device `rdev`, as its block node's queue reports it.
fn lba_bytes(rdev: u64, nsid: u32) -> io::Result<u64> {
    let controller = char_sysfs(rdev).join("device");
    block_namespaces(&controller)
        .into_iter()
        .find(|(_, id)| *id == nsid)
        .and_then(|(name, _)| {
            crate::gate::read::host_text(controller.join(name).join("queue/logical_block_size"))
        })
        .and_then(|text| text.trim().parse().ok())
        .ok_or_else(|| {
            io::Error::other(format!("namespace {nsid}: no logical block size in sysfs"))
        })
}

/// The engine over an opened generic char node: the ring of `io_uring.rs`
/// carrying NVMe commands.
pub fn open(
    file: File,
    depth: u32,
    buffers: Buffers,
    options: RingOptions,
    wait: WaitPolicy,
) -> io::Result<IoUringEngine<NvmeCommands>> {
    let nsid = nsid_of(&file)?;
    let lba_bytes = lba_bytes(file.metadata()?.rdev(), nsid)?;
    let (major, minor) = FIXED_BUFFERS_KERNEL;
    let commands = NvmeCommands {
        nsid,
        lba_shift: lba_bytes.max(1).trailing_zeros(),
        lens: vec![0; buffers.slots()],
        fixed_buffers: super::io_uring::kernel_at_least(major, minor),
    };
    IoUringEngine::with_io(commands, file, depth, buffers, options, wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands() -> NvmeCommands {
        NvmeCommands {
            nsid: 3,
            lba_shift: 12,
            lens: vec![0; 4],
            fixed_buffers: true,
        }
    }

    /// The command fio builds for a 16 KiB read at 8 GiB of a 4 KiB-block
    /// namespace: block 2 Mi, 4 blocks (3 in cdw12), namespace 3, read
    /// back from the 128-byte entry the ring is given.
    #[test]
    fn a_read_is_the_nvme_command_fio_builds() {
        let mut c = commands();
        let request = IoRequest {
            slot: 2,
            dir: Direction::Read,
            offset: 8 << 30,
            len: 16384,
            ioprio: 0,
        };
        let entry = c.read_write(&request, 0x1000 as *mut u8, false);
        // SAFETY: Entry128 is repr(C): a 64-byte sqe and 64 bytes more.
        let sqe: [u8; 128] = unsafe { std::mem::transmute(entry) };
        let word = |at: usize| u32::from_ne_bytes(sqe[at..at + 4].try_into().unwrap());
        assert_eq!(sqe[0], 46, "IORING_OP_URING_CMD");
        assert_eq!(word(8), NVME_URING_CMD_IO, "cmd_op");
        // The command begins at byte 48 of the sqe.
        let cmd = &sqe[48..];
        assert_eq!(cmd[0], NVME_READ);
        let field = |at: usize| u32::from_ne_bytes(cmd[at..at + 4].try_into().unwrap());
        assert_eq!(field(4), 3, "nsid");
        assert_eq!(u64::from_ne_bytes(cmd[24..32].try_into().unwrap()), 0x1000);
        assert_eq!(field(36), 16384, "data_len");
        assert_eq!((field(40), field(44)), (1 << 21, 0), "slba");
        assert_eq!(field(48), 3, "blocks less one");
        assert_eq!(c.outcome(2, 0), 16384, "a done command moved what it asked");
        assert_eq!(
            c.outcome(2, 0x4002),
            -libc::EIO,
            "an NVMe status is an error"
        );
        assert_eq!(c.outcome(2, -libc::EINVAL), -libc::EINVAL);
    }

    #[test]
    fn a_kernel_before_5_19_is_refused_with_the_reason() {
        let e = check_kernel(Some("5.15.0-91-generic\n")).unwrap_err();
        assert_eq!(
            e,
            "NVMe passthrough through io_uring came in Linux 5.19; this kernel is 5.15.0-91-generic"
        );
        assert!(check_kernel(Some("5.19.0")).is_ok());
        assert!(check_kernel(Some("6.1.0-27-amd64")).is_ok());
        assert!(check_kernel(None).is_ok());
    }
}
