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

pub mod cmdline;
pub mod help;
mod http;
mod ini;
mod job;
mod options;
pub mod table;
mod toml;

use crate::util::error::UsageError;
use ini::{Opt, Section, read_sections};
use job::{Action, Job};
use options::{check_values, section_at, target_size};
use std::path::{Path, PathBuf};
use table::apply;
use toml::render;

/// A fio job file as a fathom job file, and how the two differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    pub toml: String,
    /// One line per difference between what fio would do and what fathom
    /// does, and per option accepted that changes nothing measured.
    pub notes: Vec<String>,
    /// The job plays an iolog (`read_iolog`): its workload is a replay.
    pub replay: Option<FioReplay>,
    /// The jobs use a file-operation engine (`filecreate`, `filestat`,
    /// …): they are a tree run, not a workload.
    pub tree: Option<FioTree>,
    /// The keys an http job names (`http_s3_keyid`, `http_s3_key`): kept
    /// out of `toml`, which `--explain` prints.
    pub credentials: Option<crate::input::aws::AwsCredentials>,
}

/// Jobs of fio's file-operation engines as a tree run (its `fio` says
/// which jobs, and which phase fio times).
pub type FioTree = crate::spec::tree::TreeSpec;

/// What a job with `read_iolog` plays, and how fast.
#[derive(Debug, Clone, PartialEq)]
pub struct FioReplay {
    /// The iolog, read through once when the job file was translated.
    pub trace: std::sync::Arc<crate::trace::Trace>,
    /// `replay_time_scale` as a speed (100% is 1x); None: as fast as
    /// possible (`replay_no_stall`, or a log without times).
    pub speed: Option<f64>,
}

/// The most files a job of an I/O engine may have: fathom runs a worker
/// per file.
const MAX_NRFILES: u32 = 4096;

/// Whether `path` is a fio job file: by extension, or by INI content (a
/// `[section]` line followed by `key=value` lines, which TOML would quote).
pub fn is_fio_job(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "fio") {
        return true;
    }
    if path.extension().is_some_and(|e| e == "toml") || !path.is_file() {
        return false;
    }
    let Some(head) = crate::gate::read::head(path, 1 << 16) else {
        return false;
    };
    let text = String::from_utf8_lossy(&head);
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';']));
    lines
        .next()
        .is_some_and(|l| l.starts_with('[') && l.ends_with(']'))
        && lines.any(|l| l.contains('=') && !l.contains('"'))
}

/// Translates the fio job file at `path`. `cli_targets` tells whether the
/// command line replaces the file's targets (then the jobs name none).
pub fn translate(path: &Path, cli_targets: bool) -> Result<Translation, UsageError> {
    let mut sections = Vec::new();
    read_sections(path, 0, &mut sections)?;
    ini::check_readable(&sections)?;
    translate_sections(
        &format!("the fio job file {}", path.display()),
        &path.display().to_string(),
        sections,
        cli_targets,
    )
}

/// Translates the jobs of fio's command line (`fathom fio`), its job files'
/// with them.
pub fn translate_command(command: &mut cmdline::FioCommand) -> Result<Translation, UsageError> {
    let sections = std::mem::take(&mut command.sections);
    let mut t = translate_sections("fio's command line", "the command line", sections, false)?;
    t.notes.append(&mut command.notes);
    Ok(t)
}

/// The spec of a job fio ran, from the options fio's JSON lists for it
/// (its `global options`, then its `job options`), read through the same
/// option table as a job file. An option fathom would refuse is passed
/// over: the job ran in fio, and its figures are fio's.
pub fn spec_of_options<'a>(
    name: &str,
    options: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> crate::spec::WorkloadSpec {
    use crate::spec::{WorkloadSpec, knobs::SpecBuilder};
    let mut job = Job::with_fio_defaults(name);
    for (key, value) in options {
        let opt = Opt {
            key: key.to_string(),
            value: Some(value.to_string()),
            at: String::new(),
        };
        let _ = apply(&mut job, &opt);
    }
    let _ = job.rates_as_knobs();
    let mut builder = SpecBuilder::new(WorkloadSpec::defaults(job.targets()));
    for (knob, value) in &job.knobs {
        let _ = builder.set(knob, value);
    }
    let mut spec = builder.finish();
    spec.name = name.to_string();
    spec
}

/// Translates `sections`, read from `source` (named so in the TOML's first
/// line; `short` in messages).
/// `exitall` with `exit_what=all`: once that job ends, fio ends every job
/// and starts no other, so the groups after its own never run: they are
/// left out, and its own group ends with it as with `exitall`.
fn end_at_exit_all(jobs: &mut Vec<Job>) -> Option<String> {
    let ender = jobs
        .iter()
        .position(|j| j.exit_what_all && j.knob("exitall") == Some("true"))?;
    let next_group = (ender + 1..jobs.len()).find(|&k| jobs[k].starts_group)?;
    let left_out: Vec<String> = jobs[next_group..]
        .iter()
        .map(|j| j.clone.as_ref().map_or(j.name.clone(), |(_, n)| n.clone()))
        .fold(Vec::new(), |mut names, n| {
            if !names.contains(&n) {
                names.push(n);
            }
            names
        });
    let ender_name = jobs[ender].name.clone();
    jobs.truncate(next_group);
    Some(format!(
        "job {ender_name}: exitall with exit_what=all: fio starts nothing after it ends, so the jobs after its group never run ({}): left out",
        left_out.join(", ")
    ))
}

/// `wait_for=NAME`: the job starts once job NAME (all its clones) has
/// finished. A job of the same group becomes the streams it waits for; one
/// of an earlier group has finished before this group starts, so there is
/// nothing to wait for. fio wants the job defined before the one waiting.
fn resolve_waits(jobs: &mut [Job]) -> Result<(), UsageError> {
    let mut group = 0;
    let groups: Vec<usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            if i > 0 && j.starts_group {
                group += 1;
            }
            group
        })
        .collect();
    let mut problems = Vec::new();
    for i in 0..jobs.len() {
        let Some((name, at)) = jobs[i].wait_for.clone() else {
            continue;
        };
        let of_job = |j: &Job| j.name == name || j.clone.as_ref().is_some_and(|(_, n)| *n == name);
        let waited: Vec<usize> = (0..i).filter(|&k| of_job(&jobs[k])).collect();
        match waited.as_slice() {
            [] => problems.push(format!(
                "{at}: wait_for={name}: no job of that name before job {}",
                jobs[i].name
            )),
            [first, ..] if groups[*first] < groups[i] => {}
            _ => {
                let names: Vec<String> = waited.iter().map(|&k| jobs[k].name.clone()).collect();
                jobs[i].set("wait_for", names.join(":"));
            }
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(UsageError(problems.join("\n"))),
    }
}

fn translate_sections(
    source: &str,
    short: &str,
    sections: Vec<Section>,
    cli_targets: bool,
) -> Result<Translation, UsageError> {
    let mut global: Vec<Opt> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut said = Said::default();
    for section in sections {
        if section.name == "global" {
            global.extend(section.opts);
            continue;
        }
        let mut job = Job::with_fio_defaults(&section.name);
        // fio names a job after its section; a `name` in [global] does not
        // rename every job.
        let global_opts = global.iter().filter(|o| o.key != "name");
        let origin = read_options(&mut job, global_opts.chain(&section.opts), &mut said);
        let section_line = section_at(&section.opts, &global);
        settle(&mut job, &section_line, &mut said);
        // Bounded before any clone is made: 5,000 clones took 6 MB each
        // until the OOM killer came.
        let most = crate::spec::limits::MAX_NUMJOBS as u64;
        let n: u64 = job
            .knob("numjobs")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        if jobs.len() as u64 + n > most {
            return Err(UsageError(format!(
                "{section_line}: numjobs={n}: a job file runs at most {most} jobs, numjobs clones counted (as --numjobs allows)"
            )));
        }
        let clones = job.clones();
        for p in check_values(&clones[0], &origin, &section_line) {
            said.problem(p);
        }
        jobs.extend(clones);
    }
    if !said.problems.is_empty() {
        return Err(UsageError(said.problems.join("\n")));
    }
    if jobs.is_empty() {
        return Err(UsageError(format!(
            "{short}: no job sections (only [global])"
        )));
    }
    resolve_waits(&mut jobs)?;
    if let Some(n) = end_at_exit_all(&mut jobs) {
        said.note(n);
    }
    let mut notes = said.notes;
    if let Some(tree) = tree_of(&jobs, &mut notes)? {
        return Ok(tree_translation(source, &jobs, tree, notes));
    }
    let replay = replay_of(&mut jobs, &mut notes)?;
    let mut toml = render(source, &jobs, cli_targets);
    if let (Some(r), [job]) = (&replay, jobs.as_slice()) {
        let pace = r
            .speed
            .map_or("--as-fast-as-possible".into(), |s| format!("--speed {s}x"));
        toml.insert_str(
            toml.find('\n').map_or(0, |i| i + 1),
            &format!(
                "# The job {} plays {} as `fathom replay {} TARGET... {pace} --iodepth {}` does.\n",
                job.name,
                r.trace.path().display(),
                r.trace.path().display(),
                job.knob("iodepth").unwrap_or("1"),
            ),
        );
    }
    let credentials = jobs.iter().find_map(http::credentials);
    Ok(Translation {
        toml,
        notes,
        replay,
        tree: None,
        credentials,
    })
}

/// What translating a file found: notes and problems, each said once.
#[derive(Default)]
struct Said {
    notes: Vec<String>,
    /// Every problem of the file, reported together.
    problems: Vec<String>,
}

impl Said {
    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    fn problem(&mut self, p: String) {
        if !self.problems.contains(&p) {
            self.problems.push(p);
        }
    }
}

/// Applies `opts` to `job`; returns which line set each knob, for problems
/// found in its value later.
fn read_options<'a>(
    job: &mut Job,
    opts: impl Iterator<Item = &'a Opt>,
    said: &mut Said,
) -> Vec<(String, String)> {
    let mut origin: Vec<(String, String)> = Vec::new();
    for opt in opts {
        let before = job.knobs.clone();
        match apply(job, opt) {
            Ok(Action::Done) => {}
            Ok(Action::Note(n)) => said.note(n),
            Err(m) => said.problem(format!("{}: {m}", opt.at)),
        }
        let set_by = format!(
            "{}: {}={}",
            opt.at,
            opt.key,
            opt.value.as_deref().unwrap_or("")
        );
        for set in job.knobs.iter().filter(|k| !before.contains(k)) {
            origin.retain(|(k, _)| *k != set.0);
            origin.push((set.0.clone(), set_by.clone()));
        }
    }
    origin
}

/// Settles what a job's options mean together, once all are read (`at`:
/// where problems of the whole job are reported).
fn settle(job: &mut Job, at: &str, said: &mut Said) {
    if job.knob("engine") == Some("sync")
        && let Some(depth) = job
            .knob("iodepth")
            .filter(|d| d.parse::<u32>().is_ok_and(|d| d > 1))
    {
        said.note(format!(
            "job {}: iodepth={depth} with a synchronous ioengine: one I/O at a time, as fio runs it",
            job.name
        ));
        job.set("iodepth", "1");
    }
    let mut http_notes = Vec::new();
    if let Err(m) = http::settle(job, &mut http_notes) {
        said.problem(format!("{at}: {m}"));
    }
    if job.http.is_some() {
        // The general verify note promises what an object run does not do.
        said.notes.retain(|n| !n.starts_with("verify="));
    }
    for n in http_notes {
        said.note(n);
    }
    settle_files(job, at, said);
    settle_notes(job, said);
    // fio aligns random offsets only.
    if job.knob("block_align").is_some() && !job.knob("rw").is_some_and(|rw| rw.contains("rand")) {
        job.unset("block_align");
    }
    job.io_priority();
    if let Err(m) = job.command_priority() {
        said.problem(format!("{at}: {m}"));
    }
    job.strided_sequence();
    if let Err(m) = job.strided_zones() {
        said.problem(format!("{at}: {m}"));
    }
    if let Some(n) = job.verify_phase() {
        said.note(n);
    }
    if let Some(n) = job.rates_as_knobs() {
        said.note(n);
    }
    if let Some(every) = job.think_every.take()
        && job.knob("think_time").is_some()
    {
        job.set("think_every", every.to_string());
    }
    if let Some(criterion) = job.steady.take() {
        let window = job.steady_window.take().map(|w| format!(":{w}"));
        job.set("steady_state", criterion + window.as_deref().unwrap_or(""));
    }
    if let Some((pct, set_at)) = job.size_percent.take() {
        let target = job.targets()[0].clone();
        match target_size(&target) {
            Ok(total) => job.set("size", ((total as f64 * pct / 100.0) as u64).to_string()),
            Err(m) => said.problem(format!("{set_at}: size={pct}%: {m}")),
        }
    }
    if let Err(m) = job.io_amount() {
        said.problem(format!("{at}: {m}"));
    }
}

/// A job's files: how many, of their own or named, and how far a pass
/// over them goes.
fn settle_files(job: &mut Job, at: &str, said: &mut Said) {
    if job.nrfiles > 1 && job.runtime {
        said.note(format!(
            "job {}: nrfiles={}: fathom runs a worker per file, each at iodepth, where fio goes round the files with one",
            job.name, job.nrfiles
        ));
    }
    if job.files.len() > 1 && job.runtime {
        said.note(format!(
            "job {}: filename names {} files: fathom runs a worker per file, each at iodepth, where fio goes round the files with one",
            job.name,
            job.files.len()
        ));
    }
    if job.file_op.is_none() && job.nrfiles > MAX_NRFILES {
        said.problem(format!(
            "{at}: nrfiles={}: at most {MAX_NRFILES} files (fathom runs a worker per file)",
            job.nrfiles
        ));
    }
    // fio's language is the user's instruction for their files: fio writes
    // whatever regular file a job names (and lays out anew one smaller
    // than the job's region, where fathom only adds the missing part), and
    // leaves what it laid out unless told to unlink it. Devices keep their
    // own permission, and objects of an http job their own cleanup.
    if job.http.is_none() {
        job.set("overwrite", "true");
        if !job.unlink {
            job.set("keep", "true");
        }
    }
    // Files of their own first: a pass is over their size (filesize).
    if let Err(m) = job.files_of_their_own() {
        said.problem(format!("{at}: {m}"));
    }
    if job.runtime
        && !job.time_based
        && job.knob("io_size").is_none()
        && let Some(size) = job.knob("size").map(str::to_string)
    {
        // fio stops after one pass over size or at runtime, whichever
        // comes first: both bounds, as fathom's io_size with runtime.
        job.set("io_size", size);
    } else if job.runtime && !job.time_based {
        said.note(format!(
            "job {}: runtime without time_based: fio stops after one pass over size or at runtime, whichever is first; fathom runs for the whole runtime",
            job.name
        ));
    }
}

/// Where fathom's figures for the job would differ from fio's: the knob
/// that closes the gap, or a note where none does.
fn settle_notes(job: &mut Job, said: &mut Said) {
    if job.random && job.random_map {
        match job.knob("random_distribution") {
            None | Some("uniform") => job.set("random_map", "true"),
            Some(_) => said.note(format!(
                "job {}: fathom draws offsets of a non-uniform spread with replacement, as fio's norandommap; fio without it touches each block once per pass",
                job.name
            )),
        }
    }
    // fio passes RWF_DONTCACHE on buffered I/O only, and RWF_ATOMIC on
    // writes only: elsewhere the option is off, not an error.
    if job.knob("uncached") == Some("true") && job.knob("buffered") != Some("true") {
        job.unset("uncached");
        said.note(format!(
            "job {}: uncached=1 with direct=1: direct I/O passes the page cache by already; fio and fathom leave it off",
            job.name
        ));
    }
    let writes = job
        .knob("rw")
        .and_then(|rw| rw.parse::<crate::spec::RwMode>().ok())
        .is_some_and(|rw| {
            let mix = job.knob("rwmix_read").and_then(|m| m.parse().ok());
            rw.writes(mix.unwrap_or(50))
        });
    if job.knob("atomic") == Some("true") && !writes {
        job.unset("atomic");
    }
    let logs = ["write_bw_log", "write_lat_log", "write_iops_log"];
    if logs.iter().any(|l| job.knob(l).is_some()) && job.knob("log_avg_msec").is_none() {
        said.note(format!(
            "job {}: fio logs every I/O without log_avg_msec; fathom's logs have a line per second",
            job.name
        ));
    }
}

/// Jobs of fio's file-operation engines, as the tree run that does their
/// work.
fn tree_translation(source: &str, jobs: &[Job], tree: FioTree, notes: Vec<String>) -> Translation {
    let s = &tree;
    let phases: Vec<&str> = s.phases.iter().map(|p| p.name()).collect();
    let toml = format!(
        "# {source}: fio's {} engine, as `fathom tree {} --depth {} --width {} --files {} --threads {} --phases {}` runs it:\n# each job a thread on its own files; the {} phase is the one fio times.\n",
        tree_engine(jobs),
        s.dir,
        s.shape.depth,
        s.shape.width,
        s.shape.files,
        s.threads,
        phases.join(","),
        s.fio.as_ref().map_or("", |f| f.timed.name()),
    );
    Translation {
        toml,
        notes,
        replay: None,
        tree: Some(tree),
        credentials: None,
    }
}

fn tree_engine(jobs: &[Job]) -> &'static str {
    jobs.iter()
        .find_map(|j| j.file_op)
        .map_or("", job::FileOp::name)
}

/// Jobs of a file-operation engine as a tree run; None when no job uses
/// one. Every job of the file must then use the same engine, on files fio
/// names itself (`nrfiles` in `directory`).
fn tree_of(jobs: &[Job], notes: &mut Vec<String>) -> Result<Option<FioTree>, UsageError> {
    use crate::spec::tree::{TreePhase, TreeShape, TreeSpec, TreeSync};
    use job::FileOp;
    let Some(op) = jobs.iter().find_map(|j| j.file_op) else {
        return Ok(None);
    };
    if let Some(other) = jobs.iter().find(|j| j.file_op != Some(op)) {
        return Err(UsageError(format!(
            "job {}: ioengine={}: fathom runs fio's file-operation jobs as a tree run of their own, so every job of the file must use it (job {} does not)",
            jobs[0].name,
            op.name(),
            other.name
        )));
    }
    if let Some(named) = jobs.iter().find(|j| !j.files.is_empty()) {
        return Err(UsageError(format!(
            "job {}: ioengine={} with filename: fathom makes the files itself (nrfiles in directory)",
            named.name,
            op.name()
        )));
    }
    let dir = jobs[0].directory.clone().unwrap_or_else(|| ".".into());
    if let Some(elsewhere) = jobs
        .iter()
        .find(|j| j.directory.as_deref().unwrap_or(".") != dir)
    {
        return Err(UsageError(format!(
            "job {}: ioengine={}: every job's files must be in one directory ({dir}, not {})",
            elsewhere.name,
            op.name(),
            elsewhere.directory.as_deref().unwrap_or(".")
        )));
    }
    let per_job = u64::from(jobs[0].nrfiles.max(1));
    if let Some(other) = jobs.iter().find(|j| u64::from(j.nrfiles.max(1)) != per_job) {
        return Err(UsageError(format!(
            "job {}: nrfiles={}: fathom's tree gives every job the same number of files ({per_job} here)",
            other.name, other.nrfiles
        )));
    }
    let threads = jobs.len() as u64;
    let (shape, phases, timed) = match op {
        FileOp::FileCreate | FileOp::FileStat | FileOp::FileDelete => {
            let (timed, mut phases) = match op {
                FileOp::FileCreate => (TreePhase::Create, vec![TreePhase::Mkdir]),
                FileOp::FileStat => (TreePhase::Stat, vec![TreePhase::Mkdir, TreePhase::Create]),
                _ => (TreePhase::Delete, vec![TreePhase::Mkdir, TreePhase::Create]),
            };
            phases.push(timed);
            let shape = TreeShape {
                depth: 0,
                width: 1,
                files: per_job * threads,
            };
            (shape, phases, timed)
        }
        FileOp::DirCreate | FileOp::DirStat | FileOp::DirDelete => {
            let timed = match op {
                FileOp::DirCreate => TreePhase::Mkdir,
                FileOp::DirStat => TreePhase::Dirstat,
                _ => TreePhase::Rmdir,
            };
            let phases = match op {
                FileOp::DirCreate => vec![TreePhase::Mkdir],
                _ => vec![TreePhase::Mkdir, timed],
            };
            let width = u32::try_from(per_job * threads)
                .map_err(|_| UsageError(format!("ioengine={}: too many directories", op.name())))?;
            let shape = TreeShape {
                depth: 1,
                width,
                files: 1,
            };
            (shape, phases, timed)
        }
    };
    // Options about laying files out do not apply: nothing is laid out.
    notes.retain(|n| {
        !["create_on_open", "fallocate", "openfiles"]
            .iter()
            .any(|o| n.starts_with(o))
    });
    let size_of = |knob: &str, default: u64| {
        jobs[0]
            .knob(knob)
            .map_or(Ok(default), crate::util::units::parse_size)
            .map_err(|e| UsageError(format!("job {}: {knob}: {e}", jobs[0].name)))
    };
    let bytes_each = size_of("size", 0)?;
    let bs = size_of("bs", 4096)?.max(1);
    // fio lays out the files filestat and filedelete work on at their
    // size; filecreate and the directory engines make them empty.
    let laid_out = match op {
        FileOp::FileStat | FileOp::FileDelete => bytes_each,
        _ => 0,
    };
    notes.push(format!(
        "ioengine={}: fathom times each {} as fio does, in a tree of its own (DIR/fathom-tree), and removes what it made afterwards, where fio leaves it; {}",
        op.name(),
        timed,
        match laid_out {
            0 => "files are created empty, as fio's engine creates them".to_string(),
            n => format!("the files are laid out at {} first, as fio lays them out", crate::util::units::format_bytes(n)),
        }
    ));
    let threads = u32::try_from(threads)
        .map_err(|_| UsageError(format!("ioengine={}: too many jobs", op.name())))?;
    let writes = jobs[0].knob("rw").is_some_and(|rw| rw.contains("write"));
    Ok(Some(TreeSpec {
        dir,
        shape,
        file_size_min: laid_out,
        file_size_max: laid_out,
        fsync: TreeSync::None,
        phases,
        threads,
        phase_time_s: None,
        random: false,
        leave: false,
        drop_caches: false,
        rank: None,
        ranks: None,
        shared_dir: false,
        seed: crate::spec::DEFAULT_SEED,
        fio: Some(crate::spec::tree::FioJobs {
            jobs: jobs
                .iter()
                .map(|j| match &j.clone {
                    Some((_, name)) => name.clone(),
                    None => j.name.clone(),
                })
                .collect(),
            timed,
            writes,
            bytes_each,
            bs,
        }),
    }))
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
    Ok(Some(FioReplay {
        trace: std::sync::Arc::new(trace),
        speed,
    }))
}

#[cfg(test)]
mod tests {
    use super::ini::{expand_expressions, machine, strip_comment};
    use super::table::{OPTIONS, did_you_mean};
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// A directory of the test's own, removed when the test ends.
    struct Tmp(tempfile::TempDir);

    impl std::ops::Deref for Tmp {
        type Target = Path;
        fn deref(&self) -> &Path {
            self.0.path()
        }
    }

    fn tmp() -> Tmp {
        Tmp(tempfile::Builder::new()
            .prefix("fathom-fiojob-")
            .tempdir()
            .unwrap())
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
        assert!(t.toml.contains("buffered = false"));
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
            "iodepth = 1",
            "engine = \"sync\"",
            "buffered = true",
            "invalidate = true",
            "runtime = \"3s\"",
        ] {
            assert!(t.toml.contains(line), "{line}: {}", t.toml);
        }
        // fio drops the cache at each pass of a buffered time_based job,
        // and so does fathom: nothing to note.
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
        assert!(t.toml.contains("size = 262144"), "{}", t.toml);
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

    /// fio's zbd options as fathom's: sizes in zones by the job's
    /// zonesize, the reset rule's two shares as one, the open limits.
    #[test]
    fn zbd_jobs_translate_with_their_sizes_in_zones() {
        let (_, specs) = specs_of(
            "[z]\nfilename=/dev/null\nzonemode=zbd\nzonesize=8M\noffset=4z\nsize=8z\nrw=randwrite\nbs=1M\nmax_open_zones=2\nzone_reset_threshold=0.7\nzone_reset_frequency=0.125\n",
        );
        let z = &specs[0];
        assert!(z.zoned.is_zbd());
        assert_eq!(z.zoned.zone_bytes, Some(8 << 20));
        assert_eq!(z.zoned.max_open, Some(2));
        assert_eq!(z.zoned.reset, Some((0.7, 0.125)));
        assert_eq!((z.offset, z.size), (32 << 20, Some(64 << 20)));
        let d = tmp();
        let p = write(
            &d,
            "nz.fio",
            "[z]\nfilename=/dev/null\nzonemode=zbd\nsize=8z\nrw=write\n",
        );
        let e = translate(&p, false).unwrap_err();
        assert!(e.to_string().contains("need zonesize"), "{e}");
    }

    #[test]
    fn several_directories_are_refused_not_taken_as_one() {
        let d = tmp();
        let p = write(&d, "dd.fio", "[j]\ndirectory=dd:dd2\nsize=1m\nrw=read\n");
        let e = translate(&p, false).unwrap_err();
        assert!(e.to_string().contains("several directories"), "{e}");
        let p = write(&d, "esc.fio", "[j]\ndirectory=a\\:b\nsize=1m\nrw=read\n");
        assert!(translate(&p, false).is_ok());
    }

    #[test]
    fn the_files_filestat_and_filedelete_handle_are_laid_out_as_fio_lays_them_out() {
        let d = tmp();
        for (engine, laid_out) in [("filestat", 8192), ("filedelete", 8192), ("filecreate", 0)] {
            let p = write(
                &d,
                "t.fio",
                &format!("[t]\nioengine={engine}\nnrfiles=4\nfilesize=8k\nbs=2k\n"),
            );
            let tree = translate(&p, false).unwrap().tree.unwrap();
            assert_eq!(
                (tree.file_size_min, tree.file_size_max),
                (laid_out, laid_out),
                "{engine}"
            );
            let fio = tree.fio.unwrap();
            assert_eq!((fio.bytes_each, fio.bs), (8192, 2048), "{engine}");
        }
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
        // fio 3.36's latency criteria judge the mean completion latency.
        let (_, specs) = specs_of(
            "[j]\nfilename=/tmp/f\nsize=1m\nruntime=60\ntime_based\nsteadystate=lat_slope:5%\n",
        );
        let steady = specs[0].steady_state.expect("steady state");
        assert_eq!(
            (steady.metric, steady.slope, steady.band_pct),
            (crate::measure::steady::SteadyMetric::MeanLat, true, 5.0)
        );
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
        for row in OPTIONS {
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
            if got != row.handling.name() {
                wrong.push(format!(
                    "{}={}: {got}, not {}",
                    row.name,
                    row.sample,
                    row.handling.name()
                ));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        assert!(rows > 300, "{rows} rows in the table");
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
        let names: Vec<&str> = OPTIONS.iter().map(|r| r.name).collect();
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
        assert!(missing.is_empty(), "not in the option table: {missing:?}");
    }

    /// Every job option of fio 3.42 is in the table, and none added after
    /// fio 3.33 reaches the "not an fio option" path: each is translated,
    /// accepted with a note, or refused naming the release that added it.
    #[test]
    fn the_table_covers_fio_3_42() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/fio-3.42-options.txt"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let names: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect();
        assert!(names.len() > 380, "{} names", names.len());
        let missing: Vec<&&str> = names.iter().filter(|n| table::find(n).is_none()).collect();
        assert!(missing.is_empty(), "not in the option table: {missing:?}");
        let mut newer = 0;
        for row in OPTIONS.iter().filter(|r| r.since.is_some()) {
            newer += 1;
            let said = table::apply(
                &mut Job::default(),
                &Opt {
                    key: row.name.into(),
                    value: Some(row.sample.into()),
                    at: "x:1".into(),
                },
            );
            match (row.handling, said) {
                (table::Handling::Refused, Err(e)) => assert!(
                    e.contains(&format!("(fio {})", row.since.unwrap()))
                        && !e.contains("not an fio option"),
                    "{}: {e}",
                    row.name
                ),
                (table::Handling::Refused, Ok(_)) => panic!("{} is refused by the table", row.name),
                (_, Err(e)) => panic!("{}={}: {e}", row.name, row.sample),
                (_, Ok(_)) => {}
            }
        }
        assert!(newer >= 57, "{newer} options added after fio 3.33");
    }

    /// docs/fio-options.md shows the option table, row for row; with
    /// FATHOM_BLESS=1 the test writes the table's rows into it.
    #[test]
    fn the_docs_show_the_option_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fio-options.md");
        let text = std::fs::read_to_string(path).unwrap();
        let rows: Vec<String> = OPTIONS.iter().map(|o| o.doc_row()).collect();
        let first = text.find("\n| `").map(|i| i + 1).expect("a table");
        let end = text[first..]
            .find("\n\n")
            .map_or(text.len(), |i| first + i + 1);
        let table = rows.join("\n") + "\n";
        if std::env::var_os("FATHOM_BLESS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &text[..first], &text[end..])).unwrap();
            return;
        }
        let shown: Vec<&str> = text[first..end].lines().collect();
        for (row, line) in rows.iter().zip(&shown) {
            assert_eq!(
                line, row,
                "docs/fio-options.md differs (FATHOM_BLESS=1 rewrites it)"
            );
        }
        assert_eq!(
            shown.len(),
            rows.len(),
            "docs/fio-options.md has another number of rows (FATHOM_BLESS=1 rewrites it)"
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
            // One entry looks like a division; fio reads it as a split.
            "bssplit=64k/100",
            "cmdprio_bssplit=64k/10/2/0/1",
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
    fn fios_verify_family_becomes_fathoms_verify_modes() {
        use crate::spec::VerifyMode;
        let base = "[global]\nfilename=/tmp/f\nsize=1m\nrw=write\nverify=crc32c\n";
        let (_, specs) = specs_of(&format!("{base}[a]\n"));
        assert_eq!(specs[0].verify, VerifyMode::AfterWrite);
        let (t, specs) = specs_of(&format!("{base}[a]\nverify_backlog=16\nverify_fatal=1\n"));
        assert_eq!(specs[0].verify, VerifyMode::Interleaved);
        assert!(
            t.notes.iter().any(|n| n.contains("verify_backlog")),
            "{:?}",
            t.notes
        );
        let (_, specs) = specs_of(&format!("[a]\ndo_verify=0\n{}", &base[9..]));
        assert_eq!(specs[0].verify, VerifyMode::Off);
        let (_, specs) = specs_of(&format!("{base}[a]\nverify_pattern=0xdeadbeef\n"));
        assert_eq!(specs[0].content.pattern.to_string(), "0xdeadbeef");
    }

    #[test]
    fn loops_become_an_io_amount_and_a_count_of_ios_a_bound_of_its_own() {
        let (_, specs) = specs_of(
            "[global]\nfilename=/tmp/f\nsize=1m\nbs=4k\n[a]\nloops=3\n[b]\nstonewall\nnumber_ios=5\nio_size=1m\n",
        );
        assert_eq!(specs[0].io_size, Some(3 << 20));
        assert_eq!(specs[1].io_size, Some(1 << 20));
        assert_eq!(specs[1].number_ios, Some(5), "whatever the block sizes");
        assert!(specs[1].ramp_in_pass, "as in every fio job");
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
