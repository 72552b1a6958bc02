//! `fathom compare A B`: the same results of two files side by side, with
//! the ratio B/A; for workloads, each change as `fathom check` judges it
//! (`result::change`), rendered here and decided there.

use super::System;
use crate::result::capacity::CapacityResult;
use crate::result::certify::{CertifyResult, StreamInterval, THRESHOLDS_MS};
use crate::result::change::{self as judge, Bootstrap, Figure};
use crate::result::kind::{Kind, OneKind, Visit};
use crate::result::meta::MetaResult;
use crate::result::object::ObjectResult;
use crate::result::pts::PtsResult;
use crate::result::streams::StreamsResult;
use crate::result::train::TrainResult;
use crate::result::tree::TreeResult;
use crate::result::{Document, RunResult, WorkloadResult};
use crate::util::units::{counted, latency, thousands};
use comfy_table::Table;
use comfy_table::presets::UTF8_FULL_CONDENSED;

/// What `compare` found: the rendered tables and how many results of A
/// had a counterpart in B.
pub struct Comparison {
    pub text: String,
    pub matched: usize,
    /// Results of A that B does not have.
    pub unmatched: Vec<String>,
}

/// What a result is called when matching: a workload by its name and
/// label, the rest by kind and name.
fn described(result: &RunResult) -> String {
    result.kind().listed()
}

/// Why two files have nothing to compare, in a few lines: what each holds
/// (the first few of each) and the pairs whose names come closest, which
/// is usually a knob that differs (a depth, a block size, a label).
pub fn nothing_in_common(a: &System, b: &System) -> String {
    const SHOWN: usize = 5;
    let names = |s: &System| -> Vec<String> {
        super::sections::distinct(s.document.results.iter().map(described))
    };
    let (na, nb) = (names(a), names(b));
    let listing = |label: &str, names: &[String]| -> String {
        let more = names.len().saturating_sub(SHOWN);
        let mut line = format!(
            "  {label} holds {}: {}",
            names.len(),
            names[..names.len().min(SHOWN)].join(", ")
        );
        if more > 0 {
            line.push_str(&format!(" and {more} more"));
        }
        line
    };
    let mut pairs: Vec<(f64, &String, &String)> = na
        .iter()
        .flat_map(|x| nb.iter().map(move |y| (strsim::jaro_winkler(x, y), x, y)))
        .collect();
    pairs.sort_by(|p, q| q.0.total_cmp(&p.0));
    let mut used: Vec<&String> = Vec::new();
    let mut closest: Vec<String> = Vec::new();
    for (_, x, y) in pairs {
        if closest.len() == 3 {
            break;
        }
        if !used.contains(&x) && !used.contains(&y) {
            used.extend([x, y]);
            closest.push(format!("{x} and {y}"));
        }
    }
    let mut out = format!(
        "nothing to compare: no result of {} has a counterpart of the same name in {}\n",
        a.label, b.label
    );
    out.push_str(&listing(&a.label, &na));
    out.push('\n');
    out.push_str(&listing(&b.label, &nb));
    if !closest.is_empty() {
        out.push_str(&format!("\n  closest: {}", closest.join("; ")));
    }
    out
}

/// How `compare` lays out its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Text,
    Markdown,
    Csv,
}

impl Layout {
    /// The layout of an output format, if compare has one for it.
    pub fn of(format: super::OutputFormat) -> Option<Layout> {
        match format {
            super::OutputFormat::Text => Some(Layout::Text),
            super::OutputFormat::Markdown => Some(Layout::Markdown),
            super::OutputFormat::Csv => Some(Layout::Csv),
            _ => None,
        }
    }
}

/// A table's heading and rows as text.
fn cells(t: &Table) -> (Vec<String>, Vec<Vec<String>>) {
    let header = t
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect())
        .unwrap_or_default();
    let rows = t
        .row_iter()
        .map(|r| r.cell_iter().map(|c| c.content()).collect())
        .collect();
    (header, rows)
}

/// One table as `layout` draws it, the text no wider than `fit` when
/// given. Figures are right-aligned, words (targets, directions, "noise
/// unknown") left as they read.
fn render(t: &mut Table, layout: Layout, fit: Option<usize>) -> String {
    let (header, rows) = cells(t);
    let figures: Vec<usize> = (1..header.len())
        .filter(|&c| {
            rows.iter().all(|row| {
                row.get(c).is_none_or(|text| {
                    text.is_empty()
                        || text.starts_with(|ch: char| ch.is_ascii_digit() || "+-−".contains(ch))
                })
            })
        })
        .collect();
    match layout {
        Layout::Text => {
            let right: Vec<String> = figures.iter().map(|&c| header[c].clone()).collect();
            let (table, left_out) =
                super::fit::table(header, rows, fit, |h| right.iter().any(|f| f == h));
            match left_out {
                Some(line) => format!("{table}\n{line}\n"),
                None => format!("{table}\n"),
            }
        }
        Layout::Markdown => {
            for &c in &figures {
                if let Some(col) = t.column_mut(c) {
                    col.set_cell_alignment(comfy_table::CellAlignment::Right);
                }
            }
            t.load_style(comfy_table::presets::ASCII_MARKDOWN);
            // A renderer aligns by the rule under the heading, not by the
            // padding: figures' columns end theirs with `:`.
            let drawn = t.to_string();
            let mut lines: Vec<String> = drawn.lines().map(str::to_string).collect();
            if let Some(rule) = lines.get_mut(1) {
                *rule = rule
                    .split('|')
                    .enumerate()
                    .map(|(i, seg)| match i.checked_sub(1) {
                        Some(c) if figures.contains(&c) && seg.ends_with('-') => {
                            format!("{}:", &seg[..seg.len() - 1])
                        }
                        _ => seg.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("|");
            }
            format!("{}\n\n", lines.join("\n"))
        }
        Layout::Csv => {
            let quote = |s: &str| {
                if s.contains([',', '"', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s.to_string()
                }
            };
            let mut out = String::new();
            for row in std::iter::once(header).chain(rows) {
                let cells: Vec<String> = row.iter().map(|c| quote(c)).collect();
                out.push_str(&cells.join(","));
                out.push('\n');
            }
            out.push('\n');
            out
        }
    }
}

/// The tables `compare` fills, one per kind of result.
struct Tables {
    workloads: Table,
    tree: Table,
    objects: Table,
    train: Table,
    meta: Table,
    certify: Table,
    pts: Table,
    capacity: Table,
}

impl Tables {
    fn new() -> Tables {
        Tables {
            workloads: table(&[
                "workload",
                "target",
                "dir",
                "IOPS A",
                "IOPS B",
                "B/A",
                "p99 A",
                "p99 B",
                "p99 B/A",
                "IOPS change",
                "p99 change",
            ]),
            tree: table(&[
                "tree phase",
                "ops/s A",
                "ops/s B",
                "B/A",
                "p99 A",
                "p99 B",
                "p99 B/A",
                "rate change",
                "p99 change",
            ]),
            objects: table(&[
                "object op",
                "ops/s A",
                "ops/s B",
                "B/A",
                "p99 A",
                "p99 B",
                "p99 B/A",
                "rate change",
                "p99 change",
            ]),
            train: table(&[
                "train",
                "figure A",
                "figure B",
                "B/A",
                "p99 A",
                "p99 B",
                "p99 B/A",
                "change",
                "p99 change",
            ]),
            meta: table(&[
                "operation",
                "rate A",
                "rate B",
                "B/A",
                "p99 A",
                "p99 B",
                "p99 B/A",
                "rate change",
                "p99 change",
            ]),
            certify: table(&[
                "profile",
                "stream",
                "share",
                "worst A",
                "worst B",
                "limit",
                "IOPS A",
                "IOPS B",
                "verdict A",
                "verdict B",
            ]),
            pts: table(&["pts cell", "steady A", "steady B", "B/A"]),
            capacity: table(&[
                "workload",
                "objective",
                "answer A",
                "answer B",
                "B/A",
                "knee A",
                "knee B",
                "change",
            ]),
        }
    }
}

/// The group of streams in `doc` that fio would report as one job named
/// `name` (`group_reporting`: the first stream's job name), as that job.
fn grouped_as_fio(doc: &crate::result::Document, name: &str) -> Option<WorkloadResult> {
    doc.results
        .iter()
        .filter_map(RunResult::get::<StreamsResult>)
        .filter(|s| s.streams.iter().any(|w| w.spec.group_reporting))
        .find_map(|s| {
            s.as_one_workload()
                .filter(|one| one.spec.fio_jobname() == name)
        })
}

/// Fills `t` with `result` beside its counterpart in `b`; what `result` is
/// called when `b` has none.
fn counterpart(
    result: &RunResult,
    b: &System,
    t: &mut Tables,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let mut rows = Counterpart {
        b: &b.document,
        t,
        notes,
        outcome: Ok(()),
    };
    result.visit(&mut rows);
    rows.outcome
}

/// The first result of kind `T` in `doc` that `same` accepts.
fn same_in<T: OneKind>(doc: &Document, same: impl Fn(&T) -> bool) -> Option<&T> {
    doc.results
        .iter()
        .filter_map(RunResult::get::<T>)
        .find(|r| same(r))
}

/// Each kind's rows beside its counterpart in `b`.
struct Counterpart<'b, 't> {
    b: &'b Document,
    t: &'t mut Tables,
    notes: &'t mut Vec<String>,
    outcome: Result<(), String>,
}

impl<'a> Visit<'a> for Counterpart<'_, '_> {
    fn workload(&mut self, wa: &'a WorkloadResult) {
        let same = self
            .b
            .workloads()
            .find(|w| w.spec.name == wa.spec.name && w.spec.label() == wa.spec.label());
        if let Some(wb) = same {
            workload_rows(&mut self.t.workloads, self.notes, &wa.spec.label(), wa, wb);
            return;
        }
        // fio's one job of a group_reporting group, against the group.
        self.outcome = match grouped_as_fio(self.b, &wa.spec.name) {
            Some(group) => {
                workload_rows(&mut self.t.workloads, self.notes, &wa.spec.name, wa, &group);
                Ok(())
            }
            None => Err(wa.spec.named()),
        };
    }

    fn meta(&mut self, ma: &'a MetaResult) {
        self.outcome = same_in::<MetaResult>(self.b, |_| true)
            .map(|mb| meta_rows(&mut self.t.meta, self.notes, ma, mb))
            .ok_or_else(|| "metadata run".to_string());
    }

    fn certify(&mut self, ca: &'a CertifyResult) {
        self.outcome = same_in::<CertifyResult>(self.b, |c| c.profile.name == ca.profile.name)
            .map(|cb| certify_rows(&mut self.t.certify, ca, cb))
            .ok_or_else(|| format!("certification {}", ca.profile.name));
    }

    fn streams(&mut self, sa: &'a StreamsResult) {
        let (t, notes) = (&mut *self.t, &mut *self.notes);
        self.outcome = same_in::<StreamsResult>(self.b, |s| s.spec.name == sa.spec.name)
            .map(|sb| {
                for wa in &sa.streams {
                    // Streams are matched by name.
                    if let Some(wb) = sb.streams.iter().find(|w| w.spec.name == wa.spec.name) {
                        let name = format!("{}/{}", sa.spec.name, wa.spec.name);
                        workload_rows(&mut t.workloads, notes, &name, wa, wb);
                    }
                }
            })
            .or_else(|| {
                // The group as fio reports it, against fio's one job.
                let wa = sa
                    .as_one_workload()
                    .filter(|_| sa.streams.iter().any(|w| w.spec.group_reporting))?;
                let name = wa.spec.fio_jobname();
                let wb = self.b.workloads().find(|w| w.spec.name == name)?;
                workload_rows(&mut t.workloads, notes, name, &wa, wb);
                Some(())
            })
            .ok_or_else(|| format!("streams workload {}", sa.spec.name));
    }

    fn capacity(&mut self, ca: &'a CapacityResult) {
        self.outcome = same_in::<CapacityResult>(self.b, |c| {
            c.spec.name == ca.spec.name && c.search.slo == ca.search.slo
        })
        .map(|cb| capacity_row(&mut self.t.capacity, ca, cb))
        .ok_or_else(|| format!("capacity search of {} for {}", ca.spec.name, ca.search.slo));
    }

    fn tree(&mut self, ta: &'a TreeResult) {
        self.outcome = same_in::<TreeResult>(self.b, |t| t.spec.shape == ta.spec.shape)
            .map(|tb| tree_rows(&mut self.t.tree, self.notes, ta, tb))
            .ok_or_else(|| ta.described());
    }

    fn pts(&mut self, pa: &'a PtsResult) {
        self.outcome = same_in::<PtsResult>(self.b, |p| p.spec.test == pa.spec.test)
            .map(|pb| pts_rows(&mut self.t.pts, pa, pb))
            .ok_or_else(|| format!("pts {}", pa.spec.test));
    }

    fn object(&mut self, oa: &'a ObjectResult) {
        self.outcome = same_in::<ObjectResult>(self.b, |o| o.spec.name == oa.spec.name)
            .map(|ob| object_rows(&mut self.t.objects, self.notes, oa, ob))
            .ok_or_else(|| format!("object-store run {}", oa.spec.name));
    }

    fn train(&mut self, ta: &'a TrainResult) {
        self.outcome = same_in::<TrainResult>(self.b, |tb| tb.named() == ta.named())
            .map(|tb| train_rows(&mut self.t.train, self.notes, ta, tb))
            .ok_or_else(|| format!("train {}", ta.named()));
    }
}

/// Every result of A beside its counterpart in B: workloads by name and
/// shape, metadata runs by operation, certifications by profile; text no
/// wider than `fit` when given (a terminal's columns).
pub fn compare(a: &System, b: &System, layout: Layout, fit: Option<usize>) -> Comparison {
    let fit = fit.filter(|_| layout == Layout::Text);
    let mut t = Tables::new();
    let mut matched = 0;
    let mut unmatched: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for result in &a.document.results {
        match counterpart(result, b, &mut t, &mut notes) {
            Ok(()) => matched += 1,
            Err(what) => unmatched.push(what),
        }
    }
    let mut text = String::new();
    for t in [
        &mut t.workloads,
        &mut t.meta,
        &mut t.tree,
        &mut t.objects,
        &mut t.train,
        &mut t.certify,
        &mut t.capacity,
        &mut t.pts,
    ] {
        if t.row_count() > 0 {
            text.push_str(&render(t, layout, fit));
        }
    }
    let (da, db) = (&a.document, &b.document);
    // The summary is prose in text and markdown; csv holds tables only.
    if layout != Layout::Csv {
        text.push_str(&format!(
            "{} in both; A: {} ({}, {}), B: {} ({}, {})\n",
            crate::util::units::counted(matched as u64, "result"),
            a.label,
            da.started_at,
            da.host.hostname,
            b.label,
            db.started_at,
            db.host.hostname
        ));
        for u in &unmatched {
            text.push_str(&format!("only in A: {u}\n"));
        }
        let host = crate::result::settings::of_documents(da, db);
        if !host.is_empty() {
            text.push_str(&format!(
                "note: A and B were measured with other settings: {}\n",
                host.join(", ")
            ));
        }
        for note in &notes {
            text.push_str(&format!("note: {note}\n"));
        }
    }
    Comparison {
        text: crate::util::terminal::wrap_at(text, fit),
        matched,
        unmatched,
    }
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_header(header.to_vec());
    t
}

fn ratio(a: f64, b: f64) -> String {
    if a > 0.0 {
        format!("{:.3}", b / a)
    } else {
        "-".into()
    }
}

/// One row of the workloads' table: what it is, each side's rate and p99
/// with their ratios, and the changes judged.
fn rate_row(
    table: &mut Table,
    [name, target, dir]: [&str; 3],
    (rate_a, p99_a): (f64, u64),
    (rate_b, p99_b): (f64, u64),
    [rate_change, p99_change]: [String; 2],
) {
    table.add_row(vec![
        name.to_string(),
        target.to_string(),
        dir.to_string(),
        thousands(rate_a.round() as u64),
        thousands(rate_b.round() as u64),
        ratio(rate_a, rate_b),
        latency(p99_a as f64),
        latency(p99_b as f64),
        ratio(p99_a as f64, p99_b as f64),
        rate_change,
        p99_change,
    ]);
}

/// The rows of one pair of targets (or of totals): each direction's IOPS
/// and p99 side by side, with the change judged on `judged_on`.
fn io_rows(
    table: &mut Table,
    notes: &mut Vec<String>,
    name: &str,
    target: &str,
    (wa, wb): (&WorkloadResult, &WorkloadResult),
    (ia, ib): (&crate::result::DirectionPair, &crate::result::DirectionPair),
    (shown_a, shown_b): (&crate::result::DirectionPair, &crate::result::DirectionPair),
) {
    let sides = ["A", "B"];
    let judged = judge::compare_tables(&[wa], &[ia], wb, ib, sides, Bootstrap::default());
    for note in judged.iter().flat_map(|d| &d.notes) {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    // A figure not judged (too few seconds, no histograms) has a note
    // saying why.
    let change = |dir: &str, figure: Figure| -> String {
        judged
            .iter()
            .find(|d| d.direction == dir)
            .and_then(|d| d.changes.iter().find(|c| c.figure == figure))
            .map_or("noise unknown".into(), super::change::judged)
    };
    for ((dir, da), (_, db)) in shown_a.named().into_iter().zip(shown_b.named()) {
        if da.ios == 0 || db.ios == 0 {
            continue;
        }
        rate_row(
            table,
            [name, target, dir],
            (da.iops, da.lat_ns.p99),
            (db.iops, db.lat_ns.p99),
            [change(dir, Figure::Iops), change(dir, Figure::P99)],
        );
    }
}

/// Rows of two runs of one workload, the first column `name`; what the
/// judgement of their changes must say beside them goes to `notes`.
fn workload_rows(
    table: &mut Table,
    notes: &mut Vec<String>,
    name: &str,
    wa: &WorkloadResult,
    wb: &WorkloadResult,
) {
    let engines = crate::result::settings::of_engines(&wa.spec, &wb.spec);
    if !engines.is_empty() {
        let said = format!(
            "{name}: A and B ran with other settings: {}",
            engines.join(", ")
        );
        if !notes.contains(&said) {
            notes.push(said);
        }
    }
    // Targets that do not pair one to one (fio's group_reporting job is one
    // target, the clones fathom ran one each): the workloads' totals, on
    // one row, never one clone against the whole group.
    if wa.targets.len() != wb.targets.len() {
        let label = format!(
            "{} / {} (totals)",
            counted(wa.targets.len() as u64, "target"),
            counted(wb.targets.len() as u64, "target")
        );
        let totals = (&wa.total, &wb.total);
        io_rows(table, notes, name, &label, (wa, wb), totals, totals);
        return;
    }
    for (i, ta) in wa.targets.iter().enumerate() {
        let Some(tb) = wb
            .targets
            .iter()
            .find(|t| t.name == ta.name)
            .or(wb.targets.get(i))
        else {
            continue;
        };
        // A workload's total holds per-second histograms, its targets'
        // tables only counts: one target each is judged by its total.
        let judged_on = match wa.targets.len() {
            1 => (&wa.total, &wb.total),
            _ => (&ta.io, &tb.io),
        };
        let target = if ta.name == tb.name {
            ta.name.clone()
        } else {
            format!("{} / {}", ta.name, tb.name)
        };
        io_rows(
            table,
            notes,
            name,
            &target,
            (wa, wb),
            judged_on,
            (&ta.io, &tb.io),
        );
        // Flushes: their rate and latency (the commit latency of a log).
        if let (Some(sa), Some(sb)) = (&ta.sync, &tb.sync)
            && sa.count > 0
            && sb.count > 0
        {
            rate_row(
                table,
                [name, &ta.name, "sync"],
                (sa.rate, sa.lat_ns.p99),
                (sb.rate, sb.lat_ns.p99),
                ["-".into(), "-".into()],
            );
        }
    }
}

/// Each part of B against A as `fathom check` judges it, its notes added
/// to `notes`: a part's figure's change in a few words, or "noise unknown"
/// where it was not judged (too few seconds, an older result).
fn judged_parts(a: &dyn Kind, b: &dyn Kind, notes: &mut Vec<String>) -> Judged {
    let judged = judge::compare_sides(&[a], b, ["A", "B"], Bootstrap::default());
    for note in judged.iter().flat_map(|d| &d.notes) {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    Judged(judged)
}

struct Judged(Vec<judge::DirectionChange>);

impl Judged {
    fn change(&self, part: &str, figure: Figure) -> String {
        self.0
            .iter()
            .find(|d| d.direction == part)
            .and_then(|d| d.changes.iter().find(|c| c.figure == figure))
            .map_or("noise unknown".into(), super::change::judged)
    }
}

/// A row of operations a second and p99 latency, A's and B's, each
/// with B's ratio to A, and the part's judged changes.
fn rate_and_p99(name: &str, rates: (f64, f64), p99s: (u64, u64), judged: &Judged) -> Vec<String> {
    vec![
        name.to_string(),
        crate::util::units::ops_per_s(rates.0),
        crate::util::units::ops_per_s(rates.1),
        ratio(rates.0, rates.1),
        latency(p99s.0 as f64),
        latency(p99s.1 as f64),
        ratio(p99s.0 as f64, p99s.1 as f64),
        judged.change(name, Figure::Iops),
        judged.change(name, Figure::P99),
    ]
}

/// The phases both tree runs measured.
fn tree_rows(table: &mut Table, notes: &mut Vec<String>, a: &TreeResult, b: &TreeResult) {
    let judged = judged_parts(a, b, notes);
    for pa in &a.phases {
        let Some(pb) = b.phase(pa.phase) else {
            continue;
        };
        table.add_row(rate_and_p99(
            pa.phase.name(),
            (pa.ops_per_s, pb.ops_per_s),
            (pa.lat_ns.p99, pb.lat_ns.p99),
            &judged,
        ));
    }
}

/// The operations both object-store runs made.
fn object_rows(table: &mut Table, notes: &mut Vec<String>, a: &ObjectResult, b: &ObjectResult) {
    let judged = judged_parts(a, b, notes);
    for oa in &a.ops {
        let Some(ob) = b.op(oa.op) else {
            continue;
        };
        table.add_row(rate_and_p99(
            oa.op.name(),
            (oa.ops_per_s, ob.ops_per_s),
            (oa.lat_ns.p99, ob.lat_ns.p99),
            &judged,
        ));
    }
}

/// Two training runs: AU, then samples a second with the batch wait's
/// p99; two checkpoint runs: each phase's bytes a second with its files'
/// p99.
fn train_rows(table: &mut Table, notes: &mut Vec<String>, a: &TrainResult, b: &TrainResult) {
    use crate::util::units::format_bytes;
    match (a, b) {
        (TrainResult::Training(ta), TrainResult::Training(tb)) => {
            let judged = judged_parts(a, b, notes);
            let au = |t: &crate::result::train::TrainingResult| format!("{:.1}%", t.au * 100.0);
            table.add_row(vec![
                "AU".into(),
                au(ta),
                au(tb),
                ratio(ta.au, tb.au),
                String::new(),
                String::new(),
                String::new(),
                judged.change("samples", Figure::Au),
                String::new(),
            ]);
            let mut row = rate_and_p99(
                "samples/s (batch wait)",
                (ta.samples_per_s, tb.samples_per_s),
                (ta.batch_wait.lat_ns.p99, tb.batch_wait.lat_ns.p99),
                &judged,
            );
            row[7] = judged.change("samples", Figure::Iops);
            row[8] = judged.change("batch wait", Figure::P99);
            table.add_row(row);
        }
        (TrainResult::Checkpoint(ca), TrainResult::Checkpoint(cb)) => {
            for (name, pa, pb) in [
                ("checkpoint write", &ca.write, &cb.write),
                ("checkpoint read", &ca.read, &cb.read),
            ] {
                let (Some(pa), Some(pb)) = (pa, pb) else {
                    continue;
                };
                table.add_row(vec![
                    name.into(),
                    format!("{}/s", format_bytes(pa.bytes_per_s as u64)),
                    format!("{}/s", format_bytes(pb.bytes_per_s as u64)),
                    ratio(pa.bytes_per_s, pb.bytes_per_s),
                    latency(pa.file.lat_ns.p99 as f64),
                    latency(pb.file.lat_ns.p99 as f64),
                    ratio(pa.file.lat_ns.p99 as f64, pb.file.lat_ns.p99 as f64),
                    "noise unknown".into(),
                    "noise unknown".into(),
                ]);
            }
        }
        _ => {}
    }
}

fn meta_rows(table: &mut Table, notes: &mut Vec<String>, a: &MetaResult, b: &MetaResult) {
    let judged = judged_parts(a, b, notes);
    for oa in &a.ops {
        let Some(ob) = b.ops.iter().find(|o| o.name == oa.name) else {
            continue;
        };
        let part = oa.name.replace('_', " ");
        table.add_row(vec![
            part.clone(),
            super::table::meta_rate(oa),
            super::table::meta_rate(ob),
            ratio(oa.rate().0, ob.rate().0),
            latency(oa.lat_ns.p99 as f64),
            latency(ob.lat_ns.p99 as f64),
            ratio(oa.lat_ns.p99 as f64, ob.lat_ns.p99 as f64),
            judged.change(&part, Figure::Iops),
            judged.change(&part, Figure::P99),
        ]);
    }
}

/// Per stream and limited threshold: the worst judged interval of each.
/// Two searches of one workload for one objective: their answers, knees,
/// and whether the answers differ by more than the searches' precision.
/// The steady-state figure of each cell both tests ran: IOPS, MiB/s for
/// throughput, mean latency for latency.
fn pts_rows(
    table: &mut Table,
    a: &crate::result::pts::PtsResult,
    b: &crate::result::pts::PtsResult,
) {
    let figure = crate::report::pts::steady_figure;
    let bs = b.steady_cells();
    for ca in a.steady_cells() {
        if let Some(cb) = bs.iter().find(|c| c.label() == ca.label()) {
            let (x, y) = (figure(a.spec.test, &ca), figure(b.spec.test, cb));
            table.add_row(vec![
                format!("{} {}", a.spec.test, ca.label()),
                crate::report::pts::format_figure(a.spec.test, x),
                crate::report::pts::format_figure(b.spec.test, y),
                ratio(x, y),
            ]);
        }
    }
}

fn capacity_row(table: &mut Table, a: &CapacityResult, b: &CapacityResult) {
    let rate =
        |v: Option<f64>| v.map_or("-".into(), |v| format!("{}/s", thousands(v.round() as u64)));
    let change = match (a.answer_iops, b.answer_iops) {
        (Some(x), Some(y)) => {
            let change = (y / x - 1.0) * 100.0;
            // Each answer lies within its precision below the true one.
            let precision = a.search.precision.max(b.search.precision) * 100.0;
            if change.abs() > precision {
                format!("{change:+.1}% beyond the search precision (±{precision:.0}%)")
            } else {
                format!("within the search precision (±{precision:.0}%)")
            }
        }
        _ => "-".into(),
    };
    table.add_row(vec![
        a.spec.name.clone(),
        a.search.slo.to_string(),
        rate(a.answer_iops),
        rate(b.answer_iops),
        match (a.answer_iops, b.answer_iops) {
            (Some(x), Some(y)) => ratio(x, y),
            _ => "-".into(),
        },
        rate(a.knee_iops),
        rate(b.knee_iops),
        change,
    ]);
}

fn certify_rows(table: &mut Table, a: &CertifyResult, b: &CertifyResult) {
    let judged = |c: &CertifyResult, stream: &str| -> Vec<StreamInterval> {
        c.intervals
            .iter()
            .filter(|i| i.judged)
            .flat_map(|i| {
                i.streams
                    .iter()
                    .filter(|s| s.name == stream && s.target.is_none())
                    .cloned()
            })
            .collect()
    };
    let worst = |streams: &[StreamInterval], k: usize| {
        streams
            .iter()
            .map(|s| s.over_pct[k])
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    let mean_iops = |streams: &[StreamInterval]| {
        streams.iter().map(|s| s.iops).sum::<f64>() / streams.len().max(1) as f64
    };
    for (name, direction) in a.streams() {
        let (sa, sb) = (judged(a, &name), judged(b, &name));
        for limit in a.profile.stream_limits(&name, direction) {
            let Some(k) = THRESHOLDS_MS.iter().position(|t| *t == limit.over_ms) else {
                continue;
            };
            let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}%"));
            table.add_row(vec![
                a.profile.name.clone(),
                name.clone(),
                format!("> {} ms", limit.over_ms),
                pct(worst(&sa, k)),
                pct(worst(&sb, k)),
                format!("{}%", limit.max_pct),
                thousands(mean_iops(&sa).round() as u64),
                thousands(mean_iops(&sb).round() as u64),
                super::certify::verdict(a).into(),
                super::certify::verdict(b).into(),
            ]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Interval;
    use crate::result::test_support::{empty_workload, seconds_at};

    fn run(iops: &[f64]) -> WorkloadResult {
        let mut w = empty_workload();
        let read = &mut w.total.read;
        read.intervals = seconds_at(iops);
        for s in &mut read.intervals {
            s.ios = s.iops as u64;
            s.bytes = s.ios * 4096;
        }
        read.ios = iops.iter().sum::<f64>() as u64;
        read.iops = iops.iter().sum::<f64>() / iops.len() as f64;
        w.targets = vec![crate::result::test_support::empty_target("/tmp/x")];
        w.targets[0].io = w.total.clone();
        w
    }

    fn iops_change(a: &WorkloadResult, b: &WorkloadResult) -> String {
        let mut t = table(&[
            "w", "t", "d", "a", "b", "r", "pa", "pb", "pr", "iops", "p99",
        ]);
        workload_rows(&mut t, &mut Vec::new(), "w", a, b);
        t.row_iter()
            .next()
            .unwrap()
            .cell_iter()
            .nth(9)
            .unwrap()
            .content()
    }

    /// Three standard errors of seconds taken as independent (what compare
    /// judged by before) call a steady +1.5% a change; runs of one workload
    /// differ by more than their seconds show, and compare now says what
    /// check says: within the noise.
    #[test]
    fn compare_judges_as_check_judges_not_by_the_seconds_spread_alone() {
        let steady = |level: f64| -> Vec<f64> { (0..10).map(|i| level + (i % 3) as f64).collect() };
        let (a, b) = (run(&steady(1000.0)), run(&steady(1015.0)));
        let se = |xs: &[Interval]| {
            let v: Vec<f64> = xs.iter().map(|i| i.iops).collect();
            let m = v.iter().sum::<f64>() / v.len() as f64;
            let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
            (var / v.len() as f64).sqrt() / m
        };
        let (ea, eb) = (se(&a.total.read.intervals), se(&b.total.read.intervals));
        let three_se = 3.0 * (ea * ea + eb * eb).sqrt();
        assert!(0.015 > three_se.max(0.01), "the old rule would call it");

        let cell = iops_change(&a, &b);
        assert!(cell.contains("within noise"), "{cell}");
        let checked = judge::compare(&[&a], &b, Bootstrap::default());
        let iops = checked[0]
            .changes
            .iter()
            .find(|c| c.figure == Figure::Iops)
            .unwrap();
        assert_eq!(
            cell,
            super::super::change::judged(iops),
            "compare says what check says"
        );

        let cell = iops_change(&a, &run(&steady(1300.0)));
        assert!(cell.ends_with("improved"), "{cell}");
    }
}
