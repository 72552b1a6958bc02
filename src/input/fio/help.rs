//! fio's introspection, `--cmdhelp[=OPT]` and `--enghelp[=ENGINE[,OPT]]`,
//! answered in fio's layout (parse.c's `show_cmd_help`, ioengines.c's
//! `fio_show_ioengine_help`) with fathom's own answer: what fathom does
//! with each option, from the one option table.

use super::table::{FioOption, Form, How, OPTIONS};

/// What a help request prints, and the exit code fio gives it.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub code: i32,
}

/// The engines `fathom fio` runs, as `fio --enghelp` lists them, each with
/// the engine options fio 3.42 lists for it (`fio --enghelp=ENGINE`).
const ENGINES: [(&str, &[&str]); 18] = [
    ("io_uring", RING),
    ("io_uring_cmd", RING),
    (
        "libaio",
        &[
            "userspace_reap",
            "nowait",
            "libaio_vectored",
            CMDPRIO[0],
            CMDPRIO[1],
            CMDPRIO[2],
            CMDPRIO[3],
            CMDPRIO[4],
        ],
    ),
    ("sync", &[]),
    ("psync", &[]),
    ("pvsync", &[]),
    (
        "pvsync2",
        &["hipri", "hipri_percentage", "uncached", "nowait"],
    ),
    ("posixaio", &[]),
    ("libzbc", &[]),
    ("null", &[]),
    ("falloc", &[]),
    ("ftruncate", &[]),
    ("filecreate", &[]),
    ("filestat", &[]),
    ("filedelete", &[]),
    ("dircreate", &[]),
    ("dirstat", &[]),
    ("dirdelete", &[]),
];

const CMDPRIO: [&str; 5] = [
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio_hint",
    "cmdprio",
    "cmdprio_bssplit",
];

const RING: &[&str] = &[
    "hipri",
    "readfua",
    "writefua",
    "write_mode",
    "verify_mode",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "nonvectored",
    "uncached",
    "nowait",
    "force_async",
    "cmd_type",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio_hint",
    "cmdprio",
    "cmdprio_bssplit",
    "md_per_io_size",
    "pi_act",
    "pi_chk",
    "apptag",
    "apptag_mask",
    "deac",
];

/// `--cmdhelp` (`all`, or none: every option, a line each) or
/// `--cmdhelp=OPT` (that option in full; an unknown one with the closest
/// name, as fio answers a typo).
pub fn cmdhelp(topic: Option<&str>) -> Answer {
    let text = match topic.filter(|t| *t != "all") {
        None => OPTIONS.iter().map(line).collect(),
        Some(name) => match OPTIONS.iter().find(|o| o.name == name) {
            Some(option) => detail(option),
            None => match super::table::did_you_mean(name).and_then(super::table::find) {
                Some(close) => format!(
                    "No such command: {name} - showing closest match\n{}",
                    detail(close)
                ),
                None => format!("No such command: {name}\n"),
            },
        },
    };
    Answer { text, code: 0 }
}

/// `--enghelp` (the engines), `--enghelp=ENGINE` (its options) or
/// `--enghelp=ENGINE,OPT` (that option in full).
pub fn enghelp(topic: Option<&str>) -> Answer {
    let Some(topic) = topic.filter(|t| !t.is_empty()) else {
        let mut text = String::from("Available IO engines:\n");
        for (engine, _) in ENGINES {
            text.push_str(&format!("\t{engine}\n"));
        }
        return Answer { text, code: 0 };
    };
    let (engine, option) = match topic.split_once(',') {
        Some((e, o)) => (e, Some(o)),
        None => (topic, None),
    };
    let Some((_, options)) = ENGINES.iter().find(|(name, _)| *name == engine) else {
        return Answer {
            text: format!("IO engine {engine} not found\n"),
            code: 1,
        };
    };
    if options.is_empty() {
        return Answer {
            text: format!("IO engine {engine} has no options\n"),
            code: 1,
        };
    }
    let rows = options.iter().filter_map(|name| super::table::find(name));
    let text = match option {
        Some(name) => match rows.clone().find(|o| o.name == name) {
            Some(o) => detail(o),
            None => format!("No such command: {name}\n"),
        },
        None => rows.map(line).collect(),
    };
    Answer { text, code: 0 }
}

/// One option on one line, as `fio --cmdhelp` lists them.
fn line(option: &FioOption) -> String {
    format!("{:<24}: {}\n", option.name, said(option))
}

/// One option in full, in `fio --cmdhelp=OPT`'s layout.
fn detail(option: &FioOption) -> String {
    let mut text = format!("{:>20}: {}\n", option.name, said(option));
    if let Some(kind) = kind(option) {
        text.push_str(&format!("{:>20}: {kind}\n", "type"));
    }
    text.push_str(&format!("{:>20}: {}\n", "example", option.sample));
    text.push_str(&format!("{:>20}: {}\n", "fathom", option.handling.name()));
    if let Some(since) = option.since {
        text.push_str(&format!("{:>20}: fio {since}\n", "since"));
    }
    text.push('\n');
    text
}

/// What fathom does with the option, as docs/fio-options.md says it.
fn said(option: &FioOption) -> String {
    format!("{}: {}", option.handling.name(), option.doc)
}

/// The value's type in fio's words, where the knob's form fixes it.
fn kind(option: &FioOption) -> Option<&'static str> {
    let How::Knob(_, form) = option.how else {
        return None;
    };
    Some(match form {
        Form::Flag | Form::NotFlag => "boolean value (opt=1)",
        Form::Seconds | Form::Microseconds => "string with time postfix (opt=10s)",
        Form::Count => "integer value (opt=100)",
        // The value's own translation decides what it may be.
        Form::AsIs | Form::SameForBoth => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_option_is_a_row_of_the_table() {
        for (engine, options) in ENGINES {
            for name in options {
                assert!(
                    super::super::table::find(name).is_some(),
                    "{engine}'s {name} is not in the option table"
                );
            }
        }
    }

    #[test]
    fn one_option_is_shown_in_fios_layout() {
        let a = cmdhelp(Some("rw"));
        assert_eq!(a.code, 0);
        let first = a.text.lines().next().unwrap();
        assert!(
            first.starts_with("                  rw: translated: "),
            "{first}"
        );
        assert!(
            a.text.contains("              fathom: translated\n"),
            "{}",
            a.text
        );
        let typo = cmdhelp(Some("iodeth"));
        assert!(
            typo.text
                .starts_with("No such command: iodeth - showing closest match\n"),
            "{}",
            typo.text
        );
        assert!(
            typo.text.contains("             iodepth: "),
            "{}",
            typo.text
        );
        assert_eq!(cmdhelp(Some("zzzzzz")).text, "No such command: zzzzzz\n");
    }

    #[test]
    fn every_option_is_listed_a_line_each() {
        let all = cmdhelp(None);
        assert_eq!(all.text.lines().count(), OPTIONS.len());
        assert_eq!(all, cmdhelp(Some("all")));
        assert!(
            all.text
                .contains("\nbs                      : translated: ")
        );
    }

    #[test]
    fn engines_and_their_options_are_answered_as_fio_answers() {
        let list = enghelp(None);
        assert!(list.text.starts_with("Available IO engines:\n\tio_uring\n"));
        let ring = enghelp(Some("io_uring"));
        assert_eq!(ring.code, 0);
        assert!(
            ring.text.starts_with("hipri                   : "),
            "{}",
            ring.text
        );
        assert_eq!(ring.text.lines().count(), RING.len());
        assert_eq!(
            enghelp(Some("psync")),
            Answer {
                text: "IO engine psync has no options\n".into(),
                code: 1
            }
        );
        assert_eq!(enghelp(Some("nosuch")).code, 1);
        let one = enghelp(Some("io_uring,hipri"));
        assert!(
            one.text.starts_with("               hipri: "),
            "{}",
            one.text
        );
    }
}
