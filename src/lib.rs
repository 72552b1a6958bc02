//! fathom: a storage I/O benchmark.
//!
//! Data flows spec -> plan -> engine -> measure -> result -> report:
//! - [`cli`] turns flags into [`spec::WorkloadSpec`]s, [`plan`] lists the runs;
//! - [`run`] prepares targets and drives [`engine`] workers;
//! - [`measure`] holds histograms, intervals, CPU time and host facts;
//! - [`result`] is the JSON document, [`report`] renders it.

pub mod buffers;
pub mod capacity;
pub mod certify;
pub mod cli;
pub mod crashcheck;
pub mod engine;
pub mod error;
pub mod fiojob;
pub mod jobfile;
pub mod measure;
pub mod meta;
pub mod plan;
pub mod pts;
#[cfg(feature = "mpi")]
pub mod ranks;
pub mod replay;
pub mod report;
pub mod result;
pub mod run;
pub mod safety;
pub mod spec;
pub mod stop;
pub mod trace;
pub mod units;
pub mod util;
pub mod verify;
pub mod warnings;
