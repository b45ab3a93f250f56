//! GitHub at the edge: the REST client, the Actions context (environment and event file) and
//! the baseline lookup. Both `publish` (writes to GitHub) and `commands::ci` (reads the baseline
//! from GitHub) use it; nothing below the reports depends on it.

pub mod api;
pub mod baseline;
pub mod context;
pub mod limits;
pub(crate) mod pull_request;
pub mod transport;

pub use context::GithubContext;

/// A current-thread runtime for the API calls of one command: hyper's connections, octocrab's
/// worker, timeouts and rate-limit waits all run on it while the command blocks on the calls.
pub fn runtime() -> Result<tokio::runtime::Runtime, RuntimeError> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(RuntimeError)
}

/// The async runtime the API calls need cannot start (the OS refused threads or descriptors).
#[derive(Debug, thiserror::Error)]
#[error("cannot start the async runtime: {0}")]
pub struct RuntimeError(#[source] pub std::io::Error);
