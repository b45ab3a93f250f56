//! `fcorr publish`: publish saved results to GitHub, e.g. from a second-stage `workflow_run`
//! job that has a write token but must not run the PR's code.

use std::path::PathBuf;

use clap::Args;

use crate::commands::ci::PublishFlags;
use crate::commands::shared::{github_context, report_env};
use crate::config::Config;
use crate::errors::FcorrError;
use crate::publish::{self, annotations::PathMapper};

/// Arguments of `fcorr publish`.
#[derive(Debug, Args, Clone, Default)]
pub struct PublishArgs {
    #[command(flatten)]
    pub results: super::ResultsArg,
    /// Event payload of the run that produced the results (stage 1's `$GITHUB_EVENT_PATH`).
    #[arg(long, value_name = "FILE")]
    pub event: Option<PathBuf>,
    /// Configuration file for `[github]` settings.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub publish: PublishFlags,
}

/// `fcorr publish`. Exits 0 once the results are readable: publishing problems are warnings.
/// Results it refuses (unreadable, or a directory the last run did not finish writing) exit 2 or
/// 3, and inside GitHub Actions the job summary and the `verdict=error` output say why, as
/// `fcorr ci` does: a red step with an empty summary explains nothing.
pub fn execute(args: PublishArgs) -> Result<i32, FcorrError> {
    let event = args.event.clone();
    let job_summary = !args.publish.no_job_summary;
    let result = publish_saved(args);
    if let Err(error) = &result
        && let Some(ctx) = github_context(event.as_deref())
    {
        publish::publish_error(&ctx, &crate::errors::chain(error), error.exit_code(), job_summary);
    }
    result
}

fn publish_saved(args: PublishArgs) -> Result<i32, FcorrError> {
    let config = match &args.config {
        Some(path) => Config::load(path, &crate::kinds::KINDS)?,
        None => Config::default(),
    };
    let github = config.github.clone();
    let options = args.publish.options(&github);
    let comment_detail = args.publish.comment_detail(&github);
    let templates = args.publish.templates(config.report.templates.as_ref().map(|dir| config.base_dir.join(dir)))?;
    let path_prefix = args.publish.path_prefix(&github);
    let out_dir = args.results.dir();
    // A directory the last run did not finish writing may hold an earlier run's verdict.
    crate::report::in_progress::check(&out_dir)?;
    let run = crate::report::load_results(&args.results.path())?;
    let Some(ctx) = github_context(args.event.as_deref()) else {
        errln!("fcorr: not in GitHub Actions (GITHUB_REPOSITORY unset): nothing to publish to");
        return Ok(0);
    };
    let mapper = PathMapper {
        base: std::env::current_dir().unwrap_or_default(),
        workspace: ctx.workspace.clone(),
        prefix: path_prefix,
        ..PathMapper::default()
    };
    // Not locked for the whole publishing: a stop signal's handler must print (and lift the
    // workflow-command fence) meanwhile, and would wait for the lock forever.
    let mut stdout = std::io::stdout();
    let mut env = config.report.apply_to(report_env(Some(&ctx), templates));
    env.comment_charts |= args.publish.comment_charts;
    env.comment_detail = comment_detail;
    // Nothing here stops on a signal by itself: one ends fcorr at once, and says what it cut short.
    crate::execute::process::note_on_stop(
        "while publishing to GitHub: what was not yet published (the PR comment, the check run, the step \
         outputs) is missing; the results are unchanged"
            .into(),
    );
    let published = publish::publish(&ctx, &run, &env, &out_dir, &options, &mapper, &mut stdout);
    if let Some(url) = published.comment_url {
        outln!("comment: {url}");
    }
    Ok(0)
}
