//! A JavaScript/TypeScript project's build phase checks what a build checks (`tsc --noEmit`)
//! without producing the bundle its tests do not need; the `build` script runs when they need it
//! or when fcorr.toml says `build = true`, and a type error is still a failed build.

use fcorr::model::{PhaseKind, PhaseStatus, SuiteStatus};

use crate::support::*;

/// `fcorr run` on a fresh copy of the js-ts-no-build fixture, with this fcorr.toml (if any) and
/// this change to its sources; the run, its exit code, and the copy.
fn run_copy(config: Option<&str>, change: impl Fn(&std::path::Path)) -> (fcorr::model::Run, i32, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("app");
    copy_project(&fixture("js-ts-no-build"), &project);
    std::fs::remove_dir_all(project.join("dist")).ok();
    change(&project);
    let (run, code) = run_again(dir.path(), config);
    (run, code, dir)
}

/// `fcorr run` again on the copy `run_copy` made in `dir`.
fn run_again(dir: &std::path::Path, config: Option<&str>) -> (fcorr::model::Run, i32) {
    let mut cmd = fcorr();
    cmd.arg("run").arg("--out").arg(dir.join("out")).arg("--json");
    match config {
        Some(text) => {
            let file = dir.join("fcorr.toml");
            std::fs::write(&file, format!("[[suite]]\npath = \"app\"\n{text}")).unwrap();
            cmd.arg("--config").arg(file);
        }
        None => {
            cmd.arg(dir.join("app"));
        }
    }
    parse_run(&cmd.output().unwrap())
}

/// Puts a type error in the fixture's sources.
fn break_types(project: &std::path::Path) {
    let source = project.join("src/price.ts");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(source, text.replace("return prices.reduce", "const wrong: string = 1;\n  return prices.reduce"))
        .unwrap();
}

#[test]
fn tests_that_import_the_sources_get_a_type_check_and_no_bundle() {
    let (run, code, dir) = run_copy(None, |_| {});
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::Passed, 0), "{:#?}", suite.phases);
    let build = phase(suite, PhaseKind::Build);
    // Incremental: tsc keeps what it checked beside the dependencies and re-checks what changed.
    let info = dir.path().join("app/node_modules/.cache/fcorr/tsc.tsbuildinfo");
    assert_eq!(
        build.command,
        format!("npx --no-install tsc --noEmit --incremental --tsBuildInfoFile {}", info.display())
    );
    assert_eq!(build.status, PhaseStatus::Passed, "{}", build.log_tail);
    assert!(build.note.as_deref().unwrap().contains("the `build` script is not run"), "{:?}", build.note);
    assert!(!dir.path().join("app/dist").exists(), "no bundle was written");
    assert!(info.is_file(), "tsc kept its state for the next run");
    assert_eq!(suite.counts.passed, 3);

    // The next run re-checks what changed: a type error made since is still a failed build.
    break_types(&dir.path().join("app"));
    let (run, code) = run_again(dir.path(), None);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::BuildFailed, 1), "{:#?}", suite.phases);
}

#[test]
fn a_type_error_is_still_a_failed_build() {
    let (run, code, _dir) = run_copy(None, break_types);
    let suite = &run.suites[0];
    assert_eq!((suite.status, code), (SuiteStatus::BuildFailed, 1), "{:#?}", suite.phases);
    // The type check ran alongside the tests; with it failing, their results do not count.
    let test = phase(suite, PhaseKind::Test);
    assert_eq!(test.status, PhaseStatus::Skipped);
    assert!(test.note.as_deref().unwrap().contains("ran alongside the build check"), "{:?}", test.note);
    assert!(suite.cases.is_empty());
    let d = suite.diagnostics.iter().find(|d| d.file.as_deref() == Some("src/price.ts")).unwrap();
    assert!(d.message.starts_with("TS2322"), "{d:?}");
    // The weighted score's build component still says the build failed.
    assert_eq!(suite.score.value, 0.0);
}

#[test]
fn build_true_runs_the_build_script() {
    let (run, code, dir) = run_copy(Some("build = true\n"), |_| {});
    let suite = &run.suites[0];
    assert_eq!(code, 0, "{:#?}", suite.phases);
    let build = phase(suite, PhaseKind::Build);
    assert_eq!(build.command, "npm run build");
    assert!(build.note.as_deref().unwrap().contains("`build = true`"), "{:?}", build.note);
    assert!(dir.path().join("app/dist/price.js").is_file(), "the build wrote its output");
}
