//! NUnit XML results, both shapes: NUnit 3's `<test-run>` (nunit3-console) and NUnit 2's
//! `<test-results>` (nunit-console 2.x), told apart by the root element, and a lone
//! `<test-suite>` of either shape (the NUnit3 test adapter's `NUnit.TestOutputXml`, one file per
//! assembly), told apart by its attributes. Results, labels and the mapping to fcorr's statuses
//! are tabled in `docs/import.md`.

use std::io::BufRead;

use quick_xml::events::BytesStart;

use super::dotnet::{self, Capture, DotnetReportError, Handler, attr, attrs, count_attr};
use super::{ParseOptions, ParsedReport, ReportParser};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "nunit";

/// NUnit 2 and NUnit 3 XML.
pub struct Nunit;

impl ReportParser for Nunit {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["nunit2", "nunit3", "nunit-xml"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        matches!(dotnet::root_element(head), Some("test-run" | "test-results" | "test-suite"))
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse(input, options).map_err(|e| ParseError::new(self.format(), e.to_string()))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Nunit2,
    Nunit3,
}

/// What the text being read belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    None,
    Message,
    StackTrace,
    Output,
}

/// A `<test-suite>` being read.
struct SuiteFrame {
    kind: String,
    name: Option<String>,
    fullname: Option<String>,
    /// Its own result says it failed (not only because of a child, NUnit 3's `site="Child"`).
    failing: bool,
    site: Option<String>,
    /// Failing cases in the report when the suite started.
    failures_before: usize,
    message: Option<String>,
    trace: Option<String>,
}

/// The `<test-case>` being read (the last case in the report).
struct OpenCase {
    /// What to put before the reason (`ignored`, `inconclusive`, `warning`...).
    prefix: Option<&'static str>,
    /// NUnit 2.4/2.5 wrote some cases with `executed="True"` and no result at all: they passed
    /// unless a `<failure>` follows.
    by_children: bool,
    failure_message: Option<String>,
    reason_message: Option<String>,
    trace: Option<String>,
    output: Option<String>,
}

struct Reader<'o> {
    options: &'o ParseOptions,
    shape: Option<Shape>,
    report: ParsedReport,
    read: usize,
    /// Failing cases in `report` so far (kept, not counted, so suites stay O(1)).
    failing: usize,
    declared_total: Option<u64>,
    /// NUnit 2's `not-run`: its `total` counts the tests that ran, in nunit-console's files.
    declared_not_run: u64,
    declared_failing: u64,
    suites: Vec<SuiteFrame>,
    case: Option<OpenCase>,
    /// Inside `<failure>` (true) or `<reason>` (false) of the open case or suite.
    in_failure: Option<bool>,
    /// Inside `<assertions>`: repeats the failure; not read.
    in_assertions: bool,
    field: Field,
    capture: Capture,
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, DotnetReportError> {
    let mut reader = Reader {
        options,
        shape: None,
        report: ParsedReport::default(),
        read: 0,
        failing: 0,
        declared_total: None,
        declared_not_run: 0,
        declared_failing: 0,
        suites: Vec::new(),
        case: None,
        in_failure: None,
        in_assertions: false,
        field: Field::None,
        capture: Capture::default(),
    };
    let dotnet::Driven { cut, root } = dotnet::drive(input, &mut reader)?;
    if cut.is_some() {
        // Keep the case being read (its result is in its start tag); open suites say nothing more.
        if let (Some(open), Some(case)) = (&reader.case, reader.report.cases.last_mut())
            && open.by_children
            && case.status == CaseStatus::Passed
        {
            // Its result was to come from what the file no longer holds.
            case.status = CaseStatus::Error;
            case.set_message(Some("the report ends inside this test-case: its result is unknown".into()));
        }
        reader.finish_case();
    }
    let Reader { mut report, shape, read, declared_total, declared_not_run, declared_failing, .. } = reader;
    if shape.is_none() {
        return Err(DotnetReportError::NoRoot {
            root: "test-run>, <test-results> or <test-suite",
            what: "an NUnit",
            format: NAME,
            found: root,
        });
    }
    let declared_total = nunit2_total(&mut report, shape, declared_total, declared_not_run, read);
    dotnet::check_declared(
        &mut report,
        declared_total,
        read,
        Some((declared_failing, format!("{declared_failing} failed tests"))),
        None,
    );
    dotnet::cut_short(&mut report, cut);
    Ok(report)
}

impl Handler for Reader<'_> {
    fn cases_read(&self) -> usize {
        // The one being read when the document stopped is not finished.
        self.read - usize::from(self.case.is_some())
    }

    fn start(&mut self, name: &str, e: &BytesStart<'_>) {
        match name {
            "test-run" if self.shape.is_none() => {
                self.shape = Some(Shape::Nunit3);
                self.report.tool = Some(match attr(e, "engine-version") {
                    Some(version) => format!("NUnit {version}"),
                    None => "NUnit 3".into(),
                });
                // `testcasecount` counts every case found, `total` those in the run (filters).
                self.declared_total = count_attr(e, "total").or_else(|| count_attr(e, "testcasecount"));
                self.declared_failing = count_attr(e, "failed").unwrap_or(0);
            }
            "test-results" if self.shape.is_none() => {
                self.shape = Some(Shape::Nunit2);
                self.report.tool = Some("NUnit 2".into());
                // nunit-console 2's `total` counts the tests that ran; `not-run` the ignored,
                // skipped and invalid ones, which are cases in the file too (see `nunit2_total`).
                self.declared_total = count_attr(e, "total");
                self.declared_not_run = count_attr(e, "not-run").unwrap_or(0);
                self.declared_failing = count_attr(e, "errors").unwrap_or(0) + count_attr(e, "failures").unwrap_or(0);
            }
            "test-suite" => {
                if self.shape.is_none() {
                    self.root_suite(e);
                }
                let result = attr(e, "result").unwrap_or_default();
                let site = attr(e, "site");
                let failing = match self.shape {
                    // `site="Child"`: a child failed; `"Parent"`: its parent did (a one-time setup),
                    // which is reported there. Only a suite's own failure is its own.
                    Some(Shape::Nunit3) => result == "Failed" && !matches!(site.as_deref(), Some("Child" | "Parent")),
                    _ => matches!(result.as_str(), "Failure" | "Error"),
                };
                self.suites.push(SuiteFrame {
                    kind: attr(e, "type").unwrap_or_default(),
                    name: attr(e, "name"),
                    fullname: attr(e, "fullname"),
                    failing,
                    site,
                    failures_before: self.failures(),
                    message: None,
                    trace: None,
                });
            }
            "test-case" => self.start_case(e),
            "assertions" => self.in_assertions = true,
            _ if self.in_assertions => {}
            "failure" => {
                self.in_failure = Some(true);
                self.failure_decides();
            }
            "reason" => self.in_failure = Some(false),
            "message" if self.in_failure.is_some() => self.begin(Field::Message, true),
            "stack-trace" if self.in_failure.is_some() => self.begin(Field::StackTrace, true),
            "output" if self.case.is_some() => self.begin(Field::Output, false),
            _ => {}
        }
    }

    fn end(&mut self, name: &str) {
        match name {
            "test-case" => self.finish_case(),
            "test-suite" => self.finish_suite(),
            "assertions" => self.in_assertions = false,
            _ if self.in_assertions => {}
            "failure" | "reason" => self.in_failure = None,
            "message" | "stack-trace" | "output" => self.end_field(),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        // Kept only between a field's start and end.
        self.capture.push(text);
    }
}

impl Reader<'_> {
    fn failures(&self) -> usize {
        self.failing
    }

    /// A lone `<test-suite>` at the root: its attributes tell NUnit 2's shape (`executed`,
    /// `success`, results such as `Success`) from NUnit 3's (`Passed`, `Failed`, counts).
    fn root_suite(&mut self, e: &BytesStart<'_>) {
        let [result, executed, success] = attrs(e, ["result", "executed", "success"]);
        let nunit2 = executed.is_some()
            || success.is_some()
            || matches!(result.as_deref(), Some("Success" | "Failure" | "Error" | "Ignored" | "NotRunnable"));
        if nunit2 {
            self.shape = Some(Shape::Nunit2);
            self.report.tool = Some("NUnit 2".into());
        } else {
            self.shape = Some(Shape::Nunit3);
            self.report.tool = Some("NUnit 3".into());
            self.declared_total = count_attr(e, "total").or_else(|| count_attr(e, "testcasecount"));
            self.declared_failing = count_attr(e, "failed").unwrap_or(0);
        }
    }

    /// A `<failure>` in a case whose result was left to its children fails it.
    fn failure_decides(&mut self) {
        if let (Some(open), Some(case)) = (self.case.as_mut(), self.report.cases.last_mut())
            && open.by_children
            && case.status == CaseStatus::Passed
        {
            open.by_children = false;
            case.status = CaseStatus::Failed;
            self.failing += 1;
        }
    }

    fn begin(&mut self, field: Field, details: bool) {
        self.field = field;
        self.capture.begin(details);
    }

    fn end_field(&mut self) {
        let field = std::mem::replace(&mut self.field, Field::None);
        if field == Field::None {
            return;
        }
        let text = self.capture.take();
        let in_failure = self.in_failure == Some(true);
        if let Some(case) = self.case.as_mut() {
            match field {
                Field::Message if in_failure => case.failure_message = text,
                Field::Message => case.reason_message = text,
                Field::StackTrace => case.trace = text,
                Field::Output => case.output = text,
                Field::None => {}
            }
        } else if let Some(suite) = self.suites.last_mut() {
            match field {
                Field::Message => suite.message = suite.message.take().or(text),
                Field::StackTrace => suite.trace = text,
                _ => {}
            }
        }
    }

    /// Class name of a case: the innermost fixture's full name (NUnit 3), or the dotted path of
    /// namespaces and the fixture (NUnit 2, whose suites carry short names only).
    fn fixture_classname(&self) -> Option<String> {
        if self.shape == Some(Shape::Nunit3) {
            return self
                .suites
                .iter()
                .rev()
                .find(|s| matches!(s.kind.as_str(), "TestFixture" | "GenericFixture"))
                .and_then(|s| s.fullname.clone().or_else(|| s.name.clone()));
        }
        let parts: Vec<&str> = self
            .suites
            .iter()
            .filter(|s| matches!(s.kind.as_str(), "Namespace" | "TestFixture" | "GenericFixture"))
            .filter_map(|s| s.name.as_deref())
            .collect();
        (!parts.is_empty()).then(|| parts.join("."))
    }

    fn start_case(&mut self, e: &BytesStart<'_>) {
        if self.case.is_some() {
            // A test-case inside a test-case is not NUnit's shape; finish the first one.
            self.finish_case();
        }
        self.read += 1;
        let [full, result, classname, duration, label, time, executed, success] =
            attrs(e, ["name", "result", "classname", "duration", "label", "time", "executed", "success"]);
        let full = full.unwrap_or_else(|| "(unnamed)".into());
        let (classname, name, duration_ms, (status, prefix)) = match self.shape {
            Some(Shape::Nunit3) => {
                let classname = classname.or_else(|| self.fixture_classname());
                let duration = duration.as_deref().and_then(dotnet::seconds_to_ms);
                (classname, full, duration, nunit3_status(result.as_deref(), label.as_deref()))
            }
            _ => {
                let classname = self.fixture_classname();
                let name = dotnet::short_name(&full, classname.as_deref());
                let duration = time.as_deref().and_then(dotnet::seconds_to_ms);
                let status = nunit2_status(result.as_deref(), executed.as_deref(), success.as_deref());
                (classname, name, duration, status)
            }
        };
        let by_children = self.shape == Some(Shape::Nunit2)
            && result.is_none()
            && success.is_none()
            && executed.as_deref().is_some_and(|e| e.eq_ignore_ascii_case("true"));
        self.failing += usize::from(status.is_failure());
        self.report.cases.push(Case {
            name: name.into(),
            classname: classname.map(Into::into),
            status,
            duration_ms,
            ..Case::default()
        });
        self.case = Some(OpenCase {
            prefix,
            by_children,
            failure_message: None,
            reason_message: None,
            trace: None,
            output: None,
        });
    }

    fn finish_case(&mut self) {
        self.end_field();
        self.in_failure = None;
        self.in_assertions = false;
        let (Some(open), Some(case)) = (self.case.take(), self.report.cases.last_mut()) else {
            return;
        };
        let message = open.failure_message.or(open.reason_message);
        let message = dotnet::prefixed(open.prefix.map(str::to_string), message);
        if case.status == CaseStatus::Passed {
            // A pass with a note (NUnit 3's Warning): the message only.
            case.set_message(message.as_deref().and_then(dotnet::first_line));
        } else {
            dotnet::set_failure(case, message, open.trace, self.options);
            case.extra_mut().output = open.output.map(Into::into);
        }
    }

    /// A fixture whose one-time setup or teardown failed, with no failing case under it, still
    /// failed: it becomes an `error` case so the run cannot pass.
    fn finish_suite(&mut self) {
        self.end_field();
        self.in_failure = None;
        let Some(suite) = self.suites.pop() else {
            return;
        };
        if !suite.failing || self.failures() > suite.failures_before {
            return;
        }
        let what = match suite.site.as_deref() {
            Some("SetUp") => "[one-time setup]",
            Some("TearDown") => "[one-time teardown]",
            _ => "[suite]",
        };
        let classname = suite.fullname.or(suite.name).or_else(|| Some(suite.kind.clone()));
        let mut case = Case {
            name: what.into(),
            classname: classname.map(Into::into),
            status: CaseStatus::Error,
            ..Case::default()
        };
        let message = suite.message.or_else(|| Some(format!("the {} failed with no failing test", suite.kind)));
        dotnet::set_failure(&mut case, message, suite.trace, self.options);
        self.failing += 1;
        self.report.cases.push(case);
    }
}

/// The total an NUnit 2 file declares. nunit-console 2 counts the tests that ran in `total` and the
/// others in `not-run`; other writers of the shape count them all in `total`. Whichever reading
/// the cases read agree with is the file's; when neither does, the warning says both numbers as
/// the file wrote them (and nothing is left for [`dotnet::check_declared`] to compare).
fn nunit2_total(
    report: &mut ParsedReport,
    shape: Option<Shape>,
    total: Option<u64>,
    not_run: u64,
    read: usize,
) -> Option<u64> {
    let (Some(Shape::Nunit2), Some(total)) = (shape, total) else {
        return total;
    };
    if not_run == 0 {
        return Some(total);
    }
    let read = read as u64;
    if read == total + not_run || read == total {
        return Some(read);
    }
    let how = if read < total { "fewer" } else { "more" };
    report.warnings.push(format!(
        "the report declares total={total} and not-run={not_run} but {read} test results were read \
         ({how} than declared)"
    ));
    None
}

/// NUnit 3 `result` + `label` to a status, and what to put before the reason.
fn nunit3_status(result: Option<&str>, label: Option<&str>) -> (CaseStatus, Option<&'static str>) {
    match (result.unwrap_or(""), label.unwrap_or("")) {
        ("Passed", _) => (CaseStatus::Passed, None),
        ("Failed", "Error") => (CaseStatus::Error, None),
        ("Failed", "Invalid") => (CaseStatus::Error, Some("invalid")),
        ("Failed", "Cancelled") => (CaseStatus::Error, Some("cancelled")),
        ("Failed", _) => (CaseStatus::Failed, None),
        ("Skipped", "Ignored") => (CaseStatus::Skipped, Some("ignored")),
        ("Skipped", "Explicit") => (CaseStatus::Skipped, Some("explicit")),
        ("Skipped", _) => (CaseStatus::Skipped, None),
        ("Inconclusive", _) => (CaseStatus::Skipped, Some("inconclusive")),
        ("Warning", _) => (CaseStatus::Passed, Some("warning")),
        // Unknown or missing: not a pass.
        _ => (CaseStatus::Error, Some("unknown NUnit result")),
    }
}

/// NUnit 2 `result` (2.5+) or `executed`/`success` (2.4) to a status and a reason prefix.
fn nunit2_status(
    result: Option<&str>,
    executed: Option<&str>,
    success: Option<&str>,
) -> (CaseStatus, Option<&'static str>) {
    match result {
        Some("Success") => (CaseStatus::Passed, None),
        Some("Failure") => (CaseStatus::Failed, None),
        Some("Error") => (CaseStatus::Error, None),
        Some("Ignored") => (CaseStatus::Skipped, Some("ignored")),
        Some("Skipped") => (CaseStatus::Skipped, None),
        Some("Inconclusive") => (CaseStatus::Skipped, Some("inconclusive")),
        // NUnit 3 reports these tests as Failed/Invalid: a test that cannot run is broken.
        Some("NotRunnable") => (CaseStatus::Error, Some("not runnable")),
        Some("Cancelled") => (CaseStatus::Error, Some("cancelled")),
        Some(_) => (CaseStatus::Error, Some("unknown NUnit result")),
        None => {
            match (executed.map(str::to_ascii_lowercase).as_deref(), success.map(str::to_ascii_lowercase).as_deref()) {
                (Some("false"), _) => (CaseStatus::Skipped, Some("not run")),
                (_, Some("true")) => (CaseStatus::Passed, None),
                (_, Some("false")) => (CaseStatus::Failed, None),
                // Ran, and said nothing more: a `<failure>` child, if any, fails it.
                (Some("true"), None) => (CaseStatus::Passed, None),
                _ => (CaseStatus::Error, Some("no result in the report")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(xml: &str) -> Result<ParsedReport, ParseError> {
        Nunit.parse(&mut xml.as_bytes(), &ParseOptions::default())
    }

    #[test]
    fn cut_short_is_an_error_and_unknown_results_are_not_passes() {
        let report = parse_str(
            "<test-run total=\"2\"><test-suite type=\"TestFixture\"><test-case name=\"a\" result=\"Passed\"/>",
        )
        .unwrap();
        let statuses: Vec<_> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(statuses, [("a", CaseStatus::Passed), (super::super::CUT_SHORT_CASE, CaseStatus::Error)]);
        let error = &report.errors[0];
        assert!(error.contains("cut short") && error.contains("<test-suite>"), "{error}");
        assert!(
            error.ends_with("the report declares 2 tests but 1 test results were read (fewer than declared)"),
            "{error}"
        );
        let report = parse_str("<test-run><test-case name=\"a\" result=\"Odd\"/></test-run>").unwrap();
        assert_eq!(report.cases[0].status, CaseStatus::Error);
        assert!(parse_str("<foo/>").unwrap_err().to_string().contains("not an NUnit report"));
    }

    /// The table in docs/import.md.
    #[test]
    fn results_map_as_documented() {
        use CaseStatus::*;
        let nunit3 = [
            (("Passed", ""), (Passed, None)),
            (("Failed", ""), (Failed, None)),
            (("Failed", "Error"), (Error, None)),
            (("Failed", "Invalid"), (Error, Some("invalid"))),
            (("Failed", "Cancelled"), (Error, Some("cancelled"))),
            (("Skipped", "Ignored"), (Skipped, Some("ignored"))),
            (("Skipped", "Explicit"), (Skipped, Some("explicit"))),
            (("Skipped", ""), (Skipped, None)),
            (("Inconclusive", ""), (Skipped, Some("inconclusive"))),
            (("Warning", ""), (Passed, Some("warning"))),
            (("", ""), (Error, Some("unknown NUnit result"))),
        ];
        for ((result, label), want) in nunit3 {
            let got = nunit3_status(Some(result).filter(|r| !r.is_empty()), Some(label).filter(|l| !l.is_empty()));
            assert_eq!(got, want, "{result}/{label}");
        }
        let nunit2 = [
            ("Success", Passed),
            ("Failure", Failed),
            ("Error", Error),
            ("Ignored", Skipped),
            ("Skipped", Skipped),
            ("Inconclusive", Skipped),
            ("NotRunnable", Error),
            ("Cancelled", Error),
        ];
        for (result, want) in nunit2 {
            assert_eq!(nunit2_status(Some(result), None, None).0, want, "{result}");
        }
        // NUnit 2.4: no result=, only executed= and success=.
        assert_eq!(nunit2_status(None, Some("False"), None).0, Skipped);
        assert_eq!(nunit2_status(None, Some("True"), Some("True")).0, Passed);
        assert_eq!(nunit2_status(None, Some("True"), Some("False")).0, Failed);
        assert_eq!(nunit2_status(None, None, None).0, Error);
    }

    #[test]
    fn a_failed_teardown_with_passing_cases_is_an_error_case() {
        let xml = r#"<test-run total="1" failed="0"><test-suite type="TestFixture" fullname="N.F" result="Failed" site="TearDown">
            <failure><message><![CDATA[TearDown : boom]]></message></failure>
            <test-case name="a" result="Passed"/></test-suite></test-run>"#;
        let report = parse_str(xml).unwrap();
        let statuses: Vec<_> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(statuses, [("a", CaseStatus::Passed), ("[one-time teardown]", CaseStatus::Error)]);
        assert_eq!(report.cases[1].message(), Some("TearDown : boom"));
    }
}
