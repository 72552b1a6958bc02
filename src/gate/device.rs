//! Refusing to destroy data: before any write to a block device, fathom looks
//! for signs that it holds someone's data (mounted, in use by RAID/LVM/swap/
//! device-mapper, or carrying a file system, partition table or volume
//! signature) and refuses unless told explicitly. libblkid's full probe
//! (through `blkid -p`, which knows every format util-linux knows) runs at the
//! start of the device and at the usual partition starts, so a file system
//! whose partition table is gone is found too; an ambivalent probe counts as
//! data. fathom's own list of magics in the first and last MiB stands beside
//! it, for machines without blkid.

use std::fs;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

pub const PROBE_SPAN: u64 = 1 << 20;

/// Signatures found in the first MiB of a device (`head`) and the last MiB
/// (`tail`, which starts at byte `tail_start` of a device of `len` bytes).
pub fn signatures(head: &[u8], tail: &[u8], tail_start: u64, len: u64) -> Vec<&'static str> {
    let mut found = Vec::new();
    let at = |buf: &[u8], offset: usize, magic: &[u8]| {
        buf.get(offset..offset + magic.len()) == Some(magic)
    };
    let le32 = |buf: &[u8], offset: usize| {
        buf.get(offset..offset + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };

    if at(head, 1080, &[0x53, 0xEF]) {
        found.push("an ext2/ext3/ext4 file system");
    }
    if at(head, 0, b"XFSB") {
        found.push("an XFS file system");
    }
    if at(head, 0x10040, b"_BHRfS_M") {
        found.push("a btrfs file system");
    }
    if le32(head, 1024) == Some(0xF2F5_2010) {
        found.push("an F2FS file system");
    }
    if at(head, 0, b"hsqs") {
        found.push("a squashfs image");
    }
    if at(head, 32769, b"CD001") {
        found.push("an ISO 9660 image");
    }
    if at(head, 3, b"NTFS    ") {
        found.push("an NTFS file system");
    }
    if at(head, 54, b"FAT") || at(head, 82, b"FAT32") {
        found.push("a FAT file system");
    }
    if at(head, 3, b"EXFAT   ") {
        found.push("an exFAT file system");
    }
    if [0x137Fu16, 0x138F, 0x2468, 0x2478, 0x4D5A]
        .iter()
        .any(|m| at(head, 0x410, &m.to_le_bytes()))
    {
        found.push("a minix file system");
    }
    const CRAMFS_MAGIC: u32 = 0x28cd_3d45;
    if [0, 512].iter().any(|&o| {
        le32(head, o).is_some_and(|m| m == CRAMFS_MAGIC || m.swap_bytes() == CRAMFS_MAGIC)
    }) {
        found.push("a cramfs image");
    }
    if le32(head, 0) == Some(0x1BAD_FACE) {
        found.push("a BFS file system");
    }
    if at(head, 32, b"ORCLDISK") {
        found.push("an Oracle ASM disk");
    }
    if at(head, 0, b"LUKS\xba\xbe") {
        found.push("a LUKS encrypted volume");
    }
    for page in [4096usize, 8192, 16384, 65536] {
        if at(head, page - 10, b"SWAPSPACE2") || at(head, page - 10, b"SWAP-SPACE") {
            found.push("swap space");
            break;
        }
    }
    if (0..4).any(|sector| at(head, sector * 512, b"LABELONE")) {
        found.push("an LVM physical volume");
    }
    // Linux RAID (md) superblocks: versions 1.1 and 1.2 near the start,
    // 0.90 and 1.0 near the end.
    const MD_MAGIC: u32 = 0xa92b_4efc;
    if le32(head, 0) == Some(MD_MAGIC) || le32(head, 4096) == Some(MD_MAGIC) {
        found.push("a Linux RAID member");
    } else {
        let md_ends = [
            (len & !(64 * 1024 - 1)).saturating_sub(64 * 1024),
            (len.saturating_sub(8192)) & !4095,
        ];
        for pos in md_ends {
            if pos >= tail_start
                && le32(tail, (pos - tail_start) as usize)
                    .is_some_and(|m| m == MD_MAGIC || m.swap_bytes() == MD_MAGIC)
            {
                found.push("a Linux RAID member");
                break;
            }
        }
    }
    if at(head, 512, b"EFI PART") || at(head, 4096, b"EFI PART") {
        found.push("a GPT partition table");
    } else if tail.len() >= 4096
        && (at(tail, tail.len() - 512, b"EFI PART") || at(tail, tail.len() - 4096, b"EFI PART"))
    {
        found.push("a backup GPT partition table");
    } else if at(head, 510, &[0x55, 0xAA]) {
        found.push("an MBR partition table or boot sector");
    }
    found
}

/// What holds a block device: mounts, swap, or other devices stacked on it
/// (LVM, dm-crypt, md RAID, multipath), for the device and its partitions.
pub fn holders(device: &Path) -> io::Result<Vec<String>> {
    let meta = fs::metadata(device)?;
    let rdev = meta.rdev();
    let sys = fs::canonicalize(format!(
        "/sys/dev/block/{}:{}",
        libc::major(rdev),
        libc::minor(rdev)
    ))?;
    // The device itself and every partition of it.
    let mut nodes: Vec<(PathBuf, String)> = vec![(sys.clone(), read_dev(&sys))];
    if let Ok(entries) = fs::read_dir(&sys) {
        for entry in entries.flatten() {
            let p = entry.path();
            if p.join("partition").exists() {
                let dev = read_dev(&p);
                nodes.push((p, dev));
            }
        }
    }
    let mut found = Vec::new();
    let mountinfo = crate::gate::read::host_text("/proc/self/mountinfo").unwrap_or_default();
    let swaps = crate::gate::read::host_text("/proc/swaps").unwrap_or_default();
    for (node, dev) in &nodes {
        let name = node
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for line in mountinfo.lines() {
            // Fields 3 and 5 of a mountinfo line: major:minor, mount point.
            let mut fields = line.split_whitespace();
            let devno = fields.nth(2);
            let mount_point = fields.nth(1);
            if let (Some(devno), Some(mount_point)) = (devno, mount_point)
                && devno == dev
            {
                found.push(format!("{name} is mounted on {mount_point}"));
            }
        }
        // A swap file's st_rdev is 0:0, which names no disk; the disk under
        // it shows as mounted.
        for line in swaps.lines().skip(1) {
            if let Some(path) = line.split_whitespace().next()
                && fs::metadata(path).is_ok_and(|m| format_dev(m.rdev()) == *dev)
            {
                found.push(format!("{name} is in use as swap"));
            }
        }
        if let Ok(entries) = fs::read_dir(node.join("holders")) {
            for holder in entries.flatten() {
                found.push(format!(
                    "{name} is held by {} (LVM, RAID, dm-crypt or multipath)",
                    holder.file_name().to_string_lossy()
                ));
            }
        }
    }
    Ok(found)
}

fn read_dev(sys: &Path) -> String {
    crate::gate::read::host_text(sys.join("dev"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn format_dev(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// The loop devices whose backing file is `file` (by device and inode, as
/// the kernel names it in sysfs): writing the file writes each of them,
/// and whatever file system is on them.
pub fn loops_backed_by(file: &Path) -> Vec<PathBuf> {
    let Ok(meta) = fs::metadata(file) else {
        return vec![];
    };
    let Ok(entries) = fs::read_dir("/sys/block") else {
        return vec![];
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("loop"))
        .filter(|e| {
            let Some(backing) = crate::gate::read::host_text(e.path().join("loop/backing_file"))
            else {
                return false;
            };
            let backing = backing.trim_end_matches('\n');
            fs::metadata(backing).is_ok_and(|b| b.dev() == meta.dev() && b.ino() == meta.ino())
        })
        .map(|e| Path::new("/dev").join(e.file_name()))
        .collect();
    found.sort();
    found
}

/// What makes writing to `file` destructive when loop devices are backed
/// by it: each device's own risks, and the device itself, since what it
/// holds is not known to be free because no signature was found.
pub fn risks_of_writing_backing_file(file: &Path) -> io::Result<DeviceRisks> {
    let mut risks = DeviceRisks::default();
    for device in loops_backed_by(file) {
        let name = device.display().to_string();
        let len = crate::gate::read::host_text(
            Path::new("/sys/block")
                .join(device.file_name().unwrap_or_default())
                .join("size"),
        )
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(0, |sectors| sectors * 512);
        let theirs = risks_of_writing(&device, len)?;
        risks.in_use.extend(
            theirs
                .in_use
                .into_iter()
                .map(|s| format!("it backs {name}: {s}")),
        );
        risks.holds_data.push(format!(
            "it backs the block device {name}, which writing the file writes"
        ));
        risks.holds_data.extend(
            theirs
                .holds_data
                .into_iter()
                .filter(|s| s != NO_SIGNATURE)
                .map(|s| format!("{name} {}", s.trim_start_matches("it "))),
        );
    }
    Ok(risks)
}

/// What makes writing to a device destructive, in the two kinds that take
/// different permission: a device in use right now (a live file system
/// under a write is corrupted at once, and the kernel may crash) and one
/// that holds data at rest (a stale signature may be just that).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceRisks {
    /// Mounted, swap, or held by LVM, RAID, dm-crypt or multipath.
    pub in_use: Vec<String>,
    /// A file system, partition table or volume signature.
    pub holds_data: Vec<String>,
}

/// What the user allowed: `--i-know-this-destroys-data` lifts `holds_data`,
/// `--even-if-mounted` lifts `in_use`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WritePermission {
    pub destroy_data: bool,
    pub even_if_mounted: bool,
}

/// Where a partition of a disk usually starts (DOS's sector 63, then the
/// MiB-aligned starts of every partitioning tool since): a file system there
/// outlives a wiped or overwritten partition table.
const PARTITION_STARTS: [u64; 6] = [63 * 512, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20];

/// How much of a partition start fathom's own magics look at (btrfs's
/// superblock, the deepest of them, is at 64 KiB).
const START_SPAN: u64 = 128 << 10;

/// Reads what makes writing to `device` (of `len` bytes) destructive.
pub fn risks_of_writing(device: &Path, len: u64) -> io::Result<DeviceRisks> {
    let in_use = holders(device)?;
    let file = crate::gate::target::open(device, Default::default())?;
    let head_len = PROBE_SPAN.min(len) as usize;
    let mut head = vec![0u8; head_len];
    file.read_exact_at(&mut head, 0)?;
    let tail_start = len.saturating_sub(PROBE_SPAN);
    let mut tail = vec![0u8; (len - tail_start) as usize];
    file.read_exact_at(&mut tail, tail_start)?;
    let mut found: Vec<String> = signatures(&head, &tail, tail_start, len)
        .into_iter()
        .map(String::from)
        .collect();
    found.extend(libblkid_probe(device, 0));
    // A file system or volume at the device's start spans the partition
    // starts, so what is found there is its own (ext4's backup
    // superblocks fall on them: with 1 KiB blocks its second group starts
    // at 8 MiB), and the device is refused for it already.
    let whole = found
        .iter()
        .any(|s| !s.contains("partition table") && !s.contains("MBR"));
    let mut at_start = vec![0u8; START_SPAN as usize];
    for start in PARTITION_STARTS {
        if whole || start + START_SPAN > len {
            break;
        }
        file.read_exact_at(&mut at_start, start)?;
        let mut here: Vec<String> = signatures(&at_start, &[], len, len)
            .into_iter()
            // A boot sector's two bytes say little away from the start.
            .filter(|s| !s.contains("MBR"))
            .map(String::from)
            .collect();
        here.extend(
            libblkid_probe(device, start)
                .into_iter()
                .filter(|s| !s.contains("partition table")),
        );
        found.extend(here.into_iter().map(|s| {
            format!(
                "{s} at {} (where a partition starts)",
                crate::util::units::format_bytes(start)
            )
        }));
    }
    let mut holds_data: Vec<String> = Vec::new();
    for s in found {
        let s = format!("it carries {s}");
        if !holds_data.contains(&s) {
            holds_data.push(s);
        }
    }
    if holds_data.is_empty() {
        holds_data.push(NO_SIGNATURE.to_string());
    }
    Ok(DeviceRisks { in_use, holds_data })
}

/// Why a device with no signature is not free to write: what it holds is
/// not known, only that it is nothing fathom or libblkid recognise.
pub const NO_SIGNATURE: &str = "it is a block device, and no signature on it does not make it free: it may hold data nothing recognises (raw database files, random or encrypted data)";

/// What libblkid's full probe (`blkid -p`) finds at `offset` of `device`:
/// file systems, RAID and volume members, partition tables. An ambivalent
/// result (more than one signature) is data too. Empty where blkid is not
/// installed: fathom's own magics then stand alone.
fn libblkid_probe(device: &Path, offset: u64) -> Vec<String> {
    let offset = offset.to_string();
    let options = ["-p", "-o", "export", "-O", &offset];
    let Ok(out) = crate::gate::helper::run("blkid", &options, device, BLKID_BOUND) else {
        return vec![];
    };
    match out.code {
        Some(0) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let (key, value) = line.split_once('=')?;
                matches!(key, "TYPE" | "PTTYPE").then(|| blkid_type_name(value))
            })
            .collect(),
        Some(8) => vec![
            "more than one signature (libblkid's probe is ambivalent; `wipefs` lists them)"
                .to_string(),
        ],
        _ => vec![],
    }
}

/// How long libblkid's probe of one offset may take (a local read of a few
/// blocks; a device that does not answer in this time is not one to write).
const BLKID_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// libblkid's name of a format, said as fathom's own probe says it.
fn blkid_type_name(kind: &str) -> String {
    match kind {
        "ext2" | "ext3" | "ext4" | "ext4dev" | "jbd" => "an ext2/ext3/ext4 file system",
        "xfs" | "xfs_external_log" => "an XFS file system",
        "btrfs" => "a btrfs file system",
        "f2fs" => "an F2FS file system",
        "squashfs" | "squashfs3" => "a squashfs image",
        "iso9660" | "udf" => "an ISO 9660 image",
        "ntfs" => "an NTFS file system",
        "vfat" | "msdos" => "a FAT file system",
        "exfat" => "an exFAT file system",
        "minix" => "a minix file system",
        "cramfs" => "a cramfs image",
        "bfs" => "a BFS file system",
        "oracleasm" => "an Oracle ASM disk",
        "crypto_LUKS" => "a LUKS encrypted volume",
        "swap" | "swsuspend" => "swap space",
        "LVM2_member" | "LVM1_member" => "an LVM physical volume",
        "linux_raid_member" => "a Linux RAID member",
        "gpt" | "PMBR" => "a GPT partition table",
        "dos" => "an MBR partition table or boot sector",
        other => return format!("a {other} signature (as libblkid names it)"),
    }
    .to_string()
}

impl DeviceRisks {
    /// Whether `permission` allows the write: Ok with what it overrode
    /// (empty for a device that looks unused), or the refusal.
    pub fn judge(&self, permission: WritePermission) -> Result<Vec<String>, String> {
        let all = || {
            self.in_use
                .iter()
                .chain(&self.holds_data)
                .cloned()
                .collect::<Vec<_>>()
        };
        if !self.in_use.is_empty() && !permission.even_if_mounted {
            return Err(if permission.destroy_data {
                format!(
                    "refusing to write: {}: writing under a device in use corrupts what uses it, and --i-know-this-destroys-data does not cover that (unmount it, or pass --even-if-mounted as well)",
                    self.in_use.join("; ")
                )
            } else {
                format!(
                    "refusing to write: {} (pass --i-know-this-destroys-data --even-if-mounted to write anyway)",
                    all().join("; ")
                )
            });
        }
        if !self.holds_data.is_empty() && !permission.destroy_data {
            return Err(format!(
                "refusing to write: {} (pass --i-know-this-destroys-data to write anyway)",
                self.holds_data.join("; ")
            ));
        }
        Ok(all())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> (Vec<u8>, Vec<u8>) {
        (
            vec![0u8; PROBE_SPAN as usize],
            vec![0u8; PROBE_SPAN as usize],
        )
    }

    fn probe(head: &[u8], tail: &[u8]) -> Vec<&'static str> {
        let len = 64 << 20;
        signatures(head, tail, len - PROBE_SPAN, len)
    }

    #[test]
    fn blank_and_random_devices_have_no_signature() {
        let (head, tail) = blank();
        assert!(probe(&head, &tail).is_empty());
        let mut noise = vec![0u8; PROBE_SPAN as usize];
        let mut x = 0x1234_5678_9abc_def0u64;
        for b in noise.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        // Random data can collide with a 2-byte magic; fathom's own data
        // stamps offsets, so check the buffer fathom would leave.
        let found = probe(&noise, &noise);
        assert!(found.len() <= 1, "{found:?}");
    }

    #[test]
    fn known_signatures_are_named() {
        let cases: [(usize, &[u8], &str); 8] = [
            (1080, &[0x53, 0xEF], "ext"),
            (0, b"XFSB", "XFS"),
            (0x10040, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (512, b"LABELONE", "LVM"),
            (512, b"EFI PART", "GPT"),
            (510, &[0x55, 0xAA], "MBR"),
            (0, b"LUKS\xba\xbe", "LUKS"),
        ];
        for (offset, magic, name) in cases {
            let (mut head, tail) = blank();
            head[offset..offset + magic.len()].copy_from_slice(magic);
            let found = probe(&head, &tail);
            assert!(found.iter().any(|f| f.contains(name)), "{name}: {found:?}");
        }
    }

    #[test]
    fn each_signature_is_named_alone_wherever_its_format_puts_it() {
        let md = 0xa92b_4efcu32.to_le_bytes();
        let f2fs = 0xF2F5_2010u32.to_le_bytes();
        let cases: [(usize, &[u8], &str); 19] = [
            (1080, &[0x53, 0xEF], "an ext2/ext3/ext4 file system"),
            (0, b"XFSB", "an XFS file system"),
            (0x10040, b"_BHRfS_M", "a btrfs file system"),
            (1024, &f2fs, "an F2FS file system"),
            (0, b"hsqs", "a squashfs image"),
            (32769, b"CD001", "an ISO 9660 image"),
            (3, b"NTFS    ", "an NTFS file system"),
            (54, b"FAT", "a FAT file system"),
            (82, b"FAT32", "a FAT file system"),
            (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
            (4086, b"SWAPSPACE2", "swap space"),
            (8182, b"SWAP-SPACE", "swap space"),
            (65526, b"SWAPSPACE2", "swap space"),
            (0, b"LABELONE", "an LVM physical volume"),
            (1536, b"LABELONE", "an LVM physical volume"),
            (0, &md, "a Linux RAID member"),
            (4096, &md, "a Linux RAID member"),
            (4096, b"EFI PART", "a GPT partition table"),
            (510, &[0x55, 0xAA], "an MBR partition table or boot sector"),
        ];
        for (offset, magic, name) in cases {
            let (mut head, tail) = blank();
            head[offset..offset + magic.len()].copy_from_slice(magic);
            assert_eq!(probe(&head, &tail), [name], "{offset}");
        }
    }

    #[test]
    fn raid_superblocks_at_the_end_are_found_in_either_byte_order() {
        let len: u64 = 64 << 20;
        let tail_start = len - PROBE_SPAN;
        // Versions 0.90 (64 KiB-aligned, 64 KiB from the end) and 1.0
        // (4 KiB-aligned, 8 KiB from the end); 0.90 is in host order.
        for (pos, magic) in [
            (len - (64 << 10), 0xa92b_4efcu32.to_le_bytes()),
            (len - (64 << 10), 0xa92b_4efcu32.to_be_bytes()),
            ((len - 8192) & !4095, 0xa92b_4efcu32.to_be_bytes()),
        ] {
            let (head, mut tail) = blank();
            let at = (pos - tail_start) as usize;
            tail[at..at + 4].copy_from_slice(&magic);
            assert_eq!(
                signatures(&head, &tail, tail_start, len),
                ["a Linux RAID member"]
            );
        }
        // A device whose size is not a multiple of 64 KiB: 0.90 rounds the
        // size down to 64 KiB first, 1.0 only to 4 KiB.
        let odd = (64 << 20) + 0x1_2345;
        let odd_tail_start = odd - PROBE_SPAN;
        for pos in [64 << 20, (64 << 20) + 0x1_0000] {
            let (head, mut tail) = blank();
            let at = (pos - odd_tail_start) as usize;
            tail[at..at + 4].copy_from_slice(&0xa92b_4efcu32.to_le_bytes());
            assert_eq!(
                signatures(&head, &tail, odd_tail_start, odd),
                ["a Linux RAID member"],
                "{pos:#x}"
            );
        }
        // A 64 KiB device is all head and tail: its 0.90 superblock is at 0.
        let mut small = vec![0u8; 64 << 10];
        small[..4].copy_from_slice(&0xa92b_4efcu32.to_be_bytes());
        assert_eq!(
            signatures(&small, &small, 0, 64 << 10),
            ["a Linux RAID member"]
        );
    }

    #[test]
    fn a_backup_gpt_is_found_on_a_device_of_one_tail() {
        let mut tiny = vec![0u8; 4096];
        tiny[4096 - 512..4096 - 504].copy_from_slice(b"EFI PART");
        assert_eq!(
            signatures(&tiny, &tiny, 0, 4096),
            ["a backup GPT partition table"]
        );
        let (head, mut tail) = blank();
        let n = tail.len();
        tail[n - 4096..n - 4088].copy_from_slice(b"EFI PART");
        assert_eq!(probe(&head, &tail), ["a backup GPT partition table"]);
    }

    #[test]
    fn end_of_device_signatures_are_found() {
        let (head, mut tail) = blank();
        let n = tail.len();
        tail[n - 512..n - 504].copy_from_slice(b"EFI PART");
        assert!(probe(&head, &tail).iter().any(|f| f.contains("backup GPT")));
        let (head, mut tail) = blank();
        let len: u64 = 64 << 20;
        let md_pos = ((len - 8192) & !4095) - (len - PROBE_SPAN);
        tail[md_pos as usize..md_pos as usize + 4].copy_from_slice(&0xa92b_4efcu32.to_le_bytes());
        assert!(probe(&head, &tail).iter().any(|f| f.contains("RAID")));
    }

    #[test]
    fn each_kind_of_risk_takes_its_own_permission() {
        let risks = DeviceRisks {
            in_use: vec!["sdb1 is mounted on /data".into()],
            holds_data: vec!["it carries an ext2/ext3/ext4 file system".into()],
        };
        let allow = |destroy_data, even_if_mounted| {
            risks.judge(WritePermission {
                destroy_data,
                even_if_mounted,
            })
        };
        let e = allow(false, false).unwrap_err();
        assert!(
            e.contains("sdb1 is mounted on /data; it carries an ext2")
                && e.contains("--i-know-this-destroys-data --even-if-mounted"),
            "{e}"
        );
        let e = allow(true, false).unwrap_err();
        assert!(
            e.contains("does not cover that") && !e.contains("carries"),
            "{e}"
        );
        let e = allow(false, true).unwrap_err();
        assert!(e.starts_with("refusing to write: it carries"), "{e}");
        assert_eq!(
            allow(true, true).unwrap(),
            [
                "sdb1 is mounted on /data",
                "it carries an ext2/ext3/ext4 file system"
            ]
        );
        let stale = DeviceRisks {
            in_use: vec![],
            holds_data: vec!["it carries swap space".into()],
        };
        let lifted = stale.judge(WritePermission {
            destroy_data: true,
            even_if_mounted: false,
        });
        assert_eq!(lifted.unwrap(), ["it carries swap space"]);
        assert_eq!(
            DeviceRisks::default().judge(WritePermission::default()),
            Ok(vec![])
        );
    }
}
