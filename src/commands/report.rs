//! `fcorr report`: re-render every output (or the chosen formats) from a saved `results.json`.
//!
//! Reports are pure functions of the run, so this gives exactly what `fcorr run` wrote, with
//! other templates or formats, without running anything again. The output directory is held
//! and marked while it is written, as by every command that writes reports (`in_progress`).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::errors::FcorrError;
use crate::report::{self, ReportEnv, terminal};

/// Arguments of `fcorr report`.
#[derive(Debug, Args, Clone, Default)]
pub struct ReportArgs {
    #[command(flatten)]
    pub results: super::ResultsArg,
    /// Output directory (default: the directory of the results file).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Formats to write (repeatable). Default all.
    #[arg(long, value_name = "FORMAT")]
    pub format: Vec<report::Format>,
    /// Directory with template overrides (summary.md.j2, comment.md.j2, macros.md.j2).
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    /// Repository as owner/name, shown in reports.
    #[arg(long, value_name = "OWNER/NAME", env = "GITHUB_REPOSITORY")]
    pub repository: Option<String>,
    /// URL of the CI run, linked from reports.
    #[arg(long, value_name = "URL")]
    pub run_url: Option<String>,
    /// Colors (NO_COLOR is respected in auto).
    #[arg(long, value_name = "WHEN")]
    pub color: Option<terminal::Color>,
    /// Print nothing but problems.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `fcorr report`. Exits 0 when every format was written, 3 when one could not be (or the output
/// directory cannot be), 2 when another fcorr is writing there.
pub fn execute(args: ReportArgs) -> Result<i32, FcorrError> {
    let source = args.results.path();
    let run = report::load_results_to_render(&source)?;
    // `results.json` alone names the current directory: `.` (an empty path cannot be locked).
    let out = args.out.clone().unwrap_or_else(|| args.results.dir());
    let out = if out.as_os_str().is_empty() { PathBuf::from(".") } else { out };
    crate::commands::shared::note_reports_on_stop("writing reports", &out);
    let env = ReportEnv {
        repository: args.repository.clone(),
        run_url: args.run_url.clone(),
        server_url: None,
        templates: args.templates.clone(),
        // Inside GitHub Actions, failures link to the code as in the files `fcorr ci` writes.
        links: crate::commands::shared::github_context(None).as_ref().and_then(crate::publish::code_links_from_cwd),
        ..ReportEnv::default()
    };
    if let Some(dir) = &env.templates
        && !dir.is_dir()
    {
        return Err(FcorrError::Usage(format!("--templates {}: no such directory", dir.display())));
    }
    // The results.json read is not written back over itself (`report::rerender`).
    let source = if source.is_dir() { source.join("results.json") } else { source };
    // Read before `begin`, which writes its own marker there when re-rendering in place.
    let source_dir = source.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let unfinished = report::in_progress::marked(source_dir);
    // Held and marked like every other writer's output directory: a second fcorr writing there
    // is refused, and reports left half re-rendered are not taken for a complete run's.
    let _writing = report::in_progress::begin(&out, "report")?;
    let (written, problems, kept) = report::rerender(&run, &env, &out, &args.format, &source);
    match &unfinished {
        Some(earlier) => report::in_progress::keep(&out, &source, earlier),
        // Every report is in place: the directory holds one complete run again.
        None if problems.is_empty() => report::in_progress::finish(&out),
        None => {}
    }
    for problem in &problems {
        errln!("fcorr: error: {problem}");
    }
    if !args.quiet {
        let color = terminal::use_color(args.color);
        out_raw!("{}", terminal::render_table(&run, color, terminal::output_width()));
        outln!();
        outln_raw!("{}", terminal::render_verdict(&run, color));
        if kept {
            outln!("kept {} (the results read, unchanged)", source.display());
        }
        for path in &written {
            outln!("wrote {}", path.display());
        }
    }
    Ok(if problems.is_empty() { 0 } else { 3 })
}
