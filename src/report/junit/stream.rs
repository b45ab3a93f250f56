//! `junit.xml` written straight from the run, one test case at a time, escaping into the buffer.
//!
//! The bytes are those of quick-junit's serializer over the report [`super::build_report`]
//! builds (same tags, attribute order, indentation, string sanitising and quick-xml 0.42
//! escaping), without building it: quick-junit copies every string into a sanitised `String`
//! and quick-xml escapes each attribute into another, ~0.45 s of CPU for 100,000 cases. Here a
//! string is sanitised only when it holds a control character or a C1 code (the rare case, which
//! goes through quick-junit's own `XmlString::new`), and escaped as it is copied into the buffer.

use std::borrow::Cow;
use std::io::{self, BufWriter, Write};

use quick_junit::{TestSuite, XmlString};

use crate::model::{Attempt, Case, CaseStatus, Run, Suite, Text};

/// The report's own buffer (`report::buffered`): small writes into it are inlined copies.
type Out<'w, 'o> = BufWriter<&'w mut (dyn Write + 'o)>;

/// Writes the run's JUnit XML, byte for byte what `build_report(run).serialize(out)` writes with
/// quick-xml 0.42 (newlines in attribute values as `&#10;`).
pub(super) fn write_report(run: &Run, out: &mut dyn Write) -> io::Result<()> {
    crate::report::buffered(out, |buffer| write_buffered(run, buffer))
}

fn write_buffered(run: &Run, out: &mut Out<'_, '_>) -> io::Result<()> {
    let mut xml = Xml { out, depth: 0, line_break: false };
    xml.out.write_all(br#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    xml.line_break = true;

    let report = super::report_header(run);
    let headers: Vec<TestSuite> = run
        .suites
        .iter()
        .map(|suite| {
            let mut header = super::suite_header(suite);
            count_cases(suite, &mut header);
            header
        })
        .collect();
    let total = |count: fn(&TestSuite) -> usize| headers.iter().map(count).sum::<usize>();
    xml.open("testsuites")?;
    if let Some(name) = &report.name {
        xml.attr("name", name)?;
    }
    xml.number("tests", total(|h| h.tests))?;
    xml.number("skipped", total(|h| h.skipped))?;
    xml.number("failures", total(|h| h.failures))?;
    xml.number("errors", total(|h| h.errors))?;
    xml.time(report.time.map(|t| t.as_secs_f64()))?;
    xml.start()?;
    for (suite, header) in run.suites.iter().zip(&headers) {
        write_suite(suite, header, &mut xml)?;
    }
    xml.end("testsuites")?;
    // quick-junit ends the document with an indent: a trailing newline.
    xml.indent()
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

/// One `<testsuite>`: the attributes and properties fcorr sets on quick-junit's suite (no
/// timestamp, `disabled` or extra attributes), its cases as they are read, then its log.
fn write_suite(suite: &Suite, header: &TestSuite, xml: &mut Xml<'_, '_, '_>) -> io::Result<()> {
    xml.open("testsuite")?;
    xml.attr("name", &header.name)?;
    xml.number("tests", header.tests)?;
    xml.number("skipped", header.skipped)?;
    xml.number("errors", header.errors)?;
    xml.number("failures", header.failures)?;
    xml.time(header.time.map(|t| t.as_secs_f64()))?;
    // Childless suites are self-closing, as in quick-junit; `tests` counts the cases to come.
    if header.properties.is_empty() && header.tests == 0 && header.system_out.is_none() {
        return xml.empty();
    }
    xml.start()?;
    if !header.properties.is_empty() {
        xml.open("properties")?;
        xml.start()?;
        for property in &header.properties {
            xml.open("property")?;
            xml.attr("name", &property.name)?;
            xml.attr("value", &property.value)?;
            xml.empty()?;
        }
        xml.end("properties")?;
    }
    let mut cases = suite.every_case();
    for case in &mut cases {
        write_case(&CaseXml::of(suite, &case), xml)?;
    }
    cases.finish()?;
    if super::needs_suite_error(suite) {
        let error = super::SuiteError::of(suite);
        write_case(&CaseXml::suite_error(&error), xml)?;
    }
    if let Some(out) = &header.system_out {
        xml.element("system-out", out)?;
    }
    xml.end("testsuite")
}

/// A `<testcase>` as quick-junit would hold it, borrowed from the run.
struct CaseXml<'a> {
    name: &'a str,
    classname: &'a str,
    time: Option<f64>,
    file: Option<&'a str>,
    line: Option<u32>,
    status: Status<'a>,
    /// Read in place from its packed block when written (nearly every case of an import has some).
    output: Option<&'a Text>,
}

/// The case's status element: none (passed), `<skipped>`, or `<failure>`/`<error>`; then the
/// failed attempts as flaky or rerun elements.
enum Status<'a> {
    Passed {
        flaky: &'a [Attempt],
    },
    Skipped {
        message: Option<&'a str>,
    },
    NotPassed {
        tag: &'static str,
        message: Option<Cow<'a, str>>,
        ty: &'a str,
        description: Option<Cow<'a, str>>,
        reruns: &'a [Attempt],
    },
}

impl<'a> CaseXml<'a> {
    /// What [`super::test_case`] puts in quick-junit's `TestCase`.
    fn of(suite: &'a Suite, case: &'a Case) -> CaseXml<'a> {
        let status = match case.status {
            CaseStatus::Passed => Status::Passed { flaky: &[] },
            CaseStatus::Flaky => Status::Passed { flaky: &case.extra().attempts },
            CaseStatus::Skipped => Status::Skipped { message: case.message() },
            CaseStatus::Failed | CaseStatus::Error | CaseStatus::Timeout => Status::NotPassed {
                tag: if case.status == CaseStatus::Error { "error" } else { "failure" },
                message: super::failure_message(case),
                ty: case.status.label(),
                description: case.details().or(case.message().map(Cow::Borrowed)),
                reruns: &case.extra().attempts,
            },
        };
        CaseXml {
            name: &case.name,
            classname: case.classname.as_deref().unwrap_or(&suite.name),
            time: case.duration_ms,
            file: case.file.as_deref(),
            line: case.line,
            status,
            output: case.extra().output.as_ref(),
        }
    }

    /// The synthetic case of [`super::suite_error_case`].
    fn suite_error(error: &'a super::SuiteError) -> CaseXml<'a> {
        CaseXml {
            name: &error.name,
            classname: super::SUITE_ERROR_CLASSNAME,
            time: None,
            file: None,
            line: None,
            status: Status::NotPassed {
                tag: "error",
                message: Some(Cow::Borrowed(&error.message)),
                ty: &error.ty,
                description: error.description.as_deref().map(Cow::Borrowed),
                reruns: &[],
            },
            output: None,
        }
    }
}

fn write_case(case: &CaseXml<'_>, xml: &mut Xml<'_, '_, '_>) -> io::Result<()> {
    xml.open("testcase")?;
    xml.attr("name", case.name)?;
    xml.attr("classname", case.classname)?;
    xml.time(case.time.map(|ms| super::ms(ms).as_secs_f64()))?;
    if let Some(file) = case.file {
        xml.attr("file", file)?;
    }
    if let Some(line) = case.line {
        xml.number("line", line as usize)?;
    }
    let failed = |attempts: &[Attempt]| attempts.iter().any(|a| a.status.is_failure());
    let has_children = match &case.status {
        Status::Passed { flaky } => failed(flaky),
        Status::Skipped { .. } | Status::NotPassed { .. } => true,
    };
    if case.output.is_none() && !has_children {
        return xml.empty();
    }
    xml.start()?;
    match &case.status {
        Status::Passed { flaky } => write_reruns(flaky, true, xml)?,
        Status::Skipped { message } => {
            xml.open("skipped")?;
            if let Some(message) = message {
                xml.attr("message", message)?;
            }
            xml.empty()?;
        }
        Status::NotPassed { tag, message, ty, description, reruns } => {
            xml.open(tag)?;
            if let Some(message) = message {
                xml.attr("message", message)?;
            }
            xml.attr("type", ty)?;
            match description {
                Some(description) => {
                    xml.start()?;
                    xml.text(&capped(description, super::DETAILS_CAP))?;
                    xml.end(tag)?;
                }
                None => xml.empty()?,
            }
            write_reruns(reruns, false, xml)?;
        }
    }
    if let Some(output) = case.output {
        output.with(|output| xml.element("system-out", &capped(output, super::OUTPUT_CAP)))?;
    }
    xml.end("testcase")
}

/// The failed attempts of a flaky (`flaky`) or failed case, as [`super::reruns`] builds them.
fn write_reruns(attempts: &[Attempt], flaky: bool, xml: &mut Xml<'_, '_, '_>) -> io::Result<()> {
    for attempt in attempts.iter().filter(|a| a.status.is_failure()) {
        let tag = match (flaky, attempt.status == CaseStatus::Error) {
            (true, false) => "flakyFailure",
            (true, true) => "flakyError",
            (false, false) => "rerunFailure",
            (false, true) => "rerunError",
        };
        xml.open(tag)?;
        xml.time(attempt.duration_ms.map(|ms| super::ms(ms).as_secs_f64()))?;
        if let Some(message) = &attempt.message {
            xml.attr("message", message)?;
        }
        xml.attr("type", attempt.status.label())?;
        xml.start()?;
        if let Some(details) = &attempt.details {
            xml.element("stackTrace", &capped(details, super::DETAILS_CAP))?;
        }
        xml.end(tag)?;
    }
    Ok(())
}

/// [`crate::text::cap_text`], borrowed when nothing is cut (nearly always).
fn capped(text: &str, max: usize) -> Cow<'_, str> {
    match text.len() <= max {
        true => Cow::Borrowed(text),
        false => Cow::Owned(crate::text::cap_text(text, max)),
    }
}

/// quick-xml's indenting writer (4 spaces), as quick-junit drives it: a tag starts on a new,
/// indented line unless it follows text.
struct Xml<'x, 'w, 'o> {
    out: &'x mut Out<'w, 'o>,
    depth: usize,
    line_break: bool,
}

impl Xml<'_, '_, '_> {
    /// `<name`, on a new line when the previous event was not text.
    fn open(&mut self, name: &str) -> io::Result<()> {
        if self.line_break {
            self.indent()?;
        }
        self.out.write_all(b"<")?;
        self.out.write_all(name.as_bytes())
    }

    /// ` key="value"`, the value sanitised and escaped as quick-junit and quick-xml 0.42 do.
    fn attr(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.out.write_all(b" ")?;
        self.out.write_all(key.as_bytes())?;
        self.out.write_all(b"=\"")?;
        write_clean(self.out, value, true)?;
        self.out.write_all(b"\"")
    }

    fn number(&mut self, key: &str, value: usize) -> io::Result<()> {
        write!(self.out, " {key}=\"{value}\"")
    }

    /// quick-junit's `time="…"`: seconds with three decimals.
    fn time(&mut self, seconds: Option<f64>) -> io::Result<()> {
        match seconds {
            Some(seconds) => {
                write!(self.out, " time=\"{seconds:.3}\"")
            }
            None => Ok(()),
        }
    }

    /// Closes a start tag: `>`, one level deeper.
    fn start(&mut self) -> io::Result<()> {
        self.depth += 1;
        self.line_break = true;
        self.out.write_all(b">")
    }

    /// Closes an empty element: `/>`.
    fn empty(&mut self) -> io::Result<()> {
        self.line_break = true;
        self.out.write_all(b"/>")
    }

    /// `</name>`, one level up; on a new line unless it follows text.
    fn end(&mut self, name: &str) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if self.line_break {
            self.indent()?;
        }
        self.line_break = true;
        self.out.write_all(b"</")?;
        self.out.write_all(name.as_bytes())?;
        self.out.write_all(b">")
    }

    /// Element text, sanitised and escaped; the next tag follows it on the same line.
    fn text(&mut self, text: &str) -> io::Result<()> {
        self.line_break = false;
        write_clean(self.out, text, false)
    }

    /// `<name>text</name>`.
    fn element(&mut self, name: &str, text: &str) -> io::Result<()> {
        self.open(name)?;
        self.start()?;
        self.text(text)?;
        self.end(name)
    }

    /// A newline and the current level's indent.
    fn indent(&mut self) -> io::Result<()> {
        const SPACES: &[u8] = &[b' '; 64];
        self.out.write_all(b"\n")?;
        let mut left = self.depth * 4;
        while left > 0 {
            let n = left.min(SPACES.len());
            self.out.write_all(&SPACES[..n])?;
            left -= n;
        }
        Ok(())
    }
}

/// What a byte asks of [`write_clean`]: copy it, replace it by an entity, or (a control
/// character, or the lead byte of a possible C1 code) look closer.
const PLAIN: u8 = 0;
const ESCAPE: u8 = 1;
const CONTROL: u8 = 2;
static CLASS: [u8; 256] = {
    let mut class = [PLAIN; 256];
    let mut b = 0;
    while b < 0x20 {
        class[b] = CONTROL;
        b += 1;
    }
    class[0xC2] = CONTROL;
    let escaped = [b'<', b'>', b'&', b'\'', b'"', b'\n'];
    let mut i = 0;
    while i < escaped.len() {
        class[escaped[i] as usize] = ESCAPE;
        i += 1;
    }
    class
};

/// Writes `text` as quick-junit stores it (`XmlString::new`: ANSI escapes, C0 controls but `\n`,
/// and C1 codes removed) and quick-xml 0.42 escapes it (`<>&'"`, and in attributes `\n` as
/// `&#10;`). Clean text — nearly all — is escaped in one pass without a copy.
fn write_clean(out: &mut Out<'_, '_>, text: &str, attribute: bool) -> io::Result<()> {
    match write_escaped(out, text, attribute, true)? {
        None => Ok(()),
        Some(written) => {
            // Only the clean prefix `text[..written]` is out, and sanitising keeps a clean prefix
            // as it is (it only removes controls): write the rest of the sanitised string.
            // `written` is the offset of that control byte (ASCII) or C1 lead byte, so a
            // character boundary of both.
            let clean = XmlString::new(text);
            let rest = clean.as_str().get(written..).unwrap_or_default();
            write_escaped(out, rest, attribute, false).map(|_| ())
        }
    }
}

/// Escapes `text` into `out`. With `sanitise`, stops at the first byte quick-junit would remove
/// (a C0 control but `\n`, or a C1 code) and returns how many bytes of `text` were written.
fn write_escaped(out: &mut Out<'_, '_>, text: &str, attribute: bool, sanitise: bool) -> io::Result<Option<usize>> {
    let bytes = text.as_bytes();
    let mut copied = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let entity: &[u8] = match (CLASS[b as usize], b) {
            (PLAIN, _) => continue,
            (CONTROL, 0xC2) if !bytes.get(i + 1).is_some_and(|next| (0x80..=0x9F).contains(next)) => continue,
            (CONTROL, _) if sanitise => {
                out.write_all(&bytes[copied..i])?;
                return Ok(Some(i));
            }
            (CONTROL, _) => continue,
            (_, b'<') => b"&lt;",
            (_, b'>') => b"&gt;",
            (_, b'&') => b"&amp;",
            (_, b'\'') => b"&apos;",
            (_, b'"') => b"&quot;",
            (_, b'\n') if attribute => b"&#10;",
            _ => continue,
        };
        out.write_all(&bytes[copied..i])?;
        out.write_all(entity)?;
        copied = i + 1;
    }
    out.write_all(&bytes[copied..])?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    /// What quick-junit stores and quick-xml 0.42 writes: `XmlString::new`, then `escape` (text)
    /// or `escape_attribute` (whose `\t` and `\r` never survive the sanitising).
    fn reference(text: &str, attribute: bool) -> String {
        let clean = quick_junit::XmlString::new(text);
        let escaped = quick_xml::escape::escape(clean.as_str()).into_owned();
        if attribute { escaped.replace('\n', "&#10;") } else { escaped }
    }

    fn written(text: &str, attribute: bool) -> String {
        let mut bytes = Vec::new();
        let sink: &mut dyn std::io::Write = &mut bytes;
        let mut out = std::io::BufWriter::new(sink);
        super::write_clean(&mut out, text, attribute).unwrap();
        drop(out);
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn strings_are_sanitised_and_escaped_as_quick_junit_and_quick_xml_do() {
        let samples = [
            "",
            "plain",
            "a < b && c > 'd' \"e\"\nnext line",
            "£ © NBSP\u{a0} ¿ stay, \u{85} and \u{9f} go",
            "escaped first <&> then a bell\u{7} and a tab\t and CR\r\n",
            "<tag>\u{1b}[31mred\u{1b}[0m & \u{1b}]0;title\u{7} after",
            "C1 CSI \u{9b}31m, emoji 😀, 名前, café, trailing lead \u{c2}",
            "\u{0}\u{1}\u{1f}\u{7f} all controls",
            "half an escape <at the end> \u{1b}[",
        ];
        for text in samples {
            for attribute in [false, true] {
                assert_eq!(written(text, attribute), reference(text, attribute), "{text:?}, attribute: {attribute}");
            }
        }
        for code in 0..=0x2FFu32 {
            let Some(c) = char::from_u32(code) else { continue };
            let text = format!("x<{c}>&{c}\n{c}");
            for attribute in [false, true] {
                assert_eq!(written(&text, attribute), reference(&text, attribute), "U+{code:04X}");
            }
        }
    }
}
