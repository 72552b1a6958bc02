//! Many hosts through MPI (`--features mpi`, `mpirun ... fathom run --mpi`):
//! ranks are launched and joined by MPI, never by a protocol of fathom's.
//! Rank 0 resolves the plan and sends it to every rank; every rank checks
//! its part before anything is created; each workload starts on a vote that
//! doubles as a barrier (a rank that failed votes no, and every rank stops);
//! each rank's document goes to rank 0, which merges them.
//!
//! Every rank meets the others in the same order: one plan broadcast, one
//! check, one vote before each workload and one after the last (a rank that
//! failed makes a single "no" vote, which ends everyone's voting), and one
//! gather. Each meeting is point-to-point messages to and from rank 0 with a
//! deadline (`--mpi-timeout`), not a collective call: a rank that was
//! stopped or hangs is named as failed by rank 0, which writes what the
//! others measured and then ends the job, instead of every rank waiting
//! for it forever.

use mpi::request::StaticScope;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

pub struct Ranks {
    // Finalises MPI when dropped, after every use of `world`.
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    /// Whether votes still happen: false once one said "stop".
    voting: Cell<bool>,
    /// Each meeting's messages carry its number as their tag: every rank
    /// meets in the same order.
    meeting: Cell<i32>,
    timeout: Duration,
    /// Ranks that missed a meeting (rank 0 knows them), with what was
    /// missed; they are not waited for again.
    lost: RefCell<Vec<(u32, String)>>,
    /// Set by SIGINT or SIGTERM: a stopped rank waits for the others only
    /// a little longer (`STOPPING_WAIT`), so that it still removes what it
    /// created before the launcher kills it.
    stop: RefCell<Option<crate::util::stop::StopFlag>>,
    /// Sends made without waiting (`post`), with their buffers, until
    /// they have gone.
    posted: RefCell<Vec<Posted>>,
}

type Posted = (
    mpi::request::Request<'static, [u8], StaticScope>,
    &'static [u8],
);

/// The tag of the ranks' live seconds: above any meeting's number (the
/// lowest upper bound on tags MPI allows).
const LIVE_TAG: i32 = 32_767;

/// How long a stopped rank still waits for a meeting. A launcher that
/// ends a job (a rank died, Ctrl-C on mpirun) sends SIGTERM and kills what
/// is left a second later; the ranks still running answer well within it.
const STOPPING_WAIT: Duration = Duration::from_millis(300);

/// The number of ranks the launcher meant to start, from the variables
/// Open MPI, MPICH/PMI and Slurm set.
fn launcher_size() -> Option<(String, u32)> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"]
        .iter()
        .find_map(|v| Some((v.to_string(), std::env::var(v).ok()?.parse().ok()?)))
}

impl Ranks {
    /// Joins the MPI job. A binary built for one MPI library but started by
    /// another's launcher runs as separate one-rank jobs that would each
    /// succeed alone; that is refused.
    pub fn join(timeout: Duration) -> Result<Ranks, String> {
        let universe = mpi::initialize().ok_or("MPI was already initialised")?;
        let world = universe.world();
        if world.size() == 1
            && let Some((var, n)) = launcher_size().filter(|(_, n)| *n > 1)
        {
            return Err(format!(
                "--mpi: the launcher started {n} ranks ({var}), but this fathom's MPI ({}) sees only itself: it was built against another MPI library than the launcher's",
                library()
            ));
        }
        Ok(Ranks {
            _universe: universe,
            world,
            voting: Cell::new(true),
            meeting: Cell::new(1),
            timeout,
            lost: RefCell::new(Vec::new()),
            stop: RefCell::new(None),
            posted: RefCell::new(Vec::new()),
        })
    }

    pub fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    pub fn size(&self) -> u32 {
        self.world.size() as u32
    }

    /// The ranks that missed a meeting, and which (rank 0's view).
    pub fn lost(&self) -> Vec<(u32, String)> {
        self.lost.borrow().clone()
    }

    /// Ends the whole job at once: after rank 0 wrote its document, with a
    /// rank lost, the launcher would otherwise wait for it forever.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    fn next_meeting(&self) -> i32 {
        let m = self.meeting.get();
        self.meeting
            .set(if m + 1 == LIVE_TAG { m + 2 } else { m + 1 });
        m
    }

    /// Sends `bytes` to `rank` under `tag` without waiting for it to go;
    /// sends that went are freed at the next call.
    fn post(&self, rank: u32, tag: i32, bytes: Vec<u8>) {
        self.settle_posted();
        let buf: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let request = self
            .world
            .process_at_rank(rank as i32)
            .immediate_send_with_tag(StaticScope, buf, tag);
        self.posted.borrow_mut().push((request, buf));
    }

    /// Frees the posted sends that went; how many have not.
    fn settle_posted(&self) -> usize {
        let mut posted = self.posted.borrow_mut();
        let mut still = Vec::new();
        for (request, buf) in posted.drain(..) {
            match request.test() {
                // SAFETY: the send is complete; nothing refers to the
                // buffer any more.
                Ok(_) => drop(unsafe { Box::from_raw(buf as *const [u8] as *mut [u8]) }),
                Err(pending) => still.push((pending, buf)),
            }
        }
        *posted = still;
        posted.len()
    }

    /// Waits at most `STOPPING_WAIT` for the posted sends to go; what has
    /// not gone by then (its receiver gone) is left, buffer and all.
    fn flush_posted(&self) {
        let deadline = Instant::now() + STOPPING_WAIT;
        while self.settle_posted() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        for (request, _) in self.posted.borrow_mut().drain(..) {
            std::mem::forget(request);
        }
    }

    /// Every message under `tag` that has come, from any rank, with its
    /// sender; never waits.
    fn take_posted(&self, tag: i32) -> Vec<(u32, Vec<u8>)> {
        use mpi::point_to_point::MatchedReceiveVec;
        let mut got = Vec::new();
        while let Some(probed) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(tag)
        {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            got.push((status.source_rank() as u32, bytes));
        }
        got
    }

    /// Sends `bytes` to `rank` under tag `meeting`, waiting at most the
    /// timeout for it to go; false when it did not (the other end is gone).
    fn send(&self, rank: u32, meeting: i32, bytes: Vec<u8>) -> bool {
        // The buffer outlives a send that never completes: it is leaked
        // with it rather than freed under MPI.
        let buf: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let mut request = self
            .world
            .process_at_rank(rank as i32)
            .immediate_send_with_tag(StaticScope, buf, meeting);
        let mut deadline = Instant::now() + self.timeout;
        let mut cut = false;
        loop {
            self.cut_short(&mut deadline, &mut cut);
            match request.test() {
                Ok(_) => {
                    // SAFETY: the send is complete; nothing refers to the
                    // buffer any more.
                    drop(unsafe { Box::from_raw(buf as *const [u8] as *mut [u8]) });
                    return true;
                }
                Err(pending) if Instant::now() >= deadline => {
                    std::mem::forget(pending);
                    return false;
                }
                Err(pending) => {
                    request = pending;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }

    /// The message `rank` sends under tag `meeting`, or None when none came
    /// within the timeout.
    fn receive(&self, rank: u32, meeting: i32) -> Option<Vec<u8>> {
        let mut deadline = Instant::now() + self.timeout;
        let mut cut = false;
        let source = self.world.process_at_rank(rank as i32);
        loop {
            self.cut_short(&mut deadline, &mut cut);
            if let Some(probed) = source.immediate_matched_probe_with_tag(meeting) {
                use mpi::point_to_point::MatchedReceiveVec;
                return Some(probed.matched_receive_vec::<u8>().0);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits no longer than `STOPPING_WAIT` from when this rank was
    /// stopped (once: `cut` says it was done).
    fn cut_short(&self, deadline: &mut Instant, cut: &mut bool) {
        if !*cut
            && self
                .stop
                .borrow()
                .as_ref()
                .is_some_and(crate::util::stop::StopFlag::is_set)
        {
            *deadline = (*deadline).min(Instant::now() + STOPPING_WAIT);
            *cut = true;
        }
    }

    /// Meetings are cut short once `stop` is set.
    pub fn stop_with(&self, stop: crate::util::stop::StopFlag) {
        *self.stop.borrow_mut() = Some(stop);
    }

    /// Rank 0 takes `rank` as lost at `what`.
    fn lose(&self, rank: u32, what: &str) {
        let mut lost = self.lost.borrow_mut();
        if !lost.iter().any(|(r, _)| *r == rank) {
            lost.push((
                rank,
                format!(
                    "did not answer at {what} within {} (stopped, hung or gone)",
                    crate::util::units::format_duration(self.timeout.as_secs_f64())
                ),
            ));
        }
    }

    fn is_lost(&self, rank: u32) -> bool {
        self.lost.borrow().iter().any(|(r, _)| *r == rank)
    }

    /// Rank 0's bytes, on every rank (None on a rank rank 0 did not reach).
    pub fn broadcast(&self, bytes: Vec<u8>) -> Option<Vec<u8>> {
        let meeting = self.next_meeting();
        if self.rank() != 0 {
            return self.receive(0, meeting);
        }
        for r in 1..self.size() {
            if !self.is_lost(r) && !self.send(r, meeting, bytes.clone()) {
                self.lose(r, "a broadcast");
            }
        }
        Some(bytes)
    }

    /// Rank 0's `mine` on every rank (`what` names it): what it holds, or
    /// its error (bad input on rank 0) as every rank's usage error.
    pub fn rank_0s<T>(&self, mine: &Result<T, String>, what: &str) -> anyhow::Result<T>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        use crate::util::error::UsageError;
        let sent = match self.rank() {
            0 => serde_json::to_vec(mine)?,
            _ => Vec::new(),
        };
        let received = self.broadcast(sent).ok_or_else(|| {
            UsageError(format!(
                "--mpi: rank 0 did not send {what} (stopped, hung or gone)"
            ))
        })?;
        let theirs: Result<T, String> = serde_json::from_slice(&received)?;
        Ok(theirs.map_err(UsageError)?)
    }

    /// Every rank's bytes, in rank order, at rank 0 (None elsewhere); a
    /// rank that sent nothing in time has None.
    pub fn gather(&self, mine: &[u8]) -> Option<Vec<Option<Vec<u8>>>> {
        self.gather_at(mine, "the gathering of results")
    }

    /// As `gather`, naming the meeting (`what`) for a rank that misses it.
    fn gather_at(&self, mine: &[u8], what: &str) -> Option<Vec<Option<Vec<u8>>>> {
        let meeting = self.next_meeting();
        if self.rank() != 0 {
            self.send(0, meeting, mine.to_vec());
            return None;
        }
        let mut all = vec![Some(mine.to_vec())];
        for r in 1..self.size() {
            let got = match self.is_lost(r) {
                true => None,
                false => self.receive(r, meeting),
            };
            if got.is_none() {
                self.lose(r, what);
            }
            all.push(got);
        }
        Some(all)
    }

    /// Whether every rank says `ok`; a barrier too. After a "no" nobody
    /// votes again. A rank that does not vote in time is lost, and counts
    /// as a "no".
    pub fn vote(&self, ok: bool) -> bool {
        if !self.voting.get() {
            return false;
        }
        let votes = self.gather_at(&[u8::from(ok)], "a vote (before or after a workload)");
        let go = match votes {
            Some(all) => {
                let go = all.iter().all(|v| v.as_deref() == Some(&[1u8][..]));
                let decided = self.broadcast(vec![u8::from(go)]);
                go && decided.is_some()
            }
            None => self.broadcast(Vec::new()).is_some_and(|d| d == [1]),
        };
        self.voting.set(go);
        go
    }

    /// The first rank's message, when a rank's is not empty: every rank
    /// learns that rank's error, or None when all are fine.
    pub fn first_error(&self, mine: Option<&str>) -> Option<String> {
        let gathered = self.gather(mine.unwrap_or("").as_bytes());
        let first = gathered
            .map(|all| {
                all.iter()
                    .enumerate()
                    .find_map(|(r, m)| match m {
                        Some(m) if !m.is_empty() => {
                            Some(format!("rank {r}: {}", String::from_utf8_lossy(m)))
                        }
                        Some(_) => None,
                        None => Some(format!("rank {r}: did not answer (stopped, hung or gone)")),
                    })
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let text = match self.broadcast(first.into_bytes()) {
            Some(t) => String::from_utf8_lossy(&t).into_owned(),
            None => "rank 0 did not answer (stopped, hung or gone)".into(),
        };
        (!text.is_empty()).then_some(text)
    }
}

/// The ranks' live seconds under `--mpi` with `--metrics-listen`, `--live`
/// or `--metrics-push`: every rank sends rank 0 each second it completes,
/// and rank 0 merges them exactly (`measure::live_merge`) into its board's
/// cluster series. Runs on the thread that runs MPI, after each second;
/// never waits for another rank.
pub struct LiveRelay {
    ranks: std::rc::Rc<Ranks>,
    board: std::sync::Arc<crate::measure::live::LiveBoard>,
    seconds: std::sync::mpsc::Receiver<crate::measure::live::Update>,
    /// Rank 0's merging; None on the other ranks.
    merge: Option<RefCell<crate::measure::live_merge::LiveMerge>>,
}

impl LiveRelay {
    pub fn new(
        ranks: std::rc::Rc<Ranks>,
        board: std::sync::Arc<crate::measure::live::LiveBoard>,
    ) -> Self {
        let (tx, seconds) = std::sync::mpsc::channel();
        board.listen(tx);
        let merge = (ranks.rank() == 0)
            .then(|| RefCell::new(crate::measure::live_merge::LiveMerge::new(ranks.size())));
        LiveRelay {
            ranks,
            board,
            seconds,
            merge,
        }
    }

    /// Sends this rank's new seconds on (rank 0: merges them with what the
    /// others sent, and gives out the seconds that are complete).
    pub fn relay(&self) {
        use crate::measure::live_merge::RankSecond;
        // The board's listeners also hear the cluster's seconds: only this
        // rank's own travel.
        let mine: Vec<RankSecond> = self
            .seconds
            .try_iter()
            .filter(|u| u.ranks.is_none())
            .map(|u| RankSecond::of(&u))
            .collect();
        let Some(merge) = &self.merge else {
            for second in mine {
                if let Ok(bytes) = serde_json::to_vec(&second) {
                    self.ranks.post(0, LIVE_TAG, bytes);
                }
            }
            return;
        };
        let mut merge = merge.borrow_mut();
        for second in mine {
            merge.offer(0, second);
        }
        for (rank, bytes) in self.ranks.take_posted(LIVE_TAG) {
            if let Ok(second) = serde_json::from_slice(&bytes) {
                merge.offer(rank, second);
            }
        }
        let (workload, phase) = self.board.now();
        for update in merge.ready(&workload, &phase) {
            self.board.cluster_second(update);
        }
    }

    /// After the last vote, when every rank has sent all it will: rank 0
    /// takes what came and gives out every second it holds; the others
    /// see their sends go (or give up on them shortly).
    pub fn finish(&self) {
        self.relay();
        match &self.merge {
            Some(merge) => {
                let mut merge = merge.borrow_mut();
                for update in merge.rest(&self.board.now().1) {
                    self.board.cluster_second(update);
                }
            }
            None => self.ranks.flush_posted(),
        }
    }
}

/// One kind of run under MPI: what every rank does between receiving
/// rank 0's spec and sending rank 0 its document. [`on_every_rank`] is
/// the one driver: every kind's ranks meet in the same order (the spec
/// broadcast, one check, the votes, one gather).
pub trait RankRun {
    /// What rank 0 sends every rank.
    type Spec: serde::Serialize + serde::de::DeserializeOwned;
    /// This rank's part of the spec, checked, ready to run.
    type Checked;
    /// What the spec is, in a rank's error ("the tree").
    const WHAT: &'static str;
    /// This rank's part of `spec` (its own directory, prefix or slice),
    /// checked before any rank creates anything.
    fn check(
        &mut self,
        spec: Self::Spec,
        ranks: &Ranks,
        host: &str,
    ) -> Result<Self::Checked, String>;
    /// Runs it, starting with the other ranks (a vote), into this rank's
    /// document.
    fn run(
        &mut self,
        checked: Self::Checked,
        ranks: &std::rc::Rc<Ranks>,
        stop: &crate::util::stop::StopFlag,
        say: &dyn Fn(String),
    ) -> anyhow::Result<crate::result::Document>;
    /// After the last vote, before the gather.
    fn finish(&mut self) {}
}

/// What a rank does with `--mpi`, for every kind of run: rank 0's `spec`
/// (other ranks pass anything) is checked by every rank for its part, a
/// usage error on any rank being one on every rank before anything is
/// created; then run on every rank at once. A rank whose run stopped
/// short (a target gone, a store that failed) has failed, whatever it
/// measured: it votes no and sends its error. Rank 0 returns the cluster
/// document, other ranks None.
pub fn on_every_rank<R: RankRun>(
    ranks: std::rc::Rc<Ranks>,
    mut kind: R,
    spec: Result<R::Spec, String>,
    stop: crate::util::stop::StopFlag,
    say: &dyn Fn(String),
) -> anyhow::Result<Option<crate::result::Document>> {
    use crate::util::error::UsageError;
    ranks.stop_with(stop.clone());
    let spec = ranks.rank_0s(&spec, R::WHAT)?;
    let host = crate::measure::facts::host_facts().hostname;
    let checked = kind.check(spec, &ranks, &host);
    if let Some(e) = ranks.first_error(checked.as_ref().err().map(String::as_str)) {
        return Err(UsageError(e).into());
    }
    let checked = checked.expect("no rank failed its check");
    let result = kind
        .run(checked, &ranks, &stop, say)
        .and_then(|doc| match stopped_short(&doc) {
            Some(why) => Err(anyhow::anyhow!("{why}")),
            None => Ok(doc),
        });
    // The vote after the run; a rank that failed votes no here, and the
    // others learn it at their next vote.
    ranks.vote(result.is_ok());
    kind.finish();
    cluster_document(&ranks, result, say)
}

/// Why a rank's document stopped short, if it did.
fn stopped_short(doc: &crate::result::Document) -> Option<String> {
    doc.failure
        .clone()
        .or_else(|| doc.results.iter().find_map(|r| r.kind().failure()))
}

/// Any kind of run under MPI: rank 0's spec made each rank's own part,
/// checked, and run with the ranks' vote as its barrier.
pub struct Ranked<B> {
    pub bench: B,
    pub document: crate::result::Document,
}

impl<B: crate::commands::benchmark::Benchmark> RankRun for Ranked<B> {
    type Spec = B::Spec;
    type Checked = B::Checked;
    const WHAT: &'static str = B::WHAT;

    fn check(
        &mut self,
        mut spec: Self::Spec,
        ranks: &Ranks,
        host: &str,
    ) -> Result<Self::Checked, String> {
        let place = crate::commands::benchmark::Place {
            rank: ranks.rank(),
            ranks: ranks.size(),
            host,
        };
        self.bench.own_part(&mut spec, &place)?;
        self.bench.check(&spec).map_err(|e| e.0)
    }

    fn run(
        &mut self,
        checked: Self::Checked,
        ranks: &std::rc::Rc<Ranks>,
        stop: &crate::util::stop::StopFlag,
        _: &dyn Fn(String),
    ) -> anyhow::Result<crate::result::Document> {
        let voter = ranks.clone();
        let meet = move |ok: bool| voter.vote(ok);
        let cx = crate::commands::benchmark::Context {
            stop,
            board: None,
            meet: Some(&meet),
            say: &|_| {},
        };
        let r = self.bench.run(checked, &cx)?;
        Ok(crate::commands::benchmark::holding(&self.document, r))
    }
}

/// The MPI library's own name and version ("Open MPI v4.1.4"): the first
/// line of its version text, up to the first comma.
pub fn library() -> String {
    let text = mpi::environment::library_version().unwrap_or_else(|_| "unknown MPI".into());
    let first = text.lines().next().unwrap_or_default();
    first.split(',').next().unwrap_or(first).trim().to_string()
}

/// The CPUs this process may run on, when the kernel says.
pub fn allowed_cpus() -> Option<usize> {
    // SAFETY: sched_getaffinity fills the set it is given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
            .then(|| libc::CPU_COUNT(&set) as usize)
    }
}

/// `fathom run --mpi`: rank 0's plan (resolved from its command line) is
/// run by every rank, each on its own paths or slice (`shared`), every
/// workload started on a vote. `board` is where this rank's figures go
/// while it runs, or why they cannot (a port it cannot serve on): said to
/// every rank as any rank's failed check is.
pub struct PlanRanks {
    pub shared: bool,
    pub label: Option<String>,
    pub board: Result<Option<std::sync::Arc<crate::measure::live::LiveBoard>>, String>,
    relay: Option<std::rc::Rc<LiveRelay>>,
}

impl PlanRanks {
    pub fn new(
        shared: bool,
        label: Option<String>,
        board: Result<Option<std::sync::Arc<crate::measure::live::LiveBoard>>, String>,
    ) -> PlanRanks {
        PlanRanks {
            shared,
            label,
            board,
            relay: None,
        }
    }
}

impl RankRun for PlanRanks {
    type Spec = Vec<crate::spec::WorkloadSpec>;
    type Checked = Vec<crate::spec::WorkloadSpec>;
    const WHAT: &'static str = "the plan";

    fn check(
        &mut self,
        specs: Self::Spec,
        ranks: &Ranks,
        host: &str,
    ) -> Result<Self::Checked, String> {
        if let Err(why) = &self.board {
            return Err(why.clone());
        }
        let mine = crate::input::plan::plan_for_rank(
            &specs,
            ranks.rank(),
            ranks.size(),
            host,
            self.shared,
        )?;
        crate::run::check_plan(&mine).map_err(|e| e.0)?;
        Ok(mine)
    }

    fn run(
        &mut self,
        mine: Self::Checked,
        ranks: &std::rc::Rc<Ranks>,
        stop: &crate::util::stop::StopFlag,
        say: &dyn Fn(String),
    ) -> anyhow::Result<crate::result::Document> {
        if allowed_cpus() == Some(1) && mine.iter().any(|s| s.numjobs > 1) {
            say(format!(
                "warning: rank {} may run on one CPU only, so its workers share it (Open MPI binds each rank to a core: mpirun --bind-to none)",
                ranks.rank()
            ));
        }
        let board = self.board.clone().ok().flatten();
        self.relay = board
            .clone()
            .map(|b| std::rc::Rc::new(LiveRelay::new(ranks.clone(), b)));
        let relayed = self.relay.clone();
        let voter = ranks.clone();
        let session = crate::run::Session::new(stop.clone())
            .labelled(self.label.clone())
            .watched(board)
            .with_barrier(Box::new(move || voter.vote(true)))
            .after_each_second(relayed.map(|r| Box::new(move || r.relay()) as Box<dyn Fn()>));
        session.run(&mine, &mut |_| Ok(()))
    }

    fn finish(&mut self) {
        if let Some(relay) = &self.relay {
            relay.finish();
        }
    }
}

/// The end every rank's part of a job shares: its document (or its
/// error) goes to rank 0, which merges what the ranks measured into the
/// cluster document, naming the ranks that failed. Rank 0 returns it,
/// other ranks None.
fn cluster_document(
    ranks: &Ranks,
    result: anyhow::Result<crate::result::Document>,
    say: &dyn Fn(String),
) -> anyhow::Result<Option<crate::result::Document>> {
    use crate::result::Document;
    use crate::result::cluster::{Launcher, RankFailure, concurrent_ranks};
    let sent = match &result {
        Ok(doc) => serde_json::to_vec(doc)?,
        Err(e) => serde_json::to_vec(&serde_json::json!({ "error": format!("{e:#}") }))?,
    };
    let Some(all) = ranks.gather(&sent) else {
        return result.map(|_| None);
    };
    let mut documents = Vec::with_capacity(all.len());
    let mut failed = Vec::new();
    let lost = ranks.lost();
    for (rank, bytes) in all.iter().enumerate() {
        let Some(bytes) = bytes else {
            let why = lost
                .iter()
                .find(|(r, _)| *r as usize == rank)
                .map_or_else(|| "sent no result".to_string(), |(_, w)| w.clone());
            failed.push(RankFailure {
                rank: rank as u32,
                error: why,
            });
            continue;
        };
        let value: serde_json::Value = serde_json::from_slice(bytes)?;
        match value.get("error").and_then(|e| e.as_str()) {
            Some(e) => failed.push(RankFailure {
                rank: rank as u32,
                error: e.to_string(),
            }),
            None => documents.push((rank as u32, serde_json::from_value::<Document>(value)?)),
        }
    }
    let said = |f: &[RankFailure]| {
        f.iter()
            .map(|f| format!("rank {}: {}", f.rank, f.error))
            .collect::<Vec<_>>()
            .join("; ")
    };
    // What the ranks that did not fail measured, marked interrupted and
    // naming the ranks that failed; nothing when none measured anything.
    if documents.iter().all(|(_, d)| d.results.is_empty()) {
        anyhow::bail!("{}", said(&failed));
    }
    documents.retain(|(_, d)| !d.results.is_empty());
    let mut merged = concurrent_ranks(documents, Launcher::Mpi).map_err(anyhow::Error::msg)?;
    if !failed.is_empty() {
        say(format!(
            "{}; the document holds the other ranks' results, marked interrupted",
            said(&failed)
        ));
        merged.interrupted = true;
    }
    if let Some(c) = merged.cluster.as_mut() {
        c.mpi_library = Some(library());
        c.ranks = ranks.size();
        c.failed = failed;
    }
    Ok(Some(merged))
}
