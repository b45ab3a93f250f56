//! quick-junit's serializer, ported to write a report one test case at a time.
//!
//! quick-junit 0.8 serialises only a whole [`Report`]; its per-element functions are private.
//! This is the same sequence of quick-xml events (same tags, attribute order, indentation and
//! escaping) over the same quick-junit types, fed case by case. Port of
//! `quick-junit/src/serialize.rs` (MIT OR Apache-2.0, the nextest contributors).

use std::io::{self, Write};
use std::time::Duration;

use quick_junit::{
    FlakyOrRerun, NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestRerun, TestSuite, XmlString,
};
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use crate::model::{CaseStatus, Run, Suite};

/// quick-xml's writer over the report's own buffer (`report::buffered`): each event is several
/// small writes, which a `&mut dyn Write` would take one call at a time.
type XmlWriter<'w, 'o> = Writer<&'w mut io::BufWriter<&'o mut dyn Write>>;

/// Adds quick-junit's `timestamp=`: RFC 3339 with milliseconds, to match times. A macro so the
/// timestamp's chrono type need not be named (fcorr does not depend on chrono itself).
macro_rules! push_timestamp {
    ($tag:ident, $timestamp:expr) => {
        $tag.push_attribute(("timestamp", $timestamp.format("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string().as_str()))
    };
}

/// Writes the run's JUnit XML, byte for byte what `build_report(run).serialize(out)` writes.
pub(super) fn write_report(run: &Run, out: &mut dyn Write) -> io::Result<()> {
    crate::report::buffered(out, |buffer| write_buffered(run, buffer))
}

fn write_buffered(run: &Run, out: &mut io::BufWriter<&mut dyn Write>) -> io::Result<()> {
    let mut writer = Writer::new_with_indent(out, b' ', 4);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;

    let mut report = super::report_header(run);
    let headers: Vec<TestSuite> = run
        .suites
        .iter()
        .map(|suite| {
            let mut header = super::suite_header(suite);
            count_cases(suite, &mut header);
            header
        })
        .collect();
    for header in &headers {
        report.tests += header.tests;
        report.failures += header.failures;
        report.errors += header.errors;
        report.skipped += header.skipped;
    }
    write_testsuites_start(&report, &mut writer)?;
    for (suite, header) in run.suites.iter().zip(&headers) {
        let mut cases = suite.every_case();
        write_test_suite(header, super::suite_cases(suite, &mut cases), &mut writer)?;
        cases.finish()?;
    }
    write_end("testsuites", &mut writer)?;
    writer.write_event(Event::Eof)?;
    // quick-junit ends the document with an indent: a trailing newline.
    writer.write_indent()
}

/// Sets the counts quick-junit's `add_test_case` would reach, without building the cases.
fn count_cases(suite: &Suite, header: &mut TestSuite) {
    if suite.streamed.is_some() {
        // Its counts count every case on disk (`cases` holds only the failing ones).
        let c = &suite.counts;
        header.tests += c.total as usize;
        header.skipped += c.skipped as usize;
        header.errors += c.error as usize;
        header.failures += (c.failed + c.timeout) as usize;
    }
    for case in suite.cases.iter().filter(|_| suite.streamed.is_none()) {
        header.tests += 1;
        match case.status {
            CaseStatus::Passed | CaseStatus::Flaky => {}
            CaseStatus::Skipped => header.skipped += 1,
            CaseStatus::Error => header.errors += 1,
            CaseStatus::Failed | CaseStatus::Timeout => header.failures += 1,
        }
    }
    if super::needs_suite_error(suite) {
        header.tests += 1;
        header.errors += 1;
    }
}

fn write_testsuites_start(report: &Report, writer: &mut XmlWriter<'_, '_>) -> io::Result<()> {
    let mut tag = BytesStart::new("testsuites");
    if let Some(name) = &report.name {
        tag.push_attribute(("name", name.as_str()));
    }
    tag.extend_attributes([
        ("tests", report.tests.to_string().as_str()),
        ("skipped", report.skipped.to_string().as_str()),
        ("failures", report.failures.to_string().as_str()),
        ("errors", report.errors.to_string().as_str()),
    ]);
    if let Some(disabled) = report.disabled {
        tag.push_attribute(("disabled", disabled.to_string().as_str()));
    }
    if let Some(uuid) = report.uuid {
        tag.push_attribute(("uuid", uuid.to_string().as_str()));
    }
    if let Some(timestamp) = &report.timestamp {
        push_timestamp!(tag, timestamp);
    }
    if let Some(time) = &report.time {
        push_time(&mut tag, time);
    }
    writer.write_event(Event::Start(tag))
}

fn write_test_suite(
    suite: &TestSuite,
    cases: impl Iterator<Item = TestCase>,
    writer: &mut XmlWriter<'_, '_>,
) -> io::Result<()> {
    let mut tag = BytesStart::new("testsuite");
    tag.extend_attributes([
        ("name", suite.name.as_str()),
        ("tests", suite.tests.to_string().as_str()),
        ("skipped", suite.skipped.to_string().as_str()),
        ("errors", suite.errors.to_string().as_str()),
        ("failures", suite.failures.to_string().as_str()),
    ]);
    if let Some(disabled) = suite.disabled {
        tag.push_attribute(("disabled", disabled.to_string().as_str()));
    }
    if let Some(timestamp) = &suite.timestamp {
        push_timestamp!(tag, timestamp);
    }
    if let Some(time) = &suite.time {
        push_time(&mut tag, time);
    }
    for (k, v) in &suite.extra {
        tag.push_attribute((k.as_str(), v.as_str()));
    }
    // Childless suites are self-closing, as in quick-junit; `tests` counts the cases to come.
    if suite.properties.is_empty() && suite.tests == 0 && suite.system_out.is_none() && suite.system_err.is_none() {
        return writer.write_event(Event::Empty(tag));
    }
    writer.write_event(Event::Start(tag))?;
    write_properties(&suite.properties, writer)?;
    for case in cases {
        write_test_case(&case, writer)?;
    }
    if let Some(out) = &suite.system_out {
        write_output(out, "system-out", writer)?;
    }
    if let Some(err) = &suite.system_err {
        write_output(err, "system-err", writer)?;
    }
    write_end("testsuite", writer)
}

fn write_properties(properties: &[Property], writer: &mut XmlWriter<'_, '_>) -> io::Result<()> {
    if properties.is_empty() {
        return Ok(());
    }
    writer.write_event(Event::Start(BytesStart::new("properties")))?;
    for property in properties {
        let mut tag = BytesStart::new("property");
        tag.extend_attributes([("name", property.name.as_str()), ("value", property.value.as_str())]);
        writer.write_event(Event::Empty(tag))?;
    }
    write_end("properties", writer)
}

fn write_test_case(case: &TestCase, writer: &mut XmlWriter<'_, '_>) -> io::Result<()> {
    let mut tag = BytesStart::new("testcase");
    tag.push_attribute(("name", case.name.as_str()));
    if let Some(classname) = &case.classname {
        tag.push_attribute(("classname", classname.as_str()));
    }
    if let Some(assertions) = case.assertions {
        tag.push_attribute(("assertions", assertions.to_string().as_str()));
    }
    if let Some(timestamp) = &case.timestamp {
        push_timestamp!(tag, timestamp);
    }
    if let Some(time) = &case.time {
        push_time(&mut tag, time);
    }
    for (k, v) in &case.extra {
        tag.push_attribute((k.as_str(), v.as_str()));
    }
    let status_has_children = match &case.status {
        TestCaseStatus::Success { flaky_runs } => !flaky_runs.is_empty(),
        TestCaseStatus::NonSuccess { .. } | TestCaseStatus::Skipped { .. } => true,
    };
    if case.properties.is_empty() && case.system_out.is_none() && case.system_err.is_none() && !status_has_children {
        return writer.write_event(Event::Empty(tag));
    }
    writer.write_event(Event::Start(tag))?;
    write_properties(&case.properties, writer)?;
    match &case.status {
        TestCaseStatus::Success { flaky_runs } => {
            for rerun in flaky_runs {
                write_rerun(rerun, FlakyOrRerun::Flaky, writer)?;
            }
        }
        TestCaseStatus::NonSuccess { kind, message, ty, description, reruns } => {
            let tag_name = match kind {
                NonSuccessKind::Failure => "failure",
                NonSuccessKind::Error => "error",
            };
            write_status(message.as_deref(), ty.as_deref(), description.as_deref(), tag_name, writer)?;
            for rerun in &reruns.runs {
                write_rerun(rerun, reruns.kind, writer)?;
            }
        }
        TestCaseStatus::Skipped { message, ty, description } => {
            write_status(message.as_deref(), ty.as_deref(), description.as_deref(), "skipped", writer)?;
        }
    }
    if let Some(out) = &case.system_out {
        write_output(out, "system-out", writer)?;
    }
    if let Some(err) = &case.system_err {
        write_output(err, "system-err", writer)?;
    }
    write_end("testcase", writer)
}

fn write_status(
    message: Option<&str>,
    ty: Option<&str>,
    description: Option<&str>,
    tag_name: &'static str,
    writer: &mut XmlWriter<'_, '_>,
) -> io::Result<()> {
    let mut tag = BytesStart::new(tag_name);
    if let Some(message) = message {
        tag.push_attribute(("message", message));
    }
    if let Some(ty) = ty {
        tag.push_attribute(("type", ty));
    }
    match description {
        Some(description) => {
            writer.write_event(Event::Start(tag))?;
            writer.write_event(Event::Text(BytesText::new(description)))?;
            write_end(tag_name, writer)
        }
        None => writer.write_event(Event::Empty(tag)),
    }
}

fn write_rerun(rerun: &TestRerun, flaky_or_rerun: FlakyOrRerun, writer: &mut XmlWriter<'_, '_>) -> io::Result<()> {
    let tag_name = match (flaky_or_rerun, rerun.kind) {
        (FlakyOrRerun::Flaky, NonSuccessKind::Failure) => "flakyFailure",
        (FlakyOrRerun::Flaky, NonSuccessKind::Error) => "flakyError",
        (FlakyOrRerun::Rerun, NonSuccessKind::Failure) => "rerunFailure",
        (FlakyOrRerun::Rerun, NonSuccessKind::Error) => "rerunError",
    };
    let mut tag = BytesStart::new(tag_name);
    if let Some(timestamp) = &rerun.timestamp {
        push_timestamp!(tag, timestamp);
    }
    if let Some(time) = &rerun.time {
        push_time(&mut tag, time);
    }
    if let Some(message) = &rerun.message {
        tag.push_attribute(("message", message.as_str()));
    }
    if let Some(ty) = &rerun.ty {
        tag.push_attribute(("type", ty.as_str()));
    }
    writer.write_event(Event::Start(tag))?;
    let mut needs_indent = false;
    if let Some(description) = &rerun.description {
        writer.write_event(Event::Text(BytesText::new(description)))?;
        needs_indent = true;
    }
    // Stack trace, system-out, system-err: the order of the reference schema.
    if let Some(stack_trace) = &rerun.stack_trace {
        if std::mem::take(&mut needs_indent) {
            writer.write_indent()?;
        }
        writer.write_event(Event::Start(BytesStart::new("stackTrace")))?;
        writer.write_event(Event::Text(BytesText::new(stack_trace)))?;
        write_end("stackTrace", writer)?;
    }
    if let Some(out) = &rerun.system_out {
        if std::mem::take(&mut needs_indent) {
            writer.write_indent()?;
        }
        write_output(out, "system-out", writer)?;
    }
    if let Some(err) = &rerun.system_err {
        if needs_indent {
            writer.write_indent()?;
        }
        write_output(err, "system-err", writer)?;
    }
    write_end(tag_name, writer)
}

fn write_output(output: &XmlString, tag_name: &'static str, writer: &mut XmlWriter<'_, '_>) -> io::Result<()> {
    writer.write_event(Event::Start(BytesStart::new(tag_name)))?;
    writer.write_event(Event::Text(BytesText::new(output.as_str())))?;
    write_end(tag_name, writer)
}

fn write_end(tag_name: &'static str, writer: &mut XmlWriter<'_, '_>) -> io::Result<()> {
    writer.write_event(Event::End(BytesEnd::new(tag_name)))
}

fn push_time(tag: &mut BytesStart<'_>, time: &Duration) {
    tag.push_attribute(("time", format!("{:.3}", time.as_secs_f64()).as_str()));
}
