//! What one replay worker issues: the I/Os of one of the trace's devices,
//! each with the time it is due, its offset folded into the target when
//! asked, passes of the trace one after the other. A thread of its own
//! reads them from the trace file as the worker goes, a bounded queue
//! ahead of it; the worker never waits on the file while I/Os are queued.

use super::{Op, Trace, TraceError};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// One I/O of a replay, as its worker issues it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptIo {
    /// When it is due, in ns from the start of the replay; 0 for every I/O
    /// of a replay as fast as possible.
    pub due_ns: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
}

/// I/Os handed from the reader to the worker at a time, and how many such
/// batches wait at most: about a million I/Os' worth of memory per target.
const BATCH: usize = 4096;
const BATCHES_AHEAD: usize = 16;

type Batch = Result<Vec<ScriptIo>, String>;

/// A target's part of a replay.
#[derive(Debug)]
pub struct Script {
    /// Each I/O waits for its time (false: as fast as the depth allows).
    pub paced: bool,
    feed: Receiver<Batch>,
    ahead: VecDeque<ScriptIo>,
    ended: bool,
    failure: Option<String>,
    /// The trace played, looked at again as the worker goes: the reader
    /// may have read it whole before it changed.
    trace: Arc<Trace>,
    /// Looks since the trace was last looked at.
    since_checked: u32,
    /// The trace was looked at once the last I/O was issued.
    checked_at_end: bool,
}

/// Every this many looks at the next I/Os, the trace's file is looked at
/// again (one statx).
const CHECK_EVERY: u32 = 1024;

/// How a target's region takes offsets beyond it (`--wrap`).
#[derive(Debug, Clone, Copy)]
pub struct Fold {
    pub size: u64,
    pub align: u64,
}

/// What a target plays of a trace, and how.
#[derive(Debug, Clone)]
pub struct Part {
    pub device: u32,
    /// Times divided by this; None: everything due at once.
    pub speed: Option<f64>,
    pub fold: Option<Fold>,
    pub loops: u32,
}

impl Script {
    /// The I/Os of `part.device`, due at their recorded times divided by
    /// the speed, `part.loops` passes, read from `trace` by a thread that
    /// starts now and keeps a queue filled ahead of the worker.
    pub fn play(trace: Arc<Trace>, part: Part) -> std::io::Result<Script> {
        let (tx, feed) = sync_channel(BATCHES_AHEAD);
        let paced = part.speed.is_some();
        let script = Script {
            paced,
            feed,
            ahead: VecDeque::with_capacity(BATCH),
            ended: false,
            failure: None,
            trace: trace.clone(),
            since_checked: 0,
            checked_at_end: false,
        };
        if trace.of_device(part.device).ios == 0 {
            // Nothing to read for: the script is over before it starts.
            return Ok(script);
        }
        std::thread::Builder::new()
            .name("fathom-trace".into())
            .spawn(move || {
                if let Err(e) = feed_script(&trace, &part, &tx) {
                    let _ = tx.send(Err(e.to_string()));
                }
            })?;
        Ok(script)
    }

    /// The I/O `k` places after the next one to issue; None past the last.
    /// Waits for the reader only when the queue ahead is empty.
    #[inline]
    pub fn peek(&mut self, k: usize) -> Option<ScriptIo> {
        self.since_checked += 1;
        if self.since_checked >= CHECK_EVERY {
            self.since_checked = 0;
            self.check();
        }
        while self.ahead.len() <= k && !self.ended {
            match self.feed.recv() {
                Ok(Ok(batch)) => self.ahead.extend(batch),
                Ok(Err(e)) => {
                    self.failure = Some(e);
                    self.ended = true;
                }
                Err(_) => self.ended = true,
            }
        }
        let next = self.ahead.get(k).copied();
        if next.is_none() && !self.checked_at_end && self.failure.is_none() {
            self.checked_at_end = true;
            self.check();
        }
        next
    }

    /// Ends the script with the error of a trace that changed since it
    /// was first read (cut, rewritten, added to), whatever is queued.
    fn check(&mut self) {
        if self.failure.is_none()
            && let Err(e) = self.trace.unchanged()
        {
            self.failure = Some(e.to_string());
            self.ended = true;
            self.ahead.clear();
        }
    }

    /// The next I/O was issued.
    #[inline]
    pub fn advance(&mut self) {
        self.ahead.pop_front();
    }

    /// Why the script ended before the trace did (the file could not be
    /// read again).
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}

/// Reads `part` of `trace`, pass after pass, into `tx`; stops early when
/// the worker is gone.
fn feed_script(trace: &Trace, part: &Part, tx: &SyncSender<Batch>) -> Result<(), TraceError> {
    let due = |t_ns: u64| part.speed.map_or(0, |s| (t_ns as f64 / s).round() as u64);
    // A pass ends with the last I/O of any device, so that devices stay in
    // step from one pass to the next.
    let pass_ns = due(trace.last_ns()) + 1;
    let expected = trace.of_device(part.device).ios;
    let mut batch = Vec::with_capacity(BATCH);
    for pass in 0..u64::from(part.loops.max(1)) {
        let mut read = 0u64;
        for io in trace.ios()? {
            let io = io?;
            if io.device != part.device {
                continue;
            }
            read += 1;
            batch.push(ScriptIo {
                due_ns: due(io.t_ns) + pass * pass_ns,
                op: io.op,
                offset: match part.fold {
                    Some(f) if io.op != Op::Sync => folded(io.offset, io.len, f),
                    _ => io.offset,
                },
                len: io.len,
            });
            if batch.len() == BATCH {
                // A file rewritten, cut or added to while it plays is
                // found here, a batch at a time, not played on.
                trace.unchanged()?;
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if tx.send(Ok(full)).is_err() {
                    return Ok(());
                }
            }
        }
        trace.unchanged()?;
        if read != expected {
            return Err(trace.changed(&format!(
                "{read} I/Os of this device read where the first read found {expected}"
            )));
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(Ok(batch));
    }
    Ok(())
}

/// `offset` moved into `[0, size)` on the `align` grid, so that the I/O
/// ends inside it.
fn folded(offset: u64, len: u32, fold: Fold) -> u64 {
    let room = fold.size.saturating_sub(u64::from(len));
    if offset <= room {
        return offset;
    }
    let slots = room / fold.align + 1;
    (offset / fold.align % slots) * fold.align
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(dir: &std::path::Path) -> Arc<Trace> {
        let p = dir.join("t.csv");
        std::fs::write(
            &p,
            "time_ns,offset,length,rw,device\n0,0,4096,w,a\n1000,8192,4096,w,b\n2000,1073741824,4096,w,a\n",
        )
        .unwrap();
        Arc::new(Trace::open(&p, 0, None).unwrap())
    }

    fn all(mut s: Script) -> Vec<ScriptIo> {
        let mut ios = Vec::new();
        while let Some(io) = s.peek(0) {
            ios.push(io);
            s.advance();
        }
        assert_eq!(s.failure(), None);
        ios
    }

    fn part(speed: Option<f64>, fold: Option<Fold>, loops: u32) -> Part {
        Part {
            device: 0,
            speed,
            fold,
            loops,
        }
    }

    #[test]
    fn a_device_plays_its_own_ios_at_the_speed_asked() {
        let dir = tempfile::tempdir().unwrap();
        let s = all(Script::play(trace(dir.path()), part(Some(2.0), None, 1)).unwrap());
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].due_ns, 1000);
        let afap = all(Script::play(trace(dir.path()), part(None, None, 1)).unwrap());
        assert_eq!(afap[1].due_ns, 0);
    }

    #[test]
    fn passes_follow_each_other_and_offsets_fold_into_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let fold = Fold {
            size: 1 << 20,
            align: 4096,
        };
        let mut script = Script::play(trace(dir.path()), part(Some(1.0), Some(fold), 2)).unwrap();
        assert_eq!(script.peek(2).unwrap().due_ns, 2001);
        let s = all(script);
        assert_eq!(s.len(), 4);
        let far = s[1];
        assert!(
            far.offset + 4096 <= 1 << 20 && far.offset.is_multiple_of(4096),
            "{far:?}"
        );
        assert_eq!(s[0].offset, 0);
    }
}
