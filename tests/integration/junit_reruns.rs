//! Reruns written as testcases (issue #21, point 12): pytest-rerunfailures writes every attempt
//! of a test as a `<testcase>` of its own, the reran attempts with no result, under a header that
//! counts the test once. `fcorr run` on a real project using the plugin (installed from its test
//! dependencies, as fcorr installs every Python fixture) must count what pytest counts, with the
//! attempts on the case; a JUnit header that disagrees with the testcases read is always a
//! warning in results.json and summary.md.

use fcorr::model::{CaseStatus, PhaseKind, Severity};

use crate::support::*;

/// pytest's own summary line in the test phase's log: (failed, passed, rerun).
fn pytest_summary(log: &str) -> (u64, u64, u64) {
    let line = regex::Regex::new(r"(\d+) failed, (\d+) passed, (\d+) rerun").unwrap();
    let found = line.captures(log).unwrap_or_else(|| panic!("no pytest summary in the log:\n{log}"));
    let n = |i: usize| found[i].parse::<u64>().unwrap();
    (n(1), n(2), n(3))
}

#[test]
fn pytest_rerunfailures_attempts_are_one_case_each_as_pytest_counts() {
    let want = expected("py-rerunfailures");
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("py-rerunfailures");
    copy_project(&fixture("py-rerunfailures"), &project);
    let state = dir.path().join("state");
    let out = dir.path().join("out");
    let output = fcorr()
        .arg("run")
        .arg(&project)
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .env("FCORR_FLAKY_STATE", &state)
        .output()
        .unwrap();
    let (run, code) = parse_run(&output);
    let suite = &run.suites[0];
    let test = suite.phases.iter().find(|p| p.kind == PhaseKind::Test).unwrap();

    // What pytest itself said: 1 failed, 3 passed (one of them on its rerun), 3 reruns.
    let (failed, passed, reruns) = pytest_summary(&test.log_tail);
    assert_eq!(format!("{failed} failed, {passed} passed, {reruns} rerun"), want["native_summary"].as_str().unwrap());
    let c = &suite.counts;
    assert_eq!(c.total, failed + passed, "{:#?}", suite.cases);
    assert_eq!((c.passed + c.flaky, c.failed, c.error), (passed, failed, 0), "{c:?}");
    assert_eq!(suite.cases.iter().map(|c| u64::from(c.extra().retries)).sum::<u64>(), reruns);
    for case in want["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap().rsplit("::").next().unwrap();
        let ours = suite.cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no case {name}"));
        assert_eq!(ours.status.label(), case["status"].as_str().unwrap(), "{ours:#?}");
        assert_eq!(u64::from(ours.extra().retries), case["retries"].as_u64().unwrap_or(0), "{ours:#?}");
        assert!(ours.extra().attempts.iter().all(|a| a.status == CaseStatus::Failed), "{ours:#?}");
    }
    // Each test really ran once per attempt.
    let attempts = |name: &str| std::fs::read_to_string(state.join(name)).unwrap().trim().parse::<u64>().unwrap();
    assert_eq!((attempts("test_fails_then_passes"), attempts("test_always_fails")), (2, 3));
    // The header agrees with the folded cases: nothing to warn about.
    assert!(!suite.diagnostics.iter().any(|d| d.message.contains("than declared")), "{:#?}", suite.diagnostics);
    assert_eq!(code, 1, "test_always_fails fails");
}

#[test]
fn a_header_that_disagrees_with_the_testcases_is_a_warning_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.xml");
    // Three testcases under a header of one, the repeat of `a` not explained by the header.
    std::fs::write(
        &report,
        r#"<testsuites><testsuite name="pytest" tests="1"><testcase classname="t" name="a"/><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite></testsuites>"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let output = fcorr_bin().arg("import").arg(&report).arg("--out").arg(&out).arg("--json").output().unwrap();
    let (run, _) = parse_run(&output);
    // Markdown escapes the backticks around the suite name: the rest is said as is.
    let wanted = "declares tests=1 but 3 testcases were read";
    let suite = &run.suites[0];
    let diagnostic = suite.diagnostics.iter().find(|d| d.message.contains(wanted));
    assert_eq!(diagnostic.map(|d| d.severity), Some(Severity::Warning), "{:#?}", suite.diagnostics);
    for file in ["results.json", "summary.md"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(text.contains(wanted), "{file} does not say it:\n{text}");
    }
}
