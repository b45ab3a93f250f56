//! Python projects: pytest or unittest in an isolated, cached virtualenv.
//!
//! Detection and the phase plan live here; [`deps`] reads what the tests need, [`install`] puts
//! it into a virtualenv shared by every checkout of the project, build is an
//! in-memory compile of every `.py` file (a syntax gate, run alongside the tests: a syntax error
//! fails the build and the tests' results are not counted), and test runs pytest with a JUnit
//! report, or, for unittest-only projects, unittest itself ([`unittest`]).

mod claim;
mod deps;
mod install;
pub(crate) use install::InstallerError;
mod lines;
mod messages;
mod nested;
mod poetry;
mod tox;
mod unittest;

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use super::{
    Announced, Candidate, CollectContext, Collected, Ecosystem, PhasePlan, ProjectContext, ProjectFiles,
    ProjectPlanError,
};
use crate::collect::{self, ReportSpec};
use crate::execute::process::{CommandSpec, Exit};
use crate::model::{Case, CaseStatus, Detection, Diagnostic, PhaseKind, Severity};
use deps::REQUIREMENT_FILES;
use install::{COMPLETE_MARKER, InstallPlan, Installer, Interpreter, PROJECT_MARKER};

/// pytest / unittest projects.
pub(crate) struct Python;

/// The interpreter virtualenvs are made from.
const BASE_PYTHON: &str = "python3";
/// pytest's exit code for a usage error, including a conftest that cannot be imported.
const PYTEST_USAGE_ERROR: i32 = 4;
/// The syntax gate: compiles every file (or every `.py` below a directory) in memory, so no
/// bytecode is written, and reports failures in `compileall`'s format (read by
/// `compile_diagnostics`).
const SYNTAX_CHECK: &str = r#"import os, sys, traceback
skip = {".venv", "venv", ".tox", "node_modules", ".git", "build", "dist", "site-packages", "__pycache__"}
def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for d, dirs, names in os.walk(p):
                dirs[:] = [x for x in dirs if x not in skip]
                yield from (os.path.join(d, n) for n in names if n.endswith(".py"))
        else:
            yield p
bad = 0
for f in files(sys.argv[1:]):
    try:
        with open(f, "rb") as h:
            compile(h.read(), f, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        bad += 1
        print(f"*** Error compiling {f!r}...")
        print("".join(traceback.format_exception_only(type(e), e)), end="")
sys.exit(1 if bad else 0)
"#;
/// Above this many files, the syntax gate walks the tree instead of taking a file list.
const MAX_LISTED_FILES: usize = 2000;

impl Ecosystem for Python {
    fn name(&self) -> &'static str {
        "python"
    }

    fn frameworks(&self) -> &'static [&'static str] {
        &["pytest", "unittest"]
    }

    fn detect(&self, files: &ProjectFiles, framework: Option<&str>) -> Option<Candidate> {
        detect(files, framework)
    }

    fn claim(&self, files: &ProjectFiles, _detection: &Detection) -> super::Claim {
        claim::claim(files)
    }

    /// Nested Python projects with tests that the root's `testpaths` leave out, named.
    fn members(&self, files: &ProjectFiles) -> super::Members {
        nested::left_out(files)
    }

    fn plan(&self, ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
        plan(ctx)
    }

    fn collect(&self, ctx: &CollectContext<'_>) -> Collected {
        let mut collected = crate::ecosystems::collect_reports(ctx);
        if unittest::is_unittest_run(ctx.reports) {
            unittest::finish_collect(&mut collected, &ctx.outcome.exit, &ctx.outcome.output);
            return collected;
        }
        // A killed pytest writes no JUnit report; its verbose progress still names the tests
        // that finished and the one that was running: timed out, or (fcorr was interrupted)
        // an error, since its result is unknown.
        let running = match &ctx.outcome.exit {
            Exit::TimedOut => Some((
                CaseStatus::Timeout,
                "still running when the test phase timed out; pytest was killed".to_string(),
            )),
            Exit::Cancelled => Some((
                CaseStatus::Error,
                format!("still running when {}; pytest was stopped", crate::execute::interrupted_text()),
            )),
            _ => None,
        };
        if let Some(running) = running
            && collected.cases.is_empty()
        {
            collected.cases = cases_from_progress(&ctx.outcome.output, running);
            collected.diagnostics.retain(|d| !d.message.contains("wrote no report"));
        }
        messages::explain_collection_errors(&mut collected.cases, ctx.root);
        explain_collection_skips(&mut collected, ctx);
        collected.announced = announced(&ctx.outcome.output);
        flag_stopped_session(&mut collected, &ctx.outcome.output);
        // pytest-cov fails a run whose every test passed (exit 1) when coverage is too low.
        collected.diagnostics.extend(super::coverage::threshold_failures(&ctx.outcome.output));
        if collected.cases.is_empty() && ctx.outcome.exit == Exit::Code(PYTEST_USAGE_ERROR) {
            collected.error = Some(messages::usage_error(&ctx.outcome.output, ctx.root, &dependency_search(ctx.root)));
            collected.diagnostics.retain(|d| !d.message.contains("wrote no report"));
        }
        if collected.cases.is_empty() && collected.error.is_none() {
            collected.error = messages::tool_not_installed(&ctx.outcome.output);
        }
        collected
    }

    /// pytest's JUnit lines are 0-based: a failure points at its line in the test file, any
    /// other case at its `def` (in `fcorr run` and in `fcorr import` alike).
    fn locate(&self, format: &str, report: &mut crate::collect::ParsedReport, root: &Path) {
        if format == crate::collect::junit::NAME && report.tool.as_deref() == Some("pytest") {
            lines::locate_pytest_cases(&mut report.cases, root);
        }
    }

    fn build_diagnostics(&self, output: &str, root: &Path) -> Vec<Diagnostic> {
        compile_diagnostics(output, root)
    }

    /// pytest node ids (`file::Class::name[param]`) appended to the same pytest command; unittest
    /// names (`module.Class.test`) for the unittest runner.
    fn select_tests(&self, test: &PhasePlan, failed: &[&Case]) -> Option<super::Rerun> {
        if unittest::is_unittest_run(&test.reports) {
            return unittest::rerun(test, failed);
        }
        let mut command = test.commands.last()?.clone();
        let mut selected = Vec::new();
        for (i, case) in failed.iter().enumerate() {
            if let Some(id) = node_id(case) {
                command.args.push(id);
                selected.push(i);
            }
        }
        let phase = PhasePlan::run(PhaseKind::Test, vec![command]).with_reports(test.reports.clone());
        Some(super::Rerun { phase, selected })
    }
}

/// pytest's reasons for the modules it skipped whole, read back from its JUnit report (the
/// report parser keeps only "collection skipped"), with a warning for each import skip.
fn explain_collection_skips(collected: &mut Collected, ctx: &CollectContext<'_>) {
    if !collected.cases.iter().any(|c| c.status == CaseStatus::Skipped && c.message() == Some("collection skipped")) {
        return;
    }
    let search = dependency_search(ctx.root);
    for report in ctx.reports {
        let path = Path::new(&report.pattern);
        let Ok(text) = crate::fsio::read_text(path, crate::fsio::PROJECT_FILE) else { continue };
        let warnings = messages::explain_collection_skips(&mut collected.cases, &text, ctx.root, &search);
        // Also a run warning: a suite diagnostic alone is not on the terminal or in the verdict's
        // summary when the suite passes, and a passing run is exactly where this hides.
        for warning in &warnings {
            crate::warnings::warn(format!("{}: {}", ctx.root.display(), warning.message));
        }
        collected.diagnostics.extend(warnings);
    }
}

/// pytest's node id of a case from the xunit1 report: the file, the classes left in `classname`
/// after the module's dotted path, and the name. `None` for a module that could not be
/// collected: that is a broken file, not a test to run again.
fn node_id(case: &Case) -> Option<String> {
    let file = case.file.as_deref().filter(|f| f.ends_with(".py"))?;
    if case.name.is_empty() || case.message().is_some_and(|m| m.contains(" could not be collected: ")) {
        return None;
    }
    let module = file.trim_end_matches(".py").replace('/', ".");
    let classname = case.classname.as_deref().unwrap_or("");
    let classes = classname.strip_prefix(module.as_str()).unwrap_or("").trim_start_matches('.');
    let mut id = file.to_string();
    for class in classes.split('.').filter(|c| !c.is_empty()) {
        id.push_str("::");
        id.push_str(class);
    }
    Some(format!("{id}::{}", case.name))
}

/// Facts about the project's Python packaging, read once.
#[derive(Debug, Default)]
struct Manifest {
    /// Parsed `pyproject.toml`, when present and valid.
    pyproject: Option<toml::Table>,
    /// `pyproject.toml: line L, column C: message` when it is malformed.
    problem: Option<String>,
}

impl Manifest {
    fn read(files: &ProjectFiles) -> Manifest {
        let Some(text) = files.has("pyproject.toml").then(|| files.read("pyproject.toml")).flatten() else {
            return Manifest::default();
        };
        match toml::from_str::<toml::Table>(&text) {
            Ok(table) => Manifest { pyproject: Some(table), problem: None },
            Err(e) => {
                let (line, column) = e.span().map(|s| crate::config::line_col(&text, s.start)).unwrap_or((0, 0));
                let message = e.message().trim().to_string();
                let problem = if line > 0 {
                    format!("{}: line {line}, column {column}: {message}", files.root.join("pyproject.toml").display())
                } else {
                    format!("{}: {message}", files.root.join("pyproject.toml").display())
                };
                Manifest {
                    pyproject: None,
                    problem: Some(format!(
                        "malformed pyproject.toml: {problem} (fix the TOML: pip and pytest cannot read it either)"
                    )),
                }
            }
        }
    }

    fn project(&self) -> Option<&toml::Table> {
        self.pyproject.as_ref()?.get("project")?.as_table()
    }

    /// Which pytest configuration table `pyproject.toml` has: `[tool.pytest.ini_options]`, or
    /// pytest 9's native `[tool.pytest]`.
    fn pytest_table(&self) -> Option<&'static str> {
        let pytest = self.pyproject.as_ref()?.get("tool")?.get("pytest")?.as_table()?;
        Some(if pytest.contains_key("ini_options") { "[tool.pytest.ini_options]" } else { "[tool.pytest]" })
    }

    fn has_build_system(&self) -> bool {
        self.pyproject.as_ref().is_some_and(|t| t.contains_key("build-system"))
    }

    fn test_deps(&self, files: &ProjectFiles) -> deps::TestDeps {
        deps::read(files, self.pyproject.as_ref())
    }
}

/// Where the project's test dependencies were looked for and found (for exit-4 hints).
fn dependency_search(root: &Path) -> messages::DependencySearch {
    let Ok(files) = ProjectFiles::scan(root) else { return messages::DependencySearch::default() };
    let deps = Manifest::read(&files).test_deps(&files);
    messages::DependencySearch { looked: deps.looked, found: deps.found }
}

fn ini_has_section(files: &ProjectFiles, file: &str, section: &str) -> bool {
    files.has(file) && files.read(file).is_some_and(|t| t.lines().any(|l| l.trim() == section))
}

fn test_files(files: &ProjectFiles) -> Vec<&str> {
    files.files.iter().map(String::as_str).filter(|f| is_test_file(f)).collect()
}

/// True for a file pytest collects by default (`test_*.py`, `*_test.py`).
pub(crate) fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

fn detect(files: &ProjectFiles, framework: Option<&str>) -> Option<Candidate> {
    let manifest = Manifest::read(files);
    let mut markers: Vec<String> = Vec::new();
    let mut pytest_evidence = 0.0f64;
    let mut packaging = false;

    if files.has("pyproject.toml") {
        packaging = true;
        markers.push("pyproject.toml".into());
        if let Some(table) = manifest.pytest_table() {
            markers.push(format!("pyproject.toml: {table}"));
            pytest_evidence = pytest_evidence.max(0.95);
        }
    }
    for (file, section) in [("setup.cfg", "[tool:pytest]"), ("tox.ini", "[pytest]")] {
        if ini_has_section(files, file, section) {
            markers.push(format!("{file}: {section}"));
            pytest_evidence = pytest_evidence.max(0.95);
        }
    }
    if files.has("pytest.ini") {
        markers.push("pytest.ini".into());
        pytest_evidence = pytest_evidence.max(0.95);
    }
    for file in ["setup.py", "setup.cfg"] {
        if files.has(file) {
            packaging = true;
            markers.push(file.into());
        }
    }
    let conftest = files.files.iter().any(|f| f == "conftest.py" || f.ends_with("/conftest.py"));
    if conftest {
        markers.push("conftest.py".into());
        pytest_evidence = pytest_evidence.max(0.9);
    }
    let test_deps = manifest.test_deps(files);
    for file in REQUIREMENT_FILES {
        if files.has(file) {
            packaging = true;
            markers.push((*file).into());
        }
    }
    // Declarations inside a file (requirement files are listed above by name).
    let inside = |f: &&String| ["pyproject.toml", "setup.cfg", "tox.ini"].iter().any(|file| f.starts_with(file));
    for source in test_deps.found.iter().filter(inside) {
        markers.push(format!("test dependencies: {source}"));
    }
    if test_deps.declares_pytest {
        markers.push("pytest in declared dependencies".into());
        pytest_evidence = pytest_evidence.max(0.9);
    }
    let tests = test_files(files);
    if !tests.is_empty() {
        markers.push(format!("{} test file(s) matching test_*.py / *_test.py", tests.len()));
    }
    let any_py = files.files.iter().any(|f| f.ends_with(".py"));
    if !packaging && tests.is_empty() && !any_py && pytest_evidence == 0.0 {
        return None;
    }

    let declared = unittest::declared_runner(files);
    match &declared {
        Some(unittest::DeclaredRunner::Pytest { file }) => {
            markers.push(format!("{file} names pytest"));
            pytest_evidence = pytest_evidence.max(0.9);
        }
        Some(unittest::DeclaredRunner::Unittest { file, .. }) => {
            markers.push(format!("{file} runs `python -m unittest`"));
        }
        None => {}
    }
    // unittest when nothing says pytest: test files that subclass unittest.TestCase (or a project
    // file that runs `python -m unittest`), none importing pytest or defining a test function at
    // module level (pytest collects those; unittest never does, so its counts would be short).
    let uses_unittest = pytest_evidence == 0.0 && !tests.is_empty() && {
        let sources: Vec<String> = tests.iter().take(200).filter_map(|f| files.read(f)).collect();
        (declared.is_some() || sources.iter().any(|s| s.contains("unittest.TestCase") || s.contains("(TestCase)")))
            && !sources.iter().any(|s| s.contains("import pytest") || s.contains("from pytest"))
            && !unittest::has_module_level_test_functions(&sources)
    };
    if uses_unittest {
        markers.push("tests subclass unittest.TestCase; no pytest markers".into());
    }
    let confidence = if pytest_evidence > 0.0 {
        pytest_evidence
    } else if !tests.is_empty() && packaging {
        0.8
    } else if !tests.is_empty() {
        0.7
    } else if packaging {
        0.5
    } else {
        0.3
    };
    let framework = match framework {
        Some(f) => f.to_string(),
        None if uses_unittest => "unittest".into(),
        None => "pytest".into(),
    };
    Some(Candidate {
        detection: Detection {
            ecosystem: "python".into(),
            language: "Python".into(),
            framework,
            package_manager: Some("pip".into()),
            confidence,
            markers,
        },
        problem: manifest.problem,
    })
}

fn plan(ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
    let files = ctx.files;
    let root = ctx.root;
    let manifest = Manifest::read(files);
    if let Some(problem) = manifest.problem {
        return Err(ProjectPlanError::Manifest(problem));
    }
    let test_deps = manifest.test_deps(files);
    if let Some(problem) = test_deps.problems.first() {
        return Err(ProjectPlanError::Pyproject { path: root.join("pyproject.toml"), problem: problem.clone() });
    }
    if let Some(tox) = &test_deps.tox_problem {
        return Err(ProjectPlanError::Pyproject {
            path: root.join(&tox.file),
            problem: format!("line {}: {}", tox.line, tox.problem),
        });
    }
    // unittest projects run under unittest itself (pytest ignores `load_tests`), so their venv
    // gets no pytest.
    let unittest = ctx.detection.framework == "unittest";
    let preference = install::Preference::from_env()?;
    let installable_project = manifest.project().is_some()
        && (!test_deps.dependencies.is_empty() || manifest.has_build_system())
        || files.has("setup.py");
    let interpreter = Interpreter::probe(BASE_PYTHON, root);
    let stamp = install::project_stamp(root, files);
    let identity = install::project_identity(root);

    // The key depends on the installer, which may have to be installed itself; first look for a
    // finished venv made by whichever installer is at hand without downloading anything.
    let key_with = |installer: &Installer| {
        install::dependency_key(
            &identity,
            &interpreter,
            installer,
            files,
            manifest.pyproject.as_ref(),
            &test_deps,
            !unittest,
        )
    };
    let (mut installer, _) = install::choose(preference, BASE_PYTHON, ctx.cache_dir, false)?;
    let mut key = key_with(&installer);
    let mut venv = ctx.cache_dir.join("venvs").join(&key);
    let mut fallback_note = None;
    let complete = install::marker_is(&venv, COMPLETE_MARKER, &key);
    if ctx.install && !ctx.dry_run && !complete && installer == Installer::Pip && preference != install::Preference::Pip
    {
        let (chosen, note) = install::choose(preference, BASE_PYTHON, ctx.cache_dir, true)?;
        installer = chosen;
        fallback_note = note;
        key = key_with(&installer);
        venv = ctx.cache_dir.join("venvs").join(&key);
    }
    // A venv a user's `commands.install` filled holds what that script installed, not what is declared.
    let complete = install::marker_is(&venv, COMPLETE_MARKER, &key) && !venv.join(install::OVERRIDE_MARKER).exists();
    let links_checkout = installable_project || !test_deps.workspace_members.is_empty();
    let linked = !links_checkout || install::marker_is(&venv, PROJECT_MARKER, &stamp);
    let python_in_venv = install::venv_python(&venv).to_string_lossy().into_owned();

    let mut env = vec![
        ("PIP_DISABLE_PIP_VERSION_CHECK".to_string(), "1".to_string()),
        ("PIP_NO_INPUT".to_string(), "1".to_string()),
        // Progress must reach the pipe as it happens: a killed process never flushes its buffers.
        ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
        ("VIRTUAL_ENV".to_string(), venv.to_string_lossy().into_owned()),
        // Nothing is written into the user's tree. (A PYTHONPYCACHEPREFIX would do that too, but
        // it also hides the installed packages' bytecode: pytest recompiled itself on every run,
        // about a second each time.)
        ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
        // uv must use this machine's interpreter, never download one.
        ("UV_PYTHON_DOWNLOADS".to_string(), "never".to_string()),
        ("UV_NO_PROGRESS".to_string(), "1".to_string()),
        // pip writes bytecode at install time, uv only when asked; without it (and with
        // PYTHONDONTWRITEBYTECODE) every test run would compile pytest and the dependencies again.
        ("UV_COMPILE_BYTECODE".to_string(), "1".to_string()),
    ];
    // uv does not read pip's index settings; carry them over so a mirror keeps working.
    for (pip, uv) in [("PIP_INDEX_URL", "UV_INDEX_URL"), ("PIP_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL")] {
        if let (Ok(value), Err(_)) = (std::env::var(pip), std::env::var(uv)) {
            env.push((uv.to_string(), value));
        }
    }
    let with_env = |mut spec: CommandSpec| {
        spec.env = env.clone();
        spec
    };
    let install_plan = InstallPlan {
        installer: &installer,
        base_python: BASE_PYTHON,
        venv: &venv,
        root,
        deps: &test_deps,
        installable_project,
        with_pytest: !unittest,
        env: &env,
    };

    let (install, python) = if !ctx.install {
        // Without installing, use what is already there: our venv, the project's own, or python3.
        let python = if complete {
            python_in_venv.clone()
        } else if root.join(".venv/bin/python").is_file() {
            root.join(".venv/bin/python").to_string_lossy().into_owned()
        } else {
            BASE_PYTHON.to_string()
        };
        (PhasePlan::skipped(PhaseKind::Install, "--no-install"), python)
    } else if complete && linked {
        let note = format!("dependencies up to date (virtualenv {} already installed)", venv.display());
        (PhasePlan::skipped(PhaseKind::Install, note), python_in_venv.clone())
    } else if complete {
        (PhasePlan::run(PhaseKind::Install, install_plan.relink(&stamp)), python_in_venv.clone())
    } else {
        let mut commands = Vec::new();
        if let Some(note) = &fallback_note {
            // Said in the install log, where a reader looks for why pip ran.
            commands.push(with_env(CommandSpec::new(
                BASE_PYTHON,
                &["-c", "import sys; print(sys.argv[1])", note],
                root,
            )));
        }
        commands.extend(install_plan.full(&key, &stamp));
        (PhasePlan::run(PhaseKind::Install, commands), python_in_venv.clone())
    };
    // Every checkout of this project shares this venv: runs install into it one at a
    // time (two concurrent suites or CI jobs would otherwise race to create it).
    let mut install = install.with_lock(venv.with_extension("lock"));
    // A user's `commands.install` runs with this venv first on PATH, after making sure it exists.
    if ctx.install {
        install.override_setup = vec![install_plan.override_setup()];
        install.override_env = env.clone();
        let path = std::env::var("PATH").unwrap_or_default();
        let bin = venv.join("bin").to_string_lossy().into_owned();
        install.override_env.push(("PATH".into(), if path.is_empty() { bin } else { format!("{bin}:{path}") }));
    }

    let sources: Vec<&str> = files.files.iter().map(String::as_str).filter(|f| f.ends_with(".py")).collect();
    let build = if sources.is_empty() {
        PhasePlan::skipped(PhaseKind::Build, "no .py files to compile")
    } else {
        // -I -S: the check needs neither site-packages nor the environment, and starts faster.
        let mut args = vec!["-I", "-S", "-c", SYNTAX_CHECK];
        if sources.len() <= MAX_LISTED_FILES {
            args.extend(sources.iter().copied());
        } else {
            args.push(".");
        }
        // It writes nothing the tests read, so it runs alongside them (its interpreter start was
        // ~0.03–0.2 s of every warm run); when it fails, their results are not counted.
        PhasePlan::run(PhaseKind::Build, vec![with_env(CommandSpec::new(&python, &args, root))]).alongside_tests()
    };

    if unittest {
        let test = unittest::test_phase(files, &python, root, ctx.work_dir, &env)?;
        return Ok(vec![install, build, test]);
    }
    let report = ctx.work_dir.join("pytest.xml");
    // A stale report from an earlier run must not be read as this run's results.
    let _ = std::fs::remove_file(&report);
    let junit_arg = format!("--junitxml={}", report.display());
    // -v rather than -q: when a timeout kills pytest no report is written, and the verbose
    // progress is what still names the test that hung. xunit1 adds file/line to each case.
    let test = with_env(CommandSpec::new(
        &python,
        &["-m", "pytest", &junit_arg, "-v", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"],
        root,
    ));
    let test = PhasePlan::run(PhaseKind::Test, vec![test])
        .with_reports(vec![ReportSpec::file(&report, crate::collect::junit::NAME)]);
    Ok(vec![install, build, test])
}

/// The number of tests pytest said it would run before running them: `collected 3 items`, or
/// the `3 selected` of `collected 5 items / 2 deselected / 3 selected`. `None` when pytest did
/// not get that far or selected nothing.
fn announced(output: &str) -> Option<Announced> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN.get_or_init(|| Regex::new(r"(?m)\bcollected (\d+) items?\b([^\n]*)").expect("valid regex"));
    let c = pattern.captures(output)?;
    let selected = c[2].split(" / ").find_map(|part| part.trim().strip_suffix(" selected")?.parse().ok());
    let count: u64 = selected.or_else(|| c[1].parse().ok())?;
    (count > 0).then(|| Announced { count, evidence: format!("pytest: `{}`", c[0].trim()) })
}

/// A session pytest stopped before its end (`pytest.exit()`, a `KeyboardInterrupt` in a test):
/// its JUnit report holds the tests that finished, plus a `<testcase>` with no name for the one
/// that was running, which reads as a pass. That case becomes an error, and when fewer tests were
/// reported than pytest collected and no reported failure explains it, an error case says how
/// many never ran: the report alone made the run look complete (1 of 3 tests ran, "2 passed", PASS).
fn flag_stopped_session(collected: &mut Collected, output: &str) {
    // pytest's banner: `!!!!!! _pytest.outcomes.Exit: stopping early !!!!!!`.
    let banner = output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("!!!") && l.ends_with("!!!"))
        .map(|l| l.trim_matches(|c: char| c == '!' || c.is_whitespace()).to_string())
        .filter(|l| !l.is_empty());
    let why =
        banner.as_deref().map_or_else(|| "the session stopped early".to_string(), |b| format!("pytest said `{b}`"));
    let mut nameless = 0u64;
    for case in collected.cases.iter_mut().filter(|c| c.name.as_str() == "(unnamed)" && c.file.is_none()) {
        nameless += 1;
        case.status = CaseStatus::Error;
        case.set_message(Some(format!(
            "pytest reported a test with no name: the test that was running when {why}; it did not finish"
        )));
    }
    let Some(announced) = &collected.announced else { return };
    let reported = collected.cases.len() as u64 - nameless;
    // A failure pytest reported already explains a short run (a collection error, `-x`), and
    // its count stays pytest's own; with none, the missing tests are what keeps the run honest.
    let explained = collected.cases.iter().any(|c| c.status.is_failure() && c.name.as_str() != "(unnamed)");
    if reported < announced.count && !collected.cases.is_empty() && !explained {
        let missing = announced.count - reported;
        collected.cases.push(
            Case {
                name: crate::model::incomplete::TESTS_NOT_REPORTED_CASE.into(),
                status: CaseStatus::Error,
                ..Case::default()
            }
            .with_message(Some(format!(
                "{} announced {} test{} but the report holds {reported}: {missing} never ran or never \
                     reported ({why})",
                announced.evidence,
                announced.count,
                if announced.count == 1 { "" } else { "s" },
            ))),
        );
    }
}

/// Cases from pytest's verbose progress lines (`path::test STATUS [ 50%]`), for a killed run;
/// `running` is the status and message of a test that started and never finished.
///
/// Names follow the JUnit (xunit1) report, so a test keeps its case id whether it finished or not:
/// file = the module path, classname = dotted module (+ class), name = the last id part.
fn cases_from_progress(output: &str, running: (CaseStatus, String)) -> Vec<Case> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN.get_or_init(|| {
        Regex::new(r"^(\S+\.py::.+?)(?: (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*)?\s*$").expect("valid regex")
    });
    let mut cases: Vec<Case> = Vec::new();
    for line in output.lines() {
        let Some(c) = pattern.captures(line) else { continue };
        let node = c[1].trim();
        let status = match c.get(2).map(|m| m.as_str()) {
            Some("PASSED" | "XPASS") => CaseStatus::Passed,
            Some("FAILED") => CaseStatus::Failed,
            Some("ERROR") => CaseStatus::Error,
            Some("SKIPPED" | "XFAIL") => CaseStatus::Skipped,
            _ => running.0,
        };
        let mut parts = node.split("::");
        let file = parts.next().unwrap_or_default().to_string();
        let rest: Vec<&str> = parts.collect();
        let Some((name, classes)) = rest.split_last() else { continue };
        let module = file.trim_end_matches(".py").replace('/', ".");
        let classname = std::iter::once(module.as_str()).chain(classes.iter().copied()).collect::<Vec<_>>().join(".");
        let message = c.get(2).is_none().then(|| running.1.clone());
        // A test reported twice (start line, then result) keeps its last status.
        cases.retain(|existing: &Case| !(existing.name == *name && existing.file.as_deref() == Some(file.as_str())));
        cases.push(
            Case {
                name: name.to_string().into(),
                classname: Some(classname.into()),
                file: Some(file.into()),
                status,
                ..Case::default()
            }
            .with_message(message),
        );
    }
    cases
}

/// File/line diagnostics from `compileall` output (`File "x.py", line 3` ... `SyntaxError: ...`).
fn compile_diagnostics(output: &str, root: &Path) -> Vec<Diagnostic> {
    static FILE_LINE: OnceLock<Regex> = OnceLock::new();
    static ERROR: OnceLock<Regex> = OnceLock::new();
    // The patterns are literals; they compile.
    let file_line = FILE_LINE.get_or_init(|| Regex::new(r#"^\s*File "([^"]+)", line (\d+)"#).expect("valid regex"));
    let error = ERROR.get_or_init(|| Regex::new(r"^(\w*(?:Error|Exception|Warning)): (.*)$").expect("valid regex"));
    let lines: Vec<&str> = output.lines().collect();
    let mut diagnostics = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = file_line.captures(line) else { continue };
        // The error line follows the source excerpt and caret, a few lines below.
        let message = lines[i + 1..]
            .iter()
            .take(8)
            .take_while(|l| !file_line.is_match(l) && !l.starts_with("***"))
            .find_map(|l| error.captures(l).map(|e| format!("{}: {}", &e[1], &e[2])))
            .unwrap_or_else(|| "cannot be compiled".to_string());
        let file = collect::relativize(&c[1], Some(root));
        diagnostics.push(Diagnostic {
            severity: Severity::Error,
            source: "build".into(),
            message,
            file: Some(file),
            line: c[2].parse().ok(),
            column: None,
        });
        if diagnostics.len() >= 50 {
            break;
        }
    }
    if diagnostics.is_empty() {
        return super::generic_build_diagnostics(output);
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch project with these files (shared by the python modules' tests).
    pub(super) fn files_of(entries: &[(&str, &str)]) -> (tempfile::TempDir, ProjectFiles) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in entries {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let files = ProjectFiles::scan(dir.path()).unwrap();
        (dir, files)
    }

    #[test]
    fn pytest_config_beats_bare_test_files() {
        let (_d, files) = files_of(&[("pytest.ini", "[pytest]\n"), ("tests/test_a.py", "def test_a(): pass\n")]);
        let c = detect(&files, None).unwrap();
        assert_eq!(c.detection.framework, "pytest");
        assert!(c.detection.confidence >= 0.9);
        assert!(c.detection.markers.iter().any(|m| m == "pytest.ini"), "{:?}", c.detection.markers);

        let (_d, files) = files_of(&[("tests/test_a.py", "def test_a(): pass\n")]);
        assert!(detect(&files, None).unwrap().detection.confidence < 0.9);
    }

    #[test]
    fn unittest_is_the_fallback_without_pytest_markers() {
        let src = "import unittest\nclass T(unittest.TestCase):\n    def test_x(self): pass\n";
        let (_d, files) = files_of(&[("tests/test_x.py", src)]);
        assert_eq!(detect(&files, None).unwrap().detection.framework, "unittest");
        let (_d, files) = files_of(&[("tests/test_x.py", src), ("conftest.py", "")]);
        assert_eq!(detect(&files, None).unwrap().detection.framework, "pytest");
        // A test function at module level is collected by pytest only: unittest would miss it.
        let mixed = format!("{src}\ndef test_plain():\n    assert True\n");
        let (_d, files) = files_of(&[("tests/test_x.py", &mixed)]);
        assert_eq!(detect(&files, None).unwrap().detection.framework, "pytest");
        // The project's own files say which runner it uses.
        let (_d, files) = files_of(&[("tests/test_x.py", src), (".github/workflows/ci.yml", "- run: pytest -q\n")]);
        let c = detect(&files, None).unwrap();
        assert_eq!(c.detection.framework, "pytest");
        assert!(c.detection.markers.iter().any(|m| m == ".github/workflows/ci.yml names pytest"), "{c:?}");
        let (_d, files) = files_of(&[("tests/test_x.py", src), ("Makefile", "test:\n\tpython -m unittest -v\n")]);
        let c = detect(&files, None).unwrap();
        assert_eq!(c.detection.framework, "unittest");
        assert!(c.detection.markers.iter().any(|m| m == "Makefile runs `python -m unittest`"), "{c:?}");
    }

    #[test]
    fn malformed_pyproject_is_a_problem_with_line_and_column() {
        let (_d, files) = files_of(&[("pyproject.toml", "[project]\nname = \"x\"\nversion = \"0.1\n")]);
        let c = detect(&files, None).unwrap();
        let problem = c.problem.unwrap();
        assert!(problem.contains("pyproject.toml: line 3, column"), "{problem}");
    }

    #[test]
    fn nothing_pythonic_is_not_detected() {
        let (_d, files) = files_of(&[("README.md", "hi")]);
        assert!(detect(&files, None).is_none());
    }

    #[test]
    fn progress_lines_name_finished_and_hung_tests_like_junit() {
        let out = "collecting ... collected 3 items\n\ntests/test_a.py::test_ok PASSED   [ 33%]\n\
                   tests/test_a.py::TestK::test_p[a b] FAILED [ 66%]\ntests/test_a.py::test_hang \n";
        let cases = cases_from_progress(out, (CaseStatus::Timeout, "timed out".into()));
        let got: Vec<(&str, Option<&str>, CaseStatus)> =
            cases.iter().map(|c| (c.name.as_str(), c.classname.as_deref(), c.status)).collect();
        assert_eq!(
            got,
            vec![
                ("test_ok", Some("tests.test_a"), CaseStatus::Passed),
                ("test_p[a b]", Some("tests.test_a.TestK"), CaseStatus::Failed),
                ("test_hang", Some("tests.test_a"), CaseStatus::Timeout),
            ]
        );
    }

    #[test]
    fn compileall_errors_become_diagnostics() {
        let out = "*** Error compiling 'inventory.py'...\n  File \"inventory.py\", line 3\n    total = sum(\n  \
                   ^\nSyntaxError: '(' was never closed\n";
        let d = compile_diagnostics(out, Path::new("/p"));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].file.as_deref(), Some("inventory.py"));
        assert_eq!(d[0].line, Some(3));
        assert_eq!(d[0].message, "SyntaxError: '(' was never closed");
    }

    #[test]
    fn announced_counts_are_what_pytest_collected_or_selected() {
        let count = |out: &str| announced(out).map(|a| (a.count, a.evidence));
        assert_eq!(
            count("collecting ... collected 3 items\n\ntests/a.py::t PASSED"),
            Some((3, "pytest: `collected 3 items`".to_string()))
        );
        assert_eq!(count("collected 1 item\n").map(|c| c.0), Some(1));
        assert_eq!(count("collected 5 items / 2 deselected / 3 selected\n").map(|c| c.0), Some(3));
        assert_eq!(count("collected 2 items / 1 error\n").map(|c| c.0), Some(2));
        assert_eq!(count("collected 0 items\n"), None);
        assert_eq!(count("ImportError while loading conftest\n"), None);
    }
}
