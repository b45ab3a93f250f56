//! Errors that stop a whole command (as opposed to one suite, which records its own error in
//! the result model and lets the others continue). Each maps to an exit code.

use std::path::PathBuf;

use thiserror::Error;

/// A failure that ends the command.
#[derive(Debug, Error)]
pub enum FcorrError {
    /// The configuration file is unreadable or invalid.
    #[error("{}: {message}", file.display())]
    Config { file: PathBuf, message: String },
    /// The command line asks for something impossible.
    #[error("{0}")]
    Usage(String),
    /// An input file (results, baseline, report) is unreadable or invalid.
    #[error("{}: {message}", file.display())]
    Input { file: PathBuf, message: String },
    /// fcorr could not do its own work (write outputs, start threads...).
    #[error("{0}")]
    Harness(String),
}

impl FcorrError {
    /// Exit code for this error: 2 for usage and configuration, 3 for harness problems.
    pub fn exit_code(&self) -> i32 {
        match self {
            FcorrError::Config { .. } | FcorrError::Usage(_) | FcorrError::Input { .. } => 2,
            FcorrError::Harness(_) => 3,
        }
    }

    /// Wraps an I/O error on a file fcorr writes.
    pub fn write(path: &std::path::Path, e: std::io::Error) -> FcorrError {
        FcorrError::Harness(format!("cannot write {}: {e}", path.display()))
    }
}
