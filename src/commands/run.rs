//! `fcorr run`: plan → execute → collect → score → report → gate, for projects on disk.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use crate::config::{Config, Timeouts};
use crate::errors::FcorrError;
use crate::execute::{self, ExecContext, process};
use crate::gate::{self, Gate};
use crate::model::{Policy, Run, SuiteStatus};
use crate::plan::{self, Overrides};
use crate::report::{self, ReportEnv, terminal};

/// Arguments of `fcorr run`.
#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    /// Project directories to run (each one suite). Without paths, the config's suites run.
    pub paths: Vec<PathBuf>,
    /// Configuration file.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Run the samples layout: DIR/<sdk>/<sample>/{expected,tests}/, each sample one suite.
    #[arg(long, value_name = "DIR", conflicts_with = "paths")]
    pub samples: Option<PathBuf>,
    /// With --samples: only this SDK; prints `Passed: x/y` and the pass rate.
    #[arg(long, requires = "samples")]
    pub sdk: Option<String>,
    /// Skip dependency installation.
    #[arg(long)]
    pub no_install: bool,
    /// Scoring policy for every suite: strict, pass-rate, weighted.
    #[arg(long, value_parser = parse_policy)]
    pub policy: Option<Policy>,
    /// Install phase timeout in seconds (default 600).
    #[arg(long, value_name = "SECS")]
    pub timeout_install: Option<u64>,
    /// Build phase timeout in seconds (default 600).
    #[arg(long, value_name = "SECS")]
    pub timeout_build: Option<u64>,
    /// Test phase timeout in seconds (default 600).
    #[arg(long, value_name = "SECS")]
    pub timeout_test: Option<u64>,
    /// Output directory (default: fcorr-out, or [run] out in the config).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print results.json to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Suites run at once (default: number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Only suites whose name contains this text or matches this glob.
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,
    /// Gates that fail the run (comma-separated): strict, critical, empty, regression, score<N, none.
    #[arg(long, value_name = "GATES")]
    pub fail_on: Vec<String>,
    /// Report formats to write (repeatable); default all.
    #[arg(long, value_name = "FORMAT")]
    pub format: Vec<String>,
    /// Colors: auto, always, never (NO_COLOR is respected in auto).
    #[arg(long, value_name = "WHEN")]
    pub color: Option<String>,
}

/// Parses a policy name.
pub fn parse_policy(text: &str) -> Result<Policy, String> {
    match text {
        "strict" => Ok(Policy::Strict),
        "pass-rate" | "passrate" => Ok(Policy::PassRate),
        "weighted" => Ok(Policy::Weighted),
        other => Err(format!("unknown policy `{other}` (strict, pass-rate, weighted)")),
    }
}

/// Everything `run` decided before executing, shared with `fcorr ci`.
pub struct Prepared {
    pub config: Config,
    pub plans: Vec<plan::SuitePlan>,
    pub out_dir: PathBuf,
    pub gates: Vec<Gate>,
    pub exec: ExecContext,
}

/// Loads config, plans suites and resolves the output directory; fails fast on bad input.
pub fn prepare(args: &RunArgs) -> Result<Prepared, FcorrError> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config { base_dir: PathBuf::from("."), ..Config::default() },
    };
    let gate_words = if args.fail_on.is_empty() { config.gate.fail_on.clone() } else { args.fail_on.clone() };
    let gates = Gate::parse_list(&gate_words)?;
    report::validate_formats(&args.format)?;
    if args.format.is_empty() && !config.report.formats.is_empty() {
        report::validate_formats(&config.report.formats)?;
    }
    let overrides = Overrides {
        policy: args.policy,
        no_install: args.no_install,
        timeouts: Timeouts { install: args.timeout_install, build: args.timeout_build, test: args.timeout_test },
        filter: args.filter.clone(),
    };
    let plans = match &args.samples {
        Some(dir) => crate::runners::project::plan_samples(&config, dir, args.sdk.as_deref(), &overrides)?,
        None => plan::plan(&config, &args.paths, &overrides)?,
    };
    let cwd =
        std::env::current_dir().map_err(|e| FcorrError::Harness(format!("cannot read the current directory: {e}")))?;
    let out_dir = match (&args.out, &config.run.out) {
        (Some(out), _) => cwd.join(out),
        (None, Some(out)) => cwd.join(&config.base_dir).join(out),
        (None, None) => cwd.join("fcorr-out"),
    };
    let jobs = args
        .jobs
        .or(config.run.jobs)
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2));
    if args.format.is_empty() {
        config.report.formats.retain(|f| !f.is_empty());
    }
    let exec = ExecContext { out_dir: out_dir.clone(), cache_dir: cache_dir(), jobs, grace: process::DEFAULT_GRACE };
    Ok(Prepared { config, plans, out_dir, gates, exec })
}

/// Where virtualenvs and other reusable installs live: `$FCORR_CACHE_DIR`, else the XDG cache.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("FCORR_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("fcorr");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".cache").join("fcorr");
    }
    std::env::temp_dir().join("fcorr-cache")
}

/// Executes prepared suites and returns the judged run (reports not yet written).
pub fn execute_prepared(prepared: &Prepared, progress: terminal::ProgressMode) -> Run {
    let started = time::OffsetDateTime::now_utc();
    let sink = terminal::Progress::new(progress);
    let suites = execute::run_suites(&prepared.plans, &prepared.exec, &sink);
    let git = std::env::current_dir().ok().and_then(|d| crate::git::info(&d));
    let mut run = Run::assemble(suites, started, Some(prepared.config.hash()), git);
    run.verdict = gate::judge(&run, &prepared.gates, prepared.config.gate.regression_tolerance);
    run
}

/// Writes reports for a finished run, printing problems as warnings.
pub fn write_reports(run: &Run, out_dir: &Path, formats: &[String], env: &ReportEnv) -> Vec<PathBuf> {
    let (written, problems) = report::write_all(run, env, out_dir, formats);
    for problem in problems {
        eprintln!("fcorr: warning: {problem}");
    }
    written
}

/// Gates and outputs of the commands that judge saved or imported results (`import`, `merge`).
#[derive(Debug, Args, Clone, Default)]
pub struct JudgeArgs {
    /// Gates that fail the run (comma-separated): strict, critical, empty, regression, score<N, none.
    #[arg(long, value_name = "GATES")]
    pub fail_on: Vec<String>,
    /// Output directory (default: fcorr-out).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Report formats to write (repeatable); default all.
    #[arg(long, value_name = "FORMAT")]
    pub format: Vec<String>,
    /// Print results.json to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Colors: auto, always, never (NO_COLOR is respected in auto).
    #[arg(long, value_name = "WHEN")]
    pub color: Option<String>,
}

impl JudgeArgs {
    /// The gates asked for (the default config's when none), with the formats checked too.
    pub fn gates(&self, defaults: &Config) -> Result<Vec<Gate>, FcorrError> {
        report::validate_formats(&self.format)?;
        let words = if self.fail_on.is_empty() { defaults.gate.fail_on.clone() } else { self.fail_on.clone() };
        Gate::parse_list(&words)
    }

    /// The output directory, relative to `cwd`.
    pub fn out_dir(&self, cwd: &Path) -> PathBuf {
        cwd.join(self.out.clone().unwrap_or_else(|| PathBuf::from("fcorr-out")))
    }

    /// Prints the finished run the way `--json` and `--color` ask.
    pub fn print(&self, run: &Run, written: &[PathBuf]) {
        print_results(run, written, self.json, terminal::use_color(self.color.as_deref()), "");
    }
}

/// Prints a finished run: `results.json` on stdout with `json`, else the table, `between` (extra
/// lines such as the samples pass rate), the verdict and where the reports are.
pub fn print_results(run: &Run, written: &[PathBuf], json: bool, color: bool, between: &str) {
    if json {
        // The model always serialises (plain data).
        println!("{}", serde_json::to_string_pretty(run).expect("run serialises"));
        return;
    }
    println!();
    print!("{}", terminal::render_table(run, color));
    print!("{between}");
    println!();
    println!("{}", terminal::render_verdict(run, color));
    if let Some(results) = written.first() {
        println!("reports: {}", results.parent().unwrap_or(Path::new(".")).display());
    }
}

/// `fcorr run`.
pub fn execute(args: RunArgs) -> Result<i32, FcorrError> {
    let prepared = prepare(&args)?;
    if let Err(e) = process::install_interrupt_handler() {
        eprintln!("fcorr: warning: {e}");
    }
    let mode = if args.json { terminal::ProgressMode::Quiet } else { terminal::ProgressMode::detect() };
    let run = execute_prepared(&prepared, mode);
    let formats = if args.format.is_empty() { prepared.config.report.formats.clone() } else { args.format.clone() };
    let env = ReportEnv { templates: prepared.config.report.templates.clone(), ..ReportEnv::default() };
    let written = write_reports(&run, &prepared.out_dir, &formats, &env);

    let mut between = String::new();
    if args.sdk.is_some() {
        let passed = run.suites.iter().filter(|s| s.score.met).count();
        let total = run.suites.len();
        let rate = if total > 0 { passed as f64 * 100.0 / total as f64 } else { 0.0 };
        between = format!("\nPassed: {passed}/{total}\nPass rate: {rate:.1}%\n");
    }
    print_results(&run, &written, args.json, terminal::use_color(args.color.as_deref()), &between);
    if process::is_cancelled() || run.suites.iter().any(|s| s.status == SuiteStatus::Cancelled) {
        eprintln!("fcorr: interrupted; results so far were written");
        return Ok(130);
    }
    Ok(run.verdict.outcome.exit_code())
}

/// Grace period override for tests (SIGTERM → SIGKILL).
pub fn with_grace(mut prepared: Prepared, grace: Duration) -> Prepared {
    prepared.exec.grace = grace;
    prepared
}
