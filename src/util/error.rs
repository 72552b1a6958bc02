//! Errors in what the user asked for (flags, job files, targets): reported on
//! one line with exit code 2, before anything is created.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Shorthand for `Err(UsageError(..).into())` in functions returning anyhow.
#[macro_export]
macro_rules! usage_bail {
    ($($arg:tt)*) => {
        return Err($crate::util::error::UsageError(format!($($arg)*)).into())
    };
}

/// A comparison that cannot say whether the target changed (a side held
/// back by the host, or with no figure to compare): a verdict of its own,
/// with its reason, not bad input, so that a CI gate can choose to pass it.
#[derive(Debug)]
pub struct CannotJudge(pub String);

impl fmt::Display for CannotJudge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot judge: {}", self.0)
    }
}

impl std::error::Error for CannotJudge {}

/// Process exit codes.
pub mod exit {
    pub const RUNTIME_ERROR: i32 = 1;
    pub const USAGE: i32 = 2;
    /// `check` could not judge (the host held a side back, or nothing to
    /// compare): neither a pass nor a regression.
    pub const CANNOT_JUDGE: i32 = 3;
    pub const SIGINT: i32 = 130;
    pub const SIGTERM: i32 = 143;
}
