//! `--stream` with `--baseline` (issue 27): a streamed import or merge compared with a baseline
//! gives the comparison (new failures, fixed, removed, score delta), slowdowns and history the
//! in-memory import or merge gives, though its cases are read back from disk for it.

use std::path::Path;

use crate::stream::{assert_same_reports, fcorr, junit_failing};

/// The next run of the tests a generated report holds: 40 passing cases break, 5 passing cases
/// are gone, 30 failing cases are fixed and 20 cases take seconds instead of milliseconds.
fn next_run(report: &Path) {
    let text = std::fs::read_to_string(report).unwrap();
    let passing = regex::Regex::new(r"(<testcase [^>]*>\n\s*)<system-out>").unwrap();
    let text = passing.replacen(&text, 40, "${1}<error message=\"broke\" type=\"E\">broke</error>\n      <system-out>");
    let gone =
        regex::Regex::new(r"    <testcase [^>]*>\n      <system-out>[^<]*</system-out>\n    </testcase>\n").unwrap();
    let text = gone.replacen(&text, 5, "");
    let failure = regex::Regex::new(r"(?s)<failure [^>]*>.*?</failure>\n\s*").unwrap();
    let text = failure.replacen(&text, 30, "");
    let slower = regex::Regex::new(r#" time="0\.0"#).unwrap();
    let text = slower.replacen(&text, 20, r#" time="5.0"#);
    std::fs::write(report, text.as_bytes()).unwrap();
}

/// [`assert_same_reports`], with what depends on when the two commands ran taken out of both
/// first: this run's wall time against the baseline's (ctrf.json's
/// `insights.averageRunDuration`, the Markdown's `time +1.2s ↑` and its Duration row) and the
/// minute each run started (the trend chart's axis).
fn assert_same_compared_reports(memory: &Path, streamed: &Path) {
    let time_delta = regex::Regex::new(r"(time |\| Duration \| [^|]*\| )(±0|[-+][^↑↓|]*[↑↓])").unwrap();
    let minute = regex::Regex::new(r#""\d\d-\d\d \d\d:\d\d""#).unwrap();
    for dir in [memory, streamed] {
        for name in ["summary.md", "comment.md"] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let text = time_delta.replace_all(&text, "${1}Δ");
            std::fs::write(dir.join(name), minute.replace_all(&text, "\"MM-DD hh:mm\"").as_bytes()).unwrap();
        }
        let path = dir.join("ctrf.json");
        let mut ctrf: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let insights = ctrf["insights"].as_object_mut().expect("ctrf.json has insights");
        assert!(insights.remove("averageRunDuration").is_some());
        std::fs::write(&path, serde_json::to_vec_pretty(&ctrf).unwrap()).unwrap();
    }
    assert_same_reports(memory, streamed);
}

fn run_ok(cwd: &Path, args: &[&str]) {
    let output = fcorr(cwd).args(args).args(["--fail-on", "none"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// The comparison found each kind of change `next_run` made, the slowdowns, and two runs of
/// history with cases red in both: the test compares something, not two empty comparisons.
fn assert_compared(results: &Path, removed: usize) {
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(results).unwrap()).unwrap();
    let changes = run["comparison"]["cases"].as_array().expect("a comparison");
    let count = |kind: &str| changes.iter().filter(|c| c["change"] == kind).count();
    assert!(count("new-failure") >= 40, "{}", count("new-failure"));
    assert!(count("fixed") >= 30, "{}", count("fixed"));
    assert_eq!(count("removed"), removed);
    assert!(run["comparison"]["score_delta"].is_number() || run["comparison"]["pass_rate_delta"].is_number());
    assert!(!run["timing"]["slowdowns"].as_array().unwrap().is_empty());
    assert_eq!(run["history"]["runs"].as_array().unwrap().len(), 2);
    assert!(run["history"]["failing_total"].as_u64().unwrap() > 100);
}

#[test]
fn a_streamed_import_compares_with_a_baseline_as_the_in_memory_import_does() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    // 28,000 cases: more than summary.md lists one by one, so both list the failures only.
    junit_failing(&cwd.join("a.xml"), 14_000, 700, 1);
    junit_failing(&cwd.join("b.xml"), 14_000, 700, 2);
    run_ok(cwd, &["import", "a.xml", "b.xml", "--out", "base", "--format", "json"]);
    next_run(&cwd.join("a.xml"));
    next_run(&cwd.join("b.xml"));
    for (out, stream) in [("memory", false), ("streamed", true)] {
        let mut args = vec!["import", "a.xml", "b.xml", "--out", out, "--baseline", "base/results.json"];
        args.extend(stream.then_some("--stream"));
        run_ok(cwd, &args);
    }
    assert_same_compared_reports(&cwd.join("memory"), &cwd.join("streamed"));
    assert_compared(&cwd.join("streamed/results.json"), 10);
}

#[test]
fn a_streamed_merge_compares_with_a_baseline_as_the_in_memory_merge_does() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    // 27,000 cases merged, as above.
    junit_failing(&cwd.join("cell.xml"), 9_000, 500, 3);
    // Three matrix cells of the same tests, merged for the baseline, then their next run.
    let cells = |name: &str| {
        run_ok(cwd, &["import", "cell.xml", "--out", "cell", "--format", "json"]);
        for i in 1..=3 {
            let cell = cwd.join(format!("{name}/c{i}"));
            std::fs::create_dir_all(&cell).unwrap();
            std::fs::copy(cwd.join("cell/results.json"), cell.join("results.json")).unwrap();
        }
    };
    cells("base-cells");
    run_ok(cwd, &["merge", "base-cells/*", "--out", "base", "--format", "json"]);
    next_run(&cwd.join("cell.xml"));
    cells("cells");
    for (out, stream) in [("memory", false), ("streamed", true)] {
        let mut args = vec!["merge", "cells/*", "--out", out, "--baseline", "base/results.json"];
        args.extend(stream.then_some("--stream"));
        run_ok(cwd, &args);
    }
    assert_same_compared_reports(&cwd.join("memory"), &cwd.join("streamed"));
    assert_compared(&cwd.join("streamed/results.json"), 15);
}
