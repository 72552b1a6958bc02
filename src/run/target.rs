//! Targets: what a path names (new file, existing file, directory, block
//! device), checking a workload against it before anything is created, laying
//! out new files with real data, opening it for I/O, and removing what fathom
//! created.

use crate::gate::device;
use crate::gate::{self, target::Access};
use crate::measure::facts::{self, TargetFacts, TargetKind};
use crate::spec::WorkloadSpec;
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use crate::util::units::{format_block_size, format_bytes};
use anyhow::{Context, bail};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fs::{self, File};
use std::io::{self, IsTerminal, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Size of a file fathom creates when no `--size` is given.
pub const DEFAULT_FILE_SIZE: u64 = 1 << 30;
const LAYOUT_CHUNK: usize = 1 << 20;

// Linux ioctls (linux/fs.h): device size in bytes and logical sector size.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
const BLKSSZGET: libc::c_ulong = 0x1268;

/// A target as checked against a workload; nothing has been created yet.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    /// As the user wrote it.
    pub name: String,
    pub path: PathBuf,
    pub kind: TargetKind,
    /// True when fathom creates the file (and so removes it afterwards).
    pub create: bool,
    /// Bytes to lay out, from `layout_from` to `file_len`, before the run.
    pub layout_from: u64,
    pub file_len: u64,
    pub offset: u64,
    /// Bytes of the region the workload uses, a multiple of bs.
    pub size: u64,
    pub logical_block_size: u64,
    /// What makes writing to this device destructive, lifted by
    /// `--i-know-this-destroys-data` / `--even-if-mounted`: said before the
    /// first write.
    pub overridden: Vec<String>,
    /// A file fathom kept earlier (`--keep`), known by its mark: growing it
    /// moves the mark to the new length.
    pub kept: bool,
    /// A file the null engine names but nobody made: the null engine does
    /// no I/O, so none is made (as fio's null engine makes none), and its
    /// descriptors are of /dev/null.
    pub absent: bool,
    /// The NVMe namespace's generic char node the engine sends its commands
    /// to (`--engine io_uring_cmd`); `path` is then the same namespace's
    /// block node, which every check, the sizes and the zones are read from.
    pub passthrough: Option<PathBuf>,
}

impl TargetPlan {
    /// The line that says where fathom lays out a file of its own in a
    /// directory it was given (the default target is the current one).
    pub fn own_file_notice(&self, keep: bool) -> Option<String> {
        let dir = self.path.parent()?;
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        // The null engine's file is named, never made.
        (self.create && !self.absent && Path::new(&self.name).is_dir()).then(|| {
            format!(
                "target {}: a file of fathom's own, {} of {}, {}",
                if self.name == "." {
                    "(none given: the current directory)".to_string()
                } else {
                    self.name.clone()
                },
                Path::new(&self.path)
                    .file_name()
                    .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
                crate::util::units::format_bytes(self.file_len),
                if keep {
                    format!("kept in {} afterwards (--keep)", dir.display())
                } else {
                    format!("in {}, removed afterwards", dir.display())
                }
            )
        })
    }

    /// The line that says what an override lifted, if it lifted anything.
    pub fn override_notice(&self) -> Option<String> {
        (!self.overridden.is_empty()).then(|| {
            format!(
                "target {}: writing anyway, as told: {}",
                self.name,
                self.overridden.join("; ")
            )
        })
    }
}

/// Checks `target` for `spec` and decides what must be created, without
/// touching the file system. `index` numbers fathom's own files in a directory.
pub fn inspect(spec: &WorkloadSpec, target: &str, index: usize) -> Result<TargetPlan, UsageError> {
    inspect_path(spec, target, Path::new(target), index, false)
}

/// As `inspect`, for a file fathom created earlier in this session: writing
/// to it needs no `--overwrite`.
pub fn inspect_own_file(
    spec: &WorkloadSpec,
    name: &str,
    path: &Path,
) -> Result<TargetPlan, UsageError> {
    inspect_path(spec, name, path, 0, true)
}

/// What a target's path names now: its kind, the file fathom would use
/// (its own in a directory), whether fathom creates it, its length, and
/// whether it is one fathom kept.
struct Found {
    kind: TargetKind,
    file_path: PathBuf,
    create: bool,
    current_len: u64,
    device_len: Option<u64>,
    lbs: u64,
    kept: bool,
    passthrough: Option<PathBuf>,
}

fn found(target: &str, path: &Path, index: usize) -> Result<Found, UsageError> {
    let err = |msg: String| UsageError(format!("target {target}: {msg}"));
    let path = path.to_path_buf();
    let mut kept = false;
    let metadata = match fs::metadata(&path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(err(e.to_string())),
    };

    let mut passthrough = None;
    let (kind, file_path, create, current_len, device_len, lbs) = match metadata {
        Some(m)
            if m.file_type().is_char_device()
                && crate::engine::io_uring_cmd::is_generic_node(m.rdev()) =>
        {
            let block = crate::engine::io_uring_cmd::block_node_of_char_node(&path)
                .map_err(|e| err(e.to_string()))?;
            let (len, lbs) = block_device_geometry(&block).map_err(|e| err(e.to_string()))?;
            passthrough = Some(path.clone());
            (TargetKind::BlockDevice, block, false, len, Some(len), lbs)
        }
        Some(m) if m.file_type().is_block_device() => {
            let (len, lbs) = block_device_geometry(&path).map_err(|e| err(e.to_string()))?;
            (
                TargetKind::BlockDevice,
                path.clone(),
                false,
                len,
                Some(len),
                lbs,
            )
        }
        Some(m) if m.is_dir() => {
            let file = path.join(format!("fathom-{}-{index}.tmp", std::process::id()));
            (
                TargetKind::File,
                file,
                true,
                0,
                None,
                logical_block_size_of(&m),
            )
        }
        Some(m) if m.is_file() => {
            kept = kept_by_fathom(&path, &m);
            (
                TargetKind::File,
                path.clone(),
                false,
                m.len(),
                None,
                logical_block_size_of(&m),
            )
        }
        Some(_) => {
            return Err(err(
                "not a regular file, directory, block device or NVMe generic char node".into(),
            ));
        }
        None => {
            if target.ends_with('/') {
                return Err(err("directory does not exist".into()));
            }
            if let Ok(link) = fs::read_link(&path) {
                return Err(err(format!(
                    "is a symbolic link to {}, which does not exist (fathom does not create a file through a link)",
                    link.display()
                )));
            }
            let parent = crate::util::directory_of(&path).to_path_buf();
            let parent_meta = fs::metadata(&parent)
                .map_err(|_| err(format!("directory {} does not exist", parent.display())))?;
            if !parent_meta.is_dir() {
                return Err(err(format!("{} is not a directory", parent.display())));
            }
            if gate::in_kernel_tree(&parent) {
                return Err(err(
                    "no such device (fathom does not create files under /dev: check the name, or wait for the device node to appear)".into(),
                ));
            }
            (
                TargetKind::File,
                path.clone(),
                true,
                0,
                None,
                logical_block_size_of(&parent_meta),
            )
        }
    };
    Ok(Found {
        kind,
        file_path,
        create,
        current_len,
        device_len,
        lbs,
        kept,
        passthrough,
    })
}

/// The region a workload uses on a target: its offset, size (whole blocks)
/// and end, checked against the device's end and O_DIRECT's alignment.
fn region(
    spec: &WorkloadSpec,
    t: &Found,
    err: &dyn Fn(String) -> UsageError,
) -> Result<(u64, u64, u64), UsageError> {
    let (device_len, current_len, lbs) = (t.device_len, t.current_len, t.lbs);
    let offset = spec.offset;
    let size = match (spec.size, device_len) {
        (Some(size), _) => size,
        (None, Some(len)) => len.checked_sub(offset).filter(|&s| s > 0).ok_or_else(|| {
            err(format!(
                "--offset {offset} is beyond the end of the device ({len} bytes)"
            ))
        })?,
        (None, None) if current_len > offset => current_len - offset,
        (None, None) => DEFAULT_FILE_SIZE,
    };
    if size < spec.bs {
        return Err(err(format!(
            "--size {} is smaller than --bs {}",
            format_bytes(size),
            format_bytes(spec.bs)
        )));
    }
    let size = size - size % spec.bs;
    let end = offset
        .checked_add(size)
        .ok_or_else(|| err("--offset + --size overflows".into()))?;
    if let Some(len) = device_len
        && end > len
    {
        return Err(err(format!(
            "--offset + --size ({}) is beyond the end of the device ({})",
            format_bytes(end),
            format_bytes(len)
        )));
    }
    if spec.direct {
        for (flag, value) in [("--bs", spec.bs), ("--offset", offset)] {
            if value % lbs != 0 {
                return Err(err(format!(
                    "{flag} {value} is not a multiple of the logical block size {lbs} (O_DIRECT needs it; or use --buffered)"
                )));
            }
        }
    }
    Ok((offset, size, end))
}

fn inspect_path(
    spec: &WorkloadSpec,
    target: &str,
    path: &Path,
    index: usize,
    mut own_file: bool,
) -> Result<TargetPlan, UsageError> {
    let err = |msg: String| UsageError(format!("target {target}: {msg}"));
    let path = path.to_path_buf();
    let t = found(target, &path, index)?;
    own_file |= t.kept;
    let (offset, size, end) = region(spec, &t, &err)?;
    let Found {
        kind,
        file_path,
        create,
        current_len,
        device_len,
        lbs,
        kept,
        passthrough,
    } = t;
    check_passthrough(spec, kind, &file_path, passthrough.as_deref()).map_err(err)?;

    let does_io = spec.engine.caps().does_io;
    if kind == TargetKind::BlockDevice && !spec.engine.caps().block_devices {
        return Err(err(format!(
            "--engine {} works on files, not block devices",
            spec.engine
        )));
    }
    let zones = match kind {
        TargetKind::BlockDevice => facts::zoned_of(&file_path),
        TargetKind::File => None,
    };
    check_zones(spec, zones.as_ref(), offset, end).map_err(err)?;
    let (layout_from, file_len) = match kind {
        TargetKind::BlockDevice => (0, 0),
        // An engine that does no I/O reads no block: nothing to lay out.
        TargetKind::File if !does_io => (current_len, current_len),
        // Only the part of the region beyond the current end is new; data
        // already in the file, inside or outside the region, is left alone.
        TargetKind::File => (current_len, current_len.max(end)),
    };
    let absent = kind == TargetKind::File && create && !does_io;
    // Growing a file is writing to it, whatever the workload does.
    if kind == TargetKind::File && !create && !own_file && !spec.overwrite && file_len > current_len
    {
        let fits = current_len.saturating_sub(offset) / spec.bs * spec.bs;
        let instead = match fits {
            0 => "use an --offset inside it".to_string(),
            _ => format!("use --size {} or less", format_block_size(fits)),
        };
        return Err(err(format!(
            "the file is {} and the workload's region ends at {}: fathom does not extend a file it did not create ({instead}, or pass --overwrite to let it grow the file)",
            format_bytes(current_len),
            format_bytes(end),
        )));
    }
    if kind == TargetKind::File && file_len > layout_from {
        let free = free_bytes(crate::util::directory_of(&file_path));
        if let Some(free) = free
            && free < file_len - layout_from
        {
            return Err(err(format!(
                "needs {} of space to lay out, only {} free",
                format_bytes(file_len - layout_from),
                format_bytes(free)
            )));
        }
    }

    if spec.hipri {
        check_polls(kind, &file_path).map_err(err)?;
    }
    if spec.uncached || spec.atomic {
        check_io_flags(spec, kind, &file_path).map_err(err)?;
    }
    let mut overridden = Vec::new();
    if spec.modifies_target() && does_io {
        match kind {
            TargetKind::BlockDevice => {
                overridden = device::risks_of_writing(&file_path, device_len.unwrap_or(0))
                    .map_err(|e| err(format!("cannot check the device before writing: {e}")))?
                    .judge(spec.write_permission())
                    .map_err(err)?;
            }
            TargetKind::File if !create && !own_file && !spec.overwrite => {
                return Err(err(
                    "refusing to write to an existing file fathom did not create (pass --overwrite to write anyway)".into(),
                ));
            }
            _ => {}
        }
        // A file that backs a loop device is that device, whoever made the
        // file and whatever its keep mark says: mkfs and mount leave both.
        if kind == TargetKind::File && !create {
            overridden = device::risks_of_writing_backing_file(&file_path)
                .map_err(|e| err(format!("cannot check the loop devices it backs: {e}")))?
                .judge(spec.write_permission())
                .map_err(err)?;
        }
    }

    // After the safety rules: the probe of an existing file opens it for
    // writing.
    // A trim of a zoned device under zbd is a zone reset, not a discard.
    if spec.rw.trims() && !spec.zoned.is_zbd() {
        check_discards(kind, &file_path).map_err(|e| err(format!("--rw {}: {e}", spec.rw)))?;
    }

    Ok(TargetPlan {
        name: target.to_string(),
        path: file_path,
        kind,
        create,
        layout_from,
        file_len,
        offset,
        size,
        logical_block_size: lbs,
        overridden,
        kept,
        absent,
        passthrough,
    })
}

/// An NVMe generic char node takes NVMe commands (`--engine
/// io_uring_cmd`), and that engine takes nothing else: one line naming the
/// node to use instead.
fn check_passthrough(
    spec: &WorkloadSpec,
    kind: TargetKind,
    file_path: &Path,
    passthrough: Option<&Path>,
) -> Result<(), String> {
    let engine = spec.engine;
    match (engine.caps().nvme_passthrough, passthrough, kind) {
        (false, Some(_), _) => Err(format!(
            "is an NVMe namespace's generic char node, which takes NVMe commands: use --engine io_uring_cmd, or name its block node {}",
            file_path.display()
        )),
        (true, None, TargetKind::BlockDevice) => Err(format!(
            "--engine {engine} sends NVMe commands to a namespace's generic char node, not its block node: name {}",
            crate::engine::io_uring_cmd::char_node_of_block_node(file_path).map_or_else(
                || "/dev/ngXnY (this device has none: it is not an NVMe namespace)".to_string(),
                |node| node.display().to_string()
            )
        )),
        (true, None, TargetKind::File) => Err(format!(
            "--engine {engine} sends NVMe commands to a namespace's generic char node (/dev/ngXnY), not to a file"
        )),
        (true, Some(_), _) => crate::engine::io_uring_cmd::check_kernel(
            crate::gate::read::host_text("/proc/sys/kernel/osrelease").as_deref(),
        )
        .map_err(|e| format!("--engine {engine}: {e}")),
        (false, None, _) => Ok(()),
    }
}

/// `--hipri` polls the device for completions: the disk under the target
/// must have poll queues (`queue/io_poll`), or every I/O would fail.
fn check_polls(kind: TargetKind, file_path: &Path) -> Result<(), String> {
    let probe = match (file_path.exists(), file_path.parent()) {
        (true, _) => file_path,
        (false, Some(dir)) if !dir.as_os_str().is_empty() => dir,
        (false, _) => Path::new("."),
    };
    let disk = fs::metadata(probe).ok().and_then(|m| {
        let dev = match kind {
            TargetKind::BlockDevice => m.rdev(),
            TargetKind::File => m.dev(),
        };
        facts::device_facts(libc::major(dev), libc::minor(dev))
    });
    match disk {
        Some(d) if d.polls == Some(true) => Ok(()),
        Some(d) => Err(format!(
            "--hipri: {} does not complete I/O by polling (its queue/io_poll is 0; NVMe polls with poll queues: the nvme.poll_queues module parameter)",
            d.name
        )),
        None => Err(
            "--hipri: no block device under it to poll (tmpfs, a network or a stacked file system)"
                .into(),
        ),
    }
}

/// `--uncached` and `--atomic` are flags the kernel refuses per I/O where
/// the file system or device lacks them (every I/O would fail): asked
/// once, of the target when it exists (opened only to read) or of an
/// unnamed temporary file beside it. Where neither can be opened, the
/// first I/O says what failed.
fn check_io_flags(spec: &WorkloadSpec, kind: TargetKind, file_path: &Path) -> Result<(), String> {
    use crate::engine::rw_flags;
    let dir = crate::util::directory_of(file_path);
    let probe = match file_path.exists() {
        true => gate::target::open(file_path, Access::default()),
        false => gate::target::unnamed_in(dir),
    };
    let Ok(probe) = probe else {
        return Ok(());
    };
    let under = || match kind {
        TargetKind::BlockDevice => file_path.display().to_string(),
        TargetKind::File => {
            facts::mount_of(dir).map_or_else(|| "its file system".to_string(), |(t, _)| t)
        }
    };
    if spec.uncached {
        rw_flags::takes_uncached(&probe).map_err(|e| match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) => format!(
                "--uncached: {} does not drop pages after the I/O (RWF_DONTCACHE needs Linux 6.14 and a file system that takes it: ext4, xfs, btrfs, a block device)",
                under()
            ),
            _ => format!("--uncached: a read with RWF_DONTCACHE failed ({e})"),
        })?;
    }
    if spec.atomic {
        let unit = rw_flags::atomic_write_unit(&probe)
            .map_err(|e| format!("--atomic: statx of its atomic write unit failed ({e})"))?;
        match unit {
            None => {
                return Err(format!(
                    "--atomic: {} reports no atomic write unit (statx STATX_WRITE_ATOMIC: 0), so every atomic write would fail",
                    under()
                ));
            }
            Some(unit) if !unit.takes(spec.bs) => {
                return Err(format!(
                    "--atomic: --bs {} is not a power of two from {} to {}, the atomic write unit it reports",
                    format_block_size(spec.bs),
                    format_block_size(u64::from(unit.min)),
                    format_block_size(u64::from(unit.max))
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Trims discard blocks: a device must take discards (`discard_max_bytes`
/// above 0), and a file system must punch holes. A file system is asked
/// by punching past the end of an unnamed temporary file (O_TMPFILE), or,
/// where it cannot make one, of the target itself when it exists: nothing
/// is created or changed. Where neither can be asked, the first trim says
/// what failed.
fn check_discards(kind: TargetKind, file_path: &Path) -> Result<(), String> {
    match kind {
        TargetKind::BlockDevice => {
            let rdev = fs::metadata(file_path).map_err(|e| e.to_string())?.rdev();
            match facts::device_facts(libc::major(rdev), libc::minor(rdev)) {
                Some(d) if d.discards == Some(false) => Err(format!(
                    "{} does not take discards (its queue/discard_max_bytes is 0)",
                    d.name
                )),
                _ => Ok(()),
            }
        }
        TargetKind::File => {
            let dir = match file_path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let existing = Access {
                write: true,
                ..Access::default()
            };
            let Some(probe) = gate::target::unnamed_in(dir)
                .or_else(|_| gate::target::open(file_path, existing))
                .ok()
            else {
                return Ok(());
            };
            let end = probe.metadata().map_or(0, |m| m.len()) as libc::off_t;
            let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
            // SAFETY: a plain syscall on a descriptor this function owns.
            if unsafe { libc::fallocate(probe.as_raw_fd(), mode, end, 4096) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            let fs = facts::mount_of(dir).map_or_else(|| "its file system".into(), |(t, _)| t);
            Err(format!("{fs} under it cannot punch holes in a file ({e})"))
        }
    }
}

/// A workload's fit to a zoned device, or to one that is not: writes to
/// a host-managed device go zone by zone only with `--zonemode zbd` (else
/// each write off its zone's write pointer fails mid-run with EIO), and
/// `--zonemode zbd` needs zones, whole ones, of the size it expects.
fn check_zones(
    spec: &WorkloadSpec,
    zones: Option<&facts::ZonedFacts>,
    offset: u64,
    end: u64,
) -> Result<(), String> {
    let writes = spec.rw.modifies(spec.rwmix_read);
    let Some(zones) = zones else {
        return match spec.zoned.is_zbd() {
            true => Err("--zonemode zbd needs a zoned block device (host-managed or host-aware); this target has no zones".into()),
            false => Ok(()),
        };
    };
    if !spec.zoned.is_zbd() {
        return match writes && zones.model == facts::ZoneModel::HostManaged {
            true => Err(format!(
                "a host-managed zoned device ({}): each write must land at its zone's write pointer; write it zone by zone with --zonemode zbd (fio's zonemode=zbd); reads run as they are",
                zones.describe()
            )),
            false => Ok(()),
        };
    }
    let zone = zones.zone_bytes.max(1);
    if let Some(expected) = spec.zoned.zone_bytes
        && expected != zone
    {
        return Err(format!(
            "zone size {}: the device's zones are {}",
            format_block_size(expected),
            format_block_size(zone)
        ));
    }
    if !offset.is_multiple_of(zone) || !end.is_multiple_of(zone) {
        return Err(format!(
            "--zonemode zbd: the region must start and end on zone boundaries ({} each)",
            format_block_size(zone)
        ));
    }
    let largest = spec.bssplit.as_ref().map_or(spec.bs, |s| s.largest());
    if largest > zone {
        return Err(format!(
            "--zonemode zbd: a block of {} is larger than a zone ({})",
            format_block_size(largest),
            format_block_size(zone)
        ));
    }
    if spec.rw.trims() && zones.model != facts::ZoneModel::HostManaged {
        return Err("--zonemode zbd: trims reset zones on a host-managed device; this one is host-aware (trim it without --zonemode zbd)".into());
    }
    if spec.verify != crate::spec::VerifyMode::Off && zone % spec.bs != 0 {
        return Err(format!(
            "--verify with --zonemode zbd checks whole blocks of whole zones: --bs {} does not divide the zone size {}",
            format_block_size(spec.bs),
            format_block_size(zone)
        ));
    }
    if spec.rw.trims() && spec.bs != zone {
        return Err(format!(
            "--zonemode zbd: a trim of a zoned device resets a whole zone: give --bs {} (the zone size)",
            format_block_size(zone)
        ));
    }
    Ok(())
}

/// A target ready for I/O. Drops remove the file if fathom created it and
/// the path still names it.
#[derive(Debug)]
pub struct PreparedTarget {
    pub plan: TargetPlan,
    pub facts: TargetFacts,
    owned: Option<CreatedFile>,
}

impl PreparedTarget {
    /// The same target for a run to use, owning nothing: the session's
    /// first copy removes what fathom made.
    pub fn shared(&self) -> PreparedTarget {
        PreparedTarget {
            plan: self.plan.clone(),
            facts: self.facts.clone(),
            owned: None,
        }
    }
}

/// A file fathom created, known by its inode rather than its path: the path
/// may come to name someone else's file (replaced during the run), and
/// fathom's file may move (renamed during the run).
#[derive(Debug)]
struct CreatedFile {
    /// Kept open so that, if the path no longer names it, /proc can say
    /// where it went.
    file: File,
    dev: u64,
    ino: u64,
}

impl CreatedFile {
    fn new(file: &File) -> io::Result<CreatedFile> {
        let meta = file.metadata()?;
        Ok(CreatedFile {
            file: file.try_clone()?,
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    /// Removes `path` if it still names this file; otherwise leaves it
    /// alone and says where fathom's file went.
    fn remove(self, path: &Path) {
        if gate::target::remove_if_still(path, self.dev, self.ino) {
            return;
        }
        let now = fs::read_link(format!("/proc/self/fd/{}", self.file.as_raw_fd()));
        let whereabouts = match now {
            Ok(p) if !p.to_string_lossy().ends_with(" (deleted)") => format!(
                "; fathom's file is now {} (remove it when done with it)",
                p.display()
            ),
            _ => String::new(),
        };
        eprintln!(
            "fathom: {} no longer names the file fathom created: left it alone{whereabouts}",
            path.display()
        );
    }
}

impl PreparedTarget {
    /// Opens a descriptor for one worker.
    /// Opens the file the engine does its I/O through: the target, or the
    /// NVMe generic char node of a passthrough engine (opened without
    /// O_DIRECT, which a char node refuses: its commands bypass the page
    /// cache anyway).
    pub fn open_for_engine(&self, direct: bool, write: bool) -> anyhow::Result<File> {
        let Some(node) = &self.plan.passthrough else {
            return self.open(direct, write);
        };
        let access = Access {
            write,
            ..Access::default()
        };
        gate::target::open(node, access).with_context(|| format!("cannot open {}", node.display()))
    }

    pub fn open(&self, direct: bool, write: bool) -> anyhow::Result<File> {
        if self.plan.absent {
            return gate::target::dev_null(write).context("cannot open /dev/null");
        }
        let access = Access {
            write,
            flags: if direct { libc::O_DIRECT } else { 0 },
            ..Access::default()
        };
        gate::target::open(&self.plan.path, access).map_err(|e| {
            if direct && e.raw_os_error() == Some(libc::EINVAL) {
                anyhow::Error::new(UsageError(format!(
                    "target {}: its file system does not support O_DIRECT; use --buffered",
                    self.plan.name
                )))
            } else {
                anyhow::Error::new(e).context(format!("cannot open {}", self.plan.path.display()))
            }
        })
    }
}

/// What a path or descriptor names: device, inode and device number. A
/// path names what a run opened while its identity is the descriptor's;
/// the file removed or replaced, or the device node gone, it is not.
pub fn identity(meta: &fs::Metadata) -> (u64, u64, u64) {
    (meta.dev(), meta.ino(), meta.rdev())
}

impl Drop for PreparedTarget {
    fn drop(&mut self) {
        if let Some(owned) = self.owned.take() {
            owned.remove(&self.plan.path);
        }
    }
}

/// Creates and lays out what `plan` needs.
pub fn prepare(plan: TargetPlan, keep: bool, stop: &StopFlag) -> anyhow::Result<PreparedTarget> {
    let mut prepared = PreparedTarget {
        facts: TargetFacts {
            kind: plan.kind,
            path: plan.path.display().to_string(),
            filesystem: None,
            mount_point: None,
            device: None,
            partition: false,
        },
        owned: None,
        plan,
    };
    if prepared.plan.file_len > prepared.plan.layout_from {
        let file = open_for_layout(&prepared.plan)?;
        // Only now is the file fathom's to remove, even if laying it out
        // fails below.
        if (prepared.plan.create && keep) || prepared.plan.kept {
            mark_kept(&file, prepared.plan.file_len);
        }
        if prepared.plan.create && !keep {
            prepared.owned = Some(
                CreatedFile::new(&file)
                    .with_context(|| format!("cannot stat {}", prepared.plan.path.display()))?,
            );
        }
        lay_out(file, &prepared.plan, stop)?;
    }
    prepared.facts = target_facts(&prepared.plan)?;
    Ok(prepared)
}

/// The extended attribute that marks a file fathom created and kept
/// (`--keep`): a later run recognises the file as fathom's own and writes to
/// it without `--overwrite`. The mark names the very file it was set on
/// (inode and birth time) and its length, so a mark copied with the file
/// (`cp -a`, `rsync -X`, `tar --xattrs`) or written by hand with only a
/// length proves nothing.
const KEPT_XATTR: &std::ffi::CStr = c"user.fathom.kept";

/// The mark's value for a file of `len` bytes with metadata `meta`.
fn kept_mark(meta: &fs::Metadata, len: u64) -> String {
    let born = meta
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("fathom-kept:2:ino={}:born={born}:len={len}", meta.ino())
}

/// Marks a kept file as fathom's. A file system without user extended
/// attributes keeps no mark, and the file is then treated as anyone's.
fn mark_kept(file: &File, len: u64) {
    use std::os::fd::AsRawFd;
    let Ok(meta) = file.metadata() else { return };
    let value = kept_mark(&meta, len);
    // SAFETY: the name is NUL-terminated and the value a valid buffer of
    // its length.
    unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            KEPT_XATTR.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        );
    }
}

/// Whether `path` is a file fathom created and kept: the mark on it names
/// this inode, born when it was, at the length it was laid out with (a file
/// that has since grown or shrunk was put to other use). Where the file
/// system keeps no birth time (ext4 with 128-byte inodes), the inode alone
/// proves nothing (a copy made with `cp -a` onto the same inode carries
/// the mark), so no file there is taken for a kept one.
fn kept_by_fathom(path: &Path, meta: &fs::Metadata) -> bool {
    if meta.created().is_err() {
        return false;
    }
    use std::os::unix::ffi::OsStrExt;
    let Ok(name) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    let mut value = [0u8; 128];
    // SAFETY: both strings are NUL-terminated, the buffer valid for its
    // length.
    let n = unsafe {
        libc::getxattr(
            name.as_ptr(),
            KEPT_XATTR.as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    n > 0 && value[..n as usize] == *kept_mark(meta, meta.len()).as_bytes()
}

fn open_for_layout(plan: &TargetPlan) -> anyhow::Result<File> {
    // A file fathom creates must not exist yet: one that appeared since the
    // checks belongs to someone else, and is neither overwritten nor, later,
    // removed.
    let access = Access {
        write: true,
        create_new: plan.create,
        ..Access::default()
    };
    gate::target::open(&plan.path, access).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists if plan.create => UsageError(format!(
                "target {}: cannot create {}: a file of that name appeared after the checks (someone else's: left alone)",
                plan.name,
                plan.path.display()
            ))
            .into(),
            _ if plan.create => anyhow::Error::new(e)
                .context(format!("cannot create {}", plan.path.display())),
            _ => anyhow::Error::new(e).context(format!("cannot open {}", plan.path.display())),
        })
}

/// Fills `[layout_from, file_len)` with random data, so reads hit real blocks
/// (not holes a file system answers without touching the disk), then drops
/// the file from the page cache.
fn lay_out(mut file: File, plan: &TargetPlan, stop: &StopFlag) -> anyhow::Result<()> {
    let show = io::stderr().is_terminal();
    if show {
        eprint!(
            "laying out {} in {} ...",
            format_bytes(plan.file_len - plan.layout_from),
            plan.path.display()
        );
    }
    let mut chunk = vec![0u8; LAYOUT_CHUNK];
    // Fresh random bytes for every chunk: nothing repeats, so a device can
    // neither compress nor deduplicate the layout at any granularity. A fast
    // generator keeps this far cheaper than the writes (GB/s per core).
    let mut rng = SmallRng::from_rng(&mut rand::rng());
    let mut pos = plan.layout_from;
    while pos < plan.file_len {
        if stop.is_set() {
            bail!(crate::util::stop::Interrupted);
        }
        let n = (plan.file_len - pos).min(LAYOUT_CHUNK as u64) as usize;
        rng.fill_bytes(&mut chunk[..n]);
        std::os::unix::fs::FileExt::write_all_at(&file, &chunk[..n], pos)
            .with_context(|| format!("cannot lay out {}", plan.path.display()))?;
        pos += n as u64;
    }
    file.flush()?;
    file.sync_data()
        .with_context(|| format!("cannot sync {}", plan.path.display()))?;
    drop_cached(&file);
    if show {
        eprintln!(" done");
    }
    Ok(())
}

fn target_facts(plan: &TargetPlan) -> anyhow::Result<TargetFacts> {
    let stated = match plan.absent {
        true => crate::util::directory_of(&plan.path),
        false => plan.path.as_path(),
    };
    let meta = fs::metadata(stated).with_context(|| format!("cannot stat {}", stated.display()))?;
    let (filesystem, mount_point, device) = match plan.kind {
        TargetKind::BlockDevice => (
            None,
            None,
            facts::device_facts(libc::major(meta.rdev()), libc::minor(meta.rdev())),
        ),
        TargetKind::File => {
            let mount = facts::mount_of(&plan.path);
            (
                mount.as_ref().map(|(fs, _)| fs.clone()),
                mount.map(|(_, mp)| mp),
                facts::device_facts(libc::major(meta.dev()), libc::minor(meta.dev())),
            )
        }
    };
    Ok(TargetFacts {
        kind: plan.kind,
        path: plan.path.display().to_string(),
        filesystem,
        mount_point,
        device,
        partition: plan.kind == TargetKind::BlockDevice
            && facts::is_partition(libc::major(meta.rdev()), libc::minor(meta.rdev())),
    })
}

fn block_device_geometry(path: &Path) -> io::Result<(u64, u64)> {
    let file = gate::target::open(path, Access::default())?;
    let mut size: u64 = 0;
    let mut sector: libc::c_int = 0;
    // SAFETY: both ioctls write one integer of the given type.
    unsafe {
        if libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size) != 0
            || libc::ioctl(file.as_raw_fd(), BLKSSZGET as _, &mut sector) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((size, sector.max(512) as u64))
}

/// Logical block size of the disk holding a file; 512 when unknown (tmpfs,
/// network file systems), the smallest any device uses.
fn logical_block_size_of(meta: &fs::Metadata) -> u64 {
    facts::device_facts(libc::major(meta.dev()), libc::minor(meta.dev()))
        .map_or(512, |d| d.logical_block_size)
}

/// Asks the kernel to drop a (synced) file's pages from the page cache, so
/// that the next reads come from the device.
pub(crate) fn drop_cached(file: &File) {
    // SAFETY: plain advisory call on an open descriptor.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}

pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
    crate::util::space::of(dir).map(|s| s.free_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_appears_after_the_checks_is_neither_overwritten_nor_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let name = path.to_str().unwrap().to_string();
        let mut spec = crate::spec::WorkloadSpec::defaults(vec![name.clone()]);
        spec.size = Some(1 << 20);
        let plan = inspect(&spec, &name, 0).unwrap();
        assert!(plan.create);
        // Someone else creates it between the check and the layout.
        std::fs::write(&path, b"not fathom's").unwrap();
        let e = prepare(plan, false, &StopFlag::default()).unwrap_err();
        assert!(
            format!("{e:#}").contains("appeared after the checks"),
            "{e:#}"
        );
        assert!(
            e.downcast_ref::<UsageError>().is_some(),
            "a refusal: exit 2"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"not fathom's");
    }

    #[test]
    fn a_created_file_is_removed_by_inode_not_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let name = path.to_str().unwrap().to_string();
        let mut spec = crate::spec::WorkloadSpec::defaults(vec![name.clone()]);
        spec.size = Some(64 << 10);
        // Removed when the path still names it.
        let prepared = prepare(
            inspect(&spec, &name, 0).unwrap(),
            false,
            &StopFlag::default(),
        );
        drop(prepared.unwrap());
        assert!(!path.exists());
        // Left alone when the path names another file by then.
        let prepared = prepare(
            inspect(&spec, &name, 0).unwrap(),
            false,
            &StopFlag::default(),
        );
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"theirs").unwrap();
        drop(prepared.unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"theirs");
        // Kept with --keep.
        std::fs::remove_file(&path).unwrap();
        drop(
            prepare(
                inspect(&spec, &name, 0).unwrap(),
                true,
                &StopFlag::default(),
            )
            .unwrap(),
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 64 << 10);
    }
}
