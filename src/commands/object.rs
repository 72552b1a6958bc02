//! An object-store run: checked against the store before anything is
//! written, its dataset uploaded untimed, then workers making the mix's
//! requests for the run's time, each second's requests counted, and
//! every object it made deleted at the end.

use crate::engine::pace::{self, Schedule};
use crate::engine::s3::{Failure, S3Client, StoreAddress, Timing};
use crate::gate::bucket::{self, PrefixClaim};
use crate::measure::cpu::{thread_cpu_ns, thread_runnable_wait_ns};
use crate::measure::direction::Direction;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::intervals::CompletedSecond;
use crate::measure::live::LiveBoard;
use crate::measure::op_seconds::{OpSample, OpSeconds, OpSeries, Slicing};
use crate::result::object::{
    Cleanup, ClientTime, EndpointResult, ObjectInterval, ObjectResult, OpTally, PartsResult,
    Preparation,
};
use crate::spec::WorkloadSpec;
use crate::spec::object::{
    GetRange, Mix, ObjectOp, ObjectSizes, ObjectSpec, ObjectTarget, is_object_target,
};
use crate::util::error::UsageError;
use crate::util::stop::StopFlag;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DEFAULT_OBJECT_SIZE: u64 = 1 << 20;
const DEFAULT_OBJECTS: u64 = 100;
const DEFAULT_CONNECTIONS: u32 = 4;
const DEFAULT_LIST_KEYS: u32 = 1000;
/// Keys one DeleteObjects request takes at the end of a run (S3's most).
const DELETE_BATCH: usize = 1000;

/// Whether a workload's targets are object stores (all of them, or none:
/// a mixture is refused).
pub fn is_object_workload(spec: &WorkloadSpec) -> Result<bool, UsageError> {
    let stores = spec.targets.iter().filter(|t| is_object_target(t)).count();
    match stores {
        0 => {
            if let Some(flag) = spec.objects.given().first() {
                return Err(UsageError(format!(
                    "{flag}: only an s3://BUCKET[/PREFIX] target reads it"
                )));
            }
            Ok(false)
        }
        n if n == spec.targets.len() && n == 1 => Ok(true),
        1 => Err(UsageError(
            "an s3:// target runs alone: give file and device targets a run of their own".into(),
        )),
        _ => Err(UsageError(
            "one s3:// target a run: give several gateways of one store as --s3-endpoint URL,URL"
                .into(),
        )),
    }
}

/// The object-store run a workload's knobs ask for; `bs_given`: `--bs`
/// was set, so GETs read ranges of it (in `--rw`'s order) rather than
/// whole objects.
pub fn spec_of(spec: &WorkloadSpec, bs_given: bool) -> Result<ObjectSpec, UsageError> {
    use crate::spec::RwMode;
    let target = ObjectTarget::parse(&spec.targets[0]).map_err(UsageError)?;
    let k = &spec.objects;
    let refuse = |what: &str| {
        Err(UsageError(format!(
            "{what}: an s3:// target has no such thing (see --mix, --object-size, --objects)"
        )))
    };
    if spec.iodepth > 1 {
        return refuse("--iodepth");
    }
    if spec.verify != crate::spec::VerifyMode::Off {
        return refuse("--verify");
    }
    if spec.rate_bw.is_some() {
        return refuse("--rate-bw (give requests a second: --rate-iops)");
    }
    if spec.size.is_some() || spec.io_size.is_some() || spec.offset > 0 {
        return refuse("--size/--io-size/--offset");
    }
    let mix = match &k.mix {
        Some(mix) => mix.clone(),
        None => match spec.rw {
            RwMode::Read | RwMode::RandRead => Mix::only(ObjectOp::Get),
            RwMode::Write | RwMode::RandWrite => Mix::only(ObjectOp::Put),
            RwMode::Trim | RwMode::RandTrim => Mix::only(ObjectOp::Delete),
            RwMode::ReadWrite | RwMode::RandRw => Mix(vec![
                (ObjectOp::Get, u32::from(spec.rwmix_read)),
                (ObjectOp::Put, 100 - u32::from(spec.rwmix_read)),
            ]),
            other => {
                return Err(UsageError(format!(
                    "--rw {other}: an s3:// target reads (get), writes (put) or trims (delete); see --mix"
                )));
            }
        },
    };
    // Whole objects unless --bs asks for ranges; --rw says in which order.
    let get_range = match spec.rw {
        _ if !bs_given && !k.ranges => GetRange::Whole,
        RwMode::RandRead | RwMode::RandRw => GetRange::Random(spec.bs),
        _ => GetRange::Sequential(spec.bs),
    };
    let object_spec = ObjectSpec {
        name: spec.name.clone(),
        target,
        endpoints: k.endpoints.clone(),
        region: k
            .region
            .clone()
            .unwrap_or_else(|| crate::input::aws::region(k.profile.as_deref())),
        profile: k.profile.clone(),
        virtual_host: k.virtual_host,
        mix,
        object_size: k
            .object_size
            .clone()
            .unwrap_or(ObjectSizes::Fixed(DEFAULT_OBJECT_SIZE)),
        objects: k.objects.unwrap_or(DEFAULT_OBJECTS),
        requests: spec.number_ios,
        rate: spec.rate_iops,
        part_size: k.part_size,
        connections: k.connections.unwrap_or(DEFAULT_CONNECTIONS),
        get_range,
        list_keys: k.list_keys.unwrap_or(DEFAULT_LIST_KEYS).max(1),
        delete_batch: k.delete_batch.unwrap_or(1).clamp(1, DELETE_BATCH as u32),
        workers: spec.numjobs,
        runtime_s: spec.runtime_s,
        create_bucket: k.create_bucket,
        keep: spec.keep,
        overwrite: spec.overwrite,
        credentials: None,
        seed: spec.seed,
        content: spec.content.clone(),
    };
    object_spec.check().map_err(UsageError)?;
    Ok(object_spec)
}

/// A run checked against its store: the bucket is there (or made), the
/// credentials sign, the prefix may be worked in. Nothing is written but
/// a bucket `--create-bucket` asked for.
pub struct Checked {
    pub spec: ObjectSpec,
    addresses: Vec<StoreAddress>,
    credentials_from: String,
    bucket_created: bool,
    claim: PrefixClaim,
}

pub fn check(spec: &ObjectSpec) -> Result<Checked, UsageError> {
    let overwrite = spec.overwrite;
    spec.check().map_err(UsageError)?;
    check_bodies(spec)?;
    let creds = match &spec.credentials {
        Some(given) => given.clone(),
        None => crate::input::aws::credentials(spec.profile.as_deref())
            .map_err(|e| UsageError(format!("{}: {e}", spec.target)))?,
    };
    let credentials = match &creds.token {
        Some(t) => rusty_s3::Credentials::new_with_token(&creds.key, &creds.secret, t),
        None => rusty_s3::Credentials::new(&creds.key, &creds.secret),
    };
    let addresses: Vec<StoreAddress> = spec
        .endpoints
        .iter()
        .map(|endpoint| StoreAddress {
            endpoint: endpoint.clone(),
            bucket: spec.target.bucket.clone(),
            region: spec.region.clone(),
            virtual_host: spec.virtual_host,
            credentials: credentials.clone(),
        })
        .collect();
    let shown = spec.target.to_string();
    let mut bucket_created = false;
    let mut claim = None;
    for address in &addresses {
        let mut client = S3Client::new(address, 1).map_err(UsageError)?;
        let at = |e: Failure| {
            UsageError(format!(
                "{shown} at {}: {}",
                address.endpoint,
                first_request_error(&e)
            ))
        };
        if !client.bucket_exists().map_err(at)? {
            if !spec.create_bucket || bucket_created {
                return Err(UsageError(format!(
                    "{shown}: no bucket {} at {} (--create-bucket makes it)",
                    spec.target.bucket, address.endpoint
                )));
            }
            client.create_bucket().map_err(at)?;
            bucket_created = true;
        }
        if claim.is_none() {
            // Random, not the pid and the time: two containers (each its
            // pid 1) started in the same millisecond would share keys.
            let run_id = format!("{:016x}", rand::random::<u64>());
            claim = Some(
                bucket::check_prefix(
                    &mut client,
                    (&spec.target.bucket, &spec.target.prefix),
                    &run_id,
                    overwrite,
                    &shown,
                )
                .map_err(UsageError)?,
            );
        }
    }
    Ok(Checked {
        spec: spec.clone(),
        addresses,
        credentials_from: creds.source,
        bucket_created,
        claim: claim.ok_or_else(|| UsageError("no --s3-endpoint".into()))?,
    })
}

/// Each worker (or part lane) sends its PUTs from a body of its own: a
/// run whose bodies would take more than half the free memory is refused
/// before anything is sent.
fn check_bodies(spec: &ObjectSpec) -> Result<(), UsageError> {
    if !spec.mix.has(ObjectOp::Put) {
        return Ok(());
    }
    let workers = u64::from(spec.workers);
    let (each, how) = match spec.part_size {
        Some(part) => (
            part * u64::from(spec.connections),
            "its --s3-connections parts",
        ),
        None => (spec.object_size.largest(), "its largest object"),
    };
    let bodies = workers.saturating_mul(each);
    match crate::run::warnings::available_memory() {
        Some(free) if bodies > free / 2 => Err(UsageError(format!(
            "{}: each of the {workers} workers sends its PUTs from a body of {how}, {} in all, more than half the free memory ({}): give a smaller --part-size, fewer --s3-connections or fewer --numjobs",
            spec.target,
            crate::util::units::format_bytes(bodies),
            crate::util::units::format_bytes(free)
        ))),
        _ => Ok(()),
    }
}

/// What the first request's failure says, with what to do about it.
fn first_request_error(e: &Failure) -> String {
    match e {
        Failure::Status { code: Some(c), .. }
            if c == "InvalidAccessKeyId" || c == "SignatureDoesNotMatch" =>
        {
            format!(
                "{e}: the store refused the credentials (check the key and secret, or --s3-profile)"
            )
        }
        Failure::Status { status: 403, .. } => format!("{e}: access denied"),
        Failure::Transport(why) => format!("no answer: {why}"),
        _ => e.to_string(),
    }
}

/// The objects there are to read: id and size.
#[derive(Default)]
struct Pool {
    objects: Vec<(u64, u64)>,
    /// Objects a GET, HEAD or LIST is using, and how many: a DELETE takes
    /// another, so that no read fails on an object the run itself just
    /// removed.
    busy: std::collections::HashMap<u64, u32>,
    /// Objects whose fate a failed request left unknown: deleted at the
    /// end, a 404 being as good.
    unsure: Vec<u64>,
}

struct Shared {
    spec: ObjectSpec,
    claim: PrefixClaim,
    pool: Mutex<Pool>,
    next_id: AtomicU64,
    stop: StopFlag,
    /// Deletes took every object: the run cannot go on as asked.
    ran_dry: AtomicBool,
    /// The timed run's end, once it started (a time-bound run's).
    deadline: std::sync::OnceLock<Instant>,
}

/// Where a worker's requests are cut: the run's end and its grace.
fn client_bound(shared: &Shared) -> Option<Instant> {
    shared.deadline.get().map(|d| *d + GRACE)
}

/// The direction an operation's seconds are shown under, beside a
/// disk's: what it does to the store's data.
fn direction_of(op: ObjectOp) -> Direction {
    match op {
        ObjectOp::Get | ObjectOp::Stat | ObjectOp::List => Direction::Read,
        ObjectOp::Put => Direction::Write,
        ObjectOp::Delete => Direction::Trim,
    }
}

/// How long after the run's end a request still in flight may finish.
const GRACE: Duration = Duration::from_millis(500);

/// One worker's measurements.
#[derive(Default)]
struct WorkerTally {
    /// Requests cut at the run's end or by a stop, by operation.
    unfinished: BTreeMap<ObjectOp, u64>,
    ops: BTreeMap<ObjectOp, OpTally>,
    parts: LatencyHistogram,
    part_bytes: u64,
    endpoint: usize,
    /// The worker thread's CPU time and wait for a CPU over the timed run.
    cpu_ns: u64,
    cpu_wait_ns: Option<u64>,
}

/// Runs a checked run to its result; `board`: where a watched run's
/// seconds go.
pub fn run(checked: Checked, stop: &StopFlag, board: Option<&LiveBoard>) -> ObjectResult {
    let spec = checked.spec.clone();
    let mut failure = None;
    let mut marker_client = S3Client::new(&checked.addresses[0], 1).ok();
    if let Some(c) = marker_client.as_mut()
        && let Err(e) = bucket::mark(c, &checked.spec.target.bucket, &checked.claim)
    {
        failure = Some(format!(
            "writing the marker {}: {e}",
            checked.claim.marker_key()
        ));
    }
    let shared = Arc::new(Shared {
        spec: spec.clone(),
        claim: checked.claim.clone(),
        pool: Mutex::new(Pool::default()),
        next_id: AtomicU64::new(0),
        stop: stop.clone(),
        ran_dry: AtomicBool::new(false),
        deadline: std::sync::OnceLock::new(),
    });
    if let Some(board) = board {
        board.workload(&spec.name);
        board.phase(format!("objects: {} at {}", spec.target, spec.mix), None);
    }
    let preparation = if failure.is_none() && spec.reads_objects() {
        match prepare(&shared, &checked.addresses) {
            Ok(p) => p,
            Err(e) => {
                failure = Some(e);
                Preparation {
                    objects: 0,
                    bytes: 0,
                    elapsed_s: 0.0,
                }
            }
        }
    } else {
        Preparation {
            objects: 0,
            bytes: 0,
            elapsed_s: 0.0,
        }
    };
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .ok();
    if let Some(board) = board {
        board.planned(spec.runtime_s, None);
    }
    let (tallies, series, elapsed_s) = if failure.is_none() && !stop.is_set() {
        timed(&shared, &checked.addresses, board)
    } else {
        (Vec::new(), BTreeMap::new(), 0.0)
    };
    if shared.ran_dry.load(Ordering::Relaxed) && failure.is_none() {
        failure = Some(format!(
            "the mix's deletes took every object before the run's end (--mix {}): give puts a larger share than deletes, or more --objects",
            spec.mix
        ));
    }
    let cleanup = clean_up(
        &shared,
        &checked.addresses,
        marker_client.as_mut(),
        &mut failure,
    );
    let mut result = assemble(
        &checked,
        &shared,
        preparation,
        &tallies,
        series,
        elapsed_s,
        cleanup,
        failure,
        stop.is_set(),
    );
    result.started_unix_s = started_unix_s.filter(|_| elapsed_s > 0.0);
    result
}

fn client_for(
    addresses: &[StoreAddress],
    worker: usize,
    connections: u32,
) -> Result<S3Client, String> {
    S3Client::new(&addresses[worker % addresses.len()], connections as usize)
}

/// One worker's share of the dataset: its bytes and its objects (id and
/// size), or why it failed.
type Uploaded = Result<(u64, Vec<(u64, u64)>), String>;

/// The dataset, uploaded by every worker at once, untimed.
fn prepare(shared: &Arc<Shared>, addresses: &[StoreAddress]) -> Result<Preparation, String> {
    let spec = &shared.spec;
    let started = Instant::now();
    let objects = spec.objects;
    shared.next_id.store(objects, Ordering::Relaxed);
    let workers = (spec.workers as u64).min(objects.max(1));
    let results: Vec<Uploaded> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let shared = shared.clone();
                s.spawn(move || {
                    let spec = &shared.spec;
                    let mut client = client_for(addresses, w as usize, spec.connections)?;
                    // A PUT the store holds yields to Ctrl-C within half a
                    // second; it has no run's end to be cut at.
                    client.bound(None, &shared.stop);
                    let mut rng = SmallRng::seed_from_u64(spec.seed ^ (w << 32) ^ 0x5eed);
                    let mut tally = WorkerTally::default();
                    let mut lanes = PartLanes::new();
                    let mut body = worker_body(spec, w as usize);
                    let mut made = Vec::new();
                    let mut bytes = 0;
                    let mut id = w;
                    while id < objects {
                        if shared.stop.is_set() {
                            break;
                        }
                        let size = spec.object_size.at(rng.random::<f64>());
                        let key = shared.claim.key(id);
                        match put_object(
                            &shared,
                            (&mut client, &mut body),
                            &mut lanes,
                            addresses,
                            w as usize,
                            (id, &key),
                            size,
                            &mut tally,
                        ) {
                            Ok(_) => {
                                made.push((id, size));
                                bytes += size;
                            }
                            Err(e) => {
                                shared.pool.lock().unwrap().unsure.push(id);
                                shared.pool.lock().unwrap().objects.extend(made);
                                return Err(format!("uploading the dataset ({key}): {e}"));
                            }
                        }
                        id += workers;
                    }
                    Ok((bytes, made))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a worker panicked".into())))
            .collect()
    });
    let mut bytes = 0;
    let mut first_error = None;
    let mut pool = shared.pool.lock().unwrap();
    for r in results {
        match r {
            Ok((b, made)) => {
                bytes += b;
                pool.objects.extend(made);
            }
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    pool.objects.sort_unstable();
    let made = pool.objects.len() as u64;
    drop(pool);
    match first_error {
        Some(e) => Err(e),
        None => Ok(Preparation {
            objects: made,
            bytes,
            elapsed_s: started.elapsed().as_secs_f64(),
        }),
    }
}

/// Picks each next operation so that every operation's count stays
/// within one of its share of the requests so far (smooth weighted
/// round robin): the mix holds in every second, not on average.
struct MixTurns {
    weights: Vec<(ObjectOp, i64)>,
    current: Vec<i64>,
    total: i64,
}

impl MixTurns {
    fn new(mix: &Mix, offset: usize) -> MixTurns {
        let weights: Vec<(ObjectOp, i64)> = mix
            .0
            .iter()
            .filter(|(_, w)| *w > 0)
            .map(|(o, w)| (*o, i64::from(*w)))
            .collect();
        let total = weights.iter().map(|(_, w)| w).sum();
        let mut turns = MixTurns {
            current: vec![0; weights.len()],
            weights,
            total,
        };
        // Workers start at different points of the cycle, so that they do
        // not all make the same request at once.
        for _ in 0..offset % (total.max(1) as usize) {
            turns.next();
        }
        turns
    }

    fn next(&mut self) -> ObjectOp {
        let mut best = 0;
        for (i, (_, w)) in self.weights.iter().enumerate() {
            self.current[i] += w;
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= self.total;
        self.weights[best].0
    }
}

type Timed = (Vec<WorkerTally>, OpSeries<ObjectOp>, f64);

fn timed(shared: &Arc<Shared>, addresses: &[StoreAddress], board: Option<&LiveBoard>) -> Timed {
    let spec = &shared.spec;
    let started = Instant::now();
    let deadline = spec.runtime_s.map(|s| started + Duration::from_secs_f64(s));
    if let Some(d) = deadline {
        let _ = shared.deadline.set(d);
    }
    let workers = u64::from(spec.workers);
    // Without a time bound, the workers make `objects` requests between
    // them.
    let total = spec.requests.unwrap_or(spec.objects);
    let quota = |w: usize| match (spec.runtime_s, spec.requests) {
        (Some(_), None) => u64::MAX,
        _ => total / workers + u64::from((w as u64) < total % workers),
    };
    let recorder = OpSeconds::new(spec.workers as usize, Slicing::Seconds, started);
    let show = |index: u64, dur_s: f64, merged: &BTreeMap<ObjectOp, OpSample>| {
        if let Some(board) = board {
            show_second(board, index, dur_s, merged);
        }
    };
    let ((tallies, elapsed), series) = recorder.sampled(show, |seconds| {
        let tallies: Vec<WorkerTally> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..spec.workers as usize)
                .map(|w| {
                    let shared = shared.clone();
                    let quota = quota(w);
                    s.spawn(move || {
                        work(&shared, addresses, seconds, w, (started, deadline), quota)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        // Rates are over the time measured: a request held past the
        // run's end (cut within its grace) does not stretch it.
        let elapsed = started.elapsed().as_secs_f64();
        let measured = spec.runtime_s.map_or(elapsed, |r| elapsed.min(r));
        (tallies, measured)
    });
    (tallies, series, elapsed)
}

/// Each whole second's requests, by operation, failed ones too: what the
/// report draws.
fn per_second_requests(series: &OpSeries<ObjectOp>) -> Vec<ObjectInterval> {
    let seconds = series.values().map(Vec::len).max().unwrap_or(0);
    (0..seconds)
        .filter_map(|i| {
            let whole = series.values().filter_map(|s| s.get(i)).next()?;
            (whole.dur_s >= 0.999).then(|| ObjectInterval {
                t_s: whole.t_s + whole.dur_s,
                ops: series
                    .iter()
                    .map(|(op, s)| (*op, s.get(i).map_or(0, |x| x.ios + x.errors)))
                    .collect(),
            })
        })
        .collect()
}

/// Every worker's requests of the second just ended, by operation, to
/// the board: each operation a stream of its own.
fn show_second(board: &LiveBoard, index: u64, dur_s: f64, merged: &BTreeMap<ObjectOp, OpSample>) {
    for (op, sample) in merged {
        let mut second = CompletedSecond {
            index,
            dur_s,
            directions: Default::default(),
        };
        second.directions[direction_of(*op) as usize] = sample.as_direction();
        board.second(op.name(), &second);
    }
}

/// When a rated worker's requests are due: its share of the rate,
/// evenly, the workers' schedules staggered (the disk path's pacer).
fn schedule_of(spec: &ObjectSpec, worker: usize, started: Instant) -> Option<Schedule> {
    let rate = spec.rate?;
    let first = started + Duration::from_secs_f64(worker as f64 / rate);
    Some(Schedule::even(first, rate / f64::from(spec.workers)))
}

fn work(
    shared: &Shared,
    addresses: &[StoreAddress],
    seconds: &OpSeconds<ObjectOp>,
    worker: usize,
    (started, deadline): (Instant, Option<Instant>),
    quota: u64,
) -> WorkerTally {
    let spec = &shared.spec;
    let mut tally = WorkerTally {
        endpoint: worker % addresses.len(),
        ..WorkerTally::default()
    };
    let Ok(mut client) = client_for(addresses, worker, spec.connections) else {
        return tally;
    };
    // A request the store holds past the run's end is cut there (with a
    // grace for those in flight) and counted unfinished, as a disk's I/O.
    client.bound(client_bound(shared), &shared.stop);
    let (cpu_before, wait_before) = (thread_cpu_ns(), thread_runnable_wait_ns());
    let mut rng = SmallRng::seed_from_u64(spec.seed ^ ((worker as u64) << 40) ^ 0x0b1ec7);
    let mut turns = MixTurns::new(&spec.mix, worker * 7);
    let mut cursor: Option<(u64, u64)> = None;
    let mut lanes = PartLanes::new();
    let mut body = worker_body(spec, worker);
    let mut done = 0u64;
    let schedule = schedule_of(spec, worker, started);
    while done < quota && !shared.stop.is_set() {
        let due = schedule.as_ref().map(|s| s.due(done));
        // A request due after the deadline is not made.
        if deadline.is_some_and(|d| due.unwrap_or_else(Instant::now) >= d) {
            break;
        }
        if let Some(due) = due {
            pace::sleep_until(due, &shared.stop);
            if shared.stop.is_set() {
                break;
            }
        }
        let op = turns.next();
        let outcome = match op {
            ObjectOp::Get => match get(shared, &mut client, &mut rng, &mut cursor) {
                Some(outcome) => outcome,
                None => break,
            },
            ObjectOp::Put => {
                let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
                let size = spec.object_size.at(rng.random::<f64>());
                let key = shared.claim.key(id);
                let r = put_object(
                    shared,
                    (&mut client, &mut body),
                    &mut lanes,
                    addresses,
                    worker,
                    (id, &key),
                    size,
                    &mut tally,
                );
                let mut pool = shared.pool.lock().unwrap();
                match &r {
                    Ok(_) => pool.objects.push((id, size)),
                    Err(_) => pool.unsure.push(id),
                }
                r
            }
            ObjectOp::Stat => match Borrowed::pick(shared, &mut rng) {
                Some(b) => client.head(&shared.claim.key(b.id)),
                None => break,
            },
            ObjectOp::List => {
                // A page from a random key on, so that pages are not all
                // the first one the store may have cached.
                let after = Borrowed::pick(shared, &mut rng).map(|b| shared.claim.key(b.id));
                client
                    .list(&shared.claim.run_prefix, spec.list_keys, after.as_deref())
                    .map(|(t, _, _)| t)
            }
            ObjectOp::Delete => match delete(shared, &mut client, &mut rng) {
                Some(outcome) => outcome,
                None => break,
            },
        };
        match &outcome {
            Ok(t) => seconds.record(worker, op, t.last_byte_ns, t.bytes),
            Err(Failure::Unfinished) => {
                *tally.unfinished.entry(op).or_default() += 1;
                break;
            }
            Err(_) => seconds.failed(worker, op),
        }
        let op_tally = tally.ops.entry(op).or_default();
        if let (Some(due), true) = (due, outcome.is_ok()) {
            op_tally.from_due.record(due.elapsed().as_nanos() as u64);
        }
        record(op_tally, op, outcome);
        done += 1;
    }
    tally.cpu_ns = thread_cpu_ns().saturating_sub(cpu_before);
    tally.cpu_wait_ns = thread_runnable_wait_ns()
        .zip(wait_before)
        .map(|(after, before)| after.saturating_sub(before));
    tally
}

fn record(t: &mut OpTally, op: ObjectOp, outcome: Result<Timing, Failure>) {
    match outcome {
        Ok(timing) => {
            t.ops += 1;
            t.bytes += timing.bytes;
            t.retries += u64::from(timing.retries);
            t.latency.record(timing.last_byte_ns);
            if op == ObjectOp::Get {
                t.ttfb.record(timing.first_byte_ns);
            }
        }
        Err(f) => *t.errors.entry(f.key()).or_default() += 1,
    }
}

/// An object of the pool a request is reading: no DELETE takes it until
/// the request is done.
struct Borrowed<'a> {
    shared: &'a Shared,
    id: u64,
    size: u64,
}

impl<'a> Borrowed<'a> {
    /// A random object; None (and the run marked dry) when none is left.
    fn pick(shared: &'a Shared, rng: &mut SmallRng) -> Option<Borrowed<'a>> {
        let mut pool = shared.pool.lock().unwrap();
        if pool.objects.is_empty() {
            shared.ran_dry.store(true, Ordering::Relaxed);
            return None;
        }
        let (id, size) = pool.objects[rng.random_range(0..pool.objects.len())];
        *pool.busy.entry(id).or_default() += 1;
        Some(Borrowed { shared, id, size })
    }

    /// Object `id`, while it is still there.
    fn again(shared: &'a Shared, id: u64) -> Option<Borrowed<'a>> {
        let mut pool = shared.pool.lock().unwrap();
        let (id, size) = *pool.objects.iter().find(|(i, _)| *i == id)?;
        *pool.busy.entry(id).or_default() += 1;
        Some(Borrowed { shared, id, size })
    }
}

impl Drop for Borrowed<'_> {
    fn drop(&mut self) {
        let mut pool = self.shared.pool.lock().unwrap();
        if let Some(n) = pool.busy.get_mut(&self.id) {
            *n -= 1;
            if *n == 0 {
                pool.busy.remove(&self.id);
            }
        }
    }
}

/// A random object no request is reading, taken out of the pool; None
/// (and the run marked dry) when none is left.
fn take(shared: &Shared, rng: &mut SmallRng) -> Option<(u64, u64)> {
    // Every object left may be one the other workers are reading: their
    // requests end within moments.
    for _ in 0..10_000 {
        let mut pool = shared.pool.lock().unwrap();
        let len = pool.objects.len();
        if len == 0 {
            break;
        }
        let start = rng.random_range(0..len);
        let free = (0..len)
            .map(|k| (start + k) % len)
            .find(|&i| !pool.busy.contains_key(&pool.objects[i].0));
        if let Some(i) = free {
            return Some(pool.objects.swap_remove(i));
        }
        drop(pool);
        std::thread::sleep(Duration::from_micros(100));
    }
    shared.ran_dry.store(true, Ordering::Relaxed);
    None
}

/// A DELETE of one object, or a DeleteObjects of `--delete-batch` of
/// them, the run's own (the gate checks); None when none is left.
fn delete(
    shared: &Shared,
    client: &mut S3Client,
    rng: &mut SmallRng,
) -> Option<Result<Timing, Failure>> {
    let batch = shared.spec.delete_batch.max(1) as usize;
    let mut taken = Vec::with_capacity(batch);
    while taken.len() < batch {
        match take(shared, rng) {
            Some(object) => taken.push(object),
            None if taken.is_empty() => return None,
            None => break,
        }
    }
    let keys: Vec<String> = taken.iter().map(|(id, _)| shared.claim.key(*id)).collect();
    if let Err(e) = bucket::check_owned(&shared.claim, &keys) {
        return Some(Err(Failure::Transport(e)));
    }
    let outcome = match keys.as_slice() {
        [key] => client.delete(key),
        _ => client
            .delete_many(&keys)
            .and_then(|(timing, failed)| match failed.first() {
                // The request answered, but not for every key: a failure of
                // the request, its first key's error named.
                Some(first) => Err(Failure::Status {
                    status: 200,
                    code: Some(format!(
                        "DeleteObjects {}",
                        first.rsplit(' ').next().unwrap_or("error")
                    )),
                }),
                None => Ok(timing),
            }),
    };
    if outcome.is_err() {
        // Their fate unknown: deleted again at the end, a 404 as good.
        shared
            .pool
            .lock()
            .unwrap()
            .unsure
            .extend(taken.iter().map(|(id, _)| *id));
    }
    Some(outcome)
}

/// A GET as `--bs` and `--rw` ask; None when no object is left.
fn get(
    shared: &Shared,
    client: &mut S3Client,
    rng: &mut SmallRng,
    cursor: &mut Option<(u64, u64)>,
) -> Option<Result<Timing, Failure>> {
    // A sequential GET goes on through the object it is in, while that
    // is still there.
    let going_on = match (shared.spec.get_range, *cursor) {
        (GetRange::Sequential(_), Some((id, _))) => Borrowed::again(shared, id),
        _ => None,
    };
    let object = match going_on {
        Some(o) => o,
        None => Borrowed::pick(shared, rng)?,
    };
    let key = shared.claim.key(object.id);
    let size = object.size;
    Some(match shared.spec.get_range {
        GetRange::Whole => client.get(&key, None),
        GetRange::Random(bs) => {
            let len = bs.min(size).max(1);
            let off = rng.random_range(0..(size / len).max(1)) * len;
            client.get(&key, Some((off, len)))
        }
        GetRange::Sequential(bs) => {
            let off = match *cursor {
                Some((id, off)) if id == object.id => off,
                _ => 0,
            };
            let len = bs.min(size - off).max(1);
            // Past the end: the next GET draws another object.
            *cursor = (off + len < size).then_some((object.id, off + len));
            client.get(&key, Some((off, len)))
        }
    })
}

/// A worker's connections for the parts of its multipart uploads, kept
/// from one upload to the next (a part is timed, not a connection's
/// making), each with the body its parts are sent from.
type PartLanes = Vec<(S3Client, Body)>;

/// The body a worker's single PUTs are sent from: as large as the largest
/// object (none where the run writes in parts, whose lanes have theirs).
fn worker_body(spec: &ObjectSpec, worker: usize) -> Body {
    let len = match spec.part_size {
        Some(_) => 0,
        None => spec.object_size.largest(),
    };
    Body::new(
        &spec.content,
        len,
        spec.seed ^ ((worker as u64) << 40) ^ 0xb0d1,
    )
}

/// What a worker's PUTs (or one part lane's) send: the disk path's data
/// content, each body stamped for its object and part, so that no two
/// objects or parts share bytes unless `--dedupe` asks, and `--compress`
/// zeroes the share of each chunk it asks. Shaped once; a PUT changes a
/// few words a sector.
pub struct Body {
    buffers: crate::util::buffers::Buffers,
    writer: crate::engine::content::ContentWriter,
    rng: SmallRng,
}

impl Body {
    pub fn new(content: &crate::spec::content::DataContent, len: u64, seed: u64) -> Body {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut buffers = crate::util::buffers::Buffers::new(1, len.max(1) as usize, &mut rng);
        let writer = crate::engine::content::ContentWriter::new(content, &mut buffers, 4096, 0);
        Body {
            buffers,
            writer,
            rng,
        }
    }

    /// The `len` bytes of part `part` of object `id`.
    pub fn of(&mut self, id: u64, part: u64, len: u64) -> &[u8] {
        let len = len as usize;
        let sequence = (id << 20) | (part & 0xf_ffff);
        self.writer.prepare(
            &mut self.buffers,
            0,
            len,
            part * len as u64,
            sequence,
            &mut self.rng,
        );
        &self.buffers.slot_mut(0)[..len]
    }
}

/// One object PUT: in one request, or in parts `--s3-connections` at a
/// time on the worker's `lanes`, each part's latency in `tally.parts`.
#[allow(clippy::too_many_arguments)]
fn put_object(
    shared: &Shared,
    (client, body): (&mut S3Client, &mut Body),
    lanes: &mut PartLanes,
    addresses: &[StoreAddress],
    worker: usize,
    (id, key): (u64, &str),
    size: u64,
    tally: &mut WorkerTally,
) -> Result<Timing, Failure> {
    let Some(part) = shared.spec.part_size else {
        return client.put(key, body.of(id, 0, size));
    };
    let parts = size.div_ceil(part).max(1);
    let wanted = u64::from(shared.spec.connections).min(parts) as usize;
    while lanes.len() < wanted {
        let mut lane = client_for(addresses, worker, 1).map_err(Failure::Transport)?;
        lane.bound(client_bound(shared), &shared.stop);
        let seed = shared.spec.seed ^ ((worker as u64) << 24) ^ lanes.len() as u64;
        lanes.push((lane, Body::new(&shared.spec.content, part, seed)));
    }
    let started = Instant::now();
    let (_, upload_id) = client.create_multipart(key)?;
    let next = AtomicU64::new(0);
    let etags: Mutex<Vec<Option<String>>> = Mutex::new(vec![None; parts as usize]);
    let lane_results: Vec<(LatencyHistogram, u64, u32, Option<Failure>)> =
        std::thread::scope(|s| {
            let handles: Vec<_> = lanes
                .iter_mut()
                .take(wanted)
                .map(|(lane, body)| {
                    let (next, etags, upload_id) = (&next, &etags, &upload_id);
                    s.spawn(move || {
                        let mut hist = LatencyHistogram::new();
                        let (mut bytes, mut retries) = (0u64, 0u32);
                        loop {
                            // A stop ends the upload at the part in flight.
                            if shared.stop.is_set() {
                                next.store(parts, Ordering::Relaxed);
                                return (hist, bytes, retries, Some(Failure::Unfinished));
                            }
                            let n = next.fetch_add(1, Ordering::Relaxed);
                            if n >= parts {
                                return (hist, bytes, retries, None);
                            }
                            let len = part.min(size - n * part);
                            match lane.upload_part(
                                key,
                                upload_id,
                                (n + 1) as u16,
                                body.of(id, n, len),
                            ) {
                                Ok((t, etag)) => {
                                    hist.record(t.last_byte_ns);
                                    bytes += len;
                                    retries += t.retries;
                                    etags.lock().unwrap()[n as usize] = Some(etag);
                                }
                                Err(e) => {
                                    next.store(parts, Ordering::Relaxed);
                                    return (hist, bytes, retries, Some(e));
                                }
                            }
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        (
                            LatencyHistogram::new(),
                            0,
                            0,
                            Some(Failure::Transport("a part's thread panicked".into())),
                        )
                    })
                })
                .collect()
        });
    let mut retries = 0;
    let mut failed = None;
    for (hist, bytes, r, err) in lane_results {
        tally.parts.add(&hist);
        tally.part_bytes += bytes;
        retries += r;
        failed = failed.or(err);
    }
    if let Some(e) = failed {
        client.abort_multipart(key, &upload_id);
        return Err(e);
    }
    let etags: Vec<String> = etags.into_inner().unwrap().into_iter().flatten().collect();
    let t = client.complete_multipart(key, &upload_id, &etags)?;
    Ok(Timing {
        first_byte_ns: t.first_byte_ns,
        last_byte_ns: started.elapsed().as_nanos() as u64,
        bytes: size,
        retries: retries + t.retries,
    })
}

/// Deletes what the run made (every worker at once), then its marker;
/// with `--keep`, counts what stays.
fn clean_up(
    shared: &Arc<Shared>,
    addresses: &[StoreAddress],
    marker_client: Option<&mut S3Client>,
    failure: &mut Option<String>,
) -> Cleanup {
    let (objects, unsure) = {
        let pool = shared.pool.lock().unwrap();
        (pool.objects.clone(), pool.unsure.clone())
    };
    if shared.spec.keep {
        return Cleanup {
            kept: objects.len() as u64,
            ..Cleanup::default()
        };
    }
    let ids: Vec<u64> = objects.iter().map(|(id, _)| *id).chain(unsure).collect();
    let lanes = (shared.spec.workers as usize).clamp(1, 16);
    let next = AtomicU64::new(0);
    let counts: Vec<(u64, u64, Option<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..lanes)
            .map(|lane| {
                let (ids, next) = (&ids, &next);
                s.spawn(move || {
                    let (mut deleted, mut failed, mut first) = (0, 0, None);
                    let Ok(mut client) = client_for(addresses, lane, 1) else {
                        return (0, 0, Some("no connection to delete with".to_string()));
                    };
                    loop {
                        let at = next.fetch_add(DELETE_BATCH as u64, Ordering::Relaxed) as usize;
                        let Some(batch) = ids.get(at..(at + DELETE_BATCH).min(ids.len())) else {
                            break;
                        };
                        if batch.is_empty() {
                            break;
                        }
                        let keys: Vec<String> =
                            batch.iter().map(|id| shared.claim.key(*id)).collect();
                        match bucket::delete_many(&mut client, &shared.claim, &keys) {
                            Ok(()) => deleted += keys.len() as u64,
                            Err(e) => {
                                failed += keys.len() as u64;
                                first =
                                    first.or(Some(format!("deleting {} objects: {e}", keys.len())));
                            }
                        }
                    }
                    (deleted, failed, first)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or((0, 0, None)))
            .collect()
    });
    let mut cleanup = Cleanup::default();
    for (d, f, first) in counts {
        cleanup.deleted += d;
        cleanup.failed += f;
        if failure.is_none() {
            *failure = first;
        }
    }
    if cleanup.failed == 0
        && let Some(client) = marker_client
        && let Err(e) = bucket::unmark(client, &shared.claim)
        && failure.is_none()
    {
        *failure = Some(format!("deleting the marker: {e}"));
    }
    cleanup
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    checked: &Checked,
    shared: &Shared,
    preparation: Preparation,
    tallies: &[WorkerTally],
    mut series: OpSeries<ObjectOp>,
    elapsed_s: f64,
    cleanup: Cleanup,
    failure: Option<String>,
    interrupted: bool,
) -> ObjectResult {
    let spec = &shared.spec;
    let mut by_op: BTreeMap<ObjectOp, OpTally> = BTreeMap::new();
    let mut parts = LatencyHistogram::new();
    let mut part_bytes = 0;
    for t in tallies {
        for (op, tally) in &t.ops {
            by_op.entry(*op).or_default().add(tally);
        }
        parts.add(&t.parts);
        part_bytes += t.part_bytes;
    }
    let all: u64 = by_op.values().map(OpTally::requests).sum();
    let ops = spec
        .mix
        .0
        .iter()
        .filter(|(_, w)| *w > 0)
        .map(|(op, _)| {
            let mut result = by_op.get(op).cloned().unwrap_or_default().result(
                *op,
                elapsed_s,
                all,
                spec.mix.share(*op),
            );
            result.intervals = series.get(op).cloned().unwrap_or_default();
            result.unfinished = tallies.iter().filter_map(|t| t.unfinished.get(op)).sum();
            result
        })
        .collect();
    let intervals = per_second_requests(&series);
    series.clear();
    let (client, limited_by) = client_time(spec, tallies, elapsed_s, all);
    let endpoints = if checked.addresses.len() > 1 {
        per_endpoint(&checked.addresses, tallies)
    } else {
        Vec::new()
    };
    ObjectResult {
        spec: spec.clone(),
        credentials_from: checked.credentials_from.clone(),
        bucket_created: checked.bucket_created,
        run_prefix: shared.claim.run_prefix.clone(),
        preparation,
        started_unix_s: None,
        elapsed_s,
        ops,
        parts: (parts.count() > 0).then(|| PartsResult {
            parts: parts.count(),
            bytes: part_bytes,
            lat_ns: parts.summary(),
            histogram: parts.encode(),
        }),
        endpoints,
        intervals,
        client,
        limited_by,
        cleanup,
        failure,
        interrupted,
    }
}

/// The workers' CPU time and wait for a CPU, and what they say limited
/// the requests.
fn client_time(
    spec: &ObjectSpec,
    tallies: &[WorkerTally],
    elapsed_s: f64,
    requests: u64,
) -> (Option<ClientTime>, Option<crate::result::limit::LimitedBy>) {
    if tallies.is_empty() || elapsed_s <= 0.0 {
        return (None, None);
    }
    let cpu_s = tallies.iter().map(|t| t.cpu_ns).sum::<u64>() as f64 / 1e9;
    let cpu_wait_s = tallies
        .iter()
        .map(|t| t.cpu_wait_ns)
        .try_fold(0u64, |sum, w| w.map(|w| sum + w))
        .map(|ns| ns as f64 / 1e9);
    let verdict = crate::run::limit::judge_object_run(spec.workers, elapsed_s, cpu_s, cpu_wait_s);
    (
        Some(ClientTime {
            cpu_s,
            cpu_wait_s,
            cpu_per_request_us: cpu_s * 1e6 / requests.max(1) as f64,
        }),
        verdict,
    )
}

fn per_endpoint(addresses: &[StoreAddress], tallies: &[WorkerTally]) -> Vec<EndpointResult> {
    addresses
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut all = OpTally::default();
            let mut ttfb = LatencyHistogram::new();
            for t in tallies.iter().filter(|t| t.endpoint == i) {
                for (op, tally) in &t.ops {
                    all.add(tally);
                    if *op == ObjectOp::Get {
                        ttfb.add(&tally.ttfb);
                    }
                }
            }
            EndpointResult {
                endpoint: a.endpoint.clone(),
                ops: all.ops,
                errors: all.errors.values().sum(),
                lat_ns: all.latency.summary(),
                ttfb_ns: (ttfb.count() > 0).then(|| ttfb.summary()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_holds_within_one_request_at_every_turn() {
        let mix: Mix = "get=45,put=15,stat=30,delete=10".parse().unwrap();
        let mut turns = MixTurns::new(&mix, 0);
        let mut counts: BTreeMap<ObjectOp, i64> = BTreeMap::new();
        for n in 1..=1000i64 {
            *counts.entry(turns.next()).or_default() += 1;
            for (op, w) in &mix.0 {
                let want = n * i64::from(*w) / 100;
                let got = counts.get(op).copied().unwrap_or(0);
                assert!((got - want).abs() <= 1, "{op} at {n}: {got} against {want}");
            }
        }
    }
}
