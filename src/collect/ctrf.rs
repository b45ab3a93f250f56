//! CTRF (Common Test Report Format) JSON: `results.tests[]` into cases.
//!
//! Reads name, status, duration, filePath, line, message, trace, retries/retryAttempts, flaky,
//! suite, tags/labels and stdout/stderr. A test's `extra.fcorr` object (written by fcorr's own
//! CTRF report) holds result-model fields CTRF cannot express; they override, so a CTRF round
//! trip loses nothing.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::Deserialize;

use super::{DETAILS_CAP, OUTPUT_CAP, ParseOptions, ParsedReport, ReportParser};
use crate::errors::ParseError;
use crate::model::{Attempt, Case, CaseStatus};
use crate::text::cap_text;

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "ctrf";

/// Common Test Report Format.
pub struct Ctrf;

impl ReportParser for Ctrf {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["ctrf-json"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        let text = text.trim_start_matches('\u{feff}').trim_start();
        text.starts_with('{')
            && (text.contains("\"reportFormat\"")
                || (text.contains("\"results\"") && text.contains("\"tool\"") && text.contains("\"summary\"")))
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse(input, options)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    #[serde(default)]
    report_format: Option<String>,
    results: Results,
}

#[derive(Deserialize)]
struct Results {
    #[serde(default)]
    tool: Option<Tool>,
    #[serde(default)]
    summary: Option<Summary>,
    tests: Vec<Test>,
}

/// The counts a CTRF report declares (only `failed` is checked: see [`ParsedReport::declared_failures_unreported`]).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Summary {
    failed: Option<u64>,
}

#[derive(Deserialize)]
struct Tool {
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Test {
    name: String,
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    file_path: Option<String>,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    trace: Option<String>,
    #[serde(default)]
    raw_status: Option<String>,
    #[serde(default)]
    retries: Option<u32>,
    #[serde(default)]
    retry_attempts: Vec<RetryAttempt>,
    #[serde(default)]
    flaky: Option<bool>,
    /// Spec 0.0.x: a string; later: the hierarchy as an array.
    #[serde(default)]
    suite: Option<serde_json::Value>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    labels: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    stdout: Vec<String>,
    #[serde(default)]
    stderr: Vec<String>,
    #[serde(default)]
    extra: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RetryAttempt {
    #[serde(default)]
    attempt: u32,
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    trace: Option<String>,
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
    // Read through `Repair`: one test name JavaScript broke mid-character must not lose the report
    // (CTRF reporters are mostly JavaScript), and a leading byte-order mark is dropped.
    let mut input = super::json_text::Repair::new(input);
    let document: Document = serde_json::from_reader(&mut input).map_err(|e| {
        let what = crate::text::json_error_text(&e);
        ParseError::new(NAME, format!("line {}, column {}: not a CTRF report: {what}", e.line(), e.column()))
            .at_line(e.line() as u64)
    })?;
    let mut report = ParsedReport::default();
    report.warnings.extend(input.warning());
    if let Some(format) = document.report_format.as_deref()
        && format != "CTRF"
    {
        report.warnings.push(format!("reportFormat is `{format}`, not `CTRF`; read it as CTRF anyway"));
    }
    report.tool = document.results.tool.map(|t| t.name);
    let declared_failed = document.results.summary.and_then(|s| s.failed).filter(|n| *n > 0);
    for (index, test) in document.results.tests.into_iter().enumerate() {
        match to_case(test, options) {
            Ok(case) => report.cases.push(case),
            Err(message) => report.warnings.push(format!("results.tests[{index}]: {message}")),
        }
    }
    if let Some(failed) = declared_failed
        && !report.cases.iter().any(|c| c.status.is_failure())
    {
        report.declared_failures_unreported(&format!("summary.failed={failed}"));
    }
    Ok(report)
}

/// Why one test of a CTRF report is left out (a warning naming `results.tests[i]`).
#[derive(Debug, thiserror::Error)]
enum TestProblem {
    #[error("unknown status `{0}` (passed, failed, skipped, pending, other)")]
    Status(String),
    #[error("extra.fcorr is not an object")]
    OverlayNotObject,
    #[error("{0}")]
    Serialize(serde_json::Error),
    #[error("extra.fcorr does not fit the result model: {0}")]
    Overlay(serde_json::Error),
}

fn status_of(status: &str, raw: Option<&str>) -> Result<CaseStatus, TestProblem> {
    Ok(match status {
        // fcorr's own CTRF keeps the model's status in rawStatus (flaky passed, error/timeout failed).
        "passed" => match raw {
            Some("flaky") => CaseStatus::Flaky,
            _ => CaseStatus::Passed,
        },
        "failed" => match raw.map(str::to_ascii_lowercase).as_deref() {
            Some("timedout" | "timeout" | "timed-out") => CaseStatus::Timeout,
            Some("error" | "errored" | "broken") => CaseStatus::Error,
            _ => CaseStatus::Failed,
        },
        "skipped" | "pending" => CaseStatus::Skipped,
        // `other` is an outcome CTRF cannot name (interrupted, unknown): never a pass.
        "other" => match raw.map(str::to_ascii_lowercase).as_deref() {
            Some("timedout" | "timeout" | "timed-out") => CaseStatus::Timeout,
            Some("todo" | "disabled" | "ignored") => CaseStatus::Skipped,
            _ => CaseStatus::Error,
        },
        other => return Err(TestProblem::Status(other.to_string())),
    })
}

fn to_case(test: Test, options: &ParseOptions) -> Result<Case, TestProblem> {
    let mut status = status_of(&test.status, test.raw_status.as_deref())?;
    if status == CaseStatus::Passed && test.flaky == Some(true) {
        status = CaseStatus::Flaky;
    }
    let fcorr = test.extra.as_ref().and_then(|e| e.get("fcorr"));
    // fcorr writes the suite path as [suite name, classname]: the suite is the one being imported.
    let written_by_fcorr = fcorr.is_some_and(|f| f.get("suiteId").is_some());
    let classname = match &test.suite {
        Some(serde_json::Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(serde_json::Value::Array(parts)) => {
            let parts: Vec<&str> = parts.iter().filter_map(|p| p.as_str()).collect();
            let parts = if written_by_fcorr { parts.get(1..).unwrap_or_default() } else { &parts[..] };
            (!parts.is_empty()).then(|| parts.join(" > "))
        }
        _ => None,
    };
    let mut tags: BTreeMap<String, String> = BTreeMap::new();
    for (key, value) in &test.labels {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        tags.insert(key.clone(), text);
    }
    for tag in &test.tags {
        // `key:value` tags that repeat a label are the same fact written twice.
        let repeats_label = tag.split_once(':').is_some_and(|(k, v)| tags.get(k).is_some_and(|l| l == v));
        if !repeats_label && !tags.contains_key(tag) {
            tags.insert(tag.clone(), String::new());
        }
    }
    let mut attempts: Vec<(u32, Attempt)> = Vec::new();
    for attempt in &test.retry_attempts {
        attempts.push((
            attempt.attempt,
            Attempt {
                status: status_of(&attempt.status, None).unwrap_or(CaseStatus::Error),
                duration_ms: attempt.duration,
                message: attempt.message.clone(),
                details: attempt.trace.as_deref().map(|t| cap_text(t, DETAILS_CAP)),
            },
        ));
    }
    attempts.sort_by_key(|(n, _)| *n);
    // retryAttempts may list the final execution too; the model keeps only earlier ones.
    let retries = test.retries.unwrap_or(0).max(attempts.len().saturating_sub(1) as u32);
    if attempts.len() as u32 > retries {
        attempts.pop();
    }
    let output: Vec<&str> = test.stdout.iter().chain(&test.stderr).map(String::as_str).collect();
    let mut case = Case {
        name: test.name.into(),
        classname: classname.map(Into::into),
        file: test.file_path.filter(|f| !f.is_empty()).map(|f| options.relative_path(&f)).map(Into::into),
        line: test.line,
        status,
        duration_ms: test.duration.filter(|d| d.is_finite() && *d >= 0.0),
        extra: crate::model::CaseExtra {
            details: test.trace.filter(|t| !t.is_empty()).map(|t| crate::model::Text::capped(&t, DETAILS_CAP)),
            output: (status != CaseStatus::Passed && !output.is_empty())
                .then(|| crate::model::Text::capped(&output.join("\n"), OUTPUT_CAP)),
            retries,
            attempts: attempts.into_iter().map(|(_, a)| a).collect(),
            eval: crate::model::EvalExtra { tags, ..Default::default() }.packed(),
            ..Default::default()
        }
        .packed(),
        ..Case::default()
    }
    .with_message(test.message.filter(|m| !m.is_empty()));
    if let Some(fcorr) = fcorr {
        case = overlay(case, fcorr)?;
    }
    Ok(case)
}

/// Applies `extra.fcorr` (any result-model case fields) over what CTRF said.
fn overlay(case: Case, fcorr: &serde_json::Value) -> Result<Case, TestProblem> {
    let serde_json::Value::Object(fields) = fcorr else {
        return Err(TestProblem::OverlayNotObject);
    };
    // The model always serialises (plain data).
    let mut merged = serde_json::to_value(&case).map_err(TestProblem::Serialize)?;
    if let serde_json::Value::Object(target) = &mut merged {
        for (key, value) in fields {
            // fcorr's CTRF writes camelCase (`expectationSource`); the model is snake_case. Keys
            // the model does not have (`suiteId`, `change`...) are ignored by its deserializer.
            let key = snake_case(key);
            // Ids are recomputed from the suite, so a renamed suite still gets consistent ids.
            if key != "id" {
                target.insert(key, value.clone());
            }
        }
    }
    serde_json::from_value(merged).map_err(TestProblem::Overlay)
}

fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<ParsedReport, ParseError> {
        parse(&mut text.as_bytes(), &ParseOptions { root: Some("/repo".into()) })
    }

    #[test]
    fn a_summary_declaring_failures_with_no_failing_test_is_an_error_case() {
        let lost = r#"{"results":{"tool":{"name":"x"},"summary":{"tests":2,"passed":1,"failed":1},
            "tests":[{"name":"a","status":"passed","duration":1}]}}"#;
        let last = parse_str(lost).unwrap().cases.pop().unwrap();
        assert_eq!((last.name.as_str(), last.status), (crate::collect::DECLARED_FAILURES_CASE, CaseStatus::Error));
        assert!(last.message().unwrap().contains("summary.failed=1"), "{:?}", last.message());
        let listed = lost.replace(r#""status":"passed""#, r#""status":"failed""#);
        assert!(parse_str(&listed).unwrap().cases.iter().all(|c| c.name != crate::collect::DECLARED_FAILURES_CASE));
    }

    #[test]
    fn statuses_fields_and_retries() {
        let report = parse_str(
            r#"{"reportFormat":"CTRF","specVersion":"0.0.0","results":{"tool":{"name":"playwright"},
            "summary":{"tests":5,"passed":2,"failed":1,"skipped":1,"pending":0,"other":1,"start":0,"stop":1},
            "tests":[
              {"name":"ok","status":"passed","duration":12,"filePath":"/repo/tests/a.spec.ts","line":3,"suite":["A","B"]},
              {"name":"bad","status":"failed","duration":5,"message":"expected 1","trace":"at a.spec.ts:9","rawStatus":"failed",
               "retries":1,"retryAttempts":[{"attempt":1,"status":"failed","message":"first"},{"attempt":2,"status":"failed"}]},
              {"name":"later","status":"pending","duration":0,"tags":["slow"],"labels":{"owner":"qa","prio":2}},
              {"name":"flip","status":"passed","duration":3,"flaky":true,"retries":1},
              {"name":"odd","status":"other","duration":0,"rawStatus":"interrupted","stdout":["hello"]}
            ]}}"#,
        )
        .unwrap();
        let c = &report.cases;
        assert_eq!(report.tool.as_deref(), Some("playwright"));
        assert_eq!(
            (c[0].file.as_deref(), c[0].line, c[0].classname.as_deref()),
            (Some("tests/a.spec.ts"), Some(3), Some("A > B"))
        );
        assert_eq!((c[1].status, c[1].extra().retries, c[1].extra().attempts.len()), (CaseStatus::Failed, 1, 1));
        assert_eq!(c[1].extra().attempts[0].message.as_deref(), Some("first"));
        assert_eq!(c[2].status, CaseStatus::Skipped);
        assert_eq!((c[2].extra().eval().tags["slow"].as_str(), c[2].extra().eval().tags["prio"].as_str()), ("", "2"));
        assert_eq!((c[3].status, c[3].extra().retries), (CaseStatus::Flaky, 1));
        assert_eq!((c[4].status, c[4].output().as_deref()), (CaseStatus::Error, Some("hello")));
    }

    #[test]
    fn extra_fcorr_round_trips_model_fields() {
        let report = parse_str(
            r#"{"results":{"tool":{"name":"fcorr"},"summary":{},"tests":[{"name":"t","status":"failed","duration":1,
              "extra":{"fcorr":{"id":"ignored","status":"timeout","critical":true,"score":40.0,"classname":"pkg",
              "tags":{"category":"auth"},"reasons":[{"code":"timeout"}]}}}]}}"#,
        )
        .unwrap();
        let c = &report.cases[0];
        assert_eq!((c.status, c.extra().critical, c.extra().score), (CaseStatus::Timeout, true, Some(40.0)));
        assert_eq!((c.classname.as_deref(), c.extra().eval().tags["category"].as_str()), (Some("pkg"), "auth"));
        assert_eq!(c.extra().eval().reasons[0].code, "timeout");
        assert!(c.id.is_empty());
    }

    #[test]
    fn bad_documents_name_the_place() {
        let error = parse_str("{\"results\": {\"tests\": [ {\"name\": 1} ]}}").unwrap_err();
        assert_eq!((error.format.as_str(), error.line), ("ctrf", Some(1)));
        let error = error.to_string();
        assert!(error.starts_with("line 1, column"), "{error}");
        // The position is said once, not again at the end ("... at line 1 column 34").
        assert_eq!(error.matches("line 1").count(), 1, "{error}");
        assert!(error.ends_with("invalid type: integer `1`, expected a string"), "{error}");
        let report = parse_str(r#"{"results":{"tests":[{"name":"x","status":"weird","duration":0}]}}"#).unwrap();
        assert!(report.cases.is_empty());
        assert!(report.warnings[0].contains("results.tests[0]: unknown status `weird`"), "{:?}", report.warnings);
    }

    #[test]
    fn sniffs_ctrf_but_not_other_json() {
        assert!(Ctrf.sniff(br#"{"reportFormat":"CTRF","results":{}}"#));
        assert!(Ctrf.sniff(br#"{ "results": { "tool": {"name":"x"}, "summary": {} } }"#));
        assert!(!Ctrf.sniff(br#"{"numTotalTests": 3, "testResults": []}"#));
        assert!(!Ctrf.sniff(br#"{"stats": {}, "tests": [], "passes": []}"#));
    }
}
