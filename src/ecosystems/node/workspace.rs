//! npm, yarn and pnpm workspaces: the member directories a root declares (`workspaces` in
//! package.json, `packages` in pnpm-workspace.yaml), which of them run as suites and why the
//! others do not, and the workspace a directory run on its own belongs to.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::fanout::{FanOut, fan_out};
use super::framework::{Framework, script_runs_a_framework};
use super::script;
use super::{Manifest, NodePlanError};
use crate::ecosystems::{Members, ProjectFiles};
use crate::model::{Case, LeftOut};

/// How many directories above a project fcorr looks for the workspace it is a member of.
const MAX_UP: usize = 8;

/// A workspace root (npm/yarn `workspaces`, pnpm-workspace.yaml) whose own `test` script runs
/// no test framework (`npm test --workspaces`, `turbo run test`, or none) stands for its members:
/// every member with a `test` script fcorr can run is a suite of its own, sharing one install at
/// the root; the other members are named with why. A root whose script runs the framework itself
/// is a suite, and when it also fans out (`node --test test/ && npm test -ws`) its members are
/// suites too. Members the fan-out's filters leave out (`--filter '!legacy'`) are named.
pub(super) fn members(files: &ProjectFiles) -> Members {
    let mut members = Members::default();
    if files.workspace.is_some() {
        return members;
    }
    let Some(Ok(root)) = files.read("package.json").map(|text| Manifest::parse(&text)) else { return members };
    let Some(declared) = declared(files, &root.raw) else { return members };
    members.source = Some(declared.source.into());
    let fan_outs = fan_outs(&root);
    let root_runs = script_runs_a_framework(&root);
    if root_runs && fan_outs.is_empty() {
        return members;
    }
    members.members_only = !root_runs;
    members.shared_install = true;
    let (dirs, excluded) = member_dirs(files, &declared.globs);
    for (dir, glob) in excluded {
        let reason = format!("excluded from the workspace by `{glob}` in {}", declared.source);
        members.left_out.push(LeftOut { path: dir, reason });
    }
    let filtered =
        |dir: &str, name: Option<&str>| !fan_outs.is_empty() && !fan_outs.iter().any(|f| f.selects(dir, name));
    for dir in dirs {
        let manifest = manifest_of(files, &dir);
        let name = manifest.as_ref().and_then(|m| m.raw.get("name")?.as_str());
        let reason = if filtered(&dir, name) {
            let texts: Vec<String> = fan_outs.iter().map(|f| format!("`{}`", f.text)).collect();
            Some(format!("filtered out by the root's test script ({})", texts.join(", ")))
        } else {
            // A package.json that cannot be read: its suite says what is wrong with it.
            manifest.as_ref().and_then(not_runnable)
        };
        match reason {
            Some(reason) => members.left_out.push(LeftOut { path: dir, reason }),
            None => members.run.push(dir),
        }
    }
    members
}

/// Why a member's own `test` script is not run as a suite; `None` when it is. A script that
/// runs something fcorr cannot read (`node check.js`, ava) still runs, and its suite says it
/// found no framework: its tests are real and unknown.
fn not_runnable(manifest: &Manifest) -> Option<String> {
    let script = manifest.script("test").filter(|t| !t.trim().is_empty());
    match script {
        None => Some("no `test` script: the workspace's own test run skips it too".to_string()),
        Some(script) if script.contains("no test specified") => {
            Some(format!("its `test` script is npm's placeholder (`{script}`): it has no tests"))
        }
        Some(script) if runs_nothing(script, manifest) => Some(format!("its test script runs no tests: `{script}`")),
        Some(_) => None,
    }
}

/// True when every step of the script only prints or ends well (`echo no tests && exit 0`).
fn runs_nothing(text: &str, manifest: &Manifest) -> bool {
    let Some(steps) = script::steps(text, &manifest.scripts) else { return false };
    let harmless = |words: &[String]| match words.first().map(String::as_str) {
        Some("echo" | "printf" | "true" | ":") => true,
        Some("exit") => words.len() == 1 || (words.len() == 2 && words[1] == "0"),
        _ => false,
    };
    !steps.is_empty() && steps.iter().all(|step| harmless(&step.words))
}

/// The member's package.json, parsed; `None` when it cannot be read.
fn manifest_of(files: &ProjectFiles, dir: &str) -> Option<Manifest> {
    files.below(dir).read("package.json").and_then(|text| Manifest::parse(&text).ok())
}

/// The fan-outs of the members' tests in the root's `test` script.
pub(super) fn fan_outs(root: &Manifest) -> Vec<FanOut> {
    let Some(text) = root.script("test") else { return Vec::new() };
    script::steps(text, &root.scripts).unwrap_or_default().iter().filter_map(fan_out).collect()
}

/// The members of the workspace at `files` with a `test` script of their own that runs, when
/// the root's own script runs the framework and does not fan out: what `npm test -ws` would run
/// and the root's run may not (named when none of their files reported a case).
pub(super) fn members_with_own_tests(files: &ProjectFiles, root: &Manifest) -> Vec<String> {
    let Some(declared) = declared(files, &root.raw) else { return Vec::new() };
    if !fan_outs(root).is_empty() || !script_runs_a_framework(root) {
        return Vec::new();
    }
    let (dirs, _) = member_dirs(files, &declared.globs);
    dirs.into_iter().filter(|dir| manifest_of(files, dir).is_some_and(|m| not_runnable(&m).is_none())).collect()
}

/// The file in the work directory naming the members whose own tests the root's run may not
/// collect, and the root's framework.
const OWN_TESTS_FILE: &str = "fcorr-node-members.json";

/// Writes the members [`members_with_own_tests`] found for the collect step (an empty list too:
/// a list an earlier run left must not name members this run did not plan).
pub(super) fn list_own_tests(work_dir: &Path, dirs: &[String], framework: Framework) -> Result<(), NodePlanError> {
    let path = work_dir.join(OWN_TESTS_FILE);
    let text = serde_json::json!({ "framework": framework.label(), "members": dirs }).to_string();
    std::fs::write(&path, text).map_err(|source| NodePlanError::Write { path, source })
}

/// The members listed when planning that no case of the root's run came from: their own `test`
/// script is what runs their tests, and this run did not.
pub(super) fn uncollected(work_dir: &Path, root: &Path, cases: &[Case]) -> Vec<LeftOut> {
    let Some(listed) = std::fs::read_to_string(work_dir.join(OWN_TESTS_FILE))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
    else {
        return Vec::new();
    };
    let framework = listed["framework"].as_str().unwrap_or("test framework");
    let root = format!("{}/", root.display());
    // Reporters name files relative to the root or absolute; node's file-level cases by path.
    let files: Vec<&str> = cases
        .iter()
        .flat_map(|c| [c.file.as_deref(), Some(c.name.as_str())])
        .flatten()
        .map(|f| f.strip_prefix(root.as_str()).unwrap_or(f).trim_start_matches("./"))
        .collect();
    let dirs = listed["members"].as_array().into_iter().flatten().filter_map(Value::as_str);
    dirs.filter(|dir| !files.iter().any(|f| f.starts_with(&format!("{dir}/"))))
        .map(|dir| LeftOut {
            path: dir.to_string(),
            reason: format!("its own test script; the root's {framework} did not collect it"),
        })
        .collect()
}

/// The root of the npm, yarn or pnpm workspace the directory `dir` is a member of, found as npm
/// finds it: the nearest directory above whose `workspaces` (or pnpm-workspace.yaml) select
/// `dir`. The search stops at a repository's top (a directory with `.git`).
pub(super) fn enclosing(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    if dir.join(".git").exists() {
        return None;
    }
    for root in dir.ancestors().skip(1).take(MAX_UP) {
        if root.join("package.json").is_file() || root.join("pnpm-workspace.yaml").is_file() {
            let files = ProjectFiles { root: root.to_path_buf(), ..ProjectFiles::default() };
            let manifest = files.read("package.json").and_then(|t| serde_json::from_str(&t).ok());
            let rel = dir.strip_prefix(root).ok()?.to_string_lossy().replace('\\', "/");
            let listing = ProjectFiles { files: vec![format!("{rel}/package.json")], ..ProjectFiles::default() };
            let selected = declared(&files, &manifest.unwrap_or(Value::Null))
                .is_some_and(|declared| member_dirs(&listing, &declared.globs).0.contains(&rel));
            if selected {
                return Some(root.to_path_buf());
            }
        }
        if root.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Where a workspace root declares its members, and the globs it declares.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Declared {
    /// `package.json workspaces` or `pnpm-workspace.yaml`.
    pub source: &'static str,
    /// Member globs relative to the root; `!glob` leaves directories out.
    pub globs: Vec<String>,
}

/// The members `package.json` (its parsed text, `manifest`) or `pnpm-workspace.yaml` declares;
/// `None` when the root declares none. pnpm reads only its own file, so it wins when both exist.
pub(super) fn declared(files: &ProjectFiles, manifest: &Value) -> Option<Declared> {
    if let Some(globs) = files.read("pnpm-workspace.yaml").and_then(|text| pnpm_packages(&text)) {
        return Some(Declared { source: "pnpm-workspace.yaml", globs });
    }
    let list = match manifest.get("workspaces")? {
        // yarn 1 also takes `{ "packages": [...], "nohoist": [...] }`.
        Value::Object(object) => object.get("packages")?.as_array()?.clone(),
        Value::Array(list) => list.clone(),
        _ => return None,
    };
    let globs: Vec<String> = list.iter().filter_map(Value::as_str).map(str::to_string).collect();
    (!globs.is_empty()).then_some(Declared { source: "package.json workspaces", globs })
}

/// `packages:` of a pnpm-workspace.yaml; `None` when the file lists none (pnpm then treats the
/// root as the only package).
fn pnpm_packages(text: &str) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct PnpmWorkspace {
        #[serde(default)]
        packages: Vec<String>,
    }
    let parsed: PnpmWorkspace = serde_saphyr::from_str(text).ok()?;
    (!parsed.packages.is_empty()).then_some(parsed.packages)
}

/// The member directories (relative, `/`-separated, sorted) the globs select: directories with
/// a package.json that a glob matches and no `!glob` excludes; then those a glob matches and a
/// `!glob` excludes, each with that glob. The root itself is not a member.
pub(super) fn member_dirs(files: &ProjectFiles, globs: &[String]) -> (Vec<String>, Vec<(String, String)>) {
    let compile = |pattern: &str| {
        let pattern = pattern.trim().trim_start_matches("./").trim_end_matches('/');
        // `*` stays inside one directory, as in npm's and pnpm's globs; `**` crosses them.
        globset::GlobBuilder::new(pattern).literal_separator(true).build().ok().map(|g| g.compile_matcher())
    };
    let (excluded, included): (Vec<&String>, Vec<&String>) = globs.iter().partition(|g| g.trim().starts_with('!'));
    let included: Vec<_> = included.iter().filter_map(|g| compile(g)).collect();
    let excluded: Vec<_> =
        excluded.iter().filter_map(|g| Some((g.trim(), compile(g.trim().trim_start_matches('!'))?))).collect();
    let mut members = Vec::new();
    let mut left_out = Vec::new();
    for dir in files.files.iter().filter_map(|f| f.strip_suffix("/package.json")) {
        if !included.iter().any(|g| g.is_match(dir)) {
            continue;
        }
        match excluded.iter().find(|(_, g)| g.is_match(dir)) {
            Some((glob, _)) => left_out.push((dir.to_string(), glob.to_string())),
            None => members.push(dir.to_string()),
        }
    }
    members.sort();
    left_out.sort();
    (members, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(files: &[&str]) -> ProjectFiles {
        ProjectFiles { files: files.iter().map(|f| f.to_string()).collect(), ..ProjectFiles::default() }
    }

    #[test]
    fn globs_select_member_directories_with_a_package_json() {
        let files = listing(&[
            "package.json",
            "apps/web/package.json",
            "packages/a/package.json",
            "packages/a/src/x.js",
            "packages/b/package.json",
            "packages/b/fixtures/inner/package.json",
            "packages/private-tests/package.json",
            "tools/README.md",
        ]);
        let globs = |list: &[&str]| list.iter().map(|g| g.to_string()).collect::<Vec<_>>();
        assert_eq!(
            member_dirs(&files, &globs(&["packages/*"])).0,
            ["packages/a", "packages/b", "packages/private-tests"]
        );
        assert_eq!(
            member_dirs(&files, &globs(&["./packages/*", "!packages/private-*", "apps/web/"])),
            (
                vec!["apps/web".to_string(), "packages/a".into(), "packages/b".into()],
                vec![("packages/private-tests".to_string(), "!packages/private-*".to_string())]
            )
        );
        assert_eq!(member_dirs(&files, &globs(&["packages/**"])).0.len(), 4, "`**` reaches nested packages");
        assert!(member_dirs(&files, &globs(&["tools/*"])).0.is_empty());
    }

    #[test]
    fn package_json_and_pnpm_declarations_are_read() {
        let files = listing(&[]);
        let yarn = serde_json::json!({ "workspaces": { "packages": ["packages/*"], "nohoist": ["**/x"] } });
        assert_eq!(
            declared(&files, &yarn),
            Some(Declared { source: "package.json workspaces", globs: vec!["packages/*".into()] })
        );
        assert_eq!(declared(&files, &serde_json::json!({ "workspaces": [] })), None);
        assert_eq!(declared(&files, &serde_json::json!({ "name": "x" })), None);
        assert_eq!(
            pnpm_packages("packages:\n  - 'packages/*'\n  - \"!**/test/**\"\n"),
            Some(vec!["packages/*".to_string(), "!**/test/**".to_string()])
        );
        assert_eq!(pnpm_packages("onlyBuiltDependencies: [esbuild]\n"), None);
    }

    /// (directory, reason) of each member the workspace `files` leaves out, and those it runs.
    fn divided(files: &[(&str, &str)]) -> (Vec<String>, Vec<(String, String)>, bool) {
        let (_dir, files) = crate::ecosystems::project_of(files);
        let members = members(&files);
        let left = members.left_out.into_iter().map(|l| (l.path, l.reason)).collect();
        (members.run, left, members.members_only)
    }

    fn root(script: &str) -> String {
        format!(r#"{{"workspaces": ["packages/*"], "scripts": {{"test": "{script}"}}}}"#)
    }

    const NODE_TEST: &str = r#"{"name": "a", "scripts": {"test": "node --test"}}"#;
    const LEGACY: &str = r#"{"name": "legacy", "scripts": {"test": "node --test"}}"#;
    const ECHO: &str = r#"{"name": "quiet", "scripts": {"test": "echo no tests && exit 0"}}"#;

    #[test]
    fn a_root_that_runs_its_tests_and_fans_out_runs_with_its_members() {
        let (run, left, members_only) = divided(&[
            ("package.json", &root("node --test test/ && npm test --workspaces --if-present")),
            ("packages/a/package.json", NODE_TEST),
            ("packages/quiet/package.json", ECHO),
        ]);
        assert_eq!((run, members_only), (vec!["packages/a".to_string()], false));
        assert_eq!(
            left,
            [("packages/quiet".into(), "its test script runs no tests: `echo no tests && exit 0`".into())]
        );
        // Without the fan-out the root's framework decides what runs: one suite.
        let (run, left, _) =
            divided(&[("package.json", &root("node --test test/")), ("packages/a/package.json", NODE_TEST)]);
        assert!(run.is_empty() && left.is_empty(), "{run:?} {left:?}");
    }

    #[test]
    fn members_a_fan_out_filters_out_are_named() {
        for script in [
            "pnpm -r --filter '!legacy' test",
            "lerna run test --ignore legacy",
            "vitest run && turbo run test --filter=!legacy",
        ] {
            let (run, left, _) = divided(&[
                ("package.json", &root(script)),
                ("packages/a/package.json", NODE_TEST),
                ("packages/legacy/package.json", LEGACY),
            ]);
            assert_eq!(run, ["packages/a"], "{script}");
            assert_eq!(left.len(), 1, "{script}");
            assert!(left[0].1.starts_with("filtered out by the root's test script (`"), "{left:?}");
        }
    }

    #[test]
    fn a_member_is_found_from_its_own_directory() {
        let (dir, _) = crate::ecosystems::project_of(&[
            ("package.json", &root("npm test -ws")),
            ("packages/a/package.json", NODE_TEST),
            ("tools/x/package.json", NODE_TEST),
        ]);
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(enclosing(&dir.path().join("packages/a")), Some(root));
        assert_eq!(enclosing(&dir.path().join("tools/x")), None, "not selected by `packages/*`");
        assert_eq!(enclosing(dir.path()), None);
    }

    #[test]
    fn members_whose_files_reported_no_case_are_named() {
        let work = tempfile::tempdir().unwrap();
        let dirs = ["packages/a".to_string(), "packages/b".to_string(), "packages/c".to_string()];
        list_own_tests(work.path(), &dirs, Framework::NodeTest).unwrap();
        let root = Path::new("/repo");
        let case =
            |name: &str, file: Option<&str>| Case { name: name.into(), file: file.map(Into::into), ..Case::default() };
        let cases = [case("adds", Some("/repo/packages/a/test/a.test.js")), case("packages/b/test/b.test.js", None)];
        let left = uncollected(work.path(), root, &cases);
        let left: Vec<(&str, &str)> = left.iter().map(|l| (l.path.as_str(), l.reason.as_str())).collect();
        assert_eq!(left, [("packages/c", "its own test script; the root's node --test did not collect it")]);
        list_own_tests(work.path(), &[], Framework::NodeTest).unwrap();
        assert!(uncollected(work.path(), root, &[]).is_empty(), "a list from an earlier run is replaced");
    }
}
