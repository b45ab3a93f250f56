//! `kind = "import"`: test reports another tool wrote (JUnit, CTRF, TAP...), read as one suite.
//! No command runs; the same truthfulness guards as a project's test phase apply.

use serde::{Deserialize, Serialize};

use crate::collect::ReportSpec;
use crate::config::SuiteSite;
use crate::ecosystems::CollectContext;
use crate::errors::{ConfigError, PlanError};
use crate::execute::process::CommandOutcome;
use crate::model::{Suite, SuiteKind};
use crate::plan::SuitePlan;
use crate::runners::{PlanContext, RunContext, SuiteRunner};

/// The import runner.
pub(crate) struct Import;

/// An import suite's own keys. Globs are relative to the suite's `path` (default: the config
/// file's directory).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct ImportConfig {
    /// Report files or globs.
    pub reports: Vec<String>,
    /// Format of `reports`; detected from content when unset.
    pub report_format: Option<String>,
}

/// An import suite, resolved.
#[derive(Debug, Clone)]
pub(crate) struct ImportPlan {
    pub reports: Vec<ReportSpec>,
}

impl SuiteRunner for Import {
    type Config = ImportConfig;
    type Plan = ImportPlan;

    fn name(&self) -> &'static str {
        "import"
    }

    fn suite_kind(&self) -> SuiteKind {
        SuiteKind::Import
    }

    fn about(&self) -> &'static str {
        "reports another tool wrote (`reports = [globs]`), read as one suite; nothing runs"
    }

    fn validate(&self, config: &ImportConfig, site: &SuiteSite<'_>) -> Result<(), ConfigError> {
        if config.reports.is_empty() {
            return Err(site.error("reports", "import suites need `reports = [\"glob\", ...]`"));
        }
        crate::runners::check_reports(&config.reports, config.report_format.as_deref(), site)
    }

    fn plan(&self, config: ImportConfig, _suite: &SuitePlan, _ctx: &PlanContext<'_>) -> Result<ImportPlan, PlanError> {
        let format = config.report_format;
        Ok(ImportPlan {
            reports: config.reports.into_iter().map(|pattern| ReportSpec { pattern, format: format.clone() }).collect(),
        })
    }

    fn run(&self, suite: &SuitePlan, plan: &ImportPlan, run: &RunContext<'_>) -> Suite {
        let mut result = crate::runners::new_suite(suite);
        let outcome = CommandOutcome::none_ran();
        let ctx = CollectContext {
            root: &suite.root,
            work_dir: &suite.root,
            reports: &plan.reports,
            outcome: &outcome,
            started: None,
        };
        // Never fcorr's own output: other suites write their reports there during the run.
        let collected = crate::ecosystems::collect_import(&ctx, &run.exec.out_dir);
        crate::execute::apply_collected(&mut result, collected, None);
        result
    }
}
