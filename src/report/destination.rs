//! Where a rendered result goes (`--output`): a new or replaceable regular
//! file, written whole through a rename, or a stream (a terminal, a pipe,
//! `/dev/stdout`) written in place. A path that names anything else, or a
//! file that is not a fathom result, is refused before anything runs.

use crate::util::directory_of;
use crate::util::error::UsageError;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// How a path is written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// A regular file, new or replaced whole: the real path (links followed).
    File(PathBuf),
    /// Written in place, never renamed over: character devices, FIFOs, and
    /// whatever /dev and /proc name (`/dev/stdout` may be a file the shell
    /// opened: replacing it would lose the output).
    InPlace,
}

/// Checks that the result may be written to `path`; `overwrite` allows
/// replacing a regular file that is not a fathom result.
pub fn check(path: &Path, overwrite: bool) -> Result<(), UsageError> {
    let err = |m: String| UsageError(format!("--output {}: {m}", path.display()));
    match kind(path).map_err(err)? {
        Kind::InPlace => open_in_place(path)
            .map(|file| hold_open(path, file))
            .map_err(|e| err(e.to_string())),
        Kind::File(real) => {
            match fs::metadata(&real) {
                Ok(_) if overwrite || is_replaceable(&real) => {}
                Ok(_) => {
                    return Err(err(
                        "an existing file that is not a fathom result (pass --overwrite to replace it)"
                            .into(),
                    ));
                }
                Err(_) => {
                    let dir = directory_of(&real);
                    if !dir.is_dir() {
                        return Err(err(format!("directory {} does not exist", dir.display())));
                    }
                }
            }
            probe_writable(&real).map_err(err)
        }
    }
}

/// Refuses an output that is one of the command's inputs (the same file,
/// by device and inode, whatever path or link names it): writing it would
/// replace what is being read.
pub fn check_not_input(path: &Path, inputs: &[&Path], what: &str) -> Result<(), UsageError> {
    match inputs
        .iter()
        .find(|input| crate::util::same_file(path, input))
    {
        Some(input) => Err(UsageError(format!(
            "--output {}: that is {what} {} (give another file)",
            path.display(),
            input.display()
        ))),
        None => Ok(()),
    }
}

/// Whether a result can be written beside `real` (the temporary file the
/// rename starts from): a read-only or full file system is found before
/// anything is measured, not after.
fn probe_writable(real: &Path) -> Result<(), String> {
    let probe = temporary_beside(real);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|mut f| {
            let wrote = f.write_all(&[0u8; 4096]).and_then(|()| f.sync_data());
            let _ = fs::remove_file(&probe);
            wrote
        });
    written.map_err(|e| format!("cannot write in {}: {e}", directory_of(real).display()))
}

fn temporary_beside(real: &Path) -> PathBuf {
    real.with_extension(format!("tmp.{}", std::process::id()))
}

/// Streams opened by `check`, kept open until the result is written: a
/// reader at the other end of a FIFO would see the end of its input if the
/// check closed it.
static HELD: std::sync::Mutex<Vec<(PathBuf, fs::File)>> = std::sync::Mutex::new(Vec::new());

fn hold_open(path: &Path, file: fs::File) {
    if let Ok(mut held) = HELD.lock() {
        held.push((path.to_path_buf(), file));
    }
}

fn held_stream(path: &Path) -> Option<fs::File> {
    let held = HELD.lock().ok()?;
    let (_, file) = held.iter().find(|(p, _)| p == path)?;
    file.try_clone().ok()
}

/// Opens a stream for writing. A FIFO is opened without blocking: with no
/// reader at the other end, an open for writing would wait forever, deaf
/// to Ctrl-C; it is refused instead.
fn open_in_place(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let fifo = fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    let mut options = OpenOptions::new();
    options.append(true);
    if fifo {
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ENXIO) if fifo => {
            io::Error::other("a FIFO with no reader (start the reader first)")
        }
        _ => e,
    })?;
    if fifo {
        // Writes then wait for the reader to drain the pipe, as a pipe's do.
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor, and flags read from it.
        unsafe {
            let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// Writes `contents` to `path`: a regular file through a temporary file and
/// a rename, so a reader never sees half a result; a stream in place.
/// An error names the path it concerns; the temporary file of a write that
/// failed (a full file system) is removed.
pub fn write(path: &Path, contents: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    let kind = kind(path)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("cannot write {}", path.display()))?;
    match kind {
        Kind::InPlace => {
            // Appending keeps the order of what else goes to a file the
            // shell opened for standard output.
            held_stream(path)
                .map_or_else(|| open_in_place(path), Ok)
                .and_then(|mut out| {
                    out.write_all(contents.as_bytes())?;
                    out.flush()
                })
                .with_context(|| format!("cannot write {}", path.display()))
        }
        Kind::File(real) => {
            let tmp = temporary_beside(&real);
            fs::write(&tmp, contents)
                .and_then(|()| fs::rename(&tmp, &real))
                .inspect_err(|_| {
                    let _ = fs::remove_file(&tmp);
                })
                .with_context(|| format!("cannot write {}", real.display()))
        }
    }
}

/// When to rewrite a result file that grows with each finished run: once
/// the time since the last write is ten times what that write took. The
/// first write is at once; a sweep of thousands of short runs then spends
/// at most about a tenth of its time writing, instead of a time that grows
/// with the square of its runs.
#[derive(Debug, Default)]
pub struct RewritePacer {
    last: Option<(std::time::Instant, std::time::Duration)>,
}

impl RewritePacer {
    pub fn due(&self, now: std::time::Instant) -> bool {
        self.last
            .is_none_or(|(at, took)| now.saturating_duration_since(at) >= took * 10)
    }

    pub fn wrote(&mut self, started: std::time::Instant, ended: std::time::Instant) {
        self.last = Some((ended, ended.saturating_duration_since(started)));
    }
}

fn kind(path: &Path) -> Result<Kind, String> {
    let link = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Kind::File(path.into())),
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
    let special = reaches_dev_or_proc(path);
    let t = meta.file_type();
    if t.is_block_device() {
        Err("is a block device: a result is never written over a device".into())
    } else if t.is_socket() {
        Err("is a socket".into())
    } else if t.is_dir() {
        Err("is a directory".into())
    } else if t.is_char_device() || t.is_fifo() || special {
        Ok(Kind::InPlace)
    } else if link {
        // Replace the file the link names, not the link.
        fs::canonicalize(path)
            .map(Kind::File)
            .map_err(|e| e.to_string())
    } else {
        Ok(Kind::File(path.into()))
    }
}

/// Whether `path`, or any link on the way from it, is in /dev or /proc:
/// `/dev/stdout` and links to it name whatever the shell opened, which must
/// be written where it is.
fn reaches_dev_or_proc(path: &Path) -> bool {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        if at.starts_with("/dev") || at.starts_with("/proc") {
            return true;
        }
        match fs::read_link(&at) {
            Ok(to) => at = at.parent().unwrap_or(Path::new("/")).join(to),
            Err(_) => return false,
        }
    }
    false
}

/// Whether `path` names this process's standard output (`/dev/stdout`, or
/// the file or pipe it was redirected to): the result then goes there alone,
/// without the text table printed over it.
pub fn is_stdout(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let id = |m: fs::Metadata| (m.dev(), m.ino());
    match (fs::metadata(path), fs::metadata("/proc/self/fd/1")) {
        (Ok(a), Ok(b)) => id(a) == id(b),
        _ => false,
    }
}

/// Whether results written to `path` replace a file whole, so that writing
/// each finished run as it comes is safe; a stream takes the result once.
pub fn is_rewritable(path: &Path) -> bool {
    matches!(kind(path), Ok(Kind::File(_)))
}

/// An empty file, or one fathom wrote (any of its formats but the text
/// table, which carries no mark of its own).
fn is_replaceable(path: &Path) -> bool {
    const SPAN: u64 = 512;
    let Ok(mut file) = fs::File::open(path) else {
        return false;
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let mut head = vec![0u8; SPAN.min(len) as usize];
    let mut tail = vec![0u8; SPAN.min(len) as usize];
    let read = file.read_exact(&mut head).is_ok()
        && file.seek(SeekFrom::Start(len - tail.len() as u64)).is_ok()
        && file.read_exact(&mut tail).is_ok();
    len == 0 || (read && is_fathom_output(&head, &tail))
}

/// Whether the first and last bytes of a file are those of a fathom result.
pub fn is_fathom_output(head: &[u8], tail: &[u8]) -> bool {
    let head = String::from_utf8_lossy(head);
    let tail = String::from_utf8_lossy(tail);
    let first_key = |key: &str| {
        head.strip_prefix('{')
            .is_some_and(|rest| rest.trim_start().starts_with(key))
    };
    let markdown_footer = tail.trim_end().lines().last().is_some_and(|l| {
        l.strip_prefix("fathom ")
            .and_then(|rest| rest.split_once(", "))
            .is_some_and(|(version, rest)| {
                version.starts_with(|c: char| c.is_ascii_digit()) && rest.contains(" result")
            })
    });
    first_key("\"fathom_version\"")
        || first_key("\"fio version\": \"fathom-")
        || head.starts_with("<!DOCTYPE html>") && head.contains("<title>fathom report</title>")
        || head.starts_with("system,")
        || markdown_footer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_of_a_growing_file_cost_a_bounded_share_of_a_sweep() {
        use std::time::{Duration, Instant};
        // 10,000 runs of 5 ms; writing the document after n runs costs
        // 20 µs per run it holds.
        let mut pacer = RewritePacer::default();
        let start = Instant::now();
        let mut now = start;
        let (mut writes, mut writing) = (0u32, Duration::ZERO);
        for n in 1..=10_000u32 {
            now += Duration::from_millis(5);
            if pacer.due(now) {
                let took = Duration::from_micros(20) * n;
                pacer.wrote(now, now + took);
                now += took;
                writes += 1;
                writing += took;
            }
        }
        let share = writing.as_secs_f64() / (now - start).as_secs_f64();
        // Every write at each run would have spent 20 x 50,005,000 µs,
        // 95% of the sweep.
        assert!(share < 0.12, "{share} in {writes} writes");
        assert!(writes > 50, "{writes}: finished runs still reach the file");
    }

    #[test]
    fn each_format_fathom_writes_is_recognised_and_nothing_else() {
        let ours: [(&str, &str); 5] = [
            ("{\n  \"fathom_version\": \"0.1.0\",\n  \"schema\": 2", "}"),
            ("{\n  \"fio version\": \"fathom-0.1.0\",", "}"),
            (
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fathom report</title>",
                "</html>",
            ),
            ("system,name,rw,rwmix_read,bs", "x,y"),
            (
                "| target | read IOPS |",
                "| r | 1 |\n\nfathom 0.1.0, 1 result, 2026-11-24T05:13:19Z; host vm.\n",
            ),
        ];
        for (head, tail) in ours {
            assert!(is_fathom_output(head.as_bytes(), tail.as_bytes()), "{head}");
        }
        let theirs: [(&str, &str); 5] = [
            ("{\"name\": \"my config\"}", "}"),
            ("<!DOCTYPE html><title>My notes on fathom</title>", ""),
            ("id,system,value", ""),
            ("# Notes", "fathom is a benchmark, 2 results so far\n"),
            ("", ""),
        ];
        for (head, tail) in theirs {
            assert!(
                !is_fathom_output(head.as_bytes(), tail.as_bytes()),
                "{head}"
            );
        }
    }

    #[test]
    fn paths_are_sorted_into_files_streams_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.json");
        assert_eq!(kind(&new), Ok(Kind::File(new.clone())));
        std::fs::write(dir.path().join("real.json"), "").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(dir.path().join("real.json"), &link).unwrap();
        let real = std::fs::canonicalize(dir.path().join("real.json")).unwrap();
        assert_eq!(kind(&link), Ok(Kind::File(real)));
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("gone"), &dangling).unwrap();
        assert!(
            kind(&dangling)
                .unwrap_err()
                .contains("which does not exist")
        );
        assert_eq!(kind(Path::new("/dev/null")), Ok(Kind::InPlace));
        let to_stdout = dir.path().join("out");
        std::os::unix::fs::symlink("/dev/stdout", &to_stdout).unwrap();
        assert_eq!(kind(&to_stdout), Ok(Kind::InPlace));
        assert!(!is_rewritable(&to_stdout) && is_rewritable(&new));
        assert_eq!(kind(dir.path()), Err("is a directory".into()));
    }

    #[test]
    fn a_foreign_file_needs_overwrite_and_a_result_or_an_empty_file_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.md");
        std::fs::write(&notes, "# my notes\n").unwrap();
        assert!(check(&notes, false).unwrap_err().0.contains("--overwrite"));
        assert!(check(&notes, true).is_ok());
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "").unwrap();
        assert!(check(&empty, false).is_ok());
        write(&empty, "{\n  \"fathom_version\": \"0.1.0\"\n}\n").unwrap();
        assert!(check(&empty, false).is_ok());
        assert!(
            check(&dir.path().join("no/such/dir.json"), false)
                .unwrap_err()
                .0
                .contains("does not exist")
        );
    }
}
