//! Every file fathom writes, reads or removes goes through `src/gate/`:
//! outside it, no code calls the standard library's (or libc's) calls
//! that open, create, truncate, rename or remove a file. A new path that
//! opened files its own way has re-opened, each time, a defect an older
//! path had closed; this test fails instead. Test modules are exempt.

use std::path::Path;

/// The calls that only the gate may make, wherever they are written.
const GATED: &[&str] = &[
    "File::create(",
    "File::open(",
    "OpenOptions::new(",
    "libc::open(",
    "libc::openat(",
    "libc::unlink(",
    "libc::unlinkat(",
    "libc::rename(",
    "libc::renameat(",
    "libc::mkfifo(",
    "Connection::open(",
];

/// `std::fs`'s functions that only the gate may call: as `fs::NAME(` or a
/// bare `NAME(` (imported); a method of the same name (`dir.remove_file(`)
/// or another module's (`workload::remove_file(`) is not one.
const FS_FUNCTIONS: &[&str] = &[
    "write(",
    "read(",
    "read_to_string(",
    "rename(",
    "copy(",
    "hard_link(",
    "remove_file(",
    "remove_dir(",
    "remove_dir_all(",
    "create_dir(",
    "create_dir_all(",
];

/// Calls made around the gate on purpose, each with where and why.
const EXEMPT: &[(&str, &str, &str)] = &[(
    "src/history/sqlite.rs",
    "Connection::open(",
    "SQLite opens the path that gate::write::database checked and returned",
)];

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap().to_string();
            out.push((path.display().to_string(), code));
        }
    }
}

/// `file:line: call` for each gated call in `code` outside comments.
fn gated_calls(name: &str, code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap();
        let mut hit = |call: &str| {
            let exempt = EXEMPT
                .iter()
                .any(|(file, c, _)| name.ends_with(file) && *c == call);
            if !exempt {
                found.push(format!("{name}:{}: {call}", i + 1));
            }
        };
        for call in GATED {
            for (at, _) in line.match_indices(call) {
                // `my_remove_file(` is not `remove_file(`.
                let before = line[..at].chars().last();
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    hit(call);
                }
            }
        }
        for f in FS_FUNCTIONS {
            // `read(` and `write(` bare are too common a name (a closure,
            // a method): for them, the import that would make them std's.
            let common = ["read(", "write(", "copy(", "rename("].contains(f);
            for (at, _) in line.match_indices(f) {
                let before = &line[..at];
                let fs_call = before.ends_with("fs::");
                let bare = !common
                    && !before.ends_with("::")
                    && !before.ends_with('.')
                    && !before
                        .chars()
                        .last()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if fs_call || bare && !before.trim_end().ends_with("fn") {
                    hit(&format!("fs::{f}"));
                }
            }
            let name = f.trim_end_matches('(');
            let imported = line.trim_start().starts_with("use std::fs::")
                && line
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == name);
            if imported {
                hit(&format!("use std::fs::{name}"));
            }
        }
    }
    found
}

#[test]
fn nothing_outside_the_gate_opens_writes_or_removes_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 100, "found the sources");
    let gate = root.join("gate").display().to_string();
    let around: Vec<String> = files
        .iter()
        .filter(|(name, _)| !name.starts_with(&gate))
        .flat_map(|(name, code)| gated_calls(name, code))
        .collect();
    assert!(
        around.is_empty(),
        "files open, write or remove around the gate (use crate::gate):\n{}",
        around.join("\n")
    );
}

#[test]
fn the_check_finds_a_call_around_the_gate_and_passes_over_names_and_comments() {
    let code = "use std::fs::{self, write};\nfn f() {\n    let _ = std::fs::remove_file(p);\n    my_remove_file(p); // fs::write(p)\n    dir.remove_file(p);\n    workload::remove_file(p);\n    remove_dir(p);\n    let _ = File::open(p);\n    read(p);\n}\nfn remove_dir(x: u8) {}\n";
    assert_eq!(
        gated_calls("x.rs", code),
        vec![
            "x.rs:1: use std::fs::write",
            "x.rs:3: fs::remove_file(",
            "x.rs:7: fs::remove_dir(",
            "x.rs:8: File::open("
        ]
    );
    assert!(gated_calls("src/history/sqlite.rs", "Connection::open(p)").is_empty());
    assert!(!gated_calls("src/report/x.rs", "Connection::open(p)").is_empty());
}
