//! Suite runners: one module per suite kind (`kind = "..."` in a `[[suite]]` of fcorr.toml).
//!
//! A runner owns its kind's config keys (a struct it deserialises and validates), turns them into
//! a plan, and runs one planned suite to a [`Suite`]. This module also schedules planned suites
//! ([`run_suites`], `-j` at a time) and scores each one its runner returns. Adding a kind is one
//! module implementing [`SuiteRunner`] plus one line in `KINDS` (`crate::kinds`), the registry
//! above every kind; docs/architecture.md has the steps.

use std::fmt::Debug;
use std::time::Instant;

use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize as _, Serialize};
use toml::Spanned;
use toml::de::DeTable;

use crate::config::{LoadError, Origin, SuiteSite, to_table};
use crate::errors::{ConfigError, PlanError};
use crate::events::{Event, EventSink};
pub(crate) use crate::execute::RunContext;
use crate::execute::{ExecContext, process};
use crate::model::{Suite, SuiteError, SuiteErrorKind, SuiteKind, SuiteStatus};
// The seam's types live where their users are (planning, execution); kinds name them here.
use crate::plan::SuitePlan;
pub(crate) use crate::plan::{ItemsError, KindPlan, PlanContext, Runner, SharedDefaults, SuiteItem};

/// A suite kind: its config keys, their validation, planning, and running one suite.
pub(crate) trait SuiteRunner: Send + Sync + 'static {
    /// The kind's own `[[suite]]` keys (besides the shared ones in [`crate::config::SuiteConfig`]).
    /// Give it `#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]` so unknown
    /// keys are errors with their line and column.
    type Config: Serialize + DeserializeOwned + Default + Debug + Clone + Send + Sync + 'static;
    /// Everything a run of one suite needs, resolved (absolute paths, defaults applied).
    type Plan: Debug + Send + Sync + 'static;

    /// The kind's name, as written in `kind = "..."`.
    fn name(&self) -> &'static str;

    /// The kind recorded in results.json for suites of this kind.
    fn suite_kind(&self) -> SuiteKind;

    /// One line for `--help` and the docs.
    fn about(&self) -> &'static str;

    /// Checks values serde cannot (unknown names, impossible numbers, missing files). Errors
    /// come from `site.error(key, message)`, which names the file and the value's line.
    fn validate(&self, config: &Self::Config, site: &SuiteSite<'_>) -> Result<(), ConfigError> {
        let _ = (config, site);
        Ok(())
    }

    /// Resolves the kind's settings for one suite; `suite` holds the shared, resolved ones.
    fn plan(&self, config: Self::Config, suite: &SuitePlan, ctx: &PlanContext<'_>) -> Result<Self::Plan, PlanError>;

    /// Runs one planned suite to its cases and status. Never panics and never fails: whatever
    /// goes wrong becomes the suite's `status` and `error`, and other suites carry on. The
    /// pipeline scores the suite afterwards.
    fn run(&self, suite: &SuitePlan, plan: &Self::Plan, ctx: &RunContext<'_>) -> Suite;

    /// The items (benchmark tasks, dataset cases) a planned suite would run, its own filters and
    /// `--shard` applied, for `fcorr suites list`. `None` (the default) for kinds whose cases
    /// are known only by running them.
    fn items(&self, suite: &SuitePlan, plan: &Self::Plan) -> Option<Result<Vec<SuiteItem>, ItemsError>> {
        let _ = (suite, plan);
        None
    }

    /// The suites one planned suite stands for: itself (the default), or several, as when a
    /// project suite's root is a workspace whose members run as suites of their own. Planning
    /// calls it once for every suite it plans, with the roots of all the suites planned on their
    /// own (`planned`).
    fn expand(&self, suite: SuitePlan, planned: &[std::path::PathBuf]) -> Vec<SuitePlan> {
        let _ = planned;
        vec![suite]
    }

    /// True when the run's selection (`--select`) leaves this planned suite out; planning then
    /// drops it, so it neither shows as an empty suite nor weighs on the combined score. Default:
    /// never.
    fn deselected(&self, suite: &SuitePlan, plan: &Self::Plan) -> bool {
        let _ = (suite, plan);
        false
    }

    /// The kind's own defaults for the shared settings (policy, weight, `min-score`) when the
    /// user sets none: `Some` makes the suite graded by default, with that weight and pass mark,
    /// and lets `--policy graded` apply to it. Default: `None`, the run's defaults.
    fn shared_defaults(&self, config: &Self::Config) -> Option<SharedDefaults> {
        let _ = config;
        None
    }

    /// True for kinds whose runner keeps only its shard's items ([`crate::shard::Shard::keeps_item`],
    /// from `PlanContext::overrides.shard`): such a suite runs in every shard, each with its
    /// slice, and its results say so (`Suite::split_by_item`). Other suites run whole, in one
    /// shard. Return true in the same change that makes the runner filter items: without the
    /// filtering, every shard would run every item and the merged suite would hold each case N
    /// times. Default: false.
    fn splits_items(&self) -> bool {
        false
    }

    /// The files a suite that [`splits_items`](SuiteRunner::splits_items) cuts its items from
    /// (a dataset, a tasks file). A sharded run records a digest of them, so `fcorr merge` can
    /// tell a shard cut from another version of the items (an older run's artifact) and refuse
    /// it: its cases would silently stand in for the ones this run's shard held. Default: none.
    fn inputs(&self, plan: &Self::Plan) -> Vec<std::path::PathBuf> {
        let _ = plan;
        Vec::new()
    }

    /// `--rerun-failed`: the plan narrowed to what failed or errored in `before`, this suite's
    /// result in the earlier run that started at `of` (suites that passed there are not asked).
    /// `None` (the default) for kinds that cannot rerun part of a suite: the suite then does not
    /// run.
    fn rerun(&self, suite: &SuitePlan, plan: &Self::Plan, before: &Suite, of: &str) -> Option<Self::Plan> {
        let _ = (suite, plan, before, of);
        None
    }
}

/// Every [`SuiteRunner`] is a [`Runner`]: the registry (`crate::kinds`) holds them type-erased.
impl<R: SuiteRunner> Runner for R {
    fn name(&self) -> &'static str {
        SuiteRunner::name(self)
    }

    fn suite_kind(&self) -> SuiteKind {
        SuiteRunner::suite_kind(self)
    }

    fn about(&self) -> &'static str {
        SuiteRunner::about(self)
    }

    fn load(&self, table: Spanned<DeTable<'_>>, site: &SuiteSite<'_>) -> Result<toml::Table, LoadError> {
        let config = R::Config::deserialize(table.into_deserializer()).map_err(LoadError::Toml)?;
        self.validate(&config, site).map_err(LoadError::Config)?;
        Ok(to_table(&config))
    }

    fn plan(&self, settings: &toml::Table, suite: &SuitePlan, ctx: &PlanContext<'_>) -> Result<KindPlan, PlanError> {
        // Settings were produced by `load` (or built from this runner's config struct), so they
        // read back; a mismatch is still reported rather than trusted.
        let config: R::Config = settings.clone().try_into().map_err(|e: toml::de::Error| {
            Origin::error(suite.origin.as_ref(), format!("suite {}: {}", suite.name, e.message()))
        })?;
        let plan = SuiteRunner::plan(self, config, suite, ctx)?;
        Ok(KindPlan::new(plan))
    }

    fn items(&self, suite: &SuitePlan) -> Option<Result<Vec<SuiteItem>, ItemsError>> {
        SuiteRunner::items(self, suite, suite.settings.get::<R::Plan>()?)
    }

    fn expand(&self, suite: SuitePlan, planned: &[std::path::PathBuf]) -> Vec<SuitePlan> {
        SuiteRunner::expand(self, suite, planned)
    }

    fn deselected(&self, suite: &SuitePlan) -> bool {
        suite.settings.get::<R::Plan>().is_some_and(|plan| SuiteRunner::deselected(self, suite, plan))
    }

    fn shared_defaults(&self, settings: &toml::Table) -> Option<SharedDefaults> {
        // Settings come from `load`, so they read back; a suite planned from the command line
        // has none, and the kind's defaults then see its empty config.
        let config: R::Config = settings.clone().try_into().unwrap_or_default();
        SuiteRunner::shared_defaults(self, &config)
    }

    fn splits_items(&self) -> bool {
        SuiteRunner::splits_items(self)
    }

    fn inputs(&self, suite: &SuitePlan) -> Vec<std::path::PathBuf> {
        suite.settings.get::<R::Plan>().map(|plan| SuiteRunner::inputs(self, plan)).unwrap_or_default()
    }

    fn rerun(&self, suite: &SuitePlan, before: &Suite, of: &str) -> Option<KindPlan> {
        let plan = suite.settings.get::<R::Plan>()?;
        SuiteRunner::rerun(self, suite, plan, before, of).map(KindPlan::new)
    }

    fn run(&self, suite: &SuitePlan, ctx: &RunContext<'_>) -> Suite {
        match suite.settings.get::<R::Plan>() {
            Some(plan) => SuiteRunner::run(self, suite, plan, ctx),
            // Plans are made by the runner of the suite's kind, so this cannot happen; if it
            // ever does, the suite says so instead of the process panicking.
            None => failed_suite(
                suite,
                SuiteErrorKind::Harness,
                format!("internal error: the plan of suite {} is not a `{}` plan", suite.name, self.name()),
                None,
            ),
        }
    }
}

/// Runs every suite, `jobs` at a time; results come back in plan order.
pub(crate) fn run_suites(plans: &[SuitePlan], ctx: &ExecContext, sink: &dyn EventSink) -> Vec<Suite> {
    let jobs = ctx.jobs.clamp(1, plans.len().max(1));
    sink.emit(Event::RunStarted { suites: plans.len(), jobs });
    let results = crate::parallel::in_order(plans, jobs, |plan| {
        let suite = run_suite(plan, ctx, sink);
        sink.emit(Event::SuiteFinished { suite: Box::new(suite.clone()) });
        suite
    });
    // Daemons that outlived their command without its marker (a scrubbed environment) go now.
    process::kill_all_leftovers();
    results
        .into_iter()
        .zip(plans)
        .map(|(slot, plan)| {
            slot.unwrap_or_else(|| {
                failed_suite(
                    plan,
                    SuiteErrorKind::Harness,
                    "the worker running this suite stopped unexpectedly".into(),
                    None,
                )
            })
        })
        .collect()
}

/// Runs one suite to a scored result, through the runner of its kind.
pub(crate) fn run_suite(plan: &SuitePlan, ctx: &ExecContext, sink: &dyn EventSink) -> Suite {
    let started = Instant::now();
    sink.emit(Event::SuiteStarted { suite_id: plan.id.clone(), name: plan.name.clone() });
    let mut suite = if process::is_cancelled() {
        let mut s = new_suite(plan);
        s.status = SuiteStatus::Cancelled;
        s
    } else {
        plan.runner.run(plan, &RunContext { exec: ctx, events: sink })
    };
    suite.duration_ms = started.elapsed().as_millis() as u64;
    suite.score = crate::score::score_suite(&suite, plan.policy, plan.threshold, &plan.weights);
    // Whatever the suite's tools and systems said enters the run here: the secrets fcorr holds
    // leave it before the progress display, the reports or GitHub see any of it.
    crate::secrets::redact_serde(&mut suite);
    suite
}

/// An empty suite carrying the plan's shared settings; runners start from it.
pub(crate) fn new_suite(plan: &SuitePlan) -> Suite {
    let mut suite = Suite::new(plan.id.clone(), plan.name.clone(), plan.kind);
    suite.path = Some(plan.display_path.clone());
    suite.weight = plan.weight;
    suite.critical = plan.critical;
    suite.score.policy = plan.policy;
    suite.score.threshold = plan.threshold;
    suite
}

pub(crate) fn failed_suite(plan: &SuitePlan, kind: SuiteErrorKind, message: String, hint: Option<String>) -> Suite {
    let mut suite = new_suite(plan);
    suite.status = SuiteStatus::Error;
    suite.error = Some(SuiteError { kind, message, hint });
    suite
}

/// Checks `reports` globs and `report-format` when the config is read, not after suites ran:
/// a malformed glob would otherwise match nothing, silently.
pub(crate) fn check_reports(reports: &[String], format: Option<&str>, site: &SuiteSite<'_>) -> Result<(), ConfigError> {
    for (i, pattern) in reports.iter().enumerate() {
        // `!glob` leaves out what the glob matches (collect::report_excludes).
        let glob = pattern.strip_prefix('!').map(str::trim).unwrap_or(pattern);
        if let Err(e) = globset::Glob::new(glob) {
            return Err(
                site.error(&format!("reports.{i}"), format!("`reports`: malformed glob `{pattern}`: {}", e.kind()))
            );
        }
    }
    if !reports.is_empty() && reports.iter().all(|p| p.starts_with('!')) {
        return Err(site.error(
            "reports",
            "`reports` has only `!` patterns: they leave files out of what the others find; add a pattern that finds reports",
        ));
    }
    if let Some(format) = format
        && crate::collect::parser_named(format).is_none()
    {
        let known: Vec<&str> = crate::collect::PARSERS.iter().map(|p| p.format()).collect();
        return Err(
            site.error("report-format", format!("unknown `report-format` `{format}` (known: {})", known.join(", ")))
        );
    }
    Ok(())
}
