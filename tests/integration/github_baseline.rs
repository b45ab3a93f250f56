//! Finding the baseline on GitHub (compare → workflow runs → artifacts → 302 → zip) against a
//! local wiremock server, and reading artifact zips safely.

use std::collections::HashMap;
use std::io::Write;

use fcorr::github::api::Api;
use fcorr::github::baseline::{self, Lookup};
use fcorr::github::context::GithubContext;
use fcorr::model::{Case, CaseStatus, Run, Suite, SuiteKind};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn sample_run(status: CaseStatus) -> Run {
    let mut suite = Suite::new("unit", "unit", SuiteKind::Import);
    suite.cases.push(Case { name: "t1".into(), status, ..Case::default() });
    suite.finalize_cases();
    Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        writer.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// A pull_request context; `tested` is the commit the run tested (head, or the merge commit).
fn pr_context(server: &MockServer, dir: &std::path::Path, tested: &str) -> GithubContext {
    let event = dir.join("event.json");
    std::fs::write(
        &event,
        json!({
            "action": "synchronize",
            "number": 5,
            "pull_request": {
                "number": 5,
                "head": {"sha": "head1", "ref": "feature", "repo": {"full_name": "org/app"}},
                "base": {"sha": "base1", "ref": "main", "repo": {"full_name": "org/app"}}
            }
        })
        .to_string(),
    )
    .unwrap();
    let vars: HashMap<String, String> = [
        ("GITHUB_REPOSITORY", "org/app"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_SHA", tested),
        ("GITHUB_RUN_ID", "99"),
        ("GITHUB_API_URL", &server.uri()),
        ("GITHUB_TOKEN", "ghs_test"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    GithubContext::from_vars(&vars, Some(&event)).unwrap()
}

async fn get(server: &MockServer, route: &str, body: Value) {
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(server)
        .await;
}

async fn this_run(server: &MockServer) {
    get(server, "/repos/org/app/actions/runs/99", json!({"id": 99, "workflow_id": 7, "name": "CI"})).await;
}

async fn runs_on(server: &MockServer, sha: &str, runs: Vec<Value>) {
    Mock::given(method("GET"))
        .and(path("/repos/org/app/actions/workflows/7/runs"))
        .and(query_param("head_sha", sha))
        // Any conclusion: a red base run's results are still the "before" of this run.
        .and(query_param("status", "completed"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"total_count": runs.len(), "workflow_runs": runs})),
        )
        .mount(server)
        .await;
}

fn workflow_run(id: u64, sha: &str) -> Value {
    concluded_run(id, sha, "success")
}

fn concluded_run(id: u64, sha: &str, conclusion: &str) -> Value {
    json!({
        "id": id, "name": "CI", "head_sha": sha, "status": "completed", "conclusion": conclusion,
        "workflow_id": 7, "html_url": format!("https://github.com/org/app/actions/runs/{id}")
    })
}

async fn parent(server: &MockServer, sha: &str, parent: &str) {
    get(server, &format!("/repos/org/app/commits/{sha}"), json!({"sha": sha, "parents": [{"sha": parent}]})).await;
}

/// Artifacts of run `run_id`, the zip endpoint answering 302 to a blob URL, and the blob.
async fn artifact(server: &MockServer, run_id: u64, zip: Vec<u8>) {
    get(
        server,
        &format!("/repos/org/app/actions/runs/{run_id}/artifacts"),
        json!({"total_count": 1, "artifacts": [
            {"id": 42, "name": "fcorr-results", "size_in_bytes": zip.len(), "expired": false,
             "archive_download_url": format!("{}/repos/org/app/actions/artifacts/42/zip", server.uri())}
        ]}),
    )
    .await;
    Mock::given(method("GET"))
        .and(path("/repos/org/app/actions/artifacts/42/zip"))
        .respond_with(
            ResponseTemplate::new(302).insert_header("location", format!("{}/blob/42.zip?sig=x", server.uri())),
        )
        .expect(1)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/blob/42.zip"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(zip).insert_header("content-type", "application/zip"))
        .expect(1)
        .mount(server)
        .await;
}

fn api(server: &MockServer) -> Api {
    Api::new(&server.uri(), Some("ghs_test"), "org/app").unwrap()
}

#[tokio::test]
async fn baseline_found_via_merge_base_runs_artifacts_and_redirect() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = pr_context(&server, dir.path(), "head1");
    this_run(&server).await;
    get(
        &server,
        "/repos/org/app/compare/base1...head1",
        json!({"status": "diverged", "ahead_by": 2, "behind_by": 1, "merge_base_commit": {"sha": "mb1"}, "base_commit": {"sha": "base1"}}),
    )
    .await;
    runs_on(&server, "mb1", vec![workflow_run(500, "mb1")]).await;
    let stored = sample_run(CaseStatus::Passed);
    artifact(&server, 500, zip_of(&[("results.json", serde_json::to_string(&stored).unwrap().as_bytes())])).await;

    let found = baseline::from_github(&api(&server), &ctx, "fcorr-results", 20).await.unwrap();
    let Lookup::Found(b) = found else { panic!("expected a baseline, got {found:?}") };
    assert_eq!(b.run, stored);
    assert_eq!(b.info.commit.as_deref(), Some("mb1"));
    assert_eq!(b.info.commits_behind, 0);
    assert_eq!(b.info.source, "github:500");
    assert!(b.info.is_fresh());
}

#[tokio::test]
async fn merge_commit_runs_use_the_pr_base_sha() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = pr_context(&server, dir.path(), "mergecommit");
    this_run(&server).await;
    Mock::given(method("GET"))
        .and(path("/repos/org/app/compare/base1...head1"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    runs_on(&server, "base1", vec![workflow_run(501, "base1")]).await;
    artifact(
        &server,
        501,
        zip_of(&[("results.json", serde_json::to_string(&sample_run(CaseStatus::Failed)).unwrap().as_bytes())]),
    )
    .await;
    let found = baseline::from_github(&api(&server), &ctx, "fcorr-results", 20).await.unwrap();
    assert!(matches!(found, Lookup::Found(ref b) if b.info.commit.as_deref() == Some("base1")), "{found:?}");
}

#[tokio::test]
async fn stale_baseline_two_commits_behind() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = pr_context(&server, dir.path(), "mergecommit");
    this_run(&server).await;
    runs_on(&server, "base1", vec![]).await;
    parent(&server, "base1", "p1").await;
    runs_on(&server, "p1", vec![]).await;
    parent(&server, "p1", "p2").await;
    runs_on(&server, "p2", vec![workflow_run(502, "p2")]).await;
    artifact(
        &server,
        502,
        zip_of(&[("results.json", serde_json::to_string(&sample_run(CaseStatus::Passed)).unwrap().as_bytes())]),
    )
    .await;

    let found = baseline::from_github(&api(&server), &ctx, "fcorr-results", 20).await.unwrap();
    let Lookup::Found(b) = found else { panic!("expected a baseline, got {found:?}") };
    assert_eq!(b.info.commits_behind, 2);
    assert_eq!(b.info.commit.as_deref(), Some("p2"));
    assert!(!b.info.is_fresh());
}

#[tokio::test]
async fn no_baseline_within_the_depth() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = pr_context(&server, dir.path(), "mergecommit");
    this_run(&server).await;
    // A run without our artifact does not count.
    runs_on(&server, "base1", vec![workflow_run(503, "base1")]).await;
    get(&server, "/repos/org/app/actions/runs/503/artifacts", json!({"total_count": 0, "artifacts": []})).await;
    parent(&server, "base1", "p1").await;
    runs_on(&server, "p1", vec![]).await;
    parent(&server, "p1", "p2").await;
    runs_on(&server, "p2", vec![]).await;
    Mock::given(method("GET"))
        .and(path("/repos/org/app/commits/p2"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;

    let found = baseline::from_github(&api(&server), &ctx, "fcorr-results", 2).await.unwrap();
    let Lookup::Missing(why) = found else { panic!("expected no baseline, got {found:?}") };
    assert!(why.contains("fcorr-results") && why.contains("2 first-parent"), "{why}");
}

#[tokio::test]
async fn a_red_base_run_with_the_artifact_is_the_baseline_and_says_so() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = pr_context(&server, dir.path(), "mergecommit");
    this_run(&server).await;
    // The base branch is red: its newest run failed (a flaky job, or a real failure) but
    // uploaded its results. Before, fcorr asked only for `status=success` and found nothing.
    runs_on(&server, "base1", vec![concluded_run(510, "base1", "failure")]).await;
    let stored = sample_run(CaseStatus::Failed);
    artifact(&server, 510, zip_of(&[("results.json", serde_json::to_string(&stored).unwrap().as_bytes())])).await;

    let found = baseline::from_github(&api(&server), &ctx, "fcorr-results", 20).await.unwrap();
    let Lookup::Found(b) = found else { panic!("expected a baseline, got {found:?}") };
    assert_eq!(b.run, stored);
    assert_eq!(b.info.source, "github:510");
    assert_eq!(b.info.conclusion.as_deref(), Some("failure"));
    assert!(b.info.is_fresh());
}

#[tokio::test]
async fn an_older_red_run_is_used_when_the_newest_uploaded_nothing() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = pr_context(&server, dir.path(), "mergecommit");
    this_run(&server).await;
    // Newest first, as GitHub lists them: 521 (cancelled before the upload), then 520 (red, uploaded).
    runs_on(&server, "base1", vec![concluded_run(521, "base1", "cancelled"), concluded_run(520, "base1", "failure")])
        .await;
    get(&server, "/repos/org/app/actions/runs/521/artifacts", json!({"total_count": 0, "artifacts": []})).await;
    artifact(
        &server,
        520,
        zip_of(&[("results.json", serde_json::to_string(&sample_run(CaseStatus::Passed)).unwrap().as_bytes())]),
    )
    .await;

    let found = baseline::from_github(&api(&server), &ctx, "fcorr-results", 20).await.unwrap();
    let Lookup::Found(b) = found else { panic!("expected a baseline, got {found:?}") };
    assert_eq!(b.info.source, "github:520");
    assert_eq!(b.info.conclusion.as_deref(), Some("failure"));
    assert_eq!(b.info.commits_behind, 0);
}

#[tokio::test]
async fn forbidden_artifact_listing_names_actions_read() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = pr_context(&server, dir.path(), "mergecommit");
    this_run(&server).await;
    Mock::given(method("GET"))
        .and(path("/repos/org/app/actions/workflows/7/runs"))
        .respond_with(
            ResponseTemplate::new(403).set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
        .mount(&server)
        .await;
    let err = baseline::from_github(&api(&server), &ctx, "fcorr-results", 20).await.unwrap_err();
    assert!(matches!(&err, baseline::BaselineError::Api { source, .. } if source.status == Some(403)), "{err:?}");
    let err = err.to_string();
    assert!(err.contains("actions: read"), "{err}");
}

#[test]
fn zips_with_traversal_or_absolute_entries_are_rejected() {
    let good = serde_json::to_string(&sample_run(CaseStatus::Passed)).unwrap();
    for bad in ["../evil.sh", "sub/../../evil", "/etc/cron.d/x"] {
        let zip = zip_of(&[("results.json", good.as_bytes()), (bad, b"x")]);
        let err = baseline::read_zip(&zip, "artifact").unwrap_err().to_string();
        assert!(err.contains("unsafe entry") && err.contains(bad), "{bad}: {err}");
    }
    // The same zip without the bad entry is fine, also as a file on disk.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fcorr-results.zip");
    std::fs::write(&file, zip_of(&[("out/results.json", good.as_bytes())])).unwrap();
    let b = baseline::load_path(&file).unwrap();
    assert_eq!(b.run.totals.passed, 1);
    let err = baseline::read_zip(b"not a zip", "x").unwrap_err();
    assert!(
        matches!(&err, baseline::BaselineError::Unusable { label, problem: baseline::Unusable::NotZip(_) } if label == "x")
    );
    assert!(err.to_string().contains("not a readable zip"), "{err}");
    assert!(std::error::Error::source(&err).is_some(), "the zip error is kept as the source");
    assert!(
        baseline::read_zip(&zip_of(&[("other.txt", b"x")]), "x").unwrap_err().to_string().contains("no results.json")
    );
}

#[test]
fn compare_names_an_unusable_baseline_once_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.json");
    std::fs::write(&results, serde_json::to_string(&sample_run(CaseStatus::Passed)).unwrap()).unwrap();
    let zip = dir.path().join("base.zip");
    std::fs::write(&zip, b"not a zip").unwrap();
    let broken = dir.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("results.json"), "{").unwrap();
    for (baseline, file, problem) in
        [(&zip, zip.clone(), "not a readable zip"), (&broken, broken.join("results.json"), "not an fcorr results file")]
    {
        let out = crate::support::fcorr_bin()
            .args(["compare", "--results"])
            .arg(&results)
            .arg("--baseline")
            .arg(baseline)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("fcorr: error: {}: ", file.display())) && stderr.contains(problem),
            "{stderr}"
        );
        // The path is said once: the error is not wrapped in a second `PATH: ` prefix.
        assert_eq!(stderr.matches(&*baseline.display().to_string()).count(), 1, "{stderr}");
    }
}

/// A run with everything a case can carry: output, a traceback, reasons with values, a score.
fn heavy_run(statuses: &[(CaseStatus, f64)]) -> Run {
    use fcorr::model::{CaseExtra, Reason};
    let mut suite = Suite::new("unit", "unit", SuiteKind::Import);
    for (i, (status, ms)) in statuses.iter().enumerate() {
        let failing = status.is_failure();
        suite.cases.push(
            Case {
                name: format!("t{i}").into(),
                classname: Some("pkg.Test".into()),
                file: Some("tests/test_x.py".into()),
                line: Some(7),
                status: *status,
                duration_ms: Some(*ms),
                extra: CaseExtra {
                    details: failing.then(|| "Traceback (most recent call last):\n  ...\n".repeat(50).into()),
                    output: Some("captured output\n".repeat(100).into()),
                    score: Some(if failing { 25.0 } else { 100.0 }),
                    eval: fcorr::model::EvalExtra {
                        reasons: vec![Reason {
                            code: if failing { "incorrect" } else { "ok" }.into(),
                            expected: Some(json!({"answer": "x".repeat(500)})),
                            actual: Some(json!("y")),
                            message: Some(format!("{i}: graded {status:?}")),
                        }],
                        tags: [("category".to_string(), "math".to_string())].into(),
                        ..Default::default()
                    }
                    .packed(),
                    ..CaseExtra::default()
                }
                .packed(),
                ..Case::default()
            }
            .with_message(failing.then(|| "assert 1 == 2".into())),
        );
    }
    suite.finalize_cases();
    Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
}

/// Issue #27: a 45 MB baseline cost ~100 MiB to load, its text and every case's output and
/// traceback held while the run was compared. A baseline is now read slimmed, from a file or
/// from an artifact's zip: no case keeps its output, details, tags or reason values, and the
/// comparison and the slowdowns come out exactly as against the whole run.
#[test]
fn a_baseline_is_read_slimmed_and_compares_as_the_whole_run() {
    use CaseStatus::{Failed, Passed, Skipped};
    let before = heavy_run(&[(Passed, 10.0), (Failed, 20.0), (Passed, 30.0), (Skipped, 0.0), (Failed, 5.0)]);
    let now = heavy_run(&[(Failed, 10.0), (Passed, 500.0), (Passed, 30.0), (Passed, 1.0)]);
    let text = serde_json::to_string_pretty(&before).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("results.json"), format!("\u{feff}{text}")).unwrap();
    let zip = dir.path().join("base.zip");
    std::fs::write(&zip, zip_of(&[("results.json", text.as_bytes())])).unwrap();
    let whole = fcorr::report::load_results(dir.path()).unwrap();
    assert_eq!(whole, before);
    for read in [baseline::load_path(dir.path()).unwrap().run, baseline::load_path(&zip).unwrap().run] {
        for case in read.suites.iter().flat_map(|s| &s.cases) {
            let extra = case.extra();
            assert!(
                case.message().is_none() && case.classname.is_none() && case.file.is_none(),
                "{case:?} keeps text no baseline reader uses"
            );
            assert!(extra.details.is_none() && extra.output.is_none() && extra.eval().tags.is_empty(), "{case:?}");
            assert!(extra.eval().reasons.iter().all(|r| r.expected.is_none() && r.actual.is_none()), "{case:?}");
        }
        assert_eq!(read.suites[0].cases.len(), 5);
        let info = fcorr::compare::BaselineInfo::default();
        let slim = fcorr::compare::compare(&now, &read, info.clone());
        assert_eq!(slim, fcorr::compare::compare(&now, &whole, info));
        assert!(slim.cases.iter().any(|c| c.note.is_some()), "reason messages are kept: {slim:?}");
        let settings = fcorr::model::TimingSettings { slowdown_min_ms: 1.0, ..Default::default() };
        let slowdowns = fcorr::timing::timing(&now, Some(&read), &settings);
        assert_eq!(slowdowns, fcorr::timing::timing(&now, Some(&whole), &settings));
        assert_eq!(slowdowns.slowdowns_total, 1);
    }
}
