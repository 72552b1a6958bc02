//! Sweeps, job files and reports: every example runs (tiny size and
//! runtime), reports render in every format, the HTML draws its charts in a
//! real browser, merged files merge histograms, and sweeps resume.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use fathom::measure::histogram::LatencyHistogram;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const TINY: &[&str] = &["--size", "1m", "--runtime", "100ms", "--ramp", "0"];

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Runs an example job file on files in `dir`, one per target it names.
fn run_example(example: &Path, dir: &Path, out: &Path) -> Value {
    let text = std::fs::read_to_string(example).unwrap();
    let mut args: Vec<String> = vec!["run".into(), example.to_str().unwrap().into()];
    let labels: Vec<&str> = ["disk", "logs", "data", "journal"]
        .into_iter()
        .filter(|l| text.contains(&format!("\"{l}=")))
        .collect();
    if labels.is_empty() {
        args.push(dir.join("target.dat").to_str().unwrap().into());
    }
    for l in &labels {
        args.push("--target".into());
        args.push(format!("{l}={}", dir.join(l).to_str().unwrap()));
    }
    args.extend(TINY.iter().map(|s| s.to_string()));
    args.extend(["--output-format".into(), "json".into(), "-o".into()]);
    args.push(out.to_str().unwrap().into());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_ok(&refs);
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

#[test]
fn every_example_runs_and_reports() {
    let dir = tempdir();
    for example in examples() {
        let name = example.file_stem().unwrap().to_str().unwrap().to_string();
        let out = dir.path().join(format!("{name}.json"));
        let doc = run_example(&example, dir.path(), &out);
        let workloads = doc["results"].as_array().unwrap();
        assert!(!workloads.is_empty(), "{name}");
        // 100 ms is short: on a busy machine a run may finish before its
        // first I/O does, but not every run of an example.
        let ios = |w: &Value| u(&w["total"]["read"]["ios"]) + u(&w["total"]["write"]["ios"]);
        assert!(
            workloads.iter().any(|w| ios(w) > 0),
            "{name}: no I/O at all"
        );
        let report = |format: &str| {
            let o = run_ok(&["report", out.to_str().unwrap(), "--format", format]);
            String::from_utf8(o.stdout).unwrap()
        };
        // Every measured figure reaches every format: each direction's IOPS
        // as the tables print it, and its I/O count in the csv.
        let (text, markdown, csv) = (report("text"), report("markdown"), report("csv"));
        let csv_rows: Vec<Vec<String>> = csv::Reader::from_reader(csv.as_bytes())
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect();
        // A streams workload's streams are workloads named WORKLOAD/STREAM.
        let runs: Vec<Value> = workloads
            .iter()
            .flat_map(|w| match w["kind"].as_str() {
                Some("streams") => w["streams"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| {
                        let mut s = s.clone();
                        s["spec"]["name"] = Value::from(format!(
                            "{}/{}",
                            w["spec"]["name"].as_str().unwrap(),
                            s["spec"]["name"].as_str().unwrap()
                        ));
                        s
                    })
                    .collect(),
                _ => vec![w.clone()],
            })
            .collect();
        for (w, t) in runs
            .iter()
            .flat_map(|w| w["targets"].as_array().unwrap().iter().map(move |t| (w, t)))
        {
            for dir in ["read", "write"] {
                let d = &t[dir];
                if u(&d["ios"]) == 0 {
                    continue;
                }
                let iops = thousands(f(&d["iops"]).round() as u64);
                assert!(text.contains(&iops), "{name}: text lacks {iops}\n{text}");
                assert!(
                    markdown.contains(&format!("| {iops} |")),
                    "{name}: markdown lacks {iops}"
                );
                let ios = u(&d["ios"]).to_string();
                assert!(
                    csv_rows.iter().any(|r| r[1] == w["spec"]["name"]
                        && r.contains(&dir.to_string())
                        && r.contains(&ios)),
                    "{name}: no csv row for {} {dir} with {ios} I/Os",
                    w["spec"]["name"]
                );
            }
        }
        let html = report("html");
        assert!(
            html.trim_end().ends_with("</html>") && html.contains("<svg"),
            "{name}: html"
        );
        assert_eq!(
            entries(dir.path())
                .iter()
                .filter(|e| !e.ends_with(".json"))
                .count(),
            0,
            "{name}: fathom removed the files it created"
        );
    }
}

#[test]
fn sas_sweep_gives_the_table_the_chart_and_drawn_charts() {
    let dir = tempdir();
    let out = dir.path().join("sas.json");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sas-sweep.toml");
    let doc = run_example(&example, dir.path(), &out);
    assert_eq!(doc["results"].as_array().unwrap().len(), 48);
    let o = out.to_str().unwrap();

    // Text: one row per block size x depth, read and write side by side.
    let text = String::from_utf8(run_ok(&["report", o]).stdout).unwrap();
    for col in [
        "bs",
        "iodepth",
        "read IOPS",
        "write IOPS",
        "read p99",
        "write MiB/s",
    ] {
        assert!(text.contains(col), "{col} missing:\n{text}");
    }
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("┆ disk ")).collect();
    assert_eq!(rows.len(), 24, "{text}");

    let md = String::from_utf8(run_ok(&["report", o, "--format", "markdown"]).stdout).unwrap();
    assert_eq!(md.lines().filter(|l| l.starts_with("| ")).count(), 25);

    let csv = String::from_utf8(run_ok(&["report", o, "--format", "csv"]).stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert!(header.iter().any(|h| h == "lat_p99_99_ns"));
    assert_eq!(
        reader.records().count(),
        48,
        "one row per run x target x direction"
    );

    let html_path = dir.path().join("sas.html");
    run_ok(&[
        "report",
        o,
        "--format",
        "html",
        "-o",
        html_path.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        !html.contains("src=") && !html.contains("href="),
        "self-contained"
    );
    assert!(html.contains("IOPS vs depth") && html.contains("bandwidth vs block size"));
    // It says what was run: each run's bound, region, engine and cache.
    assert!(
        html.contains("<p class=\"meta\">Settings</p>"),
        "no settings block"
    );
    for said in [
        "<th>bound</th>",
        "<th>region</th>",
        "<th>engine</th>",
        "<th>cache</th>",
    ] {
        assert!(html.contains(said), "{said} missing from the settings");
    }
    // A sweep's shared settings are said once, each run's folded away, so
    // the charts come high enough on the page to be seen.
    let block = &html[html.find("<p class=\"meta\">Settings</p>").unwrap()..];
    let (open, folded) = block
        .split_once("<details>")
        .expect("each run's settings folded");
    assert_eq!(
        open.matches("<tr>").count(),
        2,
        "one header and one shared row"
    );
    assert!(
        folded.starts_with("<summary>each run's settings (48)"),
        "{folded:.80}"
    );
    let charts = html.matches("<figure class=\"chart\"").count();
    // 2 directions x (IOPS vs depth + 3 latency + bandwidth); runs this
    // short have no per-second series.
    assert_eq!(charts, 10);
    // Three block sizes as three curves on each IOPS-vs-depth chart.
    assert!(
        html.contains("data-colours=\"#1F77B4,#FF7F0E,#2CA02C\" data-mark=\"polyline,circle\"")
    );
    // Read and write charts of one kind sit side by side: each read chart
    // is followed by its write chart.
    let titles: Vec<&str> = html
        .split("<figure class=\"chart\"")
        .skip(1)
        .map(|f| {
            let t = f.split("disk: ").nth(1).unwrap_or("");
            &t[..t.find(" vs ").unwrap_or(0)]
        })
        .collect();
    for pair in titles.chunks(2) {
        assert_eq!(pair.len(), 2, "{titles:?}");
        assert_eq!(pair[0].replace("read", "write"), pair[1], "{titles:?}");
    }
    assert_charts_drawn(&html_path, charts);
}

#[test]
fn time_series_and_target_bars_draw() {
    let dir = tempdir();
    let out = dir.path().join("ts.json");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run_ok(&[
        "run",
        "--target",
        &format!("a={}", a.display()),
        "--target",
        &format!("b={}", b.display()),
        "--rw",
        "randrw",
        "--size",
        "1m",
        "--runtime",
        "2500ms",
        "--output-format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    let html_path = dir.path().join("ts.html");
    run_ok(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        html_path.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        html.contains("IOPS per second") && html.contains("p99 latency and issue lag per second")
    );
    // How late fathom issued, beside what the device answered in.
    assert!(html.contains("read issue lag p99"));
    assert!(html.contains("read IOPS by target") && html.contains("write IOPS by target"));
    // Bars for read and write; IOPS and p99 per second.
    assert_eq!(html.matches("<figure class=\"chart\"").count(), 4);
    assert_charts_drawn(&html_path, 4);
}

#[test]
fn workload_one_table_in_one_command() {
    let dir = tempdir();
    let mut args = vec!["run".to_string()];
    for label in ["logs", "data", "journal"] {
        args.push("--target".into());
        args.push(format!("{label}={}", dir.path().join(label).display()));
    }
    for a in [
        "--rw",
        "randread,randwrite",
        "--bs",
        "8k",
        "--iodepth",
        "128",
    ] {
        args.push(a.into());
    }
    args.extend(TINY.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = String::from_utf8(run_ok(&refs).stdout).unwrap();
    let header = text
        .lines()
        .find(|l| l.contains("read IOPS"))
        .expect("table");
    assert!(
        header.contains("write IOPS") && header.contains("target"),
        "{text}"
    );
    for label in ["logs", "data", "journal"] {
        let row = text
            .lines()
            .find(|l| l.contains(&format!(" {label} ")))
            .unwrap_or_else(|| panic!("no row for {label}:\n{text}"));
        let figures = row.split('┆').filter(|c| c.trim() == "-").count();
        assert_eq!(figures, 0, "read and write figures on one row: {row}");
    }
    assert_eq!(
        text.lines().filter(|l| l.contains("┆")).count(),
        4,
        "header and three rows"
    );
}

#[test]
fn reports_over_several_files_merge_histograms_and_compare() {
    let dir = tempdir();
    let target = dir.path().join("t");
    let mut files = Vec::new();
    for i in 0..2 {
        let out = dir.path().join(format!("r{i}.json"));
        let mut args = vec![
            "run",
            target.to_str().unwrap(),
            "--rw",
            "randread",
            "--iodepth",
            "4",
        ];
        args.extend_from_slice(&[
            "--size",
            "1m",
            "--runtime",
            "1s",
            "--label",
            "disk",
            "--output-format",
            "json",
            "-o",
        ]);
        args.push(out.to_str().unwrap());
        run_ok(&args);
        files.push(out);
    }
    let docs: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    let mut merged = LatencyHistogram::new();
    let mut ios = 0;
    for d in &docs {
        let r = &d["results"][0]["targets"][0]["read"];
        merged.add(&LatencyHistogram::decode(r["histogram"].as_str().unwrap()).unwrap());
        ios += u(&r["ios"]);
    }
    let (a, b) = (files[0].to_str().unwrap(), files[1].to_str().unwrap());
    let csv = String::from_utf8(run_ok(&["report", a, b, "--format", "csv"]).stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 1, "the same workload in two files is one row");
    let col = |name: &str| rows[0][header.iter().position(|h| h == name).unwrap()].to_string();
    assert_eq!(col("ios").parse::<u64>().unwrap(), ios);
    let summary = merged.summary();
    assert_eq!(col("lat_p99_ns").parse::<u64>().unwrap(), summary.p99);
    assert_eq!(col("lat_p99_99_ns").parse::<u64>().unwrap(), summary.p99_99);

    let text = String::from_utf8(run_ok(&["compare", a, b]).stdout).unwrap();
    assert!(text.contains("B/A") && text.contains("noise"), "{text}");
    assert!(text.contains("1 result in both"), "{text}");

    // Without a label each file is its own system, named by its stem: the
    // rows sit side by side instead of merging.
    for f in &files {
        let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        doc.as_object_mut().unwrap().remove("label");
        std::fs::write(f, doc.to_string()).unwrap();
    }
    let csv = String::from_utf8(run_ok(&["report", a, b, "--format", "csv"]).stdout).unwrap();
    let systems: Vec<String> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect();
    assert_eq!(systems, ["r0", "r1"]);
    let text = String::from_utf8(run_ok(&["report", a, b]).stdout).unwrap();
    assert!(
        text.contains("system") && text.contains(" r0 ") && text.contains(" r1 "),
        "{text}"
    );
}

#[test]
fn an_interrupted_sweep_resumes_where_it_stopped() {
    let dir = tempdir();
    let target = dir.path().join("t");
    let out = dir.path().join("sweep.json");
    let args = [
        "run",
        target.to_str().unwrap(),
        "--iodepth",
        "1,2,4",
        "--size",
        "1m",
        "--runtime",
        "1s",
        "--output-format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ];
    let mut child = fathom()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let first = loop {
        if let Ok(text) = std::fs::read_to_string(&out)
            && let Ok(doc) = serde_json::from_str::<Value>(&text)
        {
            break doc["results"][0].clone();
        }
        assert!(Instant::now() < deadline, "the first run was never written");
        std::thread::sleep(Duration::from_millis(20));
    };
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(143));
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        kept["results"][0], first,
        "finished runs survive the interruption"
    );

    let mut resumed = args.to_vec();
    resumed.push("--resume");
    let out_resumed = run_ok(&resumed);
    let said = String::from_utf8_lossy(&out_resumed.stderr);
    let done = kept["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["interrupted"] == false)
        .count();
    assert!(
        said.contains(&format!(
            "--resume: {done} of 3 runs already in the result file, {} to run",
            3 - done
        )),
        "{said}"
    );
    // One count of what is left, not the whole plan after it.
    assert_eq!(done > 0, !said.contains("plan: 3 runs"), "{said}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let w = doc["results"].as_array().unwrap();
    assert_eq!(w.len(), 3);
    assert_eq!(w[0], first, "the finished run was kept, not run again");
    let depths: Vec<u64> = w.iter().map(|w| u(&w["spec"]["iodepth"])).collect();
    assert_eq!(depths, vec![1, 2, 4]);
    assert!(w.iter().all(|w| w["interrupted"] == false));
}

#[test]
fn job_file_errors_name_file_line_and_key() {
    let dir = tempdir();
    let job = dir.path().join("bad.toml");
    std::fs::write(
        &job,
        "[defaults]\ntargets = [\"x\"]\n\n[sweep]\nbs = [\"4k\", \"huge\"]\n",
    )
    .unwrap();
    let out = run(&["run", job.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:5: sweep.bs:"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(entries(dir.path()), vec!["bad.toml"], "nothing created");

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"fathom_version\": ").unwrap();
    let out = run(&["report", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.json"));
}

/// csv holds plain machine numbers with a sensible precision and values as
/// the JSON names them (`file`, `off`), never Rust's spelling of an enum
/// or a float's last binary digits.
#[test]
fn csv_numbers_are_plain_and_names_are_the_jsons() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    let o = common::run(&[
        "run",
        dir.path().join("d").to_str().unwrap(),
        "--engine",
        "null",
        "--size",
        "16m",
        "--runtime",
        "300ms",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    for row in reader.records() {
        let row = row.unwrap();
        for (name, value) in headers.iter().zip(row.iter()) {
            if value.parse::<f64>().is_ok() {
                let decimals = value.split_once('.').map_or(0, |(_, d)| d.len());
                assert!(decimals <= 6, "{name} = {value}");
            }
            if ["kind", "verify", "direction", "engine", "rw"].contains(&name) {
                assert_eq!(value, value.to_lowercase(), "{name} = {value}");
            }
        }
    }
}

/// Two systems in one report: rows named by each system's label (not the
/// label glued to a path), one IOPS-vs-depth chart with both overlaid, and
/// each depth's per-second chart carrying both systems, with a legend.
#[test]
fn two_systems_are_overlaid_and_named_by_their_labels() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for label in ["uring", "sync"] {
        let out = dir.path().join(format!("{label}.json"));
        let o = common::run(&[
            "run",
            dir.path().join(label).to_str().unwrap(),
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "2200ms",
            "--iodepth",
            "1,16",
            "--label",
            label,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        files.push(out.display().to_string());
    }
    let text = common::run_ok(&["report", &files[0], &files[1]]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("system"), "{text}");
    assert!(
        !text.contains("uring/"),
        "a label is not glued to a path: {text}"
    );
    let html = dir.path().join("two.html");
    common::run_ok(&["report", &files[0], &files[1], "-o", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches("\nread IOPS vs depth\n").count(),
        1,
        "one chart, both systems"
    );
    for label in ["uring", "sync"] {
        // In the depth chart's legend, and in both per-second charts'.
        assert!(page.contains(&format!("\">{label}</text>")), "{label}");
        assert_eq!(
            page.matches(&format!("\">{label}: read</text>")).count(),
            2,
            "{label}"
        );
    }
    assert!(page.contains("class=\"legend\""));
}

/// A table of several runs: its notes summed up in two lines (each run's
/// under --verbose, or behind a fold in HTML), a desktop benchmark's
/// Read and Write MB/s last, and no per-second charts of a sweep's short
/// runs.
#[test]
fn the_headline_figures_come_first_and_last_and_notes_are_summed_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("desk.json");
    common::run_ok(&[
        "run",
        "--preset",
        "desktop",
        dir.path().join("d.dat").to_str().unwrap(),
        "--engine",
        "null",
        "--size",
        "64m",
        "--runtime",
        "300ms",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    let report = |extra: &[&str]| {
        let mut args = vec!["report", out.to_str().unwrap()];
        args.extend(extra);
        String::from_utf8(common::run_ok(&args).stdout).unwrap()
    };
    let text = report(&[]);
    assert_eq!(text.matches(" s measured").count(), 0, "{text}");
    assert!(text.contains("8 runs, CPU"), "{text}");
    let tail: Vec<&str> = text.lines().rev().take(5).collect();
    assert!(
        tail[4].contains("Read MB/s") && tail[4].contains("Write MB/s"),
        "{text}"
    );
    let tests: Vec<&str> = tail[..4]
        .iter()
        .rev()
        .map(|l| l.split("  ").next().unwrap().trim())
        .collect();
    assert_eq!(
        tests,
        ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"],
        "{text}"
    );
    let verbose = report(&["--verbose"]);
    assert_eq!(verbose.matches(" s measured").count(), 8, "{verbose}");

    let html = report(&["--output-format", "html"]);
    assert!(
        html.contains("<details><summary>each run's notes"),
        "notes folded"
    );
    assert!(
        !html.contains("IOPS per second"),
        "no per-second charts of 0.3 s runs"
    );
}
