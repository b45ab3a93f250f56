//! Whether a node project's tests need its own build script. vitest, jest and mocha (with a
//! loader) compile sources on the fly, so by default the build phase only checks what a build
//! checks (`tsc --noEmit`); the `build` script runs when the tests need what it produces: a
//! `pretest` or `test` script that calls it, tests (or the test command's paths) reaching into the
//! build's output directory, or tests importing the package by its own name while its entry points
//! are build output. `build = true|false` in fcorr.toml decides instead.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::{Manifest, ScriptPlan};
use crate::ecosystems::ProjectFiles;

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
