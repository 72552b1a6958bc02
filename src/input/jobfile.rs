//! Job files: TOML with `[defaults]`, `[sweep]` lists expanded into their
//! cross product, and named `[workload.NAME]` tables; `${var}` in any string
//! takes a sweep variable's value. Errors name the file, line and key.
//!
//! ```toml
//! [defaults]
//! targets = ["data=/mnt/data/fathom.dat"]
//! size = "4g"
//! runtime = "30s"
//!
//! [sweep]
//! rw = ["randread", "randwrite"]
//! bs = ["4k", "8k", "64k"]
//! iodepth = [1, 2, 4, 8, 16, 32, 64, 128]
//!
//! [workload.sas]
//! name = "sas-${rw}-${bs}-qd${iodepth}"
//! ```

use crate::input::plan::{self, Bindings, Sweep};
use crate::spec::WorkloadSpec;
use crate::spec::knobs::{self, SpecBuilder};
use crate::util::error::UsageError;
use std::path::Path;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// What the command line adds to a job file: targets that replace the
/// file's, knobs that override it, and sweeps of its own.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub targets: Vec<String>,
    pub knobs: Vec<(String, String)>,
    pub sweep: Sweep,
    /// `--stream` flags: a name and its settings each.
    pub streams: Vec<(String, Vec<(String, String)>)>,
}

pub fn load(path: &Path, overrides: &Overrides) -> Result<Vec<WorkloadSpec>, UsageError> {
    let name = path.display().to_string();
    let text = crate::gate::read::text(path, crate::gate::read::JOB_FILE)
        .map_err(|e| UsageError(format!("job file {}", e.0)))?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "job".into());
    parse(&text, &name, &stem, overrides)
}

/// Parses job-file text; `source` names it in errors, `stem` names the
/// workload when the file has no `[workload.*]` table.
pub fn parse(
    text: &str,
    source: &str,
    stem: &str,
    overrides: &Overrides,
) -> Result<Vec<WorkloadSpec>, UsageError> {
    let at = |span: Span, msg: String| {
        UsageError(format!("{source}:{}: {msg}", line_of(text, span.start)))
    };
    if let Some((name, _)) = overrides.streams.first() {
        return Err(UsageError(format!(
            "--stream {name}: a job file gives its streams in [workload.NAME.stream.SNAME] tables"
        )));
    }
    let doc = DeTable::parse(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        let msg = e
            .message()
            .lines()
            .next()
            .unwrap_or("invalid TOML")
            .to_string();
        UsageError(format!("{source}:{line}: {msg}"))
    })?;
    let mut layout = Layout::of(doc.get_ref(), &at)?;
    for (var, values) in &overrides.sweep {
        if let Some(i) = layout.sweep.iter().position(|(v, _)| v == var) {
            layout.sweep.remove(i);
            layout.sweep_spans.remove(i);
        }
        layout.sweep.push((var.clone(), values.clone()));
        layout.sweep_spans.push(None);
    }
    plan::check_size(&layout.sweep, layout.workloads.len())
        .map_err(|m| UsageError(format!("{source}: {m}")))?;
    let empty = DeTable::default();
    if layout.workloads.is_empty() {
        layout.workloads.push(Workload {
            name: stem.to_string(),
            body: &empty,
            span: 0..0,
        });
    }
    let mut specs = Vec::new();
    for workload in &layout.workloads {
        for (key, _) in workload.body.iter() {
            let swept = layout
                .sweep
                .iter()
                .any(|(v, _)| knobs::normalize(v) == knobs::normalize(key.get_ref()));
            if swept {
                return Err(at(
                    key.span(),
                    format!(
                        "workload.{}.{}: also swept in [sweep]; set it in one place",
                        workload.name,
                        key.get_ref()
                    ),
                ));
            }
        }
        for bindings in plan::expand(&layout.sweep) {
            specs.push(layout.point(workload, &bindings, overrides, &at)?);
        }
    }
    Ok(specs)
}

type Span = std::ops::Range<usize>;

/// A job file's tables: `[defaults]`, `[sweep]` (with where each list is)
/// and the `[workload.NAME]` tables in file order.
struct Layout<'a> {
    defaults: Option<&'a DeTable<'a>>,
    sweep: Sweep,
    sweep_spans: Vec<Option<Span>>,
    workloads: Vec<Workload<'a>>,
}

/// A `[workload.NAME]` table.
struct Workload<'a> {
    name: String,
    body: &'a DeTable<'a>,
    span: Span,
}

impl<'a> Layout<'a> {
    fn of(
        doc: &'a DeTable<'a>,
        at: &impl Fn(Span, String) -> UsageError,
    ) -> Result<Layout<'a>, UsageError> {
        let mut layout = Layout {
            defaults: None,
            sweep: Vec::new(),
            sweep_spans: Vec::new(),
            workloads: Vec::new(),
        };
        for (key, value) in doc {
            let table = |what: &str| {
                value
                    .get_ref()
                    .as_table()
                    .ok_or_else(|| at(key.span(), format!("{what} must be a table")))
            };
            match key.get_ref().as_ref() {
                "defaults" => layout.defaults = Some(table("[defaults]")?),
                "sweep" => {
                    for (var, list) in table("[sweep]")? {
                        let values = sweep_values(var.get_ref(), var.span(), list, at)?;
                        layout.sweep.push((var.get_ref().to_string(), values));
                        layout.sweep_spans.push(Some(var.span()));
                    }
                }
                "workload" => {
                    for (name, body) in table("[workload]")? {
                        let body = body.get_ref().as_table().ok_or_else(|| {
                            at(
                                name.span(),
                                format!("workload.{} must be a table", name.get_ref()),
                            )
                        })?;
                        layout.workloads.push(Workload {
                            name: name.get_ref().to_string(),
                            body,
                            span: name.span(),
                        });
                    }
                }
                other => {
                    return Err(at(
                        key.span(),
                        format!(
                            "unknown section '{other}' (expected [defaults], [sweep], [workload.NAME])"
                        ),
                    ));
                }
            }
        }
        Ok(layout)
    }

    /// The spec of `workload` at one point of the sweep: `[defaults]`, the
    /// sweep's values, the workload's own table, then the command line.
    fn point(
        &self,
        workload: &Workload,
        bindings: &Bindings,
        overrides: &Overrides,
        at: &impl Fn(Span, String) -> UsageError,
    ) -> Result<WorkloadSpec, UsageError> {
        let wname = &workload.name;
        let mut b = SpecBuilder::new(crate::spec::WorkloadSpec::defaults(Vec::new()));
        b.spec.name = wname.clone();
        let mut targets = None;
        let mut name_given = false;
        let mut streams: Vec<(String, &DeTable)> = Vec::new();
        let empty = DeTable::default();
        let defaults = self.defaults.unwrap_or(&empty);
        for (section, table) in [("defaults", defaults), ("workload", workload.body)] {
            for (key, value) in table.iter() {
                let k = key.get_ref().as_ref();
                if section == "workload" && k == "stream" {
                    streams = stream_tables(value, wname, at)?;
                    continue;
                }
                let label = if section == "defaults" {
                    format!("defaults.{k}")
                } else {
                    format!("workload.{wname}.{k}")
                };
                if matches!(k, "targets" | "target") {
                    let fail = |m: String| at(value.span(), format!("{label}: {m}"));
                    targets = Some(string_list(value, bindings).map_err(fail)?);
                    continue;
                }
                set_knob(&mut b, k, key.span(), value, &label, bindings, at)?;
                name_given |= k == "name";
            }
            if section == "defaults" {
                apply_sweep(&mut b, bindings, &self.sweep_spans, at)?;
            }
        }
        for (k, v) in &overrides.knobs {
            b.set(k, v).map_err(|m| flag_error(k, m))?;
        }
        if !name_given {
            b.spec.name = plan::point_name(&b.spec, bindings);
        }
        let targets = if overrides.targets.is_empty() {
            targets.unwrap_or_default()
        } else {
            overrides.targets.clone()
        };
        if targets.is_empty() {
            return Err(at(
                workload.span.clone(),
                format!(
                    "workload {wname}: no targets (set targets = [...] in [defaults] or give them on the command line)"
                ),
            ));
        }
        let base = b.clone();
        let mut spec = b.finish();
        set_targets(&mut spec, &targets);
        for (sname, table) in &streams {
            let stream = stream_spec(
                &base, wname, sname, table, &targets, bindings, overrides, at,
            )?;
            spec.streams.push(stream);
        }
        crate::spec::seed_streams_apart(&mut spec.streams);
        Ok(spec)
    }
}

/// The values of `[sweep]`'s list `var`.
fn sweep_values(
    var: &str,
    var_span: Span,
    list: &Spanned<DeValue>,
    at: &impl Fn(Span, String) -> UsageError,
) -> Result<Vec<String>, UsageError> {
    let values = list
        .get_ref()
        .as_array()
        .ok_or_else(|| at(var_span.clone(), format!("sweep.{var}: must be a list")))?;
    if values.is_empty() {
        return Err(at(var_span, format!("sweep.{var}: empty list")));
    }
    values
        .iter()
        .map(|v| scalar(v).map_err(|m| at(v.span(), format!("sweep.{var}: {m}"))))
        .collect()
}

/// The `[workload.NAME.stream.SNAME]` tables, in file order.
fn stream_tables<'a>(
    value: &'a Spanned<DeValue<'a>>,
    wname: &str,
    at: &impl Fn(std::ops::Range<usize>, String) -> UsageError,
) -> Result<Vec<(String, &'a DeTable<'a>)>, UsageError> {
    let tables = value.get_ref().as_table().ok_or_else(|| {
        at(
            value.span(),
            format!("workload.{wname}.stream must be a table"),
        )
    })?;
    tables
        .iter()
        .map(|(sname, body)| {
            body.get_ref()
                .as_table()
                .map(|t| (sname.get_ref().to_string(), t))
                .ok_or_else(|| {
                    at(
                        sname.span(),
                        format!(
                            "workload.{wname}.stream.{} must be a table",
                            sname.get_ref()
                        ),
                    )
                })
        })
        .collect()
}

/// One stream: the workload's knobs (defaults, sweep point and all), then
/// the stream's own, then the command line's, which override everything.
/// `targets` in a stream picks workload targets by label.
#[allow(clippy::too_many_arguments)]
fn stream_spec(
    base: &SpecBuilder,
    wname: &str,
    sname: &str,
    table: &DeTable,
    targets: &[String],
    bindings: &Bindings,
    overrides: &Overrides,
    at: &impl Fn(std::ops::Range<usize>, String) -> UsageError,
) -> Result<WorkloadSpec, UsageError> {
    let mut b = base.clone();
    b.spec.name = sname.to_string();
    let mut chosen: Option<Vec<String>> = None;
    for (key, value) in table.iter() {
        let k = key.get_ref().as_ref();
        let label = format!("workload.{wname}.stream.{sname}.{k}");
        let fail = |m: String| at(value.span(), format!("{label}: {m}"));
        if matches!(k, "targets" | "target") {
            let wanted = string_list(value, bindings).map_err(&fail)?;
            chosen = Some(pick_targets(targets, &wanted).map_err(fail)?);
            continue;
        }
        if k == "clone_of" {
            let name = value.get_ref().as_str().ok_or_else(|| {
                fail("the name of the fio job this stream is a clone of, a string".into())
            })?;
            b.spec.clone_of = Some(name.to_string());
            continue;
        }
        set_knob(&mut b, k, key.span(), value, &label, bindings, at)?;
    }
    for (k, v) in overrides.knobs.iter().filter(|(k, _)| k != "name") {
        b.set(k, v).map_err(|m| flag_error(k, m))?;
    }
    let mut spec = b.finish();
    set_targets(&mut spec, &chosen.unwrap_or_else(|| targets.to_vec()));
    Ok(spec)
}

/// The targets (`LABEL=PATH` or `PATH`) whose label or path is in `wanted`.
pub fn pick_targets(targets: &[String], wanted: &[String]) -> Result<Vec<String>, String> {
    wanted
        .iter()
        .map(|w| {
            targets
                .iter()
                .find(|t| {
                    let (label, path) = knobs::split_label(t);
                    label.unwrap_or(path) == w || path == w
                })
                .cloned()
                .ok_or_else(|| {
                    let known: Vec<&str> = targets
                        .iter()
                        .map(|t| {
                            let (label, path) = knobs::split_label(t);
                            label.unwrap_or(path)
                        })
                        .collect();
                    format!("no target labelled '{w}' (targets: {})", known.join(", "))
                })
        })
        .collect()
}

/// Sweep variables named after a knob set it; others only feed `${var}`.
fn apply_sweep(
    b: &mut SpecBuilder,
    bindings: &Bindings,
    spans: &[Option<std::ops::Range<usize>>],
    at: &impl Fn(std::ops::Range<usize>, String) -> UsageError,
) -> Result<(), UsageError> {
    for (i, (k, v)) in bindings.iter().enumerate() {
        if knobs::is_knob(k) {
            b.set(k, v)
                .map_err(|m| match spans.get(i).cloned().flatten() {
                    Some(span) => at(span, format!("sweep.{k}: {m}")),
                    None => flag_error(k, m),
                })?;
        }
    }
    Ok(())
}

/// Sets knob `k` of a job-file table (its key at `key_span`) from `value`,
/// `${var}` substituted; errors name `label` and the line.
fn set_knob(
    b: &mut SpecBuilder,
    k: &str,
    key_span: std::ops::Range<usize>,
    value: &Spanned<DeValue>,
    label: &str,
    bindings: &Bindings,
    at: &impl Fn(std::ops::Range<usize>, String) -> UsageError,
) -> Result<(), UsageError> {
    if !knobs::is_knob(k) {
        return Err(at(key_span, format!("{label}: unknown setting")));
    }
    let fail = |m: String| at(value.span(), format!("{label}: {m}"));
    let v = scalar(value).map_err(fail)?;
    let v = plan::substitute(&v, bindings).map_err(fail)?;
    b.set(k, &v).map_err(fail)
}

/// A knob given on the command line that could not be set: the error names
/// its flag.
pub fn flag_error(knob: &str, message: String) -> UsageError {
    UsageError(format!("--{}: {message}", knob.replace('_', "-")))
}

/// Splits `LABEL=PATH` targets into the spec's targets and labels.
pub fn set_targets(spec: &mut WorkloadSpec, given: &[String]) {
    spec.targets.clear();
    spec.labels.clear();
    for t in given {
        let (label, path) = knobs::split_label(t);
        spec.targets.push(path.to_string());
        spec.labels.push(label.unwrap_or(path).to_string());
    }
}

fn scalar(value: &Spanned<DeValue>) -> Result<String, String> {
    match value.get_ref() {
        DeValue::String(s) => Ok(s.to_string()),
        DeValue::Integer(i) => {
            let digits = i.as_str().replace('_', "");
            let digits = digits
                .trim_start_matches("0x")
                .trim_start_matches("0o")
                .trim_start_matches("0b");
            i64::from_str_radix(digits, i.radix())
                .map(|n| n.to_string())
                .map_err(|_| format!("{} is not a usable integer", i.as_str()))
        }
        DeValue::Float(f) => Ok(f.as_str().to_string()),
        DeValue::Boolean(b) => Ok(b.to_string()),
        other => Err(format!("expected a value, found a {}", other.type_str())),
    }
}

fn string_list(value: &Spanned<DeValue>, bindings: &Bindings) -> Result<Vec<String>, String> {
    let items: Vec<String> = match value.get_ref() {
        DeValue::Array(a) => a.iter().map(scalar).collect::<Result<_, _>>()?,
        _ => vec![scalar(value)?],
    };
    items
        .iter()
        .map(|t| plan::substitute(t, bindings))
        .collect()
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The streams of `--stream` flags over a workload built from flags: each
/// starts from the flags' knobs, then its own settings.
pub fn flag_streams(
    base: &SpecBuilder,
    targets: &[String],
    streams: &[(String, Vec<(String, String)>)],
) -> Result<Vec<WorkloadSpec>, UsageError> {
    streams
        .iter()
        .map(|(name, settings)| {
            let fail = |m: String| UsageError(format!("--stream {name}: {m}"));
            let mut b = base.clone();
            b.spec.name = name.clone();
            let mut chosen = targets.to_vec();
            for (k, v) in settings {
                if k == "targets" {
                    let wanted: Vec<String> = v.split('|').map(|t| t.trim().to_string()).collect();
                    chosen = pick_targets(targets, &wanted).map_err(fail)?;
                } else {
                    b.set(k, v)
                        .map_err(|m| fail(format!("{}: {m}", k.replace('_', "-"))))?;
                }
            }
            let mut spec = b.finish();
            set_targets(&mut spec, &chosen);
            Ok(spec)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|mut specs| {
            crate::spec::seed_streams_apart(&mut specs);
            specs
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RwMode;

    fn parse_ok(text: &str) -> Vec<WorkloadSpec> {
        parse(text, "t.toml", "t", &Overrides::default()).unwrap()
    }

    fn parse_err(text: &str) -> String {
        parse(text, "t.toml", "t", &Overrides::default())
            .unwrap_err()
            .0
    }

    const SAS: &str = r#"
[defaults]
targets = ["disk=/dev/null"]
runtime = "2s"

[sweep]
rw = ["randread", "randwrite"]
bs = ["4k", "8k", "64k"]
iodepth = [1, 2, 4, 8, 16, 32, 64, 128]

[workload.sas]
name = "sas-${rw}-${bs}-qd${iodepth}"
"#;

    #[test]
    fn sweep_expands_with_substitution() {
        let specs = parse_ok(SAS);
        assert_eq!(specs.len(), 48);
        assert_eq!(specs[0].name, "sas-randread-4k-qd1");
        assert_eq!(specs[47].name, "sas-randwrite-64k-qd128");
        assert_eq!(
            (specs[47].rw, specs[47].bs, specs[47].iodepth),
            (RwMode::RandWrite, 65536, 128)
        );
        assert_eq!(specs[0].targets, vec!["/dev/null"]);
        assert_eq!(specs[0].labels, vec!["disk"]);
        assert_eq!(specs[0].runtime_s, Some(2.0));
    }

    #[test]
    fn overrides_replace_targets_and_knobs() {
        let o = Overrides {
            targets: vec!["/tmp/x".into()],
            knobs: vec![("runtime".into(), "1s".into())],
            sweep: vec![("iodepth".into(), vec!["4".into()])],
            streams: Vec::new(),
        };
        let specs = parse(SAS, "t.toml", "t", &o).unwrap();
        assert_eq!(specs.len(), 6);
        assert!(
            specs
                .iter()
                .all(|s| s.iodepth == 4 && s.runtime_s == Some(1.0))
        );
        assert_eq!(specs[0].labels, vec!["/tmp/x"]);
    }

    #[test]
    fn errors_name_line_and_key() {
        let e = parse_err("[defaults]\ntargets = [\"/x\"]\nbs = \"4q\"\n");
        assert!(e.starts_with("t.toml:3: defaults.bs:"), "{e}");
        let e = parse_err("[defaults]\ntargets = [\"/x\"]\ncolour = 1\n");
        assert!(e.starts_with("t.toml:3: defaults.colour: unknown"), "{e}");
        let e = parse_err("[defaults]\ntargets = [\"/x\"]\n\n[sweep]\nbs = \"4k\"\n");
        assert!(e.starts_with("t.toml:5: sweep.bs: must be a list"), "{e}");
        let e = parse_err("[defaults\n");
        assert!(e.starts_with("t.toml:1:"), "{e}");
        let e = parse_err("[defaults]\ntargets = [\"/x\"]\nname = \"${nope}\"\n");
        assert!(e.contains("nope"), "{e}");
        let e = parse_err("[defaults]\nbs = \"4k\"\n");
        assert!(e.contains("no targets"), "{e}");
        let e = parse_err("[sweep]\nbs=[\"4k\"]\n[workload.a]\ntargets=[\"/x\"]\nbs=\"8k\"\n");
        assert!(e.starts_with("t.toml:5: workload.a.bs: also swept"), "{e}");
        let e = parse_err("[sweep]\nbs=[\"4k\",\"8x\"]\n[defaults]\ntargets=[\"/x\"]\n");
        assert!(e.starts_with("t.toml:2: sweep.bs:"), "{e}");
        let e = parse_err("[frobs]\n");
        assert!(e.contains("unknown section 'frobs'"), "{e}");
    }

    #[test]
    fn absurd_sweeps_are_refused() {
        let many: Vec<String> = (1..=400).map(|i| i.to_string()).collect();
        let text = format!(
            "[defaults]\ntargets=[\"/x\"]\n[sweep]\niodepth=[{0}]\nnumjobs=[{0}]\n",
            many.join(",")
        );
        assert!(parse_err(&text).contains("more than"));
    }
}
