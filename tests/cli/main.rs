//! The `apusim` binary as a user drives it: runs, outputs, determinism, and errors. One test
//! binary with a file per subject, so that the workspace is linked into it once.

#[path = "../common/mod.rs"]
mod common;

mod dram;
mod functional;
mod runs;
mod sim;
mod studies;
mod traces;
