//! The unified view of a run's bank suites: per-bank averages and hard fails,
//! topic / pattern-type / handler breakdowns, score distribution, expectation sources, critical
//! failures, the weighted combined score and health, and per-test score changes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{Case, CaseShape, Health, Run, Suite};
use crate::score::{distribution, interpret, is_hard_fail};

/// One bank suite, summarised.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct BankSummary {
    pub suite_id: String,
    pub name: String,
    pub mechanism: String,
    pub tests: usize,
    /// Mean case score, one decimal.
    pub average: f64,
    pub hard_fails: usize,
    pub weight: f64,
    /// `[range, count]` in bucket order, every bucket present.
    pub distribution: Vec<(String, usize)>,
    /// What `groups` is grouped by: `topic` (semantic), `pattern_type`, `handler` (state).
    pub group_by: Option<String>,
    /// Per topic / pattern type / handler, best average first.
    pub groups: Vec<Group>,
    /// Tests per expectation source kind: `original`, `calibration`, `human_override`.
    pub sources: BTreeMap<String, usize>,
}

/// One row of a breakdown.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Group {
    pub key: String,
    pub average: f64,
    pub tests: usize,
    pub hard_fails: usize,
}

/// A failed case, with what a reader needs to act on it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct FailureRow {
    pub suite: String,
    pub test_id: String,
    pub title: String,
    pub score: f64,
    pub interpretation: String,
    pub message: String,
    pub details: String,
    pub source: String,
}

/// A test whose score changed against the baseline: "V2-017 90 → 70 (−20: false positive X)".
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct ScoreChange {
    pub suite: String,
    pub test_id: String,
    pub before: f64,
    pub after: f64,
    pub delta: f64,
    pub note: String,
}

/// Everything the bank report sections show.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct BankOverview {
    pub banks: Vec<BankSummary>,
    /// Weighted mean of bank averages, renormalised over the banks present, one decimal.
    pub combined: f64,
    pub total_tests: usize,
    pub hard_fails: usize,
    pub health: Health,
    /// Critical failures first in every report: one line each.
    pub critical_failures: Vec<FailureRow>,
    /// Lowest scores first, at most [`TOP_FAILURES`].
    pub failures: Vec<FailureRow>,
    pub failure_count: usize,
    pub sources: BTreeMap<String, usize>,
    /// Per-test score changes against the baseline, biggest drop first.
    pub changes: Vec<ScoreChange>,
}

/// How many failures the report details.
pub(crate) const TOP_FAILURES: usize = 20;

/// Health (`score::health_ladder`), on the unrounded combined score.
pub(crate) fn health(critical_failures: usize, combined: f64, hard_fails: usize) -> Health {
    crate::score::health_ladder(critical_failures > 0, combined, hard_fails > 0)
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn mean(scores: &[f64]) -> f64 {
    if scores.is_empty() { 0.0 } else { scores.iter().sum::<f64>() / scores.len() as f64 }
}

/// A case that failed critically: flagged critical and failed (see `run::run_bank`).
pub(crate) fn is_critical_failure(case: &Case) -> bool {
    case.extra().critical && case.status.is_failure()
}

fn mechanism(suite: &Suite) -> String {
    suite.detection.as_ref().map(|d| d.framework.clone()).unwrap_or_default()
}

fn row(suite: &Suite, case: &Case) -> FailureRow {
    let score = case.extra().score.unwrap_or(0.0);
    FailureRow {
        suite: suite.name.clone(),
        test_id: case.name.clone().into(),
        title: case.extra().eval().tags.get("title").cloned().unwrap_or_default(),
        score,
        interpretation: interpret(score as u32).to_string(),
        message: case.message().map(str::to_string).unwrap_or_default(),
        details: case.details().map(Into::into).unwrap_or_default(),
        source: case.extra().eval().expectation_source.clone().unwrap_or_default(),
    }
}

fn summarise(suite: &Suite) -> BankSummary {
    let mechanism = mechanism(suite);
    let scores: Vec<f64> = suite.cases.iter().map(|c| c.extra().score.unwrap_or(0.0)).collect();
    let group_by = match mechanism.as_str() {
        "semantic" => Some("topic"),
        "pattern" => Some("pattern_type"),
        "state" => Some("handler"),
        _ => None,
    };
    let mut groups: BTreeMap<String, (Vec<f64>, usize)> = BTreeMap::new();
    if let Some(tag) = group_by {
        for case in &suite.cases {
            for key in case.extra().eval().tags.get(tag).into_iter().flat_map(|t| t.split(',')) {
                let entry = groups.entry(key.to_string()).or_default();
                entry.0.push(case.extra().score.unwrap_or(0.0));
                entry.1 += usize::from(is_hard_fail(case));
            }
        }
    }
    let mut groups: Vec<Group> = groups
        .into_iter()
        .map(|(key, (scores, hard_fails))| Group {
            key,
            average: round1(mean(&scores)),
            tests: scores.len(),
            hard_fails,
        })
        .collect();
    // Best average first; ties by name for stable output.
    groups.sort_by(|a, b| b.average.total_cmp(&a.average).then_with(|| a.key.cmp(&b.key)));
    let mut sources: BTreeMap<String, usize> =
        ["original", "calibration", "human_override"].iter().map(|k| (k.to_string(), 0)).collect();
    for case in &suite.cases {
        if let Some(kind) = case.extra().eval().tags.get("source") {
            *sources.entry(kind.clone()).or_default() += 1;
        }
    }
    BankSummary {
        suite_id: suite.id.clone(),
        name: suite.name.clone(),
        mechanism,
        tests: suite.cases.len(),
        average: round1(mean(&scores)),
        hard_fails: suite.cases.iter().filter(|c| is_hard_fail(c)).count(),
        weight: suite.weight,
        distribution: distribution(scores.iter().map(|s| *s as u32))
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect(),
        group_by: group_by.map(str::to_string),
        groups,
        sources,
    }
}

/// The bank overview of a run; `None` when the run has no bank suite.
pub(crate) fn overview(run: &Run) -> Option<BankOverview> {
    let suites: Vec<&Suite> = run.suites.iter().filter(|s| s.kind.shape() == CaseShape::Graded).collect();
    if suites.is_empty() {
        return None;
    }
    let banks: Vec<BankSummary> = suites.iter().map(|s| summarise(s)).collect();
    let weight: f64 = banks.iter().map(|b| b.weight).sum();
    // The combined score weighs the (rounded) bank averages; health uses it
    // unrounded, the report shows one decimal.
    let combined = if weight > 0.0 { banks.iter().map(|b| b.average * b.weight).sum::<f64>() / weight } else { 0.0 };
    let mut critical_failures = Vec::new();
    let mut failures = Vec::new();
    for suite in &suites {
        for case in &suite.cases {
            if is_critical_failure(case) {
                critical_failures.push(row(suite, case));
            }
            if case.status.is_failure() {
                failures.push(row(suite, case));
            }
        }
    }
    failures.sort_by(|a, b| a.score.total_cmp(&b.score).then_with(|| a.test_id.cmp(&b.test_id)));
    let failure_count = failures.len();
    failures.truncate(TOP_FAILURES);
    let hard_fails = banks.iter().map(|b| b.hard_fails).sum();
    let mut sources: BTreeMap<String, usize> = BTreeMap::new();
    for bank in &banks {
        for (kind, n) in &bank.sources {
            *sources.entry(kind.clone()).or_default() += n;
        }
    }
    Some(BankOverview {
        health: health(critical_failures.len(), combined, hard_fails),
        combined: round1(combined),
        total_tests: banks.iter().map(|b| b.tests).sum(),
        hard_fails,
        banks,
        critical_failures,
        failures,
        failure_count,
        sources,
        changes: changes(run),
    })
}

/// Per-test score changes recorded by the comparison, biggest drop first.
fn changes(run: &Run) -> Vec<ScoreChange> {
    let Some(comparison) = &run.comparison else { return Vec::new() };
    let bank_suites: BTreeMap<&str, &Suite> =
        run.suites.iter().filter(|s| s.kind.shape() == CaseShape::Graded).map(|s| (s.id.as_str(), s)).collect();
    let mut out: Vec<ScoreChange> = comparison
        .cases
        .iter()
        .filter_map(|c| {
            let suite = bank_suites.get(c.suite_id.as_str())?;
            let (before, after) = (c.score_before?, c.score_after?);
            (before != after).then(|| ScoreChange {
                suite: suite.name.clone(),
                test_id: c.name.clone(),
                before,
                after,
                delta: after - before,
                note: c.note.clone().unwrap_or_default(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.delta.total_cmp(&b.delta).then_with(|| a.test_id.cmp(&b.test_id)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseStatus, Detection, Reason, SuiteKind};

    #[test]
    fn health_boundaries_match_the_seed() {
        use Health::*;
        let table = [
            // (critical failures, combined, hard fails, health)
            (1, 100.0, 0, Critical),
            (2, 10.0, 5, Critical),
            (0, 100.0, 0, Excellent),
            (0, 90.0, 0, Excellent),
            (0, 90.0, 1, Good),
            (0, 89.99, 0, Good),
            (0, 80.0, 0, Good),
            (0, 79.99, 0, Fair),
            (0, 70.0, 3, Fair),
            (0, 69.99, 0, Poor),
            (0, 0.0, 0, Poor),
        ];
        for (critical, combined, hard_fails, want) in table {
            assert_eq!(health(critical, combined, hard_fails), want, "{critical} {combined} {hard_fails}");
        }
    }

    fn case(id: &str, score: f64, topic: &str, hard: bool, critical: bool) -> Case {
        let mut c = Case {
            name: id.into(),
            status: if score < 100.0 { CaseStatus::Failed } else { CaseStatus::Passed },
            extra: crate::model::CaseExtra { score: Some(score), critical, ..Default::default() }.packed(),
            ..Case::default()
        };
        c.extra_mut().eval_mut().tags.insert("topic".into(), topic.into());
        c.extra_mut().eval_mut().tags.insert("source".into(), "original".into());
        if hard {
            c.extra_mut().eval_mut().reasons.push(Reason {
                code: "hard-fail".into(),
                expected: None,
                actual: None,
                message: None,
            });
        }
        c
    }

    fn bank(id: &str, mechanism: &str, weight: f64, cases: Vec<Case>) -> Suite {
        let mut s = Suite::new(id, id, SuiteKind::Bank);
        s.detection = Some(Detection {
            ecosystem: "bank".into(),
            language: "bank".into(),
            framework: mechanism.into(),
            package_manager: None,
            confidence: 1.0,
            markers: vec![],
        });
        s.cases = cases;
        s.weight = weight;
        s
    }

    /// A run of graded, scored suites, as the pipeline builds it.
    fn run(mut suites: Vec<Suite>) -> Run {
        for s in &mut suites {
            s.finalize_cases();
            s.score = crate::score::score_suite(s, crate::model::Policy::Graded, 0.0, &Default::default());
        }
        Run::assemble(suites, time::OffsetDateTime::now_utc(), None, None)
    }

    #[test]
    fn combined_score_is_weighted_and_renormalised_over_banks_present() {
        let semantic = bank(
            "sem",
            "semantic",
            0.60,
            vec![case("V2-1", 100.0, "a", false, false), case("V2-2", 80.0, "b", false, false)],
        );
        let state = bank("st", "state", 0.15, vec![case("STATE-1", 60.0, "", false, false)]);
        let o = overview(&run(vec![semantic.clone(), state])).unwrap();
        // (90 × 0.60 + 60 × 0.15) / 0.75 = 84
        assert_eq!(o.combined, 84.0);
        assert_eq!(o.health, Health::Good);
        // All four: 0.60 + 0.15 + 0.15 + 0.10 = 1, no renormalisation needed.
        let all = vec![
            semantic,
            bank("st", "state", 0.15, vec![case("STATE-1", 100.0, "", false, false)]),
            bank("pat", "pattern", 0.15, vec![case("PAT-1", 100.0, "", false, false)]),
            bank("al", "always", 0.10, vec![case("ALWAYS-1", 0.0, "", true, false)]),
        ];
        let o = overview(&run(all)).unwrap();
        assert_eq!(o.combined, 84.0); // 54 + 15 + 15 + 0
        assert_eq!(o.hard_fails, 1);
    }

    #[test]
    fn one_hard_fail_keeps_a_90_run_from_excellent_and_a_critical_failure_wins() {
        let mut cases: Vec<Case> = (0..9).map(|i| case(&format!("V2-{i}"), 100.0, "a", false, false)).collect();
        cases.push(case("V2-9", 0.0, "b", true, false));
        let o = overview(&run(vec![bank("sem", "semantic", 0.6, cases.clone())])).unwrap();
        assert_eq!((o.combined, o.hard_fails, o.health), (90.0, 1, Health::Good));
        cases[9] = case("V2-9", 100.0, "b", false, false);
        assert_eq!(
            overview(&run(vec![bank("sem", "semantic", 0.6, cases.clone())])).unwrap().health,
            Health::Excellent
        );
        let crit = bank("pat", "pattern", 0.15, vec![case("PAT-NEG-1", 80.0, "", false, true)]);
        let o = overview(&run(vec![bank("sem", "semantic", 0.6, cases), crit])).unwrap();
        assert_eq!(o.health, Health::Critical);
        assert_eq!(o.critical_failures[0].test_id, "PAT-NEG-1");
    }

    #[test]
    fn topics_are_grouped_best_first_and_buckets_counted() {
        let cases = vec![
            case("V2-1", 100.0, "gray_rock", false, false),
            case("V2-2", 70.0, "gray_rock,biff", false, false),
            case("V2-3", 0.0, "biff", true, false),
        ];
        let o = overview(&run(vec![bank("sem", "semantic", 0.6, cases)])).unwrap();
        let b = &o.banks[0];
        assert_eq!(b.average, 56.7);
        assert_eq!(b.group_by.as_deref(), Some("topic"));
        assert_eq!(
            b.groups,
            vec![
                Group { key: "gray_rock".into(), average: 85.0, tests: 2, hard_fails: 0 },
                Group { key: "biff".into(), average: 35.0, tests: 2, hard_fails: 1 },
            ]
        );
        let dist: Vec<usize> = b.distribution.iter().map(|(_, n)| *n).collect();
        assert_eq!(dist, vec![1, 0, 0, 1, 0, 0, 1]);
        assert_eq!(o.failures[0].test_id, "V2-3");
        assert_eq!(o.sources["original"], 3);
    }

    #[test]
    fn delta_notes_name_new_and_recovered_penalties() {
        let with = |messages: &[&str]| Case {
            extra: crate::model::CaseExtra {
                eval: crate::model::EvalExtra {
                    reasons: messages
                        .iter()
                        .map(|m| Reason {
                            code: "x".into(),
                            expected: None,
                            actual: None,
                            message: Some(m.to_string()),
                        })
                        .collect(),
                    ..Default::default()
                }
                .packed(),
                ..Default::default()
            }
            .packed(),
            ..Case::default()
        };
        let before = with(&["\u{2212}10: missing secondary a"]);
        let after = with(&["\u{2212}10: missing secondary a", "\u{2212}20: false positive X"]);
        assert_eq!(crate::compare::delta_note(&before, &after).as_deref(), Some("\u{2212}20: false positive X"));
        assert_eq!(crate::compare::delta_note(&after, &before).as_deref(), Some("+20: no longer false positive X"));
        assert_eq!(crate::compare::delta_note(&before, &before), None);
    }

    #[test]
    fn reports_lead_with_critical_failures_and_escape_names() {
        let crit = {
            let mut c = case("PAT-NEG-001", 80.0, "", false, true);
            c.set_message(Some("80 Notable issues (\u{2212}20: false positive handler_crisis)".into()));
            c.extra_mut().eval_mut().tags.insert("title".into(), "Negative | <b>not</b> a crisis".into());
            c
        };
        let suites = vec![
            bank(
                "retrieval",
                "semantic",
                0.6,
                vec![case("V2-1", 100.0, "a", false, false), case("V2-2", 0.0, "b", true, false)],
            ),
            bank("crisis", "pattern", 0.15, vec![crit]),
        ];
        let mut r = run(suites);
        r.verdict = crate::gate::judge(&r, &[crate::gate::Gate::Critical], 0.0);
        let env = crate::report::ReportEnv::default();
        for text in [
            crate::report::markdown::render_comment(&r, &env).unwrap(),
            crate::report::markdown::render_summary(&r, &env).unwrap(),
        ] {
            // Why it failed names the critical failure, before the suite table and the banks'.
            let critical = text.find("🚨 **critical**: **crisis** › `PAT-NEG-001`").expect(&text);
            let table = text.find("| Bank | Mechanism |").expect(&text);
            assert!(critical < table && critical < text.find("| Suite").unwrap(), "{text}");
            assert!(text.contains("Negative \\| &lt;b&gt;not&lt;/b&gt; a crisis"), "{text}");
            assert!(text.contains("| **Combined** | | **"), "{text}");
        }
        let summary = crate::report::markdown::render_summary(&r, &env).unwrap();
        assert!(summary.contains("| Topic | Avg score | Tests | Hard fails |"), "{summary}");
        assert!(summary.contains("| Expectation source | Tests |"), "{summary}");
        // Every failing bank case is listed with the run's failures, named with its bank.
        assert!(summary.contains("- ❌ **retrieval** › `V2-2`"), "{summary}");
    }

    #[test]
    fn a_run_without_banks_renders_no_bank_section() {
        let r =
            Run::assemble(vec![Suite::new("p", "p", SuiteKind::Project)], time::OffsetDateTime::now_utc(), None, None);
        assert!(overview(&r).is_none());
        let text = crate::report::markdown::render_comment(&r, &crate::report::ReportEnv::default()).unwrap();
        assert!(!text.contains("| Bank |"), "{text}");
    }
}
