//! `fathom k8s`: the manifests of a run from many pods (printed, never
//! applied), `k8s collect` to merge what the pods wrote, and the hidden
//! `k8s pod` each pod runs.

use super::*;
use fathom::commands::k8s::{self, PodConfig, ResultsTo, collect, manifests};
use std::io::Read;

const K8S_EXAMPLES: &str = "Examples:
  fathom k8s --clients 3 --storage-class fast --size 20Gi -- \\
      run /data/fathom.dat --size 8g --rw randread --iodepth 32 --runtime 60s | kubectl apply -f -
  kubectl wait --for=condition=complete job/fathom --timeout=10m
  kubectl logs -l app.kubernetes.io/instance=fathom --tail=-1 --prefix | fathom k8s collect - -o cluster.json";

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true, after_help = K8S_EXAMPLES)]
pub(crate) struct K8sArgs {
    #[command(subcommand)]
    action: Option<K8sAction>,

    #[command(flatten)]
    print: PrintArgs,
}

#[derive(Subcommand, Debug)]
enum K8sAction {
    /// Merge the pods' results into one cluster document: from a directory
    /// of {index}.json, or from `kubectl logs` on standard input (-). An
    /// index that did not report its whole run is named, and the exit code
    /// is 1.
    Collect(CollectArgs),
    /// What each pod runs: the ConfigMap's command at its agreed start.
    #[command(hide = true)]
    Pod(PodArgs),
}

#[derive(Args, Debug)]
struct PrintArgs {
    /// How many pods run the command at once (the Job's completions and
    /// parallelism).
    #[arg(long, value_name = "N", required = true, value_parser = clap::value_parser!(u32).range(1..=1000))]
    clients: Option<u32>,

    /// The StorageClass of the claims (default: the cluster's default one).
    #[arg(long = "storage-class", value_name = "CLASS")]
    storage_class: Option<String>,

    /// Each claim's size, as a Kubernetes quantity (10Gi, 500G).
    #[arg(long, value_name = "QUANTITY", default_value = "10Gi")]
    size: String,

    /// filesystem: the volume mounted at /data; block: the raw device at
    /// /dev/fathom (its writes need --i-know-this-destroys-data in the
    /// command, as on any host).
    #[arg(
        long = "volume-mode",
        value_name = "MODE",
        default_value = "filesystem"
    )]
    volume_mode: Mode,

    /// One ReadWriteMany claim every pod mounts, instead of a
    /// ReadWriteOnce claim per pod; give each pod a file of its own
    /// (/data/{index}.dat).
    #[arg(long = "shared-claim")]
    shared_claim: bool,

    /// The image with fathom in it (the static binary: dist/Dockerfile).
    #[arg(long, value_name = "IMAGE", default_value = concat!("fathom:", env!("CARGO_PKG_VERSION")))]
    image: String,

    /// The Job's name; its ConfigMap, Service and claims are named after it.
    #[arg(long, value_name = "NAME", default_value = "fathom")]
    name: String,

    #[arg(long, value_name = "NAMESPACE")]
    namespace: Option<String>,

    /// Each pod's CPU request (no limit: a CPU limit throttles the
    /// workers, and the latency with them).
    #[arg(long, value_name = "QUANTITY", default_value = "1")]
    cpu: String,

    /// Each pod's memory request.
    #[arg(long, value_name = "QUANTITY", default_value = "512Mi")]
    memory: String,

    /// When every pod starts measuring (RFC 3339, or +DURATION from now):
    /// later than the claims take to bind and the image to pull.
    #[arg(long = "start-at", value_name = "TIME", default_value = "+2m")]
    start_at: String,

    /// Each pod writes {index}.json on this ReadWriteMany claim (mounted at
    /// /results), instead of printing it as one line of its log.
    #[arg(long = "results-claim", value_name = "CLAIM")]
    results_claim: Option<String>,

    /// A file the command names (a job file): put into the ConfigMap, and
    /// read from there where the command names it.
    #[arg(long = "file", value_name = "FILE")]
    files: Vec<PathBuf>,

    /// The fathom command every pod runs, after `--`: `run ...`. `{index}`
    /// is the pod's index (0 to N-1).
    #[arg(last = true, value_name = "COMMAND", required = true)]
    command: Vec<String>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Mode {
    Filesystem,
    Block,
}

#[derive(Args, Debug)]
struct CollectArgs {
    /// A directory of the pods' {index}.json, result files, `kubectl logs`
    /// output saved to a file, or - for it on standard input.
    #[arg(value_name = "DIR|FILE|-", default_value = "-")]
    inputs: Vec<PathBuf>,

    /// How many pods the Job ran, when no result can say (none reported).
    #[arg(long, value_name = "N")]
    clients: Option<u32>,

    /// Write the cluster document there instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,

    #[command(flatten)]
    replace: ReplaceOutput,

    /// Warn when the pods started measuring further apart than this.
    #[arg(long, default_value = "1s", value_parser = parse_tolerance)]
    tolerance: f64,

    /// Compare the merged result with this one (another StorageClass's
    /// collected result, say), as `fathom compare` does.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct PodArgs {
    /// Where the ConfigMap is mounted.
    #[arg(long, value_name = "DIR")]
    config: PathBuf,
    /// Where the result is written ({index}.json).
    #[arg(long, value_name = "DIR")]
    results: PathBuf,
}

pub(crate) fn k8s_command(args: &K8sArgs) -> anyhow::Result<i32> {
    match &args.action {
        Some(K8sAction::Collect(c)) => collect_command(c),
        Some(K8sAction::Pod(p)) => pod_command(p),
        None => print_command(&args.print),
    }
}

/// The manifests on standard output, checked as far as they can be
/// without a cluster: the command parses as fathom's, the sizes and names
/// are Kubernetes'.
fn print_command(args: &PrintArgs) -> anyhow::Result<i32> {
    let usage = |m: String| anyhow::Error::from(UsageError(m));
    k8s::check_command(&args.command).map_err(usage)?;
    k8s::check_name(&args.name).map_err(|m| usage(format!("--name: {m}")))?;
    k8s::check_quantity(&args.size).map_err(|m| usage(format!("--size: {m}")))?;
    k8s::check_quantity(&args.cpu).map_err(|m| usage(format!("--cpu: {m}")))?;
    k8s::check_quantity(&args.memory).map_err(|m| usage(format!("--memory: {m}")))?;
    // The pods would each refuse a command fathom refuses here.
    let mut probe = vec!["fathom".to_string()];
    probe.extend(args.command.iter().cloned());
    if let Some(why) = super::refusal_of(&probe) {
        return Err(usage(format!("the command after `--`: {why}")));
    }
    let start_at = units::parse_start_at(&args.start_at, std::time::SystemTime::now())
        .map_err(|m| usage(format!("--start-at: {m}")))?;
    let mut files = Vec::new();
    for path in &args.files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        k8s::check_file_name(&name)
            .map_err(|m| usage(format!("--file {}: {m}", path.display())))?;
        if !args
            .command
            .iter()
            .any(|a| *a == name || Path::new(a) == path)
        {
            return Err(usage(format!(
                "--file {}: the command after `--` does not name it (as {name})",
                path.display()
            )));
        }
        let text = fathom::gate::read::text(path, fathom::gate::read::JOB_FILE)?;
        files.push((name, text));
    }
    // The command names a file as given; the pods read it by its name.
    let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    let command = args
        .command
        .iter()
        .map(|a| {
            args.files
                .iter()
                .zip(&names)
                .find(|(p, _)| Path::new(a) == p.as_path())
                .map_or_else(|| a.clone(), |(_, n)| n.clone())
        })
        .collect();
    let spec = manifests::Spec {
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        image: args.image.clone(),
        storage_class: args.storage_class.clone(),
        size: args.size.clone(),
        volume_mode: match args.volume_mode {
            Mode::Filesystem => manifests::VolumeMode::Filesystem,
            Mode::Block => manifests::VolumeMode::Block,
        },
        claims: if args.shared_claim {
            manifests::Claims::Shared
        } else {
            manifests::Claims::PerPod
        },
        cpu: args.cpu.clone(),
        memory: args.memory.clone(),
        config: PodConfig {
            args: command,
            start_at: humantime::format_rfc3339_seconds(start_at).to_string(),
            clients: args.clients.unwrap_or(1),
            files: names,
            results: match &args.results_claim {
                Some(claim) => ResultsTo::Claim(claim.clone()),
                None => ResultsTo::Log,
            },
        },
        files,
    };
    print!(
        "{}",
        fathom::util::yaml::stream(&manifests::manifests(&spec))
    );
    Ok(0)
}

/// One pod: the ConfigMap's command, with this pod's index, from the
/// agreed start; its document then names the pod, and goes to the results
/// directory or, as one line, to the log.
fn pod_command(args: &PodArgs) -> anyhow::Result<i32> {
    let usage = |m: String| anyhow::Error::from(UsageError(m));
    let index: u32 = std::env::var("JOB_COMPLETION_INDEX")
        .ok()
        .and_then(|i| i.parse().ok())
        .ok_or_else(|| {
            usage("JOB_COMPLETION_INDEX is not set: `fathom k8s pod` runs in the pods of the Job `fathom k8s` prints".into())
        })?;
    let config_path = args.config.join(k8s::CONFIG_KEY);
    let text = fathom::gate::read::text(&config_path, fathom::gate::read::JOB_FILE)?;
    let config: PodConfig = serde_json::from_str(&text)
        .map_err(|e| usage(format!("{}: {e}", config_path.display())))?;
    let name = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| format!("index-{index}"));
    let node = std::env::var("NODE_NAME").ok().filter(|n| !n.is_empty());
    eprintln!(
        "{}",
        collect::greeting(
            index,
            config.clients,
            &name,
            node.as_deref(),
            &config.start_at
        )
    );
    let output = args.results.join(format!("{index}.json"));
    let mut argv: Vec<std::ffi::OsString> = vec!["fathom".into()];
    argv.extend(
        k8s::pod_args(
            &config,
            index,
            &args.config.to_string_lossy(),
            &output.to_string_lossy(),
        )
        .into_iter()
        .map(Into::into),
    );
    let code = super::run_args(argv);
    // What the run wrote, whole or interrupted, names its pod; a run that
    // wrote nothing (refused, killed) leaves collect to say so.
    let Ok(text) = fathom::gate::read::text(&output, fathom::gate::read::OWN_RESULT) else {
        return Ok(code);
    };
    let mut document =
        Document::from_json(&text).map_err(|e| usage(format!("{}: {e}", output.display())))?;
    document.pod = Some(fathom::result::pod::Pod {
        index,
        clients: config.clients,
        name,
        node,
    });
    match config.results {
        ResultsTo::Claim(_) => destination::write(&output, &json(&document)?)?,
        ResultsTo::Log => println!("{}", serde_json::to_string(&document)?),
    }
    Ok(code)
}

/// The pods' documents merged; 1 when an index did not report its whole
/// run (the document then says which, and holds what the rest measured).
fn collect_command(args: &CollectArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.output {
        let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
        destination::check_not_input(path, &inputs, "the result file")?;
        destination::check(path, args.replace.overwrite)?;
    }
    let mut found = Vec::new();
    let mut last_words = std::collections::BTreeMap::new();
    let mut take_logs = |text: &str, source: &str, found: &mut Vec<_>| {
        let logs = collect::read_logs(text).map_err(|e| UsageError(format!("{source}: {e}")))?;
        found.extend(logs.documents);
        last_words.extend(logs.last_words);
        Ok::<(), UsageError>(())
    };
    for input in &args.inputs {
        if input.as_os_str() == "-" {
            let mut text = String::new();
            std::io::stdin()
                .take(fathom::gate::read::RESULT.max)
                .read_to_string(&mut text)
                .map_err(|e| UsageError(format!("standard input: {e}")))?;
            take_logs(&text, "standard input", &mut found)?;
        } else if input.is_dir() {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| UsageError(format!("{}: {e}", input.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            paths.sort();
            for path in paths {
                found.push((path.display().to_string(), load_document(&path)?));
            }
        } else {
            // A result file, or `kubectl logs` saved to one.
            let text = read_result_file(input)?;
            match Document::from_json(&text) {
                Ok(document) => found.push((input.display().to_string(), document)),
                Err(_) => take_logs(&text, &input.display().to_string(), &mut found)?,
            }
        }
    }
    if found.is_empty() && args.clients.is_none() {
        return Err(UsageError(
            "no pod's result in the input: give the pods' results (a directory, files, or `kubectl logs ... | fathom k8s collect -`), or --clients N to name the lost ones".into(),
        )
        .into());
    }
    let collected = collect::collect(found, args.clients, &last_words).map_err(UsageError)?;
    for line in &collected.lost {
        fathom::util::terminal::say(&format!("fathom: {}", report::printable(line)));
    }
    if let Some(c) = &collected.document.cluster {
        warn_spread(c, args.tolerance, "pods");
    }
    let text = json(&collected.document)?;
    match &args.output {
        Some(path) => destination::write(path, &text)?,
        None => print!("{text}"),
    }
    if let Some(baseline) = &args.baseline {
        let a = load_report(std::slice::from_ref(baseline))?;
        let b = Report::from_documents(vec![("collected".into(), collected.document.clone())])
            .map_err(UsageError)?;
        let layout = report::compare::Layout::of(OutputFormat::Text).expect("text compares");
        let comparison = report::compare::compare(
            &a.systems[0],
            &b.systems[0],
            layout,
            fathom::util::terminal::stdout_columns(),
        );
        // The document went to stdout unless -o: the comparison then goes
        // beside the messages, not into it.
        match &args.output {
            Some(_) => print!("{}", report::printable(&comparison.text)),
            None => eprint!("{}", report::printable(&comparison.text)),
        }
    }
    Ok(if collected.lost.is_empty() { 0 } else { 1 })
}
