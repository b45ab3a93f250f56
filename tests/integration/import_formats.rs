//! Report formats other reporters read (issue #26, point 8): RSpec's `--format json` (real
//! output of Debian's rspec, committed with its specs and console output, plus a live run when
//! rspec is installed), and the Dart test package's JSON reporter protocol as `dart test
//! --reporter json` and `flutter test --machine` write it (hand-written from the documented
//! protocol: no Dart SDK is installable here; see `tests/fixtures/reports/dart/README.md`).

use std::path::{Path, PathBuf};
use std::process::Command;

use fcorr::collect::{CUT_SHORT_CASE, ParseOptions, ParsedReport, parse_file, parser_named};
use fcorr::model::{Case, CaseStatus, Counts};

fn dir(format: &str) -> PathBuf {
    crate::support::repo().join("tests/fixtures/reports").join(format)
}

/// Parses with the format recognised from content; returns the format and the report.
fn parse(path: &Path, root: Option<&str>) -> (String, ParsedReport) {
    let options = ParseOptions { root: root.map(PathBuf::from) };
    parse_file(path, None, &options).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// rspec's summary line: (examples, failures, pending, errors outside of examples).
fn rspec_summary(text: &str) -> (u64, u64, u64, u64) {
    let line = regex::Regex::new(
        r"(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?",
    )
    .unwrap();
    let found = line.captures(text).unwrap_or_else(|| panic!("no rspec summary in:\n{text}"));
    let n = |i: usize| found.get(i).map_or(0, |m| m.as_str().parse().unwrap());
    (n(1), n(2), n(3), n(4))
}

/// fcorr's counts as rspec counts: (examples, failures, pending, errors outside of examples).
fn as_rspec_counts(cases: &[Case]) -> (u64, u64, u64, u64) {
    let outside = cases.iter().filter(|c| c.name.starts_with("[error outside of examples")).count() as u64;
    let c = Counts::of(cases);
    (c.total - outside, c.failed, c.skipped, outside)
}

#[test]
fn rspec_json_counts_as_rspec_itself_did() {
    for name in ["calculator", "load-error", "hook-error"] {
        let path = dir("rspec").join(format!("{name}.json"));
        let (format, report) = parse(&path, Some("/tmp/calc"));
        assert_eq!(format, "rspec-json", "{name}");
        let console = std::fs::read_to_string(dir("rspec").join(format!("{name}.txt"))).unwrap();
        assert_eq!(as_rspec_counts(&report.cases), rspec_summary(&console), "{name}: {:#?}", report.cases);
        assert!(console.trim_end().ends_with("exit 1"), "{name}");
        // rspec exited 1 on each: fcorr must not pass any of them.
        assert!(report.cases.iter().any(|c| c.status.is_failure()), "{name}");
    }
    let (_, report) = parse(&dir("rspec").join("calculator.json"), Some("/tmp/calc"));
    let case = |n: &str| report.cases.iter().find(|c| c.name == n).unwrap_or_else(|| panic!("no {n}"));
    let failed = case("adds negative numbers");
    assert_eq!(failed.classname.as_deref(), Some("Calculator#add"));
    assert_eq!((failed.file.as_deref(), failed.line), (Some("spec/calculator_spec.rb"), Some(19)));
    assert!(failed.message().unwrap().starts_with("expected: -6"), "{failed:?}");
    let raised = case("raises on zero");
    assert_eq!((raised.message(), raised.line), (Some("ZeroDivisionError: divided by 0"), Some(35)));
    assert_eq!(case("rounds to cents").message(), Some("rounding is not written yet"));
    assert_eq!(case("handles big numbers").status, CaseStatus::Failed);
    assert_eq!(case("keeps the fraction").classname.as_deref(), Some("Calculator#add with floats"));

    let (_, loading) = parse(&dir("rspec").join("load-error.json"), None);
    let error = &loading.cases[0];
    assert_eq!(error.status, CaseStatus::Error);
    assert!(error.message().unwrap().starts_with("An error occurred while loading"), "{error:?}");
    assert!(error.details().as_deref().unwrap().contains("LoadError"), "{error:?}");
}

#[test]
fn rspec_live_run_matches_its_own_summary() {
    let version = Command::new("rspec").arg("--version").output();
    assert!(
        version.is_ok_and(|o| o.status.success()),
        "rspec is not installed: install Debian's ruby-rspec (apt-get install -y ruby-rspec)"
    );
    let tmp = tempfile::tempdir().unwrap();
    crate::support::copy_project(&dir("rspec").join("spec"), &tmp.path().join("spec"));
    let json = tmp.path().join("out.json");
    let output = Command::new("rspec")
        .args(["--format", "json", "--out"])
        .arg(&json)
        .args(["--format", "progress", "spec/calculator_spec.rb", "spec/cleanup_spec.rb"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&output.stdout);
    let (_, report) = parse(&json, Some(tmp.path().to_str().unwrap()));
    assert_eq!(as_rspec_counts(&report.cases), rspec_summary(&console), "{console}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn dart_json_reads_the_protocol() {
    let (format, report) = parse(&dir("dart").join("dart-test.json"), Some("/home/runner/work/calc/calc"));
    assert_eq!(format, "dart-json");
    assert_eq!(report.tool.as_deref(), Some("dart test (test 1.25.8)"));
    assert!(report.errors.is_empty() && report.warnings.is_empty(), "{:?} {:?}", report.errors, report.warnings);
    let got: Vec<(&str, CaseStatus)> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
    assert_eq!(
        got,
        [
            ("loading test/broken_test.dart", CaseStatus::Error),
            ("add two numbers", CaseStatus::Passed),
            ("add negative numbers", CaseStatus::Failed),
            ("add big numbers", CaseStatus::Skipped),
            ("divide evenly", CaseStatus::Passed),
            ("divide by zero", CaseStatus::Error),
            ("divide later", CaseStatus::Error),
        ]
    );
    let case = |n: &str| report.cases.iter().find(|c| c.name == n).unwrap();
    let failed = case("add negative numbers");
    assert_eq!(failed.message(), Some("Expected: <-6>"));
    assert_eq!((failed.file.as_deref(), failed.line), (Some("test/calc_test.dart"), Some(16)));
    assert_eq!(failed.output().as_deref(), Some("adding -2 and -3"));
    assert_eq!(failed.classname.as_deref(), Some("test/calc_test.dart"));
    assert_eq!(case("add big numbers").message(), Some("needs BigInt"));
    assert_eq!(case("divide by zero").line, Some(29));
    assert!(case("loading test/broken_test.dart").message().unwrap().starts_with("Failed to load"));
    assert_eq!(case("divide later").message(), Some("Bad state: Future completed after the test finished"));
}

#[test]
fn dart_json_cut_short_or_closed_early_never_passes() {
    let text = std::fs::read_to_string(dir("dart").join("dart-test.json")).unwrap();
    let parser = parser_named("dart-json").unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for keep in 1..lines.len() {
        let mut cut = lines[..keep].join("\n");
        cut.push('\n');
        let report = parser.parse(&mut cut.as_bytes(), &ParseOptions::default()).unwrap();
        assert!(
            report.cases.iter().any(|c| c.name == CUT_SHORT_CASE && c.status == CaseStatus::Error),
            "cut after {keep} lines"
        );
    }
    // Cut in the middle of the last line: the same.
    let half = &text[..text.len() - 20];
    let report = parser.parse(&mut half.as_bytes(), &ParseOptions::default()).unwrap();
    assert!(report.cases.iter().any(|c| c.name == CUT_SHORT_CASE));
    // A run whose `done` says it failed with every test passing still fails.
    let passing = r#"{"protocolVersion":"0.1.1","runnerVersion":null,"pid":1,"type":"start","time":0}
{"suite":{"id":0,"platform":"vm","path":"test/a_test.dart"},"type":"suite","time":0}
{"test":{"id":1,"name":"a","suiteID":0,"groupIDs":[],"line":1,"column":1,"url":"file:///p/test/a_test.dart"},"type":"testStart","time":1}
{"testID":1,"result":"success","skipped":false,"hidden":false,"type":"testDone","time":2}
{"success":false,"type":"done","time":3}
"#;
    let report = parser.parse(&mut passing.as_bytes(), &ParseOptions::default()).unwrap();
    assert_eq!(report.cases.last().map(|c| (c.name.as_str(), c.status)), Some(("[test run]", CaseStatus::Error)));
}

#[test]
fn flutter_json_reads_widget_test_failures_from_the_exception_log() {
    let (format, report) = parse(&dir("dart").join("flutter-test.json"), Some("/home/runner/work/app/app"));
    assert_eq!(format, "flutter-json");
    let got: Vec<(&str, CaseStatus)> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
    assert_eq!(
        got,
        [
            ("Counter increments smoke test", CaseStatus::Passed),
            ("Counter shows a title", CaseStatus::Error),
            ("Counter decrements", CaseStatus::Skipped),
        ]
    );
    let failed = &report.cases[1];
    assert_eq!(failed.message(), Some("The following TestFailure was thrown running a test:"));
    assert_eq!((failed.file.as_deref(), failed.line), (Some("test/widget_test.dart"), Some(28)));
    assert_eq!(report.cases[2].message(), Some("not built yet"));
    // Named, the dart reader reads it the same way.
    let options = ParseOptions { root: Some("/home/runner/work/app/app".into()) };
    let (_, as_dart) = parse_file(&dir("dart").join("flutter-test.json"), Some("dart-json"), &options).unwrap();
    assert_eq!(format!("{:?}", as_dart.cases), format!("{:?}", report.cases));
}

#[test]
fn new_formats_have_names_for_format_in() {
    for (name, format) in [("rspec", "rspec-json"), ("dart", "dart-json"), ("flutter", "flutter-json")] {
        assert_eq!(parser_named(name).map(|p| p.format()), Some(format));
        assert!(parser_named(format).is_some());
    }
}
