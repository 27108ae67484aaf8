//! The trace crate's integration tests, one binary with a module per subject (each binary links
//! the crate again, so one binary keeps the test build short).
//!
//! - `apt`: the `.apt` writer and reader;
//! - `champsim`, `csv`, `lackey`, `libcachesim`: the importers;
//! - `parallel`: the read-ahead reader against the sequential one;
//! - `proptests`: round trips and corruption, by property;
//! - `fuzz_corpus`: the fuzzers' corpus through every parser.

mod common;

mod apt;
mod champsim;
mod csv;
mod fuzz_corpus;
mod lackey;
mod libcachesim;
mod parallel;
mod proptests;
