//! What an NVMe drive says of itself, asked through the kernel's admin
//! passthrough (`NVME_IOCTL_ADMIN_CMD` on the namespace's block device):
//! Identify Controller and Namespace for what it is, the SMART / Health
//! Information log (02h) for what it counted, and the OCP datacenter
//! SMART log (C0h) for what it wrote to its media, where it keeps one.
//!
//! The command structure is the kernel's UAPI (`linux/nvme_ioctl.h`),
//! stable since Linux 3.3, and the pages are read at the NVMe base
//! specification's byte offsets. The crates that wrap them (nvme-cli-sys,
//! linux-nvme-sys) bring nix and bindgen for the one struct and three
//! commands used here.

use super::{Count, Health, Identity, Reading, Source};
use std::os::fd::AsRawFd;
use std::path::Path;

/// `struct nvme_admin_cmd` (`nvme_passthru_cmd`), 72 bytes.
#[repr(C)]
#[derive(Default)]
struct AdminCommand {
    opcode: u8,
    flags: u8,
    rsvd1: u16,
    nsid: u32,
    cdw2: u32,
    cdw3: u32,
    metadata: u64,
    addr: u64,
    metadata_len: u32,
    data_len: u32,
    cdw10: u32,
    cdw11: u32,
    cdw12: u32,
    cdw13: u32,
    cdw14: u32,
    cdw15: u32,
    timeout_ms: u32,
    result: u32,
}

/// `_IOWR('N', 0x41, struct nvme_admin_cmd)`.
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xC048_4E41;
const OPCODE_GET_LOG_PAGE: u8 = 0x02;
const OPCODE_IDENTIFY: u8 = 0x06;
const LOG_SUPPORTED: u32 = 0x00;
const LOG_SMART: u32 = 0x02;
/// The OCP Datacenter NVMe SSD specification's SMART / Health Information
/// Extended log, told apart from a vendor's own C0h by its GUID.
const LOG_OCP_SMART: u32 = 0xC0;
const OCP_SMART_GUID: [u8; 16] = [
    0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4, 0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5, 0xAF,
];
const CNS_NAMESPACE: u32 = 0x00;
const CNS_CONTROLLER: u32 = 0x01;
/// The namespace id that asks for the whole controller's log.
const ALL_NAMESPACES: u32 = 0xFFFF_FFFF;
/// One SMART data unit: a thousand 512-byte units, rounded up by the
/// drive (NVMe base specification, log 02h bytes 32 to 63).
pub const DATA_UNIT_BYTES: u64 = 512_000;

/// Asks the drive behind `device` (a namespace's block device, or its
/// controller's character device) the admin command `command`, reading
/// `len` bytes back.
fn admin(device: &Path, command: AdminCommand, len: usize) -> Result<Vec<u8>, String> {
    let file = crate::gate::read::device_to_query(device).map_err(|e| e.to_string())?;
    admin_on(&file, command, len)
}

/// The admin command `command` on the open device `file`.
fn admin_on(
    file: &std::fs::File,
    mut command: AdminCommand,
    len: usize,
) -> Result<Vec<u8>, String> {
    let mut data = vec![0u8; len];
    command.addr = data.as_mut_ptr() as u64;
    command.data_len = len as u32;
    if len == 0 {
        command.addr = 0;
    }
    if command.timeout_ms == 0 {
        command.timeout_ms = 10_000;
    }
    // SAFETY: the kernel reads the command and writes at most `data_len`
    // bytes into `data`, which outlives the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), NVME_IOCTL_ADMIN_CMD, &mut command) };
    match rc {
        0 => Ok(data),
        -1 => Err(match std::io::Error::last_os_error() {
            e if e.raw_os_error() == Some(libc::ENOTTY) => "not an NVMe device".into(),
            e if e.raw_os_error() == Some(libc::EACCES)
                || e.raw_os_error() == Some(libc::EPERM) =>
            {
                "NVMe admin commands need root (CAP_SYS_ADMIN)".into()
            }
            e => format!("the admin command failed ({e})"),
        }),
        status => Err(format!("the drive answered status {status:#x}")),
    }
}

/// The namespace id of `device` (`NVME_IOCTL_ID`).
fn namespace_id(device: &Path) -> Result<u32, String> {
    let file = crate::gate::read::device_to_query(device).map_err(|e| e.to_string())?;
    id_of(&file)
}

/// The namespace id of the open namespace `file`.
fn id_of(file: &std::fs::File) -> Result<u32, String> {
    /// `_IO('N', 0x40)`.
    const NVME_IOCTL_ID: libc::c_ulong = 0x4E40;
    // SAFETY: the ioctl takes no argument and returns the id.
    let id = unsafe { libc::ioctl(file.as_raw_fd(), NVME_IOCTL_ID) };
    match id {
        id if id > 0 => Ok(id as u32),
        _ => Err(match std::io::Error::last_os_error() {
            e if e.raw_os_error() == Some(libc::ENOTTY) => "not an NVMe namespace".into(),
            e => format!("no namespace id ({e})"),
        }),
    }
}

/// Identify Controller's page of the controller behind `device`.
fn identify_controller(device: &Path) -> Result<Vec<u8>, String> {
    admin(
        device,
        AdminCommand {
            opcode: OPCODE_IDENTIFY,
            cdw10: CNS_CONTROLLER,
            ..Default::default()
        },
        4096,
    )
}

/// Identify Namespace's page of namespace `nsid`, asked through `file`.
fn identify_namespace(file: &std::fs::File, nsid: u32) -> Result<Vec<u8>, String> {
    admin_on(
        file,
        AdminCommand {
            opcode: OPCODE_IDENTIFY,
            nsid,
            cdw10: CNS_NAMESPACE,
            ..Default::default()
        },
        4096,
    )
}

/// The LBA format in use: FLBAS (byte 26) bits 0-3, and bits 5-6 as the
/// index's bits 4-5.
fn lba_format_index(namespace: &[u8]) -> usize {
    let flbas = namespace[26];
    usize::from((flbas & 0x0F) | ((flbas & 0x60) >> 1))
}

/// What the drive and namespace behind `device` (`/dev/nvme0n1`) are and
/// have counted so far.
pub fn read(device: &Path) -> Result<Reading, String> {
    let nsid = namespace_id(device)?;
    let controller = identify_controller(device)?;
    let file = crate::gate::read::device_to_query(device).map_err(|e| e.to_string())?;
    let namespace = identify_namespace(&file, nsid)?;
    let mut health = parse_health(&log_page(device, LOG_SMART, 512)?);
    health.media_written = media_written(device, &controller);
    Ok(Reading {
        source: Source::Nvme,
        identity: Identity {
            namespace: Some(nsid),
            ..parse_identity(&controller, &namespace)
        },
        health,
    })
}

/// What the controller behind a namespace can do to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Format NVM (Identify Controller OACS bit 1).
    pub format: bool,
    /// Sanitize's operations (SANICAP, bytes 328-331): 0 when it has none.
    pub sanitize: u32,
}

/// What the controller behind `device` can do to its namespaces.
pub fn capabilities(device: &Path) -> Result<Capabilities, String> {
    namespace_id(device)?;
    let controller = identify_controller(device)?;
    Ok(parse_capabilities(&controller))
}

fn parse_capabilities(controller: &[u8]) -> Capabilities {
    let oacs = le(&controller[256..258]) as u16;
    Capabilities {
        format: oacs & 0x2 != 0,
        sanitize: le(&controller[328..332]) as u32 & 0x7,
    }
}

/// Formats the namespace open as `target` (opened for writing, through
/// the gate's refusals) with a user data erase, keeping its LBA format:
/// every block then reads back as the drive's erased value. Waits for the
/// drive, up to `timeout`.
pub fn format_erasing(target: &std::fs::File, timeout: std::time::Duration) -> Result<(), String> {
    /// Format NVM, cdw10: the LBA format (bits 0-3, its upper bits at
    /// 12-13), Secure Erase Settings 1: a user data erase (bits 9-11).
    const OPCODE_FORMAT_NVM: u8 = 0x80;
    const USER_DATA_ERASE: u32 = 1 << 9;
    let nsid = id_of(target)?;
    let namespace = identify_namespace(target, nsid)?;
    let format = lba_format_index(&namespace) as u32;
    admin_on(
        target,
        AdminCommand {
            opcode: OPCODE_FORMAT_NVM,
            nsid,
            cdw10: (format & 0x0F) | ((format >> 4) << 12) | USER_DATA_ERASE,
            timeout_ms: timeout.as_millis().min(u128::from(u32::MAX)) as u32,
            ..Default::default()
        },
        0,
    )
    .map(|_| ())
}

/// The first `len` bytes of the controller-wide log page `log` of the
/// drive behind `device`.
fn log_page(device: &Path, log: u32, len: usize) -> Result<Vec<u8>, String> {
    let dwords = (len / 4 - 1) as u32;
    admin(
        device,
        AdminCommand {
            opcode: OPCODE_GET_LOG_PAGE,
            nsid: ALL_NAMESPACES,
            cdw10: log | ((dwords & 0xFFFF) << 16),
            cdw11: dwords >> 16,
            ..Default::default()
        },
        len,
    )
}

/// What the drive wrote to its media, from the OCP log, asked only of a
/// drive that lists it among its log pages: a request it refuses would
/// count in its error log, which monitoring watches, and a vendor's own
/// page under the same number is told apart by the OCP GUID.
fn media_written(device: &Path, controller: &[u8]) -> Option<Count> {
    if !lists_its_logs(controller) {
        return None;
    }
    let supported = log_page(device, LOG_SUPPORTED, 1024).ok()?;
    if !log_supported(&supported, LOG_OCP_SMART) {
        return None;
    }
    parse_ocp_media_written(&log_page(device, LOG_OCP_SMART, 512).ok()?)
}

/// Identify Controller's LPA (byte 261) bit 5: the Supported Log Pages log.
fn lists_its_logs(controller: &[u8]) -> bool {
    controller[261] & 0x20 != 0
}

/// The Supported Log Pages log's entry for `log` (4 bytes each): LSUPP.
fn log_supported(supported: &[u8], log: u32) -> bool {
    supported
        .get(log as usize * 4)
        .is_some_and(|&lidsp| lidsp & 1 != 0)
}

/// The OCP log's Physical Media Units Written (bytes 0-15, in bytes), if
/// the page carries the OCP GUID (bytes 496-511).
fn parse_ocp_media_written(page: &[u8]) -> Option<Count> {
    (page.get(496..512)? == OCP_SMART_GUID).then(|| Count::bytes(le(&page[0..16]), 1))
}

fn ascii(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .trim_matches(|c: char| c == ' ' || c == '\0')
        .to_string()
}

fn le(bytes: &[u8]) -> u128 {
    bytes
        .iter()
        .rev()
        .fold(0u128, |acc, &b| (acc << 8) | u128::from(b))
}

/// Identify Controller's serial (bytes 4-23), model (24-63) and firmware
/// (64-71); Identify Namespace's size (NSZE, bytes 0-7) and the LBA
/// format in use (FLBAS, byte 26, indexing the formats at byte 128).
fn parse_identity(controller: &[u8], namespace: &[u8]) -> Identity {
    let format = lba_format_index(namespace);
    let lbaf = le(&namespace[128 + 4 * format..132 + 4 * format]) as u32;
    let lba_bytes = 1u64 << ((lbaf >> 16) & 0xFF);
    Identity {
        namespace: None,
        serial: ascii(&controller[4..24]),
        model: ascii(&controller[24..64]),
        firmware: ascii(&controller[64..72]),
        capacity_bytes: (le(&namespace[0..8]) as u64).saturating_mul(lba_bytes),
        lba_bytes,
        lba_metadata_bytes: (lbaf & 0xFFFF) as u16,
    }
}

/// The SMART / Health log's fields at their offsets.
fn parse_health(page: &[u8]) -> Health {
    let kelvin = le(&page[1..3]) as f64;
    Health {
        critical_warning: Some(page[0]),
        temperature_c: (kelvin > 0.0).then_some(kelvin - 273.15),
        available_spare_pct: Some(page[3]),
        percentage_used: Some(u16::from(page[5])),
        host_read: Some(Count::bytes(le(&page[32..48]), DATA_UNIT_BYTES)),
        host_written: Some(Count::bytes(le(&page[48..64]), DATA_UNIT_BYTES)),
        power_on_hours: Some(le(&page[128..144])),
        media_errors: Some(le(&page[160..176])),
        media_written: None,
        host_programmed: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_the_kernels_72_bytes() {
        assert_eq!(std::mem::size_of::<AdminCommand>(), 72);
    }

    #[test]
    fn identify_pages_read_at_their_offsets() {
        let mut controller = vec![0u8; 4096];
        controller[4..14].copy_from_slice(b"FATHOM0001");
        controller[14..24].fill(b' ');
        controller[24..38].copy_from_slice(b"QEMU NVMe Ctrl");
        controller[38..64].fill(b' ');
        controller[64..72].copy_from_slice(b"9.0.2   ");
        let mut namespace = vec![0u8; 4096];
        namespace[0..8].copy_from_slice(&(524_288u64).to_le_bytes());
        // Format 1 in use: 4096-byte blocks with 8 bytes of metadata.
        namespace[26] = 1;
        namespace[128..132].copy_from_slice(&(9u32 << 16).to_le_bytes());
        namespace[132..136].copy_from_slice(&((12u32 << 16) | 8).to_le_bytes());
        let id = parse_identity(&controller, &namespace);
        assert_eq!(id.serial, "FATHOM0001");
        assert_eq!(id.model, "QEMU NVMe Ctrl");
        assert_eq!(id.firmware, "9.0.2");
        assert_eq!(id.lba_bytes, 4096);
        assert_eq!(id.lba_metadata_bytes, 8);
        assert_eq!(id.capacity_bytes, 524_288 * 4096);
    }

    #[test]
    fn format_and_sanitize_are_read_from_oacs_and_sanicap() {
        let mut controller = vec![0u8; 4096];
        controller[256] = 0x0a;
        assert_eq!(
            parse_capabilities(&controller),
            Capabilities {
                format: true,
                sanitize: 0
            }
        );
        controller[256] = 0x08;
        controller[328] = 0x06;
        assert_eq!(
            parse_capabilities(&controller),
            Capabilities {
                format: false,
                sanitize: 6
            }
        );
    }

    #[test]
    fn the_health_log_reads_at_its_offsets() {
        let mut page = vec![0u8; 512];
        page[1..3].copy_from_slice(&323u16.to_le_bytes());
        page[3] = 100;
        page[5] = 3;
        page[48..56].copy_from_slice(&1_986u64.to_le_bytes());
        page[160] = 2;
        let h = parse_health(&page);
        assert!((h.temperature_c.unwrap() - 49.85).abs() < 1e-9);
        assert_eq!(h.available_spare_pct, Some(100));
        assert_eq!(h.percentage_used, Some(3));
        assert_eq!(h.host_written.unwrap().units, 1_986);
        assert_eq!(h.host_written.unwrap().in_bytes(), Some(1_986 * 512_000));
        assert_eq!(h.media_errors, Some(2));
    }

    #[test]
    fn the_ocp_log_is_asked_for_only_where_the_drive_lists_it() {
        let mut controller = vec![0u8; 4096];
        assert!(!lists_its_logs(&controller), "NVMe before 2.0 lists none");
        controller[261] = 0x20;
        assert!(lists_its_logs(&controller));
        let mut supported = vec![0u8; 1024];
        assert!(!log_supported(&supported, LOG_OCP_SMART));
        supported[0xC0 * 4] = 1;
        assert!(log_supported(&supported, LOG_OCP_SMART));
        assert!(!log_supported(&supported, LOG_SMART));
    }

    #[test]
    fn media_writes_are_read_only_from_a_page_with_the_ocp_guid() {
        let mut page = vec![0u8; 512];
        page[0..16].copy_from_slice(&(1_234_567_890_123u128).to_le_bytes());
        assert_eq!(parse_ocp_media_written(&page), None, "a vendor's own C0h");
        page[496..512].copy_from_slice(&OCP_SMART_GUID);
        assert_eq!(
            parse_ocp_media_written(&page),
            Some(Count::bytes(1_234_567_890_123, 1))
        );
    }
}
