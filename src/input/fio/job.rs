//! One fio job as its options build it up, before it is written as a
//! fathom job.

use std::path::{Path, PathBuf};

/// fio's engines that time file-system operations instead of I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileOp {
    FileCreate,
    FileStat,
    FileDelete,
    DirCreate,
    DirStat,
    DirDelete,
}

/// fio's `cmdprio_bssplit`: the share of each block size's I/Os at a
/// priority of their own, and that priority when the entries give it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct PriorityBySize {
    pub(super) shares: Vec<(u64, u8)>,
    pub(super) priority: Option<(u16, u8)>,
}

impl PriorityBySize {
    /// `SIZE/PCT[/CLASS/LEVEL[/HINT]]:…` for reads, then `,` and the same
    /// for writes (trims' are ignored, as fio ignores them). fathom keeps
    /// one share per block size for every direction and one priority apart
    /// from the others: what needs more is refused, saying what.
    pub(super) fn parse(v: &str) -> Result<PriorityBySize, String> {
        let mut out = PriorityBySize::default();
        for (d, direction) in v.split(',').take(2).enumerate() {
            let mut mine: Vec<(u64, u8)> = Vec::new();
            for entry in direction.split(':').filter(|e| !e.is_empty()) {
                let fields: Vec<&str> = entry.split('/').collect();
                if !(fields.len() == 2 || fields.len() == 4 || fields.len() == 5) {
                    return Err(format!(
                        "'{entry}' is not SIZE/PCT or SIZE/PCT/CLASS/LEVEL[/HINT]"
                    ));
                }
                let size = crate::util::units::parse_size(fields[0])?;
                let pct = crate::spec::priority::share(fields[1])?;
                if fields.get(4).is_some_and(|h| *h != "0") {
                    return Err(format!(
                        "{entry}: priority hints (command duration limits) are not supported"
                    ));
                }
                if fields.len() >= 4 && pct > 0 {
                    let number = |f: &str| {
                        f.parse::<u16>()
                            .map_err(|_| format!("'{f}' is not a number"))
                    };
                    let own = (number(fields[2])?, number(fields[3])?);
                    if !(1..=3).contains(&own.0) || own.1 > 7 {
                        return Err(format!(
                            "{entry}: class 1 to 3 and level 0 to 7 (as cmdprio_class and cmdprio)"
                        ));
                    }
                    let own = (own.0, own.1 as u8);
                    match out.priority {
                        Some(p) if p != own => {
                            return Err(format!(
                                "{entry}: a second priority ({}/{} and {}/{}): fathom reports one priority apart from the others",
                                p.0, p.1, own.0, own.1
                            ));
                        }
                        _ => out.priority = Some(own),
                    }
                }
                match mine.iter_mut().find(|(s, _)| *s == size) {
                    Some((_, p)) => *p = p.saturating_add(pct).min(100),
                    None => mine.push((size, pct)),
                }
            }
            for (size, pct) in mine {
                match out.shares.iter().find(|(s, _)| *s == size) {
                    Some((_, p)) if *p != pct => {
                        return Err(format!(
                            "{} gets {p}% for reads and {pct}% for {}: give one share for both",
                            crate::util::units::format_block_size(size),
                            ["reads", "writes"][d]
                        ));
                    }
                    Some(_) => {}
                    None => out.shares.push((size, pct)),
                }
            }
        }
        Ok(out)
    }
}

impl FileOp {
    pub(super) fn of(engine: &str) -> Option<FileOp> {
        Some(match engine {
            "filecreate" => FileOp::FileCreate,
            "filestat" => FileOp::FileStat,
            "filedelete" => FileOp::FileDelete,
            "dircreate" => FileOp::DirCreate,
            "dirstat" => FileOp::DirStat,
            "dirdelete" => FileOp::DirDelete,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            FileOp::FileCreate => "filecreate",
            FileOp::FileStat => "filestat",
            FileOp::FileDelete => "filedelete",
            FileOp::DirCreate => "dircreate",
            FileOp::DirStat => "dirstat",
            FileOp::DirDelete => "dirdelete",
        }
    }
}

/// One fio job (one clone of it, with `numjobs`) as fathom knobs.
#[derive(Debug, Default, Clone)]
pub(super) struct Job {
    pub(super) name: String,
    /// With `numjobs` above 1: which clone this is, and the job's name,
    /// which fio gives every clone in its reports.
    pub(super) clone: Option<(u32, String)>,
    pub(super) knobs: Vec<(String, String)>,
    pub(super) files: Vec<String>,
    pub(super) directory: Option<String>,
    pub(super) size_percent: Option<(f64, String)>,
    pub(super) runtime: bool,
    pub(super) time_based: bool,
    /// `unlink`: the job's files are removed when it ends (fio keeps them
    /// otherwise).
    pub(super) unlink: bool,
    /// `steadystate`'s criterion as fathom spells it (`iops:2%`), and
    /// `ss_dur`, which gives its window.
    pub(super) steady: Option<String>,
    pub(super) steady_window: Option<String>,
    /// `loops`, which becomes an I/O amount once `size` is known.
    pub(super) loops: Option<u64>,
    pub(super) random_map: bool,
    pub(super) random: bool,
    /// `nrfiles`: files of this job (and of each clone) without `filename`.
    pub(super) nrfiles: u32,
    /// `filesize`: the size of each of them; `size / nrfiles` without it.
    pub(super) filesize: Option<String>,
    /// `prioclass` and `prio` as given, made one `ioprio` knob once the
    /// job is read.
    pub(super) priority: (Option<crate::spec::priority::IoClass>, Option<u8>),
    /// `do_verify`: 0 writes without the verify phase.
    pub(super) do_verify: Option<bool>,
    /// `verify_backlog` above 0: blocks read back while the job writes.
    pub(super) verify_backlog: bool,
    /// `offset_increment`: clone k starts `k` times this after `offset`.
    pub(super) offset_increment: Option<u64>,
    /// `rate` or `rate_iops` as fathom rates of reads and of writes, and
    /// whether one value was given for both (fio rates each direction).
    pub(super) rates: Option<(Option<String>, Option<String>, bool)>,
    /// `thinktime_blocks`, which only counts with a `thinktime`.
    pub(super) think_every: Option<u32>,
    pub(super) starts_group: bool,
    /// `cmdprio_percentage`, `cmdprio_class` and `cmdprio` (the level).
    pub(super) cmdprio: (Option<u8>, Option<u16>, Option<u8>),
    /// `cmdprio_bssplit`.
    pub(super) cmdprio_bssplit: Option<PriorityBySize>,
    /// `zonemode`, and `zonesize`, `zonerange`, `zoneskip` in bytes.
    pub(super) zone_mode: Option<String>,
    pub(super) zone_sizes: [Option<u64>; 3],
    /// `zone_reset_threshold` and `zone_reset_frequency`.
    pub(super) zone_reset: [Option<f64>; 2],
    /// `random_sequence_stride`: a `sequence` distribution walks on.
    pub(super) sequence_strided: bool,
    /// `exit_what=all`: with `exitall`, the job's end ends every job,
    /// those of later groups (not started yet) too.
    pub(super) exit_what_all: bool,
    /// `wait_for`: the job this one starts after, and where it was said.
    pub(super) wait_for: Option<(String, String)>,
    /// `read_iolog`, `replay_no_stall`, `replay_time_scale` (percent) and
    /// `replay_redirect`.
    pub(super) read_iolog: Option<String>,
    /// A file-operation engine (`filecreate`, `filestat`, `filedelete`,
    /// `dircreate`, `dirdelete`): the job is a tree run's phase.
    pub(super) file_op: Option<FileOp>,
    /// The http engine's options (`ioengine=http`): an object-store run.
    pub(super) http: Option<HttpJob>,
    pub(super) replay_no_stall: bool,
    pub(super) replay_time_scale: Option<u64>,
    pub(super) replay_redirect: Option<String>,
}

/// The http engine's options of one job, read as they come and settled
/// once the job is read.
#[derive(Debug, Clone, Default)]
pub(super) struct HttpJob {
    pub(super) host: Option<String>,
    pub(super) https: bool,
    pub(super) range_mode: bool,
    pub(super) key_id: Option<String>,
    pub(super) key: Option<String>,
    pub(super) token: Option<String>,
}

impl Job {
    /// A job named `name` with fio's defaults where fathom's differ:
    /// rw=read, iodepth=1, the psync engine, buffered I/O, the cache
    /// dropped before the job, each block touched once per pass, and a
    /// ramp inside the job's pass.
    pub(super) fn with_fio_defaults(name: &str) -> Job {
        let mut job = Job {
            name: name.to_string(),
            random_map: true,
            ..Default::default()
        };
        job.set("rw", "read");
        job.set("iodepth", "1");
        job.set("engine", "sync");
        job.set("buffered", "true");
        job.set("invalidate", "true");
        job.set("ramp_in_pass", "true");
        job
    }

    pub(super) fn set(&mut self, knob: &str, value: impl Into<String>) {
        let value = value.into();
        match self.knobs.iter_mut().find(|(k, _)| k == knob) {
            Some(slot) => slot.1 = value,
            None => self.knobs.push((knob.to_string(), value)),
        }
    }

    pub(super) fn unset(&mut self, knob: &str) {
        self.knobs.retain(|(k, _)| k != knob);
    }

    /// `loops` (passes over `size`) as fathom's `io_size`; fio stops at
    /// whichever limit comes first.
    pub(super) fn io_amount(&mut self) -> Result<(), String> {
        let bytes = |knob: &str, what: &str| {
            let v = self
                .knob(knob)
                .ok_or_else(|| format!("{what} needs {knob}"))?;
            crate::util::units::parse_size(v).map_err(|e| format!("{knob}={v}: {e}"))
        };
        let mut limits = Vec::new();
        if let Some(loops) = self.loops.filter(|l| *l > 1) {
            if self.runtime {
                return Err("loops above 1 with runtime: fathom repeats a size-bound job only (drop runtime, or loops)".into());
            }
            let per_pass = match self.knob("io_size") {
                Some(_) => bytes("io_size", "loops")?,
                None => bytes("size", "loops")?,
            };
            limits.push(loops * per_pass);
        } else if let Some(v) = self.knob("io_size") {
            limits
                .push(crate::util::units::parse_size(v).map_err(|e| format!("io_size={v}: {e}"))?);
        }
        if let Some(least) = limits.into_iter().min() {
            self.set("io_size", least.to_string());
        }
        Ok(())
    }

    /// fio rates each direction: a job of one direction has fathom's rate
    /// for its I/Os, a mixed one a rate per direction.
    pub(super) fn rates_as_knobs(&mut self) -> Option<String> {
        let (read, write, one_value) = self.rates.take()?;
        // fio rates a job of several block sizes by the smallest (its
        // HOWTO): an I/O rate is a bandwidth at that size.
        let split = self
            .knob("bssplit")
            .and_then(|v| v.parse::<crate::spec::BlockSizeSplit>().ok());
        let mut said = Vec::new();
        let mut by_smallest = |rate: Option<String>, reads: bool| -> Option<String> {
            let rate = rate?;
            let shares = split
                .as_ref()
                .map(|s| if reads { &s.read } else { &s.write });
            let Some(shares) = shares.filter(|s| s.len() > 1) else {
                return Some(rate);
            };
            let Ok(iops) = rate.parse::<f64>() else {
                return Some(rate);
            };
            let smallest = shares.iter().map(|b| b.bs).min().unwrap_or(4096);
            let bytes = (iops * smallest as f64).round() as u64;
            said.push(format!(
                "{} {rate}/s x {} = {}/s",
                if reads { "reads" } else { "writes" },
                crate::util::units::format_bytes(smallest),
                crate::util::units::format_bytes(bytes)
            ));
            Some(format!("{bytes}/s"))
        };
        let (read, write) = (by_smallest(read, true), by_smallest(write, false));
        let said = (!said.is_empty()).then(|| {
            format!(
                "job {}: an I/O rate with several block sizes is fio's bandwidth at the smallest size, so fewer I/Os a second than the rate: {}",
                self.name,
                said.join(", ")
            )
        });
        let mixed = matches!(self.knob("rw"), Some("readwrite" | "randrw"));
        let reads = !matches!(self.knob("rw"), Some("write" | "randwrite"));
        if one_value && !mixed {
            let rate = if reads { read } else { write };
            if let Some(rate) = rate {
                match rate.strip_suffix("/s") {
                    Some(_) => self.set("rate_bw", rate),
                    None => self.set("rate_iops", rate),
                }
            }
            return said;
        }
        // A rate of a direction the job does not issue does nothing in fio.
        if let Some(r) = read.filter(|_| reads) {
            self.set("rate_read", r);
        }
        if let Some(w) = write.filter(|_| mixed || !reads) {
            self.set("rate_write", w);
        }
        said
    }

    /// `nrfiles` files of `filesize` (or `size / nrfiles`) each: fathom's
    /// `size` is per target, and each file is a target.
    pub(super) fn files_of_their_own(&mut self) -> Result<(), String> {
        let parse = |v: &str| crate::util::units::parse_size(v).map_err(|e| format!("size: {e}"));
        if self.nrfiles <= 1 && self.filesize.is_none() {
            // fio spreads a job's size over the files filename names.
            if self.files.len() > 1
                && let Some(total) = self.knob("size").map(str::to_string)
            {
                let each = parse(&total)? / self.files.len() as u64;
                self.set("size", each.to_string());
            }
            return Ok(());
        }
        if !self.files.is_empty() {
            if self.nrfiles > 1 {
                return Err(format!(
                    "nrfiles={} with filename: fio goes round the files filename names; name each (filename=a:b:c), fathom runs one target per name",
                    self.nrfiles
                ));
            }
            // Each named file is filesize long; size, if given, is the
            // job's I/O over them all.
            // A time-bound job goes round them until its time is up.
            let each = self.filesize.take().expect("checked above");
            if let Some(total) = self.knob("size").map(str::to_string)
                && !self.time_based
            {
                self.set(
                    "io_size",
                    (parse(&total)? / self.files.len() as u64).to_string(),
                );
            }
            self.set("size", each);
            return Ok(());
        }
        let per_file = match (self.filesize.take(), self.knob("size")) {
            (Some(each), _) => each,
            (None, Some(total)) => (parse(total)? / u64::from(self.nrfiles)).to_string(),
            (None, None) => return Err("nrfiles needs size or filesize".into()),
        };
        self.set("size", per_file);
        Ok(())
    }

    /// fio's `cmdprio_percentage` or `cmdprio_bssplit` (with
    /// `cmdprio_class`, the highest class unless given, and `cmdprio`,
    /// level 0 unless given; or the class and level of the split's
    /// entries) as `cmdprio`.
    pub(super) fn command_priority(&mut self) -> Result<(), String> {
        let (percent, class, level) = std::mem::take(&mut self.cmdprio);
        let split = self.cmdprio_bssplit.take();
        let (shares, class, level) = match (split, percent) {
            (Some(_), Some(p)) if p > 0 => {
                return Err(
                    "cmdprio_bssplit and cmdprio_percentage: fio takes one or the other".into(),
                );
            }
            (Some(split), _) if split.shares.iter().all(|(_, pct)| *pct == 0) => return Ok(()),
            (Some(split), _) => {
                let shares: Vec<String> = split
                    .shares
                    .iter()
                    .map(|(size, pct)| format!("{size}/{pct}"))
                    .collect();
                let (c, l) = split.priority.unzip();
                (shares.join(","), c.or(class), l.or(level))
            }
            (None, Some(p)) if p > 0 => (p.to_string(), class, level),
            (None, _) => return Ok(()),
        };
        let class = class
            .and_then(crate::spec::priority::IoClass::of_number)
            .unwrap_or(crate::spec::priority::IoClass::RealTime);
        let priority = crate::spec::IoPriority {
            class,
            level: level.unwrap_or(0),
        };
        self.set("cmdprio", format!("{shares}:{priority}"));
        Ok(())
    }

    /// fio's `random_sequence_stride` as the strided form of the job's
    /// `sequence` distribution, wherever the two options stand.
    pub(super) fn strided_sequence(&mut self) {
        if !std::mem::take(&mut self.sequence_strided) {
            return;
        }
        if let Some(d) = self
            .knob("random_distribution")
            .filter(|d| d.starts_with("sequence:") && !d.ends_with(":strided"))
        {
            let strided = format!("{d}:strided");
            self.set("random_distribution", strided);
        }
    }

    /// fio's strided zones as fathom's `zones`: zonesize bytes in each
    /// zone zonerange wide (zonesize unless given), zoneskip between; a
    /// zonesize without a zonemode is strided, as in fio.
    pub(super) fn strided_zones(&mut self) -> Result<(), String> {
        let [size, range, skip] = std::mem::take(&mut self.zone_sizes);
        match (self.zone_mode.take().as_deref(), size) {
            (None | Some("none"), None) => Ok(()),
            (Some("none"), Some(_)) => {
                Err("zonemode=none and zonesize: fio refuses them together".into())
            }
            (Some("strided"), None) => Err("zonemode=strided needs zonesize".into()),
            (Some("zbd"), size) => {
                self.sizes_in_zones(size)?;
                self.set("zonemode", "zbd".to_string());
                if let Some(size) = size {
                    self.set("zone_size", size.to_string());
                }
                if let [threshold, Some(frequency)] = std::mem::take(&mut self.zone_reset) {
                    self.set(
                        "zone_reset",
                        format!("{}:{frequency}", threshold.unwrap_or(1.0)),
                    );
                }
                Ok(())
            }
            (None | Some("strided"), Some(size)) => {
                let range = range.filter(|r| *r > 0).unwrap_or(size);
                self.set("zones", format!("{size}:{range}:{}", skip.unwrap_or(0)));
                Ok(())
            }
            (Some(other), _) => Err(format!("zonemode={other}: none, strided or zbd")),
        }
    }

    /// fio's sizes in zones under zonemode=zbd (`offset=524z`,
    /// `size=128z`) in bytes, by the job's zonesize; without one fathom
    /// cannot tell the bytes before it reads the device, and says so.
    fn sizes_in_zones(&mut self, zone: Option<u64>) -> Result<(), String> {
        for key in ["size", "offset", "io_size"] {
            let Some(value) = self
                .knobs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
            else {
                continue;
            };
            let Some(count) = value.strip_suffix(['z', 'Z']) else {
                continue;
            };
            let count: u64 = count
                .trim()
                .parse()
                .map_err(|_| format!("{key}={value}: a whole number of zones"))?;
            let Some(zone) = zone else {
                return Err(format!(
                    "{key}={value}: sizes in zones need zonesize (the device's zone size)"
                ));
            };
            self.set(key, (count * zone).to_string());
        }
        Ok(())
    }

    /// fio's `prioclass` and `prio` as fathom's `ioprio`: best effort when
    /// only `prio` is given, level 4 (the kernel's default) when only the
    /// class is.
    pub(super) fn io_priority(&mut self) {
        let (class, level) = std::mem::take(&mut self.priority);
        if class.is_none() && level.is_none() {
            return;
        }
        let priority = crate::spec::IoPriority {
            class: class.unwrap_or(crate::spec::priority::IoClass::BestEffort),
            level: level.unwrap_or(4),
        };
        self.set("ioprio", priority.to_string());
    }

    /// fio's verify phase as fathom's: none with `do_verify=0`, blocks read
    /// back as they are written with `verify_backlog`, else after the job.
    pub(super) fn verify_phase(&mut self) -> Option<String> {
        if self.knob("verify") != Some("true") {
            return None;
        }
        if self.do_verify == Some(false) {
            self.set("verify", "false");
            return None;
        }
        if self.verify_backlog {
            self.unset("verify");
            self.set("verify_interleaved", "true");
            return Some(format!(
                "job {}: verify_backlog: fathom reads each block back as soon as its write completes (--verify-interleaved), fio after every verify_backlog blocks",
                self.name
            ));
        }
        None
    }

    pub(super) fn knob(&self, knob: &str) -> Option<&str> {
        self.knobs
            .iter()
            .find(|(k, _)| k == knob)
            .map(|(_, v)| v.as_str())
    }

    /// fio's clones of this job: `numjobs` independent copies, each doing
    /// the whole job (its `size`, its `rate`) on the job's files or on a file
    /// of its own. fathom runs them as streams of one numjob each.
    pub(super) fn clones(mut self) -> Vec<Job> {
        let n: u32 = self
            .knob("numjobs")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        if n <= 1 {
            return vec![self];
        }
        self.set("numjobs", "1");
        (0..n)
            .map(|k| {
                let mut clone = Job {
                    name: format!("{}.{k}", self.name),
                    clone: Some((k, self.name.clone())),
                    // A stonewall before the job starts one group of all clones.
                    starts_group: self.starts_group && k == 0,
                    ..self.clone()
                };
                if let Some(step) = self.offset_increment {
                    let base = self
                        .knob("offset")
                        .and_then(|o| crate::util::units::parse_size(o).ok())
                        .unwrap_or(0);
                    clone.set("offset", (base + u64::from(k) * step).to_string());
                }
                clone
            })
            .collect()
    }

    /// The files this job runs on. Without `filename`, each job and each
    /// clone has a file of its own in the current (or the given)
    /// directory, named as fio names it: `JOB.CLONE.0`.
    pub(super) fn targets(&self) -> Vec<String> {
        let dir = self.directory.as_deref();
        if self.files.is_empty() {
            let (number, name) = match &self.clone {
                Some((k, name)) => (*k, name.as_str()),
                None => (0, self.name.as_str()),
            };
            return (0..self.nrfiles.max(1))
                .map(|file| {
                    let own = format!("{name}.{number}.{file}");
                    match dir {
                        Some(d) => PathBuf::from(d).join(own).display().to_string(),
                        None => own,
                    }
                })
                .collect();
        }
        self.files
            .iter()
            .map(|f| match dir {
                Some(d) if Path::new(f).is_relative() => {
                    PathBuf::from(d).join(f).display().to_string()
                }
                _ => f.clone(),
            })
            .collect()
    }
}

/// What to do with one option.
pub(super) enum Action {
    Done,
    /// Accepted; tunes fio only, or differs in a way the note says.
    Note(String),
}
