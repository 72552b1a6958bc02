//! `fathom run` end to end on small real files.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use serde_json::Value;

const RW_MODES: [&str; 6] = [
    "read",
    "write",
    "randread",
    "randwrite",
    "readwrite",
    "randrw",
];

/// Checks the figures of one direction against each other and returns ios.
fn check_direction(d: &Value, bs: u64, runtime_s: f64) -> u64 {
    let ios = u(&d["ios"]);
    assert_eq!(ios * bs, u(&d["bytes"]), "ios * bs == bytes");
    if runtime_s > 0.0 {
        let iops = f(&d["iops"]);
        assert!(
            (iops - ios as f64 / runtime_s).abs() <= 1e-6 * iops.max(1.0),
            "iops == ios / runtime"
        );
        let bw = f(&d["bw_bytes"]);
        assert!((bw - (ios * bs) as f64 / runtime_s).abs() <= 1e-6 * bw.max(1.0));
    }
    let lat = &d["lat_ns"];
    if ios > 0 {
        let order = ["min", "p50", "p90", "p99", "p99_9", "p99_99", "max"].map(|k| u(&lat[k]));
        assert!(
            order.windows(2).all(|w| w[0] <= w[1]),
            "percentiles ordered: {order:?}"
        );
        assert!(order[0] > 0);
        let mean = f(&lat["mean"]);
        assert!(mean >= order[0] as f64 * 0.99 && mean <= order[6] as f64 * 1.01);
    } else {
        assert_eq!(u(&lat["max"]), 0);
    }
    let interval_ios: u64 = d["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| u(&i["ios"]))
        .sum();
    assert_eq!(interval_ios, ios, "intervals add up to the total");
    ios
}

#[test]
fn every_rw_mode_moves_the_right_bytes() {
    let dir = tempdir();
    let file = dir.path().join("data");
    let file = file.to_str().unwrap();
    for rw in RW_MODES {
        let doc = run_json(&[
            file,
            "--rw",
            rw,
            "--size",
            "4m",
            "--bs",
            "16k",
            "--iodepth",
            "4",
            "--keep",
            "--overwrite",
        ]);
        let w = &doc["results"][0];
        let runtime = f(&w["runtime_s"]);
        let t = &w["targets"][0];
        let reads = check_direction(&t["read"], 16384, runtime);
        let writes = check_direction(&t["write"], 16384, runtime);
        // Size-bound: one pass of 4 MiB in all.
        assert_eq!((reads + writes) * 16384, 4 << 20, "{rw}");
        match rw {
            "read" | "randread" => assert_eq!(writes, 0, "{rw}"),
            "write" | "randwrite" => assert_eq!(reads, 0, "{rw}"),
            _ => assert!(reads > 0 && writes > 0, "{rw} mixes"),
        }
        assert_eq!(w["spec"]["rw"], rw);
    }
}

#[test]
fn every_engine_runs() {
    let dir = tempdir();
    let d = dir.path().to_str().unwrap();
    for (engine, depth) in [("io_uring", "8"), ("sync", "1"), ("null", "16")] {
        for rw in ["randread", "randwrite"] {
            let doc = run_json(&[
                d,
                "--engine",
                engine,
                "--iodepth",
                depth,
                "--rw",
                rw,
                "--size",
                "2m",
            ]);
            let w = &doc["results"][0];
            assert_eq!(w["spec"]["engine"], engine);
            let dir_key = if rw == "randread" { "read" } else { "write" };
            let ios = check_direction(&w["total"][dir_key], 4096, f(&w["runtime_s"]));
            assert_eq!(ios, 512, "{engine} {rw}");
        }
    }
    assert!(entries(dir.path()).is_empty(), "created files are removed");
}

/// The null engine does no I/O: it makes no file where it is pointed and
/// names no disk, whose counters would be what others did.
#[test]
fn the_null_engine_makes_no_file_and_names_no_disk() {
    let dir = tempdir();
    let out = fathom()
        .current_dir(dir.path())
        .args([
            "run",
            "--engine",
            "null",
            "--runtime",
            "300ms",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    succeeded(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("a file of fathom's own"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    assert!(
        r["disks"].as_array().is_none_or(|d| d.is_empty()),
        "{}",
        r["disks"]
    );
    let text = fathom()
        .current_dir(dir.path())
        .args(["run", "--engine", "null", "--runtime", "300ms"])
        .output()
        .unwrap();
    succeeded(&text);
    let said = String::from_utf8_lossy(&text.stdout);
    assert!(!said.contains("  disk "), "{said}");
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn time_bound_run_has_per_second_intervals() {
    let dir = tempdir();
    let doc = run_json(&[
        dir.path().to_str().unwrap(),
        "--size",
        "8m",
        "--runtime",
        "2s",
        "--ramp",
        "500ms",
        "--iodepth",
        "4",
    ]);
    let w = &doc["results"][0];
    assert_eq!(
        f(&w["runtime_s"]),
        2.0,
        "a run that reaches its deadline measures exactly the runtime"
    );
    let read = &w["total"]["read"];
    check_direction(read, 4096, 2.0);
    let intervals = read["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 2);
    for (i, iv) in intervals.iter().enumerate() {
        assert_eq!(f(&iv["t_s"]), i as f64);
        assert_eq!(f(&iv["dur_s"]), 1.0);
        assert!(u(&iv["ios"]) > 0);
        assert!(u(&iv["p99_ns"]) > 0);
    }
    let cpu = &w["cpu"];
    assert!(f(&cpu["user_s"]) + f(&cpu["sys_s"]) > 0.0);
    assert!(f(&cpu["per_io_us"]) > 0.0);
}

#[test]
fn several_targets_are_reported_each_and_merged() {
    let dir = tempdir();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let doc = run_json(&[a, b, "--size", "2m", "--numjobs", "2", "--iodepth", "2"]);
    let w = &doc["results"][0];
    let targets = w["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    assert_eq!(targets[0]["name"], a);
    assert_eq!(targets[1]["name"], b);
    let mut merged = fathom::measure::histogram::LatencyHistogram::new();
    let mut ios = 0;
    for t in targets {
        ios += check_direction(&t["read"], 4096, f(&t["runtime_s"]));
        merged.add(
            &fathom::measure::histogram::LatencyHistogram::decode(
                t["read"]["histogram"].as_str().unwrap(),
            )
            .unwrap(),
        );
    }
    let total = &w["total"]["read"];
    assert_eq!(u(&total["ios"]), ios);
    assert_eq!(merged.count(), ios);
    let total_hist =
        fathom::measure::histogram::LatencyHistogram::decode(total["histogram"].as_str().unwrap())
            .unwrap();
    assert_eq!(
        merged.summary(),
        total_hist.summary(),
        "total histogram is the merge of the targets'"
    );
    let s = merged.summary();
    assert_eq!(u(&total["lat_ns"]["p99"]), s.p99);
    assert_eq!(u(&total["lat_ns"]["max"]), s.max);
}

#[test]
fn written_blocks_are_random_and_distinct() {
    let dir = tempdir();
    let file = dir.path().join("zeros");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--rw",
        "write",
        "--bs",
        "4k",
        "--overwrite",
    ]);
    assert_eq!(u(&doc["results"][0]["total"]["write"]["ios"]), 256);
    let data = std::fs::read(&file).unwrap();
    let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
    assert_eq!(blocks.len(), 256, "every written block is different");
    let zeros = data.iter().filter(|&&b| b == 0).count();
    assert!(
        zeros < data.len() / 100,
        "written data is not zeros ({zeros} zero bytes)"
    );
}

#[test]
fn fsync_zipf_offset_and_buffered_work() {
    let dir = tempdir();
    let file = dir.path().join("f");
    let file = file.to_str().unwrap();
    let doc = run_json(&[
        file,
        "--rw",
        "randwrite",
        "--size",
        "1m",
        "--fsync",
        "8",
        "--iodepth",
        "4",
    ]);
    assert_eq!(doc["results"][0]["spec"]["fsync"], 8);
    let doc = run_json(&[
        file,
        "--random-distribution",
        "zipf:1.1",
        "--size",
        "1m",
        "--offset",
        "64k",
        "--buffered",
    ]);
    let spec = &doc["results"][0]["spec"];
    assert_eq!(spec["random_distribution"]["kind"], "zipf");
    assert_eq!(spec["direct"], false);
    assert_eq!(u(&spec["offset"]), 65536);
    assert_eq!(u(&doc["results"][0]["total"]["read"]["ios"]), 256);
}

#[test]
fn same_seed_repeats_the_same_offsets() {
    // Two size-bound randwrite passes with the same seed write the same
    // blocks in the same order: the files end up identical.
    let dir = tempdir();
    let mut contents = Vec::new();
    for name in ["x", "y"] {
        let file = dir.path().join(name);
        std::fs::write(&file, vec![0u8; 256 << 10]).unwrap();
        run_json(&[
            file.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--seed",
            "42",
            "--overwrite",
        ]);
        contents.push(std::fs::read(&file).unwrap());
    }
    assert_eq!(contents[0], contents[1]);
}

#[test]
fn text_output_is_a_table_and_output_file_gets_json() {
    let dir = tempdir();
    let result = dir.path().join("result.json");
    let out = run(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        "1m",
        "--output-format",
        "json",
        "-o",
        result.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("IOPS") && text.contains("p99.99"), "{text}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(doc["schema"], 2);
    assert_eq!(entries(dir.path()), vec!["result.json"]);
}

#[test]
fn keep_keeps_the_created_file() {
    let dir = tempdir();
    run_json(&[dir.path().to_str().unwrap(), "--size", "1m", "--keep"]);
    let names = entries(dir.path());
    assert_eq!(names.len(), 1);
    assert_eq!(
        std::fs::metadata(dir.path().join(&names[0])).unwrap().len(),
        1 << 20
    );
}

/// A mix issues reads and writes in the share `--rwmix-read` asks for.
#[test]
fn a_mix_reads_the_share_it_was_asked_for() {
    let dir = tempdir();
    let file = dir.path().join("mix");
    // 1%: a draw that reads on `<=` instead of `<` reads 2%.
    for (pct, share) in [("70", 0.70), ("25", 0.25), ("1", 0.01)] {
        let doc = run_json(&[
            file.to_str().unwrap(),
            "--engine",
            "null",
            "--rw",
            "randrw",
            "--rwmix-read",
            pct,
            "--size",
            "16m",
            "--bs",
            "1k",
        ]);
        let total = &doc["results"][0]["total"];
        let (reads, writes) = (u(&total["read"]["ios"]), u(&total["write"]["ios"]));
        // 16,384 I/Os drawn at random: the share is within 5 standard
        // deviations of the mix.
        let n = (reads + writes) as f64;
        let got = reads as f64 / n;
        let sigma = (share * (1.0 - share) / n).sqrt();
        assert!(
            (got - share).abs() < 5.0 * sigma,
            "--rwmix-read {pct}: {got}"
        );
    }
}

/// A run of a second and a half (a null engine at 1 ms an I/O, 1,500 I/Os):
/// its last, partial second is counted, in the totals and as an interval
/// of half a second.
#[test]
fn the_last_partial_second_is_counted_with_its_length() {
    let dir = tempdir();
    let file = dir.path().join("partial");
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "1ms",
        "--rw",
        "read",
        "--bs",
        "512",
        "--size",
        "750k",
    ]);
    let w = &doc["results"][0];
    let read = &w["total"]["read"];
    assert_eq!(u(&read["ios"]), 1500);
    let intervals = read["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 2, "{intervals:?}");
    let covered: f64 = intervals.iter().map(|i| f(&i["dur_s"])).sum();
    let runtime = f(&w["runtime_s"]);
    assert!(
        (covered - runtime).abs() < 0.01,
        "intervals cover {covered} s of {runtime} s"
    );
    let last = intervals.last().unwrap();
    assert!(f(&last["dur_s"]) > 0.0 && f(&last["dur_s"]) < 1.0, "{last}");
}

/// A device that answers nothing for the last half second (a 2 s service
/// time, a 1.5 s run): that half second is an interval of 0 I/Os, so that
/// the intervals cover the whole run and the stall shows.
#[test]
fn a_stall_through_the_end_is_an_interval_of_nothing() {
    let dir = tempdir();
    let file = dir.path().join("stall");
    let doc = run_json(&[
        file.to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "2s",
        "--runtime",
        "1.5s",
        "--size",
        "1m",
    ]);
    let w = &doc["results"][0];
    let read = &w["total"]["read"];
    assert_eq!(u(&read["ios"]), 0);
    let intervals = read["intervals"].as_array().unwrap();
    let durations: Vec<f64> = intervals.iter().map(|i| f(&i["dur_s"])).collect();
    assert_eq!(durations.len(), 2, "{durations:?}");
    assert!((durations[1] - 0.5).abs() < 0.01, "{durations:?}");
}

#[test]
fn repeats_run_one_after_another_and_the_pick_is_the_one_reported() {
    let dir = tempdir();
    let file = dir.path().join("data");
    for (pick, choose) in [
        (
            "best",
            (|bw: &mut Vec<f64>| *bw.last().unwrap()) as fn(&mut Vec<f64>) -> f64,
        ),
        ("median", |bw: &mut Vec<f64>| bw[(bw.len() - 1) / 2]),
    ] {
        let doc = run_json(&[
            file.to_str().unwrap(),
            "--size",
            "4m",
            "--buffered",
            "--runtime",
            "200ms",
            "--repeat",
            "3",
            "--pick",
            pick,
        ]);
        let w = &doc["results"][0];
        let repeats = &w["repeats"];
        assert_eq!(repeats["pick"], pick);
        let runs = repeats["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3, "{repeats}");
        let mut bw: Vec<f64> = runs.iter().map(|r| f(&r["bw_bytes"])).collect();
        let chosen = u(&repeats["chosen"]) as usize;
        // The result is the repeat named, whose figures are the pick's.
        assert_eq!(
            f(&runs[chosen]["bw_bytes"]),
            f(&w["total"]["read"]["bw_bytes"])
        );
        bw.sort_by(f64::total_cmp);
        assert_eq!(
            f(&runs[chosen]["bw_bytes"]),
            choose(&mut bw),
            "{pick}: {repeats}"
        );
        assert!(runs.iter().all(|r| f(&r["runtime_s"]) > 0.1));
        // Every format says which repeat it shows and what the others did.
        let saved = dir.path().join("repeats.json");
        std::fs::write(&saved, doc.to_string()).unwrap();
        for format in ["text", "markdown", "html"] {
            let out = run_ok(&["report", saved.to_str().unwrap(), "--output-format", format]);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains(&format!(
                    "{pick} of 3 repeats by bandwidth: repeat {}",
                    chosen + 1
                )),
                "{format}: {text}"
            );
        }
    }
    // The plan counts every repeat.
    let out = run_ok(&[
        "run",
        "--preset",
        "desktop",
        file.to_str().unwrap(),
        "--dry-run",
    ]);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(plan.contains("8 runs (5 repeats each), about 4m"), "{plan}");
    // Without a target, the current directory, named by its path.
    let dir = tempdir();
    let out = fathom()
        .current_dir(dir.path())
        .args(["run", "--preset", "quick", "--dry-run"])
        .output()
        .unwrap();
    succeeded(&out);
    let plan = String::from_utf8_lossy(&out.stdout);
    let here = dir.path().canonicalize().unwrap();
    assert!(plan.contains(&format!("  {}  ", here.display())), "{plan}");
    refused(&["run", ".", "--repeat", "0"], "--repeat 0");
    refused(&["run", ".", "--repeat", "3", "--pick", "worst"], "worst");
}
