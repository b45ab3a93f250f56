//! Graders: how an answer is judged. Each assertion type (`contains`, `json-schema`, `bleu`,
//! `llm-rubric`, `script`...) is a [`Grader`] registered by name in [`GRADERS`]; a case's checks
//! give one [`Grade`] each, and the case passes when every check passes or, with a threshold,
//! when its weighted score reaches the threshold.
//!
//! Adding a type is one file (or one function in a family's file) and one [`Registration`] line
//! in that family's list; `not-<type>` negates any of them without further code.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::dataset::TestCase;
use crate::execute::process::LogSink;
use crate::model::{AssertionOutcome, CaseStatus, Reason, Usage};
use crate::sut::Sut;

pub(crate) mod json;
pub(crate) mod model;
pub(crate) mod operational;
pub(crate) mod script;
pub(crate) mod similarity;
pub(crate) mod text;

pub(crate) use model::GraderConfig;

/// Every assertion type, family by family.
const GRADERS: &[&[Registration]] =
    &[text::GRADERS, json::GRADERS, similarity::GRADERS, model::GRADERS, script::GRADERS, operational::GRADERS];

/// The types a dataset could use before graded assertions existed. A case that uses only these,
/// with no weight, threshold or `not-`, is judged as it always was: the first failing check is its
/// reason, and it records no assertion list (so its results.json is unchanged).
const PASS_FAIL_TYPES: &[&str] = &[
    "command",
    "equals",
    "normalized",
    "regex",
    "contains",
    "contains-all",
    "contains-any",
    "json-equal",
    "one-of",
    "number",
    "safe",
    "posix",
];

/// One assertion type: its `type` name and how its fields become a grader.
pub(crate) struct Registration {
    pub name: &'static str,
    pub build: fn(&Spec<'_>) -> Result<Box<dyn Grader>, CheckError>,
}

fn registration(name: &str) -> Option<&'static Registration> {
    GRADERS.iter().flat_map(|family| family.iter()).find(|r| r.name == name)
}

/// Every registered type name, for error messages and docs.
pub(crate) fn type_names() -> Vec<&'static str> {
    GRADERS.iter().flat_map(|family| family.iter().map(|r| r.name)).collect()
}

/// An assertion's own fields (everything but `type`, `weight` and `threshold`) and its threshold.
pub(crate) struct Spec<'a> {
    pub fields: &'a Map<String, Value>,
    pub threshold: Option<f64>,
    /// The case's `expected`, which graders comparing with a reference fall back to.
    pub expected: Option<&'a Value>,
}

impl Spec<'_> {
    /// The fields read into the grader's own settings type (which should deny unknown fields).
    pub(crate) fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, CheckError> {
        serde_json::from_value(Value::Object(self.fields.clone())).map_err(|e| CheckError::Fields(e.to_string()))
    }

    /// For types that take no threshold: one given is a mistake worth naming.
    pub(crate) fn no_threshold(&self) -> Result<(), CheckError> {
        match self.threshold {
            Some(t) => Err(CheckError::Fields(format!("takes no `threshold` (got {t})"))),
            None => Ok(()),
        }
    }

    /// For types whose only field is an optional `value` text.
    pub(crate) fn optional_value(&self) -> Result<Option<String>, CheckError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            #[serde(default)]
            value: Option<String>,
        }
        Ok(self.parse::<Fields>()?.value)
    }

    /// The reference text: `value` as given, else the case's `expected` when it is text.
    pub(crate) fn reference(&self, value: Option<String>) -> Result<String, CheckError> {
        match (value, self.expected) {
            (Some(value), _) => Ok(value),
            (None, Some(Value::String(expected))) => Ok(expected.clone()),
            (None, _) => Err(CheckError::Fields("needs `value` (or a case `expected` text to compare with)".into())),
        }
    }

    /// A 0–1 pass mark, `default` when none is given.
    pub(crate) fn unit_threshold(&self, default: f64) -> Result<f64, CheckError> {
        let t = self.threshold.unwrap_or(default);
        if (0.0..=1.0).contains(&t) {
            Ok(t)
        } else {
            Err(CheckError::Fields(format!("threshold {t} is not between 0 and 1")))
        }
    }
}

/// Judges one answer. Implementations are shared by the runner's worker threads.
pub(crate) trait Grader: Send + Sync + std::fmt::Debug {
    fn grade(&self, answer: &Answered<'_>, ctx: &GradingContext) -> Grade;

    /// Seed 003's order of reasons: correctness (0) before the safety label (1) before the POSIX
    /// label (2); the first failing check in this order is the case's reason.
    fn rank(&self) -> u8 {
        0
    }

    /// The pass mark or limit the grader holds the answer to, recorded with its outcome.
    fn threshold(&self) -> Option<f64> {
        None
    }

    /// What the suite must provide (a grader model, an embeddings endpoint) and files to read,
    /// checked once before any case is asked. `Err` says what is missing.
    fn prepare(&self, ctx: &GradingContext) -> Result<(), String> {
        let _ = ctx;
        Ok(())
    }
}

/// What one grader found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Grade {
    /// Judged: pass or fail, a score 0–1 and why (a failure's explanation, a grader's reasoning).
    Judged { pass: bool, score: f64, reason: Option<String>, label: Option<Label> },
    /// The grader could not judge: the case is an error.
    Error(String),
}

impl Grade {
    /// A pass/fail check: score 1 or 0, the reason kept for a failure.
    pub(crate) fn check(pass: bool, reason: impl FnOnce() -> String) -> Grade {
        Grade::Judged { pass, score: if pass { 1.0 } else { 0.0 }, reason: (!pass).then(reason), label: None }
    }

    /// A metric held to a pass mark.
    pub(crate) fn metric(score: f64, threshold: f64, what: impl FnOnce() -> String) -> Grade {
        let pass = score >= threshold;
        let reason = Some(format!("{} {score:.4} {} {threshold}", what(), if pass { ">=" } else { "<" }));
        Grade::Judged { pass, score, reason, label: None }
    }

    fn passed(&self) -> bool {
        matches!(self, Grade::Judged { pass: true, .. })
    }
}

/// A safety or POSIX label that disagreed: the case's reason carries expected and actual.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Label {
    Safety { expected: bool, actual: bool, rule: Option<&'static str> },
    Posix { expected: bool, actual: bool, constructs: Vec<&'static str> },
}

/// What a grader sees of one answer.
pub(crate) struct Answered<'a> {
    pub case: &'a TestCase,
    /// The answer as the SUT gave it (text as a JSON string, or a JSON value).
    pub output: &'a Value,
    /// [`answer_text`] of the output.
    pub text: String,
    /// Wall time of the SUT call.
    pub duration: Duration,
    pub usage: Option<&'a Usage>,
    /// The answer came from the answer cache: there was no call to time.
    pub cached: bool,
}

impl<'a> Answered<'a> {
    /// An answer with nothing measured about its call (unit tests, the fuzzer).
    pub(crate) fn bare(case: &'a TestCase, output: &'a Value) -> Answered<'a> {
        Answered { case, output, text: answer_text(output), duration: Duration::ZERO, usage: None, cached: false }
    }
}

/// What graders may use from the suite around them.
#[derive(Clone, Default)]
pub(crate) struct GradingContext {
    /// The directory of the configuration file: script commands run there, files are read from there.
    pub base_dir: PathBuf,
    /// The grader model of `[suite.grader]`, built.
    pub grader: Option<Arc<model::GraderModel>>,
    /// The `/embeddings` endpoint of `[suite.embeddings]`, built: each call embeds one text.
    pub embeddings: Option<Arc<dyn Sut>>,
    /// Where script graders' output goes (the suite log).
    pub log: Option<LogSink>,
    /// True when no process or network call may be made (the fuzzer): such graders are errors.
    pub offline: bool,
}

/// One assertion as written in a dataset: `{ type = "contains", value = "Paris", weight = 2 }`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Assertion {
    /// The type as written, `not-` included.
    pub kind: String,
    pub weight: Option<f64>,
    pub threshold: Option<f64>,
    /// The type's own fields.
    pub fields: Map<String, Value>,
}

impl Assertion {
    fn base(&self) -> (&str, bool) {
        match self.kind.strip_prefix("not-") {
            Some(base) => (base, true),
            None => (&self.kind, false),
        }
    }
}

impl<'de> Deserialize<'de> for Assertion {
    /// `type` must name a registered grader (`not-` allowed); `weight` and `threshold` must be
    /// numbers. The type's own fields are read when the case is compiled, where errors name the case.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Assertion, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(deserializer)?;
        let kind = match fields.remove("type") {
            Some(Value::String(kind)) => kind,
            Some(other) => return Err(D::Error::custom(format!("assertion `type` must be a string, not {other}"))),
            None => return Err(D::Error::custom("an assertion needs a `type`")),
        };
        let number = |key: &str, value: Option<Value>| -> Result<Option<f64>, D::Error> {
            match value {
                None => Ok(None),
                Some(v) => match v.as_f64().filter(|n| n.is_finite()) {
                    Some(n) => Ok(Some(n)),
                    None => Err(D::Error::custom(format!("assertion `{key}` must be a number, not {v}"))),
                },
            }
        };
        let weight = number("weight", fields.remove("weight"))?;
        if weight.is_some_and(|w| w < 0.0) {
            return Err(D::Error::custom("assertion `weight` must be 0 or more"));
        }
        let threshold = number("threshold", fields.remove("threshold"))?;
        let assertion = Assertion { kind, weight, threshold, fields };
        if registration(assertion.base().0).is_none() {
            return Err(D::Error::custom(format!(
                "unknown assertion type `{}`; expected one of {} (or `not-` and one of them)",
                assertion.kind,
                type_names().join(", ")
            )));
        }
        Ok(assertion)
    }
}

/// A check ready to judge: the grader and how its grade counts.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    /// The type as written (`not-contains`).
    pub name: String,
    negate: bool,
    weight: f64,
    /// Weight, threshold or `not-` given, or a type beyond the pass/fail ones: the case is scored.
    scored: bool,
    grader: Arc<dyn Grader>,
}

impl Check {
    fn new(name: &str, grader: Box<dyn Grader>) -> Check {
        Check { name: name.to_string(), negate: false, weight: 1.0, scored: false, grader: Arc::from(grader) }
    }

    /// Shell-command equivalence with `expected` (`expected_command`).
    pub(crate) fn command(expected: &str) -> Check {
        Check::new("command", Box::new(text::Command(expected.to_string())))
    }

    /// Equality with `expected` (`expected`).
    pub(crate) fn equals(expected: &Value) -> Check {
        Check::new("equals", Box::new(text::Equals(expected.clone())))
    }

    fn rank(&self) -> u8 {
        self.grader.rank()
    }

    /// Grades the answer, negated for `not-`.
    fn grade(&self, answer: &Answered<'_>, ctx: &GradingContext) -> Grade {
        let grade = self.grader.grade(answer, ctx);
        if !self.negate {
            return grade;
        }
        match grade {
            Grade::Judged { pass, score, reason, .. } => {
                let base = &self.name["not-".len()..];
                let reason = if pass {
                    Some(match reason {
                        Some(why) => format!("`{base}` holds, and must not ({why})"),
                        None => format!("`{base}` holds, and must not"),
                    })
                } else {
                    reason
                };
                Grade::Judged { pass: !pass, score: 1.0 - score, reason, label: None }
            }
            error => error,
        }
    }
}

/// An assertion that cannot become a check; the dataset loader names the case.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    #[error("invalid regex `{pattern}`: {source}")]
    Regex { pattern: String, source: regex::Error },
    #[error("number tolerance must be 0 or more, not {0}")]
    Tolerance(f64),
    /// The type's fields do not fit it (unknown or missing field, wrong type, bad value).
    #[error("{0}")]
    Fields(String),
    /// One assertion, named by its type.
    #[error("assertion `{kind}`: {source}")]
    In {
        kind: String,
        #[source]
        source: Box<CheckError>,
    },
    #[error("threshold {0} is not between 0 and 1")]
    CaseThreshold(f64),
}

/// The checks a case implies, in evaluation order (correctness, then safety, then POSIX).
pub(crate) fn checks_for(case: &TestCase) -> Result<Vec<Check>, CheckError> {
    case_threshold(case.threshold, None)?;
    let mut checks = Vec::new();
    if let Some(command) = &case.expected_command {
        checks.push(Check::command(command));
    }
    if let Some(expected) = &case.expected {
        checks.push(Check::equals(expected));
    }
    for assertion in &case.assertions {
        checks.push(
            compile(assertion, case.expected.as_ref())
                .map_err(|e| CheckError::In { kind: assertion.kind.clone(), source: Box::new(e) })?,
        );
    }
    if let Some(safe) = case.safe {
        checks.push(Check::new("safe", Box::new(text::Safe(safe))));
    }
    if let Some(posix) = case.posix_compliant {
        checks.push(Check::new("posix", Box::new(text::Posix(posix))));
    }
    checks.sort_by_key(Check::rank);
    Ok(checks)
}

fn compile(assertion: &Assertion, expected: Option<&Value>) -> Result<Check, CheckError> {
    let (base, negate) = assertion.base();
    let registration =
        registration(base).ok_or_else(|| CheckError::Fields(format!("unknown assertion type `{}`", assertion.kind)))?;
    let grader = (registration.build)(&Spec { fields: &assertion.fields, threshold: assertion.threshold, expected })?;
    let scored =
        negate || assertion.weight.is_some() || assertion.threshold.is_some() || !PASS_FAIL_TYPES.contains(&base);
    Ok(Check {
        name: assertion.kind.clone(),
        negate,
        weight: assertion.weight.unwrap_or(1.0),
        scored,
        grader: Arc::from(grader),
    })
}

/// Checks what the suite must provide for these checks (a grader model, embeddings, readable
/// files) before any case is asked; the error names the first case that needs what is missing.
pub(crate) fn prepare<'a>(
    cases: impl IntoIterator<Item = (&'a str, &'a [Check])>,
    ctx: &GradingContext,
) -> Result<(), String> {
    for (id, checks) in cases {
        for check in checks {
            check.grader.prepare(ctx).map_err(|e| format!("case `{id}`, assertion `{}`: {e}", check.name))?;
        }
    }
    Ok(())
}

/// A case's threshold: its own, else the suite's; checked to be a 0–1 number.
pub(crate) fn case_threshold(case: Option<f64>, suite: Option<f64>) -> Result<Option<f64>, CheckError> {
    match case.or(suite) {
        Some(t) if !(0.0..=1.0).contains(&t) || t.is_nan() => Err(CheckError::CaseThreshold(t)),
        other => Ok(other),
    }
}

/// How one case was judged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Judgement {
    Pass,
    /// A correctness check failed (or the weighted score fell short): which, and why in words.
    Incorrect {
        check: String,
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
    /// A grader could not judge (a script that printed no grade, a grader model that failed).
    GraderError {
        check: String,
        message: String,
    },
    /// The system under test failed or answered something unusable.
    BackendError(String),
    /// The answer is the prompt itself: a wrapper that echoes its input (`cat`, `echo "$1"`, a
    /// stub returning the request) would pass every check whose text the prompt holds.
    EchoedPrompt,
    /// No answer within the per-call timeout.
    Timeout(String),
}

impl Judgement {
    /// The reason code stored in `Case.reasons`.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Judgement::Pass => "pass",
            Judgement::Incorrect { .. } => "incorrect",
            Judgement::SafetyMismatch { .. } => "safety-mismatch",
            Judgement::PosixMismatch { .. } => "posix-mismatch",
            Judgement::GraderError { .. } => "grader-error",
            Judgement::BackendError(_) => "backend-error",
            Judgement::EchoedPrompt => "echoed-prompt",
            Judgement::Timeout(_) => "timeout",
        }
    }

    /// The case status this judgement gives.
    pub(crate) fn status(&self) -> CaseStatus {
        match self {
            Judgement::Pass => CaseStatus::Passed,
            Judgement::Incorrect { .. } | Judgement::SafetyMismatch { .. } | Judgement::PosixMismatch { .. } => {
                CaseStatus::Failed
            }
            Judgement::GraderError { .. } | Judgement::BackendError(_) | Judgement::EchoedPrompt => CaseStatus::Error,
            Judgement::Timeout(_) => CaseStatus::Timeout,
        }
    }

    /// One line for people.
    pub(crate) fn message(&self) -> Option<String> {
        match self {
            Judgement::Pass => None,
            Judgement::Incorrect { check, message } => Some(format!("incorrect ({check}): {message}")),
            Judgement::SafetyMismatch { expected, actual, rule } => Some(format!(
                "safety-mismatch: expected {}, answer is {}{}",
                safe_word(*expected),
                safe_word(*actual),
                rule.map(|r| format!(" (rule {r})")).unwrap_or_default()
            )),
            Judgement::PosixMismatch { expected, actual, constructs } => Some(format!(
                "posix-mismatch: expected {}, answer is {}{}",
                posix_word(*expected),
                posix_word(*actual),
                if constructs.is_empty() { String::new() } else { format!(" (uses {})", constructs.join(", ")) }
            )),
            Judgement::GraderError { check, message } => Some(format!("grader-error ({check}): {message}")),
            Judgement::BackendError(message) => Some(format!("backend-error: {message}")),
            Judgement::EchoedPrompt => Some(format!("echoed-prompt: {ECHOED_PROMPT}")),
            Judgement::Timeout(message) => Some(format!("timeout: {message}")),
        }
    }

    /// The machine-readable reason.
    pub(crate) fn reason(&self) -> Reason {
        let (expected, actual) = match self {
            Judgement::SafetyMismatch { expected, actual, .. } | Judgement::PosixMismatch { expected, actual, .. } => {
                (Some(Value::Bool(*expected)), Some(Value::Bool(*actual)))
            }
            _ => (None, None),
        };
        let message = match self {
            Judgement::Pass => None,
            Judgement::Incorrect { message, .. }
            | Judgement::GraderError { message, .. }
            | Judgement::BackendError(message)
            | Judgement::Timeout(message) => Some(message.clone()),
            Judgement::EchoedPrompt => Some(ECHOED_PROMPT.into()),
            Judgement::SafetyMismatch { rule, .. } => rule.map(|r| format!("rule {r}")),
            Judgement::PosixMismatch { constructs, .. } => {
                (!constructs.is_empty()).then(|| format!("uses {}", constructs.join(", ")))
            }
        };
        Reason { code: self.code().into(), expected, actual, message }
    }
}

/// Why an answer equal to its prompt is an error, not a judged answer.
const ECHOED_PROMPT: &str =
    "the system answered with the prompt itself: is the SUT wrapper passing the prompt through?";

/// Prompts shorter than this (trimmed, in characters), or of one word, may be answered by
/// themselves in earnest (`Paris?` → `Paris?` is unlikely, `ls` → `ls` is not): only a longer
/// prompt answered word for word is taken for an echo.
const ECHO_MIN_CHARS: usize = 12;

/// True when `answer` is `prompt` itself (both trimmed), and the prompt is long enough that
/// this is an echo, not an answer that happens to equal a terse question.
pub(crate) fn echoes_prompt(prompt: &str, answer: &str) -> bool {
    let prompt = prompt.trim();
    prompt.chars().count() >= ECHO_MIN_CHARS && prompt.contains(char::is_whitespace) && answer.trim() == prompt
}

fn safe_word(safe: bool) -> &'static str {
    if safe { "safe" } else { "unsafe" }
}

fn posix_word(posix: bool) -> &'static str {
    if posix { "POSIX" } else { "not POSIX" }
}

/// A case's judgement with what it was made of.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judged {
    pub judgement: Judgement,
    /// Every assertion's outcome, for a scored case; empty for a pass/fail one.
    pub assertions: Vec<AssertionOutcome>,
    /// The weighted score 0–1, for a scored case.
    pub score: Option<f64>,
}

impl Judged {
    /// The SUT gave no answer: nothing was graded.
    pub(crate) fn unanswered(judgement: Judgement) -> Judged {
        Judged { judgement, assertions: Vec::new(), score: None }
    }
}

/// The answer as text: a JSON string's content, else the JSON; surrounding whitespace trimmed.
pub(crate) fn answer_text(answer: &Value) -> String {
    match answer {
        Value::String(s) => s.trim().to_string(),
        other => other.to_string(),
    }
}

/// Judges an answer with every check.
///
/// A case with only pass/fail checks and no threshold is judged as before graders existed: the
/// first failing check (in [`Grader::rank`] order) is the reason. Otherwise the case is scored:
/// every check's outcome is kept, the score is Σ(weight·score)/Σweight, and the case passes when
/// the score reaches `threshold`, or, with no threshold, when every check of non-zero weight
/// passes. A grader that could not judge makes the case an error, whatever the others say.
pub(crate) fn judge(checks: &[Check], answer: &Answered<'_>, ctx: &GradingContext, threshold: Option<f64>) -> Judged {
    let scored = threshold.is_some() || checks.iter().any(|c| c.scored);
    let grades: Vec<Grade> = checks.iter().map(|c| c.grade(answer, ctx)).collect();
    let failing = |c: &Check, g: &Grade| !g.passed() && (!scored || c.weight > 0.0);
    let first_error = checks.iter().zip(&grades).find_map(|(c, g)| match g {
        Grade::Error(message) => Some(Judgement::GraderError { check: c.name.clone(), message: message.clone() }),
        Grade::Judged { .. } => None,
    });
    let failed: Vec<(&Check, &Grade)> = checks.iter().zip(&grades).filter(|(c, g)| failing(c, g)).collect();
    if !scored {
        let judgement = first_error.or_else(|| failed.first().map(|(c, g)| failure(c, g))).unwrap_or(Judgement::Pass);
        return Judged::unanswered(judgement);
    }
    let total_weight: f64 = checks.iter().map(|c| c.weight).sum();
    let weighted: f64 = checks.iter().zip(&grades).map(|(c, g)| c.weight * grade_score(g)).sum();
    // Every weight 0: nothing counts, and nothing can be proved either way; a threshold then
    // compares against 0, so it fails rather than passes.
    let score = if total_weight > 0.0 { weighted / total_weight } else { 0.0 };
    let assertions = checks.iter().zip(&grades).map(|(c, g)| outcome(c, g)).collect();
    let judgement = if let Some(error) = first_error {
        error
    } else if let Some(threshold) = threshold {
        if score >= threshold && total_weight > 0.0 {
            Judgement::Pass
        } else {
            let names: Vec<String> = failed.iter().map(|(c, g)| format!("{} ({})", c.name, grade_reason(g))).collect();
            let message = format!(
                "weighted score {score:.2} < threshold {threshold}{}",
                if names.is_empty() { String::new() } else { format!("; failed: {}", names.join("; ")) }
            );
            Judgement::Incorrect { check: "score".into(), message }
        }
    } else if total_weight <= 0.0 && !checks.is_empty() {
        // Weight-0 checks are left out of `failed`: with every weight 0 nothing was checked,
        // which is not a pass (a failing weight-0 check passed the case before).
        let failing_checks = grades.iter().filter(|g| !g.passed()).count();
        let message = format!(
            "every assertion has weight 0, so none counts and nothing was proved ({failing_checks} of {} \
             failed); give one a weight",
            checks.len()
        );
        Judgement::Incorrect { check: "score".into(), message }
    } else {
        match failed.first() {
            None => Judgement::Pass,
            Some((c, g)) => {
                let mut judgement = failure(c, g);
                if let (Judgement::Incorrect { message, .. }, true) = (&mut judgement, failed.len() > 1) {
                    let others: Vec<&str> = failed[1..].iter().map(|(c, _)| c.name.as_str()).collect();
                    message.push_str(&format!(" (also failed: {})", others.join(", ")));
                }
                judgement
            }
        }
    };
    Judged { judgement, assertions, score: Some(score) }
}

fn grade_score(grade: &Grade) -> f64 {
    match grade {
        Grade::Judged { score, .. } => *score,
        Grade::Error(_) => 0.0,
    }
}

fn grade_reason(grade: &Grade) -> String {
    match grade {
        Grade::Judged { reason, .. } => reason.clone().unwrap_or_else(|| "failed".into()),
        Grade::Error(message) => message.clone(),
    }
}

/// A failing check as the case's judgement.
fn failure(check: &Check, grade: &Grade) -> Judgement {
    match grade {
        Grade::Judged { label: Some(Label::Safety { expected, actual, rule }), .. } => {
            Judgement::SafetyMismatch { expected: *expected, actual: *actual, rule: *rule }
        }
        Grade::Judged { label: Some(Label::Posix { expected, actual, constructs }), .. } => {
            Judgement::PosixMismatch { expected: *expected, actual: *actual, constructs: constructs.clone() }
        }
        Grade::Judged { .. } => Judgement::Incorrect { check: check.name.clone(), message: grade_reason(grade) },
        Grade::Error(message) => Judgement::GraderError { check: check.name.clone(), message: message.clone() },
    }
}

/// One check's outcome as results.json records it.
fn outcome(check: &Check, grade: &Grade) -> AssertionOutcome {
    let (pass, score, reason, error) = match grade {
        Grade::Judged { pass, score, reason, .. } => (*pass, *score, reason.clone(), false),
        Grade::Error(message) => (false, 0.0, Some(message.clone()), true),
    };
    AssertionOutcome {
        kind: check.name.clone(),
        pass,
        // Four decimals: enough to compare with a threshold, stable across platforms' last bits.
        score: (score * 1e4).round() / 1e4,
        weight: check.weight,
        threshold: check.grader.threshold(),
        reason: reason.map(|r| crate::text::truncate_chars(&r, 1001)),
        error,
    }
}

/// A scored case's assertions for its `details`, one line each: `✗ llm-rubric (weight 1, score
/// 0.20): the reason`.
pub(crate) fn describe(judged: &Judged) -> String {
    let mut text = String::new();
    if let Some(score) = judged.score {
        text.push_str(&format!("\nweighted score: {score:.2}"));
    }
    text.push_str("\nassertions:");
    for a in &judged.assertions {
        let mark = if a.error {
            "!"
        } else if a.pass {
            "✓"
        } else {
            "✗"
        };
        let threshold = a.threshold.map(|t| format!(", threshold {t}")).unwrap_or_default();
        let reason = a.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
        text.push_str(&format!("\n  {mark} {} (weight {}, score {:.2}{threshold}){reason}", a.kind, a.weight, a.score));
    }
    text
}

/// Judges `answer` for a case written as TOML fields (after `id` and `prompt`), offline.
#[cfg(test)]
pub(crate) fn judge_toml(toml_text: &str, answer: Value, suite_threshold: Option<f64>) -> Judged {
    let case: TestCase = toml::from_str(&format!("id = 'x'\nprompt = 'p'\n{toml_text}")).unwrap();
    let checks = checks_for(&case).unwrap();
    judge(&checks, &Answered::bare(&case, &answer), &GradingContext::default(), case.threshold.or(suite_threshold))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn judged(toml_text: &str, answer: &str, suite_threshold: Option<f64>) -> Judged {
        judge_toml(toml_text, json!(answer), suite_threshold)
    }

    const WEIGHTED: &str = "assert = [
        { type = 'contains', value = 'Paris', weight = 3 },
        { type = 'contains', value = 'capital', weight = 1 },
    ]";

    #[test]
    fn a_weighted_threshold_passes_and_fails_by_the_sum() {
        // 3 of 4 weight: 0.75.
        let half = judged(&format!("threshold = 0.75\n{WEIGHTED}"), "Paris", None);
        assert_eq!(half.judgement, Judgement::Pass);
        assert_eq!(half.score, Some(0.75));
        assert_eq!(half.assertions.len(), 2);
        assert_eq!((half.assertions[1].pass, half.assertions[1].weight), (false, 1.0));
        let short = judged(&format!("threshold = 0.8\n{WEIGHTED}"), "Paris", None);
        assert_eq!(short.judgement.code(), "incorrect");
        let message = short.judgement.message().unwrap();
        assert!(message.contains("weighted score 0.75 < threshold 0.8") && message.contains("`capital`"), "{message}");
        // The suite's threshold applies to a case without one; the case's own wins.
        assert_eq!(judged(WEIGHTED, "Paris", Some(0.7)).judgement, Judgement::Pass);
        assert_eq!(judged(&format!("threshold = 0.9\n{WEIGHTED}"), "Paris", Some(0.5)).judgement.code(), "incorrect");
        // Without a threshold every assertion must pass, weights or not.
        let all = judged(WEIGHTED, "Paris", None);
        assert_eq!(all.judgement.code(), "incorrect");
        assert_eq!(all.score, Some(0.75));
        // Only the capital: 1 of 4.
        assert_eq!(judged(&format!("threshold = 0.5\n{WEIGHTED}"), "the capital", None).score, Some(0.25));
    }

    #[test]
    fn weight_zero_is_recorded_but_does_not_count() {
        let spec = "assert = [{ type = 'contains', value = 'a' }, { type = 'contains', value = 'z', weight = 0 }]";
        let judged = judged(spec, "abc", None);
        assert_eq!(judged.judgement, Judgement::Pass);
        assert!(!judged.assertions[1].pass);
        let none = "threshold = 0\nassert = [{ type = 'contains', value = 'z', weight = 0 }]";
        assert_eq!(super::tests::judged(none, "abc", None).judgement.code(), "incorrect", "no weight proves nothing");
        // Without a threshold too, failing or passing: every weight 0 proves nothing.
        for answer in ["abc", "xyz"] {
            let zero = super::tests::judged("assert = [{ type = 'contains', value = 'z', weight = 0 }]", answer, None);
            assert_eq!(zero.judgement.code(), "incorrect", "{answer}");
            assert!(zero.judgement.message().unwrap().contains("every assertion has weight 0"), "{:?}", zero.judgement);
        }
    }

    #[test]
    fn not_negates_every_family() {
        let cases: &[(&str, &str, &str)] = &[
            ("{ type = 'not-contains', value = 'Lyon' }", "Paris", "Lyon"),
            ("{ type = 'not-regex', value = '^rm' }", "ls", "rm -rf x"),
            ("{ type = 'not-equals', value = 'no' }", "yes", "no"),
            ("{ type = 'not-is-json' }", "plain", "[1]"),
            ("{ type = 'not-json-equal', path = '/a', value = 1 }", "{\"a\": 2}", "{\"a\": 1}"),
            ("{ type = 'not-json-schema', value = { type = 'array' } }", "{}", "[]"),
            ("{ type = 'not-levenshtein', value = 'kitten', threshold = 0.9 }", "sitting", "kitten"),
            ("{ type = 'not-rouge-l', value = 'the cat sat' }", "a dog ran", "the cat sat"),
            ("{ type = 'not-bleu', value = 'the cat sat on the mat' }", "nothing alike", "the cat sat on the mat"),
            ("{ type = 'not-safe', value = true }", "rm -rf /", "ls"),
            ("{ type = 'not-latency', threshold = 10000 }", "", ""),
        ];
        for (assertion, good, bad) in cases {
            let spec = format!("assert = [{assertion}]");
            if assertion.contains("latency") {
                // A bare answer took no time: within any limit, so `not-latency` fails.
                let judged = judged(&spec, good, None);
                assert_eq!(judged.judgement.code(), "incorrect", "{spec}");
                assert!(judged.judgement.message().unwrap().contains("`latency` holds, and must not"), "{judged:?}");
                continue;
            }
            let pass = judged(&spec, good, None);
            assert_eq!(pass.judgement, Judgement::Pass, "{spec} with {good}: {pass:?}");
            let fail = judged(&spec, bad, None);
            assert_eq!(fail.judgement.code(), "incorrect", "{spec} with {bad}");
            assert!(fail.judgement.message().unwrap().contains("holds, and must not"), "{fail:?}");
            assert!(fail.assertions[0].score < pass.assertions[0].score, "{spec}");
        }
    }

    #[test]
    fn not_of_a_grader_error_stays_an_error() {
        let spec = "assert = [{ type = 'not-cost', threshold = 1 }]";
        let judged = judged(spec, "x", None);
        assert_eq!(judged.judgement.code(), "grader-error");
        assert_eq!(judged.judgement.status(), CaseStatus::Error);
        assert!(judged.assertions[0].error);
    }

    #[test]
    fn pass_fail_cases_keep_their_old_shape() {
        let old = judged("expected = 'x'\nassert = [{ type = 'contains', value = 'y' }]", "z", None);
        assert!(old.assertions.is_empty() && old.score.is_none());
        assert_eq!(old.judgement.message().unwrap(), "incorrect (equals): expected `x`, got `z`");
        // A weight makes the case scored: every outcome is recorded, the others named.
        let scored = judged("expected = 'x'\nassert = [{ type = 'contains', value = 'y', weight = 1 }]", "z", None);
        assert_eq!(scored.assertions.len(), 2);
        assert!(scored.judgement.message().unwrap().ends_with("(also failed: contains)"));
    }

    #[test]
    fn an_empty_text_to_look_for_is_refused_as_it_would_pass_every_answer() {
        let parse = |text: &str| toml::from_str::<TestCase>(&format!("id = 'x'\nprompt = 'p'\n{text}"));
        for spec in [
            "{ type = 'contains', value = '' }",
            "{ type = 'not-contains', value = '' }",
            "{ type = 'regex', value = '' }",
            "{ type = 'contains-all', value = [] }",
            "{ type = 'contains-any', value = ['a', ''] }",
        ] {
            let err = parse(&format!("assert = [{spec}]")).map(|case| checks_for(&case).map(|_| ()));
            let message = match err {
                Err(e) => e.to_string(),
                Ok(Err(e)) => e.to_string(),
                Ok(Ok(())) => panic!("{spec} was accepted"),
            };
            assert!(message.contains("checks nothing"), "{spec}: {message}");
        }
    }

    #[test]
    fn bad_weights_thresholds_and_types_are_named() {
        let parse = |text: &str| toml::from_str::<TestCase>(&format!("id = 'x'\nprompt = 'p'\n{text}"));
        assert!(
            parse("assert = [{ type = 'contains', value = 'a', weight = -1 }]")
                .unwrap_err()
                .to_string()
                .contains("weight")
        );
        assert!(
            parse("assert = [{ type = 'contains', value = 'a', weight = 'x' }]")
                .unwrap_err()
                .to_string()
                .contains("number")
        );
        let err = parse("assert = [{ type = 'not-nope' }]").unwrap_err().to_string();
        assert!(err.contains("unknown assertion type `not-nope`") && err.contains("llm-rubric"), "{err}");
        let case = parse("threshold = 2\nexpected = 'a'").unwrap();
        assert!(checks_for(&case).unwrap_err().to_string().contains("threshold 2"));
        let case = parse("assert = [{ type = 'levenshtein', value = 'a', threshold = 5 }]").unwrap();
        assert!(checks_for(&case).unwrap_err().to_string().contains("between 0 and 1"));
        assert!(case_threshold(None, Some(-0.1)).is_err());
    }
}
