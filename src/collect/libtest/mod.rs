//! Rust libtest console output (`cargo test`, stable): `test name ... ok|FAILED|ignored` lines and
//! the `---- name stdout ----` failure sections.
//!
//! Stable libtest has no machine-readable format, so this reads the text cargo prints with stderr
//! merged in: cargo's `Running <target>` lines give each case its classname (the test binary) and
//! file (the target's source root as cargo prints it, relative to its package). A binary that
//! stops before its `test result:` line (a crash, an abort) becomes an `error` case, and so does one
//! cargo says failed with no failing result of its own (a `harness = false` target, which prints
//! no libtest lines: cargo's words and the binary's last lines are quoted), so a failing exit code
//! is always explained by a case.
//!
//! A test's child process writes to the same output (a nested `cargo test`, trybuild's lines): a
//! `running N tests` run begun inside a binary's own run is the child's and not counted, and each
//! run's result lines are checked against the binary's own summary (`reconcile`).
//!
//! In a workspace every member's `src/lib.rs` looks the same: the report's [`ReportTarget`]s
//! (every binary in order, unit-test or not, and the panic locations printed) let the Rust
//! ecosystem's `locate` place each target in its member crate after parsing.

use std::io::BufRead;
use std::sync::OnceLock;

use regex::Regex;

use self::reconcile::{Dropped, Tally, reconcile};
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

mod reconcile;

struct Patterns {
    running_target: Regex,
    doc_tests: Regex,
    running_tests: Regex,
    result_line: Regex,
    section: Regex,
    panicked: Regex,
    cargo_status: Regex,
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
        // What cargo prints before it runs a test binary; libtest prints no such line.
        cargo_status: Regex::new(r"^\s+(?:Compiling|Finished|Fresh|Blocking|Checking|Locking|Updating|Downloaded) ")
            .expect("valid regex"),
    })
}

/// Most `error` cases added for failures a binary's summary counts and its result lines do not
/// show (one each, so a pass rate counts them; a hostile count cannot make millions).
const MISSING_CAP: u64 = 1000;

/// How many dropped lines a message names.
const NAMED: usize = 3;

/// How many of a binary's last lines of its own an error case quotes, and how long each may be.
const LAST_LINES: usize = 5;
const LAST_LINE_CHARS: usize = 200;

/// cargo's line after a test binary failed: `error: test failed, to rerun pass `--test custom``.
const RERUN_NOTE: &str = "error: test failed, to rerun pass ";

/// One `running N tests` … `test result:` run in a binary's output (doc-tests may have several).
#[derive(Default)]
struct Block {
    /// Began with `running N tests` (not with result lines read before any such line).
    started: bool,
    /// Its N.
    tests: Option<u64>,
    /// The last `test result:` line read for it.
    summary: Option<String>,
    /// A result line came after `summary`: libtest prints nothing after its own summary, so that
    /// one was another process's and the binary has not given its own yet.
    reopened: bool,
}

impl Block {
    /// Started and not finished: what appears now is printed while its tests run.
    fn running(&self) -> bool {
        self.started && (self.summary.is_none() || self.reopened)
    }
}

/// A test run printed inside a binary's run by a process one of its tests started (a nested
/// `cargo test`, a test binary run directly): none of its lines are the binary's.
struct Nested {
    /// Its `running N tests` was seen.
    started: bool,
    /// Its binary's file name as cargo printed it (`fixture-bf07fdf98814b1a7`).
    binary: Option<String>,
}

/// The test binary whose output is being read.
#[derive(Default)]
struct Target {
    /// What the report will say about it; `None` before the first `Running`/`Doc-tests` line. Its
    /// case range and printed locations are filled in when it closes.
    record: Option<ReportTarget>,
    /// The binary's file name (`cli-3fa20a26ae5c1a9b`), to tell its exit from a child's.
    binary: Option<String>,
    doc_tests: bool,
    /// Its result lines in order, with the index of the block each came in.
    cases: Vec<(Case, usize)>,
    blocks: Vec<Block>,
    /// Panic locations printed, by index into `cases`.
    printed: Vec<PrintedLocation>,
    /// Runs printed inside this one, innermost last.
    nested: Vec<Nested>,
    /// Result lines of nested runs, and the line that began the first nested run.
    foreign: usize,
    foreign_start: Option<String>,
    /// A cargo status line (`Finished`…) came since the current block began: a `Running` line now
    /// is a child cargo's, not the next binary after this one quit without a word (`exit(0)`).
    cargo_spoke: bool,
    /// cargo's `process didn't exit successfully` line naming this binary.
    exit_note: Option<String>,
    /// cargo's `error: test failed, to rerun pass `--test x`` after this binary: it names the target.
    rerun_note: Option<String>,
    /// The last lines the binary printed that are none of libtest's, since its current run began:
    /// all there is to say why a binary without libtest's results (`harness = false`) failed.
    last_lines: std::collections::VecDeque<String>,
}

impl Target {
    fn new(name: String, file: Option<String>, unit_tests: bool, binary: Option<String>) -> Target {
        let doc_tests = file.is_none();
        let record = ReportTarget { name, file, unit_tests, cases: 0..0, printed: Vec::new() };
        Target { record: Some(record), binary, doc_tests, ..Target::default() }
    }

    /// How messages name it: `` `cli` (tests/cli.rs) ``.
    fn who(&self) -> String {
        match &self.record {
            Some(ReportTarget { name, file: Some(file), .. }) => format!("test binary `{name}` ({file})"),
            Some(record) => format!("`{}`", record.name),
            None => "the test output".into(),
        }
    }

    /// Its tests are running: it has begun a run, not ended it, and not exited.
    fn running(&self) -> bool {
        self.exit_note.is_none() && self.blocks.last().is_some_and(Block::running)
    }

    fn inside_nested(&self) -> bool {
        !self.nested.is_empty()
    }

    fn nest(&mut self, nested: Nested, line: &str) {
        self.nested.push(nested);
        self.foreign_start.get_or_insert_with(|| line.trim().to_string());
    }

    /// A `Running`/`Doc-tests` line: true when it belongs to a run nested in this one; false when
    /// cargo has moved on to its next binary.
    fn binary_line(&mut self, line: &str, binary: Option<String>) -> bool {
        if let Some(inner) = self.nested.last_mut() {
            if inner.started {
                self.nest(Nested { started: false, binary }, line);
            } else {
                // The child cargo's previous binary printed no run; this is its next one.
                inner.binary = binary;
            }
            return true;
        }
        if self.running() && self.cargo_spoke {
            self.nest(Nested { started: false, binary }, line);
            return true;
        }
        false
    }

    /// `running N tests`: this binary's run, or one nested in it while its own is going.
    fn header(&mut self, line: &str, n: Option<u64>) {
        if let Some(inner) = self.nested.last_mut() {
            if inner.started {
                self.nest(Nested { started: true, binary: None }, line);
            } else {
                inner.started = true;
            }
        } else if self.running() {
            self.nest(Nested { started: true, binary: None }, line);
        } else {
            self.blocks.push(Block { started: true, tests: n, ..Block::default() });
            self.cargo_spoke = false;
            self.last_lines.clear();
        }
    }

    fn result(&mut self, mut case: Case) {
        if self.inside_nested() {
            self.foreign += 1;
            return;
        }
        if self.blocks.is_empty() {
            self.blocks.push(Block::default());
        }
        let block = self.blocks.len() - 1;
        if self.blocks[block].summary.is_some() {
            self.blocks[block].reopened = true;
        }
        case.classname = self.record.as_ref().map(|r| r.name.clone().into());
        case.file = self.record.as_ref().and_then(|r| r.file.clone()).map(Into::into);
        self.cases.push((case, block));
    }

    fn summary(&mut self, line: &str) {
        if self.nested.pop().is_some() {
            return;
        }
        if self.blocks.is_empty() {
            self.blocks.push(Block::default());
        }
        if let Some(block) = self.blocks.last_mut() {
            block.summary = Some(line.to_string());
            block.reopened = false;
        }
        self.last_lines.clear();
    }

    /// A line that is none of libtest's or cargo's: kept while it may be among the last ones.
    fn other_line(&mut self, line: &str) {
        let line = line.trim_end();
        if self.inside_nested() || line.trim().is_empty() || line.trim() == "Caused by:" {
            return;
        }
        if self.last_lines.len() == LAST_LINES {
            self.last_lines.pop_front();
        }
        self.last_lines.push_back(crate::text::truncate_chars(line, LAST_LINE_CHARS));
    }

    /// cargo's `error: test failed, to rerun pass …`, unless a nested cargo printed it.
    fn rerun_note(&mut self, line: &str) {
        if !self.inside_nested() {
            self.rerun_note = Some(line.trim().to_string());
        }
    }

    /// cargo's `process didn't exit successfully: `…/deps/x-hash …` (signal: 6 …)`: the binary it
    /// names stopped. A nested run's binary ends that run; this binary's (or, with no run nested,
    /// one cargo did not name recognisably) ends this one.
    fn exit_note(&mut self, note: &str) {
        let names = |binary: &Option<String>| binary.as_deref().is_some_and(|b| note.contains(b));
        if self.inside_nested() {
            if let Some(k) = self.nested.iter().rposition(|n| names(&n.binary)) {
                self.nested.truncate(k);
                return;
            }
            if !names(&self.binary) {
                // Whose exit it is cannot be told: a child's, rather than end this binary's run
                // and count what its children print next as the project's tests.
                self.nested.pop();
                return;
            }
            self.nested.clear();
        }
        self.exit_note = Some(note.to_string());
    }

    fn cargo_status(&mut self) {
        if self.running() {
            self.cargo_spoke = true;
        }
    }

    /// Fills the failed case `name` with its `---- name stdout ----` section.
    fn section(&mut self, name: &str, body: &str) {
        let Some(index) = self.cases.iter().rposition(|(c, _)| c.name == name) else { return };
        let file = self.record.as_ref().and_then(|r| r.file.as_deref());
        if let Some(location) = apply_section(&mut self.cases[index].0, file, body) {
            self.printed.push(PrintedLocation { case: index, ..location });
        }
    }

    /// Ends the binary's output: checks each run against its own summary, then puts the cases it
    /// counts into the report. One that began a run and never ended it crashed or was killed: an
    /// `error` case says so.
    fn close(self, report: &mut ParsedReport) {
        let who = self.who();
        let mut dropped: Vec<Option<Dropped>> = vec![None; self.cases.len()];
        let mut error_cases: Vec<(u64, String)> = Vec::new();
        for (b, block) in self.blocks.iter().enumerate() {
            let Some(line) = block.summary.as_deref().filter(|_| !block.reopened) else { continue };
            let Some(summary) = Tally::parse(line) else { continue };
            let index: Vec<usize> = (0..self.cases.len()).filter(|&i| self.cases[i].1 == b).collect();
            let lines: Vec<(&str, CaseStatus)> =
                index.iter().map(|&i| (self.cases[i].0.name.as_str(), self.cases[i].0.status)).collect();
            let checked = reconcile(&lines, summary, self.doc_tests);
            for (&i, why) in index.iter().zip(&checked.dropped) {
                dropped[i] = *why;
            }
            let named: Vec<String> = index
                .iter()
                .filter_map(|&i| dropped[i].map(|why| (i, why)))
                .map(|(i, why)| format!("`{}` ({})", self.cases[i].0.name, why.reason()))
                .collect();
            let count = named.len();
            let named = list(&named);
            if checked.kept == summary && !checked.guessed() {
                if count > 0 {
                    report.warnings.push(format!(
                        "{who}: {count} result line(s) printed while its tests ran are not its own and were not \
                         counted: {named}; the rest agree with its summary `{line}`"
                    ));
                }
                continue;
            }
            let missing = summary.failed.saturating_sub(checked.kept.failed);
            let not_counted = if count > 0 { format!("; not counted: {named}") } else { String::new() };
            let message = format!(
                "{who}: its own summary `{line}` does not match the result lines read for it ({} counted{not_counted}): \
                 another process writing to the same output (a child its tests started?) added lines or broke the \
                 binary's own, so which results are its own cannot be told; passes are counted no further than its \
                 summary, and {missing} failure(s) it counts and no line shows are error cases",
                checked.kept
            );
            report.errors.push(message.clone());
            error_cases.push((missing.clamp(1, MISSING_CAP), message));
        }
        if self.foreign > 0 || self.foreign_start.is_some() {
            report.warnings.push(format!(
                "{who}: a test run printed inside its own ({} result line(s), from `{}`) was not counted as its \
                 tests: a process its tests started (a nested `cargo test`?) writes to the same output",
                self.foreign,
                self.foreign_start.as_deref().unwrap_or_default()
            ));
        }
        let stopped = self.blocks.last().filter(|b| b.running()).map(|b| (b.tests, b.summary.is_some()));

        let first = report.cases.len();
        let mut moved_to = vec![None; self.cases.len()];
        for (i, ((case, _), why)) in self.cases.into_iter().zip(&dropped).enumerate() {
            if why.is_none() {
                moved_to[i] = Some(report.cases.len());
                report.cases.push(case);
            }
        }
        let error_case = |message: String| {
            Case {
                name: crate::model::incomplete::TEST_BINARY_CASE.into(),
                classname: self.record.as_ref().map(|r| r.name.clone().into()),
                file: self.record.as_ref().and_then(|r| r.file.clone()).map(Into::into),
                status: CaseStatus::Error,
                ..Case::default()
            }
            .with_message(Some(message))
        };
        for (n, message) in error_cases {
            for _ in 0..n {
                report.cases.push(error_case(message.clone()));
            }
        }
        if let Some((header, after_summary)) = stopped {
            let reported = report.cases.len() - first;
            let of = header.map(|n| format!(" of {n}")).unwrap_or_default();
            let why = if after_summary {
                "; a result line came after a `test result:` line, which was not the binary's own"
            } else {
                ""
            };
            let note = self.exit_note.as_deref().map(|n| format!(": {n}")).unwrap_or_default();
            report.cases.push(error_case(format!(
                "the test binary stopped before reporting all its results ({reported}{of} reported){why}{note}"
            )));
        } else if self.exit_note.is_some() && !report.cases[first..].iter().any(|c| c.status.is_failure()) {
            // cargo says the binary failed and none of its results does: a `harness = false`
            // target (its own `main`, no libtest lines) or a failure after its summary.
            let what = match self.blocks.iter().rev().find_map(|b| b.summary.as_deref()) {
                None => "failed without printing libtest's results (a `harness = false` target runs its own \
                         `main`: fcorr cannot see its tests)"
                    .to_string(),
                Some(summary) => format!("failed after its own summary `{summary}`"),
            };
            let cargo: Vec<String> =
                [&self.rerun_note, &self.exit_note].into_iter().flatten().map(|l| format!("`{l}`")).collect();
            let last = if self.last_lines.is_empty() {
                "it printed nothing of its own".to_string()
            } else {
                let lines: Vec<String> = self.last_lines.iter().map(|l| format!("`{}`", l.trim())).collect();
                format!("its last output: {}", lines.join(" / "))
            };
            report.cases.push(error_case(format!("{who} {what}: cargo says {}; {last}", cargo.join(", "))));
        }
        if let Some(mut record) = self.record {
            record.cases = first..report.cases.len();
            record.printed = self
                .printed
                .into_iter()
                .filter_map(|p| Some(PrintedLocation { case: moved_to.get(p.case).copied().flatten()?, ..p }))
                .collect();
            report.targets.push(record);
        }
    }
}

/// The first [`NAMED`] items, and how many more.
fn list(items: &[String]) -> String {
    let mut text = items.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > NAMED {
        text.push_str(&format!(" and {} more", items.len() - NAMED));
    }
    text
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
    let p = patterns();
    let mut report = ParsedReport { tool: Some("cargo test".into()), ..ParsedReport::default() };
    let mut target = Target::default();
    // The failure section being read: the case it fills (`None` for a nested run's) and its text.
    let mut section: Option<(Option<String>, String)> = None;
    let mut saw_run = false;
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
                if name.is_some() {
                    body.push_str(line);
                    body.push('\n');
                }
                continue;
            }
            if let (Some(name), body) = (name.take(), std::mem::take(body)) {
                target.section(&name, &body);
            }
            section = None;
        }
        if let Some(c) = p.running_target.captures(line) {
            let binary = binary_file(&c[2]);
            if !target.binary_line(line, Some(binary.clone())) {
                std::mem::take(&mut target).close(&mut report);
                let file = options.relative_path(&c[1]);
                let unit_tests = line.contains("Running unittests ");
                target = Target::new(binary_name(&c[2]), Some(file), unit_tests, Some(binary));
            }
        } else if let Some(c) = p.doc_tests.captures(line) {
            if !target.binary_line(line, None) {
                std::mem::take(&mut target).close(&mut report);
                target = Target::new(format!("{} (doc-tests)", &c[1]), None, false, None);
            }
        } else if let Some(c) = p.running_tests.captures(line) {
            saw_run = true;
            target.header(line, c[1].parse().ok());
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
            target.result(Case { name: name.into(), status, ..Case::default() }.with_message(message));
        } else if let Some(c) = p.section.captures(line) {
            let name = (!target.inside_nested()).then(|| c[1].to_string());
            section = Some((name, String::new()));
        } else if line.starts_with("test result: ") {
            target.summary(line);
        } else if line.trim_start().starts_with("process didn't exit successfully") {
            target.exit_note(line.trim());
        } else if line.starts_with(RERUN_NOTE) {
            target.rerun_note(line);
        } else if p.cargo_status.is_match(line) {
            target.cargo_status();
        } else {
            target.other_line(line);
        }
    }
    if let Some((Some(name), body)) = section.take() {
        target.section(&name, &body);
    }
    target.close(&mut report);
    if !saw_run {
        let message = "no libtest output: no `running N tests` line (did the tests compile and start?)";
        return Err(ParseError::new(NAME, message));
    }
    Ok(report)
}

/// `target/debug/deps/integration-00fbb4f91c8b2162` → `integration-00fbb4f91c8b2162`: the file
/// cargo names again when the binary fails.
fn binary_file(path: &str) -> String {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    file.strip_suffix(".exe").unwrap_or(file).to_string()
}

/// `target/debug/deps/integration-00fbb4f91c8b2162` → `integration`.
fn binary_name(path: &str) -> String {
    let file = binary_file(path);
    match file.rsplit_once('-') {
        Some((name, hash)) if !name.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => file,
    }
}

/// Fills a failed case with the message, details and line from its `---- name stdout ----`
/// section, and returns the panic's `file:line` (its `case` index is the caller's to set). The
/// case takes the line when the file is its own (`file`, as cargo printed it); the Rust
/// ecosystem's `locate` decides again once the target is placed in its workspace member.
fn apply_section(case: &mut Case, file: Option<&str>, body: &str) -> Option<PrintedLocation> {
    let body = body.trim_matches('\n');
    let lines: Vec<&str> = body.lines().collect();
    let panic_at = lines.iter().position(|l| patterns().panicked.is_match(l));
    let mut printed = None;
    let message = match panic_at {
        Some(i) => {
            let c = patterns().panicked.captures(lines[i]);
            if let Some(c) = &c {
                let line = c[3].parse().ok();
                if file == Some(&c[2]) {
                    case.line = line;
                }
                printed = line.map(|line| PrintedLocation { case: 0, file: c[2].to_string(), line });
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
    printed
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
        assert_eq!(
            statuses(&report),
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

    fn statuses(report: &ParsedReport) -> Vec<(&str, CaseStatus, Option<&str>)> {
        report.cases.iter().map(|c| (c.name.as_str(), c.status, c.classname.as_deref())).collect()
    }

    // Shaped like the real output of a test that runs `cargo test` on a fixture crate with the
    // output inherited, then fails (Rust 1.95; the fixture's 30 tests cut to 2).
    const NESTED_CARGO: &str = "    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.01s
     Running unittests src/lib.rs (target/debug/deps/outer-8814540514c6371a)

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/cli.rs (target/debug/deps/cli-3fa20a26ae5c1a9b)

running 1 test
   Compiling fixture v0.1.0 (/p/tests/fixture)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.03s
     Running unittests src/lib.rs (target/fixture/debug/deps/fixture-bf07fdf98814b1a7)

running 2 tests
test tests::fixture_case_0 ... ok
test tests::fixture_case_1 ... FAILED

failures:

---- tests::fixture_case_1 stdout ----
thread 'tests::fixture_case_1' panicked at src/lib.rs:3:5:
child failure

failures:
    tests::fixture_case_1

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: test failed, to rerun pass `--lib`
   Doc-tests fixture

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

test fixture_builds_and_answer_is_right ... FAILED

failures:

---- fixture_builds_and_answer_is_right stdout ----

thread 'fixture_builds_and_answer_is_right' (7166) panicked at tests/cli.rs:9:5:
assertion `left == right` failed: outer crate is broken
  left: 41
 right: 42


failures:
    fixture_builds_and_answer_is_right

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.11s

error: test failed, to rerun pass `--test cli`
   Doc-tests outer

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    #[test]
    fn a_nested_cargo_run_is_not_the_binarys_tests() {
        let report = parse_str(NESTED_CARGO).unwrap();
        // cargo's own count for `cli`: 0 passed; 1 failed. None of the fixture's results.
        assert_eq!(statuses(&report), vec![("fixture_builds_and_answer_is_right", CaseStatus::Failed, Some("cli"))]);
        let failed = &report.cases[0];
        assert_eq!(failed.line, Some(9));
        assert!(failed.message().unwrap().contains("outer crate is broken"), "{failed:?}");
        let targets: Vec<(&str, std::ops::Range<usize>)> =
            report.targets.iter().map(|t| (t.name.as_str(), t.cases.clone())).collect();
        assert_eq!(targets, vec![("outer", 0..0), ("cli", 0..1), ("outer (doc-tests)", 1..1)]);
        assert_eq!(report.targets[1].printed, vec![PrintedLocation { case: 0, file: "tests/cli.rs".into(), line: 9 }]);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        let warning = &report.warnings[0];
        assert!(warning.contains("`cli` (tests/cli.rs)") && warning.contains("2 result line(s)"), "{warning}");
        assert!(warning.contains("target/fixture/debug/deps/fixture-bf07fdf98814b1a7"), "{warning}");
    }

    #[test]
    fn a_nested_run_cut_short_by_a_kill_counts_nothing() {
        let cut = &NESTED_CARGO[..NESTED_CARGO.find("test tests::fixture_case_1").unwrap()];
        let report = parse_str(cut).unwrap();
        assert_eq!(statuses(&report), vec![("[test binary]", CaseStatus::Error, Some("cli"))]);
        assert!(report.cases[0].message().unwrap().contains("(0 of 1 reported)"), "{:?}", report.cases[0]);
    }

    #[test]
    fn a_child_printing_a_result_line_does_not_pass_the_test() {
        // The real output of a test whose child runs `printf 'test tests::x ... ok\ntest result: ok. …'`.
        let text = "     Running unittests src/lib.rs (target/debug/deps/rspoof-1b16ea94e6ff3e8e)

running 1 test

test tests::x ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

test tests::x ... FAILED

failures:

---- tests::x stdout ----

thread 'tests::x' (22015) panicked at src/lib.rs:9:9:
this test really fails


failures:
    tests::x

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.08s

error: test failed, to rerun pass `--lib`
";
        let report = parse_str(text).unwrap();
        assert_eq!(statuses(&report), vec![("tests::x", CaseStatus::Failed, Some("rspoof"))]);
        assert_eq!(report.cases[0].message(), Some("this test really fails"));
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert!(
            report.warnings[0].contains("`tests::x` (a test whose own result came later)"),
            "{:?}",
            report.warnings
        );
        // Killed before its own summary: the child's summary does not stand in for it.
        let cut = &text[..text.find("test result: FAILED").unwrap()];
        let report = parse_str(cut).unwrap();
        assert_eq!(report.cases.last().unwrap().status, CaseStatus::Error);
        assert!(report.cases.last().unwrap().message().unwrap().contains("was not the binary's own"));
    }

    #[test]
    fn result_lines_its_summary_does_not_count_never_add_passes() {
        let text = "     Running tests/it.rs (target/debug/deps/it-00fbb4f91c8b2162)

running 2 tests
test helper_one ... ok
test helper_two ... ok
test real_ok ... ok
test real_bad ... FAILED

test result: FAILED. 1 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let report = parse_str(text).unwrap();
        let cases = statuses(&report);
        // The summary's one pass (which line cannot be told: the latest), its failure, and an error
        // for each of the two failures no line shows.
        assert_eq!(
            cases,
            vec![
                ("real_ok", CaseStatus::Passed, Some("it")),
                ("real_bad", CaseStatus::Failed, Some("it")),
                ("[test binary]", CaseStatus::Error, Some("it")),
                ("[test binary]", CaseStatus::Error, Some("it")),
            ]
        );
        assert_eq!(report.errors.len(), 1);
        assert!(report.errors[0].contains("1 passed, 1 failed, 0 ignored counted"), "{}", report.errors[0]);
        assert!(report.errors[0].contains("`helper_one` (more than its summary counts)"), "{}", report.errors[0]);
        assert_eq!(report.targets[0].cases, 0..4);
    }

    #[test]
    fn a_tools_lines_inside_a_test_are_not_tests() {
        // trybuild prints `test tests/ui/x.rs ... ok` for each file it checks inside one test.
        let text = "     Running tests/compile.rs (target/debug/deps/compile-00fbb4f91c8b2162)

running 1 test
test tests/ui/missing.rs ... ok
test tests/ui/extra.rs ... ok
test ui ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.10s
";
        let report = parse_str(text).unwrap();
        assert_eq!(statuses(&report), vec![("ui", CaseStatus::Passed, Some("compile"))]);
        assert!(report.errors.is_empty());
        assert!(report.warnings[0].contains("not a Rust test name"), "{:?}", report.warnings);
    }

    #[test]
    fn a_binary_that_exits_mid_run_leaves_the_next_binaries_counted() {
        // Real output: `tests/ex.rs` calls `std::process::exit(0)` in a test; cargo goes on.
        let text = "     Running tests/ex.rs (target/debug/deps/ex-eeb32e1a8d1f03b4)

running 2 tests
test d ... ok
     Running tests/z.rs (target/debug/deps/z-2ef48890a165c6d6)

running 1 test
test e ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let report = parse_str(text).unwrap();
        assert_eq!(
            statuses(&report),
            vec![
                ("d", CaseStatus::Passed, Some("ex")),
                ("[test binary]", CaseStatus::Error, Some("ex")),
                ("e", CaseStatus::Passed, Some("z")),
            ]
        );
        assert!(report.cases[1].message().unwrap().contains("(1 of 2 reported)"));
    }

    #[test]
    fn a_nested_binary_that_crashes_ends_only_the_nested_run() {
        let text = "     Running tests/cli.rs (target/debug/deps/cli-3fa20a26ae5c1a9b)

running 1 test
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.03s
     Running unittests src/lib.rs (target/fixture/debug/deps/fixture-bf07fdf98814b1a7)

running 2 tests
test tests::a ... ok
error: test failed, to rerun pass `--lib`

Caused by:
  process didn't exit successfully: `/p/target/fixture/debug/deps/fixture-bf07fdf98814b1a7` (signal: 6, SIGABRT: process abort signal)
     Running tests/other.rs (target/fixture/debug/deps/other-0123456789abcdef)

running 1 test
test b ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

test drives_the_fixture ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.20s
";
        let report = parse_str(text).unwrap();
        assert_eq!(statuses(&report), vec![("drives_the_fixture", CaseStatus::Passed, Some("cli"))]);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        // This binary's own crash, with a child's run going: the error names it.
        let crash = text
            .replace("target/fixture/debug/deps/fixture-bf07fdf98814b1a7`", "target/debug/deps/cli-3fa20a26ae5c1a9b`");
        let report = parse_str(&crash).unwrap();
        assert_eq!(statuses(&report)[0], ("[test binary]", CaseStatus::Error, Some("cli")));
        assert!(report.cases[0].message().unwrap().contains("SIGABRT"));
        assert_eq!(report.cases[1].classname.as_deref(), Some("other"));
    }

    #[test]
    fn output_without_a_test_run_is_an_error() {
        assert!(parse_str("error[E0308]: mismatched types\n").is_err());
        assert!(parse_str("").is_err());
        assert!(Libtest.sniff(MIXED.as_bytes()));
        assert!(!Libtest.sniff(b"<testsuite/>"));
    }

    // `cargo test --no-fail-fast 2>&1` (Rust 1.95) on tests/fixtures/rust-harness-false: a
    // `harness = false` target that prints its own lines and exits 1.
    const HARNESS_FALSE: &str = "   Compiling rharness v0.1.0 (/p)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.13s
     Running unittests src/lib.rs (target/debug/deps/rharness-a6414fb25af42962)

running 1 test
test tests::ok ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/golden.rs (target/debug/deps/golden-20d6baafaff31b08)
golden: checking 3 files
golden a.txt ... ok
golden b.txt ... FAILED: differs at line 3
error: test failed, to rerun pass `--test golden`

Caused by:
  process didn't exit successfully: `/p/target/debug/deps/golden-20d6baafaff31b08` (exit status: 1)
   Doc-tests rharness

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: 1 target failed:
    `--test golden`
";

    #[test]
    fn a_failing_binary_without_libtest_results_is_an_error_quoting_cargo_and_its_last_lines() {
        let report = parse_str(HARNESS_FALSE).unwrap();
        assert_eq!(
            statuses(&report),
            vec![
                ("tests::ok", CaseStatus::Passed, Some("rharness")),
                ("[test binary]", CaseStatus::Error, Some("golden"))
            ]
        );
        let error = &report.cases[1];
        assert_eq!(error.file.as_deref(), Some("tests/golden.rs"));
        assert_eq!(
            error.message(),
            Some(
                "test binary `golden` (tests/golden.rs) failed without printing libtest's results (a `harness = \
                 false` target runs its own `main`: fcorr cannot see its tests): cargo says `error: test failed, to \
                 rerun pass `--test golden``, `process didn't exit successfully: \
                 `/p/target/debug/deps/golden-20d6baafaff31b08` (exit status: 1)`; its last output: `golden: checking \
                 3 files` / `golden a.txt ... ok` / `golden b.txt ... FAILED: differs at line 3`"
            )
        );
        // The same binary exiting 0 says nothing to count, and nothing failed.
        let passing = HARNESS_FALSE.replace("process didn't exit successfully", "(not a cargo line)");
        let passing = passing.replace("error: test failed, to rerun pass `--test golden`", "");
        assert_eq!(statuses(&parse_str(&passing).unwrap()).len(), 1);
    }

    #[test]
    fn a_binary_cargo_says_failed_after_its_passing_summary_is_an_error() {
        // libtest printed its summary, then the process died (a destructor, an atexit handler).
        let text = "     Running tests/it.rs (target/debug/deps/it-0123456789abcdef)

running 1 test
test works ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

free(): double free detected in tcache 2
error: test failed, to rerun pass `--test it`

Caused by:
  process didn't exit successfully: `/p/target/debug/deps/it-0123456789abcdef` (signal: 6, SIGABRT: process abort signal)
";
        let report = parse_str(text).unwrap();
        assert_eq!(
            statuses(&report),
            vec![("works", CaseStatus::Passed, Some("it")), ("[test binary]", CaseStatus::Error, Some("it"))]
        );
        let message = report.cases[1].message().unwrap();
        assert!(message.contains("failed after its own summary `test result: ok. 1 passed;"), "{message}");
        assert!(
            message.contains("SIGABRT")
                && message.ends_with("its last output: `free(): double free detected in tcache 2`"),
            "{message}"
        );
    }
}
