//! CSV: one row per run x target x direction, with every resolved knob and
//! every measured figure, for spreadsheets and scripts.

use super::{Exporter, Labelled, Report, Section, certify};
use crate::result::capacity::CapacityResult;
use crate::result::certify::CertifyResult;
use crate::result::meta::MetaResult;
use crate::result::{LatencySummary, WorkloadResult};
use crate::spec::knobs::KNOBS;

pub struct CsvExporter;

/// Columns after the system and the knobs (whose columns come from the
/// knob table): the target, its region, and the figures.
const FIGURES: &[&str] = &[
    "target",
    "path",
    "kind",
    "filesystem",
    "device_model",
    "rotational",
    "size",
    "offset",
    "direction",
    "ios",
    "bytes",
    "runtime_s",
    "iops",
    "bw_bytes",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_max_ns",
    "lat_stddev_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_p99_99_ns",
    "cpu_user_s",
    "cpu_sys_s",
    "cpu_per_io_us",
    "cpu_waited_share",
    "issue_lag_p99_ns",
    "issue_late_share",
    "limited_by",
    "limited_by_evidence",
    "data_compress_zstd",
    "data_compress_lz4",
    "data_dedupe",
    "errors",
    "ended_early",
    "interrupted",
    "warnings",
];

impl Exporter for CsvExporter {
    /// One table per kind of result, separated by an empty line; each row
    /// names its system.
    fn render(&self, report: &Report) -> anyhow::Result<String> {
        let mut out = String::new();
        for section in report.sections() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&match section {
                Section::Workloads(workloads) => workload_rows(&workloads)?,
                Section::Meta(metas) => meta_rows(&metas)?,
                Section::Tree(trees) => tree_rows(&trees)?,
                Section::Object(runs) => object_rows(&runs)?,
                Section::Train(runs) => train_rows(&runs)?,
                Section::Certify(certifications) => certify_rows(&certifications)?,
                Section::Capacity(searches) => capacity_rows(&searches)?,
                Section::Pts(tests) => pts_rows(&tests)?,
                Section::Streams(groups) => {
                    // Each stream as a workload named WORKLOAD/STREAM.
                    let streams: Vec<WorkloadResult> = groups
                        .iter()
                        .flat_map(|g| {
                            g.streams.iter().map(|w| {
                                let mut w = w.clone();
                                w.spec.name = format!("{}/{}", g.spec.name, w.spec.name);
                                w
                            })
                        })
                        .collect();
                    let systems = groups
                        .iter()
                        .flat_map(|g| g.streams.iter().map(|_| g.system));
                    let labelled: Vec<Labelled<WorkloadResult>> = systems
                        .zip(&streams)
                        .map(|(system, result)| Labelled { system, result })
                        .collect();
                    workload_rows(&labelled)?
                }
            });
        }
        Ok(out)
    }
}

fn workload_rows(workloads: &[Labelled<WorkloadResult>]) -> anyhow::Result<String> {
    {
        let columns: Vec<_> = KNOBS
            .iter()
            .filter_map(|k| Some((k.name, k.csv?)))
            .collect();
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(
            ["system"]
                .into_iter()
                .chain(columns.iter().map(|(name, _)| *name))
                .chain(FIGURES.iter().copied()),
        )?;
        for wl in workloads {
            let s = &wl.spec;
            for t in &wl.targets {
                // Every direction the workload does gets a row, even one that
                // completed nothing; flushes get a `sync` row: count, rate
                // and latency, no bytes.
                let mut rows: Vec<(&str, u64, u64, f64, f64, &LatencySummary)> = Vec::new();
                if s.rw.read_percent(s.rwmix_read) > 0 {
                    let d = &t.io.read;
                    rows.push(("read", d.ios, d.bytes, d.iops, d.bw_bytes, &d.lat_ns));
                }
                if s.rw.writes(s.rwmix_read) {
                    let d = &t.io.write;
                    rows.push(("write", d.ios, d.bytes, d.iops, d.bw_bytes, &d.lat_ns));
                }
                if s.rw.trims() {
                    let d = &t.io.trim;
                    rows.push(("trim", d.ios, d.bytes, d.iops, d.bw_bytes, &d.lat_ns));
                }
                if let Some(sync) = &t.sync {
                    rows.push(("sync", sync.count, 0, sync.rate, 0.0, &sync.lat_ns));
                }
                for (dir, ios, bytes, iops, bw_bytes, l) in rows {
                    let device = t.facts.device.as_ref();
                    let opt = |v: Option<String>| v.unwrap_or_default();
                    let knobs = columns.iter().map(|(_, value)| value(s));
                    let figures = [
                        t.name.clone(),
                        t.facts.path.clone(),
                        crate::util::json_name(&t.facts.kind),
                        opt(t.facts.filesystem.clone()),
                        opt(device.and_then(|d| d.model.clone())),
                        opt(device.and_then(|d| d.rotational).map(|r| r.to_string())),
                        t.size.to_string(),
                        t.offset.to_string(),
                        dir.to_string(),
                        ios.to_string(),
                        bytes.to_string(),
                        decimal(t.runtime_s, 6),
                        decimal(iops, 2),
                        decimal(bw_bytes, 0),
                        l.min.to_string(),
                        decimal(l.mean, 1),
                        l.max.to_string(),
                        decimal(l.stddev, 1),
                        l.p50.to_string(),
                        l.p90.to_string(),
                        l.p99.to_string(),
                        l.p99_9.to_string(),
                        l.p99_99.to_string(),
                        decimal(wl.cpu.user_s, 6),
                        decimal(wl.cpu.sys_s, 6),
                        decimal(wl.cpu.per_io_us, 3),
                        opt(wl.cpu.waited_for_cpu_share.map(|s| format!("{s:.4}"))),
                        opt(wl.issue.as_ref().map(|i| i.lag_ns.p99.to_string())),
                        opt(wl.issue.as_ref().map(|i| format!("{:.4}", i.late_share))),
                        opt(wl.limited_by.as_ref().map(|l| l.by.name().to_string())),
                        opt(wl.limited_by.as_ref().map(|l| l.evidence.clone())),
                        opt(wl.data.as_ref().map(|d| format!("{:.3}", d.compress_zstd))),
                        opt(wl.data.as_ref().map(|d| format!("{:.3}", d.compress_lz4))),
                        opt(wl.data.as_ref().map(|d| format!("{:.3}", d.dedupe))),
                        t.errors.count.to_string(),
                        opt(t.ended_early.clone()),
                        wl.interrupted.to_string(),
                        wl.warnings
                            .iter()
                            .map(|w| w.message.as_str())
                            .collect::<Vec<_>>()
                            .join("; "),
                    ];
                    w.write_record(
                        std::iter::once(wl.system.to_string())
                            .chain(knobs)
                            .chain(figures),
                    )?;
                }
            }
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}

/// `fathom meta`: one row per system and operation.
/// The columns `latency_fields` fills.
const LATENCY_COLUMNS: [&str; 8] = [
    "lat_min_ns",
    "lat_mean_ns",
    "lat_max_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_p99_99_ns",
];

/// A latency summary's columns (`lat_min_ns` … `lat_p99_99_ns`), in
/// nanoseconds, the mean to a tenth.
fn latency_fields(l: &crate::result::LatencySummary) -> [String; 8] {
    [
        l.min.to_string(),
        decimal(l.mean, 1),
        l.max.to_string(),
        l.p50.to_string(),
        l.p90.to_string(),
        l.p99.to_string(),
        l.p99_9.to_string(),
        l.p99_99.to_string(),
    ]
}

/// One row per tree phase.
/// One row per operation of each object-store run.
/// A row per figure of tails, with the run's headline figures beside
/// it: AU and its verdict, samples and bytes a second; a checkpoint's
/// bytes a second and mean time per checkpoint.
fn train_rows(runs: &[Labelled<crate::result::train::TrainResult>]) -> anyhow::Result<String> {
    use crate::result::train::TrainResult;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(
        [
            "system",
            "workload",
            "figure",
            "au",
            "passed",
            "per_s",
            "bytes_per_s",
            "mean_s",
        ]
        .into_iter()
        .chain(LATENCY_COLUMNS),
    )?;
    for run in runs {
        let mut put = |figure: &str,
                       head: [String; 5],
                       t: &crate::result::train::Tails|
         -> anyhow::Result<()> {
            let mut row = vec![
                run.system.to_string(),
                run.result.named(),
                figure.to_string(),
            ];
            row.extend(head);
            row.extend(latency_fields(&t.lat_ns));
            w.write_record(row)?;
            Ok(())
        };
        match run.result {
            TrainResult::Training(t) => {
                let head = || {
                    [
                        format!("{:.4}", t.au),
                        t.passed.to_string(),
                        format!("{:.1}", t.samples_per_s),
                        format!("{:.0}", t.bytes_per_s),
                        String::new(),
                    ]
                };
                put("batch_wait", head(), &t.batch_wait)?;
                put("sample_read", head(), &t.sample_read)?;
            }
            TrainResult::Checkpoint(c) => {
                for (figure, phase) in [("write_file", &c.write), ("read_file", &c.read)] {
                    if let Some(p) = phase {
                        let head = [
                            String::new(),
                            String::new(),
                            String::new(),
                            format!("{:.0}", p.bytes_per_s),
                            format!("{:.3}", p.mean_s),
                        ];
                        put(figure, head, &p.file)?;
                    }
                }
            }
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn object_rows(runs: &[Labelled<crate::result::object::ObjectResult>]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(
        [
            "system",
            "target",
            "op",
            "workers",
            "ops",
            "errors",
            "elapsed_s",
            "ops_per_s",
            "bytes",
            "bytes_per_s",
            "share",
            "ttfb_p50_ns",
            "ttfb_p99_ns",
        ]
        .into_iter()
        .chain(LATENCY_COLUMNS),
    )?;
    for run in runs {
        for op in &run.ops {
            let mut row = vec![
                run.system.to_string(),
                run.spec.target.to_string(),
                op.op.to_string(),
                run.spec.workers.to_string(),
                op.ops.to_string(),
                op.errors.values().sum::<u64>().to_string(),
                format!("{:.3}", run.elapsed_s),
                format!("{:.1}", op.ops_per_s),
                op.bytes.to_string(),
                format!("{:.0}", op.bytes_per_s),
                format!("{:.4}", op.share),
                op.ttfb_ns
                    .as_ref()
                    .map(|t| t.p50.to_string())
                    .unwrap_or_default(),
                op.ttfb_ns
                    .as_ref()
                    .map(|t| t.p99.to_string())
                    .unwrap_or_default(),
            ];
            row.extend(latency_fields(&op.lat_ns));
            w.write_record(&row)?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn tree_rows(trees: &[Labelled<crate::result::tree::TreeResult>]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(
        [
            "system",
            "phase",
            "dir",
            "filesystem",
            "depth",
            "width",
            "files_per_leaf",
            "threads",
            "ops",
            "planned",
            "elapsed_s",
            "ops_per_s",
            "bytes",
            "stonewalled",
            "behind",
        ]
        .into_iter()
        .chain(LATENCY_COLUMNS),
    )?;
    for tree in trees {
        for p in &tree.phases {
            let s = &tree.spec;
            w.write_record(
                [
                    tree.system.to_string(),
                    p.phase.to_string(),
                    s.dir.clone(),
                    tree.filesystem.clone().unwrap_or_default(),
                    s.shape.depth.to_string(),
                    s.shape.width.to_string(),
                    s.shape.files.to_string(),
                    s.threads.to_string(),
                    p.ops.to_string(),
                    p.planned.to_string(),
                    decimal(p.elapsed_s, 6),
                    decimal(p.ops_per_s, 3),
                    p.bytes.to_string(),
                    p.stonewalled.to_string(),
                    p.behind.to_string(),
                ]
                .into_iter()
                .chain(latency_fields(&p.lat_ns)),
            )?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn meta_rows(metas: &[Labelled<MetaResult>]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(
        [
            "system",
            "operation",
            "dir",
            "filesystem",
            "files",
            "file_size",
            "files_per_dir",
            "elapsed_s",
            "ops_per_s",
            "bytes",
            "bw_bytes",
        ]
        .into_iter()
        .chain(LATENCY_COLUMNS),
    )?;
    for (meta, o) in metas.iter().flat_map(|m| m.ops.iter().map(move |o| (m, o))) {
        w.write_record(
            [
                meta.system.to_string(),
                o.name.clone(),
                meta.spec.dir.clone(),
                meta.filesystem.clone().unwrap_or_default(),
                o.ops.to_string(),
                meta.spec.file_size.to_string(),
                meta.spec.files_per_dir.to_string(),
                decimal(o.elapsed_s, 6),
                decimal(o.ops_per_s, 2),
                o.bytes.map(|b| b.to_string()).unwrap_or_default(),
                o.bw_bytes.map(|b| decimal(b, 0)).unwrap_or_default(),
            ]
            .into_iter()
            .chain(latency_fields(&o.lat_ns)),
        )?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// `fathom certify`: one row per system, interval and stream, then the
/// verdict of each system.
/// One row per step of every search, figures unformatted (ns, bytes, I/Os
/// per second); the answer and knee on every row of their search, so that a
/// filter on one step keeps them.
/// Every cell of every round of each SNIA PTS test.
fn pts_rows(tests: &[Labelled<crate::result::pts::PtsResult>]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(std::iter::once("system").chain(super::pts::CSV_HEADER))?;
    for t in tests {
        for row in super::pts::csv_rows(t) {
            w.write_record(std::iter::once(t.system.to_string()).chain(row))?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn capacity_rows(searches: &[Labelled<CapacityResult>]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "system",
        "workload",
        "objective",
        "step",
        "phase",
        "offered_iops",
        "achieved_iops",
        "bw_bytes",
        "p50_ns",
        "objective_ns",
        "max_ns",
        "unanswered",
        "outcome",
        "answer_iops",
        "knee_iops",
    ])?;
    let optional = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_default();
    for c in searches {
        let objective = c.search.slo.to_string();
        for (i, step) in c.steps.iter().enumerate() {
            let terms: Vec<String> = step.slo_ns.iter().map(u64::to_string).collect();
            w.write_record([
                c.system.to_string(),
                c.spec.name.clone(),
                objective.clone(),
                (i + 1).to_string(),
                super::capacity::phase(step),
                format!("{:.1}", step.offered_iops),
                format!("{:.1}", step.achieved_iops),
                format!("{:.0}", step.bw_bytes),
                step.lat_ns.p50.to_string(),
                terms.join(" "),
                step.lat_ns.max.to_string(),
                step.unanswered.to_string(),
                super::capacity::outcome(step).to_string(),
                optional(c.answer_iops),
                optional(c.knee_iops),
            ])?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn certify_rows(certifications: &[Labelled<CertifyResult>]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header_written = false;
    for c in certifications {
        let (header, rows) = certify::cells(c);
        if !header_written {
            w.write_record(
                ["system", "target"]
                    .into_iter()
                    .chain(header.iter().map(String::as_str))
                    .chain(["verdict"]),
            )?;
            header_written = true;
        }
        for row in rows {
            w.write_record(
                [c.system, c.target.as_str()]
                    .into_iter()
                    .chain(row.iter().map(String::as_str))
                    .chain([certify::verdict(c)]),
            )?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// A number as a machine reads it: at most `places` decimals, trailing
/// zeros (and a bare point) dropped: 148.8, 2296113, 0.445.
pub(crate) fn decimal(v: f64, places: usize) -> String {
    let text = format!("{v:.places$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}
