//! Object stores: `fathom run s3://...` against real S3 servers started
//! on 127.0.0.1 (SeaweedFS, s3s-fs), read back with boto3. A server that
//! is not installed skips its tests, saying so (`.ci/run` installs both).

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use crate::s3_server;

use common::*;
use serde_json::Value;
use std::process::{Command, Output};

use s3_server::{BUCKET, KEY, SECRET, Server};

fn s3_run(server: &Server, secret: &str, args: &[&str]) -> Output {
    s3_command(server, secret, args)
        .output()
        .expect("fathom runs")
}

/// `fathom run ARGS` against `server` (unless ARGS name an endpoint),
/// with its credentials.
fn s3_command(server: &Server, secret: &str, args: &[&str]) -> Command {
    let mut command = fathom();
    command.arg("run").args(args);
    if !args.contains(&"--s3-endpoint") {
        command.args(["--s3-endpoint", &server.endpoint]);
    }
    command
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", secret)
        .env_remove("AWS_PROFILE")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env("AWS_CONFIG_FILE", "/nonexistent");
    command
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn s3_json(server: &Server, args: &[&str]) -> Value {
    let mut full = args.to_vec();
    full.extend_from_slice(&["--output-format", "json"]);
    let out = s3_run(server, SECRET, &full);
    json_out(&out)["results"][0].clone()
}

/// What boto3 says: `script` runs with `s3` a client of the server; its
/// stdout. None (and the reason printed) without boto3.
fn boto3(server: &Server, script: &str) -> Option<String> {
    let program = format!(
        "import boto3, json\ns3 = boto3.client('s3', endpoint_url='{}', aws_access_key_id='{KEY}', aws_secret_access_key='{SECRET}', region_name='us-east-1')\n{script}",
        server.endpoint
    );
    let out = Command::new("python3")
        .args(["-c", &program])
        .output()
        .ok()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named 'boto3'") {
            eprintln!("skipped the boto3 check: boto3 is not installed (pip install boto3)");
            return None;
        }
        panic!("boto3: {err}");
    }
    Some(String::from_utf8_lossy(&out.stdout).to_string())
}

/// Every key under `prefix`, as boto3 lists them.
fn keys_under(server: &Server, prefix: &str) -> Option<Vec<String>> {
    boto3(
        server,
        &format!(
            "r = s3.list_objects_v2(Bucket='{BUCKET}', Prefix='{prefix}')\nfor o in r.get('Contents', []): print(o['Key'], o['Size'])"
        ),
    )
    .map(|s| s.lines().map(String::from).collect())
}

fn op<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == name)
        .unwrap_or_else(|| panic!("no {name} in {result}"))
}

/// A mixed run: every second, each operation's share within 3 points of
/// the share asked; every GET's first byte no later than its last; the
/// store left as it was found.
fn mixed_run_on(kind: &str) {
    let Some(server) = Server::start(kind) else {
        return;
    };
    let mix = [
        ("get", 45.0),
        ("put", 15.0),
        ("stat", 30.0),
        ("delete", 10.0),
    ];
    let result = s3_json(
        &server,
        &[
            "s3://bench/mixed",
            "--mix",
            "get=45,put=15,stat=30,delete=10",
            "--object-size",
            "16k",
            "--objects",
            "40",
            "--numjobs",
            "4",
            "--runtime",
            "3s",
        ],
    );
    assert!(result["failure"].is_null(), "{result}");
    assert_eq!(result["preparation"]["objects"], 40);
    let intervals = result["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 2, "{result}");
    for second in intervals {
        let counts = second["ops"].as_object().unwrap();
        let total: f64 = counts.values().map(|v| v.as_f64().unwrap()).sum();
        assert!(
            total > 20.0,
            "too few requests a second to judge a share: {second}"
        );
        for (name, asked) in mix {
            let share = counts[name].as_f64().unwrap() / total * 100.0;
            assert!(
                (share - asked).abs() <= 3.0,
                "{name}: {share:.1}% in {second}, asked {asked}%"
            );
        }
    }
    for (name, _) in mix {
        let o = op(&result, name);
        assert!(o["ops"].as_u64().unwrap() > 0, "{o}");
        assert!(o["errors"].is_null(), "{name} failed: {o}");
    }
    let get = op(&result, "get");
    assert_eq!(
        get["bytes"].as_u64().unwrap(),
        get["ops"].as_u64().unwrap() * 16384
    );
    for q in ["min", "p50", "p99", "max"] {
        assert!(
            get["ttfb_ns"][q].as_u64().unwrap() <= get["lat_ns"][q].as_u64().unwrap(),
            "first byte after the last at {q}: {get}"
        );
    }
    // Its objects and its marker are gone.
    if let Some(keys) = keys_under(&server, "mixed/") {
        assert!(keys.is_empty(), "left behind: {keys:?}");
    }
    assert_eq!(result["cleanup"]["failed"], 0);
}

#[test]
fn a_mixed_run_on_seaweedfs_holds_its_shares_every_second_and_cleans_up() {
    mixed_run_on("seaweedfs");
}

#[test]
fn a_mixed_run_on_s3s_fs_holds_its_shares_every_second_and_cleans_up() {
    mixed_run_on("s3s-fs");
}

/// An object-store run on a terminal 100 columns wide: its caption,
/// limits and table fit, the table saying what it left out.
#[test]
fn an_object_store_run_fits_a_terminal_of_100_columns() {
    let Some(server) = Server::start("s3s-fs").or_else(|| Server::start("seaweedfs")) else {
        return;
    };
    let command = s3_command(
        &server,
        SECRET,
        &[
            "s3://bench/narrow",
            "--mix",
            "get=45,put=15,stat=30,delete=10",
            "--object-size",
            "16k",
            "--objects",
            "20",
            "--runtime",
            "1s",
        ],
    );
    let (ok, shown) = command_on_a_terminal(command, 100, true);
    assert!(ok, "{shown}");
    assert!(shown.contains("│ get"), "{shown}");
    let wide = wider_than(&shown, 100);
    assert!(wide.is_empty(), "{wide:#?}\n{shown}");
    assert!(shown.contains("left out to fit 100"), "{shown}");
}

#[test]
fn a_multipart_run_uploads_every_part_and_boto3_reads_whole_objects() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    // 11 MiB in 5 MiB parts: 5, 5 and 1, three parts an object.
    let result = s3_json(
        &server,
        &[
            "s3://bench/multi",
            "--rw",
            "write",
            "--object-size",
            "11m",
            "--part-size",
            "5m",
            "--objects",
            "3",
            "--numjobs",
            "1",
            "--s3-connections",
            "3",
            "--keep",
        ],
    );
    assert!(result["failure"].is_null(), "{result}");
    let put = op(&result, "put");
    assert_eq!(put["ops"], 3, "{put}");
    assert_eq!(result["parts"]["parts"], 9, "{result}");
    assert_eq!(result["parts"]["bytes"], 3 * 11 * 1048576);
    // A part is no slower than the object it is part of.
    assert!(result["parts"]["lat_ns"]["max"].as_u64() <= put["lat_ns"]["max"].as_u64());
    let Some(keys) = keys_under(&server, "multi/") else {
        return;
    };
    let objects: Vec<&String> = keys
        .iter()
        .filter(|k| !k.contains("fathom.marker"))
        .collect();
    assert_eq!(objects.len(), 3, "{keys:?}");
    for k in &objects {
        assert!(k.ends_with(" 11534336"), "{k}");
    }
    // The whole object reads back, and no two parts, nor two objects,
    // carry the same bytes (a deduplicating store is not flattered).
    let keys: Vec<&str> = objects
        .iter()
        .map(|k| k.split(' ').next().unwrap())
        .collect();
    let read = boto3(
        &server,
        &format!(
            "import hashlib\nparts = set()\nfor k in {keys:?}:\n    b = s3.get_object(Bucket='{BUCKET}', Key=k)['Body'].read()\n    assert len(b) == 11534336, len(b)\n    for i in range(0, len(b), 5242880): parts.add(hashlib.md5(b[i:i + 5242880]).hexdigest())\nprint(len(parts))"
        ),
    )
    .unwrap();
    assert_eq!(
        read.trim(),
        "9",
        "three objects of three parts, all different"
    );
}

/// Every PUT carries bytes of its own, as the disk path's writes do:
/// sixteen objects, sixteen ETags; `--compress 50` makes half of each
/// chunk zeros, which zlib finds.
#[test]
fn every_put_carries_its_own_bytes_and_the_content_asked() {
    let Some(server) = Server::start("seaweedfs").or_else(|| Server::start("s3s-fs")) else {
        return;
    };
    for (prefix, extra) in [("unique", None), ("half", Some("50"))] {
        let mut args = vec![
            format!("s3://bench/{prefix}"),
            "--rw".into(),
            "write".into(),
            "--object-size".into(),
            "64k".into(),
            "--objects".into(),
            "16".into(),
            "--numjobs".into(),
            "2".into(),
            "--keep".into(),
        ];
        if let Some(pct) = extra {
            args.extend(["--compress".into(), pct.into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let result = s3_json(&server, &args);
        assert!(result["failure"].is_null(), "{result}");
        let Some(seen) = boto3(
            &server,
            &format!(
                "import zlib\nr = s3.list_objects_v2(Bucket='{BUCKET}', Prefix='{prefix}/')\nkeys = [o['Key'] for o in r['Contents'] if not o['Key'].endswith('fathom.marker')]\ntags = set(o['ETag'] for o in r['Contents'] if o['Key'] in keys)\nb = s3.get_object(Bucket='{BUCKET}', Key=keys[0])['Body'].read()\nprint(len(keys), len(tags), round(len(b) / len(zlib.compress(b)), 1))"
            ),
        ) else {
            return;
        };
        let words: Vec<f64> = seen
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        assert_eq!(
            words[..2],
            [16.0, 16.0],
            "{prefix}: objects and distinct ETags"
        );
        match extra {
            None => assert!(words[2] < 1.1, "{prefix}: compressed {}x", words[2]),
            Some(_) => assert!((1.7..2.3).contains(&words[2]), "{prefix}: {}x", words[2]),
        }
    }
}

#[test]
fn a_wrong_secret_is_named_and_nothing_is_written() {
    for kind in ["s3s-fs", "seaweedfs"] {
        let Some(server) = Server::start(kind) else {
            continue;
        };
        let out = s3_run(
            &server,
            "not-the-secret",
            &["s3://bench/denied", "--runtime", "1s"],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{kind}: {err}");
        names_the_problem(&err, "SignatureDoesNotMatch");
        assert!(out.stdout.is_empty(), "no result: 0 successes");
        if let Some(keys) = keys_under(&server, "denied/") {
            assert!(keys.is_empty(), "{kind}: {keys:?}");
        }
    }
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let refused_here = |args: &[&str], needle: &str| {
        let out = s3_run(&server, SECRET, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        names_the_problem(&err, needle);
    };
    refused_here(
        &["s3://missing-bucket/x", "--runtime", "1s"],
        "no bucket missing-bucket",
    );
    refused_here(
        &["s3://bench/x", "--rw", "write", "--part-size", "1m"],
        "5 MiB",
    );
    refused_here(&["s3://bench/x", "--iodepth", "8"], "--iodepth");
    refused_here(&["s3://bench/x", "--size", "1g"], "--size");
    refused_here(
        &["s3://bench/x", "--mix", "get=1,copy=1"],
        "not an operation",
    );
    // A prefix holding someone else's object: refused, and then worked
    // beside with --overwrite, the object untouched.
    boto3(
        &server,
        &format!("s3.put_object(Bucket='{BUCKET}', Key='theirs/data.csv', Body=b'a,b')"),
    );
    if keys_under(&server, "theirs/").is_some() {
        refused_here(
            &["s3://bench/theirs", "--runtime", "1s"],
            "fathom did not make",
        );
        let result = s3_json(
            &server,
            &[
                "s3://bench/theirs",
                "--objects",
                "5",
                "--object-size",
                "4k",
                "--overwrite",
            ],
        );
        assert_eq!(op(&result, "get")["ops"], 5, "{result}");
        assert_eq!(
            keys_under(&server, "theirs/").unwrap(),
            vec!["theirs/data.csv 3"]
        );
    }
    // --create-bucket makes a missing bucket, and the run goes on in it.
    let result = s3_json(
        &server,
        &[
            "s3://made-by-fathom/x",
            "--create-bucket",
            "--objects",
            "2",
            "--object-size",
            "1k",
        ],
    );
    assert_eq!(result["bucket_created"], true);
    assert_eq!(op(&result, "get")["ops"], 2);
    // --number-ios: so many requests between the workers.
    let result = s3_json(
        &server,
        &[
            "s3://made-by-fathom/y",
            "--objects",
            "2",
            "--object-size",
            "1k",
            "--number-ios",
            "7",
            "--numjobs",
            "2",
        ],
    );
    assert_eq!(op(&result, "get")["ops"], 7, "{result}");
    // An endpoint nothing listens on.
    let port = free_port();
    let out = fathom()
        .args([
            "run",
            "s3://bench/x",
            "--s3-endpoint",
            &format!("http://127.0.0.1:{port}"),
        ])
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "no answer");
}

#[test]
fn ranged_gets_read_the_block_size_in_order_or_at_random() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    for rw in ["read", "randread"] {
        let result = s3_json(
            &server,
            &[
                "s3://bench/ranges",
                "--rw",
                rw,
                "--bs",
                "4k",
                "--object-size",
                "64k",
                "--objects",
                "8",
            ],
        );
        let get = op(&result, "get");
        assert_eq!(get["ops"], 8, "{get}");
        assert_eq!(get["bytes"], 8 * 4096, "{rw}: {get}");
        assert_eq!(
            result["spec"]["get_range"],
            if rw == "read" {
                serde_json::json!({"sequential": 4096})
            } else {
                serde_json::json!({"random": 4096})
            }
        );
    }
}

/// Every field of an object-store result (multipart parts, two gateways,
/// ranges) is in docs/json-schema.md.
#[test]
fn every_field_of_an_object_result_is_documented() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-schema.md"))
        .unwrap();
    let two = format!("{0},{0}", server.endpoint);
    let mut missing = std::collections::BTreeSet::new();
    for args in [
        vec![
            "s3://bench/doc",
            "--mix",
            "get=2,put=1,list=1",
            "--bs",
            "4k",
            "--object-size",
            "4k-64k",
            "--objects",
            "8",
            "--numjobs",
            "2",
            "--runtime",
            "1100ms",
            "--rate-iops",
            "300",
            "--s3-endpoint",
            &two,
        ],
        vec![
            "s3://bench/doc",
            "--rw",
            "write",
            "--object-size",
            "6m",
            "--part-size",
            "5m",
            "--objects",
            "1",
        ],
    ] {
        let result = s3_json(&server, &args);
        let mut keys = Vec::new();
        common::collect_keys(&result, &mut keys);
        for k in keys {
            if !docs.contains(&format!("`{k}`")) {
                missing.insert(k);
            }
        }
    }
    assert!(missing.is_empty(), "undocumented: {missing:?}");
}

/// fio's http engine in S3 mode (its own example, on this server): the
/// job file runs as it is, signing with the keys it names, and makes
/// fio's number of requests.
#[test]
fn fios_http_s3_job_runs_as_an_object_store_run() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let dir = tempdir();
    let job = dir.path().join("http-s3.fio");
    let host = server.endpoint.trim_start_matches("http://");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=http\nname=test\ndirect=1\nfilename=/{BUCKET}/k/e.y\nhttp_verbose=0\nhttps=off\nhttp_mode=s3\nhttp_s3_key=${{S3_KEY}}\nhttp_s3_keyid=${{S3_ID}}\nhttp_host={host}\nhttp_s3_region=us-east-1\ngroup_reporting\n\n[create]\nrw=write\nbs=4k\nsize=64k\nio_size=4k\nverify=sha256\n\n[trim]\nstonewall\nrw=trim\nbs=4k\nsize=64k\nio_size=4k\n"
        ),
    )
    .unwrap();
    let out = fathom()
        .args(["run", job.to_str().unwrap(), "--output-format", "json"])
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env("S3_KEY", SECRET)
        .env("S3_ID", KEY)
        .output()
        .unwrap();
    let doc = json_out(&out);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(
        op(&results[0], "put")["ops"],
        1,
        "io_size=4k of bs=4k: one PUT"
    );
    assert_eq!(op(&results[1], "delete")["ops"], 1);
    assert!(
        results[0]["credentials_from"]
            .as_str()
            .unwrap()
            .contains("http_s3_keyid")
    );
    // The secret is nowhere in what fathom wrote.
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
    if let Some(keys) = keys_under(&server, "k/") {
        assert!(keys.is_empty(), "{keys:?}");
    }
    // `fathom fio` says where such a job runs.
    let out = fathom()
        .args(["fio", job.to_str().unwrap()])
        .env("S3_KEY", SECRET)
        .env("S3_ID", KEY)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "fathom run JOB.fio");
}

/// `--live`: each second of a watched run, each operation a stream of
/// its own (reads as `read`, puts as `write`, deletes as `trim`).
#[test]
fn a_watched_run_shows_each_operations_seconds() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let dir = tempdir();
    let live = dir.path().join("live.jsonl");
    let out = s3_run(
        &server,
        SECRET,
        &[
            "s3://bench/live",
            "--mix",
            "get=2,put=1,delete=1",
            "--object-size",
            "4k",
            "--objects",
            "20",
            "--runtime",
            "2500ms",
            "--live",
            live.to_str().unwrap(),
        ],
    );
    succeeded(&out);
    let text = std::fs::read_to_string(&live).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (stream, direction) in [("get", "read"), ("put", "write"), ("delete", "trim")] {
        let seconds: Vec<&Value> = lines.iter().filter(|l| l["stream"] == stream).collect();
        assert!(seconds.len() >= 2, "{stream}: {text}");
        assert!(
            seconds[0]["directions"][direction]["ios"].as_u64().unwrap() > 0,
            "{text}"
        );
    }
}

/// Every run says what limited it, from its workers' time, and the three
/// shares it judged by add up to the run.
#[test]
fn a_run_says_what_limited_its_requests() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let result = s3_json(
        &server,
        &[
            "s3://bench/limit",
            "--object-size",
            "4k",
            "--objects",
            "10",
            "--runtime",
            "1500ms",
        ],
    );
    let by = result["limited_by"]["by"].as_str().unwrap();
    assert!(["store", "host", "fathom"].contains(&by), "{result}");
    let client = &result["client"];
    assert!(client["cpu_s"].as_f64().unwrap() > 0.0, "{client}");
    assert!(
        client["cpu_per_request_us"].as_f64().unwrap() > 0.0,
        "{client}"
    );
    let evidence = result["limited_by"]["evidence"].as_str().unwrap();
    let shares: Vec<f64> = evidence
        .split('%')
        .filter_map(|p| p.rsplit(' ').next()?.parse().ok())
        .collect();
    // Three shares; one may read "under 0.1%".
    assert_eq!(evidence.matches('%').count(), 3, "{evidence}");
    assert!(shares.len() >= 2, "{evidence}");
    let sum: f64 = shares.iter().sum();
    assert!((97.0..=103.0).contains(&sum), "{evidence}");
}

/// An https:// endpoint whose certificate fathom cannot trust (made here,
/// self-signed): one line naming the certificate, exit 2, before any
/// request is made.
#[test]
fn a_certificate_that_is_not_trusted_is_named() {
    let dir = tempdir();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    if !made.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: openssl cannot make a certificate here");
        return;
    }
    let port_file = dir.path().join("port");
    let server = format!(
        "import ssl, http.server\nsrv = http.server.HTTPServer(('127.0.0.1', 0), http.server.BaseHTTPRequestHandler)\nctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\nctx.load_cert_chain('{}', '{}')\nsrv.socket = ctx.wrap_socket(srv.socket, server_side=True)\nopen('{}', 'w').write(str(srv.server_address[1]))\nsrv.timeout = 20\nsrv.handle_request()\n",
        cert.display(),
        key.display(),
        port_file.display()
    );
    let mut tls = Command::new("python3")
        .args(["-c", &server])
        .spawn()
        .unwrap();
    wait_until("the TLS server's port", || {
        port_file.exists() && std::fs::read_to_string(&port_file).is_ok_and(|p| !p.is_empty())
    });
    let port = std::fs::read_to_string(&port_file).unwrap();
    let out = fathom()
        .args([
            "run",
            "s3://bench/x",
            "--s3-endpoint",
            &format!("https://127.0.0.1:{port}"),
        ])
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .output()
        .unwrap();
    let _ = tls.kill();
    let _ = tls.wait();
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "certificate");
}

/// The reports of an object-store run: its table in Markdown and CSV,
/// and its charts in HTML.
#[test]
fn an_object_run_reports_in_every_format() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let dir = tempdir();
    let json = dir.path().join("run.json");
    succeeded(&s3_run(
        &server,
        SECRET,
        &[
            "s3://bench/report",
            "--mix",
            "get=3,put=1",
            "--object-size",
            "4k",
            "--objects",
            "8",
            "--runtime",
            "1200ms",
            "-o",
            json.to_str().unwrap(),
        ],
    ));
    let report = |format: &str| {
        let out = run(&["report", json.to_str().unwrap(), "--output-format", format]);
        succeeded(&out);
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let markdown = report("markdown");
    assert!(markdown.contains("| get first byte |"), "{markdown}");
    let csv = report("csv");
    assert!(csv.lines().next().unwrap().contains("ttfb_p99_ns"), "{csv}");
    assert_eq!(csv.lines().count(), 3, "a row per operation: {csv}");
    let html = report("html");
    assert!(html.contains("requests per second by operation"));
    assert!(html.contains("p99 latency by operation"));
}

/// `--rate-iops`: never more requests than the schedule asks, and each
/// one's latency from when it was due, no shorter than its own.
#[test]
fn a_rated_run_keeps_to_its_schedule() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let result = s3_json(
        &server,
        &[
            "s3://bench/rated",
            "--object-size",
            "1k",
            "--objects",
            "4",
            "--numjobs",
            "2",
            "--rate-iops",
            "100",
            "--runtime",
            "2s",
        ],
    );
    let get = op(&result, "get");
    let ops = get["ops"].as_u64().unwrap();
    // 100 a second for 2 s: 200 due, and none made before its time.
    assert!(ops <= 200, "{get}");
    assert!(ops >= 100, "the store answers 1 KiB GETs far faster: {get}");
    assert_eq!(result["spec"]["rate"], 100.0);
    for q in ["p50", "max"] {
        assert!(
            get["due_ns"][q].as_u64().unwrap() >= get["lat_ns"][q].as_u64().unwrap(),
            "{get}"
        );
    }
    assert!(get["due_ns"]["min"].as_u64().unwrap() > 0);
}

/// `fathom capacity s3://...`: the search's steps are object-store runs
/// at the step's rate, judged on latency from when each request was due.
#[test]
fn a_capacity_search_runs_on_an_object_store() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let out = fathom()
        .args([
            "capacity",
            "s3://bench/capacity",
            "--s3-endpoint",
            &server.endpoint,
            "--slo",
            "p99:2s",
            "--object-size",
            "1k",
            "--objects",
            "4",
            "--numjobs",
            "2",
            "--runtime",
            "1s",
            "--start",
            "40",
            "--max-time",
            "5s",
            "--output-format",
            "json",
        ])
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .output()
        .unwrap();
    let doc = json_out(&out);
    let search = &doc["results"][0];
    assert_eq!(search["kind"], "capacity", "{doc}");
    let steps = search["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    for step in steps {
        let (offered, achieved) = (
            step["offered_iops"].as_f64().unwrap(),
            step["achieved_iops"].as_f64().unwrap(),
        );
        assert!(
            achieved <= offered * 1.05,
            "a step never goes beyond its rate: {step}"
        );
    }
    assert!(search["answer_iops"].as_f64().unwrap() >= 40.0, "{search}");
    // Workers that spend most of a step waiting for the store (or for
    // their next due request) were not held back by the host: a step
    // blames it only where its own evidence shows the CPU wait largest.
    for step in steps {
        let Some(limit) = step.get("limited_by").filter(|l| !l.is_null()) else {
            continue;
        };
        let said = limit["evidence"].as_str().unwrap_or_default();
        if limit["by"] == "host" {
            let share = |after: &str| -> f64 {
                let tail = &said[said.find(after).unwrap() + after.len()..];
                tail.trim_start()
                    .split('%')
                    .next()
                    .and_then(|n| n.trim_start_matches("under ").parse().ok())
                    .unwrap_or(0.0)
            };
            assert!(share("the store's answers") < 50.0, "{step}");
        }
    }
    assert_ne!(search["end"], "host_limited", "{search}");
    if let Some(keys) = keys_under(&server, "capacity/") {
        assert!(keys.is_empty(), "{keys:?}");
    }
}

/// `--delete-batch`: each delete takes several objects in one
/// DeleteObjects request, and the run's end deletes the rest 1,000 a
/// request; nothing is left.
#[test]
fn deletes_in_batches_leave_nothing() {
    let Some(server) = Server::start("seaweedfs") else {
        return;
    };
    let result = s3_json(
        &server,
        &[
            "s3://bench/batch",
            "--mix",
            "delete=1",
            "--delete-batch",
            "5",
            "--object-size",
            "1k",
            "--objects",
            "40",
            "--number-ios",
            "4",
        ],
    );
    let delete = op(&result, "delete");
    assert_eq!(delete["ops"], 4, "{delete}");
    assert!(delete["errors"].is_null(), "{delete}");
    assert_eq!(result["spec"]["delete_batch"], 5);
    // 4 requests of 5 took 20; the end deleted the other 20.
    assert_eq!(result["cleanup"]["deleted"], 20, "{result}");
    if let Some(keys) = keys_under(&server, "batch/") {
        assert!(keys.is_empty(), "{keys:?}");
    }
}

/// Two object-store runs are judged operation by operation, with
/// intervals from their seconds, as disk runs are by direction; `compare`
/// draws the same judgement beside its ratios.
#[test]
fn check_judges_object_store_runs_operation_by_operation() {
    let Some(server) = Server::start("seaweedfs").or_else(|| Server::start("s3s-fs")) else {
        return;
    };
    let dir = tempdir();
    let run_to = |name: &str| {
        let out = dir.path().join(name);
        let o = s3_run(
            &server,
            SECRET,
            &[
                "s3://bench/judged",
                "--mix",
                "get=80,stat=20",
                "--object-size",
                "4k",
                "--objects",
                "20",
                "--numjobs",
                "2",
                "--runtime",
                "3s",
                "-o",
                out.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out.to_str().unwrap().to_string()
    };
    let (a, b) = (run_to("a.json"), run_to("b.json"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    let get = op(&doc["results"][0], "get");
    let seconds = get["intervals"].as_array().unwrap();
    assert!(seconds.len() >= 3, "{get}");
    let counted: u64 = seconds.iter().map(|s| s["ios"].as_u64().unwrap()).sum();
    assert_eq!(
        counted,
        get["ops"].as_u64().unwrap(),
        "every GET in a second"
    );

    let out = run(&["check", &b, "--against", &a, "--output-format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for part in ["get", "stat"] {
        let d = v["directions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["direction"] == part)
            .unwrap_or_else(|| panic!("no {part}: {v}"));
        assert_eq!(d["rate"], "requests", "{d}");
        let figures: Vec<&str> = d["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["figure"].as_str().unwrap())
            .collect();
        for f in ["iops", "p50", "p99"] {
            assert!(figures.contains(&f), "{part}: {figures:?}");
        }
    }
    let text = String::from_utf8_lossy(&run_ok(&["compare", &a, &b]).stdout).to_string();
    let get_row = text.lines().find(|l| l.contains(" get ")).unwrap();
    assert!(get_row.contains('['), "no interval: {text}");
}

/// The marker is fathom's by its content, not its name: an object named
/// `fathom.marker` that does not name its prefix lets no run in beside a
/// user's objects, and under `--overwrite` it is left as it was.
#[test]
fn a_marker_forged_by_name_is_refused_and_left_alone() {
    let Some(server) = Server::start("seaweedfs").or_else(|| Server::start("s3s-fs")) else {
        return;
    };
    let Some(_) = boto3(
        &server,
        &format!(
            "s3.put_object(Bucket='{BUCKET}', Key='forged/fathom.marker', Body=b'anything')\ns3.put_object(Bucket='{BUCKET}', Key='forged/report.csv', Body=b'a,b')"
        ),
    ) else {
        return;
    };
    let write = ["s3://bench/forged", "--rw", "write", "--objects", "4"];
    let out = s3_run(&server, SECRET, &write);
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "not fathom's marker");
    let mut over = write.to_vec();
    over.push("--overwrite");
    let out = s3_run(&server, SECRET, &over);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = boto3(
        &server,
        &format!(
            "print(s3.get_object(Bucket='{BUCKET}', Key='forged/fathom.marker')['Body'].read().decode())"
        ),
    )
    .unwrap();
    assert_eq!(left.trim(), "anything", "the user's object stays as it was");
    let keys = keys_under(&server, "forged/").unwrap();
    assert_eq!(keys.len(), 2, "only the user's two objects: {keys:?}");
}

/// How a stalling proxy treats the answer to the one request it stalls.
#[derive(Clone, Copy)]
enum Stall {
    /// Holds it this long, then passes it on.
    Hold(std::time::Duration),
    /// Passes it on a byte a second.
    Trickle,
}

/// A proxy on 127.0.0.1 before `upstream` that stalls the answer to the
/// `nth` request of `method` (`b"GET "`, `b"PUT "`, `b"HEAD "`) it
/// passes, once: a store that stalls one request.
fn stalling_proxy(upstream: &str, method: &'static [u8], nth: u64, stall: Stall) -> String {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let upstream = upstream.trim_start_matches("http://").to_string();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicU64::new(0));
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(&upstream) else {
                return;
            };
            let hold_next = Arc::new(AtomicBool::new(false));
            let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (seen, flag) = (seen.clone(), hold_next.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                while let Ok(n) = c_in.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if buf.starts_with(method) && seen.fetch_add(1, Ordering::SeqCst) + 1 == nth {
                        flag.store(true, Ordering::SeqCst);
                    }
                    if s_out.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = s_out.shutdown(std::net::Shutdown::Write);
            });
            let (mut s_in, mut c_out) = (server, client);
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                let mut trickling = false;
                while let Ok(n) = s_in.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if hold_next.swap(false, Ordering::SeqCst) {
                        match stall {
                            Stall::Hold(hold) => std::thread::sleep(hold),
                            Stall::Trickle => trickling = true,
                        }
                    }
                    let sent = match trickling {
                        false => c_out.write_all(&buf[..n]),
                        true => buf[..n].iter().try_for_each(|b| {
                            std::thread::sleep(std::time::Duration::from_secs(1));
                            c_out.write_all(std::slice::from_ref(b))
                        }),
                    };
                    if sent.is_err() {
                        break;
                    }
                }
                let _ = c_out.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    address
}

/// A GET the store holds for 10 s in a 3 s run, or whose answer comes a
/// byte a second, is cut at the run's end: the run takes its time, not
/// the stall's, the request is unfinished (not an error), and the rates
/// are over the time measured.
#[test]
fn a_request_held_past_the_runtime_is_unfinished_and_bounds_nothing() {
    let Some(server) = Server::start("seaweedfs").or_else(|| Server::start("s3s-fs")) else {
        return;
    };
    for (prefix, stall) in [
        ("stalled", Stall::Hold(std::time::Duration::from_secs(10))),
        ("trickled", Stall::Trickle),
    ] {
        let proxy = stalling_proxy(&server.endpoint, b"GET ", 20, stall);
        let started = std::time::Instant::now();
        let target = format!("s3://bench/{prefix}");
        let result = s3_json(
            &server,
            &[
                &target,
                "--s3-endpoint",
                &proxy,
                "--rw",
                "read",
                "--object-size",
                "4k",
                "--objects",
                "10",
                "--numjobs",
                "2",
                "--runtime",
                "3s",
            ],
        );
        let took = started.elapsed().as_secs_f64();
        assert!(result["failure"].is_null(), "{result}");
        let get = op(&result, "get");
        assert_eq!(get["unfinished"], 1, "{prefix}: {get}");
        assert!(get["errors"].is_null(), "not an error: {get}");
        let elapsed = result["elapsed_s"].as_f64().unwrap();
        assert!(elapsed <= 3.0 + 1e-6, "measured {elapsed} s");
        let rate = get["ops"].as_f64().unwrap() / elapsed;
        assert!(
            (get["ops_per_s"].as_f64().unwrap() / rate - 1.0).abs() < 1e-6,
            "{get}"
        );
        // Setting up, 3 s of requests with half a second's grace, cleaning
        // up: far less than the 10 s the store held its answer.
        assert!(took < 8.0, "{prefix}: the run took {took:.1} s");
    }
}

/// Before and after the timed run there is no run's end to cut a request
/// at: a store silent for 10 s fails the request, and Ctrl-C cuts it
/// within a second. A first HEAD held, a dataset PUT held and one held
/// under Ctrl-C each end so, and leave nothing behind.
#[test]
fn requests_outside_the_timed_run_are_bounded_and_yield_to_ctrl_c() {
    let Some(server) = Server::start("seaweedfs").or_else(|| Server::start("s3s-fs")) else {
        return;
    };
    let held = Stall::Hold(std::time::Duration::from_secs(60));
    let read = |proxy: &str, prefix: &str| -> Vec<String> {
        let target = format!("s3://bench/{prefix}");
        [
            &target,
            "--s3-endpoint",
            proxy,
            "--rw",
            "read",
            "--object-size",
            "4k",
            "--objects",
            "8",
            "--runtime",
            "2s",
            "--output-format",
            "json",
        ]
        .map(String::from)
        .to_vec()
    };

    let proxy = stalling_proxy(&server.endpoint, b"HEAD ", 1, held);
    let started = std::time::Instant::now();
    let out = s3_run(&server, SECRET, &strs(&read(&proxy, "head")));
    let took = started.elapsed().as_secs_f64();
    assert_eq!(out.status.code(), Some(2));
    names_the_problem(&String::from_utf8_lossy(&out.stderr), "s3://bench/head");
    assert!(took < 25.0, "the refusal took {took:.1} s");

    let proxy = stalling_proxy(&server.endpoint, b"PUT ", 3, held);
    let started = std::time::Instant::now();
    let out = s3_run(&server, SECRET, &strs(&read(&proxy, "put")));
    let took = started.elapsed().as_secs_f64();
    assert_eq!(out.status.code(), Some(1), "a failed run");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let result = &doc["results"][0];
    let failure = result["failure"].as_str().unwrap_or_default();
    assert!(failure.contains("nothing for 10 s"), "{result}");
    assert!(took < 25.0, "the run took {took:.1} s");
    assert_eq!(
        keys_under(&server, "put/").unwrap_or_default(),
        Vec::<String>::new()
    );

    let proxy = stalling_proxy(&server.endpoint, b"PUT ", 3, held);
    let mut child = s3_command(&server, SECRET, &strs(&read(&proxy, "stopped")))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let signalled = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let after = signalled.elapsed().as_secs_f64();
    assert!(!status.success());
    // Half a second to cut the PUT, then the clean-up's deletes.
    assert!(after < 5.0, "ended {after:.1} s after Ctrl-C");
    assert_eq!(
        keys_under(&server, "stopped/").unwrap_or_default(),
        Vec::<String>::new()
    );
}
