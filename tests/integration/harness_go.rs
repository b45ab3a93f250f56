//! The Go ecosystem end to end: `fcorr run` on the real `go test` fixtures, compared with what
//! `go test -json` reported in each fixture's `expected.json`.

use std::collections::BTreeMap;

use fcorr::model::{CaseStatus, PhaseKind, PhaseStatus, Suite, SuiteStatus};
use serde_json::Value;

use crate::support::*;

/// Cases keyed by (package, test) — go's own identity of a test — with their statuses.
fn assert_cases(suite: &Suite, want: &Value) {
    let ours: BTreeMap<(String, String), CaseStatus> =
        suite.cases.iter().map(|c| ((c.classname.clone().unwrap_or_default(), c.name.clone()), c.status)).collect();
    let theirs: BTreeMap<(String, String), CaseStatus> = want["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let key = (c["package"].as_str().unwrap().to_string(), c["test"].as_str().unwrap().to_string());
            (key, status_of(c["status"].as_str().unwrap()))
        })
        .collect();
    assert_eq!(ours, theirs);
    assert_counts(suite, &want["counts"]);
}

#[test]
fn go_mixed_reports_tests_and_subtests_as_go_test_did() {
    let want = expected("go-mixed");
    let (run, code) = run("go-mixed");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed, "{suite:#?}");
    assert_eq!(code, 1);
    assert_eq!(suite.score.value, 0.0);
    assert_eq!(suite.phase(PhaseKind::Test).unwrap().exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert_cases(suite, &want);

    let case = |name: &str| suite.cases.iter().find(|c| c.name == name).unwrap();
    let max = case("TestMaxFails");
    assert_eq!(max.message.as_deref(), Some("mathx_test.go:14: Max(2, 7) = 7, want 2"));
    assert_eq!((max.file.as_deref(), max.line), (Some("mathx/mathx_test.go"), Some(14)));
    assert_eq!(case("TestClamp/above").message.as_deref(), Some("mathx_test.go:35: Clamp(42, 0, 10) = 42, want 10"));
    assert_eq!(case("TestSkipped").message.as_deref(), Some("mathx_test.go:19: not ready yet"));
    // Where go test said each failure happened (`mathx_test.go:35: …`).
    let printed = printed_locations(suite, r"\s(\w+_test\.go):(\d+): ");
    for failed in [max, case("TestClamp/above")] {
        assert_located_as_printed(failed, &printed);
    }
    // A subtest keeps its parent's file whatever its outcome, so its id never depends on it.
    assert_eq!(case("TestClamp/inside").file.as_deref(), Some("mathx/mathx_test.go"));
    assert_eq!(case("TestReverse").file.as_deref(), Some("strx/strx_test.go"));
    assert!(
        matches!(&suite.results_source, fcorr::model::ResultsSource::Report { format, .. } if format == "go-test-json")
    );
}

#[test]
fn go_build_error_in_a_test_file_fails_the_build_gate() {
    let want = expected("go-build-error");
    assert!(want["counts"].is_null());
    let (run, code) = run("go-build-error");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::BuildFailed, "{suite:#?}");
    assert_eq!(code, 1);
    assert_eq!(suite.score.value, 0.0);
    let build = suite.phase(PhaseKind::Build).unwrap();
    assert_eq!(build.status, PhaseStatus::Failed);
    assert!(build.command.contains("go vet"), "{}", build.command);
    assert_eq!(suite.phase(PhaseKind::Test).unwrap().status, PhaseStatus::Skipped);
    let d = suite.diagnostics.iter().find(|d| d.file.as_deref() == Some("greet_test.go")).unwrap_or_else(|| {
        panic!("no diagnostic for greet_test.go: {:?}", suite.diagnostics);
    });
    assert_eq!((d.line, d.column), (Some(7), Some(14)));
    assert!(d.message.contains("assignment mismatch"), "{d:?}");
    assert!(suite.cases.is_empty());
}

#[test]
fn go_panic_keeps_the_tests_that_reported_and_fails() {
    let want = expected("go-panic");
    let (run, code) = run("go-panic");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed, "{suite:#?}");
    assert_eq!(code, 1);
    assert_cases(suite, &want);
    let panicked = suite.cases.iter().find(|c| c.name == "TestNameOfUnknownPanics").unwrap();
    assert!(panicked.message.as_deref().unwrap().starts_with("panic: runtime error"), "{panicked:?}");
    assert!(panicked.extra().details.as_deref().unwrap().contains("lookup.go:19"));
    // The test after the panic never ran: it is absent, not skipped or passed.
    assert!(!suite.cases.iter().any(|c| c.name == "TestNeverRuns"));
}

#[test]
fn detect_lists_markers_and_confidence_as_json() {
    let output = fcorr().arg("detect").arg(fixture("go-mixed")).arg("--json").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    let best = &value["best"];
    assert_eq!(best["ecosystem"], "go");
    assert_eq!(best["framework"], "go test");
    assert!(best["confidence"].as_f64().unwrap() >= 0.9);
    let markers: Vec<&str> = best["markers"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert!(markers.iter().any(|m| m.contains("module example.com/fcorr/gomixed")), "{markers:?}");
    assert!(markers.iter().any(|m| m.contains("_test.go")), "{markers:?}");
}

#[test]
fn go_workspace_tests_every_module_it_uses() {
    let want = expected("go-workspace");
    let (run, code) = run("go-workspace");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed, "{suite:#?}");
    assert_eq!(code, 1);
    let test = suite.phase(PhaseKind::Test).unwrap();
    assert!(test.command.ends_with(" work"), "{}", test.command);
    assert_eq!(test.exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert_cases(suite, &want);
    // Files resolve inside the nested module, passing and failing alike.
    for c in want["cases"].as_array().unwrap() {
        let case = suite.cases.iter().find(|k| k.name == c["test"].as_str().unwrap()).unwrap();
        assert_eq!(
            (case.file.as_deref(), case.line),
            (c["file"].as_str(), c["line"].as_u64().map(|l| l as u32)),
            "{}",
            case.name
        );
    }
}

#[test]
fn detect_shows_nested_modules_as_suites_of_their_own_and_go_work_modules_with_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("no-go-work");
    copy_project(&fixture("go-workspace"), &project);
    std::fs::remove_file(project.join("go.work")).unwrap();
    let output = fcorr().arg("detect").arg(&project).arg("--json").output().unwrap();
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    let markers: Vec<&str> = value["best"]["markers"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert!(markers.contains(&"nested module(s) run as suites of their own: tools"), "{markers:?}");
    let suites: Vec<&str> = value["suites"].as_array().unwrap().iter().map(|s| s["path"].as_str().unwrap()).collect();
    assert_eq!(suites, [".", "tools"]);
    let test = &value["suites"][1]["phases"][2];
    assert_eq!((test["kind"].as_str(), test["commands"][0]["dir"].as_str()), (Some("test"), Some("tools")), "{test}");

    let with_work = fcorr().arg("detect").arg(fixture("go-workspace")).arg("--json").output().unwrap();
    let value: Value = serde_json::from_slice(&with_work.stdout).unwrap();
    let suites = value["suites"].as_array().unwrap();
    assert_eq!(suites.len(), 1, "the go.work's modules run with the root: {value}");
    assert_eq!(suites[0]["phases"][2]["commands"][0]["command"], "go test -json -count=1 work");
}
