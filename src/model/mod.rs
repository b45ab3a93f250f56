//! The result model: the contract between every pipeline stage.
//!
//! A [`Run`] holds [`Suite`]s, a suite holds [`Case`]s. Execution and import fill it, scoring and
//! comparison annotate it, reports and publishing only read it. `results.json` is this model
//! serialised; its JSON Schema is generated from these types (`fcorr schema`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub mod comparison;
pub mod history;
pub mod incomplete;
pub mod streamed;
pub mod text;

pub use comparison::Comparison;
pub use streamed::{CaseStore, EveryCase, Streamed};
pub use text::Text;

/// A case's id ([`Case::id`]): text that lives inline up to 24 bytes (`Deref<Target = str>`,
/// serialised as a JSON string).
pub type CaseId = compact_str::CompactString;

/// A case's name ([`Case::name`]): inline up to 24 bytes, as [`CaseId`] is, so most names of a
/// big report need no allocation of their own.
pub type CaseName = compact_str::CompactString;

/// Text most cases share with the case before them ([`Case::classname`], [`Case::file`]): cases
/// come grouped by class and file, so readers hand out one copy for the whole group.
pub type SharedText = std::sync::Arc<str>;

/// The last [`SharedText`] handed out: the same text again is the same copy.
#[derive(Default)]
pub(crate) struct LastText(Option<SharedText>);

impl LastText {
    /// `text` as a [`SharedText`], the previous one when it is equal.
    pub(crate) fn share(&mut self, text: &str) -> SharedText {
        match &self.0 {
            Some(last) if **last == *text => last.clone(),
            _ => self.0.insert(SharedText::from(text)).clone(),
        }
    }
}

/// Version of the `results.json` layout; bumped only on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

/// One invocation of fcorr: every suite it ran or imported, scored and judged.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Run {
    pub schema_version: u32,
    pub fcorr_version: String,
    /// RFC 3339 start time.
    pub started_at: String,
    /// RFC 3339 finish time.
    pub finished_at: String,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitInfo>,
    /// sha256 of the effective configuration, so runs with different settings are told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_hash: Option<String>,
    #[serde(serialize_with = "streamed::serialize_suites")]
    pub suites: Vec<Suite>,
    pub totals: Counts,
    /// Weighted mean of suite scores (0–100); `None` when no suite was scored.
    pub score: Option<f64>,
    /// Absent when nothing was scored (no suite: a shard that drew none; `score` is null then):
    /// a run with nothing in it has no health grade, not a POOR one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// The stop signal that interrupted the run (`SIGINT`, `SIGTERM`, `SIGHUP`): the suites it
    /// cut short are `cancelled`, keeping what finished before it, and the verdict says so.
    /// In a merged run, each interrupted part's signal and which part it was (`SIGINT in shard
    /// 2/3 (label)`, `SIGTERM in label`), comma-separated. Absent when the run went to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    pub verdict: Verdict,
    /// Differences against a baseline run, when one was available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// The slowest cases and the biggest slowdowns against the baseline (`timing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
    /// The last runs' outcomes per case and run-level points, carried from the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<history::History>,
    /// fcorr's own warnings during the run (a baseline that could not be used, a pattern that
    /// matched nothing…), as printed on stderr; the job summary and the annotations list them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// `--shard K/N`: which slice this run was, and where every whole suite of the plan ran, so
    /// `fcorr merge` can name the suites of a shard whose results never arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardPlan>,
}

/// The slice a sharded run was and the whole suites of the full plan with the shard that runs
/// each (suites split by item run in every shard and are not listed).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ShardPlan {
    /// `K/N`.
    pub shard: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suites: Vec<ShardedSuite>,
    /// A digest (SHA-256, 16 hex digits) of what the whole run was cut from: the configuration
    /// and the files item-split suites take their items from (datasets, tasks files). Every
    /// shard of one run has the same; `fcorr merge` refuses shards whose digests differ.
    /// Absent in results written before fcorr recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<String>,
    /// The CI run the shard ran in (`GITHUB_REPOSITORY/GITHUB_RUN_ID` in GitHub Actions): the
    /// shards of one workflow run share it, so `fcorr merge` refuses a shard from another run.
    /// The run attempt is left out on purpose: re-running failed jobs keeps the artifacts of the
    /// jobs that passed, so one merge legitimately holds shards of several attempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_run: Option<String>,
}

/// One whole suite of a sharded plan and the shard (`K/N`) that runs it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ShardedSuite {
    pub id: String,
    pub name: String,
    pub kind: SuiteKind,
    pub shard: String,
}

/// Where the code under test came from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct GitInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default)]
    pub dirty: bool,
}

/// What kind of work a suite stands for: the kind of the suite runner that produced it.
// Variant descriptions in the JSON Schema come from the runner registry (`fcorr schema`), so
// kinds no runner implements are not advertised; they stay readable for compatibility.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteKind {
    #[default]
    Project,
    Benchmark,
    Eval,
    Bank,
    Import,
}

impl SuiteKind {
    /// What this kind's cases are, which decides the report sections that describe its suites.
    /// The one place outside `kinds/` that tells kinds apart: the model says what each kind's
    /// results look like, so reports read it from the results (old results.json files included).
    pub(crate) fn shape(self) -> CaseShape {
        match self {
            Self::Eval | Self::Benchmark => CaseShape::Items,
            Self::Bank => CaseShape::Graded,
            Self::Project | Self::Import => CaseShape::Tests,
        }
    }
}

/// What the cases of a suite are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseShape {
    /// Tests that pass or fail (projects, imported reports).
    Tests,
    /// Items asked of a system and measured (eval cases, benchmark tasks): pass rate, reasons,
    /// categories, usage and cost (`report::eval`).
    Items,
    /// Tests graded 0-100 (banks): averages, health, score distribution (`report::bank`).
    Graded,
}

/// The tag that holds a case's category (eval and bank cases); read it with [`Case::category`].
pub(crate) const CATEGORY_TAG: &str = "category";

/// One project, task suite, dataset or imported report set.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Suite {
    /// Stable id: the configured name, else the project path relative to the config/cwd.
    pub id: String,
    pub name: String,
    pub kind: SuiteKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<Detection>,
    #[serde(default)]
    pub phases: Vec<Phase>,
    // Every case; for a streamed suite (`streamed`), only those kept for the summaries.
    #[serde(default, serialize_with = "streamed::serialize_cases")]
    pub cases: Vec<Case>,
    pub counts: Counts,
    pub status: SuiteStatus,
    /// Where the case results came from (a report file, console text, nothing).
    pub results_source: ResultsSource,
    /// Problems found outside test cases: build errors, harness errors, parse errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
    /// Why the suite could not be measured, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<SuiteError>,
    pub score: Score,
    /// Weight of this suite in the combined score.
    pub weight: f64,
    /// A failure of this suite makes the whole run CRITICAL.
    #[serde(default)]
    pub critical: bool,
    pub duration_ms: u64,
    /// Full log of every command, relative to the output directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_file: Option<String>,
    /// Token/call/cost totals for kinds that have them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// `K/N` when this suite ran as shard K of N (`--shard`); `fcorr merge` joins the parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Set by `fcorr run --rerun-failed`: this suite reran only the cases that failed in the run
    /// that started at this time; `fcorr merge` lays its outcomes over that run's suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<String>,
    /// True when `--shard` split this suite by item: every shard ran its own slice of the
    /// suite's items (rather than the whole suite running in one shard), so `fcorr merge` joins
    /// the parts and a missing shard is an error. Set only in sharded runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub split_by_item: bool,
    /// Parts of the project this suite's runner found and did not run (a workspace member without
    /// tests, a crate excluded from the cargo workspace), each with the reason: what fcorr leaves
    /// out is said in every report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// `--stream`: every case is on disk, read back in order by [`Suite::every_case`]; `cases`
    /// holds the failing and flaky ones kept for the summaries. Never in `results.json` itself.
    #[serde(skip)]
    #[schemars(skip)]
    pub streamed: Option<Streamed>,
}

/// A member or module of a project that fcorr did not run, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct LeftOut {
    /// Its directory, as the suite's own path is written (`packages/docs`, `web/packages/docs`).
    pub path: String,
    /// Why it did not run (`no test script`, `excluded by [workspace] exclude in Cargo.toml`).
    pub reason: String,
}

/// How a suite ended, before any scoring policy is applied.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteStatus {
    /// Tests ran and every one passed (skips allowed).
    Passed,
    /// Tests ran and at least one failed or errored.
    Failed,
    /// Dependency installation failed; nothing further ran.
    InstallFailed,
    /// The build gate failed; tests did not run.
    BuildFailed,
    /// The test tool ran and collected zero tests. Never a pass.
    NoTests,
    /// A phase exceeded its timeout and was killed.
    Timeout,
    /// The suite could not be measured (see `error`).
    Error,
    /// Interrupted by the user.
    Cancelled,
}

impl SuiteStatus {
    /// Lower-case label used in tables.
    pub fn label(self) -> &'static str {
        match self {
            SuiteStatus::Passed => "passed",
            SuiteStatus::Failed => "failed",
            SuiteStatus::InstallFailed => "install failed",
            SuiteStatus::BuildFailed => "build failed",
            SuiteStatus::NoTests => "no tests",
            SuiteStatus::Timeout => "timeout",
            SuiteStatus::Error => "error",
            SuiteStatus::Cancelled => "cancelled",
        }
    }
}

/// Why a suite could not be measured; `kind` decides the exit code.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct SuiteError {
    pub kind: SuiteErrorKind,
    pub message: String,
    /// What the user can do about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Classes of suite errors.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteErrorKind {
    /// The suite's input is wrong: path missing, nothing detectable, malformed manifest.
    Input,
    /// A tool fcorr needs is not installed.
    ToolMissing,
    /// The tests ran but produced no parsable results, or results contradict the exit code.
    NoResults,
    /// A report file could not be read or parsed.
    BadReport,
    /// fcorr itself failed (I/O, spawn failure).
    Harness,
}

/// The language/framework chosen for a project and the evidence for it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Detection {
    /// Ecosystem (runner) name: `python`, `node`, `go`, `rust`, `java`, `command`.
    pub ecosystem: String,
    /// Language shown to people: `Python`, `TypeScript`, `Go`...
    pub language: String,
    /// Test framework: `pytest`, `jest`, `go test`, `maven`...
    pub framework: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_manager: Option<String>,
    /// 0.0–1.0.
    pub confidence: f64,
    /// Files and facts that led to this choice.
    pub markers: Vec<String>,
}

/// The stages of a project suite.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseKind {
    Install,
    Build,
    Test,
}

impl PhaseKind {
    /// Lower-case label.
    pub fn label(self) -> &'static str {
        match self {
            PhaseKind::Install => "install",
            PhaseKind::Build => "build",
            PhaseKind::Test => "test",
        }
    }
}

/// Outcome of one phase.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseStatus {
    Passed,
    Failed,
    Timeout,
    /// Not run: disabled, not needed, already up to date, or an earlier phase failed.
    Skipped,
    /// Could not be started (tool missing, spawn error).
    Error,
    Cancelled,
}

/// One phase (install, build or test) and the commands it ran.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Phase {
    pub kind: PhaseKind,
    /// The commands as a shell would show them, joined with ` && `.
    pub command: String,
    pub status: PhaseStatus,
    /// Exit code of the last command run; `None` when killed by a signal or not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// Head and tail of the combined output, capped.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub log_tail: String,
    /// Why the phase was skipped or what went wrong, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where a suite's cases came from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ResultsSource {
    /// Machine-readable report files in the given format.
    Report { format: String, files: Vec<String> },
    /// Counts scraped from console text; less trustworthy.
    ConsoleText { pattern: String },
    /// No results at all (the suite did not get that far, or nothing was found).
    None,
}

/// A problem that is not a test case: a build error, a parse error, a warning.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Which phase or stage it came from (`build`, `collect`...).
    #[schemars(with = "String")]
    pub source: DiagnosticSource,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

/// Which stage a [`Diagnostic`] came from, serialised as its lower-case name (`"build"`).
///
/// Names no variant knows are kept as [`DiagnosticSource::Other`] rather than rejected, so
/// results written by a newer fcorr (or a runner added later) still read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum DiagnosticSource {
    /// Compiling or installing the project before its tests ran.
    Build,
    /// Reading the test tool's report files.
    Collect,
    /// Measuring coverage.
    Coverage,
    /// A benchmark suite's measurements.
    Benchmark,
    /// Any other stage, by name.
    Other(String),
}

impl DiagnosticSource {
    /// The name as serialised.
    pub fn label(&self) -> &str {
        match self {
            DiagnosticSource::Build => "build",
            DiagnosticSource::Collect => "collect",
            DiagnosticSource::Coverage => "coverage",
            DiagnosticSource::Benchmark => "benchmark",
            DiagnosticSource::Other(name) => name,
        }
    }
}

impl From<&str> for DiagnosticSource {
    fn from(name: &str) -> Self {
        match name {
            "build" => DiagnosticSource::Build,
            "collect" => DiagnosticSource::Collect,
            "coverage" => DiagnosticSource::Coverage,
            "benchmark" => DiagnosticSource::Benchmark,
            other => DiagnosticSource::Other(other.to_string()),
        }
    }
}

impl From<String> for DiagnosticSource {
    fn from(name: String) -> Self {
        DiagnosticSource::from(name.as_str())
    }
}

impl From<DiagnosticSource> for String {
    fn from(source: DiagnosticSource) -> Self {
        source.label().to_string()
    }
}

impl std::fmt::Display for DiagnosticSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Lets readers compare with the serialised name (`diagnostic.source == "build"`).
impl PartialEq<&str> for DiagnosticSource {
    fn eq(&self, other: &&str) -> bool {
        self.label() == *other
    }
}

/// Severity of a diagnostic.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Error,
    Warning,
    Notice,
}

/// Outcome of one test case.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CaseStatus {
    Passed,
    Failed,
    /// The default, so a parser that forgets to set a status can never report a pass.
    #[default]
    Error,
    Skipped,
    Timeout,
    /// Failed at least once, then passed on a retry.
    Flaky,
}

impl CaseStatus {
    /// True for outcomes that count against the suite.
    pub fn is_failure(self) -> bool {
        matches!(self, CaseStatus::Failed | CaseStatus::Error | CaseStatus::Timeout)
    }

    /// Lower-case label.
    pub fn label(self) -> &'static str {
        match self {
            CaseStatus::Passed => "passed",
            CaseStatus::Failed => "failed",
            CaseStatus::Error => "error",
            CaseStatus::Skipped => "skipped",
            CaseStatus::Timeout => "timeout",
            CaseStatus::Flaky => "flaky",
        }
    }
}

/// One test case, task, dataset item or bank item.
///
/// Kept small because a run can hold millions (issue #27: ≤ 0.25 KiB per case): the fields every
/// case has are inline, the rest ([`CaseExtra`]) sit behind one box that stays `None` for a plain
/// passing case. `results.json` is unchanged by this: the extra fields are written flattened, in
/// the same order, and read back through [`CaseWire`], which also gives the JSON Schema.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(from = "CaseWire")]
pub struct Case {
    /// Stable across runs and machines: see [`case_id`]. Inline, not on the heap: ids are 16 hex
    /// digits and a short suffix (`#2`), at most 24 bytes (longer ones, which no reader makes,
    /// would still work: they go to the heap).
    pub id: CaseId,
    /// Inline up to 24 bytes ([`CaseName`]): most test names are that short.
    pub name: CaseName,
    /// Class, describe-path or package the case belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classname: Option<SharedText>,
    /// Path relative to the suite's root, `/`-separated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<SharedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub status: CaseStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Everything rarer, the message first (only failing and skipped cases have one, so it is
    /// not worth 24 bytes in every case); `None` when all of it is empty (see [`CaseExtra::packed`]).
    #[serde(flatten)]
    pub extra: Option<Box<CaseExtra>>,
}

/// The rarer fields of a [`Case`]: message, failure details, output, retries, grading; the fields
/// only eval and bank cases have sit behind one more box ([`EvalExtra`]), so the failing cases of
/// a test report (a tenth of a million-case import) do not carry them. Documented on
/// [`CaseWire`], whose field order `results.json` keeps.
#[derive(Debug, Clone, Serialize, Default)]
pub struct CaseExtra {
    /// Read it with [`Case::message`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Kept packed ([`Text`]): read it with [`Case::details`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Text>,
    /// Kept packed ([`Text`]): read it with [`Case::output`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Text>,
    #[serde(skip_serializing_if = "is_zero")]
    pub retries: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub critical: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub quarantined: bool,
    /// `None` when every eval field is empty (see [`EvalExtra::packed`]); read it with
    /// [`CaseExtra::eval`].
    #[serde(flatten)]
    pub eval: Option<Box<EvalExtra>>,
}

/// The fields of a [`Case`] that eval and bank cases have (tags, reasons, usage…), after the
/// other rare ones in `results.json`.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct EvalExtra {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectation_source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sut: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<AssertionOutcome>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

impl CaseExtra {
    /// The box for [`Case::extra`]: `None` when every field is empty, so a case built with
    /// `CaseExtra { ..Default::default() }.packed()` costs no allocation (an empty eval box is
    /// dropped first).
    pub fn packed(mut self) -> Option<Box<CaseExtra>> {
        self.eval = self.eval.take().and_then(|eval| eval.packed());
        (self != CaseExtra::default()).then(|| Box::new(self))
    }

    /// The eval fields, empty ones when there are none.
    pub fn eval(&self) -> &EvalExtra {
        self.eval.as_deref().unwrap_or(&NO_EVAL)
    }

    /// The eval fields for writing; boxes an empty set on first use.
    pub fn eval_mut(&mut self) -> &mut EvalExtra {
        self.eval.get_or_insert_with(Box::default)
    }
}

/// Equal when every field is: an empty eval box equals no box.
impl PartialEq for CaseExtra {
    fn eq(&self, other: &CaseExtra) -> bool {
        self.message == other.message
            && self.details == other.details
            && self.output == other.output
            && self.retries == other.retries
            && self.attempts == other.attempts
            && self.score == other.score
            && self.critical == other.critical
            && self.quarantined == other.quarantined
            && self.eval() == other.eval()
    }
}

impl EvalExtra {
    /// The box for [`CaseExtra::eval`]: `None` when every field is empty.
    pub fn packed(self) -> Option<Box<EvalExtra>> {
        (self != EvalExtra::default()).then(|| Box::new(self))
    }
}

/// Empty values the accessors of [`Case`] lend when the case has no [`CaseExtra`].
static NO_EXTRA: std::sync::LazyLock<CaseExtra> = std::sync::LazyLock::new(CaseExtra::default);
/// Empty values [`CaseExtra::eval`] lends when the case has no [`EvalExtra`].
static NO_EVAL: std::sync::LazyLock<EvalExtra> = std::sync::LazyLock::new(EvalExtra::default);

impl Case {
    /// The rare fields, empty ones when the case has none.
    pub fn extra(&self) -> &CaseExtra {
        self.extra.as_deref().unwrap_or(&NO_EXTRA)
    }

    /// The rare fields for writing; boxes an empty set on first use.
    pub fn extra_mut(&mut self) -> &mut CaseExtra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// Drops the box when a change left every rare field empty.
    pub fn repack(&mut self) {
        if let Some(extra) = self.extra.take() {
            self.extra = extra.packed();
        }
    }

    /// First line or short form of the failure.
    pub fn message(&self) -> Option<&str> {
        self.extra().message.as_deref()
    }

    /// Sets (or, with `None`, clears) the message; a case left with no rare field keeps no box.
    pub fn set_message(&mut self, message: Option<String>) {
        match message {
            Some(message) => self.extra_mut().message = Some(message),
            None => {
                if let Some(extra) = self.extra.as_mut() {
                    extra.message = None;
                    self.repack();
                }
            }
        }
    }

    /// Takes the message out, leaving none.
    pub fn take_message(&mut self) -> Option<String> {
        let message = self.extra.as_mut().and_then(|extra| extra.message.take());
        self.repack();
        message
    }

    /// The case with this message (a builder for literals: `Case { .. }.with_message(m)`).
    pub fn with_message(mut self, message: Option<String>) -> Case {
        self.set_message(message);
        self
    }

    /// Stack trace or long form of the failure. Read it through here, not the field: long text
    /// may be kept packed, and is then handed out unpacked (owned) on each call.
    pub fn details(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.extra().details.as_ref().map(Text::get)
    }

    /// Captured output, capped; read as [`Case::details`] is.
    pub fn output(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.extra().output.as_ref().map(Text::get)
    }

    /// Whether the case has details, without unpacking them.
    pub fn has_details(&self) -> bool {
        self.extra().details.is_some()
    }

    /// Whether the case has output, without unpacking it.
    pub fn has_output(&self) -> bool {
        self.extra().output.is_some()
    }

    /// Bytes of the details (0 when none), without unpacking them.
    pub fn details_len(&self) -> usize {
        self.extra().details.as_ref().map_or(0, Text::len)
    }

    /// Bytes of the output (0 when none), without unpacking it.
    pub fn output_len(&self) -> usize {
        self.extra().output.as_ref().map_or(0, Text::len)
    }

    /// Number of re-runs after the first attempt.
    pub fn retries(&self) -> u32 {
        self.extra().retries
    }

    /// Earlier attempts when the case was re-run.
    pub fn attempts(&self) -> &[Attempt] {
        &self.extra().attempts
    }

    /// Graded score 0–100 for kinds that grade (banks, evals).
    pub fn score(&self) -> Option<f64> {
        self.extra().score
    }

    /// A failure of this case makes the run CRITICAL.
    pub fn critical(&self) -> bool {
        self.extra().critical
    }

    /// Listed in a `quarantine`: its failure is reported but fails no gate.
    pub fn quarantined(&self) -> bool {
        self.extra().quarantined
    }

    /// Free-form tags: `category`, `topic`, `difficulty`...
    pub fn tags(&self) -> &BTreeMap<String, String> {
        &self.extra().eval().tags
    }

    /// Machine-readable reasons for the outcome.
    pub fn reasons(&self) -> &[Reason] {
        &self.extra().eval().reasons
    }

    /// Where the expectation came from.
    pub fn expectation_source(&self) -> Option<&str> {
        self.extra().eval().expectation_source.as_deref()
    }

    /// LLM usage, for kinds that call models.
    pub fn usage(&self) -> Option<&Usage> {
        self.extra().eval().usage.as_ref()
    }

    /// Eval suites: the system under test that answered.
    pub fn sut(&self) -> Option<&str> {
        self.extra().eval().sut.as_deref()
    }

    /// Eval suites: the prompt template the case was asked through.
    pub fn prompt(&self) -> Option<&str> {
        self.extra().eval().prompt.as_deref()
    }

    /// Every assertion's outcome, for an eval case judged by score.
    pub fn assertions(&self) -> &[AssertionOutcome] {
        &self.extra().eval().assertions
    }

    /// The case's category (eval datasets, banks), when it has one.
    pub(crate) fn category(&self) -> Option<&str> {
        self.tags().get(CATEGORY_TAG).map(String::as_str)
    }
}

/// Equal when every field is: an empty box equals no box.
impl PartialEq for Case {
    fn eq(&self, other: &Case) -> bool {
        self.id == other.id
            && self.name == other.name
            && self.classname == other.classname
            && self.file == other.file
            && self.line == other.line
            && self.status == other.status
            && self.duration_ms == other.duration_ms
            && self.extra() == other.extra()
    }
}

// A case as `results.json` spells it: read into this, then moved into a `Case`; its derived JSON
// Schema is the schema of `Case`, so the doc line below is the one `fcorr schema` shows.
/// One test case, task, dataset item or bank item.
#[derive(Deserialize, JsonSchema)]
#[serde(rename = "Case")]
struct CaseWire {
    /// Stable across runs and machines: see [`case_id`].
    #[schemars(with = "String")]
    id: CaseId,
    #[schemars(with = "String")]
    name: CaseName,
    /// Class, describe-path or package the case belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    classname: Option<String>,
    /// Path relative to the suite's root, `/`-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    status: CaseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_ms: Option<f64>,
    /// First line or short form of the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// Stack trace or long form of the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    details: Option<String>,
    /// Captured output, capped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    /// Number of re-runs after the first attempt.
    #[serde(default, skip_serializing_if = "is_zero")]
    retries: u32,
    /// Earlier attempts when the case was re-run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    attempts: Vec<Attempt>,
    /// Graded score 0–100 for kinds that grade (banks, evals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    /// A failure of this case makes the run CRITICAL.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    critical: bool,
    /// Listed in a `quarantine`: its failure is reported but fails no gate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    quarantined: bool,
    /// Free-form tags: `category`, `topic`, `difficulty`...
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    tags: BTreeMap<String, String>,
    /// Machine-readable reasons for the outcome (`incorrect`, `timeout`...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    reasons: Vec<Reason>,
    /// Where the expectation came from (file, version, human override).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expectation_source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    /// Eval suites: the system under test that answered, by its `[[suite.sut]]` name (set when
    /// the config names its systems). Several systems side by side: the case id ends `@<sut>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sut: Option<String>,
    /// Eval suites with `prompts`: the prompt template the case was asked through. Several
    /// prompts: the case id has `[<prompt>]` after the dataset id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prompt: Option<String>,
    /// Every assertion's outcome, for an eval case judged by score (weights, thresholds, graders
    /// such as `llm-rubric`); empty for cases judged pass/fail by their first failing check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    assertions: Vec<AssertionOutcome>,
    /// Eval suites with `cache = true`: the answer judged (of at least one attempt) came from the
    /// answer cache, not from a call of the system during this run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    cached: bool,
}

std::thread_local! {
    /// The class name and file of the case last read on this thread: the next case's, when
    /// equal, are the same copy (cases come grouped, so a suite holds one of each per group).
    static LAST_READ: std::cell::RefCell<(LastText, LastText)> = std::cell::RefCell::default();
    /// Set while [`read_slim`] runs on this thread: cases are slimmed as they are read.
    static SLIM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `read`, a deserialisation of results, keeping of each case only what a baseline is read
/// for: id, name, status, duration, score, and its reasons' codes and messages (the comparison,
/// the slowdowns and the history use nothing else). Output, failure details and the rest are
/// dropped case by case as they are read, so a 100,000-case baseline is never held whole.
pub(crate) fn read_slim<T>(read: impl FnOnce() -> T) -> T {
    /// Puts the flag back however `read` ends (a panic included).
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SLIM.set(self.0);
        }
    }
    let _restore = Restore(SLIM.replace(true));
    read()
}

impl From<CaseWire> for Case {
    fn from(w: CaseWire) -> Case {
        if SLIM.get() {
            let reasons = w.reasons.into_iter().map(|r| Reason {
                code: r.code,
                message: r.message,
                expected: None,
                actual: None,
            });
            return Case {
                id: w.id,
                name: w.name,
                status: w.status,
                duration_ms: w.duration_ms,
                extra: CaseExtra {
                    score: w.score,
                    eval: EvalExtra { reasons: reasons.collect(), ..EvalExtra::default() }.packed(),
                    ..CaseExtra::default()
                }
                .packed(),
                ..Case::default()
            };
        }
        Case {
            id: w.id,
            name: w.name,
            classname: w.classname.map(|c| LAST_READ.with_borrow_mut(|(class, _)| class.share(&c))),
            file: w.file.map(|f| LAST_READ.with_borrow_mut(|(_, file)| file.share(&f))),
            line: w.line,
            status: w.status,
            duration_ms: w.duration_ms,
            extra: CaseExtra {
                message: w.message,
                details: w.details.map(Text::from),
                output: w.output.map(Text::from),
                retries: w.retries,
                attempts: w.attempts,
                score: w.score,
                critical: w.critical,
                quarantined: w.quarantined,
                eval: EvalExtra {
                    tags: w.tags,
                    reasons: w.reasons,
                    expectation_source: w.expectation_source,
                    usage: w.usage,
                    sut: w.sut,
                    prompt: w.prompt,
                    assertions: w.assertions,
                    cached: w.cached,
                }
                .packed(),
            }
            .packed(),
        }
    }
}

impl JsonSchema for Case {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        CaseWire::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        CaseWire::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        CaseWire::json_schema(generator)
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An earlier attempt of a re-run case.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Attempt {
    pub status: CaseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
}

/// A machine-readable reason code with optional expected/actual values.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Reason {
    /// e.g. `incorrect`, `safety-mismatch`, `posix-mismatch`, `backend-error`, `timeout`.
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// How one assertion of an eval case came out.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct AssertionOutcome {
    /// The assertion type as written (`contains`, `not-contains`, `llm-rubric`...).
    #[serde(rename = "type")]
    pub kind: String,
    pub pass: bool,
    /// 0 to 1: 1 or 0 for pass/fail checks, the metric for similarity and graded ones.
    pub score: f64,
    /// Its share of the case's weighted score (default 1).
    pub weight: f64,
    /// The pass mark the score was held to (similarity, grader scores), or the limit for
    /// `latency` (ms) and `cost` (USD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Why it failed, or the grader's reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The grader could not judge (a script that printed no grade, a grader model that failed):
    /// the case is an error, never a pass.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub error: bool,
}

/// LLM usage for kinds that call models.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Usage {
    #[serde(default)]
    pub tokens: u64,
    #[serde(default)]
    pub llm_calls: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Prompt (input) tokens, when the system reported them apart from output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_in: Option<u64>,
    /// Completion (output) tokens, when reported apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_out: Option<u64>,
}

/// Case counts by status.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Counts {
    pub total: u64,
    pub passed: u64,
    pub failed: u64,
    pub error: u64,
    pub skipped: u64,
    pub timeout: u64,
    pub flaky: u64,
}

impl Counts {
    /// Counts of a slice of cases.
    pub fn of(cases: &[Case]) -> Counts {
        let mut counts = Counts::default();
        for case in cases {
            counts.add(case.status);
        }
        counts
    }

    /// Counts one more case.
    pub fn add(&mut self, status: CaseStatus) {
        self.total += 1;
        match status {
            CaseStatus::Passed => self.passed += 1,
            CaseStatus::Failed => self.failed += 1,
            CaseStatus::Error => self.error += 1,
            CaseStatus::Skipped => self.skipped += 1,
            CaseStatus::Timeout => self.timeout += 1,
            CaseStatus::Flaky => self.flaky += 1,
        }
    }

    /// Sums two counts.
    pub fn merge(&mut self, other: &Counts) {
        self.total += other.total;
        self.passed += other.passed;
        self.failed += other.failed;
        self.error += other.error;
        self.skipped += other.skipped;
        self.timeout += other.timeout;
        self.flaky += other.flaky;
    }

    /// Cases that actually ran (everything but skips).
    pub fn ran(&self) -> u64 {
        self.total - self.skipped
    }

    /// Cases that count as failures.
    pub fn failures(&self) -> u64 {
        self.failed + self.error + self.timeout
    }

    /// The failures reports show as "failed": failed and timed-out tests (JUnit's `<failure>`).
    /// Errors, a test that could not run or be judged, are shown apart, never as failed.
    pub fn failed_or_timed_out(&self) -> u64 {
        self.failed + self.timeout
    }

    /// Cases that count as passes (flaky cases passed in the end).
    pub fn passes(&self) -> u64 {
        self.passed + self.flaky
    }
}

/// What a case that failed and then passed on a retry counts as (`retries-policy`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RetryPolicy {
    /// A pass, shown as `flaky` (the default, as in nextest and Surefire).
    #[default]
    PassOnRetry,
    /// A failure: the case keeps every attempt and a `flaky` reason, but fails the suite
    /// (Gradle's `failOnPassedAfterRetry`).
    Fail,
}

/// Scoring policy of a suite.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash, Default, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// 100 when install and build passed and at least one test ran and all passed; else 0.
    #[default]
    Strict,
    /// passed / ran × 100.
    #[value(alias = "passrate")]
    PassRate,
    /// build 25 + pass rate × 50 + runtime score × 25.
    Weighted,
    /// Bank suites only: from each case's grade (0–100).
    Graded,
}

impl Policy {
    /// Kebab-case name as used in config and CLI.
    pub fn label(self) -> &'static str {
        match self {
            Policy::Strict => "strict",
            Policy::PassRate => "pass-rate",
            Policy::Weighted => "weighted",
            Policy::Graded => "graded",
        }
    }
}

/// A suite's score under its policy, with the parts that produced it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Score {
    pub policy: Policy,
    /// 0–100.
    pub value: f64,
    /// Minimum value that meets the policy.
    pub threshold: f64,
    /// `value >= threshold` and `value > 0` (a 0 proves nothing, even against `min-score = 0`).
    pub met: bool,
    pub components: Vec<ScoreComponent>,
}

/// One named contribution to a score.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ScoreComponent {
    pub name: String,
    /// Raw value of the measure (e.g. a pass rate 0–1, or 1/0 for a gate).
    pub value: f64,
    /// Points this component can contribute at most.
    pub weight: f64,
    /// Points it contributed.
    pub points: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Overall health of a run: CRITICAL on any critical failure, else by combined score (90/80/70).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Health {
    Excellent,
    Good,
    Fair,
    Poor,
    Critical,
}

impl Health {
    /// Upper-case label.
    pub fn label(self) -> &'static str {
        match self {
            Health::Excellent => "EXCELLENT",
            Health::Good => "GOOD",
            Health::Fair => "FAIR",
            Health::Poor => "POOR",
            Health::Critical => "CRITICAL",
        }
    }
}

/// The gate's decision.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Verdict {
    pub outcome: RunOutcome,
    /// Every reason the gate failed or could not judge; empty on a pass.
    #[serde(default)]
    pub reasons: Vec<GateReason>,
    /// Gates that were evaluated.
    #[serde(default)]
    pub gates: Vec<String>,
    /// Gates that were skipped and why (e.g. regression without a fresh baseline).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// Pass, fail, or could not judge.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
// The JSON Schema keeps the name it has always published.
#[schemars(rename = "Outcome")]
pub enum RunOutcome {
    Pass,
    Fail,
    /// Usage or configuration error (exit 2).
    UsageError,
    /// Harness or infrastructure error (exit 3).
    HarnessError,
}

impl RunOutcome {
    /// Process exit code for this outcome.
    pub fn exit_code(self) -> i32 {
        match self {
            RunOutcome::Pass => 0,
            RunOutcome::Fail => 1,
            RunOutcome::UsageError => 2,
            RunOutcome::HarnessError => 3,
        }
    }
}

/// One reason behind a verdict.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct GateReason {
    pub gate: GateKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    pub message: String,
}

/// Which gate gave a reason (serialised as its lower-case name, as in `fail-on`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum GateKind {
    /// A suite below its policy's threshold.
    Strict,
    /// A critical suite or case failed.
    Critical,
    /// The combined score is below `score<N`.
    Score,
    /// A new failure or a score drop against a fresh baseline.
    Regression,
    /// No tests ran.
    Empty,
    /// A suite could not be measured (not a gate one can turn off).
    Error,
    /// A stop signal ended the run before it finished (not a gate one can turn off).
    Interrupted,
}

impl GateKind {
    /// The name as serialised.
    pub fn label(self) -> &'static str {
        match self {
            GateKind::Strict => "strict",
            GateKind::Critical => "critical",
            GateKind::Score => "score",
            GateKind::Regression => "regression",
            GateKind::Empty => "empty",
            GateKind::Error => "error",
            GateKind::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for GateKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Lets readers of results compare with the serialised name (`reason.gate == "strict"`).
impl PartialEq<&str> for GateKind {
    fn eq(&self, other: &&str) -> bool {
        self.label() == *other
    }
}

/// Stable id of a case: same test, same id, on any machine and in any run.
///
/// Derived from the suite id, the `/`-separated file path relative to the suite root, the class
/// path and the full name (parameters included). Absolute paths must be made relative before
/// calling this, or ids would differ between machines.
pub fn case_id(suite_id: &str, file: Option<&str>, classname: Option<&str>, name: &str) -> String {
    key_id(case_key(suite_id, file, classname, name), 1).into()
}

/// The id text of a key: 16 lower-case hex digits (as `{:016x}` writes them), then `#n` for the
/// `n`th case with the same key. Written digit by digit: `format!` costs more than the SHA-256.
fn key_id(key: u64, n: u32) -> CaseId {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [0u8; 16];
    for (i, digit) in digits.iter_mut().enumerate() {
        *digit = DIGITS[(key >> (60 - 4 * i)) as usize & 0xf];
    }
    // Hex digits are ASCII: the conversion cannot fail.
    let mut id = CaseId::from_utf8(&digits[..]).unwrap_or_default();
    if n > 1 {
        id.push('#');
        id.push_str(&n.to_string());
    }
    id
}

/// Gives every case the id it has when no other case shares its identity and returns the keys,
/// in order, for numbering the ones that do. SHA-256 over 100,000 cases is a good part of an
/// import's parse, so big suites are split between threads.
fn first_ids(suite_id: &str, cases: &mut [Case]) -> Vec<u64> {
    const PER_THREAD: usize = 25_000;
    let work = |cases: &mut [Case], keys: &mut [u64]| {
        let mut scratch = Vec::new();
        for (case, slot) in cases.iter_mut().zip(keys) {
            let key = case_key_in(&mut scratch, suite_id, case.file.as_deref(), case.classname.as_deref(), &case.name);
            case.id = key_id(key, 1);
            *slot = key;
        }
    };
    let mut keys = vec![0; cases.len()];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4).min(cases.len() / PER_THREAD);
    if threads < 2 {
        work(cases, &mut keys);
        return keys;
    }
    let size = cases.len().div_ceil(threads);
    let mut parts = cases.chunks_mut(size).zip(keys.chunks_mut(size));
    let Some((first, first_keys)) = parts.next() else {
        return keys;
    };
    std::thread::scope(|scope| {
        let mut others = Vec::new();
        for part in parts {
            // The part goes to the thread once it is running: one that cannot be started leaves
            // its part to this thread.
            let (give, take) = std::sync::mpsc::channel::<(&mut [Case], &mut [u64])>();
            let started = std::thread::Builder::new().spawn_scoped(scope, move || {
                if let Ok((cases, keys)) = take.recv() {
                    work(cases, keys);
                }
            });
            let (cases, keys) = match started {
                Ok(thread) => match give.send(part) {
                    Ok(()) => {
                        others.push(thread);
                        continue;
                    }
                    Err(std::sync::mpsc::SendError(part)) => part,
                },
                Err(_) => part,
            };
            work(cases, keys);
        }
        work(first, first_keys);
        for thread in others {
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    keys
}

/// Hashes a case key by using it as is: its bits already come from SHA-256, so hashing them
/// again (SipHash, the map's default) would only cost time.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed (see `write_u64`); any other input is folded in, not dropped.
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// The 64 bits behind [`case_id`] (its hex digits are these, big-endian).
fn case_key(suite_id: &str, file: Option<&str>, classname: Option<&str>, name: &str) -> u64 {
    case_key_in(&mut Vec::new(), suite_id, file, classname, name)
}

/// [`case_key`], with the hashed bytes gathered in `scratch` first: one SHA-256 pass over one
/// buffer costs less than eight small updates, and the buffer serves case after case.
fn case_key_in(scratch: &mut Vec<u8>, suite_id: &str, file: Option<&str>, classname: Option<&str>, name: &str) -> u64 {
    scratch.clear();
    for part in [suite_id, file.unwrap_or(""), classname.unwrap_or(""), name] {
        scratch.extend_from_slice(part.as_bytes());
        // A separator that cannot occur in names keeps ("a","bc") and ("ab","c") apart.
        scratch.push(0);
    }
    let digest = Sha256::digest(&scratch[..]);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// RFC 3339 text of a timestamp.
pub fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_else(|_| t.unix_timestamp().to_string())
}

impl Suite {
    /// A suite with nothing run yet; stages fill it in.
    pub fn new(id: impl Into<String>, name: impl Into<String>, kind: SuiteKind) -> Suite {
        Suite {
            id: id.into(),
            name: name.into(),
            kind,
            path: None,
            detection: None,
            phases: Vec::new(),
            cases: Vec::new(),
            counts: Counts::default(),
            status: SuiteStatus::Error,
            results_source: ResultsSource::None,
            diagnostics: Vec::new(),
            error: None,
            score: Score { policy: Policy::Strict, value: 0.0, threshold: 100.0, met: false, components: Vec::new() },
            weight: 1.0,
            critical: false,
            duration_ms: 0,
            log_file: None,
            usage: None,
            shard: None,
            rerun_of: None,
            split_by_item: false,
            left_out: Vec::new(),
            streamed: None,
        }
    }

    /// Assigns stable ids to every case and recomputes counts.
    ///
    /// Two cases with the same identity in one suite (a test reported twice) get `#2`, `#3`...
    /// appended in order, so ids stay unique and still stable across runs.
    pub fn finalize_cases(&mut self) {
        type KeyMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;
        // The keys shared by several cases, found by sorting the keys (8 bytes a case) rather
        // than counting every key in a map (a million-case import's map was 36 MB, its peak):
        // repeats are rare, and only they are counted below.
        let mut keys = first_ids(&self.id, &mut self.cases);
        keys.sort_unstable();
        let mut repeated: KeyMap<u32> =
            keys.windows(2).filter(|pair| pair[0] == pair[1]).map(|pair| (pair[0], 0)).collect();
        drop(keys);
        if !repeated.is_empty() {
            for case in &mut self.cases {
                // Every id is still the 16 hex digits of its key (`first_ids`): the key reads back.
                let key = case.id.get(..16).and_then(|hex| u64::from_str_radix(hex, 16).ok());
                if let Some((key, n)) = key.and_then(|key| repeated.get_mut(&key).map(|n| (key, n))) {
                    *n += 1;
                    if *n > 1 {
                        case.id = key_id(key, *n);
                    }
                }
            }
        }
        self.counts = Counts::of(&self.cases);
    }

    /// The phase of the given kind, if it was planned.
    pub fn phase(&self, kind: PhaseKind) -> Option<&Phase> {
        self.phases.iter().find(|p| p.kind == kind)
    }

    /// Cases that failed, errored or timed out.
    pub fn failures(&self) -> impl Iterator<Item = &Case> {
        self.cases.iter().filter(|c| c.status.is_failure())
    }

    /// Why a suite that ran no test proves nothing, in the words the gate and every report use:
    /// one that collected tests and skipped each did not "collect none". Read from the counts,
    /// which a streamed suite keeps whole.
    pub fn no_tests_reason(&self) -> String {
        let skipped = self.counts.skipped;
        if skipped > 0 && skipped == self.counts.total {
            format!("every collected test was skipped ({skipped})")
        } else {
            "the test tool collected no tests".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_and_write_as_text_and_classes_read_in_a_row_share_one_copy() {
        // A repeat's id (`#2`) stays inline; order and equality are those of the text.
        let (a, b) = (key_id(0xff, 1), key_id(0xff, 2));
        assert_eq!((a.as_str(), b.as_str()), ("00000000000000ff", "00000000000000ff#2"));
        assert!(!b.is_heap_allocated() && a < b && a == "00000000000000ff");
        let text = r#"[{"id":"00000000000000ff#2","name":"x","classname":"C","file":"f.py","status":"passed"},
                       {"id":"1","name":"y","classname":"C","file":"f.py","status":"failed"}]"#;
        let cases: Vec<Case> = serde_json::from_str(text).unwrap();
        assert_eq!(cases[0].id, b);
        assert!(!cases[0].name.is_heap_allocated(), "a short name is read inline");
        let (c0, c1) = (cases[0].classname.as_ref().unwrap(), cases[1].classname.as_ref().unwrap());
        assert!(std::sync::Arc::ptr_eq(c0, c1), "one copy of the class name for both cases");
        assert!(std::sync::Arc::ptr_eq(cases[0].file.as_ref().unwrap(), cases[1].file.as_ref().unwrap()));
        let written = serde_json::to_string(&cases[0]).unwrap();
        assert_eq!(
            written,
            r#"{"id":"00000000000000ff#2","name":"x","classname":"C","file":"f.py","status":"passed"}"#
        );
    }

    #[test]
    fn case_id_is_stable_and_separates_parts() {
        let a = case_id("s", Some("t.py"), None, "test_x[1-2]");
        assert_eq!(a, case_id("s", Some("t.py"), None, "test_x[1-2]"));
        assert_ne!(a, case_id("s", Some("t.py"), None, "test_x[1-3]"));
        assert_ne!(case_id("s", Some("ab"), Some("c"), "n"), case_id("s", Some("a"), Some("bc"), "n"));
        assert_eq!(a.len(), 16);
    }

    #[test]
    fn ids_are_the_formatted_key() {
        // The id text is a contract (baselines key on it): exactly `{:016x}` and `#n`.
        for key in [0, 1, 0xabc, u64::MAX, 0x0123_4567_89ab_cdef, 0xf000_0000_0000_000f] {
            assert_eq!(key_id(key, 1), format!("{key:016x}"));
            assert_eq!(key_id(key, 2), format!("{key:016x}#2"));
            assert_eq!(key_id(key, 12), format!("{key:016x}#12"));
        }
        // A known id, computed before the formatting changed.
        assert_eq!(case_id("s", Some("t.py"), None, "test_x[1-2]"), "96c3a205f2d22d88");
    }

    /// results.json keeps plain names; names no variant knows survive a round trip.
    #[test]
    fn diagnostic_sources_serialise_as_names() {
        for (name, source) in [
            ("build", DiagnosticSource::Build),
            ("collect", DiagnosticSource::Collect),
            ("lint", DiagnosticSource::Other("lint".into())),
        ] {
            assert_eq!(serde_json::to_value(&source).unwrap(), serde_json::json!(name));
            assert_eq!(serde_json::from_value::<DiagnosticSource>(serde_json::json!(name)).unwrap(), source);
            assert_eq!(DiagnosticSource::from(name), source);
            assert!(source == name);
        }
    }

    /// A million-case import holds a million cases and a boxed [`CaseExtra`] for each failing or
    /// skipped one (#27: at most 0.25 KiB a case, all told): the message sits with the other rare
    /// fields, the eval fields in a box of their own (they were 144 and 288 bytes).
    #[test]
    fn cases_and_their_rare_fields_stay_small() {
        assert!(std::mem::size_of::<Case>() <= 120, "{} bytes", std::mem::size_of::<Case>());
        assert!(std::mem::size_of::<CaseExtra>() <= 112, "{} bytes", std::mem::size_of::<CaseExtra>());
        // An empty eval box is no box, so equality and `packed` still see an empty extra.
        let mut case = Case::default();
        case.extra_mut().eval_mut();
        assert_eq!(case, Case::default());
        case.repack();
        assert!(case.extra.is_none());
    }

    #[test]
    fn duplicate_cases_get_suffixes() {
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        for _ in 0..3 {
            suite.cases.push(Case { name: "dup".into(), status: CaseStatus::Passed, ..Case::default() });
        }
        suite.finalize_cases();
        assert!(suite.cases[1].id.ends_with("#2"));
        assert!(suite.cases[2].id.ends_with("#3"));
        assert_eq!(suite.counts.total, 3);
    }

    #[test]
    fn big_suites_get_the_same_ids_on_several_threads() {
        // Enough cases for the threaded path, with duplicates across the parts it splits into.
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        for i in 0..60_000 {
            let name = format!("t{}", i % 40_000);
            suite.cases.push(Case { name: name.into(), status: CaseStatus::Passed, ..Case::default() });
        }
        suite.finalize_cases();
        let mut seen = std::collections::HashMap::new();
        for case in &suite.cases {
            let id = case_id("s", None, None, &case.name);
            let n = seen.entry(id.clone()).or_insert(0);
            *n += 1;
            let expected = if *n == 1 { id } else { format!("{id}#{n}") };
            assert_eq!(case.id, expected);
        }
    }
}

/// Per-test time: the slowest cases of the run and the cases that got slower than in the
/// baseline by more than both thresholds (computed by `timing`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Default)]
pub struct Timing {
    /// Up to `settings.slowest` cases, slowest first.
    pub slowest: Vec<SlowCase>,
    /// Up to `settings.slowest` slowdowns, biggest increase first; empty without a baseline.
    #[serde(default)]
    pub slowdowns: Vec<Slowdown>,
    /// Slowdowns over the thresholds, listed or not.
    #[serde(default)]
    pub slowdowns_total: usize,
    /// True when a baseline was compared (an empty `slowdowns` then means none, not unknown).
    #[serde(default)]
    pub compared: bool,
    pub settings: TimingSettings,
}

/// How the timing lists are chosen (`[report]` `slowest`, `slowdown-min-ms`, `slowdown-factor`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TimingSettings {
    /// Length of each list (default 10; 0 turns the lists off).
    pub slowest: usize,
    /// A slowdown must add at least this many milliseconds (default 100), so timer noise on
    /// fast tests is ignored.
    pub slowdown_min_ms: f64,
    /// ...and take at least this many times the baseline's duration (default 1.5).
    pub slowdown_factor: f64,
}

impl Default for TimingSettings {
    fn default() -> Self {
        TimingSettings { slowest: 10, slowdown_min_ms: 100.0, slowdown_factor: 1.5 }
    }
}

/// One of the slowest cases.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct SlowCase {
    pub suite_id: String,
    pub case_id: String,
    pub name: String,
    pub duration_ms: f64,
}

/// A case that took longer than in the baseline.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Slowdown {
    pub suite_id: String,
    pub case_id: String,
    pub name: String,
    pub before_ms: f64,
    pub after_ms: f64,
    /// `after_ms - before_ms`.
    pub change_ms: f64,
    /// `after_ms / before_ms` (none when the baseline took 0 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
}
