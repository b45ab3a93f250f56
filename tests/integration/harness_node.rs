//! The node runner against real JavaScript/TypeScript fixtures: real npm, jest, vitest, mocha and
//! `node --test`. Expected counts and statuses come from each fixture's `expected.json`.

use std::path::Path;

use fcorr::model::{PhaseKind, PhaseStatus, Run, Suite, SuiteErrorKind, SuiteStatus};
use serde_json::Value;

use crate::support::*;

/// Runs `fcorr run PATHS --json` with installs enabled; returns the exit code and the run.
fn fcorr_run(paths: &[&Path], out: &Path) -> (i32, Run) {
    let output = fcorr().arg("run").args(paths).arg("--out").arg(out).arg("--json").output().unwrap();
    let (run, code) = parse_run(&output);
    (code, run)
}

/// Case statuses and counts equal the fixture's `expected.json`.
fn assert_matches_expected(suite: &Suite, expected: &Value) {
    crate::support::assert_matches_expected(suite, expected, |c| c.name.clone().into());
}

/// Checks a run of one failing fixture: statuses, counts, exit code, report format.
fn check_failing_fixture(name: &str, format: &str) -> Suite {
    let out = tempfile::tempdir().unwrap();
    let (code, run) = fcorr_run(&[&fixture(name)], out.path());
    let suite = run.suites.into_iter().next().unwrap();
    assert_matches_expected(&suite, &expected(name));
    assert_eq!(suite.status, SuiteStatus::Failed, "{:#?}", suite.error);
    assert_eq!(code, 1, "a failing suite fails the strict gate");
    match &suite.results_source {
        fcorr::model::ResultsSource::Report { format: f, .. } => assert_eq!(f, format),
        other => panic!("results came from {other:?}"),
    }
    let test = phase(&suite, PhaseKind::Test);
    assert_eq!(test.exit_code, expected(name)["native_exit_code"].as_i64().map(|c| c as i32));
    suite
}

#[test]
fn jest_fixture_matches_expected() {
    let suite = check_failing_fixture("js-jest", "jest-json");
    let failed = suite.failures().next().unwrap();
    assert_eq!(failed.file.as_deref(), Some("src/cart.test.js"));
    assert_eq!(failed.classname.as_deref(), Some("cart > applyDiscount"));
    assert!(failed.message().unwrap().contains("expect(received).toBe(expected)"));
    // The line jest printed for the failure (`at Object.toBe (src/cart.test.js:21:39)`), not the
    // line of its `test(…)` call.
    let printed = printed_locations(&suite, r"at \S+ \((\S+\.test\.js):(\d+):\d+\)");
    assert_located_as_printed(failed, &printed);
    assert_eq!(failed.line, Some(line_of("js-jest", "src/cart.test.js", "applyDiscount(9.99")));
    assert!(phase(&suite, PhaseKind::Test).command.contains("--json"));
}

#[test]
fn vitest_fixture_matches_expected() {
    let suite = check_failing_fixture("js-vitest", "jest-json");
    let failed = suite.failures().next().unwrap();
    assert_eq!(failed.file.as_deref(), Some("src/slug.test.js"));
    assert!(failed.message().unwrap().contains("crème-brûlée"), "{:?}", failed.message());
    // The line vitest printed for the failure (`❯ src/slug.test.js:15:37`).
    let printed = printed_locations(&suite, r"❯ (\S+\.test\.js):(\d+):\d+");
    assert_located_as_printed(failed, &printed);
}

#[test]
fn node_test_fixture_matches_expected() {
    let suite = check_failing_fixture("js-node-test", "node-junit");
    assert_eq!(phase(&suite, PhaseKind::Install).status, PhaseStatus::Skipped);
    let failed = suite.failures().next().unwrap();
    assert_eq!(failed.message(), Some("expected 100F to be 37.8C"));
    // node's JUnit has no file or line; fcorr's locations reporter adds them for every case:
    // the definition, or for a failure the line that threw (the assertion on line 23).
    assert_eq!((failed.file.as_deref(), failed.line), (Some("test/temperature.test.js"), Some(23)));
    let top = suite.cases.iter().find(|c| c.name == "module exports two functions").unwrap();
    assert_eq!((top.file.as_deref(), top.line), (Some("test/temperature.test.js"), Some(32)));
    assert!(suite.cases.iter().all(|c| c.file.is_some()), "{:#?}", suite.cases);
}

/// `# tests N`, `# pass N`, `# fail N` from node's own summary of a real `node --test` run.
fn node_summary(dir: &Path) -> (u64, u64, u64) {
    let output = std::process::Command::new("node").arg("--test").current_dir(dir).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let count = |key: &str| {
        let line = text.lines().find(|l| l.starts_with(&format!("# {key} "))).unwrap_or_else(|| panic!("{text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    (count("tests"), count("pass"), count("fail"))
}

/// A `todo` test that throws fails nothing: `node --test` exits 0, and so do `fcorr run` and the
/// import of node's own JUnit report (read either as node's dialect or as plain JUnit).
#[test]
fn node_todo_tests_that_throw_are_not_failures() {
    let name = "js-node-todo";
    let dir = fixture(name);
    let native = std::process::Command::new("node").arg("--test").current_dir(&dir).output().unwrap();
    assert_eq!(native.status.code(), Some(0));
    let (tests, pass, fail) = node_summary(&dir);
    assert_eq!((tests, pass, fail), (7, 2, 0));

    let out = tempfile::tempdir().unwrap();
    let (code, run) = fcorr_run(&[&dir], &out.path().join("run"));
    let suite = &run.suites[0];
    assert_matches_expected(suite, &expected(name));
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{:#?}", suite.error);
    let todo = suite.cases.iter().find(|c| c.name == "applies coupons").unwrap();
    assert_eq!(todo.message(), Some("todo: coupons are not written yet"));

    // node's JUnit report, written by node itself, then imported.
    let report = out.path().join("node.xml");
    let destination = format!("--test-reporter-destination={}", report.display());
    let status = std::process::Command::new("node")
        .args(["--test", "--test-reporter=junit", &destination])
        .current_dir(&dir)
        .status();
    assert_eq!(status.unwrap().code(), Some(0));
    for format in [None, Some("node-junit")] {
        let mut cmd = fcorr();
        cmd.arg("import").arg(&report).arg("--json").arg("--out").arg(out.path().join("import"));
        if let Some(format) = format {
            cmd.args(["--format-in", format]);
        }
        let (run, code) = parse_run(&cmd.output().unwrap());
        let counts = run.suites[0].counts;
        assert_eq!((code, counts.total, counts.failed, counts.skipped), (0, tests, 0, 5), "{format:?}: {counts:?}");
    }
}

#[test]
fn node_parent_tests_count_as_node_counts_them_and_their_own_failure_shows() {
    let name = "js-node-parent";
    let suite = check_failing_fixture(name, "node-junit");
    let (tests, pass, fail) = node_summary(&fixture(name));
    assert_eq!((suite.counts.total, suite.counts.passed, suite.counts.failed), (tests, pass, fail));
    // The parent's own assertion, after both subtests passed: message, file and the line that threw.
    let parent = suite.cases.iter().find(|c| c.name == "totals").unwrap();
    assert_eq!(parent.message(), Some("the grand total is wrong"));
    assert_eq!((parent.file.as_deref(), parent.line), (Some("test/parent.test.js"), Some(17)));
    assert!(suite.error.is_none(), "a failed case explains the exit code: {:?}", suite.error);
}

/// A describe's own hook that throws: node's JUnit report drops it, so the `before` hook's error
/// was nowhere (its test only "cancelled", the message cut mid-object) and an `after` hook's left
/// "exited with code 1 but every reported test passed". Each is an error case naming the hook and
/// quoting its error.
#[test]
fn a_describe_whose_hook_throws_is_an_error_case_naming_the_hook_and_its_error() {
    let name = "js-node-hooks";
    let suite = check_failing_fixture(name, "node-junit");
    let message = |case: &str| suite.cases.iter().find(|c| c.name == case).unwrap().message().unwrap().to_string();
    assert_eq!(
        message("db suite > [before hook]"),
        "`db suite` failed running before hook: Error: cannot connect to db"
    );
    assert_eq!(
        message("cleanup suite > [after hook]"),
        "`cleanup suite` failed running after hook: Error: teardown failed"
    );
    assert_eq!(
        message("db suite > query works"),
        "test did not finish before its parent and was cancelled: `db suite` failed running before hook: Error: cannot \
         connect to db"
    );
    let hook = suite.cases.iter().find(|c| c.name == "db suite > [before hook]").unwrap();
    assert_eq!((hook.file.as_deref(), hook.line), (Some("test/before.test.js"), Some(4)));

    // The after hook alone: every test passed, node exits 1; the hook is why.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(name);
    copy_project(&fixture(name), &project);
    std::fs::remove_file(project.join("test/before.test.js")).unwrap();
    let (code, run) = fcorr_run(&[&project], &dir.path().join("out"));
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1), "{:#?}", suite.error);
    assert!(suite.error.is_none(), "the hook's case explains the exit code: {:?}", suite.error);
    let names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["cleanup suite > fine", "cleanup suite > [after hook]"]);
}

/// A test named with an unpaired UTF-16 surrogate (JSON.stringify writes `\ud800`, which
/// serde_json refuses) costs neither fixture its report: both cases as the tool counts them, the
/// real failure among them, the lossy name said in a warning.
#[test]
fn a_lone_surrogate_in_a_test_name_keeps_the_mocha_and_jest_reports() {
    for (name, format) in [("js-mocha-surrogate", "mocha-json"), ("js-jest-surrogate", "jest-json")] {
        let suite = check_failing_fixture(name, format);
        let failed = suite.failures().next().unwrap();
        assert_eq!(failed.name, "names > fails for real", "{name}");
        assert!(
            suite.diagnostics.iter().any(|d| d.message.contains("unpaired UTF-16 surrogate")),
            "{name}: {:#?}",
            suite.diagnostics
        );
    }
}

#[test]
fn mocha_installs_with_npm_ci_then_skips_install_when_up_to_date() {
    // A copy without node_modules, so the first run really installs from the lockfile.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("js-mocha");
    copy_project(&fixture("js-mocha"), &project);
    let expected = expected("js-mocha");

    let (code, run) = fcorr_run(&[&project], &dir.path().join("out1"));
    let suite = &run.suites[0];
    let install = phase(suite, PhaseKind::Install);
    assert!(install.command.starts_with("npm ci"), "{}", install.command);
    assert_eq!(install.status, PhaseStatus::Passed, "{}", install.log_tail);
    assert_matches_expected(suite, &expected);
    assert_eq!(code, 1);
    assert!(
        matches!(&suite.results_source, fcorr::model::ResultsSource::Report { format, .. } if format == "mocha-json")
    );
    let failed = suite.failures().next().unwrap();
    assert_eq!((failed.file.as_deref(), failed.line), (Some("test/queue.test.js"), Some(31)));

    let (_, again) = fcorr_run(&[&project], &dir.path().join("out2"));
    let suite = &again.suites[0];
    let install = phase(suite, PhaseKind::Install);
    assert_eq!(install.status, PhaseStatus::Skipped);
    assert!(install.note.as_deref().unwrap().contains("up to date"), "{:?}", install.note);
    assert_matches_expected(suite, &expected);
    // Same tests, same ids on a second run.
    let ids = |r: &Run| r.suites[0].cases.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&run), ids(&again));
}

#[test]
fn typescript_build_failure_is_build_failed_with_a_diagnostic() {
    let name = "js-ts-build-fail";
    let out = tempfile::tempdir().unwrap();
    let (code, run) = fcorr_run(&[&fixture(name)], out.path());
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::BuildFailed, "{:#?}", suite.phases);
    assert_eq!(code, 1);
    let build = phase(suite, PhaseKind::Build);
    assert_eq!(build.status, PhaseStatus::Failed);
    assert_eq!(build.exit_code, expected(name)["native_exit_code"].as_i64().map(|c| c as i32));
    assert_eq!(phase(suite, PhaseKind::Test).status, PhaseStatus::Skipped);
    assert!(suite.cases.is_empty());
    // The summary line of expected.json is tsc's diagnostic: `file(line,col): error TSxxxx: msg`.
    let summary = expected(name)["native_summary"].as_str().unwrap().to_string();
    let (file, rest) = summary.split_once('(').unwrap();
    let line: u32 = rest.split(',').next().unwrap().parse().unwrap();
    let diagnostic = suite.diagnostics.iter().find(|d| d.file.as_deref() == Some(file)).expect("a diagnostic");
    assert_eq!(diagnostic.line, Some(line));
    assert!(diagnostic.message.contains("TS2322"), "{}", diagnostic.message);
}

/// A package.json that starts with a UTF-8 byte-order mark (Windows editors write one) runs as
/// npm runs it (`npm test`: `# pass 1`), not refused at line 1, column 1.
#[test]
fn package_json_with_a_byte_order_mark_runs_as_npm_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("bom");
    std::fs::create_dir_all(project.join("test")).unwrap();
    std::fs::write(project.join("package.json"), "\u{feff}{\"name\":\"bom\",\"scripts\":{\"test\":\"node --test\"}}")
        .unwrap();
    std::fs::write(
        project.join("test/ok.test.js"),
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         test('adds', () => assert.strictEqual(1 + 1, 2));\n",
    )
    .unwrap();
    let (code, run) = fcorr_run(&[&project], &dir.path().join("out"));
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Passed, "{:#?}", suite.error);
    assert_eq!((suite.counts.passed, suite.counts.total, code), (1, 1, 0));
}

#[test]
fn bad_package_json_is_an_error_and_another_suite_still_passes() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    std::fs::create_dir_all(good.join("test")).unwrap();
    std::fs::write(good.join("package.json"), r#"{"name":"good","scripts":{"test":"node --test"}}"#).unwrap();
    std::fs::write(
        good.join("test/ok.test.js"),
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         test('adds', () => assert.strictEqual(1 + 1, 2));\n",
    )
    .unwrap();
    let (code, run) = fcorr_run(&[&fixture("js-bad-package-json"), &good], &dir.path().join("out"));
    assert_ne!(code, 0);
    let bad = &run.suites[0];
    assert_eq!(bad.status, SuiteStatus::Error);
    let error = bad.error.as_ref().unwrap();
    assert_eq!(error.kind, SuiteErrorKind::Input);
    assert!(error.message.contains("js-bad-package-json/package.json"), "{}", error.message);
    // serde_json locates the trailing comma's error at the closing brace on line 10.
    assert!(error.message.contains("line 10, column 3"), "{}", error.message);
    assert!(bad.phases.is_empty(), "nothing runs for a malformed manifest");
    let good = &run.suites[1];
    assert_eq!(good.status, SuiteStatus::Passed, "{:#?}", good);
    assert_eq!((good.counts.passed, good.counts.total), (1, 1));
    assert_eq!(good.score.value, 100.0);
}

#[test]
fn detect_json_lists_markers_confidence_and_package_manager() {
    let cases = [
        ("js-jest", "jest", "JavaScript"),
        ("js-vitest", "vitest", "JavaScript"),
        ("js-mocha", "mocha", "JavaScript"),
        ("js-node-test", "node --test", "JavaScript"),
        ("js-ts-build-fail", "node --test", "TypeScript"),
    ];
    for (name, framework, language) in cases {
        let output = fcorr_bin().arg("detect").arg(fixture(name)).arg("--json").output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{name}");
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        let best = &json["best"];
        assert_eq!(best["ecosystem"], "node", "{name}");
        assert_eq!(best["framework"], framework, "{name}");
        assert_eq!(best["language"], language, "{name}");
        assert_eq!(best["package_manager"], "npm", "{name}");
        assert!(best["confidence"].as_f64().unwrap() >= 0.9, "{name}: {best}");
        let markers: Vec<&str> = best["markers"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        assert!(markers.contains(&"package.json") && markers.contains(&"package-lock.json"), "{name}: {markers:?}");
        assert!(markers.iter().any(|m| m.starts_with("scripts.test")), "{name}: {markers:?}");
        assert!(json["problem"].is_null(), "{name}");
    }
    let output = fcorr_bin().arg("detect").arg(fixture("js-bad-package-json")).arg("--json").output().unwrap();
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(json["problem"].as_str().unwrap().contains("line 10"), "{json}");
    let text = fcorr_bin().arg("detect").arg(fixture("js-jest")).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("JavaScript / jest") && text.contains("package manager: npm"), "{text}");
}

/// A package manager from the npm registry (`pnpm@9.15.9`, `yarn@1.22.22`), installed once under
/// target/: it is on neither this machine's PATH nor a CI runner's without a setup action.
/// Returns its bin directory.
fn tool_bin(name: &str, package: &str) -> std::path::PathBuf {
    // One directory per package and version: two versions of one tool may be wanted.
    let prefix = repo().join("target/fcorr-test-tools").join(package);
    let bin = prefix.join("node_modules/.bin");
    if !bin.join(name).exists() {
        std::fs::create_dir_all(&prefix).unwrap();
        let status = std::process::Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
            .arg(&prefix)
            .arg(package)
            .status()
            .unwrap();
        assert!(status.success(), "npm install {package} failed");
    }
    bin
}

/// `fcorr run --json` on a copy of a fixture holding only a manifest and a lockfile, with
/// js-jest's sources copied in, `PATH` and `env` set.
fn jest_sources_in(fixture_name: &str, path: std::ffi::OsString, env: &[(&str, &str)]) -> (i32, Run) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(fixture_name);
    copy_project(&fixture(fixture_name), &project);
    copy_project(&fixture("js-jest").join("src"), &project.join("src"));
    let output = fcorr()
        .arg("run")
        .arg(&project)
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--json")
        .env("PATH", path)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let (run, code) = parse_run(&output);
    (code, run)
}

/// `fcorr run` on a fixture holding only a manifest and a lockfile, with js-jest's sources
/// copied in and the package manager `name` first on PATH; the install must use it.
fn jest_with_package_manager(fixture_name: &str, name: &str, package: &str, install: &str) {
    let bin = tool_bin(name, package);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path))).unwrap();
    let (code, run) = jest_sources_in(fixture_name, path, &[]);
    let suite = &run.suites[0];
    assert_eq!(suite.detection.as_ref().unwrap().package_manager.as_deref(), Some(name));
    let phase = phase(suite, PhaseKind::Install);
    assert!(phase.command.starts_with(install), "{}", phase.command);
    assert_eq!(phase.status, PhaseStatus::Passed, "{}", phase.log_tail);
    assert_matches_expected(suite, &expected(fixture_name));
    assert_eq!(code, 1);
}

#[test]
fn pnpm_project_installs_with_pnpm_and_matches_jest() {
    jest_with_package_manager("js-pnpm", "pnpm", "pnpm@9.15.9", "pnpm install --frozen-lockfile");
}

#[test]
fn yarn_project_installs_with_yarn_and_matches_jest() {
    jest_with_package_manager("js-yarn", "yarn", "yarn@1.22.22", "yarn install --frozen-lockfile");
}

#[test]
fn and_test_script_keeps_vitest_typecheck_and_names_the_skipped_lint_step() {
    // `pnpm lint && vitest run --typecheck`: without `--typecheck` the type tests vanish and the
    // suite passes falsely (3 passed); the native run has 6 tests, one failing type test.
    let suite = check_failing_fixture("js-vitest-typecheck", "jest-json");
    let test = phase(&suite, PhaseKind::Test);
    assert!(test.command.contains("--typecheck"), "{}", test.command);
    let note = test.note.as_deref().unwrap_or_default();
    assert!(note.contains("skipped script step(s) `node scripts/lint.mjs`"), "{note}");
    assert!(note.contains("run-script-steps = true"), "{note}");
}

#[test]
fn run_script_steps_runs_the_lint_step_as_build_work() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("app");
    copy_project(&fixture("js-vitest-typecheck"), &project);
    std::fs::write(project.join("src/debug.ts"), "export function halt() {\n  debugger;\n}\n").unwrap();
    let config = dir.path().join("fcorr.toml");
    std::fs::write(&config, "[[suite]]\npath = \"app\"\nrun-script-steps = true\n").unwrap();
    let output = fcorr()
        .arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--json")
        .output()
        .unwrap();
    let (run, code) = parse_run(&output);
    let suite = &run.suites[0];
    let build = phase(suite, PhaseKind::Build);
    assert_eq!(build.command, "node scripts/lint.mjs", "{:#?}", suite.phases);
    assert_eq!(build.status, PhaseStatus::Failed, "{}", build.log_tail);
    assert!(build.log_tail.contains("lint: debugger statement in debug.ts"), "{}", build.log_tail);
    assert_eq!(suite.status, SuiteStatus::BuildFailed);
    assert_eq!(phase(suite, PhaseKind::Test).status, PhaseStatus::Skipped);
    assert_eq!(code, 1);
}

#[test]
fn a_script_running_jest_twice_gives_two_case_groups() {
    // `jest && jest --env ...`: the second run fails where the first passes; running jest once
    // would be a false pass.
    let suite = check_failing_fixture("js-jest-twice", "jest-json");
    let test = phase(&suite, PhaseKind::Test);
    assert_eq!(test.command.matches("npx --no-install jest").count(), 2, "{}", test.command);
    assert!(test.command.contains("--env ./edge-environment.cjs"), "{}", test.command);
    assert!(test.note.as_deref().unwrap_or_default().contains("runs jest 2 times"), "{:?}", test.note);
    let failed = suite.failures().next().unwrap();
    assert_eq!(failed.file.as_deref(), Some("src/encode.test.js"));
    assert!(failed.message().unwrap_or_default().contains("Buffer is not defined"), "{:?}", failed.message());
    // Same test in two runs: two ids.
    let ids: std::collections::BTreeSet<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 6);
}

/// `fcorr run` on a copy of a fixture without its node_modules: a fresh checkout.
fn run_fresh_copy(name: &str) -> (i32, Run) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(name);
    copy_project(&fixture(name), &project);
    fcorr_run(&[&project], &dir.path().join("out"))
}

#[test]
fn vitest_failure_on_a_fresh_checkout_has_its_line() {
    // No node_modules yet: the vitest version (and so `--includeTaskLocation`) is only known
    // after the install phase. Before the fix, the first run had no line and a rerun had one.
    let (code, run) = run_fresh_copy("js-vitest");
    let suite = &run.suites[0];
    assert_eq!(phase(suite, PhaseKind::Install).status, PhaseStatus::Passed, "{:#?}", suite.phases);
    assert_matches_expected(suite, &expected("js-vitest"));
    assert_eq!(code, 1);
    let failed = suite.failures().next().unwrap();
    // expected.json: the failure is at src/slug.test.js:15:37; the location is the test's line.
    assert_eq!(failed.file.as_deref(), Some("src/slug.test.js"));
    assert!(failed.line.is_some(), "{failed:#?}");
    assert!(phase(suite, PhaseKind::Test).command.contains("--includeTaskLocation"));
}

/// Every test passes and the tool exits 1 on its coverage threshold: the suite's error says so
/// and quotes the tool's threshold line.
fn check_coverage_threshold_fixture(name: &str, threshold_line: &str) {
    let out = tempfile::tempdir().unwrap();
    let (code, run) = fcorr_run(&[&fixture(name)], out.path());
    let suite = &run.suites[0];
    assert_matches_expected(suite, &expected(name));
    assert_eq!(phase(suite, PhaseKind::Test).exit_code, Some(1));
    assert_eq!(suite.status, SuiteStatus::Error);
    let message = &suite.error.as_ref().unwrap().message;
    assert!(message.starts_with("coverage threshold not met"), "{message}");
    assert!(message.contains(threshold_line), "{message}");
    assert_ne!(code, 0);
}

#[test]
fn a_coverage_threshold_failure_is_named_with_its_threshold_line() {
    check_coverage_threshold_fixture(
        "js-jest-coverage",
        r#"Jest: "global" coverage threshold for lines (90%) not met: 54.54%"#,
    );
}

#[test]
fn a_vitest_coverage_threshold_failure_is_named_with_its_threshold_line() {
    // Before, "the test command exited with code 1 but every reported test passed: results are
    // incomplete".
    check_coverage_threshold_fixture(
        "js-vitest-coverage",
        "Coverage for lines (40%) does not meet global threshold (90%)",
    );
}

/// `fcorr run` on a fixture whose suite fails (exit 1), its test phase exiting as the native tool did.
fn failing_run(name: &str) -> Run {
    let out = tempfile::tempdir().unwrap();
    let (code, run) = fcorr_run(&[&fixture(name)], out.path());
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1), "{suite:#?}");
    let native = expected(name)["native_exit_code"].as_i64().map(|c| c as i32);
    assert_eq!(phase(suite, PhaseKind::Test).exit_code, native);
    run
}

/// Every test passes and a timer one of them left throws afterwards: vitest fails the run on its
/// "Unhandled Errors". The suite fails on an error case quoting vitest (the error, where it was
/// thrown, the test file and latest test); before, only "exited with code 1 but every reported
/// test passed".
#[test]
fn a_vitest_unhandled_error_is_an_error_case_quoting_vitest() {
    let want = expected("js-vitest-unhandled");
    let run = failing_run("js-vitest-unhandled");
    let suite = &run.suites[0];
    assert_eq!(suite.error, None);
    let (errors, tests): (Vec<_>, Vec<_>) =
        suite.cases.iter().partition(|c| c.status == fcorr::model::CaseStatus::Error);
    let tests: Vec<(&str, fcorr::model::CaseStatus)> = tests.iter().map(|c| (c.name.as_str(), c.status)).collect();
    let wanted: Vec<(&str, fcorr::model::CaseStatus)> = want["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), status_of(c["status"].as_str().unwrap())))
        .collect();
    assert_eq!(tests, wanted);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let error = errors[0];
    assert_eq!(
        (error.name.as_str(), error.classname.as_deref(), error.file.as_deref(), error.line),
        ("[unhandled error]", Some("src/timer.test.js"), Some("src/timer.test.js"), Some(6))
    );
    assert_eq!(
        error.message(),
        Some(
            "Vitest caught 1 unhandled error during the test run: Uncaught Exception `Error: unhandled after test` at \
             src/timer.test.js:6; it originated in test file src/timer.test.js, the latest test before it was \"slow \
             ok\" (vitest: \"This might cause false positive tests\")"
        )
    );
    // vitest itself doubts the passes: the suite scores 0 and the verdict says why.
    assert_eq!(suite.score.value, 0.0);
    let reason = &run.verdict.reasons[0].message;
    assert!(reason.contains("`[unhandled error]` Vitest caught 1 unhandled error"), "{reason}");
}

/// vitest's globalSetup throws before any test file runs: vitest prints `No test files found`,
/// then the error under a lone `⎯⎯ Unhandled Error ⎯⎯` banner (no "Vitest caught …" section).
/// Before, the suite said only "the test tool collected no tests"; now it is an error case quoting
/// vitest: the error and where it was thrown.
#[test]
fn a_vitest_error_before_any_test_names_its_cause() {
    let run = failing_run("js-vitest-global-setup");
    let suite = &run.suites[0];
    let [error] = suite.cases.as_slice() else { panic!("one error case: {:#?}", suite.cases) };
    assert_eq!(
        (error.name.as_str(), error.status, error.file.as_deref(), error.line),
        ("[unhandled error]", fcorr::model::CaseStatus::Error, Some("test/global-setup.js"), Some(6))
    );
    assert_eq!(
        error.message(),
        Some(
            "vitest failed outside any test: Unhandled Error `Error: the test database is not reachable at \
             postgres://localhost:5433/app_test` at test/global-setup.js:6"
        )
    );
    let reason = &run.verdict.reasons[0].message;
    assert!(reason.contains("`[unhandled error]` vitest failed outside any test"), "{reason}");
}

#[test]
fn an_engines_range_npm_enforces_is_tool_missing_naming_required_and_found() {
    // Native `npm ci`: EBADENGINE, "Required: {"node":">=99"}" / "Actual: {"node":"v20..."}".
    // Before, the suite was "install failed" with the reason only in the log.
    let (code, run) = run_fresh_copy("js-engines");
    let suite = &run.suites[0];
    assert_eq!(phase(suite, PhaseKind::Install).status, PhaseStatus::Failed, "{:#?}", suite.phases);
    assert_eq!(suite.status, SuiteStatus::Error);
    let error = suite.error.as_ref().unwrap();
    assert_eq!(error.kind, SuiteErrorKind::ToolMissing, "{error:?}");
    let node = std::process::Command::new("node").arg("--version").output().unwrap();
    let node = String::from_utf8_lossy(&node.stdout).trim().to_string();
    assert_eq!(
        error.message,
        format!("install phase: the project requires node >=99 (package.json `engines`), found node {node}")
    );
    assert_eq!(code, 3);
}

#[test]
fn a_pinned_package_manager_missing_from_path_runs_through_corepack() {
    // js-pnpm pins `"packageManager": "pnpm@9.15.9"`; pnpm is not on this machine's PATH (nor a
    // fresh CI runner's), corepack ships with Node. Before, this was a tool-missing error.
    let scratch = tempfile::tempdir().unwrap();
    let path = path_without(&["pnpm", "pnpx"], scratch.path());
    // The registry mirror this suite may run behind serves metadata without npm's signatures,
    // which corepack would refuse; fcorr itself leaves verification on.
    let (code, run) = jest_sources_in("js-pnpm", path, &[("COREPACK_INTEGRITY_KEYS", "0")]);
    let suite = &run.suites[0];
    let markers = &suite.detection.as_ref().unwrap().markers;
    assert!(markers.iter().any(|m| m == "pnpm@9.15.9 through corepack (pnpm is not on PATH)"), "{markers:?}");
    let install = phase(suite, PhaseKind::Install);
    assert!(install.command.starts_with("corepack pnpm install --frozen-lockfile"), "{}", install.command);
    assert_eq!(install.status, PhaseStatus::Passed, "{}", install.log_tail);
    assert_matches_expected(suite, &expected("js-pnpm"));
    assert_eq!(code, 1);
}

#[test]
fn a_build_script_failing_without_file_and_line_shows_its_error_under_the_suite() {
    // Native `npm run build` prints "Error: config.json is missing" and exits 1. Before, the
    // terminal showed the suite as build-failed with nothing under it.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("app");
    std::fs::create_dir_all(project.join("test")).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "app", "private": true, "scripts": {"build": "node build.js", "pretest": "npm run build", "test": "node --test"}}"#,
    )
    .unwrap();
    std::fs::write(
        project.join("build.js"),
        "console.log('bundling...');\nconsole.error('Error: config.json is missing');\nprocess.exit(1);\n",
    )
    .unwrap();
    std::fs::write(project.join("test/a.test.js"), "require('node:test')('a', () => {});\n").unwrap();
    let output = fcorr()
        .arg("run")
        .arg(&project)
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--color")
        .arg("never")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(text.contains("/app\n  Error: config.json is missing\n"), "{text}");
    assert_eq!(output.status.code(), Some(1), "{text}");
}

/// A loopback TCP listener that counts the connections made to it and closes each at once: set
/// as npm's proxy, it sees every request npm sends to the registry and answers none.
struct CountingProxy {
    url: String,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl CountingProxy {
    fn start() -> CountingProxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = connections.clone();
        // The thread ends with the test process.
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(stream);
            }
        });
        CountingProxy { url, connections }
    }

    fn count(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// npm's settings that send every registry request through this proxy, once.
    fn npm_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("npm_config_proxy", self.url.clone()),
            ("npm_config_https_proxy", self.url.clone()),
            ("npm_config_noproxy", String::new()),
            ("npm_config_fetch_retries", "0".into()),
        ]
    }
}

#[test]
fn a_second_checkout_installs_from_the_warm_npm_cache_without_registry_requests() {
    // CI restores npm's cache (actions/cache) into a fresh checkout: fcorr's `npm ci
    // --prefer-offline` must then install from it without asking the registry. Without the flag,
    // npm 11 revalidates every package with the registry (6 requests for this fixture's 3).
    let name = "js-ts-build-fail";
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("npm-cache");
    let proxy = CountingProxy::start();
    let install = |copy: &str, offline: bool| {
        let project = dir.path().join(copy);
        copy_project(&fixture(name), &project);
        let mut cmd = fcorr();
        cmd.arg("run").arg(&project).arg("--out").arg(dir.path().join(format!("out-{copy}"))).arg("--json");
        cmd.env("npm_config_cache", &cache).env_remove("NO_PROXY").env_remove("no_proxy");
        if offline {
            cmd.envs(proxy.npm_env());
        }
        let (run, _) = parse_run(&cmd.output().unwrap());
        let install = phase(&run.suites[0], PhaseKind::Install).clone();
        assert_eq!(install.command, "npm ci --no-audit --no-fund --prefer-offline");
        assert_eq!(install.status, PhaseStatus::Passed, "{copy}: {}", install.log_tail);
    };
    // The first checkout fills the cache from the registry.
    install("first", false);
    assert!(cache.join("_cacache").is_dir(), "npm did not use {}", cache.display());
    // The second installs with every registry request going to the counting proxy.
    install("second", true);
    assert_eq!(proxy.count(), 0, "npm asked the registry although its cache held every package");

    // The proxy does see registry traffic: the same settings make `npm view` go through it.
    let view = std::process::Command::new("npm")
        .args(["view", "left-pad", "version"])
        .env("npm_config_cache", dir.path().join("cold-cache"))
        .envs(proxy.npm_env())
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .output()
        .unwrap();
    assert!(!view.status.success());
    assert!(proxy.count() > 0, "the proxy saw no request from `npm view`");
}

/// `fcorr detect --json` markers of js-pnpm (which pins `pnpm@9.15.9`) with `package` first on PATH.
fn js_pnpm_markers_with(package: &str) -> Vec<String> {
    let bin = tool_bin("pnpm", package);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path))).unwrap();
    let output = fcorr_bin().arg("detect").arg(fixture("js-pnpm")).arg("--json").env("PATH", path).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    json["best"]["markers"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_package_manager_on_path_other_than_the_pinned_version_is_named() {
    // Before, fcorr installed with whatever pnpm was on PATH and said nothing.
    let markers = js_pnpm_markers_with("pnpm@9.12.0");
    assert!(
        markers.iter().any(|m| m
            == "package.json pins pnpm@9.15.9 (packageManager) but the pnpm on PATH is 9.12.0: installing with \
                9.12.0; run `corepack enable pnpm` to use 9.15.9"),
        "{markers:?}"
    );
    // The pinned version on PATH: nothing to say.
    let markers = js_pnpm_markers_with("pnpm@9.15.9");
    assert!(!markers.iter().any(|m| m.contains("pins pnpm")), "{markers:?}");
}

#[test]
fn a_second_checkout_installs_from_the_warm_pnpm_store_without_registry_requests() {
    // pnpm's store is its cache: with the store kept between CI runs (actions/cache of
    // `pnpm store path`), fcorr's `pnpm install --frozen-lockfile --prefer-offline` in a fresh
    // checkout links every package from it and asks the registry nothing.
    let name = "js-pnpm";
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("pnpm-store");
    let proxy = CountingProxy::start();
    let bin = tool_bin("pnpm", "pnpm@9.15.9");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path))).unwrap();
    let install = |copy: &str, offline: bool| {
        let project = dir.path().join(copy);
        copy_project(&fixture(name), &project);
        let mut cmd = fcorr();
        cmd.arg("run").arg(&project).arg("--out").arg(dir.path().join(format!("out-{copy}"))).arg("--json");
        cmd.env("PATH", &path).env("npm_config_store_dir", &store).env_remove("NO_PROXY").env_remove("no_proxy");
        if offline {
            cmd.envs(proxy.npm_env());
        }
        let (run, _) = parse_run(&cmd.output().unwrap());
        let install = phase(&run.suites[0], PhaseKind::Install).clone();
        assert_eq!(install.command, "pnpm install --frozen-lockfile --prefer-offline");
        assert_eq!(install.status, PhaseStatus::Passed, "{copy}: {}", install.log_tail);
    };
    // The first checkout fills the store from the registry.
    install("first", false);
    assert!(store.is_dir(), "pnpm did not use {}", store.display());
    // The second installs with every registry request going to the counting proxy.
    install("second", true);
    assert_eq!(proxy.count(), 0, "pnpm asked the registry although its store held every package");

    // The proxy does see pnpm's registry traffic: the same install with a cold store goes through it.
    let cold = dir.path().join("cold");
    copy_project(&fixture(name), &cold);
    let output = std::process::Command::new("pnpm")
        .args(["install", "--frozen-lockfile", "--prefer-offline"])
        .current_dir(&cold)
        .env("PATH", &path)
        .env("npm_config_store_dir", dir.path().join("cold-store"))
        .envs(proxy.npm_env())
        // The proxy closes each connection unanswered, which pnpm waits out as a fetch timeout
        // (60 s by default): two seconds show the same refusal.
        .env("npm_config_fetch_timeout", "2000")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .output()
        .unwrap();
    assert!(!output.status.success(), "a cold store installed without the registry");
    assert!(proxy.count() > 0, "the proxy saw no request from pnpm");
}
