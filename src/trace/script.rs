//! What one replay worker issues: the I/Os of one of the trace's devices,
//! each with the time it is due, its offset folded into the target when
//! asked, passes of the trace one after the other.

use super::{Op, Trace};

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

/// A target's part of a replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Script {
    /// Each I/O waits for its time (false: as fast as the depth allows).
    pub paced: bool,
    ios: Vec<ScriptIo>,
    loops: u32,
    /// How long one pass lasts: the next starts this much later.
    pass_ns: u64,
}

/// How a target's region takes offsets beyond it (`--wrap`).
#[derive(Debug, Clone, Copy)]
pub struct Fold {
    pub size: u64,
    pub align: u64,
}

impl Script {
    /// The I/Os of trace device `device`, due at their recorded times
    /// divided by `speed` (all at once when None), `loops` passes.
    pub fn of(
        trace: &Trace,
        device: u32,
        speed: Option<f64>,
        fold: Option<Fold>,
        loops: u32,
    ) -> Script {
        let due = |t_ns: u64| speed.map_or(0, |s| (t_ns as f64 / s).round() as u64);
        let ios = trace
            .ios
            .iter()
            .filter(|io| io.device == device)
            .map(|io| ScriptIo {
                due_ns: due(io.t_ns),
                op: io.op,
                offset: match fold {
                    Some(f) if io.op != Op::Sync => folded(io.offset, io.len, f),
                    _ => io.offset,
                },
                len: io.len,
            })
            .collect();
        // A pass ends with the last I/O of any device, so that devices stay
        // in step from one pass to the next.
        let last = trace.ios.last().map_or(0, |io| io.t_ns);
        Script {
            paced: speed.is_some(),
            ios,
            loops: loops.max(1),
            pass_ns: due(last) + 1,
        }
    }

    /// The `n`th I/O to issue, over all passes; None after the last.
    #[inline]
    pub fn get(&self, n: usize) -> Option<ScriptIo> {
        if self.ios.is_empty() {
            return None;
        }
        let (pass, i) = (n / self.ios.len(), n % self.ios.len());
        if pass >= self.loops as usize {
            return None;
        }
        let mut io = self.ios[i];
        io.due_ns += pass as u64 * self.pass_ns;
        Some(io)
    }

    /// I/Os in all passes.
    pub fn len(&self) -> usize {
        self.ios.len() * self.loops as usize
    }

    pub fn is_empty(&self) -> bool {
        self.ios.is_empty()
    }

    /// The longest I/O: what a buffer slot must hold.
    pub fn largest(&self) -> u32 {
        self.ios.iter().map(|io| io.len).max().unwrap_or(0)
    }

    /// Share of the data I/Os that read, in percent.
    pub fn read_percent(&self) -> u8 {
        let data = self.ios.iter().filter(|io| io.op != Op::Sync).count();
        let reads = self.ios.iter().filter(|io| io.op == Op::Read).count();
        match data {
            0 => 0,
            d => (reads * 100 / d) as u8,
        }
    }
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
    use crate::trace::TraceIo;

    fn trace() -> Trace {
        let io = |t_ns, device, offset| TraceIo {
            line: 0,
            t_ns,
            device,
            op: Op::Write,
            offset,
            len: 4096,
            latency_ns: None,
        };
        Trace {
            format: "csv",
            devices: vec!["a".into(), "b".into()],
            ios: vec![io(0, 0, 0), io(1000, 1, 8192), io(2000, 0, 1 << 30)],
            ..Trace::default()
        }
    }

    #[test]
    fn a_device_plays_its_own_ios_at_the_speed_asked() {
        let s = Script::of(&trace(), 0, Some(2.0), None, 1);
        assert_eq!(s.len(), 2);
        assert_eq!(s.get(1).unwrap().due_ns, 1000);
        assert_eq!(s.get(2), None);
        let afap = Script::of(&trace(), 0, None, None, 1);
        assert_eq!(afap.get(1).unwrap().due_ns, 0);
    }

    #[test]
    fn passes_follow_each_other_and_offsets_fold_into_the_target() {
        let fold = Fold {
            size: 1 << 20,
            align: 4096,
        };
        let s = Script::of(&trace(), 0, Some(1.0), Some(fold), 2);
        assert_eq!(s.len(), 4);
        let second = s.get(2).unwrap();
        assert_eq!(second.due_ns, 2001);
        let far = s.get(1).unwrap();
        assert!(
            far.offset + 4096 <= 1 << 20 && far.offset.is_multiple_of(4096),
            "{far:?}"
        );
        assert_eq!(s.get(0).unwrap().offset, 0);
    }
}
