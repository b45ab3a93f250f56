//! The comparison of a run with its baseline, as stored in `results.json` (`comparison`): the
//! types live with the model because a [`Run`](super::Run) carries one; `compare` computes them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CaseStatus, Counts};

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
    /// The baseline has suites, none of them with an id this run has: it is another project's or
    /// configuration's, so no score or pass-rate change is computed and `regression` is not
    /// judged against it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_common_suite: bool,
    /// Set when the baseline's `config_hash` differs from this run's (both known): a change may
    /// come from the configuration rather than the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_change: Option<ConfigChange>,
}

/// The `config_hash` of the baseline and of this run, when they differ.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct ConfigChange {
    pub baseline: String,
    pub now: String,
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
    /// The baseline workflow run's conclusion (`success`, `failure`…), when it came from GitHub.
    /// A red run's artifact is still a baseline: its failures are the "before" of this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
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
    /// Did not fail before (passed, skipped, or is new in this run), fails now.
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
    /// The baseline case's first reason code (eval cases: `incorrect`, `timeout`...), so reports
    /// can show `incorrect → passed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_reason: Option<String>,
    /// The case's first reason code now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_reason: Option<String>,
    /// Graded score then and now, for graded cases (banks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_before: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_after: Option<f64>,
    /// What changed in the grading, e.g. `−20: false positive X`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `now - then` as a signed number, saturating: a baseline's counts and durations are input,
/// and a hostile one (2^63 tests) must not overflow.
pub fn signed_difference(now: u64, then: u64) -> i64 {
    (i128::from(now) - i128::from(then)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl CountsDelta {
    /// `now - then`, field by field.
    pub fn between(now: &Counts, then: &Counts) -> CountsDelta {
        CountsDelta {
            total: signed_difference(now.total, then.total),
            passed: signed_difference(now.passed, then.passed),
            failed: signed_difference(now.failed, then.failed),
            error: signed_difference(now.error, then.error),
            skipped: signed_difference(now.skipped, then.skipped),
            timeout: signed_difference(now.timeout, then.timeout),
            flaky: signed_difference(now.flaky, then.flaky),
        }
    }
}

impl SuiteDelta {
    /// A removed suite's tests in the baseline and how many of them failed there (failed, error
    /// or timed out): its counts delta is minus its baseline counts.
    pub fn gone_counts(&self) -> (i64, i64) {
        let d = self.counts_delta;
        (d.total.saturating_neg(), d.failed.saturating_add(d.error).saturating_add(d.timeout).saturating_neg())
    }
}

impl Comparison {
    /// Cases with the given change.
    pub fn with_change(&self, change: Change) -> impl Iterator<Item = &CaseChange> {
        self.cases.iter().filter(move |c| c.change == change)
    }

    /// Cases that failed in the baseline and are gone from this run (their suite still here).
    pub fn removed_failing(&self) -> impl Iterator<Item = &CaseChange> {
        self.with_change(Change::Removed).filter(|c| c.before.is_some_and(CaseStatus::is_failure))
    }

    /// What a reader must know before trusting the deltas, one sentence each: the baseline is
    /// unrelated to this run ([`Comparison::unrelated`]), or was made with another configuration.
    pub fn cautions(&self) -> Vec<String> {
        let mut cautions: Vec<String> = self.unrelated().into_iter().collect();
        // With no suite in common, another configuration goes without saying.
        if let Some(change) = self.config_change.as_ref().filter(|_| !self.no_common_suite) {
            cautions.push(format!(
                "the baseline was made with another configuration (config hash {} there, {} here): a change may \
                 come from the configuration rather than the code",
                change.baseline, change.now
            ));
        }
        cautions
    }

    /// When the baseline shares no suite with this run: why nothing was judged against it, with
    /// the suites of both sides (up to five each), so a renamed suite shows as the cause. Every
    /// surface that shows a verdict says it: `regression` was skipped, which a PASS alone hides.
    pub fn unrelated(&self) -> Option<String> {
        if !self.no_common_suite {
            return None;
        }
        // Up to five names, then "…"; `None` for no suite at all.
        let names = |on_side: fn(&SuiteDelta) -> bool| {
            let all: Vec<&str> = self.suites.iter().filter(|s| on_side(s)).map(|s| s.name.as_str()).collect();
            let more = if all.len() > 5 { ", …" } else { "" };
            (!all.is_empty()).then(|| format!("{}{more}", all[..all.len().min(5)].join(", ")))
        };
        // With no suite in common, every suite of this run is new to the baseline.
        let now =
            names(|s| s.added).map_or_else(|| "this run has no suite".to_string(), |n| format!("this run has {n}"));
        Some(format!(
            "the baseline has none of this run's suites (it has {}; {now}): it is from another project or \
             configuration, so regression is not checked against it and no score change is computed",
            names(|s| s.removed).unwrap_or_default()
        ))
    }

    /// Whether anything a reader would care about changed (used by `comment-when = on-change`).
    pub fn has_changes(&self) -> bool {
        self.cases.iter().any(|c| c.change != Change::StillFailing)
            || self.score_delta.is_some_and(|d| d != 0.0)
            || self.suites.iter().any(|s| s.added || s.removed || s.score_delta.is_some_and(|d| d != 0.0))
    }
}
