//! Facts about the host and each target that a reader needs to judge a result:
//! kernel, CPUs, device model, rotational or not, block size, file system.

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub kernel: String,
    pub os: String,
    pub cpu_model: String,
    pub cpus: u32,
    pub memory_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceFacts {
    /// Kernel name of the whole disk, e.g. "nvme0n1", "sda", "loop3".
    pub name: String,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub logical_block_size: u64,
    pub physical_block_size: Option<u64>,
    pub size_bytes: Option<u64>,
    /// The device's temperature input in sysfs (NVMe's hwmon, or a SATA
    /// disk's with the drivetemp module), sampled every second of a run;
    /// null when the device has none.
    #[serde(default)]
    pub temperature_sensor: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    BlockDevice,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetFacts {
    pub kind: TargetKind,
    pub path: String,
    /// File system type of a file target ("ext4", "xfs", "tmpfs", ...).
    pub filesystem: Option<String>,
    pub mount_point: Option<String>,
    /// The disk under the target, when there is one (not for tmpfs, overlay
    /// over several disks, network file systems...).
    pub device: Option<DeviceFacts>,
}

pub fn host_facts() -> HostFacts {
    let uname = rustix_uname();
    let cpu_model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024);
    let os = fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|rel| {
            rel.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "Linux".into());
    HostFacts {
        hostname: uname.0,
        kernel: uname.1,
        os,
        cpu_model,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes,
    }
}

fn rustix_uname() -> (String, String) {
    // SAFETY: uname fills the struct we pass; fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return ("unknown".into(), "unknown".into());
        }
        let field = |f: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(f.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        (field(&u.nodename), field(&u.release))
    }
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The disk behind device number `dev` (a partition resolves to its disk).
pub fn device_facts(major: u32, minor: u32) -> Option<DeviceFacts> {
    if major == 0 {
        // Anonymous devices: tmpfs, overlayfs, btrfs subvolumes, NFS...
        return None;
    }
    let mut sys: PathBuf = fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    if sys.join("partition").exists() {
        sys = sys.parent()?.to_path_buf();
    }
    let queue = sys.join("queue");
    let logical_block_size = read_trimmed(queue.join("logical_block_size"))?
        .parse()
        .ok()?;
    Some(DeviceFacts {
        name: sys.file_name()?.to_string_lossy().into_owned(),
        model: read_trimmed(sys.join("device/model")),
        rotational: read_trimmed(queue.join("rotational")).map(|r| r == "1"),
        logical_block_size,
        physical_block_size: read_trimmed(queue.join("physical_block_size"))
            .and_then(|s| s.parse().ok()),
        size_bytes: read_trimmed(sys.join("size"))
            .and_then(|s| s.parse::<u64>().ok())
            .map(|sectors| sectors * 512),
        temperature_sensor: temperature_sensor(&sys.join("device"))
            .map(|p| p.display().to_string()),
    })
}

/// The first `hwmon*/temp1_input` of a device in sysfs (NVMe controllers
/// have `hwmonN` directly, SCSI disks under `hwmon/`).
pub fn temperature_sensor(device: &Path) -> Option<PathBuf> {
    let mut dirs = vec![device.to_path_buf(), device.join("hwmon")];
    // An NVMe namespace's device is the controller; its hwmon is there.
    dirs.retain(|d| d.is_dir());
    for dir in dirs {
        let mut found: Vec<PathBuf> = fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("hwmon"))
            .map(|e| e.path().join("temp1_input"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        if let Some(first) = found.into_iter().next() {
            return Some(first);
        }
    }
    None
}

/// Degrees Celsius from a sysfs temperature input (millidegrees).
pub fn read_temperature(sensor: &Path) -> Option<f64> {
    read_trimmed(sensor)?
        .parse::<f64>()
        .ok()
        .map(|m| m / 1000.0)
}

/// File system type and mount point of the mount holding `path`, from
/// /proc/self/mountinfo (the longest mount point that prefixes the path).
pub fn mount_of(path: &Path) -> Option<(String, String)> {
    let path = fs::canonicalize(path).ok()?;
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, String, String)> = None;
    for line in info.lines() {
        let (left, right) = line.split_once(" - ")?;
        let mount_point = unescape_mountinfo(left.split_whitespace().nth(4)?);
        let fstype = right.split_whitespace().next()?.to_string();
        if path.starts_with(&mount_point) {
            let depth = mount_point.len();
            // Later lines win ties: they are mounted on top.
            if best.as_ref().is_none_or(|(d, _, _)| depth >= *d) {
                best = Some((depth, fstype, mount_point));
            }
        }
    }
    best.map(|(_, fstype, mount_point)| (fstype, mount_point))
}

/// mountinfo writes space, tab, newline and backslash as octal escapes.
fn unescape_mountinfo(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.by_ref().take(3).collect();
            match u8::from_str_radix(&code, 8) {
                Ok(b) => out.push(b as char),
                Err(_) => {
                    out.push('\\');
                    out.push_str(&code);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_facts_are_filled() {
        let h = host_facts();
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
        assert!(!h.kernel.is_empty());
    }

    #[test]
    fn root_is_mounted() {
        let (fstype, mp) = mount_of(Path::new("/")).unwrap();
        assert_eq!(mp, "/");
        assert!(!fstype.is_empty());
    }

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape_mountinfo(r"/mnt/with\040space"), "/mnt/with space");
        assert_eq!(unescape_mountinfo("/plain"), "/plain");
    }

    #[test]
    fn temperature_sensors_are_found_where_nvme_and_drivetemp_put_them() {
        let root = std::env::temp_dir().join(format!("fathom-hwmon-{}", std::process::id()));
        let nvme = root.join("nvme0");
        std::fs::create_dir_all(nvme.join("hwmon3")).unwrap();
        std::fs::write(nvme.join("hwmon3/temp1_input"), "41850\n").unwrap();
        let sensor = temperature_sensor(&nvme).unwrap();
        assert_eq!(read_temperature(&sensor), Some(41.85));
        let sata = root.join("sda");
        std::fs::create_dir_all(sata.join("hwmon/hwmon1")).unwrap();
        std::fs::write(sata.join("hwmon/hwmon1/temp1_input"), "30000").unwrap();
        assert!(
            temperature_sensor(&sata)
                .unwrap()
                .ends_with("hwmon/hwmon1/temp1_input")
        );
        let none = root.join("vda");
        std::fs::create_dir_all(&none).unwrap();
        assert_eq!(temperature_sensor(&none), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn anonymous_devices_have_no_facts() {
        assert!(device_facts(0, 42).is_none());
    }
}
