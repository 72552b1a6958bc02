//! The checks of a plan made before anything is created: targets given
//! twice, cache modes, regions that do not fit.

use crate::engine::pattern::{OffsetPattern, Region};
use crate::run::target::{self, TargetPlan};
use crate::spec::{VerifyMode, WorkloadSpec};
use crate::util::error::UsageError;
use std::collections::HashMap;

/// Claims every target of a plan (`gate::claims`), before anything is
/// written: no result, `--live` file, log or history may then land on one,
/// whatever path or link names it.
pub fn claim_targets(specs: &[WorkloadSpec]) {
    for spec in specs {
        for run in spec.runs() {
            for target in &run.targets {
                crate::gate::claims::claim(std::path::Path::new(target), "a target");
            }
        }
    }
}

/// What checking a plan found of each target, for the session to prepare
/// each from, so that a target is inspected once (here) and prepared once.
#[derive(Debug, Default)]
pub struct CheckedPlan {
    /// Each run (a workload, or a stream of one), its target's name and
    /// what inspecting it found, in the plan's order.
    targets: Vec<(WorkloadSpec, String, TargetPlan)>,
}

impl CheckedPlan {
    /// What checking found of `target` for `run`, once: the first run to
    /// prepare it takes it; a later one finds it prepared.
    pub(super) fn take(&mut self, run: &WorkloadSpec, target: &str) -> Option<TargetPlan> {
        let at = self
            .targets
            .iter()
            .position(|(r, t, _)| t == target && r == run)?;
        Some(self.targets.swap_remove(at).2)
    }
}

/// Checks every workload against every target before anything is created, so
/// a mistake in the last workload does not leave files behind.
pub fn check_plan(specs: &[WorkloadSpec]) -> Result<CheckedPlan, UsageError> {
    let mut checked = CheckedPlan::default();
    for spec in specs {
        spec.validate()?;
        check_cache_modes(spec)?;
        for run in spec.runs() {
            crate::engine::io_uring::check_options(run.ring_options())?;
            let mut seen: Vec<(TargetIdentity, &str)> = Vec::new();
            for (i, name) in run.targets.iter().enumerate() {
                let plan = target::inspect(run, name, i)?;
                let id = TargetIdentity::of(&plan.path);
                if let Some((_, first)) = seen.iter().find(|(other, _)| *other == id) {
                    return Err(UsageError(format!(
                        "targets {first} and {name} are the same {}: its workers would race each other (a verify would blame the device) and its IOPS count twice; give it once (--numjobs runs more workers on it)",
                        if plan.kind == crate::measure::facts::TargetKind::BlockDevice {
                            "device"
                        } else {
                            "file"
                        }
                    )));
                }
                seen.push((id, name));
                check_region(run, &plan).map_err(|e| match spec.streams.is_empty() {
                    true => e,
                    false => UsageError(format!("stream {}: {}", run.name, e.0)),
                })?;
                checked.targets.push((run.clone(), name.clone(), plan));
            }
        }
    }
    Ok(checked)
}

/// What a target is, whatever path names it: a device by its number, a
/// file by its inode, a file still to be created by its real directory and
/// name.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum TargetIdentity {
    Device(u64),
    File(u64, u64),
    New(std::path::PathBuf),
}

impl TargetIdentity {
    pub(super) fn of(path: &std::path::Path) -> TargetIdentity {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        match std::fs::metadata(path) {
            Ok(m) if m.file_type().is_block_device() => TargetIdentity::Device(m.rdev()),
            Ok(m) => TargetIdentity::File(m.dev(), m.ino()),
            Err(_) => {
                let dir = crate::util::directory_of(path);
                let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
                TargetIdentity::New(dir.join(path.file_name().unwrap_or_default()))
            }
        }
    }
}

/// Streams run at once, so a file two of them open must be opened the same
/// way: with O_DIRECT beside buffered I/O the kernel cannot keep the page
/// cache coherent ("Page cache invalidation failure on direct I/O"), and a
/// later fsync fails with EIO, which would read as a failing disk.
pub(super) fn check_cache_modes(spec: &WorkloadSpec) -> Result<(), UsageError> {
    let mut opened: HashMap<std::path::PathBuf, &WorkloadSpec> = HashMap::new();
    for stream in &spec.streams {
        for target in &stream.targets {
            let file = std::fs::canonicalize(target).unwrap_or_else(|_| target.into());
            match opened.get(&file) {
                Some(other) if other.direct != stream.direct => {
                    let (direct, buffered) = match stream.direct {
                        true => (stream, *other),
                        false => (*other, stream),
                    };
                    return Err(UsageError(format!(
                        "streams {} (O_DIRECT) and {} (buffered) both open {target} at once: the kernel cannot keep its page cache coherent with direct I/O to the same file (writes are lost, a flush fails with EIO); make them agree (direct = true or false in both)",
                        direct.name, buffered.name
                    )));
                }
                Some(_) => {}
                None => {
                    opened.insert(file, stream);
                }
            }
        }
    }
    Ok(())
}

pub(super) fn check_region(spec: &WorkloadSpec, plan: &TargetPlan) -> Result<(), UsageError> {
    let blocks = plan.size / spec.bs;
    let largest = spec.largest_block_size();
    if plan.size < largest {
        return Err(UsageError(format!(
            "target {}: --size {} is smaller than the largest block of --bssplit, {}",
            plan.name,
            crate::util::units::format_bytes(plan.size),
            crate::util::units::format_block_size(largest)
        )));
    }
    if spec.rw.is_random() {
        let region = Region {
            start: plan.offset,
            blocks,
            bs: spec.bs,
        };
        OffsetPattern::random(region, &spec.random_distribution, 100, 1)
            .map_err(|e| UsageError(format!("target {}: --random-distribution: {e}", plan.name)))?;
    }
    if !spec.rw.is_random() && blocks < spec.numjobs as u64 {
        return Err(UsageError(format!(
            "target {}: --size holds {blocks} blocks of --bs, fewer than --numjobs {} sequential workers need",
            plan.name, spec.numjobs
        )));
    }
    if spec.verify != VerifyMode::Off && blocks > crate::util::verify::MAX_BLOCKS {
        return Err(UsageError(format!(
            "target {}: --verify keeps 4 bytes per block and {blocks} blocks of --bs are too many (at most {}): use a larger --bs or a smaller --size",
            plan.name,
            crate::util::verify::MAX_BLOCKS
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_target_is_inspected_once_and_its_plan_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.dat").display().to_string();
        let mut spec = WorkloadSpec::defaults(vec![target.clone()]);
        spec.size = Some(1 << 20);
        let mut other = spec.clone();
        other.name = "other".into();
        let mut checked = check_plan(&[spec.clone(), other.clone()]).unwrap();
        // Checking made nothing: the plan says fathom creates the file.
        assert!(!std::path::Path::new(&target).exists());
        let plan = checked.take(&spec, &target).unwrap();
        assert!(plan.create);
        assert!(checked.take(&spec, &target).is_none());
        assert!(checked.take(&other, &target).is_some());
        assert!(checked.take(&other, "elsewhere").is_none());
    }
}
