//! Results that cannot be true. The worst published storage numbers come
//! from caches nobody noticed; fathom says when a figure is suspect, why, and
//! what to change. Warnings never alter a figure.

use crate::measure::drift::{self, DriftCheck};
use crate::measure::facts::TargetKind;
use crate::result::WorkloadResult;
use crate::result::warning::{Warning, WarningKind};

/// Random read IOPS one rotating disk cannot exceed: a 15k rpm disk manages
/// a few hundred; a few thousand means a cache (or many disks behind one
/// controller).
pub const ROTATIONAL_MAX_RANDOM_IOPS: f64 = 3000.0;
/// A rotating disk's median random read cannot beat its seek and rotation.
pub const ROTATIONAL_MIN_P50_NS: u64 = 500_000;
/// No storage device answers a read in under 2 µs; memory does.
pub const DEVICE_MIN_P50_NS: u64 = 2_000;

/// What the checks need beyond the result.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// MemAvailable when the workload started.
    pub available_memory: Option<u64>,
    /// Per target: the file has holes (never-written regions).
    pub sparse: Vec<bool>,
}

pub fn available_memory() -> Option<u64> {
    let info = crate::gate::read::host_text("/proc/meminfo")?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// File systems whose files live in memory.
pub fn is_memory(filesystem: &str) -> bool {
    matches!(filesystem, "tmpfs" | "devtmpfs" | "ramfs")
}

/// True when the file's allocated blocks cover less than its length.
pub fn is_sparse(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.is_file() && meta.blocks() * 512 < meta.len().saturating_sub(64 << 10)
}

/// Lasting changes of the workload's per-second IOPS (reads and writes
/// together) and p99 (the higher of the two, judged on twice the band:
/// latency per second is noisier).
pub fn drift(result: &WorkloadResult, check: DriftCheck) -> Vec<Warning> {
    use crate::util::units::{latency, thousands};
    let seconds: Vec<(f64, u64)> = result
        .total
        .seconds()
        .into_iter()
        .filter(|&(_, dur_s, _, _)| dur_s >= 0.99)
        .map(|(_, _, iops, p99)| (iops, p99))
        .collect();
    let window = check.window_s as usize;
    let name = &result.spec.name;
    let iops: Vec<f64> = seconds.iter().map(|s| s.0).collect();
    let p99: Vec<f64> = seconds.iter().map(|s| s.1 as f64).collect();
    let mut out = Vec::new();
    for f in drift::find(&iops, check.band_pct, window) {
        // A target that finished its pass early leaves the others alone:
        // the total drops with no change in any device.
        let finished = (f.after < f.before)
            .then(|| finished_target(result, f.at_s))
            .flatten();
        if let Some(t) = finished {
            out.push(Warning {
                kind: WarningKind::IopsDrift,
                target: name.clone(),
                figure: f.change_pct(),
                at_s: Some(f.at_s),
                message: format!(
                    "{name}: IOPS fell{} at {} s of measuring (from {} to {} a second) because target {} finished then ({:.1} s) and the others went on: not a change of the device; give the targets sizes they finish together with, or --runtime",
                    f.change_pct().map_or(String::new(), |pct| format!(" {:.0}%", pct.abs())),
                    f.at_s,
                    thousands(f.before.round() as u64),
                    thousands(f.after.round() as u64),
                    t.name,
                    t.runtime_s
                ),
            });
            continue;
        }
        let heat = warming(result, f.at_s, window as f64)
            .map(|(disk, from, to)| {
                format!(", while {disk} warmed from {from:.0} to {to:.0} °C (thermal throttling?)")
            })
            .unwrap_or_default();
        out.push(Warning {
            kind: WarningKind::IopsDrift,
            target: name.clone(),
            figure: f.change_pct(),
            at_s: Some(f.at_s),
            message: format!(
                "{name}: IOPS {}{} at {} s of measuring (from {} to {} a second) and stayed there {} s{heat}: the device changed during the run (a write cache filling up, thermal throttling, another load)",
                if f.after < f.before { "fell" } else { "rose" },
                f.change_pct().map_or(String::new(), |pct| format!(" {:.0}%", pct.abs())),
                f.at_s,
                thousands(f.before.round() as u64),
                thousands(f.after.round() as u64),
                f.for_s
            ),
        });
    }
    // The null engine's latency is fathom's own, not a device's.
    let p99_findings = if !result.spec.engine.caps().does_io {
        Vec::new()
    } else {
        drift::find(&p99, 2.0 * check.band_pct, window)
    };
    for f in p99_findings {
        let cause = match finished_target(result, f.at_s) {
            Some(t) => format!(
                " as target {} finished ({:.1} s) and the others went on: not a change of the device",
                t.name, t.runtime_s
            ),
            None => ": the device changed during the run".into(),
        };
        out.push(Warning {
            kind: WarningKind::LatencyDrift,
            target: name.clone(),
            figure: f.change_pct(),
            at_s: Some(f.at_s),
            message: format!(
                "{name}: p99 latency {} from {} to {} at {} s of measuring and stayed there {} s{cause}",
                if f.after > f.before { "rose" } else { "fell" },
                latency(f.before),
                latency(f.after),
                f.at_s,
                f.for_s
            ),
        });
    }
    out
}

/// A target that finished its pass within a second of `at_s` while the
/// workload went on: what a step of the totals then is.
fn finished_target(result: &WorkloadResult, at_s: f64) -> Option<&crate::result::TargetResult> {
    result
        .targets
        .iter()
        .find(|t| (t.runtime_s - at_s).abs() <= 1.0 && t.runtime_s < result.runtime_s - 1.0)
}

/// A disk that was at least `WARMING_C` warmer over the `window` seconds
/// after `at_s` than before it: (disk, before, after), in °C.
fn warming(result: &WorkloadResult, at_s: f64, window: f64) -> Option<(String, f64, f64)> {
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let mut disks: Vec<&str> = result.temperature.iter().map(|t| t.disk.as_str()).collect();
    disks.dedup();
    disks.into_iter().find_map(|disk| {
        let of = |lo: f64, hi: f64| {
            result
                .temperature
                .iter()
                .filter(|t| t.disk == disk && t.t_s > lo && t.t_s <= hi)
                .map(|t| t.celsius)
                .collect::<Vec<_>>()
        };
        let before = mean(of(f64::NEG_INFINITY, at_s))?;
        let after = mean(of(at_s, at_s + window))?;
        (after - before >= WARMING_C).then(|| (disk.to_string(), before, after))
    })
}

/// Another load shared a disk: with direct I/O (nothing cached, nothing
/// written back later), a disk that moved more than half again the bytes
/// fathom issued to it in a direction, and 16 MiB more (a file system's
/// own metadata and journal), served someone else too. `results` are the
/// workloads that ran together, `disks` their disks' counters.
pub fn shared_device(
    results: &[&WorkloadResult],
    disks: &[crate::result::DiskUsage],
) -> Vec<Warning> {
    const SLACK: u64 = 16 << 20;
    if results
        .iter()
        .any(|r| !r.spec.direct || !r.spec.engine.caps().does_io)
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    for disk in disks {
        let on_disk = results
            .iter()
            .flat_map(|r| &r.targets)
            .filter(|t| t.facts.device.as_ref().is_some_and(|d| d.name == disk.name));
        let (mut read, mut written) = (0u64, 0u64);
        for t in on_disk {
            read += t.io.read.bytes;
            written += t.io.write.bytes;
        }
        // Trims make a file system rewrite its extents and journal, and a
        // device may count discards as writes: what it wrote says nothing
        // of another load then.
        let trims = results.iter().any(|r| r.spec.rw.trims());
        for (what, device, ours) in [
            ("read", disk.read_bytes, read),
            ("wrote", disk.write_bytes, written),
        ] {
            if what == "wrote" && trims {
                continue;
            }
            if device > ours + ours / 2 + SLACK {
                out.push(Warning {
                    kind: WarningKind::SharedDevice,
                    target: disk.name.clone(),
                    figure: Some(device as f64),
                    at_s: None,
                    message: format!(
                        "{}: the disk {what} {} while fathom issued {} to it: another load shared the device, and the figures are not the device's alone; run when it is otherwise idle",
                        disk.name,
                        crate::util::units::format_bytes(device),
                        crate::util::units::format_bytes(ours)
                    ),
                });
            }
        }
    }
    out
}

/// Direct writes the drive under them did not count: with O_DIRECT nothing
/// waits in the page cache, so a drive that counted under half of what
/// fathom wrote to it (past a few of its data units) was not where the
/// writes went.
fn unseen_writes(result: &WorkloadResult) -> Vec<Warning> {
    if !result.spec.direct {
        return Vec::new();
    }
    let mut out = Vec::new();
    for device in &result.devices {
        let Some(counted) = device.host_written_bytes else {
            continue;
        };
        let ours: u64 = result
            .targets
            .iter()
            .filter(|t| {
                t.facts
                    .device
                    .as_ref()
                    .is_some_and(|d| d.name == device.name)
            })
            .map(|t| t.io.write.bytes)
            .sum();
        // Past a few steps of the drive's count, half is far beyond its
        // rounding.
        let step = device.host_count_step_bytes.unwrap_or(1);
        if ours > 8 * step && counted < ours / 2 {
            out.push(Warning {
                kind: WarningKind::UnseenWrites,
                target: device.name.clone(),
                figure: Some(counted as f64),
                at_s: None,
                message: format!(
                    "{}: the drive counted {} written while fathom wrote {} to it with O_DIRECT: the writes went to a cache in between, or to another device",
                    device.name,
                    crate::util::units::format_bytes(counted),
                    crate::util::units::format_bytes(ours)
                ),
            });
        }
    }
    out
}

/// A rise of temperature this large beside a drop of IOPS is named.
pub const WARMING_C: f64 = 5.0;

/// The share of their running time the workers may wait for a CPU before a
/// run is said to be held back by its host. An idle 2-CPU VM with no more
/// workers than CPUs shows under 2%.
pub const BUSY_HOST_SHARE: f64 = 0.10;

/// The host held the run back: its workers waited for a CPU, or the
/// hypervisor gave the CPU to other guests, a good share of the time.
fn busy_host(result: &WorkloadResult) -> Option<Warning> {
    let waited = result.cpu.waited_for_cpu_share.unwrap_or(0.0);
    let stolen = result.cpu.host_steal_share.unwrap_or(0.0);
    if waited < BUSY_HOST_SHARE && stolen < BUSY_HOST_SHARE {
        return None;
    }
    let mut why = Vec::new();
    if waited >= BUSY_HOST_SHARE {
        why.push(format!(
            "the workers were ready to run but waited for a CPU {:.0}% of the time they ran (other processes, or more workers than CPUs)",
            waited * 100.0
        ));
    }
    if stolen >= BUSY_HOST_SHARE {
        why.push(format!(
            "the hypervisor gave {:.0}% of this VM's CPU time to other guests (steal)",
            stolen * 100.0
        ));
    }
    Some(Warning {
        kind: WarningKind::BusyHost,
        target: result.spec.target_label(0).to_string(),
        figure: Some(waited.max(stolen)),
        at_s: None,
        message: format!(
            "{}: the host held this run back, so the figures are partly the host's, not the device's",
            why.join("; and ")
        ),
    })
}

pub fn check(result: &WorkloadResult, ctx: &Context) -> Vec<Warning> {
    use crate::util::units::format_bytes;
    use crate::util::units::{latency, thousands};
    let spec = &result.spec;
    let mut out = drift(result, spec.drift);
    if let Some(data) = result.data.as_ref().filter(|d| d.reducible())
        && spec.content.incompressible()
    {
        out.push(Warning {
            kind: WarningKind::ReducibleData,
            target: spec.target_label(0).to_string(),
            figure: Some(data.compress_zstd.max(data.dedupe)),
            at_s: None,
            message: format!(
                "the data written reduces ({}) though fresh random data was asked for: a device that compresses or deduplicates stored less than was written",
                spec.content.describe(data)
            ),
        });
    }
    out.extend(busy_host(result));
    if !spec.engine.caps().does_io {
        return out;
    }
    out.extend(unseen_writes(result));
    for t in &result.targets {
        if let Some(fs) = t.facts.filesystem.as_deref().filter(|fs| is_memory(fs)) {
            out.push(Warning {
                kind: WarningKind::MemoryTarget,
                target: t.name.clone(),
                figure: None,
                at_s: None,
                message: format!(
                    "{}: the file is on {fs}: this is memory, not a disk, and the figures are memory's; put the target on the disk you mean to measure",
                    t.name
                ),
            });
        }
    }
    for (i, t) in result.targets.iter().enumerate() {
        let name = &t.name;
        let warn = |kind, figure: Option<f64>, message: String| Warning {
            kind,
            target: name.clone(),
            figure,
            message,
            at_s: None,
        };
        let reads = t.io.read.ios > 0;
        let file = t.facts.kind == TargetKind::File;
        // Caching and holes are about data: an engine that moves none
        // (falloc, ftruncate) meets neither.
        let moves_data = spec.engine.caps().moves_data;
        if !spec.direct
            && file
            && moves_data
            && let Some(mem) = ctx.available_memory.filter(|&m| t.size < m)
        {
            if reads {
                out.push(warn(
                    WarningKind::PageCacheReads,
                    Some(t.size as f64),
                    format!(
                    "{name}: buffered reads of a {} region with {} of memory free: likely served from the page cache, not the disk; use --direct or a region larger than memory",
                    format_bytes(t.size),
                    format_bytes(mem)
                ),
                ));
            }
            if t.io.write.ios > 0 && spec.flush_every() == 0 {
                out.push(warn(
                    WarningKind::PageCacheWrites,
                    Some(mem as f64),
                    format!(
                    "{name}: buffered writes without --fsync fit in the {} of free memory: the page cache absorbed them; use --direct or --fsync N",
                    format_bytes(mem)
                ),
                ));
            }
        }
        if reads && moves_data && ctx.sparse.get(i).copied().unwrap_or(false) {
            out.push(warn(
                    WarningKind::SparseFile,
                    None,
                    format!(
                "{name}: the file is sparse: reads of never-written regions are answered by the file system without touching the disk; let fathom lay out a new file, or write this one first"
            ),
                ));
        }
        let read = &t.io.read;
        if !reads || !spec.direct {
            continue;
        }
        let rotational = t
            .facts
            .device
            .as_ref()
            .and_then(|d| d.rotational)
            .unwrap_or(false);
        if rotational && spec.rw.is_random() {
            if read.iops > ROTATIONAL_MAX_RANDOM_IOPS {
                out.push(warn(
                    WarningKind::RotationalIops,
                    Some(read.iops),
                    format!(
                    "{name}: {} random read IOPS from a device that reports itself rotational; one rotating disk does a few hundred: a cache is serving reads (RAID controller, the host under a VM), or the device is not what it says; use a region larger than any cache",
                    thousands(read.iops.round() as u64)
                ),
                ));
            } else if read.lat_ns.p50 < ROTATIONAL_MIN_P50_NS {
                out.push(warn(
                    WarningKind::RotationalLatency,
                    Some(read.lat_ns.p50 as f64),
                    format!(
                    "{name}: median random read of {} on a rotational device, below what seek and rotation allow: a cache answered; use a larger region",
                    latency(read.lat_ns.p50 as f64)
                ),
                ));
            }
        }
        if read.lat_ns.p50 < DEVICE_MIN_P50_NS {
            out.push(warn(
                    WarningKind::BelowDeviceFloor,
                    Some(read.lat_ns.p50 as f64),
                    format!(
                "{name}: median read latency {} is below any storage device's floor: memory answered these reads (a cache, or a sparse or thin target)",
                latency(read.lat_ns.p50 as f64)
            ),
                ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{DirectionResult, TemperatureSample};

    /// A workload whose reads ran at `iops[i]` in second i, with the disk
    /// at `celsius[i]` at its end.
    fn run(iops: &[f64], celsius: &[f64]) -> WorkloadResult {
        let read = DirectionResult {
            intervals: crate::result::test_support::seconds_at(iops),
            ..Default::default()
        };
        let mut w = crate::result::test_support::empty_workload();
        w.spec.drift = DriftCheck {
            band_pct: 25.0,
            window_s: 3,
        };
        w.total.read = read;
        w.runtime_s = iops.len() as f64;
        w.temperature = celsius
            .iter()
            .enumerate()
            .map(|(i, &c)| TemperatureSample {
                disk: "nvme0n1".into(),
                t_s: i as f64 + 1.0,
                celsius: c,
            })
            .collect();
        w
    }

    #[test]
    fn a_drop_is_measured_level_to_level_and_a_target_that_finished_is_named() {
        // 2,000, one transition second of 1,240, then 1,000: a 50% drop.
        let mut iops = vec![2_000.0; 10];
        iops.push(1_240.0);
        iops.extend([1_000.0; 10]);
        let r = run(&iops, &[]);
        let w = drift(&r, r.spec.drift);
        assert!(
            w[0].message.contains("IOPS fell 50% at 10 s"),
            "{}",
            w[0].message
        );
        assert!(
            w[0].message.contains("from 2,000 to 1,000"),
            "{}",
            w[0].message
        );
        // The same drop because one of two targets finished its pass.
        let mut r = run(&iops, &[]);
        let mut early = crate::result::test_support::empty_target("small");
        early.runtime_s = 10.2;
        let mut late = crate::result::test_support::empty_target("large");
        late.runtime_s = r.runtime_s;
        r.targets = vec![early, late];
        let w = drift(&r, r.spec.drift);
        assert!(
            w[0].message.contains("because target small finished then")
                && !w[0].message.contains("the device changed"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn workers_that_waited_for_a_cpu_make_a_busy_host_warning() {
        let ctx = Context {
            available_memory: None,
            sparse: Vec::new(),
        };
        let mut r = crate::result::test_support::empty_workload();
        r.cpu.waited_for_cpu_share = Some(0.05);
        assert!(
            check(&r, &ctx)
                .iter()
                .all(|w| w.kind != WarningKind::BusyHost)
        );
        r.cpu.waited_for_cpu_share = Some(0.4);
        let w = check(&r, &ctx);
        let busy = w.iter().find(|w| w.kind == WarningKind::BusyHost).unwrap();
        assert!(busy.message.contains("40% of the time"), "{}", busy.message);
        assert_eq!(busy.kind.format(busy.figure.unwrap()), "40%");
        r.cpu.waited_for_cpu_share = Some(0.0);
        r.cpu.host_steal_share = Some(0.25);
        let w = check(&r, &ctx);
        let busy = w.iter().find(|w| w.kind == WarningKind::BusyHost).unwrap();
        assert!(
            busy.message.contains("25% of this VM's CPU time"),
            "{}",
            busy.message
        );
    }

    /// A disk's facts with nothing known but its name.
    fn disk_named(name: &str) -> crate::measure::facts::DeviceFacts {
        crate::measure::facts::DeviceFacts {
            name: name.into(),
            zoned: None,
            model: None,
            rotational: None,
            logical_block_size: 512,
            physical_block_size: None,
            size_bytes: None,
            temperature_sensor: None,
            polls: None,
            discards: None,
            nr_requests: None,
            hw_queues: None,
            backing: None,
        }
    }

    #[test]
    fn a_disk_that_did_more_than_fathom_asked_was_shared() {
        let mut r = crate::result::test_support::empty_workload();
        r.spec.direct = true;
        let mut t = crate::result::test_support::empty_target("/data/f");
        t.facts.device = Some(disk_named("vda"));
        t.io.read.bytes = 100 << 20;
        r.targets = vec![t];
        let disk = |read_bytes| crate::result::DiskUsage {
            name: "vda".into(),
            read_bytes,
            ..Default::default()
        };
        assert!(
            shared_device(&[&r], &[disk(110 << 20)]).is_empty(),
            "its own I/O"
        );
        let w = shared_device(&[&r], &[disk(500 << 20)]);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind, WarningKind::SharedDevice);
        assert!(
            w[0].message
                .contains("vda: the disk read 500 MiB while fathom issued 100 MiB"),
            "{}",
            w[0].message
        );
        // Buffered I/O reads ahead and writes back: no judgement.
        r.spec.direct = false;
        assert!(shared_device(&[&r], &[disk(500 << 20)]).is_empty());
    }

    #[test]
    fn direct_writes_the_drive_did_not_count_are_named() {
        let mut r = crate::result::test_support::empty_workload();
        r.spec.direct = true;
        let mut t = crate::result::test_support::empty_target("/dev/nvme0n1");
        t.facts.device = Some(disk_named("nvme0n1"));
        t.io.write.bytes = 96 << 20;
        r.targets = vec![t];
        let counted = |bytes| crate::measure::drive::DeviceReport {
            name: "nvme0n1".into(),
            host_read_bytes: Some(0),
            host_written_bytes: bytes,
            host_count_step_bytes: Some(512_000),
            ..Default::default()
        };
        r.devices = vec![counted(Some(100_864_000))];
        assert!(unseen_writes(&r).is_empty(), "the drive saw them");
        r.devices = vec![counted(Some(512_000))];
        let w = unseen_writes(&r);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind, WarningKind::UnseenWrites);
        assert!(
            w[0].message
                .contains("counted 500 KiB written while fathom wrote 96 MiB"),
            "{}",
            w[0].message
        );
        r.devices = vec![counted(None)];
        assert!(unseen_writes(&r).is_empty(), "no count, no judgement");
    }

    #[test]
    fn a_drop_as_the_disk_warms_says_so() {
        let mut iops = vec![10_000.0; 10];
        iops.extend([4_000.0; 10]);
        let mut celsius = vec![40.0; 10];
        celsius.extend([62.0; 10]);
        let w = drift(&run(&iops, &celsius), run(&iops, &celsius).spec.drift);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].kind, w[0].at_s), (WarningKind::IopsDrift, Some(10.0)));
        assert!(
            w[0].message.contains("IOPS fell 60% at 10 s")
                && w[0].message.contains("nvme0n1 warmed from 40 to 62 °C"),
            "{}",
            w[0].message
        );
        // The same drop at a steady temperature names no heat.
        let cool = run(&iops, &[40.0; 20]);
        let w = drift(&cool, cool.spec.drift);
        assert!(!w[0].message.contains("warmed"), "{}", w[0].message);
        // A steady run has nothing to say.
        let steady = run(&[10_000.0; 20], &[]);
        assert!(drift(&steady, steady.spec.drift).is_empty());
    }

    #[test]
    fn a_device_that_stops_and_comes_back_is_two_findings() {
        let mut iops = vec![5_000.0; 10];
        iops.extend([0.0; 10]);
        iops.extend([5_000.0; 10]);
        let w = run(&iops, &[]);
        let found: Vec<Warning> = drift(&w, w.spec.drift)
            .into_iter()
            .filter(|x| x.kind == WarningKind::IopsDrift)
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].at_s, found[0].figure), (Some(10.0), Some(-100.0)));
        assert!(
            found[0].message.contains("IOPS fell 100% at 10 s"),
            "{}",
            found[0].message
        );
        assert_eq!((found[1].at_s, found[1].figure), (Some(20.0), None));
        assert!(
            found[1]
                .message
                .contains("IOPS rose at 20 s of measuring (from 0 to 5,000 a second)"),
            "{}",
            found[1].message
        );
    }
}
