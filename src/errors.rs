//! Errors that stop a whole command (as opposed to one suite, which records its own error in
//! the result model and lets the others continue). Each maps to an exit code; stage errors
//! ([`ConfigError`], [`PlanError`], [`RenderError`]; [`ExecError`] where it ends one) convert into [`FcorrError`] with their
//! positions kept.

use std::path::{Path, PathBuf};

use thiserror::Error;

/// The typed error behind a [`FcorrError`], kept as its `source()` so [`chain`] can print it
/// and callers can downcast it. Boxed: most of these types live in modules above this one.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A failure that ends the command.
#[derive(Debug, Error)]
pub enum FcorrError {
    /// The configuration file is unreadable or invalid.
    #[error("{}: {message}", file.display())]
    Config {
        file: PathBuf,
        message: String,
        #[source]
        source: Option<Cause>,
    },
    /// A configuration value is wrong at a known place in the file.
    #[error(transparent)]
    ConfigAt(#[from] ConfigError),
    /// Planning the suites failed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Reports could not be rendered or written.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The command line asks for something impossible.
    #[error("{0}")]
    Usage(String),
    /// The command line names something that cannot be used, for the reason `source` gives.
    #[error("{message}")]
    UsageBecause {
        message: String,
        #[source]
        source: Cause,
    },
    /// An input file (results, baseline, report) is unreadable or invalid.
    #[error("{}: {message}", file.display())]
    Input {
        file: PathBuf,
        message: String,
        #[source]
        source: Option<Cause>,
    },
    /// fcorr could not do its own work (write outputs, start threads...).
    #[error("{0}")]
    Harness(String),
    /// fcorr could not do its own work, for the reason `source` gives (a full disk...).
    #[error("{message}")]
    HarnessBecause {
        message: String,
        #[source]
        source: Cause,
    },
    /// fcorr cannot read its own working directory (deleted under it, no permission).
    #[error("cannot read the current directory: {0}")]
    Cwd(#[source] std::io::Error),
}

impl FcorrError {
    /// Exit code for this error: 2 for usage and configuration, 3 for harness problems.
    pub fn exit_code(&self) -> i32 {
        match self {
            FcorrError::Config { .. }
            | FcorrError::ConfigAt(_)
            | FcorrError::Usage(_)
            | FcorrError::UsageBecause { .. }
            | FcorrError::Input { .. } => 2,
            FcorrError::Plan(e) => e.exit_code(),
            FcorrError::Harness(_) | FcorrError::HarnessBecause { .. } | FcorrError::Render(_) | FcorrError::Cwd(_) => {
                3
            }
        }
    }

    /// A usage error (exit 2) whose cause is `source`.
    pub fn usage_because(message: impl Into<String>, source: impl Into<Cause>) -> FcorrError {
        FcorrError::UsageBecause { message: message.into(), source: source.into() }
    }

    /// A harness error (exit 3) whose cause is `source`.
    pub fn harness_because(message: impl Into<String>, source: impl Into<Cause>) -> FcorrError {
        FcorrError::HarnessBecause { message: message.into(), source: source.into() }
    }

    /// An unusable input file (exit 2): `message` says what is wrong, `source` is the typed cause.
    pub fn input_because(file: impl Into<PathBuf>, message: impl Into<String>, source: impl Into<Cause>) -> FcorrError {
        FcorrError::Input { file: file.into(), message: message.into(), source: Some(source.into()) }
    }
}

/// An error as fcorr prints it: its own message, then each cause on a `caused by:` line, the way
/// the terminal and the job summary show it. Many of fcorr's error types already write their
/// cause into their message (`cannot read it: No such file…`); the chain stops at the first
/// cause whose text is already shown, so nothing is said twice.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let line = e.to_string();
        if line.is_empty() || text.contains(&line) {
            break;
        }
        text.push_str("\n  caused by: ");
        text.push_str(&line);
        cause = e.source();
    }
    text
}

/// A report file that cannot be read as the format it is (or looks like). Parsers read a
/// stream, so they give the format, the cause and the line when the reader knows it; the caller
/// that opened the file adds it. Shown as the cause alone: callers put the path in front.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{message}")]
pub struct ParseError {
    /// The format being read (`junit`, `jest-json`...); empty when none was recognised.
    pub format: String,
    /// The report file, once known.
    pub file: Option<PathBuf>,
    /// 1-based line of the problem, when the reader knows it.
    pub line: Option<u64>,
    /// Byte offset of the problem, when the reader counts bytes rather than lines (XML).
    pub byte: Option<u64>,
    /// What is wrong (the readers' own positions included in the text).
    pub message: String,
}

impl ParseError {
    /// A problem reading `format`.
    pub fn new(format: &str, message: impl Into<String>) -> ParseError {
        ParseError { format: format.to_string(), file: None, line: None, byte: None, message: message.into() }
    }

    /// The same problem, at a known line.
    pub fn at_line(self, line: u64) -> ParseError {
        ParseError { line: Some(line), ..self }
    }

    /// The same problem, at a known byte offset.
    pub fn at_byte(self, byte: u64) -> ParseError {
        ParseError { byte: Some(byte), ..self }
    }

    /// The same problem, in a known file.
    pub fn in_file(self, file: &Path) -> ParseError {
        ParseError { file: Some(file.to_path_buf()), ..self }
    }
}

impl From<ParseError> for FcorrError {
    /// An unreadable report given on the command line is an input error (exit 2).
    fn from(e: ParseError) -> FcorrError {
        FcorrError::Input {
            file: e.file.clone().unwrap_or_default(),
            message: e.message.clone(),
            source: Some(Box::new(e)),
        }
    }
}

/// A configuration value that is wrong, with the file and (when known) the line and column
/// of the value, so the user can go straight to it.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{}: {}{message}", file.display(), position(*line, *column))]
pub struct ConfigError {
    pub file: PathBuf,
    /// 1-based; 0 when the position is unknown.
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl ConfigError {
    /// An error at a known position (`line` 0: somewhere in the file).
    pub fn new(file: &Path, (line, column): (usize, usize), message: impl Into<String>) -> ConfigError {
        ConfigError { file: file.to_path_buf(), line, column, message: message.into() }
    }
}

fn position(line: usize, column: usize) -> String {
    if line == 0 { String::new() } else { format!("line {line}, column {column}: ") }
}

/// Why the suites to run could not be planned.
#[derive(Debug, Error)]
pub enum PlanError {
    /// A configuration problem found while planning.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No suite at all.
    #[error(
        "nothing to run: give project paths (`fcorr run PATH...`), `--config fcorr.toml` with [[suite]] entries, or `--samples DIR`"
    )]
    Nothing,
    /// The selection (`--select`, `FCORR_BANK_SELECT` or a suite's `select`) left out every suite:
    /// none holds the test, topic or bank it names.
    #[error(
        "{}matches none of the configured suites ({}): no such test id, `topic:NAME` or `bank:NAME` in any of them",
        select.as_ref().map_or_else(|| "the suites' `select` ".to_string(), |s| format!("--select `{s}` ")),
        suites.join(", ")
    )]
    SelectMatchesNothing { select: Option<String>, suites: Vec<String> },
    /// `--filter` left no suite.
    #[error("--filter `{pattern}` matches none of the {total} suites")]
    FilterMatchesNothing { pattern: String, total: usize },
    /// The samples directory (or an SDK directory in it) cannot be listed.
    #[error("cannot read samples directory {}: {source}", dir.display())]
    SamplesUnreadable { dir: PathBuf, source: std::io::Error },
    /// `--sdk` names no directory.
    #[error("no SDK directory `{sdk}` in {}", dir.display())]
    NoSdk { sdk: String, dir: PathBuf },
    /// The samples layout holds no sample.
    #[error("no samples found in {}: expected {0}/<sdk>/<sample>/expected/", dir.display())]
    NoSamples { dir: PathBuf },
    /// fcorr cannot read its own working directory.
    #[error("cannot read the current directory: {0}")]
    Cwd(std::io::Error),
}

impl PlanError {
    /// 2 for anything the user can fix in the config or command line, 3 for the environment.
    pub fn exit_code(&self) -> i32 {
        match self {
            PlanError::Cwd(_) => 3,
            _ => 2,
        }
    }
}

/// Why a report could not be rendered or written. Always exit 3: the run's results are sound,
/// fcorr failed at its own work (a broken template, a full disk, an unwritable directory).
#[derive(Debug, Error)]
pub enum RenderError {
    /// A template is missing, unreadable or fails to render (the message names it).
    #[error("{0}")]
    Template(String),
    /// The templates directory given does not exist.
    #[error("templates directory {} does not exist (set by --templates or [report] templates)", path.display())]
    NoTemplates { path: PathBuf },
    /// Streaming the rendering failed (a full disk, a closed pipe); `format` is a human name.
    #[error("cannot write {format}: {source}")]
    Format { format: &'static str, source: std::io::Error },
    /// The output directory cannot be created.
    #[error("cannot create {}: {source}", path.display())]
    OutDir { path: PathBuf, source: std::io::Error },
    /// A report file cannot be created, written or moved into place (`action` says which).
    #[error("cannot {action} {}: {source}", path.display())]
    NotWritten { path: PathBuf, action: &'static str, source: std::io::Error },
    /// One format failed while the others were written; `path` is the file it was writing.
    #[error("{format} report failed: {source}{}", writing(source, path))]
    Report { format: &'static str, path: PathBuf, source: Box<RenderError> },
    /// A format's writer stopped without a result (its thread panicked).
    #[error("{format} report was not written")]
    Lost { format: &'static str },
    /// Every failed format of one `write` of the reports.
    #[error("reports could not be written to {}: {}", dir.display(), join(problems))]
    Reports { dir: PathBuf, problems: Vec<RenderError> },
}

impl From<crate::fsio::WriteError> for RenderError {
    fn from(e: crate::fsio::WriteError) -> RenderError {
        RenderError::NotWritten { path: e.path, action: e.action.verb(), source: e.source }
    }
}

/// ` (writing PATH)` when the cause does not already name the file.
fn writing(source: &RenderError, path: &Path) -> String {
    match source {
        RenderError::OutDir { .. } | RenderError::NotWritten { .. } | RenderError::NoTemplates { .. } => String::new(),
        _ => format!(" (writing {})", path.display()),
    }
}

fn join(problems: &[RenderError]) -> String {
    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// Why the process machinery (`execute`) cannot do something asked of it outside one command's
/// run. A command that fails to start, times out or loses its log is not one of these: it
/// becomes that suite's outcome and error in the result model, and the other suites carry on.
#[derive(Debug, Error)]
pub enum ExecError {
    /// The handler of stop signals (Ctrl-C, SIGTERM, SIGHUP) cannot be installed.
    #[error("cannot handle Ctrl-C and SIGTERM (they will end fcorr at once): {0}")]
    Interrupt(#[from] std::io::Error),
    /// `--rerun-failed` found no failing test in the earlier run's suite.
    #[error("no failing test was recorded in the run of {of}: every test runs again")]
    NothingToRerun { of: String },
    /// `--rerun-failed` on a suite whose earlier results were incomplete (`case` says so): what
    /// failed is not all named, so the rerun cannot be narrowed.
    #[error(
        "the run of {of} has `{case}`: its results were incomplete, so what failed cannot be named \
         test by test; every test runs again"
    )]
    IncompleteResults { of: String, case: String },
    /// `--rerun-failed` on a runner that cannot select single tests.
    #[error("the {runner} runner cannot select single tests: every test runs again")]
    CannotSelect { runner: &'static str },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_working_directory_is_a_harness_error_that_keeps_its_cause() {
        let error = FcorrError::Cwd(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(error.exit_code(), 3);
        assert!(error.to_string().starts_with("cannot read the current directory: "), "{error}");
        let source = std::error::Error::source(&error).and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(source.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
    }

    #[test]
    fn the_chain_prints_each_cause_once_and_keeps_it_typed() {
        let io = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left on device");
        let error = FcorrError::harness_because("cannot create a scratch directory", io);
        assert_eq!(chain(&error), "cannot create a scratch directory\n  caused by: no space left on device");
        let source = std::error::Error::source(&error).and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(source.map(std::io::Error::kind), Some(std::io::ErrorKind::StorageFull));
        // A message that already says its cause is printed as it is.
        let cwd = FcorrError::Cwd(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(chain(&cwd), cwd.to_string());
        // A cause that says its own cause: both lines, in order.
        let parse = ParseError::new("junit", "unexpected end of file").at_line(3);
        let nested =
            FcorrError::input_because("r.xml", "cannot be imported", FcorrError::usage_because("not JUnit", parse));
        assert_eq!(
            chain(&nested),
            "r.xml: cannot be imported\n  caused by: not JUnit\n  caused by: unexpected end of file"
        );
    }
}
