//! The action's `files` input end to end: `fcorr ci --files` in a fake GitHub Actions
//! environment (env vars, event file, GITHUB_STEP_SUMMARY / GITHUB_OUTPUT files, a wiremock API)
//! imports JUnit, TRX and NUnit reports (the .NET fixtures of import_dotnet.rs) through the same
//! comment, summary, outputs, annotations and gates as run suites. Counts are those each fixture
//! declares (tests/import_dotnet.rs checks them against the files).

use std::collections::HashMap;
use std::path::Path;

use fcorr::model::Run;
use wiremock::MockServer;

use crate::support::github::posted_bodies;

/// A JUnit report with a file/line on its failure (annotated) and a passing case.
const JUNIT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="calc" tests="2" failures="1">
    <testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" line="3" time="0.01"/>
    <testcase classname="tests.test_calc" name="test_percent" file="tests/test_calc.py" line="12" time="0.02">
      <failure message="got 1,5">assert percent(3, 2) == 150</failure>
    </testcase>
  </testsuite>
</testsuites>
"#;

/// unit/junit.xml, dotnet/{mstest.trx, nunit3.xml, nunit2.xml}, a non-fork PR event.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("unit")).unwrap();
    std::fs::write(ws.path().join("unit/junit.xml"), JUNIT).unwrap();
    std::fs::create_dir_all(ws.path().join("dotnet/legacy")).unwrap();
    let fixtures = crate::support::repo().join("tests/fixtures/reports/dotnet");
    std::fs::copy(fixtures.join("mstest.trx"), ws.path().join("dotnet/mstest.trx")).unwrap();
    std::fs::copy(fixtures.join("nunit3.xml"), ws.path().join("dotnet/nunit3.xml")).unwrap();
    std::fs::copy(fixtures.join("nunit2.xml"), ws.path().join("dotnet/legacy/nunit2.xml")).unwrap();
    crate::support::github::write_pr_event(ws.path());
    ws
}

fn fcorr_ci(ws: &Path, api: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(ws).env("FCORR_CACHE_DIR", crate::support::repo().join("target/fcorr-test-cache"));
    for key in ["CI", "GH_TOKEN", "FCORR_ARTIFACT_NAME", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        cmd.env_remove(key);
    }
    cmd.envs(crate::support::github::env(ws, api, "octocat"));
    cmd.args(["ci", "--baseline", "none", "--out", "fcorr-out"]).args(args);
    cmd.output().unwrap()
}

fn outputs(ws: &Path) -> HashMap<String, String> {
    crate::support::github::outputs(ws)
}

fn results(ws: &Path) -> Run {
    serde_json::from_str(&std::fs::read_to_string(ws.join("fcorr-out/results.json")).unwrap()).unwrap()
}

// (passed, failed, error, skipped) each file declares: junit.xml, mstest.trx, nunit3.xml, nunit2.xml.
const JUNIT_COUNTS: (u64, u64, u64, u64) = (1, 1, 0, 0);
const MSTEST_COUNTS: (u64, u64, u64, u64) = (5, 2, 0, 2);
const NUNIT3_COUNTS: (u64, u64, u64, u64) = (7, 1, 2, 3);

fn counts(run: &Run, suite: &str) -> (u64, u64, u64, u64) {
    let s = run.suites.iter().find(|s| s.id == suite).unwrap_or_else(|| panic!("no suite {suite} in the run"));
    (s.counts.passed, s.counts.failed, s.counts.error, s.counts.skipped)
}

fn sum(parts: &[(u64, u64, u64, u64)]) -> (u64, u64, u64, u64) {
    parts.iter().fold((0, 0, 0, 0), |a, p| (a.0 + p.0, a.1 + p.1, a.2 + p.2, a.3 + p.3))
}

#[tokio::test(flavor = "multi_thread")]
async fn files_are_one_suite_through_comment_summary_outputs_and_annotations() {
    let ws = workspace();
    let server = MockServer::start().await;
    crate::support::github::mock_comment_api(&server).await;
    let out = fcorr_ci(
        ws.path(),
        &server.uri(),
        &["--files", "unit/*.xml", "--files", "dotnet/**/*", "--files", "!**/legacy/*.xml"]
            .into_iter()
            .chain(["--suite-name", "tests", "--comment", "update", "--annotations", "--path-prefix", "svc/"])
            .collect::<Vec<_>>(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "failures fail the strict gate: {stderr}");

    // One suite of the three files; nunit2.xml (3 passed, 1 failed, 2 errors, 3 skipped) is excluded.
    let run = results(ws.path());
    assert_eq!(run.suites.len(), 1, "{:?}", run.suites.iter().map(|s| &s.id).collect::<Vec<_>>());
    let expected = sum(&[JUNIT_COUNTS, MSTEST_COUNTS, NUNIT3_COUNTS]);
    assert_eq!(counts(&run, "tests"), expected);

    // mstest.trx also holds one timed-out test (a failure in the outputs).
    assert_eq!(run.totals.timeout, 1);

    // Outputs.
    let outputs = outputs(ws.path());
    assert_eq!(outputs["verdict"], "fail");
    assert_eq!(outputs["total"], (expected.0 + expected.1 + expected.2 + expected.3 + 1).to_string());
    assert_eq!(outputs["passed"], expected.0.to_string());
    assert_eq!(outputs["failed"], (expected.1 + expected.2 + 1).to_string());
    assert_eq!(outputs["skipped"], expected.3.to_string());
    assert_eq!(outputs["flaky"], "0");
    assert_eq!(outputs["duration-ms"], run.duration_ms.to_string());
    assert_eq!(outputs["comment-url"], crate::support::github::COMMENT_URL);
    assert_eq!(outputs["check-run-url"], "");

    // Annotation: the report's file path with the prefix, relative to the repository root.
    assert!(stdout.contains("::error file=svc/tests/test_calc.py,line=12,"), "{stdout}");

    // Job summary and comment name failures from JUnit and from .NET reports.
    let summary = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    assert!(summary.contains("test_percent"), "{summary}");
    let posts = posted_bodies(&server).await;
    let body = posts[0]["body"].as_str().unwrap();
    assert!(body.contains("test_percent"), "{body}");
    let dotnet_failure = run.suites[0]
        .cases
        .iter()
        .find(|c| c.status == fcorr::model::CaseStatus::Failed && c.name != "test_percent")
        .expect("a .NET failure");
    assert!(body.contains(dotnet_failure.name.as_str()), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn group_by_directory_makes_one_suite_per_top_directory() {
    let ws = workspace();
    let server = MockServer::start().await;
    let out = fcorr_ci(
        ws.path(),
        &server.uri(),
        &["--files", "**/*.xml", "--files", "**/*.trx", "--files", "!dotnet/legacy/**", "--group-by", "directory"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let run = results(ws.path());
    let mut ids: Vec<&str> = run.suites.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["dotnet", "unit"]);
    assert_eq!(counts(&run, "unit"), JUNIT_COUNTS);
    assert_eq!(counts(&run, "dotnet"), sum(&[MSTEST_COUNTS, NUNIT3_COUNTS]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_glob_matching_nothing_warns_and_with_fail_on_empty_is_an_error() {
    // Without the `empty` gate: a workflow warning, the other patterns still import.
    let ws = workspace();
    let server = MockServer::start().await;
    let out = fcorr_ci(
        ws.path(),
        &server.uri(),
        &["--files", "unit/*.xml", "--files", "nowhere/*.xml", "--fail-on", "strict", "--comment", "off"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("::warning title=fcorr::--files: no report file matches `nowhere/*.xml`"), "{stdout}");
    assert_eq!(counts(&results(ws.path()), "import"), JUNIT_COUNTS);

    // Nothing at all matched and `fail-on` includes `empty` (the default): exit 2, naming the
    // pattern, with verdict=error and a job summary that says why.
    let ws = workspace();
    let out = fcorr_ci(ws.path(), &server.uri(), &["--files", "nowhere/*.xml", "--comment", "off"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nowhere/*.xml") && stderr.contains("empty"), "{stderr}");
    let outputs = outputs(ws.path());
    assert_eq!(outputs["verdict"], "error");
    assert!(outputs["error"].contains("nowhere/*.xml"), "{outputs:?}");
    let summary = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    assert!(summary.contains("fcorr: error") && summary.contains("exit 2") && summary.contains("nowhere/*.xml"));

    // Without the gate and nothing matched: a warning, nothing imported, no error.
    let ws = workspace();
    let out = fcorr_ci(ws.path(), &server.uri(), &["--files", "nowhere/*.xml", "--fail-on", "strict"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("nothing imported"), "{stdout}");
    assert_ne!(out.status.code(), Some(2), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn comment_body_summary_lists_no_cases_and_job_summary_can_be_off() {
    let ws = workspace();
    let server = MockServer::start().await;
    crate::support::github::mock_comment_api(&server).await;
    let out = fcorr_ci(
        ws.path(),
        &server.uri(),
        &["--files", "unit/*.xml", "--comment-body", "summary", "--no-job-summary", "--comment", "update"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!ws.path().join("step-summary.md").exists(), "job-summary: false writes no summary");
    let posts = posted_bodies(&server).await;
    let body = posts.first().expect("the comment")["body"].as_str().unwrap();
    assert!(!body.contains("test_percent"), "summary level lists no case: {body}");
    assert!(body.contains("import"), "{body}");

    // A bad level is a usage error, explained in the summary.
    let ws = workspace();
    let out = fcorr_ci(ws.path(), &server.uri(), &["--files", "unit/*.xml", "--comment-body", "everything"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(outputs(ws.path())["verdict"], "error");
    assert!(std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap().contains("--comment-body"));
}

#[tokio::test(flavor = "multi_thread")]
async fn templates_override_the_summary_and_a_missing_directory_is_a_usage_error() {
    let ws = workspace();
    std::fs::create_dir_all(ws.path().join("tpl")).unwrap();
    std::fs::write(ws.path().join("tpl/summary.md.j2"), "CUSTOM SUMMARY: {{ totals.total }} cases\n").unwrap();
    let server = MockServer::start().await;
    let out = fcorr_ci(ws.path(), &server.uri(), &["--files", "unit/*.xml", "--templates", "tpl", "--comment", "off"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    assert!(summary.starts_with("CUSTOM SUMMARY: 2 cases"), "{summary}");

    let ws = workspace();
    let out = fcorr_ci(ws.path(), &server.uri(), &["--files", "unit/*.xml", "--templates", "no-such-dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--templates no-such-dir"));
}
