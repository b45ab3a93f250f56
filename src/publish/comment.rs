//! The sticky PR comment: one per (workflow, job, tag), found by a hidden marker and written by
//! this token's account, edited in place; never two from one job.

use http::Method;
use serde::Deserialize;
use serde_json::json;

use crate::github::api::{Api, ApiError};

/// GitHub rejects comment bodies of 65,536 characters or more.
pub const COMMENT_LIMIT_CHARS: usize = 65_535;

/// The login `GITHUB_TOKEN` comments as (it cannot call `GET /user`).
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// How the comment is written (`--comment`, `[github] comment`), and when a new one is posted
/// (`--comment-when`, `[github] comment-when`): typed where they are read, in the config.
pub use crate::config::{CommentMode as Mode, CommentWhen as When};

/// A comment as the issues API returns it.
#[derive(Debug, Clone, Deserialize)]
pub struct IssueComment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
}

/// A GitHub user.
#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub login: String,
}

/// What happened to the comment.
#[derive(Debug, Clone, PartialEq)]
pub enum CommentAction {
    Created {
        url: String,
    },
    Updated {
        url: String,
    },
    /// Not written, and why.
    Skipped(String),
}

impl CommentAction {
    /// URL of the comment written, if any.
    pub fn url(&self) -> Option<&str> {
        match self {
            CommentAction::Created { url } | CommentAction::Updated { url } => Some(url),
            CommentAction::Skipped(_) => None,
        }
    }
}

/// The hidden marker for a tag. Characters that could end an HTML comment are replaced.
pub fn marker(tag: &str) -> String {
    let clean: String = tag.chars().map(|c| if c == '>' || c == '\n' || c == '\r' { '_' } else { c }).collect();
    format!("<!-- fcorr:{} -->", clean.replace("--", "-_"))
}

/// The body to post: the marker first, then the Markdown, within the size limit.
pub fn body(tag: &str, markdown: &str) -> String {
    let marker = marker(tag);
    let budget_bytes = COMMENT_LIMIT_CHARS - marker.len() - 1;
    // fit_markdown counts bytes; bytes ≥ characters, so the character limit holds too.
    let text = super::files::fit_markdown(
        markdown,
        budget_bytes,
        "> **Note:** this comment was trimmed to fit GitHub's 65,536-character limit; see the job summary for the full report.",
    );
    format!("{marker}\n{text}")
}

/// The login of the token's account: `GET /user`, or the Actions bot for `GITHUB_TOKEN`.
pub async fn whoami(api: &Api) -> String {
    match api.get_json::<User>("/user").await {
        Ok(user) => user.login,
        Err(_) => ACTIONS_BOT.to_string(),
    }
}

async fn find_ours(api: &Api, pr: u64, marker: &str, login: &str) -> Result<Option<IssueComment>, ApiError> {
    let comments: Vec<IssueComment> =
        api.get_all_pages(&api.repo_path(&format!("/issues/{pr}/comments?per_page=100"))).await?;
    // The newest of ours, should an older run have left two.
    Ok(comments.into_iter().rev().find(|c| {
        c.body.as_deref().is_some_and(|b| b.contains(marker))
            && c.user.as_ref().is_some_and(|u| u.login.eq_ignore_ascii_case(login))
    }))
}

fn url_of(c: &IssueComment) -> String {
    c.html_url.clone().unwrap_or_else(|| format!("comment {}", c.id))
}

/// Creates or updates the sticky comment. `wanted` says whether the `comment-when` condition
/// holds: when it does not, an existing comment is still updated (so it is never stale) but no
/// new one is posted.
pub async fn upsert(
    api: &Api,
    pr: u64,
    tag: &str,
    markdown: &str,
    mode: Mode,
    wanted: bool,
) -> Result<CommentAction, ApiError> {
    if mode == Mode::Off {
        return Ok(CommentAction::Skipped("comment: off".into()));
    }
    let marker = marker(tag);
    let body = body(tag, markdown);
    let login = whoami(api).await;
    let existing = find_ours(api, pr, &marker, &login).await?;
    match (existing, mode) {
        (Some(c), Mode::Recreate) if wanted => {
            api.request(Method::DELETE, &api.repo_path(&format!("/issues/comments/{}", c.id)), None).await?;
            create(api, pr, &body, &marker, &login).await
        }
        (Some(c), _) => {
            let path = api.repo_path(&format!("/issues/comments/{}", c.id));
            let response = api.request(Method::PATCH, &path, Some(&json!({ "body": body }))).await?;
            let updated: IssueComment = response.json(&Method::PATCH, &path)?;
            Ok(CommentAction::Updated { url: url_of(&updated) })
        }
        (None, _) if !wanted => Ok(CommentAction::Skipped("the comment-when condition does not hold".into())),
        (None, _) => create(api, pr, &body, &marker, &login).await,
    }
}

/// Posts the comment. A create that fails in a way that may have landed (5xx, connection lost)
/// is never blindly repeated: the comments are listed again and only if ours is absent is it
/// posted once more.
async fn create(api: &Api, pr: u64, body: &str, marker: &str, login: &str) -> Result<CommentAction, ApiError> {
    let path = api.repo_path(&format!("/issues/{pr}/comments"));
    let payload = json!({ "body": body });
    let mut last_error = None;
    for attempt in 0..2 {
        match api.request(Method::POST, &path, Some(&payload)).await {
            Ok(response) => {
                let created: IssueComment = response.json(&Method::POST, &path)?;
                return Ok(CommentAction::Created { url: url_of(&created) });
            }
            Err(e) if e.may_have_landed() && attempt == 0 => {
                crate::warnings::warn(format!(
                    "creating the PR comment failed ({e}); checking whether it was created anyway"
                ));
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                if let Some(c) = find_ours(api, pr, marker, login).await? {
                    return Ok(CommentAction::Created { url: url_of(&c) });
                }
                last_error = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    // Reached only when the second attempt also failed in a may-have-landed way.
    Err(last_error.unwrap_or_else(|| ApiError {
        method: "POST".into(),
        path,
        status: None,
        message: "creating the comment failed twice".into(),
        retry_after: None,
        abandoned: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_cannot_close_the_html_comment() {
        assert_eq!(marker("CI/test"), "<!-- fcorr:CI/test -->");
        assert!(!marker("a-->b").contains("-->b"));
    }

    #[test]
    fn bodies_fit_the_limit() {
        let huge = "x\n".repeat(100_000);
        let b = body("t", &huge);
        assert!(b.chars().count() <= COMMENT_LIMIT_CHARS);
        assert!(b.starts_with("<!-- fcorr:t -->\n"));
    }

    #[test]
    fn parses_modes() {
        use clap::ValueEnum;
        assert_eq!(Mode::from_str("recreate", false), Ok(Mode::Recreate));
        assert_eq!(Mode::from_str("none", false), Ok(Mode::Off));
        assert!(Mode::from_str("sometimes", false).is_err());
        assert_eq!(When::from_str("on-change", false), Ok(When::OnChange));
    }
}
