//! A trace's events in time order, read in file order. Most traces are
//! written in time order, or nearly: fathom's recordings in per-worker
//! batches, blkparse's completions after the I/Os they answer. How far out
//! of order a file is (its disorder: the most any event comes after a later
//! one) is learnt when the trace is first read; events are then held only
//! until nothing still to come can be earlier, so memory is what that
//! disorder spans, never the whole trace.

use super::TraceError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Tracks how far out of order a sequence of times is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disorder {
    latest: u64,
    /// The most any time came after a later one, in ns.
    pub ns: u64,
}

impl Disorder {
    pub fn see(&mut self, t_ns: u64) {
        self.ns = self.ns.max(self.latest.saturating_sub(t_ns));
        self.latest = self.latest.max(t_ns);
    }
}

/// An item held until its turn: ordered by time, then by arrival, so that
/// items of one time keep the file's order.
struct Held<T> {
    t_ns: u64,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.t_ns, self.seq) == (other.t_ns, other.seq)
    }
}
impl<T> Eq for Held<T> {}
impl<T> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Held<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.t_ns, self.seq).cmp(&(other.t_ns, other.seq))
    }
}

/// The items of `input` in time order, given that none comes more than
/// `disorder_ns` after a later one.
pub struct Ordered<I, T> {
    input: I,
    file: String,
    time: fn(&T) -> u64,
    disorder_ns: u64,
    held: BinaryHeap<Reverse<Held<T>>>,
    seq: u64,
    latest: u64,
    ended: bool,
}

impl<I, T> Ordered<I, T>
where
    I: Iterator<Item = Result<T, TraceError>>,
{
    /// `file` names the trace in the error of a file changed since.
    pub fn new(input: I, time: fn(&T) -> u64, disorder_ns: u64, file: &str) -> Self {
        Ordered {
            input,
            file: file.to_string(),
            time,
            disorder_ns,
            held: BinaryHeap::new(),
            seq: 0,
            latest: 0,
            ended: false,
        }
    }

    /// Whether the earliest item held can go: nothing still to come is
    /// earlier.
    fn earliest_is_due(&self) -> bool {
        self.held.peek().is_some_and(|Reverse(h)| {
            self.ended || h.t_ns.saturating_add(self.disorder_ns) <= self.latest
        })
    }
}

impl<I, T> Iterator for Ordered<I, T>
where
    I: Iterator<Item = Result<T, TraceError>>,
{
    type Item = Result<T, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.earliest_is_due() {
            if self.ended {
                return None;
            }
            match self.input.next() {
                None => self.ended = true,
                Some(Err(e)) => {
                    self.ended = true;
                    self.held.clear();
                    return Some(Err(e));
                }
                Some(Ok(item)) => {
                    let t_ns = (self.time)(&item);
                    if t_ns.saturating_add(self.disorder_ns) < self.latest {
                        // The file changed since its disorder was learnt.
                        self.ended = true;
                        self.held.clear();
                        return Some(Err(TraceError {
                            file: self.file.clone(),
                            line: 0,
                            message: "is further out of time order than when it was first read: did it change?".into(),
                        }));
                    }
                    self.latest = self.latest.max(t_ns);
                    self.held.push(Reverse(Held {
                        t_ns,
                        seq: self.seq,
                        item,
                    }));
                    self.seq += 1;
                }
            }
        }
        self.held.pop().map(|Reverse(h)| Ok(h.item))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordered(times: &[u64]) -> Vec<(u64, usize)> {
        let mut disorder = Disorder::default();
        times.iter().for_each(|&t| disorder.see(t));
        let input = times.iter().copied().enumerate().map(|(i, t)| Ok((t, i)));
        Ordered::new(input, |x: &(u64, usize)| x.0, disorder.ns, "t")
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn batches_come_out_in_time_order_keeping_ties_in_file_order() {
        let times = [10, 20, 30, 5, 15, 25, 35, 30, 40];
        let mut sorted: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
        sorted.sort_by_key(|x| x.0);
        assert_eq!(ordered(&times), sorted);
        assert_eq!(ordered(&[]), []);
    }

    #[test]
    fn memory_is_what_the_disorder_spans() {
        // In order: nothing waits beyond the item itself.
        let mut o = Ordered::new((0..1000u64).map(Ok), |t| *t, 0, "t");
        for _ in 0..500 {
            o.next();
        }
        assert!(o.held.len() <= 1, "{}", o.held.len());
    }

    #[test]
    fn a_file_more_out_of_order_than_learnt_is_an_error() {
        let input = [10u64, 0].into_iter().map(Ok);
        let mut o = Ordered::new(input, |t| *t, 5, "t");
        assert!(o.next().unwrap().is_err());
    }
}
