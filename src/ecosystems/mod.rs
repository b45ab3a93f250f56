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

    /// How firmly a candidate this ecosystem detected claims the root (see [`Claim`]). The
    /// default: a build file at the root makes it this ecosystem's project, with tests.
    fn claim(&self, files: &ProjectFiles, detection: &Detection) -> Claim {
        let _ = (files, detection);
        Claim::Tests
    }

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

/// How firmly a detected ecosystem claims the directory it was detected in, when nothing forces
/// the runner: what decides whether the root is this ecosystem's project, and whether it runs
/// next to another ecosystem's project at the same root.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Claim {
    /// A project here with tests: it runs, and so does every other ecosystem's project that
    /// claims the same root with tests (a Python backend and a JS frontend sharing one root):
    /// each tool runs only its own tests, so picking one would drop the other's.
    Tests,
    /// A project here (a manifest at the root) in which no tests were found: it runs only when it
    /// is the best match.
    Project,
    /// Evidence only below the root (test files in a subdirectory, a pyproject.toml holding only
    /// other tools' settings), said in the text: the root is not claimed when projects of another
    /// ecosystem are below it.
    Below(String),
    /// Nothing to test here (a package.json for tooling only), said in the text: the root is not
    /// claimed when any project is below it.
    Nothing(String),
}

impl Claim {
    /// True for a claim that a root project (a manifest at the root) makes.
    fn at_root(&self) -> bool {
        matches!(self, Claim::Tests | Claim::Project)
    }

    /// Why the candidate does not claim a root with `below` under it; `None` when it does.
    fn gives_way(&self, ecosystem: &str, below: &[Nested]) -> Option<&str> {
        match self {
            Claim::Below(why) if below.iter().any(|n| n.ecosystem != ecosystem) => Some(why),
            Claim::Nothing(why) if !below.is_empty() => Some(why),
            _ => None,
        }
    }
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
///
/// Unless `forced` names the runner, a candidate whose only evidence is below the root, or that
/// has nothing to test ([`Claim`]), gives way to the projects below the root; a project at the
/// root ranks before such evidence; and, unless a framework is forced too, every other ecosystem
/// whose project at the root has tests runs next to the best ([`DetectReport::also`]).
pub(crate) fn detect_best(files: &ProjectFiles, forced: Option<&str>, framework: Option<&str>) -> DetectReport {
    let mut found: Vec<(Candidate, Claim)> = Vec::new();
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
            // A runner the user names claims the root, whatever the evidence.
            let claim = if forced.is_some() { Claim::Tests } else { ecosystem.claim(files, &candidate.detection) };
            found.push((candidate, claim));
        }
    }
    let mut set_aside: Vec<String> = Vec::new();
    // Whether a candidate set aside has tests: the user may want it to run from the root anyway.
    let mut aside_tests = false;
    if found.iter().any(|(_, claim)| !claim.at_root()) {
        let below = nested_projects(files);
        found.retain(|(candidate, claim)| match claim.gives_way(&candidate.detection.ecosystem, &below) {
            Some(why) => {
                set_aside.push(format!("{}: {why}", candidate.detection.language));
                aside_tests |= matches!(claim, Claim::Below(_));
                false
            }
            None => true,
        });
    }
    // Stable sort keeps registry order among equals.
    found.sort_by(|(a, a_claim), (b, b_claim)| {
        b_claim.at_root().cmp(&a_claim.at_root()).then(b.detection.confidence.total_cmp(&a.detection.confidence))
    });
    let also: Vec<Candidate> = match forced.or(framework) {
        Some(_) => Vec::new(),
        None => found
            .iter()
            .skip(1)
            .filter(|(c, claim)| *claim == Claim::Tests && c.problem.is_none())
            .map(|(c, _)| c.clone())
            .collect(),
    };
    let candidates: Vec<Candidate> = found.into_iter().map(|(c, _)| c).collect();
    let mut explanation = match candidates.as_slice() {
        [] if forced.is_some() => format!("runner `{}` found none of its markers here", forced.unwrap_or_default()),
        [] => nothing_detected(files, &set_aside, aside_tests),
        [best, ..] if !also.is_empty() => {
            let all: Vec<String> = std::iter::once(best)
                .chain(&also)
                .map(|c| format!("{} ({})", c.detection.framework, c.detection.ecosystem))
                .collect();
            format!(
                "{} each find tests here, and each runs only its own: each runs as a suite of its own, named \
                 with its runner; to run one, set `runner` in a [[suite]] with this path",
                all.join(" and ")
            )
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
    if !candidates.is_empty() && !set_aside.is_empty() {
        explanation.push_str(&format!("; set aside, with other projects below: {}", set_aside.join("; ")));
    }
    DetectReport { best: candidates.first().cloned(), candidates, also, explanation, truncated: files.truncated }
}

/// Why nothing was detected at a root: what was looked for, or why the candidates found there
/// (`set_aside`; `aside_tests`: one of them has tests) do not make it a project, and the projects
/// below it with the command that runs them.
fn nothing_detected(files: &ProjectFiles, set_aside: &[String], aside_tests: bool) -> String {
    let here = match set_aside {
        [] => "no ecosystem's markers were found (looked for pyproject.toml, setup.py, requirements.txt, test_*.py, \
               package.json, go.mod, Cargo.toml, pom.xml, build.gradle) here"
            .to_string(),
        _ => format!("nothing here is a project of its own ({})", set_aside.join("; ")),
    };
    let nested = nested_projects(files);
    if nested.is_empty() {
        return format!("{here}; set `runner` and `commands` in fcorr.toml to run it anyway");
    }
    let shown: Vec<String> = nested.iter().take(5).map(|n| format!("{} ({})", n.dir, n.marker)).collect();
    let more = if nested.len() > 5 { format!(" and {} more", nested.len() - 5) } else { String::new() };
    let dirs: Vec<&str> = nested.iter().take(5).map(|n| n.dir.as_str()).collect();
    let as_one = match aside_tests {
        true => "; or, to run the tests set aside from here, set `runner` in a [[suite]] with this path",
        false => "",
    };
    format!(
        "{here}, but below it: {}{more}; run them with `fcorr run {}` (paths relative to this directory) or list \
         each as a [[suite]] path in fcorr.toml{as_one}",
        shown.join(", "),
        dirs.join(" ")
    )
}

/// The files that make a directory below the root a project: the file, its ecosystem, and
/// what it makes the directory.
const MARKERS: [(&str, &str, &str); 8] = [
    ("pyproject.toml", "python", "a Python project"),
    ("setup.py", "python", "a Python project"),
    ("package.json", "node", "a JavaScript project"),
    ("go.mod", "go", "a Go module"),
    ("Cargo.toml", "rust", "a Rust crate"),
    ("pom.xml", "java", "a Maven project"),
    ("build.gradle", "java", "a Gradle project"),
    ("build.gradle.kts", "java", "a Gradle project"),
];
/// The marker shown for a directory that holds Python test files and no Python project file.
const PYTHON_TESTS: &str = "test_*.py";

/// A directory below the root that holds a project, or Python tests ([`project_dirs`]).
#[derive(Debug, Clone, PartialEq)]
struct Nested {
    /// Relative to the root, `/`-separated.
    dir: String,
    /// The file that makes it one (`go.mod`), or [`PYTHON_TESTS`].
    marker: &'static str,
    /// The ecosystem whose project it is.
    ecosystem: &'static str,
    /// What it is (`a Go module`).
    what: &'static str,
}

/// Every directory below the root holding a project marker (one entry per directory and
/// ecosystem), or Python test files, in path order. Directories of test inputs and those the
/// tools skip (`testdata`, `fixtures`, `_*`, `.*`) hold no project of the repository.
fn project_dirs(files: &ProjectFiles) -> Vec<Nested> {
    let skipped = |name: &str| name == "testdata" || name == "fixtures" || name.starts_with(['.', '_']);
    let mut found: Vec<Nested> = Vec::new();
    for file in &files.files {
        let Some((dir, name)) = file.rsplit_once('/') else { continue };
        if dir.split('/').any(skipped) {
            continue;
        }
        let (marker, ecosystem, what) = match MARKERS.iter().find(|(m, ..)| *m == name) {
            Some(&found) => found,
            None if python::is_test_file(name) => (PYTHON_TESTS, "python", "Python tests"),
            None => continue,
        };
        if !found.iter().any(|n| n.dir == dir && n.ecosystem == ecosystem) {
            found.push(Nested { dir: dir.to_string(), marker, ecosystem, what });
        }
    }
    found
}

/// True when `dir` is strictly inside `outer`.
fn inside(dir: &str, outer: &str) -> bool {
    dir.strip_prefix(outer).is_some_and(|rest| rest.starts_with('/'))
}

/// The shallowest directories below the root that hold a project (or Python tests), each once,
/// with its first marker: a repository whose projects all sit one or two levels down
/// (`services/a/go.mod`) needs their paths, and saying only "no markers" sends the user looking.
/// A project inside one already found is its part (a module, a member), not another project.
fn nested_projects(files: &ProjectFiles) -> Vec<Nested> {
    let all = project_dirs(files);
    let mut shallowest: Vec<Nested> = Vec::new();
    for n in all.iter().filter(|n| !all.iter().any(|o| inside(&n.dir, &o.dir))) {
        if !shallowest.iter().any(|s| s.dir == n.dir) {
            shallowest.push(n.clone());
        }
    }
    shallowest
}

/// Projects of ecosystems other than `running` below the root (the shallowest of each), split
/// into those with tests of their own, which run as suites of their own (their directories), and
/// the rest, named as not run with why (`root` says which project's run does not include them).
fn other_projects(files: &ProjectFiles, running: &[&str], root: &str) -> (Vec<String>, Vec<LeftOut>) {
    let other: Vec<Nested> = project_dirs(files).into_iter().filter(|n| !running.contains(&n.ecosystem)).collect();
    let mut run: Vec<String> = Vec::new();
    let mut left_out: Vec<LeftOut> = Vec::new();
    for n in other.iter().filter(|n| !other.iter().any(|o| inside(&n.dir, &o.dir))) {
        let what = format!("{} ({})", n.what, n.marker);
        // Two ecosystems' projects in one directory: the first decides whether it runs (one scan),
        // and a named one's entry says both.
        if run.contains(&n.dir) {
            continue;
        }
        if let Some(l) = left_out.iter_mut().find(|l| l.path == n.dir) {
            l.reason = l.reason.replacen(" below ", &format!(" and {what} below "), 1);
            continue;
        }
        // A failing test there would otherwise sit beside a PASS of the root: what has tests runs.
        if has_tests_of_its_own(&files.root.join(&n.dir)) {
            run.push(n.dir.clone());
            continue;
        }
        left_out.push(LeftOut {
            path: n.dir.clone(),
            reason: format!(
                "{what} below {root}, with no tests found at its root: give it a [[suite]], or run \
                 `fcorr run . {}` in the project's directory",
                n.dir
            ),
        });
    }
    (run, left_out)
}

/// True when `dir`, planned on its own, is a project whose best match claims it with tests
/// ([`Claim::Tests`]) and can be run as detected.
fn has_tests_of_its_own(dir: &Path) -> bool {
    let Ok(files) = ProjectFiles::scan(dir) else { return false };
    let report = detect_best(&files, None, None);
    report.best.as_ref().is_some_and(|c| {
        c.problem.is_none()
            && by_name(&c.detection.ecosystem).is_some_and(|e| e.claim(&files, &c.detection) == Claim::Tests)
    })
}

/// How the tree at `files.root` divides into suites, as detection there sees it (`forced`: the
/// suite's `runner`): each ecosystem that runs at the root, best first, with its members, and the
/// projects of other ecosystems below that none of them runs. No projects when nothing is
/// detected.
pub(crate) fn layout(files: &ProjectFiles, forced: Option<&str>, framework: Option<&str>) -> Layout {
    let report = detect_best(files, forced, framework);
    let running: Vec<(&'static dyn Ecosystem, &str)> = report
        .best
        .iter()
        .chain(&report.also)
        .filter_map(|c| Some((by_name(&c.detection.ecosystem)?, c.detection.language.as_str())))
        .collect();
    let names: Vec<&str> = running.iter().map(|(e, _)| e.name()).collect();
    let languages: Vec<&str> = running.iter().map(|(_, language)| *language).collect();
    let root = match languages.as_slice() {
        [one] => format!("the {one} project, whose test run does not include it"),
        many => format!("the {} projects, whose test runs do not include it", many.join(" and ")),
    };
    // The generic command runner's commands may run anything: nothing is named or run for it.
    let (below, left_out) = match names.as_slice() {
        [] | ["command"] => (Vec::new(), Vec::new()),
        _ => other_projects(files, &names, &root),
    };
    Layout { projects: running.iter().map(|(e, _)| (e.name(), e.members(files))).collect(), below, left_out }
}

/// How the tree at a root divides into suites ([`layout`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    /// Each ecosystem that runs at the root (its runner's name), best first, with its members.
    pub projects: Vec<(&'static str, Members)>,
    /// Directories of projects of other ecosystems below the root that none of those runs and
    /// that have tests of their own: each runs as a suite of its own.
    pub below: Vec<String>,
    /// Projects of other ecosystems below the root that none of those runs, with why.
    pub left_out: Vec<LeftOut>,
}

/// Every candidate found, the winner and why.
#[derive(Debug, Clone)]
pub(crate) struct DetectReport {
    pub best: Option<Candidate>,
    /// Candidates that claim the root (best first), without those that gave way to the
    /// projects below it.
    pub candidates: Vec<Candidate>,
    /// Other ecosystems whose projects at the root have tests: they run next to the best, each a
    /// suite of its own.
    pub also: Vec<Candidate>,
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

    const GO_MOD: (&str, &str) = ("svc/go.mod", "module svc\n");
    const TOOLING: (&str, &str) = ("package.json", r#"{"private":true,"scripts":{"prepare":"husky"}}"#);

    /// A stray test file below a marker-less root, or a tooling-only package.json, is no project
    /// of the root when other projects are below it; alone, it still is.
    #[test]
    fn weak_evidence_gives_way_to_the_projects_below() {
        let (_dir, files) = project_of(&[("scripts/test_release.py", ""), GO_MOD, ("web/package.json", "{}")]);
        let report = detect_best(&files, None, None);
        assert!(report.best.is_none() && report.candidates.is_empty(), "{report:?}");
        assert!(report.explanation.starts_with(
            "nothing here is a project of its own (Python: test files only below it (scripts/test_release.py)"
        ));
        assert!(report.explanation.contains("below it: scripts (test_*.py), svc (go.mod), web (package.json); run them with `fcorr run scripts svc web`"), "{}", report.explanation);
        assert!(report.explanation.ends_with("set `runner` in a [[suite]] with this path"));
        let forced = detect_best(&files, Some("python"), None).best.unwrap();
        assert_eq!(forced.detection.ecosystem, "python", "a runner the user names claims the root");

        let (_dir, files) = project_of(&[TOOLING, GO_MOD]);
        let report = detect_best(&files, None, None);
        assert!(report.best.is_none());
        assert!(
            report
                .explanation
                .starts_with("nothing here is a project of its own (JavaScript: package.json with no `test` script"),
            "{}",
            report.explanation
        );
        assert!(!report.explanation.contains("`runner`"), "nothing set aside has tests to run: {}", report.explanation);

        // Alone, or with only its own ecosystem's projects below, it is still the project.
        let (_dir, files) = project_of(&[TOOLING]);
        assert!(detect_best(&files, None, None).best.unwrap().problem.unwrap().contains("no test framework found"));
        let (_dir, files) = project_of(&[("tests/test_a.py", ""), ("lib/pyproject.toml", "[project]\nname='l'\n")]);
        assert_eq!(detect_best(&files, None, None).best.unwrap().detection.ecosystem, "python");
    }

    /// Two ecosystems with tests at one root both run; one without tests, or a forced runner or
    /// framework, keeps a single suite.
    #[test]
    fn a_root_with_tests_of_two_ecosystems_runs_both() {
        let both = [
            ("pyproject.toml", "[project]\nname='a'\n"),
            ("tests/test_a.py", ""),
            ("package.json", r#"{"scripts":{"test":"node --test"}}"#),
        ];
        let (_dir, files) = project_of(&both);
        let report = detect_best(&files, None, None);
        let also: Vec<&str> = report.also.iter().map(|c| c.detection.ecosystem.as_str()).collect();
        assert_eq!((report.best.unwrap().detection.ecosystem.as_str(), also), ("node", vec!["python"]));
        assert!(report.explanation.starts_with("node --test (node) and pytest (python) each find tests here"));
        assert!(detect_best(&files, Some("node"), None).also.is_empty());
        assert!(detect_best(&files, None, Some("pytest")).also.is_empty());
        let names: Vec<&str> = layout(&files, None, None).projects.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["node", "python"]);

        let (_dir, files) = project_of(&[both[0], both[1], TOOLING]);
        assert!(detect_best(&files, None, None).also.is_empty(), "a tooling package.json has no tests to run");
        let (_dir, files) = project_of(&[("requirements.txt", ""), both[2], ("test/a.test.js", "")]);
        let report = detect_best(&files, None, None);
        assert_eq!((report.best.unwrap().detection.ecosystem.as_str(), report.also.len()), ("node", 0));
    }

    /// Projects of other ecosystems below a project root, the shallowest of each (also inside a
    /// nested module of the root's own ecosystem): those with tests of their own run as suites of
    /// their own, the others are named; test inputs are not projects.
    #[test]
    fn other_ecosystems_projects_below_a_root_run_or_are_named() {
        let (_dir, files) = project_of(&[
            ("go.mod", "module root\n"),
            GO_MOD,
            ("svc/web/package.json", "{}"),
            ("py/pyproject.toml", "[project]\nname='p'\n"),
            ("py/tests/test_p.py", ""),
            ("py/ui/package.json", "{}"),
            ("both/package.json", "{}"),
            ("both/pyproject.toml", "[project]\nname='b'\n"),
            ("testdata/x/package.json", "{}"),
            ("a/fixtures/package.json", "{}"),
            (".github/actions/x/package.json", "{}"),
        ]);
        let layout = layout(&files, None, None);
        assert_eq!(layout.below, ["py"], "a Python project with tests runs; its package.json is its part");
        let left = layout.left_out;
        let named: Vec<&str> = left.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(named, ["both", "svc/web"]);
        assert_eq!(
            left[0].reason,
            "a JavaScript project (package.json) and a Python project (pyproject.toml) below the Go project, whose \
             test run does not include it, with no tests found at its root: give it a [[suite]], or run \
             `fcorr run . both` in the project's directory"
        );
        assert!(left[1].reason.starts_with("a JavaScript project (package.json) below the Go project"));
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
