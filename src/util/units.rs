//! Units, parsed and printed in one place below everything that uses them:
//! the sizes and durations of the command line and job files ("4k", "1g",
//! "30s", "5m"), and the numbers of the human-readable reports ("1,234",
//! "85.3 µs", "12.5 MiB/s").

use std::time::{Duration, SystemTime};

/// Parses a byte size: a plain number of bytes or a number followed by k, m, g
/// or t (binary multiples, as fio reads them), with an optional "b"/"ib"
/// ending: `4k`, `1M`, `1GiB`, `512`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty size".into());
    }
    let lower = t.to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (number, suffix) = lower.split_at(digits_end);
    if number.is_empty() {
        return Err(format!("'{text}' is not a size (expected e.g. 4k, 1m, 2g)"));
    }
    let shift = match suffix.trim() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "'{text}' has an unknown size unit '{other}' (use k, m, g or t)"
            ));
        }
    };
    let multiplier = 1u64 << shift;
    if number.contains('.') {
        let value: f64 = number
            .parse()
            .map_err(|_| format!("'{text}' is not a size (expected e.g. 4k, 1m, 2g)"))?;
        let bytes = value * multiplier as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 || bytes.fract() != 0.0 {
            return Err(format!("'{text}' is not a whole number of bytes"));
        }
        Ok(bytes as u64)
    } else {
        let value: u64 = number
            .parse()
            .map_err(|_| format!("'{text}' is too large"))?;
        value
            .checked_mul(multiplier)
            .ok_or_else(|| format!("'{text}' is too large"))
    }
}

/// Parses a duration: `30s`, `5m`, `1h`, `1h30m`, `250ms`; a bare number means
/// seconds, as in fio.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(t)
        .map_err(|e| format!("'{text}' is not a duration ({e}; expected e.g. 30s, 5m, 1h)"))
}

/// A duration in seconds (see [`parse_duration`]).
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    parse_duration(text).map(|d| d.as_secs_f64())
}

/// A percentage knob's value, 0 to 100, with or without its `%`.
pub fn parse_percent(text: &str) -> Result<u8, String> {
    match text.trim().trim_end_matches('%').parse::<u8>() {
        Ok(p) if p <= 100 => Ok(p),
        _ => Err(format!("'{text}' is not a percentage from 0 to 100")),
    }
}

/// Formats a byte count with binary units for people ("4 KiB", "1.5 GiB").
pub fn format_bytes(bytes: u64) -> String {
    let (value, unit) = in_units(bytes, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB"]);
    if value.fract() == 0.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.1} {unit}")
    }
}

/// `bytes` in the largest of `units` (each `step` times the one before)
/// that leaves a value of 1 or more.
fn in_units(bytes: u64, step: f64, units: &[&'static str]) -> (f64, &'static str) {
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= step && unit < units.len() - 1 {
        value /= step;
        unit += 1;
    }
    (value, units[unit])
}

/// Formats a byte count with decimal units, as accelerators' memory and
/// MLPerf's checkpoint sizes are given ("180 GB", "1.44 TB", "5.29 TB"):
/// three significant digits.
pub fn format_decimal_bytes(bytes: u64) -> String {
    let (value, unit) = in_units(bytes, 1000.0, &["B", "kB", "MB", "GB", "TB"]);
    let digits = if value >= 100.0 || value.fract() == 0.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {unit}")
}

/// Formats a block size the way fio users write it ("4k", "1m", "512").
pub fn format_block_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// "1h 2m", "4m 30s", "12s", "0.5s".
pub fn format_duration(seconds: f64) -> String {
    if seconds < 10.0 {
        return format!("{}s", (seconds * 10.0).round() / 10.0);
    }
    let total = seconds.round() as u64;
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60);
    match (h, m, s) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m {s}s"),
        (h, 0, _) => format!("{h}h"),
        (h, m, _) => format!("{h}h {m}m"),
    }
}

/// 1234567 -> "1,234,567".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Nanoseconds as the unit that keeps 3 significant digits readable:
/// "850 ns", "85.3 µs", "1.25 ms", "2.10 s".
pub fn latency(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{} µs", three_digits(ns / 1e3))
    } else if ns < 1e9 {
        format!("{} ms", three_digits(ns / 1e6))
    } else {
        format!("{} s", three_digits(ns / 1e9))
    }
}

fn three_digits(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Bytes per second in MiB/s (GiB/s above 10 GiB/s).
pub fn bandwidth(bytes_per_s: f64) -> String {
    let mib = bytes_per_s / (1 << 20) as f64;
    if mib >= 10240.0 {
        format!("{:.1} GiB/s", mib / 1024.0)
    } else if mib >= 100.0 {
        format!("{} MiB/s", thousands(mib.round() as u64))
    } else {
        format!("{mib:.1} MiB/s")
    }
}

/// Bytes per second as a bare MiB/s figure for a column headed "MiB/s".
pub fn mib_per_s(bytes_per_s: f64) -> String {
    let mib = bytes_per_s / (1 << 20) as f64;
    if mib >= 100.0 {
        thousands(mib.round() as u64)
    } else {
        format!("{mib:.1}")
    }
}

/// Decimal megabytes a second with one decimal, as desktop disk benchmarks
/// give them, grouped in thousands like every count in text: "1,874.9".
pub fn mb_per_s(bytes_per_s: f64) -> String {
    grouped(bytes_per_s / 1e6, 1)
}

/// A rate of operations a second: whole and grouped in thousands, as
/// counts are, except a slow rate that is not whole ("0.67"), which
/// rounding would show as 0 or 1.
pub fn ops_per_s(rate: f64) -> String {
    if rate >= 10.0 || rate == rate.round() {
        thousands(rate.round() as u64)
    } else {
        format!("{rate:.2}")
    }
}

/// "1 worker", "3 workers", "1,024 files": a count and its noun.
pub fn counted(n: u64, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{} {noun}s", thousands(n)),
    }
}

/// A figure with `decimals` places, its whole part grouped in thousands:
/// `grouped(9006.666, 2)` is "9,006.67".
pub fn grouped(value: f64, decimals: usize) -> String {
    let scale = 10u64.pow(decimals as u32);
    let scaled = (value * scale as f64).round().max(0.0) as u64;
    match decimals {
        0 => thousands(scaled),
        _ => format!(
            "{}.{:0decimals$}",
            thousands(scaled / scale),
            scaled % scale
        ),
    }
}

/// A wall-clock time: RFC 3339 (`2026-11-23T14:00:00Z`), or `+DURATION`
/// from `now` (`+30s`). A time already past is refused.
pub fn parse_start_at(text: &str, now: SystemTime) -> Result<SystemTime, String> {
    let at = match text.strip_prefix('+') {
        Some(d) => now + parse_duration(d)?,
        None => humantime::parse_rfc3339_weak(text).map_err(|e| {
            format!(
                "'{text}' is neither an RFC 3339 time (2026-11-23T14:00:00Z) nor +DURATION: {e}"
            )
        })?,
    };
    if at < now {
        return Err(format!("'{text}' is already past"));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_are_absolute_or_from_now_and_never_past() {
        let now = humantime::parse_rfc3339("2026-11-23T14:00:00Z").unwrap();
        let in_30s = parse_start_at("+30s", now).unwrap();
        assert_eq!(in_30s.duration_since(now).unwrap(), Duration::from_secs(30));
        let at = parse_start_at("2026-11-23T14:05:00Z", now).unwrap();
        assert_eq!(at.duration_since(now).unwrap(), Duration::from_secs(300));
        assert!(
            parse_start_at("2026-11-23T13:59:59Z", now)
                .unwrap_err()
                .contains("already past")
        );
        assert!(
            parse_start_at("tomorrow", now)
                .unwrap_err()
                .contains("RFC 3339")
        );
        assert!(parse_start_at("+soon", now).is_err());
    }

    #[test]
    fn decimal_sizes_keep_three_digits() {
        assert_eq!(format_decimal_bytes(180_000_000_000), "180 GB");
        assert_eq!(format_decimal_bytes(1_440_000_000_000), "1.44 TB");
        assert_eq!(format_decimal_bytes(5_290_000_000_000), "5.29 TB");
        assert_eq!(format_decimal_bytes(18_000_000_000_000), "18 TB");
    }

    #[test]
    fn sizes_use_binary_multiples() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("2t").unwrap(), 2 << 40);
    }

    #[test]
    fn bad_sizes_are_rejected_with_the_text() {
        for bad in [
            "",
            "k",
            "4q",
            "abc",
            "1.1",
            "99999999999999999999k",
            "18446744073709551615k",
        ] {
            let err = parse_size(bad).unwrap_err();
            assert!(!err.is_empty(), "{bad}");
        }
        assert!(parse_size("4q").unwrap_err().contains("'4q'"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(format_block_size(4096), "4k");
        assert_eq!(format_block_size(1 << 20), "1m");
        assert_eq!(format_block_size(1536), "1536");
    }
}

#[cfg(test)]
mod format_tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn decimal_megabytes_keep_one_decimal_and_group_thousands() {
        assert_eq!(mb_per_s(1_874_853_888.0), "1,874.9");
        assert_eq!(mb_per_s(65_800_000.0), "65.8");
        assert_eq!(mb_per_s(49_999.0), "0.0");
        assert_eq!(mb_per_s(99_960_000.0), "100.0");
        assert_eq!(grouped(9006.666, 2), "9,006.67");
        assert_eq!(grouped(0.05, 2), "0.05");
        assert_eq!(grouped(2702.4, 0), "2,702");
        assert_eq!(counted(1, "result"), "1 result");
        assert_eq!(ops_per_s(0.6667), "0.67");
        assert_eq!(ops_per_s(5.0), "5");
        assert_eq!(ops_per_s(17_740.4), "17,740");
        assert_eq!(counted(2048, "worker"), "2,048 workers");
    }

    #[test]
    fn latency_units() {
        assert_eq!(latency(850.0), "850 ns");
        assert_eq!(latency(85_300.0), "85.3 µs");
        assert_eq!(latency(1_250_000.0), "1.25 ms");
        assert_eq!(latency(2_100_000_000.0), "2.10 s");
    }

    #[test]
    fn bandwidth_units() {
        assert_eq!(bandwidth(1048576.0 * 48.25), "48.2 MiB/s");
        assert_eq!(bandwidth(1048576.0 * 512.0), "512 MiB/s");
        assert_eq!(bandwidth(1048576.0 * 20480.0), "20.0 GiB/s");
    }
}
