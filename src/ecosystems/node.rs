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

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use serde_json::Value;
use sha2::Digest;

use super::{
    Candidate, CollectContext, Collected, Ecosystem, PhasePlan, PlanContext, ProjectFiles, ProjectPlanError,
    generic_build_diagnostics,
};
use crate::collect::{ReportSpec, relativize};
use crate::execute::process::{self, CommandSpec, Exit, find_on_path};
use crate::model::{Detection, Diagnostic, PhaseKind, Severity};

mod build;
mod locations;
mod rerun;
mod script;
mod workspace;

/// Node.js projects (npm, pnpm, yarn).
pub(crate) struct Node;

/// Test frameworks this runner drives, in the order used to break ties between dependencies.
const FRAMEWORKS: &[Framework] = &[Framework::Vitest, Framework::Jest, Framework::Mocha];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Framework {
    Jest,
    Vitest,
    Mocha,
    NodeTest,
}

impl Framework {
    fn label(self) -> &'static str {
        match self {
            Framework::Jest => "jest",
            Framework::Vitest => "vitest",
            Framework::Mocha => "mocha",
            Framework::NodeTest => "node --test",
        }
    }

    fn from_label(text: &str) -> Option<Framework> {
        match text.trim().to_ascii_lowercase().as_str() {
            "jest" => Some(Framework::Jest),
            "vitest" => Some(Framework::Vitest),
            "mocha" => Some(Framework::Mocha),
            "node --test" | "node-test" | "node:test" | "node" => Some(Framework::NodeTest),
            _ => None,
        }
    }
}

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
    /// The root of the workspace `files` is a member of; `None` for a project on its own.
    fn of(files: &ProjectFiles) -> Option<WorkspaceRoot> {
        let files = ProjectFiles::top_level(files.workspace.as_deref()?);
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
        if let Some(root) = &workspace {
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
        if let Some(source) = members.source.as_deref().filter(|_| members.members_only) {
            markers.push(format!("{source}: {} member(s) with tests run as suites of their own", members.run.len()));
        }
        let problem = match chosen {
            _ if members.members_only && members.run.is_empty() && framework.is_none() => Some(format!(
                "{}: a workspace root whose `test` script runs no test framework itself, and none of its members \
                 has a `test` script fcorr can run (see the members left out)",
                files.root.join("package.json").display()
            )),
            Some(_) => None,
            None => Some(format!(
                "{}: no test framework found (looked for jest, vitest or mocha in the dependencies and the `test` \
                 script, `node --test`, and test files importing node:test); set `framework` in fcorr.toml, or \
                 `commands.test` and `reports`",
                files.root.join("package.json").display()
            )),
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

    fn plan(&self, ctx: &PlanContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
        Ok(plan(ctx)?)
    }

    /// A workspace root (npm/yarn `workspaces`, pnpm-workspace.yaml) whose own `test` script runs
    /// no test framework (it fans out: `npm test --workspaces`, `pnpm -r test`, `turbo run test`,
    /// or there is none): every member with a `test` script fcorr can run is a suite of its own,
    /// sharing one install at the root; the other members are named with why. A root whose `test`
    /// script runs the framework itself (a vitest or jest config spanning the packages) is what CI
    /// runs: it stays one suite.
    fn members(&self, files: &ProjectFiles) -> super::Members {
        let mut members = super::Members::default();
        if files.workspace.is_some() {
            return members;
        }
        let Some(text) = files.read("package.json") else { return members };
        let (Ok(value), Ok(root)) = (serde_json::from_str::<Value>(&text), Manifest::parse(&text)) else {
            return members;
        };
        let Some(declared) = workspace::declared(files, &value) else { return members };
        members.source = Some(declared.source.into());
        if script_runs_a_framework(&root) {
            return members;
        }
        members.members_only = true;
        members.shared_install = true;
        let (dirs, excluded) = workspace::member_dirs(files, &declared.globs);
        for (dir, glob) in excluded {
            let reason = format!("excluded from the workspace by `{glob}` in {}", declared.source);
            members.left_out.push(crate::model::LeftOut { path: dir, reason });
        }
        for dir in dirs {
            let member_files = files.below(&dir);
            let Some(Ok(mut manifest)) = member_files.read("package.json").map(|t| Manifest::parse(&t)) else {
                // Its suite says what is wrong with its package.json.
                members.run.push(dir);
                continue;
            };
            manifest.workspace_deps = root.deps.clone();
            let reason = match manifest.script("test").filter(|t| !t.trim().is_empty()) {
                None => Some("no `test` script: the workspace's own test run skips it too".to_string()),
                Some(script) => choose_framework(&member_files, &manifest, None).0.is_none().then(|| {
                    format!("its `test` script (`{script}`) runs no test framework fcorr drives (jest, vitest, mocha, node --test)")
                }),
            };
            match reason {
                Some(reason) => members.left_out.push(crate::model::LeftOut { path: dir, reason }),
                None => members.run.push(dir),
            }
        }
        members
    }

    fn refine_phase(&self, ctx: &PlanContext<'_>, phase: &mut PhasePlan) {
        match phase.kind {
            PhaseKind::Test => add_task_location(ctx.root, phase),
            PhaseKind::Build => add_incremental(ctx.root, phase),
            PhaseKind::Install => {}
        }
    }

    fn collect(&self, ctx: &CollectContext<'_>) -> Collected {
        let groups = read_groups(ctx.work_dir);
        let mut collected = if ctx.reports.iter().any(|r| groups.iter().any(|(report, _)| *report == r.pattern)) {
            collect_groups(ctx, &groups)
        } else {
            super::collect_reports(ctx)
        };
        locations::apply(&mut collected, ctx.work_dir, ctx.root);
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
        engines_rejection(&strip_ansi_escapes::strip_str(output))
    }

    fn build_diagnostics(&self, output: &str, root: &Path) -> Vec<Diagnostic> {
        let diagnostics = tsc_diagnostics(output, root);
        if diagnostics.is_empty() { generic_build_diagnostics(output) } else { diagnostics }
    }

    fn rerun(&self, test: &PhasePlan, failed: &[&crate::model::Case]) -> Option<super::Rerun> {
        rerun::rerun(test, failed)
    }
}

/// Why a Node project cannot be planned; the text is what the suite's error says.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NodePlanError {
    #[error("{}: cannot read: {source}", path.display())]
    ManifestUnreadable { path: PathBuf, source: std::io::Error },
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
fn plan(ctx: &PlanContext<'_>) -> Result<Vec<PhasePlan>, NodePlanError> {
    let path = ctx.root.join("package.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(source) => return Err(NodePlanError::ManifestUnreadable { path, source }),
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
    let build = build_phase_alone(ctx, &manifest, &pm, &script);
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
    let build = with_script_steps(ctx, build, &script);
    Ok(vec![install_phase(ctx, workspace.as_ref(), &manifest, &pm), build, test_phase(ctx, framework, &script)?])
}

/// serde_json's message without its trailing ` at line L column C`.
/// Picks the framework and says why; `None` when nothing fits.
fn choose_framework(
    files: &ProjectFiles,
    manifest: &Manifest,
    forced: Option<&str>,
) -> (Option<Framework>, f64, Vec<String>) {
    if let Some(name) = forced {
        return match Framework::from_label(name) {
            Some(f) => (Some(f), 1.0, vec![format!("fcorr.toml: framework = \"{name}\"")]),
            None => (None, 0.5, vec![format!("fcorr.toml: framework = \"{name}\" (not one the node runner drives)")]),
        };
    }
    let script = manifest.script("test").unwrap_or_default();
    let words: Vec<&str> = script.split(|c: char| c.is_whitespace() || "&|;()".contains(c)).collect();
    let in_script = |bin: &str| words.iter().any(|w| *w == bin || w.ends_with(&format!("/.bin/{bin}")));
    let declared: Vec<Framework> = FRAMEWORKS.iter().copied().filter(|f| manifest.dep(f.label()).is_some()).collect();
    let dep_marker = |f: Framework| manifest.dep_marker(f.label());

    if let Some(f) = declared.iter().copied().find(|f| in_script(f.label())) {
        let mut why = vec![format!("scripts.test: `{script}`"), dep_marker(f)];
        let others: Vec<&str> = declared.iter().filter(|o| **o != f).map(|o| o.label()).collect();
        if !others.is_empty() {
            why.push(format!("also depends on {}; the test script picks {}", others.join(", "), f.label()));
        }
        return (Some(f), 0.95, why);
    }
    if script_runs_node_test(script) {
        return (Some(Framework::NodeTest), 0.9, vec![format!("scripts.test: `{script}`")]);
    }
    match declared.as_slice() {
        [only] => return (Some(*only), 0.8, vec![dep_marker(*only)]),
        [first, rest @ ..] => {
            let others: Vec<&str> = rest.iter().map(|f| f.label()).collect();
            return (
                Some(*first),
                0.6,
                vec![
                    dep_marker(*first),
                    format!(
                        "also depends on {}; the test script names none, so {} wins by preference (vitest, jest, \
                         mocha) — set `framework` to choose",
                        others.join(", "),
                        first.label()
                    ),
                ],
            );
        }
        [] => {}
    }
    if let Some(file) = node_test_file(files) {
        return (Some(Framework::NodeTest), 0.7, vec![format!("{file} imports node:test")]);
    }
    (None, 0.3, Vec::new())
}

/// True when the `test` script, read step by step, calls a test framework itself (not only
/// another tool that runs the members' scripts).
fn script_runs_a_framework(manifest: &Manifest) -> bool {
    let Some(steps) = manifest.script("test").and_then(|text| script::steps(text, &manifest.scripts)) else {
        return false;
    };
    let all = [Framework::Jest, Framework::Vitest, Framework::Mocha, Framework::NodeTest];
    steps.iter().any(|step| all.iter().any(|f| framework_args(&step.words, *f).is_some()))
}

/// True when one of the script's commands is `node ... --test ...`.
fn script_runs_node_test(script: &str) -> bool {
    script.split(['&', '|', ';']).any(|command| {
        let words: Vec<&str> =
            command.split_whitespace().skip_while(|w| w.contains('=') && !w.starts_with('-')).collect();
        words.first().is_some_and(|w| *w == "node" || w.ends_with("/node")) && words.contains(&"--test")
    })
}

/// A test file that uses the built-in runner (looked for only when no framework is declared).
fn node_test_file(files: &ProjectFiles) -> Option<String> {
    const GLOBS: &[&str] = &[
        "**/*.test.{js,mjs,cjs,ts,mts}",
        "**/*.spec.{js,mjs,cjs,ts,mts}",
        "**/*_test.{js,mjs,cjs}",
        "test/**/*.{js,mjs,cjs}",
        "tests/**/*.{js,mjs,cjs}",
    ];
    let mut seen = 0;
    for glob in GLOBS {
        for file in files.matching(glob) {
            seen += 1;
            if seen > 50 {
                return None;
            }
            if files.read(file).is_some_and(|text| text.contains("node:test")) {
                return Some(file.to_string());
            }
        }
    }
    None
}

/// The package manager and the evidence for it.
struct PackageManager {
    name: &'static str,
    /// The lockfile it installs from, if any.
    lockfile: Option<&'static str>,
    markers: Vec<String>,
    /// Run through `corepack`: package.json pins the tool (`packageManager`) and it is not on
    /// PATH, but Node's corepack is, and fetches exactly the pinned version.
    via_corepack: bool,
    /// The tool on PATH is another version than `packageManager` pins: what will happen, and how
    /// to get the pinned one. Shown as a marker and as the install phase's note.
    version_warning: Option<String>,
}

impl PackageManager {
    /// `pnpm ARGS`, or `corepack pnpm ARGS` when the tool comes from corepack.
    fn command(&self, args: &[&str], root: &Path) -> CommandSpec {
        if !self.via_corepack {
            return CommandSpec::new(self.name, args, root);
        }
        let mut spec = CommandSpec::new("corepack", &[&[self.name], args].concat(), root);
        // CI has no stdin to answer corepack's "download pnpm?" prompt.
        spec.env.push(("COREPACK_ENABLE_DOWNLOAD_PROMPT".into(), "0".into()));
        spec
    }
}

/// `packageManager` first (corepack's field), then the lockfile; npm when there is neither.
///
/// A pnpm or yarn project whose tool is missing keeps that tool: installing with npm would ignore
/// its lockfile and test other dependency versions than the project pins. When package.json pins
/// it (`"packageManager": "pnpm@9.15.9"`) and corepack (shipped with Node) is on PATH, corepack
/// runs that exact version; otherwise the install fails as "tool missing", and the marker says what
/// to install.
fn package_manager(files: &ProjectFiles, manifest: Option<&Manifest>) -> PackageManager {
    let declared = manifest.and_then(|m| m.package_manager.as_deref());
    let from_field = declared.and_then(|d| ["pnpm", "yarn", "npm"].into_iter().find(|pm| d.starts_with(pm)));
    let locks: [(&'static str, &'static str); 4] = [
        ("pnpm", "pnpm-lock.yaml"),
        ("yarn", "yarn.lock"),
        ("npm", "package-lock.json"),
        ("npm", "npm-shrinkwrap.json"),
    ];
    let mut markers = Vec::new();
    let (name, lockfile) = match from_field {
        Some(pm) => {
            markers.push(format!("packageManager: {}", declared.unwrap_or(pm)));
            (pm, locks.iter().find(|(n, f)| *n == pm && files.has(f)).map(|(_, f)| *f))
        }
        None => match locks.iter().find(|(_, f)| files.has(f)) {
            Some((pm, file)) => (*pm, Some(*file)),
            None => ("npm", None),
        },
    };
    match lockfile {
        Some(file) => markers.push(file.to_string()),
        None => markers.push("no lockfile".into()),
    }
    if name != "npm" && find_on_path(name).is_none() {
        if from_field.is_some()
            && let Some(pinned) = declared.filter(|d| d.contains('@'))
            && find_on_path("corepack").is_some()
        {
            markers.push(format!("{pinned} through corepack ({name} is not on PATH)"));
            return PackageManager { name, lockfile, markers, via_corepack: true, version_warning: None };
        }
        markers.push(format!(
            "{name} is not on PATH: install it (`corepack enable {name}` or `npm install -g {name}`); npm would ignore \
             the {name} lockfile"
        ));
        return PackageManager { name, lockfile, markers, via_corepack: false, version_warning: None };
    }
    // Checked only with the manifest read (not for the quick package-manager guess).
    let version_warning = declared
        .filter(|_| from_field.is_some() && manifest.is_some())
        .and_then(|d| version_mismatch(name, d, &files.root));
    markers.extend(version_warning.clone());
    PackageManager { name, lockfile, markers, via_corepack: false, version_warning }
}

/// When `packageManager` pins a version (`pnpm@9.15.9`, maybe `+sha512...`) and the tool on PATH
/// reports another: a warning naming both. A corepack shim on PATH runs the pinned version and
/// reports it, so it never warns.
fn version_mismatch(name: &str, declared: &str, root: &Path) -> Option<String> {
    let pinned = declared.split_once('@')?.1.split('+').next()?.trim();
    if pinned.is_empty() {
        return None;
    }
    let found = tool_version(name, root)?;
    (found != pinned).then(|| {
        format!(
            "package.json pins {name}@{pinned} (packageManager) but the {name} on PATH is {found}: installing with \
             {found}; run `corepack enable {name}` to use {pinned}"
        )
    })
}

/// What `program --version` prints (its last line that looks like a version), asked once per
/// program and directory: detection and planning both want it.
fn tool_version(program: &str, root: &Path) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    /// (program, directory) → what it reported.
    type Versions = HashMap<(String, PathBuf), Option<String>>;
    static SEEN: OnceLock<Mutex<Versions>> = OnceLock::new();
    let key = (program.to_string(), root.to_path_buf());
    let seen = SEEN.get_or_init(Default::default);
    if let Some(known) = seen.lock().ok().and_then(|map| map.get(&key).cloned()) {
        return known;
    }
    let mut spec = CommandSpec::new(program, &["--version"], root);
    // Without this, a corepack shim may stop to ask whether to download the pinned version.
    spec.env.push(("COREPACK_ENABLE_DOWNLOAD_PROMPT".into(), "0".into()));
    let timeout = std::time::Duration::from_secs(30);
    let outcome = process::run(&spec, timeout, process::DEFAULT_GRACE, &process::null_log());
    let version = (outcome.exit == Exit::Code(0))
        .then(|| {
            outcome
                .output
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.split('.').count() >= 3 && l.chars().next().is_some_and(|c| c.is_ascii_digit()))
                .map(str::to_string)
        })
        .flatten();
    if let Ok(mut map) = seen.lock() {
        map.insert(key, version.clone());
    }
    version
}

/// The install: at the workspace root for a member (one install serves every member, from the
/// root's lockfile), else at the project's root.
fn install_phase(
    ctx: &PlanContext<'_>,
    workspace: Option<&WorkspaceRoot>,
    manifest: &Manifest,
    pm: &PackageManager,
) -> PhasePlan {
    if !ctx.install {
        return PhasePlan::skipped(PhaseKind::Install, "--no-install");
    }
    // A workspace's other members may need what this one does not declare.
    if manifest.deps.is_empty() && workspace.is_none() {
        return PhasePlan::skipped(PhaseKind::Install, "package.json declares no dependencies");
    }
    let root = workspace.map_or(ctx.root, |w| w.files.root.as_path());
    let pending = pending_install_marker(ctx.cache_dir, root);
    if let Some(reason) = up_to_date(root, pm).filter(|_| !pending.exists()) {
        return PhasePlan::skipped(PhaseKind::Install, reason);
    }
    // `--prefer-offline`: packages already in the package manager's own store (npm's cache,
    // pnpm's content-addressed store, yarn's cache) are used without asking the registry again,
    // so a fresh checkout with a warm store (CI restores it with actions/cache) installs offline.
    // The lockfile still pins every version and integrity hash.
    let args: &[&str] = match (pm.name, pm.lockfile) {
        ("pnpm", Some(_)) => &["install", "--frozen-lockfile", "--prefer-offline"],
        ("pnpm", None) => &["install", "--prefer-offline"],
        ("yarn", Some(_)) => &["install", "--frozen-lockfile", "--prefer-offline"],
        ("yarn", None) => &["install", "--prefer-offline"],
        (_, Some(_)) => &["ci", "--no-audit", "--no-fund", "--prefer-offline"],
        (_, None) => &["install", "--no-audit", "--no-fund", "--prefer-offline"],
    };
    // An interrupted or failed install can leave the package manager's record newer than the
    // lockfile over a broken node_modules; the marker (outside node_modules, which `npm ci`
    // deletes first) stays until an install passes, so the next run installs again.
    PhasePlan::run(PhaseKind::Install, vec![pm.command(args, root)])
        .with_pending_marker(pending)
        .with_note(pm.version_warning.clone())
}

/// Where the "install in progress" marker of the project at `root` lives.
fn pending_install_marker(cache_dir: &Path, root: &Path) -> PathBuf {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let digest = sha2::Sha256::digest(root.to_string_lossy().as_bytes());
    let name: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    cache_dir.join("node-installs").join(format!("{name}.pending"))
}

/// Why installing again is unnecessary: the package manager's record in `node_modules` is newer
/// than both the lockfile and `package.json`.
fn up_to_date(root: &Path, pm: &PackageManager) -> Option<String> {
    let record = match pm.name {
        "pnpm" => "node_modules/.modules.yaml",
        "yarn" => "node_modules/.yarn-integrity",
        _ => "node_modules/.package-lock.json",
    };
    let record_path = root.join(record);
    let installed =
        modified(&record_path).or_else(|| modified(&root.join("node_modules")).filter(|_| pm.name == "yarn"))?;
    let mut sources = vec!["package.json"];
    sources.extend(pm.lockfile);
    for source in &sources {
        if modified(&root.join(source)).is_none_or(|t| t > installed) {
            return None;
        }
    }
    Some(format!("dependencies up to date ({record} is newer than {})", sources.join(" and ")))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The build phase with, under `run-script-steps = true`, the test script's steps before its
/// framework.
fn with_script_steps(ctx: &PlanContext<'_>, mut phase: PhasePlan, script: &ScriptPlan) -> PhasePlan {
    if ctx.run_script_steps && !script.before.is_empty() {
        // `run-script-steps = true`: the steps the test script runs before its framework (lint,
        // type check) are build work; a failing one stops the suite as a build failure would.
        let mut commands = std::mem::take(&mut phase.commands);
        commands.extend(script.before.iter().map(|step| script_step_command(ctx.root, step)));
        phase = PhasePlan::run(PhaseKind::Build, commands);
    }
    phase
}

/// The build phase on its own: the project's build script when the tests need it (or `build =
/// true`), else what a build checks without producing anything (`tsc --noEmit`).
fn build_phase_alone(
    ctx: &PlanContext<'_>,
    manifest: &Manifest,
    pm: &PackageManager,
    test_script: &ScriptPlan,
) -> PhasePlan {
    let script = build::build_script(manifest);
    if let Some(name) = script {
        let why = match ctx.build_script {
            Some(true) => Some("`build = true` in fcorr.toml".to_string()),
            Some(false) => None,
            None => build::tests_need_build(ctx.files, manifest, name, test_script)
                .map(|why| format!("the tests need its output: {why}")),
        };
        if let Some(why) = why {
            return PhasePlan::run(PhaseKind::Build, vec![pm.command(&["run", name], ctx.root)])
                .with_note(Some(format!("runs the `{name}` script: {why}")));
        }
    }
    let not_run = script.map(|name| match ctx.build_script {
        Some(false) => format!("the `{name}` script is not run (`build = false`)"),
        _ => format!("the `{name}` script is not run: the tests do not need its output (`build = true` runs it)"),
    });
    let with_not_run = |text: &str| match &not_run {
        Some(n) => format!("{n}; {text}"),
        None => text.to_string(),
    };
    if test_script.runs.iter().any(|r| r.args.iter().any(|a| a == "--typecheck" || a.starts_with("--typecheck."))) {
        // The project type-checks through its tests: a type error is a failing type test there,
        // not a build failure fcorr would invent with its own `tsc --noEmit`.
        return PhasePlan::skipped(
            PhaseKind::Build,
            with_not_run("`vitest --typecheck` in scripts.test type-checks the tests (reported as tests)"),
        );
    }
    // The project's own type check, when its test script runs one before the tests (`pnpm
    // test:types` → `tsgo --noEmit`): it checks what the project means by a build that type-checks,
    // with the project's tool, and the native test command spends that time too.
    if let Some(step) = test_script.before.iter().find(|step| build::is_type_check(&step.words)) {
        return PhasePlan::run(PhaseKind::Build, vec![script_step_command(ctx.root, step)])
            .with_note(Some(with_not_run(&format!("type check only: the test script's own `{}`", step.text))))
            .alongside_tests();
    }
    if ctx.files.has("tsconfig.json") {
        // tsgo (TypeScript's native port) when the project uses it: the same check, much faster.
        let checker = ["tsgo", "tsc"].into_iter().find(|tool| {
            let package = if *tool == "tsgo" { "@typescript/native-preview" } else { "typescript" };
            manifest.dep(package).is_some() || installed(ctx.root, package)
        });
        if let Some(checker) = checker {
            // What a TypeScript build checks, without writing its output.
            return PhasePlan::run(
                PhaseKind::Build,
                vec![CommandSpec::new("npx", &["--no-install", checker, "--noEmit"], ctx.root)],
            )
            .with_note(not_run.map(|n| format!("{n}; type check only")))
            .alongside_tests();
        }
        return PhasePlan::skipped(
            PhaseKind::Build,
            with_not_run("tsconfig.json exists but typescript is not a dependency: no type check"),
        );
    }
    match not_run {
        Some(n) => PhasePlan::skipped(PhaseKind::Build, format!("{n}; no tsconfig.json to type-check")),
        None => PhasePlan::skipped(PhaseKind::Build, "no build, compile or tsc script and no tsconfig.json"),
    }
}

/// True when `node_modules/<name>` exists in `root` or a directory above it, where node's module
/// resolution (and a workspace's hoisting) would find it.
fn installed(root: &Path, name: &str) -> bool {
    root.ancestors().take(8).any(|dir| dir.join("node_modules").join(name).is_dir())
}

/// A script step run as the package manager would: through `sh`, with `node_modules/.bin` first
/// on `PATH`.
fn script_step_command(root: &Path, step: &script::Step) -> CommandSpec {
    let mut command = CommandSpec::shell(&step.text, root);
    let bin = root.join("node_modules/.bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let joined = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path)))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| path.to_string_lossy().into_owned());
    command.env.push(("PATH".into(), joined));
    command
}

/// What the `test` script runs, read step by step.
#[derive(Debug, Default)]
struct ScriptPlan {
    /// Each invocation of the framework: its environment and arguments (fcorr's flags removed).
    runs: Vec<FrameworkRun>,
    /// Steps before the first framework invocation (lint, tsc...).
    before: Vec<script::Step>,
    /// Other steps after it (coverage upload...).
    after: Vec<script::Step>,
    /// Why the script is not replayed, when it is not.
    unreadable: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
struct FrameworkRun {
    env: Vec<(String, String)>,
    args: Vec<String>,
    /// The invocation as a person reads it (`jest --env edge-runtime`), naming its case group.
    label: String,
}

impl ScriptPlan {
    fn read(manifest: &Manifest, framework: Framework) -> ScriptPlan {
        let Some(text) = manifest.script("test").filter(|t| !t.trim().is_empty()) else {
            return ScriptPlan::default();
        };
        let Some(steps) = script::steps(text, &manifest.scripts) else {
            return ScriptPlan {
                unreadable: Some(format!(
                    "scripts.test `{text}` uses pipes, redirections or substitutions fcorr does not replay; {} runs \
                     with its defaults — set `commands.test` and `reports` to run it exactly",
                    framework.label()
                )),
                ..ScriptPlan::default()
            };
        };
        let mut plan = ScriptPlan::default();
        for step in steps {
            match framework_args(&step.words, framework) {
                Some(args) => {
                    let label = std::iter::once(framework.label().to_string())
                        .chain(args.iter().map(|a| crate::execute::process::shell_quote(a)))
                        .collect::<Vec<_>>()
                        .join(" ");
                    plan.runs.push(FrameworkRun { env: step.env, args, label });
                }
                None if plan.runs.is_empty() => plan.before.push(step),
                None => plan.after.push(step),
            }
        }
        if plan.runs.is_empty() {
            plan.unreadable = Some(format!(
                "scripts.test `{text}` does not call {} directly; it runs with its defaults",
                framework.label()
            ));
            plan.before.clear();
            plan.after.clear();
        }
        plan
    }

    /// The note on the test phase: steps not run, several runs, a script not replayed.
    fn note(&self, run_steps: bool) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(why) = &self.unreadable {
            parts.push(why.clone());
        }
        let quoted = |steps: &[script::Step]| steps.iter().map(|s| format!("`{}`", s.text)).collect::<Vec<_>>();
        if !self.before.is_empty() && !run_steps {
            parts.push(format!(
                "skipped script step(s) {} (set `run-script-steps = true` to run them in the build phase)",
                quoted(&self.before).join(", ")
            ));
        }
        if !self.after.is_empty() {
            parts.push(format!("skipped script step(s) after the tests: {}", quoted(&self.after).join(", ")));
        }
        if self.runs.len() > 1 {
            let labels: Vec<String> = self.runs.iter().map(|r| format!("[{}]", r.label)).collect();
            parts.push(format!(
                "scripts.test runs {} {} times; each run's cases are a group named {}",
                self.runs.first().map(|r| r.label.split(' ').next().unwrap_or_default()).unwrap_or_default(),
                self.runs.len(),
                labels.join(", ")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// The file in the work directory naming each framework run's report and case group.
const GROUPS_FILE: &str = "fcorr-node-runs.json";

fn test_phase(ctx: &PlanContext<'_>, framework: Framework, script: &ScriptPlan) -> Result<PhasePlan, NodePlanError> {
    let default_run = [FrameworkRun { env: Vec::new(), args: Vec::new(), label: framework.label().into() }];
    let runs: &[FrameworkRun] = if script.runs.is_empty() { &default_run } else { &script.runs };
    let mut commands = Vec::new();
    let mut reports = Vec::new();
    let mut groups = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        // One run keeps the historical report name; several get one report each.
        let suffix = if runs.len() == 1 { String::new() } else { format!("-{}", i + 1) };
        let (mut command, report) = framework_command(ctx, framework, &run.args, &suffix)?;
        command.env.extend(run.env.iter().cloned());
        // A report left by an earlier run in a reused output directory must not pass for this one's.
        if let Err(source) = std::fs::remove_file(&report.pattern)
            && source.kind() != std::io::ErrorKind::NotFound
        {
            return Err(NodePlanError::StaleReport { path: PathBuf::from(&report.pattern), source });
        }
        groups.push(serde_json::json!({ "report": report.pattern, "label": run.label }));
        commands.push(command);
        reports.push(report);
    }
    let groups_path = ctx.work_dir.join(GROUPS_FILE);
    let text = if runs.len() > 1 { serde_json::Value::Array(groups).to_string() } else { "[]".into() };
    std::fs::write(&groups_path, text).map_err(|source| NodePlanError::Write { path: groups_path, source })?;
    Ok(PhasePlan::run(PhaseKind::Test, commands).with_reports(reports).with_note(script.note(ctx.run_script_steps)))
}

/// The command running the framework once with fcorr's reporter flags, and its report.
fn framework_command(
    ctx: &PlanContext<'_>,
    framework: Framework,
    user: &[String],
    suffix: &str,
) -> Result<(CommandSpec, ReportSpec), NodePlanError> {
    let user: Vec<&str> = user.iter().map(String::as_str).collect();
    let work = ctx.work_dir;
    Ok(match framework {
        Framework::Jest => {
            let out = work.join(format!("jest{suffix}.json"));
            let out_flag = format!("--outputFile={}", out.display());
            let mut args = vec!["--no-install", "jest"];
            args.extend(&user);
            args.extend(["--ci", "--json", "--testLocationInResults", out_flag.as_str()]);
            (CommandSpec::new("npx", &args, ctx.root), ReportSpec::file(&out, crate::collect::jest_json::NAME))
        }
        Framework::Vitest => {
            let out = work.join(format!("vitest{suffix}.json"));
            let out_flag = format!("--outputFile.json={}", out.display());
            let mut args = vec!["--no-install", "vitest", "run"];
            args.extend(&user);
            if !user.iter().any(|a| a.starts_with("--reporter")) {
                // Keep the usual console output in the log next to the JSON file.
                args.push("--reporter=default");
            }
            args.extend(["--reporter=json", out_flag.as_str()]);
            // `--includeTaskLocation` depends on the installed vitest: added by `refine_phase`.
            (CommandSpec::new("npx", &args, ctx.root), ReportSpec::file(&out, crate::collect::jest_json::NAME))
        }
        Framework::Mocha => {
            let out = work.join(format!("mocha{suffix}.json"));
            let reporter = work.join("fcorr-mocha-reporter.cjs");
            if let Err(source) = std::fs::write(&reporter, MOCHA_REPORTER) {
                return Err(NodePlanError::Write { path: reporter, source });
            }
            let reporter = reporter.display().to_string();
            let output = format!("output={}", out.display());
            let mut args = vec!["--no-install", "mocha"];
            args.extend(&user);
            args.extend(["--reporter", reporter.as_str(), "--reporter-option", output.as_str()]);
            (CommandSpec::new("npx", &args, ctx.root), ReportSpec::file(&out, crate::collect::mocha_json::NAME))
        }
        Framework::NodeTest => {
            let out = work.join(format!("node-test{suffix}.xml"));
            let destination = format!("--test-reporter-destination={}", out.display());
            let reporter = work.join(locations::REPORTER_FILE);
            if let Err(source) = std::fs::write(&reporter, locations::REPORTER) {
                return Err(NodePlanError::Write { path: reporter, source });
            }
            let sidecar = work.join(locations::REPORT);
            if let Err(source) = std::fs::remove_file(&sidecar)
                && source.kind() != std::io::ErrorKind::NotFound
            {
                return Err(NodePlanError::StaleReport { path: sidecar, source });
            }
            let locations_reporter = format!("--test-reporter={}", reporter.display());
            let locations_destination = format!("--test-reporter-destination={}", sidecar.display());
            // Node options must come before file arguments, or they are passed to the tests.
            let mut args = vec![
                "--test",
                "--test-reporter=spec",
                "--test-reporter-destination=stdout",
                "--test-reporter=junit",
                destination.as_str(),
                locations_reporter.as_str(),
                locations_destination.as_str(),
            ];
            args.extend(&user);
            (CommandSpec::new("node", &args, ctx.root), ReportSpec::file(&out, crate::collect::junit::NODE_NAME))
        }
    })
}

/// Adds vitest's `--includeTaskLocation` to fcorr's own vitest commands when the vitest installed
/// now (after the install phase) is 3 or newer; older versions reject the flag.
fn add_task_location(root: &Path, phase: &mut PhasePlan) {
    let ours = |c: &CommandSpec| {
        c.program == "npx"
            && c.args.get(1).is_some_and(|a| a == "vitest")
            && c.args.iter().any(|a| a.starts_with("--outputFile.json="))
            && !c.args.iter().any(|a| a == "--includeTaskLocation")
    };
    if !phase.commands.iter().any(ours) || package_major(root, "vitest").is_none_or(|major| major < 3) {
        return;
    }
    for command in phase.commands.iter_mut().filter(|c| ours(c)) {
        command.args.push("--includeTaskLocation".into());
    }
}

/// Makes fcorr's own `tsc --noEmit` incremental, its state kept in `node_modules/.cache/fcorr`
/// (beside the dependencies, so a CI cache that restores them restores it): tsc then re-checks
/// only what changed since the last run, and reports the same errors. TypeScript 4.0 and later
/// accept `--incremental` with `--noEmit`; older ones, or no `node_modules` to keep it in, run
/// the full check.
fn add_incremental(root: &Path, phase: &mut PhasePlan) {
    const CHECK: [&str; 3] = ["--no-install", "tsc", "--noEmit"];
    let ours = |c: &CommandSpec| c.program == "npx" && c.args == CHECK;
    if !phase.alongside_tests || !phase.commands.iter().any(ours) {
        return;
    }
    let Some(modules) = root.ancestors().take(8).map(|d| d.join("node_modules")).find(|d| d.is_dir()) else {
        return;
    };
    if package_major(root, "typescript").is_none_or(|major| major < 4) {
        return;
    }
    let info = modules.join(".cache/fcorr/tsc.tsbuildinfo").to_string_lossy().into_owned();
    for command in phase.commands.iter_mut().filter(|c| ours(c)) {
        command.args.extend(["--incremental".to_string(), "--tsBuildInfoFile".to_string(), info.clone()]);
    }
}

/// Case groups of a script that runs the framework several times: report path → label.
fn read_groups(work_dir: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(work_dir.join(GROUPS_FILE)) else { return Vec::new() };
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&text) else { return Vec::new() };
    items
        .iter()
        .filter_map(|g| Some((g.get("report")?.as_str()?.to_string(), g.get("label")?.as_str()?.to_string())))
        .collect()
}

/// Collects each run's report on its own and names its cases `[label] name`, so the same test run
/// twice (`jest && jest --env edge-runtime`) is two cases with two stable ids, not one overwritten.
fn collect_groups(ctx: &CollectContext<'_>, groups: &[(String, String)]) -> Collected {
    let mut all = Collected::nothing();
    let mut files = Vec::new();
    let mut formats: Vec<String> = Vec::new();
    for spec in ctx.reports {
        let one = std::slice::from_ref(spec);
        let mut collected = super::collect_reports(&CollectContext { reports: one, ..*ctx });
        if let Some((_, label)) = groups.iter().find(|(report, _)| *report == spec.pattern) {
            for case in &mut collected.cases {
                case.name = format!("[{label}] {}", case.name);
            }
        }
        all.ran |= collected.ran;
        all.cases.extend(collected.cases);
        all.diagnostics.extend(collected.diagnostics);
        if let crate::model::ResultsSource::Report { format, files: f } = collected.source {
            if !formats.contains(&format) {
                formats.push(format);
            }
            files.extend(f);
        }
    }
    if !files.is_empty() {
        all.source = crate::model::ResultsSource::Report { format: formats.join("+"), files };
    }
    all
}

/// package.json's `engines` refused by the package manager: npm (`engine-strict`) prints
/// `notsup Required: {"node":">=22"}` / `notsup Actual: {"node":"v20.20.2",...}`, pnpm
/// (`engine-strict`) `Your Node version is incompatible...` / `Expected version: >=22` / `Got:
/// v20.20.2`, yarn 1 `The engine "node" is incompatible with this module. Expected version
/// ">=22". Got "20.20.2"`.
fn engines_rejection(output: &str) -> Option<String> {
    let say = |tool: &str, required: &str, found: &str| {
        format!("the project requires {tool} {required} (package.json `engines`), found {tool} {found}")
    };
    let after = |line: &str, marker: &str| line.find(marker).map(|i| line[i + marker.len()..].trim().to_string());
    let lines: Vec<&str> = output.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        // npm: one entry per engine the project names.
        if let Some(required) = after(line, "notsup Required:") {
            let actual = lines[i + 1..].iter().find_map(|l| after(l, "notsup Actual:")).unwrap_or_default();
            let required: serde_json::Map<String, Value> = serde_json::from_str(&required).ok()?;
            let actual: serde_json::Map<String, Value> = serde_json::from_str(&actual).unwrap_or_default();
            let parts: Vec<String> = required
                .iter()
                .map(|(tool, range)| {
                    let found = actual.get(tool).and_then(Value::as_str).unwrap_or("none");
                    say(tool, range.as_str().unwrap_or("?"), found)
                })
                .collect();
            return Some(parts.join("; "));
        }
        // pnpm
        if let Some(rest) = after(line, "Your ")
            && let Some((tool, _)) = rest.split_once(" version is incompatible with ")
        {
            let expected = lines[i + 1..].iter().find_map(|l| l.strip_prefix("Expected version:"))?;
            let got = lines[i + 1..].iter().find_map(|l| l.strip_prefix("Got:")).unwrap_or("unknown");
            return Some(say(tool, expected.trim(), got.trim()));
        }
        // yarn 1
        if let Some(rest) = after(line, "The engine \"")
            && let Some((tool, rest)) = rest.split_once('"')
            && rest.contains("is incompatible")
        {
            let quoted: Vec<&str> = rest.split('"').skip(1).step_by(2).collect();
            if let [expected, got, ..] = quoted.as_slice() {
                return Some(say(tool, expected, got));
            }
        }
    }
    None
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

/// The arguments of one script step that calls the framework, without the flags fcorr sets
/// itself; `None` when the step runs something else. `npx jest`, `pnpm exec jest` and `yarn jest`
/// count as calling jest.
fn framework_args(words: &[String], framework: Framework) -> Option<Vec<String>> {
    let mut words: Vec<String> = words.to_vec();
    let launcher = match words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["npx", "--no-install" | "--no", ..] => 2,
        ["pnpm" | "yarn", "exec", ..] | ["npm", "exec" | "x", ..] => 2,
        // `pnpm vitest run` runs the binary when no script has that name (script references
        // were expanded before this).
        ["npx", ..] | ["yarn", ..] | ["pnpm", ..] => 1,
        _ => 0,
    };
    words.drain(..launcher);
    let first = words.first()?.clone();
    let bin = first.rsplit('/').next().unwrap_or(&first).to_string();
    let rest: Vec<String> = words[1..].to_vec();
    let (rest, drop_flags, value_flags): (Vec<String>, &[&str], &[&str]) = match framework {
        Framework::Jest if bin == "jest" => (rest, &["--watch", "--watchAll", "--json", "--ci"], &["--outputFile"]),
        Framework::Vitest if bin == "vitest" => {
            let rest = match rest.first().map(String::as_str) {
                Some("run" | "watch" | "dev") => rest[1..].to_vec(),
                _ => rest,
            };
            (rest, &["--watch", "-w", "--run", "--includeTaskLocation"], &["--outputFile", "--outputFile.json"])
        }
        Framework::Mocha if bin == "mocha" => {
            (rest, &["--watch", "-w"], &["--reporter", "-R", "--reporter-option", "--reporter-options", "-O"])
        }
        Framework::NodeTest if bin == "node" && rest.iter().any(|w| w == "--test") => {
            (rest, &["--test", "--watch"], &["--test-reporter", "--test-reporter-destination"])
        }
        _ => return None,
    };
    let mut kept = Vec::new();
    let mut skip_value = false;
    for word in rest {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if drop_flags.contains(&word.as_str()) {
            continue;
        }
        if let Some(flag) = value_flags.iter().find(|f| word == **f || word.starts_with(&format!("{f}="))) {
            skip_value = word == *flag;
            continue;
        }
        kept.push(word);
    }
    Some(kept)
}

/// `file(line,col): error TSxxxx: message` lines from tsc.
fn tsc_diagnostics(output: &str, root: &Path) -> Vec<Diagnostic> {
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        // The pattern is a literal; it compiles.
        regex::Regex::new(r"(?m)^\s*(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.+?)\s*$").expect("valid regex")
    });
    pattern
        .captures_iter(output)
        .take(50)
        .map(|c| Diagnostic {
            severity: if &c[4] == "warning" { Severity::Warning } else { Severity::Error },
            source: "build".into(),
            message: format!("{}: {}", &c[5], &c[6]),
            file: Some(relativize(&c[1], Some(root))),
            line: c[2].parse().ok(),
            column: c[3].parse().ok(),
        })
        .collect()
}

/// A mocha reporter that writes mocha's JSON layout plus each test's `titlePath` and `type`, and
/// prints one line per test so the log still shows progress.
const MOCHA_REPORTER: &str = r#"'use strict';
// Written by fcorr. Mocha's JSON reporter layout plus `titlePath` (the describe path, which mocha's
// own JSON flattens into a space-joined `fullTitle`) and `type` (hook failures are not tests).
const fs = require('fs');

function FcorrMochaJson(runner, options) {
  const opts = (options && (options.reporterOption || options.reporterOptions)) || {};
  const tests = [], passes = [], failures = [], pending = [];
  const errors = new Map();
  const started = new Date();
  let suites = 0;
  const call = (obj, fn, fallback) => (typeof obj[fn] === 'function' ? obj[fn]() : fallback);
  const clean = (t) => {
    const err = errors.get(t);
    return {
      title: t.title,
      fullTitle: call(t, 'fullTitle', t.title),
      titlePath: call(t, 'titlePath', [t.title]),
      file: t.file,
      duration: t.duration,
      currentRetry: call(t, 'currentRetry', 0),
      type: t.type,
      err: err ? { name: err.name, message: String(err.message === undefined ? err : err.message),
                   stack: String(err.stack || '') } : {},
    };
  };
  const log = (mark, t) => { if (opts.output) process.stdout.write(`  ${mark} ${call(t, 'titlePath', [t.title]).join(' > ')}\n`); };
  runner.on('suite', (s) => { if (!s.root) suites += 1; });
  runner.on('pass', (t) => { passes.push(t); log('ok  ', t); });
  runner.on('fail', (t, err) => { errors.set(t, err); failures.push(t); log('FAIL', t); if (err && err.stack && opts.output) process.stdout.write(String(err.stack).replace(/^/gm, '       ') + '\n'); });
  runner.on('pending', (t) => { pending.push(t); log('skip', t); });
  runner.on('test end', (t) => { tests.push(t); });
  runner.once('end', () => {
    const ended = new Date();
    const report = {
      stats: { suites, tests: tests.length, passes: passes.length, pending: pending.length, failures: failures.length,
               start: started.toISOString(), end: ended.toISOString(), duration: ended - started },
      tests: tests.map(clean), pending: pending.map(clean), failures: failures.map(clean), passes: passes.map(clean),
    };
    const text = JSON.stringify(report, null, 2);
    if (opts.output) { fs.writeFileSync(opts.output, text); } else { process.stdout.write(text + '\n'); }
  });
}

module.exports = FcorrMochaJson;
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// What planning a project at `dir` with `package.json` text `manifest` and `framework` says
    /// when it fails, with the suite's work directory `work`.
    fn plan_error(manifest: &str, framework: &str, work: &Path) -> String {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("package.json"), manifest).unwrap();
        let files = ProjectFiles::scan(dir.path()).unwrap();
        let mut detection = Node.detect(&files, Some("jest")).unwrap().detection;
        detection.framework = framework.into();
        let ctx = PlanContext {
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
        let error = Node.plan(&ctx).unwrap_err();
        error.to_string().replace(&dir.path().display().to_string(), "<root>")
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

    fn script_args(script: &str, framework: Framework) -> Option<Vec<String>> {
        let manifest = Manifest::parse(&serde_json::json!({ "scripts": { "test": script } }).to_string()).unwrap();
        let plan = ScriptPlan::read(&manifest, framework);
        match plan.runs.as_slice() {
            [only] if plan.before.is_empty() && plan.after.is_empty() => Some(only.args.clone()),
            _ => None,
        }
    }

    #[test]
    fn script_args_keep_extra_flags_and_drop_conflicting_ones() {
        let jest = script_args("NODE_ENV=test jest --runInBand --outputFile out.json --watch src", Framework::Jest);
        assert_eq!(jest.unwrap(), ["--runInBand", "src"]);
        let vitest = script_args("vitest run --reporter=verbose --dir 'my tests'", Framework::Vitest);
        assert_eq!(vitest.unwrap(), ["--reporter=verbose", "--dir", "my tests"]);
        assert_eq!(script_args("node --test dist/", Framework::NodeTest).unwrap(), ["dist/"]);
        assert_eq!(script_args("mocha -R spec 'test/**/*.js'", Framework::Mocha).unwrap(), ["test/**/*.js"]);
        assert_eq!(script_args("npx jest --ci -i", Framework::Jest).unwrap(), ["-i"]);
        assert_eq!(script_args("pnpm exec vitest --typecheck", Framework::Vitest).unwrap(), ["--typecheck"]);
        assert_eq!(script_args("pnpm vitest run --typecheck", Framework::Vitest).unwrap(), ["--typecheck"]);
        assert_eq!(script_args("npm exec jest", Framework::Jest).unwrap(), Vec::<String>::new());
        assert_eq!(script_args("npm run lint && jest", Framework::Jest), None);
        assert_eq!(script_args("react-scripts test", Framework::Jest), None);
        assert_eq!(script_args("jest 'unclosed", Framework::Jest), None);
        assert!(script_runs_node_test("tsc && NODE_ENV=test node --enable-source-maps --test dist/"));
        assert!(!script_runs_node_test("jest --test-path-pattern x"));
    }

    #[test]
    fn and_scripts_keep_the_framework_flags_and_name_the_skipped_steps() {
        let manifest = Manifest::parse(
            r#"{"scripts":{"lint":"eslint .","test":"pnpm lint && NODE_OPTIONS=--no-warnings vitest run --typecheck && codecov"}}"#,
        )
        .unwrap();
        let plan = ScriptPlan::read(&manifest, Framework::Vitest);
        assert_eq!(plan.runs.len(), 1);
        assert_eq!(plan.runs[0].args, ["--typecheck"]);
        assert_eq!(plan.runs[0].env, [("NODE_OPTIONS".to_string(), "--no-warnings".to_string())]);
        assert_eq!(plan.before.iter().map(|s| s.text.as_str()).collect::<Vec<_>>(), ["eslint ."]);
        let note = plan.note(false).unwrap();
        assert!(note.contains("skipped script step(s) `eslint .`"), "{note}");
        assert!(note.contains("run-script-steps = true"), "{note}");
        assert!(note.contains("after the tests: `codecov`"), "{note}");
        assert!(!plan.note(true).unwrap().contains("eslint"), "run, so not skipped");
    }

    #[test]
    fn a_script_running_jest_twice_is_two_labelled_runs() {
        let manifest = Manifest::parse(r#"{"scripts":{"test":"jest && jest --env edge-runtime"}}"#).unwrap();
        let plan = ScriptPlan::read(&manifest, Framework::Jest);
        let labels: Vec<&str> = plan.runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["jest", "jest --env edge-runtime"]);
        let note = plan.note(false).unwrap();
        assert!(note.contains("runs jest 2 times"), "{note}");
        let unreadable = Manifest::parse(r#"{"scripts":{"test":"jest | tee log"}}"#).unwrap();
        let plan = ScriptPlan::read(&unreadable, Framework::Jest);
        assert!(plan.runs.is_empty());
        assert!(plan.note(false).unwrap().contains("does not replay"), "{:?}", plan.note(false));
    }

    #[test]
    fn engines_rejections_of_npm_pnpm_and_yarn_name_both_versions() {
        // Real outputs of npm 11 and pnpm 9 (engine-strict) and yarn 1.22 for engines.node ">=99".
        let npm = "npm error code EBADENGINE\nnpm error notsup Not compatible with your version of node/npm: eng@1.0.0\n\
                   npm error notsup Required: {\"node\":\">=99\"}\n\
                   npm error notsup Actual:   {\"node\":\"v20.20.2\",\"npm\":\"11.19.1\"}\n";
        let pnpm = " ERR_PNPM_UNSUPPORTED_ENGINE  Unsupported environment (bad pnpm and/or Node.js version)\n\n\
                    Your Node version is incompatible with \"/tmp/eng\".\n\nExpected version: >=99\nGot: v20.20.2\n";
        let yarn = "error eng@1.0.0: The engine \"node\" is incompatible with this module. Expected version \">=99\". \
                    Got \"20.20.2\"\nerror Found incompatible module.\n";
        let found: Vec<Option<String>> = [npm, pnpm, yarn].into_iter().map(engines_rejection).collect();
        assert_eq!(
            found,
            [
                Some("the project requires node >=99 (package.json `engines`), found node v20.20.2".to_string()),
                Some("the project requires Node >=99 (package.json `engines`), found Node v20.20.2".to_string()),
                Some("the project requires node >=99 (package.json `engines`), found node 20.20.2".to_string()),
            ]
        );
        assert_eq!(engines_rejection("npm error code ERESOLVE\n"), None);
    }

    #[test]
    fn tsc_errors_become_diagnostics_with_relative_paths() {
        let out = "\n> build\n> tsc\n\nsrc/price.ts(8,9): error TS2322: Type 'number' is not assignable to type 'string'.\n\
                   /p/src/a.ts(1,2): error TS1005: ';' expected.\n";
        let d = tsc_diagnostics(out, Path::new("/p"));
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].file.as_deref(), d[0].line, d[0].column), (Some("src/price.ts"), Some(8), Some(9)));
        assert!(d[0].message.starts_with("TS2322: Type 'number'"), "{}", d[0].message);
        assert_eq!(d[1].file.as_deref(), Some("src/a.ts"));
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

    #[test]
    fn malformed_package_json_is_a_problem_with_line_and_column() {
        let (_dir, files) = project(&[("package.json", "{\n  \"a\": 1,\n}\n")]);
        let c = Node.detect(&files, None).unwrap();
        let problem = c.problem.unwrap();
        assert!(problem.contains("package.json: line 3, column 1"), "{problem}");
        assert!(problem.contains("trailing comma"), "{problem}");
    }
}
