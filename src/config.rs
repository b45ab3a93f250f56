//! `fcorr.toml`: what to run and how to judge it.
//!
//! Keys are kebab-case; unknown keys, wrong types and impossible values are errors that name the
//! file, line and column. A `[[suite]]` table is read in two steps: its `kind` picks a suite
//! runner (through [`KindKeys`], handed in by the caller: the registry is `crate::kinds`), then the keys every suite has go to [`SuiteConfig`] and the rest
//! to that runner's own config struct. CLI flags are applied on top by the `plan` stage; paths
//! are relative to the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::IntoDeserializer;
use serde::{Deserialize, Serialize};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::errors::{ConfigError, FcorrError};
use crate::model::Policy;

/// The whole configuration file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Case ids or name globs whose failures are reported but fail no gate (every suite).
    /// First: plain values must come before tables when the config is serialised for its hash.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quarantine: Vec<String>,
    /// A file of more quarantine entries, one a line (relative to the config file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantine_file: Option<PathBuf>,
    pub run: RunConfig,
    /// Read by [`Config::parse`] through the suite runners, not by serde.
    #[serde(rename = "suite", skip_deserializing)]
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
    /// Where each value was written, for errors found after parsing.
    #[serde(skip)]
    pub spans: Spans,
    /// Environment variables the file names as secrets (`api-key-env`, `{env:NAME}`: see
    /// `crate::secrets::named_by`), sorted: withheld from every child and redacted from outputs.
    #[serde(skip)]
    pub secret_vars: Vec<String>,
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

/// One `[[suite]]`: the keys every kind has. The kind's own keys are in `settings`, as its
/// runner normalised them (defaults filled in), and are read back by that runner when planning.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub struct SuiteConfig {
    /// Display name and stable id; defaults to the path.
    pub name: Option<String>,
    /// Project directory, or the directory report globs are relative to (relative to the config file).
    pub path: Option<PathBuf>,
    /// Name of the suite's runner (`project`, `import`...).
    pub kind: &'static str,
    pub policy: Option<Policy>,
    /// Score needed to meet the policy (default 100).
    pub min_score: Option<f64>,
    /// Weight in the combined score (default 1).
    pub weight: Option<f64>,
    /// A failure of this suite makes the run CRITICAL.
    pub critical: bool,
    /// Case ids or name globs of this suite whose failures fail no gate. Left out of the
    /// serialised form when empty, so configuration hashes stay what they were.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quarantine: Vec<String>,
    /// The kind's own keys. Serialised inline, between the shared keys and `weights`, so the
    /// configuration hash of a project suite is what it was before kinds had their own structs.
    #[serde(flatten)]
    pub settings: toml::Table,
    /// Weighted-policy weights.
    pub weights: Weights,
    /// Where the suite was written (`fcorr.toml`, line of its `[[suite]]`), for messages.
    #[serde(skip)]
    pub origin: Option<Origin>,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            name: None,
            path: None,
            kind: DEFAULT_KIND,
            policy: None,
            min_score: None,
            weight: None,
            critical: false,
            quarantine: Vec::new(),
            settings: toml::Table::new(),
            weights: Weights::default(),
            origin: None,
        }
    }
}

impl SuiteConfig {
    /// A suite of the kind named `kind` with its runner's settings (that runner's config struct).
    pub fn with_settings(kind: &'static str, settings: &impl Serialize) -> SuiteConfig {
        SuiteConfig { kind, settings: to_table(settings), ..SuiteConfig::default() }
    }
}

/// Kind of a `[[suite]]` without `kind`.
pub const DEFAULT_KIND: &str = "project";

/// A runner's config struct as a table. Config structs are plain data with string keys, which
/// always convert; an empty table (the runner's defaults) is the fallback should one ever not.
pub fn to_table(settings: &impl Serialize) -> toml::Table {
    toml::Table::try_from(settings).unwrap_or_default()
}

/// Keys every `[[suite]]` takes, whatever its kind (the fields of [`SharedKeys`]).
pub const SHARED_SUITE_KEYS: &[&str] =
    &["name", "path", "kind", "policy", "min-score", "weight", "critical", "weights", "quarantine"];

/// The shared keys as read from the file.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
struct SharedKeys {
    name: Option<String>,
    path: Option<PathBuf>,
    kind: Option<String>,
    policy: Option<Policy>,
    min_score: Option<f64>,
    weight: Option<f64>,
    critical: bool,
    weights: Weights,
    quarantine: Vec<String>,
}

/// A file and line, for messages about one suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub file: PathBuf,
    pub line: usize,
}

impl Origin {
    /// An error about a planned suite, at its `[[suite]]` line when it came from a file (suites
    /// given on the command line have no origin: `fcorr.toml`, no line).
    pub(crate) fn error(origin: Option<&Origin>, message: impl Into<String>) -> ConfigError {
        match origin {
            Some(o) => ConfigError::new(&o.file, (o.line, 1), message),
            None => ConfigError::new(Path::new("fcorr.toml"), (0, 1), message),
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// Line and column of every value in the file, by dotted key path (`suite.0.framework`,
/// `report.templates`), so errors found after parsing still point at the line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spans {
    positions: BTreeMap<String, (usize, usize)>,
}

impl Spans {
    fn index(text: &str, path: &str, value: &Spanned<DeValue<'_>>, into: &mut BTreeMap<String, (usize, usize)>) {
        let start = value.span().start;
        let (mut line, mut column) = line_col(text, start);
        // A multi-line string whose opening quotes end their line starts on the next line (TOML
        // drops that newline): its position is its text's first line, so a line counted inside
        // the text (a template error) lands on the right config line.
        let rest = text.get(start..).unwrap_or("");
        if matches!(value.get_ref(), DeValue::String(_))
            && ["\"\"\"\n", "'''\n", "\"\"\"\r\n", "'''\r\n"].iter().any(|open| rest.starts_with(open))
        {
            (line, column) = (line + 1, 1);
        }
        into.insert(path.to_string(), (line, column));
        match value.get_ref() {
            DeValue::Table(table) => {
                for (key, value) in table.iter() {
                    let child =
                        if path.is_empty() { key.get_ref().to_string() } else { format!("{path}.{}", key.get_ref()) };
                    Spans::index(text, &child, value, into);
                }
            }
            DeValue::Array(items) => {
                for (i, value) in items.iter().enumerate() {
                    Spans::index(text, &format!("{path}.{i}"), value, into);
                }
            }
            _ => {}
        }
    }

    /// Line and column of the value at `path`, else of its nearest parent; (0, 0) when unknown.
    pub fn at(&self, path: &str) -> (usize, usize) {
        let mut path = path;
        loop {
            if let Some(position) = self.positions.get(path) {
                return *position;
            }
            match path.rfind('.') {
                Some(dot) => path = &path[..dot],
                None => return (0, 0),
            }
        }
    }
}

/// Every string in `value` as (dotted path, key, text); an array's items belong to its key.
fn string_values(path: &str, key: &str, value: &Spanned<DeValue<'_>>, into: &mut Vec<(String, String, String)>) {
    match value.get_ref() {
        DeValue::String(text) => into.push((path.to_string(), key.to_string(), text.to_string())),
        DeValue::Table(table) => {
            for (child_key, child) in table.iter() {
                let name = child_key.get_ref();
                let child_path = if path.is_empty() { name.to_string() } else { format!("{path}.{name}") };
                string_values(&child_path, name, child, into);
            }
        }
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                string_values(&format!("{path}.{i}"), key, item, into);
            }
        }
        _ => {}
    }
}

/// Where one `[[suite]]` is, for its runner's validation messages.
pub struct SuiteSite<'a> {
    pub file: &'a Path,
    /// Index of the suite among the file's `[[suite]]` tables.
    pub index: usize,
    /// The suite's name, or `#n` when it has none.
    pub label: String,
    /// Directory the config file is in: paths in the suite are relative to it.
    pub base_dir: &'a Path,
    /// The suite's `path`, as written.
    pub path: Option<&'a Path>,
    spans: &'a Spans,
}

impl SuiteSite<'_> {
    /// An error about `key` of this suite, at the line of its value.
    pub fn error(&self, key: &str, message: impl std::fmt::Display) -> ConfigError {
        ConfigError::new(
            self.file,
            self.spans.at(&format!("suite.{}.{key}", self.index)),
            format!("suite {}: {message}", self.label),
        )
    }
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
    pub formats: Vec<Format>,
    /// Directory with `summary.md.j2` / `comment.md.j2` overrides.
    pub templates: Option<PathBuf>,
    /// Folder keeping every run as `results_YYYY-MM-DD-HHMM.json` / `report_YYYY-MM-DD-HHMM.md`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results_folder: Option<PathBuf>,
    /// Mermaid chart of outcomes in the job summary (default on).
    pub charts: Option<bool>,
    /// The same chart in the PR comment (default off: comments stay short).
    pub comment_charts: Option<bool>,
    /// `report.html`'s cap in bytes (default 25 MiB; 0 = none): above it, passing and skipped
    /// cases move to sibling files in `report-files/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html_max_bytes: Option<u64>,
    /// Length of the slowest-tests and slowdowns lists (default 10; 0 = off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest: Option<usize>,
    /// A slowdown adds at least this many ms (default 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_min_ms: Option<f64>,
    /// ...and takes at least this many times the baseline's time (default 1.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_factor: Option<f64>,
}

impl ReportConfig {
    /// The per-test time settings, defaults filled in.
    pub fn timing(&self) -> crate::model::TimingSettings {
        let d = crate::model::TimingSettings::default();
        crate::model::TimingSettings {
            slowest: self.slowest.unwrap_or(d.slowest),
            slowdown_min_ms: self.slowdown_min_ms.unwrap_or(d.slowdown_min_ms),
            slowdown_factor: self.slowdown_factor.unwrap_or(d.slowdown_factor),
        }
    }
}

/// A report format as `--format` and `[report] formats` name it; `all` selects every one.
/// The names are clap's and serde's (kebab-case), so `--help`, a bad flag and a bad config value
/// all list the same possible values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// results.json (always written).
    Json,
    /// junit.xml.
    Junit,
    /// ctrf.json.
    Ctrf,
    /// summary.md, the job summary.
    Summary,
    /// comment.md, the PR comment.
    Comment,
    /// report.html.
    Html,
    /// Every format.
    All,
}

impl Format {
    /// The name written on the command line and in fcorr.toml.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Junit => "junit",
            Format::Ctrf => "ctrf",
            Format::Summary => "summary",
            Format::Comment => "comment",
            Format::Html => "html",
            Format::All => "all",
        }
    }
}

/// How the PR comment is written (`--comment`, `[github] comment`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CommentMode {
    /// Edit the sticky comment in place, or create it.
    #[default]
    Update,
    /// Delete the comment and post a new one (moves it to the bottom of the PR).
    Recreate,
    /// No comment.
    #[value(alias = "false", alias = "none")]
    #[serde(alias = "false", alias = "none")]
    Off,
}

/// When a new PR comment is posted (`--comment-when`, `[github] comment-when`); an existing one
/// is always kept current.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CommentWhen {
    /// On every run.
    #[default]
    Always,
    /// Only when the verdict is not a pass.
    OnFailure,
    /// Only when something changed against the baseline (or there is no baseline to say).
    OnChange,
}

/// How much the PR comment shows (`--comment-body`, `[github] comment-body`); smaller levels are
/// still used when a larger one exceeds GitHub's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CommentBody {
    /// Every case, when it fits.
    #[default]
    Full,
    /// Failing cases only.
    Failures,
    /// Suites and totals.
    Summary,
}

/// `[github]`: publishing settings (CLI flags and action inputs override).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct GithubConfig {
    pub comment: Option<CommentMode>,
    pub comment_when: Option<CommentWhen>,
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
    /// Write the job summary (default true).
    pub job_summary: Option<bool>,
    /// PR comment detail: `full`, `failures` or `summary` (default full).
    pub comment_body: Option<CommentBody>,
    /// A Dependabot run's token was granted write access by the workflow (default false).
    pub token_can_write: Option<bool>,
}

impl Config {
    /// Reads and validates a config file; `kinds` are the suite kinds it may name.
    pub(crate) fn load(path: &Path, kinds: &dyn KindKeys) -> Result<Config, FcorrError> {
        let text = crate::fsio::read_text(path, crate::fsio::CONFIG).map_err(|e| FcorrError::Config {
            file: path.to_path_buf(),
            message: "cannot read the configuration".into(),
            source: Some(Box::new(e.problem)),
        })?;
        Ok(Config::parse(&text, path, kinds)?)
    }

    /// Parses config text; `path` names the file in messages, and suite paths are relative to
    /// its directory. Each `[[suite]]` is read by the kind it names, one of `kinds`.
    pub(crate) fn parse(text: &str, path: &Path, kinds: &dyn KindKeys) -> Result<Config, ConfigError> {
        let toml_error = |e: toml::de::Error| {
            ConfigError::new(path, e.span().map(|span| line_col(text, span.start)).unwrap_or((0, 0)), e.message())
        };
        let mut root = DeTable::parse(text).map_err(toml_error)?;
        let mut spans = Spans::default();
        let whole = Spanned::new(root.span(), DeValue::Table(root.get_ref().clone()));
        Spans::index(text, "", &whole, &mut spans.positions);
        let mut strings = Vec::new();
        string_values("", "", &whole, &mut strings);
        let mut secret_vars: Vec<String> =
            strings.iter().flat_map(|(_, key, value)| crate::secrets::named_by(key, value)).collect();
        secret_vars.sort();
        secret_vars.dedup();
        let base_dir = path
            .parent()
            .map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p })
            .unwrap_or(Path::new("."))
            .to_path_buf();

        // `suite` is taken out and read through the runners; the rest is plain serde.
        let suite_tables = root.get_mut().remove("suite");
        let mut config = Config::deserialize(root.into_deserializer()).map_err(toml_error)?;
        config.base_dir = base_dir;
        config.source = Some(path.to_path_buf());
        config.spans = spans;
        config.secret_vars = secret_vars;
        if let Some(tables) = suite_tables {
            let DeValue::Array(items) = tables.get_ref() else {
                return Err(ConfigError::new(
                    path,
                    line_col(text, tables.span().start),
                    "`suite` must be an array of tables: write each suite as a [[suite]] table",
                ));
            };
            for (index, item) in items.iter().enumerate() {
                let suite = config.read_suite(text, path, index, item, kinds).map_err(|e| match e {
                    SuiteReadError::Toml(e) => toml_error(e),
                    SuiteReadError::Config(e) => e,
                })?;
                config.suites.push(suite);
            }
        }
        config.validate(path)?;
        config.check_pass_env(path, &strings)?;
        config.check_env_tables(path, &strings)?;
        Ok(config)
    }

    /// `{env:NAME}` is filled in only where a system under test reads it (`url`, `headers`).
    /// In an `env` table it would reach the commands as written, with NAME (a secret, since the
    /// file names it so) withheld from them: an error, never a literal passed on in silence.
    fn check_env_tables(&self, path: &Path, strings: &[(String, String, String)]) -> Result<(), ConfigError> {
        for (at, key, value) in strings {
            let parent = at.strip_suffix(key.as_str()).and_then(|p| p.strip_suffix('.')).unwrap_or_default();
            if parent != "env" && !parent.ends_with(".env") {
                continue;
            }
            let Some(var) = crate::secrets::env_refs(value).next() else { continue };
            let label = self.suite_label_at(at);
            let message = format!(
                "`{{env:{var}}}` in env.{key} is not expanded: env values reach the commands as written, and \
                 {var}, named by `{{env:...}}`, is a secret withheld from them; let the commands read it with \
                 `pass-env = [\"{var}\"]` and build {key} where they run (a test fixture, or the command itself)"
            );
            let message = match label {
                Some(label) => format!("suite {label}: {message}"),
                None => message,
            };
            return Err(ConfigError::new(path, self.spans.at(at), message));
        }
        Ok(())
    }

    /// The name (or `#n`) of the suite a dotted key path (`suite.2.env.X`) is in, if any.
    fn suite_label_at(&self, at: &str) -> Option<String> {
        let suite = at.strip_prefix("suite.").and_then(|rest| rest.split('.').next()?.parse::<usize>().ok());
        suite.map(|i| self.suites.get(i).and_then(|s| s.name.clone()).unwrap_or(format!("#{}", i + 1)))
    }

    /// Every `pass-env` name, wherever a suite takes one (project suites, command systems under
    /// test, benchmark executors), must be a variable fcorr withholds.
    fn check_pass_env(&self, path: &Path, strings: &[(String, String, String)]) -> Result<(), ConfigError> {
        for (at, key, name) in strings.iter().filter(|(_, key, _)| key == "pass-env") {
            if let Err(e) = crate::secrets::check_pass_env(name, &self.secret_vars) {
                let label = self.suite_label_at(at);
                let message = match label {
                    Some(label) => format!("suite {label}: {e}"),
                    None => format!("{key}: {e}"),
                };
                return Err(ConfigError::new(path, self.spans.at(at), message));
            }
        }
        Ok(())
    }

    /// Reads one `[[suite]]`: `kind` first, then the shared keys, then the kind's own keys
    /// through its runner, which also validates them.
    fn read_suite(
        &self,
        text: &str,
        path: &Path,
        index: usize,
        item: &Spanned<DeValue<'_>>,
        kinds: &dyn KindKeys,
    ) -> Result<SuiteConfig, SuiteReadError> {
        let position = line_col(text, item.span().start);
        let DeValue::Table(table) = item.get_ref() else {
            return Err(ConfigError::new(path, position, "each `suite` must be a table").into());
        };
        let mut shared = DeTable::default();
        let mut own = DeTable::default();
        for (key, value) in table.iter() {
            let target = if SHARED_SUITE_KEYS.contains(&key.get_ref().as_ref()) { &mut shared } else { &mut own };
            target.insert(key.clone(), value.clone());
        }
        let shared = SharedKeys::deserialize(Spanned::new(item.span(), shared).into_deserializer())
            .map_err(SuiteReadError::Toml)?;
        let label = shared.name.clone().unwrap_or_else(|| format!("#{}", index + 1));
        let site = SuiteSite {
            file: path,
            index,
            label,
            base_dir: &self.base_dir,
            path: shared.path.as_deref(),
            spans: &self.spans,
        };
        let kind_name = shared.kind.as_deref().unwrap_or(DEFAULT_KIND);
        let Some(kind) = kinds.names().into_iter().find(|k| *k == kind_name) else {
            return Err(site.error("kind", kinds.unknown(kind_name)).into());
        };
        let settings = kinds.load(kind, Spanned::new(item.span(), own), &site).map_err(|e| match e {
            LoadError::Toml(e) => {
                let message = e.message().to_string();
                let message = if message.starts_with("unknown field") {
                    format!("suite {}: {message}; every suite also takes {}", site.label, SHARED_SUITE_KEYS.join(", "))
                } else {
                    message
                };
                ConfigError::new(path, e.span().map(|s| line_col(text, s.start)).unwrap_or(position), message)
            }
            LoadError::Config(e) => e,
        })?;
        Ok(SuiteConfig {
            name: shared.name,
            path: shared.path,
            kind,
            policy: shared.policy,
            min_score: shared.min_score,
            weight: shared.weight,
            critical: shared.critical,
            quarantine: shared.quarantine,
            settings,
            weights: shared.weights,
            origin: Some(Origin { file: path.to_path_buf(), line: position.0 }),
        })
    }

    fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let at = |key: &str, message: String| Err(ConfigError::new(path, self.spans.at(key), message));
        // Only bank suites grade cases (0–100 each); graded anywhere else would score 0.
        let graded = "policy `graded` applies to bank suites (kind = \"bank\"), which grade each case; \
                      use strict, pass-rate or weighted here";
        if self.run.policy == Policy::Graded {
            return at("run.policy", graded.to_string());
        }
        if let Some(i) = self.suites.iter().position(|s| s.policy == Some(Policy::Graded) && s.kind != "bank") {
            return at(&format!("suite.{i}.policy"), graded.to_string());
        }
        for (i, suite) in self.suites.iter().enumerate() {
            let label = suite.name.clone().unwrap_or_else(|| format!("#{}", i + 1));
            if let Some(score) = suite.min_score
                && !(0.0..=100.0).contains(&score)
            {
                return at(
                    &format!("suite.{i}.min-score"),
                    format!("suite {label}: `min-score` must be between 0 and 100, got {score}"),
                );
            }
            if let Some(weight) = suite.weight
                && !(weight.is_finite() && weight >= 0.0)
            {
                return at(
                    &format!("suite.{i}.weight"),
                    format!("suite {label}: `weight` must be a non-negative number"),
                );
            }
            let w = suite.weights;
            for (key, value) in
                [("build", w.build), ("tests", w.tests), ("runtime", w.runtime), ("runtime-decay", w.runtime_decay)]
            {
                // NaN or a negative weight would make the score NaN or below zero.
                if !(value.is_finite() && value >= 0.0) {
                    return at(
                        &format!("suite.{i}.weights.{key}"),
                        format!("suite {label}: `weights.{key}` must be a non-negative number, got {value}"),
                    );
                }
            }
        }
        if let Some(ms) = self.report.slowdown_min_ms
            && !(ms.is_finite() && ms >= 0.0)
        {
            return at("report.slowdown-min-ms", format!("`slowdown-min-ms` must be a non-negative number, got {ms}"));
        }
        if let Some(factor) = self.report.slowdown_factor
            && !(factor.is_finite() && factor >= 1.0)
        {
            return at(
                "report.slowdown-factor",
                format!("`slowdown-factor` must be a number >= 1 (1.5 = 50% slower), got {factor}"),
            );
        }
        let mut names = std::collections::HashSet::new();
        for (i, suite) in self.suites.iter().enumerate() {
            if let Some(name) = &suite.name
                && !names.insert(name)
            {
                return at(
                    &format!("suite.{i}.name"),
                    format!("two suites are named `{name}`: names must be unique, they are ids"),
                );
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

/// The suite kinds a config may name and how each reads its own keys. The caller hands it in
/// (the registry, `crate::kinds::KINDS`), so reading configuration depends on no kind: the
/// kinds are built on configuration, not the other way round.
pub(crate) trait KindKeys {
    /// Every kind's name (`kind = "..."`), in the order errors list them.
    fn names(&self) -> Vec<&'static str>;

    /// Reads and validates the keys of a suite of kind `kind` (one of [`KindKeys::names`]): the
    /// table holds the suite's keys besides the shared ones. Returns them normalised (defaults
    /// filled in), as [`SuiteConfig::settings`] keeps them.
    fn load(&self, kind: &str, table: Spanned<DeTable<'_>>, site: &SuiteSite<'_>) -> Result<toml::Table, LoadError>;

    /// The message for a kind that is not one of [`KindKeys::names`].
    fn unknown(&self, kind: &str) -> String {
        format!("unknown kind `{kind}` (this version runs: {})", self.names().join(", "))
    }
}

/// A problem reading a kind's keys: serde's (with its span) or the runner's validation.
pub(crate) enum LoadError {
    Toml(toml::de::Error),
    Config(ConfigError),
}

/// A suite table's problem before it is turned into a [`ConfigError`] with positions.
enum SuiteReadError {
    Toml(toml::de::Error),
    Config(ConfigError),
}

impl From<ConfigError> for SuiteReadError {
    fn from(e: ConfigError) -> Self {
        SuiteReadError::Config(e)
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
        let config = Config::parse(text, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap();
        assert_eq!(config.run.policy, Policy::Weighted);
        assert_eq!(config.suites[0].policy, Some(Policy::PassRate));
        assert_eq!(config.suites[0].settings["commands"]["test"].as_str(), Some("make test"));
        assert_eq!(config.run.timeouts.test, Some(30));
        assert_eq!(config.suites[0].origin.as_ref().map(|o| o.line), Some(7));
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let text = "[[suite]]\npath = \"x\"\ntimeout = 5\n";
        let err = Config::parse(text, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("fcorr.toml"), "{err}");
        assert!(err.contains("line 3, column 1"), "{err}");
        assert!(err.contains("timeout"), "{err}");
    }

    #[test]
    fn an_env_reference_in_an_env_table_is_an_error_at_its_line() {
        let text = "[run]\nenv = { A = \"1\" }\n\n[[suite]]\nname = \"p\"\npath = \".\"\n\
                    env = { DB_URL = \"postgres://app:{env:DB_PASS}@db/app\" }\n";
        let err = Config::parse(text, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("fcorr.toml: line 7, column 18"), "{err}");
        assert!(err.contains("suite p: `{env:DB_PASS}` in env.DB_URL is not expanded"), "{err}");
        assert!(err.contains("`pass-env = [\"DB_PASS\"]`"), "{err}");
        // The run-wide table too; elsewhere (`url`, `headers`) `{env:NAME}` is filled in.
        let text = "[run]\nenv = { TOKEN = \"{env:API_TOKEN}\" }\n";
        let err = Config::parse(text, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("`{env:API_TOKEN}` in env.TOKEN"), "{err}");
        let plain = "[[suite]]\nname = \"p\"\npath = \".\"\nenv = { DB_URL = \"postgres://db/app\" }\n";
        assert!(Config::parse(plain, Path::new("fcorr.toml"), &crate::kinds::KINDS).is_ok());
    }

    #[test]
    fn unknown_key_of_another_kind_is_rejected_with_its_line() {
        // `commands` is a project key; an import suite must not silently ignore it.
        let text = "[[suite]]\nkind = \"import\"\nreports = [\"r.xml\"]\ncommands = { test = \"x\" }\n";
        let err = Config::parse(text, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("line 4, column 1"), "{err}");
        assert!(err.contains("commands"), "{err}");
    }

    #[test]
    fn unknown_kind_lists_the_registered_ones() {
        let text = "[[suite]]\nname = \"q\"\nkind = \"evaluation\"\n";
        let err = Config::parse(text, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("line 3, column 8"), "{err}");
        assert!(err.contains("unknown kind `evaluation`"), "{err}");
        for kind in ["project", "import", "benchmark", "eval", "bank"] {
            assert!(err.contains(kind), "{kind} is listed: {err}");
        }
    }

    #[test]
    fn graded_policy_is_for_bank_suites_only() {
        let err =
            Config::parse("[[suite]]\npath = 'x'\npolicy = \"graded\"\n", Path::new("f.toml"), &crate::kinds::KINDS)
                .unwrap_err();
        assert_eq!((err.line, err.column), (3, 10), "{err}");
        assert!(err.to_string().contains("applies to bank suites"), "{err}");
        assert!(Config::parse("[run]\npolicy = \"graded\"\n", Path::new("f.toml"), &crate::kinds::KINDS).is_err());
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.json"), r#"{"tests": []}"#).unwrap();
        let bank = "[[suite]]\nkind = \"bank\"\nmechanism = \"pattern\"\nbank = \"b.json\"\nrules = \"b.json\"\npolicy = \"graded\"\n";
        Config::parse(bank, &dir.path().join("fcorr.toml"), &crate::kinds::KINDS).unwrap();
    }

    /// Values serde accepts but that would misbehave later (#9 point 11), each rejected with
    /// the line and column of the value.
    #[test]
    fn impossible_values_are_rejected_at_their_line() {
        let cases: &[(&str, (usize, usize), &str)] = &[
            ("[[suite]]\npath = 'x'\nrunner = 'python'\nframework = 'vitest'\n", (4, 13), "unknown framework `vitest`"),
            ("[[suite]]\npath = 'x'\nframework = 'pytset'\n", (3, 13), "unknown framework `pytset`"),
            ("[[suite]]\npath = 'x'\nrunner = 'ruby'\n", (3, 10), "unknown runner `ruby`"),
            ("[[suite]]\npath = 'x'\nweights = { build = nan }\n", (3, 21), "`weights.build`"),
            ("[[suite]]\npath = 'x'\nweights = { tests = -5 }\n", (3, 21), "`weights.tests`"),
            ("[[suite]]\npath = 'x'\nreport-format = 'xunit9'\n", (3, 17), "unknown `report-format` `xunit9`"),
            ("[[suite]]\nkind = 'import'\nreports = ['ok.xml', 'a/[b.xml']\n", (3, 22), "malformed glob `a/[b.xml`"),
        ];
        for (text, position, message) in cases {
            let err = Config::parse(text, Path::new("fcorr.toml"), &crate::kinds::KINDS).unwrap_err();
            assert_eq!((err.line, err.column), *position, "{text}: {err}");
            assert!(err.to_string().contains(message), "{text}: {err}");
        }
        // Known names pass, in any case for node's labels; a test command takes any label.
        for ok in [
            "[[suite]]\npath = 'x'\nframework = 'Vitest'\n",
            "[[suite]]\npath = 'x'\nrunner = 'java'\nframework = 'gradle'\n",
            "[[suite]]\npath = 'x'\nframework = 'make'\ncommands = { test = 'make test' }\n",
        ] {
            assert!(Config::parse(ok, Path::new("fcorr.toml"), &crate::kinds::KINDS).is_ok(), "{ok}");
        }
    }

    #[test]
    fn wrong_type_is_reported() {
        let err = Config::parse("[run]\njobs = \"two\"\n", Path::new("f.toml"), &crate::kinds::KINDS)
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2"), "{err}");
        let err = Config::parse("[[suite]]\npath = 'x'\ninstall = 3\n", Path::new("f.toml"), &crate::kinds::KINDS)
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn duplicate_names_are_rejected() {
        let text = "[[suite]]\nname='a'\npath='x'\n[[suite]]\nname='a'\npath='y'\n";
        let err = Config::parse(text, Path::new("f.toml"), &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("line 5"), "{err}");
    }

    /// The configuration hash is in every results.json; splitting suite keys by kind must not
    /// change it, or every baseline would look like it ran with other settings. The expected
    /// values were computed by the code before the split.
    #[test]
    fn config_hash_is_what_it_was_before_kinds_had_their_own_keys() {
        // The bundled examples as they were at the split (the examples grow; this hash must not).
        let examples = std::fs::read_to_string("tests/fixtures/config/examples-before-kinds.toml").unwrap();
        let full = "[run]\njobs = 2\npolicy = \"weighted\"\ntimeouts = { test = 30 }\nenv = { A = \"1\" }\n[[suite]]\nname = \"api\"\npath = \"services/api\"\npolicy = \"pass-rate\"\nmin-score = 90\nweight = 2\ncritical = true\nrunner = \"python\"\nframework = \"pytest\"\ninstall = false\ntimeouts = { test = 120 }\nenv = { RUST_LOG = \"debug\" }\ncommands = { test = \"make test\", build = \"make\" }\nreports = [\"a/*.xml\"]\nreport-format = \"junit\"\nweights = { build = 20, tests = 60, runtime = 20, runtime-decay = 0.2 }\n[[suite]]\npath = \"b\"\n[gate]\nfail-on = [\"strict\", \"score<80\"]\nregression-tolerance = 0.5\n[report]\nformats = [\"json\"]\ntemplates = \"t\"\n[github]\ncomment = \"off\"\nbaseline-depth = 3\n";
        let hash = |text: &str| Config::parse(text, Path::new("f.toml"), &crate::kinds::KINDS).unwrap().hash();
        assert_eq!(hash(&examples), "1b6d547154f886a0");
        assert_eq!(hash(full), "007995e5d07f362b");
        assert_eq!(hash(""), "36b535dd39370be5");
    }

    #[test]
    fn shared_keys_list_matches_the_struct() {
        // Every listed key is accepted by the shared-keys struct, so none can fall through to a runner.
        for key in SHARED_SUITE_KEYS {
            let value = match *key {
                "name" | "path" | "kind" | "policy" => "\"strict\"",
                "critical" => "true",
                "weights" => "{}",
                "quarantine" => "[\"t\"]",
                _ => "1",
            };
            let text = format!("{key} = {value}\n");
            let table = DeTable::parse(&text).unwrap();
            assert!(SharedKeys::deserialize(table.into_deserializer()).is_ok(), "{key}");
        }
    }
}
