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

/// Calls `call` until it is not interrupted: `counted` bytes when it
/// returns 0, else the negative errno, as a completion carries it.
pub fn retried(mut call: impl FnMut() -> libc::c_int, counted: u32) -> i32 {
    loop {
        if call() == 0 {
            return counted as i32;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return -err.raw_os_error().unwrap_or(libc::EIO);
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
        if data_only {
            self.file.sync_data()
        } else {
            self.file.sync_all()
        }
    }
}
