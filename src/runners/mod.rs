//! Suite runners: one module per suite kind (`kind = "..."` in a `[[suite]]` of fcorr.toml).
//!
//! A runner owns its kind's config keys (a struct it deserialises and validates), turns them into
//! a plan, and runs one planned suite to a [`Suite`]. The pipeline does everything around it
//! (scheduling, events, cancellation checks, scoring). Adding a kind is one module implementing
//! [`SuiteRunner`] plus one line in [`RUNNERS`]; docs/architecture.md has the steps.

use std::any::Any;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize as _, Serialize};
use toml::Spanned;
use toml::de::DeTable;

use crate::config::{Config, SuiteSite, to_table};
use crate::errors::{ConfigError, PlanError};
use crate::events::{Event, EventSink};
use crate::execute::{ExecContext, process};
use crate::model::{Suite, SuiteError, SuiteErrorKind, SuiteKind, SuiteStatus};
use crate::plan::{Overrides, SuitePlan};

pub(crate) mod bank;
#[cfg(test)]
mod echo;
pub(crate) mod import;
pub(crate) mod project;

/// Every suite kind this version runs, in the order docs and `--help` list them.
static RUNNERS: &[&dyn Runner] = &[
    &project::Project,
    &import::Import,
    &crate::eval::runner::Eval,
    &bank::Bank,
    &crate::benchmark::runner::Benchmark,
    #[cfg(test)]
    &echo::Echo,
];

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
}

/// One item of a suite (a benchmark task, a dataset case), as `fcorr suites list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteItem {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// Why a suite's items cannot be listed (its tasks or dataset file is unreadable).
pub(crate) type ItemsError = Box<dyn std::error::Error + Send + Sync>;

/// What planning knows besides the suite: run-wide defaults and command-line overrides.
pub(crate) struct PlanContext<'a> {
    pub config: &'a Config,
    pub overrides: &'a Overrides,
    /// Directory the suite's relative paths are relative to.
    pub base: &'a Path,
}

/// What a running suite may use: where to write, the event sink, cancellation.
pub(crate) struct RunContext<'a> {
    /// Output and cache directories, parallelism, kill grace period.
    pub exec: &'a ExecContext,
    /// Progress events (phase started/finished...) for the terminal and CI logs.
    pub events: &'a dyn EventSink,
}

impl RunContext<'_> {
    /// True once the user pressed Ctrl-C: stop starting work and return what you have, with
    /// status `cancelled`.
    pub(crate) fn cancelled(&self) -> bool {
        crate::execute::process::is_cancelled()
    }
}

/// A runner's plan for one suite, type-erased so every kind fits in one [`SuitePlan`].
#[derive(Clone)]
pub(crate) struct KindPlan(Arc<dyn Any + Send + Sync>);

impl KindPlan {
    /// Wraps a runner's plan.
    pub(crate) fn new<P: Any + Send + Sync>(plan: P) -> KindPlan {
        KindPlan(Arc::new(plan))
    }

    /// The plan as the runner's own type, when it is one.
    pub(crate) fn get<P: 'static>(&self) -> Option<&P> {
        self.0.downcast_ref::<P>()
    }
}

impl Debug for KindPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KindPlan(..)")
    }
}

/// A problem reading a kind's keys: serde's (with its span) or the runner's validation.
pub(crate) enum LoadError {
    Toml(toml::de::Error),
    Config(ConfigError),
}

/// [`SuiteRunner`] without its types, so runners of every kind sit in one registry.
pub(crate) trait Runner: Send + Sync {
    fn name(&self) -> &'static str;
    fn suite_kind(&self) -> SuiteKind;
    fn about(&self) -> &'static str;
    /// Reads and validates the kind's keys; returns them normalised (defaults filled in).
    fn load(&self, table: Spanned<DeTable<'_>>, site: &SuiteSite<'_>) -> Result<toml::Table, LoadError>;
    fn plan(&self, settings: &toml::Table, suite: &SuitePlan, ctx: &PlanContext<'_>) -> Result<KindPlan, PlanError>;
    fn run(&self, suite: &SuitePlan, ctx: &RunContext<'_>) -> Suite;
    fn items(&self, suite: &SuitePlan) -> Option<Result<Vec<SuiteItem>, ItemsError>>;
}

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
            let file = suite.origin.as_ref().map(|o| o.file.clone()).unwrap_or_else(|| PathBuf::from("fcorr.toml"));
            let line = suite.origin.as_ref().map(|o| o.line).unwrap_or(0);
            ConfigError::new(&file, (line, 1), format!("suite {}: {}", suite.name, e.message()))
        })?;
        let plan = SuiteRunner::plan(self, config, suite, ctx)?;
        Ok(KindPlan::new(plan))
    }

    fn items(&self, suite: &SuitePlan) -> Option<Result<Vec<SuiteItem>, ItemsError>> {
        SuiteRunner::items(self, suite, suite.settings.get::<R::Plan>()?)
    }

    fn run(&self, suite: &SuitePlan, ctx: &RunContext<'_>) -> Suite {
        match suite.settings.get::<R::Plan>() {
            Some(plan) => SuiteRunner::run(self, suite, plan, ctx),
            // Plans are made by the runner of the suite's kind, so this cannot happen; if it
            // ever does, the suite says so instead of the process panicking.
            None => {
                let mut failed = Suite::new(suite.id.clone(), suite.name.clone(), suite.kind);
                failed.status = crate::model::SuiteStatus::Error;
                failed.error = Some(crate::model::SuiteError {
                    kind: crate::model::SuiteErrorKind::Harness,
                    message: format!(
                        "internal error: the plan of suite {} is not a `{}` plan",
                        suite.name,
                        self.name()
                    ),
                    hint: None,
                });
                failed
            }
        }
    }
}

/// Runs every suite, `jobs` at a time; results come back in plan order.
pub(crate) fn run_suites(plans: &[SuitePlan], ctx: &ExecContext, sink: &dyn EventSink) -> Vec<Suite> {
    let jobs = ctx.jobs.clamp(1, plans.len().max(1));
    sink.emit(Event::RunStarted { suites: plans.len(), jobs });
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Suite>>> = plans.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(plan) = plans.get(i) else { break };
                    let suite = run_suite(plan, ctx, sink);
                    sink.emit(Event::SuiteFinished { suite: Box::new(suite.clone()) });
                    *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(suite);
                }
            });
        }
    });
    // Daemons that outlived their command without its marker (a scrubbed environment) go now.
    process::kill_all_leftovers();
    results
        .into_iter()
        .zip(plans)
        .map(|(slot, plan)| {
            slot.into_inner().unwrap_or_else(|p| p.into_inner()).unwrap_or_else(|| {
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
        if let Err(e) = globset::Glob::new(pattern) {
            return Err(
                site.error(&format!("reports.{i}"), format!("`reports`: malformed glob `{pattern}`: {}", e.kind()))
            );
        }
    }
    if let Some(format) = format
        && crate::collect::parser_named(format).is_none()
    {
        let known: Vec<&str> = crate::collect::parsers().iter().map(|p| p.format()).collect();
        return Err(
            site.error("report-format", format!("unknown `report-format` `{format}` (known: {})", known.join(", ")))
        );
    }
    Ok(())
}

/// Every registered runner.
pub(crate) fn registry() -> &'static [&'static dyn Runner] {
    RUNNERS
}

/// The runner of a kind, by its name in fcorr.toml.
pub(crate) fn by_name(name: &str) -> Option<&'static dyn Runner> {
    RUNNERS.iter().copied().find(|r| r.name() == name)
}

impl Debug for dyn Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Runner({})", self.name())
    }
}

/// Names of every kind this version runs, in registry order.
pub(crate) fn kind_names() -> Vec<&'static str> {
    RUNNERS.iter().map(|r| r.name()).collect()
}

/// The kinds with their one-line descriptions, for `--help` and the JSON Schema.
pub(crate) fn kinds_help() -> String {
    let mut text = String::from("Suite kinds (`kind = \"...\"` in a [[suite]] of fcorr.toml):\n");
    for runner in RUNNERS {
        text.push_str(&format!("  {:<9} {}\n", runner.name(), runner.about()));
    }
    text
}
