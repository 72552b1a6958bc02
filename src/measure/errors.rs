//! I/O errors and short transfers, counted per target. fathom never retries
//! an I/O: a benchmark that hides errors reports numbers the storage did not
//! deliver.

use serde::{Deserialize, Serialize};

const LISTED: usize = 5;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IoErrors {
    /// All failed I/Os: the sum of the four kinds below.
    pub count: u64,
    /// No space left on the device (ENOSPC, EDQUOT).
    pub enospc: u64,
    /// The device reported an I/O error (EIO).
    pub eio: u64,
    /// Fewer bytes than asked (end of file, a shrunken target).
    pub short: u64,
    pub other: u64,
    /// The same errors by what failed: reads, writes, trims and flushes
    /// (fsync, fdatasync).
    #[serde(default)]
    pub read: u64,
    #[serde(default)]
    pub write: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim: u64,
    #[serde(default)]
    pub flush: u64,
    /// The first few errors, described.
    pub first: Vec<String>,
}

/// What failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Read,
    Write,
    Trim,
    Flush,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl IoErrors {
    /// Counts a completion `result` (bytes, or a negative errno) of `op`
    /// that is not the full length.
    pub fn record(&mut self, op: Operation, result: i32, describe: impl FnOnce() -> String) {
        self.count += 1;
        match op {
            Operation::Read => self.read += 1,
            Operation::Write => self.write += 1,
            Operation::Trim => self.trim += 1,
            Operation::Flush => self.flush += 1,
        }
        match -result {
            libc::ENOSPC | libc::EDQUOT => self.enospc += 1,
            libc::EIO => self.eio += 1,
            e if e <= 0 => self.short += 1,
            _ => self.other += 1,
        }
        if self.first.len() < LISTED {
            self.first.push(describe());
        }
    }

    pub fn merge(&mut self, other: &IoErrors) {
        self.count += other.count;
        self.enospc += other.enospc;
        self.eio += other.eio;
        self.short += other.short;
        self.other += other.other;
        self.read += other.read;
        self.write += other.write;
        self.trim += other.trim;
        self.flush += other.flush;
        for e in &other.first {
            if self.first.len() < LISTED {
                self.first.push(e.clone());
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// "3 I/O errors (2 ENOSPC, 1 short); first: write of ... failed: ..."
    pub fn summary(&self) -> String {
        let kinds: Vec<String> = [
            (self.enospc, "ENOSPC"),
            (self.eio, "EIO"),
            (self.short, "short"),
            (self.other, "other"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, k)| format!("{n} {k}"))
        .collect();
        let mut s = format!(
            "{} I/O error{} ({})",
            self.count,
            if self.count == 1 { "" } else { "s" },
            kinds.join(", ")
        );
        if let Some(first) = self.first.first() {
            s.push_str(&format!("; first: {first}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_counts_add_up_and_the_list_stays_short() {
        let mut a = IoErrors::default();
        a.record(Operation::Read, -libc::EIO, || "a1".into());
        a.record(Operation::Read, -libc::EBADF, || "a2".into());
        let mut b = IoErrors::default();
        for (i, errno) in [libc::EIO, libc::EIO, libc::EBADF, libc::ENOSPC]
            .into_iter()
            .enumerate()
        {
            b.record(Operation::Read, -errno, || format!("b{i}"));
        }
        b.record(Operation::Read, 10, || "b4".into());
        a.merge(&b);
        assert_eq!(
            (a.count, a.enospc, a.eio, a.short, a.other),
            (7, 1, 3, 1, 2)
        );
        assert_eq!(a.first, ["a1", "a2", "b0", "b1", "b2"]);
        assert!(!a.is_empty() && IoErrors::default().is_empty());
        // Only the kinds that happened are named.
        let mut only_eio = IoErrors::default();
        only_eio.record(Operation::Read, -libc::EIO, || "x".into());
        assert_eq!(only_eio.summary(), "1 I/O error (1 EIO); first: x");
    }

    #[test]
    fn kinds_are_told_apart() {
        let mut e = IoErrors::default();
        e.record(Operation::Read, -libc::ENOSPC, || "a".into());
        e.record(Operation::Read, -libc::EIO, || "b".into());
        e.record(Operation::Read, 512, || "c".into());
        e.record(Operation::Read, 0, || "d".into());
        e.record(Operation::Read, -libc::EBADF, || "e".into());
        e.record(Operation::Read, -libc::EIO, || "f".into());
        assert_eq!(
            (e.count, e.enospc, e.eio, e.short, e.other),
            (6, 1, 2, 2, 1)
        );
        assert_eq!(e.first.len(), 5);
        assert!(
            e.summary()
                .starts_with("6 I/O errors (1 ENOSPC, 2 EIO, 2 short, 1 other)")
        );
    }
}
