//! A Linux guest with real NVMe: QEMU's emulated controller driven by the
//! guest kernel's own NVMe driver (poll queues on), booted from an
//! initramfs that holds busybox, the fathom under test and the driver's
//! modules. A test hands it a script of checks; each check's output and
//! exit code come back over the serial console between markers. Speed
//! inside TCG means nothing: checks look at work, counters and refusals.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The modules the NVMe driver needs, then those of a SATA disk on AHCI,
/// in the order they load (the NVMe driver itself last, with its options).
const MODULES: [&str; 14] = [
    "crct10dif_common",
    "crct10dif_generic",
    "crc-t10dif",
    "crc64",
    "crc64-rocksoft",
    "t10-pi",
    "scsi_common",
    "scsi_mod",
    "libata",
    "libahci",
    "ahci",
    "sd_mod",
    "nvme-core",
    "nvme",
];

/// The longest a boot may take, its checks included: a guest that hangs
/// fails the test with what it printed. Its checks take about 210 s on a
/// quiet host (debug builds under emulation); a busy one takes longer.
const BOOT_LIMIT: std::time::Duration = std::time::Duration::from_secs(420);

/// What a guest boots from.
pub struct Guest {
    kernel: PathBuf,
    modules: PathBuf,
    busybox: PathBuf,
}

/// One namespace of the guest's controller: its size, its logical block
/// size, and whether it is zoned (8 MiB zones, 4 open at most).
pub struct Namespace {
    pub size_mib: u64,
    pub lba_bytes: u32,
    pub zoned: bool,
}

/// What the guest has besides its NVMe controller.
#[derive(Default)]
pub struct Extras<'a> {
    /// A SATA disk of this size on an AHCI controller (`/dev/sda`, serial
    /// FATHOMSATA1), which QEMU gives ATA SMART.
    pub sata_mib: Option<u64>,
    /// Programs of the host copied in with their libraries (`smartctl`).
    pub programs: &'a [&'a str],
}

/// What a boot printed: each check's output and exit code.
pub struct Booted {
    pub console: String,
    checks: Vec<(String, String, i32)>,
}

impl Booted {
    /// The output and exit code of the check `name`; panics with the
    /// console when it did not run.
    pub fn check(&self, name: &str) -> (&str, i32) {
        self.checks
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, out, rc)| (out.as_str(), *rc))
            .unwrap_or_else(|| panic!("check {name} did not run:\n{}", self.console))
    }
}

pub fn found(program: &str) -> Option<PathBuf> {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    let path = path.trim();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

impl Guest {
    /// The guest's parts, or why a test cannot boot one here.
    pub fn find() -> Result<Guest, String> {
        if std::env::var_os("FATHOM_GUEST_BESIDE").is_some() {
            return Err("its checks run beside the suite, on their own (.ci/run)".into());
        }
        for program in ["qemu-system-x86_64", "cpio", "strip"] {
            found(program).ok_or(format!("{program} is not installed"))?;
        }
        let busybox = ["/bin/busybox", "/usr/bin/busybox"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .ok_or("busybox (busybox-static) is not installed")?;
        let ldd = Command::new("ldd").arg(&busybox).output();
        if ldd.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("=>")) {
            return Err("busybox is linked dynamically: install busybox-static".into());
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/guest/kernel");
        let kernel = std::fs::read_dir(root.join("boot"))
            .map_err(|_| "no guest kernel: run tests/guest/prepare".to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz"))
            })
            .ok_or("no vmlinuz in target/guest/kernel/boot: run tests/guest/prepare")?;
        let modules = std::fs::read_dir(root.join("lib/modules"))
            .map_err(|_| "no guest modules: run tests/guest/prepare".to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .next()
            .ok_or("no modules in target/guest/kernel/lib/modules")?;
        Ok(Guest {
            kernel,
            modules,
            busybox,
        })
    }

    /// Boots a guest whose controller has `namespaces` (files in `dir`)
    /// and `extras`, and runs `script` in it: `check NAME COMMAND...` runs a
    /// command and reports its output and exit code; `fathom` is the fathom
    /// under test.
    pub fn boot(
        &self,
        dir: &Path,
        namespaces: &[Namespace],
        extras: &Extras,
        script: &str,
    ) -> Booted {
        let root = dir.join("initramfs");
        self.lay_out(&root, extras.programs, script);
        let initrd = dir.join("initrd.cpio");
        let packed = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "cd '{}' && find . | cpio -o -H newc --quiet > '{}'",
                root.display(),
                initrd.display()
            ))
            .status()
            .unwrap();
        assert!(packed.success(), "cpio failed");
        let mut qemu = Command::new("qemu-system-x86_64");
        qemu.args([
            "-accel",
            "tcg",
            "-cpu",
            "max",
            "-smp",
            "2",
            "-m",
            "1024",
            "-nographic",
            "-no-reboot",
            "-nic",
            "none",
        ])
        .arg("-kernel")
        .arg(&self.kernel)
        .arg("-initrd")
        .arg(&initrd)
        .args([
            "-append",
            "console=ttyS0 panic=-1 quiet loglevel=1",
            "-device",
            "nvme,serial=FATHOM0001,id=ctl0",
        ]);
        for (i, ns) in namespaces.iter().enumerate() {
            let image = dir.join(format!("nv{i}.img"));
            let file = std::fs::File::create(&image).unwrap();
            file.set_len(ns.size_mib << 20).unwrap();
            qemu.arg("-drive").arg(format!(
                "file={},if=none,id=nv{i},format=raw,cache=none",
                image.display()
            ));
            let zoned = if ns.zoned {
                ",zoned=true,zoned.zone_size=8M,zoned.max_open=4"
            } else {
                ""
            };
            qemu.arg("-device").arg(format!(
                "nvme-ns,drive=nv{i},bus=ctl0,nsid={},logical_block_size={lba},physical_block_size={lba}{zoned}",
                i + 1,
                lba = ns.lba_bytes
            ));
        }
        if let Some(mib) = extras.sata_mib {
            let image = dir.join("sd.img");
            std::fs::File::create(&image)
                .unwrap()
                .set_len(mib << 20)
                .unwrap();
            qemu.args(["-device", "ahci,id=ahci0", "-drive"])
                .arg(format!(
                    "file={},if=none,id=sata0,format=raw,cache=none",
                    image.display()
                ))
                .args([
                    "-device",
                    "ide-hd,drive=sata0,bus=ahci0.0,serial=FATHOMSATA1,model=FATHOM SATA DISK",
                ]);
        }
        // The console goes to a file, so that a guest that hangs is
        // stopped and what it printed is still there to read.
        let log = dir.join("console.log");
        let mut child = qemu
            .stdin(std::process::Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("qemu runs");
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > BOOT_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        };
        let console = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).replace('\r', "");
        assert!(
            console.contains("@@@ALL DONE"),
            "the guest did not finish its checks ({}):\n{console}",
            match status {
                Some(s) => format!("qemu {s}"),
                None => format!("stopped after {} s", BOOT_LIMIT.as_secs()),
            }
        );
        Booted {
            checks: parse_checks(&console),
            console,
        }
    }

    /// The initramfs's tree: busybox, fathom and its libraries, the
    /// modules, and an init that loads the driver and runs the script.
    fn lay_out(&self, root: &Path, programs: &[&str], script: &str) {
        for d in ["bin", "lib/modules", "dev", "proc", "sys", "tmp", "work"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::copy(&self.busybox, root.join("bin/busybox")).unwrap();
        let fathom = env!("CARGO_BIN_EXE_fathom");
        let stripped = Command::new("strip")
            .arg("-o")
            .arg(root.join("bin/fathom"))
            .arg(fathom)
            .status()
            .unwrap();
        assert!(stripped.success());
        copy_libraries(root, Path::new(fathom));
        for program in programs {
            let path = found(program).unwrap_or_else(|| panic!("{program} is not installed"));
            std::fs::copy(&path, root.join("bin").join(program)).unwrap();
            copy_libraries(root, &path);
        }
        for module in MODULES {
            let found = find_module(&self.modules, module)
                .unwrap_or_else(|| panic!("no {module}.ko in {}", self.modules.display()));
            std::fs::copy(found, root.join(format!("lib/modules/{module}.ko"))).unwrap();
        }
        let loads: String = MODULES[..MODULES.len() - 1]
            .iter()
            .map(|m| format!("insmod /lib/modules/{m}.ko\n"))
            .collect();
        let init = format!(
            r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t debugfs debugfs /sys/kernel/debug
{loads}insmod /lib/modules/nvme.ko poll_queues=1
for i in $(seq 100); do [ -e /dev/nvme0n1 ] && break; sleep 0.1; done
export FATHOM_NO_HISTORY=1 HOME=/tmp
cd /work
check() {{
    name=$1; shift
    read began _ < /proc/uptime
    echo "@@@BEGIN $name"
    "$@" > /tmp/check.out 2>&1
    rc=$?
    cat /tmp/check.out
    echo "@@@END $name $rc"
    read ended _ < /proc/uptime
    echo "@@@TOOK $name $began $ended"
}}
. /checks.sh
echo "@@@ALL DONE"
poweroff -f
"#
        );
        write_executable(&root.join("init"), &init);
        write_executable(&root.join("checks.sh"), script);
    }
}

/// The shared libraries `program` needs (as `ldd` lists them), at their
/// paths inside `root`.
fn copy_libraries(root: &Path, program: &Path) {
    let ldd = Command::new("ldd").arg(program).output().unwrap();
    for lib in String::from_utf8_lossy(&ldd.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
    {
        let inside = root.join(lib.trim_start_matches('/'));
        std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
        std::fs::copy(lib, inside).unwrap();
    }
}

fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn find_module(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_module(&path, name) {
                return Some(found);
            }
        } else if path
            .file_name()
            .is_some_and(|n| n == format!("{name}.ko").as_str())
        {
            return Some(path);
        }
    }
    None
}

/// The checks between their markers: `@@@BEGIN name`, its output,
/// `@@@END name rc`.
fn parse_checks(console: &str) -> Vec<(String, String, i32)> {
    let mut checks = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in console.lines() {
        // The firmware's screen codes may lead the first marker's line.
        let marker = line.find("@@@").map_or(line, |at| &line[at..]);
        if let Some(name) = marker.strip_prefix("@@@BEGIN ") {
            current = Some((name.trim().to_string(), String::new()));
        } else if let Some(rest) = marker.strip_prefix("@@@END ") {
            let mut words = rest.split_whitespace();
            let (name, rc) = (words.next().unwrap_or(""), words.next().unwrap_or("-1"));
            if let Some((n, out)) = current.take().filter(|(n, _)| n == name) {
                checks.push((n, out, rc.parse().unwrap_or(-1)));
            }
        } else if let Some((_, out)) = current.as_mut() {
            out.push_str(line);
            out.push('\n');
        }
    }
    checks
}
