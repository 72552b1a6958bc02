//! fathom on the Linux NVMe driver: a QEMU guest whose emulated
//! controller the guest kernel's own driver runs, poll queues on (see
//! common/guest.rs). One boot runs every check; a machine without QEMU or
//! the guest kernel skips, saying why.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

mod common;
#[path = "common/guest.rs"]
mod guest;

use guest::{Extras, Guest, Namespace};
use serde_json::Value;

/// The checks of the one boot: nvme0n1 has 512-byte blocks, nvme0n2
/// 4096-byte ones, and nvme0n3 is zoned (16 zones of 8 MiB, 4 open at
/// most).
const CHECKS: &str = r#"
check write fathom run /dev/nvme0n1 --rw write --bs 128k --iodepth 8 --size 96m --i-know-this-destroys-data -o /work/w.json
check write_json cat /work/w.json
check interrupts_before cat /proc/interrupts
check hipri fathom run /dev/nvme0n1 --rw randread --bs 4k --iodepth 4 --hipri --size 96m --runtime 2s -o /work/h.json
check interrupts_after cat /proc/interrupts
check hipri_json cat /work/h.json
check below_lba fathom run /dev/nvme0n2 --rw randread --bs 512 --runtime 1s -o /work/b.json
check below_lba_left ls /work
ln -s /dev/nvme0n1 /dev/fast
check keep_one env -u FATHOM_NO_HISTORY fathom run /dev/nvme0n1 --rw read --bs 128k --size 8m --history /work/h.db
check keep_two env -u FATHOM_NO_HISTORY fathom run /dev/fast --rw read --bs 128k --size 8m --history /work/h.db
check kept fathom history --history /work/h.db --target /dev/nvme0n1
check zoned_write fathom run /dev/nvme0n3 --rw randwrite --bs 4k --size 8m --i-know-this-destroys-data -o /work/z.json
check zoned_write_left ls /work
check zoned_read fathom run /dev/nvme0n3 --rw read --bs 64k --size 8m -o /work/zr.json
check zoned_read_json cat /work/zr.json
check zbd_seq fathom run /dev/nvme0n3 --zonemode zbd --rw write --bs 256k --size 32m --i-know-this-destroys-data -o /work/zs.json
check zbd_seq_json cat /work/zs.json
check zbd_seq_fio fio --name=z --filename=/dev/nvme0n3 --zonemode=zbd --rw=write --bs=256k --size=32m --direct=1 --output-format=json
check zbd_rand fathom run /dev/nvme0n3 --zonemode zbd --rw randwrite --bs 64k --size 64m --io-size 192m --i-know-this-destroys-data -o /work/zw.json
check zbd_rand_json cat /work/zw.json
check zbd_read fathom run /dev/nvme0n3 --zonemode zbd --rw randread --bs 4k --size 64m --io-size 4m -o /work/zrr.json
check zbd_read_json cat /work/zrr.json
check zbd_not_zoned fathom run /dev/nvme0n2 --zonemode zbd --rw write --bs 4k --size 4m --i-know-this-destroys-data
printf '[global]\nname=zbd-rand-write\ngroup_reporting\nrw=randwrite\nzonemode=zbd\nzonesize=8M\nmax_open_zones=4\nbs=512K\ndirect=1\nnumjobs=4\nio_size=32M\n[dev1]\nfilename=/dev/nvme0n3\nioengine=psync\n' > /work/zbd-rand-write.fio
printf '[global]\nname=zbd-rand-write-gc\ngroup_reporting\nrw=randwrite\nzonemode=zbd\nzonesize=8M\nbs=1M\ndirect=1\nio_size=128M\n[dev1]\nfilename=/dev/nvme0n3\nsize=8z\noffset=4z\nioengine=psync\nzone_reset_threshold=0.7\nzone_reset_frequency=0.125\n' > /work/zbd-rand-write-zone-reset-gc.fio
printf '[global]\nname=zbd-seq-read\nrw=read\nbs=256K\ndirect=1\nnumjobs=1\nzonemode=zbd\nzonesize=8M\nread_beyond_wp=0\n[dev1]\nfilename=/dev/nvme0n3\noffset=0\nsize=16z\nioengine=libaio\niodepth=16\n' > /work/zbd-seq-read.fio
check ex_rand_write_fio fio /work/zbd-rand-write.fio --output-format=json
check ex_rand_write fathom run /work/zbd-rand-write.fio --i-know-this-destroys-data -o /work/ex1.json
check ex_rand_write_json cat /work/ex1.json
check ex_reset_gc_fio fio /work/zbd-rand-write-zone-reset-gc.fio --output-format=json
check ex_reset_gc fathom run /work/zbd-rand-write-zone-reset-gc.fio --i-know-this-destroys-data -o /work/ex2.json
check ex_reset_gc_json cat /work/ex2.json
check ex_reset_gc_fio_text fio /work/zbd-rand-write-zone-reset-gc.fio
printf '[global]\ngroup_reporting\nzonemode=zbd\nzonesize=8M\ndirect=1\ntime_based\nruntime=2\nfilename=/dev/nvme0n3\noffset=4z\n[warmup]\nrw=randwrite\nbs=2M\nsize=8z\nioengine=libaio\nruntime=1\n[wjob]\nwait_for=warmup\nrw=randwrite\nbs=2M\nsize=8z\nioengine=libaio\nflow=128\n[trimjob]\nwait_for=warmup\nrw=randtrim\nbs=8M\nsize=8z\nioengine=psync\nflow=1\n' > /work/zbd-rand-write-trim-gc.fio
check ex_trim_gc_fio fio /work/zbd-rand-write-trim-gc.fio --output-format=json
check ex_trim_gc fathom run /work/zbd-rand-write-trim-gc.fio --i-know-this-destroys-data -o /work/ex4.json
check ex_trim_gc_json cat /work/ex4.json
check ex_seq_read_fio fio /work/zbd-seq-read.fio --output-format=json
check ex_seq_read fathom run /work/zbd-seq-read.fio -o /work/ex3.json
check ex_seq_read_json cat /work/ex3.json
printf '[global]\nname=libzbc-rand-write\ngroup_reporting\nrw=randwrite\nzonemode=zbd\nzonesize=8M\nmax_open_zones=4\nbs=512K\ndirect=1\nnumjobs=4\nio_size=32M\n[dev1]\nfilename=/dev/nvme0n3\nioengine=libzbc\n' > /work/libzbc-rand-write.fio
printf '[global]\nname=libzbc-seq-read\nrw=read\nbs=1M\ndirect=1\nnumjobs=1\nzonemode=zbd\nzonesize=8M\nread_beyond_wp=0\n[dev1]\nfilename=/dev/nvme0n3\noffset=4z\nsize=8z\nioengine=libzbc\n' > /work/libzbc-seq-read.fio
printf '[global]\nfilename=/dev/ng0n3\nioengine=io_uring_cmd\ncmd_type=nvme\nzonemode=zbd\nsize=16m\niodepth=1\nbs=256K\nverify=crc32c\nstonewall=1\n[rand-write]\nrw=randwrite\n[write-opts]\nrw=write\nregisterfiles=1\nsqthread_poll=1\nsqthread_poll_cpu=0\n[randwrite-opts]\nrw=randwrite\nsqthread_poll=1\nsqthread_poll_cpu=0\nnonvectored=1\nregisterfiles=1\n' > /work/uring-cmd-zoned.fio
printf '[global]\nzonemode=zbd\nrw=write\nsize=8m\niodepth=1\nbs=4K\ndirect=1\nthread=1\nramp_time=1\nnorandommap=1\nverify=crc32c\nallow_file_create=0\n[default]\n[override]\nrw=${FIO_RW}\niodepth=${FIO_IODEPTH}\nbs=${FIO_BS}\n' > /work/xnvme-zoned.fio
sed 's/libzbc$/psync/' /work/libzbc-rand-write.fio > /work/libzbc-rand-write-psync.fio
sed 's/libzbc$/psync/' /work/libzbc-seq-read.fio > /work/libzbc-seq-read-psync.fio
check lz_rand_write_fio fio /work/libzbc-rand-write-psync.fio --output-format=json
check lz_rand_write fathom fio /work/libzbc-rand-write.fio --i-know-this-destroys-data --output-format=json
check lz_seq_read_fio fio /work/libzbc-seq-read-psync.fio --output-format=json
check lz_seq_read fathom fio /work/libzbc-seq-read.fio --output-format=json
check ucmd_zoned_fio fio /work/uring-cmd-zoned.fio --output-format=json
check ucmd_zoned fathom fio /work/uring-cmd-zoned.fio --i-know-this-destroys-data --output-format=json
check xnvme_zoned_fio fio /work/xnvme-zoned.fio --section=default --ioengine=io_uring --sqthread_poll=1 --filename=/dev/nvme0n3 --output-format=json
check xnvme_zoned fathom fio /work/xnvme-zoned.fio --section=default --ioengine=io_uring --sqthread_poll=1 --filename=/dev/nvme0n3 --i-know-this-destroys-data --output-format=json
printf '[global]\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\ncmd_type=nvme\nsize=8m\niodepth=32\nbs=4K\nthread=1\nstonewall=1\n[rand-write]\nrw=randwrite\nsqthread_poll=1\n[rand-read]\nrw=randread\n[write-opts]\nrw=write\nsqthread_poll=1\nsqthread_poll_cpu=0\nnonvectored=1\nregisterfiles=1\n' > /work/uring-cmd-ng.fio
check ucmd_ng_fio fio /work/uring-cmd-ng.fio --output-format=json
check ucmd_ng fathom fio /work/uring-cmd-ng.fio --i-know-this-destroys-data --output-format=json
check ucmd_flush fathom run /dev/ng0n2 --engine io_uring_cmd --rw write --bs 64k --iodepth 4 --size 8m --fsync 8 --i-know-this-destroys-data -o /work/uf.json
check ucmd_flush_json cat /work/uf.json
check ucmd_block_node fathom run /dev/nvme0n1 --engine io_uring_cmd --rw randread --bs 4k --size 16m
check ucmd_char_plain fathom run /dev/ng0n1 --rw randread --bs 4k --size 16m
check ucmd_trim fathom run /dev/ng0n1 --engine io_uring_cmd --rw randtrim --bs 4k --size 16m --i-know-this-destroys-data
check ucmd_zoned_deep fathom run /dev/ng0n3 --engine io_uring_cmd --zonemode zbd --iodepth 4 --rw write --bs 256k --size 32m --i-know-this-destroys-data
check zbd_verify_bs fathom run /dev/nvme0n3 --zonemode zbd --rw write --bs 3m --size 48m --verify --i-know-this-destroys-data
check ucmd_sign mke2fs -q -F /dev/nvme0n2
check ucmd_mounted_data fathom run /dev/ng0n2 --engine io_uring_cmd --rw write --bs 4k --size 4m
check ucmd_unsign dd if=/dev/zero of=/dev/nvme0n2 bs=1M count=2
check fill fathom run /dev/nvme0n1 --rw write --bs 1m --offset 200m --size 8m --i-know-this-destroys-data
check pts_format fathom pts iops /dev/nvme0n1 --active-range 10 --purge format --round 1s --max-rounds 5 --block-sizes 4k --mixes 100 --threads 1 --depth 4 --i-know-this-destroys-data -o /work/pts.json
check erased sh -c 'dd if=/dev/nvme0n1 bs=1M skip=200 count=8 2>/dev/null | tr -d "\\000" | wc -c'
check pts_sanitize fathom pts iops /dev/nvme0n1 --purge sanitize --i-know-this-destroys-data
check mkfs mke2fs -q /dev/nvme0n2
check format_fs fathom pts iops /dev/nvme0n2 --purge format --block-sizes 4k --mixes 100 --i-know-this-destroys-data -o /work/fs.json
check format_fs_left ls /work
for i in $(seq 100); do [ -e /dev/sda ] && break; sleep 0.1; done
check sata fathom run /dev/sda --rw write --bs 64k --size 4m --i-know-this-destroys-data -o /work/s.json
check sata_json cat /work/s.json
mv /bin/smartctl /tmp/smartctl
check no_smartctl fathom run /dev/sda --rw read --bs 64k --size 4m -o /work/n.json
mv /tmp/smartctl /bin/smartctl
check no_smartctl_json cat /work/n.json
"#;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Interrupts taken by the controller's I/O queues (nvme0q1, nvme0q2, ...;
/// q0 is the admin queue), from /proc/interrupts.
fn io_queue_interrupts(proc_interrupts: &str) -> u64 {
    proc_interrupts
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .last()
                .is_some_and(|q| q.starts_with("nvme0q") && q != "nvme0q0")
        })
        .flat_map(|l| {
            l.split_whitespace()
                .skip(1)
                .map_while(|w| w.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

#[test]
fn fathom_on_the_nvme_driver() {
    let guest = match Guest::find() {
        Ok(g) => g,
        Err(why) => {
            eprintln!("SKIP: no NVMe guest here: {why}");
            return;
        }
    };
    if guest::found("smartctl").is_none() {
        eprintln!("SKIP: no NVMe guest here: smartctl (smartmontools) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let booted = guest.boot(
        dir.path(),
        &[
            Namespace {
                size_mib: 256,
                lba_bytes: 512,
                zoned: false,
            },
            Namespace {
                size_mib: 64,
                lba_bytes: 4096,
                zoned: false,
            },
            Namespace {
                size_mib: 128,
                lba_bytes: 4096,
                zoned: true,
            },
        ],
        &Extras {
            sata_mib: Some(32),
            programs: &["smartctl", "fio"],
        },
        CHECKS,
    );
    // What each check took inside the guest, to keep the boot in CI's time.
    for took in booted
        .console
        .lines()
        .filter_map(|l| l.split_once("@@@TOOK "))
    {
        let mut words = took.1.split_whitespace();
        let name = words.next().unwrap_or("");
        let span: Vec<f64> = words.filter_map(|w| w.parse().ok()).collect();
        if let [began, ended] = span[..] {
            println!("guest check {name}: {:.1} s", ended - began);
        }
    }

    // What the drive counted: who it is, and the bytes it saw written,
    // within one of its 512,000-byte data units of fathom's.
    let (text, rc) = booted.check("write");
    assert_eq!(rc, 0, "{text}");
    let drive_line = text.lines().find(|l| l.contains("drive nvme0n1"));
    println!("{}", drive_line.unwrap_or(text));
    assert!(
        text.contains("drive nvme0n1 (QEMU NVMe Ctrl, serial FATHOM0001"),
        "{text}"
    );
    let w = json(booted.check("write_json").0);
    let run = &w["results"][0];
    let device = &run["devices"][0];
    assert_eq!(device["identity"]["serial"], "FATHOM0001");
    assert_eq!(device["identity"]["lba_bytes"], 512);
    assert_eq!(device["identity"]["capacity_bytes"], 256u64 << 20);
    let ours = run["total"]["write"]["bytes"].as_u64().unwrap();
    let drives = device["host_written_bytes"].as_u64().unwrap();
    assert_eq!(ours, 96 << 20);
    println!("fathom wrote {ours} bytes; the drive counted {drives}");
    assert!(
        drives.abs_diff(ours) <= 512_000,
        "the drive counted {drives} bytes written, fathom wrote {ours}"
    );
    assert!(device["before"]["temperature_c"].as_f64().unwrap() > 0.0);
    assert_eq!(device["source"], "nvme");
    assert_eq!(device["identity"]["namespace"], 1);
    assert_eq!(device["host_count_step_bytes"], 512_000);
    // QEMU's controller keeps no OCP C0h log and has used none of its
    // endurance: both figures are absent, each with its reason.
    let not_counted = device["not_counted"].to_string();
    println!("not counted: {not_counted}");
    assert!(
        not_counted
            .contains("write amplification: the drive does not count what it writes to its media"),
        "{not_counted}"
    );
    assert!(
        not_counted.contains("endurance: the drive has used under 1%"),
        "{not_counted}"
    );
    assert!(device.get("write_amplification").is_none(), "{device}");

    // --hipri on a poll queue: the reads completed, and the I/O queues
    // took no interrupt meanwhile, so the kernel polled for them.
    let (text, rc) = booted.check("hipri");
    assert_eq!(rc, 0, "{text}");
    let h = json(booted.check("hipri_json").0);
    let reads = h["results"][0]["total"]["read"]["ios"].as_u64().unwrap();
    assert!(reads > 100, "{reads} reads");
    let before = io_queue_interrupts(booted.check("interrupts_before").0);
    let after = io_queue_interrupts(booted.check("interrupts_after").0);
    println!("{reads} reads under --hipri; I/O queue interrupts {before} before, {after} after");
    assert_eq!(
        before,
        after,
        "{reads} polled reads took {} interrupts",
        after - before
    );

    // A host-managed zoned namespace: a write anywhere but a zone's write
    // pointer would fail mid-run, so writes are refused up front (one line,
    // nothing written); reads run, and the result records the zones.
    let (text, rc) = booted.check("zoned_write");
    println!("zoned write: {text}");
    assert_eq!(rc, 2, "{text}");
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(
        text.contains("host-managed zoned device (16 zones of 8 MiB, 4 open at most"),
        "{text}"
    );
    assert!(text.contains("--zonemode zbd"), "{text}");
    assert!(!booted.check("zoned_write_left").0.contains("z.json"));
    let (text, rc) = booted.check("zoned_read");
    assert_eq!(rc, 0, "{text}");
    let z = json(booted.check("zoned_read_json").0);
    let zoned = &z["results"][0]["targets"][0]["facts"]["device"]["zoned"];
    println!("zones: {zoned}");
    assert_eq!(zoned["model"], "host-managed", "{zoned}");
    assert_eq!(zoned["zone_bytes"], 8u64 << 20, "{zoned}");
    assert_eq!(zoned["zones"], 16, "{zoned}");
    zoned_by_zone(&booted);
    fios_other_zoned_examples(&booted);
    passthrough_beside_fio(&booted);

    // The history keeps the drive by its serial: a run through another
    // name for it is the same target, found by the name it has now.
    assert_eq!(booted.check("keep_one").1, 0);
    assert_eq!(booted.check("keep_two").1, 0);
    let (text, rc) = booted.check("kept");
    println!("kept: {text}");
    assert_eq!(rc, 0, "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("read 128k")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    for row in rows {
        assert!(row.contains("serial FATHOM0001 namespace 1"), "{text}");
    }

    // A block below the namespace's logical block is refused in one line,
    // and nothing is written.
    let (text, rc) = booted.check("below_lba");
    println!("below the LBA size: {text}");
    assert_eq!(rc, 2, "{text}");
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(text.contains("4096"), "{text}");
    assert!(!booted.check("below_lba_left").0.contains("b.json"));

    // A true purge: Format NVM with a user data erase. The device was
    // filled with random data; past the active range, where nothing is
    // written after the purge, it reads back as zeros.
    let (text, rc) = booted.check("fill");
    assert_eq!(rc, 0, "{text}");
    let (text, rc) = booted.check("pts_format");
    assert_eq!(rc, 0, "{text}");
    let (text, rc) = booted.check("erased");
    assert_eq!(rc, 0, "{text}");
    assert_eq!(
        text.trim(),
        "0",
        "8 MiB past the active range read back erased: {text} bytes were not"
    );
    // Sanitize: the controller has none, and says so.
    let (text, rc) = booted.check("pts_sanitize");
    println!("sanitize: {text}");
    assert_eq!(rc, 2, "{text}");
    assert!(text.contains("SANICAP"), "{text}");
    // A namespace holding a file system is not formatted, and nothing is
    // written.
    assert_eq!(booted.check("mkfs").1, 0);
    let (text, rc) = booted.check("format_fs");
    println!("format of a file system: {text}");
    assert_eq!(rc, 2, "{text}");
    // The plan's line, then the refusal's.
    let refusal = text.trim().lines().last().unwrap();
    assert!(
        refusal.contains("ext2") || refusal.contains("file system"),
        "{text}"
    );
    assert!(!booted.check("format_fs_left").0.contains("fs.json"));

    // A SATA disk: what it is and counted comes through smartctl, and
    // where smartctl is missing the run goes on with the reason.
    let (text, rc) = booted.check("sata");
    let drive_line = text.lines().find(|l| l.contains("drive sda"));
    println!("SATA: {}", drive_line.unwrap_or(text));
    assert_eq!(rc, 0, "{text}");
    let s = json(booted.check("sata_json").0);
    let device = &s["results"][0]["devices"][0];
    println!("SATA device: {device}");
    assert_eq!(device["source"], "smartctl", "{device}");
    assert_eq!(device["identity"]["serial"], "FATHOMSATA1", "{device}");
    assert_eq!(device["identity"]["model"], "FATHOM SATA DISK", "{device}");
    assert_eq!(
        device["identity"]["capacity_bytes"],
        32u64 << 20,
        "{device}"
    );
    let (text, rc) = booted.check("no_smartctl");
    assert_eq!(rc, 0, "{text}");
    let n = json(booted.check("no_smartctl_json").0);
    let why = n["results"][0]["devices"][0]["unavailable"]
        .as_str()
        .unwrap();
    assert!(why.contains("smartctl is not installed"), "{why}");
}

/// A drive that cannot say what it counted (this host's virtio disk, a
/// loop device) is listed with the reason, never with zeros, and the run
/// goes on.
#[test]
fn a_disk_that_keeps_no_counts_is_named_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    common::run_ok(&[
        "run",
        dir.path().join("f.dat").to_str().unwrap(),
        "--size",
        "1m",
        "--runtime",
        "200ms",
        "-o",
        out.to_str().unwrap(),
    ]);
    let doc = json(&std::fs::read_to_string(&out).unwrap());
    let devices = doc["results"][0]["devices"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if devices.is_empty() {
        eprintln!("SKIP: the test directory sits on no disk (tmpfs, overlay)");
        return;
    }
    for d in devices {
        match d["unavailable"].as_str() {
            Some(why) => {
                assert!(!why.is_empty());
                assert!(d.get("host_written_bytes").is_none(), "{d}");
            }
            None => assert!(d["identity"]["serial"].is_string(), "{d}"),
        }
    }
}

/// `--zonemode zbd` on the zoned namespace: writes go zone by zone at the
/// write pointers (no write fails), a sequential pass does fio's count of
/// writes, random writes past the zones' room reset full zones (each
/// counted with its time), reads stay below the pointers, and a device
/// without zones is refused in one line.
fn zoned_by_zone(booted: &guest::Booted) {
    let (text, rc) = booted.check("zbd_seq");
    assert_eq!(rc, 0, "{text}");
    let seq = json(booted.check("zbd_seq_json").0);
    let w = &seq["results"][0];
    assert_eq!(w["total"]["write"]["ios"], 128, "{w}");
    assert_eq!(
        w["targets"][0]["errors"]["count"].as_u64().unwrap_or(0),
        0,
        "{w}"
    );
    let (fio, rc) = booted.check("zbd_seq_fio");
    if rc == 127 || fio.contains("not found") {
        println!("fio is not in the guest: the sequential count is checked against 128 alone");
    } else {
        let start = fio.find('{').unwrap_or(0);
        let doc = json(&fio[start..]);
        assert_eq!(
            doc["jobs"][0]["write"]["total_ios"], w["total"]["write"]["ios"],
            "{fio}"
        );
    }

    let (text, rc) = booted.check("zbd_rand");
    println!("zbd randwrite: {text}");
    assert_eq!(rc, 0, "{text}");
    let rand = json(booted.check("zbd_rand_json").0);
    let w = &rand["results"][0];
    assert_eq!(w["total"]["write"]["ios"], 3072, "{w}");
    assert_eq!(
        w["targets"][0]["errors"]["count"].as_u64().unwrap_or(0),
        0,
        "{w}"
    );
    let resets = &w["zone_resets"];
    println!("zone resets: {resets}");
    // 192 MiB into 64 MiB of zones: at least 16 of the 8 zones' fills
    // were reset (the first pass found them written by the sequential
    // run, which filled 4 of them).
    assert!(resets["count"].as_u64().unwrap() >= 16, "{resets}");
    assert!(resets["lat_ns"]["max"].as_f64().unwrap() > 0.0, "{resets}");

    let (text, rc) = booted.check("zbd_read");
    assert_eq!(rc, 0, "{text}");
    let read = json(booted.check("zbd_read_json").0);
    let w = &read["results"][0];
    assert_eq!(w["total"]["read"]["ios"], 1024, "{w}");
    assert_eq!(
        w["targets"][0]["errors"]["count"].as_u64().unwrap_or(0),
        0,
        "{w}"
    );

    let (text, rc) = booted.check("zbd_not_zoned");
    assert_eq!(rc, 2, "{text}");
    assert!(text.contains("needs a zoned block device"), "{text}");
    fios_zoned_examples(booted);
}

/// fio's zbd example job files, their sizes cut to the guest's namespace
/// (8 MiB zones, 4 open at most) and the random writers bound by io_size,
/// not time (under emulation on a busy host a 2 s window can pass with
/// every worker's first I/O still in the device): fathom runs each as it
/// stands, without an error, and does fio's count where the job is bound
/// by size; the zone-reset one resets zones by its rule, as fio does.
fn fios_zoned_examples(booted: &guest::Booted) {
    let fio_json = |check: &str| -> Option<Value> {
        let (text, rc) = booted.check(check);
        if rc == 127 || text.contains("not found") {
            return None;
        }
        assert_eq!(rc, 0, "{check}: {text}");
        Some(json(&text[text.find('{').unwrap_or(0)..]))
    };
    for (example, name) in [
        ("ex_rand_write", "zbd-rand-write"),
        ("ex_reset_gc", "zbd-rand-write-zone-reset-gc"),
        ("ex_seq_read", "zbd-seq-read"),
        ("ex_trim_gc", "zbd-rand-write-trim-gc"),
    ] {
        let (text, rc) = booted.check(example);
        println!("{name}: {text}");
        assert_eq!(rc, 0, "{name}: {text}");
        let doc = json(booted.check(&format!("{example}_json")).0);
        for w in doc["results"].as_array().unwrap() {
            let errors = w["targets"][0]["errors"]["count"].as_u64().unwrap_or(0);
            assert_eq!(errors, 0, "{name}: {w}");
        }
        let ours = &doc["results"][0];
        let theirs = fio_json(&format!("{example}_fio"));
        let their_job = theirs.as_ref().map(|d| d["jobs"][0].clone());
        println!(
            "{name}: fathom writes {} reads {} resets {}; fio writes {} reads {} resets {}",
            ours["total"]["write"]["ios"],
            ours["total"]["read"]["ios"],
            ours["zone_resets"]["count"],
            their_job
                .as_ref()
                .map_or(Value::Null, |j| j["write"]["total_ios"].clone()),
            their_job
                .as_ref()
                .map_or(Value::Null, |j| j["read"]["total_ios"].clone()),
            their_job
                .as_ref()
                .map_or(Value::Null, |j| j["zone_resets"].clone()),
        );
        match example {
            "ex_seq_read" => {
                if let Some(job) = &their_job {
                    assert_eq!(
                        ours["total"]["read"]["ios"], job["read"]["total_ios"],
                        "{name}"
                    );
                }
            }
            "ex_trim_gc" => {
                // The garbage collector's trims are zone resets: each found
                // a zone holding data, and none failed (the errors above).
                let trims: u64 = doc["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| w["total"]["trim"]["ios"].as_u64().unwrap_or(0))
                    .sum();
                println!("{name}: fathom trims {trims}");
                assert!(trims > 0, "{name}: {doc}");
            }
            "ex_reset_gc" => {
                let resets = ours["zone_resets"]["count"].as_u64().unwrap();
                let writes = ours["total"]["write"]["ios"].as_u64().unwrap();
                // io_size=128M of 1 MiB writes.
                assert_eq!(writes, 128, "{name}: {ours}");
                assert!(resets > 0, "{name}: {ours}");
                // The job's rule bounds the count: its 8 zones of 8 MiB hold
                // 64 writes of 1 MiB, so every 8 writes past those need a
                // reset at least; past the threshold every 8th write resets
                // one (zone_reset_frequency=0.125), and a full zone chosen
                // resets too, so at most a quarter of the writes, plus the
                // 8 zones found full at the start.
                let floor = writes.saturating_sub(64) / 8;
                let ceiling = writes / 4 + 8;
                assert!(
                    (floor..=ceiling).contains(&resets),
                    "{name}: {resets} resets for {writes} writes, outside {floor}..={ceiling}"
                );
                // fio says its resets in its text alone ("; N zone resets").
                // Its count swings between runs of the same job (0.75 a
                // write in one, far fewer in others), so it is printed for
                // a reader, not asserted against.
                let (text, rc) = booted.check("ex_reset_gc_fio_text");
                let fio_resets = text
                    .lines()
                    .find_map(|l| l.trim_end().strip_suffix(" zone resets"))
                    .and_then(|l| l.rsplit("; ").next())
                    .and_then(|n| n.trim().parse::<f64>().ok());
                let fio_writes = their_job
                    .as_ref()
                    .and_then(|j| j["write"]["total_ios"].as_f64());
                if let (0, Some(fr), Some(fw)) = (rc, fio_resets, fio_writes) {
                    let ours = resets as f64 / writes as f64;
                    println!(
                        "{name}: resets per write: fathom {ours:.3}, fio {:.3}",
                        fr / fw
                    );
                }
            }
            // 4 jobs of 32 MiB in 512 KiB writes.
            "ex_rand_write" => {
                assert_eq!(ours["total"]["write"]["ios"], 256, "{name}: {ours}");
                if let Some(job) = &their_job {
                    assert_eq!(job["write"]["total_ios"], 256, "{name}: fio");
                }
            }
            _ => unreachable!("{example} has no check of its counts"),
        }
    }
}

/// fio's JSON of a check, or None when fio is not in the guest.
fn fio_doc(booted: &guest::Booted, check: &str) -> Option<Value> {
    let (text, rc) = booted.check(check);
    if rc == 127 || text.contains("not found") {
        return None;
    }
    assert_eq!(rc, 0, "{check}: {text}");
    Some(json(&text[text.find('{').unwrap_or(0)..]))
}

/// Each job's (name, writes, reads, error) in fio's JSON, as `fathom fio`
/// writes it too.
fn fio_jobs(doc: &Value) -> Vec<(String, u64, u64, u64)> {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap_or("").to_string(),
                j["write"]["total_ios"].as_u64().unwrap_or(0),
                j["read"]["total_ios"].as_u64().unwrap_or(0),
                j["error"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The rest of fio 3.33's zbd examples, cut to the namespace: the two
/// libzbc ones (libzbc's reads and writes are the block layer's here;
/// Debian's fio has no libzbc, so fio runs them with psync), the
/// io_uring_cmd one with its verify, and xnvme-zoned's default section
/// as its own comment runs it, on io_uring. Each is bound by size and gives fio's
/// counts job by job; verify reads count as fio's reads.
fn fios_other_zoned_examples(booted: &guest::Booted) {
    for example in ["lz_rand_write", "lz_seq_read", "ucmd_zoned", "xnvme_zoned"] {
        let ours = fio_doc(booted, example).expect("fathom ran");
        let ours = fio_jobs(&ours);
        let theirs = fio_doc(booted, &format!("{example}_fio")).map(|d| fio_jobs(&d));
        println!("{example}: fathom {ours:?}, fio {theirs:?}");
        for job in &ours {
            assert_eq!(job.3, 0, "{example}: {job:?}");
            assert!(job.1 + job.2 > 0, "{example}: {job:?}");
        }
        let Some(theirs) = theirs else { continue };
        assert_eq!(ours.len(), theirs.len(), "{example}");
        for (o, t) in ours.iter().zip(&theirs) {
            match example {
                // After a ramp of a second, what is left of the pass is
                // timing's; fathom reads the whole pass (8 MiB of 4 KiB
                // blocks) back, and fio no more than that (its verify
                // reads made during the ramp are not counted).
                "xnvme_zoned" => {
                    assert_eq!(o.2, 2048, "{example}: {o:?}");
                    assert!(t.2 <= o.2, "{example}: {o:?} vs {t:?}");
                }
                _ => assert_eq!((o.1, o.2), (t.1, t.2), "{example}: {o:?} vs {t:?}"),
            }
        }
    }
}

/// `--engine io_uring_cmd` on the generic char nodes: fio's own example
/// job, cut to 8 MiB, gives fio's counts job by job; a flush is an NVMe
/// Flush; the block layer's counters, which do not see NVMe commands, are
/// left out; and every refusal is one line, exit 2.
fn passthrough_beside_fio(booted: &guest::Booted) {
    let ours = fio_jobs(&fio_doc(booted, "ucmd_ng").expect("fathom ran"));
    println!("uring-cmd-ng: fathom {ours:?}");
    assert_eq!(ours.len(), 3);
    for job in &ours {
        assert_eq!((job.1 + job.2, job.3), (2048, 0), "{job:?}");
    }
    if let Some(theirs) = fio_doc(booted, "ucmd_ng_fio") {
        assert_eq!(ours, fio_jobs(&theirs));
    }
    let (text, rc) = booted.check("ucmd_flush");
    assert_eq!(rc, 0, "{text}");
    let doc = json(booted.check("ucmd_flush_json").0);
    let run = &doc["results"][0];
    assert_eq!(run["spec"]["engine"], "io_uring_cmd", "{run}");
    assert_eq!(run["total"]["write"]["ios"], 128, "{run}");
    assert_eq!(
        run["targets"][0]["sync"]["count"], 16,
        "{}",
        run["targets"][0]
    );
    assert!(
        run["disks"].as_array().is_none_or(|d| d.is_empty()),
        "the block layer counts no NVMe command: {}",
        run["disks"]
    );
    for (check, says) in [
        ("ucmd_block_node", "name /dev/ng0n1"),
        (
            "ucmd_char_plain",
            "use --engine io_uring_cmd, or name its block node /dev/nvme0n1",
        ),
        ("ucmd_trim", "--rw randtrim trims"),
        ("ucmd_zoned_deep", "use --iodepth 1"),
        ("ucmd_mounted_data", "--i-know-this-destroys-data"),
        ("zbd_verify_bs", "--bs 3m does not divide the zone size 8m"),
    ] {
        let (text, rc) = booted.check(check);
        assert_eq!(rc, 2, "{check}: {text}");
        assert_eq!(text.trim().lines().count(), 1, "{check}: {text}");
        assert!(text.contains(says), "{check}: {text}");
    }
}
