//! Collect: machine-readable test reports into result-model cases.
//!
//! Each report format is one file implementing [`ReportParser`], registered in [`parsers`].
//! Formats are recognised from content ([`ReportParser::sniff`]), so imports need no flags.
//! Parsers fill cases without ids; the suite assigns stable ids once all cases are in.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

pub mod ctrf;
pub mod dart_json;
mod dotnet;
pub mod flutter_json;
pub mod go_test_json;
pub mod jest_json;
mod json_text;
pub mod junit;
pub mod libtest;
pub mod mocha_json;
pub mod nunit;
pub mod rspec_json;
pub mod tap;
pub mod trx;
/// `pub(crate)` for the `xml_stream` fuzz target (`crate::fuzzing`).
pub(crate) mod xml_stream;
pub mod xunit_net;

/// Every report format fcorr reads, most specific first (sniffing order).
///
/// CTRF and TAP look at how the document starts, so they go before JUnit, which accepts
/// `<testsuite`/`<testcase` anywhere in the head; the other JSON and text formats sniff for their
/// own keys or lines. `node-junit` never sniffs: it is chosen by name.
pub static PARSERS: &[&dyn ReportParser] = &[
    &ctrf::Ctrf,
    &tap::Tap,
    &nunit::Nunit,
    &xunit_net::XunitNet,
    &trx::Trx,
    &junit::Junit,
    &go_test_json::GoTestJson,
    &jest_json::JestJson,
    &mocha_json::MochaJson,
    &rspec_json::RspecJson,
    &flutter_json::FlutterJson,
    &dart_json::DartJson,
    &libtest::Libtest,
    &junit::NodeTestJunit,
];

/// Looks up a parser by format name.
pub fn parser_named(format: &str) -> Option<&'static dyn ReportParser> {
    PARSERS.iter().copied().find(|p| p.format() == format || p.aliases().contains(&format))
}

/// A report format.
pub trait ReportParser: Send + Sync {
    /// Canonical name: `junit`, `jest-json`, `mocha-json`, `go-test-json`, `ctrf`, `tap`, `libtest`.
    fn format(&self) -> &'static str;

    /// Other names accepted in config (`xml`, `jest`...).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// True when the first bytes of a file look like this format.
    fn sniff(&self, head: &[u8]) -> bool;

    /// Reads a whole report.
    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError>;

    /// Reads a whole report file as [`ReportParser::parse`] reads it (the default). A parser may
    /// read a big file in parts on several threads instead, giving the same report.
    fn parse_file(&self, file: &File, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        // Counted: a long import shows how much of its input has been read (crate::progress).
        let mut reader = BufReader::with_capacity(256 * 1024, crate::progress::Counted(file));
        self.parse(&mut reader, options)
    }

    /// Reads a whole report as [`ReportParser::parse`] does, handing its cases to `batch` on the
    /// way, in order, as soon as nothing later in the report can change them (each a report with
    /// only `cases` and `tool`); the report returned holds the cases after the last batch, and
    /// every warning and error. Together they are what `parse` returns. A report found broken
    /// after some batches went out is still an error. Formats whose cases are only final at the
    /// end hand out nothing (the default).
    fn parse_in_batches(
        &self,
        input: &mut dyn BufRead,
        options: &ParseOptions,
        batch: &mut Batch<'_>,
    ) -> Result<ParsedReport, ParseError> {
        let _ = batch;
        self.parse(input, options)
    }
}

/// Where [`ReportParser::parse_in_batches`] hands cases out; `Break` stops the reading there
/// (what the parser then returns is to be dropped).
pub type Batch<'a> = dyn FnMut(ParsedReport) -> std::ops::ControlFlow<()> + 'a;

/// [`Batch`] with the name of the format read ([`parse_file_in_batches`]).
pub type FormatBatch<'a> = dyn FnMut(&str, ParsedReport) -> std::ops::ControlFlow<()> + 'a;

/// How a parser should treat paths and captured output.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// Project root: absolute file paths below it become relative.
    pub root: Option<PathBuf>,
}

impl ParseOptions {
    /// Makes a reported file path relative to the project root, `/`-separated.
    pub fn relative_path(&self, file: &str) -> String {
        relativize(file, self.root.as_deref())
    }
}

/// Cases read from one report file.
#[derive(Debug, Clone, Default)]
pub struct ParsedReport {
    pub cases: Vec<Case>,
    /// Name of the tool that wrote the report, when it says.
    pub tool: Option<String>,
    /// Non-fatal oddities worth telling the user (unknown elements, inconsistent counts).
    pub warnings: Vec<String>,
    /// Reasons the file's cases cannot be trusted to be all of them (a report cut short): each is
    /// an error diagnostic, and the parser adds an `error` case so the suite cannot pass.
    pub errors: Vec<String>,
    /// The test programs the run went through, for formats whose cases cannot say alone where
    /// they live (`libtest`); empty for the others. See [`ReportTarget`].
    pub targets: Vec<ReportTarget>,
}

/// One test program a report's run went through (a cargo test binary), in the order it ran,
/// including those that gave no case: what the report says about where its cases live, beyond
/// the cases themselves. The parser fills the cases from the bytes alone; an ecosystem's
/// `locate` uses this to place them in the project (cargo workspace members).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportTarget {
    /// The program's name as the tool prints it (`integration`, `alpha_core`).
    pub name: String,
    /// Its source file as the tool printed it, relative to the root when below it; `None` for
    /// programs without one (doc-tests).
    pub file: Option<String>,
    /// The program runs a package's unit tests (cargo's `Running unittests`).
    pub unit_tests: bool,
    /// Indexes into [`ParsedReport::cases`] of the cases it gave.
    pub cases: std::ops::Range<usize>,
    /// Source locations the output printed for its cases (a panic's `file:line`), in the order
    /// printed. A case takes such a line only where the file turns out to be the case's own.
    pub printed: Vec<PrintedLocation>,
}

/// A `file:line` a report printed for one case.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintedLocation {
    /// Index into [`ParsedReport::cases`].
    pub case: usize,
    pub file: String,
    pub line: u32,
}

// The names of the error cases that say results are missing live with the scoring rule that
// reads them (`model::incomplete`).
pub use crate::model::incomplete::{CUT_SHORT_CASE, DECLARED_FAILURES_CASE, DECLARED_TESTS_CASE, UNREADABLE_CASE};

impl ParsedReport {
    /// Records that the report declares failing tests (`what`: which counts, as written) while no
    /// case read from it failed: an `error` case, so the suite cannot pass on the cases listed.
    /// Only then: a writer's counts are often a little off, but never this far.
    pub(crate) fn declared_failures_unreported(&mut self, what: &str) {
        self.cases.push(
            Case { name: DECLARED_FAILURES_CASE.into(), status: CaseStatus::Error, ..Case::default() }.with_message(
                Some(format!("the report declares {what} but lists no failing test: the failing results are missing")),
            ),
        );
    }

    /// Records that the report declares `declared` tests, an exact count, and lists only `listed`:
    /// an `error` case, since the missing results may be the failing ones. Only for formats whose
    /// count is exact (jest/vitest); JUnit writers' counts are often a little off.
    pub(crate) fn declared_tests_unreported(&mut self, what: &str, declared: u64, listed: u64) {
        self.cases.push(
            Case { name: DECLARED_TESTS_CASE.into(), status: CaseStatus::Error, ..Case::default() }.with_message(Some(
                format!(
                    "the report declares {what}={declared} but lists {listed} test results: {} are missing",
                    declared - listed
                ),
            )),
        );
    }

    /// Records that the report stops before its end: an error diagnostic, and an `error` case
    /// that says why, so that no report, however it is read, shows the suite as passed.
    pub fn cut_short(&mut self, message: String) {
        self.cases.push(
            Case { name: CUT_SHORT_CASE.into(), status: CaseStatus::Error, ..Case::default() }
                .with_message(Some(message.clone())),
        );
        self.errors.push(message);
    }
}

/// A report file (or glob) a test command writes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportSpec {
    /// Absolute path, or a glob relative to the project root.
    pub pattern: String,
    /// Format name; sniffed from content when `None`.
    pub format: Option<String>,
}

impl ReportSpec {
    /// A report at a fixed path in a known format.
    pub fn file(path: &Path, format: &str) -> ReportSpec {
        ReportSpec { pattern: path.to_string_lossy().into_owned(), format: Some(format.to_string()) }
    }
}

/// Longest text kept from captured output per case.
pub const OUTPUT_CAP: usize = 4 * 1024;
/// Longest failure details kept per case.
pub const DETAILS_CAP: usize = 16 * 1024;

/// Longest line the line-based readers (TAP, `go test -json`) keep; the rest of a longer line is
/// read and dropped, so one huge line of captured output costs no more than this.
pub const LINE_CAP: usize = 1 << 20;

/// Reads one line (with its `\n`) into `line`, keeping at most `max` bytes of it; invalid UTF-8
/// becomes U+FFFD. Returns the bytes the line had in the input (0 at the end of the input) and
/// whether it was cut.
pub fn read_line_capped(input: &mut dyn BufRead, line: &mut String, max: usize) -> std::io::Result<(usize, bool)> {
    line.clear();
    let mut bytes = Vec::new();
    let mut total = 0usize;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = max.saturating_sub(bytes.len());
        bytes.extend_from_slice(&buf[..take.min(room)]);
        total += take;
        input.consume(take);
        if done {
            break;
        }
    }
    match String::from_utf8(bytes) {
        Ok(text) => *line = text,
        Err(e) => *line = String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
    Ok((total, total > max))
}

/// Makes a path relative to `root` when it lies below it; always `/`-separated.
pub fn relativize(file: &str, root: Option<&Path>) -> String {
    let normalized = file.replace('\\', "/");
    if let Some(root) = root {
        let root = root.to_string_lossy().replace('\\', "/");
        let root = root.trim_end_matches('/');
        if !root.is_empty()
            && let Some(rest) = normalized.strip_prefix(root)
            && rest.starts_with('/')
        {
            return rest.trim_start_matches('/').to_string();
        }
    }
    normalized.strip_prefix("./").unwrap_or(&normalized).to_string()
}

/// Picks the parser for a file: the named format, else the first that recognises its content.
pub fn parser_for(path: &Path, format: Option<&str>) -> Result<&'static dyn ReportParser, ParseError> {
    choose_parser(path, format).map_err(|e| e.in_file(path))
}

fn choose_parser(path: &Path, format: Option<&str>) -> Result<&'static dyn ReportParser, ParseError> {
    // `format` is empty in the error unless one was named: nothing was recognised.
    let problem = |message: String| ParseError::new(format.unwrap_or(""), message);
    if let Some(format) = format {
        return parser_named(format).ok_or_else(|| {
            let known: Vec<&str> = PARSERS.iter().map(|p| p.format()).collect();
            problem(format!("unknown report format `{format}` (known: {})", known.join(", ")))
        });
    }
    let mut head = vec![0u8; 4096];
    let mut file = open(path).map_err(problem)?;
    let n = read_up_to(&mut file, &mut head).map_err(|e| problem(format!("cannot read: {e}")))?;
    head.truncate(n);
    if n == 0 {
        return Err(problem("the file is empty".into()));
    }
    if let Some(parser) = PARSERS.iter().copied().find(|p| p.sniff(&head)) {
        return Ok(parser);
    }
    let recognised = PARSERS.iter().map(|p| p.format()).collect::<Vec<_>>().join(", ");
    // A file meant to be JSON or XML that is broken early says where, not just "unknown format".
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let start = String::from_utf8_lossy(&head).trim_start_matches('\u{feff}').trim_start().chars().next();
    if extension.as_deref() == Some("json") || matches!(start, Some('{' | '[')) {
        let file = open(path).map_err(problem)?;
        let mut json = serde_json::Deserializer::from_reader(BufReader::new(file));
        return Err(match serde::de::IgnoredAny::deserialize(&mut json).and_then(|_| json.end()) {
            Err(e) if e.is_io() => problem(format!("cannot read: {e}")),
            // serde_json's message ends with "at line L column C".
            Err(e) => problem(format!("invalid JSON: {e}")).at_line(e.line() as u64),
            Ok(()) => problem(format!("valid JSON, but not a report format fcorr recognises ({recognised})")),
        });
    }
    if extension.as_deref() == Some("xml") || start == Some('<') {
        // The JUnit reader says where XML breaks (its byte offset); a document that is whole says
        // what its root element is, which no format fcorr reads starts with.
        let file = open(path).map_err(problem)?;
        let parsed = junit::Junit.parse(&mut BufReader::new(file), &ParseOptions::default());
        return Err(match (parsed, dotnet::root_element(&head)) {
            (Err(e), _) if e.byte.is_some() => ParseError { format: String::new(), ..e },
            (_, Some(root)) => problem(format!(
                "an XML document whose root element is <{root}>: not a report format fcorr recognises ({recognised})"
            )),
            (_, None) => problem(format!("not a report format fcorr recognises ({recognised})")),
        });
    }
    Err(problem(format!("not a report format fcorr recognises ({recognised})")))
}

/// Opens a report for streaming: reports are parsed as they are read, so they have no size cap
/// (a report can hold 100,000 cases), but a device, FIFO or socket is refused: /dev/zero would
/// never end and a FIFO with no writer would block the run.
fn open(path: &Path) -> Result<File, String> {
    crate::fsio::open_regular(path, "report").map_err(|e| match e.problem {
        crate::fsio::ReadProblem::Io(io) => format!("cannot open: {io}"),
        other => other.to_string(),
    })
}

/// For the message of a parser that found no element of its format: what the document's root
/// element says it is, when another parser recognises it (` (its root element <test-results> is
/// how nunit reports start: ...)`), else just the element.
pub(crate) fn root_hint(root: Option<&str>, reading: &str) -> String {
    let Some(root) = root else {
        return String::new();
    };
    let head = format!("<{root}>");
    match PARSERS.iter().find(|p| p.sniff(head.as_bytes())).map(|p| p.format()) {
        Some(format) if format != reading => format!(
            " (its root element <{root}> is how {format} reports start: read it as `{format}`, or name no format \
             and let fcorr recognise it)"
        ),
        _ => format!(" (its root element is <{root}>)"),
    }
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// A report file parsed ([`parse_file`]): its format's name and its report, or why it could not be.
pub type Parsed = Result<(String, ParsedReport), ParseError>;

/// Parses one report file. The error carries the path, but shows only the problem: callers put
/// the path in front.
pub fn parse_file(
    path: &Path,
    format: Option<&str>,
    options: &ParseOptions,
) -> Result<(String, ParsedReport), ParseError> {
    parse_file_with(path, format, options, None)
}

/// [`parse_file`], handing the cases to `batch` as they are read, with the format's name, where
/// the format can ([`ReportParser::parse_in_batches`]): memory then holds a batch of a large
/// report's cases, not all of them.
pub fn parse_file_in_batches(
    path: &Path,
    format: Option<&str>,
    options: &ParseOptions,
    batch: &mut FormatBatch<'_>,
) -> Result<(String, ParsedReport), ParseError> {
    parse_file_with(path, format, options, Some(batch))
}

fn parse_file_with(
    path: &Path,
    format: Option<&str>,
    options: &ParseOptions,
    batch: Option<&mut FormatBatch<'_>>,
) -> Result<(String, ParsedReport), ParseError> {
    let parser = parser_for(path, format)?;
    let file = open(path).map_err(|message| ParseError::new(parser.format(), message).in_file(path))?;
    let report = match batch {
        Some(batch) => {
            // Counted: a long import shows how much of its input has been read (crate::progress).
            let mut reader = BufReader::with_capacity(256 * 1024, crate::progress::Counted(&file));
            parser.parse_in_batches(&mut reader, options, &mut |cases| batch(parser.format(), cases))
        }
        None => parser.parse_file(&file, options),
    };
    Ok((parser.format().to_string(), report.map_err(|e| e.in_file(path))?))
}

/// Expands a pattern (absolute path, relative path or glob) into existing files.
///
/// Globs follow shell rules: `*`, `?` and `[...]` never match `/` (`reports/*.xml` is one
/// directory), `**` matches any number of directories, `{a,b}` either.
pub fn expand(pattern: &str, root: &Path) -> Vec<PathBuf> {
    expand_with(pattern, root, None, false)
}

/// Expands a report pattern like [`expand`], never into fcorr's own output: not below `out_dir`,
/// and, for globs, not inside any directory fcorr wrote results into (a `results.json` of
/// fcorr's), so `'**/*.xml'` does not import last run's `fcorr-out/junit.xml` and count it twice.
pub fn expand_reports(pattern: &str, root: &Path, out_dir: Option<&Path>) -> Vec<PathBuf> {
    expand_with(pattern, root, out_dir, true)
}

/// `!glob` entries of a report pattern list that cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadExclude {
    #[error("`!{pattern}`: not a glob: {cause}")]
    Glob { pattern: String, cause: globset::Error },
    #[error("exclude globs: {0}")]
    Set(globset::Error),
}

/// The `!glob` entries of a report pattern list (relative to `root`, like the others): a file any
/// of them matches is left out of what the other patterns find, wherever the `!` stands in the
/// list, as in `.gitignore`-style lists users already write.
pub(crate) fn report_excludes<'a>(
    patterns: impl IntoIterator<Item = &'a str>,
    root: &Path,
) -> Result<globset::GlobSet, BadExclude> {
    let mut set = globset::GlobSetBuilder::new();
    for pattern in patterns.into_iter().filter_map(|p| p.strip_prefix('!')) {
        let pattern = pattern.trim();
        let full = if Path::new(pattern).is_absolute() { PathBuf::from(pattern) } else { root.join(pattern) };
        let glob = globset::GlobBuilder::new(&full.to_string_lossy())
            .literal_separator(true)
            .build()
            .map_err(|cause| BadExclude::Glob { pattern: pattern.to_string(), cause })?;
        set.add(glob);
    }
    set.build().map_err(BadExclude::Set)
}

fn expand_with(pattern: &str, root: &Path, out_dir: Option<&Path>, skip_outputs: bool) -> Vec<PathBuf> {
    let full = if Path::new(pattern).is_absolute() { PathBuf::from(pattern) } else { root.join(pattern) };
    let inside_out = |path: &Path| out_dir.is_some_and(|out| path.starts_with(out));
    if full.is_file() {
        return if inside_out(&full) { Vec::new() } else { vec![full] };
    }
    if !pattern.contains(['*', '?', '[', '{']) {
        return Vec::new();
    }
    let Ok(glob) = globset::GlobBuilder::new(&full.to_string_lossy()).literal_separator(true).build() else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    // Walk from the longest literal prefix of the pattern, not the whole filesystem.
    let literal: PathBuf =
        full.components().take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[', '{'])).collect();
    let out = out_dir.map(Path::to_path_buf);
    let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(&literal)
        .standard_filters(false)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let own = |path: &Path| out.as_deref().is_some_and(|out| path.starts_with(out)) || is_fcorr_output(path);
            !(skip_outputs && is_dir && own(e.path()))
        })
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && matcher.is_match(e.path()))
        .map(|e| e.into_path())
        .collect();
    found.sort();
    found
}

/// True for a directory fcorr wrote a run into: it holds a `results.json` that names fcorr's version.
fn is_fcorr_output(dir: &Path) -> bool {
    let Ok(mut file) = open(&dir.join("results.json")) else { return false };
    let mut head = vec![0u8; 4096];
    let n = read_up_to(&mut file, &mut head).unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..n]);
    head.contains("\"fcorr_version\"") && head.contains("\"schema_version\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relativize_strips_root_and_dot() {
        assert_eq!(relativize("/p/x/tests/a.js", Some(Path::new("/p/x"))), "tests/a.js");
        assert_eq!(relativize("/p/xy/a.js", Some(Path::new("/p/x"))), "/p/xy/a.js");
        assert_eq!(relativize("./a/b.py", None), "a/b.py");
    }

    #[test]
    fn broken_json_and_xml_say_where() {
        let dir = tempfile::tempdir().unwrap();
        let error = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            parser_for(&path, None).err().map(|e| e.to_string()).unwrap_or_default()
        };
        // Cut before any key the sniffers look for: named by the parser's line and column.
        let json = "{\n  \"numTotalTests\": 3,\n  \"testResults\": [ {\"name\": \"a\",, } ]\n}";
        assert_eq!(error("report.json", json), "invalid JSON: key must be a string at line 3 column 33");
        assert!(error("out.txt", "[1, 2").starts_with("invalid JSON: EOF while parsing a list at line 1 column 5"));
        assert!(error("r.json", "{\"a\": 1}").starts_with("valid JSON, but not a report format"));
        assert!(error("r.xml", "<?xml version=\"1.0\"?><results><x></y>").starts_with(
            "an XML document whose root element is <results>: not a report format fcorr recognises (ctrf, tap, "
        ));
        assert!(error("r.xml", "<results><a>x & y</a></results>").starts_with("invalid XML at byte 1"));
        // The positions are fields too, and no format is claimed for a file none recognised.
        let path = dir.path().join("cut.json");
        std::fs::write(&path, "{\n  \"a\": [1,\n").unwrap();
        let e = parser_for(&path, None).err().unwrap();
        assert_eq!((e.format.as_str(), e.line, e.file.as_deref()), ("", Some(3), Some(path.as_path())));
        let path = dir.path().join("r.xml");
        std::fs::write(&path, "<results><a>x & y</a></results>").unwrap();
        let e = parser_for(&path, None).err().unwrap();
        assert_eq!((e.format.as_str(), e.byte), ("", Some(14)));
        assert!(error("notes.txt", "hello").starts_with("not a report format"));
    }

    #[test]
    fn long_lines_are_cut_and_read_past() {
        let text = format!("short\n{}\nlast", "x".repeat(100));
        let mut input = std::io::BufReader::with_capacity(7, text.as_bytes());
        let mut line = String::new();
        let mut lines = Vec::new();
        while let (n @ 1.., cut) = read_line_capped(&mut input, &mut line, 10).unwrap() {
            lines.push((n, cut, line.clone()));
        }
        assert_eq!(lines, [(6, false, "short\n".into()), (101, true, "x".repeat(10)), (4, false, "last".to_string())]);
    }
}
