//! Where workers may run: a list of CPUs (`--cpus-allowed 0-3,6`, fio's
//! `cpus_allowed`), shared by every worker or split one CPU each
//! (`--cpus-allowed-policy`, fio's `cpus_allowed_policy`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// CPUs by number, in order, each once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CpuList(Vec<usize>);

/// The most CPUs a list may name (the kernel's cpu_set_t).
const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

impl CpuList {
    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// The CPUs worker `index` may run on under `policy`.
    pub fn for_worker(&self, policy: CpuPolicy, index: usize) -> Vec<usize> {
        match policy {
            CpuPolicy::Shared => self.0.clone(),
            CpuPolicy::Split => vec![self.0[index % self.0.len()]],
        }
    }

    /// The CPUs this process may run on now (sched_getaffinity).
    pub fn of_this_process() -> Option<CpuList> {
        // SAFETY: the set is a plain bit array the call fills in.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return None;
            }
            Some(CpuList(
                (0..MAX_CPUS)
                    .filter(|&c| libc::CPU_ISSET(c, &set))
                    .collect(),
            ))
        }
    }

    /// Binds the calling thread to `cpus` (sched_setaffinity of thread 0).
    pub fn bind_this_thread(cpus: &[usize]) -> Result<(), String> {
        // SAFETY: the set is a plain bit array built here.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        match rc {
            0 => Ok(()),
            _ => Err(format!(
                "cannot run on CPUs {}: {}",
                CpuList(cpus.to_vec()),
                std::io::Error::last_os_error()
            )),
        }
    }
}

impl FromStr for CpuList {
    type Err = String;
    /// `0-3,6`: numbers and ranges, as taskset -c and fio's cpus_allowed.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not a list of CPUs (0-3,6)");
        let mut cpus = Vec::new();
        for part in s.split(',') {
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part.trim(), part.trim()),
            };
            let (first, last): (usize, usize) = (
                first.parse().map_err(|_| bad())?,
                last.parse().map_err(|_| bad())?,
            );
            if first > last || last >= MAX_CPUS {
                return Err(bad());
            }
            cpus.extend(first..=last);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuList(cpus))
    }
}

/// As taskset prints it: runs as ranges, `0-3,6`.
impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            while i + 1 < self.0.len() && self.0[i + 1] == self.0[i] + 1 {
                i += 1;
            }
            parts.push(match self.0[i] == start {
                true => start.to_string(),
                false => format!("{start}-{}", self.0[i]),
            });
            i += 1;
        }
        f.write_str(&parts.join(","))
    }
}

impl From<CpuList> for String {
    fn from(c: CpuList) -> String {
        c.to_string()
    }
}

impl TryFrom<String> for CpuList {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// How the workers share `--cpus-allowed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuPolicy {
    /// Every worker may run on every CPU of the list.
    #[default]
    Shared,
    /// Each worker on one CPU of the list, in turn (round again when there
    /// are more workers than CPUs).
    Split,
}

impl CpuPolicy {
    pub fn name(self) -> &'static str {
        match self {
            CpuPolicy::Shared => "shared",
            CpuPolicy::Split => "split",
        }
    }

    pub fn is_shared(&self) -> bool {
        *self == CpuPolicy::Shared
    }
}

impl fmt::Display for CpuPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CpuPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [CpuPolicy::Shared, CpuPolicy::Split]
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown policy '{s}' (expected shared or split)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_and_print_as_taskset_writes_them() {
        let l: CpuList = "6,0-3,2".parse().unwrap();
        assert_eq!(l.cpus(), [0, 1, 2, 3, 6]);
        assert_eq!(l.to_string(), "0-3,6");
        assert_eq!(l.for_worker(CpuPolicy::Split, 5), [0]);
        assert_eq!(l.for_worker(CpuPolicy::Split, 4), [6]);
        assert_eq!(l.for_worker(CpuPolicy::Shared, 4), [0, 1, 2, 3, 6]);
        for bad in ["", "3-1", "x", "0-", "99999"] {
            assert!(bad.parse::<CpuList>().is_err(), "{bad}");
        }
    }
}
