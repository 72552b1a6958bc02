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
