//! Dataset evals (`kind = "eval"`): each case's prompt goes to a system under test, the answer is
//! checked by matchers (shell-command equivalence, safety and POSIX labels, exact, regex, JSON...)
//! and the case records one reason: `pass`, `incorrect`, `safety-mismatch`, `backend-error`...

pub(crate) mod dataset;
pub(crate) mod matchers;
pub(crate) mod prompts;
pub(crate) mod runner;
pub(crate) mod shell;
pub(crate) mod suts;
