//! fio's terse output, version 3 (`--output-format=terse`, `--minimal`):
//! one semicolon-separated line per job, fields in the order fio 3.33's
//! `show_thread_status_terse_all` writes them (general, read, write, CPU,
//! IO depths, µs and ms latency buckets, disk utilisation), rendered from
//! the same fio document `fio_json` builds. Latencies are in µs, as fio's
//! terse lines give them; submission latency is all zeros (fathom does not
//! time submission apart), as fio writes it for an engine without it.

use super::fio_json::{self, count_in as u, disk_counts, figure_in as f};
use super::fio_normal::FIO_RELEASE;
use super::{Exporter, Report};
use serde_json::Value;
use std::fmt::Write as _;

pub struct FioTerseExporter;

/// fio's `FIO_IO_U_LIST_MAX_LEN`: percentile fields per direction.
const PERCENTILE_FIELDS: usize = 20;

impl Exporter for FioTerseExporter {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        Ok(render(&fio_json::document(report, false)?))
    }
}

/// Every job of `doc` as a terse line.
pub fn render(doc: &Value) -> String {
    let mut out = String::new();
    let disks = doc["disk_util"].as_array().cloned().unwrap_or_default();
    for job in doc["jobs"].as_array().into_iter().flatten() {
        let _ = write!(
            out,
            "3;{FIO_RELEASE};{};{};{}",
            job["jobname"].as_str().unwrap_or(""),
            u(&job["groupid"]),
            u(&job["error"])
        );
        for dir in ["read", "write"] {
            direction(&mut out, &job[dir]);
        }
        let _ = write!(
            out,
            ";{:.6}%;{:.6}%;{};{};{}",
            f(&job["usr_cpu"]),
            f(&job["sys_cpu"]),
            u(&job["ctx"]),
            u(&job["majf"]),
            u(&job["minf"])
        );
        for key in ["1", "2", "4", "8", "16", "32", ">=64"] {
            let _ = write!(out, ";{:.1}%", f(&job["iodepth_level"][key]));
        }
        // The ns buckets are folded into the first µs one, as fio keeps
        // its terse layout.
        let below_us: f64 = job["latency_ns"]
            .as_object()
            .map_or(0.0, |m| m.values().map(f).sum());
        for (i, (_, share)) in job["latency_us"]
            .as_object()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let share = f(share) + if i == 0 { below_us } else { 0.0 };
            let _ = write!(out, ";{share:.2}%");
        }
        for (_, share) in job["latency_ms"].as_object().into_iter().flatten() {
            let _ = write!(out, ";{:.2}%", f(share));
        }
        for d in &disks {
            let _ = write!(out, ";{}", d["name"].as_str().unwrap_or(""));
            for n in disk_counts(d) {
                let _ = write!(out, ";{n}");
            }
            let _ = write!(out, ";{:.2}%", f(&d["util"]));
        }
        out.push('\n');
    }
    out
}

/// One direction's 41 fields: amount, rate, runtime, slat, clat, its
/// percentiles, lat, and the per-second bandwidth spread.
fn direction(out: &mut String, d: &Value) {
    let runtime = u(&d["runtime"]);
    let (bw, iops) = match runtime {
        0 => (0, 0),
        ms => (
            1000 * u(&d["io_bytes"]) / ms / 1024,
            1000 * u(&d["total_ios"]) / ms,
        ),
    };
    let _ = write!(out, ";{};{bw};{iops};{runtime}", u(&d["io_bytes"]) >> 10);
    let micro = |out: &mut String, s: &Value| {
        let _ = match u(&s["N"]) {
            0 => write!(out, ";0;0;0.000000;0.000000"),
            _ => write!(
                out,
                ";{};{};{:.6};{:.6}",
                u(&s["min"]) / 1000,
                u(&s["max"]) / 1000,
                f(&s["mean"]) / 1000.0,
                f(&s["stddev"]) / 1000.0
            ),
        };
    };
    micro(out, &d["slat_ns"]);
    micro(out, &d["clat_ns"]);
    let mut listed: Vec<(f64, u64)> = d["clat_ns"]["percentile"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, u(v))))
        .collect();
    listed.sort_by(|a, b| a.0.total_cmp(&b.0));
    if listed.is_empty() {
        // A direction without I/O: fio lists its percentiles at 0.
        listed = super::fio_json::PERCENTILES
            .iter()
            .map(|p| (*p, 0))
            .collect();
    }
    for i in 0..PERCENTILE_FIELDS {
        let _ = match listed.get(i) {
            Some((p, ns)) => write!(out, ";{p:.6}%={}", ns / 1000),
            None => write!(out, ";0%=0"),
        };
    }
    micro(out, &d["lat_ns"]);
    let _ = match u(&d["bw_samples"]) {
        0 => write!(out, ";0;0;0.000000%;0.000000;0.000000"),
        _ => write!(
            out,
            ";{};{};{:.6}%;{:.6};{:.6}",
            u(&d["bw_min"]),
            u(&d["bw_max"]),
            f(&d["bw_agg"]),
            f(&d["bw_mean"]),
            f(&d["bw_dev"])
        ),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_fios_130_fields_in_fios_order() {
        let doc = serde_json::json!({
            "jobs": [{
                "jobname": "t", "groupid": 0, "error": 0,
                "read": {
                    "io_bytes": 4_194_304u64, "runtime": 59, "total_ios": 1024,
                    "slat_ns": {"N": 0},
                    "clat_ns": {"min": 2100, "max": 97_000, "mean": 56_606.4, "stddev": 16_052.7, "N": 1024,
                        "percentile": {"1.000000": 4000, "99.990000": 90_000}},
                    "lat_ns": {"min": 2100, "max": 97_000, "mean": 56_606.4, "stddev": 16_052.7, "N": 1024},
                    "bw_samples": 0
                },
                "write": {"io_bytes": 0, "runtime": 0, "total_ios": 0, "slat_ns": {"N": 0},
                    "clat_ns": {"N": 0}, "lat_ns": {"N": 0}},
                "usr_cpu": 1.5, "sys_cpu": 3.0, "ctx": 10, "majf": 0, "minf": 5,
                "iodepth_level": {"1": 100.0},
                "latency_ns": {"2": 0.0, "4": 0.0, "10": 0.0, "20": 0.0, "50": 0.0, "100": 0.0,
                    "250": 0.0, "500": 0.0, "750": 0.0, "1000": 0.5},
                "latency_us": {"2": 0.0, "4": 1.0, "10": 0.0, "20": 0.0, "50": 0.0, "100": 98.5,
                    "250": 0.0, "500": 0.0, "750": 0.0, "1000": 0.0},
                "latency_ms": {"2": 0.0, "4": 0.0, "10": 0.0, "20": 0.0, "50": 0.0, "100": 0.0,
                    "250": 0.0, "500": 0.0, "750": 0.0, "1000": 0.0, "2000": 0.0, ">=2000": 0.0}
            }],
            "disk_util": [{"name": "vda", "read_ios": 1, "write_ios": 2, "read_merges": 0,
                "write_merges": 0, "read_ticks": 3, "write_ticks": 4, "in_queue": 7, "util": 50.0}]
        });
        let line = render(&doc);
        let fields: Vec<&str> = line.trim_end().split(';').collect();
        // As fio --minimal writes a job on one disk (fio 3.42 writes it as 3.33 did).
        assert_eq!(fields.len(), 130, "{line}");
        assert_eq!(
            &fields[..9],
            [
                "3", "fio-3.42", "t", "0", "0", "4096", "69423", "17355", "59"
            ]
        );
        assert_eq!(fields[14], "97", "clat max in µs");
        assert_eq!(fields[17], "1.000000%=4");
        assert_eq!(fields[36], "0%=0");
        // The writes, which did nothing: fio's list, at 0.
        assert!(fields.contains(&"99.990000%=0"), "{fields:?}");
        assert_eq!(
            fields[99], "0.50%",
            "ns buckets folded into the first µs one"
        );
        assert_eq!(&fields[121..124], ["vda", "1", "2"]);
    }
}
