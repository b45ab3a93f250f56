//! Go modules: `go mod download`, then `go test -json`, whose build step is the build gate.
//!
//! `go test` compiles every package of the pattern, test files included, and runs its `go vet`
//! subset before it runs any test; a package that fails either is reported as `[build failed]`
//! (`FailedBuild` in `-json` events), which makes the suite `build-failed` with the compiler's
//! lines as diagnostics (`build_failure_in_test`), never a failed test. A separate `go build` and
//! `go vet` would repeat that work (~0.3 s warm); they run only when `commands.test` replaces
//! `go test`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use super::{
    Candidate, CollectContext, Collected, Ecosystem, Members, PhasePlan, ProjectContext, ProjectFiles, ProjectPlanError,
};
use crate::collect::{ParsedReport, ReportSpec, relativize};
use crate::execute::process::CommandSpec;
use crate::model::{Case, Detection, Diagnostic, LeftOut, PhaseKind, Severity, SuiteError, SuiteErrorKind};

/// `go test` projects.
pub(crate) struct Go;

/// Why the build phase has no command of its own.
const BUILD_IN_TEST: &str = "checked by `go test`: it compiles every package, test files included, and vets it \
                             before any test runs; an error there fails the build";

/// The vet analyzers `go test` runs before testing (cmd/go `defaultVetFlags`, Go 1.26).
const GO_TEST_VET_FLAGS: &[&str] = &[
    "-atomic",
    "-bool",
    "-buildtags",
    "-directive",
    "-errorsas",
    "-ifaceassert",
    "-nilfunc",
    "-printf",
    "-slog",
    "-stringintconv",
    "-tests",
];

impl Ecosystem for Go {
    fn name(&self) -> &'static str {
        "go"
    }

    fn frameworks(&self) -> &'static [&'static str] {
        &["go test"]
    }

    fn detect(&self, files: &ProjectFiles, framework: Option<&str>) -> Option<Candidate> {
        let uses = files.read("go.work").map(|text| go_work_uses(&text)).unwrap_or_default();
        if !files.has("go.mod") && uses.is_empty() {
            return None;
        }
        let mut markers = Vec::new();
        if files.has("go.mod") {
            let go_mod = files.read("go.mod").unwrap_or_default();
            markers.push(match go_mod_module(&go_mod) {
                Some(module) => format!("go.mod (module {module})"),
                None => "go.mod".to_string(),
            });
        }
        let tests = files.files.iter().filter(|f| f.ends_with("_test.go")).count();
        if tests > 0 {
            markers.push(format!("{tests} *_test.go file(s)"));
        }
        if !uses.is_empty() {
            markers.push("go.work (tests every module it uses)".into());
        }
        let nested = self.members(files).run;
        if !nested.is_empty() {
            markers.push(format!("nested module(s) run as suites of their own: {}", nested.join(", ")));
        }
        Some(Candidate {
            detection: Detection {
                ecosystem: "go".into(),
                language: "Go".into(),
                framework: framework.unwrap_or("go test").into(),
                package_manager: Some("go modules".into()),
                confidence: if tests > 0 { 0.95 } else { 0.9 },
                markers,
            },
            problem: None,
        })
    }

    /// Nested modules (their own go.mod, which `./...` stops at) that the root's go.work does not
    /// use: each with tests runs as a suite of its own; one without tests is named as left out.
    fn members(&self, files: &ProjectFiles) -> Members {
        let uses = files.read("go.work").map(|text| go_work_uses(&text)).unwrap_or_default();
        let mut members = Members { source: Some("nested go.mod files".into()), ..Members::default() };
        let modules = module_dirs(files);
        for dir in modules.iter().filter(|d| !d.is_empty()) {
            if uses.iter().any(|u| u == dir) {
                continue;
            }
            let owns = |file: &str| owning_module(&modules, file) == Some(dir.as_str());
            if files.files.iter().any(|f| f.ends_with("_test.go") && owns(f)) {
                members.run.push(dir.clone());
            } else {
                members.left_out.push(LeftOut {
                    path: dir.clone(),
                    reason: "a nested Go module with no _test.go files: nothing to test".into(),
                });
            }
        }
        members
    }

    fn plan(&self, ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
        let root = ctx.root;
        if let Some(problem) = missing_work_module(root) {
            return Err(ProjectPlanError::Manifest(problem));
        }
        // A nested module run as a member is not in the root's go.work (the ones it uses run with
        // the root): the go command would refuse it in workspace mode, so it runs on its own.
        let outside_work = ctx.files.workspace.as_ref().is_some_and(|ws| ws.join("go.work").is_file());
        let go = |args: &[&str]| {
            let mut spec = CommandSpec::new("go", args, root);
            if outside_work {
                spec.env.push(("GOWORK".into(), "off".into()));
            }
            spec
        };
        let requires = go_modules(root)
            .iter()
            .any(|(_, dir)| read_project_file(&root.join(dir).join("go.mod")).is_some_and(|text| has_requires(&text)));
        let install = if !ctx.install {
            PhasePlan::skipped(PhaseKind::Install, "--no-install")
        } else if requires {
            PhasePlan::run(PhaseKind::Install, vec![go(&["mod", "download"])])
        } else {
            PhasePlan::skipped(PhaseKind::Install, "go.mod requires no modules: nothing to download")
        };
        let mut vet = vec!["vet"];
        vet.extend(GO_TEST_VET_FLAGS);
        let pattern = package_pattern(ctx.files);
        vet.push(pattern);
        let build = PhasePlan::checked_by_test(vec![go(&["build", pattern]), go(&vet)], BUILD_IN_TEST);
        let report = ctx.work_dir.join("go-test.json");
        let mut test = go(&["test", "-json", "-count=1", pattern]);
        test.stdout_file = Some(report.clone());
        let test = PhasePlan::run(PhaseKind::Test, vec![test])
            .with_reports(vec![ReportSpec::file(&report, crate::collect::go_test_json::NAME)]);
        Ok(vec![install, build, test])
    }

    /// The reports; when fcorr's timeout killed `go test`, the tests still running say so; when
    /// the go command failed before writing any event, what it said is the suite's error.
    fn collect(&self, ctx: &CollectContext<'_>) -> Collected {
        let mut collected = super::collect_reports(ctx);
        if ctx.outcome.exit == crate::execute::process::Exit::TimedOut {
            mark_timed_out(&mut collected.cases);
        }
        let failed = matches!(ctx.outcome.exit, crate::execute::process::Exit::Code(code) if code != 0);
        if failed
            && collected.cases.is_empty()
            && !collected.ran
            && let Some(said) = go_command_error(&ctx.outcome.output)
        {
            collected.error = Some(SuiteError {
                kind: SuiteErrorKind::NoResults,
                message: format!("go test stopped before running any test; the go command said: {said}"),
                hint: Some("fix what the go command reports (go.mod, go.work, the toolchain), then run again".into()),
            });
        }
        collected
    }

    fn locate(&self, format: &str, report: &mut ParsedReport, root: &Path) {
        if format == crate::collect::go_test_json::NAME {
            locate_test_functions(&mut report.cases, root);
        }
    }

    fn build_diagnostics(&self, output: &str, root: &Path) -> Vec<Diagnostic> {
        go_diagnostics(output, root)
    }

    /// `go test` reports a package it could not compile or vet as `FAIL <pkg> [build failed]`
    /// (`[setup failed]` when it could not even load it); with `-json` (Go 1.24+) as a package
    /// `fail` event with `FailedBuild`, the compiler's lines as `build-output` events.
    fn build_failure_in_test(&self, output: &str, root: &Path) -> Option<Vec<Diagnostic>> {
        let failures = failed_builds(output);
        if failures.is_empty() {
            return None;
        }
        let mut diagnostics = go_diagnostics(&build_output(output), root);
        if diagnostics.is_empty() {
            diagnostics = failures
                .into_iter()
                .map(|package| Diagnostic {
                    severity: Severity::Error,
                    source: "build".into(),
                    message: format!("go test could not build package {package}"),
                    file: None,
                    line: None,
                    column: None,
                })
                .collect();
        }
        Some(diagnostics)
    }

    /// `go test -json -run '^TestX$/^sub$' <package>`: top-level tests of a package in one run,
    /// each failing subtest in its own (a parent reruns with only its failing subtests).
    fn select_tests(&self, test: &PhasePlan, failed: &[&crate::model::Case]) -> Option<super::Rerun> {
        let template = test.commands.last()?;
        let report = template.stdout_file.clone()?;
        let mut selected = Vec::new();
        // package -> -run patterns
        let mut runs: Vec<(String, String)> = Vec::new();
        let mut top: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (i, case) in failed.iter().enumerate() {
            let Some(package) = case.classname.as_deref().filter(|_| !case.name.is_empty()) else { continue };
            selected.push(i);
            let parent = failed.iter().any(|c| {
                c.classname.as_deref() == Some(package)
                    && c.name.strip_prefix(case.name.as_str()).is_some_and(|r| r.starts_with('/'))
            });
            if parent {
                // Runs (and reports) again with the failing subtests selected below.
                continue;
            }
            let levels: Vec<String> = case.name.split('/').map(regex::escape).collect();
            if levels.len() == 1 {
                top.entry(package).or_default().push(levels[0].clone());
            } else {
                runs.push((package.to_string(), levels.iter().map(|l| format!("^{l}$")).collect::<Vec<_>>().join("/")));
            }
        }
        for (package, names) in top {
            runs.push((package.to_string(), format!("^({})$", names.join("|"))));
        }
        let mut commands = Vec::new();
        let mut reports = Vec::new();
        for (n, (package, pattern)) in runs.into_iter().enumerate() {
            let mut command = template.clone();
            // The planned command ends with the package pattern (`./...`): this run's package replaces it.
            command.args.pop();
            command.args.extend(["-run".to_string(), pattern, package]);
            let file = report.with_file_name(format!("go-test-rerun-{}.json", n + 1));
            command.stdout_file = Some(file.clone());
            reports.push(ReportSpec::file(&file, crate::collect::go_test_json::NAME));
            commands.push(command);
        }
        let phase = PhasePlan::run(PhaseKind::Test, commands).with_reports(reports);
        Some(super::Rerun { phase, selected })
    }
}

/// `work` (every module of the go.work) when the project has a go.work that uses modules, else
/// `./...`, which stops at nested modules.
fn package_pattern(files: &ProjectFiles) -> &'static str {
    let uses = files.read("go.work").map(|text| go_work_uses(&text)).unwrap_or_default();
    if uses.is_empty() { "./..." } else { "work" }
}

/// Every module directory in the listing (`""` for the root), relative and `/`-separated, that
/// the go command would treat as part of the repository: testdata, vendor, `_` and `.`
/// directories are skipped, as the go command skips them.
fn module_dirs(files: &ProjectFiles) -> Vec<String> {
    files
        .files
        .iter()
        .filter_map(|f| if f == "go.mod" { Some("") } else { f.strip_suffix("/go.mod") })
        .filter(|dir| !dir.split('/').any(|p| p == "testdata" || p == "vendor" || p.starts_with(['_', '.'])))
        .map(str::to_string)
        .collect()
}

/// The module (of `modules`) a file belongs to: the deepest module directory holding it.
fn owning_module<'a>(modules: &'a [String], file: &str) -> Option<&'a str> {
    modules
        .iter()
        .filter(|dir| dir.is_empty() || file.strip_prefix(dir.as_str()).is_some_and(|rest| rest.starts_with('/')))
        .max_by_key(|dir| dir.len())
        .map(String::as_str)
}

/// Gives the `go test -json` cases of a suite at `root` the file and line where each top-level
/// test function is defined (the file found from the package's sources, never from a failure
/// message, so a test has the same file, and so the same case id, whether it passes or fails).
/// A case that printed `file.go:N:` (the parser keeps it as file and line) keeps that line when
/// the printed file is the defining file; a case whose test function is not found has neither.
/// The stream of a `go test` that fcorr's timeout killed ends mid-test: the tests that started
/// and never finished were still running (as pytest's are said to be), and the stream was cut
/// because of the timeout, not by go.
fn mark_timed_out(cases: &mut [Case]) {
    for case in cases {
        if case.message() == Some(crate::collect::go_test_json::UNFINISHED) {
            case.status = crate::model::CaseStatus::Timeout;
            case.set_message(Some("still running when the test phase timed out; go test was killed".into()));
        } else if case.name == crate::collect::CUT_SHORT_CASE
            && let Some(message) = case.message()
        {
            let message = format!("go test was killed when the test phase timed out: {message}");
            case.set_message(Some(message));
        }
    }
}

pub(crate) fn locate_test_functions(cases: &mut [Case], root: &Path) {
    let mut locator = Locator::new(root);
    for case in cases {
        let Some(package) = case.classname.as_deref() else { continue };
        let (file, def_line) = locator.find(package, &case.name);
        let printed = case.file.take().zip(case.line.take());
        case.line = match (&file, printed) {
            (Some(f), Some((printed_file, printed_line)))
                if Path::new(f).file_name().is_some_and(|n| n == &*printed_file) =>
            {
                Some(printed_line)
            }
            _ => def_line,
        };
        case.file = file.map(Into::into);
    }
}

/// Finds the file and line where a top-level test function is defined, from the module's sources.
struct Locator {
    root: std::path::PathBuf,
    /// (module path, directory relative to root), longest module path first.
    modules: Vec<(String, String)>,
    /// package → (test function → (file relative to root, line)).
    cache: HashMap<String, HashMap<String, (String, u32)>>,
}

impl Locator {
    fn new(root: &Path) -> Locator {
        let mut modules = go_modules(root);
        // The longest module path first: `ex/m/sub` owns `ex/m/sub/x`, not `ex/m`.
        modules.sort_by_key(|(module, _)| std::cmp::Reverse(module.len()));
        Locator { root: root.to_path_buf(), modules, cache: HashMap::new() }
    }

    fn find(&mut self, package: &str, test: &str) -> (Option<String>, Option<u32>) {
        let Some(dir) = self.modules.iter().find_map(|(module, module_dir)| {
            let rest = if package == module { "" } else { package.strip_prefix(module.as_str())?.strip_prefix('/')? };
            Some(match (module_dir.is_empty(), rest.is_empty()) {
                (true, _) => rest.to_string(),
                (false, true) => module_dir.clone(),
                (false, false) => format!("{module_dir}/{rest}"),
            })
        }) else {
            return (None, None);
        };
        let functions = self.cache.entry(package.to_string()).or_insert_with(|| scan_test_functions(&self.root, &dir));
        let top = test.split('/').next().unwrap_or(test);
        match functions.get(top) {
            Some((file, line)) => (Some(file.clone()), Some(*line)),
            None => (None, None),
        }
    }
}

/// A go.mod, go.work or Go source as text, bounded; a device, FIFO or huge file is not read.
fn read_project_file(path: &Path) -> Option<String> {
    crate::fsio::read_text(path, crate::fsio::PROJECT_FILE).ok()
}

/// The Go modules a suite at `root` tests, as (module path, directory relative to root, `""`
/// for the root): the `use` directories of its go.work when it has one, else its go.mod.
fn go_modules(root: &Path) -> Vec<(String, String)> {
    let dirs = match read_project_file(&root.join("go.work")) {
        Some(text) => go_work_uses(&text),
        None => vec![String::new()],
    };
    dirs.into_iter()
        .filter_map(|dir| {
            let text = read_project_file(&root.join(&dir).join("go.mod"))?;
            Some((go_mod_module(&text)?, dir))
        })
        .collect()
}

/// The `module` line of a go.mod.
fn go_mod_module(go_mod: &str) -> Option<String> {
    go_mod.lines().find_map(|l| l.trim().strip_prefix("module ").map(|m| m.trim().trim_matches('"').to_string()))
}

/// The directories a go.work `use`s (single and block form), relative and clean: `./sub` →
/// `sub`, `.` → `""`. Absolute and parent directories are outside the suite and left out.
fn go_work_uses(go_work: &str) -> Vec<String> {
    go_work_entries(go_work)
        .into_iter()
        .filter(|(_, entry)| !(entry.starts_with('/') || entry.starts_with("..")))
        .map(|(_, entry)| {
            let clean = entry.trim_start_matches("./").trim_end_matches('/');
            if clean == "." { String::new() } else { clean.to_string() }
        })
        .collect()
}

/// Every `use` of a go.work as written (quotes removed), with its line number.
fn go_work_entries(go_work: &str) -> Vec<(usize, String)> {
    let mut entries = Vec::new();
    let mut in_block = false;
    for (n, line) in go_work.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("").trim();
        let entry = if in_block {
            if line == ")" {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("use") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        let entry = entry.trim_matches('"');
        if !entry.is_empty() {
            entries.push((n + 1, entry.to_string()));
        }
    }
    entries
}

/// A `use` of the go.work at `root` whose directory holds no go.mod: the go command refuses the
/// whole workspace then (`go: cannot load module … listed in go.work file`), before any test.
fn missing_work_module(root: &Path) -> Option<String> {
    let text = read_project_file(&root.join("go.work"))?;
    go_work_entries(&text).into_iter().find_map(|(line, entry)| {
        let dir = root.join(&entry);
        if dir.join("go.mod").is_file() {
            return None;
        }
        let what = if dir.is_dir() { "has no go.mod" } else { "does not exist" };
        Some(format!(
            "go.work:{line}: `use {entry}`: {entry} {what}, and the go command refuses to load a workspace that \
             uses a directory without a go.mod (\"cannot load module … listed in go.work file\"), so no test would \
             run; remove it from go.work or restore the module"
        ))
    })
}

/// What the go command printed (the lines that are not `-json` events) when it stopped before
/// writing any event: a go.mod it cannot parse, a go.work it cannot load, a toolchain it lacks.
fn go_command_error(output: &str) -> Option<String> {
    let said: Vec<&str> = output
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && serde_json::from_str::<serde_json::Value>(l).is_err())
        .take(5)
        .collect();
    let first = said.first()?;
    // One line for the terminal and the gate's reason: `go: errors parsing go.mod: go.mod:4: …`.
    Some(said.windows(2).fold(first.to_string(), |text, pair| {
        let separator = if pair[0].ends_with(':') { " " } else { "; " };
        format!("{text}{separator}{}", pair[1].trim())
    }))
}

fn scan_test_functions(root: &Path, dir: &str) -> HashMap<String, (String, u32)> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN.get_or_init(|| Regex::new(r"^func\s+((?:Test|Example|Fuzz)\w*)\s*\(").expect("valid regex"));
    let mut found = HashMap::new();
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return found };
    let mut files: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.ends_with("_test.go"))
        .collect();
    files.sort();
    for name in files {
        let rel = if dir.is_empty() { name.clone() } else { format!("{dir}/{name}") };
        let Some(text) = read_project_file(&root.join(&rel)) else { continue };
        for (i, line) in text.lines().enumerate() {
            if let Some(c) = pattern.captures(line) {
                found.entry(c[1].to_string()).or_insert((rel.clone(), i as u32 + 1));
            }
        }
    }
    found
}

/// The packages `go test` could not build or load, from package-level lines and events only: a
/// test's own output saying `[build failed]` is not the go command's.
fn failed_builds(output: &str) -> Vec<String> {
    let mut failed = Vec::new();
    for line in output.lines() {
        let text = match serde_json::from_str::<serde_json::Value>(line) {
            Ok(event) if event.get("Test").is_some() => continue,
            Ok(event) => {
                if let Some(package) = event["FailedBuild"].as_str() {
                    failed.push(package.split(' ').next().unwrap_or(package).to_string());
                }
                if event["Action"] != "output" {
                    continue;
                }
                event["Output"].as_str().unwrap_or_default().to_string()
            }
            Err(_) => line.to_string(),
        };
        if let Some(rest) = text.trim_end().strip_prefix("FAIL\t")
            && let Some(package) = rest.strip_suffix(" [build failed]").or_else(|| rest.strip_suffix(" [setup failed]"))
        {
            failed.push(package.to_string());
        }
    }
    failed.sort();
    failed.dedup();
    failed
}

/// What the compiler and vet printed in a `go test` run: `build-output` events (Go 1.24+ with
/// `-json`) and the lines that are not JSON events (older Go prints them on stderr).
fn build_output(output: &str) -> String {
    let mut text = String::new();
    for line in output.lines() {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(event) if event["Action"] == "build-output" => {
                text.push_str(event["Output"].as_str().unwrap_or_default())
            }
            Ok(_) => {}
            Err(_) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}

/// True when go.mod has a `require` directive (single or block form).
fn has_requires(go_mod: &str) -> bool {
    go_mod
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .any(|l| l.starts_with("require ") || l == "require(")
}

/// `./greet_test.go:7:14: message` and `vet: ./x.go:3:1: message` lines.
fn go_diagnostics(output: &str, root: &Path) -> Vec<Diagnostic> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern =
        PATTERN.get_or_init(|| Regex::new(r"^(?:vet: )?(\S+\.go):(\d+)(?::(\d+))?: (.+)$").expect("valid regex"));
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for line in output.lines() {
        let Some(c) = pattern.captures(line.trim_end()) else { continue };
        let diagnostic = Diagnostic {
            severity: Severity::Error,
            source: "build".into(),
            message: c[4].trim().to_string(),
            file: Some(relativize(&c[1], Some(root))),
            line: c[2].parse().ok(),
            column: c.get(3).and_then(|m| m.as_str().parse().ok()),
        };
        // go build and go vet can both report the same error.
        if !diagnostics.contains(&diagnostic) {
            diagnostics.push(diagnostic);
        }
        if diagnostics.len() >= 50 {
            break;
        }
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_fcorrs_timeout_unfinished_tests_were_still_running() {
        use crate::collect::ReportParser;
        use crate::model::CaseStatus;
        let stream = "{\"Action\":\"start\",\"Package\":\"ex/h\"}\n\
                      {\"Action\":\"run\",\"Package\":\"ex/h\",\"Test\":\"TestOK\"}\n\
                      {\"Action\":\"pass\",\"Package\":\"ex/h\",\"Test\":\"TestOK\"}\n\
                      {\"Action\":\"run\",\"Package\":\"ex/h\",\"Test\":\"TestHang\"}\n";
        let mut report =
            crate::collect::go_test_json::GoTestJson.parse(&mut stream.as_bytes(), &Default::default()).unwrap();
        mark_timed_out(&mut report.cases);
        let got: Vec<(&str, CaseStatus, Option<&str>)> =
            report.cases.iter().map(|c| (c.name.as_str(), c.status, c.message())).collect();
        assert_eq!(
            got[..2],
            [
                ("TestOK", CaseStatus::Passed, None),
                (
                    "TestHang",
                    CaseStatus::Timeout,
                    Some("still running when the test phase timed out; go test was killed")
                ),
            ]
        );
        assert_eq!(got[2].0, crate::collect::CUT_SHORT_CASE);
        assert!(got[2].2.unwrap().starts_with("go test was killed when the test phase timed out: the stream ends"));
    }

    /// A temporary directory holding `files` (path relative to it, contents).
    fn write_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_go_work_use_without_go_mod_is_named_with_its_line() {
        let dir = write_tree(&[
            ("go.work", "go 1.22\n\nuse (\n\t./a\n\t./empty\n\t./gone\n)\n"),
            ("a/go.mod", "module ex/a\n"),
            ("empty/x.go", "package x\n"),
        ]);
        let problem = missing_work_module(dir.path()).unwrap();
        assert!(problem.starts_with("go.work:5: `use ./empty`: ./empty has no go.mod"), "{problem}");
        std::fs::write(dir.path().join("empty/go.mod"), "module ex/e\n").unwrap();
        let problem = missing_work_module(dir.path()).unwrap();
        assert!(problem.starts_with("go.work:6: `use ./gone`: ./gone does not exist"), "{problem}");
    }

    #[test]
    fn what_the_go_command_printed_is_one_line_without_events() {
        let output = "{\"Action\":\"start\"}\ngo: errors parsing go.mod:\ngo.mod:4: unknown directive: bogus\n\n";
        assert_eq!(
            go_command_error(output).as_deref(),
            Some("go: errors parsing go.mod: go.mod:4: unknown directive: bogus")
        );
        assert_eq!(go_command_error("{\"Action\":\"start\"}\n"), None);
    }

    #[test]
    fn go_work_uses_both_forms() {
        let text = "go 1.22\n\nuse (\n\t.\n\t./sub // the helper\n\t\"./quoted/\"\n\t../outside\n)\nuse ./tools\n";
        assert_eq!(go_work_uses(text), vec!["", "sub", "quoted", "tools"]);
    }

    #[test]
    fn cases_get_their_defining_file_and_keep_a_printed_line_only_from_it() {
        let dir = write_tree(&[
            ("go.mod", "module ex/m\n"),
            ("sub/a_test.go", "package sub\n\nfunc TestA(t *testing.T) {\n}\n\nfunc TestB(t *testing.T) {\n}\n"),
        ]);
        let case = |name: &str, package: &str, printed: Option<(&str, u32)>| Case {
            name: name.into(),
            classname: Some(package.into()),
            file: printed.map(|(f, _)| f.to_string()).map(Into::into),
            line: printed.map(|(_, l)| l),
            ..Case::default()
        };
        let mut cases = vec![
            case("TestA", "ex/m/sub", Some(("a_test.go", 9))),
            case("TestB/inner", "ex/m/sub", None),
            case("TestB", "ex/m/sub", Some(("helper_test.go", 40))),
            case("TestC", "ex/m/sub", Some(("a_test.go", 2))),
            case("TestA", "other/pkg", None),
        ];
        locate_test_functions(&mut cases, dir.path());
        let got: Vec<(Option<&str>, Option<u32>)> = cases.iter().map(|c| (c.file.as_deref(), c.line)).collect();
        assert_eq!(
            got,
            vec![
                (Some("sub/a_test.go"), Some(9)),
                (Some("sub/a_test.go"), Some(6)),
                (Some("sub/a_test.go"), Some(6)),
                (None, None),
                (None, None),
            ]
        );
    }

    #[test]
    fn nested_modules_with_tests_run_and_the_others_are_named() {
        let dir = write_tree(&[
            ("go.mod", "module example.com/app\n"),
            ("app_test.go", "package app\n"),
            ("tools/go.mod", "module example.com/tools\n"),
            ("tools/tools.go", "package tools\n"),
            ("lib/go.mod", "module example.com/lib\n"),
            ("lib/sum/sum_test.go", "package sum\n"),
            ("lib/inner/go.mod", "module example.com/lib/inner\n"),
            ("lib/inner/x.go", "package inner\n"),
            ("testdata/m/go.mod", "module example.com/m\n"),
            ("testdata/m/m_test.go", "package m\n"),
        ]);
        let files = ProjectFiles::scan(dir.path()).unwrap();
        let members = Go.members(&files);
        assert_eq!(members.run, ["lib"]);
        assert!(!members.members_only && !members.shared_install);
        let left: Vec<&str> = members.left_out.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(left, ["lib/inner", "tools"], "lib/sum's test belongs to lib, not to lib/inner");
        let markers = Go.detect(&files, None).unwrap().detection.markers;
        assert!(markers.iter().any(|m| m == "nested module(s) run as suites of their own: lib"), "{markers:?}");
    }

    #[test]
    fn modules_a_go_work_uses_run_with_the_root() {
        let dir = write_tree(&[
            ("go.work", "go 1.21\nuse (\n\t./a\n\t./b\n)\n"),
            ("a/go.mod", "module example.com/a\n"),
            ("a/a_test.go", "package a\n"),
            ("b/go.mod", "module example.com/b\n"),
            ("b/b_test.go", "package b\n"),
            ("c/go.mod", "module example.com/c\n"),
            ("c/c_test.go", "package c\n"),
        ]);
        let files = ProjectFiles::scan(dir.path()).unwrap();
        assert!(Go.detect(&files, None).is_some(), "a go.work alone makes a Go project");
        assert_eq!(Go.members(&files).run, ["c"]);
        assert_eq!(package_pattern(&files), "work");
    }

    #[test]
    fn requires_are_found_in_both_forms() {
        assert!(!has_requires("module x\n\ngo 1.21\n"));
        assert!(has_requires("module x\nrequire example.com/y v1.0.0\n"));
        assert!(has_requires("module x\nrequire (\n\texample.com/y v1.0.0\n)\n"));
        assert_eq!(go_mod_module("// c\nmodule example.com/m\n").as_deref(), Some("example.com/m"));
    }

    /// What `go test -json` (Go 1.26) printed for a test file that does not compile, a vet
    /// finding, and a package that passed, with a test whose own output says `[build failed]`.
    const GO_TEST_JSON: &str = r##"{"ImportPath":"ex/b [ex/b.test]","Action":"build-output","Output":"# ex/b [ex/b.test]\n"}
{"ImportPath":"ex/b [ex/b.test]","Action":"build-output","Output":"./greet_test.go:7:14: assignment mismatch: 2 variables but Hello returns 1 value\n"}
{"ImportPath":"ex/b [ex/b.test]","Action":"build-fail"}
{"Action":"start","Package":"ex/b"}
{"Action":"output","Package":"ex/b","Output":"FAIL\tex/b [build failed]\n"}
{"Action":"fail","Package":"ex/b","Elapsed":0,"FailedBuild":"ex/b [ex/b.test]"}
{"ImportPath":"ex/v [ex/v.test]","Action":"build-output","Output":"./v.go:3:39: fmt.Sprintf format %d has arg \"x\" of wrong type string\n"}
{"Action":"output","Package":"ex/v","Output":"FAIL\tex/v [build failed]\n"}
{"Action":"fail","Package":"ex/v","Elapsed":0,"FailedBuild":"ex/v [ex/v.test]"}
{"Action":"output","Package":"ex/ok","Test":"TestOK","Output":"FAIL\tex/other [build failed]\n"}
{"Action":"pass","Package":"ex/ok","Test":"TestOK","Elapsed":0}
{"Action":"pass","Package":"ex/ok","Elapsed":0.006}
"##;

    #[test]
    fn a_package_go_test_could_not_build_or_vet_is_a_build_failure_with_its_lines() {
        assert_eq!(failed_builds(GO_TEST_JSON), ["ex/b", "ex/v"], "a test's own output is not the go command's");
        let d = Go.build_failure_in_test(GO_TEST_JSON, Path::new("/p")).unwrap();
        let got: Vec<(Option<&str>, Option<u32>)> = d.iter().map(|d| (d.file.as_deref(), d.line)).collect();
        assert_eq!(got, [(Some("greet_test.go"), Some(7)), (Some("v.go"), Some(3))]);
        // Older Go: the compiler's lines on stderr, the FAIL line as plain text.
        let text = "# ex/b\n./b.go:3:1: undefined: y\nFAIL\tex/b [setup failed]\nok  \tex/ok\t0.01s\n";
        let d = Go.build_failure_in_test(text, Path::new("/p")).unwrap();
        assert_eq!((d[0].file.as_deref(), d[0].line), (Some("b.go"), Some(3)));
        // Failing tests are not a build failure; a build failure without compiler lines names the package.
        let failing = "{\"Action\":\"output\",\"Package\":\"ex/ok\",\"Output\":\"FAIL\\tex/ok\\t0.01s\\n\"}\n";
        assert!(Go.build_failure_in_test(failing, Path::new("/p")).is_none());
        let bare = "{\"Action\":\"fail\",\"Package\":\"ex/c\",\"FailedBuild\":\"ex/c [ex/c.test]\"}\n";
        let d = Go.build_failure_in_test(bare, Path::new("/p")).unwrap();
        assert_eq!(d[0].message, "go test could not build package ex/c");
    }

    #[test]
    fn vet_and_compiler_lines_become_diagnostics() {
        let out = "# example.com/b\n# [example.com/b]\nvet: ./greet_test.go:7:14: assignment mismatch\n\
                   mathx/m.go:3: undefined: y\n";
        let d = go_diagnostics(out, Path::new("/p"));
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].file.as_deref(), d[0].line, d[0].column), (Some("greet_test.go"), Some(7), Some(14)));
        assert_eq!(d[1].file.as_deref(), Some("mathx/m.go"));
    }
}
