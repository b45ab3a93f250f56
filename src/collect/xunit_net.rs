//! xUnit.net v2 XML (`dotnet test --logger xunit`, `xunit.console -xml`): `<assemblies>` of
//! `<assembly>`s of `<collection>`s of `<test>`s, plus `<errors>` for failures outside any test
//! (class or collection cleanup, a fatal runner error), which become `error` cases. xUnit.net v1's
//! single `<assembly>` of `<class>`es of `<test>`s reads the same way.

use std::io::BufRead;

use quick_xml::events::BytesStart;

use super::dotnet::{self, Capture, DotnetReportError, Handler, attr, attrs, count_attr};
use super::{ParseOptions, ParsedReport, ReportParser};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "xunit-net";

/// xUnit.net v2 XML.
pub struct XunitNet;

impl ReportParser for XunitNet {
    fn format(&self) -> &'static str {
        NAME
    }

    // `xunit` stays JUnit's alias (pytest's `xunit1`/`xunit2` families are JUnit XML).
    fn aliases(&self) -> &'static [&'static str] {
        &["xunit2", "xunit-v2", "xunitnet"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        // A lone `<assembly>` root is how xUnit.net v1 (`<class>`es of `<test>`s) and older v2
        // runners wrote a single assembly.
        matches!(dotnet::root_element(head), Some("assemblies" | "assembly"))
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse(input, options).map_err(|e| ParseError::new(self.format(), e.to_string()))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Field {
    None,
    Message,
    StackTrace,
    Reason,
    Output,
}

/// A `<test>` or an `<error>` being read (the last case in the report).
struct Open {
    /// A `<test>` (counted in `read`), not an `<error>`.
    test: bool,
    exception_type: Option<String>,
    message: Option<String>,
    trace: Option<String>,
    reason: Option<String>,
    output: Option<String>,
}

struct Reader<'o> {
    options: &'o ParseOptions,
    saw_root: bool,
    report: ParsedReport,
    read: usize,
    declared_total: Option<u64>,
    declared_failing: u64,
    open: Option<Open>,
    field: Field,
    capture: Capture,
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, DotnetReportError> {
    let mut reader = Reader {
        options,
        saw_root: false,
        report: ParsedReport::default(),
        read: 0,
        declared_total: None,
        declared_failing: 0,
        open: None,
        field: Field::None,
        capture: Capture::default(),
    };
    let dotnet::Driven { cut, root } = dotnet::drive(input, &mut reader)?;
    if cut.is_some() {
        // Keep the test being read: its result is in its start tag.
        reader.finish();
    }
    let Reader { mut report, saw_root, read, declared_total, declared_failing, .. } = reader;
    if !saw_root {
        return Err(DotnetReportError::NoRoot { root: "assembly", what: "an xUnit.net", format: NAME, found: root });
    }
    let what = format!("{declared_failing} failed tests and errors");
    dotnet::check_declared(&mut report, declared_total, read, Some((declared_failing, what)), None);
    dotnet::cut_short(&mut report, cut);
    Ok(report)
}

impl Handler for Reader<'_> {
    fn cases_read(&self) -> usize {
        // The one being read when the document stopped is not finished.
        self.read - usize::from(self.open.as_ref().is_some_and(|o| o.test))
    }

    fn start(&mut self, name: &str, e: &BytesStart<'_>) {
        match name {
            "assembly" => {
                self.saw_root = true;
                if self.report.tool.is_none() {
                    self.report.tool = attr(e, "test-framework");
                }
                // Counts add up over assemblies; a missing `total` leaves nothing to compare.
                if let Some(total) = count_attr(e, "total") {
                    *self.declared_total.get_or_insert(0) += total;
                }
                self.declared_failing += count_attr(e, "failed").unwrap_or(0) + count_attr(e, "errors").unwrap_or(0);
            }
            "test" => self.start_test(e),
            "error" => self.start_error(e),
            "failure" => {
                if let Some(open) = self.open.as_mut() {
                    open.exception_type = attr(e, "exception-type");
                }
            }
            "message" => self.begin(Field::Message, true),
            "stack-trace" => self.begin(Field::StackTrace, true),
            "reason" => self.begin(Field::Reason, true),
            "output" => self.begin(Field::Output, false),
            "trait" => {
                if let (Some(_), Some(case), Some(key)) = (&self.open, self.report.cases.last_mut(), attr(e, "name")) {
                    case.extra_mut().eval_mut().tags.insert(key, attr(e, "value").unwrap_or_default());
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &str) {
        match name {
            "test" | "error" => self.finish(),
            "message" | "stack-trace" | "reason" | "output" => self.end_field(),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        // Kept only between a field's start and end.
        self.capture.push(text);
    }
}

impl Reader<'_> {
    fn begin(&mut self, field: Field, details: bool) {
        if self.open.is_some() {
            self.field = field;
            self.capture.begin(details);
        }
    }

    fn end_field(&mut self) {
        let field = std::mem::replace(&mut self.field, Field::None);
        let text = self.capture.take();
        if let Some(open) = self.open.as_mut() {
            match field {
                Field::Message => open.message = text,
                Field::StackTrace => open.trace = text,
                Field::Reason => open.reason = text,
                Field::Output => open.output = text,
                Field::None => {}
            }
        }
    }

    fn open_case(&mut self, case: Case, test: bool) {
        if self.open.is_some() {
            self.finish();
        }
        self.report.cases.push(case);
        self.open = Some(Open { test, exception_type: None, message: None, trace: None, reason: None, output: None });
    }

    fn start_test(&mut self, e: &BytesStart<'_>) {
        self.read += 1;
        let [classname, full, result, time, source_file, source_line] =
            attrs(e, ["type", "name", "result", "time", "source-file", "source-line"]);
        let full = full.unwrap_or_else(|| "(unnamed)".into());
        let status = match result.as_deref() {
            Some("Pass") => CaseStatus::Passed,
            Some("Fail") => CaseStatus::Failed,
            Some("Skip" | "NotRun") => CaseStatus::Skipped,
            // Missing or unknown: not a pass.
            _ => CaseStatus::Error,
        };
        let case = Case {
            name: dotnet::short_name(&full, classname.as_deref()).into(),
            classname: classname.map(Into::into),
            status,
            duration_ms: time.as_deref().and_then(dotnet::seconds_to_ms),
            file: source_file.map(|f| self.options.relative_path(&f)).map(Into::into),
            line: source_line.and_then(|l| l.trim().parse().ok()),
            // Said here so the reason for an odd result is not lost.
            ..Case::default()
        }
        .with_message(match (status, result) {
            (CaseStatus::Error, Some(other)) => Some(format!("unknown xUnit.net result `{other}`")),
            (CaseStatus::Error, None) => Some("no result in the report".into()),
            (_, Some(not_run)) if not_run == "NotRun" => Some("not run".into()),
            _ => None,
        });
        self.open_case(case, true);
    }

    /// `<error type="test-class-cleanup" name="Ns.Class">`: a failure outside any test.
    fn start_error(&mut self, e: &BytesStart<'_>) {
        let kind = attr(e, "type").unwrap_or_else(|| "error".into());
        let case = Case {
            name: format!("[{kind}]").into(),
            classname: attr(e, "name").map(Into::into),
            status: CaseStatus::Error,
            ..Case::default()
        };
        self.open_case(case, false);
    }

    fn finish(&mut self) {
        if self.field != Field::None {
            self.end_field();
        }
        let (Some(open), Some(case)) = (self.open.take(), self.report.cases.last_mut()) else {
            return;
        };
        match case.status {
            CaseStatus::Passed => {}
            CaseStatus::Skipped => {
                // v2 writes `<reason>text</reason>`, v1 `<reason><message>text</message></reason>`.
                let reason = open.reason.or(open.message);
                let reason = reason.as_deref().and_then(dotnet::first_line);
                let message = dotnet::prefixed(case.take_message(), reason);
                case.set_message(message);
            }
            _ => {
                let message = match (open.message, &open.exception_type) {
                    (Some(m), _) => Some(m),
                    (None, Some(t)) => Some(t.clone()),
                    (None, None) => None,
                };
                dotnet::set_failure(case, message, open.trace, self.options);
                case.extra_mut().output = open.output.map(Into::into);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(xml: &str) -> Result<ParsedReport, ParseError> {
        XunitNet.parse(&mut xml.as_bytes(), &ParseOptions::default())
    }

    #[test]
    fn errors_outside_tests_are_error_cases_and_cut_files_are_errors() {
        let xml = r#"<assemblies><assembly total="1" failed="0" errors="1"><errors><error type="test-class-cleanup" name="N.C">
            <failure exception-type="System.Exception"><message>boom</message></failure></error></errors>
            <collection><test name="N.C.T" type="N.C" method="T" result="Pass" time="0.1"/></collection></assembly></assemblies>"#;
        let report = parse_str(xml).unwrap();
        let got: Vec<_> = report.cases.iter().map(|c| (c.name.as_str(), c.status, c.message())).collect();
        assert_eq!(got, [("[test-class-cleanup]", CaseStatus::Error, Some("boom")), ("T", CaseStatus::Passed, None)]);
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let cut = parse_str(&xml[..xml.find("</assembly>").unwrap()]).unwrap();
        assert!(cut.errors[0].contains("cut short"), "{:?}", cut.errors);
        assert_eq!(
            cut.cases.last().map(|c| (c.name.as_str(), c.status)),
            Some((super::super::CUT_SHORT_CASE, CaseStatus::Error))
        );
    }
}
