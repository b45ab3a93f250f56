//! The build phase of a node project, and whether its tests need its own build script. vitest,
//! jest and mocha (with a loader) compile sources on the fly, so by default the build phase only
//! checks what a build checks (`tsc --noEmit`); the `build` script runs when the tests need what it
//! produces: a `pretest` or `test` script that calls it, tests (or the test command's paths)
//! reaching into the build's output directory, or tests importing the package by its own name
//! while its entry points are build output. `build = true|false` in fcorr.toml decides instead.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::package_manager::PackageManager;
use super::script::{ScriptPlan, Step};
use super::{Manifest, PhasePlan, ProjectContext, ProjectFiles, installed, package_major};
use crate::execute::process::CommandSpec;
use crate::model::PhaseKind;

/// Script names taken as the project's build, in this order.
const BUILD_SCRIPTS: &[&str] = &["build", "compile", "tsc"];
/// Test files read for imports at most (a guard against huge trees).
const MAX_TEST_FILES: usize = 300;
/// Bytes of a test file read for imports at most.
const MAX_TEST_FILE_BYTES: u64 = 512 * 1024;

/// The project's build script, when it has one.
pub(super) fn build_script(manifest: &Manifest) -> Option<&'static str> {
    BUILD_SCRIPTS.iter().copied().find(|s| manifest.script(s).is_some_and(|t| !t.trim().is_empty()))
}

/// Why the tests need what the build script `name` produces; `None` when nothing says they do.
pub(super) fn tests_need_build(
    files: &ProjectFiles,
    manifest: &Manifest,
    name: &str,
    test: &ScriptPlan,
) -> Option<String> {
    let value = &manifest.raw;
    for hook in ["pretest", "test"] {
        if manifest.script(hook).is_some_and(|text| calls_script(text, name)) {
            return Some(format!("the `{hook}` script runs `{name}`"));
        }
    }
    let outputs = output_dirs(files, value);
    if outputs.is_empty() {
        return None;
    }
    let in_output = |path: &str| {
        let path = path.trim_start_matches("./");
        outputs.iter().find(|dir| path == dir.as_str() || path.starts_with(&format!("{dir}/")))
    };
    for arg in test.runs.iter().flat_map(|r| &r.args) {
        if let Some(dir) = in_output(arg) {
            return Some(format!("the test command runs files in `{dir}/`, which `{name}` writes"));
        }
    }
    let own_name = value.get("name").and_then(Value::as_str);
    for file in test_files(files) {
        let Some(text) = read_bounded(&files.root.join(file)) else { continue };
        for spec in import_specifiers(&text) {
            if spec.starts_with('.') {
                let resolved = resolve(file, spec);
                if let Some(dir) = in_output(&resolved) {
                    return Some(format!("{file} imports `{spec}`, in `{dir}/`, which `{name}` writes"));
                }
            } else if own_name.is_some_and(|own| spec == own || spec.starts_with(&format!("{own}/"))) {
                return Some(format!(
                    "{file} imports the package itself (`{spec}`), whose entry points are in `{}/`, which `{name}` \
                     writes",
                    outputs[0]
                ));
            }
        }
    }
    None
}

/// True when a script step is a type check that writes nothing (`tsc --noEmit`, `tsgo --noEmit`,
/// `vue-tsc --noEmit`, through `npx` or `pnpm exec` too).
pub(super) fn is_type_check(words: &[String]) -> bool {
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| matches!(*w, "npx" | "pnpm" | "yarn" | "exec" | "--no-install" | "--no"))
        .collect();
    let bin = words.first().map(|w| w.rsplit('/').next().unwrap_or(w));
    matches!(bin, Some("tsc" | "tsgo" | "vue-tsc")) && words.contains(&"--noEmit")
}

/// True when a script's text runs the script `name` (`npm run NAME`, `pnpm NAME`, `yarn run NAME`...).
fn calls_script(text: &str, name: &str) -> bool {
    let words: Vec<&str> =
        text.split(|c: char| c.is_whitespace() || "&|;()".contains(c)).filter(|w| !w.is_empty()).collect();
    words.windows(3).any(|w| matches!(w, ["npm" | "pnpm" | "yarn" | "bun", "run" | "run-script", n] if *n == name))
        || words.windows(2).any(|w| matches!(w, ["pnpm" | "yarn", n] if *n == name))
}

/// Directories the build writes and the sources do not hold: the first directory of each entry
/// point package.json names (`main`, `module`, `types`, `exports`, `bin`) and tsconfig.json's
/// `outDir`, when no listed file is inside it (it is ignored, or not built yet).
fn output_dirs(files: &ProjectFiles, value: &Value) -> Vec<String> {
    let mut paths = Vec::new();
    for key in ["main", "module", "types", "typings", "exports", "bin"] {
        if let Some(v) = value.get(key) {
            strings(v, &mut paths);
        }
    }
    if let Some(out_dir) = files.read("tsconfig.json").and_then(|text| json5_out_dir(&text)) {
        paths.push(out_dir);
    }
    let mut dirs: Vec<String> = Vec::new();
    for path in paths {
        let path = path.trim_start_matches("./");
        let Some((dir, _)) = path.split_once('/').or(Some((path, ""))).filter(|(d, _)| !d.is_empty()) else { continue };
        if dir.contains('*') || dir == "." || dir == ".." || dirs.iter().any(|d| d == dir) {
            continue;
        }
        let prefix = format!("{dir}/");
        if !files.files.iter().any(|f| f.starts_with(&prefix)) && !files.has(dir) {
            dirs.push(dir.to_string());
        }
    }
    dirs
}

/// Every string inside a JSON value (the paths of an `exports` map, a `bin` table).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// `compilerOptions.outDir` of a tsconfig.json, which may have comments and trailing commas.
fn json5_out_dir(text: &str) -> Option<String> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN.get_or_init(|| Regex::new(r#""outDir"\s*:\s*"([^"]+)""#).expect("valid regex"));
    pattern.captures(text).map(|c| c[1].to_string())
}

/// Test files of the project, by the usual layouts, at most [`MAX_TEST_FILES`].
fn test_files(files: &ProjectFiles) -> Vec<&str> {
    const EXT: &str = "{js,mjs,cjs,jsx,ts,mts,cts,tsx}";
    let globs = [
        format!("**/*.test.{EXT}"),
        format!("**/*.spec.{EXT}"),
        format!("test/**/*.{EXT}"),
        format!("tests/**/*.{EXT}"),
        format!("**/__tests__/**/*.{EXT}"),
    ];
    let mut found: Vec<&str> = Vec::new();
    for glob in &globs {
        for file in files.matching(glob) {
            if !found.contains(&file) {
                found.push(file);
            }
            if found.len() >= MAX_TEST_FILES {
                return found;
            }
        }
    }
    found
}

fn read_bounded(path: &Path) -> Option<String> {
    const TEST_FILE: crate::fsio::Limit = crate::fsio::Limit {
        what: "test file",
        cap: MAX_TEST_FILE_BYTES,
        advice: "a test file this large is not read for its imports",
    };
    crate::fsio::read_text(path, TEST_FILE).ok()
}

/// The module specifiers a file imports: `import ... from 'x'`, `import 'x'`, `import('x')`,
/// `require('x')`, `export ... from 'x'`.
fn import_specifiers(text: &str) -> Vec<&str> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN.get_or_init(|| {
        Regex::new(r#"(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"\n]+)['"]"#).expect("valid regex")
    });
    pattern.captures_iter(text).filter_map(|c| c.get(1)).map(|m| m.as_str()).collect()
}

/// A relative specifier imported by `file` as a path from the project root (`/`-separated,
/// `..` resolved; a path leaving the project keeps its leading `..`).
fn resolve(file: &str, spec: &str) -> String {
    let joined: PathBuf = Path::new(file).parent().unwrap_or(Path::new("")).join(spec);
    let mut parts: Vec<String> = Vec::new();
    for component in joined.components() {
        match component {
            Component::ParentDir if parts.last().is_some_and(|p| p != "..") => {
                parts.pop();
            }
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::ParentDir => parts.push("..".into()),
            _ => {}
        }
    }
    parts.join("/")
}

/// The build phase with, under `run-script-steps = true`, the test script's steps before its
/// framework.
pub(super) fn with_script_steps(ctx: &ProjectContext<'_>, mut phase: PhasePlan, script: &ScriptPlan) -> PhasePlan {
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
pub(super) fn build_phase_alone(
    ctx: &ProjectContext<'_>,
    manifest: &Manifest,
    pm: &PackageManager,
    test_script: &ScriptPlan,
) -> PhasePlan {
    let script = build_script(manifest);
    if let Some(name) = script {
        let why = match ctx.build_script {
            Some(true) => Some("`build = true` in fcorr.toml".to_string()),
            Some(false) => None,
            None => tests_need_build(ctx.files, manifest, name, test_script)
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
    if let Some(step) = test_script.before.iter().find(|step| is_type_check(&step.words)) {
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

/// A script step run as the package manager would: through `sh`, with `node_modules/.bin` first
/// on `PATH`.
pub(super) fn script_step_command(root: &Path, step: &Step) -> CommandSpec {
    let mut command = CommandSpec::shell(&step.text, root);
    let bin = root.join("node_modules/.bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let joined = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path)))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| path.to_string_lossy().into_owned());
    command.env.push(("PATH".into(), joined));
    command
}

/// Makes fcorr's own `tsc --noEmit` incremental, its state kept in `node_modules/.cache/fcorr`
/// (beside the dependencies, so a CI cache that restores them restores it): tsc then re-checks
/// only what changed since the last run, and reports the same errors. TypeScript 4.0 and later
/// accept `--incremental` with `--noEmit`; older ones, or no `node_modules` to keep it in, run
/// the full check.
pub(super) fn add_incremental(root: &Path, phase: &mut PhasePlan) {
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

#[cfg(test)]
mod tests {
    use super::super::tests::project;
    use super::*;

    fn need(files: &[(&str, &str)]) -> Option<String> {
        let (_dir, listing) = project(files);
        let text = listing.read("package.json").unwrap();
        let manifest = Manifest::parse(&text).unwrap();
        let framework = super::super::choose_framework(&listing, &manifest, None).0.unwrap();
        let script = ScriptPlan::read(&manifest, framework);
        tests_need_build(&listing, &manifest, build_script(&manifest).unwrap(), &script)
    }

    const UNBUILT: &str = r#"{"name": "lib", "main": "dist/index.js", "exports": {".": "./dist/index.mjs"},
        "scripts": {"build": "unbuild", "test": "vitest"}, "devDependencies": {"vitest": "^3"}}"#;

    #[test]
    fn tests_of_the_sources_do_not_need_the_build() {
        assert_eq!(
            need(&[
                ("package.json", UNBUILT),
                ("src/index.ts", ""),
                ("test/index.test.ts", "import { x } from '../src'")
            ]),
            None
        );
    }

    #[test]
    fn imports_of_the_build_output_or_the_package_itself_need_it() {
        let why = need(&[("package.json", UNBUILT), ("test/a.test.ts", "import { x } from \"../dist/index.mjs\";")]);
        assert_eq!(
            why.as_deref(),
            Some("test/a.test.ts imports `../dist/index.mjs`, in `dist/`, which `build` writes")
        );
        let why = need(&[("package.json", UNBUILT), ("test/a.test.js", "const lib = require('lib/sub');")]).unwrap();
        assert!(why.contains("imports the package itself (`lib/sub`)"), "{why}");
        // Once dist/ is part of the sources (committed), nothing has to build it.
        assert_eq!(
            need(&[("package.json", UNBUILT), ("dist/index.js", ""), ("test/a.test.ts", "import '../dist/index.js'")]),
            None
        );
    }

    #[test]
    fn scripts_calling_the_build_and_tests_run_from_the_output_need_it() {
        let pretest = r#"{"scripts": {"build": "tsc", "pretest": "npm run build", "test": "jest"}, "devDependencies": {"jest": "^29"}}"#;
        assert_eq!(need(&[("package.json", pretest)]).as_deref(), Some("the `pretest` script runs `build`"));
        let chained =
            r#"{"scripts": {"build": "tsc", "test": "pnpm build && jest"}, "devDependencies": {"jest": "^29"}}"#;
        assert_eq!(need(&[("package.json", chained)]).as_deref(), Some("the `test` script runs `build`"));
        let from_dist = r#"{"scripts": {"build": "tsc", "test": "node --test dist/"}}"#;
        let why =
            need(&[("package.json", from_dist), ("tsconfig.json", "{\"compilerOptions\": {\"outDir\": \"dist\", }}")]);
        assert_eq!(why.as_deref(), Some("the test command runs files in `dist/`, which `build` writes"));
    }

    #[test]
    fn specifiers_and_paths_are_read_like_node_does() {
        let text = "import a from './a';\nimport './side';\nexport { b } from \"../b\";\nconst c = require( 'c' );\nawait import('d/e');";
        assert_eq!(import_specifiers(text), ["./a", "./side", "../b", "c", "d/e"]);
        assert_eq!(resolve("test/unit/a.test.ts", "../../dist/x.js"), "dist/x.js");
        assert_eq!(resolve("a.test.ts", "../outside"), "../outside");
        assert!(calls_script("tsc && npm run build", "build") && calls_script("yarn build", "build"));
        let words = |text: &str| text.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(is_type_check(&words("tsgo --noEmit")) && is_type_check(&words("npx tsc -p . --noEmit")));
        assert!(!is_type_check(&words("tsc -p tsconfig.build.json")) && !is_type_check(&words("eslint --noEmit")));
        assert!(!calls_script("npm run build:types", "build"));
    }
}
