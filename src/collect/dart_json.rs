//! The JSON reporter protocol of Dart's `test` package (`dart test --reporter json`, and
//! `flutter test --machine`, which writes the same events; see [`super::flutter_json`]): one
//! JSON event a line. Tests are announced by `testStart` and finished by `testDone`; errors may
//! come after a test is done (it then failed); `hidden` tests (loading a file, `setUpAll`) are
//! not tests unless they fail. A stream without its final `done` event was cut short.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;

use super::{DETAILS_CAP, LINE_CAP, OUTPUT_CAP, ParseOptions, ParsedReport, ReportParser, read_line_capped};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "dart-json";

/// `dart test --reporter json`.
pub struct DartJson;

impl ReportParser for DartJson {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["dart"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        starts_like_the_protocol(head)
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        read(input, options, "dart test").map_err(|e| ParseError::new(self.format(), e.message).at_line(e.line))
    }
}

/// The first event of the protocol: `{"protocolVersion":"0.1.1",...,"type":"start",...}`.
pub(crate) fn starts_like_the_protocol(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let first = text.trim_start_matches('\u{feff}').lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    first.starts_with('{') && first.contains("\"protocolVersion\"") && first.contains("\"start\"")
}

/// Why a stream could not be read, and at which line.
pub(crate) struct ReadError {
    pub(crate) message: String,
    pub(crate) line: u64,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    time: Option<f64>,
    runner_version: Option<String>,
    suite: Option<SuiteInfo>,
    test: Option<TestInfo>,
    #[serde(rename = "testID")]
    test_id: Option<u64>,
    result: Option<String>,
    hidden: bool,
    skipped: bool,
    error: Option<String>,
    stack_trace: Option<String>,
    is_failure: bool,
    message_type: Option<String>,
    message: Option<String>,
    success: Option<bool>,
    count: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SuiteInfo {
    id: u64,
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct TestInfo {
    id: u64,
    name: String,
    #[serde(rename = "suiteID")]
    suite_id: Option<u64>,
    line: Option<u32>,
    url: Option<String>,
    root_line: Option<u32>,
    root_url: Option<String>,
    metadata: Option<Metadata>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Metadata {
    skip_reason: Option<String>,
}

/// One test as the events told it.
#[derive(Default)]
struct Test {
    info: TestInfo,
    start: Option<f64>,
    end: Option<f64>,
    result: Option<String>,
    hidden: bool,
    skipped: bool,
    /// `(error, stack trace, is a TestFailure)`, in order.
    errors: Vec<(String, String, bool)>,
    /// Errors that came after `testDone`: the test failed after all.
    late_error: bool,
    prints: String,
    skip_reason: Option<String>,
}

pub(crate) fn read(input: &mut dyn BufRead, options: &ParseOptions, tool: &str) -> Result<ParsedReport, ReadError> {
    let mut report = ParsedReport { tool: Some(tool.to_string()), ..ParsedReport::default() };
    let mut suites: HashMap<u64, String> = HashMap::new();
    let mut tests: Vec<Test> = Vec::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut done: Option<Option<bool>> = None;
    let mut suite_count = None;
    let mut not_json = 0usize;
    let mut line = String::new();
    let mut number = 0u64;
    // Unpaired surrogate escapes read as U+FFFD (`json_text`): Dart strings are UTF-16 too.
    let mut replaced = 0u64;
    loop {
        let (read, _) = read_line_capped(input, &mut line, LINE_CAP)
            .map_err(|e| ReadError { message: format!("cannot read: {e}"), line: number })?;
        if read == 0 {
            break;
        }
        number += 1;
        let text = if number == 1 { line.trim_start_matches('\u{feff}') } else { line.as_str() }.trim();
        if text.is_empty() {
            continue;
        }
        if !text.starts_with('{') {
            // flutter prints a few lines of its own around the events when stdout is captured.
            not_json += 1;
            continue;
        }
        let (text, fixed) = super::json_text::repair_str(text);
        replaced += fixed;
        let event: Event = match serde_json::from_str(&text) {
            Ok(event) => event,
            // The last line, without its end: the writer stopped mid-event.
            Err(_) if !line.ends_with('\n') => break,
            Err(e) => {
                return Err(ReadError { message: format!("invalid JSON event at line {number}: {e}"), line: number });
            }
        };
        match event.kind.as_str() {
            "start" => {
                if let Some(version) = event.runner_version {
                    report.tool = Some(format!("{tool} (test {version})"));
                }
            }
            "allSuites" => suite_count = event.count,
            "suite" => {
                if let Some(suite) = event.suite {
                    suites.insert(suite.id, suite.path.unwrap_or_default());
                }
            }
            "testStart" => {
                if let Some(info) = event.test {
                    let skip_reason = info.metadata.as_ref().and_then(|m| m.skip_reason.clone());
                    index.insert(info.id, tests.len());
                    tests.push(Test { info, start: event.time, skip_reason, ..Test::default() });
                }
            }
            "print" | "error" | "testDone" => {
                let Some(test) = event.test_id.and_then(|id| index.get(&id)).map(|&i| &mut tests[i]) else {
                    continue;
                };
                match event.kind.as_str() {
                    "print" => {
                        let message = event.message.unwrap_or_default();
                        if event.message_type.as_deref() == Some("skip") {
                            let reason = message.strip_prefix("Skip: ").unwrap_or(&message).trim().to_string();
                            test.skip_reason = Some(reason).filter(|r| !r.is_empty()).or(test.skip_reason.take());
                        } else if test.prints.len() <= DETAILS_CAP {
                            test.prints.push_str(&message);
                            test.prints.push('\n');
                        }
                    }
                    "error" => {
                        test.late_error |= test.result.is_some();
                        let error = event.error.unwrap_or_default();
                        test.errors.push((error, event.stack_trace.unwrap_or_default(), event.is_failure));
                    }
                    _ => {
                        test.result = Some(event.result.unwrap_or_default());
                        test.hidden = event.hidden;
                        test.skipped = event.skipped;
                        test.end = event.time;
                    }
                }
            }
            "done" => done = Some(event.success),
            // group, debug and event types added later: nothing a case needs.
            _ => {}
        }
    }
    for test in tests {
        if let Some(case) = test_case(test, &suites, options) {
            report.cases.push(case);
        }
    }
    if not_json > 0 {
        report.warnings.push(format!("{not_json} lines that are not JSON events were skipped"));
    }
    if let Some(count) = suite_count
        && (suites.len() as u64) < count
    {
        report.warnings.push(format!("the run announced {count} test files but reported {}", suites.len()));
    }
    match done {
        None => report.cut_short(
            "the events end before the runner's `done` event: the run was cut short, so results after \
             that point are unknown"
                .into(),
        ),
        Some(None) => {
            report.cut_short("the runner was closed before all tests completed (`done` without success)".into())
        }
        Some(Some(false)) if !report.cases.iter().any(|c| c.status.is_failure()) => report.cases.push(
            Case { name: crate::model::incomplete::TEST_RUN_CASE.into(), status: CaseStatus::Error, ..Case::default() }
                .with_message(Some("the runner reported failure, but no test failed".into())),
        ),
        Some(_) => {}
    }
    report.warnings.extend(super::json_text::replaced_warning(replaced));
    Ok(report)
}

/// The case a test's events make, or `None` for a hidden test that passed (loading a file,
/// `setUpAll`/`tearDownAll`: not tests).
fn test_case(test: Test, suites: &HashMap<u64, String>, options: &ParseOptions) -> Option<Case> {
    if test.hidden && test.errors.is_empty() && test.result.as_deref() == Some("success") {
        return None;
    }
    let suite = test.info.suite_id.and_then(|id| suites.get(&id)).filter(|p| !p.is_empty());
    let suite = suite.map(|p| options.relative_path(p.strip_prefix("file://").unwrap_or(p)));
    let url = test.info.root_url.as_deref().or(test.info.url.as_deref());
    let file = url
        .filter(|u| u.starts_with("file://"))
        .map(|u| options.relative_path(u.trim_start_matches("file://")))
        .or_else(|| suite.clone());
    let mut case = Case {
        name: if test.info.name.is_empty() { "(unnamed)".into() } else { test.info.name.clone().into() },
        classname: suite.map(Into::into),
        line: if file.is_some() { test.info.root_line.or(test.info.line) } else { None },
        file: file.map(Into::into),
        duration_ms: test.start.zip(test.end).map(|(s, e)| (e - s).max(0.0)),
        ..Case::default()
    };
    let any_failure = test.errors.iter().any(|(_, _, failure)| *failure);
    case.status = match test.result.as_deref() {
        None => {
            case.set_message(Some("the test never finished: the run ended first".into()));
            CaseStatus::Error
        }
        Some("success") if test.late_error => {
            if any_failure {
                CaseStatus::Failed
            } else {
                CaseStatus::Error
            }
        }
        Some("success") if test.skipped => {
            case.set_message(test.skip_reason.clone());
            CaseStatus::Skipped
        }
        Some("success") => CaseStatus::Passed,
        Some("failure") => CaseStatus::Failed,
        Some("error") => CaseStatus::Error,
        Some(other) => {
            case.set_message(Some(format!("unknown dart test result `{other}`")));
            CaseStatus::Error
        }
    };
    if case.status.is_failure() && !test.errors.is_empty() {
        let (error, _, _) = &test.errors[0];
        let message = failure_line(error, &test.prints).or_else(|| case.take_message());
        case.set_message(message);
        if let Some(file) = case.file.clone()
            && let Some(line) = test
                .errors
                .iter()
                .find_map(|(_, trace, _)| trace_line(trace, &file))
                // flutter_test prints the stack in its exception log instead.
                .or_else(|| trace_line(&test.prints, &file))
        {
            case.line = Some(line);
        }
        let all: Vec<String> =
            test.errors.iter().map(|(e, t, _)| format!("{}\n{}", e.trim_end(), t.trim_end())).collect();
        case.extra_mut().details =
            Some(crate::model::Text::capped(all.join("\n\n").trim(), DETAILS_CAP)).filter(|d| !d.is_empty());
    }
    if case.status != CaseStatus::Passed && !test.prints.trim().is_empty() {
        case.extra_mut().output = Some(crate::model::Text::capped(test.prints.trim_end(), OUTPUT_CAP));
    }
    Some(case)
}

/// The one-line message of a test's first error. flutter_test's error only points at the log
/// ("Test failed. See exception logs above."): the exception is in what the test printed, after
/// the `EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK` banner.
fn failure_line(error: &str, prints: &str) -> Option<String> {
    let first = |text: &str| text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
    if error.trim_start().starts_with("Test failed. See exception logs above.")
        && let Some(at) = prints.find("EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK")
    {
        let after = &prints[at..];
        let body = after.split_once('\n').map_or("", |(_, rest)| rest);
        if let Some(line) = first(body) {
            return Some(line);
        }
    }
    first(error)
}

/// The line of the first stack frame in `file`, in either trace format: the `test` package's
/// `test/calc_test.dart 13:9  main.<fn>` or the VM's `#0 main.<fn> (file:///.../test/calc_test.dart:13:9)`.
fn trace_line(trace: &str, file: &str) -> Option<u32> {
    trace.lines().find_map(|frame| {
        let frame = frame.trim();
        if let Some(inner) = frame.strip_suffix(')').and_then(|f| f.rsplit_once('(')).map(|(_, loc)| loc) {
            let mut parts = inner.rsplitn(3, ':');
            let (_column, line, path) = (parts.next()?, parts.next()?, parts.next()?);
            return path.ends_with(file).then(|| line.parse().ok()).flatten();
        }
        let (path, rest) = frame.split_once(char::is_whitespace)?;
        let path = path.replace('\\', "/");
        if !(path == file || path.ends_with(&format!("/{file}"))) {
            return None;
        }
        rest.trim_start().split(':').next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines_in_both_formats() {
        let dart = "package:matcher expect\ntest/calc_test.dart 13:9  main.<fn>.<fn>\n";
        assert_eq!(trace_line(dart, "test/calc_test.dart"), Some(13));
        let vm = "#0      main.<anonymous closure> (file:///w/app/test/widget_test.dart:21:7)\n#1      other";
        assert_eq!(trace_line(vm, "test/widget_test.dart"), Some(21));
        assert_eq!(trace_line("dart:isolate  _RawReceivePortImpl._handleMessage", "test/calc_test.dart"), None);
    }

    #[test]
    fn flutter_messages_come_from_the_exception_log() {
        let prints = "══╡ EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK ╞════\nThe following TestFailure was thrown:\nExpected: exactly one\n";
        assert_eq!(
            failure_line("Test failed. See exception logs above.\nThe test description was: x", prints).as_deref(),
            Some("The following TestFailure was thrown:")
        );
        assert_eq!(failure_line("Expected: <2>\n  Actual: <1>", "").as_deref(), Some("Expected: <2>"));
    }
}
