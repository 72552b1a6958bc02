//! The knob flags of `fathom run`, made from the knob table: each knob's
//! flag, value name, help and default come from its one definition in
//! `spec::knobs::KNOBS`.

use crate::spec::knobs::{KNOBS, Knob};
use clap::{Arg, ArgAction, ArgMatches, Command};

/// The knobs given on the command line, as (knob, text) pairs in table
/// order.
#[derive(Debug, Clone, Default)]
pub struct KnobArgs {
    pub given: Vec<(String, String)>,
}

fn help(k: &Knob) -> String {
    let mut help = k.help.to_string();
    if k.sweepable {
        help.push_str(" (a comma list sweeps: one run per value)");
    }
    if k.value.is_some()
        && !k.help.contains("[default")
        && let Some(d) = k.default_value().filter(|d| !d.is_empty())
    {
        help.push_str(&format!(" [default: {d}]"));
    }
    help
}

impl clap::Args for KnobArgs {
    fn augment_args(cmd: Command) -> Command {
        KNOBS.iter().fold(cmd, |cmd, k| {
            let mut arg = Arg::new(k.name).long(k.flag()).help(help(k));
            arg = match k.value {
                Some(v) => arg.value_name(v).action(ArgAction::Set),
                None => arg.action(ArgAction::SetTrue),
            };
            if let Some(other) = k.conflicts {
                arg = arg.conflicts_with(other);
            }
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for KnobArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for k in KNOBS {
            let value = match k.value {
                Some(_) => m.get_one::<String>(k.name).cloned(),
                None => m.get_flag(k.name).then(|| "true".to_string()),
            };
            if let Some(v) = value {
                given.push((k.name.to_string(), v));
            }
        }
        Ok(KnobArgs { given })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}
