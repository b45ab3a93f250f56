//! JUnit XML in its real-world dialects, read as a stream of quick-xml events.
//!
//! Only what the model needs is decoded: testcase attributes, failure/error/skipped messages and
//! text, and captured output of cases that did not pass. Dialects covered (see `docs/import.md`):
//! pytest xunit1/xunit2, jest-junit, surefire/failsafe, Gradle, go-junit-report, gotestsum,
//! nextest, mocha-junit-reporter, vitest, node:test, PHPUnit and Bazel/googletest. Nested
//! `<testsuite>`s, missing counts and attributes, BOMs, DOCTYPEs and comments are tolerated;
//! mismatched end tags are not fatal.
//!
//! [`NodeTestJunit`] reads the same XML in the dialect of `node --test --test-reporter=junit`: its
//! testcases all say `classname="test"`, so the nested `<testsuite>` names (the `describe` path) name
//! the case instead, and the failure message comes from the element text (the attribute is mangled).

use std::borrow::Cow;
use std::io::{BufRead, Read};

use quick_xml::XmlVersion;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::QName;

use super::{Batch, DETAILS_CAP, OUTPUT_CAP, ParseOptions, ParsedReport, ReportParser, xml_stream};
use crate::errors::ParseError;
use crate::model::{Attempt, Case, CaseStatus};
use crate::text::cap_text;

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "junit";

/// The name of `node --test`'s JUnit, read by [`NodeTestJunit`].
pub(crate) const NODE_NAME: &str = "node-junit";

/// JUnit / xUnit XML.
pub struct Junit;

impl ReportParser for Junit {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["xml", "junit-xml", "xunit"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        text.contains("<testsuite") || text.contains("<testcase") || text.contains("<testsuites")
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse(input, options).map_err(|e| e.in_format(self.format()))
    }

    fn parse_in_batches(
        &self,
        input: &mut dyn BufRead,
        options: &ParseOptions,
        batch: &mut Batch<'_>,
    ) -> Result<ParsedReport, ParseError> {
        parse_in_chunks(input, options, Dialect::Generic, xml_stream::CHUNK, Some((BATCH, batch)))
            .map_err(|e| e.in_format(self.format()))
    }

    fn parse_file(&self, file: &std::fs::File, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse_file(file, options, Dialect::Generic).map_err(|e| e.in_format(self.format()))
    }
}

/// `node --test`'s JUnit reporter (chosen by name only: its output is ordinary JUnit on sight).
pub struct NodeTestJunit;

impl ReportParser for NodeTestJunit {
    fn format(&self) -> &'static str {
        NODE_NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["node-test-junit"]
    }

    fn sniff(&self, _head: &[u8]) -> bool {
        false
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse_dialect(input, options, Dialect::NodeTest).map_err(|e| e.in_format(self.format()))
    }

    fn parse_in_batches(
        &self,
        input: &mut dyn BufRead,
        options: &ParseOptions,
        batch: &mut Batch<'_>,
    ) -> Result<ParsedReport, ParseError> {
        parse_in_chunks(input, options, Dialect::NodeTest, xml_stream::CHUNK, Some((BATCH, batch)))
            .map_err(|e| e.in_format(self.format()))
    }

    fn parse_file(&self, file: &std::fs::File, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse_file(file, options, Dialect::NodeTest).map_err(|e| e.in_format(self.format()))
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

/// A `<testsuite>` being read: what its cases inherit, and what it says it holds.
struct SuiteFrame {
    name: Option<String>,
    /// PHPUnit and mocha-junit-reporter put the source file on the suite.
    file: Option<String>,
    /// `tests`, `failures`, `errors`, `skipped` as the writer declared them.
    declared: Tally,
    /// The same, counted from the testcases read inside it: its own, and those of each nested
    /// testsuite once that one ended (each case counts in its innermost testsuite only, so a
    /// case costs the same however deep it is nested; see [`end_suite`]).
    read: Tally,
    /// Index in the report of its first case.
    first_case: usize,
    /// Testcases in it that repeat the testcase before them, which has no result: the attempts
    /// of a rerun (pytest-rerunfailures), or tests that share a name (see [`fold_reruns`]);
    /// counted as `read` is.
    repeats: u64,
    /// Index in the stack of open testsuites of the innermost one with a name (this one or an
    /// outer one), and the same for a file: what a case inherits, found without a walk.
    name_at: Option<usize>,
    file_at: Option<usize>,
    /// A `<testsuite>` is nested in it: writers count those differently (node counts a nested
    /// suite as one test), so only a leaf suite's `tests` must equal its testcases.
    nested: bool,
}

/// Counts a `<testsuite>` declares or holds: tests, failures, errors, skipped.
#[derive(Clone, Copy, Default)]
struct Tally([Option<u64>; 4]);

impl Tally {
    const NAMES: [&'static str; 4] = ["tests", "failures", "errors", "skipped"];

    fn add(&mut self, counts: [u64; 4]) {
        for (slot, n) in self.0.iter_mut().zip(counts) {
            *slot = Some(slot.unwrap_or(0) + n);
        }
    }

    /// Adds what a nested testsuite counted.
    fn merge(&mut self, inner: &Tally) {
        for (slot, n) in self.0.iter_mut().zip(inner.0) {
            if let Some(n) = n {
                *slot = Some(slot.unwrap_or(0) + n);
            }
        }
    }

    /// `declares tests=5, failures=1 but 3 testcases, 0 failures were read`, when fewer were
    /// read than declared in any count (more is common: writers count parents and retries apart).
    fn shortfall(&self, read: &Tally, suite: Option<&str>) -> Option<String> {
        let short: Vec<usize> = (0..4).filter(|&i| self.0[i].is_some_and(|d| d > read.0[i].unwrap_or(0))).collect();
        if short.is_empty() {
            return None;
        }
        let declared: Vec<String> =
            short.iter().map(|&i| format!("{}={}", Self::NAMES[i], self.0[i].unwrap_or(0))).collect();
        let found: Vec<String> = short
            .iter()
            .map(|&i| {
                let n = read.0[i].unwrap_or(0);
                format!("{n} {}", if i == 0 { "testcases" } else { Self::NAMES[i] })
            })
            .collect();
        Some(format!(
            "testsuite `{}` declares {} but {} were read",
            suite.unwrap_or("(unnamed)"),
            declared.join(", "),
            found.join(", ")
        ))
    }
}

/// The testcase being read, besides the case itself (the last one in the report while it is read).
struct Open {
    /// `type=` of the deciding failure, used as the message when nothing better exists.
    failure_type: Option<String>,
    inside: Inside,
    /// Depth of elements nested in the current child (surefire's `<stackTrace>`).
    depth_in_child: u32,
    /// Depth at which a nested `<system-out>`/`<system-err>` of an attempt started: text muted.
    muted_from: Option<u32>,
    text: String,
    output: String,
    attempt: Option<Attempt>,
    /// A `<flaky*>` child: the case failed at first and passed on a retry.
    passed_on_retry: bool,
    dialect: Dialect,
    /// `<failure>`, `<error>` and `<skipped>` children seen, as writers count them in a suite's totals.
    children: [u64; 3],
    /// A `<skipped type="todo"/>` child was seen: node:test's todo, whose failure fails nothing.
    todo: bool,
}

/// Why a file is not a JUnit report: broken XML (with the byte offset), or no JUnit element.
#[derive(Debug, PartialEq, thiserror::Error)]
enum JunitError {
    #[error(
        "invalid XML at byte {position}: {message}{}; {cases_read} testcases were read before it",
        utf8_hint(message)
    )]
    Xml { message: String, position: u64, cases_read: usize },
    #[error(
        "no <testsuites>, <testsuite> or <testcase> element: not a JUnit report{}",
        super::root_hint(root.as_deref(), NAME)
    )]
    NoRoot { root: Option<String> },
}

impl JunitError {
    fn in_format(self, format: &str) -> ParseError {
        let error = ParseError::new(format, self.to_string());
        match self {
            JunitError::Xml { position, .. } => error.at_byte(position),
            JunitError::NoRoot { .. } => error,
        }
    }
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, JunitError> {
    parse_dialect(input, options, Dialect::Generic)
}

fn parse_dialect(
    input: &mut dyn BufRead,
    options: &ParseOptions,
    dialect: Dialect,
) -> Result<ParsedReport, JunitError> {
    parse_in_chunks(input, options, dialect, xml_stream::CHUNK, None)
}

/// Cases read before a batch is handed out (when batches are asked for): the memory of a few
/// thousand cases, while each batch's cost (ids, a part of the spill file) stays small.
const BATCH: usize = 8192;

/// Reads the report `chunk` bytes at a time (see [`xml_stream`]); the result does not depend on `chunk`.
/// With `batches` (a size and a receiver), finished cases go out in batches of about that many
/// as they are read (see [`ReadState::hand_out`]); the report returned holds those read after the
/// last batch.
fn parse_in_chunks(
    input: &mut dyn BufRead,
    options: &ParseOptions,
    dialect: Dialect,
    chunk: usize,
    batches: Option<(usize, &mut Batch<'_>)>,
) -> Result<ParsedReport, JunitError> {
    let state = ReadState::new(options, dialect, batches, Begin::Document);
    read_part(input, state, chunk).and_then(Part::conclude)
}

/// Reports at least twice this big are read in parts, on several threads ([`parse_in_parts`]).
const PART_MIN: u64 = 4 << 20;
/// Reports bigger than this many bytes a thread are read in parts of about this size, more parts
/// than threads: each part's cases are joined to the report as soon as the parts before it are,
/// so the cases read but not yet joined are a few parts' worth, not half the report (a 1M-case
/// import held both halves at once: +72 MB). Smaller reports keep one part a thread, which
/// costs the least to cut and join.
const PART_SIZE: u64 = 16 << 20;
/// Parts a report is read in, at most.
const PARTS_MAX: usize = 32;
/// Threads that read parts, at most (and no more than the machine runs at once).
const THREADS_MAX: usize = 8;
/// How far past the end of an equal share the `<testsuite` tag to cut the report at is looked for.
const CUT_WINDOW: u64 = 1 << 20;

/// Reads a whole report file: in parts on several threads when it is big, the machine has cores
/// to spare and it can be cut between two testsuites ([`parse_in_parts`]), else in one go; the
/// report is the same either way.
fn parse_file(file: &std::fs::File, options: &ParseOptions, dialect: Dialect) -> Result<ParsedReport, JunitError> {
    let len = file.metadata().map_or(0, |m| m.len());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(THREADS_MAX);
    let parts = if threads > 1 {
        let parts = |size: u64| usize::try_from(len / size).unwrap_or(usize::MAX);
        threads.min(parts(PART_MIN)).max(parts(PART_SIZE)).min(PARTS_MAX)
    } else {
        1
    };
    parse_file_in(file, len, parts, threads, options, dialect, xml_stream::CHUNK)
}

/// [`parse_file`] in up to `parts` parts on `threads` threads (`len` is the file's size).
fn parse_file_in(
    file: &std::fs::File,
    len: u64,
    parts: usize,
    threads: usize,
    options: &ParseOptions,
    dialect: Dialect,
    chunk: usize,
) -> Result<ParsedReport, JunitError> {
    #[cfg(unix)]
    if parts > 1
        && let Some(report) = parse_in_parts(file, &cuts(file, len, parts), threads, options, dialect, chunk)
    {
        return report;
    }
    #[cfg(not(unix))]
    let _ = (len, parts, threads);
    // Positioned reads above leave the file's own position at its start.
    let state = ReadState::new(options, dialect, None, Begin::Document);
    read_part(&mut crate::progress::Counted(file), state, chunk).and_then(Part::conclude)
}

/// Bytes that several threads can read at once, each from its own offset: a report file
/// (positioned reads), or bytes in memory (tests).
trait ReadAt: Sync {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize>;
}

#[cfg(unix)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

impl ReadAt for &[u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let rest = usize::try_from(offset).ok().and_then(|at| self.get(at..)).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

/// `source[at..end]` as a reader.
struct Range<'s> {
    source: &'s dyn ReadAt,
    at: u64,
    end: u64,
}

impl Read for Range<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.end.saturating_sub(self.at)).unwrap_or(usize::MAX).min(buf.len());
        if room == 0 {
            return Ok(0);
        }
        let n = self.source.read_at(&mut buf[..room], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Where to cut `len` bytes of `source` into up to `parts` parts of about equal size: at the
/// first `<testsuite` tag after each share. Whether a cut really falls between two testsuites
/// is only known once the part before it is read ([`parse_in_parts`]); none is found in CDATA
/// text that holds no such tag in the first [`CUT_WINDOW`] bytes after a share.
fn cuts(source: &dyn ReadAt, len: u64, parts: usize) -> Vec<u64> {
    let mut cuts: Vec<u64> = Vec::new();
    let mut window = Vec::new();
    for k in 1..parts as u64 {
        let from = (len / parts as u64 * k).max(cuts.last().map_or(1, |cut| cut + 1));
        window.clear();
        let mut range = Range { source, at: from, end: len.min(from.saturating_add(CUT_WINDOW)) };
        // A read error is the whole reader's to report: no cut here.
        if range.read_to_end(&mut window).is_err() {
            break;
        }
        let tag = memchr::memmem::find_iter(&window, b"<testsuite")
            .find(|&i| matches!(window.get(i + 10), Some(b' ' | b'\t' | b'\r' | b'\n' | b'>' | b'/')));
        if let Some(at) = tag {
            cuts.push(from + at as u64);
        }
    }
    cuts
}

/// Reads `source` cut at `cuts` (increasing offsets of `<testsuite` tags), the parts on up to
/// `threads` threads, and gives what one reader over the whole gives: the cases in order, the
/// suites' counts and reruns (a testsuite never spans two parts), warnings and a cut-short end.
/// Each part after the first is read as if the reader were between two testsuites directly
/// inside the root element; `None` when a part before a cut did not end in that state (a cut
/// inside a comment, CDATA or a nested testsuite), when any part is not XML, or with no cut: the
/// report is then to be read whole, which also says where broken XML breaks. The report's end
/// stays with its last part, so a file cut short is one here too.
///
/// Threads take the parts in order, and this thread joins each to the report as soon as every
/// part before it is joined: a part's cases are held twice (its own and the report's copy) only
/// while it is appended, and what waits is the few parts read ahead of the one being joined.
fn parse_in_parts(
    source: &dyn ReadAt,
    cuts: &[u64],
    threads: usize,
    options: &ParseOptions,
    dialect: Dialect,
    chunk: usize,
) -> Option<Result<ParsedReport, JunitError>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    if cuts.is_empty() {
        return None;
    }
    let starts = std::iter::once(0).chain(cuts.iter().copied());
    let ends = cuts.iter().copied().chain([u64::MAX]);
    let ranges: Vec<(u64, u64)> = starts.zip(ends).collect();
    let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    // Bytes the parts read, taken back from the progress count when the report is read again whole.
    let read_here = std::sync::atomic::AtomicU64::new(0);
    let (done, arrived) = std::sync::mpsc::channel::<(usize, Result<Part, JunitError>)>();
    let worker = |done: std::sync::mpsc::Sender<(usize, Result<Part, JunitError>)>| {
        while !stop.load(Ordering::Relaxed) {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(start, end)) = ranges.get(k) else { break };
            let from = if k == 0 { Begin::Document } else { Begin::InRoot };
            let mut input = crate::progress::Counted(Range { source, at: start, end });
            let part = read_part(&mut input, ReadState::new(options, dialect, None, from), chunk);
            read_here.fetch_add(input.0.at - start, Ordering::Relaxed);
            if done.send((k, part)).is_err() {
                break;
            }
        }
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, ranges.len()))
            .map(|_| {
                let done = done.clone();
                scope.spawn(move || worker(done))
            })
            .collect();
        drop(done);
        let mut waiting = std::collections::BTreeMap::new();
        let mut whole: Option<Part> = None;
        let mut joined = 0;
        let mut usable = true;
        // Ends when every worker has stopped (each drops its sender), a panicked one included.
        'parts: for (k, part) in &arrived {
            waiting.insert(k, part);
            while let Some(part) = waiting.remove(&joined) {
                joined += 1;
                match (whole.as_mut(), part) {
                    (None, Ok(first)) => whole = Some(first),
                    (Some(report), Ok(part)) if report.ends_in_root() => report.join(part),
                    _ => {
                        usable = false;
                        stop.store(true, Ordering::Relaxed);
                        break 'parts;
                    }
                }
            }
        }
        drop(arrived);
        // A panic in a part is the one reading the whole would have met: passed on.
        for worker in workers {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
        let report = (usable && joined == ranges.len()).then(|| whole.map(Part::conclude)).flatten();
        if report.is_none() {
            crate::progress::uncount(read_here.load(Ordering::Relaxed));
        }
        report
    })
}

/// Where a part of a report is read from: the start of the document, or a `<testsuite` tag
/// directly inside its root element (see [`parse_in_parts`]).
#[derive(Clone, Copy, PartialEq)]
enum Begin {
    Document,
    InRoot,
}

/// Reads `input` to its end, from the state `state` starts in; an XML error ends the reading.
fn read_part<'o>(input: &mut dyn Read, mut state: ReadState<'o, '_>, chunk: usize) -> Result<Part, JunitError> {
    let open = usize::try_from(state.depth).unwrap_or(usize::MAX);
    if let Err(e) = xml_stream::read_events_inside(input, chunk, open, |event| state.event(event)) {
        // The case being read when the error came is in the report already, unfinished: not counted.
        let read = state.handed + state.report.cases.len() - usize::from(state.open.is_some());
        return Err(JunitError::Xml { message: e.error.to_string(), position: e.position, cases_read: read });
    }
    Ok(state.into_part())
}

/// What reading (a part of) a report leaves: the cases, and the state the reader was in at its end.
struct Part {
    report: ParsedReport,
    open: Option<Open>,
    saw_root: bool,
    first_element: Option<String>,
    spare: Spare,
    suites: Vec<SuiteFrame>,
    depth: u64,
    shortfalls: Vec<String>,
    surpluses: Vec<String>,
    declared: DeclaredFailing,
}

/// What a report's `<testsuites>`/`<testsuite>` headers declare failed, against what was read:
/// a report that declares failures or errors and lists no failing testcase has lost them.
#[derive(Default)]
struct DeclaredFailing {
    /// The first three headers declaring `failures`/`errors` above zero, as written.
    first: Vec<String>,
    /// How many headers did.
    count: u64,
    /// A testcase read failed, errored, or had a `<failure>`/`<error>` child (a todo's failure
    /// counts here though it fails nothing: its writer counted it).
    failing_read: bool,
}

impl DeclaredFailing {
    /// Notes what a `<testsuites>` or `<testsuite>` header declares.
    fn header(&mut self, element: &str, name: Option<&str>, declared: &Tally) {
        let said: Vec<String> = [1, 2]
            .into_iter()
            .filter_map(|i| declared.0[i].filter(|n| *n > 0).map(|n| format!("{}={n}", Tally::NAMES[i])))
            .collect();
        if said.is_empty() {
            return;
        }
        self.count += 1;
        if self.first.len() < 3 {
            let name = name.map(|n| format!(" `{n}`")).unwrap_or_default();
            self.first.push(format!("<{element}>{name} {}", said.join(", ")));
        }
    }

    fn join(&mut self, next: DeclaredFailing) {
        self.count += next.count;
        self.first.extend(next.first.into_iter().take(3usize.saturating_sub(self.first.len())));
        self.failing_read |= next.failing_read;
    }

    /// What the headers declare, when they declare failures and no testcase read failed.
    fn unreported(&self) -> Option<String> {
        if self.count == 0 || self.failing_read {
            return None;
        }
        let more = self.count.saturating_sub(self.first.len() as u64);
        let more = if more > 0 { format!("; and {more} more") } else { String::new() };
        Some(format!("{}{more}", self.first.join("; ")))
    }
}

impl Part {
    /// True when the reader stopped between two testsuites directly inside the root element,
    /// where a part read [`Begin::InRoot`] starts.
    fn ends_in_root(&self) -> bool {
        self.saw_root && self.open.is_none() && self.suites.is_empty() && self.depth == 1
    }

    /// The part read after this one appended: as if one reader had read both.
    fn join(&mut self, next: Part) {
        let Part { report, open, saw_root, first_element: _, spare: _, suites, depth, shortfalls, surpluses, declared } =
            next;
        let ParsedReport { mut cases, tool, warnings, errors, targets: _ } = report;
        self.report.cases.append(&mut cases);
        // The root's `pytest` mark, or the first nested `<testsuites>` that has one.
        self.report.tool = self.report.tool.take().or(tool);
        self.report.warnings.extend(warnings);
        self.report.errors.extend(errors);
        self.shortfalls.extend(shortfalls);
        self.surpluses.extend(surpluses);
        self.declared.join(declared);
        (self.open, self.saw_root, self.suites, self.depth) = (open, saw_root, suites, depth);
    }

    /// The report the reading gives, once the document ended: a case left open, testsuites that
    /// declare more than was read, a file cut short.
    fn conclude(self) -> Result<ParsedReport, JunitError> {
        let Part {
            mut report,
            mut open,
            saw_root,
            first_element,
            mut spare,
            mut suites,
            depth,
            mut shortfalls,
            surpluses,
            declared,
        } = self;
        if !saw_root {
            return Err(JunitError::NoRoot { root: first_element });
        }
        let mut cut_in = None;
        if let (Some(current), Some(case)) = (open.take(), report.cases.last_mut()) {
            finish(current, case, &mut spare, &mut suites);
            // Its result was still being written: a case with no outcome yet is not a pass.
            if case.status == CaseStatus::Passed {
                case.status = CaseStatus::Error;
                case.set_message(Some("the report ends inside this testcase: its result is unknown".into()));
            }
            cut_in = Some(format!("inside testcase `{}`", case.name));
        }
        // Innermost first, each with what the testsuites still open inside it read.
        let mut inner = Tally::default();
        for frame in suites.iter_mut().rev() {
            frame.read.merge(&inner);
            shortfalls.extend(frame.declared.shortfall(&frame.read, frame.name.as_deref()));
            inner = frame.read;
        }
        let shortfall = first_three(&shortfalls);
        if depth > 0 {
            // Every writer closes its root element last: a file that stops before is a file cut short
            // (a killed writer, a full disk, an upload cut off), and what it would have said is unknown.
            let at = cut_in.unwrap_or_else(|| format!("with {depth} element(s) still open"));
            let mut message =
                format!("the report ends {at}: it was cut short, so results after that point are unknown");
            if let Some(shortfall) = &shortfall {
                message.push_str(&format!(" ({shortfall})"));
            }
            report.cut_short(message);
        } else {
            if let Some(shortfall) = shortfall {
                report.warnings.push(format!("fewer results than declared: {shortfall}"));
            }
            if let Some(surplus) = first_three(&surpluses) {
                report.warnings.push(format!("more testcases than declared: {surplus}"));
            }
            if let Some(declared) = declared.unreported() {
                report.declared_failures_unreported(&declared);
            }
        }
        Ok(report)
    }
}

/// Up to three suites' messages joined, and how many more there are.
fn first_three(messages: &[String]) -> Option<String> {
    (!messages.is_empty()).then(|| {
        let more = messages.len().saturating_sub(3);
        let mut text = messages.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
        if more > 0 {
            text.push_str(&format!("; and {more} more testsuites"));
        }
        text
    })
}

/// What the reader keeps from one event to the next.
struct ReadState<'o, 'b> {
    dialect: Dialect,
    /// Where finished cases go before the report ends, when they are asked for.
    batches: Option<&'o mut Batch<'b>>,
    /// Cases handed out in batches so far: `report.cases[0]` is the report's case number `handed`.
    handed: usize,
    /// How many cases `report.cases` holds when the next batch goes out.
    next_batch: usize,
    /// Cases read before a batch goes out (`usize::MAX` when none do).
    batch_size: usize,
    /// The receiver of the batches said to stop: the rest is not read.
    stopped: bool,
    report: ParsedReport,
    suites: Vec<SuiteFrame>,
    open: Option<Open>,
    saw_root: bool,
    /// The document's first element, while no JUnit element was seen: what it is instead.
    first_element: Option<String>,
    paths: PathCache<'o>,
    spare: Spare,
    /// Elements started and not yet ended: more than zero at the end means the file was cut short.
    depth: u64,
    /// Testsuites that declared more than was read in them.
    shortfalls: Vec<String>,
    /// Leaf testsuites in which more testcases were read than they declare.
    surpluses: Vec<String>,
    declared: DeclaredFailing,
}

impl<'o, 'b> ReadState<'o, 'b> {
    /// A reader at `from`: the start of the document, or between two testsuites directly inside
    /// its root element, which it has seen.
    fn new(
        options: &'o ParseOptions,
        dialect: Dialect,
        batches: Option<(usize, &'o mut Batch<'b>)>,
        from: Begin,
    ) -> Self {
        let batch_size = batches.as_ref().map_or(usize::MAX, |(size, _)| (*size).max(1));
        let in_root = from == Begin::InRoot;
        ReadState {
            dialect,
            next_batch: batch_size,
            batch_size,
            batches: batches.map(|(_, batches)| batches),
            handed: 0,
            stopped: false,
            report: ParsedReport::default(),
            suites: Vec::new(),
            open: None,
            saw_root: in_root,
            first_element: None,
            paths: PathCache { options, last: None, class: crate::model::LastText::default() },
            spare: Spare::default(),
            depth: u64::from(in_root),
            shortfalls: Vec::new(),
            surpluses: Vec::new(),
            declared: DeclaredFailing::default(),
        }
    }

    fn into_part(self) -> Part {
        let ReadState {
            report,
            open,
            saw_root,
            first_element,
            spare,
            suites,
            depth,
            shortfalls,
            surpluses,
            declared,
            ..
        } = self;
        Part { report, open, saw_root, first_element, spare, suites, depth, shortfalls, surpluses, declared }
    }
}

impl ReadState<'_, '_> {
    fn event(&mut self, event: Event<'_>) {
        if self.stopped {
            return;
        }
        let case_ends = matches!(&event, Event::End(_) | Event::Empty(_));
        self.read_event(event);
        if case_ends && self.open.is_none() && self.report.cases.len() >= self.next_batch {
            self.hand_out();
        }
    }

    /// Hands out the longest run of the cases read, short of the last, that nothing read later can
    /// change, so a batch holds what the whole report read at once would hold. The one thing that
    /// changes a case once its testcase has ended is the folding of rerun attempts at the end of
    /// a testsuite ([`fold_reruns`]), which joins a case with no result to the same test right
    /// after it, from the testsuite's first case on: inside the testsuites still open, the batch
    /// stops before the first such pair (before them, no fold can come any more, whatever the
    /// cases are: two passing tests that share a name do not hold batches back for the rest of
    /// the file). The last case stays, for [`count_repeat`] to compare the next one with.
    fn hand_out(&mut self) {
        let cases = &self.report.cases;
        let open_from = self.suites.first().map_or(cases.len(), |outer| outer.first_case.saturating_sub(self.handed));
        let open_from = open_from.min(cases.len());
        let keep_from = cases[open_from..]
            .windows(2)
            .position(|pair| is_bare(&pair[0]) && same_test(&pair[0], &pair[1]))
            .map_or(cases.len().saturating_sub(1), |at| open_from + at);
        if keep_from > 0 {
            let batch = ParsedReport {
                cases: self.report.cases.drain(..keep_from).collect(),
                tool: self.report.tool.clone(),
                ..ParsedReport::default()
            };
            self.handed += keep_from;
            if let Some(batches) = self.batches.as_mut()
                && batches(batch).is_break()
            {
                self.stopped = true;
            }
        }
        self.next_batch = self.report.cases.len().saturating_add(self.batch_size);
    }

    fn read_event(&mut self, event: Event<'_>) {
        let reserve_cap = self.batch_size.min(1 << 20);
        let handed = self.handed;
        let ReadState {
            dialect,
            report,
            suites,
            open,
            saw_root,
            first_element,
            paths,
            spare,
            depth,
            shortfalls,
            surpluses,
            declared,
            ..
        } = self;
        let dialect = *dialect;
        match event {
            Event::Start(_) => *depth += 1,
            Event::End(_) => *depth = depth.saturating_sub(1),
            _ => {}
        }
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                match local_name(e.name().into_inner()) {
                    "testsuites" => {
                        *saw_root = true;
                        reserve_for(report, e, reserve_cap);
                        report.tool = report.tool.take().or_else(|| writer(e, "pytest tests"));
                        let root = suite_frame(e);
                        declared.header("testsuites", root.name.as_deref(), &root.declared);
                    }
                    "testsuite" => {
                        if !*saw_root {
                            reserve_for(report, e, reserve_cap);
                            report.tool = writer(e, "pytest");
                        }
                        *saw_root = true;
                        let mut frame = suite_frame(e);
                        declared.header("testsuite", frame.name.as_deref(), &frame.declared);
                        frame.first_case = handed + report.cases.len();
                        if let Some(parent) = suites.last_mut() {
                            parent.nested = true;
                        }
                        let at = suites.len();
                        frame.name_at = frame.name.as_ref().map(|_| at).or(suites.last().and_then(|p| p.name_at));
                        frame.file_at = frame.file.as_ref().map(|_| at).or(suites.last().and_then(|p| p.file_at));
                        if !empty {
                            suites.push(frame);
                        } else {
                            shortfalls.extend(frame.declared.shortfall(&frame.read, frame.name.as_deref()));
                        }
                    }
                    "testcase" => {
                        *saw_root = true;
                        if let (Some(previous), Some(case)) = (open.take(), report.cases.last_mut()) {
                            // A testcase opened inside another: an unclosed case; keep both.
                            declared.failing_read |= finish(previous, case, spare, suites);
                        }
                        // Built where it stays: a case is big, and read in place until it ends.
                        report.cases.push(match dialect {
                            Dialect::Generic => start_case(e, suites, paths),
                            Dialect::NodeTest => start_node_case(e, suites),
                        });
                        let current = Open {
                            failure_type: None,
                            inside: Inside::Nothing,
                            depth_in_child: 0,
                            muted_from: None,
                            text: std::mem::take(&mut spare.text),
                            output: std::mem::take(&mut spare.output),
                            attempt: None,
                            passed_on_retry: false,
                            dialect,
                            children: [0; 3],
                            todo: false,
                        };
                        match report.cases.last_mut() {
                            Some(case) if empty => {
                                declared.failing_read |= finish(current, case, spare, suites);
                                count_repeat(&report.cases, handed, suites);
                            }
                            _ => *open = Some(current),
                        }
                    }
                    other => {
                        if !*saw_root && first_element.is_none() {
                            *first_element = Some(other.to_string());
                        }
                        if let (Some(current), Some(case)) = (open.as_mut(), report.cases.last_mut()) {
                            if current.inside != Inside::Nothing {
                                // Nested element inside a child: surefire/nextest attempts carry
                                // <stackTrace> (kept) and their own <system-out>/<system-err> (muted).
                                if !empty {
                                    current.depth_in_child += 1;
                                    if current.muted_from.is_none() && matches!(other, "system-out" | "system-err") {
                                        current.muted_from = Some(current.depth_in_child);
                                    }
                                }
                                return;
                            }
                            child_start(current, case, other, e, empty);
                        }
                    }
                }
            }
            Event::End(ref e) => match local_name(e.name().into_inner()) {
                "testcase" => {
                    if let (Some(current), Some(case)) = (open.take(), report.cases.last_mut()) {
                        declared.failing_read |= finish(current, case, spare, suites);
                        count_repeat(&report.cases, handed, suites);
                    }
                }
                "testsuite" => {
                    if let Some(frame) = suites.pop() {
                        end_suite(frame, report, handed, suites, shortfalls, surpluses);
                    }
                }
                _ => {
                    if let (Some(current), Some(case)) = (open.as_mut(), report.cases.last_mut()) {
                        if current.depth_in_child > 0 {
                            if current.muted_from == Some(current.depth_in_child) {
                                current.muted_from = None;
                            }
                            current.depth_in_child -= 1;
                        } else if current.inside != Inside::Nothing {
                            child_end(current, case);
                        }
                    }
                }
            },
            Event::Text(ref t) => {
                if let Some(current) = reading(open) {
                    push_text(current, &t.xml10_content());
                }
            }
            Event::CData(ref t) => {
                if let Some(current) = reading(open) {
                    push_text(current, &t.xml10_content());
                }
            }
            Event::GeneralRef(ref r) => {
                if let Some(current) = reading(open) {
                    if let Ok(Some(ch)) = r.resolve_char_ref() {
                        let mut utf8 = [0u8; 4];
                        push_text(current, ch.encode_utf8(&mut utf8));
                    } else {
                        let name = r.xml10_content();
                        match quick_xml::escape::resolve_predefined_entity(&name) {
                            Some(resolved) => push_text(current, resolved),
                            // An entity declared in a DOCTYPE: keep it visible rather than drop it.
                            None => push_text(current, &format!("&{name};")),
                        }
                    }
                }
            }
            // Declarations (any `encoding=`), DOCTYPE, comments, processing instructions and the end.
            _ => {}
        }
    }
}

/// Counts the case just read as a repeat when it is the same test as the case before it in the
/// same suite and that one has no result of its own (see [`fold_reruns`]). `cases[0]` is the
/// report's case number `handed`.
fn count_repeat(cases: &[Case], handed: usize, suites: &mut [SuiteFrame]) {
    let [.., before, last] = cases else {
        return;
    };
    let in_suite = suites.last().is_some_and(|inner| handed + cases.len() - 2 >= inner.first_case);
    if in_suite
        && is_bare(before)
        && same_test(before, last)
        && let Some(inner) = suites.last_mut()
    {
        inner.repeats += 1;
    }
}

/// A testcase with no result element, message or attempt: what a rerun plugin writes for an
/// attempt it reran.
fn is_bare(case: &Case) -> bool {
    case.status == CaseStatus::Passed
        && case.message().is_none()
        && case.extra().details.is_none()
        && case.extra().attempts.is_empty()
}

fn same_test(a: &Case, b: &Case) -> bool {
    a.name == b.name && a.classname == b.classname && a.file == b.file && a.line == b.line
}

/// A `<testsuite>` ends: its reruns are folded when its header says they are reruns, and what it
/// declares is compared with what was read in it. `report.cases[0]` is the report's case number
/// `handed`; the cases handed out before are no part of any fold (see [`ReadState::hand_out`]).
fn end_suite(
    mut frame: SuiteFrame,
    report: &mut ParsedReport,
    handed: usize,
    outer: &mut [SuiteFrame],
    shortfalls: &mut Vec<String>,
    surpluses: &mut Vec<String>,
) {
    let tests = |frame: &SuiteFrame| frame.read.0[0].unwrap_or(0);
    let declared = frame.declared.0[0];
    // pytest-rerunfailures writes every attempt as a testcase of its own, the attempts it reran
    // with no result, and counts the test once in the header. Tests that merely share a name
    // (a duplicated jest title) are each counted: only a header that counts the repeats once
    // tells them apart, so without one nothing is folded.
    if frame.repeats > 0 && declared == Some(tests(&frame) - frame.repeats) {
        let folded = fold_reruns(&mut report.cases, frame.first_case.saturating_sub(handed));
        frame.read.0[0] = Some(tests(&frame).saturating_sub(folded));
        frame.repeats = frame.repeats.saturating_sub(folded);
    }
    // What it read counts in the testsuite around it from now on.
    if let Some(parent) = outer.last_mut() {
        parent.read.merge(&frame.read);
        parent.repeats += frame.repeats;
    }
    shortfalls.extend(frame.declared.shortfall(&frame.read, frame.name.as_deref()));
    if let Some(declared) = declared
        && !frame.nested
        && tests(&frame) > declared
    {
        let hint = match frame.repeats {
            0 => String::new(),
            n => format!(" ({n} of them repeat the testcase before them, which has no result: rerun attempts?)"),
        };
        surpluses.push(format!(
            "testsuite `{}` declares tests={declared} but {} testcases were read{hint}",
            frame.name.as_deref().unwrap_or("(unnamed)"),
            tests(&frame)
        ));
    }
}

/// Folds the runs of one test written as consecutive testcases, all but the last with no result
/// (pytest-rerunfailures' attempts), from `first` on, into one case whose earlier attempts they
/// are: flaky when the last attempt passed. Returns how many testcases it removed.
fn fold_reruns(cases: &mut Vec<Case>, first: usize) -> u64 {
    let tail = cases.split_off(first);
    let before = tail.len();
    let mut run: Vec<Case> = Vec::new();
    for case in tail {
        if run.last().is_some_and(|earlier| !same_test(earlier, &case)) {
            close_run(&mut run, cases);
        }
        let bare = is_bare(&case);
        run.push(case);
        if !bare {
            close_run(&mut run, cases);
        }
    }
    close_run(&mut run, cases);
    (before - (cases.len() - first)) as u64
}

/// The last testcase of a run is the test's outcome; the ones before it, its earlier attempts.
fn close_run(run: &mut Vec<Case>, cases: &mut Vec<Case>) {
    let Some(mut last) = run.pop() else {
        return;
    };
    if !run.is_empty() {
        last.extra_mut().attempts = run
            .drain(..)
            .map(|attempt| Attempt {
                // Rerun plugins rerun failed (or errored) attempts only; which one is not written.
                status: CaseStatus::Failed,
                duration_ms: attempt.duration_ms,
                message: Some("rerun: the report gives this attempt no result of its own".into()),
                details: None,
            })
            .collect();
        last.extra_mut().retries = last.extra().attempts.len() as u32;
        if last.status == CaseStatus::Passed {
            last.status = CaseStatus::Flaky;
        }
    }
    cases.push(last);
}

/// Reserves room for the root element's `tests=` count (capped: the count is not trusted), so
/// 100,000 cases are not copied through a dozen reallocations; `cap` is a batch's size when
/// the cases go out in batches.
fn reserve_for(report: &mut ParsedReport, e: &BytesStart<'_>, cap: usize) {
    if let Some(tests) = attr(e, "tests").and_then(|t| t.trim().parse::<usize>().ok()) {
        report.cases.reserve(tests.min(cap));
    }
}

/// `pytest` when the root element has the name pytest gives it (`<testsuites name="pytest tests">`,
/// or a lone `<testsuite name="pytest">` before pytest 5.1): its `line` attributes are 0-based,
/// which the Python ecosystem's `locate` corrects.
fn writer(e: &BytesStart<'_>, pytest_name: &str) -> Option<String> {
    (attr(e, "name").as_deref() == Some(pytest_name)).then(|| "pytest".to_string())
}

/// The open case when its text is being kept (inside a child, not in a muted nested element).
fn reading(open: &mut Option<Open>) -> Option<&mut Open> {
    open.as_mut().filter(|c| c.inside != Inside::Nothing && c.muted_from.is_none())
}

fn utf8_hint(message: &str) -> &'static str {
    if message.to_ascii_lowercase().contains("utf") {
        " (fcorr reads UTF-8 reports; convert the file, e.g. `iconv -f ISO-8859-1 -t UTF-8`)"
    } else {
        ""
    }
}

fn push_text(current: &mut Open, text: &str) {
    let (target, cap) = if current.inside == Inside::Output {
        (&mut current.output, OUTPUT_CAP)
    } else {
        (&mut current.text, DETAILS_CAP)
    };
    // Keep a little over the cap so cap_text can say that something was cut.
    if target.len() <= cap {
        target.push_str(text);
    }
}

fn suite_frame(e: &BytesStart<'_>) -> SuiteFrame {
    let mut frame = SuiteFrame {
        name: None,
        file: None,
        declared: Tally::default(),
        read: Tally::default(),
        first_case: 0,
        repeats: 0,
        nested: false,
        name_at: None,
        file_at: None,
    };
    for attribute in e.attributes().flatten() {
        let key = attribute.key.local_name();
        match key.as_ref() {
            "name" => frame.name = Some(value_of(&attribute)).filter(|v| !v.is_empty()),
            "file" | "filepath" => frame.file = Some(value_of(&attribute)).filter(|v| !v.is_empty()),
            other => {
                // `skips` is nextest's and some older writers' spelling.
                let other = if other == "skips" { "skipped" } else { other };
                if let Some(i) = Tally::NAMES.iter().position(|n| *n == other) {
                    frame.declared.0[i] = value_of(&attribute).trim().parse().ok();
                }
            }
        }
    }
    frame
}

fn cow_value<'a>(attribute: &Attribute<'a>) -> Cow<'a, str> {
    attribute.normalized_value(XmlVersion::Implicit1_0).unwrap_or_else(|_| attribute.value.clone())
}

fn value_of(attribute: &Attribute<'_>) -> String {
    cow_value(attribute).into_owned()
}

fn start_case(e: &BytesStart<'_>, suites: &[SuiteFrame], paths: &mut PathCache<'_>) -> Case {
    let mut found = CaseAttributes::default();
    let plain = plain_attributes(e.attributes_raw(), |key, raw| {
        found.take(local_name(key), || plain_value(key, raw));
    });
    if !plain {
        // Written some way only quick-xml's iterator reads (or skips) as it should: it reads them all.
        found = CaseAttributes::default();
        // Duplicate-attribute checks cost a scan per attribute; a duplicate just overwrites.
        for attribute in e.attributes().with_checks(false).flatten() {
            found.take(attribute.key.local_name().into_inner(), || cow_value(&attribute));
        }
    }
    let inherited = |at: fn(&SuiteFrame) -> Option<usize>, text: fn(&SuiteFrame) -> Option<&str>| {
        suites.last().and_then(at).and_then(|i| suites.get(i)).and_then(text)
    };
    let suite_name = inherited(|s| s.name_at, |s| s.name.as_deref());
    // PHPUnit writes both `class` (PHP namespace) and `classname` (dotted): prefer the latter.
    let classname = found.classname.or(found.class).or_else(|| suite_name.map(Cow::Borrowed));
    let mut file = found.file.or_else(|| inherited(|s| s.file_at, |s| s.file.as_deref()).map(Cow::Borrowed));
    if file.is_none() {
        // vitest and node:test put the test file in classname or the suite name.
        file = [classname.as_deref(), suite_name]
            .into_iter()
            .flatten()
            .find(|s| looks_like_source_path(s))
            .map(Cow::Borrowed);
    }
    let file = file.map(|f| paths.relative(&f));
    Case {
        name: match found.name {
            Some(name) if !name.is_empty() => crate::model::CaseName::from(&*name),
            _ => "(unnamed)".into(),
        },
        classname: classname.map(|c| paths.class.share(&c)),
        file,
        line: found.line,
        duration_ms: found.duration_ms,
        status: found.status.unwrap_or(CaseStatus::Passed),
        ..Case::default()
    }
}

/// The testcase attributes a case is built from, borrowed from the tag (copied only when kept).
#[derive(Default)]
struct CaseAttributes<'a> {
    name: Option<Cow<'a, str>>,
    classname: Option<Cow<'a, str>>,
    class: Option<Cow<'a, str>>,
    file: Option<Cow<'a, str>>,
    line: Option<u32>,
    duration_ms: Option<f64>,
    status: Option<CaseStatus>,
}

impl<'a> CaseAttributes<'a> {
    /// Takes one attribute by its local name; `value` (normalized) is only worked out for the ones
    /// kept. A repeated attribute overwrites; empty class names and files count as missing.
    fn take(&mut self, key: &str, value: impl FnOnce() -> Cow<'a, str>) {
        match key {
            "name" => self.name = Some(value()),
            "classname" | "class" | "file" | "filepath" => {
                let value = value();
                if !value.is_empty() {
                    let slot = match key {
                        "classname" => &mut self.classname,
                        "class" => &mut self.class,
                        _ => &mut self.file,
                    };
                    *slot = Some(value);
                }
            }
            "line" | "lineno" => self.line = value().trim().parse().ok(),
            "time" => self.duration_ms = parse_seconds(&value()).map(|s| s * 1000.0),
            "status" | "result" => {
                if let Some(status) = status_attribute(&value()) {
                    self.status = Some(status);
                }
            }
            _ => {}
        }
    }
}

/// The part of an element or attribute name after its namespace prefix, as `QName::local_name`
/// gives it.
fn local_name(key: &str) -> &str {
    // A byte loop: names are short, and a `char` search costs more here than it finds.
    match key.bytes().position(|b| b == b':') {
        Some(colon) => key.get(colon + 1..).unwrap_or(key),
        None => key,
    }
}

/// The value of an attribute [`plain_attributes`] found, as quick-xml normalizes it.
fn plain_value<'a>(key: &'a str, raw: &'a str) -> Cow<'a, str> {
    if needs_normalizing(raw) {
        cow_value(&Attribute { key: QName(key), value: Cow::Borrowed(raw) })
    } else {
        Cow::Borrowed(raw)
    }
}

/// False when quick-xml would leave a raw attribute value as it is: it holds no reference and no tab
/// or line break to turn into a space (XML 1.0 attribute normalization).
fn needs_normalizing(raw: &str) -> bool {
    // A fold rather than `any`: without an early exit the loop is vectorized, and values are short.
    raw.bytes().fold(false, |found, b| found | matches!(b, b'&' | b'\t' | b'\r' | b'\n'))
}

/// Hands each `key="value"` (or `key='value'`) of a start tag's attribute text to `each`, raw,
/// exactly as quick-xml's attribute iterator would read it, only faster. False when the text is
/// written any other way (a key without a value, an unquoted or unclosed value...): what was
/// handed on so far is then to be dropped and quick-xml's iterator used instead.
fn plain_attributes<'a>(raw: &'a str, mut each: impl FnMut(&'a str, &'a str)) -> bool {
    let bytes = raw.as_bytes();
    let space = |i: usize| bytes.get(i).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    let mut i = 0;
    loop {
        while space(i) {
            i += 1;
        }
        if i >= bytes.len() {
            return true;
        }
        // The key's first byte is taken whatever it is, even `=`, as quick-xml does.
        let key_start = i;
        i += 1;
        while i < bytes.len() && bytes[i] != b'=' && !space(i) {
            i += 1;
        }
        let key_end = i;
        while space(i) {
            i += 1;
        }
        if bytes.get(i) != Some(&b'=') {
            return false;
        }
        i += 1;
        while space(i) {
            i += 1;
        }
        let quote = match bytes.get(i) {
            Some(&quote @ (b'"' | b'\'')) => quote,
            _ => return false,
        };
        let value_start = i + 1;
        let Some(length) = bytes.get(value_start..).and_then(|rest| rest.iter().position(|&b| b == quote)) else {
            return false;
        };
        let value_end = value_start + length;
        // Cut at ASCII bytes, so on character boundaries: `get` never fails here.
        let (Some(key), Some(value)) = (raw.get(key_start..key_end), raw.get(value_start..value_end)) else {
            return false;
        };
        each(key, value);
        i = value_end + 1;
    }
}

/// A `node --test` case: named by its `describe` path, as node's own spec reporter nests it.
fn start_node_case(e: &BytesStart<'_>, suites: &[SuiteFrame]) -> Case {
    let mut case = Case { status: CaseStatus::Passed, ..Case::default() };
    let title = attr(e, "name").filter(|n| !n.is_empty()).unwrap_or_else(|| "(unnamed)".into());
    // The named testsuites from the innermost out, by their `name_at` links: unnamed ones cost nothing.
    let mut path = Vec::new();
    let mut at = suites.last().and_then(|s| s.name_at);
    while let Some(frame) = at.and_then(|i| suites.get(i)) {
        path.extend(frame.name.as_deref());
        at = at.and_then(|i| i.checked_sub(1)).and_then(|parent| suites.get(parent)).and_then(|p| p.name_at);
    }
    path.reverse();
    case.classname = (!path.is_empty()).then(|| path.join(" > ")).map(Into::into);
    case.name = match &case.classname {
        Some(parents) => format!("{parents} > {title}").into(),
        None => title.into(),
    };
    case.duration_ms = attr(e, "time").as_deref().and_then(parse_seconds).map(|s| s * 1000.0);
    case
}

/// Consecutive cases nearly always share a file: relativize each distinct path once.
struct PathCache<'o> {
    options: &'o ParseOptions,
    last: Option<(String, crate::model::SharedText)>,
    /// Consecutive cases nearly always share a class too: one copy for the group.
    class: crate::model::LastText,
}

impl PathCache<'_> {
    fn relative(&mut self, file: &str) -> crate::model::SharedText {
        match &self.last {
            Some((raw, relative)) if raw == file => relative.clone(),
            _ => {
                let relative: crate::model::SharedText = self.options.relative_path(file).into();
                self.last = Some((file.to_string(), relative.clone()));
                relative
            }
        }
    }
}

/// Statuses some writers put on the testcase itself (googletest/Bazel `result=`, Ant `status=`).
fn status_attribute(value: &str) -> Option<CaseStatus> {
    match value.trim().to_ascii_lowercase().as_str() {
        "skipped" | "skip" | "notrun" | "disabled" | "ignored" | "suppressed" | "pending" => Some(CaseStatus::Skipped),
        "failed" | "failure" | "fail" => Some(CaseStatus::Failed),
        "error" | "errored" => Some(CaseStatus::Error),
        // "run", "completed", "passed", "success"...: the children decide.
        _ => None,
    }
}

fn looks_like_source_path(s: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx", ".py", ".go", ".rs", ".java", ".kt", ".php",
        ".rb",
    ];
    !s.contains(' ') && EXTENSIONS.iter().any(|ext| s.ends_with(ext))
}

fn parse_seconds(value: &str) -> Option<f64> {
    let value = value.trim();
    // Some writers format times with thousands separators ("1,200.5").
    let seconds =
        if value.as_bytes().contains(&b',') { value.replace(',', "").parse::<f64>() } else { value.parse::<f64>() };
    seconds.ok().filter(|s| s.is_finite() && *s >= 0.0)
}

/// The first attribute with the local name `key`, normalized.
fn attr(e: &BytesStart<'_>, key: &str) -> Option<String> {
    let mut found = None;
    let plain = plain_attributes(e.attributes_raw(), |name, raw| {
        if found.is_none() && local_name(name) == key {
            found = Some(plain_value(name, raw));
        }
    });
    if plain {
        return found.map(Cow::into_owned);
    }
    e.attributes().flatten().find(|a| a.key.local_name().as_ref() == key).map(|a| value_of(&a))
}

/// Messages that say nothing (go-junit-report and gotestsum write `message="Failed"`).
fn is_placeholder(message: &str) -> bool {
    message.trim().is_empty() || message.trim().eq_ignore_ascii_case("failed")
}

fn child_start(current: &mut Open, case: &mut Case, name: &str, e: &BytesStart<'_>, empty: bool) {
    let inside = match name {
        "failure" => Inside::Failure,
        "error" => Inside::Error,
        "skipped" => Inside::Skipped,
        "system-out" | "system-err" => Inside::Output,
        "flakyFailure" | "flakyError" | "rerunFailure" | "rerunError" => Inside::Attempt,
        // <properties>, <property>, vendor extensions: ignored, their text is never read.
        _ => return,
    };
    match inside {
        Inside::Failure | Inside::Error => {
            // Several result elements in one case: the most severe decides (an <error> over a
            // <failure> over a <skipped>), as suite totals and other readers count it; among
            // equals the first decides and later ones add nothing. The exception is node:test's
            // todo, written as <skipped type="todo"/> next to the <failure> of a todo test that
            // threw: `node --test` fails nothing for it, so the skip stands and the text stays as
            // details (in either order; see the <skipped> arm).
            let status = if inside == Inside::Failure { CaseStatus::Failed } else { CaseStatus::Error };
            let outranks = !current.todo
                && match case.status {
                    CaseStatus::Failed => status == CaseStatus::Error,
                    CaseStatus::Error | CaseStatus::Timeout => false,
                    _ => true,
                };
            if outranks {
                case.status = status;
                case.set_message(attr(e, "message").filter(|m| !is_placeholder(m)));
                // This child's text is the case's details now, not the one it outranks.
                case.extra_mut().details = None;
                current.failure_type = attr(e, "type").filter(|t| !t.trim().is_empty());
            }
        }
        Inside::Skipped => {
            // googletest writes `result="skipped"` and a <skipped message=...> child; a node:test
            // todo after the failure of the todo test that threw wins over it, as above.
            let status = case.status;
            let todo = attr(e, "type").as_deref() == Some("todo");
            current.todo |= todo;
            let failed_by_child = todo && status.is_failure() && current.children[0] + current.children[1] > 0;
            if status == CaseStatus::Passed
                || (status == CaseStatus::Skipped && case.message().is_none())
                || failed_by_child
            {
                case.status = CaseStatus::Skipped;
                // gotestsum puts the whole `=== RUN ... --- SKIP` transcript in message=.
                let message =
                    attr(e, "message").and_then(|m| first_meaningful_line(&m, &case.name).map(str::to_string));
                case.set_message(message);
                if attr(e, "type").as_deref() == Some("todo") {
                    // node:test: `message="true"` for a bare todo, else the todo's reason.
                    let message = match case.take_message().filter(|m| m != "true") {
                        Some(reason) => format!("todo: {reason}"),
                        None => "todo".to_string(),
                    };
                    case.set_message(Some(message));
                }
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
                message: attr(e, "message").filter(|m| !m.is_empty()).or_else(|| attr(e, "type")),
                details: None,
            });
        }
        Inside::Output | Inside::Nothing => {}
    }
    match inside {
        Inside::Failure => current.children[0] += 1,
        Inside::Error => current.children[1] += 1,
        Inside::Skipped => current.children[2] += 1,
        _ => {}
    }
    current.inside = inside;
    current.text.clear();
    if empty {
        child_end(current, case);
    }
}

fn child_end(current: &mut Open, case: &mut Case) {
    // Borrowed, not taken: the buffer keeps its capacity for the next child and the next case.
    let text = current.text.trim();
    match current.inside {
        Inside::Failure | Inside::Error | Inside::Skipped => {
            if current.dialect == Dialect::NodeTest
                && current.inside != Inside::Skipped
                && case.status.is_failure()
                && let Some(first) = text.lines().next().and_then(node_failure_line)
            {
                // Node flattens newlines out of the message attribute; the text's first line is clean.
                case.set_message(Some(first.to_string()));
            }
            let deciding = case.extra().details.is_none();
            if case.message().is_none() && deciding {
                case.set_message(
                    first_meaningful_line(text, &case.name)
                        .map(str::to_string)
                        .or_else(|| current.failure_type.clone().filter(|_| current.inside != Inside::Skipped)),
                );
            }
            if current.inside != Inside::Skipped && deciding && !text.is_empty() {
                case.extra_mut().details = Some(crate::model::Text::capped(text, DETAILS_CAP));
            }
        }
        Inside::Attempt => {
            if let Some(mut attempt) = current.attempt.take() {
                if !text.is_empty() {
                    attempt.details = Some(cap_text(text, DETAILS_CAP));
                }
                case.extra_mut().attempts.push(attempt);
            }
        }
        Inside::Output => {
            if !current.output.is_empty() && !current.output.ends_with('\n') {
                current.output.push('\n');
            }
        }
        Inside::Nothing => {}
    }
    current.text.clear();
    current.inside = Inside::Nothing;
    current.depth_in_child = 0;
    current.muted_from = None;
}

/// The message in the first line of node's failure text: `Error [ERR_TEST_FAILURE]: msg`, or
/// `[Error [ERR_TEST_FAILURE]: msg] {` when node printed the error object with its properties.
fn node_failure_line(line: &str) -> Option<&str> {
    let line = line.trim();
    let line = match line.strip_prefix('[') {
        // `] { code: 'ERR_TEST_FAILURE', failureType: …, cause: … }` on the same line (a test
        // cancelled by its parent): the message ends where the properties start.
        Some(inner) => inner
            .rsplit_once("] { code:")
            .map(|(message, _)| message)
            .or_else(|| inner.strip_suffix("] {"))
            .or_else(|| inner.strip_suffix(']'))
            .unwrap_or(inner),
        None => line,
    };
    let message = line.strip_prefix("Error [ERR_TEST_FAILURE]:").unwrap_or(line).trim();
    (!message.is_empty()).then_some(message)
}

/// The first line of a failure text that says something: not go's `=== RUN` banner, not
/// PHPUnit's leading `Class::method` line.
fn first_meaningful_line<'t>(text: &'t str, case_name: &str) -> Option<&'t str> {
    const BANNERS: [&str; 3] = ["=== RUN", "--- FAIL", "--- SKIP"];
    text.lines().map(str::trim).find(|line| {
        let banner = BANNERS.iter().any(|b| line.starts_with(b));
        let phpunit_id = line.ends_with(case_name) && line.contains("::") && !line.contains(' ');
        !(line.is_empty() || banner || phpunit_id)
    })
}

/// Text buffers handed from one case to the next, so reading a case allocates only what it keeps.
#[derive(Default)]
struct Spare {
    text: String,
    output: String,
}

/// Ends the case being read: what only its end decides, and its buffers back to `spare`. True
/// when the case failed or a `<failure>`/`<error>` child said it did (what a header counts).
fn finish(mut current: Open, case: &mut Case, spare: &mut Spare, suites: &mut [SuiteFrame]) -> bool {
    if current.inside != Inside::Nothing {
        child_end(&mut current, case);
    }
    if case.status.is_failure() && case.message().is_none() {
        case.set_message(current.failure_type.take());
    }
    if !case.extra().attempts.is_empty() {
        case.extra_mut().retries = case.extra().attempts.len() as u32;
        if current.passed_on_retry && case.status == CaseStatus::Passed {
            case.status = CaseStatus::Flaky;
        }
    }
    if case.status != CaseStatus::Passed && !current.output.trim().is_empty() {
        case.extra_mut().output = Some(crate::model::Text::capped(current.output.trim_end(), OUTPUT_CAP));
    }
    // Counted as writers count: each failing child, or the status when a writer set it by attribute.
    let [mut failures, mut errors, mut skipped] = current.children;
    match case.status {
        CaseStatus::Failed if failures == 0 => failures = 1,
        CaseStatus::Error if errors == 0 => errors = 1,
        CaseStatus::Skipped if skipped == 0 => skipped = 1,
        _ => {}
    }
    if let Some(inner) = suites.last_mut() {
        inner.read.add([1, failures, errors, skipped]);
    }
    current.text.clear();
    current.output.clear();
    spare.text = current.text;
    spare.output = current.output;
    case.status.is_failure() || failures + errors > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(xml: &str) -> Result<ParsedReport, JunitError> {
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
        // Names up to 24 bytes, most of a report's, take no allocation of their own.
        assert!(c.iter().all(|case| !case.name.is_heap_allocated()));
        assert_eq!(c[1].status, CaseStatus::Failed);
        assert_eq!(c[1].message(), Some("assert 1 == 2"));
        assert!(c[1].details().as_deref().unwrap().contains(">   assert 1 == 2"));
        assert_eq!(c[1].output().as_deref(), Some("printed ünïcode"));
        assert_eq!(c[1].duration_ms, Some(1_200_500.0));
        assert_eq!((c[2].status, c[2].message()), (CaseStatus::Skipped, Some("not now")));
        assert_eq!(c[3].status, CaseStatus::Error);
    }

    #[test]
    fn surefire_flaky_and_rerun_attempts() {
        let xml = r#"<testsuite name="S"><testcase name="t1" classname="C">
<flakyFailure message="first try" type="AssertionError"><stackTrace>at C.t1</stackTrace></flakyFailure></testcase>
<testcase name="t2" classname="C"><failure message="still"/><rerunFailure message="again"/></testcase></testsuite>"#;
        let c = parse_str(xml).unwrap().cases;
        assert_eq!((c[0].status, c[0].extra().retries), (CaseStatus::Flaky, 1));
        assert_eq!(c[0].extra().attempts[0].details.as_deref(), Some("at C.t1"));
        assert_eq!((c[1].status, c[1].extra().retries), (CaseStatus::Failed, 1));
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
    fn references_in_output_stay_in_the_output() {
        let xml = r#"<testsuite><testcase name="t"><failure message="m">trace &lt;here&gt;</failure>
<system-out>a &amp; b &#x263A;</system-out></testcase></testsuite>"#;
        let c = parse_str(xml).unwrap().cases;
        assert_eq!(c[0].details().as_deref(), Some("trace <here>"));
        assert_eq!(c[0].output().as_deref(), Some("a & b \u{263A}"));
    }

    #[test]
    fn placeholder_messages_give_way_to_the_text() {
        let xml = r#"<testsuite><testcase name="TestX"><failure message="Failed" type="">=== RUN   TestX
    x_test.go:9: got 1, want 2
--- FAIL: TestX (0.00s)</failure></testcase></testsuite>"#;
        let c = parse_str(xml).unwrap().cases;
        assert_eq!(c[0].message(), Some("x_test.go:9: got 1, want 2"));
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
        assert_eq!(c[1].message(), Some("expected 37.8C"));
        assert!(c[1].details().as_deref().unwrap().contains("t.test.js:23:14"));
        assert_eq!(c[2].message(), Some("flaky on purpose"));
        // The generic reader keeps node's meaningless classname; that is why the dialect exists.
        assert_eq!(parse_str(xml).unwrap().cases[0].classname.as_deref(), Some("test"));
    }

    #[test]
    fn pytest_reports_say_they_are_pytests() {
        let tool = |xml: &str| parse_str(xml).unwrap().tool;
        let case = r#"<testcase classname="t" name="a" file="t.py" line="9"/>"#;
        assert_eq!(
            tool(&format!(
                r#"<testsuites name="pytest tests"><testsuite name="pytest">{case}</testsuite></testsuites>"#
            ))
            .as_deref(),
            Some("pytest")
        );
        assert_eq!(tool(&format!(r#"<testsuite name="pytest">{case}</testsuite>"#)).as_deref(), Some("pytest"));
        assert_eq!(tool(&format!(r#"<testsuites><testsuite name="pytest-ish">{case}</testsuite></testsuites>"#)), None);
        // The line stays as written: the Python ecosystem's `locate` knows what it means.
        assert_eq!(
            parse_str(&format!(r#"<testsuite name="pytest">{case}</testsuite>"#)).unwrap().cases[0].line,
            Some(9)
        );
    }

    #[test]
    fn a_todo_that_failed_is_skipped_in_either_order() {
        // node:test 20: a `todo` test that threw; `node --test` exits 0.
        let xml = r#"<testsuites><testcase name="coupons" classname="test" failure="boom">
<skipped type="todo" message="not written yet"/><failure type="testCodeFailure" message="boom">
Error [ERR_TEST_FAILURE]: boom</failure></testcase>
<testcase name="bare" classname="test"><skipped type="todo" message="true"/><failure message="x">x</failure></testcase>
<testcase name="reversed"><failure message="y">y</failure><skipped type="todo" message="later"/></testcase>
<testcase name="plain skip"><failure message="z">z</failure><skipped message="skip"/></testcase></testsuites>"#;
        for parsed in [
            parse_str(xml).unwrap(),
            parse_dialect(&mut xml.as_bytes(), &ParseOptions::default(), Dialect::NodeTest).unwrap(),
        ] {
            let got: Vec<_> =
                parsed.cases.iter().map(|c| (c.status, c.message(), c.extra().details.is_some())).collect();
            assert_eq!(
                got,
                [
                    (CaseStatus::Skipped, Some("todo: not written yet"), true),
                    (CaseStatus::Skipped, Some("todo"), true),
                    (CaseStatus::Skipped, Some("todo: later"), true),
                    // Only a todo wins over a failure: elsewhere the most severe result decides.
                    (CaseStatus::Failed, Some("z"), true),
                ]
            );
        }
    }

    #[test]
    fn node_failure_lines_in_both_shapes() {
        // Node 20.20: a plain assertion prints the error object, an Error with a message does not.
        assert_eq!(node_failure_line("[Error [ERR_TEST_FAILURE]: 1 == 2] {"), Some("1 == 2"));
        assert_eq!(node_failure_line("Error [ERR_TEST_FAILURE]: expected 37.8C"), Some("expected 37.8C"));
        assert_eq!(node_failure_line("TypeError: x is not a function"), Some("TypeError: x is not a function"));
        assert_eq!(node_failure_line("  "), None);
        // A test cancelled because its describe's before hook threw: the object on one line.
        assert_eq!(
            node_failure_line(
                "[Error [ERR_TEST_FAILURE]: test did not finish before its parent and was cancelled] { code: \
                 'ERR_TEST_FAILURE', failureType: 'cancelledByParent', cause: 'test did not finish before its parent \
                 and was cancelled' }"
            ),
            Some("test did not finish before its parent and was cancelled")
        );
    }

    #[test]
    fn reading_in_small_chunks_changes_nothing() {
        let options = ParseOptions { root: Some("/repo".into()) };
        for xml in &documents() {
            for dialect in [Dialect::Generic, Dialect::NodeTest] {
                let whole = format!("{:?}", parse_in_chunks(&mut &xml[..], &options, dialect, xml.len() + 1, None));
                for chunk in [3, 7, 16, 61, 256] {
                    let chunked = format!("{:?}", parse_in_chunks(&mut &xml[..], &options, dialect, chunk, None));
                    assert_eq!(chunked, whole, "chunk {chunk} of {}", String::from_utf8_lossy(xml));
                }
            }
        }
    }

    /// The JUnit fixtures, and documents that are cut short or broken.
    fn documents() -> Vec<Vec<u8>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut documents: Vec<Vec<u8>> = ["reports/junit", "gradle-reports/reports/test-results/test"]
            .iter()
            .flat_map(|sub| std::fs::read_dir(dir.join(sub)).unwrap().flatten())
            .filter(|entry| entry.path().extension().is_some_and(|e| e == "xml"))
            .map(|entry| std::fs::read(entry.path()).unwrap())
            .collect();
        assert!(documents.len() >= 10, "the JUnit fixtures moved");
        documents.push(
            b"\xEF\xBB\xBF<testsuite name=\"s\"><testcase name=\"a\"><failure>x\r\n\xEF\xBB\xBFy &lt; z</failure>\
            <system-out><![CDATA[out]]></system-out></testcase><testcase name=\"b\"><failure message=\"m\">"
                .to_vec(),
        );
        documents.push(b"<testsuite><testcase name=\"a\" <<<".to_vec());
        documents.push(b"<testsuite><testcase name=\"a\"/></testsuite></testsuites>".to_vec());
        documents
    }

    /// Cases handed out in batches (`fcorr import --stream`), then the rest, are the cases, warnings
    /// and errors of the report read at once, whatever the batch size: rerun attempts folded at
    /// the end of their testsuite included, and a report broken after batches went out is the
    /// same error, counting the cases handed out.
    #[test]
    fn cases_handed_out_in_batches_are_the_cases_read_at_once() {
        let reruns = br#"<testsuites><testsuite name="outer" tests="7"><testsuite name="pytest" tests="4" failures="1">
<testcase classname="t" name="ok" file="t.py" line="1"/><testcase classname="t" name="ok2" file="t.py" line="2"/>
<testcase classname="t" name="flaky" file="t.py" line="5" time="0.5"/>
<testcase classname="t" name="flaky" file="t.py" line="5"/>
<testcase classname="t" name="flaky" file="t.py" line="5"/>
<testcase classname="t" name="bad" file="t.py" line="9"/>
<testcase classname="t" name="bad" file="t.py" line="9"><failure message="boom"/></testcase>
<testcase classname="t" name="after" file="t.py" line="12"/></testsuite>
<testsuite name="more" tests="3"><testcase name="a"/><testcase name="a"/><testcase name="b"/></testsuite>
</testsuite><testcase name="loose"/><testcase name="loose"/></testsuites>"#;
        let broken = format!(
            "<testsuites><testsuite>{}<testcase name=\"x\">a & b</testcase>",
            "<testcase name=\"p\"/>".repeat(9)
        );
        let mut documents = documents();
        documents.push(reruns.to_vec());
        documents.push(broken.into_bytes());
        let options = ParseOptions { root: Some("/repo".into()) };
        let mut handed_any = false;
        for xml in &documents {
            for dialect in [Dialect::Generic, Dialect::NodeTest] {
                let whole = parse_in_chunks(&mut &xml[..], &options, dialect, 64, None);
                for size in [1, 2, 3, 5] {
                    let mut cases = Vec::new();
                    let mut batch = |part: ParsedReport| {
                        assert!(part.warnings.is_empty() && part.errors.is_empty() && !part.cases.is_empty());
                        cases.extend(part.cases);
                        std::ops::ControlFlow::Continue(())
                    };
                    let rest = parse_in_chunks(&mut &xml[..], &options, dialect, 64, Some((size, &mut batch)));
                    handed_any |= !cases.is_empty();
                    let joined = rest.map(|mut rest| {
                        cases.append(&mut rest.cases);
                        ParsedReport { cases, ..rest }
                    });
                    let (got, expected) = (format!("{joined:?}"), format!("{whole:?}"));
                    assert_eq!(got, expected, "batches of {size} of {}", String::from_utf8_lossy(xml));
                }
            }
        }
        assert!(handed_any);
        // Two passing tests that share a name, in a testsuite that ended without folding them,
        // hold nothing back: every case but the last goes out before the end.
        let twins = br#"<testsuites><testsuite name="j" tests="2"><testcase name="a"/><testcase name="a"/></testsuite>
<testsuite name="k"><testcase name="b"/><testcase name="c"/><testcase name="d"/></testsuite></testsuites>"#;
        let mut handed = 0;
        let mut count = |part: ParsedReport| {
            handed += part.cases.len();
            std::ops::ControlFlow::Continue(())
        };
        let rest = parse_in_chunks(&mut &twins[..], &options, Dialect::Generic, 64, Some((1, &mut count))).unwrap();
        assert_eq!((handed, rest.cases.len()), (4, 1));
        // A receiver that says stop stops the reading.
        let mut batches = 0;
        let mut stop = |_: ParsedReport| {
            batches += 1;
            std::ops::ControlFlow::Break(())
        };
        let _ = parse_in_chunks(&mut &reruns[..], &options, Dialect::Generic, 64, Some((1, &mut stop)));
        assert_eq!(batches, 1);
    }

    /// Reports read in parts on several threads give what one reader over the whole gives, wherever
    /// they are cut: at every testsuite tag (one cut, and every pair of them), at every `<`
    /// (cuts that fall inside a testcase, a comment or CDATA must fall back to reading whole), in
    /// both dialects; over the JUnit fixtures, broken and cut-short documents, rerun attempts and
    /// tests that share a name on either side of a cut, and a testsuite nested in another.
    #[test]
    fn reading_in_parts_gives_what_reading_whole_gives() {
        let across = br#"<?xml version="1.0"?><testsuites name="pytest tests" tests="11">
<testsuite name="a" tests="3"><testcase classname="t" name="dup" file="t.py"/><testcase classname="t" name="flaky" file="t.py"/></testsuite>
<testsuite name="b" tests="2" failures="1"><testcase classname="t" name="flaky" file="t.py"/><testcase classname="t" name="flaky" file="t.py"><failure message="boom">x &amp; y</failure></testcase></testsuite>
<!-- <testsuite name="in a comment"> --><testsuite name="c" tests="2"><testcase classname="t" name="dup" file="t.py"/><testsuite name="nested"><testcase name="n"/></testsuite></testsuite>
<testsuite name="d"><testcase name="e"><system-out><![CDATA[<testsuite name="in cdata">]]></system-out><error/></testcase></testsuite>
<testcase name="loose"/></testsuites>"#;
        let cut_short = &across[..across.len() - 40];
        let broken = b"<testsuites><testsuite name=\"a\"><testcase name=\"x\"/></testsuite>\n<testsuite name=\"b\"><testcase name=\"y\">a & b</testcase></testsuite></testsuites>";
        let mut documents = documents();
        documents.extend([across.to_vec(), cut_short.to_vec(), broken.to_vec()]);
        let options = ParseOptions { root: Some("/repo".into()) };
        let mut in_parts = 0;
        for xml in &documents {
            let tags: Vec<u64> = memchr::memmem::find_iter(xml, b"<testsuite ").map(|i| i as u64).collect();
            let mut cut_sets: Vec<Vec<u64>> = tags.iter().map(|&t| vec![t]).collect();
            for (i, &a) in tags.iter().enumerate() {
                cut_sets.extend(tags[i + 1..].iter().map(|&b| vec![a, b]));
            }
            cut_sets.extend(memchr::memchr_iter(b'<', xml).filter(|&i| i > 0).map(|i| vec![i as u64]));
            for dialect in [Dialect::Generic, Dialect::NodeTest] {
                let whole = format!("{:?}", parse_in_chunks(&mut &xml[..], &options, dialect, 61, None));
                for cuts in &cut_sets {
                    let parts = parse_in_parts(&&xml[..], cuts, 1 + cuts.len() % 3, &options, dialect, 61);
                    in_parts += usize::from(parts.is_some());
                    let got = format!(
                        "{:?}",
                        parts.unwrap_or_else(|| parse_in_chunks(&mut &xml[..], &options, dialect, 61, None))
                    );
                    assert_eq!(got, whole, "cut at {cuts:?} of {}", String::from_utf8_lossy(xml));
                }
            }
        }
        assert!(in_parts > 100, "only {in_parts} documents were read in parts");
        // The cuts found: at a testsuite tag after each share, never at `<testsuites`.
        assert_eq!(
            cuts(&&across[..], across.len() as u64, 2),
            [memchr::memmem::find(&across[across.len() / 2..], b"<testsuite ").unwrap() as u64
                + across.len() as u64 / 2]
        );
        assert_eq!(cuts(&&b"<testsuites><testsuites>"[..], 24, 2), Vec::<u64>::new());
    }

    /// A report file read in parts through positioned reads (what `fcorr import` does with a big
    /// report on a machine with several cores) is the report read whole, and the suite built
    /// from it gets the same case ids, duplicates (`#2`) across parts included.
    #[cfg(unix)]
    #[test]
    fn a_report_file_read_in_parts_gets_the_same_cases_and_ids() {
        let mut xml = String::from("<testsuites tests=\"400\">\n");
        for suite in 0..40 {
            xml.push_str(&format!("<testsuite name=\"s{}\" tests=\"10\">\n", suite % 3));
            for case in 0..10 {
                let status = if case == 3 { "<failure message=\"m\">trace</failure>" } else { "" };
                xml.push_str(&format!(
                    "  <testcase classname=\"c{}\" name=\"t{case}\" file=\"/repo/t.py\" time=\"0.1\">{status}</testcase>\n",
                    suite % 3
                ));
            }
            xml.push_str("</testsuite>\n");
        }
        xml.push_str("</testsuites>\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.xml");
        std::fs::write(&path, &xml).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let options = ParseOptions { root: Some("/repo".into()) };
        let whole = parse_in_chunks(&mut xml.as_bytes(), &options, Dialect::Generic, 1 << 10, None).unwrap();
        let ids = |cases: Vec<Case>| {
            let mut suite = crate::model::Suite::new("s", "s", crate::model::SuiteKind::Import);
            suite.cases = cases;
            suite.finalize_cases();
            suite.cases.iter().map(|c| c.id.to_string()).collect::<Vec<_>>()
        };
        let expected_ids = ids(whole.cases.clone());
        assert!(expected_ids.iter().any(|id| id.ends_with("#2")));
        for parts in [1, 2, 3, 5, 8] {
            let len = xml.len() as u64;
            let found = cuts(&file, len, parts);
            assert_eq!(found.len(), parts - 1, "{parts} parts");
            assert!(parse_in_parts(&file, &found, 2, &options, Dialect::Generic, 1 << 10).is_some() || parts == 1);
            let read = parse_file_in(&file, len, parts, 2, &options, Dialect::Generic, 1 << 10).unwrap();
            assert_eq!(format!("{read:?}"), format!("{whole:?}"), "{parts} parts");
            assert_eq!(ids(read.cases), expected_ids);
        }
    }

    #[test]
    fn plain_attributes_read_as_quick_xml_reads_them() {
        let tags = [
            r#"t name="a" classname='b.c' time="0.5""#,
            "t a=\"1\"b='2' \t\r\n c = \"x > y\"  ",
            r#"t name="" empty='' x:file="f.py" =="keyless" name="again""#,
            r#"t a:b:c="1" :x="2" y:="3""#,
            "t message=\"x &lt; y\tz\" message=\"second\" type='T'",
            "t name=\"caf\u{e9} &amp; \u{1F680}\" line=\"3\tx\n\"",
            "t",
            "t   ",
            // Not plain: quick-xml reports an error for each, and is asked to read the lot.
            r#"t name="a" flag"#,
            r#"t name="a" flag other="b""#,
            r#"t name=a time="1""#,
            r#"t name="a"#,
            r#"t name= "#,
            r#"t name"#,
            r#"t ="keyless""#,
        ];
        for tag in tags {
            let e = BytesStart::from_content(tag, 1);
            let mut plain = Vec::new();
            let ok = plain_attributes(e.attributes_raw(), |k, v| plain.push((k.to_string(), v.to_string())));
            let results: Vec<_> = e.attributes().with_checks(false).collect();
            let clean = results.iter().all(|r| r.is_ok());
            assert_eq!(ok, clean, "{tag}");
            if ok {
                for (key, _) in &plain {
                    assert_eq!(local_name(key), QName(key).local_name().into_inner(), "{key}");
                    let local = local_name(key);
                    let first =
                        e.attributes().flatten().find(|a| a.key.local_name().as_ref() == local).map(|a| value_of(&a));
                    assert_eq!(attr(&e, local), first, "{tag}: {key}");
                }
                let theirs: Vec<_> = results
                    .into_iter()
                    .flatten()
                    .map(|a| (a.key.into_inner().to_string(), a.value.into_owned()))
                    .collect();
                assert_eq!(plain, theirs, "{tag}");
            }
        }
    }

    #[test]
    fn values_are_normalized_only_when_quick_xml_would_change_them() {
        for raw in
            ["plain", "", "caf\u{e9} [x] <y>", "a &amp; b", "&#9;", "tab\there", "line\nbreak", "cr\r\nlf", "&bogus;"]
        {
            let attribute = Attribute { key: QName("k"), value: Cow::Borrowed(raw) };
            let normalized = cow_value(&attribute);
            // An unknown entity is an error, and the raw value is kept: checking costs nothing then.
            assert!(needs_normalizing(raw) || normalized == raw, "{raw:?}");
            assert_eq!(needs_normalizing(raw), raw != "plain" && !raw.is_empty() && !raw.starts_with("caf"), "{raw:?}");
        }
    }

    #[test]
    fn broken_xml_is_an_error_not_a_panic() {
        assert!(parse_str("<testsuite><testcase name=\"a\" <<<").is_err());
        assert!(parse_str("<html><body/></html>").is_err());
    }

    #[test]
    fn errors_count_the_cases_read_before_them() {
        let error = parse_str("<testsuite><testcase name=\"a\"/><testcase name=\"b\"><failure>x & y").unwrap_err();
        assert!(matches!(error, JunitError::Xml { cases_read: 1, .. }), "{error:?}");
        assert_eq!(Junit.parse(&mut "<testsuite>&".as_bytes(), &ParseOptions::default()).unwrap_err().byte, Some(11));
        let error = error.to_string();
        assert!(error.ends_with("; 1 testcases were read before it"), "{error}");
        let error = parse_str("<testsuite><testcase name=\"a\"/></testsuite></testsuites>").unwrap_err().to_string();
        assert!(error.ends_with("; 1 testcases were read before it"), "{error}");
    }

    #[test]
    fn truncated_report_keeps_cases_and_cannot_pass() {
        let report =
            parse_str("<testsuite><testcase name=\"a\"/><testcase name=\"b\"><failure message=\"x\">").unwrap();
        let statuses: Vec<_> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(
            statuses,
            [("a", CaseStatus::Passed), ("b", CaseStatus::Failed), (super::super::CUT_SHORT_CASE, CaseStatus::Error)]
        );
        assert_eq!(report.errors.len(), 1);
        assert!(report.errors[0].contains("inside testcase `b`"), "{:?}", report.errors);
        // Cut off before any outcome: unknown, so an error, never a pass.
        let report = parse_str("<testsuite><testcase name=\"a\"/><testcase name=\"b\">").unwrap();
        let statuses: Vec<_> = report.cases.iter().map(|c| c.status).collect();
        assert_eq!(statuses, [CaseStatus::Passed, CaseStatus::Error, CaseStatus::Error]);
        assert!(report.cases[1].message().unwrap().contains("result is unknown"));
    }

    #[test]
    fn a_report_cut_between_testcases_is_an_error() {
        // Every case read passed, and no element was cut in half: only the missing end tags tell.
        let xml = r#"<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="5" failures="1">
<testcase name="a"/><testcase name="b"></testcase>"#;
        let report = parse_str(xml).unwrap();
        assert_eq!(report.cases.last().map(|c| c.status), Some(CaseStatus::Error));
        let error = &report.errors[0];
        assert!(error.contains("2 element(s) still open") && error.contains("cut short"), "{error}");
        assert!(error.contains("declares tests=5, failures=1 but 2 testcases, 0 failures were read"), "{error}");
        assert!(parse_str(&format!("{xml}</testsuite></testsuites>")).unwrap().errors.is_empty());
    }

    #[test]
    fn rerun_attempts_fold_into_one_case_when_the_header_counts_them_once() {
        // pytest-rerunfailures: each attempt a testcase, the reran ones with no result.
        let xml = r#"<testsuites><testsuite name="pytest" tests="3" failures="1">
<testcase classname="t" name="ok" file="t.py" line="1"/>
<testcase classname="t" name="flaky" file="t.py" line="5" time="0.5"/>
<testcase classname="t" name="flaky" file="t.py" line="5"/>
<testcase classname="t" name="bad" file="t.py" line="9"/>
<testcase classname="t" name="bad" file="t.py" line="9"><failure message="boom"/></testcase>
</testsuite></testsuites>"#;
        let report = parse_str(xml).unwrap();
        let got: Vec<_> = report.cases.iter().map(|c| (c.name.as_str(), c.status, c.extra().retries)).collect();
        assert_eq!(
            got,
            [("ok", CaseStatus::Passed, 0), ("flaky", CaseStatus::Flaky, 1), ("bad", CaseStatus::Failed, 1)]
        );
        assert_eq!(report.cases[1].extra().attempts[0].duration_ms, Some(500.0));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);

        // Same-named tests the header counts one by one are separate tests, not reruns.
        let twins = r#"<testsuite name="jest" tests="2"><testcase classname="a" name="works"/><testcase classname="a" name="works"/></testsuite>"#;
        let report = parse_str(twins).unwrap();
        assert_eq!(report.cases.iter().map(|c| c.status).collect::<Vec<_>>(), [CaseStatus::Passed; 2]);
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);

        // A header that fits neither reading is said, with what the repeats look like.
        let odd = r#"<testsuite name="odd" tests="1"><testcase name="a"/><testcase name="a"/><testcase name="b"/></testsuite>"#;
        let report = parse_str(odd).unwrap();
        assert_eq!(report.cases.len(), 3);
        assert_eq!(
            report.warnings,
            ["more testcases than declared: testsuite `odd` declares tests=1 but 3 testcases were read \
              (1 of them repeat the testcase before them, which has no result: rerun attempts?)"]
        );
    }

    /// Headers that declare failures or errors while no testcase failed: the failing results are
    /// missing (findings D10), an `error` case says so; when any case failed, counts that are
    /// a little off are only the warning they were.
    #[test]
    fn declared_failures_with_no_failing_case_are_an_error_case() {
        let xml = r#"<testsuites tests="3" failures="1"><testsuite name="s" tests="3" failures="1"><testcase classname="c" name="a"/><testcase classname="c" name="b"/></testsuite></testsuites>"#;
        let report = parse_str(xml).unwrap();
        let last = report.cases.last().unwrap();
        assert_eq!((last.name.as_str(), last.status), (crate::collect::DECLARED_FAILURES_CASE, CaseStatus::Error));
        assert_eq!(
            last.message(),
            Some(
                "the report declares <testsuites> failures=1; <testsuite> `s` failures=1 but lists no failing test: \
                 the failing results are missing"
            )
        );
        let errors = r#"<testsuite name="e" errors="2"/>"#;
        assert_eq!(parse_str(errors).unwrap().cases.last().map(|c| c.status), Some(CaseStatus::Error));
        // One failing case: the header's other failure is an off count, not a lost result.
        let off = r#"<testsuite name="s" tests="2" failures="2"><testcase name="a"><failure/></testcase><testcase name="b"/></testsuite>"#;
        let report = parse_str(off).unwrap();
        assert_eq!(report.cases.len(), 2);
        assert!(report.cases.iter().all(|c| c.name != crate::collect::DECLARED_FAILURES_CASE));
        // Nothing declared failing, nothing added.
        let fine = r#"<testsuite name="s" tests="1" failures="0" errors="0"><testcase name="a"/></testsuite>"#;
        assert_eq!(parse_str(fine).unwrap().cases.len(), 1);
    }

    #[test]
    fn fewer_cases_than_declared_is_a_warning() {
        let xml = r#"<testsuites><testsuite name="s" tests="3" failures="1" errors="1" skipped="0">
<testcase name="a"><failure/><error/></testcase><testcase name="b"/></testsuite>
<testsuite name="empty" tests="2"/><testsuite name="fine" tests="1" skips="1"><testcase name="c"><skipped/></testcase></testsuite></testsuites>"#;
        let report = parse_str(xml).unwrap();
        assert!(report.errors.is_empty());
        assert_eq!(
            report.warnings,
            ["fewer results than declared: testsuite `s` declares tests=3 but 2 testcases were read; \
              testsuite `empty` declares tests=2 but 0 testcases were read"]
        );
    }
}
