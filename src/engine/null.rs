//! The null engine: no I/O touches a device. With no service time every I/O
//! completes at once, which measures fathom's own overhead per I/O (fio's
//! `null`). With a service time (`--null-latency`) each I/O completes that
//! long after it was submitted, as on a device with `iodepth` parallel
//! slots and a fixed service time: a target whose speed is known exactly
//! (iodepth / service time), for testing what fathom concludes about it.

use super::{Completion, Engine, IoRequest};
use crate::util::buffers::Buffers;
use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

pub struct NullEngine {
    buffers: Buffers,
    service: Duration,
    queued: Vec<Completion>,
    /// Submitted I/Os and when each completes, earliest first (every I/O
    /// takes the same time, so submission order is completion order).
    in_flight: VecDeque<(Instant, Completion)>,
    completed: Vec<Completion>,
}

impl NullEngine {
    pub fn new(buffers: Buffers, service: Duration) -> Self {
        let depth = buffers.slots();
        if !service.is_zero() {
            // The kernel lets a sleeping thread wake up to 50 µs late by
            // default, which would add to every service time; this thread
            // (the worker's own) asks for 1 ns.
            // SAFETY: PR_SET_TIMERSLACK takes an integer and changes only
            // the calling thread.
            unsafe {
                libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
            }
        }
        NullEngine {
            buffers,
            service,
            queued: Vec::with_capacity(depth),
            in_flight: VecDeque::with_capacity(depth),
            completed: Vec::with_capacity(depth),
        }
    }

    fn complete_due(&mut self, now: Instant) {
        while let Some(&(due, c)) = self.in_flight.front() {
            if due > now {
                break;
            }
            self.in_flight.pop_front();
            self.completed.push(c);
        }
    }
}

impl Engine for NullEngine {
    fn answers_inline(&self) -> bool {
        self.service.is_zero()
    }

    fn may_block(&self) -> bool {
        false
    }

    fn buffers(&mut self) -> &mut Buffers {
        &mut self.buffers
    }

    fn queue(&mut self, request: IoRequest) {
        self.queued.push(Completion {
            slot: request.slot,
            result: request.len as i32,
        });
    }

    fn submit_and_wait(&mut self, min_complete: u32, timeout: Duration) -> io::Result<()> {
        if self.service.is_zero() {
            self.completed.append(&mut self.queued);
            return Ok(());
        }
        let now = Instant::now();
        let due = now + self.service;
        self.in_flight
            .extend(self.queued.drain(..).map(|c| (due, c)));
        let wanted = (min_complete as usize).saturating_sub(self.completed.len());
        if wanted > 0
            && let Some(&(ready, _)) = self.in_flight.get(wanted - 1).or(self.in_flight.back())
        {
            let until = ready.min(now + timeout);
            let left = until.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                std::thread::sleep(left);
            }
        }
        self.complete_due(Instant::now());
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<Completion>) {
        // Without a service time nothing waits in flight: no clock read on
        // the path that measures fathom's own overhead.
        if !self.in_flight.is_empty() {
            self.complete_due(Instant::now());
        }
        out.append(&mut self.completed);
    }

    fn sync(&mut self, _data_only: bool) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Direction;

    fn buffers() -> Buffers {
        use rand::SeedableRng;
        Buffers::new(2, 4096, &mut rand::rngs::SmallRng::seed_from_u64(1))
    }

    fn request(slot: u32) -> IoRequest {
        IoRequest {
            ioprio: 0,
            slot,
            dir: Direction::Read,
            offset: 0,
            len: 4096,
        }
    }

    #[test]
    fn without_a_service_time_every_io_completes_at_once() {
        let mut e = NullEngine::new(buffers(), Duration::ZERO);
        e.queue(request(0));
        e.queue(request(1));
        e.submit_and_wait(1, Duration::from_secs(5)).unwrap();
        let mut out = Vec::new();
        e.reap(&mut out);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn an_io_completes_no_sooner_than_its_service_time() {
        let service = Duration::from_millis(20);
        let mut e = NullEngine::new(buffers(), service);
        let start = Instant::now();
        e.queue(request(0));
        // Not waiting: nothing has completed yet.
        e.submit_and_wait(0, Duration::ZERO).unwrap();
        let mut out = Vec::new();
        e.reap(&mut out);
        assert!(out.is_empty());
        // A short timeout returns before the I/O completes.
        e.submit_and_wait(1, Duration::from_millis(1)).unwrap();
        e.reap(&mut out);
        assert!(out.is_empty() || start.elapsed() >= service);
        e.submit_and_wait(1, Duration::from_secs(5)).unwrap();
        e.reap(&mut out);
        assert_eq!(out.len(), 1);
        assert!(start.elapsed() >= service);
        assert_eq!(out[0].result, 4096);
    }
}
