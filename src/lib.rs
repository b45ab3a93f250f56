//! fcorr measures whether code works and reports it where engineers look: in CI.
//!
//! The pipeline, one module per stage: [`config`] and [`plan`] decide what to run; [`runners`]
//! run it, one per suite kind (registered in [`kinds`]), on [`execute`]'s process machinery
//! (with [`ecosystems`] per language); [`collect`] parses reports into the [`model`];
//! [`score`] scores; [`compare`] diffs against a baseline; [`report`] renders; [`gate`] judges.

#![warn(unreachable_pub)]
// println!/eprintln! panic on a closed pipe; fcorr prints through `console` (outside tests).
#![cfg_attr(not(test), warn(clippy::print_stdout, clippy::print_stderr))]

// First, so its printing macros (`outln!`, `out!`, `errln!`) are in scope in every module below.
#[macro_use]
pub mod console;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod compare;
pub mod config;
pub(crate) mod ecosystems;
pub mod errors;
pub(crate) mod events;
pub(crate) mod execute;
pub mod fsio;
#[doc(hidden)]
pub mod fuzzing;
pub mod gate;
pub(crate) mod git;
pub mod github;
pub(crate) mod history;
pub(crate) mod kinds;
pub mod model;
pub(crate) mod net;
pub(crate) mod parallel;
pub(crate) mod pipeline;
pub(crate) mod plan;
pub(crate) mod progress;
pub mod publish;
pub(crate) mod quarantine;
pub mod report;
pub(crate) mod runners;
pub mod score;
pub(crate) mod secrets;
pub(crate) mod shard;
pub(crate) mod spill;
pub(crate) mod sut;
pub(crate) mod text;
pub mod timing;
pub(crate) mod warnings;

/// The integration tests' full-disk helper (a tmpfs mounted and filled; root only), for unit
/// tests of code that writes files.
#[cfg(test)]
#[path = "../tests/integration/support/disk.rs"]
#[allow(dead_code, unreachable_pub)]
mod test_disk;
