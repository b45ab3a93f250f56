//! Bad input and missing tools: each becomes a clear suite error with the right exit code
//! (2 for input the user must fix, 3 for a missing tool), and other suites still run and score.

use std::path::Path;
use std::process::Command;

use fcorr::model::{Run, RunOutcome, SuiteErrorKind, SuiteStatus};

use crate::support::*;

fn fcorr_run(out: &Path) -> Command {
    let mut cmd = fcorr();
    cmd.arg("run").arg("--out").arg(out).arg("--json");
    cmd
}

fn finish(cmd: &mut Command) -> (Run, i32) {
    parse_run(&cmd.output().unwrap())
}

#[test]
fn a_nonexistent_path_is_an_input_error() {
    let out = tempfile::tempdir().unwrap();
    let (run, code) = finish(fcorr_run(out.path()).arg("/nonexistent/fcorr-project"));
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Error);
    let error = suite.error.as_ref().unwrap();
    assert_eq!(error.kind, SuiteErrorKind::Input);
    assert!(error.message.contains("/nonexistent/fcorr-project") && error.message.contains("no such directory"));
    assert_eq!(suite.score.value, 0.0);
    assert_eq!((run.verdict.outcome, code), (RunOutcome::UsageError, 2));
}

#[test]
fn a_directory_with_nothing_detectable_is_an_input_error() {
    let out = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("README.md"), "# notes\n").unwrap();
    let (run, code) = finish(fcorr_run(out.path()).arg(project.path()));
    let error = run.suites[0].error.as_ref().unwrap();
    assert_eq!(error.kind, SuiteErrorKind::Input);
    assert!(error.message.contains("no project detected"), "{}", error.message);
    assert!(error.message.contains("pyproject.toml"), "says what it looked for: {}", error.message);
    assert_eq!(code, 2);
}

#[test]
fn a_malformed_pyproject_names_file_line_and_column() {
    let out = tempfile::tempdir().unwrap();
    let (run, code) = finish(fcorr_run(out.path()).arg(fixture("py-bad-pyproject")));
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Error);
    let error = suite.error.as_ref().unwrap();
    assert_eq!(error.kind, SuiteErrorKind::Input);
    // The same position pytest and pip report for this file (expected.json's native_summary).
    assert!(error.message.contains("pyproject.toml: line 3, column 17"), "{}", error.message);
    assert!(suite.phases.is_empty(), "nothing runs on a manifest nobody can read: {:?}", suite.phases);
    assert_eq!(code, 2);

    let detect = fcorr().arg("detect").arg(fixture("py-bad-pyproject")).output().unwrap();
    let text = String::from_utf8_lossy(&detect.stdout);
    assert!(text.contains("problem: malformed pyproject.toml"), "{text}");
}

#[test]
fn one_bad_suite_does_not_stop_the_others() {
    let out = tempfile::tempdir().unwrap();
    let (run, code) = finish(fcorr_run(out.path()).arg(fixture("go-panic")).arg("/nonexistent/fcorr-project"));
    assert_eq!(run.suites.len(), 2);
    let good = &run.suites[0];
    assert_eq!(good.status, SuiteStatus::Failed);
    assert!(good.counts.total > 0);
    assert!(good.score.components.iter().any(|c| c.name == "tests"), "scored: {:?}", good.score);
    assert_eq!(run.suites[1].error.as_ref().unwrap().kind, SuiteErrorKind::Input);
    assert_eq!(run.totals.total, good.counts.total);
    assert!(run.verdict.reasons.iter().any(|r| r.gate == "strict"), "the good suite is still judged");
    assert_eq!(code, 2);
}

#[test]
fn a_missing_test_command_is_a_missing_tool_not_a_test_failure() {
    let out = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let config = project.path().join("fcorr.toml");
    std::fs::write(
        &config,
        "[[suite]]\nname = \"missing\"\npath = \".\"\nrunner = \"command\"\ncommands = { test = \"fcorr-no-such-tool --all\" }\n",
    )
    .unwrap();
    let (run, code) = finish(fcorr_run(out.path()).arg("--config").arg(&config));
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Error);
    let error = suite.error.as_ref().unwrap();
    assert_eq!(error.kind, SuiteErrorKind::ToolMissing, "{error:?}");
    assert!(error.message.contains("fcorr-no-such-tool") && error.message.contains("not found"), "{}", error.message);
    assert!(error.hint.is_some());
    assert_eq!((run.verdict.outcome, code), (RunOutcome::HarnessError, 3));
}

#[test]
fn a_missing_toolchain_is_reported_with_its_name() {
    let out = tempfile::tempdir().unwrap();
    let empty_path = tempfile::tempdir().unwrap();
    let (run, code) = finish(fcorr_run(out.path()).arg(fixture("go-build-error")).env("PATH", empty_path.path()));
    let error = run.suites[0].error.as_ref().unwrap();
    assert_eq!(error.kind, SuiteErrorKind::ToolMissing);
    assert!(error.message.contains("`go` was not found on PATH"), "{}", error.message);
    assert_eq!(code, 3);
}

#[test]
fn an_unreadable_project_says_permission_denied() {
    // Run as `nobody` when the tests run as root (root reads any directory); as is otherwise.
    let root = unsafe { libc::geteuid() } == 0;
    if root && std::process::Command::new("setpriv").arg("--version").output().is_err() {
        panic!("running as root needs `setpriv` (util-linux) to drop to nobody");
    }
    let base = tempfile::tempdir().unwrap();
    let project = base.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    let out = base.path().join("out");
    std::fs::create_dir(&out).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o000)).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("fcorr");
    let mut cmd = if root {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(binary);
        cmd
    } else {
        Command::new(binary)
    };
    cmd.current_dir(&out).env("FCORR_CACHE_DIR", out.join("cache")).env("HOME", &out);
    let output = cmd.arg("run").arg(&project).arg("--out").arg(&out).arg("--json").output().unwrap();
    std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (run, _) = parse_run(&output);
    let error = run.suites[0].error.as_ref().unwrap();
    assert!(error.message.contains("Permission denied"), "{}", error.message);
    assert!(!error.message.contains("markers"), "{}", error.message);
}
