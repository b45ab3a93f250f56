//! The sticky PR comment and the check run against a local wiremock server answering with the
//! response shapes GitHub documents for the issue-comments and check-runs endpoints.

use fcorr::github::api::Api;
use fcorr::publish::annotations::{Annotation, Level};
use fcorr::publish::check_run::{self, CheckRun};
use fcorr::publish::comment::{self, CommentAction, Mode};
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::github::requests;

const COMMENTS: &str = "/repos/org/app/issues/5/comments";
const TAG: &str = "CI/test";

fn api(server: &MockServer) -> Api {
    let mut api = Api::new(&server.uri(), Some("ghs_test"), "org/app").unwrap();
    api.max_wait = std::time::Duration::from_secs(5);
    api
}

/// An issue comment as GitHub returns it.
fn comment_json(server: &MockServer, id: u64, login: &str, body: &str) -> Value {
    json!({
        "id": id,
        "node_id": format!("IC_{id}"),
        "url": format!("{}/repos/org/app/issues/comments/{id}", server.uri()),
        "html_url": format!("https://github.com/org/app/pull/5#issuecomment-{id}"),
        "body": body,
        "user": {"login": login, "id": 41898282, "type": if login.ends_with("[bot]") { "Bot" } else { "User" }},
        "created_at": "2026-11-20T10:00:00Z",
        "updated_at": "2026-11-20T10:00:00Z",
        "issue_url": format!("{}/repos/org/app/issues/5", server.uri()),
        "author_association": "NONE"
    })
}

/// `GET /user` as GITHUB_TOKEN sees it: forbidden.
async fn user_forbidden(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
            "status": "403"
        })))
        .mount(server)
        .await;
}

async fn list(server: &MockServer, comments: Vec<Value>) {
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(200).set_body_json(Value::Array(comments)))
        .mount(server)
        .await;
}

fn created(server: &MockServer, id: u64) -> ResponseTemplate {
    ResponseTemplate::new(201).set_body_json(comment_json(server, id, "github-actions[bot]", "<!-- fcorr:CI/test -->"))
}

#[tokio::test]
async fn first_comment_is_created_with_the_marker_and_api_version() {
    let server = MockServer::start().await;
    user_forbidden(&server).await;
    list(&server, vec![]).await;
    Mock::given(method("POST")).and(path(COMMENTS)).respond_with(created(&server, 1)).expect(1).mount(&server).await;

    let outcome = comment::upsert(&api(&server), 5, TAG, "## results", Mode::Update, true).await.unwrap();
    assert_eq!(outcome, CommentAction::Created { url: "https://github.com/org/app/pull/5#issuecomment-1".into() });
    let post = &requests(&server, "POST").await[0];
    let body: Value = serde_json::from_slice(&post.body).unwrap();
    assert_eq!(body["body"], "<!-- fcorr:CI/test -->\n## results");
    assert_eq!(post.headers.get("x-github-api-version").unwrap(), "2022-11-28");
    assert_eq!(post.headers.get("authorization").unwrap(), "Bearer ghs_test");
}

#[tokio::test]
async fn comment_on_page_three_of_250_is_updated_in_place() {
    let server = MockServer::start().await;
    user_forbidden(&server).await;
    let page = |n: u64| -> Vec<Value> {
        let start = (n - 1) * 100 + 1;
        let end = (n * 100).min(250);
        (start..=end)
            .map(|id| {
                if id == 240 {
                    comment_json(&server, id, "github-actions[bot]", "<!-- fcorr:CI/test -->\nold")
                } else {
                    comment_json(&server, id, "someone", &format!("comment {id}"))
                }
            })
            .collect()
    };
    let link = |next: u64| {
        format!(
            "<{uri}{COMMENTS}?per_page=100&page={next}>; rel=\"next\", <{uri}{COMMENTS}?per_page=100&page=3>; rel=\"last\"",
            uri = server.uri()
        )
    };
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(query_param_is_missing("page"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(1)).insert_header("link", link(2)))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(2)).insert_header("link", link(3)))
        .expect(1)
        .mount(&server)
        .await;
    let first = format!("<{}{COMMENTS}?per_page=100&page=1>; rel=\"first\"", server.uri());
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(query_param("page", "3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(3)).insert_header("link", first))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/org/app/issues/comments/240"))
        .and(body_string_contains("new text"))
        .respond_with(ResponseTemplate::new(200).set_body_json(comment_json(&server, 240, "github-actions[bot]", "x")))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST")).respond_with(created(&server, 999)).expect(0).mount(&server).await;

    let outcome = comment::upsert(&api(&server), 5, TAG, "new text", Mode::Update, true).await.unwrap();
    assert!(matches!(outcome, CommentAction::Updated { ref url } if url.ends_with("issuecomment-240")), "{outcome:?}");
    // Pages 2 and 3 were fetched with the token: relative routes keep authentication.
    for r in requests(&server, "GET").await.iter().filter(|r| r.url.path() == COMMENTS) {
        assert!(r.headers.get("authorization").is_some());
    }
}

#[tokio::test]
async fn another_tag_and_another_account_are_left_alone() {
    let server = MockServer::start().await;
    // A personal token: GET /user works and names the account.
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"login": "fcorr-bot", "id": 7, "type": "User"})))
        .mount(&server)
        .await;
    list(
        &server,
        vec![
            comment_json(&server, 10, "fcorr-bot", "<!-- fcorr:other/job -->\nanother job"),
            comment_json(&server, 11, "github-actions[bot]", "<!-- fcorr:CI/test -->\nsame marker, other account"),
        ],
    )
    .await;
    Mock::given(method("PATCH")).respond_with(ResponseTemplate::new(500)).expect(0).mount(&server).await;
    Mock::given(method("DELETE")).respond_with(ResponseTemplate::new(500)).expect(0).mount(&server).await;
    Mock::given(method("POST")).and(path(COMMENTS)).respond_with(created(&server, 12)).expect(1).mount(&server).await;

    let outcome = comment::upsert(&api(&server), 5, TAG, "body", Mode::Update, true).await.unwrap();
    assert!(matches!(outcome, CommentAction::Created { .. }));
}

#[tokio::test]
async fn recreate_deletes_ours_and_posts_anew() {
    let server = MockServer::start().await;
    user_forbidden(&server).await;
    list(&server, vec![comment_json(&server, 30, "github-actions[bot]", "<!-- fcorr:CI/test -->\nold")]).await;
    Mock::given(method("DELETE"))
        .and(path("/repos/org/app/issues/comments/30"))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST")).and(path(COMMENTS)).respond_with(created(&server, 31)).expect(1).mount(&server).await;
    Mock::given(method("PATCH")).respond_with(ResponseTemplate::new(500)).expect(0).mount(&server).await;

    let outcome = comment::upsert(&api(&server), 5, TAG, "body", Mode::Recreate, true).await.unwrap();
    assert!(matches!(outcome, CommentAction::Created { ref url } if url.ends_with("-31")));
}

#[tokio::test]
async fn condition_not_met_posts_nothing_new_but_keeps_ours_current() {
    let server = MockServer::start().await;
    user_forbidden(&server).await;
    list(&server, vec![]).await;
    Mock::given(method("POST")).respond_with(created(&server, 1)).expect(0).mount(&server).await;
    let outcome = comment::upsert(&api(&server), 5, TAG, "body", Mode::Update, false).await.unwrap();
    assert!(matches!(outcome, CommentAction::Skipped(_)));
}

#[tokio::test]
async fn a_5xx_create_that_landed_is_not_posted_twice() {
    let server = MockServer::start().await;
    user_forbidden(&server).await;
    // Before the create: no comment. After the failed create: GitHub did store it.
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    list(&server, vec![comment_json(&server, 50, "github-actions[bot]", "<!-- fcorr:CI/test -->\nbody")]).await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(502).set_body_string("Bad Gateway"))
        .expect(1)
        .mount(&server)
        .await;

    let outcome = comment::upsert(&api(&server), 5, TAG, "body", Mode::Update, true).await.unwrap();
    assert!(matches!(outcome, CommentAction::Created { ref url } if url.ends_with("-50")), "{outcome:?}");
}

#[tokio::test]
async fn a_5xx_create_that_did_not_land_is_posted_once_more() {
    let server = MockServer::start().await;
    user_forbidden(&server).await;
    list(&server, vec![]).await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST")).and(path(COMMENTS)).respond_with(created(&server, 60)).mount(&server).await;

    let outcome = comment::upsert(&api(&server), 5, TAG, "body", Mode::Update, true).await.unwrap();
    assert!(matches!(outcome, CommentAction::Created { .. }));
    assert_eq!(requests(&server, "POST").await.len(), 2);
    // It listed the comments again between the two attempts.
    assert_eq!(requests(&server, "GET").await.iter().filter(|r| r.url.path() == COMMENTS).count(), 2);
}

#[tokio::test]
async fn rate_limit_headers_are_honoured_for_idempotent_requests() {
    let server = MockServer::start().await;
    user_forbidden(&server).await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"message": "You have exceeded a secondary rate limit."})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    list(&server, vec![comment_json(&server, 70, "github-actions[bot]", "<!-- fcorr:CI/test -->\nold")]).await;
    let reset = time::OffsetDateTime::now_utc().unix_timestamp() + 1;
    Mock::given(method("PATCH"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", reset.to_string())
                .set_body_json(json!({"message": "API rate limit exceeded for installation ID 1."})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .respond_with(ResponseTemplate::new(200).set_body_json(comment_json(&server, 70, "github-actions[bot]", "x")))
        .mount(&server)
        .await;

    let outcome = comment::upsert(&api(&server), 5, TAG, "body", Mode::Update, true).await.unwrap();
    assert!(matches!(outcome, CommentAction::Updated { .. }), "{outcome:?}");
    assert_eq!(requests(&server, "GET").await.iter().filter(|r| r.url.path() == COMMENTS).count(), 2);
    assert_eq!(requests(&server, "PATCH").await.len(), 2);
}

#[tokio::test]
async fn a_reset_beyond_the_bound_is_not_waited_for() {
    let server = MockServer::start().await;
    let reset = time::OffsetDateTime::now_utc().unix_timestamp() + 3600;
    Mock::given(method("GET"))
        .and(path("/repos/org/app/commits/abc"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", reset.to_string())
                .set_body_json(json!({"message": "API rate limit exceeded"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let err = api(&server).get_json::<Value>("/repos/org/app/commits/abc").await.unwrap_err();
    assert_eq!(err.status, Some(403));
    assert!(!err.is_forbidden(), "a rate limit is not a missing permission: {err}");
}

#[tokio::test]
async fn missing_permission_names_it() {
    let server = MockServer::start().await;
    user_forbidden(&server).await;
    list(&server, vec![]).await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
            "status": "403"
        })))
        .expect(1)
        .mount(&server)
        .await;
    let err = comment::upsert(&api(&server), 5, TAG, "body", Mode::Update, true).await.unwrap_err();
    let text = err.explain("pull-requests: write");
    assert!(text.contains("pull-requests: write") && text.contains("Resource not accessible"), "{text}");
}

#[tokio::test]
async fn check_run_sends_120_annotations_as_50_50_20() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/repos/org/app/check-runs"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "id": 4, "head_sha": "headsha", "status": "in_progress", "name": "fcorr (CI/test)",
            "html_url": "https://github.com/org/app/runs/4"
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/org/app/check-runs/4"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 4, "status": "completed"})))
        .expect(3)
        .mount(&server)
        .await;
    let annotations: Vec<Annotation> = (0..120)
        .map(|i| Annotation {
            level: Level::Error,
            path: Some(format!("tests/t{i}.py")),
            line: Some(i + 1),
            title: format!("case {i}"),
            message: "boom".into(),
        })
        .collect();
    let check = CheckRun {
        name: "fcorr (CI/test)",
        head_sha: "headsha",
        conclusion: "failure",
        title: "fcorr: fail",
        summary: "## summary",
        annotations: &annotations,
    };
    let url = check_run::publish(&api(&server), &check).await.unwrap();
    assert_eq!(url, "https://github.com/org/app/runs/4");

    let post: Value = serde_json::from_slice(&requests(&server, "POST").await[0].body).unwrap();
    assert_eq!(post["status"], "in_progress");
    assert_eq!(post["head_sha"], "headsha");
    let patches: Vec<Value> =
        requests(&server, "PATCH").await.iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect();
    let sizes: Vec<usize> = patches.iter().map(|p| p["output"]["annotations"].as_array().unwrap().len()).collect();
    assert_eq!(sizes, vec![50, 50, 20]);
    assert!(patches[..2].iter().all(|p| p.get("conclusion").is_none()));
    assert_eq!(patches[2]["status"], "completed");
    assert_eq!(patches[2]["conclusion"], "failure");
    assert_eq!(patches[0]["output"]["annotations"][0]["annotation_level"], "failure");
    assert_eq!(patches[2]["output"]["annotations"][19]["start_line"], 120);
}
