//! Comparison of a run with a baseline run: per-case changes and per-suite deltas.
//!
//! Cases are matched by their stable id. The comparison is stored in `results.json` and read by
//! every report; the gate's `regression` check uses it only when the baseline is fresh.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::CaseStatus;

/// Everything that changed between the baseline and this run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Comparison {
    pub baseline: BaselineInfo,
    /// Combined score now minus combined score then (points).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_delta: Option<f64>,
    /// Pass rate now minus pass rate then (percentage points).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate_delta: Option<f64>,
    pub counts_delta: CountsDelta,
    pub duration_delta_ms: i64,
    pub suites: Vec<SuiteDelta>,
    /// Cases whose outcome changed, new failures first.
    pub cases: Vec<CaseChange>,
}

/// Which run was compared with, and how trustworthy it is as a baseline.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Default)]
pub struct BaselineInfo {
    /// `file:<path>` or `github:<run id>`.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// How many first-parent commits the baseline is behind the wanted base commit (0 = exact).
    #[serde(default)]
    pub commits_behind: u32,
}

impl BaselineInfo {
    /// A baseline from exactly the wanted commit (or a user-given file) is fresh.
    pub fn is_fresh(&self) -> bool {
        self.commits_behind == 0
    }
}

/// Signed differences of case counts.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct CountsDelta {
    pub total: i64,
    pub passed: i64,
    pub failed: i64,
    pub error: i64,
    pub skipped: i64,
    pub timeout: i64,
    pub flaky: i64,
}

/// Per-suite differences.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct SuiteDelta {
    pub suite_id: String,
    pub name: String,
    /// Present in this run but not in the baseline.
    #[serde(default)]
    pub added: bool,
    /// Present in the baseline but not in this run.
    #[serde(default)]
    pub removed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_delta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate_delta: Option<f64>,
    pub counts_delta: CountsDelta,
    pub duration_delta_ms: i64,
}

/// How one case changed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Passed (or was absent-but-known) before, fails now.
    NewFailure,
    /// Failed before, passes now.
    Fixed,
    StillFailing,
    Added,
    Removed,
    NewlySkipped,
    /// Passed only after a retry in this run.
    Flaky,
}

/// One case whose outcome differs from the baseline.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct CaseChange {
    pub suite_id: String,
    pub case_id: String,
    pub name: String,
    pub change: Change,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<CaseStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<CaseStatus>,
}
