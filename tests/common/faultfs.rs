//! A small in-memory FUSE file system that fails, shortens or stalls the
//! I/Os a test chooses, for testing fathom's error and stall paths through
//! the engines users run (`mount` needs /dev/fuse and fusermount3; see
//! [`FaultFs::mount`]).
//!
//! Directories of regular files (a tree of fathom's fits). Every open file is opened with
//! FOPEN_DIRECT_IO, so each read and write reaches this process (no page
//! cache in between), with or without O_DIRECT. Faults apply to byte ranges
//! of any file, once the plan is armed, so a test can lay out a file first.
#![allow(dead_code)]

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, WriteFlags,
};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// What to do to I/Os; ranges are bytes of a file.
#[derive(Debug, Default, Clone)]
pub struct Plan {
    /// Faults apply only while armed.
    pub armed: bool,
    /// Reads overlapping these fail with EIO.
    pub fail_reads: Vec<Range<u64>>,
    /// Writes overlapping these fail with EIO.
    pub fail_writes: Vec<Range<u64>>,
    /// Every write after this many (counted while armed) fails with EIO.
    pub fail_writes_after: Option<u64>,
    /// fsync fails with EIO.
    pub fail_fsync: bool,
    /// Reads and writes overlapping these transfer half of what was asked.
    pub short: Vec<Range<u64>>,
    /// The first I/O overlapping this range, after `stall_after` reads and
    /// writes (counted while armed: fathom reads a block or two of an
    /// existing file before it runs), waits this long before it is
    /// answered (once).
    pub stall: Option<(Range<u64>, Duration)>,
    pub stall_after: u64,
    /// Writes are acknowledged but not kept (a device that loses what it
    /// acknowledged); with `drop_writes_after`, only those after that many.
    pub drop_writes: bool,
    pub drop_writes_after: u64,
    /// Each file's creation waits this long before it is answered (a
    /// slow metadata server).
    pub create_delay: Option<Duration>,
}

/// What the file system saw while armed.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub reads: u64,
    pub writes: u64,
    pub fsyncs: u64,
    pub failed: u64,
    pub stalled: u64,
    pub dropped: u64,
    pub creates: u64,
}

/// A file or a directory.
struct Node {
    parent: u64,
    name: String,
    data: Vec<u8>,
    dir: bool,
}

#[derive(Default)]
struct State {
    plan: Plan,
    seen: Seen,
    /// ino -> node; the root is 1 (not in the map).
    files: BTreeMap<u64, Node>,
    next_ino: u64,
}

#[derive(Clone, Default)]
pub struct Control(Arc<Mutex<State>>);

impl Control {
    pub fn set(&self, plan: Plan) {
        let mut s = self.0.lock().unwrap();
        s.plan = plan;
        s.seen = Seen::default();
    }
    pub fn seen(&self) -> Seen {
        self.0.lock().unwrap().seen.clone()
    }
    /// The contents of file `name`, as stored.
    pub fn contents(&self, name: &str) -> Option<Vec<u8>> {
        let s = self.0.lock().unwrap();
        s.files
            .values()
            .find(|n| n.name == name && !n.dir)
            .map(|n| n.data.clone())
    }
}

struct FaultFs(Control);

/// A mounted fault file system; unmounted when dropped.
pub struct Mounted {
    pub dir: PathBuf,
    pub control: Control,
    _session: fuser::BackgroundSession,
    _tmp: tempfile::TempDir,
}

impl Mounted {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Whether a `fathom-faultfs` file system is mounted on `dir`.
pub fn is_mounted(dir: &Path) -> bool {
    let dir = dir.to_string_lossy().replace(' ', "\\040");
    std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|info| {
        info.lines().any(|l| {
            l.split_whitespace().nth(4) == Some(dir.as_str()) && l.contains(" fathom-faultfs ")
        })
    })
}

/// fuser's session unmounts once, and a file system still busy fails that
/// for good: a fathom just ended leaves its io_uring's registered files to
/// be released by the kernel after it exits. The mount would outlive the
/// test, dead ("Transport endpoint is not connected"). So unmount here,
/// also when the test panics: try for a while, then detach it lazily.
impl Drop for Mounted {
    fn drop(&mut self) {
        let c = std::ffi::CString::new(self.dir.as_os_str().as_encoded_bytes()).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while is_mounted(&self.dir) {
            // SAFETY: a plain system call on a NUL-terminated path.
            let flags = if std::time::Instant::now() < deadline {
                0
            } else {
                libc::MNT_DETACH
            };
            if unsafe { libc::umount2(c.as_ptr(), flags) } == 0 {
                break;
            }
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) {
                // Not root: the setuid helper unmounts what the user mounted.
                let _ = std::process::Command::new("fusermount3")
                    .args(["-u", "-z"])
                    .arg(&self.dir)
                    .status();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Mounts a fault file system in a new temporary directory, or says why it
/// cannot (no /dev/fuse, no fusermount3, not allowed): the caller skips.
pub fn mount() -> Result<Mounted, String> {
    if !Path::new("/dev/fuse").exists() {
        return Err("no /dev/fuse (the kernel has no FUSE, or the container hides it)".into());
    }
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path().join("mnt");
    std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
    let control = Control::default();
    control.0.lock().unwrap().next_ino = 2;
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("fathom-faultfs".into()),
        MountOption::DefaultPermissions,
    ];
    let session = fuser::spawn_mount(FaultFs(control.clone()), &dir, &config).map_err(|e| {
        format!("cannot mount a FUSE file system: {e} (fusermount3 from fuse3 is needed)")
    })?;
    Ok(Mounted {
        dir,
        control,
        _session: session,
        _tmp: tmp,
    })
}

/// Mounts, or prints why not and returns None: `let Some(fs) = skip_or_mount() else { return };`.
pub fn skip_or_mount() -> Option<Mounted> {
    match mount() {
        Ok(m) => Some(m),
        Err(why) => {
            eprintln!("SKIP: {why}");
            None
        }
    }
}

const TTL: Duration = Duration::from_secs(0);

fn attr(ino: u64, size: u64, dir: bool) -> FileAttr {
    let now = SystemTime::now();
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: now,
        mtime: now,
        ctime: now,
        crtime: now,
        kind: if dir {
            FileType::Directory
        } else {
            FileType::RegularFile
        },
        perm: if dir { 0o755 } else { 0o644 },
        nlink: if dir { 2 } else { 1 },
        uid: unsafe { libc::getuid() },
        gid: unsafe { libc::getgid() },
        rdev: 0,
        flags: 0,
        blksize: 4096,
    }
}

fn overlaps(ranges: &[Range<u64>], at: &Range<u64>) -> bool {
    ranges.iter().any(|r| r.start < at.end && at.start < r.end)
}

impl State {
    fn child(&self, parent: u64, name: &OsStr) -> Option<(u64, &Node)> {
        self.files
            .iter()
            .find(|(_, n)| n.parent == parent && OsStr::new(&n.name) == name)
            .map(|(&i, n)| (i, n))
    }

    fn is_dir(&self, ino: u64) -> bool {
        ino == 1 || self.files.get(&ino).is_some_and(|n| n.dir)
    }

    /// Removes `name` from directory `parent`: a file (unlink) or an empty
    /// directory (rmdir, `dir`).
    fn remove(&mut self, parent: u64, name: &OsStr, dir: bool) -> Result<(), Errno> {
        let (ino, is_dir) = self
            .child(parent, name)
            .map(|(i, n)| (i, n.dir))
            .ok_or(Errno::ENOENT)?;
        match (dir, is_dir) {
            (false, true) => Err(Errno::EISDIR),
            (true, false) => Err(Errno::ENOTDIR),
            (true, true) if self.files.values().any(|n| n.parent == ino) => Err(Errno::ENOTEMPTY),
            _ => {
                self.files.remove(&ino);
                Ok(())
            }
        }
    }

    /// A new node `name` in directory `parent`, or why not.
    fn add(&mut self, parent: u64, name: &OsStr, dir: bool) -> Result<u64, Errno> {
        if !self.is_dir(parent) {
            return Err(Errno::ENOENT);
        }
        if self.child(parent, name).is_some() {
            return Err(Errno::EEXIST);
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        let name = name.to_string_lossy().into_owned();
        self.files.insert(
            ino,
            Node {
                parent,
                name,
                data: Vec::new(),
                dir,
            },
        );
        Ok(ino)
    }
}

fn node_attr(ino: u64, n: &Node) -> FileAttr {
    attr(ino, n.data.len() as u64, n.dir)
}

impl FaultFs {
    /// The fault for an I/O of `range` (after a stall, if one is due):
    /// Err(errno), or the bytes to transfer.
    fn fault(&self, range: Range<u64>, write: bool) -> Result<usize, Errno> {
        let stall = {
            let mut s = self.0.0.lock().unwrap();
            if !s.plan.armed {
                return Ok((range.end - range.start) as usize);
            }
            if write {
                s.seen.writes += 1;
            } else {
                s.seen.reads += 1;
            }
            let ios = s.seen.reads + s.seen.writes;
            match s.plan.stall.clone() {
                Some((r, d))
                    if ios > s.plan.stall_after && overlaps(std::slice::from_ref(&r), &range) =>
                {
                    s.plan.stall = None;
                    s.seen.stalled += 1;
                    Some(d)
                }
                _ => None,
            }
        };
        if let Some(d) = stall {
            std::thread::sleep(d);
        }
        let mut s = self.0.0.lock().unwrap();
        let writes = s.seen.writes;
        let failing = if write {
            overlaps(&s.plan.fail_writes, &range)
                || s.plan.fail_writes_after.is_some_and(|n| writes > n)
        } else {
            overlaps(&s.plan.fail_reads, &range)
        };
        if failing {
            s.seen.failed += 1;
            return Err(Errno::EIO);
        }
        let len = (range.end - range.start) as usize;
        Ok(if overlaps(&s.plan.short, &range) {
            len / 2
        } else {
            len
        })
    }
}

impl Filesystem for FaultFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let s = self.0.0.lock().unwrap();
        match s.child(parent.0, name) {
            Some((ino, n)) => reply.entry(&TTL, &node_attr(ino, n), Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        if ino.0 == 1 {
            return reply.attr(&TTL, &attr(1, 0, true));
        }
        match self.0.0.lock().unwrap().files.get(&ino.0) {
            Some(n) => reply.attr(&TTL, &node_attr(ino.0, n)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if ino.0 == 1 {
            return reply.attr(&TTL, &attr(1, 0, true));
        }
        let mut s = self.0.0.lock().unwrap();
        match s.files.get_mut(&ino.0) {
            Some(n) => {
                if let Some(size) = size.filter(|_| !n.dir) {
                    n.data.resize(size as usize, 0);
                }
                reply.attr(&TTL, &node_attr(ino.0, n))
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        _mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let delay = {
            let mut s = self.0.0.lock().unwrap();
            if s.plan.armed {
                s.seen.creates += 1;
            }
            s.plan.create_delay.filter(|_| s.plan.armed)
        };
        if let Some(d) = delay {
            std::thread::sleep(d);
        }
        let ino = match self.0.0.lock().unwrap().add(parent.0, name, false) {
            Ok(ino) => ino,
            Err(e) => return reply.error(e),
        };
        reply.created(
            &TTL,
            &attr(ino, 0, false),
            Generation(0),
            FileHandle(0),
            FopenFlags::FOPEN_DIRECT_IO,
        );
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if self.0.0.lock().unwrap().files.contains_key(&ino.0) {
            reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let len = match self.fault(offset..offset + size as u64, false) {
            Ok(len) => len,
            Err(e) => return reply.error(e),
        };
        let s = self.0.0.lock().unwrap();
        match s.files.get(&ino.0) {
            Some(Node { data, .. }) => {
                let start = (offset as usize).min(data.len());
                let end = (start + len).min(data.len());
                reply.data(&data[start..end]);
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let len = match self.fault(offset..offset + data.len() as u64, true) {
            Ok(len) => len,
            Err(e) => return reply.error(e),
        };
        let mut s = self.0.0.lock().unwrap();
        let drop = s.plan.armed && s.plan.drop_writes && s.seen.writes > s.plan.drop_writes_after;
        if drop {
            s.seen.dropped += 1;
        }
        match s.files.get_mut(&ino.0) {
            Some(Node { data: contents, .. }) => {
                let end = offset as usize + len;
                if contents.len() < end {
                    contents.resize(end, 0);
                }
                if !drop {
                    contents[offset as usize..end].copy_from_slice(&data[..len]);
                }
                reply.written(len as u32);
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut s = self.0.0.lock().unwrap();
        if s.plan.armed {
            s.seen.fsyncs += 1;
            if s.plan.fail_fsync {
                s.seen.failed += 1;
                return reply.error(Errno::EIO);
            }
        }
        reply.ok();
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.0.0.lock().unwrap().remove(parent.0, name, false) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        _mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        let mut s = self.0.0.lock().unwrap();
        match s.add(parent.0, name, true) {
            Ok(ino) => reply.entry(&TTL, &attr(ino, 0, true), Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.0.0.lock().unwrap().remove(parent.0, name, true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let s = self.0.0.lock().unwrap();
        if !s.is_dir(ino.0) {
            return reply.error(Errno::ENOTDIR);
        }
        let mut entries = vec![
            (ino.0, FileType::Directory, ".".to_string()),
            (ino.0, FileType::Directory, "..".to_string()),
        ];
        entries.extend(
            s.files
                .iter()
                .filter(|(_, n)| n.parent == ino.0)
                .map(|(&i, n)| {
                    let kind = match n.dir {
                        true => FileType::Directory,
                        false => FileType::RegularFile,
                    };
                    (i, kind, n.name.clone())
                }),
        );
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(ino), (i + 1) as u64, kind, &name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // 4 GiB free in 4 KiB blocks: room for what the tests lay out.
        reply.statfs(1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 4096, 255, 4096);
    }
}
