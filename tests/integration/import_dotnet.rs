//! .NET report formats (NUnit 2 and 3, xUnit.net v2, TRX) on the fixtures in
//! `tests/fixtures/reports/dotnet/`: counts equal the totals each file declares, results map to
//! the statuses tabled in docs/import.md, file/line come from stack traces, `fcorr import` gives
//! the verdict, and a file cut short anywhere never passes.
//!
//! The .NET SDK cannot be installed on the machines these fixtures were written on, so they are
//! written by hand in each tool's documented shape (see docs/import.md); the XSDs were not
//! reachable either, so they are not validated against them.

use std::path::{Path, PathBuf};

use fcorr::collect::{CUT_SHORT_CASE, ParseOptions, ParsedReport, parse_file, parser_named};
use fcorr::errors::ParseError;
use fcorr::model::{Case, CaseStatus, Run, Severity, SuiteStatus};

fn dir() -> PathBuf {
    crate::support::repo().join("tests/fixtures/reports/dotnet")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(dir().join(name)).unwrap()
}

/// Parses a fixture with its format recognised from content, paths relative to the CI checkout.
fn parse(name: &str) -> (String, ParsedReport) {
    let options = ParseOptions { root: Some(PathBuf::from("/home/runner/work/calc/calc")) };
    parse_file(&dir().join(name), None, &options).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// (passed, failed, error, skipped, timeout) of the cases.
fn counts(cases: &[Case]) -> (usize, usize, usize, usize, usize) {
    let n = |s: CaseStatus| cases.iter().filter(|c| c.status == s).count();
    (n(CaseStatus::Passed), n(CaseStatus::Failed), n(CaseStatus::Error), n(CaseStatus::Skipped), n(CaseStatus::Timeout))
}

fn case<'a>(cases: &'a [Case], class: &str, name: &str) -> &'a Case {
    cases.iter().find(|c| c.name == name && c.classname.as_deref() == Some(class)).unwrap_or_else(|| {
        panic!("no case {class} :: {name} in {:#?}", cases.iter().map(|c| &c.name).collect::<Vec<_>>())
    })
}

#[test]
fn nunit3_counts_statuses_and_locations() {
    // The file's own totals: 13 cases, NUnit counting 6 passed, 3 failed (one assertion, one
    // error, one invalid), 1 warning, 1 inconclusive, 2 skipped (ignored, explicit).
    let xml = read("nunit3.xml");
    assert!(xml.contains(r#"total="13" passed="6" failed="3" warnings="1" inconclusive="1" skipped="2""#));
    let (format, report) = parse("nunit3.xml");
    assert_eq!(format, "nunit");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.cases.len(), 13);
    // Warning -> passed with a note; Error/Invalid -> error; ignored/explicit/inconclusive -> skipped.
    assert_eq!(counts(&report.cases), (6 + 1, 1, 2, 2 + 1, 0));

    let class = "Calc.Tests.CalculatorTests";
    let failed = case(&report.cases, class, "Add(2,2,5)");
    assert_eq!(failed.status, CaseStatus::Failed);
    assert_eq!(failed.message(), Some("Assert.That(calc.Add(a, b), Is.EqualTo(expected))"));
    assert_eq!((failed.file.as_deref(), failed.line), (Some("tests/Calc.Tests/CalculatorTests.cs"), Some(24)));
    assert_eq!(failed.output().as_deref(), Some("adding 2 and 2"));
    assert!(failed.details().as_deref().unwrap().contains("But was:  4"));
    for row in ["Add(1,2,3)", "Add(2,2,4)", "Adds_TwoNumbers"] {
        assert_eq!(case(&report.cases, class, row).status, CaseStatus::Passed, "{row}");
    }
    // The exception came from product code; the test's own frame is where it is annotated.
    let error = case(&report.cases, class, "Divide_ByZero_ReturnsInfinity");
    assert_eq!(error.status, CaseStatus::Error);
    assert_eq!(error.message(), Some("System.DivideByZeroException : Attempted to divide by zero."));
    assert_eq!((error.file.as_deref(), error.line), (Some("tests/Calc.Tests/CalculatorTests.cs"), Some(31)));
    let skipped = |name: &str| case(&report.cases, class, name).message().map(str::to_string);
    assert_eq!(skipped("Subtract_Negative").as_deref(), Some("ignored: Not implemented yet"));
    assert_eq!(skipped("Slow_Benchmark").as_deref(), Some("explicit: Run by hand before a release"));
    assert_eq!(
        skipped("Rounding_DependsOnCulture").as_deref(),
        Some("inconclusive: Culture en-US has no banker's rounding rule configured")
    );
    let warning = case(&report.cases, class, "Precision_Warns");
    assert_eq!((warning.status, warning.message()), (CaseStatus::Passed, Some("warning: Precision lost below 1e-12")));

    let theory = "Calc.Tests.TheoryTests";
    for row in ["SquareIsNonNegative(-2)", "SquareIsNonNegative(0)", "SquareIsNonNegative(3)"] {
        assert_eq!(case(&report.cases, theory, row).status, CaseStatus::Passed, "{row}");
    }
    let invalid = case(&report.cases, theory, "BadSignature");
    assert_eq!(invalid.status, CaseStatus::Error);
    assert_eq!(invalid.message(), Some("invalid: Method has non-void return value, but no result is expected"));
    assert_eq!(failed.duration_ms, Some(18.82));
}

#[test]
fn nunit2_counts_statuses_and_locations() {
    // NUnit 2's `total` counts the tests that ran (6), `not-run` the 3 that did not (1 ignored,
    // 1 skipped, 1 invalid); 1 error, 1 failure, 1 inconclusive among those that ran.
    let xml = read("nunit2.xml");
    assert!(xml.contains(
        r#"total="6" errors="1" failures="1" not-run="3" inconclusive="1" ignored="1" skipped="1" invalid="1""#
    ));
    let (format, report) = parse("nunit2.xml");
    assert_eq!(format, "nunit");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.cases.len(), 6 + 3);
    // Passed 3 (6 ran - error - failure - inconclusive); NotRunnable is an error as NUnit 3's
    // Failed/Invalid; Ignored, Skipped and Inconclusive are skipped.
    assert_eq!(counts(&report.cases), (3, 1, 1 + 1, 1 + 1 + 1, 0));

    let class = "Calc.Tests.CalculatorTests";
    let failed = case(&report.cases, class, "Add(2,2,5)");
    assert_eq!(failed.status, CaseStatus::Failed);
    assert_eq!(failed.message(), Some("Expected: 5"));
    assert_eq!((failed.file.as_deref(), failed.line), (Some("tests/Calc.Tests/CalculatorTests.cs"), Some(24)));
    assert_eq!(case(&report.cases, class, "Add(1,2,3)").status, CaseStatus::Passed);
    let error = case(&report.cases, class, "Divide_ByZero_ReturnsInfinity");
    assert_eq!((error.status, error.line), (CaseStatus::Error, Some(31)));
    let not_runnable = case(&report.cases, class, "BadSignature");
    assert_eq!(not_runnable.status, CaseStatus::Error);
    assert_eq!(
        not_runnable.message(),
        Some("not runnable: Method has non-void return value, but no result is expected")
    );
    assert_eq!(case(&report.cases, class, "Subtract_Negative").message(), Some("ignored: Not implemented yet"));
    assert_eq!(case(&report.cases, class, "Clipboard_Windows").status, CaseStatus::Skipped);
}

#[test]
fn xunit_counts_statuses_and_errors_outside_tests() {
    // The assembly's totals: 9 tests, 5 passed, 2 failed, 1 skipped, 1 not run; 1 error
    // outside any test (a class cleanup), which fcorr keeps as an error case.
    let xml = read("xunit.xml");
    assert!(xml.contains(r#"total="9" passed="5" failed="2" skipped="1" not-run="1" errors="1""#));
    let (format, report) = parse("xunit.xml");
    assert_eq!(format, "xunit-net");
    assert_eq!(report.tool.as_deref(), Some("xUnit.net 2.7.0.0"));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.cases.len(), 9 + 1);
    assert_eq!(counts(&report.cases), (5, 2, 1, 1 + 1, 0));

    let class = "Calc.XunitTests.CalculatorTests";
    let theory = case(&report.cases, class, "Add(a: 2, b: 2, expected: 5)");
    assert_eq!(theory.status, CaseStatus::Failed);
    assert_eq!(theory.message(), Some("Assert.Equal() Failure: Values differ"));
    assert_eq!((theory.file.as_deref(), theory.line), (Some("tests/Calc.XunitTests/CalculatorTests.cs"), Some(21)));
    assert_eq!(theory.output().as_deref(), Some("adding 2 and 2"));
    assert_eq!(case(&report.cases, class, "Add(a: 1, b: 2, expected: 3)").status, CaseStatus::Passed);
    let divide = case(&report.cases, class, "Divide_ByZero");
    assert_eq!((divide.file.as_deref(), divide.line), (Some("tests/Calc.XunitTests/CalculatorTests.cs"), Some(28)));
    assert_eq!(case(&report.cases, class, "Subtract_Negative").message(), Some("Not implemented yet"));
    assert_eq!(
        case(&report.cases, class, "Adds_TwoNumbers").extra().eval().tags.get("Category").map(String::as_str),
        Some("Arithmetic")
    );
    let not_run = case(&report.cases, "Calc.XunitTests.DatabaseTests", "Migrates_Explicitly");
    assert_eq!((not_run.status, not_run.message()), (CaseStatus::Skipped, Some("not run")));
    let cleanup = case(&report.cases, "Calc.XunitTests.DatabaseTests", "[test-class-cleanup]");
    assert_eq!(cleanup.status, CaseStatus::Error);
    assert_eq!(cleanup.message(), Some("System.InvalidOperationException : The connection was already closed."));
    assert_eq!((cleanup.file.as_deref(), cleanup.line), (Some("tests/Calc.XunitTests/DatabaseFixture.cs"), Some(19)));
}

#[test]
fn trx_counts_statuses_rows_and_classes() {
    // The run's Counters: 10 results, 5 passed, 2 failed, 1 timeout, 1 inconclusive, 1 not
    // executed; the data-driven `Add` counts as its 3 rows.
    let xml = read("mstest.trx");
    assert!(xml.contains(
        r#"total="10" executed="9" passed="5" failed="2" error="0" timeout="1" aborted="0" inconclusive="1""#
    ));
    assert!(xml.contains(r#"notExecuted="1""#));
    let (format, report) = parse("mstest.trx");
    assert_eq!(format, "trx");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.cases.len(), 10);
    assert_eq!(counts(&report.cases), (5, 2, 0, 1 + 1, 1));

    let class = "Calc.MSTests.CalculatorTests";
    let row = case(&report.cases, class, "Add (2,2,5)");
    assert_eq!(row.status, CaseStatus::Failed);
    assert_eq!(row.message(), Some("Assert.AreEqual failed. Expected:<5>. Actual:<4>."));
    assert_eq!((row.file.as_deref(), row.line), (Some("tests/Calc.MSTests/CalculatorTests.cs"), Some(25)));
    assert_eq!(row.output().as_deref(), Some("adding 2 and 2"));
    assert!(report.cases.iter().all(|c| c.name != "Add"), "the data-driven parent is not a case");
    let thrown = case(&report.cases, class, "Divide_ByZero_ReturnsInfinity");
    assert_eq!((thrown.file.as_deref(), thrown.line), (Some("tests/Calc.MSTests/CalculatorTests.cs"), Some(33)));
    let timeout = case(&report.cases, class, "SlowOperation_Completes");
    assert_eq!((timeout.status, timeout.duration_ms), (CaseStatus::Timeout, Some(2000.1232)));
    assert_eq!(case(&report.cases, class, "Subtract_Negative").message(), Some("not executed: Not implemented yet"));
    assert!(case(&report.cases, class, "Rounding_DependsOnCulture").message().unwrap().starts_with("inconclusive: "));
    // An assembly-qualified class name loses its assembly.
    assert_eq!(case(&report.cases, "Calc.MSTests.ParserTests", "ParsesNumbers").status, CaseStatus::Passed);
}

#[test]
fn passing_fixtures_name_parameterised_rows_as_their_tools_do() {
    let (_, nunit) = parse("nunit3-passing.xml");
    assert!(read("nunit3-passing.xml").contains(r#"total="3" passed="3" failed="0""#));
    assert_eq!(counts(&nunit.cases), (3, 0, 0, 0, 0));
    case(&nunit.cases, "Strings.SlugTests", r#"ReplacesSpaces("a b","a-b")"#);

    let (_, xunit) = parse("xunit-passing.xml");
    assert!(read("xunit-passing.xml").contains(r#"total="3" passed="3" failed="0""#));
    assert_eq!(counts(&xunit.cases), (3, 0, 0, 0, 0));
    case(&xunit.cases, "Strings.XunitTests.SlugTests", r#"ReplacesSpaces(input: "a b", expected: "a-b")"#);

    let (format, trx) = parse("xunit-vstest.trx");
    assert_eq!(format, "trx");
    assert!(read("xunit-vstest.trx").contains(r#"total="3" executed="3" passed="3" failed="0""#));
    assert_eq!(counts(&trx.cases), (3, 0, 0, 0, 0));
    case(&trx.cases, "Strings.XunitTests.SlugTests", r#"ReplacesSpaces(input: " x ", expected: "x")"#);
    for report in [&nunit, &xunit, &trx] {
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }
}

/// `fcorr import FILE --out DIR`: exit code and results.json.
fn import(file: &Path, out: &Path) -> (i32, Run) {
    let output = crate::support::fcorr_bin()
        .current_dir(crate::support::repo())
        .env("NO_COLOR", "1")
        .args(["import", "--name", "dotnet", "--out"])
        .arg(out)
        .arg(file)
        .output()
        .unwrap();
    let saved = std::fs::read_to_string(out.join("results.json"))
        .unwrap_or_else(|e| panic!("no results.json ({e}); stderr: {}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code().unwrap_or(-1), serde_json::from_str(&saved).unwrap())
}

#[test]
fn fcorr_import_gives_the_verdict_and_counts() {
    // (fixture, exit code, passed, failed, error, skipped)
    let table = [
        ("nunit3.xml", 1, 7, 1, 2, 3),
        ("nunit2.xml", 1, 3, 1, 2, 3),
        ("xunit.xml", 1, 5, 2, 1, 2),
        ("mstest.trx", 1, 5, 2, 0, 2),
        ("nunit3-passing.xml", 0, 3, 0, 0, 0),
        ("xunit-passing.xml", 0, 3, 0, 0, 0),
        ("xunit-vstest.trx", 0, 3, 0, 0, 0),
    ];
    for (name, code, passed, failed, error, skipped) in table {
        let out = tempfile::tempdir().unwrap();
        let (exit, run) = import(&dir().join(name), out.path());
        assert_eq!(exit, code, "{name}");
        let counts = &run.suites[0].counts;
        assert_eq!(
            (counts.passed, counts.failed, counts.error, counts.skipped),
            (passed, failed, error, skipped),
            "{name}"
        );
        let status = run.suites[0].status;
        assert_eq!(status == SuiteStatus::Passed, code == 0, "{name}: {status:?}");
    }
}

/// The file was refused (invalid XML) or read as cut short: an error diagnostic and an `error`
/// case, so that no suite can pass on it.
fn refused(result: &Result<ParsedReport, ParseError>) -> bool {
    match result {
        Err(_) => true,
        Ok(report) => {
            !report.errors.is_empty()
                && report.cases.iter().any(|c| c.name == CUT_SHORT_CASE && c.status == CaseStatus::Error)
        }
    }
}

/// A small seeded generator, so failures can be replayed.
fn offsets(len: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut random = (0..64)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize % len
        })
        .collect::<Vec<_>>();
    random.extend((0..len).step_by(37));
    random.sort_unstable();
    random.dedup();
    random
}

const FIXTURES: [(&str, &str); 12] = [
    ("nunit3.xml", "nunit"),
    ("nunit3-adapter-suite.xml", "nunit"),
    ("nunit3-invalid-parent.xml", "nunit"),
    ("nunit2-doctype.xml", "nunit"),
    ("nunit25-executed.xml", "nunit"),
    ("xunit1-assembly.xml", "xunit-net"),
    ("nunit3-passing.xml", "nunit"),
    ("nunit2.xml", "nunit"),
    ("xunit.xml", "xunit-net"),
    ("xunit-passing.xml", "xunit-net"),
    ("mstest.trx", "trx"),
    ("xunit-vstest.trx", "trx"),
];

#[test]
fn truncated_reports_are_errors_at_every_cut() {
    for (name, format) in FIXTURES {
        let bytes = std::fs::read(dir().join(name)).unwrap();
        let whole = String::from_utf8_lossy(&bytes).trim_end().len();
        let parser = parser_named(format).unwrap();
        let mut cuts = 0;
        for cut in offsets(bytes.len(), 0x5eed ^ bytes.len() as u64) {
            if cut >= whole {
                continue; // only trailing whitespace is missing: the whole report
            }
            cuts += 1;
            let result = parser.parse(&mut &bytes[..cut], &ParseOptions::default());
            assert!(refused(&result), "{name} cut at byte {cut} was read as {:?}", result.map(|r| counts(&r.cases)));
        }
        assert!(cuts > 50, "{name}: only {cuts} cuts");
    }
}

#[test]
fn truncated_reports_never_pass_through_fcorr_import() {
    for (name, _) in FIXTURES {
        let bytes = std::fs::read(dir().join(name)).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        // A few cuts per file through the whole binary (each is a process): the parser-level
        // test above covers every 37th byte.
        for cut in offsets(bytes.len(), 7).into_iter().step_by(17).filter(|&c| c > 0) {
            let file = tmp.path().join(format!("cut-{cut}-{name}"));
            std::fs::write(&file, &bytes[..cut]).unwrap();
            let out = tmp.path().join(format!("out-{cut}-{name}"));
            let (exit, run) = import(&file, &out);
            assert_ne!(exit, 0, "{name} cut at {cut} passed");
            let suite = &run.suites[0];
            assert_ne!(suite.status, SuiteStatus::Passed, "{name} cut at {cut}");
            // The suite says which file could not be read.
            let said = suite.diagnostics.iter().any(|d| d.severity == Severity::Error && d.message.contains("cut-"));
            assert!(said, "{name} cut at {cut}: {:?}", suite.diagnostics);
        }
    }
}

#[test]
fn declared_totals_are_checked_against_what_was_read() {
    let parse =
        |format: &str, xml: &str| parser_named(format).unwrap().parse(&mut xml.as_bytes(), &ParseOptions::default());
    // (format, report declaring 3 tests of which 1 failed, with only 2 passing results in it)
    let table = [
        (
            "nunit",
            r#"<test-run total="3" passed="2" failed="1"><test-suite type="TestFixture" fullname="N.F">
               <test-case name="a" result="Passed"/><test-case name="b" result="Passed"/></test-suite></test-run>"#,
        ),
        (
            "nunit",
            r#"<test-results total="3" errors="0" failures="1" not-run="0"><test-suite type="TestFixture" name="F"><results>
               <test-case name="F.a" executed="True" result="Success"/><test-case name="F.b" executed="True" result="Success"/>
               </results></test-suite></test-results>"#,
        ),
        (
            "xunit-net",
            r#"<assemblies><assembly total="3" passed="2" failed="1" errors="0"><collection>
               <test name="C.a" type="C" result="Pass"/><test name="C.b" type="C" result="Pass"/></collection></assembly></assemblies>"#,
        ),
        (
            "trx",
            r#"<TestRun><Results><UnitTestResult testName="a" outcome="Passed"/><UnitTestResult testName="b" outcome="Passed"/>
               </Results><ResultSummary outcome="Completed"><Counters total="3" passed="2" failed="1"/></ResultSummary></TestRun>"#,
        ),
    ];
    for (format, xml) in table {
        let report = parse(format, xml).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(
            report.warnings,
            ["the report declares 3 tests but 2 test results were read (fewer than declared)"],
            "{format}"
        );
        let missing = report.cases.last().unwrap();
        assert_eq!(
            (missing.name.as_str(), missing.status),
            ("[declared failures not reported]", CaseStatus::Error),
            "{format}"
        );
        assert_eq!(report.cases.len(), 3, "{format}");
    }
}

#[test]
fn hostile_input_is_an_error_never_a_panic() {
    let deep = format!("<test-run>{}", "<test-suite type=\"TestFixture\">".repeat(100_000));
    let wide = format!("<assemblies><assembly><collection><test name=\"{}\" result=\"Pass\"/>", "x".repeat(2 << 20));
    let huge_message = format!(
        "<TestRun><Results><UnitTestResult testName=\"a\" outcome=\"Failed\"><Output><ErrorInfo><Message>{}</Message>\
         </ErrorInfo></Output></UnitTestResult></Results></TestRun>",
        "m".repeat(1 << 20)
    );
    let documents: Vec<(&str, Vec<u8>)> = vec![
        ("nunit", deep.into_bytes()),
        ("xunit-net", wide.into_bytes()),
        ("nunit", b"<test-run><test-case name=\"\xFF\" result=\"Passed\"/></test-run>".to_vec()),
        ("nunit", b"\x00\x01\x02 not xml at all".to_vec()),
        ("xunit-net", b"<assemblies></assembly></assemblies>".to_vec()),
    ];
    // Cut short (deep nesting, a 2 MiB name), invalid UTF-8, not XML, an end tag with nothing open.
    for (format, bytes) in &documents {
        let result = parser_named(format).unwrap().parse(&mut bytes.as_slice(), &ParseOptions::default());
        assert!(refused(&result), "{format}: read as a report");
    }
    // An unknown entity in a passing result's text changes nothing.
    let entity = b"<TestRun><Results><UnitTestResult outcome=\"Passed\">&bogus;</UnitTestResult></Results></TestRun>";
    let report = parser_named("trx").unwrap().parse(&mut entity.as_slice(), &ParseOptions::default()).unwrap();
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    // A huge message is capped, not kept whole.
    let report = parser_named("trx").unwrap().parse(&mut huge_message.as_bytes(), &ParseOptions::default()).unwrap();
    let case = &report.cases[0];
    assert_eq!(case.status, CaseStatus::Failed);
    assert!(case.details().as_deref().unwrap().len() < 20 * 1024 && case.message().unwrap().len() < 20 * 1024);
}

#[test]
fn errors_count_only_the_results_finished_before_them() {
    let bytes = std::fs::read(dir().join("mstest.trx")).unwrap();
    // Cut inside the third row of the data-driven `Add`: AddsTwoNumbers and two rows are done.
    let cut = String::from_utf8_lossy(&bytes).find("testName=\"Add (2,2,5)\"").unwrap();
    let error = parser_named("trx").unwrap().parse(&mut &bytes[..cut], &ParseOptions::default()).unwrap_err();
    assert!(error.to_string().ends_with("; 3 test results were read before it"), "{error}");
    assert_eq!(error.format, "trx");
    let xml = r#"<assemblies><assembly><errors><error type="fatal"><failure><message>x"#;
    let report = parser_named("xunit-net").unwrap().parse(&mut xml.as_bytes(), &ParseOptions::default()).unwrap();
    assert!(report.errors[0].ends_with("0 test results were read before the end"), "{:?}", report.errors);
}

/// Layouts as real tools and converters write them (issue #26, point 7), each read with its
/// format recognised from content, counted as its own header counts it: (file, format, tests,
/// passed, failing, skipped) where failing is failed + error, as NUnit's `failed` and xUnit.net's
/// `failed` count them.
const LAYOUTS: [(&str, &str, usize, usize, usize, usize); 5] = [
    // The NUnit3 test adapter's NUnit.TestOutputXml: the root is the assembly's <test-suite>.
    ("nunit3-adapter-suite.xml", "nunit", 6, 3, 2, 1),
    // xUnit.net v1: one <assembly> of <class>es, after a comment; decimal-comma times.
    ("xunit1-assembly.xml", "xunit-net", 4, 2, 1, 1),
    // NUnit 2 with a DOCTYPE whose internal subset holds `>` and an external entity.
    ("nunit2-doctype.xml", "nunit", 3, 1, 1, 1),
    // NUnit 2.5: executed="True" without success= or result=; total= counts every case.
    ("nunit25-executed.xml", "nunit", 3, 1, 1, 1),
    // NUnit 3: Failed/Invalid/Parent parameterized suites under a fixture whose setup failed.
    ("nunit3-invalid-parent.xml", "nunit", 5, 1, 4, 0),
];

#[test]
fn real_layouts_are_recognised_and_counted_as_their_headers_count() {
    for (name, format, tests, passed, failing, skipped) in LAYOUTS {
        let (found, report) = parse(name);
        assert_eq!(found, format, "{name}");
        assert!(
            report.warnings.is_empty() && report.errors.is_empty(),
            "{name}: {:?} {:?}",
            report.warnings,
            report.errors
        );
        let (p, f, e, s, t) = counts(&report.cases);
        assert_eq!(
            (report.cases.len(), p, f + e + t, s),
            (tests, passed, failing, skipped),
            "{name}: {:#?}",
            report.cases
        );
        // Named explicitly, the same.
        let (_, named) = parse_file(&dir().join(name), Some(format), &ParseOptions::default()).unwrap();
        assert_eq!(named.cases.len(), tests, "{name} with --format-in {format}");
    }
    let (_, suite_root) = parse("nunit3-adapter-suite.xml");
    let failed = case(&suite_root.cases, "Shop.Tests.CartTests", "TotalIncludesTax");
    assert_eq!(
        (failed.status, failed.file.as_deref(), failed.line),
        (CaseStatus::Failed, Some("tests/Shop.Tests/CartTests.cs"), Some(27))
    );

    let (_, v1) = parse("xunit1-assembly.xml");
    let class = "Legacy.Tests.ParserTests";
    assert_eq!(case(&v1.cases, class, "HandlesUnicode").message(), Some("Needs the ICU build"));
    assert_eq!(case(&v1.cases, class, "RejectsLetters").message(), Some("Assert.Equal() Failure"));
    // `0,3500000` seconds is 350 ms, not 3.5 million.
    assert_eq!(case(&v1.cases, class, "RejectsLetters").duration_ms, Some(350.0));

    let (_, nunit25) = parse("nunit25-executed.xml");
    let status =
        |n: &str| nunit25.cases.iter().find(|c| c.name == n).map(|c| (c.status, c.message().map(str::to_string)));
    assert_eq!(status("Mono.Tests.Loads"), Some((CaseStatus::Passed, None)));
    assert_eq!(status("Mono.Tests.Reloads"), Some((CaseStatus::Failed, Some("Reload kept the old assembly".into()))));

    // No synthetic error for suites that failed because their parent did.
    let (_, invalid) = parse("nunit3-invalid-parent.xml");
    assert!(invalid.cases.iter().all(|c| !c.name.starts_with('[')), "{:#?}", invalid.cases);
}

/// A DOCTYPE's external entities are never fetched: the reference stays as written.
#[test]
fn external_entities_are_not_resolved() {
    let (_, report) = parse("nunit2-doctype.xml");
    let ignored = case(&report.cases, "Billing.Tests.InvoiceTests", "PrintsPdf");
    assert_eq!(ignored.message(), Some("ignored: &product; printing is manual &secret;"));
    let text = format!("{:?}", report.cases);
    assert!(!text.contains("root:"), "{text}");
}

/// A report read as the wrong format says which format its root element is; one that no format
/// fcorr reads starts like says its root element.
#[test]
fn errors_name_the_format_the_root_element_is() {
    let error = parse_file(&dir().join("nunit2-doctype.xml"), Some("junit"), &ParseOptions::default()).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("<test-results>") && text.contains("`nunit`"), "{text}");
    let error = parse_file(&dir().join("xunit1-assembly.xml"), Some("nunit"), &ParseOptions::default()).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("<assembly>") && text.contains("`xunit-net`"), "{text}");

    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("coverage.xml");
    std::fs::write(
        &other,
        "<?xml version=\"1.0\"?>\n<!-- cobertura -->\n<coverage line-rate=\"0.5\"><packages/></coverage>",
    )
    .unwrap();
    let text = parse_file(&other, None, &ParseOptions::default()).unwrap_err().to_string();
    assert!(text.contains("root element is <coverage>") && !text.contains("JUnit"), "{text}");
}
