//! fio job files run as they are: the INI file (`[global]`, job sections,
//! `include`, `${VAR}`) is translated option by option into a fathom TOML
//! job file, which `--explain` prints and the TOML reader then runs, so
//! what is shown is exactly what runs.
//!
//! Jobs not separated by `stonewall` (or `wait_for_previous`) run at the same
//! time, as the streams of one workload; each stonewall starts the next
//! workload. An option fathom does not carry out is refused with its file
//! and line; where fathom's figures could differ from fio's, a note says
//! how. fio's defaults are written out where fathom's differ (rw=read,
//! iodepth=1, the psync engine, buffered I/O), so nothing changes silently.

use crate::error::UsageError;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// fio job files are small; anything larger is not one.
const MAX_JOB_FILE: u64 = 1 << 20;
/// `include` nesting deeper than this is a loop.
const MAX_INCLUDE_DEPTH: usize = 8;

/// A fio job file as a fathom job file, and how the two differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    pub toml: String,
    /// One line per difference between what fio would do and what fathom
    /// does, and per option accepted that changes nothing measured.
    pub notes: Vec<String>,
}

/// Whether `path` is a fio job file: by extension, or by INI content (a
/// `[section]` line followed by `key=value` lines, which TOML would quote).
pub fn is_fio_job(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "fio") {
        return true;
    }
    if path.extension().is_some_and(|e| e == "toml") || !path.is_file() {
        return false;
    }
    let Ok(text) = read_limited(path) else {
        return false;
    };
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';']));
    lines
        .next()
        .is_some_and(|l| l.starts_with('[') && l.ends_with(']'))
        && lines.any(|l| l.contains('=') && !l.contains('"'))
}

fn read_limited(path: &Path) -> Result<String, String> {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_JOB_FILE {
        return Err(format!("{size} bytes is too large for a job file"));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

/// One `key[=value]` line, where it came from.
#[derive(Debug, Clone)]
struct Opt {
    key: String,
    value: Option<String>,
    at: String,
}

#[derive(Debug)]
struct Section {
    name: String,
    opts: Vec<Opt>,
}

/// Reads `path` and the files it includes into sections, with `${VAR}`
/// expanded from the environment.
fn read_sections(path: &Path, depth: usize, out: &mut Vec<Section>) -> Result<(), UsageError> {
    let name = path.display().to_string();
    if depth > MAX_INCLUDE_DEPTH {
        return Err(UsageError(format!(
            "{name}: included more than {MAX_INCLUDE_DEPTH} deep (an include loop?)"
        )));
    }
    let text = read_limited(path).map_err(|e| UsageError(format!("job file {name}: {e}")))?;
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{name}:{}", i + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        let line = expand_env(strip_comment(line)).map_err(|m| UsageError(format!("{at}: {m}")))?;
        if let Some(file) = line.strip_prefix("include ") {
            let file = Path::new(file.trim());
            let file = if file.is_relative() {
                path.parent().unwrap_or(Path::new(".")).join(file)
            } else {
                file.to_path_buf()
            };
            read_sections(&file, depth + 1, out)?;
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let section = section
                .strip_suffix(']')
                .ok_or_else(|| UsageError(format!("{at}: a section line is [NAME]")))?;
            out.push(Section {
                name: section.trim().to_string(),
                opts: Vec::new(),
            });
            continue;
        }
        let section = out
            .last_mut()
            .ok_or_else(|| UsageError(format!("{at}: option before any [section]")))?;
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (line.as_str(), None),
        };
        section.opts.push(Opt {
            key: key.to_ascii_lowercase(),
            value,
            at,
        });
    }
    Ok(())
}

/// The line without a trailing `; comment` or `# comment` (one that
/// follows blank space, so that a `#` inside a file name stays).
fn strip_comment(line: &str) -> &str {
    let cut = line
        .char_indices()
        .zip(line.chars().skip(1))
        .find(|((_, c), next)| c.is_whitespace() && matches!(next, ';' | '#'))
        .map(|((i, _), _)| i);
    cut.map_or(line, |i| line[..i].trim_end())
}

/// `${VAR}` replaced by the variable's value, as fio does.
fn expand_env(line: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .ok_or_else(|| format!("'{}' has no closing brace", &rest[start..]))?;
        let var = &rest[start + 2..start + end];
        let value =
            std::env::var(var).map_err(|_| format!("environment variable {var} is not set"))?;
        out.push_str(&value);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// One fio job as fathom knobs.
#[derive(Debug, Default)]
struct Job {
    name: String,
    knobs: Vec<(String, String)>,
    files: Vec<String>,
    directory: Option<String>,
    size_percent: Option<(f64, String)>,
    runtime: bool,
    time_based: bool,
    random_map: bool,
    random: bool,
    starts_group: bool,
}

impl Job {
    fn set(&mut self, knob: &str, value: impl Into<String>) {
        let value = value.into();
        match self.knobs.iter_mut().find(|(k, _)| k == knob) {
            Some(slot) => slot.1 = value,
            None => self.knobs.push((knob.to_string(), value)),
        }
    }

    fn unset(&mut self, knob: &str) {
        self.knobs.retain(|(k, _)| k != knob);
    }

    /// The files this job runs on; fio's default is a file of its own in
    /// the current (or the given) directory, where fathom makes its own.
    fn targets(&self) -> Vec<String> {
        let dir = self.directory.as_deref();
        if self.files.is_empty() {
            return vec![dir.unwrap_or(".").to_string()];
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
enum Action {
    Done,
    /// Accepted; tunes fio only, or differs in a way the note says.
    Note(String),
}

/// Translates the fio job file at `path`. `cli_targets` tells whether the
/// command line replaces the file's targets (then the jobs name none).
pub fn translate(path: &Path, cli_targets: bool) -> Result<Translation, UsageError> {
    let mut sections = Vec::new();
    read_sections(path, 0, &mut sections)?;
    let mut global: Vec<Opt> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut note = |n: String| {
        if !notes.contains(&n) {
            notes.push(n);
        }
    };
    for section in sections {
        if section.name == "global" {
            global.extend(section.opts);
            continue;
        }
        let mut job = Job {
            name: section.name.clone(),
            ..Default::default()
        };
        // fio's defaults, where fathom's differ.
        job.set("rw", "read");
        job.set("iodepth", "1");
        job.set("engine", "sync");
        job.set("buffered", "true");
        job.random_map = true;
        for opt in global.iter().chain(&section.opts) {
            match apply(&mut job, opt) {
                Ok(Action::Done) => {}
                Ok(Action::Note(n)) => note(n),
                Err(m) => return Err(UsageError(format!("{}: {m}", opt.at))),
            }
        }
        if job.runtime && !job.time_based {
            note(format!(
                "job {}: runtime without time_based: fio stops after one pass over size or at runtime, whichever is first; fathom runs for the whole runtime",
                job.name
            ));
        }
        if job.random && job.random_map {
            note(format!(
                "job {}: fathom draws random offsets with replacement, as fio's norandommap; fio without it touches each block once per pass",
                job.name
            ));
        }
        if let Some((pct, at)) = job.size_percent.take() {
            let target = job.targets()[0].clone();
            let total =
                target_size(&target).map_err(|m| UsageError(format!("{at}: size={pct}%: {m}")))?;
            job.set("size", ((total as f64 * pct / 100.0) as u64).to_string());
        }
        jobs.push(job);
    }
    if jobs.is_empty() {
        return Err(UsageError(format!(
            "{}: no job sections (only [global])",
            path.display()
        )));
    }
    Ok(Translation {
        toml: render(path, &jobs, cli_targets),
        notes,
    })
}

/// The size of an existing file or block device.
fn target_size(path: &str) -> Result<u64, String> {
    use std::io::Seek;
    let mut f = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    f.seek(std::io::SeekFrom::End(0))
        .map_err(|e| format!("{path}: {e}"))
}

/// fio's `1`/`0`, `true`/`false`, or a bare key meaning on.
fn flag(opt: &Opt) -> Result<bool, String> {
    match opt.value.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("1") | Some("true") | Some("on") | Some("yes") => Ok(true),
        Some("0") | Some("false") | Some("off") | Some("no") => Ok(false),
        Some(v) => Err(format!("{}={v}: expected 0 or 1", opt.key)),
    }
}

fn value(opt: &Opt) -> Result<&str, String> {
    opt.value
        .as_deref()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("option '{}' needs a value", opt.key))
}

/// fio's "read,write" pairs: one value for both, or two equal ones.
fn same_for_reads_and_writes(opt: &Opt) -> Result<&str, String> {
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

/// fio times are seconds unless they say otherwise.
fn seconds(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_digit() || c == '.') {
        format!("{v}s")
    } else {
        v.to_string()
    }
}

fn apply(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    let key = opt.key.as_str();
    let unsupported = |why: &str| Err(format!("option '{key}' is not supported{why}"));
    match key {
        "name" => job.name = value(opt)?.to_string(),
        "description" => {}
        "rw" | "readwrite" => {
            let v = value(opt)?;
            let (mode, skip) = v.split_once(':').unwrap_or((v, "0"));
            if !matches!(skip.trim(), "0" | "") {
                return Err(format!(
                    "{key}={v}: skipping {skip} between I/Os is not supported"
                ));
            }
            let mode = match mode.trim() {
                "read" => "read",
                "write" => "write",
                "randread" => "randread",
                "randwrite" => "randwrite",
                "rw" | "readwrite" => "readwrite",
                "randrw" => "randrw",
                other if other.contains("trim") => {
                    return Err(format!("{key}={other}: trim is not supported"));
                }
                other => return Err(format!("{key}={other}: unknown mode")),
            };
            job.random = mode.starts_with("rand");
            job.set("rw", mode);
        }
        "rwmixread" => job.set("rwmix_read", value(opt)?),
        "rwmixwrite" => {
            let w: u8 = value(opt)?
                .parse()
                .ok()
                .filter(|w| *w <= 100)
                .ok_or_else(|| format!("rwmixwrite={}: 0 to 100", value(opt).unwrap_or("")))?;
            job.set("rwmix_read", (100 - w).to_string());
        }
        "bs" | "blocksize" => job.set("bs", same_for_reads_and_writes(opt)?),
        "bsrange" | "blocksize_range" => {
            let v = same_for_reads_and_writes(opt)?;
            match v.split_once('-') {
                Some((lo, hi)) if lo.trim().eq_ignore_ascii_case(hi.trim()) => {
                    job.set("bs", lo.trim())
                }
                _ => {
                    return Err(format!(
                        "{key}={v}: a range of block sizes is not supported (give equal ends)"
                    ));
                }
            }
        }
        "iodepth" => job.set("iodepth", value(opt)?),
        "numjobs" => job.set("numjobs", value(opt)?),
        "size" => {
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
        }
        "offset" => {
            let v = value(opt)?;
            if v.ends_with('%') {
                return unsupported(" as a percentage (give a size)");
            }
            job.set("offset", v);
        }
        "filename" => {
            // fio separates files with ':' and escapes a ':' in a name as '\:'.
            let v = value(opt)?.replace("\\:", "\u{0}");
            job.files = v.split(':').map(|f| f.replace('\u{0}', ":")).collect();
        }
        "directory" => job.directory = Some(value(opt)?.to_string()),
        "nrfiles" => {
            if value(opt)? != "1" {
                return unsupported(" beyond nrfiles=1 (name the files with filename=a:b)");
            }
        }
        "runtime" | "timeout" => {
            job.set("runtime", seconds(value(opt)?));
            job.runtime = true;
        }
        "time_based" => job.time_based = flag(opt)?,
        "ramp_time" => job.set("ramp", seconds(value(opt)?)),
        "direct" => {
            job.set("buffered", (!flag(opt)?).to_string());
        }
        "buffered" => job.set("buffered", flag(opt)?.to_string()),
        "hipri" => job.set("hipri", flag(opt)?.to_string()),
        "sqthread_poll" => job.set("sqpoll", flag(opt)?.to_string()),
        "ioengine" => {
            let v = value(opt)?;
            let (engine, same) = match v {
                "io_uring" => ("io_uring", true),
                "libaio" | "posixaio" => ("io_uring", false),
                "psync" => ("sync", true),
                "sync" | "pvsync" | "pvsync2" => ("sync", false),
                "null" => ("null", true),
                other => return Err(format!("ioengine={other} is not supported")),
            };
            job.set("engine", engine);
            if !same {
                return Ok(Action::Note(format!(
                    "ioengine={v} runs on fathom's {engine} engine{}",
                    if engine == "sync" {
                        " (pread/pwrite, as psync)"
                    } else {
                        " (asynchronous, as libaio)"
                    }
                )));
            }
        }
        "rate" => job.set("rate_bw", same_for_reads_and_writes(opt)?),
        "rate_iops" => job.set("rate_iops", same_for_reads_and_writes(opt)?),
        "fsync" => job.set("fsync", value(opt)?),
        "fdatasync" => job.set("fdatasync", value(opt)?),
        "end_fsync" => {
            if flag(opt)? {
                return unsupported(" (fsync=N flushes during the run, and times each flush)");
            }
        }
        "norandommap" => job.random_map = !flag(opt)?,
        "randrepeat" => {
            if !flag(opt)? {
                job.set("seed", rand::random::<u32>().to_string());
            }
        }
        "randseed" => job.set("seed", value(opt)?),
        "random_distribution" => {
            let v = value(opt)?;
            match v {
                "random" => job.set("random_distribution", "uniform"),
                z if z.starts_with("zipf:") => job.set("random_distribution", z),
                other => {
                    return Err(format!(
                        "random_distribution={other} is not supported (random or zipf:THETA)"
                    ));
                }
            }
        }
        "random_generator" => {
            return Ok(Action::Note(format!(
                "random_generator={} is accepted: fathom draws offsets with its own generator",
                value(opt)?
            )));
        }
        "verify" => {
            let v = value(opt)?;
            if matches!(v, "0" | "null") {
                job.set("verify", "false");
            } else {
                job.set("verify", "true");
                return Ok(Action::Note(format!(
                    "verify={v}: fathom checks every block it wrote with its own header and pattern after the job, not fio's {v}"
                )));
            }
        }
        "stonewall" | "wait_for_previous" => job.starts_group = flag(opt)?,
        "io_submit_mode" => match value(opt)? {
            "inline" => {}
            _ => {
                return unsupported(
                    " as offload: fathom's rate schedule (rate_iops) issues I/Os on time",
                );
            }
        },
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run" => {
            return unsupported(
                ": fathom's capacity search (\"how much load fits under p99 1 ms?\") is its alternative",
            );
        }
        "thread" | "group_reporting" | "new_group" | "invalidate" | "loops" | "kb_base"
        | "unit_base" | "disable_lat" | "disable_clat" | "disable_slat" | "clat_percentiles"
        | "lat_percentiles" | "percentile_list" => {
            if key == "loops" && value(opt)? != "1" {
                return unsupported(" beyond loops=1 (give a runtime)");
            }
            if key == "kb_base" && value(opt)? != "1024" {
                return unsupported(" other than 1024 (fathom's k is 1024)");
            }
            return Ok(Action::Note(format!(
                "{key} is accepted: it tunes fio's own reporting or threads, not what is measured"
            )));
        }
        _ => return unsupported(""),
    }
    Ok(Action::Done)
}

/// The jobs as a fathom job file: one workload per stonewall group; a
/// group of several jobs is one workload of concurrent streams.
fn render(path: &Path, jobs: &[Job], cli_targets: bool) -> String {
    let mut out = format!(
        "# Translated from the fio job file {} by fathom.\n",
        path.display()
    );
    let mut groups: Vec<Vec<&Job>> = Vec::new();
    for job in jobs {
        match groups.last_mut() {
            Some(g) if !job.starts_group => g.push(job),
            _ => groups.push(vec![job]),
        }
    }
    // Labels for the files, so that streams can name theirs.
    let mut labels: Vec<(String, String)> = Vec::new();
    for path in jobs.iter().flat_map(Job::targets) {
        if labels.iter().any(|(_, p)| *p == path) {
            continue;
        }
        let stem = Path::new(&path)
            .file_name()
            .map(|f| f.to_string_lossy().replace(['.', '=', ' '], "_"))
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| "dir".into());
        let mut label = stem.clone();
        let mut n = 2;
        while labels.iter().any(|(l, _)| *l == label) {
            label = format!("{stem}{n}");
            n += 1;
        }
        labels.push((label, path));
    }
    let label_of = |p: &str| labels.iter().find(|(_, q)| q == p).map(|(l, _)| l.clone());
    let quoted = |v: &str| format!("{v:?}");
    for group in &groups {
        let wname = group
            .iter()
            .map(|j| j.name.as_str())
            .collect::<Vec<_>>()
            .join("+");
        let _ = writeln!(out, "\n[workload.{}]", quoted(&wname));
        if !cli_targets {
            let mut targets: Vec<String> = Vec::new();
            for t in group.iter().flat_map(|j| j.targets()) {
                let entry = quoted(&format!("{}={t}", label_of(&t).expect("labelled")));
                if !targets.contains(&entry) {
                    targets.push(entry);
                }
            }
            let _ = writeln!(out, "targets = [{}]", targets.join(", "));
        }
        if let [job] = group.as_slice() {
            for (k, v) in &job.knobs {
                let _ = writeln!(out, "{k} = {}", quoted(v));
            }
            continue;
        }
        for job in group {
            let _ = writeln!(
                out,
                "\n[workload.{}.stream.{}]",
                quoted(&wname),
                quoted(&job.name)
            );
            if !cli_targets {
                let own: Vec<String> = job
                    .targets()
                    .iter()
                    .map(|t| quoted(&label_of(t).expect("labelled")))
                    .collect();
                let _ = writeln!(out, "targets = [{}]", own.join(", "));
            }
            for (k, v) in &job.knobs {
                let _ = writeln!(out, "{k} = {}", quoted(v));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn tmp() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "fathom-fiojob-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn polled_completion_and_submission_translate_to_the_ring_knobs() {
        let d = tmp();
        let p = write(
            &d,
            "poll.fio",
            "[global]\nioengine=io_uring\ndirect=1\nsize=64m\nfilename=/tmp/f\n\n\
             [polled]\nrw=randread\nhipri\nsqthread_poll=1\n",
        );
        let t = translate(&p, false).unwrap();
        let specs = crate::jobfile::parse(&t.toml, "x", "x", &Default::default()).unwrap();
        assert!(specs[0].hipri && specs[0].sqpoll, "{}", t.toml);
    }

    #[test]
    fn jobs_between_stonewalls_run_together_as_streams() {
        let d = tmp();
        let p = write(
            &d,
            "mix.fio",
            "[global]\nioengine=libaio\ndirect=1\nsize=64m\nfilename=/tmp/f\n\n\
             [reads]\nrw=randread\nbs=4k\niodepth=16\n\n\
             [log]\nrw=write\nbs=16k\nfdatasync=1\n\n\
             [after]\nstonewall\nrw=read\nbs=1m\n",
        );
        let t = translate(&p, false).unwrap();
        let workloads = t.toml.matches("\n[workload.").count();
        assert_eq!(workloads, 4, "{}", t.toml);
        assert!(
            t.toml.contains("[workload.\"reads+log\".stream.\"reads\"]"),
            "{}",
            t.toml
        );
        assert!(t.toml.contains("[workload.\"after\"]"), "{}", t.toml);
        assert!(t.toml.contains("engine = \"io_uring\""));
        assert!(t.toml.contains("buffered = \"false\""));
        assert!(
            t.notes.iter().any(|n| n.contains("libaio")),
            "{:?}",
            t.notes
        );
        // The translation is a job file fathom reads.
        let specs = crate::jobfile::parse(&t.toml, "x", "x", &Default::default()).unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].streams.len(), 2);
        assert_eq!(specs[0].streams[1].fdatasync, 1);
        assert_eq!(specs[1].bs, 1 << 20);
    }

    #[test]
    fn fio_defaults_are_written_out_and_times_are_seconds() {
        let d = tmp();
        let p = write(
            &d,
            "a.fio",
            "[job]\nfilename=/tmp/x\nruntime=3\ntime_based\n",
        );
        let t = translate(&p, false).unwrap();
        for line in [
            "rw = \"read\"",
            "iodepth = \"1\"",
            "engine = \"sync\"",
            "buffered = \"true\"",
            "runtime = \"3s\"",
        ] {
            assert!(t.toml.contains(line), "{line}: {}", t.toml);
        }
        assert!(t.notes.is_empty(), "{:?}", t.notes);
    }

    #[test]
    fn comments_after_a_value_are_dropped() {
        assert_eq!(strip_comment("numjobs=4\t; four threads"), "numjobs=4");
        assert_eq!(strip_comment("iodepth=8 # deep"), "iodepth=8");
        assert_eq!(strip_comment("filename=/tmp/a#b"), "filename=/tmp/a#b");
        assert_eq!(strip_comment("rw=read"), "rw=read");
    }

    #[test]
    fn includes_and_environment_are_expanded() {
        let d = tmp();
        write(&d, "common.fio", "[global]\nbs=${FATHOM_TEST_BS}\n");
        let p = write(&d, "main.fio", "include common.fio\n[j]\nfilename=/tmp/x\n");
        // SAFETY: tests in this module are the only users of this variable.
        unsafe { std::env::set_var("FATHOM_TEST_BS", "64k") };
        let t = translate(&p, false).unwrap();
        assert!(t.toml.contains("bs = \"64k\""), "{}", t.toml);
        let p = write(&d, "b.fio", "[j]\nbs=${FATHOM_UNSET_VARIABLE_X}\n");
        let e = translate(&p, false).unwrap_err();
        assert!(
            e.0.ends_with("b.fio:2: environment variable FATHOM_UNSET_VARIABLE_X is not set"),
            "{}",
            e.0
        );
    }

    #[test]
    fn unsupported_options_are_refused_with_file_and_line() {
        let d = tmp();
        for (body, needle) in [
            ("rw=randtrim", "trim is not supported"),
            ("bssplit=4k/50:8k/50", "option 'bssplit' is not supported"),
            ("latency_target=1ms", "capacity search"),
            ("io_submit_mode=offload", "rate schedule"),
            ("bsrange=4k-64k", "range of block sizes"),
            ("bs=4k,8k", "different values for reads and writes"),
            ("rw=write:4k", "skipping 4k"),
            ("ioengine=mmap", "ioengine=mmap is not supported"),
        ] {
            let p = write(&d, "bad.fio", &format!("[j]\nfilename=/tmp/x\n{body}\n"));
            let e = translate(&p, false).unwrap_err();
            assert!(e.0.contains("bad.fio:3: "), "{body}: {}", e.0);
            assert!(e.0.contains(needle), "{body}: {}", e.0);
        }
    }

    #[test]
    fn size_as_a_share_of_an_existing_file() {
        let d = tmp();
        let f = d.join("data");
        std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
        let p = write(
            &d,
            "p.fio",
            &format!("[j]\nfilename={}\nsize=25%\n", f.display()),
        );
        let t = translate(&p, false).unwrap();
        assert!(t.toml.contains("size = \"262144\""), "{}", t.toml);
    }

    #[test]
    fn ini_content_is_recognised_without_the_extension() {
        let d = tmp();
        let ini = write(&d, "job.conf", "; a job\n[job]\nrw=read\n");
        let toml = write(&d, "job.cfg", "[defaults]\nsize = \"1m\"\n");
        assert!(is_fio_job(&ini));
        assert!(!is_fio_job(&toml));
    }
}
