//! `fcorr.toml`: what to run and how to judge it.
//!
//! Keys are kebab-case; unknown keys and wrong types are errors that name the file, line and
//! column. CLI flags are applied on top by the `plan` stage; paths are relative to the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::errors::FcorrError;
use crate::model::{Policy, SuiteKind};

/// The whole configuration file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    pub run: RunConfig,
    #[serde(rename = "suite")]
    pub suites: Vec<SuiteConfig>,
    pub gate: GateConfig,
    pub report: ReportConfig,
    pub github: GithubConfig,
    /// Directory the config file lives in; suite paths are relative to it.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// Path of the file this came from, for messages.
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// `[run]`: defaults for every suite and for the run itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunConfig {
    /// Output directory, relative to the config file.
    pub out: Option<PathBuf>,
    /// Suites run at once; default: number of cores.
    pub jobs: Option<usize>,
    pub policy: Policy,
    pub install: bool,
    pub timeouts: Timeouts,
    pub env: BTreeMap<String, String>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            out: None,
            jobs: None,
            policy: Policy::Strict,
            install: true,
            timeouts: Timeouts::default(),
            env: BTreeMap::new(),
        }
    }
}

/// Per-phase timeouts in seconds. Unset fields inherit.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Timeouts {
    pub install: Option<u64>,
    pub build: Option<u64>,
    pub test: Option<u64>,
}

impl Timeouts {
    /// Default per-phase timeout (seconds).
    pub const DEFAULT_SECS: u64 = 600;

    /// Fills unset fields from `fallback`.
    pub fn or(self, fallback: Timeouts) -> Timeouts {
        Timeouts {
            install: self.install.or(fallback.install),
            build: self.build.or(fallback.build),
            test: self.test.or(fallback.test),
        }
    }
}

/// One `[[suite]]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SuiteConfig {
    /// Display name and stable id; defaults to the path.
    pub name: Option<String>,
    /// Project directory (relative to the config file).
    pub path: Option<PathBuf>,
    pub kind: SuiteKind,
    pub policy: Option<Policy>,
    /// Score needed to meet the policy (default 100).
    pub min_score: Option<f64>,
    /// Weight in the combined score (default 1).
    pub weight: Option<f64>,
    /// A failure of this suite makes the run CRITICAL.
    pub critical: bool,
    /// Force an ecosystem instead of detecting it: `python`, `node`, `go`, `rust`, `java`, `command`.
    pub runner: Option<String>,
    /// Force a framework within the ecosystem (e.g. `vitest`).
    pub framework: Option<String>,
    pub install: Option<bool>,
    pub timeouts: Timeouts,
    pub env: BTreeMap<String, String>,
    /// Secret variables fcorr removes from test environments (`GITHUB_TOKEN`,
    /// `ACTIONS_RUNTIME_TOKEN`...) that this suite's commands may inherit anyway.
    pub pass_env: Vec<String>,
    /// Shell commands replacing the detected ones.
    pub commands: Commands,
    /// Report files the test command writes (required for the `command` runner and imports).
    pub reports: Vec<String>,
    /// Format of `reports`; detected from content when unset.
    pub report_format: Option<String>,
    /// Weighted-policy weights.
    pub weights: Weights,
}

/// Shell command overrides for each phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Commands {
    pub install: Option<String>,
    pub build: Option<String>,
    pub test: Option<String>,
}

/// Weights of the weighted F-CORR score (points out of 100).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Weights {
    pub build: f64,
    pub tests: f64,
    pub runtime: f64,
    /// Runtime score lost per runtime error.
    pub runtime_decay: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights { build: 25.0, tests: 50.0, runtime: 25.0, runtime_decay: 0.1 }
    }
}

/// `[gate]`: what fails the check.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct GateConfig {
    /// Gates: `strict`, `critical`, `empty`, `regression`, `score<N`.
    pub fail_on: Vec<String>,
    /// Score drop (points) tolerated by the regression gate.
    pub regression_tolerance: f64,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig { fail_on: vec!["strict".into(), "critical".into(), "empty".into()], regression_tolerance: 0.0 }
    }
}

/// `[report]`: output formats and templates.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct ReportConfig {
    /// Formats to write; empty means all.
    pub formats: Vec<String>,
    /// Directory with `summary.md.j2` / `comment.md.j2` overrides.
    pub templates: Option<PathBuf>,
}

/// `[github]`: publishing settings (CLI flags and action inputs override).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct GithubConfig {
    pub comment: Option<String>,
    pub comment_when: Option<String>,
    pub comment_tag: Option<String>,
    pub check_run: Option<bool>,
    pub annotations: Option<bool>,
    /// Prefix added to (or, starting with `-`, stripped from) annotation paths.
    pub path_prefix: Option<String>,
    pub artifact_name: Option<String>,
    /// How many first-parent ancestors to search for a baseline.
    pub baseline_depth: Option<u32>,
    /// Baseline source for `fcorr ci`: `github`, a path, or `none`.
    pub baseline: Option<String>,
}

impl Config {
    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Config, FcorrError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| FcorrError::Config { file: path.to_path_buf(), message: format!("cannot read it: {e}") })?;
        let mut config = Config::parse(&text, path)?;
        config.base_dir = path
            .parent()
            .map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p })
            .unwrap_or(Path::new("."))
            .to_path_buf();
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// Parses config text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, FcorrError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map(|span| line_col(text, span.start)).unwrap_or((0, 0));
            FcorrError::Config {
                file: path.to_path_buf(),
                message: if line > 0 {
                    format!("line {line}, column {column}: {}", e.message())
                } else {
                    e.message().to_string()
                },
            }
        })?;
        config.validate(path)?;
        Ok(config)
    }

    fn validate(&self, path: &Path) -> Result<(), FcorrError> {
        let bad = |message: String| Err(FcorrError::Config { file: path.to_path_buf(), message });
        for (i, suite) in self.suites.iter().enumerate() {
            let label = suite.name.clone().unwrap_or_else(|| format!("#{}", i + 1));
            if suite.path.is_none() && suite.kind == SuiteKind::Project {
                return bad(format!("suite {label}: `path` is required for project suites"));
            }
            if suite.kind == SuiteKind::Import && suite.reports.is_empty() {
                return bad(format!("suite {label}: import suites need `reports = [\"glob\", ...]`"));
            }
            if let Some(score) = suite.min_score
                && !(0.0..=100.0).contains(&score)
            {
                return bad(format!("suite {label}: `min-score` must be between 0 and 100, got {score}"));
            }
            if let Some(weight) = suite.weight
                && !(weight.is_finite() && weight >= 0.0)
            {
                return bad(format!("suite {label}: `weight` must be a non-negative number"));
            }
        }
        let mut names = std::collections::HashSet::new();
        for suite in &self.suites {
            if let Some(name) = &suite.name
                && !names.insert(name)
            {
                return bad(format!("two suites are named `{name}`: names must be unique, they are ids"));
            }
        }
        Ok(())
    }

    /// sha256 of the effective configuration (hex, 16 chars).
    pub fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let text = toml::to_string(self).unwrap_or_default();
        hex::encode(&Sha256::digest(text.as_bytes())[..8])
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_config() {
        let text = r#"
[run]
jobs = 2
policy = "weighted"
timeouts = { test = 30 }

[[suite]]
name = "api"
path = "services/api"
policy = "pass-rate"
min-score = 90
env = { RUST_LOG = "debug" }
commands = { test = "make test" }

[gate]
fail-on = ["strict", "score<80"]
"#;
        let config = Config::parse(text, Path::new("fcorr.toml")).unwrap();
        assert_eq!(config.run.policy, Policy::Weighted);
        assert_eq!(config.suites[0].policy, Some(Policy::PassRate));
        assert_eq!(config.suites[0].commands.test.as_deref(), Some("make test"));
        assert_eq!(config.run.timeouts.test, Some(30));
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let text = "[[suite]]\npath = \"x\"\ntimeout = 5\n";
        let err = Config::parse(text, Path::new("fcorr.toml")).unwrap_err().to_string();
        assert!(err.contains("fcorr.toml"), "{err}");
        assert!(err.contains("line 3, column 1"), "{err}");
        assert!(err.contains("timeout"), "{err}");
    }

    #[test]
    fn wrong_type_is_reported() {
        let err = Config::parse("[run]\njobs = \"two\"\n", Path::new("f.toml")).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn duplicate_names_are_rejected() {
        let text = "[[suite]]\nname='a'\npath='x'\n[[suite]]\nname='a'\npath='y'\n";
        assert!(Config::parse(text, Path::new("f.toml")).is_err());
    }
}
