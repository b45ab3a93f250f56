//! Python projects nested in a Python project, outside what its pytest collects.
//!
//! A root whose pytest configuration sets `testpaths` collects only there; a directory below it
//! with its own `pyproject.toml` or `setup.py` and tests of its own is then neither run nor (before
//! this) named. It is named as left out, with why, as nested projects of the other ecosystems
//! are: the repository's own `pytest` does not run it either, and a `[[suite]]` can.

use super::super::{Members, ProjectFiles};
use crate::model::LeftOut;

/// The nested Python projects with tests that the root's `testpaths` leave out.
pub(super) fn left_out(files: &ProjectFiles) -> Members {
    let mut members = Members::default();
    let Some(testpaths) = testpaths(files) else { return members };
    let under = |file: &str, dir: &str| dir.is_empty() || file.starts_with(&format!("{dir}/"));
    let mut projects: Vec<&str> = files
        .files
        .iter()
        .filter_map(|f| f.strip_suffix("/pyproject.toml").or_else(|| f.strip_suffix("/setup.py")))
        .collect();
    projects.sort_unstable();
    projects.dedup();
    for dir in projects {
        let collected = testpaths.iter().any(|t| under(dir, t) || under(t, dir) && dir != t.as_str());
        if collected || members.left_out.iter().any(|l| under(dir, &l.path)) {
            continue;
        }
        let tests = files.files.iter().filter(|f| under(f, dir) && is_test_file(f)).count();
        if tests > 0 {
            members.left_out.push(LeftOut {
                path: dir.to_string(),
                reason: format!(
                    "a Python project of its own ({tests} test file{}) outside pytest's testpaths ({}): the \
                     root's pytest does not collect it; give it a [[suite]] to run it",
                    if tests == 1 { "" } else { "s" },
                    testpaths.join(", ")
                ),
            });
        }
    }
    members
}

/// `testpaths` from the root's pytest configuration file, `/`-separated without `./`; `None` when
/// that file does not set it. Only the file pytest reads counts: a pytest.ini with only `markers`
/// makes pytest ignore the `testpaths` of pyproject.toml.
fn testpaths(files: &ProjectFiles) -> Option<Vec<String>> {
    let clean = |p: &str| p.trim().trim_start_matches("./").trim_end_matches('/').to_string();
    let paths: Vec<String> = configured_testpaths(files)?.iter().map(|p| clean(p)).filter(|p| !p.is_empty()).collect();
    (!paths.is_empty()).then_some(paths)
}

/// The `testpaths` of the configuration file pytest picks at the root, picked as pytest 9 does
/// (`_pytest/config/findpaths.py`): the first of pytest.toml, .pytest.toml, pytest.ini and
/// .pytest.ini (each even when it sets nothing), then pyproject.toml with a `[tool.pytest]` or
/// `[tool.pytest.ini_options]` table, tox.ini with `[pytest]`, setup.cfg with `[tool:pytest]`.
fn configured_testpaths(files: &ProjectFiles) -> Option<Vec<String>> {
    let toml_list = |value: &toml::Value| -> Option<Vec<String>> {
        match value {
            toml::Value::Array(items) => Some(items.iter().filter_map(|v| v.as_str()).map(str::to_string).collect()),
            toml::Value::String(one) => Some(one.split_whitespace().map(str::to_string).collect()),
            _ => None,
        }
    };
    for name in ["pytest.toml", ".pytest.toml"] {
        if let Some(text) = files.read(name) {
            let table = text.parse::<toml::Table>().ok()?;
            return table.get("pytest")?.get("testpaths").and_then(toml_list);
        }
    }
    for name in ["pytest.ini", ".pytest.ini"] {
        if let Some(text) = files.read(name) {
            return ini_testpaths(&text, "[pytest]");
        }
    }
    let pyproject = files.read("pyproject.toml").and_then(|t| t.parse::<toml::Table>().ok());
    if let Some(pytest) = pyproject.as_ref().and_then(|t| t.get("tool")?.get("pytest")?.as_table()) {
        // Native keys beside `ini_options` are pytest 9's TOML mode, which reads only those.
        let native = pytest.keys().any(|k| k != "ini_options");
        let table = if native { Some(pytest) } else { pytest.get("ini_options").and_then(toml::Value::as_table) };
        if let Some(table) = table {
            return table.get("testpaths").and_then(toml_list);
        }
    }
    for (file, section) in [("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")] {
        if let Some(text) = files.read(file).filter(|text| text.lines().any(|l| l.trim() == section)) {
            return ini_testpaths(&text, section);
        }
    }
    None
}

/// The `testpaths` value of `section` in an ini file (words over one or more lines).
fn ini_testpaths(text: &str, section: &str) -> Option<Vec<String>> {
    let mut in_section = false;
    let mut value: Option<Vec<String>> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_section = trimmed == section;
            if value.is_some() {
                break;
            }
            continue;
        }
        if !in_section {
            continue;
        }
        match &mut value {
            // A continuation line is indented.
            Some(words) if line.starts_with([' ', '\t']) && !trimmed.is_empty() => {
                words.extend(trimmed.split_whitespace().map(str::to_string));
            }
            Some(_) => break,
            None => {
                if let Some((key, rest)) = trimmed.split_once('=')
                    && key.trim() == "testpaths"
                {
                    value = Some(rest.split_whitespace().map(str::to_string).collect());
                }
            }
        }
    }
    value.filter(|v| !v.is_empty())
}

fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystems::python::tests::files_of as listing;

    #[test]
    fn a_nested_project_outside_testpaths_is_named_and_one_inside_is_not() {
        let (_dir, files) = listing(&[
            ("pyproject.toml", "[project]\nname = 'x'\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n"),
            ("tests/test_root.py", ""),
            ("tools/cli/pyproject.toml", "[project]\nname = 'cli'\n"),
            ("tools/cli/tests/test_cli.py", ""),
            ("tools/cli/sub/setup.py", ""),
            ("tests/fixtures/proj/pyproject.toml", ""),
            ("tests/fixtures/proj/test_inside.py", ""),
            ("docs/pyproject.toml", ""),
        ]);
        let left: Vec<(String, String)> = left_out(&files).left_out.into_iter().map(|l| (l.path, l.reason)).collect();
        assert_eq!(left.len(), 1, "{left:?}");
        assert_eq!(left[0].0, "tools/cli");
        assert!(left[0].1.contains("1 test file") && left[0].1.contains("(tests)"), "{}", left[0].1);
        // Without testpaths pytest collects the whole tree: nothing is left out.
        let (_dir, files) =
            listing(&[("pyproject.toml", "[project]\nname = 'x'\n"), ("a/pyproject.toml", ""), ("a/test_a.py", "")]);
        assert!(left_out(&files).left_out.is_empty());
    }

    /// pytest reads one configuration file, the first it finds in its order; `testpaths` from any
    /// other is not pytest's (QA D7: a pytest.ini with only `markers` beside a pyproject.toml
    /// with `testpaths`).
    #[test]
    fn testpaths_come_only_from_the_file_pytest_reads() {
        let pyproject = ("pyproject.toml", "[project]\nname = 'x'\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n");
        // The files at the root, and the testpaths fcorr must read from them.
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<&'a [&'a str]>);
        let cases: [Case; 9] = [
            (&[pyproject, ("pytest.ini", "[pytest]\nmarkers =\n    slow\n")], None),
            (&[pyproject, (".pytest.ini", "")], None),
            (&[pyproject, ("pytest.toml", "[pytest]\ntestpaths = ['it']\n")], Some(&["it"])),
            (
                &[
                    ("pyproject.toml", "[tool.pytest.ini_options]\nmarkers = ['slow']\n"),
                    ("pytest.ini", "[pytest]\ntestpaths = tests\n"),
                ],
                Some(&["tests"]),
            ),
            (&[pyproject, ("setup.cfg", "[tool:pytest]\ntestpaths = other\n")], Some(&["tests"])),
            (
                &[
                    ("pyproject.toml", "[project]\nname = 'x'\n"),
                    ("setup.cfg", "[tool:pytest]\ntestpaths = ./tests/\n"),
                ],
                Some(&["tests"]),
            ),
            (
                &[
                    ("pyproject.toml", "[tool.pytest.ini_options]\nmarkers = ['slow']\n"),
                    ("tox.ini", "[pytest]\ntestpaths = tests\n"),
                ],
                None,
            ),
            (&[("tox.ini", "[tox]\n"), ("setup.cfg", "[tool:pytest]\ntestpaths = t\n")], Some(&["t"])),
            (&[("pyproject.toml", "[tool.pytest]\ntestpaths = ['native']\n")], Some(&["native"])),
        ];
        for (i, (entries, want)) in cases.iter().enumerate() {
            let (_dir, files) = listing(entries);
            let want = want.map(|w| w.iter().map(|p| p.to_string()).collect::<Vec<_>>());
            assert_eq!(testpaths(&files), want, "case {i}: {entries:?}");
        }
    }

    #[test]
    fn testpaths_are_read_from_ini_files_over_lines() {
        assert_eq!(
            ini_testpaths("[pytest]\ntestpaths =\n    tests\n    integration\naddopts = -q\n", "[pytest]"),
            Some(vec!["tests".to_string(), "integration".to_string()])
        );
        assert_eq!(ini_testpaths("[tool:pytest]\ntestpaths = t\n", "[pytest]"), None);
    }
}
