//! The test suite leaves the user's own data alone: every process it
//! starts keeps its history under target/ (set in .cargo/config.toml), so
//! a test that starts fathom some other way (a `fio` link, bench-fio,
//! mpirun) cannot write into ~/.local/share/fathom.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

#[test]
fn every_process_of_the_suite_keeps_its_history_under_target() {
    let xdg = std::env::var("XDG_DATA_HOME").expect("XDG_DATA_HOME is set for the tests");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    assert!(
        Path::new(&xdg).starts_with(target) || Path::new(&xdg).starts_with(&checkout),
        "{xdg} is under neither {} nor {}",
        target.display(),
        checkout.display()
    );
    // A child started with no environment of its own inherits it.
    let out = std::process::Command::new("sh")
        .args(["-c", "echo $XDG_DATA_HOME"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), xdg);
}

/// A report drawn in Chromium leaves no profile, crash reports or dconf
/// folder in the user's home: the browser is given a home of the test's.
#[test]
fn chromium_leaves_nothing_in_the_home_directory() {
    let Ok(home) = std::env::var("HOME") else {
        eprintln!("SKIP: no HOME");
        return;
    };
    let home = Path::new(&home);
    let browser_dirs = [
        ".config/chromium",
        ".cache/chromium",
        ".pki",
        ".config/dconf",
    ];
    let before: Vec<bool> = browser_dirs.iter().map(|d| home.join(d).exists()).collect();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let out = crate::common::fathom()
        .current_dir(dir.path())
        .args(["run", "--engine", "null", "--runtime", "2s", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    crate::common::assert_charts_drawn(&html, 2);
    for (d, was) in browser_dirs.iter().zip(before) {
        assert!(was || !home.join(d).exists(), "~/{d} made by the render");
    }
}
