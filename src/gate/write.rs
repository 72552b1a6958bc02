//! Files fathom writes: results and reports, `--live`, fio's `--output`
//! and logs, the history, recordings, ack logs, man pages. One set of
//! refusals for all of them, checked before anything runs and again at
//! the moment of writing:
//!
//! - never a block device, a socket or a directory, and never a path
//!   under /dev, /proc or /sys unless it is a stream;
//! - a stream (a character device, a FIFO, `/dev/stdout`) only for the
//!   kinds that may be one, and a FIFO only with a reader (opened without
//!   blocking, so no open waits forever);
//! - never a file this run reads or runs on ([`super::claims`]), whatever
//!   path, link or bind mount names it;
//! - an existing regular file only when it is of the kind being written
//!   (a fathom result, a fathom history, ...), empty, or the user said so;
//! - a whole file is written beside its path and renamed over, so nothing
//!   is truncated before there is something to write and a reader never
//!   sees half of it.

use crate::util::error::UsageError;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A kind of file fathom writes.
#[derive(Clone, Copy)]
pub struct Output {
    /// The flag that names it in messages: "--output", "--live".
    pub flag: &'static str,
    /// What it is, in a message's words: "a fathom result".
    pub what: &'static str,
    /// Whether it may be a stream (a terminal, a pipe, a FIFO with a
    /// reader, `/dev/stdout`), written in place.
    pub streams: bool,
    /// Whether an existing regular file is one of this kind, so that it
    /// may be replaced without being told.
    pub ours: fn(&Path) -> bool,
    /// How the user says a file of another kind may be replaced; None
    /// when nothing may replace it.
    pub overwrite_hint: Option<&'static str>,
}

impl Output {
    /// The refusal of `path` as this kind, one line naming the flag.
    fn refusal(&self, path: &Path, why: String) -> UsageError {
        UsageError(format!("{} {}: {why}", self.flag, path.display()))
    }
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.flag, self.what)
    }
}

/// Where a path of some kind is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A regular file, new or replaced whole: its real path (a link is
    /// followed to the file it names, which is what is replaced).
    File(PathBuf),
    /// A stream, written in place and never renamed over.
    Stream,
}

/// Checks, before anything runs, that a file of kind `out` may be written
/// at `path`; `overwrite`: the user allowed replacing a file of another
/// kind. A stream is opened and held open until it is written, so that a
/// FIFO's reader does not see its end early.
pub fn check(path: &Path, out: Output, overwrite: bool) -> Result<Place, UsageError> {
    let err = |m: String| out.refusal(path, m);
    let place = place(path, out, overwrite).map_err(err)?;
    if let (Place::File(real), true) = (&place, overwrite) {
        approve(real);
    }
    match &place {
        Place::Stream => {
            let file = open_stream(path).map_err(|e| err(e.to_string()))?;
            hold_open(path, file);
        }
        Place::File(real) => {
            let dir = crate::util::directory_of(real);
            if !dir.is_dir() {
                return Err(err(format!("directory {} does not exist", dir.display())));
            }
            probe_writable(real).map_err(err)?;
        }
    }
    Ok(place)
}

/// Writes `contents` whole to `path`: a regular file through a temporary
/// file beside it and a rename; a stream in place. The refusals are
/// checked again first (a target made since the check may be this file;
/// a file of another kind is replaced only where [`check`] was told it
/// may be). An error names the path; the temporary file of a failed write
/// (a full file system) is removed.
pub fn replace(path: &Path, out: Output, contents: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let cannot = || format!("cannot write {}", path.display());
    let place = place(path, out, false).map_err(|m| out.refusal(path, m))?;
    match place {
        Place::Stream => held_stream(path)
            .map_or_else(|| open_stream(path), Ok)
            .and_then(|mut stream| {
                stream.write_all(contents)?;
                stream.flush()
            })
            .with_context(cannot),
        Place::File(real) => {
            let mut beside = Beside::create(&real).with_context(cannot)?;
            beside
                .file
                .write_all(contents)
                .and_then(|()| beside.commit())
                .with_context(cannot)
        }
    }
}

/// A file written as it goes (a recording, `--live` lines): made beside
/// `path` and renamed over it at its first write, so that a run refused or
/// stopped before it had anything to write replaces nothing. Dropped
/// unwritten, it leaves no trace.
pub struct Growing {
    state: GrowingState,
}

enum GrowingState {
    Pending(Beside),
    Named(File),
    Stream(File),
}

impl Growing {
    /// Opens a file of kind `out` to be written as it goes; the same
    /// refusals as [`check`].
    pub fn create(path: &Path, out: Output, overwrite: bool) -> Result<Growing, UsageError> {
        let err = |m: String| out.refusal(path, m);
        let state = match check(path, out, overwrite)? {
            Place::Stream => GrowingState::Stream(
                held_stream(path)
                    .map_or_else(|| open_stream(path), Ok)
                    .map_err(|e| err(e.to_string()))?,
            ),
            Place::File(real) => {
                GrowingState::Pending(Beside::create(&real).map_err(|e| err(e.to_string()))?)
            }
        };
        Ok(Growing { state })
    }
}

impl Growing {
    /// Flushes what was written to the device (nothing when nothing was
    /// written).
    pub fn sync_all(&self) -> io::Result<()> {
        match &self.state {
            GrowingState::Named(f) => f.sync_all(),
            GrowingState::Stream(_) | GrowingState::Pending(_) => Ok(()),
        }
    }
}

impl Write for Growing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let GrowingState::Pending(beside) = &mut self.state {
            beside.file.sync_data().ok();
            let file = beside.file.try_clone()?;
            beside.rename()?;
            self.state = GrowingState::Named(file);
        }
        match &mut self.state {
            GrowingState::Named(f) | GrowingState::Stream(f) => f.write(buf),
            GrowingState::Pending(_) => unreachable!("named above"),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.state {
            GrowingState::Named(f) | GrowingState::Stream(f) => f.flush(),
            GrowingState::Pending(_) => Ok(()),
        }
    }
}

/// Removes a file of kind `out` this run wrote and must take back (a
/// result started by a command that then found its input bad): only a
/// regular file of that kind, never a stream or anyone else's.
pub fn discard(path: &Path, out: Output) {
    if let Ok(Place::File(real)) = place(path, out, false)
        && (out.ours)(&real)
    {
        let _ = fs::remove_file(&real);
    }
}

/// Opens a log that grows across runs (an ack log): an existing file of
/// kind `out` is appended to, a new one made; `O_DSYNC` when `durable`.
/// Never a stream, a device, a claimed file or a file of another kind.
pub fn append(path: &Path, out: Output, durable: bool) -> Result<File, UsageError> {
    let err = |m: String| out.refusal(path, m);
    let Place::File(real) = place(
        path,
        Output {
            streams: false,
            ..out
        },
        false,
    )
    .map_err(err)?
    else {
        unreachable!("streams are refused above");
    };
    let mut options = OpenOptions::new();
    options.append(true).create(true).custom_flags(
        libc::O_NONBLOCK | libc::O_NOFOLLOW | if durable { libc::O_DSYNC } else { 0 },
    );
    let file = options.open(&real).map_err(|e| err(e.to_string()))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(err("is not a regular file".into()));
    }
    super::read::blocking(&file);
    Ok(file)
}

/// Makes the missing directories of `dir` (for `--live`, `--history`),
/// never under /dev, /proc or /sys.
pub fn make_dirs(dir: &Path, flag: &str) -> Result<(), UsageError> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    if super::in_kernel_tree(dir) {
        return Err(UsageError(format!(
            "{flag}: {}: fathom makes no directory under /dev, /proc or /sys",
            dir.display()
        )));
    }
    fs::create_dir_all(dir)
        .map_err(|e| UsageError(format!("{flag}: cannot make {}: {e}", dir.display())))
}

/// Checks a database file another library opens and writes (SQLite):
/// absent, or a regular file of kind `out`; never a device, a FIFO, a
/// claimed file or a file of another kind. Its directory is made when
/// missing. Returns the real path to open.
pub fn database(path: &Path, out: Output) -> Result<PathBuf, UsageError> {
    make_dirs(crate::util::directory_of(path), out.flag)?;
    check_database(path, out)
}

/// As [`database`], making nothing: for checking before a run.
pub fn check_database(path: &Path, out: Output) -> Result<PathBuf, UsageError> {
    let err = |m: String| out.refusal(path, m);
    // A store is written again and again, for months: it is opened where
    // it is named, never through a link (which whoever owns its directory
    // can point at any file), and under root never in a file another user
    // owns (a `sudo -E` run keeps that user's HOME, and so their history).
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            return Err(err(format!(
                "is a symbolic link: {} is opened where it is named, never through a link (name the file it points to)",
                out.what
            )));
        }
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        if euid == 0 && meta.uid() != 0 {
            return Err(err(format!(
                "is owned by user {} and fathom runs as root: root keeps no {} in another user's file (name one of root's, or run as that user)",
                meta.uid(),
                out.what
            )));
        }
    }
    let kept = Output {
        streams: false,
        ..out
    };
    match place(path, kept, false).map_err(err)? {
        Place::File(real) => Ok(real),
        Place::Stream => unreachable!("streams are refused above"),
    }
}

/// Where `path` is written as a file of kind `out`, or why it may not be.
pub fn place(path: &Path, out: Output, overwrite: bool) -> Result<Place, String> {
    let link = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if super::in_kernel_tree(path) {
                return Err("fathom makes no file under /dev, /proc or /sys".into());
            }
            return refuse_claimed(path, out).map(|()| Place::File(super::absolute(path)));
        }
        Err(e) => return Err(e.to_string()),
        Ok(m) => m.file_type().is_symlink(),
    };
    let meta = fs::metadata(path).map_err(|_| match fs::read_link(path) {
        Ok(to) => format!(
            "is a symbolic link to {}, which does not exist",
            to.display()
        ),
        Err(e) => e.to_string(),
    })?;
    let t = meta.file_type();
    let stream = t.is_char_device() || t.is_fifo() || reaches_dev_or_proc(path);
    if t.is_block_device() {
        return Err(format!(
            "is a block device: {} is never written over a device",
            out.what
        ));
    }
    if t.is_socket() || t.is_dir() {
        return Err(format!("is {}", super::kind_of(t)));
    }
    refuse_claimed(path, out)?;
    if stream {
        return match out.streams {
            true => Ok(Place::Stream),
            false => Err(format!(
                "is {}, not a regular file: {} is kept in a file",
                if t.is_file() {
                    "a stream"
                } else {
                    super::kind_of(t)
                },
                out.what
            )),
        };
    }
    let real = match link {
        true => fs::canonicalize(path).map_err(|e| e.to_string())?,
        false => super::absolute(path),
    };
    let allowed = out.overwrite_hint.is_some() && (overwrite || approved(&real));
    if meta.len() == 0 || (out.ours)(&real) || allowed {
        return Ok(Place::File(real));
    }
    Err(match out.overwrite_hint {
        Some(hint) => format!(
            "an existing file that is not {} ({hint} to replace it)",
            out.what
        ),
        None => format!(
            "an existing file that is not {}: fathom replaces only its own",
            out.what
        ),
    })
}

/// Refuses a file this run reads or runs on; one claimed as this very
/// kind (the history, opened again) is this kind's to write.
fn refuse_claimed(path: &Path, out: Output) -> Result<(), String> {
    match super::claims::claimant(path).filter(|c| c.role != out.what) {
        Some(c) => Err(format!(
            "that is {} {} (give another file)",
            c.role,
            c.path.display()
        )),
        None => Ok(()),
    }
}

/// Whether `path`, or any link on the way from it, is in the kernel's
/// trees (`/dev/stdout`, `/proc/self/fd/1`): those name whatever the shell
/// opened, which must be written where it is. A file on a file system
/// mounted below /dev (/dev/shm) is a file like any other.
fn reaches_dev_or_proc(path: &Path) -> bool {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        let dir = crate::util::directory_of(&at);
        if at.starts_with("/proc") || at.starts_with("/dev") && super::in_kernel_tree(dir) {
            return true;
        }
        match fs::read_link(&at) {
            Ok(to) => at = at.parent().unwrap_or(Path::new("/")).join(to),
            Err(_) => return false,
        }
    }
    false
}

/// A temporary file beside the file it will replace, removed unless it
/// was renamed over it.
struct Beside {
    file: File,
    tmp: PathBuf,
    real: PathBuf,
    renamed: bool,
}

impl Beside {
    fn create(real: &Path) -> io::Result<Beside> {
        let tmp = temporary_beside(real);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&tmp)?;
        Ok(Beside {
            file,
            tmp,
            real: real.to_path_buf(),
            renamed: false,
        })
    }

    fn rename(&mut self) -> io::Result<()> {
        fs::rename(&self.tmp, &self.real)?;
        self.renamed = true;
        Ok(())
    }

    /// Flushed and renamed over: the write is whole.
    fn commit(&mut self) -> io::Result<()> {
        self.file.flush()?;
        self.rename()
    }
}

impl Drop for Beside {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Whether a file can be written beside `real` (the temporary file the
/// rename starts from): a read-only or full file system is found before
/// anything is measured, not after.
fn probe_writable(real: &Path) -> Result<(), String> {
    let written = Beside::create(real).and_then(|mut probe| {
        probe.file.write_all(&[0u8; 4096])?;
        probe.file.sync_data()
    });
    written.map_err(|e| {
        format!(
            "cannot write in {}: {e}",
            crate::util::directory_of(real).display()
        )
    })
}

fn temporary_beside(real: &Path) -> PathBuf {
    let mut name = real.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".fathom-tmp.{}", std::process::id()));
    real.with_file_name(name)
}

/// Files of another kind the user allowed replacing (`--overwrite`), as
/// [`check`] found them: the write after the run replaces them too.
static APPROVED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn approve(real: &Path) {
    if let Ok(mut approved) = APPROVED.lock() {
        approved.push(real.to_path_buf());
    }
}

fn approved(real: &Path) -> bool {
    APPROVED.lock().is_ok_and(|a| a.iter().any(|p| p == real))
}

/// Streams opened by `check`, kept open until written: a reader at the
/// other end of a FIFO would see the end of its input if the check closed
/// it.
static HELD: std::sync::Mutex<Vec<(PathBuf, File)>> = std::sync::Mutex::new(Vec::new());

fn hold_open(path: &Path, file: File) {
    if let Ok(mut held) = HELD.lock() {
        held.push((path.to_path_buf(), file));
    }
}

fn held_stream(path: &Path) -> Option<File> {
    let held = HELD.lock().ok()?;
    let (_, file) = held.iter().find(|(p, _)| p == path)?;
    file.try_clone().ok()
}

/// Opens a stream for writing, without blocking: a FIFO with no reader
/// would wait forever, deaf to Ctrl-C; it is refused instead.
fn open_stream(path: &Path) -> io::Result<File> {
    let fifo = fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    let file = super::read::open_nonblocking(path, libc::O_WRONLY | libc::O_APPEND).map_err(
        |e| match e.raw_os_error() {
            Some(libc::ENXIO) if fifo => {
                io::Error::other("a FIFO with no reader (start the reader first)")
            }
            _ => e,
        },
    )?;
    // Writes then wait for the reader to drain the pipe, as a pipe's do.
    super::read::blocking(&file);
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never(_: &Path) -> bool {
        false
    }

    const KIND: Output = Output {
        flag: "--output",
        what: "a fathom result",
        streams: true,
        ours: never,
        overwrite_hint: Some("pass --overwrite"),
    };

    #[test]
    fn paths_are_sorted_into_files_streams_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.json");
        let real_dir = fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            place(&new, KIND, false),
            Ok(Place::File(real_dir.join("new.json")))
        );
        fs::write(dir.path().join("real.json"), "").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(dir.path().join("real.json"), &link).unwrap();
        assert_eq!(
            place(&link, KIND, false),
            Ok(Place::File(real_dir.join("real.json")))
        );
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("gone"), &dangling).unwrap();
        assert!(
            place(&dangling, KIND, false)
                .unwrap_err()
                .contains("which does not exist")
        );
        assert_eq!(
            place(Path::new("/dev/null"), KIND, false),
            Ok(Place::Stream)
        );
        let to_stdout = dir.path().join("out");
        std::os::unix::fs::symlink("/dev/stdout", &to_stdout).unwrap();
        assert_eq!(place(&to_stdout, KIND, false), Ok(Place::Stream));
        let kept = Output {
            streams: false,
            ..KIND
        };
        assert!(
            place(Path::new("/dev/null"), kept, false)
                .unwrap_err()
                .contains("kept in a file")
        );
        assert!(
            place(Path::new("/dev/new-file"), KIND, false)
                .unwrap_err()
                .contains("/dev")
        );
        assert_eq!(place(dir.path(), KIND, false), Err("is a directory".into()));
        let theirs = dir.path().join("notes.md");
        fs::write(&theirs, "# mine\n").unwrap();
        assert!(
            place(&theirs, KIND, false)
                .unwrap_err()
                .contains("pass --overwrite")
        );
        assert!(place(&theirs, KIND, true).is_ok());
        let never_replaced = Output {
            overwrite_hint: None,
            ..KIND
        };
        assert!(
            place(&theirs, never_replaced, true)
                .unwrap_err()
                .contains("only its own")
        );
    }

    #[test]
    fn a_claimed_file_is_never_written_and_a_whole_write_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.json");
        fs::write(&input, "").unwrap();
        crate::gate::claims::claim(&input, "the job file");
        let hard = dir.path().join("also-in.json");
        fs::hard_link(&input, &hard).unwrap();
        assert!(
            place(&hard, KIND, true)
                .unwrap_err()
                .contains("the job file")
        );
        crate::gate::claims::release_path(&input);
        let out = dir.path().join("out.json");
        replace(&out, KIND, b"{}").unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"{}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_growing_file_replaces_nothing_until_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.txt");
        fs::write(&path, "").unwrap();
        let g = Growing::create(&path, KIND, false).unwrap();
        drop(g);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut g = Growing::create(&path, KIND, false).unwrap();
        g.write_all(b"a\n").unwrap();
        g.write_all(b"b\n").unwrap();
        drop(g);
        assert_eq!(fs::read(&path).unwrap(), b"a\nb\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_fifo_without_a_reader_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = check(&fifo, KIND, false).unwrap_err();
        assert!(e.0.contains("no reader"), "{e}");
        let kept = Output {
            streams: false,
            ..KIND
        };
        assert!(append(&fifo, kept, true).unwrap_err().0.contains("a FIFO"));
        assert!(database(&fifo, kept).unwrap_err().0.contains("a FIFO"));
    }
}
