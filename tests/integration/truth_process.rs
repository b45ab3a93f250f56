//! Truth and safety at the process edge (issue 9): a runner killed by a signal, tokens that must
//! not reach tests or outputs, output fenced against workflow-command injection in Actions, an
//! unreadable event file, outputs that cannot be written, and processes that leave their group.
//! Every test runs the real fcorr binary on real processes (pytest, sh, setsid).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use fcorr::model::{Run, SuiteStatus};

use crate::support::*;

/// `fcorr` with the machine's own GitHub and token variables removed.
fn clean_fcorr(dir: &Path) -> Command {
    let mut cmd = fcorr();
    cmd.current_dir(dir);
    for (key, _) in std::env::vars() {
        if key.starts_with("GITHUB_") || key.starts_with("ACTIONS_") || key == "GH_TOKEN" || key == "CI" {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A workspace with a `command` suite running `script` (which must write `report.xml`).
fn command_workspace(script: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("app")).unwrap();
    std::fs::write(ws.path().join("app/test.sh"), script).unwrap();
    std::fs::write(
        ws.path().join("fcorr.toml"),
        "[[suite]]\nname = \"app\"\npath = \"app\"\nrunner = \"command\"\n\
         commands = { test = \"sh test.sh\" }\nreports = [\"report.xml\"]\n",
    )
    .unwrap();
    ws
}

/// A JUnit report whose failure message tries to act as workflow commands.
const HOSTILE_JUNIT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="evil" tests="2" failures="1">
    <testcase classname="evil" name="ok"/>
    <testcase classname="evil" name="::error::name-spoof">
      <failure message="boom&#10;::add-mask::x&#10;::error::spoofed&#10;see ##[error]spoofed2">trace
::warning::spoofed3</failure>
    </testcase>
  </testsuite>
</testsuites>
"#;

#[test]
fn a_runner_killed_by_a_signal_after_writing_its_report_is_an_error() {
    let fixture = expected("py-signal-exit");
    for (signal, number) in [("SIGSEGV", 11), ("SIGKILL", 9)] {
        let out = tempfile::tempdir().unwrap();
        let output = clean_fcorr(&repo())
            .arg("run")
            .arg(crate::support::fixture("py-signal-exit"))
            .arg("--out")
            .arg(out.path())
            .arg("--json")
            .env("FCORR_FIXTURE_SIGNAL", signal)
            .output()
            .unwrap();
        let (run, code) = parse_run(&output);
        let suite = &run.suites[0];
        // pytest's own report says every test passed, as it told the terminal.
        assert_counts(suite, &fixture["counts"]);
        assert_eq!(suite.status, SuiteStatus::Error, "{signal}: {:?}", suite.error);
        let message = &suite.error.as_ref().unwrap().message;
        assert!(message.contains(&format!("signal {number} ({signal})")), "{message}");
        assert_ne!(code, 0, "{signal}");
        assert_eq!(suite.score.value, 0.0);
    }
}

/// `fcorr run` on a fixture, checking its test phase exited as the fixture's native run did.
fn run_fixture_with_native_exit(name: &str) -> (Run, i32) {
    let out = tempfile::tempdir().unwrap();
    let output = clean_fcorr(&repo())
        .arg("run")
        .arg(crate::support::fixture(name))
        .arg("--out")
        .arg(out.path())
        .arg("--json")
        .output()
        .unwrap();
    let (run, code) = parse_run(&output);
    let test = phase(&run.suites[0], fcorr::model::PhaseKind::Test);
    assert_eq!(test.exit_code, expected(name)["native_exit_code"].as_i64().map(|c| c as i32), "{name}");
    (run, code)
}

#[test]
fn a_runner_that_exits_0_mid_run_names_the_tests_it_announced() {
    // pytest said `collected 3 items`, then a test called os._exit(0): no summary, no report,
    // exit 0. Before, the message said only "before reporting any test".
    let (run, code) = run_fixture_with_native_exit("py-early-exit");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Error, "{:?}", suite.error);
    assert!(suite.cases.is_empty(), "{:?}", suite.cases);
    let message = &suite.error.as_ref().unwrap().message;
    assert!(
        message.contains("the test process exited with code 0 before reporting 3 tests (pytest: `collected 3 items`)"),
        "{message}"
    );
    assert_eq!(code, 1);
    assert_eq!(suite.score.value, 0.0);
}

#[test]
fn a_session_pytest_exit_stopped_is_not_a_pass_and_names_the_tests_that_did_not_report() {
    // pytest.exit(returncode=0) in the second of three tests: pytest exits 0, says "1 passed",
    // and its report holds test_first and a nameless <testcase>. Before: "2 passed", PASS.
    let (run, code) = run_fixture_with_native_exit("py-pytest-exit");
    let suite = &run.suites[0];
    let cases: Vec<(&str, fcorr::model::CaseStatus)> =
        suite.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
    use fcorr::model::CaseStatus::{Error, Passed};
    assert_eq!(cases, vec![("test_first", Passed), ("(unnamed)", Error), ("[tests not reported]", Error)]);
    let message = suite.cases[2].message().unwrap();
    assert!(message.contains("announced 3 tests but the report holds 1"), "{message}");
    assert!(message.contains("_pytest.outcomes.Exit: stopping early"), "{message}");
    assert_eq!(suite.counts.passed, expected("py-pytest-exit")["counts"]["passed"].as_u64().unwrap());
    assert_eq!(code, 1);

    // Under pass-rate the test that reported is not a score: the one that never ran could have
    // failed. Before: 1 passed of 3 "ran" (33.33) met min-score 30, PASS.
    let out = tempfile::tempdir().unwrap();
    let config = out.path().join("fcorr.toml");
    let fixture = crate::support::fixture("py-pytest-exit");
    std::fs::write(
        &config,
        format!(
            "[[suite]]\nname = \"stop\"\npath = {:?}\npolicy = \"pass-rate\"\nmin-score = 30\n",
            fixture.display().to_string()
        ),
    )
    .unwrap();
    let output = clean_fcorr(&repo())
        .arg("run")
        .arg("--config")
        .arg(&config)
        .args(["--json", "--out"])
        .arg(out.path().join("out"))
        .output()
        .unwrap();
    let (run, code) = parse_run(&output);
    assert_eq!((run.suites[0].score.value, run.suites[0].score.met, code), (0.0, false, 1), "{:?}", run.verdict);
    let reason = &run.verdict.reasons[0].message;
    assert!(reason.contains("scores 0 because its results are incomplete: `[tests not reported]`"), "{reason}");
}

#[test]
fn a_report_left_from_an_earlier_run_is_not_read_as_this_runs_results() {
    // A self-hosted runner's workspace keeps the report the last run wrote; this time the test
    // command stops before writing one. Before, fcorr read the old report: PASS, exit 0.
    let ws = command_workspace("echo 'crashed before writing the report'\nexit 0\n");
    let report = ws.path().join("app/report.xml");
    std::fs::write(
        &report,
        "<testsuite name=\"old\" tests=\"2\"><testcase name=\"a\"/><testcase name=\"b\"/></testsuite>\n",
    )
    .unwrap();
    let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&report).unwrap().set_modified(an_hour_ago).unwrap();
    let out = tempfile::tempdir().unwrap();
    let output = clean_fcorr(ws.path()).arg("run").arg("--out").arg(out.path()).arg("--json").output().unwrap();
    let (run, code) = parse_run(&output);
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Error, "{:?}", suite.cases);
    assert!(suite.cases.is_empty(), "{:?}", suite.cases);
    let message = &suite.error.as_ref().unwrap().message;
    assert!(message.contains("report.xml (matching report.xml) was not written by this run"), "{message}");
    assert!(message.contains("left from an earlier run"), "{message}");
    assert_eq!(code, 1);

    // The same file written by the test command this time is read.
    let ws = command_workspace(
        "printf '<testsuite name=\"new\" tests=\"1\"><testcase name=\"a\"/></testsuite>' > report.xml\n",
    );
    let output = clean_fcorr(ws.path()).arg("run").arg("--out").arg(out.path()).arg("--json").output().unwrap();
    let (run, code) = parse_run(&output);
    assert_eq!((run.suites[0].status, run.suites[0].counts.passed, code), (SuiteStatus::Passed, 1, 0));
}

/// The secrets a runner holds, as distinct values so a leak names its source.
const SECRETS: &[(&str, &str)] = &[
    ("GITHUB_TOKEN", "ghs_fcorrSecretGithubToken123"),
    ("GH_TOKEN", "ghs_fcorrSecretGhToken456"),
    ("ACTIONS_RUNTIME_TOKEN", "fcorrSecretRuntimeToken789"),
    ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "fcorrSecretIdToken012"),
];

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            // A virtualenv holds no output of the tests; everything else is checked.
            if path.file_name().is_some_and(|n| n == ".venv" || n == "venv") {
                continue;
            }
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn no_token_reaches_the_tests_or_any_output_and_the_token_is_masked_first() {
    let ws = tempfile::tempdir().unwrap();
    let out = ws.path().join("out");
    let summary = ws.path().join("step-summary.md");
    let outputs = ws.path().join("github-output.txt");
    let mut cmd = clean_fcorr(ws.path());
    cmd.arg("ci")
        .arg(crate::support::fixture("py-print-env"))
        .args(["--baseline", "none", "--comment", "off", "--out"])
        .arg(&out)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "org/app")
        .env("GITHUB_EVENT_NAME", "push")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_WORKSPACE", ws.path());
    for (name, value) in SECRETS {
        cmd.env(name, value);
    }
    let output = cmd.output().unwrap();
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "one test fails\n{stdout}\n{stderr}");

    // The two tokens fcorr uses are masked before any other line.
    let first: Vec<&str> = stdout.lines().take(2).collect();
    assert_eq!(first, ["::add-mask::ghs_fcorrSecretGithubToken123", "::add-mask::ghs_fcorrSecretGhToken456"]);

    let mut checked =
        vec![("stdout after the masks".to_string(), stdout.lines().skip(2).collect::<Vec<_>>().join("\n"))];
    checked.push(("stderr".into(), stderr));
    checked.push(("step summary".into(), std::fs::read_to_string(&summary).unwrap()));
    checked.push(("step outputs".into(), std::fs::read_to_string(&outputs).unwrap()));
    let files = files_under(&out);
    for name in ["results.json", "junit.xml", "ctrf.json", "summary.md", "comment.md", "report.html"] {
        assert!(files.iter().any(|f| f.ends_with(name)), "{name} was not written");
    }
    assert!(files.iter().any(|f| f.extension().is_some_and(|e| e == "log")), "no suite log");
    for file in &files {
        checked.push((file.display().to_string(), text(&std::fs::read(file).unwrap())));
    }
    // The test did print its environment: the proof that this checks something.
    let results = std::fs::read_to_string(out.join("results.json")).unwrap();
    assert!(results.contains("FCORR_COMMAND_ID="), "the environment was not printed");
    for (what, content) in &checked {
        for (name, value) in SECRETS {
            assert!(!content.contains(value), "{name} leaked into {what}");
        }
    }
}

#[test]
fn only_the_suite_that_names_a_token_in_pass_env_gets_it() {
    let ws = tempfile::tempdir().unwrap();
    let mut config = String::new();
    for (name, pass) in [("open", "pass-env = [\"GITHUB_TOKEN\"]\n"), ("closed", "")] {
        std::fs::create_dir_all(ws.path().join(name)).unwrap();
        std::fs::write(
            ws.path().join(name).join("test.sh"),
            "env > env.txt\nprintf '<testsuite tests=\"1\"><testcase classname=\"c\" name=\"t\"/></testsuite>' > report.xml\n",
        )
        .unwrap();
        config.push_str(&format!(
            "[[suite]]\nname = \"{name}\"\npath = \"{name}\"\nrunner = \"command\"\n\
             commands = {{ test = \"sh test.sh\" }}\nreports = [\"report.xml\"]\n{pass}\n"
        ));
    }
    std::fs::write(ws.path().join("fcorr.toml"), config).unwrap();
    let mut cmd = clean_fcorr(ws.path());
    cmd.args(["run", "--config", "fcorr.toml", "--out", "out"]);
    for (name, value) in SECRETS {
        cmd.env(name, value);
    }
    let output = cmd.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let open = std::fs::read_to_string(ws.path().join("open/env.txt")).unwrap();
    let closed = std::fs::read_to_string(ws.path().join("closed/env.txt")).unwrap();
    assert!(open.contains("GITHUB_TOKEN=ghs_fcorrSecretGithubToken123"), "{open}");
    // The proof that both files are real environments.
    assert!(open.contains("FCORR_COMMAND_ID=") && closed.contains("FCORR_COMMAND_ID="), "{closed}");
    for (name, value) in SECRETS {
        assert!(!closed.contains(value), "{name} reached the suite that did not ask for it");
        if *name != "GITHUB_TOKEN" {
            assert!(!open.contains(value), "{name} reached a suite that asked only for GITHUB_TOKEN");
        }
    }
}

#[test]
fn pass_env_naming_a_variable_fcorr_does_not_remove_is_a_config_error() {
    let ws = command_workspace("exit 0\n");
    let config = std::fs::read_to_string(ws.path().join("fcorr.toml")).unwrap();
    let line = config.lines().count() + 1;
    std::fs::write(ws.path().join("fcorr.toml"), format!("{config}pass-env = [\"GITHUB_TOKN\"]\n")).unwrap();
    let output = clean_fcorr(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "out"]).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("fcorr.toml: line {line},")) && stderr.contains("`GITHUB_TOKN`"), "{stderr}");
    assert!(!ws.path().join("app/report.xml").exists() && !ws.path().join("out").exists(), "something ran");
}

/// The lines of `stream` outside every `::stop-commands::T` … `::T::` fence.
fn unfenced(stream: &str) -> Vec<String> {
    let mut outside = Vec::new();
    let mut token: Option<String> = None;
    for line in stream.lines() {
        match &token {
            Some(t) if line.trim() == format!("::{t}::") => token = None,
            Some(_) => {}
            None => match line.trim().strip_prefix("::stop-commands::") {
                Some(t) => token = Some(t.to_string()),
                None => outside.push(line.to_string()),
            },
        }
    }
    assert!(token.is_none(), "a fence was never lifted:\n{stream}");
    outside
}

fn assert_no_spoofed_command(output: &Output, what: &str) {
    let mut streams = vec![("stderr", text(&output.stderr))];
    let stdout = text(&output.stdout);
    if what.ends_with("--json") {
        // stdout stays one JSON document (parsed by the caller): the fence is on stderr, which
        // the runner reads through the same command processor, and wraps the whole run.
        let stderr = &streams[0].1;
        assert!(stderr.starts_with("::stop-commands::"), "{what}: {stderr}");
        let token = stderr.lines().next().unwrap().trim_start_matches("::stop-commands::");
        assert!(stderr.trim_end().ends_with(&format!("::{token}::")), "{what}: {stderr}");
    } else {
        streams.push(("stdout", stdout));
    }
    for (name, stream) in streams {
        for line in unfenced(&stream) {
            // fcorr's own annotations, with the message escaped onto one line, are meant to pass.
            if ["::error ", "::warning ", "::notice "].iter().any(|p| line.starts_with(p)) {
                continue;
            }
            assert!(!line.contains("spoofed") && !line.contains("name-spoof"), "{what} {name}: unfenced `{line}`");
        }
    }
}

#[test]
fn every_subcommand_fences_its_output_inside_actions() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("report.xml"), HOSTILE_JUNIT).unwrap();
    let actions = |cmd: &mut Command| {
        cmd.env("GITHUB_ACTIONS", "true").env("NO_COLOR", "1");
    };

    let mut import = clean_fcorr(ws.path());
    import.args(["import", "report.xml", "--out", "a"]);
    actions(&mut import);
    let output = import.output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    // Without the fence this test is meaningless: the hostile text must be printed.
    assert!(text(&output.stdout).contains("spoofed"), "{}", text(&output.stdout));
    assert_no_spoofed_command(&output, "import");

    for (what, args) in [
        ("import --json", vec!["import", "report.xml", "--out", "b", "--json"]),
        ("report", vec!["report", "a"]),
        ("merge", vec!["merge", "a", "--out", "m"]),
        ("compare", vec!["compare", "--results", "a", "--baseline", "b"]),
    ] {
        let mut cmd = clean_fcorr(ws.path());
        cmd.args(&args);
        actions(&mut cmd);
        let output = cmd.output().unwrap();
        assert!(output.status.code().is_some(), "{what}");
        assert_no_spoofed_command(&output, what);
        if what.ends_with("--json") {
            // stdout stays one JSON document; the fence went to stderr.
            serde_json::from_slice::<Run>(&output.stdout).unwrap();
            assert!(text(&output.stderr).contains("::stop-commands::"), "{what}");
        }
    }

    let app = command_workspace(&format!("cp {} report.xml\n", ws.path().join("report.xml").display()));
    let mut run = clean_fcorr(app.path());
    run.args(["run", "--config", "fcorr.toml", "--out", "out"]);
    actions(&mut run);
    let output = run.output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert_no_spoofed_command(&output, "run");
}

#[test]
fn ci_without_a_readable_event_keeps_the_fence_summary_outputs_and_annotations() {
    for event in [None, Some("{not json")] {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("report.xml"), HOSTILE_JUNIT).unwrap();
        std::fs::write(
            ws.path().join("fcorr.toml"),
            "[[suite]]\nname = \"imported\"\nkind = \"import\"\npath = \".\"\nreports = [\"report.xml\"]\n",
        )
        .unwrap();
        let event_path = ws.path().join("event.json");
        if let Some(content) = event {
            std::fs::write(&event_path, content).unwrap();
        }
        let summary = ws.path().join("step-summary.md");
        let outputs = ws.path().join("github-output.txt");
        let output = clean_fcorr(ws.path())
            .args(["ci", "--config", "fcorr.toml", "--baseline", "none", "--out", "out"])
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_REPOSITORY", "org/app")
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", &event_path)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_WORKSPACE", ws.path())
            .output()
            .unwrap();
        let stdout = text(&output.stdout);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
        assert!(stderr.contains("event.json") && stderr.contains("without pull-request context"), "{stderr}");
        assert!(std::fs::read_to_string(&summary).unwrap().contains("name-spoof"), "no job summary");
        assert!(std::fs::read_to_string(&outputs).unwrap().contains("verdict<<"), "no step outputs");
        // The one real annotation is outside the fence (it must reach the runner), escaped.
        let outside = unfenced(&stdout);
        let annotations: Vec<&String> = outside.iter().filter(|l| l.starts_with("::error ")).collect();
        assert_eq!(annotations.len(), 1, "{stdout}");
        assert!(annotations[0].contains("%0A::add-mask::x"), "{}", annotations[0]);
        assert_no_spoofed_command(&output, "ci");
    }
}

/// `cmd` run as user `nobody` through `setpriv` (for tests that need mode bits to bind root).
fn nobody(cmd: &Command) -> Command {
    let mut wrapped = Command::new("setpriv");
    wrapped.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(cmd.get_program()).args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    wrapped
}

#[test]
fn output_that_cannot_be_written_exits_3_naming_the_path_and_the_os_error() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("report.xml"), HOSTILE_JUNIT).unwrap();
    std::fs::write(ws.path().join("a-file"), "not a directory").unwrap();
    // A full disk: a small tmpfs, filled (where this process may mount one).
    let disk = crate::support::disk::Tmpfs::mount("output_that_cannot_be_written (full disk)", 64);
    let full = disk.as_ref().map(|d| d.path().display().to_string());
    // Saved results for `report` and `merge`.
    let saved = clean_fcorr(ws.path()).args(["import", "report.xml", "--out", "saved"]).output().unwrap();
    assert_eq!(saved.status.code(), Some(1));

    let mut targets = vec![("/dev/full/x", "Not a directory", false), ("a-file", "File exists", false)];
    if let (Some(disk), Some(full)) = (&disk, &full) {
        disk.fill();
        targets.push((full.as_str(), "No space left on device", false));
    }
    // A read-only directory. Root writes through mode bits, so as root fcorr runs as `nobody`.
    let read_only = ws.path().join("read-only");
    std::fs::create_dir_all(&read_only).unwrap();
    std::fs::set_permissions(&read_only, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    let root = std::fs::write(read_only.join("probe"), "x").is_ok();
    if root {
        // `nobody` must reach the workspace and read the saved results.
        std::fs::set_permissions(ws.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    targets.push(("read-only", "Permission denied", root));
    for (out, os_error, as_nobody) in targets {
        let commands: Vec<Vec<&str>> = vec![
            vec!["import", "report.xml", "--out", out],
            vec!["merge", "saved", "--out", out],
            vec!["report", "saved/results.json", "--out", out],
        ];
        for args in commands {
            let mut cmd = clean_fcorr(ws.path());
            cmd.args(&args);
            let output = if as_nobody { nobody(&cmd) } else { cmd }.output().unwrap();
            let stderr = text(&output.stderr);
            assert_eq!(output.status.code(), Some(3), "{args:?}: {stderr}");
            // Every writer (`report` too: it takes the output directory as they do) checks its
            // output directory first and says what is wrong with it in words, without the noise
            // of removing reports "inside" a file.
            let said = if out == "a-file" { "is a file, not a directory" } else { os_error };
            assert!(stderr.contains(out) && stderr.contains(said), "{args:?}: {stderr}");
            assert!(!stderr.contains("cannot remove an earlier report: Not a directory"), "{args:?}: {stderr}");
        }
    }
    if let Some(disk) = &disk {
        // The in-progress marker stays, so `fcorr publish` refuses what is there.
        assert_eq!(disk.names("."), ["fcorr-incomplete.txt"], "a failed write leaves no temporary file");
    }
    // `run` and `ci` write logs first: the same exit code and explanation.
    let app = command_workspace("cp ../report.xml report.xml\n");
    std::fs::copy(ws.path().join("report.xml"), app.path().join("report.xml")).unwrap();
    for sub in ["run", "ci"] {
        let output =
            clean_fcorr(app.path()).args([sub, "--config", "fcorr.toml", "--out", "/dev/full/x"]).output().unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{sub}: {stderr}\n{}", text(&output.stdout));
        assert!(stderr.contains("/dev/full/x") && stderr.contains("Not a directory"), "{sub}: {stderr}");
    }
}

/// QA C24: two fcorr processes writing one output directory. Before, the second replaced the
/// first's results (a FAIL became the directory's PASS) and the first to finish removed the
/// other's in-progress marker. Now the second stops at once (exit 2) naming the first, touches
/// nothing, and the directory is free again once the first has finished.
#[test]
fn a_second_fcorr_into_an_output_directory_in_use_is_refused_naming_the_first() {
    // Run A's test waits for `go`, then reports a failure.
    let app = command_workspace(
        "while [ ! -f ../go ]; do sleep 0.05; done
\
         printf '<testsuite tests=\"1\"><testcase classname=\"c\" name=\"a_fails\"><failure/></testcase></testsuite>' > report.xml\n",
    );
    std::fs::write(
        app.path().join("pass.xml"),
        r#"<testsuite tests="1"><testcase classname="c" name="b_passes"/></testsuite>"#,
    )
    .unwrap();
    let mut a = clean_fcorr(app.path())
        .args(["run", "--config", "fcorr.toml", "--out", "out"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let marker = app.path().join("out/fcorr-incomplete.txt");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !marker.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(marker.exists(), "run A never marked its output directory");
    for args in [&["import", "pass.xml", "--out", "out"][..], &["run", "--config", "fcorr.toml", "--out", "out"]] {
        let b = clean_fcorr(app.path()).args(args).output().unwrap();
        let stderr = text(&b.stderr);
        assert_eq!(b.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("another fcorr is writing into this output directory")
                && stderr.contains(&format!("fcorr run (pid {})", a.id())),
            "{args:?}: {stderr}"
        );
        assert!(marker.exists(), "{args:?} removed run A's marker");
    }
    std::fs::write(app.path().join("go"), "").unwrap();
    assert_eq!(a.wait().unwrap().code(), Some(1));
    assert!(!marker.exists(), "run A finished: its marker is gone");
    let results = std::fs::read_to_string(app.path().join("out/results.json")).unwrap();
    assert!(results.contains("a_fails") && !results.contains("b_passes"), "{results}");
    // The lock went with run A: the directory takes the next run.
    let b = clean_fcorr(app.path()).args(["import", "pass.xml", "--out", "out"]).output().unwrap();
    assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
}

/// `fcorr report` writes an output directory as `run`, `ci`, `import` and `merge` do. Before,
/// it took no lock (it re-rendered a directory another fcorr was writing, under that one's
/// marker) and neither set nor cleared the in-progress marker: a re-render that failed half-way
/// left no sign, and a complete one left an earlier stopped run's marker in place. Now it holds
/// the directory, marks it while writing, and clears the mark once every report is in place,
/// except when the results it re-rendered come from a directory marked incomplete themselves:
/// those may be an earlier run's, and `fcorr publish` must still refuse them.
#[test]
fn fcorr_report_holds_and_marks_its_output_directory_like_the_other_writers() {
    let app = command_workspace(
        "while [ ! -f ../go ]; do sleep 0.05; done\n\
         printf '<testsuite tests=\"1\"><testcase classname=\"c\" name=\"a_fails\"><failure/></testcase></testsuite>' > report.xml\n",
    );
    let d = app.path();
    std::fs::write(d.join("pass.xml"), r#"<testsuite tests="1"><testcase classname="c" name="b_passes"/></testsuite>"#)
        .unwrap();
    let saved = clean_fcorr(d).args(["import", "pass.xml", "--out", "saved"]).output().unwrap();
    assert_eq!(saved.status.code(), Some(0), "{}", text(&saved.stderr));
    let report = |args: &[&str]| {
        let output = clean_fcorr(d).arg("report").args(args).env("NO_COLOR", "1").output().unwrap();
        (output.status.code(), text(&output.stdout), text(&output.stderr))
    };

    // Another fcorr writing the directory: refused, naming it, its marker and reports untouched.
    let mut a = clean_fcorr(d)
        .args(["run", "--config", "fcorr.toml", "--out", "out"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let marker = d.join("out/fcorr-incomplete.txt");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !marker.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(marker.exists(), "run A never marked its output directory");
    let (code, _, stderr) = report(&["saved/results.json", "--out", "out"]);
    std::fs::write(d.join("go"), "").unwrap();
    let a_code = a.wait().unwrap().code();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("another fcorr is writing into this output directory")
            && stderr.contains(&format!("fcorr run (pid {})", a.id()))
            && stderr.contains("fcorr report did not start"),
        "{stderr}"
    );
    assert_eq!(a_code, Some(1));
    let results = std::fs::read_to_string(d.join("out/results.json")).unwrap();
    assert!(results.contains("a_fails") && !results.contains("b_passes"), "run A's results stay: {results}");

    // A marker an earlier, stopped run left: a complete re-render replaces every report, so the
    // directory is a complete run's again and the marker goes.
    std::fs::create_dir_all(d.join("stale")).unwrap();
    std::fs::write(d.join("stale/fcorr-incomplete.txt"), "fcorr run (pid 1) started writing here; …\n").unwrap();
    let (code, _, stderr) = report(&["saved/results.json", "--out", "stale"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!d.join("stale/fcorr-incomplete.txt").exists(), "a complete re-render clears the marker");

    // A report that cannot be written (report.html is a directory): exit 3, the directory stays
    // marked, so `fcorr publish` refuses what is there.
    std::fs::create_dir_all(d.join("broken/report.html/x")).unwrap();
    let (code, _, stderr) = report(&["saved/results.json", "--out", "broken"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("report.html"), "{stderr}");
    let left = std::fs::read_to_string(d.join("broken/fcorr-incomplete.txt")).unwrap_or_default();
    assert!(left.starts_with("fcorr report (pid "), "the re-render marked the directory: {left:?}");
    let published = clean_fcorr(d).args(["publish", "broken"]).output().unwrap();
    assert_eq!(published.status.code(), Some(2), "{}", text(&published.stderr));

    // Results read from a directory marked incomplete may be an earlier run's: re-rendered in
    // place or elsewhere, the reports stay marked (and it is said), so publish still refuses them.
    let copy = |from: &str, to: &str| {
        std::fs::create_dir_all(d.join(to)).unwrap();
        std::fs::copy(d.join(from).join("results.json"), d.join(to).join("results.json")).unwrap();
    };
    copy("saved", "stopped");
    std::fs::write(d.join("stopped/fcorr-incomplete.txt"), "fcorr run (pid 7) started writing here; …\n").unwrap();
    for (args, dir) in [(&["stopped"][..], "stopped"), (&["stopped/results.json", "--out", "copied"], "copied")] {
        let (code, _, stderr) = report(args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(
            stderr.contains("marked as not written completely") && stderr.contains("(pid 7)"),
            "{args:?}: {stderr}"
        );
        let kept = std::fs::read_to_string(d.join(dir).join("fcorr-incomplete.txt")).unwrap_or_default();
        assert!(kept.contains("(pid 7)"), "{args:?}: the marker stays and names the stopped run: {kept:?}");
    }
}

/// True while `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()), Some("Z") | None),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
#[test]
fn no_test_process_outlives_the_run_whatever_its_session() {
    let pids = tempfile::tempdir().unwrap();
    let p = pids.path().display();
    // A grandchild in its own session and a double-forked daemon (fork, setsid, fork, exit),
    // both outliving the test command, which passes and writes its report.
    let script = format!(
        "setsid sh -c 'echo $$ > {p}/session; exec sleep 300' </dev/null >/dev/null 2>&1 &\n\
         sh -c 'setsid sh -c \"sleep 300 & echo \\$! > {p}/daemon\" &' </dev/null >/dev/null 2>&1\n\
         while [ ! -s {p}/session ] || [ ! -s {p}/daemon ]; do sleep 0.05; done\n\
         printf '<testsuite tests=\"1\"><testcase classname=\"c\" name=\"t\"/></testsuite>' > report.xml\n"
    );
    let app = command_workspace(&script);
    let output = clean_fcorr(app.path()).args(["run", "--config", "fcorr.toml", "--out", "out"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}\n{}", text(&output.stdout), text(&output.stderr));
    for name in ["session", "daemon"] {
        let pid: u32 = std::fs::read_to_string(pids.path().join(name)).unwrap().trim().parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(2);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "{name} process {pid} outlived fcorr");
        // The suite log names what was killed.
        let log = std::fs::read_to_string(app.path().join("out/logs/app.log")).unwrap();
        let line = log.lines().find(|l| l.contains("killed leftover process")).unwrap_or_else(|| panic!("{log}"));
        assert!(line.contains(&pid.to_string()), "{name} {pid}: {line}");
    }
}

#[test]
fn a_suite_log_keeps_head_and_tail_of_a_huge_output_with_a_marker() {
    // 64 MB printed by a real test command; the report itself is small.
    let script = "echo FIRST-LINE\nyes 0123456789abcdef0123456789abcdef | head -c 64000000\necho\necho LAST-LINE\n\
                  printf '<testsuite tests=\"1\"><testcase classname=\"c\" name=\"t\"/></testsuite>' > report.xml\n";
    let app = command_workspace(script);
    let output = clean_fcorr(app.path()).args(["run", "--config", "fcorr.toml", "--out", "out"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let log = app.path().join("out/logs/app.log");
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size < 9 * 1024 * 1024, "the log is {size} bytes");
    let content = text(&std::fs::read(&log).unwrap());
    assert!(content.contains("FIRST-LINE") && content.contains("LAST-LINE"));
    let marker = content.lines().find(|l| l.contains("bytes cut from the middle of this log")).expect("a cut marker");
    let cut: u64 = marker.trim_start_matches("[fcorr: ").split(' ').next().unwrap().parse().unwrap();
    assert!(cut + size >= 64_000_000, "{marker}");
}

/// A JUnit report whose headers declare a failure but whose testcases all passed (a writer that
/// lost the failing result) fails its suite, and the terminal says which file declared what
/// (findings D10: before, it passed with only a warning in summary.md).
#[test]
fn a_report_declaring_failures_it_does_not_list_fails_and_says_so_on_the_terminal() {
    let ws = command_workspace(
        "printf '<testsuites tests=\"3\" failures=\"1\"><testsuite name=\"s\" tests=\"3\" failures=\"1\">\
         <testcase classname=\"c\" name=\"a\"/><testcase classname=\"c\" name=\"b\"/></testsuite></testsuites>' > report.xml\n",
    );
    let out = tempfile::tempdir().unwrap();
    let output = clean_fcorr(ws.path()).arg("run").arg("--out").arg(out.path()).output().unwrap();
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}{}", text(&output.stderr));
    assert!(stdout.contains("error [declared failures not reported] report.xml"), "{stdout}");
    assert!(
        stdout.contains(
            "the report declares <testsuites> failures=1; <testsuite> `s` failures=1 but lists no failing test"
        ),
        "{stdout}"
    );
}
