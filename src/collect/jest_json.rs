//! Jest's `--json` report, which vitest's `--reporter=json` also writes (same shape).
//!
//! Each `testResults[]` entry is one test file; its `assertionResults[]` are the cases, named by
//! their describe path and title joined with ` > `. A file that failed to load (no assertions,
//! file status `failed`) or failed outside any test (an `afterAll` hook) becomes an `error` case.

use std::io::BufRead;

use serde::Deserialize;

use super::{DETAILS_CAP, ParseOptions, ParsedReport, ReportParser};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "jest-json";

/// Jest / vitest JSON results.
pub struct JestJson;

impl ReportParser for JestJson {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["jest", "vitest", "vitest-json"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        text.trim_start_matches('\u{feff}').trim_start().starts_with('{')
            && (text.contains("\"numTotalTestSuites\"")
                || text.contains("\"numFailedTestSuites\"")
                || text.contains("\"assertionResults\""))
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        // Read through `Repair`: one test name JavaScript broke mid-character must not lose the report.
        let mut input = super::json_text::Repair::new(input);
        let report: Report = serde_json::from_reader(&mut input).map_err(|e| {
            let message = format!("not a jest/vitest JSON report: {}", crate::text::json_error_at(&e));
            ParseError::new(self.format(), message).at_line(e.line() as u64)
        })?;
        let mut parsed = convert(report, options);
        parsed.warnings.extend(input.warning());
        Ok(parsed)
    }
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Report {
    num_total_tests: Option<u64>,
    num_failed_tests: Option<u64>,
    num_failed_test_suites: Option<u64>,
    num_runtime_error_test_suites: Option<u64>,
    success: Option<bool>,
    test_results: Vec<FileResult>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct FileResult {
    name: String,
    status: Option<String>,
    message: Option<String>,
    test_exec_error: Option<ExecError>,
    assertion_results: Vec<Assertion>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ExecError {
    message: Option<String>,
    stack: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Assertion {
    ancestor_titles: Vec<String>,
    title: String,
    full_name: Option<String>,
    status: String,
    duration: Option<f64>,
    failure_messages: Vec<String>,
    location: Option<Location>,
    invocations: Option<u32>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Location {
    line: Option<u32>,
}

fn convert(report: Report, options: &ParseOptions) -> ParsedReport {
    let mut parsed = ParsedReport::default();
    let mut assertions = 0u64;
    let declared = declared_failing(&report);
    for file in report.test_results {
        let rel = (!file.name.is_empty()).then(|| options.relative_path(&file.name));
        let mut any_failed = false;
        for a in file.assertion_results {
            assertions += 1;
            let case = assertion_case(a, rel.clone(), &mut parsed.warnings);
            any_failed |= case.status.is_failure();
            parsed.cases.push(case);
        }
        // A file that failed without a failing test: it did not load, or a hook outside any test broke.
        let text = file_error_text(file.test_exec_error.as_ref(), file.message.as_deref());
        if file.status.as_deref() == Some("failed") && !any_failed {
            let text = text.unwrap_or_else(|| "the test file failed without a failing test".into());
            parsed.cases.push(
                Case {
                    name: rel.clone().unwrap_or_else(|| "(test file)".into()).into(),
                    file: rel.map(Into::into),
                    status: CaseStatus::Error,
                    extra: crate::model::CaseExtra {
                        details: Some(crate::model::Text::capped(&text, DETAILS_CAP)),
                        ..Default::default()
                    }
                    .packed(),
                    ..Case::default()
                }
                .with_message(first_line(&text)),
            );
        }
    }
    // jest and vitest count exactly the tests they list (numPassing + numFailing + numPending +
    // numTodo over the files that loaded), so fewer listed means results were lost; more listed
    // (a hand-merged report) loses nothing and is only noted.
    match report.num_total_tests {
        Some(total) if total > assertions => parsed.declared_tests_unreported("numTotalTests", total, assertions),
        Some(total) if total < assertions => {
            parsed.warnings.push(format!("the report says {total} tests but lists {assertions}"))
        }
        _ => {}
    }
    if let Some(declared) = declared
        && !parsed.cases.iter().any(|c| c.status.is_failure())
    {
        parsed.declared_failures_unreported(&declared);
    }
    parsed
}

/// The failure counts the report declares, when any is above zero (`numFailedTests=1,
/// numFailedTestSuites=1, success=false`). `success: false` alone is not enough: jest also
/// writes it when only a coverage threshold failed, which fails no test.
fn declared_failing(report: &Report) -> Option<String> {
    let counts = [
        ("numFailedTests", report.num_failed_tests),
        ("numFailedTestSuites", report.num_failed_test_suites),
        ("numRuntimeErrorTestSuites", report.num_runtime_error_test_suites),
    ];
    let mut said: Vec<String> =
        counts.iter().filter_map(|(name, n)| n.filter(|n| *n > 0).map(|n| format!("{name}={n}"))).collect();
    if said.is_empty() {
        return None;
    }
    if report.success == Some(false) {
        said.push("success=false".into());
    }
    Some(said.join(", "))
}

fn assertion_case(a: Assertion, file: Option<String>, warnings: &mut Vec<String>) -> Case {
    let classname = (!a.ancestor_titles.is_empty()).then(|| a.ancestor_titles.join(" > "));
    let title = if a.title.is_empty() { a.full_name.clone().unwrap_or_else(|| "(unnamed)".into()) } else { a.title };
    let name = match &classname {
        Some(path) => format!("{path} > {title}"),
        None => title,
    };
    let mut status = match a.status.as_str() {
        "passed" => CaseStatus::Passed,
        "failed" => CaseStatus::Failed,
        // jest says `pending` for test.skip; `todo` and `disabled` did not run either.
        "pending" | "skipped" | "todo" | "disabled" => CaseStatus::Skipped,
        other => {
            warnings.push(format!("test `{name}` has unknown status `{other}`; counted as an error"));
            CaseStatus::Error
        }
    };
    let retries = a.invocations.unwrap_or(1).saturating_sub(1);
    if retries > 0 && status == CaseStatus::Passed {
        status = CaseStatus::Flaky;
    }
    let failure = strip_ansi(&a.failure_messages.join("\n\n"));
    let failure = failure.trim();
    Case {
        name: name.into(),
        classname: classname.map(Into::into),
        file: file.map(Into::into),
        line: a.location.and_then(|l| l.line),
        status,
        duration_ms: a.duration.filter(|d| d.is_finite() && *d >= 0.0),
        extra: crate::model::CaseExtra {
            details: (!failure.is_empty()).then(|| crate::model::Text::capped(failure, DETAILS_CAP)),
            retries,
            ..Default::default()
        }
        .packed(),
        ..Case::default()
    }
    .with_message(first_line(failure))
}

fn file_error_text(exec: Option<&ExecError>, message: Option<&str>) -> Option<String> {
    let from_exec = exec.and_then(|e| e.stack.as_deref().or(e.message.as_deref()));
    let text = strip_ansi(from_exec.or(message)?);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// First non-empty line without jest's `●` heading markers.
fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(|l| l.trim().trim_start_matches('●').trim())
        .find(|l| !l.is_empty() && *l != "Test suite failed to run")
        .map(str::to_string)
}

/// Removes terminal colour codes (jest colours messages unless told otherwise).
pub fn strip_ansi(text: &str) -> String {
    strip_ansi_escapes::strip_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(json: &str) -> Result<ParsedReport, ParseError> {
        JestJson.parse(&mut json.as_bytes(), &ParseOptions { root: Some("/repo".into()) })
    }

    #[test]
    fn maps_statuses_names_and_locations() {
        let json = r#"{"numFailedTestSuites":1,"numTotalTests":4,"testResults":[{"name":"/repo/src/a.test.js",
          "status":"failed","message":"","assertionResults":[
          {"ancestorTitles":["cart","sum"],"title":"adds","status":"passed","duration":3,"failureMessages":[],"location":{"line":5,"column":3}},
          {"ancestorTitles":["cart"],"title":"rounds","status":"failed","failureMessages":["\u001b[31mError: expect(received)\u001b[39m\n    at x (/repo/src/a.test.js:9:1)"]},
          {"ancestorTitles":[],"title":"later","status":"pending","failureMessages":[]},
          {"ancestorTitles":[],"title":"retried","status":"passed","invocations":2,"failureMessages":[]}]}]}"#;
        let report = parse_str(json).unwrap();
        let c = &report.cases;
        assert_eq!(c.len(), 4);
        assert_eq!(c[0].name, "cart > sum > adds");
        assert_eq!(c[0].classname.as_deref(), Some("cart > sum"));
        assert_eq!((c[0].file.as_deref(), c[0].line), (Some("src/a.test.js"), Some(5)));
        assert_eq!(c[1].status, CaseStatus::Failed);
        assert_eq!(c[1].message(), Some("Error: expect(received)"));
        assert_eq!((c[2].name.as_str(), c[2].status, c[2].classname.as_deref()), ("later", CaseStatus::Skipped, None));
        assert_eq!((c[3].status, c[3].extra().retries), (CaseStatus::Flaky, 1));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn file_that_failed_to_load_is_an_error_case() {
        let json = r#"{"numTotalTests":0,"testResults":[{"name":"/repo/src/broken.test.js","status":"failed",
          "message":"  ● Test suite failed to run\n\n    Cannot find module './nope'\n","assertionResults":[]}]}"#;
        let c = parse_str(json).unwrap().cases;
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].status, c[0].name.as_str()), (CaseStatus::Error, "src/broken.test.js"));
        assert_eq!(c[0].message(), Some("Cannot find module './nope'"));
    }

    /// JSON.stringify writes a name with an unpaired surrogate as `\ud800`, which serde_json
    /// refuses: the report is still read, every case kept, the name made lossy and said so.
    #[test]
    fn a_lone_surrogate_in_a_name_keeps_the_whole_report() {
        let json = "\u{feff}".to_string()
            + r#"{"numTotalTests":2,"testResults":[{"name":"/repo/a.test.js","status":"failed","assertionResults":[
          {"ancestorTitles":[],"title":"lone \ud800 in name","status":"passed","failureMessages":[]},
          {"ancestorTitles":[],"title":"fails for real","status":"failed","failureMessages":["Error: real failure"]}]}]}"#;
        let report = parse_str(&json).unwrap();
        let cases: Vec<_> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(cases, [("lone \u{FFFD} in name", CaseStatus::Passed), ("fails for real", CaseStatus::Failed)]);
        assert!(report.warnings.iter().any(|w| w.starts_with("1 unpaired UTF-16 surrogate")), "{:?}", report.warnings);
    }

    /// A report that counts a failed test but lists none failing has lost it (findings D10);
    /// `success: false` alone (a coverage threshold) adds nothing.
    #[test]
    fn declared_failures_with_no_failing_test_are_an_error_case() {
        let json = r#"{"numTotalTests":2,"numFailedTests":1,"numFailedTestSuites":1,"success":false,
          "testResults":[{"name":"/repo/a.test.js","status":"passed","assertionResults":[
          {"ancestorTitles":[],"title":"a","status":"passed","failureMessages":[]},
          {"ancestorTitles":[],"title":"b","status":"passed","failureMessages":[]}]}]}"#;
        let report = parse_str(json).unwrap();
        let last = report.cases.last().unwrap();
        assert_eq!((report.cases.len(), last.status), (3, CaseStatus::Error));
        assert_eq!(last.name, crate::collect::DECLARED_FAILURES_CASE);
        assert!(last.message().unwrap().contains("numFailedTests=1, numFailedTestSuites=1, success=false"));
        let coverage = json.replace("\"numFailedTests\":1,\"numFailedTestSuites\":1,", "");
        assert_eq!(parse_str(&coverage).unwrap().cases.len(), 2);
    }

    /// numTotalTests is exact: a report listing fewer tests has lost some (QA: jest
    /// numTotalTests=5 with 2 listed passed). More listed than declared is only a warning.
    #[test]
    fn fewer_tests_listed_than_declared_is_an_error_case() {
        let json = r#"{"numTotalTests":5,"testResults":[{"name":"/repo/a.test.js","status":"passed","assertionResults":[
          {"ancestorTitles":[],"title":"a","status":"passed","failureMessages":[]},
          {"ancestorTitles":[],"title":"b","status":"passed","failureMessages":[]}]}]}"#;
        let report = parse_str(json).unwrap();
        let last = report.cases.last().unwrap();
        assert_eq!((report.cases.len(), last.status), (3, CaseStatus::Error));
        assert_eq!(last.name, crate::collect::DECLARED_TESTS_CASE);
        assert_eq!(last.message(), Some("the report declares numTotalTests=5 but lists 2 test results: 3 are missing"));
        let more = parse_str(&json.replace("\"numTotalTests\":5", "\"numTotalTests\":1")).unwrap();
        assert_eq!(more.cases.len(), 2);
        assert_eq!(more.warnings, ["the report says 1 tests but lists 2"]);
    }

    #[test]
    fn sniffs_jest_and_vitest_but_not_other_json() {
        assert!(JestJson.sniff(br#"{"numFailedTestSuites":0,"numFailedTests":0"#));
        assert!(JestJson.sniff(br#"{"numTotalTestSuites":3,"numPassedTestSuites":1"#));
        assert!(!JestJson.sniff(br#"{"stats":{"suites":1,"passes":1}}"#));
        assert!(parse_str("{not json").unwrap_err().to_string().contains("line 1"));
    }
}
