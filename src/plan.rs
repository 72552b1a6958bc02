//! Turns what the user asked for into the list of workloads to run. For now:
//! a single workload, or the built-in quick benchmark.

use crate::spec::{Distribution, EngineKind, RwMode, WorkloadSpec};

pub const DEFAULT_SEED: u64 = 0x0fa7_4011;

/// The knobs of a workload as fio users know them, with fathom's defaults.
pub fn default_spec(targets: Vec<String>) -> WorkloadSpec {
    WorkloadSpec {
        name: "run".into(),
        targets,
        rw: RwMode::RandRead,
        rwmix_read: 100,
        bs: 4096,
        iodepth: 1,
        numjobs: 1,
        size: None,
        offset: 0,
        runtime_s: None,
        ramp_s: 0.0,
        direct: true,
        engine: EngineKind::IoUring,
        fsync: 0,
        random_distribution: Distribution::Uniform,
        seed: DEFAULT_SEED,
        keep: false,
        overwrite: false,
        destroy_data: false,
        verify: crate::verify::VerifyMode::Off,
        continue_on_error: false,
    }
}

/// What `fathom` alone runs: 4k random reads at depth 32 and 1, then 1 MiB
/// sequential reads, 6 s each (1 s of it warm-up) on one temporary 1 GiB file.
pub fn quick(target: String) -> Vec<WorkloadSpec> {
    let base = WorkloadSpec {
        runtime_s: Some(5.0),
        ramp_s: 1.0,
        ..default_spec(vec![target])
    };
    vec![
        WorkloadSpec {
            name: "rnd4k-q32".into(),
            iodepth: 32,
            ..base.clone()
        },
        WorkloadSpec {
            name: "rnd4k-q1".into(),
            ..base.clone()
        },
        WorkloadSpec {
            name: "seq1m-q8".into(),
            rw: RwMode::Read,
            bs: 1 << 20,
            iodepth: 8,
            ..base
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_plan_is_valid_and_about_twenty_seconds() {
        let plan = quick(".".into());
        assert_eq!(plan.len(), 3);
        let seconds: f64 = plan.iter().map(|s| s.runtime_s.unwrap() + s.ramp_s).sum();
        assert!((15.0..=25.0).contains(&seconds));
        for spec in &plan {
            spec.validate().unwrap();
        }
    }
}
