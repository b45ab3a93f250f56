//! fcorr measures whether code works and reports it where engineers look: in CI.
//!
//! The pipeline, one module per stage: [`config`] and [`plan`] decide what to run; [`execute`]
//! runs it (with [`ecosystems`] per language); [`collect`] parses reports into the [`model`];
//! [`score`] scores; [`compare`] diffs against a baseline; [`report`] renders; [`gate`] judges.

pub mod bank;
pub mod benchmark;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod compare;
pub mod config;
pub mod ecosystems;
pub mod errors;
pub mod eval;
pub mod events;
pub mod execute;
pub mod gate;
pub mod git;
pub mod github;
pub mod history;
pub mod model;
pub(crate) mod net;
pub mod pipeline;
pub mod plan;
pub mod publish;
pub mod quarantine;
pub mod report;
pub mod runners;
pub mod score;
pub mod shard;
pub mod sut;
pub mod text;
