//! npm workspace roots whose `test` script runs tests of its own: a root that then fans out to
//! the members (`node --test test/ && npm test --workspaces`), one that filters the fan-out
//! (`npm test -w ...`), one that never runs the members, and a member run on its own. Each test
//! runs npm itself on the fixture and compares; what fcorr does not run is named.

use std::path::Path;

use fcorr::model::{Run, SuiteStatus};

use crate::harness_workspaces::{js_totals, native};
use crate::support::*;

/// A fresh copy of the fixture `name` in `dir`, changed by `edit`, and fcorr's run of it with its
/// exit code; the reports are written to `dir/out`.
fn run_copy(dir: &Path, name: &str, edit: impl FnOnce(&Path)) -> (Run, i32) {
    let root = dir.join(name);
    copy_project(&fixture(name), &root);
    edit(&root);
    let output = fcorr().arg("run").arg(&root).arg("--out").arg(dir.join("out")).arg("--json").output().unwrap();
    parse_run(&output)
}

/// (path relative to the fixture's copy, reason) of every part the run left out.
fn left_out(run: &Run, root: &Path) -> Vec<(String, String)> {
    let prefix = format!("{}/", root.display());
    let left = run.suites.iter().flat_map(|s| &s.left_out);
    left.map(|l| (l.path.strip_prefix(&prefix).unwrap_or(&l.path).to_string(), l.reason.clone())).collect()
}

/// The root's `test` runs its own tests, then every member's (`npm test --workspaces
/// --if-present`); only the member's test fails, so `npm test` fails. Before, fcorr ran the
/// root's tests alone and passed. A member whose script is `echo no tests && exit 0` is named,
/// not an input error.
#[test]
fn a_workspace_root_that_runs_its_tests_and_fans_out_runs_the_members_too() {
    let dir = tempfile::tempdir().unwrap();
    let fixture_dir = fixture("js-npm-root-fans-out");
    let (whole, code) = native(&fixture_dir, "npm", &["test"]);
    assert_eq!(code, 1, "npm's own run fails on the member:\n{whole}");
    let (root_only, _) = native(&fixture_dir, "node", &["--test", "test/"]);
    let (member, _) = native(&fixture_dir.join("packages/m1"), "node", &["--test"]);

    let (run, code) = run_copy(dir.path(), "js-npm-root-fans-out", |_| {});
    let root = dir.path().join("js-npm-root-fans-out");
    assert_eq!(code, 1, "the member's failing test fails the run");
    let suites: Vec<(String, SuiteStatus)> = run.suites.iter().map(|s| (s.name.clone(), s.status)).collect();
    let named = |member: &str| format!("{}{member}", root.display());
    assert_eq!(suites, [(named(""), SuiteStatus::Passed), (named("/packages/m1"), SuiteStatus::Failed)]);
    for (suite, native) in run.suites.iter().zip([&root_only, &member]) {
        assert_eq!((suite.counts.passed, suite.counts.failed, suite.counts.skipped), js_totals(native), "{native}");
    }
    let note = phase(&run.suites[0], fcorr::model::PhaseKind::Test).note.clone().unwrap_or_default();
    assert!(note.contains("`npm test --workspaces --if-present` runs the workspace members' tests"), "{note}");
    assert_eq!(
        left_out(&run, &root),
        [("packages/quiet".to_string(), "its test script runs no tests: `echo no tests && exit 0`".to_string())]
    );
}

/// `npm test -w packages/quiet` selects one member: the one it does not select is named as
/// filtered out, not run as a suite (npm's own run passes).
#[test]
fn a_workspace_fan_out_filter_leaves_the_members_it_excludes_named() {
    let dir = tempfile::tempdir().unwrap();
    let script = "node --test test/ && npm test -w packages/quiet";
    let (run, code) = run_copy(dir.path(), "js-npm-root-fans-out", |root| {
        let manifest = root.join("package.json");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, text.replace("node --test test/ && npm test --workspaces --if-present", script))
            .unwrap();
        let (output, code) = native(root, "npm", &["test"]);
        assert_eq!(code, 0, "{output}");
    });
    let root = dir.path().join("js-npm-root-fans-out");
    assert_eq!(code, 0, "{run:#?}");
    let names: Vec<&str> = run.suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [root.display().to_string()]);
    assert_eq!(
        left_out(&run, &root),
        [
            ("packages/m1".to_string(), "filtered out by the root's test script (`npm test -w packages/quiet`)".into()),
            ("packages/quiet".to_string(), "its test script runs no tests: `echo no tests && exit 0`".to_string()),
        ]
    );
}

/// The root's `node --test test/ packages/covered/test/` runs its own tests and one member's;
/// the other member's own (failing) test script is what `npm test -ws` runs. fcorr runs what
/// the root's script runs and names the member whose tests it did not collect.
#[test]
fn a_workspace_member_the_root_framework_does_not_collect_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let fixture_dir = fixture("js-npm-root-only");
    let (output, code) = native(&fixture_dir, "npm", &["test"]);
    assert_eq!(code, 0, "{output}");
    let (run, code) = run_copy(dir.path(), "js-npm-root-only", |_| {});
    assert_eq!(code, 0, "{run:#?}");
    let suite = &run.suites[0];
    assert_eq!((suite.counts.passed, suite.counts.failed, suite.counts.skipped), js_totals(&output));
    assert_eq!(
        left_out(&run, &dir.path().join("js-npm-root-only")),
        [("packages/m1".to_string(), "its own test script; the root's node --test did not collect it".to_string())]
    );
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(summary.contains("packages/m1"), "{summary}");
}

/// A member run on its own (`fcorr run packages/strings`, and as the `[[suite]]` the docs
/// suggest for a member's own policy): jest is declared only at the workspace root, which is
/// found above the member and installed. Before, it was "no test framework found".
#[test]
fn a_workspace_member_run_on_its_own_uses_its_workspace_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    copy_project(&fixture("js-npm-workspaces"), &root);
    let out = dir.path().join("out");
    let output =
        fcorr().current_dir(&root).args(["run", "packages/strings", "--json", "--out"]).arg(&out).output().unwrap();
    let (run, code) = parse_run(&output);
    assert_eq!(code, 0, "{run:#?}");
    let suite = &run.suites[0];
    let markers = &suite.detection.as_ref().unwrap().markers;
    assert!(markers.iter().any(|m| m.starts_with("member of the workspace at ")), "{markers:?}");
    let (native_output, _) = native(&root.join("packages/strings"), "npx", &["--no-install", "jest", "--ci"]);
    assert_eq!((suite.counts.passed, suite.counts.failed, suite.counts.skipped), js_totals(&native_output));

    // The member as a `[[suite]]` of its own next to the workspace's: run once, with its policy.
    let config = "[run]\njobs = 1\n\n[[suite]]\nname = \"ws\"\npath = \".\"\n\n[[suite]]\nname = \"strings\"\n\
                  path = \"packages/strings\"\npolicy = \"pass-rate\"\nmin-score = 50\n";
    std::fs::write(root.join("fcorr.toml"), config).unwrap();
    let output = fcorr().current_dir(&root).args(["run", "--json", "--out"]).arg(&out).output().unwrap();
    let (run, code) = parse_run(&output);
    assert_eq!(code, 1, "the other member's failing test fails the run");
    let suites: Vec<(&str, SuiteStatus)> = run.suites.iter().map(|s| (s.name.as_str(), s.status)).collect();
    assert_eq!(suites, [("ws/packages/numbers", SuiteStatus::Failed), ("strings", SuiteStatus::Passed)]);
    assert_eq!(run.suites[1].counts.passed, suite.counts.passed);
}
