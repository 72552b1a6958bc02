//! Bad input: one line naming the problem, exit code 2, nothing created.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;

fn assert_rejected(args: &[&str], needle: &str) {
    let dir = tempdir();
    let before = entries(dir.path());
    let out = fathom()
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    names_the_problem(&stderr, needle);
    assert!(out.stdout.is_empty());
    assert_eq!(entries(dir.path()), before, "{args:?} created something");
}

#[test]
fn a_knob_that_does_nothing_for_the_target_is_refused_by_its_category() {
    for flag in [
        "--hipri",
        "--buffered",
        "--fsync=1",
        "--zonemode=zbd",
        "--ioprio=idle",
    ] {
        let name = flag.split('=').next().unwrap();
        assert_rejected(
            &[
                "run",
                "s3://bucket/p",
                "--s3-endpoint",
                "http://127.0.0.1:1",
                flag,
            ],
            &format!("{name}: does nothing for an s3:// target"),
        );
    }
    assert_rejected(&["run", "f.dat", "--s3-region", "eu-west-1"], "--s3-region");
}

/// An endpoint with a key and secret written into it is refused, and the
/// refusal does not repeat them.
#[test]
fn an_endpoint_with_credentials_in_it_is_refused_without_echoing_them() {
    let out = run(&[
        "run",
        "s3://bench/p",
        "--s3-endpoint",
        "http://AKIDX:s3cr3t@127.0.0.1:1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    names_the_problem(&said, "credentials in the URL");
    assert!(
        !said.contains("s3cr3t") && !said.contains("AKIDX"),
        "{said}"
    );
}

/// A prefix that a store would resolve elsewhere (`..`, `.`, `//`) is
/// refused before anything is sent: the run would write beside objects
/// the check never listed, or into another bucket.
#[test]
fn an_object_prefix_that_walks_out_of_itself_is_refused() {
    for target in [
        "s3://bench/../victim/x",
        "s3://bench/zz/../data",
        "s3://bench/a//b",
    ] {
        assert_rejected(
            &[
                "run",
                target,
                "--s3-endpoint",
                "http://127.0.0.1:1",
                "--rw",
                "write",
            ],
            "segment",
        );
    }
}

#[test]
fn bad_flags_are_named() {
    assert_rejected(&["run", ".", "--rw", "randomread"], "--rw");
    assert_rejected(&["run", ".", "--bs", "4q"], "--bs");
    assert_rejected(&["run", ".", "--size", "lots"], "--size");
    assert_rejected(&["run", ".", "--iodepth", "0"], "--iodepth");
    assert_rejected(&["run", ".", "--iodepth", "100000"], "--iodepth");
    assert_rejected(&["run", ".", "--bs", "0"], "--bs");
    assert_rejected(&["run", ".", "--bs", "64m"], "--bs");
    assert_rejected(&["run", ".", "--runtime", "soon"], "--runtime");
    assert_rejected(&["run", ".", "--runtime", "3650days"], "--runtime");
    assert_rejected(&["run", ".", "--engine", "aio"], "--engine");
    assert_rejected(
        &["run", ".", "--engine", "sync", "--iodepth", "8"],
        "--iodepth",
    );
    assert_rejected(&["run", ".", "--rwmix-read", "101"], "--rwmix-read");
    assert_rejected(&["run", ".", "--io-size", "1k"], "--io-size");
    assert_rejected(
        &["run", ".", "--random-distribution", "zipf:x"],
        "--random-distribution",
    );
    assert_rejected(&["run", ".", "--output-format", "xml"], "--output-format");
    assert_rejected(&["run", ".", "--frobnicate"], "--frobnicate");
    assert_rejected(&["run", ".", "--cmdprio", "0/50:be"], "0 bytes");
    assert_rejected(
        &["run", "t.dat", "--engine", "ftruncate", "--rw", "read"],
        "takes writes only",
    );
}

/// `--zonemode zbd` and its options: the mode needs a zoned block device
/// (a file has no zones), each option needs the mode, and fio's strided
/// mode is named by fathom's flag for it. The NVMe guest test runs zbd on
/// a zoned namespace.
#[test]
fn zone_modes_and_their_options_are_checked_before_anything_runs() {
    assert_rejected(
        &[
            "run",
            "z.dat",
            "--size",
            "1m",
            "--zonemode",
            "zbd",
            "--rw",
            "write",
        ],
        "needs a zoned block device",
    );
    assert_rejected(
        &["run", "z.dat", "--max-open-zones", "4"],
        "--max-open-zones needs --zonemode zbd",
    );
    assert_rejected(
        &["run", "z.dat", "--zone-reset", "0.7:0.1"],
        "--zone-reset needs --zonemode zbd",
    );
    assert_rejected(
        &["run", "z.dat", "--zonemode", "zbd", "--zone-reset", "7:1"],
        "--zone-reset",
    );
    assert_rejected(&["run", "z.dat", "--zonemode", "strided"], "--zones");
    assert_rejected(
        &[
            "run",
            "z.dat",
            "--zonemode",
            "zbd",
            "--rw",
            "write",
            "--verify-interleaved",
        ],
        "--verify interleaved with --zonemode zbd",
    );
}

/// `--engine io_uring_cmd` sends NVMe commands to a namespace's generic
/// char node: a file, a trim and a zone's writes at depth are refused in
/// one line (the nodes themselves are checked in tests/nvme.rs's guest).
#[test]
fn nvme_commands_are_refused_where_they_cannot_go() {
    assert_rejected(
        &[
            "run",
            "f.dat",
            "--engine",
            "io_uring_cmd",
            "--rw",
            "randread",
        ],
        "generic char node (/dev/ngXnY), not to a file",
    );
    assert_rejected(
        &[
            "run",
            "f.dat",
            "--engine",
            "io_uring_cmd",
            "--rw",
            "randtrim",
        ],
        "--engine io_uring_cmd sends NVMe reads, writes and flushes: --rw randtrim trims",
    );
    assert_rejected(
        &[
            "run",
            "f.dat",
            "--engine",
            "io_uring_cmd",
            "--zonemode",
            "zbd",
            "--rw",
            "write",
            "--iodepth",
            "4",
        ],
        "use --iodepth 1",
    );
}

/// fio's habits on fathom's own command line: `--filename=a:b` names the
/// targets and `--direct=0` turns O_DIRECT off, as in fio; an fio option
/// fathom spells otherwise is refused naming fathom's flag for it.
#[test]
fn fio_habits_are_taken_or_named() {
    assert_rejected(
        &["run", "t.dat", "--time_based", "--runtime", "1s"],
        "--runtime",
    );
    assert_rejected(&["run", "t.dat", "--iodepth_batch=4"], "fio's option");
    let dir = tempdir();
    let plan = fathom()
        .current_dir(dir.path())
        .args(["run", "--filename=a.dat:b.dat", "--size", "1m", "--dry-run"])
        .output()
        .unwrap();
    succeeded(&plan);
    assert!(String::from_utf8_lossy(&plan.stdout).contains("a.dat, b.dat"));
    let out = dir.path().join("d.json");
    run_ok(&[
        "run",
        dir.path().join("d.dat").to_str().unwrap(),
        "--engine",
        "null",
        "--size",
        "1m",
        "--runtime",
        "100ms",
        "--direct=0",
        "-o",
        out.to_str().unwrap(),
    ]);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["results"][0]["spec"]["direct"], false);
}

/// `fathom /data` (a path where a subcommand goes) names the run meant.
#[test]
fn a_path_where_the_subcommand_goes_names_the_run_meant() {
    assert_rejected(&["/tmp"], "`fathom run /tmp`");
    assert_rejected(&["./data"], "`fathom run --preset quick ./data`");
    // A word that is no path keeps the parser's own "did you mean".
    assert_rejected(&["fi"], "unrecognized subcommand");
}

#[test]
fn bad_targets_are_named() {
    assert_rejected(&["run", "/nonexistent-dir/sub/"], "does not exist");
    assert_rejected(&["run", "/nonexistent-dir/file"], "/nonexistent-dir");
    assert_rejected(&["run", "/dev/null"], "not a regular file");
    // O_DIRECT needs bs to be a multiple of the logical block size.
    assert_rejected(&["run", ".", "--bs", "1000"], "logical block size");
    assert_rejected(&["run", ".", "--offset", "100"], "--offset");
    assert_rejected(&["run", ".", "--size", "4k", "--bs", "8k"], "--size");
    assert_rejected(
        &[
            "run",
            ".",
            "--size",
            "16k",
            "--rw",
            "read",
            "--numjobs",
            "8",
        ],
        "--numjobs",
    );
    assert_rejected(&["run", ".", "--size", "100t"], "free");
    assert_rejected(&["run", ".", "-o", "/nonexistent-dir/r.json"], "--output");
}

#[test]
fn help_and_version_succeed() {
    for flag in ["--help", "--version"] {
        let out = run(&[flag]);
        assert!(out.status.success());
        assert!(!out.stdout.is_empty());
    }
    let out = run(&["run", "--help"]);
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--rw",
        "--rwmix-read",
        "--bs",
        "--iodepth",
        "--numjobs",
        "--size",
        "--offset",
        "--runtime",
        "--ramp",
        "--direct",
        "--buffered",
        "--engine",
        "--fsync",
        "--random-distribution",
        "--seed",
        "--output-format",
        "--output",
    ] {
        assert!(help.contains(flag), "help lists {flag}");
    }
}

/// The guide's synopsis of `fathom run` names every flag it has, and no
/// flag it lacks: both come from the one knob table.
#[test]
fn the_guides_synopsis_matches_the_flags() {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guide/workloads.md"
    ))
    .unwrap();
    let start = readme.find("fathom run [JOB.toml").expect("a synopsis");
    let end = ["\nfathom ", "```"]
        .iter()
        .filter_map(|m| readme[start..].find(m))
        .min()
        .unwrap();
    let synopsis = &readme[start..start + end];
    let flags = |text: &str| -> std::collections::BTreeSet<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(String::from)
            .collect()
    };
    let options_of = |command: &str| {
        let help = String::from_utf8(run(&[command, "--help"]).stdout).unwrap();
        let options: String = help
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("-o, ").or(Some(l.trim_start())))
            .filter(|l| l.starts_with("--"))
            .map(|l| l.split_whitespace().next().unwrap().to_string() + " ")
            .collect();
        let mut expected = flags(&options);
        expected.remove("--help");
        expected
    };
    let run_flags = options_of("run");
    assert_eq!(flags(synopsis), run_flags);
    // `capacity` takes the workload flags of `run` and its own, which its
    // synopsis names.
    let start = readme
        .find("fathom capacity TARGET")
        .expect("a capacity synopsis");
    let end = ["\nfathom ", "```"]
        .iter()
        .filter_map(|m| readme[start..].find(m))
        .min()
        .unwrap();
    let capacity = &readme[start..start + end];
    let own: std::collections::BTreeSet<String> = options_of("capacity")
        .difference(&run_flags)
        .cloned()
        .collect();
    assert!(!own.is_empty());
    assert_eq!(flags(capacity), own);
    for knob in fathom::spec::knobs::KNOBS.iter().filter(|k| !k.hidden) {
        assert!(
            synopsis.contains(&format!("--{}", knob.flag())),
            "{}",
            knob.name
        );
    }
}

/// What users read (the README, presets, examples, `--help`) names no file
/// they do not have.
#[test]
fn user_facing_text_names_only_files_users_have() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut texts = vec![(
        "README.md".to_string(),
        std::fs::read_to_string(format!("{root}/README.md")).unwrap(),
    )];
    for dir in ["presets", "examples", "docs", "docs/guide"] {
        for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
            let path = entry.unwrap().path();
            if let Ok(text) = std::fs::read_to_string(&path) {
                texts.push((path.display().to_string(), text));
            }
        }
    }
    for command in ["run", "meta", "seqread", "certify", "report", "compare"] {
        let help = String::from_utf8(run(&[command, "--help"]).stdout).unwrap();
        texts.push((format!("fathom {command} --help"), help));
    }
    texts.push((
        "fathom presets".into(),
        String::from_utf8(run(&["presets"]).stdout).unwrap(),
    ));
    for (name, text) in &texts {
        for missing in ["REFERENCE", "seeds/", "../shared"] {
            assert!(!text.contains(missing), "{name} mentions {missing}");
        }
    }
}

/// `--rwmix-read` on a workload that does not mix reads and writes changes
/// nothing, and the run says so (a mixed one says nothing of it).
#[test]
fn a_read_share_that_mixes_nothing_is_said() {
    let dir = tempdir();
    let plan = |rw: &str| {
        let out = fathom()
            .current_dir(dir.path())
            .args([
                "run",
                "t.dat",
                "--rw",
                rw,
                "--rwmix-read",
                "70",
                "--dry-run",
            ])
            .output()
            .unwrap();
        succeeded(&out);
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(
        plan("randread").contains("note: --rwmix-read 70 shares out the I/Os of a mixed --rw"),
        "{}",
        plan("randread")
    );
    assert!(!plan("randrw").contains("rwmix"), "{}", plan("randrw"));
}
