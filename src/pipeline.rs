//! The stages every command shares, in order: prepare → execute → (compare) → judge → write
//! reports → (publish) → finish. `run`, `ci`, `import` and `merge` are compositions of these;
//! each judges a run exactly once, after the last thing that can change the verdict.

use std::path::{Path, PathBuf};

use crate::config::{Config, SuiteConfig};
use crate::errors::{ConfigError, FcorrError, PlanError};
use crate::execute::{ExecContext, process};
use crate::gate::{self, Gate};
use crate::kinds::KINDS;
use crate::model::{Run, SuiteStatus, TimingSettings, Verdict};
use crate::plan::{self, Overrides};
use crate::report::{self, ReportEnv, terminal};

/// Where `fcorr run` and `fcorr ci` look for a config when given neither paths nor `--config`.
pub(crate) const CONFIG_LOCATIONS: &[&str] = &["fcorr.toml", ".github/fcorr.toml"];

/// Everything decided before executing: config, plans, outputs, gates.
pub(crate) struct Prepared {
    pub config: Config,
    pub plans: Vec<plan::SuitePlan>,
    pub out_dir: PathBuf,
    pub gates: Vec<Gate>,
    pub exec: ExecContext,
    /// `--shard K/N`, recorded on every suite so `fcorr merge` can join the parts.
    pub shard: Option<crate::shard::Shard>,
    /// The whole plan's shards, recorded on the run so `fcorr merge` can name a missing one.
    pub shard_plan: Option<crate::model::ShardPlan>,
    /// Cases whose failures fail no gate.
    pub quarantine: crate::quarantine::Quarantine,
    /// `--select`: graded suites it leaves with no test say so.
    pub select: Option<String>,
}

impl Prepared {
    /// Formats to write: the command line's, else the config's (empty: all).
    pub(crate) fn formats(&self, flags: &[report::Format]) -> Vec<report::Format> {
        if flags.is_empty() { self.config.report.formats.clone() } else { flags.to_vec() }
    }

    /// The config's template directory, relative to the config file.
    pub(crate) fn templates(&self) -> Option<PathBuf> {
        self.config.report.templates.as_ref().map(|dir| self.config.base_dir.join(dir))
    }
}

/// The config file to use: `--config`, else the first of [`CONFIG_LOCATIONS`] that exists in
/// `cwd` when no project paths were given (announced on stderr), else none.
pub(crate) fn find_config(explicit: Option<&Path>, paths: &[PathBuf], samples: bool, cwd: &Path) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_path_buf());
    }
    if !paths.is_empty() || samples {
        return None;
    }
    let found = CONFIG_LOCATIONS.iter().map(PathBuf::from).find(|p| cwd.join(p).is_file())?;
    errln!("fcorr: using {} (found in the current directory; --config chooses another)", found.display());
    Some(found)
}

/// True when `cwd` holds one of [`CONFIG_LOCATIONS`].
pub(crate) fn has_config(cwd: &Path) -> bool {
    CONFIG_LOCATIONS.iter().any(|p| cwd.join(p).is_file())
}

/// What `fcorr run` and `fcorr ci` ask of the pipeline: where the suites come from, the gates
/// and outputs, and the command-line overrides for planning. Commands build it from their own
/// arguments, so the pipeline knows no command.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunOptions {
    /// Project directories to run (each one suite); without them, the config's suites.
    pub(crate) paths: Vec<PathBuf>,
    /// `--config`.
    pub(crate) config: Option<PathBuf>,
    /// `--samples DIR` and `--sdk`, with the planner of that layout (the command names it).
    pub(crate) samples: Option<Samples>,
    /// `--fail-on` (`None`: the config's gates).
    pub(crate) fail_on: Option<Vec<Gate>>,
    /// `--out`, `-j`.
    pub(crate) out: Option<PathBuf>,
    pub(crate) jobs: Option<usize>,
    /// `--rerun-failed RESULTS`.
    pub(crate) rerun_failed: Option<PathBuf>,
    /// Settings that override the config file (`--shard` among them).
    pub(crate) overrides: Overrides,
}

/// `--samples DIR`: a directory layout whose every sample is one suite, planned by the kind that
/// owns the layout (the command hands its planner in, so the pipeline names no kind).
#[derive(Debug, Clone)]
pub(crate) struct Samples {
    pub(crate) dir: PathBuf,
    /// `--sdk`: only this SDK's samples.
    pub(crate) sdk: Option<String>,
    pub(crate) plan: SamplesPlanner,
}

/// Plans every sample under a directory (`dir`, `sdk`) as one suite each.
pub(crate) type SamplesPlanner =
    fn(&Config, &Path, Option<&str>, &Overrides) -> Result<Vec<plan::SuitePlan>, PlanError>;

/// Loads config, plans suites and resolves the output directory; fails fast on bad input,
/// before anything runs.
pub(crate) fn prepare(args: &RunOptions) -> Result<Prepared, FcorrError> {
    prepare_with(args, &|_, _, _| Ok(None))
}

/// Suites the command line adds to the config's (`fcorr ci --files`), built from the current
/// directory, the output directory and the gates once those are known. `Some(empty)`: asked for
/// and none found (already warned about), so an otherwise empty plan is not an error.
pub(crate) type ExtraSuites<'a> = &'a dyn Fn(&Path, &Path, &[Gate]) -> Result<Option<Vec<SuiteConfig>>, FcorrError>;

/// [`prepare`] with suites added from the command line; they are planned like the config's.
pub(crate) fn prepare_with(args: &RunOptions, extra: ExtraSuites<'_>) -> Result<Prepared, FcorrError> {
    let cwd = std::env::current_dir().map_err(FcorrError::Cwd)?;
    let config = match find_config(args.config.as_deref(), &args.paths, args.samples.is_some(), &cwd) {
        Some(path) => Config::load(&path, &KINDS)?,
        None => Config { base_dir: PathBuf::from("."), ..Config::default() },
    };
    protect_secrets(&config.secret_vars);
    let gates = match &args.fail_on {
        Some(gates) => gates.clone(),
        None => Gate::parse_list(&config.gate.fail_on).map_err(|e| config_error(&config, "gate.fail-on", e))?,
    };
    if let Some(dir) = &config.report.templates
        && !config.base_dir.join(dir).is_dir()
    {
        return Err(ConfigError::new(
            config.source.as_deref().unwrap_or(Path::new("fcorr.toml")),
            config.spans.at("report.templates"),
            format!(
                "`templates`: {} is not a directory (paths are relative to the config file)",
                config.base_dir.join(dir).display()
            ),
        )
        .into());
    }
    let overrides = &args.overrides;
    let out_dir = match (&args.out, &config.run.out) {
        (Some(out), _) => cwd.join(out),
        (None, Some(out)) => cwd.join(&config.base_dir).join(out),
        (None, None) => cwd.join("fcorr-out"),
    };
    let extra = extra(&cwd, &out_dir, &gates)?;
    let plans = match &args.samples {
        Some(samples) => (samples.plan)(&config, &samples.dir, samples.sdk.as_deref(), overrides)?,
        // Only added suites: no project in the current directory is detected and run.
        None if extra.is_some() && args.paths.is_empty() && config.suites.is_empty() => Vec::new(),
        None => plan::plan(&config, &args.paths, overrides, &KINDS)?,
    };
    let plans = plan::add_suites(plans, &config, extra.as_deref().unwrap_or_default(), &cwd, overrides, &KINDS)?;
    let shard_plan = plan::shard_plan(&plans, overrides.shard, &config.hash());
    let plans = plan::select_suites(plans, overrides.shard);
    let plans = match &args.rerun_failed {
        Some(path) => rerun_failed(plans, &report::load_results(&cwd.join(path))?)?,
        None => plans,
    };
    let jobs = args
        .jobs
        .or(config.run.jobs)
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2));
    let exec = ExecContext { out_dir: out_dir.clone(), cache_dir: cache_dir(), jobs, grace: process::DEFAULT_GRACE };
    let lists = plans.iter().map(|p| crate::quarantine::SuiteList {
        id: &p.id,
        name: &p.name,
        entries: &p.quarantine,
        line: p.origin.as_ref().map_or(0, |o| o.line),
    });
    let quarantine = crate::quarantine::Quarantine::load(&config, lists)?;
    let select = overrides.select.clone();
    Ok(Prepared { config, plans, out_dir, gates, exec, shard: overrides.shard, shard_plan, quarantine, select })
}

/// `--rerun-failed`: keeps the planned suites that failed in `earlier`, each narrowed by its
/// kind to what failed there ([`plan::Runner::rerun`]); suites that passed, or whose kind cannot
/// rerun part of a suite, do not run.
fn rerun_failed(plans: Vec<plan::SuitePlan>, earlier: &Run) -> Result<Vec<plan::SuitePlan>, FcorrError> {
    let mut kept = Vec::new();
    for mut plan in plans {
        let Some(before) = earlier.suites.iter().find(|s| s.id == plan.id) else { continue };
        if before.status == SuiteStatus::Passed {
            continue;
        }
        let Some(narrowed) = plan.runner.rerun(&plan, before, &earlier.started_at) else { continue };
        plan.settings = narrowed;
        kept.push(plan);
    }
    if kept.is_empty() {
        return Err(FcorrError::Usage(
            "--rerun-failed: no project suite of this configuration failed in that results.json: nothing to rerun"
                .into(),
        ));
    }
    Ok(kept)
}

/// Protects the secrets a config names (`secret_vars`) and the tokens fcorr holds, right after
/// the config is read and before anything runs: from here on they are withheld from every child
/// process and redacted from everything fcorr writes, and inside Actions the configured ones are
/// registered with `::add-mask::`. A value too short to redact is named in a warning.
pub(crate) fn protect_secrets(secret_vars: &[String]) {
    let found = crate::secrets::register(secret_vars);
    crate::publish::guard::mask(&found.values);
    for name in &found.too_short {
        crate::warnings::warn(format!(
            "the secret in {name} is shorter than {} characters: it is withheld from tests and masked, \
             but not replaced by *** in reports (that would mangle them)",
            crate::secrets::MIN_REDACTED_LEN
        ));
    }
}

/// A usage-style error about a config value, placed at its line when it came from a file.
fn config_error(config: &Config, key: &str, error: FcorrError) -> FcorrError {
    match &config.source {
        Some(file) => ConfigError::new(file, config.spans.at(key), error.to_string()).into(),
        None => error,
    }
}

pub(crate) use crate::execute::cache_dir;

/// From here on a stop signal (Ctrl-C, SIGTERM) cancels the run: suites stop, the results so
/// far are written, and the exit code is 128 + the signal ([`finish`]).
pub(crate) fn cancel_on_signal() {
    process::cancel_on_signal();
}

/// Executes prepared suites and assembles the run (not yet judged, no reports).
pub(crate) fn execute(prepared: &Prepared, progress: terminal::ProgressMode) -> Run {
    let started = time::OffsetDateTime::now_utc();
    let sink = terminal::Progress::new(progress);
    let mut suites = crate::runners::run_suites(&prepared.plans, &prepared.exec, &sink);
    if let Some(select) = &prepared.select {
        selected_nothing(&mut suites, select);
    }
    if let Some(shard) = prepared.shard {
        for (suite, plan) in suites.iter_mut().zip(&prepared.plans) {
            suite.shard = Some(shard.to_string());
            suite.split_by_item = plan.runner.splits_items();
        }
    }
    let git = std::env::current_dir().ok().and_then(|d| crate::git::info(&d));
    let mut run = Run::assemble(suites, started, Some(prepared.config.hash()), git);
    run.shard = prepared.shard_plan.clone();
    // The suites say what they were doing when the signal came; the run says which signal.
    run.interrupted = crate::execute::stop_signal_name();
    prepared.quarantine.mark(&mut run);
    run
}

/// A graded suite (`--select` picks their tests) left with no test by `--select` is an input
/// error naming the selection: "the test tool collected no tests" made a typo in a CI
/// `--select` look like an empty bank.
fn selected_nothing(suites: &mut [crate::model::Suite], select: &str) {
    use crate::model::{CaseShape, SuiteError, SuiteErrorKind, SuiteStatus};
    for suite in suites.iter_mut() {
        if suite.kind.shape() == CaseShape::Graded && suite.status == SuiteStatus::NoTests && suite.cases.is_empty() {
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError {
                kind: SuiteErrorKind::Input,
                message: format!("--select `{select}` matched no test of {}", suite.name),
                hint: Some("check the test id, `topic:NAME` or `bank:NAME` against the suite's bank file".into()),
            });
        }
    }
}

/// The tail every command runs once it has its results (`run`, `ci`, `import`, `merge`): the
/// timing lists (slowest cases, slowdowns against the baseline), the comparison with the
/// baseline and the history carried forward by this run (from the baseline's history, else from
/// `past`), then the verdict, judged once, after the comparison the regression gate needs.
pub(crate) fn conclude(
    run: &mut Run,
    baseline: Option<(Run, crate::compare::BaselineInfo)>,
    past: crate::history::Past,
    timing: &TimingSettings,
    judge: impl FnOnce(&Run) -> Verdict,
) {
    crate::timing::attach(run, baseline.as_ref().map(|(base, _)| base), timing);
    let past = match baseline {
        Some((base, info)) => {
            let comparison = crate::compare::compare(run, &base, info);
            // Said on the terminal and kept with the run's warnings, not only in the comment.
            for caution in comparison.cautions() {
                crate::warnings::warn(caution);
            }
            run.comparison = Some(comparison);
            // Last: the history takes the baseline's case ids and frees the rest as it goes.
            crate::history::Past::of_baseline(base)
        }
        None => past,
    };
    crate::history::record(run, past);
    // Every warning given so far (planning, the baseline lookup, the suites, the history) is the
    // run's: the reports written next and the annotations show the list the terminal showed.
    run.warnings.extend(crate::warnings::take());
    run.verdict = judge(run);
}

/// The verdict on a run of prepared suites, from the prepared gates (a shard's run is judged
/// as a part: emptiness waits for the merge).
pub(crate) fn verdict(run: &Run, prepared: &Prepared) -> Verdict {
    let tolerance = prepared.config.gate.regression_tolerance;
    match prepared.shard {
        Some(_) => crate::shard::judge(run, &prepared.gates, tolerance),
        None => gate::judge(run, &prepared.gates, tolerance),
    }
}

/// Writes reports for a finished run; one that cannot be written is a harness error (exit 3).
pub(crate) fn write_reports(
    run: &Run,
    out_dir: &Path,
    formats: &[report::Format],
    env: &ReportEnv,
) -> Result<Vec<PathBuf>, FcorrError> {
    report::write_required(run, env, out_dir, formats).map(|(written, _)| written)
}

/// With `[report] results-folder`, keeps this run's results and report there under dated names.
pub(crate) fn keep_dated(run: &Run, prepared: &Prepared) {
    if let Some(folder) = &prepared.config.report.results_folder {
        let folder = prepared.config.base_dir.join(folder);
        if let Err(problem) = crate::report::results_folder::keep(&prepared.out_dir, &folder, &run.started_at) {
            crate::warnings::warn(format!("results folder: {problem}"));
        }
    }
}

/// The exit code of a judged run: 128 + the signal when a stop signal interrupted it (130 for
/// Ctrl-C, 143 for SIGTERM), else the verdict's.
pub(crate) fn finish(run: &Run) -> i32 {
    let cancelled = run.suites.iter().any(|s| s.status == SuiteStatus::Cancelled);
    if let Some(signal) = process::stop_signal() {
        let name = process::signal_name(signal).unwrap_or("a signal");
        errln!("fcorr: interrupted by {name}; results so far were written");
        return process::signal_exit_code(signal);
    }
    if process::is_cancelled() || cancelled {
        errln!("fcorr: interrupted; results so far were written");
        return 130;
    }
    run.verdict.outcome.exit_code()
}
