//! Small pieces the rest of fathom shares.

pub mod input;
