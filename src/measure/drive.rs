//! What the drives under the targets counted during a run, in their own
//! words: read before the workers start and after they stop, so that the
//! bytes the drive says the host read and wrote stand beside fathom's.
//! A device that cannot say (virtio, loop, a drive fathom cannot ask) is
//! listed with the reason, never with zeros.

use super::nvme::{self, DATA_UNIT_BYTES, Health, Identity};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One drive's account of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceReport {
    /// Kernel name of the disk, e.g. "nvme0n1" (as `disks` names it).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Health>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Health>,
    /// What the drive counted the host reading and writing meanwhile, in
    /// its data units of 512,000 bytes (each count rounded up by the
    /// drive, so within one unit of the truth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_written_bytes: Option<u64>,
    /// Why the drive's own counts are absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// A drive's first reading: what it is and what it had counted, or why
/// it could not say.
type Started = Result<(Identity, Health), String>;

/// The drives of a run, read once before it.
pub struct DriveWatch {
    drives: Vec<(String, Started)>,
}

/// Why the drive `name` cannot be asked, or the node to ask it through.
fn node(name: &str) -> Result<PathBuf, String> {
    if !name.starts_with("nvme") {
        return Err(format!(
            "{name} is not an NVMe drive: fathom reads a drive's own counters from NVMe drives"
        ));
    }
    Ok(PathBuf::from("/dev").join(name))
}

impl DriveWatch {
    /// Reads what each of the disks `names` is and has counted so far.
    pub fn start(names: &[String]) -> DriveWatch {
        let drives = names
            .iter()
            .map(|name| {
                let read = node(name).and_then(|node| {
                    let identity = nvme::identity(&node)?;
                    Ok((identity, nvme::health(&node)?))
                });
                (name.clone(), read)
            })
            .collect();
        DriveWatch { drives }
    }

    /// Each drive's account: what it counted since [`DriveWatch::start`].
    pub fn finish(self) -> Vec<DeviceReport> {
        self.drives
            .into_iter()
            .map(|(name, started)| {
                let after = started
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(|_| nvme::health(&node(&name)?));
                report(name, started, after)
            })
            .collect()
    }
}

fn report(name: String, started: Started, after: Result<Health, String>) -> DeviceReport {
    let unavailable = |why: String| DeviceReport {
        name: name.clone(),
        identity: None,
        before: None,
        after: None,
        host_read_bytes: None,
        host_written_bytes: None,
        unavailable: Some(why),
    };
    let (identity, before) = match started {
        Ok(read) => read,
        Err(why) => return unavailable(why),
    };
    let after = match after {
        Ok(h) => h,
        Err(why) => return unavailable(format!("read before the run, not after: {why}")),
    };
    let bytes = |then: u128, now: u128| {
        u64::try_from(
            now.saturating_sub(then)
                .saturating_mul(u128::from(DATA_UNIT_BYTES)),
        )
        .unwrap_or(u64::MAX)
    };
    DeviceReport {
        host_read_bytes: Some(bytes(before.data_units_read, after.data_units_read)),
        host_written_bytes: Some(bytes(before.data_units_written, after.data_units_written)),
        name,
        identity: Some(identity),
        before: Some(before),
        after: Some(after),
        unavailable: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_that_is_not_nvme_says_why_and_counts_nothing() {
        let reports = DriveWatch::start(&["vda".into(), "loop3".into()]).finish();
        assert_eq!(reports.len(), 2);
        for r in &reports {
            assert!(
                r.unavailable
                    .as_deref()
                    .unwrap()
                    .contains("not an NVMe drive")
            );
            assert!(r.host_written_bytes.is_none() && r.before.is_none());
        }
    }

    #[test]
    fn the_host_bytes_are_the_data_units_between_the_readings() {
        let health = |written: u128| Health {
            temperature_c: 40.0,
            percentage_used: 0,
            available_spare_pct: 100,
            critical_warning: 0,
            data_units_read: 10,
            data_units_written: written,
            media_errors: 0,
            power_on_hours: 1,
        };
        let identity = Identity {
            model: "m".into(),
            serial: "s".into(),
            firmware: "f".into(),
            capacity_bytes: 1 << 30,
            lba_bytes: 512,
            lba_metadata_bytes: 0,
        };
        let r = report(
            "nvme0n1".into(),
            Ok((identity, health(100))),
            Ok(health(2_086)),
        );
        assert_eq!(r.host_written_bytes, Some(1_986 * 512_000));
        assert_eq!(r.host_read_bytes, Some(0));
        let gone = report(
            "nvme0n1".into(),
            Ok((r.identity.clone().unwrap(), health(1))),
            Err("gone".into()),
        );
        assert!(gone.unavailable.unwrap().contains("not after: gone"));
    }
}
