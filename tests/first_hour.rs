//! What a new user meets first: the parser's whole message with what is
//! missing named on the first line, one spelling of the output format
//! everywhere, refusals instead of silently empty output, the exit codes
//! in --help, and completions and a man page made from the same flags.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;

fn stderr_of(args: &[&str]) -> (Option<i32>, String) {
    let out = run(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A result file of a short run in `dir`, its format given with `flag`.
fn small_result(dir: &std::path::Path, flag: &str) -> std::path::PathBuf {
    let result = dir.join("r.json");
    let target = dir.join("data");
    let (t, r) = (target.to_str().unwrap(), result.to_str().unwrap());
    run_ok(&[
        "run",
        t,
        "--size",
        "1m",
        "--buffered",
        flag,
        "json",
        "-o",
        r,
    ]);
    result
}

#[test]
fn a_missing_argument_is_named_and_the_usage_shown() {
    for (args, missing) in [
        (&["meta"][..], "<DIR>"),
        (&["seqread"][..], "<TARGET>"),
        (&["compare", "a.json"][..], "<B>"),
        (&["report"][..], "<FILES>"),
        (&["capacity", "/tmp/x"][..], "--slo"),
    ] {
        let (code, err) = stderr_of(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with("fathom: missing ") && first.contains(missing),
            "{args:?}: {err}"
        );
        assert!(err.contains("Usage: fathom"), "{args:?}: {err}");
    }
}

#[test]
fn a_misspelt_flag_gets_the_flag_it_resembles() {
    let (code, err) = stderr_of(&["run", ".", "--runtim", "3s"]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("fathom: unexpected argument '--runtim'"),
        "{err}"
    );
    assert!(err.contains("'--runtime'"), "{err}");
    assert!(err.contains("Usage: fathom run"), "{err}");
}

#[test]
fn the_output_format_is_spelt_one_way_everywhere() {
    let dir = tempdir();
    // --format is the alias of --output-format.
    let result = small_result(dir.path(), "--format");
    let r = result.to_str().unwrap();
    for flag in ["--output-format", "--format"] {
        let out = run_ok(&["report", r, flag, "markdown"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("| target |"));
        let out = run_ok(&["report", r, flag, "json"]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert!(doc["results"].is_array());
    }
    let compared = dir.path().join("cmp.csv");
    run_ok(&[
        "compare",
        r,
        r,
        "--output-format",
        "csv",
        "-o",
        compared.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(&compared).unwrap();
    assert!(
        csv.starts_with("workload,target,dir,IOPS A,IOPS B,B/A"),
        "{csv}"
    );
    refused(
        &["compare", r, r, "--output-format", "html"],
        "compare writes text, markdown or csv",
    );
}

#[test]
fn results_fios_json_cannot_hold_are_refused_before_anything_runs() {
    let dir = tempdir();
    let (code, err) = stderr_of(&[
        "meta",
        dir.path().to_str().unwrap(),
        "--output-format",
        "fio-json",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no place for a metadata run"), "{err}");
    assert!(entries(dir.path()).is_empty(), "nothing created");
}

#[test]
fn help_gives_the_exit_codes_and_completions_and_man_page_come_from_the_flags() {
    let help = String::from_utf8_lossy(&run_ok(&["--help"]).stdout).into_owned();
    for code in ["0 ", "1 ", "2 ", "130 "] {
        assert!(
            help.contains(&format!("\n  {code}")),
            "exit code {code}in --help: {help}"
        );
    }
    for shell in ["bash", "zsh", "fish"] {
        let script = String::from_utf8_lossy(&run_ok(&["completions", shell]).stdout).into_owned();
        // Flags of subcommands are completed, straight from their definitions.
        assert!(
            script.contains("rate-read") && script.contains("output-format"),
            "{shell}"
        );
        // Values are offered where a flag names one of a set: engines,
        // modes, formats, and (but in fish, whose script clap writes
        // without positional values) the PTS tests.
        for value in [
            "ftruncate",
            "randtrimwrite",
            "fio-terse",
            "write-saturation",
            // --preset and train --workload offer their names, not files.
            "sas-sweep",
            "checkpoint-llama3-405b",
        ] {
            if shell != "fish" || value != "write-saturation" {
                assert!(script.contains(value), "{shell} offers {value}");
            }
        }
    }
    // Every default is said one way, as clap says its own: [default: X].
    for sub in [
        "run",
        "report",
        "meta",
        "tree",
        "seqread",
        "certify",
        "capacity",
        "crashcheck",
        "replay",
        "pts",
        "compare",
        "check",
        "history",
        "merge",
    ] {
        let help = String::from_utf8_lossy(&run_ok(&[sub, "--help"]).stdout).into_owned();
        assert!(!help.contains("(default:"), "{sub}: {help}");
    }
    let man = String::from_utf8_lossy(&run_ok(&["man"]).stdout).into_owned();
    assert!(man.contains(".TH fathom 1"), "{man}");
    assert!(man.contains("Exit status"), "{man}");
    assert!(
        man.contains("fathom\\-run(1)"),
        "the page names the subcommands' pages"
    );
    // Each subcommand's page has every flag with its default.
    let run_page = String::from_utf8_lossy(&run_ok(&["man", "run"]).stdout).into_owned();
    assert!(run_page.contains(".TH fathom-run 1"), "{run_page}");
    for flag in ["\\-\\-runtime", "\\-\\-iodepth", "\\-\\-output\\-format"] {
        assert!(run_page.contains(flag), "{flag} in fathom-run(1)");
    }
    assert!(
        run_page.contains("[default: randread]"),
        "defaults are given"
    );
    let dir = tempdir();
    run_ok(&["man", "--dir", dir.path().to_str().unwrap()]);
    for page in [
        "fathom.1",
        "fathom-run.1",
        "fathom-certify.1",
        "fathom-capacity.1",
    ] {
        assert!(dir.path().join(page).is_file(), "{page} written");
    }
    let (code, _) = stderr_of(&["man", "nonesuch"]);
    assert_eq!(code, Some(2));
    let (code, _) = stderr_of(&["completions", "tcsh"]);
    assert_eq!(code, Some(2));
}

#[test]
fn fathom_says_where_its_own_file_goes_and_how_big() {
    let dir = tempdir();
    let out = run_ok(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        "1m",
        "--buffered",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    let canonical = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        err.contains("a file of fathom's own")
            && err.contains("of 1 MiB")
            && err.contains(&format!("in {}, removed afterwards", canonical.display())),
        "{err}"
    );
    assert!(entries(dir.path()).is_empty(), "removed");
}

/// A file fathom laid out and kept is fathom's: a later run writes to it
/// without --overwrite; once someone else changes it, it is not.
#[test]
fn a_file_fathom_kept_is_its_own() {
    let dir = tempdir();
    let d = dir.path().to_str().unwrap();
    run_ok(&["run", d, "--size", "1m", "--runtime", "1s", "--keep"]);
    let kept = entries(dir.path());
    assert_eq!(kept.len(), 1, "kept: {kept:?}");
    let file = dir.path().join(&kept[0]);
    let write = |path: &std::path::Path| {
        run(&[
            "run",
            path.to_str().unwrap(),
            "--size",
            "1m",
            "--rw",
            "randwrite",
            "--runtime",
            "1s",
        ])
    };
    let out = write(&file);
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("fathom did not create") {
        eprintln!("SKIP: {d} keeps no user extended attributes");
        return;
    }
    succeeded(&out);
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap()
        .write_all(b"someone else's")
        .unwrap();
    let out = write(&file);
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "did not create");
}

#[test]
fn one_run_given_twice_is_not_merged_as_two_hosts() {
    let dir = tempdir();
    let result = small_result(dir.path(), "--output-format");
    let r = result.to_str().unwrap();
    refused(&["merge", r, r], "are the same run");
}

/// The commands in the examples' headers run as written, with the targets
/// (real mounts and devices there) replaced by a temporary directory and
/// the plan only shown.
#[test]
fn the_examples_headers_run_as_written() {
    let dir = tempdir();
    let root = env!("CARGO_MANIFEST_DIR");
    let mut ran = 0;
    for entry in std::fs::read_dir(format!("{root}/examples")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let header: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with(['#', ';']))
            .map(|l| l.trim_start_matches(['#', ';']).trim())
            .collect();
        // Commands, continuation lines joined.
        let mut commands: Vec<String> = Vec::new();
        let mut open = false;
        for line in header {
            let (body, continues) = match line.strip_suffix('\\') {
                Some(b) => (b.trim(), true),
                None => (line, false),
            };
            if open {
                commands.last_mut().unwrap().push_str(&format!(" {body}"));
            } else if body.contains("fathom run ") {
                commands.push(body.to_string());
            }
            open = continues && (open || body.contains("fathom run "));
        }
        for command in commands {
            let at = command.find("fathom run ").unwrap();
            let env: Vec<&str> = command[..at]
                .split_whitespace()
                .filter_map(|kv| kv.split_once('=').map(|(k, _)| k))
                .collect();
            let words: Vec<&str> = command[at..].split_whitespace().collect();
            // fathom run EXAMPLE [targets] [flags]: the targets become
            // directories of the temporary one, the plan is only shown.
            let mut args = vec!["run".to_string(), format!("{root}/{}", words[2])];
            for word in words[3..].iter().take_while(|w| !w.starts_with('-')) {
                let label = word.split_once('=').map_or("target", |(l, _)| l);
                let target = dir.path().join(label);
                std::fs::create_dir_all(&target).unwrap();
                args.push(match word.split_once('=') {
                    Some((l, _)) => format!("{l}={}", target.display()),
                    None => target.display().to_string(),
                });
            }
            args.push("--dry-run".into());
            let mut cmd = fathom();
            cmd.current_dir(root).args(&args);
            for k in env {
                cmd.env(k, dir.path().join("fio.dat"));
            }
            let out = cmd.output().unwrap();
            succeeded(&out);
            ran += 1;
        }
    }
    assert!(ran >= 4, "{ran} header commands found");
}

/// capacity's help shows its own step defaults and not the knobs it sets
/// itself (the rates) or stops by itself (steady state).
#[test]
fn capacity_help_is_capacitys_own() {
    // Wrapped to the width: the words, one space apart.
    let help = String::from_utf8_lossy(&run_ok(&["capacity", "--help"]).stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("Warm-up of each step, excluded from its figures [default: 2s]"),
        "{help}"
    );
    assert!(
        help.contains("Length of each step (30s, 5m) [default: 10s]"),
        "{help}"
    );
    for hidden in ["--rate-iops", "--rate-bw", "--rate-read", "--steady-state"] {
        assert!(!help.contains(hidden), "{hidden} in capacity --help");
    }
}

/// Help is wrapped at the terminal's width (and at 100 columns in a
/// pipe); `-h` is each flag's first sentence with examples, `--help` all
/// of it, both under headings.
#[test]
fn help_fits_the_terminal_and_h_is_the_short_one() {
    for columns in [80u16, 100] {
        for flag in ["-h", "--help"] {
            let (ok, text) = on_a_terminal(&["run", flag], columns);
            assert!(ok, "run {flag}");
            let widest = text.lines().map(shown_width).max().unwrap_or(0);
            assert!(
                widest <= columns as usize,
                "run {flag} at {columns} columns: a line of {widest}"
            );
        }
    }
    let piped = |flag: &str| String::from_utf8_lossy(&run_ok(&["run", flag]).stdout).into_owned();
    let (short, long) = (piped("-h"), piped("--help"));
    assert!(short.lines().all(|l| l.chars().count() <= 100));
    assert!(
        short.lines().count() * 4 < long.lines().count() * 3,
        "-h ({} lines) should be well short of --help ({})",
        short.lines().count(),
        long.lines().count()
    );
    assert!(short.contains("Examples:\n  fathom run "), "{short}");
    assert!(short.contains("(see more with '--help')"), "{short}");
    for heading in [
        "Targets and streams:",
        "Access pattern:",
        "Output:",
        "Many hosts:",
        "History:",
    ] {
        assert!(long.contains(heading), "--help lacks {heading}");
    }
    // A flag's whole text is in --help only.
    assert!(long.contains("a comma list sweeps"));
    assert!(!short.contains("a comma list sweeps"));
}

/// Reads and writes in two block sizes, buffered, on a small file: a
/// sweep whose table is wide and whose runs warn.
const SMALL_SWEEP: [&str; 9] = [
    "--size",
    "1m",
    "--buffered",
    "--runtime",
    "1s",
    "--bs",
    "4k,64k",
    "--rw",
    "randread,randwrite",
];

#[test]
fn tables_fit_the_terminal_and_say_what_they_left_out() {
    let dir = tempdir();
    let result = dir.path().join("sweep.json");
    let target = dir.path().join("data");
    let mut args = vec!["run", target.to_str().unwrap()];
    args.extend(SMALL_SWEEP);
    args.extend(["-o", result.to_str().unwrap()]);
    run_ok(&args);
    let report = ["report", result.to_str().unwrap()];
    // A pipe takes the whole table.
    let piped = run_ok(&report);
    let piped = String::from_utf8_lossy(&piped.stdout);
    let widest = piped.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(!piped.contains("left out"), "{piped}");
    assert!(
        widest > 80,
        "a sweep of reads and writes is wide: {widest}\n{piped}"
    );

    let (ok, narrow) = on_a_terminal(&report, 80);
    assert!(ok, "{narrow}");
    let table: Vec<&str> = narrow
        .lines()
        .filter(|l| l.starts_with(['│', '┌', '└', '╞', '├']))
        .collect();
    assert!(!table.is_empty(), "{narrow}");
    assert!(
        table.iter().all(|l| l.chars().count() <= 80),
        "every row fits 80 columns:\n{narrow}"
    );
    assert!(narrow.contains("left out to fit 80 characters"), "{narrow}");
    assert!(
        narrow.contains("read IOPS") && narrow.contains("write IOPS"),
        "{narrow}"
    );

    let (ok, wide) = on_a_terminal(&["report", result.to_str().unwrap(), "--wide"], 80);
    assert!(ok);
    assert!(!wide.contains("left out"), "{wide}");
    assert!(wide.lines().any(|l| l.chars().count() > 80), "{wide}");
}

/// On a terminal 100 columns wide nothing is wider: a run's warnings and
/// notes (on either stream), its report, a comparison of two runs and
/// the history's listings; a pipe still gets each line whole.
#[test]
fn every_line_fits_a_terminal_of_100_columns() {
    let dir = tempdir();
    let history = dir.path().join("history.db");
    let target = dir.path().join("data");
    let sweep = |name: &str, label: &str| {
        let result = dir.path().join(name);
        let mut command = fathom();
        command
            .args(["run", target.to_str().unwrap()])
            .args(SMALL_SWEEP);
        command.args([
            "--overwrite",
            "--label",
            label,
            "--tag",
            "purpose=a-tag-that-takes-room",
            "--history",
            history.to_str().unwrap(),
            "-o",
            result.to_str().unwrap(),
        ]);
        let (ok, shown) = command_on_a_terminal(command, 100, true);
        assert!(ok, "{shown}");
        assert!(
            shown.contains("warning: "),
            "a buffered read warns:\n{shown}"
        );
        assert!(wider_than(&shown, 100).is_empty(), "the run:\n{shown}");
        result
    };
    let a = sweep("a.json", "the-baseline-of-a-long-name");
    let b = sweep("b.json", "the-candidate-of-a-long-name");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let h = history.to_str().unwrap();
    for args in [
        vec!["report", a],
        vec!["compare", a, b],
        vec!["history", "--history", h, "list"],
        vec!["history", "--history", h, "trend"],
    ] {
        let (ok, shown) = on_a_terminal(&args, 100);
        assert!(ok, "{args:?}: {shown}");
        let wide = wider_than(&shown, 100);
        assert!(wide.is_empty(), "{args:?}: {wide:#?}\n{shown}");
    }
    let (_, compared) = on_a_terminal(&["compare", a, b], 100);
    assert!(compared.contains("left out to fit 100"), "{compared}");
    let piped = run_ok(&["compare", a, b]);
    let piped = String::from_utf8_lossy(&piped.stdout);
    assert!(
        !wider_than(&piped, 100).is_empty() && !piped.contains("left out"),
        "a pipe gets the whole table:\n{piped}"
    );
    let (_, wide) = on_a_terminal(&["compare", a, b, "--wide"], 100);
    assert!(!wider_than(&wide, 100).is_empty(), "--wide:\n{wide}");
}

/// The Kubernetes guide's recipe, from `fathom k8s` to the report, as
/// written: its manifests' pods played by processes where `kubectl`
/// would run them, their logs saved as `kubectl logs --prefix` saves
/// them, then the guide's own `collect` and `report` lines.
#[test]
fn the_kubernetes_recipe_runs_from_manifests_to_report() {
    let page = std::fs::read_to_string(format!(
        "{}/docs/guide/kubernetes.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let recipe = page
        .split("## The recipe")
        .nth(1)
        .and_then(|r| r.split("```sh").nth(1))
        .and_then(|r| r.split("```").next())
        .unwrap()
        .replace("\\\n", " ");
    let lines: Vec<&str> = recipe
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let at = |prefix: &str| {
        *lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("the recipe has no `{prefix}` line:\n{recipe}"))
    };
    let dir = tempdir();
    let work = dir.path();
    // `fathom k8s ... > fathom.yaml`, the run made small.
    let print = at("fathom k8s --clients");
    let (command, file) = print.split_once(" > ").unwrap();
    let mut args: Vec<String> = command
        .split_whitespace()
        .skip(1)
        .map(String::from)
        .collect();
    for (flag, value) in [("--size", "1m"), ("--runtime", "300ms")] {
        let after = args.iter().position(|a| a == "--").unwrap();
        if let Some(i) = args.iter().skip(after).position(|a| a == flag) {
            args[after + i + 1] = value.to_string();
        }
    }
    args.splice(1..1, ["--start-at".to_string(), "+4s".to_string()]);
    let out = fathom().current_dir(work).args(&args).output().unwrap();
    succeeded(&out);
    std::fs::write(work.join(file), &out.stdout).unwrap();
    assert!(
        at("kubectl apply").ends_with(file),
        "the recipe applies what it printed"
    );
    // `kubectl logs ... --prefix > pods.log`
    let saved = at("kubectl logs").split(" > ").nth(1).unwrap();
    assert!(at("kubectl logs").contains("--prefix"));
    let Some(docs) = crate::pods::parse(&String::from_utf8_lossy(&out.stdout)) else {
        return;
    };
    let (logs, codes) = crate::pods::Pods::start(&docs, &work.join("cluster"), false).logs();
    assert_eq!(codes, [Some(0); 3], "{logs}");
    std::fs::write(work.join(saved), logs).unwrap();
    for step in [at("fathom k8s collect"), at("fathom report")] {
        let args: Vec<&str> = step.split_whitespace().skip(1).collect();
        succeeded(&fathom().current_dir(work).args(&args).output().unwrap());
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("cluster.json")).unwrap()).unwrap();
    assert_eq!(doc["cluster"]["ranks"], 3);
    let html = std::fs::read_to_string(work.join("cluster.html")).unwrap();
    assert!(html.contains("node-2"), "the report names each pod's node");
}
