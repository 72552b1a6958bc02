//! One marker for everything fathom makes and may keep: a tree, a training
//! dataset, checkpoints, an object-store prefix. It is a file (or an
//! object) named [`MARKER`] in what it marks, and it is checked by its
//! content, never trusted by its name: a directory's marker names the
//! directory's device and inode, so a marker copied elsewhere, or a
//! directory put in the place of fathom's, is refused.

use super::remove::{DirId, MadeDir};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// The marker's name, in a directory or under a prefix.
pub const MARKER: &str = "fathom.marker";

/// The name of part `part` of a marker: the marker itself for part 0, a
/// file beside it for each further part (a shared tree's ranks).
pub fn part_name(part: u32) -> String {
    match part {
        0 => MARKER.to_string(),
        p => format!("{MARKER}.rank{p}"),
    }
}

/// Part `part` of the marker of the directory `root`.
pub fn part_in(root: &Path, part: u32) -> PathBuf {
    root.join(part_name(part))
}

/// Why a directory is not one fathom can prove it made.
#[derive(Debug, Clone, PartialEq)]
pub enum Unmarked {
    /// No marker (or none fathom can read as a file).
    Missing,
    /// A marker whose content is not one of fathom's.
    Unreadable(String),
    /// A marker that does not name the directory it is in.
    NotMadeHere(String),
}

/// The marker at `path`, read as `M`.
pub fn read<M: DeserializeOwned>(path: &Path) -> Result<M, Unmarked> {
    let text = super::read::text(path, super::read::MARKER).map_err(|_| Unmarked::Missing)?;
    serde_json::from_str(&text).map_err(|e| Unmarked::Unreadable(e.to_string()))
}

/// The directory `root`, marked as fathom's: its marker read as `M`, and
/// the directory the marker names (`root_of`) held open. A marker that
/// names no directory, or another one, is refused.
pub fn open<M: DeserializeOwned>(
    root: &Path,
    root_of: impl Fn(&M) -> Option<DirId>,
) -> Result<(M, MadeDir), Unmarked> {
    let marker: M = read(&part_in(root, 0))?;
    let Some(id) = root_of(&marker) else {
        return Err(Unmarked::NotMadeHere(
            "its marker names no directory".into(),
        ));
    };
    let dir = MadeDir::reopen(root, id).map_err(Unmarked::NotMadeHere)?;
    Ok((marker, dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Serialize, serde::Deserialize)]
    struct Mark {
        root: Option<DirId>,
    }

    fn id_of(path: &Path) -> DirId {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).unwrap();
        DirId {
            dev: m.dev(),
            ino: m.ino(),
        }
    }

    #[test]
    fn a_marker_is_trusted_only_in_the_directory_it_names() {
        let top = tempfile::tempdir().unwrap();
        let (mine, other) = (top.path().join("mine"), top.path().join("other"));
        std::fs::create_dir(&mine).unwrap();
        std::fs::create_dir(&other).unwrap();
        assert_eq!(
            open::<Mark>(&mine, |m| m.root).unwrap_err(),
            Unmarked::Missing
        );
        std::fs::write(part_in(&mine, 0), "not json").unwrap();
        assert!(matches!(
            open::<Mark>(&mine, |m| m.root),
            Err(Unmarked::Unreadable(_))
        ));
        let text = serde_json::to_string(&Mark {
            root: Some(id_of(&mine)),
        })
        .unwrap();
        std::fs::write(part_in(&mine, 0), &text).unwrap();
        assert!(open::<Mark>(&mine, |m| m.root).is_ok());
        // The same marker copied into another directory names the first.
        std::fs::write(part_in(&other, 0), &text).unwrap();
        assert!(matches!(
            open::<Mark>(&other, |m| m.root),
            Err(Unmarked::NotMadeHere(_))
        ));
        let nameless = serde_json::to_string(&Mark { root: None }).unwrap();
        std::fs::write(part_in(&mine, 0), nameless).unwrap();
        assert!(matches!(
            open::<Mark>(&mine, |m| m.root),
            Err(Unmarked::NotMadeHere(_))
        ));
    }

    #[test]
    fn parts_beyond_the_first_sit_beside_the_marker() {
        assert_eq!(part_name(0), MARKER);
        assert_eq!(part_name(3), "fathom.marker.rank3");
    }
}
