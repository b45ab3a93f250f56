//! What the .NET report readers (NUnit 2/3, xUnit.net v2, TRX) share: a streaming pass over the
//! XML that tells when a document ends with elements still open (cut short), file/line from .NET
//! stack traces, and the checks of what a report declares against what was read.

use std::io::BufRead;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use super::{DETAILS_CAP, OUTPUT_CAP, ParseOptions, ParsedReport, xml_stream};
use crate::model::{Case, CaseStatus};
use crate::text::cap_text;

/// Why a .NET report could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DotnetReportError {
    #[error("invalid XML at byte {position}: {message}; {cases} test results were read before it")]
    Xml { position: u64, message: String, cases: usize },
    #[error("no <{root}> element: not {what} report{}", super::root_hint(found.as_deref(), format))]
    NoRoot {
        root: &'static str,
        what: &'static str,
        /// The format being read, and the document's root element, to say what it is instead.
        format: &'static str,
        found: Option<String>,
    },
}

/// What [`drive`] found: why the document was cut short, if it was, and its root element.
pub(crate) struct Driven {
    pub(crate) cut: Option<String>,
    pub(crate) root: Option<String>,
}

/// One reader's side of [`drive`]: elements by local name, text already resolved; an empty
/// element (`<a/>`) is a start and an end.
pub(crate) trait Handler {
    fn start(&mut self, name: &str, e: &BytesStart<'_>);
    fn end(&mut self, name: &str);
    fn text(&mut self, text: &str);
    /// Cases read so far, for error messages.
    fn cases_read(&self) -> usize;
}

/// Reads the whole document into `handler`. A document that ends with any element still open was
/// cut short (a crashed runner, a full disk): that gives `cut: Some(why)`, for [`cut_short`].
pub(crate) fn drive(input: &mut dyn BufRead, handler: &mut impl Handler) -> Result<Driven, DotnetReportError> {
    // Names of the open elements, end to end in one buffer (no allocation per element), and
    // where each starts: how deep the document is, and where it was cut.
    let mut names = String::new();
    let mut starts: Vec<usize> = Vec::new();
    let mut root: Option<String> = None;
    let result = xml_stream::read_events(input, xml_stream::CHUNK, |event| match event {
        Event::Start(ref e) => {
            let name = local_name(e.name().into_inner());
            root.get_or_insert_with(|| name.to_string());
            handler.start(name, e);
            starts.push(names.len());
            names.push_str(name);
        }
        Event::Empty(ref e) => {
            let name = local_name(e.name().into_inner());
            root.get_or_insert_with(|| name.to_string());
            handler.start(name, e);
            handler.end(name);
        }
        Event::End(ref e) => {
            if let Some(start) = starts.pop() {
                names.truncate(start);
            }
            handler.end(local_name(e.name().into_inner()));
        }
        Event::Text(ref t) => handler.text(&t.xml10_content()),
        Event::CData(ref t) => handler.text(&t.xml10_content()),
        Event::GeneralRef(ref r) => {
            if let Ok(Some(ch)) = r.resolve_char_ref() {
                let mut utf8 = [0u8; 4];
                handler.text(ch.encode_utf8(&mut utf8));
            } else {
                let name = r.xml10_content();
                match quick_xml::escape::resolve_predefined_entity(&name) {
                    Some(resolved) => handler.text(resolved),
                    // An entity declared in a DOCTYPE: keep it visible rather than drop it.
                    None => handler.text(&format!("&{name};")),
                }
            }
        }
        _ => {}
    });
    if let Err(e) = result {
        return Err(DotnetReportError::Xml {
            position: e.position,
            message: e.error.to_string(),
            cases: handler.cases_read(),
        });
    }
    let cut = starts.last().map(|&start| {
        format!(
            "the report ends inside <{}> ({} elements still open): it was cut short, so results after \
             that point are unknown; {} test results were read before the end",
            &names[start..],
            starts.len(),
            handler.cases_read()
        )
    });
    Ok(Driven { cut, root })
}

/// A report cut short keeps what was read, with an error diagnostic and an `error` case (see
/// [`ParsedReport::cut_short`]) that also say how many results the file declared and were missing.
pub(crate) fn cut_short(report: &mut ParsedReport, cut: Option<String>) {
    if let Some(why) = cut {
        let declared = report.warnings.iter().find(|w| w.starts_with("the report declares"));
        let why = match declared {
            Some(declared) => format!("{why}; {declared}"),
            None => why,
        };
        report.cut_short(why);
    }
}

/// The part of a name after its namespace prefix (TRX elements carry a default namespace only,
/// but prefixed writers exist).
fn local_name(key: &str) -> &str {
    match key.split_once(':') {
        Some((_, local)) => local,
        None => key,
    }
}

/// The local name of a document's first element, from its first bytes: what sniffing goes by,
/// so a report that merely mentions `<test-run` in captured output is not taken for NUnit.
/// Skips a byte-order mark, whitespace, the XML declaration, processing instructions,
/// comments and a DOCTYPE, internal subset (`[<!ENTITY ...>]`) included.
pub(crate) fn root_element(head: &[u8]) -> Option<&str> {
    let mut rest = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    loop {
        rest = rest.trim_ascii_start();
        let skipped = if rest.starts_with(b"<?") {
            skip_past(rest, b"?>")
        } else if rest.starts_with(b"<!--") {
            skip_past(rest, b"-->")
        } else if rest.starts_with(b"<!") {
            skip_declaration(rest)
        } else {
            break;
        };
        rest = &rest[skipped?..];
    }
    let name = rest.strip_prefix(b"<")?;
    let end = name.iter().position(|b| b.is_ascii_whitespace() || matches!(b, b'>' | b'/')).unwrap_or(name.len());
    let name = std::str::from_utf8(&name[..end]).ok()?;
    Some(local_name(name))
}

/// Where the first `end` in `bytes` ends.
fn skip_past(bytes: &[u8], end: &[u8]) -> Option<usize> {
    memchr::memmem::find(bytes, end).map(|at| at + end.len())
}

/// Where a `<!DOCTYPE ...>` (or other `<!...>` declaration) that starts `bytes` ends: at the first
/// `>` outside quotes and outside its internal subset `[...]`, whose declarations, comments and
/// quoted literals may hold `>` themselves.
fn skip_declaration(bytes: &[u8]) -> Option<usize> {
    let mut i = 2;
    let mut in_subset = false;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => i += 1 + memchr::memchr(quote, &bytes[i + 1..])?,
            b'<' if bytes[i..].starts_with(b"<!--") => i += skip_past(&bytes[i..], b"-->")? - 1,
            b'[' if !in_subset => in_subset = true,
            b']' if in_subset => in_subset = false,
            b'>' if !in_subset => return Some(i + 1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The attribute with local name `key`, normalized as XML 1.0 says; `None` when absent or empty.
pub(crate) fn attr(e: &BytesStart<'_>, key: &str) -> Option<String> {
    let [value] = attrs(e, [key]);
    value
}

/// Several attributes in one pass over the tag (a test-case carries a dozen), in the order of
/// `keys`; the first of a repeated attribute wins.
pub(crate) fn attrs<const N: usize>(e: &BytesStart<'_>, keys: [&str; N]) -> [Option<String>; N] {
    let mut found: [Option<String>; N] = std::array::from_fn(|_| None);
    for a in e.attributes().with_checks(false).flatten() {
        let local = a.key.local_name();
        let Some(i) = keys.iter().position(|k| *k == local.as_ref()) else {
            continue;
        };
        if found[i].is_none() {
            // An unknown entity in the value: keep it raw rather than lose the attribute.
            let value = a.normalized_value(XmlVersion::Implicit1_0).unwrap_or_else(|_| a.value.clone());
            found[i] = Some(value.into_owned()).filter(|v| !v.trim().is_empty());
        }
    }
    found
}

/// A count attribute (`total="12"`).
pub(crate) fn count_attr(e: &BytesStart<'_>, key: &str) -> Option<u64> {
    attr(e, key).and_then(|v| v.trim().parse().ok())
}

/// Seconds as NUnit and xUnit.net write them: `0.0123`, `1,200.5` (a comma for thousands), or
/// `0,288` / `35,52` (a decimal comma, from runners on a German or French locale). A comma is a
/// decimal comma when there is no point and it is not followed by exactly three digits, or when
/// what comes before it is `0`.
pub(crate) fn seconds_to_ms(value: &str) -> Option<f64> {
    let value = value.trim();
    let value = match value.rsplit_once(',') {
        Some((whole, fraction))
            if !value.contains('.')
                && !whole.contains(',')
                && (fraction.len() != 3 || whole.trim_start_matches('-') == "0") =>
        {
            format!("{whole}.{fraction}")
        }
        _ => value.replace(',', ""),
    };
    value.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(|s| s * 1000.0)
}

/// Text collected from the element being read, kept up to a cap (a little over, so
/// [`cap_text`](crate::text::cap_text) can say something was cut).
#[derive(Default)]
pub(crate) struct Capture {
    pub(crate) text: String,
    cap: usize,
    active: bool,
}

impl Capture {
    pub(crate) fn begin(&mut self, details: bool) {
        self.text.clear();
        self.cap = if details { DETAILS_CAP } else { OUTPUT_CAP };
        self.active = true;
    }

    pub(crate) fn push(&mut self, text: &str) {
        if self.active && self.text.len() <= self.cap {
            self.text.push_str(text);
        }
    }

    /// The text read since [`Capture::begin`], trimmed and capped; `None` when empty.
    pub(crate) fn take(&mut self) -> Option<String> {
        self.active = false;
        let text = self.text.trim();
        let kept = (!text.is_empty()).then(|| cap_text(text, self.cap));
        self.text.clear();
        kept
    }
}

/// The source location of a .NET stack trace:
/// `   at Ns.FooTests.Adds() in /src/Tests/FooTests.cs:line 42` gives (`Tests/FooTests.cs`, 42)
/// with `/src` as the root. The first frame in the test's own class wins (where the test
/// failed, even when it called code that threw); else the first frame with a location (framework
/// frames carry none, so that is the project's code).
pub(crate) fn stack_location(trace: &str, options: &ParseOptions, class: Option<&str>) -> Option<(String, u32)> {
    let frames = || {
        trace.lines().filter_map(|line| {
            let rest = line.trim().strip_prefix("at ")?;
            let (before, number) = rest.rsplit_once(":line ")?;
            let number: u32 = number.trim().parse().ok()?;
            let (method, file) = before.rsplit_once(" in ")?;
            let file = file.trim();
            (!file.is_empty()).then_some((method, file, number))
        })
    };
    let in_class =
        |method: &str| class.is_some_and(|c| method.strip_prefix(c).is_some_and(|rest| rest.starts_with('.')));
    let (_, file, line) = frames().find(|(method, _, _)| in_class(method)).or_else(|| frames().next())?;
    Some((options.relative_path(file), line))
}

/// `note: text` when both are there, else whichever is (a status note such as `ignored` in front
/// of the tool's own reason or message).
pub(crate) fn prefixed(note: Option<String>, text: Option<String>) -> Option<String> {
    match (note, text) {
        (Some(note), Some(text)) => Some(format!("{note}: {text}")),
        (note, text) => text.or(note),
    }
}

/// The first non-empty line of a message, as the case's one-line message.
pub(crate) fn first_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

/// `Ns.Class.Method(x: 1)` under class `Ns.Class` is named `Method(x: 1)`, as the test
/// explorers show it; a name that does not start with the class is kept whole.
pub(crate) fn short_name(full: &str, classname: Option<&str>) -> String {
    match classname {
        Some(class) => match full.strip_prefix(class).and_then(|rest| rest.strip_prefix('.')) {
            Some(rest) if !rest.is_empty() => rest.to_string(),
            _ => full.to_string(),
        },
        None => full.to_string(),
    }
}

/// Fills the failure fields of a case from a message and a stack trace.
pub(crate) fn set_failure(case: &mut Case, message: Option<String>, trace: Option<String>, options: &ParseOptions) {
    if let Some(trace) = &trace
        && case.file.is_none()
        && let Some((file, line)) = stack_location(trace, options, case.classname.as_deref())
    {
        case.file = Some(file.into());
        case.line = Some(line);
    }
    let details = match (&message, trace) {
        (Some(m), Some(t)) => Some(cap_text(&format!("{m}\n{t}"), DETAILS_CAP)),
        (Some(m), None) if m.contains('\n') => Some(m.clone()),
        (None, Some(t)) => Some(t),
        _ => None,
    };
    if case.message().is_none() {
        case.set_message(message.as_deref().and_then(first_line));
    }
    if case.extra().details.is_none() {
        case.extra_mut().details = details.map(Into::into);
    }
}

/// Compares what the report declares with what was read. Fewer cases than declared is a warning
/// (the file was not cut short, or reading would have failed); a report that declares failures
/// when no case read failed gets an `error` case, so the run cannot pass on what is missing.
pub(crate) fn check_declared(
    report: &mut ParsedReport,
    declared_total: Option<u64>,
    read: usize,
    declared_failing: Option<(u64, String)>,
    classname: Option<&str>,
) {
    if let Some(total) = declared_total
        && total != read as u64
    {
        let how = if (read as u64) < total { "fewer" } else { "more" };
        report
            .warnings
            .push(format!("the report declares {total} tests but {read} test results were read ({how} than declared)"));
    }
    if let Some((failing, what)) = declared_failing
        && failing > 0
        && !report.cases.iter().any(|c| c.status.is_failure())
    {
        report.cases.push(
            Case {
                name: super::DECLARED_FAILURES_CASE.into(),
                classname: classname.map(str::to_string).map(Into::into),
                status: CaseStatus::Error,
                ..Case::default()
            }
            .with_message(Some(format!("the report declares {what} but no failing test result was found in it"))),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn stack_locations_are_read_and_relativised() {
        let options = ParseOptions { root: Some(PathBuf::from("/src")) };
        let trace = "   at NUnit.Framework.Assert.That(Boolean condition)\n   at Calc.Tests.AddTests.Adds(Int32 a) in /src/Tests/AddTests.cs:line 42\n   at Other() in /src/x.cs:line 7";
        assert_eq!(stack_location(trace, &options, None), Some(("Tests/AddTests.cs".into(), 42)));
        // The test's own frame wins over the code it called.
        let called = "   at Calc.Div(Int32 b) in /src/Calc.cs:line 3\n   at Calc.Tests.DivTests.ByZero() in /src/Tests/DivTests.cs:line 8";
        assert_eq!(
            stack_location(called, &options, Some("Calc.Tests.DivTests")),
            Some(("Tests/DivTests.cs".into(), 8))
        );
        assert_eq!(stack_location(called, &options, Some("Calc.Tests.Other")), Some(("Calc.cs".into(), 3)));
        let windows = "   at Calc.Tests.T.M() in C:\\src\\Tests\\T.cs:line 9";
        assert_eq!(stack_location(windows, &ParseOptions::default(), None), Some(("C:/src/Tests/T.cs".into(), 9)));
        assert_eq!(stack_location("   at X.Y()\n   at Z.W() in :line x", &options, None), None);
    }

    #[test]
    fn root_elements_are_found_past_prologs() {
        let head = b"\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!--c-->\n<!DOCTYPE x>\n<test-run id=\"0\">";
        assert_eq!(root_element(head), Some("test-run"));
        assert_eq!(root_element(b"<t:TestRun xmlns:t=\"x\">"), Some("TestRun"));
        assert_eq!(root_element(b"<testsuite><system-out><![CDATA[<test-run"), Some("testsuite"));
        assert_eq!(root_element(b"<!-- never closed"), None);
        // An internal subset holding `>`, quotes and a comment, and an external entity.
        let doctype = b"<?xml version=\"1.0\"?>\n<!DOCTYPE test-results [\n  <!ENTITY a \"x > y\">\n  \
            <!-- a ] and a > -->\n  <!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n]>\n<test-results total=\"1\">";
        assert_eq!(root_element(doctype), Some("test-results"));
        assert_eq!(root_element(b"<!DOCTYPE x [ <!ENTITY a \"never closed"), None);
    }

    #[test]
    fn seconds_with_thousands_or_decimal_commas() {
        let ms = |v: &str| seconds_to_ms(v).map(|ms| (ms * 1000.0).round() / 1000.0);
        assert_eq!(ms("0.0123"), Some(12.3));
        assert_eq!(ms("1,200.5"), Some(1_200_500.0));
        assert_eq!(ms("0,288"), Some(288.0));
        assert_eq!(ms("35,5236617"), Some(35_523.662));
        assert_eq!(ms("1,200"), Some(1_200_000.0));
        assert_eq!(ms("-1"), None);
    }

    #[test]
    fn short_names_drop_the_class() {
        assert_eq!(short_name("Ns.C.Add(1,2,3)", Some("Ns.C")), "Add(1,2,3)");
        assert_eq!(short_name("Ns.C.Add(\"a.b\")", Some("Ns.D")), "Ns.C.Add(\"a.b\")");
        assert_eq!(short_name("Ns.C", Some("Ns.C")), "Ns.C");
    }
}
