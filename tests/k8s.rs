//! `fathom k8s`: the manifests a cluster would take (checked by
//! kubernetes-validate and by PyYAML), their pods played by processes
//! started from them, and `k8s collect`'s exact merge and named losses.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
use crate::pods;

use common::*;
use fathom::measure::histogram::LatencyHistogram;
use serde_json::Value;

/// Two Kubernetes versions apart: one that backoffLimitPerIndex first
/// reached by default, and kubernetes-validate's newest.
const VERSIONS: &[&str] = &["1.30.0", "1.37.0"];

fn manifests(extra: &[&str], command: &[&str]) -> String {
    let mut args = vec!["k8s"];
    args.extend(extra);
    args.push("--");
    args.extend(command);
    let out = run_ok(&args);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_shape_of_the_manifests_is_what_kubernetes_takes() {
    let dir = tempdir();
    let mut files = Vec::new();
    for mode in ["filesystem", "block"] {
        for shared in [false, true] {
            for n in [1u32, 3, 8] {
                let n_text = n.to_string();
                let mut extra = vec![
                    "--clients",
                    n_text.as_str(),
                    "--storage-class",
                    "fast",
                    "--size",
                    "20Gi",
                    "--volume-mode",
                    mode,
                ];
                if shared {
                    extra.push("--shared-claim");
                }
                let target = if mode == "block" {
                    "/dev/fathom"
                } else {
                    "/data/{index}.dat"
                };
                let yaml = manifests(
                    &extra,
                    &["run", target, "--rw", "randread", "--runtime", "60s"],
                );
                let Some(docs) = pods::parse(&yaml) else {
                    return;
                };
                let what = format!("{mode}, shared {shared}, {n} clients");
                let job = pods::kind(&docs, "Job")[0];
                assert_eq!(job["spec"]["completionMode"], "Indexed", "{what}");
                assert_eq!(job["spec"]["completions"], n, "{what}");
                assert_eq!(job["spec"]["parallelism"], n, "{what}");
                let pod = &job["spec"]["template"]["spec"];
                let c = &pod["containers"][0];
                let mounts: Vec<&str> = c["volumeMounts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m["name"].as_str().unwrap())
                    .collect();
                if mode == "block" {
                    assert_eq!(c["volumeDevices"][0]["name"], "data", "{what}");
                    assert!(!mounts.contains(&"data"), "{what}");
                } else {
                    assert!(c.get("volumeDevices").is_none(), "{what}");
                    assert!(mounts.contains(&"data"), "{what}");
                }
                // Every claim a pod names is made: by the stream, or by
                // the Job for each pod (an ephemeral volume's template).
                let claims: Vec<&str> = pods::kind(&docs, "PersistentVolumeClaim")
                    .iter()
                    .map(|c| c["metadata"]["name"].as_str().unwrap())
                    .collect();
                for v in pod["volumes"].as_array().unwrap() {
                    if let Some(claim) = v["persistentVolumeClaim"]["claimName"].as_str() {
                        assert!(claims.contains(&claim), "{what}: {claim} is not made");
                        assert_eq!(
                            pods::kind(&docs, "PersistentVolumeClaim")[0]["spec"]["accessModes"][0],
                            "ReadWriteMany"
                        );
                    }
                }
                let data = pod["volumes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|v| v["name"] == "data")
                    .unwrap();
                assert_eq!(data.get("ephemeral").is_some(), !shared, "{what}");
                let mode_of_claim = if shared {
                    &pods::kind(&docs, "PersistentVolumeClaim")[0]["spec"]["volumeMode"]
                } else {
                    &data["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"]
                };
                assert_eq!(
                    mode_of_claim.as_str().unwrap().to_lowercase(),
                    mode,
                    "{what}"
                );
                // Every volume a container names is one of the pod's.
                let volumes: Vec<&str> = pod["volumes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v["name"].as_str().unwrap())
                    .collect();
                assert!(mounts.iter().all(|m| volumes.contains(m)), "{what}");
                let spread = &pod["topologySpreadConstraints"][0];
                assert_eq!(spread["topologyKey"], "kubernetes.io/hostname", "{what}");
                assert_eq!(
                    spread["labelSelector"]["matchLabels"],
                    pod_labels(job)["app.kubernetes.io/instance"]
                        .as_str()
                        .map(|i| serde_json::json!({ "app.kubernetes.io/instance": i }))
                        .unwrap(),
                    "{what}: the spread selects the Job's own pods"
                );
                assert_eq!(pods::kind(&docs, "Service")[0]["spec"]["clusterIP"], "None");
                let file = dir.path().join(format!("{mode}-{shared}-{n}.yaml"));
                std::fs::write(&file, yaml).unwrap();
                files.push(file.display().to_string());
            }
        }
    }
    let validator = std::process::Command::new("kubernetes-validate")
        .arg("--version")
        .output();
    if validator.is_err() {
        eprintln!("SKIP: kubernetes-validate is missing (pip install kubernetes-validate)");
        return;
    }
    for version in VERSIONS {
        let out = std::process::Command::new("kubernetes-validate")
            .args(["--strict", "--quiet", "-k", version])
            .args(&files)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kubernetes-validate --strict -k {version}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn pod_labels(job: &Value) -> &Value {
    &job["spec"]["template"]["metadata"]["labels"]
}

#[test]
fn what_no_pod_could_run_is_refused_before_anything_is_printed() {
    for (args, needle) in [
        (
            vec!["k8s", "--clients", "3", "--", "tree", "/data"],
            "`tree` cannot run in the pods",
        ),
        (
            vec![
                "k8s",
                "--clients",
                "3",
                "--",
                "run",
                "/data",
                "-o",
                "x.json",
            ],
            "-o is set in each pod",
        ),
        (
            vec![
                "k8s",
                "--clients",
                "3",
                "--",
                "run",
                "/data",
                "--rw",
                "sideways",
            ],
            "the command after `--`",
        ),
        (
            vec![
                "k8s",
                "--clients",
                "3",
                "--size",
                "10g",
                "--",
                "run",
                "/data",
            ],
            "10Gi",
        ),
        (
            vec![
                "k8s",
                "--clients",
                "3",
                "--name",
                "Big_Name",
                "--",
                "run",
                "/data",
            ],
            "--name",
        ),
        (
            vec![
                "k8s",
                "--clients",
                "3",
                "--start-at",
                "2020-01-01T00:00:00Z",
                "--",
                "run",
                "/data",
            ],
            "already past",
        ),
        (vec!["k8s", "--clients", "0", "--", "run", "/data"], "0"),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: printed manifests");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// Three pods of a small run, `start` from now, each in a network
/// namespace of its own; None (said why) where that cannot be.
fn three_pods(
    print_flags: &[&str],
    run_flags: &[&str],
    start: &str,
) -> Option<(tempfile::TempDir, pods::Pods)> {
    if !pods::namespaces_work() {
        return None;
    }
    let dir = tempdir();
    let mut command = vec!["run", "/data/{index}.dat", "--size", "4m"];
    command.extend(run_flags);
    let mut print = vec!["--clients", "3", "--start-at", start];
    print.extend(print_flags);
    let yaml = manifests(&print, &command);
    let docs = pods::parse(&yaml)?;
    let pods = pods::Pods::start(&docs, dir.path(), true);
    Some((dir, pods))
}

/// Three pods from the printed manifests, each in its own network
/// namespace: they start together, and collect's totals are theirs added
/// (the p99 that of their histograms merged, by Python's hdrh too).
#[test]
fn three_pods_start_together_and_merge_exactly() {
    let Some((dir, pods)) = three_pods(&[], &["--iodepth", "2", "--runtime", "1s"], "+4s") else {
        return;
    };
    let (logs, codes) = pods.logs();
    assert_eq!(codes, [Some(0); 3], "{logs}");
    let merged = dir.path().join("cluster.json");
    let logs_file = dir.path().join("pods.log");
    std::fs::write(&logs_file, &logs).unwrap();
    run_ok(&[
        "k8s",
        "collect",
        logs_file.to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let c = &doc["cluster"];
    assert_eq!(c["launcher"], "kubernetes");
    assert_eq!(c["ranks"], 3);
    assert_eq!(
        c["hosts"],
        serde_json::json!(["node-0", "node-1", "node-2"])
    );
    // Within 50 ms of one another; a host busier than its CPUs may wake
    // a sleeper later than that, and the bound is then the machine's.
    let spread = f(&c["start_spread_s"]);
    let load: f64 = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    if spread > 0.050 && load > cpus {
        eprintln!(
            "SKIP the 50 ms bound: started {spread} s apart on a host of load {load} over {cpus} CPUs"
        );
        assert!(spread < 1.0, "started {spread} s apart");
    } else {
        assert!(spread <= 0.050, "started {spread} s apart");
    }
    let per_pod: Vec<&Value> = c["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["results"][0]["total"]["read"])
        .collect();
    let total = &doc["results"][0]["total"]["read"];
    assert_eq!(
        u(&total["ios"]),
        per_pod.iter().map(|r| u(&r["ios"])).sum::<u64>()
    );
    let mut h = LatencyHistogram::decode(per_pod[0]["histogram"].as_str().unwrap()).unwrap();
    for r in &per_pod[1..] {
        h.add(&LatencyHistogram::decode(r["histogram"].as_str().unwrap()).unwrap());
    }
    assert_eq!(u(&total["lat_ns"]["p99"]), h.value_at_percentile(99.0));
    // The same merge by another implementation of HDR histograms: Python's
    // hdrh adds the pods' histograms into one equal, bucket by bucket, to
    // fathom's total, whose p99 by nearest rank (ceil(0.99 N), as
    // fathom's and Java's HdrHistogram take it; hdrh's own
    // get_value_at_percentile rounds the rank instead) is fathom's.
    let script = "import sys, json, math\nfrom hdrh.histogram import HdrHistogram\nd = json.load(open(sys.argv[1]))\nh = None\nfor r in d['cluster']['per_rank']:\n    x = HdrHistogram.decode(r['results'][0]['total']['read']['histogram'])\n    h = x if h is None else (h.add(x) or h)\nt = HdrHistogram.decode(d['results'][0]['total']['read']['histogram'])\nsame = all(h.get_count_at_index(i) == t.get_count_at_index(i) for i in range(h.counts_len))\nrank = max(1, math.ceil(0.99 * h.get_total_count()))\ncum = 0\nfor item in h.get_recorded_iterator():\n    cum += item.count_at_value_iterated_to\n    if cum >= rank:\n        p99 = h.get_highest_equivalent_value(item.value_iterated_to)\n        break\nprint(h.get_total_count(), p99, int(same))\n";
    match std::process::Command::new("python3")
        .args(["-c", script, merged.to_str().unwrap()])
        .output()
    {
        Ok(out) if out.status.success() => {
            let said = String::from_utf8_lossy(&out.stdout);
            let v: Vec<u64> = said
                .split_whitespace()
                .map(|w| w.parse().unwrap())
                .collect();
            assert_eq!(v[0], u(&total["ios"]), "hdrh's count");
            assert_eq!(v[1], u(&total["lat_ns"]["p99"]), "hdrh's p99");
            assert_eq!(v[2], 1, "hdrh's merge is fathom's, bucket by bucket");
        }
        Ok(out) => eprintln!(
            "SKIP: Python's hdrh merge (pip install hdrhistogram): {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ),
        Err(e) => eprintln!("SKIP: Python's hdrh merge: {e}"),
    }
    // Each pod's document names its index and node.
    let pods_said: Vec<&str> = logs.lines().filter(|l| l.contains("] {")).collect();
    assert_eq!(pods_said.len(), 3, "one document a pod");
    assert!(logs.contains("fathom k8s pod: index 2 of 3"), "{logs}");
}

/// A pod killed outright, and one stopped (as a deleted pod is, with
/// SIGTERM): collect exits 1, names both indexes and keeps what the third
/// measured.
#[test]
fn a_lost_pod_is_named_and_the_merge_is_never_silently_short() {
    let Some((dir, pods)) = three_pods(&["--shared-claim"], &["--runtime", "4s"], "+4s") else {
        return;
    };
    std::thread::sleep(std::time::Duration::from_millis(5500));
    for (index, _, child) in &pods.children {
        let signal = match index {
            1 => "-KILL",
            2 => "-TERM",
            _ => continue,
        };
        std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
    }
    let (logs, codes) = pods.logs();
    assert_eq!(codes[0], Some(0), "{logs}");
    assert_eq!(codes[2], Some(143), "{logs}");
    let merged = dir.path().join("cluster.json");
    let out = fathom()
        .args(["k8s", "collect", "-", "-o", merged.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(logs.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("index 1 lost: no result"), "{err}");
    assert!(err.contains("index 2 lost: stopped at t="), "{err}");
    assert!(!err.contains("index 0 lost"), "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    assert!(doc["failure"].as_str().unwrap().contains("2 of 3 pods"));
    let failed: Vec<u64> = doc["cluster"]["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| u(&f["rank"]))
        .collect();
    assert_eq!(failed, [1, 2]);
    // Nothing at all is bad input, and --clients names who was lost.
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let out = run(&["k8s", "collect", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["k8s", "collect", empty.to_str().unwrap(), "--clients", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("index 1 lost"));
}
