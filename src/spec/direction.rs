//! The directions of I/O (read, write, trim): the one table, kept with the
//! measurements that count by it.

pub use crate::measure::direction::Direction;
