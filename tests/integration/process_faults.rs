//! fcorr never dies without a report (issue 21): children that do not read their input, readers
//! of fcorr's output that go away, signals, data too big for the environment, predictable temp
//! files, runaway output. Every test runs the real fcorr binary on real processes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fcorr::model::{CaseStatus, Run, SuiteStatus};

use crate::support::*;

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `fcorr run --config fcorr.toml --out out` in `dir`, with `extra` arguments.
pub(crate) fn run_in(dir: &Path, extra: &[&str]) -> Output {
    fcorr()
        .current_dir(dir)
        .env_remove("CI")
        .args(["run", "--config", "fcorr.toml", "--out", "out", "--color", "never"])
        .args(extra)
        .output()
        .unwrap()
}

/// The run fcorr wrote to `dir/out/results.json`.
pub(crate) fn results(dir: &Path) -> Run {
    let path = dir.join("out/results.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// An eval suite over `cases` (JSONL lines) answered by the shell `command`.
fn eval_dir(cases: &[String], command: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cases.jsonl"), cases.join("\n") + "\n").unwrap();
    let config = format!(
        "[[suite]]\nname = \"answers\"\nkind = \"eval\"\ndataset = \"cases.jsonl\"\npolicy = \"pass-rate\"\n{extra}\n\
         [suite.sut]\ntype = \"command\"\ncommand = {}\nretries = 0\n",
        toml_string(command)
    );
    std::fs::write(dir.path().join("fcorr.toml"), config).unwrap();
    dir
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

fn case_line(id: &str, prompt: &str, expected: &str) -> String {
    serde_json::json!({"id": id, "prompt": prompt, "expected": expected}).to_string()
}

/// A prompt far beyond the 64 KiB pipe buffer: writing it to a child that does not read is
/// certain to fail with EPIPE.
fn big_prompt() -> String {
    "a".repeat(70_000)
}

#[test]
fn a_sut_that_never_reads_a_70_kb_prompt_is_judged() {
    let dir = eval_dir(&[case_line("big", &big_prompt(), "ok")], "echo ok", "");
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
    let run = results(dir.path());
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Passed, "{:?}", suite.error);
    assert_eq!(suite.cases[0].status, CaseStatus::Passed, "{:?}", suite.cases[0]);
}

#[test]
fn twenty_cases_whose_sut_ignores_stdin_are_all_judged() {
    // Half right, half wrong: every answer is judged, and the gate (pass-rate 50 < 100) fails.
    let cases: Vec<String> = (0..20)
        .map(|i| case_line(&format!("c{i}"), &format!("question {i}"), if i % 2 == 0 { "ok" } else { "no" }))
        .collect();
    let dir = eval_dir(&cases, "echo ok", "concurrency = 4\nmin-score = 100");
    let output = run_in(dir.path(), &[]);
    let run = results(dir.path());
    let suite = &run.suites[0];
    assert_eq!((suite.counts.total, suite.counts.passed, suite.counts.failed), (20, 10, 10), "{:#?}", suite.cases);
    assert_eq!(output.status.code(), Some(run.verdict.outcome.exit_code()), "{}", text(&output.stderr));
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn a_bank_sut_and_a_calibrator_that_ignore_a_large_test_are_judged() {
    let dir = tempfile::tempdir().unwrap();
    let test = serde_json::json!({
        "test_id": "V2-001", "prompt": big_prompt(), "topics": ["t"],
        "expected_primary": ["a"], "not_expected": ["x"],
    });
    std::fs::write(
        dir.path().join("bank.json"),
        serde_json::json!({"bank_type": "SEMANTIC", "tests": [test]}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        "[[suite]]\nname = \"retrieval\"\nkind = \"bank\"\nmechanism = \"semantic\"\nbank = \"bank.json\"\n\
         rate-limit = 0\nsut = { type = \"command\", command = \"echo '{\\\"output\\\": [\\\"a\\\"]}'\" }\n",
    )
    .unwrap();
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
    assert_eq!(results(dir.path()).suites[0].cases[0].status, CaseStatus::Passed);

    // The calibrator gets the same test (prompt included) on stdin and never reads it.
    let answer = r#"{"updated": {"expected_primary": ["a"], "expected_secondary": ["b"]}, "reasoning": "r"}"#;
    let output = fcorr()
        .current_dir(dir.path())
        .args(["calibrate", "retrieval", "--config", "fcorr.toml", "--scope", "full", "--calibrator"])
        .arg(format!("echo '{answer}'"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("+ secondary: b"), "{}", text(&output.stdout));
}

/// A benchmark whose one task's test passes as the repository is; the task carries `extra`
/// fields. The executor also adds a file when it succeeds: a change that is empty and passes
/// proves nothing (`vacuous-pass`), and these tests are about how the executor is run.
fn benchmark_dir(executor: &str, extra: serde_json::Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("test.sh"), "echo 1..1; echo ok 1 - test_one\n").unwrap();
    let mut task = serde_json::json!({
        "id": "t1", "repo": "repo", "test_commands": ["sh test.sh > report.tap"], "reports": ["report.tap"],
        "FAIL_TO_PASS": ["test_one"], "PASS_TO_PASS": [],
    });
    for (key, value) in extra.as_object().unwrap() {
        task[key] = value.clone();
    }
    std::fs::write(dir.path().join("tasks.jsonl"), format!("{task}\n")).unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"bench\"\nkind = \"benchmark\"\npath = \"tasks.jsonl\"\npolicy = \"pass-rate\"\n\
             install = false\nexecutor = {}\n",
            toml_string(&format!("({executor}) && touch executor-was-here"))
        ),
    )
    .unwrap();
    dir
}

#[test]
fn a_benchmark_executor_that_prints_done_without_reading_its_task_is_judged() {
    let dir = benchmark_dir("echo done", serde_json::json!({"description": big_prompt()}));
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
    let run = results(dir.path());
    assert_eq!(run.suites[0].cases[0].status, CaseStatus::Passed, "{:#?}", run.suites[0].cases[0]);
}

/// Runs `script` with `sh -c`, `$FCORR` naming the binary; returns fcorr's own exit code, which
/// the script writes to `code` in `dir`.
fn shell_in(dir: &Path, script: &str) -> (i32, Output) {
    let output = Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(script)
        .env("FCORR", assert_cmd::cargo::cargo_bin("fcorr"))
        .env("FCORR_CACHE_DIR", repo().join("target/fcorr-test-cache"))
        .env_remove("CI")
        .output()
        .unwrap();
    let code = std::fs::read_to_string(dir.join("code")).unwrap_or_else(|_| panic!("{}", text(&output.stderr)));
    (code.trim().parse().unwrap(), output)
}

#[test]
fn a_reader_that_goes_away_never_stops_the_run() {
    // 20 cases so progress keeps printing after `head` has gone; half fail, so the gate fails.
    let cases: Vec<String> =
        (0..20).map(|i| case_line(&format!("c{i}"), "q", if i % 2 == 0 { "ok" } else { "no" })).collect();
    let dir = eval_dir(&cases, "sleep 0.05; echo ok", "min-score = 100");
    let (code, output) = shell_in(
        dir.path(),
        r#"{ "$FCORR" run --config fcorr.toml --out out --color never 2>&1; echo $? > code; } | head -1"#,
    );
    let run = results(dir.path());
    assert_eq!(run.suites[0].counts.total, 20);
    assert_eq!(code, run.verdict.outcome.exit_code(), "{}", text(&output.stdout));
    assert_eq!(code, 1);
    assert_eq!(text(&output.stdout).lines().count(), 1);
    // stdout alone closed at once, stderr kept: the table is lost, the warnings are not.
    std::fs::remove_dir_all(dir.path().join("out")).unwrap();
    let (code, output) = shell_in(
        dir.path(),
        r#"exec 3>&1; { "$FCORR" run --config fcorr.toml --out out --color never 2>&3; echo $? > code; } | true"#,
    );
    assert_eq!(code, 1, "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("answers: failed"), "{}", text(&output.stdout));
    assert_eq!(results(dir.path()).suites[0].counts.total, 20);
}

/// Waits until `path` holds a pid (a process wrote it when it started); panics after 20 s.
fn wait_for_pid(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        assert!(Instant::now() < deadline, "{} was never written", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True while `pid` runs (a zombie is dead).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit(')').next().and_then(|rest| rest.trim().chars().next()) != Some('Z'))
        .unwrap_or(false)
}

fn signal(pid: u32, signal: i32) {
    // SAFETY: kill only sends a signal to the fcorr process this test started.
    unsafe {
        libc::kill(pid as i32, signal);
    }
}

#[test]
fn sigterm_exits_143_and_sigint_130_after_writing_the_results_so_far() {
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        // The SUT's child sleeps in the background, as a grandchild of fcorr.
        let dir = eval_dir(&[case_line("slow", "q", "ok")], "sleep 60 & echo $! > sleeper.pid; wait", "");
        let child = fcorr()
            .current_dir(dir.path())
            .env_remove("CI")
            .args(["run", "--config", "fcorr.toml", "--out", "out"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let sleeper = wait_for_pid(&dir.path().join("sleeper.pid"));
        signal(child.id(), sig);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(code), "{}", text(&output.stderr));
        assert!(text(&output.stderr).contains("results so far were written"), "{}", text(&output.stderr));
        assert_eq!(results(dir.path()).suites[0].status, SuiteStatus::Cancelled);
        assert!(!alive(sleeper), "the SUT's child {sleeper} outlived fcorr");
    }
}

/// Runs the action's scripts/action/run.sh on `dir` with the real fcorr, inside a pretend
/// GitHub Actions step; `during` gets fcorr's pid once the SUT has written it to `fcorr.pid`.
/// Returns run.sh's stdout and stderr together, the step outputs and the job summary.
fn action_step(dir: &Path, during: impl FnOnce(i32)) -> (String, String, String) {
    let output_file = dir.join("github_output");
    let summary = dir.join("summary.md");
    let mut cmd = Command::new("bash");
    for key in github_vars() {
        cmd.env_remove(key);
    }
    let child = cmd
        .arg(repo().join("scripts/action/run.sh"))
        .current_dir(dir)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &output_file)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("RUNNER_TEMP", dir)
        .env("FCORR_BIN", assert_cmd::cargo::cargo_bin("fcorr"))
        .env("FCORR_CACHE_DIR", repo().join("target/fcorr-test-cache"))
        .env("IN_CONFIG", "fcorr.toml")
        .env("IN_BASELINE", "none")
        .env("IN_OUT", "out")
        .env_remove("CI")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    during(wait_for_pid(&dir.join("fcorr.pid")));
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "run.sh always exits 0:\n{}", text(&output.stderr));
    (
        text(&output.stdout) + &text(&output.stderr),
        std::fs::read_to_string(output_file).unwrap_or_default(),
        std::fs::read_to_string(summary).unwrap_or_default(),
    )
}

/// The lines of `log` after the last `::stop-commands::` fence is lifted; panics when a fence
/// stays up or no fence went up.
fn after_last_fence(log: &str) -> Vec<&str> {
    let lines: Vec<&str> = log.lines().collect();
    let raised = lines.iter().rposition(|l| l.starts_with("::stop-commands::")).expect("fcorr raised a fence");
    let token = &lines[raised]["::stop-commands::".len()..];
    let lifted = lines[raised..]
        .iter()
        .position(|l| *l == format!("::{token}::"))
        .unwrap_or_else(|| panic!("the fence {token} was never lifted:\n{log}"));
    lines[raised + lifted + 1..].to_vec()
}

#[test]
fn inside_the_action_a_killed_fcorr_has_its_fence_lifted_and_its_death_named() {
    // The SUT is fcorr's child: it records fcorr's pid and whether it could see the fence file.
    let script = "printf %s \"${FCORR_FENCE_FILE:-}\" > seen; echo $PPID > fcorr.pid; sleep 60";
    let dir = eval_dir(&[case_line("c", "q", "ok")], script, "");
    let (log, outputs, summary) = action_step(dir.path(), |pid| signal(pid as u32, libc::SIGKILL));
    let after = after_last_fence(&log);
    let error = "::error title=fcorr::fcorr was killed by SIGKILL (exit 137)";
    assert!(after.iter().any(|l| l.starts_with(error)), "no `{error}` after the fence:\n{log}");
    assert!(outputs.contains("exit-code=137") && outputs.contains("verdict=error"), "{outputs}");
    assert!(summary.contains("fcorr was killed by SIGKILL (exit 137)"), "{summary}");
    assert_eq!(std::fs::read_to_string(dir.path().join("seen")).unwrap(), "", "a child saw FCORR_FENCE_FILE");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("fcorr-fence"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // SIGTERM: fcorr stops the run itself, writes its results and lifts its own fence.
    let dir = eval_dir(&[case_line("c", "q", "ok")], "echo $PPID > fcorr.pid; sleep 60", "");
    let (log, outputs, summary) = action_step(dir.path(), |pid| signal(pid as u32, libc::SIGTERM));
    let after = after_last_fence(&log);
    let error =
        "::error title=fcorr::fcorr was stopped by SIGTERM (exit 143) after writing the results collected so far";
    assert!(after.iter().any(|l| l.starts_with(error)), "no `{error}` after the fence:\n{log}");
    assert!(outputs.contains("exit-code=143"), "{outputs}");
    assert!(summary.contains("SIGTERM (exit 143)"), "{summary}");
    assert_eq!(results(dir.path()).suites[0].status, SuiteStatus::Cancelled);
}

#[test]
fn a_case_id_over_128_kib_reaches_the_sut_in_its_case_file() {
    // Linux refuses to start a program with one variable over 128 KiB: the id travels in the
    // case file only, and a small one is still inline too.
    let big_id = "i".repeat(150_000);
    let script = r#"[ -s "$FCORR_CASE_FILE" ] || exit 9
if [ -n "${FCORR_CASE_ID+x}" ]; then echo inline; elif [ $(wc -c < "$FCORR_CASE_FILE") -gt 150000 ]; then echo file; fi"#;
    let dir = eval_dir(&[case_line(&big_id, "q", "file"), case_line("small", "q", "inline")], script, "");
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
    let run = results(dir.path());
    assert!(run.suites[0].cases.iter().all(|c| c.status == CaseStatus::Passed), "{:#?}", run.suites[0].cases);
}

#[test]
fn a_task_over_128_kib_reaches_the_executor_in_its_task_file() {
    let executor =
        r#"[ -z "${FCORR_TASK_JSON+x}" ] && [ $(wc -c < "$FCORR_TASK_FILE") -gt 200000 ] && [ "$FCORR_TASK_ID" = t1 ]"#;
    let dir = benchmark_dir(executor, serde_json::json!({"description": "d".repeat(200_000)}));
    let output = run_in(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{}", text(&output.stderr));
    let case = &results(dir.path()).suites[0].cases[0];
    assert_eq!(case.status, CaseStatus::Passed, "{case:#?}");
    // A small task is inline too, as before.
    let executor = r#"[ -n "$FCORR_TASK_JSON" ] && printf %s "$FCORR_TASK_JSON" | cmp -s "$FCORR_TASK_FILE" -"#;
    let dir = benchmark_dir(executor, serde_json::json!({}));
    run_in(dir.path(), &[]);
    let case = &results(dir.path()).suites[0].cases[0];
    assert_eq!(case.status, CaseStatus::Passed, "{case:#?}");
}

/// Every suite log is capped: the first and last 4 MiB kept, a marker line between them.
const LOG_CAP: u64 = 8 * 1024 * 1024 + 64 * 1024;

/// The log's size, after checking it ends with fcorr's last line and carries the cut marker.
fn capped_log(path: &Path) -> u64 {
    let size = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).len();
    let bytes = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.lines().any(|l| l.starts_with("[fcorr: ") && l.contains("bytes cut from the middle of this log")),
        "no cut marker in {}",
        path.display()
    );
    size
}

/// 20 MB of `x` on stderr, then `answer` on stdout.
fn noisy(answer: &str) -> String {
    format!("head -c 20000000 /dev/zero | tr '\\0' x >&2; echo {answer}")
}

#[test]
fn eval_and_bank_logs_are_capped_and_an_answer_beyond_the_cap_is_flagged() {
    let dir = eval_dir(
        &[case_line("loud", "q", "ok"), case_line("huge", "q", "ok")],
        r#"if grep -q huge "$FCORR_CASE_FILE"; then head -c 20000000 /dev/zero | tr '\0' x; else head -c 20000000 /dev/zero | tr '\0' x >&2; echo ok; fi"#,
        "",
    );
    run_in(dir.path(), &[]);
    let suite = &results(dir.path()).suites[0];
    let size = capped_log(&dir.path().join("out").join(suite.log_file.as_deref().unwrap()));
    assert!(size <= LOG_CAP, "the eval log is {size} bytes");
    let loud = suite.cases.iter().find(|c| c.name == "loud").unwrap();
    assert_eq!(loud.status, CaseStatus::Passed, "{loud:#?}");
    // 20 MB on stdout is not an answer: flagged, never judged.
    let huge = suite.cases.iter().find(|c| c.name == "huge").unwrap();
    assert_eq!(huge.extra().eval().reasons[0].code, "backend-error", "{huge:#?}");
    assert!(huge.message().unwrap().contains("more than 16 MiB"), "{huge:#?}");

    let bank = tempfile::tempdir().unwrap();
    let test = serde_json::json!({"test_id": "V2-001", "prompt": "p", "topics": ["t"], "expected_primary": ["a"]});
    std::fs::write(
        bank.path().join("bank.json"),
        serde_json::json!({"bank_type": "SEMANTIC", "tests": [test]}).to_string(),
    )
    .unwrap();
    let sut = noisy(r#"'{"output": ["a"]}'"#);
    std::fs::write(
        bank.path().join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"retrieval\"\nkind = \"bank\"\nmechanism = \"semantic\"\nbank = \"bank.json\"\n\
             rate-limit = 0\nsut = {{ type = \"command\", command = {} }}\n",
            toml_string(&sut)
        ),
    )
    .unwrap();
    let output = run_in(bank.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let suite = &results(bank.path()).suites[0];
    let log = suite.log_file.as_deref().expect("a bank suite with a SUT has a log");
    let size = capped_log(&bank.path().join("out").join(log));
    assert!(size <= LOG_CAP, "the bank log is {size} bytes");
}

#[test]
fn a_benchmark_log_is_capped_and_a_patch_beyond_the_cap_is_flagged() {
    // 80 MB of patch on stdout: more than the copy fcorr keeps (64 MiB head, 4 MiB tail).
    let executor = "echo 'diff --git a/x b/x'; head -c 80000000 /dev/zero | tr '\\0' x; echo";
    let dir = benchmark_dir(executor, serde_json::json!({}));
    run_in(dir.path(), &[]);
    let case = &results(dir.path()).suites[0].cases[0];
    assert_eq!(case.status, CaseStatus::Error, "{case:#?}");
    assert_eq!(case.extra().eval().reasons[0].code, "executor-output-cut", "{case:#?}");
    let log = dir.path().join("out/benchmark/bench/t1/task.log");
    let size = capped_log(&log);
    assert!(size <= LOG_CAP, "the task log is {size} bytes");
}

/// A small seeded generator (splitmix64), so a failing round can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A tmpfs mounted for the test (root only), unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `kib` KiB at a new directory, or says why it cannot.
    fn mount(kib: u64) -> Result<Tmpfs, String> {
        // SAFETY: geteuid only reads the process's effective user id.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not running as root, so no tmpfs can be mounted".into());
        }
        let dir = tempfile::tempdir().unwrap().keep();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(&dir)
            .stderr(Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => Ok(Tmpfs(dir)),
            other => {
                let _ = std::fs::remove_dir(&dir);
                Err(format!("`mount -t tmpfs` failed ({other:?}); the container may not allow mounts"))
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// An eval suite and a project suite whose SUT and test each leave a sleeping grandchild (one
/// in the command's group, one in a session of its own), recording every pid in `pids/`.
fn fault_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("pids")).unwrap();
    std::fs::create_dir_all(p.join("app")).unwrap();
    let pids = p.join("pids");
    let grandchildren = format!(
        "sleep 30 & echo $! > {pids}/$$.group; setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $! > {pids}/$$.session; ",
        pids = pids.display()
    );
    let cases: Vec<String> = (0..6).map(|i| case_line(&format!("c{i}"), "q", "ok")).collect();
    std::fs::write(p.join("cases.jsonl"), cases.join("\n") + "\n").unwrap();
    std::fs::write(
        p.join("app/test.sh"),
        format!(
            "{grandchildren}sleep 0.3\n\
             printf '<testsuite name=\"t\" tests=\"1\"><testcase classname=\"t\" name=\"ok\"/></testsuite>' > report.xml\n"
        ),
    )
    .unwrap();
    let sut = format!("{grandchildren}sleep 0.2; echo ok");
    std::fs::write(
        p.join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"answers\"\nkind = \"eval\"\ndataset = \"cases.jsonl\"\nconcurrency = 2\n\n\
             [suite.sut]\ntype = \"command\"\ncommand = {}\nretries = 0\n\n\
             [[suite]]\nname = \"app\"\npath = \"app\"\nrunner = \"command\"\n\
             commands = {{ test = \"sh test.sh\" }}\nreports = [\"report.xml\"]\n",
            toml_string(&sut)
        ),
    )
    .unwrap();
    dir
}

/// Processes whose environment carries a command marker handed out by the fcorr `pid`: its
/// descendants, wherever they were reparented.
fn marked_by(pid: u32) -> Vec<i32> {
    let prefix = format!("FCORR_COMMAND_ID={pid}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| alive(*p))
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var.starts_with(prefix.as_bytes())))
        })
        .collect()
}

/// Reads a pipe to the end on a thread of its own.
fn drain(pipe: Option<impl std::io::Read + Send + 'static>) -> Option<std::thread::JoinHandle<String>> {
    pipe.map(|mut pipe| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    })
}

#[test]
fn interrupted_and_starved_at_random_fcorr_always_reports_or_says_why_and_leaves_no_process() {
    let seed = std::env::var("FCORR_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    });
    println!("fault injection seed: {seed} (FCORR_FAULT_SEED={seed} replays it)");
    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut disk_skipped = None;
    let mut round = 0;
    // Bounded in rounds and in time: the whole test stays well under a minute.
    while round < 12 && started.elapsed() < Duration::from_secs(40) {
        round += 1;
        let dir = fault_workspace();
        let close_stdout = rng.below(3) == 0;
        let close_stderr = rng.below(3) == 0;
        let stop = match rng.below(3) {
            0 => None,
            1 => Some(libc::SIGINT),
            _ => Some(libc::SIGTERM),
        };
        // One round in four aims at the first moments (reading the config, planning).
        let delay = Duration::from_millis(if rng.below(4) == 0 { rng.below(40) } else { rng.below(1500) });
        let disk_kib = [None, Some(16), Some(64), Some(256)][rng.below(4) as usize];
        let mount = match disk_kib.map(Tmpfs::mount) {
            Some(Ok(m)) => Some(m),
            Some(Err(why)) => {
                disk_skipped = Some(why);
                None
            }
            None => None,
        };
        let out = mount.as_ref().map_or_else(|| dir.path().join("out"), |m| m.0.join("out"));
        let what = format!(
            "round {round} (seed {seed}): stdout {}, stderr {}, signal {stop:?} after {delay:?}, disk {:?}",
            if close_stdout { "closed" } else { "open" },
            if close_stderr { "closed" } else { "open" },
            mount.as_ref().and(disk_kib),
        );
        println!("{what}");

        let mut child = fcorr()
            .current_dir(dir.path())
            .env_remove("CI")
            .args(["run", "--config", "fcorr.toml", "--color", "never", "--out"])
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        // A closed pipe: the reader goes away at once, so every write fails with EPIPE.
        let stdout = if close_stdout {
            drop(child.stdout.take());
            None
        } else {
            drain(child.stdout.take())
        };
        let stderr = if close_stderr {
            drop(child.stderr.take());
            None
        } else {
            drain(child.stderr.take())
        };
        if let Some(sig) = stop {
            std::thread::sleep(delay);
            signal(pid, sig);
        }
        let status = child.wait().unwrap();
        let stdout = stdout.map(|h| h.join().unwrap());
        let stderr = stderr.map(|h| h.join().unwrap());
        let err = stderr.clone().unwrap_or_default();
        use std::os::unix::process::ExitStatusExt;
        if stop.is_some() && status.signal() == stop {
            // The signal came before fcorr could install its handler (the first millisecond of
            // the process): it ended by the signal's default action, before anything started.
            assert!(!out.join("results.json").exists(), "{what}");
            assert!(std::fs::read_dir(dir.path().join("pids")).unwrap().next().is_none(), "{what}");
            continue;
        }
        let code = status.code().unwrap_or_else(|| panic!("{what}: fcorr died by a signal: {status:?}\n{err}"));

        let parsed =
            std::fs::read_to_string(out.join("results.json")).ok().and_then(|t| serde_json::from_str::<Run>(&t).ok());
        let stopped = stop.map(|s| 128 + s);
        match &parsed {
            Some(_) => assert!(
                [0, 1, 3].contains(&code) || Some(code) == stopped,
                "{what}: results written, but exit {code}\n{err}"
            ),
            None => {
                assert!(code == 3 || Some(code) == stopped, "{what}: no results.json and exit {code}\n{err}");
                if stderr.is_some() {
                    assert!(
                        err.contains("fcorr: error:") || err.contains("before any suite started"),
                        "{what}: no results.json and stderr does not say why:\n{err}"
                    );
                }
            }
        }
        if let Some(run) = &parsed
            && Some(code) == stopped
            && stderr.is_some()
        {
            // Interrupted: it says so, or names the error that ended it (a full disk).
            assert!(err.contains("results so far were written") || err.contains("fcorr: error:"), "{what}:\n{err}");
            assert!(!run.suites.is_empty());
        }
        if stop.is_none() && mount.is_none() {
            // Only the pipes were closed: every suite passes, and the exit code says so.
            assert_eq!(code, 0, "{what}:\n{err}\n{stdout:?}");
        }

        // No descendant survives: neither the recorded grandchildren nor anything carrying this
        // fcorr's command marker.
        let deadline = Instant::now() + Duration::from_secs(3);
        let recorded: Vec<i32> = std::fs::read_dir(dir.path().join("pids"))
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok()?.trim().parse().ok())
            .collect();
        while (recorded.iter().any(|p| alive(*p)) || !marked_by(pid).is_empty()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let survivors: Vec<i32> = recorded.iter().copied().filter(|p| alive(*p)).chain(marked_by(pid)).collect();
        for p in &survivors {
            // SAFETY: kill only sends a signal; the test cleans up after a failure.
            unsafe {
                libc::kill(*p, libc::SIGKILL);
            }
        }
        assert!(survivors.is_empty(), "{what}: processes survived fcorr: {survivors:?}\n{err}");
    }
    if let Some(why) = disk_skipped {
        println!("full-disk faults skipped: {why}");
    }
}
