//! `fathom replay`: flags into the library's replay request, the workload
//! run by a session, the document out.

use super::OutputArgs;
use super::driver::Driver;
use super::knob_args::knob;
use clap::Args;
use fathom::commands::replay::{self, ReplayRequest};
use fathom::spec::{EngineKind, WorkloadSpec};
use fathom::util::error::UsageError;
use fathom::util::units;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace: an fio iolog (version 2 or 3), blkparse's text output, a
    /// CSV (time,offset,length,rw[,device][,latency_ns]) or a recording
    /// made with --record.
    trace: PathBuf,

    /// Files or block devices to play it on: the trace's devices in the
    /// order it names them, one target each (or --map).
    #[arg(required = true)]
    targets: Vec<String>,

    /// Play trace device DEVICE (a file name, or MAJ,MIN of blkparse) on
    /// TARGET; with --map, only the devices mapped are played. Repeatable.
    #[arg(long, value_name = "DEVICE=TARGET", value_parser = parse_map)]
    map: Vec<(String, String)>,

    /// How much faster than recorded each I/O is due: 1x plays it as it
    /// was, 2x twice as fast. Latency is from when each I/O was due, and
    /// I/Os the target cannot take on time are late, never dropped.
    #[arg(long, value_name = "FACTOR", default_value = "1x", value_parser = parse_speed)]
    speed: f64,

    /// Ignore the trace's times: issue its I/Os in order as fast as
    /// --iodepth allows (closed loop, as fio replays).
    #[arg(long = "as-fast-as-possible")]
    as_fast_as_possible: bool,

    /// Most I/Os in flight per target.
    #[arg(long, value_name = "N", default_value_t = replay::DEFAULT_IODEPTH, value_parser = knob("iodepth", |s| s.iodepth))]
    iodepth: u32,

    /// Play the trace (or its --from/--to part) N times, one after the
    /// other.
    #[arg(long = "loop", value_name = "N", default_value_t = 1)]
    loops: u32,

    /// Stop after this long, even if the trace goes on.
    #[arg(long, value_name = "TIME", value_parser = knob("runtime", |s| s.runtime_s.unwrap_or_default()))]
    runtime: Option<f64>,

    /// Play the trace from this far into it (e.g. 10m).
    #[arg(long, value_name = "TIME", default_value = "0s", value_parser = units::parse_seconds)]
    from: f64,

    /// Play the trace up to this far into it.
    #[arg(long, value_name = "TIME", value_parser = units::parse_seconds)]
    to: Option<f64>,

    /// Fold offsets past a target's end into it (otherwise refused).
    #[arg(long)]
    wrap: bool,

    /// Record every I/O issued into FILE (fathom's trace format).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,

    /// Through the page cache [default: O_DIRECT]
    #[arg(long)]
    buffered: bool,

    /// The I/O engine, as `run --engine` takes it.
    #[arg(long, value_name = "ENGINE", default_value = "io_uring", value_parser = knob("engine", |s| s.engine))]
    engine: EngineKind,

    /// With --engine null: how long each I/O takes (a target of known
    /// speed).
    #[arg(long = "null-latency", value_name = "TIME", value_parser = knob("null_latency", |s| s.null_latency_ns))]
    null_latency: Option<u64>,

    #[command(flatten)]
    write: super::WriteFlags,

    #[command(flatten)]
    output: OutputArgs,
}

fn parse_map(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((d, t)) if !d.is_empty() && !t.is_empty() => Ok((d.to_string(), t.to_string())),
        _ => Err(format!("'{text}' is not DEVICE=TARGET")),
    }
}

/// `2x`, `2.5x`, `0.5` (the x is optional).
fn parse_speed(text: &str) -> Result<f64, String> {
    let number = text.strip_suffix(['x', 'X']).unwrap_or(text);
    match number.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!("'{text}' is not a speed above 0 (1x, 2.5x)")),
    }
}

pub fn replay_command(args: &ReplayArgs) -> anyhow::Result<i32> {
    let mut spec = WorkloadSpec::defaults(args.targets.clone());
    spec.name = "replay".into();
    spec.iodepth = args.iodepth;
    spec.runtime_s = args.runtime;
    spec.direct = !args.buffered;
    spec.engine = args.engine;
    spec.null_latency_ns = args.null_latency.unwrap_or(0);
    spec.overwrite = args.write.overwrite;
    spec.destroy_data = args.write.destroy_data;
    spec.even_if_mounted = args.write.even_if_mounted;
    let request = ReplayRequest {
        trace: args.trace.clone(),
        map: args.map.clone(),
        speed: (!args.as_fast_as_possible).then_some(args.speed),
        loops: args.loops,
        from_s: args.from,
        to_s: args.to,
        wrap: args.wrap,
        spec,
    };
    let spec = replay::workload(&request)?;
    fathom::run::claim_targets(std::slice::from_ref(&spec));
    let driver = Driver::start(&args.output, args.write.overwrite)?;
    if let Some(record) = &args.record {
        check_record_file(record, &args.trace, args.output.output.as_deref())?;
    }
    let document = driver
        .session()
        .recording(args.record.clone())
        .run(std::slice::from_ref(&spec), &mut |_| Ok(()))?;
    driver.finish(&document, document.failed())
}

/// A recording never replaces the trace it plays, nor a file that is not a
/// recording (checked again when it is created), and the result never
/// replaces the recording.
pub(crate) fn check_record_file(
    record: &std::path::Path,
    trace: &std::path::Path,
    output: Option<&std::path::Path>,
) -> Result<(), UsageError> {
    if let Some(out) = output {
        fathom::report::destination::check_not_input(out, &[record], "the --record file")?;
    }
    // The same file by device and inode: a path, a symbolic link or a hard
    // link may name it.
    if fathom::util::same_file(record, trace) {
        return Err(UsageError(format!(
            "--record {}: that is the trace being played",
            record.display()
        )));
    }
    fathom::gate::write::check(record, fathom::trace::record::OUTPUT, false).map(|_| ())
}
