//! Score: per-suite policy scores, the combined run score and the run's health.
//!
//! The rules: strict F-CORR is all-or-nothing and zero tests is never a pass;
//! pass rate counts only tests that ran; weighted F-CORR is build 25 + tests 50 + runtime 25 with
//! the runtime score losing 0.1 per runtime error.

use crate::config::Weights;
use crate::model::{
    Case, CaseStatus, Counts, GitInfo, Health, PhaseKind, PhaseStatus, Policy, Run, RunOutcome, SCHEMA_VERSION, Score,
    ScoreComponent, Suite, SuiteStatus, Usage, Verdict, rfc3339,
};

/// Scores a suite under `policy`; `threshold` is the score that meets it.
pub fn score_suite(suite: &Suite, policy: Policy, threshold: f64, weights: &Weights) -> Score {
    let counts = &suite.counts;
    let ran = counts.ran();
    let install_ok = phase_ok(suite, PhaseKind::Install);
    let build_ok = phase_ok(suite, PhaseKind::Build);
    let pass_rate = if ran > 0 { counts.passes() as f64 / ran as f64 } else { 0.0 };
    // A suite that could not be measured scores 0 under every policy: no evidence, no points. So
    // does one whose run stopped before every test reported (a timeout, a crash, a report cut
    // short): the tests that did report say nothing about the ones that did not.
    let measurable = !matches!(suite.status, SuiteStatus::Error | SuiteStatus::Cancelled | SuiteStatus::Timeout)
        && crate::model::incomplete::incomplete_results(suite).is_none();

    let (value, components) = match policy {
        Policy::Strict => {
            let all_passed = measurable
                && install_ok
                && build_ok
                && suite.status == SuiteStatus::Passed
                && ran > 0
                && counts.failures() == 0;
            let components = vec![
                gate_component("install", install_ok, None),
                gate_component("build", build_ok, None),
                ScoreComponent {
                    name: "tests".into(),
                    value: if ran > 0 && counts.failures() == 0 { 1.0 } else { 0.0 },
                    weight: 100.0,
                    points: if all_passed { 100.0 } else { 0.0 },
                    detail: Some(format!("{} of {} tests that ran passed", counts.passes(), ran)),
                },
            ];
            (if all_passed { 100.0 } else { 0.0 }, components)
        }
        Policy::PassRate => {
            let value = if measurable { pass_rate * 100.0 } else { 0.0 };
            let component = ScoreComponent {
                name: "pass-rate".into(),
                value: pass_rate,
                weight: 100.0,
                points: value,
                detail: Some(format!("{} passed / {} ran", counts.passes(), ran)),
            };
            (value, vec![component])
        }
        Policy::Weighted => {
            let build_points = if install_ok && build_ok && measurable { weights.build } else { 0.0 };
            // Tests run only when the build succeeded, so a failed build leaves no test points.
            let test_rate = if build_points > 0.0 { pass_rate } else { 0.0 };
            let build_errors = suite
                .diagnostics
                .iter()
                .filter(|d| {
                    d.source == crate::model::DiagnosticSource::Build && d.severity == crate::model::Severity::Error
                })
                .count() as u64;
            let build_errors = if build_ok { build_errors } else { build_errors.max(1) };
            let runtime_errors = build_errors + counts.failures();
            let runtime_score =
                if measurable { (1.0 - weights.runtime_decay * runtime_errors as f64).max(0.0) } else { 0.0 };
            let components = vec![
                ScoreComponent {
                    name: "build".into(),
                    value: if build_points > 0.0 { 1.0 } else { 0.0 },
                    weight: weights.build,
                    points: build_points,
                    detail: None,
                },
                ScoreComponent {
                    name: "tests".into(),
                    value: test_rate,
                    weight: weights.tests,
                    points: test_rate * weights.tests,
                    detail: Some(format!("{} passed / {} ran", counts.passes(), ran)),
                },
                ScoreComponent {
                    name: "runtime".into(),
                    value: runtime_score,
                    weight: weights.runtime,
                    points: runtime_score * weights.runtime,
                    detail: Some(format!("{runtime_errors} runtime errors (build errors + failed tests)")),
                },
            ];
            let total: f64 = components.iter().map(|c| c.points).sum();
            let max: f64 = weights.build + weights.tests + weights.runtime;
            let value = if max > 0.0 { total / max * 100.0 } else { 0.0 };
            (value, components)
        }
        Policy::Graded => {
            let graded: Vec<f64> = suite.cases.iter().filter_map(|c| c.extra().score).collect();
            let mean = if graded.is_empty() { 0.0 } else { graded.iter().sum::<f64>() / graded.len() as f64 };
            let value = if measurable { mean } else { 0.0 };
            let component = ScoreComponent {
                name: "graded".into(),
                value: mean / 100.0,
                weight: 100.0,
                points: value,
                detail: Some(format!("mean of {} graded cases", graded.len())),
            };
            (value, vec![component])
        }
    };
    let value = round2(value.clamp(0.0, 100.0));
    Score { policy, value, threshold, met: meets(value, threshold), components }
}

/// Whether `value` meets `threshold`. A score of 0 proves nothing (no test passed, or the suite
/// could not be measured), so it never meets a threshold, not even `min-score = 0`: a SUT that
/// fails every call must not PASS because its threshold was set to 0.
pub(crate) fn meets(value: f64, threshold: f64) -> bool {
    value >= threshold && value > 0.0
}

fn gate_component(name: &str, ok: bool, detail: Option<String>) -> ScoreComponent {
    ScoreComponent { name: name.into(), value: if ok { 1.0 } else { 0.0 }, weight: 0.0, points: 0.0, detail }
}

/// A phase that did not fail (passed, skipped as up to date, or not planned).
fn phase_ok(suite: &Suite, kind: PhaseKind) -> bool {
    suite.phase(kind).is_none_or(|p| matches!(p.status, PhaseStatus::Passed | PhaseStatus::Skipped))
}

/// Rounds to two decimals so scores compare and print stably.
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Weighted mean of suite scores; `None` when there are no suites or no weight.
pub fn combined_score(suites: &[Suite]) -> Option<f64> {
    let weight: f64 = suites.iter().map(|s| s.weight).sum();
    if suites.is_empty() || weight <= 0.0 {
        return None;
    }
    Some(round2(suites.iter().map(|s| s.score.value * s.weight).sum::<f64>() / weight))
}

/// The part of `suite` made of the cases `keep` holds (one system's, one column of the
/// comparison grid), scored by the suite's own policy and threshold over those cases alone: the
/// score `score<N@sut` gates on, and the grid shows.
pub(crate) fn part_of(suite: &Suite, keep: impl Fn(&Case) -> bool) -> Suite {
    let mut part = Suite { cases: Vec::new(), streamed: None, ..suite.clone() };
    part.cases = suite.cases.iter().filter(|c| keep(c)).cloned().collect();
    part.counts = Counts::of(&part.cases);
    part.score = score_suite(&part, suite.score.policy, suite.score.threshold, &Weights::default());
    part
}

/// Reason code for a case whose primary expectation was missed (or that got no answer).
pub const HARD_FAIL: &str = "hard-fail";

/// Whether a case is a hard fail (a bank case that missed a primary expectation, scored 0;
/// one keeps a run from EXCELLENT health).
pub fn is_hard_fail(case: &Case) -> bool {
    case.extra().eval().reasons.iter().any(|r| r.code == HARD_FAIL)
}

/// Health: CRITICAL if any critical case or suite failed; then by combined score.
pub fn health(suites: &[Suite], combined: Option<f64>) -> Health {
    let critical_failed = suites
        .iter()
        .any(|s| (s.critical && !s.score.met) || s.cases.iter().any(|c| c.extra().critical && c.status.is_failure()));
    let score = combined.unwrap_or(0.0);
    // A bank case that missed a primary expectation is a hard fail too.
    let hard_fail = suites.iter().any(|s| s.score.value <= 0.0 || s.cases.iter().any(is_hard_fail));
    health_ladder(critical_failed, score, hard_fail)
}

/// CRITICAL on any critical failure; EXCELLENT at 90 or more with no hard fail;
/// GOOD at 80; FAIR at 70; else POOR.
pub fn health_ladder(critical_failed: bool, score: f64, hard_fail: bool) -> Health {
    if critical_failed {
        Health::Critical
    } else if score >= 90.0 && !hard_fail {
        Health::Excellent
    } else if score >= 80.0 {
        Health::Good
    } else if score >= 70.0 {
        Health::Fair
    } else {
        Health::Poor
    }
}

/// A benchmark suite's metrics in one line: pass rate, average tokens and duration, cost (with
/// the price per 1K tokens when known; a merged suite knows only the cost). Here, under both the
/// benchmark runner that states them and `shard::join`, which restates them for joined parts.
pub(crate) fn metrics_line(cases: &[Case], usage: &Usage, cost_per_1k: Option<f64>) -> String {
    let n = cases.len().max(1) as f64;
    let passed = cases.iter().filter(|c| c.status == CaseStatus::Passed).count();
    let duration: f64 = cases.iter().filter_map(|c| c.duration_ms).sum();
    let price = cost_per_1k.map(|p| format!(" at ${p} per 1K")).unwrap_or_default();
    format!(
        "{} task(s): pass rate {:.1}% ({passed}/{}), average {:.0} tokens and {:.1} s per task, estimated cost ${:.4} ({} tokens{price})",
        cases.len(),
        passed as f64 / n * 100.0,
        cases.len(),
        usage.tokens as f64 / n,
        duration / n / 1000.0,
        usage.cost_usd.unwrap_or(0.0),
        usage.tokens,
    )
}

/// Recomputes totals, combined score and health of a run from its suites.
pub fn summarize(run: &mut Run) {
    let mut totals = crate::model::Counts::default();
    for suite in &run.suites {
        totals.merge(&suite.counts);
    }
    run.totals = totals;
    run.score = combined_score(&run.suites);
    run.health = run.score.map(|score| health(&run.suites, Some(score)));
}

// Assembled here rather than in the model: totals, combined score and health are scoring's job,
// and the model knows nothing of how they are computed.
impl Run {
    /// A run of `suites` that started at `started_at`, finishing now; the caller scores and judges it.
    pub fn assemble(
        suites: Vec<Suite>,
        started_at: time::OffsetDateTime,
        config_hash: Option<String>,
        git: Option<GitInfo>,
    ) -> Run {
        let finished_at = time::OffsetDateTime::now_utc();
        let mut run = Run {
            schema_version: SCHEMA_VERSION,
            fcorr_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at: rfc3339(started_at),
            finished_at: rfc3339(finished_at),
            duration_ms: (finished_at - started_at).whole_milliseconds().max(0) as u64,
            git,
            config_hash,
            suites,
            totals: Counts::default(),
            score: None,
            health: None,
            interrupted: None,
            verdict: Verdict { outcome: RunOutcome::Pass, reasons: Vec::new(), gates: Vec::new(), skipped: Vec::new() },
            comparison: None,
            timing: None,
            history: None,
            shard: None,
            warnings: Vec::new(),
        };
        summarize(&mut run);
        run
    }
}

/// The label of a graded score (0-100): `Perfect` at 100 down to `Hard fail` at 0.
pub(crate) fn interpret(score: u32) -> &'static str {
    match score {
        100.. => "Perfect",
        90..=99 => "Minor issue",
        80..=89 => "Notable issues",
        70..=79 => "Concerning",
        60..=69 => "Barely acceptable",
        1..=59 => "Failing",
        0 => "Hard fail",
    }
}

/// Distribution buckets, in report order.
pub(crate) const BUCKETS: [&str; 7] = ["100", "90-99", "80-89", "70-79", "60-69", "1-59", "0"];

/// The bucket a score falls in.
pub(crate) fn bucket(score: u32) -> &'static str {
    match score {
        100.. => BUCKETS[0],
        90..=99 => BUCKETS[1],
        80..=89 => BUCKETS[2],
        70..=79 => BUCKETS[3],
        60..=69 => BUCKETS[4],
        1..=59 => BUCKETS[5],
        0 => BUCKETS[6],
    }
}

/// Count of scores per bucket, every bucket present, in [`BUCKETS`] order.
pub(crate) fn distribution(scores: impl IntoIterator<Item = u32>) -> Vec<(&'static str, usize)> {
    let mut counts = [0usize; 7];
    for score in scores {
        // `bucket` only returns members of BUCKETS, so the position is always found.
        if let Some(i) = BUCKETS.iter().position(|b| *b == bucket(score)) {
            counts[i] += 1;
        }
    }
    BUCKETS.iter().copied().zip(counts).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Case, CaseStatus, Phase, SuiteKind};

    fn suite(statuses: &[CaseStatus], status: SuiteStatus) -> Suite {
        let mut s = Suite::new("s", "s", SuiteKind::Project);
        s.cases =
            statuses.iter().map(|st| Case { name: format!("{st:?}").into(), status: *st, ..Case::default() }).collect();
        s.finalize_cases();
        s.status = status;
        s
    }

    fn build_failed(mut s: Suite) -> Suite {
        s.phases.push(Phase {
            kind: PhaseKind::Build,
            command: "make".into(),
            status: PhaseStatus::Failed,
            exit_code: Some(2),
            duration_ms: 1,
            log_tail: String::new(),
            note: None,
        });
        s
    }

    #[test]
    fn strict_is_all_or_nothing_and_zero_tests_fail() {
        let w = Weights::default();
        use CaseStatus::*;
        assert_eq!(
            score_suite(&suite(&[Passed, Passed, Skipped], SuiteStatus::Passed), Policy::Strict, 100.0, &w).value,
            100.0
        );
        assert_eq!(score_suite(&suite(&[Passed, Failed], SuiteStatus::Failed), Policy::Strict, 100.0, &w).value, 0.0);
        assert_eq!(score_suite(&suite(&[], SuiteStatus::NoTests), Policy::Strict, 100.0, &w).value, 0.0);
        assert_eq!(score_suite(&suite(&[Skipped], SuiteStatus::Passed), Policy::Strict, 100.0, &w).value, 0.0);
    }

    #[test]
    fn pass_rate_ignores_skips() {
        use CaseStatus::*;
        let s = suite(&[Passed, Passed, Passed, Failed, Skipped], SuiteStatus::Failed);
        let score = score_suite(&s, Policy::PassRate, 100.0, &Weights::default());
        assert_eq!(score.value, 75.0);
        assert!(!score.met);
        // min-score 0 is met by any score above 0, never by a 0 that proves nothing.
        assert!(score_suite(&s, Policy::PassRate, 0.0, &Weights::default()).met);
        let all_failed = suite(&[Failed, Failed], SuiteStatus::Failed);
        assert!(!score_suite(&all_failed, Policy::PassRate, 0.0, &Weights::default()).met);
        let errored = suite(&[Passed], SuiteStatus::Error);
        assert!(!score_suite(&errored, Policy::PassRate, 0.0, &Weights::default()).met);
    }

    /// A run that stopped before every test reported (a timeout, a crash, a report cut short)
    /// scores 0 under every policy: 9 passes of 11 reported are not 82 % of 100 tests.
    #[test]
    fn incomplete_results_score_0_under_every_policy() {
        use CaseStatus::*;
        let mut s = suite(&[Passed, Passed, Passed, Failed], SuiteStatus::Failed);
        s.cases.push(Case { name: "[tests not reported]".into(), status: Error, ..Case::default() });
        s.counts.total += 1;
        s.counts.error += 1;
        for policy in [Policy::PassRate, Policy::Weighted, Policy::Strict] {
            let score = score_suite(&s, policy, 10.0, &Weights::default());
            assert_eq!((score.value, score.met), (0.0, false), "{policy:?}");
        }
        let timed_out = suite(&[Passed, Passed, Passed, Timeout], SuiteStatus::Timeout);
        assert_eq!(score_suite(&timed_out, Policy::PassRate, 10.0, &Weights::default()).value, 0.0);
        // A test of the project that errored is a result, not a missing one.
        let errored = suite(&[Passed, Passed, Passed, Error], SuiteStatus::Failed);
        assert_eq!(score_suite(&errored, Policy::PassRate, 10.0, &Weights::default()).value, 75.0);
    }

    #[test]
    fn weighted_matches_the_seed_formula() {
        use CaseStatus::*;
        // 3 of 4 pass, 1 failure: 25 + 0.75*50 + (1-0.1)*25 = 25 + 37.5 + 22.5 = 85.
        let s = suite(&[Passed, Passed, Passed, Failed], SuiteStatus::Failed);
        assert_eq!(score_suite(&s, Policy::Weighted, 100.0, &Weights::default()).value, 85.0);
        // Build failure: no build points, no test points, runtime 1 error -> 0.9*25 = 22.5.
        let s = build_failed(suite(&[], SuiteStatus::BuildFailed));
        assert_eq!(score_suite(&s, Policy::Weighted, 100.0, &Weights::default()).value, 22.5);
    }

    #[test]
    fn health_levels() {
        use CaseStatus::*;
        let mut good = suite(&[Passed], SuiteStatus::Passed);
        good.score = score_suite(&good, Policy::Strict, 100.0, &Weights::default());
        assert_eq!(health(std::slice::from_ref(&good), Some(100.0)), Health::Excellent);
        let mut bad = suite(&[Failed], SuiteStatus::Failed);
        bad.cases[0].extra_mut().critical = true;
        assert_eq!(health(&[good, bad], Some(50.0)), Health::Critical);
    }

    #[test]
    fn a_run_with_no_suite_has_no_score_and_no_health_grade() {
        // Before, zero suites (a shard that drew none) was graded POOR.
        let mut run = Run::assemble(Vec::new(), time::OffsetDateTime::now_utc(), None, None);
        summarize(&mut run);
        assert_eq!((run.score, run.health), (None, None));
        run.suites.push(suite(&[CaseStatus::Passed], SuiteStatus::Passed));
        summarize(&mut run);
        // Unscored here (0): a suite's run gets a grade, whatever it is.
        assert_eq!((run.score, run.health), (Some(0.0), Some(Health::Poor)));
    }

    #[test]
    fn interpretation_boundaries() {
        let table = [
            (100, "Perfect"),
            (99, "Minor issue"),
            (90, "Minor issue"),
            (89, "Notable issues"),
            (80, "Notable issues"),
            (79, "Concerning"),
            (70, "Concerning"),
            (69, "Barely acceptable"),
            (60, "Barely acceptable"),
            (59, "Failing"),
            (1, "Failing"),
            (0, "Hard fail"),
        ];
        for (score, label) in table {
            assert_eq!(interpret(score), label, "{score}");
        }
    }

    #[test]
    fn distribution_has_every_bucket_in_order() {
        let dist = distribution([100, 100, 99, 90, 89, 80, 79, 70, 69, 60, 59, 1, 0, 0, 0]);
        assert_eq!(
            dist,
            vec![("100", 2), ("90-99", 2), ("80-89", 2), ("70-79", 2), ("60-69", 2), ("1-59", 2), ("0", 3)]
        );
        assert!(distribution([]).iter().all(|(_, n)| *n == 0));
    }
}
