//! The knob flags of `fathom run`, made from the knob table: each knob's
//! flag, value name, help and default come from its one definition in
//! `spec::knobs::KNOBS`.

use clap::{Arg, ArgAction, ArgMatches, Command};
use fathom::spec::WorkloadSpec;
use fathom::spec::knobs::{KNOBS, Knob, SpecBuilder};

/// The knobs given on the command line, as (knob, text) pairs in table
/// order.
#[derive(Debug, Clone, Default)]
pub struct KnobArgs {
    pub given: Vec<(String, String)>,
}

/// What the help of a knob a comma list sweeps says of it.
const SWEEPS: &str = " (a comma list sweeps: one run per value)";

fn help(k: &Knob) -> String {
    let mut help = k.help.to_string();
    if k.sweepable {
        help.push_str(SWEEPS);
    }
    help.push_str(&default_of(k));
    help
}

/// `-h`'s line for a knob: its first sentence and its default.
fn short_help(k: &Knob) -> String {
    super::help::first_sentence(k.help).unwrap_or_else(|| k.help.to_string()) + &default_of(k)
}

fn default_of(k: &Knob) -> String {
    match k.default_value().filter(|d| !d.is_empty()) {
        Some(d) if k.value.is_some() && !k.help.contains("[default") => format!(" [default: {d}]"),
        _ => String::new(),
    }
}

/// `cmd`'s knob flags as a command of one workload has them: no sweeps.
pub fn one_workload(cmd: Command) -> Command {
    KNOBS.iter().filter(|k| k.sweepable).fold(cmd, |cmd, k| {
        cmd.mut_arg(k.name, |arg| {
            let help = arg
                .get_long_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            arg.long_help(help.replace(SWEEPS, ""))
        })
    })
}

/// A value parser that parses with a function of fathom's (keeping its
/// own error) and offers `names` to shell completion: an enum's values, a
/// knob's modes.
#[derive(Clone)]
pub struct Offered<T: Clone + Send + Sync + 'static> {
    names: Vec<String>,
    parse: fn(&str) -> Result<T, String>,
}

impl<T: Clone + Send + Sync + 'static> Offered<T> {
    pub fn new<N: Into<String>>(
        names: impl IntoIterator<Item = N>,
        parse: fn(&str) -> Result<T, String>,
    ) -> Self {
        Offered {
            names: names.into_iter().map(Into::into).collect(),
            parse,
        }
    }
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Offered<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        (self.parse)(&text).map_err(|m| {
            let name = arg.map_or_else(|| "the value".to_string(), |a| a.to_string());
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value '{text}' for '{name}': {m}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(|n| {
            clap::builder::PossibleValue::new(n.clone()).hide(false)
        })))
    }
}

impl clap::Args for KnobArgs {
    fn augment_args(cmd: Command) -> Command {
        KNOBS.iter().fold(cmd, |cmd, k| {
            let mut arg = Arg::new(k.name)
                .long(k.flag())
                .help(short_help(k))
                .long_help(help(k))
                .help_heading(k.category.heading())
                .hide(k.hidden);
            if let Some(names) = k.offers {
                // Any text reaches the knob (a comma list sweeps); the
                // names are for completion, and the help already has them.
                arg = arg
                    .value_parser(Offered::new(names(), |v| Ok(v.to_string())))
                    .hide_possible_values(true);
            }
            arg = match k.value {
                Some(v) => arg.value_name(v).action(ArgAction::Set),
                // A switch alone is on; `--direct=0` (as fio writes it)
                // or `--direct=false` turns it off.
                None => arg
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("true")
                    .value_name("1|0")
                    .action(ArgAction::Set),
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
            if let Some(v) = m.get_one::<String>(k.name).cloned() {
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

/// The value parser of a flag another command shares with `fathom run`
/// (`replay --iodepth`, `crashcheck --bs`): the text is read by the knob
/// table's one definition of knob `name` (the same forms, the same message
/// for the same mistake), and the command takes the value from the spec
/// it sets. Bounds are the spec's (`validate`), where the command runs a
/// spec.
pub fn knob<T>(
    name: &'static str,
    read: fn(&WorkloadSpec) -> T,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: Clone + Send + Sync + 'static,
{
    move |text: &str| {
        let mut b = SpecBuilder::new(WorkloadSpec::defaults(Vec::new()));
        b.set(name, text)?;
        Ok(read(&b.finish()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_flag_reads_its_value_as_the_knob_does() {
        let depth = knob("iodepth", |s| s.iodepth);
        assert_eq!(depth("16"), Ok(16));
        assert!(depth("deep").unwrap_err().contains("deep"));
        let runtime = knob("runtime", |s| s.runtime_s);
        assert_eq!(runtime("2m"), Ok(Some(120.0)));
    }
}
