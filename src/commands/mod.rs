//! One module per subcommand: its arguments and what it does, composed from the pipeline stages.

pub mod calibrate;
pub mod ci;
pub mod compare;
pub mod detect;
pub mod import;
pub mod merge;
pub mod publish;
pub mod report;
pub mod run;
pub mod schema;
pub(crate) mod shared;
pub mod suites;

use std::path::{Path, PathBuf};

/// Where a saved run is, for every command that reads one: `RESULTS` or `--results RESULTS`,
/// whichever a script or a person types.
#[derive(Debug, clap::Args, Clone, Default)]
pub struct ResultsArg {
    /// A results.json written by `fcorr run`, `import` or `merge`, or the directory holding it
    /// (default: fcorr-out).
    #[arg(value_name = "RESULTS")]
    pub results: Option<PathBuf>,
    /// Same as the RESULTS argument.
    #[arg(long = "results", value_name = "RESULTS", conflicts_with = "results")]
    pub results_flag: Option<PathBuf>,
}

impl ResultsArg {
    /// The path given either way, else `fcorr-out`.
    pub fn path(&self) -> PathBuf {
        self.results_flag.clone().or_else(|| self.results.clone()).unwrap_or_else(|| PathBuf::from("fcorr-out"))
    }

    /// The directory the results are in (other reports are written next to them).
    pub fn dir(&self) -> PathBuf {
        let path = self.path();
        if path.is_dir() { path } else { path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(".")) }
    }
}
