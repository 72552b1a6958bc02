//! fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`)
//! written from fathom's per-second figures, so that fio2gnuplot,
//! fio_generate_plots and fio-plot's log mode draw fathom's runs.
//!
//! fio's format: one line per direction and window, `time_ms, value,
//! direction, block size, offset`, where the time is the end of the
//! window, the direction 0 for reads and 1 for writes, and block size and
//! offset 0 as fio writes them for averaged windows. Bandwidth is in KiB/s,
//! latency the window's mean in ns, IOPS per second. Files are named as
//! fio names them: `NAME_bw.N.log`, `NAME_lat.N.log`, `NAME_clat.N.log`,
//! `NAME_slat.N.log` (empty: the seconds carry no submission latency), `NAME_iops.N.log`, N counting the jobs of the document from 1 (every
//! stream and every clone is a job, as fio counts them).

use crate::measure::intervals::Interval;
use crate::result::{Document, WorkloadResult};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A log, as the write gate knows it: kept in a file, replacing only a
/// log of fio's form (fio's or fathom's) or an empty file.
pub const OUTPUT: crate::gate::write::Output = crate::gate::write::Output {
    flag: "log",
    what: "an fio log",
    streams: false,
    ours: is_fio_log,
    overwrite_hint: None,
};

/// Whether the file's first line is a log line: `time, value, direction,
/// block size, offset[, priority]`, all whole numbers.
fn is_fio_log(path: &Path) -> bool {
    let Some(head) = crate::gate::read::head(path, 256) else {
        return false;
    };
    let head = String::from_utf8_lossy(&head);
    let fields: Vec<&str> = head
        .lines()
        .next()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .collect();
    (5..=7).contains(&fields.len()) && fields.iter().all(|f| f.parse::<i64>().is_ok())
}

/// Writes the logs every workload of `doc` asks for, relative to `dir`;
/// returns the files written.
pub fn write(doc: &Document, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut number = 0;
    for result in &doc.results {
        let jobs: Vec<&WorkloadResult> = result
            .kind()
            .disk_workloads()
            .into_iter()
            .map(|(_, w)| w)
            .collect();
        for w in jobs {
            number += 1;
            for (path, text) in logs(w, number) {
                let path = dir.join(path);
                crate::gate::write::replace(&path, OUTPUT, text.as_bytes())?;
                written.push(path);
            }
        }
    }
    Ok(written)
}

/// The log files of job `number` (its `w`), as (file name, content).
fn logs(w: &WorkloadResult, number: usize) -> Vec<(String, String)> {
    let logs = &w.spec.fio_logs;
    let window = logs.avg_s.max(1) as usize;
    let (rw, mix) = (w.spec.rw, w.spec.rwmix_read);
    let done = [rw.read_percent(mix) > 0, rw.writes(mix), rw.trims()];
    // fio's direction column: 0 read, 1 write, 2 trim.
    let directions: Vec<(u8, Vec<Window>)> = [
        (0u8, &w.total.read),
        (1u8, &w.total.write),
        (2u8, &w.total.trim),
    ]
    .into_iter()
    .filter(|(d, _)| done[*d as usize])
    .map(|(d, r)| (d, windows(&r.intervals, window)))
    .collect();
    let render = |value: fn(&Window) -> f64| {
        let mut text = String::new();
        let count = directions.iter().map(|(_, w)| w.len()).max().unwrap_or(0);
        for i in 0..count {
            for (d, ws) in &directions {
                if let Some(win) = ws.get(i) {
                    let _ = writeln!(
                        text,
                        "{}, {}, {d}, 0, 0",
                        win.end_ms,
                        value(win).round() as u64
                    );
                }
            }
        }
        text
    };
    let mut out = Vec::new();
    if let Some(name) = &logs.bw {
        out.push((
            format!("{name}_bw.{number}.log"),
            render(|w| w.bytes as f64 / 1024.0 / w.dur_s),
        ));
    }
    if let Some(name) = &logs.lat {
        let text = render(|w| w.mean_ns);
        out.push((format!("{name}_clat.{number}.log"), text.clone()));
        out.push((format!("{name}_lat.{number}.log"), text));
        // The seconds carry no submission latency: the slat log holds no
        // sample, as fio's own does for a synchronous engine (and
        // fio_generate_plots, which stops at a missing log, goes on to the
        // completion latency and bandwidth).
        out.push((format!("{name}_slat.{number}.log"), String::new()));
    }
    if let Some(name) = &logs.iops {
        out.push((
            format!("{name}_iops.{number}.log"),
            render(|w| w.ios as f64 / w.dur_s),
        ));
    }
    out
}

/// Seconds of one direction grouped `size` at a time.
struct Window {
    end_ms: u64,
    dur_s: f64,
    ios: u64,
    bytes: u64,
    mean_ns: f64,
}

fn windows(seconds: &[Interval], size: usize) -> Vec<Window> {
    seconds
        .chunks(size)
        .filter(|c| c.iter().map(|s| s.dur_s).sum::<f64>() > 0.0)
        .map(|chunk| {
            let ios: u64 = chunk.iter().map(|s| s.ios).sum();
            let last = chunk.last().expect("chunks are not empty");
            Window {
                end_ms: ((last.t_s + last.dur_s) * 1000.0).round() as u64,
                dur_s: chunk.iter().map(|s| s.dur_s).sum(),
                ios,
                bytes: chunk.iter().map(|s| s.bytes).sum(),
                mean_ns: if ios == 0 {
                    0.0
                } else {
                    chunk.iter().map(|s| s.mean_ns * s.ios as f64).sum::<f64>() / ios as f64
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(t: f64, ios: u64, mean_ns: f64) -> Interval {
        Interval {
            t_s: t,
            dur_s: 1.0,
            ios,
            bytes: ios * 4096,
            mean_ns,
            ..Default::default()
        }
    }

    #[test]
    fn windows_add_seconds_and_weigh_their_means() {
        let s = [
            second(0.0, 100, 10.0),
            second(1.0, 300, 30.0),
            second(2.0, 50, 5.0),
        ];
        let w = windows(&s, 2);
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].end_ms, w[0].ios), (2000, 400));
        assert_eq!(w[0].mean_ns, 25.0);
        assert_eq!((w[1].end_ms, w[1].ios), (3000, 50));
    }

    #[test]
    fn lines_are_fios() {
        let mut w = crate::result::test_support::empty_workload();
        w.spec.rw = crate::spec::RwMode::RandRw;
        w.spec.rwmix_read = 50;
        w.spec.fio_logs.bw = Some("x".into());
        w.spec.fio_logs.iops = Some("x".into());
        w.total.read.intervals = vec![second(0.0, 1000, 50_000.0)];
        w.total.write.intervals = vec![second(0.0, 500, 80_000.0)];
        let logs = logs(&w, 3);
        assert_eq!(logs[0].0, "x_bw.3.log");
        assert_eq!(logs[0].1, "1000, 4000, 0, 0, 0\n1000, 2000, 1, 0, 0\n");
        assert_eq!(
            logs[1],
            (
                "x_iops.3.log".to_string(),
                "1000, 1000, 0, 0, 0\n1000, 500, 1, 0, 0\n".to_string()
            )
        );
    }
}
