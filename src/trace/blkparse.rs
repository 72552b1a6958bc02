//! blkparse's default text output (`blkparse -i DEV`): one event per line,
//! `MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + BLOCKS [PROCESS]`.
//! Queue events (`Q`) are the application's I/Os; a completion (`C`) gives
//! the latency when traced to every I/O queued in the sectors it covers (the
//! block layer merges adjacent I/Os into one request, completed once).
//! Flushes without data (`F` in RWBS, no blocks) are sync points. Lines of
//! blkparse's summary and of other events are skipped.

use super::event::{Answer, Out, TextFormat};
use super::{Op, number};
use std::collections::BTreeMap;

/// An I/O queued and not yet completed.
#[derive(Debug, Clone, Copy)]
struct Queued {
    io: u64,
    t_ns: u64,
    op: Op,
}

/// The most queued I/Os waited on for their completions: a trace of queue
/// events alone (`blktrace -a queue`) would otherwise keep every I/O.
const MAX_PENDING: usize = 1 << 20;

/// blkparse's text.
#[derive(Default)]
pub struct Blkparse {
    /// Queued I/Os waiting for their completion: (device, sector) -> I/Os.
    pending: BTreeMap<(u32, u64), Vec<Queued>>,
    pending_count: usize,
    events: usize,
}

impl TextFormat for Blkparse {
    fn name(&self) -> &'static str {
        "blkparse"
    }

    fn line(&mut self, line: &str, out: &mut Out) -> Result<(), String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(device) = words.first().filter(|w| is_device(w)) else {
            return Ok(());
        };
        let [_, _cpu, _seq, seconds, _pid, action, rwbs, rest @ ..] = words.as_slice() else {
            return Err(format!("'{}': too few fields for an event", line.trim()));
        };
        self.events += 1;
        if !matches!(*action, "Q" | "C") {
            return Ok(());
        }
        let t_ns = seconds_to_ns(seconds)?;
        let (sector, blocks) = match rest {
            [sector, "+", blocks, ..] => (
                number::<u64>(sector, "sector")?,
                number::<u32>(blocks, "block count")?,
            ),
            _ => (0, 0),
        };
        let op = if rwbs.contains('D') {
            Op::Trim
        } else if rwbs.contains('W') && blocks > 0 {
            Op::Write
        } else if rwbs.contains('R') && blocks > 0 {
            Op::Read
        } else if rwbs.contains('F') {
            Op::Sync
        } else {
            // No data and no flush (`N`): nothing to replay.
            return Ok(());
        };
        let device = out.devices.of(device);
        if *action == "C" {
            self.complete(device, sector, blocks, t_ns, out);
            return Ok(());
        }
        let len = blocks
            .checked_mul(512)
            .ok_or_else(|| format!("{blocks} blocks is more than one I/O can be"))?;
        let io = out.io(t_ns, device, op, sector * 512, len);
        if op != Op::Sync {
            if self.pending_count >= MAX_PENDING {
                // Completions are not traced, or far behind: these go
                // without a recorded latency.
                self.pending.clear();
                self.pending_count = 0;
            }
            self.pending
                .entry((device, sector))
                .or_default()
                .push(Queued { io, t_ns, op });
            self.pending_count += 1;
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Out) -> Result<(), String> {
        if self.events == 0 {
            return Err("not a trace fathom reads (a fio iolog, blkparse's text, a CSV starting 'time,offset,length,rw', or a fathom recording)".into());
        }
        Ok(())
    }
}

impl Blkparse {
    /// A completion at `t_ns` answers every I/O queued in the sectors it
    /// covers, the first queued at each.
    fn complete(&mut self, device: u32, sector: u64, blocks: u32, t_ns: u64, out: &mut Out) {
        let end = sector.saturating_add(u64::from(blocks.max(1)));
        let covered: Vec<(u32, u64)> = self
            .pending
            .range((device, sector)..(device, end))
            .map(|(key, _)| *key)
            .collect();
        for key in covered {
            let queued = self.pending.get_mut(&key).expect("a key just seen");
            let q = queued.remove(0);
            self.pending_count -= 1;
            if queued.is_empty() {
                self.pending.remove(&key);
            }
            out.answered(Answer {
                io: q.io,
                t_ns: q.t_ns,
                device,
                op: q.op,
                latency_ns: t_ns.saturating_sub(q.t_ns),
            });
        }
    }
}

/// Whether `line` is a blkparse event (`8,16 CPU SEQ SECONDS PID ACTION`).
pub fn is_event(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.len() >= 7 && is_device(words[0]) && words[3].contains('.')
}

/// `8,16`: a device as blkparse names it.
fn is_device(word: &str) -> bool {
    word.split_once(',').is_some_and(|(a, b)| {
        !a.is_empty()
            && !b.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && b.bytes().all(|c| c.is_ascii_digit())
    })
}

/// blkparse's `SECONDS.NANOSECONDS` as ns.
fn seconds_to_ns(text: &str) -> Result<u64, String> {
    let (s, frac) = text.split_once('.').unwrap_or((text, "0"));
    let whole: u64 = number(s, "time")?;
    let digits = frac.len().min(9);
    let frac_ns: u64 = number::<u64>(&frac[..digits], "time")? * 10u64.pow((9 - digits) as u32);
    super::bounded_time(
        whole
            .checked_mul(1_000_000_000)
            .and_then(|ns| ns.checked_add(frac_ns)),
        text,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{At, parse};

    const SAMPLE: &str = "\
  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kworker/u8:2]
  8,0    3        2     0.000003811   697  G  WS 3417048 + 8 [kworker/u8:2]
  8,0    3        4     0.000011283   697  D  WS 3417048 + 8 [kworker/u8:2]
  8,0    1        1     0.000100000  1200  Q   R 2048 + 256 [fio]
  8,0    3        5     0.000215618     0  C  WS 3417048 + 8 [0]
  8,0    1        2     0.000350000  1200  Q FWS [fio]
  8,0    1        3     0.001100000     0  C   R 2048 + 256 [0]
  8,0    2        1     0.002000000  1300  Q   D 4096 + 64 [fstrim]

CPU0 (8,0):
 Reads Queued:           1,        128KiB\t Writes Queued:           1,        4KiB
Total (8,0):
";

    #[test]
    fn queue_events_are_the_ios_and_completions_their_latency() {
        let t = parse(SAMPLE, At { file: "trace.txt" }).unwrap();
        assert_eq!(t.devices, ["8,0"]);
        let ios: Vec<(u64, Op, u64, u32, Option<u64>)> = t
            .ios
            .iter()
            .zip(&t.latencies)
            .map(|(io, l)| (io.t_ns, io.op, io.offset, io.len, *l))
            .collect();
        assert_eq!(
            ios,
            [
                (0, Op::Write, 3417048 * 512, 4096, Some(215_618)),
                (100_000, Op::Read, 2048 * 512, 131072, Some(1_000_000)),
                (350_000, Op::Sync, 0, 0, None),
                (2_000_000, Op::Trim, 4096 * 512, 32768, None),
            ]
        );
    }

    /// Two writes merged into one request (`M`) complete together: both get
    /// the completion's latency, measured from each one's own queueing.
    #[test]
    fn a_completion_covers_every_io_merged_into_it() {
        let text = "\
  8,0    0        1     0.000000000   10  Q   W 100 + 8 [db]
  8,0    0        2     0.000010000   10  Q   W 108 + 8 [db]
  8,0    0        3     0.000011000   10  M   W 108 + 8 [db]
  8,0    0        4     0.000020000   10  Q   W 500 + 8 [db]
  8,0    0        5     0.001000000    0  C   W 100 + 16 [0]
";
        let t = parse(text, At { file: "t" }).unwrap();
        assert_eq!(t.latencies, [Some(1_000_000), Some(990_000), None]);
    }

    #[test]
    fn a_damaged_event_is_named_by_line() {
        let e = parse("  8,0  1  1  0.5  9  Q  R 12x + 8 [a]\n", At { file: "t" })
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t:1: sector '12x'"), "{e}");
        let e = parse("hello\n", At { file: "t" }).unwrap_err().to_string();
        assert!(e.contains("not a trace fathom reads"), "{e}");
    }
}
