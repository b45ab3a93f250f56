//! Whether the pull request an event file handed to fcorr names (`--event`: stage 1's artifact
//! in Recipe D, written by a job that ran the PR's code) is the one the results are for, asked
//! of GitHub before a write token comments on it: open, its head the event's head commit, and on
//! `workflow_run` the commit (and PR) GitHub says the triggering run tested.

use serde::Deserialize;

use super::api::{Api, ApiError};
use super::context::{GithubContext, PullRequest};

/// How much of a commit id from the untrusted file a message quotes.
const SHOWN_SHA: usize = 64;

/// Why the pull request cannot be published to.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    #[error(
        "this run is a workflow_run, and its own event file (GITHUB_EVENT_PATH) gives no `workflow_run.head_sha` \
         to check the event file against"
    )]
    NoWorkflowRun,
    #[error("its head commit `{event}` is not `{tested}`, the commit the run that started this workflow_run tested")]
    NotTheTestedCommit { event: String, tested: String },
    #[error("the run that started this workflow_run was for pull request(s) {listed}, not #{number}")]
    NotListed { number: u64, listed: String },
    #[error("GitHub could not confirm it: {0}")]
    Lookup(#[source] ApiError),
    #[error("GitHub says pull request #{number} is {state}, not open")]
    NotOpen { number: u64, state: String },
    #[error("GitHub says the head of pull request #{number} is `{actual}`, not `{event}` as the event file says")]
    OtherHead { number: u64, actual: String, event: String },
}

/// A pull request as `GET /repos/{owner}/{repo}/pulls/{number}` returns it (the fields used).
#[derive(Debug, Deserialize)]
struct Pull {
    #[serde(default)]
    state: String,
    head: Head,
}

#[derive(Debug, Deserialize)]
struct Head {
    sha: String,
}

/// `Ok` when `pr` (from the event file of `ctx`) may be published to; see the module docs.
pub(crate) async fn confirm(api: &Api, ctx: &GithubContext, pr: &PullRequest) -> Result<(), Refused> {
    let event_sha = shown(&pr.head.sha);
    if ctx.event_name == "workflow_run" {
        let run = ctx.workflow_run.as_ref().filter(|r| !r.head_sha.is_empty()).ok_or(Refused::NoWorkflowRun)?;
        if run.head_sha != pr.head.sha {
            return Err(Refused::NotTheTestedCommit { event: event_sha, tested: shown(&run.head_sha) });
        }
        // GitHub leaves the list empty for pull requests from forks; when it names some, the
        // number must be one of them.
        if !run.pull_requests.is_empty() && !run.pull_requests.iter().any(|p| p.number == pr.number) {
            let listed: Vec<String> = run.pull_requests.iter().map(|p| format!("#{}", p.number)).collect();
            return Err(Refused::NotListed { number: pr.number, listed: listed.join(", ") });
        }
    }
    let pull: Pull = api.get_json(&api.repo_path(&format!("/pulls/{}", pr.number))).await.map_err(Refused::Lookup)?;
    if pull.state != "open" {
        return Err(Refused::NotOpen { number: pr.number, state: shown(&pull.state) });
    }
    if pull.head.sha != pr.head.sha {
        return Err(Refused::OtherHead { number: pr.number, actual: shown(&pull.head.sha), event: event_sha });
    }
    Ok(())
}

/// A value from the event file or the answer, short enough to quote.
fn shown(text: &str) -> String {
    crate::text::truncate_chars(text, SHOWN_SHA)
}
