//! The `apusim` binary as a user drives it: runs, outputs, determinism, and errors. One test
//! binary with a file per subject (each binary links the whole workspace again, so one binary
//! keeps the test build short).
//!
//! - `runs`, `traces`, `functional`, `dram`, `studies`, `sim`: the commands and their outputs;
//! - `bad_input`: a table of bad inputs, each refused with a message naming what is at fault;
//! - `cachegrind`: the functional hierarchy against valgrind's cachegrind, counter for counter;
//! - `libcachesim`: libCacheSim traces converted, replayed and run;
//! - `plot`: figures drawn from study outputs;
//! - `sweep`: `apusim sweep` and `apusim results` with a results database;
//! - `slurm`: sweeps through a SLURM cluster and shards merged.

mod common;

mod bad_input;
mod cachegrind;
mod dram;
mod functional;
mod libcachesim;
mod plot;
mod runs;
mod sim;
mod slurm;
mod studies;
mod sweep;
mod traces;
