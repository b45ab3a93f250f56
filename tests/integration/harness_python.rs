//! The Python ecosystem end to end: `fcorr run` on the real pytest/unittest fixtures, compared
//! with what the native tools reported in each fixture's `expected.json`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use fcorr::model::{Case, CaseStatus, PhaseKind, PhaseStatus, Run, Suite, SuiteStatus};
use serde_json::Value;

use crate::support::*;

/// The hang test runs alone: with a 3 s budget, pytest must get through start-up on a machine
/// that the other fixtures (compiling, installing) are not also loading.
static EXCLUSIVE: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    EXCLUSIVE.read().unwrap_or_else(|p| p.into_inner())
}

/// pytest's node id of a case read from the xunit1 JUnit report: file, classes, name.
fn node_id(case: &Case) -> String {
    let file = case.file.as_deref().unwrap();
    let module = file.trim_end_matches(".py").replace('/', ".");
    let classname = case.classname.as_deref().unwrap_or("");
    let classes = classname.strip_prefix(&module).unwrap_or("").trim_start_matches('.');
    let mut id = file.to_string();
    for class in classes.split('.').filter(|c| !c.is_empty()) {
        id.push_str("::");
        id.push_str(class);
    }
    format!("{id}::{}", case.name)
}

/// Every expected case is present with its status, and nothing else is.
fn assert_cases(suite: &Suite, expected_cases: &Value) {
    let ours: BTreeMap<String, CaseStatus> = suite.cases.iter().map(|c| (node_id(c), c.status)).collect();
    let theirs: BTreeMap<String, CaseStatus> = expected_cases
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), status_of(c["status"].as_str().unwrap())))
        .collect();
    assert_eq!(ours, theirs);
}

#[test]
fn py_pass_scores_100_and_reuses_its_virtualenv() {
    let _guard = shared();
    let want = expected("py-pass");
    let (first, code) = run_with("py-pass", &[], &[]);
    let suite = &first.suites[0];
    assert_eq!(suite.status, SuiteStatus::Passed, "{suite:#?}");
    assert_eq!(code, 0);
    assert_eq!(suite.score.value, 100.0);
    assert!(suite.score.met);
    assert_cases(suite, &want["cases"]);
    assert_counts(suite, &want["counts"]);
    let detection = suite.detection.as_ref().unwrap();
    assert_eq!((detection.ecosystem.as_str(), detection.framework.as_str()), ("python", "pytest"));
    assert!(detection.markers.iter().any(|m| m.contains("[tool.pytest.ini_options]")), "{:?}", detection.markers);

    // Same project, same dependency files: the virtualenv is complete, so nothing is reinstalled.
    let (second, code) = run_with("py-pass", &[], &[]);
    let suite = &second.suites[0];
    let install = phase(suite, PhaseKind::Install);
    assert_eq!(install.status, PhaseStatus::Skipped, "{install:#?}");
    assert!(install.note.as_deref().unwrap().starts_with("dependencies up to date"), "{install:?}");
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0));
    // Both runs test with the same virtualenv's python.
    let python = |s: &Suite| phase(s, PhaseKind::Test).command.split(' ').next().unwrap().to_string();
    assert_eq!(python(suite), python(&first.suites[0]));
    assert!(python(suite).contains("fcorr-test-cache/venvs/"), "{}", python(suite));
}

#[test]
fn py_mixed_reports_every_case_as_pytest_did() {
    let _guard = shared();
    let want = expected("py-mixed");
    let (run, code) = run_with("py-mixed", &[], &[]);
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed);
    assert_eq!(code, 1);
    assert_eq!(suite.score.value, 0.0);
    assert_cases(suite, &want["cases"]);
    assert_counts(suite, &want["counts"]);
    let failed = suite.cases.iter().find(|c| c.name == "test_word_count_fails").unwrap();
    assert!(failed.message().unwrap().contains("expected four words in 'a b c'"), "{failed:?}");
    // The line pytest printed for the failure (`tests/test_textutil.py:12: AssertionError`), not
    // its 0-based JUnit `line` (9, the blank line above `def`).
    let printed = printed_locations(suite, r"(?m)^(\S+\.py):(\d+): \w*(?:Error|Exception)\b");
    assert_located_as_printed(failed, &printed);
    assert_eq!(failed.line, Some(line_of("py-mixed", "tests/test_textutil.py", "assert word_count(")));
    // Every passing case points at its `def` (after any decorator).
    for case in suite.cases.iter().filter(|c| c.status == CaseStatus::Passed) {
        let source = std::fs::read_to_string(fixture("py-mixed").join(case.file.as_deref().unwrap())).unwrap();
        let line = source.lines().nth(case.line.unwrap() as usize - 1).unwrap().trim_start();
        assert!(line.starts_with("def ") || line.starts_with("async def "), "{}: line {line:?}", case.name);
    }
    let error = suite.cases.iter().find(|c| c.name == "test_uses_broken_fixture").unwrap();
    assert!(error.message().unwrap().contains("fixture setup exploded"), "{error:?}");
    // Ids are unique and stable: a rerun gives the same ids.
    let ids: std::collections::BTreeSet<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), suite.cases.len());
}

/// `fcorr import` of the JUnit report pytest itself wrote: the failure points at the line pytest
/// printed, not at the 0-based `line` attribute.
#[test]
fn imported_pytest_junit_points_at_the_failing_line() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("pytest.xml");
    let status = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"])
        .arg(format!("--junitxml={}", report.display()))
        .current_dir(fixture("py-mixed"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&status.stdout).to_string();
    let out = fcorr()
        .current_dir(fixture("py-mixed"))
        .arg("import")
        .arg(&report)
        .args(["--json", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let (run, _) = parse_run(&out);
    let failed = run.suites[0].cases.iter().find(|c| c.name == "test_word_count_fails").unwrap();
    let line = line_of("py-mixed", "tests/test_textutil.py", "assert word_count(");
    assert!(printed.contains(&format!("tests/test_textutil.py:{line}: AssertionError")), "{printed}");
    assert_eq!((failed.file.as_deref(), failed.line), (Some("tests/test_textutil.py"), Some(line)));
}

/// A unittest run stopped at its timeout keeps the tests that finished and names the one that
/// was running: fcorr's runner writes its report when fcorr sends SIGTERM.
#[test]
fn a_unittest_run_stopped_at_its_timeout_keeps_what_finished() {
    let _guard = shared();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("hangs");
    std::fs::create_dir_all(project.join("tests")).unwrap();
    std::fs::write(project.join("tests/__init__.py"), "").unwrap();
    std::fs::write(
        project.join("tests/test_hang.py"),
        "import time\nimport unittest\n\n\nclass Slow(unittest.TestCase):\n    def test_a_finishes(self):\n        pass\n\n    \
         def test_b_hangs(self):\n        time.sleep(300)\n\n    def test_c_never_starts(self):\n        pass\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let output =
        fcorr().arg("run").arg(&project).args(["--timeout-test", "8", "--json", "--out"]).arg(&out).output().unwrap();
    let (run, code) = parse_run(&output);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Timeout, 1), "{suite:#?}");
    let statuses: BTreeMap<&str, CaseStatus> = suite.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
    assert_eq!(
        statuses,
        BTreeMap::from([("test_a_finishes", CaseStatus::Passed), ("test_b_hangs", CaseStatus::Timeout)]),
        "{:#?}",
        suite.cases
    );
}

/// unittest's id of a case (`module.Class.test`, a doctest's dotted name).
fn unittest_id(case: &Case) -> String {
    format!("{}.{}", case.classname.as_deref().unwrap_or(""), case.name)
}

/// What `python -m unittest` itself says in `fixture`: its exit code, `Ran N tests`, and the
/// counts in `FAILED (failures=1, errors=2, ...)`.
fn native_unittest(fixture_name: &str) -> (i32, u64, BTreeMap<String, u64>) {
    let out = std::process::Command::new("python3")
        .args(["-m", "unittest"])
        .current_dir(fixture(fixture_name))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    let ran = text.lines().find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok()).unwrap();
    let mut counts = BTreeMap::new();
    if let Some(inside) = text.lines().find_map(|l| l.strip_prefix("FAILED (").and_then(|r| r.strip_suffix(')'))) {
        for part in inside.split(", ") {
            let (key, value) = part.split_once('=').unwrap();
            counts.insert(key.to_string(), value.parse().unwrap());
        }
    }
    (out.status.code().unwrap(), ran, counts)
}

#[test]
fn py_unittest_is_detected_without_markers_and_run_by_unittest() {
    let _guard = shared();
    let want = expected("py-unittest");
    let (run, code) = run_with("py-unittest", &[], &[]);
    let suite = &run.suites[0];
    let detection = suite.detection.as_ref().unwrap();
    assert_eq!(detection.framework, "unittest");
    assert!(detection.confidence < 0.9, "file patterns alone are weaker evidence: {detection:?}");
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1));
    assert_matches_expected(suite, &want, unittest_id);
    let failed = suite.cases.iter().find(|c| c.status == CaseStatus::Failed).unwrap();
    assert!(failed.message().unwrap().contains("clamp should keep negatives"), "{failed:?}");
    // The assertion's line in the test file.
    assert_eq!((failed.file.as_deref(), failed.line), (Some("tests/test_calc.py"), Some(15)), "{failed:?}");
    // unittest, not pytest: nothing but the standard library is needed.
    let test = phase(suite, PhaseKind::Test);
    assert!(test.command.contains("fcorr_unittest.py") && !test.command.contains("pytest"), "{}", test.command);
}

/// A `load_tests` that adds the module's doctests: `python -m unittest` runs 4 tests and fails one;
/// pytest (which fcorr used to run) ignores the hook, runs 2 and passes.
#[test]
fn py_unittest_counts_equal_python_m_unittest_with_load_tests() {
    let _guard = shared();
    let want = expected("py-unittest-load-tests");
    let (native_code, ran, native) = native_unittest("py-unittest-load-tests");
    assert_eq!((native_code, ran), (1, 4), "{native:?}");
    let (run, code) = run_with("py-unittest-load-tests", &[], &[]);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, native_code));
    // The project's own runner's counts, one for one.
    let n = |key: &str| native.get(key).copied().unwrap_or(0);
    assert_eq!(suite.counts.total, ran);
    assert_eq!(suite.detection.as_ref().unwrap().framework, "unittest");
    assert!(
        suite.detection.as_ref().unwrap().markers.iter().any(|m| m == "tox.ini runs `python -m unittest`"),
        "{:?}",
        suite.detection
    );
    assert_eq!(
        (suite.counts.failed, suite.counts.error, suite.counts.skipped),
        (n("failures"), n("errors"), n("skipped"))
    );
    assert_matches_expected(suite, &want, unittest_id);
    let doctest = suite.cases.iter().find(|c| c.name == "with_tax").unwrap();
    assert_eq!((doctest.file.as_deref(), doctest.line), (Some("invoice.py"), Some(18)), "the failing example");
    assert_eq!(doctest.message(), Some("doctest line 18: with_tax(10, 0.075) expected 10.76, got 10.75"));
}

/// Subtests, skips, expected failures, unexpected successes, an error in setUpClass and a module
/// that cannot be imported, each mapped as docs/python.md says.
#[test]
fn py_unittest_outcomes_map_honestly() {
    let _guard = shared();
    let want = expected("py-unittest-outcomes");
    let (native_code, ran, native) = native_unittest("py-unittest-outcomes");
    let (run, code) = run_with("py-unittest-outcomes", &[], &[]);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, native_code));
    assert_matches_expected(suite, &want, unittest_id);
    // unittest's "Ran 7 tests" are the cases that are tests; the eighth is the setUpClass error.
    let outside: Vec<&str> = suite.cases.iter().filter(|c| c.name == "setUpClass").map(|c| c.name.as_str()).collect();
    assert_eq!(suite.counts.total - outside.len() as u64, ran);
    let n = |key: &str| native[key];
    assert_eq!(suite.counts.skipped, n("skipped") + n("expected failures"));
    assert_eq!(suite.counts.error, n("errors"));
    let case = |name: &str| suite.cases.iter().find(|c| c.name == name).unwrap();
    let located = |name: &str| {
        let c = case(name);
        (c.file.clone().unwrap_or_default(), c.line.unwrap_or(0), c.message().map(str::to_string).unwrap_or_default())
    };
    let (file, line, message) = located("tests.test_broken");
    assert_eq!((&*file, line), ("tests/test_broken.py", 3));
    assert_eq!(
        message,
        "tests/test_broken.py could not be imported: ModuleNotFoundError: No module named 'not_installed_anywhere'"
    );
    assert_eq!(located("setUpClass"), ("tests/test_outcomes.py".into(), 42, "OSError: no database".into()));
    assert_eq!(located("test_decorated_error"), ("tests/test_outcomes.py".into(), 36, "RuntimeError: boom".into()));
    let (_, line, message) = located("test_subtests");
    assert_eq!(line, 20);
    assert!(message.starts_with("2 subtests failed; the first: subtest (i=2): AssertionError"), "{message}");
    assert!(located("test_fixed_bug").2.starts_with("unexpected success"));
    assert!(located("test_known_bug").2.starts_with("expected failure: AssertionError: 1 != 2"));
}

#[test]
fn py_install_fail_stops_before_build_and_test() {
    let _guard = shared();
    let want = expected("py-install-fail");
    assert!(want["counts"].is_null());
    let (run, code) = run_with("py-install-fail", &[], &[]);
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::InstallFailed);
    assert_eq!(code, 1);
    assert_eq!(suite.score.value, 0.0);
    let install = phase(suite, PhaseKind::Install);
    assert_eq!(install.status, PhaseStatus::Failed);
    assert_eq!(install.exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert!(install.log_tail.contains("fcorr-definitely-not-a-package"), "{}", install.log_tail);
    assert_eq!(phase(suite, PhaseKind::Build).status, PhaseStatus::Skipped);
    assert_eq!(phase(suite, PhaseKind::Test).status, PhaseStatus::Skipped);
    assert!(suite.cases.is_empty());
}

#[test]
fn py_syntax_error_fails_the_build_with_a_located_diagnostic() {
    let _guard = shared();
    let (run, code) = run_with("py-syntax-error", &[], &[]);
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::BuildFailed);
    assert_eq!(code, 1);
    assert_eq!(suite.score.value, 0.0);
    assert_eq!(phase(suite, PhaseKind::Build).exit_code, Some(1));
    assert_eq!(phase(suite, PhaseKind::Test).status, PhaseStatus::Skipped);
    let d = suite.diagnostics.iter().find(|d| d.file.as_deref() == Some("inventory.py")).unwrap_or_else(|| {
        panic!("no diagnostic for inventory.py: {:?}", suite.diagnostics);
    });
    assert_eq!(d.line, Some(3));
    assert!(d.message.contains("SyntaxError"), "{d:?}");
}

#[test]
fn py_no_tests_is_never_a_pass() {
    let _guard = shared();
    let want = expected("py-no-tests");
    assert!(want["counts"].is_null());
    let (run, code) = run_with("py-no-tests", &[], &[]);
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::NoTests);
    assert_eq!(phase(suite, PhaseKind::Test).exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert_eq!(suite.score.value, 0.0);
    assert!(!suite.score.met);
    assert_eq!(suite.counts.total, 0);
    assert_eq!(code, 1);
}

/// True while `pid` exists and is not a zombie (PID 1 here does not reap orphans).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.trim().chars().next()) != Some('Z'),
        Err(_) => false,
    }
}

#[test]
fn py_hang_times_out_and_kills_the_whole_process_group() {
    let _guard = EXCLUSIVE.write().unwrap_or_else(|p| p.into_inner());
    let want = expected("py-hang");
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("hang.pid");
    // On an overloaded machine pytest can spend the whole 3 s starting up and be killed before
    // it reaches the test; the kill is still checked then, and the run is tried again (at most
    // three times) until the hanging test itself, and its grandchild, were running.
    for attempt in 1..=3 {
        let started = Instant::now();
        let (run, code) = run_with("py-hang", &["--timeout-test", "3"], &[("FCORR_FIXTURE_PIDFILE", &pidfile)]);
        let elapsed = started.elapsed();
        let suite = &run.suites[0];
        assert_eq!(suite.status, SuiteStatus::Timeout, "{suite:#?}");
        assert_eq!(code, 1);
        assert_eq!(suite.score.value, 0.0);
        assert!(!suite.cases.iter().any(|c| c.status == CaseStatus::Passed));
        let test = phase(suite, PhaseKind::Test);
        assert_eq!(test.status, PhaseStatus::Timeout);
        // 3 s timeout + at most the 5 s grace period, with a margin for a loaded machine.
        assert!(test.duration_ms < 12_000, "test phase took {} ms", test.duration_ms);
        let install = phase(suite, PhaseKind::Install);
        let install_ms = if install.status == PhaseStatus::Skipped { 0 } else { install.duration_ms };
        assert!(elapsed < Duration::from_millis(install_ms + 30_000), "whole run took {elapsed:?}");

        let Ok(text) = std::fs::read_to_string(&pidfile) else {
            eprintln!("attempt {attempt}: pytest was killed before reaching the test:\n{}", test.log_tail);
            continue;
        };
        // The test that hung is named, with the status expected.json gives it.
        assert_cases(suite, &want["cases"]);
        let pid: u32 = text.trim().parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(3);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!alive(pid), "grandchild `sleep 300` (pid {pid}) outlived the timeout");
        return;
    }
    panic!("in three attempts pytest never reached the hanging test within the 3 s timeout");
}

/// Ctrl-C (SIGINT) or SIGTERM while a test runs: what pytest finished keeps its result, the test
/// that was running is named with the signal, the one never reached is not made up, and the run
/// says which signal stopped it (results.json, the verdict) and exits 128 + the signal.
#[test]
fn py_interrupt_keeps_what_ran_and_names_the_signal() {
    let _guard = shared();
    let want = expected("py-interrupt");
    for (signal, name, code) in [(libc::SIGINT, "SIGINT", 130), (libc::SIGTERM, "SIGTERM", 143)] {
        let out = tempfile::tempdir().unwrap();
        let (status, stderr, run) = interrupt(&[fixture("py-interrupt").as_os_str()], out.path(), signal);
        assert_eq!(status, Some(code), "{name}:\n{stderr}");
        let suite = &run.suites[0];
        assert_eq!(suite.status, SuiteStatus::Cancelled, "{suite:#?}");
        assert!(!suite.cases.is_empty(), "{name}: no case kept:\n{suite:#?}");
        assert_cases(suite, &want["cases"]);
        assert_eq!(suite.counts.passed, want["counts"]["passed"].as_u64().unwrap(), "pytest's own count of passes");
        assert_eq!((suite.counts.failed, suite.counts.skipped), (0, 0), "{:?}", suite.counts);
        let running = suite.cases.iter().find(|c| c.name.as_str() == "test_b_waits_to_be_interrupted").unwrap();
        assert_eq!(
            running.message(),
            Some(format!("still running when fcorr was interrupted by {name}; pytest was stopped").as_str())
        );
        let test = phase(suite, PhaseKind::Test);
        assert_eq!(test.status, PhaseStatus::Cancelled);
        assert_eq!(test.note.as_deref(), Some(format!("stopped: fcorr was interrupted by {name}").as_str()));
        assert_eq!(run.interrupted.as_deref(), Some(name));
        assert_eq!(run.verdict.outcome, fcorr::model::RunOutcome::Fail);
        let first = &run.verdict.reasons[0];
        assert_eq!(first.gate, fcorr::model::GateKind::Interrupted);
        assert!(first.message.starts_with(&format!("fcorr was interrupted by {name} before the run finished")));
        assert!(!run.verdict.reasons.iter().any(|r| r.gate == fcorr::model::GateKind::Empty), "{:?}", run.verdict);
    }
}

/// unittest under fcorr's runner, interrupted as py-interrupt is: the pass is kept, the test that
/// was running is an error naming the user's signal (the runner itself only sees fcorr's
/// SIGTERM), the one never reached is not made up. Before, it said `still running when fcorr
/// stopped the test run (SIGTERM)` whatever the user sent.
#[test]
fn unittest_interrupt_names_the_users_signal() {
    let _guard = shared();
    let want = expected("py-unittest-interrupt");
    for (signal, name, code) in [(libc::SIGINT, "SIGINT", 130), (libc::SIGTERM, "SIGTERM", 143)] {
        let out = tempfile::tempdir().unwrap();
        let args = [fixture("py-unittest-interrupt").into_os_string()];
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let ready = |log: &str| log.contains("test_b_waits_to_be_interrupted: waiting");
        let (status, stderr, run) = interrupt_when(&args, out.path(), signal, ready);
        assert_eq!(status, Some(code), "{name}:\n{stderr}");
        let suite = &run.suites[0];
        assert_eq!(suite.detection.as_ref().unwrap().framework, "unittest");
        assert_eq!(suite.status, SuiteStatus::Cancelled, "{suite:#?}");
        let ours: BTreeMap<String, CaseStatus> = suite.cases.iter().map(|c| (unittest_id(c), c.status)).collect();
        let theirs: BTreeMap<String, CaseStatus> = want["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["name"].as_str().unwrap().to_string(), status_of(c["status"].as_str().unwrap())))
            .collect();
        assert_eq!(ours, theirs, "{name}");
        assert_eq!(suite.counts.passed, want["counts"]["passed"].as_u64().unwrap());
        let running = suite.cases.iter().find(|c| c.name.as_str() == "test_b_waits_to_be_interrupted").unwrap();
        assert_eq!(
            running.message(),
            Some(format!("still running when fcorr was interrupted by {name}; unittest was stopped").as_str())
        );
        assert_eq!(run.interrupted.as_deref(), Some(name));
    }
}

/// The suite logs in `out/logs/`, one after the other, once there is one.
fn suite_log(out: &Path) -> Option<String> {
    let logs = std::fs::read_dir(out.join("logs")).ok()?.filter_map(Result::ok);
    let text: String = logs.filter_map(|entry| std::fs::read_to_string(entry.path()).ok()).collect();
    (!text.is_empty()).then_some(text)
}

/// Spawns `fcorr run` with `args`, waits until pytest passed py-interrupt's first test and
/// started the second, sends `signal` and returns fcorr's exit code, stderr and results.json.
fn interrupt(args: &[&std::ffi::OsStr], out: &Path, signal: i32) -> (Option<i32>, String, Run) {
    let ready = |log: &str| log.contains("test_a_passes PASSED") && log.contains("::test_b_waits_to_be_interrupted");
    interrupt_when(args, out, signal, ready)
}

/// [`interrupt`], once the suite log satisfies `ready`.
fn interrupt_when(
    args: &[&std::ffi::OsStr],
    out: &Path,
    signal: i32,
    ready: impl Fn(&str) -> bool,
) -> (Option<i32>, String, Run) {
    let child = fcorr()
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ready when the first test passed and the second started (the install may come first).
    let deadline = Instant::now() + Duration::from_secs(300);
    while !suite_log(out).is_some_and(|log| ready(&log)) {
        assert!(Instant::now() < deadline, "pytest never reached the waiting test:\n{:?}", suite_log(out));
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill only sends a signal to the fcorr process this test started.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let output = child.wait_with_output().unwrap();
    let text = std::fs::read_to_string(out.join("results.json")).unwrap();
    // What an interrupted run writes is a results.json like any other: it validates.
    let schema: Value = serde_json::from_str(&fcorr::commands::schema::schema_json()).unwrap();
    let written: Value = serde_json::from_str(&text).unwrap();
    let errors: Vec<String> =
        jsonschema::validator_for(&schema).unwrap().iter_errors(&written).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "results.json does not match the schema: {errors:#?}");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned(), serde_json::from_str(&text).unwrap())
}

/// Interrupted in the second of three suites run one at a time: the first keeps its results,
/// the second what finished in it, and the third is named as not run.
#[test]
fn an_interrupted_run_keeps_the_suites_that_finished_and_names_those_not_run() {
    let _guard = shared();
    let dir = tempfile::tempdir().unwrap();
    let (pass, interrupted) = (fixture("py-pass"), fixture("py-interrupt"));
    let config = format!(
        "[[suite]]\nname = \"first\"\npath = {pass:?}\n\n[[suite]]\nname = \"interrupted\"\npath = {interrupted:?}\n\n\
         [[suite]]\nname = \"never\"\npath = {pass:?}\n",
    );
    std::fs::write(dir.path().join("fcorr.toml"), config).unwrap();
    let out = dir.path().join("out");
    let config = dir.path().join("fcorr.toml");
    let (code, stderr, run) =
        interrupt(&["--config".as_ref(), config.as_os_str(), "-j".as_ref(), "1".as_ref()], &out, libc::SIGINT);
    assert_eq!(code, Some(130), "{stderr}");
    let statuses: Vec<(&str, SuiteStatus)> = run.suites.iter().map(|s| (s.name.as_str(), s.status)).collect();
    assert_eq!(
        statuses,
        [("first", SuiteStatus::Passed), ("interrupted", SuiteStatus::Cancelled), ("never", SuiteStatus::Cancelled)]
    );
    assert_counts(&run.suites[0], &expected("py-pass")["counts"]);
    assert!(!run.suites[1].cases.is_empty(), "no case kept:\n{:#?}", run.suites[1]);
    assert_cases(&run.suites[1], &expected("py-interrupt")["cases"]);
    assert!(run.suites[2].phases.is_empty() && run.suites[2].cases.is_empty(), "{:#?}", run.suites[2]);
    assert_eq!(
        run.verdict.reasons[0].message,
        "fcorr was interrupted by SIGINT before the run finished; stopped while running: interrupted; not run: never"
    );
}

/// `fcorr run` on a copy of a fixture at a new path, as a fresh CI checkout would be.
fn run_copy(name: &str, env: &[(&str, &str)], config: Option<&str>) -> (tempfile::TempDir, Run, i32) {
    run_copies(&[name], env, config, &[])
}

/// `fcorr run` of copies of fixture directories (side by side in one new directory, each under
/// its last path component), with `args` before the output options; the projects are named on
/// the command line unless a `config` names them.
fn run_copies(
    names: &[&str],
    env: &[(&str, &str)],
    config: Option<&str>,
    args: &[&str],
) -> (tempfile::TempDir, Run, i32) {
    let dir = tempfile::tempdir().unwrap();
    let projects: Vec<&str> = names.iter().map(|n| n.rsplit('/').next().unwrap()).collect();
    for (name, project) in names.iter().zip(&projects) {
        copy_project(&fixture(name), &dir.path().join(project));
    }
    let out = dir.path().join("out");
    let mut cmd = fcorr();
    cmd.current_dir(dir.path()).arg("run").args(args);
    if let Some(config) = config {
        std::fs::write(dir.path().join("fcorr.toml"), config).unwrap();
        cmd.args(["--config", "fcorr.toml"]);
    } else {
        cmd.args(projects.iter().map(|p| dir.path().join(p)));
    }
    cmd.arg("--out").arg(&out).arg("--json");
    for (key, value) in env {
        cmd.env(key, value);
    }
    let (run, code) = parse_run(&cmd.output().unwrap());
    (dir, run, code)
}

#[test]
fn py_groups_installs_pep735_groups_with_include_group_and_shares_the_venv_across_checkouts() {
    let _guard = shared();
    let want = expected("py-groups");
    let (_first_dir, first, code) = run_copy("py-groups", &[], None);
    let suite = &first.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{suite:#?}");
    assert_cases(suite, &want["cases"]);
    assert_counts(suite, &want["counts"]);
    let detection = suite.detection.as_ref().unwrap();
    assert!(detection.markers.iter().any(|m| m == "pyproject.toml: [tool.pytest]"), "{:?}", detection.markers);
    assert!(
        detection.markers.iter().any(|m| m == "test dependencies: pyproject.toml [dependency-groups] tests"),
        "{:?}",
        detection.markers
    );

    // A second checkout at another path: same dependencies, so the same virtualenv; only the
    // project itself is linked in again, never a full reinstall.
    let (_second_dir, second, code) = run_copy("py-groups", &[], None);
    let again = &second.suites[0];
    assert_eq!((again.status, code), (SuiteStatus::Passed, 0), "{again:#?}");
    assert_counts(again, &want["counts"]);
    let python = |s: &Suite| phase(s, PhaseKind::Test).command.split(' ').next().unwrap().to_string();
    assert_eq!(python(again), python(suite));
    let install = phase(again, PhaseKind::Install);
    assert!(install.command.contains("--no-deps -e ."), "{install:#?}");
    assert!(!install.command.contains("tomli-w"), "{install:#?}");
}

#[test]
fn py_groups_installs_with_pip_when_asked() {
    let _guard = shared();
    let want = expected("py-groups");
    let (_dir, run, code) = run_copy("py-groups", &[("FCORR_PYTHON_INSTALLER", "pip")], None);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{suite:#?}");
    assert_counts(suite, &want["counts"]);
    let command = &phase(suite, PhaseKind::Test).command;
    let install = phase(suite, PhaseKind::Install);
    if install.status != PhaseStatus::Skipped {
        assert!(install.command.contains("-m pip install"), "{install:#?}");
        assert!(!install.command.contains("uv pip"), "{install:#?}");
    }
    assert!(command.contains("fcorr-test-cache/venvs/"), "{command}");
}

#[test]
fn py_collect_error_is_an_error_case_that_names_the_missing_module() {
    let _guard = shared();
    let want = expected("py-collect-error");
    let (run, code) = run("py-collect-error");
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1), "{suite:#?}");
    assert_counts(suite, &want["counts"]);
    assert_eq!(suite.counts.failed, 0, "a collection error is an error, not a failure");
    let case = &suite.cases[0];
    assert_eq!(case.status, CaseStatus::Error);
    assert_eq!(
        case.message(),
        Some(
            "tests/test_render.py could not be collected: ModuleNotFoundError: No module named \
             'fcorr_fixture_missing_renderer'"
        )
    );
    assert_eq!((case.file.as_deref(), case.line), (Some("tests/test_render.py"), Some(2)));
}

#[test]
fn py_conftest_error_says_which_module_is_missing_and_where_fcorr_looked() {
    let _guard = shared();
    let want = expected("py-conftest-error");
    assert!(want["counts"].is_null());
    let (run, code) = run("py-conftest-error");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Error, "{suite:#?}");
    assert_eq!(code, 1);
    assert_eq!(phase(suite, PhaseKind::Test).exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    let error = suite.error.as_ref().unwrap();
    assert_eq!(
        error.message,
        "pytest could not import tests/conftest.py (exit 4), so no test ran: ModuleNotFoundError: No module named \
         'fcorr_fixture_missing_plugin'"
    );
    let hint = error.hint.as_deref().unwrap();
    assert!(hint.contains("provides `fcorr_fixture_missing_plugin`"), "{hint}");
    assert!(hint.contains("[dependency-groups]") && hint.contains("requirements*.txt"), "{hint}");
    assert!(hint.contains("installed pyproject.toml [project.optional-dependencies] test"), "{hint}");
}

#[test]
fn overriding_only_the_install_command_installs_into_fcorrs_virtualenv() {
    let _guard = shared();
    let want = expected("py-pass");
    // A plain `pip install` as a user writes it: with the venv first on PATH it lands there.
    let config = "[[suite]]\nname = \"calc\"\npath = \"py-pass\"\n\
                  commands = { install = \"pip install pytest && python -c 'import sys; print(\\\"prefix\\\", sys.prefix)'\" }\n";
    let (_dir, run, code) = run_copy("py-pass", &[], Some(config));
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{suite:#?}");
    assert_counts(suite, &want["counts"]);
    let install = phase(suite, PhaseKind::Install);
    assert!(install.command.contains("pip install pytest"), "{install:#?}");
    // The override's `python` (and so its `pip`) is the virtualenv's, the one the tests run with.
    let test_python = phase(suite, PhaseKind::Test).command.split(' ').next().unwrap().to_string();
    let venv = test_python.trim_end_matches("/bin/python");
    assert!(install.log_tail.contains(&format!("prefix {venv}")), "{venv}: {}", install.log_tail);
}

#[test]
fn a_pytest_cov_threshold_failure_is_named_with_its_threshold_line() {
    // Native: both tests pass, pytest-cov prints "FAIL Required test coverage of 90% not
    // reached. Total coverage: 50.00%" and pytest exits 1. Before, fcorr said "every reported
    // test passed: results are incomplete".
    let _guard = shared();
    let want = expected("py-cov-threshold");
    let (run, code) = run_with("py-cov-threshold", &[], &[]);
    let suite = &run.suites[0];
    assert_counts(suite, &want["counts"]);
    assert_eq!(phase(suite, PhaseKind::Test).exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert_eq!(suite.status, SuiteStatus::Error, "{suite:#?}");
    let message = &suite.error.as_ref().unwrap().message;
    assert!(message.starts_with("coverage threshold not met"), "{message}");
    assert!(message.contains("Required test coverage of 90% not reached. Total coverage: 50.00%"), "{message}");
    assert_ne!(code, 0);
}

#[test]
fn two_runs_sharing_a_cold_virtualenv_install_one_at_a_time() {
    // Two checkouts of the same project, started together with an empty cache: both want the
    // same virtualenv. Before, the second `uv venv` failed ("A virtual environment already
    // exists") and that suite was install-failed.
    let _guard = shared();
    let cache = tempfile::tempdir().unwrap();
    let spawn = |dir: &Path| {
        let project = dir.join("py-pass");
        copy_project(&fixture("py-pass"), &project);
        let mut cmd = fcorr();
        cmd.env("FCORR_CACHE_DIR", cache.path())
            .arg("run")
            .arg(&project)
            .arg("--out")
            .arg(dir.join("out"))
            .arg("--json");
        cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        cmd.spawn().unwrap()
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let children = [spawn(a.path()), spawn(b.path())];
    for child in children {
        let (run, code) = parse_run(&child.wait_with_output().unwrap());
        let suite = &run.suites[0];
        assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{suite:#?}");
        assert_counts(suite, &expected("py-pass")["counts"]);
    }
}

#[test]
fn a_sibling_projects_editable_install_never_satisfies_an_undeclared_import() {
    // Before: lib and app declare the same (no) dependencies, so they shared one virtualenv; lib's
    // editable install stayed in it and app, run after lib, passed (and kept passing alone, from
    // the kept cache), though alone it cannot import siblinglib.
    let _guard = shared();
    let want = expected("py-undeclared-sibling");
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().to_str().unwrap();
    let projects = ["py-undeclared-sibling/lib", "py-undeclared-sibling/app"];
    let (_dir, run, code) = run_copies(&projects, &[("FCORR_CACHE_DIR", cache)], None, &["-j", "1"]);
    let (lib, app) = (&run.suites[0], &run.suites[1]);
    assert_eq!(lib.status, SuiteStatus::Passed, "{lib:#?}");
    assert_counts(lib, &want["lib"]["counts"]);
    assert_eq!(app.status, SuiteStatus::Failed, "{app:#?}");
    assert_counts(app, &want["counts"]);
    assert_eq!(
        app.cases[0].message(),
        Some("tests/test_app.py could not be collected: ModuleNotFoundError: No module named 'siblinglib'")
    );
    assert_eq!(code, 1);
    // Each project has its own virtualenv.
    let python = |s: &Suite| phase(s, PhaseKind::Test).command.split(' ').next().unwrap().to_string();
    assert_ne!(python(lib), python(app));
    // And the kept cache gives app alone the same answer.
    let (_dir, again, _) = run_copies(&projects[1..], &[("FCORR_CACHE_DIR", cache)], None, &[]);
    assert_eq!(again.suites[0].status, SuiteStatus::Failed, "{:#?}", again.suites[0]);
    assert_counts(&again.suites[0], &want["counts"]);
}

#[test]
fn an_install_override_fills_only_its_own_projects_virtualenv_and_a_missing_pytest_is_quoted() {
    // Before: both projects declare nothing, so they shared one virtualenv: the override's
    // `pip install six` put six where the other project's tests ran, and a fresh cache's override
    // (no pytest) ended as "exited with code 1 before reporting any test result".
    let _guard = shared();
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for project in ["override", "plain"] {
        std::fs::create_dir_all(dir.path().join(project)).unwrap();
    }
    std::fs::write(dir.path().join("override/test_o.py"), "def test_six():\n    import six\n").unwrap();
    std::fs::write(
        dir.path().join("plain/test_p.py"),
        "import importlib.util\n\n\ndef test_no_six():\n    assert importlib.util.find_spec('six') is None\n",
    )
    .unwrap();
    let config = |install: &str| {
        format!(
            "[[suite]]\nname = \"override\"\npath = \"override\"\ncommands = {{ install = \"{install}\" }}\n\n\
             [[suite]]\nname = \"plain\"\npath = \"plain\"\n"
        )
    };
    let run = |install: &str| {
        std::fs::write(dir.path().join("fcorr.toml"), config(install)).unwrap();
        let out = fcorr()
            .env("FCORR_CACHE_DIR", cache.path())
            .current_dir(dir.path())
            .args(["run", "-j", "1", "--config", "fcorr.toml", "--json", "--out"])
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        parse_run(&out)
    };
    // The override installs six but not pytest: its error quotes python's own words.
    let (first, _) = run("pip install six");
    let (overridden, plain) = (&first.suites[0], &first.suites[1]);
    assert_eq!(overridden.status, SuiteStatus::Error, "{overridden:#?}");
    let error = overridden.error.as_ref().unwrap();
    assert!(error.message.ends_with("/bin/python: No module named pytest`"), "{error:?}");
    assert!(error.hint.as_deref().unwrap().contains("install `pytest`"), "{error:?}");
    assert_eq!(plain.status, SuiteStatus::Passed, "six leaked into plain's virtualenv: {plain:#?}");
    // Now it installs both and passes; plain, run again from the kept cache, still has no six.
    let (second, code) = run("pip install six pytest");
    assert_eq!(second.suites[0].status, SuiteStatus::Passed, "{:#?}", second.suites[0]);
    assert_eq!(second.suites[1].status, SuiteStatus::Passed, "{:#?}", second.suites[1]);
    assert_eq!(code, 0);
    // An override that no longer installs six starts from a fresh virtualenv: six is gone.
    std::fs::write(
        dir.path().join("override/test_o.py"),
        "def test_no_six():\n    import importlib.util\n    assert importlib.util.find_spec('six') is None\n",
    )
    .unwrap();
    let (third, _) = run("pip install pytest");
    assert_eq!(third.suites[0].status, SuiteStatus::Passed, "{:#?}", third.suites[0]);
}

#[test]
fn tox_testenv_deps_are_installed_and_an_import_skip_keeps_pytests_reason() {
    // Before: tox.ini was not read, six was never installed, tests/test_six.py was skipped whole
    // ("collection skipped") and the run passed with 1 passed, 2 skipped.
    let _guard = shared();
    let want = expected("py-tox-deps");
    let (_dir, run, code) = run_copy("py-tox-deps", &[], None);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1), "{suite:#?}");
    assert_counts(suite, &want["counts"]);
    let failed = suite.cases.iter().find(|c| c.name == "test_broken_feature").unwrap();
    assert_eq!(failed.status, CaseStatus::Failed);
    let skipped = suite.cases.iter().find(|c| c.status == CaseStatus::Skipped).unwrap();
    assert_eq!(
        skipped.message(),
        Some(
            "tests/test_optional.py skipped whole: could not import 'fcorr_fixture_optional_backend': No module \
             named 'fcorr_fixture_optional_backend'"
        )
    );
    assert_eq!((skipped.file.as_deref(), skipped.line), (Some("tests/test_optional.py"), Some(4)));
    let warning = run.warnings.iter().find(|w| w.contains("tests/test_optional.py")).expect("a run warning");
    assert!(warning.contains("every test in it was skipped because `fcorr_fixture_optional_backend` is not installed"));
    assert!(warning.contains("tox.ini [testenv]"), "{warning}");
    assert!(!phase(suite, PhaseKind::Install).command.contains("fcorr-definitely-not-a-package-lint"));
}

/// `fcorr run` on a copy of a fixture that must pass as its native tool did: the same cases and
/// counts, and the detection markers naming `source` among the test dependencies.
fn passes_as_natively(name: &str, source: &str) -> (tempfile::TempDir, Run) {
    let want = expected(name);
    let (dir, run, code) = run_copy(name, &[], None);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{suite:#?}");
    assert_cases(suite, &want["cases"]);
    assert_counts(suite, &want["counts"]);
    let markers = &suite.detection.as_ref().unwrap().markers;
    assert!(markers.iter().any(|m| m == &format!("test dependencies: {source}")), "{markers:?}");
    (dir, run)
}

/// Test dependencies declared only in Poetry's tables: the `test` group (in Poetry's version
/// syntax, `~1.16`) and, with no `[project]` table, the main dependencies; never the optional
/// `docs` group. Before, neither was read: six was never installed and its module skipped whole.
#[test]
fn py_poetry_groups_installs_the_test_group_and_the_main_dependencies() {
    let _guard = shared();
    let (_dir, run) = passes_as_natively("py-poetry-groups", "pyproject.toml [tool.poetry.group.test.dependencies]");
    let install = phase(&run.suites[0], PhaseKind::Install);
    if install.status != PhaseStatus::Skipped {
        assert!(install.command.contains("'six>=1.16,<1.17'"), "{install:#?}");
        assert!(!install.command.contains("text-unidecode"), "{install:#?}");
    }
}

/// tox's configuration in setup.cfg (`[tox:tox]`): its `[testenv] deps` are installed, its
/// `[testenv:lint]` ones are not. Before, only tox.ini was read and the module was skipped whole.
#[test]
fn py_tox_setupcfg_installs_the_testenv_deps_of_setup_cfg() {
    let _guard = shared();
    let (_dir, run) = passes_as_natively("py-tox-setupcfg", "setup.cfg [testenv]");
    assert!(!phase(&run.suites[0], PhaseKind::Install).command.contains("fcorr-definitely-not-a-package-lint"));
}

/// tox's configuration inline in pyproject.toml (`legacy_tox_ini`), with a `-r` file no convention
/// finds and a `-c` constraints file: the pinned version is installed, and the virtualenv follows
/// the constraints file (a bump there must not reuse the venv that holds the old pin).
#[test]
fn py_tox_pyproject_installs_legacy_tox_ini_deps_with_their_constraints() {
    let _guard = shared();
    let (dir, _) = passes_as_natively("py-tox-pyproject", "pyproject.toml [tool.tox] legacy_tox_ini [testenv]");
    let project = dir.path().join("py-tox-pyproject");
    std::fs::write(project.join("ci/constraints.txt"), "idna==3.6\n").unwrap();
    let output = fcorr().arg("run").arg(&project).arg("--out").arg(dir.path().join("out2")).arg("--json").output();
    let (again, code) = parse_run(&output.unwrap());
    let suite = &again.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1), "{suite:#?}");
    let pinned = suite.cases.iter().find(|c| c.name == "test_the_constrained_version_is_installed").unwrap();
    assert_eq!(pinned.status, CaseStatus::Failed);
    assert!(pinned.message().unwrap_or_default().contains("3.6"), "{pinned:#?}");
}

/// uv asked for by name, not found, and its install from PyPI killed by a signal: the suite's
/// error names the command and says how it ended in words, as every other exit fcorr reports.
#[test]
fn a_uv_install_killed_by_a_signal_is_told_in_words() {
    let _guard = shared();
    let tools = tempfile::tempdir().unwrap();
    let python = tools.path().join("python3");
    std::fs::write(&python, "#!/bin/sh\nkill -9 $$\n").unwrap();
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", tools.path().display(), std::env::var("PATH").unwrap());
    let cache = tools.path().join("cache");
    let env = [
        ("PATH", path.as_str()),
        ("FCORR_UV", "/nonexistent/uv"),
        ("FCORR_PYTHON_INSTALLER", "uv"),
        ("FCORR_CACHE_DIR", cache.to_str().unwrap()),
    ];
    let (_dir, run, _) = run_copy("py-pass", &env, None);
    let suite = &run.suites[0];
    let message = &suite.error.as_ref().expect("an input error").message;
    assert!(message.contains("-m pip install"), "{message}");
    assert!(message.contains("killed by signal 9 (SIGKILL)"), "{message}");
    assert!(!message.contains("Signal("), "{message}");
}
