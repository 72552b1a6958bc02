//! A trace read one event at a time, in the order of the file: the format
//! told by the first bytes (fathom's recordings and fio's iologs say what
//! they are, a CSV starts with its header, anything else is taken as
//! blkparse's text), each line (or record) handed to its format's reader.
//! Memory stays bounded whatever the file's size: a line is at most
//! [`MAX_LINE`] bytes, and a format keeps only what it waits for (blkparse's
//! queued I/Os until their completion).

use super::event::{Event, Out, TextFormat};
use super::{At, TraceError, record};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The longest line a text trace may have: a longer one is not a trace
/// (and reading it whole could take any amount of memory).
pub const MAX_LINE: usize = 64 << 10;

enum Source {
    Text(Box<dyn TextFormat>),
    Recording,
}

/// A trace read one event at a time (an iterator of events; the first
/// problem ends it).
pub struct Reader {
    name: String,
    input: Box<dyn BufRead + Send>,
    source: Source,
    out: Out,
    buf: Vec<u8>,
    done: bool,
    /// Nothing was read yet: a trace of no I/O is an error.
    empty: bool,
}

impl Reader {
    /// Opens the trace at `path`. It must be a regular file: a device or a
    /// FIFO (/dev/zero) is no trace, and a replay reads its trace more than
    /// once.
    pub fn open(path: &Path) -> Result<Reader, TraceError> {
        let name = path.display().to_string();
        let fail = |m: String| At { file: &name }.line(0, m);
        let file = crate::gate::read::open(path, crate::gate::read::TRACE)
            .map_err(|e| fail(e.0.trim_start_matches(&format!("{name}: ")).to_string()))?;
        Reader::new(Box::new(BufReader::with_capacity(1 << 20, file)), &name)
    }

    /// Reads a trace from `input`, named `name` in its problems.
    pub fn new(mut input: Box<dyn BufRead + Send>, name: &str) -> Result<Reader, TraceError> {
        let at = At { file: name };
        let head = input
            .fill_buf()
            .map_err(|e| at.line(0, format!("cannot read: {e}")))?;
        let mut out = Out::default();
        let source = if head.starts_with(record::MAGIC) {
            record::read_header(&mut input, &mut out.devices, at)?;
            Source::Recording
        } else {
            let mut buf = Vec::new();
            let first = read_line(&mut input, &mut buf, at, 1)?.unwrap_or_default();
            out.line = 1;
            let format: Box<dyn TextFormat> = if first.starts_with("fio version") {
                Box::new(super::fio_iolog::FioIolog::new(first.trim()).map_err(|m| at.line(1, m))?)
            } else if first.starts_with("time,") || first.starts_with("time_ns,") {
                Box::new(super::csv::Csv::new(first).map_err(|m| at.line(1, m))?)
            } else {
                let mut blkparse = super::blkparse::Blkparse::default();
                blkparse.line(first, &mut out).map_err(|m| at.line(1, m))?;
                Box::new(blkparse)
            };
            Source::Text(format)
        };
        Ok(Reader {
            name: name.to_string(),
            input,
            source,
            out,
            buf: Vec::new(),
            done: false,
            empty: true,
        })
    }

    pub fn format(&self) -> &'static str {
        match &self.source {
            Source::Text(f) => f.name(),
            Source::Recording => "fathom recording",
        }
    }

    pub fn timeless(&self) -> bool {
        match &self.source {
            Source::Text(f) => f.timeless(),
            Source::Recording => false,
        }
    }

    /// The devices seen so far (a recording's, all from the start).
    pub fn devices(&self) -> &[String] {
        self.out.devices.names()
    }

    /// Reads the next line or record into `out`'s events.
    fn advance(&mut self) -> Result<(), TraceError> {
        let at = At { file: &self.name };
        match &mut self.source {
            Source::Recording => {
                if !record::read_record(&mut self.input, &mut self.out, at)? {
                    self.done = true;
                }
            }
            Source::Text(format) => {
                let line_no = self.out.line as usize + 1;
                match read_line(&mut self.input, &mut self.buf, at, line_no)? {
                    Some(text) => {
                        self.out.line = line_no as u32;
                        format
                            .line(text, &mut self.out)
                            .map_err(|m| at.line(line_no, m))?;
                    }
                    None => {
                        self.done = true;
                        format.end(&mut self.out).map_err(|m| at.line(0, m))?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Iterator for Reader {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(event) = self.out.events.pop_front() {
                self.empty = false;
                return Some(Ok(event));
            }
            if self.done {
                if std::mem::take(&mut self.empty) {
                    return Some(Err(At { file: &self.name }.line(0, "holds no I/O")));
                }
                return None;
            }
            if let Err(e) = self.advance() {
                self.done = true;
                self.empty = false;
                self.out.events.clear();
                return Some(Err(e));
            }
        }
    }
}

/// The next line of `input` without its line end; None at the end.
fn read_line<'b>(
    input: &mut Box<dyn BufRead + Send>,
    buf: &'b mut Vec<u8>,
    at: At,
    line_no: usize,
) -> Result<Option<&'b str>, TraceError> {
    buf.clear();
    let read = input
        .by_ref()
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', buf)
        .map_err(|e| at.line(line_no, format!("cannot read: {e}")))?;
    if read == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE {
        return Err(at.line(
            line_no,
            format!(
                "a line longer than {}: not a trace fathom reads",
                crate::util::units::format_bytes(MAX_LINE as u64)
            ),
        ));
    }
    while buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        buf.pop();
    }
    let text = std::str::from_utf8(buf).map_err(|_| {
        at.line(
            line_no,
            "not a trace fathom reads (neither text nor a fathom recording)",
        )
    })?;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(text: &'static str) -> Result<Reader, TraceError> {
        Reader::new(Box::new(text.as_bytes()), "t")
    }

    #[test]
    fn events_come_in_file_order_and_a_long_line_is_refused() {
        let events: Vec<u64> = reader("time_ns,offset,length,rw\n5,0,512,r\n1,512,512,w\n")
            .unwrap()
            .map(|e| e.unwrap().t_ns())
            .collect();
        assert_eq!(events, [5, 1]);
        let long: &'static str = Box::leak(
            format!("time_ns,offset,length,rw\n1,{}\n", "9".repeat(MAX_LINE)).into_boxed_str(),
        );
        let e = reader(long).unwrap().find_map(Result::err).unwrap();
        assert!(e.to_string().starts_with("t:2: a line longer"), "{e}");
    }

    #[test]
    fn a_trace_of_no_io_says_so() {
        let e = reader("time_ns,offset,length,rw\n")
            .unwrap()
            .find_map(Result::err)
            .unwrap();
        assert_eq!(e.to_string(), "t: holds no I/O");
    }
}
