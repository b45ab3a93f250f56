//! unittest projects, run by unittest itself: `python -m unittest`'s loading (discovery,
//! `load_tests`, doctests a `load_tests` adds) and runner, with fcorr's small result class
//! (`unittest_junit.py`, standard library only) writing a JUnit report. pytest is never involved:
//! it ignores `load_tests`, so its counts are not the project's.

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use super::ProjectFiles;
use crate::collect::ReportSpec;
use crate::ecosystems::{Collected, PhasePlan, ProjectPlanError};
use crate::execute::process::{CommandSpec, Exit};
use crate::model::{Case, CaseStatus, Diagnostic, PhaseKind, Severity};

/// The runner script, written into the suite's work directory and run with the project's Python.
const RUNNER: &str = include_str!("unittest_junit.py");
/// Its file name in the work directory.
const RUNNER_FILE: &str = "fcorr_unittest.py";
/// The JUnit report it writes, in the work directory.
pub(super) const REPORT_FILE: &str = "unittest.xml";
/// The message the runner gives the test that was running when fcorr stopped it (SIGTERM, at the
/// phase's timeout or because fcorr was interrupted: `finish_collect` tells which).
const STOPPED: &str = "still running when fcorr stopped the test run (SIGTERM)";

/// Where projects say how their tests run, in the order they are believed.
const RUNNER_SOURCES: &[&str] = &["tox.ini", "noxfile.py", "Makefile", "setup.cfg", "pyproject.toml"];

/// How a project runs its own tests, read from its tox/nox/make/CI files.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum DeclaredRunner {
    /// `python -m unittest <args>` (or `coverage run -m unittest <args>`), in `file`.
    Unittest { file: String, args: Vec<String> },
    /// `pytest`, `py.test` or `python -m pytest` named (run or installed) in `file`.
    Pytest { file: String },
}

/// How the project's own files run its tests, if they say: tox/nox/make/setup files first, then
/// CI workflows; the first file that names a runner decides.
pub(super) fn declared_runner(files: &ProjectFiles) -> Option<DeclaredRunner> {
    static UNITTEST: OnceLock<Regex> = OnceLock::new();
    static PYTEST: OnceLock<Regex> = OnceLock::new();
    // The patterns are literals; they compile.
    let unittest = UNITTEST.get_or_init(|| Regex::new(r"(?m)-m\s+unittest\b([^\n]*)").expect("valid regex"));
    let pytest = PYTEST
        .get_or_init(|| Regex::new(r"(?m)(?:^|[\s/=\x22'(])(?:pytest|py\.test)(?:\s|$|\x22|')").expect("valid regex"));
    let workflows = files.files.iter().map(String::as_str).filter(|f| {
        (f.starts_with(".github/workflows/") && (f.ends_with(".yml") || f.ends_with(".yaml")))
            || *f == ".gitlab-ci.yml"
            || *f == ".travis.yml"
    });
    let sources = RUNNER_SOURCES.iter().copied().filter(|f| files.has(f)).chain(workflows);
    for file in sources {
        let Some(text) = files.read(file) else { continue };
        // A unittest command wins over a mention of pytest in the same file (`deps = pytest`).
        if let Some(c) = unittest.captures(&text) {
            return Some(DeclaredRunner::Unittest { file: file.to_string(), args: unittest_args(&c[1]) });
        }
        if pytest.is_match(&text) {
            return Some(DeclaredRunner::Pytest { file: file.to_string() });
        }
    }
    None
}

/// The arguments after `-m unittest` on a line, up to the end of its command: shell operators,
/// comments and redirections end it; placeholders (`{posargs}`, `$ARGS`) are dropped.
fn unittest_args(rest: &str) -> Vec<String> {
    let end = rest.find(['&', '|', ';', '#', '>', '<', '`', ')']).unwrap_or(rest.len());
    let words = shell_words::split(&rest[..end]).unwrap_or_default();
    words.into_iter().filter(|w| !w.is_empty() && !w.contains(['{', '}', '$', '%', '\\'])).collect()
}

/// Test files that define test functions at module level: pytest collects them, unittest never
/// does, so such a project is not unittest-only whatever else it says.
pub(super) fn has_module_level_test_functions(sources: &[String]) -> bool {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN.get_or_init(|| Regex::new(r"(?m)^(?:async\s+)?def\s+test").expect("valid regex"));
    sources.iter().any(|s| pattern.is_match(s))
}

/// The test phase: `python fcorr_unittest.py <report> <the project's unittest arguments, -v>`.
pub(super) fn test_phase(
    files: &ProjectFiles,
    python: &str,
    root: &Path,
    work_dir: &Path,
    env: &[(String, String)],
) -> Result<PhasePlan, ProjectPlanError> {
    let runner = work_dir.join(RUNNER_FILE);
    std::fs::write(&runner, RUNNER).map_err(|source| ProjectPlanError::Write { path: runner.clone(), source })?;
    let report = work_dir.join(REPORT_FILE);
    // A stale report from an earlier run must not be read as this run's results.
    let _ = std::fs::remove_file(&report);
    let runner = runner.to_string_lossy().into_owned();
    let report_arg = report.to_string_lossy().into_owned();
    let mut args = vec![runner, report_arg];
    // -v: one line per test in the log, so a run that is killed still shows where it was. It
    // goes after `discover`, which unittest reads only as the first argument.
    let mut project = discovery_args(files);
    project.insert(usize::from(project.first().is_some_and(|a| a == "discover")), "-v".into());
    args.extend(project);
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut spec = CommandSpec::new(python, &arg_refs, root);
    spec.env = env.to_vec();
    Ok(PhasePlan::run(PhaseKind::Test, vec![spec])
        .with_reports(vec![ReportSpec::file(&report, crate::collect::junit::NAME)]))
}

/// What to hand `python -m unittest`: the project's own arguments when its files name them;
/// else nothing (discovery from the project root, as `python -m unittest` does), except when
/// every test file sits in one top-level directory that is not a package, which discovery from
/// the root never enters: then `discover -s <dir>`.
fn discovery_args(files: &ProjectFiles) -> Vec<String> {
    if let Some(DeclaredRunner::Unittest { args, .. }) = declared_runner(files) {
        return args;
    }
    let tests: Vec<&str> = super::test_files(files);
    let top: std::collections::BTreeSet<&str> =
        tests.iter().filter_map(|f| f.split_once('/').map(|(d, _)| d)).collect();
    let all_below_one = tests.iter().all(|f| f.contains('/'));
    match top.into_iter().collect::<Vec<_>>().as_slice() {
        [dir] if all_below_one && !files.has(&format!("{dir}/__init__.py")) => {
            vec!["discover".into(), "-s".into(), (*dir).to_string()]
        }
        _ => Vec::new(),
    }
}

/// True when the planned report is the unittest runner's.
pub(super) fn is_unittest_run(reports: &[ReportSpec]) -> bool {
    reports.iter().any(|r| r.pattern.ends_with(REPORT_FILE))
}

/// After the JUnit report is read: the test fcorr stopped is a timeout, or, when fcorr itself was
/// interrupted, an error naming the user's signal (the runner only ever sees fcorr's SIGTERM);
/// the count the runner announced is kept, and a run of no tests says where discovery looked.
pub(super) fn finish_collect(collected: &mut Collected, exit: &Exit, output: &str) {
    let stopped = collected.cases.iter_mut().filter(|c| c.message() == Some(STOPPED));
    match exit {
        Exit::TimedOut => stopped.for_each(|case| case.status = CaseStatus::Timeout),
        Exit::Cancelled => {
            let message = format!("still running when {}; unittest was stopped", crate::execute::interrupted_text());
            for case in stopped {
                case.status = CaseStatus::Error;
                case.set_message(Some(message.clone()));
            }
        }
        _ => {}
    }
    collected.announced = announced(output);
    if collected.cases.is_empty() && collected.ran {
        collected.diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            source: "collect".into(),
            message: "unittest found no tests: `python -m unittest` discovers from the project root and enters \
                      only packages (directories with an __init__.py), matching test*.py; a project that runs \
                      `python -m unittest discover -s tests` should say so in tox.ini or a Makefile, or set \
                      `commands.test`"
                .into(),
            file: None,
            line: None,
            column: None,
        });
    }
}

/// `fcorr: 12 tests loaded`, printed by the runner before the first test.
fn announced(output: &str) -> Option<crate::execute::Announced> {
    let line = output.lines().find_map(|l| l.trim().strip_prefix("fcorr: ")?.strip_suffix(" tests loaded"))?;
    let count: u64 = line.trim().parse().ok()?;
    (count > 0).then(|| crate::execute::Announced { count, evidence: format!("unittest loaded {count} tests") })
}

/// unittest names for the failed cases (`tests.test_x.Class.test_name`), appended to the same
/// runner command. Doctests, import failures and class/module fixtures cannot be named alone.
pub(super) fn rerun(test: &PhasePlan, failed: &[&Case]) -> Option<crate::ecosystems::Rerun> {
    let template = test.commands.last()?;
    let mut command = template.clone();
    // The runner and its report; the project's discovery arguments are replaced by names, which
    // unittest imports from the directory discovery made the top level.
    let top = top_level_dir(command.args.get(2..).unwrap_or_default());
    command.args.truncate(2);
    command.args.push("-v".into());
    if let Some(top) = top {
        let path = match std::env::var("PYTHONPATH") {
            Ok(existing) if !existing.is_empty() => format!("{top}:{existing}"),
            _ => top,
        };
        command.env.retain(|(k, _)| k != "PYTHONPATH");
        command.env.push(("PYTHONPATH".into(), path));
    }
    let mut selected = Vec::new();
    for (i, case) in failed.iter().enumerate() {
        let Some(classname) = case.classname.as_deref() else { continue };
        let is_method = case.name.starts_with("test") || case.name == "runTest";
        let is_module_level =
            case.file.as_deref().is_some_and(|f| f.trim_end_matches(".py").replace('/', ".") == classname);
        if !is_method || is_module_level || case.name.contains(['.', ' ', '(']) {
            continue;
        }
        command.args.push(format!("{classname}.{}", case.name));
        selected.push(i);
    }
    let phase = PhasePlan::run(PhaseKind::Test, vec![command]).with_reports(test.reports.clone());
    Some(crate::ecosystems::Rerun { phase, selected })
}

/// The top-level directory of a `discover` run other than the project root: `-t`, else the start
/// directory (`-s` or the first positional), as unittest decides it.
fn top_level_dir(args: &[String]) -> Option<String> {
    let rest = &args[args.iter().position(|a| a == "discover")? + 1..];
    let mut positional = Vec::new();
    let (mut start, mut top) = (None, None);
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-s" | "--start-directory" => start = words.next().cloned(),
            "-t" | "--top-level-directory" => top = words.next().cloned(),
            "-p" | "--pattern" | "-k" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => positional.push(w.to_string()),
        }
    }
    let top = top.or_else(|| positional.get(2).cloned()).or(start).or_else(|| positional.first().cloned())?;
    (top != "." && top != "./").then_some(top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystems::python::tests::files_of;

    /// The runner marks the test it was running when SIGTERM came; what fcorr makes of it
    /// depends on why fcorr sent it.
    #[test]
    fn the_stopped_test_is_a_timeout_or_an_error_naming_the_interruption() {
        let stopped = || Collected {
            cases: vec![
                Case { name: "test_a".into(), status: CaseStatus::Passed, ..Case::default() },
                Case { name: "test_b".into(), status: CaseStatus::Error, ..Case::default() }
                    .with_message(Some(STOPPED.to_string())),
            ],
            ..Collected::nothing()
        };
        let outcome = |exit: Exit| {
            let mut collected = stopped();
            finish_collect(&mut collected, &exit, "");
            let b = &collected.cases[1];
            (b.status, b.message().map(str::to_string))
        };
        assert_eq!(outcome(Exit::TimedOut), (CaseStatus::Timeout, Some(STOPPED.to_string())));
        // No stop signal in this process: the words without one (fcorr's own run names it).
        let (status, message) = outcome(Exit::Cancelled);
        assert_eq!(status, CaseStatus::Error);
        assert_eq!(message.as_deref(), Some("still running when fcorr was interrupted; unittest was stopped"));
    }

    #[test]
    fn the_projects_own_unittest_command_is_found_and_read() {
        let (_d, files) = files_of(&[("tox.ini", "[testenv]\ncommands =\n    {envpython} -m unittest {posargs}\n")]);
        assert_eq!(declared_runner(&files), Some(DeclaredRunner::Unittest { file: "tox.ini".into(), args: vec![] }));
        let (_d, files) = files_of(&[(
            "Makefile",
            "test:\n\tpython3 -m coverage run -m unittest discover -s tests -p '*_test.py' && coverage report\n",
        )]);
        let Some(DeclaredRunner::Unittest { args, .. }) = declared_runner(&files) else { panic!() };
        assert_eq!(args, ["discover", "-s", "tests", "-p", "*_test.py"]);
        let (_d, files) = files_of(&[(".github/workflows/ci.yml", "steps:\n  - run: python -m pytest -q\n")]);
        assert_eq!(declared_runner(&files), Some(DeclaredRunner::Pytest { file: ".github/workflows/ci.yml".into() }));
        let (_d, files) = files_of(&[("tox.ini", "[testenv]\ndeps = pytest-cov\ncommands = python -m unittest\n")]);
        assert!(matches!(declared_runner(&files), Some(DeclaredRunner::Unittest { .. })), "pytest-cov is not pytest");
        let (_d, files) = files_of(&[("README.md", "run python -m unittest")]);
        assert_eq!(declared_runner(&files), None);
    }

    #[test]
    fn discovery_enters_a_tests_directory_that_is_not_a_package() {
        let (_d, files) = files_of(&[("tests/test_a.py", ""), ("tests/test_b.py", "")]);
        assert_eq!(discovery_args(&files), ["discover", "-s", "tests"]);
        let (_d, files) = files_of(&[("tests/__init__.py", ""), ("tests/test_a.py", "")]);
        assert!(discovery_args(&files).is_empty());
        let (_d, files) = files_of(&[("test_a.py", ""), ("tests/test_b.py", "")]);
        assert!(discovery_args(&files).is_empty());
    }

    #[test]
    fn module_level_test_functions_are_pytest_only() {
        assert!(has_module_level_test_functions(&["import unittest\ndef test_x():\n    pass\n".into()]));
        assert!(!has_module_level_test_functions(
            &["class T(unittest.TestCase):\n    def test_x(self): pass\n".into()]
        ));
    }

    #[test]
    fn reruns_name_test_methods_only() {
        let case = |classname: &str, name: &str, file: &str| Case {
            classname: Some(classname.into()),
            name: name.into(),
            file: Some(file.into()),
            status: CaseStatus::Failed,
            ..Case::default()
        };
        let cases = [
            case("tests.test_a.T", "test_x", "tests/test_a.py"),
            case("shapes", "perimeter", "shapes.py"),
            case("tests.test_b", "tests.test_b", "tests/test_b.py"),
            case("tests.test_a.T", "setUpClass", "tests/test_a.py"),
        ];
        let failed: Vec<&Case> = cases.iter().collect();
        let spec = CommandSpec::new("py", &["runner.py", "r.xml", "discover", "-v", "-s", "tests"], Path::new("/p"));
        let phase = PhasePlan::run(PhaseKind::Test, vec![spec]);
        let rerun = rerun(&phase, &failed).unwrap();
        assert_eq!(rerun.selected, [0]);
        assert_eq!(rerun.phase.commands[0].args, ["runner.py", "r.xml", "-v", "tests.test_a.T.test_x"]);
        let python_path = rerun.phase.commands[0].env.iter().find(|(k, _)| k == "PYTHONPATH").unwrap();
        assert!(python_path.1.starts_with("tests"), "{python_path:?}");
        assert_eq!(top_level_dir(&["discover".into(), "-s".into(), "src".into(), "-t".into(), ".".into()]), None);
        assert_eq!(top_level_dir(&["discover".into(), "tests".into()]), Some("tests".into()));
        assert_eq!(top_level_dir(&["-v".into()]), None);
    }
}
