//! `kind = "echo"`, test builds only: a runner whose cases are written in the config, so tests
//! prove the seam end to end (config keys, validation with lines, planning, running, scoring)
//! with nothing but this file and one registration line. docs/architecture.md walks through it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::SuiteSite;
use crate::errors::{ConfigError, PlanError};
use crate::execute::Collected;
use crate::model::{Case, CaseStatus, Suite, SuiteKind, SuiteStatus};
use crate::plan::SuitePlan;
use crate::runners::{PlanContext, RunContext, SuiteRunner};

/// The echo runner.
pub(crate) struct Echo;

/// `cases = { name = "passed" | "failed" | "skipped" }`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct EchoConfig {
    pub cases: BTreeMap<String, String>,
}

/// The cases to report, with their statuses parsed.
#[derive(Debug)]
pub(crate) struct EchoPlan {
    cases: Vec<(String, CaseStatus)>,
}

fn status(word: &str) -> Option<CaseStatus> {
    match word {
        "passed" => Some(CaseStatus::Passed),
        "failed" => Some(CaseStatus::Failed),
        "skipped" => Some(CaseStatus::Skipped),
        _ => None,
    }
}

impl SuiteRunner for Echo {
    type Config = EchoConfig;
    type Plan = EchoPlan;

    fn name(&self) -> &'static str {
        "echo"
    }

    fn suite_kind(&self) -> SuiteKind {
        SuiteKind::Import
    }

    fn about(&self) -> &'static str {
        "test-only: cases and their statuses written in the config"
    }

    fn validate(&self, config: &EchoConfig, site: &SuiteSite<'_>) -> Result<(), ConfigError> {
        for (name, word) in &config.cases {
            if status(word).is_none() {
                return Err(site.error(&format!("cases.{name}"), format!("case `{name}`: unknown status `{word}`")));
            }
        }
        Ok(())
    }

    fn plan(&self, config: EchoConfig, _suite: &SuitePlan, _ctx: &PlanContext<'_>) -> Result<EchoPlan, PlanError> {
        // Validated when the config was read; an unknown word left over is an error case.
        let cases =
            config.cases.into_iter().map(|(name, word)| (name, status(&word).unwrap_or(CaseStatus::Error))).collect();
        Ok(EchoPlan { cases })
    }

    fn run(&self, suite: &SuitePlan, plan: &EchoPlan, ctx: &RunContext<'_>) -> Suite {
        let mut result = crate::runners::new_suite(suite);
        if ctx.cancelled() {
            result.status = SuiteStatus::Cancelled;
            return result;
        }
        let cases = plan
            .cases
            .iter()
            .map(|(name, status)| Case { name: name.clone().into(), status: *status, ..Case::default() })
            .collect();
        let collected = Collected { cases, ran: !plan.cases.is_empty(), ..Collected::nothing() };
        crate::execute::apply_collected(&mut result, collected, None);
        result
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::Config;
    use crate::events::NullSink;
    use crate::execute::ExecContext;
    use crate::model::{CaseStatus, SuiteStatus};
    use crate::plan::{Overrides, plan};
    use crate::runners::run_suites;

    fn exec() -> ExecContext {
        let dir = std::env::temp_dir().join("fcorr-echo-test");
        ExecContext { out_dir: dir.clone(), cache_dir: dir, jobs: 2, grace: std::time::Duration::from_millis(10) }
    }

    #[test]
    fn a_runner_added_in_one_file_runs_and_is_scored() {
        let text = "[[suite]]\nname = \"e\"\nkind = \"echo\"\npolicy = \"pass-rate\"\ncases = { a = \"passed\", b = \"failed\" }\n\n[[suite]]\nname = \"p\"\nkind = \"echo\"\ncases = { c = \"passed\" }\n";
        let config = Config::parse(text, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap();
        let plans = plan(&config, &[], &Overrides::default(), &crate::kinds::KINDS).unwrap();
        let suites = run_suites(&plans, &exec(), &NullSink);
        assert_eq!(suites[0].status, SuiteStatus::Failed);
        assert_eq!(suites[0].score.value, 50.0);
        assert_eq!(suites[0].cases.iter().filter(|c| c.status == CaseStatus::Passed).count(), 1);
        assert_eq!(suites[1].status, SuiteStatus::Passed);
        assert_eq!(suites[1].score.value, 100.0);
    }

    #[test]
    fn its_keys_are_checked_with_lines() {
        let unknown = "[[suite]]\nkind = \"echo\"\ncases = {}\ncommands = { test = \"x\" }\n";
        let err = Config::parse(unknown, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("line 4, column 1") && err.contains("commands"), "{err}");
        let bad = "[[suite]]\nkind = \"echo\"\n\ncases = { a = \"passed\", b = \"maybe\" }\n";
        let err = Config::parse(bad, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("line 4") && err.contains("unknown status `maybe`"), "{err}");
    }

    #[test]
    fn it_is_listed_from_the_registry() {
        assert!(crate::config::KindKeys::names(&crate::kinds::KINDS).contains(&"echo"));
        assert!(crate::kinds::kinds_help().contains("echo"));
    }
}
