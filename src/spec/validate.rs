//! The checks of a workload spec that do not depend on its targets:
//! made where specs are built, before anything runs.

use super::*;

/// Limits that catch typos and absurd values before anything runs.
pub mod limits {
    pub const MIN_BS: u64 = 512;
    pub const MAX_BS: u64 = 16 << 20;
    pub const MAX_IODEPTH: u32 = 4096;
    pub const MAX_NUMJOBS: u32 = 1024;
    /// Long certification runs last days; years are a typo.
    pub const MAX_RUNTIME_S: f64 = 30.0 * 86400.0;
    /// All buffers of one workload must fit comfortably in memory.
    pub const MAX_BUFFER_BYTES: u64 = 4 << 30;
    /// Desktop benchmarks repeat a test up to 9 times; a hundred is plenty.
    pub const MAX_REPEAT: u32 = 100;
}

impl WorkloadSpec {
    /// Checks the knobs that do not depend on the target.
    pub fn validate(&self) -> Result<(), crate::util::error::UsageError> {
        use limits::*;
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        if !(1..=MAX_REPEAT).contains(&self.repeat) {
            return fail(format!("--repeat {}: from 1 to {MAX_REPEAT}", self.repeat));
        }
        if !(0.0..=MAX_RUNTIME_S).contains(&self.start_delay_s) {
            return fail(format!(
                "--start-delay {}: at most 30 days",
                crate::util::units::format_duration(self.start_delay_s)
            ));
        }
        self.zoned.check().map_err(crate::util::error::UsageError)?;
        if self.zoned.is_zbd() && self.verify == VerifyMode::Interleaved {
            // Each block is read back while the run goes on, by when its
            // zone may have been reset for the next writes.
            return fail(
                "--verify interleaved with --zonemode zbd: a zone may be reset before its blocks are read back; check after the run instead (--verify)".into(),
            );
        }
        if !self.streams.is_empty() {
            if self.repeat > 1 {
                return fail(
                    "--repeat runs one workload again: not a group of streams, whose repeats have no one figure to pick by".into(),
                );
            }
            return self.validate_streams();
        }
        if let Some(other) = self.wait_for.first() {
            return fail(format!(
                "--wait-for {other}: names another stream of the same group (--stream NAME:wait-for=OTHER,...), and this workload is not a stream"
            ));
        }
        if self.fsync > 0 && self.fdatasync > 0 {
            return fail("--fsync and --fdatasync: give one of them".into());
        }
        if self.targets.is_empty() {
            return fail("no target given".into());
        }
        self.validate_blocks()?;
        self.validate_pattern()?;
        self.validate_queues()?;
        self.validate_rates()
    }

    /// Block sizes, their alignment, and what the access pattern asks of them.
    fn validate_blocks(&self) -> Result<(), crate::util::error::UsageError> {
        use crate::util::units::format_bytes;
        use limits::*;
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        if !(MIN_BS..=MAX_BS).contains(&self.bs) {
            return fail(format!("--bs {} is outside 512 to 16m", self.bs));
        }
        if let Some(split) = &self.bssplit {
            split
                .validate(MIN_BS, MAX_BS)
                .map_err(|e| crate::util::error::UsageError(format!("--bssplit {split}: {e}")))?;
            if split.smallest() != self.bs {
                return fail(format!(
                    "--bs {} and --bssplit {split}: give one of them",
                    crate::util::units::format_block_size(self.bs)
                ));
            }
            if self.verify != VerifyMode::Off && !split.is_uniform() {
                return fail(format!(
                    "--verify checks blocks of one size: --bssplit {split} mixes sizes"
                ));
            }
        }
        if let Some(align) = self.block_align {
            if !(MIN_BS..=MAX_BS).contains(&align) || align % MIN_BS != 0 {
                return fail(format!(
                    "--block-align {align}: a multiple of 512 from 512 to 16m"
                ));
            }
            if !self.rw.is_random() {
                return fail(format!(
                    "--block-align aligns random offsets: it needs a random --rw (this workload is {})",
                    self.rw
                ));
            }
            if self.verify != VerifyMode::Off && align != self.bs {
                return fail(format!(
                    "--verify checks blocks of --bs: not with --block-align {}",
                    format_bytes(align)
                ));
            }
        }
        if self.arrivals == super::Arrivals::Poisson
            && self.target_rate().is_none()
            && self.direction_iops().iter().all(Option::is_none)
        {
            return fail(
                "--arrivals poisson spaces rated I/O: give --rate-iops, --rate-bw or --rate-read/--rate-write".into(),
            );
        }
        if let Some(c) = &self.cmdprio
            && !self.engine.caps().priority_per_io
        {
            return fail(format!(
                "--cmdprio {c}: the {} engine cannot give an I/O a priority of its own (io_uring can)",
                self.engine
            ));
        }
        if let Some(c) = &self.cmdprio
            && !c.by_size.is_empty()
        {
            let issued: Vec<u64> = match &self.bssplit {
                Some(split) => split.sizes().collect(),
                None => vec![self.bs],
            };
            // A share for sizes the workload never issues puts no I/O at
            // the priority: its figures would be of nothing.
            if !c
                .by_size
                .iter()
                .any(|(size, pct)| *pct > 0 && issued.contains(size))
            {
                return fail(format!(
                    "--cmdprio {c}: no I/O of this workload is of a size given a share (it issues {}), so none would go at that priority",
                    self.block_size_label()
                ));
            }
        }
        if let Some(list) = &self.cpus_allowed
            && let Some(own) = crate::spec::CpuList::of_this_process()
            && let Some(cpu) = list.cpus().iter().find(|c| !own.cpus().contains(c))
        {
            return fail(format!(
                "--cpus-allowed {list}: CPU {cpu} is not one this process may run on ({own})"
            ));
        }
        if self.random_percent > 100 {
            return fail(format!(
                "--random-percent {} is above 100",
                self.random_percent
            ));
        }
        if (self.random_percent < 100 || self.sequential_run > 1) && !self.rw.is_random() {
            let knob = if self.random_percent < 100 {
                "--random-percent"
            } else {
                "--sequential-run"
            };
            return fail(format!(
                "{knob} shapes random offsets: it needs a random --rw (this workload is {})",
                self.rw
            ));
        }
        if self.random_map && !self.rw.is_random() {
            return fail(format!(
                "--random-map orders random offsets: it needs a random --rw (this workload is {})",
                self.rw
            ));
        }
        if self.random_map && self.random_distribution != Distribution::Uniform {
            return fail(format!(
                "--random-map takes each block once a pass, a uniform spread: not --random-distribution {}",
                self.random_distribution
            ));
        }
        let c = &self.content;
        if (c.compress_pct > 0 || c.dedupe_pct > 0) && c.pattern != content::DataPattern::Random {
            return fail(format!(
                "--compress and --dedupe shape random data: not with --pattern {}",
                c.pattern
            ));
        }
        if c.compress_pct > 0 && c.compress_chunk < 64 {
            return fail(format!(
                "--compress-chunk {}: at least 64 bytes, so each chunk keeps a part unique to its write",
                c.compress_chunk
            ));
        }
        if self.stride != 0 && self.rw.is_random() {
            return fail(format!(
                "--stride skips between sequential I/Os: it needs a sequential --rw (this workload is {}; --sequential-run makes runs of a random one)",
                self.rw
            ));
        }
        if !self.stride.unsigned_abs().is_multiple_of(self.bs) {
            return fail(format!(
                "--stride {} is not a multiple of the block size, {}",
                self.stride, self.bs
            ));
        }
        Ok(())
    }

    /// Zones, strides and think time.
    fn validate_pattern(&self) -> Result<(), crate::util::error::UsageError> {
        use crate::util::units::format_bytes;
        use limits::*;
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        if let Some(z) = self.zones {
            if z.io % self.bs != 0 || z.range % self.bs != 0 || z.skip % self.bs != 0 {
                return fail(format!(
                    "--zones {z}: each part a multiple of the block size, {}",
                    format_bytes(self.bs)
                ));
            }
            if self.verify != VerifyMode::Off {
                return fail(format!(
                    "--verify reads back every block of the region: --zones {z} leaves holes"
                ));
            }
            if self.stride != 0 {
                return fail("--zones and --stride: give one of them".into());
            }
            if let Distribution::ZonedAbs { zones } = &self.random_distribution {
                let covered: u64 = zones.iter().map(|z| z.size).sum();
                if covered > z.range {
                    return fail(format!(
                        "--random-distribution {}: its zones cover {}, more than the --zones width {}",
                        self.random_distribution,
                        format_bytes(covered),
                        format_bytes(z.range)
                    ));
                }
            }
        }
        if self.stride != 0 && self.verify != VerifyMode::Off {
            return fail(
                "--verify reads back every block of the region: --stride leaves holes".into(),
            );
        }
        if let Some(t) = self.think_time
            && (t.pause_ns == 0
                || t.every == 0
                || t.pause_ns > MAX_RUNTIME_S as u64 * 1_000_000_000)
        {
            return fail(
                "--think-time: a pause above 0 and up to 30 days, after every 1 or more I/Os (--think-every)".into(),
            );
        }
        Ok(())
    }

    /// Depth, jobs, engine capabilities and times.
    fn validate_queues(&self) -> Result<(), crate::util::error::UsageError> {
        use limits::*;
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        if self.iodepth == 0 || self.iodepth > MAX_IODEPTH {
            return fail(format!(
                "--iodepth {} is outside 1 to {MAX_IODEPTH}",
                self.iodepth
            ));
        }
        if self.numjobs == 0 || self.numjobs > MAX_NUMJOBS {
            return fail(format!(
                "--numjobs {} is outside 1 to {MAX_NUMJOBS}",
                self.numjobs
            ));
        }
        if self.rwmix_read > 100 {
            return fail(format!("--rwmix-read {} is above 100", self.rwmix_read));
        }
        if !self.engine.caps().queues && self.iodepth > 1 {
            return fail(format!(
                "--iodepth {} needs an asynchronous engine: --engine sync does one I/O at a time per worker (use --numjobs, or --engine io_uring)",
                self.iodepth
            ));
        }
        if let Some(io) = self.io_size
            && io < self.bs * u64::from(self.numjobs)
        {
            return fail(format!(
                "--io-size {io} is less than one block of --bs {} for each of --numjobs {}",
                self.bs, self.numjobs
            ));
        }
        if let Some(n) = self.number_ios
            && n < u64::from(self.numjobs)
        {
            return fail(format!(
                "--number-ios {n} is less than one I/O for each of --numjobs {}",
                self.numjobs
            ));
        }
        if let Some(r) = self.runtime_s
            && !(r > 0.0 && r <= MAX_RUNTIME_S)
        {
            return fail(format!("--runtime {r}s is outside 1ms to 30 days"));
        }
        if !(0.0..=MAX_RUNTIME_S).contains(&self.ramp_s) {
            return fail(format!("--ramp {}s is longer than 30 days", self.ramp_s));
        }
        for (flag, set) in [
            ("--hipri", self.hipri),
            ("--sqpoll", self.sqpoll),
            (
                "--completion-wait spin",
                self.completion_wait == CompletionWait::Spin,
            ),
        ] {
            if set && !self.engine.caps().ring_settings {
                return fail(format!(
                    "{flag} is an io_uring setting: it needs --engine io_uring (this workload uses {})",
                    self.engine
                ));
            }
        }
        for (flag, set) in [("--uncached", self.uncached), ("--atomic", self.atomic)] {
            if set && !self.engine.caps().rw_flags {
                return fail(format!(
                    "{flag} is a flag of each read and write: it needs --engine io_uring or sync (this workload uses {})",
                    self.engine
                ));
            }
        }
        if self.uncached && self.direct {
            return fail("--uncached is for buffered I/O (add --buffered): it drops each I/O's pages from the page cache once done, and direct I/O passes the cache by already".into());
        }
        if self.atomic && !self.direct {
            return fail("--atomic: the kernel takes atomic writes with --direct only".into());
        }
        if self.atomic && !self.rw.modifies(self.rwmix_read) {
            return fail(format!(
                "--atomic is a property of writes: --rw {} writes nothing",
                self.rw
            ));
        }
        if self.atomic && self.bssplit.is_some() {
            return fail("--atomic: one block size (--bs), which the target's atomic write unit is checked against; not --bssplit".into());
        }
        if self.hipri && !self.direct {
            return fail("--hipri polls for completions of direct I/O: it needs --direct".into());
        }
        if self.hipri && self.flush_every() > 0 {
            return fail(
                "--hipri: a polled ring takes only reads and writes, not the flushes of --fsync or --fdatasync".into(),
            );
        }
        if self.rw.trims() && self.verify != VerifyMode::Off {
            return fail(format!(
                "--verify checks blocks against what was written: --rw {} discards blocks, which then read back as zeros or as they were, as the device chooses",
                self.rw
            ));
        }
        if self.rw.trims() && self.hipri {
            return fail(format!(
                "--hipri: a polled ring takes only reads and writes, not the trims of --rw {}",
                self.rw
            ));
        }
        if self.engine.caps().only_writes
            && (self.rw.read_percent(self.rwmix_read) > 0 || self.rw.trims())
        {
            return fail(format!(
                "--engine {} takes writes only (each sets the file's length): --rw {} reads or trims",
                self.engine, self.rw
            ));
        }
        if self.engine.caps().nvme_passthrough && self.rw.trims() {
            return fail(format!(
                "--engine {} sends NVMe reads, writes and flushes: --rw {} trims (use --engine io_uring)",
                self.engine, self.rw
            ));
        }
        if self.engine.caps().nvme_passthrough
            && self.zoned.is_zbd()
            && self.iodepth > 1
            && self.rw.modifies(self.rwmix_read)
        {
            return fail(format!(
                "--iodepth {}: writes to a zone sent as NVMe commands pass no I/O scheduler, which keeps them in order at a depth above 1; use --iodepth 1 with --engine {} and --zonemode zbd",
                self.iodepth, self.engine
            ));
        }
        if self.verify != VerifyMode::Off && !self.engine.caps().moves_data {
            return fail(format!(
                "--verify needs blocks written and read back: --engine {} moves no data",
                self.engine
            ));
        }
        if self.null_latency_ns > 0 && !self.engine.caps().simulates_latency {
            return fail(format!(
                "--null-latency: only --engine null waits (this workload uses {})",
                self.engine
            ));
        }
        if self.null_latency_ns > MAX_RUNTIME_S as u64 * 1_000_000_000 {
            return fail("--null-latency is longer than 30 days".into());
        }
        Ok(())
    }

    /// Rates, sizes and the buffers they need.
    fn validate_rates(&self) -> Result<(), crate::util::error::UsageError> {
        use crate::util::units::format_bytes;
        use limits::*;
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        if !self.direction_rates.is_empty() {
            if self.target_rate().is_some() {
                return fail(
                    "--rate-read/--rate-write and --rate-iops/--rate-bw: give a rate per direction, or one for the mix".into(),
                );
            }
            let reads = self.rw.read_percent(self.rwmix_read);
            for (knob, given, issued) in [
                (
                    "--rate-read",
                    self.direction_rates.read.is_some(),
                    reads > 0,
                ),
                (
                    "--rate-write",
                    self.direction_rates.write.is_some(),
                    reads < 100,
                ),
            ] {
                if given && !issued {
                    return fail(format!("{knob}: --rw {} issues no such I/O", self.rw));
                }
            }
            let total: f64 = self.direction_iops().iter().flatten().sum();
            let slots = self.iodepth as f64 * self.numjobs as f64;
            if self.engine.caps().does_io && total > slots * MAX_IOPS_PER_SLOT {
                return fail(format!(
                    "--rate-read/--rate-write: {} I/Os per second is more than --iodepth {} x --numjobs {} can carry",
                    crate::util::units::thousands(total.round() as u64),
                    self.iodepth,
                    self.numjobs
                ));
            }
        }
        if self.rate_iops.is_some() && self.rate_bw.is_some() {
            return fail("--rate-iops and --rate-bw: give one rate, not both".into());
        }
        if let Some(r) = self.target_rate()
            && !(r.is_finite() && r > 0.0 && r <= 1e8)
        {
            return fail(format!(
                "--rate-iops {r} is outside 1 I/O per second to 100 million"
            ));
        }
        if let Some(r) = self.target_rate()
            && !self.queue_carries_rate()
        {
            let knob = if self.rate_bw.is_some() {
                "--rate-bw"
            } else {
                "--rate-iops"
            };
            return fail(format!(
                "{knob}: {} I/Os per second is more than --iodepth {} x --numjobs {} can carry \
                     ({} a second per slot: each I/O would have to finish in under 0.5 µs)",
                crate::util::units::thousands(r.round() as u64),
                self.iodepth,
                self.numjobs,
                crate::util::units::thousands(MAX_IOPS_PER_SLOT as u64)
            ));
        }
        if self.steady_state.is_some() && self.runtime_s.is_none() {
            return fail("--steady-state needs --runtime as the longest the run may take".into());
        }
        if self.size == Some(0) {
            return fail("--size is 0".into());
        }
        let buffers = self.largest_block_size()
            * self.iodepth as u64
            * self.numjobs as u64
            * self.targets.len() as u64;
        if buffers > MAX_BUFFER_BYTES {
            return fail(format!(
                "--bs x --iodepth x --numjobs x targets needs {} of buffers, more than {}",
                format_bytes(buffers),
                format_bytes(MAX_BUFFER_BYTES)
            ));
        }
        Ok(())
    }
}

/// The most I/Os a second one queue slot (one of `iodepth` x `numjobs`)
/// is allowed to be asked for: one every 0.5 µs.
pub const MAX_IOPS_PER_SLOT: f64 = 2_000_000.0;

impl WorkloadSpec {
    /// Whether a target's queue can carry the rate asked of it (true
    /// without a rate). Little's law: a target's iodepth x numjobs slots
    /// each carry at most one I/O per latency. Past this bound every I/O
    /// would have to finish in under 0.5 µs, faster than a page-cache hit
    /// (1-2 µs on a typical machine), so the schedule could only fall
    /// behind; the null engine does no I/O and is not bound.
    pub fn queue_carries_rate(&self) -> bool {
        let slots = self.iodepth as f64 * self.numjobs as f64;
        match self.target_rate() {
            Some(r) => !self.engine.caps().does_io || r <= slots * MAX_IOPS_PER_SLOT,
            None => true,
        }
    }

    /// What actually runs: a streams workload's streams, or the workload
    /// itself.
    pub fn runs(&self) -> &[WorkloadSpec] {
        if self.streams.is_empty() {
            std::slice::from_ref(self)
        } else {
            &self.streams
        }
    }

    /// The streams of a streams workload: each valid on its own, names
    /// unique, and no region written by two streams while `--verify` checks
    /// it (neither could tell the other's blocks from corruption).
    /// Each stream waits only for other streams of the group, and no
    /// stream waits, however indirectly, for itself: such a group would
    /// never start.
    fn check_waits(&self) -> Result<(), crate::util::error::UsageError> {
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        let index = |name: &str| self.streams.iter().position(|s| s.name == name);
        for s in &self.streams {
            for other in &s.wait_for {
                match index(other) {
                    None => {
                        return fail(format!(
                            "stream {}: --wait-for {other}: no stream of the group is named so",
                            s.name
                        ));
                    }
                    Some(_) if *other == s.name => {
                        return fail(format!("stream {}: waits for itself", s.name));
                    }
                    Some(_) => {}
                }
            }
        }
        // A stream that can reach itself through what it waits for.
        for (start, s) in self.streams.iter().enumerate() {
            let mut seen = vec![false; self.streams.len()];
            let mut todo: Vec<usize> = s.wait_for.iter().filter_map(|n| index(n)).collect();
            while let Some(i) = todo.pop() {
                if i == start {
                    return fail(format!(
                        "stream {}: waits for itself through --wait-for ({} waits for {}): the group would never start",
                        s.name,
                        s.name,
                        s.wait_for.join(", ")
                    ));
                }
                if !std::mem::replace(&mut seen[i], true) {
                    todo.extend(self.streams[i].wait_for.iter().filter_map(|n| index(n)));
                }
            }
        }
        Ok(())
    }

    fn validate_streams(&self) -> Result<(), crate::util::error::UsageError> {
        let fail = |msg: String| Err(crate::util::error::UsageError(msg));
        self.check_waits()?;
        for (i, s) in self.streams.iter().enumerate() {
            let alone = WorkloadSpec {
                wait_for: Vec::new(),
                ..s.clone()
            };
            alone.validate().map_err(|e| {
                crate::util::error::UsageError(format!("stream {}: {}", s.name, e.0))
            })?;
            if self.streams[..i].iter().any(|o| o.name == s.name) {
                return fail(format!("stream {}: two streams of one name", s.name));
            }
            if s.verify == VerifyMode::Off || !s.rw.writes(s.rwmix_read) {
                continue;
            }
            for o in self.streams.iter().filter(|o| o.name != s.name) {
                // One file however it is named: `t.dat`, `./t.dat`, a link.
                let shared = s.targets.iter().any(|t| {
                    o.targets
                        .iter()
                        .any(|u| crate::gate::same_place(t.as_ref(), u.as_ref()))
                });
                let (a, b) = (s.offset, o.offset);
                let overlap = match (s.size, o.size) {
                    (Some(sa), Some(sb)) => a < b + sb && b < a + sa,
                    _ => true,
                };
                if shared && overlap && o.rw.writes(o.rwmix_read) {
                    return fail(format!(
                        "stream {}: --verify with stream {} writing the same region; give them disjoint --offset/--size",
                        s.name, o.name
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod validate_tests {
    use super::*;

    pub fn spec() -> WorkloadSpec {
        WorkloadSpec {
            name: "t".into(),
            seed: 1,
            ..WorkloadSpec::defaults(vec!["/tmp/x".into()])
        }
    }

    #[test]
    fn a_rate_is_bound_by_the_slots_that_carry_it() {
        let rated = |iops: f64, engine: EngineKind| WorkloadSpec {
            iodepth: 4,
            numjobs: 2,
            rate_iops: Some(iops),
            engine,
            ..spec()
        };
        let most = 8.0 * MAX_IOPS_PER_SLOT;
        assert!(rated(most, EngineKind::IoUring).validate().is_ok());
        let e = rated(most + 1.0, EngineKind::IoUring)
            .validate()
            .unwrap_err();
        assert!(e.0.contains("--iodepth 4 x --numjobs 2"), "{}", e.0);
        assert!(rated(most + 1.0, EngineKind::Null).validate().is_ok());
    }

    #[test]
    fn accepts_sane_and_rejects_absurd_values() {
        assert!(spec().validate().is_ok());
        type Mutation = Box<dyn Fn(&mut WorkloadSpec)>;
        let cases: Vec<(Mutation, &str)> = vec![
            (Box::new(|s| s.bs = 0), "--bs"),
            (Box::new(|s| s.bs = 32 << 20), "--bs"),
            (Box::new(|s| s.iodepth = 0), "--iodepth"),
            (Box::new(|s| s.iodepth = 100_000), "--iodepth"),
            (Box::new(|s| s.numjobs = 0), "--numjobs"),
            (
                Box::new(|s| s.runtime_s = Some(10.0 * 365.0 * 86400.0)),
                "--runtime",
            ),
            (
                Box::new(|s| {
                    s.engine = EngineKind::Sync;
                    s.iodepth = 8
                }),
                "--iodepth",
            ),
            (
                Box::new(|s| {
                    s.bs = 16 << 20;
                    s.iodepth = 4096
                }),
                "buffers",
            ),
            (Box::new(|s| s.targets.clear()), "target"),
        ];
        for (mutate, needle) in cases {
            let mut s = spec();
            mutate(&mut s);
            let err = s.validate().unwrap_err().0;
            assert!(err.contains(needle), "{err} should name {needle}");
        }
    }
}
