//! End to end: the `fcorr` binary in a fake GitHub Actions environment (env vars, an event file,
//! temporary GITHUB_STEP_SUMMARY / GITHUB_OUTPUT, a wiremock GitHub API) running a real
//! `node --test` suite (the js-node-test fixture) plus an imported JUnit report.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use fcorr::model::{CaseStatus, Run};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::github::{posted_bodies, requests};

const BASE_SHA: &str = "abcdef1234567890abcdef1234567890abcdef12";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `fcorr` with the machine's own GitHub variables removed.
fn fcorr(dir: &Path) -> Command {
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(dir).env("FCORR_CACHE_DIR", repo().join("target/fcorr-test-cache"));
    // `crate::support::fcorr_bin` removed the GITHUB_* variables; these also change what fcorr does.
    for key in ["CI", "FCORR_ARTIFACT_NAME", "GH_TOKEN"] {
        cmd.env_remove(key);
    }
    cmd
}

/// The variables GitHub sets in a `pull_request` job.
fn github_env(ws: &Path, api: &str, event_name: &str) -> HashMap<&'static str, String> {
    HashMap::from([
        ("CI", "true".to_string()),
        ("GITHUB_ACTIONS", "true".into()),
        ("GITHUB_REPOSITORY", "org/app".into()),
        ("GITHUB_EVENT_NAME", event_name.into()),
        ("GITHUB_EVENT_PATH", ws.join("event.json").display().to_string()),
        ("GITHUB_SHA", "head1".into()),
        ("GITHUB_REF", "refs/pull/5/merge".into()),
        ("GITHUB_WORKFLOW", "CI".into()),
        ("GITHUB_WORKFLOW_REF", "org/app/.github/workflows/ci.yml@refs/pull/5/merge".into()),
        ("GITHUB_JOB", "test".into()),
        ("GITHUB_RUN_ID", "99".into()),
        ("GITHUB_API_URL", api.into()),
        ("GITHUB_SERVER_URL", "https://github.com".into()),
        ("GITHUB_STEP_SUMMARY", ws.join("step-summary.md").display().to_string()),
        ("GITHUB_OUTPUT", ws.join("github-output.txt").display().to_string()),
        ("GITHUB_TOKEN", "ghs_e2e".into()),
        ("GITHUB_WORKSPACE", ws.display().to_string()),
    ])
}

fn write_event(ws: &Path, head_repo: &str) {
    let event = json!({
        "action": "synchronize",
        "number": 5,
        "pull_request": {
            "number": 5,
            "html_url": "https://github.com/org/app/pull/5",
            "head": {"sha": "head1", "ref": "feature", "repo": {"full_name": head_repo}},
            "base": {"sha": "base1", "ref": "main", "repo": {"full_name": "org/app"}}
        },
        "repository": {"full_name": "org/app", "default_branch": "main"}
    });
    std::fs::write(ws.join("event.json"), event.to_string()).unwrap();
}

/// A JUnit report as another tool wrote it, with file and line attributes and a message that
/// needs escaping in a workflow command.
const IMPORTED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="calc" tests="2" failures="1">
    <testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" line="3" time="0.01"/>
    <testcase classname="tests.test_calc" name="test_percent" file="tests/test_calc.py" line="12" time="0.02">
      <failure message="100% wrong: got 1,5">assert percent(3, 2) == 150
E   AssertionError: 100% wrong: got 1,5</failure>
    </testcase>
  </testsuite>
</testsuites>
"#;

/// Workspace with the node fixture copied in (the test writes junit.xml into it) and the
/// imported report.
fn workspace(with_node: bool) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let mut config = String::new();
    if with_node {
        let app = ws.path().join("app");
        copy_dir(&repo().join("tests/fixtures/js-node-test"), &app);
        config.push_str(
            "[[suite]]\nname = \"node\"\npath = \"app\"\nrunner = \"command\"\n\
             commands = { test = \"node --test --test-reporter=junit --test-reporter-destination=junit.xml\" }\n\
             reports = [\"junit.xml\"]\n\n",
        );
    }
    std::fs::create_dir_all(ws.path().join("imported")).unwrap();
    std::fs::write(ws.path().join("imported/report.xml"), IMPORTED).unwrap();
    config.push_str(
        "[[suite]]\nname = \"imported\"\nkind = \"import\"\npath = \"imported\"\nreports = [\"report.xml\"]\n",
    );
    std::fs::write(ws.path().join("fcorr.toml"), config).unwrap();
    ws
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "node_modules" || name == "junit.xml" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

fn zip_of(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    writer.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
    writer.write_all(bytes).unwrap();
    writer.finish().unwrap().into_inner()
}

/// Step outputs parsed from the heredoc format.
fn parse_outputs(text: &str) -> HashMap<String, String> {
    let mut outputs = HashMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let (name, delimiter) = line.split_once("<<").expect("every output is a heredoc");
        let mut value = Vec::new();
        for l in lines.by_ref() {
            if l == delimiter {
                break;
            }
            value.push(l);
        }
        outputs.insert(name.to_string(), value.join("\n"));
    }
    outputs
}

fn node_expected() -> Value {
    let text = std::fs::read_to_string(repo().join("tests/fixtures/js-node-test/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

async fn get(server: &MockServer, route: &str, body: Value) {
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(server)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ci_runs_compares_publishes_and_gates() {
    let ws = workspace(true);
    write_event(ws.path(), "org/app");

    // The baseline: this same project on the base commit, where the failing node test passed.
    fcorr(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "base-out", "--json"]).assert().code(1);
    let mut base: Run =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("base-out/results.json")).unwrap()).unwrap();
    let failing =
        node_expected()["cases"].as_array().unwrap().iter().find(|c| c["status"] == "failed").unwrap()["name"]
            .as_str()
            .unwrap()
            .rsplit(" > ")
            .next()
            .unwrap()
            .to_string();
    let node = base.suites.iter_mut().find(|s| s.id == "node").unwrap();
    node.cases.iter_mut().find(|c| c.name == failing).expect("the failing case is in the results").status =
        CaseStatus::Passed;
    let zip = zip_of("results.json", serde_json::to_string(&base).unwrap().as_bytes());

    let server = MockServer::start().await;
    get(&server, "/repos/org/app/actions/runs/99", json!({"id": 99, "workflow_id": 7})).await;
    get(
        &server,
        "/repos/org/app/compare/base1...head1",
        json!({"status": "ahead", "merge_base_commit": {"sha": BASE_SHA}}),
    )
    .await;
    Mock::given(method("GET"))
        .and(path("/repos/org/app/actions/workflows/7/runs"))
        .and(query_param("head_sha", BASE_SHA))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"total_count": 1, "workflow_runs": [
            {"id": 500, "head_sha": BASE_SHA, "conclusion": "success", "html_url": "https://github.com/org/app/actions/runs/500"}
        ]})))
        .mount(&server)
        .await;
    get(
        &server,
        "/repos/org/app/actions/runs/500/artifacts",
        json!({"total_count": 1, "artifacts": [{"id": 42, "name": "fcorr-results", "expired": false}]}),
    )
    .await;
    Mock::given(method("GET"))
        .and(path("/repos/org/app/actions/artifacts/42/zip"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", format!("{}/blob/42", server.uri())))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/blob/42"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(zip))
        .mount(&server)
        .await;
    mock_new_pr_comment(&server).await;

    let mut cmd = fcorr(ws.path());
    cmd.envs(github_env(ws.path(), &server.uri(), "pull_request"));
    let assert = cmd
        .args(["ci", "--config", "fcorr.toml", "--fail-on", "regression", "--comment", "update", "--annotations"])
        .args(["--out", "fcorr-out", "--baseline", "github"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();

    // Results are on disk with the comparison and the gate's reason.
    let run: Run =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("fcorr-out/results.json")).unwrap()).unwrap();
    let comparison = run.comparison.as_ref().expect("compared with the artifact baseline");
    assert_eq!(comparison.baseline.commit.as_deref(), Some(BASE_SHA));
    assert_eq!(comparison.baseline.commits_behind, 0);
    assert!(run.verdict.reasons.iter().any(|r| r.gate == "regression" && r.message.contains(&failing)), "{stderr}");
    let expected = &node_expected()["counts"];
    let node = run.suites.iter().find(|s| s.id == "node").unwrap();
    assert_eq!(node.counts.passed, expected["passed"].as_u64().unwrap());
    assert_eq!(node.counts.failed, expected["failed"].as_u64().unwrap());
    assert_eq!(node.counts.skipped, expected["skipped"].as_u64().unwrap());

    // Annotations: repository-relative path, escaped properties and message.
    assert!(
        stdout.contains(
            "::error file=imported/tests/test_calc.py,line=12,title=imported%3A failed test_percent::100%25 wrong: got 1,5%0A"
        ),
        "{stdout}"
    );
    assert!(stdout.lines().any(|l| l.starts_with("::error ") && l.contains(&failing)), "{stdout}");
    // The table quotes tool output, so it is fenced off from the command parser.
    let stop = stdout.lines().find_map(|l| l.strip_prefix("::stop-commands::")).expect("stop-commands").to_string();
    assert!(stdout.contains(&format!("::{stop}::")));

    // Job summary and outputs.
    let summary = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    assert!(summary.contains(&failing), "{summary}");
    let outputs = parse_outputs(&std::fs::read_to_string(ws.path().join("github-output.txt")).unwrap());
    assert_eq!(outputs["verdict"], "fail");
    assert_eq!(outputs["failed"], (expected["failed"].as_u64().unwrap() + 1).to_string());
    assert_eq!(outputs["passed"], (expected["passed"].as_u64().unwrap() + 1).to_string());
    assert_eq!(outputs["skipped"], expected["skipped"].as_u64().unwrap().to_string());
    assert_eq!(outputs["comment-url"], "https://github.com/org/app/pull/5#issuecomment-77");
    assert!(outputs["results-file"].ends_with("fcorr-out/results.json"));
    let node_total: u64 = ["passed", "failed", "skipped", "error"].iter().map(|k| expected[k].as_u64().unwrap()).sum();
    assert_eq!(outputs["total"], (node_total + 2).to_string());
    assert_eq!(outputs["check-run-url"], "");
    assert_eq!(outputs.len(), 14);

    // The comment sent to GitHub: marker, the baseline commit, the new failure.
    let posts = posted_bodies(&server).await;
    let body = posts[0]["body"].as_str().unwrap();
    assert!(body.starts_with("<!-- fcorr:CI/test -->\n"), "{body}");
    assert!(body.contains(&BASE_SHA[..7]), "{body}");
    assert!(body.contains(&failing), "{body}");
    // It is the comment template's rendering: a real per-suite table and new failures before others.
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, body, &fcorr::report::html::options());
    let has_suite_table =
        root.descendants().any(|n| matches!(n.data.borrow().value, comrak::nodes::NodeValue::Table(_)));
    assert!(has_suite_table, "{body}");
    // Each failing case once, grouped: new failures first.
    let new_failures = body.find("**🆕 New failures (").expect("a New failures group");
    assert!(body.find("**🟥 Still failing (").is_none_or(|still| new_failures < still), "{body}");
    // Kept for people to read (the closing note of the CI work quotes it).
    let _ = std::fs::write(Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-comment.md"), body);
}

/// `fcorr` in a `pull_request` job from a fork (a read-only token: nothing needs the API), in a
/// workspace of one import suite with a failing case.
async fn on_a_fork_pr() -> (tempfile::TempDir, MockServer, Command) {
    let ws = workspace(false);
    write_event(ws.path(), "someone/app-fork");
    let server = MockServer::start().await;
    let mut cmd = fcorr(ws.path());
    cmd.envs(github_env(ws.path(), &server.uri(), "pull_request"));
    (ws, server, cmd)
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_pull_requests_publish_only_what_needs_no_write_token() {
    let (ws, server, mut cmd) = on_a_fork_pr().await;
    let assert = cmd
        .args(["ci", "--config", "fcorr.toml", "--baseline", "none", "--check-run", "--out", "fcorr-out"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("fork") && stderr.contains("workflow_run"), "{stderr}");
    assert!(server.received_requests().await.unwrap().is_empty(), "no API call on a fork PR");
    assert!(std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap().contains("test_percent"));
    let outputs = parse_outputs(&std::fs::read_to_string(ws.path().join("github-output.txt")).unwrap());
    assert_eq!(outputs["verdict"], "fail");
    assert_eq!(outputs["comment-url"], "");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_warning_reaches_the_terminal_results_job_summary_and_annotations() {
    // Two different warnings: a baseline of another project (no suite in common), a --files glob
    // matching nothing. (A baseline file that is not there is an error now, not a warning.)
    let (ws, _server, mut cmd) = on_a_fork_pr().await;
    std::fs::write(ws.path().join("foreign.xml"), r#"<testsuite tests="1"><testcase name="x"/></testsuite>"#).unwrap();
    crate::support::fcorr_bin()
        .current_dir(ws.path())
        .args(["import", "foreign.xml", "--name", "foreign-suite", "--out", "foreign"])
        .assert()
        .code(0);
    let assert = cmd
        .args([
            "ci",
            "--config",
            "fcorr.toml",
            "--baseline",
            "foreign",
            "--files",
            "none/*.xml",
            "--fail-on",
            "strict",
            "--out",
            "fcorr-out",
        ])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    let summary = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("fcorr-out/results.json")).unwrap()).unwrap();
    let annotations: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::warning title=fcorr::")).collect();
    for needle in ["none of this run's suites (it has foreign-suite; this run has ", "none/*.xml"] {
        assert!(stderr.lines().any(|l| l.starts_with("fcorr: warning: ") && l.contains(needle)), "{needle}: {stderr}");
        assert!(
            results["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains(needle)),
            "{results}"
        );
        assert!(summary.contains("### Warnings") && summary.contains(needle), "{needle}: {summary}");
        assert!(annotations.iter().any(|l| l.contains(needle)), "{needle}: {stdout}");
    }
    // The same list everywhere: every warning given before the reports were written (publishing's
    // own, here the fork's read-only token, come later and are in the log only).
    let listed: Vec<&str> = results["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    for warning in &listed {
        assert!(stderr.contains(&format!("fcorr: warning: {warning}\n")), "{warning}: {stderr}");
    }
    assert_eq!(annotations.len(), listed.len(), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ci_json_keeps_stdout_a_json_document_and_annotates_on_stderr() {
    let (_ws, _server, mut cmd) = on_a_fork_pr().await;
    let assert = cmd.args(["ci", "--config", "fcorr.toml", "--baseline", "none", "--json"]).assert().code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    let run: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}\n{stdout}"));
    assert_eq!(run["verdict"]["outcome"], "fail", "{stdout}");
    assert!(stderr.lines().any(|l| l.starts_with("::error ") && l.contains("test_percent")), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn publish_from_a_workflow_run_comments_on_the_fork_pr() {
    let ws = workspace(false);
    // Stage 1 (no GitHub environment needed to produce results).
    fcorr(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "stage1", "--json"]).assert().code(1);
    write_event(ws.path(), "someone/app-fork");
    std::fs::rename(ws.path().join("event.json"), ws.path().join("stage1/event.json")).unwrap();

    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(
            ResponseTemplate::new(403).set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
        .mount(&server)
        .await;
    get(&server, "/repos/org/app/issues/5/comments", json!([])).await;
    Mock::given(method("POST"))
        .and(path("/repos/org/app/issues/5/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "id": 88, "html_url": "https://github.com/org/app/pull/5#issuecomment-88",
            "user": {"login": "github-actions[bot]"}
        })))
        .expect(1)
        .mount(&server)
        .await;

    // GitHub confirms the event file's pull request: open, at the head stage 1 tested.
    get(&server, "/repos/org/app/pulls/5", json!({"number": 5, "state": "open", "head": {"sha": "head1"}})).await;

    // Stage 2 runs on workflow_run with a write token; its own event file is GitHub's
    // `workflow_run` payload (no pull request listed for a fork), not the PR's.
    let mut env = github_env(ws.path(), &server.uri(), "workflow_run");
    let own = json!({"workflow_run": {"head_sha": "head1", "event": "pull_request", "pull_requests": []}});
    std::fs::write(ws.path().join("own-event.json"), own.to_string()).unwrap();
    env.insert("GITHUB_EVENT_PATH", ws.path().join("own-event.json").display().to_string());
    let mut cmd = fcorr(ws.path());
    cmd.envs(env);
    cmd.args(["publish", "--results", "stage1/results.json", "--event", "stage1/event.json", "--comment-tag", "pr"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("issuecomment-88"));
    let posts = posted_bodies(&server).await;
    assert!(posts[0]["body"].as_str().unwrap().starts_with("<!-- fcorr:pr -->"));
}

/// GitHub for a PR without an fcorr comment yet, under `GITHUB_TOKEN`: one comment is created.
async fn mock_new_pr_comment(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(
            ResponseTemplate::new(403).set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
        .mount(server)
        .await;
    get(server, "/repos/org/app/issues/5/comments", json!([])).await;
    Mock::given(method("POST"))
        .and(path("/repos/org/app/issues/5/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "id": 77, "html_url": "https://github.com/org/app/pull/5#issuecomment-77",
            "body": "<!-- fcorr:CI/test -->", "user": {"login": "github-actions[bot]", "type": "Bot"}
        })))
        .expect(1)
        .mount(server)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn comment_links_failures_to_the_pr_head_and_to_the_check_run() {
    const HEAD: &str = "1234567890abcdef1234567890abcdef12345678";
    const MERGE: &str = "fedcba0987654321fedcba0987654321fedcba09";
    let ws = workspace(false);
    write_event(ws.path(), "org/app");
    let event =
        std::fs::read_to_string(ws.path().join("event.json")).unwrap().replace("\"head1\"", &format!("\"{HEAD}\""));
    std::fs::write(ws.path().join("event.json"), event).unwrap();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/repos/org/app/check-runs"))
        .respond_with(
            ResponseTemplate::new(201).set_body_json(json!({"id": 4, "html_url": "https://github.com/org/app/runs/4"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/org/app/check-runs/4"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 4, "status": "completed"})))
        .mount(&server)
        .await;
    mock_new_pr_comment(&server).await;

    let mut cmd = fcorr(ws.path());
    let mut env = github_env(ws.path(), &server.uri(), "pull_request");
    // On pull_request GITHUB_SHA is GitHub's merge commit; links must use the PR head instead.
    env.insert("GITHUB_SHA", MERGE.into());
    cmd.envs(env);
    cmd.args(["ci", "--config", "fcorr.toml", "--baseline", "none", "--check-run", "--out", "fcorr-out"])
        .assert()
        .code(1);

    let posts = requests(&server, "POST").await;
    assert_eq!(posts.len(), 2);
    assert!(posts[0].url.path().ends_with("/check-runs"), "the check run is created first, so the comment can link it");
    let body: Value = serde_json::from_slice(&posts[1].body).unwrap();
    let body = body["body"].as_str().unwrap();
    let link =
        format!("[`tests/test_calc.py:12`](https://github.com/org/app/blob/{HEAD}/imported/tests/test_calc.py#L12)");
    assert!(body.contains(&format!("{link} ([annotation](https://github.com/org/app/runs/4))")), "{body}");
    assert!(!body.contains(MERGE), "{body}");
    // The files on disk link to the code as well (the check run did not exist when they were written).
    let on_disk = std::fs::read_to_string(ws.path().join("fcorr-out/comment.md")).unwrap();
    assert!(on_disk.contains(&link) && !on_disk.contains("[annotation]"), "{on_disk}");
    let summary = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    assert!(summary.contains(&link), "{summary}");
}
