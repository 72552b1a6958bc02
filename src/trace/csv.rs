//! A CSV of I/Os from anywhere else: a header naming the columns, then one
//! I/O per row. Columns: `time` (seconds, decimals allowed) or `time_ns`,
//! `offset` and `length` in bytes, `rw` (`read`, `write`, `trim`, `sync`;
//! `r`, `w` too), and optionally `device` (a name, mapped to a target) and
//! `latency_ns` (what the I/O took when traced).

use super::event::{Answer, Devices, Out, TextFormat};
use super::{Op, number};

/// A CSV trace's columns, found in its header.
pub struct Csv {
    width: usize,
    time: usize,
    /// The time column is in seconds (`time`), not ns (`time_ns`).
    seconds: bool,
    offset: usize,
    length: usize,
    rw: usize,
    device: Option<usize>,
    latency: Option<usize>,
}

impl Csv {
    /// The reader of a CSV with this header line.
    pub fn new(header: &str) -> Result<Csv, String> {
        let columns: Vec<&str> = header.split(',').map(str::trim).collect();
        let find = |name: &str| columns.iter().position(|c| *c == name);
        let (time, seconds) = match (find("time_ns"), find("time")) {
            (Some(i), _) => (i, false),
            (None, Some(i)) => (i, true),
            _ => return Err("the header names no time or time_ns column".into()),
        };
        let need =
            |name: &str| find(name).ok_or_else(|| format!("the header names no {name} column"));
        Ok(Csv {
            width: columns.len(),
            time,
            seconds,
            offset: need("offset")?,
            length: need("length")?,
            rw: need("rw")?,
            device: find("device"),
            latency: find("latency_ns"),
        })
    }
}

impl TextFormat for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn line(&mut self, line: &str, out: &mut Out) -> Result<(), String> {
        if line.trim().is_empty() {
            return Ok(());
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let cell = |c: usize| {
            cells
                .get(c)
                .copied()
                .ok_or_else(|| format!("{} cells, the header names {}", cells.len(), self.width))
        };
        let t = cell(self.time)?;
        let t_ns = if self.seconds {
            let s: f64 = t
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| format!("time '{t}' is not a number of seconds"))?;
            let ns = s * 1e9;
            super::bounded_time((ns <= u64::MAX as f64).then_some(ns.round() as u64), t)?
        } else {
            super::bounded_time(Some(number::<u64>(t, "time_ns")?), t)?
        };
        let op = match cell(self.rw)? {
            "read" | "r" | "R" => Op::Read,
            "write" | "w" | "W" => Op::Write,
            "trim" | "discard" => Op::Trim,
            "sync" | "flush" => Op::Sync,
            other => return Err(format!("rw '{other}' is not read, write, trim or sync")),
        };
        let offset = number::<u64>(cell(self.offset)?, "offset")?;
        let len = number::<u32>(cell(self.length)?, "length")?;
        if op != Op::Sync && len == 0 {
            return Err("an I/O of length 0".into());
        }
        let device = device_of(&mut out.devices, self.device.map(cell).transpose()?);
        let latency_ns = match self.latency {
            Some(l) => Some(number::<u64>(cell(l)?, "latency_ns")?),
            None => None,
        };
        let io = out.io(t_ns, device, op, offset, len);
        if let Some(latency_ns) = latency_ns {
            out.answered(Answer {
                io,
                t_ns,
                device,
                op,
                latency_ns,
            });
        }
        Ok(())
    }
}

/// The device a row names; "1" for a CSV without a device column.
fn device_of(devices: &mut Devices, named: Option<&str>) -> u32 {
    devices.of(named.unwrap_or("1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{At, parse};

    #[test]
    fn rows_are_ios_with_the_columns_the_header_names() {
        let t = parse(
            "time,offset,length,rw,latency_ns\n0.5,4096,4096,write,120000\n0.0,0,8192,r,90000\n",
            At { file: "t.csv" },
        )
        .unwrap();
        assert_eq!(t.ios.len(), 2);
        assert_eq!(
            (t.ios[0].t_ns, t.ios[0].op, t.ios[0].len),
            (0, Op::Read, 8192)
        );
        assert_eq!(t.ios[1].t_ns, 500_000_000);
        assert_eq!(t.latencies[1], Some(120_000));
    }

    #[test]
    fn bad_rows_are_named_by_line() {
        for (text, needle) in [
            (
                "time,offset,length\n",
                "t.csv:1: the header names no rw column",
            ),
            (
                "time,offset,length,rw\n1,0,4096,peek\n",
                "t.csv:2: rw 'peek'",
            ),
            ("time,offset,length,rw\n1,0,4096\n", "t.csv:2: 3 cells"),
            ("time,offset,length,rw\n-1,0,4096,r\n", "t.csv:2: time '-1'"),
            (
                "time,offset,length,rw\n1,0,0,r\n",
                "t.csv:2: an I/O of length 0",
            ),
        ] {
            let e = parse(text, At { file: "t.csv" }).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
