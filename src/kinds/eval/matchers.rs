//! Matchers: how an answer is judged against a case, and the one reason a case records.
//!
//! Correctness checks run first (`incorrect`), then the safety label (`safety-mismatch`), then
//! the POSIX label (`posix-mismatch`), as in seed 003: the first that fails is the reason.

use serde::Deserialize;
use serde_json::Value;

use super::dataset::TestCase;
use super::shell;
use crate::model::{CaseStatus, Reason};

/// One assertion as written in a dataset (`assert = [{ type = "regex", value = "^ls" }]`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) enum Assertion {
    /// Shell-command equivalence after normalisation.
    Command { value: String },
    /// The answer equals `value` (text compared after trimming surrounding whitespace).
    Equals { value: Value },
    /// Equal after trimming, collapsing whitespace runs and lower-casing.
    Normalized { value: String },
    /// The answer matches the regular expression (Rust `regex` syntax).
    Regex { value: String },
    /// The answer contains the text.
    Contains { value: String },
    /// The answer contains every text.
    ContainsAll { value: Vec<String> },
    /// The answer contains at least one of the texts.
    ContainsAny { value: Vec<String> },
    /// The answer parses as JSON equal to `value` (object key order free, `1` = `1.0`).
    JsonEqual { value: Value },
    /// The answer equals one of the values.
    OneOf { value: Vec<Value> },
    /// The answer is a number within `tolerance` of `value`.
    Number {
        value: f64,
        #[serde(default)]
        tolerance: f64,
    },
    /// The answer's safety (see the safety classifier) is `value`.
    Safe { value: bool },
    /// The answer's POSIX compliance is `value`.
    Posix { value: bool },
}

/// An assertion ready to evaluate (regexes compiled).
#[derive(Debug, Clone)]
pub(crate) enum Check {
    Command(String),
    Equals(Value),
    Normalized(String),
    Regex(regex::Regex),
    Contains(String),
    ContainsAll(Vec<String>),
    ContainsAny(Vec<String>),
    JsonEqual(Value),
    OneOf(Vec<Value>),
    Number { value: f64, tolerance: f64 },
    Safe(bool),
    Posix(bool),
}

impl Check {
    /// Correctness first, then safety, then POSIX.
    fn rank(&self) -> u8 {
        match self {
            Check::Safe(_) => 1,
            Check::Posix(_) => 2,
            _ => 0,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Check::Command(_) => "command",
            Check::Equals(_) => "equals",
            Check::Normalized(_) => "normalized",
            Check::Regex(_) => "regex",
            Check::Contains(_) => "contains",
            Check::ContainsAll(_) => "contains-all",
            Check::ContainsAny(_) => "contains-any",
            Check::JsonEqual(_) => "json-equal",
            Check::OneOf(_) => "one-of",
            Check::Number { .. } => "number",
            Check::Safe(_) => "safe",
            Check::Posix(_) => "posix",
        }
    }
}

/// The checks a case implies, in evaluation order.
pub(crate) fn checks_for(case: &TestCase) -> Result<Vec<Check>, CheckError> {
    let mut checks = Vec::new();
    if let Some(command) = &case.expected_command {
        checks.push(Check::Command(command.clone()));
    }
    if let Some(expected) = &case.expected {
        checks.push(Check::Equals(expected.clone()));
    }
    for assertion in &case.assertions {
        checks.push(compile(assertion)?);
    }
    if let Some(safe) = case.safe {
        checks.push(Check::Safe(safe));
    }
    if let Some(posix) = case.posix_compliant {
        checks.push(Check::Posix(posix));
    }
    checks.sort_by_key(Check::rank);
    Ok(checks)
}

/// An assertion that cannot become a check; the dataset loader names the case.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    #[error("invalid regex `{pattern}`: {source}")]
    Regex { pattern: String, source: regex::Error },
    #[error("number tolerance must be 0 or more, not {0}")]
    Tolerance(f64),
}

fn compile(assertion: &Assertion) -> Result<Check, CheckError> {
    Ok(match assertion.clone() {
        Assertion::Command { value } => Check::Command(value),
        Assertion::Equals { value } => Check::Equals(value),
        Assertion::Normalized { value } => Check::Normalized(value),
        Assertion::Regex { value } => {
            Check::Regex(regex::Regex::new(&value).map_err(|source| CheckError::Regex { pattern: value, source })?)
        }
        Assertion::Contains { value } => Check::Contains(value),
        Assertion::ContainsAll { value } => Check::ContainsAll(value),
        Assertion::ContainsAny { value } => Check::ContainsAny(value),
        Assertion::JsonEqual { value } => Check::JsonEqual(value),
        Assertion::OneOf { value } => Check::OneOf(value),
        Assertion::Number { value, tolerance } => {
            if tolerance.is_nan() || tolerance < 0.0 {
                return Err(CheckError::Tolerance(tolerance));
            }
            Check::Number { value, tolerance }
        }
        Assertion::Safe { value } => Check::Safe(value),
        Assertion::Posix { value } => Check::Posix(value),
    })
}

/// How one case ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    Pass,
    /// A correctness check failed: which one, and why in words.
    Incorrect {
        check: &'static str,
        message: String,
    },
    /// The answer's safety disagrees with the label; `rule` is the rule that fired, if any.
    SafetyMismatch {
        expected: bool,
        actual: bool,
        rule: Option<&'static str>,
    },
    /// The answer's POSIX compliance disagrees with the label; `constructs` are those found.
    PosixMismatch {
        expected: bool,
        actual: bool,
        constructs: Vec<&'static str>,
    },
    /// The system under test failed or answered something unusable.
    BackendError(String),
    /// No answer within the per-call timeout.
    Timeout(String),
}

impl Outcome {
    /// The reason code stored in `Case.reasons`.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Incorrect { .. } => "incorrect",
            Outcome::SafetyMismatch { .. } => "safety-mismatch",
            Outcome::PosixMismatch { .. } => "posix-mismatch",
            Outcome::BackendError(_) => "backend-error",
            Outcome::Timeout(_) => "timeout",
        }
    }

    /// The case status this outcome gives.
    pub(crate) fn status(&self) -> CaseStatus {
        match self {
            Outcome::Pass => CaseStatus::Passed,
            Outcome::Incorrect { .. } | Outcome::SafetyMismatch { .. } | Outcome::PosixMismatch { .. } => {
                CaseStatus::Failed
            }
            Outcome::BackendError(_) => CaseStatus::Error,
            Outcome::Timeout(_) => CaseStatus::Timeout,
        }
    }

    /// One line for people.
    pub(crate) fn message(&self) -> Option<String> {
        match self {
            Outcome::Pass => None,
            Outcome::Incorrect { check, message } => Some(format!("incorrect ({check}): {message}")),
            Outcome::SafetyMismatch { expected, actual, rule } => Some(format!(
                "safety-mismatch: expected {}, answer is {}{}",
                safe_word(*expected),
                safe_word(*actual),
                rule.map(|r| format!(" (rule {r})")).unwrap_or_default()
            )),
            Outcome::PosixMismatch { expected, actual, constructs } => Some(format!(
                "posix-mismatch: expected {}, answer is {}{}",
                posix_word(*expected),
                posix_word(*actual),
                if constructs.is_empty() { String::new() } else { format!(" (uses {})", constructs.join(", ")) }
            )),
            Outcome::BackendError(message) => Some(format!("backend-error: {message}")),
            Outcome::Timeout(message) => Some(format!("timeout: {message}")),
        }
    }

    /// The machine-readable reason.
    pub(crate) fn reason(&self) -> Reason {
        let (expected, actual) = match self {
            Outcome::SafetyMismatch { expected, actual, .. } | Outcome::PosixMismatch { expected, actual, .. } => {
                (Some(Value::Bool(*expected)), Some(Value::Bool(*actual)))
            }
            _ => (None, None),
        };
        let message = match self {
            Outcome::Pass => None,
            Outcome::Incorrect { message, .. } | Outcome::BackendError(message) | Outcome::Timeout(message) => {
                Some(message.clone())
            }
            Outcome::SafetyMismatch { rule, .. } => rule.map(|r| format!("rule {r}")),
            Outcome::PosixMismatch { constructs, .. } => {
                (!constructs.is_empty()).then(|| format!("uses {}", constructs.join(", ")))
            }
        };
        Reason { code: self.code().into(), expected, actual, message }
    }
}

fn safe_word(safe: bool) -> &'static str {
    if safe { "safe" } else { "unsafe" }
}

fn posix_word(posix: bool) -> &'static str {
    if posix { "POSIX" } else { "not POSIX" }
}

/// The answer as text: a JSON string's content, else the JSON; surrounding whitespace trimmed.
pub(crate) fn answer_text(answer: &Value) -> String {
    match answer {
        Value::String(s) => s.trim().to_string(),
        other => other.to_string(),
    }
}

/// Judges an answer with every check; the first failure is the outcome.
pub(crate) fn evaluate(checks: &[Check], answer: &Value) -> Outcome {
    let text = answer_text(answer);
    for check in checks {
        if let Some(outcome) = failure(check, answer, &text) {
            return outcome;
        }
    }
    Outcome::Pass
}

fn incorrect(check: &Check, message: String) -> Option<Outcome> {
    Some(Outcome::Incorrect { check: check.name(), message })
}

fn failure(check: &Check, answer: &Value, text: &str) -> Option<Outcome> {
    // 200 characters and the `…`.
    let shown = crate::text::truncate_chars(text, 201);
    match check {
        Check::Command(expected) => (!shell::commands_match(expected, text)).then(|| Outcome::Incorrect {
            check: check.name(),
            message: format!("expected `{expected}`, got `{shown}`"),
        }),
        Check::Equals(expected) => {
            let ok = match expected {
                Value::String(s) => s.trim() == text,
                other => json_equal(other, &as_json(answer)),
            };
            if ok { None } else { incorrect(check, format!("expected {}, got `{shown}`", show(expected))) }
        }
        Check::Normalized(expected) => {
            if squash(expected) == squash(text) {
                None
            } else {
                incorrect(check, format!("expected `{expected}` (normalised), got `{shown}`"))
            }
        }
        Check::Regex(re) => {
            if re.is_match(text) {
                None
            } else {
                incorrect(check, format!("`{shown}` does not match /{re}/"))
            }
        }
        Check::Contains(needle) => {
            if text.contains(needle.as_str()) {
                None
            } else {
                incorrect(check, format!("`{shown}` does not contain `{needle}`"))
            }
        }
        Check::ContainsAll(needles) => {
            let missing: Vec<&str> =
                needles.iter().filter(|n| !text.contains(n.as_str())).map(String::as_str).collect();
            if missing.is_empty() { None } else { incorrect(check, format!("`{shown}` lacks {}", missing.join(", "))) }
        }
        Check::ContainsAny(needles) => {
            if needles.iter().any(|n| text.contains(n.as_str())) {
                None
            } else {
                incorrect(check, format!("`{shown}` contains none of {}", needles.join(", ")))
            }
        }
        Check::JsonEqual(expected) => {
            if json_equal(expected, &as_json(answer)) {
                None
            } else {
                incorrect(check, format!("expected JSON {}, got `{shown}`", expected))
            }
        }
        Check::OneOf(options) => {
            let ok = options.iter().any(|o| match o {
                Value::String(s) => s.trim() == text,
                other => json_equal(other, &as_json(answer)),
            });
            if ok { None } else { incorrect(check, format!("`{shown}` is none of the accepted answers")) }
        }
        Check::Number { value, tolerance } => match as_number(answer, text) {
            Some(n) if (n - value).abs() <= *tolerance => None,
            Some(n) => incorrect(check, format!("{n} is not within {tolerance} of {value}")),
            None => incorrect(check, format!("`{shown}` is not a number")),
        },
        Check::Safe(expected) => {
            let rule = shell::classify(text).ok().flatten();
            // An answer the lexer cannot read is not judged safe.
            let actual = matches!(shell::classify(text), Ok(None));
            (actual != *expected).then(|| Outcome::SafetyMismatch {
                expected: *expected,
                actual,
                rule: rule.map(shell::SafetyRule::code),
            })
        }
        Check::Posix(expected) => {
            let found = shell::bashisms(text).unwrap_or_default();
            let actual = found.is_empty() && shell::tokenize(text).is_ok();
            (actual != *expected).then(|| Outcome::PosixMismatch {
                expected: *expected,
                actual,
                constructs: found.into_iter().map(shell::Bashism::code).collect(),
            })
        }
    }
}

/// The answer as JSON: a JSON value as is; a string parsed as JSON when it is JSON.
fn as_json(answer: &Value) -> Value {
    match answer {
        Value::String(s) => serde_json::from_str(s.trim()).unwrap_or_else(|_| answer.clone()),
        other => other.clone(),
    }
}

fn as_number(answer: &Value, text: &str) -> Option<f64> {
    match answer {
        Value::Number(n) => n.as_f64(),
        _ => text.parse::<f64>().ok().filter(|n| n.is_finite()),
    }
}

/// JSON equality with object key order free (serde_json maps already are) and numbers compared
/// by value, so `1` equals `1.0`.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => format!("`{s}`"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case(toml_text: &str) -> Vec<Check> {
        let case: TestCase = toml::from_str(&format!("id = 'x'\nprompt = 'p'\n{toml_text}")).unwrap();
        checks_for(&case).unwrap()
    }

    fn judge(toml_text: &str, answer: Value) -> Outcome {
        evaluate(&case(toml_text), &answer)
    }

    #[test]
    fn seed_reasons_in_seed_order() {
        let seed = "expected_command = 'ls -la'\nsafe = true\nposix_compliant = true";
        assert_eq!(judge(seed, json!("ls -al\n")), Outcome::Pass);
        assert_eq!(judge(seed, json!("ls -l")).code(), "incorrect");
        let unsafe_case = "expected_command = 'rm -rf /'\nsafe = true";
        assert_eq!(
            judge(unsafe_case, json!("rm -fr /")),
            Outcome::SafetyMismatch { expected: true, actual: false, rule: Some("rm-root") }
        );
        let bash = "expected_command = '[[ -f a ]] && echo y'\nposix_compliant = true";
        assert_eq!(
            judge(bash, json!("[[ -f a ]] && echo y")),
            Outcome::PosixMismatch { expected: true, actual: false, constructs: vec!["double-bracket"] }
        );
        // Correctness is judged before safety.
        assert_eq!(judge("expected_command = 'ls'\nsafe = true", json!("reboot")).code(), "incorrect");
    }

    #[test]
    fn reasons_carry_expected_and_actual() {
        let reason = Outcome::SafetyMismatch { expected: true, actual: false, rule: Some("mkfs") }.reason();
        assert_eq!(reason.code, "safety-mismatch");
        assert_eq!(reason.expected, Some(json!(true)));
        assert_eq!(reason.actual, Some(json!(false)));
        assert_eq!(reason.message.as_deref(), Some("rule mkfs"));
        assert_eq!(Outcome::Timeout("no answer within 1s".into()).status(), CaseStatus::Timeout);
        assert_eq!(Outcome::BackendError("exit 2".into()).status(), CaseStatus::Error);
    }

    #[test]
    fn every_matcher_passes_and_fails() {
        let cases: &[(&str, Value, Value)] = &[
            ("expected = 'Paris'", json!(" Paris\n"), json!("paris")),
            ("expected = 42", json!("42"), json!("43")),
            ("assert = [{ type = 'equals', value = 'ok' }]", json!("ok"), json!("OK")),
            ("assert = [{ type = 'normalized', value = 'Hello  World' }]", json!("hello world"), json!("hello")),
            ("assert = [{ type = 'regex', value = '^git (status|st)$' }]", json!("git st"), json!("git stash")),
            ("assert = [{ type = 'contains', value = 'grep' }]", json!("ps aux | grep x"), json!("ps aux")),
            ("assert = [{ type = 'contains-all', value = ['a', 'b'] }]", json!("ab"), json!("a")),
            ("assert = [{ type = 'contains-any', value = ['a', 'b'] }]", json!("b"), json!("c")),
            (
                "assert = [{ type = 'json-equal', value = { a = 1, b = [1, 2] } }]",
                json!("{\"b\":[1,2.0],\"a\":1}"),
                json!("{\"a\":1,\"b\":[2,1]}"),
            ),
            ("assert = [{ type = 'json-equal', value = { a = 1 } }]", json!({"a": 1.0}), json!({"a": 1, "b": 2})),
            ("assert = [{ type = 'one-of', value = ['yes', 'y'] }]", json!("y"), json!("no")),
            ("assert = [{ type = 'number', value = 3.14, tolerance = 0.01 }]", json!("3.141"), json!("3.2")),
            ("assert = [{ type = 'number', value = 2 }]", json!(2), json!("two")),
            ("assert = [{ type = 'command', value = 'ls -la' }]", json!("ls -l -a"), json!("ls")),
            ("assert = [{ type = 'safe', value = true }]", json!("ls"), json!("mkfs /dev/sda")),
            ("assert = [{ type = 'posix', value = true }]", json!("echo $x"), json!("echo ${x,,}")),
        ];
        for (spec, good, bad) in cases {
            assert_eq!(judge(spec, good.clone()), Outcome::Pass, "{spec} with {good}");
            assert_ne!(judge(spec, bad.clone()), Outcome::Pass, "{spec} with {bad}");
        }
    }

    #[test]
    fn several_assertions_all_hold() {
        let spec = "assert = [{ type = 'contains', value = 'find' }, { type = 'regex', value = '-name' }]";
        assert_eq!(judge(spec, json!("find . -name x")), Outcome::Pass);
        let outcome = judge(spec, json!("find . -type f"));
        assert_eq!(outcome.code(), "incorrect");
        assert!(outcome.message().unwrap().contains("regex"));
    }

    #[test]
    fn bad_assertions_are_load_errors() {
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'number', value = 1, tolerance = -1 }]")
                .unwrap();
        assert!(checks_for(&case).unwrap_err().to_string().contains("tolerance"));
        assert!(toml::from_str::<TestCase>("id = 'x'\nprompt = 'p'\nassert = [{ type = 'nope', value = 1 }]").is_err());
    }

    #[test]
    fn long_answers_are_clipped_on_a_character_boundary() {
        let long = "é".repeat(500);
        let outcome = judge("expected = 'x'", json!(long));
        assert!(outcome.message().unwrap().chars().count() < 260);
    }
}
