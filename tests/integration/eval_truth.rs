//! Dataset evals that must not pass on nothing, end to end with the real fcorr binary and real
//! command systems under test (shell scripts): a regex or a CSV column that checks nothing is a
//! dataset error; a system that echoes the prompt, reports an error or a negative cost, or
//! answers on stderr is an error saying so; a cached answer says it is one and a change to the
//! system's script asks again; the comparison grid shows the score the gate uses and errors.

use std::path::Path;
use std::process::Output;

use crate::support::fcorr;
use fcorr::model::{CaseStatus, Run};

/// A directory holding `files` (name, text).
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// `fcorr run --config fcorr.toml --out <out>` in `dir`, with extra arguments.
fn run_in(dir: &Path, out: &str, extra: &[&str]) -> Output {
    fcorr().current_dir(dir).args(["run", "--config", "fcorr.toml", "--out", out]).args(extra).output().unwrap()
}

fn results(dir: &Path, out: &str) -> Run {
    serde_json::from_str(&std::fs::read_to_string(dir.join(out).join("results.json")).unwrap()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs a project made of `files` that fcorr must refuse as an input error (exit 2); the
/// project and everything fcorr printed.
fn input_error(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
    let dir = project(files);
    let output = run_in(dir.path(), "out", &[]);
    let text = stderr(&output) + &String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{text}");
    (dir, text)
}

/// One eval suite over `dataset` asking `command` (stdin closed), plus `more` suite keys.
fn config(dataset: &str, command: &str, more: &str) -> String {
    format!(
        "[[suite]]\nname = \"e\"\nkind = \"eval\"\ndataset = \"{dataset}\"\n{more}\n\
         [suite.sut]\ntype = \"command\"\ncommand = \"{command}\"\nstdin = \"none\"\n"
    )
}

/// A regex that matches the empty text (a trailing `|`, an optional group, a bare anchor)
/// passed whatever the system said; it is a dataset error naming the file and the case.
#[test]
fn a_regex_that_matches_every_answer_is_a_dataset_error() {
    for pattern in ["Paris|Lutetia|", "(Paris)?", "^"] {
        let dataset = format!(
            "[[test_cases]]\nid = \"ok\"\nprompt = \"q\"\nexpected = \"Lyon\"\n\
             [[test_cases]]\nid = \"capital\"\nprompt = \"q\"\nassert = [{{ type = \"regex\", value = \"{pattern}\" }}]\n"
        );
        let (_dir, err) = input_error(&[
            ("cases.toml", &dataset),
            ("sut.sh", "echo Lyon\n"),
            ("fcorr.toml", &config("cases.toml", "sh sut.sh", "")),
        ]);
        assert!(
            err.contains("cases.toml: case `capital`: assertion `regex`:") && err.contains("matches every answer"),
            "{pattern}: {err}"
        );
    }
}

/// A CSV header `Critical` (as a spreadsheet user writes it) silently became a prompt variable:
/// the critical case's failure failed no gate. It is a dataset error naming the column.
#[test]
fn a_csv_column_spelt_like_a_case_field_is_a_dataset_error() {
    let (dir, err) = input_error(&[
        (
            "cases.csv",
            "id,prompt,expected,Critical\nok1,Paris,Paris,false\nok2,Rome,Rome,false\ndanger,Lyon,Paris,true\n",
        ),
        ("sut.sh", "echo \"$1\"\n"),
        ("fcorr.toml", &config("cases.csv", "sh sut.sh {prompt}", "policy = \"pass-rate\"\nmin-score = 60")),
    ]);
    assert!(err.contains("cases.csv:1: column `Critical`: did you mean the case field `critical`?"), "{err}");
    // Spelt as the field, the critical gate fires.
    std::fs::write(
        dir.path().join("cases.csv"),
        "id,prompt,expected,critical\nok1,Paris,Paris,false\nok2,Rome,Rome,false\ndanger,Lyon,Paris,true\n",
    )
    .unwrap();
    let output = run_in(dir.path(), "out", &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(results(dir.path(), "out").verdict.reasons.iter().any(|r| r.message.contains("critical case `danger`")));
}

/// `cache = true`: a second run answers from the cache and says so (the case's `cached`, a
/// warning, the eval section); a change to the system's own script asks the system again.
#[test]
fn a_cached_answer_is_marked_and_editing_the_sut_script_asks_again() {
    let dir = project(&[
        ("cases.toml", "[[test_cases]]\nid = \"capital\"\nprompt = \"Capital of France?\"\nexpected = \"Paris\"\n"),
        ("sut.sh", "echo called >> calls.log\necho Paris\n"),
        ("fcorr.toml", &(config("cases.toml", "sh sut.sh", "") + "cache = true\ncache-dir = \"answers\"\n")),
    ]);
    let calls = || std::fs::read_to_string(dir.path().join("calls.log")).unwrap_or_default().lines().count();
    let output = run_in(dir.path(), "out1", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!results(dir.path(), "out1").suites[0].cases[0].extra().eval().cached);
    assert!(!stderr(&output).contains("answer cache"), "{}", stderr(&output));

    let output = run_in(dir.path(), "out2", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(calls(), 1, "answered from the cache");
    let run = results(dir.path(), "out2");
    assert!(run.suites[0].cases[0].extra().eval().cached, "{:?}", run.suites[0].cases[0]);
    let note = "1 of 1 cases answered from the answer cache";
    assert!(stderr(&output).contains(&format!("suite `e`: {note}")), "{}", stderr(&output));
    for report in ["summary.md", "comment.md"] {
        let text = std::fs::read_to_string(dir.path().join("out2").join(report)).unwrap();
        assert!(text.contains(note) && text.contains("--no-cache"), "{report}:\n{text}");
    }

    // The pull request breaks the system under test: its script now says Lyon.
    std::fs::write(dir.path().join("sut.sh"), "echo called >> calls.log\necho Lyon\n").unwrap();
    let output = run_in(dir.path(), "out3", &[]);
    assert_eq!(output.status.code(), Some(1), "the changed script was not asked: {}", stderr(&output));
    assert_eq!(calls(), 2);
    let case = &results(dir.path(), "out3").suites[0].cases[0];
    assert_eq!(case.status, CaseStatus::Failed);
    assert!(!case.extra().eval().cached);
}

/// A wrapper that echoes the prompt passed `contains` when the prompt held the expected text;
/// an answer that is the prompt itself is an error saying what is wrong.
#[test]
fn an_answer_that_echoes_the_prompt_is_an_error() {
    let dir = project(&[
        (
            "cases.toml",
            "[[test_cases]]\nid = \"fr\"\nprompt = \"What is the capital of France? Paris or Lyon?\"\n\
             assert = [{ type = \"contains\", value = \"Paris\" }]\n",
        ),
        ("sut.sh", "printf '%s\\n' \"$1\"\n"),
        ("fcorr.toml", &config("cases.toml", "sh sut.sh {prompt}", "")),
    ]);
    let output = run_in(dir.path(), "out", &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let case = &results(dir.path(), "out").suites[0].cases[0];
    assert_eq!(case.status, CaseStatus::Error);
    let reason = &case.extra().eval().reasons[0];
    assert_eq!(reason.code, "echoed-prompt");
    assert!(reason.message.as_deref().unwrap().contains("answered with the prompt itself"), "{reason:?}");
}

/// What a command system prints beyond a plain answer: an `error` beside a fallback `output`,
/// a negative cost (which passed a `cost` assertion and lowered the suite's cost), a shell
/// brace group (ordinary text that starts with `{`), and an answer on stderr only.
#[test]
fn envelope_errors_negative_costs_brace_groups_and_stderr_answers() {
    let script = "case \"$FCORR_CASE_ID\" in\n\
        error) echo '{\"output\": \"Paris\", \"error\": \"model crashed, fallback text\"}' ;;\n\
        credit) echo '{\"output\": \"Paris\", \"usage\": {\"cost_usd\": -5}}' ;;\n\
        priced) echo '{\"output\": \"Paris\", \"usage\": {\"cost_usd\": 0.002}}' ;;\n\
        brace) echo '{ ls; pwd; } > out.txt' ;;\n\
        stderr) echo Paris >&2 ;;\n\
        esac\n";
    let dataset = "[[test_cases]]\nid = \"error\"\nprompt = \"q\"\nexpected = \"Paris\"\n\
        [[test_cases]]\nid = \"credit\"\nprompt = \"q\"\nexpected = \"Paris\"\nassert = [{ type = \"cost\", threshold = 0.01 }]\n\
        [[test_cases]]\nid = \"priced\"\nprompt = \"q\"\nexpected = \"Paris\"\nassert = [{ type = \"cost\", threshold = 0.01 }]\n\
        [[test_cases]]\nid = \"brace\"\nprompt = \"q\"\nexpected_command = \"{ ls; pwd; } > out.txt\"\n\
        [[test_cases]]\nid = \"stderr\"\nprompt = \"q\"\nexpected = \"Paris\"\n";
    let dir =
        project(&[("cases.toml", dataset), ("sut.sh", script), ("fcorr.toml", &config("cases.toml", "sh sut.sh", ""))]);
    let output = run_in(dir.path(), "out", &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let run = results(dir.path(), "out");
    let suite = &run.suites[0];
    let case = |id: &str| suite.cases.iter().find(|c| c.name == id).unwrap();
    let message = |id: &str| case(id).message().unwrap_or_default().to_string();
    assert_eq!(case("error").status, CaseStatus::Error);
    assert!(
        message("error").contains("the system reported an error: model crashed, fallback text"),
        "{}",
        message("error")
    );
    assert_eq!(case("credit").status, CaseStatus::Error);
    assert!(message("credit").contains("`cost_usd` is -5"), "{}", message("credit"));
    assert_eq!(case("priced").status, CaseStatus::Passed);
    assert_eq!(suite.usage.as_ref().and_then(|u| u.cost_usd), Some(0.002), "the credit lowers no total");
    assert_eq!(case("brace").status, CaseStatus::Passed, "{:?}", case("brace").message());
    assert_eq!(case("stderr").status, CaseStatus::Error);
    assert!(
        message("stderr").contains(
            "the answer is empty (stdout was empty; the program printed 6 bytes on stderr, first line: `Paris`)"
        ),
        "{}",
        message("stderr")
    );
}

/// Side by side: the grid's score is the suite's policy over the system's cases, labelled with
/// the policy, the number `score<N@sut` gates on (whose message names the policy too); a system
/// that failed every call shows its errors and no latency.
#[test]
fn the_grid_shows_the_gated_score_errors_and_latency_of_answered_calls_only() {
    let dataset = "[[test_cases]]\nid = \"a\"\nprompt = \"q\"\nexpected = \"Paris\"\n\
        [[test_cases]]\nid = \"b\"\nprompt = \"q\"\nexpected = \"Paris\"\n\
        [[test_cases]]\nid = \"c\"\nprompt = \"q\"\nexpected = \"Rome\"\n";
    let config = "[[suite]]\nname = \"e\"\nkind = \"eval\"\ndataset = \"cases.toml\"\npolicy = \"pass-rate\"\n\
        [[suite.sut]]\nname = \"good\"\ntype = \"command\"\ncommand = \"sh good.sh\"\nstdin = \"none\"\n\
        [[suite.sut]]\nname = \"broken\"\ntype = \"command\"\ncommand = \"sh broken.sh\"\nstdin = \"none\"\n";
    let dir = project(&[
        ("cases.toml", dataset),
        ("good.sh", "echo Paris\n"),
        ("broken.sh", "echo down >&2\nexit 3\n"),
        ("fcorr.toml", config),
    ]);
    let output = run_in(dir.path(), "out", &["--fail-on", "score<80@good"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let run = results(dir.path(), "out");
    let gate = run.verdict.reasons.iter().find(|r| r.message.contains("system `good`")).unwrap();
    assert_eq!(gate.message, "score of system `good` 66.67 (policy pass-rate over its 3 cases) is below 80");
    let comment = std::fs::read_to_string(dir.path().join("out/comment.md")).unwrap();
    assert!(comment.contains("| System | Passed | Pass rate | Score (pass-rate) | Errors | Latency |"), "{comment}");
    assert!(comment.contains("| good | 2/3 | 66.67% | 66.67 | 0 | "), "{comment}");
    assert!(comment.contains("| broken | 0/3 | 0% | 0 | 3 | - | - | - |"), "{comment}");
    let terminal = String::from_utf8_lossy(&output.stdout);
    let row = terminal.lines().find(|l| l.trim_start().starts_with("broken ")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells, ["broken", "0/3", "0%", "0", "3", "-", "-", "-"], "{terminal}");
}

/// Messages: `tolerance = inf` says what the field takes; a gate threshold outside 0–100 is a
/// usage error (it could never, or would always, fail).
#[test]
fn an_infinite_tolerance_and_an_impossible_gate_say_what_is_allowed() {
    let (dir, text) = input_error(&[
        (
            "cases.toml",
            "[[test_cases]]\nid = \"n\"\nprompt = \"q\"\nassert = [{ type = \"number\", value = 42, tolerance = inf }]\n",
        ),
        ("sut.sh", "echo 42\n"),
        ("fcorr.toml", &config("cases.toml", "sh sut.sh", "")),
    ]);
    assert!(text.contains("`tolerance` must be a finite number") && !text.contains("invalid type"), "{text}");
    for gate in ["score<-1@good", "score<101@good", "score<-5"] {
        let output = run_in(dir.path(), "out", &["--fail-on", gate]);
        assert_eq!(output.status.code(), Some(2), "{gate}: {}", stderr(&output));
        assert!(stderr(&output).contains("scores run from 0 to 100"), "{gate}: {}", stderr(&output));
    }
}

/// A comment too large for every case lists failures only and says passing cases are left
/// out; with no passing case (3,000 failures) nothing was left out, and it says nothing of the
/// kind, while still counting the failures it does not list.
#[test]
fn no_notice_of_passing_cases_left_out_when_none_passed() {
    use crate::report_support::{failing, run, suite};
    use fcorr::model::SuiteStatus;
    let cases = (0..3000).map(|i| failing(&format!("case_{i:04}"), CaseStatus::Failed, "incorrect: got `Lyon`"));
    let all_failed = run(vec![suite("s", SuiteStatus::Failed, cases.collect(), vec![])], None);
    let comment = fcorr::report::markdown::render_comment(&all_failed, &fcorr::report::ReportEnv::default()).unwrap();
    assert!(!comment.contains("Passing cases are not listed"), "{comment}");
    assert!(comment.contains("more"), "the failures not listed are counted:\n{comment}");
    let mut cases: Vec<_> =
        (0..3000).map(|i| failing(&format!("case_{i:04}"), CaseStatus::Failed, "incorrect: got `Lyon`")).collect();
    cases.push(crate::report_support::case("passes", CaseStatus::Passed));
    let one_passed = run(vec![suite("s", SuiteStatus::Failed, cases, vec![])], None);
    let comment = fcorr::report::markdown::render_comment(&one_passed, &fcorr::report::ReportEnv::default()).unwrap();
    assert!(comment.contains("Passing cases are not listed"), "{comment}");
}
