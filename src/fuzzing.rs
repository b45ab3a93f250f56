//! Fuzz targets: one function of bytes per reader of user files, run by the cargo-fuzz crate in
//! `fuzz/` (libFuzzer, nightly) and, over a seed corpus and fixed mutations, by the integration
//! test `fuzz_targets` on every `cargo test`. Not an API: hidden from the docs.
//!
//! A target fails by panicking. Beyond "no panic", each checks what its reader promises: the same
//! result however the bytes arrive, case counts that agree with the cases, stable unique ids,
//! results that read back from JSON, text within its caps (docs/architecture.md, "Fuzzing").

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::collect::{self, DETAILS_CAP, OUTPUT_CAP, ParseOptions, ParsedReport, ReportParser};
use crate::errors::ParseError;
use crate::model::{Case, Suite, SuiteKind};

/// A target: its name and the function that checks one input.
type Target = (&'static str, fn(&[u8]));

/// The targets that are not one report parser. Every parser in [`collect::parsers`] is a target
/// of its own, `report_<format>` (see [`report_target`]), so a new parser needs no line here.
const OTHERS: &[Target] = &[
    ("report_sniff", report_sniff),
    ("xml_stream", xml_stream),
    ("dataset_toml", |data| dataset(data, "toml")),
    ("dataset_json", |data| dataset(data, "json")),
    ("dataset_jsonl", |data| dataset(data, "jsonl")),
    ("dataset_yaml", |data| dataset(data, "yaml")),
    ("dataset_csv", |data| dataset(data, "csv")),
    ("shell", shell),
    ("redaction", redaction),
    ("bank_file", bank_file),
    ("bank_history", bank_history),
    ("bank_pattern_rules", bank_pattern_rules),
    ("bank_state_rules", bank_state_rules),
    ("benchmark_tasks", benchmark_tasks),
];

/// The name of a report parser's target: `report_` and its format, `-` as `_` (`report_go_test_json`).
pub fn report_target(format: &str) -> String {
    format!("report_{}", format.replace('-', "_"))
}

/// Every target's name: one per report parser, then the others.
pub fn targets() -> Vec<String> {
    let parsers = collect::PARSERS.iter().map(|p| report_target(p.format()));
    parsers.chain(OTHERS.iter().map(|(name, _)| name.to_string())).collect()
}

/// Runs one target on one input; panics when an invariant does not hold, or for an unknown name.
pub fn run(target: &str, data: &[u8]) {
    if let Some((_, entry)) = OTHERS.iter().find(|(name, _)| *name == target) {
        return entry(data);
    }
    match collect::PARSERS.iter().find(|p| report_target(p.format()) == target) {
        Some(parser) => report(*parser, data),
        None => panic!("no fuzz target `{target}`; the targets are: {}", targets().join(", ")),
    }
}

/// Root the parsers make paths relative to: cases must not keep it.
const ROOT: &str = "/repo";

fn options() -> ParseOptions {
    ParseOptions { root: Some(PathBuf::from(ROOT)) }
}

/// How much [`crate::text::cap_text`] adds to capped text (`\n[... N bytes truncated]`).
const CAP_NOTE: usize = 48;

/// A report parser: the same result through any buffer; on success, a well-formed suite.
fn report(parser: &dyn ReportParser, data: &[u8]) {
    let whole = parser.parse(&mut BufReader::new(data), &options());
    // A reader that hands out a few bytes at a time, through a small buffer: line and chunk
    // boundaries fall everywhere.
    let trickled = parser.parse(&mut BufReader::with_capacity(13, Trickle(data, 0)), &options());
    assert_eq!(
        describe(&whole),
        describe(&trickled),
        "{}: the result depends on how the input arrives",
        parser.format()
    );
    if let (Ok(first), Ok(second)) = (whole, trickled) {
        check_report(parser.format(), first, second);
    }
}

/// Everything a parse gives, as text, to compare two parses (`Debug` shows NaN, unlike `==`).
fn describe(result: &Result<ParsedReport, ParseError>) -> String {
    match result {
        Ok(report) => format!("{report:?}"),
        Err(e) => format!("error: {e:?} ({e})"),
    }
}

/// Gives out 1 to 7 bytes a read.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.1 += 1;
        let n = buf.len().min(self.0.len()).min(1 + self.1 % 7);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// What a parsed report must be: its targets within its cases, a case that fails the suite for
/// every error, cases that read back from `results.json`; ids unique, and the same on a second parse.
fn check_report(format: &str, report: ParsedReport, again: ParsedReport) {
    let cases = report.cases.len();
    for target in &report.targets {
        assert!(target.cases.start <= target.cases.end && target.cases.end <= cases, "{format}: {target:?}");
        for printed in &target.printed {
            assert!(printed.case < cases, "{format}: printed location of case {} of {cases}", printed.case);
        }
    }
    if !report.errors.is_empty() {
        assert!(
            report.cases.iter().any(|c| c.status.is_failure()),
            "{format}: errors {:?} and no failing case",
            report.errors
        );
    }
    for case in &report.cases {
        check_case(format, case);
        check_neutralised(format, case);
    }
    let first = suite_of(report.cases);
    let second = suite_of(again.cases);
    let ids = |suite: &Suite| suite.cases.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&first), ids(&second), "{format}: ids differ between two parses");
    check_suite(format, &first);
}

fn suite_of(cases: Vec<Case>) -> Suite {
    let mut suite = Suite::new("fuzz", "fuzz", SuiteKind::Import);
    suite.cases = cases;
    suite.finalize_cases();
    suite
}

/// A case as the model expects it: times that JSON can hold, text within its caps, files relative.
fn check_case(format: &str, case: &Case) {
    let durations = case.duration_ms.into_iter().chain(case.extra().attempts.iter().filter_map(|a| a.duration_ms));
    for ms in durations {
        assert!(ms.is_finite() && ms >= 0.0, "{format}: case `{}` lasted {ms} ms", case.name);
    }
    let output = case.output_len();
    assert!(output <= OUTPUT_CAP + CAP_NOTE, "{format}: case `{}` keeps {output} bytes of output", case.name);
    let details = case.details_len();
    assert!(details <= DETAILS_CAP + CAP_NOTE, "{format}: case `{}` keeps {details} bytes of details", case.name);
    if let Some(file) = &case.file {
        assert!(!file.starts_with(&format!("{ROOT}/")), "{format}: file `{file}` is not relative to the root");
    }
}

/// Every text of a case, escaped as the PR comment, job summary and annotations escape it, keeps
/// no bidirectional control and cannot break out of its spot: a table cell or `<summary>` stays
/// one line with no raw HTML, a code span one line, a code block is not closed by its content,
/// an annotation message one line.
fn check_neutralised(format: &str, case: &Case) {
    use crate::publish::annotations::{escape_data, escape_property};
    use crate::report::filters::{code_block, escape_cell, escape_summary, inline_code};
    let texts = [Some(case.name.as_str()), case.classname.as_deref(), case.file.as_deref(), case.message()];
    let long = [case.details(), case.output()];
    for text in texts.into_iter().chain(long.iter().map(Option::as_deref)).flatten() {
        let one_line = |escaped: &str, how: &str| {
            assert!(
                !escaped.chars().any(|c| is_bidi_control(c) || c == '\n' || c == '\r'),
                "{format}: {how} of {text:?} is {escaped:?}"
            );
        };
        let cell = escape_cell(text);
        one_line(&cell, "the table cell");
        // Line breaks become `<br>`, the one tag a cell may hold.
        let markup = cell.replace("<br>", "");
        assert!(!markup.contains(['<', '>']) && unescaped_pipe(&cell).is_none(), "{format}: cell {cell:?}");
        let summary = escape_summary(text);
        one_line(&summary, "the summary");
        assert!(!summary.contains(['<', '>']), "{format}: summary {summary:?}");
        one_line(&inline_code(text, true), "the code span");
        one_line(&escape_data(text), "the annotation message");
        one_line(&escape_property(text), "the annotation property");
        let block = code_block(text, "text");
        assert!(!block.chars().any(is_bidi_control), "{format}: the code block of {text:?}");
        let fence = block.split('\n').next().unwrap_or("").trim_end_matches("text");
        let inner: Vec<&str> = block.trim_end_matches('\n').split('\n').collect();
        let body = &inner[1..inner.len().saturating_sub(1).max(1)];
        assert!(
            !body.iter().any(|line| line.trim_start().starts_with(fence)),
            "{format}: the code block of {text:?} closes early:\n{block}"
        );
    }
}

/// The same set `crate::text::neutralise_bidi` replaces, spelled out again so the check does
/// not trust the code it checks.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// The byte index of a `|` that no odd run of backslashes escapes.
fn unescaped_pipe(cell: &str) -> Option<usize> {
    let bytes = cell.as_bytes();
    (0..bytes.len())
        .find(|&i| bytes[i] == b'|' && bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 0)
}

/// Counts that agree with the cases, unique ids, and a suite that reads back from JSON.
fn check_suite(what: &str, suite: &Suite) {
    let c = &suite.counts;
    assert_eq!(c.total, suite.cases.len() as u64, "{what}: counts {c:?}");
    assert_eq!(c.passed + c.failed + c.error + c.skipped + c.timeout + c.flaky, c.total, "{what}: counts {c:?}");
    let mut ids = std::collections::HashSet::new();
    for case in &suite.cases {
        assert!(!case.id.is_empty() && ids.insert(case.id.as_str()), "{what}: id `{}` empty or twice", case.id);
    }
    let json = serde_json::to_string(suite).unwrap_or_else(|e| panic!("{what}: the suite cannot be written: {e}"));
    let back: Suite = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{what}: {e}, reading back {json}"));
    let (written, read) = (to_value(suite), to_value(&back));
    assert!(same_json(&written, &read), "{what}: the suite reads back as\n{read}\nnot\n{written}");
}

fn to_value(suite: &Suite) -> Value {
    // Serialising a suite to a `Value` cannot fail once it was written as text.
    serde_json::to_value(suite).unwrap_or(Value::Null)
}

/// Equal JSON, numbers within a relative 1e-12: serde_json reads floats fast rather than exactly
/// (its `float_roundtrip` feature is off), so a duration may come back one unit in the last place off.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) if x.is_finite() && y.is_finite() => (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// A report file as `fcorr import` reads it: the format sniffed from its content (the first byte
/// of the input picks the file's extension, which error messages look at). A sniffed format reads
/// the bytes as that parser named does.
fn report_sniff(data: &[u8]) {
    let Some((&pick, content)) = data.split_first() else { return };
    let extension = ["xml", "json", "txt", "tap", "trx", "log"][usize::from(pick) % 6];
    let scratch = Scratch::new();
    let path = scratch.file(&format!("report.{extension}"), content);
    let parsed = collect::parse_file(&path, None, &options());
    let Ok((format, report)) = parsed else { return };
    let parser = collect::parser_named(&format).unwrap_or_else(|| panic!("sniffing chose `{format}`, not a format"));
    let named = parser.parse(&mut BufReader::new(content), &options());
    assert_eq!(format!("{report:?}"), describe(&named), "{format}: sniffed and named parses differ");
    if let Ok(again) = named {
        check_report(&format, report, again);
    }
}

/// The XML reader under the .NET and JUnit parsers: read in chunks of any size, it gives the
/// events one reader over the whole input gives (the first byte picks the chunk size).
fn xml_stream(data: &[u8]) {
    let Some((&pick, xml)) = data.split_first() else { return };
    let chunk = 1 + usize::from(pick % 64);
    if let Err(difference) = collect::xml_stream::differential::agrees(xml, chunk) {
        panic!("chunks of {chunk} bytes: {difference}");
    }
}

/// A dataset file in one format, read as `fcorr eval` reads it (size cap, byte-order mark,
/// decoding): reading never panics; a case it accepts has an id no other case has and something
/// to check, and its own expected answer passes.
fn dataset(data: &[u8], extension: &str) {
    use crate::kinds::eval::graders::{Answered, Check, GradingContext, Judgement, judge};
    // No script runs and no model is called on fuzzed input.
    let offline = GradingContext { offline: true, ..GradingContext::default() };
    let scratch = Scratch::new();
    let Ok(compiled) = crate::kinds::eval::dataset::load(&scratch.file(&format!("cases.{extension}"), data)) else {
        return;
    };
    let mut ids = std::collections::HashSet::new();
    for eval in &compiled {
        let case = &eval.case;
        assert!(!case.id.trim().is_empty() && ids.insert(case.id.as_str()), "case id `{}`", case.id);
        assert!(!eval.checks.is_empty(), "case `{}` checks nothing", case.id);
        let passes = |check: Check, answer: Value| {
            judge(&[check], &Answered::bare(case, &answer), &offline, None).judgement == Judgement::Pass
        };
        if let Some(command) = &case.expected_command {
            let answer = Value::String(command.clone());
            assert!(passes(Check::command(command), answer), "case `{}`: its command fails", case.id);
        }
        if let Some(expected) = &case.expected {
            assert!(passes(Check::equals(expected), expected.clone()), "case `{}`: its answer fails", case.id);
        }
        // Judging any answer (here the prompt) never panics.
        let prompt = Value::String(case.prompt.clone());
        let _ = judge(&eval.checks, &Answered::bare(case, &prompt), &offline, case.threshold);
    }
}

/// The shell lexer, normaliser and classifiers, on the text before the first NUL (the expected
/// command) and after it (the answer): the canonical form is a fixed point, a command matches
/// itself, matching is symmetric.
fn shell(data: &[u8]) {
    use crate::kinds::eval::shell;
    let text = String::from_utf8_lossy(data);
    let (expected, answer) = text.split_once('\0').unwrap_or((&text, &text));
    for command in [expected, answer] {
        if let Ok(tokens) = shell::tokenize(command) {
            let _ = shell::simple_commands(&tokens);
        }
        if let Ok(parts) = shell::normalize::normalize(command) {
            let canonical = parts.join(" ");
            let again = shell::normalize::normalize(&canonical);
            assert_eq!(again.as_ref(), Ok(&parts), "the canonical form `{canonical}` of `{command}` is not canonical");
        }
        assert!(shell::commands_match(command, command), "`{command}` does not match itself");
        let _ = shell::classify(command);
        let _ = shell::bashisms(command);
    }
    assert_eq!(
        shell::commands_match(expected, answer),
        shell::commands_match(answer, expected),
        "matching `{expected}` and `{answer}` depends on which is expected"
    );
}

/// Secrets (before the first NUL, separated by U+001F; the first byte picks the chunk size)
/// redacted from a text (after the NUL) as a stream: chunk by chunk gives what the whole text
/// at once gives, and no secret fcorr redacts (4 characters or more) is left in what comes out.
fn redaction(data: &[u8]) {
    use crate::secrets::{MASK, MIN_REDACTED_LEN, Redactor};
    let Some((&pick, rest)) = data.split_first() else { return };
    let Some(split) = rest.iter().position(|&b| b == 0) else { return };
    let secrets: Vec<String> =
        String::from_utf8_lossy(&rest[..split]).split('\u{1f}').filter(|s| !s.is_empty()).map(String::from).collect();
    let text = &rest[split + 1..];
    let mut whole = Redactor::for_values(secrets.clone());
    let mut expected = whole.push(text).into_owned();
    expected.extend(whole.finish());
    let chunk = 1 + usize::from(pick % 32);
    let mut streamed = Redactor::for_values(secrets.clone());
    let mut got = Vec::new();
    for piece in text.chunks(chunk) {
        got.extend_from_slice(&streamed.push(piece));
    }
    got.extend(streamed.finish());
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&expected),
        "chunks of {chunk} bytes redact differently from the whole text"
    );
    // A secret holding the mask's character can be rebuilt from a mask and its neighbours.
    let mask = MASK.chars().next().unwrap_or('*');
    for secret in secrets.iter().filter(|s| s.chars().count() >= MIN_REDACTED_LEN && !s.contains(mask)) {
        let left = got.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert!(!left, "secret {secret:?} is left in {:?}", String::from_utf8_lossy(&got));
    }
}

/// A bank file: a bank it accepts has unique, non-empty test ids, each test kept as written.
fn bank_file(data: &[u8]) {
    let scratch = Scratch::new();
    let Ok(bank) = crate::kinds::bank::expectations::load_bank(&scratch.file("bank.json", data)) else { return };
    let mut ids = std::collections::HashSet::new();
    for test in &bank.tests {
        assert!(!test.test_id.trim().is_empty() && ids.insert(test.test_id.as_str()), "test id `{}`", test.test_id);
        assert_eq!(test.raw.get("test_id").and_then(Value::as_str), Some(test.test_id.as_str()), "raw test");
    }
}

/// A bank (before the first NUL) and one history file (after it): the expectations each test
/// resolves to come from the history file or the bank, and say which.
fn bank_history(data: &[u8]) {
    use crate::kinds::bank::expectations::{Source, load_bank, load_history};
    let Some(split) = data.iter().position(|&b| b == 0) else { return };
    let scratch = Scratch::new();
    let Ok(bank) = load_bank(&scratch.file("bank.json", &data[..split])) else { return };
    let _ = scratch.file("history/expectations_2025-01-01.json", &data[split + 1..]);
    let Ok(history) = load_history(&scratch.0.join("history"), &bank) else { return };
    for test in &bank.tests {
        let resolved = history.resolve(test);
        match &resolved.source {
            Source::Original => assert_eq!(resolved.expectations, test.expectations, "`{}`", test.test_id),
            Source::Calibration(label) => assert_eq!(label, "2025-01-01", "`{}`", test.test_id),
            Source::HumanOverride(_) => {}
        }
    }
}

/// A pattern rules file (before the first NUL) matched against a text (after it): every match
/// is a span of the text.
fn bank_pattern_rules(data: &[u8]) {
    let Some(split) = data.iter().position(|&b| b == 0) else { return };
    let scratch = Scratch::new();
    let Ok(rules) = crate::kinds::bank::pattern::Rules::load(&scratch.file("rules.json", &data[..split])) else {
        return;
    };
    let text = String::from_utf8_lossy(&data[split + 1..]);
    for found in rules.matches(&text) {
        assert_eq!(text.get(found.start..found.end), Some(found.matched_text.as_str()), "{found:?}");
    }
}

/// A state rules file (before the first NUL) evaluated on a user state (a JSON object, after it):
/// the handlers come in name order, each once.
fn bank_state_rules(data: &[u8]) {
    let Some(split) = data.iter().position(|&b| b == 0) else { return };
    let scratch = Scratch::new();
    let Ok(rules) = crate::kinds::bank::state::Rules::load(&scratch.file("rules.json", &data[..split])) else { return };
    let Ok(state) = serde_json::from_slice::<serde_json::Map<String, Value>>(&data[split + 1..]) else { return };
    let handlers = rules.evaluate(&state);
    assert!(handlers.windows(2).all(|w| w[0] < w[1]), "handlers {handlers:?}");
}

/// A benchmark tasks file (the first byte picks `.json`, `.jsonl` or `.toml`): tasks it accepts
/// have unique, non-empty ids and live where the file is.
fn benchmark_tasks(data: &[u8]) {
    let Some((&pick, content)) = data.split_first() else { return };
    let extension = ["json", "jsonl", "toml"][usize::from(pick) % 3];
    let scratch = Scratch::new();
    let Ok(tasks) = crate::kinds::benchmark::tasks::load(&scratch.file(&format!("tasks.{extension}"), content)) else {
        return;
    };
    let mut ids = std::collections::HashSet::new();
    for task in &tasks {
        assert!(!task.id.trim().is_empty() && ids.insert(task.id.as_str()), "task id `{}`", task.id);
        assert_eq!(task.base_dir, scratch.0, "task `{}`", task.id);
    }
}

/// A directory of its own for the files one run of a target reads; removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("fcorr-fuzz-{}-{n}", std::process::id()));
        // A directory a crashed process with the same id left behind is replaced.
        let _ = std::fs::remove_dir_all(&dir);
        // A fuzz run cannot go on without a temporary directory: failing loudly is right.
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        Scratch(dir)
    }

    /// Writes `bytes` to `name` (a relative path) in the directory and returns its path.
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent().filter(|p| *p != Path::new("")) {
            let _ = std::fs::create_dir_all(parent);
        }
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
