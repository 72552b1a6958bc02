//! Where a run stood among the clients of one Kubernetes run (`fathom k8s`):
//! its pod's index in the Indexed Job, how many there were, the pod's name
//! and the node it ran on. `fathom k8s collect` joins the pods' documents
//! by it and names an index that never reported.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pod {
    /// `JOB_COMPLETION_INDEX`: 0 to `clients` - 1.
    pub index: u32,
    /// How many pods the Job ran (its completions and parallelism).
    pub clients: u32,
    /// The pod's name (its hostname inside the pod).
    pub name: String,
    /// The node it was scheduled on (the downward API's `spec.nodeName`);
    /// absent when the pod was not told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl Pod {
    /// The name a merge gives this pod's rank: its node, else its name.
    pub fn host(&self) -> &str {
        self.node.as_deref().unwrap_or(&self.name)
    }
}
