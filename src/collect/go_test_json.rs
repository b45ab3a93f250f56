//! `go test -json` (test2json) event streams: one JSON object per line.
//!
//! Every test and subtest with a final `pass`/`fail`/`skip` becomes a case (classname = package,
//! name = `TestX/sub`). Tests that started but never finished, and packages that failed without a
//! failing test (build failures, panics outside a test, `os.Exit` in `TestMain`), become `error`
//! cases, so a non-zero exit code is always explained by a case. A failing or skipped case that
//! printed a `file.go:N:` location carries it as go printed it (a bare file name); finding the
//! defining file under the project root is the Go ecosystem's `locate`, not this parser's.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::BufRead;
use std::sync::OnceLock;

use regex::Regex;
use serde::Deserialize;

use super::{DETAILS_CAP, LINE_CAP, OUTPUT_CAP, ParseOptions, ParsedReport, ReportParser, read_line_capped};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// `go test -json` output.
pub struct GoTestJson;

impl ReportParser for GoTestJson {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["go-json", "gotest", "test2json"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .is_some_and(|first| first.starts_with('{') && first.contains("\"Action\""))
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse(input, options)
    }
}

/// One test2json event; fields we do not use are ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    action: String,
    #[serde(default)]
    package: Option<String>,
    #[serde(default)]
    test: Option<String>,
    #[serde(default)]
    elapsed: Option<f64>,
    #[serde(default)]
    output: Option<String>,
    #[serde(default)]
    failed_build: Option<String>,
    #[serde(default)]
    import_path: Option<String>,
}

/// Most output kept per test or package while reading (the case fields are capped again later).
const KEEP_OUTPUT: usize = 64 * 1024;

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "go-test-json";

/// The message of a test that started and never reported a result. The stream alone cannot say
/// why; the Go ecosystem replaces it when fcorr's own timeout killed `go test`.
pub(crate) const UNFINISHED: &str = "the test started but never finished: the test binary exited or was killed";

#[derive(Default)]
struct TestState {
    package: String,
    name: String,
    output: String,
    status: Option<CaseStatus>,
    elapsed: Option<f64>,
}

#[derive(Default)]
struct PackageState {
    output: String,
    failed: bool,
    failed_build: Option<String>,
    elapsed: Option<f64>,
    /// The package said `pass`, `fail` or `skip`: go got to its end.
    ended: bool,
    /// The package said `pass` (not `skip`: no test files).
    passed: bool,
}

// The options carry the project root; this format names no path to make relative (go prints
// bare file names), so they are not read.
fn parse(input: &mut dyn BufRead, _options: &ParseOptions) -> Result<ParsedReport, ParseError> {
    let mut tests: Vec<TestState> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut packages: Vec<(String, PackageState)> = Vec::new();
    // Package -> its place in `packages` (kept in stream order for the cases): a report of a
    // million events must not search the list on each one.
    let mut package_index: HashMap<String, usize> = HashMap::new();
    let mut build_output: HashMap<String, String> = HashMap::new();
    let mut events = 0u64;
    let mut bad_lines = 0u64;
    let mut long_lines = Vec::new();
    let mut line = String::new();
    let mut line_no = 0u64;
    loop {
        // Lines are capped: one event of 500 MB of output must not be held whole.
        let (n, cut) = read_line_capped(input, &mut line, LINE_CAP).map_err(|e| {
            ParseError::new(NAME, format!("cannot read line {}: {e}", line_no + 1)).at_line(line_no + 1)
        })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        // `go` itself may print plain lines (`go: downloading ...`) into the same stream.
        let Ok(event) = serde_json::from_str::<Event>(trimmed) else {
            if cut {
                long_lines.push(line_no);
            } else {
                bad_lines += 1;
            }
            continue;
        };
        events += 1;
        if event.action == "build-output" || event.action == "build-fail" {
            if let (Some(path), Some(text)) = (&event.import_path, &event.output) {
                push_capped(build_output.entry(path.clone()).or_default(), text);
            }
            continue;
        }
        let Some(package) = event.package.clone() else { continue };
        match &event.test {
            Some(test) => {
                let key = (package.clone(), test.clone());
                let i = *index.entry(key).or_insert_with(|| {
                    tests.push(TestState { package: package.clone(), name: test.clone(), ..TestState::default() });
                    tests.len() - 1
                });
                let state = &mut tests[i];
                match event.action.as_str() {
                    "output" => push_capped(&mut state.output, event.output.as_deref().unwrap_or("")),
                    "pass" => state.status = Some(CaseStatus::Passed),
                    "fail" => state.status = Some(CaseStatus::Failed),
                    "skip" => state.status = Some(CaseStatus::Skipped),
                    _ => {}
                }
                if matches!(event.action.as_str(), "pass" | "fail" | "skip") {
                    state.elapsed = event.elapsed;
                }
            }
            None => {
                let pos = *package_index.entry(package.clone()).or_insert_with(|| {
                    packages.push((package.clone(), PackageState::default()));
                    packages.len() - 1
                });
                let state = &mut packages[pos].1;
                match event.action.as_str() {
                    "output" => push_capped(&mut state.output, event.output.as_deref().unwrap_or("")),
                    "fail" => {
                        state.failed = true;
                        state.ended = true;
                        state.failed_build = event.failed_build.clone();
                        state.elapsed = event.elapsed;
                    }
                    "pass" => {
                        state.ended = true;
                        state.passed = true;
                        state.elapsed = event.elapsed;
                    }
                    "skip" => state.ended = true,
                    _ => {}
                }
            }
        }
    }
    if events == 0 {
        return Err(ParseError::new(
            NAME,
            if bad_lines > 0 {
                format!("no `go test -json` events in {bad_lines} lines (is this the output of `go test -json`?)")
            } else {
                "the file is empty: `go test -json` wrote no events".into()
            },
        ));
    }

    let mut report = ParsedReport { tool: Some("go test".into()), ..ParsedReport::default() };
    if bad_lines > 0 {
        report.warnings.push(format!("{bad_lines} line(s) were not `go test -json` events and were ignored"));
    }
    if !long_lines.is_empty() {
        let first: Vec<String> = long_lines.iter().take(5).map(u64::to_string).collect();
        report.warnings.push(format!(
            "{} line(s) longer than {} MiB were not read as events (line {})",
            long_lines.len(),
            LINE_CAP >> 20,
            first.join(", ")
        ));
    }
    // Sorted, so a parent finds its failing subtests by prefix without scanning them all.
    let failing_children: BTreeSet<(&str, &str)> = tests
        .iter()
        .filter(|t| matches!(t.status, Some(CaseStatus::Failed) | None))
        .map(|t| (t.package.as_str(), t.name.as_str()))
        .collect();
    for test in &tests {
        let package_output = package_index.get(&test.package).map_or("", |&i| packages[i].1.output.as_str());
        report.cases.push(test_case(test, &failing_children, package_output));
    }
    let with_tests: HashSet<&str> = tests.iter().map(|t| t.package.as_str()).collect();
    let with_failures: HashSet<&str> = tests
        .iter()
        .filter(|t| !matches!(t.status, Some(CaseStatus::Passed | CaseStatus::Skipped)))
        .map(|t| t.package.as_str())
        .collect();
    for (package, state) in &packages {
        let explained = with_failures.contains(package.as_str());
        if state.failed && !explained {
            report.cases.push(package_case(package, state, &build_output));
        } else if state.passed && !with_tests.contains(package.as_str()) && !ran_its_tests(&state.output) {
            report.cases.push(exited_before_tests_case(package, state));
        }
    }
    // Every package go tests ends with its own `pass`, `fail` or `skip`; one that did not is a
    // stream that stopped early (go killed, the file cut), whatever its tests said so far.
    let unfinished: Vec<&str> = packages.iter().filter(|(_, s)| !s.ended).map(|(p, _)| p.as_str()).collect();
    if !unfinished.is_empty() {
        report.cut_short(format!(
            "the stream ends before package(s) {} reported a result: it was cut short, so results after that point are unknown",
            unfinished.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(report)
}

fn push_capped(buf: &mut String, text: &str) {
    if buf.len() < KEEP_OUTPUT {
        buf.push_str(text);
    }
}

/// The lines a test printed itself, without go's `=== RUN` / `--- FAIL:` framing.
fn own_lines(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("=== ")
                || t.starts_with("--- PASS")
                || t.starts_with("--- FAIL")
                || t.starts_with("--- SKIP"))
        })
        .filter(|l| !l.trim().is_empty())
        .collect()
}

fn test_case(test: &TestState, failing: &BTreeSet<(&str, &str)>, package_output: &str) -> Case {
    let lines = own_lines(&test.output);
    let mut case = Case {
        name: test.name.clone().into(),
        classname: Some(test.package.clone().into()),
        status: test.status.unwrap_or(CaseStatus::Error),
        duration_ms: test.elapsed.map(|s| s * 1000.0),
        ..Case::default()
    };
    // The first `file.go:N:` a failing or skipped test printed, as go prints it (a bare file
    // name): the Go ecosystem's `locate` turns it into the defining file's path under the root.
    if case.status != CaseStatus::Passed
        && let Some((printed_file, printed_line)) = lines.iter().find_map(|l| location(l))
    {
        case.file = Some(printed_file.into());
        case.line = Some(printed_line);
    }
    match test.status {
        Some(CaseStatus::Passed) => {}
        Some(CaseStatus::Skipped) => {
            case.set_message(lines.first().map(|l| l.trim().to_string()));
        }
        Some(_) => {
            // `t.Error`/`t.Fatal` lines start with `file.go:N:`; other lines may be anything the
            // test or a child process printed (even `PASS`), so a located line is the failure.
            let failure = lines.iter().find(|l| location(l).is_some()).or(lines.first());
            case.set_message(failure.map(|l| l.trim().to_string()).or_else(|| {
                let prefix = format!("{}/", test.name);
                let subs: Vec<&str> = failing
                    .range((test.package.as_str(), prefix.as_str())..)
                    .take_while(|(p, n)| *p == test.package && n.starts_with(&prefix))
                    .map(|&(_, n)| n)
                    .collect();
                (!subs.is_empty()).then(|| format!("subtest failed: {}", subs.join(", ")))
            }));
            if !lines.is_empty() {
                case.extra_mut().details = Some(crate::model::Text::capped(&lines.join("\n"), DETAILS_CAP));
            }
        }
        None => {
            case.set_message(Some(UNFINISHED.into()));
            let text = format!("{}{}", test.output, package_output);
            case.extra_mut().details = Some(crate::model::Text::capped(text.trim(), DETAILS_CAP));
        }
    }
    if case.status != CaseStatus::Passed && !test.output.is_empty() {
        case.extra_mut().output = Some(crate::model::Text::capped(&test.output, OUTPUT_CAP));
    }
    case
}

/// An `error` case for a package that failed with no failing test to show for it.
fn package_case(package: &str, state: &PackageState, build_output: &HashMap<String, String>) -> Case {
    let (name, text) = match &state.failed_build {
        Some(build) => {
            (crate::model::incomplete::BUILD_FAILED_CASE, build_output.get(build).cloned().unwrap_or_default())
        }
        None => (crate::model::incomplete::PACKAGE_FAILED_CASE, state.output.clone()),
    };
    let meaningful: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with("FAIL") && !l.starts_with("ok "))
        .collect();
    let message = meaningful.first().map(|l| l.trim().to_string()).unwrap_or_else(|| match &state.failed_build {
        Some(build) => format!("{build} did not compile"),
        None => "the package failed outside any test (TestMain, init or a crash)".into(),
    });
    Case {
        name: name.into(),
        classname: Some(package.to_string().into()),
        status: CaseStatus::Error,
        duration_ms: state.elapsed.map(|s| s * 1000.0),
        extra: crate::model::CaseExtra {
            details: (!text.trim().is_empty()).then(|| crate::model::Text::capped(text.trim(), DETAILS_CAP)),
            ..Default::default()
        }
        .packed(),
        ..Case::default()
    }
    .with_message(Some(message))
}

/// Whether a package's test binary got to `m.Run()`: it prints `PASS` (or `FAIL`) at its end,
/// and `testing: warning: no tests to run` when there were none. A binary whose `TestMain`
/// returned or called `os.Exit(0)` before `m.Run()` prints neither, and go still says `ok`.
fn ran_its_tests(output: &str) -> bool {
    output.lines().any(|l| matches!(l.trim(), "PASS" | "FAIL") || l.contains("no tests to run"))
}

/// An `error` case for a package go called `ok` whose test binary never ran its tests: whatever
/// tests it has did not run, and tests that did not run are not a pass.
fn exited_before_tests_case(package: &str, state: &PackageState) -> Case {
    let message = format!(
        "package {package}: its test binary exited with code 0 before running any test: its TestMain \
         returned or called os.Exit before m.Run() (go test still said ok); call os.Exit(m.Run()) in \
         TestMain, and skip tests with t.Skip"
    );
    Case {
        name: crate::model::incomplete::NO_TEST_RAN_CASE.into(),
        classname: Some(package.to_string().into()),
        status: CaseStatus::Error,
        duration_ms: state.elapsed.map(|s| s * 1000.0),
        extra: crate::model::CaseExtra {
            details: (!state.output.trim().is_empty())
                .then(|| crate::model::Text::capped(state.output.trim(), DETAILS_CAP)),
            ..Default::default()
        }
        .packed(),
        ..Case::default()
    }
    .with_message(Some(message))
}

/// `    mathx_test.go:14: message` → (`mathx_test.go`, 14).
fn location(line: &str) -> Option<(String, u32)> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN.get_or_init(|| Regex::new(r"^\s*([\w.\-]+\.go):(\d+):").expect("valid regex"));
    let c = pattern.captures(line)?;
    Some((c[1].to_string(), c[2].parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<ParsedReport, ParseError> {
        parse(&mut text.as_bytes(), &ParseOptions::default())
    }

    const MIXED: &str = r#"{"Action":"start","Package":"ex/m"}
{"Action":"run","Package":"ex/m","Test":"TestA"}
{"Action":"output","Package":"ex/m","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"ex/m","Test":"TestA","Output":"    m_test.go:14: got 7, want 2\n"}
{"Action":"output","Package":"ex/m","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"fail","Package":"ex/m","Test":"TestA","Elapsed":0.25}
{"Action":"run","Package":"ex/m","Test":"TestS"}
{"Action":"output","Package":"ex/m","Test":"TestS","Output":"    m_test.go:19: not ready yet\n"}
{"Action":"output","Package":"ex/m","Test":"TestS","Output":"--- SKIP: TestS (0.00s)\n"}
{"Action":"skip","Package":"ex/m","Test":"TestS","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestT"}
{"Action":"run","Package":"ex/m","Test":"TestT/ok"}
{"Action":"pass","Package":"ex/m","Test":"TestT/ok","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestT/bad"}
{"Action":"output","Package":"ex/m","Test":"TestT/bad","Output":"    m_test.go:35: nope\n"}
{"Action":"fail","Package":"ex/m","Test":"TestT/bad","Elapsed":0}
{"Action":"output","Package":"ex/m","Test":"TestT","Output":"--- FAIL: TestT (0.00s)\n"}
{"Action":"fail","Package":"ex/m","Test":"TestT","Elapsed":0}
{"Action":"output","Package":"ex/m","Output":"FAIL\tex/m\t0.01s\n"}
{"Action":"fail","Package":"ex/m","Elapsed":0.01}
{"Action":"start","Package":"ex/n"}
{"Action":"output","Package":"ex/n","Output":"?   \tex/n\t[no test files]\n"}
{"Action":"skip","Package":"ex/n","Elapsed":0}
"#;

    #[test]
    fn reads_tests_subtests_skips_and_messages() {
        let report = parse_str(MIXED).unwrap();
        let summary: Vec<(&str, CaseStatus)> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(
            summary,
            vec![
                ("TestA", CaseStatus::Failed),
                ("TestS", CaseStatus::Skipped),
                ("TestT", CaseStatus::Failed),
                ("TestT/ok", CaseStatus::Passed),
                ("TestT/bad", CaseStatus::Failed),
            ]
        );
        assert_eq!(report.cases[0].message(), Some("m_test.go:14: got 7, want 2"));
        assert_eq!(report.cases[0].classname.as_deref(), Some("ex/m"));
        assert_eq!(report.cases[0].duration_ms, Some(250.0));
        assert_eq!(report.cases[1].message(), Some("m_test.go:19: not ready yet"));
        assert_eq!(report.cases[2].message(), Some("subtest failed: TestT/bad"));
        // Printed locations are kept as go printed them; passing cases have none.
        let located: Vec<(Option<&str>, Option<u32>)> =
            report.cases.iter().map(|c| (c.file.as_deref(), c.line)).collect();
        assert_eq!(
            located,
            vec![
                (Some("m_test.go"), Some(14)),
                (Some("m_test.go"), Some(19)),
                (None, None),
                (None, None),
                (Some("m_test.go"), Some(35)),
            ]
        );
    }

    #[test]
    fn the_failure_shown_is_the_located_line_not_what_a_child_printed_first() {
        // Recorded from `go test -json` on tests/fixtures/go-child-pass (Go 1.26).
        let text = r#"{"Action":"run","Package":"ex/c","Test":"TestF"}
{"Action":"output","Package":"ex/c","Test":"TestF","Output":"=== RUN   TestF\n"}
{"Action":"output","Package":"ex/c","Test":"TestF","Output":"PASS\n"}
{"Action":"output","Package":"ex/c","Test":"TestF","Output":"ok  \tex/c\t0.001s\n"}
{"Action":"output","Package":"ex/c","Test":"TestF","Output":"    child_test.go:17: the real failure\n"}
{"Action":"output","Package":"ex/c","Test":"TestF","Output":"--- FAIL: TestF (0.00s)\n"}
{"Action":"fail","Package":"ex/c","Test":"TestF","Elapsed":0}
{"Action":"fail","Package":"ex/c","Elapsed":0.01}
"#;
        let case = &parse_str(text).unwrap().cases[0];
        assert_eq!(case.message(), Some("child_test.go:17: the real failure"));
        assert_eq!((case.file.as_deref(), case.line), (Some("child_test.go"), Some(17)));
        // Without a located line, the first line the test printed is still the message.
        let bare = text.replace("    child_test.go:17: ", "");
        assert_eq!(parse_str(&bare).unwrap().cases[0].message(), Some("PASS"));
    }

    #[test]
    fn a_stream_cut_before_its_package_ends_is_cut_short() {
        // Cut right after a passing test: every test read passed, the package never said so.
        let cut = MIXED.lines().take(13).collect::<Vec<_>>().join("\n");
        let report = parse_str(&cut).unwrap();
        let last = report.cases.last().map(|c| (c.name.as_str(), c.status));
        assert_eq!(last, Some((crate::collect::CUT_SHORT_CASE, CaseStatus::Error)));
        assert!(report.errors[0].contains("package(s) `ex/m`"), "{:?}", report.errors);
        assert!(parse_str(MIXED).unwrap().errors.is_empty());
    }

    #[test]
    fn a_line_longer_than_the_cap_is_skipped_with_a_warning() {
        let huge =
            format!("{{\"Action\":\"output\",\"Package\":\"ex/n\",\"Output\":\"{}\"}}\n", "x".repeat(LINE_CAP + 10));
        let report = parse_str(&format!("{huge}{MIXED}")).unwrap();
        assert_eq!(report.cases.len(), 5);
        assert!(
            report.warnings.iter().any(|w| w.contains("longer than 1 MiB") && w.contains("line 1")),
            "{:?}",
            report.warnings
        );
    }

    #[test]
    fn build_failure_becomes_an_error_case_for_the_package() {
        // Recorded from `go test -json ./...` on tests/fixtures/go-build-error (Go 1.26).
        let text = r##"{"ImportPath":"ex/b [ex/b.test]","Action":"build-output","Output":"# ex/b [ex/b.test]\n"}
{"ImportPath":"ex/b [ex/b.test]","Action":"build-output","Output":"./greet_test.go:7:14: assignment mismatch: 2 variables but Hello returns 1 value\n"}
{"ImportPath":"ex/b [ex/b.test]","Action":"build-fail"}
{"Time":"2026-11-22T03:23:41.5733493Z","Action":"start","Package":"ex/b"}
{"Time":"2026-11-22T03:23:41.573545749Z","Action":"output","Package":"ex/b","Output":"FAIL\tex/b [build failed]\n"}
{"Time":"2026-11-22T03:23:41.57355768Z","Action":"fail","Package":"ex/b","Elapsed":0.001,"FailedBuild":"ex/b [ex/b.test]"}
"##;
        let report = parse_str(text).unwrap();
        assert_eq!(report.cases.len(), 1);
        let case = &report.cases[0];
        assert_eq!((case.name.as_str(), case.status), ("[build failed]", CaseStatus::Error));
        assert_eq!(
            case.message(),
            Some("./greet_test.go:7:14: assignment mismatch: 2 variables but Hello returns 1 value")
        );
    }

    #[test]
    fn unfinished_tests_and_unexplained_package_failures_are_errors() {
        let text = r#"{"Action":"run","Package":"ex/p","Test":"TestHang"}
{"Action":"output","Package":"ex/p","Output":"panic: test timed out after 1s\n"}
{"Action":"fail","Package":"ex/p","Elapsed":1}
{"Action":"output","Package":"ex/q","Output":"TestMain exited\n"}
{"Action":"fail","Package":"ex/q","Elapsed":0}
"#;
        let report = parse_str(text).unwrap();
        let summary: Vec<(&str, CaseStatus)> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(summary, vec![("TestHang", CaseStatus::Error), ("[package failed]", CaseStatus::Error)]);
        assert!(report.cases[0].details().as_deref().unwrap().contains("timed out"));
    }

    #[test]
    fn a_package_whose_test_main_exits_before_m_run_is_an_error_not_an_ok() {
        // Recorded from `go test -json ./...` (Go 1.26): package b's TestMain calls os.Exit(0)
        // before m.Run(), so its failing test never ran and go says ok; package c has a TestMain
        // that calls m.Run() and no tests (a real "no tests to run"), package d is cached.
        let text = r#"{"Action":"start","Package":"ex/b"}
{"Action":"output","Package":"ex/b","Output":"ok  \tex/b\t0.008s\n"}
{"Action":"pass","Package":"ex/b","Elapsed":0.008}
{"Action":"start","Package":"ex/c"}
{"Action":"output","Package":"ex/c","Output":"testing: warning: no tests to run\n"}
{"Action":"output","Package":"ex/c","Output":"PASS\n"}
{"Action":"output","Package":"ex/c","Output":"ok  \tex/c\t0.006s [no tests to run]\n"}
{"Action":"pass","Package":"ex/c","Elapsed":0.007}
{"Action":"start","Package":"ex/d"}
{"Action":"run","Package":"ex/d","Test":"TestA"}
{"Action":"pass","Package":"ex/d","Test":"TestA","Elapsed":0}
{"Action":"output","Package":"ex/d","Output":"PASS\n"}
{"Action":"output","Package":"ex/d","Output":"ok  \tex/d\t(cached)\n"}
{"Action":"pass","Package":"ex/d","Elapsed":0}
"#;
        let report = parse_str(text).unwrap();
        let summary: Vec<(&str, Option<&str>, CaseStatus)> =
            report.cases.iter().map(|c| (c.name.as_str(), c.classname.as_deref(), c.status)).collect();
        assert_eq!(
            summary,
            vec![("TestA", Some("ex/d"), CaseStatus::Passed), ("[no test ran]", Some("ex/b"), CaseStatus::Error)]
        );
        assert!(report.cases[1].message().unwrap().contains("before m.Run()"));
    }

    #[test]
    fn empty_or_foreign_input_is_an_error_and_noise_is_a_warning() {
        assert!(parse_str("").is_err());
        assert!(parse_str("hello\nworld\n").is_err());
        let report = parse_str("go: downloading x\n{\"Action\":\"skip\",\"Package\":\"a\"}\n").unwrap();
        assert!(report.cases.is_empty());
        assert_eq!(report.warnings.len(), 1);
        assert!(GoTestJson.sniff(br#"{"Time":"x","Action":"start","Package":"a"}"#));
        assert!(!GoTestJson.sniff(b"<testsuite>"));
    }
}
