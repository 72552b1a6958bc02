//! The null engine: every I/O completes at once without touching a device.
//! Measures fathom's own overhead per I/O (fio's `null`).

use super::buffers::Buffers;
use super::{Completion, Engine, IoRequest};
use std::io;
use std::time::Duration;

pub struct NullEngine {
    buffers: Buffers,
    queued: Vec<Completion>,
    completed: Vec<Completion>,
}

impl NullEngine {
    pub fn new(buffers: Buffers) -> Self {
        let depth = buffers.slots();
        NullEngine {
            buffers,
            queued: Vec::with_capacity(depth),
            completed: Vec::with_capacity(depth),
        }
    }
}

impl Engine for NullEngine {
    fn buffers(&mut self) -> &mut Buffers {
        &mut self.buffers
    }

    fn queue(&mut self, request: IoRequest) {
        self.queued.push(Completion {
            slot: request.slot,
            result: request.len as i32,
        });
    }

    fn submit_and_wait(&mut self, _min_complete: u32, _timeout: Duration) -> io::Result<()> {
        self.completed.append(&mut self.queued);
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.completed);
    }

    fn sync(&mut self, _data_only: bool) -> io::Result<()> {
        Ok(())
    }
}
