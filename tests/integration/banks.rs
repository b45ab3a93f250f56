//! Graded test banks end to end through the real binary: `examples/banks` with its bundled SUT
//! script (a real process per test), the rate limit measured between real calls, score deltas
//! against a baseline, and `fcorr calibrate` leaving earlier history files byte-identical.

use std::path::{Path, PathBuf};

use crate::support::{fcorr, parse_run, repo};
use fcorr::model::{Health, Run};

/// Every file under `dir`, with its bytes, sorted by path.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Copies a directory tree (small example trees only).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

#[test]
fn the_example_banks_run_through_the_script_sut_and_the_critical_failure_leads() {
    let examples = repo().join("examples/banks");
    let history = examples.join("semantic/history");
    let before = snapshot(&history);
    let out = tempfile::tempdir().unwrap();
    let output = fcorr()
        .current_dir(&examples)
        .args(["run", "--config", "fcorr.toml", "--color", "never", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    // Without --json, so the progress lines show; the run is read from results.json.
    let code = output.status.code().unwrap_or(-1);
    let run: Run = serde_json::from_slice(&std::fs::read(out.path().join("results.json")).unwrap()).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(code, 1, "the critical gate fails the run\n{stderr}");
    assert_eq!(run.health, Some(Health::Critical));
    let counts: Vec<(String, usize)> = run.suites.iter().map(|s| (s.name.clone(), s.cases.len())).collect();
    assert_eq!(
        counts,
        [
            ("retrieval".to_string(), 20),
            ("handlers".to_string(), 10),
            ("crisis-and-keywords".to_string(), 15),
            ("always-loaded".to_string(), 5)
        ]
    );
    // The semantic and always answers came from the script, one process per test.
    let retrieval = &run.suites[0];
    assert!(retrieval.cases.iter().all(|c| c.output().as_deref().is_some_and(|o| o.contains("\"attempts\":1"))));
    // History and human override were applied and counted.
    let source =
        |id: &str| retrieval.cases.iter().find(|c| c.name == id).unwrap().extra().eval().expectation_source.clone();
    assert_eq!(source("V2-LOY-001").as_deref(), Some("calibration_2025-12-18"));
    assert!(source("V2-DOC-001").unwrap().starts_with("human_override_"), "{:?}", source("V2-DOC-001"));
    // Exactly the one critical failure, named by the gate.
    let critical: Vec<&str> = run
        .verdict
        .reasons
        .iter()
        .filter(|r| r.gate == fcorr::model::GateKind::Critical)
        .map(|r| r.message.as_str())
        .collect();
    assert_eq!(critical.len(), 1, "{critical:?}");
    assert!(critical[0].contains("PAT-CRISIS-006"), "{critical:?}");
    // The comment leads with it: right after the headline, before the bank table and suites.
    let comment = std::fs::read_to_string(out.path().join("comment.md")).unwrap();
    let first_section = comment.find("####").unwrap();
    assert!(
        comment[first_section..]
            .starts_with("#### Why it failed\n\n- 🚨 **critical**: **crisis-and-keywords** › `PAT-CRISIS-006`"),
        "{comment}"
    );
    assert!(comment.find("PAT-CRISIS-006").unwrap() < comment.find("| Bank |").unwrap(), "{comment}");
    // The terminal leads with it too.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout
            .trim_start()
            .starts_with("CRITICAL FAILURES (1)\n  crisis-and-keywords \u{203a} PAT-CRISIS-006: 0 Hard fail"),
        "{stdout}"
    );
    // In a log, a line per bank when it is done: no line per test.
    assert!(stderr.contains("] retrieval: failed — score "), "{stderr}");
    assert!(!stderr.contains("[20/20] V2-"), "{stderr}");
    // A run reads history; it never writes it.
    assert_eq!(snapshot(&history), before);
}

/// A one-bank config in `dir` whose SUT is `sut.py`, logging each call's start and end times.
fn script_bank(dir: &Path, tests: usize, rate_limit: f64) {
    let tests: Vec<String> = (1..=tests)
        .map(|i| format!(r#"{{"test_id": "V2-{i:03}", "prompt": "p{i}", "topics": ["t"], "expected_primary": ["a"], "not_expected": ["x"]}}"#))
        .collect();
    std::fs::write(dir.join("bank.json"), format!("{{\"bank_type\": \"SEMANTIC\", \"tests\": [{}]}}", tests.join(",")))
        .unwrap();
    // Answers come from answers.json when present (so a second run can answer differently).
    std::fs::write(
        dir.join("sut.py"),
        r#"import json, os, sys, time
start = time.time()
case = json.load(sys.stdin)
answers = json.load(open("answers.json")) if os.path.exists("answers.json") else {}
print(json.dumps({"output": answers.get(case["test_id"], ["a"])}))
with open("calls.log", "a") as log:
    log.write(f"{start} {time.time()}\n")
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"retrieval\"\nkind = \"bank\"\nmechanism = \"semantic\"\nbank = \"bank.json\"\nrate-limit = {rate_limit}\nsut = {{ type = \"command\", command = [\"python3\", \"sut.py\"] }}\n\n[report]\nresults-folder = \"kept\"\n"
        ),
    )
    .unwrap();
}

fn run_in(dir: &Path, out: &str) -> (Run, i32) {
    let output = fcorr()
        .current_dir(dir)
        .args(["run", "--config", "fcorr.toml", "--json", "--color", "never", "--out", out])
        .output()
        .unwrap();
    parse_run(&output)
}

#[test]
fn the_rate_limit_holds_between_real_sut_calls() {
    let dir = tempfile::tempdir().unwrap();
    script_bank(dir.path(), 4, 0.4);
    let (run, code) = run_in(dir.path(), "out");
    assert_eq!(code, 0, "{:?}", run.verdict);
    let log = std::fs::read_to_string(dir.path().join("calls.log")).unwrap();
    let calls: Vec<(f64, f64)> = log
        .lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    assert_eq!(calls.len(), 4, "{log}");
    // `[report] results-folder` kept the run under dated names.
    let mut kept: Vec<String> = std::fs::read_dir(dir.path().join("kept"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    let stamp = &run.started_at[..16].replace('T', "-").replace(':', "");
    assert_eq!(kept, [format!("report_{stamp}.md"), format!("results_{stamp}.json")]);
    // From the end of one call (inside the SUT process) to the start of the next.
    for pair in calls.windows(2) {
        let gap = pair[1].0 - pair[0].1;
        assert!(gap >= 0.4, "gap {gap:.3}s < 0.4s\n{log}");
    }
}

#[test]
fn a_long_bank_prints_a_line_when_done_not_one_per_test() {
    // Stderr is a pipe here, as in CI: 40 tests printed 40 progress lines.
    let dir = tempfile::tempdir().unwrap();
    script_bank(dir.path(), 40, 0.0);
    let started = std::time::Instant::now();
    let output = fcorr()
        .current_dir(dir.path())
        .args(["run", "--config", "fcorr.toml", "--color", "never", "--out", "out"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let progress: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("fcorr: ")).collect();
    // The suite's line, and at most one heartbeat per 30 s of the run.
    let allowed = 1 + started.elapsed().as_secs() as usize / 30;
    assert!(progress.len() <= allowed, "{} lines in {:?}:\n{stderr}", progress.len(), started.elapsed());
    assert!(progress.iter().any(|l| l.starts_with("[1/1] retrieval: passed — score 100 (40/0/0) in ")), "{stderr}");
    assert!(progress.iter().filter(|l| l.contains("still running")).all(|l| l.contains("ETA")), "{stderr}");
}

#[test]
fn deltas_against_a_baseline_name_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    script_bank(dir.path(), 3, 0.0);
    let (base, _) = run_in(dir.path(), "base");
    assert_eq!(base.suites[0].score.value, 100.0);
    std::fs::write(dir.path().join("answers.json"), r#"{"V2-002": ["a", "x"]}"#).unwrap();
    let (now, code) = run_in(dir.path(), "now");
    // The 80 fails its test (pass mark 100); the bank's 93.3 still meets min-score 70.
    assert_eq!(code, 0, "{:?}", now.verdict);
    assert!(now.suites[0].cases[1].status.is_failure());
    let compare = fcorr()
        .current_dir(dir.path())
        .args(["compare", "--results", "now", "--baseline", "base", "--write"])
        .output()
        .unwrap();
    assert!(compare.status.success(), "{}", String::from_utf8_lossy(&compare.stderr));
    let report = fcorr().current_dir(dir.path()).args(["report", "now", "--out", "rendered"]).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let comment = std::fs::read_to_string(dir.path().join("rendered/comment.md")).unwrap();
    // Listed once, as a new failure, with the score it had.
    assert!(comment.contains("› `V2-002`: 80 Notable issues (−20: false positive x) · _was 100_"), "{comment}");
    // The bank's own score moved by a third of that: (100 + 80 + 100) / 3.
    assert!((now.suites[0].score.value - 93.333).abs() < 0.01, "{}", now.suites[0].score.value);
    assert!(comment.contains("-6.67"), "per-bank delta\n{comment}");
}

#[test]
fn calibrate_shows_a_diff_then_writes_one_new_history_file() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/banks"), dir.path());
    let history = dir.path().join("semantic/history");
    let before = snapshot(&history);
    // Adds `biff_response` as a secondary to every test it is asked about, with its reasoning.
    std::fs::write(
        dir.path().join("calibrator.py"),
        r#"import json, sys
q = json.load(sys.stdin)
e = q["expectations"]
if "biff_response" not in e["expected_secondary"]:
    e["expected_secondary"].append("biff_response")
print(json.dumps({"updated": e, "reasoning": "short factual replies help " + q["test"]["test_id"]}))
"#,
    )
    .unwrap();
    let calibrate = |extra: &[&str]| {
        let output = fcorr()
            .current_dir(dir.path())
            .args(["calibrate", "retrieval", "--config", "fcorr.toml", "--calibrator", "python3 calibrator.py"])
            .args(extra)
            .output()
            .unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
    };
    // Affected by gray_rock: the three tests naming it; two already expect biff_response.
    let (code, dry) = calibrate(&["--scope", "affected", "--added-entities", "gray_rock"]);
    assert_eq!(code, Some(0), "{dry}");
    assert!(dry.starts_with("V2-MIX-001 (now: original)\n  + secondary: biff_response\n"), "{dry}");
    assert!(dry.contains("1 changed, 2 unchanged"), "{dry}");
    assert!(dry.contains("dry run: nothing written"), "{dry}");
    assert_eq!(snapshot(&history), before);

    let (code, wrote) = calibrate(&["--scope", "single", "--test", "V2-MIX-001,V2-LOY-001", "--write"]);
    assert_eq!(code, Some(0), "{wrote}");
    assert!(wrote.contains("2 changed, 0 unchanged"), "{wrote}");
    let after = snapshot(&history);
    assert_eq!(after.len(), before.len() + 1);
    for (path, bytes) in &before {
        assert_eq!(after.iter().find(|(p, _)| p == path).map(|(_, b)| b), Some(bytes), "{}", path.display());
    }
    let (new_path, new_bytes) = after.iter().find(|(p, _)| !before.iter().any(|(q, _)| q == p)).unwrap();
    let today = time::OffsetDateTime::now_utc().date();
    assert!(new_path.file_name().unwrap().to_str().unwrap().starts_with(&format!("expectations_{today}")));
    let written: serde_json::Value = serde_json::from_slice(new_bytes).unwrap();
    assert_eq!(written["changed_count"], 2);
    assert_eq!(written["unchanged_count"], 0);
    // V2-LOY-001 was calibrated before: its previous expectations are the 2025-12-18 ones.
    let loy = written["changes"].as_array().unwrap().iter().find(|c| c["test_id"] == "V2-LOY-001").unwrap();
    assert_eq!(loy["previous"]["not_expected"], serde_json::json!(["handler_crisis", "parental_alienation"]));
    assert_eq!(loy["reasoning"], "short factual replies help V2-LOY-001");

    // Unknown test ids and calibrator failures are errors that write nothing.
    let (code, _) = calibrate(&["--scope", "single", "--test", "V2-NOPE"]);
    assert_eq!(code, Some(2));
    std::fs::write(dir.path().join("calibrator.py"), "import sys; sys.exit(4)\n").unwrap();
    let (code, _) = calibrate(&["--scope", "single", "--test", "V2-GR-002", "--write"]);
    assert_eq!(code, Some(3));
    assert_eq!(snapshot(&history).len(), after.len());
}

#[test]
fn one_test_by_id_or_one_topic_runs_only_its_bank() {
    let examples = repo().join("examples/banks");
    // `--select`, or the same through FCORR_BANK_SELECT (for STATE-).
    let select = |selection: &str| {
        let out = tempfile::tempdir().unwrap();
        let mut cmd = fcorr();
        cmd.current_dir(&examples).args(["run", "--config", "fcorr.toml", "--json", "--color", "never", "--out"]);
        cmd.arg(out.path());
        if selection.starts_with("STATE-") {
            cmd.env("FCORR_BANK_SELECT", selection);
        } else {
            cmd.args(["--select", selection]);
        }
        parse_run(&cmd.output().unwrap())
    };
    // The PAT- prefix picks the pattern bank; the one test is the critical failure.
    let (run, code) = select("PAT-CRISIS-006");
    let names: Vec<(&str, usize)> = run.suites.iter().map(|s| (s.name.as_str(), s.cases.len())).collect();
    assert_eq!(names, [("crisis-and-keywords", 1)]);
    assert_eq!((code, run.health), (1, Some(Health::Critical)));
    // A state test needs no SUT at all.
    let (run, code) = select("STATE-001");
    assert_eq!(run.suites.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["handlers"]);
    assert_eq!((code, run.suites[0].cases.len(), run.suites[0].score.value), (0, 1, 100.0));
    // Topics select semantic tests.
    let (run, _) = select("topic:gray_rock");
    let ids: Vec<&str> = run.suites.iter().flat_map(|s| s.cases.iter().map(|c| c.name.as_str())).collect();
    assert_eq!(run.suites.len(), 1);
    assert!(!ids.is_empty() && ids.iter().all(|id| id.starts_with("V2-")), "{ids:?}");
}

/// A one-suite bank config in `dir`: `bank.json` holds `tests`, and the system under test is a
/// shell script printing `answer` for every test (a real process per test).
fn answering_bank(dir: &Path, mechanism: &str, tests: &str, answer: &str) {
    std::fs::write(dir.join("bank.json"), format!("{{\"tests\": {tests}}}")).unwrap();
    std::fs::write(dir.join("sut.sh"), format!("cat >/dev/null\nprintf '%s\\n' '{answer}'\n")).unwrap();
    std::fs::write(
        dir.join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"b\"\nkind = \"bank\"\nmechanism = \"{mechanism}\"\nbank = \"bank.json\"\nrate-limit = 0\nsut = {{ type = \"command\", command = [\"sh\", \"sut.sh\"] }}\n"
        ),
    )
    .unwrap();
}

/// Runs the config in `dir`: the exit code, stdout and stderr.
fn run_text(dir: &Path) -> (i32, String) {
    let output = fcorr()
        .current_dir(dir)
        .args(["run", "--config", "fcorr.toml", "--color", "never", "--out", "out"])
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

#[test]
fn a_missed_crisis_is_critical_whatever_the_case_of_its_pattern_type() {
    let dir = tempfile::tempdir().unwrap();
    let bank = |kind: &str| {
        format!(
            r#"[{{"test_id": "PAT-KW-1", "prompt": "gray rock", "expected_matches": ["gray_rock"], "pattern_type": "keyword"}},
                {{"test_id": "PAT-CRISIS-1", "prompt": "i am going to kill myself tonight", "expected_matches": ["handler_crisis"],
                  "is_critical": true{kind}}}]"#
        )
    };
    // `CRISIS` was not critical: the run passed at 50 with the crisis missed.
    answering_bank(dir.path(), "pattern", &bank(r#", "pattern_type": "CRISIS""#), r#"["gray_rock"]"#);
    let (code, text) = run_text(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("CRITICAL FAILURES (1)") && text.contains("health CRITICAL"), "{text}");
    // An unknown type, or none on a critical test, is an input error naming the file and the test.
    for (kind, why) in [(r#", "pattern_type": "crises""#, "unknown `pattern_type` `crises`"), ("", "is missing")] {
        answering_bank(dir.path(), "pattern", &bank(kind), r#"["gray_rock"]"#);
        let (code, text) = run_text(dir.path());
        assert_eq!(code, 2, "{text}");
        assert!(text.contains("bank.json: test `PAT-CRISIS-1`") && text.contains(why), "{text}");
    }
}

#[test]
fn a_bank_test_with_nothing_to_check_is_an_input_error_not_a_100() {
    let dir = tempfile::tempdir().unwrap();
    for (mechanism, test, why) in [
        // Three edits from `expected_primary`: it was ignored and the test scored 100.
        (
            "semantic",
            r#"{"test_id": "V2-1", "prompt": "p", "expected_primaries": ["zzz"]}"#,
            "unknown field `expected_primaries`; did you mean `expected_primary`?",
        ),
        ("semantic", r#"{"test_id": "V2-1", "prompt": "p"}"#, "nothing to check"),
        ("always", r#"{"test_id": "ALWAYS-1", "user_type": "PARENT", "expected_always": []}"#, "`expected_always`"),
    ] {
        answering_bank(dir.path(), mechanism, &format!("[{test}]"), r#"["a", "b"]"#);
        let (code, text) = run_text(dir.path());
        assert_eq!(code, 2, "{test}\n{text}");
        assert!(text.contains("bank.json: test `") && text.contains(why), "{test}\n{text}");
    }
}

#[test]
fn a_misspelled_calibration_is_refused_by_calibrate_and_by_the_run() {
    let dir = tempfile::tempdir().unwrap();
    answering_bank(
        dir.path(),
        "semantic",
        r#"[{"test_id": "V2-A", "prompt": "p", "expected_primary": ["zzz"], "not_expected": ["x"]}]"#,
        r#"["a", "b"]"#,
    );
    let calibrate = |answer: &str| {
        std::fs::write(dir.path().join("cal.sh"), format!("cat >/dev/null\nprintf '%s\\n' '{answer}'\n")).unwrap();
        let output = fcorr()
            .current_dir(dir.path())
            .args(["calibrate", "b", "--config", "fcorr.toml", "--calibrator", "sh cal.sh", "--write"])
            .output()
            .unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    // Was written as a change with every list empty, and the next run passed at 100.
    for (answer, why) in [
        (
            r#"{"updated": {"expected_primry": ["zzz"], "not_expectd": ["a"]}, "reasoning": "typo"}"#,
            "did you mean `expected_primary`?",
        ),
        (r#"{"updated": null}"#, "`updated` is null"),
    ] {
        let (code, stderr) = calibrate(answer);
        assert_eq!(code, Some(3), "{answer}\n{stderr}");
        assert!(stderr.contains("V2-A") && stderr.contains(why) && stderr.contains("nothing written"), "{stderr}");
        assert!(!dir.path().join("history").exists(), "{answer}: nothing may be written");
    }
    // The same typo in a hand-written history file: the run refuses it, naming file and test.
    std::fs::create_dir(dir.path().join("history")).unwrap();
    std::fs::write(
        dir.path().join("history/expectations_2026-01-01.json"),
        r#"{"changes": [{"test_id": "V2-A", "previous": {}, "updated": {"expected_primry": ["a"]}, "reasoning": "x"}]}"#,
    )
    .unwrap();
    let (code, text) = run_text(dir.path());
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains(
            "expectations_2026-01-01.json: the change for test `V2-A`: `updated` has an unknown field `expected_primry`"
        ),
        "{text}"
    );
}

#[test]
fn a_sut_printing_an_error_message_gets_an_error_case_not_a_score() {
    let dir = tempfile::tempdir().unwrap();
    answering_bank(
        dir.path(),
        "semantic",
        r#"[{"test_id": "V2-NEG", "prompt": "p", "not_expected": ["handler_crisis"]}]"#,
        "Error: upstream model timed out, please retry",
    );
    let (run, code) = run_in(dir.path(), "out");
    // The error line was one id, so the not-expected check passed: 100 Perfect, exit 0.
    assert_eq!(code, 1);
    let case = &run.suites[0].cases[0];
    assert_eq!(case.status, fcorr::model::CaseStatus::Error, "{:?}", case.message());
    assert!(case.message().unwrap().contains("is text, not an id"), "{:?}", case.message());
}

#[test]
fn a_named_history_dir_that_is_missing_and_top_k_0_are_config_errors_with_a_line() {
    let dir = tempfile::tempdir().unwrap();
    answering_bank(
        dir.path(),
        "semantic",
        r#"[{"test_id": "V2-A", "prompt": "p", "expected_primary": ["a"]}]"#,
        r#"["a"]"#,
    );
    let config = std::fs::read_to_string(dir.path().join("fcorr.toml")).unwrap();
    // A missing history dir was read as "no history": its overrides were silently not applied.
    for (extra, want) in [
        ("history = \"nonexist\"\n", "fcorr.toml: line 1, column 1: suite b: history `nonexist` is not a directory"),
        ("top-k = 0\n", "fcorr.toml: line 8, column 9: suite b: `top-k` must be at least 1"),
    ] {
        std::fs::write(dir.path().join("fcorr.toml"), format!("{config}{extra}")).unwrap();
        let (code, text) = run_text(dir.path());
        assert_eq!(code, 2, "{text}");
        assert!(text.contains(want), "{text}");
    }
}
