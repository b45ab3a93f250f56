//! Where a Python project declares what its tests need, read into one flat list.
//!
//! Sources, all optional: `requirements*.txt` files (top level and `requirements*/test*.txt`),
//! `[project.optional-dependencies]` extras, PEP 735 `[dependency-groups]` (with
//! `{include-group = …}` resolved here, so any pip can install them), the test environments
//! of `[tool.uv]`, `[tool.pdm]` and `[tool.hatch]`, Poetry's groups (`super::poetry`), and
//! tox's (`super::tox`: tox.ini, setup.cfg or pyproject.toml).

use std::collections::BTreeSet;

use super::super::ProjectFiles;

/// Requirement files installed with `-r`, in this order, when present at the top level.
/// (Both spellings of each: `requirements_dev.txt` is as common as `requirements-dev.txt`, and a
/// test dependency fcorr misses can turn a `pytest.importorskip` module into a silent skip.)
pub(crate) const REQUIREMENT_FILES: &[&str] = &[
    "requirements.txt",
    "requirements-dev.txt",
    "requirements_dev.txt",
    "requirements-test.txt",
    "requirements_test.txt",
    "requirements-tests.txt",
    "requirements_tests.txt",
    "requirements-testing.txt",
    "requirements_testing.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "tests-requirements.txt",
    "tests_requirements.txt",
    "dev-requirements.txt",
    "dev_requirements.txt",
];

/// Names of extras, groups and environments that hold test tools. Every one of the first three
/// present is used; `dev` only when none of them is (a dev group often carries linters, docs
/// builders and release tools the tests never import).
const TEST_NAMES: &[&str] = &["test", "tests", "testing"];
const FALLBACK_NAME: &str = "dev";
/// Hatch's own test environment (`hatch test`).
const HATCH_TEST_ENV: &str = "hatch-test";

/// Lockfiles whose contents decide what an install produces (hashed into the cache key).
pub(crate) const LOCKFILES: &[&str] = &["uv.lock", "pdm.lock", "poetry.lock", "Pipfile.lock", "pylock.toml"];

/// What the project declares for its tests.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct TestDeps {
    /// Requirement files to install with `-r`, relative to the project root.
    pub requirement_files: Vec<String>,
    /// Constraint files to install with `-c` (tox's `deps = -c constraints.txt`), relative to the root.
    pub constraint_files: Vec<String>,
    /// `[project] dependencies`.
    pub dependencies: Vec<String>,
    /// Extras of the project itself that hold test tools (`.[test]`).
    pub extras: Vec<String>,
    /// Requirements of those extras.
    pub extra_requirements: Vec<String>,
    /// Requirements from dependency groups and tool environments, flattened, without duplicates.
    pub group_requirements: Vec<String>,
    /// Where test dependencies were found, e.g. `pyproject.toml [dependency-groups] tests`.
    pub found: Vec<String>,
    /// Every place looked, found or not (for messages when an import fails).
    pub looked: Vec<String>,
    /// Declarations fcorr cannot use, e.g. an `include-group` naming no group.
    pub problems: Vec<String>,
    /// A tox configuration whose test deps cannot be installed (a `-r` file that does not exist).
    pub tox_problem: Option<super::tox::ToxError>,
    /// True when the project declares a pytest requirement somewhere fcorr installs from.
    pub declares_pytest: bool,
    /// A uv workspace's member directories (`[tool.uv.workspace] members`): each is installed,
    /// editable, next to the root, so every member's tests import what they test.
    pub workspace_members: Vec<String>,
}

/// PEP 503 / PEP 735 name normalisation: lower case, runs of `-_.` become one `-`.
pub(crate) fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut dash = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            dash = true;
        } else {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The test names present among `available`, by the rule of [`TEST_NAMES`]; the original
/// spelling is returned.
pub(crate) fn choose_test_names<'a>(available: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let available: Vec<&str> = available.into_iter().collect();
    let pick = |wanted: &[&str]| -> Vec<&'a str> {
        let mut names = Vec::new();
        for want in wanted {
            for name in &available {
                if normalize(name) == *want && !names.contains(name) {
                    names.push(*name);
                }
            }
        }
        names
    };
    let names = pick(TEST_NAMES);
    if names.is_empty() { pick(&[FALLBACK_NAME]) } else { names }
}

/// True when a requirement string names pytest itself (`pytest`, `pytest>=8`, `pytest[extra]`).
pub(crate) fn is_pytest_requirement(req: &str) -> bool {
    let name: String = req.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    name.eq_ignore_ascii_case("pytest")
}

/// Non-empty, non-comment lines of a requirements file.
pub(crate) fn requirement_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(|l| l.split(" #").next().unwrap_or("").trim()).filter(|l| !l.is_empty() && !l.starts_with('#'))
}

fn strings(value: Option<&toml::Value>) -> Vec<String> {
    value
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn table<'a>(root: Option<&'a toml::Table>, path: &[&str]) -> Option<&'a toml::Table> {
    let mut current = root?;
    for key in path {
        current = current.get(*key)?.as_table()?;
    }
    Some(current)
}

/// The member directories of the uv workspace rooted at `files.root` (relative, `/`-separated,
/// sorted): directories with a pyproject.toml that a `[tool.uv.workspace] members` glob matches
/// and no `exclude` glob does, as uv reads them.
pub(crate) fn workspace_members(files: &ProjectFiles, pyproject: Option<&toml::Table>) -> Vec<String> {
    let Some(workspace) = table(pyproject, &["tool", "uv", "workspace"]) else { return Vec::new() };
    let compile = |globs: Vec<String>| -> Vec<globset::GlobMatcher> {
        globs
            .iter()
            .filter_map(|g| {
                let g = g.trim().trim_start_matches("./").trim_end_matches('/');
                globset::GlobBuilder::new(g).literal_separator(true).build().ok().map(|g| g.compile_matcher())
            })
            .collect()
    };
    let members = compile(strings(workspace.get("members")));
    let exclude = compile(strings(workspace.get("exclude")));
    let mut dirs: Vec<String> = files
        .files
        .iter()
        .filter_map(|f| f.strip_suffix("/pyproject.toml"))
        .filter(|dir| members.iter().any(|g| g.is_match(dir)) && !exclude.iter().any(|g| g.is_match(dir)))
        .map(str::to_string)
        .collect();
    dirs.sort();
    dirs
}

/// Requirement files by convention: the top-level list, then `requirements*/test*.txt`.
pub(crate) fn requirement_files(files: &ProjectFiles) -> Vec<String> {
    let mut found: Vec<String> = REQUIREMENT_FILES.iter().filter(|f| files.has(f)).map(|f| f.to_string()).collect();
    for path in &files.files {
        let mut parts = path.split('/');
        let (Some(dir), Some(name), None) = (parts.next(), parts.next(), parts.next()) else { continue };
        if dir.starts_with("requirements") && name.starts_with("test") && name.ends_with(".txt") {
            found.push(path.clone());
        }
    }
    found
}

/// Reads every test-dependency declaration of the project.
pub(crate) fn read(files: &ProjectFiles, pyproject: Option<&toml::Table>) -> TestDeps {
    let mut deps = TestDeps { workspace_members: workspace_members(files, pyproject), ..TestDeps::default() };
    if !deps.workspace_members.is_empty() {
        deps.found.push(format!("pyproject.toml [tool.uv.workspace] members: {}", deps.workspace_members.join(", ")));
    }
    let mut requirements: Vec<String> = Vec::new();

    deps.looked.push("requirements*.txt and requirements*/test*.txt".into());
    for file in requirement_files(files) {
        let Some(text) = files.read(&file) else { continue };
        let lines: Vec<&str> = requirement_lines(&text).collect();
        if lines.iter().any(|r| is_pytest_requirement(r)) {
            deps.declares_pytest = true;
        }
        // An empty requirements file installs nothing; skip it rather than start the installer.
        if !lines.is_empty() {
            deps.found.push(file.clone());
            deps.requirement_files.push(file);
        }
    }

    let project = table(pyproject, &["project"]);
    deps.dependencies = strings(project.and_then(|p| p.get("dependencies")));

    deps.looked.push("pyproject.toml [project.optional-dependencies]".into());
    if let Some(optional) = table(project, &["optional-dependencies"]) {
        for name in choose_test_names(optional.keys().map(String::as_str)) {
            deps.extras.push(name.to_string());
            deps.extra_requirements.extend(strings(optional.get(name)));
            deps.found.push(format!("pyproject.toml [project.optional-dependencies] {name}"));
        }
    }

    deps.looked.push("pyproject.toml [dependency-groups]".into());
    if let Some(groups) = table(pyproject, &["dependency-groups"]) {
        for name in choose_test_names(groups.keys().map(String::as_str)) {
            match resolve_group(groups, name) {
                Ok(reqs) => requirements.extend(reqs),
                Err(problem) => deps.problems.push(format!("pyproject.toml [dependency-groups]: {problem}")),
            }
            deps.found.push(format!("pyproject.toml [dependency-groups] {name}"));
        }
    }

    // uv's older spelling of the dev group; uv installs it by default.
    deps.looked.push("pyproject.toml [tool.uv] dev-dependencies".into());
    if let Some(uv) = table(pyproject, &["tool", "uv"]) {
        let dev = strings(uv.get("dev-dependencies"));
        if !dev.is_empty() {
            requirements.extend(dev);
            deps.found.push("pyproject.toml [tool.uv] dev-dependencies".into());
        }
    }

    deps.looked.push("pyproject.toml [tool.pdm.dev-dependencies]".into());
    if let Some(pdm) = table(pyproject, &["tool", "pdm", "dev-dependencies"]) {
        for name in choose_test_names(pdm.keys().map(String::as_str)) {
            // `-e path` entries are local editable installs of sibling packages; pip-style
            // requirement strings are what both installers take as arguments.
            requirements.extend(strings(pdm.get(name)).into_iter().filter(|r| !r.trim_start().starts_with("-e")));
            deps.found.push(format!("pyproject.toml [tool.pdm.dev-dependencies] {name}"));
        }
    }

    deps.looked.push("pyproject.toml [tool.hatch.envs.*]".into());
    if let Some(envs) = table(pyproject, &["tool", "hatch", "envs"]) {
        let mut names: Vec<&str> = choose_test_names(envs.keys().map(String::as_str));
        if names.is_empty() && envs.contains_key(HATCH_TEST_ENV) {
            names.push(HATCH_TEST_ENV);
        }
        if names.is_empty() && envs.contains_key("default") {
            names.push("default");
        }
        for name in names {
            let Some(env) = envs.get(name).and_then(|e| e.as_table()) else { continue };
            requirements.extend(strings(env.get("dependencies")));
            requirements.extend(strings(env.get("extra-dependencies")));
            for feature in strings(env.get("features")) {
                if !deps.extras.contains(&feature) {
                    deps.extra_requirements
                        .extend(strings(table(project, &["optional-dependencies"]).and_then(|o| o.get(&feature))));
                    deps.extras.push(feature);
                }
            }
            deps.found.push(format!("pyproject.toml [tool.hatch.envs.{name}]"));
        }
    }

    // Poetry's groups, in Poetry's version syntax (rewritten as requirements); without a
    // `[project]` table nothing installs the main dependencies but this (`poetry install`'s).
    deps.looked.push("pyproject.toml [tool.poetry.group.*.dependencies] and [tool.poetry.dev-dependencies]".into());
    let poetry = super::poetry::read(pyproject, project.is_none());
    requirements.extend(poetry.requirements);
    deps.found.extend(poetry.found);
    deps.problems.extend(poetry.problems);

    // tox is how many projects install their test tools (`deps = -r requirements_dev.txt`).
    deps.looked.push(
        "tox's [testenv] deps and extras (tox.ini, setup.cfg [tox:tox], pyproject.toml [tool.tox] legacy_tox_ini)"
            .into(),
    );
    match super::tox::read(files, pyproject) {
        Ok(Some(tox)) => {
            deps.constraint_files = tox.constraint_files;
            for file in tox.requirement_files {
                if !deps.requirement_files.contains(&file) {
                    if files.read(&file).is_some_and(|t| requirement_lines(&t).any(is_pytest_requirement)) {
                        deps.declares_pytest = true;
                    }
                    deps.requirement_files.push(file);
                }
            }
            requirements.extend(tox.requirements);
            for extra in tox.extras {
                if !deps.extras.contains(&extra) {
                    deps.extra_requirements
                        .extend(strings(table(project, &["optional-dependencies"]).and_then(|o| o.get(&extra))));
                    deps.extras.push(extra);
                }
            }
            deps.found.extend(tox.sections);
        }
        Ok(None) => {}
        Err(problem) => deps.tox_problem = Some(problem),
    }

    let mut seen = BTreeSet::new();
    deps.group_requirements = requirements.into_iter().filter(|r| seen.insert(r.trim().to_string())).collect();
    deps.declares_pytest |= deps
        .dependencies
        .iter()
        .chain(&deps.extra_requirements)
        .chain(&deps.group_requirements)
        .any(|r| is_pytest_requirement(r));
    deps
}

/// The requirements of one PEP 735 group, with `{include-group = …}` expanded in place.
fn resolve_group(groups: &toml::Table, name: &str) -> Result<Vec<String>, GroupError> {
    let mut out = Vec::new();
    let mut stack = Vec::new();
    expand(groups, name, &mut stack, &mut out)?;
    Ok(out)
}

/// A `[dependency-groups]` group that cannot be expanded (PEP 735's errors), by group name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum GroupError {
    #[error("include-group cycle: {}", .0.join(" -> "))]
    Cycle(Vec<String>),
    #[error("group `{parent}` includes `{name}`, which is not defined")]
    UndefinedInclude { parent: String, name: String },
    #[error("group `{0}` is not defined")]
    Undefined(String),
    #[error("group `{0}` is not a list")]
    NotList(String),
    #[error("group `{name}` has an entry that is neither a requirement nor {{include-group = …}}: {item}")]
    BadEntry { name: String, item: String },
}

fn expand(groups: &toml::Table, name: &str, stack: &mut Vec<String>, out: &mut Vec<String>) -> Result<(), GroupError> {
    let wanted = normalize(name);
    if stack.contains(&wanted) {
        stack.push(wanted);
        return Err(GroupError::Cycle(std::mem::take(stack)));
    }
    let Some((_, value)) = groups.iter().find(|(key, _)| normalize(key) == wanted) else {
        return Err(match stack.last() {
            Some(parent) => GroupError::UndefinedInclude { parent: parent.clone(), name: name.to_string() },
            None => GroupError::Undefined(name.to_string()),
        });
    };
    let Some(items) = value.as_array() else {
        return Err(GroupError::NotList(name.to_string()));
    };
    stack.push(wanted);
    for item in items {
        if let Some(req) = item.as_str() {
            out.push(req.to_string());
        } else if let Some(include) = item.as_table().and_then(|t| t.get("include-group")).and_then(|v| v.as_str()) {
            expand(groups, include, stack, out)?;
        } else {
            return Err(GroupError::BadEntry { name: name.to_string(), item: item.to_string() });
        }
    }
    stack.pop();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::files_of;
    use super::*;

    fn project(entries: &[(&str, &str)]) -> (tempfile::TempDir, ProjectFiles, Option<toml::Table>) {
        let (dir, files) = files_of(entries);
        let pyproject = files.read("pyproject.toml").map(|t| toml::from_str(&t).unwrap());
        (dir, files, pyproject)
    }

    #[test]
    fn uv_workspace_members_are_the_globbed_directories_with_a_pyproject() {
        let (_dir, files, pyproject) = project(&[
            (
                "pyproject.toml",
                "[tool.uv.workspace]\nmembers = [\"packages/*\", \"tools/cli\"]\nexclude = [\"packages/legacy\"]\n",
            ),
            ("packages/a/pyproject.toml", ""),
            ("packages/b/pyproject.toml", ""),
            ("packages/legacy/pyproject.toml", ""),
            ("packages/notes/README.md", ""),
            ("tools/cli/pyproject.toml", ""),
        ]);
        let deps = read(&files, pyproject.as_ref());
        assert_eq!(deps.workspace_members, ["packages/a", "packages/b", "tools/cli"]);
        let (_dir, files, pyproject) = project(&[("pyproject.toml", "[project]\nname = \"x\"\n")]);
        assert!(read(&files, pyproject.as_ref()).workspace_members.is_empty());
    }

    #[test]
    fn include_group_is_expanded_and_only_test_groups_are_chosen() {
        let (_d, files, py) = project(&[(
            "pyproject.toml",
            "[dependency-groups]\nPytest_Tools = [\"pytest>=8\", \"iniconfig\"]\n\
             tests = [{include-group = \"pytest-tools\"}, \"tomli-w\"]\ndocs = [\"sphinx\"]\n\
             dev = [{include-group = \"tests\"}, \"ruff\"]\n",
        )]);
        let deps = read(&files, py.as_ref());
        assert_eq!(deps.group_requirements, vec!["pytest>=8", "iniconfig", "tomli-w"]);
        assert_eq!(deps.found, vec!["pyproject.toml [dependency-groups] tests"]);
        assert!(deps.declares_pytest);
        assert!(deps.problems.is_empty(), "{:?}", deps.problems);
    }

    #[test]
    fn dev_group_is_the_fallback() {
        let (_d, files, py) =
            project(&[("pyproject.toml", "[dependency-groups]\ndev = [\"pytest\", \"freezegun\"]\ndocs = [\"x\"]\n")]);
        assert_eq!(read(&files, py.as_ref()).group_requirements, vec!["pytest", "freezegun"]);
    }

    #[test]
    fn include_group_cycles_and_missing_groups_are_problems_not_hangs() {
        let (_d, files, py) = project(&[(
            "pyproject.toml",
            "[dependency-groups]\ntest = [{include-group = \"a\"}]\na = [{include-group = \"test\"}]\n",
        )]);
        let deps = read(&files, py.as_ref());
        assert!(deps.problems[0].contains("include-group cycle: test -> a -> test"), "{:?}", deps.problems);

        let (_d, files, py) =
            project(&[("pyproject.toml", "[dependency-groups]\ntest = [{include-group = \"nope\"}]\n")]);
        let deps = read(&files, py.as_ref());
        assert!(deps.problems[0].contains("group `test` includes `nope`, which is not defined"), "{:?}", deps.problems);
    }

    #[test]
    fn tool_environments_are_read() {
        let (_d, files, py) = project(&[(
            "pyproject.toml",
            "[project]\nname = \"x\"\n[project.optional-dependencies]\ncli = [\"click\"]\n\
             [tool.uv]\ndev-dependencies = [\"pytest\"]\n\
             [tool.pdm.dev-dependencies]\ntest = [\"-e file:///${PROJECT_ROOT}/sub\", \"pytest-mock\"]\nlint = [\"ruff\"]\n\
             [tool.hatch.envs.hatch-test]\nextra-dependencies = [\"freezegun\"]\nfeatures = [\"cli\"]\n",
        )]);
        let deps = read(&files, py.as_ref());
        assert_eq!(deps.group_requirements, vec!["pytest", "pytest-mock", "freezegun"]);
        assert_eq!(deps.extras, vec!["cli"]);
        assert_eq!(deps.extra_requirements, vec!["click"]);
    }

    #[test]
    fn requirements_directories_follow_the_convention() {
        let (_d, files, py) = project(&[
            ("requirements/tests.txt", "pytest==8.3.0\n"),
            ("requirements/docs.txt", "sphinx\n"),
            ("requirements.txt", "# nothing\n"),
            ("requirements-dev.txt", "ruff # linter\n"),
        ]);
        let deps = read(&files, py.as_ref());
        assert_eq!(deps.requirement_files, vec!["requirements-dev.txt", "requirements/tests.txt"]);
        assert!(deps.declares_pytest);
    }

    #[test]
    fn extras_follow_the_same_rule() {
        let (_d, files, py) = project(&[(
            "pyproject.toml",
            "[project]\nname = \"x\"\n[project.optional-dependencies]\ntest = [\"pytest\"]\ndev = [\"black\"]\n",
        )]);
        let deps = read(&files, py.as_ref());
        assert_eq!(deps.extras, vec!["test"]);
        assert_eq!(deps.extra_requirements, vec!["pytest"]);
    }
}
