//! fio's iologs (`write_iolog`, `read_iolog`), versions 2 and 3: a line per
//! file action (`add`, `open`, `close`) or I/O (`read`, `write`, `trim`,
//! `sync`, `datasync` with an offset and a length). Version 3 starts each
//! line with the time it was issued, in microseconds; version 2 has no
//! times, so it can only be played as fast as possible.

use super::event::{Out, TextFormat};
use super::{Op, number};

/// An fio iolog of version 2 (no times) or 3.
pub struct FioIolog {
    timed: bool,
}

impl FioIolog {
    /// The reader of an iolog whose first line is `header`.
    pub fn new(header: &str) -> Result<FioIolog, String> {
        match header {
            "fio version 2 iolog" => Ok(FioIolog { timed: false }),
            "fio version 3 iolog" => Ok(FioIolog { timed: true }),
            other => Err(format!(
                "'{other}': fathom reads fio iologs of version 2 and 3"
            )),
        }
    }
}

impl TextFormat for FioIolog {
    fn name(&self) -> &'static str {
        if self.timed {
            "fio iolog v3"
        } else {
            "fio iolog v2"
        }
    }

    fn timeless(&self) -> bool {
        !self.timed
    }

    fn line(&mut self, line: &str, out: &mut Out) -> Result<(), String> {
        let mut words = line.split_whitespace();
        let t_ns = if self.timed {
            let Some(t) = words.next() else {
                return Ok(());
            };
            let ms: u64 = number(t, "time")?;
            super::bounded_time(ms.checked_mul(1000), t)?
        } else {
            0
        };
        let words: Vec<&str> = words.collect();
        let (file, action, rest) = match words.as_slice() {
            [] if !self.timed => return Ok(()),
            [file, action, rest @ ..] => (*file, *action, rest),
            _ => {
                return Err(format!("'{}': expected a file and an action", line.trim()));
            }
        };
        let op = match action {
            "add" | "open" | "close" => {
                out.devices.of(file);
                return Ok(());
            }
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Trim,
            "sync" | "datasync" => Op::Sync,
            "wait" => return Ok(()),
            other => return Err(format!("unknown action '{other}'")),
        };
        let (offset, len) = match (op, rest) {
            (Op::Sync, _) => (0, 0),
            (_, [offset, len]) => (
                number::<u64>(offset, "offset")?,
                number::<u32>(len, "length")?,
            ),
            _ => return Err(format!("'{action}' needs an offset and a length")),
        };
        if op != Op::Sync && len == 0 {
            return Err("an I/O of length 0".into());
        }
        let device = out.devices.of(file);
        out.io(t_ns, device, op, offset, len);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{At, parse};

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
