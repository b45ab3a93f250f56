//! A benchmark suite whose input is broken says so, naming the file, the line and what to do:
//! keys checked when the config is read (exit 2, nothing run), tasks files that cannot be used,
//! a task's patch file that is not there (that task's error, not a failure of the code), and
//! scratch directories that never meet on a file system that ignores case. Every test runs the
//! real fcorr binary on real processes.

use std::path::Path;
use std::process::Output;

use crate::support::*;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

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

/// `fcorr run --config fcorr.toml --out out` in `dir`.
fn run_in(dir: &Path) -> Output {
    fcorr()
        .current_dir(dir)
        .env_remove("CI")
        .args(["run", "--config", "fcorr.toml", "--out", "out", "--color", "never"])
        .output()
        .unwrap()
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
        let output = run_in(dir.path());
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{key}: stderr:\n{stderr}");
        assert!(stderr.contains("fcorr.toml: line 8, column ") && stderr.contains(said), "{key}: {stderr}");
        assert!(!dir.path().join("executor-ran").exists(), "{key}: an executor ran before the config was checked");
    }
    // A runner fcorr knows is taken as it is.
    let dir = workspace("tasks.jsonl", &tasks, "runner = \"command\"\n");
    let output = run_in(dir.path());
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
}
