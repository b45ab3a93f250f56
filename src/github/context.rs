//! GitHub Actions context: the environment variables and the event file, parsed into small
//! structs of fcorr's own so the rest of the publisher never reads the environment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

/// Everything fcorr needs to know about the workflow run it is part of.
#[derive(Debug, Clone, Default)]
pub struct GithubContext {
    /// `owner/name`.
    pub repository: String,
    pub event_name: String,
    /// The commit the workflow run tested (the merge commit on `pull_request`).
    pub sha: String,
    pub workflow: String,
    /// Path of the workflow file from `GITHUB_WORKFLOW_REF` (`.github/workflows/ci.yml`).
    pub workflow_file: Option<String>,
    pub job: String,
    pub run_id: Option<u64>,
    /// API base URL without a trailing slash.
    pub api_url: String,
    pub server_url: String,
    pub step_summary: Option<PathBuf>,
    pub output: Option<PathBuf>,
    pub token: Option<String>,
    pub workspace: Option<PathBuf>,
    /// `GITHUB_ACTOR`: who started the run (a re-run keeps the first actor's restrictions).
    pub actor: String,
    pub event: Event,
    /// Why the event file could not be read: the run is published without PR context (job
    /// summary, outputs and annotations still are), never dropped.
    pub event_problem: Option<Arc<EventError>>,
    /// The event was read from a file named on the command line (`--event`: stage 1's artifact
    /// in Recipe D, written by a job that ran the PR's code), not from this run's own
    /// `GITHUB_EVENT_PATH`: the pull request it names is confirmed with GitHub before anything
    /// is written to it (`super::pull_request`).
    pub event_supplied: bool,
    /// `workflow_run` of this run's own event (`GITHUB_EVENT_PATH`), which GitHub wrote: the
    /// commit and pull requests of the run that started this one. Read only with `--event` on a
    /// `workflow_run` run.
    pub workflow_run: Option<WorkflowRun>,
}

/// An event file (`GITHUB_EVENT_PATH`, `--event`) that cannot be read as an event payload.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    #[error("{}: the event file: {source}", path.display())]
    Unreadable { path: PathBuf, source: crate::fsio::ReadProblem },
    #[error("{}: line {}, column {}: not a GitHub event payload: {}", path.display(), source.line(), source.column(), crate::text::json_error_text(source))]
    NotEvent { path: PathBuf, source: serde_json::Error },
}

/// The parts of the event payload fcorr uses.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Event {
    #[serde(default)]
    pub pull_request: Option<PullRequest>,
    /// Push: the branch head before the push (all zeros for a new branch).
    #[serde(default)]
    pub before: Option<String>,
    /// Who caused the event (`dependabot[bot]` on Dependabot's pull requests).
    #[serde(default)]
    pub sender: Option<User>,
    /// `workflow_run` events: the run that started this one.
    #[serde(default)]
    pub workflow_run: Option<WorkflowRun>,
}

/// `workflow_run` in a `workflow_run` event payload.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct WorkflowRun {
    /// The commit the run tested (a PR's head commit).
    #[serde(default)]
    pub head_sha: String,
    /// The pull requests of the run; empty for pull requests from forks.
    #[serde(default)]
    pub pull_requests: Vec<RunPullRequest>,
}

/// A pull request listed in `workflow_run.pull_requests`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RunPullRequest {
    pub number: u64,
}

/// A user or bot in the event payload.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct User {
    #[serde(default)]
    pub login: String,
}

/// Why a run's token cannot write (PR comment, check run): GitHub gives it a read-only one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnly {
    /// A `pull_request` run from a fork: read-only whatever the workflow asks for.
    ForkPullRequest,
    /// A run Dependabot started: read-only unless the workflow's `permissions:` raise it.
    Dependabot,
}

impl ReadOnly {
    /// What the user reads in the log and the job summary.
    pub fn explain(&self) -> &'static str {
        match self {
            ReadOnly::ForkPullRequest => {
                "this pull request comes from a fork: its token is read-only, so no PR comment or check run is \
                 written (the job summary, outputs and annotations are). To comment on fork PRs use the two-stage \
                 workflow_run recipe in docs/github-action.md (Recipe D)."
            }
            ReadOnly::Dependabot => {
                "this run was started by Dependabot: GitHub gives it a read-only token by default, so no PR \
                 comment or check run is written (the job summary, outputs and annotations are). If the workflow \
                 grants `permissions: pull-requests: write` (and `checks: write`), pass `token-can-write: true` \
                 (`--token-can-write`); or comment from a workflow_run job (Recipe D in docs/github-action.md)."
            }
        }
    }
}

/// The bot account Dependabot acts as.
pub const DEPENDABOT: &str = "dependabot[bot]";

/// `pull_request` in the event payload.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub head: GitRef,
    pub base: GitRef,
}

/// `head` / `base` of a pull request.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct GitRef {
    pub sha: String,
    /// `null` when the head repository (a fork) was deleted.
    #[serde(default)]
    pub repo: Option<Repo>,
}

/// A repository in the event payload.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Repo {
    pub full_name: String,
}

impl GithubContext {
    /// Reads the context from the process environment; `event_file` overrides `GITHUB_EVENT_PATH`.
    /// `None` outside GitHub Actions (no `GITHUB_ACTIONS` and no `GITHUB_REPOSITORY`).
    pub fn from_env(event_file: Option<&Path>) -> Option<GithubContext> {
        let vars: HashMap<String, String> = std::env::vars().collect();
        GithubContext::from_vars(&vars, event_file)
    }

    /// Reads the context from a map of environment variables (tests pass their own).
    /// Never fails: a broken event file is kept in `event_problem`.
    pub fn from_vars(vars: &HashMap<String, String>, event_file: Option<&Path>) -> Option<GithubContext> {
        let get = |k: &str| vars.get(k).filter(|v| !v.is_empty()).cloned();
        let repository = get("GITHUB_REPOSITORY")?;
        let own_path = get("GITHUB_EVENT_PATH").map(PathBuf::from);
        let event_path = event_file.map(Path::to_path_buf).or_else(|| own_path.clone());
        let (event, event_problem) = match event_path.as_deref().map(read_event) {
            Some(Ok(event)) => (event, None),
            Some(Err(problem)) => (Event::default(), Some(Arc::new(problem))),
            None => (Event::default(), None),
        };
        let event_name = get("GITHUB_EVENT_NAME").unwrap_or_default();
        // Only this run's own payload can vouch for a supplied one; unreadable, it vouches for
        // nothing (the pull request check then refuses).
        let workflow_run = match (event_file, own_path) {
            (Some(_), Some(own)) if event_name == "workflow_run" => read_event(&own).ok().and_then(|e| e.workflow_run),
            _ => None,
        };
        let workflow_file = get("GITHUB_WORKFLOW_REF").and_then(|r| {
            // owner/repo/.github/workflows/ci.yml@refs/heads/main
            let path = r.split('@').next()?;
            let mut parts = path.splitn(3, '/');
            parts.next()?;
            parts.next()?;
            parts.next().map(str::to_string)
        });
        Some(GithubContext {
            repository,
            event_name,
            sha: get("GITHUB_SHA").unwrap_or_default(),
            workflow: get("GITHUB_WORKFLOW").unwrap_or_default(),
            workflow_file,
            job: get("GITHUB_JOB").unwrap_or_default(),
            run_id: get("GITHUB_RUN_ID").and_then(|v| v.parse().ok()),
            api_url: get("GITHUB_API_URL")
                .unwrap_or_else(|| "https://api.github.com".into())
                .trim_end_matches('/')
                .into(),
            server_url: get("GITHUB_SERVER_URL")
                .unwrap_or_else(|| "https://github.com".into())
                .trim_end_matches('/')
                .into(),
            step_summary: get("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: get("GITHUB_OUTPUT").map(PathBuf::from),
            token: get("GITHUB_TOKEN").or_else(|| get("GH_TOKEN")),
            workspace: get("GITHUB_WORKSPACE").map(PathBuf::from),
            actor: get("GITHUB_ACTOR").unwrap_or_default(),
            event,
            event_problem,
            event_supplied: event_file.is_some(),
            workflow_run,
        })
    }

    /// The pull request this run belongs to, if any.
    pub fn pull_request(&self) -> Option<&PullRequest> {
        self.event.pull_request.as_ref()
    }

    /// A `pull_request` run from a fork: its token is read-only whatever the workflow asks for.
    ///
    /// Only the event that *runs* matters: a `workflow_run` publisher reading a fork's event file
    /// has a write token.
    pub fn is_fork_pr(&self) -> bool {
        if self.event_name != "pull_request" {
            return false;
        }
        self.pull_request().is_some_and(|pr| {
            let base = pr.base.repo.as_ref().map(|r| r.full_name.as_str()).unwrap_or(&self.repository);
            pr.head.repo.as_ref().is_none_or(|r| !r.full_name.eq_ignore_ascii_case(base))
        })
    }

    /// Whether GitHub gives this run a read-only token, decided before the first write so the
    /// run publishes what needs no token instead of collecting 403s.
    ///
    /// Dependabot: runs it starts on `pull_request`, `pull_request_review(_comment)`, `push`,
    /// `create`, `deployment(_status)` get a read-only token by default (GitHub's "Automating
    /// Dependabot with GitHub Actions"), also when someone else re-runs them; `GITHUB_ACTOR`
    /// keeps the first actor on a re-run, and the event's sender is the fallback.
    pub fn read_only(&self) -> Option<ReadOnly> {
        if self.is_fork_pr() {
            return Some(ReadOnly::ForkPullRequest);
        }
        const DEPENDABOT_READ_ONLY_EVENTS: &[&str] = &[
            "pull_request",
            "pull_request_review",
            "pull_request_review_comment",
            "push",
            "create",
            "deployment",
            "deployment_status",
        ];
        let actor = if self.actor.is_empty() {
            self.event.sender.as_ref().map(|s| s.login.as_str()).unwrap_or_default()
        } else {
            &self.actor
        };
        (actor.eq_ignore_ascii_case(DEPENDABOT) && DEPENDABOT_READ_ONLY_EVENTS.contains(&self.event_name.as_str()))
            .then_some(ReadOnly::Dependabot)
    }

    /// The commit results belong to: the PR head, else the tested commit.
    pub fn head_sha(&self) -> &str {
        self.pull_request().map(|pr| pr.head.sha.as_str()).filter(|s| !s.is_empty()).unwrap_or(&self.sha)
    }

    /// Link to this workflow run.
    pub fn run_url(&self) -> Option<String> {
        self.run_id.map(|id| format!("{}/{}/actions/runs/{id}", self.server_url, self.repository))
    }

    /// Default comment tag: workflow and job, so jobs never edit each other's comment.
    pub fn default_tag(&self) -> String {
        match (self.workflow.is_empty(), self.job.is_empty()) {
            (false, false) => format!("{}/{}", self.workflow, self.job),
            (false, true) => self.workflow.clone(),
            (true, false) => self.job.clone(),
            (true, true) => "fcorr".into(),
        }
    }
}

fn read_event(path: &Path) -> Result<Event, EventError> {
    let text = crate::fsio::read_text(path, crate::fsio::EVENT)
        .map_err(|e| EventError::Unreadable { path: path.to_path_buf(), source: e.problem })?;
    serde_json::from_str(&text).map_err(|source| EventError::NotEvent { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn outside_actions_there_is_no_context() {
        assert!(GithubContext::from_vars(&vars(&[]), None).is_none());
    }

    #[test]
    fn reads_a_fork_pull_request() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.json");
        std::fs::write(
            &event,
            r#"{"number": 7, "pull_request": {"number": 7,
                "head": {"sha": "h", "ref": "x", "repo": {"full_name": "fork/app"}},
                "base": {"sha": "b", "ref": "main", "repo": {"full_name": "org/app"}}}}"#,
        )
        .unwrap();
        let v = vars(&[
            ("GITHUB_REPOSITORY", "org/app"),
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_WORKFLOW", "CI"),
            ("GITHUB_JOB", "test"),
            ("GITHUB_WORKFLOW_REF", "org/app/.github/workflows/ci.yml@refs/pull/7/merge"),
        ]);
        let ctx = GithubContext::from_vars(&v, Some(&event)).unwrap();
        assert!(ctx.is_fork_pr());
        assert_eq!(ctx.head_sha(), "h");
        assert_eq!(ctx.default_tag(), "CI/test");
        assert_eq!(ctx.workflow_file.as_deref(), Some(".github/workflows/ci.yml"));
        assert_eq!(ctx.api_url, "https://api.github.com");
    }

    #[test]
    fn dependabot_runs_have_a_read_only_token_except_on_workflow_run() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.json");
        std::fs::write(
            &event,
            r#"{"pull_request": {"number": 3, "head": {"sha": "h", "repo": {"full_name": "org/app"}},
                "base": {"sha": "b", "repo": {"full_name": "org/app"}}}, "sender": {"login": "dependabot[bot]"}}"#,
        )
        .unwrap();
        let context = |event_name: &str, actor: &str| {
            let v =
                vars(&[("GITHUB_REPOSITORY", "org/app"), ("GITHUB_EVENT_NAME", event_name), ("GITHUB_ACTOR", actor)]);
            GithubContext::from_vars(&v, Some(&event)).unwrap()
        };
        assert_eq!(context("pull_request", "dependabot[bot]").read_only(), Some(ReadOnly::Dependabot));
        assert_eq!(context("push", "dependabot[bot]").read_only(), Some(ReadOnly::Dependabot));
        // No GITHUB_ACTOR: the event's sender decides.
        assert_eq!(context("pull_request", "").read_only(), Some(ReadOnly::Dependabot));
        // A workflow_run publisher has a write token; so does a person's run.
        assert_eq!(context("workflow_run", "dependabot[bot]").read_only(), None);
        assert_eq!(context("pull_request", "octocat").read_only(), None);
    }

    #[test]
    fn a_bad_event_file_names_the_file_and_leaves_a_context_without_a_pr() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.json");
        std::fs::write(&event, "{nope").unwrap();
        let ctx = GithubContext::from_vars(&vars(&[("GITHUB_REPOSITORY", "o/r")]), Some(&event)).unwrap();
        let err = ctx.event_problem.as_deref().unwrap();
        assert!(matches!(err, EventError::NotEvent { path, .. } if *path == event), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("event.json") && err.contains("line 1"), "{err}");
        assert!(ctx.pull_request().is_none());
    }
}
