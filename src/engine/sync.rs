//! The portable engine: plain pread/pwrite, one I/O at a time per worker
//! (fio's `psync`). Parallelism comes from `--numjobs`.

use super::trim::TrimMethod;
use super::{Completion, Direction, Engine, IoRequest};
use crate::spec::IoFlags;
use crate::util::buffers::Buffers;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

pub struct SyncEngine {
    file: File,
    flags: IoFlags,
    trim: TrimMethod,
    buffers: Buffers,
    queued: Vec<IoRequest>,
    completed: Vec<Completion>,
}

impl SyncEngine {
    pub fn new(file: File, buffers: Buffers, flags: IoFlags) -> io::Result<Self> {
        Ok(SyncEngine {
            trim: TrimMethod::of(&file)?,
            file,
            flags,
            buffers,
            queued: Vec::with_capacity(1),
            completed: Vec::with_capacity(1),
        })
    }
}

impl Engine for SyncEngine {
    fn buffers(&mut self) -> &mut Buffers {
        &mut self.buffers
    }

    fn queue(&mut self, request: IoRequest) {
        self.queued.push(request);
    }

    fn submit_and_wait(&mut self, _min_complete: u32, _timeout: Duration) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        for request in self.queued.drain(..) {
            let buf = self.buffers.slot_ptr(request.slot as usize);
            let len = request.len as usize;
            let offset = request.offset as libc::off_t;
            if request.dir == Direction::Trim {
                let result = self.trim.trim(&self.file, request.offset, request.len);
                self.completed.push(Completion {
                    slot: request.slot,
                    result,
                });
                continue;
            }
            let result = loop {
                // SAFETY: buf points at a slot of at least `len` bytes owned by
                // self.buffers, which the worker does not touch until reaped.
                let n = unsafe {
                    let iov = libc::iovec {
                        iov_base: buf.cast(),
                        iov_len: len,
                    };
                    // fio's psync calls pread/pwrite, pvsync2 the v2 calls
                    // with flags: the plain ones unless a flag is asked.
                    match (request.dir, self.flags) {
                        (Direction::Read, IoFlags { read: 0, .. }) => {
                            libc::pread(fd, buf.cast(), len, offset)
                        }
                        (Direction::Read, IoFlags { read, .. }) => {
                            libc::preadv2(fd, &iov, 1, offset, read)
                        }
                        (Direction::Write, IoFlags { write: 0, .. }) => {
                            libc::pwrite(fd, buf.cast(), len, offset)
                        }
                        (Direction::Write, IoFlags { write, .. }) => {
                            libc::pwritev2(fd, &iov, 1, offset, write)
                        }
                        (Direction::Trim, _) => unreachable!("trims are done above"),
                    }
                };
                if n < 0 {
                    let err = io::Error::last_os_error();
                    if err.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    break -err.raw_os_error().unwrap_or(libc::EIO);
                }
                break n as i32;
            };
            self.completed.push(Completion {
                slot: request.slot,
                result,
            });
        }
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.completed);
    }

    fn drop_cached(&mut self, offset: u64, len: u64) {
        crate::util::advise(&self.file, offset, len, libc::POSIX_FADV_DONTNEED);
    }

    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        super::sync_file(&self.file, data_only)
    }
}
