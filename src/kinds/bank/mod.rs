//! Graded test banks: tests with primary/secondary/not-expected items, scored on 100
//! points, with versioned expectations, critical failures and a health status.
//!
//! One module per mechanism (`semantic`, `state`, `pattern`, `always`), each implementing
//! [`Mechanism`] and registered by one line in [`MECHANISMS`]; scoring, expectations, selection,
//! pacing and the unified summary are shared.

pub(crate) mod always;
pub(crate) mod calibrate;
pub(crate) mod expectations;
pub(crate) mod pace;
pub(crate) mod pattern;
pub(crate) mod run;
pub(crate) mod runner;
pub(crate) mod scoring;
pub(crate) mod select;
pub(crate) mod semantic;
pub(crate) mod state;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::Usage;
use crate::sut::{Sut, SutAnswer, SutError, SutRequest};
use expectations::{BankTest, Expectations};
use scoring::Findings;

/// A bank problem that stops the bank: a bad bank, history or rules file, a bad setting.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BankError {
    /// A file is unreadable or invalid; the message says where and what to do.
    #[error("{}: {message}", file.display())]
    Input { file: PathBuf, message: String },
    /// A setting is wrong (unknown mechanism, missing SUT...).
    #[error("{0}")]
    Setting(String),
    /// A file fcorr writes (a calibration's history file) could not be written; nothing was
    /// left behind. fcorr's own failure, not the user's input.
    #[error(transparent)]
    Write(#[from] crate::fsio::WriteError),
}

impl BankError {
    pub(crate) fn input(file: &Path, message: impl Into<String>) -> BankError {
        BankError::Input { file: file.to_path_buf(), message: message.into() }
    }
}

/// What a mechanism saw for one test: the ids present, in rank order where order means something.
#[derive(Debug, Clone, Default)]
pub(crate) struct Observation {
    pub(crate) actual: Vec<String>,
    /// How the ids came about (which rule matched which span...), kept on the case.
    pub(crate) details: serde_json::Value,
    pub(crate) usage: Option<Usage>,
    pub(crate) duration: Duration,
}

/// Settings a mechanism is built from (`[[suite]]` keys of a bank suite).
#[derive(Debug, Clone, Default)]
pub(crate) struct MechanismSpec {
    /// Rules file (`state`, `pattern`), already resolved against the config directory.
    pub(crate) rules: Option<PathBuf>,
    /// How many ranked ids of an answer count (`semantic`); all when unset.
    pub(crate) top_k: Option<usize>,
}

/// One way a bank's tests are observed and judged.
pub(crate) trait Mechanism: Send + Sync {
    /// Registered name, e.g. `semantic`.
    fn name(&self) -> &'static str;

    /// True when every test asks the system under test (and so is paced by the rate limit).
    fn calls_sut(&self) -> bool;

    /// Observes one test: asks the SUT or evaluates fcorr's own rules.
    fn observe(&self, test: &BankTest, sut: Option<&dyn Sut>) -> Result<Observation, SutError>;

    /// Compares what was observed with the expectations; by default every kind of check applies.
    fn findings(&self, expectations: &Expectations, observed: &Observation) -> Findings {
        generic_findings(expectations, &observed.actual)
    }

    /// Whether this result is a critical failure; by default a critical test that hard-failed.
    fn critical_failure(&self, test: &BankTest, findings: &Findings) -> bool {
        test.is_critical && !findings.primary_missing.is_empty()
    }

    /// Refuses a test this mechanism cannot judge, with why: checked before anything runs, on
    /// the expectations in force, because a test with nothing to check scores 100 whatever the
    /// system returns. By default every kind of expectation counts.
    fn check(&self, _test: &BankTest, expectations: &Expectations) -> Result<(), String> {
        require_expectations(expectations, "`expected_primary`, `expected_secondary`, `not_expected`, `rank_check`")
    }
}

/// An error unless `expectations` name at least one id; `fields` are the names the mechanism's
/// tests write them under, for the message.
pub(crate) fn require_expectations(expectations: &Expectations, fields: &str) -> Result<(), String> {
    if expectations.is_empty() {
        return Err(format!(
            "nothing to check: {fields} are all missing or empty, so it would score 100 whatever the system \
             returns; add the ids it must (or must not) return"
        ));
    }
    Ok(())
}

/// A registered mechanism: its name, defaults and constructor.
#[derive(Debug)]
pub(crate) struct Registration {
    pub(crate) name: &'static str,
    /// Test-id prefix that selects this mechanism's bank (`V2-`, `STATE-`...).
    pub(crate) prefix: &'static str,
    /// Weight in the combined score (semantic 0.60, state 0.15, pattern 0.15, always 0.10).
    pub(crate) weight: f64,
    /// Pause between calls to the system under test.
    pub(crate) rate_limit: Duration,
    pub(crate) build: fn(&MechanismSpec) -> Result<Box<dyn Mechanism>, BankError>,
}

/// Every mechanism; adding one is one module and one line here.
pub(crate) const MECHANISMS: &[Registration] =
    &[semantic::REGISTRATION, state::REGISTRATION, pattern::REGISTRATION, always::REGISTRATION];

/// The registration of `name`, or an error listing the known ones.
pub(crate) fn registration(name: &str) -> Result<&'static Registration, BankError> {
    MECHANISMS.iter().find(|m| m.name == name).ok_or_else(|| {
        let known: Vec<&str> = MECHANISMS.iter().map(|m| m.name).collect();
        BankError::Setting(format!("unknown bank mechanism `{name}` (known: {})", known.join(", ")))
    })
}

/// Primary, secondary, not-expected and rank checks against the observed ids.
pub(crate) fn generic_findings(expectations: &Expectations, actual: &[String]) -> Findings {
    let present = |id: &String| actual.contains(id);
    Findings {
        primary_missing: expectations.expected_primary.iter().filter(|id| !present(id)).cloned().collect(),
        secondary_missing: expectations.expected_secondary.iter().filter(|id| !present(id)).cloned().collect(),
        false_positives: expectations.not_expected.iter().filter(|id| present(id)).cloned().collect(),
        rank_violations: scoring::rank_violations(actual, &expectations.rank_check),
        wrong_handlers: Vec::new(),
    }
}

/// Asks the SUT about a test and reads a list of ids from its answer.
pub(crate) fn ask_for_ids(sut: Option<&dyn Sut>, test: &BankTest, mechanism: &str) -> Result<Observation, SutError> {
    let Some(sut) = sut else {
        return Err(SutError::Backend {
            message: format!("the `{mechanism}` mechanism needs a system under test: set `sut` on the bank suite"),
            raw: None,
        });
    };
    let request = SutRequest {
        id: test.test_id.clone(),
        prompt: test.prompt.clone().unwrap_or_default(),
        case: test.raw.clone(),
    };
    let answer = sut.call(&request)?;
    let actual = ids_from_answer(&answer)?;
    Ok(Observation {
        actual,
        details: serde_json::json!({ "raw": answer.raw, "attempts": answer.attempts, "cached": answer.cached }),
        usage: answer.usage,
        duration: answer.duration,
    })
}

/// Ids in an answer: a JSON array of ids (or of objects with `id` / `entity_id`), possibly
/// under `ids`, `results`, `entities`, `selections`, `handlers` or `matches`, or lines of text
/// holding one id (one word) each.
pub(crate) fn ids_from_answer(answer: &SutAnswer) -> Result<Vec<String>, SutError> {
    let unusable = |why: &str| SutError::Backend {
        message: format!("the answer is not a list of ids ({why}); answer with a JSON array such as [\"a\", \"b\"]"),
        raw: Some(answer.raw.chars().take(500).collect()),
    };
    let mut value = answer.output.clone();
    if let serde_json::Value::String(text) = &value {
        value = match serde_json::from_str::<serde_json::Value>(text.trim()) {
            Ok(parsed @ (serde_json::Value::Array(_) | serde_json::Value::Object(_))) => parsed,
            _ => {
                let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
                // One id per line, and an id is one word: a line with a space is prose (an error
                // message such as "Error: upstream model timed out"), which read as an id made
                // every not-expected check pass.
                if let Some(line) = lines.iter().find(|l| l.contains(char::is_whitespace)) {
                    let shown: String = line.chars().take(80).collect();
                    return Err(unusable(&format!("the line `{shown}` is text, not an id: ids have no spaces")));
                }
                serde_json::Value::Array(lines.into_iter().map(Into::into).collect())
            }
        };
    }
    if let serde_json::Value::Object(map) = &value {
        let key = ["ids", "results", "entities", "selections", "handlers", "matches", "loaded"]
            .into_iter()
            .find(|k| map.get(*k).is_some_and(|v| v.is_array()))
            .ok_or_else(|| unusable("an object without an `ids` array"))?;
        value = map[key].clone();
    }
    let serde_json::Value::Array(items) = value else { return Err(unusable("not an array")) };
    items
        .iter()
        .map(|item| match item {
            serde_json::Value::String(s) => Ok(s.clone()),
            serde_json::Value::Object(o) => o
                .get("id")
                .or_else(|| o.get("entity_id"))
                .and_then(|v| v.as_str())
                .map(str::to_string)
                .ok_or_else(|| unusable("an item without `id` or `entity_id`")),
            _ => Err(unusable("an item that is neither a string nor an object")),
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod test_sut {
    //! A system under test for unit tests: answers from a table, records when it was called.

    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use crate::sut::{Sut, SutAnswer, SutError, SutRequest};

    pub(crate) struct TableSut {
        pub(crate) answers: HashMap<String, serde_json::Value>,
        pub(crate) calls: Mutex<Vec<(String, Instant)>>,
    }

    impl TableSut {
        pub(crate) fn new(answers: &[(&str, serde_json::Value)]) -> TableSut {
            TableSut {
                answers: answers.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
                calls: Mutex::new(Vec::new()),
            }
        }
    }

    impl Sut for TableSut {
        fn call(&self, request: &SutRequest) -> Result<SutAnswer, SutError> {
            self.calls.lock().unwrap().push((request.id.clone(), Instant::now()));
            let output = self
                .answers
                .get(&request.id)
                .cloned()
                .ok_or_else(|| SutError::Backend { message: format!("no answer for {}", request.id), raw: None })?;
            Ok(SutAnswer {
                raw: output.to_string(),
                output,
                usage: None,
                duration: Duration::from_millis(1),
                attempts: 1,
                cached: false,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(output: serde_json::Value) -> SutAnswer {
        SutAnswer { raw: output.to_string(), output, usage: None, duration: Duration::ZERO, attempts: 1, cached: false }
    }

    #[test]
    fn ids_are_read_from_the_usual_answer_shapes() {
        let want = vec!["a".to_string(), "b".to_string()];
        for output in [
            serde_json::json!(["a", "b"]),
            serde_json::json!({"ids": ["a", "b"]}),
            serde_json::json!({"results": [{"entity_id": "a"}, {"id": "b", "score": 0.3}]}),
            serde_json::json!("[\"a\", \"b\"]"),
            serde_json::json!("a\nb\n"),
        ] {
            assert_eq!(ids_from_answer(&answer(output.clone())).unwrap(), want, "{output}");
        }
        // An error message printed with exit 0 is not one id; it was scored as one.
        let err = ids_from_answer(&answer(serde_json::json!("Error: upstream model timed out, please retry\n")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`Error: upstream model timed out, please retry` is text, not an id"), "{err}");
        for bad in [serde_json::json!({"text": "a"}), serde_json::json!([1, 2]), serde_json::json!(7)] {
            let err = ids_from_answer(&answer(bad.clone())).unwrap_err().to_string();
            assert!(err.contains("not a list of ids"), "{bad}: {err}");
        }
    }

    #[test]
    fn unknown_mechanism_lists_the_known_ones() {
        let err = registration("vibes").err().unwrap().to_string();
        assert!(err.contains("semantic, state, pattern, always"), "{err}");
    }
}
