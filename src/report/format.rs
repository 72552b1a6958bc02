//! Number formatting shared by the human-readable formats.

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
        format!("{mib:.0} MiB/s")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
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
