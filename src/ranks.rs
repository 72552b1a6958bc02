//! Many hosts through MPI (`--features mpi`, `mpirun ... fathom run --mpi`):
//! ranks are launched and joined by MPI, never by a protocol of fathom's.
//! Rank 0 resolves the plan and sends it to every rank; every rank checks
//! its part before anything is created; each workload starts on a vote that
//! doubles as a barrier (a rank that failed votes no, and every rank stops);
//! each rank's document goes to rank 0, which merges them.
//!
//! The MPI calls are collective, so every rank makes the same calls in the
//! same order: one plan broadcast, one check, one vote before each workload
//! and one after the last (a rank that failed makes a single "no" vote, which
//! ends everyone's voting), and one gather.

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::cell::Cell;

pub struct Ranks {
    // Finalises MPI when dropped, after every use of `world`.
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    /// Whether votes still happen: false once one said "stop".
    voting: Cell<bool>,
}

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
    pub fn join() -> Result<Ranks, String> {
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
        })
    }

    pub fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    pub fn size(&self) -> u32 {
        self.world.size() as u32
    }

    /// Rank 0's bytes, on every rank.
    pub fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        // One leading byte, dropped again: Open MPI refuses empty buffers.
        let mut len = bytes.len() as u64 + 1;
        root.broadcast_into(&mut len);
        let mut buf = if self.rank() == 0 {
            std::iter::once(0).chain(bytes).collect()
        } else {
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut buf[..]);
        buf.remove(0);
        buf
    }

    /// Every rank's bytes, in rank order, at rank 0 (None elsewhere).
    pub fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        // Open MPI refuses an empty buffer: every message starts with one
        // byte that is dropped again.
        let mine: Vec<u8> = std::iter::once(0).chain(mine.iter().copied()).collect();
        let mine = &mine[..];
        let root = self.world.process_at_rank(0);
        let len = mine.len() as i32;
        if self.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            return None;
        }
        let mut lens = vec![0i32; self.size() as usize];
        root.gather_into_root(&len, &mut lens[..]);
        let displs: Vec<i32> = lens
            .iter()
            .scan(0, |at, &l| {
                let here = *at;
                *at += l;
                Some(here)
            })
            .collect();
        let mut all = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
        {
            let mut partition = PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut partition);
        }
        Some(
            lens.iter()
                .zip(&displs)
                .map(|(&l, &d)| all[d as usize + 1..(d + l) as usize].to_vec())
                .collect(),
        )
    }

    /// Whether every rank says `ok`; a barrier too. After a "no" nobody
    /// votes again.
    pub fn vote(&self, ok: bool) -> bool {
        if !self.voting.get() {
            return false;
        }
        let mine = i32::from(ok);
        let mut all = 0i32;
        self.world
            .all_reduce_into(&mine, &mut all, SystemOperation::min());
        let go = all == 1;
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
                    .find(|(_, m)| !m.is_empty())
                    .map(|(r, m)| format!("rank {r}: {}", String::from_utf8_lossy(m)))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&self.broadcast(first.into_bytes())).into_owned();
        (!text.is_empty()).then_some(text)
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

/// What a rank does with `--mpi`: rank 0's `plan` (resolved from its
/// command line; other ranks pass anything) is run by every rank, each on
/// its own paths or slice (`shared`), every workload started on a vote.
/// Rank 0 returns the cluster document; other ranks None. Bad input on any
/// rank is a usage error on every rank, before anything is created.
pub fn run(
    ranks: std::rc::Rc<Ranks>,
    plan: Result<Vec<crate::spec::WorkloadSpec>, String>,
    shared: bool,
    stop: crate::stop::StopFlag,
    label: Option<String>,
) -> anyhow::Result<Option<crate::result::Document>> {
    use crate::error::UsageError;
    use crate::result::Document;
    use crate::result::cluster::{Launcher, RankFailure, concurrent_ranks};
    let sent = if ranks.rank() == 0 {
        serde_json::to_vec(&plan)?
    } else {
        Vec::new()
    };
    let plan: Result<Vec<crate::spec::WorkloadSpec>, String> =
        serde_json::from_slice(&ranks.broadcast(sent))?;
    let specs = plan.map_err(UsageError)?;
    let host = crate::measure::facts::host_facts().hostname;
    let mine = crate::plan::plan_for_rank(&specs, ranks.rank(), ranks.size(), &host, shared)
        .and_then(|p| crate::run::check_plan(&p).map(|_| p).map_err(|e| e.0));
    if let Some(e) = ranks.first_error(mine.as_ref().err().map(String::as_str)) {
        return Err(UsageError(e).into());
    }
    let mine = mine.expect("no rank failed its check");
    if allowed_cpus() == Some(1) && mine.iter().any(|s| s.numjobs > 1) {
        eprintln!(
            "fathom: warning: rank {} may run on one CPU only, so its workers share it (Open MPI binds each rank to a core: mpirun --bind-to none)",
            ranks.rank()
        );
    }
    let voter = ranks.clone();
    let session = crate::run::Session::new(stop)
        .labelled(label)
        .with_barrier(Box::new(move || voter.vote(true)));
    let result = session.run(&mine, &mut |_| Ok(()));
    // The vote after the last workload; a rank that failed votes no here,
    // and the others learn it at their next vote.
    ranks.vote(result.is_ok());
    let sent = match &result {
        Ok(doc) => serde_json::to_vec(doc)?,
        Err(e) => serde_json::to_vec(&serde_json::json!({ "error": format!("{e:#}") }))?,
    };
    let Some(all) = ranks.gather(&sent) else {
        return result.map(|_| None);
    };
    let mut documents = Vec::with_capacity(all.len());
    let mut failed = Vec::new();
    for (rank, bytes) in all.iter().enumerate() {
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
        eprintln!(
            "fathom: {}; the document holds the other ranks' results, marked interrupted",
            said(&failed)
        );
        merged.interrupted = true;
    }
    if let Some(c) = merged.cluster.as_mut() {
        c.mpi_library = Some(library());
        c.ranks = ranks.size();
        c.failed = failed;
    }
    Ok(Some(merged))
}
