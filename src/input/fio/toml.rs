//! A translated job file written as fathom's TOML.

use super::job::Job;
use std::fmt::Write as _;
use std::path::Path;

/// A knob's value as TOML writes it: whole numbers and true/false bare,
/// the rest as strings.
fn scalar(v: &str) -> String {
    let whole = v.parse::<i64>().is_ok() && (v == "0" || !v.starts_with(['0', '+', '-']));
    match whole || v == "true" || v == "false" {
        true => v.to_string(),
        false => format!("{v:?}"),
    }
}

/// The jobs as a fathom job file: one workload per stonewall group; a
/// group of several jobs is one workload of concurrent streams.
pub(super) fn render(source: &str, jobs: &[Job], cli_targets: bool) -> String {
    let mut out = format!("# Translated from {source} by fathom.\n");
    let mut groups: Vec<Vec<&Job>> = Vec::new();
    for job in jobs {
        match groups.last_mut() {
            Some(g) if !job.starts_group => g.push(job),
            _ => groups.push(vec![job]),
        }
    }
    // Labels for the files, so that streams can name theirs.
    let mut labels: Vec<(String, String)> = Vec::new();
    for path in jobs.iter().flat_map(Job::targets) {
        if labels.iter().any(|(_, p)| *p == path) {
            continue;
        }
        let stem = Path::new(&path)
            .file_name()
            .map(|f| f.to_string_lossy().replace(['.', '=', ' '], "_"))
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| "dir".into());
        let mut label = stem.clone();
        let mut n = 2;
        while labels.iter().any(|(l, _)| *l == label) {
            label = format!("{stem}{n}");
            n += 1;
        }
        labels.push((label, path));
    }
    let label_of = |p: &str| labels.iter().find(|(_, q)| q == p).map(|(l, _)| l.clone());
    let quoted = |v: &str| format!("{v:?}");
    for group in &groups {
        let mut names: Vec<&str> = Vec::new();
        for job in group {
            let name = job.clone.as_ref().map_or(job.name.as_str(), |(_, n)| n);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let wname = names.join("+");
        let _ = writeln!(out, "\n[workload.{}]", quoted(&wname));
        if !cli_targets {
            let mut targets: Vec<String> = Vec::new();
            for t in group.iter().flat_map(|j| j.targets()) {
                let entry = quoted(&format!("{}={t}", label_of(&t).expect("labelled")));
                if !targets.contains(&entry) {
                    targets.push(entry);
                }
            }
            let _ = writeln!(out, "targets = [{}]", targets.join(", "));
        }
        if let [job] = group.as_slice() {
            for (k, v) in &job.knobs {
                let _ = writeln!(out, "{k} = {}", scalar(v));
            }
            continue;
        }
        for job in group {
            let _ = writeln!(
                out,
                "\n[workload.{}.stream.{}]",
                quoted(&wname),
                quoted(&job.name)
            );
            if let Some((_, of)) = &job.clone {
                let _ = writeln!(out, "clone_of = {}", quoted(of));
            }
            if !cli_targets {
                let own: Vec<String> = job
                    .targets()
                    .iter()
                    .map(|t| quoted(&label_of(t).expect("labelled")))
                    .collect();
                let _ = writeln!(out, "targets = [{}]", own.join(", "));
            }
            for (k, v) in &job.knobs {
                let _ = writeln!(out, "{k} = {}", scalar(v));
            }
        }
    }
    out
}
