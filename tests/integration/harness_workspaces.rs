//! Repositories organised as workspaces and monorepos, run whole with no configuration: a cargo
//! workspace, nested Go modules, npm and pnpm workspaces, a uv workspace, Maven and Gradle
//! multi-module builds. Each test runs the native tool itself on the fixture and compares its own
//! summary with what fcorr reports; a part fcorr leaves out must be named in results.json.

use std::path::Path;
use std::process::Command;

use fcorr::model::{Phase, PhaseKind, PhaseStatus, Run, SuiteStatus};
use regex::Regex;

use crate::support::*;

/// Runs a native command in `dir`; its combined stdout and stderr, and its exit code.
pub(crate) fn native(dir: &Path, program: &str, args: &[&str]) -> (String, i32) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (text, out.status.code().unwrap_or(-1))
}

/// `fcorr run <fixture> --json`, keeping the output directory for the reports written there.
fn run_keeping(name: &str) -> (Run, i32, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = fcorr();
    cmd.arg("run").arg(fixture(name)).arg("--out").arg(out.path()).arg("--json");
    let (run, code) = parse_run(&cmd.output().unwrap());
    (run, code, out)
}

/// Every part the run left out is named, with its reason, in results.json, summary.md,
/// comment.md and report.html.
pub(crate) fn assert_left_out_in_every_report(run: &Run, out: &Path) {
    let left: Vec<&fcorr::model::LeftOut> = run.suites.iter().flat_map(|s| &s.left_out).collect();
    assert!(!left.is_empty());
    let results = std::fs::read_to_string(out.join("results.json")).unwrap();
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let comment = std::fs::read_to_string(out.join("comment.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for l in left {
        assert!(results.contains(&format!("\"path\": \"{}\"", l.path)), "results.json lacks {}", l.path);
        // Markdown escapes `_` in text; the path is a code span.
        let reason = |text: &str| text.replace('\\', "").contains(&l.reason);
        for (name, text) in [("summary.md", &summary), ("comment.md", &comment)] {
            let line = text.lines().find(|line| line.contains(&format!("`{}`", l.path)));
            assert!(line.is_some_and(reason), "{name} does not name {} with its reason:\n{text}", l.path);
        }
        let escape = |text: &str| {
            text.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('\'', "&#39;")
                .replace('"', "&quot;")
        };
        let item = format!("<code>{}</code>: {}", escape(&l.path), escape(&l.reason));
        assert!(html.contains(&item), "report.html lacks {item}");
    }
}

/// The (passed, failed, ignored) totals of every `test result:` line libtest printed.
fn libtest_totals(output: &str) -> (u64, u64, u64) {
    let line = Regex::new(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored").unwrap();
    line.captures_iter(output).fold((0, 0, 0), |(p, f, i), c| {
        (p + c[1].parse::<u64>().unwrap(), f + c[2].parse::<u64>().unwrap(), i + c[3].parse::<u64>().unwrap())
    })
}

/// fcorr's (passed, failed, skipped) over every suite of the run.
fn run_totals(run: &Run) -> (u64, u64, u64) {
    run.suites.iter().fold((0, 0, 0), |(p, f, s), suite| {
        (p + suite.counts.passed, f + suite.counts.failed, s + suite.counts.skipped)
    })
}

/// A cargo workspace whose root is a package too (as indexmap): plain `cargo test` tests only the
/// root package and passes; the whole workspace has a failing member test. fcorr tests what
/// `cargo test --workspace` tests, doc-tests included, and names the excluded crate.
#[test]
fn a_cargo_workspace_is_tested_whole_and_an_excluded_crate_is_named() {
    let dir = fixture("rust-workspace-root");
    let (root_only, code) = native(&dir, "cargo", &["test", "--no-fail-fast"]);
    assert_eq!((code, libtest_totals(&root_only).1), (0, 0), "the trap: the root package alone passes\n{root_only}");
    let (whole, code) = native(&dir, "cargo", &["test", "--workspace", "--no-fail-fast"]);
    assert_eq!(code, 101, "{whole}");
    let (passed, failed, ignored) = libtest_totals(&whole);
    assert!(failed > 0 && whole.contains("Doc-tests member"), "{whole}");

    let (run, code, out) = run_keeping("rust-workspace-root");
    assert_eq!(code, 1, "a failing member test fails the run");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed, "{suite:#?}");
    assert_eq!(run_totals(&run), (passed, failed, ignored));
    let doc_tests = suite.cases.iter().filter(|c| c.classname.as_deref() == Some("member (doc-tests)")).count();
    assert_eq!(doc_tests, 2, "the member's doc-tests ran");
    let failing = suite.cases.iter().find(|c| c.status.is_failure()).unwrap();
    assert_eq!(
        (failing.file.as_deref(), failing.line),
        (Some("crates/member/tests/rounding.rs"), Some(4)),
        "{failing:?}"
    );
    let scratch = suite.left_out.iter().find(|l| l.path.ends_with("crates/scratch")).unwrap_or_else(|| {
        panic!("crates/scratch is excluded from the workspace and must be named: {:?}", suite.left_out)
    });
    assert!(scratch.reason.contains("exclude"), "{scratch:?}");
    assert_eq!(suite.left_out.len(), 1, "members are not left out: {:?}", suite.left_out);
    assert!(phase(suite, PhaseKind::Test).command.contains("--workspace"));
    assert_left_out_in_every_report(&run, out.path());
}

/// A cargo workspace member run as a suite of its own (one `[[suite]]` per member, as the docs
/// suggest for per-member settings) tests that member only, as `cargo test` in its directory does,
/// with its cases' files relative to the suite and failures at their line. Before, each member
/// suite ran `cargo test --workspace`: every suite counted every member's tests, failed on b's
/// failure (tripping `critical` on a), and named files relative to the wrong directory.
#[test]
fn each_cargo_member_suite_tests_its_member_only() {
    let dir = fixture("rust-member-suites");
    let out = tempfile::tempdir().unwrap();
    let mut cmd = fcorr();
    cmd.current_dir(&dir).args(["run", "--json", "-j1", "--out"]).arg(out.path());
    let (run, code) = parse_run(&cmd.output().unwrap());
    assert_eq!(code, 1, "b fails");
    for (name, member) in [("a", "crates/a"), ("b", "crates/b")] {
        let (native_out, native_code) = native(&dir.join(member), "cargo", &["test", "--no-fail-fast"]);
        let suite = run.suites.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no suite {name}"));
        let (passed, failed, ignored) = libtest_totals(&native_out);
        assert_eq!(
            (suite.counts.passed, suite.counts.failed, suite.counts.skipped),
            (passed, failed, ignored),
            "suite {name}: {:#?}\nnative:\n{native_out}",
            suite.cases
        );
        assert_eq!(suite.status == SuiteStatus::Failed, native_code != 0, "suite {name}: {suite:#?}");
        assert!(!phase(suite, PhaseKind::Test).command.contains("--workspace"), "suite {name}");
        for case in &suite.cases {
            let file = case.file.as_deref().unwrap_or("");
            assert!(
                case.classname.as_deref().is_some_and(|c| c.ends_with("(doc-tests)"))
                    || dir.join(member).join(file).is_file(),
                "suite {name}: {} is at {file}, not a file of {member}",
                case.name
            );
        }
    }
    let b = run.suites.iter().find(|s| s.name == "b").unwrap();
    let broke = b.cases.iter().find(|c| c.status.is_failure()).unwrap();
    assert_eq!(
        (broke.name.as_str(), broke.file.as_deref(), broke.line),
        ("tests::breaks", Some("src/lib.rs"), Some(line_of("rust-member-suites", "crates/b/src/lib.rs", "b broke")))
    );
    assert!(
        !run.verdict.reasons.iter().any(|r| r.gate == fcorr::model::GateKind::Critical),
        "b's failure is not critical a's: {:#?}",
        run.verdict.reasons
    );
}

/// The whole workspace, from its root, counts what `cargo test --workspace` counts, and names the
/// tests cargo never runs: a library with `[lib] test = false`, and a tests/*.rs file that
/// `autotests = false` leaves unbuilt (no `[[test]]` declares it). Each hides a failing test.
#[test]
fn a_cargo_workspace_names_the_tests_cargo_never_runs() {
    let dir = fixture("rust-member-suites");
    let (whole, code) = native(&dir, "cargo", &["test", "--workspace", "--no-fail-fast"]);
    assert_eq!(code, 101, "{whole}");
    assert!(!whole.contains("hidden") && !whole.contains("undeclared"), "cargo runs neither:\n{whole}");

    let (run, code, out) = run_keeping("rust-member-suites");
    assert_eq!(code, 1);
    assert_eq!(run_totals(&run), libtest_totals(&whole));
    let suite = &run.suites[0];
    assert!(phase(suite, PhaseKind::Test).command.contains("--workspace"));
    let mut left: Vec<(&str, &str)> = suite
        .left_out
        .iter()
        .map(|l| (l.path.rsplit_once("rust-member-suites/").map_or(l.path.as_str(), |(_, p)| p), l.reason.as_str()))
        .collect();
    left.sort();
    assert_eq!(left.len(), 2, "{left:#?}");
    assert_eq!(left[0].0, "crates/noauto/tests/it.rs");
    assert!(left[0].1.contains("`autotests = false` in crates/noauto/Cargo.toml"), "{}", left[0].1);
    assert_eq!(left[1].0, "crates/notest/src/lib.rs");
    assert!(left[1].1.contains("`test = false` under [lib] in crates/notest/Cargo.toml"), "{}", left[1].1);
    assert_left_out_in_every_report(&run, out.path());
}

/// pytest reads the first configuration file it finds: a pytest.ini that sets only `markers` hides
/// pyproject.toml's `testpaths`, so pytest collects libs/sub, a Python project of its own, too.
/// fcorr runs it and does not call it "not run" beside its failing test, as it did when it read
/// `testpaths` from pyproject.toml (QA D7).
#[test]
fn a_nested_python_project_pytest_collects_is_not_named_as_not_run() {
    let dir = fixture("py-ini-precedence");
    let (native_out, code) = native(&dir, "python3", &["-B", "-m", "pytest", "-p", "no:cacheprovider"]);
    assert!(code == 1 && native_out.contains("1 failed, 1 passed"), "{native_out}");

    let (run, code, _out) = run_keeping("py-ini-precedence");
    assert_eq!(code, 1);
    let suite = &run.suites[0];
    assert_eq!((suite.counts.passed, suite.counts.failed), (1, 1), "{:#?}", suite.cases);
    let sub = suite.cases.iter().find(|c| c.file.as_deref() == Some("libs/sub/tests/test_sub.py"));
    assert!(sub.is_some_and(|c| c.status.is_failure()), "{:#?}", suite.cases);
    assert!(suite.left_out.is_empty(), "pytest ran libs/sub: {:#?}", suite.left_out);
}

/// (passed, failed, skipped) tests in `go test -json` output: the test-level pass/fail/skip events.
fn go_json_totals(output: &str) -> (u64, u64, u64) {
    let mut totals = (0, 0, 0);
    for line in output.lines().filter(|l| l.starts_with('{')) {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        if event["Test"].is_null() {
            continue;
        }
        match event["Action"].as_str() {
            Some("pass") => totals.0 += 1,
            Some("fail") => totals.1 += 1,
            Some("skip") => totals.2 += 1,
            _ => {}
        }
    }
    totals
}

/// A Go repository with a nested module (as zap's `exp`) whose test fails: `go test ./...` at the
/// root passes, because `./...` stops at the nested go.mod. fcorr runs every module, each as a
/// suite, so the run fails, and names the nested module that has no tests.
#[test]
fn every_go_module_runs_and_a_failure_only_in_a_nested_module_fails_the_run() {
    let dir = fixture("go-nested-modules");
    let (root_only, code) = native(&dir, "go", &["test", "-json", "-count=1", "./..."]);
    assert_eq!((code, go_json_totals(&root_only).1), (0, 0), "the trap: the root module alone passes\n{root_only}");
    let mut want = go_json_totals(&root_only);
    let (nested, code) = native(&dir.join("exp"), "go", &["test", "-json", "-count=1", "./..."]);
    assert_eq!(code, 1, "{nested}");
    let nested = go_json_totals(&nested);
    want = (want.0 + nested.0, want.1 + nested.1, want.2 + nested.2);

    let (run, code, out) = run_keeping("go-nested-modules");
    assert_eq!(code, 1, "the nested module's failing test fails the run");
    let ids: Vec<&str> = run.suites.iter().map(|s| s.id.as_str()).collect();
    let root = fixture("go-nested-modules").display().to_string();
    assert_eq!(ids, [root.clone(), format!("{root}/exp")], "the root module and the nested one, each a suite");
    assert_eq!(run_totals(&run), want);
    let exp = &run.suites[1];
    assert_eq!(exp.status, SuiteStatus::Failed);
    let failing = exp.cases.iter().find(|c| c.status.is_failure()).unwrap();
    assert_eq!(
        (failing.name.as_str(), failing.file.as_deref()),
        ("TestPercentRoundsToNearest", Some("ratio/ratio_test.go"))
    );
    // The module without tests is named, once, with its reason; testdata is not a module of the repository.
    let left: Vec<(&str, &str)> =
        run.suites.iter().flat_map(|s| &s.left_out).map(|l| (l.path.as_str(), l.reason.as_str())).collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].0.ends_with("/tools") && left[0].1.contains("no _test.go files"), "{left:?}");
    assert_left_out_in_every_report(&run, out.path());
}

/// (passed, failed, skipped) from jest's `Tests:` line or node's `# pass N` / `# fail N` lines.
pub(crate) fn js_totals(output: &str) -> (u64, u64, u64) {
    let count =
        |pattern: &str| Regex::new(pattern).unwrap().captures(output).map_or(0, |c| c[1].parse::<u64>().unwrap());
    if let Some(line) = output.lines().find(|l| l.starts_with("Tests:")) {
        let of = |word: &str| {
            Regex::new(&format!(r"(\d+) {word}")).unwrap().captures(line).map_or(0, |c| c[1].parse::<u64>().unwrap())
        };
        return (of("passed"), of("failed"), of("skipped") + of("todo"));
    }
    (count(r"(?m)^[#ℹ] pass (\d+)"), count(r"(?m)^[#ℹ] fail (\d+)"), count(r"(?m)^[#ℹ] skipped (\d+)"))
}

/// Runs a fresh copy of a JS workspace fixture with fcorr (which installs it, once, at the root),
/// then each member's own `test` command natively, in the member; fcorr's suites are the members,
/// with the natives' counts, and the run fails on the one failing member test.
fn assert_js_workspace(name: &str, members: &[(&str, &str, &[&str])], left_out: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(name);
    copy_project(&fixture(name), &root);
    let out = dir.path().join("out");
    let output = fcorr().arg("run").arg(&root).arg("--out").arg(&out).arg("--json").output().unwrap();
    let (run, code) = parse_run(&output);
    assert_eq!(code, 1, "a failing test in one member fails the run");
    let ids: Vec<String> = run.suites.iter().map(|s| s.id.clone()).collect();
    let want_ids: Vec<String> = members.iter().map(|(dir, _, _)| format!("{}/{dir}", root.display())).collect();
    assert_eq!(ids, want_ids, "each member with tests is a suite; the root and the others are not");
    // The first member to get there installs; the others wait for it and report it as shared.
    let installs: Vec<&Phase> = run.suites.iter().map(|s| phase(s, PhaseKind::Install)).collect();
    let shared = |p: &&Phase| p.note.as_deref().is_some_and(|n| n.contains("one install at the workspace root"));
    assert_eq!(installs.iter().filter(|p| !shared(p)).count(), 1, "{installs:#?}");
    assert!(installs.iter().all(|p| p.status == PhaseStatus::Passed && p.command == installs[0].command));
    for ((dir, program, args), suite) in members.iter().zip(&run.suites) {
        let (output, _) = native(&root.join(dir), program, args);
        let (passed, failed, skipped) = js_totals(&output);
        assert!(passed + failed > 0, "{dir}: no native summary in\n{output}");
        assert_eq!(
            (suite.counts.passed, suite.counts.failed, suite.counts.skipped),
            (passed, failed, skipped),
            "{dir}: fcorr vs `{program} {}`\n{output}",
            args.join(" ")
        );
    }
    let left: Vec<String> = run.suites.iter().flat_map(|s| &s.left_out).map(|l| l.path.clone()).collect();
    let want: Vec<String> = left_out.iter().map(|dir| format!("{}/{dir}", root.display())).collect();
    assert_eq!(left, want);
    assert_left_out_in_every_report(&run, &out);
}

/// An npm workspaces repository (as remeda): the root's `test` script fans out to the members
/// (`npm test --workspaces`), jest is declared only at the root, and a member has no tests.
#[test]
fn npm_workspace_members_run_each_as_a_suite_after_one_install() {
    assert_js_workspace(
        "js-npm-workspaces",
        &[("packages/numbers", "node", &["--test"]), ("packages/strings", "npx", &["--no-install", "jest", "--ci"])],
        &["packages/docs"],
    );
}

/// A member whose `test` script runs no framework fcorr drives fails the workspace (its tests
/// exist and their result is unknown), as `npm test --workspaces` fails on it; a member with
/// npm's placeholder script has no tests and is left out. Before, the first was left out too and
/// the workspace passed on its other member.
#[test]
fn an_npm_workspace_member_fcorr_cannot_drive_fails_the_run_and_a_placeholder_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "package.json",
        r#"{"name": "ws", "private": true, "workspaces": ["packages/*"], "scripts": {"test": "npm test --workspaces"}}"#,
    );
    write("packages/ok/package.json", r#"{"name": "ok", "version": "1.0.0", "scripts": {"test": "node --test"}}"#);
    write("packages/ok/test/ok.test.js", "require('node:test')('adds', () => {});\n");
    write(
        "packages/custom/package.json",
        r#"{"name": "custom", "version": "1.0.0", "scripts": {"test": "node check.js"}}"#,
    );
    write("packages/custom/check.js", "require('node:assert').strictEqual(1 + 1, 3);\n");
    write(
        "packages/empty/package.json",
        r#"{"name": "empty", "version": "1.0.0", "scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
    );
    let (native_output, native_code) = native(root, "npm", &["test", "--workspaces"]);
    assert_ne!(native_code, 0, "npm's own run fails on the custom member:\n{native_output}");
    let out = dir.path().join("out");
    let output = fcorr().arg("run").arg(root).arg("--out").arg(&out).arg("--json").output().unwrap();
    let (run, code) = parse_run(&output);
    assert_ne!(code, 0, "{run:#?}");
    let suites: Vec<(String, SuiteStatus)> = run.suites.iter().map(|s| (s.name.clone(), s.status)).collect();
    let named = |member: &str| format!("{}/{member}", root.display());
    assert_eq!(
        suites,
        vec![(named("packages/custom"), SuiteStatus::Error), (named("packages/ok"), SuiteStatus::Passed)]
    );
    let custom = run.suites[0].error.as_ref().unwrap();
    assert!(custom.message.contains("no test framework found"), "{custom:?}");
    let left: Vec<&str> = run.suites.iter().flat_map(|s| &s.left_out).map(|l| l.reason.as_str()).collect();
    assert!(left.len() == 1 && left[0].contains("npm's placeholder"), "{left:?}");
}

/// A pnpm workspace (pnpm-workspace.yaml, `pnpm -r test`), with a directory its `!glob` excludes.
#[test]
fn pnpm_workspace_members_run_each_as_a_suite_after_one_install() {
    assert_js_workspace(
        "js-pnpm-workspace",
        &[("packages/dates", "npx", &["--no-install", "jest", "--ci"]), ("packages/money", "node", &["--test"])],
        &["packages/scripts"],
    );
}

/// Two fresh copies of a fixture under `dir`: the native command runs in `native/` while
/// `fcorr run` runs in `<name>/` (Maven and Gradle start slowly: side by side, not one after the
/// other). The native output and exit code, and fcorr's run and exit code.
fn side_by_side(dir: &Path, name: &str, program: &str, args: &[&str]) -> ((String, i32), (Run, i32)) {
    let native_copy = dir.join("native");
    let project = dir.join(name);
    copy_project(&fixture(name), &native_copy);
    copy_project(&fixture(name), &project);
    std::thread::scope(|scope| {
        let native_run = scope.spawn(|| native(&native_copy, program, args));
        let output = fcorr().arg("run").arg(&project).arg("--out").arg(dir.join("out")).arg("--json").output().unwrap();
        (native_run.join().unwrap(), parse_run(&output))
    })
}

/// (passed, failed, errors, skipped) summed over Maven's per-module `Tests run:` summary lines
/// (the ones without ` -- in <class>`).
fn maven_totals(output: &str) -> (u64, u64, u64, u64) {
    let line =
        Regex::new(r"(?m)^\[\w+\] Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$").unwrap();
    line.captures_iter(output).fold((0, 0, 0, 0), |(p, f, e, s), c| {
        let n = |i: usize| c[i].parse::<u64>().unwrap();
        (p + n(1) - n(2) - n(3) - n(4), f + n(2), e + n(3), s + n(4))
    })
}

/// A Maven multi-module build (as gson's): every module listed in <modules> is tested by the one
/// `mvn test` at the root, so a failing test in the second module fails the run; a directory with
/// a pom.xml that is not a module is named as left out.
#[test]
fn every_maven_module_is_tested_and_a_pom_outside_the_modules_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["-B", "--fail-at-end", "test"];
    let ((output, code), (run, fcorr_code)) = side_by_side(dir.path(), "maven-multi-module", "mvn", &args);
    assert_eq!(code, 1, "{output}");
    let (passed, failed, errors, skipped) = maven_totals(&output);
    assert!(passed > 0 && failed > 0, "{output}");

    assert_eq!(fcorr_code, 1);
    let suite = &run.suites[0];
    assert_eq!(
        (suite.counts.passed, suite.counts.failed, suite.counts.error, suite.counts.skipped),
        (passed, failed, errors, skipped)
    );
    let classes: std::collections::BTreeSet<&str> = suite.cases.iter().filter_map(|c| c.classname.as_deref()).collect();
    assert_eq!(
        classes.into_iter().collect::<Vec<_>>(),
        ["dev.fcorr.fixture.core.CounterTest", "dev.fcorr.fixture.text.SummaryTest"],
        "both modules' tests"
    );
    let left: Vec<String> = suite.left_out.iter().map(|l| l.path.clone()).collect();
    assert_eq!(left, [format!("{}/sandbox", dir.path().join("maven-multi-module").display())]);
}

/// A child module whose JUnit 5 tests Maven's default surefire (2.12.4 on Maven 3.8) never sees:
/// Maven says `Tests run: 0` for it and BUILD SUCCESS. fcorr must not pass the repository on the
/// other module's tests. Before, it said PASS.
#[test]
fn a_maven_module_whose_tests_never_ran_fails_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["-B", "--fail-at-end", "test"];
    let ((output, code), (run, fcorr_code)) = side_by_side(dir.path(), "maven-junit5-old-surefire", "mvn", &args);
    assert_eq!(code, 0, "Maven itself passes it:\n{output}");
    // Surefire 2.12.4 prints each module's `Results :` line without a `[INFO]` prefix.
    let results = Regex::new(r"(?m)^Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$").unwrap();
    let per_module: Vec<&str> = results.captures_iter(&output).map(|c| c.get(1).unwrap().as_str()).collect();
    assert_eq!(per_module, ["1", "0"], "core ran its test, app none:\n{output}");
    assert_eq!(fcorr_code, 1);
    let suite = &run.suites[0];
    let cases: Vec<(&str, fcorr::model::CaseStatus)> =
        suite.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
    assert_eq!(
        cases,
        [("ok", fcorr::model::CaseStatus::Passed), ("[no tests ran] app", fcorr::model::CaseStatus::Error)]
    );
    assert!(suite.cases[1].message().unwrap().contains("JUnit 5"), "{:?}", suite.cases[1].message());
}

/// A Gradle multi-project build (Debian's gradle 4.4.1, as .ci/run installs it): `gradle test` at
/// the root tests every included subproject; fcorr reports each subproject's tests and names the
/// build file settings.gradle does not include.
#[test]
fn every_gradle_subproject_is_reported_and_one_not_included_is_named() {
    let found = Command::new("gradle").arg("--version").output();
    assert!(found.is_ok_and(|o| o.status.success()), "this test runs the real Gradle: `apt-get install gradle`");
    let dir = tempfile::tempdir().unwrap();
    let args = ["--no-daemon", "--console=plain", "--continue", "test"];
    let ((output, code), (run, fcorr_code)) = side_by_side(dir.path(), "gradle-multi-project", "gradle", &args);
    assert_eq!(code, 1, "{output}");
    // Gradle prints `N tests completed, M failed` for each subproject with a failure; the
    // testsuite headers of the reports the native run wrote count every subproject's tests.
    let completed = Regex::new(r"(\d+) tests completed, (\d+) failed").unwrap();
    let (ran_failing, failed) = completed
        .captures_iter(&output)
        .fold((0, 0), |(r, f), c| (r + c[1].parse::<u64>().unwrap(), f + c[2].parse::<u64>().unwrap()));
    assert!(failed > 0, "{output}");
    let header = Regex::new(r#"<testsuite [^>]*tests="(\d+)""#).unwrap();
    let mut total = 0;
    for sub in ["app", "lib"] {
        for report in std::fs::read_dir(dir.path().join("native").join(sub).join("build/test-results/test")).unwrap() {
            let path = report.unwrap().path();
            if path.extension().is_none_or(|e| e != "xml") {
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            total += header.captures(&text).map_or(0, |c| c[1].parse::<u64>().unwrap());
        }
    }

    assert_eq!(fcorr_code, 1);
    let suite = &run.suites[0];
    assert_eq!((suite.counts.total, suite.counts.failed), (total, failed));
    let classes: std::collections::BTreeSet<&str> = suite.cases.iter().filter_map(|c| c.classname.as_deref()).collect();
    assert_eq!(
        classes.into_iter().collect::<Vec<_>>(),
        ["dev.fcorr.fixture.app.ForecastTest", "dev.fcorr.fixture.lib.TemperatureTest"],
        "every subproject's tests"
    );
    let app = suite.cases.iter().filter(|c| c.classname.as_deref() == Some("dev.fcorr.fixture.app.ForecastTest"));
    assert_eq!(app.count() as u64, ran_failing);
    let left: Vec<String> = suite.left_out.iter().map(|l| l.path.clone()).collect();
    assert_eq!(left, [format!("{}/experiments", dir.path().join("gradle-multi-project").display())]);
}

/// A uv workspace with a virtual root: pytest at the root (what `uv run --all-packages pytest`
/// runs) imports every member, so each member is installed, editable, into the suite's venv. The
/// native run here is that same pytest, run again in the venv fcorr made.
#[test]
fn every_uv_workspace_member_is_installed_and_tested() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("py-uv-workspace");
    copy_project(&fixture("py-uv-workspace"), &project);
    let (run, code) = parse_run(
        &fcorr().arg("run").arg(&project).arg("--out").arg(dir.path().join("out")).arg("--json").output().unwrap(),
    );
    assert_eq!(code, 1, "the failing test in the second member fails the run");
    let suite = &run.suites[0];
    let install = phase(suite, PhaseKind::Install);
    assert!(install.command.contains("-e packages/core -e packages/text"), "{}", install.command);
    // The suite's own interpreter, from its test command: `<venv>/bin/python -m pytest ...`.
    let python = phase(suite, PhaseKind::Test).command.split(' ').next().unwrap().to_string();
    let (output, native_code) = native(&project, &python, &["-m", "pytest", "-p", "no:cacheprovider"]);
    assert_eq!(native_code, 1, "{output}");
    let count = |word: &str| {
        Regex::new(&format!(r"(\d+) {word}"))
            .unwrap()
            .captures(output.lines().last().unwrap_or_default())
            .map_or(0, |c| c[1].parse::<u64>().unwrap())
    };
    assert_eq!(
        (suite.counts.passed, suite.counts.failed, suite.counts.error),
        (count("passed"), count("failed"), count("error"))
    );
    let files: std::collections::BTreeSet<&str> = suite.cases.iter().filter_map(|c| c.file.as_deref()).collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        ["packages/core/tests/test_core.py", "packages/text/tests/test_text.py"]
    );
}

/// `fcorr detect` on a workspace is a dry run: each member's suite with the exact install, build
/// and test commands (the one install at the root, each member's test in its directory), and
/// what would be left out; nothing is installed or run.
#[test]
fn detect_shows_each_member_and_the_commands_it_would_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    copy_project(&fixture("js-npm-workspaces"), &root);
    let output = fcorr().arg("detect").arg(&root).arg("--json").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["workspace"], "package.json workspaces");
    let suites = value["suites"].as_array().unwrap();
    let paths: Vec<&str> = suites.iter().map(|s| s["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["packages/numbers", "packages/strings"]);
    for suite in suites {
        let phases = suite["phases"].as_array().unwrap();
        let kinds: Vec<&str> = phases.iter().map(|p| p["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["install", "build", "test"], "{suite}");
        let install = &phases[0]["commands"][0];
        assert_eq!(
            (install["command"].as_str(), install["dir"].as_str()),
            (Some("npm ci --no-audit --no-fund --prefer-offline"), Some("."))
        );
        assert_eq!(phases[2]["commands"][0]["dir"], suite["path"], "each member's tests run in the member");
    }
    assert_eq!(
        suites[1]["phases"][2]["commands"][0]["command"].as_str().unwrap().split(" --outputFile").next(),
        Some("npx --no-install jest --ci --json --testLocationInResults")
    );
    assert_eq!(value["left_out"][0]["path"], "packages/docs");
    assert!(!root.join("node_modules").exists(), "a dry run installs nothing");

    let text = fcorr().arg("detect").arg(&root).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("would run"), "{text}");
    assert!(text.contains("    packages/strings: JavaScript / jest"), "{text}");
    assert!(text.contains("  not run:\n    packages/docs: no `test` script"), "{text}");
}
