//! `kind = "project"` (the default): a project on disk that fcorr detects, installs, builds and
//! tests. The config keys and their planning live here; the phases run in [`run`], failed tests
//! are rerun by [`retry`], and processes go through [`crate::execute::process`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::collect::ReportSpec;
use crate::config::{Commands, Config, SuiteConfig, SuiteSite, Timeouts};
use crate::errors::{ConfigError, PlanError};
use crate::model::{Case, LeftOut, RetryPolicy, Suite, SuiteKind};
use crate::plan::{self, Overrides, SuitePlan};
use crate::runners::{KindPlan, PlanContext, RunContext, SuiteRunner};

mod members;
pub(crate) mod retry;
mod run;

pub(crate) use run::{copy_tree, run_project};

/// The project runner.
pub(crate) struct Project;

/// A project suite's own keys.
// Field order is serialisation order, which the configuration hash depends on: keep it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct ProjectConfig {
    /// Force an ecosystem instead of detecting it: `python`, `node`, `go`, `rust`, `java`, `command`.
    pub runner: Option<String>,
    /// Force a framework within the ecosystem (e.g. `vitest`).
    pub framework: Option<String>,
    pub install: Option<bool>,
    pub timeouts: Timeouts,
    pub env: BTreeMap<String, String>,
    /// Shell commands replacing the detected ones.
    pub commands: Commands,
    /// Report files the test command writes (required for the `command` runner).
    pub reports: Vec<String>,
    /// Format of `reports`; detected from content when unset.
    pub report_format: Option<String>,
    /// Secret variables fcorr removes from test environments (`GITHUB_TOKEN`,
    /// `ACTIONS_RUNTIME_TOKEN`..., and the secrets fcorr.toml names) that this suite's commands
    /// may inherit anyway. Left out of
    /// the serialised form when empty, so configuration hashes stay what they were.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Run the steps of a node `test` script that are not the test framework (`pnpm lint &&
    /// vitest`): steps before the framework join the build phase. Default: skipped with a note.
    /// Not serialised when false, so the configuration hash of existing suites is unchanged.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub run_script_steps: bool,
    /// Reruns of the failed tests after the test phase (default 0). Not serialised when unset,
    /// so the configuration hash of existing suites is unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    /// What a test that passed only on a retry counts as: `pass-on-retry` (default) or `fail`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries_policy: Option<RetryPolicy>,
    /// `true`: run the project's own build script (a node `build` script) before the tests;
    /// `false`: never. Unset (the default), it runs only when the tests need it. Not serialised
    /// when unset, so the configuration hash of existing suites is unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<bool>,
}

/// A project suite, resolved.
#[derive(Debug, Clone)]
pub(crate) struct ProjectPlan {
    /// Forced ecosystem (`runner = "..."`), else detected.
    pub ecosystem: Option<String>,
    pub framework: Option<String>,
    pub install: bool,
    pub timeouts: PhaseTimeouts,
    pub env: Vec<(String, String)>,
    /// Withheld variables (`crate::secrets::withheld`) the suite's commands may inherit (`pass-env`).
    pub pass_env: Vec<String>,
    pub commands: Commands,
    pub reports: Vec<ReportSpec>,
    /// Samples mode: directories whose contents are copied into a scratch root before running.
    pub copy_from: Vec<PathBuf>,
    /// `run-script-steps`: run a node `test` script's non-framework steps too.
    pub run_script_steps: bool,
    /// Reruns of the failed tests (`--retries`, else `retries`).
    pub retries: u32,
    pub retries_policy: RetryPolicy,
    /// `--rerun-failed`: run only these cases of an earlier run.
    pub rerun_only: Option<retry::RerunOnly>,
    /// `build = true|false` (see [`ProjectConfig::build`]).
    pub build_script: Option<bool>,
    /// Set when this suite is a member of a workspace planned from its root ([`members`]).
    pub workspace: Option<members::Membership>,
    /// What the project's runner found and will not run, as reported on this suite: a workspace's
    /// members without tests go on the first suite planned from its root.
    pub left_out: Vec<LeftOut>,
}

/// Resolved per-phase timeouts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PhaseTimeouts {
    pub install: Duration,
    pub build: Duration,
    pub test: Duration,
}

impl PhaseTimeouts {
    fn from(t: Timeouts) -> PhaseTimeouts {
        let secs = |v: Option<u64>| Duration::from_secs(v.unwrap_or(Timeouts::DEFAULT_SECS));
        PhaseTimeouts { install: secs(t.install), build: secs(t.build), test: secs(t.test) }
    }
}

impl SuiteRunner for Project {
    type Config = ProjectConfig;
    type Plan = ProjectPlan;

    fn name(&self) -> &'static str {
        "project"
    }

    fn suite_kind(&self) -> SuiteKind {
        SuiteKind::Project
    }

    fn about(&self) -> &'static str {
        "a project on disk: detect its language and framework, install, build, test (the default)"
    }

    fn validate(&self, config: &ProjectConfig, site: &SuiteSite<'_>) -> Result<(), ConfigError> {
        if site.path.is_none() {
            return Err(site.error("path", "`path` is required for project suites"));
        }
        let forced = forced_ecosystem(config.runner.as_deref(), site)?;
        if let Some(framework) = &config.framework {
            // A test command without a runner selects the generic command runner, which takes
            // any framework name as a label.
            let ecosystems = crate::ecosystems::ECOSYSTEMS;
            let candidates: Vec<&dyn crate::ecosystems::Ecosystem> = match (forced, &config.commands.test) {
                (Some(ecosystem), _) => vec![ecosystem],
                (None, Some(_)) => Vec::new(),
                (None, None) => ecosystems.iter().copied().filter(|e| !e.frameworks().is_empty()).collect(),
            };
            let wanted = framework.trim().to_ascii_lowercase();
            let known = |e: &&dyn crate::ecosystems::Ecosystem| {
                e.frameworks().is_empty() || e.frameworks().contains(&wanted.as_str())
            };
            if !candidates.is_empty() && !candidates.iter().any(known) {
                let lists: Vec<String> =
                    candidates.iter().map(|e| format!("{}: {}", e.name(), e.frameworks().join(", "))).collect();
                return Err(site.error("framework", format!("unknown framework `{framework}` ({})", lists.join("; "))));
            }
        }
        // `pass-env` is checked with every other one when the whole file is read
        // (`Config::parse`): the secrets it may name come from all the suites.
        crate::runners::check_reports(&config.reports, config.report_format.as_deref(), site)
    }

    fn plan(&self, config: ProjectConfig, suite: &SuitePlan, ctx: &PlanContext<'_>) -> Result<ProjectPlan, PlanError> {
        let run = &ctx.config.run;
        let timeouts = ctx.overrides.timeouts.or(config.timeouts).or(run.timeouts);
        let mut env: BTreeMap<String, String> = run.env.clone();
        env.extend(config.env);
        let _ = suite;
        Ok(ProjectPlan {
            ecosystem: config.runner,
            framework: config.framework,
            install: !ctx.overrides.no_install && config.install.unwrap_or(run.install),
            timeouts: PhaseTimeouts::from(timeouts),
            env: env.into_iter().collect(),
            pass_env: config.pass_env,
            commands: config.commands,
            reports: config
                .reports
                .iter()
                .map(|pattern| ReportSpec { pattern: pattern.clone(), format: config.report_format.clone() })
                .collect(),
            copy_from: Vec::new(),
            run_script_steps: config.run_script_steps,
            retries: ctx.overrides.retries.or(config.retries).unwrap_or(0),
            retries_policy: ctx.overrides.retries_policy.or(config.retries_policy).unwrap_or_default(),
            rerun_only: None,
            build_script: config.build,
            workspace: None,
            left_out: Vec::new(),
        })
    }

    fn run(&self, suite: &SuitePlan, plan: &ProjectPlan, ctx: &RunContext<'_>) -> Suite {
        run_project(suite, plan, ctx.exec, ctx.events)
    }

    fn expand(&self, suite: SuitePlan, planned: &[PathBuf]) -> Vec<SuitePlan> {
        members::expand(suite, planned)
    }

    /// Narrowed to the cases that failed or errored before; a suite that failed with no failing
    /// case (a build failure, no results), or whose results were incomplete, runs in full.
    fn rerun(&self, _suite: &SuitePlan, plan: &ProjectPlan, before: &Suite, of: &str) -> Option<ProjectPlan> {
        let mut project = plan.clone();
        let cases: Vec<Case> = before.cases.iter().filter(|c| retry::retryable(c)).cloned().collect();
        let incomplete = crate::model::incomplete::incomplete_results(before).map(|c| c.name.to_string());
        project.rerun_only = Some(retry::RerunOnly { cases, of: of.to_string(), incomplete });
        Some(project)
    }
}

/// The ecosystem a suite's `runner = "..."` names (`None` when the key is not set), or the error
/// at its line listing the runners fcorr knows. Every kind that runs tests as a project (the
/// benchmark's task tests too) checks the key with it, so a typo stops the run before it starts.
pub(crate) fn forced_ecosystem(
    runner: Option<&str>,
    site: &SuiteSite<'_>,
) -> Result<Option<&'static dyn crate::ecosystems::Ecosystem>, ConfigError> {
    let Some(name) = runner else { return Ok(None) };
    let ecosystems = crate::ecosystems::ECOSYSTEMS;
    match ecosystems.iter().copied().find(|e| e.name() == name) {
        Some(ecosystem) => Ok(Some(ecosystem)),
        None => {
            let names: Vec<&str> = ecosystems.iter().map(|e| e.name()).collect();
            Err(site.error("runner", format!("unknown runner `{name}` (known: {})", names.join(", "))))
        }
    }
}

/// Plans the `--samples DIR` layout: every `DIR/<sdk>/<sample>/` with `expected/` and `tests/`,
/// each sample one project suite run from a scratch copy of those two directories.
pub(crate) fn plan_samples(
    config: &Config,
    dir: &Path,
    sdk: Option<&str>,
    overrides: &Overrides,
) -> Result<Vec<SuitePlan>, PlanError> {
    let read =
        |d: &Path| std::fs::read_dir(d).map_err(|source| PlanError::SamplesUnreadable { dir: d.to_path_buf(), source });
    let mut sdks: Vec<PathBuf> = read(dir)?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    sdks.sort();
    if let Some(sdk) = sdk {
        sdks.retain(|p| p.file_name().is_some_and(|n| n == sdk));
        if sdks.is_empty() {
            return Err(PlanError::NoSdk { sdk: sdk.to_string(), dir: dir.to_path_buf() });
        }
    }
    let mut plans = Vec::new();
    for sdk_dir in sdks {
        let mut samples: Vec<PathBuf> = read(&sdk_dir)?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
        samples.sort();
        for sample in samples {
            let expected = sample.join("expected");
            if !expected.is_dir() {
                continue;
            }
            let sdk_name = sdk_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let sample_name = sample.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let suite = SuiteConfig {
                name: Some(format!("{sdk_name}/{sample_name}")),
                path: Some(sample.clone()),
                ..SuiteConfig::default()
            };
            let mut plan = plan::plan_as(&Project, config, &suite, dir, overrides)?;
            // Planned by this runner just above, so the plan is a ProjectPlan.
            if let Some(project) = plan.settings.get::<ProjectPlan>() {
                let mut project = project.clone();
                project.copy_from = vec![expected];
                let tests = sample.join("tests");
                if tests.is_dir() {
                    project.copy_from.push(tests);
                }
                plan.settings = KindPlan::new(project);
            }
            plans.push(plan);
        }
    }
    if plans.is_empty() {
        return Err(PlanError::NoSamples { dir: dir.to_path_buf() });
    }
    plan::filter(plans, overrides.filter.as_deref())
}
