//! Plan: turn `fcorr.toml`, command-line paths and flags into the list of suites to run.
//!
//! Everything a suite needs is resolved here (absolute paths, policy, timeouts, env, command
//! overrides), so the executor never looks at configuration again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::collect::ReportSpec;
use crate::config::{Commands, Config, SuiteConfig, Timeouts, Weights};
use crate::errors::FcorrError;
use crate::model::{Policy, SuiteKind};

/// One suite, fully resolved.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    pub id: String,
    pub name: String,
    pub kind: SuiteKind,
    /// Absolute directory the suite runs in (or, for imports, that report globs are relative to).
    pub root: PathBuf,
    /// The path as the user wrote it, for display.
    pub display_path: String,
    pub runner: Option<String>,
    pub framework: Option<String>,
    pub policy: Policy,
    pub threshold: f64,
    pub weight: f64,
    pub critical: bool,
    pub install: bool,
    pub timeouts: PhaseTimeouts,
    pub env: Vec<(String, String)>,
    /// Secret variables (`GITHUB_TOKEN`...) the suite's commands may inherit.
    pub pass_env: Vec<String>,
    pub commands: Commands,
    pub reports: Vec<ReportSpec>,
    pub weights: Weights,
    /// Samples mode: directories whose contents are copied into a scratch root before running.
    pub copy_from: Vec<PathBuf>,
}

/// Resolved per-phase timeouts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseTimeouts {
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

/// Command-line settings that override the config file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub policy: Option<Policy>,
    pub no_install: bool,
    pub timeouts: Timeouts,
    /// Only suites whose name contains this (or matches it as a glob).
    pub filter: Option<String>,
}

/// Plans the suites of a config file plus any paths given on the command line.
pub fn plan(config: &Config, paths: &[PathBuf], overrides: &Overrides) -> Result<Vec<SuitePlan>, FcorrError> {
    let cwd =
        std::env::current_dir().map_err(|e| FcorrError::Harness(format!("cannot read the current directory: {e}")))?;
    let mut plans = Vec::new();
    if paths.is_empty() {
        for suite in &config.suites {
            plans.push(plan_suite(config, suite, &absolute(&cwd, &config.base_dir), overrides)?);
        }
    } else {
        for path in paths {
            let suite = SuiteConfig { path: Some(path.clone()), ..SuiteConfig::default() };
            plans.push(plan_suite(config, &suite, &cwd, overrides)?);
        }
    }
    if plans.is_empty() {
        return Err(FcorrError::Usage(
            "nothing to run: give project paths (`fcorr run PATH...`), `--config fcorr.toml` with [[suite]] entries, or `--samples DIR`".into(),
        ));
    }
    dedupe_ids(&mut plans);
    filter(plans, overrides.filter.as_deref())
}

fn plan_suite(
    config: &Config,
    suite: &SuiteConfig,
    base: &Path,
    overrides: &Overrides,
) -> Result<SuitePlan, FcorrError> {
    let path = suite.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let display_path = path.to_string_lossy().trim_end_matches('/').to_string();
    let display_path = if display_path.is_empty() { ".".to_string() } else { display_path };
    let name = suite.name.clone().unwrap_or_else(|| display_path.clone());
    let timeouts = overrides.timeouts.or(suite.timeouts).or(config.run.timeouts);
    let mut env: BTreeMap<String, String> = config.run.env.clone();
    env.extend(suite.env.clone());
    let policy = overrides.policy.or(suite.policy).unwrap_or(config.run.policy);
    Ok(SuitePlan {
        id: name.clone(),
        name,
        kind: suite.kind,
        root: absolute(base, &path),
        display_path,
        runner: suite.runner.clone(),
        framework: suite.framework.clone(),
        policy,
        threshold: suite.min_score.unwrap_or(100.0),
        weight: suite.weight.unwrap_or(1.0),
        critical: suite.critical,
        install: !overrides.no_install && suite.install.unwrap_or(config.run.install),
        timeouts: PhaseTimeouts::from(timeouts),
        env: env.into_iter().collect(),
        pass_env: suite.pass_env.clone(),
        commands: suite.commands.clone(),
        reports: suite
            .reports
            .iter()
            .map(|pattern| ReportSpec { pattern: pattern.clone(), format: suite.report_format.clone() })
            .collect(),
        weights: suite.weights,
        copy_from: Vec::new(),
    })
}

/// Plans the seed's samples layout: every `DIR/<sdk>/<sample>/` with `expected/` and `tests/`.
pub fn plan_samples(
    config: &Config,
    dir: &Path,
    sdk: Option<&str>,
    overrides: &Overrides,
) -> Result<Vec<SuitePlan>, FcorrError> {
    let read = |d: &Path| {
        std::fs::read_dir(d)
            .map_err(|e| FcorrError::Usage(format!("cannot read samples directory {}: {e}", d.display())))
    };
    let mut sdks: Vec<PathBuf> = read(dir)?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    sdks.sort();
    if let Some(sdk) = sdk {
        sdks.retain(|p| p.file_name().is_some_and(|n| n == sdk));
        if sdks.is_empty() {
            return Err(FcorrError::Usage(format!("no SDK directory `{sdk}` in {}", dir.display())));
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
            let mut plan = plan_suite(config, &suite, dir, overrides)?;
            plan.copy_from = vec![expected];
            let tests = sample.join("tests");
            if tests.is_dir() {
                plan.copy_from.push(tests);
            }
            plans.push(plan);
        }
    }
    if plans.is_empty() {
        return Err(FcorrError::Usage(format!(
            "no samples found in {}: expected {0}/<sdk>/<sample>/expected/",
            dir.display()
        )));
    }
    filter(plans, overrides.filter.as_deref())
}

fn filter(plans: Vec<SuitePlan>, pattern: Option<&str>) -> Result<Vec<SuitePlan>, FcorrError> {
    let Some(pattern) = pattern else { return Ok(plans) };
    let glob = globset::Glob::new(pattern).ok().map(|g| g.compile_matcher());
    let total = plans.len();
    let kept: Vec<SuitePlan> = plans
        .into_iter()
        .filter(|p| p.name.contains(pattern) || glob.as_ref().is_some_and(|g| g.is_match(&p.name)))
        .collect();
    if kept.is_empty() {
        return Err(FcorrError::Usage(format!("--filter `{pattern}` matches none of the {total} suites")));
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

fn absolute(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    // Clean `.` components without touching the filesystem (the path may not exist yet).
    joined.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_paths_override_config_suites_and_flags_win() {
        let config = Config::parse("[run]\npolicy = \"weighted\"\n[[suite]]\npath='a'\n", Path::new("f.toml")).unwrap();
        let overrides = Overrides { policy: Some(Policy::PassRate), no_install: true, ..Overrides::default() };
        let plans = plan(&config, &[PathBuf::from("x/"), PathBuf::from("x")], &overrides).unwrap();
        assert_eq!(plans.len(), 2);
        assert_eq!(plans[0].name, "x");
        assert_eq!(plans[1].id, "x#2");
        assert_eq!(plans[0].policy, Policy::PassRate);
        assert!(!plans[0].install);
        assert_eq!(plans[0].timeouts.test, Duration::from_secs(600));
    }

    #[test]
    fn filter_matching_nothing_is_a_usage_error() {
        let config = Config::parse("[[suite]]\nname='api'\npath='a'\n", Path::new("f.toml")).unwrap();
        let overrides = Overrides { filter: Some("web".into()), ..Overrides::default() };
        assert!(plan(&config, &[], &overrides).is_err());
    }
}
