//! JUnit XML and CTRF JSON from real runs (pytest on the fixtures) and from programmatic runs;
//! `fcorr report` re-rendering; terminal colors through the CLI.
//!
//! Counts come from each fixture's `expected.json`. JUnit output is read back with quick-junit's
//! deserializer and Python's `junitparser`; CTRF output is validated against the CTRF schema.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use fcorr::model::Run;
use fcorr::report::{ReportEnv, Reporter};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fcorr() -> Command {
    let mut cmd = crate::support::fcorr_bin();
    cmd.env("FCORR_CACHE_DIR", repo().join("target/fcorr-test-cache"));
    cmd
}

fn expected(fixture: &str) -> Value {
    let text = std::fs::read_to_string(repo().join("tests/fixtures").join(fixture).join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn count(expected: &Value, key: &str) -> u64 {
    expected["counts"][key].as_u64().unwrap_or(0)
}

/// The CTRF schema: the shared copy beside the repository when present (CI), else ours.
fn ctrf_schema() -> Value {
    let shared = repo().join("../shared/schemas/ctrf.schema.json");
    let ours = repo().join("tests/schemas/ctrf.schema.json");
    let path = if shared.is_file() { shared } else { ours };
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn assert_valid_ctrf(doc: &Value) {
    let validator = jsonschema::options().should_validate_formats(true).build(&ctrf_schema()).unwrap();
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "CTRF output does not validate:\n{}", errors.join("\n"));
}

/// Every `<testsuite>` carries the attributes Jenkins' JUnit schema requires.
fn assert_required_attributes(xml: &str) {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut suites = 0;
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)
                if e.name().as_ref() == "testsuite" =>
            {
                suites += 1;
                let names: Vec<String> = e.attributes().map(|a| a.unwrap().key.as_ref().to_string()).collect();
                for required in ["name", "tests", "failures", "errors"] {
                    assert!(names.iter().any(|n| n == required), "<testsuite> without {required}");
                }
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    assert!(suites > 0, "no <testsuite> in\n{xml}");
}

/// Runs py-mixed (pytest writing JUnit) and py-syntax-error (byte-compile build failure) through
/// the command runner, so the reports come from the real tools.
fn run_fixtures(dir: &Path) -> Run {
    let fixtures = repo().join("tests/fixtures");
    let config = format!(
        r#"
[[suite]]
name = "py-mixed"
path = "{mixed}"
runner = "command"
framework = "pytest"
commands.test = "python3 -m pytest -q -p no:cacheprovider --junitxml={dir}/py-mixed.xml"
reports = ["{dir}/py-mixed.xml"]

[[suite]]
name = "py-syntax-error"
path = "{syntax}"
runner = "command"
commands.build = "python3 -m compileall -q ."
commands.test = "python3 -m pytest -q -p no:cacheprovider"
env = {{ PYTHONDONTWRITEBYTECODE = "1" }}
"#,
        mixed = fixtures.join("py-mixed").display(),
        syntax = fixtures.join("py-syntax-error").display(),
        dir = dir.display(),
    );
    std::fs::write(dir.join("fcorr.toml"), config).unwrap();
    let output = fcorr()
        .args(["run", "-c"])
        .arg(dir.join("fcorr.toml"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn junit_and_ctrf_from_real_pytest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_fixtures(dir.path());
    let out = dir.path().join("out");
    let mixed = expected("py-mixed");

    // JUnit: reads back with quick-junit, with the counts pytest reported.
    let xml = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert_required_attributes(&xml);
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(report.test_suites.len(), 2);
    let suite = &report.test_suites[0];
    assert_eq!(suite.name.as_str(), "py-mixed");
    let total: u64 = ["passed", "failed", "skipped", "error"].iter().map(|k| count(&mixed, k)).sum();
    assert_eq!(suite.tests as u64, total);
    assert_eq!(suite.failures as u64, count(&mixed, "failed"));
    assert_eq!(suite.errors as u64, count(&mixed, "error"));
    assert_eq!(suite.skipped as u64, count(&mixed, "skipped"));
    let prop =
        |name: &str| suite.properties.iter().find(|p| p.name.as_str() == name).map(|p| p.value.as_str().to_string());
    assert_eq!(prop("fcorr.policy").as_deref(), Some("strict"));
    assert_eq!(prop("fcorr.score").as_deref(), Some("0"));
    assert_eq!(prop("fcorr.status").as_deref(), Some("failed"));
    assert_eq!(prop("fcorr.framework").as_deref(), Some("pytest"));
    assert!(prop("fcorr.health").is_some() && prop("fcorr.language").is_some());
    // Each expected case is there with its status; failures keep their messages.
    for case in mixed["cases"].as_array().unwrap() {
        let full = case["name"].as_str().unwrap();
        let short = full.rsplit("::").next().unwrap();
        let tc =
            suite.test_cases.iter().find(|t| t.name.as_str() == short).unwrap_or_else(|| panic!("{short} missing"));
        let status = match &tc.status {
            quick_junit::TestCaseStatus::Success { .. } => "passed",
            quick_junit::TestCaseStatus::Skipped { .. } => "skipped",
            quick_junit::TestCaseStatus::NonSuccess { kind: quick_junit::NonSuccessKind::Failure, .. } => "failed",
            quick_junit::TestCaseStatus::NonSuccess { kind: quick_junit::NonSuccessKind::Error, .. } => "error",
        };
        assert_eq!(status, case["status"].as_str().unwrap(), "{full}");
    }
    let failing = suite.test_cases.iter().find(|t| t.name.as_str() == "test_word_count_fails").unwrap();
    match &failing.status {
        quick_junit::TestCaseStatus::NonSuccess { message, description, .. } => {
            assert!(message.as_ref().unwrap().as_str().contains("expected four words in 'a b c'"));
            assert!(description.as_ref().unwrap().as_str().contains("AssertionError"));
        }
        other => panic!("{other:?}"),
    }
    // The build failure is not a green empty suite: it carries a synthetic error with the log.
    let broken = &report.test_suites[1];
    assert_eq!((broken.tests, broken.errors), (1, 1));
    match &broken.test_cases[0].status {
        quick_junit::TestCaseStatus::NonSuccess { kind, message, description, .. } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Error);
            assert!(message.as_ref().unwrap().as_str().starts_with("build failed"));
            assert!(description.as_ref().unwrap().as_str().contains("was never closed"), "{description:?}");
        }
        other => panic!("{other:?}"),
    }
    // Round trip: what quick-junit reads, it writes back identically.
    let again = quick_junit::Report::deserialize_from_str(&report.to_string().unwrap()).unwrap();
    assert_eq!(again, report);

    // CTRF: valid, same counts, stable ids from the model.
    let ctrf: Value = serde_json::from_str(&std::fs::read_to_string(out.join("ctrf.json")).unwrap()).unwrap();
    assert_valid_ctrf(&ctrf);
    let tests = ctrf["results"]["tests"].as_array().unwrap();
    let mixed_tests: Vec<&Value> = tests.iter().filter(|t| t["suite"][0] == "py-mixed").collect();
    assert_eq!(mixed_tests.len() as u64, total);
    let with_status = |s: &str| mixed_tests.iter().filter(|t| t["rawStatus"] == s).count() as u64;
    assert_eq!(with_status("failed"), count(&mixed, "failed"));
    assert_eq!(with_status("error"), count(&mixed, "error"));
    assert_eq!(with_status("skipped"), count(&mixed, "skipped"));
    assert_eq!(with_status("passed"), count(&mixed, "passed"));
    for t in &mixed_tests {
        assert!(run.suites[0].cases.iter().any(|c| t["testId"] == c.id.as_str()), "testId is the case id");
    }
    let synthetic: Vec<&Value> = tests.iter().filter(|t| t["suite"][0] == "py-syntax-error").collect();
    assert_eq!(synthetic.len(), 1);
    assert_eq!(synthetic[0]["status"], "failed");
    assert_eq!(ctrf["results"]["summary"]["tests"].as_u64().unwrap(), total + 1);

    // Python's junitparser reads the same XML and sees the same counts.
    if let Some(python) = junitparser_python() {
        let script = "import sys, junitparser\n\
                      x = junitparser.JUnitXml.fromfile(sys.argv[1])\n\
                      for s in x:\n    print(s.name, s.tests, s.failures, s.errors, s.skipped, len(list(s)))\n";
        let output = StdCommand::new(python).args(["-c", script]).arg(out.join("junit.xml")).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let text = String::from_utf8(output.stdout).unwrap();
        let expected_line = format!(
            "py-mixed {total} {} {} {} {total}",
            count(&mixed, "failed"),
            count(&mixed, "error"),
            count(&mixed, "skipped")
        );
        assert_eq!(text.lines().next(), Some(expected_line.as_str()), "{text}");
        assert_eq!(text.lines().nth(1), Some("py-syntax-error 1 0 1 0 1"), "{text}");
    }

    // `fcorr report` re-renders the same bytes from results.json (reports are pure functions).
    let again = dir.path().join("again");
    let output = fcorr()
        .args(["report", "--results"])
        .arg(out.join("results.json"))
        .arg("--out")
        .arg(&again)
        .args(["--format", "junit", "--format", "ctrf", "--color", "always"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("\x1b["), "--color always paints:\n{stdout}");
    assert!(stdout.contains("py-syntax-error") && stdout.contains("FAIL"));
    for file in ["junit.xml", "ctrf.json", "results.json"] {
        assert_eq!(std::fs::read(again.join(file)).unwrap(), std::fs::read(out.join(file)).unwrap(), "{file}");
    }
    assert!(!again.join("summary.md").exists(), "only the chosen formats are written");
    // The results path is also the positional argument; a directory means its results.json.
    let plain = fcorr().arg("report").arg(&out).arg("--out").arg(&again).env("NO_COLOR", "1").output().unwrap();
    assert!(!String::from_utf8(plain.stdout).unwrap().contains('\x1b'), "NO_COLOR is respected");
    let never = fcorr()
        .args(["report", "--color", "never", "--results"])
        .arg(out.join("results.json"))
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    assert!(!String::from_utf8(never.stdout).unwrap().contains('\x1b'));
    for file in ["summary.md", "comment.md", "report.html"] {
        assert!(again.join(file).is_file(), "{file} written by default");
    }
}

/// A Python with `junitparser`, from a venv under target/ (created once from PyPI). None, with a
/// message, only when the venv or pip cannot be set up (e.g. no network).
fn junitparser_python() -> Option<PathBuf> {
    let venv = repo().join("target/junitparser-venv");
    let python = venv.join("bin/python");
    let has =
        |p: &Path| StdCommand::new(p).args(["-c", "import junitparser"]).output().is_ok_and(|o| o.status.success());
    if has(&python) {
        return Some(python);
    }
    let made = StdCommand::new("python3").arg("-m").arg("venv").arg(&venv).output();
    let installed = made.is_ok_and(|o| o.status.success())
        && StdCommand::new(&python)
            .args(["-m", "pip", "install", "-q", "junitparser==5.0.3"])
            .output()
            .is_ok_and(|o| o.status.success());
    if installed && has(&python) {
        Some(python)
    } else {
        eprintln!("SKIPPED the junitparser check: could not install junitparser from PyPI into {}", venv.display());
        None
    }
}

#[test]
fn ctrf_of_every_scenario_validates_with_deltas_retries_and_flakes() {
    for (name, run) in crate::report_support::scenarios() {
        let doc = serde_json::to_value(fcorr::report::ctrf::build(&run, &ReportEnv::default())).unwrap();
        assert_valid_ctrf(&doc);
        // Every failing suite shows up as failed tests: never a green empty report.
        if run.suites.iter().any(|s| !s.score.met) {
            assert!(doc["results"]["summary"]["failed"].as_u64().unwrap() > 0, "{name}");
        }
        assert_eq!(doc["baseline"].is_object(), run.comparison.is_some(), "{name}");
        assert_eq!(doc["insights"].is_object(), run.comparison.is_some(), "{name}");
    }
    let run = crate::report_support::with_comparison(0);
    let doc = serde_json::to_value(fcorr::report::ctrf::build(&run, &ReportEnv::default())).unwrap();
    assert_eq!(doc["baseline"]["commit"], "0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6");
    let pass = &doc["insights"]["passRate"];
    let change = pass["change"].as_f64().unwrap();
    assert!((pass["current"].as_f64().unwrap() - pass["baseline"].as_f64().unwrap() - change).abs() < 1e-3);
    assert!(change < 0.0, "pass rate went down: {pass}");
    let tests = doc["results"]["tests"].as_array().unwrap();
    let flaky = tests.iter().find(|t| t["name"] == "test_network").unwrap();
    assert_eq!((flaky["status"].as_str(), flaky["flaky"].as_bool()), (Some("passed"), Some(true)));
    assert_eq!(flaky["retryAttempts"].as_array().unwrap().len(), 2, "the failed attempt and the final pass");
    let new_failure = tests.iter().find(|t| t["name"] == "test_word_count").unwrap();
    assert_eq!(new_failure["extra"]["fcorr"]["change"], "new-failure");
    assert_eq!(new_failure["line"], 42);
    assert_eq!(new_failure["filePath"], "tests/test_app.py");
}

#[test]
fn ctrf_is_what_serde_writes_for_every_scenario() {
    // ctrf.json goes through fcorr's own pretty formatter (`report::pretty`); serde_json's pretty
    // printing of the same document is the reference, byte for byte, whatever the cases carry.
    let mut scenarios = crate::report_support::scenarios();
    scenarios.push(("no_suites", crate::report_support::run(Vec::new(), None)));
    let mut rich = crate::report_support::mixed_failures();
    for (i, case) in rich.suites[0].cases.iter_mut().enumerate() {
        let extra = case.extra_mut();
        extra.eval_mut().tags =
            [("category".to_string(), format!("c{i}\t\"q\"")), ("topic".into(), "é😀".into())].into();
        extra.eval_mut().usage = Some(fcorr::model::Usage { tokens: 12 + i as u64, ..Default::default() });
        extra.eval_mut().reasons = vec![fcorr::model::Reason {
            code: "incorrect".into(),
            expected: Some(serde_json::json!({"a": [1, 2.5, null]})),
            actual: None,
            message: Some("want \\ got \u{1}".into()),
        }];
        extra.score = Some(i as f64 * 33.3);
        extra.critical = i % 2 == 0;
        extra.eval_mut().expectation_source = Some("data/cases.jsonl".into());
        extra.output = Some(match i % 3 {
            0 => "line one\r\nline\ttwo\u{7f}\n\nlast \u{2028}".into(),
            1 => "x\u{1b}[31m\"y\"\\\n".repeat(3_000).into(),
            _ => String::new().into(),
        });
        extra.details = Some(format!("Traceback\n  File \"a.py\", line {i}\n\u{0}\u{8}\u{c}").into());
    }
    rich.suites[0].cases[0].name = String::new().into();
    scenarios.push(("rich", rich));
    for (name, run) in scenarios {
        let written = fcorr::report::ctrf::CtrfJson.render(&run, &ReportEnv::default()).unwrap();
        let reference = serde_json::to_string_pretty(&fcorr::report::ctrf::build(&run, &ReportEnv::default())).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), reference + "\n", "{name}");
    }
}

#[test]
fn junit_of_every_scenario_round_trips_with_flaky_and_rerun_elements() {
    let mut scenarios = crate::report_support::scenarios();
    scenarios.push(("no_suites", crate::report_support::run(Vec::new(), None)));
    let mut ansi = crate::report_support::mixed_failures();
    let case = &mut ansi.suites[0].cases[1];
    case.extra_mut().output = Some("\u{1b}[31mred\u{1b}[0m\ttab\r\nbell\u{7} C1\u{9b} NUL\u{0} end".into());
    case.extra_mut().details = Some("\u{1b}[1mAssertionError\u{1b}[0m: <a & b>".into());
    scenarios.push(("ansi_and_controls", ansi));
    for (name, run) in scenarios {
        // What fcorr writes (streamed case by case) is what quick-junit serialises: the same
        // bytes, except that newlines in attribute values are written as `&#10;` (quick-xml 0.42)
        // where quick-junit's quick-xml 0.41 leaves them raw, for XML parsers to fold into spaces.
        let written = fcorr::report::junit::JunitXml.render(&run, &ReportEnv::default()).unwrap();
        let xml = String::from_utf8(written).unwrap();
        let reference_report = fcorr::report::junit::build_report(&run);
        let reference = reference_report.to_string().unwrap();
        assert_eq!(xml.replace("&#10;", "\n"), reference, "{name}: streamed JUnit differs from quick-junit's");
        let read_back = quick_junit::Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let reference_back = quick_junit::Report::deserialize_from_str(&reference).unwrap();
        assert_eq!(read_back, reference_back, "{name}: quick-junit reads back another report");
        assert_eq!(read_back.tests, reference_report.tests, "{name}");
        if !run.suites.is_empty() {
            assert_required_attributes(&xml);
        }
        let back = quick_junit::Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("{name}: {e}\n{xml}"));
        assert_eq!(back.test_suites.len(), run.suites.len(), "{name}");
        for (suite, ts) in run.suites.iter().zip(&back.test_suites) {
            let synthetic = usize::from(fcorr::report::junit::needs_suite_error(suite));
            assert_eq!(ts.tests, suite.cases.len() + synthetic, "{name}");
            assert_eq!(ts.name.as_str(), suite.name);
            if !suite.score.met {
                assert!(ts.failures + ts.errors > 0, "{name}: a failing suite must not look green");
            }
        }
    }
    let xml = fcorr::report::junit::build_report(&crate::report_support::mixed_failures()).to_string().unwrap();
    assert!(xml.contains("<flakyFailure"), "flaky case keeps its failed attempt");
    assert!(xml.contains("<rerunFailure"), "failed case keeps its earlier attempt");
    assert!(xml.contains("file=\"tests/test_app.py\"") && xml.contains("line=\"42\""));
    let hostile = fcorr::report::junit::build_report(&crate::report_support::hostile_names()).to_string().unwrap();
    let back = quick_junit::Report::deserialize_from_str(&hostile).unwrap();
    let names: Vec<&str> = back.test_suites[0].test_cases.iter().map(|t| t.name.as_str()).collect();
    for name in crate::report_support::HOSTILE {
        assert!(names.contains(name), "{name:?} survives XML escaping: {names:?}");
    }
}

/// Replaces every match of `pattern` by `~` of the same width, so masked tables keep their
/// alignment and a snapshot shows where a time was without depending on it.
fn mask(text: &str, pattern: &str) -> String {
    let re = regex::Regex::new(pattern).unwrap();
    re.replace_all(text, |c: &regex::Captures| "~".repeat(c[0].chars().count())).into_owned()
}

/// The CTRF document with its time- and id-derived values replaced by placeholders.
fn masked_ctrf(run: &Run) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    let masked = ["start", "stop", "duration", "durationMs", "timestamp", "reportId"];
                    if masked.contains(&key.as_str()) && !v.is_null() {
                        *v = Value::String(format!("[{key}]"));
                    } else {
                        walk(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut doc = serde_json::to_value(fcorr::report::ctrf::build(run, &ReportEnv::default())).unwrap();
    walk(&mut doc);
    doc
}

/// The terminal table and verdict, JUnit and CTRF of every shared scenario, next to the
/// Markdown snapshots: a change to any of them shows up as a reviewed diff. Times and report
/// ids are masked (the scenarios fix them, but a renderer that read the clock must not flap).
#[test]
fn snapshots_of_terminal_junit_and_ctrf() {
    let duration = r"\b\d+(\.\d+)?(ms|s)\b|\b\d+m\d{2}s\b";
    for (name, run) in crate::report_support::scenarios() {
        let terminal = format!(
            "{}\n{}",
            fcorr::report::terminal::render_table(&run, false, None),
            fcorr::report::terminal::render_verdict(&run, false)
        );
        insta::assert_snapshot!(format!("terminal_{name}"), mask(&terminal, duration));
        let junit =
            String::from_utf8(fcorr::report::junit::JunitXml.render(&run, &ReportEnv::default()).unwrap()).unwrap();
        let junit = mask(
            &mask(&junit, r#"(?:timestamp|time)="[^"]*""#),
            r#"<property name="[^"]*(?:time|duration)[^"]*" value="[^"]*"/>"#,
        );
        insta::assert_snapshot!(format!("junit_{name}"), junit);
        insta::assert_json_snapshot!(format!("ctrf_{name}"), masked_ctrf(&run));
    }
}

/// `fcorr report DIR` re-renders the reports beside the results.json it read without writing
/// that file again (same inode, mtime and bytes: it is the run the reports were rendered from);
/// where results.json is not the file read (`--out` elsewhere, or the run read from another
/// file of the folder) it is written as before.
#[test]
fn report_in_place_keeps_the_results_it_read_and_writes_them_elsewhere() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let xml = r#"<testsuite name="s" tests="2"><testcase classname="c" name="ok"/><testcase classname="c" name="bad"><failure message="no">trace</failure></testcase></testsuite>"#;
    std::fs::write(dir.path().join("r.xml"), xml).unwrap();
    let out = dir.path().join("out");
    fcorr().current_dir(dir.path()).args(["import", "r.xml", "--out", "out", "--fail-on", "none"]).assert().success();
    let results = out.join("results.json");
    let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    let age = |path: &Path, when| std::fs::File::options().write(true).open(path).unwrap().set_modified(when).unwrap();
    for file in ["results.json", "summary.md", "junit.xml"] {
        age(&out.join(file), long_ago);
    }
    let before = (std::fs::metadata(&results).unwrap(), std::fs::read(&results).unwrap());

    let output = fcorr().arg("report").arg(&out).env("NO_COLOR", "1").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let after = std::fs::metadata(&results).unwrap();
    assert_eq!((after.ino(), after.modified().unwrap()), (before.0.ino(), long_ago), "results.json left as it was");
    assert_eq!(std::fs::read(&results).unwrap(), before.1);
    assert!(stdout.contains(&format!("kept {}", results.display())), "{stdout}");
    assert!(!stdout.contains(&format!("wrote {}", results.display())), "{stdout}");
    for file in ["summary.md", "junit.xml"] {
        let modified = std::fs::metadata(out.join(file)).unwrap().modified().unwrap();
        assert!(modified > long_ago, "{file} is re-rendered");
    }

    // Another output folder gets its results.json, the same bytes.
    let other = dir.path().join("other");
    fcorr().arg("report").arg(&results).arg("--out").arg(&other).arg("-q").assert().success();
    assert_eq!(std::fs::read(other.join("results.json")).unwrap(), before.1);
    // A run read from another file of the folder is written as the folder's results.json.
    std::fs::rename(other.join("results.json"), other.join("saved.json")).unwrap();
    fcorr().arg("report").arg(other.join("saved.json")).arg("-q").assert().success();
    assert_eq!(std::fs::read(other.join("results.json")).unwrap(), before.1);
}
