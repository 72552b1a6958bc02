//! Where a rendered result goes (`--output`): a new or replaceable regular
//! file, written whole through a rename, or a stream (a terminal, a pipe,
//! `/dev/stdout`) written in place. A path that names anything else, one
//! of the command's inputs, or a file that is not a fathom result, is
//! refused before anything runs; all of it through `crate::gate::write`.

use crate::gate::write::{self, Output, Place};
use crate::util::error::UsageError;
use std::path::Path;

/// A fathom result or report, in any of its formats.
pub const RESULT: Output = Output {
    flag: "--output",
    what: "a fathom result",
    streams: true,
    ours: is_fathom_file,
    overwrite_hint: Some("pass --overwrite"),
};

/// fio's `--output` under `fathom fio`: fio replaces it each run, and tools
/// that call fio again with the same name expect that, so a file in any of
/// fio's output forms (fio's own or fathom's) is replaced; anything else
/// only when `FATHOM_OVERWRITE=1` says so (fio's command line has no
/// `--overwrite` of fathom's: `--overwrite` is fio's own job option).
pub const FIO_OUTPUT: Output = Output {
    flag: "--output",
    what: "an output of fio's or fathom's",
    streams: true,
    ours: is_fio_output,
    overwrite_hint: Some("set FATHOM_OVERWRITE=1"),
};

fn is_fio_output(path: &Path) -> bool {
    if is_fathom_file(path) {
        return true;
    }
    let Some(head) = crate::gate::read::head(path, 512) else {
        return false;
    };
    let head = String::from_utf8_lossy(&head);
    let first = head.lines().next().unwrap_or("");
    let normal = first
        .split_once(": (g=")
        .is_some_and(|(name, rest)| !name.contains(' ') && rest.contains("): rw="));
    head.trim_start().starts_with('{') && head.contains("\"fio version\"")
        || head.starts_with("3;fio-")
        || head.starts_with("3;fathom-")
        || normal
}

/// Whether the environment allows replacing a file of another kind
/// (`FATHOM_OVERWRITE=1`), for the fio command line that has no flag of
/// fathom's for it.
pub fn overwrite_from_env() -> bool {
    std::env::var("FATHOM_OVERWRITE").is_ok_and(|v| matches!(v.as_str(), "1" | "yes" | "true"))
}

/// Checks that the result may be written to `path`; `overwrite` allows
/// replacing a regular file that is not a fathom result.
pub fn check(path: &Path, overwrite: bool) -> Result<(), UsageError> {
    write::check(path, RESULT, overwrite).map(|_| ())
}

/// Refuses an output that is one of the command's inputs (the same file,
/// by device and inode, whatever path or link names it): writing it would
/// replace what is being read. The inputs are claimed, so the write is
/// refused again should anything change between.
pub fn check_not_input(
    path: &Path,
    inputs: &[&Path],
    what: &'static str,
) -> Result<(), UsageError> {
    for input in inputs {
        crate::gate::claims::claim(input, what);
    }
    write::place(path, RESULT, true)
        .map(|_| ())
        .map_err(|m| UsageError(format!("--output {}: {m}", path.display())))
}

/// Writes `contents` to `path`: a regular file through a temporary file and
/// a rename, so a reader never sees half a result; a stream in place.
pub fn write(path: &Path, contents: &str) -> anyhow::Result<()> {
    write::replace(path, RESULT, contents.as_bytes())
}

/// Removes a result this command wrote before it found its input bad.
pub fn discard(path: &Path) {
    write::discard(path, RESULT)
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

/// Whether `path` names this process's standard output (`/dev/stdout`, or
/// the file or pipe it was redirected to): the result then goes there alone,
/// without the text table printed over it.
pub fn is_stdout(path: &Path) -> bool {
    use std::fs;
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
    matches!(write::place(path, RESULT, true), Ok(Place::File(_)))
}

/// A file fathom wrote (any of its formats but the text table, which
/// carries no mark of its own), by its first and last bytes.
fn is_fathom_file(path: &Path) -> bool {
    const SPAN: usize = 512;
    match (
        crate::gate::read::head(path, SPAN),
        crate::gate::read::tail(path, SPAN),
    ) {
        (Some(head), Some(tail)) => is_fathom_output(&head, &tail),
        _ => false,
    }
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
        || first_key("\"fio version\": \"fio-") && head.contains("\"fathom version\": \"fathom-")
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
        let ours: [(&str, &str); 6] = [
            ("{\n  \"fathom_version\": \"0.1.0\",\n  \"schema\": 2", "}"),
            ("{\n  \"fio version\": \"fathom-0.1.0\",", "}"),
            (
                "{\n  \"fio version\": \"fio-3.42\",\n  \"fathom version\": \"fathom-0.1.0\",",
                "}",
            ),
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
