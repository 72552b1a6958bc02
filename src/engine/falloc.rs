//! fio's `falloc` engine: each I/O is an allocation of its range
//! (`fallocate`), one at a time per worker. A read allocates and keeps the
//! file's size (KEEP_SIZE), a write allocates and may extend it, a trim
//! punches a hole; no byte moves, so what it measures is the file system's
//! allocator (fragmentation, extent trees).

use super::trim::TrimMethod;
use super::{Completion, Direction, Engine, IoRequest};
use crate::util::buffers::Buffers;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

pub struct FallocEngine {
    file: File,
    buffers: Buffers,
    completed: Vec<Completion>,
}

impl FallocEngine {
    pub fn new(file: File, buffers: Buffers) -> Self {
        FallocEngine {
            file,
            buffers,
            completed: Vec::with_capacity(1),
        }
    }

    /// fio's modes, direction by direction (engines/falloc.c).
    fn mode(dir: Direction) -> i32 {
        match dir {
            Direction::Read => libc::FALLOC_FL_KEEP_SIZE,
            Direction::Write => 0,
            Direction::Trim => TrimMethod::PUNCH_HOLE_MODE,
        }
    }
}

impl Engine for FallocEngine {
    fn buffers(&mut self) -> &mut Buffers {
        &mut self.buffers
    }

    /// Done at once: a queue of one, as fio's synchronous engines.
    fn queue(&mut self, request: IoRequest) {
        let result = loop {
            // SAFETY: a plain syscall on a descriptor self.file keeps open.
            let r = unsafe {
                libc::fallocate(
                    self.file.as_raw_fd(),
                    Self::mode(request.dir),
                    request.offset as libc::off_t,
                    libc::off_t::from(request.len),
                )
            };
            if r == 0 {
                // fio counts the range as the I/O's bytes.
                break request.len as i32;
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                break -err.raw_os_error().unwrap_or(libc::EIO);
            }
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
