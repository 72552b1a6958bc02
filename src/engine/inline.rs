//! The engines whose every I/O is one system call answered within it, with
//! no data moved (falloc, ftruncate): a queue of one, done as it is queued,
//! each engine only its call.

use super::{Completion, Engine, IoRequest};
use crate::util::buffers::Buffers;
use std::fs::File;
use std::io;
use std::time::Duration;

/// One I/O done on the file: the bytes it counts for, or a negative errno.
pub type Operation = fn(&File, &IoRequest) -> i32;

pub struct InlineEngine {
    file: File,
    buffers: Buffers,
    operation: Operation,
    completed: Vec<Completion>,
}

impl InlineEngine {
    pub fn new(file: File, buffers: Buffers, operation: Operation) -> Self {
        InlineEngine {
            file,
            buffers,
            operation,
            completed: Vec::with_capacity(1),
        }
    }
}

impl Engine for InlineEngine {
    fn buffers(&mut self) -> &mut Buffers {
        &mut self.buffers
    }

    fn queue(&mut self, request: IoRequest) {
        let result = (self.operation)(&self.file, &request);
        self.completed.push(Completion {
            slot: request.slot,
            result,
        });
    }

    fn submits_on_queue(&self) -> bool {
        true
    }

    fn submit_and_wait(&mut self, _min_complete: u32, _timeout: Duration) -> io::Result<()> {
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.completed);
    }

    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        super::sync_file(&self.file, data_only)
    }
}
