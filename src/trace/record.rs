//! fathom's own recordings (`--record FILE`): every I/O a run issued, when
//! (ns from the moment its workers started), on which target, what, where
//! and how long; sync points too. Binary and little-endian, documented in
//! docs/trace-format.md:
//!
//! - `FATHOMTR`, then the version (u32, 1) and the number of targets (u32),
//!   then each target's name (u32 length, UTF-8);
//! - then 24-byte records: time (u64 ns), offset (u64), length (u32),
//!   target (u16), operation (u8: 0 read, 1 write, 2 trim, 3 sync), 0 (u8).
//!
//! Workers append their records in batches through one writer thread, so
//! records are in time order within a worker, not across the file: a
//! replay puts them in order as it reads (`order.rs`).

use super::event::{Devices, Out};
use super::{At, Op, TraceError};
use crate::gate::write::{Growing, Output};
use crate::util::error::UsageError;
use std::io::BufRead;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

pub const MAGIC: &[u8; 8] = b"FATHOMTR";
const VERSION: u32 = 1;
const RECORD: usize = 24;
/// Records a worker gathers before handing them to the writer.
const BATCH: usize = 4096;

/// A recording, as the write gate knows it: kept in a file, and replacing
/// only another recording.
pub const OUTPUT: Output = Output {
    flag: "--record",
    what: "a fathom recording",
    streams: false,
    ours: is_recording,
    overwrite_hint: None,
};

fn is_recording(path: &Path) -> bool {
    crate::gate::read::head(path, MAGIC.len()).is_some_and(|h| h == MAGIC)
}

/// A recording being written: the writer thread and the way to it.
pub struct Recording {
    /// Batches, then `None` from `finish`: the writer ends then, even if
    /// the sink of a worker left stuck in a call is never dropped.
    tx: Option<Sender<Option<Vec<u8>>>>,
    writer: Option<JoinHandle<io::Result<u64>>>,
}

impl Recording {
    /// Creates `path` (replacing a recording, never another file) with the
    /// header naming `targets`.
    pub fn create(path: &Path, targets: &[String]) -> Result<Recording, UsageError> {
        let file = Growing::create(path, OUTPUT, false)?;
        let header = |out: &mut BufWriter<Growing>| -> io::Result<()> {
            out.write_all(MAGIC)?;
            out.write_all(&VERSION.to_le_bytes())?;
            out.write_all(&(targets.len() as u32).to_le_bytes())?;
            for t in targets {
                out.write_all(&(t.len() as u32).to_le_bytes())?;
                out.write_all(t.as_bytes())?;
            }
            Ok(())
        };
        let cannot = |e: io::Error| UsageError(format!("--record {}: {e}", path.display()));
        let mut out = BufWriter::with_capacity(1 << 20, file);
        header(&mut out).map_err(cannot)?;
        let (tx, rx) = channel::<Option<Vec<u8>>>();
        let writer = std::thread::Builder::new()
            .name("fathom-record".into())
            .spawn(move || {
                let mut records = 0u64;
                for batch in rx.iter().map_while(|b| b) {
                    out.write_all(&batch)?;
                    records += (batch.len() / RECORD) as u64;
                }
                out.flush()?;
                out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
                Ok(records)
            })
            .map_err(cannot)?;
        Ok(Recording {
            tx: Some(tx),
            writer: Some(writer),
        })
    }

    /// What a worker of target `target` records through.
    pub fn sink(&self, target: u16) -> RecordSink {
        RecordSink {
            tx: self.tx.clone().expect("sinks are made before finish"),
            buf: Vec::with_capacity(BATCH * RECORD),
            target,
        }
    }

    /// Waits for every sink's records to be written; the number written.
    pub fn finish(mut self) -> io::Result<u64> {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(None);
        }
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(written)) => written,
            Some(Err(_)) => Err(io::Error::other("the recording's writer panicked")),
            None => Ok(0),
        }
    }
}

/// One worker's way into a recording: records gathered in a buffer of its
/// own, handed over a batch at a time (and the rest when dropped).
pub struct RecordSink {
    tx: Sender<Option<Vec<u8>>>,
    buf: Vec<u8>,
    target: u16,
}

impl RecordSink {
    /// Records an I/O issued `t_ns` after the workers started.
    #[inline]
    pub fn push(&mut self, t_ns: u64, op: Op, offset: u64, len: u32) {
        self.buf.extend_from_slice(&t_ns.to_le_bytes());
        self.buf.extend_from_slice(&offset.to_le_bytes());
        self.buf.extend_from_slice(&len.to_le_bytes());
        self.buf.extend_from_slice(&self.target.to_le_bytes());
        self.buf.push(op as u8);
        self.buf.push(0);
        if self.buf.len() >= BATCH * RECORD {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        let full = std::mem::replace(&mut self.buf, Vec::with_capacity(BATCH * RECORD));
        // The writer outlives every sink (finish drops them first).
        let _ = self.tx.send(Some(full));
    }
}

impl Drop for RecordSink {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            self.hand_over();
        }
    }
}

/// Reads a recording's header (made by [`Recording`]): its targets become
/// the trace's devices, in order.
pub fn read_header(
    input: &mut dyn BufRead,
    devices: &mut Devices,
    at: At,
) -> Result<(), TraceError> {
    let damaged = |what: &str| at.line(0, format!("a damaged fathom recording: {what}"));
    let u32_of = |input: &mut dyn BufRead, what: &str| -> Result<u32, TraceError> {
        let mut b = [0u8; 4];
        input.read_exact(&mut b).map_err(|_| damaged(what))?;
        Ok(u32::from_le_bytes(b))
    };
    let mut magic = [0u8; 8];
    input
        .read_exact(&mut magic)
        .map_err(|_| damaged("no header"))?;
    let version = u32_of(input, "no header")?;
    if version != VERSION {
        return Err(at.line(
            0,
            format!("a fathom recording of version {version}: this fathom reads version {VERSION}"),
        ));
    }
    let count = u32_of(input, "no target count")?;
    if count > 1 << 16 {
        return Err(damaged(&format!("{count} targets")));
    }
    for _ in 0..count {
        let len = u32_of(input, "a target name cut short")? as usize;
        if len > 4096 {
            return Err(damaged("a target name cut short"));
        }
        let mut name = vec![0u8; len];
        input
            .read_exact(&mut name)
            .map_err(|_| damaged("a target name cut short"))?;
        let name = String::from_utf8(name).map_err(|_| damaged("a target name cut short"))?;
        devices.push(&name);
    }
    Ok(())
}

/// Reads the next record of a recording into `out`; false at its end.
pub fn read_record(input: &mut dyn BufRead, out: &mut Out, at: At) -> Result<bool, TraceError> {
    let damaged = |what: &str| at.line(0, format!("a damaged fathom recording: {what}"));
    let mut record = [0u8; RECORD];
    let mut filled = 0;
    while filled < RECORD {
        match input.read(&mut record[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(at.line(0, format!("cannot read: {e}"))),
        }
    }
    match filled {
        0 => return Ok(false),
        RECORD => {}
        _ => return Err(damaged("its records are cut short")),
    }
    let u64_of = |r: &[u8]| u64::from_le_bytes(r.try_into().expect("8 bytes"));
    let device = u16::from_le_bytes([record[20], record[21]]);
    let op = match record[22] {
        0 => Op::Read,
        1 => Op::Write,
        2 => Op::Trim,
        3 => Op::Sync,
        other => return Err(damaged(&format!("operation {other}"))),
    };
    let devices = out.devices.names().len();
    if usize::from(device) >= devices {
        return Err(damaged(&format!("target {device} of {devices}")));
    }
    let t_ns = u64_of(&record[0..8]);
    let t_ns = super::bounded_time(Some(t_ns), &format!("{t_ns} ns")).map_err(|m| at.line(0, m))?;
    out.io(
        t_ns,
        u32::from(device),
        op,
        u64_of(&record[8..16]),
        u32::from_le_bytes(record[16..20].try_into().expect("4 bytes")),
    );
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_recorded_reads_back_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.trace");
        let recording = Recording::create(&path, &["a".into(), "/dev/b".into()]).unwrap();
        let (mut one, mut two) = (recording.sink(0), recording.sink(1));
        let later = |ms: u64| ms * 1_000_000;
        two.push(later(5), Op::Write, 8192, 4096);
        one.push(later(1), Op::Read, 0, 4096);
        one.push(later(9), Op::Sync, 0, 0);
        drop((one, two));
        assert_eq!(recording.finish().unwrap(), 3);
        let bytes = std::fs::read(&path).unwrap();
        let t = crate::trace::load(&path).unwrap();
        assert_eq!(t.devices, ["a", "/dev/b"]);
        let ios: Vec<(u64, u32, Op, u64)> = t
            .ios
            .iter()
            .map(|io| (io.t_ns / 1_000_000, io.device, io.op, io.offset))
            .collect();
        assert_eq!(
            ios,
            [
                (1, 0, Op::Read, 0),
                (5, 1, Op::Write, 8192),
                (9, 0, Op::Sync, 0)
            ]
        );
        // Cut short: named, never half read.
        let cut = bytes[..bytes.len() - 3].to_vec();
        let e = crate::trace::Reader::new(Box::new(std::io::Cursor::new(cut)), "r")
            .unwrap()
            .find_map(Result::err)
            .unwrap();
        assert!(e.to_string().contains("cut short"), "{e}");
    }

    #[test]
    fn another_file_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "keep me").unwrap();
        assert!(Recording::create(&path, &[]).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me");
    }
}
