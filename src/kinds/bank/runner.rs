//! `kind = "bank"`: a graded test bank (100-point scoring) run through one of the bank mechanisms
//! (`semantic`, `state`, `pattern`, `always`), reaching the system under test through the SUT
//! adapters. The scoring, expectations and mechanisms live in `crate::kinds::bank`.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::{Origin, SuiteSite};
use crate::errors::{ConfigError, PlanError};
use crate::events::Event;
use crate::kinds::bank::run::{BankSettings, run_bank};
use crate::kinds::bank::select::{Selection, default_prefixes};
use crate::kinds::bank::{MechanismSpec, registration};
use crate::model::{SuiteError, SuiteErrorKind, SuiteKind, SuiteStatus};
use crate::plan::SuitePlan;
use crate::runners::{PlanContext, RunContext, SharedDefaults, SuiteRunner};
use crate::sut::config::{SutConfig, SutContext};

/// The bank runner.
pub(crate) struct Bank;

/// A bank suite's own keys.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct BankConfig {
    /// `semantic`, `state`, `pattern` or `always`.
    pub mechanism: String,
    /// The bank file (`bank_type`, `version`, `tests[]`), relative to the config file.
    pub bank: PathBuf,
    /// History directory (default: `history/` next to the bank file).
    pub history: Option<PathBuf>,
    /// Rules file for `state` and `pattern` (evaluated by fcorr; without it the SUT is asked).
    pub rules: Option<PathBuf>,
    /// How many ranked ids of a semantic answer count (default: all).
    pub top_k: Option<usize>,
    /// Seconds between calls to the system under test (default 1.25 for semantic, else 0).
    pub rate_limit: Option<f64>,
    /// Lowest score a test passes with (default 100).
    pub pass_mark: Option<u32>,
    /// Test-id prefix of this bank, for selecting one test by id (default by mechanism).
    pub prefix: Option<String>,
    /// Tests to run: `all` (default), `bank:NAME`, `topic:NAME`, or a test id. `--select` overrides.
    pub select: Option<String>,
    /// The system under test (`[suite.sut]`).
    pub sut: Option<SutConfig>,
    /// Command `fcorr calibrate` runs per test (`sh -c`); `--calibrator` overrides it.
    pub calibrator: Option<String>,
}

/// A bank suite, resolved.
#[derive(Debug)]
pub(crate) struct BankPlan {
    settings: BankSettings,
    sut: Option<SutConfig>,
    base_dir: PathBuf,
    /// (mechanism, prefix) of every bank suite kind, for id selection.
    prefixes: Vec<(String, String)>,
    /// `--no-cache`: ask the system under test even when a cached answer exists.
    no_cache: bool,
}

impl SuiteRunner for Bank {
    type Config = BankConfig;
    type Plan = BankPlan;

    fn name(&self) -> &'static str {
        "bank"
    }

    fn suite_kind(&self) -> SuiteKind {
        SuiteKind::Bank
    }

    fn about(&self) -> &'static str {
        "a graded test bank (semantic, state, pattern or always) scored on 100 points per test"
    }

    /// Banks grade their cases: the graded policy, a pass mark of 70 (below it the bank's health
    /// is POOR) and the mechanism's weight in the combined score.
    fn shared_defaults(&self, c: &BankConfig) -> Option<SharedDefaults> {
        let weight = registration(&c.mechanism).map_or(1.0, |r| r.weight);
        Some(SharedDefaults { weight, min_score: 70.0 })
    }

    fn validate(&self, c: &BankConfig, site: &SuiteSite<'_>) -> Result<(), ConfigError> {
        let m = registration(&c.mechanism).map_err(|e| site.error("mechanism", e.to_string()))?;
        if c.bank.as_os_str().is_empty() {
            return Err(site.error("mechanism", "bank suites need `bank = \"path/to/bank.json\"`".to_string()));
        }
        if !site.base_dir.join(&c.bank).is_file() {
            return Err(site.error("bank", format!("{}: no such file", c.bank.display())));
        }
        if let Some(rules) = &c.rules
            && !site.base_dir.join(rules).is_file()
        {
            return Err(site.error("rules", format!("{}: no such file", rules.display())));
        }
        let needs_sut = matches!(m.name, "semantic" | "always") || c.rules.is_none();
        if needs_sut && c.sut.is_none() {
            return Err(site.error(
                "mechanism",
                format!(
                    "a `{}` bank {} needs a system under test: add `[suite.sut]`",
                    m.name,
                    if c.rules.is_none() && !matches!(m.name, "semantic" | "always") { "without `rules`" } else { "" }
                ),
            ));
        }
        if let Some(r) = c.rate_limit
            && !(r.is_finite() && (0.0..1e6).contains(&r))
        {
            return Err(site.error("rate-limit", format!("{r} is not a number of seconds")));
        }
        if c.top_k == Some(0) {
            return Err(
                site.error("top-k", "`top-k` must be at least 1 (leave it out to count every ranked id)".to_string())
            );
        }
        if c.pass_mark.is_some_and(|p| p > 100) {
            return Err(site.error("pass-mark", "must be between 0 and 100".to_string()));
        }
        Ok(())
    }

    fn plan(&self, c: BankConfig, suite: &SuitePlan, ctx: &PlanContext<'_>) -> Result<BankPlan, PlanError> {
        let mechanism = registration(&c.mechanism)
            .map_err(|e| PlanError::from(Origin::error(suite.origin.as_ref(), e.to_string())))?;
        let bank = ctx.base.join(&c.bank);
        let history = match &c.history {
            // Named on purpose, so a missing one is a wrong path, not a bank without history: read
            // as empty, every calibration and human override in the intended one would be ignored.
            // Checked here, not in `validate`: `fcorr calibrate --write` creates it.
            Some(h) if !ctx.base.join(h).is_dir() => {
                return Err(PlanError::from(Origin::error(
                    suite.origin.as_ref(),
                    format!(
                        "suite {}: history `{}` is not a directory; fix the path, or remove `history` to use \
                         history/ next to the bank file",
                        suite.name,
                        h.display()
                    ),
                )));
            }
            Some(h) => ctx.base.join(h),
            None => bank.parent().unwrap_or(ctx.base).join("history"),
        };
        // `--select` (or FCORR_BANK_SELECT, which clap reads into it) beats the suite's `select`.
        let select = ctx.overrides.select.clone().or(c.select.clone()).unwrap_or_default();
        let mut prefixes = default_prefixes();
        if let Some(prefix) = &c.prefix {
            prefixes.retain(|(m, _)| m != mechanism.name);
            prefixes.push((mechanism.name.to_string(), prefix.clone()));
        }
        Ok(BankPlan {
            settings: BankSettings {
                id: suite.id.clone(),
                name: suite.name.clone(),
                mechanism,
                bank,
                history,
                spec: MechanismSpec { rules: c.rules.map(|r| ctx.base.join(r)), top_k: c.top_k },
                rate_limit: c.rate_limit.map(Duration::from_secs_f64).unwrap_or(mechanism.rate_limit),
                pass_mark: c.pass_mark.unwrap_or(100),
                selection: Selection::parse(&select),
            },
            sut: c.sut,
            base_dir: ctx.base.to_path_buf(),
            prefixes,
            no_cache: ctx.overrides.no_cache,
        })
    }

    /// True for a bank suite the selection (`--select`, `FCORR_BANK_SELECT` or `select`) leaves
    /// out: another bank holds the selected test, or another bank was named.
    fn deselected(&self, suite: &SuitePlan, plan: &BankPlan) -> bool {
        let s = &plan.settings;
        !s.selection.covers_bank(&suite.name, s.mechanism.name, &plan.prefixes)
    }

    fn run(&self, suite: &SuitePlan, plan: &BankPlan, ctx: &RunContext<'_>) -> crate::model::Suite {
        let mut result = crate::runners::new_suite(suite);
        let fail = |mut result: crate::model::Suite, kind: SuiteErrorKind, message: String, hint: Option<String>| {
            result.status = SuiteStatus::Error;
            result.error = Some(SuiteError { kind, message, hint });
            result
        };
        if ctx.cancelled() {
            result.status = SuiteStatus::Cancelled;
            return result;
        }
        let settings = &plan.settings;
        let mut log_file = None;
        let sut = match &plan.sut {
            Some(config) => {
                let mut sut_ctx = SutContext::new(&plan.base_dir);
                sut_ctx.cache_dir = ctx.exec.cache_dir.join("sut-answers");
                sut_ctx.no_cache = plan.no_cache;
                // What the system under test prints on stderr, capped like every suite log.
                match crate::execute::suite_log(&ctx.exec.out_dir, &suite.id) {
                    Ok((log, file)) => {
                        sut_ctx.log = Some(log);
                        log_file = Some(file);
                    }
                    Err(message) => return fail(result, SuiteErrorKind::Harness, message, None),
                }
                match config.build(&sut_ctx) {
                    Ok(sut) => Some(sut),
                    Err(e) => return fail(result, SuiteErrorKind::Input, e.to_string(), None),
                }
            }
            None => None,
        };
        let events = ctx.events;
        let id = suite.id.clone();
        let mut progress = |p: &crate::kinds::bank::pace::Progress| {
            // The terminal shows this on the suite's spinner (TTY), and in CI only in heartbeats.
            events.emit(Event::CaseProgress { suite_id: id.clone(), text: p.line() });
        };
        match run_bank(settings, sut.as_deref(), &mut progress) {
            Ok(mut bank_suite) => {
                // Shared settings (weight unless configured, policy, threshold) come from the plan.
                bank_suite.critical = result.critical;
                bank_suite.score = result.score;
                bank_suite.weight = result.weight;
                bank_suite.path = result.path;
                bank_suite.log_file = log_file;
                bank_suite
            }
            Err(e) => fail(
                result,
                SuiteErrorKind::Input,
                e.to_string(),
                Some("fix the file named above; docs/banks.md describes bank, history and rules files".into()),
            ),
        }
    }
}
