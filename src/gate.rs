//! Gate: the run's verdict and exit code from the configured gates.
//!
//! Gates: `strict` (a suite below its policy), `critical` (a critical case or suite failed),
//! `empty` (no tests ran), `score<N` (combined score below N; `score<N@sut`: one system's
//! cases), `regression` (a new failure, a test or suite failing in the baseline and gone now,
//! or a score drop beyond the tolerance, judged only against a fresh baseline that shares a
//! suite with the run). Suites that could not be measured decide the exit code first:
//! infrastructure problems are 3, bad input is 2. A run a stop signal interrupted fails whatever
//! the gates (`interrupted`, named first).

use crate::errors::FcorrError;
use crate::model::{GateKind, GateReason, Run, RunOutcome, SuiteErrorKind, SuiteStatus, Verdict};

/// One parsed gate.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    Strict,
    Critical,
    Empty,
    Regression,
    ScoreBelow(f64),
    /// `score<N@sut`: the score of one system's cases (eval suites asking several side by side).
    SutScoreBelow(f64, String),
}

impl Gate {
    /// Parses `strict`, `critical`, `empty`, `regression`, `score<N` or `score<N@sut`.
    pub fn parse(text: &str) -> Result<Gate, FcorrError> {
        let text = text.trim();
        match text {
            "strict" => Ok(Gate::Strict),
            "critical" => Ok(Gate::Critical),
            "empty" => Ok(Gate::Empty),
            "regression" => Ok(Gate::Regression),
            _ => {
                if let Some(rest) = text.strip_prefix("score<")
                    && let Some((n, sut)) = rest.split_once('@')
                {
                    let sut = sut.trim();
                    if sut.is_empty() {
                        return Err(FcorrError::Usage(format!("gate `{text}`: name a system after `@`")));
                    }
                    let Gate::ScoreBelow(n) = Gate::parse(&format!("score<{n}"))? else {
                        return Err(FcorrError::Usage(format!("gate `{text}`: expected `score<N@sut`")));
                    };
                    return Ok(Gate::SutScoreBelow(n, sut.to_string()));
                }
                if let Some(n) = text.strip_prefix("score<") {
                    // `nan` and `inf` parse as f64 but compare false with every score: such a
                    // gate could never fail.
                    let n: f64 = n.trim().parse().ok().filter(|n: &f64| n.is_finite()).ok_or_else(|| {
                        FcorrError::Usage(format!("gate `{text}`: expected a number after `score<`, e.g. `score<80`"))
                    })?;
                    // Scores are 0–100: below 0 the gate could never fire, above 100 always.
                    if !(0.0..=100.0).contains(&n) {
                        return Err(FcorrError::Usage(format!(
                            "gate `{text}`: {n} is not a score; scores run from 0 to 100, so this gate would {}",
                            if n < 0.0 { "never fail" } else { "always fail" }
                        )));
                    }
                    return Ok(Gate::ScoreBelow(n));
                }
                Err(FcorrError::Usage(format!(
                    "unknown gate `{text}` (known: strict, critical, empty, regression, score<N, score<N@sut)"
                )))
            }
        }
    }

    /// Parses a comma-separated list; `none` or empty means no gates.
    pub fn parse_list(items: &[String]) -> Result<Vec<Gate>, FcorrError> {
        items
            .iter()
            .flat_map(|s| s.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "none")
            .map(Gate::parse)
            .collect()
    }

    /// Name as written in config.
    pub fn label(&self) -> String {
        match self {
            Gate::Strict => "strict".into(),
            Gate::Critical => "critical".into(),
            Gate::Empty => "empty".into(),
            Gate::Regression => "regression".into(),
            Gate::ScoreBelow(n) => format!("score<{n}"),
            Gate::SutScoreBelow(n, sut) => format!("score<{n}@{sut}"),
        }
    }
}

/// One `--fail-on` value: comma-separated gates (`none`: no gate), checked as clap reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct GateList(pub Vec<Gate>);

impl std::str::FromStr for GateList {
    type Err = FcorrError;

    fn from_str(text: &str) -> Result<GateList, FcorrError> {
        Gate::parse_list(&[text.to_string()]).map(GateList)
    }
}

/// Judges a run: evaluates every gate and records every reason.
pub fn judge(run: &Run, gates: &[Gate], regression_tolerance: f64) -> Verdict {
    let mut reasons = Vec::new();
    let mut skipped = Vec::new();
    // Quarantined failures are reported, never gated: every gate but `empty` judges this view.
    let shown = run;
    let view = crate::quarantine::gate_view(run);
    let run = view.as_ref();
    let quarantined = crate::quarantine::failures(shown);
    if quarantined > 0 && !gates.is_empty() {
        skipped.push(format!("quarantine: {quarantined} quarantined failure(s) reported but not gated"));
    }
    let reason = |gate: GateKind, suite: Option<&str>, message: String| GateReason {
        gate,
        suite: suite.map(str::to_string),
        message,
    };

    // First, since it is the cause of the reasons after it: suites it stopped score 0. A
    // cancelled suite proves nothing even when no signal was recorded (results written by an
    // older fcorr, a part of a merge): the run fails whatever the gates, `none` included.
    let cancelled = shown.suites.iter().any(|s| s.status == SuiteStatus::Cancelled);
    if shown.interrupted.is_some() || cancelled {
        reasons.push(reason(GateKind::Interrupted, None, interrupted(shown.interrupted.as_deref(), &shown.suites)));
    }
    let mut harness_error = false;
    let mut usage_error = false;
    for suite in &run.suites {
        if let Some(error) = &suite.error {
            match error.kind {
                SuiteErrorKind::ToolMissing | SuiteErrorKind::Harness => harness_error = true,
                SuiteErrorKind::Input => usage_error = true,
                SuiteErrorKind::NoResults | SuiteErrorKind::BadReport => {}
            }
            reasons.push(reason(GateKind::Error, Some(&suite.name), error.message.clone()));
        }
    }

    for gate in gates {
        match gate {
            Gate::Strict => {
                for suite in run.suites.iter().filter(|s| !s.score.met && s.error.is_none()) {
                    reasons.push(reason(
                        GateKind::Strict,
                        Some(&suite.name),
                        if let Some(case) = crate::model::incomplete::incomplete_results(suite) {
                            let why = case.message().and_then(|m| m.lines().next()).unwrap_or_default();
                            format!(
                                "{}: scores 0 because its results are incomplete: `{}` {}",
                                suite.name,
                                crate::text::truncate_chars(&case.name, 120),
                                crate::text::truncate_chars(why, 300)
                            )
                        } else if suite.score.value < suite.score.threshold {
                            format!(
                                "{}: score {} is below its {} threshold {} ({})",
                                suite.name,
                                suite.score.value,
                                suite.score.policy.label(),
                                suite.score.threshold,
                                suite.status.label()
                            )
                        } else {
                            format!(
                                "{}: score 0 proves nothing ({}): a {} threshold of 0 is met only by a score above 0",
                                suite.name,
                                suite.status.label(),
                                suite.score.policy.label(),
                            )
                        },
                    ));
                }
            }
            Gate::Critical => {
                for suite in &run.suites {
                    if suite.critical && !suite.score.met {
                        reasons.push(reason(
                            GateKind::Critical,
                            Some(&suite.name),
                            format!("critical suite {} failed", suite.name),
                        ));
                    }
                    for case in suite.cases.iter().filter(|c| c.extra().critical && c.status.is_failure()) {
                        reasons.push(reason(
                            GateKind::Critical,
                            Some(&suite.name),
                            format!("critical case `{}` {}", case.name, case.status.label()),
                        ));
                    }
                }
            }
            Gate::Empty => {
                // Quarantined cases that ran still ran.
                if shown.totals.ran() == 0 {
                    reasons.push(reason(GateKind::Empty, None, "no tests ran in any suite".into()));
                }
                for suite in run.suites.iter().filter(|s| s.status == SuiteStatus::NoTests) {
                    let why = suite.no_tests_reason();
                    reasons.push(reason(GateKind::Empty, Some(&suite.name), format!("{}: {why}", suite.name)));
                }
            }
            Gate::ScoreBelow(n) => match run.score {
                Some(score) if score < *n => {
                    reasons.push(reason(GateKind::Score, None, format!("combined score {score} is below {n}")));
                }
                None => reasons.push(reason(GateKind::Score, None, "no combined score: nothing was scored".into())),
                _ => {}
            },
            Gate::SutScoreBelow(n, sut) => match sut_score(run, sut) {
                Some((score, how)) if score < *n => reasons.push(reason(
                    GateKind::Score,
                    None,
                    format!("score of system `{sut}` {score} ({how}) is below {n}"),
                )),
                None => reasons.push(reason(
                    GateKind::Score,
                    None,
                    format!("no case was asked of a system named `{sut}`: nothing to judge `score<{n}@{sut}` on"),
                )),
                _ => {}
            },
            Gate::Regression => match &run.comparison {
                None => skipped.push("regression: no baseline to compare with".to_string()),
                Some(c) if !c.baseline.is_fresh() => skipped.push(format!(
                    "regression: the baseline is {} commit(s) behind the base commit",
                    c.baseline.commits_behind
                )),
                // `unrelated` (always `Some` here) names both sides' suites, so a renamed suite
                // shows as the cause.
                Some(c) if c.no_common_suite => {
                    skipped.push(format!("regression: {}", c.unrelated().unwrap_or_default()))
                }
                Some(c) => {
                    for change in c.cases.iter().filter(|x| x.change == crate::compare::Change::NewFailure) {
                        reasons.push(reason(
                            GateKind::Regression,
                            Some(&change.suite_id),
                            format!("new failure: {}", change.name),
                        ));
                    }
                    // A failing test deleted, filtered out or renamed is red turned green with
                    // nothing fixed: as much a regression as a new failure.
                    for change in c.removed_failing() {
                        reasons.push(reason(
                            GateKind::Regression,
                            Some(&change.suite_id),
                            format!("failing in the baseline, gone now: {}", change.name),
                        ));
                    }
                    for gone in c.suites.iter().filter(|s| s.removed) {
                        let (_, failing) = gone.gone_counts();
                        if failing > 0 {
                            reasons.push(reason(
                                GateKind::Regression,
                                Some(&gone.name),
                                format!("suite {} is gone; {failing} of its tests failed in the baseline", gone.name),
                            ));
                        }
                    }
                    if let Some(delta) = c.score_delta
                        && delta < -regression_tolerance
                    {
                        reasons.push(reason(
                            GateKind::Regression,
                            None,
                            format!("combined score dropped {:.2} points (tolerance {regression_tolerance})", -delta),
                        ));
                    }
                }
            },
        }
    }

    let gate_failed = reasons.iter().any(|r| r.gate != GateKind::Error)
        || reasons.iter().any(|r| r.gate == GateKind::Error) && !harness_error && !usage_error;
    let outcome = if harness_error {
        RunOutcome::HarnessError
    } else if usage_error {
        RunOutcome::UsageError
    } else if gate_failed {
        RunOutcome::Fail
    } else {
        RunOutcome::Pass
    };
    Verdict { outcome, reasons, gates: gates.iter().map(Gate::label).collect(), skipped }
}

/// Suites named in the interruption's reason; the rest are counted.
const INTERRUPTED_NAMES: usize = 10;

/// "fcorr was interrupted by SIGINT before the run finished; stopped while running: a; not
/// run: b, c": the cancelled suites that had started (what finished in them is kept) apart from
/// those that never did. Without a signal recorded, the cancelled suites alone are the cause.
fn interrupted(signal: Option<&str>, suites: &[crate::model::Suite]) -> String {
    let (started, not_run): (Vec<_>, Vec<_>) = suites
        .iter()
        .filter(|s| s.status == SuiteStatus::Cancelled)
        .partition(|s| !s.phases.is_empty() || s.counts.total > 0);
    let list = |suites: &[&crate::model::Suite]| {
        let names: Vec<&str> = suites.iter().take(INTERRUPTED_NAMES).map(|s| s.name.as_str()).collect();
        let more = suites.len().saturating_sub(INTERRUPTED_NAMES);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        format!("{}{more}", names.join(", "))
    };
    let mut message = match signal {
        Some(signal) => format!("fcorr was interrupted by {signal} before the run finished"),
        None => "suites were cancelled before they finished (no stop signal was recorded): a cancelled suite \
                 proves nothing"
            .to_string(),
    };
    if !started.is_empty() {
        message.push_str(&format!("; stopped while running: {}", list(&started)));
    }
    if !not_run.is_empty() {
        message.push_str(&format!("; not run: {}", list(&not_run)));
    }
    message
}

/// The score of one system's cases: each suite that asked it scored by its own policy over that
/// system's cases only, then weighted as the combined score is, with which policy over how many
/// cases (for the message); `None` when no case names it.
fn sut_score(run: &Run, sut: &str) -> Option<(f64, String)> {
    let parts: Vec<crate::model::Suite> = run
        .suites
        .iter()
        .filter(|s| s.cases.iter().any(|c| c.extra().eval().sut.as_deref() == Some(sut)))
        .map(|s| crate::score::part_of(s, |c| c.extra().eval().sut.as_deref() == Some(sut)))
        .collect();
    let score = crate::score::combined_score(&parts)?;
    let mut policies: Vec<&str> = parts.iter().map(|p| p.score.policy.label()).collect();
    policies.dedup();
    let cases: u64 = parts.iter().map(|p| p.counts.total).sum();
    let policy = match policies.as_slice() {
        [one] => format!("policy {one}"),
        _ => "each suite's policy".to_string(),
    };
    Some((score, format!("{policy} over its {cases} cases")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CaseStatus;

    #[test]
    fn parses_gates() {
        let gates = Gate::parse_list(&["strict, critical".into(), "score<80".into()]).unwrap();
        assert_eq!(gates, vec![Gate::Strict, Gate::Critical, Gate::ScoreBelow(80.0)]);
        assert!(Gate::parse("score<abc").is_err());
        assert!(Gate::parse("score<NaN").is_err());
        assert!(Gate::parse("score<inf").is_err());
        assert!(Gate::parse("nope").is_err());
        assert!(Gate::parse_list(&["none".into()]).unwrap().is_empty());
    }

    use crate::config::Weights;
    use crate::model::{Case, Suite, SuiteError, SuiteKind};

    /// A scored suite: `passed`/`failed` cases, optionally an error of `error` kind.
    fn suite(name: &str, passed: usize, failed: usize, error: Option<SuiteErrorKind>, critical: bool) -> Suite {
        let mut s = Suite::new(name, name, SuiteKind::Import);
        let status = |i: usize| if i < passed { CaseStatus::Passed } else { CaseStatus::Failed };
        s.cases = (0..passed + failed)
            .map(|i| Case { name: format!("t{i}").into(), status: status(i), ..Case::default() })
            .collect();
        s.finalize_cases();
        s.critical = critical;
        s.status = match (&error, failed) {
            (Some(_), _) => SuiteStatus::Error,
            (None, 0) if passed == 0 => SuiteStatus::NoTests,
            (None, 0) => SuiteStatus::Passed,
            (None, _) => SuiteStatus::Failed,
        };
        s.error = error.map(|kind| SuiteError { kind, message: format!("{name} broke"), hint: None });
        s.score = crate::score::score_suite(&s, crate::model::Policy::Strict, 100.0, &Weights::default());
        s
    }

    #[test]
    fn a_suite_whose_every_test_was_skipped_is_not_said_to_have_collected_none() {
        let mut skipped = suite("s", 0, 0, None, false);
        skipped.cases = vec![Case { name: "t".into(), status: CaseStatus::Skipped, ..Case::default() }];
        skipped.finalize_cases();
        let run =
            Run::assemble(vec![skipped, suite("e", 0, 0, None, false)], time::OffsetDateTime::now_utc(), None, None);
        let verdict = judge(&run, &[Gate::Empty], 0.0);
        let messages: Vec<&str> = verdict.reasons.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "no tests ran in any suite",
                "s: every collected test was skipped (1)",
                "e: the test tool collected no tests"
            ]
        );
    }

    /// A run a stop signal ended fails even with no gate, first naming the signal, the suites
    /// it stopped and those it kept from starting; the passing suite that finished is not named.
    #[test]
    fn an_interrupted_run_fails_whatever_the_gates_and_names_the_signal_and_suites() {
        let mut stopped = suite("stopped", 1, 0, None, false);
        stopped.status = SuiteStatus::Cancelled;
        stopped.phases.push(crate::model::Phase {
            kind: crate::model::PhaseKind::Test,
            command: "pytest".into(),
            status: crate::model::PhaseStatus::Cancelled,
            exit_code: None,
            duration_ms: 1,
            log_tail: String::new(),
            note: None,
        });
        let mut never = Suite::new("never", "never", SuiteKind::Project);
        never.status = SuiteStatus::Cancelled;
        let mut run = Run::assemble(
            vec![suite("done", 2, 0, None, false), stopped, never],
            time::OffsetDateTime::UNIX_EPOCH,
            None,
            None,
        );
        // With no gate: the one reason, the interruption.
        let only_reason = |run: &Run| {
            let verdict = judge(run, &[], 0.0);
            assert_eq!(verdict.outcome, RunOutcome::Fail);
            assert_eq!(verdict.reasons.len(), 1, "{:?}", verdict.reasons);
            assert_eq!(verdict.reasons[0].gate, GateKind::Interrupted);
            verdict.reasons[0].message.clone()
        };
        run.interrupted = Some("SIGTERM".into());
        assert_eq!(
            only_reason(&run),
            "fcorr was interrupted by SIGTERM before the run finished; stopped while running: stopped; not run: never"
        );
        // No signal recorded (an older fcorr's results, a merge of them): the cancelled suites
        // still prove nothing. Before, `--fail-on none` passed this run.
        run.interrupted = None;
        assert_eq!(
            only_reason(&run),
            "suites were cancelled before they finished (no stop signal was recorded): a cancelled suite proves \
             nothing; stopped while running: stopped; not run: never"
        );
        // The gates' own reasons follow it.
        let verdict = judge(&run, &[Gate::Strict], 0.0);
        assert_eq!(verdict.reasons[0].gate, GateKind::Interrupted);
        assert!(verdict.reasons.len() > 1, "{:?}", verdict.reasons);
    }

    /// Verdicts and exit codes across gates, and which outcome wins when several apply:
    /// harness error (3) > usage error (2) > a failed gate (1) > pass (0); a suite that could
    /// not be measured for another reason fails the run even with no gates.
    #[test]
    fn verdict_and_exit_code_precedence() {
        use SuiteErrorKind::*;
        let ok = || suite("ok", 3, 0, None, false);
        let red = || suite("red", 2, 1, None, false);
        let all = [Gate::Strict, Gate::Critical, Gate::Empty];
        // (what, suites, gates, outcome, exit code, the gates named in the reasons)
        type Row = (&'static str, Vec<Suite>, Vec<Gate>, RunOutcome, i32, &'static [GateKind]);
        let table: Vec<Row> = vec![
            ("all pass", vec![ok()], all.to_vec(), RunOutcome::Pass, 0, &[]),
            ("strict failure", vec![ok(), red()], all.to_vec(), RunOutcome::Fail, 1, &[GateKind::Strict]),
            ("failure with no gates", vec![red()], vec![], RunOutcome::Pass, 0, &[]),
            (
                "critical suite, critical gate only",
                vec![suite("c", 1, 1, None, true)],
                vec![Gate::Critical],
                RunOutcome::Fail,
                1,
                &[GateKind::Critical],
            ),
            (
                "no tests ran",
                vec![suite("e", 0, 0, None, false)],
                vec![Gate::Empty],
                RunOutcome::Fail,
                1,
                &[GateKind::Empty, GateKind::Empty],
            ),
            ("score below", vec![ok(), red()], vec![Gate::ScoreBelow(60.0)], RunOutcome::Fail, 1, &[GateKind::Score]),
            ("score above", vec![ok(), red()], vec![Gate::ScoreBelow(40.0)], RunOutcome::Pass, 0, &[]),
            (
                "no results fails even without gates",
                vec![suite("n", 0, 0, Some(NoResults), false)],
                vec![],
                RunOutcome::Fail,
                1,
                &[GateKind::Error],
            ),
            (
                "usage beats a failed gate",
                vec![red(), suite("u", 0, 0, Some(Input), false)],
                all.to_vec(),
                RunOutcome::UsageError,
                2,
                &[GateKind::Error, GateKind::Strict],
            ),
            (
                "harness beats usage",
                vec![suite("u", 0, 0, Some(Input), false), suite("h", 0, 0, Some(ToolMissing), false)],
                all.to_vec(),
                RunOutcome::HarnessError,
                3,
                &[GateKind::Error, GateKind::Error, GateKind::Empty],
            ),
            ("regression without baseline is skipped", vec![ok()], vec![Gate::Regression], RunOutcome::Pass, 0, &[]),
        ];
        for (what, suites, gates, outcome, code, reasons) in table {
            let run = Run::assemble(suites, time::OffsetDateTime::now_utc(), None, None);
            let verdict = judge(&run, &gates, 0.0);
            assert_eq!(verdict.outcome, outcome, "{what}: {:?}", verdict.reasons);
            assert_eq!(verdict.outcome.exit_code(), code, "{what}");
            let kinds: Vec<GateKind> = verdict.reasons.iter().map(|r| r.gate).collect();
            assert_eq!(kinds, reasons, "{what}: {:?}", verdict.reasons);
        }
    }

    #[test]
    fn gate_names_serialise_as_before() {
        let names: Vec<String> = [GateKind::Strict, GateKind::Score, GateKind::Error]
            .iter()
            .map(|g| serde_json::to_string(g).unwrap())
            .collect();
        assert_eq!(names, ["\"strict\"", "\"score\"", "\"error\""]);
        assert!(GateKind::Regression == "regression");
    }
}
