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
    #[command(after_help = crate::kinds::kinds_help())]
    Run(commands::run::RunArgs),
    /// Show which language and test framework fcorr detects in a project, and why.
    Detect(commands::detect::DetectArgs),
    /// Import test reports (JUnit XML, CTRF, TAP...) as one suite; score them and write reports.
    Import(commands::import::ImportArgs),
    /// Print the JSON Schema of results.json.
    Schema,
    /// Re-render reports (JUnit, CTRF, Markdown, HTML) from a saved results.json.
    Report(commands::report::ReportArgs),
    /// In CI: run, compare with the baseline, write reports, publish to GitHub, gate.
    #[command(after_help = crate::kinds::kinds_help())]
    Ci(commands::ci::CiArgs),
    /// Compare a saved run with a baseline run.
    Compare(commands::compare::CompareArgs),
    /// Publish saved results to GitHub (job summary, outputs, annotations, PR comment, check run).
    Publish(commands::publish::PublishArgs),
    /// Merge saved runs (matrix cells, packages) into one run with every report.
    Merge(commands::merge::MergeArgs),
    /// Ask a calibrator for a test bank's expectations; --write records changes in a new history file.
    Calibrate(commands::calibrate::CalibrateArgs),
    /// List the configured suites and their benchmark tasks / dataset cases.
    Suites(commands::suites::SuitesArgs),
}

/// Parses the command line, exiting on `--help`, `--version` or a bad argument (exit 2, clap's
/// message listing the possible values). A bad `fcorr ci` argument inside GitHub Actions is also
/// said in the job summary and the `verdict=error` output, as every error `fcorr ci` stops with
/// is: the action passes its inputs as flags, and a red step with an empty summary explains nothing.
pub fn parse() -> Cli {
    use clap::Parser;
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // `args_os`: `std::env::args` panics on an argument that is not UTF-8, and a bad
            // argument is exactly what brought fcorr here.
            let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
            if error.use_stderr() && args.first().is_some_and(|a| a == "ci") {
                let job_summary = !args.iter().any(|a| a == "--no-job-summary");
                commands::ci::explain_bad_arguments(&error.to_string(), error.exit_code(), job_summary);
            }
            error.exit()
        }
    }
}

/// Handles Ctrl-C, SIGTERM and SIGHUP for the whole process. `exit` runs when a signal ends
/// fcorr at once (before a run has anything to cancel); it must leave the terminal and the
/// runner's log usable (lift the workflow-command fence). A handler that cannot be installed is
/// a warning: the signals then end fcorr the default way.
pub fn handle_stop_signals(exit: fn()) {
    if let Err(e) = crate::execute::process::install_stop_handler(exit) {
        crate::warnings::warn(e.to_string());
    }
}

/// The exit code fcorr ends with: 128 + the stop signal when one arrived (130 for Ctrl-C, 143
/// for SIGTERM), whatever the command made of its cancellation; else `code`.
pub fn exit_code(code: i32) -> i32 {
    use crate::execute::process;
    process::stop_signal().map_or(code, process::signal_exit_code)
}

impl Command {
    /// Runs the subcommand; returns the process exit code.
    pub fn execute(self) -> Result<i32, crate::errors::FcorrError> {
        // Whatever the command, the tokens fcorr holds (GITHUB_TOKEN…) are redacted from all it
        // writes: a report another step wrote (`import`, `merge`, `report`, `publish`) may carry
        // one a test printed. `run` adds the secrets its config names once it has read it.
        crate::secrets::register(&[]);
        match self {
            Command::Run(args) => commands::run::execute(args),
            Command::Detect(args) => commands::detect::execute(args),
            Command::Import(args) => commands::import::execute(args),
            Command::Schema => commands::schema::execute(),
            Command::Report(args) => commands::report::execute(args),
            Command::Ci(args) => commands::ci::execute(args),
            Command::Compare(args) => commands::compare::execute(args),
            Command::Publish(args) => commands::publish::execute(args),
            Command::Merge(args) => commands::merge::execute(args),
            Command::Calibrate(args) => commands::calibrate::execute(args),
            Command::Suites(args) => commands::suites::execute(args),
        }
    }
}
