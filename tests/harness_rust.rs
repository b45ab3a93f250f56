//! The Rust ecosystem end to end: `fcorr run` on the real cargo fixtures, compared with what
//! `cargo test --no-fail-fast` reported in each fixture's `expected.json`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use assert_cmd::prelude::*;
use fcorr::model::{CaseStatus, PhaseKind, PhaseStatus, Run, SuiteStatus};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture(name).join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn run(name: &str) -> (Run, i32) {
    let out = tempfile::tempdir().unwrap();
    let output = Command::cargo_bin("fcorr")
        .unwrap()
        .arg("run")
        .arg(fixture(name))
        .arg("--out")
        .arg(out.path())
        .arg("--json")
        .env("FCORR_CACHE_DIR", repo().join("target/fcorr-test-cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let run: Run = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("stdout is not a Run ({e}):\n{stdout}\nstderr:\n{}", String::from_utf8_lossy(&output.stderr))
    });
    (run, output.status.code().unwrap_or(-1))
}

fn status_of(text: &str) -> CaseStatus {
    serde_json::from_value(Value::String(text.to_string())).unwrap()
}

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

    // expected.json's `target` is `lib` (the unit tests in src/lib.rs) or the integration binary.
    let target_file =
        |target: &str| if target == "lib" { "src/lib.rs".to_string() } else { format!("tests/{target}.rs") };
    let ours: BTreeMap<(String, String), CaseStatus> =
        suite.cases.iter().map(|c| ((c.file.clone().unwrap_or_default(), c.name.clone()), c.status)).collect();
    let theirs: BTreeMap<(String, String), CaseStatus> = want["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let key = (target_file(c["target"].as_str().unwrap()), c["name"].as_str().unwrap().to_string());
            (key, status_of(c["status"].as_str().unwrap()))
        })
        .collect();
    assert_eq!(ours, theirs);
    let counts = &want["counts"];
    let n = |k: &str| counts[k].as_u64().unwrap();
    assert_eq!(
        (suite.counts.passed, suite.counts.failed, suite.counts.skipped, suite.counts.error),
        (n("passed"), n("failed"), n("skipped"), n("error"))
    );

    let failed = suite.cases.iter().find(|c| c.status == CaseStatus::Failed).unwrap();
    assert_eq!(failed.line, Some(32));
    assert!(failed.message.as_deref().unwrap().contains("average of 1 and 2 should round to 2"), "{failed:?}");
    let ignored = suite.cases.iter().find(|c| c.status == CaseStatus::Skipped).unwrap();
    assert_eq!(ignored.message.as_deref(), Some("slow: exhaustive check"));
    let integration = suite.cases.iter().find(|c| c.name == "grade_boundaries").unwrap();
    assert_eq!(integration.classname.as_deref(), Some("integration"));
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
    assert_eq!(suite.phase(PhaseKind::Build).unwrap().exit_code, want["native_exit_code"].as_i64().map(|c| c as i32));
    assert_eq!(suite.phase(PhaseKind::Test).unwrap().status, PhaseStatus::Skipped);
    let d = suite.diagnostics.iter().find(|d| d.file.as_deref() == Some("src/lib.rs")).unwrap_or_else(|| {
        panic!("no diagnostic for src/lib.rs: {:?}", suite.diagnostics);
    });
    assert_eq!((d.line, d.column), (Some(19), Some(25)));
    assert!(d.message.contains("E0308") && d.message.contains("mismatched types"), "{d:?}");
}
