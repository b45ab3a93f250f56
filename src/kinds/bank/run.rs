//! Runs one bank suite: loads the bank and its history, observes each selected test through its
//! mechanism (paced when it calls the system under test), grades it and builds the suite's cases.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::expectations::{Bank, History, Source, load_bank, load_history};
use super::pace::{Pacer, Progress};
use super::scoring::{Findings, Graded, grade};
use super::select::Selection;
use super::{BankError, Mechanism, MechanismSpec, Registration};
use crate::execute::Collected;
use crate::model::{Case, CaseStatus, Detection, Reason, ResultsSource, Suite, SuiteKind};
use crate::score::HARD_FAIL;
use crate::score::interpret;
use crate::sut::{Sut, SutError};

/// Everything needed to run one bank suite.
#[derive(Debug, Clone)]
pub(crate) struct BankSettings {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) mechanism: &'static Registration,
    /// The bank file.
    pub(crate) bank: PathBuf,
    /// `history/` next to the bank file unless configured.
    pub(crate) history: PathBuf,
    pub(crate) spec: MechanismSpec,
    /// Gap between calls to the system under test.
    pub(crate) rate_limit: Duration,
    /// Lowest score a case passes with (default 100: anything less is reported as a failure).
    pub(crate) pass_mark: u32,
    pub(crate) selection: Selection,
}

/// Reason code for a critical failure.
pub(crate) const CRITICAL_FAILURE: &str = "critical-failure";

/// Runs the bank. Bad bank, history or rules files are errors; a test the SUT could not answer is
/// an errored case scoring 0, and the other tests go on.
pub(crate) fn run_bank(
    settings: &BankSettings,
    sut: Option<&dyn Sut>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Suite, BankError> {
    let started = Instant::now();
    let mechanism = (settings.mechanism.build)(&settings.spec)?;
    let bank = load_bank(&settings.bank)?;
    let history: History = load_history(&settings.history, &bank)?;
    check_tests(mechanism.as_ref(), &bank, &history)?;
    let tests: Vec<_> = bank.tests.iter().filter(|t| settings.selection.covers_test(t)).collect();
    let mut pacer = Pacer::new(if mechanism.calls_sut() { settings.rate_limit } else { Duration::ZERO });

    let mut cases = Vec::with_capacity(tests.len());
    for (i, test) in tests.iter().enumerate() {
        let resolved = history.resolve(test);
        pacer.wait();
        let call_started = Instant::now();
        let observed = mechanism.observe(test, sut);
        pacer.done();
        let mut case = Case {
            name: test.test_id.clone().into(),
            extra: crate::model::CaseExtra {
                eval: crate::model::EvalExtra {
                    expectation_source: Some(resolved.source.label()),
                    tags: tags(test, mechanism.name(), &resolved.source),
                    ..Default::default()
                }
                .packed(),
                ..Default::default()
            }
            .packed(),
            ..Case::default()
        };
        let expectations = &resolved.expectations;
        let expected = format!(
            "primary: {:?}\nsecondary: {:?}\nnot expected: {:?}\nrank checks: {}",
            expectations.expected_primary,
            expectations.expected_secondary,
            expectations.not_expected,
            expectations
                .rank_check
                .iter()
                .map(|r| format!("{} above {}", r.higher, r.lower))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let prompt = test.prompt.as_deref().map(|p| format!("prompt: {p}\n")).unwrap_or_default();
        match observed {
            Ok(observed) => {
                let findings = mechanism.findings(expectations, &observed);
                let graded = grade(&findings);
                let critical_failure = mechanism.critical_failure(test, &findings);
                let passed = !graded.hard_fail && !critical_failure && graded.score >= settings.pass_mark;
                case.status = if passed { CaseStatus::Passed } else { CaseStatus::Failed };
                // `critical` marks a failure that makes the run CRITICAL, so a critical test that
                // lost points without a critical failure (a missing secondary) is not flagged.
                case.extra_mut().critical = test.is_critical && (passed || critical_failure);
                case.extra_mut().score = Some(f64::from(graded.score));
                case.extra_mut().eval_mut().tags.insert("interpretation".into(), interpret(graded.score).into());
                case.set_message(Some(graded.summary(&findings)));
                case.extra_mut().eval_mut().reasons = reasons(&graded, &findings, critical_failure, &observed.actual);
                case.extra_mut().details = Some(
                    format!(
                        "{prompt}{expected}\nactual: {:?}\nexpectation source: {}",
                        observed.actual,
                        resolved.source.label()
                    )
                    .into(),
                );
                if !observed.details.is_null() {
                    case.extra_mut().output = Some(observed.details.to_string().into());
                }
                case.duration_ms = Some(observed.duration.as_secs_f64() * 1000.0);
                case.extra_mut().eval_mut().usage = observed.usage;
            }
            Err(error) => {
                case.status =
                    if matches!(error, SutError::Timeout { .. }) { CaseStatus::Timeout } else { CaseStatus::Error };
                // No answer, no evidence: it scores 0, and a critical test stays unproven.
                case.extra_mut().critical = test.is_critical;
                case.extra_mut().score = Some(0.0);
                case.set_message(Some(format!("no answer: {error}")));
                case.extra_mut().details =
                    Some(format!("{prompt}{expected}\nexpectation source: {}", resolved.source.label()).into());
                let code = if matches!(error, SutError::Timeout { .. }) { "timeout" } else { "backend-error" };
                case.extra_mut().eval_mut().reasons = vec![
                    Reason { code: code.into(), expected: None, actual: None, message: Some(error.to_string()) },
                    Reason {
                        code: HARD_FAIL.into(),
                        expected: None,
                        actual: None,
                        message: Some("no answer to judge".into()),
                    },
                ];
                case.duration_ms = Some(call_started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        progress(&Progress::new(
            i + 1,
            tests.len(),
            started.elapsed(),
            &test.test_id,
            case.extra().score.map(|s| s as u32),
        ));
        cases.push(case);
    }

    let mut suite = Suite::new(&settings.id, &settings.name, SuiteKind::Bank);
    suite.path = Some(settings.bank.display().to_string());
    suite.detection = Some(Detection {
        ecosystem: "bank".into(),
        language: "bank".into(),
        framework: settings.mechanism.name.into(),
        package_manager: None,
        confidence: 1.0,
        markers: markers(settings, &bank, &history),
    });
    // The status comes from the guards every kind's cases go through: the bank ran (it read
    // its tests), so no test at all is `no-tests`, and none is ever a pass.
    let collected = Collected {
        cases,
        source: ResultsSource::Report { format: "bank".into(), files: vec![settings.bank.display().to_string()] },
        ran: true,
        ..Collected::nothing()
    };
    crate::execute::apply_collected(&mut suite, collected, None);
    suite.weight = settings.mechanism.weight;
    suite.duration_ms = started.elapsed().as_millis() as u64;
    Ok(suite)
}

/// Every test of the bank (not only the selected ones: the file is wrong either way) must be
/// one its mechanism can judge with the expectations in force; the error names the file those
/// came from (the bank, or the history file that set them) and the test.
fn check_tests(mechanism: &dyn Mechanism, bank: &Bank, history: &History) -> Result<(), BankError> {
    for test in &bank.tests {
        let resolved = history.resolve(test);
        if let Err(why) = mechanism.check(test, &resolved.expectations) {
            let (file, from) = match &resolved.file {
                Some(file) => (file.as_path(), format!(" (its expectations in force, {})", resolved.source.label())),
                None => (bank.path.as_path(), String::new()),
            };
            return Err(BankError::input(file, format!("test `{}`{from}: {why}", test.test_id)));
        }
    }
    Ok(())
}

fn tags(test: &super::expectations::BankTest, mechanism: &str, source: &Source) -> BTreeMap<String, String> {
    let mut tags = BTreeMap::new();
    tags.insert("mechanism".into(), mechanism.to_string());
    tags.insert("source".into(), source.kind().to_string());
    if !test.name.is_empty() {
        tags.insert("title".into(), test.name.clone());
    }
    if let Some(category) = &test.category {
        tags.insert(crate::model::CATEGORY_TAG.into(), category.clone());
    }
    if !test.topics.is_empty() {
        tags.insert("topic".into(), test.topics.join(","));
    }
    if let Some(kind) = &test.pattern_type {
        tags.insert("pattern_type".into(), kind.clone());
    }
    if let Some(user_type) = &test.user_type {
        tags.insert("user_type".into(), user_type.clone());
    }
    if mechanism == "state" && !test.expectations.expected_primary.is_empty() {
        tags.insert("handler".into(), test.expectations.expected_primary.join(","));
    }
    if test.is_critical {
        tags.insert("critical_test".into(), "true".into());
    }
    tags
}

fn reasons(graded: &Graded, findings: &Findings, critical_failure: bool, actual: &[String]) -> Vec<Reason> {
    let mut reasons = Vec::new();
    if critical_failure {
        reasons.push(Reason {
            code: CRITICAL_FAILURE.into(),
            expected: None,
            actual: Some(actual.into()),
            message: Some(if findings.primary_missing.is_empty() {
                format!("critical: triggered on a negative test ({})", findings.false_positives.join(", "))
            } else {
                format!("critical: missed ({})", findings.primary_missing.join(", "))
            }),
        });
    }
    if graded.hard_fail {
        reasons.push(Reason {
            code: HARD_FAIL.into(),
            expected: Some(findings.primary_missing.clone().into()),
            actual: Some(actual.into()),
            message: Some(format!("primary not found: {}", findings.primary_missing.join(", "))),
        });
    }
    for d in &graded.deductions {
        reasons.push(Reason {
            code: d.penalty.code().into(),
            expected: None,
            actual: Some(d.item.clone().into()),
            message: Some(format!("\u{2212}{}: {} {}", d.points, d.penalty.words(), d.item)),
        });
    }
    reasons
}

fn markers(settings: &BankSettings, bank: &super::expectations::Bank, history: &History) -> Vec<String> {
    let mut markers = vec![format!(
        "bank {} ({}{}{} tests)",
        settings.bank.display(),
        bank.bank_type.as_deref().map(|t| format!("{t}, ")).unwrap_or_default(),
        bank.version.as_deref().map(|v| format!("version {v}, ")).unwrap_or_default(),
        bank.tests.len()
    )];
    if let Some(rules) = &settings.spec.rules {
        markers.push(format!("rules {}", rules.display()));
    }
    markers.push(format!("{} history file(s) in {}", history.files.len(), settings.history.display()));
    markers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::bank::test_sut::TableSut;
    use crate::kinds::bank::{always, pattern, semantic, state};
    use crate::model::SuiteStatus;
    use crate::score::is_hard_fail;

    fn settings(dir: &std::path::Path, mechanism: &'static Registration, rules: Option<PathBuf>) -> BankSettings {
        BankSettings {
            id: "b".into(),
            name: "b".into(),
            mechanism,
            bank: dir.join("bank.json"),
            history: dir.join("history"),
            spec: MechanismSpec { rules, top_k: None },
            rate_limit: Duration::ZERO,
            pass_mark: 100,
            selection: Selection::All,
        }
    }

    #[test]
    fn a_test_with_nothing_to_check_is_an_input_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let sut = TableSut::new(&[("T-1", serde_json::json!(["x"]))]);
        let cases = [
            (
                &semantic::REGISTRATION,
                r#"{"test_id": "T-1", "prompt": "p", "expected_primary": []}"#,
                "nothing to check",
            ),
            (&always::REGISTRATION, r#"{"test_id": "T-1", "expected_always": []}"#, "`expected_always` is missing"),
            (&always::REGISTRATION, r#"{"test_id": "T-1"}"#, "`expected_always` is missing"),
            (
                &always::REGISTRATION,
                r#"{"test_id": "T-1", "expected_always": ["x"], "not_expected": ["y"]}"#,
                "checks only `expected_always`",
            ),
            (&state::REGISTRATION, r#"{"test_id": "T-1", "user_state": {"a": 1}}"#, "`expected_handlers`"),
        ];
        for (mechanism, test, why) in cases {
            std::fs::write(dir.path().join("bank.json"), format!(r#"{{"tests": [{test}]}}"#)).unwrap();
            let err =
                run_bank(&settings(dir.path(), mechanism, None), Some(&sut), &mut |_| {}).unwrap_err().to_string();
            assert!(err.contains("bank.json: test `T-1`: ") && err.contains(why), "{test}: {err}");
        }
        // Set by a calibration: the history file that did it is named.
        std::fs::write(dir.path().join("bank.json"), r#"{"tests": [{"test_id": "T-1", "expected_handlers": ["a"]}]}"#)
            .unwrap();
        std::fs::create_dir(dir.path().join("history")).unwrap();
        std::fs::write(
            dir.path().join("history/expectations_2026-01-01.json"),
            r#"{"changes": [{"test_id": "T-1", "updated": {"expected_handlers": ["a"], "rank_check": [{"higher": "a", "lower": "b"}]}}]}"#,
        )
        .unwrap();
        let err = run_bank(&settings(dir.path(), &state::REGISTRATION, None), Some(&sut), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("expectations_2026-01-01.json: test `T-1`") && err.contains("calibration_2026-01-01"),
            "{err}"
        );
    }

    #[test]
    fn cases_carry_score_breakdown_source_and_status() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("bank.json"),
            r#"{"tests": [
              {"test_id": "V2-001", "name": "one", "topics": ["t1"], "prompt": "p1", "expected_primary": ["a"], "expected_secondary": ["b"]},
              {"test_id": "V2-002", "prompt": "p2", "expected_primary": ["a"], "not_expected": ["x"]},
              {"test_id": "V2-003", "prompt": "p3", "expected_primary": ["a"]},
              {"test_id": "V2-004", "prompt": "p4", "expected_primary": ["a"]}
            ]}"#,
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("history")).unwrap();
        std::fs::write(
            dir.path().join("history/expectations_2025-12-18.json"),
            r#"{"changes": [{"test_id": "V2-003", "updated": {"expected_primary": ["z"]}}]}"#,
        )
        .unwrap();
        let sut = TableSut::new(&[
            ("V2-001", serde_json::json!(["a"])),
            ("V2-002", serde_json::json!(["a", "x"])),
            ("V2-003", serde_json::json!(["a"])),
        ]);
        let mut lines = Vec::new();
        let suite =
            run_bank(&settings(dir.path(), &semantic::REGISTRATION, None), Some(&sut), &mut |p| lines.push(p.line()))
                .unwrap();
        let by = |id: &str| suite.cases.iter().find(|c| c.name == id).unwrap();
        assert_eq!(by("V2-001").extra().score, Some(90.0));
        assert_eq!(by("V2-001").message(), Some("90 Minor issue (\u{2212}10: missing secondary b)"));
        assert_eq!(by("V2-001").status, CaseStatus::Failed);
        assert_eq!(by("V2-001").extra().eval().tags["topic"], "t1");
        assert_eq!(by("V2-002").extra().score, Some(80.0));
        assert_eq!(by("V2-002").extra().eval().reasons[0].code, "false-positive");
        // The history moved V2-003's primary to `z`: now a hard fail, from the calibration.
        assert_eq!(by("V2-003").extra().score, Some(0.0));
        assert!(is_hard_fail(by("V2-003")));
        assert_eq!(by("V2-003").extra().eval().expectation_source.as_deref(), Some("calibration_2025-12-18"));
        // No answer: an error scoring 0, and the others went on.
        assert_eq!(by("V2-004").status, CaseStatus::Error);
        assert!(by("V2-004").message().unwrap().contains("no answer for V2-004"));
        assert_eq!(suite.status, SuiteStatus::Failed);
        assert_eq!(lines.len(), 4);
        assert!(lines[3].starts_with("[4/4] V2-004 0"), "{lines:?}");
    }

    #[test]
    fn pacing_applies_only_to_sut_calls_and_selection_filters() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("bank.json"),
            r#"{"tests": [{"test_id": "V2-1", "prompt": "p", "topics": ["x"], "expected_primary": ["a"]},
                          {"test_id": "V2-2", "prompt": "p", "topics": ["x"], "expected_primary": ["a"]},
                          {"test_id": "V2-3", "prompt": "p", "topics": ["y"], "expected_primary": ["a"]}]}"#,
        )
        .unwrap();
        let sut = TableSut::new(&[
            ("V2-1", serde_json::json!(["a"])),
            ("V2-2", serde_json::json!(["a"])),
            ("V2-3", serde_json::json!(["a"])),
        ]);
        let mut s = settings(dir.path(), &semantic::REGISTRATION, None);
        s.rate_limit = Duration::from_millis(120);
        s.selection = Selection::Topic("x".into());
        let suite = run_bank(&s, Some(&sut), &mut |_| {}).unwrap();
        assert_eq!(suite.cases.len(), 2);
        let calls = sut.calls.lock().unwrap();
        assert_eq!(calls.len(), 2);
        assert!(calls[1].1 - calls[0].1 >= Duration::from_millis(120));
        assert_eq!(suite.status, SuiteStatus::Passed);
    }

    #[test]
    fn critical_flag_marks_only_critical_failures() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("rules.json"),
            r#"{"patterns": [{"pattern": "end it", "entities": ["handler_crisis"], "critical": true}]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("bank.json"),
            r#"{"tests": [
              {"test_id": "PAT-C1", "prompt": "i want to end it", "expected_matches": ["handler_crisis"], "expected_secondary": ["rule_crisis_detection"], "pattern_type": "crisis", "is_critical": true},
              {"test_id": "PAT-C2", "prompt": "i feel like disappearing", "expected_matches": ["handler_crisis"], "pattern_type": "crisis", "is_critical": true},
              {"test_id": "PAT-N1", "prompt": "let's end it with the old phone plan", "not_expected_matches": ["handler_crisis"], "pattern_type": "negative", "is_critical": true}
            ]}"#,
        )
        .unwrap();
        let s = settings(dir.path(), &pattern::REGISTRATION, Some(dir.path().join("rules.json")));
        let suite = run_bank(&s, None, &mut |_| {}).unwrap();
        let by = |id: &str| suite.cases.iter().find(|c| c.name == id).unwrap();
        // Crisis caught but a secondary missing: 90, below the pass mark, not critical.
        assert_eq!(
            (by("PAT-C1").extra().score, by("PAT-C1").status, by("PAT-C1").extra().critical),
            (Some(90.0), CaseStatus::Failed, false)
        );
        // Missed crisis and crisis on a negative test: critical failures.
        assert!(by("PAT-C2").extra().critical && by("PAT-C2").status.is_failure());
        assert!(by("PAT-N1").extra().critical && by("PAT-N1").status.is_failure());
        assert_eq!(by("PAT-N1").extra().eval().reasons[0].code, CRITICAL_FAILURE);
        assert!(by("PAT-C1").output().as_deref().unwrap().contains("\"matched_text\":\"end it\""));
    }
}
