//! The commands over result documents: `report`, `compare` and `merge`,
//! and reading a result file back.

use super::*;

#[derive(Args, Debug)]
pub(crate) struct MergeArgs {
    /// One result file (JSON) per host or rank, in rank order.
    #[arg(required = true, num_args = 2..)]
    pub(crate) files: Vec<PathBuf>,

    /// Write the cluster document there instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) replace: super::ReplaceOutput,

    /// Warn when the hosts started measuring further apart than this.
    #[arg(long, default_value = "1s", value_parser = parse_tolerance)]
    pub(crate) tolerance: f64,
}

pub(crate) fn parse_tolerance(text: &str) -> Result<f64, String> {
    units::parse_duration(text).map(|d| d.as_secs_f64())
}

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// The baseline result (fathom's JSON, or fio's json/json+).
    pub(crate) a: PathBuf,
    /// The result compared with it.
    pub(crate) b: PathBuf,

    /// text, markdown or csv. Default: the --output file's extension (.md, .csv), else text.
    #[arg(long = "output-format", alias = "format", value_name = "FORMAT", value_parser = parse_compare_format)]
    pub(crate) format: Option<report::compare::Layout>,

    /// Write the comparison there instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// Print every column, however wide: on a terminal the least telling
    /// columns are left out to fit it, and named under the table (a pipe
    /// or a file always gets every column)
    #[arg(long)]
    pub(crate) wide: bool,

    #[command(flatten)]
    pub(crate) replace: super::ReplaceOutput,
}

pub(crate) fn parse_compare_format(s: &str) -> Result<report::compare::Layout, String> {
    let format: OutputFormat = s.parse()?;
    report::compare::Layout::of(format)
        .ok_or_else(|| format!("compare writes text, markdown or csv, not {s}"))
}

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// Result files (JSON) from fathom run; runs of the same workload in
    /// several files are merged (percentiles from merged histograms).
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,

    /// text, json, markdown, csv, html, fio-json (fio's JSON layout, for tools built on fio) fio-json+ (with fio's latency bins, as fio's json+), fio-normal (fio's text output) or fio-terse (fio's --minimal line, version 3). Default: the --output file's extension (.json, .csv, .md, .html), else text.
    #[arg(long = "output-format", alias = "format", value_name = "FORMAT", value_parser = parse_format)]
    pub(crate) format: Option<OutputFormat>,

    /// Write the report there instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) view: super::output::TextView,

    #[command(flatten)]
    pub(crate) replace: super::ReplaceOutput,
}

pub(crate) fn report_command(args: &ReportArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        let inputs: Vec<&Path> = args.files.iter().map(PathBuf::as_path).collect();
        destination::check_not_input(path, &inputs, "the result file")?;
        destination::check(path, args.replace.overwrite)?;
    }
    let report = load_report(&args.files)?;
    if report.is_empty() {
        return Err(UsageError("the result files hold no finished result".into()).into());
    }
    let format = format_for(args.format, args.output.as_deref());
    match &args.output {
        Some(path) => destination::write(path, &report::exporter(format).render(&report)?)?,
        None => print!("{}", args.view.exporter(format).render(&report)?),
    }
    Ok(0)
}

/// Reads result files; each is named by its label or else its stem, and
/// files of one name are merged.
pub(crate) fn load_report(paths: &[PathBuf]) -> anyhow::Result<Report> {
    let mut docs = Vec::with_capacity(paths.len());
    for path in paths {
        docs.push((stem(path), load_document(path)?));
    }
    Ok(Report::from_documents(docs).map_err(UsageError)?)
}

/// A result file (fathom's JSON, or fio's) as a document; what is wrong
/// with it is bad input, naming the file.
pub(crate) fn load_document(path: &Path) -> Result<Document, UsageError> {
    let text = read_result_file(path)?;
    Document::from_json(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())))
}

/// `fathom compare A B`: exit 2 when nothing in A has a counterpart in B.
pub(crate) fn compare_command(args: &CompareArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        destination::check_not_input(path, &[&args.a, &args.b], "the result file")?;
        destination::check(path, args.replace.overwrite)?;
    }
    let a = load_report(std::slice::from_ref(&args.a))?;
    let b = load_report(std::slice::from_ref(&args.b))?;
    let layout = args.format.unwrap_or_else(|| {
        args.output
            .as_deref()
            .and_then(OutputFormat::of_path)
            .and_then(report::compare::Layout::of)
            .unwrap_or(report::compare::Layout::of(OutputFormat::Text).expect("text compares"))
    });
    let fit = match (&args.output, args.wide) {
        (None, false) => fathom::util::terminal::stdout_columns(),
        _ => None,
    };
    let comparison = report::compare::compare(&a.systems[0], &b.systems[0], layout, fit);
    if comparison.matched == 0 {
        return Err(UsageError(report::compare::nothing_in_common(
            &a.systems[0],
            &b.systems[0],
        ))
        .into());
    }
    match &args.output {
        Some(path) => destination::write(path, &comparison.text)?,
        None => print!("{}", report::printable(&comparison.text)),
    }
    Ok(0)
}

/// `fathom merge A B ...`: one cluster document from runs of several hosts.
pub(crate) fn merge_command(args: &MergeArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        let inputs: Vec<&Path> = args.files.iter().map(PathBuf::as_path).collect();
        destination::check_not_input(path, &inputs, "the result file")?;
        destination::check(path, args.replace.overwrite)?;
    }
    let mut documents: Vec<Document> = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let text = read_result_file(path)?;
        let doc = Document::from_json(&text)
            .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
        // The same run given twice would count one host's I/O twice.
        if let Some(j) = documents.iter().position(|d| {
            d.host == doc.host && d.started_at == doc.started_at && d.results == doc.results
        }) {
            return Err(UsageError(format!(
                "{} and {} are the same run (host {}, started {}): merge joins the runs of different hosts",
                args.files[j].display(),
                path.display(),
                doc.host.hostname,
                doc.started_at
            ))
            .into());
        }
        documents.push(doc);
    }
    let merged = fathom::result::cluster::concurrent_documents(
        documents,
        fathom::result::cluster::Launcher::Merge,
    )
    .map_err(UsageError)?;
    if let Some(c) = &merged.cluster {
        warn_spread(c, args.tolerance, "hosts");
    }
    let text = json(&merged)?;
    match &args.output {
        Some(path) => destination::write(path, &text)?,
        None => print!("{text}"),
    }
    Ok(0)
}

/// Warns when the `who` (hosts, pods) of a merge started measuring
/// further apart than `tolerance` seconds.
pub(crate) fn warn_spread(c: &fathom::result::cluster::Cluster, tolerance: f64, who: &str) {
    if c.start_spread_s > tolerance {
        fathom::util::terminal::say(&format!(
            "fathom: warning: the {who} started measuring {:.3} s apart, more than --tolerance {}: their seconds do not line up, and totals per second mix different moments",
            c.start_spread_s,
            units::format_duration(tolerance)
        ));
    }
}

/// A file's name without its extension: the default label of its system.
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "result".into(), |s| s.to_string_lossy().into_owned())
}

/// Reads a result file given on the command line; the size cap keeps a
/// wrong path (a disk image, say) from being read into memory.
pub fn read_result_file(path: &Path) -> Result<String, UsageError> {
    fathom::gate::read::text(path, fathom::gate::read::RESULT)
}
