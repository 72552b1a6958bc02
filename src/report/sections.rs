//! What a report shows: the documents of one or more systems (a laptop's
//! disk and a SAN volume, say), each under its label, and their results
//! gathered by kind so that the same kind of result of every system sits in
//! one table.

use crate::result::capacity::CapacityResult;
use crate::result::certify::CertifyResult;
use crate::result::kind::Visit;
use crate::result::meta::MetaResult;
use crate::result::object::ObjectResult;
use crate::result::pts::PtsResult;
use crate::result::streams::StreamsResult;
use crate::result::train::TrainResult;
use crate::result::tree::TreeResult;
use crate::result::warning::{Warning, WarningKind};
use crate::result::{Document, RaisedBy, WorkloadResult, merge};
use std::ops::Deref;

/// One system's results: every document given under one label, merged.
#[derive(Debug, Clone)]
pub struct System {
    pub label: String,
    pub document: Document,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub systems: Vec<System>,
}

/// A result and the system it belongs to; reads as the result itself.
#[derive(Debug)]
pub struct Labelled<'a, T> {
    pub system: &'a str,
    pub result: &'a T,
}

impl<T> Clone for Labelled<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Labelled<'_, T> {}

impl<T> Deref for Labelled<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.result
    }
}

/// The results of one kind, from every system, in the order they were
/// produced.
#[derive(Debug)]
pub enum Section<'a> {
    Workloads(Vec<Labelled<'a, WorkloadResult>>),
    Meta(Vec<Labelled<'a, MetaResult>>),
    Certify(Vec<Labelled<'a, CertifyResult>>),
    Streams(Vec<Labelled<'a, StreamsResult>>),
    Capacity(Vec<Labelled<'a, CapacityResult>>),
    Pts(Vec<Labelled<'a, crate::result::pts::PtsResult>>),
    Tree(Vec<Labelled<'a, crate::result::tree::TreeResult>>),
    Object(Vec<Labelled<'a, crate::result::object::ObjectResult>>),
    Train(Vec<Labelled<'a, crate::result::train::TrainResult>>),
}

impl Report {
    /// One document, named `label` unless it carries its own.
    pub fn single(document: Document, label: &str) -> Report {
        Report {
            systems: vec![System {
                label: document.label.clone().unwrap_or_else(|| label.to_string()),
                document,
            }],
        }
    }

    /// Documents with the name each falls back on (its file's stem).
    /// Documents of one label are one system: their runs are merged, one
    /// after the other.
    pub fn from_documents(documents: Vec<(String, Document)>) -> Result<Report, String> {
        let mut grouped: Vec<(String, Vec<Document>)> = Vec::new();
        for (fallback, document) in documents {
            let label = document.label.clone().unwrap_or(fallback);
            match grouped.iter_mut().find(|(l, _)| *l == label) {
                Some((_, docs)) => docs.push(document),
                None => grouped.push((label, vec![document])),
            }
        }
        let systems = grouped
            .into_iter()
            .map(|(label, docs)| {
                merge::sequential(docs)
                    .map(|document| System { label, document })
                    .map_err(|e| format!("cannot merge the result files: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Report { systems })
    }

    /// True when more than one system is shown: rows then name their system.
    pub fn compares_systems(&self) -> bool {
        self.systems.len() > 1
    }

    pub fn is_empty(&self) -> bool {
        self.systems.iter().all(|s| s.document.results.is_empty())
    }

    pub fn interrupted(&self) -> bool {
        self.systems.iter().any(|s| s.document.interrupted)
    }

    /// Every warning of every system, one line per kind: a warning one run
    /// raised is given whole; one that several runs raised (a sweep) is
    /// summarised once, with the runs and targets it concerns, the range of
    /// the figures that raised it and what to change.
    pub fn warnings(&self) -> Vec<String> {
        type Raised<'a> = (&'a str, String, &'a Warning, RaisedBy);
        let mut groups: Vec<(WarningKind, &str, Vec<Raised>)> = Vec::new();
        for s in &self.systems {
            for raised in s.document.raised() {
                let (run, w) = (raised.by, raised.warning);
                // Warnings without a kind group only with their own text.
                let key = if w.kind == WarningKind::Other {
                    w.message.as_str()
                } else {
                    ""
                };
                let item = (s.label.as_str(), run, w, raised.kind);
                match groups
                    .iter_mut()
                    .find(|(k, m, _)| *k == w.kind && *m == key)
                {
                    Some((_, _, items)) => items.push(item),
                    None => groups.push((w.kind, key, vec![item])),
                }
            }
        }
        let named = |system: &str, what: &str| {
            if self.compares_systems() {
                format!("{system}: {what}")
            } else {
                what.to_string()
            }
        };
        // Of several runs (a sweep), a warning only one raised names it.
        let runs_in_all: usize = self.systems.iter().map(|s| s.document.results.len()).sum();
        groups
            .into_iter()
            .map(|(kind, _, items)| match &items[..] {
                [(system, run, w, _)]
                    if runs_in_all > 1 && !w.message.starts_with(run.as_str()) =>
                {
                    named(system, &format!("{run}: {}", w.message))
                }
                [(system, _, w, _)] => named(system, &w.message),
                _ if kind == WarningKind::Other => {
                    let systems =
                        distinct(items.iter().map(|(system, _, _, _)| system.to_string()));
                    named(&systems.join(", "), &items[0].2.message)
                }
                _ => {
                    let runs = distinct(items.iter().map(|(system, run, _, _)| named(system, run)));
                    let targets = distinct(items.iter().map(|(_, _, w, _)| w.target.clone()));
                    // Counted as what raised them: runs, streams or steps;
                    // a mix is counted as runs.
                    let by = match items.iter().all(|i| i.3 == items[0].3) {
                        true => items[0].3,
                        false => RaisedBy::Run,
                    };
                    let figures: Vec<f64> =
                        items.iter().filter_map(|(_, _, w, _)| w.figure).collect();
                    let range = match (
                        figures.iter().copied().reduce(f64::min),
                        figures.iter().copied().reduce(f64::max),
                    ) {
                        // Figures that read alike are said once ("18%", not
                        // "18% to 18%").
                        (Some(lo), Some(hi)) if kind.format(lo) != kind.format(hi) => {
                            format!("; {} to {}", kind.format(lo), kind.format(hi))
                        }
                        (Some(v), _) => format!("; {}", kind.format(v)),
                        _ => String::new(),
                    };
                    // A warning about a whole run names the run as its target:
                    // said once.
                    let targets: Vec<String> = targets
                        .into_iter()
                        .filter(|t| !t.is_empty() && !runs.iter().any(|r| r.ends_with(t.as_str())))
                        .collect();
                    let targets = match targets.len() {
                        0 => String::new(),
                        1 => format!("; target {}", targets[0]),
                        n => format!("; {n} targets: {}", abridged(&targets)),
                    };
                    format!(
                        "{} ({}: {}{targets}{range}): {}",
                        kind.summary(),
                        by.count(runs.len()),
                        abridged(&runs),
                        kind.advice()
                    )
                }
            })
            .collect()
    }

    /// The results gathered by kind, kinds in the order they first appear.
    pub fn sections(&self) -> Vec<Section<'_>> {
        let mut out: Vec<Section<'_>> = Vec::new();
        for system in &self.systems {
            let label = system.label.as_str();
            let mut by_kind = Gather {
                out: &mut out,
                label,
            };
            for result in &system.document.results {
                result.visit(&mut by_kind);
            }
        }
        out
    }
}

/// Each result into the section of its kind.
struct Gather<'a, 'o> {
    out: &'o mut Vec<Section<'a>>,
    label: &'a str,
}

/// A visitor method that gathers its kind into its section.
macro_rules! gathered {
    ($method:ident, $t:ty, $section:ident) => {
        fn $method(&mut self, r: &'a $t) {
            gather(self.out, self.label, r, Section::$section, |s| match s {
                Section::$section(v) => Some(v),
                _ => None,
            })
        }
    };
}

impl<'a> Visit<'a> for Gather<'a, '_> {
    gathered!(workload, WorkloadResult, Workloads);
    gathered!(meta, MetaResult, Meta);
    gathered!(certify, CertifyResult, Certify);
    gathered!(streams, StreamsResult, Streams);
    gathered!(capacity, CapacityResult, Capacity);
    gathered!(pts, PtsResult, Pts);
    gathered!(tree, TreeResult, Tree);
    gathered!(object, ObjectResult, Object);
    gathered!(train, TrainResult, Train);
}

/// Adds `result` to the section of its kind, opening one if none is yet.
fn gather<'a, T>(
    sections: &mut Vec<Section<'a>>,
    system: &'a str,
    result: &'a T,
    open: fn(Vec<Labelled<'a, T>>) -> Section<'a>,
    of_kind: for<'s> fn(&'s mut Section<'a>) -> Option<&'s mut Vec<Labelled<'a, T>>>,
) {
    let item = Labelled { system, result };
    match sections.iter_mut().find_map(of_kind) {
        Some(items) => items.push(item),
        None => sections.push(open(vec![item])),
    }
}

/// The items, each once, in the order they first appear.
pub fn distinct(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// "a, b, c and 9 more".
pub fn abridged(items: &[String]) -> String {
    const SHOWN: usize = 3;
    if items.len() <= SHOWN + 1 {
        items.join(", ")
    } else {
        format!(
            "{} and {} more",
            items[..SHOWN].join(", "),
            items.len() - SHOWN
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::RunResult;
    use crate::result::test_support::empty_workload;

    /// Of a sweep's runs, a warning only one raised says which.
    #[test]
    fn a_warning_one_run_of_several_raised_names_the_run() {
        let mut doc = Document::new(crate::measure::facts::host_facts(), None);
        let mut busy = empty_workload();
        busy.spec.name = "qd32".into();
        busy.warnings.push(Warning {
            kind: WarningKind::BusyHost,
            target: "/tmp/x".into(),
            figure: Some(0.2),
            at_s: None,
            message: "the host held this run back".into(),
        });
        let mut quiet = empty_workload();
        quiet.spec.name = "qd1".into();
        doc.results = vec![
            RunResult::Workload(busy.clone()),
            RunResult::Workload(quiet),
        ];
        let said = Report::single(doc.clone(), "a").warnings();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("qd32"), "{said:?}");
        // A run alone needs no name.
        doc.results = vec![RunResult::Workload(busy)];
        let said = Report::single(doc, "a").warnings();
        assert_eq!(said, ["the host held this run back"]);
    }
}
