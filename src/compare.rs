//! Comparison of a run with a baseline run: per-case changes and per-suite deltas.
//!
//! Cases are matched by their stable id. The comparison is stored in `results.json` and read by
//! every report; the gate's `regression` check uses it only when the baseline is fresh.

use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{Case, CaseStatus, Counts, Run, Suite};

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

/// Pass rate of counts (passes / cases that ran × 100); `None` when nothing ran.
fn pass_rate(counts: &Counts) -> Option<f64> {
    let ran = counts.ran();
    (ran > 0).then(|| counts.passes() as f64 * 100.0 / ran as f64)
}

fn sub(now: u64, then: u64) -> i64 {
    now as i64 - then as i64
}

impl CountsDelta {
    /// `now - then`, field by field.
    pub fn between(now: &Counts, then: &Counts) -> CountsDelta {
        CountsDelta {
            total: sub(now.total, then.total),
            passed: sub(now.passed, then.passed),
            failed: sub(now.failed, then.failed),
            error: sub(now.error, then.error),
            skipped: sub(now.skipped, then.skipped),
            timeout: sub(now.timeout, then.timeout),
            flaky: sub(now.flaky, then.flaky),
        }
    }
}

fn opt_delta(now: Option<f64>, then: Option<f64>) -> Option<f64> {
    Some(round2(now? - then?))
}

/// Rounds to two decimals so deltas like `0.30000000000000004` do not leak into reports.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Classifies one case, given its status then (`None`: not in the baseline) and now
/// (`None`: not in this run). Returns `None` when nothing worth reporting changed.
///
/// Decisions:
/// - a case that is new in this run and fails is a **new failure** (`before: None`): a broken
///   test added by the change is exactly what a regression gate should stop;
/// - a case that is new and passes (or is skipped) is **added**;
/// - flaky now (failed, then passed on a retry) is **flaky** whatever it was before;
/// - failing before and skipped now is **newly skipped**, not fixed;
/// - skipped before and passing now is no change worth a line.
pub fn classify(before: Option<CaseStatus>, after: Option<CaseStatus>) -> Option<Change> {
    use CaseStatus::*;
    match (before, after) {
        (None, None) => None,
        (Some(_), None) => Some(Change::Removed),
        (_, Some(Flaky)) => Some(Change::Flaky),
        (None, Some(now)) if now.is_failure() => Some(Change::NewFailure),
        (None, Some(_)) => Some(Change::Added),
        (Some(then), Some(now)) if then.is_failure() && now.is_failure() => Some(Change::StillFailing),
        (Some(_), Some(now)) if now.is_failure() => Some(Change::NewFailure),
        (Some(then), Some(Passed)) if then.is_failure() => Some(Change::Fixed),
        (Some(then), Some(Skipped)) if then != Skipped => Some(Change::NewlySkipped),
        _ => None,
    }
}

/// Compares `run` with `baseline`. Cases are matched by their stable id within suites matched
/// by suite id.
///
/// When a suite produced no cases in this run (install or build failed, or it errored), its
/// baseline cases are not listed one by one as removed: the suite's status and score delta
/// already say what happened, and hundreds of "removed" lines would bury it.
pub fn compare(run: &Run, baseline: &Run, info: BaselineInfo) -> Comparison {
    let mut suites = Vec::new();
    let mut cases = Vec::new();
    let base_suites: HashMap<&str, &Suite> = baseline.suites.iter().map(|s| (s.id.as_str(), s)).collect();
    let now_ids: HashSet<&str> = run.suites.iter().map(|s| s.id.as_str()).collect();

    for suite in &run.suites {
        let base = base_suites.get(suite.id.as_str()).copied();
        suites.push(suite_delta(suite, base));
        let base_cases: HashMap<&str, &Case> =
            base.map(|b| b.cases.iter().map(|c| (c.id.as_str(), c)).collect()).unwrap_or_default();
        for case in &suite.cases {
            let base_case = base_cases.get(case.id.as_str()).copied();
            let before = base_case.map(|c| c.status);
            if let Some(change) = classify(before, Some(case.status)) {
                let mut change = change_of(&suite.id, case, change, before, Some(case.status));
                change.before_reason = base_case.and_then(first_reason);
                if let Some(base_case) = base_case
                    && base_case.score.is_some()
                    && case.score.is_some()
                {
                    change.score_before = base_case.score;
                    change.score_after = case.score;
                    change.note = crate::bank::summary::delta_note(base_case, case);
                }
                cases.push(change);
            }
        }
        if let Some(base) = base
            && !suite.cases.is_empty()
        {
            let now_cases: HashSet<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
            for case in base.cases.iter().filter(|c| !now_cases.contains(c.id.as_str())) {
                cases.push(change_of(&suite.id, case, Change::Removed, Some(case.status), None));
            }
        }
    }
    for base in baseline.suites.iter().filter(|s| !now_ids.contains(s.id.as_str())) {
        suites.push(SuiteDelta {
            suite_id: base.id.clone(),
            name: base.name.clone(),
            added: false,
            removed: true,
            baseline_score: Some(base.score.value),
            score: None,
            score_delta: None,
            pass_rate_delta: None,
            counts_delta: CountsDelta::between(&Counts::default(), &base.counts),
            duration_delta_ms: -(base.duration_ms as i64),
        });
    }
    // New failures first (the enum's order), then by suite and name for stable output.
    cases.sort_by(|a, b| (a.change, &a.suite_id, &a.name).cmp(&(b.change, &b.suite_id, &b.name)));

    Comparison {
        baseline: info,
        score_delta: opt_delta(run.score, baseline.score),
        pass_rate_delta: opt_delta(pass_rate(&run.totals), pass_rate(&baseline.totals)),
        counts_delta: CountsDelta::between(&run.totals, &baseline.totals),
        duration_delta_ms: run.duration_ms as i64 - baseline.duration_ms as i64,
        suites,
        cases,
    }
}

fn suite_delta(suite: &Suite, base: Option<&Suite>) -> SuiteDelta {
    match base {
        Some(base) => SuiteDelta {
            suite_id: suite.id.clone(),
            name: suite.name.clone(),
            added: false,
            removed: false,
            baseline_score: Some(base.score.value),
            score: Some(suite.score.value),
            score_delta: Some(round2(suite.score.value - base.score.value)),
            pass_rate_delta: opt_delta(pass_rate(&suite.counts), pass_rate(&base.counts)),
            counts_delta: CountsDelta::between(&suite.counts, &base.counts),
            duration_delta_ms: suite.duration_ms as i64 - base.duration_ms as i64,
        },
        None => SuiteDelta {
            suite_id: suite.id.clone(),
            name: suite.name.clone(),
            added: true,
            removed: false,
            baseline_score: None,
            score: Some(suite.score.value),
            score_delta: None,
            pass_rate_delta: None,
            counts_delta: CountsDelta::between(&suite.counts, &Counts::default()),
            duration_delta_ms: suite.duration_ms as i64,
        },
    }
}

fn change_of(
    suite_id: &str,
    case: &Case,
    change: Change,
    before: Option<CaseStatus>,
    after: Option<CaseStatus>,
) -> CaseChange {
    // `case` is the baseline's case when it was removed, this run's otherwise.
    let reason = first_reason(case);
    CaseChange {
        suite_id: suite_id.to_string(),
        case_id: case.id.clone(),
        name: case.name.clone(),
        change,
        before,
        after,
        before_reason: if after.is_none() { reason.clone() } else { None },
        after_reason: if after.is_some() { reason } else { None },
        score_before: None,
        score_after: None,
        note: None,
    }
}

fn first_reason(case: &Case) -> Option<String> {
    case.reasons.first().map(|r| r.code.clone())
}

impl Comparison {
    /// Cases with the given change.
    pub fn with_change(&self, change: Change) -> impl Iterator<Item = &CaseChange> {
        self.cases.iter().filter(move |c| c.change == change)
    }

    /// Whether anything a reader would care about changed (used by `comment-when = on-change`).
    pub fn has_changes(&self) -> bool {
        self.cases.iter().any(|c| c.change != Change::StillFailing)
            || self.score_delta.is_some_and(|d| d != 0.0)
            || self.suites.iter().any(|s| s.added || s.removed || s.score_delta.is_some_and(|d| d != 0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseStatus::*, SuiteKind};

    #[test]
    fn classifies_every_transition() {
        assert_eq!(classify(Some(Passed), Some(Failed)), Some(Change::NewFailure));
        assert_eq!(classify(Some(Passed), Some(Timeout)), Some(Change::NewFailure));
        assert_eq!(classify(Some(Skipped), Some(Error)), Some(Change::NewFailure));
        assert_eq!(classify(None, Some(Failed)), Some(Change::NewFailure));
        assert_eq!(classify(Some(Failed), Some(Passed)), Some(Change::Fixed));
        assert_eq!(classify(Some(Error), Some(Failed)), Some(Change::StillFailing));
        assert_eq!(classify(None, Some(Passed)), Some(Change::Added));
        assert_eq!(classify(Some(Passed), None), Some(Change::Removed));
        assert_eq!(classify(Some(Passed), Some(Skipped)), Some(Change::NewlySkipped));
        assert_eq!(classify(Some(Failed), Some(Skipped)), Some(Change::NewlySkipped));
        assert_eq!(classify(Some(Passed), Some(Flaky)), Some(Change::Flaky));
        assert_eq!(classify(Some(Passed), Some(Passed)), None);
        assert_eq!(classify(Some(Skipped), Some(Skipped)), None);
        assert_eq!(classify(Some(Skipped), Some(Passed)), None);
    }

    fn suite(id: &str, cases: &[(&str, CaseStatus)]) -> Suite {
        let mut s = Suite::new(id, id, SuiteKind::Import);
        for (name, status) in cases {
            s.cases.push(Case { name: name.to_string(), status: *status, ..Case::default() });
        }
        s.finalize_cases();
        s
    }

    fn run(suites: Vec<Suite>) -> Run {
        Run::assemble(suites, time::OffsetDateTime::now_utc(), None, None)
    }

    #[test]
    fn suites_without_cases_do_not_list_removed_cases() {
        let base = run(vec![suite("a", &[("x", Passed), ("y", Passed)])]);
        let now = run(vec![suite("a", &[])]);
        let c = compare(&now, &base, BaselineInfo::default());
        assert!(c.cases.is_empty());
        assert_eq!(c.suites[0].counts_delta.passed, -2);
    }

    #[test]
    fn new_failures_come_first_and_suites_are_matched_by_id() {
        let base =
            run(vec![suite("a", &[("x", Passed), ("y", Failed), ("gone", Passed)]), suite("old", &[("z", Passed)])]);
        let now = run(vec![suite("a", &[("x", Failed), ("y", Passed), ("new", Passed)]), suite("b", &[])]);
        let c = compare(&now, &base, BaselineInfo::default());
        let changes: Vec<_> = c.cases.iter().map(|x| (x.name.as_str(), x.change)).collect();
        assert_eq!(
            changes,
            vec![("x", Change::NewFailure), ("y", Change::Fixed), ("new", Change::Added), ("gone", Change::Removed)]
        );
        assert!(c.suites.iter().any(|s| s.suite_id == "b" && s.added));
        assert!(c.suites.iter().any(|s| s.suite_id == "old" && s.removed));
        assert_eq!(c.counts_delta.total, 3 - 4);
        assert!(c.has_changes());
    }
}
