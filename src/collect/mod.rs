//! Collect: machine-readable test reports into result-model cases.
//!
//! Each report format is one file implementing [`ReportParser`], registered in [`parsers`].
//! Formats are recognised from content ([`ReportParser::sniff`]), so imports need no flags.
//! Parsers fill cases without ids; the suite assigns stable ids once all cases are in.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::ecosystems::{CollectContext, Collected};
use crate::model::{Case, Diagnostic, ResultsSource, Severity};

pub mod ctrf;
mod dotnet;
pub mod go_test_json;
pub mod jest_json;
pub mod junit;
pub mod libtest;
pub mod mocha_json;
pub mod nunit;
pub mod tap;
pub mod trx;
mod xml_stream;
pub mod xunit_net;

/// Every report format fcorr reads, most specific first (sniffing order).
///
/// CTRF and TAP look at how the document starts, so they go before JUnit, which accepts
/// `<testsuite`/`<testcase` anywhere in the head; the other JSON and text formats sniff for their
/// own keys or lines. `node-junit` never sniffs: it is chosen by name.
pub fn parsers() -> Vec<Box<dyn ReportParser>> {
    vec![
        Box::new(ctrf::Ctrf),
        Box::new(tap::Tap),
        Box::new(nunit::Nunit),
        Box::new(xunit_net::XunitNet),
        Box::new(trx::Trx),
        Box::new(junit::Junit),
        Box::new(go_test_json::GoTestJson),
        Box::new(jest_json::JestJson),
        Box::new(mocha_json::MochaJson),
        Box::new(libtest::Libtest),
        Box::new(junit::NodeTestJunit),
    ]
}

/// Looks up a parser by format name.
pub fn parser_named(format: &str) -> Option<Box<dyn ReportParser>> {
    parsers().into_iter().find(|p| p.format() == format || p.aliases().contains(&format))
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
    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, String>;
}

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

/// Cuts text to at most `max` bytes on a character boundary, saying how much was dropped.
pub fn cap_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[... {} bytes truncated]", &text[..end], text.len() - end)
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
pub fn parser_for(path: &Path, format: Option<&str>) -> Result<Box<dyn ReportParser>, String> {
    if let Some(format) = format {
        return parser_named(format).ok_or_else(|| {
            let known: Vec<&str> = parsers().iter().map(|p| p.format()).collect();
            format!("unknown report format `{format}` (known: {})", known.join(", "))
        });
    }
    let mut head = vec![0u8; 4096];
    let mut file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let n = read_up_to(&mut file, &mut head).map_err(|e| format!("cannot read: {e}"))?;
    head.truncate(n);
    if n == 0 {
        return Err("the file is empty".into());
    }
    parsers().into_iter().find(|p| p.sniff(&head)).ok_or_else(|| {
        "not a report format fcorr recognises (JUnit XML, CTRF, jest/vitest JSON, mocha JSON, go test -json, TAP, NUnit, xUnit.net, TRX)"
            .into()
    })
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

/// Parses one report file; errors name the problem (the caller adds the path).
pub fn parse_file(path: &Path, format: Option<&str>, options: &ParseOptions) -> Result<(String, ParsedReport), String> {
    let parser = parser_for(path, format)?;
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let report = parser.parse(&mut reader, options)?;
    Ok((parser.format().to_string(), report))
}

/// Expands a report pattern (absolute path, relative path or glob) into existing files.
pub fn expand(pattern: &str, root: &Path) -> Vec<PathBuf> {
    let full = if Path::new(pattern).is_absolute() { PathBuf::from(pattern) } else { root.join(pattern) };
    if full.is_file() {
        return vec![full];
    }
    if !pattern.contains(['*', '?', '[', '{']) {
        return Vec::new();
    }
    let Ok(glob) = globset::Glob::new(&full.to_string_lossy()) else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    // Walk from the longest literal prefix of the pattern, not the whole filesystem.
    let literal: PathBuf =
        full.components().take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[', '{'])).collect();
    let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(&literal)
        .standard_filters(false)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && matcher.is_match(e.path()))
        .map(|e| e.into_path())
        .collect();
    found.sort();
    found
}

/// Default collector: parses every planned report file into cases.
pub fn collect_reports(ctx: &CollectContext<'_>) -> Collected {
    let options = ParseOptions { root: Some(ctx.root.to_path_buf()) };
    let mut collected = Collected::nothing();
    let mut files = Vec::new();
    let mut formats = Vec::new();
    for spec in ctx.reports {
        let paths = expand(&spec.pattern, ctx.root);
        if paths.is_empty() {
            collected.diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                source: "collect".into(),
                message: format!("the test command wrote no report at {}", spec.pattern),
                file: None,
                line: None,
                column: None,
            });
        }
        for path in paths {
            match parse_file(&path, spec.format.as_deref(), &options) {
                Ok((format, report)) => {
                    collected.ran = true;
                    if collected.cases.is_empty() {
                        // One big report: move its cases rather than copy them.
                        collected.cases = report.cases;
                    } else {
                        collected.cases.extend(report.cases);
                    }
                    for warning in report.warnings {
                        collected.diagnostics.push(collect_diagnostic(Severity::Warning, &path, warning));
                    }
                    if !formats.contains(&format) {
                        formats.push(format);
                    }
                    files.push(display_path(&path, ctx.root, ctx.work_dir));
                }
                Err(message) => collected.diagnostics.push(collect_diagnostic(Severity::Error, &path, message)),
            }
        }
    }
    if !files.is_empty() {
        collected.source = ResultsSource::Report { format: formats.join("+"), files };
    }
    collected
}

fn collect_diagnostic(severity: Severity, path: &Path, message: String) -> Diagnostic {
    Diagnostic {
        severity,
        source: "collect".into(),
        message: format!("{}: {message}", path.display()),
        file: None,
        line: None,
        column: None,
    }
}

fn display_path(path: &Path, root: &Path, work_dir: &Path) -> String {
    path.strip_prefix(work_dir)
        .or_else(|_| path.strip_prefix(root))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| path.to_string_lossy().into_owned())
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
    fn cap_text_respects_char_boundaries() {
        let capped = cap_text("ééé", 3);
        assert!(capped.starts_with('é') && capped.contains("truncated"));
    }
}
