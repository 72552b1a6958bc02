//! How full the queue was: I/Os in flight when each was submitted, and how
//! many each submission and each reap carried, in fio's buckets (its
//! `iodepth_level`, `iodepth_submit` and `iodepth_complete`).

use serde::{Deserialize, Serialize};

/// Counts per bucket. `in_flight` buckets are 1, 2-3, 4-7, 8-15, 16-31,
/// 32-63 and 64 or more I/Os in flight, counted per I/O submitted;
/// `per_submit` and `per_reap` buckets are 0, 1-4, 5-8, 9-16, 17-32, 33-64
/// and more than 64 I/Os, counted per call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueDepths {
    pub in_flight: [u64; 7],
    pub per_submit: [u64; 7],
    pub per_reap: [u64; 7],
}

impl QueueDepths {
    /// `n` I/Os went to the kernel together, leaving `in_flight` I/Os
    /// (theirs included) out: as fio counts its `IO depths`, each I/O at
    /// the depth its submission left.
    #[inline]
    pub fn submitted_at(&mut self, in_flight: u32, n: u32) {
        let bucket = (31 - in_flight.max(1).leading_zeros()).min(6);
        self.in_flight[bucket as usize] += u64::from(n);
    }

    /// One submission carried `n` I/Os.
    #[inline]
    pub fn submission(&mut self, n: u32) {
        self.per_submit[batch_bucket(n)] += 1;
    }

    /// One reap found `n` completions.
    #[inline]
    pub fn reap(&mut self, n: u32) {
        self.per_reap[batch_bucket(n)] += 1;
    }

    pub fn add(&mut self, other: &QueueDepths) {
        for (mine, theirs) in [
            (&mut self.in_flight, &other.in_flight),
            (&mut self.per_submit, &other.per_submit),
            (&mut self.per_reap, &other.per_reap),
        ] {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.in_flight.iter().all(|&n| n == 0)
    }
}

/// 0, 1-4, 5-8, 9-16, 17-32, 33-64, more.
fn batch_bucket(n: u32) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        _ => ((32 - (n - 1).leading_zeros()) as usize - 1).min(6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_fios() {
        let mut q = QueueDepths::default();
        for depth in [1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 500] {
            q.submitted_at(depth, 1);
        }
        assert_eq!(q.in_flight, [1, 2, 2, 1, 2, 1, 2]);
        let buckets: Vec<usize> = [0, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 1000]
            .iter()
            .map(|&n| batch_bucket(n))
            .collect();
        assert_eq!(buckets, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
    }
}
