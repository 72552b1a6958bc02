//! `fathom meta`, `fathom seqread` and `fathom certify`: the bonnie++ -n,
//! hdparm -tT and ACT style measurements, as thin commands over the library.

use super::OutputArgs;
use super::driver::Driver;
use clap::Args;
use fathom::report::destination;
use fathom::report::{self, OutputFormat, Report};
use fathom::result::RunResult;
use fathom::spec::meta::MetaSpec;
use fathom::spec::{EngineKind, RwMode};
use fathom::util::error::UsageError;
use fathom::util::units::{self, parse_duration, parse_size};

#[derive(Args, Debug)]
pub struct MetaArgs {
    /// Directory to work in; fathom creates (and removes) its own
    /// subdirectory there.
    pub dir: String,

    /// Files, in units of 1024 (bonnie++ -n).
    #[arg(short = 'n', default_value_t = 16)]
    pub files_k: u32,

    /// Files per subdirectory (0: all in one directory).
    #[arg(long = "files-per-dir", default_value_t = 0)]
    pub files_per_dir: u32,

    /// Bytes written into each file when it is created.
    #[arg(long = "file-size", default_value = "0")]
    pub file_size: String,

    /// Seed of the random order.
    #[arg(long, default_value_t = fathom::spec::DEFAULT_SEED)]
    pub seed: u64,

    /// Run bonnie++'s block tests first (bonnie++ -s) on a file of this
    /// size: sequential write, rewrite, sequential read and random seeks in
    /// 8 KiB chunks. Twice the memory keeps the page cache out of the figures.
    #[arg(long, value_name = "SIZE")]
    pub block: Option<String>,

    #[command(flatten)]
    pub replace: super::ReplaceOutput,

    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn meta_command(args: &MetaArgs) -> anyhow::Result<i32> {
    super::no_fio_form(&args.output, "a metadata run")?;
    let spec = MetaSpec {
        dir: args.dir.clone(),
        files_k: args.files_k,
        files_per_dir: args.files_per_dir,
        file_size: parse_size(&args.file_size)
            .map_err(|e| UsageError(format!("--file-size: {e}")))?,
        seed: args.seed,
        block_size: args
            .block
            .as_deref()
            .map(parse_size)
            .transpose()
            .map_err(|e| UsageError(format!("--block: {e}")))?
            .unwrap_or(0),
    };
    let bench = fathom::commands::benchmark::MetaBench;
    super::driver::drive(&bench, &[spec], &args.output, args.replace.overwrite, false)
}

#[derive(Args, Debug)]
pub struct SeqreadArgs {
    /// A file (created and laid out if missing) or a block device.
    pub target: String,

    /// How long each of the two measurements lasts.
    #[arg(long, default_value = "3s")]
    pub duration: String,

    /// Region of the target the uncached reads cover [default: the whole
    /// device or file; 1g for a new file]
    #[arg(long)]
    pub size: Option<String>,

    #[command(flatten)]
    pub replace: super::ReplaceOutput,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Bytes of each read, and of the region the cached reads repeat over (as
/// hdparm: 2 MiB).
const SEQREAD_BS: u64 = 2 << 20;

pub fn seqread_command(args: &SeqreadArgs) -> anyhow::Result<i32> {
    let seconds = parse_duration(&args.duration)
        .map_err(|e| UsageError(format!("--duration: {e}")))?
        .as_secs_f64();
    let size = args
        .size
        .as_deref()
        .map(parse_size)
        .transpose()
        .map_err(|e| UsageError(format!("--size: {e}")))?;
    let base = fathom::spec::WorkloadSpec::defaults(vec![args.target.clone()]);
    let uncached = fathom::spec::WorkloadSpec {
        name: "uncached".into(),
        rw: RwMode::Read,
        rwmix_read: 100,
        bs: SEQREAD_BS,
        iodepth: 1,
        size,
        runtime_s: Some(seconds),
        direct: true,
        ..base.clone()
    };
    let cached = fathom::spec::WorkloadSpec {
        name: "cached".into(),
        rw: RwMode::Read,
        rwmix_read: 100,
        bs: SEQREAD_BS,
        iodepth: 1,
        size: Some(SEQREAD_BS),
        runtime_s: Some(seconds),
        direct: false,
        engine: EngineKind::Sync,
        ..base
    };
    let driver = Driver::start(&args.output, args.replace.overwrite)?;
    let mut document = driver.session().run(&[uncached, cached], &mut |_| Ok(()))?;
    // The cached figure is meant to come from the page cache.
    for w in document.workloads_mut() {
        if w.spec.name == "cached" {
            w.warnings.clear();
        }
    }
    if args.output.format() == OutputFormat::Text && args.output.output.is_none() {
        print!("{}", seqread_text(&args.target, &document));
        Ok(driver.exit(false))
    } else {
        driver.finish(&document, false)
    }
}

/// hdparm -tT's two lines, with what each figure is.
fn seqread_text(target: &str, document: &fathom::result::Document) -> String {
    let mut out = format!("{target}:\n");
    for (name, what) in [
        ("cached", "Timing cached reads (page cache, 2 MiB region)"),
        ("uncached", "Timing O_DIRECT disk reads (2 MiB, QD1)"),
    ] {
        if let Some(w) = document.workloads().find(|w| w.spec.name == name) {
            let mib = w.total.read.bytes as f64 / (1 << 20) as f64;
            let rate = if w.runtime_s > 0.0 {
                mib / w.runtime_s
            } else {
                0.0
            };
            out.push_str(&format!(
                " {what}: {} MiB in {:.2} s = {} MiB/s\n",
                units::grouped(mib, 0),
                w.runtime_s,
                units::grouped(rate, 2)
            ));
        }
    }
    for (_, warning) in document.warnings() {
        out.push_str(&format!("warning: {}\n", warning.message));
    }
    out
}

#[derive(Args, Debug)]
pub struct CertifyArgs {
    /// Files (created if missing) or block devices, certified together:
    /// every stream runs at the profile's rate on each, as ACT's load is
    /// per device, and each is reported and judged on its own and in
    /// total.
    #[arg(required = true, num_args = 1..)]
    pub targets: Vec<String>,

    /// Profile: a built-in name (act-3x, act6-3x) or a profile file (.toml).
    #[arg(long, default_value = "act-3x")]
    pub profile: String,

    /// Total time [default: the profile's, 24h for act-3x]
    #[arg(long)]
    pub duration: Option<String>,

    /// Length of each reported interval [default: the profile's, 1h]
    #[arg(long)]
    pub interval: Option<String>,

    /// Time at the start that is reported but not judged, shortened to the
    /// first interval when the run is shorter than twice it [default: the
    /// profile's]
    #[arg(long)]
    pub stabilisation: Option<String>,

    /// Multiply every stream's rate (2 = twice the profile's load).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,

    /// Region of the target to use [default: the whole device or file; 1g
    /// for a new file]
    #[arg(long)]
    pub size: Option<String>,

    #[command(flatten)]
    pub write: super::WriteFlags,

    /// Keep the file fathom created.
    #[arg(long)]
    pub keep: bool,

    /// Skip the self-check: a 0.3 s burst of the null engine at the
    /// profile's depth and jobs before the run, which measures what this
    /// host's workers can issue and notes a profile that asks for more than
    /// half of it.
    #[arg(long = "no-self-check")]
    pub no_self_check: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn certify_command(args: &CertifyArgs) -> anyhow::Result<i32> {
    super::no_fio_form(&args.output, "a certification")?;
    use fathom::commands::certify::{self, ProfileOverrides};
    use fathom::result::certify::CertifyResult;
    let (name, text) = match fathom::input::presets::PROFILES
        .iter()
        .find(|p| p.name == args.profile)
    {
        Some(p) => (p.name.to_string(), p.text.to_string()),
        None if args.profile.ends_with(".toml") => (
            args.profile.clone(),
            fathom::gate::read::text(
                std::path::Path::new(&args.profile),
                fathom::gate::read::PROFILE,
            )
            .map_err(|e| UsageError(format!("--profile {e}")))?,
        ),
        None => {
            return Err(UsageError(format!(
                "--profile: unknown profile '{}' (built in: {}; or a .toml file)",
                args.profile,
                fathom::input::presets::PROFILES
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .into());
        }
    };
    let mut knobs = Vec::new();
    for (k, set) in [
        ("overwrite", args.write.overwrite),
        ("i_know_this_destroys_data", args.write.destroy_data),
        ("even_if_mounted", args.write.even_if_mounted),
        ("keep", args.keep),
    ] {
        if set {
            knobs.push((k.to_string(), "true".to_string()));
        }
    }
    if let Some(size) = &args.size {
        knobs.push(("size".into(), size.clone()));
    }
    let overrides = ProfileOverrides {
        duration: args.duration.clone(),
        interval: args.interval.clone(),
        stabilisation: args.stabilisation.clone(),
        scale: args.scale,
        targets: args.targets.clone(),
        knobs,
    };
    let mut plan = certify::plan(&text, &name, &overrides)?;
    let driver = Driver::start(&args.output, args.write.overwrite)?;
    let stop = driver.stop.clone();
    let mut session = driver.session();
    let targets = session.prepare(plan.sizing_stream())?;
    if !args.no_self_check {
        plan.self_check(&targets, &stop)?;
    }
    let mut document = session.document().clone();
    let text_out = args.output.format() == OutputFormat::Text || args.output.output.is_some();
    if text_out {
        print!(
            "{}",
            report::certify::opening(&plan.profile, &plan.target_list(), &plan.notes)
        );
    }
    let board = session.board();
    let result = certify::run(
        &plan,
        &targets,
        &stop,
        board.as_deref(),
        &mut |so_far: &CertifyResult| {
            if let Some(last) = so_far.intervals.last() {
                if text_out {
                    println!("{}", report::certify::interval_line(last));
                }
                session.phase(format!("certify interval {}", last.index), None);
            }
            document.results = vec![RunResult::Certify(so_far.clone())];
            driver.progress(&document)
        },
    )?;
    document.interrupted = result.interrupted;
    document.results = vec![RunResult::Certify(result.clone())];
    drop(targets);
    drop(session);
    if text_out {
        print!("{}", report::certify::closing(&result));
    }
    let report = Report::single(document, &super::output_label(&args.output));
    match &args.output.output {
        Some(path) => destination::write(
            path,
            &report::exporter(args.output.format()).render(&report)?,
        )?,
        None if !text_out => print!(
            "{}",
            report::exporter(args.output.format()).render(&report)?
        ),
        None => {}
    }
    Ok(driver.exit(result.pass == Some(false)))
}
