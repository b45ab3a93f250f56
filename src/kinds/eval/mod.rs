//! Dataset evals (`kind = "eval"`): each case's prompt goes to a system under test, the answer is
//! judged by graders (shell-command equivalence, safety and POSIX labels, text, JSON, similarity,
//! model-graded rubrics, scripts, latency and cost) and the case records one reason: `pass`,
//! `incorrect`, `safety-mismatch`, `grader-error`, `backend-error`...

pub(crate) mod dataset;
pub(crate) mod graders;
pub(crate) mod prompts;
pub(crate) mod runner;
pub(crate) mod shell;
pub(crate) mod suts;
