//! How long the GitHub API calls of one phase (the baseline lookup, publishing) may take
//! together, and what ends them early: a hanging API or a stop signal must not hold a finished
//! run for minutes. Each call waits at most the time left; once the phase's time is out or fcorr
//! is stopping, every later call fails at once, naming the call that hung.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that sets a phase's limit, in seconds.
pub const LIMIT_VAR: &str = "FCORR_GITHUB_TIMEOUT";

/// What all the calls of one phase may take together unless [`LIMIT_VAR`] says otherwise.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(90);

/// How often a waiting call asks whether fcorr must stop.
const STOP_POLL: Duration = Duration::from_millis(100);

/// Asked while a call waits: `Some(why)` once fcorr must stop (a stop signal came). The caller
/// hands it in, so this module knows nothing of signals.
pub type StopCheck = fn() -> Option<String>;

/// The time left to one phase's calls, and why they ended if they did.
#[derive(Debug)]
pub(crate) struct Limits {
    limit: Duration,
    deadline: Instant,
    stop: Option<StopCheck>,
    /// Why calls ended for good; every later call fails with it.
    halted: Mutex<Option<String>>,
}

/// Why a wait was cut short.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cut {
    /// The call's own limit: no answer within this long.
    Timeout(Duration),
    /// The phase's time ran out or fcorr is stopping (the text says which): nothing more is sent.
    Halted(String),
}

impl Limits {
    /// `limit` for all the calls, counted from now.
    pub(crate) fn new(limit: Duration) -> Limits {
        Limits { limit, deadline: Instant::now() + limit, stop: None, halted: Mutex::new(None) }
    }

    /// The limit [`LIMIT_VAR`] sets (whole seconds, more than 0), else [`DEFAULT_LIMIT`]; a value
    /// that is not one is a warning, given once per process (each phase reads it).
    pub(crate) fn from_env() -> Limits {
        static LIMIT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
        let limit = *LIMIT.get_or_init(|| match std::env::var(LIMIT_VAR) {
            Ok(text) => parse_limit(&text).unwrap_or_else(|| {
                crate::warnings::warn(format!(
                    "{LIMIT_VAR}={text:?} is not a number of seconds above 0; GitHub API calls get {}s",
                    DEFAULT_LIMIT.as_secs()
                ));
                DEFAULT_LIMIT
            }),
            Err(_) => DEFAULT_LIMIT,
        });
        Limits::new(limit)
    }

    /// Also ends the calls when `stop` says so.
    pub(crate) fn stop_when(&mut self, stop: StopCheck) {
        self.stop = Some(stop);
    }

    /// Why no call may be sent any more, if that is so.
    pub(crate) fn halted(&self) -> Option<String> {
        if let Some(why) = self.halted_lock().clone() {
            return Some(why);
        }
        let why = self.stop.and_then(|stop| stop())?;
        Some(self.halt(why))
    }

    /// Runs `work` (the call `call`, `GET /user`) for at most `limit`, never past the phase's
    /// deadline, and not once fcorr must stop.
    pub(crate) async fn within<T>(&self, call: &str, limit: Duration, work: impl Future<Output = T>) -> Result<T, Cut> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let by_deadline = left <= limit;
        tokio::select! {
            done = work => Ok(done),
            () = tokio::time::sleep(limit.min(left)) => Err(if by_deadline {
                Cut::Halted(self.halt(format!(
                    "`{call}` had no answer when the {}s allowed for the GitHub API calls ran out ({LIMIT_VAR})",
                    self.limit.as_secs()
                )))
            } else {
                Cut::Timeout(limit)
            }),
            why = self.stop_requested() => Err(Cut::Halted(self.halt(why))),
        }
    }

    /// Whether a wait of `wait` ends before the deadline (a retry after it still has time).
    pub(crate) fn fits(&self, wait: Duration) -> bool {
        Instant::now() + wait < self.deadline
    }

    /// Waits `wait` before a retry of `call`; `false` when the wait was cut short (fcorr is
    /// stopping, or the deadline came first: see [`Limits::fits`]).
    pub(crate) async fn pause(&self, call: &str, wait: Duration) -> bool {
        self.within(call, wait + STOP_POLL, tokio::time::sleep(wait)).await.is_ok()
    }

    async fn stop_requested(&self) -> String {
        let Some(stop) = self.stop else { return std::future::pending().await };
        loop {
            if let Some(why) = stop() {
                return why;
            }
            tokio::time::sleep(STOP_POLL).await;
        }
    }

    /// Records why calls end (the first reason stays) and returns it.
    fn halt(&self, why: String) -> String {
        self.halted_lock().get_or_insert(why).clone()
    }

    fn halted_lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        // Plain data: a panic elsewhere while holding it leaves nothing inconsistent.
        self.halted.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whole seconds above 0, an `s` after them allowed.
fn parse_limit(text: &str) -> Option<Duration> {
    let text = text.trim();
    let number = text.strip_suffix('s').unwrap_or(text).trim();
    number.parse::<u64>().ok().filter(|s| *s > 0).map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_whole_seconds() {
        assert_eq!(parse_limit("30"), Some(Duration::from_secs(30)));
        assert_eq!(parse_limit(" 5s "), Some(Duration::from_secs(5)));
        assert_eq!(parse_limit("0"), None);
        assert_eq!(parse_limit("-3"), None);
        assert_eq!(parse_limit("1.5"), None);
    }

    /// A call the deadline catches is named, and every later call fails at once with its name.
    #[tokio::test]
    async fn the_deadline_names_the_call_that_hung() {
        let limits = Limits::new(Duration::from_millis(200));
        let started = Instant::now();
        let cut = limits.within("GET /user", Duration::from_secs(30), std::future::pending::<()>()).await;
        assert!(started.elapsed() < Duration::from_secs(2));
        let Err(Cut::Halted(why)) = cut else { panic!("{cut:?}") };
        assert!(why.starts_with("`GET /user` had no answer when the 0s allowed"), "{why}");
        assert_eq!(limits.halted(), Some(why));
        assert!(!limits.fits(Duration::from_secs(1)));
    }

    #[tokio::test]
    async fn a_call_has_its_own_limit_and_a_stop_ends_it() {
        let limits = Limits::new(Duration::from_secs(60));
        let cut = limits.within("GET /a", Duration::from_millis(50), std::future::pending::<()>()).await;
        assert_eq!(cut, Err(Cut::Timeout(Duration::from_millis(50))));
        assert_eq!(limits.halted(), None, "one slow call does not end the others");
        let mut limits = Limits::new(Duration::from_secs(60));
        limits.stop_when(|| Some("fcorr was interrupted by SIGTERM".into()));
        let cut = limits.within("GET /a", Duration::from_secs(30), std::future::pending::<()>()).await;
        assert_eq!(cut, Err(Cut::Halted("fcorr was interrupted by SIGTERM".into())));
    }
}
