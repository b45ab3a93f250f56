//! Retries end to end: `fcorr run --retries 2` on the `flaky-*` fixtures, where one test fails on
//! its first run only, one always fails, and neighbours whose names extend or prefix the failing
//! ones pass. Each test counts its runs in a file under `$FCORR_FLAKY_STATE`, so the counts prove
//! what each attempt ran; the native tool's own summary of each attempt is in `expected.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fcorr::model::{Case, CaseStatus, PhaseKind, Run, Suite, SuiteStatus};
use serde_json::Value;

use crate::support::*;

/// A fixture copied into a temporary directory, with an empty state directory beside it.
struct Flaky {
    _dir: tempfile::TempDir,
    project: PathBuf,
    state: PathBuf,
    out: PathBuf,
}

fn flaky(name: &str) -> Flaky {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(name);
    copy_project(&fixture(name), &project);
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let out = dir.path().join("out");
    Flaky { project, state, out, _dir: dir }
}

/// `fcorr run <copy> --json` with the state directory and extra arguments.
fn run_flaky(f: &Flaky, extra: &[&str], env: &[(&str, &Path)]) -> (Run, i32) {
    let mut cmd = fcorr();
    cmd.arg("run").arg(&f.project).arg("--out").arg(&f.out).arg("--json").args(extra);
    cmd.env("FCORR_FLAKY_STATE", &f.state);
    for (key, value) in env {
        cmd.env(key, value);
    }
    parse_run(&cmd.output().unwrap())
}

/// How many times each test ran, from its state file.
fn runs(state: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(state)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let n = std::fs::read_to_string(e.path()).unwrap().trim().parse().unwrap();
            (e.file_name().to_string_lossy().into_owned(), n)
        })
        .collect()
}

/// Every case ends as `expected.json` says it does with two retries: status, number of retries,
/// and one failed attempt recorded per retry.
fn assert_after_retries(suite: &Suite, want: &Value, key: impl Fn(&Case) -> String) {
    let ours: BTreeMap<String, (CaseStatus, u32, Vec<CaseStatus>)> = suite
        .cases
        .iter()
        .map(|c| (key(c), (c.status, c.extra().retries, c.extra().attempts.iter().map(|a| a.status).collect())))
        .collect();
    let theirs: BTreeMap<String, (CaseStatus, u32, Vec<CaseStatus>)> = want["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let end = &c["with_retries_2"];
            let retries = end["retries"].as_u64().unwrap() as u32;
            let attempts = vec![CaseStatus::Failed; retries as usize];
            (c["name"].as_str().unwrap().to_string(), (status_of(end["status"].as_str().unwrap()), retries, attempts))
        })
        .collect();
    assert_eq!(ours, theirs);
}

fn expected_runs(want: &Value) -> BTreeMap<String, u64> {
    want["runs"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect()
}

/// The test phases: the first run, then one per retry, in order.
fn test_phases(suite: &Suite) -> Vec<&fcorr::model::Phase> {
    suite.phases.iter().filter(|p| p.kind == PhaseKind::Test).collect()
}

/// Each attempt's log tail holds the native tool's own summary for that attempt.
fn assert_attempt_summaries(suite: &Suite, want: &Value) {
    let phases = test_phases(suite);
    let attempts = want["attempts"].as_array().unwrap();
    assert_eq!(phases.len(), attempts.len(), "{phases:#?}");
    for (phase, attempt) in phases.iter().zip(attempts) {
        let summaries: Vec<&str> = match &attempt["summary"] {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().map(|s| s.as_str().unwrap()).collect(),
            _ => Vec::new(),
        };
        for summary in summaries {
            assert!(phase.log_tail.contains(summary), "`{summary}` not in the attempt's log:\n{}", phase.log_tail);
        }
    }
}

#[test]
fn pytest_retries_rerun_only_the_failed_node_ids() {
    let want = expected("flaky-pytest");
    let f = flaky("flaky-pytest");
    let (run, code) = run_flaky(&f, &["--retries", "2"], &[]);
    let suite = &run.suites[0];
    assert_eq!(runs(&f.state), expected_runs(&want), "{suite:#?}");
    assert_after_retries(suite, &want, |c| format!("{}::{}", c.file.as_deref().unwrap(), c.name));
    assert_attempt_summaries(suite, &want);
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));
    assert_eq!((suite.counts.passed, suite.counts.flaky, suite.counts.failed), (2, 1, 1));

    // The reports carry every attempt: JUnit as Surefire writes reruns, CTRF's flaky and retries.
    let junit = std::fs::read_to_string(f.out.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<flakyFailure").count(), 1, "{junit}");
    assert_eq!(junit.matches("<rerunFailure").count(), 2, "{junit}");
    let ctrf: Value = serde_json::from_str(&std::fs::read_to_string(f.out.join("ctrf.json")).unwrap()).unwrap();
    let tests = ctrf["results"]["tests"].as_array().unwrap();
    let test = |name: &str| tests.iter().find(|t| t["name"] == name).unwrap();
    assert_eq!((test("test_flaky")["flaky"].as_bool(), test("test_flaky")["retries"].as_u64()), (Some(true), Some(1)));
    assert_eq!(test("test_flaky")["status"], "passed");
    assert_eq!(test("test_always_fails")["retries"].as_u64(), Some(2));
}

#[test]
fn unittest_retries_rerun_only_the_failed_tests_by_name() {
    let want = expected("flaky-unittest");
    let f = flaky("flaky-unittest");
    let (run, code) = run_flaky(&f, &["--retries", "2"], &[]);
    let suite = &run.suites[0];
    assert_eq!(suite.detection.as_ref().unwrap().framework, "unittest");
    assert_eq!(runs(&f.state), expected_runs(&want), "{suite:#?}");
    assert_after_retries(suite, &want, |c| format!("{}.{}", c.classname.as_deref().unwrap(), c.name));
    assert_attempt_summaries(suite, &want);
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));
    let retry = test_phases(suite)[1];
    assert!(
        retry.command.ends_with("-v test_flaky.Flaky.test_always_fails test_flaky.Flaky.test_flaky"),
        "{}",
        retry.command
    );
}

#[test]
fn pytest_without_retries_runs_once_and_the_fail_policy_fails_a_flaky_test() {
    let want = expected("flaky-pytest");
    let f = flaky("flaky-pytest");
    let (run, code) = run_flaky(&f, &[], &[]);
    let suite = &run.suites[0];
    assert_eq!(test_phases(suite).len(), 1);
    assert!(runs(&f.state).values().all(|&n| n == 1));
    assert_counts(suite, &want["counts"]);
    assert_eq!(code, 1);

    // Only the flaky test fails again; with the fail policy it still counts as a failure.
    let f = flaky("flaky-pytest");
    std::fs::write(f.state.join("test_always_fails"), "-100").unwrap();
    let (run, code) = run_flaky(&f, &["--retries", "1", "--retries-policy", "fail"], &[]);
    let suite = &run.suites[0];
    let case = suite.cases.iter().find(|c| c.name == "test_flaky").unwrap();
    assert_eq!((case.status, case.extra().retries), (CaseStatus::Failed, 1), "{case:#?}");
    assert!(case.extra().eval().reasons.iter().any(|r| r.code == "flaky"));
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));

    // Same state, default policy: every failure passed on its retry, so the suite passes.
    let f = flaky("flaky-pytest");
    std::fs::write(f.state.join("test_always_fails"), "-100").unwrap();
    let (run, code) = run_flaky(&f, &["--retries", "1"], &[]);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{suite:#?}");
    assert_eq!((suite.counts.flaky, suite.counts.failures()), (1, 0));
}

#[test]
fn go_retries_rerun_failed_tests_per_package_with_anchored_patterns() {
    let want = expected("flaky-go");
    let f = flaky("flaky-go");
    let (run, code) = run_flaky(&f, &["--retries", "2"], &[]);
    let suite = &run.suites[0];
    assert_eq!(runs(&f.state), expected_runs(&want), "{suite:#?}");
    assert_after_retries(suite, &want, |c| format!("{}/{}", c.classname.as_deref().unwrap(), c.name));
    assert_eq!(test_phases(suite).len(), 3);
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));
    let retry = test_phases(suite)[1];
    assert!(retry.command.contains("-run '^TestGroup$/^flaky$'"), "{}", retry.command);
    assert!(retry.command.contains("-run '^(TestFlaky|TestAlwaysFails)$'"), "{}", retry.command);
}

#[test]
fn cargo_retries_rerun_failed_tests_per_target_by_exact_name() {
    let want = expected("flaky-rust");
    let f = flaky("flaky-rust");
    // One target directory for every run of this test, so the fixture compiles once per machine.
    let target = repo().join("target/fcorr-test-cache/flaky-rust-target");
    let (run, code) = run_flaky(&f, &["--retries", "2"], &[("CARGO_TARGET_DIR", &target)]);
    let suite = &run.suites[0];
    assert_eq!(runs(&f.state), expected_runs(&want), "{suite:#?}");
    assert_after_retries(suite, &want, |c| c.name.clone().into());
    assert_attempt_summaries(suite, &want);
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));
}

/// `fcorr run --retries 2` on a JavaScript fixture in place: its node_modules come from fcorr's
/// own install phase (`npm ci` from the fixture's lockfile), shared by every run, like the
/// js-* fixtures; the state directory is a fresh temporary one.
fn check_js(name: &str) {
    let want = expected(name);
    let state = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let output = fcorr()
        .arg("run")
        .arg(fixture(name))
        .arg("--out")
        .arg(out.path())
        .arg("--json")
        .args(["--retries", "2"])
        .env("FCORR_FLAKY_STATE", state.path())
        .output()
        .unwrap();
    let (run, code) = parse_run(&output);
    let suite = &run.suites[0];
    assert_eq!(runs(state.path()), expected_runs(&want), "{suite:#?}");
    assert_after_retries(suite, &want, |c| c.name.clone().into());
    assert_attempt_summaries(suite, &want);
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));
    assert_eq!((suite.counts.passed, suite.counts.flaky, suite.counts.failed), (2, 1, 1));
}

#[test]
fn jest_retries_select_by_file_and_anchored_full_name() {
    check_js("flaky-jest");
}

#[test]
fn vitest_retries_select_by_file_and_anchored_full_name() {
    check_js("flaky-vitest");
}

#[test]
fn mocha_retries_grep_the_escaped_full_title() {
    check_js("flaky-mocha");
}

#[test]
fn node_test_retries_use_an_anchored_name_pattern() {
    check_js("flaky-node-test");
}

#[test]
fn maven_retries_select_class_and_methods_with_surefire_dtest() {
    let want = expected("flaky-maven");
    let f = flaky("flaky-maven");
    let (run, code) = run_flaky(&f, &["--retries", "2"], &[]);
    let suite = &run.suites[0];
    assert_eq!(runs(&f.state), expected_runs(&want), "{suite:#?}");
    assert_after_retries(suite, &want, |c| format!("{}#{}", c.classname.as_deref().unwrap(), c.name));
    assert_attempt_summaries(suite, &want);
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));
}

#[test]
fn rerun_failed_runs_only_the_failed_tests_and_merge_lays_them_over_the_original() {
    let f = flaky("flaky-pytest");
    let (first, code) = run_flaky(&f, &[], &[]);
    assert_eq!(code, 1);
    assert_eq!(first.suites[0].counts.failures(), 2);
    // `--json` prints results.json: keep it as the first run's saved results.
    let first_out = f.out.join("../first");
    std::fs::create_dir_all(&first_out).unwrap();
    std::fs::write(first_out.join("results.json"), serde_json::to_string(&first).unwrap()).unwrap();

    let (rerun, code) = run_flaky(&f, &["--rerun-failed", first_out.join("results.json").to_str().unwrap()], &[]);
    let suite = &rerun.suites[0];
    // Only the two failed node ids ran again: each neighbour still ran once.
    let runs = runs(&f.state);
    assert_eq!((runs["test_flaky"], runs["test_always_fails"]), (2, 2));
    assert_eq!((runs["test_flaky_neighbour"], runs["test_always"]), (1, 1));
    assert_eq!(suite.rerun_of.as_deref(), Some(first.started_at.as_str()));
    let mut names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["test_always_fails", "test_flaky"]);
    assert_eq!(code, 1);

    // Merged, the rerun's outcome wins and each case shows both runs.
    let merged = f.out.join("../merged");
    let output = fcorr_bin()
        .arg("merge")
        .arg(&first_out)
        .arg(&f.out)
        .arg("--out")
        .arg(&merged)
        .arg("--format")
        .arg("json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let run: Run = serde_json::from_str(&std::fs::read_to_string(merged.join("results.json")).unwrap()).unwrap();
    assert_eq!(run.suites.len(), 1, "one suite, not the original and the rerun side by side");
    let suite = &run.suites[0];
    let case = |name: &str| suite.cases.iter().find(|c| c.name == name).unwrap();
    assert_eq!((case("test_flaky").status, case("test_flaky").extra().retries), (CaseStatus::Flaky, 1));
    assert_eq!(case("test_flaky").extra().attempts[0].status, CaseStatus::Failed);
    assert_eq!((case("test_always_fails").status, case("test_always_fails").extra().retries), (CaseStatus::Failed, 1));
    assert!(case("test_always_fails").message().unwrap().contains("run 2"), "the rerun's message wins");
    assert_eq!(case("test_flaky_neighbour").status, CaseStatus::Passed);
    assert_eq!((suite.counts.total, suite.counts.passed, suite.counts.flaky, suite.counts.failed), (4, 2, 1, 1));
    assert_eq!(suite.status, SuiteStatus::Failed);
}

/// A failing `harness = false` target is one `[test binary]` error case, not a test: retries
/// never select it by name (nothing would run and its failure would vanish), and `--rerun-failed`
/// on results that were incomplete runs everything again instead of passing on the tests it could
/// name while the target that failed is never run.
#[test]
fn a_failing_harness_false_target_is_never_rerun_as_a_test() {
    let want = expected("flaky-rust-harness-false");
    let target = repo().join("target/fcorr-test-cache/flaky-rust-harness-false-target");
    let env = [("CARGO_TARGET_DIR", target.as_path())];

    let f = flaky("flaky-rust-harness-false");
    let (run, code) = run_flaky(&f, &["--retries", "2"], &env);
    let suite = &run.suites[0];
    assert_eq!(runs(&f.state), expected_runs(&want), "{suite:#?}");
    assert_after_retries(suite, &want, |c| c.name.clone().into());
    assert_attempt_summaries(suite, &want);
    for phase in test_phases(suite) {
        assert!(!phase.command.contains("[test binary]"), "{}", phase.command);
    }
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));

    let f = flaky("flaky-rust-harness-false");
    let (first, code) = run_flaky(&f, &[], &env);
    assert_eq!((first.suites[0].counts.failed, first.suites[0].counts.error, code), (1, 1, 1));
    let first_out = f.out.join("../first");
    std::fs::create_dir_all(&first_out).unwrap();
    std::fs::write(first_out.join("results.json"), serde_json::to_string(&first).unwrap()).unwrap();
    let (rerun, code) = run_flaky(&f, &["--rerun-failed", first_out.join("results.json").to_str().unwrap()], &env);
    let suite = &rerun.suites[0];
    let again: BTreeMap<String, u64> = want["runs_after_rerun_failed"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(runs(&f.state), again, "{suite:#?}");
    let golden = suite.cases.iter().find(|c| c.name == "[test binary]").expect("golden failed again");
    assert_eq!((golden.status, golden.classname.as_deref()), (CaseStatus::Error, Some("golden")));
    assert!(
        suite.diagnostics.iter().any(|d| d.message.contains("`[test binary]`") && d.message.contains("runs again")),
        "{:#?}",
        suite.diagnostics
    );
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));
}
