//! fio's job options, one row each, as fio's own `options.c` holds them:
//! the name fio knows, what fathom does with it (a knob it sets, a
//! translation of its own, a note, or a refusal), the value the tests give
//! it, the line docs/fio-options.md shows, and how fio's JSON says a
//! fathom spec with it. The translator (`options::apply`), the reader of
//! fio's JSON (`result::from_fio`) and the writer of fio's JSON
//! (`report::fio_json`) all read this one table; a test holds
//! docs/fio-options.md to it.

use super::ini::Opt;
use super::job::{Action, Job};
use super::options::{
    self as translate, count, flag, microseconds, same_for_reads_and_writes, seconds, value,
};
use crate::spec::WorkloadSpec;

/// What fathom does with an fio option, as docs/fio-options.md says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Carried out by fathom's own knobs.
    Translated,
    /// Changes no figure fathom measures: accepted, with a note.
    Accepted,
    /// Not carried out: refused before anything runs.
    Refused,
}

impl Handling {
    pub fn name(self) -> &'static str {
        match self {
            Handling::Translated => "translated",
            Handling::Accepted => "accepted",
            Handling::Refused => "refused",
        }
    }
}

/// How an option's value becomes the text of a fathom knob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// As given.
    AsIs,
    /// fio's 0/1 (or a bare key), as true or false.
    Flag,
    /// fio's 0/1, the other way round (`direct` sets `buffered`).
    NotFlag,
    /// Seconds unless the value says otherwise.
    Seconds,
    /// Microseconds unless the value says otherwise.
    Microseconds,
    /// A whole number from 1.
    Count,
    /// fio's "read,write" pair, which must say one value for both.
    SameForBoth,
}

/// A translation of its own: what the option does to the job, or why not.
pub(super) type Translator = fn(&mut Job, &Opt) -> Result<Action, String>;

/// How fio's JSON says a fathom spec with this option (None: it leaves the
/// option out for this spec).
pub type Writer = fn(&WorkloadSpec) -> Option<String>;

/// One of fio's job options.
pub struct FioOption {
    pub name: &'static str,
    pub handling: Handling,
    /// The value the tests give it.
    pub sample: &'static str,
    /// What fathom does with it, or why it refuses it.
    pub doc: &'static str,
    pub(super) how: How,
    /// How fio's JSON (`--output-format fio`) lists a spec with it.
    pub written: Option<Writer>,
    /// The fio release that added it, for options newer than fio 3.33.
    pub since: Option<&'static str>,
}

/// What the translator does with an option.
#[derive(Clone, Copy)]
pub(super) enum How {
    /// Sets the fathom knob from the value in this form.
    Knob(&'static str, Form),
    /// A translation of its own.
    With(Translator),
    /// A note that it is accepted (the doc line says why).
    Note,
    /// A refusal (the doc line says why).
    Refuse,
}

const fn knob(
    name: &'static str,
    knob: &'static str,
    form: Form,
    sample: &'static str,
    doc: &'static str,
) -> FioOption {
    FioOption {
        name,
        handling: Handling::Translated,
        sample,
        doc,
        how: How::Knob(knob, form),
        written: None,
        since: None,
    }
}

const fn translated(
    name: &'static str,
    with: Translator,
    sample: &'static str,
    doc: &'static str,
) -> FioOption {
    FioOption {
        how: How::With(with),
        ..knob(name, "", Form::AsIs, sample, doc)
    }
}

const fn accepted(name: &'static str, sample: &'static str, doc: &'static str) -> FioOption {
    FioOption {
        handling: Handling::Accepted,
        how: How::Note,
        ..knob(name, "", Form::AsIs, sample, doc)
    }
}

const fn refused(name: &'static str, sample: &'static str, doc: &'static str) -> FioOption {
    FioOption {
        handling: Handling::Refused,
        how: How::Refuse,
        ..knob(name, "", Form::AsIs, sample, doc)
    }
}

impl FioOption {
    /// An accepted option whose value is checked, or whose note says more,
    /// by a function of its own.
    const fn with(self, with: Translator) -> FioOption {
        FioOption {
            how: How::With(with),
            ..self
        }
    }

    /// Added to fio in release `version` (after fio 3.33).
    const fn since(self, version: &'static str) -> FioOption {
        FioOption {
            since: Some(version),
            ..self
        }
    }

    const fn written(self, written: Writer) -> FioOption {
        FioOption {
            written: Some(written),
            ..self
        }
    }

    /// Its row in docs/fio-options.md.
    pub fn doc_row(&self) -> String {
        format!(
            "| `{}` | {} | {} | `{}` | {} |",
            self.name,
            self.since.unwrap_or(""),
            self.handling.name(),
            self.sample,
            self.doc
        )
    }
}

/// The option fio knows as `name`.
pub fn find(name: &str) -> Option<&'static FioOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// The options fio's JSON lists for a job fathom ran as `spec`, in the
/// table's order.
pub fn written(spec: &WorkloadSpec) -> Vec<(&'static str, String)> {
    OPTIONS
        .iter()
        .filter_map(|o| Some((o.name, o.written?(spec)?)))
        .collect()
}

/// What `opt` does to `job`, as its row of the option table says.
pub(super) fn apply(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let key = opt.key.as_str();
    let Some(row) = find(key) else {
        let hint = match did_you_mean(key) {
            Some(known) => format!(" (did you mean '{known}'?)"),
            None => " (not an fio option)".to_string(),
        };
        return Err(format!("option '{key}' is not supported{hint}"));
    };
    match row.how {
        How::Knob(knob, form) => {
            let v = match form {
                Form::AsIs => value(opt)?.to_string(),
                Form::Flag => flag(opt)?.to_string(),
                Form::NotFlag => (!flag(opt)?).to_string(),
                Form::Seconds => seconds(value(opt)?),
                Form::Microseconds => microseconds(value(opt)?),
                Form::Count => count(opt)?.to_string(),
                Form::SameForBoth => same_for_reads_and_writes(opt)?.to_string(),
            };
            job.set(knob, v);
            Ok(Action::Done)
        }
        // An accepted option's own check passes it with the row's note.
        How::With(translate) => match translate(job, opt)? {
            Action::Done if row.handling == Handling::Accepted => {
                Ok(Action::Note(format!("{key} is accepted: {}", row.doc)))
            }
            done => Ok(done),
        },
        How::Note => Ok(Action::Note(format!("{key} is accepted: {}", row.doc))),
        How::Refuse => match row.since {
            Some(v) => translate::unsupported(opt, &format!(" (fio {v}): {}", row.doc)),
            None => translate::unsupported(opt, &format!(": {}", row.doc)),
        },
    }
}

/// The fio option closest to `key`, if one is close enough to be a typo.
pub(super) fn did_you_mean(key: &str) -> Option<&'static str> {
    OPTIONS
        .iter()
        .map(|row| (strsim::jaro_winkler(key, row.name), row.name))
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// How fio's JSON names the engine a spec runs on.
mod written {
    pub(super) fn engine(s: &crate::spec::WorkloadSpec) -> Option<String> {
        Some(match s.fio_ioengine {
            Some(given) => given.name().to_string(),
            None => super::translate::fio_engine(s.engine).to_string(),
        })
    }
}

/// Every job option of fio's HOWTO (fio 3.42), in its order, those added
/// after fio 3.33 last, each with the release that added it.
pub static OPTIONS: &[FioOption] = &[
    accepted("kb_base", "1024", "1024 only: fathom's k is 1024").with(translate::kb_base),
    accepted("unit_base", "8", "reporting only"),
    translated("name", translate::name, "x", "the workload or stream name").written(|s| Some(s.name.clone())),
    translated("description", translate::nothing, "x", "ignored (a comment)"),
    translated("loops", translate::loops, "2", "`--io-size` of loops passes (size-bound jobs only)"),
    knob("numjobs", "numjobs", Form::AsIs, "2", "clones as streams, each doing the whole job (`clone_of`); fio's JSON and text say the numjobs asked").written(|s| Some(s.numjobs.to_string())),
    translated("runtime", translate::runtime, "10", "`--runtime`").written(|s| s.runtime_s.map(|r| (r.ceil() as u64).to_string())),
    translated("timeout", translate::runtime, "10", "`--runtime` (fio's older name for runtime)"),
    translated("time_based", translate::time_based, "1", "`--runtime` alone: a run with a runtime is time-bound").written(|s| s.runtime_s.map(|_| "1".to_string())),
    translated("startdelay", translate::start_delay, "1", "`--start-delay`: the job's I/O, ramp and runtime start that long after its group's (a range is refused)"),
    knob("ramp_time", "ramp", Form::Seconds, "5", "`--ramp`, with `--ramp-in-pass` as in every fio job: a size-bound job's ramp is part of its pass, and what follows it is measured"),
    accepted("clocksource", "1", "fathom times with the monotonic clock"),
    accepted("gtod_reduce", "1", "fathom times every I/O"),
    accepted("gtod_cpu", "1", "fathom times with the monotonic clock"),
    translated("directory", translate::directory, "/tmp", "files of their own in it, named as fio names them"),
    translated("filename", translate::filename, "/tmp/x", "the targets (`a:b` lists, the job's size spread over them, a worker each)").written(|s| Some(s.targets.join(":"))),
    refused("filename_format", "1", "not supported (name the files with filename=a:b, or use nrfiles)"),
    refused("unique_filename", "1", "not supported (name the files with filename=a:b, or use nrfiles)"),
    refused("opendir", "1", "not supported (name the files with filename=a:b, or use nrfiles)"),
    refused("lockfile", "1", "not supported (name the files with filename=a:b, or use nrfiles)"),
    translated("nrfiles", translate::nrfiles, "4", "files of their own, `JOB.CLONE.FILE`, each a target of `size / nrfiles` (a worker per file: a note says so for time-bound jobs)"),
    accepted("openfiles", "1", "fathom keeps every file open, with a worker of its own"),
    accepted("file_service_type", "1", "fathom keeps every file open, with a worker of its own"),
    refused("ioscheduler", "1", "fathom does not change the scheduler (set /sys/block/DEV/queue/scheduler)"),
    accepted("create_serialize", "1", "fathom lays out each new file in full with random data before it measures, and removes it afterwards"),
    accepted("create_fsync", "1", "fathom lays out each new file in full with random data before it measures, and removes it afterwards"),
    accepted("create_on_open", "1", "fathom lays out each new file in full with random data before it measures, and removes it afterwards"),
    refused("create_only", "1", "not supported (name the files with filename=a:b, or use nrfiles)"),
    accepted("allow_file_create", "1", "fathom lays out each new file in full with random data before it measures, and removes it afterwards"),
    translated("allow_mounted_write", translate::allow_mounted_write, "1", "`--i-know-this-destroys-data --even-if-mounted`: the job may write a block device that holds data or is in use (fio's own word for that; fathom refuses both without it)"),
    refused("pre_read", "1", "not supported: a buffered run reads what the page cache holds (fathom seqread measures cached against uncached reads)"),
    translated("unlink", translate::unlink, "1", "the files fathom created for the job are removed when it ends; without it they stay, as fio leaves them (marked as fathom's, so a later run writes them again); a file that was there before stays either way"),
    refused("unlink_each_loop", "1", "not supported (name the files with filename=a:b, or use nrfiles)"),
    translated("zonemode", translate::zone_mode, "strided", "strided: `--zones` with zonesize, zonerange and zoneskip (zonesize bytes in each zone, then the next); zbd: `--zonemode zbd`, with zonesize the zone size the device must have and the size of a zone in sizes given in zones (`offset=4z`)"),
    translated("zonerange", translate::zone_size, "1m", "the zone's width in `--zones` (zonesize unless given)"),
    translated("zonesize", translate::zone_size, "1m", "`--zones`: the bytes of I/O in each zone; without a zonemode, strided (as fio after 3.33; 3.33 itself refuses it)"),
    refused("zonecapacity", "1", "the zones' capacity is the device's, read from its zones (`--zonemode zbd`); a capacity of its own is not supported"),
    translated("zoneskip", translate::zone_size, "1m", "the gap between zones in `--zones`"),
    knob("read_beyond_wp", "read_beyond_wp", Form::Flag, "1", "`--read-beyond-wp` (with zonemode=zbd)"),
    knob("max_open_zones", "max_open_zones", Form::Count, "4", "`--max-open-zones` (with zonemode=zbd)"),
    knob("job_max_open_zones", "job_max_open_zones", Form::Count, "2", "`--job-max-open-zones` (with zonemode=zbd)"),
    refused("ignore_zone_limits", "1", "not supported: `--zonemode zbd` keeps to the device's open-zone limit"),
    translated("zone_reset_threshold", translate::zone_reset, "0.7", "`--zone-reset THRESHOLD:FREQUENCY` (with zonemode=zbd; the threshold is 1 unless given)"),
    translated("zone_reset_frequency", translate::zone_reset, "0.125", "`--zone-reset THRESHOLD:FREQUENCY` (with zonemode=zbd; no resets by the rule unless given)"),
    knob("direct", "buffered", Form::NotFlag, "1", "`--direct`").written(|s| Some(u8::from(s.direct).to_string())),
    knob("atomic", "atomic", Form::Flag, "1", "`--atomic` (RWF_ATOMIC on each write, with direct=1 and a bs inside the atomic write unit the target reports; a job that writes nothing leaves it off, as fio does)").since("3.38"),
    knob("buffered", "buffered", Form::Flag, "1", "`--buffered`"),
    translated("readwrite", translate::rw, "randread", "`--rw`; `randread:8` as `--sequential-run 8`, `read:8k`/`read:-8k` as `--stride`"),
    translated("rw", translate::rw, "randread", "`--rw` (`trim`, `randtrim`, `trimwrite` and `randtrimwrite` too); `randread:8` as `--sequential-run 8`, `read:8k`/`read:-8k` as `--stride`").written(|s| Some(s.rw.to_string())),
    translated("rw_sequencer", translate::rw_sequencer, "sequential", "sequential only"),
    translated("unified_rw_reporting", translate::unified_rw_reporting, "none", "none only: fathom reports each direction and their total"),
    translated("randrepeat", translate::randrepeat, "1", "the seed (`--seed`)"),
    accepted("allrandrepeat", "1", "fathom's offsets and data follow --seed"),
    knob("randseed", "seed", Form::AsIs, "7", "`--seed`"),
    accepted("fallocate", "1", "fathom lays out each new file in full with random data before it measures, and removes it afterwards"),
    translated("fadvise_hint", translate::fadvise_hint, "0", "on by default, as in fio: each worker of a buffered job hints random or sequential by its pattern; `0` is `--no-fadvise`"),
    refused("write_hint", "1", "write lifetime hints are not supported"),
    translated("offset", translate::offset, "1m", "`--offset` (not as a percentage)"),
    refused("offset_align", "1", "not supported: offsets are aligned to the block size"),
    translated("offset_increment", translate::offset_increment, "1m", "clone k starts k times it after `--offset`"),
    knob("number_ios", "number_ios", Form::Count, "100", "`--number-ios`: the job stops at whichever of its I/O count, bytes and runtime comes first, whatever its block sizes").written(|s| s.number_ios.map(|n| n.to_string())),
    knob("fsync", "fsync", Form::AsIs, "8", "`--fsync`").written(|s| (s.fsync > 0).then(|| s.fsync.to_string())),
    knob("fdatasync", "fdatasync", Form::AsIs, "8", "`--fdatasync`").written(|s| (s.fdatasync > 0).then(|| s.fdatasync.to_string())),
    refused("write_barrier", "1", "fathom flushes with fsync=N or fdatasync=N"),
    refused("sync_file_range", "1", "fathom flushes with fsync=N or fdatasync=N"),
    accepted("overwrite", "1", "fathom lays out each new file in full before it writes"),
    knob("end_fsync", "end_fsync", Form::Flag, "1", "`--end-fsync`: each target is flushed (fsync) once its workers are done; the flush shows in the disks' counters, not in the I/O figures"),
    knob("fsync_on_close", "end_fsync", Form::Flag, "1", "`--end-fsync`: fathom closes a target once, at the end, and flushes it then"),
    knob("rwmixread", "rwmix_read", Form::AsIs, "70", "`--rwmix-read`").written(|s| s.rw.is_mixed().then(|| s.rwmix_read.to_string())),
    translated("rwmixwrite", translate::rwmixwrite, "30", "`--rwmix-read` of 100 minus it"),
    translated("random_distribution", translate::random_distribution, "zoned:60/10:30/20:10/70", "`--random-distribution` (random, zipf, pareto, normal, zoned, zoned_abs, and fio's sequence, which is in fio after 3.42 and in no release yet; one for both directions; a sequence counts the I/Os of every direction together, where fio counts each direction's)"),
    translated("random_sequence_stride", translate::random_sequence_stride, "1", "in fio after 3.42 (no release yet): `sequence:…:strided`"),
    knob("percentage_random", "random_percent", Form::SameForBoth, "50", "`--random-percent`"),
    translated("norandommap", translate::norandommap, "1", "random offsets drawn with replacement; without it a uniform random job gets `--random-map`, each block once a pass, as fio's random map (a non-uniform one is drawn with replacement, and a note says so)"),
    refused("softrandommap", "1", "fathom keeps no random map"),
    accepted("random_generator", "tausworthe64", "fathom draws offsets with its own generator").with(translate::random_generator),
    translated("blocksize", translate::bs, "4k,64k", "`--bs`, or `--bssplit` when reads and writes differ"),
    translated("bs", translate::bs, "8k", "`--bs`, or `--bssplit` when reads and writes differ").written(|s| Some(s.bs.to_string())),
    translated("blocksize_range", translate::bsrange, "4k-4k", "equal ends only"),
    translated("bsrange", translate::bsrange, "4k-4k", "equal ends only"),
    translated("bssplit", translate::bssplit, "4k/50:64k/50", "`--bssplit`"),
    refused("blocksize_unaligned", "1", "block sizes are multiples of the smallest, aligned to it"),
    refused("bs_unaligned", "1", "block sizes are multiples of the smallest, aligned to it"),
    refused("bs_is_seq_rand", "1", "block sizes are multiples of the smallest, aligned to it"),
    translated("blockalign", translate::blockalign, "4k", "`--block-align` for random jobs; fio ignores it for sequential ones, and so does the translation"),
    translated("ba", translate::blockalign, "4k", "as blockalign"),
    translated("zero_buffers", translate::zero_buffers, "1", "`--pattern zeros`"),
    accepted("refill_buffers", "1", "fathom makes every written block unique (a stamp per sector) unless told to repeat blocks"),
    accepted("scramble_buffers", "1", "fathom makes every written block unique (a stamp per sector) unless told to repeat blocks"),
    knob("buffer_compress_percentage", "compress", Form::AsIs, "50", "`--compress`"),
    knob("buffer_compress_chunk", "compress_chunk", Form::AsIs, "4k", "`--compress-chunk`"),
    translated("buffer_pattern", translate::pattern, "0xdeadbeef", "`--pattern` (0xHEX, a quoted string, or a byte value)"),
    knob("dedupe_percentage", "dedupe", Form::AsIs, "30", "`--dedupe`"),
    accepted("dedupe_mode", "working_set", "fathom repeats blocks drawn from a working set of earlier writes (fio's working_set mode)"),
    knob("dedupe_working_set_percentage", "dedupe_working_set", Form::AsIs, "10", "`--dedupe-working-set`"),
    accepted("dedupe_global", "1", "each worker repeats its own earlier writes"),
    knob("invalidate", "invalidate", Form::Flag, "1", "`--invalidate` (on unless invalidate=0, as in fio): a buffered job starts with the targets' pages dropped from the cache, and a time_based one drops them again each time a worker has gone once over its region, as fio does at each pass"),
    refused("sync", "1", "fathom flushes with fsync=N or fdatasync=N"),
    refused("iomem", "1", "fathom allocates aligned buffers itself"),
    refused("mem", "1", "fathom allocates aligned buffers itself"),
    refused("iomem_align", "1", "fathom allocates aligned buffers itself"),
    refused("mem_align", "1", "fathom allocates aligned buffers itself"),
    refused("hugepage-size", "1", "fathom allocates aligned buffers itself"),
    refused("lockmem", "1", "fathom allocates aligned buffers itself"),
    translated("size", translate::size, "1g", "`--size` (also `N%` of an existing file or device)"),
    knob("io_size", "io_size", Form::AsIs, "1g", "`--io-size`"),
    knob("io_limit", "io_size", Form::AsIs, "1g", "`--io-size`"),
    translated("filesize", translate::filesize, "1m", "the size of each of the nrfiles (or named) files (not a range); a time-bound job goes round them for its runtime"),
    refused("file_append", "1", "not supported (name the files with filename=a:b, or use nrfiles)"),
    refused("fill_device", "1", "writing until the file system is full is not supported: fathom sizes every region before it runs and lays out what it reads; give size= (at most the file system's free space)"),
    refused("fill_fs", "1", "not supported (name the files with filename=a:b, or use nrfiles)"),
    translated("ioengine", translate::ioengine, "io_uring", "`--engine` (io_uring, io_uring_cmd, psync, null, falloc, ftruncate; libaio, posixaio, sync, pvsync, pvsync2 and libzbc with a note; falloc and ftruncate on files only, and without verify: they move no data); the file-operation engines filecreate, filestat, filedelete, dircreate, dirstat and dirdelete run as a tree run (`fathom tree`: each job a thread on its own `nrfiles`, the engine's operation timed, fio's JSON one job each)").written(written::engine),
    translated("cmdprio_percentage", translate::cmdprio, "20", "`--cmdprio PCT:CLASS:LEVEL`: that share of the I/Os at their own priority (io_uring), their latency reported apart (fio's `prios`)"),
    translated("cmdprio_class", translate::cmdprio, "1", "the class of `--cmdprio` (the highest, rt, unless given)"),
    translated("cmdprio", translate::cmdprio, "1", "the level of `--cmdprio` (0 unless given)"),
    translated("cmdprio_bssplit", translate::cmdprio_bssplit, "64k/100:1m/0", "`--cmdprio SIZE/PCT,…:CLASS[:LEVEL]`: one share per block size for reads and writes alike, one priority apart from the others (entries of two priorities, or hints, are refused: fathom reports one priority apart)"),
    accepted("fixedbufs", "1", "fathom sets up its io_uring ring itself (see docs/guide/engine.md on the settings it chooses)"),
    accepted("nonvectored", "1", "fathom sets up its io_uring ring itself (see docs/guide/engine.md on the settings it chooses)"),
    accepted("force_async", "1", "fathom sets up its io_uring ring itself (see docs/guide/engine.md on the settings it chooses)"),
    accepted("registerfiles", "1", "fathom sets up its io_uring ring itself (see docs/guide/engine.md on the settings it chooses)"),
    knob("sqthread_poll", "sqpoll", Form::Flag, "1", "`--sqpoll`"),
    accepted("sqthread_poll_cpu", "1", "fathom sets up its io_uring ring itself (see docs/guide/engine.md on the settings it chooses)"),
    translated("cmd_type", translate::cmd_type, "nvme", "`nvme` only (fio 3.33's one type): the NVMe commands of `--engine io_uring_cmd`"),
    knob("hipri", "hipri", Form::Flag, "1", "`--hipri`"),
    accepted("userspace_reap", "1", "fathom sets up its io_uring ring itself (see docs/guide/engine.md on the settings it chooses)"),
    refused("hipri_percentage", "1", "I/O priorities are not supported"),
    accepted("nowait", "1", "fathom sets up its io_uring ring itself (see docs/guide/engine.md on the settings it chooses)"),
    refused("cpuload", "1", "an option of the cpuio engine, which fathom does not have"),
    refused("cpuchunks", "1", "an option of the cpuio engine, which fathom does not have"),
    refused("cpumode", "1", "an option of the cpuio engine, which fathom does not have"),
    refused("exit_on_io_done", "1", "an option of the cpuio engine, which fathom does not have"),
    refused("namenode", "1", "an option of the libhdfs engine, which fathom does not have"),
    refused("port", "1", "an option of network and object-store engines, which fathom does not have"),
    refused("hostname", "1", "an option of the netsplice, net, rdma engine, which fathom does not have"),
    refused("serverip", "1", "an option of the librpma_* engine, which fathom does not have"),
    refused("direct_write_to_pmem", "1", "an option of the librpma_* engine, which fathom does not have"),
    refused("busy_wait_polling", "1", "an option of the librpma_*_server engine, which fathom does not have"),
    refused("interface", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("ttl", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("nodelay", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("protocol", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("proto", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("listen", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("pingpong", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("window_size", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("mss", "1", "an option of the netsplice, net engine, which fathom does not have"),
    refused("donorname", "1", "an option of the e4defrag engine, which fathom does not have"),
    refused("inplace", "1", "an option of the e4defrag engine, which fathom does not have"),
    refused("clustername", "1", "an option of the rbd,rados engine, which fathom does not have"),
    refused("rbdname", "1", "an option of the rbd engine, which fathom does not have"),
    refused("clientname", "1", "an option of the rbd,rados engine, which fathom does not have"),
    refused("conf", "1", "an option of the rados engine, which fathom does not have"),
    refused("busy_poll", "1", "an option of the rbd,rados engine, which fathom does not have"),
    refused("touch_objects", "1", "an option of the rados engine, which fathom does not have"),
    refused("pool", "1", "an option of network and object-store engines, which fathom does not have"),
    refused("cont", "1", "an option of the dfs engine, which fathom does not have"),
    refused("chunk_size", "1", "an option of network and object-store engines, which fathom does not have"),
    refused("object_class", "1", "an option of the dfs engine, which fathom does not have"),
    refused("skip_bad", "1", "an option of the mtd engine, which fathom does not have"),
    refused("hdfsdirectory", "1", "an option of the libhdfs engine, which fathom does not have"),
    refused("verb", "1", "an option of the rdma engine, which fathom does not have"),
    refused("bindname", "1", "an option of the rdma engine, which fathom does not have"),
    refused("stat_type", "1", "an option of the filestat engine: fathom's filestat runs stat(2) only"),
    refused("readfua", "1", "an option of the sg engine, which fathom does not have"),
    refused("writefua", "1", "an option of the sg engine, which fathom does not have"),
    refused("sg_write_mode", "1", "an option of the sg engine, which fathom does not have"),
    refused("stream_id", "1", "an option of the sg engine, which fathom does not have"),
    translated("http_host", super::http::host, "127.0.0.1:8333", "with ioengine=http: the store's host (a bucket's own AWS host, BUCKET.s3.REGION.amazonaws.com, for virtual-hosted requests): `--s3-endpoint`"),
    refused("http_user", "1", "WebDAV's: fathom speaks S3 (http_mode=s3) only"),
    refused("http_pass", "1", "WebDAV's: fathom speaks S3 (http_mode=s3) only"),
    translated("https", super::http::https, "on", "with ioengine=http: https:// (on) or http:// (off); insecure is refused: fathom checks the certificate"),
    translated("http_mode", super::http::mode, "s3", "`s3` only: fathom speaks S3"),
    translated("http_s3_region", super::http::region, "us-east-1", "`--s3-region`"),
    translated("http_s3_key", super::http::key, "secret", "with http_s3_keyid: the credentials the run signs with (never written into the translation)"),
    translated("http_s3_keyid", super::http::key_id, "AKID", "with http_s3_key: the credentials the run signs with"),
    translated("http_s3_security_token", super::http::security_token, "token", "with the keys: a session token the run signs with").since("3.41"),
    translated("http_object_mode", super::http::object_mode, "block", "`block`: an object of `bs` per block (`--object-size`, `--objects` size/bs); `range`: one object of `size` read in `bs` ranges (`--s3-ranges`)").since("3.41"),
    refused("http_s3_sse_customer_key", "1", "server-side encryption with a customer key: not sent by fathom"),
    refused("http_s3_sse_customer_algorithm", "1", "server-side encryption with a customer key: not sent by fathom"),
    refused("http_s3_storage_class", "1", "a storage class: not sent by fathom"),
    refused("http_swift_auth_token", "1", "Swift's: fathom speaks S3 (http_mode=s3) only"),
    accepted("http_verbose", "1", "libcurl's debug output: nothing to fathom"),
    refused("uri", "1", "an option of the nbd engine, which fathom does not have"),
    refused("gpu_dev_ids", "1", "an option of the libcufile engine, which fathom does not have"),
    refused("cuda_io", "1", "an option of the libcufile engine, which fathom does not have"),
    refused("nfs_url", "1", "an option of the nfs engine, which fathom does not have"),
    refused("program", "1", "an option of the exec engine, which fathom does not have"),
    refused("arguments", "1", "an option of the exec engine, which fathom does not have"),
    refused("grace_time", "1", "an option of the exec engine, which fathom does not have"),
    refused("std_redirect", "1", "an option of the exec engine, which fathom does not have"),
    refused("xnvme_async", "1", "an option of the xnvme engine, which fathom does not have"),
    refused("xnvme_sync", "1", "an option of the xnvme engine, which fathom does not have"),
    refused("xnvme_admin", "1", "an option of the xnvme engine, which fathom does not have"),
    refused("xnvme_dev_nsid", "1", "an option of the xnvme engine, which fathom does not have"),
    refused("xnvme_iovec", "1", "an option of the xnvme engine, which fathom does not have"),
    knob("iodepth", "iodepth", Form::AsIs, "8", "`--iodepth` (1 with a synchronous engine, as fio)").written(|s| Some(s.iodepth.to_string())),
    accepted("iodepth_batch_submit", "1", "fathom submits each I/O as it is queued and reaps what has completed, as fio with batches of 1"),
    accepted("iodepth_batch", "1", "fathom submits each I/O as it is queued and reaps what has completed, as fio with batches of 1"),
    accepted("iodepth_batch_complete_min", "1", "fathom reaps every completion that is ready, where fio reaps 1 per call by default (docs/guide/fio.md, IO depths)"),
    accepted("iodepth_batch_complete", "1", "fathom reaps every completion that is ready, where fio reaps 1 per call by default (docs/guide/fio.md, IO depths)"),
    accepted("iodepth_batch_complete_max", "1", "fathom reaps every completion that is ready, where fio reaps 1 per call by default (docs/guide/fio.md, IO depths)"),
    accepted("iodepth_low", "1", "fathom submits each I/O as it is queued and reaps what has completed, as fio with batches of 1"),
    refused("serialize_overlap", "1", "not supported"),
    translated("io_submit_mode", translate::io_submit_mode, "inline", "inline; offload with a note"),
    knob("thinktime", "think_time", Form::Microseconds, "100", "`--think-time` (µs unless a unit is given)"),
    accepted("thinktime_spin", "10", "fathom idles the whole think time asleep").with(translate::thinktime_spin),
    translated("thinktime_blocks", translate::thinktime_blocks, "4", "`--think-every`"),
    accepted("thinktime_blocks_type", "complete", "fathom pauses after issuing thinktime_blocks I/Os and seeing them complete").with(translate::thinktime_blocks_type),
    refused("thinktime_iotime", "1", "not supported: thinktime with thinktime_blocks is"),
    translated("rate", translate::rate, "10m", "`--rate-bw`; in a mixed job, or as a pair (`1m,500k`, `,500k`), `--rate-read` and `--rate-write`: fio rates each direction").written(|s| s.rate_bw.map(|r| r.to_string())),
    accepted("rate_min", "1", "fathom does not end a job that falls behind its rate: it counts each late I/O against the schedule"),
    accepted("ratemin", "1", "as rate_min"),
    translated("rate_iops", translate::rate, "500", "`--rate-iops`; in a mixed job, or as a pair (`500,100`, `,100`), `--rate-read` and `--rate-write`: fio rates each direction; with several block sizes, a bandwidth at the smallest, as fio rates it").written(|s| s.rate_iops.map(|r| (r.round() as u64).to_string())),
    accepted("rate_iops_min", "1", "fathom does not end a job that falls behind its rate: it counts each late I/O against the schedule"),
    translated("rate_process", translate::rate_process, "poisson", "`--arrivals even` (linear) or `--arrivals poisson` (exponential gaps of mean 1/rate)"),
    refused("rate_ignore_thinktime", "1", "not supported"),
    refused("latency_target", "1", "fathom's capacity search (\"how much load fits under p99 1 ms?\") is its alternative"),
    refused("latency_window", "1", "fathom's capacity search (\"how much load fits under p99 1 ms?\") is its alternative"),
    refused("latency_percentile", "1", "fathom's capacity search (\"how much load fits under p99 1 ms?\") is its alternative"),
    refused("latency_run", "1", "fathom's capacity search (\"how much load fits under p99 1 ms?\") is its alternative"),
    refused("max_latency", "1", "fathom's capacity search (\"how much load fits under p99 1 ms?\") is its alternative"),
    refused("rate_cycle", "1", "not supported"),
    refused("write_iolog", "1", "in a job file; record with `fathom run --record FILE` (fathom's trace format, which `fathom replay` plays)"),
    translated("read_iolog", translate::read_iolog, "io.log", "the job plays the log as `fathom replay` does, on the files the log names: each I/O due at its recorded time, latency counted from then (fio waits behind a slow device instead); a job file of one such job"),
    accepted("read_iolog_chunked", "1", "fathom reads the whole iolog into memory before the job starts"),
    refused("merge_blktrace_file", "1", "in a job file; `fathom replay TRACE TARGET...` plays one trace at a time (each of its devices on a target, `--map`)"),
    refused("merge_blktrace_scalars", "1", "in a job file; `fathom replay TRACE TARGET...` plays one trace at a time (each of its devices on a target, `--map`)"),
    refused("merge_blktrace_iters", "1", "in a job file; `fathom replay TRACE TARGET...` plays one trace at a time (each of its devices on a target, `--map`)"),
    translated("replay_no_stall", translate::replay_no_stall, "1", "the log played as fast as the depth allows, in order (`fathom replay --as-fast-as-possible`)"),
    translated("replay_time_scale", translate::replay_time_scale, "200", "the speed, in percent (200: `fathom replay --speed 2x`)"),
    translated("replay_redirect", translate::replay_redirect, "/tmp/x", "the target the log's one file plays on (a log of several files: give a `filename` for each)"),
    refused("replay_align", "1", "in a job file; see `fathom replay --help`"),
    refused("replay_scale", "1", "in a job file; see `fathom replay --help`"),
    refused("replay_skip", "1", "in a job file; see `fathom replay --help`"),
    accepted("thread", "1", "fathom's workers are threads"),
    translated("wait_for", translate::wait_for, "x", "`wait-for` of a stream: the job starts once the named job (all its clones) has finished; a job of an earlier group has finished already"),
    accepted("nice", "0", "fathom sets no nice level or NUMA policy (its --cpus-allowed places the workers on CPUs): run it under numactl or nice for the same placement"),
    translated("prio", translate::priority, "0", "`--ioprio be:LEVEL` (the class prioclass gives, best effort without it): each worker thread runs at it (ioprio_set)"),
    translated("prioclass", translate::priority, "1", "`--ioprio CLASS:LEVEL` (1 rt, 2 be, 3 idle)"),
    translated("cpus_allowed", translate::cpus_allowed, "0", "`--cpus-allowed`"),
    translated("cpus_allowed_policy", translate::cpus_allowed_policy, "split", "`--cpus-allowed-policy` (shared or split)"),
    translated("cpumask", translate::cpumask, "1", "`--cpus-allowed`, the mask's CPUs (decimal, or hex with 0x)"),
    accepted("numa_cpu_nodes", "0", "fathom sets no nice level or NUMA policy (its --cpus-allowed places the workers on CPUs): run it under numactl or nice for the same placement"),
    accepted("numa_mem_policy", "0", "fathom sets no nice level or NUMA policy (its --cpus-allowed places the workers on CPUs): run it under numactl or nice for the same placement"),
    refused("cgroup", "1", "fathom does not run its workers in a cgroup or as another user: run fathom itself that way"),
    refused("cgroup_weight", "1", "fathom does not run its workers in a cgroup or as another user: run fathom itself that way"),
    refused("cgroup_nodelete", "1", "fathom does not run its workers in a cgroup or as another user: run fathom itself that way"),
    knob("flow_id", "flow_id", Form::Count, "1", "`--flow-id`: the group whose jobs `flow` keeps in proportion"),
    translated("flow", translate::flow, "2", "`--flow`: each job's I/Os kept in proportion to the others' of its flow_id by weight, as fio's token count (a job ahead of its share waits)"),
    knob("flow_sleep", "flow_sleep", Form::Microseconds, "1000", "`--flow-sleep` (microseconds unless a unit is given): how long a job held back sleeps"),
    translated("stonewall", translate::stonewall, "1", "a new group: the workloads run one after the other"),
    translated("wait_for_previous", translate::stonewall, "1", "a new group: the workloads run one after the other"),
    knob("exitall", "exitall", Form::Flag, "1", "`exitall = true` on the job's stream: when it finishes, the workload's other streams stop"),
    translated("exit_what", translate::exit_what, "group", "group and stonewall: the streams running with the job (a workload); all: those too, and the groups after it are left out, with a note (fio starts nothing after the job ends)"),
    refused("exec_prerun", "1", "run the commands before and after fathom"),
    refused("exec_postrun", "1", "run the commands before and after fathom"),
    refused("uid", "1", "fathom does not run its workers in a cgroup or as another user: run fathom itself that way"),
    refused("gid", "1", "fathom does not run its workers in a cgroup or as another user: run fathom itself that way"),
    refused("verify_only", "1", "fathom verifies with its own header and pattern (verify=1)"),
    translated("do_verify", translate::do_verify, "0", "0: the job writes without the verify phase (fathom's `--verify` off)"),
    translated("verify", translate::verify, "0", "`--verify` (fathom's own header and pattern; a note for an algorithm)"),
    accepted("verify_offset", "1", "fathom places its own header at the start of each block"),
    accepted("verify_interval", "512", "fathom's header checks each whole block"),
    accepted("verify_pattern", "0xdeadbeef", "written as the blocks' data (`--pattern`), checked through fathom's header in each block").with(translate::pattern),
    accepted("verify_fatal", "1", "fathom checks every block and reports each kind of mismatch (intact, stale, misplaced, corrupt)"),
    accepted("verify_dump", "1", "fathom reports the mismatched blocks in its result instead of dumping them"),
    accepted("verify_async", "1", "how fio spreads checking over threads: changes no figure"),
    accepted("verify_async_cpus", "1", "how fio spreads checking over threads: changes no figure"),
    translated("verify_backlog", translate::verify_backlog, "16", "`--verify-interleaved`: each block read back as soon as its write completes (fio: after every N blocks), a note says so"),
    accepted("verify_backlog_batch", "1", "fathom reads each block back as its write completes"),
    refused("verify_state_save", "1", "fathom verifies with its own header and pattern (verify=1)"),
    refused("verify_state_load", "1", "fathom verifies with its own header and pattern (verify=1)"),
    refused("trim_percentage", "1", "trims of verified blocks: fathom refuses trims with --verify (use `--rw trim`, `randtrim`, `trimwrite` or `randtrimwrite`)"),
    refused("trim_verify_zero", "1", "trims of verified blocks: fathom refuses trims with --verify"),
    refused("trim_backlog", "1", "trims of verified blocks: fathom refuses trims with --verify"),
    refused("trim_backlog_batch", "1", "trims of verified blocks: fathom refuses trims with --verify"),
    refused("experimental_verify", "1", "fathom verifies with its own header and pattern (verify=1)"),
    translated("steadystate", translate::steadystate, "iops_slope:0.1%", "`--steady-state`: iops and iops_slope, as a share of the mean or an amount; bw and bw_slope judged on IOPS as a share of the mean; lat and lat_slope (fio 3.42 and later) on the mean latency (`mean_lat`)"),
    translated("ss", translate::steadystate, "iops:2%", "`--steady-state`"),
    translated("steadystate_duration", translate::steadystate_duration, "30", "the window of `--steady-state`"),
    translated("ss_dur", translate::steadystate_duration, "30", "the window of `--steady-state`"),
    accepted("steadystate_ramp_time", "5", "fathom judges steadiness over its last window only").with(translate::steadystate_ramp_time),
    accepted("ss_ramp", "5", "fathom judges steadiness over its last window only").with(translate::steadystate_ramp_time),
    accepted("steadystate_check_interval", "10", "fathom judges steadiness after every second").with(translate::steadystate_check_interval).since("3.35"),
    accepted("ss_interval", "10", "fathom judges steadiness after every second").with(translate::steadystate_check_interval).since("3.35"),
    accepted("per_job_logs", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    knob("group_reporting", "group_reporting", Form::Flag, "1", "`--group-reporting`").written(|s| s.group_reporting.then(|| "1".to_string())),
    knob("new_group", "new_group", Form::Flag, "1", "`new_group` on its stream: a reporting group of its own in fio's outputs (with group_reporting, one job per group)"),
    accepted("stats", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    translated("write_bw_log", translate::log, "x", "`--write-bw-log`: NAME_bw.N.log from the per-second figures (`fathom fio` too)"),
    translated("write_lat_log", translate::log, "x", "`--write-lat-log`: NAME_lat.N.log and NAME_clat.N.log (mean per line)"),
    accepted("write_hist_log", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    translated("write_iops_log", translate::log, "x", "`--write-iops-log`: NAME_iops.N.log"),
    accepted("log_entries", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    translated("log_avg_msec", translate::log_avg_msec, "1000", "`--log-avg-msec`, in whole seconds (rounded up, with a note)"),
    accepted("log_hist_msec", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_hist_coarseness", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_max_value", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_prio", "1", "fathom's logs have no priority column: every I/O of a job runs at the job's priority"),
    accepted("log_offset", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_compression", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_compression_cpus", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_store_compressed", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_unix_epoch", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_alternate_epoch", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("log_alternate_epoch_clock_id", "1", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms"),
    accepted("block_error_percentiles", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("bwavgtime", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("iopsavgtime", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("disk_util", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("disable_lat", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("disable_clat", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("disable_slat", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("disable_bw_measurement", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("disable_bw", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("slat_percentiles", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("clat_percentiles", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("lat_percentiles", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    knob("percentile_list", "percentile_list", Form::AsIs, "99:99.9", "`--percentile-list`: the percentiles of fio JSON output"),
    accepted("significant_figures", "1", "reporting only: fathom measures every I/O and the disk's counters"),
    accepted("exitall_on_error", "1", "fathom always stops a workload's streams when one of them fails"),
    translated("continue_on_error", translate::continue_on_error, "all", "`--continue-on-error`"),
    accepted("ignore_error", ",ENOSPC", "`--continue-on-error`, with a note: fathom goes on past every I/O error, counting each, not only those listed").with(translate::ignore_error),
    translated("error_dump", translate::nothing, "1", "ignored: fathom counts errors and names the first of each target in the result"),
    refused("profile", "1", "fio's profiles are not supported (fathom certify runs ACT)"),
    refused("device-names", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("load", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("test-duration", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("threads-per-queue", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("read-req-num-512-blocks", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("large-block-op-kbytes", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("prep", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("block", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("numruns", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    refused("dir", "1", "an option of fio's act and tiobench profiles (fathom certify runs ACT)"),
    accepted("threads", "1", "fathom's workers are threads"),
    // Added after fio 3.33, release by release.
    refused("fdp", "1", "NVMe flexible data placement is not built in fathom").since("3.34"),
    refused("fdp_pli", "0", "NVMe flexible data placement is not built in fathom (fdp_pli is fio's first name of plids)").since("3.34"),
    refused("libblkio_driver", "io_uring", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_path", "/dev/x", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_pre_connect_props", "x=1", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_num_entries", "1", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_queue_size", "1", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_pre_start_props", "x=1", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_vectored", "1", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_write_zeroes_on_trim", "1", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_wait_mode", "block", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("libblkio_force_enable_completion_eventfd", "1", "an option of the libblkio engine, which fathom does not have").since("3.34"),
    refused("xnvme_dev_subnqn", "x", "an option of the xnvme engine, which fathom does not have").since("3.34"),
    refused("xnvme_mem", "posix", "an option of the xnvme engine, which fathom does not have").since("3.34"),
    refused("no_completion_thread", "1", "an option of the windowsaio engine, which fathom does not have").since("3.34"),
    accepted("job_start_clock_id", "0", "fathom's job start is the wall clock (CLOCK_REALTIME, fio's default)").since("3.36"),
    refused("priohint", "1", "I/O priority hints (command duration limits) are not built in fathom: it sets a class and a level (prio, prioclass)").since("3.36"),
    refused("cmdprio_hint", "1", "I/O priority hints (command duration limits) are not built in fathom: --cmdprio sets a class and a level").since("3.36"),
    refused("fdp_pli_select", "random", "NVMe flexible data placement is not built in fathom (fdp_pli_select is fio's first name of plid_select)").since("3.36"),
    refused("md_per_io_size", "8", "NVMe metadata buffers are not built in fathom").since("3.36"),
    refused("pi_act", "1", "NVMe protection information is not built in fathom").since("3.36"),
    refused("pi_chk", "GUARD", "NVMe protection information is not built in fathom").since("3.36"),
    refused("apptag", "0x1234", "NVMe protection information is not built in fathom").since("3.36"),
    refused("apptag_mask", "0xffff", "NVMe protection information is not built in fathom").since("3.36"),
    accepted("log_window_value", "avg", "fathom writes the bandwidth, latency and IOPS logs with a line per second, and no histogram logs; every I/O is in its JSON histograms").since("3.37"),
    refused("num_range", "2", "trims of several ranges in one command are not built in fathom's io_uring_cmd (one range a trim)").since("3.37"),
    refused("thinkcycles", "1000", "a stall counted in CPU cycles is not built in fathom: its think time is a time (thinktime)").since("3.37"),
    refused("dataplacement", "fdp", "NVMe flexible data placement and streams are not built in fathom").since("3.38"),
    refused("data_placement", "fdp", "NVMe flexible data placement and streams are not built in fathom (data_placement is fio's other name of dataplacement)").since("3.38"),
    refused("plids", "0", "NVMe flexible data placement is not built in fathom").since("3.38"),
    refused("plid_select", "random", "NVMe flexible data placement is not built in fathom").since("3.38"),
    refused("dp_scheme", "/tmp/x", "NVMe flexible data placement is not built in fathom").since("3.38"),
    refused("log_issue_time", "1", "fathom's latency logs have no issue-time column").since("3.38"),
    refused("write_mode", "uncor", "io_uring_cmd's other write commands (write uncorrectable, write zeroes, verify) are not built in fathom: it writes with Write").since("3.38"),
    refused("verify_mode", "compare", "io_uring_cmd's Compare command is not built in fathom: it verifies by reading").since("3.38"),
    accepted("verify_write_sequence", "0", "fathom checks its own header in each block (its write's sequence and place), whatever this says").since("3.38"),
    refused("deac", "1", "io_uring_cmd's write zeroes (with deallocate) is not built in fathom").since("3.39"),
    accepted("libaio_vectored", "1", "fathom's libaio jobs run on io_uring, one buffer an I/O").since("3.39"),
    refused("recover_zbd_write_error", "1", "fathom stops a zoned drive's job at a write's error; it does not move write pointers").since("3.40"),
    accepted("verify_header_seed", "0", "fathom checks its own header in each block, whatever this says").since("3.40"),
    refused("verify_pattern_interval", "4096", "a pattern begun again every N bytes is not built in fathom: its pattern fills each block").since("3.40"),
    accepted("filetype", "file", "fathom looks at each target once before it runs, whatever this says").since("3.41"),
    refused("sprandom", "1", "SPRandom preconditioning is not built in fathom (fathom pts preconditions as SNIA PTS does)").since("3.41"),
    refused("spr_num_regions", "100", "SPRandom preconditioning is not built in fathom (fathom pts preconditions as SNIA PTS does)").since("3.41"),
    refused("spr_op", "0.15", "SPRandom preconditioning is not built in fathom (fathom pts preconditions as SNIA PTS does)").since("3.41"),
    accepted("comm", "fio", "the process's name: fathom's workers are threads of fathom").since("3.42"),
    knob("end_syncfs", "end_fsync", Form::Flag, "1", "`--end-fsync`: each target flushed once its workers are done (fathom flushes each file, where fio makes one syncfs call for all)").since("3.42"),
    refused("ramp_size", "1m", "a ramp by amount is not built in fathom: it ramps by time (ramp_time)").since("3.42"),
    refused("rbd_encryption_format", "luks2", "an option of the rbd engine, which fathom does not have").since("3.42"),
    refused("rbd_encryption_passphrase", "x", "an option of the rbd engine, which fathom does not have").since("3.42"),
    refused("spr_cs", "0", "SPRandom preconditioning is not built in fathom (fathom pts preconditions as SNIA PTS does)").since("3.42"),
    refused("write_zone_remainder", "1", "fathom writes whole blocks into zones; a zone's remainder is left unwritten").since("3.42"),
    refused("write_zone_remainders", "1", "fathom writes whole blocks into zones; a zone's remainder is left unwritten").since("3.42"),
    knob("uncached", "uncached", Form::Flag, "1", "`--uncached` (RWF_DONTCACHE on each buffered read and write; with direct=1 fio and fathom leave it off)").since("3.40"),
];
