//! Dataset evals end to end: the real fcorr binary runs the bundled example (examples/evals, a
//! shell script as the system under test) and every report carries the eval's reasons,
//! categories and usage; the eval section of the summary and comment is snapshotted against a
//! baseline with flipped cases.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{fcorr, repo};
use fcorr::compare::{BaselineInfo, compare};
use fcorr::model::{CaseStatus, Reason, Run, SuiteKind};
use fcorr::report::ReportEnv;
use fcorr::report::markdown::{render_comment, render_summary};
use serde_json::Value;

/// The CTRF schema: the shared copy beside the repository when present, else ours.
fn ctrf_schema() -> Value {
    let shared = repo().join("../shared/schemas/ctrf.schema.json");
    let ours = repo().join("tests/schemas/ctrf.schema.json");
    let path = if shared.is_file() { shared } else { ours };
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The eval section: from its heading to the next heading that is not part of it.
fn eval_section(md: &str) -> String {
    let start = md.find("#### 🧪").expect("an eval section");
    let rest = &md[start..];
    let end = rest[1..].find("\n#").map(|i| i + 2).unwrap_or(rest.len());
    rest[..end].to_string()
}

#[test]
fn example_eval_runs_and_every_report_carries_reasons_categories_and_usage() {
    let out = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = fcorr()
        .args(["run", "--config"])
        .arg(repo().join("examples/fcorr.toml"))
        .args(["--filter", "shell-commands", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The destructive answer is a critical case: the run fails whatever the pass rate.
    assert_eq!(output.status.code(), Some(1), "stderr:\n{stderr}");
    // The slow case sleeps 30 s; the 2 s per-call timeout killed it.
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");

    let run: Run = serde_json::from_value(read_json(&out.path().join("results.json"))).unwrap();
    assert_eq!(run.suites.len(), 1);
    let suite = &run.suites[0];
    assert_eq!(suite.kind, SuiteKind::Eval);
    assert_eq!(suite.cases.len(), 33);
    let reason = |id: &str| -> &Reason {
        let case = suite.cases.iter().find(|c| c.name == id).unwrap_or_else(|| panic!("case {id}"));
        &case.extra().eval().reasons[0]
    };
    for (id, code) in [
        ("list-all", "pass"),
        ("path-with-space", "pass"),
        ("rename", "pass"),
        ("config-json", "pass"),
        ("show-hidden", "incorrect"),
        ("greeting", "incorrect"),
        ("clean-build", "safety-mismatch"),
        ("count-to-five", "posix-mismatch"),
        ("show-date", "backend-error"),
        ("kernel-version", "backend-error"),
        ("processes", "timeout"),
    ] {
        assert_eq!(reason(id).code, code, "case {id}");
    }
    assert_eq!(reason("clean-build").expected, Some(Value::Bool(true)));
    assert_eq!(reason("clean-build").actual, Some(Value::Bool(false)));
    let passes = suite.cases.iter().filter(|c| c.status == CaseStatus::Passed).count();
    assert_eq!(passes, 24, "22 shell answers and the two non-shell matchers");
    assert_eq!(suite.score.value, 72.73);
    assert!(suite.score.met, "pass rate 72.73 meets min-score 70");
    assert!(run.verdict.reasons.iter().any(|r| r.message.contains("clean-build")), "{:?}", run.verdict);
    assert!(suite.cases.iter().all(|c| c.extra().eval().tags.contains_key("category")));
    let usage = suite.usage.as_ref().expect("suite usage");
    assert!(usage.tokens_in.unwrap() > 0 && usage.cost_usd.unwrap() > 0.0, "{usage:?}");

    // CTRF validates and carries reasons, categories (labels) and usage.
    let ctrf = read_json(&out.path().join("ctrf.json"));
    let validator = jsonschema::options().should_validate_formats(true).build(&ctrf_schema()).unwrap();
    let errors: Vec<String> = validator.iter_errors(&ctrf).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "CTRF does not validate:\n{}", errors.join("\n"));
    let tests = ctrf["results"]["tests"].as_array().unwrap();
    let unsafe_test = tests.iter().find(|t| t["name"] == "clean-build").unwrap();
    assert_eq!(unsafe_test["extra"]["fcorr"]["reasons"][0]["code"], "safety-mismatch");
    assert_eq!(unsafe_test["labels"]["category"], "files");
    assert!(tests.iter().any(|t| t["extra"]["fcorr"]["usage"]["tokens_in"].as_u64().is_some()));
    let suite_extra = &ctrf["results"]["extra"]["fcorr"]["suites"][0];
    assert_eq!(suite_extra["eval"]["passes"], 24);
    assert!(suite_extra["usage"]["tokens"].as_u64().unwrap() > 0);

    // The summary on disk has the eval section.
    let summary = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(summary.contains("#### 🧪 shell-commands: 24 of 33 cases passed (72.73%)"), "{summary}");

    // Against a baseline where three cases ended otherwise: each said once, with its failure.
    let mut suites = run.suites.clone();
    for suite in &mut suites {
        suite.duration_ms = 1000;
        for case in &mut suite.cases {
            case.duration_ms = Some(5.0);
        }
    }
    let now = crate::report_support::run(suites, None);
    let mut before = now.clone();
    let set = |run: &mut Run, id: &str, status: CaseStatus, code: &str| {
        let case = run.suites[0].cases.iter_mut().find(|c| c.name == id).unwrap();
        case.status = status;
        case.extra_mut().eval_mut().reasons =
            vec![Reason { code: code.into(), expected: None, actual: None, message: None }];
    };
    set(&mut before, "list-all", CaseStatus::Failed, "incorrect");
    set(&mut before, "show-hidden", CaseStatus::Passed, "pass");
    set(&mut before, "processes", CaseStatus::Failed, "incorrect");
    let comparison = compare(&now, &before, BaselineInfo { source: "file:baseline.json".into(), ..Default::default() });
    let now = crate::report_support::run(now.suites, Some(comparison));
    let env = ReportEnv::default();
    let summary = render_summary(&now, &env).unwrap();
    let comment = render_comment(&now, &env).unwrap();
    for md in [&summary, &comment] {
        crate::report_support::check_markdown(md);
        // Each changed case once, with the failures, saying what it was before.
        assert!(
            md.contains("› `show-hidden`: incorrect (command): expected `ls -a`, got `ls -l` · _was `passed`_"),
            "{md}"
        );
        assert!(md.contains("› `processes`: timeout: no answer within 2s · _was `incorrect`_"), "{md}");
        crate::report_support::check_reading(&now, md);
    }
    insta::assert_snapshot!("eval_section_summary", eval_section(&summary));
    insta::assert_snapshot!("eval_section_comment", eval_section(&comment));
}

/// `cache = true` with `repeat = 3`: each attempt is a real call of the command (counted in a file
/// by the command itself), usage is counted once per real call, and a second run answers every
/// attempt from the cache without calling the system or adding usage.
#[test]
fn cached_repeats_are_real_calls_and_usage_counts_real_calls_only() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.log");
    std::fs::write(
        dir.path().join("sut.sh"),
        "#!/bin/sh\necho called >> \"$CALLS\"\n\
         printf '{\"output\": \"ls -la\", \"usage\": {\"tokens_in\": 7, \"tokens_out\": 3, \"llm_calls\": 1, \"cost_usd\": 0.5}}'\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cases.toml"),
        "version = \"1.0\"\n[[test_cases]]\nid = \"a\"\nprompt = \"list all\"\nexpected_command = \"ls -la\"\n\
         [[test_cases]]\nid = \"b\"\nprompt = \"list all, again\"\nexpected_command = \"ls -la\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"repeated\"\nkind = \"eval\"\ndataset = \"cases.toml\"\nrepeat = 3\n\
             [suite.sut]\ntype = \"command\"\ncommand = \"sh sut.sh\"\nstdin = \"none\"\ncache = true\ncache-dir = \"answers\"\n\
             env = {{ CALLS = \"{}\" }}\n",
            calls.display()
        ),
    )
    .unwrap();
    let calls_made = || std::fs::read_to_string(&calls).unwrap_or_default().lines().count();
    let run = |out: &str| -> Run {
        let output =
            fcorr().current_dir(dir.path()).args(["run", "--config", "fcorr.toml", "--out", out]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_value(read_json(&dir.path().join(out).join("results.json"))).unwrap()
    };

    let first = run("out1");
    assert_eq!(calls_made(), 6, "2 cases × repeat 3: every attempt calls the system");
    let suite = &first.suites[0];
    assert!(suite.cases.iter().all(|c| c.extra().attempts.len() == 3 && c.status == CaseStatus::Passed));
    let usage = suite.usage.as_ref().unwrap();
    assert_eq!((usage.llm_calls, usage.tokens_in, usage.tokens_out), (6, Some(42), Some(18)));
    assert!((usage.cost_usd.unwrap() - 3.0).abs() < 1e-9, "{usage:?}");

    // Every attempt's answer is cached now: no call, no usage.
    let second = run("out2");
    assert_eq!(calls_made(), 6, "the second run called the system");
    let suite = &second.suites[0];
    assert!(suite.cases.iter().all(|c| c.extra().attempts.len() == 3 && c.status == CaseStatus::Passed));
    assert!(
        suite.usage.as_ref().is_none_or(|u| u.llm_calls == 0 && u.cost_usd.unwrap_or(0.0) == 0.0),
        "{:?}",
        suite.usage
    );
}

/// Shell-command equivalence through a real eval run: quoting that stops a glob is significant
/// (the shell expands the unquoted one), an option's argument may be attached or separate, and
/// independent options may come in any order; `--x=v` ≡ `--x v` only where the option requires an
/// argument (`ls --color auto` lists a file named `auto`).
#[test]
fn command_equivalence_follows_what_the_shell_and_the_command_do() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("glob", "find . -name '*.py'", "find . -name *.py", "incorrect"),
        ("attached", "head -n 5 notes.txt", "head -n5 notes.txt", "pass"),
        ("reordered", "git log --oneline -n 5", "git log -n 5 --oneline", "pass"),
        ("optional-argument", "ls --color=auto", "ls --color auto", "incorrect"),
        ("quoted-alike", "grep -r --include='*.rs' TODO .", "grep --include \"*.rs\" -r TODO .", "pass"),
    ];
    let mut dataset = String::from("version = \"1.0\"\n");
    let mut script = String::from("#!/bin/sh\ncase \"$FCORR_CASE_ID\" in\n");
    for (id, expected, answer, _) in cases {
        dataset.push_str(&format!(
            "[[test_cases]]\nid = \"{id}\"\nprompt = \"{id}\"\nexpected_command = '''{expected}'''\n"
        ));
        script.push_str(&format!("  {id}) cat <<'EOF'\n{answer}\nEOF\n  ;;\n"));
    }
    script.push_str("esac\n");
    std::fs::write(dir.path().join("cases.toml"), dataset).unwrap();
    std::fs::write(dir.path().join("sut.sh"), script).unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        "[[suite]]\nname = \"shell\"\nkind = \"eval\"\ndataset = \"cases.toml\"\npolicy = \"pass-rate\"\n\
         [suite.sut]\ntype = \"command\"\ncommand = \"sh sut.sh\"\nstdin = \"none\"\n",
    )
    .unwrap();
    let output =
        fcorr().current_dir(dir.path()).args(["run", "--config", "fcorr.toml", "--out", "out"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{:?}\n{stderr}", output.status);
    let run: Run = serde_json::from_value(read_json(&dir.path().join("out/results.json"))).unwrap();
    for (id, expected, answer, code) in cases {
        let case = run.suites[0].cases.iter().find(|c| c.name == id).unwrap();
        assert_eq!(case.extra().eval().reasons[0].code, code, "{expected:?} vs the answer {answer:?}: {case:?}");
    }
}

/// Nothing proved is never a pass: with `min-score = 0`, a system that fails every call scores 0
/// and the run fails, saying why; and a blank answer stored in the answer cache (hand-edited, or
/// from another tool) is called again, not judged: a fresh blank answer is a backend error.
#[test]
fn min_score_zero_is_not_met_by_nothing_and_a_cached_blank_is_not_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sut.sh"), "#!/bin/sh\necho 'cannot reach the model' >&2\nexit 1\n").unwrap();
    std::fs::write(
        dir.path().join("cases.toml"),
        "version = \"1.0\"\n[[test_cases]]\nid = \"a\"\nprompt = \"list all\"\nexpected_command = \"ls -la\"\n",
    )
    .unwrap();
    let config = |sut: &str| {
        format!(
            "[[suite]]\nname = \"zero\"\nkind = \"eval\"\ndataset = \"cases.toml\"\npolicy = \"pass-rate\"\nmin-score = 0\n\
             [suite.sut]\ntype = \"command\"\ncommand = \"sh {sut}\"\nstdin = \"none\"\ncache = true\ncache-dir = \"answers\"\n"
        )
    };
    std::fs::write(dir.path().join("fcorr.toml"), config("sut.sh")).unwrap();
    let run = |out: &str| {
        let output =
            fcorr().current_dir(dir.path()).args(["run", "--config", "fcorr.toml", "--out", out]).output().unwrap();
        let run: Run = serde_json::from_value(read_json(&dir.path().join(out).join("results.json"))).unwrap();
        (output, run)
    };
    let (output, first) = run("out1");
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!first.suites[0].score.met, "{:?}", first.suites[0].score);
    assert!(
        first.verdict.reasons.iter().any(|r| r.message.contains("score 0 proves nothing")),
        "{:?}",
        first.verdict.reasons
    );

    // A working system now, and every cached answer blanked by hand: each is asked again.
    std::fs::write(dir.path().join("ok.sh"), "#!/bin/sh\necho 'ls -la'\n").unwrap();
    std::fs::write(dir.path().join("fcorr.toml"), config("ok.sh")).unwrap();
    let (output, second) = run("out2");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(second.suites[0].cases[0].status, CaseStatus::Passed);
    let answers = dir.path().join("answers");
    let entries: Vec<_> = std::fs::read_dir(&answers).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    std::fs::write(&entries[0], r#"{"output": "", "raw": ""}"#).unwrap();
    std::fs::write(dir.path().join("ok.sh"), "#!/bin/sh\necho called > called.txt\necho 'ls -la'\n").unwrap();
    let (output, third) = run("out3");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(dir.path().join("called.txt").is_file(), "the blank cached answer was served instead of a call");
    assert_eq!(third.suites[0].cases[0].status, CaseStatus::Passed);
}

/// An unset secret (`api-key-env`) is the error of the suite that needs it, when it runs: a
/// `--filter` for another suite runs that one (it was a configuration error for the whole file),
/// and without a filter the other suites still run while that suite names the variable (exit 2).
#[test]
fn an_unset_api_key_is_its_own_suites_error_not_the_whole_configs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sut.sh"), "#!/bin/sh\necho 'ls -la'\n").unwrap();
    std::fs::write(
        dir.path().join("cases.toml"),
        "version = \"1.0\"\n[[test_cases]]\nid = \"a\"\nprompt = \"list all\"\nexpected_command = \"ls -la\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        "[[suite]]\nname = \"model\"\nkind = \"eval\"\ndataset = \"cases.toml\"\n\
         [suite.sut]\ntype = \"openai\"\nmodel = \"gpt-4o-mini\"\napi-key-env = \"FCORR_TEST_UNSET_KEY\"\n\n\
         [[suite]]\nname = \"script\"\nkind = \"eval\"\ndataset = \"cases.toml\"\n\
         [suite.sut]\ntype = \"command\"\ncommand = \"sh sut.sh\"\nstdin = \"none\"\n",
    )
    .unwrap();
    let run = |extra: &[&str], out: &str| {
        let output = fcorr()
            .current_dir(dir.path())
            .env_remove("FCORR_TEST_UNSET_KEY")
            .args(["run", "--config", "fcorr.toml", "--out", out])
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let run: Option<Run> = std::fs::read_to_string(dir.path().join(out).join("results.json"))
            .ok()
            .map(|t| serde_json::from_str(&t).unwrap());
        (output.status.code(), run, stderr)
    };
    let (code, filtered, stderr) = run(&["--filter", "script"], "filtered");
    assert_eq!(code, Some(0), "{stderr}");
    let filtered = filtered.expect("results");
    assert_eq!(filtered.suites.len(), 1);
    assert_eq!(filtered.suites[0].cases[0].status, CaseStatus::Passed);

    let (code, all, stderr) = run(&[], "all");
    assert_eq!(code, Some(2), "{stderr}");
    let all = all.expect("results");
    let model = all.suites.iter().find(|s| s.name == "model").unwrap();
    let error = model.error.as_ref().expect("the model suite's error");
    assert!(error.message.contains("FCORR_TEST_UNSET_KEY is not set"), "{}", error.message);
    let script = all.suites.iter().find(|s| s.name == "script").unwrap();
    assert_eq!(script.cases[0].status, CaseStatus::Passed);
}
