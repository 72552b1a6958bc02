//! fio's iologs (`write_iolog`, `read_iolog`), versions 2 and 3: a line per
//! file action (`add`, `open`, `close`) or I/O (`read`, `write`, `trim`,
//! `sync`, `datasync` with an offset and a length). Version 3 starts each
//! line with the time it was issued, in microseconds; version 2 has no
//! times, so it can only be played as fast as possible.

use super::{At, Op, Trace, TraceError, TraceIo, number};

pub fn parse(text: &str, at: At) -> Result<Trace, TraceError> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().unwrap_or((0, ""));
    let timed = match header.trim() {
        "fio version 2 iolog" => false,
        "fio version 3 iolog" => true,
        other => {
            return Err(at.line(
                1,
                format!("'{other}': fathom reads fio iologs of version 2 and 3"),
            ));
        }
    };
    let mut trace = Trace {
        format: if timed {
            "fio iolog v3"
        } else {
            "fio iolog v2"
        },
        timeless: !timed,
        ..Trace::default()
    };
    for (i, line) in lines {
        let line_no = i + 1;
        let fail = |message: String| at.line(line_no, message);
        let mut words = line.split_whitespace();
        let t_ns = if timed {
            let Some(t) = words.next() else { continue };
            let ms: u64 = number(t, "time").map_err(fail)?;
            super::bounded_time(ms.checked_mul(1000), t).map_err(fail)?
        } else {
            0
        };
        let words: Vec<&str> = words.collect();
        let (file, action, rest) = match words.as_slice() {
            [] if !timed => continue,
            [file, action, rest @ ..] => (*file, *action, rest),
            _ => {
                return Err(fail(format!(
                    "'{}': expected a file and an action",
                    line.trim()
                )));
            }
        };
        let op = match action {
            "add" | "open" | "close" => {
                trace.device(file);
                continue;
            }
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Trim,
            "sync" | "datasync" => Op::Sync,
            "wait" => continue,
            other => return Err(fail(format!("unknown action '{other}'"))),
        };
        let (offset, len) = match (op, rest) {
            (Op::Sync, _) => (0, 0),
            (_, [offset, len]) => (
                number::<u64>(offset, "offset").map_err(fail)?,
                number::<u32>(len, "length").map_err(fail)?,
            ),
            _ => return Err(fail(format!("'{action}' needs an offset and a length"))),
        };
        if op != Op::Sync && len == 0 {
            return Err(fail("an I/O of length 0".into()));
        }
        let device = trace.device(file);
        trace.ios.push(TraceIo {
            line: line_no as u32,
            t_ns,
            device,
            op,
            offset,
            len,
            latency_ns: None,
        });
    }
    trace.sort();
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> At<'static> {
        At { file: "io.log" }
    }

    #[test]
    fn version_3_lines_are_ios_at_their_times() {
        let t = parse(
            "fio version 3 iolog\n21 /tmp/f add\n130 /tmp/f open\n134 /tmp/f read 249856 4096\n537 /tmp/f write 3104768 8192\n600 /tmp/f sync 0 0\n900 /tmp/f trim 0 4096\n1000 /tmp/f close\n",
            at(),
        )
        .unwrap();
        assert_eq!(t.devices, ["/tmp/f"]);
        let ops: Vec<(u64, Op, u64, u32)> = t
            .ios
            .iter()
            .map(|io| (io.t_ns, io.op, io.offset, io.len))
            .collect();
        assert_eq!(
            ops,
            [
                (134_000, Op::Read, 249856, 4096),
                (537_000, Op::Write, 3104768, 8192),
                (600_000, Op::Sync, 0, 0),
                (900_000, Op::Trim, 0, 4096),
            ]
        );
    }

    #[test]
    fn version_2_has_no_times() {
        let t = parse(
            "fio version 2 iolog\n/a add\n/a open\n/a read 0 4096\n/b write 4096 4096\n",
            at(),
        )
        .unwrap();
        assert_eq!(t.devices, ["/a", "/b"]);
        assert!(t.timeless && t.ios.iter().all(|io| io.t_ns == 0));
        assert_eq!(t.ios[1].device, 1);
    }

    #[test]
    fn bad_lines_are_named_by_number() {
        for (text, needle) in [
            ("fio version 4 iolog\n", "io.log:1: 'fio version 4 iolog'"),
            (
                "fio version 3 iolog\n1 /a read 0\n",
                "io.log:2: 'read' needs",
            ),
            (
                "fio version 3 iolog\n1 /a read x 4096\n",
                "io.log:2: offset 'x'",
            ),
            (
                "fio version 3 iolog\n1 /a punch 0 1\n",
                "io.log:2: unknown action 'punch'",
            ),
            (
                "fio version 3 iolog\nsoon /a read 0 1\n",
                "io.log:2: time 'soon'",
            ),
        ] {
            let e = parse(text, at()).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
