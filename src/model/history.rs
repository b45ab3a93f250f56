//! The history a run carries in results.json (top-level `history`): the last runs' points and
//! each case's last outcomes. Carrying it forward and reading it is `crate::history`'s job; the
//! types live with the model because a [`Run`](super::Run) holds one.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CaseStatus;

/// Runs kept: per case and in the run-level series.
pub const KEEP: usize = 20;

/// Most cases in each derived list (`flaky`, `failing`): on 100,000 cases with random failures
/// the full lists alone would cost more than the 4 bytes per case per run the history may add.
/// The letters in `cases` still hold every case; `*_total` counts them all.
pub const LISTED: usize = 100;

/// The recent past of a run, this run included (top-level `history` in results.json).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct History {
    /// Run-level points, oldest first, at most [`KEEP`], this run last (the trend chart's data).
    #[serde(default)]
    pub runs: Vec<RunPoint>,
    /// Per suite id: one space-separated token per case of that suite, in the order of the
    /// suite's `cases` array; each token holds the case's outcome letters, oldest first, this
    /// run last, at most [`KEEP`]: `p` passed, `f` failed, `e` error, `t` timeout, `s` skipped,
    /// `F` flaky (failed, then passed on a retry). See docs/results-schema.md.
    #[serde(default)]
    pub cases: BTreeMap<String, String>,
    /// Cases whose letters show flakiness (derived from `cases`, for readers that do not
    /// decode), in suite and case order, at most [`LISTED`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<FlakyCase>,
    /// How many cases show flakiness, listed or not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flaky_total: u64,
    /// Cases failing now that also failed in the run before (derived from `cases`), at most
    /// [`LISTED`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<FailingCase>,
    /// How many cases stay red, listed or not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failing_total: u64,
    /// A streamed suite's kept cases (the few in `Suite::cases`): their letters by case id, taken
    /// while `cases` is built from every case on disk, whose order the summaries cannot line up
    /// with the kept ones. Not part of results.json.
    #[serde(skip)]
    pub kept_letters: std::collections::HashMap<String, String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One run in the run-level series.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RunPoint {
    /// Commit tested, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
    /// RFC 3339 start time of that run.
    pub started_at: String,
    /// Combined score 0–100; `None` when nothing was scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Passed (flaky included) / ran, 0–1; `None` when nothing ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    pub total: u64,
    /// Passed and flaky cases.
    pub passed: u64,
    /// Failed, errored and timed-out cases.
    pub failed: u64,
}

/// A case whose recent outcomes flip between pass and fail, or that passed only on a retry.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct FlakyCase {
    pub suite_id: String,
    pub case_id: String,
    pub name: String,
    /// Runs in the window where it failed or needed a retry (`f`, `e`, `t`, `F`).
    pub failed: u32,
    /// Runs in the window where it ran (every letter but `s`).
    pub runs: u32,
    /// Its outcome in this run (`passed`, `failed`, `flaky`...).
    pub status: CaseStatus,
    /// The baseline's window did not show it as flaky.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub newly: bool,
}

/// A case that stays red: failing in this run and in the runs before it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct FailingCase {
    pub suite_id: String,
    pub case_id: String,
    pub name: String,
    /// Consecutive runs (skips not counted) it has failed in, this one included.
    pub runs: u32,
    /// Commit of the first run of the streak, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_sha: Option<String>,
    /// Start time of the first run of the streak.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The streak began before the oldest run kept: "since" is at least that long ago.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub before_window: bool,
}
