//! { etries: after a test phase, reruns only the cases that failed, up to N times, through each
//! ecosystem's own test selection ([`Ecosystem::rerun`], extra: crate::model::CaseExtra { , ..Default::default() }.packed() }, re-collects with the same parser and
//! records every attempt on its case. One loop for every ecosystem.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::ecosystems::{CollectContext, Ecosystem, PhasePlan};
use crate::errors::ExecError;
use crate::events::{Event, EventSink};
use crate::execute::process::{CommandSpec, Exit, LogSink};
use crate::model::{
    Attempt, Case, CaseStatus, Counts, Diagnostic, DiagnosticSource, PhaseKind, Reason, RetryPolicy, Severity, Suite,
    SuiteError, SuiteErrorKind, SuiteStatus,
};

use super::ProjectPlan;

/// Everything the retry loop needs from the suite run that came before it.
pub(crate) struct RetryRun<'a> {
    pub ecosystem: &'a dyn Ecosystem,
    /// The test phase as it ran (after `refine_phase`).
    pub test: &'a PhasePlan,
    pub root: &'a Path,
    pub work_dir: &'a Path,
    pub suite_id: &'a str,
    /// What is left of the test phase's timeout: retries share it, they get no fresh one.
    pub budget: Duration,
    pub grace: Duration,
    pub project: &'a ProjectPlan,
    pub log: &'a LogSink,
    pub sink: &'a dyn EventSink,
}

/// True for a case a retry may rerun: a test that failed or errored. Timeouts are not retried
/// (the phase's budget is spent), nor synthetic cases standing for a build or package failure.
pub(crate) fn retryable(case: &Case) -> bool {
    matches!(case.status, CaseStatus::Failed | CaseStatus::Error) && !case.name.starts_with('[')
}

/// Reruns the suite's failed cases up to `retries` times and merges each attempt into its case;
/// then decides the suite's status again from the merged cases.
pub(crate) fn retry_failed(suite: &mut Suite, run: &RetryRun<'_>, retries: u32, policy: RetryPolicy) {
    if retries == 0 || suite.status != SuiteStatus::Failed {
        return;
    }
    let started = Instant::now();
    // The exit of the last command that ran these cases: the first run's failure until a retry.
    let mut last_exit: Option<Exit> = None;
    for attempt in 1..=retries {
        let failing: Vec<usize> = (0..suite.cases.len()).filter(|&i| retryable(&suite.cases[i])).collect();
        if failing.is_empty() {
            break;
        }
        let refs: Vec<&Case> = failing.iter().map(|&i| &suite.cases[i]).collect();
        let Some(rerun) = run.ecosystem.rerun(run.test, &refs) else {
            note(
                suite,
                Severity::Notice,
                format!("retries: the {} runner cannot select single tests", run.ecosystem.name()),
            );
            break;
        };
        let selected: Vec<usize> = rerun.selected.iter().filter_map(|&k| failing.get(k).copied()).collect();
        if selected.is_empty() || rerun.phase.commands.is_empty() {
            break;
        }
        let left = run.budget.saturating_sub(started.elapsed());
        if left.is_zero() {
            note(suite, Severity::Warning, format!("retry {attempt} not run: the test phase's timeout is spent"));
            break;
        }
        // A report left by the previous attempt must not pass for this one's.
        for report in &rerun.phase.reports {
            let _ = fs::remove_file(&report.pattern);
        }
        for command in &rerun.phase.commands {
            if let Some(file) = &command.stdout_file {
                let _ = fs::remove_file(file);
            }
        }
        let line = rerun.phase.commands.iter().map(CommandSpec::display).collect::<Vec<_>>().join(" && ");
        run.sink.emit(Event::PhaseStarted {
            suite_id: run.suite_id.to_string(),
            phase: PhaseKind::Test,
            command: line.clone(),
        });
        let (mut phase, outcome) = super::run::run_phase(&rerun.phase, &line, left, run.grace, run.project, run.log);
        let what = format!("retry {attempt} of {retries}: {} failed test(s)", selected.len());
        phase.note = Some(match phase.note.take() {
            Some(n) => format!("{what}; {n}"),
            None => what,
        });
        run.sink.emit(Event::PhaseFinished { suite_id: run.suite_id.to_string(), phase: phase.clone() });
        suite.phases.push(phase);
        if !matches!(outcome.exit, Exit::Code(_)) {
            // Killed, timed out, cancelled or not started: what it printed proves nothing, so
            // every failure stands as the first run reported it.
            note(
                suite,
                Severity::Warning,
                format!("retry {attempt} did not finish ({}); the failures stand", outcome.exit),
            );
            break;
        }
        let ctx = CollectContext {
            root: run.root,
            work_dir: run.work_dir,
            reports: &rerun.phase.reports,
            outcome: &outcome,
            started: Some(crate::ecosystems::started_before(outcome.duration)),
        };
        let collected = run.ecosystem.collect(&ctx);
        // Ids the way the suite's cases got theirs, so the same test matches.
        let mut again = Suite::new(suite.id.clone(), suite.name.clone(), suite.kind);
        again.cases = collected.cases;
        again.finalize_cases();
        let by_id: HashMap<&str, &Case> = again.cases.iter().map(|c| (c.id.as_str(), c)).collect();
        let mut missing = Vec::new();
        for &i in &selected {
            let case = &mut suite.cases[i];
            match by_id.get(case.id.as_str()) {
                Some(new) if new.status != CaseStatus::Skipped => record_attempt(case, new),
                _ => missing.push(case.name.to_string()),
            }
        }
        if !missing.is_empty() {
            note(
                suite,
                Severity::Warning,
                format!("retry {attempt} did not report {}; their failures stand", quote_list(&missing)),
            );
        }
        last_exit = Some(outcome.exit);
    }
    if policy == RetryPolicy::Fail {
        for case in suite.cases.iter_mut().filter(|c| c.status == CaseStatus::Flaky) {
            fail_flaky(case);
        }
    }
    suite.counts = Counts::of(&suite.cases);
    let Some(exit) = last_exit else { return };
    if suite.counts.failures() > 0 {
        return;
    }
    match exit.code() {
        Some(0) => suite.status = SuiteStatus::Passed,
        code => {
            // The same guard as a first run: an exit code saying failure with every test passed.
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError {
                kind: SuiteErrorKind::NoResults,
                message: format!(
                    "the last retry exited with code {} but every rerun test passed: results are incomplete",
                    code.map_or_else(|| "?".to_string(), |c| c.to_string())
                ),
                hint: Some("read the retry's log tail".into()),
            });
        }
    }
}

/// `--rerun-failed`: the cases of one suite of an earlier run to run again.
#[derive(Debug, Clone)]
pub(crate) struct RerunOnly {
    pub cases: Vec<Case>,
    /// When the earlier run started (its `started_at`): recorded as the suite's `rerun_of`.
    pub of: String,
    /// The earlier run's first case saying its results were incomplete (`[test binary]`…), if
    /// any: tests it stands for failed unseen, so no selection of named tests covers them.
    pub incomplete: Option<String>,
}

/// `--rerun-failed`, in the test phase: the phase narrowed to the earlier run's failed cases,
/// with a note; the ids to keep (other cases the framework reports as skipped were filtered out).
pub(crate) fn narrow_for_rerun(
    ecosystem: &dyn Ecosystem,
    phase: &PhasePlan,
    only: &RerunOnly,
) -> Result<(PhasePlan, Vec<String>), ExecError> {
    if let Some(case) = &only.incomplete {
        // Narrowed to the tests it could name, the rerun would pass without running what failed.
        return Err(ExecError::IncompleteResults { of: only.of.clone(), case: case.clone() });
    }
    if only.cases.is_empty() {
        return Err(ExecError::NothingToRerun { of: only.of.clone() });
    }
    let refs: Vec<&Case> = only.cases.iter().collect();
    match ecosystem.rerun(phase, &refs) {
        Some(rerun) if !rerun.selected.is_empty() => {
            let ids = rerun.selected.iter().filter_map(|&i| only.cases.get(i)).map(|c| c.id.to_string()).collect();
            let note = format!("rerun of {} failed test(s) from the run of {}", rerun.selected.len(), only.of);
            Ok((rerun.phase.with_note(Some(note)), ids))
        }
        _ => Err(ExecError::CannotSelect { runner: ecosystem.name() }),
    }
}

/// `fcorr merge`: lays a `--rerun-failed` suite over the suite of the run it reran. Each rerun
/// case's outcome wins, and its attempts list the earlier run's attempts and outcome first; a
/// case that failed before and passes now is flaky. A suite that reran in full (it failed with
/// no failing case, or its results were incomplete) replaces the original. The suite is scored
/// again with the default weights (a saved run does not keep its suites' weights).
pub(crate) fn overlay(original: &mut Suite, rerun: Suite) {
    let of = rerun.rerun_of.clone().unwrap_or_default();
    let in_full =
        !original.cases.iter().any(retryable) || crate::model::incomplete::incomplete_results(original).is_some();
    if in_full {
        let mut rerun = rerun;
        rerun.rerun_of = None;
        note(&mut rerun, Severity::Notice, format!("rerun in full by `fcorr run --rerun-failed` (run of {of})"));
        *original = rerun;
        return;
    }
    let mut replaced = 0;
    for new in rerun.cases {
        let Some(case) = original.cases.iter_mut().find(|c| c.id == new.id) else {
            original.cases.push(new);
            continue;
        };
        let before = case.status;
        let mut attempts = std::mem::take(&mut case.extra_mut().attempts);
        attempts.push(Attempt {
            status: case.status,
            duration_ms: case.duration_ms,
            message: case.take_message(),
            details: case.extra_mut().details.take().map(|d| d.to_string()),
        });
        attempts.extend(new.attempts().iter().cloned());
        *case = new;
        let extra = case.extra_mut();
        extra.attempts = attempts;
        extra.retries = extra.attempts.len() as u32;
        if before.is_failure() && case.status == CaseStatus::Passed {
            case.status = CaseStatus::Flaky;
        }
        replaced += 1;
    }
    original.phases.extend(rerun.phases.into_iter().filter(|p| p.kind == PhaseKind::Test));
    original.diagnostics.extend(rerun.diagnostics);
    note(original, Severity::Notice, format!("{replaced} case(s) rerun by `fcorr run --rerun-failed` (run of {of})"));
    original.counts = Counts::of(&original.cases);
    original.duration_ms += rerun.duration_ms;
    match rerun.status {
        SuiteStatus::Passed | SuiteStatus::Failed if original.status == SuiteStatus::Failed => {
            original.status = if original.counts.failures() > 0 { SuiteStatus::Failed } else { SuiteStatus::Passed };
        }
        SuiteStatus::Passed | SuiteStatus::Failed => {}
        // The rerun could not prove anything (a crash, a timeout): that is what the suite says.
        other => {
            original.status = other;
            original.error = rerun.error;
        }
    }
    let (policy, threshold) = (original.score.policy, original.score.threshold);
    original.score = crate::score::score_suite(original, policy, threshold, &Default::default());
}

/// Moves the case's current outcome into its attempts and takes the rerun's as the new one.
fn record_attempt(case: &mut Case, new: &Case) {
    let attempt = Attempt {
        status: case.status,
        duration_ms: case.duration_ms,
        message: case.take_message(),
        details: case.extra_mut().details.take().map(|d| d.to_string()),
    };
    case.extra_mut().attempts.push(attempt);
    case.extra_mut().retries += 1;
    case.status = if new.status == CaseStatus::Passed { CaseStatus::Flaky } else { new.status };
    case.duration_ms = new.duration_ms;
    case.set_message(new.message().map(str::to_string));
    case.extra_mut().details = new.extra().details.clone();
    if new.extra().output.is_some() {
        case.extra_mut().output = new.extra().output.clone();
    }
}

/// `retries-policy = "fail"`: a case that passed only on a retry counts as failed. Its attempts
/// stay; the message says what happened and a `flaky` reason marks it.
fn fail_flaky(case: &mut Case) {
    let first = case.extra().attempts.iter().find(|a| a.status.is_failure());
    let why = first.and_then(|a| a.message.clone());
    case.extra_mut().details =
        first.and_then(|a| a.details.as_ref().map(Into::into)).or(case.extra_mut().details.take());
    case.set_message(Some(format!(
        "failed, then passed on retry {} (retries-policy = \"fail\" counts it as a failure){}",
        case.extra().retries,
        why.map(|m| format!(": {m}")).unwrap_or_default()
    )));
    case.status = CaseStatus::Failed;
    case.extra_mut().eval_mut().reasons.push(Reason {
        code: "flaky".into(),
        expected: None,
        actual: None,
        message: None,
    });
}

pub(crate) fn note(suite: &mut Suite, severity: Severity, message: String) {
    suite.diagnostics.push(Diagnostic {
        severity,
        source: DiagnosticSource::Other("retry".into()),
        message,
        file: None,
        line: None,
        column: None,
    });
}

/// "`a`, `b` and 3 more".
fn quote_list(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = names.iter().take(SHOWN).map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(name: &str, message: &str) -> Case {
        Case { name: name.into(), status: CaseStatus::Failed, ..Case::default() }.with_message(Some(message.into()))
    }

    #[test]
    fn a_pass_after_a_failure_is_flaky_and_keeps_the_failure() {
        let mut case = failed("t", "boom");
        record_attempt(&mut case, &Case { status: CaseStatus::Passed, duration_ms: Some(2.0), ..Case::default() });
        assert_eq!((case.status, case.extra().retries), (CaseStatus::Flaky, 1));
        assert_eq!(case.extra().attempts.len(), 1);
        assert_eq!(case.extra().attempts[0].status, CaseStatus::Failed);
        assert_eq!(case.extra().attempts[0].message.as_deref(), Some("boom"));
        assert_eq!(case.message(), None);
        assert_eq!(case.duration_ms, Some(2.0));
    }

    #[test]
    fn the_fail_policy_counts_a_flaky_case_as_failed() {
        let mut case = failed("t", "boom");
        record_attempt(&mut case, &Case { status: CaseStatus::Passed, ..Case::default() });
        fail_flaky(&mut case);
        assert_eq!(case.status, CaseStatus::Failed);
        assert!(case.message().unwrap().ends_with(": boom"), "{:?}", case.message());
        assert_eq!(case.extra().eval().reasons[0].code, "flaky");
    }

    #[test]
    fn synthetic_and_timed_out_cases_are_not_retried() {
        assert!(retryable(&failed("test_x", "")));
        assert!(!retryable(&failed("[build failed]", "")));
        assert!(!retryable(&Case { status: CaseStatus::Timeout, ..failed("t", "") }));
        assert!(!retryable(&Case { status: CaseStatus::Passed, ..failed("t", "") }));
    }

    #[test]
    fn policies_parse() {
        use clap::ValueEnum;
        assert_eq!(RetryPolicy::from_str("fail", false), Ok(RetryPolicy::Fail));
        assert_eq!(RetryPolicy::from_str("pass-on-retry", false), Ok(RetryPolicy::PassOnRetry));
        assert!(RetryPolicy::from_str("sometimes", false).is_err());
    }
}
