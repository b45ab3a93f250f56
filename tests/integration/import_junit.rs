//! JUnit dialects: every hand-checked report in `tests/fixtures/reports/junit/` parses to the
//! counts and case fields its `<name>.expected.json` sidecar records, and agrees with quick-junit's
//! deserializer on counts wherever quick-junit can read the file. nextest's dialect is produced by
//! quick-junit itself (nextest's writer), so it needs no hand-written fixture.

use std::path::{Path, PathBuf};

use fcorr::collect::{ParseOptions, parse_file};
use fcorr::model::{CaseStatus, Counts};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports/junit")
}

fn counts_json(counts: &Counts) -> Value {
    serde_json::json!({
        "passed": counts.passed, "failed": counts.failed, "skipped": counts.skipped,
        "error": counts.error, "flaky": counts.flaky,
    })
}

/// Counts quick-junit's deserializer sees: (tests, failures + errors, skipped).
fn quick_junit_counts(xml: &str) -> Option<(usize, usize, usize)> {
    let report = quick_junit::Report::deserialize_from_str(xml).ok()?;
    let mut tests = 0;
    let mut failing = 0;
    let mut skipped = 0;
    for suite in &report.test_suites {
        for case in &suite.test_cases {
            tests += 1;
            match &case.status {
                quick_junit::TestCaseStatus::NonSuccess { .. } => failing += 1,
                quick_junit::TestCaseStatus::Skipped { .. } => skipped += 1,
                quick_junit::TestCaseStatus::Success { .. } => {}
            }
        }
    }
    Some((tests, failing, skipped))
}

#[test]
fn every_dialect_fixture_matches_its_sidecar() {
    let mut checked = Vec::new();
    let mut cross_checked = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    entries.sort();
    let timestamps = regex::Regex::new(r#"\stimestamp="[^"]*""#).unwrap();
    for path in entries {
        let sidecar = path.with_extension("expected.json");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(&sidecar)
                .unwrap_or_else(|e| panic!("{} needs a sidecar {}: {e}", path.display(), sidecar.display())),
        )
        .unwrap();
        let root = expected.get("root").and_then(Value::as_str).map(PathBuf::from);
        let (format, report) =
            parse_file(&path, None, &ParseOptions { root }).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(format, "junit", "{} was not recognised as JUnit", path.display());
        let counts = Counts::of(&report.cases);
        assert_eq!(counts_json(&counts), expected["counts"], "{}: counts", path.display());

        for want in expected["cases"].as_array().unwrap() {
            let name = want["name"].as_str().unwrap();
            let case = report
                .cases
                .iter()
                .find(|c| c.name == name)
                .unwrap_or_else(|| panic!("{}: no case named {name:?}", path.display()));
            let got = serde_json::to_value(case).unwrap();
            for (key, value) in want.as_object().unwrap() {
                let actual = &got[key.as_str()];
                match key.as_str() {
                    // Long texts: the sidecar holds the start that matters.
                    "details" | "output" => assert!(
                        actual.as_str().is_some_and(|a| a.starts_with(value.as_str().unwrap())),
                        "{}: case {name:?} {key}: got {actual}, want it to start with {value}",
                        path.display()
                    ),
                    _ => assert_eq!(actual, value, "{}: case {name:?} field {key}", path.display()),
                }
            }
        }

        let xml = std::fs::read_to_string(&path).unwrap();
        let xml = xml.trim_start_matches('\u{feff}');
        // quick-junit needs <testsuites> at the root: wrap surefire-style single-suite files.
        let wrapped = if xml.contains("<testsuites") {
            xml.to_string()
        } else {
            let body = xml.find("?>").map_or(xml, |i| &xml[i + 2..]);
            format!("<testsuites>{body}</testsuites>")
        };
        // quick-junit's (experimental) reader rejects timestamps without a zone (jest-junit, mocha)
        // and character references in text (gotestsum's &#xA;): neutralise both, nothing counted.
        let wrapped = timestamps.replace_all(&wrapped, "");
        let wrapped = wrapped.replace("&#xA;", "\n").replace("&#x0A;", "\n").replace("&#10;", "\n");
        if let Some((tests, failing, skipped)) = quick_junit_counts(&wrapped) {
            // quick-junit does not read googletest's result= attribute, and counts only the
            // direct cases of top-level suites; compare where both read the same thing.
            if tests == report.cases.len() && !xml.contains("result=\"suppressed\"") {
                assert_eq!(
                    (failing, skipped),
                    ((counts.failures()) as usize, counts.skipped as usize),
                    "{}: fcorr and quick-junit disagree",
                    path.display()
                );
                cross_checked.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
        checked.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    assert!(checked.len() >= 9, "dialect fixtures checked: {checked:?}");
    // At least the flat dialects must be confirmed by the second reader.
    for name in ["jest-junit.xml", "surefire-rerun.xml", "go-junit-report.xml", "gotestsum.xml"] {
        assert!(cross_checked.iter().any(|c| c == name), "{name} was not cross-checked: {cross_checked:?}");
    }
}

#[test]
fn gotestsum_skip_message_is_the_meaningful_line() {
    let (_, report) = parse_file(&fixtures().join("gotestsum.xml"), Some("junit"), &ParseOptions::default()).unwrap();
    let skip = report.cases.iter().find(|c| c.status == CaseStatus::Skipped).unwrap();
    assert_eq!(skip.message(), Some("mathx_test.go:33: slow test"));
}

/// nextest writes JUnit through quick-junit: build a report with flaky and rerun cases the way
/// nextest does, serialise it with quick-junit, and read it back.
#[test]
fn nextest_flaky_and_rerun_cases_via_quick_junit_writer() {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestRerun, TestSuite};
    use std::time::Duration;

    let mut report = Report::new("nextest-run");
    let mut suite = TestSuite::new("fixture::tests");
    let mut ok = TestCase::new("math::adds", TestCaseStatus::success());
    ok.set_classname("fixture").set_time(Duration::from_millis(3));
    let mut flaky_status = TestCaseStatus::success();
    let mut rerun = TestRerun::new(NonSuccessKind::Failure);
    rerun.set_message("assertion failed: ready").set_description("thread 'net::connects' panicked at src/net.rs:9:5");
    flaky_status.add_rerun(rerun);
    let mut flaky = TestCase::new("net::connects", flaky_status);
    flaky.set_classname("fixture");
    let mut failing_status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    failing_status.set_message("assertion `left == right` failed");
    failing_status
        .set_description("thread 'parse::hex' panicked at src/parse.rs:20:9:\nassertion `left == right` failed");
    failing_status.add_rerun(TestRerun::new(NonSuccessKind::Failure));
    let mut failing = TestCase::new("parse::hex", failing_status);
    failing.set_classname("fixture").set_system_out("stdout of the last attempt");
    let mut ignored = TestCase::new("slow::big", TestCaseStatus::skipped());
    ignored.set_classname("fixture");
    suite.add_test_cases([ok, flaky, failing, ignored]);
    report.add_test_suite(suite);
    let xml = report.to_string().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    std::fs::write(&path, &xml).unwrap();
    let (format, parsed) = parse_file(&path, None, &ParseOptions::default()).unwrap();
    assert_eq!(format, "junit");
    let by_name = |n: &str| parsed.cases.iter().find(|c| c.name == n).unwrap();
    assert_eq!(by_name("math::adds").status, CaseStatus::Passed);
    let flaky = by_name("net::connects");
    assert_eq!((flaky.status, flaky.extra().retries), (CaseStatus::Flaky, 1), "{xml}");
    assert_eq!(flaky.extra().attempts[0].message.as_deref(), Some("assertion failed: ready"));
    let failing = by_name("parse::hex");
    assert_eq!((failing.status, failing.extra().retries), (CaseStatus::Failed, 1));
    assert_eq!(failing.message(), Some("assertion `left == right` failed"));
    assert_eq!(failing.output().as_deref(), Some("stdout of the last attempt"));
    assert_eq!(by_name("slow::big").status, CaseStatus::Skipped);
    assert_eq!((parsed.cases.len(), quick_junit_counts(&xml)), (4, Some((4, 1, 1))));
}

#[test]
fn a_non_utf8_report_is_an_error_that_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.xml");
    let mut bytes = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><testsuite><testcase name=\"caf".to_vec();
    bytes.extend([0xE9]);
    bytes.extend(b"\"/></testsuite>");
    std::fs::write(&path, bytes).unwrap();
    let error = parse_file(&path, None, &ParseOptions::default()).unwrap_err();
    assert!(error.to_string().contains("UTF-8"), "{error}");
    // Typed: the format that was being read and the file, for callers that report them.
    assert_eq!(error.format, "junit");
    assert_eq!(error.file.as_deref(), Some(path.as_path()));
}

/// A case with several result elements (`<skipped/><failure/><error/>`) counts once, by its most
/// severe result, as the writer's own suite header counts it (issue #26, point 9).
#[test]
fn several_result_elements_count_as_the_suite_header_does() {
    let path = fixtures().join("multiple-results.xml");
    let xml = std::fs::read_to_string(&path).unwrap();
    let header =
        regex::Regex::new(r#"<testsuite name="[^"]*" tests="(\d+)" failures="(\d+)" errors="(\d+)" skipped="(\d+)""#)
            .unwrap()
            .captures(&xml)
            .unwrap();
    let declared: Vec<u64> = (1..=4).map(|i| header[i].parse().unwrap()).collect();
    let (_, report) = parse_file(&path, None, &ParseOptions::default()).unwrap();
    let c = Counts::of(&report.cases);
    assert_eq!(vec![c.total, c.failed, c.error, c.skipped], declared, "{:#?}", report.cases);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

/// Failure details and output are kept packed in blocks of ~64 KiB (`model::Text`): with enough
/// of them to fill several blocks, every case's own traceback and output come back whole in
/// results.json, junit.xml and ctrf.json, and a re-render of that results.json keeps them.
#[test]
fn packed_details_and_output_survive_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1000;
    let trace = |i: usize| {
        format!(
            "Traceback {i}\n{}AssertionError: case {i} differs",
            format!("  File \"t{i}.py\", line {i}\n").repeat(12)
        )
    };
    let output = |i: usize| format!("printed by case {i} ünï");
    let mut xml = String::from("<testsuite name=\"packed\">\n");
    for i in 0..n {
        xml.push_str(&format!(
            "<testcase classname=\"C\" name=\"t{i}\"><failure message=\"case {i} differs\">{}</failure><system-out>{}</system-out></testcase>\n",
            trace(i).replace('"', "&quot;"),
            output(i)
        ));
    }
    xml.push_str("</testsuite>\n");
    let report = dir.path().join("report.xml");
    std::fs::write(&report, &xml).unwrap();
    assert!(n * trace(0).len() > 4 * 64 * 1024, "enough text for several packed blocks");
    let out = dir.path().join("out");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_fcorr"))
        .args(["import", report.to_str().unwrap(), "--out", out.to_str().unwrap(), "--fail-on", "none"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let again = dir.path().join("again");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_fcorr"))
        .args(["report", out.to_str().unwrap(), "--out", again.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    for dir in [&out, &again] {
        let results: Value = serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
        let cases = results["suites"][0]["cases"].as_array().unwrap();
        assert_eq!(cases.len(), n);
        let ctrf: Value = serde_json::from_slice(&std::fs::read(dir.join("ctrf.json")).unwrap()).unwrap();
        let tests = ctrf["results"]["tests"].as_array().unwrap();
        let junit = quick_junit::Report::deserialize_from_str(&std::fs::read_to_string(dir.join("junit.xml")).unwrap())
            .unwrap();
        let junit_cases = &junit.test_suites[0].test_cases;
        for i in 0..n {
            let case = cases.iter().find(|c| c["name"] == format!("t{i}")).unwrap();
            assert_eq!((case["details"].as_str(), case["output"].as_str()), (Some(&*trace(i)), Some(&*output(i))));
            let test = tests.iter().find(|t| t["name"] == format!("t{i}")).unwrap();
            assert_eq!(test["trace"].as_str(), Some(&*trace(i)));
            assert_eq!(test["stdout"], serde_json::json!([output(i)]));
            let case = junit_cases.iter().find(|c| c.name.as_str() == format!("t{i}")).unwrap();
            let quick_junit::TestCaseStatus::NonSuccess { description, .. } = &case.status else {
                panic!("t{i} failed")
            };
            assert_eq!(description.as_ref().map(|d| d.as_str()), Some(&*trace(i)));
            assert_eq!(case.system_out.as_ref().map(|o| o.as_str()), Some(&*output(i)));
        }
    }
}
