//! The library side of the commands built on runs: each takes specs,
//! drives runs through [`crate::run`], and returns its result; none prints.

pub mod benchmark;
pub mod capacity;
pub mod certify;
pub mod crashcheck;
pub mod k8s;
pub mod meta;
pub mod object;
pub mod pts;
#[cfg(feature = "mpi")]
pub mod ranks;
pub mod replay;
pub mod train;
pub mod tree;
