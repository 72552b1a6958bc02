//! fathom: a storage I/O benchmark.
//!
//! `ls src/` reads as the data flow (ARCHITECTURE.md has the map):
//! - `cli` (a module of the binary, `src/main.rs`, so that the library
//!   cannot reach it) turns flags into specs and a mode, and picks the exit
//!   code;
//! - [`input`] is where specs come from (flags, presets, TOML job files,
//!   fio job files, sweeps) and [`spec`] what they say;
//! - [`run`] prepares targets and drives [`engine`] workers;
//! - [`commands`] are the library side of the commands built on runs
//!   (capacity, certify, crashcheck, pts, replay, meta, ranks);
//! - [`measure`] holds histograms, intervals, CPU time and host facts;
//! - [`result`] is the JSON document, [`report`] renders it, [`history`]
//!   remembers it;
//! - [`trace`] reads and writes traces, [`util`] holds what all share.

// Test modules make their fixtures by hand, around the gate.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod commands;
pub mod engine;
pub mod gate;
pub mod history;
pub mod input;
pub mod measure;
pub mod report;
pub mod result;
pub mod run;
pub mod spec;
pub mod trace;
pub mod util;
