//! Shared by the integration tests that run the real fcorr binary on fixtures: fixture paths,
//! each fixture's `expected.json` (what the native tool itself reported) and fcorr's JSON output.
//! Each test file uses a subset, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod disk;
pub mod github;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::prelude::*;
use fcorr::model::{CaseStatus, Phase, PhaseKind, Run, Suite};
use serde_json::Value;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture project under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
}

/// The fixture's `expected.json`.
pub fn expected(name: &str) -> Value {
    let path = fixture(name).join("expected.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Names of the `GITHUB_*` variables in the test's own environment.
///
/// fcorr changes what it does when it sees them (step summary, outputs, annotations, the
/// GitHub API), so tests run on GitHub Actions would otherwise test another path than tests run
/// anywhere else, and could write into the real job's summary. Tests that mean to exercise that
/// path set the variables they need explicitly, after this removal.
pub fn github_vars() -> Vec<String> {
    std::env::vars_os().filter_map(|(key, _)| key.into_string().ok()).filter(|key| key.starts_with("GITHUB_")).collect()
}

/// The fcorr binary (assert_cmd's `Command`) without the `GITHUB_*` variables of the test's
/// environment.
pub fn fcorr_bin() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("fcorr").unwrap();
    for key in github_vars() {
        cmd.env_remove(key);
    }
    cmd
}

/// The fcorr binary with the shared test cache, so virtualenvs are made once per machine, and
/// without the `GITHUB_*` variables of the test's environment.
pub fn fcorr() -> Command {
    let mut cmd = Command::cargo_bin("fcorr").unwrap();
    for key in github_vars() {
        cmd.env_remove(key);
    }
    cmd.env("FCORR_CACHE_DIR", repo().join("target/fcorr-test-cache"));
    cmd
}

/// Parses `fcorr ... --json` output; panics with stderr when stdout is not a run.
pub fn parse_run(output: &Output) -> (Run, i32) {
    let run: Run = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not a Run ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (run, output.status.code().unwrap_or(-1))
}

/// `fcorr run <fixture> --json` with extra arguments and environment.
pub fn run_with(name: &str, extra: &[&str], env: &[(&str, &Path)]) -> (Run, i32) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = fcorr();
    cmd.arg("run").arg(fixture(name)).arg("--out").arg(out.path()).arg("--json").args(extra);
    for (key, value) in env {
        cmd.env(key, value);
    }
    parse_run(&cmd.output().unwrap())
}

/// `fcorr run <fixture> --json`.
pub fn run(name: &str) -> (Run, i32) {
    run_with(name, &[], &[])
}

/// The suite's counts equal `expected.json`'s `counts` (passed, failed, skipped, error, total).
pub fn assert_counts(suite: &Suite, counts: &Value) {
    let n = |k: &str| counts[k].as_u64().unwrap();
    assert_eq!(
        (suite.counts.passed, suite.counts.failed, suite.counts.skipped, suite.counts.error),
        (n("passed"), n("failed"), n("skipped"), n("error")),
        "counts of {}",
        suite.id
    );
    assert_eq!(suite.counts.total, n("passed") + n("failed") + n("skipped") + n("error"));
}

/// The suite's cases and statuses, each keyed by `ours`, equal `expected.json`'s `cases`, each
/// keyed by `theirs` (the fixture's own identity of a test); its counts equal `counts`.
pub fn assert_cases_keyed<K: Ord + std::fmt::Debug>(
    suite: &Suite,
    expected: &Value,
    ours: impl Fn(&fcorr::model::Case) -> K,
    theirs: impl Fn(&Value) -> K,
) {
    let actual: std::collections::BTreeMap<K, CaseStatus> = suite.cases.iter().map(|c| (ours(c), c.status)).collect();
    let wanted: std::collections::BTreeMap<K, CaseStatus> = expected["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (theirs(c), status_of(c["status"].as_str().unwrap())))
        .collect();
    assert_eq!(actual, wanted, "suite {}", suite.id);
    assert_counts(suite, &expected["counts"]);
}

/// The suite's cases, named by `name_of`, and their statuses equal `expected.json`'s `cases`, with
/// no duplicates; its counts equal `expected.json`'s `counts`.
pub fn assert_matches_expected(suite: &Suite, expected: &Value, name_of: impl Fn(&fcorr::model::Case) -> String) {
    let actual: std::collections::BTreeMap<String, String> =
        suite.cases.iter().map(|c| (name_of(c), c.status.label().to_string())).collect();
    let wanted: std::collections::BTreeMap<String, String> = expected["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c["status"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(actual, wanted, "suite {}: {:#?}", suite.id, suite.phases);
    assert_eq!(suite.cases.len(), wanted.len(), "no duplicate cases");
    assert_counts(suite, &expected["counts"]);
}

/// A status as `expected.json` writes it.
pub fn status_of(text: &str) -> CaseStatus {
    serde_json::from_value(Value::String(text.to_string())).unwrap()
}

/// The suite's phase of this kind; panics when it was not planned.
pub fn phase(suite: &Suite, kind: PhaseKind) -> &Phase {
    suite.phase(kind).unwrap_or_else(|| panic!("no {kind:?} phase in {:?}", suite.phases))
}

/// Copies a project without its installed dependencies or build outputs.
pub fn copy_project(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "node_modules" || name == "target" || name == ".venv" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_project(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// The `file:line`s the native tool printed in the test phase's output (its log tail, colours
/// removed), read with `pattern`: a regex with the path in group 1 and the line in group 2.
pub fn printed_locations(suite: &Suite, pattern: &str) -> Vec<(String, u32)> {
    let log = strip_ansi_escapes::strip_str(&phase(suite, PhaseKind::Test).log_tail);
    let pattern = regex::Regex::new(pattern).unwrap();
    pattern.captures_iter(&log).map(|c| (c[1].to_string(), c[2].parse().unwrap())).collect()
}

/// The case points where the native tool said it failed: one of the `printed` locations has the
/// case's line and names its file (the tools print it whole, relative or by its base name).
pub fn assert_located_as_printed(case: &fcorr::model::Case, printed: &[(String, u32)]) {
    let file = case.file.as_deref().unwrap_or_else(|| panic!("{} has no file: {case:?}", case.name));
    let same_file = |p: &str| p == file || file.ends_with(&format!("/{p}")) || p.ends_with(&format!("/{file}"));
    assert!(
        printed.iter().any(|(p, line)| same_file(p) && case.line == Some(*line)),
        "{} is at {file}:{:?}; the tool printed {printed:?}",
        case.name,
        case.line
    );
}

/// The 1-based line of the first line of `file` (below the fixture) that contains `text`.
pub fn line_of(fixture_name: &str, file: &str, text: &str) -> u32 {
    let source = std::fs::read_to_string(fixture(fixture_name).join(file)).unwrap();
    source.lines().position(|l| l.contains(text)).unwrap_or_else(|| panic!("{text:?} not in {file}")) as u32 + 1
}

/// `PATH` with `programs` hidden and everything else still found: each directory that holds one
/// of them is replaced by a directory under `scratch` of links to all its other entries.
///
/// Dropping such a directory whole would also hide whatever else lives there (`node` and
/// `corepack` sit beside a `pnpm` shim after `corepack enable`; `sh` beside `gradle` in
/// `/usr/bin`), so a test would depend on what else happens to be installed.
pub fn path_without(programs: &[&str], scratch: &Path) -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = Vec::new();
    for (index, dir) in std::env::split_paths(&path).enumerate() {
        if !programs.iter().any(|program| dir.join(program).exists()) {
            dirs.push(dir);
            continue;
        }
        let shadow = scratch.join(format!("path-without-{index}"));
        std::fs::create_dir_all(&shadow).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name();
            if !programs.iter().any(|program| name == *program) {
                std::os::unix::fs::symlink(entry.path(), shadow.join(&name)).unwrap();
            }
        }
        dirs.push(shadow);
    }
    std::env::join_paths(dirs).unwrap()
}
