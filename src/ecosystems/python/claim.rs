//! How firmly a Python candidate claims the directory it was detected in (`Ecosystem::claim`):
//! a Python project file or a test file at the root makes it this directory's project; test
//! files found only below it, or a pyproject.toml holding only other tools' settings
//! (`[tool.ruff]` in a Go monorepo), do not when projects of another ecosystem are below it.

use super::super::{Claim, ProjectFiles};
use super::{Manifest, REQUIREMENT_FILES, ini_has_section, is_test_file, test_files};

/// `[tool.*]` tables that make a pyproject.toml a Python project's (packaging, environments,
/// tests) rather than only other tools' settings (ruff, black, mypy, codespell...).
const PROJECT_TOOLS: &[&str] =
    &["poetry", "pdm", "hatch", "flit", "setuptools", "uv", "pytest", "maturin", "scikit-build", "tox", "pixi", "rye"];

/// The claim of a Python candidate on `files.root`.
pub(super) fn claim(files: &ProjectFiles) -> Claim {
    let tests = test_files(files);
    if project_here(files) {
        return if tests.is_empty() { Claim::Project } else { Claim::Tests };
    }
    let no_project = match files.has("pyproject.toml") {
        true => "no Python project file here (pyproject.toml holds only other tools' settings)",
        false => "no Python project file here",
    };
    match tests.as_slice() {
        [first, rest @ ..] => {
            let more = if rest.is_empty() { String::new() } else { format!(" and {} more", rest.len()) };
            Claim::Below(format!("test files only below it ({first}{more}) and {no_project}"))
        }
        [] => Claim::Nothing(format!("Python files, but no tests and {no_project}")),
    }
}

/// True when a file at the root makes it a Python project: a test file or conftest.py there, a
/// project or requirements file, pytest's or tox's configuration, or a pyproject.toml with more
/// than other tools' settings (or one that cannot be read: the suite reports its problem).
fn project_here(files: &ProjectFiles) -> bool {
    const ROOT_FILES: [&str; 4] = ["setup.py", "conftest.py", "pytest.ini", "noxfile.py"];
    if files.files.iter().any(|f| !f.contains('/') && is_test_file(f))
        || ROOT_FILES.iter().chain(REQUIREMENT_FILES).any(|f| files.has(f))
        || ["[metadata]", "[options]", "[tool:pytest]"].iter().any(|s| ini_has_section(files, "setup.cfg", s))
        || ["[tox]", "[testenv]", "[pytest]"].iter().any(|s| ini_has_section(files, "tox.ini", s))
    {
        return true;
    }
    if !files.has("pyproject.toml") {
        return false;
    }
    let Some(table) = Manifest::read(files).pyproject else { return true };
    table.keys().any(|key| key != "tool")
        || table
            .get("tool")
            .and_then(toml::Value::as_table)
            .is_some_and(|tools| tools.keys().any(|tool| PROJECT_TOOLS.contains(&tool.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystems::project_of;

    #[test]
    fn a_project_file_or_a_test_at_the_root_claims_it_tests_below_do_not() {
        let claim_of = |files: &[(&str, &str)]| claim(&project_of(files).1);
        assert_eq!(claim_of(&[("pyproject.toml", "[project]\nname='a'\n"), ("tests/test_a.py", "")]), Claim::Tests);
        assert_eq!(claim_of(&[("test_a.py", "")]), Claim::Tests);
        assert_eq!(claim_of(&[("requirements.txt", "")]), Claim::Project);
        assert_eq!(claim_of(&[("pyproject.toml", "[tool.poetry]\nname='a'\n"), ("a_test.py", "")]), Claim::Tests);
        assert_eq!(
            claim_of(&[("pyproject.toml", "[project\n"), ("t/test_a.py", "")]),
            Claim::Tests,
            "its problem is shown"
        );
        let below = claim_of(&[("pyproject.toml", "[tool.ruff]\nline-length = 100\n"), ("scripts/test_a.py", "")]);
        let why = "test files only below it (scripts/test_a.py) and no Python project file here (pyproject.toml holds \
                   only other tools' settings)";
        assert_eq!(below, Claim::Below(why.into()));
        assert!(matches!(claim_of(&[("setup.cfg", "[flake8]\n"), ("tools/gen.py", "")]), Claim::Nothing(_)));
    }
}
