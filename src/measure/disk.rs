//! The kernel's counters of each disk under the targets
//! (`/sys/block/NAME/stat`), read when measuring starts and when it ends:
//! what the device itself was asked to do, beside what fathom issued. A
//! file served from the page cache shows few device reads; a file system
//! that amplifies writes shows more device writes than fathom made.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One disk's work while measuring, from the kernel's counters: every I/O
/// it was asked for, fathom's or not.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiskUsage {
    /// Kernel name of the disk, e.g. "nvme0n1".
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    /// Requests merged into others before reaching the device.
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Milliseconds requests spent, summed over requests.
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    /// Weighted milliseconds of requests in flight.
    pub in_queue_ms: u64,
    /// Discard requests and the bytes they covered (Linux 4.18 and later).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discard_ios: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discard_bytes: u64,
    /// Share of the time the disk had at least one request in flight.
    pub util_pct: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl DiskUsage {
    /// The same disk's work in another run added: counts add; the busy
    /// share is the larger of the two (the runs' lengths are not kept).
    pub fn add(&mut self, other: &DiskUsage) {
        self.read_ios += other.read_ios;
        self.write_ios += other.write_ios;
        self.read_merges += other.read_merges;
        self.write_merges += other.write_merges;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.read_ticks_ms += other.read_ticks_ms;
        self.write_ticks_ms += other.write_ticks_ms;
        self.in_queue_ms += other.in_queue_ms;
        self.discard_ios += other.discard_ios;
        self.discard_bytes += other.discard_bytes;
        self.util_pct = self.util_pct.max(other.util_pct);
    }
}

/// One reading of `/sys/block/NAME/stat` (the kernel's
/// Documentation/block/stat.rst: counts, 512-byte sectors, milliseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Counters {
    read_ios: u64,
    read_merges: u64,
    read_sectors: u64,
    read_ticks_ms: u64,
    write_ios: u64,
    write_merges: u64,
    write_sectors: u64,
    write_ticks_ms: u64,
    io_ticks_ms: u64,
    time_in_queue_ms: u64,
    discard_ios: u64,
    discard_sectors: u64,
}

impl Counters {
    fn parse(text: &str) -> Option<Counters> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        if f.len() < 11 {
            return None;
        }
        Some(Counters {
            read_ios: f[0],
            read_merges: f[1],
            read_sectors: f[2],
            read_ticks_ms: f[3],
            write_ios: f[4],
            write_merges: f[5],
            write_sectors: f[6],
            write_ticks_ms: f[7],
            io_ticks_ms: f[9],
            time_in_queue_ms: f[10],
            // Older kernels end at the eleventh field.
            discard_ios: f.get(11).copied().unwrap_or(0),
            discard_sectors: f.get(13).copied().unwrap_or(0),
        })
    }
}

/// The counters of some disks at one moment.
#[derive(Debug, Clone)]
pub struct DiskSnapshot {
    at: Instant,
    disks: Vec<(String, Counters)>,
}

impl DiskSnapshot {
    /// Reads the counters of `names` (kernel disk names, e.g. "nvme0n1");
    /// a disk whose counters cannot be read is left out.
    pub fn take(names: &[String]) -> DiskSnapshot {
        let disks = names
            .iter()
            .filter_map(|n| {
                let text = crate::gate::read::host_text(format!("/sys/block/{n}/stat"))?;
                Some((n.clone(), Counters::parse(&text)?))
            })
            .collect();
        DiskSnapshot {
            at: Instant::now(),
            disks,
        }
    }

    /// What each disk did between `earlier` and this snapshot.
    pub fn since(&self, earlier: &DiskSnapshot) -> Vec<DiskUsage> {
        let elapsed_ms = self.at.saturating_duration_since(earlier.at).as_secs_f64() * 1e3;
        self.disks
            .iter()
            .filter_map(|(name, now)| {
                let (_, then) = earlier.disks.iter().find(|(n, _)| n == name)?;
                Some(usage(name, then, now, elapsed_ms))
            })
            .collect()
    }
}

fn usage(name: &str, then: &Counters, now: &Counters, elapsed_ms: f64) -> DiskUsage {
    // Counters only grow; a disk re-attached meanwhile would start again
    // from zero, so a difference below zero is taken as nothing.
    let d = |a: u64, b: u64| b.saturating_sub(a);
    let busy_ms = d(then.io_ticks_ms, now.io_ticks_ms);
    DiskUsage {
        name: name.to_string(),
        read_ios: d(then.read_ios, now.read_ios),
        write_ios: d(then.write_ios, now.write_ios),
        read_merges: d(then.read_merges, now.read_merges),
        write_merges: d(then.write_merges, now.write_merges),
        read_bytes: d(then.read_sectors, now.read_sectors) * 512,
        write_bytes: d(then.write_sectors, now.write_sectors) * 512,
        read_ticks_ms: d(then.read_ticks_ms, now.read_ticks_ms),
        write_ticks_ms: d(then.write_ticks_ms, now.write_ticks_ms),
        in_queue_ms: d(then.time_in_queue_ms, now.time_in_queue_ms),
        discard_ios: d(then.discard_ios, now.discard_ios),
        discard_bytes: d(then.discard_sectors, now.discard_sectors) * 512,
        util_pct: if elapsed_ms > 0.0 {
            (busy_ms as f64 * 100.0 / elapsed_ms).min(100.0)
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_in_the_kernels_order() {
        let c = Counters::parse("10 1 80 5 20 2 160 7 0 30 12 0 0 0 0 0 0\n").unwrap();
        assert_eq!(
            (c.read_ios, c.read_merges, c.read_sectors, c.read_ticks_ms),
            (10, 1, 80, 5)
        );
        assert_eq!(
            (
                c.write_ios,
                c.write_merges,
                c.write_sectors,
                c.write_ticks_ms
            ),
            (20, 2, 160, 7)
        );
        assert_eq!((c.io_ticks_ms, c.time_in_queue_ms), (30, 12));
        assert_eq!((c.discard_ios, c.discard_sectors), (0, 0));
        let c = Counters::parse("10 1 80 5 20 2 160 7 0 30 12 4 1 64 3 0 0\n").unwrap();
        assert_eq!((c.discard_ios, c.discard_sectors), (4, 64));
        assert!(Counters::parse("1 2 3").is_none());
        assert!(Counters::parse("1 2 3 4 5 6 7 8 9 10 x").is_none());
    }

    #[test]
    fn usage_is_the_difference_over_the_time_between() {
        let then = Counters::parse("10 1 80 5 20 2 160 7 0 30 12").unwrap();
        let now = Counters::parse("110 3 880 55 20 2 160 7 1 530 112").unwrap();
        let u = usage("vda", &then, &now, 1000.0);
        assert_eq!(
            (u.read_ios, u.read_merges, u.read_bytes),
            (100, 2, 800 * 512)
        );
        assert_eq!((u.write_ios, u.write_bytes), (0, 0));
        assert_eq!((u.read_ticks_ms, u.in_queue_ms), (50, 100));
        assert_eq!(u.util_pct, 50.0);
        // Busy longer than the time between (rounding of the kernel's
        // ticks) is at most 100%; counters that went back count as none.
        assert_eq!(usage("vda", &then, &now, 100.0).util_pct, 100.0);
        assert_eq!(usage("vda", &now, &then, 1000.0).read_ios, 0);
        // No time between: no utilisation, rather than a division by zero.
        assert_eq!(usage("vda", &then, &now, 0.0).util_pct, 0.0);
    }

    #[test]
    fn writes_are_counted_apart_from_reads() {
        let then = Counters::parse("10 1 80 5 20 2 160 7 0 30 12").unwrap();
        let now = Counters::parse("10 1 80 5 70 6 560 47 0 130 52").unwrap();
        let u = usage("sdb", &then, &now, 400.0);
        assert_eq!(u.name, "sdb");
        assert_eq!((u.read_ios, u.read_bytes, u.read_ticks_ms), (0, 0, 0));
        assert_eq!(
            (u.write_ios, u.write_merges, u.write_bytes, u.write_ticks_ms),
            (50, 4, 400 * 512, 40)
        );
        assert_eq!((u.in_queue_ms, u.util_pct), (40, 25.0));
    }

    #[test]
    fn snapshots_are_matched_by_disk_over_the_time_between_them() {
        let start = Instant::now();
        let snapshot = |after_ms: u64, disks: &[(&str, &str)]| DiskSnapshot {
            at: start + std::time::Duration::from_millis(after_ms),
            disks: disks
                .iter()
                .map(|(n, c)| (n.to_string(), Counters::parse(c).unwrap()))
                .collect(),
        };
        let earlier = snapshot(
            0,
            &[
                ("sda", "0 0 0 0 0 0 0 0 0 100 0"),
                ("sdb", "5 0 8 0 0 0 0 0 0 0 0"),
            ],
        );
        let later = snapshot(
            2000,
            &[
                ("sdb", "9 0 16 0 0 0 0 0 0 500 0"),
                ("sda", "1 0 8 0 0 0 0 0 0 600 0"),
                ("sdc", "1 0 8 0 0 0 0 0 0 0 0"),
            ],
        );
        let used = later.since(&earlier);
        let by_name: Vec<(&str, u64, f64)> = used
            .iter()
            .map(|u| (u.name.as_str(), u.read_ios, u.util_pct))
            .collect();
        // sdc has no earlier reading: nothing can be said of it.
        assert_eq!(by_name, [("sdb", 4, 25.0), ("sda", 1, 25.0)]);
    }
}
