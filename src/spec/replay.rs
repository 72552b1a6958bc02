//! What a replay plays: a trace, on which targets, how fast, which part of
//! it and how often (`fathom replay`). Written into the result so a replay
//! can be repeated; the trace itself is loaded before anything runs.

use crate::trace::Trace;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplaySpec {
    /// The trace file, as given.
    pub trace: String,
    /// Its format, as read (`fio iolog v3`, `blkparse`, `csv`, `fathom
    /// recording`).
    pub format: String,
    /// Per target, in order: the trace's device (file, `MAJ,MIN`) it plays.
    pub devices: Vec<String>,
    /// How much faster than recorded each I/O is due (1 = as recorded);
    /// None: as fast as the depth allows, in order (closed loop).
    pub speed: Option<f64>,
    /// Offsets past a target's end are folded into it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wrap: bool,
    /// The part of the trace played, in seconds from its first I/O.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub from_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_s: Option<f64>,
    /// Times the trace (or its part) is played, one after the other.
    pub loops: u32,
    /// The trace as loaded, its window applied; absent in a result read
    /// back.
    #[serde(skip)]
    pub loaded: Option<Arc<Trace>>,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl PartialEq for ReplaySpec {
    /// Two replays are the same when they play the same file the same way,
    /// whether or not one has it loaded.
    fn eq(&self, other: &Self) -> bool {
        (
            &self.trace,
            &self.format,
            &self.devices,
            self.speed,
            self.wrap,
            self.from_s,
            self.to_s,
            self.loops,
        ) == (
            &other.trace,
            &other.format,
            &other.devices,
            other.speed,
            other.wrap,
            other.from_s,
            other.to_s,
            other.loops,
        )
    }
}

impl ReplaySpec {
    /// "1x", "2.5x" or "as fast as possible".
    pub fn pace(&self) -> String {
        match self.speed {
            Some(s) => format!(
                "{}x",
                format!("{s:.3}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
            ),
            None => "as fast as possible".into(),
        }
    }

    /// The file name of the trace, for labels.
    pub fn trace_name(&self) -> &str {
        std::path::Path::new(&self.trace)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(&self.trace)
    }
}
