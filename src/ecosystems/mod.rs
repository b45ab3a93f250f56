//! Language ecosystems: how to recognise a project and which commands install, build and test it.
//!
//! Each ecosystem is one file implementing [`Ecosystem`], registered in [`registry`]. Detection
//! reads a [`ProjectFiles`] listing (walked once, ignore rules applied); planning returns the
//! commands per phase; collecting turns the test phase's reports into cases.

use std::path::{Path, PathBuf};

use crate::collect::{ParsedReport, ReportSpec};
use crate::execute::process::{CommandOutcome, CommandSpec};
// What a test phase collected is execute's type (its truthfulness guards read it); ecosystems
// make it, so it is named here too.
pub(crate) use crate::execute::{Announced, Collected};
use crate::model::{Case, Detection, Diagnostic, LeftOut, PhaseKind, Severity};

pub(crate) mod command;
mod coverage;
pub(crate) mod go;
pub(crate) mod java;
pub(crate) mod node;
pub(crate) mod python;
mod reports;
pub(crate) mod rust;

pub(crate) use reports::{collect_import, collect_import_in_batches, collect_reports};

/// Why an ecosystem cannot plan a detected project's commands. The project runner makes it the
/// suite's input error (the other suites carry on), with this text as the message.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProjectPlanError {
    /// The forced `framework` is one this runner does not drive.
    #[error("the {runner} runner cannot run framework `{framework}` ({supported})")]
    Framework { runner: &'static str, framework: String, supported: &'static str },
    /// A project file that cannot be used, as detection worded it (the text names the file).
    #[error("{0}")]
    Manifest(String),
    /// `pyproject.toml` (PEP 735 groups) or `tox.ini` declares test dependencies that cannot be resolved.
    #[error("{}: {problem}", path.display())]
    Pyproject { path: PathBuf, problem: String },
    /// A file fcorr writes for the run (a runner script) could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Node(#[from] node::NodePlanError),
    #[error(transparent)]
    PythonInstaller(#[from] python::InstallerError),
}

/// Every ecosystem fcorr knows, in detection priority order for ties.
pub(crate) static ECOSYSTEMS: &[&dyn Ecosystem] =
    &[&python::Python, &node::Node, &go::Go, &rust::Rust, &java::Java, &command::CommandRunner];

/// Looks up an ecosystem by its config name.
pub(crate) fn by_name(name: &str) -> Option<&'static dyn Ecosystem> {
    ECOSYSTEMS.iter().copied().find(|e| e.name() == name)
}

/// A language ecosystem: detection, commands and result collection for one family of projects.
pub(crate) trait Ecosystem: Send + Sync {
    /// Name used in `runner = "..."` and in `Detection::ecosystem`.
    fn name(&self) -> &'static str;

    /// Framework names `framework = "..."` may force for this ecosystem, checked when the
    /// config is read; empty means any name (used as a label only).
    fn frameworks(&self) -> &'static [&'static str] {
        &[]
    }

    /// Looks for this ecosystem's markers; `None` when there are none.
    ///
    /// `framework` is the user's forced framework, if any. A candidate may carry a `problem`
    /// (e.g. a malformed manifest): it still wins detection, and the suite reports the problem.
    fn detect(&self, files: &ProjectFiles, framework: Option<&str>) -> Option<Candidate>;

    /// The commands for each phase of a project this ecosystem detected.
    fn plan(&self, ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError>;

    /// Turns the test phase's outputs into cases. The default parses the planned report files,
    /// then [`locate`](Ecosystem::locate)s each report's cases.
    fn collect(&self, ctx: &CollectContext<'_>) -> Collected {
        collect_reports(ctx)
    }

    /// Fixes the file and line of the cases one report in `format` gave, for a suite at `root`:
    /// what only this ecosystem knows (Go module roots, cargo workspace members), from the report
    /// as parsed (its cases and, for some formats, its [`targets`](ParsedReport::targets)), so the
    /// parsers stay bytes → cases. Every ecosystem's `locate` sees every report any suite
    /// collects (a `command` suite's `cargo test` output, an `fcorr import`): each fixes only the
    /// formats it owns and leaves the others alone.
    fn locate(&self, format: &str, report: &mut ParsedReport, root: &Path) {
        let _ = (format, report, root);
    }

    /// Adjusts a phase just before it runs, once the earlier phases have run: flags that depend on
    /// the installed version of a tool are chosen here, after install, not when planning.
    fn refine_phase(&self, ctx: &ProjectContext<'_>, phase: &mut PhasePlan) {
        let _ = (ctx, phase);
    }

    /// For a test command that also compiles (one `mvn test` instead of compile, then test): the
    /// compiler errors when its failure was a compilation failure, so the suite is `build-failed`
    /// with a diagnostic rather than a test run with no results. `None`: not a build failure.
    fn build_failure_in_test(&self, output: &str, root: &Path) -> Option<Vec<Diagnostic>> {
        let _ = (output, root);
        None
    }

    /// A tool version the project rejects (`engines` in package.json, a Maven enforcer rule),
    /// read from a failed phase's output: a message naming the required and the found version.
    /// The suite is then a tool-missing error, not an install, build or test failure.
    fn rejected_tool_version(&self, output: &str) -> Option<String> {
        let _ = output;
        None
    }

    /// How the project's tree divides into suites: the root alone (the default), or workspace
    /// members that run as suites of their own (npm/pnpm/yarn workspaces, nested Go modules), and
    /// what is found and not run, with why. Called on the detected root when planning, before
    /// anything runs; reads the listing only.
    fn members(&self, files: &ProjectFiles) -> Members {
        let _ = files;
        Members::default()
    }

    /// Extracts file/line errors from a failed build's output.
    fn build_diagnostics(&self, output: &str, root: &Path) -> Vec<Diagnostic> {
        let _ = root;
        generic_build_diagnostics(output)
    }

    /// Retries and `--rerun-failed`: the test phase `test` (as it ran) narrowed to the `failed`
    /// cases with the framework's own selection, writing the same kind of reports. `None` when
    /// this ecosystem cannot select single tests; cases it cannot select are left out of
    /// [`Rerun::selected`] and keep their outcome.
    ///
    /// Not overridden: a case saying the results are incomplete (`[test binary]`, `[unhandled
    /// error]`…, [`crate::model::incomplete`]) names no test, and selecting it by name would run
    /// nothing (`cargo test -- --exact '[test binary]'`) while the failure it stands for went
    /// unseen; such cases never reach [`select_tests`](Ecosystem::select_tests) and keep their
    /// outcome.
    fn rerun(&self, test: &PhasePlan, failed: &[&Case]) -> Option<Rerun> {
        let tests: Vec<usize> = (0..failed.len()).filter(|&i| !failed[i].marks_incomplete_results()).collect();
        let named: Vec<&Case> = tests.iter().map(|&i| failed[i]).collect();
        let mut rerun = self.select_tests(test, &named)?;
        rerun.selected = rerun.selected.iter().filter_map(|&k| tests.get(k).copied()).collect();
        Some(rerun)
    }

    /// What [`rerun`](Ecosystem::rerun) asks of each ecosystem: the test phase narrowed to
    /// `failed`, every one of them a test (never an incomplete-results case), with the indexes
    /// into `failed` of those it selects. `None` when this ecosystem cannot select single tests.
    fn select_tests(&self, test: &PhasePlan, failed: &[&Case]) -> Option<Rerun> {
        let _ = (test, failed);
        None
    }
}

/// How a project's tree divides into suites (see [`Ecosystem::members`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Members {
    /// Directories, relative to the root and `/`-separated, that run as suites of their own.
    pub run: Vec<String>,
    /// True when only the members run, not the root (a node workspace root whose own `test`
    /// script runs no test framework); false when the root is a suite too (Go's root module).
    pub members_only: bool,
    /// True when one install at the root serves every member (node workspaces): the members'
    /// suites share it instead of each installing.
    pub shared_install: bool,
    /// What was found and is not run, paths relative to the root.
    pub left_out: Vec<LeftOut>,
    /// What declares the members (`package.json workspaces`, `nested go.mod files`), for
    /// `fcorr detect`.
    pub source: Option<String>,
}

/// A test phase that reruns some failed cases.
#[derive(Debug, Clone)]
pub(crate) struct Rerun {
    pub phase: PhasePlan,
    /// Indexes into the `failed` slice of the cases the phase selects.
    pub selected: Vec<usize>,
}

/// A detection result, possibly with a problem that makes the project unrunnable.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub detection: Detection,
    /// A reason the project cannot be run as detected (malformed manifest...).
    pub problem: Option<String>,
}

/// What an ecosystem knows about the project when it plans its phases (`Ecosystem::plan`,
/// `refine_phase`); not the suite kinds' `plan::PlanContext`.
pub(crate) struct ProjectContext<'a> {
    /// Directory the commands run in.
    pub root: &'a Path,
    pub files: &'a ProjectFiles,
    pub detection: &'a Detection,
    /// Private directory for this suite's reports and scratch files (absolute).
    pub work_dir: &'a Path,
    /// Shared cache for virtualenvs and the like (absolute).
    pub cache_dir: &'a Path,
    /// False with `--no-install`: plan no install phase commands.
    pub install: bool,
    /// `run-script-steps = true`: run the steps of a `test` script that are not the test framework
    /// (lint, type check...) instead of skipping them with a note.
    pub run_script_steps: bool,
    /// `build = true|false`: run (or never run) the project's own build script; unset, an
    /// ecosystem runs it only when the tests need it.
    pub build_script: Option<bool>,
    /// `fcorr detect`: the plan is shown, never run; planning installs and deletes nothing
    /// (no installer is downloaded, no old report removed).
    pub dry_run: bool,
}

/// The commands of one phase.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PhasePlan {
    pub kind: PhaseKind,
    pub commands: Vec<CommandSpec>,
    /// Set when the phase need not run (e.g. dependencies already installed): the reason.
    pub skip: Option<String>,
    /// Report files the test phase writes.
    pub reports: Vec<ReportSpec>,
    /// Something the user should know about how the phase runs (e.g. script steps not run).
    pub note: Option<String>,
    /// When the user overrides this phase's commands (`commands.install`...): commands that still
    /// run first, and environment the override runs with (e.g. the virtualenv to install into).
    pub override_setup: Vec<CommandSpec>,
    pub override_env: Vec<(String, String)>,
    /// A file locked (exclusively, across processes) while the phase runs: runs that share a
    /// cached environment (one virtualenv for every checkout) install into it one at a time.
    pub lock: Option<PathBuf>,
    /// A file that exists while the phase runs and is removed only when it passes: a phase that
    /// failed or was interrupted leaves it, so planning can tell "never finished" from "done".
    pub pending_marker: Option<PathBuf>,
    /// A build phase that only checks (`tsc --noEmit`) and writes nothing the tests read: it runs
    /// alongside the test phase, and when it fails the tests' results are not counted.
    pub alongside_tests: bool,
    /// For a build phase skipped because the ecosystem's own test command compiles (and checks)
    /// everything before it runs any test and says when that failed (`build_failure_in_test`):
    /// the commands that check the build on their own. They run in its place when the user
    /// replaces the test command (`commands.test`), which may compile nothing.
    pub separate_check: Vec<CommandSpec>,
}

impl PhasePlan {
    /// A phase that runs the given commands.
    pub(crate) fn run(kind: PhaseKind, commands: Vec<CommandSpec>) -> PhasePlan {
        PhasePlan {
            kind,
            commands,
            skip: None,
            reports: Vec::new(),
            note: None,
            override_setup: Vec::new(),
            override_env: Vec::new(),
            lock: None,
            pending_marker: None,
            alongside_tests: false,
            separate_check: Vec::new(),
        }
    }

    /// A phase that is skipped for the given reason.
    pub(crate) fn skipped(kind: PhaseKind, reason: impl Into<String>) -> PhasePlan {
        PhasePlan {
            kind,
            commands: Vec::new(),
            skip: Some(reason.into()),
            reports: Vec::new(),
            note: None,
            override_setup: Vec::new(),
            override_env: Vec::new(),
            lock: None,
            pending_marker: None,
            alongside_tests: false,
            separate_check: Vec::new(),
        }
    }

    /// Attaches a note shown with the phase's result.
    pub(crate) fn with_note(mut self, note: Option<String>) -> PhasePlan {
        self.note = note;
        self
    }

    /// Runs the phase holding an exclusive lock on `path` (created when missing).
    pub(crate) fn with_lock(mut self, path: PathBuf) -> PhasePlan {
        self.lock = Some(path);
        self
    }

    /// Marks the phase as in progress in `path` until it passes (see `pending_marker`).
    pub(crate) fn with_pending_marker(mut self, path: PathBuf) -> PhasePlan {
        self.pending_marker = Some(path);
        self
    }

    /// A build phase the test command does itself: skipped with `reason`, unless the user
    /// replaces the test command; then `separate_check` checks the build (see the field).
    pub(crate) fn checked_by_test(separate_check: Vec<CommandSpec>, reason: impl Into<String>) -> PhasePlan {
        PhasePlan { separate_check, ..PhasePlan::skipped(PhaseKind::Build, reason) }
    }

    /// Runs this (checking, writing nothing) build phase alongside the test phase.
    pub(crate) fn alongside_tests(mut self) -> PhasePlan {
        self.alongside_tests = true;
        self
    }

    /// Declares the report files the phase writes.
    pub(crate) fn with_reports(mut self, reports: Vec<ReportSpec>) -> PhasePlan {
        self.reports = reports;
        self
    }
}

/// What a collector sees after the test phase ran.
pub(crate) struct CollectContext<'a> {
    pub root: &'a Path,
    pub work_dir: &'a Path,
    pub reports: &'a [ReportSpec],
    /// Outcome of the last test command (exit, capped output).
    pub outcome: &'a CommandOutcome,
    /// When the test phase began, for suites whose commands write the reports (`None` for
    /// imports, which read files that existed before): a matching file last written before it was
    /// left by an earlier run and is not read.
    pub started: Option<std::time::SystemTime>,
}

/// The time `ago` before now: when a phase that took `ago` began.
pub(crate) fn started_before(ago: std::time::Duration) -> std::time::SystemTime {
    let now = std::time::SystemTime::now();
    now.checked_sub(ago).unwrap_or(now)
}

/// Directories detection never enters, whatever `.gitignore` says.
pub(crate) const NEVER_WALK: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "vendor",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".gradle",
    ".idea",
    "fcorr-out",
];

/// How deep detection looks below the project root.
const MAX_DEPTH: usize = 6;
/// How many files detection lists at most (a guard against huge trees).
const MAX_FILES: usize = 20_000;

/// The files of a project, walked once with ignore rules applied.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProjectFiles {
    pub root: PathBuf,
    /// Paths relative to `root`, `/`-separated, sorted.
    pub files: Vec<String>,
    /// True when the walk stopped at [`MAX_FILES`].
    pub truncated: bool,
    /// The workspace root when this project runs as a member of a workspace (its install, lockfile
    /// and shared tools are there); `None` for a project on its own.
    pub workspace: Option<PathBuf>,
}

impl ProjectFiles {
    /// Lists a project's files, skipping [`NEVER_WALK`] directories and anything ignored by
    /// `.gitignore`/`.ignore` files (whether or not the project is a git checkout).
    pub(crate) fn scan(root: &Path) -> std::io::Result<ProjectFiles> {
        let meta = std::fs::metadata(root)?;
        if !meta.is_dir() {
            return Err(std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"));
        }
        // The walk below skips what it cannot read: an unreadable project must say so, not look empty.
        std::fs::read_dir(root)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot list the directory: {e}")))?;
        let walker = ignore::WalkBuilder::new(root)
            .max_depth(Some(MAX_DEPTH))
            .hidden(false)
            .require_git(false)
            .filter_entry(|entry| {
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                !(is_dir && entry.file_name().to_str().is_some_and(|name| NEVER_WALK.contains(&name)))
            })
            .build();
        let mut files = Vec::new();
        let mut truncated = false;
        for entry in walker.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if let Ok(rel) = entry.path().strip_prefix(root) {
                files.push(rel.to_string_lossy().replace('\\', "/"));
            }
            if files.len() >= MAX_FILES {
                truncated = true;
                break;
            }
        }
        files.sort();
        Ok(ProjectFiles { root: root.to_path_buf(), files, truncated, workspace: None })
    }

    /// The files directly in `root` (no subdirectory): enough to read a workspace root's manifest
    /// and lockfile without walking its whole tree again. Empty when it cannot be listed.
    pub(crate) fn top_level(root: &Path) -> ProjectFiles {
        let mut files: Vec<String> = std::fs::read_dir(root)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        ProjectFiles { root: root.to_path_buf(), files, truncated: false, workspace: None }
    }

    /// The listing of the directory `dir` (relative, `/`-separated) as a project of its own: a
    /// workspace member, seen from its workspace root.
    pub(crate) fn below(&self, dir: &str) -> ProjectFiles {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        ProjectFiles {
            root: self.root.join(dir),
            files: self.files.iter().filter_map(|f| f.strip_prefix(&prefix)).map(str::to_string).collect(),
            truncated: self.truncated,
            workspace: Some(self.root.clone()),
        }
    }

    /// True when `rel` exists in the listing.
    pub(crate) fn has(&self, rel: &str) -> bool {
        self.files.binary_search_by(|f| f.as_str().cmp(rel)).is_ok()
    }

    /// Files whose path matches a glob (e.g. `**/test_*.py`).
    pub(crate) fn matching(&self, glob: &str) -> Vec<&str> {
        match globset::Glob::new(glob) {
            Ok(g) => {
                let matcher = g.compile_matcher();
                self.files.iter().map(String::as_str).filter(|f| matcher.is_match(f)).collect()
            }
            Err(_) => Vec::new(),
        }
    }

    /// Reads a file as text (at most 4 MiB; larger manifests are not plausible). A device or
    /// FIFO (a symlinked `package.json` in a hostile checkout) is refused, never read.
    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        crate::fsio::read_text(&self.root.join(rel), crate::fsio::PROJECT_FILE).ok()
    }
}

/// Finds `path:line[:col]: message` lines in compiler output (a fallback for any toolchain).
pub(crate) fn generic_build_diagnostics(output: &str) -> Vec<Diagnostic> {
    use std::sync::OnceLock;
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        // The pattern is a literal; it compiles.
        regex::Regex::new(r"(?m)^\s*(?:\./)?([\w./\-]+\.[A-Za-z]{1,5})[:(](\d+)(?:[:,](\d+))?\)?:?\s*(?:error|Error|ERROR)?:?\s*(.+)$")
            .expect("valid regex")
    });
    pattern
        .captures_iter(output)
        .take(50)
        .map(|c| Diagnostic {
            severity: Severity::Error,
            source: "build".into(),
            message: c[4].trim().to_string(),
            file: Some(c[1].to_string()),
            line: c[2].parse().ok(),
            column: c.get(3).and_then(|m| m.as_str().parse().ok()),
        })
        .collect()
}

/// Picks the best candidate across every ecosystem, with an explanation of the choice.
pub(crate) fn detect_best(files: &ProjectFiles, forced: Option<&str>, framework: Option<&str>) -> DetectReport {
    let mut candidates: Vec<Candidate> = Vec::new();
    for ecosystem in ECOSYSTEMS {
        let skip = match forced {
            Some(name) => name != ecosystem.name(),
            // The command runner matches anything; it is only ever chosen explicitly.
            None => ecosystem.name() == "command",
        };
        if skip {
            continue;
        }
        if let Some(candidate) = ecosystem.detect(files, framework) {
            candidates.push(candidate);
        }
    }
    // Stable sort keeps registry order among equal confidences.
    candidates.sort_by(|a, b| b.detection.confidence.total_cmp(&a.detection.confidence));
    let explanation = match candidates.as_slice() {
        [] if forced.is_some() => format!("runner `{}` found none of its markers here", forced.unwrap_or_default()),
        [] => {
            let looked = "no ecosystem's markers were found (looked for pyproject.toml, setup.py, requirements.txt, \
                          test_*.py, package.json, go.mod, Cargo.toml, pom.xml, build.gradle)";
            match nested_projects(files).as_slice() {
                [] => format!("{looked}; set `runner` and `commands` in fcorr.toml to run it anyway"),
                nested => {
                    let shown: Vec<String> =
                        nested.iter().take(5).map(|(dir, marker)| format!("{dir} ({marker})")).collect();
                    let more = if nested.len() > 5 { format!(" and {} more", nested.len() - 5) } else { String::new() };
                    let dirs: Vec<&str> = nested.iter().take(5).map(|(dir, _)| dir.as_str()).collect();
                    format!(
                        "{looked} here, but below it: {}{more}; run them with `fcorr run {}` (paths relative to \
                         this directory) or list each as a [[suite]] path in fcorr.toml",
                        shown.join(", "),
                        dirs.join(" ")
                    )
                }
            }
        }
        [only] => format!("{} ({}) is the only match", only.detection.ecosystem, only.detection.framework),
        [best, second, ..] if best.detection.confidence == second.detection.confidence => format!(
            "tie between {} and {} at confidence {:.2}; {} wins by registry order — set `runner` to choose",
            best.detection.framework, second.detection.framework, best.detection.confidence, best.detection.framework
        ),
        [best, second, ..] => format!(
            "{} ({:.2}) beats {} ({:.2})",
            best.detection.framework,
            best.detection.confidence,
            second.detection.framework,
            second.detection.confidence
        ),
    };
    DetectReport { best: candidates.first().cloned(), candidates, explanation, truncated: files.truncated }
}

/// The shallowest directories below the root that hold a project marker, each with the marker,
/// for a root where none is: a repository whose projects all sit one or two levels down
/// (`services/a/go.mod`) needs their paths, and saying only "no markers" sends the user looking.
fn nested_projects(files: &ProjectFiles) -> Vec<(String, &'static str)> {
    const MARKERS: [&str; 8] = [
        "pyproject.toml",
        "setup.py",
        "package.json",
        "go.mod",
        "Cargo.toml",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
    ];
    let mut found: Vec<(String, &'static str)> = Vec::new();
    for file in &files.files {
        let Some((dir, name)) = file.rsplit_once('/') else { continue };
        let Some(marker) = MARKERS.iter().find(|m| **m == name) else { continue };
        // A project inside one already found is its part (a module, a member), not another project.
        if found.iter().any(|(d, _)| dir == d || dir.starts_with(&format!("{d}/"))) {
            continue;
        }
        found.retain(|(d, _)| !d.starts_with(&format!("{dir}/")));
        found.push((dir.to_string(), marker));
    }
    found.sort();
    found
}

/// How the project at `files.root` divides into suites, as the ecosystem detection picks there
/// (`forced`: the suite's `runner`) sees it; a single project when nothing is detected.
pub(crate) fn members_of(files: &ProjectFiles, forced: Option<&str>, framework: Option<&str>) -> Members {
    let best = detect_best(files, forced, framework).best;
    match best.and_then(|b| by_name(&b.detection.ecosystem)) {
        Some(ecosystem) => ecosystem.members(files),
        None => Members::default(),
    }
}

/// Every candidate found, the winner and why.
#[derive(Debug, Clone)]
pub(crate) struct DetectReport {
    pub best: Option<Candidate>,
    pub candidates: Vec<Candidate>,
    pub explanation: String,
    pub truncated: bool,
}

/// A project made of these files (path, text) in a temporary directory, and its listing.
#[cfg(test)]
pub(crate) fn project_of(files: &[(&str, &str)]) -> (tempfile::TempDir, ProjectFiles) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let files = ProjectFiles::scan(dir.path()).unwrap();
    (dir, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_skips_never_walk_and_gitignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(root.join("node_modules/x/package.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("gen")).unwrap();
        std::fs::write(root.join("gen/a.py"), "").unwrap();
        std::fs::write(root.join(".gitignore"), "gen/\n").unwrap();
        std::fs::write(root.join("package.json"), "{}").unwrap();
        let files = ProjectFiles::scan(root).unwrap();
        assert_eq!(files.files, vec![".gitignore", "package.json"]);
        assert!(files.has("package.json"));
    }

    /// A root with no marker whose projects sit below it names them and how to run them.
    #[test]
    fn a_root_without_markers_names_the_projects_below_it() {
        let (_dir, files) = project_of(&[
            ("services/b/go.mod", "module b\n"),
            ("services/a/go.mod", "module a\n"),
            ("services/a/tools/go.mod", "module tools\n"),
            ("web/package.json", "{}"),
            ("README.md", ""),
        ]);
        let report = detect_best(&files, None, None);
        assert!(report.best.is_none());
        assert!(
            report.explanation.ends_with(
                "here, but below it: services/a (go.mod), services/b (go.mod), web (package.json); run them with \
                 `fcorr run services/a services/b web` (paths relative to this directory) or list each as a \
                 [[suite]] path in fcorr.toml"
            ),
            "{}",
            report.explanation
        );
        let (_dir, empty) = project_of(&[("README.md", "")]);
        assert!(detect_best(&empty, None, None).explanation.ends_with("to run it anyway"));
    }

    /// Selects every case it is given, as a framework's name filter would.
    struct SelectsAll;

    impl Ecosystem for SelectsAll {
        fn name(&self) -> &'static str {
            "all"
        }
        fn detect(&self, _: &ProjectFiles, _: Option<&str>) -> Option<Candidate> {
            None
        }
        fn plan(&self, _: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
            Ok(Vec::new())
        }
        fn select_tests(&self, test: &PhasePlan, failed: &[&Case]) -> Option<Rerun> {
            Some(Rerun { phase: test.clone(), selected: (0..failed.len()).collect() })
        }
    }

    /// No ecosystem is offered a case that says results are incomplete: it keeps its outcome, and
    /// the selection still points at the right cases of the caller's list.
    #[test]
    fn incomplete_results_cases_never_reach_an_ecosystems_selection() {
        use crate::model::{CaseStatus, incomplete};
        let case = |name: &str| Case { name: name.into(), status: CaseStatus::Error, ..Case::default() };
        let (a, b) = (case("test_a"), case("test_b"));
        let markers: Vec<Case> = incomplete::INCOMPLETE_RESULTS
            .iter()
            .map(|m| case(&format!("{m}{}", if m.ends_with(']') { "" } else { "]" })))
            .collect();
        let mut failed: Vec<&Case> = markers.iter().collect();
        failed.insert(1, &a);
        failed.push(&b);
        let test = PhasePlan::run(PhaseKind::Test, Vec::new());
        let rerun = SelectsAll.rerun(&test, &failed).unwrap();
        assert_eq!(rerun.selected, [1, failed.len() - 1]);
    }

    #[test]
    fn generic_diagnostics_find_file_and_line() {
        let diags = generic_build_diagnostics("src/main.ts(3,7): error TS2322: Type 'string' is not assignable\n");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].file.as_deref(), Some("src/main.ts"));
        assert_eq!(diags[0].line, Some(3));
        assert_eq!(diags[0].column, Some(7));
    }
}
