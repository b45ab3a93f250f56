//! Publishing from the `fcorr` binary against a wiremock GitHub API (the documented response
//! shapes) or a loopback server that never answers: what `fcorr publish --event` (Recipe D's
//! second stage) confirms before its write token touches a pull request, how an API failure
//! reaches the annotations and the job summary, the `error` output of a run that could not be
//! measured, and how long a hanging API or a stop signal can hold `fcorr ci`.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::github::{COMMENT_URL, env, mock_comment_api, outputs, write_pr_event};

/// The commit stage 1 tested (the fork PR's head).
const TESTED: &str = "1111111111111111111111111111111111111111";
/// The head of another pull request.
const OTHER: &str = "3333333333333333333333333333333333333333";

const JUNIT: &str = r#"<testsuite name="calc" tests="2" failures="1">
  <testcase classname="t" name="ok" file="t.py" line="3"/>
  <testcase classname="t" name="bad" file="t.py" line="9"><failure message="wrong">assert 1 == 2</failure></testcase>
</testsuite>
"#;

/// A workspace with stage 1's artifact in `stage1/`: results with one failing case, and the
/// event file of fork pull request `number` at head `sha` (all of it written by the fork's code).
fn stage1(number: u64, sha: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("report.xml"), JUNIT).unwrap();
    crate::support::fcorr_bin()
        .current_dir(ws.path())
        .args(["import", "report.xml", "--out", "stage1"])
        .assert()
        .code(1);
    let event = json!({
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"sha": sha, "ref": "feature", "repo": {"full_name": "someone/app-fork"}},
            "base": {"sha": "base1", "ref": "main", "repo": {"full_name": "org/app"}}
        }
    });
    std::fs::write(ws.path().join("stage1/event.json"), event.to_string()).unwrap();
    ws
}

/// Stage 2's own event (`ws/event.json`, which GitHub writes): the `workflow_run` that tested
/// `head_sha`, listing `pulls` (GitHub lists none for a fork's pull request).
fn workflow_run_event(ws: &Path, head_sha: &str, pulls: &[u64]) {
    let pulls: Vec<Value> = pulls
        .iter()
        .map(|n| json!({"id": 100 + n, "number": n, "head": {"ref": "feature", "sha": head_sha}, "base": {"ref": "main"}}))
        .collect();
    let event = json!({
        "action": "completed",
        "workflow_run": {
            "id": 42, "name": "fcorr-pr", "event": "pull_request", "status": "completed",
            "conclusion": "failure", "head_branch": "feature", "head_sha": head_sha, "pull_requests": pulls
        },
        "repository": {"full_name": "org/app"}
    });
    std::fs::write(ws.join("event.json"), event.to_string()).unwrap();
}

/// `GET /repos/org/app/pulls/{number}` answering a pull request in `state` with head `sha`.
async fn mock_pull(server: &MockServer, number: u64, state: &str, sha: &str) {
    let pull = json!({
        "url": format!("{}/repos/org/app/pulls/{number}", server.uri()),
        "id": 1000 + number,
        "html_url": format!("https://github.com/org/app/pull/{number}"),
        "number": number,
        "state": state,
        "locked": false,
        "title": "A change",
        "user": {"login": "someone", "id": 7, "type": "User"},
        "head": {"label": "someone:feature", "ref": "feature", "sha": sha,
                 "repo": {"full_name": "someone/app-fork"}},
        "base": {"label": "org:main", "ref": "main", "sha": "base1", "repo": {"full_name": "org/app"}},
        "merged": false,
        "draft": false
    });
    Mock::given(method("GET"))
        .and(path(format!("/repos/org/app/pulls/{number}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(pull))
        .mount(server)
        .await;
}

/// Stage 1 for pull request `number` at `sha` (its `workflow_run` found no PR, as for a fork),
/// and a mock API on which pull request `number` is in `state` at `head`.
async fn stage2(number: u64, sha: &str, state: &str, head: &str) -> (tempfile::TempDir, MockServer) {
    let ws = stage1(number, sha);
    workflow_run_event(ws.path(), TESTED, &[]);
    let server = MockServer::start().await;
    mock_pull(&server, number, state, head).await;
    (ws, server)
}

/// `fcorr publish` of stage 1's artifact, as Recipe D's stage 2 runs it: exit code, stdout, stderr.
fn publish_stage1(ws: &Path, server: &MockServer) -> (Option<i32>, String, String) {
    let mut vars = env(ws, &server.uri(), "github-actions[bot]");
    vars.insert("GITHUB_EVENT_NAME", "workflow_run".into());
    let output = crate::support::fcorr_bin()
        .current_dir(ws)
        .envs(vars)
        .args(["publish", "--results", "stage1/results.json", "--event", "stage1/event.json"])
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status.code(), text(&output.stdout), text(&output.stderr))
}

async fn paths_requested(server: &MockServer) -> Vec<String> {
    server.received_requests().await.unwrap().iter().map(|r| format!("{} {}", r.method, r.url.path())).collect()
}

/// The refusal reaches the log, a `::warning` annotation and the job summary; nothing is written.
fn assert_refused(ws: &Path, code: Option<i32>, stdout: &str, stderr: &str, number: u64, why: &str) {
    assert_eq!(code, Some(0), "publishing problems never fail the step: {stderr}");
    let said = format!("not publishing to pull request #{number} named by the event file: {why}");
    assert!(stderr.contains(&format!("fcorr: warning: {said}")), "{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("::warning title=fcorr::") && l.contains(&said)), "{stdout}");
    let summary = std::fs::read_to_string(ws.join("step-summary.md")).unwrap();
    assert!(summary.contains("### Publishing to GitHub") && summary.contains(&format!("pull request #{number}")));
    assert_eq!(outputs(ws)["comment-url"], "");
}

/// QA E10: an event file naming another pull request (#1) with the tested head commit passed
/// Recipe D's head check, and the write token commented on #1 (or deleted fcorr's comment there
/// with `--comment recreate`). GitHub says #1's head is another commit: nothing is written.
#[tokio::test(flavor = "multi_thread")]
async fn an_event_file_naming_another_pull_request_is_refused() {
    let (ws, server) = stage2(1, TESTED, "open", OTHER).await;
    let (code, stdout, stderr) = publish_stage1(ws.path(), &server);
    let why = format!("GitHub says the head of pull request #1 is `{OTHER}`, not `{TESTED}`");
    assert_refused(ws.path(), code, &stdout, &stderr, 1, &why);
    assert_eq!(paths_requested(&server).await, ["GET /repos/org/app/pulls/1"]);
}

/// The pull request GitHub confirms (open, head = the tested commit) gets its comment.
#[tokio::test(flavor = "multi_thread")]
async fn the_pull_request_github_confirms_is_commented_on() {
    let (ws, server) = stage2(5, TESTED, "open", TESTED).await;
    mock_comment_api(&server).await;
    let (code, stdout, stderr) = publish_stage1(ws.path(), &server);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&format!("comment: {COMMENT_URL}")), "{stdout}\n{stderr}");
    assert!(paths_requested(&server).await.contains(&"POST /repos/org/app/issues/5/comments".to_string()));
}

/// A closed pull request is not commented on, even with the right head.
#[tokio::test(flavor = "multi_thread")]
async fn a_closed_pull_request_is_refused() {
    let (ws, server) = stage2(5, TESTED, "closed", TESTED).await;
    let (code, stdout, stderr) = publish_stage1(ws.path(), &server);
    assert_refused(ws.path(), code, &stdout, &stderr, 5, "GitHub says pull request #5 is closed, not open");
    assert_eq!(paths_requested(&server).await, ["GET /repos/org/app/pulls/5"]);
}

/// On `workflow_run`, GitHub's own payload decides first: another commit than the one stage 1
/// tested, or a number its pull request list does not hold, is refused without asking the API.
#[tokio::test(flavor = "multi_thread")]
async fn the_workflow_run_payload_binds_the_commit_and_the_number() {
    let server = MockServer::start().await;
    let ws = stage1(5, OTHER);
    workflow_run_event(ws.path(), TESTED, &[]);
    let (code, stdout, stderr) = publish_stage1(ws.path(), &server);
    let why = format!("its head commit `{OTHER}` is not `{TESTED}`");
    assert_refused(ws.path(), code, &stdout, &stderr, 5, &why);
    let ws = stage1(1, TESTED);
    workflow_run_event(ws.path(), TESTED, &[5]);
    let (code, stdout, stderr) = publish_stage1(ws.path(), &server);
    let why = "the run that started this workflow_run was for pull request(s) #5, not #1";
    assert_refused(ws.path(), code, &stdout, &stderr, 1, why);
    assert!(paths_requested(&server).await.is_empty());
}

/// A workspace of one import suite with a failing case, in a `pull_request` job of `org/app`
/// (PR 5) whose API is at `api`.
fn ci_workspace(api: &str) -> (tempfile::TempDir, HashMap<&'static str, String>) {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("report.xml"), JUNIT).unwrap();
    std::fs::write(
        ws.path().join("fcorr.toml"),
        "[[suite]]\nname = \"imported\"\nkind = \"import\"\nreports = [\"report.xml\"]\n",
    )
    .unwrap();
    write_pr_event(ws.path());
    let mut vars = env(ws.path(), api, "octocat");
    vars.insert("GITHUB_RUN_ID", "99".into());
    vars.insert("GITHUB_WORKFLOW_REF", "org/app/.github/workflows/ci.yml@refs/pull/5/merge".into());
    (ws, vars)
}

/// QA E14: a PR comment the API refused was a line in the fenced log only. It is a `::warning`
/// annotation and a line of the job summary now, escaped like every other text (GitHub's message
/// here tries to start a workflow command and to inject HTML).
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_comment_is_an_annotation_and_in_the_job_summary() {
    let server = MockServer::start().await;
    let refusal = json!({"message": "Resource not accessible by integration\n::error::injected <img src=x>"});
    Mock::given(method("GET")).respond_with(ResponseTemplate::new(403).set_body_json(refusal)).mount(&server).await;
    let (ws, vars) = ci_workspace(&server.uri());
    let output = crate::support::fcorr_bin()
        .current_dir(ws.path())
        .envs(vars)
        .args(["ci", "--baseline", "none", "--out", "fcorr-out"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "the gate's exit code: {stdout}");
    let annotation = stdout
        .lines()
        .find(|l| l.starts_with("::warning title=fcorr::PR comment: GET /repos/org/app/issues/5/comments"))
        .unwrap_or_else(|| panic!("no annotation for the comment: {stdout}"));
    assert!(
        annotation.contains("HTTP 403: Resource not accessible by integration%0A::error::injected"),
        "{annotation}"
    );
    assert!(!stdout.lines().any(|l| l.starts_with("::error::injected")), "{stdout}");
    let summary = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    let published = &summary[summary.find("### Publishing to GitHub").expect("a publishing section")..];
    assert!(published.contains("- PR comment: GET /repos/org/app/issues/5/comments"), "{published}");
    assert!(published.contains("`pull-requests: write`") && !published.contains("<img"), "{published}");
}

/// QA E11: a dataset that cannot be read gave `verdict=error` without the `error` output the
/// docs promise with it.
#[test]
fn a_run_that_could_not_be_measured_says_why_in_the_error_output() {
    let (ws, vars) = ci_workspace("http://127.0.0.1:9");
    std::fs::write(
        ws.path().join("cases.jsonl"),
        "{\"id\":\"a\",\"prompt\":\"Paris\",\"expected\":\"Paris\"}\n{\"id\":\"b\",\"prompt\":\"Ro",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("fcorr.toml"),
        "[[suite]]\nname = \"e\"\nkind = \"eval\"\ndataset = \"cases.jsonl\"\nsut = { type = \"command\", command = \"cat\" }\n",
    )
    .unwrap();
    let output = crate::support::fcorr_bin()
        .current_dir(ws.path())
        .envs(vars)
        .args(["ci", "--baseline", "none", "--comment", "off", "--out", "fcorr-out"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    let outputs = outputs(ws.path());
    assert_eq!(outputs["verdict"], "error");
    assert!(outputs["error"].contains("cases.jsonl:2: column ") && outputs["error"].contains("EOF"), "{outputs:?}");
}

/// A loopback "API" that accepts connections and never answers; the count of connections taken.
fn silent_api() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    (url, accepted)
}

/// QA E5: with an API that never answered, `fcorr ci` spent 12 × 120 s in calls and retries after
/// a one-second run. The calls of each phase (baseline lookup, publishing) now share one limit
/// (`FCORR_GITHUB_TIMEOUT`, 3 s here); the warning names the call that hung, the reports stay and
/// the exit code is the gate's.
#[test]
fn a_hanging_api_holds_ci_for_the_limit_only() {
    let (url, accepted) = silent_api();
    let (ws, vars) = ci_workspace(&url);
    let started = Instant::now();
    let output = crate::support::fcorr_bin()
        .current_dir(ws.path())
        .envs(vars)
        .env("FCORR_GITHUB_TIMEOUT", "3")
        .args(["ci", "--out", "fcorr-out"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "the gate's exit code: {stderr}");
    assert!(took < Duration::from_secs(20), "took {took:?}: {stderr}");
    assert!(accepted.load(std::sync::atomic::Ordering::SeqCst) >= 2, "both phases called the API");
    let hung = "had no answer when the 3s allowed for the GitHub API calls ran out (FCORR_GITHUB_TIMEOUT)";
    assert!(stderr.contains("no baseline: ") && stderr.contains(hung), "{stderr}");
    assert!(stderr.contains("PR comment: ") && stderr.contains("`GET /user` had no answer"), "{stderr}");
    assert!(ws.path().join("fcorr-out/results.json").is_file());
    assert_eq!(outputs(ws.path())["verdict"], "fail");
}

/// Starts `fcorr args` in `ws` with `vars`, sends `signal` once it has called the silent API
/// (`accepted`), and returns its exit code and stderr; fails if it lives 10 s past the signal.
fn stop_while_publishing(
    ws: &Path,
    vars: HashMap<&'static str, String>,
    accepted: &std::sync::atomic::AtomicUsize,
    args: &[&str],
    signal: i32,
) -> (Option<i32>, String) {
    let mut child = crate::support::fcorr()
        .current_dir(ws)
        .envs(vars)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let waited = Instant::now();
    while accepted.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(waited.elapsed() < Duration::from_secs(60), "fcorr never called the API");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child, whose pid is alive until we wait for it.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if signalled.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("fcorr {args:?} was still publishing 10 s after signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status.code(), stderr)
}

/// QA E5: SIGTERM and SIGINT while `fcorr ci` waited for the API were caught and ignored for
/// minutes. Now the waiting call ends at once and fcorr exits as a stopped run does (128 +
/// the signal), its reports written. `fcorr publish` (nothing to cancel) ends at once too: its
/// handler used to wait forever for the stdout lock publishing held.
#[test]
fn a_stop_signal_ends_publishing_at_once() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let (url, accepted) = silent_api();
        let (ws, vars) = ci_workspace(&url);
        let args = ["ci", "--baseline", "none", "--out", "fcorr-out"];
        let (status, stderr) = stop_while_publishing(ws.path(), vars, &accepted, &args, signal);
        assert_eq!(status, Some(code), "{stderr}");
        assert!(stderr.contains("fcorr was interrupted by SIG"), "{stderr}");
        assert!(ws.path().join("fcorr-out/results.json").is_file());
    }
    let (url, accepted) = silent_api();
    let ws = stage1(5, TESTED);
    let mut vars = env(ws.path(), &url, "github-actions[bot]");
    vars.insert("GITHUB_EVENT_NAME", "workflow_run".into());
    workflow_run_event(ws.path(), TESTED, &[]);
    let args = ["publish", "--results", "stage1/results.json", "--event", "stage1/event.json"];
    let (status, stderr) = stop_while_publishing(ws.path(), vars, &accepted, &args, libc::SIGTERM);
    assert_eq!(status, Some(143), "{stderr}");
    assert!(stderr.contains("fcorr: stopped by SIGTERM while publishing to GitHub"), "{stderr}");
}
