//! Publish: the GitHub edge. Writes the job summary, step outputs, annotations, the sticky PR
//! comment and the check run from a finished run and the reports already on disk.
//!
//! It decides nothing: verdict and Markdown come from earlier stages, and every failure here is a
//! warning that never changes the verdict or the exit code.

pub mod annotations;
pub mod check_run;
pub mod comment;
pub(crate) mod files;
pub mod guard;

use std::io::Write;
use std::path::Path;

use crate::github::{GithubContext, api, pull_request, runtime};
use crate::model::{Run, RunOutcome};
use crate::report::links::CodeLinks;
use crate::report::{ReportEnv, markdown};
use annotations::PathMapper;

/// What to publish (flags, then `[github]` config, then defaults).
#[derive(Debug, Clone)]
pub struct Options {
    pub comment: comment::Mode,
    pub when: comment::When,
    /// Sticky-comment tag; default workflow/job.
    pub tag: Option<String>,
    pub check_run: bool,
    pub annotations: bool,
    /// Write the job summary (`job-summary: false` leaves `$GITHUB_STEP_SUMMARY` alone).
    pub job_summary: bool,
    /// The workflow raised a Dependabot run's token to write (`--token-can-write`): comment anyway.
    pub token_can_write: bool,
    /// Ends the API calls at once when it says fcorr must stop (the command's stop signals).
    pub stop_when: Option<crate::github::limits::StopCheck>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            comment: comment::Mode::Update,
            when: comment::When::Always,
            tag: None,
            check_run: false,
            annotations: true,
            job_summary: true,
            token_can_write: false,
            stop_when: None,
        }
    }
}

/// What publishing did.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub comment_url: Option<String>,
    pub check_run_url: Option<String>,
    /// Problems, already printed; never a reason to fail.
    pub warnings: Vec<String>,
    /// Annotations that did not fit GitHub's per-step limits.
    pub annotations_left_out: usize,
}

impl Published {
    fn warn(&mut self, message: String) {
        crate::warnings::warn(message.clone());
        self.warnings.push(message);
    }
}

/// Renders Markdown with the user's templates; if they fail, warns and uses the built-in ones.
fn render(
    run: &Run,
    env: &ReportEnv,
    renderer: fn(&Run, &ReportEnv) -> Result<String, crate::errors::RenderError>,
    published: &mut Published,
) -> String {
    renderer(run, env).unwrap_or_else(|e| {
        published.warn(format!("template error ({e}); publishing with the built-in templates"));
        let builtin = ReportEnv { templates: None, ..env.clone() };
        renderer(run, &builtin).unwrap_or_else(|e| format!("fcorr could not render its report: {e}"))
    })
}

/// Links from reports to code for this run: files of the PR head (or the tested commit) on the
/// repository's server, paths resolved like annotations'. `None` when the context lacks a part.
pub fn code_links(ctx: &GithubContext, mapper: &PathMapper) -> Option<CodeLinks> {
    CodeLinks::new(&ctx.server_url, &ctx.repository, ctx.head_sha(), mapper.clone())
}

/// Links for reports written outside `fcorr ci`/`fcorr publish` (`fcorr import`, `fcorr report`)
/// inside GitHub Actions: suite paths resolve from the current directory, as `fcorr publish`
/// resolves them. Outside Actions there is no context, so files on a laptop keep plain text.
pub(crate) fn code_links_from_cwd(ctx: &GithubContext) -> Option<CodeLinks> {
    let mapper =
        PathMapper { base: std::env::current_dir().ok()?, workspace: ctx.workspace.clone(), ..PathMapper::default() };
    code_links(ctx, &mapper)
}

/// Publishes `run` (whose reports are in `out_dir`) to every GitHub surface the context allows.
/// Annotations go to `stdout` as workflow commands (`fcorr ci --json` passes stderr, which the
/// runner reads for them too, to keep its stdout pure JSON).
pub fn publish(
    ctx: &GithubContext,
    run: &Run,
    env: &ReportEnv,
    out_dir: &Path,
    options: &Options,
    mapper: &PathMapper,
    stdout: &mut dyn Write,
) -> Published {
    let mut published = Published::default();
    if let Some(problem) = &ctx.event_problem {
        published.warn(format!("{problem}; publishing without pull-request context"));
    }
    let mut env = env.clone();
    if env.links.is_none() {
        env.links = code_links(ctx, mapper);
    }
    let env = &env;
    let summary = render(run, env, markdown::render_summary, &mut published);

    let tag = options.tag.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| ctx.default_tag());
    let pr = ctx.pull_request().map(|pr| pr.number);
    let wants_comment = options.comment != comment::Mode::Off && pr.is_some();
    let wants_api = wants_comment || options.check_run;
    // Decided before the first write: a read-only token would only collect 403s.
    let read_only = ctx
        .read_only()
        .filter(|why| !(options.token_can_write && *why == crate::github::context::ReadOnly::Dependabot))
        .filter(|_| wants_api);

    if options.job_summary
        && let Some(path) = &ctx.step_summary
    {
        // The note goes where the comment would have been read instead.
        let text = match &read_only {
            Some(why) => format!("{summary}\n> [!NOTE]\n> {}\n", why.explain()),
            None => summary.clone(),
        };
        if let Err(e) = files::append_step_summary(path, &text) {
            published.warn(e.to_string());
        }
    }

    let all_annotations = annotations::collect(run, mapper);
    let mut warning_slots = annotations::PER_LEVEL_LIMIT;
    if options.annotations {
        let (lines, left_out) = annotations::workflow_commands(&all_annotations);
        published.annotations_left_out = left_out;
        warning_slots -= lines.iter().filter(|l| l.starts_with("::warning ")).count().min(warning_slots);
        // These are fcorr's own commands, escaped: the only lines let through the guard.
        guard::with_commands(stdout, |out| {
            for line in &lines {
                let _ = writeln!(out, "{}", crate::secrets::redact(line));
            }
        });
    }

    if let Some(why) = &read_only {
        published.warn(why.explain().into());
    } else if wants_api && ctx.token.is_none() {
        published.warn("GITHUB_TOKEN is not set: no PR comment or check run (pass `github-token`)".into());
    } else if wants_api {
        // The comment is rendered after the check run exists, so failures can link to it.
        let comment_md = |published: &mut Published, check_run_url: Option<&str>| {
            let env = ReportEnv { links: env.links.clone().map(|l| l.with_check_run(check_run_url)), ..env.clone() };
            render(run, &env, markdown::render_comment, published)
        };
        let before = published.warnings.len();
        publish_api(ctx, run, options, &tag, pr, comment_md, &summary, &all_annotations, &mut published);
        let problems = published.warnings[before..].to_vec();
        report_api_problems(ctx, options, &problems, warning_slots, stdout, &mut published);
    }

    if let Some(path) = &ctx.output {
        let outputs = step_outputs(run, out_dir, &published);
        if let Err(e) = files::write_outputs(path, &outputs) {
            published.warn(e.to_string());
        }
    }
    published
}

#[allow(clippy::too_many_arguments)]
fn publish_api(
    ctx: &GithubContext,
    run: &Run,
    options: &Options,
    tag: &str,
    pr: Option<u64>,
    comment_md: impl FnOnce(&mut Published, Option<&str>) -> String,
    summary: &str,
    all_annotations: &[annotations::Annotation],
    published: &mut Published,
) {
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return published.warn(e.to_string()),
    };
    rt.block_on(async {
        let api = match api::Api::new(&ctx.api_url, ctx.token.as_deref(), &ctx.repository) {
            Ok(api) => api,
            Err(e) => return published.warn(e.to_string()),
        };
        let api = match options.stop_when {
            Some(stop) => api.stop_when(stop),
            None => api,
        };
        // A pull request an event file names (stage 1's artifact) is written to only once GitHub
        // confirms it: the file came from a job that ran the PR's code.
        if ctx.event_supplied
            && let Some(pr) = ctx.pull_request()
            && let Err(why) = pull_request::confirm(&api, ctx, pr).await
        {
            return published.warn(format!(
                "not publishing to pull request #{} named by the event file: {why}. No PR comment or check run \
                 was written: the event file comes from the run that tested the PR's code and cannot be \
                 trusted to name the PR (docs/github-action.md, Recipe D)",
                pr.number
            ));
        }
        if options.check_run {
            let conclusion = if run.verdict.outcome == RunOutcome::Pass { "success" } else { "failure" };
            let title = headline(run);
            let name = format!("fcorr ({tag})");
            let check = check_run::CheckRun {
                name: &name,
                head_sha: ctx.head_sha(),
                conclusion,
                title: &title,
                summary,
                annotations: all_annotations,
            };
            match check_run::publish(&api, &check).await {
                Ok(url) => {
                    errln!("fcorr: check run {url}");
                    published.check_run_url = Some(url);
                }
                Err(e) => published.warn(format!("check run: {}", e.explain("checks: write"))),
            }
        }
        if let Some(pr) = pr
            && options.comment != comment::Mode::Off
        {
            let wanted = match options.when {
                comment::When::Always => true,
                comment::When::OnFailure => run.verdict.outcome != RunOutcome::Pass,
                comment::When::OnChange => run.comparison.as_ref().is_none_or(|c| c.has_changes()),
            };
            let check_run_url = published.check_run_url.clone();
            let comment_md = comment_md(published, check_run_url.as_deref());
            match comment::upsert(&api, pr, tag, &comment_md, options.comment, wanted).await {
                Ok(outcome) => {
                    match &outcome {
                        comment::CommentAction::Created { url } => errln!("fcorr: created the PR comment {url}"),
                        comment::CommentAction::Updated { url } => errln!("fcorr: updated the PR comment {url}"),
                        comment::CommentAction::Skipped(why) => errln!("fcorr: no PR comment: {why}"),
                    }
                    published.comment_url = outcome.url().map(str::to_string);
                }
                Err(e) => published.warn(format!("PR comment: {}", e.explain("pull-requests: write"))),
            }
        }
    });
}

/// Says what the API calls could not do (a comment refused, a 403, a hung API) where the step's
/// reader looks: a `::warning` annotation each (as far as the step's warning slots go: `slots`
/// are left) and a list at the end of the job summary, both escaped like every other text.
fn report_api_problems(
    ctx: &GithubContext,
    options: &Options,
    problems: &[String],
    slots: usize,
    stdout: &mut dyn Write,
    published: &mut Published,
) {
    if problems.is_empty() {
        return;
    }
    if options.annotations && slots > 0 {
        let lines: Vec<String> = problems
            .iter()
            .take(slots)
            .map(|problem| {
                annotations::command_line(&annotations::Annotation {
                    level: annotations::Level::Warning,
                    path: None,
                    line: None,
                    title: "fcorr".into(),
                    message: crate::text::truncate_bytes(problem, 4000),
                })
            })
            .collect();
        guard::with_commands(stdout, |out| {
            for line in &lines {
                let _ = writeln!(out, "{}", crate::secrets::redact(line));
            }
        });
    }
    if options.job_summary
        && let Some(path) = &ctx.step_summary
    {
        let mut text = String::from("\n### Publishing to GitHub\n\nfcorr could not publish everything:\n\n");
        for problem in problems {
            // Whole, not its first line: the fix (the permission to add) comes after GitHub's
            // message, which may span lines (they become `<br>`).
            let line = crate::text::truncate_chars(problem, 1000);
            text.push_str(&format!("- {}\n", crate::report::filters::escape_with_code(&line, false)));
        }
        if let Err(e) = files::append_step_summary(path, &text) {
            published.warn(e.to_string());
        }
    }
}

/// What a run that could not finish publishes: a job summary naming the cause and the
/// `verdict=error` output (the run's own outputs were never computed). Problems are warnings.
pub fn publish_error(ctx: &GithubContext, error: &dyn std::fmt::Display, code: i32, job_summary: bool) {
    let message = error.to_string();
    let kind = match code {
        2 => "a usage or configuration error",
        3 => "a harness or infrastructure error",
        _ => "an error",
    };
    if job_summary && let Some(path) = &ctx.step_summary {
        // A fence longer than any run of backticks in the message keeps it one code block.
        let longest = message.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(longest.max(2) + 1);
        let text = format!(
            "## fcorr: error\n\nfcorr stopped with {kind} (exit {code}) before it could report results:\n\n\
             {fence}text\n{message}\n{fence}\n\nThe step log above has the details; fix the cause and re-run.\n"
        );
        if let Err(e) = files::append_step_summary(path, &text) {
            crate::warnings::warn(e.to_string());
        }
    }
    if let Some(path) = &ctx.output
        && let Err(e) = files::write_outputs(path, &[("verdict", "error".into()), ("error", message)])
    {
        crate::warnings::warn(e.to_string());
    }
}

/// The step outputs action.yml documents (`report-url` comes from the upload step, `exit-code`
/// from scripts/action/run.sh).
pub fn step_outputs(run: &Run, out_dir: &Path, published: &Published) -> Vec<(&'static str, String)> {
    let file = |name: &str| {
        let path = out_dir.join(name);
        if path.exists() { path.display().to_string() } else { String::new() }
    };
    let mut outputs = vec![
        ("verdict", verdict_word(run).into()),
        ("score", run.score.map(|s| format!("{s:.1}")).unwrap_or_default()),
        ("total", run.totals.total.to_string()),
        ("passed", run.totals.passes().to_string()),
        ("failed", run.totals.failures().to_string()),
        ("skipped", run.totals.skipped.to_string()),
        ("flaky", run.totals.flaky.to_string()),
        ("duration-ms", run.duration_ms.to_string()),
        ("results-file", file("results.json")),
        ("junit-file", file("junit.xml")),
        ("ctrf-file", file("ctrf.json")),
        ("summary-file", file("summary.md")),
        ("comment-url", published.comment_url.clone().unwrap_or_default()),
        ("check-run-url", published.check_run_url.clone().unwrap_or_default()),
    ];
    // `verdict=error` always comes with its `error` (docs/github-action.md, Outputs), whether
    // fcorr stopped (`publish_error`) or judged a run it could not measure.
    if let Some(why) = error_reason(run) {
        outputs.push(("error", why));
    }
    outputs
}

/// Why a run's verdict is `error`: its first `[error]` reason (a suite that could not be
/// measured), else its first reason; `None` when the verdict is not `error`.
fn error_reason(run: &Run) -> Option<String> {
    if verdict_word(run) != "error" {
        return None;
    }
    let reasons = &run.verdict.reasons;
    let first = reasons.iter().find(|r| r.gate == crate::model::GateKind::Error).or(reasons.first());
    Some(first.map_or_else(|| "fcorr could not judge the run".to_string(), |r| r.message.clone()))
}

/// `pass`, `fail` or `error`.
pub fn verdict_word(run: &Run) -> &'static str {
    match run.verdict.outcome {
        RunOutcome::Pass => "pass",
        RunOutcome::Fail => "fail",
        RunOutcome::UsageError | RunOutcome::HarnessError => "error",
    }
}

fn headline(run: &Run) -> String {
    let score = run.score.map(|s| format!("{s:.1}")).unwrap_or_else(|| "–".into());
    format!(
        "fcorr: {} — score {score}, {} passed, {} failed, {} skipped",
        verdict_word(run),
        run.totals.passes(),
        run.totals.failures(),
        run.totals.skipped
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "1111111111111111111111111111111111111111";
    const MERGE: &str = "2222222222222222222222222222222222222222";

    fn context(event_name: &str, event: &str) -> GithubContext {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("event.json");
        std::fs::write(&path, event).unwrap();
        let vars = [
            ("GITHUB_REPOSITORY", "org/app"),
            ("GITHUB_EVENT_NAME", event_name),
            ("GITHUB_SHA", MERGE),
            ("GITHUB_SERVER_URL", "https://ghe.example.com/"),
        ];
        let vars = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        GithubContext::from_vars(&vars, Some(&path)).unwrap()
    }

    fn url(ctx: &GithubContext) -> Option<String> {
        let mapper = PathMapper { base: "/ws".into(), workspace: Some("/ws".into()), ..PathMapper::default() };
        let suite = crate::model::Suite::new("s", "s", crate::model::SuiteKind::Import);
        code_links(ctx, &mapper)?.file_url(&suite, "t.py", Some(3))
    }

    #[test]
    fn pull_requests_link_their_head_not_the_merge_commit() {
        let pr = format!(
            r#"{{"pull_request": {{"number": 5, "head": {{"sha": "{HEAD}"}}, "base": {{"sha": "{MERGE}"}}}}}}"#
        );
        let ctx = context("pull_request", &pr);
        assert_eq!(url(&ctx).unwrap(), format!("https://ghe.example.com/org/app/blob/{HEAD}/t.py#L3"));
        // A push has no pull request: the tested commit is the one to link.
        let ctx = context("push", r#"{"before": "0", "after": "x"}"#);
        assert_eq!(url(&ctx).unwrap(), format!("https://ghe.example.com/org/app/blob/{MERGE}/t.py#L3"));
    }
}
