//! Baselines: the earlier run a run is compared with.
//!
//! `--baseline FILE` reads a `results.json`, a directory holding one, or an artifact zip.
//! `--baseline github` finds the results artifact of the newest completed run of the same
//! workflow on the base commit, whatever its conclusion (a red base branch still has results to
//! compare with), walking first-parent ancestors when that commit has none.

use std::io::{Cursor, Read, Seek};
use std::path::{Component, Path, PathBuf};

use http::Method;
use serde::Deserialize;

use super::api::{Api, ApiError, ClientError};
use super::context::GithubContext;
use crate::compare::BaselineInfo;
use crate::model::Run;
use crate::report::{ResultsError, ResultsProblem};

/// Largest `results.json` accepted from a zip (uncompressed): the cap of a plain one.
pub const MAX_RESULTS_BYTES: u64 = crate::fsio::RESULTS.cap;

/// Most entries a baseline zip may have.
const MAX_ZIP_ENTRIES: usize = 10_000;

/// Default artifact name (`[github] artifact-name`, `FCORR_ARTIFACT_NAME`).
pub const DEFAULT_ARTIFACT: &str = "fcorr-results";

/// Default number of first-parent ancestors searched (`[github] baseline-depth`).
pub const DEFAULT_DEPTH: u32 = 20;

/// Where the baseline comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    None,
    File(PathBuf),
    Github,
}

impl Source {
    /// `none` / empty, `github`, or a path.
    pub fn parse(text: &str) -> Source {
        match text.trim() {
            "" | "none" | "off" => Source::None,
            "github" => Source::Github,
            path => Source::File(PathBuf::from(path)),
        }
    }
}

/// Why no baseline could be read. Callers treat it as a warning (`fcorr ci`, `fcorr merge`) or a
/// usage error (`fcorr compare`).
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// A zip, artifact or results text that is not a usable baseline; `label` names it (the
    /// path, or `artifact NAME of run ID`).
    #[error("{label}: {problem}")]
    Unusable {
        label: String,
        #[source]
        problem: Unusable,
    },
    /// The `results.json` (or directory) given cannot be read; the error names the file.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// A GitHub API call of the lookup failed; `what` says which step, the message names the
    /// missing `actions: read` permission when that is the cause.
    #[error("{what}: {}", source.explain("actions: read"))]
    Api { what: &'static str, source: ApiError },
    /// No API client for this environment.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Neither `GITHUB_RUN_ID` nor `GITHUB_WORKFLOW_REF` says which workflow this run is.
    #[error("cannot tell which workflow this is (no GITHUB_RUN_ID or GITHUB_WORKFLOW_REF)")]
    UnknownWorkflow,
}

impl BaselineError {
    fn unusable(label: &str) -> impl FnOnce(Unusable) -> BaselineError {
        move |problem| BaselineError::Unusable { label: label.to_string(), problem }
    }

    fn api(what: &'static str) -> impl FnOnce(ApiError) -> BaselineError {
        move |source| BaselineError::Api { what, source }
    }
}

/// What is wrong with one baseline file or artifact.
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    /// Unreadable, or not a regular file.
    #[error(transparent)]
    Read(crate::fsio::ReadProblem),
    /// The results.json text itself (bad JSON, another schema version).
    #[error(transparent)]
    Results(#[from] ResultsProblem),
    #[error("not a readable zip: {0}")]
    NotZip(#[source] zip::result::ZipError),
    #[error("{0} entries is more than the {MAX_ZIP_ENTRIES} allowed")]
    TooManyEntries(usize),
    #[error("entry {index}: {source}")]
    Entry { index: usize, source: zip::result::ZipError },
    #[error("entry {index}: bad name: {source}")]
    EntryName { index: usize, source: zip::result::ZipError },
    #[error("unsafe entry `{0}` (absolute or `..` path): the zip is rejected")]
    UnsafeEntry(String),
    #[error("the zip holds no results.json")]
    NoResults,
    #[error("{0}")]
    ResultsEntry(#[source] zip::result::ZipError),
    #[error("results.json is {0} bytes, more than the {MAX_RESULTS_BYTES} allowed")]
    DeclaredTooLarge(u64),
    #[error("results.json is larger than the {MAX_RESULTS_BYTES} bytes allowed")]
    TooLarge,
}

/// A loaded baseline.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub run: Run,
    pub info: BaselineInfo,
}

/// Loads a baseline from a `results.json`, a directory containing one, or a zip holding one.
pub fn load_path(path: &Path) -> Result<Baseline, BaselineError> {
    let is_zip = path.is_file() && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    let run = if is_zip {
        let label = path.display().to_string();
        // Read in place, not into memory: only the central directory and the capped
        // results.json entry are ever read.
        let file = crate::fsio::open_regular(path, "baseline zip")
            .map_err(|e| BaselineError::unusable(&label)(Unusable::Read(e.problem)))?;
        zip_results(std::io::BufReader::new(file)).map_err(unusable_zip(&label))?
    } else {
        crate::report::load_baseline(path)?
    };
    let info = BaselineInfo {
        source: format!("file:{}", path.display()),
        commit: run.git.as_ref().and_then(|g| g.commit.clone()),
        url: None,
        started_at: Some(run.started_at.clone()),
        commits_behind: 0,
        conclusion: None,
    };
    Ok(Baseline { run, info })
}

/// Whether a zip entry name stays inside the extraction directory.
fn safe_entry_name(name: &str) -> bool {
    if name.is_empty() || name.starts_with('/') || name.starts_with('\\') || name.contains('\0') {
        return false;
    }
    // A drive letter (`C:`) is absolute on Windows.
    if name.as_bytes().get(1) == Some(&b':') {
        return false;
    }
    Path::new(&name.replace('\\', "/")).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Reads `results.json` out of a zip (an Actions artifact). The whole zip is rejected when any
/// entry would escape its directory (`../`, absolute paths), and sizes are capped, so a hostile
/// artifact can neither write outside nor exhaust memory. Nothing is written to disk.
pub fn read_zip(bytes: &[u8], label: &str) -> Result<Run, BaselineError> {
    zip_results(Cursor::new(bytes)).map_err(unusable_zip(label))
}

/// A zip's problem under the zip's name; its results.json's (bad JSON, another schema) under
/// `zip!results.json`.
fn unusable_zip(label: &str) -> impl FnOnce(Unusable) -> BaselineError {
    move |problem| match problem {
        Unusable::Results(_) => BaselineError::unusable(&format!("{label}!results.json"))(problem),
        other => BaselineError::unusable(label)(other),
    }
}

/// The run in the shallowest `results.json` of a zip, parsed as it is unpacked: see [`read_zip`].
fn zip_results(reader: impl Read + Seek) -> Result<Run, Unusable> {
    let mut archive = zip::ZipArchive::new(reader).map_err(Unusable::NotZip)?;
    if archive.len() > MAX_ZIP_ENTRIES {
        return Err(Unusable::TooManyEntries(archive.len()));
    }
    let mut best: Option<(usize, usize)> = None; // (depth, index)
    for index in 0..archive.len() {
        let entry = archive.by_index_raw(index).map_err(|source| Unusable::Entry { index, source })?;
        let name = entry.name().map_err(|source| Unusable::EntryName { index, source })?.to_string();
        if !safe_entry_name(&name) || entry.enclosed_name().is_none() {
            return Err(Unusable::UnsafeEntry(name));
        }
        let normalized = name.replace('\\', "/");
        if normalized == "results.json" || normalized.ends_with("/results.json") {
            let depth = normalized.matches('/').count();
            if best.is_none_or(|(d, _)| depth < d) {
                best = Some((depth, index));
            }
        }
    }
    let (_, index) = best.ok_or(Unusable::NoResults)?;
    let entry = archive.by_index(index).map_err(Unusable::ResultsEntry)?;
    if entry.size() > MAX_RESULTS_BYTES {
        return Err(Unusable::DeclaredTooLarge(entry.size()));
    }
    // The declared size can lie; the reader is capped as well, and a text that reached past the
    // cap is too large whether or not what was read of it parsed.
    let mut capped = entry.take(MAX_RESULTS_BYTES + 1);
    let run = crate::report::read_baseline(&mut capped);
    if capped.limit() == 0 {
        return Err(Unusable::TooLarge);
    }
    Ok(run?)
}

/// Why no baseline was found, or the one found.
#[derive(Debug)]
pub enum Lookup {
    Found(Box<Baseline>),
    /// No baseline, and why (shown in reports and the log).
    Missing(String),
}

#[derive(Deserialize)]
struct CompareResponse {
    merge_base_commit: ShaOnly,
}

#[derive(Deserialize)]
struct ShaOnly {
    sha: String,
}

#[derive(Deserialize)]
struct CommitResponse {
    #[serde(default)]
    parents: Vec<ShaOnly>,
}

#[derive(Deserialize)]
struct WorkflowRunResponse {
    workflow_id: u64,
}

#[derive(Deserialize)]
struct WorkflowRuns {
    #[serde(default)]
    workflow_runs: Vec<WorkflowRun>,
}

#[derive(Deserialize)]
struct WorkflowRun {
    id: u64,
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    head_sha: Option<String>,
    /// `success`, `failure`, `cancelled`…: recorded so reports can say the baseline run was red.
    #[serde(default)]
    conclusion: Option<String>,
}

#[derive(Deserialize)]
struct Artifacts {
    #[serde(default)]
    artifacts: Vec<Artifact>,
}

#[derive(Deserialize)]
struct Artifact {
    id: u64,
    name: String,
    #[serde(default)]
    expired: bool,
}

fn query_escape(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The commit the baseline should come from: the PR's merge base when the run tested the PR head,
/// `pull_request.base.sha` when it tested GitHub's merge commit, `before` on a push.
/// A failed merge-base lookup is a warning: the PR's base commit is used instead.
pub async fn base_commit(api: &Api, ctx: &GithubContext) -> Option<String> {
    if let Some(pr) = ctx.pull_request() {
        let tested_head = ctx.sha.is_empty() || ctx.sha == pr.head.sha;
        if !tested_head {
            return Some(pr.base.sha.clone());
        }
        let path = api.repo_path(&format!("/compare/{}...{}", pr.base.sha, pr.head.sha));
        return match api.get_json::<CompareResponse>(&path).await {
            Ok(c) => Some(c.merge_base_commit.sha),
            Err(e) => {
                crate::warnings::warn(format!("cannot find the merge base ({e}); using the PR's base commit"));
                Some(pr.base.sha.clone())
            }
        };
    }
    ctx.event.before.clone().filter(|b| !b.is_empty() && b.chars().any(|c| c != '0'))
}

async fn workflow_id(api: &Api, ctx: &GithubContext) -> Result<String, BaselineError> {
    if let Some(run_id) = ctx.run_id {
        match api.get_json::<WorkflowRunResponse>(&api.repo_path(&format!("/actions/runs/{run_id}"))).await {
            Ok(run) => return Ok(run.workflow_id.to_string()),
            Err(e) if ctx.workflow_file.is_none() => {
                return Err(BaselineError::api("cannot look up this workflow run")(e));
            }
            Err(_) => {}
        }
    }
    ctx.workflow_file
        .as_deref()
        .and_then(|f| f.rsplit('/').next())
        .map(query_escape)
        .ok_or(BaselineError::UnknownWorkflow)
}

/// Finds the baseline on GitHub: see the module docs.
pub async fn from_github(api: &Api, ctx: &GithubContext, artifact: &str, depth: u32) -> Result<Lookup, BaselineError> {
    let Some(base) = base_commit(api, ctx).await else {
        return Ok(Lookup::Missing(format!("a `{}` event has no base commit to compare with", ctx.event_name)));
    };
    let workflow = workflow_id(api, ctx).await?;
    let mut sha = base.clone();
    for behind in 0..=depth {
        let path = api.repo_path(&format!(
            "/actions/workflows/{workflow}/runs?head_sha={}&status=completed&per_page=20",
            query_escape(&sha)
        ));
        let runs: WorkflowRuns =
            api.get_json(&path).await.map_err(BaselineError::api("cannot list the base commit's workflow runs"))?;
        // GitHub lists newest first.
        for run in runs.workflow_runs.iter().filter(|r| Some(r.id) != ctx.run_id) {
            if run.head_sha.as_deref().is_some_and(|h| h != sha) {
                continue;
            }
            let path = api.repo_path(&format!(
                "/actions/runs/{}/artifacts?name={}&per_page=100",
                run.id,
                query_escape(artifact)
            ));
            let list: Artifacts =
                api.get_json(&path).await.map_err(BaselineError::api("cannot list the run's artifacts"))?;
            let Some(found) = list.artifacts.iter().find(|a| a.name == artifact && !a.expired) else { continue };
            let zip_path = api.repo_path(&format!("/actions/artifacts/{}/zip", found.id));
            // GitHub answers 302 to a short-lived blob URL; the client follows it and drops the
            // token when the redirect leaves the API's origin.
            let response = api
                .request(Method::GET, &zip_path, None)
                .await
                .map_err(BaselineError::api("cannot download the baseline artifact"))?;
            let label = format!("artifact {artifact} of run {}", run.id);
            let baseline_run = read_zip(&response.body, &label)?;
            let info = BaselineInfo {
                source: format!("github:{}", run.id),
                commit: Some(sha.clone()),
                url: run.html_url.clone(),
                started_at: Some(baseline_run.started_at.clone()),
                commits_behind: behind,
                conclusion: run.conclusion.clone(),
            };
            return Ok(Lookup::Found(Box::new(Baseline { run: baseline_run, info })));
        }
        if behind == depth {
            break;
        }
        let commit: CommitResponse = api
            .get_json(&api.repo_path(&format!("/commits/{sha}")))
            .await
            .map_err(BaselineError::api("cannot read the commit's parents"))?;
        match commit.parents.into_iter().next() {
            Some(parent) => sha = parent.sha,
            None => break,
        }
    }
    Ok(Lookup::Missing(format!(
        "no completed run of this workflow with an `{artifact}` artifact on {} or its {depth} first-parent ancestors",
        &base[..base.len().min(12)]
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_are_checked() {
        assert!(safe_entry_name("results.json"));
        assert!(safe_entry_name("out/./results.json"));
        assert!(!safe_entry_name("../results.json"));
        assert!(!safe_entry_name("a/../../b"));
        assert!(!safe_entry_name("/etc/passwd"));
        assert!(!safe_entry_name("C:\\x"));
        assert!(!safe_entry_name("..\\x"));
    }

    #[test]
    fn sources_parse() {
        assert_eq!(Source::parse("github"), Source::Github);
        assert_eq!(Source::parse("none"), Source::None);
        assert_eq!(Source::parse("out/results.json"), Source::File("out/results.json".into()));
    }
}
