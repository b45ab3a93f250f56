//! Dataset evals (`kind = "eval"`): each case's prompt goes to a system under test, the answer is
//! checked by matchers (shell-command equivalence, safety and POSIX labels, exact, regex, JSON...)
//! and the case records one reason: `pass`, `incorrect`, `safety-mismatch`, `backend-error`...

pub mod dataset;
pub mod matchers;
pub mod metrics;
pub mod runner;
pub mod shell;
