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
    /// A zoned device's zones (`queue/zoned` and its limits); absent for a
    /// conventional one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<ZonedFacts>,
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
    /// Whether the device completes I/O by polling when asked
    /// (`queue/io_poll`: NVMe with poll queues), as `--hipri` needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polls: Option<bool>,
    /// Whether the device takes discards (`queue/discard_max_bytes` above
    /// 0), as trims need.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discards: Option<bool>,
    /// Requests the device's block layer queues at once
    /// (`queue/nr_requests`): past them a submission waits for a free one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
    /// Its hardware queues (`mq/*`), where the kernel says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_queues: Option<u32>,
    /// A loop device's file and the file system it is on ("/img on
    /// tmpfs"): one node over two files is two targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing: Option<String>,
}

impl DeviceFacts {
    /// What the device is, beside its name: its model, else what a loop
    /// device is over.
    pub fn what(&self) -> Option<String> {
        self.model
            .clone()
            .or_else(|| self.backing.as_ref().map(|b| format!("a loop over {b}")))
    }
}

/// A device's key in the history when it gave no serial: its path, and
/// for a loop device what it is over.
pub fn device_key(path: &str, backing: Option<&str>) -> String {
    match backing {
        Some(b) => format!("{path} over {b}"),
        None => path.to_string(),
    }
}

/// A loop device's backing file and its file system, from `sys` (its
/// directory in /sys/block).
fn loop_backing(sys: &Path) -> Option<String> {
    let file = read_trimmed(sys.join("loop/backing_file"))?;
    let fs = crate::gate::mounts::mount_of(Path::new(file.trim_end_matches(" (deleted)")))
        .map_or("an unknown file system".to_string(), |(fs, _)| fs);
    Some(format!("{file} on {fs}"))
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
    /// A block device target that is a partition of `device`, not all of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partition: bool,
}

/// Whether the block device `major:minor` is a partition of a disk.
pub fn is_partition(major: u32, minor: u32) -> bool {
    Path::new("/sys/dev/block")
        .join(format!("{major}:{minor}"))
        .join("partition")
        .exists()
}

/// When this process started, in seconds since the epoch: the kernel's
/// own count (`/proc/self/stat`'s start time, in clock ticks since boot),
/// so that it is the moment the command was launched, before anything
/// fathom did. It is set against the boot clock read now, not against
/// `/proc/stat`'s `btime`, which is whole seconds and drifts from the
/// wall clock as it is adjusted.
pub fn process_started_unix_s() -> Option<f64> {
    let stat = crate::gate::read::host_text("/proc/self/stat")?;
    let mut boot = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut boot) } != 0 {
        return None;
    }
    let since_boot = boot.tv_sec as f64 + boot.tv_nsec as f64 * 1e-9;
    Some(crate::util::unix_now_s()? - (since_boot - started_after_boot_s(&stat)?))
}

/// Seconds after boot at which the process `stat` (its /proc stat line)
/// started.
fn started_after_boot_s(stat: &str) -> Option<f64> {
    // The command's name, field 2, is in parentheses and may hold spaces:
    // fields are counted from the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let ticks: f64 = after_name.split_whitespace().nth(19)?.parse().ok()?;
    // SAFETY: sysconf takes no pointers.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some(ticks / hz)
}

pub fn host_facts() -> HostFacts {
    let (hostname, kernel) = uname();
    let text = |path: &str| crate::gate::read::host_text(path).unwrap_or_default();
    HostFacts {
        hostname,
        kernel,
        os: os_name(&text("/etc/os-release")).unwrap_or_else(|| "Linux".into()),
        cpu_model: cpu_model(&text("/proc/cpuinfo")).unwrap_or_else(|| "unknown".into()),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes: memory_bytes(&text("/proc/meminfo")).unwrap_or(0),
    }
}

/// The first "model name" of /proc/cpuinfo.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// MemTotal of /proc/meminfo, which counts in KiB.
fn memory_bytes(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// PRETTY_NAME of /etc/os-release.
fn os_name(os_release: &str) -> Option<String> {
    os_release
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

/// The node name and kernel release.
fn uname() -> (String, String) {
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
    crate::gate::read::host_text(path)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The disk behind device number `dev` (a partition resolves to its disk).
pub fn device_facts(major: u32, minor: u32) -> Option<DeviceFacts> {
    device_facts_in(Path::new("/sys"), major, minor)
}

/// [`device_facts`] read from the sysfs mounted at `sysfs`.
fn device_facts_in(sysfs: &Path, major: u32, minor: u32) -> Option<DeviceFacts> {
    if major == 0 {
        // Anonymous devices: tmpfs, overlayfs, btrfs subvolumes, NFS...
        return None;
    }
    let mut sys: PathBuf =
        fs::canonicalize(sysfs.join(format!("dev/block/{major}:{minor}"))).ok()?;
    if sys.join("partition").exists() {
        sys = sys.parent()?.to_path_buf();
    }
    let queue = sys.join("queue");
    let logical_block_size = read_trimmed(queue.join("logical_block_size"))?
        .parse()
        .ok()?;
    Some(DeviceFacts {
        name: sys.file_name()?.to_string_lossy().into_owned(),
        zoned: zoned_facts(&queue),
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
        polls: read_trimmed(queue.join("io_poll")).map(|p| p == "1"),
        discards: read_trimmed(queue.join("discard_max_bytes")).map(|b| b != "0"),
        nr_requests: read_trimmed(queue.join("nr_requests")).and_then(|n| n.parse().ok()),
        hw_queues: fs::read_dir(sys.join("mq"))
            .ok()
            .map(|d| d.count() as u32)
            .filter(|&n| n > 0),
        backing: loop_backing(&sys),
    })
}

/// How a zoned device takes writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneModel {
    /// Each write must land at its zone's write pointer (ZNS, SMR).
    HostManaged,
    /// Writes anywhere are taken, the device reorders them itself.
    HostAware,
}

/// A zoned block device's zones, as its queue says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZonedFacts {
    pub model: ZoneModel,
    pub zone_bytes: u64,
    pub zones: u64,
    /// Zones open at once, and active at once; 0 is no limit.
    pub max_open_zones: u32,
    pub max_active_zones: u32,
}

impl ZonedFacts {
    /// "16 zones of 64 MiB, 14 open at most".
    pub fn describe(&self) -> String {
        let open = match self.max_open_zones {
            0 => String::new(),
            n => format!(", {n} open at most"),
        };
        format!(
            "{} zones of {}{open}",
            self.zones,
            crate::util::units::format_bytes(self.zone_bytes)
        )
    }
}

/// The zones of the disk whose queue is `queue`, if it is zoned.
fn zoned_facts(queue: &Path) -> Option<ZonedFacts> {
    let model = match read_trimmed(queue.join("zoned"))?.as_str() {
        "host-managed" => ZoneModel::HostManaged,
        "host-aware" => ZoneModel::HostAware,
        _ => return None,
    };
    let number = |name: &str| read_trimmed(queue.join(name)).and_then(|v| v.parse::<u64>().ok());
    Some(ZonedFacts {
        model,
        zone_bytes: number("chunk_sectors").unwrap_or(0) * 512,
        zones: number("nr_zones").unwrap_or(0),
        max_open_zones: number("max_open_zones").unwrap_or(0) as u32,
        max_active_zones: number("max_active_zones").unwrap_or(0) as u32,
    })
}

/// The zones of the block device at `path`, if it is zoned.
pub fn zoned_of(path: &Path) -> Option<ZonedFacts> {
    use std::os::unix::fs::MetadataExt;
    let rdev = fs::metadata(path).ok()?.rdev();
    device_facts(libc::major(rdev), libc::minor(rdev))?.zoned
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

pub use crate::gate::mounts::mount_of;
#[cfg(test)]
use crate::gate::mounts::{mount_in, unescape_mountinfo};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_starts_at_its_ticks_after_boot_whatever_its_name() {
        // Field 22 (start time) is 250 ticks after boot; the name holds a
        // space and a ')'.
        let stat =
            "4242 (fa th)om) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 250 1000 100";
        // SAFETY: sysconf takes no pointers.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        let at = started_after_boot_s(stat).unwrap();
        assert!((at - 250.0 / hz).abs() < 1e-9, "{at}");
        assert_eq!(started_after_boot_s("4242 (x) S 1"), None);
        // This test's own process started before now, within its ticks.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let own = process_started_unix_s().unwrap();
        assert!(
            own <= now + 2.0 / hz && own > now - 3600.0,
            "{own} against {now}"
        );
    }

    #[test]
    fn host_facts_are_filled() {
        let h = host_facts();
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
        // uname's node name and release, as the kernel also shows them.
        let proc = |name: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
                .unwrap()
                .trim()
                .to_string()
        };
        assert_eq!(h.hostname, proc("hostname"));
        assert_eq!(h.kernel, proc("osrelease"));
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
    fn host_facts_are_read_from_the_kernels_files() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: X\nmodel name\t: Fast CPU @ 3.00GHz\n\nprocessor\t: 1\nmodel name\t: Fast CPU @ 3.00GHz\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("Fast CPU @ 3.00GHz"));
        assert_eq!(cpu_model("processor : 0\n"), None);
        let meminfo = "MemFree:         1000 kB\nMemTotal:        4011432 kB\n";
        assert_eq!(memory_bytes(meminfo), Some(4011432 * 1024));
        assert_eq!(memory_bytes("MemFree: 1 kB\n"), None);
        let release = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\n";
        assert_eq!(
            os_name(release).as_deref(),
            Some("Debian GNU/Linux 13 (trixie)")
        );
        assert_eq!(os_name(""), None);
    }

    #[test]
    fn the_longest_mount_point_holding_the_path_wins_and_later_lines_win_ties() {
        let info = "\
22 1 254:1 / / rw - ext4 /dev/vda1 rw
30 22 0:40 / /mnt rw - tmpfs tmpfs rw
31 22 0:41 / /mnt/data\\040disk rw - xfs /dev/sdb rw
32 30 0:42 / /mnt rw - overlay overlay rw
";
        let at = |p: &str| mount_in(info, Path::new(p));
        let mount = |fs: &str, mp: &str| Some((fs.to_string(), mp.to_string()));
        assert_eq!(at("/home/x"), mount("ext4", "/"));
        assert_eq!(at("/mnt/x"), mount("overlay", "/mnt"));
        assert_eq!(at("/mnt/data disk/f"), mount("xfs", "/mnt/data disk"));
        assert_eq!(at("/mnt"), mount("overlay", "/mnt"));
    }

    /// A sysfs of one disk, `sdz`, with one partition, `sdz1`.
    fn fake_sysfs(root: &Path, rotational: &str) -> PathBuf {
        let sys = root.join("sys");
        let disk = sys.join("devices/pci0000:00/host0/block/sdz");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(disk.join("sdz1")).unwrap();
        std::fs::create_dir_all(disk.join("device/hwmon/hwmon2")).unwrap();
        std::fs::create_dir_all(sys.join("dev/block")).unwrap();
        let write = |p: &str, v: &str| std::fs::write(disk.join(p), v).unwrap();
        write("queue/logical_block_size", "512\n");
        write("queue/physical_block_size", "4096\n");
        write("queue/rotational", rotational);
        write("queue/nr_requests", "64\n");
        write("size", "2097152\n");
        write("device/model", "FAKE SSD 1TB    \n");
        write("device/hwmon/hwmon2/temp1_input", "35000\n");
        write("sdz1/partition", "1\n");
        write("sdz1/size", "2048\n");
        std::os::unix::fs::symlink(&disk, sys.join("dev/block/8:0")).unwrap();
        std::os::unix::fs::symlink(disk.join("sdz1"), sys.join("dev/block/8:1")).unwrap();
        sys
    }

    #[test]
    fn device_facts_describe_the_whole_disk_under_a_partition() {
        let root = std::env::temp_dir().join(format!("fathom-sysfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let sys = fake_sysfs(&root, "0\n");
        let disk = device_facts_in(&sys, 8, 0).unwrap();
        assert_eq!(disk.name, "sdz");
        assert_eq!(disk.model.as_deref(), Some("FAKE SSD 1TB"));
        assert_eq!(disk.rotational, Some(false));
        assert_eq!(disk.logical_block_size, 512);
        assert_eq!(disk.physical_block_size, Some(4096));
        assert_eq!(disk.nr_requests, Some(64));
        assert_eq!(disk.size_bytes, Some(2097152 * 512));
        assert!(
            disk.temperature_sensor
                .as_deref()
                .is_some_and(|t| t.ends_with("device/hwmon/hwmon2/temp1_input")),
            "{disk:?}"
        );
        assert_eq!(disk.zoned, None);
        assert_eq!(device_facts_in(&sys, 8, 1), Some(disk));
        assert_eq!(device_facts_in(&sys, 8, 2), None);
        assert_eq!(device_facts_in(&sys, 0, 0), None);

        let _ = std::fs::remove_dir_all(&root);
        let sys = fake_sysfs(&root, "1\n");
        assert_eq!(device_facts_in(&sys, 8, 1).unwrap().rotational, Some(true));
        // Without a logical block size there is no disk to describe.
        std::fs::remove_file(sys.join("dev/block/8:0/queue/logical_block_size")).unwrap();
        assert_eq!(device_facts_in(&sys, 8, 0), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_zoned_disk_says_its_zones() {
        let root = std::env::temp_dir().join(format!("fathom-zoned-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let sys = fake_sysfs(&root, "0\n");
        let queue = sys.join("dev/block/8:0/queue");
        for (name, value) in [
            ("zoned", "host-managed\n"),
            ("chunk_sectors", "131072\n"),
            ("nr_zones", "16\n"),
            ("max_open_zones", "14\n"),
            ("max_active_zones", "0\n"),
        ] {
            std::fs::write(queue.join(name), value).unwrap();
        }
        let zones = device_facts_in(&sys, 8, 0).unwrap().zoned.unwrap();
        assert_eq!(zones.model, ZoneModel::HostManaged);
        assert_eq!(zones.zone_bytes, 64 << 20);
        assert_eq!(zones.describe(), "16 zones of 64 MiB, 14 open at most");
        std::fs::write(queue.join("zoned"), "none\n").unwrap();
        assert_eq!(device_facts_in(&sys, 8, 0).unwrap().zoned, None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn anonymous_devices_have_no_facts() {
        assert!(device_facts(0, 42).is_none());
    }
}
