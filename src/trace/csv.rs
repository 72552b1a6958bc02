//! A CSV of I/Os from anywhere else: a header naming the columns, then one
//! I/O per row. Columns: `time` (seconds, decimals allowed) or `time_ns`,
//! `offset` and `length` in bytes, `rw` (`read`, `write`, `trim`, `sync`;
//! `r`, `w` too), and optionally `device` (a name, mapped to a target) and
//! `latency_ns` (what the I/O took when traced).

use super::{At, Op, Trace, TraceError, TraceIo, number};

pub fn parse(text: &str, at: At) -> Result<Trace, TraceError> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().unwrap_or((0, ""));
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    let find = |name: &str| columns.iter().position(|c| *c == name);
    let (time, seconds) = match (find("time_ns"), find("time")) {
        (Some(i), _) => (i, false),
        (None, Some(i)) => (i, true),
        _ => return Err(at.line(1, "the header names no time or time_ns column")),
    };
    let need = |name: &str| {
        find(name).ok_or_else(|| at.line(1, format!("the header names no {name} column")))
    };
    let (offset, length, rw) = (need("offset")?, need("length")?, need("rw")?);
    let (device, latency) = (find("device"), find("latency_ns"));
    let mut trace = Trace {
        format: "csv",
        ..Trace::default()
    };
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fail = |message: String| at.line(i + 1, message);
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let cell = |c: usize| {
            cells.get(c).copied().ok_or_else(|| {
                fail(format!(
                    "{} cells, the header names {}",
                    cells.len(),
                    columns.len()
                ))
            })
        };
        let t = cell(time)?;
        let t_ns = if seconds {
            let s: f64 = t
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| fail(format!("time '{t}' is not a number of seconds")))?;
            let ns = s * 1e9;
            super::bounded_time((ns <= u64::MAX as f64).then_some(ns.round() as u64), t)
                .map_err(fail)?
        } else {
            super::bounded_time(Some(number::<u64>(t, "time_ns").map_err(fail)?), t)
                .map_err(fail)?
        };
        let op = match cell(rw)? {
            "read" | "r" | "R" => Op::Read,
            "write" | "w" | "W" => Op::Write,
            "trim" | "discard" => Op::Trim,
            "sync" | "flush" => Op::Sync,
            other => {
                return Err(fail(format!(
                    "rw '{other}' is not read, write, trim or sync"
                )));
            }
        };
        let offset = number::<u64>(cell(offset)?, "offset").map_err(fail)?;
        let len = number::<u32>(cell(length)?, "length").map_err(fail)?;
        if op != Op::Sync && len == 0 {
            return Err(fail("an I/O of length 0".into()));
        }
        let device = trace.device(match device {
            Some(d) => cell(d)?,
            None => "1",
        });
        let latency_ns = match latency {
            Some(l) => Some(number::<u64>(cell(l)?, "latency_ns").map_err(fail)?),
            None => None,
        };
        trace.ios.push(TraceIo {
            line: (i + 1) as u32,
            t_ns,
            device,
            op,
            offset,
            len,
            latency_ns,
        });
    }
    trace.sort();
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(t.ios[1].latency_ns, Some(120_000));
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
