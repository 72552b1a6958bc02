//! Turns what the user asked for into the list of workloads to run: sweeps
//! expand into their cross product, `${var}` is substituted, and the plan can
//! be summarised before anything runs.

use crate::spec::WorkloadSpec;

/// Two passes over each target before the workloads: sequential 128k
/// writes, then random 4k writes (SNIA PTS's workload-independent and
/// -dependent preconditioning, shortened to one pass each).
pub fn preconditioned(specs: Vec<WorkloadSpec>) -> Vec<WorkloadSpec> {
    let Some(first) = specs.first() else {
        return specs;
    };
    let pass = |name: &str, rw: crate::spec::RwMode, bs: u64| WorkloadSpec {
        name: name.into(),
        rw,
        rwmix_read: 0,
        bs,
        iodepth: 32,
        numjobs: 1,
        runtime_s: None,
        ramp_s: 0.0,
        rate_iops: None,
        rate_bw: None,
        steady_state: None,
        verify: crate::spec::VerifyMode::Off,
        ..first.clone()
    };
    let mut out = vec![
        pass("precondition-seq", crate::spec::RwMode::Write, 128 << 10),
        pass("precondition-random", crate::spec::RwMode::RandWrite, 4096),
    ];
    out.extend(specs);
    out
}

/// Sweep variables in the order given; the first varies slowest.
pub type Sweep = Vec<(String, Vec<String>)>;
/// One point of a sweep: a value for each variable.
pub type Bindings = Vec<(String, String)>;

/// Every combination of the sweep's values, the last variable varying
/// fastest. An empty sweep has one point with no bindings.
pub fn expand(sweep: &Sweep) -> Vec<Bindings> {
    let mut points: Vec<Bindings> = vec![Vec::new()];
    for (var, values) in sweep {
        points = points
            .into_iter()
            .flat_map(|point| {
                values.iter().map(move |v| {
                    let mut p = point.clone();
                    p.push((var.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    points
}

/// Replaces `${var}` with its bound value; an unbound name is an error.
pub fn substitute(text: &str, bindings: &Bindings) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("'${{' without a closing '}}' in '{text}'"))?;
        let name = &after[..end];
        let value = bindings
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("${{{name}}} is not a [sweep] variable"))?;
        out.push_str(value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Refuses a sweep that would expand to more than `MAX_RUNS` runs
/// (`copies` workloads each).
pub fn check_size(sweep: &Sweep, copies: usize) -> Result<(), String> {
    let runs = sweep
        .iter()
        .map(|(_, v)| v.len())
        .product::<usize>()
        .saturating_mul(copies.max(1));
    if runs > MAX_RUNS {
        return Err(format!(
            "the sweep expands to {runs} runs, more than {MAX_RUNS}"
        ));
    }
    Ok(())
}

/// "NAME k=v k=v": a workload's name at one point of its sweep. A
/// workload left unnamed ("run") is named by what it does, as tables and
/// titles call it ("randread 4k QD1"), with the swept knobs that says
/// nothing of ("randread 4k QD1 engine=sync"): one name everywhere.
pub fn point_name(spec: &crate::spec::WorkloadSpec, bindings: &Bindings) -> String {
    /// Knobs `WorkloadSpec::label` spells out.
    const IN_LABEL: [&str; 6] = ["rw", "bs", "bssplit", "iodepth", "numjobs", "rwmix_read"];
    if bindings.is_empty() {
        return spec.name.clone();
    }
    let unnamed = spec.name == crate::spec::WorkloadSpec::DEFAULT_NAME;
    let point: Vec<String> = bindings
        .iter()
        .filter(|(k, _)| !(unnamed && IN_LABEL.contains(&k.replace('-', "_").as_str())))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let name = if unnamed {
        spec.label()
    } else {
        spec.name.clone()
    };
    match point.is_empty() {
        true => name,
        false => format!("{name} {}", point.join(" ")),
    }
}

/// Upper bound on the plan's sweep size: enough for any real matrix, small
/// enough that a typo (a list of a million) is caught before it runs.
pub const MAX_RUNS: usize = 100_000;

/// "48 runs, about 24m 30s" (time-bound runs only can be estimated).
/// What each run costs besides its ramp and runtime (starting and joining
/// its workers, reading the counters, assembling its result): 200 runs of
/// 10 ms of the null engine took 2.7 s, 3.5 ms a run over their 2 s.
const PER_RUN_OVERHEAD_S: f64 = 0.004;

pub fn summary(specs: &[WorkloadSpec]) -> String {
    let timed: f64 = specs
        .iter()
        .filter_map(|s| {
            s.runtime_s
                .map(|r| (r + s.ramp_s + PER_RUN_OVERHEAD_S) * s.repeat as f64)
        })
        .sum();
    let size_bound = specs.iter().filter(|s| s.runtime_s.is_none()).count();
    let runs = if specs.len() == 1 { "run" } else { "runs" };
    let time = crate::util::units::format_duration(timed);
    let runs = match specs.iter().map(|s| s.repeat).max().unwrap_or(1) {
        1 => runs.to_string(),
        n if specs.iter().all(|s| s.repeat == n) => format!("{runs} ({n} repeats each)"),
        _ => format!("{runs} (some repeated)"),
    };
    match size_bound {
        0 => format!("{} {runs}, about {time}", specs.len()),
        n if n == specs.len() => format!("{} size-bound {runs} (time depends on the target)", n),
        n => format!(
            "{} {runs}, at least {time} ({n} size-bound, not counted)",
            specs.len()
        ),
    }
}

/// `{rank}` and `{host}` in a target path, for a file per rank.
pub fn rank_path(path: &str, rank: u32, host: &str) -> String {
    path.replace("{rank}", &rank.to_string())
        .replace("{host}", host)
}

/// The plan as rank `rank` of `size` runs it (`--mpi`): paths expanded and, with a shared
/// layout, each workload's region cut into `size` disjoint slices.
pub fn plan_for_rank(
    specs: &[WorkloadSpec],
    rank: u32,
    size: u32,
    host: &str,
    shared: bool,
) -> Result<Vec<WorkloadSpec>, String> {
    let mut out = Vec::with_capacity(specs.len());
    for spec in specs {
        let mut s = spec.clone();
        s.targets = s.targets.iter().map(|t| rank_path(t, rank, host)).collect();
        s.labels = s.labels.iter().map(|t| rank_path(t, rank, host)).collect();
        for stream in &mut s.streams {
            stream.targets = stream
                .targets
                .iter()
                .map(|t| rank_path(t, rank, host))
                .collect();
            stream.labels = stream
                .labels
                .iter()
                .map(|t| rank_path(t, rank, host))
                .collect();
        }
        if s.repeat > 1 {
            return Err(format!(
                "workload {}: --mpi runs each workload once: each rank would pick its own --repeat, and their picks would not merge",
                s.name
            ));
        }
        if s.runtime_s.is_none() {
            return Err(format!(
                "workload {}: --mpi runs every workload for a fixed time after a barrier: give --runtime",
                s.name
            ));
        }
        if shared {
            slice(&mut s, rank, size)?;
            for stream in &mut s.streams {
                slice(stream, rank, size)?;
            }
        }
        out.push(s);
    }
    Ok(out)
}

/// This rank's slice of the region: `size / ranks` bytes (whole blocks)
/// from `offset + rank x that`.
fn slice(spec: &mut WorkloadSpec, rank: u32, ranks: u32) -> Result<(), String> {
    let total = spec.size.ok_or_else(|| {
        format!(
            "workload {}: --layout shared needs --size, the region the ranks divide",
            spec.name
        )
    })?;
    let per = total / ranks as u64 / spec.bs * spec.bs;
    if per == 0 {
        return Err(format!(
            "workload {}: --size {total} split {ranks} ways leaves less than one block each",
            spec.name
        ));
    }
    spec.offset += per * rank as u64;
    spec.size = Some(per);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rank_gets_its_own_paths_and_slice() {
        let spec = WorkloadSpec {
            targets: vec!["/mnt/{host}/r{rank}.dat".into()],
            labels: vec!["/mnt/{host}/r{rank}.dat".into()],
            size: Some(10 << 20),
            offset: 4096,
            runtime_s: Some(1.0),
            ..WorkloadSpec::defaults(Vec::new())
        };
        let r2 = plan_for_rank(std::slice::from_ref(&spec), 2, 4, "n7", true).unwrap();
        assert_eq!(r2[0].targets, ["/mnt/n7/r2.dat"]);
        assert_eq!(r2[0].target_label(0), "/mnt/n7/r2.dat");
        // 10 MiB in 4 slices of whole 4 KiB blocks: 2,621,440 bytes each.
        let per = (10u64 << 20) / 4 / 4096 * 4096;
        assert_eq!((r2[0].offset, r2[0].size), (4096 + 2 * per, Some(per)));
        let r3 = plan_for_rank(std::slice::from_ref(&spec), 3, 4, "n7", true).unwrap();
        assert_eq!(
            r3[0].offset,
            r2[0].offset + per,
            "slices touch, never overlap"
        );
        // Without a shared layout every rank has the whole region.
        let own = plan_for_rank(std::slice::from_ref(&spec), 3, 4, "n7", false).unwrap();
        assert_eq!((own[0].offset, own[0].size), (4096, Some(10 << 20)));
        let timeless = WorkloadSpec {
            runtime_s: None,
            ..spec.clone()
        };
        assert!(
            plan_for_rank(&[timeless], 0, 4, "n", false)
                .unwrap_err()
                .contains("--runtime")
        );
        let sizeless = WorkloadSpec { size: None, ..spec };
        assert!(
            plan_for_rank(&[sizeless], 0, 4, "n", true)
                .unwrap_err()
                .contains("--size")
        );
    }

    #[test]
    fn sweeps_expand_to_the_cross_product_in_order() {
        let sweep: Sweep = vec![
            ("rw".into(), vec!["randread".into(), "randwrite".into()]),
            ("bs".into(), vec!["4k".into(), "8k".into(), "64k".into()]),
        ];
        let points = expand(&sweep);
        assert_eq!(points.len(), 6);
        assert_eq!(
            points[0],
            vec![("rw".into(), "randread".into()), ("bs".into(), "4k".into())]
        );
        assert_eq!(points[5][1].1, "64k");
        assert_eq!(expand(&Vec::new()), vec![Vec::new()]);
    }

    #[test]
    fn substitution() {
        let b: Bindings = vec![("bs".into(), "8k".into()), ("qd".into(), "32".into())];
        assert_eq!(substitute("t-${bs}-q${qd}", &b).unwrap(), "t-8k-q32");
        assert_eq!(substitute("plain", &b).unwrap(), "plain");
        assert!(substitute("${nope}", &b).unwrap_err().contains("nope"));
        assert!(substitute("${bs", &b).is_err());
    }
}
