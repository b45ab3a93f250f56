//! Baselines: the earlier run a run is compared with.
//!
//! `--baseline FILE` reads a `results.json`, a directory holding one, or an artifact zip.
//! `--baseline github` finds the results artifact of the newest completed run of the same
//! workflow on the base commit, whatever its conclusion (a red base branch still has results to
//! compare with), walking first-parent ancestors when that commit has none.

use std::io::{Cursor, Read};
use std::path::{Component, Path, PathBuf};

use http::Method;
use serde::Deserialize;

use super::api::{Api, ApiError};
use super::context::GithubContext;
use crate::compare::BaselineInfo;
use crate::model::{Run, SCHEMA_VERSION};

/// Largest `results.json` accepted from a zip (uncompressed).
pub const MAX_RESULTS_BYTES: u64 = 256 * 1024 * 1024;

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

/// A loaded baseline.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub run: Run,
    pub info: BaselineInfo,
}

/// Parses `results.json` text; `label` names it in messages.
pub fn parse_results(text: &str, label: &str) -> Result<Run, String> {
    let run: Run = serde_json::from_str(text)
        .map_err(|e| format!("{label}: line {}, column {}: not an fcorr results file: {e}", e.line(), e.column()))?;
    if run.schema_version != SCHEMA_VERSION {
        return Err(format!(
            "{label}: schema version {} is not supported (this fcorr reads version {SCHEMA_VERSION})",
            run.schema_version
        ));
    }
    Ok(run)
}

/// Loads a baseline from a `results.json`, a directory containing one, or a zip holding one.
pub fn load_path(path: &Path) -> Result<Baseline, String> {
    let is_zip = path.is_file() && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    let run = if is_zip {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
        read_zip(&bytes, &path.display().to_string())?
    } else {
        crate::report::load_results(path).map_err(|e| e.to_string())?
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
pub fn read_zip(bytes: &[u8], label: &str) -> Result<Run, String> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| format!("{label}: not a readable zip: {e}"))?;
    if archive.len() > MAX_ZIP_ENTRIES {
        return Err(format!("{label}: {} entries is more than the {MAX_ZIP_ENTRIES} allowed", archive.len()));
    }
    let mut best: Option<(usize, usize)> = None; // (depth, index)
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(|e| format!("{label}: entry {i}: {e}"))?;
        let name = entry.name().map_err(|e| format!("{label}: entry {i}: bad name: {e}"))?.to_string();
        if !safe_entry_name(&name) || entry.enclosed_name().is_none() {
            return Err(format!("{label}: unsafe entry `{name}` (absolute or `..` path): the zip is rejected"));
        }
        let normalized = name.replace('\\', "/");
        if normalized == "results.json" || normalized.ends_with("/results.json") {
            let depth = normalized.matches('/').count();
            if best.is_none_or(|(d, _)| depth < d) {
                best = Some((depth, i));
            }
        }
    }
    let (_, index) = best.ok_or_else(|| format!("{label}: the zip holds no results.json"))?;
    let entry = archive.by_index(index).map_err(|e| format!("{label}: {e}"))?;
    if entry.size() > MAX_RESULTS_BYTES {
        return Err(format!(
            "{label}: results.json is {} bytes, more than the {MAX_RESULTS_BYTES} allowed",
            entry.size()
        ));
    }
    let mut text = String::new();
    // The declared size can lie; the reader is capped as well.
    entry
        .take(MAX_RESULTS_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{label}: cannot read results.json: {e}"))?;
    if text.len() as u64 > MAX_RESULTS_BYTES {
        return Err(format!("{label}: results.json is larger than the {MAX_RESULTS_BYTES} bytes allowed"));
    }
    parse_results(&text, &format!("{label}!results.json"))
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

fn api_problem(what: &str, e: &ApiError) -> String {
    format!("{what}: {}", e.explain("actions: read"))
}

/// The commit the baseline should come from: the PR's merge base when the run tested the PR head,
/// `pull_request.base.sha` when it tested GitHub's merge commit, `before` on a push.
pub async fn base_commit(api: &Api, ctx: &GithubContext) -> Result<Option<String>, String> {
    if let Some(pr) = ctx.pull_request() {
        let tested_head = ctx.sha.is_empty() || ctx.sha == pr.head.sha;
        if !tested_head {
            return Ok(Some(pr.base.sha.clone()));
        }
        let path = api.repo_path(&format!("/compare/{}...{}", pr.base.sha, pr.head.sha));
        return match api.get_json::<CompareResponse>(&path).await {
            Ok(c) => Ok(Some(c.merge_base_commit.sha)),
            Err(e) => {
                eprintln!("fcorr: warning: cannot find the merge base ({e}); using the PR's base commit");
                Ok(Some(pr.base.sha.clone()))
            }
        };
    }
    Ok(ctx.event.before.clone().filter(|b| !b.is_empty() && b.chars().any(|c| c != '0')))
}

async fn workflow_id(api: &Api, ctx: &GithubContext) -> Result<String, String> {
    if let Some(run_id) = ctx.run_id {
        match api.get_json::<WorkflowRunResponse>(&api.repo_path(&format!("/actions/runs/{run_id}"))).await {
            Ok(run) => return Ok(run.workflow_id.to_string()),
            Err(e) if ctx.workflow_file.is_none() => return Err(api_problem("cannot look up this workflow run", &e)),
            Err(_) => {}
        }
    }
    ctx.workflow_file
        .as_deref()
        .and_then(|f| f.rsplit('/').next())
        .map(query_escape)
        .ok_or_else(|| "cannot tell which workflow this is (no GITHUB_RUN_ID or GITHUB_WORKFLOW_REF)".to_string())
}

/// Finds the baseline on GitHub: see the module docs.
pub async fn from_github(api: &Api, ctx: &GithubContext, artifact: &str, depth: u32) -> Result<Lookup, String> {
    let Some(base) = base_commit(api, ctx).await? else {
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
            api.get_json(&path).await.map_err(|e| api_problem("cannot list the base commit's workflow runs", &e))?;
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
                api.get_json(&path).await.map_err(|e| api_problem("cannot list the run's artifacts", &e))?;
            let Some(found) = list.artifacts.iter().find(|a| a.name == artifact && !a.expired) else { continue };
            let zip_path = api.repo_path(&format!("/actions/artifacts/{}/zip", found.id));
            // GitHub answers 302 to a short-lived blob URL; the client follows it and drops the
            // token when the redirect leaves the API's origin.
            let response = api
                .request(Method::GET, &zip_path, None)
                .await
                .map_err(|e| api_problem("cannot download the baseline artifact", &e))?;
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
            .map_err(|e| api_problem("cannot read the commit's parents", &e))?;
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
