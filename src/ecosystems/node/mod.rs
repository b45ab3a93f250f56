//! JavaScript and TypeScript projects: `package.json` with jest, vitest, mocha or `node --test`.
//!
//! The framework comes from the `test` script and the dependencies; the package manager from
//! `packageManager` or the lockfile. Tests run the framework directly with a machine-readable
//! reporter fcorr adds (jest/vitest JSON, mocha JSON through a bundled reporter that keeps the
//! describe path, node's JUnit plus a reporter that adds each test's file and line). The `test`
//! script is read step by step (`script.rs`): each call of the framework runs with all its flags
//! and environment, minus watch/reporter flags that would fight fcorr's; other steps (`pnpm lint
//! && ...`) are skipped with a note, or run in the build phase with `run-script-steps = true`.
//! A script calling the framework twice gives two runs whose cases are named by their flags.
//!
//! This file holds the `Ecosystem` impl (detection, workspace members, the three phases); the
//! concerns are in `framework.rs`, `package_manager.rs` (and the install phase), `build.rs`,
//! `script.rs`, `test_phase.rs`, `diagnostics.rs`, `workspace.rs`, `locations.rs`, `silent.rs` and
//! `rerun.rs`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    Candidate, CollectContext, Collected, Ecosystem, PhasePlan, ProjectContext, ProjectFiles, ProjectPlanError,
    generic_build_diagnostics,
};
use crate::model::{Detection, Diagnostic, PhaseKind};

mod build;
mod diagnostics;
mod fanout;
mod framework;
mod locations;
mod package_manager;
mod rerun;
mod script;
mod silent;
mod test_phase;
mod unhandled;
mod workspace;

use framework::{Framework, choose_framework};
use package_manager::{install_phase, package_manager};
use script::ScriptPlan;

/// Node.js projects (npm, pnpm, yarn).
pub(crate) struct Node;

/// The parts of `package.json` fcorr uses.
struct Manifest {
    scripts: serde_json::Map<String, Value>,
    /// Runtime, dev and optional dependencies with their version ranges.
    deps: Vec<(String, String)>,
    /// A workspace member's: the workspace root's dependencies, installed at the root and
    /// reachable from the member (monorepos often declare their test tools there only).
    workspace_deps: Vec<(String, String)>,
    package_manager: Option<String>,
    /// The whole package.json, for the fields read once (entry points, the package's name).
    raw: Value,
}

impl Manifest {
    fn parse(text: &str) -> Result<Manifest, serde_json::Error> {
        let value: Value = serde_json::from_str(text)?;
        let object = |key: &str| value.get(key).and_then(Value::as_object).cloned().unwrap_or_default();
        let mut deps = Vec::new();
        for key in ["dependencies", "devDependencies", "optionalDependencies"] {
            for (name, version) in object(key) {
                deps.push((name, version.as_str().unwrap_or("*").to_string()));
            }
        }
        Ok(Manifest {
            scripts: object("scripts"),
            deps,
            workspace_deps: Vec::new(),
            package_manager: value.get("packageManager").and_then(Value::as_str).map(str::to_string),
            raw: value,
        })
    }

    fn script(&self, name: &str) -> Option<&str> {
        self.scripts.get(name).and_then(Value::as_str)
    }

    /// A dependency's version range, the project's own first, then the workspace root's.
    fn dep(&self, name: &str) -> Option<&str> {
        self.deps.iter().chain(&self.workspace_deps).find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// `dependency NAME RANGE`, saying when the workspace root declares it.
    fn dep_marker(&self, name: &str) -> String {
        let root = !self.deps.iter().any(|(n, _)| n == name) && self.workspace_deps.iter().any(|(n, _)| n == name);
        format!("dependency {name} {}{}", self.dep(name).unwrap_or("*"), if root { " (workspace root)" } else { "" })
    }
}

/// A workspace member's view of its workspace root: the root's top-level files (lockfile,
/// package.json) and manifest, which decide the package manager and hold shared dependencies.
struct WorkspaceRoot {
    files: ProjectFiles,
    manifest: Option<Manifest>,
}

impl WorkspaceRoot {
    /// The root of the workspace `files` is a member of (planned from the root, or found above a
    /// member run on its own); `None` for a project on its own.
    fn of(files: &ProjectFiles) -> Option<WorkspaceRoot> {
        let root = files.workspace.clone().or_else(|| workspace::enclosing(&files.root))?;
        let files = ProjectFiles::top_level(&root);
        let manifest = files.read("package.json").and_then(|text| Manifest::parse(&text).ok());
        Some(WorkspaceRoot { files, manifest })
    }

    /// Gives a member's manifest the root's dependencies and, when the member pins none, its
    /// package manager.
    fn share_with(&self, member: &mut Manifest) {
        if let Some(root) = &self.manifest {
            member.workspace_deps = root.deps.clone();
            if root.package_manager.is_some() {
                member.package_manager = root.package_manager.clone();
            }
        }
    }
}

impl Ecosystem for Node {
    fn name(&self) -> &'static str {
        "node"
    }

    fn frameworks(&self) -> &'static [&'static str] {
        &["jest", "vitest", "mocha", "node --test", "node-test", "node:test", "node"]
    }

    fn detect(&self, files: &ProjectFiles, framework: Option<&str>) -> Option<Candidate> {
        if !files.has("package.json") {
            return None;
        }
        let text = files.read("package.json").unwrap_or_default();
        let pm = package_manager(files, None);
        let manifest = match Manifest::parse(&text) {
            Ok(manifest) => manifest,
            Err(e) => {
                let path = files.root.join("package.json");
                return Some(Candidate {
                    detection: Detection {
                        ecosystem: "node".into(),
                        language: "JavaScript".into(),
                        framework: framework.unwrap_or("unknown").into(),
                        package_manager: Some(pm.name.into()),
                        confidence: 0.9,
                        markers: vec!["package.json (not valid JSON)".into()],
                    },
                    problem: Some(format!(
                        "{}: line {}, column {}: invalid JSON: {}; fix it (npm would fail with EJSONPARSE too)",
                        path.display(),
                        e.line(),
                        e.column(),
                        crate::text::json_error_text(&e)
                    )),
                });
            }
        };
        let mut manifest = manifest;
        let workspace = WorkspaceRoot::of(files);
        if let Some(root) = &workspace {
            root.share_with(&mut manifest);
        }
        // A member installs with its workspace's package manager and lockfile, at the root.
        let pm = package_manager(workspace.as_ref().map_or(files, |w| &w.files), Some(&manifest));
        let mut markers = vec!["package.json".to_string()];
        if let Some(root) = workspace.as_ref().filter(|w| w.files.root != files.root) {
            markers.push(format!("member of the workspace at {}", root.files.root.display()));
        }
        markers.extend(pm.markers.iter().cloned());
        let typescript = files.has("tsconfig.json") || manifest.dep("typescript").is_some();
        if files.has("tsconfig.json") {
            markers.push("tsconfig.json".into());
        } else if let Some(v) = manifest.dep("typescript") {
            markers.push(format!("dependency typescript {v}"));
        }
        let (chosen, confidence, why) = choose_framework(files, &manifest, framework);
        markers.extend(why);
        let members = self.members(files);
        if let Some(source) = members.source.as_deref().filter(|_| members.members_only || !members.run.is_empty()) {
            markers.push(format!("{source}: {} member(s) with tests run as suites of their own", members.run.len()));
        }
        let problem = match chosen {
            _ if members.members_only && members.run.is_empty() && framework.is_none() => Some(format!(
                "{}: a workspace root whose `test` script runs no test framework itself, and none of its members \
                 has a `test` script fcorr can run (see the members left out)",
                files.root.join("package.json").display()
            )),
            Some(_) => None,
            None => Some(match framework::named_but_undeclared(&manifest) {
                Some(named) => format!(
                    "{path}: the `test` script runs {name} but {name} is not among its dependencies ({root}); \
                     add it to devDependencies, or set `framework = \"{name}\"` in fcorr.toml",
                    path = files.root.join("package.json").display(),
                    name = named.label(),
                    root = match &workspace {
                        Some(root) => format!("nor its workspace root's, {}", root.files.root.display()),
                        None => "and no package.json `workspaces` above selects this directory".into(),
                    }
                ),
                None => format!(
                    "{}: no test framework found (looked for jest, vitest or mocha in the dependencies and the \
                     `test` script, `node --test`, and test files importing node:test); set `framework` in \
                     fcorr.toml, or `commands.test` and `reports`",
                    files.root.join("package.json").display()
                ),
            }),
        };
        Some(Candidate {
            detection: Detection {
                ecosystem: "node".into(),
                language: if typescript { "TypeScript" } else { "JavaScript" }.into(),
                framework: chosen.map(Framework::label).unwrap_or("unknown").into(),
                package_manager: Some(pm.name.into()),
                confidence,
                markers,
            },
            problem,
        })
    }

    fn claim(&self, files: &ProjectFiles, detection: &Detection) -> super::Claim {
        framework::claim(files, &detection.framework, self.members(files).source.is_some())
    }

    fn plan(&self, ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
        Ok(plan(ctx)?)
    }

    /// A workspace root's members that run as suites of their own (`workspace::members`).
    fn members(&self, files: &ProjectFiles) -> super::Members {
        workspace::members(files)
    }

    fn refine_phase(&self, ctx: &ProjectContext<'_>, phase: &mut PhasePlan) {
        match phase.kind {
            PhaseKind::Test => test_phase::add_task_location(ctx.root, phase),
            PhaseKind::Build => build::add_incremental(ctx.root, phase),
            PhaseKind::Install => {}
        }
    }

    fn collect(&self, ctx: &CollectContext<'_>) -> Collected {
        let groups = test_phase::read_groups(ctx.work_dir);
        let mut collected = if ctx.reports.iter().any(|r| groups.iter().any(|(report, _)| *report == r.pattern)) {
            test_phase::collect_groups(ctx, &groups)
        } else {
            super::collect_reports(ctx)
        };
        locations::apply(&mut collected, ctx.work_dir, ctx.root);
        collected.left_out = workspace::uncollected(ctx.work_dir, ctx.root, &collected.cases);
        silent::flag_files_without_tests(&mut collected, ctx.root);
        // vitest prints errors thrown outside any test on the console only, then exits 1.
        collected.cases.extend(unhandled::unhandled_errors(&ctx.outcome.output, ctx.root));
        collected.diagnostics.extend(super::coverage::threshold_failures(&ctx.outcome.output));
        collected
    }

    /// A jest/vitest failure points at the line that threw, not at its `test(…)` call.
    fn locate(&self, format: &str, report: &mut crate::collect::ParsedReport, _root: &Path) {
        if format == crate::collect::jest_json::NAME {
            locations::failing_lines(&mut report.cases);
        }
    }

    fn rejected_tool_version(&self, output: &str) -> Option<String> {
        diagnostics::engines_rejection(&strip_ansi_escapes::strip_str(output))
    }

    fn build_diagnostics(&self, output: &str, root: &Path) -> Vec<Diagnostic> {
        let diagnostics = diagnostics::tsc_diagnostics(output, root);
        if diagnostics.is_empty() { generic_build_diagnostics(output) } else { diagnostics }
    }

    fn select_tests(&self, test: &PhasePlan, failed: &[&crate::model::Case]) -> Option<super::Rerun> {
        rerun::rerun(test, failed)
    }
}

/// Why a Node project cannot be planned; the text is what the suite's error says.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NodePlanError {
    /// `source` names the file.
    #[error("{source}")]
    ManifestUnreadable { source: crate::fsio::ReadError },
    #[error("{}: {}", path.display(), crate::text::json_error_at(source))]
    ManifestInvalid { path: PathBuf, source: serde_json::Error },
    #[error("the node runner cannot run framework `{0}` (jest, vitest, mocha, node --test)")]
    UnknownFramework(String),
    /// A report an earlier run left could pass for this run's.
    #[error("cannot remove the old report {}: {source}", path.display())]
    StaleReport { path: PathBuf, source: std::io::Error },
    /// A file fcorr adds to the work directory (a reporter, the list of runs).
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// The install, build and test phases of the Node project `ctx` describes.
fn plan(ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, NodePlanError> {
    let path = ctx.root.join("package.json");
    // Read as detection read it (`ProjectFiles::read`): without a byte-order mark, which npm
    // ignores and serde_json rejects, so a file Windows editors saved is planned, not refused.
    let text = match crate::fsio::read_text(&path, crate::fsio::PROJECT_FILE) {
        Ok(text) => text,
        Err(source) => return Err(NodePlanError::ManifestUnreadable { source }),
    };
    let manifest = match Manifest::parse(&text) {
        Ok(manifest) => manifest,
        Err(source) => return Err(NodePlanError::ManifestInvalid { path, source }),
    };
    let framework = Framework::from_label(&ctx.detection.framework)
        .ok_or_else(|| NodePlanError::UnknownFramework(ctx.detection.framework.clone()))?;
    let mut manifest = manifest;
    let workspace = WorkspaceRoot::of(ctx.files);
    if let Some(root) = &workspace {
        root.share_with(&mut manifest);
    }
    let pm = package_manager(workspace.as_ref().map_or(ctx.files, |w| &w.files), Some(&manifest));
    let mut script = ScriptPlan::read(&manifest, framework);
    // The workspace root itself (a member's own `npm test -ws` fans out to no suites).
    let workspace_root = ctx.files.workspace.as_deref().is_none_or(|w| w == ctx.root);
    if workspace_root && workspace::declared(ctx.files, &manifest.raw).is_some() {
        script.separate_fan_outs();
    }
    let build = build::build_phase_alone(ctx, &manifest, &pm, &script);
    // A test script step the build phase runs (`npm run build && jest`, `pnpm test:types && ...`)
    // is neither run again nor named as skipped.
    let mut built: Vec<String> =
        build.commands.iter().filter(|c| c.program == "sh").filter_map(|c| c.args.get(1).cloned()).collect();
    if let Some(name) =
        build::build_script(&manifest).filter(|n| build.commands.iter().any(|c| c.args.iter().any(|a| a == n)))
    {
        let steps = manifest.script(name).and_then(|text| script::steps(text, &manifest.scripts)).unwrap_or_default();
        built.extend(steps.into_iter().map(|step| step.text));
    }
    script.before.retain(|step| !built.contains(&step.text));
    let build = build::with_script_steps(ctx, build, &script);
    let test = test_phase::test_phase(ctx, framework, &script)?;
    let own = if workspace_root { workspace::members_with_own_tests(ctx.files, &manifest) } else { Vec::new() };
    workspace::list_own_tests(ctx.work_dir, &own, framework)?;
    Ok(vec![install_phase(ctx, workspace.as_ref(), &manifest, &pm), build, test])
}

/// True when `node_modules/<name>` exists in `root` or a directory above it, where node's module
/// resolution (and a workspace's hoisting) would find it.
fn installed(root: &Path, name: &str) -> bool {
    root.ancestors().take(8).any(|dir| dir.join("node_modules").join(name).is_dir())
}

/// Major version of an installed package (`node_modules/<name>/package.json`), in `root` or the
/// nearest directory above it that has it, as node resolves it (a workspace hoists to its root).
fn package_major(root: &Path, name: &str) -> Option<u64> {
    let manifest = root
        .ancestors()
        .take(8)
        .map(|d| d.join("node_modules").join(name).join("package.json"))
        .find(|p| p.is_file())?;
    let text = crate::fsio::read_text(&manifest, crate::fsio::PROJECT_FILE).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value.get("version")?.as_str()?.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What planning a project at `dir` with `package.json` text `manifest` and `framework` says
    /// when it fails, with the suite's work directory `work`.
    fn plan_error(manifest: &str, framework: &str, work: &Path) -> String {
        plan_with(manifest, framework, work).map(|_| "planned".to_string()).unwrap_or_else(|e| e)
    }

    /// Plans a project with `package.json` text `manifest`: its phases' commands, or the error.
    fn plan_with(manifest: &str, framework: &str, work: &Path) -> Result<Vec<String>, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("package.json"), manifest).unwrap();
        let files = ProjectFiles::scan(dir.path()).unwrap();
        let mut detection = Node.detect(&files, Some("jest")).unwrap().detection;
        detection.framework = framework.into();
        let ctx = ProjectContext {
            root: dir.path(),
            files: &files,
            detection: &detection,
            work_dir: work,
            cache_dir: dir.path(),
            install: false,
            run_script_steps: false,
            build_script: None,
            dry_run: false,
        };
        match Node.plan(&ctx) {
            Ok(phases) => Ok(phases.iter().flat_map(|p| &p.commands).map(|c| c.args.join(" ")).collect()),
            Err(error) => Err(error.to_string().replace(&dir.path().display().to_string(), "<root>")),
        }
    }

    /// A package.json saved with a UTF-8 byte-order mark (as Windows editors save it) is planned
    /// as npm runs it, not refused at line 1, column 1.
    #[test]
    fn a_byte_order_mark_before_package_json_is_ignored() {
        let work = tempfile::tempdir().unwrap();
        let manifest = "\u{feff}{\"scripts\": {\"test\": \"jest\"}}";
        let commands = plan_with(manifest, "jest", work.path()).unwrap();
        assert!(commands.iter().any(|c| c.contains("--json")), "{commands:?}");
    }

    #[test]
    fn plan_errors_name_the_file_and_the_cause() {
        let work = tempfile::tempdir().unwrap();
        assert_eq!(
            plan_error("{\"name\": }", "jest", work.path()),
            "<root>/package.json: line 1, column 10: expected value"
        );
        assert_eq!(
            plan_error("{}", "ava", work.path()),
            "the node runner cannot run framework `ava` (jest, vitest, mocha, node --test)"
        );
        let gone = work.path().join("gone");
        let error = plan_error("{}", "mocha", &gone);
        let reporter = gone.join("fcorr-mocha-reporter.cjs");
        assert!(error.starts_with(&format!("cannot write {}: ", reporter.display())), "{error}");
    }

    pub(super) use crate::ecosystems::project_of as project;

    #[test]
    fn detection_prefers_the_framework_the_test_script_runs() {
        let (_dir, files) = project(&[
            ("package.json", r#"{"scripts":{"test":"jest"},"devDependencies":{"jest":"^29","vitest":"^3"}}"#),
            ("yarn.lock", ""),
        ]);
        let c = Node.detect(&files, None).unwrap();
        assert_eq!(c.detection.framework, "jest");
        assert_eq!(c.detection.confidence, 0.95);
        assert_eq!(c.detection.package_manager.as_deref(), Some("yarn"));
        assert!(c.detection.markers.iter().any(|m| m.contains("also depends on vitest")), "{:?}", c.detection.markers);
    }

    #[test]
    fn node_test_imports_without_framework_and_unknown_projects() {
        let (_dir, files) = project(&[
            ("package.json", r#"{"name":"x"}"#),
            ("test/a.test.mjs", "import test from 'node:test';"),
            ("tsconfig.json", "{}"),
        ]);
        let c = Node.detect(&files, None).unwrap();
        assert_eq!((c.detection.framework.as_str(), c.detection.language.as_str()), ("node --test", "TypeScript"));
        assert!(c.problem.is_none());
        let (_dir, files) = project(&[("package.json", r#"{"scripts":{"test":"echo no tests"}}"#)]);
        let c = Node.detect(&files, None).unwrap();
        assert!(c.problem.unwrap().contains("no test framework"));
    }

    /// A member run on its own outside any workspace that declares its framework: the message
    /// says what the script runs and where fcorr looked, not "no framework found".
    #[test]
    fn a_framework_the_script_runs_but_nothing_declares_is_named() {
        let (_dir, files) = project(&[("package.json", r#"{"scripts":{"test":"vitest run"}}"#)]);
        let problem = Node.detect(&files, None).unwrap().problem.unwrap();
        assert!(
            problem.contains("the `test` script runs vitest but vitest is not among its dependencies"),
            "{problem}"
        );
        assert!(problem.contains("no package.json `workspaces` above selects this directory"), "{problem}");
    }

    #[test]
    fn malformed_package_json_is_a_problem_with_line_and_column() {
        let (_dir, files) = project(&[("package.json", "{\n  \"a\": 1,\n}\n")]);
        let c = Node.detect(&files, None).unwrap();
        let problem = c.problem.unwrap();
        assert!(problem.contains("package.json: line 3, column 1"), "{problem}");
        assert!(problem.contains("trailing comma"), "{problem}");
    }
}
