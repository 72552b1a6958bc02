//! fio's options, one by one: the translations of those that need their
//! own (each named in its row of `table::OPTIONS`), and the values each
//! takes.

use super::ini::Opt;
use super::job::{Action, Job};
use crate::spec::EngineKind;

/// The problems fathom would find in a job's knobs once translated, each
/// at the fio line that set the knob (`origin`), or at the job's section
/// for a problem of the whole job.
pub(super) fn check_values(
    job: &Job,
    origin: &[(String, String)],
    section_line: &str,
) -> Vec<String> {
    use crate::spec::{WorkloadSpec, knobs::SpecBuilder};
    let mut builder = SpecBuilder::new(WorkloadSpec::defaults(job.targets()));
    let mut problems = Vec::new();
    for (knob, value) in &job.knobs {
        if let Err(e) = builder.set(knob, value) {
            let at = origin
                .iter()
                .find(|(k, _)| k == knob)
                .map_or_else(|| section_line.to_string(), |(_, at)| at.clone());
            problems.push(format!("{at}: {e}"));
        }
    }
    if problems.is_empty()
        && let Err(e) = builder.finish().validate()
    {
        // The line of the knob the message names first, if a line set it.
        let named = e.0.split_whitespace().find_map(|w| w.strip_prefix("--"));
        let at = named
            .map(|flag| flag.trim_end_matches([':', ',']).replace('-', "_"))
            .and_then(|knob| origin.iter().find(|(k, _)| *k == knob))
            .map_or(section_line, |(_, at)| at.as_str());
        let name = job.clone.as_ref().map_or(&job.name, |(_, n)| n);
        problems.push(format!("{at}: job {name}: {}", e.0));
    }
    problems
}

/// Where a job's problems that belong to no one line are reported: its
/// section's first option, or the first global one.
pub(super) fn section_at(own: &[Opt], global: &[Opt]) -> String {
    own.first()
        .or(global.first())
        .map_or_else(|| "the job".to_string(), |o| o.at.clone())
}

/// The size of an existing file or block device.
pub(super) fn target_size(path: &str) -> Result<u64, String> {
    crate::gate::read::size_of(std::path::Path::new(path))
}

/// fio's `1`/`0`, `true`/`false`, or a bare key meaning on.
pub(super) fn flag(opt: &Opt) -> Result<bool, String> {
    match opt.value.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("1") | Some("true") | Some("on") | Some("yes") => Ok(true),
        Some("0") | Some("false") | Some("off") | Some("no") => Ok(false),
        Some(v) => Err(format!("{}={v}: expected 0 or 1", opt.key)),
    }
}

/// A count of 1 or more.
pub(super) fn count(opt: &Opt) -> Result<u64, String> {
    let v = value(opt)?;
    v.parse()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| format!("{}={v}: a whole number from 1", opt.key))
}

pub(super) fn value(opt: &Opt) -> Result<&str, String> {
    opt.value
        .as_deref()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("option '{}' needs a value", opt.key))
}

/// fio's "read,write" pairs: one value for both, or two equal ones.
pub(super) fn same_for_reads_and_writes(opt: &Opt) -> Result<&str, String> {
    let v = value(opt)?;
    let mut parts = v.split(',').map(str::trim).filter(|p| !p.is_empty());
    let first = parts.next().unwrap_or(v);
    if parts.any(|p| p != first) {
        return Err(format!(
            "{}={v}: different values for reads and writes are not supported",
            opt.key
        ));
    }
    Ok(first)
}

/// fio's "read,write" pairs: (reads, writes), an empty or missing part
/// being fio's default for block sizes. A third part (trims) must match
/// the writes' part: fathom trims with the writes' sizes.
pub(super) fn reads_and_writes(opt: &Opt) -> Result<(&str, &str), String> {
    let v = value(opt)?;
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    pub(super) fn or_default<'a>(p: Option<&&'a str>) -> &'a str {
        match p {
            Some(p) if !p.is_empty() => p,
            _ => "4k",
        }
    }
    match parts.len() {
        1 => Ok((parts[0], parts[0])),
        2 | 3 => {
            let write = or_default(parts.get(1));
            match parts.get(2) {
                Some(trim) if !trim.is_empty() && *trim != write => Err(format!(
                    "{}={v}: trims take the writes' size in fathom ({write}), not {trim}",
                    opt.key
                )),
                _ => Ok((or_default(parts.first()), write)),
            }
        }
        _ => Err(format!("{}={v}: at most reads,writes,trims", opt.key)),
    }
}

/// fio's thinktime and thinktime_spin are microseconds unless they say
/// otherwise.
pub(super) fn microseconds(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_digit()) {
        format!("{v}us")
    } else {
        v.to_string()
    }
}

/// fio times are seconds unless they say otherwise.
pub(super) fn seconds(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_digit() || c == '.') {
        format!("{v}s")
    } else {
        v.to_string()
    }
}

pub(super) fn unsupported(opt: &Opt, why: &str) -> Result<Action, String> {
    Err(format!("option '{}' is not supported{why}", opt.key))
}

/// fio's engines that fathom runs the way fio does, so that no note is
/// needed (and fio's JSON names fathom's engine by them); the others it
/// runs on one of these are `spec::engine::FioEngine`.
const ENGINES: [(&str, EngineKind); 6] = [
    ("io_uring", EngineKind::IoUring),
    ("io_uring_cmd", EngineKind::IoUringCmd),
    ("psync", EngineKind::Sync),
    ("null", EngineKind::Null),
    ("falloc", EngineKind::Falloc),
    ("ftruncate", EngineKind::Ftruncate),
];

/// The fio engine that runs as fathom's `engine` does.
pub(super) fn fio_engine(engine: EngineKind) -> &'static str {
    ENGINES
        .iter()
        .find(|(_, kind)| *kind == engine)
        .map_or(engine.name(), |(fio, _)| fio)
}

/// The translations of the options that need their own, named as the
/// option table names them.
pub(super) fn nothing(_: &mut Job, _: &Opt) -> Result<Action, String> {
    Ok(Action::Done)
}

pub(super) fn name(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.name = value(opt)?.to_string();
    Ok(Action::Done)
}

pub(super) fn rw(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let key = &opt.key;
    let v = value(opt)?;
    let (mode, modifier) = v.split_once(':').unwrap_or((v, ""));
    let mode = match mode.trim() {
        "read" => "read",
        "write" => "write",
        "randread" => "randread",
        "randwrite" => "randwrite",
        "rw" | "readwrite" => "readwrite",
        "randrw" => "randrw",
        "trim" => "trim",
        "randtrim" => "randtrim",
        "trimwrite" => "trimwrite",
        "randtrimwrite" => "randtrimwrite",
        other => return Err(format!("{key}={other}: unknown mode")),
    };
    job.random = mode.starts_with("rand");
    job.set("rw", mode);
    job.unset("stride");
    job.unset("sequential_run");
    match modifier.trim() {
        "" | "0" => {}
        // For a random mode, I/Os per new offset; for a sequential
        // one, bytes added after each I/O (negative: backwards).
        n if job.random => {
            let n: u32 = n
                .parse()
                .map_err(|_| format!("{key}={v}: '{n}' is not a count of I/Os"))?;
            job.set("sequential_run", n.to_string());
        }
        stride => job.set("stride", stride),
    }
    Ok(Action::Done)
}

pub(super) fn rwmixwrite(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    let w: u8 = v
        .parse()
        .ok()
        .filter(|w| *w <= 100)
        .ok_or_else(|| format!("rwmixwrite={v}: 0 to 100"))?;
    job.set("rwmix_read", (100 - w).to_string());
    Ok(Action::Done)
}

pub(super) fn bs(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    match reads_and_writes(opt)? {
        (read, write) if read == write => {
            job.unset("bssplit");
            job.set("bs", read);
        }
        (read, write) => {
            job.unset("bs");
            job.set("bssplit", format!("{read}/100,{write}/100"));
        }
    }
    Ok(Action::Done)
}

pub(super) fn bssplit(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    let mut parts: Vec<&str> = v.split(',').collect();
    if parts.len() == 3 {
        // The third part is for trims, which fathom does not issue.
        parts.pop();
    }
    let split: crate::spec::BlockSizeSplit = parts
        .join(",")
        .parse()
        .map_err(|e| format!("{}={v}: {e}", opt.key))?;
    job.unset("bs");
    job.set("bssplit", split.to_string());
    Ok(Action::Done)
}

pub(super) fn blockalign(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = same_for_reads_and_writes(opt)?;
    job.set("block_align", size_of(opt, v)?.to_string());
    Ok(Action::Done)
}

/// A size in bytes, the error naming the option.
fn size_of(opt: &Opt, v: &str) -> Result<u64, String> {
    crate::util::units::parse_size(v).map_err(|e| format!("{}={v}: {e}", opt.key))
}

pub(super) fn bsrange(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = same_for_reads_and_writes(opt)?;
    match v.split_once('-') {
        Some((lo, hi)) if lo.trim().eq_ignore_ascii_case(hi.trim()) => job.set("bs", lo.trim()),
        _ => {
            return Err(format!(
                "{}={v}: a range of block sizes is not supported (give equal ends)",
                opt.key
            ));
        }
    }
    Ok(Action::Done)
}

pub(super) fn size(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    match v.strip_suffix('%') {
        Some(p) => {
            let pct: f64 = p
                .parse()
                .ok()
                .filter(|p| *p > 0.0 && *p <= 100.0)
                .ok_or_else(|| format!("size={v}: a percentage above 0 up to 100"))?;
            job.size_percent = Some((pct, opt.at.clone()));
            job.unset("size");
        }
        None => {
            job.size_percent = None;
            job.set("size", v);
        }
    }
    Ok(Action::Done)
}

pub(super) fn offset(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    if v.ends_with('%') {
        return unsupported(opt, " as a percentage (give a size)");
    }
    job.set("offset", v);
    Ok(Action::Done)
}

pub(super) fn filename(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    // fio separates files with ':' and escapes a ':' in a name as '\:'.
    let v = value(opt)?.replace("\\:", "\u{0}");
    job.files = v.split(':').map(|f| f.replace('\u{0}', ":")).collect();
    Ok(Action::Done)
}

pub(super) fn directory(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    // fio spreads a job's files over directories separated by ':' (a ':'
    // in a name escaped as '\:'): one directory of that name would be
    // another place than the job names.
    let v = value(opt)?;
    if v.replace("\\:", "").contains(':') {
        return unsupported(
            opt,
            " with several directories (a:b): one directory per job",
        );
    }
    job.directory = Some(v.replace("\\:", ":"));
    Ok(Action::Done)
}

pub(super) fn nrfiles(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    // How many a job may have depends on its engine (a worker per file, or
    // a tree's thread's share): checked once it is read.
    job.nrfiles = u32::try_from(count(opt)?).map_err(|_| format!("{}: too many files", opt.key))?;
    Ok(Action::Done)
}

pub(super) fn filesize(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    let size = match v.split_once('-') {
        Some((lo, hi)) if lo.trim().eq_ignore_ascii_case(hi.trim()) => lo.trim(),
        Some(_) => return unsupported(opt, " as a range (files of one size only)"),
        None => v,
    };
    size_of(opt, size)?;
    job.filesize = Some(size.to_string());
    Ok(Action::Done)
}

pub(super) fn offset_increment(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    if v.ends_with('%') {
        return unsupported(opt, " as a percentage (give a size)");
    }
    job.offset_increment = Some(size_of(opt, v)?);
    Ok(Action::Done)
}

pub(super) fn rate_process(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        "linear" | "0" => job.unset("arrivals"),
        "poisson" | "1" => job.set("arrivals", "poisson"),
        other => return Err(format!("rate_process={other}: linear or poisson")),
    }
    Ok(Action::Done)
}

pub(super) fn unified_rw_reporting(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        "none" | "0" => Ok(Action::Done),
        other => unsupported(
            opt,
            &format!("={other}: fathom reports each direction and their total"),
        ),
    }
}

pub(super) fn runtime(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.set("runtime", seconds(value(opt)?));
    job.runtime = true;
    Ok(Action::Done)
}

pub(super) fn time_based(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.time_based = flag(opt)?;
    Ok(Action::Done)
}

/// fio refuses to write a mounted device without it; fathom refuses one
/// that holds data too, and takes fio's word for both.
pub(super) fn allow_mounted_write(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    for knob in ["i_know_this_destroys_data", "even_if_mounted"] {
        match flag(opt)? {
            true => job.set(knob, "true"),
            false => job.unset(knob),
        }
    }
    Ok(Action::Done)
}

pub(super) fn unlink(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.unlink = flag(opt)?;
    Ok(Action::Done)
}

pub(super) fn zone_mode(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.zone_mode = Some(value(opt)?.to_string());
    Ok(Action::Done)
}

/// fio's `zone_reset_threshold` and `zone_reset_frequency`, kept until
/// the job's zones are set up (one fathom knob holds both).
pub(super) fn zone_reset(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    let share: f64 = v
        .parse()
        .ok()
        .filter(|x| (0.0..=1.0).contains(x))
        .ok_or_else(|| format!("{}={v}: a share from 0 to 1", opt.key))?;
    let at = usize::from(opt.key == "zone_reset_frequency");
    job.zone_reset[at] = Some(share);
    Ok(Action::Done)
}

pub(super) fn cmdprio(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let key = opt.key.as_str();
    let v = value(opt)?;
    // One value for reads and writes; fio also takes one each.
    let one = match v.split_once(',') {
        Some((r, w)) if r == w => r,
        Some(_) => {
            return unsupported(
                opt,
                " with a value per direction (give one for reads and writes)",
            );
        }
        None => v,
    };
    let n: u16 = one
        .parse()
        .map_err(|_| format!("{key}={v}: not a whole number"))?;
    match key {
        "cmdprio_percentage" if n <= 100 => job.cmdprio.0 = Some(n as u8),
        "cmdprio_class" if (1..=3).contains(&n) => job.cmdprio.1 = Some(n),
        "cmdprio" if n <= 7 => job.cmdprio.2 = Some(n as u8),
        _ => return Err(format!("{key}={v}: out of range")),
    }
    Ok(Action::Done)
}

pub(super) fn cmdprio_bssplit(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    job.cmdprio_bssplit =
        Some(super::job::PriorityBySize::parse(v).map_err(|e| format!("{}={v}: {e}", opt.key))?);
    Ok(Action::Done)
}

pub(super) fn zone_size(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let bytes = size_of(opt, value(opt)?)?;
    let at = ["zonesize", "zonerange", "zoneskip"]
        .iter()
        .position(|k| *k == opt.key)
        .expect("one of them");
    job.zone_sizes[at] = Some(bytes);
    Ok(Action::Done)
}

pub(super) fn start_delay(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    if v.contains('-') {
        return unsupported(
            opt,
            " as a range (fio draws each job's delay from it at random): give one delay",
        );
    }
    job.set("start_delay", seconds(v));
    Ok(Action::Done)
}

pub(super) fn flow(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    match v.parse::<i64>() {
        Ok(0) => job.unset("flow"),
        Ok(w) if (1..=1000).contains(&w) => job.set("flow", w.to_string()),
        _ => return Err(format!("flow={v}: a weight from 0 to 1000")),
    }
    Ok(Action::Done)
}

pub(super) fn wait_for(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.wait_for = Some((value(opt)?.to_string(), opt.at.clone()));
    Ok(Action::Done)
}

pub(super) fn exit_what(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        "group" | "stonewall" => job.exit_what_all = false,
        "all" => job.exit_what_all = true,
        other => return Err(format!("exit_what={other}: group, stonewall or all")),
    }
    Ok(Action::Done)
}

/// `prio` and `prioclass`, combined into --ioprio once the job is read
/// (`Job::io_priority`).
pub(super) fn priority(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    let n: u16 = v
        .parse()
        .map_err(|_| format!("{}={v}: not a whole number", opt.key))?;
    if opt.key == "prio" {
        if n > 7 {
            return Err(format!("prio={v}: a level from 0 to 7"));
        }
        job.priority.1 = Some(n as u8);
    } else {
        job.priority.0 =
            Some(crate::spec::priority::IoClass::of_number(n).ok_or_else(|| {
                format!("prioclass={v}: 1 (realtime), 2 (best effort) or 3 (idle)")
            })?);
    }
    Ok(Action::Done)
}

pub(super) fn fadvise_hint(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        "0" => job.set("no_fadvise", "true"),
        "1" => job.unset("no_fadvise"),
        other => {
            job.unset("no_fadvise");
            return Ok(Action::Note(format!(
                "fadvise_hint={other}: fathom hints random or sequential by the job's pattern, as fadvise_hint=1"
            )));
        }
    }
    Ok(Action::Done)
}

pub(super) fn ioengine(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    if v == "http" {
        job.http.get_or_insert_with(Default::default);
        return Ok(Action::Done);
    }
    let renamed = crate::spec::engine::FioEngine::parse(v);
    let engine = match (ENGINES.iter().find(|(fio, _)| *fio == v), renamed) {
        (Some((_, engine)), _) => engine.name(),
        (None, Some(fio)) => fio.runs_on().name(),
        (None, None) => match super::job::FileOp::of(v) {
            // The tree run does the work; the job's knobs stay valid for
            // the checks that read them.
            Some(op) => {
                job.file_op = Some(op);
                "null"
            }
            None => return Err(format!("ioengine={v} is not supported")),
        },
    };
    job.set("engine", engine);
    if renamed.is_none() {
        job.unset("fio_ioengine");
        return Ok(Action::Done);
    }
    job.set("fio_ioengine", v);
    Ok(Action::Note(format!(
        "ioengine={v} runs on fathom's {engine} engine{}",
        if engine == "sync" {
            " (pread/pwrite, as psync)"
        } else {
            " (asynchronous, as libaio)"
        }
    )))
}

/// `cmd_type`: the commands io_uring_cmd sends; fio 3.33 has NVMe's alone.
pub(super) fn cmd_type(_job: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        "nvme" => Ok(Action::Done),
        other => Err(format!(
            "cmd_type={other}: io_uring_cmd sends NVMe commands (cmd_type=nvme) only"
        )),
    }
}

/// `rate` and `rate_iops`: fio rates each direction with one value; an
/// empty part leaves that direction unrated.
pub(super) fn rate(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let key = opt.key.as_str();
    let v = value(opt)?;
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("{key}={v}: at most reads,writes,trims"));
    }
    let given = |i: usize| {
        parts
            .get(i)
            .filter(|p| !p.is_empty())
            .map(|p| p.to_string())
    };
    let (read, write) = if parts.len() == 1 {
        (given(0), given(0))
    } else {
        (given(0), given(1))
    };
    let unit = if key == "rate" { "/s" } else { "" };
    let as_rate = |r: Option<String>| -> Result<Option<String>, String> {
        r.map(|r| {
            let text = format!("{r}{unit}");
            text.parse::<crate::spec::Rate>()
                .map(|_| text)
                .map_err(|e| format!("{key}={v}: {e}"))
        })
        .transpose()
    };
    job.rates = Some((as_rate(read)?, as_rate(write)?, parts.len() == 1));
    Ok(Action::Done)
}

pub(super) fn norandommap(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.random_map = !flag(opt)?;
    Ok(Action::Done)
}

pub(super) fn randrepeat(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    if !flag(opt)? {
        job.set("seed", rand::random::<u32>().to_string());
    }
    Ok(Action::Done)
}

pub(super) fn random_distribution(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    // A sequence's commas separate its blocks, not directions.
    if v.contains(',') && !v.starts_with("sequence:") {
        return unsupported(
            opt,
            " with different distributions for reads and writes (give one for both)",
        );
    }
    let d: crate::spec::Distribution = v.parse().map_err(|e| format!("{}={v}: {e}", opt.key))?;
    job.set("random_distribution", d.to_string());
    Ok(Action::Done)
}

pub(super) fn cpus_allowed(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    let list: crate::spec::CpuList = v.parse().map_err(|e| format!("{}={v}: {e}", opt.key))?;
    job.set("cpus_allowed", list.to_string());
    Ok(Action::Done)
}

pub(super) fn cpumask(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    let digits = v.trim_start_matches("0x").trim_start_matches("0X");
    let mask = u64::from_str_radix(digits, if digits.len() < v.len() { 16 } else { 10 })
        .ok()
        .filter(|m| *m != 0)
        .ok_or_else(|| format!("{}={v}: not a mask of CPUs", opt.key))?;
    let cpus: Vec<String> = (0..64)
        .filter(|c| mask & (1 << c) != 0)
        .map(|c: u32| c.to_string())
        .collect();
    job.set("cpus_allowed", cpus.join(","));
    Ok(Action::Done)
}

pub(super) fn cpus_allowed_policy(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        p @ ("shared" | "split") => job.set("cpus_allowed_policy", p),
        other => return Err(format!("{}={other}: shared or split", opt.key)),
    }
    Ok(Action::Done)
}

pub(super) fn random_sequence_stride(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.sequence_strided = flag(opt)?;
    Ok(Action::Done)
}

pub(super) fn rw_sequencer(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        "sequential" => Ok(Action::Done),
        other => unsupported(opt, &format!("={other} (sequential only)")),
    }
}

pub(super) fn thinktime_blocks(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.think_every =
        Some(u32::try_from(count(opt)?).map_err(|_| format!("{}: too large", opt.key))?);
    Ok(Action::Done)
}

pub(super) fn thinktime_spin(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    Ok(Action::Note(format!(
        "thinktime_spin={} is accepted: fathom idles the whole think time asleep, which changes the CPU figures, not the I/O",
        value(opt)?
    )))
}

pub(super) fn thinktime_blocks_type(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        v @ ("complete" | "issue") => Ok(Action::Note(format!(
            "thinktime_blocks_type={v}: fathom pauses after issuing thinktime_blocks I/Os and seeing them complete"
        ))),
        other => Err(format!("{}={other}: complete or issue", opt.key)),
    }
}

pub(super) fn random_generator(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    Ok(Action::Note(format!(
        "random_generator={} is accepted: fathom draws offsets with its own generator",
        value(opt)?
    )))
}

pub(super) fn verify(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    if matches!(v, "0" | "null") {
        job.set("verify", "false");
        return Ok(Action::Done);
    }
    job.set("verify", "true");
    Ok(Action::Note(format!(
        "verify={v}: fathom checks every block it wrote with its own header and pattern after the job, not fio's {v}"
    )))
}

/// `stonewall` and `wait_for_previous`.
pub(super) fn stonewall(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.starts_group = flag(opt)?;
    Ok(Action::Done)
}

pub(super) fn io_submit_mode(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        "inline" => Ok(Action::Done),
        "offload" => Ok(Action::Note(
            "io_submit_mode=offload is accepted: fathom's rate schedule already issues each I/O when it is due, and times it from then".into(),
        )),
        other => Err(format!("io_submit_mode={other}: inline or offload")),
    }
}

pub(super) fn continue_on_error(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = opt.value.as_deref().unwrap_or("1");
    let on = !matches!(v, "0" | "none" | "false");
    job.set("continue_on_error", on.to_string());
    if on && !matches!(v, "1" | "all" | "io" | "true") {
        return Ok(Action::Note(format!(
            "continue_on_error={v}: fathom counts and goes on past every kind of I/O error, not only {v} errors"
        )));
    }
    Ok(Action::Done)
}

pub(super) fn ignore_error(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    if v.split(',').all(|list| list.trim().is_empty()) {
        return Ok(Action::Note(format!(
            "ignore_error={v} lists no errors: nothing to ignore"
        )));
    }
    job.set("continue_on_error", "true");
    Ok(Action::Note(format!(
        "ignore_error={v}: fathom counts and goes on past every I/O error (continue_on_error), not only those listed"
    )))
}

/// `steadystate` and `ss`: fio's criterion as fathom's.
pub(super) fn steadystate(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let key = opt.key.as_str();
    let v = value(opt)?;
    let (metric, band) = v
        .split_once(':')
        .ok_or_else(|| format!("{key}={v}: expected iops:N% or bw:N%"))?;
    let criterion = match metric {
        "iops" | "iops_slope" => format!("{metric}:{band}"),
        // fio 3.36's criteria on the mean completion latency.
        "lat" | "lat_slope" => format!("mean_{metric}:{band}"),
        "bw" | "bw_slope" if band.ends_with('%') => {
            let on = metric.replace("bw", "iops");
            job.steady = Some(format!("{on}:{band}"));
            return Ok(Action::Note(format!(
                "{key}={v}: judged on IOPS, which at one block size moves with bandwidth as a share of its mean"
            )));
        }
        "bw" | "bw_slope" => {
            return Err(format!(
                "{key}={v}: a bandwidth limit as an amount: give it in percent of the mean ({metric}:N%)"
            ));
        }
        _ => {
            return Err(format!(
                "{key}={v}: fio's criteria are iops, iops_slope, bw, bw_slope, lat and lat_slope"
            ));
        }
    };
    criterion
        .parse::<crate::measure::steady::SteadyState>()
        .map_err(|e| format!("{key}={v}: {e}"))?;
    job.steady = Some(criterion);
    Ok(Action::Done)
}

pub(super) fn steadystate_duration(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.steady_window = Some(seconds(value(opt)?));
    Ok(Action::Done)
}

/// fio 3.36's polling interval of its steady-state check.
pub(super) fn steadystate_check_interval(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    Ok(Action::Note(format!(
        "{}={} is accepted: fathom judges steadiness after every second",
        opt.key,
        value(opt)?
    )))
}

pub(super) fn steadystate_ramp_time(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    Ok(Action::Note(format!(
        "ss_ramp={} is accepted: fathom judges steadiness over its last window only, so an early ramp never counts",
        value(opt)?
    )))
}

/// `write_bw_log`, `write_lat_log` and `write_iops_log`.
pub(super) fn log(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    // Without a name fio names the logs after the job.
    let name = opt
        .value
        .as_deref()
        .filter(|v| !v.is_empty())
        .unwrap_or(&job.name)
        .to_string();
    job.set(&opt.key, name);
    Ok(Action::Done)
}

pub(super) fn log_avg_msec(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let ms = count(opt)?;
    let whole = ms.div_ceil(1000).max(1) * 1000;
    job.set("log_avg_msec", whole.to_string());
    if whole != ms {
        return Ok(Action::Note(format!(
            "log_avg_msec={ms}: fathom's figures are per second; its logs average {whole} ms"
        )));
    }
    Ok(Action::Done)
}

pub(super) fn zero_buffers(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    if opt.value.as_deref().is_none_or(|v| v != "0") {
        job.set("pattern", "zeros");
    }
    Ok(Action::Done)
}

pub(super) fn do_verify(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.do_verify = Some(flag(opt)?);
    Ok(Action::Done)
}

pub(super) fn verify_backlog(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.verify_backlog = count(opt)? > 0;
    Ok(Action::Done)
}

/// `buffer_pattern` and `verify_pattern`.
pub(super) fn pattern(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let v = value(opt)?;
    // fio's forms: 0xHEX, "string" or 'string'; a bare string is fio's too
    // (a number is a byte value there).
    let pattern = if v.starts_with(['"', '\'']) || v.starts_with("0x") || v.starts_with("0X") {
        v.to_string()
    } else if let Ok(n) = v.parse::<u32>() {
        match u8::try_from(n) {
            Ok(b) => format!("0x{b:02x}"),
            Err(_) => format!("0x{n:08x}"),
        }
    } else {
        format!("'{v}'")
    };
    pattern
        .parse::<crate::spec::content::DataPattern>()
        .map_err(|e| format!("{}={v}: {e}", opt.key))?;
    job.set("pattern", pattern);
    if opt.key == "verify_pattern" {
        return Ok(Action::Note(format!(
            "verify_pattern={v}: written as the blocks' data (--pattern), checked by fathom's header in each block rather than byte by byte"
        )));
    }
    Ok(Action::Done)
}

pub(super) fn read_iolog(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.read_iolog = Some(value(opt)?.to_string());
    Ok(Action::Done)
}

pub(super) fn replay_no_stall(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.replay_no_stall = flag(opt)?;
    Ok(Action::Done)
}

pub(super) fn replay_time_scale(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.replay_time_scale = Some(count(opt)?);
    Ok(Action::Done)
}

pub(super) fn replay_redirect(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.replay_redirect = Some(value(opt)?.to_string());
    Ok(Action::Done)
}

pub(super) fn loops(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.loops = Some(count(opt)?);
    Ok(Action::Done)
}

pub(super) fn kb_base(_: &mut Job, opt: &Opt) -> Result<Action, String> {
    if opt.value.as_deref() != Some("1024") {
        return unsupported(opt, " other than 1024 (fathom's k is 1024)");
    }
    // Accepted: the row's note says so.
    Ok(Action::Done)
}
