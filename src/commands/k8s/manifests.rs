//! The manifests of one run from N pods: a ConfigMap with the command and
//! the agreed start, a headless Service (each pod's stable name,
//! `NAME-INDEX.NAME`), an RWX claim when the pods share one, and an Indexed
//! Job whose pods are spread over the nodes, each with its own claim (a
//! generic ephemeral volume) or the shared one, mounted as a file system or
//! handed over as a block device.

use super::{CONFIG_DIR, CONFIG_KEY, DEVICE_PATH, MOUNT_PATH, PodConfig, RESULTS_DIR, ResultsTo};
use serde_json::{Value, json};

/// How each pod sees its volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumeMode {
    /// Mounted at [`MOUNT_PATH`] (`volumeMounts`).
    Filesystem,
    /// The raw device at [`DEVICE_PATH`] (`volumeDevices`).
    Block,
}

impl VolumeMode {
    fn as_str(self) -> &'static str {
        match self {
            VolumeMode::Filesystem => "Filesystem",
            VolumeMode::Block => "Block",
        }
    }
}

/// Which claims the pods use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claims {
    /// A ReadWriteOnce claim of its own for each pod, made and removed
    /// with it (`ephemeral.volumeClaimTemplate`).
    PerPod,
    /// One ReadWriteMany claim every pod mounts.
    Shared,
}

#[derive(Debug, Clone)]
pub struct Spec {
    /// The Job's name; the ConfigMap and Service share it.
    pub name: String,
    pub namespace: Option<String>,
    pub image: String,
    /// None: the cluster's default StorageClass.
    pub storage_class: Option<String>,
    /// Each claim's size, as a Kubernetes quantity.
    pub size: String,
    pub volume_mode: VolumeMode,
    pub claims: Claims,
    /// Each pod's requests.
    pub cpu: String,
    pub memory: String,
    pub config: PodConfig,
    /// `--file`s: each name and its text, beside the config in the
    /// ConfigMap.
    pub files: Vec<(String, String)>,
}

impl Spec {
    /// The label every object of this run carries, and the pods are
    /// selected by.
    pub fn selector(&self) -> Value {
        json!({ "app.kubernetes.io/instance": self.name })
    }

    fn labels(&self) -> Value {
        json!({
            "app.kubernetes.io/name": "fathom",
            "app.kubernetes.io/instance": self.name,
        })
    }

    fn metadata(&self, name: &str) -> Value {
        let mut m = json!({ "name": name, "labels": self.labels() });
        if let Some(ns) = &self.namespace {
            m["namespace"] = json!(ns);
        }
        m
    }

    /// The name of the claim every pod shares.
    pub fn shared_claim(&self) -> String {
        format!("{}-data", self.name)
    }

    fn claim_spec(&self, access: &str) -> Value {
        let mut spec = json!({
            "accessModes": [access],
            "volumeMode": self.volume_mode.as_str(),
            "resources": { "requests": { "storage": self.size } },
        });
        if let Some(class) = &self.storage_class {
            spec["storageClassName"] = json!(class);
        }
        spec
    }
}

/// Every object, in the order `kubectl apply` should make them (what the
/// Job's pods mount before the Job).
pub fn manifests(spec: &Spec) -> Vec<Value> {
    let mut out = vec![config_map(spec), service(spec)];
    if spec.claims == Claims::Shared {
        out.push(json!({
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": spec.metadata(&spec.shared_claim()),
            "spec": spec.claim_spec("ReadWriteMany"),
        }));
    }
    out.push(job(spec));
    out
}

fn config_map(spec: &Spec) -> Value {
    let mut data = serde_json::Map::new();
    let config = serde_json::to_string_pretty(&spec.config).unwrap_or_default() + "\n";
    data.insert(CONFIG_KEY.into(), json!(config));
    for (name, text) in &spec.files {
        data.insert(name.clone(), json!(text));
    }
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": spec.metadata(&spec.name),
        "data": data,
    })
}

fn service(spec: &Spec) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": spec.metadata(&spec.name),
        "spec": {
            "clusterIP": "None",
            "selector": spec.selector(),
        },
    })
}

fn job(spec: &Spec) -> Value {
    let n = spec.config.clients;
    let data_volume = match spec.claims {
        Claims::PerPod => json!({
            "name": "data",
            "ephemeral": { "volumeClaimTemplate": {
                "metadata": { "labels": spec.labels() },
                "spec": spec.claim_spec("ReadWriteOnce"),
            }},
        }),
        Claims::Shared => json!({
            "name": "data",
            "persistentVolumeClaim": { "claimName": spec.shared_claim() },
        }),
    };
    let results_volume = match &spec.config.results {
        ResultsTo::Log => json!({ "name": "results", "emptyDir": {} }),
        ResultsTo::Claim(claim) => json!({
            "name": "results",
            "persistentVolumeClaim": { "claimName": claim },
        }),
    };
    let mut container = json!({
        "name": "fathom",
        "image": spec.image,
        "command": ["fathom"],
        "args": ["k8s", "pod", "--config", CONFIG_DIR, "--results", RESULTS_DIR],
        "env": [
            { "name": "NODE_NAME", "valueFrom": { "fieldRef": { "fieldPath": "spec.nodeName" } } },
            { "name": "POD_NAME", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } },
            // A pod's history would die with it: the collected document
            // is the record.
            { "name": "FATHOM_NO_HISTORY", "value": "1" },
        ],
        "resources": { "requests": { "cpu": spec.cpu, "memory": spec.memory } },
        "volumeMounts": [
            { "name": "config", "mountPath": CONFIG_DIR, "readOnly": true },
            { "name": "results", "mountPath": RESULTS_DIR },
        ],
    });
    match spec.volume_mode {
        VolumeMode::Filesystem => {
            if let Some(mounts) = container["volumeMounts"].as_array_mut() {
                mounts.push(json!({ "name": "data", "mountPath": MOUNT_PATH }));
            }
            container["workingDir"] = json!(MOUNT_PATH);
        }
        VolumeMode::Block => {
            container["volumeDevices"] = json!([{ "name": "data", "devicePath": DEVICE_PATH }]);
        }
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": spec.metadata(&spec.name),
        "spec": {
            "completionMode": "Indexed",
            "completions": n,
            "parallelism": n,
            // A pod started again would start after the agreed time and
            // measure alone: a lost index stays lost, and the others run on.
            "backoffLimitPerIndex": 0,
            "template": {
                "metadata": { "labels": spec.labels() },
                "spec": {
                    "restartPolicy": "Never",
                    "subdomain": spec.name,
                    "topologySpreadConstraints": [{
                        "maxSkew": 1,
                        "topologyKey": "kubernetes.io/hostname",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": { "matchLabels": spec.selector() },
                    }],
                    "containers": [container],
                    "volumes": [
                        { "name": "config", "configMap": { "name": spec.name } },
                        results_volume,
                        data_volume,
                    ],
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(mode: VolumeMode, claims: Claims) -> Spec {
        Spec {
            name: "fathom".into(),
            namespace: None,
            image: "fathom:0.1.0".into(),
            storage_class: Some("fast".into()),
            size: "10Gi".into(),
            volume_mode: mode,
            claims,
            cpu: "1".into(),
            memory: "512Mi".into(),
            config: PodConfig {
                args: vec!["run".into(), "/data/{index}.dat".into()],
                start_at: "2026-12-07T10:00:00Z".into(),
                clients: 3,
                files: vec![],
                results: ResultsTo::Log,
            },
            files: vec![],
        }
    }

    #[test]
    fn block_hands_over_a_device_and_filesystem_mounts_it() {
        let job = |m, c| manifests(&spec(m, c)).pop().unwrap();
        let fs = job(VolumeMode::Filesystem, Claims::PerPod);
        let c = &fs["spec"]["template"]["spec"]["containers"][0];
        assert!(c.get("volumeDevices").is_none());
        assert_eq!(c["volumeMounts"][2]["mountPath"], MOUNT_PATH);
        let block = job(VolumeMode::Block, Claims::Shared);
        let c = &block["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["volumeDevices"][0]["devicePath"], DEVICE_PATH);
        assert!(
            c["volumeMounts"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["name"] != "data")
        );
        assert_eq!(
            block["spec"]["template"]["spec"]["volumes"][2]["persistentVolumeClaim"]["claimName"],
            "fathom-data"
        );
    }

    #[test]
    fn the_configmap_holds_what_each_pod_reads_back() {
        let all = manifests(&spec(VolumeMode::Filesystem, Claims::PerPod));
        let text = all[0]["data"][CONFIG_KEY].as_str().unwrap();
        let back: PodConfig = serde_json::from_str(text).unwrap();
        assert_eq!(back, spec(VolumeMode::Filesystem, Claims::PerPod).config);
        assert_eq!(all.len(), 3, "no shared claim for claims per pod");
    }
}
