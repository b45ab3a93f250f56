//! fcorr measures whether code works and reports it where engineers look: in CI.
//!
//! The pipeline, one module per stage: [`config`] and [`plan`] decide what to run; [`runners`]
//! run it, one per suite kind (registered in [`kinds`]), on [`execute`]'s process machinery
//! (with [`ecosystems`] per language); [`collect`] parses reports into the [`model`];
//! [`score`] scores; [`compare`] diffs against a baseline; [`report`] renders; [`gate`] judges.

#![warn(unreachable_pub)]

pub(crate) mod bank;
pub(crate) mod benchmark;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod compare;
pub mod config;
pub(crate) mod ecosystems;
pub mod errors;
pub(crate) mod eval;
pub(crate) mod events;
pub(crate) mod execute;
#[doc(hidden)]
pub mod fuzzing;
pub mod gate;
pub(crate) mod git;
pub mod github;
pub(crate) mod history;
pub(crate) mod kinds;
pub mod model;
pub(crate) mod net;
pub(crate) mod pipeline;
pub(crate) mod plan;
pub mod publish;
pub(crate) mod quarantine;
pub mod report;
pub(crate) mod runners;
pub mod score;
pub(crate) mod secrets;
pub(crate) mod shard;
pub(crate) mod sut;
pub(crate) mod text;
