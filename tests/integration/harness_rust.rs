//! The Rust ecosystem end to end: `fcorr run` on the real cargo fixtures, compared with what
//! `cargo test --no-fail-fast` reported in each fixture's `expected.json`.

use std::collections::BTreeMap;

use fcorr::model::{CaseStatus, PhaseKind, PhaseStatus, SuiteStatus};

use crate::support::*;

#[test]
fn rust_mixed_reports_every_binary_with_no_fail_fast() {
    let want = expected("rust-mixed");
    let (run, code) = run("rust-mixed");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed, "{suite:#?}");
    assert_eq!(code, 1);
    assert_eq!(suite.score.value, 0.0);
    let test = suite.phase(PhaseKind::Test).unwrap();
    assert_eq!(test.exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert!(test.command.contains("--no-fail-fast"), "{}", test.command);

    assert_cases_by_target(suite, &want);

    let failed = suite.cases.iter().find(|c| c.status == CaseStatus::Failed).unwrap();
    assert_eq!(failed.line, Some(32));
    // Where the test panicked, as cargo printed it (`panicked at src/lib.rs:32:9`).
    assert_located_as_printed(failed, &printed_locations(suite, r"panicked at (\S+\.rs):(\d+):\d+"));
    assert!(failed.message().unwrap().contains("average of 1 and 2 should round to 2"), "{failed:?}");
    let ignored = suite.cases.iter().find(|c| c.status == CaseStatus::Skipped).unwrap();
    assert_eq!(ignored.message(), Some("slow: exhaustive check"));
    let integration = suite.cases.iter().find(|c| c.name == "grade_boundaries").unwrap();
    assert_eq!(integration.classname.as_deref(), Some("integration"));
}

/// A test that runs `cargo test` on a crate of its own, output inherited, prints that crate's whole
/// run inside its binary's run: none of it is the project's, and the suite fails as cargo says.
#[test]
fn rust_nested_cargo_counts_only_the_projects_own_tests() {
    let want = expected("rust-nested-cargo");
    let (run, code) = run("rust-nested-cargo");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed, "{suite:#?}");
    assert_eq!(code, 1);
    assert_eq!(suite.phase(PhaseKind::Test).unwrap().exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert_cases_by_target(suite, &want);
    // Said, not hidden: the child's run was seen and left out.
    assert!(
        suite
            .diagnostics
            .iter()
            .any(|d| d.message.contains("test binary `cli` (tests/cli.rs): a test run printed inside")
                && d.message.contains("3 result line(s)")),
        "{:#?}",
        suite.diagnostics
    );
}

/// A `harness = false` target that fails: libtest reports nothing for it, cargo exits 101 and
/// names it. The suite fails with an error case for that target quoting cargo and the target's
/// own last lines. Before, the suite's error was the generic "exited with code 101 but every
/// reported test passed".
#[test]
fn a_failing_harness_false_target_is_named_with_its_own_words() {
    let want = expected("rust-harness-false");
    let (run, code) = run("rust-harness-false");
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Failed, 1), "{suite:#?}");
    assert_eq!(suite.error, None);
    assert_eq!(suite.score.value, 0.0, "its results are incomplete: golden's tests cannot be seen");
    assert_eq!(suite.phase(PhaseKind::Test).unwrap().exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    let (errors, own): (Vec<_>, Vec<_>) = suite.cases.iter().partition(|c| c.status == CaseStatus::Error);
    let own: Vec<(&str, &str)> = own.iter().map(|c| (c.file.as_deref().unwrap(), c.name.as_str())).collect();
    assert_eq!(own, [("src/lib.rs", want["cases"][0]["name"].as_str().unwrap())]);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let error = errors[0];
    assert_eq!(
        (error.name.as_str(), error.classname.as_deref(), error.file.as_deref()),
        ("[test binary]", Some("golden"), Some("tests/golden.rs"))
    );
    let message = error.message().unwrap();
    for quoted in [
        "test binary `golden` (tests/golden.rs) failed without printing libtest's results",
        "`error: test failed, to rerun pass `--test golden``",
        "(exit status: 1)`",
        "`golden b.txt ... FAILED: differs at line 1` / `golden c.txt ... ok` / `golden: 1 of 3 files differ`",
    ] {
        assert!(message.contains(quoted), "{quoted}\nnot in: {message}");
    }
    let reason = &run.verdict.reasons[0].message;
    assert!(reason.contains("results are incomplete: `[test binary]` test binary `golden`"), "{reason}");
}

#[test]
fn rust_compile_error_in_tests_fails_the_build_gate() {
    let want = expected("rust-compile-error");
    assert!(want["counts"].is_null());
    let (run, code) = run("rust-compile-error");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::BuildFailed, "{suite:#?}");
    assert_eq!(code, 1);
    assert_eq!(suite.score.value, 0.0);
    // `cargo test` compiles every target before it runs any: the failure is the build's.
    let build = suite.phase(PhaseKind::Build).unwrap();
    assert_eq!(
        (build.status, build.exit_code),
        (PhaseStatus::Failed, want["native_exit_code"].as_i64().map(|c| c as i32))
    );
    assert!(build.note.as_deref().unwrap().contains("compilation ran inside the test command"), "{build:?}");
    let d = suite.diagnostics.iter().find(|d| d.file.as_deref() == Some("src/lib.rs")).unwrap_or_else(|| {
        panic!("no diagnostic for src/lib.rs: {:?}", suite.diagnostics);
    });
    assert_eq!((d.line, d.column), (Some(19), Some(25)));
    assert!(d.message.contains("E0308") && d.message.contains("mismatched types"), "{d:?}");
}

#[test]
fn rust_workspace_places_every_case_in_its_member_crate() {
    let want = expected("rust-workspace");
    let (run, code) = run("rust-workspace");
    let suite = &run.suites[0];
    assert_eq!(suite.status, SuiteStatus::Failed, "{suite:#?}");
    assert_eq!(code, 1);
    assert_eq!(suite.phase(PhaseKind::Test).unwrap().exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert_counts(suite, &want["counts"]);

    // cargo prints `src/lib.rs` for both members; each case must name its own crate's file,
    // passing cases too, so ids do not change when a test starts or stops failing.
    type Key = (String, String);
    let ours: BTreeMap<Key, (CaseStatus, Option<u32>)> = suite
        .cases
        .iter()
        .map(|c| {
            let line = (c.status == CaseStatus::Failed).then_some(c.line).flatten();
            ((c.file.as_deref().unwrap_or_default().to_string(), c.name.to_string()), (c.status, line))
        })
        .collect();
    let theirs: BTreeMap<Key, (CaseStatus, Option<u32>)> = want["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let key = (c["file"].as_str().unwrap().to_string(), c["name"].as_str().unwrap().to_string());
            (key, (status_of(c["status"].as_str().unwrap()), c["line"].as_u64().map(|l| l as u32)))
        })
        .collect();
    assert_eq!(ours, theirs);
    let ids: std::collections::HashSet<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), suite.cases.len(), "case ids are unique");
    assert!(ids.iter().all(|id| !id.contains('#')), "no id needed numbering: {ids:?}");
}

#[test]
fn a_warm_rust_run_is_one_cargo_test_whose_compile_step_is_the_build_gate() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("wordcount");
    copy_project(&repo().join("examples/rust-wordcount"), &project);
    let out = dir.path().join("out");
    let run_once =
        || parse_run(&fcorr().arg("run").arg(&project).arg("--out").arg(&out).arg("--json").output().unwrap());
    run_once();
    let (run, code) = run_once();
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{suite:#?}");
    // Cargo.lock lists no registry or git package: nothing for `cargo fetch` to do.
    let install = suite.phase(PhaseKind::Install).unwrap();
    assert_eq!(install.status, PhaseStatus::Skipped);
    assert!(install.note.as_deref().unwrap().contains("nothing to fetch"), "{install:?}");
    let build = suite.phase(PhaseKind::Build).unwrap();
    assert_eq!(build.status, PhaseStatus::Skipped);
    assert!(build.note.as_deref().unwrap().starts_with("checked by `cargo test`"), "{build:?}");
    let log = std::fs::read_to_string(out.join(suite.log_file.as_deref().unwrap())).unwrap();
    let commands: Vec<&str> = log.lines().filter(|l| l.starts_with("$ ") && l.contains("cargo ")).collect();
    assert_eq!(commands.len(), 1, "one cargo command, no fetch or build before it: {commands:?}");
    assert!(commands[0].contains("cargo test --workspace --no-fail-fast"), "{commands:?}");
}

/// The suite's cases (by file and name) and counts are those of `expected.json`, whose `target`
/// is `lib` (the unit tests in src/lib.rs) or an integration test binary in tests/.
fn assert_cases_by_target(suite: &fcorr::model::Suite, want: &serde_json::Value) {
    let target_file =
        |target: &str| if target == "lib" { "src/lib.rs".to_string() } else { format!("tests/{target}.rs") };
    assert_cases_keyed(
        suite,
        want,
        |c| (c.file.as_deref().unwrap_or_default().to_string(), c.name.to_string()),
        |c| (target_file(c["target"].as_str().unwrap()), c["name"].as_str().unwrap().to_string()),
    );
}
