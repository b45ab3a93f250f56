//! JUnit XML in its real-world dialects, read as a stream of quick-xml events.
//!
//! Only what the model needs is decoded: testcase attributes, failure/error/skipped messages and
//! text, and captured output of cases that did not pass. Nested `<testsuite>`s, missing counts and
//! missing attributes are tolerated; mismatched end tags are not fatal.
//!
//! [`NodeTestJunit`] reads the same XML in the dialect of `node --test --test-reporter=junit`: its
//! testcases all say `classname="test"`, so the nested `<testsuite>` names (the `describe` path) name
//! the case instead, and the failure message comes from the element text (the attribute is mangled).

use std::io::BufRead;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use super::{DETAILS_CAP, OUTPUT_CAP, ParseOptions, ParsedReport, ReportParser, cap_text};
use crate::model::{Attempt, Case, CaseStatus};

/// JUnit / xUnit XML.
pub struct Junit;

impl ReportParser for Junit {
    fn format(&self) -> &'static str {
        "junit"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["xml", "junit-xml", "xunit"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        text.contains("<testsuite") || text.contains("<testcase") || text.contains("<testsuites")
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, String> {
        parse(input, options)
    }
}

/// `node --test`'s JUnit reporter (chosen by name only: its output is ordinary JUnit on sight).
pub struct NodeTestJunit;

impl ReportParser for NodeTestJunit {
    fn format(&self) -> &'static str {
        "node-junit"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["node-test-junit"]
    }

    fn sniff(&self, _head: &[u8]) -> bool {
        false
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, String> {
        parse_dialect(input, options, Dialect::NodeTest)
    }
}

/// Whose JUnit flavour a file is written in.
#[derive(Clone, Copy, PartialEq)]
enum Dialect {
    Generic,
    /// Suites are `describe` blocks; `classname` is always `test`; no file attribute.
    NodeTest,
}

/// Which child of a testcase we are inside, if any.
#[derive(Clone, Copy, PartialEq)]
enum Inside {
    Nothing,
    Failure,
    Error,
    Skipped,
    Output,
    /// `<flakyFailure>`, `<rerunFailure>` and friends: an earlier attempt.
    Attempt,
}

struct Open {
    case: Case,
    inside: Inside,
    depth_in_child: u32,
    text: String,
    output: String,
    attempt: Option<Attempt>,
    /// The final status came from `<rerun*>` (still failing) or `<flaky*>` (passed on retry).
    passed_on_retry: bool,
    dialect: Dialect,
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, String> {
    parse_dialect(input, options, Dialect::Generic)
}

fn parse_dialect(input: &mut dyn BufRead, options: &ParseOptions, dialect: Dialect) -> Result<ParsedReport, String> {
    let mut reader = Reader::from_reader(input);
    let config = reader.config_mut();
    config.check_end_names = false;
    config.trim_text(false);
    config.expand_empty_elements = false;

    let mut report = ParsedReport::default();
    let mut suites: Vec<String> = Vec::new();
    let mut open: Option<Open> = None;
    let mut saw_root = false;
    let mut buf = Vec::with_capacity(64 * 1024);

    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| format!("invalid XML at byte {}: {e}", reader.error_position()))?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                let name = e.local_name();
                match name.as_ref() {
                    "testsuites" => saw_root = true,
                    "testsuite" => {
                        saw_root = true;
                        if !empty {
                            suites.push(attr(e, "name").unwrap_or_default());
                        }
                    }
                    "testcase" => {
                        saw_root = true;
                        if let Some(previous) = open.take() {
                            // A testcase opened inside another: an unclosed case; keep both.
                            report.cases.push(finish(previous));
                        }
                        let case = match dialect {
                            Dialect::Generic => start_case(e, suites.last().map(String::as_str), options),
                            Dialect::NodeTest => start_node_case(e, &suites),
                        };
                        if empty {
                            report.cases.push(case);
                        } else {
                            open = Some(Open {
                                case,
                                inside: Inside::Nothing,
                                depth_in_child: 0,
                                text: String::new(),
                                output: String::new(),
                                attempt: None,
                                passed_on_retry: false,
                                dialect,
                            });
                        }
                    }
                    other => {
                        if let Some(current) = open.as_mut() {
                            if current.inside != Inside::Nothing {
                                // Nested element inside a child (surefire's <stackTrace>): keep reading text.
                                if !empty {
                                    current.depth_in_child += 1;
                                }
                                continue;
                            }
                            child_start(current, other, e, empty);
                        }
                    }
                }
            }
            Event::End(ref e) => {
                let name = e.local_name();
                match name.as_ref() {
                    "testcase" => {
                        if let Some(current) = open.take() {
                            report.cases.push(finish(current));
                        }
                    }
                    "testsuite" => {
                        suites.pop();
                    }
                    _ => {
                        if let Some(current) = open.as_mut() {
                            if current.depth_in_child > 0 {
                                current.depth_in_child -= 1;
                            } else if current.inside != Inside::Nothing {
                                child_end(current);
                            }
                        }
                    }
                }
            }
            Event::Text(ref t) => {
                if let Some(current) = open.as_mut().filter(|c| c.inside != Inside::Nothing) {
                    push_text(current, &t.xml10_content());
                }
            }
            Event::CData(ref t) => {
                if let Some(current) = open.as_mut().filter(|c| c.inside != Inside::Nothing) {
                    push_text(current, t.as_ref());
                }
            }
            Event::GeneralRef(ref r) => {
                if let Some(current) = open.as_mut().filter(|c| c.inside != Inside::Nothing) {
                    let name = r.xml10_content();
                    if let Ok(Some(ch)) = r.resolve_char_ref() {
                        current.text.push(ch);
                    } else if let Some(resolved) = quick_xml::escape::resolve_predefined_entity(&name) {
                        current.text.push_str(resolved);
                    } else {
                        current.text.push('&');
                        current.text.push_str(&name);
                        current.text.push(';');
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if let Some(current) = open.take() {
        report.warnings.push(format!("the report ends inside testcase `{}`: it may be truncated", current.case.name));
        report.cases.push(finish(current));
    }
    if !saw_root {
        return Err("no <testsuites>, <testsuite> or <testcase> element: not a JUnit report".into());
    }
    Ok(report)
}

fn push_text(current: &mut Open, text: &str) {
    let target = if current.inside == Inside::Output { &mut current.output } else { &mut current.text };
    let cap = if current.inside == Inside::Output { OUTPUT_CAP } else { DETAILS_CAP };
    // Keep a little over the cap so cap_text can say that something was cut.
    if target.len() <= cap {
        target.push_str(text);
    }
}

fn start_case(e: &BytesStart<'_>, suite: Option<&str>, options: &ParseOptions) -> Case {
    let mut case = Case { status: CaseStatus::Passed, ..Case::default() };
    let mut file = None;
    for attribute in e.attributes().flatten() {
        let key = attribute.key.local_name();
        let wanted = matches!(
            key.as_ref(),
            "name" | "classname" | "class" | "file" | "filepath" | "line" | "lineno" | "time" | "status" | "result"
        );
        if !wanted {
            continue;
        }
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map(|v| v.into_owned())
            .unwrap_or_else(|_| attribute.value.to_string());
        match key.as_ref() {
            "name" => case.name = value,
            "classname" | "class" if case.classname.is_none() && !value.is_empty() => case.classname = Some(value),
            "file" | "filepath" => file = Some(value),
            "line" | "lineno" => case.line = value.trim().parse().ok(),
            "time" => case.duration_ms = parse_seconds(&value).map(|s| s * 1000.0),
            "status" | "result" => {
                let v = value.to_ascii_lowercase();
                if matches!(v.as_str(), "skipped" | "notrun" | "disabled" | "ignored") {
                    case.status = CaseStatus::Skipped;
                }
            }
            _ => {}
        }
    }
    if case.classname.is_none() {
        case.classname = suite.filter(|s| !s.is_empty()).map(str::to_string);
    }
    if file.is_none() {
        // vitest and mocha-junit-reporter put the test file in classname or the suite name.
        file = [case.classname.as_deref(), suite]
            .into_iter()
            .flatten()
            .find(|s| looks_like_source_path(s))
            .map(str::to_string);
    }
    case.file = file.filter(|f| !f.is_empty()).map(|f| options.relative_path(&f));
    if case.name.is_empty() {
        case.name = "(unnamed)".into();
    }
    case
}

/// A `node --test` case: named by its `describe` path, as node's own spec reporter nests it.
fn start_node_case(e: &BytesStart<'_>, suites: &[String]) -> Case {
    let mut case = Case { status: CaseStatus::Passed, ..Case::default() };
    let title = attr(e, "name").filter(|n| !n.is_empty()).unwrap_or_else(|| "(unnamed)".into());
    let path: Vec<&str> = suites.iter().map(String::as_str).filter(|s| !s.is_empty()).collect();
    case.classname = (!path.is_empty()).then(|| path.join(" > "));
    case.name = match &case.classname {
        Some(parents) => format!("{parents} > {title}"),
        None => title,
    };
    case.duration_ms = attr(e, "time").as_deref().and_then(parse_seconds).map(|s| s * 1000.0);
    case
}

fn looks_like_source_path(s: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx", ".py", ".go", ".rs", ".java", ".kt", ".php",
        ".rb",
    ];
    !s.contains(' ') && EXTENSIONS.iter().any(|ext| s.ends_with(ext))
}

fn parse_seconds(value: &str) -> Option<f64> {
    let cleaned: String = value.trim().chars().filter(|c| *c != ',').collect();
    cleaned.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0)
}

fn child_start(current: &mut Open, name: &str, e: &BytesStart<'_>, empty: bool) {
    let inside = match name {
        "failure" => Inside::Failure,
        "error" => Inside::Error,
        "skipped" => Inside::Skipped,
        "system-out" | "system-err" => Inside::Output,
        "flakyFailure" | "flakyError" | "rerunFailure" | "rerunError" => Inside::Attempt,
        _ => return,
    };
    let message = attr(e, "message");
    match inside {
        Inside::Failure | Inside::Error => {
            // A case can carry several <failure>s; the first decides, later ones add details.
            if !current.case.status.is_failure() {
                current.case.status = if inside == Inside::Failure { CaseStatus::Failed } else { CaseStatus::Error };
                current.case.message = message.filter(|m| !m.is_empty()).or_else(|| attr(e, "type"));
            }
        }
        Inside::Skipped => {
            if current.case.status == CaseStatus::Passed {
                current.case.status = CaseStatus::Skipped;
                current.case.message = message.filter(|m| !m.is_empty());
            }
        }
        Inside::Attempt => {
            let status = if name.starts_with("flaky") {
                current.passed_on_retry = true;
                if name.ends_with("Error") { CaseStatus::Error } else { CaseStatus::Failed }
            } else if name.ends_with("Error") {
                CaseStatus::Error
            } else {
                CaseStatus::Failed
            };
            current.attempt = Some(Attempt {
                status,
                duration_ms: attr(e, "time").as_deref().and_then(parse_seconds).map(|s| s * 1000.0),
                message: message.or_else(|| attr(e, "type")),
                details: None,
            });
        }
        Inside::Output | Inside::Nothing => {}
    }
    if empty {
        if inside == Inside::Attempt
            && let Some(attempt) = current.attempt.take()
        {
            current.case.attempts.push(attempt);
        }
    } else {
        current.inside = inside;
        current.text.clear();
    }
}

fn child_end(current: &mut Open) {
    let text = std::mem::take(&mut current.text);
    let text = text.trim();
    match current.inside {
        Inside::Failure | Inside::Error | Inside::Skipped => {
            if current.dialect == Dialect::NodeTest && current.inside != Inside::Skipped && !text.is_empty() {
                // Node flattens newlines out of the message attribute; the text's first line is clean.
                current.case.message = text
                    .lines()
                    .next()
                    .map(|l| l.trim().trim_start_matches("Error [ERR_TEST_FAILURE]:").trim().to_string());
            }
            if !text.is_empty() {
                if current.case.message.is_none() {
                    current.case.message = text.lines().next().map(|l| l.trim().to_string());
                }
                if current.inside != Inside::Skipped && current.case.details.is_none() {
                    current.case.details = Some(cap_text(text, DETAILS_CAP));
                }
            }
        }
        Inside::Attempt => {
            if let Some(mut attempt) = current.attempt.take() {
                if !text.is_empty() {
                    attempt.details = Some(cap_text(text, DETAILS_CAP));
                }
                current.case.attempts.push(attempt);
            }
        }
        Inside::Output => {
            if !current.output.is_empty() && !current.output.ends_with('\n') {
                current.output.push('\n');
            }
        }
        Inside::Nothing => {}
    }
    current.inside = Inside::Nothing;
}

fn finish(mut current: Open) -> Case {
    let case = &mut current.case;
    if !case.attempts.is_empty() {
        case.retries = case.attempts.len() as u32;
        if current.passed_on_retry && case.status == CaseStatus::Passed {
            case.status = CaseStatus::Flaky;
        }
    }
    if case.status != CaseStatus::Passed && !current.output.trim().is_empty() {
        case.output = Some(cap_text(current.output.trim_end(), OUTPUT_CAP));
    }
    current.case
}

fn attr(e: &BytesStart<'_>, key: &str) -> Option<String> {
    e.attributes().flatten().find(|a| a.key.local_name().as_ref() == key).map(|a| {
        a.normalized_value(XmlVersion::Implicit1_0).map(|v| v.into_owned()).unwrap_or_else(|_| a.value.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(xml: &str) -> Result<ParsedReport, String> {
        parse(&mut xml.as_bytes(), &ParseOptions { root: Some("/repo".into()) })
    }

    #[test]
    fn reads_statuses_messages_and_attributes() {
        let xml = r#"<?xml version="1.0"?>
<testsuites><testsuite name="pytest" tests="4">
  <testcase classname="tests.test_a" name="test_ok" file="/repo/tests/test_a.py" line="3" time="0.010"/>
  <testcase classname="tests.test_a" name="test_bad[x &amp; y]" time="1,200.5">
    <failure message="assert 1 == 2">def test_bad():
&gt;   assert 1 == 2</failure>
    <system-out><![CDATA[printed ünïcode]]></system-out>
  </testcase>
  <testcase classname="tests.test_a" name="test_skip"><skipped type="pytest.skip" message="not now">skip text</skipped></testcase>
  <testcase classname="tests.test_a" name="test_err"><error message="fixture broke"/></testcase>
</testsuite></testsuites>"#;
        let report = parse_str(xml).unwrap();
        let c = &report.cases;
        assert_eq!(c.len(), 4);
        assert_eq!(
            (c[0].status, c[0].file.as_deref(), c[0].line),
            (CaseStatus::Passed, Some("tests/test_a.py"), Some(3))
        );
        assert_eq!(c[1].name, "test_bad[x & y]");
        assert_eq!(c[1].status, CaseStatus::Failed);
        assert_eq!(c[1].message.as_deref(), Some("assert 1 == 2"));
        assert!(c[1].details.as_deref().unwrap().contains(">   assert 1 == 2"));
        assert_eq!(c[1].output.as_deref(), Some("printed ünïcode"));
        assert_eq!(c[1].duration_ms, Some(1_200_500.0));
        assert_eq!((c[2].status, c[2].message.as_deref()), (CaseStatus::Skipped, Some("not now")));
        assert_eq!(c[3].status, CaseStatus::Error);
    }

    #[test]
    fn surefire_flaky_and_rerun_attempts() {
        let xml = r#"<testsuite name="S"><testcase name="t1" classname="C">
<flakyFailure message="first try" type="AssertionError"><stackTrace>at C.t1</stackTrace></flakyFailure></testcase>
<testcase name="t2" classname="C"><failure message="still"/><rerunFailure message="again"/></testcase></testsuite>"#;
        let c = parse_str(xml).unwrap().cases;
        assert_eq!((c[0].status, c[0].retries), (CaseStatus::Flaky, 1));
        assert_eq!(c[0].attempts[0].details.as_deref(), Some("at C.t1"));
        assert_eq!((c[1].status, c[1].retries), (CaseStatus::Failed, 1));
    }

    #[test]
    fn nested_suites_give_classname_and_vitest_file() {
        let xml = r#"<testsuites><testsuite name="outer"><testsuite name="src/math.test.ts">
<testcase name="adds"/></testsuite></testsuite></testsuites>"#;
        let c = parse_str(xml).unwrap().cases;
        assert_eq!(c[0].classname.as_deref(), Some("src/math.test.ts"));
        assert_eq!(c[0].file.as_deref(), Some("src/math.test.ts"));
    }

    #[test]
    fn node_test_dialect_names_cases_by_describe_path() {
        // Shape of `node --test --test-reporter=junit` (Node 20), shortened.
        let xml = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites>
	<testsuite name="temperature" time="0.02" disabled="0" errors="0" tests="2" failures="1" skipped="1" hostname="vm">
		<testsuite name="toF" time="0.01" disabled="0" errors="0" tests="1" failures="0" skipped="0" hostname="vm">
			<testcase name="freezes" time="0.001570" classname="test"/>
		</testsuite>
		<testcase name="rounds" time="0.002" classname="test" failure="expected 37.8C+ actual - expected+ 37.7">
			<failure type="testCodeFailure" message="expected 37.8C+ actual - expected+ 37.7">
Error [ERR_TEST_FAILURE]: expected 37.8C
+ actual - expected
      at TestContext.&lt;anonymous> (/repo/test/t.test.js:23:14)
			</failure>
		</testcase>
		<testcase name="minus forty" time="0.0004" classname="test"><skipped type="skipped" message="flaky on purpose"/></testcase>
	</testsuite>
	<testcase name="top level" time="0.0003" classname="test"/>
	<!-- tests 4 -->
</testsuites>"#;
        let options = ParseOptions { root: Some("/repo".into()) };
        let c = NodeTestJunit.parse(&mut xml.as_bytes(), &options).unwrap().cases;
        let names: Vec<_> = c.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(
            names,
            [
                ("temperature > toF > freezes", CaseStatus::Passed),
                ("temperature > rounds", CaseStatus::Failed),
                ("temperature > minus forty", CaseStatus::Skipped),
                ("top level", CaseStatus::Passed),
            ]
        );
        assert_eq!(c[0].classname.as_deref(), Some("temperature > toF"));
        assert_eq!(c[3].classname, None);
        assert_eq!(c[1].message.as_deref(), Some("expected 37.8C"));
        assert!(c[1].details.as_deref().unwrap().contains("t.test.js:23:14"));
        assert_eq!(c[2].message.as_deref(), Some("flaky on purpose"));
        // The generic reader keeps node's meaningless classname; that is why the dialect exists.
        assert_eq!(parse_str(xml).unwrap().cases[0].classname.as_deref(), Some("test"));
    }

    #[test]
    fn broken_xml_is_an_error_not_a_panic() {
        assert!(parse_str("<testsuite><testcase name=\"a\" <<<").is_err());
        assert!(parse_str("<html><body/></html>").is_err());
    }

    #[test]
    fn truncated_report_keeps_cases_with_a_warning() {
        let report =
            parse_str("<testsuite><testcase name=\"a\"/><testcase name=\"b\"><failure message=\"x\">").unwrap();
        assert_eq!(report.cases.len(), 2);
        assert_eq!(report.warnings.len(), 1);
    }
}
