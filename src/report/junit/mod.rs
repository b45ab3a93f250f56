//! `junit.xml`: the run as JUnit XML in quick-junit's model, for CI test tabs and dashboards.
//!
//! One `<testsuite>` per suite with fcorr's policy, score and status as properties. A suite that
//! failed before or outside its tests gets a synthetic `<error>` case, so no consumer ever sees a
//! green, empty suite for a build that did not compile.
//!
//! [`build_report`] is the run in quick-junit's model (which sanitises every string); what fcorr
//! writes is [`stream`]'s rendering of the same report straight from the run, a case at a time
//! and without a copy of its strings (a 100,000-case run built as a quick-junit [`Report`] cost
//! ~80 MB and most of the writer's time). Tests hold the bytes equal to `build_report(run)`'s.

use std::borrow::Cow;
use std::io::Write;
use std::time::Duration;

use quick_junit::{
    FlakyOrRerun, NonSuccessKind, NonSuccessReruns, Property, Report, TestCase, TestCaseStatus, TestRerun, TestSuite,
};

use super::{ReportEnv, Reporter};
use crate::errors::RenderError;

mod stream;
use crate::model::{Attempt, Case, CaseStatus, PhaseStatus, Run, Suite, SuiteStatus};
use crate::text::cap_text;

/// Longest captured output kept per case and per suite in the XML.
const OUTPUT_CAP: usize = 16 * 1024;
/// Longest failure description kept per case.
const DETAILS_CAP: usize = 64 * 1024;

/// Classname of the synthetic case that stands for a suite-level failure.
pub const SUITE_ERROR_CLASSNAME: &str = "fcorr";

/// JUnit XML writer.
pub struct JunitXml;

impl Reporter for JunitXml {
    fn format(&self) -> super::Format {
        super::Format::Junit
    }

    fn file_name(&self) -> &'static str {
        "junit.xml"
    }

    fn queue_rank(&self) -> u8 {
        0
    }

    fn write(&self, run: &Run, _env: &ReportEnv, out: &mut dyn Write) -> Result<(), RenderError> {
        stream::write_report(run, out).map_err(|source| RenderError::Format { format: "JUnit XML", source })
    }
}

/// The whole quick-junit report for a run, in memory (the reference [`stream`] is checked against).
pub fn build_report(run: &Run) -> Report {
    let mut report = report_header(run);
    for suite in &run.suites {
        let mut ts = suite_header(suite);
        ts.add_test_cases(suite_cases(suite, suite.every_case()));
        report.add_test_suite(ts);
    }
    report
}

/// The report without suites.
fn report_header(run: &Run) -> Report {
    let mut report = Report::new("fcorr");
    report.set_time(ms(run.duration_ms as f64));
    report
}

fn ms(value: f64) -> Duration {
    Duration::from_secs_f64((value.max(0.0) / 1000.0).min(1e9))
}

/// A suite without its cases: name, time, properties and the phase logs.
fn suite_header(suite: &Suite) -> TestSuite {
    let mut ts = TestSuite::new(suite.name.as_str());
    ts.set_time(ms(suite.duration_ms as f64));
    let health = crate::score::health(std::slice::from_ref(suite), Some(suite.score.value));
    let mut props: Vec<Property> = vec![
        Property::new("fcorr.id", suite.id.as_str()),
        Property::new("fcorr.kind", kebab(&suite.kind)),
        Property::new("fcorr.status", kebab(&suite.status)),
        Property::new("fcorr.policy", suite.score.policy.label()),
        Property::new("fcorr.score", crate::report::filters::format_number(suite.score.value)),
        Property::new("fcorr.threshold", crate::report::filters::format_number(suite.score.threshold)),
        Property::new("fcorr.met", suite.score.met.to_string()),
        Property::new("fcorr.health", health.label()),
    ];
    if let Some(d) = &suite.detection {
        props.push(Property::new("fcorr.language", d.language.as_str()));
        props.push(Property::new("fcorr.framework", d.framework.as_str()));
    }
    if let Some(path) = &suite.path {
        props.push(Property::new("fcorr.path", path.as_str()));
    }
    ts.add_properties(props);
    let log = phase_logs(suite);
    if !log.is_empty() {
        ts.set_system_out(cap_text(&log, OUTPUT_CAP));
    }
    ts
}

/// The suite's cases (`every`: [`Suite::every_case`]) as quick-junit test cases, then the
/// synthetic error case when the suite needs one.
fn suite_cases<'a: 'b, 'b>(
    suite: &'a Suite,
    every: impl Iterator<Item = std::borrow::Cow<'a, crate::model::Case>> + 'b,
) -> impl Iterator<Item = TestCase> + 'b {
    let error_case = needs_suite_error(suite).then(|| suite_error_case(suite));
    every.map(move |case| test_case(suite, &case)).chain(error_case)
}

/// True when the suite's outcome is not explained by its failing cases: install/build failure,
/// timeout, no tests, harness error, or a failed status without any failing case.
pub fn needs_suite_error(suite: &Suite) -> bool {
    match suite.status {
        SuiteStatus::Passed => false,
        SuiteStatus::Failed => suite.error.is_some() || suite.failures().next().is_none(),
        _ => true,
    }
}

fn kebab<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn test_case(suite: &Suite, case: &Case) -> TestCase {
    let status = match case.status {
        CaseStatus::Passed => TestCaseStatus::success(),
        CaseStatus::Flaky => TestCaseStatus::Success { flaky_runs: reruns(&case.extra().attempts) },
        CaseStatus::Skipped => {
            let mut status = TestCaseStatus::skipped();
            if let Some(message) = case.message() {
                status.set_message(message);
            }
            status
        }
        CaseStatus::Failed | CaseStatus::Error | CaseStatus::Timeout => {
            let kind = if case.status == CaseStatus::Error { NonSuccessKind::Error } else { NonSuccessKind::Failure };
            let mut status = TestCaseStatus::NonSuccess {
                kind,
                message: None,
                ty: None,
                description: None,
                reruns: NonSuccessReruns { kind: FlakyOrRerun::Rerun, runs: reruns(&case.extra().attempts) },
            };
            if let Some(message) = failure_message(case) {
                status.set_message(message);
            }
            status.set_type(case.status.label());
            if let Some(details) = case.details().or(case.message().map(Cow::Borrowed)) {
                status.set_description(cap_text(&details, DETAILS_CAP));
            }
            status
        }
    };
    let mut tc = TestCase::new(case.name.as_str(), status);
    tc.set_classname(case.classname.as_deref().unwrap_or(suite.name.as_str()));
    if let Some(d) = case.duration_ms {
        tc.set_time(ms(d));
    }
    if let Some(file) = &case.file {
        tc.extra.insert("file".into(), (**file).into());
    }
    if let Some(line) = case.line {
        tc.extra.insert("line".into(), line.to_string().into());
    }
    if let Some(output) = case.output() {
        tc.set_system_out(cap_text(&output, OUTPUT_CAP));
    }
    tc
}

/// The message attribute: the case's message, else the first line of its details.
fn failure_message(case: &Case) -> Option<Cow<'_, str>> {
    if let Some(message) = case.message() {
        return Some(Cow::Borrowed(message));
    }
    match case.details()? {
        Cow::Borrowed(details) => details.lines().next().map(Cow::Borrowed),
        Cow::Owned(details) => details.lines().next().map(|line| Cow::Owned(line.to_string())),
    }
}

fn reruns(attempts: &[Attempt]) -> Vec<TestRerun> {
    attempts
        .iter()
        .filter(|a| a.status.is_failure())
        .map(|a| {
            let kind = if a.status == CaseStatus::Error { NonSuccessKind::Error } else { NonSuccessKind::Failure };
            let mut rerun = TestRerun::new(kind);
            if let Some(d) = a.duration_ms {
                rerun.set_time(ms(d));
            }
            if let Some(m) = &a.message {
                rerun.set_message(m.as_str());
            }
            rerun.set_type(a.status.label());
            if let Some(d) = &a.details {
                rerun.set_stack_trace(cap_text(d, DETAILS_CAP));
            }
            rerun
        })
        .collect()
}

/// What the synthetic error case of a suite says: why the suite could not be measured (or
/// failed outside its tests), with diagnostics and the failing phase's log as the description.
struct SuiteError {
    name: String,
    message: String,
    ty: String,
    description: Option<String>,
}

impl SuiteError {
    fn of(suite: &Suite) -> SuiteError {
        let message = match &suite.error {
            Some(e) => format!("{}: {}", suite.status.label(), e.message),
            None => match suite.status {
                SuiteStatus::NoTests => {
                    format!("no tests: {} (a suite that ran no test is never a pass)", suite.no_tests_reason())
                }
                SuiteStatus::Failed => "failed: the test command failed but no failing test was reported".into(),
                status => status.label().to_string(),
            },
        };
        let mut description = String::new();
        if let Some(hint) = suite.error.as_ref().and_then(|e| e.hint.as_ref()) {
            description.push_str(&format!("hint: {hint}\n"));
        }
        for d in &suite.diagnostics {
            let location = match (&d.file, d.line) {
                (Some(f), Some(l)) => format!("{f}:{l}: "),
                (Some(f), None) => format!("{f}: "),
                _ => String::new(),
            };
            description.push_str(&format!("{}{location}{}\n", kebab(&d.severity), d.message));
        }
        for phase in suite.phases.iter().filter(|p| !matches!(p.status, PhaseStatus::Passed | PhaseStatus::Skipped)) {
            description.push_str(&format!("\n$ {}\n{}\n", phase.command, phase.log_tail));
        }
        SuiteError {
            name: format!("{} ({})", suite.name, suite.status.label()),
            message,
            ty: kebab(&suite.status),
            description: (!description.is_empty()).then_some(description),
        }
    }
}

/// The suite's [`SuiteError`] as a quick-junit test case.
fn suite_error_case(suite: &Suite) -> TestCase {
    let error = SuiteError::of(suite);
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status.set_message(error.message);
    status.set_type(error.ty);
    if let Some(description) = &error.description {
        status.set_description(cap_text(description, DETAILS_CAP));
    }
    let mut tc = TestCase::new(error.name, status);
    tc.set_classname(SUITE_ERROR_CLASSNAME);
    tc
}

/// Every phase's command and log tail, for the suite's `<system-out>`.
fn phase_logs(suite: &Suite) -> String {
    let mut out = String::new();
    for phase in &suite.phases {
        if phase.log_tail.is_empty() {
            continue;
        }
        out.push_str(&format!("== {} ({}): $ {}\n", phase.kind.label(), kebab(&phase.status), phase.command));
        out.push_str(&phase.log_tail);
        if !phase.log_tail.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A suite that collected tests and skipped every one is not said to have "collected no
    /// tests": the error case says what the gate says.
    #[test]
    fn an_all_skipped_suite_is_described_as_the_gate_describes_it() {
        let mut suite = Suite::new("s", "s", crate::model::SuiteKind::Project);
        suite.cases = ["a", "b"]
            .iter()
            .map(|n| Case { name: (*n).into(), status: CaseStatus::Skipped, ..Case::default() })
            .collect();
        suite.finalize_cases();
        suite.status = SuiteStatus::NoTests;
        let message = SuiteError::of(&suite).message;
        assert_eq!(
            message,
            "no tests: every collected test was skipped (2) (a suite that ran no test is never a pass)"
        );
        suite.cases.clear();
        suite.finalize_cases();
        assert!(SuiteError::of(&suite).message.starts_with("no tests: the test tool collected no tests"));
    }

    /// The vendored strip-ansi-escapes' fast path (used by quick-junit for every string) must
    /// give exactly what the original vte path gives.
    #[test]
    fn patched_strip_matches_vte() {
        let fast = |s: &str| strip_ansi_escapes::strip_str(s);
        let slow = |s: &str| strip_ansi_escapes::strip_str_vte(s);
        for code in 0..=0xFFFFu32 {
            let Some(c) = char::from_u32(code) else { continue };
            for text in [c.to_string(), format!("a{c}b\n{c}{c}ü")] {
                assert_eq!(fast(&text), slow(&text), "U+{code:04X} in {text:?}");
            }
        }
        let samples = [
            "",
            "plain ASCII with a trailing newline\n",
            "tabs\tand\r\ncarriage returns\u{7f}",
            "\u{1b}[31mred\u{1b}[0m and \u{1b}]0;title\u{7}osc",
            "C1 \u{9b}31m csi and \u{85} next line, emoji 😀 €",
            "half an escape at the end \u{1b}[",
        ];
        for text in samples {
            assert_eq!(fast(text), slow(text), "{text:?}");
        }
        // The point of the patch: clean text comes back untouched.
        assert_eq!(fast("test_x[€100] -> <done> & ok\n"), "test_x[€100] -> <done> & ok\n");
    }
}
