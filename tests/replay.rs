//! `fathom replay`: traces made by fio, blkparse, a CSV and fathom itself
//! are played I/O for I/O at their times (or faster), latency is counted
//! from when each I/O was due, a slow target makes late I/Os and never a
//! shorter trace, and bad traces are refused before anything is created.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::*;
use fathom::trace::{self, Op};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Runs `fathom replay ARGS --output-format json`, asserting success.
fn replay_json(args: &[&str]) -> Value {
    let mut full = vec!["replay"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--output-format", "json"]);
    json_out(&run(&full))
}

/// These tests run one at a time: those that judge when I/Os were issued
/// would judge the load of the others (Chromium, a capacity search) on a
/// machine of two CPUs.
static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn timing() -> std::sync::MutexGuard<'static, ()> {
    TIMING.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a replay is held to on any host, busy or not, from the trace's
/// times, the recording's issue times, and the result's count of late I/Os:
///
/// - its pace is the trace's at `speed`: the median I/O's gap from the one
///   before is the trace's gap within 1 ms (an I/O descheduled past its
///   time lengthens one gap and shortens the next; the median keeps both
///   out);
/// - an I/O it issued late is counted late: none is more than 2 ms behind
///   where the median I/O puts the replay's time zero without `late_ios`
///   counting it (zero is at or before the median's, so that is at least
///   1 ms past its due time, with a millisecond to spare).
///
/// How many I/Os an idle host issues within 1 ms is a figure, not a
/// property: bench/record measures it.
fn kept_to_the_trace(traced: &[u64], issued: &[u64], speed: f64, late_ios: u64) {
    assert_eq!(traced.len(), issued.len());
    let due: Vec<i64> = traced.iter().map(|&t| (t as f64 / speed) as i64).collect();
    let issued: Vec<i64> = issued.iter().map(|&t| t as i64).collect();
    let mut gap_errors: Vec<i64> = due
        .windows(2)
        .zip(issued.windows(2))
        .map(|(d, i)| ((i[1] - i[0]) - (d[1] - d[0])).abs())
        .collect();
    gap_errors.sort_unstable();
    let median_gap_error = gap_errors[gap_errors.len() / 2];
    assert!(
        median_gap_error < 1_000_000,
        "at {speed}x the median gap is {median_gap_error} ns off the trace's"
    );
    let mut offsets: Vec<i64> = issued.iter().zip(&due).map(|(i, d)| i - d).collect();
    offsets.sort_unstable();
    let zero = offsets[offsets.len() / 2];
    let seen_late = offsets.iter().filter(|&&o| o - zero > 2_000_000).count() as u64;
    assert!(
        seen_late <= late_ios,
        "at {speed}x {seen_late} I/Os issued over 2 ms late, {late_ios} counted late"
    );
}

fn result(doc: &Value) -> &Value {
    &doc["results"][0]
}

/// A CSV trace of `n` I/Os `gap_ms` apart, alternating reads and writes of
/// 4 KiB over the first `n` blocks.
fn csv_trace(path: &Path, n: u64, gap_ms: u64) {
    let mut text = String::from("time_ns,offset,length,rw\n");
    for i in 0..n {
        let rw = if i % 2 == 0 { "read" } else { "write" };
        text.push_str(&format!(
            "{},{},4096,{rw}\n",
            i * gap_ms * 1_000_000,
            i * 4096
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// fio runs a mixed job on `data` at `iops` a second (so that its I/Os
/// have times worth keeping) for `runtime` seconds and logs it into `log`;
/// false (saying so) where fio is missing or fails.
fn fio_writes_an_iolog(data: &Path, log: &Path, size: &str, iops: u32, runtime: &str) -> bool {
    let fio = Command::new("fio")
        .args([
            "--name=mixed",
            &format!("--filename={}", data.display()),
            &format!("--size={size}"),
            "--bs=4k",
            "--rw=randrw",
            &format!("--rate_iops={iops}"),
            &format!("--runtime={runtime}"),
            "--time_based",
            "--ioengine=psync",
            &format!("--write_iolog={}", log.display()),
        ])
        .output();
    let ok = fio.is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: fio is not installed or failed");
    }
    ok
}

#[test]
fn fios_iolog_is_replayed_io_for_io_at_its_times() {
    let _serial = timing();
    let dir = tempdir();
    let data = dir.path().join("data");
    let log = dir.path().join("io.log");
    if !fio_writes_an_iolog(&data, &log, "4m", 100, "1") {
        return;
    }
    std::fs::remove_file(&data).unwrap();
    let recording = dir.path().join("replayed.trace");
    let target = dir.path().join("target");
    let doc = replay_json(&[
        log.to_str().unwrap(),
        target.to_str().unwrap(),
        "--record",
        recording.to_str().unwrap(),
    ]);
    let fio_trace = trace::load(&log).unwrap();
    let ours = trace::load(&recording).unwrap();
    assert_eq!(fio_trace.format, "fio iolog v3");
    let wanted: Vec<_> = fio_trace
        .ios
        .iter()
        .map(|io| (io.op, io.offset, io.len))
        .collect();
    let issued: Vec<_> = ours
        .ios
        .iter()
        .map(|io| (io.op, io.offset, io.len))
        .collect();
    assert!(wanted.len() > 150, "fio logged {} I/Os", wanted.len());
    assert_eq!(issued, wanted, "the same I/Os in the same order");
    // Each at its time: the trace's pace, and every late one counted.
    let traced: Vec<u64> = fio_trace.ios.iter().map(|io| io.t_ns).collect();
    let issued: Vec<u64> = ours.ios.iter().map(|io| io.t_ns).collect();
    kept_to_the_trace(
        &traced,
        &issued,
        1.0,
        u(&result(&doc)["replay"]["late_ios"]),
    );
    let r = result(&doc);
    assert_eq!(u(&r["replay"]["trace_ios"]), wanted.len() as u64);
    assert_eq!(r["spec"]["replay"]["format"], "fio iolog v3");
    let reads = wanted.iter().filter(|w| w.0 == Op::Read).count() as u64;
    assert_eq!(u(&r["total"]["read"]["ios"]), reads);
    // Latency from when each I/O was due, as a rated run has it.
    assert!(r["total"]["read"]["sched_lat_ns"]["p50"].as_u64().unwrap() > 0);
}

/// A fio job file with `read_iolog` runs as fio runs it: the log's I/Os
/// on the file it names, as many of each as fio replays; its replay
/// options become the replay's pace; a file of more jobs is refused.
#[test]
fn a_fio_job_that_reads_an_iolog_plays_it() {
    let _serial = timing();
    let dir = tempdir();
    let data = dir.path().join("data");
    let log = dir.path().join("io.log");
    if !fio_writes_an_iolog(&data, &log, "1m", 200, "0.3") {
        return;
    }
    let logged = trace::load(&log).unwrap();
    let count = |op: Op| logged.ios.iter().filter(|io| io.op == op).count() as u64;
    let (reads, writes) = (count(Op::Read), count(Op::Write));
    assert!(reads > 10 && writes > 10, "{reads} {writes}");
    let job = |extra: &str| {
        let path = dir.path().join("play.fio");
        std::fs::write(
            &path,
            format!(
                "[play]\nread_iolog={}\nioengine=io_uring\niodepth=4\ndirect=1\n{extra}",
                log.display()
            ),
        )
        .unwrap();
        path
    };
    // What fio itself does with the job file.
    let fio = Command::new("fio")
        .args([job("").to_str().unwrap(), "--output-format=json"])
        .output()
        .unwrap();
    let fio: Value = serde_json::from_slice(&fio.stdout).unwrap();
    assert_eq!(u(&fio["jobs"][0]["read"]["total_ios"]), reads);
    assert_eq!(u(&fio["jobs"][0]["write"]["total_ios"]), writes);
    for (extra, speed) in [
        ("", Some(1.0)),
        ("replay_time_scale=200\n", Some(2.0)),
        ("replay_no_stall=1\n", None),
    ] {
        let path = job(extra);
        let doc = json_out(&run(&[
            "run",
            path.to_str().unwrap(),
            "--overwrite",
            "--output-format",
            "json",
        ]));
        let r = result(&doc);
        assert_eq!(r["spec"]["name"], "play", "{extra}");
        assert_eq!(r["spec"]["targets"][0], data.to_str().unwrap());
        assert_eq!(r["spec"]["replay"]["speed"].as_f64(), speed, "{extra}");
        assert_eq!(u(&r["total"]["read"]["ios"]), reads, "{extra}");
        assert_eq!(u(&r["total"]["write"]["ios"]), writes, "{extra}");
    }
    let two = dir.path().join("two.fio");
    std::fs::write(
        &two,
        format!(
            "[play]\nread_iolog={}\n[other]\nfilename={}\nsize=1m\n",
            log.display(),
            data.display()
        ),
    )
    .unwrap();
    refused(
        &["run", two.to_str().unwrap()],
        "read_iolog: fathom plays an iolog as a run of its own",
    );
    refused(
        &["run", job("replay_time_scale=0\n").to_str().unwrap()],
        "replay_time_scale=0: a whole number from 1",
    );
}

#[test]
fn blkparse_text_is_replayed_with_the_original_latency_beside() {
    let _serial = timing();
    let dir = tempdir();
    let trace = dir.path().join("blk.txt");
    std::fs::write(
        &trace,
        "  8,16   1        1     0.000000000  1200  Q   R 2048 + 8 [db]
  8,16   1        2     0.000010000  1200  D   R 2048 + 8 [db]
  8,16   1        3     0.000500000     0  C   R 2048 + 8 [0]
  8,16   1        4     0.001000000  1200  Q  WS 4096 + 16 [db]
  8,16   1        5     0.003000000     0  C  WS 4096 + 16 [0]
  8,16   1        6     0.004000000  1200  Q FWS [db]
  8,16   1        7     0.005000000  1200  Q   R 0 + 8 [db]
  8,16   1        8     0.007000000     0  C   R 0 + 8 [0]
CPU1 (8,16):
 Reads Queued:           2,        8KiB
",
    )
    .unwrap();
    let target = dir.path().join("t");
    let out = run(&["replay", trace.to_str().unwrap(), target.to_str().unwrap()]);
    succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("replay of blk.txt (blkparse) at 1x: 4 I/Os"),
        "{text}"
    );
    assert!(
        text.contains("read latency, replayed against recorded"),
        "{text}"
    );
    let doc = replay_json(&[trace.to_str().unwrap(), target.to_str().unwrap()]);
    let r = result(&doc);
    assert_eq!(u(&r["total"]["read"]["ios"]), 2);
    assert_eq!(u(&r["total"]["write"]["ios"]), 1);
    assert_eq!(u(&r["total"]["write"]["bytes"]), 8192);
    let original = &r["replay"]["original"];
    // 0.5 ms and 2 ms reads, a 2 ms write, as traced.
    assert_eq!(u(&original["write"]["p50"]) / 100_000, 20, "{original}");
    assert!(u(&original["read"]["max"]) >= 1_990_000, "{original}");
    // The flush of the trace was made.
    assert_eq!(u(&r["sync"]["count"]), 1, "{r}");
    assert!(!target.exists(), "the file fathom made is removed");
}

#[test]
fn twice_the_speed_takes_half_the_time() {
    let _serial = timing();
    let dir = tempdir();
    let trace = dir.path().join("t.csv");
    csv_trace(&trace, 41, 25);
    let target = dir.path().join("x");
    let traced: Vec<u64> = trace::load(&trace)
        .unwrap()
        .ios
        .iter()
        .map(|io| io.t_ns)
        .collect();
    let issued = |speed: &str| {
        let recording = dir.path().join(format!("{speed}.trace"));
        let doc = replay_json(&[
            trace.to_str().unwrap(),
            target.to_str().unwrap(),
            "--speed",
            speed,
            "--engine",
            "null",
            "--record",
            recording.to_str().unwrap(),
        ]);
        let t = trace::load(&recording).unwrap();
        assert_eq!(t.ios.len(), 41);
        let late = u(&result(&doc)["replay"]["late_ios"]);
        (t.ios.iter().map(|io| io.t_ns).collect::<Vec<u64>>(), late)
    };
    // 25 ms apart at 1x, 12.5 ms at 2x: the spans one second and a half.
    for (speed, factor) in [("1x", 1.0), ("2x", 2.0)] {
        let (times, late) = issued(speed);
        kept_to_the_trace(&traced, &times, factor, late);
    }
}

#[test]
fn a_slow_target_makes_late_ios_and_never_shortens_the_trace() {
    let _serial = timing();
    let dir = tempdir();
    let trace = dir.path().join("t.csv");
    // 100 I/Os a millisecond apart on a target that takes 4 ms each, one
    // at a time: it cannot keep up.
    csv_trace(&trace, 100, 1);
    let target = dir.path().join("x");
    let doc = replay_json(&[
        trace.to_str().unwrap(),
        target.to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "4ms",
        "--iodepth",
        "1",
    ]);
    let r = result(&doc);
    let done = u(&r["total"]["read"]["ios"]) + u(&r["total"]["write"]["ios"]);
    assert_eq!(done, 100, "every I/O of the trace issued");
    assert!(f(&r["runtime_s"]) >= 0.39, "{}", r["runtime_s"]);
    assert!(u(&r["replay"]["late_ios"]) > 80, "{}", r["replay"]);
    // The last I/Os waited for the device: from when they were due, far
    // more than the 4 ms each took.
    let sched = u(&r["total"]["write"]["sched_lat_ns"]["max"]);
    let service = u(&r["total"]["write"]["lat_ns"]["max"]);
    assert!(sched > 200_000_000, "{sched}");
    assert!(service < 50_000_000, "{service}");
    // As fast as possible, the same I/Os, none late.
    let doc = replay_json(&[
        trace.to_str().unwrap(),
        target.to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "4ms",
        "--as-fast-as-possible",
        "--iodepth",
        "4",
    ]);
    let r = result(&doc);
    assert_eq!(u(&r["replay"]["late_ios"]), 0);
    assert!(r["total"]["read"].get("sched_lat_ns").is_none());
}

#[test]
fn a_recorded_run_replays_as_it_ran() {
    let _serial = timing();
    let dir = tempdir();
    let target = dir.path().join("data");
    let recording = dir.path().join("run.trace");
    let doc = run_json(&[
        target.to_str().unwrap(),
        "--rw",
        "randrw",
        "--size",
        "1m",
        "--bs",
        "8k",
        "--fsync",
        "16",
        "--record",
        recording.to_str().unwrap(),
    ]);
    let ran = &doc["results"][0]["total"];
    let t = trace::load(&recording).unwrap();
    assert_eq!(t.format, "fathom recording");
    let count = |op| t.ios.iter().filter(|io| io.op == op).count() as u64;
    assert_eq!(count(Op::Read), u(&ran["read"]["ios"]));
    assert_eq!(count(Op::Write), u(&ran["write"]["ios"]));
    assert_eq!(count(Op::Sync), u(&doc["results"][0]["sync"]["count"]));
    assert!(t.ios.iter().all(|io| io.op == Op::Sync || io.len == 8192));
    let again = dir.path().join("again");
    let doc = replay_json(&[
        recording.to_str().unwrap(),
        again.to_str().unwrap(),
        "--as-fast-as-possible",
    ]);
    let r = &doc["results"][0]["total"];
    assert_eq!(u(&r["read"]["ios"]), u(&ran["read"]["ios"]));
    assert_eq!(u(&r["write"]["bytes"]), u(&ran["write"]["bytes"]));
}

#[test]
fn bad_traces_and_flags_are_refused_before_anything_is_created() {
    let _serial = timing();
    let dir = tempdir();
    let good = dir.path().join("good.csv");
    csv_trace(&good, 4, 1);
    let two = dir.path().join("two.csv");
    std::fs::write(
        &two,
        "time,offset,length,rw,device\n0,0,4096,read,a\n0.001,0,4096,read,b\n",
    )
    .unwrap();
    let bad = dir.path().join("bad.log");
    std::fs::write(&bad, "fio version 3 iolog\n10 /f add\n20 /f read 0\n").unwrap();
    let untimed = dir.path().join("v2.log");
    std::fs::write(
        &untimed,
        "fio version 2 iolog\n/f add\n/f read 0 4096\n/f read 4096 4096\n",
    )
    .unwrap();
    let small = dir.path().join("small");
    std::fs::write(&small, vec![0u8; 4096]).unwrap();
    let target = dir.path().join("new");
    let t = target.to_str().unwrap();
    let missing = dir.path().join("missing.log");
    for (args, needle) in [
        (vec![missing.to_str().unwrap(), t], "cannot read"),
        (
            vec![bad.to_str().unwrap(), t],
            "bad.log:3: 'read' needs an offset and a length",
        ),
        (
            vec![two.to_str().unwrap(), t],
            "names 2 devices (a, b) and 1 target was given",
        ),
        (vec![good.to_str().unwrap(), t, "--speed", "0"], "--speed"),
        (
            vec![untimed.to_str().unwrap(), t],
            "a fio iolog v2 has no times to play it at: play it --as-fast-as-possible",
        ),
        (vec![good.to_str().unwrap(), t, "--speed=-2x"], "--speed"),
        (
            vec![good.to_str().unwrap(), t, "--map", "zz=new"],
            "has no device zz",
        ),
        (
            vec![
                good.to_str().unwrap(),
                small.to_str().unwrap(),
                "--overwrite",
            ],
            "past its end",
        ),
        // Writes in a trace are writes.
        (
            vec![good.to_str().unwrap(), small.to_str().unwrap(), "--wrap"],
            "refusing to write to an existing file fathom did not create",
        ),
        (
            vec![good.to_str().unwrap(), t, "--from", "1s", "--to", "1s"],
            "--to",
        ),
    ] {
        let mut full = vec!["replay"];
        full.extend_from_slice(&args);
        refused(&full, needle);
        assert!(!target.exists(), "{args:?} created the target");
    }
    // The file too small is left as it was; with --wrap it is played.
    assert_eq!(std::fs::read(&small).unwrap(), vec![0u8; 4096]);
    let doc = replay_json(&[
        good.to_str().unwrap(),
        small.to_str().unwrap(),
        "--overwrite",
        "--wrap",
    ]);
    assert_eq!(u(&result(&doc)["total"]["read"]["ios"]), 2);
    // Two devices on two targets, or one picked by --map.
    let a = dir.path().join("a");
    let doc = replay_json(&[two.to_str().unwrap(), t, a.to_str().unwrap()]);
    assert_eq!(u(&result(&doc)["total"]["read"]["ios"]), 2);
    let doc = replay_json(&[two.to_str().unwrap(), t, "--map", &format!("b={t}")]);
    assert_eq!(u(&result(&doc)["total"]["read"]["ios"]), 1);
    // A log without times plays as fast as possible.
    let doc = replay_json(&[untimed.to_str().unwrap(), t, "--as-fast-as-possible"]);
    assert_eq!(u(&result(&doc)["total"]["read"]["ios"]), 2);
}

#[test]
fn capacity_over_speed_finds_how_many_times_the_trace_fits() {
    let _serial = timing();
    let dir = tempdir();
    let trace = dir.path().join("t.csv");
    // 250 I/Os a second; a target of two slots of 1 ms takes 2,000: the
    // trace fits 8 times over.
    csv_trace(&trace, 50, 4);
    let out = run(&[
        "capacity",
        trace.to_str().unwrap(),
        dir.path().join("x").to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "1ms",
        "--iodepth",
        "2",
        "--slo",
        "p99:20ms",
        "--precision",
        "5%",
        "--output-format",
        "json",
    ]);
    let doc = json_out(&out);
    let c = &doc["results"][0];
    let at_1x = f(&c["trace_iops"]);
    assert!((240.0..260.0).contains(&at_1x), "{at_1x}");
    let fits = f(&c["answer_iops"]) / at_1x;
    assert_eq!(c["spec"]["replay"]["format"], "csv");
    // A busy machine's late wake-ups make the null target slower; the
    // search then says that the host, not the target, ended it, and the
    // answer is a floor.
    if c["end"] == "host_limited" {
        eprintln!("the host ended the search (fits {fits} times): the bound is not judged");
        assert!(fits <= 8.5, "fits {fits} times: {c}");
        return;
    }
    // At most 8.
    assert!((5.0..8.5).contains(&fits), "fits {fits} times: {c}");
}

#[test]
fn the_html_report_draws_the_replayed_latency_against_the_recorded() {
    let _serial = timing();
    let dir = tempdir();
    let trace = dir.path().join("t.csv");
    // Three seconds of I/Os played three times as fast, each recorded at
    // 2 ms.
    let mut text = String::from("time_ns,offset,length,rw,latency_ns\n");
    for i in 0..300u64 {
        text.push_str(&format!(
            "{},{},4096,read,2000000\n",
            i * 30_000_000,
            i * 4096
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let result = dir.path().join("r.json");
    let out = run(&[
        "replay",
        trace.to_str().unwrap(),
        dir.path().join("x").to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "100us",
        "--speed",
        "3x",
        "--output-format",
        "json",
        "-o",
        result.to_str().unwrap(),
    ]);
    succeeded(&out);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let seconds = doc["results"][0]["replay"]["original_seconds"]
        .as_array()
        .unwrap();
    assert_eq!(seconds.len(), 3, "{seconds:?}");
    assert_eq!(u(&seconds[0]["ios"]), 100);
    let html = dir.path().join("r.html");
    let out = run(&[
        "report",
        result.to_str().unwrap(),
        "--output-format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    succeeded(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("p99 as recorded"),
        "the recorded series is drawn"
    );
    assert!(page.contains("read latency, replayed against recorded"));
    let charts = page.matches("<figure class=\"chart\"").count();
    assert!(charts >= 2, "{charts} charts");
    assert_charts_drawn(&html, charts);
}

/// A trace longer than `--runtime` says how much of it was played, not
/// only how much there was to play.
#[test]
fn a_trace_cut_by_the_runtime_says_how_much_was_played() {
    let dir = tempdir();
    let trace = dir.path().join("t.csv");
    std::fs::write(
        &trace,
        "time_ns,offset,length,rw\n0,0,4096,r\n10000000000,4096,4096,r\n",
    )
    .unwrap();
    let target = dir.path().join("d.dat");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let args = [
        "replay",
        trace.to_str().unwrap(),
        target.to_str().unwrap(),
        "--engine",
        "null",
        "--runtime",
        "1s",
    ];
    let out = run_ok(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 of its 2 I/Os played"), "{text}");
    let doc = json_out(&run(&[&args[..], &["--output-format", "json"]].concat()));
    let r = &doc["results"][0]["replay"];
    assert_eq!((u(&r["trace_ios"]), u(&r["issued_ios"])), (2, 1), "{r}");
}

/// How a test changes a trace while it plays.
#[derive(Clone, Copy, PartialEq)]
enum Change {
    /// Cut to half its length.
    Cut,
    /// Rewritten, its reads now writes.
    Rewritten,
}

/// Replays a trace of `n` 4 KiB reads `gap_ns` apart on a 1 MiB file
/// with the null engine, makes `change` to the trace 300 ms in, and gives
/// the replay's exit code, its stderr and the reads its result kept.
fn replay_changed(n: u64, gap_ns: u64, change: Change) -> (Option<i32>, String, u64) {
    let dir = tempdir();
    let trace = dir.path().join("t.csv");
    let mut text = String::from("time_ns,offset,length,rw\n");
    for i in 0..n {
        text.push_str(&format!("{},{},4096,r\n", i * gap_ns, (i % 256) * 4096));
    }
    std::fs::write(&trace, &text).unwrap();
    let target = dir.path().join("d.dat");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let out = dir.path().join("r.json");
    let child = fathom()
        .args(["replay", trace.to_str().unwrap(), target.to_str().unwrap()])
        .args(["--engine", "null", "-o", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_workers(child.id());
    std::thread::sleep(std::time::Duration::from_millis(300));
    match change {
        Change::Cut => std::fs::OpenOptions::new()
            .write(true)
            .open(&trace)
            .unwrap()
            .set_len(text.len() as u64 / 2)
            .unwrap(),
        Change::Rewritten => std::fs::write(&trace, text.replace(",r\n", ",w\n")).unwrap(),
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (
        o.status.code(),
        err,
        u(&result(&doc)["total"]["read"]["ios"]),
    )
}

/// A trace cut short, or rewritten, while it plays stops the replay with
/// that error, and what it measured until then is reported and kept.
#[test]
fn a_trace_changed_while_it_plays_stops_the_replay_and_keeps_what_it_measured() {
    let _serial = timing();
    for change in [Change::Cut, Change::Rewritten] {
        // 300,000 reads 20 µs apart: 6 s at 1x, far more than the reader
        // takes ahead of the workers.
        let (code, err, played) = replay_changed(300_000, 20_000, change);
        assert_eq!(code, Some(1), "{err}");
        // A rewrite caught half done reads as a broken line of the trace
        // before the change itself is seen: either stops the replay.
        assert!(
            err.contains("changed since fathom first read it")
                || (change == Change::Rewritten
                    && err.contains("t.csv:")
                    && err.contains("stopped early")),
            "{err}"
        );
        assert!(played > 0 && played < 300_000, "{played} reads");
    }
}

/// A trace short enough for the reader to hold whole before it changes
/// still stops the replay when it is cut: the worker looks at the file
/// again as it plays, not only the reader.
#[test]
fn a_trace_read_whole_and_then_cut_stops_the_replay() {
    let _serial = timing();
    // 3,000 reads 1 ms apart: 3 s at 1x, read whole at once.
    let (code, err, played) = replay_changed(3_000, 1_000_000, Change::Cut);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("changed since fathom first read it"), "{err}");
    assert!(played > 0 && played < 3_000, "{played} reads");
}
