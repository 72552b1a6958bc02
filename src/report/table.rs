//! The sweep table behind the text, Markdown and HTML reports: one row per
//! point of the sweep and target, the swept knobs as leading columns. When a
//! sweep pairs reads with writes (randread/randwrite), they share a row: read
//! figures from the reading run, write figures from the writing one.

use super::Labelled;
use super::sections::distinct;
use crate::result::LatencySummary;
use crate::result::meta::MetaResult;
use crate::result::streams::StreamsResult;
use crate::result::tree::TreeResult;
use crate::result::{DirectionResult, WorkloadResult};
use crate::spec::knobs::KNOBS;
use crate::spec::tree::TreePhase;
use crate::spec::{RwMode, WorkloadSpec};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub iops: f64,
    pub bw_bytes: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
}

impl Figures {
    fn of(d: &DirectionResult) -> Option<Figures> {
        (d.ios > 0).then_some(Figures {
            iops: d.iops,
            bw_bytes: d.bw_bytes,
            p50_ns: d.lat_ns.p50,
            p99_ns: d.lat_ns.p99,
            p99_9_ns: d.lat_ns.p99_9,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Values of `SweepTable::knobs`, as text.
    pub keys: Vec<String>,
    pub target: String,
    pub read: Option<Figures>,
    pub write: Option<Figures>,
    pub trim: Option<Figures>,
    /// Flushes (`--fsync`, `--fdatasync`): their rate as `iops`.
    pub sync: Option<Figures>,
    /// Sort key and chart coordinates: the same values as numbers.
    pub bs: u64,
    pub iodepth: u32,
    pub numjobs: u32,
    pub rw: RwMode,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SweepTable {
    /// Knobs that vary between workloads (e.g. bs, iodepth).
    pub knobs: Vec<&'static str>,
    pub rows: Vec<Row>,
    /// True when reads and writes of one point were merged into one row.
    pub paired_rw: bool,
    /// Rows of several systems, named by system.
    pub systems: bool,
}

impl SweepTable {
    /// Whether any row has figures in the direction `pick` picks.
    pub fn has(&self, pick: Pick) -> bool {
        self.rows.iter().any(|r| pick(r).is_some())
    }
}

type KnobFn = fn(&WorkloadSpec) -> String;

/// The table of `workloads`; with `systems`, each row is named by its
/// system ("laptop", or "laptop: data" where it has several targets).
pub fn build(workloads: &[Labelled<WorkloadResult>], systems: bool) -> SweepTable {
    let varies = |f: KnobFn| workloads.windows(2).any(|w| f(&w[0].spec) != f(&w[1].spec));
    let rws: Vec<RwMode> = workloads.iter().map(|w| w.spec.rw).collect();
    // Reads and writes of one point share a row when every workload only
    // reads or only writes (desktop benchmarks' read/write pairs, sweeps
    // over rw=randread,randwrite).
    let paired_rw = rws.len() > 1
        && rws.iter().all(|r| {
            matches!(
                r,
                RwMode::Read | RwMode::Write | RwMode::RandRead | RwMode::RandWrite
            )
        })
        && rws
            .iter()
            .any(|r| matches!(r, RwMode::Read | RwMode::RandRead))
        && rws
            .iter()
            .any(|r| matches!(r, RwMode::Write | RwMode::RandWrite));
    let columns: Vec<(&'static str, KnobFn)> = KNOBS
        .iter()
        .filter_map(|k| Some((k.name, k.table?)))
        .collect();
    let mut knobs: Vec<(&'static str, KnobFn)> = Vec::new();
    // Tests named by the user (a preset's, a job file's sections, seqread's
    // cached/uncached) keep their names as the first column.
    let test: KnobFn = |s| test_name(&s.name).to_string();
    let label: KnobFn = |s| {
        // What a name says beyond the knobs it spells out ("sas-randread-
        // 4k-qd1" says nothing more; "SEQ1M-Q8T1" and "cached" do).
        let mut n = test_name(&s.name).to_lowercase();
        for k in KNOBS.iter().filter_map(|k| k.table) {
            let v = k(s).to_lowercase();
            if !v.is_empty() {
                n = n.replace(&v, "");
            }
        }
        n.retain(char::is_alphabetic);
        n
    };
    if varies(label) {
        knobs.push(("test", test));
    }
    let access: KnobFn = |s| {
        if s.rw.is_random() {
            "random"
        } else {
            "sequential"
        }
        .to_string()
    };
    for (name, f) in &columns {
        if paired_rw && *name == "rw" {
            if varies(access) {
                knobs.push(("access", access));
            }
        } else if varies(*f) {
            knobs.push((name, *f));
        }
    }
    if knobs.is_empty() && workloads.len() > 1 && !paired_rw {
        knobs.extend(columns.iter().filter(|(name, _)| *name == "rw"));
    }
    // Two workloads whose rows would coincide (the same knobs in every
    // column, both reading or both writing) must not fold into one row:
    // whatever else tells them apart becomes a column.
    // (Rows of different systems are told apart by the system column.)
    let collides = |knobs: &[(&'static str, KnobFn)]| {
        workloads.iter().enumerate().any(|(i, a)| {
            workloads[i + 1..]
                .iter()
                .filter(|b| b.system == a.system)
                .any(|b| {
                    let overlap = (a.spec.rw.read_percent(a.spec.rwmix_read) > 0
                        && b.spec.rw.read_percent(b.spec.rwmix_read) > 0)
                        || (a.spec.rw.writes(a.spec.rwmix_read)
                            && b.spec.rw.writes(b.spec.rwmix_read));
                    overlap && knobs.iter().all(|(_, f)| f(&a.spec) == f(&b.spec))
                })
        })
    };
    let seed: KnobFn = |s| s.seed.to_string();
    let name: KnobFn = |s| s.name.clone();
    for (column, f) in [("test", test), ("name", name), ("seed", seed)] {
        if collides(&knobs) && varies(f) && !knobs.iter().any(|(n, _)| *n == column) {
            knobs.insert(0, (column, f));
        }
    }
    let tests = distinct(
        workloads
            .iter()
            .map(|w| test_name(&w.spec.name).to_string()),
    );
    let mut rows: Vec<Row> = Vec::new();
    // With several systems a row is named by its system's label, and by
    // the target too only where that system has several.
    let several_targets = |system: &str| {
        distinct(
            workloads
                .iter()
                .filter(|w| w.system == system)
                .flat_map(|w| w.targets.iter().map(|t| t.name.clone())),
        )
        .len()
            > 1
    };
    let target_name = |w: &Labelled<WorkloadResult>, target: &str| match systems {
        false => target.to_string(),
        true if several_targets(w.system) => format!("{}: {target}", w.system),
        true => w.system.to_string(),
    };
    for w in workloads {
        add_rows(&mut rows, w, &knobs, |t| target_name(w, t));
    }
    // Named tests in the order given (a desktop benchmark's SEQ1M before
    // RND4K), a sweep's points by size, depth and jobs.
    let test_order = |r: &Row| {
        if knobs.first().is_some_and(|(n, _)| *n == "test") {
            tests.iter().position(|t| *t == r.keys[0])
        } else {
            None
        }
    };
    rows.sort_by(|a, b| {
        (test_order(a), a.target.as_str(), a.bs, a.iodepth, a.numjobs)
            .partial_cmp(&(test_order(b), b.target.as_str(), b.bs, b.iodepth, b.numjobs))
            .expect("comparable")
    });
    // Keep the order targets were given in, not alphabetical.
    let order = distinct(
        workloads
            .iter()
            .flat_map(|w| w.targets.iter().map(|t| target_name(w, &t.name))),
    );
    rows.sort_by_key(|r| order.iter().position(|n| *n == r.target));
    SweepTable {
        knobs: knobs.iter().map(|(n, _)| *n).collect(),
        rows,
        paired_rw,
        systems,
    }
}

/// A workload's name without what a sweep or a read/write pair adds to it:
/// "SEQ1M-Q8T1-read" and "SEQ1M-Q8T1-write" are the test "SEQ1M-Q8T1",
/// "run bs=4k iodepth=1" is "run".
pub fn test_name(name: &str) -> &str {
    let name = name.split(' ').next().unwrap_or(name);
    for dir in ["randread", "randwrite", "read", "write"] {
        for sep in ['-', '_', '.', ':'] {
            if let Some(base) = name.strip_suffix(dir).and_then(|b| b.strip_suffix(sep))
                && !base.is_empty()
            {
                return base;
            }
        }
    }
    name
}

fn add_rows(
    rows: &mut Vec<Row>,
    w: &WorkloadResult,
    knobs: &[(&'static str, KnobFn)],
    target_name: impl Fn(&str) -> String,
) {
    let keys: Vec<String> = knobs.iter().map(|(_, f)| f(&w.spec)).collect();
    for t in &w.targets {
        let read = Figures::of(&t.io.read);
        let write = Figures::of(&t.io.write);
        let trim = Figures::of(&t.io.trim);
        let sync = t.sync.as_ref().filter(|s| s.count > 0).map(|s| Figures {
            iops: s.rate,
            bw_bytes: 0.0,
            p50_ns: s.lat_ns.p50,
            p99_ns: s.lat_ns.p99,
            p99_9_ns: s.lat_ns.p99_9,
        });
        let name = target_name(&t.name);
        if let Some(row) = rows.iter_mut().find(|r| r.keys == keys && r.target == name) {
            row.read = row.read.or(read);
            row.write = row.write.or(write);
            row.trim = row.trim.or(trim);
            row.sync = row.sync.or(sync);
            continue;
        }
        rows.push(Row {
            keys: keys.clone(),
            target: name,
            read,
            write,
            trim,
            sync,
            bs: w.spec.bs,
            iodepth: w.spec.iodepth,
            numjobs: w.spec.numjobs,
            rw: w.spec.rw,
        });
    }
}

/// Picks a row's figures for one direction.
pub type Pick = fn(&Row) -> Option<Figures>;
pub const DIRECTIONS: [(&str, Pick); 3] = [
    ("read", |r| r.read),
    ("write", |r| r.write),
    ("trim", |r| r.trim),
];

/// Column headers and cells, shared by the text and Markdown tables.
pub fn cells(table: &SweepTable) -> (Vec<String>, Vec<Vec<String>>) {
    use crate::util::units::{latency, mb_per_s, mib_per_s, ops_per_s};
    let mut header: Vec<String> = table.knobs.iter().map(|k| k.to_string()).collect();
    header.push(if table.systems { "system" } else { "target" }.into());
    let dirs: Vec<(&str, Pick)> = DIRECTIONS
        .into_iter()
        .filter(|(_, pick)| table.has(*pick))
        .collect();
    // Named tests (a desktop benchmark's SEQ1M-Q8T1) read as desktop
    // benchmarks show them, in decimal MB/s; one unit family a table.
    let decimal = table.knobs.first() == Some(&"test");
    for (d, _) in &dirs {
        header.push(format!("{d} IOPS"));
        header.extend([
            format!("{d} {}", if decimal { "MB/s" } else { "MiB/s" }),
            format!("{d} p50"),
            format!("{d} p99"),
            format!("{d} p99.9"),
        ]);
    }
    let per_direction = 5;
    let syncs = table.rows.iter().any(|r| r.sync.is_some());
    if syncs {
        header.extend(["sync/s", "sync p50", "sync p99", "sync p99.9"].map(String::from));
    }
    let rows = table
        .rows
        .iter()
        .map(|r| {
            let mut cells = r.keys.clone();
            cells.push(r.target.clone());
            for (_, get) in &dirs {
                match get(r) {
                    Some(f) => {
                        cells.push(ops_per_s(f.iops));
                        cells.extend([
                            match decimal {
                                true => mb_per_s(f.bw_bytes),
                                false => mib_per_s(f.bw_bytes),
                            },
                            latency(f.p50_ns as f64),
                            latency(f.p99_ns as f64),
                            latency(f.p99_9_ns as f64),
                        ])
                    }
                    None => cells.extend(std::iter::repeat_n("-".to_string(), per_direction)),
                }
            }
            if syncs {
                match r.sync {
                    Some(f) => cells.extend([
                        ops_per_s(f.iops),
                        latency(f.p50_ns as f64),
                        latency(f.p99_ns as f64),
                        latency(f.p99_9_ns as f64),
                    ]),
                    None => cells.extend(std::iter::repeat_n("-".to_string(), 4)),
                }
            }
            cells
        })
        .collect();
    (header, rows)
}

/// The rate of a metadata or block phase as bonnie++ gives it: "5,509/s"
/// or "251,234 KiB/s".
pub fn meta_rate(op: &crate::result::meta::MetaOp) -> String {
    let (value, unit) = op.rate();
    format!(
        "{} {unit}",
        crate::util::units::thousands(value.round() as u64)
    )
    .replace(" /s", "/s")
}

/// What each workload ran as (the settings a table of figures leaves
/// out): how long and how much, the engine and its cache, the depth and
/// workers.
pub fn settings_cells(workloads: &[Labelled<WorkloadResult>]) -> (Vec<String>, Vec<Vec<String>>) {
    use crate::util::units::{format_bytes, format_duration};
    let header = [
        "workload", "measured", "bound", "ramp", "region", "engine", "cache", "depth", "jobs",
    ]
    .map(String::from)
    .to_vec();
    let rows = workloads
        .iter()
        .map(|w| {
            let s = &w.result.spec;
            let settings = crate::result::kind::engine_settings(s);
            let said = |name: &str| {
                settings
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or_else(String::new, |(_, v)| v.clone())
            };
            vec![
                s.named(),
                format_duration(w.result.runtime_s),
                match s.runtime_s {
                    Some(t) => format!("time, {}", format_duration(t)),
                    None => "size".into(),
                },
                format_duration(s.ramp_s),
                s.size.map_or_else(|| "whole target".into(), format_bytes),
                said("engine"),
                said("cache"),
                s.iodepth.to_string(),
                s.numjobs.to_string(),
            ]
        })
        .collect();
    (header, rows)
}

/// The `fathom meta` table: one row per phase. One system gets its latency
/// percentiles; several get their rates side by side, and two of them the
/// ratio of the second to the first.
pub fn meta_cells(metas: &[Labelled<MetaResult>]) -> (Vec<String>, Vec<Vec<String>>) {
    use crate::util::units::{latency, thousands};
    if let [meta] = metas {
        let header = [
            "operation",
            "count",
            "rate",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "max",
        ]
        .map(String::from)
        .to_vec();
        let rows = meta
            .ops
            .iter()
            .map(|o| {
                vec![
                    o.name.replace('_', " "),
                    thousands(o.ops),
                    meta_rate(o),
                    latency(o.lat_ns.mean),
                    latency(o.lat_ns.p50 as f64),
                    latency(o.lat_ns.p99 as f64),
                    latency(o.lat_ns.p99_9 as f64),
                    latency(o.lat_ns.max as f64),
                ]
            })
            .collect();
        return (header, rows);
    }
    let mut header = vec!["operation".to_string()];
    header.extend(metas.iter().map(|m| m.system.to_string()));
    let ratio = metas.len() == 2;
    if ratio {
        header.push(format!("{}/{}", metas[1].system, metas[0].system));
    }
    header.extend(metas.iter().map(|m| format!("{} p99", m.system)));
    let rows = meta_operations(metas)
        .into_iter()
        .map(|name| {
            let ops: Vec<Option<&crate::result::meta::MetaOp>> = metas
                .iter()
                .map(|m| m.ops.iter().find(|o| o.name == name))
                .collect();
            let mut row = vec![name.replace('_', " ")];
            row.extend(ops.iter().map(|o| o.map_or("-".into(), meta_rate)));
            if ratio {
                row.push(match (ops[0], ops[1]) {
                    (Some(a), Some(b)) if a.rate().0 > 0.0 => {
                        format!("{:.2}", b.rate().0 / a.rate().0)
                    }
                    _ => "-".into(),
                });
            }
            row.extend(
                ops.iter()
                    .map(|o| o.map_or("-".into(), |o| latency(o.lat_ns.p99 as f64))),
            );
            row
        })
        .collect();
    (header, rows)
}

/// Operation names of every system, in the order they were measured.
pub fn meta_operations(metas: &[Labelled<MetaResult>]) -> Vec<String> {
    distinct(metas.iter().flat_map(|m| &m.ops).map(|o| o.name.clone()))
}

/// A tree run's phases: one system gets counts, rates, percentiles and
/// how its threads shared the work; several get their rates side by side
/// (and two the ratio) and their p99s.
pub fn tree_cells(trees: &[Labelled<TreeResult>]) -> (Vec<String>, Vec<Vec<String>>) {
    use crate::util::units::{latency, ops_per_s, thousands};
    if let [tree] = trees {
        let header = [
            "phase", "ops", "ops/s", "mean", "p50", "p99", "p99.9", "p99.99", "max", "threads",
        ]
        .map(String::from)
        .to_vec();
        let rows = tree
            .phases
            .iter()
            .map(|p| {
                let least = p.threads.iter().map(|t| t.ops).min().unwrap_or(0);
                let most = p.threads.iter().map(|t| t.ops).max().unwrap_or(0);
                let threads = match (p.threads.len(), p.stonewalled) {
                    (_, true) => format!(
                        "cut at {}: {}-{} each, the slowest {} behind",
                        crate::util::units::format_duration(tree.spec.phase_time_s.unwrap_or(0.0)),
                        thousands(least),
                        thousands(most),
                        thousands(p.behind)
                    ),
                    (1, false) => "1".into(),
                    (n, false) => format!("{n}: {}-{} each", thousands(least), thousands(most)),
                };
                vec![
                    p.phase.to_string(),
                    thousands(p.ops),
                    ops_per_s(p.ops_per_s),
                    latency(p.lat_ns.mean),
                    latency(p.lat_ns.p50 as f64),
                    latency(p.lat_ns.p99 as f64),
                    latency(p.lat_ns.p99_9 as f64),
                    latency(p.lat_ns.p99_99 as f64),
                    latency(p.lat_ns.max as f64),
                    threads,
                ]
            })
            .collect();
        return (header, rows);
    }
    let mut header = vec!["phase".to_string()];
    header.extend(trees.iter().map(|t| format!("{} ops/s", t.system)));
    let ratio = trees.len() == 2;
    if ratio {
        header.push(format!("{}/{}", trees[1].system, trees[0].system));
    }
    header.extend(trees.iter().map(|t| format!("{} p99", t.system)));
    let phases = tree_phases(trees);
    let rows = phases
        .into_iter()
        .map(|phase| {
            let found: Vec<_> = trees.iter().map(|t| t.phase(phase)).collect();
            let mut row = vec![phase.to_string()];
            row.extend(
                found
                    .iter()
                    .map(|p| p.map_or("-".into(), |p| ops_per_s(p.ops_per_s))),
            );
            if ratio {
                row.push(match (found[0], found[1]) {
                    (Some(a), Some(b)) if a.ops_per_s > 0.0 => {
                        format!("{:.2}", b.ops_per_s / a.ops_per_s)
                    }
                    _ => "-".into(),
                });
            }
            row.extend(
                found
                    .iter()
                    .map(|p| p.map_or("-".into(), |p| latency(p.lat_ns.p99 as f64))),
            );
            row
        })
        .collect();
    (header, rows)
}

/// The phases any of `trees` ran, in the order phases run.
pub fn tree_phases(trees: &[Labelled<TreeResult>]) -> Vec<crate::spec::tree::TreePhase> {
    let all: std::collections::BTreeSet<_> = trees
        .iter()
        .flat_map(|t| &t.phases)
        .map(|p| p.phase)
        .collect();
    all.into_iter().collect()
}

/// "[system: ]fathom tree: depth 3 x width 10, 1,000 files a leaf
/// (1,000,000 files in 1,110 directories), 0 B each, 2 threads, shuffled,
/// in /data (ext4)"; what the file system said of it on a second line.
pub fn tree_caption(tree: &Labelled<TreeResult>, named: bool) -> String {
    use crate::util::units::{counted, format_bytes, thousands};
    let spec = &tree.spec;
    let size = match spec.file_size_min == spec.file_size_max {
        true => format_bytes(spec.file_size_min),
        false => format!(
            "{} to {}",
            format_bytes(spec.file_size_min),
            format_bytes(spec.file_size_max)
        ),
    };
    let mut text = format!(
        "{}fathom tree: depth {} x width {}, {} a leaf ({} in {}), {size} each, {}, {}{}, in {} ({})",
        if named {
            format!("{}: ", tree.system)
        } else {
            String::new()
        },
        spec.shape.depth,
        spec.shape.width,
        counted(spec.shape.files, "file"),
        counted(spec.shape.total_files(), "file"),
        match spec.shape.dirs() {
            0 => "one directory".to_string(),
            1 => "1 directory".to_string(),
            n => format!("{} directories", thousands(n)),
        },
        match spec.ranks {
            Some(n) if n > 1 && spec.shared_dir => format!(
                "{} a rank, {n} ranks sharing the tree",
                counted(spec.threads as u64, "thread")
            ),
            Some(n) if n > 1 => format!(
                "{} a rank, a tree for each of {n} ranks",
                counted(spec.threads as u64, "thread")
            ),
            _ => counted(spec.threads as u64, "thread"),
        },
        if spec.random {
            "shuffled"
        } else {
            "in the order made"
        },
        match spec.fsync {
            crate::spec::tree::TreeSync::None => String::new(),
            crate::spec::tree::TreeSync::File => ", each file fsynced".into(),
            crate::spec::tree::TreeSync::Dir => ", each leaf directory fsynced".into(),
        },
        spec.dir,
        tree.filesystem.as_deref().unwrap_or("unknown file system"),
    );
    let mut facts = Vec::new();
    match (tree.inodes_used, tree.inodes_made) {
        (Some(n), Some(made)) if n != made => facts.push(format!(
            "{} inodes used by the file system's count, {} made by the tree: other processes made or removed files meanwhile",
            thousands(n),
            thousands(made)
        )),
        (Some(n), _) => facts.push(format!("{} inodes used", thousands(n))),
        _ => {}
    }
    if let Some(b) = tree.leaf_dir_bytes {
        facts.push(format!("a leaf directory is {}", format_bytes(b)));
    }
    let cached = tree
        .phases
        .iter()
        .any(|p| matches!(p.phase, TreePhase::Stat | TreePhase::Read));
    if cached && !spec.drop_caches && tree.filesystem.as_deref() != Some("tmpfs") {
        facts.push(
            "stat and read may have been served from the kernel's caches (--drop-caches drops them before each phase)"
                .into(),
        );
    }
    if tree.kept {
        facts.push("the tree was kept (--leave)".into());
    }
    if let Some(f) = &tree.failure {
        facts.push(format!("ended early: {f}"));
    }
    if !facts.is_empty() {
        text.push_str(&format!("\n{}", facts.join("; ")));
    }
    text
}

/// "[system: ]fathom meta: 16 x 1024 files in /data (ext4), 0 bytes each".
pub fn meta_caption(meta: &Labelled<MetaResult>, named: bool) -> String {
    format!(
        "{}fathom meta: {}{} x 1024 files in {} ({}), {} bytes each{}",
        if named {
            format!("{}: ", meta.system)
        } else {
            String::new()
        },
        if meta.spec.block_size > 0 {
            format!(
                "block tests on {} in 8 KiB chunks, then ",
                crate::util::units::format_bytes(meta.spec.block_size)
            )
        } else {
            String::new()
        },
        meta.spec.files_k,
        meta.spec.dir,
        meta.filesystem.as_deref().unwrap_or("unknown file system"),
        meta.spec.file_size,
        if meta.spec.files_per_dir > 0 {
            format!(", {} per directory", meta.spec.files_per_dir)
        } else {
            String::new()
        }
    )
}

/// A streams workload as one table: per stream, each target's read, write
/// and flush figures; then all streams together. Shared by the text,
/// Markdown and HTML reports.
pub fn streams_cells(
    s: &Labelled<StreamsResult>,
    systems: bool,
) -> (Vec<String>, Vec<Vec<String>>) {
    let header = detail_header("stream");
    let group = if systems {
        format!("{}: {}", s.system, s.spec.name)
    } else {
        s.spec.name.clone()
    };
    let mut rows = Vec::new();
    let mut add =
        |stream: &str, target: &str, dir: &str, rate: f64, bw: Option<f64>, l: &LatencySummary| {
            rows.push(detail_row(stream, target, dir, rate, bw, l))
        };
    // fio's group_reporting: the group's totals only, as fio prints it.
    let grouped = s.streams.iter().any(|w| w.spec.group_reporting);
    for w in s.streams.iter().filter(|_| !grouped) {
        let stream = format!("{group}/{}", w.spec.name);
        for t in &w.targets {
            for (dir, d) in t.io.named() {
                if d.ios > 0 {
                    add(&stream, &t.name, dir, d.iops, Some(d.bw_bytes), &d.lat_ns);
                }
            }
            if let Some(sync) = t.sync.as_ref().filter(|s| s.count > 0) {
                add(&stream, &t.name, "sync", sync.rate, None, &sync.lat_ns);
            }
        }
    }
    let all = match grouped {
        true => "all streams (group_reporting)",
        false => "all streams",
    };
    for (dir, d) in s.total.named() {
        if d.ios > 0 {
            add(&group, all, dir, d.iops, Some(d.bw_bytes), &d.lat_ns);
        }
    }
    if let Some(sync) = s.sync.as_ref().filter(|s| s.count > 0) {
        add(&group, all, "sync", sync.rate, None, &sync.lat_ns);
    }
    (header, rows)
}

/// The columns of the detailed tables (one workload, or a streams workload):
/// what the row is (`first`), the target and direction, the rate, the
/// bandwidth and the latency percentiles.
pub fn detail_header(first: &str) -> Vec<String> {
    [
        first,
        "target",
        "dir",
        "IOPS",
        "bandwidth",
        "mean",
        "p50",
        "p99",
        "p99.9",
        "p99.99",
        "max",
    ]
    .map(String::from)
    .to_vec()
}

/// The detailed table of one workload: a row per target and direction,
/// flushes as a `sync` direction of their own (zone resets as `zone
/// reset`), and a `total` row when
/// there are several targets. Shared by the text, Markdown and HTML
/// reports.
pub fn detail_cells(
    workload: &Labelled<WorkloadResult>,
    systems: bool,
) -> (Vec<String>, Vec<Vec<String>>) {
    use crate::result::{DirectionPair, SyncResult};
    let label = if systems {
        format!("{}: {}", workload.system, workload.spec.label())
    } else {
        workload.spec.label()
    };
    let mut rows = Vec::new();
    let mut add =
        |name: &str, io: &DirectionPair, sync: &Option<SyncResult>, resets: &Option<SyncResult>| {
            for (dir, d) in io.named() {
                if d.ios > 0 {
                    rows.push(detail_row(
                        &label,
                        name,
                        dir,
                        d.iops,
                        Some(d.bw_bytes),
                        &d.lat_ns,
                    ));
                }
            }
            if let Some(s) = sync.as_ref().filter(|s| s.count > 0) {
                rows.push(detail_row(&label, name, "sync", s.rate, None, &s.lat_ns));
            }
            // Zone resets (--zonemode zbd) beside the I/O that needed them.
            if let Some(s) = resets.as_ref().filter(|s| s.count > 0) {
                rows.push(detail_row(
                    &label,
                    name,
                    "zone reset",
                    s.rate,
                    None,
                    &s.lat_ns,
                ));
            }
        };
    for target in &workload.targets {
        add(&target.name, &target.io, &target.sync, &target.zone_resets);
    }
    if workload.targets.len() > 1 {
        add(
            "total",
            &workload.total,
            &workload.sync,
            &workload.zone_resets,
        );
    }
    (detail_header("workload"), rows)
}

/// What each workload's writes held and how far they reduce, one line per
/// workload that wrote (a long sweep's are in the CSV).
/// What the tables of `workloads` do not show: how far what they wrote
/// reduces, how replays kept to their traces.
pub fn notes(workloads: &[Labelled<WorkloadResult>]) -> Vec<String> {
    let mut out = data_lines(workloads);
    for w in workloads {
        out.extend(replay_lines(w));
    }
    for w in workloads {
        if let Some(line) = steady_line(w) {
            out.push(format!("{}: {line}", w.spec.named()));
        }
    }
    for w in workloads {
        for line in priority_lines(w) {
            out.push(format!("{}: {line}", w.spec.named()));
        }
    }
    for w in workloads {
        if let Some(repeats) = &w.repeats {
            out.push(format!("{}: {}", w.spec.named(), repeats.describe()));
        }
    }
    for w in workloads {
        if let Some(limit) = &w.limited_by {
            out.push(format!("{}: limited by {limit}", w.spec.named()));
        }
    }
    out
}

/// What several runs cost in CPU, in a few words.
pub fn runs_line(workloads: &[Labelled<WorkloadResult>]) -> String {
    let per_io: Vec<f64> = workloads
        .iter()
        .map(|w| w.cpu.per_io_us)
        .filter(|us| *us > 0.0)
        .collect();
    let low = per_io.iter().copied().fold(f64::INFINITY, f64::min);
    let high = per_io.iter().copied().fold(0.0, f64::max);
    let cpu = match per_io.is_empty() {
        true => String::new(),
        false => format!(", CPU {low:.2} to {high:.2} µs per I/O"),
    };
    format!("{} runs{cpu}", workloads.len())
}

/// How many of a long sweep's workloads each thing limited, and which.
pub fn limits_line(workloads: &[Labelled<WorkloadResult>]) -> String {
    let mut by: Vec<(crate::result::limit::Limiter, Vec<String>)> = Vec::new();
    for w in workloads {
        let Some(limit) = &w.limited_by else { continue };
        let name = w.spec.name.clone();
        match by.iter_mut().find(|(l, _)| *l == limit.by) {
            Some((_, names)) => names.push(name),
            None => by.push((limit.by, vec![name])),
        }
    }
    if by.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = by
        .iter()
        .map(|(l, names)| {
            let shown = super::sections::abridged(names);
            format!("{} ×{} ({shown})", l.name(), names.len())
        })
        .collect();
    format!(
        "limited by: {} (the evidence: --output-format json or markdown)\n",
        parts.join("; ")
    )
}

/// What each drive under the targets counted itself during the run; a
/// drive that could not say is left to the JSON, which says why.
pub fn drive_lines(devices: &[crate::measure::drive::DeviceReport]) -> Vec<String> {
    use crate::util::units::format_bytes;
    devices
        .iter()
        .filter_map(|d| {
            let id = d.identity.as_ref()?;
            let after = d.after.as_ref()?;
            let mut said = Vec::new();
            if let Some(written) = d.host_written_bytes {
                let within = d.host_count_step_bytes.map_or(String::new(), |s| {
                    format!(" (each within {})", format_bytes(s))
                });
                said.push(format!(
                    "by its own count the host wrote {} and read {}{within}",
                    format_bytes(written),
                    d.host_read_bytes.map_or("?".into(), format_bytes)
                ));
            }
            if let Some(waf) = d.write_amplification {
                said.push(format!("write amplification {waf:.2}"));
            }
            if let Some(e) = &d.endurance {
                said.push(format!(
                    "rated endurance lasts {:.0} days at this rate",
                    e.days
                ));
            }
            if let Some(t) = after.temperature_c {
                said.push(format!("{t:.0} °C"));
            }
            if let Some(used) = after.percentage_used {
                said.push(format!("{used}% of its endurance used"));
            }
            if let Some(errors) = after.media_errors {
                said.push(format!("{errors} media errors"));
            }
            Some(format!(
                "drive {} ({}, serial {}, firmware {}): {}",
                d.name,
                id.model,
                id.serial,
                id.firmware,
                said.join("; ")
            ))
        })
        .collect()
}

/// With `--cmdprio`: per direction, the latency of the I/Os at their own
/// priority beside the others'.
pub fn priority_lines(w: &WorkloadResult) -> Vec<String> {
    use crate::util::units::{latency, thousands};
    let Some(cmdprio) = &w.spec.cmdprio else {
        return Vec::new();
    };
    let others = w
        .spec
        .ioprio
        .map_or("the default priority".to_string(), |p| p.to_string());
    w.total
        .named()
        .into_iter()
        .filter(|(_, d)| !d.by_priority.is_empty())
        .map(|(dir, d)| {
            let part = |own: bool| {
                d.by_priority
                    .iter()
                    .find(|p| p.cmdprio == own)
                    .map_or("none".to_string(), |p| {
                        format!(
                            "{} I/Os, p50 {}, p99 {}, p99.9 {}",
                            thousands(p.ios),
                            latency(p.lat_ns.p50 as f64),
                            latency(p.lat_ns.p99 as f64),
                            latency(p.lat_ns.p99_9 as f64)
                        )
                    })
            };
            format!(
                "{dir} at {} (--cmdprio {cmdprio}): {}; the others at {others}: {}",
                cmdprio.priority,
                part(true),
                part(false)
            )
        })
        .collect()
}

/// How a run with `--steady-state` ended: steady at some second, or not
/// steady within its runtime.
pub fn steady_line(w: &WorkloadResult) -> Option<String> {
    let s = w.steady_state.as_ref()?;
    let c = &s.criterion;
    let what = match (c.metric, c.slope) {
        (crate::measure::steady::SteadyMetric::Iops, false) => "IOPS",
        (crate::measure::steady::SteadyMetric::Lat, false) => "p99 latency",
        (crate::measure::steady::SteadyMetric::Iops, true) => "the slope of IOPS",
        (crate::measure::steady::SteadyMetric::Lat, true) => "the slope of p99 latency",
        (crate::measure::steady::SteadyMetric::MeanLat, false) => "mean latency",
        (crate::measure::steady::SteadyMetric::MeanLat, true) => "the slope of mean latency",
    };
    let limit = match (c.absolute, c.slope) {
        (false, false) => format!("within {}% of their mean", c.band_pct),
        (true, false) => format!("within {} of their mean", c.band_pct),
        (false, true) => format!("under {}% of the mean a second", c.band_pct),
        (true, true) => format!("under {} a second", c.band_pct),
    };
    Some(match s.at_s {
        Some(at) if s.reached => format!(
            "steady at {at:.0} s: {what} {limit} over the last {} s (--steady-state {c}), so the run ended there",
            c.window_s
        ),
        _ => format!(
            "not steady within the run: {what} never stayed {limit} for {} s (--steady-state {c})",
            c.window_s
        ),
    })
}

/// A replay's own figures: the trace, how late the target made it, and the
/// latency the trace recorded beside the one replayed.
pub fn replay_lines(w: &WorkloadResult) -> Vec<String> {
    use crate::util::units::{latency, thousands};
    let (Some(spec), Some(r)) = (&w.spec.replay, &w.replay) else {
        return Vec::new();
    };
    // What was played, and of how much: a run that ended first played
    // part of the trace.
    let cut = r.issued_ios.filter(|&n| n < r.trace_ios);
    let span = if cut.is_some() {
        w.runtime_s
    } else {
        r.trace_span_s
    };
    let played = match cut {
        Some(n) => format!(
            "{} of its {} I/Os played (the run ended first)",
            thousands(n),
            thousands(r.trace_ios)
        ),
        None => format!("{} I/Os", thousands(r.trace_ios)),
    };
    let mut lines = vec![match spec.speed {
        Some(_) => format!(
            "replay of {} ({}) at {}: {played} over {}, {} issued more than 1 ms after due (the worst {} late)",
            spec.trace_name(),
            spec.format,
            spec.pace(),
            crate::util::units::format_duration(span),
            thousands(r.late_ios),
            latency(r.worst_lag_ns as f64)
        ),
        None => format!(
            "replay of {} ({}) as fast as possible at depth {}: {played} in order",
            spec.trace_name(),
            spec.format,
            w.spec.iodepth,
        ),
    }];
    for ((dir, replayed), (_, original)) in w.total.named().into_iter().zip(r.original.named()) {
        if let Some(o) = original.filter(|_| replayed.ios > 0) {
            let now = replayed.sched_lat_ns.unwrap_or(replayed.lat_ns);
            lines.push(format!(
                "{dir} latency, replayed against recorded: p50 {} against {}, p99 {} against {}",
                latency(now.p50 as f64),
                latency(o.p50 as f64),
                latency(now.p99 as f64),
                latency(o.p99 as f64)
            ));
        }
    }
    lines
}

pub fn data_lines(workloads: &[Labelled<WorkloadResult>]) -> Vec<String> {
    const MAX: usize = 8;
    let wrote: Vec<_> = workloads.iter().filter(|w| w.data.is_some()).collect();
    if wrote.len() > MAX {
        return vec![format!(
            "{} workloads wrote: how far each one's data reduces is in the CSV (data_compress_zstd, data_dedupe)",
            wrote.len()
        )];
    }
    wrote
        .iter()
        .filter_map(|w| {
            let d = w.data.as_ref()?;
            Some(format!(
                "{}: {}",
                w.spec.title(),
                w.spec.content.describe(d)
            ))
        })
        .collect()
}

/// Columns from here on in a detailed table are figures.
pub const DETAIL_FIRST_FIGURE: usize = 3;

/// One row of a detailed table; flushes have a rate but no bandwidth.
pub fn detail_row(
    name: &str,
    target: &str,
    dir: &str,
    rate: f64,
    bw: Option<f64>,
    l: &LatencySummary,
) -> Vec<String> {
    use crate::util::units::{bandwidth, ops_per_s};
    let mut row = vec![
        name.to_string(),
        target.to_string(),
        dir.to_string(),
        ops_per_s(rate),
        bw.map_or("-".into(), bandwidth),
    ];
    row.extend(tail_cells(l));
    row
}

/// Mean, p50, p99, p99.9, p99.99 and max: the tails every detailed table
/// shows.
pub fn tail_cells(l: &LatencySummary) -> [String; 6] {
    use crate::util::units::latency;
    [
        latency(l.mean),
        latency(l.p50 as f64),
        latency(l.p99 as f64),
        latency(l.p99_9 as f64),
        latency(l.p99_99 as f64),
        latency(l.max as f64),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::test_support::{direction, empty_target, empty_workload};

    /// A workload `name` doing `rw` at `bs`/`iodepth` on target "d", with
    /// one read or write measured.
    fn workload(name: &str, rw: RwMode, bs: u64, iodepth: u32) -> WorkloadResult {
        let mut w = empty_workload();
        w.spec.name = name.into();
        w.spec.rw = rw;
        w.spec.bs = bs;
        w.spec.iodepth = iodepth;
        let mut t = empty_target("d");
        let done = direction(&[1000, 2000], 1.0, &[2]);
        if rw.writes(100) {
            t.io.write = done;
        } else {
            t.io.read = done;
        }
        w.targets = vec![t];
        w
    }

    fn table(ws: &[WorkloadResult]) -> SweepTable {
        let labelled: Vec<Labelled<WorkloadResult>> = ws
            .iter()
            .map(|result| Labelled {
                system: "s",
                result,
            })
            .collect();
        build(&labelled, false)
    }

    #[test]
    fn a_desktop_benchmark_is_one_row_per_test_in_its_order_read_beside_write() {
        let mut ws = Vec::new();
        for (test, seq, bs, qd) in [
            ("SEQ1M-Q8T1", true, 1 << 20, 8),
            ("RND4K-Q32T1", false, 4096, 32),
            ("RND4K-Q1T1", false, 4096, 1),
        ] {
            for (dir, rw) in [
                ("read", if seq { RwMode::Read } else { RwMode::RandRead }),
                (
                    "write",
                    if seq {
                        RwMode::Write
                    } else {
                        RwMode::RandWrite
                    },
                ),
            ] {
                ws.push(workload(&format!("{test}-{dir}"), rw, bs, qd));
            }
        }
        let t = table(&ws);
        assert!(t.paired_rw);
        assert_eq!(t.knobs[0], "test");
        let tests: Vec<&str> = t.rows.iter().map(|r| r.keys[0].as_str()).collect();
        assert_eq!(tests, ["SEQ1M-Q8T1", "RND4K-Q32T1", "RND4K-Q1T1"]);
        assert!(t.rows.iter().all(|r| r.read.is_some() && r.write.is_some()));
        // Decimal MB/s, as desktop benchmarks give it, and no MiB/s: one
        // unit family a table.
        let (header, rows) = cells(&t);
        let mb = header.iter().position(|h| h == "read MB/s").expect("MB/s");
        assert!(!header.iter().any(|h| h.ends_with("MiB/s")), "{header:?}");
        let bytes = t.rows[0].read.unwrap().bw_bytes;
        assert_eq!(rows[0][mb], format!("{:.1}", bytes / 1e6));
    }

    #[test]
    fn names_a_sweep_spells_out_from_its_knobs_are_not_a_column() {
        let ws: Vec<WorkloadResult> = [
            (RwMode::RandRead, "randread"),
            (RwMode::RandWrite, "randwrite"),
        ]
        .into_iter()
        .flat_map(|(rw, name)| {
            [1, 32].map(|qd| workload(&format!("sas-{name}-4k-qd{qd}"), rw, 4096, qd))
        })
        .collect();
        let t = table(&ws);
        assert_eq!(t.knobs, ["iodepth"]);
        assert_eq!(t.rows.len(), 2);
    }

    #[test]
    fn test_names_drop_the_direction_and_the_sweep_point() {
        assert_eq!(test_name("SEQ1M-Q8T1-write"), "SEQ1M-Q8T1");
        assert_eq!(test_name("run bs=4k iodepth=1"), "run");
        assert_eq!(test_name("uncached"), "uncached");
        assert_eq!(test_name("read"), "read");
    }
}
