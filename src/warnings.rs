//! fcorr's own warnings, through one channel: [`warn`] prints `fcorr: warning: …` on stderr
//! and keeps the message, and the post-run tail puts the list kept so far in the run
//! (`Run::warnings`), so the terminal, results.json, the job summary and the workflow
//! annotations show the same list. Problems with one suite are that suite's diagnostics instead.

use std::sync::Mutex;

/// The warnings given since the last [`take`], in order.
static GIVEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Prints `fcorr: warning: {message}` on stderr and keeps it for the run's reports.
pub(crate) fn warn(message: impl Into<String>) {
    let message = message.into();
    errln!("fcorr: warning: {message}");
    // A poisoned lock only means another thread panicked while pushing: the list is still usable.
    GIVEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(message);
}

/// The warnings given since the last call, each once (the same warning twice is said once).
pub(crate) fn take() -> Vec<String> {
    let mut given = std::mem::take(&mut *GIVEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    let mut seen = std::collections::HashSet::new();
    given.retain(|w| seen.insert(w.clone()));
    given
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_kept_in_order_once_until_taken() {
        // Unit tests share the process: only this test's own messages are looked at.
        warn("test-only: one");
        warn("test-only: two");
        warn("test-only: one");
        let mine: Vec<String> = take().into_iter().filter(|w| w.starts_with("test-only: ")).collect();
        assert_eq!(mine, ["test-only: one", "test-only: two"]);
    }
}
