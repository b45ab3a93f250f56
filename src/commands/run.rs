//! `fcorr run`: the pipeline (prepare → execute → judge → report), for the suites of fcorr.toml
//! or the projects named on the command line; the stages themselves are in [`crate::pipeline`].

use std::path::{Path, PathBuf};

use clap::Args;

use crate::config::{Config, Timeouts};
use crate::errors::FcorrError;
use crate::gate::{Gate, GateList};
use crate::model::{Policy, Run};
use crate::pipeline;
use crate::plan::Overrides;
use crate::report::{self, ReportEnv, terminal};

/// Arguments of `fcorr run`.
#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    /// Project directories to run (each one suite). Without paths: the suites of ./fcorr.toml
    /// (or ./.github/fcorr.toml) when there is one, else the project in the current directory.
    pub paths: Vec<PathBuf>,
    /// Configuration file (default: ./fcorr.toml, then ./.github/fcorr.toml, when no PATH is given).
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
    /// Scoring policy for every suite (graded: bank suites only).
    #[arg(long, value_name = "POLICY")]
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
    /// Bank suites: only this test id (its prefix picks the bank), `topic:NAME` or `bank:NAME`.
    #[arg(long, value_name = "SELECTION", env = "FCORR_BANK_SELECT")]
    pub select: Option<String>,
    /// Run shard K of N (1-based): project, import and bank suites whole, by a hash of their id;
    /// benchmark tasks and dataset-eval cases one by one, by a hash of suite id/item id.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::shard::Shard>,
    /// Call systems under test even when their answer cache has the answer (docs/sut.md).
    #[arg(long)]
    pub no_cache: bool,
    /// Gates that fail the run (comma-separated): strict, critical, empty, regression, score<N,
    /// score<N@SUT (one system of an eval suite), none (a run with cancelled suites fails anyway).
    #[arg(long, value_name = "GATES")]
    pub fail_on: Vec<GateList>,
    /// Report formats to write (repeatable). Default all; results.json is always written.
    #[arg(long, value_name = "FORMAT")]
    pub format: Vec<report::Format>,
    /// Colors (NO_COLOR is respected in auto).
    #[arg(long, value_name = "WHEN")]
    pub color: Option<terminal::Color>,
    /// Rerun failed tests up to N times after the test phase (project suites; overrides `retries`).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// What a test that passed only on a retry counts as (default pass-on-retry, shown as flaky).
    #[arg(long, value_name = "POLICY")]
    pub retries_policy: Option<crate::model::RetryPolicy>,
    /// Run only the tests that failed or errored in this saved results.json, per suite; `fcorr
    /// merge` lays the outcomes over the original run.
    #[arg(long, value_name = "RESULTS")]
    pub rerun_failed: Option<PathBuf>,
}

impl RunArgs {
    /// What the pipeline needs of these arguments; the flags that override the config file
    /// become planning's [`Overrides`].
    pub(crate) fn options(&self) -> pipeline::RunOptions {
        pipeline::RunOptions {
            paths: self.paths.clone(),
            config: self.config.clone(),
            samples: self.samples.clone().map(|dir| pipeline::Samples {
                dir,
                sdk: self.sdk.clone(),
                plan: crate::kinds::project::plan_samples,
            }),
            fail_on: gates(&self.fail_on),
            out: self.out.clone(),
            jobs: self.jobs,
            rerun_failed: self.rerun_failed.clone(),
            overrides: Overrides {
                policy: self.policy,
                no_install: self.no_install,
                timeouts: Timeouts {
                    install: self.timeout_install,
                    build: self.timeout_build,
                    test: self.timeout_test,
                },
                filter: self.filter.clone(),
                select: self.select.clone(),
                shard: self.shard,
                no_cache: self.no_cache,
                retries: self.retries,
                retries_policy: self.retries_policy,
            },
        }
    }
}

/// The gates `--fail-on` asks for; `None` when it is not given (the config's gates apply).
fn gates(lists: &[GateList]) -> Option<Vec<Gate>> {
    (!lists.is_empty()).then(|| lists.iter().flat_map(|list| list.0.iter().cloned()).collect())
}

/// Gates and outputs of the commands that judge saved or imported results (`import`, `merge`).
#[derive(Debug, Args, Clone, Default)]
pub struct JudgeArgs {
    /// Gates that fail the run (comma-separated): strict, critical, empty, regression, score<N,
    /// score<N@SUT (one system of an eval suite), none (a run with cancelled suites fails anyway).
    #[arg(long, value_name = "GATES")]
    pub fail_on: Vec<GateList>,
    /// Output directory (default: fcorr-out).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Report formats to write (repeatable). Default all; results.json is always written.
    #[arg(long, value_name = "FORMAT")]
    pub format: Vec<report::Format>,
    /// Print results.json to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Colors (NO_COLOR is respected in auto).
    #[arg(long, value_name = "WHEN")]
    pub color: Option<terminal::Color>,
}

impl JudgeArgs {
    /// The gates asked for (the default config's when none).
    pub fn gates(&self, defaults: &Config) -> Result<Vec<Gate>, FcorrError> {
        match gates(&self.fail_on) {
            Some(gates) => Ok(gates),
            None => Gate::parse_list(&defaults.gate.fail_on),
        }
    }

    /// The output directory, relative to `cwd`.
    pub fn out_dir(&self, cwd: &Path) -> PathBuf {
        cwd.join(self.out.clone().unwrap_or_else(|| PathBuf::from("fcorr-out")))
    }

    /// Prints the finished run the way `--json` and `--color` ask.
    pub fn print(&self, run: &Run, written: &[PathBuf]) {
        print_results(run, written, self.json, terminal::use_color(self.color), "");
    }
}

/// Prints a finished run: `results.json` on stdout with `json`, else the table, `between` (extra
/// lines such as the samples pass rate), the verdict and where the reports are.
pub fn print_results(run: &Run, written: &[PathBuf], json: bool, color: bool, between: &str) {
    if json {
        // Written as it is serialised, never held whole: a streamed run (`--stream`) reads its
        // cases back from disk here, which can fail (the reports on disk saw the same cases).
        struct Stdout;
        impl std::io::Write for Stdout {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                crate::console::out_bytes(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut out = std::io::BufWriter::with_capacity(1 << 16, Stdout);
        let printed = serde_json::to_writer_pretty(&mut out, run).map_err(std::io::Error::from);
        if let Err(e) = printed
            .and_then(|()| std::io::Write::write_all(&mut out, b"\n"))
            .and_then(|()| std::io::Write::flush(&mut out))
        {
            errln!("fcorr: error: results.json could not be printed whole: {e}");
        }
        return;
    }
    outln!();
    out_raw!("{}", terminal::render_table(run, color, terminal::output_width()));
    out!("{between}");
    outln!();
    outln_raw!("{}", terminal::render_verdict(run, color));
    if let Some(results) = written.first() {
        outln!("reports: {}", results.parent().unwrap_or(Path::new(".")).display());
    }
}

/// `fcorr run`: prepare → execute → judge → write reports → print → finish.
pub fn execute(args: RunArgs) -> Result<i32, FcorrError> {
    let mut options = args.options();
    let cwd = std::env::current_dir().map_err(FcorrError::Cwd)?;
    // Nothing named and no fcorr.toml here: the current directory is the project.
    if options.paths.is_empty() && options.config.is_none() && options.samples.is_none() && !pipeline::has_config(&cwd)
    {
        errln!("fcorr: no fcorr.toml here: running the project in the current directory");
        options.paths = vec![PathBuf::from(".")];
    }
    let prepared = pipeline::prepare(&options)?;
    crate::commands::shared::check_select(&prepared)?;
    // Until every report is written, the output directory's earlier reports are not this run's;
    // held to the end, so no other fcorr writes there meanwhile.
    let _writing = crate::report::in_progress::begin(&prepared.out_dir, "run")?;
    pipeline::cancel_on_signal();
    let mode = if args.json { terminal::ProgressMode::Quiet } else { terminal::ProgressMode::detect() };
    terminal::color_progress(args.color);
    let mut run = pipeline::execute(&prepared, mode);
    let timing = prepared.config.report.timing();
    pipeline::conclude(&mut run, None, Default::default(), &timing, |run| pipeline::verdict(run, &prepared));
    let env = prepared.config.report.apply_to(ReportEnv { templates: prepared.templates(), ..ReportEnv::default() });
    let written = pipeline::write_reports(&run, &prepared.out_dir, &prepared.formats(&args.format), &env)?;
    pipeline::keep_dated(&run, &prepared);

    let mut between = String::new();
    if args.sdk.is_some() {
        let passed = run.suites.iter().filter(|s| s.score.met).count();
        let total = run.suites.len();
        let rate = if total > 0 { passed as f64 * 100.0 / total as f64 } else { 0.0 };
        between = format!("\nPassed: {passed}/{total}\nPass rate: {rate:.1}%\n");
    }
    print_results(&run, &written, args.json, terminal::use_color(args.color), &between);
    Ok(pipeline::finish(&run))
}
