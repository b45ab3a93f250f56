//! Command-line interface: one subcommand per user task, each with its arguments in its own
//! `commands/*.rs` file.

use clap::{Parser, Subcommand};

use crate::commands;

/// fcorr: functional-correctness harness and test reporter for CI.
#[derive(Debug, Parser)]
#[command(name = "fcorr", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// Parsed once per process; boxing the large argument structs would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Detect, install, build and test projects; score them and write reports.
    Run(commands::run::RunArgs),
    /// Show which language and test framework fcorr detects in a project, and why.
    Detect(commands::detect::DetectArgs),
    /// Import test reports (JUnit XML, CTRF, TAP...) as one suite; score them and write reports.
    Import(commands::import::ImportArgs),
    /// Print the JSON Schema of results.json.
    Schema,
}

impl Command {
    /// Runs the subcommand; returns the process exit code.
    pub fn execute(self) -> Result<i32, crate::errors::FcorrError> {
        match self {
            Command::Run(args) => commands::run::execute(args),
            Command::Detect(args) => commands::detect::execute(args),
            Command::Import(args) => commands::import::execute(args),
            Command::Schema => commands::schema::execute(),
        }
    }
}
