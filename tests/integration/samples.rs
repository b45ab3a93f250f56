//! `fcorr run --samples DIR`: the layout `DIR/<sdk>/<sample>/{expected,tests}/`, each sample
//! copied into a scratch directory and run as one suite; `--sdk` restricts to one SDK and prints
//! `Passed: x/y` with the pass rate. Expected counts come from pytest's own runs (expected.json).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use fcorr::model::{Run, SuiteStatus};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/samples")
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walk(dir);
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn fcorr() -> Command {
    let mut cmd = crate::support::fcorr_bin();
    cmd.env("FCORR_CACHE_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fcorr-test-cache"));
    cmd
}

#[test]
fn every_sample_is_a_suite_with_pytests_counts_and_the_tree_is_untouched() {
    let before = listing(&fixture());
    let out = tempfile::tempdir().unwrap();
    let output = fcorr()
        .args(["run", "--no-install", "--json", "--samples"])
        .arg(fixture())
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let run: Run = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap()).unwrap();
    let samples = expected["samples"].as_object().unwrap();
    assert_eq!(run.suites.len(), samples.len());
    for suite in &run.suites {
        let want = &samples[&suite.name]["counts"];
        let got = (suite.counts.passed, suite.counts.failed, suite.counts.skipped, suite.counts.error);
        let want = (
            want["passed"].as_u64().unwrap(),
            want["failed"].as_u64().unwrap(),
            want["skipped"].as_u64().unwrap(),
            want["error"].as_u64().unwrap(),
        );
        assert_eq!(got, want, "{}", suite.name);
    }
    let div = run.suites.iter().find(|s| s.name == "calcsdk/div_002").unwrap();
    assert_eq!(div.status, SuiteStatus::Failed);
    assert_eq!(output.status.code(), Some(1));
    // The samples were copied, not run in place: no caches, no reports in the source tree.
    assert_eq!(listing(&fixture()), before);
}

#[test]
fn sdk_filter_prints_passed_and_pass_rate() {
    let out = tempfile::tempdir().unwrap();
    let output = fcorr()
        .args(["run", "--no-install", "--samples"])
        .arg(fixture())
        .args(["--sdk", "calcsdk", "--out"])
        .arg(out.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Passed: 1/2"), "{stdout}");
    assert!(stdout.contains("Pass rate: 50.0%"), "{stdout}");
    assert!(!stdout.contains("textsdk"), "{stdout}");
}

#[test]
fn unknown_sdk_is_a_usage_error() {
    let output = fcorr().args(["run", "--samples"]).arg(fixture()).args(["--sdk", "nope"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no SDK directory `nope`"));
}
