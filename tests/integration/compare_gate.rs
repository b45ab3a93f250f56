//! Comparison and the regression gate on a real imported report (the gradle-reports fixture):
//! `fcorr run` writes results, a baseline is derived from them, and `fcorr compare` / `fcorr ci`
//! must find exactly the changes made and gate on them only with a fresh baseline.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use fcorr::compare::{BaselineInfo, Change, Comparison};
use fcorr::gate::{self, Gate};
use fcorr::model::{CaseStatus, Run, RunOutcome};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `fcorr` with no GitHub environment leaking in from the machine running the tests.
fn fcorr(dir: &Path) -> Command {
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(dir).env("FCORR_CACHE_DIR", repo().join("target/fcorr-test-cache"));
    // `crate::support::fcorr_bin` removed the GITHUB_* variables; these also change what fcorr does.
    for key in ["CI", "FCORR_ARTIFACT_NAME"] {
        cmd.env_remove(key);
    }
    cmd
}

fn write_config(dir: &Path) -> PathBuf {
    let config = dir.join("fcorr.toml");
    let fixture = repo().join("tests/fixtures/gradle-reports");
    std::fs::write(
        &config,
        format!(
            "[[suite]]\nname = \"gradle\"\nkind = \"import\"\npath = {:?}\nreports = [\"reports/test-results/test/*.xml\"]\npolicy = \"pass-rate\"\nmin-score = 0\n",
            fixture.display().to_string()
        ),
    )
    .unwrap();
    config
}

fn expected_counts() -> Value {
    let text = std::fs::read_to_string(repo().join("tests/fixtures/gradle-reports/expected.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["counts"].clone()
}

fn read_run(path: &Path) -> Run {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn compare_and_regression_gate_on_a_real_report() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    fcorr(dir.path()).args(["run", "--config"]).arg(&config).args(["--out", "out", "--json"]).assert().code(0);
    let run = read_run(&dir.path().join("out/results.json"));
    let counts = expected_counts();
    assert_eq!(run.totals.passed, counts["passed"].as_u64().unwrap());
    assert_eq!(run.totals.failed, counts["failed"].as_u64().unwrap());
    assert_eq!(run.totals.skipped, counts["skipped"].as_u64().unwrap());

    // The baseline: one of today's failures passed then, one of today's passes failed then, and
    // one of today's passing cases did not exist yet.
    let mut base = run.clone();
    let cases = &mut base.suites[0].cases;
    let in_class = |c: &fcorr::model::Case, class: &str| c.classname.as_deref().unwrap_or("").contains(class);
    let added = cases.iter().rposition(|c| c.status == CaseStatus::Passed && in_class(c, "Parser")).unwrap();
    let added_name = cases.remove(added).name;
    let newly_failing = cases.iter().position(|c| c.status == CaseStatus::Failed).unwrap();
    cases[newly_failing].status = CaseStatus::Passed;
    let newly_failing_name = cases[newly_failing].name.clone();
    let fixed = cases.iter().position(|c| c.status == CaseStatus::Passed && in_class(c, "Slug")).unwrap();
    cases[fixed].status = CaseStatus::Failed;
    base.suites[0].counts = fcorr::model::Counts::of(&base.suites[0].cases);
    base.totals = base.suites[0].counts;
    base.score = Some(100.0);
    std::fs::write(dir.path().join("base.json"), serde_json::to_string(&base).unwrap()).unwrap();

    let output = fcorr(dir.path())
        .args(["compare", "--results", "out/results.json", "--baseline", "base.json", "--json"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let comparison: Comparison = serde_json::from_slice(&output).unwrap();
    let names = |change| comparison.with_change(change).map(|c| c.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(Change::NewFailure), vec![newly_failing_name.clone()]);
    assert_eq!(names(Change::Fixed).len(), 1);
    assert_eq!(names(Change::Added), vec![added_name]);
    assert_eq!(comparison.cases[0].change, Change::NewFailure, "new failures come first");
    assert_eq!(comparison.counts_delta.total, 1);
    assert!(comparison.score_delta.unwrap() < 0.0);
    assert_eq!(comparison.baseline.source, "file:base.json");

    // fcorr ci with that baseline and the regression gate: exit 1, the new failure named.
    fcorr(dir.path())
        .args(["ci", "--config"])
        .arg(&config)
        .args(["--out", "ci-out", "--baseline", "base.json", "--fail-on", "regression"])
        .assert()
        .code(1);
    let judged = read_run(&dir.path().join("ci-out/results.json"));
    assert!(judged.comparison.is_some(), "the comparison is stored in results.json");
    assert!(
        judged
            .verdict
            .reasons
            .iter()
            .any(|r| r.gate == "regression" && r.message.contains(newly_failing_name.as_str())),
        "{:?}",
        judged.verdict.reasons
    );

    // No baseline: the regression gate is skipped, not failed.
    fcorr(dir.path())
        .args(["ci", "--config"])
        .arg(&config)
        .args(["--out", "ci-none", "--baseline", "none", "--fail-on", "regression"])
        .assert()
        .code(0);
    let judged = read_run(&dir.path().join("ci-none/results.json"));
    assert!(judged.comparison.is_none());
    assert!(judged.verdict.skipped.iter().any(|s| s.contains("no baseline")));

    // A baseline file named that does not exist is an input error naming it, before anything
    // runs (QA C15: as a warning, the `regression` gate asked for was skipped in silence).
    fcorr(dir.path())
        .args(["ci", "--config"])
        .arg(&config)
        .args(["--out", "ci-missing", "--baseline", "nope.json", "--fail-on", "regression"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("nope.json"));
    assert!(!dir.path().join("ci-missing").exists(), "nothing ran, nothing was written");

    // compare with an unreadable baseline is a usage error naming the file.
    fcorr(dir.path())
        .args(["compare", "--results", "out/results.json", "--baseline", "nope.json"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("nope.json"));

    // Regression gate: only a fresh baseline counts.
    let mut fresh = run.clone();
    fresh.comparison = Some(fcorr::compare::compare(&run, &base, BaselineInfo::default()));
    let verdict = gate::judge(&fresh, &[Gate::Regression], 0.0);
    assert_eq!(verdict.outcome, RunOutcome::Fail);
    let mut stale = run.clone();
    stale.comparison =
        Some(fcorr::compare::compare(&run, &base, BaselineInfo { commits_behind: 2, ..BaselineInfo::default() }));
    let verdict = gate::judge(&stale, &[Gate::Regression], 0.0);
    assert_eq!(verdict.outcome, RunOutcome::Pass);
    assert!(verdict.skipped[0].contains("2 commit(s) behind"), "{:?}", verdict.skipped);
}

#[test]
fn score_drop_within_tolerance_passes_the_regression_gate() {
    let mut suite = fcorr::model::Suite::new("s", "s", fcorr::model::SuiteKind::Import);
    suite.cases.push(fcorr::model::Case { name: "a".into(), status: CaseStatus::Passed, ..Default::default() });
    suite.finalize_cases();
    let mut now = Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None);
    let mut base = now.clone();
    now.score = Some(95.0);
    base.score = Some(97.0);
    now.comparison = Some(fcorr::compare::compare(&now, &base, BaselineInfo::default()));
    assert_eq!(gate::judge(&now, &[Gate::Regression], 2.5).outcome, RunOutcome::Pass);
    let verdict = gate::judge(&now, &[Gate::Regression], 1.0);
    assert_eq!(verdict.outcome, RunOutcome::Fail);
    assert!(verdict.reasons[0].message.contains("dropped 2.00 points"));
}

/// Runs `fcorr` in `dir`; returns the exit code, stdout and stderr.
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = fcorr(dir).env("NO_COLOR", "1").args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

/// QA C13, C14, C22, C26: what is gone since the baseline. A failing test filtered away, a
/// suite renamed or dropped, a baseline of another project: before, all of them read as
/// "PASS (+100 ↑)" with the vanished failures only in a collapsed list (or nowhere), and a
/// foreign baseline drove "score dropped 66.67". Now a test or suite that failed in the
/// baseline and is gone fails `regression` and is said on the terminal and in the comment; a
/// baseline sharing no suite is named as such and judged for nothing.
#[test]
fn what_vanished_since_the_baseline_is_shown_and_failing_tests_gone_fail_regression() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let case = |name: &str, failing: bool| {
        if failing {
            format!(r#"<testcase classname="m" name="{name}"><failure message="boom"/></testcase>"#)
        } else {
            format!(r#"<testcase classname="m" name="{name}"/>"#)
        }
    };
    let report = |file: &str, cases: &[(&str, bool)]| {
        let body: String = cases.iter().map(|(n, f)| case(n, *f)).collect();
        std::fs::write(d.join(file), format!("<testsuites><testsuite name=\"s\">{body}</testsuite></testsuites>"))
            .unwrap();
    };
    report("with-failure.xml", &[("t1", false), ("t2", true), ("t3", false)]);
    report("without-it.xml", &[("t1", false), ("t3", false)]);
    report("other.xml", &[("o1", false)]);
    let gates = ["--fail-on", "strict,regression"];
    assert_eq!(run_in(d, &["import", "with-failure.xml", "--name", "imp", "--out", "base"]).0, 1);

    // t2 (failing) filtered away: `regression` fails on it, the terminal and comment say so.
    let (code, stdout, stderr) = run_in(
        d,
        &[&["import", "without-it.xml", "--name", "imp", "--out", "cur", "--baseline", "base"][..], &gates].concat(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("since the baseline: 1 test gone (1 failing there)"), "{stdout}");
    assert!(stdout.contains("[regression] failing in the baseline, gone now: t2"), "{stdout}");
    let comment = std::fs::read_to_string(d.join("cur/comment.md")).unwrap();
    assert!(comment.contains("➖ **Gone since the baseline**: **1 test failing there**"), "{comment}");
    // Other report files, same settings: one configuration (the files are input, not settings).
    assert!(!comment.contains("another configuration") && !stderr.contains("another configuration"), "{comment}");

    // The suite renamed: nothing in common with the baseline. No delta, no regression judged,
    // and the suite gone named with its failing test.
    let (code, stdout, stderr) = run_in(
        d,
        &[&["import", "without-it.xml", "--name", "imp-renamed", "--out", "ren", "--baseline", "base"][..], &gates]
            .concat(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("warning: the baseline has none of this run's suites (it has imp; this run has imp-renamed)"),
        "{stderr}"
    );
    assert!(stdout.contains("since the baseline: suite imp gone (3 tests, 1 failing there)"), "{stdout}");
    let run = read_run(&d.join("ren/results.json"));
    let comparison = run.comparison.as_ref().unwrap();
    assert!(comparison.no_common_suite && comparison.score_delta.is_none());
    assert!(
        run.verdict.skipped.iter().any(|s| s.starts_with(
            "regression: the baseline has none of this run's suites (it has imp; this run has imp-renamed)"
        )),
        "{:?}",
        run.verdict.skipped
    );
    for report in ["comment.md", "summary.md"] {
        let text = std::fs::read_to_string(d.join("ren").join(report)).unwrap();
        assert!(!text.contains("+100"), "{report}: {text}");
        assert!(
            text.contains("⚠️ The baseline has none of this run's suites (it has imp; this run has imp-renamed)"),
            "{report}: {text}"
        );
        assert!(text.contains("suite `imp` (3 tests, **1 failing there**)"), "{report}: {text}");
    }

    // Two suites in the baseline, one dropped with its failure: `regression` names the suite.
    assert_eq!(run_in(d, &["import", "other.xml", "--name", "other", "--out", "part-other"]).0, 0);
    assert_eq!(run_in(d, &["merge", "base", "part-other", "--out", "base2"]).0, 1);
    let (code, stdout, stderr) = run_in(
        d,
        &[&["import", "other.xml", "--name", "other", "--out", "cur2", "--baseline", "base2"][..], &gates].concat(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("suite imp is gone; 1 of its tests failed in the baseline"), "{stdout}");

    // A baseline file named that cannot be read is an input error naming it, before anything
    // is written (QA C15: it was a warning, and the comment said "No baseline to compare with").
    let text = std::fs::read_to_string(d.join("base/results.json")).unwrap();
    std::fs::write(d.join("trunc.json"), &text[..300]).unwrap();
    let (code, _, stderr) =
        run_in(d, &[&["import", "without-it.xml", "--out", "cur3", "--baseline", "trunc.json"][..], &gates].concat());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("trunc.json: line ") && stderr.contains("not an fcorr results file"), "{stderr}");
    assert!(!d.join("cur3").exists(), "nothing was written");
}

/// A baseline sharing no suite with the run (its only suite renamed) skips `regression`. The
/// user must see that plainly wherever the verdict is read, with both sides' suites named so
/// the rename shows. Before, the verdict on the terminal said PASS and only that a suite was
/// gone (`fcorr report` said nothing more at all), and summary.md and comment.md named the
/// baseline's suites but not the run's.
#[test]
fn a_baseline_sharing_no_suite_says_everywhere_that_regression_was_not_checked_naming_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("r.xml"),
        r#"<testsuite name="s"><testcase classname="m" name="t1"/><testcase classname="m" name="t2"><failure message="boom"/></testcase></testsuite>"#,
    )
    .unwrap();
    assert_eq!(run_in(d, &["import", "r.xml", "--name", "old-name", "--out", "base"]).0, 1);
    let (code, stdout, stderr) = run_in(
        d,
        &["import", "r.xml", "--name", "new-name", "--out", "ren", "--baseline", "base", "--fail-on", "regression"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let run = read_run(&d.join("ren/results.json"));
    assert!(run.comparison.as_ref().unwrap().no_common_suite);
    let said = "the baseline has none of this run's suites (it has old-name; this run has new-name): it is from \
                another project or configuration, so regression is not checked against it";
    // The verdict on the terminal, as the run printed it and as `fcorr report` prints it again.
    let (code, again, stderr_again) = run_in(d, &["report", "ren", "--out", "ren2"]);
    assert_eq!(code, 0, "{again}{stderr_again}");
    for (what, text) in [("import", &stdout), ("report", &again)] {
        let verdict = &text[text.find("PASS").unwrap_or_else(|| panic!("{what}: {text}"))..];
        assert!(verdict.contains(&format!("\n  warning: {said}")), "{what}: {verdict}");
    }
    for report in ["ren/summary.md", "ren/comment.md", "ren2/summary.md", "ren2/comment.md"] {
        let text = std::fs::read_to_string(d.join(report)).unwrap();
        assert!(text.contains(&format!("⚠️ T{}", &said[1..])), "{report}: {text}");
    }
    let html = std::fs::read_to_string(d.join("ren/report.html")).unwrap();
    assert!(html.contains(&format!("<p class=\"caution\">⚠ T{}", &said[1..].replace('\'', "&#39;"))), "report.html");
}
