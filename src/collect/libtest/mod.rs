//! Rust libtest console output (`cargo test`, stable): `test name ... ok|FAILED|ignored` lines and
//! the `---- name stdout ----` failure sections.
//!
//! Stable libtest has no machine-readable format, so this reads the text cargo prints with stderr
//! merged in: cargo's `Running <target>` lines give each case its classname (the test binary) and
//! file (the target's source root as cargo prints it, relative to its package). A binary that
//! stops before its `test result:` line (a crash, an abort) becomes an `error` case, so a failing
//! exit code is always explained by a case.
//!
//! In a workspace every member's `src/lib.rs` looks the same: the report's [`ReportTarget`]s
//! (every binary in order, unit-test or not, and the panic locations printed) let the Rust
//! ecosystem's `locate` place each target in its member crate after parsing.

use std::io::BufRead;
use std::sync::OnceLock;

use regex::Regex;

use super::{DETAILS_CAP, OUTPUT_CAP, ParseOptions, ParsedReport, PrintedLocation, ReportParser, ReportTarget};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};
use crate::text::cap_text;

/// `cargo test` / libtest console output.
pub struct Libtest;

impl ReportParser for Libtest {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["cargo-test", "rust"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        text.lines().any(|l| patterns().running_tests.is_match(l.trim_end()))
            && text.lines().any(|l| l.starts_with("test ") || l.trim_start().starts_with("Running "))
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse(input, options)
    }
}

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "libtest";

struct Patterns {
    running_target: Regex,
    doc_tests: Regex,
    running_tests: Regex,
    result_line: Regex,
    section: Regex,
    panicked: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    // Every pattern is a literal; they compile.
    PATTERNS.get_or_init(|| Patterns {
        running_target: Regex::new(r"^\s*Running (?:unittests )?(\S+) \(([^)]*)\)\s*$").expect("valid regex"),
        doc_tests: Regex::new(r"^\s*Doc-tests (\S+)\s*$").expect("valid regex"),
        running_tests: Regex::new(r"^running (\d+) tests?$").expect("valid regex"),
        result_line: Regex::new(r"^test (.+?) \.\.\. (ok|FAILED|ignored(?:, (.*))?|bench:.*)$").expect("valid regex"),
        section: Regex::new(r"^---- (.+?) (?:stdout|stderr) ----$").expect("valid regex"),
        panicked: Regex::new(r"panicked at (?:'(.*)', )?([^\s:]+):(\d+):(\d+):?").expect("valid regex"),
    })
}

/// The test binary whose output is being read.
#[derive(Default)]
struct Target {
    /// What the report will say about it; `None` before the first `Running`/`Doc-tests` line.
    record: Option<ReportTarget>,
    /// `running N tests` was seen.
    started: bool,
    /// `test result:` was seen.
    finished: bool,
}

impl Target {
    fn new(name: String, file: Option<String>, unit_tests: bool, first_case: usize) -> Target {
        let record = ReportTarget { name, file, unit_tests, cases: first_case..first_case, printed: Vec::new() };
        Target { record: Some(record), ..Target::default() }
    }

    fn classname(&self) -> Option<String> {
        self.record.as_ref().map(|r| r.name.clone())
    }

    fn file(&self) -> Option<&str> {
        self.record.as_ref().and_then(|r| r.file.as_deref())
    }

    fn first_case(&self) -> usize {
        self.record.as_ref().map_or(0, |r| r.cases.start)
    }
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
    let p = patterns();
    let mut report = ParsedReport { tool: Some("cargo test".into()), ..ParsedReport::default() };
    let mut target = Target::default();
    let mut section: Option<(String, String)> = None;
    let mut saw_run = false;
    let mut exit_note: Option<String> = None;
    let mut raw = Vec::new();
    let mut line_no = 0u64;
    loop {
        raw.clear();
        let n = input.read_until(b'\n', &mut raw).map_err(|e| {
            ParseError::new(NAME, format!("cannot read line {}: {e}", line_no + 1)).at_line(line_no + 1)
        })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let text = String::from_utf8_lossy(&raw);
        let line = text.trim_end_matches(['\n', '\r']);

        if let Some((name, body)) = section.as_mut() {
            let ends = line == "failures:" || line.starts_with("test result: ") || p.section.is_match(line);
            if !ends {
                body.push_str(line);
                body.push('\n');
                continue;
            }
            let (name, body) = (std::mem::take(name), std::mem::take(body));
            section = None;
            apply_section(&mut report.cases, &mut target, &name, &body);
        }
        if let Some(c) = p.running_target.captures(line) {
            close_target(&mut report, std::mem::take(&mut target), exit_note.take());
            let file = options.relative_path(&c[1]);
            let unit_tests = line.contains("Running unittests ");
            target = Target::new(binary_name(&c[2]), Some(file), unit_tests, report.cases.len());
        } else if let Some(c) = p.doc_tests.captures(line) {
            close_target(&mut report, std::mem::take(&mut target), exit_note.take());
            target = Target::new(format!("{} (doc-tests)", &c[1]), None, false, report.cases.len());
        } else if p.running_tests.is_match(line) {
            saw_run = true;
            target.started = true;
        } else if let Some(c) = p.result_line.captures(line) {
            let name = c[1].strip_suffix(" - should panic").unwrap_or(&c[1]).to_string();
            let verdict = &c[2];
            let (status, message) = if verdict == "ok" || verdict.starts_with("bench:") {
                (CaseStatus::Passed, None)
            } else if verdict == "FAILED" {
                (CaseStatus::Failed, None)
            } else {
                (CaseStatus::Skipped, c.get(3).map(|m| m.as_str().to_string()))
            };
            report.cases.push(
                Case {
                    name: name.into(),
                    classname: target.classname().map(Into::into),
                    file: target.file().map(str::to_string).map(Into::into),
                    status,
                    ..Case::default()
                }
                .with_message(message),
            );
        } else if let Some(c) = p.section.captures(line) {
            section = Some((c[1].to_string(), String::new()));
        } else if line.starts_with("test result: ") {
            target.finished = true;
        } else if line.trim_start().starts_with("process didn't exit successfully") {
            exit_note = Some(line.trim().to_string());
        }
    }
    if let Some((name, body)) = section.take() {
        apply_section(&mut report.cases, &mut target, &name, &body);
    }
    close_target(&mut report, target, exit_note.take());
    if !saw_run {
        let message = "no libtest output: no `running N tests` line (did the tests compile and start?)";
        return Err(ParseError::new(NAME, message));
    }
    Ok(report)
}

/// `target/debug/deps/integration-00fbb4f91c8b2162` → `integration`.
fn binary_name(path: &str) -> String {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let file = file.strip_suffix(".exe").unwrap_or(file);
    match file.rsplit_once('-') {
        Some((name, hash)) if !name.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => file.to_string(),
    }
}

/// Ends a binary's output: one that started but never printed `test result:` crashed or was
/// killed. Its record goes into the report with the cases it gave.
fn close_target(report: &mut ParsedReport, target: Target, exit_note: Option<String>) {
    if target.started && !target.finished {
        let reported = report.cases.len() - target.first_case();
        report.cases.push(
            Case {
                name: "[test binary]".into(),
                classname: target.classname().map(Into::into),
                file: target.file().map(str::to_string).map(Into::into),
                status: CaseStatus::Error,
                ..Case::default()
            }
            .with_message(Some(format!(
                "the test binary stopped before reporting all its results ({reported} reported){}",
                exit_note.map(|n| format!(": {n}")).unwrap_or_default()
            ))),
        );
    }
    if let Some(mut record) = target.record {
        record.cases.end = report.cases.len();
        report.targets.push(record);
    }
}

/// Fills a failed case of `target` (the binary being read) with the message, details and line
/// from its `---- name stdout ----` section. A panic's `file:line` is recorded with the target;
/// the case takes the line when the file is its own as cargo printed it (the Rust ecosystem's
/// `locate` decides again once the target is placed in its workspace member).
fn apply_section(cases: &mut [Case], target: &mut Target, name: &str, body: &str) {
    let first = target.first_case();
    let Some(index) = cases[first..].iter().rposition(|c| c.name == name).map(|i| first + i) else { return };
    let case = &mut cases[index];
    let body = body.trim_matches('\n');
    let lines: Vec<&str> = body.lines().collect();
    let panic_at = lines.iter().position(|l| patterns().panicked.is_match(l));
    let message = match panic_at {
        Some(i) => {
            let c = patterns().panicked.captures(lines[i]);
            if let Some(c) = &c
                && let Some(record) = target.record.as_mut()
            {
                let line = c[3].parse().ok();
                if record.file.as_deref() == Some(&c[2]) {
                    case.line = line;
                }
                if let Some(line) = line {
                    record.printed.push(PrintedLocation { case: index, file: c[2].to_string(), line });
                }
            }
            // Old format: `panicked at 'msg', file:line:col`; new: the message on the next lines.
            c.and_then(|c| c.get(1).map(|m| m.as_str().to_string())).or_else(|| {
                let rest: Vec<&str> = lines[i + 1..]
                    .iter()
                    .take_while(|l| !l.starts_with("note:") && !l.starts_with("stack backtrace:"))
                    .copied()
                    .collect();
                (!rest.is_empty()).then(|| rest.join("\n").trim().to_string())
            })
        }
        None => lines.iter().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_string()),
    };
    case.set_message(message.map(|m| cap_text(&m, OUTPUT_CAP)));
    if !body.is_empty() {
        case.extra_mut().details = Some(crate::model::Text::capped(body, DETAILS_CAP));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<ParsedReport, ParseError> {
        parse(&mut text.as_bytes(), &ParseOptions::default())
    }

    // Shaped like `cargo test --no-fail-fast 2>&1` on tests/fixtures/rust-mixed (Rust 1.95).
    const MIXED: &str = "   Compiling demo v0.1.0 (/p)
     Running unittests src/lib.rs (target/debug/deps/demo-bee670d647b83aac)

running 3 tests
test tests::slow ... ignored, slow: exhaustive check
test tests::ok ... ok
test tests::avg ... FAILED

failures:

---- tests::avg stdout ----

thread 'tests::avg' (2801) panicked at src/lib.rs:32:9:
assertion `left == right` failed: average should round
  left: 1
 right: 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::avg

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.52s

error: test failed, to rerun pass `--lib`
     Running tests/integration.rs (target/debug/deps/integration-00fbb4f91c8b2162)

running 1 test
test boundaries ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests demo

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    #[test]
    fn reads_results_targets_and_failure_sections() {
        let report = parse_str(MIXED).unwrap();
        let summary: Vec<(&str, CaseStatus, Option<&str>)> =
            report.cases.iter().map(|c| (c.name.as_str(), c.status, c.classname.as_deref())).collect();
        assert_eq!(
            summary,
            vec![
                ("tests::slow", CaseStatus::Skipped, Some("demo")),
                ("tests::ok", CaseStatus::Passed, Some("demo")),
                ("tests::avg", CaseStatus::Failed, Some("demo")),
                ("boundaries", CaseStatus::Passed, Some("integration")),
            ]
        );
        assert_eq!(report.cases[0].message(), Some("slow: exhaustive check"));
        let failed = &report.cases[2];
        assert_eq!(failed.file.as_deref(), Some("src/lib.rs"));
        assert_eq!(failed.line, Some(32));
        assert!(failed.message().unwrap().starts_with("assertion `left == right` failed: average"));
        assert!(failed.details().as_deref().unwrap().contains("right: 2"));
        assert_eq!(report.cases[3].file.as_deref(), Some("tests/integration.rs"));
        // Every binary in order, doc-tests too, with its cases and the panic locations printed.
        let targets: Vec<(&str, Option<&str>, bool, std::ops::Range<usize>)> = report
            .targets
            .iter()
            .map(|t| (t.name.as_str(), t.file.as_deref(), t.unit_tests, t.cases.clone()))
            .collect();
        assert_eq!(
            targets,
            vec![
                ("demo", Some("src/lib.rs"), true, 0..3),
                ("integration", Some("tests/integration.rs"), false, 3..4),
                ("demo (doc-tests)", None, false, 4..4),
            ]
        );
        assert_eq!(report.targets[0].printed, vec![PrintedLocation { case: 2, file: "src/lib.rs".into(), line: 32 }]);
    }

    #[test]
    fn a_crashed_binary_becomes_an_error_case() {
        let text = "     Running unittests src/lib.rs (target/debug/deps/demo-0123abcd)

running 2 tests
test a ... ok
error: test failed, to rerun pass `--lib`

Caused by:
  process didn't exit successfully: `/p/target/debug/deps/demo-0123abcd` (signal: 6, SIGABRT: process abort signal)
";
        let report = parse_str(text).unwrap();
        assert_eq!(report.cases.len(), 2);
        assert_eq!(report.cases[1].status, CaseStatus::Error);
        assert!(report.cases[1].message().unwrap().contains("SIGABRT"), "{:?}", report.cases[1].message());
        // The error case belongs to the binary, so it is placed with the binary's other cases.
        assert_eq!(report.targets.len(), 1);
        assert_eq!(report.targets[0].cases, 0..2);
    }

    #[test]
    fn output_without_a_test_run_is_an_error() {
        assert!(parse_str("error[E0308]: mismatched types\n").is_err());
        assert!(parse_str("").is_err());
        assert!(Libtest.sniff(MIXED.as_bytes()));
        assert!(!Libtest.sniff(b"<testsuite/>"));
    }
}
