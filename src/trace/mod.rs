//! Traces of I/O: what a workload issued, when, where and how much. Read
//! from fio's iologs, blkparse's text, a CSV, or fathom's own recordings
//! (`record.rs`), one file per format, one event at a time (`read.rs`).
//! A trace is never held in memory: `file.rs` reads it once to learn what
//! it holds, and every replay pass streams it again, in time order
//! (`order.rs`), into the script a replay's workers follow (`script.rs`).

pub mod blkparse;
pub mod csv;
pub mod event;
pub mod file;
pub mod fio_iolog;
pub mod order;
pub mod read;
pub mod record;
pub mod script;

pub use event::{Answer, Event};
pub use file::Trace;
pub use read::Reader;

use std::fmt;
use std::path::Path;

/// What an I/O of a trace does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Read,
    Write,
    Trim,
    /// A flush of everything written before it (fsync, a flush request).
    Sync,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Sync => "sync",
        }
    }
}

/// One I/O of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceIo {
    /// When it was issued, in ns from the start of the trace.
    pub t_ns: u64,
    /// Index into the trace's devices, in the order first seen.
    pub device: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// The line of a text trace it was read from (0 for a recording), so
    /// that a problem found later names it.
    pub line: u32,
}

/// What is wrong with a trace, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub file: String,
    /// 0 when the problem is not of one line.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file, self.message),
            n => write!(f, "{}:{n}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for TraceError {}

/// Where a trace's problems are: makes [`TraceError`]s of one file.
#[derive(Clone, Copy)]
pub struct At<'a> {
    pub file: &'a str,
}

impl At<'_> {
    pub fn line(&self, line: usize, message: impl Into<String>) -> TraceError {
        TraceError {
            file: self.file.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// The latest time a trace may give an I/O: a year and a day from its
/// start. Later times are a unit mix-up or garbage, and would be "due"
/// beyond any run.
pub const MAX_TRACE_TIME_NS: u64 = 366 * 86_400 * 1_000_000_000;

/// A time of a trace, in ns (`None` when its arithmetic overflowed),
/// within [`MAX_TRACE_TIME_NS`]; `text` is the time as written.
pub fn bounded_time(ns: Option<u64>, text: &str) -> Result<u64, String> {
    ns.filter(|&ns| ns <= MAX_TRACE_TIME_NS).ok_or_else(|| {
        format!("time {text} is more than a year and a day from the trace's start: not a time fathom plays")
    })
}

/// Parses `text` as a number, naming `what` when it is not one.
pub fn number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{what} '{text}' is not a whole number"))
}

/// Whether `path` is a trace fathom reads, by its first bytes (a fathom
/// recording, an fio iolog, a CSV of I/Os, or blkparse events): a command
/// that takes either a trace or a target tells them apart so.
pub fn looks_like_trace(path: &Path) -> bool {
    let Some(head) = crate::gate::read::head(path, 4096) else {
        return false;
    };
    if head.starts_with(record::MAGIC) {
        return true;
    }
    let text = String::from_utf8_lossy(&head);
    let first = text.lines().next().unwrap_or("").trim();
    first.starts_with("fio version")
        || first.starts_with("time,")
        || first.starts_with("time_ns,")
        || blkparse::is_event(first)
}

/// A whole trace in memory, in time order: for tests and small tools
/// (a replay streams its trace through [`Trace`] instead).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    pub format: &'static str,
    pub devices: Vec<String>,
    pub ios: Vec<TraceIo>,
    /// Per I/O, how long it took when recorded, where the trace says.
    pub latencies: Vec<Option<u64>>,
    pub timeless: bool,
}

/// Reads every event of `reader` into memory, sorted by time (the order of
/// I/Os at the same time kept).
pub fn collect(mut reader: Reader) -> Result<Loaded, TraceError> {
    let mut ios = Vec::new();
    let mut answers = Vec::new();
    for event in reader.by_ref() {
        match event? {
            Event::Io(io) => ios.push(io),
            Event::Answered(a) => answers.push(a),
        }
    }
    let mut latencies = vec![None; ios.len()];
    for a in answers {
        latencies[a.io as usize] = Some(a.latency_ns);
    }
    let mut order: Vec<usize> = (0..ios.len()).collect();
    order.sort_by_key(|&i| ios[i].t_ns);
    Ok(Loaded {
        format: reader.format(),
        devices: reader.devices().to_vec(),
        ios: order.iter().map(|&i| ios[i]).collect(),
        latencies: order.iter().map(|&i| latencies[i]).collect(),
        timeless: reader.timeless(),
    })
}

/// Reads a whole trace from text, its problems named as of `at`'s file.
#[cfg(test)]
pub fn parse(text: &str, at: At) -> Result<Loaded, TraceError> {
    collect(Reader::new(
        Box::new(std::io::Cursor::new(text.to_string())),
        at.file,
    )?)
}

/// Reads the whole trace at `path` into memory (see [`Loaded`]).
pub fn load(path: &Path) -> Result<Loaded, TraceError> {
    collect(Reader::open(path)?)
}
