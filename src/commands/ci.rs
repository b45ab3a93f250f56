//! `fcorr ci`: the pipeline with a baseline and GitHub: prepare → execute → compare → judge →
//! write reports → publish → finish.
//!
//! Results files are written before anything is published; publishing problems are warnings and
//! never change the exit code, which follows the gates alone.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::commands::run::RunArgs;
use crate::commands::shared::{self, BaselineSource, github_context, report_env};
use crate::config::{GithubConfig, SuiteConfig};
use crate::errors::FcorrError;
use crate::gate::Gate;
use crate::github::GithubContext;
use crate::github::baseline::{self, Source};
use crate::kinds::import::ImportConfig;
use crate::model::Run;
use crate::pipeline;
use crate::publish::{self, Options, annotations::PathMapper, comment};
use crate::report::markdown::Detail;
use crate::report::terminal;

/// Arguments of `fcorr ci`: those of `fcorr run`, plus baseline and publishing.
#[derive(Debug, Args, Clone, Default)]
pub struct CiArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Baseline: `github` (the base commit's results artifact), a results.json / directory / zip, or `none`.
    /// Default: `github` inside GitHub Actions, else none.
    #[arg(long, value_name = "SOURCE")]
    pub baseline: Option<String>,
    #[command(flatten)]
    pub publish: PublishFlags,
    /// Name of the results artifact to look for on the base commit (default fcorr-results).
    #[arg(long, value_name = "NAME", env = "FCORR_ARTIFACT_NAME")]
    pub artifact_name: Option<String>,
    /// First-parent ancestors searched for a baseline when the base commit has none (default 20).
    #[arg(long, value_name = "N")]
    pub baseline_depth: Option<u32>,
    /// Event payload to read instead of `$GITHUB_EVENT_PATH`.
    #[arg(long, value_name = "FILE")]
    pub event: Option<PathBuf>,
    #[command(flatten)]
    pub files: FilesFlags,
}

/// Existing report files imported as suites next to (or instead of) the run's own.
#[derive(Debug, Args, Clone, Default)]
pub struct FilesFlags {
    /// Report files or globs to import (any format `fcorr import` reads), relative to the current
    /// directory; `**` crosses directories, `!glob` excludes. Repeat the flag for more.
    #[arg(long = "files", value_name = "GLOB", allow_hyphen_values = true)]
    pub files: Vec<String>,
    /// Name (and stable id) of the suite the files make (default `import`).
    #[arg(long, value_name = "NAME")]
    pub suite_name: Option<String>,
    /// How the files make suites (default none).
    #[arg(long, value_name = "HOW")]
    pub group_by: Option<GroupBy>,
}

/// `--group-by`: how `--files` become suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    /// One suite.
    None,
    /// One suite per top directory of the files, named after it.
    Directory,
}

impl FilesFlags {
    /// The import suites for the files, planned like `kind = "import"` suites in fcorr.toml.
    /// Nothing matched: a warning (and a workflow warning in Actions), or a usage error when the
    /// `empty` gate is on (`fail-on`), since then an empty import must not pass in silence.
    fn suites(&self, cwd: &Path, out_dir: &Path, gates: &[Gate]) -> Result<Option<Vec<SuiteConfig>>, FcorrError> {
        if self.files.is_empty() {
            return Ok(None);
        }
        let by_directory = self.group_by == Some(GroupBy::Directory);
        let expanded = shared::expand_patterns(&self.files, cwd, out_dir)?;
        for pattern in &expanded.unmatched {
            warn_in_workflow(&format!("--files: no report file matches `{pattern}`"));
        }
        if expanded.files.is_empty() {
            let message = expanded.nothing_matched(cwd, out_dir);
            if gates.contains(&Gate::Empty) {
                return Err(FcorrError::Usage(format!(
                    "--files: {message}; `fail-on` includes `empty`, so an import of nothing fails"
                )));
            }
            warn_in_workflow(&format!("--files: {message}; nothing imported"));
            return Ok(Some(Vec::new()));
        }
        let name = self.suite_name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| "import".into());
        // Group by the first directory under `cwd`; files directly in it keep the suite name.
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for file in &expanded.files {
            let group = match file.strip_prefix(cwd).ok().map(|rel| rel.components().collect::<Vec<_>>()) {
                Some(parts) if by_directory && parts.len() > 1 => parts[0].as_os_str().to_string_lossy().into_owned(),
                _ => name.clone(),
            };
            let path = file.to_string_lossy().into_owned();
            match groups.iter_mut().find(|(g, _)| *g == group) {
                Some((_, files)) => files.push(path),
                None => groups.push((group, vec![path])),
            }
        }
        Ok(Some(
            groups
                .into_iter()
                .map(|(group, reports)| SuiteConfig {
                    name: Some(group),
                    // Case file paths in reports are relative to where the reports were listed.
                    path: Some(cwd.to_path_buf()),
                    ..SuiteConfig::with_settings("import", &ImportConfig { reports, report_format: None })
                })
                .collect(),
        ))
    }
}

/// A warning on stderr, kept for the run: in GitHub Actions also an annotation and a line of the
/// job summary (see [`crate::warnings`]).
fn warn_in_workflow(message: &str) {
    crate::warnings::warn(message);
}

/// Publishing flags shared by `fcorr ci` and `fcorr publish`.
#[derive(Debug, Args, Clone, Default)]
pub struct PublishFlags {
    /// PR comment mode (default update).
    #[arg(long, value_name = "MODE")]
    pub comment: Option<comment::Mode>,
    /// When to post a new comment (default always; an existing one is always kept current).
    #[arg(long, value_name = "WHEN")]
    pub comment_when: Option<comment::When>,
    /// Tag of the sticky comment (default: workflow/job); distinct tags give distinct comments.
    #[arg(long, value_name = "TAG")]
    pub comment_tag: Option<String>,
    /// Also create a check run with annotations (needs `checks: write`).
    #[arg(long)]
    pub check_run: bool,
    /// Also put the Mermaid chart of outcomes in the PR comment (`[report] comment-charts`).
    #[arg(long)]
    pub comment_charts: bool,
    /// Emit annotations for failures (default).
    #[arg(long, overrides_with = "no_annotations")]
    pub annotations: bool,
    /// Do not emit annotations.
    #[arg(long, overrides_with = "annotations")]
    pub no_annotations: bool,
    /// Do not write the job summary (`$GITHUB_STEP_SUMMARY`); outputs and files still are.
    #[arg(long)]
    pub no_job_summary: bool,
    /// How much the PR comment shows (default full). Smaller levels are still used when a
    /// larger one exceeds GitHub's limit.
    #[arg(long, value_name = "LEVEL")]
    pub comment_body: Option<crate::config::CommentBody>,
    /// Prefix joined to report file paths in annotations and links (reports written in a
    /// subdirectory of a monorepo); `-dir/` strips a prefix instead (`[github] path-prefix`).
    #[arg(long, value_name = "PREFIX")]
    pub path_prefix: Option<String>,
    /// Directory of template overrides (`summary.md.j2`, `comment.md.j2`…) over `[report] templates`.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    /// The workflow grants a Dependabot run's token write access (`permissions:`): comment and
    /// create the check run anyway. Fork pull requests stay read-only whatever this says.
    #[arg(long)]
    pub token_can_write: bool,
}

impl PublishFlags {
    /// Flags over `[github]` config over defaults.
    pub fn options(&self, config: &GithubConfig) -> Options {
        let annotations = if self.no_annotations {
            false
        } else if self.annotations {
            true
        } else {
            config.annotations.unwrap_or(true)
        };
        Options {
            comment: self.comment.or(config.comment).unwrap_or_default(),
            when: self.comment_when.or(config.comment_when).unwrap_or_default(),
            tag: self.comment_tag.clone().or_else(|| config.comment_tag.clone()),
            check_run: self.check_run || config.check_run.unwrap_or(false),
            annotations,
            job_summary: !self.no_job_summary && config.job_summary.unwrap_or(true),
            token_can_write: self.token_can_write || config.token_can_write.unwrap_or(false),
            stop_when: None,
        }
    }

    /// `--path-prefix` over `[github] path-prefix`.
    pub fn path_prefix(&self, config: &GithubConfig) -> Option<String> {
        self.path_prefix.clone().or_else(|| config.path_prefix.clone()).filter(|p| !p.trim().is_empty())
    }

    /// `--comment-body` over `[github] comment-body`.
    pub fn comment_detail(&self, config: &GithubConfig) -> Detail {
        self.comment_body.or(config.comment_body).unwrap_or_default().into()
    }

    /// `--templates` (checked here: a typo is a usage error, not built-in templates in silence),
    /// else `configured` (the config's, already checked).
    pub fn templates(&self, configured: Option<PathBuf>) -> Result<Option<PathBuf>, FcorrError> {
        match &self.templates {
            Some(dir) if !dir.is_dir() => Err(FcorrError::Usage(format!(
                "--templates {}: no such directory (it holds summary.md.j2, comment.md.j2… overrides)",
                dir.display()
            ))),
            Some(dir) => Ok(Some(dir.clone())),
            None => Ok(configured),
        }
    }
}

/// Prints the table (which quotes tool output) so no line of it can act as a workflow command.
pub fn print_table(run: &Run, in_github: bool, color: Option<terminal::Color>) {
    let color = terminal::use_color(color);
    let table = terminal::render_table(run, color, terminal::output_width());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out);
    if in_github {
        let _ = publish::annotations::echo_untrusted(&mut out, &table);
    } else {
        let _ = write!(out, "{table}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", terminal::render_verdict(run, color));
    for skipped in &run.verdict.skipped {
        let _ = writeln!(out, "  (skipped) {skipped}");
    }
}

/// Arguments `fcorr ci` was started with that clap refused (`message` is clap's text): inside
/// GitHub Actions the job summary and the `verdict=error` output say so, as for any other error.
pub fn explain_bad_arguments(message: &str, code: i32, job_summary: bool) {
    if let Some(ctx) = GithubContext::from_env(None) {
        let message = message.trim_end().trim_end_matches("For more information, try '--help'.").trim_end();
        publish::publish_error(&ctx, &message, code, job_summary);
    }
}

/// `fcorr ci`. When it cannot finish (exit 2 or 3) inside GitHub Actions, the job summary and
/// the `verdict=error` output still say why: a red check with an empty summary explains nothing.
pub fn execute(args: CiArgs) -> Result<i32, FcorrError> {
    let event = args.event.clone();
    let job_summary = !args.publish.no_job_summary;
    let result = run_ci(args);
    if let Err(error) = &result
        && let Some(ctx) = GithubContext::from_env(event.as_deref())
    {
        publish::publish_error(&ctx, &crate::errors::chain(error), error.exit_code(), job_summary);
    }
    result
}

fn run_ci(args: CiArgs) -> Result<i32, FcorrError> {
    let prepared = pipeline::prepare_with(&args.run.options(), &|cwd, out, gates| args.files.suites(cwd, out, gates))?;
    shared::check_select(&prepared)?;
    let github = &prepared.config.github;
    let options = Options { stop_when: Some(shared::stop_signal_came), ..args.publish.options(github) };
    let comment_detail = args.publish.comment_detail(github);
    let templates = args.publish.templates(prepared.templates())?;
    let path_prefix = args.publish.path_prefix(github);
    let ctx = github_context(args.event.as_deref());
    let source = match args.baseline.as_deref().or(github.baseline.as_deref()) {
        Some(text) => Source::parse(text),
        None if ctx.is_some() => Source::Github,
        None => Source::None,
    };
    // A baseline file named is read before anything runs: one that cannot be read stops here.
    let source = BaselineSource::open(source)?;
    // Until every report is written, the output directory's earlier reports are not this run's;
    // held to the end, so no other fcorr writes there meanwhile.
    let _writing = crate::report::in_progress::begin(&prepared.out_dir, "ci")?;
    pipeline::cancel_on_signal();

    let mode = if args.run.json { terminal::ProgressMode::Quiet } else { terminal::ProgressMode::detect() };
    terminal::color_progress(args.run.color);
    let mut run = pipeline::execute(&prepared, mode);

    let artifact = args
        .artifact_name
        .clone()
        .or_else(|| github.artifact_name.clone())
        .unwrap_or_else(|| baseline::DEFAULT_ARTIFACT.into());
    let depth = args.baseline_depth.or(github.baseline_depth).unwrap_or(baseline::DEFAULT_DEPTH);
    let base = source.resolve(ctx.as_ref(), &artifact, depth);
    let timing = prepared.config.report.timing();
    let base = base.map(|b| (b.run, b.info));
    pipeline::conclude(&mut run, base, Default::default(), &timing, |run| pipeline::verdict(run, &prepared));

    // Results first: nothing published can be lost if publishing fails.
    let mut env = prepared.config.report.apply_to(report_env(ctx.as_ref(), templates));
    env.comment_charts |= args.publish.comment_charts;
    env.comment_detail = comment_detail;
    let cwd = std::env::current_dir().unwrap_or_default();
    let mapper = PathMapper {
        roots: prepared.plans.iter().map(|p| (p.id.clone(), p.root.clone())).collect(),
        base: cwd.join(&prepared.config.base_dir),
        workspace: ctx.as_ref().and_then(|c| c.workspace.clone()),
        prefix: path_prefix.clone(),
    };
    // The files on disk link to the code too, like the published copies.
    env.links = ctx.as_ref().and_then(|c| publish::code_links(c, &mapper));
    pipeline::write_reports(&run, &prepared.out_dir, &prepared.formats(&args.run.format), &env)?;
    pipeline::keep_dated(&run, &prepared);

    if args.run.json {
        // The model always serialises (plain data).
        outln_raw!("{}", serde_json::to_string_pretty(&run).expect("run serialises"));
    } else {
        print_table(&run, ctx.is_some(), args.run.color);
        outln!("reports: {}", prepared.out_dir.display());
    }

    match &ctx {
        Some(ctx) => {
            // With --json, stdout is a JSON document for another program: the workflow commands
            // go to stderr, which the runner reads for them too.
            if args.run.json {
                // Not locked for the whole publishing (see `fcorr publish`): each write locks.
                let mut stderr = std::io::stderr();
                publish::publish(ctx, &run, &env, &prepared.out_dir, &options, &mapper, &mut stderr);
            } else {
                let mut stdout = std::io::stdout();
                publish::publish(ctx, &run, &env, &prepared.out_dir, &options, &mapper, &mut stdout);
            }
        }
        None => errln!("fcorr: not in GitHub Actions (GITHUB_REPOSITORY unset): nothing published"),
    }

    Ok(pipeline::finish(&run))
}
