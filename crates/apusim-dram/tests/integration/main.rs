//! The DRAM crate's integration tests, one binary with a module per subject (each binary links
//! the crate again, so one binary keeps the test build short).
//!
//! - `timing`: the channel state machine against the JEDEC constraints;
//! - `controller`: the controller's queues, refresh, idle jumps and every constraint, checked by
//!   an independent command-log checker (`common`);
//! - `schedulers`: every registered scheduler end to end;
//! - `cli`: the `apusim-dram` front end;
//! - `validation`: against the peer simulators' measurements in `../shared/reference`.

mod common;

mod cli;
mod controller;
mod schedulers;
mod timing;
mod validation;
