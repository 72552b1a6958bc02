//! The knobs of a workload by name, as flags and job files spell them. The
//! command line, job files, sweeps, CSV and the report tables all go
//! through this one table, so a knob means the same everywhere.

use crate::spec::{EngineKind, RwMode, VerifyMode, WorkloadSpec};
use crate::util::error::UsageError;
use crate::util::units::{
    format_bytes, format_duration, parse_duration, parse_percent, parse_size,
};

/// One knob of a workload, defined once: its flag (`--rate-iops`) and job
/// file key (`rate_iops`), help, whether a comma list sweeps it, how it is
/// set from text, and how its value appears in CSV and in sweep tables.
/// Parsing, `--help`, job files, sweeps, the CSV header and the tables'
/// columns all come from [`KNOBS`].
pub struct Knob {
    /// As job files spell it; flags spell it with `-`.
    pub name: &'static str,
    pub help: &'static str,
    /// What the flag's value looks like in `--help`; None for a switch (a
    /// flag without a value, which sets the knob to true).
    pub value: Option<&'static str>,
    /// A comma list on the command line sweeps it.
    pub sweepable: bool,
    /// A knob that cannot be given with it.
    pub conflicts: Option<&'static str>,
    /// Its value in CSV (None: not a column of its own).
    pub csv: Option<fn(&WorkloadSpec) -> String>,
    /// Its value in a sweep table's column, shown when it varies.
    pub table: Option<fn(&WorkloadSpec) -> String>,
    /// The values it names, for shell completion (None: free text).
    pub offers: Option<fn() -> Vec<&'static str>>,
    /// Kept out of `--help`: a knob fio's translation sets, not a user.
    pub hidden: bool,
    /// What it is about: its heading in `--help`, and the targets it does
    /// anything for.
    pub category: KnobCategory,
    set: fn(&mut SpecBuilder, &str) -> Result<(), String>,
}

impl Knob {
    /// `--rate-iops`.
    pub fn flag(&self) -> String {
        self.name.replace('_', "-")
    }

    /// The value of this knob in a spec nothing has changed, for `--help`.
    pub fn default_value(&self) -> Option<String> {
        let show = self.table.or(self.csv)?;
        Some(show(&WorkloadSpec::defaults(Vec::new())))
    }
}

/// What a knob is about, as ripgrep's flags have a `doc_category`: it
/// groups `--help`, and says for which targets a knob does anything, so
/// that a knob given for a target it does nothing for is refused rather
/// than ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobCategory {
    Pattern,
    Amount,
    Streams,
    Cache,
    Engine,
    Cpus,
    Priority,
    Rate,
    Zones,
    ObjectStore,
    Content,
    Durability,
    Verify,
    Errors,
    Checks,
    FioOutput,
    Safety,
    Devices,
}

/// The kinds of target whose knobs differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetClass {
    /// Files and block devices (and the null engine's nothing).
    Disk,
    /// An `s3://` bucket or prefix.
    ObjectStore,
}

impl TargetClass {
    fn described(self) -> &'static str {
        match self {
            TargetClass::Disk => "a file or device target",
            TargetClass::ObjectStore => "an s3:// target",
        }
    }
}

impl KnobCategory {
    /// Its heading in `--help`.
    pub fn heading(self) -> &'static str {
        match self {
            KnobCategory::Pattern => "Access pattern",
            KnobCategory::Amount => "How much and how long",
            KnobCategory::Streams => "Streams of a group",
            KnobCategory::Cache => "Page cache",
            KnobCategory::Engine => "I/O engine",
            KnobCategory::Cpus => "CPUs",
            KnobCategory::Priority => "I/O priority",
            KnobCategory::Rate => "Rate and pauses",
            KnobCategory::Zones => "Zones",
            KnobCategory::ObjectStore => "Object store (s3://)",
            KnobCategory::Content => "Data content",
            KnobCategory::Durability => "Flushes",
            KnobCategory::Verify => "Verification",
            KnobCategory::Errors => "Errors",
            KnobCategory::Checks => "Steady state and drift",
            KnobCategory::FioOutput => "fio outputs",
            KnobCategory::Safety => "Files fathom made",
            KnobCategory::Devices => "Devices that hold data",
        }
    }

    /// Whether its knobs do anything for a target of `class`.
    pub fn applies_to(self, class: TargetClass) -> bool {
        use KnobCategory::*;
        match class {
            TargetClass::Disk => self != ObjectStore,
            // Requests go over a connection: no page cache, engine,
            // device queue, zones or flush of a store's.
            TargetClass::ObjectStore => !matches!(
                self,
                Cache | Engine | Priority | Zones | Durability | Verify | Devices
            ),
        }
    }
}

/// Refuses a knob given for a target its category does nothing for (an
/// engine's `--hipri` for an s3:// target, `--s3-region` for a file),
/// which would otherwise be ignored without a word.
pub fn refuse_unused(given: &[(String, String)], class: TargetClass) -> Result<(), UsageError> {
    for (name, _) in given {
        let Some(knob) = find(name) else { continue };
        if !knob.category.applies_to(class) {
            return Err(UsageError(format!(
                "--{}: does nothing for {} (a knob of {}, {})",
                knob.flag(),
                class.described(),
                knob.category.heading().to_lowercase(),
                match class {
                    TargetClass::Disk => "for s3:// targets",
                    TargetClass::ObjectStore => "for files and devices",
                }
            )));
        }
    }
    Ok(())
}

fn optional<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

impl Knob {
    /// A knob that takes a value.
    const fn value(
        name: &'static str,
        value: &'static str,
        help: &'static str,
        set: fn(&mut SpecBuilder, &str) -> Result<(), String>,
    ) -> Knob {
        Knob {
            name,
            help,
            value: Some(value),
            sweepable: false,
            conflicts: None,
            csv: None,
            table: None,
            offers: None,
            hidden: false,
            category: KnobCategory::Pattern,
            set,
        }
    }

    const fn category(self, category: KnobCategory) -> Knob {
        Knob { category, ..self }
    }

    const fn hidden(self) -> Knob {
        Knob {
            hidden: true,
            ..self
        }
    }

    const fn offers(self, names: fn() -> Vec<&'static str>) -> Knob {
        Knob {
            offers: Some(names),
            ..self
        }
    }

    /// A switch: a flag without a value, which sets the knob to true.
    const fn switch(
        name: &'static str,
        help: &'static str,
        set: fn(&mut SpecBuilder, &str) -> Result<(), String>,
    ) -> Knob {
        Knob {
            value: None,
            ..Knob::value(name, "", help, set)
        }
    }

    const fn sweeps(self) -> Knob {
        Knob {
            sweepable: true,
            ..self
        }
    }

    const fn conflicts_with(self, other: &'static str) -> Knob {
        Knob {
            conflicts: Some(other),
            ..self
        }
    }

    const fn csv(self, show: fn(&WorkloadSpec) -> String) -> Knob {
        Knob {
            csv: Some(show),
            ..self
        }
    }

    const fn table(self, show: fn(&WorkloadSpec) -> String) -> Knob {
        Knob {
            table: Some(show),
            ..self
        }
    }
}

/// Every knob, in the order of `--help`, CSV columns and table columns.
pub const KNOBS: &[Knob] = &[
    Knob::value("name", "NAME", "Name of the workload in results", |b, v| {
        b.spec.name = v.to_string();
        Ok(())
    })
    .csv(|s| s.name.clone())
    .category(KnobCategory::Pattern),
    Knob::value(
        "rw",
        "MODE",
        "Access pattern: read, write, randread, randwrite, readwrite, randrw; trim, randtrim, trimwrite, randtrimwrite discard blocks (a device's BLKDISCARD, a hole punched in a file)",
        |b, v| {
            b.spec.rw = v.parse()?;
            Ok(())
        },
    )
    .sweeps()
    .offers(|| RwMode::ALL.iter().map(|m| m.name()).collect())
    .csv(|s| s.rw.to_string())
    .table(|s| s.rw.to_string())
    .category(KnobCategory::Pattern),
    Knob::value(
        "rwmix_read",
        "PCT",
        "Percentage of reads in readwrite/randrw [default: 50]",
        |b, v| {
            b.rwmix_read = v
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| format!("'{v}' is not a percentage from 0 to 100"))?;
            Ok(())
        },
    )
    .sweeps()
    .csv(|s| s.rwmix_read.to_string())
    .table(|s| {
        if s.rw.is_mixed() {
            s.rwmix_read.to_string()
        } else {
            "-".into()
        }
    })
    .category(KnobCategory::Pattern),
    Knob::value("bs", "SIZE", "Block size, 512 to 16m, k/m suffixes", |b, v| {
        b.spec.bs = parse_size(v)?;
        Ok(())
    })
    .sweeps()
    .csv(|s| s.bs.to_string())
    .table(|s| s.block_size_label())
    .category(KnobCategory::Pattern),
    Knob::value(
        "bssplit",
        "SPLIT",
        "Several block sizes, each for a share of the I/Os: 4k/50:64k/50 for reads and writes, or READS,WRITES (4k/100,64k/100: 4k reads, 64k writes); sizes are multiples of the smallest, which offsets are aligned to",
        |b, v| {
            let split: crate::spec::BlockSizeSplit = v.parse()?;
            b.spec.bs = split.smallest();
            b.spec.bssplit = Some(split);
            Ok(())
        },
    )
    .conflicts_with("bs")
    .category(KnobCategory::Pattern),
    Knob::value("iodepth", "N", "I/Os in flight per worker", |b, v| {
        b.spec.iodepth = parse_count(v)?;
        Ok(())
    })
    .sweeps()
    .csv(|s| s.iodepth.to_string())
    .table(|s| s.iodepth.to_string())
    .category(KnobCategory::Pattern),
    Knob::value("numjobs", "N", "Worker threads per target", |b, v| {
        b.spec.numjobs = parse_count(v)?;
        Ok(())
    })
    .sweeps()
    .csv(|s| s.numjobs.to_string())
    .table(|s| s.numjobs.to_string())
    .category(KnobCategory::Pattern),
    // CSV has the region each target resolved size and offset to.
    Knob::value(
        "size",
        "SIZE",
        "Bytes of each target to use [default: the whole device or file; 1g for a new file]",
        |b, v| {
            b.spec.size = Some(parse_size(v)?);
            Ok(())
        },
    )
    .table(|s| s.size.map_or("auto".into(), format_bytes))
    .category(KnobCategory::Amount),
    Knob::value(
        "io_size",
        "SIZE",
        "Bytes of I/O per target in all (each worker its share), instead of one pass over --size; the pattern goes round the region as often as it takes (fio's io_size). With --runtime, whichever ends first",
        |b, v| {
            b.spec.io_size = Some(parse_size(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::Amount),
    Knob::value(
        "number_ios",
        "N",
        "I/Os per target in all (each worker its share); the workload stops at whichever of this, its bytes (one pass over --size, or --io-size) and --runtime comes first (fio's number_ios)",
        |b, v| {
            b.spec.number_ios = Some(parse_count(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::Amount),
    Knob::value(
        "block_align",
        "SIZE",
        "Random I/O: align each offset to SIZE instead of the (smallest) block size, e.g. 4k under a --bssplit of 512 to 64k (fio's blockalign)",
        |b, v| {
            b.spec.block_align = Some(parse_size(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::Pattern),
    Knob::value(
        "offset",
        "SIZE",
        "Where the used region starts in each target",
        |b, v| {
            b.spec.offset = parse_size(v)?;
            Ok(())
        },
    )
    .table(|s| format_bytes(s.offset))
    .category(KnobCategory::Amount),
    Knob::value(
        "runtime",
        "DURATION",
        "Run for this long (30s, 5m, 1h) [default: one pass over --size]",
        |b, v| {
            b.spec.runtime_s = Some(parse_duration(v)?.as_secs_f64());
            Ok(())
        },
    )
    .csv(|s| optional(s.runtime_s))
    .table(|s| s.runtime_s.map_or("one pass".into(), format_duration))
    .category(KnobCategory::Amount),
    Knob::value(
        "ramp",
        "DURATION",
        "Warm-up before measuring, excluded from the results",
        |b, v| {
            b.spec.ramp_s = parse_duration(v)?.as_secs_f64();
            Ok(())
        },
    )
    .csv(|s| s.ramp_s.to_string())
    .table(|s| format_duration(s.ramp_s))
    .category(KnobCategory::Amount),
    Knob::switch(
        "ramp_in_pass",
        "With --ramp on a size-bound workload: the ramp's I/O is part of the pass, so what follows the ramp is measured and the pass is not begun again (fio's ramp_time); by default a whole pass follows the ramp",
        |b, v| {
            b.spec.ramp_in_pass = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Amount),
    Knob::value(
        "start_delay",
        "DURATION",
        "In a group of streams: start this stream's I/O this long after the group starts; its ramp and runtime count from then (fio's startdelay)",
        |b, v| {
            b.spec.start_delay_s = parse_duration(v)?.as_secs_f64();
            Ok(())
        },
    )
    .category(KnobCategory::Streams),
    Knob::value(
        "wait_for",
        "STREAM[:STREAM...]",
        "In a group of streams: start this stream once the streams named have finished (fio's wait_for)",
        |b, v| {
            b.spec.wait_for = v
                .split(':')
                .map(|n| match n.trim() {
                    "" => Err(format!("'{v}' names an empty stream")),
                    n => Ok(n.to_string()),
                })
                .collect::<Result<_, _>>()?;
            Ok(())
        },
    )
    .category(KnobCategory::Streams),
    Knob::switch(
        "direct",
        "O_DIRECT: bypass the page cache (the default)",
        |b, v| {
            b.spec.direct = parse_bool(v)?;
            Ok(())
        },
    )
    .conflicts_with("buffered")
    .csv(|s| s.direct.to_string())
    .table(|s| s.direct.to_string())
    .category(KnobCategory::Cache),
    Knob::switch(
        "buffered",
        "Go through the page cache instead of O_DIRECT",
        |b, v| {
            b.spec.direct = !parse_bool(v)?;
            Ok(())
        },
    )
    .conflicts_with("direct")
    .category(KnobCategory::Cache),
    Knob::switch(
        "invalidate",
        "With --buffered: drop the targets' cached pages before measuring, and again each time a worker has gone once over its region in a time-bound run, so that reads come from the device (fio's invalidate, on in fio job files by default)",
        |b, v| {
            b.spec.invalidate = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Cache),
    Knob::value(
        "ioprio",
        "CLASS[:LEVEL]",
        "The I/O priority the workers run at, as ionice names it: rt, be or idle, and a level from 0 (highest) to 7 (fio's prioclass and prio)",
        |b, v| {
            b.spec.ioprio = Some(v.parse()?);
            Ok(())
        },
    )
    .category(KnobCategory::Priority),
    Knob::value(
        "cpus_allowed",
        "LIST",
        "Run the workers on these CPUs only (0-3,6, as taskset -c; fio's cpus_allowed): a worker that the scheduler moves away from the CPU its device completes on can lose half its IOPS at depth 1",
        |b, v| {
            b.spec.cpus_allowed = Some(v.parse()?);
            Ok(())
        },
    )
    .category(KnobCategory::Cpus),
    Knob::value(
        "cpus_allowed_policy",
        "POLICY",
        "With --cpus-allowed: shared (every worker on any of the CPUs) or split (each worker on one of them, in turn; fio's cpus_allowed_policy) [default: shared]",
        |b, v| {
            b.spec.cpus_allowed_policy = v.parse()?;
            Ok(())
        },
    )
    .category(KnobCategory::Cpus),
    Knob::switch(
        "no_fadvise",
        "With --buffered: give the kernel no access hint (by default each worker tells it random or sequential, as fio's fadvise_hint, so random reads get no readahead)",
        |b, v| {
            b.spec.fadvise = !parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Cache),
    Knob::value(
        "engine",
        "ENGINE",
        "I/O engine: io_uring, io_uring_cmd (NVMe commands to a namespace's char node, /dev/ngXnY), sync (pread/pwrite), null (no I/O: fathom's own overhead), falloc (each I/O allocates its range: fallocate) or ftruncate (each write sets the file's length to its offset)",
        |b, v| {
            b.spec.engine = v.parse()?;
            Ok(())
        },
    )
    .offers(|| EngineKind::ALL.iter().map(|e| e.name()).collect())
    .csv(|s| s.engine.to_string())
    .table(|s| s.engine.to_string())
    .category(KnobCategory::Engine),
    Knob::value(
        "fio_ioengine",
        "ENGINE",
        "The engine an fio job named where fathom runs it on another (libaio on io_uring): fio's outputs echo it",
        |b, v| {
            b.spec.fio_ioengine = Some(
                crate::spec::engine::FioEngine::parse(v)
                    .ok_or_else(|| format!("{v}: not an fio engine fathom runs on another"))?,
            );
            Ok(())
        },
    )
    .hidden()
    .category(KnobCategory::Engine),
    Knob::switch(
        "hipri",
        "io_uring: complete I/O by polling the device instead of waiting for its interrupt (IORING_SETUP_IOPOLL; needs --direct and a device with poll queues, e.g. NVMe with nvme.poll_queues)",
        |b, v| {
            b.spec.hipri = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Engine),
    Knob::switch(
        "sqpoll",
        "io_uring: a kernel thread submits I/O from the ring, so workers make no system call to submit (IORING_SETUP_SQPOLL; it keeps a CPU busy)",
        |b, v| {
            b.spec.sqpoll = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Engine),
    Knob::switch(
        "uncached",
        "io_uring and sync: buffered reads and writes whose pages leave the page cache once done (RWF_DONTCACHE: kernel 6.14 and a file system that takes it; not with --direct)",
        |b, v| {
            b.spec.uncached = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Engine),
    Knob::switch(
        "atomic",
        "io_uring and sync: each write lands whole or not at all (RWF_ATOMIC; with --direct, and a block size inside the atomic write unit the target reports, statx STATX_WRITE_ATOMIC)",
        |b, v| {
            b.spec.atomic = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Engine),
    Knob::switch(
        "group_reporting",
        "fio JSON output (--output-format fio-json): the streams of a workload as one job, as fio's group_reporting; without it one job per stream",
        |b, v| {
            b.spec.group_reporting = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::FioOutput),
    Knob::switch(
        "new_group",
        "fio outputs: this stream starts a new reporting group (fio's new_group): with --group-reporting, it and the streams after it are one job apart from those before",
        |b, v| {
            b.spec.new_group = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::FioOutput),
    Knob::value(
        "percentile_list",
        "LIST",
        "fio JSON output: the percentiles to list, as fio's percentile_list (99:99.9:99.99); fathom's own outputs keep p50 to p99.99",
        |b, v| {
            let list = v
                .split(':')
                .map(|p| {
                    p.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|p| *p > 0.0 && *p <= 100.0)
                        .ok_or_else(|| format!("'{p}' is not a percentile above 0 up to 100"))
                })
                .collect::<Result<Vec<f64>, String>>()?;
            if list.len() > 20 {
                return Err(format!("{} percentiles: at most 20, as fio", list.len()));
            }
            b.spec.percentile_list = list;
            Ok(())
        },
    )
    .category(KnobCategory::FioOutput),
    Knob::value(
        "write_bw_log",
        "NAME",
        "After the run, write fio's bandwidth log NAME_bw.N.log (N: the job's number) from the per-second figures, for fio2gnuplot and fio-plot",
        |b, v| {
            b.spec.fio_logs.bw = Some(log_name(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::FioOutput),
    Knob::value(
        "write_lat_log",
        "NAME",
        "After the run, write fio's latency logs NAME_lat.N.log and NAME_clat.N.log (mean latency per line)",
        |b, v| {
            b.spec.fio_logs.lat = Some(log_name(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::FioOutput),
    Knob::value(
        "write_iops_log",
        "NAME",
        "After the run, write fio's IOPS log NAME_iops.N.log",
        |b, v| {
            b.spec.fio_logs.iops = Some(log_name(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::FioOutput),
    Knob::value(
        "log_avg_msec",
        "MS",
        "Milliseconds each line of the fio logs averages: a multiple of 1000 (fathom's figures are per second) [default: 1000]",
        |b, v| {
            let ms: u32 = parse_count(v)?;
            if ms == 0 || !ms.is_multiple_of(1000) {
                return Err(format!("{ms} ms is not a whole number of seconds (1000, 2000, ...)"));
            }
            b.spec.fio_logs.avg_s = ms / 1000;
            Ok(())
        },
    )
    .category(KnobCategory::FioOutput),
    Knob::value(
        "completion_wait",
        "WAIT",
        "io_uring: how a worker waits for completions: spin (poll the ring for up to 50us before sleeping, while completions come that fast), sleep, or auto (each worker measures both while it runs and keeps the one that completes more, from depth 4 polling only where it gains more I/Os than CPU per I/O; sleep when there are more workers than CPUs or more I/Os in flight than the device queues) [default: auto]",
        |b, v| {
            b.spec.completion_wait = v.parse()?;
            Ok(())
        },
    )
    .category(KnobCategory::Engine),
    Knob::value(
        "null_latency",
        "TIME",
        "With --engine null: complete each I/O this long after it is submitted, as a device with that fixed service time and --iodepth slots would (for testing and modelling; its capacity is iodepth / TIME) [default: 0]",
        |b, v| {
            b.spec.null_latency_ns = parse_duration(v)?.as_nanos() as u64;
            Ok(())
        },
    )
    .category(KnobCategory::Engine),
    Knob::value(
        "fsync",
        "N",
        "fsync after every N writes of each worker (0: never)",
        |b, v| {
            b.spec.fsync = parse_count(v)?;
            Ok(())
        },
    )
    .conflicts_with("fdatasync")
    .csv(|s| s.fsync.to_string())
    .table(|s| s.fsync.to_string())
    .category(KnobCategory::Durability),
    Knob::value(
        "fdatasync",
        "N",
        "fdatasync after every N writes of each worker (0: never): data and the metadata needed to read it, as databases flush their logs",
        |b, v| {
            b.spec.fdatasync = parse_count(v)?;
            Ok(())
        },
    )
    .conflicts_with("fsync")
    .csv(|s| s.fdatasync.to_string())
    .table(|s| s.fdatasync.to_string())
    .category(KnobCategory::Durability),
    Knob::value(
        "random_distribution",
        "DIST",
        "Spread of random offsets: uniform, zipf:THETA (1.2: a few blocks hot), pareto:H (0 to 1), normal:DEV (a bell, DEV percent of the region wide), zoned:60/10:30/20:10/70 (60% of I/Os in the first 10% of the region, 30% in the next 20%, ...) zoned_abs:60/1g:40/10g (zones in bytes), or sequence:2,0,1 (these blocks in this order, over and over; sequence:2,0,1:strided moves on by three blocks each pass)",
        |b, v| {
            b.spec.random_distribution = v.parse()?;
            Ok(())
        },
    )
    .csv(|s| s.random_distribution.to_string())
    .table(|s| s.random_distribution.to_string())
    .category(KnobCategory::Pattern),
    Knob::switch(
        "random_map",
        "Uniform random modes: each block once a pass, in an order drawn afresh for each pass and shared by the workers of a target (fio's random map, on in fio job files unless norandommap); by default offsets are drawn with replacement, so a pass touches about 63% of the blocks",
        |b, v| {
            b.spec.random_map = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Pattern),
    Knob::value(
        "random_percent",
        "PCT",
        "Random modes: the share of I/Os at a random offset; the others follow on from the I/O before (fio's percentage_random) [default: 100]",
        |b, v| {
            b.spec.random_percent = parse_percent(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Pattern),
    Knob::value(
        "sequential_run",
        "N",
        "Random modes: each random offset starts a run of N I/Os one after the other (fio's rw=randread:N)",
        |b, v| {
            b.spec.sequential_run = parse_count(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Pattern),
    Knob::value(
        "stride",
        "SIZE",
        "Sequential modes: skip this much after each I/O, leaving holes; -SIZE walks the region backwards (fio's rw=read:8k, rw=read:-8k)",
        |b, v| {
            let (sign, size) = match v.strip_prefix('-') {
                Some(rest) => (-1, rest),
                None => (1, v.strip_prefix('+').unwrap_or(v)),
            };
            b.spec.stride = sign * i64::try_from(parse_size(size)?).map_err(|_| format!("'{v}' is too large"))?;
            Ok(())
        },
    )
    .category(KnobCategory::Pattern),
    Knob::value(
        "zones",
        "IO[:RANGE[:SKIP]]",
        "I/O in zones: IO bytes inside a zone RANGE wide (IO by default), then on to the next zone RANGE + SKIP further, wrapping at the region's end (fio's zonemode=strided: 256m:256m:2g samples a disk every 2.25 GiB)",
        |b, v| {
            b.spec.zones = Some(v.parse()?);
            Ok(())
        },
    )
    .category(KnobCategory::Zones),
    Knob::value(
        "zonemode",
        "MODE",
        "zbd: write a zoned block device zone by zone, each write at its zone's write pointer, reads below it, a full zone reset before it is written again (fio's zonemode=zbd); none: as any device [default: none]",
        |b, v| {
            b.spec.zoned.mode = v.parse()?;
            Ok(())
        },
    )
    .category(KnobCategory::Zones),
    Knob::value(
        "zone_size",
        "SIZE",
        "With --zonemode zbd: the zone size the workload expects; a device whose zones differ is refused (fio's zonesize) [default: the device's]",
        |b, v| {
            b.spec.zoned.zone_bytes = Some(parse_size(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::Zones),
    Knob::value(
        "max_open_zones",
        "N",
        "With --zonemode zbd: zones open for writing at once on the device [default: the device's limit]",
        |b, v| {
            b.spec.zoned.max_open = Some(parse_count::<u32>(v)?.max(1));
            Ok(())
        },
    )
    .category(KnobCategory::Zones),
    Knob::value(
        "job_max_open_zones",
        "N",
        "With --zonemode zbd: zones open for writing at once by each worker [default: no limit]",
        |b, v| {
            b.spec.zoned.worker_max_open = Some(parse_count::<u32>(v)?.max(1));
            Ok(())
        },
    )
    .category(KnobCategory::Zones),
    Knob::value(
        "zone_reset",
        "THRESHOLD:FREQUENCY",
        "With --zonemode zbd: once the zones hold THRESHOLD of the region in data, every 1/FREQUENCY-th write resets its zone first (fio's zone_reset_threshold and zone_reset_frequency: 0.7:0.125)",
        |b, v| {
            b.spec.zoned.reset = Some(crate::spec::zbd::parse_reset(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::Zones),
    Knob::switch(
        "read_beyond_wp",
        "With --zonemode zbd: reads go anywhere in a zone, written or not (fio's read_beyond_wp)",
        |b, v| {
            b.spec.zoned.read_beyond_wp = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Zones),
    Knob::value(
        "s3_endpoint",
        "URL[,URL...]",
        "For an s3://BUCKET[/PREFIX] target: the store's URL (http://HOST:PORT or https://...); several gateways of one store, comma-separated, each worker keeping to one in turn",
        |b, v| {
            b.spec.objects.endpoints = v.split(',').map(|e| e.trim_end_matches('/').to_string()).collect();
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "s3_region",
        "REGION",
        "For an s3:// target: the region requests are signed for [default: the profile's, AWS_REGION, or us-east-1]",
        |b, v| {
            b.spec.objects.region = Some(v.to_string());
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "s3_profile",
        "NAME",
        "For an s3:// target: the profile of ~/.aws/credentials and ~/.aws/config to sign with [default: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else the default profile]",
        |b, v| {
            b.spec.objects.profile = Some(v.to_string());
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::switch(
        "s3_virtual_host",
        "For an s3:// target: address the bucket as BUCKET.HOST instead of HOST/BUCKET",
        |b, v| {
            b.spec.objects.virtual_host = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::switch(
        "s3_ranges",
        "For an s3:// target: GETs read --bs ranges of each object (in --rw's order: read walks each object, randread picks a random range), not whole objects; --bs on the command line sets it",
        |b, v| {
            b.spec.objects.ranges = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "s3_connections",
        "N",
        "For an s3:// target: a multipart upload's parts in flight at once, each on its own keep-alive connection, per worker [default: 4]",
        |b, v| {
            b.spec.objects.connections = Some(parse_count(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "mix",
        "OP=SHARE,...",
        "For an s3:// target: the operations and each one's share of the requests: get, put, stat (HEAD), list (a page of keys), delete; get=45,put=15,stat=30,delete=10 is a common mix [default: from --rw: get for reads, put for writes]",
        |b, v| {
            b.spec.objects.mix = Some(v.parse()?);
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "object_size",
        "SIZE|LOW-HIGH|SIZE/SHARE:...",
        "For an s3:// target: the size of the objects written; a range each object's size is drawn from, as likely in each power of two; or sizes with their shares of the objects (4k/60:1m/40) [default: 1m]",
        |b, v| {
            b.spec.objects.object_size = Some(v.parse()?);
            Ok(())
        },
    )
    .sweeps()
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "objects",
        "N",
        "For an s3:// target: objects uploaded before the timed run when its mix reads them (not timed); without --runtime, also the requests the run makes [default: 100]",
        |b, v| {
            b.spec.objects.objects = Some(parse_count(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "part_size",
        "SIZE",
        "For an s3:// target: PUT objects as multipart uploads of parts this large (5m at least), --s3-connections parts at once [default: one request per object]",
        |b, v| {
            b.spec.objects.part_size = Some(parse_size(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "list_keys",
        "N",
        "For an s3:// target: keys a list operation asks for in one page [default: 1000]",
        |b, v| {
            b.spec.objects.list_keys = Some(parse_count(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "delete_batch",
        "N",
        "For an s3:// target: objects each delete takes, in one DeleteObjects request above 1 (1,000 at most) [default: 1, a DELETE]",
        |b, v| {
            b.spec.objects.delete_batch = Some(parse_count(v)?);
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::switch(
        "create_bucket",
        "For an s3:// target: make the bucket when it does not exist (it is left in place)",
        |b, v| {
            b.spec.objects.create_bucket = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::ObjectStore),
    Knob::value(
        "compress",
        "PCT",
        "Share of each written chunk that compresses away, 0 to 100 (fio's buffer_compress_percentage) [default: 0]",
        |b, v| {
            b.spec.content.compress_pct = parse_percent(v)?;
            Ok(())
        },
    )
    .csv(|s| s.content.compress_pct.to_string())
    .table(|s| format!("{}%", s.content.compress_pct))
    .category(KnobCategory::Content),
    Knob::value(
        "compress_chunk",
        "SIZE",
        "The unit --compress applies to (fio's buffer_compress_chunk) [default: 512]",
        |b, v| {
            let n = parse_size(v)?;
            if !(1..=16 << 20).contains(&n) {
                return Err(format!("'{v}' is outside 1 byte to 16m"));
            }
            b.spec.content.compress_chunk = n;
            Ok(())
        },
    )
    .category(KnobCategory::Content),
    Knob::value(
        "dedupe",
        "PCT",
        "Share of written blocks that repeat an earlier block, 0 to 100 (fio's dedupe_percentage) [default: 0]",
        |b, v| {
            b.spec.content.dedupe_pct = parse_percent(v)?;
            Ok(())
        },
    )
    .csv(|s| s.content.dedupe_pct.to_string())
    .table(|s| format!("{}%", s.content.dedupe_pct))
    .category(KnobCategory::Content),
    Knob::value(
        "dedupe_working_set",
        "PCT",
        "The earlier blocks --dedupe repeats, as a share of the region (fio's dedupe_working_set_percentage) [default: 5]",
        |b, v| {
            let p = parse_percent(v)?;
            if p == 0 {
                return Err("'0': the working set needs at least 1%".into());
            }
            b.spec.content.dedupe_working_set_pct = p;
            Ok(())
        },
    )
    .category(KnobCategory::Content),
    Knob::value(
        "pattern",
        "PATTERN",
        "What written blocks hold: random, zeros, 0xHEX or a quoted string (fio's buffer_pattern, zero_buffers) [default: random]",
        |b, v| {
            b.spec.content.pattern = v.parse()?;
            Ok(())
        },
    )
    .csv(|s| s.content.pattern.to_string())
    .category(KnobCategory::Content),
    Knob::value(
        "think_time",
        "TIME",
        "After every --think-every I/Os a worker waits for those in flight, then idles this long (fio's thinktime)",
        |b, v| {
            let pause_ns = parse_duration(v)?.as_nanos() as u64;
            let every = b.spec.think_time.map_or(1, |t| t.every);
            b.spec.think_time = Some(crate::spec::ThinkTime { pause_ns, every });
            Ok(())
        },
    )
    .category(KnobCategory::Rate),
    Knob::value(
        "think_every",
        "N",
        "I/Os between two pauses of --think-time (fio's thinktime_blocks) [default: 1]",
        |b, v| {
            let every = parse_count(v)?;
            let pause_ns = b.spec.think_time.map_or(0, |t| t.pause_ns);
            b.spec.think_time = Some(crate::spec::ThinkTime { pause_ns, every });
            Ok(())
        },
    )
    .category(KnobCategory::Rate),
    Knob::value(
        "seed",
        "N",
        "Seed for offsets and data, so runs repeat exactly",
        |b, v| {
            b.spec.seed = v
                .parse()
                .map_err(|_| format!("'{v}' is not a whole number"))?;
            Ok(())
        },
    )
    .csv(|s| s.seed.to_string())
    .category(KnobCategory::Content),
    Knob::value(
        "flow",
        "WEIGHT",
        "Keep this stream's I/Os in proportion to the other streams of its flow group, by weight: each worker of weight 8 issues about 8 I/Os for each one of weight 1 (fio's flow)",
        |b, v| {
            b.spec.flow = v
                .parse()
                .ok()
                .filter(|w| (1..=1_000_000).contains(w))
                .ok_or_else(|| format!("'{v}' is not a weight from 1 to 1000000"))?;
            Ok(())
        },
    )
    .category(KnobCategory::Streams),
    Knob::value(
        "flow_id",
        "N",
        "The flow group whose streams --flow keeps in proportion (fio's flow_id) [default: 0]",
        |b, v| {
            b.spec.flow_id = v
                .parse()
                .map_err(|_| format!("'{v}' is not a whole number"))?;
            Ok(())
        },
    )
    .category(KnobCategory::Streams),
    Knob::value(
        "flow_sleep",
        "DURATION",
        "With --flow: how long a stream held back sleeps once its I/Os in flight are done (fio's flow_sleep) [default: 0, look again at once]",
        |b, v| {
            b.spec.flow_sleep_us = parse_duration(v)?.as_micros() as u64;
            Ok(())
        },
    )
    .category(KnobCategory::Streams),
    Knob::value(
        "repeat",
        "N",
        "Run each workload N times in a row and report one of them (--pick); every repeat's figures are kept in the result",
        |b, v| {
            b.spec.repeat = v
                .parse()
                .map_err(|_| format!("'{v}' is not a whole number"))?;
            Ok(())
        },
    )
    .table(|s| s.repeat.to_string())
    .category(KnobCategory::Amount),
    Knob::value(
        "pick",
        "median|best",
        "With --repeat: report the repeat of median bandwidth, or the best one (the peak, as desktop disk benchmarks report it)",
        |b, v| {
            b.spec.pick = v.parse()?;
            Ok(())
        },
    )
    .table(|s| s.pick.to_string())
    .category(KnobCategory::Amount),
    Knob::value(
        "cmdprio",
        "PCT:CLASS[:LEVEL]",
        "Issue this share of the I/Os at this I/O priority, each I/O its own (io_uring), and report their latency apart from the others' (fio's cmdprio_percentage and cmdprio_class); 64k/100,1m/0:rt:0 gives a share per block size (fio's cmdprio_bssplit)",
        |b, v| {
            b.spec.cmdprio = Some(v.parse()?);
            Ok(())
        },
    )
    .category(KnobCategory::Priority),
    Knob::value(
        "arrivals",
        "even|poisson",
        "With a rate: space the I/Os evenly (the default) or as a Poisson process, exponential gaps as from many independent clients (fio's rate_process)",
        |b, v| {
            b.spec.arrivals = v.parse()?;
            Ok(())
        },
    )
    .category(KnobCategory::Rate),
    Knob::value(
        "rate_iops",
        "N",
        "Issue I/Os at this fixed rate per target (I/Os per second), on schedule; latency is also measured from when each I/O was due",
        |b, v| {
            b.spec.rate_iops = Some(
                v.parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r > 0.0)
                    .ok_or_else(|| format!("'{v}' is not a positive rate"))?,
            );
            Ok(())
        },
    )
    .csv(|s| optional(s.rate_iops))
    .table(|s| optional(s.rate_iops))
    .category(KnobCategory::Rate),
    Knob::value(
        "rate_bw",
        "SIZE/s",
        "As --rate-iops, in bytes per second (e.g. 18m/s)",
        |b, v| {
            let bytes = v.strip_suffix("/s").unwrap_or(v);
            b.spec.rate_bw = Some(parse_size(bytes)?);
            Ok(())
        },
    )
    .csv(|s| optional(s.rate_bw))
    .table(|s| {
        s.rate_bw
            .map_or(String::new(), |b| format!("{}/s", format_bytes(b)))
    })
    .category(KnobCategory::Rate),
    Knob::value(
        "rate_read",
        "RATE",
        "Issue reads on a schedule of their own: N I/Os or SIZE/s per target; writes go as fast as the depth allows unless --rate-write paces them too (fio's rate=R,W); with a mix, the direction that is behind its schedule goes first",
        |b, v| {
            b.spec.direction_rates.read = Some(v.parse()?);
            Ok(())
        },
    )
    .category(KnobCategory::Rate),
    Knob::value(
        "rate_write",
        "RATE",
        "Issue writes on a schedule of their own (see --rate-read)",
        |b, v| {
            b.spec.direction_rates.write = Some(v.parse()?);
            Ok(())
        },
    )
    .category(KnobCategory::Rate),
    Knob::value(
        "steady_state",
        "METRIC:LIMIT",
        "Stop once a figure holds steady: iops:2%, lat:5% (p99) or mean_lat:5% (every second of the last 10 within the band of their mean; :30s for another window), iops_slope:0.1% (the least-squares slope of the window under the limit, as fio's), iops:200 (an amount, not a share); --runtime is the longest the run may take",
        |b, v| {
            b.spec.steady_state = Some(v.parse()?);
            Ok(())
        },
    )
    .csv(|s| {
        s.steady_state
            .map(|c| c.to_string())
            .unwrap_or_default()
    })
    .category(KnobCategory::Checks),
    Knob::value(
        "drift",
        "BAND%:WINDOW",
        "Report the device changing during the run: per-second IOPS moving to a level more than BAND% away (p99: twice BAND%) and staying there at least WINDOW [default: 25%:5s]",
        |b, v| {
            b.spec.drift = v.parse()?;
            Ok(())
        },
    )
    .category(KnobCategory::Checks),
    Knob::switch(
        "verify",
        "Stamp every written block with a checked header and read everything back after the workload (intact, stale, misplaced, corrupt); with a read-only --rw, check what an earlier --verify --keep run wrote",
        |b, v| {
            b.spec.verify = match v {
                "true" | "after-write" => VerifyMode::AfterWrite,
                "interleaved" => VerifyMode::Interleaved,
                "false" | "off" => VerifyMode::Off,
                _ => {
                    return Err(format!(
                        "'{v}' is not one of true, false, after-write, interleaved"
                    ));
                }
            };
            Ok(())
        },
    )
    .conflicts_with("verify_interleaved")
    .csv(|s| crate::util::json_name(&s.verify))
    .category(KnobCategory::Verify),
    Knob::switch(
        "verify_interleaved",
        "As --verify, reading each block back as soon as its write completes",
        |b, v| {
            if parse_bool(v)? {
                b.spec.verify = VerifyMode::Interleaved;
            }
            Ok(())
        },
    )
    .conflicts_with("verify")
    .category(KnobCategory::Verify),
    Knob::switch(
        "continue_on_error",
        "Count I/O errors and keep going instead of ending the target at the first one",
        |b, v| {
            b.spec.continue_on_error = parse_bool(v)?;
            Ok(())
        },
    )
    .csv(|s| s.continue_on_error.to_string())
    .category(KnobCategory::Errors),
    Knob::switch(
        "end_fsync",
        "Flush each target (fsync) once the workers are done, so that what was written is on the device when the run ends (fio's end_fsync); the flush is in the disks' counters, not in the I/O figures",
        |b, v| {
            b.spec.end_fsync = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Durability),
    Knob::switch(
        "exitall",
        "For a stream: when it finishes, stop the workload's other streams (fio's exitall)",
        |b, v| {
            b.spec.exitall = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Errors),
    Knob::switch("keep", "Keep the files fathom created (marked as fathom's: a later run writes to one without --overwrite, where the file system keeps birth times), or the objects of an s3:// run with its marker", |b, v| {
        b.spec.keep = parse_bool(v)?;
        Ok(())
    })
    .category(KnobCategory::Safety),
    Knob::switch(
        "overwrite",
        "Allow writes to an existing file that fathom did not create",
        |b, v| {
            b.spec.overwrite = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Safety),
    Knob::switch(
        "i_know_this_destroys_data",
        "Allow writes to a block device that carries a file system, partition table or volume signature (one in use also needs --even-if-mounted)",
        |b, v| {
            b.spec.destroy_data = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Devices),
    Knob::switch(
        "even_if_mounted",
        "Allow writes to a block device that is mounted, swap, or held by LVM, RAID or dm-crypt right now (with --i-know-this-destroys-data; it corrupts what uses the device)",
        |b, v| {
            b.spec.even_if_mounted = parse_bool(v)?;
            Ok(())
        },
    )
    .category(KnobCategory::Devices),
];

pub fn normalize(key: &str) -> String {
    key.trim().replace('-', "_")
}

pub fn find(key: &str) -> Option<&'static Knob> {
    let key = normalize(key);
    KNOBS.iter().find(|k| k.name == key)
}

pub fn is_knob(key: &str) -> bool {
    find(key).is_some()
}

pub fn is_sweepable(key: &str) -> bool {
    find(key).is_some_and(|k| k.sweepable)
}

/// A spec being assembled knob by knob; `finish` resolves knobs that depend
/// on each other (the read share depends on the mode).
#[derive(Debug, Clone)]
pub struct SpecBuilder {
    pub spec: WorkloadSpec,
    rwmix_read: u8,
}

impl SpecBuilder {
    pub fn new(spec: WorkloadSpec) -> Self {
        SpecBuilder {
            rwmix_read: if spec.rw.is_mixed() {
                spec.rwmix_read
            } else {
                50
            },
            spec,
        }
    }

    /// Sets `key` from its text form; the error names neither key nor
    /// source, which the caller adds.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let knob = find(key).ok_or_else(|| format!("unknown setting '{}'", normalize(key)))?;
        (knob.set)(self, value.trim())
    }

    pub fn finish(mut self) -> WorkloadSpec {
        self.spec.rwmix_read = self.spec.rw.read_percent(self.rwmix_read);
        // An NVMe command goes past the page cache whatever the open says.
        self.spec.direct |= self.spec.engine.caps().nvme_passthrough;
        self.spec
    }
}

fn parse_count<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("'{v}' is not a whole number"))
}

/// A log name is a file name stem, perhaps with a directory.
fn log_name(v: &str) -> Result<String, String> {
    if v.is_empty() || v.ends_with('/') {
        return Err(format!("'{v}' is not a file name"));
    }
    Ok(v.to_string())
}

fn parse_bool(v: &str) -> Result<bool, String> {
    match v {
        "true" | "yes" | "1" => Ok(true),
        "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{v}' is not true or false")),
    }
}

/// A stream as `--stream` gives it: `NAME:KNOB=VALUE,KNOB=VALUE...`, knobs
/// named as the flags are (`rate-iops=5000`); `targets=a|b` picks targets
/// by label. Returns the name and the settings in order.
pub fn parse_stream(text: &str) -> Result<(String, Vec<(String, String)>), String> {
    let (name, rest) = text
        .split_once(':')
        .ok_or_else(|| format!("'{text}' is not NAME:KNOB=VALUE,..."))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(format!(
            "'{name}' is not a stream name (letters, digits, - _ .)"
        ));
    }
    let mut settings = Vec::new();
    for item in rest.split(',').filter(|i| !i.trim().is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| format!("stream {name}: '{item}' is not KNOB=VALUE"))?;
        let k = normalize(k);
        if k != "targets" && !is_knob(&k) {
            return Err(format!("stream {name}: unknown setting '{k}'"));
        }
        settings.push((k, v.trim().to_string()));
    }
    Ok((name.to_string(), settings))
}

/// A target as given: `PATH`, or `LABEL=PATH` to name it in reports. A
/// path that exists is a path, `=` and all (`k=v.dat`); to label it, give
/// the label too (`data=k=v.dat`).
pub fn split_label(target: &str) -> (Option<&str>, &str) {
    if std::path::Path::new(target).symlink_metadata().is_ok() {
        return (None, target);
    }
    if let Some((label, path)) = target.split_once('=') {
        let simple = !label.is_empty()
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if simple && !path.is_empty() {
            return (Some(label), path);
        }
    }
    (None, target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RwMode;

    /// A knob is found by its own name, as its flag and job files spell it
    /// (`--no-fadvise` was once "unknown" because its name had a dash).
    #[test]
    fn every_knob_is_found_by_its_name_and_its_flags_spelling() {
        for k in KNOBS {
            assert_eq!(find(k.name).map(|f| f.name), Some(k.name));
            assert!(find(&k.name.replace('_', "-")).is_some(), "{}", k.name);
        }
    }

    #[test]
    fn knobs_set_and_resolve() {
        let mut b = SpecBuilder::new(WorkloadSpec::defaults(vec!["x".into()]));
        b.set("rw", "randrw").unwrap();
        b.set("rwmix-read", "70").unwrap();
        b.set("bs", "8k").unwrap();
        b.set("runtime", "2m").unwrap();
        b.set("buffered", "true").unwrap();
        let s = b.finish();
        assert_eq!((s.rw, s.rwmix_read, s.bs), (RwMode::RandRw, 70, 8192));
        assert_eq!((s.runtime_s, s.direct), (Some(120.0), false));
    }

    #[test]
    fn bad_values_and_keys_are_named() {
        let mut b = SpecBuilder::new(WorkloadSpec::defaults(vec!["x".into()]));
        assert!(b.set("iodepth", "deep").unwrap_err().contains("deep"));
        assert!(b.set("colour", "blue").unwrap_err().contains("colour"));
        assert!(b.set("rwmix_read", "150").is_err());
        assert!(b.set("direct", "maybe").is_err());
    }

    #[test]
    fn streams_parse_from_flags() {
        let (name, settings) = parse_stream("wal: rw=write, bs=16k,fsync=1,targets=logs").unwrap();
        assert_eq!(name, "wal");
        assert_eq!(settings[1], ("bs".into(), "16k".into()));
        assert_eq!(settings[3], ("targets".into(), "logs".into()));
        assert!(parse_stream("rw=write").is_err());
        assert!(parse_stream("a b:rw=write").is_err());
        assert!(
            parse_stream("x:colour=blue")
                .unwrap_err()
                .contains("colour")
        );
        assert!(parse_stream("x:rw").unwrap_err().contains("KNOB=VALUE"));
    }

    #[test]
    fn labels_split_only_when_simple() {
        assert_eq!(split_label("logs=/var/log"), (Some("logs"), "/var/log"));
        assert_eq!(split_label("/data/a=b"), (None, "/data/a=b"));
        assert_eq!(split_label("/dev/sdb"), (None, "/dev/sdb"));
    }
}
