//! A `fathom train` run as the reports show it: a caption (AU and its
//! verdict, the dataset, a search's curve; a checkpoint's times and
//! rates) and a row of tails per figure, the same cells for the
//! terminal, Markdown, HTML and CSV.

use super::sections::Labelled;
use super::table::tail_cells as tails;
use crate::result::train::{CheckpointPhase, CheckpointResult, TrainResult, TrainingResult};
use crate::util::units::{bandwidth, format_bytes, ops_per_s, thousands};

pub const HEADER: [&str; 8] = [
    "figure", "count", "mean", "p50", "p99", "p99.9", "p99.99", "max",
];

/// The header and rows of every run given (each row led by its system
/// when there are several).
pub fn cells(runs: &[Labelled<TrainResult>], named: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    if named {
        header.insert(0, "system".into());
    }
    let mut rows = Vec::new();
    for run in runs {
        let mut row = |name: &str, t: &crate::result::train::Tails| {
            let mut row = Vec::new();
            if named {
                row.push(run.system.to_string());
            }
            row.push(name.to_string());
            row.push(thousands(t.count));
            row.extend(tails(&t.lat_ns));
            rows.push(row);
        };
        match run.result {
            TrainResult::Training(t) => {
                row("batch wait", &t.batch_wait);
                row("sample read", &t.sample_read);
            }
            TrainResult::Checkpoint(c) => {
                if let Some(w) = &c.write {
                    row("checkpoint file written", &w.file);
                }
                if let Some(r) = &c.read {
                    row("checkpoint file read", &r.file);
                }
            }
        }
    }
    (header, rows)
}

/// The lines above a run's table.
pub fn caption(run: &Labelled<TrainResult>, named: bool) -> String {
    let lead = match named {
        true => format!("{}: ", run.system),
        false => String::new(),
    };
    match run.result {
        TrainResult::Training(t) => format!("{lead}{}", training_caption(t)),
        TrainResult::Checkpoint(c) => format!("{lead}{}", checkpoint_caption(c)),
    }
}

fn percent(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn training_caption(t: &TrainingResult) -> String {
    let s = &t.spec;
    let mut text = format!(
        "fathom train: {} on {} {} accelerator{} in {}{}: AU {} against {} to pass: {}",
        s.model.name(),
        s.accelerators,
        s.accelerator,
        if s.accelerators == 1 { "" } else { "s" },
        s.dir,
        t.filesystem
            .as_ref()
            .map_or(String::new(), |fs| format!(" ({fs})")),
        percent(t.au),
        percent(t.au_threshold),
        if t.passed { "passed" } else { "FAILED" }
    );
    text.push_str(&format!(
        "\n{} epoch{} of {} steps, batch {}, {} loader threads each, compute {:.4} s a batch; {} samples/s, {}; CPU {:.1} µs a sample",
        t.epochs.len(),
        if t.epochs.len() == 1 { "" } else { "s" },
        t.epochs.first().map_or(0, |e| e.steps),
        s.shape.batch_size,
        s.shape.read_threads,
        s.compute_s,
        ops_per_s(t.samples_per_s),
        bandwidth(t.bytes_per_s),
        t.cpu_ns_per_sample / 1e3,
    ));
    if t.accelerators.len() > 1 {
        let each: Vec<String> = t.accelerators.iter().map(|a| percent(a.au)).collect();
        text.push_str(&format!(
            "\nAU per accelerator: {}",
            super::sections::abridged(&each)
        ));
    }
    let d = &t.dataset;
    text.push_str(&format!(
        "\ndataset: {} files, {} ({} of memory), {}",
        thousands(d.files),
        format_bytes(d.bytes),
        match d.times_memory >= 0.1 {
            true => format!("{:.2} x", d.times_memory),
            false => "a small part".into(),
        },
        match d.made {
            true => format!("made untimed in {:.1} s", d.generation_s),
            false => "kept from an earlier run".into(),
        }
    ));
    if let Some(why) = &d.shrunk {
        text.push_str(&format!("\nsuspect: {why}"));
    }
    if let Some(what) = &d.scaled {
        text.push_str(&format!("\nscaled down: {what}"));
    }
    if d.dropped_per_epoch > 0 {
        text.push_str(&format!(
            "\neach epoch leaves out {} samples: each accelerator's last partial batch, as DLIO drops it",
            thousands(d.dropped_per_epoch)
        ));
    }
    let lag = t.host_lag_share();
    if lag >= crate::result::limit::HOST_HINT {
        text.push_str(&format!(
            "\nsuspect: the host held the accelerators back {:.1}% of their time (their steps took that long past the compute time: a busy host, or steps so short that its wake-ups show); AU counts it as lost, as DLIO does",
            lag * 100.0
        ));
    }
    if let Some(waited) = t
        .loaders_waited_for_cpu_share
        .filter(|&w| w >= crate::result::limit::HOST_HINT)
    {
        text.push_str(&format!(
            "\nsuspect: the loader threads waited for a CPU {:.1}% of the time they ran (a busy host): their reads came later than the storage alone would make them",
            waited * 100.0
        ));
    }
    if let Some(rate) = s.read_rate {
        text.push_str(&format!(
            "\nreads capped at {}/s in all",
            format_bytes(rate)
        ));
    }
    if let Some(search) = &t.search {
        text.push_str(&format!(
            "\nmost accelerators that pass: {}",
            search
                .max_accelerators
                .map_or("none (not even one)".into(), |n| n.to_string())
        ));
        for step in &search.steps {
            text.push_str(&format!(
                "\n  {} accelerator{}: AU {} {}, {} samples/s, batch wait p99 {}",
                step.accelerators,
                if step.accelerators == 1 { "" } else { "s" },
                percent(step.au),
                if step.passed { "passed" } else { "failed" },
                ops_per_s(step.samples_per_s),
                crate::util::units::latency(step.batch_wait_p99_ns as f64)
            ));
            if step.host_share >= crate::result::limit::HOST_HINT {
                text.push_str(&format!(
                    " (suspect: the host took {:.1}% of it)",
                    step.host_share * 100.0
                ));
            }
        }
    }
    if t.interrupted {
        text.push_str("\ninterrupted: the figures are of what was measured");
    }
    if let Some(why) = &t.failure {
        text.push_str(&format!("\nfailed: {why}"));
    }
    text
}

fn phase_text(name: &str, p: &CheckpointPhase) -> String {
    format!(
        "\n{name}: {} checkpoint{} of {}, {:.2} s each on average, {}",
        p.checkpoints,
        if p.checkpoints == 1 { "" } else { "s" },
        format_bytes(p.bytes),
        p.mean_s,
        bandwidth(p.bytes_per_s)
    )
}

fn checkpoint_caption(c: &CheckpointResult) -> String {
    let s = &c.spec;
    let mut text = format!(
        "fathom train: checkpoint of {} in {}{}: {} of its {} ranks, {} a rank in 2 files{}",
        s.model.name(),
        s.dir,
        c.filesystem
            .as_ref()
            .map_or(String::new(), |fs| format!(" ({fs})")),
        s.ranks,
        s.model.ranks(),
        format_bytes(s.rank_bytes()),
        if s.fsync { ", each made durable" } else { "" }
    );
    if s.scaled {
        text.push_str(&format!(
            "\nsuspect: scaled down to {} a checkpoint from the model's {}",
            format_bytes(s.checkpoint_bytes),
            format_bytes(s.model.checkpoint_bytes())
        ));
    }
    if let Some(w) = &c.write {
        text.push_str(&phase_text("written", w));
    }
    if let Some(r) = &c.read {
        text.push_str(&phase_text("read back", r));
        text.push_str(&format!("\ncache before reading: {}", c.cache));
    }
    if let Some(gap) = &c.relaunch {
        text.push_str(&format!("\nread-back {}", gap.describe()));
    } else if s.writes > 0 && s.reads == 0 && s.keep && c.write.is_some() {
        text.push_str(&format!(
            "\nkept for a read-back apart (--writes 0){}",
            s.mlperf_version
                .relaunch_limit_s()
                .map_or(String::new(), |limit| format!(
                    ", to be launched within {limit:.0} s of the last checkpoint written (Rules 4.7.1)"
                ))
        ));
    }
    if c.interrupted {
        text.push_str("\ninterrupted: the figures are of what was measured");
    }
    if let Some(why) = &c.failure {
        text.push_str(&format!("\nfailed: {why}"));
    }
    text
}

/// Batches by how long they waited for their data, in buckets doubling
/// from a millisecond: the bars of the HTML report's histogram.
pub fn wait_buckets(t: &TrainingResult) -> Vec<(String, u64)> {
    let Ok(h) = crate::measure::histogram::LatencyHistogram::decode(&t.batch_wait.histogram) else {
        return Vec::new();
    };
    let mut buckets: Vec<(String, u64)> = Vec::new();
    let mut counts = [0u64; 16];
    for (ns, n) in h.recorded() {
        let ms = ns as f64 / 1e6;
        let i = if ms < 1.0 {
            0
        } else {
            (ms.log2().floor() as usize + 1).min(counts.len() - 1)
        };
        counts[i] += n;
    }
    let last = counts.iter().rposition(|&n| n > 0).unwrap_or(0);
    for (i, &n) in counts.iter().enumerate().take(last + 1) {
        let name = match i {
            0 => "< 1 ms".to_string(),
            _ if i == counts.len() - 1 => format!(">= {} ms", 1u64 << (i - 1)),
            _ => format!("{}-{} ms", 1u64 << (i - 1), 1u64 << i),
        };
        buckets.push((name, n));
    }
    buckets
}
