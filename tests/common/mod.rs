//! Helpers shared by the integration tests: run the real binary, parse its
//! JSON, and manage loop devices where the machine allows them.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn fathom() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fathom"));
    command
        .env("XDG_DATA_HOME", test_data_home())
        .env_remove("FATHOM_NO_HISTORY");
    command
}

/// A port of 127.0.0.1 nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Where the tests' runs keep their history: under cargo's target
/// directory, not the user's own.
pub fn test_data_home() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("xdg-data")
}

pub fn run(args: &[&str]) -> Output {
    fathom().args(args).output().expect("fathom runs")
}

/// Runs `fathom ARGS` and asserts it succeeded.
pub fn run_ok(args: &[&str]) -> Output {
    let out = run(args);
    assert!(
        out.status.success(),
        "fathom {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Bad input's message: one line naming `needle`; a parser's error goes on
/// with its hints and usage (and then points at --help).
pub fn names_the_problem(stderr: &str, needle: &str) {
    let first = stderr.lines().next().unwrap_or("");
    assert!(first.starts_with("fathom: "), "{stderr}");
    assert!(first.contains(needle), "'{first}' should name {needle}");
    assert!(
        stderr.trim_end().lines().count() == 1 || stderr.contains("--help"),
        "one line, or the parser's usage after it: {stderr}"
    );
}

/// Asserts that a process (fio, a script, fathom) succeeded, showing its
/// stderr when it did not.
pub fn succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether count `ours` is within `share` (or `floor`, whichever is more)
/// of `theirs`.
pub fn close_to(ours: u64, theirs: u64, share: f64, floor: f64) -> bool {
    (ours as f64 - theirs as f64).abs() <= (share * theirs as f64).max(floor)
}

/// Unmounts `dir`: a few tries while a process that just ended may still
/// hold it, then detached, so that no mount outlives its test (a mount left
/// behind keeps its directory, and the next clean checkout, from going).
/// Mounts a tmpfs with `options` (`size=64m`) on `dir`; false (having
/// said why) where that cannot be done here.
pub fn mount_tmpfs(dir: &Path, options: &str) -> bool {
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(dir)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIP: cannot mount a tmpfs here (needs root)");
    }
    mounted
}

pub fn unmount(dir: &Path) {
    for _ in 0..10 {
        let done = Command::new("umount")
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if done {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = Command::new("umount").arg("-l").arg(dir).status();
}

/// The JSON a fathom run printed, after asserting that it succeeded.
pub fn json_out(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Runs `fathom ARGS` and asserts a refusal: exit 2, one line on stderr
/// that says `needle`.
pub fn refused(args: &[&str], needle: &str) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} should be refused: {err}"
    );
    names_the_problem(&err, needle);
}

/// Runs `fathom run ARGS --output-format json`, asserts success, parses.
pub fn run_json(args: &[&str]) -> Value {
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--output-format", "json"]);
    let out = run(&full);
    assert!(
        out.status.success(),
        "fathom {full:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Waits (at most 30 s) until process `pid` runs its first I/O worker
/// thread: the run has laid out its targets and started measuring.
pub fn wait_for_workers(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let started = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|c| c.trim().starts_with("fathom-w"))
            });
        if started {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "fathom never started its workers"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Waits (at most 30 s) until `what` holds.
pub fn wait_until(what: &str, mut holds: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !holds() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Starts `fathom ARGS` with the verify handshake in `handshake`: fathom
/// creates `handshake/written` once it has written, and waits for
/// `handshake/go` before reading back (see run.rs).
/// fathom started with `args`, its output thrown away.
pub fn spawn_quiet(args: &[&str]) -> std::process::Child {
    fathom()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("fathom starts")
}

pub fn spawn_with_handshake(args: &[&str], handshake: &Path) -> std::process::Child {
    fathom()
        .args(args)
        .env("FATHOM_TEST_VERIFY_HANDSHAKE", handshake)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fathom starts")
}

pub fn tempdir() -> tempfile::TempDir {
    // Under the crate's target dir: a real disk (not tmpfs), so O_DIRECT works.
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tempfile::tempdir_in(base).expect("temp dir")
}

/// A directory on /dev/shm (tmpfs) where there is one, else on the disk.
pub fn tempdir_in_shm() -> tempfile::TempDir {
    match tempfile::tempdir_in("/dev/shm") {
        Ok(dir) => dir,
        Err(_) => {
            eprintln!("no /dev/shm: the second system is on the disk too");
            tempdir()
        }
    }
}

pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every key of a JSON value, nested ones included, in document order.
pub fn collect_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                collect_keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_keys(i, out)),
        _ => {}
    }
}

pub fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not an unsigned integer"))
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

/// A loop device over a sparse image file, detached on drop.
pub struct LoopDevice {
    pub path: String,
    _image: tempfile::NamedTempFile,
}

impl LoopDevice {
    /// None (with the reason printed) where loop devices cannot be used.
    pub fn new(bytes: u64, sector_size: u32) -> Option<LoopDevice> {
        let image = tempfile::NamedTempFile::new_in(env!("CARGO_TARGET_TMPDIR")).ok()?;
        image.as_file().set_len(bytes).ok()?;
        let out = Command::new("losetup")
            .args([
                "--find",
                "--show",
                "--sector-size",
                &sector_size.to_string(),
            ])
            .arg(image.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(LoopDevice {
                path: String::from_utf8_lossy(&o.stdout).trim().to_string(),
                _image: image,
            }),
            Ok(o) => {
                eprintln!(
                    "SKIP: cannot attach a loop device: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("SKIP: losetup unavailable: {e}");
                None
            }
        }
    }
}

impl LoopDevice {
    /// The image file under the device.
    pub fn image(&self) -> &Path {
        self._image.path()
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.path]).status();
    }
}

/// Renders the page in headless Chromium and checks that its script found
/// every series of every chart drawn; skips where there is no Chromium.
pub fn assert_charts_drawn(html_path: &Path, charts: usize) {
    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!("SKIP: no Chromium to render the HTML report (apt-get install chromium)");
        return;
    };
    // Its profile, crash reports and dconf in a directory of the test's
    // own (HOME too), never in the user's home.
    let profile = tempdir();
    let dom = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .env("HOME", profile.path())
        .env("XDG_CONFIG_HOME", profile.path().join(".config"))
        .env("XDG_CACHE_HOME", profile.path().join(".cache"))
        .arg(format!("file://{}", html_path.display()))
        .stderr(std::process::Stdio::null())
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    let found = |attr: &str| -> String {
        dom.split(&format!("{attr}=\""))
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("no result")
            .to_string()
    };
    assert_eq!(
        found("data-charts-drawn"),
        format!("{charts}/{charts}"),
        "every chart drew its data in {browser}"
    );
    assert_eq!(
        found("data-repeated-ticks"),
        "none",
        "tick labels repeat on an axis"
    );
    assert_eq!(
        found("data-covered-by-legend"),
        "none",
        "a legend covers data"
    );
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
pub struct SmallTmpfs {
    pub dir: tempfile::TempDir,
}

impl SmallTmpfs {
    pub fn new(size: &str) -> Option<SmallTmpfs> {
        let dir = tempdir();
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => Some(SmallTmpfs { dir }),
            _ => {
                eprintln!("SKIP: cannot mount a tmpfs here (needs root)");
                None
            }
        }
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        unmount(self.dir.path());
    }
}

/// Threads that keep every CPU busy, `per_cpu` of them per CPU, until
/// dropped. They live in the test's process, so they cannot outlive it.
pub struct Hogs(
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    Vec<std::thread::JoinHandle<()>>,
);

impl Hogs {
    pub fn start(per_cpu: usize) -> Hogs {
        use std::sync::atomic::{AtomicBool, Ordering};
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let threads = (0..per_cpu * cpus)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        Hogs(stop, threads)
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        for hog in self.1.drain(..) {
            let _ = hog.join();
        }
    }
}

/// 12345 as the tables print it: "12,345".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What `args` print on a terminal `columns` wide (a pty), and the exit
/// status.
pub fn on_a_terminal(args: &[&str], columns: u16) -> (bool, String) {
    let mut command = fathom();
    command.args(args);
    command_on_a_terminal(command, columns, false)
}

/// What `command` prints on a terminal `columns` wide (a pty; its
/// standard error too when `both`), and whether it succeeded. A carriage
/// return (a progress line redrawn) ends a line as a newline does.
pub fn command_on_a_terminal(
    mut command: std::process::Command,
    columns: u16,
    both: bool,
) -> (bool, String) {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let size = libc::winsize {
        ws_row: 50,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let (mut controller, mut terminal) = (0, 0);
    // SAFETY: openpty writes two new descriptors, which are owned below.
    let made = unsafe {
        libc::openpty(
            &mut controller,
            &mut terminal,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(made, 0, "openpty: {}", std::io::Error::last_os_error());
    let (controller, terminal) = unsafe {
        (
            OwnedFd::from_raw_fd(controller),
            OwnedFd::from_raw_fd(terminal),
        )
    };
    let stderr = match both {
        true => std::process::Stdio::from(terminal.try_clone().unwrap()),
        false => std::process::Stdio::null(),
    };
    let mut child = command
        .stdout(std::process::Stdio::from(terminal))
        .stderr(stderr)
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The parent's copies are gone with `command`: reading ends once the
    // child closes the terminal.
    drop(command);
    let mut text = Vec::new();
    let mut reader = std::fs::File::from(controller);
    // Reading ends with EIO once the child has closed the terminal.
    let mut chunk = [0u8; 4096];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.extend_from_slice(&chunk[..n]),
        }
    }
    let status = child.wait().unwrap();
    (
        status.success(),
        String::from_utf8_lossy(&text)
            .replace("\r\n", "\n")
            .replace('\r', "\n"),
    )
}

/// The columns a line takes on a terminal: its characters but for the
/// escape sequences that colour them.
pub fn shown_width(line: &str) -> usize {
    let (mut width, mut escape) = (0, false);
    for c in line.chars() {
        match (escape, c) {
            (false, '\x1b') => escape = true,
            (true, c) if c.is_ascii_alphabetic() => escape = false,
            (true, _) => {}
            (false, _) => width += 1,
        }
    }
    width
}

/// The lines of `text` wider than `columns`, as shown.
pub fn wider_than(text: &str, columns: usize) -> Vec<&str> {
    text.lines().filter(|l| shown_width(l) > columns).collect()
}
