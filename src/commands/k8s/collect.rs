//! The pods' documents as one cluster document: read from a directory of
//! `{index}.json` or from `kubectl logs` (each pod's document one line of
//! its log), merged as hosts' runs are (histograms added, each pod's own
//! figures kept), with every index that did not report whole named. The
//! merge is never silently short.

use crate::result::Document;
use crate::result::cluster::{self, Launcher, RankFailure};
use std::collections::BTreeMap;

/// How a pod's first line of its log starts; [`greeting`] writes it.
const GREETING: &str = "fathom k8s pod: index ";

/// The line a pod starts its log with, which names its index for
/// [`read_logs`]: `fathom k8s pod: index 1 of 3, pod P on node N, ...`.
pub fn greeting(index: u32, clients: u32, pod: &str, node: Option<&str>, start_at: &str) -> String {
    format!(
        "{GREETING}{index} of {clients}, pod {pod} on node {}, starting at {start_at}",
        node.unwrap_or("(not told)")
    )
}

/// What `kubectl logs` (with or without `--prefix`) held.
#[derive(Debug, Default)]
pub struct Logs {
    /// Each document, with where it was found ("line 12", or the pod).
    pub documents: Vec<(String, Document)>,
    /// Each index's pod, from its greeting, and the last line its log
    /// says fathom stopped with ("fathom: ...").
    pub last_words: BTreeMap<u32, String>,
}

/// Documents and pods' last words from `kubectl logs` output. A line
/// that looks like a document but is not one is bad input.
pub fn read_logs(text: &str) -> Result<Logs, String> {
    let mut logs = Logs::default();
    let mut index_of_pod: BTreeMap<String, u32> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let (pod, rest) = split_prefix(line);
        let rest = rest.trim_end();
        if rest.starts_with('{') {
            let document = Document::from_json(rest)
                .map_err(|e| format!("line {} of the logs is not a fathom document: {e}", n + 1))?;
            let source = pod.map_or_else(|| format!("line {}", n + 1), str::to_string);
            logs.documents.push((source, document));
        } else if let Some(greeting) = rest.strip_prefix(GREETING) {
            if let (Some(pod), Some(index)) = (
                pod,
                greeting
                    .split_whitespace()
                    .next()
                    .and_then(|i| i.parse().ok()),
            ) {
                index_of_pod.insert(pod.to_string(), index);
            }
        } else if rest.starts_with("fathom: ")
            && let Some(index) = pod.and_then(|p| index_of_pod.get(p))
        {
            logs.last_words.insert(*index, rest.to_string());
        }
    }
    Ok(logs)
}

/// `[pod/NAME/CONTAINER] rest` (kubectl logs --prefix): the pod and the
/// rest; a line without the prefix is all rest.
fn split_prefix(line: &str) -> (Option<&str>, &str) {
    if let Some(inner) = line.strip_prefix("[pod/")
        && let Some((tag, rest)) = inner.split_once("] ")
    {
        let pod = tag.split('/').next().unwrap_or(tag);
        return (Some(pod), rest);
    }
    (None, line)
}

/// The merged document and what each index that did not report whole
/// came to.
#[derive(Debug)]
pub struct Collected {
    pub document: Document,
    /// "index 1 lost: ...", in index order; empty when every pod reported
    /// its whole run.
    pub lost: Vec<String>,
    /// How many pods the Job ran.
    pub clients: u32,
}

/// The pods' documents merged. `clients` is the Job's count when the
/// documents cannot tell it (none reported); `last_words` each index's
/// last message, to say why one was lost.
pub fn collect(
    found: Vec<(String, Document)>,
    clients: Option<u32>,
    last_words: &BTreeMap<u32, String>,
) -> Result<Collected, String> {
    let mut by_index: BTreeMap<u32, (String, Document)> = BTreeMap::new();
    let mut counted: Option<u32> = None;
    for (source, document) in found {
        let Some(pod) = document.pod.clone() else {
            return Err(format!(
                "{source} is not a pod's result of `fathom k8s` (it names no index): `fathom merge` joins hosts' results"
            ));
        };
        match counted {
            Some(n) if n != pod.clients => {
                return Err(format!(
                    "{source} is one of {} pods, another of {n}: these are results of different runs",
                    pod.clients
                ));
            }
            _ => counted = Some(pod.clients),
        }
        if let Some((first, _)) = by_index.get(&pod.index) {
            return Err(format!(
                "index {} reported twice ({first} and {source}): give each pod's result once",
                pod.index
            ));
        }
        by_index.insert(pod.index, (source, document));
    }
    let clients = match (counted, clients) {
        (Some(n), Some(given)) if n != given => {
            return Err(format!("--clients {given}, but the pods say they were {n}"));
        }
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => return Err("no pod's result was found".into()),
    };
    if let Some(index) = by_index.keys().find(|&&i| i >= clients) {
        return Err(format!("index {index} is past the run's {clients} pods"));
    }
    // The run as the pods that measured it saw it: when they started, and
    // for how long, to say where a lost one stood.
    let spans: Vec<(f64, f64)> = by_index
        .values()
        .filter(|(_, d)| !d.interrupted && d.failure.is_none())
        .filter_map(|(_, d)| d.results.first().and_then(|r| r.kind().span()))
        .collect();
    let planned = spans.iter().map(|s| s.1).fold(0.0_f64, f64::max);
    let results_expected = by_index
        .values()
        .filter(|(_, d)| !d.interrupted && d.failure.is_none())
        .map(|(_, d)| d.results.len())
        .max();

    let mut lost = Vec::new();
    let mut failed = Vec::new();
    let mut merged: Vec<(u32, Document)> = Vec::new();
    for index in 0..clients {
        let why = match by_index.remove(&index) {
            None => Some(match last_words.get(&index) {
                Some(said) => format!("no result; its log ends with `{said}`"),
                None => "no result (the pod ended, or never started, before it wrote one)".into(),
            }),
            Some((_, mut document)) => {
                let pod = document.pod.clone().expect("checked above");
                let measured = document
                    .results
                    .first()
                    .and_then(|r| r.kind().span())
                    .map(|(_, s)| s);
                let why = if let Some(failure) = &document.failure {
                    Some(format!("failed: {failure}"))
                } else if document.interrupted {
                    Some(match measured {
                        Some(s) if planned > 0.0 => format!(
                            "stopped at t={s:.1} s of {planned:.1} s (interrupted: the pod was stopped)"
                        ),
                        Some(s) => {
                            format!("stopped at t={s:.1} s (interrupted: the pod was stopped)")
                        }
                        None => "stopped before it measured (interrupted)".into(),
                    })
                } else {
                    None
                };
                // What it measured counts, whole or not, when it ran the
                // same plan.
                if !document.results.is_empty()
                    && results_expected.is_none_or(|n| document.results.len() == n)
                {
                    document.host.hostname = pod.host().to_string();
                    merged.push((index, document));
                }
                why
            }
        };
        if let Some(why) = why {
            lost.push(format!("index {index} lost: {why}"));
            failed.push(RankFailure {
                rank: index,
                error: why,
            });
        }
    }
    if merged.is_empty() {
        return Err(format!(
            "no pod's result holds a measurement: {}",
            lost.join("; ")
        ));
    }
    let mut document = cluster::concurrent_ranks(merged, Launcher::Kubernetes)?;
    if let Some(c) = document.cluster.as_mut() {
        c.failed = failed;
    }
    if !lost.is_empty() {
        document.interrupted = true;
        document.failure = Some(format!(
            "{} of {clients} pods did not report a whole run: {}",
            lost.len(),
            lost.join("; ")
        ));
    }
    Ok(Collected {
        document,
        lost,
        clients,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectls_prefix_names_the_pod_and_plain_lines_are_whole() {
        assert_eq!(
            split_prefix("[pod/fathom-1-abcde/fathom] fathom: gone"),
            (Some("fathom-1-abcde"), "fathom: gone")
        );
        assert_eq!(split_prefix("{\"a\":1}"), (None, "{\"a\":1}"));
        let logs = read_logs(
            "[pod/f-1-x/fathom] fathom k8s pod: index 1 of 3, pod f-1-x on node n2\n\
             [pod/f-1-x/fathom] fathom: --start-at: '2026-12-07T10:00:00Z' is already past\n\
             [pod/f-0-y/fathom] some progress line\n",
        )
        .unwrap();
        assert!(logs.documents.is_empty());
        assert!(logs.last_words[&1].contains("already past"));
        assert!(read_logs("{not json").unwrap_err().contains("line 1"));
    }

    #[test]
    fn nothing_to_merge_is_said_with_every_index() {
        let e = collect(Vec::new(), Some(2), &BTreeMap::new()).unwrap_err();
        assert!(
            e.contains("index 0 lost") && e.contains("index 1 lost"),
            "{e}"
        );
        assert!(collect(Vec::new(), None, &BTreeMap::new()).is_err());
    }
}
