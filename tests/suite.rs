//! The integration tests: each file beside this one runs the real binary on
//! real files, and all of them are one test binary, so that a build links
//! it once and the tests of every file share the test threads (the NVMe
//! guest's tests/nvme.rs and the MPI build's tests/mpi.rs are binaries of
//! their own). Run one file's tests with its name as the filter:
//! `cargo test --test suite fio_json::`.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

mod common;
#[path = "common/faultfs.rs"]
mod faultfs;
#[path = "common/pods.rs"]
mod pods;
#[path = "common/postgres.rs"]
mod postgres_server;
#[path = "common/s3_server.rs"]
mod s3_server;
#[path = "common/source.rs"]
mod source;

mod bad_input;
mod block_device;
mod capacity;
mod careless_and_hostile_use;
mod certify;
mod check;
mod cluster;
mod content;
mod crashcheck;
mod disks;
mod docs_commands;
mod drift;
mod fault_injection;
mod faults;
mod fio_cmdline;
mod fio_jobs;
mod fio_json;
mod first_hour;
mod gate;
mod history;
mod hostile_input;
mod io_flags;
mod k8s;
mod layers;
mod limits;
mod live;
mod pts;
mod rate;
mod replay;
mod reports;
mod results;
mod ring_options;
mod run;
mod s3;
mod safety;
mod schema;
mod secrets_and_escapes;
mod signals;
mod streams;
mod sync;
mod test_isolation;
mod tools;
mod train;
mod tree;
mod trim;
mod trust;
mod user_files;
mod verify;
mod warnings;
