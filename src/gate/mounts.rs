//! Which mount holds a path, from /proc/self/mountinfo: for the facts a
//! result reports and for the gate's refusal of the device file system.

use std::path::Path;

/// File system type and mount point of the mount holding `path`, from
/// /proc/self/mountinfo (the longest mount point that prefixes the path).
pub fn mount_of(path: &Path) -> Option<(String, String)> {
    let path = std::fs::canonicalize(path).ok()?;
    let info = crate::gate::read::host_text("/proc/self/mountinfo")?;
    mount_in(&info, &path)
}

/// [`mount_of`] an absolute, canonical `path` in the lines of a mountinfo.
pub(crate) fn mount_in(info: &str, path: &Path) -> Option<(String, String)> {
    let mut best: Option<(usize, String, String)> = None;
    for line in info.lines() {
        let (left, right) = line.split_once(" - ")?;
        let mount_point = unescape_mountinfo(left.split_whitespace().nth(4)?);
        let fstype = right.split_whitespace().next()?.to_string();
        if path.starts_with(&mount_point) {
            let depth = mount_point.len();
            // Later lines win ties: they are mounted on top.
            if best.as_ref().is_none_or(|(d, _, _)| depth >= *d) {
                best = Some((depth, fstype, mount_point));
            }
        }
    }
    best.map(|(_, fstype, mount_point)| (fstype, mount_point))
}

/// mountinfo writes space, tab, newline and backslash as octal escapes.
pub(crate) fn unescape_mountinfo(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.by_ref().take(3).collect();
            match u8::from_str_radix(&code, 8) {
                Ok(b) => out.push(b as char),
                Err(_) => {
                    out.push('\\');
                    out.push_str(&code);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
