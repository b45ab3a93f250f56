//! A fake GitHub Actions job for the tests that run `fcorr ci` against a wiremock API: the
//! variables GitHub sets in a `pull_request` job, the step-output file format, and the comment
//! routes of PR 5 in `org/app`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Where the comment the mock API creates lives.
pub const COMMENT_URL: &str = "https://github.com/org/app/pull/5#issuecomment-9";

/// The variables of a `pull_request` job in `org/app` started by `actor`, with the summary,
/// output and event files in `ws` and the API at `api`.
pub fn env(ws: &Path, api: &str, actor: &str) -> HashMap<&'static str, String> {
    HashMap::from([
        ("GITHUB_ACTIONS", "true".to_string()),
        ("GITHUB_REPOSITORY", "org/app".into()),
        ("GITHUB_EVENT_NAME", "pull_request".into()),
        ("GITHUB_EVENT_PATH", ws.join("event.json").display().to_string()),
        ("GITHUB_SHA", "merge1".into()),
        ("GITHUB_WORKFLOW", "CI".into()),
        ("GITHUB_JOB", "test".into()),
        ("GITHUB_ACTOR", actor.into()),
        ("GITHUB_API_URL", api.into()),
        ("GITHUB_SERVER_URL", "https://github.com".into()),
        ("GITHUB_STEP_SUMMARY", ws.join("step-summary.md").display().to_string()),
        ("GITHUB_OUTPUT", ws.join("github-output.txt").display().to_string()),
        ("GITHUB_TOKEN", "ghs_test".into()),
        ("GITHUB_WORKSPACE", ws.display().to_string()),
    ])
}

/// A non-fork event for PR 5 in `ws/event.json`.
pub fn write_pr_event(ws: &Path) {
    let event = json!({
        "number": 5,
        "pull_request": {
            "number": 5,
            "head": {"sha": "head1", "ref": "feature", "repo": {"full_name": "org/app"}},
            "base": {"sha": "base1", "ref": "main", "repo": {"full_name": "org/app"}}
        },
        "sender": {"login": "octocat"}
    });
    std::fs::write(ws.join("event.json"), event.to_string()).unwrap();
}

/// The step outputs in `ws/github-output.txt` (heredoc format), empty when there is none.
pub fn outputs(ws: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(ws.join("github-output.txt")).unwrap_or_default();
    let mut outputs = HashMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let (name, delimiter) = line.split_once("<<").expect("every output is a heredoc");
        let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
        outputs.insert(name.to_string(), value.join("\n"));
    }
    outputs
}

/// No comment on PR 5 yet; creating one answers with [`COMMENT_URL`].
pub async fn mock_comment_api(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path("/repos/org/app/issues/5/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/org/app/issues/5/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "id": 9, "html_url": COMMENT_URL,
            "body": "<!-- fcorr:CI/test -->", "user": {"login": "github-actions[bot]", "type": "Bot"}
        })))
        .mount(server)
        .await;
}

/// The requests that are not GETs, as `METHOD /path`.
pub async fn writes(server: &MockServer) -> Vec<String> {
    let requests = server.received_requests().await.unwrap();
    requests.iter().filter(|r| r.method.as_str() != "GET").map(|r| format!("{} {}", r.method, r.url.path())).collect()
}

/// The requests the server received with HTTP method `verb`, in order.
pub async fn requests(server: &MockServer, verb: &str) -> Vec<wiremock::Request> {
    server.received_requests().await.unwrap().into_iter().filter(|r| r.method.as_str() == verb).collect()
}

/// The JSON bodies of the POST requests the server received, in order.
pub async fn posted_bodies(server: &MockServer) -> Vec<Value> {
    requests(server, "POST").await.iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect()
}
