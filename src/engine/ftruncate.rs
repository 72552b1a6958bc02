//! fio's `ftruncate` engine: each write sets the file's length to the
//! write's offset (its block size is only the step between offsets); a
//! read or a trim fails with EINVAL, as in fio. What it measures is how
//! fast the file system grows and shrinks a file.

use super::inline::InlineEngine;
use super::{Direction, IoRequest, retried};
use crate::util::buffers::Buffers;
use std::fs::File;
use std::os::fd::AsRawFd;

pub fn engine(file: File, buffers: Buffers) -> InlineEngine {
    InlineEngine::new(file, buffers, truncate)
}

/// fio counts the block size as the write's bytes.
fn truncate(file: &File, request: &IoRequest) -> i32 {
    match request.dir {
        // SAFETY: a plain syscall on a descriptor `file` keeps open.
        Direction::Write => retried(
            || unsafe { libc::ftruncate(file.as_raw_fd(), request.offset as libc::off_t) },
            request.len,
        ),
        Direction::Read | Direction::Trim => -libc::EINVAL,
    }
}
