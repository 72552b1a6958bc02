//! SATA and SAS drives, asked through `smartctl -j` (smartmontools), which
//! knows each vendor's attributes and their units by name: fathom reads
//! the standard counts where a drive keeps them (ATA Device Statistics,
//! the SCSI error counter log) and a short list of named attributes where
//! it does not.

use super::{Count, Health, Identity, Reading, Source};
use serde_json::Value;
use std::path::Path;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The host's writes and reads under smartctl's attribute names, each with
/// the bytes of its unit; `None` is the drive's logical block.
const HOST_WRITES: [(&str, Option<u64>); 6] = [
    ("Total_LBAs_Written", None),
    ("Host_Writes_32MiB", Some(32 * MIB)),
    ("Host_Writes_MiB", Some(MIB)),
    ("Host_Writes_GiB", Some(GIB)),
    ("Total_Writes_GiB", Some(GIB)),
    ("Lifetime_Writes_GiB", Some(GIB)),
];
const HOST_READS: [(&str, Option<u64>); 5] = [
    ("Total_LBAs_Read", None),
    ("Host_Reads_32MiB", Some(32 * MIB)),
    ("Host_Reads_MiB", Some(MIB)),
    ("Host_Reads_GiB", Some(GIB)),
    ("Total_Reads_GiB", Some(GIB)),
];
/// What the drive wrote to its flash.
const MEDIA_WRITES: [(&str, u64); 4] = [
    ("NAND_Writes_1GiB", GIB),
    ("NAND_Writes_GiB", GIB),
    ("NAND_Writes_32MiB", 32 * MIB),
    ("Flash_Writes_GiB", GIB),
];
/// Micron's program pages: the host's (247) and the drive's own (248).
const HOST_PAGES: &str = "Host_Program_Page_Count";
const FTL_PAGES: &str = "FTL_Program_Page_Count";

/// What the drive behind `device` is and has counted so far.
pub fn read(device: &Path) -> Result<Reading, String> {
    use crate::gate::helper::{self, HelperError};
    let out = helper::run("smartctl", &["-j", "-a", "-l", "devstat"], device, SMARTCTL_BOUND)
        .map_err(|e| match e {
            HelperError::NotInstalled => "smartctl is not installed (smartmontools): fathom reads a SATA or SAS drive's own counts through it".to_string(),
            e => format!("smartctl {e}"),
        })?;
    parse(&out.stdout)
}

/// How long a drive's SMART query may take: a healthy drive answers in well
/// under a second, and a failing one may not answer at all.
const SMARTCTL_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

fn text(v: &Value) -> Option<String> {
    v.as_str()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// A reading from smartctl's JSON.
pub fn parse(json: &[u8]) -> Result<Reading, String> {
    let v: Value = serde_json::from_slice(json)
        .map_err(|e| format!("smartctl's output is not its JSON ({e})"))?;
    // Bits 0 and 1 of its exit status: the command line was refused, or
    // the device could not be opened or identified. The others speak of
    // the drive's health, and its counts are still there.
    let status = v["smartctl"]["exit_status"].as_u64().unwrap_or(0);
    if status & 0b11 != 0 {
        let said: Vec<String> = v["smartctl"]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| text(&m["string"]))
            .collect();
        return Err(match said.is_empty() {
            true => format!("smartctl could not read the device (exit status {status})"),
            false => format!("smartctl: {}", said.join("; ")),
        });
    }
    let block = v["logical_block_size"].as_u64().unwrap_or(512);
    let first = |keys: &[&str]| keys.iter().find_map(|k| text(&v[*k])).unwrap_or_default();
    let identity = Identity {
        model: first(&["model_name", "scsi_model_name", "product", "scsi_product"]),
        serial: first(&["serial_number"]),
        firmware: first(&["firmware_version", "revision", "scsi_revision"]),
        capacity_bytes: v["user_capacity"]["bytes"].as_u64().unwrap_or(0),
        lba_bytes: block,
        lba_metadata_bytes: 0,
        namespace: None,
    };
    let mut health = Health {
        temperature_c: v["temperature"]["current"].as_f64(),
        power_on_hours: v["power_on_time"]["hours"].as_u64().map(u128::from),
        ..Default::default()
    };
    match v["device"]["protocol"].as_str() {
        Some("ATA") => ata(&v, block, &mut health),
        Some("SCSI") => scsi(&v, &mut health),
        Some("NVMe") => nvme(&v, &mut health),
        _ => {}
    }
    Ok(Reading {
        source: Source::Smartctl,
        identity,
        health,
    })
}

/// ATA Device Statistics first (the standard's counts, in logical
/// sectors), then the attributes smartctl names.
fn ata(v: &Value, block: u64, health: &mut Health) {
    let statistic = |name: &str| {
        v["ata_device_statistics"]["pages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|p| p["table"].as_array().into_iter().flatten())
            .find(|e| e["name"].as_str() == Some(name))
            .and_then(|e| e["value"].as_u64())
    };
    let attribute = |name: &str| {
        v["ata_smart_attributes"]["table"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["name"].as_str() == Some(name))
            .and_then(|a| a["raw"]["value"].as_u64())
            .map(u128::from)
    };
    let named = |table: &[(&str, Option<u64>)]| {
        table.iter().find_map(|(name, unit)| {
            attribute(name).map(|units| Count::bytes(units, unit.unwrap_or(block)))
        })
    };
    let sectors = |name| statistic(name).map(|n| Count::bytes(u128::from(n), block));
    health.host_written = sectors("Logical Sectors Written").or_else(|| named(&HOST_WRITES));
    health.host_read = sectors("Logical Sectors Read").or_else(|| named(&HOST_READS));
    health.percentage_used =
        statistic("Percentage Used Endurance Indicator").and_then(|p| u16::try_from(p).ok());
    health.media_written = MEDIA_WRITES
        .iter()
        .find_map(|(name, unit)| attribute(name).map(|units| Count::bytes(units, *unit)));
    if let (None, Some(host), Some(ftl)) = (
        health.media_written,
        attribute(HOST_PAGES),
        attribute(FTL_PAGES),
    ) {
        let pages = |units| Count {
            units,
            unit_bytes: None,
        };
        health.media_written = Some(pages(host + ftl));
        health.host_programmed = Some(pages(host));
    }
}

/// The SCSI error counter log's gigabytes processed (three decimals: a
/// count in megabytes) and the endurance indicator.
fn scsi(v: &Value, health: &mut Health) {
    let megabytes = |direction: &str| {
        let gb: f64 = v["scsi_error_counter_log"][direction]["gigabytes_processed"]
            .as_str()?
            .trim()
            .parse()
            .ok()?;
        Some(Count::bytes((gb * 1_000.0).round() as u128, 1_000_000))
    };
    health.host_written = megabytes("write");
    health.host_read = megabytes("read");
    health.percentage_used = v["scsi_percentage_used_endurance_indicator"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok());
}

/// An NVMe drive smartctl reached where fathom's own commands do not (a
/// USB bridge): its SMART log as smartctl spells it.
fn nvme(v: &Value, health: &mut Health) {
    let log = &v["nvme_smart_health_information_log"];
    let units = |k: &str| {
        log[k]
            .as_u64()
            .map(|n| Count::bytes(u128::from(n), super::nvme::DATA_UNIT_BYTES))
    };
    health.host_written = units("data_units_written");
    health.host_read = units("data_units_read");
    health.percentage_used = log["percentage_used"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok());
    health.available_spare_pct = log["available_spare"]
        .as_u64()
        .and_then(|p| u8::try_from(p).ok());
    health.critical_warning = log["critical_warning"]
        .as_u64()
        .and_then(|p| u8::try_from(p).ok());
    health.media_errors = log["media_errors"].as_u64().map(u128::from);
}

#[cfg(test)]
mod tests {
    use super::super::wear;
    use super::*;

    fn fixture(name: &str) -> Reading {
        let path = format!(
            "{}/tests/fixtures/drives/{name}.smartctl.json",
            env!("CARGO_MANIFEST_DIR")
        );
        parse(&std::fs::read(&path).unwrap()).unwrap()
    }

    #[test]
    fn a_sata_drive_says_what_the_host_wrote_in_its_logical_blocks() {
        let r = fixture("samsung-860-evo-500gb");
        assert_eq!(r.source, Source::Smartctl);
        assert_eq!(r.identity.model, "Samsung SSD 860 EVO 500GB");
        assert_eq!(r.identity.serial, "S3YZNB0KB00864E");
        assert_eq!(r.identity.firmware, "RVT02B6Q");
        assert_eq!(r.identity.capacity_bytes, 500_107_862_016);
        let h = r.health;
        assert_eq!(
            h.host_written.unwrap().in_bytes(),
            Some(64_777_770_148 * 512)
        );
        assert_eq!(h.temperature_c, Some(36.0));
        assert_eq!(h.power_on_hours, Some(14_551));
        // It keeps no NAND-writes attribute: no amplification to give.
        assert!(h.media_written.is_none());
        let why = wear::amplification(&h, &h).unwrap_err();
        assert!(
            why.contains("does not count what it writes to its media"),
            "{why}"
        );
    }

    #[test]
    fn micron_program_pages_give_the_drives_write_amplification() {
        let h = fixture("crucial-bx500-240gb").health;
        assert_eq!(
            h.host_written.unwrap().in_bytes(),
            Some(1_556_679_048 * 512)
        );
        assert_eq!(h.host_programmed.unwrap().units, 48_646_220);
        assert_eq!(h.media_written.unwrap().units, 48_646_220 + 44_352_048);
        // Micron's rule (TN-FD-23): (host pages + FTL pages) / host pages.
        let waf = wear::lifetime_amplification(&h).unwrap();
        assert!((waf - 1.911_726_5).abs() < 1e-6, "{waf}");
        // A run that moved both counts gives the run's own.
        let mut after = h;
        after.host_programmed = Some(Count {
            units: 48_646_220 + 1_000,
            unit_bytes: None,
        });
        after.media_written = Some(Count {
            units: 48_646_220 + 44_352_048 + 2_500,
            unit_bytes: None,
        });
        assert!((wear::amplification(&h, &after).unwrap() - 2.5).abs() < 1e-9);
    }

    #[test]
    fn a_sas_drive_counts_in_the_error_counter_logs_gigabytes() {
        let r = fixture("seagate-st4000nm0043");
        assert_eq!(r.identity.model, "SEAGATE ST4000NM0043");
        assert_eq!(r.identity.firmware, "MS03");
        let h = r.health;
        assert_eq!(h.host_written.unwrap().in_bytes(), Some(86_472_611_000_000));
        assert_eq!(h.host_read.unwrap().in_bytes(), Some(176_987_332_000_000));
        assert_eq!(h.power_on_hours, Some(43_549));
    }

    #[test]
    fn a_disk_smartctl_cannot_ask_gives_smartctls_reason() {
        let path = format!(
            "{}/tests/fixtures/drives/virtio-disk.smartctl.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let why = parse(&std::fs::read(path).unwrap()).unwrap_err();
        assert_eq!(why, "smartctl: /dev/vda: Unable to detect device type");
        assert!(parse(b"not json").unwrap_err().contains("not its JSON"));
    }

    #[test]
    fn device_statistics_come_before_the_attributes() {
        let json = r#"{"device":{"protocol":"ATA"},"logical_block_size":4096,
            "ata_smart_attributes":{"table":[{"name":"Host_Writes_32MiB","raw":{"value":7}},
              {"name":"NAND_Writes_1GiB","raw":{"value":3}}]},
            "ata_device_statistics":{"pages":[{"table":[
              {"name":"Logical Sectors Written","value":1000},
              {"name":"Percentage Used Endurance Indicator","value":4}]}]}}"#;
        let h = parse(json.as_bytes()).unwrap().health;
        assert_eq!(h.host_written.unwrap().in_bytes(), Some(4_096_000));
        assert_eq!(h.percentage_used, Some(4));
        assert_eq!(h.media_written.unwrap().in_bytes(), Some(3 << 30));
        // Without the statistic, the attribute in its own unit.
        let json = json.replace("Logical Sectors Written", "Something Else");
        let h = parse(json.as_bytes()).unwrap().health;
        assert_eq!(h.host_written.unwrap().in_bytes(), Some((7 * 32) << 20));
    }
}
