//! Repositories holding projects of several ecosystems, run with no configuration: a root that is
//! two projects at once (a Python backend and a JS frontend) runs both; a project of another
//! ecosystem below a project root is named as not run; weak evidence (a stray `test_*.py` below
//! the root, a tooling-only package.json) never makes a root a project and hides what is below it.

use std::path::Path;

use fcorr::model::{Run, SuiteStatus};
use serde_json::Value;

use crate::harness_go::write_project;
use crate::harness_workspaces::assert_left_out_in_every_report;
use crate::support::*;

/// `fcorr run PATHS… --json`, the reports written to `out`.
fn run_paths(paths: &[&Path], out: &Path) -> (Run, i32) {
    let output = fcorr().arg("run").args(paths).arg("--out").arg(out).arg("--json").output().unwrap();
    parse_run(&output)
}

const GO_MOD: &str = "module example.com/svc\n\ngo 1.21\n";
const GO_FAILING: &str =
    "package svc\n\nimport \"testing\"\n\nfunc TestGoFails(t *testing.T) {\n\tt.Fatal(\"the Go failure\")\n}\n";
const GO_PASSING: &str = "package svc\n\nimport \"testing\"\n\nfunc TestGoPasses(t *testing.T) {}\n";
const WEB_PACKAGE: &str = r#"{"name":"web","version":"1.0.0","scripts":{"test":"node --test"}}"#;
const WEB_FAILING: &str = "const test = require('node:test');\nconst assert = require('node:assert');\ntest('web fails', () => assert.ok(false));\n";
const PY_PASSING: &str = "def test_release_notes():\n    assert True\n";

/// A root that is a Python project (pyproject.toml, tests/) and a JS project (package.json whose
/// `test` runs node --test) at once: each tool runs only its own tests, so fcorr runs both, one
/// suite per ecosystem, with the natives' counts; the failing JS test fails the run. The Go module
/// below, with tests of its own, is run by neither tool: it runs as a suite of its own, and its
/// failure fails the run too (before, it was named as not run beside a passing root).
#[test]
fn a_root_that_is_two_projects_runs_both_and_the_go_module_below() {
    let want = expected("polyglot-root");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("polyglot-root");
    copy_project(&fixture("polyglot-root"), &root);
    let out = dir.path().join("out");
    let (run, code) = run_paths(&[&root], &out);
    let ids: Vec<&str> = run.suites.iter().map(|s| s.id.as_str()).collect();
    let base = root.display().to_string();
    assert_eq!(
        ids,
        [format!("{base} (python)"), format!("{base} (node)"), format!("{base}/svc-go")],
        "one suite per ecosystem at the root, and the Go module below"
    );
    let pytest_id = |c: &fcorr::model::Case| format!("{}::{}", c.file.as_deref().unwrap_or_default(), c.name);
    assert_matches_expected(&run.suites[0], &want["python"], pytest_id);
    assert_matches_expected(&run.suites[1], &want["node"], |c| c.name.to_string());
    for (suite, ecosystem) in run.suites.iter().zip(["python", "node", "go"]) {
        assert_eq!(suite.detection.as_ref().unwrap().ecosystem, ecosystem);
    }
    let statuses: Vec<SuiteStatus> = run.suites.iter().map(|s| s.status).collect();
    assert_eq!(statuses, [SuiteStatus::Passed, SuiteStatus::Failed, SuiteStatus::Failed]);
    let go = &run.suites[2];
    assert_eq!((go.counts.passed, go.counts.failed), (0, 1), "as `cd svc-go && go test ./...`: {:?}", go.cases);
    assert_eq!(go.cases[0].name, "TestServiceFails");
    assert_eq!(code, 1);
    assert!(run.suites.iter().all(|s| s.left_out.is_empty()), "nothing is left out: every project ran");
}

/// A Go monorepo (no marker at the root) with one helper test file under scripts/, alone or
/// with a pyproject.toml that only configures ruff: the root is no Python project. Before, pytest
/// ran the one helper test and the run passed, the Go and JS projects never named.
#[test]
fn a_stray_python_test_below_the_root_does_not_make_it_a_python_project() {
    let files = [
        ("scripts/test_release.py", PY_PASSING),
        ("svc-go/go.mod", GO_MOD),
        ("svc-go/s_test.go", GO_FAILING),
        ("web/package.json", WEB_PACKAGE),
        ("web/test/a.test.js", WEB_FAILING),
    ];
    for ruff in [false, true] {
        let (dir, project) = write_project(&files);
        if ruff {
            std::fs::write(project.join("pyproject.toml"), "[tool.ruff]\nline-length = 100\n").unwrap();
        }
        let (run, code) = run_paths(&[&project], &dir.path().join("out"));
        assert_eq!(code, 2, "ruff config: {ruff}; {run:#?}");
        assert_eq!(run.suites.len(), 1);
        let suite = &run.suites[0];
        assert!(suite.phases.is_empty(), "nothing ran: {:?}", suite.phases);
        let message = &suite.error.as_ref().unwrap().message;
        assert!(message.contains("no project detected"), "{message}");
        assert!(
            message.contains("below it: scripts (test_*.py), svc-go (go.mod), web (package.json)")
                && message.contains("`fcorr run scripts svc-go web`"),
            "names every project below and how to run them: {message}"
        );
        assert!(message.contains("scripts/test_release.py"), "says why Python did not claim the root: {message}");
    }
}

/// A Go monorepo whose root package.json is tooling only (husky: no `test` script, no test files,
/// no test framework): the root is no JS project, and the error names the Go modules below, not
/// "set `framework`".
#[test]
fn a_tooling_only_package_json_leaves_the_root_to_the_go_modules_below() {
    let (dir, project) = write_project(&[
        ("package.json", r#"{"name":"tooling","private":true,"scripts":{"prepare":"husky"}}"#),
        ("services/api/go.mod", GO_MOD),
        ("services/api/a_test.go", GO_PASSING),
        ("services/worker/go.mod", GO_MOD),
        ("services/worker/w_test.go", GO_FAILING),
    ]);
    let (run, code) = run_paths(&[&project], &dir.path().join("out"));
    assert_eq!(code, 2);
    let message = &run.suites[0].error.as_ref().unwrap().message;
    assert!(
        message.contains("below it: services/api (go.mod), services/worker (go.mod)")
            && message.contains("`fcorr run services/api services/worker`"),
        "{message}"
    );
    assert!(!message.contains("set `framework`"), "{message}");
    let detect = fcorr().arg("detect").arg(&project).output().unwrap();
    assert_eq!(detect.status.code(), Some(2), "{}", String::from_utf8_lossy(&detect.stdout));
}

/// A Go module at the root with a JS project and Python tests below it: `go test ./...` runs
/// neither, so each, having tests of its own, runs as a suite of its own (in `fcorr detect` too),
/// and their failures fail the run beside a passing root. A JS project below with no tests (a
/// docs site's package.json) is named as not run; `testdata` is test input, not a project.
#[test]
fn projects_of_other_ecosystems_below_a_go_root_run_as_suites_of_their_own() {
    let (dir, project) = write_project(&[
        ("go.mod", GO_MOD),
        ("r_test.go", GO_PASSING),
        ("web/package.json", WEB_PACKAGE),
        ("web/test/a.test.js", WEB_FAILING),
        ("tools/requirements.txt", "pytest\n"),
        ("tools/test_tool.py", "def test_tool_fails():\n    assert 1 == 2\n"),
        ("docs/package.json", r#"{"name":"docs","private":true,"scripts":{"build":"echo docs"}}"#),
        ("testdata/fixture/package.json", "{}"),
    ]);
    let detect = fcorr().arg("detect").arg(&project).arg("--json").output().unwrap();
    let value: Value = serde_json::from_slice(&detect.stdout).unwrap();
    assert_eq!(value["best"]["ecosystem"], "go");
    let paths = |key: &str| -> Vec<String> {
        value[key].as_array().unwrap().iter().map(|l| l["path"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(paths("suites"), [".", "tools", "web"], "{value}");
    assert_eq!(paths("left_out"), ["docs"], "testdata is test input, not a project: {value}");

    let out = dir.path().join("out");
    let (run, code) = run_paths(&[&project], &out);
    let base = project.display().to_string();
    let suites: Vec<(&str, &str, SuiteStatus, u64)> = run
        .suites
        .iter()
        .map(|s| (s.id.as_str(), s.detection.as_ref().unwrap().ecosystem.as_str(), s.status, s.counts.failed))
        .collect();
    assert_eq!(
        suites,
        [
            (base.as_str(), "go", SuiteStatus::Passed, 0),
            (format!("{base}/tools").as_str(), "python", SuiteStatus::Failed, 1),
            (format!("{base}/web").as_str(), "node", SuiteStatus::Failed, 1),
        ]
    );
    assert_eq!(code, 1, "a failing test below the root fails the run");
    let left: Vec<(&str, &str)> = run.suites[0].left_out.iter().map(|l| (l.path.as_str(), l.reason.as_str())).collect();
    assert_eq!(left.iter().map(|l| l.0).collect::<Vec<_>>(), [format!("{base}/docs")]);
    assert!(left[0].1.starts_with("a JavaScript project (package.json) below the Go project"), "{left:?}");
    assert_left_out_in_every_report(&run, &out);

    // Named on the command line as well, a project below runs once, as that suite.
    let (run, _) = run_paths(&[&project, &project.join("tools")], &dir.path().join("out2"));
    let ids: Vec<&str> = run.suites.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.iter().filter(|id| id.ends_with("tools")).count(), 1, "{ids:?}");
}
