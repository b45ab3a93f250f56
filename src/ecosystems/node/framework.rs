//! Which test framework a node project uses (jest, vitest, mocha, `node --test`), chosen from
//! `fcorr.toml`, the `test` script, the dependencies or a test file importing `node:test`, and
//! how one script step calls it.

use super::{Manifest, ProjectFiles, script};
use crate::ecosystems::Claim;

/// Test frameworks this runner drives, in the order used to break ties between dependencies.
pub(super) const FRAMEWORKS: &[Framework] = &[Framework::Vitest, Framework::Jest, Framework::Mocha];

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Framework {
    Jest,
    Vitest,
    Mocha,
    NodeTest,
}

impl Framework {
    pub(super) fn label(self) -> &'static str {
        match self {
            Framework::Jest => "jest",
            Framework::Vitest => "vitest",
            Framework::Mocha => "mocha",
            Framework::NodeTest => "node --test",
        }
    }

    pub(super) fn from_label(text: &str) -> Option<Framework> {
        match text.trim().to_ascii_lowercase().as_str() {
            "jest" => Some(Framework::Jest),
            "vitest" => Some(Framework::Vitest),
            "mocha" => Some(Framework::Mocha),
            "node --test" | "node-test" | "node:test" | "node" => Some(Framework::NodeTest),
            _ => None,
        }
    }
}

/// Picks the framework and says why; `None` when nothing fits.
pub(super) fn choose_framework(
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
    let in_script = |bin: &str| script_names(script, bin);
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

/// True when the script names the binary `bin` as a word (`vitest run`, `node_modules/.bin/jest`).
fn script_names(script: &str, bin: &str) -> bool {
    let mut words = script.split(|c: char| c.is_whitespace() || "&|;()".contains(c));
    words.any(|w| w == bin || w.ends_with(&format!("/.bin/{bin}")))
}

/// A framework the `test` script runs although no dependency declares it (so it is not chosen:
/// what runs would be whatever `npx` finds), for the message saying so.
pub(super) fn named_but_undeclared(manifest: &Manifest) -> Option<Framework> {
    let script = manifest.script("test")?;
    FRAMEWORKS.iter().copied().find(|f| script_names(script, f.label()) && manifest.dep(f.label()).is_none())
}

/// True when the `test` script, read step by step, calls a test framework itself (not only
/// another tool that runs the members' scripts).
pub(super) fn script_runs_a_framework(manifest: &Manifest) -> bool {
    let Some(steps) = manifest.script("test").and_then(|text| script::steps(text, &manifest.scripts)) else {
        return false;
    };
    let all = [Framework::Jest, Framework::Vitest, Framework::Mocha, Framework::NodeTest];
    steps.iter().any(|step| all.iter().any(|f| framework_args(&step.words, *f).is_some()))
}

/// True when one of the script's commands is `node ... --test ...`.
pub(super) fn script_runs_node_test(script: &str) -> bool {
    script.split(['&', '|', ';']).any(|command| {
        let words: Vec<&str> =
            command.split_whitespace().skip_while(|w| w.contains('=') && !w.starts_with('-')).collect();
        words.first().is_some_and(|w| *w == "node" || w.ends_with("/node")) && words.contains(&"--test")
    })
}

/// Where a node project's test files are.
const TEST_FILES: &[&str] = &[
    "**/*.test.{js,mjs,cjs,ts,mts}",
    "**/*.spec.{js,mjs,cjs,ts,mts}",
    "**/*_test.{js,mjs,cjs}",
    "test/**/*.{js,mjs,cjs}",
    "tests/**/*.{js,mjs,cjs}",
];

/// How firmly a node candidate claims its root (`Ecosystem::claim`): a framework with a `test`
/// script or test files is a project with tests; a package.json with no `test` script, no test
/// files of its own and no framework (husky, commitlint, prettier: tooling for a repository whose
/// projects are below it) and no workspace has nothing to test, and leaves the root to them.
pub(super) fn claim(files: &ProjectFiles, framework: &str, workspace_root: bool) -> Claim {
    // A package.json that cannot be read is a project whose suite reports the problem.
    let Some(manifest) = files.read("package.json").and_then(|text| Manifest::parse(&text).ok()) else {
        return Claim::Project;
    };
    let script = manifest.script("test").map(str::trim).filter(|s| !s.is_empty() && !s.contains("no test specified"));
    // Test files inside a package of their own below are that package's.
    let packages: Vec<&str> = files.files.iter().filter_map(|f| f.strip_suffix("/package.json")).collect();
    let tests = TEST_FILES
        .iter()
        .flat_map(|glob| files.matching(glob))
        .any(|f| !packages.iter().any(|p| f.strip_prefix(p).is_some_and(|rest| rest.starts_with('/'))));
    match (Framework::from_label(framework), script.is_some() || tests) {
        (Some(_), true) => Claim::Tests,
        (None, false) if !workspace_root => {
            Claim::Nothing("package.json with no `test` script, no test files and no test framework".into())
        }
        _ => Claim::Project,
    }
}

/// A test file that uses the built-in runner (looked for only when no framework is declared).
pub(super) fn node_test_file(files: &ProjectFiles) -> Option<String> {
    let mut seen = 0;
    for glob in TEST_FILES {
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

/// The arguments of one script step that calls the framework, without the flags fcorr sets
/// itself; `None` when the step runs something else. `npx jest`, `pnpm exec jest` and `yarn jest`
/// count as calling jest.
pub(super) fn framework_args(words: &[String], framework: Framework) -> Option<Vec<String>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_command_with_test_runs_the_built_in_runner() {
        assert!(script_runs_node_test("tsc && NODE_ENV=test node --enable-source-maps --test dist/"));
        assert!(!script_runs_node_test("jest --test-path-pattern x"));
    }
}
