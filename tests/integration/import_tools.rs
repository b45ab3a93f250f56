//! `fcorr import` on reports the real tools write during the test run: pytest `--junitxml`
//! (xunit1 and xunit2), `node --test` with the junit and tap reporters, Maven surefire, vitest's
//! junit reporter, jest and mocha JSON, `go test -json` and cargo test output (the last four
//! recognised by content, with no format hint). Counts and per-case statuses must equal each
//! fixture's expected.json.
//! Each fixture is driven by exactly one test function.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use fcorr::model::{Case, Run, Suite};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn expected(fixture: &str) -> Value {
    let path = repo().join("tests/fixtures").join(fixture).join("expected.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs a native tool; the tool's own exit code is the fixture's business, not ours.
fn run_tool(cwd: &Path, program: &str, args: &[&str]) {
    let output = Process::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("cannot start `{program}` (is it installed?): {e}"));
    let code = output.status.code();
    assert!(code.is_some(), "`{program} {}` was killed: {}", args.join(" "), String::from_utf8_lossy(&output.stderr));
}

fn import(files: &[&Path], name: &str, extra: &[&str]) -> Run {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = crate::support::fcorr_bin();
    // From the repository root, as in CI: absolute paths in reports become repo-relative.
    cmd.current_dir(repo())
        .arg("import")
        .args(files)
        .args(["--name", name, "--json", "--out"])
        .arg(out.path())
        .args(extra);
    let output = cmd.output().unwrap();
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{name}: {e}\nstderr: {}", String::from_utf8_lossy(&output.stderr)))
}

fn assert_counts(suite: &Suite, expected: &Value, what: &str) {
    let c = &suite.counts;
    let got = serde_json::json!({"passed": c.passed, "failed": c.failed, "skipped": c.skipped, "error": c.error});
    assert_eq!(got, expected["counts"], "{what}: counts");
    assert_eq!(c.total as usize, expected["cases"].as_array().unwrap().len(), "{what}: total");
}

/// Checks every expected case's status, finding the case with `find(expected name)`.
fn assert_statuses(suite: &Suite, expected: &Value, what: &str, find: impl Fn(&Case, &str) -> bool) {
    for want in expected["cases"].as_array().unwrap() {
        let name = want["name"].as_str().unwrap();
        let matching: Vec<&Case> = suite.cases.iter().filter(|c| find(c, name)).collect();
        assert_eq!(matching.len(), 1, "{what}: expected exactly one case for {name:?}, got {matching:?}");
        assert_eq!(matching[0].status.label(), want["status"].as_str().unwrap(), "{what}: {name}");
    }
}

#[test]
fn pytest_junitxml_xunit1_and_xunit2() {
    let fixture = repo().join("tests/fixtures/py-mixed");
    let expected = expected("py-mixed");
    let dir = tempfile::tempdir().unwrap();
    for family in ["xunit1", "xunit2"] {
        let report = dir.path().join(format!("{family}.xml"));
        let junitxml = format!("--junitxml={}", report.display());
        let family_option = format!("junit_family={family}");
        run_tool(
            &fixture,
            "python",
            &["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", &family_option, &junitxml],
        );
        let run = import(&[report.as_path()], family, &[]);
        let suite = &run.suites[0];
        assert_counts(suite, &expected, family);
        // pytest ids are `file::Class::test`; JUnit has classname `tests.file.Class` and name `test`.
        assert_statuses(suite, &expected, family, |case, id| {
            let (path, rest) = id.split_once("::").unwrap();
            let (class, name) = rest.rsplit_once("::").map_or((None, rest), |(c, n)| (Some(c), n));
            let module = path.trim_end_matches(".py").replace('/', ".");
            let classname = class.map_or(module.clone(), |c| format!("{module}.{c}"));
            case.name == name && case.classname.as_deref() == Some(classname.as_str())
        });
        let file = suite.cases[0].file.as_deref();
        if family == "xunit1" {
            assert_eq!(file, Some("tests/test_textutil.py"), "xunit1 carries file=");
            assert!(suite.cases[0].line.is_some());
        }
        let error = suite.cases.iter().find(|c| c.name == "test_uses_broken_fixture").unwrap();
        assert!(error.message().unwrap().contains("fixture setup exploded"), "{error:?}");
    }
}

#[test]
fn node_test_junit_and_tap_reporters() {
    let fixture = repo().join("tests/fixtures/js-node-test");
    let expected = expected("js-node-test");
    let dir = tempfile::tempdir().unwrap();
    for (reporter, file) in [("junit", "node.xml"), ("tap", "node.tap")] {
        let report = dir.path().join(file);
        let destination = format!("--test-reporter-destination={}", report.display());
        run_tool(&fixture, "node", &["--test", &format!("--test-reporter={reporter}"), &destination]);
        let run = import(&[report.as_path()], reporter, &[]);
        let suite = &run.suites[0];
        assert_counts(suite, &expected, reporter);
        if reporter == "tap" {
            // TAP keeps the describe path: classname > name is node's full title.
            assert_statuses(suite, &expected, reporter, |case, title| {
                let full = match &case.classname {
                    Some(class) => format!("{class} > {}", case.name),
                    None => case.name.to_string(),
                };
                full == title
            });
            let failed = suite.cases.iter().find(|c| c.status.is_failure()).unwrap();
            assert_eq!(failed.file.as_deref(), Some("tests/fixtures/js-node-test/test/temperature.test.js"));
            assert_eq!(failed.line, Some(21));
            assert_eq!(failed.message(), Some("expected 100F to be 37.8C"));
        } else {
            // node's junit reporter names cases by their own title (classname is always "test").
            assert_statuses(suite, &expected, reporter, |case, title| title.rsplit(" > ").next() == Some(&case.name));
        }
    }
}

#[test]
fn maven_surefire_reports() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("maven-mixed");
    copy_dir(&repo().join("tests/fixtures/maven-mixed"), &project);
    run_tool(&project, "mvn", &["-q", "-B", "test"]);
    let reports = project.join("target/surefire-reports");
    assert!(reports.is_dir(), "mvn wrote no surefire reports in {}", reports.display());
    let glob = format!("{}/TEST-*.xml", reports.display());
    let run = import(&[Path::new(&glob)], "maven", &[]);
    let suite = &run.suites[0];
    let expected = expected("maven-mixed");
    assert_counts(suite, &expected, "surefire");
    assert_statuses(suite, &expected, "surefire", |case, id| {
        let (class, name) = id.split_once('#').unwrap();
        case.name == name && case.classname.as_deref() == Some(class)
    });
    let error = suite.cases.iter().find(|c| c.name == "removeUnknownSkuReturnsFalse").unwrap();
    assert!(error.message().unwrap().starts_with("Cannot invoke"), "{error:?}");
}

#[test]
fn vitest_junit_reporter() {
    let fixture = repo().join("tests/fixtures/js-vitest");
    if !fixture.join("node_modules/.bin/vitest").exists() {
        run_tool(&fixture, "npm", &["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
    }
    assert!(fixture.join("node_modules/.bin/vitest").exists(), "npm ci did not install vitest");
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("vitest.xml");
    let output_file = format!("--outputFile={}", report.display());
    run_tool(&fixture, "npx", &["vitest", "run", "--reporter=junit", &output_file]);
    let run = import(&[report.as_path()], "vitest", &[]);
    let suite = &run.suites[0];
    let expected = expected("js-vitest");
    assert_counts(suite, &expected, "vitest");
    assert_statuses(suite, &expected, "vitest", |case, title| case.name == title);
    assert!(suite.cases.iter().all(|c| c.file.as_deref() == Some("src/slug.test.js")), "{:?}", suite.cases);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == "target" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Runs a native tool and returns what it printed on stdout (stderr too when `merge_stderr`),
/// as a report file for import.
fn tool_report(cwd: &Path, program: &str, args: &[&str], env: &[(&str, &Path)], merge_stderr: bool) -> PathBuf {
    let mut cmd = Process::new(program);
    cmd.args(args).current_dir(cwd);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let output = cmd.output().unwrap_or_else(|e| panic!("cannot start `{program}` (is it installed?): {e}"));
    assert!(output.status.code().is_some(), "`{program}` was killed");
    let mut bytes = output.stdout;
    if merge_stderr {
        bytes.extend_from_slice(&output.stderr);
    }
    let file = tempfile::Builder::new().suffix(".report").tempfile().unwrap().into_temp_path().keep().unwrap();
    std::fs::write(&file, bytes).unwrap();
    file
}

fn ensure_node_modules(fixture: &Path, bin: &str) {
    if !fixture.join("node_modules/.bin").join(bin).exists() {
        run_tool(fixture, "npm", &["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
    }
}

/// The format import picked by sniffing, read from the suite's results source.
fn sniffed_format(suite: &Suite) -> String {
    match &suite.results_source {
        fcorr::model::ResultsSource::Report { format, .. } => format.clone(),
        other => panic!("no report source: {other:?}"),
    }
}

#[test]
fn jest_json_and_mocha_json_are_sniffed_and_counted_like_the_tools() {
    let jest = repo().join("tests/fixtures/js-jest");
    ensure_node_modules(&jest, "jest");
    let dir = tempfile::tempdir().unwrap();
    let jest_report = dir.path().join("jest-results.json");
    let output_file = format!("--outputFile={}", jest_report.display());
    run_tool(&jest, "npx", &["--no-install", "jest", "--ci", "--json", &output_file]);
    let run = import(&[jest_report.as_path()], "jest", &[]);
    assert_eq!(sniffed_format(&run.suites[0]), "jest-json");
    assert_counts(&run.suites[0], &expected("js-jest"), "jest");

    let mocha = repo().join("tests/fixtures/js-mocha");
    ensure_node_modules(&mocha, "mocha");
    let report = tool_report(&mocha, "npx", &["--no-install", "mocha", "--reporter", "json"], &[], false);
    let run = import(&[report.as_path()], "mocha", &[]);
    let _ = std::fs::remove_file(&report);
    assert_eq!(sniffed_format(&run.suites[0]), "mocha-json");
    assert_counts(&run.suites[0], &expected("js-mocha"), "mocha");
}

#[test]
fn go_test_json_and_cargo_test_output_are_sniffed_and_counted_like_the_tools() {
    let go = repo().join("tests/fixtures/go-mixed");
    let report = tool_report(&go, "go", &["test", "-json", "-count=1", "./..."], &[], false);
    let run = import(&[report.as_path()], "go", &[]);
    let _ = std::fs::remove_file(&report);
    assert_eq!(sniffed_format(&run.suites[0]), "go-test-json");
    let c = &run.suites[0].counts;
    let want = &expected("go-mixed")["counts"];
    assert_eq!(
        (c.passed, c.failed, c.skipped),
        (want["passed"].as_u64().unwrap(), want["failed"].as_u64().unwrap(), want["skipped"].as_u64().unwrap())
    );

    let rust = repo().join("tests/fixtures/rust-mixed");
    let target = tempfile::tempdir().unwrap();
    let report = tool_report(
        &rust,
        "cargo",
        &["test", "--no-fail-fast", "--color", "never"],
        &[("CARGO_TARGET_DIR", target.path())],
        true,
    );
    let run = import(&[report.as_path()], "cargo", &[]);
    let _ = std::fs::remove_file(&report);
    assert_eq!(sniffed_format(&run.suites[0]), "libtest");
    let c = &run.suites[0].counts;
    let want = &expected("rust-mixed")["counts"];
    assert_eq!(
        (c.passed, c.failed, c.skipped),
        (want["passed"].as_u64().unwrap(), want["failed"].as_u64().unwrap(), want["skipped"].as_u64().unwrap())
    );
}
