//! What the drives under the targets counted during a run, in their own
//! words: read before the workers start and after they stop, so that the
//! bytes the drive says the host read and wrote stand beside fathom's,
//! with what the drive wrote to its media for them (write amplification)
//! and how long it would last at that rate.
//!
//! NVMe drives are asked directly ([`nvme`]); SATA and SAS drives through
//! `smartctl -j` where it is installed ([`smartctl`]). A device that cannot
//! say (virtio, loop, a drive fathom cannot ask) is listed with the reason,
//! never with zeros.

pub mod nvme;
pub mod smartctl;
pub mod wear;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

/// How fathom asked the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// NVMe admin commands through the kernel's passthrough.
    Nvme,
    /// `smartctl -j` (SATA, SAS).
    Smartctl,
}

/// What the drive is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub model: String,
    pub serial: String,
    pub firmware: String,
    /// The namespace's (or disk's) size.
    pub capacity_bytes: u64,
    /// The logical block size in use, and the metadata bytes each block
    /// carries.
    pub lba_bytes: u64,
    #[serde(default)]
    pub lba_metadata_bytes: u16,
    /// The NVMe namespace id: a controller's namespaces share its serial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<u32>,
}

impl Identity {
    /// The drive's name for the history: the same drive whatever the kernel
    /// calls it this boot (nvme0n1 today, nvme1n1 after a new drive).
    pub fn history_key(&self) -> Option<String> {
        let serial = self.serial.trim();
        if serial.is_empty() {
            return None;
        }
        Some(match self.namespace {
            Some(ns) => format!("drive {} serial {serial} namespace {ns}", self.model),
            None => format!("drive {} serial {serial}", self.model),
        })
    }
}

/// A lifetime count in the drive's own unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    pub units: u128,
    /// What one unit stands for; absent where the drive keeps it to itself
    /// (program pages of a size it does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_bytes: Option<u64>,
}

impl Count {
    pub fn bytes(units: u128, unit_bytes: u64) -> Count {
        Count {
            units,
            unit_bytes: Some(unit_bytes),
        }
    }

    /// The count in bytes, where the unit is known.
    pub fn in_bytes(&self) -> Option<u128> {
        self.unit_bytes
            .map(|u| self.units.saturating_mul(u128::from(u)))
    }
}

/// What the drive had counted at one moment; each figure absent where the
/// drive does not keep it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Health {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<f64>,
    /// The share of its rated endurance the drive says it has used (may
    /// pass 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage_used: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_spare_pct: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_warning: Option<u8>,
    /// What the host read and wrote, in the drive's count since it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_read: Option<Count>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_written: Option<Count>,
    /// What the drive wrote to its media, for the host and for itself
    /// (garbage collection, wear levelling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_written: Option<Count>,
    /// The host's part of `media_written`, where the drive counts both in a
    /// unit of its own (program pages) rather than the host's bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_programmed: Option<Count>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_errors: Option<u128>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_on_hours: Option<u128>,
}

/// What a drive said of itself at one reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub source: Source,
    pub identity: Identity,
    pub health: Health,
}

/// One drive's account of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceReport {
    /// Kernel name of the disk, e.g. "nvme0n1" (as `disks` names it).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Health>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Health>,
    /// What the drive counted the host reading and writing meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_written_bytes: Option<u64>,
    /// The step of those counts: each is within one step of the truth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_count_step_bytes: Option<u64>,
    /// What the drive wrote to its media meanwhile, where it says in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_written_bytes: Option<u64>,
    /// Media writes over host writes during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_amplification: Option<f64>,
    /// Days until the drive has used all its rated endurance, were it
    /// written at this run's rate from now on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endurance: Option<wear::Endurance>,
    /// Why a figure above is absent, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_counted: Vec<String>,
    /// Why the drive's own counts are absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// The drives of a run, read once before it.
pub struct DriveWatch {
    drives: Vec<(String, Result<Reading, String>)>,
    started: Instant,
}

/// Devices that stand for no drive of their own.
const NOT_DRIVES: [(&str, &str); 6] = [
    ("loop", "a loop device"),
    ("ram", "a RAM disk"),
    ("zram", "a compressed RAM disk"),
    (
        "dm-",
        "a device-mapper device (its drives are not read one by one)",
    ),
    (
        "md",
        "a software RAID device (its drives are not read one by one)",
    ),
    ("nbd", "a network block device"),
];

/// What the disk `name` says of itself now.
fn read(name: &str) -> Result<Reading, String> {
    if let Some((_, what)) = NOT_DRIVES.iter().find(|(p, _)| name.starts_with(p)) {
        return Err(format!(
            "{name} is {what}: it has no drive counters of its own"
        ));
    }
    let node = PathBuf::from("/dev").join(name);
    if name.starts_with("nvme") {
        nvme::read(&node)
    } else {
        smartctl::read(&node)
    }
}

/// The history's name for the drive at `device` (`/dev/nvme0n1`) as it is
/// now, if it is a whole drive: by its serial, else (a loop device) by
/// what it is over.
pub fn history_key_of_device(device: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let name = device.strip_prefix("/dev/")?;
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(device).ok()?;
    // Only a block device is asked: opening a tape's node rewinds it, a
    // watchdog's arms it, a FIFO's waits for a writer.
    if !meta.file_type().is_block_device() {
        return None;
    }
    let rdev = meta.rdev();
    if name.contains('/')
        || crate::measure::facts::is_partition(libc::major(rdev), libc::minor(rdev))
    {
        return None;
    }
    read(name)
        .ok()
        .and_then(|d| d.identity.history_key())
        .or_else(|| {
            // A drive without a serial is kept by its path, a loop device's
            // with what it is over now (as `target_key` keeps it).
            let facts = crate::measure::facts::device_facts(libc::major(rdev), libc::minor(rdev))?;
            Some(crate::measure::facts::device_key(
                device,
                facts.backing.as_deref(),
            ))
        })
}

impl DriveWatch {
    /// Reads what each of the disks `names` is and has counted so far.
    pub fn start(names: &[String]) -> DriveWatch {
        let drives = names
            .iter()
            .map(|name| (name.clone(), read(name)))
            .collect();
        DriveWatch {
            drives,
            started: Instant::now(),
        }
    }

    /// Each drive's account: what it counted since [`DriveWatch::start`].
    pub fn finish(self) -> Vec<DeviceReport> {
        let elapsed_s = self.started.elapsed().as_secs_f64();
        self.drives
            .into_iter()
            .map(|(name, started)| {
                let after = match &started {
                    Ok(_) => read(&name),
                    Err(why) => Err(why.clone()),
                };
                report(name, started, after, elapsed_s)
            })
            .collect()
    }
}

fn report(
    name: String,
    started: Result<Reading, String>,
    after: Result<Reading, String>,
    elapsed_s: f64,
) -> DeviceReport {
    let before = match started {
        Ok(read) => read,
        Err(why) => {
            return DeviceReport {
                name,
                unavailable: Some(why),
                ..Default::default()
            };
        }
    };
    let after = match after {
        Ok(read) => read.health,
        Err(why) => {
            return DeviceReport {
                name,
                unavailable: Some(format!("read before the run, not after: {why}")),
                ..Default::default()
            };
        }
    };
    let (b, a) = (&before.health, &after);
    let delta = |then: Option<Count>, now: Option<Count>| {
        let (then, now) = (then?.in_bytes()?, now?.in_bytes()?);
        Some(u64::try_from(now.saturating_sub(then)).unwrap_or(u64::MAX))
    };
    let mut not_counted = Vec::new();
    let write_amplification = wear::amplification(b, a)
        .map_err(|why| not_counted.push(format!("write amplification: {why}")))
        .ok();
    let endurance = wear::endurance(b, a, elapsed_s)
        .map_err(|why| not_counted.push(format!("endurance: {why}")))
        .ok();
    DeviceReport {
        host_read_bytes: delta(b.host_read, a.host_read),
        host_written_bytes: delta(b.host_written, a.host_written),
        host_count_step_bytes: a.host_written.and_then(|c| c.unit_bytes),
        media_written_bytes: delta(b.media_written, a.media_written),
        write_amplification,
        endurance,
        not_counted,
        name,
        source: Some(before.source),
        identity: Some(before.identity),
        before: Some(before.health),
        after: Some(after),
        unavailable: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_that_is_no_drive_says_why_and_counts_nothing() {
        let reports = DriveWatch::start(&["loop3".into(), "dm-0".into()]).finish();
        assert_eq!(reports.len(), 2);
        assert!(
            reports[0]
                .unavailable
                .as_deref()
                .unwrap()
                .contains("loop device")
        );
        assert!(
            reports[1]
                .unavailable
                .as_deref()
                .unwrap()
                .contains("device-mapper")
        );
        for r in &reports {
            assert!(r.host_written_bytes.is_none() && r.before.is_none());
        }
    }

    fn identity() -> Identity {
        Identity {
            model: "m".into(),
            serial: "s".into(),
            firmware: "f".into(),
            capacity_bytes: 1 << 30,
            lba_bytes: 512,
            lba_metadata_bytes: 0,
            namespace: Some(1),
        }
    }

    fn health(written_units: u128) -> Health {
        Health {
            temperature_c: Some(40.0),
            percentage_used: Some(0),
            host_read: Some(Count::bytes(10, nvme::DATA_UNIT_BYTES)),
            host_written: Some(Count::bytes(written_units, nvme::DATA_UNIT_BYTES)),
            ..Default::default()
        }
    }

    fn reading(h: Health) -> Result<Reading, String> {
        Ok(Reading {
            source: Source::Nvme,
            identity: identity(),
            health: h,
        })
    }

    #[test]
    fn the_host_bytes_are_the_units_between_the_readings() {
        let r = report(
            "nvme0n1".into(),
            reading(health(100)),
            reading(health(2_086)),
            10.0,
        );
        assert_eq!(r.host_written_bytes, Some(1_986 * 512_000));
        assert_eq!(r.host_read_bytes, Some(0));
        assert_eq!(r.host_count_step_bytes, Some(512_000));
        assert!(r.write_amplification.is_none());
        assert!(
            r.not_counted
                .iter()
                .any(|n| n.starts_with("write amplification: the drive does not count")),
            "{:?}",
            r.not_counted
        );
        let gone = report(
            "nvme0n1".into(),
            reading(health(1)),
            Err("gone".into()),
            1.0,
        );
        assert!(gone.unavailable.unwrap().contains("not after: gone"));
    }

    #[test]
    fn a_drive_is_kept_in_the_history_by_its_serial_and_namespace() {
        let mut id = identity();
        assert_eq!(id.history_key().unwrap(), "drive m serial s namespace 1");
        id.namespace = None;
        assert_eq!(id.history_key().unwrap(), "drive m serial s");
        id.serial = "  ".into();
        assert!(id.history_key().is_none());
    }
}
