//! Watching a run while it runs: the scrape endpoint, the JSON lines and
//! the pushes hold what the result holds; a real Prometheus scrapes the
//! endpoint and computes quantiles from its histogram, a real Pushgateway
//! takes the pushes (each skipped, saying so, where it is not installed).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// GET `path` from `addr` over plain HTTP/1.0: the body, or None when
/// nothing answers.
fn get(addr: &str, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then(|| body.to_string())
}

/// The value of the first sample of `metric` whose labels contain `with`.
fn sample(text: &str, metric: &str, with: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) && l.contains(with))
        .find_map(|l| l.rsplit_once(' ')?.1.parse().ok())
}

/// fathom started with `args`, and the address it serves metrics at, read
/// from what it says on stderr.
fn serving(args: &[&str]) -> (Child, String) {
    let mut child = fathom()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fathom starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("fathom says where it serves").unwrap();
        if let Some(at) = line.split("http://").nth(1) {
            break at.trim_end_matches("/metrics").to_string();
        }
    };
    // The rest of stderr is drained so fathom never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

fn wait_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_endpoint_and_the_lines_hold_what_the_result_holds() {
    let dir = tempdir();
    let (lines, result) = (dir.path().join("live.jsonl"), dir.path().join("r.json"));
    let (mut child, addr) = serving(&[
        "run",
        "--engine",
        "null",
        "--rate-iops",
        "2000",
        "--runtime",
        "3s",
        "--name",
        "watched",
        "--metrics-listen",
        "127.0.0.1:0",
        "--live",
        lines.to_str().unwrap(),
        "-o",
        result.to_str().unwrap(),
    ]);
    let read = "workload=\"watched\",stream=\"watched\",direction=\"read\"";
    let text = wait_for(
        "a second's I/Os on the endpoint",
        Duration::from_secs(30),
        || {
            let text = get(&addr, "/metrics")?;
            (sample(&text, "fathom_ios_total", read)? > 0.0).then_some(text)
        },
    );
    assert_eq!(sample(&text, "fathom_up", ""), Some(1.0), "{text}");
    assert!(text.contains("phase=\"run 1 of 1: watched\""), "{text}");
    // A single run is under way once its first second is in: its share of
    // the planned 3 s, above 0 and below 1 until it ends.
    let progress = sample(&text, "fathom_progress_ratio", "").unwrap();
    assert!(progress > 0.0 && progress < 1.0, "{text}");
    let p99 = sample(
        &text,
        "fathom_latency_quantile_seconds",
        "window=\"run\",quantile=\"0.99\"",
    );
    assert!(p99.is_some_and(|p| p > 0.0), "{text}");
    let count = sample(&text, "fathom_latency_seconds_count", read).unwrap();
    let inf = sample(&text, "fathom_latency_seconds_bucket", "le=\"+Inf\"").unwrap();
    assert_eq!(count, inf, "{text}");
    assert_eq!(get(&addr, "/"), Some("fathom serves /metrics\n".into()));
    assert!(child.wait().unwrap().success());
    assert!(
        get(&addr, "/metrics").is_none(),
        "the endpoint ends with the run"
    );

    // Every line is whole JSON, and the seconds add up to the result.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let total = u(&doc["results"][0]["total"]["read"]["ios"]);
    let text = std::fs::read_to_string(&lines).unwrap();
    let seconds: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(seconds.len() >= 3, "{text}");
    let summed: u64 = seconds
        .iter()
        .map(|s| u(&s["directions"]["read"]["ios"]))
        .sum();
    assert_eq!(summed, total, "the lines' I/Os are the result's");
    assert!(seconds.iter().all(|s| {
        s["directions"]["read"]["histogram"]
            .as_str()
            .is_some_and(|h| h.starts_with("HIST"))
    }));
}

#[test]
fn bad_watch_flags_are_refused_before_anything_runs() {
    let dir = tempdir();
    let target = dir.path().join("t.dat");
    let t = target.to_str().unwrap();
    refused(
        &["run", t, "--metrics-listen", "nowhere"],
        "--metrics-listen nowhere",
    );
    refused(&["run", t, "--metrics-push", "ftp://x"], "http://");
    refused(
        &["run", t, "--live", "/no/such/dir/l.jsonl"],
        "--live /no/such/dir",
    );
    // A port in use, a gateway nothing answers at.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    refused(&["run", t, "--metrics-listen", &addr], "cannot listen");
    let nobody = format!("http://127.0.0.1:{}", free_port());
    refused(&["run", t, "--metrics-push", &nobody], "cannot push");
    assert!(!target.exists(), "nothing created");
}

/// A server of the machine's, started on 127.0.0.1 and ended when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(program: &str, args: &[&str], dir: &Path) -> Option<Server> {
    match Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => Some(Server(child)),
        Err(e) => {
            eprintln!("SKIP: {program} cannot be run ({e}); apt-get install {program}");
            None
        }
    }
}

/// `query` for a Prometheus API URL.
fn encoded(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The first value of an instant query's vector, if it has one yet.
fn first_value(prometheus: &str, query: &str) -> Option<f64> {
    let body = get(
        prometheus,
        &format!("/api/v1/query?query={}", encoded(query)),
    )?;
    let v: Value = serde_json::from_str(&body).ok()?;
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

/// Every PromQL query of the shipped dashboard, its variables set to
/// "every host and workload" and its rate window to 10 s.
fn dashboard_queries() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/grafana-fathom.json"
    ))
    .unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| {
            t["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "10s")
                .replace("$host", ".*")
                .replace("$workload", ".*")
        })
        .collect()
}

/// A run of known rate, scraped by a real Prometheus each second: its
/// `rate()` is fathom's rate, `histogram_quantile` of the buckets is
/// fathom's exact p99 within a bucket's width, and every query of the
/// dashboard returns data.
#[test]
fn a_real_prometheus_scrapes_the_run_and_takes_quantiles_of_its_histogram() {
    let dir = tempdir();
    let result = dir.path().join("r.json");
    let (mut child, addr) = serving(&[
        "run",
        "--engine",
        "null",
        "--null-latency",
        "200us",
        "--iodepth",
        "4",
        "--rate-iops",
        "1000",
        "--runtime",
        "20s",
        "--metrics-listen",
        "127.0.0.1:0",
        "-o",
        result.to_str().unwrap(),
    ]);
    let port = free_port();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: fathom\n    static_configs:\n      - targets: ['{addr}']\n"
        ),
    )
    .unwrap();
    let listen = format!("127.0.0.1:{port}");
    let Some(_prometheus) = start(
        "prometheus",
        &[
            &format!("--config.file={}", config.display()),
            &format!("--storage.tsdb.path={}", dir.path().join("tsdb").display()),
            &format!("--web.listen-address={listen}"),
        ],
        dir.path(),
    ) else {
        let _ = child.kill();
        return;
    };
    // Ten seconds of scrapes into the run.
    let rate = wait_for("ten seconds of scrapes", Duration::from_secs(60), || {
        first_value(&listen, "count_over_time(fathom_up[15s])").filter(|n| *n >= 11.0)?;
        first_value(&listen, "sum(rate(fathom_ios_total[10s]))")
    });
    // The whole run's buckets and exact p99, from one scrape.
    let p99 = "fathom_latency_quantile_seconds{window=\"run\",quantile=\"0.99\"}";
    let exact = first_value(&listen, p99).unwrap();
    let from_buckets = first_value(
        &listen,
        "histogram_quantile(0.99, sum by (le) (fathom_latency_seconds_bucket))",
    )
    .unwrap();
    // Four buckets a doubling: a bucket is at most 19% of its upper bound.
    assert!(
        (from_buckets - exact).abs() <= 0.19 * from_buckets.max(exact),
        "histogram_quantile {from_buckets} against the exact p99 {exact}"
    );
    assert!((0.0002..0.01).contains(&exact), "{exact}");
    for query in dashboard_queries() {
        let body = get(&listen, &format!("/api/v1/query?query={}", encoded(&query))).unwrap();
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], "success", "{query}: {body}");
        assert!(
            v["data"]["result"]
                .as_array()
                .is_some_and(|r| !r.is_empty()),
            "the dashboard's {query} returns no data: {body}"
        );
    }
    assert!(child.wait().unwrap().success());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let iops = f(&doc["results"][0]["total"]["read"]["iops"]);
    // The counters move once a second, when a second is complete: ten
    // seconds of scrapes hold nine or ten such steps depending on where
    // the scrapes fall, so besides 2% the rate may be off by one second's
    // I/Os over the window.
    let step = iops / 9.0;
    assert!(
        (rate - iops).abs() <= 0.02 * iops + step,
        "Prometheus' rate {rate} against fathom's {iops}"
    );
}

/// A Pushgateway on a free port of 127.0.0.1, answering, and its address.
fn pushgateway(dir: &Path) -> Option<(Server, String)> {
    let listen = format!("127.0.0.1:{}", free_port());
    let gateway = start(
        "prometheus-pushgateway",
        &[&format!("--web.listen-address={listen}")],
        dir,
    )?;
    wait_for("the Pushgateway to listen", Duration::from_secs(30), || {
        get(&listen, "/metrics")
    });
    Some((gateway, listen))
}

/// The verdict's name as the metrics say it ("host CPU"), from its key in
/// the JSON ("host"): on a busy host the verdict is not the device's.
fn limiter_name(by: &serde_json::Value) -> Option<&'static str> {
    let by: fathom::result::limit::Limiter = serde_json::from_value(by.clone()).ok()?;
    Some(by.name())
}

#[test]
fn a_real_pushgateway_takes_the_pushes_and_the_last_one_says_the_run_ended() {
    let dir = tempdir();
    let Some((_gateway, listen)) = pushgateway(dir.path()) else {
        return;
    };
    let out = run(&[
        "run",
        "--engine",
        "null",
        "--rate-iops",
        "1000",
        "--runtime",
        "1500ms",
        "--name",
        "pushed",
        "--metrics-push",
        &format!("http://{listen}"),
        "--output-format",
        "json",
    ]);
    let doc = json_out(&out);
    let total = u(&doc["results"][0]["total"]["read"]["ios"]);
    let text = get(&listen, "/metrics").unwrap();
    let ours = "job=\"fathom\"";
    assert_eq!(
        sample(&text, "fathom_ios_total", "workload=\"pushed\"").map(|v| v as u64),
        Some(total),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("fathom_up{") && l.contains(ours) && l.ends_with(" 0")),
        "{text}"
    );
    // The last verdict is what limited the run's figures, as the result
    // says it.
    let by = limiter_name(&doc["results"][0]["limited_by"]["by"]).unwrap();
    assert!(
        text.contains(&format!("verdict=\"pushed: limited by {by}\"")),
        "{text}"
    );
}

/// A gateway that goes away mid-run: the run goes on, and the result says
/// so in its notes.
#[test]
fn a_gateway_that_goes_away_mid_run_is_a_note_not_a_failure() {
    let dir = tempdir();
    let Some((gateway, listen)) = pushgateway(dir.path()) else {
        return;
    };
    let out_path = dir.path().join("r.json");
    let child = fathom()
        .args([
            "run",
            "--engine",
            "null",
            "--rate-iops",
            "500",
            "--runtime",
            "3s",
            "--metrics-push",
            &format!("http://{listen}"),
            "-o",
            out_path.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The gateway goes once it holds a push of the run's: before it, a
    // gateway that cannot be reached is refused at the start, as it
    // should be (a fixed wait lost that race on a busy machine).
    wait_for("fathom's first push", Duration::from_secs(20), || {
        get(&listen, "/metrics").filter(|t| t.contains("fathom_ios_total"))
    });
    drop(gateway);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("--metrics-push")),
        "{doc}"
    );
    assert!(u(&doc["results"][0]["total"]["read"]["ios"]) > 1000);
}

/// A certification says its verdict as each interval ends, and what
/// limited it at the end; the last push holds the last of them.
#[test]
fn a_certification_says_its_verdicts_as_it_goes() {
    let dir = tempdir();
    let Some((_gateway, listen)) = pushgateway(dir.path()) else {
        return;
    };
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        "[certify]\nduration = \"2s\"\ninterval = \"1s\"\nstabilisation = \"0s\"\n[certify.read_limits]\n\"64ms\" = 25.0\n[stream.read]\nrw = \"randread\"\nbs = \"4k\"\niodepth = 4\nrate_iops = 200\ndirect = false\n",
    )
    .unwrap();
    let target = dir.path().join("t");
    let out = run(&[
        "certify",
        target.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--size",
        "8m",
        "--metrics-push",
        &format!("http://{listen}"),
        "--output-format",
        "json",
    ]);
    // A busy host can make the certification fail (exit 1): the board must
    // then say that verdict, so the test accepts either outcome and holds
    // the exit code, the document and the board to each other.
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let passed = doc["results"][0]["pass"].as_bool();
    let code = out.status.code();
    assert_eq!(
        code,
        Some(if passed == Some(false) { 1 } else { 0 }),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = get(&listen, "/metrics").unwrap();
    let verdict = text
        .lines()
        .find(|l| l.starts_with("fathom_verdict_info{"))
        .unwrap_or_default();
    let expected = match limiter_name(&doc["results"][0]["limited_by"]["by"]) {
        Some(by) => format!("verdict=\"certify: limited by {by}\""),
        None if passed == Some(false) => "verdict=\"certify interval 2: fail\"".to_string(),
        None => "verdict=\"certify interval 2: pass so far\"".to_string(),
    };
    assert!(verdict.contains(&expected), "{verdict}\n{text}");
}
