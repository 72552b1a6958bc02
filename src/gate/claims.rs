//! What this process reads and runs on: every input the read gate opens
//! and every target, by device and inode (and, for a target not made yet,
//! by its absolute name). The write gate refuses a path that names any of
//! them, through whatever link, hard link or bind mount.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One claimed file.
#[derive(Debug, Clone)]
pub struct Claim {
    /// Device and inode, where the file exists.
    pub id: Option<(u64, u64)>,
    /// The absolute name it was claimed by.
    pub path: PathBuf,
    /// What it is to this run, in a message's words: "the job file",
    /// "a target", "the history".
    pub role: &'static str,
}

static CLAIMED: Mutex<Vec<Claim>> = Mutex::new(Vec::new());

fn claimed() -> std::sync::MutexGuard<'static, Vec<Claim>> {
    CLAIMED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Claims the file `path` names (links followed), as `role`.
pub fn claim(path: &Path, role: &'static str) {
    let id = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    claim_as(id, path, role);
}

/// Claims a file already open, by what `fstat` says of it.
pub fn claim_open(file: &std::fs::File, path: &Path, role: &'static str) {
    let id = file.metadata().ok().map(|m| (m.dev(), m.ino()));
    claim_as(id, path, role);
}

fn claim_as(id: Option<(u64, u64)>, path: &Path, role: &'static str) {
    let path = super::absolute(path);
    let mut all = claimed();
    if !all.iter().any(|c| c.id == id && c.path == path) {
        all.push(Claim { id, path, role });
    }
}

/// The claim `path` runs into: the same file by device and inode, or the
/// same absolute name as a claimed file that did not exist yet. Character
/// devices are shared by all (`/dev/null`, a terminal) and claim nothing.
/// A claimed file is looked at only when `path` is the same file by
/// device and inode, to see that its name still names it (a file removed
/// since gives its inode to the next file made): never otherwise, since a
/// target on a stalled device would hold the look as long as it stalls.
pub fn claimant(path: &Path) -> Option<Claim> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).ok();
    if meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_char_device())
    {
        return None;
    }
    let id = meta.map(|m| (m.dev(), m.ino()));
    let name = super::absolute(path);
    let still =
        |c: &Claim| std::fs::metadata(&c.path).is_ok_and(|m| Some((m.dev(), m.ino())) == c.id);
    let matching: Vec<Claim> = claimed()
        .iter()
        .filter(|c| match (id, c.id) {
            (Some(a), Some(b)) => a == b,
            _ => c.path == name,
        })
        .cloned()
        .collect();
    matching.into_iter().find(|c| c.id.is_none() || still(c))
}

/// Releases the claims on a file fathom removed (a target it made): its
/// inode may go to the next file made, a result among them.
pub fn release(dev: u64, ino: u64) {
    claimed().retain(|c| c.id != Some((dev, ino)));
}

/// Releases the claims made by `path`'s name and on the file it names.
pub fn release_path(path: &Path) {
    let id = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    let name = super::absolute(path);
    claimed().retain(|c| c.path != name && (id.is_none() || c.id != id));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_file_is_found_by_any_name_and_a_new_one_by_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("job.fio");
        std::fs::write(&job, b"[j]\n").unwrap();
        claim(&job, "the job file");
        let hard = dir.path().join("hard");
        std::fs::hard_link(&job, &hard).unwrap();
        assert_eq!(claimant(&hard).unwrap().role, "the job file");
        let later = dir.path().join("later.dat");
        claim(&later, "a target");
        assert_eq!(claimant(&later).unwrap().role, "a target");
        assert!(claimant(&dir.path().join("other")).is_none());
        assert!(claimant(Path::new("/dev/null")).is_none());
        release_path(&job);
        release_path(&later);
        assert!(claimant(&hard).is_none() && claimant(&later).is_none());
    }
}
