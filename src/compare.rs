//! Comparison of a run with a baseline run: per-case changes and per-suite deltas.
//!
//! Cases are matched by their stable id. The comparison is stored in `results.json` and read by
//! every report; the gate's `regression` check uses it only when the baseline is fresh.

use std::collections::{HashMap, HashSet};

use crate::model::comparison::signed_difference;
pub use crate::model::comparison::{
    BaselineInfo, CaseChange, Change, Comparison, ConfigChange, CountsDelta, SuiteDelta,
};
use crate::model::{Case, CaseStatus, Counts, Run, Suite};

/// Pass rate of counts (passes / cases that ran × 100); `None` when nothing ran.
fn pass_rate(counts: &Counts) -> Option<f64> {
    let ran = counts.ran();
    (ran > 0).then(|| counts.passes() as f64 * 100.0 / ran as f64)
}

fn opt_delta(now: Option<f64>, then: Option<f64>) -> Option<f64> {
    delta(now?, then?)
}

/// `now - then` rounded to two decimals (so `0.30000000000000004` does not leak into reports),
/// or `None` when it is not a finite number: no report may show an infinite change. Results
/// read from files have their scores checked already (`report::parse_results`); this keeps
/// runs built in memory to the same rule.
fn delta(now: f64, then: f64) -> Option<f64> {
    let rounded = ((now - then) * 100.0).round() / 100.0;
    rounded.is_finite().then_some(rounded)
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
        // Each baseline id, with the index of the flag set when this run has that case too: the
        // baseline's cases not flagged are the removed ones. Flags, not a set of this run's ids,
        // because a streamed suite's cases are read back from disk one at a time (`every_case`)
        // and only the baseline (loaded slim) is held whole.
        let base_cases: HashMap<&str, (usize, &Case)> = base
            .map(|b| b.cases.iter().enumerate().map(|(i, c)| (c.id.as_str(), (i, c))).collect())
            .unwrap_or_default();
        let mut still_here = vec![false; base.map_or(0, |b| b.cases.len())];
        let mut any_case = false;
        // A part on disk that cannot be read ends this early; the reports then stop with that
        // error (they read every case too), so this shorter comparison is never written.
        for case in suite.every_case() {
            any_case = true;
            let found = base_cases.get(case.id.as_str()).copied();
            if let Some((i, _)) = found {
                still_here[i] = true;
            }
            let base_case = found.map(|(_, c)| c);
            let before = base_case.map(|c| c.status);
            if let Some(change) = classify(before, Some(case.status)) {
                let mut change = change_of(&suite.id, &case, change, before, Some(case.status));
                change.before_reason = base_case.and_then(first_reason);
                if let Some(base_case) = base_case
                    && base_case.extra().score.is_some()
                    && case.extra().score.is_some()
                {
                    change.score_before = base_case.extra().score;
                    change.score_after = case.extra().score;
                    change.note = delta_note(base_case, &case);
                }
                cases.push(change);
            }
        }
        if let Some(base) = base
            && any_case
        {
            let removed = |c: &&Case| base_cases.get(c.id.as_str()).is_some_and(|(i, _)| !still_here[*i]);
            for case in base.cases.iter().filter(removed) {
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
            duration_delta_ms: signed_difference(0, base.duration_ms),
        });
    }
    // New failures first (the enum's order), then by suite and name for stable output.
    cases.sort_by(|a, b| (a.change, &a.suite_id, &a.name).cmp(&(b.change, &b.suite_id, &b.name)));

    // A baseline sharing no suite with this run is another project's or configuration's: its
    // combined score says nothing about this change, so no delta is made from it.
    let no_common_suite = !baseline.suites.is_empty() && !suites.iter().any(|s| !s.added && !s.removed);
    let related = |delta: Option<f64>| delta.filter(|_| !no_common_suite);
    let config_change = match (&baseline.config_hash, &run.config_hash) {
        (Some(then), Some(now)) if then != now => Some(ConfigChange { baseline: then.clone(), now: now.clone() }),
        _ => None,
    };
    Comparison {
        baseline: info,
        score_delta: related(opt_delta(run.score, baseline.score)),
        pass_rate_delta: related(opt_delta(pass_rate(&run.totals), pass_rate(&baseline.totals))),
        counts_delta: CountsDelta::between(&run.totals, &baseline.totals),
        duration_delta_ms: signed_difference(run.duration_ms, baseline.duration_ms),
        suites,
        cases,
        no_common_suite,
        config_change,
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
            score_delta: delta(suite.score.value, base.score.value),
            pass_rate_delta: opt_delta(pass_rate(&suite.counts), pass_rate(&base.counts)),
            counts_delta: CountsDelta::between(&suite.counts, &base.counts),
            duration_delta_ms: signed_difference(suite.duration_ms, base.duration_ms),
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
            duration_delta_ms: signed_difference(suite.duration_ms, 0),
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
        case_id: case.id.to_string(),
        name: case.name.clone().into(),
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
    case.extra().eval().reasons.first().map(|r| r.code.clone())
}

/// What changed in a graded case's deductions: `−20: false positive X` for a new penalty,
/// `+10: no longer missing secondary Y` for one that went away; hard fails named as such.
pub fn delta_note(before: &Case, after: &Case) -> Option<String> {
    let messages =
        |case: &Case| -> Vec<String> { case.extra().eval().reasons.iter().filter_map(|r| r.message.clone()).collect() };
    let (then, now) = (messages(before), messages(after));
    let mut parts: Vec<String> = now.iter().filter(|m| !then.contains(m)).cloned().collect();
    for gone in then.iter().filter(|m| !now.contains(m)) {
        match gone.strip_prefix('\u{2212}') {
            Some(rest) => match rest.split_once(": ") {
                Some((points, what)) => parts.push(format!("+{points}: no longer {what}")),
                None => parts.push(format!("no longer: {gone}")),
            },
            None => parts.push(format!("no longer: {gone}")),
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
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
            s.cases.push(Case { name: name.to_string().into(), status: *status, ..Case::default() });
        }
        s.finalize_cases();
        s
    }

    fn run(suites: Vec<Suite>) -> Run {
        Run::assemble(suites, time::OffsetDateTime::now_utc(), None, None)
    }

    #[test]
    fn deltas_are_finite_or_absent_and_hostile_counts_do_not_overflow() {
        let mut base = run(vec![suite("a", &[("x", Passed)])]);
        base.score = Some(-1e308);
        base.suites[0].score.value = -1e308;
        base.duration_ms = u64::MAX;
        base.suites[0].counts.total = 1 << 63;
        let now = run(vec![suite("a", &[("x", Passed)])]);
        let c = compare(&now, &base, BaselineInfo::default());
        // 100 - (-1e308) is finite, but not once rounded to hundredths: no delta, not +inf.
        assert_eq!((c.score_delta, c.suites[0].score_delta), (None, None));
        assert_eq!(c.duration_delta_ms, i64::MIN);
        assert_eq!(c.suites[0].counts_delta.total, i64::MIN + 1);
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
    fn a_baseline_sharing_no_suite_gives_no_score_delta_and_says_why() {
        let mut base = run(vec![suite("imp", &[("t", Failed)])]);
        base.config_hash = Some("aaaa".into());
        let mut now = run(vec![suite("vac", &[("x", Passed)])]);
        now.config_hash = Some("bbbb".into());
        let c = compare(&now, &base, BaselineInfo::default());
        assert!(c.no_common_suite);
        assert_eq!((c.score_delta, c.pass_rate_delta), (None, None));
        // One caution: another configuration goes without saying.
        assert_eq!(
            c.cautions(),
            ["the baseline has none of this run's suites (it has imp; this run has vac): it is from another project \
              or configuration, so regression is not checked against it and no score change is computed"]
        );
        // The same suites under another configuration: compared, with the configuration named.
        let mut renamed_config = run(vec![suite("imp", &[("t", Passed)])]);
        renamed_config.config_hash = Some("bbbb".into());
        let same = compare(&renamed_config, &base, BaselineInfo::default());
        assert!(!same.no_common_suite && same.score_delta.is_some());
        assert_eq!(same.config_change, Some(ConfigChange { baseline: "aaaa".into(), now: "bbbb".into() }));
        assert!(same.cautions()[0].starts_with("the baseline was made with another configuration (config hash aaaa"));
        // The failing test gone is listed as removed and failing there.
        let gone = compare(&run(vec![suite("imp", &[("u", Passed)])]), &base, BaselineInfo::default());
        assert_eq!(gone.removed_failing().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["t"]);
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
