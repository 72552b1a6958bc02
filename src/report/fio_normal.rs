//! fio's `normal` text output (`--output-format=normal`, fio's default),
//! rendered from the same fio document `fio_json` builds, as fio's stat.c
//! renders every output from one `thread_stat`: the lines fio prints as its
//! jobs start (each job's options, its release, the processes), the per-job
//! block (IOPS and bandwidth, slat/clat/lat, percentiles, per-second bw and
//! IOPS spread, latency buckets, cpu, IO depths, issued counts), each
//! group's run status and the disk stats, in fio 3.33's layout and number style (its
//! `num2str`), so that scripts that read fio's text keep working.
//!
//! Where fathom has no figure fio prints, the line carries what fio prints
//! for an engine without it: slat is left out for a synchronous engine (N =
//! 0, as fio leaves it out), a job's pid is 0.

use super::fio_json::{self, count_in as u, disk_counts, figure_in as f};
use super::{Exporter, Report};
use serde_json::Value;
use std::fmt::Write as _;

pub struct FioNormalExporter;

pub use super::fio_json::FIO_RELEASE;

/// fio's `sig_figs` default: four significant digits.
const SIG_FIGS: usize = 4;

impl Exporter for FioNormalExporter {
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        Ok(render(&fio_json::document(report, false)?))
    }
}

/// The fio document `doc` (as `fio_json::document` makes it) in fio's
/// normal layout.
pub fn render(doc: &Value) -> String {
    let jobs = doc["jobs"].as_array().cloned().unwrap_or_default();
    header(&jobs) + &body(doc)
}

/// The normal layout of `doc` without the lines fio prints as its jobs
/// start: what each of `--status-interval`'s reports prints.
pub fn body(doc: &Value) -> String {
    let jobs = doc["jobs"].as_array().cloned().unwrap_or_default();
    let when = ctime(doc["timestamp"].as_u64().unwrap_or(0));
    let mut out = String::new();
    for job in &jobs {
        job_block(&mut out, job, &when);
    }
    let mut groups: Vec<u64> = jobs.iter().filter_map(|j| j["groupid"].as_u64()).collect();
    groups.dedup();
    for group in groups {
        let members: Vec<&Value> = jobs
            .iter()
            .filter(|j| j["groupid"].as_u64() == Some(group))
            .collect();
        group_status(&mut out, group, &members);
    }
    if let Some(disks) = doc["disk_util"].as_array().filter(|d| !d.is_empty()) {
        out.push_str("\nDisk stats (read/write):\n");
        for d in disks {
            let [ri, wi, rm, wm, rt, wt, q] = disk_counts(d);
            let _ = writeln!(
                out,
                "  {}: ios={ri}/{wi}, merge={rm}/{wm}, ticks={rt}/{wt}, in_queue={q}, util={:.2}%",
                d["name"].as_str().unwrap_or(""),
                f(&d["util"]),
            );
        }
    }
    out
}

/// What fio prints as its jobs start: a line for each job (`...` under it
/// for its clones), its release, and how many processes it starts.
fn header(jobs: &[Value]) -> String {
    let mut out = String::new();
    let mut processes = 0;
    let mut previous: Option<&str> = None;
    for job in jobs {
        let options = &job["job options"];
        let name = job["jobname"].as_str().unwrap_or("");
        let grouped = options["group_reporting"].as_str() == Some("1");
        let clones: u64 = match grouped {
            true => options["numjobs"]
                .as_str()
                .and_then(|n| n.parse().ok())
                .unwrap_or(1),
            false => 1,
        };
        processes += clones;
        if previous == Some(name) {
            // A clone reported apart: fio's "..." is already under its job.
            continue;
        }
        let option =
            |key: &str, default: &str| options[key].as_str().unwrap_or(default).to_string();
        let bs = options["bs"]
            .as_str()
            .and_then(|b| b.parse().ok())
            .map_or_else(
                || "4096B".to_string(),
                |b: u64| num2str(b, SIG_FIGS, 1, true, "B"),
            );
        let _ = writeln!(
            out,
            "{name}: (g={}): rw={}, bs=(R) {bs}-{bs}, (W) {bs}-{bs}, (T) {bs}-{bs}, ioengine={}, iodepth={}",
            u(&job["groupid"]),
            option("rw", "read"),
            option("ioengine", "psync"),
            option("iodepth", "1"),
        );
        let numjobs: u64 = options["numjobs"]
            .as_str()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        if numjobs > 1 {
            out.push_str("...\n");
        }
        previous = Some(name);
    }
    let _ = writeln!(
        out,
        "{FIO_RELEASE}\nStarting {processes} process{}\n",
        if processes == 1 { "" } else { "es" }
    );
    out
}

const DIRECTIONS: [(&str, &str, &str); 3] = [
    ("read", "read", "   READ"),
    ("write", "write", "  WRITE"),
    ("trim", "trim", "   TRIM"),
];

fn job_block(out: &mut String, job: &Value, when: &str) {
    let moved: u64 = DIRECTIONS
        .iter()
        .map(|(k, _, _)| u(&job[*k]["io_bytes"]))
        .sum();
    let ios: u64 = DIRECTIONS
        .iter()
        .map(|(k, _, _)| u(&job[*k]["total_ios"]))
        .sum();
    if moved == 0 && ios == 0 {
        return;
    }
    let error = u(&job["error"]);
    // A group's report counts its jobs; a job's own, itself.
    let options = &job["job options"];
    let jobs = match options["group_reporting"].as_str() {
        Some("1") => options["numjobs"]
            .as_str()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1u32),
        _ => 1,
    };
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={jobs}): err={error:2}: pid=0: {when}",
        job["jobname"].as_str().unwrap_or(""),
        u(&job["groupid"]),
    );
    for (key, name, _) in DIRECTIONS {
        if u(&job[key]["io_bytes"]) > 0 {
            direction(out, &job[key], name, job.get("zone_resets"));
        }
    }
    latency_buckets(out, job);
    let sync = &job["sync"];
    if u(&sync["total_ios"]) > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        summary(out, "sync", &sync["lat_ns"]);
        percentiles(out, "sync", &sync["lat_ns"]);
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
        f(&job["usr_cpu"]),
        f(&job["sys_cpu"]),
        u(&job["ctx"]),
        u(&job["majf"]),
        u(&job["minf"]),
    );
    let shares = |v: &Value, keys: &[&str]| -> String {
        keys.iter()
            .map(|k| format!("{k}={:.1}%", f(&v[*k])))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "  IO depths    : {}",
        shares(
            &job["iodepth_level"],
            &["1", "2", "4", "8", "16", "32", ">=64"]
        )
    );
    let batches = ["0", "4", "8", "16", "32", "64", ">=64"];
    let _ = writeln!(
        out,
        "     submit    : {}",
        shares(&job["iodepth_submit"], &batches)
    );
    let _ = writeln!(
        out,
        "     complete  : {}",
        shares(&job["iodepth_complete"], &batches)
    );
    let per = |k: &str| -> String {
        DIRECTIONS
            .iter()
            .map(|(d, _, _)| u(&job[*d][k]).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let _ = writeln!(
        out,
        "     issued rwts: total={},0 short={},0 dropped={},0",
        per("total_ios"),
        per("short_ios"),
        per("drop_ios"),
    );
    let depth = job["job options"]["iodepth"]
        .as_str()
        .and_then(|d| d.parse::<u64>().ok())
        .unwrap_or(1);
    let _ = writeln!(
        out,
        "     latency   : target=0, window=0, percentile=100.00%, depth={depth}"
    );
}

/// A direction's block; `zone_resets` (zonemode=zbd) ends its first line
/// as fio ends it.
fn direction(out: &mut String, d: &Value, name: &str, zone_resets: Option<&Value>) {
    let runtime_ms = u(&d["runtime"]).max(1);
    let bytes = u(&d["io_bytes"]);
    let bw = 1000 * bytes / runtime_ms;
    let iops = 1000 * u(&d["total_ios"]) / runtime_ms;
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={} ({})({}/{runtime_ms}msec){}",
        num2str(iops, SIG_FIGS, 1, false, ""),
        num2str(bw, SIG_FIGS, 1, true, "B/s"),
        num2str(bw, SIG_FIGS, 1, false, "B/s"),
        num2str(bytes, SIG_FIGS, 1, true, "B"),
        zone_resets.map_or(String::new(), |n| format!("; {} zone resets", u(n))),
    );
    if u(&d["slat_ns"]["N"]) > 0 {
        summary(out, "slat", &d["slat_ns"]);
    }
    summary(out, "clat", &d["clat_ns"]);
    summary(out, " lat", &d["lat_ns"]);
    // With cmdprio: each priority's, as fio's show_ddir_status prints them.
    let prios = d["prios"].as_array().cloned().unwrap_or_default();
    let prio_name = |p: &Value| format!("clat prio {}/{}", u(&p["prioclass"]), u(&p["prio"]));
    for p in &prios {
        summary(out, &prio_name(p), &p["clat_ns"]);
    }
    percentiles(out, "clat", &d["clat_ns"]);
    let all = u(&d["clat_ns"]["N"]).max(1) as f64;
    for p in &prios {
        let share = 100.0 * u(&p["clat_ns"]["N"]) as f64 / all;
        percentiles(
            out,
            &format!("{} ({share:.2}% of IOs)", prio_name(p)),
            &p["clat_ns"],
        );
    }
    if u(&d["bw_samples"]) > 0 {
        let (mut min, mut max, mut mean, mut dev) = (
            f(&d["bw_min"]),
            f(&d["bw_max"]),
            f(&d["bw_mean"]),
            f(&d["bw_dev"]),
        );
        let mut unit = "KiB";
        if mean > 1024.0 * 1024.0 {
            for x in [&mut min, &mut max, &mut mean, &mut dev] {
                *x /= 1024.0;
            }
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={:.2}%, avg={mean:5.02}, stdev={dev:5.02}, samples={}",
            min as u64,
            max as u64,
            f(&d["bw_agg"]),
            u(&d["bw_samples"]),
        );
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
            u(&d["iops_min"]),
            u(&d["iops_max"]),
            f(&d["iops_mean"]),
            f(&d["iops_stddev"]),
            u(&d["iops_samples"]),
        );
    }
}

/// One `clat (usec): min=…` line, in the unit fio's `display_lat` picks.
fn summary(out: &mut String, name: &str, s: &Value) {
    if u(&s["N"]) == 0 {
        return;
    }
    let (mut min, mut max, mut mean, mut dev) =
        (u(&s["min"]), u(&s["max"]), f(&s["mean"]), f(&s["stddev"]));
    let mut base = "(nsec)";
    for (divisor, unit) in [(1_000_000u64, "(msec)"), (1_000, "(usec)")] {
        if min > 2 * divisor && max > 100 * divisor - 1 && dev > divisor as f64 {
            min /= divisor;
            max /= divisor;
            mean /= divisor as f64;
            dev /= divisor as f64;
            base = unit;
            break;
        }
    }
    let _ = writeln!(
        out,
        "    {name} {base}: min={}, max={}, avg={mean:5.02}, stdev={dev:5.02}",
        num2str(min, 6, 1, false, ""),
        num2str(max, 6, 1, false, ""),
    );
}

/// The percentile table, as fio's `show_clat_percentiles` lays it out.
fn percentiles(out: &mut String, name: &str, s: &Value) {
    let Some(list) = s["percentile"].as_object().filter(|p| !p.is_empty()) else {
        return;
    };
    let mut values: Vec<(f64, u64)> = list
        .iter()
        .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, u(v))))
        .collect();
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let minv = values.iter().map(|v| v.1).min().unwrap_or(0);
    let maxv = values.iter().map(|v| v.1).max().unwrap_or(0);
    let (scale_down, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1_000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    let precision = 2;
    let time_width = 5.max(((maxv / divisor) as f64).log10() as usize + 1);
    let per_line = (80 - 7) / (precision + 10 + time_width);
    let last = values.len() - 1;
    for (j, (p, mut v)) in values.into_iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        for _ in 0..scale_down {
            v = v.div_ceil(1000);
        }
        let end = if j == last { '\n' } else { ',' };
        let _ = write!(
            out,
            " {p:w$.precision$}th=[{v:time_width$}]{end}",
            w = precision + 3
        );
        if j == last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// The `lat (usec)   : 2=…, 4=…` lines: each bucket with I/O in it, five a
/// line.
fn latency_buckets(out: &mut String, job: &Value) {
    for (key, unit) in [
        ("latency_ns", "nsec"),
        ("latency_us", "usec"),
        ("latency_ms", "msec"),
    ] {
        let Some(buckets) = job[key].as_object() else {
            continue;
        };
        let shown: Vec<String> = buckets
            .iter()
            .filter(|(_, v)| f(v) > 0.0)
            .map(|(k, v)| format!("{k}={:.2}%", f(v).max(0.01)))
            .collect();
        for line in shown.chunks(5) {
            let _ = writeln!(out, "  lat ({unit})   : {}", line.join(", "));
        }
    }
}

fn group_status(out: &mut String, group: u64, jobs: &[&Value]) {
    let _ = writeln!(out, "\nRun status group {group} (all jobs):");
    for (key, _, label) in DIRECTIONS {
        let active: Vec<&Value> = jobs
            .iter()
            .map(|j| &j[key])
            .filter(|d| u(&d["runtime"]) > 0)
            .collect();
        if active.is_empty() {
            continue;
        }
        let bytes: u64 = active.iter().map(|d| u(&d["io_bytes"])).sum();
        let runs: Vec<u64> = active.iter().map(|d| u(&d["runtime"])).collect();
        let (min_run, max_run) = (
            *runs.iter().min().expect("active"),
            *runs.iter().max().expect("active"),
        );
        let bws: Vec<u64> = active
            .iter()
            .map(|d| 1000 * u(&d["io_bytes"]) / u(&d["runtime"]).max(1))
            .collect();
        let agg = 1000 * bytes / max_run.max(1);
        let (min_bw, max_bw) = (
            *bws.iter().min().expect("active"),
            *bws.iter().max().expect("active"),
        );
        let n = |x: u64, pow2: bool| num2str(x, SIG_FIGS, 1, pow2, "B/s");
        let _ = writeln!(
            out,
            "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={min_run}-{max_run}msec",
            n(agg, true),
            n(agg, false),
            n(min_bw, true),
            n(max_bw, true),
            n(min_bw, false),
            n(max_bw, false),
            num2str(bytes, SIG_FIGS, 1, true, "B"),
            num2str(bytes, SIG_FIGS, 1, false, "B"),
        );
    }
}

/// fio's `num2str`: `num` (in units of `base`) with at most `maxlen`
/// digits, scaled by k/M/G (or Ki/Mi/Gi with `pow2`), carry-rounded as fio
/// rounds, followed by `unit`.
pub fn num2str(mut num: u64, maxlen: usize, mut base: u64, pow2: bool, unit: &str) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { IEC } else { SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut post = 0;
    while base > 1 {
        base /= thousand;
        post += 1;
    }
    let mut modulo = None;
    let mut carry = false;
    while post < prefixes.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }
    let Some(modulo) = modulo else {
        return format!("{num}{}{unit}", prefixes[post]);
    };
    let digits = num.to_string().len();
    if maxlen.saturating_sub(digits) <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit}", prefixes[post]);
    }
    let decimals = maxlen - digits - 1;
    let fraction = format!("{:.*}", decimals, modulo as f64 / thousand as f64);
    if fraction.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{unit}", &fraction[2..], prefixes[post])
}

/// `seconds` since the epoch as C's `ctime` writes it, in local time:
/// "Thu Nov 26 06:23:14 2026".
fn ctime(seconds: u64) -> String {
    let t = seconds as libc::time_t;
    // SAFETY: localtime_r and strftime write only into the buffers given.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return String::new();
        }
        let mut buf = [0u8; 64];
        let n = libc::strftime(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"%a %b %e %H:%M:%S %Y".as_ptr(),
            &tm,
        );
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_fios_num2str_writes_them() {
        // Figures from fio 3.33's own output.
        assert_eq!(num2str(33855, 4, 1, false, ""), "33.9k");
        assert_eq!(num2str(33822, 4, 1, false, ""), "33.8k");
        assert_eq!(num2str(138_412_032, 4, 1, true, "B"), "132MiB");
        assert_eq!(num2str(138_412_032, 4, 1, false, "B"), "138MB");
        assert_eq!(num2str(999, 4, 1, false, ""), "999");
        assert_eq!(num2str(1_000_000, 6, 1, false, ""), "1000.0k");
        assert_eq!(num2str(896_609, 6, 1, false, ""), "896609");
        assert_eq!(num2str(4096, 4, 1, true, "B"), "4096B");
    }

    #[test]
    fn a_job_reads_as_fios_block() {
        let doc = serde_json::json!({
            "timestamp": 0,
            "jobs": [{
                "jobname": "m", "groupid": 0, "error": 0,
                "job options": {"iodepth": "4"},
                "read": {
                    "io_bytes": 138_412_032u64, "runtime": 1001, "total_ios": 33792,
                    "short_ios": 0, "drop_ios": 0,
                    "slat_ns": {"N": 0},
                    "clat_ns": {"min": 2100, "max": 1_097_000, "mean": 55850.0, "stddev": 34370.0, "N": 33792,
                        "percentile": {"1.000000": 4000, "50.000000": 66000, "99.990000": 775_000}},
                    "lat_ns": {"min": 2100, "max": 1_097_000, "mean": 55850.0, "stddev": 34370.0, "N": 33792},
                    "bw_min": 165_392, "bw_max": 165_392, "bw_agg": 100.0, "bw_mean": 165_392.0,
                    "bw_dev": 0.0, "bw_samples": 1,
                    "iops_min": 41348, "iops_max": 41348, "iops_mean": 41348.0, "iops_stddev": 0.0, "iops_samples": 1
                },
                "write": {"io_bytes": 0, "runtime": 0, "total_ios": 0},
                "trim": {"io_bytes": 0, "runtime": 0, "total_ios": 0},
                "sync": {"total_ios": 0},
                "usr_cpu": 4.9, "sys_cpu": 31.9, "ctx": 22125, "majf": 0, "minf": 11,
                "iodepth_level": {"1": 0.1, "4": 100.0},
                "latency_us": {"4": 1.48, "10": 14.51, "20": 0.0},
                "latency_ms": {"2": 0.001}
            }],
            "disk_util": []
        });
        let text = render(&doc);
        for line in [
            "m: (groupid=0, jobs=1): err= 0: pid=0: ",
            "  read: IOPS=33.8k, BW=132MiB/s (138MB/s)(132MiB/1001msec)\n",
            "    clat (usec): min=2, max=1097, avg=55.85, stdev=34.37\n",
            "    clat percentiles (usec):\n     |  1.00th=[    4], 50.00th=[   66], 99.99th=[  775]\n",
            "   bw (  KiB/s): min=165392, max=165392, per=100.00%, avg=165392.00, stdev= 0.00, samples=1\n",
            "  lat (usec)   : 4=1.48%, 10=14.51%\n",
            "  lat (msec)   : 2=0.01%\n",
            "  IO depths    : 1=0.1%, 2=0.0%, 4=100.0%",
            "     issued rwts: total=33792,0,0,0 short=0,0,0,0 dropped=0,0,0,0\n",
            "Run status group 0 (all jobs):\n   READ: bw=132MiB/s (138MB/s), 132MiB/s-132MiB/s (138MB/s-138MB/s), io=132MiB (138MB), run=1001-1001msec\n",
        ] {
            assert!(text.contains(line), "{line:?} not in:\n{text}");
        }
    }
}
