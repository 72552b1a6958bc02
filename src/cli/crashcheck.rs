//! `fathom crashcheck`: flags into the writer, the read-back or the
//! listener of the library's `crashcheck`, and the verdict out.

use super::knob_args::knob;
use clap::Args;
use fathom::commands::crashcheck::{self, AckSink, Durability, WriterSpec};
use fathom::util::error::UsageError;
use fathom::util::stop::StopFlag;
use fathom::util::units;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct CrashcheckArgs {
    /// The file or block device to write (or, with --verify, to read back).
    #[arg(required_unless_present = "listen")]
    target: Option<PathBuf>,

    /// The ack log: where each acknowledged write is recorded, on another
    /// device than the target (another disk, an NFS mount); with --listen,
    /// where the listener keeps what it receives.
    #[arg(long = "ack-log", value_name = "FILE")]
    ack_log: Option<PathBuf>,

    /// Send acknowledgements to `fathom crashcheck --listen` at HOST:PORT
    /// instead of an ack log.
    #[arg(long = "ack-to", value_name = "HOST:PORT", conflicts_with_all = ["ack_log", "listen", "verify"])]
    ack_to: Option<String>,

    /// After the power came back: read the target and judge each block the
    /// ack log names.
    #[arg(long, requires = "ack_log")]
    verify: bool,

    /// Take acknowledgements from writers on other machines at ADDR
    /// (HOST:PORT; port 0 picks one) and append them to --ack-log.
    #[arg(
        long,
        value_name = "ADDR",
        requires = "ack_log",
        conflicts_with = "verify"
    )]
    listen: Option<String>,

    /// Block size of each write.
    #[arg(long, default_value = "4k", value_parser = units::parse_size)]
    bs: u64,

    /// Bytes of the target written, from its start.
    #[arg(long, default_value = "64m", value_parser = units::parse_size)]
    size: u64,

    /// Writers, each on its own blocks with one write in flight.
    #[arg(long, value_name = "N", default_value = "1", value_parser = knob("iodepth", |s| s.iodepth))]
    iodepth: u32,

    /// How a write is made durable before it is logged: fsync, fdatasync,
    /// or dsync (O_DSYNC).
    #[arg(long, default_value = "fdatasync")]
    sync: Durability,

    /// Acknowledged writes per second, over all writers [default: as fast
    /// as the device acknowledges]
    #[arg(long = "rate-iops", value_name = "N", value_parser = knob("rate_iops", |s| s.rate_iops.unwrap_or_default()))]
    rate_iops: Option<f64>,

    /// Stop after this long [default: until killed, or the power is cut]
    #[arg(long, value_name = "DURATION", value_parser = knob("runtime", |s| Duration::from_secs_f64(s.runtime_s.unwrap_or_default())))]
    runtime: Option<Duration>,

    #[command(flatten)]
    write: super::WriteFlags,

    /// Add this run to an --ack-log that already holds one (--verify then
    /// judges the run whose blocks the target holds).
    #[arg(long, conflicts_with_all = ["verify", "listen", "ack_to"])]
    append: bool,

    #[command(flatten)]
    watch: super::WatchArgs,
}

pub fn crashcheck_command(args: &CrashcheckArgs) -> anyhow::Result<i32> {
    let stop = StopFlag::on_signals()?;
    if let Some(addr) = &args.listen {
        let log = args.ack_log.as_ref().expect("clap requires --ack-log");
        crashcheck::listen(addr, log, &stop, &mut |at| {
            eprintln!("fathom: listening on {at}, appending to {}", log.display());
        })?;
        return Ok(super::exit_code(&stop, false));
    }
    let target = args.target.clone().expect("clap requires a target");
    if args.verify {
        let log = args.ack_log.as_ref().expect("clap requires --ack-log");
        let report = crashcheck::verify(&target, log)?;
        if report.runs.len() > 1 {
            let ids: Vec<String> = report.runs.iter().map(|r| format!("{r:x}")).collect();
            println!(
                "the log holds {} runs ({}); verifying run {:x}, whose blocks the target holds",
                ids.len(),
                ids.join(", "),
                report.run_id
            );
        }
        if report.blocks == 0 {
            println!(
                "verdict: NOTHING CHECKED (the log names no acknowledged write: the writer stopped before its first flush returned)"
            );
            return Ok(1);
        }
        if report.sample.0 == 0 {
            println!(
                "note: none of {} sampled blocks holds any block of run {:x}: if this is not the target the log was written for, the verdict below means nothing",
                report.sample.1, report.run_id
            );
        }
        if report.writes > report.blocks {
            println!(
                "the log holds {} acknowledged writes to {} distinct blocks: a block written more than once is checked for its last acknowledged write",
                units::thousands(report.writes),
                units::thousands(report.blocks)
            );
        }
        println!(
            "{} acknowledged blocks: {} intact, {} newer (in flight at the cut, landed), {} older generation, {} lost, {} torn ({} of them in flight)",
            units::thousands(report.blocks),
            units::thousands(report.intact),
            units::thousands(report.newer),
            units::thousands(report.older),
            units::thousands(report.lost),
            units::thousands(report.torn),
            units::thousands(report.torn_in_flight)
        );
        for f in &report.failures {
            println!("  {f}");
        }
        if report.pass() {
            println!("verdict: PASS (every acknowledged write survived)");
            Ok(0)
        } else {
            println!(
                "verdict: FAIL ({} blocks lost an acknowledged write: the device acknowledged flushes it had not made durable)",
                units::thousands(report.older + report.lost + report.torn - report.torn_in_flight)
            );
            Ok(1)
        }
    } else {
        let sink = match (&args.ack_log, &args.ack_to) {
            (Some(log), None) => AckSink::File(log.clone()),
            (None, Some(addr)) => AckSink::Listener(addr.clone()),
            _ => {
                return Err(UsageError(
                    "--ack-log or --ack-to: say where acknowledgements go (not on the target's device)"
                        .into(),
                )
                .into());
            }
        };
        // Each writer is a thread: as many as a run's workers may be.
        let most = fathom::spec::limits::MAX_NUMJOBS;
        if args.iodepth == 0 || args.iodepth > most {
            return Err(UsageError(format!(
                "--iodepth {} is outside 1 to {most} (one writer thread each)",
                args.iodepth
            ))
            .into());
        }
        let spec = WriterSpec {
            target,
            sink,
            bs: args.bs,
            size: args.size,
            jobs: args.iodepth,
            durability: args.sync,
            rate_iops: args.rate_iops,
            runtime: args.runtime,
            overwrite: args.write.overwrite,
            permission: fathom::gate::device::WritePermission {
                destroy_data: args.write.destroy_data,
                even_if_mounted: args.write.even_if_mounted,
            },
            append: args.append,
        };
        let options = args.watch.options();
        let watch = match options.any() {
            true => Some(fathom::report::live::Watch::start(&options)?),
            false => None,
        };
        if let Some(addr) = watch.as_ref().and_then(|w| w.listening) {
            eprintln!("fathom: serving live metrics at http://{addr}/metrics");
        }
        let board = watch.as_ref().map(|w| w.board());
        let summary = crashcheck::write(
            &spec,
            &stop,
            board.as_deref(),
            &mut |blocks| {
                eprintln!(
                    "fathom: writing {} blocks of {}, each made durable with {} before it is logged; cut the power any time, then run --verify",
                    units::thousands(blocks),
                    units::format_bytes(args.bs),
                    args.sync.name()
                );
            },
            &mut |said| eprintln!("fathom: {said}"),
        );
        if let Some(trouble) = watch.and_then(|w| w.finish()) {
            eprintln!("fathom: {trouble}");
        }
        let summary = summary?;
        println!(
            "{} writes acknowledged in {} ({} a second), run {:x} (--verify checks each block's last acknowledged write, so it counts distinct blocks, fewer when blocks were written again)",
            units::thousands(summary.acknowledged),
            units::format_duration(summary.seconds),
            units::thousands(
                (summary.acknowledged as f64 / summary.seconds.max(1e-9)).round() as u64
            ),
            summary.run_id
        );
        Ok(super::exit_code(&stop, false))
    }
}
