//! History and quarantine end to end through the real binary: three `fcorr import`s of JUnit
//! reports with changing outcomes, each with the previous run's results.json as `--baseline`,
//! in a git checkout committed between runs (so each run has its own commit); `fcorr merge` of
//! parts with history; quarantine lists in fcorr.toml and a quarantine file against the gates.

use std::path::Path;

use fcorr::model::{CaseStatus, Run};

fn fixture(name: &str) -> std::path::PathBuf {
    crate::support::fixture("history").join(name)
}

/// `git` in `dir` with a fixed identity and dates, so commit ids are the same on every machine.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=fcorr", "-c", "user.email=fcorr@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Commits `report` as `report.xml` and imports it with `baseline`, into `out`; returns the exit
/// code, the run and the comment.
fn import_run(dir: &Path, report: &str, out: &str, baseline: Option<&str>, extra: &[&str]) -> (i32, Run, String) {
    import_suite(dir, "app", report, out, baseline, extra)
}

/// [`import_run`] as suite `name`.
fn import_suite(
    dir: &Path,
    name: &str,
    report: &str,
    out: &str,
    baseline: Option<&str>,
    extra: &[&str],
) -> (i32, Run, String) {
    std::fs::copy(fixture(report), dir.join("report.xml")).unwrap();
    git(dir, &["add", "report.xml"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", report]);
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(dir).env("NO_COLOR", "1").args(["import", "report.xml", "--name", name, "--out", out]);
    if let Some(baseline) = baseline {
        cmd.args(["--baseline", baseline]);
    }
    let output = cmd.args(extra).output().unwrap();
    let code = output.status.code().unwrap();
    let results = dir.join(out).join("results.json");
    let run: Run = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let comment = std::fs::read_to_string(dir.join(out).join("comment.md")).unwrap();
    (code, run, comment)
}

/// A git checkout in a temporary directory.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    dir
}

/// What the comment says of the history: the failing and flaky tests (with their record) and
/// the history's own sections, each from its start to the next section or collapsed block.
fn sections(comment: &str) -> String {
    let part = |start: usize| {
        let rest = &comment[start..];
        let end = ["\n#### ", "\n<details><summary>"]
            .iter()
            .filter_map(|m| rest[1..].find(m).map(|i| i + 2))
            .min()
            .unwrap_or(rest.len());
        rest[..end].to_string()
    };
    ["#### Failing tests", "#### 🧊 Quarantined", "<details><summary>🎲"]
        .iter()
        .filter_map(|mark| comment.find(mark))
        .map(part)
        .collect::<Vec<_>>()
        .join("…\n")
}

#[test]
fn three_chained_runs_carry_history_flake_rate_and_failing_since() {
    let dir = checkout();
    let d = dir.path();
    let (_, first, _) = import_run(d, "run1.xml", "out1", None, &["--fail-on", "none"]);
    let history = first.history.as_ref().unwrap();
    assert_eq!(history.runs.len(), 1);
    assert_eq!(history.cases["app"], "p p p p p");
    let sha1 = git(d, &["rev-parse", "HEAD"]);

    let (_, _, _) = import_run(d, "run2.xml", "out2", Some("out1/results.json"), &["--fail-on", "none"]);
    let sha2 = git(d, &["rev-parse", "HEAD"]);
    let (code, run, comment) = import_run(d, "run3.xml", "out3", Some("out2"), &["--fail-on", "strict"]);
    let sha3 = git(d, &["rev-parse", "HEAD"]);
    assert_eq!(code, 1, "test_broken fails the strict gate");

    let history = run.history.as_ref().unwrap();
    let shas: Vec<&str> = history.runs.iter().map(|r| r.sha.as_deref().unwrap()).collect();
    assert_eq!(shas, [sha1.as_str(), sha2.as_str(), sha3.as_str()]);
    assert_eq!(
        history.runs.iter().map(|r| (r.total, r.passed, r.failed)).collect::<Vec<_>>(),
        [(5, 5, 0), (5, 2, 3), (5, 4, 1)]
    );
    // Cases in the suite's order: stable, flip, broken, retry, hostile.
    assert_eq!(history.cases["app"], "ppp pfp pff ppF pfp");
    let flaky: Vec<(&str, u32, u32, bool)> =
        history.flaky.iter().map(|f| (f.name.as_str(), f.failed, f.runs, f.newly)).collect();
    assert_eq!(flaky, [("test_flip", 1, 3, true), ("test_retry", 1, 3, true), ("test_<b>|pipe`tick`", 1, 3, true)]);
    assert_eq!(history.failing.len(), 1);
    let failing = &history.failing[0];
    assert_eq!(
        (failing.name.as_str(), failing.runs, failing.since_sha.as_deref()),
        ("test_broken", 2, Some(sha2.as_str()))
    );
    let retry = run.suites[0].cases.iter().find(|c| c.name == "test_retry").unwrap();
    assert_eq!((retry.status, retry.extra().retries), (CaseStatus::Flaky, 1));

    assert!(comment.contains("**🔁 Flaky: passed on a retry (1)**"), "{comment}");
    assert!(comment.contains("_passed after 1 retry; failed 1 of the last 3 runs (newly flaky)_"), "{comment}");
    assert!(comment.contains("🎲 Flaky in recent runs (2)"), "{comment}");
    assert!(comment.contains("`test_flip`: failed 1 of the last 3 runs (newly flaky); passed this time"), "{comment}");
    let short2 = &sha2[..7];
    assert!(comment.contains(&format!("_failing for 2 runs, since `{short2}`_")), "{comment}");
    insta::assert_snapshot!("history_sections_chained", sections(&comment));

    // The history validates against the published schema.
    let schema: serde_json::Value = serde_json::from_str(&fcorr::commands::schema::schema_json()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out3/results.json")).unwrap()).unwrap();
    let errors: Vec<String> =
        validator.iter_errors(&written).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(written["history"]["cases"]["app"].is_string());
}

#[test]
fn a_baseline_without_history_starts_it_from_its_own_outcomes() {
    let dir = checkout();
    let d = dir.path();
    import_run(d, "run1.xml", "out1", None, &["--fail-on", "none"]);
    // Results written before history existed: the same file without `history`.
    let path = d.join("out1/results.json");
    let mut old: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    old.as_object_mut().unwrap().remove("history");
    std::fs::write(&path, old.to_string()).unwrap();
    let (_, run, _) = import_run(d, "run2.xml", "out2", Some("out1/results.json"), &["--fail-on", "none"]);
    let history = run.history.unwrap();
    assert_eq!(history.runs.len(), 2);
    assert_eq!(history.cases["app"], "pp pf pf pp pf");
}

#[test]
fn merged_parts_do_not_count_a_run_twice() {
    let dir = checkout();
    let d = dir.path();
    import_suite(d, "a", "run1.xml", "a1", None, &["--fail-on", "none"]);
    import_suite(d, "b", "run1.xml", "b1", None, &["--fail-on", "none"]);
    import_suite(d, "a", "run2.xml", "cells/a", Some("a1"), &["--fail-on", "none"]);
    import_suite(d, "b", "run2.xml", "cells/b", Some("b1"), &["--fail-on", "none"]);
    let out = crate::support::fcorr_bin()
        .current_dir(d)
        .args(["merge", "cells/a", "cells/b", "--fail-on", "none", "--out", "merged", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let merged: Run = serde_json::from_str(&std::fs::read_to_string(d.join("merged/results.json")).unwrap()).unwrap();
    let history = merged.history.unwrap();
    // Two runs (run1, then this merged run), not one per part.
    assert_eq!(history.runs.len(), 2);
    assert_eq!((history.runs[1].total, history.runs[1].failed), (10, 6));
    assert_eq!(history.cases["a"], "pp pf pf pp pf");
    assert_eq!(history.cases["b"], "pp pf pf pp pf");
}

/// `fcorr run` of an import suite with `config` (fcorr.toml text) in a directory holding run3.xml.
fn run_with_config(config: &str, files: &[(&str, &str)], gates: &str) -> (i32, Run, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(fixture("run3.xml"), d.join("report.xml")).unwrap();
    std::fs::write(d.join("fcorr.toml"), config).unwrap();
    for (name, text) in files {
        std::fs::write(d.join(name), text).unwrap();
    }
    let out = crate::support::fcorr_bin()
        .current_dir(d)
        .env("NO_COLOR", "1")
        .args(["run", "--config", "fcorr.toml", "--out", "out", "--fail-on", gates])
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let results = d.join("out/results.json");
    assert!(results.is_file(), "no results: {}", String::from_utf8_lossy(&out.stderr));
    let run: Run = serde_json::from_str(&std::fs::read_to_string(results).unwrap()).unwrap();
    let comment = std::fs::read_to_string(d.join("out/comment.md")).unwrap();
    (code, run, comment)
}

const SUITE: &str = "[[suite]]\nname = \"app\"\nkind = \"import\"\nreports = [\"report.xml\"]\n";

#[test]
fn a_quarantined_failure_passes_the_gates_and_is_listed_apart() {
    let config = format!("quarantine = [\"tests.test_app.test_broken\"]\n\n{SUITE}critical = true\n");
    let (code, run, comment) = run_with_config(&config, &[], "strict,critical,score<100");
    assert_eq!(code, 0, "{comment}");
    let broken = run.suites[0].cases.iter().find(|c| c.name == "test_broken").unwrap();
    assert!(broken.extra().quarantined && broken.status == CaseStatus::Failed);
    // Shown as it is: the failure counts in the score and pass rate reported.
    assert_eq!(run.suites[0].counts.failed, 1);
    assert_eq!(run.suites[0].score.value, 0.0);
    assert!(run.verdict.skipped.iter().any(|s| s.contains("1 quarantined failure(s) reported but not gated")));
    assert!(comment.contains("#### 🧊 Quarantined (1)"), "{comment}");
    assert!(
        comment.contains("1 quarantined test failed: listed with the failures, not counted by any gate."),
        "{comment}"
    );
    assert!(comment.contains("_quarantined: reported, not gated_"), "{comment}");
    insta::assert_snapshot!("history_sections_quarantine", sections(&comment));
}

#[test]
fn a_failure_outside_the_quarantine_still_fails_the_gate() {
    let config = format!("quarantine = [\"test_flip\"]\n\n{SUITE}");
    let (code, run, comment) = run_with_config(&config, &[], "strict");
    assert_eq!(code, 1, "{comment}");
    assert!(run.verdict.reasons.iter().any(|r| r.gate == "strict"));
    assert!(comment.contains("#### 🧊 Quarantined (1)"), "{comment}");
}

#[test]
fn suite_lists_and_quarantine_files_quarantine_too() {
    // Per suite, by glob.
    let config = format!("{SUITE}quarantine = [\"*broken\"]\n");
    let (code, _, _) = run_with_config(&config, &[], "strict");
    assert_eq!(code, 0);
    // A file with a comment, a blank line and a case id.
    let (_, run, _) = run_with_config(SUITE, &[], "none");
    let id = run.suites[0].cases.iter().find(|c| c.name == "test_broken").unwrap().id.clone();
    let config = format!("quarantine-file = \"quarantine.txt\"\n\n{SUITE}");
    let list = format!("# known broken, issue 12\n\n{id}\n");
    let (code, run, _) = run_with_config(&config, &[("quarantine.txt", &list)], "strict");
    assert_eq!(code, 0);
    assert!(run.suites[0].cases.iter().any(|c| c.extra().quarantined && c.id == id));
}

#[test]
fn bad_quarantine_entries_are_config_errors_naming_the_file() {
    let config = format!("quarantine-file = \"missing.txt\"\n\n{SUITE}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fcorr.toml"), config).unwrap();
    let out =
        crate::support::fcorr_bin().current_dir(dir.path()).args(["run", "--config", "fcorr.toml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("fcorr.toml") && stderr.contains("missing.txt"), "{stderr}");

    std::fs::write(dir.path().join("fcorr.toml"), format!("quarantine-file = \"q.txt\"\n\n{SUITE}")).unwrap();
    std::fs::write(dir.path().join("q.txt"), "ok_name\ntest_[\n").unwrap();
    let out =
        crate::support::fcorr_bin().current_dir(dir.path()).args(["run", "--config", "fcorr.toml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("q.txt") && stderr.contains("line 2"), "{stderr}");
}
