//! The timing stage: the slowest cases of a run and the cases that got slower than in the
//! baseline, run after execute and before compare (`pipeline::conclude`).
//!
//! A slowdown must clear two thresholds at once, an absolute one (`slowdown-min-ms`) that hides
//! timer noise on fast tests and a relative one (`slowdown-factor`) that hides the usual drift of
//! slow ones. The result lands in `results.json` (`timing`) and in the summary and comment.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::model::{Case, CaseStatus, Run, SlowCase, Slowdown, Timing, TimingSettings};

/// Fills `run.timing`: the slowest cases, and the slowdowns against `baseline` when there is one.
pub fn attach(run: &mut Run, baseline: Option<&Run>, settings: &TimingSettings) {
    run.timing = Some(timing(run, baseline, settings));
}

/// The timing lists of `run` (see [`attach`]).
pub fn timing(run: &Run, baseline: Option<&Run>, settings: &TimingSettings) -> Timing {
    let (slowdowns, slowdowns_total) = match baseline {
        Some(base) => slowdowns(run, base, settings),
        None => (Vec::new(), 0),
    };
    Timing {
        slowest: slowest(run, settings.slowest),
        slowdowns,
        slowdowns_total,
        compared: baseline.is_some(),
        settings: *settings,
    }
}

/// A case's time, when it ran and has one (skipped cases have no meaningful duration).
pub(crate) fn ran_ms(case: &Case) -> Option<f64> {
    case.duration_ms.filter(|d| d.is_finite() && *d >= 0.0 && case.status != CaseStatus::Skipped)
}

/// The `n` biggest items by `key`, biggest first; ties keep input order (stable, so the lists
/// read the same on every run). Linear in the input: a 100,000-case run is not sorted whole.
fn top_by<T>(mut items: Vec<(f64, usize, T)>, n: usize) -> Vec<T> {
    let order =
        |a: &(f64, usize, T), b: &(f64, usize, T)| b.0.partial_cmp(&a.0).unwrap_or(Ordering::Equal).then(a.1.cmp(&b.1));
    if n == 0 {
        return Vec::new();
    }
    if items.len() > n {
        items.select_nth_unstable_by(n - 1, order);
        items.truncate(n);
    }
    items.sort_by(order);
    items.into_iter().map(|(_, _, t)| t).collect()
}

/// The `n` slowest cases that ran, slowest first. Every case is read once (from the spill file for
/// a streamed suite) and at most about `2n` candidates are held at a time, so memory does not
/// grow with the run.
pub fn slowest(run: &Run, n: usize) -> Vec<SlowCase> {
    type Candidate<'a> = (f64, usize, (usize, std::borrow::Cow<'a, Case>));
    fn keep(candidates: Vec<Candidate<'_>>, n: usize) -> Vec<Candidate<'_>> {
        let tagged = candidates.into_iter().map(|(ms, i, c)| (ms, i, (ms, i, c))).collect();
        top_by(tagged, n)
    }
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    let mut i = 0;
    for (s, suite) in run.suites.iter().enumerate() {
        // A part that cannot be read is the reports' error: they read every case too.
        for case in suite.every_case() {
            if let Some(ms) = ran_ms(&case) {
                candidates.push((ms, i, (s, case)));
                if candidates.len() >= 2 * n.max(512) {
                    candidates = keep(candidates, n);
                }
            }
            i += 1;
        }
    }
    top_by(candidates, n)
        .into_iter()
        .map(|(s, c)| SlowCase {
            suite_id: run.suites[s].id.clone(),
            case_id: c.id.to_string(),
            name: c.name.clone().into(),
            duration_ms: ms_of(&c),
        })
        .collect()
}

fn ms_of(case: &Case) -> f64 {
    case.duration_ms.unwrap_or_default()
}

/// Cases in both runs that got slower by at least `slowdown_min_ms` and by a factor of at least
/// `slowdown_factor`: the biggest `settings.slowest` increases, and how many there are in all.
pub fn slowdowns(run: &Run, baseline: &Run, settings: &TimingSettings) -> (Vec<Slowdown>, usize) {
    // One suite's baseline times at a time: a map of every case of a 100,000-case baseline
    // (5 MB) would sit on top of the baseline itself.
    let base_suites: HashMap<&str, &crate::model::Suite> = baseline.suites.iter().map(|s| (s.id.as_str(), s)).collect();
    let times_of = |suite: &crate::model::Suite| -> HashMap<&str, f64> {
        let cases = base_suites.get(suite.id.as_str()).map_or(&[][..], |base| &base.cases[..]);
        cases.iter().filter_map(|c| ran_ms(c).map(|ms| (c.id.as_str(), ms))).collect()
    };
    let mut found = Vec::new();
    let mut i = 0;
    for suite in &run.suites {
        let before = times_of(suite);
        // Every case, a streamed suite's read back from disk (an unreadable part fails the reports).
        for case in suite.every_case() {
            i += 1;
            let (Some(after), Some(&was)) = (ran_ms(&case), before.get(case.id.as_str())) else {
                continue;
            };
            let change = after - was;
            if change < settings.slowdown_min_ms || after < was * settings.slowdown_factor {
                continue;
            }
            let slowdown = Slowdown {
                suite_id: suite.id.clone(),
                case_id: case.id.to_string(),
                name: case.name.clone().into(),
                before_ms: was,
                after_ms: after,
                change_ms: crate::score::round2(change),
                factor: (was > 0.0).then(|| crate::score::round2(after / was)),
            };
            found.push((change, i, slowdown));
        }
    }
    let total = found.len();
    (top_by(found, settings.slowest), total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Suite, SuiteKind};

    fn run(times: &[(&str, Option<f64>, CaseStatus)]) -> Run {
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        suite.cases = times
            .iter()
            .map(|(name, ms, status)| Case {
                name: name.to_string().into(),
                duration_ms: *ms,
                status: *status,
                ..Case::default()
            })
            .collect();
        suite.finalize_cases();
        Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
    }

    use CaseStatus::{Failed, Passed, Skipped};

    #[test]
    fn slowest_first_skipped_and_untimed_left_out_ties_in_order() {
        let r = run(&[
            ("a", Some(5.0), Passed),
            ("b", Some(50.0), Failed),
            ("c", Some(900.0), Skipped),
            ("d", None, Passed),
            ("e", Some(50.0), Passed),
            ("f", Some(7.0), Passed),
        ]);
        let names: Vec<_> = slowest(&r, 3).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["b", "e", "f"]);
        assert!(slowest(&r, 0).is_empty());
        assert_eq!(slowest(&r, 100).len(), 4);
    }

    #[test]
    fn slowdowns_need_both_the_absolute_and_the_relative_change() {
        let base = run(&[
            ("noise", Some(10.0), Passed),
            ("drift", Some(1000.0), Passed),
            ("slower", Some(100.0), Passed),
            ("much", Some(200.0), Passed),
            ("was-skipped", Some(1.0), Skipped),
            ("gone", Some(1.0), Passed),
        ]);
        let now = run(&[
            ("noise", Some(90.0), Passed),   // 9x, but only +80 ms
            ("drift", Some(1400.0), Passed), // +400 ms, but only 1.4x
            ("slower", Some(250.0), Failed), // +150 ms, 2.5x
            ("much", Some(2200.0), Passed),  // +2000 ms, 11x
            ("was-skipped", Some(5000.0), Passed),
            ("new", Some(9000.0), Passed),
        ]);
        let settings = TimingSettings::default();
        let (list, total) = slowdowns(&now, &base, &settings);
        assert_eq!(total, 2);
        let names: Vec<_> = list.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["much", "slower"]);
        assert_eq!(
            (list[1].before_ms, list[1].after_ms, list[1].change_ms, list[1].factor),
            (100.0, 250.0, 150.0, Some(2.5))
        );
        let one = TimingSettings { slowest: 1, ..settings };
        let (list, total) = slowdowns(&now, &base, &one);
        assert_eq!((list.len(), total), (1, 2), "the list is capped, the total is not");
        let t = timing(&now, None, &settings);
        assert!(!t.compared && t.slowdowns.is_empty() && t.slowest[0].name == "new");
    }
}
