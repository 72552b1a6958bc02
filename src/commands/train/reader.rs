//! The training loop: each simulated accelerator takes its batches in
//! order, waiting for each until its data-loader threads have read it,
//! then computes for the workload's time per batch. Loader thread k of
//! an accelerator reads batches k, k + T, k + 2T ... (PyTorch's
//! DataLoader hands whole batches to its workers so), each at most
//! `prefetch` batches per thread ahead of the accelerator; with a
//! prefetch of 0 a batch is read only once the accelerator asks for it,
//! so reads and compute never overlap.
//!
//! AU is MLPerf's: of each accelerator's time from the end of its first
//! step to the end of its last, the share spent computing; averaged over
//! accelerators, then over epochs.

use super::dataset::Dataset;
use crate::engine::pace::SharedRate;
use crate::measure::direction::Direction;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::CompletedSecond;
use crate::measure::issue::WorkerTime;
use crate::measure::live::LiveBoard;
use crate::measure::op_seconds::{OpSample, OpSeconds, OpSeries, Slicing};
use crate::result::train::{AcceleratorResult, EpochResult};
use crate::spec::train::{Shuffle, TrainingSpec};
use crate::util::buffers::{BUFFER_ALIGN, Buffers};
use crate::util::stop::StopFlag;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Bytes read in one call: a sample larger than this is read in pieces,
/// each passing the rate cap on its own.
const CHUNK: usize = 1 << 20;

/// What every accelerator did over the whole run.
pub struct Measured {
    pub epochs: Vec<EpochResult>,
    pub accelerators: Vec<AcceleratorResult>,
    pub batch_wait: LatencyHistogram,
    pub sample_read: LatencyHistogram,
    pub samples: u64,
    pub bytes: u64,
    pub elapsed: Duration,
    /// Compute time of all accelerators in each whole second.
    pub compute_per_second: Vec<f64>,
    /// Each second's sample reads and batch waits, with their histograms.
    pub seconds: OpSeries<TrainOp>,
    /// The loader threads' time, and how much of it they waited for a
    /// CPU: a loader kept off the CPU starves its accelerator as a slow
    /// read would.
    pub loaders: WorkerTime,
    pub error: Option<String>,
}

/// What a training run's recorder keeps each second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TrainOp {
    /// A loader's read of one sample.
    SampleRead,
    /// An accelerator's wait for its next batch.
    BatchWait,
}

/// One accelerator's queue of batches.
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
}

struct QueueState {
    ready: Vec<bool>,
    /// Batches the accelerator has taken off the queue.
    taken: u64,
    /// Whether it waits for batch `taken` now.
    waiting: bool,
}

/// What is shared by every thread of one epoch.
struct Epoch<'a> {
    dataset: &'a Dataset,
    spec: &'a TrainingSpec,
    order: Vec<u64>,
    steps: u64,
    gate: Option<&'a SharedRate>,
    stop: &'a StopFlag,
    /// Set by the first failure, to end every thread of the epoch.
    cut: AtomicBool,
    error: Mutex<Option<String>>,
    started: Instant,
    samples: AtomicU64,
    bytes: AtomicU64,
    seconds: &'a OpSeconds<TrainOp>,
}

impl Epoch<'_> {
    fn ended(&self) -> bool {
        self.cut.load(Ordering::Relaxed) || self.stop.is_set()
    }

    fn fail(&self, why: String) {
        self.error.lock().unwrap().get_or_insert(why);
        self.cut.store(true, Ordering::Relaxed);
    }

    /// The global sample index of accelerator `a`'s batch `b`, item `k`.
    fn sample(&self, a: u32, b: u64, k: u64) -> u64 {
        let batch = self.spec.shape.batch_size;
        self.order[((a as u64 * self.steps + b) * batch + k) as usize]
    }
}

/// What one accelerator's thread measured in an epoch.
#[derive(Default)]
struct AcceleratorPart {
    waits: Vec<Duration>,
    computes: Vec<Duration>,
    /// Each step's time past its compute time: the host held the
    /// accelerator back (a busy host oversleeps), lost as a wait is.
    overslept: Vec<Duration>,
    batch_wait: LatencyHistogram,
    /// Compute time by whole second since the run's start.
    per_second: Vec<f64>,
}

impl AcceleratorPart {
    /// MLPerf's AU: the first step left out.
    fn au(&self) -> f64 {
        let skip = usize::from(self.computes.len() > 1);
        let compute: f64 = self.computes[skip..]
            .iter()
            .map(Duration::as_secs_f64)
            .sum();
        let wait: f64 = self.waits[skip..]
            .iter()
            .chain(self.overslept.get(skip..).unwrap_or_default())
            .map(Duration::as_secs_f64)
            .sum();
        if compute + wait > 0.0 {
            compute / (compute + wait)
        } else {
            0.0
        }
    }
}

/// Runs every epoch of `spec` over `dataset`: the figures, or what was
/// measured until a signal or a failure.
pub fn train(
    dataset: &Dataset,
    spec: &TrainingSpec,
    gate: Option<&SharedRate>,
    stop: &StopFlag,
    board: Option<&LiveBoard>,
) -> Measured {
    let n = spec.accelerators;
    let mut measured = Measured {
        epochs: Vec::new(),
        accelerators: (0..n)
            .map(|_| AcceleratorResult {
                rank: None,
                au: 0.0,
                steps: 0,
                compute_s: 0.0,
                wait_s: 0.0,
                overslept_s: 0.0,
            })
            .collect(),
        batch_wait: LatencyHistogram::new(),
        sample_read: LatencyHistogram::new(),
        samples: 0,
        bytes: 0,
        elapsed: Duration::ZERO,
        compute_per_second: Vec::new(),
        seconds: OpSeries::new(),
        loaders: WorkerTime::default(),
        error: None,
    };
    let started = Instant::now();
    let mut au_sums = vec![0.0; n as usize];
    let workers = n as usize * (spec.shape.read_threads.max(1) as usize + 1);
    let recorder = OpSeconds::new(workers, Slicing::Seconds, started);
    let show = |index: u64, dur_s: f64, merged: &std::collections::BTreeMap<TrainOp, OpSample>| {
        if let (Some(board), Some(reads)) = (board, merged.get(&TrainOp::SampleRead)) {
            let mut completed = CompletedSecond {
                index,
                dur_s,
                directions: Default::default(),
            };
            completed.directions[Direction::Read as usize] = reads.as_direction();
            board.second("read", &completed);
        }
    };
    let ((), seconds) = recorder.sampled(show, |recorder| {
        for e in 0..spec.shape.epochs {
            if stop.is_set() {
                break;
            }
            let epoch = Epoch {
                dataset,
                spec,
                order: order(spec, e),
                steps: spec.steps_per_epoch(),
                gate,
                stop,
                cut: AtomicBool::new(false),
                error: Mutex::new(None),
                started,
                samples: AtomicU64::new(0),
                bytes: AtomicU64::new(0),
                seconds: recorder,
            };
            let epoch_start = Instant::now();
            let (parts, loaders) = run_epoch(&epoch);
            let elapsed = epoch_start.elapsed();
            for (h, time) in loaders {
                measured.sample_read.add(&h);
                measured.loaders.add(&time);
            }
            let mut au = 0.0;
            for (a, part) in parts.iter().enumerate() {
                let acc = &mut measured.accelerators[a];
                acc.steps += part.computes.len() as u64;
                acc.compute_s += part.computes.iter().map(Duration::as_secs_f64).sum::<f64>();
                acc.wait_s += part.waits.iter().map(Duration::as_secs_f64).sum::<f64>();
                acc.overslept_s += part
                    .overslept
                    .iter()
                    .map(Duration::as_secs_f64)
                    .sum::<f64>();
                au_sums[a] += part.au();
                au += part.au();
                measured.batch_wait.add(&part.batch_wait);
                merge_seconds(&mut measured.compute_per_second, &part.per_second);
            }
            let whole = parts.iter().all(|p| p.computes.len() as u64 == epoch.steps);
            measured.samples += epoch.samples.load(Ordering::Relaxed);
            measured.bytes += epoch.bytes.load(Ordering::Relaxed);
            if let Some(why) = epoch.error.into_inner().unwrap() {
                measured.error = Some(why);
                break;
            }
            if !whole {
                break;
            }
            measured.epochs.push(EpochResult {
                epoch: e + 1,
                steps: epoch.steps,
                elapsed_s: elapsed.as_secs_f64(),
                au: au / n as f64,
                samples: epoch.samples.load(Ordering::Relaxed),
                bytes: epoch.bytes.load(Ordering::Relaxed),
            });
        }
    });
    measured.seconds = seconds;
    let epochs = measured.epochs.len().max(1) as f64;
    for (acc, sum) in measured.accelerators.iter_mut().zip(au_sums) {
        acc.au = sum / epochs;
    }
    measured.elapsed = started.elapsed();
    measured
}

/// The epoch's order of the dataset's samples.
fn order(spec: &TrainingSpec, epoch: u32) -> Vec<u64> {
    let mut order: Vec<u64> = (0..spec.samples()).collect();
    if spec.shape.shuffle == Shuffle::Sample {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(
            spec.seed ^ (u64::from(epoch) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        order.shuffle(&mut rng);
    }
    order
}

fn merge_seconds(into: &mut Vec<f64>, from: &[f64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0.0);
    }
    for (i, v) in from.iter().enumerate() {
        into[i] += v;
    }
}

/// One epoch: every accelerator's thread and its loaders, all started
/// together; returns each accelerator's part and each loader's sample
/// reads.
fn run_epoch(epoch: &Epoch) -> (Vec<AcceleratorPart>, Vec<(LatencyHistogram, WorkerTime)>) {
    let n = epoch.spec.accelerators;
    let threads = epoch.spec.shape.read_threads.max(1);
    let queues: Vec<Queue> = (0..n)
        .map(|_| Queue {
            state: Mutex::new(QueueState {
                ready: vec![false; epoch.steps as usize],
                taken: 0,
                waiting: false,
            }),
            changed: Condvar::new(),
        })
        .collect();
    std::thread::scope(|s| {
        let loaders: Vec<_> = (0..n)
            .flat_map(|a| (0..threads).map(move |k| (a, k)))
            .map(|(a, k)| {
                let queue = &queues[a as usize];
                s.spawn(move || load(epoch, queue, a, k, threads))
            })
            .collect();
        let accelerators: Vec<_> = (0..n)
            .map(|a| {
                let queue = &queues[a as usize];
                s.spawn(move || accelerate(epoch, queue, a))
            })
            .collect();
        let parts = accelerators
            .into_iter()
            .map(|h| h.join().expect("an accelerator thread"))
            .collect();
        // Loaders still waiting for room once their accelerator stopped
        // are woken to end.
        epoch.cut.store(true, Ordering::Relaxed);
        for q in &queues {
            q.changed.notify_all();
        }
        let reads = loaders
            .into_iter()
            .map(|h| h.join().expect("a loader thread"))
            .collect();
        (parts, reads)
    })
}

/// An accelerator: takes each batch when ready, then computes.
fn accelerate(epoch: &Epoch, queue: &Queue, a: u32) -> AcceleratorPart {
    let loaders = epoch.spec.accelerators * epoch.spec.shape.read_threads.max(1);
    let mut part = AcceleratorPart::default();
    let compute = Duration::from_secs_f64(epoch.spec.compute_s);
    // A sleep wakes when asked, not up to 50 µs later: the spin at a
    // step's end can then be short (COMPUTE_SPIN).
    // SAFETY: PR_SET_TIMERSLACK takes an integer and changes only this
    // thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    for b in 0..epoch.steps {
        let asked = Instant::now();
        {
            let mut state = queue.state.lock().unwrap();
            state.waiting = true;
            queue.changed.notify_all();
            while !state.ready[b as usize] {
                if epoch.ended() {
                    return part;
                }
                state = queue
                    .changed
                    .wait_timeout(state, Duration::from_millis(50))
                    .unwrap()
                    .0;
            }
            state.waiting = false;
            state.taken = b + 1;
            queue.changed.notify_all();
        }
        let began = Instant::now();
        let wait = began - asked;
        part.batch_wait.record(wait.as_nanos() as u64);
        epoch.seconds.record(
            (loaders + a) as usize,
            TrainOp::BatchWait,
            wait.as_nanos() as u64,
            0,
        );
        part.waits.push(wait);
        compute_for(began, compute);
        let ended = Instant::now();
        // The compute asked is the accelerator's; what the host added to
        // it is time lost, as DLIO counts it.
        part.computes.push(compute.min(ended - began));
        part.overslept.push((ended - began).saturating_sub(compute));
        spread_over_seconds(
            &mut part.per_second,
            began - epoch.started,
            (began + compute).min(ended) - epoch.started,
        );
    }
    part
}

/// Computes (sleeps) until `compute` after `began`: asleep but for the
/// last stretch (a quarter of the step, at most `COMPUTE_SPIN`), spent
/// awake, so that a step overruns by the host's doing (a busy host), not
/// by a timer's slack or a wake-up's delay.
fn compute_for(began: Instant, compute: Duration) {
    let end = began + compute;
    let margin = (compute / 4).min(COMPUTE_SPIN);
    let left = end.saturating_duration_since(Instant::now());
    if left > margin {
        std::thread::sleep(left - margin);
    }
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// The awake end of a step's compute: about what waking from a sleep
/// takes here (the thread's timer slack set to nothing), and no more, for
/// the emulated accelerators' spinning is CPU the host's storage stack
/// would use (a millisecond a step was 0.12 ms of CPU a sample at 0.02 s a
/// batch, and DLIO's accelerators sleep).
const COMPUTE_SPIN: Duration = Duration::from_micros(100);

/// Adds the span from `from` to `to` (since the run's start) to the
/// seconds it covers.
fn spread_over_seconds(seconds: &mut Vec<f64>, from: Duration, to: Duration) {
    let (mut at, end) = (from.as_secs_f64(), to.as_secs_f64());
    while at < end {
        let second = at.floor();
        let upto = end.min(second + 1.0);
        let i = second as usize;
        if seconds.len() <= i {
            seconds.resize(i + 1, 0.0);
        }
        seconds[i] += upto - at;
        at = upto;
    }
}

/// Loader thread `k` of accelerator `a`: its reads' latencies, and its
/// time with the share it waited for a CPU.
fn load(
    epoch: &Epoch,
    queue: &Queue,
    a: u32,
    k: u32,
    threads: u32,
) -> (LatencyHistogram, WorkerTime) {
    let began = Instant::now();
    let waited_before = crate::measure::cpu::thread_runnable_wait_ns();
    let reads = load_batches(epoch, queue, a, k, threads);
    let waited_after = crate::measure::cpu::thread_runnable_wait_ns();
    let time = WorkerTime {
        ran_ns: began.elapsed().as_nanos() as u64,
        waited_for_cpu_ns: waited_before
            .zip(waited_after)
            .map(|(before, after)| after.saturating_sub(before)),
        ..WorkerTime::default()
    };
    (reads, time)
}

/// Loader thread `k`'s batches, each when there is room for it in the
/// queue.
fn load_batches(epoch: &Epoch, queue: &Queue, a: u32, k: u32, threads: u32) -> LatencyHistogram {
    let mut reads = LatencyHistogram::new();
    let mut reader = SampleReader::new(epoch.dataset, epoch.spec.direct);
    let room = u64::from(threads * epoch.spec.shape.prefetch);
    let mut b = u64::from(k);
    while b < epoch.steps {
        {
            let mut state = queue.state.lock().unwrap();
            while !(b < state.taken + room || (b == state.taken && state.waiting)) {
                if epoch.ended() {
                    return reads;
                }
                state = queue
                    .changed
                    .wait_timeout(state, Duration::from_millis(50))
                    .unwrap()
                    .0;
            }
        }
        for item in 0..epoch.spec.shape.batch_size {
            if epoch.ended() {
                return reads;
            }
            let sample = epoch.sample(a, b, item);
            let began = Instant::now();
            match reader.read(sample, epoch.gate) {
                Ok(bytes) => {
                    let ns = began.elapsed().as_nanos() as u64;
                    reads.record(ns);
                    epoch.samples.fetch_add(1, Ordering::Relaxed);
                    epoch.bytes.fetch_add(bytes, Ordering::Relaxed);
                    let loader = (a * threads + k) as usize;
                    epoch.seconds.record(loader, TrainOp::SampleRead, ns, bytes);
                }
                Err(e) => {
                    epoch.fail(e);
                    queue.changed.notify_all();
                    return reads;
                }
            }
        }
        queue.state.lock().unwrap().ready[b as usize] = true;
        queue.changed.notify_all();
        b += u64::from(threads);
    }
    reads
}

/// Reads samples: a whole file, or a record at its place in one, the
/// last file read kept open (a TFRecord reader streams its file).
struct SampleReader<'a> {
    dataset: &'a Dataset,
    direct: bool,
    open: Option<(u64, File)>,
    buffer: Buffers,
}

impl<'a> SampleReader<'a> {
    fn new(dataset: &'a Dataset, direct: bool) -> Self {
        SampleReader {
            dataset,
            direct,
            open: None,
            buffer: Buffers::zeroed(1, CHUNK),
        }
    }

    /// Reads sample `sample` to its end; its bytes.
    fn read(&mut self, sample: u64, gate: Option<&SharedRate>) -> Result<u64, String> {
        let layout = &self.dataset.layout;
        let file = sample / layout.samples_per_file;
        let record = layout.record_bytes(file);
        let offset = (sample % layout.samples_per_file) * record;
        if self.open.as_ref().map(|(i, _)| *i) != Some(file) {
            let f = self
                .dataset
                .open(file, self.direct)
                .map_err(|e| format!("{}: {e}", self.dataset.path(file).display()))?;
            self.open = Some((file, f));
        }
        let (_, f) = self.open.as_ref().expect("opened above");
        let mut done = 0u64;
        while done < record {
            let want = (record - done).min(CHUNK as u64) as usize;
            // O_DIRECT reads whole blocks; the file's last is short.
            let len = match self.direct {
                true => want.next_multiple_of(BUFFER_ALIGN),
                false => want,
            };
            let due = gate.map(|g| g.book(want as u64));
            let got = f
                .read_at(&mut self.buffer.slot_mut(0)[..len], offset + done)
                .map_err(|e| format!("{}: {e}", self.dataset.path(file).display()))?;
            if got == 0 {
                return Err(format!(
                    "{}: ends before its sample {} (the dataset was changed)",
                    self.dataset.path(file).display(),
                    sample % layout.samples_per_file
                ));
            }
            done += (got as u64).min(want as u64);
            if let Some(due) = due {
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
            }
        }
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_spread_over_the_seconds_it_covers() {
        let mut s = Vec::new();
        spread_over_seconds(
            &mut s,
            Duration::from_millis(500),
            Duration::from_millis(2250),
        );
        assert_eq!(s.len(), 3);
        assert!((s[0] - 0.5).abs() < 1e-9 && (s[1] - 1.0).abs() < 1e-9);
        assert!((s[2] - 0.25).abs() < 1e-9);
    }

    #[test]
    fn au_leaves_the_first_step_out() {
        let part = AcceleratorPart {
            waits: vec![Duration::from_secs(10), Duration::from_secs(1)],
            computes: vec![Duration::from_secs(1), Duration::from_secs(3)],
            ..Default::default()
        };
        assert!((part.au() - 0.75).abs() < 1e-9);
    }

    /// A host that wakes an accelerator late takes that time from it:
    /// lost, as a wait for data is, never compute.
    #[test]
    fn oversleep_is_lost_time_not_compute() {
        let part = AcceleratorPart {
            waits: vec![Duration::ZERO; 3],
            computes: vec![Duration::from_secs(1); 3],
            overslept: vec![Duration::ZERO, Duration::from_secs(1), Duration::ZERO],
            ..Default::default()
        };
        assert!((part.au() - 2.0 / 3.0).abs() < 1e-9, "{}", part.au());
    }
}
