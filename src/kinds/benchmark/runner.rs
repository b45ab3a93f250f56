//! `kind = "benchmark"` on the suite-runner seam: reads the kind's keys, checks them with their
//! lines, resolves them with the run's defaults and flags, and runs the suite.

use crate::config::{Origin, SuiteSite};
use crate::errors::{ConfigError, PlanError};
use crate::model::{Suite, SuiteKind, SuiteStatus};
use crate::plan::SuitePlan;
use crate::runners::{ItemsError, PlanContext, RunContext, SuiteItem, SuiteRunner};

use super::{BenchmarkConfig, BenchmarkPlan};

/// The benchmark runner.
pub(crate) struct Benchmark;

impl SuiteRunner for Benchmark {
    type Config = BenchmarkConfig;
    type Plan = BenchmarkPlan;

    fn name(&self) -> &'static str {
        "benchmark"
    }

    fn suite_kind(&self) -> SuiteKind {
        SuiteKind::Benchmark
    }

    /// Each shard runs its own slice of the items (`Shard::keeps_item` in planning).
    fn splits_items(&self) -> bool {
        true
    }

    /// The tasks file the items are cut from.
    fn inputs(&self, plan: &BenchmarkPlan) -> Vec<std::path::PathBuf> {
        vec![plan.tasks.clone()]
    }

    fn about(&self) -> &'static str {
        "SWE-bench-style tasks: an executor (or a patch) changes a scratch copy, the task's tests grade it"
    }

    fn validate(&self, config: &BenchmarkConfig, site: &SuiteSite<'_>) -> Result<(), ConfigError> {
        let tasks = match (&config.tasks, site.path) {
            (Some(tasks), _) => tasks.as_path(),
            (None, Some(path)) => path,
            (None, None) => {
                return Err(
                    site.error("tasks", "a benchmark suite needs `tasks` (or `path`): a tasks file or directory")
                );
            }
        };
        let key = if config.tasks.is_some() { "tasks" } else { "path" };
        if !site.base_dir.join(tasks).exists() {
            return Err(site.error(key, format!("{key}: {} does not exist", tasks.display())));
        }
        if config.executor.as_deref().is_some_and(|e| e.trim().is_empty()) {
            return Err(site.error("executor", "executor is empty; remove it or give a command"));
        }
        if config.executor_timeout == Some(0) || config.test_timeout == Some(0) {
            let key = if config.executor_timeout == Some(0) { "executor-timeout" } else { "test-timeout" };
            return Err(site.error(key, format!("{key} must be at least 1 second")));
        }
        // The keys the task tests share with project suites are checked as a project suite's are,
        // so a typo stops the run here instead of failing every task after its executor ran.
        crate::kinds::project::forced_ecosystem(config.runner.as_deref(), site)?;
        crate::runners::check_reports(&config.reports, None, site)?;
        // The rest (prices, job counts) is checked where it is resolved, with the same words.
        config.resolve(site.base_dir, tasks).map(|_| ()).map_err(|e| site.error(e.key(), e.to_string()))
    }

    fn plan(
        &self,
        config: BenchmarkConfig,
        suite: &SuitePlan,
        ctx: &PlanContext<'_>,
    ) -> Result<BenchmarkPlan, PlanError> {
        let run = &ctx.config.run;
        let mut config = config;
        let mut env = run.env.clone();
        env.extend(std::mem::take(&mut config.env));
        config.env = env;
        config.install = Some(!ctx.overrides.no_install && config.install.unwrap_or(run.install));
        if config.test_timeout.is_none() {
            config.test_timeout = ctx.overrides.timeouts.test.or(run.timeouts.test);
        }
        let mut plan = config.resolve(ctx.base, &suite.root).map_err(|e| {
            PlanError::Config(Origin::error(suite.origin.as_ref(), format!("suite {}: {e}", suite.name)))
        })?;
        plan.shard = ctx.overrides.shard;
        Ok(plan)
    }

    fn run(&self, suite: &SuitePlan, plan: &BenchmarkPlan, ctx: &RunContext<'_>) -> Suite {
        if ctx.cancelled() {
            let mut result = crate::runners::new_suite(suite);
            result.status = SuiteStatus::Cancelled;
            return result;
        }
        super::run(suite, plan, ctx.exec)
    }

    fn items(&self, suite: &SuitePlan, plan: &BenchmarkPlan) -> Option<Result<Vec<SuiteItem>, ItemsError>> {
        let tasks = super::select(&suite.id, plan).map(|(tasks, _)| tasks);
        Some(
            tasks
                .map(|tasks| {
                    tasks.into_iter().map(|t| SuiteItem { id: t.id, difficulty: t.difficulty, tags: t.tags }).collect()
                })
                .map_err(Into::into),
        )
    }
}
