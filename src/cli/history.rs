//! The history's flags on every command that writes a result, what a run
//! says of itself against the runs before it, and `fathom history`.

use clap::{Args, Subcommand};
use fathom::history::{self, Filter, History, HistoryError};
use fathom::report::destination;
use fathom::result::Document;
use fathom::result::change::Bootstrap;
use fathom::util::error::UsageError;
use std::path::{Path, PathBuf};

/// Where a result is remembered.
#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "History")]
pub struct HistoryArgs {
    /// The history this result is kept in (SQLite; made when missing).
    /// Default: $XDG_DATA_HOME/fathom/history.db (~/.local/share/...).
    #[arg(long, value_name = "PATH")]
    pub history: Option<PathBuf>,

    /// Keep this result out of the history (also when FATHOM_NO_HISTORY
    /// is set, as the benchmarks in bench/ set it: runs of fathom against
    /// fio are not runs of a device).
    #[arg(long = "no-history", env = "FATHOM_NO_HISTORY", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_history: bool,

    /// A tag kept with the result in the history (KEY=VALUE, repeatable):
    /// `fathom history --tag` and `fathom check --against tag:KEY=VALUE`
    /// find it by it.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,
}

pub fn parse_tag(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().into(), v.trim().into())),
        _ => Err(format!("'{text}' is not KEY=VALUE")),
    }
}

/// The history at `--history`, or the default one.
fn store_path(explicit: Option<&Path>) -> Result<PathBuf, UsageError> {
    explicit
        .map(Path::to_path_buf)
        .or_else(history::default_path)
        .ok_or_else(|| UsageError("no $XDG_DATA_HOME or $HOME: give --history PATH".into()))
}

/// Refuses, before anything runs, a history the result could not be kept
/// in (a device, another program's database).
pub fn check_store(args: &HistoryArgs) -> Result<(), UsageError> {
    if args.no_history {
        return Ok(());
    }
    let path = store_path(args.history.as_deref())?;
    history::check(&path).map_err(usage)
}

/// How many earlier runs a run is checked against at its end.
const EARLIER: usize = 5;

/// Keeps `document` in the history (unless `--no-history`) and says how
/// each workload did against its last runs there. A history that cannot
/// be written is said, not fatal: the result was written already.
pub fn remember(document: &Document, args: &HistoryArgs) -> Vec<String> {
    if args.no_history || document.results.is_empty() {
        return Vec::new();
    }
    let path = match store_path(args.history.as_deref()) {
        Ok(path) => path,
        Err(e) => return vec![format!("history not updated: {}", e.0)],
    };
    let stored = History::open(&path).and_then(|mut h| {
        let id = h.record(document, &args.tags)?;
        let settings = Bootstrap {
            resamples: 500,
            ..Bootstrap::default()
        };
        Ok((
            id,
            history::against_earlier(&mut h, document, id, EARLIER, settings)?,
        ))
    });
    match stored {
        Ok((id, earlier)) => earlier
            .iter()
            .flat_map(|e| fathom::report::change::against_earlier(id, e))
            .map(|line| fathom::report::printable(&line).to_string())
            .collect(),
        Err(e) => vec![format!("history not updated: {e}")],
    }
}

/// Remembers the result and says on stderr how it compares with the runs
/// before it.
pub fn remember_and_say(document: &Document, args: &HistoryArgs) {
    for line in remember(document, args) {
        eprintln!("fathom: {line}");
    }
}

#[derive(Args, Debug)]
pub struct HistoryCommandArgs {
    #[command(subcommand)]
    pub action: Option<Action>,

    #[command(flatten)]
    pub filter: FilterArgs,

    /// The history to read [default: $XDG_DATA_HOME/fathom/history.db]
    #[arg(long, value_name = "PATH", global = true)]
    pub history: Option<PathBuf>,
}

#[derive(Args, Debug, Default, Clone)]
pub struct FilterArgs {
    /// Only runs on this target (its path or device, as the result names it).
    #[arg(long, global = true)]
    pub target: Option<String>,

    /// Only runs of workloads whose key holds this ("randread 4k QD32"),
    /// or of this kind (tree, meta, certify, ...).
    #[arg(long, global = true)]
    pub workload: Option<String>,

    /// Only runs with this tag (KEY=VALUE, repeatable: all of them); with
    /// import, the tags kept with each file imported.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag, global = true)]
    pub tags: Vec<(String, String)>,

    /// Only runs since this time ago (7d, 12h) or this date (2026-11-01).
    #[arg(long, value_name = "WHEN", global = true)]
    pub since: Option<String>,

    /// Only runs from this host.
    #[arg(long, global = true)]
    pub host: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// List the runs kept (the default).
    List,
    /// One run's result, as a report (--output-format, -o).
    Show {
        id: i64,
        /// text, json, markdown, csv, html (as fathom report).
        #[arg(long = "output-format", value_name = "FORMAT", value_parser = super::parse_format)]
        format: Option<super::OutputFormat>,
        /// Write it there (the text table is still printed).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        replace: super::ReplaceOutput,
    },
    /// The runs kept, as JSON (their documents) or CSV (their keys).
    Export {
        #[arg(long = "output-format", value_name = "FORMAT", default_value = "json", value_parser = ["json", "csv"])]
        format: String,
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        replace: super::ReplaceOutput,
    },
    /// Remove runs by id.
    Remove {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Keep result files made elsewhere (fathom's JSON, or fio's).
    Import {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Each workload's IOPS and percentiles run by run, oldest first, with
    /// how far each run's seconds spread: a table, or (html) a chart per
    /// figure.
    Trend {
        #[arg(long = "output-format", value_name = "FORMAT", default_value = "text", value_parser = ["text", "html"])]
        format: String,
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        replace: super::ReplaceOutput,
    },
}

fn since(text: &str) -> Result<f64, UsageError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    if let Ok(ago) = humantime::parse_duration(text) {
        return Ok(now - ago.as_secs_f64());
    }
    let day = format!("{text}T00:00:00Z");
    humantime::parse_rfc3339(&day)
        .or_else(|_| humantime::parse_rfc3339(text))
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64())
        .ok_or_else(|| {
            UsageError(format!(
                "--since {text}: a time ago (7d, 12h) or a date (2026-11-01)"
            ))
        })
}

impl FilterArgs {
    pub fn filter(&self) -> Result<Filter, UsageError> {
        Ok(Filter {
            target: self.target.clone(),
            workload: self.workload.clone(),
            tags: self.tags.clone(),
            since_unix_s: self.since.as_deref().map(since).transpose()?,
            host: self.host.clone(),
        })
    }
}

/// Opens the history a command reads: any problem is bad input.
pub fn open(path: Option<&Path>) -> Result<History, UsageError> {
    let path = store_path(path)?;
    if !history::is_url(&path.to_string_lossy()) && !path.exists() {
        return Err(UsageError(format!(
            "history {}: there is none yet (every run keeps its result there)",
            path.display()
        )));
    }
    History::open(&path).map_err(usage)
}

pub fn usage(e: HistoryError) -> UsageError {
    UsageError(e.to_string())
}

/// The runs `filter` lets through, each with its document.
fn runs(h: &mut History, filter: &Filter) -> Result<Vec<(history::Entry, Document)>, UsageError> {
    let entries = h.list(filter).map_err(usage)?;
    entries
        .into_iter()
        .map(|e| {
            let doc = h.document(e.id).map_err(usage)?;
            Ok((e, doc))
        })
        .collect()
}

/// `-o FILE`, checked before anything is read.
fn checked(output: Option<&Path>, overwrite: bool) -> Result<(), UsageError> {
    output.map_or(Ok(()), |p| destination::check(p, overwrite))
}

/// `text` to `-o FILE`, or to standard output.
fn write_out(output: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match output {
        Some(p) => destination::write(p, text)?,
        None => print!("{}", fathom::report::printable(text)),
    }
    Ok(())
}

pub fn history_command(args: &HistoryCommandArgs) -> anyhow::Result<i32> {
    let filter = args.filter.filter()?;
    let action = args.action.as_ref().unwrap_or(&Action::List);
    if let Action::Import { files } = action {
        let path = store_path(args.history.as_deref())?;
        let docs: Vec<Document> = files
            .iter()
            .map(|f| super::load_document(f))
            .collect::<Result<_, _>>()?;
        let mut h = History::open(&path).map_err(usage)?;
        for (f, d) in files.iter().zip(&docs) {
            let id = h.record(d, &args.filter.tags).map_err(usage)?;
            println!("{}: run {id}", f.display());
        }
        return Ok(0);
    }
    let mut h = open(args.history.as_deref())?;
    match action {
        Action::List => {
            let entries = h.list(&filter).map_err(usage)?;
            print!(
                "{}",
                fathom::report::printable(&fathom::report::history::list(
                    &entries,
                    fathom::util::terminal::stdout_columns()
                ))
            );
        }
        Action::Show {
            id,
            format,
            output,
            replace,
        } => {
            checked(output.as_deref(), replace.overwrite)?;
            let doc = h.document(*id).map_err(usage)?;
            let output = super::OutputArgs {
                output_format: *format,
                output: output.clone(),
                ..Default::default()
            };
            super::emit(&doc, &output)?;
        }
        Action::Export {
            format,
            output,
            replace,
        } => {
            checked(output.as_deref(), replace.overwrite)?;
            let text = match format.as_str() {
                "csv" => fathom::report::history::csv(&h.list(&filter).map_err(usage)?)?,
                _ => {
                    let docs: Vec<serde_json::Value> = runs(&mut h, &filter)?
                        .into_iter()
                        .map(|(e, doc)| serde_json::json!({ "id": e.id, "tags": e.tags, "document": doc }))
                        .collect();
                    serde_json::to_string_pretty(&docs)? + "\n"
                }
            };
            write_out(output.as_deref(), &text)?;
        }
        Action::Remove { ids } => {
            // A filter given with ids bounds them: a run it leaves out is
            // not removed, and then nothing is.
            if !filter.is_everything() {
                let listed: Vec<i64> = h
                    .list(&filter)
                    .map_err(usage)?
                    .iter()
                    .map(|e| e.id)
                    .collect();
                if let Some(id) = ids.iter().find(|id| !listed.contains(id)) {
                    return Err(UsageError(format!(
                        "history remove {id}: run {id} does not match the filter given; nothing removed"
                    ))
                    .into());
                }
            }
            let n = h.remove(ids).map_err(usage)?;
            println!("removed {n} run(s)");
        }
        Action::Trend {
            format,
            output,
            replace,
        } => {
            checked(output.as_deref(), replace.overwrite)?;
            let runs = runs(&mut h, &filter)?;
            let text = match format.as_str() {
                "html" => fathom::report::history::trend_html(&runs)?,
                _ => fathom::report::history::trend(
                    &runs,
                    output
                        .is_none()
                        .then(fathom::util::terminal::stdout_columns)
                        .flatten(),
                ),
            };
            write_out(output.as_deref(), &text)?;
        }
        Action::Import { .. } => unreachable!("imported above"),
    }
    Ok(0)
}
