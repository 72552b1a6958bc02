//! The helper programs fathom runs (blkid, smartctl). Each is taken from the
//! system's own directories, never from `$PATH` (which the user whose
//! environment a root run keeps can point anywhere); it is handed absolute
//! paths only, so that a device named `-h` is a file to it, not an option;
//! and it is waited for a bounded time, so that a drive whose SMART query
//! never returns cannot keep a run from starting.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where a helper is looked for, in order.
const SYSTEM_DIRS: [&str; 4] = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// How often a running helper is looked at.
const POLL: Duration = Duration::from_millis(20);

/// Why a helper gave no answer.
#[derive(Debug)]
pub enum HelperError {
    /// It is in none of the system's directories.
    NotInstalled,
    /// It could not be started.
    CouldNotRun(std::io::Error),
    /// It had not finished after this long, and was killed.
    TimedOut(Duration),
}

impl std::fmt::Display for HelperError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HelperError::NotInstalled => write!(f, "not installed in {}", SYSTEM_DIRS.join(", ")),
            HelperError::CouldNotRun(e) => write!(f, "could not run ({e})"),
            HelperError::TimedOut(after) => {
                write!(
                    f,
                    "gave no answer within {} s and was stopped",
                    after.as_secs()
                )
            }
        }
    }
}

/// What a helper printed and how it ended.
pub struct Answer {
    pub stdout: Vec<u8>,
    /// Its exit code; None when a signal ended it.
    pub code: Option<i32>,
}

/// The helper `name` in the system's directories.
pub fn find(name: &str) -> Option<PathBuf> {
    SYSTEM_DIRS
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| is_executable(path))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs the helper `name` with `options`, then `target` made absolute, with
/// no input; waits at most `bound` for it.
pub fn run(
    name: &str,
    options: &[&str],
    target: &Path,
    bound: Duration,
) -> Result<Answer, HelperError> {
    let program = find(name).ok_or(HelperError::NotInstalled)?;
    let target = std::path::absolute(target).map_err(HelperError::CouldNotRun)?;
    let mut child = Command::new(program)
        .args(options)
        .arg(target)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(HelperError::CouldNotRun)?;
    // Read beside the wait: an answer larger than the pipe would otherwise
    // keep the helper from ending.
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let began = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if began.elapsed() < bound => std::thread::sleep(POLL),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(HelperError::TimedOut(bound));
            }
            Err(e) => return Err(HelperError::CouldNotRun(e)),
        }
    };
    let stdout = reader.join().unwrap_or_default();
    Ok(Answer {
        stdout,
        code: status.code(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_helper_is_found_in_the_systems_directories_only() {
        assert!(find("sh").is_some_and(|p| p.is_absolute()));
        assert!(find("fathom-no-such-helper").is_none());
    }

    #[test]
    fn a_target_starting_with_a_dash_is_handed_over_as_a_path() {
        let answer = run("echo", &[], Path::new("-n"), Duration::from_secs(5)).unwrap();
        let said = String::from_utf8(answer.stdout).unwrap();
        assert!(said.trim_end().ends_with("/-n"), "{said}");
        assert!(said.starts_with('/'), "{said}");
    }

    #[test]
    fn a_helper_that_never_returns_is_stopped_at_the_bound() {
        let began = Instant::now();
        let answer = run(
            "sh",
            &["-c", "sleep 30"],
            Path::new("x"),
            Duration::from_millis(300),
        );
        assert!(matches!(answer, Err(HelperError::TimedOut(_))));
        assert!(began.elapsed() < Duration::from_secs(10));
    }
}
