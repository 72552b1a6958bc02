//! fio's command line, `fio [options] [job options] <job file(s)>`, read as
//! fio 3.33 reads it (init.c's `parse_cmd_line`): job options before the
//! first `--name` are defaults for every job (the job files' too); each
//! `--name` starts a job that takes the job options after it; the job
//! files follow, and the command line's jobs come first. A job option takes
//! its value after `=` or as the next argument, except fio's flag options
//! (`--time_based`), which take none. fio's own options (`--output`,
//! `--output-format`, `--section`, ...) are read here; the job options go
//! through the same translation as a job file's lines.

use super::ini::{Opt, Section, expand_expressions, read_sections};
use super::table;
use crate::util::error::UsageError;
use std::path::PathBuf;

/// The outputs fio can be asked for, in the order asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioOutput {
    Normal,
    Json,
    JsonPlus,
    /// fio's terse format, version 3.
    Terse,
}

/// What a command line asks for besides running jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioAction {
    Run,
    /// `--parse-only`: check the jobs, run nothing.
    ParseOnly,
    Version,
    Help,
    /// `--showcmd`: each job file as the command line that says the same,
    /// printed, nothing run.
    ShowCmd,
    /// `--cmdhelp[=OPT]`: what fathom does with fio's options, in fio's
    /// layout (the option in `help_topic`).
    CmdHelp,
    /// `--enghelp[=ENGINE[,OPT]]`: the engines, or an engine's options.
    EngHelp,
}

/// fio's command line, read.
#[derive(Debug)]
pub struct FioCommand {
    pub(super) sections: Vec<Section>,
    pub outputs: Vec<FioOutput>,
    pub output: Option<PathBuf>,
    pub action: FioAction,
    /// What `--cmdhelp=` or `--enghelp=` asked about.
    pub help_topic: Option<String>,
    /// `--readonly`: a job that writes is refused.
    pub readonly: bool,
    /// `--fathom-overwrite` (or FATHOM_OVERWRITE=1): the jobs may write
    /// files that exist and that fathom did not create.
    pub overwrite: bool,
    /// `--no-history` (or FATHOM_NO_HISTORY=1).
    pub no_history: bool,
    /// `--i-know-this-destroys-data` and `--even-if-mounted`: the jobs may
    /// write block devices, as `fathom run`'s flags of those names allow.
    pub permission: crate::gate::device::WritePermission,
    /// `--status-interval`: the cumulative report, every so often while
    /// the jobs run.
    pub status_interval: Option<std::time::Duration>,
    /// What fathom does differently for an fio option given (one line each).
    pub notes: Vec<String>,
    /// `--showcmd`'s lines, a job file each.
    pub shown: String,
}

/// fio's job options that take no value (`FIO_OPT_STR_SET`, and the
/// io_uring and libaio engines' own), as `fio --cmdhelp` lists them with
/// "type: empty or boolean value".
const FLAG_OPTIONS: [&str; 17] = [
    "bs_unaligned",
    "norandommap",
    "time_based",
    "verify_only",
    "exitall",
    "exitall_on_error",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "thread",
    "group_reporting",
    "zero_buffers",
    "refill_buffers",
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
];

/// fio's own options fathom refuses, with why.
const REFUSED: [(&str, &str); 9] = [
    (
        "client",
        "fathom runs on many hosts through MPI (fathom run --mpi) or --start-at, not fio's client/server protocol",
    ),
    (
        "server",
        "fathom runs on many hosts through MPI (fathom run --mpi) or --start-at, not fio's client/server protocol",
    ),
    ("daemonize", "fathom has no server to put in the background"),
    (
        "remote-config",
        "fathom runs on many hosts through MPI, not fio's client/server protocol",
    ),
    (
        "idle-prof",
        "fathom measures its own CPU cost per I/O and the host's (cpu in every result), not idle loops",
    ),
    ("inflate-log", "fathom's logs are not compressed"),
    (
        "merge-blktrace-only",
        "fathom replays blktrace's text (fathom replay), it does not merge binary traces",
    ),
    (
        "cpuclock-test",
        "fathom times with the kernel's monotonic clock",
    ),
    ("crctest", "not a benchmark of storage"),
];

/// fio's own options that change nothing fathom measures or writes.
const ACCEPTED: [&str; 8] = [
    "eta",
    "eta-newline",
    "eta-interval",
    "alloc-size",
    "max-jobs",
    "warnings-fatal",
    "debug",
    "aux-path",
];

/// fio's own options (init.c's `l_opts`): each one's letter (its `val`),
/// its long name, and whether it takes no value (`no_argument`).
const FIO_OPTIONS: [(char, &str, bool); 40] = [
    ('o', "output", false),
    ('l', "latency-log", false),
    ('b', "bandwidth-log", false),
    ('m', "minimal", true),
    ('F', "output-format", false),
    ('f', "append-terse", false),
    ('v', "version", true),
    ('h', "help", true),
    ('c', "cmdhelp", false),
    ('i', "enghelp", false),
    ('s', "showcmd", true),
    ('r', "readonly", true),
    ('e', "eta", false),
    ('O', "eta-interval", false),
    ('E', "eta-newline", false),
    ('d', "debug", false),
    ('P', "parse-only", true),
    ('x', "section", false),
    ('X', "inflate-log", false),
    ('a', "alloc-size", false),
    ('p', "profile", false),
    ('w', "warnings-fatal", true),
    ('j', "max-jobs", false),
    ('V', "terse-version", false),
    ('S', "server", false),
    ('N', "server-internal", false),
    ('D', "daemonize", false),
    ('C', "client", false),
    ('R', "remote-config", false),
    ('T', "cpuclock-test", true),
    ('G', "crctest", false),
    ('M', "memcpytest", false),
    ('I', "idle-prof", false),
    ('L', "status-interval", false),
    ('W', "trigger-file", false),
    ('B', "trigger-timeout", false),
    ('H', "trigger", false),
    ('J', "trigger-remote", false),
    ('K', "aux-path", false),
    ('A', "merge-blktrace-only", true),
];

/// fathom's own long options of `fathom fio`, which take no value.
const FATHOM_OPTIONS: [&str; 4] = [
    "fathom-overwrite",
    "no-history",
    "i-know-this-destroys-data",
    "even-if-mounted",
];

/// fio's arguments as `--` options, read as fio's getopt_long_only reads
/// them: `-name=x` is `--name=x`, as is any long option or job option
/// given with one dash; otherwise `-v` is its letter's long option, and a
/// letter that takes a value takes the rest of the argument (`-ojson.out`)
/// or the next one.
fn long_only(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        let Some(body) = arg
            .strip_prefix('-')
            .filter(|b| !b.is_empty() && !b.starts_with('-'))
        else {
            out.push(arg.clone());
            continue;
        };
        let name = body.split_once('=').map_or(body, |(n, _)| n);
        let long = |n: &str| {
            table::find(n).is_some()
                || FIO_OPTIONS.iter().any(|(_, l, _)| *l == n)
                || FATHOM_OPTIONS.contains(&n)
        };
        let mut letters = body.chars();
        let letter = letters.next().expect("not empty");
        let short = FIO_OPTIONS.iter().find(|(c, _, _)| *c == letter);
        match short {
            Some((_, l, switch)) if !long(name) => {
                let rest = letters.as_str();
                if rest.is_empty() {
                    out.push(format!("--{l}"));
                } else if *switch {
                    // Letters run together (-rv): each its own.
                    out.push(format!("--{l}"));
                    out.extend(long_only(&[format!("-{rest}")]));
                } else {
                    out.push(format!("--{l}={rest}"));
                }
            }
            _ => out.push(format!("-{arg}")),
        }
    }
    out
}

/// A job file's sections as fio's `--showcmd` prints them: `fio `, then
/// each job's `--name=NAME` (none for `[global]`) and its options as
/// `--key=value ` (`--key ` alone for a flag), the line ended once.
fn show_command(sections: &[Section]) -> String {
    let mut line = String::from("fio ");
    for section in sections {
        if section.name != "global" {
            line += &format!("--name={} ", section.name);
        }
        for opt in &section.opts {
            line += &match &opt.value {
                Some(v) if opt.key == "description" => format!("--{}=\"{v}\" ", opt.key),
                Some(v) => format!("--{}={v} ", opt.key),
                None => format!("--{} ", opt.key),
            };
        }
    }
    line + "\n"
}

/// Reads fio's arguments (without the program name).
pub fn parse(args: &[String]) -> Result<FioCommand, UsageError> {
    let args = &long_only(args);
    let mut command = FioCommand {
        sections: vec![Section {
            name: "global".into(),
            opts: Vec::new(),
            unreadable: None,
        }],
        outputs: Vec::new(),
        output: None,
        action: FioAction::Run,
        readonly: false,
        overwrite: false,
        no_history: false,
        permission: Default::default(),
        status_interval: None,
        notes: Vec::new(),
        shown: String::new(),
        help_topic: None,
    };
    let mut files: Vec<PathBuf> = Vec::new();
    let mut only: Vec<String> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(option) = arg.strip_prefix("--").filter(|o| !o.is_empty()) else {
            if arg.starts_with('-') && arg.len() > 1 {
                problems.push(format!("{arg}: not an option of fio's"));
            } else {
                files.push(PathBuf::from(arg));
            }
            continue;
        };
        let (key, inline) = match option.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (option.to_string(), None),
        };
        let mut value = |takes: bool| -> Result<Option<String>, String> {
            if inline.is_some() || !takes {
                return Ok(inline.clone());
            }
            match args.get(i) {
                Some(next) => {
                    i += 1;
                    Ok(Some(next.clone()))
                }
                None => Err(format!("--{key}: needs a value")),
            }
        };
        match key.as_str() {
            "help" => command.action = FioAction::Help,
            "version" => command.action = FioAction::Version,
            // Only version 3 is written; fio's default.
            "terse-version" => match value(true) {
                Ok(Some(v)) if v == "3" => {}
                Ok(v) => problems.push(format!(
                    "--terse-version={}: fathom writes fio's terse version 3",
                    v.unwrap_or_default()
                )),
                Err(p) => problems.push(p),
            },
            "parse-only" => command.action = FioAction::ParseOnly,
            "showcmd" => command.action = FioAction::ShowCmd,
            // fio's optional_argument: a value only after '='.
            "cmdhelp" | "enghelp" => {
                command.action = match key.as_str() {
                    "cmdhelp" => FioAction::CmdHelp,
                    _ => FioAction::EngHelp,
                };
                command.help_topic = inline.clone();
            }
            // fathom's own, named so that fio's parser claims neither.
            "fathom-overwrite" => command.overwrite = true,
            "no-history" => command.no_history = true,
            "i-know-this-destroys-data" => command.permission.destroy_data = true,
            "even-if-mounted" => command.permission.even_if_mounted = true,
            "readonly" => command.readonly = true,
            "minimal" => command.outputs.push(FioOutput::Terse),
            "output" => match value(true) {
                Ok(v) => command.output = v.map(PathBuf::from),
                Err(p) => problems.push(p),
            },
            "output-format" => match value(true) {
                Ok(v) => problems.extend(command.output_formats(v.as_deref().unwrap_or(""))),
                Err(p) => problems.push(p),
            },
            "section" => match value(true) {
                Ok(Some(v)) => only.extend(v.split(',').map(|s| s.trim().to_string())),
                Ok(None) => {}
                Err(p) => problems.push(p),
            },
            "status-interval" => match value(true) {
                Ok(v) => match crate::util::units::parse_duration(v.as_deref().unwrap_or("")) {
                    Ok(every) if every >= std::time::Duration::from_secs(1) => {
                        command.status_interval = Some(every)
                    }
                    Ok(_) => problems.push(format!(
                        "--status-interval={}: fathom counts whole seconds; give 1s or more",
                        v.unwrap_or_default()
                    )),
                    Err(e) => problems.push(format!("--status-interval: {e}")),
                },
                Err(p) => problems.push(p),
            },
            "bandwidth-log" | "append-terse" | "trigger-file" | "trigger-timeout" | "trigger"
            | "trigger-remote" => {
                let takes = !matches!(key.as_str(), "bandwidth-log" | "append-terse");
                if let Err(p) = value(takes) {
                    problems.push(p);
                }
                problems.push(format!(
                    "--{key}: not supported by fathom fio (fathom prints its progress once a second on stderr, and writes its results at the end)"
                ));
            }
            k if ACCEPTED.contains(&k) => {
                let takes = !matches!(k, "warnings-fatal");
                if let Err(p) = value(takes) {
                    problems.push(p);
                }
            }
            k => {
                if let Some((_, why)) = REFUSED.iter().find(|(name, _)| *name == k) {
                    problems.push(format!("--{k}: not supported by fathom fio: {why}"));
                    continue;
                }
                match value(!FLAG_OPTIONS.contains(&k)) {
                    Ok(v) => {
                        if let Err(p) = command.job_option(k, v) {
                            problems.push(p);
                        }
                    }
                    Err(p) => problems.push(p),
                }
            }
        }
    }
    command.finish(&files, &only, problems)
}

impl FioCommand {
    /// `--output-format`'s list; returns the problems of its parts.
    fn output_formats(&mut self, list: &str) -> Vec<String> {
        let mut problems = Vec::new();
        for format in list.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            match format {
                "normal" => self.outputs.push(FioOutput::Normal),
                "json" => self.outputs.push(FioOutput::Json),
                "json+" => self.outputs.push(FioOutput::JsonPlus),
                "terse" => self.outputs.push(FioOutput::Terse),
                other => problems.push(format!(
                    "--output-format={other}: fio's formats are normal, json, json+ and terse"
                )),
            }
        }
        problems
    }

    /// A job option given as `--key[=value]`: `--name` starts a job, any
    /// other goes to the job (or [global]) being given.
    fn job_option(&mut self, key: &str, value: Option<String>) -> Result<(), String> {
        let line = match &value {
            Some(v) => format!("{key}={v}"),
            None => key.to_string(),
        };
        let line = expand_expressions(&line).map_err(|m| format!("--{line}: {m}"))?;
        let (k, v) = match line.split_once('=') {
            Some((k, v)) => (k.to_ascii_lowercase(), Some(v.to_string())),
            None => (line.to_ascii_lowercase(), None),
        };
        if k == "name" {
            self.sections.push(Section {
                name: v.unwrap_or_default(),
                opts: Vec::new(),
                unreadable: None,
            });
            return Ok(());
        }
        let opt = Opt {
            at: "command line".into(),
            key: k,
            value: v,
        };
        self.sections
            .last_mut()
            .expect("the global section is first")
            .opts
            .push(opt);
        Ok(())
    }

    /// The command once every argument is read: its job files read, the
    /// sections `--section` names kept, the problems said together.
    fn finish(
        mut self,
        files: &[PathBuf],
        only: &[String],
        mut problems: Vec<String>,
    ) -> Result<FioCommand, UsageError> {
        let command = &mut self;
        for file in files {
            let first = command.sections.len();
            if let Err(e) = read_sections(file, 0, &mut command.sections) {
                problems.push(e.0);
            }
            if command.action == FioAction::ShowCmd {
                command.shown += &show_command(&command.sections[first..]);
            }
        }
        if !problems.is_empty() {
            return Err(UsageError(problems.join("\n")));
        }
        if !only.is_empty() {
            for name in only {
                if !command.sections.iter().any(|s| s.name == *name) {
                    return Err(UsageError(format!("--section={name}: no job of that name")));
                }
            }
            command
                .sections
                .retain(|s| s.name == "global" || only.contains(&s.name));
        }
        super::ini::check_readable(&command.sections)?;
        if command.outputs.is_empty() {
            command.outputs.push(FioOutput::Normal);
        }
        let jobs = command
            .sections
            .iter()
            .filter(|s| s.name != "global")
            .count();
        if jobs == 0 && matches!(command.action, FioAction::Run) {
            return Err(UsageError(
                "no job(s) defined: give a job file, or --name=NAME and the job's options".into(),
            ));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_before_the_first_name_are_everyones_and_each_name_starts_a_job() {
        let c = parse(&args(
            "--size=1m --direct 1 --name=a --rw=randread --time_based --runtime 3 --name b --bs=8k --output-format=json,normal --output out.json",
        ))
        .unwrap();
        let names: Vec<&str> = c.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "a", "b"]);
        let opts = |s: &Section| -> Vec<String> {
            s.opts
                .iter()
                .map(|o| format!("{}={}", o.key, o.value.as_deref().unwrap_or("-")))
                .collect()
        };
        assert_eq!(opts(&c.sections[0]), ["size=1m", "direct=1"]);
        // A flag option does not take the next argument as its value.
        assert_eq!(
            opts(&c.sections[1]),
            ["rw=randread", "time_based=-", "runtime=3"]
        );
        assert_eq!(opts(&c.sections[2]), ["bs=8k"]);
        assert_eq!(c.outputs, [FioOutput::Json, FioOutput::Normal]);
        assert_eq!(c.output, Some(PathBuf::from("out.json")));
    }

    #[test]
    fn no_job_is_an_error_and_fios_protocol_is_refused_with_a_reason() {
        assert!(parse(&args("--size=1m")).unwrap_err().0.contains("no job"));
        let e = parse(&args("--client=host1 --name=a")).unwrap_err().0;
        assert!(e.contains("--client") && e.contains("MPI"), "{e}");
        let e = parse(&args("--name=a --bs")).unwrap_err().0;
        assert!(e.contains("--bs: needs a value"), "{e}");
        assert_eq!(
            parse(&args("--version")).unwrap().action,
            FioAction::Version
        );
    }

    #[test]
    fn one_dash_is_read_as_fios_getopt_long_only_reads_it() {
        let c = parse(&args(
            "-name=x -rw=read -size=1m -filename=F -o out.json -minimal",
        ))
        .unwrap();
        assert_eq!(c.output, Some(PathBuf::from("out.json")));
        assert_eq!(c.outputs, vec![FioOutput::Terse]);
        let job = &c.sections[1];
        assert_eq!(job.name, "x");
        let keys: Vec<&str> = job.opts.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["rw", "size", "filename"]);
        assert_eq!(parse(&args("-v")).unwrap().action, FioAction::Version);
        assert_eq!(parse(&args("-h")).unwrap().action, FioAction::Help);
        assert_eq!(
            parse(&args("-name=a -ojson.out")).unwrap().output,
            Some(PathBuf::from("json.out"))
        );
        // A name fio does not know is the translation's to refuse, as
        // with two dashes.
        let one = parse(&args("-name=a -zzz=1")).unwrap();
        assert_eq!(one.sections[1].opts[0].key, "zzz");
    }

    #[test]
    fn section_keeps_the_named_jobs() {
        let c = parse(&args("--name=a --name=b --section=b")).unwrap();
        let names: Vec<&str> = c.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "b"]);
        assert!(parse(&args("--name=a --section=zz")).is_err());
    }
}
