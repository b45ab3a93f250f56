//! What every report leads with: why the run failed (each gate reason once, a critical failure
//! named with its case), whether each suite passed its gate (apart from how many of its cases
//! failed), and the one group each failing case is listed in (new, still failing, failing, flaky).

use std::collections::HashMap;

use crate::compare::Change;
use crate::model::{Case, CaseStatus, GateKind, Policy, Run, Suite, SuiteStatus};

/// Whether a suite passed its gate and, when it did not, why in a few words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SuiteGate {
    pub(crate) passed: bool,
    /// `below 100`, `build failed`, `critical case failed`…; none when it passed.
    pub(crate) note: Option<String>,
}

/// A suite passes its gate when it was measured, its score meets its threshold and no gate
/// reason names it. A bank scoring 90 against 70 passes even with failed cases: the failed
/// count is shown beside it, not as its verdict.
pub(crate) fn suite_gate(run: &Run, suite: &Suite) -> SuiteGate {
    let mut notes: Vec<String> = Vec::new();
    let unmeasured = matches!(
        suite.status,
        SuiteStatus::InstallFailed
            | SuiteStatus::BuildFailed
            | SuiteStatus::Timeout
            | SuiteStatus::NoTests
            | SuiteStatus::Error
            | SuiteStatus::Cancelled
    );
    if suite.error.is_some() || unmeasured {
        let words = if suite.status == SuiteStatus::Timeout { "timed out" } else { suite.status.label() };
        notes.push(words.to_string());
    } else if !suite.score.met {
        notes.push(format!("below {}", super::filters::format_number(suite.score.threshold)));
    }
    let names_it = |name: &str| name == suite.name || name == suite.id;
    for reason in run.verdict.reasons.iter().filter(|r| r.suite.as_deref().is_some_and(names_it)) {
        let note = match reason.gate {
            GateKind::Critical if reason.message.starts_with("critical case") => "critical case failed",
            GateKind::Critical => "critical suite failed",
            GateKind::Regression => "new failures",
            GateKind::Empty if suite.status != SuiteStatus::NoTests => "no tests",
            // Strict, error and score reasons say what the notes above already say.
            _ => continue,
        };
        if !notes.iter().any(|n| n == note) {
            notes.push(note.to_string());
        }
    }
    SuiteGate { passed: notes.is_empty(), note: (!notes.is_empty()).then(|| notes.join(", ")) }
}

/// How a policy reads in a table header or beside a score.
pub(crate) fn policy_words(policy: Policy) -> &'static str {
    match policy {
        Policy::Strict => "strict",
        Policy::PassRate => "pass rate",
        Policy::Weighted => "weighted",
        Policy::Graded => "graded",
    }
}

/// The policy most suites use (the first one seen on a tie), said once in the score column's
/// header; the others are named beside their scores.
pub(crate) fn common_policy(run: &Run) -> Option<Policy> {
    let mut counts: Vec<(Policy, usize)> = Vec::new();
    for suite in &run.suites {
        match counts.iter_mut().find(|(p, _)| *p == suite.score.policy) {
            Some((_, n)) => *n += 1,
            None => counts.push((suite.score.policy, 1)),
        }
    }
    // `max_by_key` keeps the last maximum; reversed, the first one seen wins a tie.
    counts.into_iter().rev().max_by_key(|(_, n)| *n).map(|(p, _)| p)
}

/// One line of "why it failed".
#[derive(Debug)]
pub(crate) struct WhyItem<'a> {
    pub(crate) gate: GateKind,
    /// The suite, when the message does not name it already.
    pub(crate) suite: Option<&'a str>,
    /// Markdown-ish text: `code spans` are meant as code (see `filters::escape_with_code`).
    pub(crate) message: String,
    /// The critical case this reason is about: listed here, and not again among the failures.
    pub(crate) case: Option<(&'a Suite, &'a Case)>,
}

/// The verdict's reasons, critical failures first and each named with its case; the
/// regression gate's one reason per new failure becomes one line, since the failures section
/// lists those cases under "New failures".
pub(crate) fn why(run: &Run) -> Vec<WhyItem<'_>> {
    let mut critical = Vec::new();
    let mut items: Vec<WhyItem<'_>> = Vec::new();
    let mut new_failures = 0usize;
    let mut new_failures_at = None;
    for reason in &run.verdict.reasons {
        let suite = reason.suite.as_deref().and_then(|n| run.suites.iter().find(|s| s.name == n || s.id == n));
        if reason.gate == GateKind::Regression && reason.message.starts_with("new failure") {
            new_failures += 1;
            new_failures_at.get_or_insert(items.len());
            continue;
        }
        if reason.gate == GateKind::Critical
            && let Some(suite) = suite
            // The gate's own wording (gate.rs) names the case: the same text finds it again.
            && let Some(case) = suite.cases.iter().find(|c| {
                c.extra().critical && c.status.is_failure() && reason.message == format!("critical case `{}` {}", c.name, c.status.label())
            })
        {
            let message = case.message().map(first_line).filter(|m| !m.is_empty());
            critical.push(WhyItem {
                gate: reason.gate,
                suite: None,
                message: message.map_or_else(|| format!("{} (critical)", case.status.label()), str::to_string),
                case: Some((suite, case)),
            });
            continue;
        }
        let named = reason.suite.as_deref().filter(|n| !reason.message.contains(n));
        items.push(WhyItem { gate: reason.gate, suite: named, message: reason.message.clone(), case: None });
    }
    if let Some(at) = new_failures_at {
        let s = if new_failures == 1 { "" } else { "s" };
        items.insert(
            at,
            WhyItem {
                gate: GateKind::Regression,
                suite: None,
                message: format!("{new_failures} new failure{s} since the baseline, listed under New failures"),
                case: None,
            },
        );
    }
    critical.extend(items);
    critical
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

/// The group a case is listed in; each failing case is in exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Group {
    /// Failing now, passing (or absent) in the baseline.
    New,
    /// Failing now and in the baseline (or, without one, in the runs of the history).
    StillFailing,
    /// Failing, with nothing to compare it with.
    Failing,
    /// Passed on a retry.
    Flaky,
}

impl Group {
    /// Kebab-case key for templates.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Group::New => "new-failure",
            Group::StillFailing => "still-failing",
            Group::Failing => "failing",
            Group::Flaky => "flaky",
        }
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            Group::New => "New failures",
            Group::StillFailing => "Still failing",
            Group::Failing => "Failing",
            Group::Flaky => "Flaky: passed on a retry",
        }
    }

    pub(crate) fn icon(self) -> &'static str {
        match self {
            Group::New => "🆕",
            Group::StillFailing => "🟥",
            Group::Failing => "❌",
            Group::Flaky => "🔁",
        }
    }
}

/// Each compared case's change, by (suite id, case id).
pub(crate) fn changes_by_case(run: &Run) -> HashMap<(&str, &str), Change> {
    run.comparison
        .iter()
        .flat_map(|c| &c.cases)
        .map(|x| ((x.suite_id.as_str(), x.case_id.as_str()), x.change))
        .collect()
}

/// The group of a case, or none for a case that neither failed nor was flaky. `failing_before`:
/// the history shows it failing in the runs before this one.
pub(crate) fn group_of(case: &Case, change: Option<Change>, failing_before: bool) -> Option<Group> {
    if case.status == CaseStatus::Flaky {
        return Some(Group::Flaky);
    }
    if !case.status.is_failure() {
        return None;
    }
    Some(match change {
        Some(Change::NewFailure) => Group::New,
        Some(Change::StillFailing) => Group::StillFailing,
        _ if failing_before => Group::StillFailing,
        _ => Group::Failing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Gate, judge};
    use crate::model::{Policy, SuiteKind};

    fn case(name: &str, status: CaseStatus, critical: bool) -> Case {
        Case {
            name: name.into(),
            status,
            extra: crate::model::CaseExtra { critical, ..Default::default() }.packed(),
            ..Case::default()
        }
        .with_message(Some(format!("{name} broke\nmore")))
    }

    fn scored(name: &str, policy: Policy, threshold: f64, cases: Vec<Case>) -> Suite {
        let mut suite = Suite::new(name, name, SuiteKind::Eval);
        suite.cases = cases;
        suite.finalize_cases();
        suite.status = if suite.failures().count() > 0 { SuiteStatus::Failed } else { SuiteStatus::Passed };
        suite.score = crate::score::score_suite(&suite, policy, threshold, &crate::config::Weights::default());
        suite
    }

    fn run(suites: Vec<Suite>) -> Run {
        let mut run = Run::assemble(suites, time::OffsetDateTime::UNIX_EPOCH, None, None);
        run.verdict = judge(&run, &[Gate::Strict, Gate::Critical], 0.0);
        run
    }

    #[test]
    fn a_suite_over_its_threshold_passes_its_gate_even_with_failed_cases() {
        let ok = scored("bank", Policy::PassRate, 70.0, {
            let mut cases: Vec<Case> = (0..9).map(|i| case(&format!("ok{i}"), CaseStatus::Passed, false)).collect();
            cases.push(case("miss", CaseStatus::Failed, false));
            cases
        });
        let strict = scored("py", Policy::Strict, 100.0, vec![case("t", CaseStatus::Failed, false)]);
        let critical = scored(
            "eval",
            Policy::PassRate,
            50.0,
            vec![case("a", CaseStatus::Passed, false), case("danger", CaseStatus::Failed, true)],
        );
        let run = run(vec![ok, strict, critical]);
        assert_eq!(suite_gate(&run, &run.suites[0]), SuiteGate { passed: true, note: None });
        assert_eq!(suite_gate(&run, &run.suites[1]).note.as_deref(), Some("below 100"));
        assert_eq!(suite_gate(&run, &run.suites[2]).note.as_deref(), Some("critical case failed"));
    }

    #[test]
    fn critical_failures_come_first_named_with_their_case() {
        let strict = scored("py", Policy::Strict, 100.0, vec![case("t", CaseStatus::Failed, false)]);
        // The eval suite meets its threshold (1 of 2 passed, 50 ≥ 10): only its critical case fails.
        let critical = scored(
            "eval",
            Policy::PassRate,
            10.0,
            vec![case("ok", CaseStatus::Passed, false), case("dan`ger", CaseStatus::Failed, true)],
        );
        let run = run(vec![strict, critical]);
        let why = why(&run);
        assert_eq!(why.len(), 2, "{why:?}");
        assert_eq!(why[0].gate, GateKind::Critical);
        assert_eq!(why[0].case.map(|(s, c)| (s.name.as_str(), c.name.as_str())), Some(("eval", "dan`ger")));
        assert_eq!(why[0].message, "dan`ger broke");
        assert_eq!(why[1].gate, GateKind::Strict);
        assert_eq!(why[1].suite, None, "the strict message names its suite already");
    }

    #[test]
    fn the_common_policy_wins_ties_in_order() {
        let a = scored("a", Policy::PassRate, 0.0, vec![]);
        let b = scored("b", Policy::Strict, 100.0, vec![]);
        assert_eq!(common_policy(&run(vec![a.clone(), b.clone()])), Some(Policy::PassRate));
        assert_eq!(common_policy(&run(vec![a, b.clone(), b])), Some(Policy::Strict));
    }

    #[test]
    fn each_failing_case_has_one_group() {
        let failed = case("f", CaseStatus::Failed, false);
        assert_eq!(group_of(&failed, Some(Change::NewFailure), true), Some(Group::New));
        assert_eq!(group_of(&failed, Some(Change::StillFailing), false), Some(Group::StillFailing));
        assert_eq!(group_of(&failed, None, true), Some(Group::StillFailing));
        assert_eq!(group_of(&failed, None, false), Some(Group::Failing));
        assert_eq!(group_of(&case("p", CaseStatus::Passed, false), Some(Change::Fixed), false), None);
        assert_eq!(group_of(&case("r", CaseStatus::Flaky, false), Some(Change::Flaky), false), Some(Group::Flaky));
    }
}
