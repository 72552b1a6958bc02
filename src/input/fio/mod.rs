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

use crate::util::error::UsageError;
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
    /// The job plays an iolog (`read_iolog`): its workload is a replay.
    pub replay: Option<FioReplay>,
}

/// What a job with `read_iolog` plays, and how fast.
#[derive(Debug, Clone, PartialEq)]
pub struct FioReplay {
    pub trace: PathBuf,
    /// `replay_time_scale` as a speed (100% is 1x); None: as fast as
    /// possible (`replay_no_stall`, or a log without times).
    pub speed: Option<f64>,
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
        let line = expand_env(strip_comment(line))
            .and_then(|l| expand_expressions(&l))
            .map_err(|m| UsageError(format!("{at}: {m}")))?;
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

/// fio's keywords (`$ncpus`, `$mb_memory`, `$pagesize`) replaced by this
/// machine's values, and a value that is arithmetic (`(8*1024)`,
/// `5*1024*1024*$mb_memory/8`) replaced by its result, as fio evaluates
/// them.
fn expand_expressions(line: &str) -> Result<String, String> {
    let Some((key, value)) = line.split_once('=').filter(|_| !line.starts_with('[')) else {
        return Ok(line.to_string());
    };
    let mut value = value.trim().to_string();
    for (keyword, amount) in [
        ("$ncpus", machine::cpus()),
        ("$mb_memory", machine::memory_mb()),
        ("$pagesize", machine::page_size()),
    ] {
        value = value.replace(keyword, &amount.to_string());
    }
    if let Some(bad) = value.find('$').map(|i| &value[i..]) {
        let word: String = bad
            .chars()
            .take_while(|c| *c == '$' || c.is_alphanumeric() || *c == '_')
            .collect();
        return Err(format!(
            "{word}: fio's keywords are $ncpus, $mb_memory and $pagesize"
        ));
    }
    if arithmetic::is_expression(&value) {
        value = arithmetic::evaluate(&value).map_err(|m| format!("{}={value}: {m}", key.trim()))?;
    }
    Ok(format!("{}={value}", key.trim()))
}

/// What fio's keywords stand for on this machine.
mod machine {
    pub fn cpus() -> u64 {
        std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
    }

    pub fn memory_mb() -> u64 {
        // SAFETY: sysconf reads a constant of the running system.
        let (pages, size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        (pages.max(0) as u64 * size.max(0) as u64) >> 20
    }

    pub fn page_size() -> u64 {
        // SAFETY: as above.
        unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64
    }
}

/// fio's arithmetic in option values: + - * / % ^, parentheses, and
/// numbers with k/m/g/t/p suffixes (powers of 1024).
mod arithmetic {
    /// Whether `v` is arithmetic rather than a plain value, a range
    /// (`4k-64k`), a list or a name.
    pub fn is_expression(v: &str) -> bool {
        let allowed = |c: char| c.is_ascii_digit() || " .+-*/%^()kKmMgGtTpPiIbB".contains(c);
        // `25%` is a share, not a remainder.
        v.chars().all(allowed)
            && !v.ends_with('%')
            && (v.starts_with('(') || v.contains(['*', '/', '%', '^', '+']))
    }

    pub fn evaluate(v: &str) -> Result<String, String> {
        let tokens: Vec<char> = v.chars().filter(|c| !c.is_whitespace()).collect();
        let mut p = Parser { t: &tokens, i: 0 };
        let x = p.expr()?;
        if p.i != tokens.len() {
            return Err(format!(
                "cannot read the expression from '{}'",
                tokens[p.i..].iter().collect::<String>()
            ));
        }
        if !x.is_finite() {
            return Err("the expression has no finite value".into());
        }
        Ok(if x.fract() == 0.0 && x.abs() < 1e18 {
            format!("{}", x as i64)
        } else {
            format!("{x}")
        })
    }

    struct Parser<'a> {
        t: &'a [char],
        i: usize,
    }

    impl Parser<'_> {
        fn peek(&self) -> Option<char> {
            self.t.get(self.i).copied()
        }

        fn expr(&mut self) -> Result<f64, String> {
            let mut x = self.term()?;
            while let Some(op @ ('+' | '-')) = self.peek() {
                self.i += 1;
                let y = self.term()?;
                x = if op == '+' { x + y } else { x - y };
            }
            Ok(x)
        }

        fn term(&mut self) -> Result<f64, String> {
            let mut x = self.power()?;
            while let Some(op @ ('*' | '/' | '%')) = self.peek() {
                self.i += 1;
                let y = self.power()?;
                x = match op {
                    '*' => x * y,
                    '/' if y == 0.0 => return Err("division by zero".into()),
                    '/' => x / y,
                    _ if y == 0.0 => return Err("division by zero".into()),
                    _ => x % y,
                };
            }
            Ok(x)
        }

        fn power(&mut self) -> Result<f64, String> {
            let base = self.unary()?;
            if self.peek() == Some('^') {
                self.i += 1;
                return Ok(base.powf(self.power()?));
            }
            Ok(base)
        }

        fn unary(&mut self) -> Result<f64, String> {
            if self.peek() == Some('-') {
                self.i += 1;
                return Ok(-self.unary()?);
            }
            if self.peek() == Some('(') {
                self.i += 1;
                let x = self.expr()?;
                if self.peek() != Some(')') {
                    return Err("a '(' has no ')'".into());
                }
                self.i += 1;
                return Ok(x);
            }
            self.number()
        }

        fn number(&mut self) -> Result<f64, String> {
            let start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                self.i += 1;
            }
            let text: String = self.t[start..self.i].iter().collect();
            let n: f64 = text.parse().map_err(|_| match self.peek() {
                Some(c) => format!("expected a number at '{c}'"),
                None => "the expression ends early".to_string(),
            })?;
            let scale = match self.peek().map(|c| c.to_ascii_lowercase()) {
                Some('k') => 1u64 << 10,
                Some('m') => 1 << 20,
                Some('g') => 1 << 30,
                Some('t') => 1 << 40,
                Some('p') => 1 << 50,
                _ => return Ok(n),
            };
            self.i += 1;
            // 4KiB, 4kb: the suffix's tail says nothing more.
            while self
                .peek()
                .is_some_and(|c| matches!(c.to_ascii_lowercase(), 'i' | 'b'))
            {
                self.i += 1;
            }
            Ok(n * scale as f64)
        }
    }
}

/// One fio job (one clone of it, with `numjobs`) as fathom knobs.
#[derive(Debug, Default, Clone)]
struct Job {
    name: String,
    /// With `numjobs` above 1: which clone this is, and the job's name,
    /// which fio gives every clone in its reports.
    clone: Option<(u32, String)>,
    knobs: Vec<(String, String)>,
    files: Vec<String>,
    directory: Option<String>,
    size_percent: Option<(f64, String)>,
    runtime: bool,
    time_based: bool,
    /// `steadystate`'s criterion as fathom spells it (`iops:2%`), and
    /// `ss_dur`, which gives its window.
    steady: Option<String>,
    steady_window: Option<String>,
    /// `loops` and `number_ios`, which become an I/O amount once `size` and
    /// `bs` are known.
    loops: Option<u64>,
    number_ios: Option<u64>,
    random_map: bool,
    random: bool,
    /// `nrfiles`: files of this job (and of each clone) without `filename`.
    nrfiles: u32,
    /// `filesize`: the size of each of them; `size / nrfiles` without it.
    filesize: Option<String>,
    /// `offset_increment`: clone k starts `k` times this after `offset`.
    offset_increment: Option<u64>,
    /// `rate` or `rate_iops` as fathom rates of reads and of writes, and
    /// whether one value was given for both (fio rates each direction).
    rates: Option<(Option<String>, Option<String>, bool)>,
    /// `thinktime_blocks`, which only counts with a `thinktime`.
    think_every: Option<u32>,
    starts_group: bool,
    /// `read_iolog`, `replay_no_stall`, `replay_time_scale` (percent) and
    /// `replay_redirect`.
    read_iolog: Option<String>,
    replay_no_stall: bool,
    replay_time_scale: Option<u64>,
    replay_redirect: Option<String>,
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

    /// `number_ios` (I/Os of `bs`) or `loops` (passes over `size`) as
    /// fathom's `io_size`; fio stops at whichever limit comes first.
    fn io_amount(&mut self) -> Result<(), String> {
        let bytes = |knob: &str, what: &str| {
            let v = self
                .knob(knob)
                .ok_or_else(|| format!("{what} needs {knob}"))?;
            crate::util::units::parse_size(v).map_err(|e| format!("{knob}={v}: {e}"))
        };
        let mut limits = Vec::new();
        if let Some(n) = self.number_ios {
            limits.push(n * bytes("bs", "number_ios").unwrap_or(4096));
        }
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
    fn rates_as_knobs(&mut self) {
        let Some((read, write, one_value)) = self.rates.take() else {
            return;
        };
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
            return;
        }
        // A rate of a direction the job does not issue does nothing in fio.
        if let Some(r) = read.filter(|_| reads) {
            self.set("rate_read", r);
        }
        if let Some(w) = write.filter(|_| mixed || !reads) {
            self.set("rate_write", w);
        }
    }

    /// `nrfiles` files of `filesize` (or `size / nrfiles`) each: fathom's
    /// `size` is per target, and each file is a target.
    fn files_of_their_own(&mut self) -> Result<(), String> {
        if self.nrfiles <= 1 && self.filesize.is_none() {
            return Ok(());
        }
        if !self.files.is_empty() {
            return Err(
                "nrfiles or filesize with filename: fio sizes the files it names itself; give filename, or nrfiles and filesize"
                    .into(),
            );
        }
        let per_file = match (self.filesize.take(), self.knob("size")) {
            (Some(each), _) => each,
            (None, Some(total)) => {
                let total =
                    crate::util::units::parse_size(total).map_err(|e| format!("size: {e}"))?;
                (total / u64::from(self.nrfiles)).to_string()
            }
            (None, None) => return Err("nrfiles needs size or filesize".into()),
        };
        self.set("size", per_file);
        Ok(())
    }

    fn knob(&self, knob: &str) -> Option<&str> {
        self.knobs
            .iter()
            .find(|(k, _)| k == knob)
            .map(|(_, v)| v.as_str())
    }

    /// fio's clones of this job: `numjobs` independent copies, each doing
    /// the whole job (its `size`, its `rate`) on the job's files or on a file
    /// of its own. fathom runs them as streams of one numjob each.
    fn clones(mut self) -> Vec<Job> {
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
    fn targets(&self) -> Vec<String> {
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
    // Every problem of the file, reported together.
    let mut problems: Vec<String> = Vec::new();
    let mut problem = |p: String| {
        if !problems.contains(&p) {
            problems.push(p);
        }
    };
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
        job.set("invalidate", "true");
        job.random_map = true;
        // fio names a job after its section; a `name` in [global] does not
        // rename every job.
        let global_opts = global.iter().filter(|o| o.key != "name");
        // Which line set each knob, for problems found in its value later.
        let mut origin: Vec<(String, String)> = Vec::new();
        for opt in global_opts.chain(&section.opts) {
            let before = job.knobs.clone();
            match apply(&mut job, opt) {
                Ok(Action::Done) => {}
                Ok(Action::Note(n)) => note(n),
                Err(m) => problem(format!("{}: {m}", opt.at)),
            }
            let said = format!(
                "{}: {}={}",
                opt.at,
                opt.key,
                opt.value.as_deref().unwrap_or("")
            );
            for set in job.knobs.iter().filter(|k| !before.contains(k)) {
                origin.retain(|(k, _)| *k != set.0);
                origin.push((set.0.clone(), said.clone()));
            }
        }
        if job.knob("engine") == Some("sync")
            && let Some(depth) = job
                .knob("iodepth")
                .filter(|d| d.parse::<u32>().is_ok_and(|d| d > 1))
        {
            note(format!(
                "job {}: iodepth={depth} with a synchronous ioengine: one I/O at a time, as fio runs it",
                job.name
            ));
            job.set("iodepth", "1");
        }
        if job.nrfiles > 1 && job.runtime {
            note(format!(
                "job {}: nrfiles={}: fathom runs a worker per file, each at iodepth, where fio goes round the files with one",
                job.name, job.nrfiles
            ));
        }
        if job.time_based
            && job.knob("buffered") == Some("true")
            && job.knob("invalidate") == Some("true")
            && job
                .knob("rw")
                .is_some_and(|rw| rw.contains("read") || rw.contains("rw"))
        {
            note(format!(
                "job {}: buffered and time_based: fio drops the file's cached pages at each pass over it, fathom once before the run, so fathom's reads after the first pass can come from the cache (a warning says so)",
                job.name
            ));
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
        if let Err(m) = job.files_of_their_own() {
            problem(format!("{}: {m}", section_at(&section.opts, &global)));
        }
        let logs = ["write_bw_log", "write_lat_log", "write_iops_log"];
        if logs.iter().any(|l| job.knob(l).is_some()) && job.knob("log_avg_msec").is_none() {
            note(format!(
                "job {}: fio logs every I/O without log_avg_msec; fathom's logs have a line per second",
                job.name
            ));
        }
        job.rates_as_knobs();
        if let Some(every) = job.think_every.take()
            && job.knob("think_time").is_some()
        {
            job.set("think_every", every.to_string());
        }
        if let Some(criterion) = job.steady.take() {
            let window = job.steady_window.take().map(|w| format!(":{w}"));
            job.set("steady_state", criterion + window.as_deref().unwrap_or(""));
        }
        if let Some((pct, at)) = job.size_percent.take() {
            let target = job.targets()[0].clone();
            match target_size(&target) {
                Ok(total) => job.set("size", ((total as f64 * pct / 100.0) as u64).to_string()),
                Err(m) => problem(format!("{at}: size={pct}%: {m}")),
            }
        }
        if let Err(m) = job.io_amount() {
            problem(format!("{}: {m}", section_at(&section.opts, &global)));
        }
        let clones = job.clones();
        let section_line = section_at(&section.opts, &global);
        for p in check_values(&clones[0], &origin, &section_line) {
            problem(p);
        }
        jobs.extend(clones);
    }
    if !problems.is_empty() {
        return Err(UsageError(problems.join("\n")));
    }
    if jobs.is_empty() {
        return Err(UsageError(format!(
            "{}: no job sections (only [global])",
            path.display()
        )));
    }
    let replay = replay_of(&mut jobs, &mut notes)?;
    let mut toml = render(path, &jobs, cli_targets);
    if let (Some(r), [job]) = (&replay, jobs.as_slice()) {
        let pace = r
            .speed
            .map_or("--as-fast-as-possible".into(), |s| format!("--speed {s}x"));
        toml.insert_str(
            toml.find('\n').map_or(0, |i| i + 1),
            &format!(
                "# The job {} plays {} as `fathom replay {} TARGET... {pace} --iodepth {}` does.\n",
                job.name,
                r.trace.display(),
                r.trace.display(),
                job.knob("iodepth").unwrap_or("1"),
            ),
        );
    }
    Ok(Translation {
        toml,
        notes,
        replay,
    })
}

/// A job that plays an iolog (`read_iolog`): the only job of its file (a
/// replay is a workload of its own), its targets the files the log names,
/// or the one `replay_redirect` gives.
fn replay_of(jobs: &mut [Job], notes: &mut Vec<String>) -> Result<Option<FioReplay>, UsageError> {
    let Some(playing) = jobs.iter().find(|j| j.read_iolog.is_some()) else {
        return Ok(None);
    };
    let [job] = jobs else {
        return Err(UsageError(format!(
            "job {}: read_iolog: fathom plays an iolog as a run of its own: a job file of that one job (this one has {} jobs, numjobs clones counted)",
            playing.name,
            jobs.len()
        )));
    };
    let log = PathBuf::from(job.read_iolog.take().expect("found above"));
    let trace = crate::trace::Trace::open(&log, 0, None)
        .map_err(|e| UsageError(format!("read_iolog: {e}")))?;
    let speed = match (job.replay_no_stall, trace.timeless) {
        (true, _) | (_, true) => None,
        (false, false) => Some(job.replay_time_scale.unwrap_or(100) as f64 / 100.0),
    };
    match job.replay_redirect.take() {
        Some(to) if trace.devices.len() > 1 => {
            return Err(UsageError(format!(
                "job {}: replay_redirect={to}: {} names {} files ({}); fathom plays each on a target of its own: give them as filename=a:b",
                job.name,
                log.display(),
                trace.devices.len(),
                trace.devices.join(", ")
            )));
        }
        Some(to) => job.files = vec![to],
        None if job.files.is_empty() => job.files = trace.devices.clone(),
        None => {}
    }
    if speed.is_some() {
        notes.push(format!(
            "job {}: read_iolog: each I/O is due at its recorded time and its latency counts from then; fio waits behind a slow device, stretching the log (replay_no_stall=1 plays it closed loop in both)",
            job.name
        ));
    }
    Ok(Some(FioReplay { trace: log, speed }))
}

/// The problems fathom would find in a job's knobs once translated, each
/// at the fio line that set the knob (`origin`), or at the job's section
/// for a problem of the whole job.
fn check_values(job: &Job, origin: &[(String, String)], section_line: &str) -> Vec<String> {
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
fn section_at(own: &[Opt], global: &[Opt]) -> String {
    own.first()
        .or(global.first())
        .map_or_else(|| "the job".to_string(), |o| o.at.clone())
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

/// A count of 1 or more.
fn count(opt: &Opt) -> Result<u64, String> {
    let v = value(opt)?;
    v.parse()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| format!("{}={v}: a whole number from 1", opt.key))
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

/// fio's "read,write" pairs: (reads, writes), an empty or missing part
/// being fio's default for block sizes. A third part (trims) must match
/// the writes' part: fathom trims with the writes' sizes.
fn reads_and_writes(opt: &Opt) -> Result<(&str, &str), String> {
    let v = value(opt)?;
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    fn or_default<'a>(p: Option<&&'a str>) -> &'a str {
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
fn microseconds(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_digit()) {
        format!("{v}us")
    } else {
        v.to_string()
    }
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
        "bs" | "blocksize" => match reads_and_writes(opt)? {
            (read, write) if read == write => {
                job.unset("bssplit");
                job.set("bs", read);
            }
            (read, write) => {
                job.unset("bs");
                job.set("bssplit", format!("{read}/100,{write}/100"));
            }
        },
        "bssplit" => {
            let v = value(opt)?;
            let mut parts: Vec<&str> = v.split(',').collect();
            if parts.len() == 3 {
                // The third part is for trims, which fathom does not issue.
                parts.pop();
            }
            let split: crate::spec::BlockSizeSplit = parts
                .join(",")
                .parse()
                .map_err(|e| format!("{key}={v}: {e}"))?;
            job.unset("bs");
            job.set("bssplit", split.to_string());
        }
        "blockalign" | "ba" => {
            let v = same_for_reads_and_writes(opt)?;
            let align = crate::util::units::parse_size(v).map_err(|e| format!("{key}={v}: {e}"))?;
            let bs = crate::util::units::parse_size(job.knob("bs").unwrap_or("4k"));
            if bs != Ok(align) {
                return unsupported(": fathom aligns offsets to the (smallest) block size");
            }
        }
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
            job.nrfiles = u32::try_from(count(opt)?)
                .ok()
                .filter(|n| *n <= 4096)
                .ok_or_else(|| format!("{key}: at most 4096 files"))?;
        }
        "filesize" => {
            let v = value(opt)?;
            let size = match v.split_once('-') {
                Some((lo, hi)) if lo.trim().eq_ignore_ascii_case(hi.trim()) => lo.trim(),
                Some(_) => return unsupported(" as a range (files of one size only)"),
                None => v,
            };
            crate::util::units::parse_size(size).map_err(|e| format!("{key}={v}: {e}"))?;
            job.filesize = Some(size.to_string());
        }
        "offset_increment" => {
            let v = value(opt)?;
            if v.ends_with('%') {
                return unsupported(" as a percentage (give a size)");
            }
            job.offset_increment =
                Some(crate::util::units::parse_size(v).map_err(|e| format!("{key}={v}: {e}"))?);
        }
        "rate_process" => match value(opt)? {
            "linear" => {}
            other => {
                return unsupported(&format!(
                    "={other}: fathom issues rated I/O on an even schedule (linear)"
                ));
            }
        },
        "unified_rw_reporting" => match value(opt)? {
            "none" | "0" => {}
            other => {
                return unsupported(&format!(
                    "={other}: fathom reports each direction and their total"
                ));
            }
        },
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
        "invalidate" => job.set("invalidate", flag(opt)?.to_string()),
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
        "rate" | "rate_iops" => {
            let v = value(opt)?;
            let parts: Vec<&str> = v.split(',').map(str::trim).collect();
            if parts.len() > 3 {
                return Err(format!("{key}={v}: at most reads,writes,trims"));
            }
            // fio: one value rates each direction; an empty part leaves
            // that direction unrated.
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
        }
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
            if v.contains(',') {
                return unsupported(
                    " with different distributions for reads and writes (give one for both)",
                );
            }
            let d: crate::spec::Distribution = v.parse().map_err(|e| format!("{key}={v}: {e}"))?;
            job.set("random_distribution", d.to_string());
        }
        "percentage_random" => job.set("random_percent", same_for_reads_and_writes(opt)?),
        "rw_sequencer" => match value(opt)? {
            "sequential" => {}
            other => return unsupported(&format!("={other} (sequential only)")),
        },
        "thinktime" => {
            let v = value(opt)?;
            job.set("think_time", microseconds(v));
        }
        "thinktime_blocks" => {
            job.think_every =
                Some(u32::try_from(count(opt)?).map_err(|_| format!("{key}: too large"))?)
        }
        "thinktime_spin" => {
            return Ok(Action::Note(format!(
                "thinktime_spin={} is accepted: fathom idles the whole think time asleep, which changes the CPU figures, not the I/O",
                value(opt)?
            )));
        }
        "thinktime_blocks_type" => match value(opt)? {
            "complete" | "issue" => {
                return Ok(Action::Note(format!(
                    "thinktime_blocks_type={}: fathom pauses after issuing thinktime_blocks I/Os and seeing them complete",
                    value(opt)?
                )));
            }
            other => return Err(format!("{key}={other}: complete or issue")),
        },
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
            "offload" => {
                return Ok(Action::Note(
                    "io_submit_mode=offload is accepted: fathom's rate schedule already issues each I/O when it is due, and times it from then".into(),
                ));
            }
            other => return Err(format!("io_submit_mode={other}: inline or offload")),
        },
        "group_reporting" => job.set("group_reporting", flag(opt)?.to_string()),
        "continue_on_error" => {
            let v = opt.value.as_deref().unwrap_or("1");
            let on = !matches!(v, "0" | "none" | "false");
            job.set("continue_on_error", on.to_string());
            if on && !matches!(v, "1" | "all" | "io" | "true") {
                return Ok(Action::Note(format!(
                    "continue_on_error={v}: fathom counts and goes on past every kind of I/O error, not only {v} errors"
                )));
            }
        }
        "steadystate" | "ss" => {
            let v = value(opt)?;
            let (metric, band) = v
                .split_once(':')
                .ok_or_else(|| format!("{key}={v}: expected iops:N% or bw:N%"))?;
            let band = band.strip_suffix('%').ok_or_else(|| {
                format!(
                    "{key}={v}: fathom's criterion is a band around the mean in percent (iops:N%)"
                )
            })?;
            match metric {
                "iops" => {}
                "bw" => {
                    job.steady = Some(format!("iops:{band}%"));
                    return Ok(Action::Note(format!(
                        "{key}={v}: judged on IOPS, which at one block size moves with bandwidth"
                    )));
                }
                _ => {
                    return Err(format!(
                        "{key}={v}: only iops:N% and bw:N% (a band around the mean) are supported, not slopes"
                    ));
                }
            }
            job.steady = Some(format!("iops:{band}%"));
        }
        "ss_dur" | "steadystate_duration" => job.steady_window = Some(seconds(value(opt)?)),
        "ss_ramp" | "steadystate_ramp_time" => {
            return Ok(Action::Note(format!(
                "ss_ramp={} is accepted: fathom judges steadiness over its last window only, so an early ramp never counts",
                value(opt)?
            )));
        }
        "percentile_list" => job.set("percentile_list", value(opt)?),
        "write_bw_log" | "write_lat_log" | "write_iops_log" => {
            // Without a name fio names the logs after the job.
            let name = opt
                .value
                .as_deref()
                .filter(|v| !v.is_empty())
                .unwrap_or(&job.name);
            job.set(key, name.to_string());
        }
        "log_avg_msec" => {
            let ms = count(opt)?;
            let whole = ms.div_ceil(1000).max(1) * 1000;
            job.set("log_avg_msec", whole.to_string());
            if whole != ms {
                return Ok(Action::Note(format!(
                    "log_avg_msec={ms}: fathom's figures are per second; its logs average {whole} ms"
                )));
            }
        }
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run" => {
            return unsupported(
                ": fathom's capacity search (\"how much load fits under p99 1 ms?\") is its alternative",
            );
        }
        "io_size" | "io_limit" => job.set("io_size", value(opt)?),
        "buffer_compress_percentage" => job.set("compress", value(opt)?),
        "buffer_compress_chunk" => job.set("compress_chunk", value(opt)?),
        "dedupe_percentage" => job.set("dedupe", value(opt)?),
        "dedupe_working_set_percentage" => job.set("dedupe_working_set", value(opt)?),
        "zero_buffers" => {
            if opt.value.as_deref().is_none_or(|v| v != "0") {
                job.set("pattern", "zeros");
            }
        }
        "buffer_pattern" => {
            let v = value(opt)?;
            // fio's forms: 0xHEX, "string" or 'string'; a bare string is
            // fio's too (a number is a byte value there).
            let pattern =
                if v.starts_with(['"', '\'']) || v.starts_with("0x") || v.starts_with("0X") {
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
                .map_err(|e| format!("{key}={v}: {e}"))?;
            job.set("pattern", pattern);
        }
        "number_ios" => job.number_ios = Some(count(opt)?),
        "read_iolog" => job.read_iolog = Some(value(opt)?.to_string()),
        "replay_no_stall" => job.replay_no_stall = flag(opt)?,
        "replay_time_scale" => job.replay_time_scale = Some(count(opt)?),
        "replay_redirect" => job.replay_redirect = Some(value(opt)?.to_string()),
        "loops" => job.loops = Some(count(opt)?),
        "kb_base" if opt.value.as_deref() != Some("1024") => {
            return unsupported(" other than 1024 (fathom's k is 1024)");
        }
        _ => {
            // Options that change no figure are accepted, and those fathom
            // cannot carry out refused, as the table says.
            if let Some(row) = option_rows().find(|row| row.name == key) {
                return match row.handling {
                    "accepted" => Ok(Action::Note(format!("{key} is accepted: {}", row.why))),
                    _ => unsupported(&format!(": {}", row.why)),
                };
            }
            let hint = match did_you_mean(key) {
                Some(known) => format!(" (did you mean '{known}'?)"),
                None => " (not an fio option)".to_string(),
            };
            return unsupported(&hint);
        }
    }
    Ok(Action::Done)
}

/// Every job option of fio's HOWTO and what this translator does with it
/// (translated, accepted, or refused and why): the table of
/// docs/fio-options.md, which a unit test checks against `apply`.
const OPTION_TABLE: &str = include_str!("../../../docs/fio-options.md");

/// One row of [`OPTION_TABLE`].
struct OptionRow<'a> {
    name: &'a str,
    /// `translated`, `accepted` or `refused`.
    handling: &'a str,
    /// The value the unit test gives the option.
    #[cfg_attr(not(test), allow(dead_code))]
    sample: &'a str,
    /// What fathom does with it, or why it refuses it.
    why: &'a str,
}

fn option_rows() -> impl Iterator<Item = OptionRow<'static>> {
    OPTION_TABLE.lines().filter_map(|line| {
        let cells: Vec<&str> = line
            .strip_prefix("| `")?
            .split(" | ")
            .map(|c| c.trim().trim_matches('`'))
            .collect();
        match cells.as_slice() {
            [name, handling, sample, why] => Some(OptionRow {
                name,
                handling,
                sample,
                why: why.trim_end_matches(" |").trim(),
            }),
            _ => None,
        }
    })
}

/// The fio option closest to `key`, if one is close enough to be a typo.
fn did_you_mean(key: &str) -> Option<&'static str> {
    option_rows()
        .map(|row| (strsim::jaro_winkler(key, row.name), row.name))
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
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
        let mut names: Vec<&str> = Vec::new();
        for job in group {
            let name = job.clone.as_ref().map_or(job.name.as_str(), |(_, n)| n);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let wname = names.join("+");
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
            if let Some((_, of)) = &job.clone {
                let _ = writeln!(out, "clone_of = {}", quoted(of));
            }
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
        let specs = crate::input::jobfile::parse(&t.toml, "x", "x", &Default::default()).unwrap();
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
        let specs = crate::input::jobfile::parse(&t.toml, "x", "x", &Default::default()).unwrap();
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
            "invalidate = \"true\"",
            "runtime = \"3s\"",
        ] {
            assert!(t.toml.contains(line), "{line}: {}", t.toml);
        }
        // fio drops the cache at each pass of a buffered time_based job.
        assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
        assert!(t.notes[0].contains("each pass"), "{:?}", t.notes);
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
            ("bssplit=4k/50:8k/40", "not 100%"),
            (
                "random_distribution=zipf:1.2,random",
                "for reads and writes",
            ),
            ("latency_target=1ms", "capacity search"),
            ("io_submit_mode=poll", "inline or offload"),
            ("bsrange=4k-64k", "range of block sizes"),
            ("rate_iops=10,20,30,40", "at most reads,writes,trims"),
            ("rw_sequencer=identical", "sequential only"),
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

    fn specs_of(text: &str) -> (Translation, Vec<crate::spec::WorkloadSpec>) {
        let d = tmp();
        let p = write(&d, "job.fio", text);
        let t = translate(&p, false).unwrap();
        let specs = crate::input::jobfile::parse(&t.toml, "x", "x", &Default::default())
            .unwrap_or_else(|e| panic!("{}\n{}", e.0, t.toml));
        (t, specs)
    }

    #[test]
    fn clones_are_streams_each_doing_the_whole_job_on_fios_own_file_names() {
        let (t, specs) = specs_of(
            "[global]\nname=everyone\nsize=1m\ndirectory=/data\nrate_iops=100\n\
             [a]\nrw=randread\nnumjobs=3\n[b]\nrw=write\n",
        );
        let w = &specs[0];
        let names: Vec<&str> = w.streams.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a.0", "a.1", "a.2", "b"], "{}", t.toml);
        for (s, file) in w.streams.iter().zip(["a.0.0", "a.1.0", "a.2.0", "b.0.0"]) {
            // Each clone its own size, rate and file, as fio's clones.
            assert_eq!(s.numjobs, 1, "{}", t.toml);
            assert_eq!(s.size, Some(1 << 20));
            assert_eq!(s.rate_iops, Some(100.0));
            assert_eq!(s.targets, [format!("/data/{file}")]);
        }
        assert_eq!(w.streams[1].clone_of.as_deref(), Some("a"));
        assert_eq!(w.streams[3].clone_of, None);
        assert!(!t.toml.contains("everyone"), "a global name names no job");
    }

    #[test]
    fn a_stonewalled_job_keeps_its_clones_together() {
        let (_, specs) =
            specs_of("[global]\nsize=1m\nfilename=/tmp/f\n[a]\n[b]\nstonewall\nnumjobs=2\n");
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[1].streams.len(), 2);
    }

    #[test]
    fn a_synchronous_engine_runs_at_depth_one_as_fio_does() {
        let (t, specs) = specs_of("[j]\nfilename=/tmp/f\nsize=1m\nioengine=psync\niodepth=8\n");
        assert_eq!(specs[0].iodepth, 1);
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("iodepth=8 with a synchronous ioengine")),
            "{:?}",
            t.notes
        );
    }

    #[test]
    fn every_problem_of_a_file_is_reported_at_once() {
        let d = tmp();
        let p = write(
            &d,
            "bad.fio",
            "[global]\nthinktime_iotime=1s\n[a]\nrw=trimread\niodepht=4\n[b]\nlatency_target=1ms\n",
        );
        let e = translate(&p, false).unwrap_err().0;
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 4, "{e}");
        assert!(
            lines[0].contains("bad.fio:2: option 'thinktime_iotime' is not supported"),
            "{e}"
        );
        assert!(
            lines[1].contains("bad.fio:4: rw=trimread: unknown mode"),
            "{e}"
        );
        assert!(
            lines[2]
                .contains("bad.fio:5: option 'iodepht' is not supported (did you mean 'iodepth'?)"),
            "{e}"
        );
        assert!(lines[3].contains("bad.fio:7:"), "{e}");
    }

    #[test]
    fn reporting_and_logging_options_are_accepted_and_steady_state_translated() {
        let (t, specs) = specs_of(
            "[j]\nfilename=/tmp/f\nsize=1m\nruntime=60\ntime_based\nwrite_bw_log=j\nlog_avg_msec=500\n\
             gtod_reduce=1\nthreads\ngroup_reporting\ncontinue_on_error=all\n\
             steadystate=iops:2%\nss_dur=30\nss_ramp=5\nio_submit_mode=offload\n",
        );
        let s = &specs[0];
        assert!(s.group_reporting && s.continue_on_error, "{}", t.toml);
        let steady = s.steady_state.expect("steady state");
        assert_eq!((steady.band_pct, steady.window_s), (2.0, 30));
        assert_eq!(s.fio_logs.bw.as_deref(), Some("j"));
        assert_eq!(s.fio_logs.avg_s, 1);
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("log_avg_msec=500") && n.contains("1000 ms")),
            "{:?}",
            t.notes
        );
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("gtod_reduce is accepted"))
        );
    }

    #[test]
    fn values_are_checked_at_the_line_that_gave_them() {
        let d = tmp();
        write(&d, "inc.fio", "[global]\nnumjobs=2-2\n");
        let p = write(
            &d,
            "top.fio",
            "include inc.fio\n[j]\nfilename=/tmp/x\niodepth=$ncpus*0\nioengine=libaio\n",
        );
        let e = translate(&p, false).unwrap_err().0;
        assert!(
            e.contains("inc.fio:2: numjobs=2-2: '2-2' is not a whole number"),
            "{e}"
        );
        let p = write(
            &d,
            "top.fio",
            "[j]\nfilename=/tmp/x\niodepth=$ncpus*0\nioengine=libaio\n",
        );
        let e = translate(&p, false).unwrap_err().0;
        assert!(
            e.contains("top.fio:3: iodepth=0: job j: --iodepth 0 is outside"),
            "{e}"
        );
    }

    #[test]
    fn every_option_does_what_the_table_of_fio_options_says() {
        let mut rows = 0;
        let mut wrong = Vec::new();
        for row in option_rows() {
            rows += 1;
            let mut job = Job::default();
            let opt = Opt {
                key: row.name.to_string(),
                value: Some(row.sample.to_string()),
                at: "x:1".into(),
            };
            let got = match apply(&mut job, &opt) {
                Ok(Action::Done) => "translated",
                Ok(Action::Note(_)) => "accepted",
                Err(e) if e.contains("did you mean") || e.contains("not an fio option") => {
                    "unknown to the translator"
                }
                Err(_) => "refused",
            };
            if got != row.handling {
                wrong.push(format!(
                    "{}={}: {got}, not {}",
                    row.name, row.sample, row.handling
                ));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        assert!(rows > 300, "{rows} rows read from docs/fio-options.md");
        assert_eq!(did_you_mean("iodepht"), Some("iodepth"));
        assert_eq!(did_you_mean("zzz"), None);
        let e = apply(
            &mut Job::default(),
            &Opt {
                key: "cgroup".into(),
                value: Some("fio".into()),
                at: "x:1".into(),
            },
        )
        .err()
        .unwrap();
        assert!(
            e.contains("run fathom itself"),
            "the table's reason is given: {e}"
        );
    }

    /// Every job option fio's HOWTO documents is in the table (where fio's
    /// documentation is installed).
    #[test]
    fn the_table_covers_fios_howto() {
        let howto = std::process::Command::new("zcat")
            .arg("/usr/share/doc/fio/HOWTO.rst.gz")
            .output();
        let Some(text) = howto.ok().filter(|o| o.status.success()) else {
            eprintln!("SKIP: fio's HOWTO is not installed (apt-get install fio)");
            return;
        };
        let text = String::from_utf8_lossy(&text.stdout);
        let names: Vec<&str> = option_rows().map(|r| r.name).collect();
        let mut missing = Vec::new();
        for line in text.lines() {
            let Some(decl) = line.strip_prefix(".. option:: ") else {
                continue;
            };
            if decl.starts_with("--") {
                continue; // fio's command line, not a job option
            }
            let decl = decl.split(" : ").next().unwrap_or(decl);
            for alias in decl.split(", ") {
                let name = alias.split(['=', '[', ' ']).next().unwrap_or(alias).trim();
                if !names.contains(&name) {
                    missing.push(name.to_string());
                }
            }
        }
        assert!(
            missing.is_empty(),
            "not in docs/fio-options.md: {missing:?}"
        );
    }

    #[test]
    fn keywords_and_arithmetic_are_evaluated_as_fio_does() {
        let mb = machine::memory_mb();
        assert_eq!(
            expand_expressions("size=5*1024*1024*$mb_memory/8").unwrap(),
            format!("size={}", 5 * 1024 * 1024 * mb / 8)
        );
        assert_eq!(expand_expressions("bs=(4k*2)").unwrap(), "bs=8192");
        assert_eq!(
            expand_expressions("numjobs=$ncpus").unwrap(),
            format!("numjobs={}", machine::cpus())
        );
        assert_eq!(
            expand_expressions("runtime=(2^3+1)%5").unwrap(),
            "runtime=4"
        );
        // Not arithmetic: ranges, lists, names stay as they are.
        for plain in [
            "bsrange=4k-64k",
            "bssplit=4k/50:64k/50",
            "filename=/dev/sda",
            "rw=randrw:8k",
        ] {
            assert_eq!(expand_expressions(plain).unwrap(), plain);
        }
        assert!(
            expand_expressions("size=(4k*")
                .unwrap_err()
                .contains("size=(4k*")
        );
        assert!(
            expand_expressions("size=$nothing")
                .unwrap_err()
                .contains("$nothing")
        );
        assert!(
            expand_expressions("size=(1/0)")
                .unwrap_err()
                .contains("division by zero")
        );
    }

    #[test]
    fn loops_and_counts_of_ios_become_an_io_amount() {
        let (_, specs) = specs_of(
            "[global]\nfilename=/tmp/f\nsize=1m\nbs=4k\n[a]\nloops=3\n[b]\nstonewall\nnumber_ios=5\nio_size=1m\n",
        );
        assert_eq!(specs[0].io_size, Some(3 << 20));
        assert_eq!(specs[1].io_size, Some(5 * 4096), "the smaller limit");
        let d = tmp();
        let p = write(
            &d,
            "l.fio",
            "[a]\nfilename=/tmp/f\nsize=1m\nruntime=5\nloops=2\n",
        );
        assert!(
            translate(&p, false)
                .unwrap_err()
                .0
                .contains("l.fio:2: loops above 1 with runtime")
        );
    }
}
