//! `fcorr calibrate BANK`: runs a calibrator command per test of a bank, prints what would change
//! (a dry run by default) and, with `--write`, records the changes as one new dated history file.
//! The work itself is in [`crate::kinds::bank::calibrate`]; this module resolves the bank and the flags.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::config::Config;
use crate::errors::FcorrError;
use crate::kinds::bank::BankError;
use crate::kinds::bank::calibrate::{Proposal, Scope, ask, history_file, render_diff, write_new};
use crate::kinds::bank::expectations::{load_bank, load_history};
use crate::kinds::bank::runner::BankConfig;
use crate::sut::{SutConfig, SutContext};

/// `--scope`: which tests of the bank are calibrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeArg {
    /// Every test.
    Full,
    /// The tests naming any `--added-entities`.
    Affected,
    /// The `--test` ids.
    Single,
}

/// Arguments of `fcorr calibrate`.
#[derive(Debug, Args, Clone)]
pub struct CalibrateArgs {
    /// A bank suite's name in fcorr.toml, or the path of a bank file.
    pub bank: String,
    /// Configuration file (default: ./fcorr.toml, then ./.github/fcorr.toml).
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Calibrator command, run with `sh -c` once per test: the test and its current expectations
    /// as JSON on stdin, the updated expectations and reasoning as JSON on stdout
    /// (default: the suite's `calibrator`).
    #[arg(long, value_name = "COMMAND")]
    pub calibrator: Option<String>,
    /// Which tests: every one, those naming any `--added-entities`, or the `--test` ids.
    #[arg(long, value_enum, default_value_t = ScopeArg::Full)]
    pub scope: ScopeArg,
    /// With `--scope single`: test ids (repeatable or comma-separated).
    #[arg(long = "test", value_name = "ID", value_delimiter = ',')]
    pub tests: Vec<String>,
    /// With `--scope affected`: entity ids added to the system under test.
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub added_entities: Vec<String>,
    /// Print the changes without writing anything (the default).
    #[arg(long, conflicts_with = "write")]
    pub dry_run: bool,
    /// Create one new history file holding the changes (earlier files are never touched).
    #[arg(long)]
    pub write: bool,
    /// History directory (default: the suite's `history`, or `history/` next to the bank file).
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,
    /// Why calibration ran, recorded in the history file (e.g. `kb_entity_added`).
    #[arg(long, value_name = "TEXT")]
    pub trigger: Option<String>,
    /// Version of the system's knowledge, recorded in the history file.
    #[arg(long, value_name = "TEXT")]
    pub kb_version: Option<String>,
    /// Seconds a calibrator call may take before it is killed.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub timeout: f64,
}

/// The bank file, its history directory, the calibrator and the directory commands run in.
struct Target {
    bank: PathBuf,
    history: PathBuf,
    calibrator: Option<String>,
    base: PathBuf,
    /// The secrets the config names (none without a config).
    secret_vars: Vec<String>,
}

fn resolve(args: &CalibrateArgs, cwd: &Path) -> Result<Target, FcorrError> {
    let as_file = cwd.join(&args.bank);
    if as_file.is_file() {
        let history = args
            .history
            .clone()
            .map(|h| cwd.join(h))
            .unwrap_or_else(|| as_file.parent().map_or_else(|| cwd.join("history"), |p| p.join("history")));
        return Ok(Target {
            bank: as_file,
            history,
            calibrator: None,
            base: cwd.to_path_buf(),
            secret_vars: Vec::new(),
        });
    }
    let Some(path) = crate::pipeline::find_config(args.config.as_deref(), &[], false, cwd) else {
        return Err(FcorrError::Usage(format!(
            "`{}` is neither a bank file nor, without fcorr.toml here, a suite name; pass --config or a bank file",
            args.bank
        )));
    };
    let config = Config::load(&cwd.join(&path), &crate::kinds::KINDS)?;
    let banks: Vec<_> = config.suites.iter().filter(|s| s.kind == "bank").collect();
    let Some(suite) = banks.iter().find(|s| s.name.as_deref() == Some(args.bank.as_str())) else {
        let names: Vec<&str> = banks.iter().filter_map(|s| s.name.as_deref()).collect();
        return Err(FcorrError::Usage(format!(
            "{}: no bank suite named `{}` (bank suites: {})",
            path.display(),
            args.bank,
            if names.is_empty() { "none".to_string() } else { names.join(", ") }
        )));
    };
    // Read and checked when the config loaded, so this reads back.
    let settings: BankConfig = suite.settings.clone().try_into().map_err(|e: toml::de::Error| FcorrError::Config {
        file: path.clone(),
        message: format!("bank suite `{}`: {}", args.bank, e.message()),
        source: Some(Box::new(e)),
    })?;
    let base = crate::plan::absolute(cwd, &config.base_dir);
    let bank = base.join(&settings.bank);
    let history = match (&args.history, &settings.history) {
        (Some(h), _) => cwd.join(h),
        (None, Some(h)) => base.join(h),
        (None, None) => bank.parent().unwrap_or(&base).join("history"),
    };
    Ok(Target { bank, history, calibrator: settings.calibrator, base, secret_vars: config.secret_vars })
}

fn bank_error(e: BankError) -> FcorrError {
    match e {
        BankError::Input { file, message } => FcorrError::Input { file, message, source: None },
        BankError::Setting(message) => FcorrError::Usage(message),
        // fcorr could not write its own file (a full disk): exit 3, with the path and OS error.
        BankError::Write(e) => FcorrError::harness_because(e.to_string(), e),
    }
}

/// Runs `fcorr calibrate`; returns the exit code (3 when a calibrator call failed).
pub fn execute(args: CalibrateArgs) -> Result<i32, FcorrError> {
    let cwd = std::env::current_dir().map_err(FcorrError::Cwd)?;
    let scope = match args.scope {
        ScopeArg::Affected if args.added_entities.is_empty() => {
            return Err(FcorrError::Usage("--scope affected needs --added-entities ID[,ID…]".into()));
        }
        ScopeArg::Affected => Scope::Affected(args.added_entities.clone()),
        ScopeArg::Single if args.tests.is_empty() => {
            return Err(FcorrError::Usage("--scope single needs --test ID[,ID…]".into()));
        }
        ScopeArg::Single => Scope::Single(args.tests.clone()),
        ScopeArg::Full => Scope::Full,
    };
    let target = resolve(&args, &cwd)?;
    // The calibrator is a child process like any other: the config's secrets stay out of it.
    crate::pipeline::protect_secrets(&target.secret_vars);
    let Some(command) = args.calibrator.clone().or(target.calibrator.clone()) else {
        return Err(FcorrError::Usage(
            "no calibrator: pass --calibrator COMMAND or set `calibrator` on the bank suite".into(),
        ));
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(FcorrError::Usage(format!("--timeout {}: expected a positive number of seconds", args.timeout)));
    }
    // The calibrator is a command SUT: process group, timeout and capped output come with it.
    let sut_config: SutConfig = serde_json::from_value(serde_json::json!({
        "type": "command", "command": command, "answer": "text", "retries": 0, "timeout": args.timeout,
    }))
    .map_err(|e| FcorrError::usage_because("calibrator: its settings cannot be read", e))?;
    let calibrator = sut_config
        .build(&SutContext::new(&target.base))
        .map_err(|e| FcorrError::usage_because("calibrator: cannot be used as a system under test", e))?;
    // Ctrl-C or SIGTERM stops the calibrator calls; nothing is written (exit 128 + signal).
    crate::execute::process::cancel_on_signal();

    let bank = load_bank(&target.bank).map_err(bank_error)?;
    let history = load_history(&target.history, &bank).map_err(bank_error)?;
    let tests = scope.select(&bank, &history).map_err(bank_error)?;
    let mut proposals: Vec<Proposal> = Vec::with_capacity(tests.len());
    let mut failures = Vec::new();
    for (i, test) in tests.iter().enumerate() {
        errln!("[{}/{}] {}", i + 1, tests.len(), test.test_id);
        match ask(calibrator.as_ref(), test, &history.resolve(test), &args.added_entities) {
            Ok(p) => proposals.push(p),
            Err(e) => failures.push(format!("{}: {e}", test.test_id)),
        }
    }
    out!("{}", render_diff(&proposals));
    if !failures.is_empty() {
        for f in &failures {
            errln!("fcorr: calibrator failed for {f}");
        }
        errln!("fcorr: {} calibrator call(s) failed; nothing written", failures.len());
        return Ok(3);
    }
    let changed = proposals.iter().filter(|p| p.changed()).count();
    if !args.write {
        outln!("dry run: nothing written (--write records the changes in a new file in {})", target.history.display());
        return Ok(0);
    }
    if changed == 0 {
        outln!("no changes: nothing written");
        return Ok(0);
    }
    let now = time::OffsetDateTime::now_utc();
    let file = history_file(&proposals, now, args.trigger.clone(), args.kb_version.clone());
    let path = write_new(&target.history, &file, now).map_err(bank_error)?;
    outln!("wrote {} ({changed} changed, {} unchanged)", path.display(), proposals.len() - changed);
    Ok(0)
}
