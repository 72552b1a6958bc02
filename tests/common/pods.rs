//! A Kubernetes Job's pods played by processes: the manifests `fathom k8s`
//! printed are read with PyYAML, the ConfigMap's keys written where the
//! pods would mount them, and each index run as its container's command
//! with the environment the Job gives it (`JOB_COMPLETION_INDEX`, the
//! hostname, the downward API's node and pod names), in a network
//! namespace of its own. The paths the volumes would have (`/data`,
//! `/etc/fathom`, `/results`) are moved under the test's directory.

use super::common::fathom;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The manifests as JSON values, through PyYAML (a YAML reader that is not
/// fathom's writer); None, saying why, without python3's yaml module.
pub fn parse(yaml: &str) -> Option<Vec<Value>> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(yaml.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("No module named"),
            "PyYAML could not read the manifests: {err}\n{yaml}"
        );
        eprintln!("SKIP: python3's yaml module is missing (pip install PyYAML)");
        return None;
    }
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The logs of `n` pods of a small run from `fathom k8s` (in network
/// namespaces where they work), as `kubectl logs --prefix` prints them.
pub fn small_run_logs(n: u32, root: &Path) -> Option<String> {
    let out = fathom()
        .args([
            "k8s",
            "--clients",
            &n.to_string(),
            "--start-at",
            "+4s",
            "--",
        ])
        .args([
            "run",
            "/data/{index}.dat",
            "--size",
            "1m",
            "--runtime",
            "200ms",
        ])
        .output()
        .unwrap();
    super::common::succeeded(&out);
    let docs = parse(&String::from_utf8_lossy(&out.stdout))?;
    let (logs, codes) = Pods::start(&docs, root, namespaces_work()).logs();
    assert!(codes.iter().all(|c| *c == Some(0)), "{logs}");
    Some(logs)
}

/// Whether a process can have a network namespace of its own here.
pub fn namespaces_work() -> bool {
    let ok = Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP: `unshare -n` does not work here (needs root or user namespaces)");
    }
    ok
}

pub fn kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

/// The pods of the Job in `docs`, started; `root` holds their volumes.
pub struct Pods {
    pub children: Vec<(u32, String, Child)>,
}

impl Pods {
    /// `netns`: each pod in a network namespace of its own (see
    /// [`namespaces_work`]).
    pub fn start(docs: &[Value], root: &Path, netns: bool) -> Pods {
        let job = kind(docs, "Job")[0];
        let name = job["metadata"]["name"].as_str().unwrap().to_string();
        let n = job["spec"]["completions"].as_u64().unwrap() as u32;
        let template = &job["spec"]["template"]["spec"];
        let container = &template["containers"][0];
        // One claim for every pod, or each pod its own (an ephemeral
        // volume), as the Job's data volume says.
        let shared = template["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == "data" && v.get("persistentVolumeClaim").is_some());
        let config = kind(docs, "ConfigMap")[0];
        let mut children = Vec::new();
        for index in 0..n {
            // What this pod mounts: its own copy of the ConfigMap and its
            // own results (an emptyDir), its data as the claim says.
            let own = root.join(format!("pod-{index}"));
            let data = if shared {
                root.join("shared")
            } else {
                own.join("data")
            };
            let moved = |p: &str| -> String {
                for (from, to) in [
                    ("/etc/fathom", own.join("etc/fathom")),
                    ("/results", own.join("results")),
                    ("/data", data.clone()),
                    ("/dev/fathom", data.join("device")),
                ] {
                    if let Some(rest) = p.strip_prefix(from) {
                        return format!("{}{rest}", to.display());
                    }
                }
                p.to_string()
            };
            for dir in [own.join("etc/fathom"), own.join("results"), data.clone()] {
                std::fs::create_dir_all(dir).unwrap();
            }
            for (key, text) in config["data"].as_object().unwrap() {
                let mut text = text.as_str().unwrap().to_string();
                if key == "pod.json" {
                    // The volume's paths, in the command as in the mounts.
                    let mut pod: Value = serde_json::from_str(&text).unwrap();
                    for a in pod["args"].as_array_mut().unwrap() {
                        *a = Value::from(moved(a.as_str().unwrap()));
                    }
                    text = pod.to_string();
                }
                std::fs::write(own.join("etc/fathom").join(key), text).unwrap();
            }
            let args: Vec<String> = container["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| moved(a.as_str().unwrap()))
                .collect();
            let pod = format!("{name}-{index}-sim{index}");
            let mut cmd = if netns {
                let mut c = Command::new("unshare");
                c.arg("-n").arg(fathom().get_program());
                c
            } else {
                Command::new(fathom().get_program())
            };
            cmd.args(&args)
                .env("XDG_DATA_HOME", super::common::test_data_home());
            for e in container["env"].as_array().unwrap() {
                let key = e["name"].as_str().unwrap();
                let value = match (
                    e["value"].as_str(),
                    e["valueFrom"]["fieldRef"]["fieldPath"].as_str(),
                ) {
                    (Some(v), _) => v.to_string(),
                    (_, Some("spec.nodeName")) => format!("node-{index}"),
                    (_, Some("metadata.name")) => pod.clone(),
                    other => panic!("an environment variable the Job cannot give: {other:?}"),
                };
                cmd.env(key, value);
            }
            cmd.env("JOB_COMPLETION_INDEX", index.to_string())
                .env("HOSTNAME", format!("{name}-{index}"))
                .current_dir(
                    container["workingDir"]
                        .as_str()
                        .map_or_else(|| root.to_path_buf(), |d| PathBuf::from(moved(d))),
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            children.push((index, pod, cmd.spawn().unwrap()));
        }
        Pods { children }
    }

    /// Waits for every pod; their logs as `kubectl logs --prefix` prints
    /// them (pod after pod, each line after its pod's tag), and each
    /// index's exit code.
    pub fn logs(self) -> (String, Vec<Option<i32>>) {
        let mut logs = String::new();
        let mut codes = Vec::new();
        for (_, pod, child) in self.children {
            let out = child.wait_with_output().unwrap();
            codes.push(out.status.code());
            for stream in [&out.stderr, &out.stdout] {
                for line in String::from_utf8_lossy(stream).lines() {
                    logs.push_str(&format!("[pod/{pod}/fathom] {line}\n"));
                }
            }
        }
        (logs, codes)
    }
}
