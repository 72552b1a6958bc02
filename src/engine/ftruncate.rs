//! fio's `ftruncate` engine: each write sets the file's length to the
//! write's offset (its block size is only the step between offsets); a
//! read or a trim fails with EINVAL, as in fio. What it measures is how
//! fast the file system grows and shrinks a file.

use super::{Completion, Direction, Engine, IoRequest};
use crate::util::buffers::Buffers;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

pub struct FtruncateEngine {
    file: File,
    buffers: Buffers,
    completed: Vec<Completion>,
}

impl FtruncateEngine {
    pub fn new(file: File, buffers: Buffers) -> Self {
        FtruncateEngine {
            file,
            buffers,
            completed: Vec::with_capacity(1),
        }
    }
}

impl Engine for FtruncateEngine {
    fn buffers(&mut self) -> &mut Buffers {
        &mut self.buffers
    }

    /// Done at once: a queue of one, as fio's synchronous engines.
    fn queue(&mut self, request: IoRequest) {
        let result = match request.dir {
            Direction::Write => loop {
                // SAFETY: a plain syscall on a descriptor self.file keeps open.
                let r = unsafe {
                    libc::ftruncate(self.file.as_raw_fd(), request.offset as libc::off_t)
                };
                if r == 0 {
                    // fio counts the block size as the I/O's bytes.
                    break request.len as i32;
                }
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    break -err.raw_os_error().unwrap_or(libc::EIO);
                }
            },
            Direction::Read | Direction::Trim => -libc::EINVAL,
        };
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
