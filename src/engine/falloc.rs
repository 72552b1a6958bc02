//! fio's `falloc` engine: each I/O is an allocation of its range
//! (`fallocate`), one at a time per worker. A read allocates and keeps the
//! file's size (KEEP_SIZE), a write allocates and may extend it, a trim
//! punches a hole; no byte moves, so what it measures is the file system's
//! allocator (fragmentation, extent trees).

use super::inline::InlineEngine;
use super::trim::TrimMethod;
use super::{Direction, IoRequest, retried};
use crate::util::buffers::Buffers;
use std::fs::File;
use std::os::fd::AsRawFd;

pub fn engine(file: File, buffers: Buffers) -> InlineEngine {
    InlineEngine::new(file, buffers, allocate)
}

/// fio's modes, direction by direction (engines/falloc.c); fio counts the
/// range as the I/O's bytes.
fn allocate(file: &File, request: &IoRequest) -> i32 {
    let mode = match request.dir {
        Direction::Read => libc::FALLOC_FL_KEEP_SIZE,
        Direction::Write => 0,
        Direction::Trim => TrimMethod::PUNCH_HOLE_MODE,
    };
    // SAFETY: a plain syscall on a descriptor `file` keeps open.
    retried(
        || unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                mode,
                request.offset as libc::off_t,
                libc::off_t::from(request.len),
            )
        },
        request.len,
    )
}
