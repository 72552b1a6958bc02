//! Where workloads come from: TOML job files and presets' text
//! (`jobfile`), fio job files (`fio`), and the runs a spec's sweeps make
//! (`plan`).

pub mod aws;
pub mod fio;
pub mod jobfile;
pub mod plan;
pub mod presets;
pub mod resolve;
