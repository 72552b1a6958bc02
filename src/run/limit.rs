//! The verdict on every workload result: what limited its figures, judged
//! from what the run measured beside the I/O (the workers' time, how late
//! each I/O went out once it could, the disks' own counters) and the
//! warnings already raised.

use crate::result::WorkloadResult;
use crate::result::limit::{HOST_HINT, LimitedBy, Limiter};
use crate::result::warning::WarningKind;
use crate::util::units::{format_bytes, latency, ops_per_s, thousands};

/// A rated run that delivered at least this share of the rate asked, with
/// almost no I/O late, was limited by its schedule.
pub const RATE_KEPT: f64 = 0.97;
/// Share of I/Os late (issued over 1 ms after they could go) that a rated
/// run may have and still be said to keep its schedule.
pub const LATE_ALLOWED: f64 = 0.01;
pub use crate::result::limit::FATHOM_IDLE_SLOTS;
/// A share of the host's CPU time in software interrupts worth naming
/// beside a device verdict.
pub const SOFTIRQ_NOTED: f64 = 0.05;
/// How much longer than its set latency the null engine's I/Os may take
/// (timer slack, a wake-up) before the host is said to have slowed them.
pub const NULL_SERVICE_SLACK: f64 = 0.10;
/// A buffered run whose disks moved less than this share of the bytes
/// fathom read and wrote was answered by the page cache.
pub const CACHE_SERVED: f64 = 0.5;

/// The page cache answered: the disks moved far fewer bytes than fathom
/// read and wrote, or a warning says memory served the I/O.
fn page_cache(result: &WorkloadResult) -> Option<LimitedBy> {
    let caps = result.spec.engine.caps();
    let cached = [
        WarningKind::PageCacheReads,
        WarningKind::PageCacheWrites,
        WarningKind::BelowDeviceFloor,
        WarningKind::MemoryTarget,
    ];
    let suspected = result.warnings.iter().find(|w| cached.contains(&w.kind));
    // An engine that moves no data (falloc, ftruncate) sends no bytes
    // through the page cache for memory to answer.
    let moved = match caps.moves_data {
        true => through_disks(result),
        false => None,
    };
    match (moved, suspected) {
        // The disks' own counters settle it where there are any: bytes the
        // disks did not move came from memory.
        (Some((disk, ours)), _) if (disk as f64) < ours as f64 * CACHE_SERVED => {
            return Some(verdict(
                Limiter::PageCache,
                format!(
                    "the disks moved {} of the {} fathom read and wrote through the page cache; memory answered the rest (p50 latency {})",
                    format_bytes(disk),
                    format_bytes(ours),
                    p50(result)
                ),
            ));
        }
        (Some(_), _) => {}
        (None, Some(w)) => {
            return Some(verdict(
                Limiter::PageCache,
                format!("{} (p50 latency {})", w.kind.summary(), p50(result)),
            ));
        }
        (None, None) => {}
    }
    None
}

/// What limited `result`; None when nothing was measured to judge by
/// (nothing completed, or a result read from elsewhere).
pub fn judge(result: &WorkloadResult) -> Option<LimitedBy> {
    if result.total.ios() == 0 {
        return None;
    }
    let spec = &result.spec;
    let caps = spec.engine.caps();
    // The null engine without a latency answers every I/O as it takes it:
    // what it measures is fathom, and its workers time nothing else.
    let inline = !caps.does_io && spec.null_latency_ns == 0;
    if result.issue.is_none() && !inline {
        return None;
    }
    let waited = result.cpu.waited_for_cpu_share.unwrap_or(0.0);
    let stolen = result.cpu.host_steal_share.unwrap_or(0.0);
    let late = result.issue.as_ref().map(|issue| {
        format!(
            "{} of I/Os went out more than 1 ms after they could (p99 issue lag {})",
            share(issue.late_share),
            latency(issue.lag_ns.p99 as f64)
        )
    });
    let busy = super::warnings::BUSY_HOST_SHARE;
    if waited >= busy || stolen >= busy {
        let mut why = Vec::new();
        if waited >= busy {
            why.push(format!(
                "the workers waited for a CPU {} of the time they ran",
                share(waited)
            ));
        }
        if stolen >= busy {
            why.push(format!(
                "the hypervisor gave {} of the CPU time to other guests",
                share(stolen)
            ));
        }
        why.extend(late);
        if result.cpu.involuntary_switches > 0 {
            why.push(format!(
                "the scheduler took the CPU from fathom's threads {} times",
                thousands(result.cpu.involuntary_switches)
            ));
        }
        return Some(verdict(Limiter::Host, why.join("; ")));
    }
    if inline {
        return Some(verdict(
            Limiter::Fathom,
            format!(
                "the {} engine does no I/O: the figures are fathom's own speed",
                spec.engine
            ),
        ));
    }
    let issue = result.issue.as_ref()?;
    let late = late.unwrap_or_default();
    // Below the share that makes a host busy on its own, the host may
    // still be why I/Os went out late when they did.
    let host_hint = waited >= HOST_HINT || stolen >= HOST_HINT;
    let held_back = |why: String| match host_hint {
        true => verdict(
            Limiter::Host,
            format!(
                "{why}, and the workers waited for a CPU {} of the time they ran",
                share(waited.max(stolen))
            ),
        ),
        false => verdict(Limiter::Fathom, why),
    };
    if let Some(asked) = asked_iops(result) {
        let done = result.total.iops();
        if issue.late_share > LATE_ALLOWED {
            // A device that falls behind makes I/Os wait for a slot, which
            // is not issue lag: these went out late with a slot free.
            return Some(held_back(format!(
                "{} I/Os a second were asked for and {} delivered; {late}",
                ops_per_s(asked),
                ops_per_s(done)
            )));
        }
        if done >= asked * RATE_KEPT {
            return Some(verdict(
                Limiter::RateAsked,
                format!(
                    "{} I/Os a second were asked for and {} delivered, on time (p99 issue lag {})",
                    ops_per_s(asked),
                    ops_per_s(done),
                    latency(issue.lag_ns.p99 as f64)
                ),
            ));
        }
    }
    if let Some(cache) = page_cache(result) {
        return Some(cache);
    }
    // The null engine's device is a sleep of a known length: what its I/Os
    // took beyond that, the host's timers and scheduler added.
    let service = spec.null_latency_ns as f64;
    if !caps.does_io && mean_latency(result) > service * (1.0 + NULL_SERVICE_SLACK) {
        return Some(verdict(
            Limiter::Host,
            format!(
                "the null engine's simulated device answers in {}, but its I/Os took {} on average: the host woke its workers late (they waited for a CPU {} of the time they ran)",
                latency(service),
                latency(mean_latency(result)),
                share(waited)
            ),
        ));
    }
    let slots = format!(
        "I/O slots sat free {} of the time (mean {} from a free slot to its next I/O, against {} of latency)",
        share(issue.idle_slot_share),
        latency(issue.lag_ns.mean),
        latency(mean_latency(result))
    );
    if issue.idle_slot_share >= FATHOM_IDLE_SLOTS {
        return Some(held_back(format!(
            "{slots}; the workers spent {} of their time on their own work",
            share(issue.own_share)
        )));
    }
    let mut evidence = format!(
        "{slots}; the workers spent {} of their time in the engine, waiting for the device",
        share(issue.in_engine_share)
    );
    for d in result.disks.iter().filter(|_| caps.does_io) {
        evidence.push_str(&format!("; {} was busy {:.0}%", d.name, d.util_pct));
        if result.runtime_s > 0.0 {
            let in_flight = d.in_queue_ms as f64 / (result.runtime_s * 1e3);
            evidence.push_str(&format!(" with {in_flight:.1} I/Os in flight on average"));
        }
    }
    if !caps.does_io {
        evidence.push_str(" (the null engine's simulated device)");
    }
    if let Some(softirq) = result
        .cpu
        .host_softirq_share
        .filter(|&s| s >= SOFTIRQ_NOTED)
    {
        // Completions are handled in software interrupts: a host busy in
        // them makes a device look slower than it is.
        evidence.push_str(&format!(
            "; software interrupts took {} of the host's CPU time",
            share(softirq)
        ));
    }
    Some(verdict(Limiter::Device, evidence))
}

/// A buffered run on disks the kernel counts: the bytes those disks moved
/// and the bytes fathom read and wrote. None for direct I/O, a memory file
/// system (its warning decides), or no disk counters.
fn through_disks(result: &WorkloadResult) -> Option<(u64, u64)> {
    let memory = result
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::MemoryTarget);
    if result.spec.direct || memory || result.disks.is_empty() {
        return None;
    }
    let disk = result
        .disks
        .iter()
        .map(|d| d.read_bytes + d.write_bytes)
        .sum();
    let ours = result.total.read.bytes + result.total.write.bytes;
    (ours > 0).then_some((disk, ours))
}

fn verdict(by: Limiter, evidence: String) -> LimitedBy {
    LimitedBy { by, evidence }
}

/// A worker of an object-store run may be on a CPU this share of the
/// run before its own work (signing, parsing, timing), not the store's
/// answers, is what limited the requests.
pub const CLIENT_BUSY: f64 = 0.5;

/// What limited an object-store run's requests, from its workers' time:
/// on a CPU (the client's work), waiting for one (the host), or neither
/// (waiting for the store's answers). `cpu_s` and `cpu_wait_s` are summed
/// over `workers`, each of which ran `elapsed_s`; `cpu_wait_s` is None
/// where the kernel keeps no such count.
pub fn judge_object_run(
    workers: u32,
    elapsed_s: f64,
    cpu_s: f64,
    cpu_wait_s: Option<f64>,
) -> Option<LimitedBy> {
    let span = f64::from(workers) * elapsed_s;
    if span <= 0.0 {
        return None;
    }
    let on_cpu = cpu_s / span;
    let waited = cpu_wait_s.map_or(0.0, |w| w / span);
    let answers = (1.0 - on_cpu - waited).max(0.0);
    let evidence = format!(
        "the workers were on a CPU {} of the run, waited for one {}, and for the store's answers {}",
        share(on_cpu),
        share(waited),
        share(answers)
    );
    // The largest share of the workers' time limited their requests: a
    // host that kept them from a CPU 4% of a run they spent 95% waiting
    // for the store's answers did not limit it (the wait is still said,
    // and `check` takes it as a busy host's).
    Some(if answers >= 0.5 {
        verdict(Limiter::Store, evidence)
    } else if waited >= HOST_HINT.max(on_cpu) {
        verdict(Limiter::Host, evidence)
    } else if on_cpu >= CLIENT_BUSY {
        verdict(Limiter::Fathom, evidence)
    } else {
        verdict(Limiter::Store, evidence)
    })
}

fn share(s: f64) -> String {
    match s {
        0.0 => "0%".into(),
        s if s < 0.001 => "under 0.1%".into(),
        s if s < 0.01 => format!("{:.1}%", s * 100.0),
        s => format!("{:.0}%", s * 100.0),
    }
}

/// I/Os per second the rate knobs ask for over every target; None for a
/// run with any direction unrated.
fn asked_iops(result: &WorkloadResult) -> Option<f64> {
    let spec = &result.spec;
    let targets = spec.targets.len() as f64;
    if let Some(rate) = spec.target_rate() {
        return Some(rate * targets);
    }
    if let Some(replay) = &spec.replay {
        // A replay at a speed asks for the trace's I/Os over its span.
        let r = result.replay.as_ref()?;
        replay.speed?;
        return (r.trace_span_s > 0.0).then(|| r.trace_ios as f64 / r.trace_span_s);
    }
    let [read, write] = spec.direction_iops();
    let pct = spec.rw.read_percent(spec.rwmix_read);
    match (pct, read, write) {
        (100, Some(r), _) => Some(r * targets),
        (0, _, Some(w)) => Some(w * targets),
        (_, Some(r), Some(w)) => Some((r + w) * targets),
        _ => None,
    }
}

fn mean_latency(result: &WorkloadResult) -> f64 {
    let (sum, n) = result
        .total
        .named()
        .iter()
        .fold((0.0, 0u64), |(sum, n), (_, d)| {
            (sum + d.lat_ns.mean * d.ios as f64, n + d.ios)
        });
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// The median latency of the direction with the most I/Os.
fn p50(result: &WorkloadResult) -> String {
    latency(result.total.main().lat_ns.p50 as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Of the workers' time, whichever share is largest limited an object
    /// run: mostly waiting for answers is the store, however busy the host.
    #[test]
    fn an_object_run_waiting_for_its_store_is_the_stores() {
        let by = |cpu: f64, wait: f64| judge_object_run(1, 10.0, cpu, Some(wait)).unwrap().by;
        assert_eq!(
            by(0.1, 0.4),
            Limiter::Store,
            "95% waiting for answers, 4% for a CPU"
        );
        assert_eq!(by(0.3, 6.0), Limiter::Host);
        assert_eq!(by(6.0, 0.1), Limiter::Fathom);
    }
    use crate::measure::issue::IssueTiming;
    use crate::result::warning::Warning;

    /// 10,000 reads at 100 µs on io_uring, slots idle `idle` of the time,
    /// workers waiting for a CPU `waited` of theirs.
    fn run(idle: f64, waited: f64) -> WorkloadResult {
        let mut w = crate::result::test_support::empty_workload();
        w.total.read.ios = 10_000;
        w.total.read.iops = 10_000.0;
        w.total.read.lat_ns.mean = 100_000.0;
        w.runtime_s = 1.0;
        w.cpu.waited_for_cpu_share = Some(waited);
        w.issue = Some(IssueTiming {
            idle_slot_share: idle,
            in_engine_share: 1.0 - idle,
            ..Default::default()
        });
        w
    }

    #[test]
    fn each_cause_is_named_with_its_evidence() {
        let device = judge(&run(0.02, 0.01)).unwrap();
        assert_eq!(device.by, Limiter::Device, "{device}");
        assert!(device.evidence.contains("slots sat free 2%"), "{device}");
        let fathom = judge(&run(0.4, 0.01)).unwrap();
        assert_eq!(fathom.by, Limiter::Fathom, "{fathom}");
        let host = judge(&run(0.4, 0.38)).unwrap();
        assert_eq!(host.by, Limiter::Host, "{host}");
        assert!(host.evidence.contains("waited for a CPU 38%"), "{host}");

        let mut rated = run(0.02, 0.01);
        rated.spec.rate_iops = Some(10_000.0);
        assert_eq!(judge(&rated).unwrap().by, Limiter::RateAsked);
        // A rate not delivered is not the schedule's doing.
        rated.spec.rate_iops = Some(20_000.0);
        assert_eq!(judge(&rated).unwrap().by, Limiter::Device);
        // I/Os that went out late with a slot free: fathom held them back,
        // or a host a little busy did.
        rated.spec.rate_iops = Some(10_000.0);
        rated.issue.as_mut().unwrap().late_share = 0.05;
        assert_eq!(judge(&rated).unwrap().by, Limiter::Fathom);
        rated.cpu.waited_for_cpu_share = Some(0.05);
        let host = judge(&rated).unwrap();
        assert!(
            host.by == Limiter::Host && host.evidence.contains("5% of I/Os"),
            "{host}"
        );

        let mut cached = run(0.3, 0.01);
        cached.warnings.push(Warning {
            kind: WarningKind::PageCacheReads,
            target: "t".into(),
            figure: None,
            at_s: None,
            message: String::new(),
        });
        assert_eq!(judge(&cached).unwrap().by, Limiter::PageCache);
        // Buffered, with a disk that moved every byte: the disk answered,
        // whatever the region's size suggested.
        cached.spec.direct = false;
        cached.total.read.bytes = 40 << 20;
        cached.disks = vec![crate::result::DiskUsage {
            name: "vda".into(),
            read_bytes: 40 << 20,
            ..Default::default()
        }];
        cached.issue.as_mut().unwrap().idle_slot_share = 0.02;
        assert_eq!(judge(&cached).unwrap().by, Limiter::Device);
        cached.disks[0].read_bytes = 1 << 20;
        let by = judge(&cached).unwrap();
        assert!(
            by.by == Limiter::PageCache && by.evidence.contains("1 MiB of the 40 MiB"),
            "{by}"
        );

        let mut null = run(0.5, 0.01);
        null.spec.engine = crate::spec::EngineKind::Null;
        let by = judge(&null).unwrap();
        assert!(by.by == Limiter::Fathom && by.evidence.contains("does no I/O"));

        // A simulated device of 100 µs whose I/Os took 120 µs: the host
        // woke the workers late.
        let mut simulated = run(0.02, 0.01);
        simulated.spec.engine = crate::spec::EngineKind::Null;
        simulated.spec.null_latency_ns = 100_000;
        assert_eq!(judge(&simulated).unwrap().by, Limiter::Device);
        simulated.total.read.lat_ns.mean = 120_000.0;
        let by = judge(&simulated).unwrap();
        assert!(
            by.by == Limiter::Host && by.evidence.contains("woke its workers late"),
            "{by}"
        );

        let mut nothing = run(0.0, 0.0);
        nothing.total.read.ios = 0;
        assert!(judge(&nothing).is_none());
        nothing.issue = None;
        assert!(judge(&nothing).is_none());
    }
}
