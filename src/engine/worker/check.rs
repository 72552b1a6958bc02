//! Interleaved verification: a block read back right after its write
//! completes, checked against what was written.

use crate::engine::Direction;
use crate::util::buffers::Buffers;
use crate::util::verify::{BlockMap, VerifyReport};
use std::fs::File;
use std::sync::Arc;

/// The thread that reads each written block back right after its write
/// (`--verify-interleaved`) and then releases it in the block map.
pub(super) struct Checker {
    pub(super) blocks: Option<std::sync::mpsc::Sender<(u64, u64)>>,
    pub(super) thread: std::thread::JoinHandle<VerifyReport>,
}

impl Checker {
    pub(super) fn start(file: File, map: Arc<BlockMap>, mut scratch: Buffers, bs: usize) -> Self {
        let (blocks, written) = std::sync::mpsc::channel::<(u64, u64)>();
        let thread = std::thread::spawn(move || {
            let mut report = VerifyReport::new("interleaved");
            for (offset, generation) in written {
                let block = &mut scratch.slot_mut(0)[..bs];
                crate::util::verify::check_one(&file, block, offset, generation, &map, &mut report);
                map.end_write(offset, generation, true);
            }
            report
        });
        Checker {
            blocks: Some(blocks),
            thread,
        }
    }

    pub(super) fn check(&self, offset: u64, generation: u64) {
        if let Some(blocks) = &self.blocks {
            let _ = blocks.send((offset, generation));
        }
    }

    /// Waits for the checks still queued and returns the report.
    pub(super) fn finish(mut self) -> VerifyReport {
        self.blocks = None;
        self.thread
            .join()
            .unwrap_or_else(|_| VerifyReport::new("interleaved"))
    }
}

pub(super) fn describe_failure(result: i32, dir: Direction, offset: u64, bs: u32) -> String {
    let what = dir.name();
    if result < 0 {
        format!(
            "{what} of {bs} bytes at offset {offset} failed: {}",
            std::io::Error::from_raw_os_error(-result)
        )
    } else {
        format!("short {what} at offset {offset}: {result} of {bs} bytes")
    }
}
