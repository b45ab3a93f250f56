//! The check run: created `in_progress` on the commit the results belong to, then completed
//! with a conclusion, a summary within 65,535 bytes and annotations 50 per request.

use http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::annotations::Annotation;
use crate::github::api::{Api, ApiError};

/// The Checks API accepts at most this many annotations per request.
pub const ANNOTATIONS_PER_REQUEST: usize = 50;

/// Limit of `output.summary` and `output.text`, in bytes.
pub const OUTPUT_LIMIT_BYTES: usize = 65_535;

#[derive(Deserialize)]
struct Created {
    id: u64,
    #[serde(default)]
    html_url: Option<String>,
}

/// What to put in the check run.
pub struct CheckRun<'a> {
    pub name: &'a str,
    pub head_sha: &'a str,
    /// `success`, `failure`, `neutral`...
    pub conclusion: &'a str,
    pub title: &'a str,
    pub summary: &'a str,
    pub annotations: &'a [Annotation],
}

fn api_annotation(a: &Annotation) -> Option<Value> {
    // The Checks API needs a path and a line; failures without a file stay in the summary.
    let path = a.path.as_ref()?;
    let line = a.line.unwrap_or(1).max(1);
    Some(json!({
        "path": path,
        "start_line": line,
        "end_line": line,
        "annotation_level": a.level.check_level(),
        "title": a.title,
        "message": a.message,
    }))
}

/// Creates and completes the check run; returns its URL.
pub async fn publish(api: &Api, check: &CheckRun<'_>) -> Result<String, ApiError> {
    let started = crate::model::rfc3339(time::OffsetDateTime::now_utc());
    let path = api.repo_path("/check-runs");
    let created: Created = api
        .request(
            Method::POST,
            &path,
            Some(&json!({ "name": check.name, "head_sha": check.head_sha, "status": "in_progress", "started_at": started })),
        )
        .await?
        .json(&Method::POST, &path)?;
    let summary = super::files::fit_markdown(
        check.summary,
        OUTPUT_LIMIT_BYTES,
        "> **Note:** trimmed to the check run's 65,535-byte limit; the full report is in the job summary.",
    );
    let annotations: Vec<Value> = check.annotations.iter().filter_map(api_annotation).collect();
    let batches: Vec<&[Value]> =
        if annotations.is_empty() { vec![&[]] } else { annotations.chunks(ANNOTATIONS_PER_REQUEST).collect() };
    let update = api.repo_path(&format!("/check-runs/{}", created.id));
    let last = batches.len() - 1;
    for (i, batch) in batches.into_iter().enumerate() {
        let output = json!({ "title": check.title, "summary": summary, "annotations": batch });
        let body = if i == last {
            json!({
                "status": "completed",
                "conclusion": check.conclusion,
                "completed_at": crate::model::rfc3339(time::OffsetDateTime::now_utc()),
                "output": output,
            })
        } else {
            json!({ "output": output })
        };
        // Retried only after a rate limit (not processed), never after a 5xx: annotations append.
        api.request(Method::PATCH, &update, Some(&body)).await?;
    }
    Ok(created.html_url.unwrap_or_else(|| format!("check run {}", created.id)))
}
