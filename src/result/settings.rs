//! What differs between the two sides of a comparison besides the target:
//! the fathom that measured, the host it ran on, and the engine settings of
//! a workload. A change between two runs is the target's only when these
//! agree; `compare`, `check` and the history line name them so that a
//! reader does not take a new kernel for a faster disk.

use super::Document;
use super::kind::{Kind, engine_settings};
use crate::spec::WorkloadSpec;

/// The host and fathom settings in which `a` and `b` differ, each as
/// "NAME A vs B".
pub fn of_documents(a: &Document, b: &Document) -> Vec<String> {
    // A count of 0 is one not recorded (fio's JSON keeps none): said as
    // nothing, as a blank kernel is.
    let cpus = |d: &Document| match d.host.cpus {
        0 => String::new(),
        n => n.to_string(),
    };
    let memory = |d: &Document| match d.host.memory_bytes {
        0 => String::new(),
        n => crate::util::units::format_bytes(n),
    };
    // A result read from fio's JSON names fio as what measured it.
    let tool = |d: &Document| {
        let version = match d.fathom_version.starts_with("fio") {
            true => d.fathom_version.clone(),
            false => format!("fathom {}", d.fathom_version),
        };
        match &d.fathom_commit {
            Some(c) => format!("{version} ({c})"),
            None => version,
        }
    };
    let pairs = [
        ("measured by", tool(a), tool(b)),
        ("kernel", a.host.kernel.clone(), b.host.kernel.clone()),
        ("CPU", a.host.cpu_model.clone(), b.host.cpu_model.clone()),
        ("CPUs", cpus(a), cpus(b)),
        ("memory", memory(a), memory(b)),
    ];
    differing(&pairs)
}

/// The engine settings in which two runs of one workload differ.
pub fn of_engines(a: &WorkloadSpec, b: &WorkloadSpec) -> Vec<String> {
    of_pairs(&engine_settings(a), &engine_settings(b))
}

/// The settings of two results' own (`Kind::settings`) that differ.
fn of_pairs(a: &[(&'static str, String)], b: &[(&'static str, String)]) -> Vec<String> {
    let pairs: Vec<(&str, String, String)> = a
        .iter()
        .zip(b)
        .map(|((name, x), (_, y))| (*name, x.clone(), y.clone()))
        .collect();
    differing(&pairs)
}

/// What two runs of one workload must share for a change between them to
/// be the target's: their own settings (a disk workload's engine), and the
/// fathom release and kernel that measured them (not the commit: a build
/// of the same release measures alike). Each difference as "NAME A vs B".
pub fn of_runs(
    (a_doc, a): (&Document, &dyn Kind),
    (b_doc, b): (&Document, &dyn Kind),
) -> Vec<String> {
    let mut differ = of_pairs(&a.settings(), &b.settings());
    differ.extend(differing(&[
        (
            "fathom",
            a_doc.fathom_version.clone(),
            b_doc.fathom_version.clone(),
        ),
        (
            "kernel",
            a_doc.host.kernel.clone(),
            b_doc.host.kernel.clone(),
        ),
    ]));
    differ
}

/// The pairs that differ, of those both sides recorded: a side that says
/// nothing of a setting (an empty value: fio's JSON keeps no kernel, CPU
/// or memory) is not a difference.
fn differing(pairs: &[(&str, String, String)]) -> Vec<String> {
    let recorded = |v: &str| !v.trim().is_empty();
    pairs
        .iter()
        .filter(|(_, a, b)| recorded(a) && recorded(b) && a != b)
        .map(|(name, a, b)| format!("{name} {a} vs {b}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_differ_by_engine_release_and_kernel_not_by_commit() {
        let spec = WorkloadSpec::defaults(vec!["t".into()]);
        let a = Document::new(crate::measure::facts::host_facts(), None);
        let mut b = a.clone();
        b.fathom_commit = Some("abc".into());
        let mut w = crate::result::test_support::empty_workload();
        w.spec = spec.clone();
        assert!(of_runs((&a, &w), (&b, &w)).is_empty());
        b.host.kernel = "6.1.0".into();
        let mut other = w.clone();
        other.spec.engine = crate::spec::EngineKind::Sync;
        let said = of_runs((&a, &w), (&b, &other));
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].starts_with("engine ") && said[1].starts_with("kernel "));
    }

    /// fio's JSON records no kernel, CPU or memory: only what both sides
    /// recorded is compared, and fio is named as what measured.
    #[test]
    fn what_a_side_did_not_record_is_no_difference() {
        let a = Document::new(crate::measure::facts::host_facts(), None);
        let mut fio = a.clone();
        fio.fathom_version = "fio-3.42".into();
        fio.fathom_commit = None;
        fio.host.kernel = String::new();
        fio.host.cpu_model = String::new();
        fio.host.cpus = 0;
        fio.host.memory_bytes = 0;
        let said = of_documents(&fio, &a);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("measured by fio-3.42 vs fathom "),
            "{said:?}"
        );
    }

    #[test]
    fn only_what_differs_is_named() {
        let a = WorkloadSpec::defaults(vec!["t".into()]);
        assert!(of_engines(&a, &a).is_empty());
        let mut b = a.clone();
        b.completion_wait = crate::spec::CompletionWait::Sleep;
        b.direct = false;
        assert_eq!(
            of_engines(&a, &b),
            [
                "completion wait auto vs sleep",
                "cache O_DIRECT vs buffered"
            ]
        );
    }
}
