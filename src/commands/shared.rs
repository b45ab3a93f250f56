//! What several commands share: the GitHub context and the baseline lookup (`ci`, `import`,
//! `merge`, `publish`, `report`), the report context, and report globs expanded the same way
//! for `fcorr import` and `fcorr ci --files`. Commands depend on this module, never on each
//! other's.

use std::path::{Path, PathBuf};

use crate::collect;
use crate::errors::FcorrError;
use crate::github::baseline::{self, Lookup, Source};
use crate::github::{self, GithubContext};
use crate::report::ReportEnv;

/// Reads the GitHub context; a broken event file is kept in it and becomes a warning when
/// publishing (which is best effort).
pub(crate) fn github_context(event: Option<&Path>) -> Option<GithubContext> {
    GithubContext::from_env(event)
}

/// Where the baseline comes from, with a file the user named already read.
pub(crate) struct BaselineSource {
    source: Source,
    file: Option<baseline::Baseline>,
}

impl BaselineSource {
    /// Reads a baseline file the user named (`--baseline FILE`, `[github] baseline`) now,
    /// before anything runs: one that cannot be read is an input error (exit 2) naming it, as in
    /// `fcorr compare`. As a warning it let the `regression` gate asked for be skipped while the
    /// comment said only "no baseline". `github` is looked up later, by [`Self::resolve`].
    pub(crate) fn open(source: Source) -> Result<BaselineSource, FcorrError> {
        let file = match &source {
            Source::File(path) => Some(baseline::load_path(path).map_err(baseline_error)?),
            Source::None | Source::Github => None,
        };
        Ok(BaselineSource { source, file })
    }

    /// Whether the baseline is the base commit's artifact (`github`), looked up on GitHub.
    pub(crate) fn is_github(&self) -> bool {
        self.source == Source::Github
    }

    /// The baseline: the file read by [`Self::open`], or the base commit's artifact found on
    /// GitHub, where every problem is a warning and means "no baseline" (a first run has none).
    pub(crate) fn resolve(self, ctx: Option<&GithubContext>, artifact: &str, depth: u32) -> Option<baseline::Baseline> {
        match self.source {
            Source::None => None,
            Source::File(_) => self.file,
            Source::Github => github_baseline(ctx, artifact, depth),
        }
    }
}

/// A baseline named on the command line (or in the config) that cannot be read is an input
/// error (exit 2), named by its own file (the results.json inside a directory, the zip) and not
/// wrapped in a second path.
pub(crate) fn baseline_error(e: baseline::BaselineError) -> FcorrError {
    use baseline::BaselineError;
    match e {
        BaselineError::Results(e) => e.into(),
        BaselineError::Unusable { label, problem } => {
            FcorrError::input_because(label, "cannot be used as a baseline", problem)
        }
        // The GitHub lookup is not reached from a file; were it, its failure is fcorr's own.
        e @ BaselineError::Api { .. } => FcorrError::harness_because(e.to_string(), e),
        e @ (BaselineError::Client(_) | BaselineError::UnknownWorkflow) => FcorrError::usage_because(e.to_string(), e),
    }
}

/// The base commit's results artifact; every problem is a warning and means "no baseline".
fn github_baseline(ctx: Option<&GithubContext>, artifact: &str, depth: u32) -> Option<baseline::Baseline> {
    let Some(ctx) = ctx else {
        errln!("fcorr: note: `--baseline github` needs GitHub Actions (GITHUB_REPOSITORY); no baseline");
        return None;
    };
    let rt = github::runtime().map_err(|e| crate::warnings::warn(e.to_string())).ok()?;
    let result = rt.block_on(async {
        let api =
            github::api::Api::new(&ctx.api_url, ctx.token.as_deref(), &ctx.repository)?.stop_when(stop_signal_came);
        baseline::from_github(&api, ctx, artifact, depth).await
    });
    match result {
        Ok(Lookup::Found(b)) => {
            let commit = b.info.commit.as_deref().unwrap_or("?");
            errln!(
                "fcorr: baseline: run {} on {commit}{}",
                b.info.source,
                if b.info.commits_behind > 0 {
                    format!(" ({} commit(s) behind the base commit)", b.info.commits_behind)
                } else {
                    String::new()
                }
            );
            Some(*b)
        }
        Ok(Lookup::Missing(why)) => {
            errln!("fcorr: no baseline: {why}");
            None
        }
        Err(e) => {
            crate::warnings::warn(format!("no baseline: {e}"));
            None
        }
    }
}

/// Whether a stop signal came, for GitHub API calls made after the command called
/// `cancel_on_signal` (the signal then only cancels): they end at once rather than hold a
/// stopping fcorr for their timeouts.
pub(crate) fn stop_signal_came() -> Option<String> {
    crate::execute::stop_signal_name().map(|name| format!("fcorr was interrupted by {name}"))
}

/// `--select` (`FCORR_BANK_SELECT`) picks tests of bank suites only. When no bank suite of the
/// whole plan (every shard's) can take it, it would narrow nothing and the full run could pass as
/// if it were the one test asked for: an input error naming the suites, as a selection that
/// matches nothing is. Suites it cannot narrow next to banks that it does are named in a warning.
pub(crate) fn check_select(prepared: &crate::pipeline::Prepared) -> Result<(), FcorrError> {
    use crate::model::{CaseShape, SuiteKind};
    let Some(select) = &prepared.select else { return Ok(()) };
    let takes = |kind: SuiteKind| kind.shape() == CaseShape::Graded;
    let other_shards = prepared.shard_plan.iter().flat_map(|plan| &plan.suites);
    let whole: Vec<String> =
        prepared.plans.iter().filter(|p| !takes(p.kind)).map(|p| format!("{} ({})", p.name, p.runner.name())).collect();
    if !prepared.plans.iter().any(|p| takes(p.kind)) && !other_shards.clone().any(|s| takes(s.kind)) {
        return Err(FcorrError::Usage(format!(
            "--select `{select}` (or FCORR_BANK_SELECT) picks a test, `topic:NAME` or `bank:NAME` of bank suites, and \
             no bank suite runs here: it would narrow nothing, and {} would run whole. Drop --select (unset \
             FCORR_BANK_SELECT); `--filter` picks suites by name",
            if whole.is_empty() { "every suite".to_string() } else { whole.join(", ") }
        )));
    }
    if !whole.is_empty() {
        crate::warnings::warn(format!(
            "--select `{select}` narrows bank suites only: {} run{} whole",
            whole.join(", "),
            if whole.len() == 1 { "s" } else { "" }
        ));
    }
    Ok(())
}

/// Report context from the GitHub context.
pub(crate) fn report_env(ctx: Option<&GithubContext>, templates: Option<PathBuf>) -> ReportEnv {
    ReportEnv {
        repository: ctx.map(|c| c.repository.clone()),
        run_url: ctx.and_then(GithubContext::run_url),
        server_url: ctx.map(|c| c.server_url.clone()),
        templates,
        ..ReportEnv::default()
    }
}

/// Report files found for a list of globs.
#[derive(Debug, Default)]
pub(crate) struct Expanded {
    /// Files, sorted per pattern, each once, excludes applied.
    pub files: Vec<PathBuf>,
    /// Include patterns that matched no file.
    pub unmatched: Vec<String>,
}

impl Expanded {
    /// The message for "no file at all": which patterns, relative to what, and how globs work.
    pub(crate) fn nothing_matched(&self, cwd: &Path, out_dir: &Path) -> String {
        format!(
            "no report file matches {} (paths and globs are relative to {}, `*` stays in one directory and \
             `**` crosses them, `!glob` excludes, files in fcorr's own output directory {} are never read; quote \
             globs such as 'reports/**/*.xml')",
            self.unmatched.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", "),
            cwd.display(),
            out_dir.display()
        )
    }
}

/// Expands report globs relative to `cwd`; a pattern starting with `!` excludes the files its
/// glob matches (in any position of the list). A bad exclude glob is a usage error.
pub(crate) fn expand_patterns(patterns: &[String], cwd: &Path, out_dir: &Path) -> Result<Expanded, FcorrError> {
    let excludes = collect::report_excludes(patterns.iter().map(String::as_str), cwd)
        .map_err(|e| FcorrError::usage_because(e.to_string(), e))?;
    let mut expanded = Expanded::default();
    for pattern in patterns.iter().filter(|p| !p.starts_with('!')) {
        let found = collect::expand_reports(pattern, cwd, Some(out_dir));
        if found.is_empty() {
            expanded.unmatched.push(pattern.clone());
        }
        for file in found {
            if !excludes.is_match(&file) && !expanded.files.contains(&file) {
                expanded.files.push(file);
            }
        }
    }
    Ok(expanded)
}
/// Says what the streaming mode (`--stream`) left out of memory, when the failing and flaky
/// cases outnumber its cap: the summaries list the first ones, the full reports every one.
pub(crate) fn warn_not_kept(not_kept: u64) {
    if not_kept > 0 {
        crate::warnings::warn(format!(
            "--stream: {not_kept} failing or flaky case(s) past the first {} are counted but not listed in the \
             terminal, summary.md or report.html; results.json, junit.xml and ctrf.json hold every case",
            crate::spill::KEEP_CAP
        ));
    }
}

/// What a stop signal during `doing` (import, merge, re-render: no command to cancel, so the
/// signal ends fcorr at once) cut short in `out_dir`, for its "stopped by …" line.
pub(crate) fn note_reports_on_stop(doing: &str, out_dir: &Path) {
    crate::execute::process::note_on_stop(format!(
        "while {doing} into {}: the reports not yet written there are missing or left from an earlier run",
        out_dir.display()
    ));
}
