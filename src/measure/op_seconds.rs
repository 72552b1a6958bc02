//! The per-operation recorder of every run that is not a disk workload's
//! worker loop: object-store requests, training samples and batches, tree
//! and metadata operations. Each worker records each operation it finished
//! under its kind, on a lock of its own. A slice of time (a second, or from
//! 100 µs for phases that last about a second) is closed by the first
//! worker to finish an operation after its end, or by the sampler when no
//! worker does, merging the workers' slices into one `Interval` per kind
//! with its histogram, as the disk path's seconds are. Workers close slices
//! so that a late-scheduled sampler on a busy host cannot fold a phase of
//! milliseconds into one slice. `fathom check` resamples
//! these slices exactly as it does a disk run's seconds, so every kind of
//! run is judged by the one analysis.

use super::histogram::LatencyHistogram;
use super::intervals::{DirectionSample, Interval};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What the workers did of one kind of operation in one slice.
#[derive(Debug, Clone, Default)]
pub struct OpSample {
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub latency: LatencyHistogram,
}

impl OpSample {
    fn add(&mut self, other: &OpSample) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.errors += other.errors;
        self.latency.add(&other.latency);
    }

    /// The sample as a disk direction's, for the live board.
    pub fn as_direction(&self) -> DirectionSample {
        DirectionSample {
            ios: self.ops,
            bytes: self.bytes,
            errors: self.errors,
            latency: self.latency.clone(),
            ..Default::default()
        }
    }
}

/// A closed slice: its index, its length in seconds, and each kind's sample.
type ClosedSlice<K> = (u64, f64, BTreeMap<K, OpSample>);

/// Each kind's slices, in time order.
pub type OpSeries<K> = BTreeMap<K, Vec<Interval>>;

/// How a recorder cuts time into slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slicing {
    /// Whole seconds: object-store and training runs, which run for a
    /// time and whose seconds reports draw.
    Seconds,
    /// From 100 µs, two slices made one each time there are `MOST`, so
    /// that a phase of any length has between `MOST / 2` and `MOST`
    /// slices of one length: tree and metadata phases, which run for a
    /// count and often last a second or less.
    Adaptive,
}

/// Slices an adaptive recorder keeps at the most.
const MOST: u64 = 128;

impl Slicing {
    fn first(self) -> Duration {
        match self {
            Slicing::Seconds => Duration::from_secs(1),
            Slicing::Adaptive => Duration::from_micros(100),
        }
    }
}

struct Closed<K> {
    slice: Duration,
    count: u64,
    series: OpSeries<K>,
}

/// Records operations of kinds `K` from `workers` workers, slice by slice.
pub struct OpSeconds<K> {
    slicing: Slicing,
    started: Instant,
    open: Vec<Mutex<BTreeMap<K, OpSample>>>,
    closed: Mutex<Closed<K>>,
    /// Held while a slice is found due and closed, so that it is closed once.
    closing: Mutex<()>,
    /// When the open slice ends, in nanoseconds from `started`: a worker
    /// reads it without a lock, and takes `closing` only once it passed.
    due_ns: AtomicU64,
    /// Slices closed by workers, for the sampler to hand to `on_slice`.
    handed: Mutex<Vec<ClosedSlice<K>>>,
}

impl<K: Ord + Copy + Send> OpSeconds<K> {
    /// A recorder of slices cut as `slicing` says, from `started`.
    pub fn new(workers: usize, slicing: Slicing, started: Instant) -> Self {
        OpSeconds {
            slicing,
            started,
            open: (0..workers.max(1)).map(|_| Mutex::default()).collect(),
            closed: Mutex::new(Closed {
                slice: slicing.first(),
                count: 0,
                series: BTreeMap::new(),
            }),
            closing: Mutex::default(),
            due_ns: AtomicU64::new(slicing.first().as_nanos() as u64),
            handed: Mutex::default(),
        }
    }

    /// Worker `worker` finished an operation of kind `op` in `ns`, moving
    /// `bytes`.
    pub fn record(&self, worker: usize, op: K, ns: u64, bytes: u64) {
        self.close_due(Instant::now(), true);
        let mut open = self.open[worker % self.open.len()]
            .lock()
            .expect("not poisoned");
        let s = open.entry(op).or_default();
        s.ops += 1;
        s.bytes += bytes;
        s.latency.record(ns);
    }

    /// Worker `worker`'s operation of kind `op` failed.
    pub fn failed(&self, worker: usize, op: K) {
        self.close_due(Instant::now(), true);
        let mut open = self.open[worker % self.open.len()]
            .lock()
            .expect("not poisoned");
        open.entry(op).or_default().errors += 1;
    }

    /// When the slice open now ends, and how long slices are.
    fn next_end(&self) -> (Instant, Duration) {
        let closed = self.closed.lock().expect("not poisoned");
        let end = self.started + closed.slice.mul_f64((closed.count + 1) as f64);
        (end, closed.slice)
    }

    /// Closes every slice that ended by `now`. A worker keeps what it
    /// closed for the sampler, which gets those and its own, in order.
    fn close_due(&self, now: Instant, by_worker: bool) -> Vec<ClosedSlice<K>> {
        let since = now.saturating_duration_since(self.started).as_nanos() as u64;
        if by_worker && since < self.due_ns.load(Ordering::Relaxed) {
            return Vec::new();
        }
        let _closing = self.closing.lock().expect("not poisoned");
        let mut closed = match by_worker {
            true => Vec::new(),
            false => std::mem::take(&mut *self.handed.lock().expect("not poisoned")),
        };
        loop {
            let (end, slice) = self.next_end();
            if now < end {
                break;
            }
            let (index, merged) = self.close(slice.as_secs_f64());
            closed.push((index, slice.as_secs_f64(), merged));
        }
        if by_worker && !closed.is_empty() {
            self.handed
                .lock()
                .expect("not poisoned")
                .append(&mut closed);
        }
        closed
    }

    /// Closes the next slice, of `dur_s` seconds: every worker's samples
    /// merged, kept as each kind's interval, and returned with the slice's
    /// index (for the live board).
    fn close(&self, dur_s: f64) -> (u64, BTreeMap<K, OpSample>) {
        let mut merged: BTreeMap<K, OpSample> = BTreeMap::new();
        for worker in &self.open {
            let taken = std::mem::take(&mut *worker.lock().expect("not poisoned"));
            for (op, sample) in taken {
                merged.entry(op).or_default().add(&sample);
            }
        }
        let mut closed = self.closed.lock().expect("not poisoned");
        let index = closed.count;
        closed.count += 1;
        let slice = closed.slice.as_secs_f64();
        let t_s = index as f64 * slice;
        let known: Vec<K> = closed.series.keys().copied().collect();
        // A kind seen before and idle now gets an empty slice: the series
        // of every kind cover the same time.
        for op in merged.keys().copied().chain(known) {
            let series = closed.series.entry(op).or_insert_with(|| {
                // A kind first seen late starts with the idle slices before it.
                (0..index).map(|i| idle(i as f64 * slice, slice)).collect()
            });
            if series.len() as u64 > index {
                continue;
            }
            series.push(match merged.get(&op) {
                Some(s) => interval(t_s, dur_s, s),
                None => idle(t_s, dur_s),
            });
        }
        if self.slicing == Slicing::Adaptive && closed.count == MOST {
            for series in closed.series.values_mut() {
                *series = series.chunks(2).map(joined).collect();
            }
            closed.count /= 2;
            closed.slice *= 2;
        }
        let due = closed.slice.mul_f64((closed.count + 1) as f64);
        self.due_ns.store(due.as_nanos() as u64, Ordering::Relaxed);
        (index, merged)
    }

    /// Runs `body` with a sampler closing each whole slice (each handed to
    /// `on_slice` with its index and length), then closes the part slice
    /// at the end; returns what `body` returned and every kind's slices.
    pub fn sampled<R: Send>(
        &self,
        mut on_slice: impl FnMut(u64, f64, &BTreeMap<K, OpSample>) + Send,
        body: impl FnOnce(&Self) -> R + Send,
    ) -> (R, OpSeries<K>)
    where
        K: Sync,
    {
        let done = AtomicBool::new(false);
        let (result, on_slice) = std::thread::scope(|s| {
            let sampler = s.spawn(|| {
                loop {
                    let last = done.load(Ordering::Relaxed);
                    for (index, slice, merged) in self.close_due(Instant::now(), false) {
                        on_slice(index, slice, &merged);
                    }
                    if last {
                        break;
                    }
                    let (end, _) = self.next_end();
                    let now = Instant::now();
                    if now < end {
                        std::thread::sleep((end - now).min(Duration::from_millis(20)));
                    }
                }
                on_slice
            });
            let result = body(self);
            done.store(true, Ordering::Relaxed);
            (result, sampler.join().expect("the sampler thread"))
        });
        let mut on_slice = on_slice;
        let (count, slice) = {
            let closed = self.closed.lock().expect("not poisoned");
            (closed.count, closed.slice.as_secs_f64())
        };
        let rest = self.started.elapsed().as_secs_f64() - count as f64 * slice;
        // A part slice of under a tenth of a slice (or of a millisecond)
        // says nothing a rate could use.
        if rest > (slice / 10.0).min(1e-3) {
            let (index, merged) = self.close(rest);
            on_slice(index, rest, &merged);
        }
        let series = std::mem::take(&mut self.closed.lock().expect("not poisoned").series);
        (result, series)
    }
}

/// Consecutive slices as one: counts added, histograms merged.
fn joined(pair: &[Interval]) -> Interval {
    let mut latency = LatencyHistogram::new();
    let mut sample = OpSample::default();
    let mut dur_s = 0.0;
    for i in pair {
        if let Some(h) = i
            .histogram
            .as_deref()
            .and_then(|h| LatencyHistogram::decode(h).ok())
        {
            latency.add(&h);
        }
        sample.ops += i.ios;
        sample.bytes += i.bytes;
        sample.errors += i.errors;
        dur_s += i.dur_s;
    }
    sample.latency = latency;
    interval(pair[0].t_s, dur_s, &sample)
}

fn idle(t_s: f64, dur_s: f64) -> Interval {
    Interval {
        t_s,
        dur_s,
        ..Default::default()
    }
}

/// A slice's interval: counts, rates and the histogram.
fn interval(t_s: f64, dur_s: f64, s: &OpSample) -> Interval {
    Interval::of(t_s, dur_s, (s.ops, s.bytes, s.errors), &s.latency)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_in_one_slice_and_every_kind_covers_the_same_time() {
        let recorder = OpSeconds::new(2, Slicing::Adaptive, Instant::now());
        let mut seen = 0;
        let ((), series) = recorder.sampled(
            |_, _, merged| seen += merged.values().map(|s| s.ops).sum::<u64>(),
            |r| {
                for i in 0..40u64 {
                    r.record((i % 2) as usize, "a", 1000 + i, 10);
                    if i >= 20 {
                        r.record(0, "b", 5000, 0);
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                r.failed(1, "a");
            },
        );
        let a = &series["a"];
        let b = &series["b"];
        assert_eq!(a.iter().map(|i| i.ios).sum::<u64>(), 40);
        assert_eq!(b.iter().map(|i| i.ios).sum::<u64>(), 20);
        assert_eq!(seen, 60, "the sampler was handed every operation");
        assert_eq!(a.len(), b.len(), "{a:?} {b:?}");
        assert!(a.len() >= 10, "{} slices", a.len());
        let time: f64 = a.iter().map(|i| i.dur_s).sum();
        assert!(time >= 0.2, "{time}");
        // Slices follow one another without a gap.
        for w in a.windows(2) {
            assert!((w[0].t_s + w[0].dur_s - w[1].t_s).abs() < 1e-9, "{w:?}");
        }
        assert!(
            a.iter()
                .filter(|i| i.ios > 0)
                .all(|i| i.histogram.is_some())
        );
    }

    /// Workers close the slices they outlive: a phase of milliseconds is
    /// cut into slices even when the sampler never runs.
    #[test]
    fn workers_close_slices_without_the_sampler() {
        let recorder = OpSeconds::new(1, Slicing::Adaptive, Instant::now());
        // Until ten slices are handed, not for a fixed 3 ms: a busy host
        // may hold the thread off the CPU for most of any short window.
        let until = Instant::now() + Duration::from_secs(10);
        while recorder.handed.lock().unwrap().len() < 10 && Instant::now() < until {
            recorder.record(0, (), 1000, 1);
        }
        let handed = recorder.handed.lock().unwrap();
        assert!(handed.len() >= 10, "{} slices", handed.len());
        let indices: Vec<u64> = handed.iter().map(|h| h.0).collect();
        assert!(indices.windows(2).all(|w| w[1] == w[0] + 1), "{indices:?}");
    }

    /// A phase far longer than the first slices has them joined, two by
    /// two, and keeps between 64 and 128 of one length: nothing lost.
    #[test]
    fn an_adaptive_recorder_joins_its_slices_and_loses_no_operation() {
        let recorder = OpSeconds::new(1, Slicing::Adaptive, Instant::now());
        let ((), series) = recorder.sampled(
            |_, _, _| {},
            |r| {
                let until = Instant::now() + Duration::from_millis(1500);
                let mut n = 0;
                while Instant::now() < until {
                    r.record(0, (), 1000 + n % 7, 1);
                    n += 1;
                    if n % 100 == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                }
            },
        );
        let s = &series[&()];
        assert!((64..=129).contains(&s.len()), "{} slices", s.len());
        let whole: Vec<f64> = s[..s.len() - 1].iter().map(|i| i.dur_s).collect();
        assert!(
            whole.iter().all(|d| (d - whole[0]).abs() < 1e-9),
            "{whole:?}"
        );
        assert!(whole[0] >= 0.008 && whole[0] <= 0.032, "{whole:?}");
        let counted: u64 = s
            .iter()
            .map(|i| {
                i.histogram
                    .as_deref()
                    .map_or(0, |h| LatencyHistogram::decode(h).unwrap().count())
            })
            .sum();
        assert_eq!(counted, s.iter().map(|i| i.ios).sum::<u64>());
    }
}
