//! Where a rendered result goes (`--output`): a new or replaceable regular
//! file, written whole through a rename, or a stream (a terminal, a pipe,
//! `/dev/stdout`) written in place. A path that names anything else, or a
//! file that is not a fathom result, is refused before anything runs.

use crate::error::UsageError;
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
        Kind::InPlace => Ok(()),
        Kind::File(real) => match fs::metadata(&real) {
            Ok(_) if overwrite || is_replaceable(&real) => Ok(()),
            Ok(_) => Err(err(
                "an existing file that is not a fathom result (pass --overwrite to replace it)"
                    .into(),
            )),
            Err(_) => {
                let dir = match real.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                match dir.is_dir() {
                    true => Ok(()),
                    false => Err(err(format!("directory {} does not exist", dir.display()))),
                }
            }
        },
    }
}

/// Writes `contents` to `path`: a regular file through a temporary file and
/// a rename, so a reader never sees half a result; a stream in place.
pub fn write(path: &Path, contents: &str) -> io::Result<()> {
    match kind(path).map_err(io::Error::other)? {
        Kind::InPlace => {
            // Appending keeps the order of what else goes to a file the
            // shell opened for standard output.
            let mut out = OpenOptions::new().append(true).open(path)?;
            out.write_all(contents.as_bytes())?;
            out.flush()
        }
        Kind::File(real) => {
            let tmp = real.with_extension(format!("tmp.{}", std::process::id()));
            fs::write(&tmp, contents)?;
            fs::rename(&tmp, &real).inspect_err(|_| {
                let _ = fs::remove_file(&tmp);
            })
        }
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
