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

/// Process exit codes.
pub mod exit {
    pub const RUNTIME_ERROR: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const SIGINT: i32 = 130;
    pub const SIGTERM: i32 = 143;
}
