//! A run from many Kubernetes pods at once, with nothing of fathom's own
//! in the cluster: `manifests` writes the Indexed Job, its Service, its
//! ConfigMap and its claims for `kubectl apply`; each pod runs the
//! ConfigMap's fathom command from one agreed start time (`pod_args`);
//! `collect` joins the pods' documents as `fathom merge` joins hosts',
//! and names every index that did not report.

pub mod collect;
pub mod manifests;

use serde::{Deserialize, Serialize};

/// Where the ConfigMap is mounted in each pod.
pub const CONFIG_DIR: &str = "/etc/fathom";
/// The ConfigMap's key for the pod's instructions.
pub const CONFIG_KEY: &str = "pod.json";
/// Where each pod writes its `{index}.json`.
pub const RESULTS_DIR: &str = "/results";
/// A Filesystem volume's mount point, and a Block volume's device, in
/// each pod: the paths the command after `--` names.
pub const MOUNT_PATH: &str = "/data";
pub const DEVICE_PATH: &str = "/dev/fathom";

/// What the ConfigMap tells every pod: the command, when to start it, how
/// many pods there are and where the result goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PodConfig {
    /// fathom's arguments after `fathom` (`run /data/{index}.dat ...`),
    /// `{index}` standing for the pod's index.
    pub args: Vec<String>,
    /// The agreed start (RFC 3339, UTC): every pod's `--start-at`.
    pub start_at: String,
    pub clients: u32,
    /// Files given with `--file`, kept beside this one in the ConfigMap:
    /// an argument equal to one's name reads it from there.
    #[serde(default)]
    pub files: Vec<String>,
    pub results: ResultsTo,
}

/// Where the pods' documents go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultsTo {
    /// Each pod prints its document as one line of its log, for `kubectl
    /// logs ... | fathom k8s collect -`.
    Log,
    /// Each pod writes `{index}.json` on a claim every pod mounts (RWX),
    /// for `fathom k8s collect DIR` once copied out.
    Claim(String),
}

/// The flags a pod's command may not carry: where the result goes and
/// when the run starts are the pod's to set, and ranks are pods here.
pub const OWNED_FLAGS: &[&str] = &[
    "-o",
    "--output",
    "--output-format",
    "--start-at",
    "--mpi",
    "--mpi-timeout",
];

/// The commands a pod can run: those that start at an agreed time.
pub const POD_COMMANDS: &[&str] = &["run"];

/// The pod's command line after `fathom`: the ConfigMap's arguments with
/// `{index}` expanded and `--file` names read from `config_dir`, then the
/// agreed start and the document to `output`.
pub fn pod_args(config: &PodConfig, index: u32, config_dir: &str, output: &str) -> Vec<String> {
    let mut args: Vec<String> = config
        .args
        .iter()
        .map(|a| {
            if config.files.iter().any(|f| f == a) {
                format!("{config_dir}/{a}")
            } else {
                a.replace("{index}", &index.to_string())
            }
        })
        .collect();
    args.extend([
        "--start-at".to_string(),
        config.start_at.clone(),
        "--output-format".to_string(),
        "json".to_string(),
        "-o".to_string(),
        output.to_string(),
    ]);
    args
}

/// Whether the command after `--` is one a pod can run, and leaves the
/// pod's own flags to it; the reason when not.
pub fn check_command(args: &[String]) -> Result<(), String> {
    let Some(first) = args.first() else {
        return Err("no fathom command after `--` (e.g. `-- run /data/{index}.dat --rw randread --runtime 60s`)".into());
    };
    if !POD_COMMANDS.contains(&first.as_str()) {
        return Err(format!(
            "`{first}` cannot run in the pods: they start together with `fathom run --start-at`, so the command after `--` is `run ...`"
        ));
    }
    for a in args {
        let name = a.split('=').next().unwrap_or(a);
        if OWNED_FLAGS.contains(&name) {
            return Err(format!(
                "{name} is set in each pod (the agreed start, and the document to collect): leave it out of the command"
            ));
        }
    }
    Ok(())
}

/// A Kubernetes quantity (`10Gi`, `500M`, `1.5Ti`), as a claim's size.
pub fn check_quantity(text: &str) -> Result<(), String> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &text[digits.len()..];
    let number_ok = !digits.is_empty()
        && digits.split('.').count() <= 2
        && digits
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let suffix_ok = [
        "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "k", "M", "G", "T", "P", "E",
    ]
    .contains(&suffix);
    if number_ok && suffix_ok {
        return Ok(());
    }
    let hint = match suffix {
        "g" | "gb" | "GB" | "GiB" => format!(" (binary: {digits}Gi; decimal: {digits}G)"),
        "t" | "tb" | "TB" | "TiB" => format!(" (binary: {digits}Ti; decimal: {digits}T)"),
        "m" | "mb" | "MB" | "MiB" => format!(" (binary: {digits}Mi; decimal: {digits}M)"),
        _ => String::new(),
    };
    Err(format!(
        "'{text}' is not a Kubernetes quantity{hint}: a number and one of Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E"
    ))
}

/// A `--file`'s name as a ConfigMap key: letters, digits, '-', '_' and
/// '.', and not the pod's own instructions.
pub fn check_file_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name != CONFIG_KEY
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "a ConfigMap key is letters, digits, '-', '_' and '.' (and not {CONFIG_KEY})"
        ))
    }
}

/// A name Kubernetes takes for the Job and what is named after it (a DNS
/// label, short enough for `NAME-INDEX-xxxxx` pods and `NAME-results`).
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{name}' is not a name Kubernetes takes here: lower-case letters, digits and '-', starting with a letter, at most 40 characters"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> PodConfig {
        PodConfig {
            args: ["run", "/data/{index}.dat", "--rw", "randread", "job.fio"]
                .map(String::from)
                .to_vec(),
            start_at: "2026-12-07T10:00:00Z".into(),
            clients: 3,
            files: vec!["job.fio".into()],
            results: ResultsTo::Log,
        }
    }

    #[test]
    fn a_pods_command_is_the_configmaps_with_its_index_its_start_and_its_output() {
        let args = pod_args(&config(), 2, "/etc/fathom", "/results/2.json");
        assert_eq!(
            args,
            [
                "run",
                "/data/2.dat",
                "--rw",
                "randread",
                "/etc/fathom/job.fio",
                "--start-at",
                "2026-12-07T10:00:00Z",
                "--output-format",
                "json",
                "-o",
                "/results/2.json"
            ]
        );
    }

    #[test]
    fn commands_quantities_and_names_are_checked_before_anything_is_printed() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_command(&args(&["run", "/data", "--runtime", "60s"])).is_ok());
        assert!(
            check_command(&[])
                .unwrap_err()
                .contains("no fathom command")
        );
        assert!(
            check_command(&args(&["tree", "/data"]))
                .unwrap_err()
                .contains("`tree`")
        );
        for owned in ["-o", "--output=x.json", "--start-at", "--mpi"] {
            let e = check_command(&args(&["run", "/data", owned])).unwrap_err();
            assert!(e.contains("set in each pod"), "{owned}: {e}");
        }
        for q in ["10Gi", "500M", "1.5Ti", "100"] {
            assert!(check_quantity(q).is_ok(), "{q}");
        }
        assert!(check_quantity("10g").unwrap_err().contains("10Gi"));
        assert!(check_quantity("Gi").is_err());
        assert!(check_quantity("1.2.3Gi").is_err());
        assert!(check_name("fathom-bench").is_ok());
        assert!(check_name("Fathom").is_err());
        assert!(check_name("a_b").is_err());
        assert!(check_name(&"a".repeat(41)).is_err());
    }
}
