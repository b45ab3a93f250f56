//! End-to-end tests of `fcorr run` through the generic `command` runner: the whole pipeline
//! (plan → execute → collect → score → report → gate) with real processes and real report files,
//! plus the error paths a user hits first (bad config, missing paths, hung commands).

use std::path::Path;

use fcorr::model::{CaseStatus, Run, RunOutcome, SuiteErrorKind, SuiteStatus};

/// A JUnit report with the given (name, status) cases, as a test tool would write it.
fn junit(cases: &[(&str, &str)]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"scripted\">\n");
    for (name, status) in cases {
        match *status {
            "failed" => xml.push_str(&format!(
                "<testcase classname=\"calc\" name=\"{name}\" file=\"tests/test_calc.py\" line=\"7\"><failure message=\"assert 3 == 4\">trace</failure></testcase>\n"
            )),
            "skipped" => xml.push_str(&format!("<testcase classname=\"calc\" name=\"{name}\"><skipped/></testcase>\n")),
            _ => xml.push_str(&format!("<testcase classname=\"calc\" name=\"{name}\" time=\"0.01\"/>\n")),
        }
    }
    xml.push_str("</testsuite></testsuites>\n");
    xml
}

/// A project whose test command copies a prepared report into place and exits with `code`.
fn scripted_project(dir: &Path, name: &str, report: Option<&str>, code: i32) {
    let project = dir.join(name);
    std::fs::create_dir_all(&project).unwrap();
    let script = match report {
        Some(xml) => {
            std::fs::write(project.join("prepared.xml"), xml).unwrap();
            format!("cp prepared.xml report.xml; exit {code}")
        }
        None => format!("echo 'ran, but wrote no report'; exit {code}"),
    };
    std::fs::write(project.join("test.sh"), script).unwrap();
}

fn suite_toml(name: &str) -> String {
    format!(
        "[[suite]]\nname = \"{name}\"\npath = \"{name}\"\nrunner = \"command\"\ncommands = {{ test = \"sh test.sh\" }}\nreports = [\"report.xml\"]\n"
    )
}

fn run_fcorr(dir: &Path, config: &str, extra: &[&str]) -> (i32, Run, String) {
    std::fs::write(dir.join("fcorr.toml"), config).unwrap();
    let out = dir.join("out");
    let output = crate::support::fcorr_bin()
        .current_dir(dir)
        .args(["run", "--config", "fcorr.toml", "--json", "--out"])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let run: Run = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("bad JSON ({e}): {stdout}\n{stderr}"));
    (output.status.code().unwrap_or(-1), run, stderr)
}

#[test]
fn passing_suite_scores_100_and_results_match_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    scripted_project(
        dir.path(),
        "calc",
        Some(&junit(&[("test_add", "passed"), ("test_sub", "passed"), ("test_div", "skipped")])),
        0,
    );
    let (code, run, _) = run_fcorr(dir.path(), &suite_toml("calc"), &[]);
    assert_eq!(code, 0);
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Passed);
    assert_eq!((suite.counts.passed, suite.counts.skipped, suite.counts.total), (2, 1, 3));
    assert_eq!(suite.score.value, 100.0);
    assert_eq!(run.verdict.outcome, RunOutcome::Pass);

    // The results file on disk is the same run and validates against the published schema.
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/results.json")).unwrap()).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&fcorr::commands::schema::schema_json()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> =
        validator.iter_errors(&written).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "results.json does not match the schema: {errors:#?}");
    assert!(dir.path().join("out/logs/calc.log").is_file());
}

#[test]
fn committed_schema_matches_the_model() {
    let committed =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results.schema.json")).unwrap();
    let generated = fcorr::commands::schema::schema_json();
    assert_eq!(
        committed.trim(),
        generated.trim(),
        "docs/results.schema.json is stale: run `cargo run -- schema > docs/results.schema.json`"
    );
}

#[test]
fn failing_case_fails_strict_gate_with_location() {
    let dir = tempfile::tempdir().unwrap();
    scripted_project(dir.path(), "calc", Some(&junit(&[("test_add", "passed"), ("test_mul", "failed")])), 1);
    let (code, run, _) = run_fcorr(dir.path(), &suite_toml("calc"), &[]);
    assert_eq!(code, 1);
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed);
    let failed = suite.cases.iter().find(|c| c.status == CaseStatus::Failed).unwrap();
    assert_eq!((failed.file.as_deref(), failed.line), (Some("tests/test_calc.py"), Some(7)));
    assert_eq!(failed.message(), Some("assert 3 == 4"));
    assert!(run.verdict.reasons.iter().any(|r| r.gate == "strict"));
}

#[test]
fn pass_rate_policy_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [("a", "passed"), ("b", "passed"), ("c", "passed"), ("d", "failed")];
    scripted_project(dir.path(), "calc", Some(&junit(&cases)), 1);
    let (_, run, _) = run_fcorr(dir.path(), &suite_toml("calc"), &["--policy", "pass-rate"]);
    assert_eq!(run.suites[0].score.value, 75.0);
}

#[test]
fn no_report_is_an_error_never_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    scripted_project(dir.path(), "calc", None, 0);
    let (code, run, _) = run_fcorr(dir.path(), &suite_toml("calc"), &[]);
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Error);
    assert_eq!(suite.error.as_ref().unwrap().kind, SuiteErrorKind::NoResults);
    assert!(suite.error.as_ref().unwrap().message.contains("no test results found"));
    // Named for what happened: the process ended before any test was reported, not "succeeded".
    let message = &suite.error.as_ref().unwrap().message;
    // The scripted test announces no count, so none is claimed.
    assert!(message.contains("the test process exited with code 0 before reporting any test result"), "{message}");
    assert_eq!(suite.score.value, 0.0);
    assert_eq!(code, 1);
}

#[test]
fn failing_exit_with_only_passes_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    scripted_project(dir.path(), "calc", Some(&junit(&[("a", "passed")])), 2);
    let (_, run, _) = run_fcorr(dir.path(), &suite_toml("calc"), &[]);
    assert_eq!(run.suites[0].status, SuiteStatus::Error);
    assert!(run.suites[0].error.as_ref().unwrap().message.contains("exited with code 2"));
}

#[test]
fn a_bad_suite_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    scripted_project(dir.path(), "calc", Some(&junit(&[("a", "passed")])), 0);
    let config = format!("{}\n[[suite]]\nname = \"ghost\"\npath = \"does/not/exist\"\n", suite_toml("calc"));
    let (code, run, _) = run_fcorr(dir.path(), &config, &[]);
    assert_eq!(run.suites.len(), 2);
    assert_eq!(run.suites[0].status, SuiteStatus::Passed);
    assert_eq!(run.suites[1].status, SuiteStatus::Error);
    assert!(run.suites[1].error.as_ref().unwrap().message.contains("does/not/exist"));
    // Bad input is a usage error (exit 2), reported after every suite ran.
    assert_eq!(code, 2);
}

#[test]
fn hung_test_command_times_out() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("slow")).unwrap();
    let config =
        "[[suite]]\nname = \"slow\"\npath = \"slow\"\nrunner = \"command\"\ncommands = { test = \"sleep 60\" }\n";
    let started = std::time::Instant::now();
    let (code, run, _) = run_fcorr(dir.path(), config, &["--timeout-test", "1"]);
    assert_eq!(run.suites[0].status, SuiteStatus::Timeout);
    assert_eq!(code, 1);
    // 1 s timeout + at most the 5 s grace: far below the 60 s sleep.
    assert!(started.elapsed().as_secs() < 30);
}

#[test]
fn import_suites_read_globs_relative_to_the_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("reports")).unwrap();
    std::fs::write(dir.path().join("reports/a.xml"), junit(&[("x", "passed")])).unwrap();
    std::fs::write(dir.path().join("reports/b.xml"), junit(&[("y", "failed")])).unwrap();
    std::fs::write(dir.path().join("reports/broken.xml"), "<testsuite><testcase name=").unwrap();
    let config =
        "[[suite]]\nname = \"imported\"\nkind = \"import\"\nreports = [\"reports/*.xml\"]\npolicy = \"pass-rate\"\n";
    let (_, run, _) = run_fcorr(dir.path(), config, &[]);
    let suite = &run.suites[0];
    // The broken file's results are unknown: an error case that names it, and the suite's results
    // are incomplete, so it scores 0 (the 1 of 2 that were read is no pass rate of the whole).
    assert_eq!((suite.counts.passed, suite.counts.failed, suite.counts.error), (1, 1, 1));
    assert!(suite.cases.iter().any(|c| c.name == "[unreadable report] reports/broken.xml"), "{:?}", suite.cases);
    assert_eq!(suite.score.value, 0.0);
    assert!(
        run.verdict.reasons.iter().any(|r| r.message.contains("results are incomplete: `[unreadable report]")),
        "{:?}",
        run.verdict.reasons
    );
    assert!(suite.diagnostics.iter().any(|d| d.message.contains("broken.xml")), "{:?}", suite.diagnostics);
}

#[test]
fn import_suites_leave_out_what_a_bang_pattern_matches() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("reports/legacy")).unwrap();
    std::fs::write(dir.path().join("reports/a.xml"), junit(&[("x", "passed")])).unwrap();
    std::fs::write(dir.path().join("reports/legacy/old.xml"), junit(&[("y", "failed")])).unwrap();
    std::fs::create_dir_all(dir.path().join("other")).unwrap();
    std::fs::write(dir.path().join("other/z.xml"), junit(&[("z", "failed")])).unwrap();
    // The `!` entry stands first: it applies to every other pattern wherever it is.
    let config = "[[suite]]\nname = \"imported\"\nkind = \"import\"\n\
                  reports = [\"!reports/legacy/**\", \"reports/**/*.xml\", \"other/*.xml\", \"!other/*.xml\"]\n\
                  policy = \"pass-rate\"\n";
    let (_, run, _) = run_fcorr(dir.path(), config, &[]);
    let suite = &run.suites[0];
    let names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["x"], "legacy/old.xml and other/z.xml are excluded: {:?}", suite.diagnostics);
    let told = suite
        .diagnostics
        .iter()
        .any(|d| d.message.contains("every report file matching other/*.xml (1) is excluded by a `!` pattern"));
    assert!(told, "a pattern whose every file is excluded says so: {:?}", suite.diagnostics);

    // Only `!` entries find nothing: a config error at its line, before anything runs.
    std::fs::write(
        dir.path().join("fcorr.toml"),
        "[[suite]]\nname = \"imported\"\nkind = \"import\"\nreports = [\"!reports/legacy/**\"]\n",
    )
    .unwrap();
    let output = crate::support::fcorr_bin()
        .current_dir(dir.path())
        .args(["run", "--config", "fcorr.toml", "--out", "only-bang"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("fcorr.toml") && stderr.contains("line 4") && stderr.contains("only `!` patterns"),
        "{stderr}"
    );
    assert!(!dir.path().join("only-bang").exists());
}

#[test]
fn malformed_config_names_file_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fcorr.toml"), "[[suite]]\npath = \"x\"\npolicy = \"lenient\"\n").unwrap();
    let output =
        crate::support::fcorr_bin().current_dir(dir.path()).args(["run", "--config", "fcorr.toml"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("fcorr.toml") && stderr.contains("line 3"), "{stderr}");
}

/// Runs fcorr in `dir` with `args`, without the GitHub variables of the machine running the tests.
fn fcorr_in(dir: &Path, args: &[&str]) -> (i32, String) {
    let output = crate::support::fcorr_bin().current_dir(dir).args(args).output().unwrap();
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn bad_color_is_a_usage_error_on_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.xml"), junit(&[("x", "passed")])).unwrap();
    for args in [
        &["run", ".", "--color", "bogus"][..],
        &["ci", ".", "--color", "bogus"],
        &["import", "r.xml", "--color", "bogus"],
        &["merge", "out", "--color", "bogus"],
        &["report", "out", "--color", "bogus"],
    ] {
        let (code, stderr) = fcorr_in(dir.path(), args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("bogus"), "{args:?}: {stderr}");
    }
    assert!(!dir.path().join("fcorr-out").exists(), "nothing may run before the arguments are checked");
}

#[test]
fn config_values_found_only_after_running_are_now_rejected_first() {
    let dir = tempfile::tempdir().unwrap();
    scripted_project(dir.path(), "a", Some(&junit(&[("x", "passed")])), 0);
    for (extra, line, message) in [
        ("[report]\ntemplates = \"no-such-dir\"\n", 9, "no-such-dir is not a directory"),
        ("[report]\nformats = [\"json\", \"pdf\"]\n", 9, "unknown variant `pdf`, expected one of `json`"),
        ("[github]\ncomment = \"sometimes\"\n", 9, "unknown variant `sometimes`, expected one of `update`"),
        ("[github]\ncomment-when = \"rarely\"\n", 9, "unknown variant `rarely`, expected one of `always`"),
        ("[github]\ncomment-body = \"most\"\n", 9, "unknown variant `most`, expected one of `full`"),
        ("[gate]\nfail-on = [\"score<NaN\"]\n", 9, "score<NaN"),
    ] {
        std::fs::write(dir.path().join("fcorr.toml"), format!("{}\n{extra}", suite_toml("a"))).unwrap();
        let (code, stderr) = fcorr_in(dir.path(), &["run", "--config", "fcorr.toml", "--out", "out"]);
        assert_eq!(code, 2, "{extra}: {stderr}");
        assert!(stderr.contains(&format!("fcorr.toml: line {line}")) && stderr.contains(message), "{extra}: {stderr}");
        assert!(!dir.path().join("out").exists(), "{extra}: suites ran before the config was checked");
    }
}

#[test]
fn a_missing_suite_path_names_the_config_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = "[run]\njobs = 1\n\n[[suite]]\nname = \"gone\"\npath = \"not-here\"\n";
    let (code, run, _) = run_fcorr(dir.path(), config, &[]);
    assert_eq!(code, 2);
    let message = &run.suites[0].error.as_ref().unwrap().message;
    assert!(message.contains("not-here") && message.contains("fcorr.toml:4"), "{message}");
}

#[test]
fn run_without_arguments_uses_fcorr_toml_then_github_fcorr_toml_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    scripted_project(dir.path(), "a", Some(&junit(&[("x", "passed")])), 0);
    std::fs::create_dir_all(dir.path().join(".github")).unwrap();
    // .github/fcorr.toml paths are relative to .github/.
    let nested = suite_toml("a").replace("path = \"a\"", "path = \"../a\"");
    std::fs::write(dir.path().join(".github/fcorr.toml"), nested).unwrap();
    let (code, stderr) = fcorr_in(dir.path(), &["run", "--out", "out"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("using .github/fcorr.toml"), "{stderr}");

    std::fs::write(dir.path().join("fcorr.toml"), suite_toml("a").replace("name = \"a\"", "name = \"top\"")).unwrap();
    let (code, stderr) = fcorr_in(dir.path(), &["run", "--out", "out", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("using fcorr.toml"), "{stderr}");
    let run: Run =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/results.json")).unwrap()).unwrap();
    assert_eq!(run.suites[0].name, "top");

    // Paths on the command line win: no config is picked up.
    let (_, stderr) = fcorr_in(dir.path(), &["run", "a", "--out", "out2"]);
    assert!(!stderr.contains("using"), "{stderr}");
}

#[test]
fn every_enumerated_flag_lists_its_possible_values_in_errors_and_help() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.xml"), junit(&[("x", "passed")])).unwrap();
    let formats = "json, junit, ctrf, summary, comment, html, all";
    for (args, values) in [
        (&["run", ".", "--format", "pdf"][..], formats),
        (&["report", "out", "--format", "pdf"], formats),
        (&["import", "r.xml", "--format", "pdf"], formats),
        (&["run", ".", "--color", "sometimes"], "auto, always, never"),
        (&["run", ".", "--policy", "lenient"], "strict, pass-rate, weighted, graded"),
        (&["import", "r.xml", "--policy", "lenient"], "strict, pass-rate, weighted, graded"),
        (&["run", ".", "--retries-policy", "maybe"], "pass-on-retry, fail"),
        (&["ci", ".", "--comment", "sometimes"], "update, recreate, off"),
        (&["publish", "out", "--comment-when", "rarely"], "always, on-failure, on-change"),
        (&["ci", ".", "--comment-body", "most"], "full, failures, summary"),
        (&["ci", ".", "--files", "r.xml", "--group-by", "file"], "none, directory"),
        (&["import", "r.xml", "--format-in", "pdf"], "ctrf, tap, nunit"),
        (&["calibrate", "bank", "--scope", "some"], "full, affected, single"),
    ] {
        let (code, stderr) = fcorr_in(dir.path(), args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("[possible values: {values}")), "{args:?}: {stderr}");
    }
    for (command, listed) in [
        (
            "run",
            ["[possible values: json, junit", "[possible values: strict, pass-rate", "[possible values: auto, always"],
        ),
        (
            "ci",
            [
                "[possible values: update, recreate, off]",
                "[possible values: always, on-failure",
                "[possible values: none, directory]",
            ],
        ),
        (
            "import",
            ["[possible values: ctrf, tap", "[possible values: json, junit", "[possible values: strict, pass-rate"],
        ),
    ] {
        let output = crate::support::fcorr_bin().args([command, "-h"]).output().unwrap();
        // Help is wrapped to the terminal's width: compare with the line breaks taken out.
        let help = String::from_utf8_lossy(&output.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        for values in listed {
            assert!(help.contains(values), "`fcorr {command} -h` lacks {values}:\n{help}");
        }
    }
    assert!(!dir.path().join("fcorr-out").exists(), "nothing may run before the arguments are checked");
}

#[test]
fn an_error_prints_its_cause_on_a_caused_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = fcorr_in(dir.path(), &["run", "--config", "nope.toml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("fcorr: error: nope.toml: cannot read the configuration\n  caused by: cannot read it: "),
        "{stderr}"
    );
    assert_eq!(stderr.matches("cannot read it").count(), 1, "the cause is said once: {stderr}");
}

#[test]
fn a_bad_gate_on_the_command_line_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = fcorr_in(dir.path(), &["run", ".", "--fail-on", "strict,score<x"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--fail-on") && stderr.contains("expected a number after `score<`"), "{stderr}");
}

#[test]
fn unknown_gate_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let output =
        crate::support::fcorr_bin().current_dir(dir.path()).args(["run", ".", "--fail-on", "flaky"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown gate `flaky`"));
}

#[test]
fn a_long_phase_prints_a_heartbeat_with_its_last_output_line() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("slow");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("prepared.xml"), junit(&[("a", "passed")])).unwrap();
    // Past the silence a CI log waits before a heartbeat: 30 s, shortened here to 2 s through the
    // same knob as an import's heartbeat (the test proves the phase heartbeat, not the number).
    std::fs::write(project.join("test.sh"), "echo 'compiling the world'; sleep 5; cp prepared.xml report.xml\n")
        .unwrap();
    std::fs::write(dir.path().join("fcorr.toml"), suite_toml("slow")).unwrap();
    let started = std::time::Instant::now();
    // Without --json, progress goes to stderr as plain lines (stderr is not a terminal here).
    let output = crate::support::fcorr_bin()
        .env("FCORR_HEARTBEAT_SECS", "2")
        .current_dir(dir.path())
        .args(["run", "--config", "fcorr.toml", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let beats: Vec<&str> = stderr.lines().filter(|l| l.contains("still running")).collect();
    assert!(!beats.is_empty(), "{stderr}");
    assert!(beats[0].starts_with("[slow] test still running ("), "{stderr}");
    assert!(beats[0].ends_with("— last output: compiling the world"), "{stderr}");
    // At most one round of heartbeats per interval.
    let allowed = started.elapsed().as_secs() / 2;
    assert!(beats.len() as u64 <= allowed, "{} heartbeats in {:?}: {stderr}", beats.len(), started.elapsed());
    // One line for the suite, none per phase: a test command that exits 0 is not news.
    assert!(stderr.contains("[1/1] slow: passed — score 100 (1/0/0) in "), "{stderr}");
    assert!(!stderr.contains("command exited 0") && !stderr.contains("started"), "{stderr}");
}

#[test]
fn a_shard_that_drew_no_suite_has_no_health_grade() {
    // Before, a run with zero suites was graded "health POOR" in the terminal, results.json and
    // summary.md. One suite, two shards: exactly one shard draws nothing.
    let dir = tempfile::tempdir().unwrap();
    scripted_project(dir.path(), "calc", Some(&junit(&[("a", "passed")])), 0);
    std::fs::write(dir.path().join("fcorr.toml"), suite_toml("calc")).unwrap();
    let mut empty = 0;
    for (i, shard) in ["1/2", "2/2"].into_iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        let output = crate::support::fcorr_bin()
            .current_dir(dir.path())
            .args(["run", "--config", "fcorr.toml", "--shard", shard, "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        let results: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
        let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
        if results["suites"].as_array().unwrap().is_empty() {
            empty += 1;
            assert!(results["score"].is_null() && results.get("health").is_none(), "{results}");
            assert!(!printed.contains("health") && !printed.contains("POOR"), "{printed}");
            assert!(!summary.contains("POOR"), "{summary}");
            // Emptiness is judged when the shards are merged, as before.
            assert_eq!(output.status.code(), Some(0), "{printed}");
        } else {
            assert_eq!(results["health"], "EXCELLENT");
            assert!(printed.contains("health EXCELLENT"), "{printed}");
        }
    }
    assert_eq!(empty, 1);
}

/// examples/go-stack copied into `dir` (7 tests pass under `go test`).
fn go_project(dir: &Path) {
    for file in ["go.mod", "stack.go", "stack_test.go"] {
        std::fs::copy(crate::support::repo().join("examples/go-stack").join(file), dir.join(file)).unwrap();
    }
}

#[test]
fn run_and_detect_without_arguments_take_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    go_project(dir.path());
    // No fcorr.toml: the directory itself is the project (was "nothing to run", exit 2).
    let (code, stderr) = fcorr_in(dir.path(), &["run", "--out", "out"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("running the project in the current directory"), "{stderr}");
    let run: Run =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/results.json")).unwrap()).unwrap();
    assert_eq!((run.suites.len(), run.totals.passed), (1, 7), "{:?}", run.suites);

    // `detect` too (was a usage error without its PATH).
    let output = crate::support::fcorr_bin().current_dir(dir.path()).arg("detect").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with(".: Go / go test"), "{stdout}");

    // With an fcorr.toml, `detect` looks at each project suite it lists.
    std::fs::create_dir_all(dir.path().join("sub")).unwrap();
    go_project(&dir.path().join("sub"));
    std::fs::write(
        dir.path().join("fcorr.toml"),
        "[[suite]]\nname = \"top\"\npath = \".\"\n\n[[suite]]\nname = \"sub\"\npath = \"sub\"\n",
    )
    .unwrap();
    let output = crate::support::fcorr_bin().current_dir(dir.path()).arg("detect").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    // One heading per project suite (the dry run under each is indented); `sub`, the root's
    // nested module, is a suite of its own and shown only there.
    let headings = stdout.lines().filter(|l| !l.starts_with(' ') && l.contains(": Go / go test")).count();
    assert_eq!(headings, 2, "{stdout}");
    assert_eq!(stdout.matches("\n    sub: Go / go test").count(), 0, "{stdout}");
    assert!(stdout.contains("sub: Go / go test"), "{stdout}");
}

/// A directory or case name holding terminal controls is shown, not obeyed, on stdout too:
/// `detect` prints paths, `compare` and `suites list` print names (QA: only stderr escaped them).
#[test]
fn stdout_lines_show_controls_in_names_instead_of_sending_them() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = "svc\u{1b}]0;pwned\u{7}\u{202e}x";
    std::fs::create_dir_all(dir.path().join(hostile)).unwrap();
    go_project(&dir.path().join(hostile));
    let output = crate::support::fcorr_bin().current_dir(dir.path()).arg("detect").arg(hostile).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("svc␛]0;pwned␇[U+202E]x: Go / go test"), "{stdout}");
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{202e}'), "{stdout:?}");

    std::fs::write(dir.path().join("new.xml"), junit(&[("t\u{202e}gnp.exe", "failed")])).unwrap();
    std::fs::write(dir.path().join("old.xml"), junit(&[("t\u{202e}gnp.exe", "passed")])).unwrap();
    for (report, out) in [("new.xml", "new"), ("old.xml", "old")] {
        let (code, stderr) = fcorr_in(dir.path(), &["import", report, "--out", out]);
        assert!(matches!(code, 0 | 1), "{stderr}");
    }
    let output = crate::support::fcorr_bin()
        .current_dir(dir.path())
        .args(["compare", "new/results.json", "--baseline", "old/results.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("t[U+202E]gnp.exe"), "{stdout}");
    assert!(!stdout.contains('\u{202e}'), "{stdout:?}");
}

#[test]
fn every_command_that_reads_results_takes_them_as_an_argument_or_results() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.xml"), junit(&[("x", "passed")])).unwrap();
    let (code, stderr) = fcorr_in(dir.path(), &["import", "r.xml", "--out", "out"]);
    assert_eq!(code, 0, "{stderr}");
    for args in [
        &["report", "out", "--format", "json"][..],
        &["report", "--results", "out", "--format", "json"],
        &["compare", "out", "--baseline", "out"],
        &["compare", "--results", "out", "--baseline", "out"],
        &["publish", "out"],
        &["publish", "--results", "out"],
    ] {
        let (code, stderr) = fcorr_in(dir.path(), args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
    // Given twice is a usage error, and a missing file is named.
    let (code, _) = fcorr_in(dir.path(), &["compare", "out", "--results", "out", "--baseline", "out"]);
    assert_eq!(code, 2);
    let (code, stderr) = fcorr_in(dir.path(), &["publish", "nowhere"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nowhere"), "{stderr}");
}

#[test]
fn help_and_errors_say_what_a_newcomer_needs_once() {
    let output = crate::support::fcorr_bin().args(["run", "--help"]).output().unwrap();
    // Help wraps at the terminal's width: compare words.
    let help = String::from_utf8_lossy(&output.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    // Long help explains each value; `-h` lists them on one line.
    assert!(
        help.contains("- json: results.json (always written) - junit: junit.xml"),
        "--format explains its values\n{help}"
    );
    assert!(help.contains("dataset-eval cases one by one"), "--shard says how evals split\n{help}");
    // A parse error says where once.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("results.json"), "{\"schema_version\": 1, \"x\": [1,,]}").unwrap();
    let (code, stderr) = fcorr_in(dir.path(), &["report", "results.json"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("line 1, column 31: not an fcorr results file: expected value"), "{stderr}");
    assert!(!stderr.contains("at line"), "{stderr}");
}

/// A semantic bank of one test (`V2-OK-001`) in `dir` whose system answers right: the
/// `[[suite]]` of fcorr.toml for it.
fn semantic_bank(dir: &Path) -> &'static str {
    std::fs::write(
        dir.join("bank.json"),
        r#"{"bank_type": "SEMANTIC", "version": "1", "tests": [{"test_id": "V2-OK-001", "prompt": "p", "expected_primary": ["a"]}]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("sut.sh"), "cat >/dev/null; echo '[\"a\"]'\n").unwrap();
    "[[suite]]\nname = \"sem\"\nkind = \"bank\"\nmechanism = \"semantic\"\nbank = \"bank.json\"\n\
     rate-limit = 0\nsut = { type = \"command\", command = [\"sh\", \"sut.sh\"] }\n"
}

/// QA C10: `--select` that matches nothing said "the test tool collected no tests" (a test id
/// of a bank) or "nothing to run: give project paths" (`bank:NAME` of no bank): both looked like
/// something other than a typo in the selection. Both are input errors naming it now (exit 2).
#[test]
fn a_select_that_matches_nothing_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let config = semantic_bank(dir.path());
    let (code, run, stderr) = run_fcorr(dir.path(), config, &["--select", "V2-NOPE"]);
    assert_eq!(code, 2, "{stderr}");
    let error = run.suites[0].error.as_ref().expect("the suite says why it has no test");
    assert_eq!(error.kind, SuiteErrorKind::Input);
    assert_eq!(error.message, "--select `V2-NOPE` matched no test of sem");
    // The selected test itself still runs and passes.
    let (code, _, stderr) = run_fcorr(dir.path(), config, &["--select", "V2-OK-001"]);
    assert_eq!(code, 0, "{stderr}");
    // A bank no suite is: planning stops, naming the selection and the suites it missed.
    let output = crate::support::fcorr_bin()
        .current_dir(dir.path())
        .args(["run", "--config", "fcorr.toml", "--out", "out2", "--select", "bank:nope"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--select `bank:nope` matches none of the configured suites (sem)"), "{stderr}");
    assert!(!stderr.contains("give project paths"), "{stderr}");
}

/// QA E8: `--select` (or `FCORR_BANK_SELECT` left in a CI job's environment) picks bank tests
/// only; with no bank suite in the run it narrowed nothing, so "run this one case" ran them all
/// and could pass. Now an input error naming the suites; next to a bank it narrows, the suites
/// it cannot narrow are a warning.
#[test]
fn a_select_no_suite_can_take_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cases.jsonl"),
        "{\"id\": \"fr\", \"prompt\": \"France?\", \"expected\": \"Paris\"}\n\
         {\"id\": \"it\", \"prompt\": \"Italy?\", \"expected\": \"Paris\"}\n",
    )
    .unwrap();
    let eval = "[[suite]]\nname = \"caps\"\nkind = \"eval\"\ndataset = \"cases.jsonl\"\n\
                sut = { type = \"command\", command = \"echo Paris\", stdin = \"none\" }\n";
    std::fs::write(dir.path().join("fcorr.toml"), eval).unwrap();
    let run = |env: Option<&str>, args: &[&str]| {
        let mut cmd = crate::support::fcorr_bin();
        cmd.current_dir(dir.path()).args(["run", "--config", "fcorr.toml", "--out", "out"]).args(args);
        if let Some(value) = env {
            cmd.env("FCORR_BANK_SELECT", value);
        }
        let output = cmd.output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    for (env, args) in [(None, &["--select", "fr"][..]), (Some("zzz"), &[][..])] {
        let (code, stderr) = run(env, args);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("no bank suite runs here") && stderr.contains("caps (eval) would run whole"),
            "{stderr}"
        );
    }
    // Next to a bank suite that takes it, the eval suite runs whole and the run says so.
    let bank = semantic_bank(dir.path());
    let (code, run, stderr) = run_fcorr(dir.path(), &format!("{eval}{bank}"), &["--select", "V2-OK-001"]);
    assert_eq!(code, 0, "{stderr}");
    let warning = "--select `V2-OK-001` narrows bank suites only: caps (eval) runs whole";
    assert!(run.warnings.iter().any(|w| w == warning), "{:?}", run.warnings);
}
