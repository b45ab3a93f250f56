//! The Go ecosystem end to end: `fcorr run` on the real `go test` fixtures, compared with what
//! `go test -json` reported in each fixture's `expected.json`.

use std::collections::BTreeMap;

use fcorr::model::{CaseStatus, PhaseKind, PhaseStatus, Suite, SuiteStatus};
use serde_json::Value;

use crate::support::*;

/// Cases keyed by (package, test) — go's own identity of a test — with their statuses.
fn assert_cases(suite: &Suite, want: &Value) {
    let ours: BTreeMap<(String, String), CaseStatus> = suite
        .cases
        .iter()
        .map(|c| ((c.classname.as_deref().unwrap_or_default().to_string(), c.name.to_string()), c.status))
        .collect();
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
    assert_eq!(max.message(), Some("mathx_test.go:14: Max(2, 7) = 7, want 2"));
    assert_eq!((max.file.as_deref(), max.line), (Some("mathx/mathx_test.go"), Some(14)));
    assert_eq!(case("TestClamp/above").message(), Some("mathx_test.go:35: Clamp(42, 0, 10) = 42, want 10"));
    assert_eq!(case("TestSkipped").message(), Some("mathx_test.go:19: not ready yet"));
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
    // `go test` compiles the test files before it runs anything: the failure is the build's.
    let build = suite.phase(PhaseKind::Build).unwrap();
    assert_eq!(build.status, PhaseStatus::Failed);
    assert_eq!(build.exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert!(build.note.as_deref().unwrap().contains("compilation ran inside the test command"), "{build:?}");
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
    assert!(panicked.message().unwrap().starts_with("panic: runtime error"), "{panicked:?}");
    assert!(panicked.details().as_deref().unwrap().contains("lookup.go:19"));
    // The test after the panic never ran: it is absent, not skipped or passed.
    assert!(!suite.cases.iter().any(|c| c.name == "TestNeverRuns"));
}

#[test]
fn a_test_killed_at_the_phase_timeout_says_it_was_still_running() {
    let want = expected("go-hang");
    // On a loaded machine go may still be compiling when the timeout strikes: try again (at most
    // three times) until the hanging test itself was running.
    for attempt in 1..=3 {
        let (run, code) = run_with("go-hang", &["--timeout-test", "10"], &[]);
        let suite = &run.suites[0];
        assert_eq!((suite.status, code), (SuiteStatus::Timeout, 1), "{suite:#?}");
        let Some(hung) = suite.cases.iter().find(|c| c.name == "TestHangs") else {
            eprintln!("attempt {attempt}: go test was killed before TestHangs ran");
            continue;
        };
        assert_eq!(hung.status, CaseStatus::Timeout);
        assert_eq!(hung.message(), Some("still running when the test phase timed out; go test was killed"));
        let statuses: BTreeMap<&str, CaseStatus> = suite.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        let wanted: BTreeMap<&str, CaseStatus> = want["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["test"].as_str().unwrap(), status_of(c["status"].as_str().unwrap())))
            .chain([("[report cut short]", CaseStatus::Error)])
            .collect();
        assert_eq!(statuses, wanted);
        let cut = suite.cases.iter().find(|c| c.name == "[report cut short]").unwrap();
        assert!(cut.message().unwrap().starts_with("go test was killed when the test phase timed out: "), "{cut:?}");
        let n = |k: &str| want["counts"][k].as_u64().unwrap();
        assert_eq!(
            (suite.counts.passed, suite.counts.error, suite.counts.timeout),
            (n("passed"), n("error"), n("timeout"))
        );
        return;
    }
    panic!("go test never reached TestHangs in three runs");
}

#[test]
fn a_failing_test_whose_child_printed_pass_shows_its_own_failure() {
    let want = expected("go-child-pass");
    let (run, code) = run("go-child-pass");
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1), "{suite:#?}");
    assert_cases(suite, &want);
    let failed = &suite.cases[0];
    assert_eq!(failed.message(), Some("child_test.go:17: the real failure"));
    assert_eq!((failed.file.as_deref(), failed.line), (Some("child_test.go"), Some(17)));
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

/// A temporary directory holding `project/` with `files` (path, text).
pub(crate) fn write_project(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    for (name, text) in files {
        let path = project.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (dir, project)
}

/// `fcorr run` of a temporary Go module with `files` (path, text), with extra arguments.
fn run_go_project(files: &[(&str, &str)], extra: &[&str]) -> (fcorr::model::Run, i32, tempfile::TempDir) {
    let (dir, project) = write_project(files);
    let out = dir.path().join("out");
    let output = fcorr().arg("run").arg(&project).arg("--out").arg(&out).arg("--json").args(extra).output().unwrap();
    let (run, code) = parse_run(&output);
    (run, code, dir)
}

const PASSING_PACKAGE: (&str, &str) =
    ("ok/ok_test.go", "package ok\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n");

#[test]
fn a_warm_go_run_is_one_go_test_whose_build_step_is_the_build_gate() {
    let (run, code, dir) = run_go_project(&[("go.mod", "module example.com/w\n\ngo 1.21\n"), PASSING_PACKAGE], &[]);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{suite:#?}");
    let build = suite.phase(PhaseKind::Build).unwrap();
    assert_eq!(build.status, PhaseStatus::Skipped);
    assert!(build.note.as_deref().unwrap().starts_with("checked by `go test`"), "{build:?}");
    // One go command in the suite's log: no `go build` and `go vet` before `go test`.
    let log = std::fs::read_to_string(dir.path().join("out").join(suite.log_file.as_deref().unwrap())).unwrap();
    let commands: Vec<&str> = log.lines().filter(|l| l.starts_with("$ go ")).collect();
    assert_eq!(commands.len(), 1, "{commands:?}");
    assert!(commands[0].starts_with("$ go test -json -count=1 ./..."), "{commands:?}");
}

#[test]
fn go_vet_findings_and_untested_packages_that_do_not_compile_fail_the_build_not_the_tests() {
    let files = [
        ("go.mod", "module example.com/w\n\ngo 1.21\n"),
        PASSING_PACKAGE,
        // Caught by `go build` before, by `go test` now: a package with no test files at all.
        ("tool/main.go", "package main\n\nfunc main() { x := 1 }\n"),
        // Caught by `go vet` before, by the vet step of `go test` now.
        ("v/v.go", "package v\n\nimport \"fmt\"\n\nfunc S() string { return fmt.Sprintf(\"%d\", \"x\") }\n"),
        ("v/v_test.go", "package v\n\nimport \"testing\"\n\nfunc TestS(t *testing.T) { _ = S() }\n"),
    ];
    let (run, code, _dir) = run_go_project(&files, &["--policy", "weighted"]);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::BuildFailed, 1), "{suite:#?}");
    assert_eq!(suite.phase(PhaseKind::Build).unwrap().status, PhaseStatus::Failed);
    let located: Vec<(Option<&str>, Option<u32>)> =
        suite.diagnostics.iter().map(|d| (d.file.as_deref(), d.line)).collect();
    assert!(located.contains(&(Some("tool/main.go"), Some(3))), "{:?}", suite.diagnostics);
    assert!(located.contains(&(Some("v/v.go"), Some(5))), "{:?}", suite.diagnostics);
    // TestOK ran and passed inside the same go test: its result is kept; the packages that did
    // not build are `[build failed]` cases, so the suite's results are incomplete.
    let cases: Vec<(Option<&str>, &str, CaseStatus)> =
        suite.cases.iter().map(|c| (c.classname.as_deref(), c.name.as_str(), c.status)).collect();
    assert_eq!(
        cases,
        [
            (Some("example.com/w/ok"), "TestOK", CaseStatus::Passed),
            (Some("example.com/w/tool"), "[build failed]", CaseStatus::Error),
            (Some("example.com/w/v"), "[build failed]", CaseStatus::Error),
        ],
        "{:?}",
        suite.cases
    );
    // Tests count for points only when the build passed.
    let points = |name: &str| suite.score.components.iter().find(|c| c.name == name).unwrap().points;
    assert_eq!((points("build"), points("tests")), (0.0, 0.0), "{:?}", suite.score);
}

#[test]
fn a_replaced_test_command_brings_back_the_separate_build_gate() {
    let files = [
        ("go.mod", "module example.com/w\n\ngo 1.21\n"),
        PASSING_PACKAGE,
        ("fcorr.toml", "[[suite]]\nname = \"w\"\npath = \".\"\nrunner = \"go\"\ncommands.test = \"go test ./...\"\n"),
    ];
    let (dir, project) = write_project(&files);
    let output =
        fcorr().current_dir(&project).args(["run", "--json", "--out"]).arg(dir.path().join("out")).output().unwrap();
    let (run, _) = parse_run(&output);
    let build = run.suites[0].phase(PhaseKind::Build).unwrap();
    assert_eq!(build.status, PhaseStatus::Passed, "{build:?}");
    assert!(build.command.starts_with("go build ./... && go vet "), "{}", build.command);
}

/// The `pass` events of `go test -json -count=1 work` run in `dir`: (package, test).
fn native_passes(dir: &std::path::Path) -> Vec<(String, String)> {
    let output =
        std::process::Command::new("go").args(["test", "-json", "-count=1", "work"]).current_dir(dir).output().unwrap();
    let mut passes: Vec<(String, String)> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["Action"] == "pass" && e["Test"].is_string())
        .map(|e| (e["Package"].as_str().unwrap().to_string(), e["Test"].as_str().unwrap().to_string()))
        .collect();
    passes.sort();
    passes
}

/// One module of a go.work whose test file does not compile: go test builds and runs every
/// other package in the same run. The suite is build-failed with the compiler's line, and the
/// other module's results are kept (QA D8: before, every case was dropped and the verdict said
/// "no tests ran in any suite").
#[test]
fn a_compile_error_in_one_go_work_module_keeps_the_other_modules_results() {
    let dir = tempfile::tempdir().unwrap();
    let (project, native) = (dir.path().join("project"), dir.path().join("native"));
    for copy in [&project, &native] {
        copy_project(&fixture("go-workspace"), copy);
        let test = copy.join("tools/slug/slug_test.go");
        let text = std::fs::read_to_string(&test).unwrap();
        std::fs::write(&test, format!("{text}\nvar broken int = \"s\"\n")).unwrap();
    }
    let passes = native_passes(&native);
    assert_eq!(passes, [("example.com/fcorr/gowork/greet".to_string(), "TestHello".to_string())]);
    let out = dir.path().join("out");
    let (run, code) =
        parse_run(&fcorr().arg("run").arg(&project).arg("--out").arg(&out).arg("--json").output().unwrap());
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::BuildFailed, 1), "{suite:#?}");
    assert!(suite.diagnostics.iter().any(|d| d.file.as_deref() == Some("tools/slug/slug_test.go")), "{suite:#?}");
    let mut ours: Vec<(String, String)> = suite
        .cases
        .iter()
        .filter(|c| c.status == CaseStatus::Passed)
        .map(|c| (c.classname.as_deref().unwrap().to_string(), c.name.to_string()))
        .collect();
    ours.sort();
    assert_eq!(ours, passes);
    let failed = suite.cases.iter().find(|c| c.name == "[build failed]").unwrap();
    assert_eq!(failed.classname.as_deref(), Some("example.com/fcorr/gowork/tools/slug"));
    assert!(!run.verdict.reasons.iter().any(|r| r.message.contains("no tests ran")), "{:?}", run.verdict.reasons);
}

/// A go.work that `use`s a directory without a go.mod: the go command refuses the workspace
/// before any test. The suite is an input error naming go.work's line and the directory (QA D13:
/// before, "go test wrote no events" and a hint to set another test tool).
#[test]
fn a_go_work_using_a_missing_directory_is_an_input_error_naming_it() {
    let files = [
        ("go.work", "go 1.21\n\nuse (\n\t./alpha\n\t./gone\n)\n"),
        ("alpha/go.mod", "module example.com/alpha\n\ngo 1.21\n"),
        ("alpha/a_test.go", "package alpha\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n"),
    ];
    let (run, code, dir) = run_go_project(&files, &[]);
    let native = std::process::Command::new("go")
        .args(["test", "work"])
        .current_dir(dir.path().join("project"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&native.stderr).to_string();
    assert!(said.contains("cannot load module") && said.contains("listed in go.work file"), "{said}");
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Error, 2), "{suite:#?}");
    let error = suite.error.as_ref().unwrap();
    assert_eq!(error.kind, fcorr::model::SuiteErrorKind::Input);
    assert!(error.message.starts_with("go.work:5: `use ./gone`: ./gone does not exist"), "{}", error.message);
}

/// When the go command stops before writing any `-json` event (a go.mod it cannot parse), the
/// suite's error quotes what it said, not "wrote no events" with a hint about other test tools.
#[test]
fn what_the_go_command_said_before_any_event_is_the_error() {
    let files = [("go.mod", "module example.com/w\n\ngo 1.21\nbogus directive\n"), PASSING_PACKAGE];
    let (run, code, _dir) = run_go_project(&files, &[]);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Error, 1), "{suite:#?}");
    let error = suite.error.as_ref().unwrap();
    assert_eq!(
        error.message,
        "go test stopped before running any test; the go command said: go: errors parsing go.mod: go.mod:4: \
         unknown directive: bogus"
    );
    assert!(!error.hint.as_deref().unwrap_or_default().contains("another test tool"), "{error:?}");
}
