//! The source tree's layers point one way: library code never imports the
//! command line, and no file imports, through others, a file that imports
//! it (an import circle). Read from the source text: `crate::`, `fathom::`
//! (the binary's `cli` naming the library) and `super::` paths outside the
//! test modules, each resolved to the file that defines
//! its longest module prefix.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::source;

type Module = Vec<String>;

fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Module, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let mut module = prefix.to_vec();
        if path.is_dir() {
            module.push(name);
            modules(&path, &module, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            if !["mod", "lib", "main"].contains(&name.as_str()) {
                module.push(name);
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Test modules may reach anywhere.
            let code = source::production(&text);
            out.insert(module, code);
        }
    }
}

/// The modules `code` (of `module`, `is_mod` when it is a mod.rs) refers to.
fn imports(module: &Module, code: &str, known: &BTreeMap<Module, String>) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    for (anchor, base) in [
        ("crate::", Vec::new()),
        // The binary's `cli` names the library by its crate name.
        ("fathom::", Vec::new()),
        ("super::", module[..module.len().saturating_sub(1)].to_vec()),
    ] {
        for (i, _) in code.match_indices(anchor) {
            let before = code[..i].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let rest = &code[i + anchor.len()..];
            let mut path = base.clone();
            if let Some(group) = rest.strip_prefix('{') {
                // use crate::{a::b, c}: each item of the group.
                for item in group.split('}').next().unwrap().split(',') {
                    let mut p = path.clone();
                    p.extend(item.trim().split("::").map(|s| s.trim().to_string()));
                    out.extend(resolve(&p, known));
                }
                continue;
            }
            for part in rest.split("::") {
                let ident: String = part
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if ident.is_empty() {
                    break;
                }
                path.push(ident.clone());
                if ident.len() != part.len() {
                    break;
                }
            }
            out.extend(resolve(&path, known));
        }
    }
    out.remove(module);
    out
}

fn resolve(path: &[String], known: &BTreeMap<Module, String>) -> Option<Module> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| known.contains_key(p))
}

fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let mut known = BTreeMap::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut known,
    );
    known
        .iter()
        .map(|(m, code)| (m.clone(), imports(m, code, &known)))
        .collect()
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "lib".into()
    } else {
        m.join("/")
    }
}

#[test]
fn the_library_never_imports_the_command_line() {
    let g = graph();
    assert!(g.len() > 40, "found the source files");
    let wrong: Vec<String> = g
        .iter()
        .filter(|(m, _)| m.first().is_some_and(|f| f != "cli"))
        .filter(|(_, to)| to.iter().any(|t| t.first().is_some_and(|f| f == "cli")))
        .map(|(m, _)| name(m))
        .collect();
    assert!(wrong.is_empty(), "library modules importing cli: {wrong:?}");
}

#[test]
fn no_file_imports_itself_through_others() {
    let g = graph();
    assert!(
        g.values().map(BTreeSet::len).sum::<usize>() > 100,
        "found the imports"
    );
    // A file is in a circle when it can reach itself.
    let mut circles = Vec::new();
    for start in g.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&Module> = g[start].iter().collect();
        while let Some(m) = todo.pop() {
            if m == start {
                circles.push(name(start));
                break;
            }
            if seen.insert(m.clone()) {
                todo.extend(g.get(m).into_iter().flatten());
            }
        }
    }
    assert!(circles.is_empty(), "files in import circles: {circles:?}");
}

/// The top-level modules `from` imports (files in them importing files
/// of other top-level modules).
fn layer_imports(
    g: &BTreeMap<Module, BTreeSet<Module>>,
    from: &str,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (m, to) in g
        .iter()
        .filter(|(m, _)| m.first().is_some_and(|f| f == from))
    {
        for t in to.iter().filter_map(|t| t.first()).filter(|t| *t != from) {
            out.entry(t.clone()).or_default().push(name(m));
        }
    }
    out
}

/// The spine of the data flow holds: the document (`result`) and its
/// renderings (`report`) know nothing of how I/O is done (`engine`) or
/// driven (`run`), and where specs come from (`input`) does not reach
/// into running them.
#[test]
fn the_document_and_the_inputs_stay_off_the_run_path() {
    let g = graph();
    for (layer, forbidden) in LAYERS {
        let imports = layer_imports(&g, layer);
        assert!(
            !imports.is_empty() || ["measure", "util"].contains(&layer),
            "found {layer}'s imports"
        );
        for f in forbidden.iter() {
            assert!(
                !imports.contains_key(*f),
                "{layer} imports {f}: {:?}",
                imports[*f]
            );
        }
    }
}

/// Every folder of `src/` has its rule in [`LAYERS`] and its line in
/// ARCHITECTURE.md's map, so that a new one is placed before it grows.
#[test]
fn every_folder_is_placed_in_the_map_and_the_rules() {
    let root = env!("CARGO_MANIFEST_DIR");
    let map = std::fs::read_to_string(format!("{root}/ARCHITECTURE.md")).unwrap();
    let mut folders: Vec<String> = std::fs::read_dir(format!("{root}/src"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert!(folders.len() >= 12, "{folders:?}");
    for f in &folders {
        assert!(
            LAYERS.iter().any(|(l, _)| l == f),
            "src/{f}/ has no rule in tests/layers.rs LAYERS"
        );
        assert!(
            map.lines().any(|l| l.starts_with(&format!("{f}/"))),
            "src/{f}/ is not in ARCHITECTURE.md's map"
        );
        assert!(
            map.contains(&format!("**`{f}/`**")),
            "src/{f}/ has no paragraph in ARCHITECTURE.md"
        );
    }
}

/// Every source file over 200 lines is named in ARCHITECTURE.md, by its
/// name (in its folder's paragraph) or its path: a newcomer finds every
/// large file on the map.
#[test]
fn every_file_over_200_lines_is_on_the_map() {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|p| std::fs::read_to_string(p).unwrap().lines().count() > 200)
        .map(|p| {
            p.strip_prefix(root.join("src"))
                .unwrap()
                .display()
                .to_string()
        })
        .filter(|rel| {
            let name = rel.rsplit('/').next().unwrap();
            let folder = rel.trim_end_matches("/mod.rs");
            !(map.contains(&format!("`{name}`"))
                || map.contains(rel.as_str())
                || (rel.ends_with("/mod.rs") && map.contains(&format!("`{folder}/`")))
                || map.contains(&format!("{}.rs", name.trim_end_matches(".rs"))))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "files over 200 lines that ARCHITECTURE.md does not name: {missing:?}"
    );
}

/// What each folder may not import: the data flow runs one way, from
/// flags (`cli`) through specs and runs to the document and its reports,
/// with the gate and the utilities beneath everything.
const LAYERS: [(&str, &[&str]); 13] = [
    ("cli", &[]),
    ("commands", &["cli"]),
    ("run", &["commands", "cli", "report", "input", "history"]),
    (
        "engine",
        &[
            "run", "commands", "cli", "result", "report", "input", "history",
        ],
    ),
    (
        "history",
        &["run", "engine", "commands", "cli", "report", "input"],
    ),
    (
        "trace",
        &[
            "run", "engine", "commands", "cli", "result", "report", "input", "spec", "measure",
            "history",
        ],
    ),
    (
        "util",
        &[
            "run", "engine", "commands", "cli", "result", "report", "input", "spec", "measure",
            "history", "trace", "gate",
        ],
    ),
    ("result", &["engine", "run", "commands", "cli", "history"]),
    ("report", &["engine", "run", "commands", "cli"]),
    ("input", &["run", "engine", "commands", "cli"]),
    ("spec", &["run", "engine", "commands", "input", "cli"]),
    (
        "measure",
        &["run", "engine", "commands", "result", "report", "cli"],
    ),
    // The gate stands below everything that reads or writes files,
    // so that everything can go through it.
    (
        "gate",
        &[
            "run", "engine", "commands", "result", "report", "input", "spec", "measure", "history",
            "trace", "cli",
        ],
    ),
];

/// The checker finds a circle where there is one.
#[test]
fn a_circle_is_found() {
    let mut known = BTreeMap::new();
    known.insert(vec!["a".to_string()], "use crate::b::X;".to_string());
    known.insert(
        vec!["b".to_string()],
        "fn f() { crate::a::g() }".to_string(),
    );
    let a = imports(&vec!["a".into()], &known[&vec!["a".to_string()]], &known);
    let b = imports(&vec!["b".into()], &known[&vec!["b".to_string()]], &known);
    assert!(a.contains(&vec!["b".to_string()]) && b.contains(&vec!["a".to_string()]));
}

/// The layers of the data flow (top-level modules: `measure`, `result`,
/// `report`, ...) import each other one way: a layer never reaches itself
/// through another. The measurement types live below the results that hold
/// them (`result` re-exports them).
#[test]
fn no_layer_imports_itself_through_another() {
    let mut layers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, to) in graph() {
        let Some(from) = m.first() else { continue };
        for t in to.iter().filter_map(|t| t.first()).filter(|t| *t != from) {
            layers.entry(from.clone()).or_default().insert(t.clone());
        }
    }
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(l) = todo.pop() {
            if seen.insert(l.clone()) {
                todo.extend(layers.get(&l).into_iter().flatten().cloned());
            }
        }
        seen.contains(to)
    };
    assert!(!reaches("measure", "result"), "measure reaches result");
    let circles: Vec<String> = layers
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |t| (from, t)))
        .filter(|(from, to)| reaches(to, from))
        .map(|(from, to)| format!("{from} <-> {to}"))
        .collect();
    assert!(circles.is_empty(), "layers in import circles: {circles:?}");
}

/// Whether `line` takes a result apart by its kind: a match arm, an `if
/// let` or a `let ... else` on `RunResult::<kind>(...)`.
fn takes_kind_apart(line: &str) -> bool {
    const KINDS: [&str; 9] = [
        "Workload", "Streams", "Object", "Train", "Tree", "Meta", "Certify", "Capacity", "Pts",
    ];
    let named = KINDS
        .iter()
        .any(|k| line.contains(&format!("RunResult::{k}(")));
    let t = line.trim_start();
    named
        && (line.contains("=>")
            || t.starts_with('|')
            || line.contains("let ")
            || t.starts_with("other @"))
}

/// The kinds of result are listed once, in the registry (`Kind`,
/// `OneKind`, `Visit`): code elsewhere asks a result's `Kind`, takes one
/// kind by type (`result.get::<TreeResult>()`) or visits, so a new kind is
/// one more implementation, not arms added across the reports.
#[test]
fn result_kinds_are_taken_apart_only_in_the_registry() {
    let mut known = BTreeMap::new();
    modules(Path::new("src"), &[], &mut known);
    let mut found = Vec::new();
    for (module, code) in &known {
        if name(module) == "result/kind" {
            continue;
        }
        for line in code.lines().filter(|l| takes_kind_apart(l)) {
            found.push(format!("{}: {}", name(module), line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "matches on result kinds outside src/result/kind.rs:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_match_arm_on_a_kind_is_seen() {
    assert!(takes_kind_apart(
        "        RunResult::Tree(t) => jobs.extend(t),"
    ));
    assert!(takes_kind_apart("            | RunResult::Pts(_)"));
    assert!(takes_kind_apart(
        "    let RunResult::Workload(w) = r else {"
    ));
    assert!(!takes_kind_apart("    out.push(RunResult::Tree(t));"));
    assert!(!takes_kind_apart("        .map(RunResult::Workload)"));
}

/// Cargo finds no test file by itself (`autotests = false`): a file in
/// tests/ that tests/suite.rs does not name would never run.
#[test]
fn every_test_file_is_in_the_suite() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let suite = std::fs::read_to_string(root.join("suite.rs")).unwrap();
    let declared: BTreeSet<&str> = suite
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let own_binary = ["suite", "nvme", "mpi"].contains(&stem);
        if path.extension().is_some_and(|e| e == "rs") && !own_binary && !declared.contains(stem) {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/suite.rs does not name {missing:?}: add `mod NAME;` for each"
    );
}
