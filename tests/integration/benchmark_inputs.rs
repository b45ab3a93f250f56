//! A benchmark suite whose input is broken says so, naming the file, the line and what to do:
//! keys checked when the config is read (exit 2, nothing run), tasks files that cannot be used,
//! a task's patch file that is not there (that task's error, not a failure of the code), and
//! scratch directories that never meet on a file system that ignores case. Every test runs the
//! real fcorr binary on real processes.

use fcorr::model::{Case, CaseStatus, Run, SuiteStatus};

use crate::process_faults::{results, run_in, text};
use crate::support::*;

/// One task line: `repo/`'s test passes once the executor (or patch) leaves a file, plus `extra`.
fn task(id: &str, extra: serde_json::Value) -> String {
    let mut task = serde_json::json!({
        "id": id, "repo": "repo", "test_commands": ["sh test.sh > report.tap"], "reports": ["report.tap"],
        "FAIL_TO_PASS": ["test_one"], "PASS_TO_PASS": [],
    });
    for (key, value) in extra.as_object().unwrap() {
        task[key] = value.clone();
    }
    task.to_string()
}

/// A workspace: `repo/` (a test that passes as it is), `tasks_text` in `tasks_file`, and an
/// fcorr.toml whose benchmark suite `bench` reads it, `extra` keys last. The executor changes
/// the copy (an empty change that passes proves nothing) and leaves `executor-ran` in the
/// workspace, so a test can tell whether anything ran.
fn workspace(tasks_file: &str, tasks_text: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("test.sh"), "echo 1..1; echo ok 1 - test_one\n").unwrap();
    std::fs::write(dir.path().join(tasks_file), tasks_text).unwrap();
    let executor = format!("touch changed && touch '{}'", dir.path().join("executor-ran").display());
    std::fs::write(
        dir.path().join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"bench\"\nkind = \"benchmark\"\npath = \"{tasks_file}\"\npolicy = \"pass-rate\"\n\
             install = false\nexecutor = {}\n{extra}",
            serde_json::to_string(&executor).unwrap()
        ),
    )
    .unwrap();
    dir
}

fn case<'a>(run: &'a Run, name: &str) -> &'a Case {
    run.suites[0].cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no case {name}: {run:#?}"))
}

/// `runner` and `reports` are checked with the other keys when the config is read, as a project
/// suite's are: exit 2 at the value's line, before any executor runs (QA C29).
#[test]
fn runner_and_reports_are_checked_when_the_config_is_read() {
    let tasks = task("t1", serde_json::json!({})) + "\n";
    // The suite's keys take lines 1-7; `extra` starts at line 8.
    for (extra, key, said) in [
        ("runner = \"cobol\"\n", "runner", "unknown runner `cobol` (known: "),
        ("reports = [\"out.xml\", \"[bad\"]\n", "reports", "malformed glob `[bad`"),
        ("reports = [\"!*.xml\"]\n", "reports", "only `!` patterns"),
    ] {
        let dir = workspace("tasks.jsonl", &tasks, extra);
        let output = run_in(dir.path(), &[]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{key}: stderr:\n{stderr}");
        assert!(stderr.contains("fcorr.toml: line 8, column ") && stderr.contains(said), "{key}: {stderr}");
        assert!(!dir.path().join("executor-ran").exists(), "{key}: an executor ran before the config was checked");
    }
    // A runner fcorr knows is taken as it is.
    let dir = workspace("tasks.jsonl", &tasks, "runner = \"command\"\n");
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
}

/// A task id that appears twice names the file and line of both; a tasks file with no task says
/// so instead of blaming filters that are not set (QA C21).
#[test]
fn a_duplicate_task_id_names_both_lines_and_an_empty_tasks_file_says_it_has_no_task() {
    let lines = [task("a", serde_json::json!({})), task("b", serde_json::json!({})), task("a", serde_json::json!({}))];
    let dir = workspace("tasks.jsonl", &(lines.join("\n") + "\n"), "");
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(2), "stderr:\n{}", text(&output.stderr));
    let run = results(dir.path());
    let error = run.suites[0].error.as_ref().unwrap_or_else(|| panic!("{run:#?}"));
    assert!(error.message.contains("tasks.jsonl:1") && error.message.contains("tasks.jsonl:3"), "{}", error.message);
    assert!(error.message.contains("`a`"), "{}", error.message);
    assert!(!dir.path().join("executor-ran").exists());

    for (file, content) in [("tasks.jsonl", ""), ("tasks.jsonl", "\n\n"), ("tasks.json", "[]"), ("tasks.toml", "")] {
        let dir = workspace(file, content, "");
        let output = run_in(dir.path(), &[]);
        assert_eq!(output.status.code(), Some(2), "{file} {content:?}: stderr:\n{}", text(&output.stderr));
        let run = results(dir.path());
        assert_eq!(run.suites[0].status, SuiteStatus::Error, "{file}: {run:#?}");
        let error = run.suites[0].error.as_ref().unwrap();
        let said = format!("{} {:?}", error.message, error.hint);
        assert!(said.contains(file) && said.contains("holds no task"), "{file} {content:?}: {said}");
        assert!(!said.contains("filters") && !said.contains("`ids`"), "{file} {content:?}: {said}");
        // `fcorr suites list` says the same on the suite's row, exit 2.
        let listed =
            fcorr().current_dir(dir.path()).args(["suites", "list", "--config", "fcorr.toml"]).output().unwrap();
        assert_eq!(listed.status.code(), Some(2), "{}{}", text(&listed.stdout), text(&listed.stderr));
        let shown = text(&listed.stdout) + &text(&listed.stderr);
        assert!(shown.contains("holds no task"), "{shown}");
    }
}

/// A task whose `patch_file` is not there is a broken task (an error naming the task and the
/// path), not a failure of the code it was to patch; the other tasks run.
#[test]
fn a_missing_patch_file_is_the_tasks_error_naming_the_task_and_the_path() {
    let lines =
        [task("no-patch", serde_json::json!({"patch_file": "patches/nope.patch"})), task("ok", serde_json::json!({}))];
    let dir = workspace("tasks.jsonl", &(lines.join("\n") + "\n"), "");
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{}", text(&output.stderr));
    let run = results(dir.path());
    let missing = case(&run, "no-patch");
    assert_eq!(missing.status, CaseStatus::Error, "{missing:#?}");
    assert_eq!(missing.extra().eval().reasons[0].code, "patch-file-missing", "{missing:#?}");
    let message = missing.message().unwrap_or_default();
    assert!(message.contains("no-patch") && message.contains("patches/nope.patch"), "{message}");
    assert!(message.contains(&dir.path().join("patches/nope.patch").display().to_string()), "{message}");
    assert_eq!(case(&run, "ok").status, CaseStatus::Passed, "{run:#?}");
}

/// `Foo` and `foo` are two tasks: on a file system that ignores case (macOS's default) they
/// would share one scratch copy if their directories' names differed only in case.
#[test]
fn task_ids_that_differ_only_in_case_get_directories_of_their_own() {
    let ids = ["Foo", "foo", "FOO"];
    let lines: Vec<String> = ids.iter().map(|id| task(id, serde_json::json!({}))).collect();
    let dir = workspace("tasks.jsonl", &(lines.join("\n") + "\n"), "");
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
    let run = results(dir.path());
    let mut folded: Vec<String> = std::fs::read_dir(dir.path().join("out/benchmark/bench"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_lowercase())
        .collect();
    folded.sort();
    let count = folded.len();
    folded.dedup();
    assert_eq!((count, folded.len()), (3, 3), "{folded:?}");
    // Each case's details name its own patch file, and no two of them only by case.
    let mut patches: Vec<String> = ids
        .iter()
        .map(|id| {
            let details = case(&run, id).details().unwrap_or_default();
            let line = details.lines().find(|l| l.starts_with("generated patch: ")).unwrap_or_default();
            line.to_lowercase()
        })
        .collect();
    patches.sort();
    patches.dedup();
    assert_eq!(patches.len(), 3, "{patches:?}");
}

/// A git command that fails while the copy is made is said in words (`exit code 128`), as fcorr
/// says how any command ended, never as Rust's `Code(128)`.
#[test]
fn a_workspace_command_that_fails_says_how_it_ended_in_words() {
    let tasks = task("lost", serde_json::json!({"repo": "no-such-repo"})) + "\n";
    let dir = workspace("tasks.jsonl", &tasks, "");
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{}", text(&output.stderr));
    let run = results(dir.path());
    let lost = case(&run, "lost");
    assert_eq!(lost.status, CaseStatus::Error, "{lost:#?}");
    let message = lost.message().unwrap_or_default();
    assert!(message.contains("git clone failed (exit code 128)"), "{message}");
    assert!(!message.contains("Code("), "{message}");
}
