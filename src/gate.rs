//! Gate: the run's verdict and exit code from the configured gates.
//!
//! Gates: `strict` (a suite below its policy), `critical` (a critical case or suite failed),
//! `empty` (no tests ran), `score<N` (combined score below N), `regression` (a new failure or a
//! score drop beyond the tolerance, judged only against a fresh baseline). Suites that could not
//! be measured decide the exit code first: infrastructure problems are 3, bad input is 2.

use crate::errors::FcorrError;
use crate::model::{GateReason, Outcome, Run, SuiteErrorKind, SuiteStatus, Verdict};

/// One parsed gate.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    Strict,
    Critical,
    Empty,
    Regression,
    ScoreBelow(f64),
}

impl Gate {
    /// Parses `strict`, `critical`, `empty`, `regression` or `score<N`.
    pub fn parse(text: &str) -> Result<Gate, FcorrError> {
        let text = text.trim();
        match text {
            "strict" => Ok(Gate::Strict),
            "critical" => Ok(Gate::Critical),
            "empty" => Ok(Gate::Empty),
            "regression" => Ok(Gate::Regression),
            _ => {
                if let Some(n) = text.strip_prefix("score<") {
                    // `nan` and `inf` parse as f64 but compare false with every score: such a
                    // gate could never fail.
                    let n: f64 = n.trim().parse().ok().filter(|n: &f64| n.is_finite()).ok_or_else(|| {
                        FcorrError::Usage(format!("gate `{text}`: expected a number after `score<`, e.g. `score<80`"))
                    })?;
                    return Ok(Gate::ScoreBelow(n));
                }
                Err(FcorrError::Usage(format!(
                    "unknown gate `{text}` (known: strict, critical, empty, regression, score<N)"
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
        }
    }
}

/// Judges a run: evaluates every gate and records every reason.
pub fn judge(run: &Run, gates: &[Gate], regression_tolerance: f64) -> Verdict {
    let mut reasons = Vec::new();
    let mut skipped = Vec::new();
    let reason = |gate: &str, suite: Option<&str>, message: String| GateReason {
        gate: gate.into(),
        suite: suite.map(str::to_string),
        message,
    };

    let mut harness_error = false;
    let mut usage_error = false;
    for suite in &run.suites {
        if let Some(error) = &suite.error {
            match error.kind {
                SuiteErrorKind::ToolMissing | SuiteErrorKind::Harness => harness_error = true,
                SuiteErrorKind::Input => usage_error = true,
                SuiteErrorKind::NoResults | SuiteErrorKind::BadReport => {}
            }
            reasons.push(reason("error", Some(&suite.name), error.message.clone()));
        }
    }

    for gate in gates {
        match gate {
            Gate::Strict => {
                for suite in run.suites.iter().filter(|s| !s.score.met && s.error.is_none()) {
                    reasons.push(reason(
                        "strict",
                        Some(&suite.name),
                        format!(
                            "{}: score {} is below its {} threshold {} ({})",
                            suite.name,
                            suite.score.value,
                            suite.score.policy.label(),
                            suite.score.threshold,
                            suite.status.label()
                        ),
                    ));
                }
            }
            Gate::Critical => {
                for suite in &run.suites {
                    if suite.critical && !suite.score.met {
                        reasons.push(reason(
                            "critical",
                            Some(&suite.name),
                            format!("critical suite {} failed", suite.name),
                        ));
                    }
                    for case in suite.cases.iter().filter(|c| c.critical && c.status.is_failure()) {
                        reasons.push(reason(
                            "critical",
                            Some(&suite.name),
                            format!("critical case `{}` {}", case.name, case.status.label()),
                        ));
                    }
                }
            }
            Gate::Empty => {
                if run.totals.ran() == 0 {
                    reasons.push(reason("empty", None, "no tests ran in any suite".into()));
                }
                for suite in run.suites.iter().filter(|s| s.status == SuiteStatus::NoTests) {
                    reasons.push(reason(
                        "empty",
                        Some(&suite.name),
                        format!("{}: the test tool collected no tests", suite.name),
                    ));
                }
            }
            Gate::ScoreBelow(n) => match run.score {
                Some(score) if score < *n => {
                    reasons.push(reason("score", None, format!("combined score {score} is below {n}")));
                }
                None => reasons.push(reason("score", None, "no combined score: nothing was scored".into())),
                _ => {}
            },
            Gate::Regression => match &run.comparison {
                None => skipped.push("regression: no baseline to compare with".to_string()),
                Some(c) if !c.baseline.is_fresh() => skipped.push(format!(
                    "regression: the baseline is {} commit(s) behind the base commit",
                    c.baseline.commits_behind
                )),
                Some(c) => {
                    for change in c.cases.iter().filter(|x| x.change == crate::compare::Change::NewFailure) {
                        reasons.push(reason(
                            "regression",
                            Some(&change.suite_id),
                            format!("new failure: {}", change.name),
                        ));
                    }
                    if let Some(delta) = c.score_delta
                        && delta < -regression_tolerance
                    {
                        reasons.push(reason(
                            "regression",
                            None,
                            format!("combined score dropped {:.2} points (tolerance {regression_tolerance})", -delta),
                        ));
                    }
                }
            },
        }
    }

    let gate_failed = reasons.iter().any(|r| r.gate != "error")
        || reasons.iter().any(|r| r.gate == "error") && !harness_error && !usage_error;
    let outcome = if harness_error {
        Outcome::HarnessError
    } else if usage_error {
        Outcome::UsageError
    } else if gate_failed {
        Outcome::Fail
    } else {
        Outcome::Pass
    };
    Verdict { outcome, reasons, gates: gates.iter().map(Gate::label).collect(), skipped }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
