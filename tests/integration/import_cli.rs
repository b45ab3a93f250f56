//! `fcorr import` end to end through the real binary: globs, formats, bad files, usage errors,
//! exit codes, and `kind = "import"` suites in fcorr.toml with globs relative to the config file.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use fcorr::model::{CaseStatus, Counts, Run, RunOutcome, Severity, SuiteKind};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fcorr(cwd: &Path) -> Command {
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(cwd).env("NO_COLOR", "1");
    cmd
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The four counts every fixture's expected.json records.
fn four(counts: &Counts) -> Value {
    serde_json::json!({"passed": counts.passed, "failed": counts.failed, "skipped": counts.skipped, "error": counts.error})
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn gradle_reports_by_glob_match_expected_and_fail_the_strict_gate() {
    let out = tempfile::tempdir().unwrap();
    let assert = fcorr(&repo())
        .args(["import", "tests/fixtures/gradle-reports/reports/**/*.xml", "--name", "gradle", "--json", "--out"])
        .arg(out.path())
        .assert()
        .code(1);
    let run: Run = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    let expected = read_json(&repo().join("tests/fixtures/gradle-reports/expected.json"));
    assert_eq!(run.suites.len(), 1);
    let suite = &run.suites[0];
    assert_eq!((suite.kind, suite.name.as_str()), (SuiteKind::Import, "gradle"));
    assert_eq!(four(&suite.counts), expected["counts"]);
    for want in expected["cases"].as_array().unwrap() {
        let (class, name) = want["name"].as_str().unwrap().split_once('#').unwrap();
        let case = suite
            .cases
            .iter()
            .find(|c| c.name == name && c.classname.as_deref() == Some(class))
            .unwrap_or_else(|| panic!("no case {class}#{name}"));
        assert_eq!(case.status.label(), want["status"].as_str().unwrap(), "{class}#{name}");
    }
    assert_eq!(run.verdict.outcome, RunOutcome::Fail);
    // results.json on disk is the same run.
    let saved: Run = serde_json::from_str(&std::fs::read_to_string(out.path().join("results.json")).unwrap()).unwrap();
    assert_eq!(saved.suites[0].counts, suite.counts);
}

#[test]
fn unparsable_file_is_reported_with_its_path_and_the_others_still_count() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/gradle-reports/reports/test-results/test/TEST-dev.fcorr.fixture.SlugTest.xml"),
        dir.path().join("good.xml"),
    )
    .unwrap();
    std::fs::write(dir.path().join("bad.xml"), "<testsuite><testcase name=\"a\" <<<").unwrap();
    std::fs::write(dir.path().join("notes.xml"), "<html><body>not a report</body></html>").unwrap();
    let assert = fcorr(dir.path()).args(["import", "*.xml", "--name", "mixed", "--json", "--out", "out"]).assert();
    let output = assert.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.xml: invalid XML at byte"), "{stderr}");
    // Clearly XML, so read as XML: it says what it is rather than "unknown format".
    assert!(
        stderr.contains("notes.xml: an XML document whose root element is <html>: not a report format"),
        "{stderr}"
    );
    let run: Run = serde_json::from_slice(&output.stdout).unwrap();
    let suite = &run.suites[0];
    assert_eq!(suite.counts.passed, 2, "the good file's two cases still count");
    let errors: Vec<&str> = suite
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error && d.source == "collect")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().any(|m| m.contains("bad.xml")));
    // The readable cases all passed, but two named files' results are unknown: never a pass.
    // Each is an error case naming the file (before, the suite passed and exit was 0).
    let unreadable: Vec<&str> =
        suite.cases.iter().filter(|c| c.status == CaseStatus::Error).map(|c| c.name.as_str()).collect();
    assert_eq!(unreadable, ["[unreadable report] bad.xml", "[unreadable report] notes.xml"]);
    let notes = suite.cases.iter().find(|c| c.name.ends_with("notes.xml")).unwrap();
    assert!(notes.message().unwrap().contains("leave it out: `!notes.xml`"), "{:?}", notes.message());
    assert_eq!(suite.counts.error, 2);
    assert_eq!(run.verdict.outcome, RunOutcome::Fail);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
}

#[test]
fn nothing_matched_and_unknown_formats_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let assert = fcorr(dir.path()).args(["import", "reports/**/*.xml", "missing.xml"]).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("no report file matches `reports/**/*.xml`, `missing.xml`"), "{stderr}");

    std::fs::write(dir.path().join("r.xml"), "<testsuite><testcase name=\"a\"/></testsuite>").unwrap();
    let assert = fcorr(dir.path()).args(["import", "r.xml", "--format-in", "allure"]).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("invalid value 'allure' for '--format-in") && stderr.contains("junit"), "{stderr}");
    fcorr(dir.path()).args(["import"]).assert().code(2);
}

#[test]
fn tap_and_ctrf_fixtures_import_with_sniffing_and_forced_formats() {
    let dir = tempfile::tempdir().unwrap();
    let reports = repo().join("tests/fixtures/reports");
    // A TAP file with an extension that says nothing, forced with --format-in, next to a sniffed CTRF file.
    std::fs::copy(reports.join("tap/node-tap.tap"), dir.path().join("tap-output.txt")).unwrap();
    std::fs::copy(reports.join("ctrf/playwright.json"), dir.path().join("ctrf.json")).unwrap();

    for (file, format, sidecar) in [
        ("tap-output.txt", Some("tap"), "tap/node-tap.expected.json"),
        ("ctrf.json", None, "ctrf/playwright.expected.json"),
    ] {
        let mut cmd = fcorr(dir.path());
        cmd.args(["import", file, "--name", file, "--json", "--out", "out"]);
        if let Some(format) = format {
            cmd.args(["--format-in", format]);
        }
        let output = cmd.output().unwrap();
        let run: Run = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{file}: {e}: {}", String::from_utf8_lossy(&output.stderr)));
        let suite = &run.suites[0];
        let expected = read_json(&reports.join(sidecar));
        for (key, value) in expected["counts"].as_object().unwrap() {
            let got = serde_json::to_value(suite.counts).unwrap()[key.as_str()].clone();
            assert_eq!(&got, value, "{file}: count {key}");
        }
        for want in expected["cases"].as_array().unwrap() {
            let name = want["name"].as_str().unwrap();
            let case = suite.cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{file}: no {name}"));
            let got = serde_json::to_value(case).unwrap();
            for (key, value) in want.as_object().unwrap() {
                assert_eq!(&got[key.as_str()], value, "{file}: {name}: {key}");
            }
        }
        assert_eq!(output.status.code(), Some(1), "{file}: failures fail the strict gate");
    }
}

#[test]
fn all_passing_import_passes_and_prints_the_table() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ok.xml"),
        "<testsuites><testsuite name=\"s\"><testcase classname=\"c\" name=\"one\"/><testcase classname=\"c\" name=\"two\"/></testsuite></testsuites>",
    )
    .unwrap();
    let assert = fcorr(dir.path()).args(["import", "ok.xml", "--name", "green", "--out", "out"]).assert().code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("green") && stdout.contains("PASS"), "{stdout}");
    assert!(dir.path().join("out/results.json").is_file());
    // A pass-rate policy on a partly failing import is judged by its score, not all-or-nothing.
    std::fs::write(
        dir.path().join("half.xml"),
        "<testsuite><testcase name=\"a\"/><testcase name=\"b\"><failure/></testcase></testsuite>",
    )
    .unwrap();
    let assert = fcorr(dir.path())
        .args(["import", "half.xml", "--policy", "pass-rate", "--fail-on", "score<40", "--json", "--out", "out2"])
        .assert()
        .code(0);
    let run: Run = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(run.suites[0].score.value, 50.0);
    assert_eq!(run.suites[0].cases[1].status, CaseStatus::Failed);
}

#[test]
fn config_import_suite_reads_globs_relative_to_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    copy_dir(&repo().join("tests/fixtures/gradle-reports/reports"), &project.join("build"));
    std::fs::create_dir_all(project.join("e2e")).unwrap();
    std::fs::copy(repo().join("tests/fixtures/reports/ctrf/playwright.json"), project.join("e2e/ctrf-report.json"))
        .unwrap();
    std::fs::write(
        project.join("fcorr.toml"),
        r#"[[suite]]
name = "java"
kind = "import"
reports = ["build/**/TEST-*.xml"]
policy = "pass-rate"

[[suite]]
name = "e2e"
kind = "import"
path = "e2e"
reports = ["*.json"]
report-format = "ctrf"
"#,
    )
    .unwrap();
    // Run from the parent directory: the globs must resolve against project/, not the cwd.
    let assert = fcorr(dir.path()).args(["run", "--config", "project/fcorr.toml", "--json", "--out", "out"]).assert();
    let output = assert.get_output();
    let run: Run = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    let gradle = read_json(&repo().join("tests/fixtures/gradle-reports/expected.json"));
    let java = run.suites.iter().find(|s| s.name == "java").unwrap();
    assert_eq!(java.kind, SuiteKind::Import);
    assert_eq!(four(&java.counts), gradle["counts"]);
    assert_eq!(java.score.value, 71.43, "pass-rate: 5 of 7 that ran");
    let e2e = run.suites.iter().find(|s| s.name == "e2e").unwrap();
    let ctrf = read_json(&repo().join("tests/fixtures/reports/ctrf/playwright.expected.json"));
    assert_eq!(
        e2e.counts.total,
        ctrf["counts"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum::<u64>()
    );
    assert!(matches!(&e2e.results_source, fcorr::model::ResultsSource::Report { format, .. } if format == "ctrf"));
}

#[test]
fn a_run_with_no_gates_says_so_instead_of_a_bare_pass() {
    let out = tempfile::tempdir().unwrap();
    let assert = fcorr(&repo())
        .args(["import", "tests/fixtures/gradle-reports/reports/**/*.xml", "--name", "gradle", "--fail-on", "none"])
        .arg("--out")
        .arg(out.path())
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(stdout.contains("PASS (no gates)"), "{stdout}");
    let comment = std::fs::read_to_string(out.path().join("comment.md")).unwrap();
    assert!(comment.lines().next().unwrap().contains("fcorr: PASS (no gates)"), "{comment}");
}

#[test]
fn an_unreadable_report_is_named_in_the_comment_and_summary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("good.xml"),
        r#"<testsuite name="s"><testcase classname="c" name="ok"/></testsuite>"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("bad.xml"), "<testsuite name=\"s\"><testcase name=\"x\"><<<").unwrap();
    let assert = fcorr(dir.path()).args(["import", "*.xml", "--name", "mix", "--out", "out"]).assert();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("bad.xml"), "{stderr}");
    for file in ["comment.md", "summary.md"] {
        let text = std::fs::read_to_string(dir.path().join("out").join(file)).unwrap();
        assert!(text.contains("could not be read") && text.contains("bad.xml"), "{file}:\n{text}");
    }
}

/// A real pytest report: two passes, a skip, a pass, then a failure, in that order.
fn pytest_report(dir: &Path) -> String {
    let tests = "import pytest\n\ndef test_a():\n    pass\n\ndef test_b():\n    pass\n\n\
                 @pytest.mark.skip(reason=\"later\")\ndef test_skip():\n    pass\n\ndef test_c():\n    pass\n\n\
                 def test_fail():\n    assert 1 == 2\n";
    std::fs::write(dir.join("test_cut.py"), tests).unwrap();
    let status = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=full.xml", "test_cut.py"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1), "{}", String::from_utf8_lossy(&status.stdout));
    std::fs::read_to_string(dir.join("full.xml")).unwrap()
}

#[test]
fn a_pytest_report_cut_short_is_an_error_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let full = pytest_report(dir.path());
    assert!(full.contains(r#"tests="5""#), "{full}");
    // Where a killed writer leaves it: inside <skipped>, and right after a passing testcase.
    let skipped = full.find("<skipped").unwrap();
    let in_skipped = &full[..skipped + full[skipped..].find('>').unwrap() + 1];
    let first = full.find(r#"name="test_a""#).unwrap();
    let after_case = &full[..first + full[first..].find("/>").unwrap() + 2];
    for (name, text) in [("in-skipped", in_skipped), ("after-case", after_case)] {
        std::fs::write(dir.path().join(format!("{name}.xml")), text).unwrap();
        let out = format!("out-{name}");
        let output = fcorr(dir.path())
            .args(["import", &format!("{name}.xml"), "--name", name, "--json", "--out", &out])
            .output()
            .unwrap();
        let run: Run = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(output.status.code(), Some(1), "{name}: a cut report is never a pass");
        let suite = &run.suites[0];
        let cut = suite.cases.iter().find(|c| c.name == "[report cut short]").expect("an error case");
        assert_eq!(cut.status, CaseStatus::Error);
        let message = cut.message().unwrap();
        assert!(message.contains("cut short") && message.contains("declares tests=5"), "{name}: {message}");
        assert!(
            suite.diagnostics.iter().any(|d| d.severity == Severity::Error && d.message.contains("cut short")),
            "{name}: {:?}",
            suite.diagnostics
        );
        for file in ["comment.md", "summary.md", "junit.xml", "ctrf.json", "report.html"] {
            let text = std::fs::read_to_string(dir.path().join(&out).join(file)).unwrap();
            assert!(text.contains("cut short"), "{name}: {file} does not say the report was cut short");
        }
    }
    // The whole report reads as pytest said: 3 passed, 1 skipped, 1 failed, no complaint.
    std::fs::write(dir.path().join("whole.xml"), &full).unwrap();
    let output = fcorr(dir.path()).args(["import", "whole.xml", "--json", "--out", "out-whole"]).output().unwrap();
    let run: Run = serde_json::from_slice(&output.stdout).unwrap();
    let counts = &run.suites[0].counts;
    assert_eq!((counts.passed, counts.skipped, counts.failed, counts.error), (3, 1, 1, 0));
    assert!(run.suites[0].diagnostics.is_empty(), "{:?}", run.suites[0].diagnostics);
}

/// Runs a real tool in `cwd` and returns its stdout (the stream fcorr imports).
fn tool_output(cwd: &Path, program: &str, args: &[&str]) -> String {
    let output = std::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("cannot start `{program}` (is it installed?): {e}"));
    String::from_utf8(output.stdout).unwrap()
}

/// The first `lines` lines of `text`, each with its line end.
fn head(text: &str, lines: usize) -> String {
    text.split_inclusive('\n').take(lines).collect()
}

/// Imports `text` as `file` in `dir`: exit code, and the `[report cut short]` case's message.
fn import_cut(dir: &Path, file: &str, text: &str) -> (Option<i32>, Option<String>) {
    std::fs::write(dir.join(file), text).unwrap();
    let output = fcorr(dir).args(["import", file, "--json", "--out", &format!("out-{file}")]).output().unwrap();
    let run: Run = serde_json::from_slice(&output.stdout).unwrap();
    let cut = run.suites[0].cases.iter().find(|c| c.name == "[report cut short]");
    (output.status.code(), cut.map(|c| c.message().map(str::to_string).unwrap_or_default()))
}

#[test]
fn tap_and_go_json_streams_that_stop_mid_test_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    // node's TAP of the js-node-test fixture, stopped where a killed run leaves it: after the
    // first nested plan, inside `temperature > celsiusToFahrenheit`; every test point so far passed.
    let tap = tool_output(&repo().join("tests/fixtures/js-node-test"), "node", &["--test", "--test-reporter=tap"]);
    let nested_plan = tap.lines().position(|l| l.starts_with(' ') && l.trim_start().starts_with("1..")).unwrap();
    let (code, cut) = import_cut(dir.path(), "node.tap", &head(&tap, nested_plan + 1));
    assert_eq!(code, Some(1), "a TAP stream cut inside a subtest is never a pass");
    assert!(cut.as_deref().is_some_and(|m| m.contains("inside subtest `celsiusToFahrenheit`")), "{cut:?}");
    // The whole stream but its closing plan: nothing says the run got to its end.
    let without_plan: String = tap.split_inclusive('\n').filter(|l| !l.starts_with("1..")).collect();
    let (_, cut) = import_cut(dir.path(), "no-plan.tap", &without_plan);
    assert!(cut.as_deref().is_some_and(|m| m.contains("no plan")), "{cut:?}");
    let (_, cut) = import_cut(dir.path(), "whole.tap", &tap);
    assert_eq!(cut, None, "the whole stream is complete");

    // `go test -json` on go-mixed, one package at a time, stopped after the first test passed:
    // the package never said `pass` or `fail`.
    let json =
        tool_output(&repo().join("tests/fixtures/go-mixed"), "go", &["test", "-json", "-count=1", "-p", "1", "./..."]);
    let first_pass = json.lines().position(|l| l.contains(r#""Action":"pass""#) && l.contains(r#""Test":"#)).unwrap();
    let (code, cut) = import_cut(dir.path(), "go.json", &head(&json, first_pass + 1));
    assert_eq!(code, Some(1), "a go test -json stream cut between tests is never a pass");
    assert!(cut.as_deref().is_some_and(|m| m.contains("gomixed/mathx")), "{cut:?}");
    let (_, cut) = import_cut(dir.path(), "go-whole.json", &json);
    assert_eq!(cut, None, "the whole stream is complete");
}

#[test]
fn fewer_cases_than_declared_shows_in_the_comment_and_summary() {
    let dir = tempfile::tempdir().unwrap();
    let xml = r#"<testsuites><testsuite name="s" tests="3" failures="0"><testcase name="a"/><testcase name="b"/></testsuite></testsuites>"#;
    std::fs::write(dir.path().join("r.xml"), xml).unwrap();
    fcorr(dir.path()).args(["import", "r.xml", "--out", "out"]).assert().code(0);
    for file in ["comment.md", "summary.md"] {
        let text = std::fs::read_to_string(dir.path().join("out").join(file)).unwrap();
        assert!(text.contains("declares tests=3 but 2 testcases were read"), "{file}:\n{text}");
    }
}

#[test]
fn a_star_stays_in_its_directory_and_fcorr_output_is_never_imported() {
    let dir = tempfile::tempdir().unwrap();
    let case = |name: &str| format!(r#"<testsuite name="s"><testcase classname="c" name="{name}"/></testsuite>"#);
    std::fs::write(dir.path().join("a.xml"), case("a")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/b.xml"), case("b")).unwrap();
    let total = |args: &[&str]| {
        let output = fcorr(dir.path()).args(["import"]).args(args).arg("--json").output().unwrap();
        let run: Run = serde_json::from_slice(&output.stdout).unwrap();
        run.suites[0].counts.total
    };
    // Each run writes fcorr-out/junit.xml; the next run's glob must not count it again.
    assert_eq!(total(&["*.xml"]), 1);
    assert!(dir.path().join("fcorr-out/junit.xml").is_file());
    assert_eq!(total(&["*.xml"]), 1);
    assert_eq!(total(&["**/*.xml"]), 2);
    assert_eq!(total(&["**/*.xml", "--out", "elsewhere"]), 2, "another output directory of fcorr is skipped too");
    assert_eq!(total(&["**/*.xml"]), 2);
}

#[test]
fn an_import_suite_never_reads_the_reports_other_suites_write_into_the_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.xml"),
        r#"<testsuite name="s"><testcase classname="c" name="mine"/></testsuite>"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        "[[suite]]\nname = \"all\"\nkind = \"import\"\nreports = [\"**/*.xml\"]\n",
    )
    .unwrap();
    // What a project suite leaves in fcorr's work directory while the run is still going: its
    // report, and no results.json yet to mark the directory as fcorr's.
    let work = dir.path().join("out/work/py");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("junit.xml"),
        r#"<testsuite name="py"><testcase classname="t" name="other"/></testsuite>"#,
    )
    .unwrap();
    let output = fcorr(dir.path()).args(["run", "--config", "fcorr.toml", "--json", "--out", "out"]).output().unwrap();
    let run: Run = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = run.suites[0].cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["mine"], "the output directory's reports belong to other suites");
}

#[test]
fn an_import_with_no_results_names_the_file_not_a_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.json"), "{\n  \"numTotalTests\": 3,\n  \"testResults\": [,]\n}\n").unwrap();
    let output = fcorr(dir.path()).args(["import", "broken.json", "--json", "--out", "out"]).output().unwrap();
    let run: Run = serde_json::from_slice(&output.stdout).unwrap();
    let message = &run.suites[0].error.as_ref().unwrap().message;
    assert!(!message.contains("test command"), "{message}");
    assert!(
        message.contains("broken.json") && message.contains("invalid JSON: expected value at line 3 column 19"),
        "{message}"
    );
}

/// A JUnit report of `cases` cases, every tenth failing.
fn junit_of(cases: usize) -> String {
    let mut xml = String::from("<testsuites><testsuite name=\"big\">\n");
    for i in 0..cases {
        let result = if i % 10 == 0 { "<failure message=\"boom\">trace</failure>" } else { "" };
        xml.push_str(&format!(
            "<testcase classname=\"mod{}\" name=\"test_{i}\" time=\"0.01\">{result}</testcase>\n",
            i % 50
        ));
    }
    xml.push_str("</testsuite></testsuites>\n");
    xml
}

/// fcorr run in `dir` with a heartbeat every 5 ms (the variable tests use), outside CI; it must
/// succeed. Its output, and its stderr as text.
fn with_heartbeats(dir: &std::path::Path, args: &[&str]) -> (std::process::Output, String) {
    let output = fcorr(dir).args(args).env("FCORR_HEARTBEAT_SECS", "0.005").env_remove("CI").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{args:?}: {stderr}");
    (output, stderr)
}

/// Long imports and merges say on stderr that they are still working (every 30 s; here every
/// 5 ms, through the variable tests use), never on stdout, which stays `--json`'s one document;
/// a small import with the usual interval prints no such line.
#[test]
fn long_imports_and_merges_print_heartbeats_on_stderr_only_and_small_ones_none() {
    let dir = tempfile::tempdir().unwrap();
    // 20,000 cases: reading them and writing every report takes far longer than 5 ms in any build.
    std::fs::write(dir.path().join("big.xml"), junit_of(20_000)).unwrap();
    let (output, stderr) =
        with_heartbeats(dir.path(), &["import", "big.xml", "--json", "--fail-on", "none", "--out", "big"]);
    let run: Run = serde_json::from_slice(&output.stdout).expect("stdout is results.json alone");
    assert_eq!(run.totals.total, 20_000);
    let beat = stderr.lines().find(|l| l.starts_with("fcorr: still importing (")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        beat.contains(": reading 1 report, ") || beat.contains(": writing reports") || beat.contains(": comparing"),
        "{beat}"
    );

    let (merged, stderr) =
        with_heartbeats(dir.path(), &["merge", "big", "--json", "--fail-on", "none", "--out", "merged"]);
    serde_json::from_slice::<Run>(&merged.stdout).expect("stdout is results.json alone");
    assert!(stderr.lines().any(|l| l.starts_with("fcorr: still merging (")), "{stderr}");

    std::fs::write(dir.path().join("small.xml"), junit_of(3)).unwrap();
    let small = fcorr(dir.path())
        .args(["import", "small.xml", "--fail-on", "none", "--out", "small"])
        .env_remove("FCORR_HEARTBEAT_SECS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&small.stderr);
    assert!(small.status.success() && !stderr.contains("still"), "{stderr}");
}

/// A report big enough to be read in parts on several threads, whose testsuites are nested so no
/// cut between parts holds: it is read again whole, and the progress shown is that read's (the
/// parts' bytes are taken back), not a bar stuck at its end while the file is read a second time.
#[test]
fn a_report_read_again_whole_after_its_parts_never_shows_more_than_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut xml = String::from("<testsuites><testsuite name=\"outer\">\n");
    let mut inner = 0;
    // Over 8 MiB: the size past which a report is read in parts when the machine has two cores.
    while xml.len() < 9 << 20 {
        xml.push_str(&format!("<testsuite name=\"inner{inner}\">\n"));
        for i in 0..10 {
            xml.push_str(&format!("<testcase classname=\"c{inner}\" name=\"test_{i}\" time=\"0.01\"/>\n"));
        }
        xml.push_str("</testsuite>\n");
        inner += 1;
    }
    xml.push_str("</testsuite></testsuites>\n");
    std::fs::write(dir.path().join("nested.xml"), &xml).unwrap();
    let (_, stderr) =
        with_heartbeats(dir.path(), &["import", "nested.xml", "--format", "json", "--fail-on", "none", "--out", "out"]);
    let shown = regex::Regex::new(r"([0-9.]+) of ([0-9.]+) MB").unwrap();
    let reads: Vec<(f64, f64)> =
        shown.captures_iter(&stderr).map(|c| (c[1].parse().unwrap(), c[2].parse().unwrap())).collect();
    assert!(!reads.is_empty(), "no progress line: {stderr}");
    assert!(reads.iter().all(|(done, total)| done <= total), "{reads:?}");
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        // Read in parts, then again whole: the count goes back when the parts are given up.
        assert!(reads.windows(2).any(|w| w[1].0 < w[0].0), "never went back: {reads:?}");
    }
    let run: Run =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/results.json")).unwrap()).unwrap();
    assert_eq!(run.totals.total, inner * 10);
}

#[test]
fn a_stop_signal_during_an_import_says_what_it_cut_short() {
    // Before, the message was the planning one ("before any suite started; nothing was measured
    // or written"), untrue once reports are being read and written into --out.
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("big.xml");
    std::fs::write(&report, junit_of(200_000)).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fcorr"))
        .current_dir(dir.path())
        .args(["import", "big.xml", "--out", "out"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once fcorr has the report open it is reading it, long past installing its signal handler.
    let fds = PathBuf::from(format!("/proc/{}/fd", child.id()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let reading = || {
        std::fs::read_dir(&fds)
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == report))
    };
    while !reading() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(reading(), "fcorr never opened the report");
    // SAFETY: kill only sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    let out = dir.path().join("out");
    assert!(stderr.contains(&format!("fcorr: stopped by SIGTERM while importing into {}", out.display())), "{stderr}");
    assert!(!stderr.contains("before any suite started"), "{stderr}");
}

/// B7: an import that could not write its reports leaves the earlier import's PASS reports in
/// the directory; `fcorr publish` must refuse them rather than post that PASS as this run's.
/// A directory whose last import finished is published as before.
#[test]
fn publish_refuses_a_directory_the_last_import_did_not_finish_writing() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let junit = |status: &str| {
        format!(
            "<testsuite name=\"s\" tests=\"1\"><testcase classname=\"c\" name=\"t\">{status}</testcase></testsuite>\n"
        )
    };
    std::fs::write(dir.join("good.xml"), junit("")).unwrap();
    std::fs::write(dir.join("bad.xml"), junit("<failure message=\"no\"/>")).unwrap();
    fcorr(dir).args(["import", "good.xml", "--out", "out", "--format", "json", "--format", "junit"]).assert().code(0);
    assert!(!dir.join("out/fcorr-incomplete.txt").exists(), "a finished import leaves no marker");
    // Outside GitHub Actions there is nothing to publish to: a complete directory exits 0.
    fcorr(dir).args(["publish", "out"]).assert().code(0);

    // junit.xml cannot be moved into place (a directory holds its name): the import fails (3).
    std::fs::remove_file(dir.join("out/junit.xml")).unwrap();
    std::fs::create_dir_all(dir.join("out/junit.xml/blocked")).unwrap();
    fcorr(dir).args(["import", "bad.xml", "--out", "out", "--format", "json", "--format", "junit"]).assert().code(3);
    let output = fcorr(dir).args(["publish", "out"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "an unfinished directory is refused: {stderr}");
    assert!(stderr.contains("not written completely"), "{stderr}");

    // In GitHub Actions the refusal is in the job summary and the step outputs, not only the log.
    let (summary, outputs) = (dir.join("step-summary.md"), dir.join("step-outputs.txt"));
    let output = fcorr(dir)
        .args(["publish", "out"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "octo/app")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = std::fs::read_to_string(&summary).expect("a job summary");
    assert!(summary.starts_with("## fcorr: error") && summary.contains("not written completely"), "{summary}");
    let outputs = std::fs::read_to_string(&outputs).expect("step outputs");
    assert!(outputs.starts_with("verdict<<") && outputs.contains("\nerror\n"), "{outputs}");
}

/// D6: a test named with terminal controls (an OSC title, a screen clear, a bidi override) and a
/// message with colour, CR and a C1 CSI, imported by a real `fcorr import`: the table shows them,
/// it does not send them, on stdout and stderr alike.
#[test]
fn controls_in_imported_names_and_messages_are_shown_not_sent_to_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.json"),
        r#"{"results":{"tool":{"name":"t"},"summary":{"tests":1,"passed":0,"failed":1,"skipped":0,"pending":0,"other":0,"start":0,"stop":1},
"tests":[{"name":"evil\u001b]0;pwned\u0007\u001b[2J\u202eman","status":"failed","duration":1,"message":"boom\u001b[31m\r\u009b2J"}]}}"#,
    )
    .unwrap();
    let output = crate::support::fcorr()
        .current_dir(dir.path())
        .args(["import", "r.json", "--out", "out", "--color", "never"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for (what, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        let sent: Vec<char> = text.chars().filter(|c| c.is_control() && *c != '\n' || *c == '\u{202E}').collect();
        assert!(sent.is_empty(), "{what} sends {sent:?} to the terminal: {text:?}");
    }
    assert!(stdout.contains("failed evil␛]0;pwned␇␛[2J[U+202E]man"), "{stdout}");
    assert!(stdout.contains("boom␛[31m␍[U+009B]2J"), "{stdout}");
}

/// QA C27: any command-line error involving an argument that is not UTF-8 panicked (exit 101,
/// a backtrace) because the error path read `std::env::args`. Each is now a usage error (exit
/// 2); a report path that is not UTF-8 is named, its bad bytes shown as `\xFE`.
#[test]
fn arguments_that_are_not_utf8_are_usage_errors_never_panics() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let report = OsStr::from_bytes(b"r-\xfe.xml");
    std::fs::write(dir.path().join(report), "<testsuite tests=\"1\"><testcase name=\"t\"/></testsuite>").unwrap();
    let bad_flag = OsStr::from_bytes(b"--bogus-flag-\xff");
    let cases: [(&[&OsStr], Option<&str>); 5] = [
        (&[OsStr::new("import"), report], Some("report path `r-\\xFE.xml` is not valid UTF-8")),
        (&[OsStr::new("import"), OsStr::new("r.xml"), OsStr::from_bytes(b"\xfe")], Some("`\\xFE`")),
        (&[OsStr::from_bytes(b"\xff")], None),
        (&[OsStr::new("import"), bad_flag], None),
        (&[OsStr::new("ci"), bad_flag], None),
    ];
    for (args, says) in cases {
        let output = fcorr(dir.path()).args(args).arg("--out").arg("out").output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        if let Some(says) = says {
            assert!(stderr.contains(says), "{args:?}: {stderr}");
        }
    }
    assert!(!dir.path().join("out").exists(), "nothing was written");
}
