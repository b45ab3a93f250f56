//! Plan: turn `fcorr.toml`, command-line paths and flags into the list of suites to run.
//!
//! The settings every suite has (id, policy, weight, root...) are resolved here; each suite's
//! runner resolves its kind's own settings ([`Runner::plan`]; the caller hands the registered
//! kinds in as [`Kinds`]), so nothing after planning looks at configuration again. The seam's
//! type-erased pieces ([`Runner`], [`KindPlan`], [`PlanContext`]) live here, with the plans that
//! hold them.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use toml::Spanned;
use toml::de::DeTable;

use crate::config::{Config, KindKeys, LoadError, Origin, SuiteConfig, SuiteSite, Timeouts, Weights};
use crate::errors::PlanError;
use crate::execute::RunContext;
use crate::model::{Policy, Suite, SuiteKind};

/// One suite, fully resolved.
#[derive(Debug, Clone)]
pub(crate) struct SuitePlan {
    pub id: String,
    pub name: String,
    /// Kind recorded in results.json.
    pub kind: SuiteKind,
    /// The runner that plans and runs this suite.
    pub runner: &'static dyn Runner,
    /// Absolute directory the suite runs in (or, for imports, that report globs are relative to).
    pub root: PathBuf,
    /// The path as the user wrote it, for display.
    pub display_path: String,
    pub policy: Policy,
    pub threshold: f64,
    pub weight: f64,
    pub critical: bool,
    pub weights: Weights,
    /// Where the suite was configured, when it came from a file.
    pub origin: Option<Origin>,
    /// The runner's own plan (its `SuiteRunner::Plan`).
    pub settings: KindPlan,
    /// The suite's own `quarantine` entries (the top-level ones apply to every suite).
    pub quarantine: Vec<String>,
}

/// Command-line settings that override the config file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overrides {
    pub policy: Option<Policy>,
    pub no_install: bool,
    pub timeouts: Timeouts,
    /// Only suites whose name contains this (or matches it as a glob).
    pub filter: Option<String>,
    /// Bank suites: one test id, `topic:NAME` or `bank:NAME` (`--select`).
    pub select: Option<String>,
    /// `--shard K/N`: this job's slice of the suites and of their items.
    pub shard: Option<crate::shard::Shard>,
    /// `--no-cache`: systems under test are called even when a cached answer exists.
    pub no_cache: bool,
    /// `--retries N`: reruns of failed tests, for every project suite.
    pub retries: Option<u32>,
    /// `--retries-policy`.
    pub retries_policy: Option<crate::model::RetryPolicy>,
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

/// What a kind's planning knows besides the suite: run-wide defaults and command-line overrides.
pub(crate) struct PlanContext<'a> {
    pub config: &'a Config,
    pub overrides: &'a Overrides,
    /// Directory the suite's relative paths are relative to.
    pub base: &'a Path,
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

/// A suite kind without its types (`crate::runners::SuiteRunner`, which every kind implements,
/// is one), so runners of every kind sit in one registry and a [`SuitePlan`] can hold its own.
/// Defined here, where plans are made and held, so planning depends on no kind.
pub(crate) trait Runner: Send + Sync {
    fn name(&self) -> &'static str;
    fn suite_kind(&self) -> SuiteKind;
    fn about(&self) -> &'static str;
    /// Reads and validates the kind's keys; returns them normalised (defaults filled in).
    fn load(&self, table: Spanned<DeTable<'_>>, site: &SuiteSite<'_>) -> Result<toml::Table, LoadError>;
    fn plan(&self, settings: &toml::Table, suite: &SuitePlan, ctx: &PlanContext<'_>) -> Result<KindPlan, PlanError>;
    fn run(&self, suite: &SuitePlan, ctx: &RunContext<'_>) -> Suite;
    fn items(&self, suite: &SuitePlan) -> Option<Result<Vec<SuiteItem>, ItemsError>>;
    /// The suites a planned suite stands for: itself, or its workspace's members too. `planned`:
    /// the roots of every suite planned on its own (a part found below one of them is not "not run").
    fn expand(&self, suite: SuitePlan, planned: &[PathBuf]) -> Vec<SuitePlan>;
    /// True when the run's selection leaves this planned suite out (planning drops it).
    fn deselected(&self, suite: &SuitePlan) -> bool;
    /// The kind's own defaults for the shared settings, from its loaded keys.
    fn shared_defaults(&self, settings: &toml::Table) -> Option<SharedDefaults>;
    /// True when `--shard` splits suites of this kind by item rather than by suite.
    fn splits_items(&self) -> bool;
    /// The files a suite that splits by item cuts its items from (see `SuiteRunner::inputs`).
    fn inputs(&self, suite: &SuitePlan) -> Vec<std::path::PathBuf>;
    /// `--rerun-failed`: this suite's plan narrowed to what failed in `before`, its result in
    /// the run that started at `of`; `None` when the kind cannot rerun part of a suite.
    fn rerun(&self, suite: &SuitePlan, before: &Suite, of: &str) -> Option<KindPlan>;
}

/// Shared settings a kind defaults differently from the run: a kind that grades its cases (the
/// bank) takes the graded policy, its own weight in the combined score and its own pass mark,
/// unless the user sets them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SharedDefaults {
    /// The suite's weight in the combined score.
    pub(crate) weight: f64,
    /// The graded average that meets the policy (`min-score`).
    pub(crate) min_score: f64,
}

impl Debug for dyn Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Runner({})", self.name())
    }
}

/// The registered suite kinds, handed to [`plan`] and to `Config::parse` by the caller. The list
/// itself is `crate::kinds::KINDS`, above every kind; nothing below it names a kind.
pub(crate) struct Kinds(pub(crate) &'static [&'static dyn Runner]);

impl Kinds {
    /// The runner of a kind, by its name in fcorr.toml.
    pub(crate) fn by_name(&self, name: &str) -> Option<&'static dyn Runner> {
        self.0.iter().copied().find(|r| r.name() == name)
    }

    /// Every registered runner, in the order docs and `--help` list them.
    pub(crate) fn all(&self) -> &'static [&'static dyn Runner] {
        self.0
    }
}

impl KindKeys for Kinds {
    fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|r| r.name()).collect()
    }

    fn load(&self, kind: &str, table: Spanned<DeTable<'_>>, site: &SuiteSite<'_>) -> Result<toml::Table, LoadError> {
        match self.by_name(kind) {
            Some(runner) => runner.load(table, site),
            None => Err(LoadError::Config(site.error("kind", self.unknown(kind)))),
        }
    }
}

/// Plans the suites of a config file plus any paths given on the command line.
pub(crate) fn plan(
    config: &Config,
    paths: &[PathBuf],
    overrides: &Overrides,
    kinds: &Kinds,
) -> Result<Vec<SuitePlan>, PlanError> {
    let cwd = std::env::current_dir().map_err(PlanError::Cwd)?;
    let mut plans = Vec::new();
    let mut deselected = Vec::new();
    if paths.is_empty() {
        for suite in &config.suites {
            let plan = plan_suite(config, suite, &absolute(&cwd, &config.base_dir), overrides, kinds)?;
            // A bank test or topic selection leaves out the bank suites that cannot hold it.
            if plan.runner.deselected(&plan) {
                deselected.push(plan.name.clone());
            } else {
                plans.push(plan);
            }
        }
    } else {
        for path in paths {
            let suite = SuiteConfig { path: Some(path.clone()), ..SuiteConfig::default() };
            plans.push(plan_suite(config, &suite, &cwd, overrides, kinds)?);
        }
    }
    if plans.is_empty() && !deselected.is_empty() {
        // Not "nothing to run: give project paths": the suites are there, the selection missed.
        return Err(PlanError::SelectMatchesNothing { select: overrides.select.clone(), suites: deselected });
    }
    if plans.is_empty() {
        return Err(PlanError::Nothing);
    }
    let mut plans = expand(plans, &[]);
    dedupe_ids(&mut plans);
    filter(plans, overrides.filter.as_deref())
}

/// Every planned suite replaced by the suites it stands for ([`Runner::expand`]: a workspace
/// root and its members, or one suite per ecosystem at a root that is several projects). A
/// member whose directory is also a suite of its own (configured, named on the command line, or
/// among `before`, suites planned earlier) is left to that suite, so nothing runs twice.
fn expand(plans: Vec<SuitePlan>, before: &[SuitePlan]) -> Vec<SuitePlan> {
    let planned: Vec<(PathBuf, SuiteKind)> = before.iter().chain(&plans).map(|p| (p.root.clone(), p.kind)).collect();
    let roots: Vec<PathBuf> = planned.iter().map(|(root, _)| root.clone()).collect();
    let mut out: Vec<SuitePlan> = Vec::new();
    for plan in plans {
        let root = plan.root.clone();
        for suite in plan.runner.expand(plan, &roots) {
            // A suite at the planned root is the planned suite (or one of its ecosystems); the
            // others are members, dropped when their directory is planned on its own.
            let member = suite.root != root;
            if member && planned.iter().any(|(r, k)| *r == suite.root && *k == suite.kind) {
                continue;
            }
            out.push(suite);
        }
    }
    out
}

/// `plans` with `extra` suites (from the command line, paths relative to `cwd`) planned after
/// them, ids kept unique. No change without extras.
pub(crate) fn add_suites(
    mut plans: Vec<SuitePlan>,
    config: &Config,
    extra: &[SuiteConfig],
    cwd: &Path,
    overrides: &Overrides,
    kinds: &Kinds,
) -> Result<Vec<SuitePlan>, PlanError> {
    if extra.is_empty() {
        return Ok(plans);
    }
    let mut added = Vec::new();
    for suite in extra {
        added.push(plan_suite(config, suite, cwd, overrides, kinds)?);
    }
    let added = expand(added, &plans);
    plans.extend(added);
    dedupe_ids(&mut plans);
    Ok(plans)
}

/// Plans one suite: the shared settings here, the kind's own through the runner of its kind.
pub(crate) fn plan_suite(
    config: &Config,
    suite: &SuiteConfig,
    base: &Path,
    overrides: &Overrides,
    kinds: &Kinds,
) -> Result<SuitePlan, PlanError> {
    // Suites from a file were checked against the registry when it was read; built-in names
    // (`project`, `import`) are registered.
    let runner =
        kinds.by_name(suite.kind).ok_or_else(|| Origin::error(suite.origin.as_ref(), kinds.unknown(suite.kind)))?;
    plan_as(runner, config, suite, base, overrides)
}

/// [`plan_suite`] by a given runner, for a caller that plans suites of its own kind.
pub(crate) fn plan_as(
    runner: &'static dyn Runner,
    config: &Config,
    suite: &SuiteConfig,
    base: &Path,
    overrides: &Overrides,
) -> Result<SuitePlan, PlanError> {
    let plan = plan_shared(runner, config, suite, base, overrides);
    let ctx = PlanContext { config, overrides, base };
    let settings = plan.runner.plan(&suite.settings, &plan, &ctx)?;
    Ok(SuitePlan { settings, ..plan })
}

/// The settings every kind shares, with an empty kind plan.
fn plan_shared(
    runner: &'static dyn Runner,
    config: &Config,
    suite: &SuiteConfig,
    base: &Path,
    overrides: &Overrides,
) -> SuitePlan {
    let path = suite.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let display_path = path.to_string_lossy().trim_end_matches('/').to_string();
    let display_path = if display_path.is_empty() { ".".to_string() } else { display_path };
    let name = suite.name.clone().unwrap_or_else(|| display_path.clone());
    // Kinds that grade their cases (banks) default to the graded policy and their own weight.
    let graded = runner.shared_defaults(&suite.settings);
    SuitePlan {
        id: name.clone(),
        name,
        kind: runner.suite_kind(),
        runner,
        root: absolute(base, &path),
        display_path,
        // `--policy graded` grades only the suites of grading kinds; the others have no per-case
        // scores to average.
        policy: overrides
            .policy
            .filter(|p| *p != Policy::Graded || graded.is_some())
            .or(suite.policy)
            .unwrap_or(graded.map_or(config.run.policy, |_| Policy::Graded)),
        threshold: suite.min_score.unwrap_or(graded.map_or(100.0, |d| d.min_score)),
        weight: suite.weight.or(graded.map(|d| d.weight)).unwrap_or(1.0),
        critical: suite.critical,
        weights: suite.weights,
        origin: suite.origin.clone(),
        settings: KindPlan::new(()),
        quarantine: suite.quarantine.clone(),
    }
}

/// The suites `--shard K/N` runs: whole suites by a hash of their id; item-split suites
/// ([`Runner::splits_items`]) always, each keeping its own slice of items.
pub(crate) fn select_suites(plans: Vec<SuitePlan>, shard: Option<crate::shard::Shard>) -> Vec<SuitePlan> {
    let Some(shard) = shard else { return plans };
    plans.into_iter().filter(|p| p.runner.splits_items() || shard.keeps(&p.id)).collect()
}

/// What a sharded run records of the whole plan (before [`select_suites`]): its slice and the
/// shard each whole suite goes to, so `fcorr merge` can name what a shard that never arrived ran.
pub(crate) fn shard_plan(
    plans: &[SuitePlan],
    shard: Option<crate::shard::Shard>,
    config_hash: &str,
) -> Option<crate::model::ShardPlan> {
    let shard = shard?;
    let suites = plans
        .iter()
        .filter(|p| !p.runner.splits_items())
        .map(|p| crate::model::ShardedSuite {
            id: p.id.clone(),
            name: p.name.clone(),
            kind: p.kind,
            shard: crate::shard::owner(&p.id, shard.total).to_string(),
        })
        .collect();
    Some(crate::model::ShardPlan {
        shard: shard.to_string(),
        suites,
        inputs: Some(inputs_digest(plans, config_hash)),
        ci_run: ci_run(|name| std::env::var(name).ok()),
    })
}

/// The digest of what a sharded run was cut from: the config hash, every planned suite's id,
/// and the bytes of each item-split suite's item files. Whole suites are named by id only:
/// their content is checked by the commit. A file that cannot be read adds its error, so the
/// digest still differs from a run where it could.
fn inputs_digest(plans: &[SuitePlan], config_hash: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(config_hash.as_bytes());
    for plan in plans {
        hash.update(b"\0suite\0");
        hash.update(plan.id.as_bytes());
        if !plan.runner.splits_items() {
            continue;
        }
        for file in plan.runner.inputs(plan) {
            hash.update(b"\0file\0");
            match std::fs::read(&file) {
                Ok(bytes) => hash.update(&bytes),
                Err(error) => hash.update(format!("unreadable: {error}").as_bytes()),
            }
        }
    }
    hex::encode(&hash.finalize()[..8])
}

/// `GITHUB_REPOSITORY/GITHUB_RUN_ID` when both are set (see `ShardPlan::ci_run`).
fn ci_run(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let repository = var("GITHUB_REPOSITORY").filter(|v| !v.is_empty())?;
    let run = var("GITHUB_RUN_ID").filter(|v| !v.is_empty())?;
    Some(format!("{repository}/{run}"))
}

pub(crate) fn filter(plans: Vec<SuitePlan>, pattern: Option<&str>) -> Result<Vec<SuitePlan>, PlanError> {
    let Some(pattern) = pattern else { return Ok(plans) };
    let glob = globset::Glob::new(pattern).ok().map(|g| g.compile_matcher());
    let total = plans.len();
    let kept: Vec<SuitePlan> = plans
        .into_iter()
        .filter(|p| p.name.contains(pattern) || glob.as_ref().is_some_and(|g| g.is_match(&p.name)))
        .collect();
    if kept.is_empty() {
        return Err(PlanError::FilterMatchesNothing { pattern: pattern.to_string(), total });
    }
    Ok(kept)
}

/// Two suites with the same id would make deltas ambiguous: suffix later ones.
fn dedupe_ids(plans: &mut [SuitePlan]) {
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    for plan in plans.iter_mut() {
        let n = seen.entry(plan.id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            plan.id = format!("{}#{n}", plan.id);
            plan.name = plan.id.clone();
        }
    }
}

/// `path` made absolute against `base`, with `.` components removed (without touching the
/// filesystem: the path may not exist yet).
pub(crate) fn absolute(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    joined.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_paths_override_config_suites_and_flags_win() {
        let config = Config::parse(
            "[run]\npolicy = \"weighted\"\n[[suite]]\npath='a'\n",
            Path::new("f.toml"),
            &crate::kinds::KINDS,
        )
        .unwrap();
        let overrides = Overrides { policy: Some(Policy::PassRate), no_install: true, ..Overrides::default() };
        let plans =
            plan(&config, &[PathBuf::from("x/"), PathBuf::from("x")], &overrides, &crate::kinds::KINDS).unwrap();
        assert_eq!(plans.len(), 2);
        assert_eq!(plans[0].name, "x");
        assert_eq!(plans[1].id, "x#2");
        assert_eq!(plans[0].policy, Policy::PassRate);
        let project = plans[0].settings.get::<crate::kinds::project::ProjectPlan>().unwrap();
        assert!(!project.install);
        assert_eq!(project.timeouts.test, std::time::Duration::from_secs(600));
    }

    #[test]
    fn filter_matching_nothing_is_a_usage_error() {
        let config =
            Config::parse("[[suite]]\nname='api'\npath='a'\n", Path::new("f.toml"), &crate::kinds::KINDS).unwrap();
        let overrides = Overrides { filter: Some("web".into()), ..Overrides::default() };
        assert!(plan(&config, &[], &overrides, &crate::kinds::KINDS).is_err());
    }

    #[test]
    fn whole_suites_go_to_one_shard_and_item_split_suites_to_all() {
        use crate::shard::Shard;
        let mut text = String::new();
        for i in 0..12 {
            text.push_str(&format!("[[suite]]\nname = \"p{i}\"\npath = \"p{i}\"\n"));
        }
        let bench = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/benchmark/tasks.jsonl");
        text.push_str(&format!("[[suite]]\nname = \"bench\"\nkind = \"benchmark\"\npath = \"{}\"\n", bench.display()));
        let config = Config::parse(&text, std::path::Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap();
        let plans = plan(&config, &[], &Overrides::default(), &crate::kinds::KINDS).unwrap();
        let mut projects = Vec::new();
        for k in 1..=3 {
            let picked = select_suites(plans.clone(), Some(Shard { index: k, total: 3 }));
            assert!(picked.iter().any(|p| p.id == "bench"), "shard {k} lacks the benchmark suite");
            projects.extend(picked.into_iter().filter(|p| p.id != "bench").map(|p| p.id));
        }
        projects.sort();
        let mut all: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
        all.sort();
        assert_eq!(projects, all);
        assert_eq!(select_suites(plans.clone(), None).len(), 13);
    }
}
