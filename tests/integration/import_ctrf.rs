//! CTRF round trip: a run rendered by fcorr's own CTRF report and imported again gives back the
//! same cases — statuses CTRF has no word for, retries, scores, reasons and tags included.

use std::collections::BTreeMap;

use fcorr::collect::{ParseOptions, parse_file};
use fcorr::model::{Attempt, Case, CaseStatus, Reason, Run, Suite, SuiteKind, SuiteStatus};
use fcorr::report::{REPORTERS, ReportEnv};

fn case(name: &str, status: CaseStatus) -> Case {
    Case {
        name: name.into(),
        classname: Some("pkg.Module".into()),
        file: Some("tests/test_mod.py".into()),
        line: Some(7),
        status,
        duration_ms: Some(12.0),
        ..Case::default()
    }
}

fn sample_run() -> Run {
    let mut suite = Suite::new("api", "api", SuiteKind::Import);
    let mut failed = case("fails", CaseStatus::Failed);
    failed.set_message(Some("assert 1 == 2".into()));
    failed.extra_mut().details = Some("Traceback...\nAssertionError: assert 1 == 2".into());
    failed.extra_mut().output = Some("printed".into());
    let mut errored = case("errors", CaseStatus::Error);
    errored.set_message(Some("fixture broke".into()));
    let mut timed_out = case("hangs", CaseStatus::Timeout);
    timed_out.extra_mut().critical = true;
    timed_out.extra_mut().eval_mut().reasons =
        vec![Reason { code: "timeout".into(), expected: None, actual: None, message: None }];
    let mut flaky = case("flips", CaseStatus::Flaky);
    flaky.extra_mut().retries = 1;
    flaky.extra_mut().attempts = vec![Attempt {
        status: CaseStatus::Failed,
        duration_ms: Some(3.0),
        message: Some("first".into()),
        details: None,
    }];
    let mut graded = case("graded", CaseStatus::Passed);
    graded.extra_mut().score = Some(90.0);
    graded.extra_mut().eval_mut().tags = BTreeMap::from([("category".to_string(), "auth".to_string())]);
    graded.extra_mut().eval_mut().expectation_source = Some("bank.yaml@v2".into());
    let mut top_level = case("top", CaseStatus::Skipped);
    top_level.classname = None;
    suite.cases = vec![case("passes", CaseStatus::Passed), failed, errored, timed_out, flaky, graded, top_level];
    suite.finalize_cases();
    suite.status = SuiteStatus::Failed;
    Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
}

#[test]
fn fcorr_ctrf_report_imports_back_to_the_same_cases() {
    let run = sample_run();
    let reporter = REPORTERS.iter().find(|r| r.name() == "ctrf").expect("a ctrf reporter is registered");
    let bytes = reporter.render(&run, &ReportEnv::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctrf-report.json");
    std::fs::write(&path, &bytes).unwrap();

    let (format, report) = parse_file(&path, None, &ParseOptions::default()).unwrap();
    assert_eq!(format, "ctrf");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let mut imported = Suite::new("api", "api", SuiteKind::Import);
    imported.cases = report.cases;
    imported.finalize_cases();

    let original = &run.suites[0].cases;
    assert_eq!(imported.cases.len(), original.len());
    for (want, got) in original.iter().zip(&imported.cases) {
        let what = &want.name;
        assert_eq!(got.id, want.id, "{what}: same suite, same id");
        assert_eq!(got.name, want.name);
        assert_eq!(got.classname, want.classname, "{what}");
        assert_eq!((&got.file, got.line), (&want.file, want.line), "{what}");
        assert_eq!(got.status, want.status, "{what}");
        assert_eq!(got.duration_ms, want.duration_ms, "{what}");
        assert_eq!((&got.message(), &got.extra().details), (&want.message(), &want.extra().details), "{what}");
        assert_eq!(
            (got.extra().retries, got.extra().attempts.len()),
            (want.extra().retries, want.extra().attempts.len()),
            "{what}"
        );
        assert_eq!((got.extra().critical, got.extra().score), (want.extra().critical, want.extra().score), "{what}");
        assert_eq!(got.extra().eval().tags, want.extra().eval().tags, "{what}");
        assert_eq!(got.extra().eval().reasons, want.extra().eval().reasons, "{what}");
        assert_eq!(got.extra().eval().expectation_source, want.extra().eval().expectation_source, "{what}");
    }
    assert_eq!(imported.cases[1].output().as_deref(), Some("printed"));
    assert_eq!(imported.cases[4].extra().attempts[0].message.as_deref(), Some("first"));
}
