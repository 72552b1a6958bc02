//! Writing a zoned block device zone by zone (fio's `zonemode=zbd`): each
//! write goes to its zone's write pointer, reads stay below it, a full zone
//! is reset before it is written again, and the zones open for writing at
//! once stay within the device's limit (or the one asked for).
//!
//! One table per device, shared by every worker on it (as fio shares its
//! zone array between jobs), behind one lock: an I/O to a zoned disk takes
//! far longer than the lock.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::spec::zbd::ZoneSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Zone {
    start: u64,
    /// Bytes that can be written in it (its capacity).
    capacity: u64,
    wp: u64,
    /// Writes queued to it and not yet complete: a reset waits for them.
    writing: u32,
    /// The worker whose writes those are: another's write would race
    /// them to the device and land off the pointer.
    writer: usize,
    /// In the set of zones open for writing, and which worker opened it.
    open: bool,
    opener: usize,
}

impl Zone {
    fn remainder(&self) -> u64 {
        self.start + self.capacity - self.wp
    }

    fn written(&self) -> u64 {
        self.wp - self.start
    }
}

/// What a write must do before it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritePlace {
    /// Write `len` bytes at `offset`, the zone's write pointer.
    At { offset: u64, len: u32 },
    /// The zone must be reset first (it is full, or the reset rule says
    /// so); writes to it are in flight: reap, then ask again.
    Wait,
    /// Reset the zone starting at `zone_start`, `zone_len` long, then
    /// write at its start.
    ResetThen {
        zone_start: u64,
        zone_len: u64,
        len: u32,
    },
}

/// Where a trim of a zoned device goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimPlace {
    /// Reset the zone that starts here.
    At(u64),
    /// Writes to it are in flight: reap, then ask again.
    Wait,
}

/// The zones of one device and which of them are open for writing.
#[derive(Debug)]
pub struct ZoneTable {
    zone_bytes: u64,
    zones: Vec<Zone>,
    max_open: Option<u32>,
    open: Vec<usize>,
    /// Zones each worker holds open (`--job-max-open-zones`).
    open_by: std::collections::HashMap<usize, u32>,
    rules: ZoneSpec,
    /// Writes left until the next reset the reset rule asks for.
    writes_to_reset: u64,
}

impl ZoneTable {
    /// From the zones the device reported: (start, capacity, write pointer)
    /// in bytes, all `zone_bytes` apart; `device_max_open` 0 is no limit.
    pub fn new(
        zone_bytes: u64,
        zones: &[(u64, u64, u64)],
        device_max_open: u32,
        rules: ZoneSpec,
    ) -> Self {
        let device = (device_max_open > 0).then_some(device_max_open);
        let max_open = match (rules.max_open, device) {
            (Some(asked), Some(limit)) => Some(asked.min(limit)),
            (asked, limit) => asked.or(limit),
        };
        ZoneTable {
            zone_bytes,
            zones: zones
                .iter()
                .map(|&(start, capacity, wp)| Zone {
                    start,
                    capacity,
                    wp: wp.clamp(start, start + capacity),
                    writing: 0,
                    writer: 0,
                    open: false,
                    opener: 0,
                })
                .collect(),
            max_open,
            open: Vec::new(),
            open_by: std::collections::HashMap::new(),
            rules,
            writes_to_reset: reset_period(rules),
        }
    }

    fn index(&self, offset: u64) -> usize {
        ((offset / self.zone_bytes) as usize).min(self.zones.len().saturating_sub(1))
    }

    /// The zones `[first, end)` that the byte range `[start, start + len)`
    /// covers whole or in part.
    fn range(&self, start: u64, len: u64) -> (usize, usize) {
        let first = self.index(start);
        let end = ((start + len).div_ceil(self.zone_bytes) as usize).min(self.zones.len());
        (first, end.max(first + 1))
    }

    /// Where a write of `len` bytes by `worker`, whose pattern chose
    /// `offset`, goes in the range `[start, start + span)`, as fio places
    /// it: the chosen zone if it is open or can be opened, else one of the
    /// open zones picked by the offset; a full zone is reset first. A zone
    /// another worker's writes are in flight to waits for them, as fio's
    /// zone lock makes it wait.
    pub fn place_write(
        &mut self,
        offset: u64,
        len: u32,
        min_len: u32,
        (start, span): (u64, u64),
        worker: usize,
    ) -> WritePlace {
        let (first, end) = self.range(start, span);
        let mut z = self.index(offset).clamp(first, end - 1);
        if !self.zones[z].open && !self.may_open(worker) {
            let in_range: Vec<usize> = self
                .open
                .iter()
                .copied()
                .filter(|&i| (first..end).contains(&i))
                .collect();
            if in_range.is_empty() {
                // Every open zone is another range's: one closes when full.
                return WritePlace::Wait;
            }
            let pick =
                ((offset - start) as u128 * in_range.len() as u128 / span.max(1) as u128) as usize;
            z = in_range[pick.min(in_range.len() - 1)];
        }
        if self.zones[z].writing > 0 && self.zones[z].writer != worker {
            return WritePlace::Wait;
        }
        if !self.zones[z].open {
            self.zones[z].open = true;
            self.zones[z].opener = worker;
            self.open.push(z);
            *self.open_by.entry(worker).or_default() += 1;
        }
        let reset_due = self.reset_due(first, end, span);
        let zone = &mut self.zones[z];
        if reset_due || zone.remainder() < u64::from(min_len) {
            if zone.writing > 0 {
                return WritePlace::Wait;
            }
            self.writes_to_reset = reset_period(self.rules);
            let len = clip(len, zone.capacity, min_len);
            zone.wp = zone.start + u64::from(len);
            zone.writing = 1;
            zone.writer = worker;
            return WritePlace::ResetThen {
                zone_start: zone.start,
                zone_len: self.zone_bytes,
                len,
            };
        }
        let len = clip(len, zone.remainder(), min_len);
        let at = zone.wp;
        zone.wp += u64::from(len);
        zone.writing += 1;
        zone.writer = worker;
        WritePlace::At { offset: at, len }
    }

    fn may_open(&self, worker: usize) -> bool {
        let mine = self.open_by.get(&worker).copied().unwrap_or(0);
        self.max_open.is_none_or(|m| (self.open.len() as u32) < m)
            && self.rules.worker_max_open.is_none_or(|m| mine < m)
    }

    /// Zones open for writing by `worker`.
    pub fn opened_by(&self, worker: usize) -> u32 {
        self.open_by.get(&worker).copied().unwrap_or(0)
    }

    /// The reset rule: once the valid data in the range reaches the
    /// threshold, every 1/frequency-th write resets its zone.
    fn reset_due(&mut self, first: usize, end: usize, span: u64) -> bool {
        let Some((threshold, _)) = self.rules.reset else {
            return false;
        };
        let valid: u64 = self.zones[first..end].iter().map(Zone::written).sum();
        if (valid as f64) < span as f64 * threshold {
            return false;
        }
        self.writes_to_reset = self.writes_to_reset.saturating_sub(1);
        self.writes_to_reset == 0
    }

    /// A write queued by `place_write` ended (done or failed). A zone left
    /// with less room than `min_len` and no write in flight leaves the
    /// open set, so that another can open: only then has the device
    /// closed it too.
    pub fn write_done(&mut self, offset: u64, min_len: u32) {
        let z = self.index(offset);
        let zone = &mut self.zones[z];
        zone.writing = zone.writing.saturating_sub(1);
        if zone.writing == 0 && zone.open && zone.remainder() < u64::from(min_len) {
            zone.open = false;
            let opener = zone.opener;
            self.open.retain(|&i| i != z);
            if let Some(n) = self.open_by.get_mut(&opener) {
                *n = n.saturating_sub(1);
            }
        }
    }

    /// Where a read of `len` bytes whose pattern chose `offset` goes: below
    /// its zone's write pointer, in the chosen zone or (when it holds less
    /// than `min_len`) the next one that holds enough; None when no zone
    /// in the range does, or, for a sequential read that does not `wrap`
    /// (a size-bound pass), none ahead of it.
    pub fn place_read(
        &self,
        offset: u64,
        len: u32,
        min_len: u32,
        random: bool,
        wrap: bool,
        (start, span): (u64, u64),
    ) -> Option<(u64, u32)> {
        if self.rules.read_beyond_wp {
            return Some((offset, len));
        }
        let (first, end) = self.range(start, span);
        let chosen = self.index(offset).clamp(first, end - 1);
        let readable = |z: &Zone, at: u64| match random {
            true => z.written() >= u64::from(min_len),
            false => at + u64::from(min_len) <= z.wp,
        };
        let mut at = offset;
        let mut z = chosen;
        // A random read looks at every zone; a sequential one only ahead
        // (fio's end of the pass), unless it is to go round again.
        let n = end - first;
        let steps = match random || wrap {
            true => n,
            false => end - chosen,
        };
        for step in 0..steps {
            let i = first + (chosen - first + step) % n;
            if step > 0 {
                at = self.zones[i].start;
            }
            if readable(&self.zones[i], at) {
                z = i;
                break;
            }
            if step == steps - 1 {
                return None;
            }
        }
        let zone = &self.zones[z];
        let range = zone.written();
        let mut at = match (random, range <= u64::from(len)) {
            (_, true) => zone.start,
            (true, false) => {
                let moved =
                    offset.saturating_sub(self.zones[chosen].start) % (range - u64::from(len));
                zone.start + moved / u64::from(min_len) * u64::from(min_len)
            }
            (false, false) => at,
        };
        at = at.max(zone.start);
        let len = clip(len, zone.wp - at, min_len);
        Some((at, len))
    }

    /// Where a trim whose pattern chose `offset` goes: a trim of a zoned
    /// device is its zone's reset, as in fio, so it goes to the start of
    /// the chosen zone if that holds data, else (a random trim) of another
    /// that does; its pointer goes back to the start now. None: no zone
    /// in the range holds data. A zone being written waits for its writes.
    pub fn place_trim(
        &mut self,
        offset: u64,
        random: bool,
        (start, span): (u64, u64),
    ) -> Option<TrimPlace> {
        let (first, end) = self.range(start, span);
        let chosen = self.index(offset).clamp(first, end - 1);
        let n = end - first;
        let steps = if random { n } else { 1 };
        let z = (0..steps)
            .map(|step| first + (chosen - first + step) % n)
            .find(|&i| self.zones[i].written() > 0)?;
        let zone = &mut self.zones[z];
        if zone.writing > 0 {
            return Some(TrimPlace::Wait);
        }
        zone.wp = zone.start;
        Some(TrimPlace::At(zone.start))
    }

    /// Bytes written below the write pointers in the range.
    #[cfg(test)]
    fn valid_bytes(&self) -> u64 {
        self.zones.iter().map(Zone::written).sum()
    }
}

fn reset_period(rules: ZoneSpec) -> u64 {
    match rules.reset {
        Some((_, frequency)) if frequency > 0.0 => (1.0 / frequency).min(u32::MAX as f64) as u64,
        _ => u64::MAX,
    }
}

/// `len` cut to what fits in `room`, in whole `min_len` blocks.
fn clip(len: u32, room: u64, min_len: u32) -> u32 {
    if u64::from(len) <= room {
        return len;
    }
    let room = room / u64::from(min_len) * u64::from(min_len);
    room.min(u64::from(len)) as u32
}

/// A zoned device's table and the descriptor its zone commands go through.
pub struct ZonedDevice {
    table: Mutex<ZoneTable>,
    file: File,
}

impl ZonedDevice {
    /// Reads the device's zones (BLKREPORTZONE) into a table.
    pub fn open(
        file: File,
        zone_bytes: u64,
        device_max_open: u32,
        rules: ZoneSpec,
    ) -> io::Result<Self> {
        let zones = report_zones(&file)?;
        if zones.is_empty() {
            return Err(io::Error::other("the device reported no zones"));
        }
        Ok(ZonedDevice {
            table: Mutex::new(ZoneTable::new(zone_bytes, &zones, device_max_open, rules)),
            file,
        })
    }

    /// Resets one zone's write pointer (BLKRESETZONE); how long it took.
    pub fn reset(&self, zone_start: u64, zone_len: u64) -> io::Result<Duration> {
        let began = Instant::now();
        match super::trim::reset_zones(&self.file, zone_start, zone_len) {
            0 => Ok(began.elapsed()),
            errno => Err(io::Error::from_raw_os_error(-errno)),
        }
    }

    /// The zone table, whoever held it last (a worker that panicked with
    /// it left it as it was: each change to it is whole).
    pub fn table(&self) -> std::sync::MutexGuard<'_, ZoneTable> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
struct BlkZone {
    start: u64,
    len: u64,
    wp: u64,
    kind: u8,
    cond: u8,
    non_seq: u8,
    reset: u8,
    resv: [u8; 4],
    capacity: u64,
    reserved: [u8; 24],
}

#[repr(C)]
struct BlkZoneReportHeader {
    sector: u64,
    nr_zones: u32,
    flags: u32,
}

/// `_IOWR(0x12, 130, struct blk_zone_report)` of linux/blkzoned.h.
const BLKREPORTZONE: libc::c_ulong = 0xC010_1282;
/// The report carries the zone capacity (Linux 5.9).
const BLK_ZONE_REP_CAPACITY: u32 = 1;
/// A conventional zone: no write pointer.
const BLK_ZONE_TYPE_CONVENTIONAL: u8 = 1;

/// Every zone as (start, capacity, write pointer) in bytes; a
/// conventional zone is reported full-sized and empty (writable anywhere:
/// fathom treats it as a zone whose pointer it keeps itself).
fn report_zones(file: &File) -> io::Result<Vec<(u64, u64, u64)>> {
    const BATCH: usize = 256;
    let header = std::mem::size_of::<BlkZoneReportHeader>();
    let zone = std::mem::size_of::<BlkZone>();
    let mut buf = vec![0u64; (header + BATCH * zone) / 8];
    let mut zones = Vec::new();
    let mut sector = 0u64;
    loop {
        buf.fill(0);
        // SAFETY: buf is 8-byte aligned and large enough for the header
        // and BATCH zones; the kernel fills at most nr_zones of them.
        unsafe {
            let h = buf.as_mut_ptr() as *mut BlkZoneReportHeader;
            (*h).sector = sector;
            (*h).nr_zones = BATCH as u32;
            if libc::ioctl(file.as_raw_fd(), BLKREPORTZONE, buf.as_mut_ptr()) < 0 {
                return Err(io::Error::last_os_error());
            }
            let h = &*(buf.as_ptr() as *const BlkZoneReportHeader);
            let got = h.nr_zones as usize;
            if got == 0 {
                break;
            }
            let first = (buf.as_ptr() as *const u8).add(header) as *const BlkZone;
            for i in 0..got {
                let z = *first.add(i);
                let capacity = match h.flags & BLK_ZONE_REP_CAPACITY {
                    0 => z.len,
                    _ => z.capacity,
                };
                let wp = match z.kind {
                    BLK_ZONE_TYPE_CONVENTIONAL => z.start,
                    _ => z.wp,
                };
                zones.push((z.start * 512, capacity * 512, wp * 512));
                sector = z.start + z.len;
            }
        }
    }
    Ok(zones)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn rules() -> ZoneSpec {
        ZoneSpec {
            mode: crate::spec::zbd::ZoneMode::Zbd,
            ..ZoneSpec::default()
        }
    }

    fn empty(n: u64) -> Vec<(u64, u64, u64)> {
        (0..n)
            .map(|i| (i * 4 * MIB, 4 * MIB, i * 4 * MIB))
            .collect()
    }

    #[test]
    fn a_write_goes_to_its_zones_write_pointer_and_moves_it() {
        let mut t = ZoneTable::new(4 * MIB, &empty(4), 0, rules());
        let all = (0, 16 * MIB);
        assert_eq!(
            t.place_write(5 * MIB, 65536, 4096, all, 0),
            WritePlace::At {
                offset: 4 * MIB,
                len: 65536
            }
        );
        assert_eq!(
            t.place_write(6 * MIB, 65536, 4096, all, 0),
            WritePlace::At {
                offset: 4 * MIB + 65536,
                len: 65536
            }
        );
        assert_eq!(t.opened_by(0), 1);
        assert_eq!(t.valid_bytes(), 2 * 65536);
    }

    #[test]
    fn a_full_zone_is_reset_once_its_writes_are_done() {
        let zones = vec![(0, 4 * MIB, 4 * MIB), (4 * MIB, 4 * MIB, 4 * MIB)];
        let mut t = ZoneTable::new(4 * MIB, &zones, 0, rules());
        let place = t.place_write(0, 1 << 20, 4096, (0, 8 * MIB), 0);
        assert_eq!(
            place,
            WritePlace::ResetThen {
                zone_start: 0,
                zone_len: 4 * MIB,
                len: 1 << 20
            }
        );
        // Filled to the end by writes still in flight: it waits for them.
        for _ in 0..3 {
            assert!(matches!(
                t.place_write(0, 1 << 20, 4096, (0, 8 * MIB), 0),
                WritePlace::At { .. }
            ));
        }
        assert_eq!(
            t.place_write(0, 1 << 20, 4096, (0, 8 * MIB), 0),
            WritePlace::Wait
        );
        for i in 0..4 {
            t.write_done(i * MIB, 4096);
        }
        assert!(matches!(
            t.place_write(0, 1 << 20, 4096, (0, 8 * MIB), 0),
            WritePlace::ResetThen { .. }
        ));
    }

    #[test]
    fn past_the_open_limit_writes_go_to_the_open_zones() {
        let limited = ZoneSpec {
            max_open: Some(2),
            ..rules()
        };
        let mut t = ZoneTable::new(4 * MIB, &empty(8), 0, limited);
        let all = (0, 32 * MIB);
        for offset in [0, 4 * MIB, 8 * MIB, 20 * MIB, 28 * MIB] {
            match t.place_write(offset, 4096, 4096, all, 0) {
                WritePlace::At { offset, .. } => assert!(offset < 8 * MIB, "{offset}"),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(t.opened_by(0), 2);
        // The device's own limit holds when none is asked for, and the
        // lower of the two when both are.
        assert_eq!(
            ZoneTable::new(4 * MIB, &empty(8), 3, rules()).max_open,
            Some(3)
        );
        assert_eq!(
            ZoneTable::new(4 * MIB, &empty(8), 3, limited).max_open,
            Some(2)
        );
    }

    #[test]
    fn a_zone_filled_leaves_the_open_set_for_another() {
        let limited = ZoneSpec {
            max_open: Some(1),
            ..rules()
        };
        let mut t = ZoneTable::new(4 * MIB, &empty(2), 0, limited);
        for _ in 0..4 {
            t.place_write(0, 1 << 20, 4096, (0, 8 * MIB), 0);
        }
        // Full, but its last writes are in flight: the device still has
        // it open, so no other zone opens yet.
        assert_eq!(t.opened_by(0), 1);
        assert!(matches!(
            t.place_write(4 * MIB, 4096, 4096, (0, 8 * MIB), 0),
            WritePlace::Wait
        ));
        for i in 0..4 {
            t.write_done(i * MIB, 4096);
        }
        assert_eq!(t.opened_by(0), 0);
        assert_eq!(
            t.place_write(4 * MIB, 4096, 4096, (0, 8 * MIB), 0),
            WritePlace::At {
                offset: 4 * MIB,
                len: 4096
            }
        );
    }

    #[test]
    fn a_zone_another_worker_is_writing_waits_for_it() {
        let mut t = ZoneTable::new(4 * MIB, &empty(2), 0, rules());
        let all = (0, 8 * MIB);
        assert!(matches!(
            t.place_write(0, 4096, 4096, all, 1),
            WritePlace::At { .. }
        ));
        // Its own next write queues behind it, in order; another's waits.
        assert!(matches!(
            t.place_write(0, 4096, 4096, all, 1),
            WritePlace::At { .. }
        ));
        assert_eq!(t.place_write(0, 4096, 4096, all, 2), WritePlace::Wait);
        t.write_done(0, 4096);
        t.write_done(4096, 4096);
        assert_eq!(
            t.place_write(0, 4096, 4096, all, 2),
            WritePlace::At {
                offset: 8192,
                len: 4096
            }
        );
    }

    #[test]
    fn a_trim_resets_a_zone_that_holds_data() {
        let zones = vec![
            (0, 4 * MIB, 0),
            (4 * MIB, 4 * MIB, 6 * MIB),
            (8 * MIB, 4 * MIB, 8 * MIB),
        ];
        let mut t = ZoneTable::new(4 * MIB, &zones, 0, rules());
        let all = (0, 12 * MIB);
        // Zone 0 is empty: a random trim goes on to zone 1, a sequential
        // one finds nothing there.
        assert_eq!(t.place_trim(0, false, all), None);
        assert_eq!(t.place_trim(MIB, true, all), Some(TrimPlace::At(4 * MIB)));
        assert_eq!(t.place_trim(MIB, true, all), None, "zone 1 was reset");
        assert!(
            matches!(t.place_write(4 * MIB, 4096, 4096, all, 0), WritePlace::At { offset, .. } if offset == 4 * MIB)
        );
        assert_eq!(t.place_trim(5 * MIB, true, all), Some(TrimPlace::Wait));
    }

    #[test]
    fn reads_stay_below_the_write_pointer() {
        let zones = vec![
            (0, 4 * MIB, MIB),
            (4 * MIB, 4 * MIB, 8 * MIB),
            (8 * MIB, 4 * MIB, 8 * MIB),
        ];
        let t = ZoneTable::new(4 * MIB, &zones, 0, rules());
        let all = (0, 12 * MIB);
        for offset in (0..12 * MIB).step_by(300 * 1024) {
            let (at, len) = t
                .place_read(offset / 4096 * 4096, 8192, 4096, true, false, all)
                .unwrap();
            let z = (at / (4 * MIB)) as usize;
            assert!(at + u64::from(len) <= zones[z].2, "{offset}: {at}+{len}");
            assert_ne!(z, 2, "the empty zone is never read");
        }
        // Sequential: past the pointer, on to the next zone with data.
        assert_eq!(
            t.place_read(MIB, 4096, 4096, false, false, all),
            Some((4 * MIB, 4096))
        );
        // Nothing ahead: the end of a size-bound pass, or round again.
        assert_eq!(t.place_read(8 * MIB, 4096, 4096, false, false, all), None);
        assert_eq!(
            t.place_read(8 * MIB, 4096, 4096, false, true, all),
            Some((0, 4096))
        );
        let nothing = ZoneTable::new(4 * MIB, &empty(2), 0, rules());
        assert_eq!(
            nothing.place_read(0, 4096, 4096, true, true, (0, 8 * MIB)),
            None
        );
    }

    /// Resets among 8 writes of 4 KiB to zone 0, its writes done each time.
    fn resets_in_eight_writes(zones: &[(u64, u64, u64)], rules: ZoneSpec) -> usize {
        let mut t = ZoneTable::new(4 * MIB, zones, 0, rules);
        (0..8)
            .filter(|_| {
                let p = t.place_write(0, 4096, 4096, (0, 8 * MIB), 0);
                t.write_done(0, 4096);
                matches!(p, WritePlace::ResetThen { .. })
            })
            .count()
    }

    #[test]
    fn the_reset_rule_resets_every_nth_write_past_the_threshold() {
        let reset = ZoneSpec {
            reset: Some((0.5, 0.25)),
            ..rules()
        };
        // Valid data is 3 MiB of 8 (under half): no resets at all.
        let under = [(0, 4 * MIB, 3 * MIB), (4 * MIB, 4 * MIB, 4 * MIB)];
        assert_eq!(resets_in_eight_writes(&under, reset), 0);
        // 5 MiB of 8: the 4th write resets zone 0; then 2 MiB and writes
        // of 4 KiB are under half, so no more.
        let over = [(0, 4 * MIB, 3 * MIB), (4 * MIB, 4 * MIB, 6 * MIB)];
        assert_eq!(resets_in_eight_writes(&over, reset), 1);
    }
}
