//! Systems under test: what eval, bank and benchmark suites ask questions of.
//!
//! One trait, [`Sut`], with one adapter module per way of reaching a system (`command`, `http`,
//! `openai`). Suite runners never know which adapter answers; they send a [`SutRequest`] and get
//! a [`SutAnswer`] or a [`SutError`] that becomes the case's reason (`timeout`, `backend-error`).

use std::time::Duration;

use crate::model::Usage;

pub(crate) mod answer;
mod cache;
pub(crate) mod command;
pub(crate) mod config;
mod guard;
pub(crate) mod http;
pub(crate) mod openai;
mod tcp;
#[cfg(test)]
mod testing;

pub(crate) use config::{SutConfig, SutContext};

/// Replaces each `{prompt}` and `{id}` of `template` with the request's value passed through
/// `value`, in one pass over the template: a prompt that itself contains `{id}` (or an id with
/// `{prompt}`) arrives as written, and a value is never searched again. Replacing one placeholder
/// after the other let a prompt's `{id}` take the id, shell-quoted inside the prompt's own quotes:
/// an id such as `x$(touch f)` then ran in `sh -c`.
pub(crate) fn fill_placeholders(template: &str, request: &SutRequest, value: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(template.len() + request.prompt.len());
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("{prompt}") {
            out.push_str(&value(&request.prompt));
            rest = after;
        } else if let Some(after) = tail.strip_prefix("{id}") {
            out.push_str(&value(&request.id));
            rest = after;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// One question to the system under test.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SutRequest {
    /// Stable id of the case: `{id}` in argv templates, part of cache keys, named in logs.
    pub id: String,
    /// The prompt text: `{prompt}` in argv templates, the user message for chat adapters.
    pub prompt: String,
    /// The whole case as JSON: a command adapter's stdin, an HTTP body template's context.
    pub case: serde_json::Value,
}

/// What the system answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SutAnswer {
    /// The answer: the `output` member of a JSON answer, else the plain text as a JSON string.
    pub output: serde_json::Value,
    /// The text as received, capped, kept for reports when the answer is judged wrong.
    pub raw: String,
    /// Tokens and calls the system reported, if it reported any.
    pub usage: Option<Usage>,
    /// Wall time of the successful attempt (not of earlier failed attempts or waits).
    pub duration: Duration,
    /// Attempts made, 1 when the first one answered.
    pub attempts: u32,
    /// True when the answer came from the answer cache and the system was not called.
    pub cached: bool,
}

impl SutAnswer {
    /// The answer with every secret fcorr holds replaced by `***` (`crate::secrets`).
    pub(crate) fn redacted(mut self) -> SutAnswer {
        crate::secrets::redact_json(&mut self.output);
        crate::secrets::redact_in_place(&mut self.raw);
        self
    }
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum SutError {
    /// The call outlived its timeout; for a command, its whole process group was killed.
    #[error("no answer within {}s", .after.as_secs_f64())]
    Timeout { after: Duration },
    /// The system failed or answered something unusable; `raw` keeps what it said, capped.
    #[error("{message}")]
    Backend { message: String, raw: Option<String> },
    /// The run was cancelled (Ctrl-C) before the call finished.
    #[error("cancelled")]
    Cancelled,
}

impl SutError {
    /// The error with every secret fcorr holds replaced by `***` (`crate::secrets`).
    pub(crate) fn redacted(self) -> SutError {
        match self {
            SutError::Backend { mut message, mut raw } => {
                crate::secrets::redact_in_place(&mut message);
                if let Some(raw) = raw.as_mut() {
                    crate::secrets::redact_in_place(raw);
                }
                SutError::Backend { message, raw }
            }
            other => other,
        }
    }
}

/// A system under test. Implementations are shared across worker threads.
pub(crate) trait Sut: Send + Sync {
    /// Asks one question. Retries, rate limits, timeouts and caching happen inside.
    fn call(&self, request: &SutRequest) -> Result<SutAnswer, SutError>;

    /// Asks the same question for the `attempt`-th time (1 = the first) when a case is repeated:
    /// every attempt is a real call, and an answer cache keeps one answer per attempt, so a
    /// cached first answer is never served as the second. A system without a cache asks anew.
    fn call_attempt(&self, request: &SutRequest, attempt: u32) -> Result<SutAnswer, SutError> {
        let _ = attempt;
        self.call(request)
    }
}
