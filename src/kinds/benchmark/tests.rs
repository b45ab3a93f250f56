//! Benchmark suites end to end with real processes: the bundled example (solved, wrong patch,
//! crash), a given patch file, and an executor that hangs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;
use crate::config::Weights;
use crate::model::Policy;

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/benchmark")
}

fn suite_plan(id: &str) -> SuitePlan {
    SuitePlan {
        id: id.into(),
        name: id.into(),
        kind: SuiteKind::Benchmark,
        runner: &runner::Benchmark,
        root: PathBuf::from("/"),
        display_path: id.into(),
        policy: Policy::PassRate,
        threshold: 100.0,
        weight: 1.0,
        critical: false,
        weights: Weights::default(),
        origin: None,
        settings: KindPlan::new(()),
        quarantine: Vec::new(),
    }
}

/// Resolves `config` as the pipeline would, then runs the suite.
fn run_bench(id: &str, config: &BenchmarkConfig, base_dir: &Path, tasks: &str, out: &Path) -> Suite {
    let mut config = config.clone();
    config.install = Some(false);
    let plan = config.resolve(base_dir, Path::new(tasks)).unwrap();
    run(&suite_plan(id), &plan, &ctx(out))
}

fn ctx(out: &Path) -> ExecContext {
    ExecContext { out_dir: out.to_path_buf(), cache_dir: out.join("cache"), jobs: 2, grace: Duration::from_secs(1) }
}

fn case<'a>(suite: &'a Suite, id: &str) -> &'a Case {
    suite.cases.iter().find(|c| c.name == id).unwrap_or_else(|| panic!("no case {id}: {suite:#?}"))
}

#[test]
fn the_example_solves_one_task_fails_one_and_errors_one() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_dir();
    let config = BenchmarkConfig { executor: Some("./agent.sh".into()), ..BenchmarkConfig::default() };
    let suite = run_bench("calc-bench", &config, &dir, "tasks.jsonl", out.path());

    assert_eq!(suite.status, SuiteStatus::Failed, "{suite:#?}");
    assert_eq!((suite.counts.total, suite.counts.passed, suite.counts.failed, suite.counts.error), (3, 1, 1, 1));

    let solved = case(&suite, "fix-add");
    assert_eq!(solved.status, CaseStatus::Passed, "{solved:#?}");
    assert_eq!(solved.extra().score, Some(100.0));
    let usage = solved.extra().eval().usage.as_ref().unwrap();
    assert_eq!((usage.tokens, usage.llm_calls), (1500, 2));
    assert!((usage.cost_usd.unwrap() - 0.0045).abs() < 1e-12);
    let details = solved.details().unwrap();
    assert!(details.contains("+add() { echo $(($1 + $2)); }"), "{details}");
    let patch = workspace::task_dir(out.path(), "calc-bench", "fix-add").join("generated.patch");
    assert!(std::fs::read_to_string(patch).unwrap().contains("+add()"));

    let wrong = case(&suite, "fix-mul");
    assert_eq!(wrong.status, CaseStatus::Failed, "{wrong:#?}");
    assert_eq!(wrong.extra().score, Some(50.0), "P2P passed, F2P did not");
    assert_eq!(wrong.extra().eval().reasons[0].code, "fail-to-pass");
    assert_eq!(wrong.extra().eval().usage.as_ref().unwrap().tokens, 900, "usage from FCORR_USAGE_FILE");

    let crashed = case(&suite, "fix-div");
    assert_eq!(crashed.status, CaseStatus::Error);
    assert_eq!(crashed.extra().eval().reasons[0].code, "executor-error");
    assert!(crashed.output().as_deref().unwrap().contains("cannot reach the model endpoint"));

    let usage = suite.usage.as_ref().unwrap();
    assert_eq!(usage.tokens, 2400);
    assert!((usage.cost_usd.unwrap() - 2.4 * DEFAULT_COST_PER_1K).abs() < 1e-12);
    assert!(suite.diagnostics[0].message.contains("pass rate 33.3% (1/3)"), "{:?}", suite.diagnostics);
    // The source repository is untouched.
    assert!(std::fs::read_to_string(dir.join("repos/calc/calc.sh")).unwrap().contains("add() { echo $(($1 - $2)); }"));
}

#[test]
fn a_given_patch_file_is_applied_and_graded_and_filters_pick_tasks() {
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let dir = example_dir();
    std::fs::write(
        work.path().join("fix.patch"),
        "--- a/calc.sh\n+++ b/calc.sh\n@@ -5 +5 @@\n-div() { echo $(($1 % $2)); }\n+div() { echo $(($1 / $2)); }\n",
    )
    .unwrap();
    let task = serde_json::json!({
        "id": "fix-div", "repo": dir.join("repos/calc"), "patch_file": "fix.patch",
        "test_commands": ["sh test.sh > report.tap", "true"], "reports": ["report.tap"],
        "FAIL_TO_PASS": ["test_div"], "PASS_TO_PASS": ["test_sub"], "difficulty": "hard",
    });
    let other = serde_json::json!({"id": "other", "repo": "x", "difficulty": "easy"});
    std::fs::write(work.path().join("tasks.json"), serde_json::json!([task, other]).to_string()).unwrap();
    let config = BenchmarkConfig { difficulty: vec!["hard".into()], ..BenchmarkConfig::default() };
    let suite = run_bench("patched", &config, work.path(), "tasks.json", out.path());
    assert_eq!(suite.counts.total, 1);
    let case = case(&suite, "fix-div");
    assert_eq!(case.status, CaseStatus::Passed, "{case:#?}");
    assert!(case.details().as_deref().unwrap().contains("applied with git apply"));
}

#[test]
fn a_hanging_executor_is_that_tasks_timeout_and_the_others_still_run() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_dir();
    let config = BenchmarkConfig {
        executor: Some("case $FCORR_TASK_ID in fix-add) sleep 300 ;; fix-div) kill -9 $$ ;; esac; exit 0".into()),
        executor_timeout: Some(1),
        ..BenchmarkConfig::default()
    };
    let started = Instant::now();
    let suite = run_bench("hang", &config, &dir, "tasks.jsonl", out.path());
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(case(&suite, "fix-add").status, CaseStatus::Timeout);
    assert_eq!(case(&suite, "fix-add").extra().eval().reasons[0].code, "executor-timeout");
    // One killed by a signal is an error that names the signal.
    let killed = case(&suite, "fix-div");
    assert_eq!(killed.status, CaseStatus::Error, "{killed:#?}");
    assert_eq!(killed.message(), Some("the executor was killed by signal 9 (SIGKILL)"));
    // The others ran their tests: nothing was changed, so their F2P tests still fail.
    assert_eq!(case(&suite, "fix-mul").status, CaseStatus::Failed);
    assert_eq!(suite.counts.total, 3);
}

#[test]
fn a_missing_tasks_file_is_the_suites_input_error() {
    let out = tempfile::tempdir().unwrap();
    let suite = run_bench("missing", &BenchmarkConfig::default(), out.path(), "nope.jsonl", out.path());
    assert_eq!(suite.status, SuiteStatus::Error);
    assert!(suite.error.unwrap().message.contains("nope.jsonl"));
}

#[test]
fn shards_split_the_tasks_and_together_run_each_once() {
    let dir = example_dir();
    let mut seen = Vec::new();
    for index in 1..=2 {
        let out = tempfile::tempdir().unwrap();
        let mut plan = BenchmarkConfig::default().resolve(&dir, Path::new("tasks.jsonl")).unwrap();
        plan.install = false;
        plan.shard = Some(Shard { index, total: 2 });
        // No executor: every selected task is an error case, which is enough to count them.
        let suite = run(&suite_plan("calc-bench"), &plan, &ctx(out.path()));
        seen.extend(suite.cases.iter().map(|c| c.name.clone()));
    }
    seen.sort();
    assert_eq!(seen, ["fix-add", "fix-div", "fix-mul"]);
}

#[test]
fn the_kind_is_read_planned_and_run_through_the_seam() {
    use crate::config::Config;
    use crate::events::NullSink;
    use crate::plan::{Overrides, plan};
    let out = tempfile::tempdir().unwrap();
    let text = "[[suite]]\nname = \"calc\"\nkind = \"benchmark\"\npath = \"tasks.jsonl\"\npolicy = \"pass-rate\"\nexecutor = \"./agent.sh\"\nids = [\"fix-add\", \"fix-div\"]\ninstall = false\n";
    let config = Config::parse(text, &example_dir().join("fcorr.toml"), &crate::kinds::KINDS).unwrap();
    let plans = plan(&config, &[], &Overrides::default(), &crate::kinds::KINDS).unwrap();
    let suites = crate::runners::run_suites(&plans, &ctx(out.path()), &NullSink);
    let suite = &suites[0];
    assert_eq!(suite.kind, SuiteKind::Benchmark);
    assert_eq!((suite.counts.total, suite.counts.passed, suite.counts.error), (2, 1, 1), "{suite:#?}");
    assert_eq!(suite.score.value, 50.0);

    let bad = "[[suite]]\nkind = \"benchmark\"\npath = \"tasks.jsonl\"\n\nexecutor-timeout = 0\n";
    let err = Config::parse(bad, &example_dir().join("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
    assert!(err.contains("line 5") && err.contains("executor-timeout"), "{err}");
    let missing = "[[suite]]\nkind = \"benchmark\"\ntasks = \"nope.jsonl\"\n";
    let err = Config::parse(missing, &example_dir().join("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
    assert!(err.contains("line 3") && err.contains("nope.jsonl"), "{err}");
}

#[test]
fn out_of_range_settings_name_their_key() {
    let dir = Path::new("/nonexistent");
    let config = BenchmarkConfig { jobs: Some(0), ..BenchmarkConfig::default() };
    let err = config.resolve(dir, Path::new("tasks.jsonl")).unwrap_err();
    assert_eq!((err.key(), err.to_string().as_str()), ("jobs", "jobs: must be at least 1"));
    let config = BenchmarkConfig { cost_per_1k: Some(-1.0), ..BenchmarkConfig::default() };
    let err = config.resolve(dir, Path::new("tasks.jsonl")).unwrap_err();
    assert_eq!((err.key(), err.to_string().as_str()), ("cost-per-1k", "cost-per-1k: -1 is not a non-negative price"));
}

#[test]
fn test_scripts_run_every_command() {
    assert_eq!(test_script(&[]), None);
    assert_eq!(test_script(&["make test".into()]).as_deref(), Some("make test"));
    let script = test_script(&["false".into(), "echo ran".into()]).unwrap();
    let out = std::process::Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    // An `exit` (even `exit 0`) in a later command keeps the earlier failure; `cd` carries over.
    let script = test_script(&["sh -c 'exit 2'".into(), "cd /; echo ran; exit".into()]).unwrap();
    let out = std::process::Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!((out.status.code(), String::from_utf8_lossy(&out.stdout).as_ref()), (Some(1), "ran\n"));
    let script = test_script(&["cd /tmp".into(), "pwd; exit 0".into()]).unwrap();
    let out = std::process::Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!((out.status.code(), String::from_utf8_lossy(&out.stdout).as_ref()), (Some(0), "/tmp\n"));
    let script = test_script(&["true".into(), "exit 3".into()]).unwrap();
    assert_eq!(std::process::Command::new("sh").args(["-c", &script]).status().unwrap().code(), Some(3));
}

#[test]
fn tasks_run_jobs_at_a_time() {
    let out = tempfile::tempdir().unwrap();
    let meet = tempfile::tempdir().unwrap();
    // Each executor marks itself running, waits (up to 30 s: preparing a task's workspace can take
    // seconds on a loaded CI machine) to see another running executor, and unmarks itself when it
    // ends: run one at a time, none would ever see another. Together, they meet at once.
    let executor = r#"touch "$MEET/$FCORR_TASK_ID.run"; i=0
running() { ls "$MEET" | grep -c '\.run$'; }
while [ "$(running)" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
[ "$(running)" -ge 2 ] && touch "$MEET/$FCORR_TASK_ID.together"
rm "$MEET/$FCORR_TASK_ID.run"; exit 0"#;
    let config = BenchmarkConfig {
        executor: Some(executor.into()),
        jobs: Some(3),
        env: [("MEET".to_string(), meet.path().display().to_string())].into(),
        ..BenchmarkConfig::default()
    };
    let suite = run_bench("jobs", &config, &example_dir(), "tasks.jsonl", out.path());
    assert_eq!(suite.counts.total, 3, "{suite:#?}");
    let together = std::fs::read_dir(meet.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".together"));
    assert!(together.count() >= 2, "with jobs = 3, at least two tasks' executors ran at the same time");
}

#[test]
fn a_large_generated_patch_is_capped_in_the_case_and_whole_in_its_file() {
    let out = tempfile::tempdir().unwrap();
    let executor = "i=0; while [ $i -lt 2000 ]; do echo \"line $i of a generated file\"; i=$((i+1)); done > big.txt";
    let config =
        BenchmarkConfig { executor: Some(executor.into()), ids: vec!["fix-add".into()], ..BenchmarkConfig::default() };
    let suite = run_bench("big", &config, &example_dir(), "tasks.jsonl", out.path());
    let case = case(&suite, "fix-add");
    let patch =
        std::fs::read_to_string(workspace::task_dir(out.path(), "big", "fix-add").join("generated.patch")).unwrap();
    assert!(patch.len() > 2 * PATCH_CAP && patch.contains("+line 1999 of a generated file"), "{}", patch.len());
    let details = case.details().unwrap();
    assert!(details.len() < PATCH_CAP + 2048, "{}", details.len());
    assert!(details.contains("+line 0 of a generated file") && !details.contains("+line 1999"), "{details}");
    assert!(details.contains("generated patch: benchmark/big/fix-add/generated.patch ("), "{details}");
}

/// A tasks file in `dir` whose tasks test the example calculator, each `(id, extra fields)`.
fn calc_tasks(dir: &Path, tasks: &[(&str, serde_json::Value)]) {
    let lines: Vec<String> = tasks
        .iter()
        .map(|(id, extra)| {
            let mut task = serde_json::json!({
                "id": id, "repo": example_dir().join("repos/calc"),
                "test_commands": ["sh test.sh > report.tap"], "reports": ["report.tap"],
                "FAIL_TO_PASS": ["test_add"], "PASS_TO_PASS": ["test_sub"],
            });
            task.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            task.to_string()
        })
        .collect();
    std::fs::write(dir.join("tasks.jsonl"), lines.join("\n")).unwrap();
}

#[test]
fn an_executor_that_rewrites_the_tasks_tests_is_graded_by_the_tasks_own() {
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // The tests from the task's test_commands (test.sh) are rewritten to pass without add();
    // the same through test_files; and a test_patch the executor cannot dodge.
    let rewrite = r#"sed -i 's/check test_add "$(add 2 3)" 5/check test_add 5 5/' test.sh"#;
    let test_patch = "--- a/test.sh\n+++ b/test.sh\n@@ -12 +12 @@\n-check test_sub \"$(sub 5 3)\" 2\n+check test_sub \"$(sub 6 3)\" 3\n";
    calc_tasks(
        work.path(),
        &[
            ("by-command", serde_json::json!({})),
            (
                "by-list",
                serde_json::json!({"test_commands": ["sh \"$(echo test).sh\" > report.tap"], "test_files": ["test.sh"]}),
            ),
            ("by-patch", serde_json::json!({"test_patch": test_patch})),
        ],
    );
    let config = BenchmarkConfig { executor: Some(rewrite.into()), ..BenchmarkConfig::default() };
    let suite = run_bench("hack", &config, work.path(), "tasks.jsonl", out.path());
    for id in ["by-command", "by-list", "by-patch"] {
        let case = case(&suite, id);
        assert_eq!(case.status, CaseStatus::Failed, "{id}: {case:#?}");
        assert_eq!(case.extra().eval().reasons[0].code, "fail-to-pass", "{id}");
        let details = case.details().unwrap();
        assert!(
            details.contains("the executor changed the task's test files") && details.contains(": test.sh"),
            "{details}"
        );
        // The generated patch still shows what the executor did.
        assert!(details.contains("+check test_add 5 5"), "{details}");
    }
    let details = case(&suite, "by-patch").details().unwrap();
    assert!(details.contains("test_patch applied with "), "{details}");
    let warned = suite.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
    assert_eq!(warned, 3, "{:?}", suite.diagnostics);

    // An executor that fixes add() and leaves the tests alone still passes; one that commits
    // its rewrite of the tests is caught the same.
    let fix = r#"sed -i 's/^add() { echo \$((\$1 - \$2)); }/add() { echo $(($1 + $2)); }/' calc.sh"#;
    let commit = format!("{rewrite} && git -c user.name=a -c user.email=a@b commit -qam hack");
    let config = BenchmarkConfig {
        executor: Some(format!("if [ \"$FCORR_TASK_ID\" = by-command ]; then {fix}; else {commit}; fi")),
        ..BenchmarkConfig::default()
    };
    let suite = run_bench("fair", &config, work.path(), "tasks.jsonl", out.path());
    assert_eq!(case(&suite, "by-command").status, CaseStatus::Passed, "{suite:#?}");
    assert_eq!(case(&suite, "by-list").status, CaseStatus::Failed, "{suite:#?}");
    assert!(case(&suite, "by-list").details().unwrap().contains("+check test_add 5 5"));
}

#[test]
fn a_report_the_executor_planted_is_never_read() {
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // The tests write report.tap (test_add fails: nothing was fixed); the executor plants a.tap
    // saying every test passed, dated now, in the future, or as a link to a file outside.
    let outside = work.path().join("outside.tap");
    let planted = "TAP version 13\n1..2\nok 1 - test_add\nok 2 - test_sub\n";
    std::fs::write(&outside, planted).unwrap();
    let tasks: Vec<(&str, serde_json::Value)> = ["plant", "plant-future", "plant-link", "only-planted"]
        .into_iter()
        .map(|id| (id, serde_json::json!({"reports": ["*.tap"]})))
        .collect();
    let mut tasks = tasks;
    // A glob does not follow links; a plain path does.
    tasks[2].1 = serde_json::json!({"reports": ["a.tap", "report.tap"]});
    tasks[3].1 = serde_json::json!({"reports": ["*.tap"], "test_commands": ["sh test.sh > /dev/null"]});
    calc_tasks(work.path(), &tasks);
    let executor = format!(
        "case $FCORR_TASK_ID in plant-link) ln -s {} a.tap ;; *) printf '{}' > a.tap ;; esac; \
         [ $FCORR_TASK_ID = plant-future ] && touch -d '+1 hour' a.tap; exit 0",
        outside.display(),
        planted.replace('\n', "\\n")
    );
    let config = BenchmarkConfig { executor: Some(executor), ..BenchmarkConfig::default() };
    let suite = run_bench("plant", &config, work.path(), "tasks.jsonl", out.path());
    for id in ["plant", "plant-future", "plant-link"] {
        let case = case(&suite, id);
        assert_eq!(case.status, CaseStatus::Failed, "{id}: {case:#?}");
        assert_eq!(case.message(), Some("1 of 2 graded tests passed (FAIL_TO_PASS 0/1, PASS_TO_PASS 1/1)"));
        assert!(case.details().unwrap().contains("only if the tests write them again: a.tap"), "{id}");
    }
    // Tests that write no report at all are not measured, whatever the executor left.
    let only = case(&suite, "only-planted");
    assert_eq!(only.extra().eval().reasons[0].code, "tests-not-measured", "{only:#?}");
    // Its message says where the planted file came from, not "dated 498872h before".
    let said = format!("{:?} {:?}", only.message(), only.details());
    assert!(said.contains("already in the copy before the test command started"), "{said}");
    assert!(!said.contains("h before"), "{said}");
    // The file outside the copy was neither dated nor removed.
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), planted);
    assert!(std::fs::metadata(&outside).unwrap().modified().unwrap() > std::time::SystemTime::UNIX_EPOCH);
}

#[test]
fn task_ids_that_clean_up_alike_get_copies_of_their_own() {
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    calc_tasks(work.path(), &[("fix/add", serde_json::json!({})), ("fix_add", serde_json::json!({}))]);
    // `fix/add` fixes add(); `fix_add` changes nothing and runs its tests a little later, in what
    // would be the same directory if the two ids shared one.
    let fix = r#"sed -i 's/^add() { echo \$((\$1 - \$2)); }/add() { echo $(($1 + $2)); }/' calc.sh"#;
    let config = BenchmarkConfig {
        executor: Some(format!("if [ \"$FCORR_TASK_ID\" = fix/add ]; then {fix}; else sleep 1; fi")),
        jobs: Some(2),
        ..BenchmarkConfig::default()
    };
    let suite = run_bench("col", &config, work.path(), "tasks.jsonl", out.path());
    assert_eq!(case(&suite, "fix/add").status, CaseStatus::Passed, "{suite:#?}");
    assert_eq!(case(&suite, "fix_add").status, CaseStatus::Failed, "{suite:#?}");
    let (slash, under) =
        (workspace::task_dir(out.path(), "col", "fix/add"), workspace::task_dir(out.path(), "col", "fix_add"));
    assert_ne!(slash, under);
    assert!(std::fs::read_to_string(slash.join("generated.patch")).unwrap().contains("+add()"));
    assert_eq!(std::fs::read_to_string(under.join("generated.patch")).unwrap(), "");
    // Suites too: `s/1` and `s_1` keep their tasks apart.
    assert_ne!(workspace::task_dir(out.path(), "s/1", "t"), workspace::task_dir(out.path(), "s_1", "t"));
    // Ids that differ only in case stay apart where the file system ignores case.
    let folded =
        |suite: &str, task: &str| workspace::task_dir(out.path(), suite, task).display().to_string().to_lowercase();
    assert_ne!(folded("col", "Foo"), folded("col", "foo"));
    assert_ne!(folded("col", "Foo"), folded("col", "FOO"));
    assert_ne!(folded("Col", "t"), folded("col", "t"));
    assert_eq!(workspace::task_dir(out.path(), "col", "fix-add"), out.path().join("benchmark/col/fix-add"));
}

#[test]
fn grading_takes_every_test_a_name_matches_every_command_and_pytest_ids() {
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tap = |lines: &str| format!("printf 'TAP version 13\\n{lines}' > report.tap");
    // pytest's JUnit XML for a test in a class and a parametrized one, as SWE-bench names them.
    let junit = r#"cat > report.xml <<'XML'
<testsuites><testsuite name="pytest" tests="2"><testcase classname="tests.test_calc.TestAdd" name="test_add" file="tests/test_calc.py"/><testcase classname="tests.test_calc" name="test_param[1-1]" file="tests/test_calc.py"/><testcase classname="calc.tests.DivTests" name="test_div"/></testsuite></testsuites>
XML"#;
    calc_tasks(
        work.path(),
        &[
            (
                "dup-name",
                serde_json::json!({"test_commands": [tap("1..2\\nok 1 - test_add\\nnot ok 2 - test_add\\n")], "PASS_TO_PASS": []}),
            ),
            (
                "exit-later",
                serde_json::json!({"test_commands": ["sh -c 'echo crash; exit 2'", format!("{}; exit", tap("1..1\\nok 1 - test_add\\n"))], "PASS_TO_PASS": []}),
            ),
            (
                "pytest-ids",
                serde_json::json!({"test_commands": [junit], "reports": ["report.xml"],
                    "FAIL_TO_PASS": ["tests/test_calc.py::TestAdd::test_add", "tests/test_calc.py::test_param[1-1]"],
                    "PASS_TO_PASS": ["test_div (calc.tests.DivTests)", "test_div (calc.tests.DivTests.test_div)"]}),
            ),
        ],
    );
    let config = BenchmarkConfig { executor: Some("touch changed".into()), ..BenchmarkConfig::default() };
    let suite = run_bench("grading", &config, work.path(), "tasks.jsonl", out.path());
    let dup = case(&suite, "dup-name");
    assert_eq!(dup.status, CaseStatus::Failed, "{dup:#?}");
    assert!(dup.extra().eval().reasons[0].message.as_deref().unwrap().contains("2 tests have this name"));
    let later = case(&suite, "exit-later");
    assert_eq!(later.status, CaseStatus::Failed, "{later:#?}");
    assert_eq!(later.extra().eval().reasons[0].code, "tests-not-measured", "{later:#?}");
    let pytest = case(&suite, "pytest-ids");
    assert_eq!(pytest.status, CaseStatus::Passed, "{pytest:#?}");
    assert_eq!(pytest.message(), Some("4 of 4 graded tests passed (FAIL_TO_PASS 2/2, PASS_TO_PASS 2/2)"));
}

#[test]
fn an_executor_that_changes_the_shared_base_does_not_change_the_next_tasks_copy() {
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    calc_tasks(work.path(), &[("t1-tamper", serde_json::json!({})), ("t2-noop", serde_json::json!({}))]);
    // t1 fixes add() in the base every task is copied from (and commits it), not in its copy;
    // t2 changes an unrelated file, so only an inherited fix could make it pass.
    let tamper = r#"for b in "$FCORR_TASK_DIR"/../../.bases/*; do
  sed -i 's/^add() { echo \$((\$1 - \$2)); }/add() { echo $(($1 + $2)); }/' "$b/calc.sh"
  git -C "$b" -c user.name=a -c user.email=a@b commit -qam fix; done"#;
    let config = BenchmarkConfig {
        executor: Some(format!("if [ \"$FCORR_TASK_ID\" = t1-tamper ]; then {tamper}; fi; touch changed")),
        jobs: Some(1),
        ..BenchmarkConfig::default()
    };
    let suite = run_bench("base", &config, work.path(), "tasks.jsonl", out.path());
    let t2 = case(&suite, "t2-noop");
    assert_eq!(t2.status, CaseStatus::Failed, "{t2:#?}");
    assert!(t2.details().unwrap().contains("base copy of this repository was changed"), "{t2:#?}");
    assert_eq!(case(&suite, "t1-tamper").status, CaseStatus::Failed);
}

#[test]
fn an_empty_change_that_passes_and_an_answer_fcorr_cannot_read_are_said() {
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // test_sub passes at the base: a task listing it as FAIL_TO_PASS proves nothing unchanged.
    let vacuous = serde_json::json!({"FAIL_TO_PASS": ["test_sub"], "PASS_TO_PASS": []});
    calc_tasks(work.path(), &[("noop", vacuous.clone()), ("prose", serde_json::json!({})), ("badjson", vacuous)]);
    let executor = r#"case $FCORR_TASK_ID in
prose) printf 'Here is my patch:\n--- a/calc.sh\n+++ b/calc.sh\n@@ -1 +1 @@\n-add() { echo $(($1 - $2)); }\n+add() { echo $(($1 + $2)); }\n' ;;
badjson) printf '{"patch": "--- a/x", "usage": ' ;;
esac"#;
    let config = BenchmarkConfig { executor: Some(executor.into()), ..BenchmarkConfig::default() };
    let suite = run_bench("vac", &config, work.path(), "tasks.jsonl", out.path());
    let noop = case(&suite, "noop");
    assert_eq!(noop.status, CaseStatus::Error, "{noop:#?}");
    assert_eq!(noop.extra().eval().reasons[0].code, "vacuous-pass");
    let prose = case(&suite, "prose");
    assert_eq!(prose.status, CaseStatus::Failed, "{prose:#?}");
    assert!(prose.details().unwrap().contains("holds a diff after 1 line(s) of other text: not applied"), "{prose:#?}");
    let bad = case(&suite, "badjson");
    assert_eq!(bad.status, CaseStatus::Error, "{bad:#?}");
    assert!(bad.details().unwrap().contains("starts like a JSON answer but is not JSON"), "{bad:#?}");
    assert_eq!(suite.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count(), 2);
}
