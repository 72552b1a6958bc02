//! Traces of I/O: what a workload issued, when, where and how much. Read
//! from fio's iologs, blkparse's text, a CSV, or fathom's own recordings
//! (`record.rs`), and turned into the script a replay's workers follow.
//! One file per format.

pub mod blkparse;
pub mod csv;
pub mod fio_iolog;
pub mod record;
pub mod script;

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
    /// Index into [`Trace::devices`].
    pub device: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// How long it took when recorded (submission to completion), where
    /// the trace says (blkparse's completions, a CSV's latency column).
    pub latency_ns: Option<u64>,
    /// The line of a text trace it was read from (0 for a recording), so
    /// that a problem found later names it.
    pub line: u32,
}

/// A trace: its devices (files, device numbers) in the order first seen,
/// and its I/Os in the order issued.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// What the trace's format is called in reports.
    pub format: &'static str,
    pub devices: Vec<String>,
    pub ios: Vec<TraceIo>,
    /// The format records no times (fio's version 2 iologs): every I/O is
    /// at time 0, so the trace can only be played as fast as possible.
    pub timeless: bool,
}

impl Trace {
    /// The index of `name`, added when new.
    fn device(&mut self, name: &str) -> u32 {
        match self.devices.iter().position(|d| d == name) {
            Some(i) => i as u32,
            None => {
                self.devices.push(name.to_string());
                (self.devices.len() - 1) as u32
            }
        }
    }

    /// Sorts the I/Os by time, keeping the order of I/Os issued at the same
    /// time (a recording's workers write their I/Os in batches).
    fn sort(&mut self) {
        self.ios.sort_by_key(|io| io.t_ns);
    }

    /// From the first I/O to the last, in ns.
    pub fn span_ns(&self) -> u64 {
        match (self.ios.first(), self.ios.last()) {
            (Some(a), Some(b)) => b.t_ns - a.t_ns,
            _ => 0,
        }
    }

    /// The end of the furthest I/O on `device`.
    pub fn extent(&self, device: u32) -> u64 {
        self.ios
            .iter()
            .filter(|io| io.device == device && io.op != Op::Sync)
            .map(|io| io.offset + u64::from(io.len))
            .max()
            .unwrap_or(0)
    }

    /// The largest power of two, up to 4096, that every offset and length
    /// is a multiple of: what O_DIRECT needs of a target to replay it.
    pub fn alignment(&self) -> u64 {
        let bits = self
            .ios
            .iter()
            .filter(|io| io.op != Op::Sync)
            .fold(0u64, |acc, io| acc | io.offset | u64::from(io.len));
        match bits {
            0 => 4096,
            b => (1u64 << b.trailing_zeros()).min(4096),
        }
    }

    /// The I/Os from `from_ns` up to `to_ns` of the trace, their times made
    /// relative to `from_ns`.
    pub fn window(&mut self, from_ns: u64, to_ns: Option<u64>) {
        let start = self.ios.first().map_or(0, |io| io.t_ns);
        let (from, to) = (start + from_ns, to_ns.map(|t| start + t));
        self.ios
            .retain(|io| io.t_ns >= from && to.is_none_or(|t| io.t_ns < t));
        for io in &mut self.ios {
            io.t_ns -= from;
        }
    }
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
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = Vec::with_capacity(4096);
    if std::io::Read::read_to_end(&mut std::io::Read::take(file, 4096), &mut head).is_err() {
        return false;
    }
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

/// The largest trace file fathom reads (it holds a trace's I/Os in memory,
/// about 40 bytes each).
pub const MAX_TRACE_BYTES: u64 = 16 << 30;

/// Reads the trace at `path`, its format told by its first bytes: fathom's
/// recordings and fio's iologs say what they are, a CSV starts with its
/// header, and anything else is taken as blkparse's text.
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    let at = At { file: &name };
    // A trace is a regular file: a device or a FIFO (/dev/zero) would be
    // read until memory ran out.
    let bytes =
        crate::util::input::read_bytes_bounded(path, MAX_TRACE_BYTES, "a trace").map_err(|e| {
            TraceError {
                file: name.clone(),
                line: 0,
                message: format!(
                    "cannot read: {}",
                    e.0.trim_start_matches(&format!("{name}: "))
                ),
            }
        })?;
    let trace = if bytes.starts_with(record::MAGIC) {
        record::parse(&bytes, at)?
    } else {
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            at.line(
                0,
                "not a trace fathom reads (neither text nor a fathom recording)",
            )
        })?;
        let first = text.lines().next().unwrap_or("").trim();
        if first.starts_with("fio version") {
            fio_iolog::parse(text, at)?
        } else if first.starts_with("time,") || first.starts_with("time_ns,") {
            csv::parse(text, at)?
        } else {
            blkparse::parse(text, at)?
        }
    };
    if trace.ios.is_empty() {
        return Err(at.line(0, "holds no I/O"));
    }
    if let Some(io) = trace.ios.iter().find(|io| io.t_ns > MAX_TRACE_TIME_NS) {
        return Err(at.line(
            0,
            bounded_time(None, &format!("{} ns", io.t_ns)).unwrap_err(),
        ));
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(t_ns: u64, offset: u64, len: u32) -> TraceIo {
        TraceIo {
            line: 0,
            t_ns,
            device: 0,
            op: Op::Read,
            offset,
            len,
            latency_ns: None,
        }
    }

    #[test]
    fn a_window_keeps_its_part_and_starts_it_at_zero() {
        let mut t = Trace {
            format: "csv",
            devices: vec!["d".into()],
            ios: (0..10)
                .map(|i| io(1_000 + i * 100, i * 4096, 4096))
                .collect(),
            ..Trace::default()
        };
        assert_eq!(t.span_ns(), 900);
        assert_eq!(t.extent(0), 40960);
        t.window(200, Some(500));
        let times: Vec<u64> = t.ios.iter().map(|io| io.t_ns).collect();
        assert_eq!(times, [0, 100, 200]);
    }

    #[test]
    fn alignment_is_what_every_io_shares() {
        let mut t = Trace {
            ios: vec![io(0, 8192, 4096), io(1, 4096, 8192)],
            ..Trace::default()
        };
        assert_eq!(t.alignment(), 4096);
        t.ios.push(io(2, 512, 1024));
        assert_eq!(t.alignment(), 512);
    }
}
