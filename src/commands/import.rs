//! `fcorr import`: test reports another tool wrote (JUnit, CTRF, TAP...) → one scored, judged
//! suite of kind `import`, with the same reports, table and exit code as `fcorr run`.
//!
//! Files and globs are expanded here so that "nothing matched" is a usage error; the suite itself
//! goes through the same plan → collect → score path as a `kind = "import"` suite in fcorr.toml.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use crate::collect;
use crate::commands::run::JudgeArgs;
use crate::commands::shared;
use crate::config::{Config, SuiteConfig};
use crate::errors::FcorrError;
use crate::execute::{ExecContext, process};
use crate::gate;
use crate::kinds::import::ImportConfig;
use crate::model::streamed::IdsAcrossParts;
use crate::model::{Case, Policy, ResultsSource, Run, Severity, Suite, SuiteStatus};
use crate::pipeline::cache_dir;
use crate::plan::{self, Overrides};
use crate::progress::{Progress, Unit};
use crate::report::ReportEnv;
use crate::spill::Spill;

/// `--format-in`'s possible values: every report parser's name (its aliases accepted, not listed),
/// from the parsers' registry, so `--help` and a bad value list exactly what fcorr reads.
fn report_formats() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    let names = collect::PARSERS.iter().flat_map(|p| {
        std::iter::once(PossibleValue::new(p.format()))
            .chain(p.aliases().iter().map(|alias| PossibleValue::new(*alias).hide(true)))
    });
    clap::builder::PossibleValuesParser::new(names.collect::<Vec<_>>())
}

/// Arguments of `fcorr import`.
#[derive(Debug, Args, Clone, Default)]
pub struct ImportArgs {
    /// Report files or globs (quote globs so fcorr expands `**`); relative to the current directory.
    /// Taken as OS strings so that a path that is not UTF-8 is refused by name (exit 2) rather
    /// than by clap's "invalid UTF-8" with no name.
    #[arg(required = true, value_name = "FILES-OR-GLOBS")]
    pub files: Vec<std::ffi::OsString>,
    /// Suite name, also its stable id for comparisons with a baseline.
    #[arg(long, default_value = "import")]
    pub name: String,
    /// Read every file as this format instead of recognising it from its content.
    #[arg(long, value_name = "FORMAT", value_parser = report_formats())]
    pub format_in: Option<String>,
    /// Scoring policy.
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<Policy>,
    /// Earlier results to compare with and to carry history from: a results.json, its
    /// directory or a zip; `github` (the base commit's artifact, named by --artifact-name); `none`.
    #[arg(long, value_name = "SOURCE")]
    pub baseline: Option<String>,
    /// Name of the baseline artifact for `--baseline github`.
    #[arg(long, value_name = "NAME", default_value = crate::github::baseline::DEFAULT_ARTIFACT)]
    pub artifact_name: String,
    /// Keep memory flat however many cases the files hold: each file's cases go to a temporary
    /// file in the output directory once it is read, and every report reads them back from there
    /// (see "Streaming mode" in docs/import.md). A `--baseline` is compared case by case as
    /// they are read back.
    #[arg(long)]
    pub stream: bool,
    #[command(flatten)]
    pub judge: JudgeArgs,
    /// Print phase timings to stderr (`phases: parse=…s report=…s total=…s`), for benchmarks.
    #[arg(long, hide = true)]
    pub timings: bool,
}

/// `fcorr import`.
pub fn execute(args: ImportArgs) -> Result<i32, FcorrError> {
    let started = Instant::now();
    let started_at = time::OffsetDateTime::now_utc();
    let defaults = Config::default();
    let gates = args.judge.gates(&defaults)?;
    let cwd = std::env::current_dir().map_err(FcorrError::Cwd)?;
    let out_dir = args.judge.out_dir(&cwd);
    shared::note_reports_on_stop("importing", &out_dir);
    let files = expand_all(&utf8_patterns(&args.files)?, &cwd, &out_dir)?;
    // Like `fcorr ci`: a baseline file named that cannot be read stops here, before anything is
    // written; a missing artifact (`github`) is a warning.
    let source = crate::github::baseline::Source::parse(args.baseline.as_deref().unwrap_or("none"));
    let baseline = shared::BaselineSource::open(source)?;
    // Until every report is written, the output directory's earlier reports are not this run's;
    // held to the end, so no other fcorr writes there meanwhile.
    let _writing = crate::report::in_progress::begin(&out_dir, "import")?;

    // The same planning as a `kind = "import"` suite in fcorr.toml, with the files already expanded.
    let config = Config {
        base_dir: PathBuf::from("."),
        suites: vec![SuiteConfig {
            name: Some(args.name.clone()),
            ..SuiteConfig::with_settings(
                "import",
                &ImportConfig {
                    reports: files.iter().map(|f| f.to_string_lossy().into_owned()).collect(),
                    report_format: args.format_in.clone(),
                },
            )
        }],
        ..Config::default()
    };
    if args.policy == Some(Policy::Graded) {
        return Err(FcorrError::Usage(
            "--policy graded applies to bank suites, which grade each case; imported cases have no grades".into(),
        ));
    }
    let overrides = Overrides { policy: args.policy, ..Overrides::default() };
    let plans = plan::plan(&config, &[], &overrides, &crate::kinds::KINDS)?;
    let exec = ExecContext { out_dir: out_dir.clone(), cache_dir: cache_dir(), jobs: 1, grace: process::DEFAULT_GRACE };

    // A long import shows how much it has read, on stderr only (stdout may be `--json`'s document).
    let on_terminal = crate::report::terminal::ProgressMode::detect() == crate::report::terminal::ProgressMode::Tty;
    let progress = Progress::start("importing", on_terminal, false);
    let input_bytes = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let count = if files.len() == 1 { String::from("1 report") } else { format!("{} reports", files.len()) };
    progress.stage(format!("reading {count}"), Some((input_bytes, Unit::Bytes)));
    // The commit, branch and dirty flag (three `git` commands, `git status` the longest: 0.15 s
    // in fcorr's own checkout, more in a big one) are asked for while the reports are read.
    let git = {
        let cwd = cwd.clone();
        std::thread::spawn(move || crate::git::info(&cwd))
    };
    let parse_started = Instant::now();
    let parse_cpu_started = cpu_seconds();
    let sink = crate::events::NullSink;
    let mut spill = None;
    let suites: Vec<_> = if args.stream {
        let streamed = Spill::create_in(&out_dir).map_err(spill_error)?;
        let spill = spill.insert(streamed);
        let suite = import_streamed(&config, &overrides, &files, &args.format_in, &exec, spill)?;
        shared::warn_not_kept(spill.not_kept());
        vec![suite]
    } else {
        plans.iter().map(|plan| crate::runners::run_suite(plan, &exec, &sink)).collect()
    };
    let parse_time = parse_started.elapsed();
    let parse_cpu = cpu_seconds() - parse_cpu_started;
    for suite in &suites {
        for diagnostic in suite.diagnostics.iter().filter(|d| d.source == crate::model::DiagnosticSource::Collect) {
            let level = if diagnostic.severity == Severity::Error { "error" } else { "warning" };
            errln!("fcorr: {level}: {}", diagnostic.message);
        }
    }

    progress.cases(suites.iter().map(|s| s.counts.total).sum());
    progress.stage("comparing and judging", None);
    // A panic asking git (none is expected) leaves the run without git details, as no repository would.
    let git = git.join().ok().flatten();
    let mut run = Run::assemble(suites, started_at, Some(settings_hash(&config)), git);
    // Read once: the baseline lookup (`--baseline github`) and the code links both use it.
    let github = shared::github_context(None);
    let from_github = baseline.is_github();
    let base = baseline.resolve(
        github.as_ref().filter(|_| from_github),
        &args.artifact_name,
        crate::github::baseline::DEFAULT_DEPTH,
    );
    let tolerance = config.gate.regression_tolerance;
    let base = base.map(|b| (b.run, b.info));
    crate::pipeline::conclude(&mut run, base, Default::default(), &config.report.timing(), |run| {
        gate::judge(run, &gates, tolerance)
    });
    if spill.is_some() {
        crate::spill::keep_slowest(&mut run)
            .map_err(|e| spill_error(crate::spill::SpillError::reading(&out_dir, e)))?;
    }

    progress.stage("writing reports", None);
    let report_started = Instant::now();
    // Inside GitHub Actions the files on disk link failures to the code, as `fcorr ci` writes them.
    let env =
        ReportEnv { links: github.as_ref().and_then(crate::publish::code_links_from_cwd), ..ReportEnv::default() };
    let (written, format_times) = crate::report::write_required(&run, &env, &out_dir, &args.judge.format)?;
    let report_time = report_started.elapsed();
    // The bar is cleared before the table is printed.
    drop(progress);

    args.judge.print(&run, &written);
    if args.timings {
        // Same counting words as the benchmark's other readers print, so run.sh can check them.
        // CPU seconds next to wall seconds: on a busy machine wall time says more about the neighbours.
        errln!(
            "phases: parse={:.3}s parse_cpu={:.3}s report={:.3}s total={:.3}s total_cpu={:.3}s cases={} failures={} skipped={}",
            parse_time.as_secs_f64(),
            parse_cpu,
            report_time.as_secs_f64(),
            started.elapsed().as_secs_f64(),
            cpu_seconds(),
            run.totals.total,
            run.totals.failures(),
            run.totals.skipped
        );
        // Formats are written concurrently, so these add up to more than `report=`; the CPU
        // seconds of each format's thread say more than wall seconds on a busy machine.
        let formats: Vec<String> =
            format_times.iter().map(|(name, took, _)| format!("{name}={:.3}s", took.as_secs_f64())).collect();
        errln!("formats: {}", formats.join(" "));
        let cpu: Vec<String> =
            format_times.iter().map(|(name, _, cpu)| format!("{name}={:.3}s", cpu.as_secs_f64())).collect();
        errln!("formats_cpu: {}", cpu.join(" "));
    }
    Ok(run.verdict.outcome.exit_code())
}

/// `--stream`: the import suite read one file at a time, each through the same plan → collect →
/// score path as the whole, its cases sent to `spill` as they are read (in batches for a format
/// that can hand them out early, JUnit; else once the file is read); the parts are then joined
/// into the suite the whole import would give (same ids, counts, status and score). Memory holds
/// a batch of cases (one file's for the other formats), and the failing ones kept for the
/// summaries.
fn import_streamed(
    config: &Config,
    overrides: &Overrides,
    files: &[PathBuf],
    format_in: &Option<String>,
    exec: &ExecContext,
    spill: &mut Spill,
) -> Result<Suite, FcorrError> {
    let mut ids = IdsAcrossParts::default();
    let mut unreadable = Vec::new();
    let mut joined: Option<Suite> = None;
    let mut plan = None;
    for file in files {
        let mut one = config.clone();
        one.suites[0] = SuiteConfig {
            settings: SuiteConfig::with_settings(
                "import",
                &ImportConfig { reports: vec![file.to_string_lossy().into_owned()], report_format: format_in.clone() },
            )
            .settings,
            ..config.suites[0].clone()
        };
        let plans = plan::plan(&one, &[], overrides, &crate::kinds::KINDS)?;
        let Some(part_plan) = plans.into_iter().next() else { break };
        let part = if crate::execute::process::is_cancelled() {
            // What the in-memory import gives then: a cancelled suite, with no case.
            crate::runners::run_suite(&part_plan, exec, &crate::events::NullSink)
        } else {
            let spec =
                [collect::ReportSpec { pattern: file.to_string_lossy().into_owned(), format: format_in.clone() }];
            read_in_batches(&part_plan, &spec, exec, spill, &mut ids, &mut unreadable)?
        };
        joined = Some(match joined {
            None => part,
            Some(whole) => join_part(whole, part),
        });
        plan = Some(part_plan);
    }
    let (Some(mut suite), Some(plan)) = (joined, plan) else {
        return Err(FcorrError::Harness("--stream: no report file to read".into()));
    };
    if suite.counts.total == 0 {
        // Nothing on disk: the whole import in memory costs nothing and says why, file by file.
        let plans = plan::plan(config, &[], overrides, &crate::kinds::KINDS)?;
        return Ok(plans
            .iter()
            .map(|p| crate::runners::run_suite(p, exec, &crate::events::NullSink))
            .next()
            .unwrap_or(suite));
    }
    if !unreadable.is_empty() {
        // Files that could not be read among files that gave cases: their error cases come last,
        // as the in-memory import puts them (`ecosystems::reports`), so the suite cannot pass.
        let mut part = crate::runners::new_suite(&plan);
        part.cases = unreadable;
        part.finalize_cases();
        stream_part(&mut part, &mut ids, spill).map_err(spill_error)?;
        ids.keep();
        suite = join_part(suite, part);
    }
    // What `execute::apply_collected` decides for an import that gave cases (no command ran).
    suite.error = None;
    suite.status = if suite.counts.ran() == 0 {
        SuiteStatus::NoTests
    } else if suite.counts.failures() > 0 {
        SuiteStatus::Failed
    } else {
        SuiteStatus::Passed
    };
    suite.score = crate::score::score_suite(&suite, plan.policy, plan.threshold, &plan.weights);
    Ok(suite)
}

/// One report file of a streamed import: its cases go to `spill` in the batches the parser hands
/// out, each given ids (across every part before it) and redacted as `runners::run_suite` does
/// for a whole suite, then the rest once the file is read, with the file's diagnostics. A file
/// found broken after batches went out gives no case, as it does in memory: its batches are
/// taken back from the numbering and the spill's count of kept cases, and dropped.
fn read_in_batches(
    plan: &crate::plan::SuitePlan,
    reports: &[collect::ReportSpec],
    exec: &ExecContext,
    spill: &mut Spill,
    ids: &mut IdsAcrossParts,
    unreadable: &mut Vec<Case>,
) -> Result<Suite, FcorrError> {
    let started = Instant::now();
    let mark = spill.mark();
    let outcome = process::CommandOutcome::none_ran();
    let ctx = crate::ecosystems::CollectContext {
        root: &plan.root,
        work_dir: &plan.root,
        reports,
        outcome: &outcome,
        started: None,
    };
    let mut batches: Option<Suite> = None;
    let mut failed = None;
    let batch = &mut |cases| {
        let mut part = crate::runners::new_suite(plan);
        part.cases = cases;
        part.finalize_cases();
        match stream_part(&mut part, ids, spill) {
            Ok(()) => {
                batches = Some(match batches.take() {
                    None => part,
                    Some(whole) => join_part(whole, part),
                });
                std::ops::ControlFlow::Continue(())
            }
            Err(e) => {
                failed = Some(e);
                std::ops::ControlFlow::Break(())
            }
        }
    };
    let collected = crate::ecosystems::collect_import_in_batches(&ctx, &exec.out_dir, batch, unreadable);
    if let Some(e) = failed {
        return Err(spill_error(e));
    }
    if !collected.ran {
        // Not read to its end: none of its cases count.
        ids.rewind();
        spill.rewind(mark);
        batches = None;
    }
    let mut rest = crate::runners::new_suite(plan);
    crate::execute::apply_collected(&mut rest, collected, None);
    stream_part(&mut rest, ids, spill).map_err(spill_error)?;
    ids.keep();
    let mut part = match batches {
        None => rest,
        Some(whole) => join_part(whole, rest),
    };
    part.duration_ms = started.elapsed().as_millis() as u64;
    Ok(part)
}

/// A part whose cases have their ids within it: ids across the parts before it, redacted, spilled.
fn stream_part(part: &mut Suite, ids: &mut IdsAcrossParts, spill: &mut Spill) -> Result<(), crate::spill::SpillError> {
    ids.next_part(&mut part.cases);
    crate::secrets::redact_serde(part);
    spill.stream_suite(part)
}

/// One more file's part of a streamed import suite, appended to the parts before it.
fn join_part(mut whole: Suite, part: Suite) -> Suite {
    whole.append_cases(part.cases, part.streamed, &part.counts);
    whole.diagnostics.extend(part.diagnostics);
    whole.duration_ms += part.duration_ms;
    if let (ResultsSource::Report { format, files }, ResultsSource::Report { format: more, files: more_files }) =
        (&mut whole.results_source, part.results_source.clone())
    {
        for name in more.split('+') {
            if !format.split('+').any(|f| f == name) {
                format.push('+');
                format.push_str(name);
            }
        }
        files.extend(more_files);
    } else if matches!(whole.results_source, ResultsSource::None) {
        whole.results_source = part.results_source;
    }
    whole
}

fn spill_error(error: crate::spill::SpillError) -> FcorrError {
    FcorrError::harness_because("fcorr import --stream stopped", error)
}

/// The hash of the import's settings (name, format, policy), without the report files: they are
/// its input, not its configuration, as a project's test files are not. Two imports of other
/// files with the same settings are one configuration when compared with a baseline.
fn settings_hash(config: &Config) -> String {
    let mut settings = config.clone();
    for suite in &mut settings.suites {
        suite.settings.remove("reports");
    }
    settings.hash()
}

/// The file arguments as text. Report paths travel as text from here on (globs, the import
/// suite's `reports`, results.json), and a lossy copy would name another file, so one that is
/// not UTF-8 is a usage error naming it (its bytes that are not UTF-8 shown as `\xFE`).
fn utf8_patterns(files: &[std::ffi::OsString]) -> Result<Vec<String>, FcorrError> {
    files
        .iter()
        .map(|file| {
            file.to_str().map(str::to_string).ok_or_else(|| {
                FcorrError::Usage(format!(
                    "report path `{}` is not valid UTF-8: fcorr import reads report paths as text; rename the file \
                     (or its directory) to a UTF-8 name",
                    file.as_encoded_bytes().utf8_chunks().fold(String::new(), |mut shown, chunk| {
                        shown.push_str(chunk.valid());
                        for byte in chunk.invalid() {
                            shown.push_str(&format!("\\x{byte:02X}"));
                        }
                        shown
                    })
                ))
            })
        })
        .collect()
}

/// Expands every argument; an argument that matches nothing is a warning, all of them a usage error.
/// Files in fcorr's own output directory are never imported (they would count twice).
fn expand_all(patterns: &[String], cwd: &Path, out_dir: &Path) -> Result<Vec<PathBuf>, FcorrError> {
    let expanded = shared::expand_patterns(patterns, cwd, out_dir)?;
    if expanded.files.is_empty() {
        return Err(FcorrError::Usage(expanded.nothing_matched(cwd, out_dir)));
    }
    for pattern in &expanded.unmatched {
        crate::warnings::warn(format!("no report file matches `{pattern}`"));
    }
    Ok(expanded.files)
}

/// User + system CPU seconds this process has used so far (0 where unavailable).
#[cfg(unix)]
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the zeroed struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// No `getrusage` off Unix: `--timings` reports 0 CPU seconds there.
#[cfg(not(unix))]
fn cpu_seconds() -> f64 {
    0.0
}
