//! Stopping a run on SIGINT/SIGTERM: handlers only set flags; workers poll
//! them, drain what is in flight and the run reports what it measured.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Raised by every handler `on_signals` registers: code that holds no
/// flag (a history's connection) yields to a signal too.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Whether SIGINT or SIGTERM came since fathom's handlers were set.
pub fn signalled() -> bool {
    SIGNALLED.load(Ordering::Relaxed)
}

#[derive(Clone, Default)]
pub struct StopFlag {
    stop: Arc<AtomicBool>,
    signal: Arc<AtomicI32>,
}

/// The error a run returns when it was stopped before it had anything to
/// report (e.g. during layout).
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

impl StopFlag {
    /// A flag raised by SIGINT and SIGTERM.
    pub fn on_signals() -> std::io::Result<StopFlag> {
        let flag = StopFlag::default();
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let stop = flag.stop.clone();
            let which = flag.signal.clone();
            // SAFETY: the handler only stores to atomics, which is signal-safe.
            unsafe {
                signal_hook::low_level::register(signal, move || {
                    which.store(signal, Ordering::SeqCst);
                    stop.store(true, Ordering::SeqCst);
                    SIGNALLED.store(true, Ordering::SeqCst);
                })?;
            }
        }
        Ok(flag)
    }

    #[inline]
    pub fn is_set(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn set(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// The signal that raised the flag, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}
