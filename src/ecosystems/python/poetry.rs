//! Poetry's dependency tables, as requirements pip and uv read: the test groups
//! (`[tool.poetry.group.<name>.dependencies]`, and `[tool.poetry.dev-dependencies]`, Poetry 1.1's
//! spelling of the `dev` group), and, for a project without a `[project]` table, the main
//! `[tool.poetry.dependencies]` that `poetry install` puts next to them.
//!
//! Poetry's version syntax is not PEP 508's: `^1.2` is `>=1.2,<2`, `~1.2.3` is `>=1.2.3,<1.3`, a
//! bare `1.2.3` is `==1.2.3`. Those are rewritten here, exactly. A constraint that has no PEP 508
//! form (`^1 || ^2`) is a problem that stops the suite, naming the table and the package:
//! installing some other version than the declared one would test something else. Local `path`
//! dependencies are left out, as pdm's `-e` entries are.

use super::deps::choose_test_names;

/// What Poetry declares for the tests, flattened into requirement strings.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct PoetryDeps {
    pub requirements: Vec<String>,
    /// The tables read, e.g. `pyproject.toml [tool.poetry.group.test.dependencies]`.
    pub found: Vec<String>,
    /// Dependencies that cannot be written as requirements, each naming its table and package.
    pub problems: Vec<String>,
}

/// Reads the test groups, and the main dependencies when `main` (a project without `[project]`).
pub(crate) fn read(pyproject: Option<&toml::Table>, main: bool) -> PoetryDeps {
    let mut out = PoetryDeps::default();
    let Some(poetry) = pyproject.and_then(|t| t.get("tool")?.get("poetry")?.as_table()) else { return out };
    let mut tables: Vec<(String, &toml::Table, bool)> = Vec::new();
    if main && let Some(table) = poetry.get("dependencies").and_then(toml::Value::as_table) {
        tables.push(("[tool.poetry.dependencies]".into(), table, true));
    }
    let groups = poetry.get("group").and_then(toml::Value::as_table);
    let legacy_dev = poetry.get("dev-dependencies").and_then(toml::Value::as_table);
    let mut names: Vec<&str> = groups.map(|g| g.keys().map(String::as_str).collect()).unwrap_or_default();
    if legacy_dev.is_some() && !names.contains(&"dev") {
        names.push("dev");
    }
    for name in choose_test_names(names) {
        let group = groups.and_then(|g| g.get(name)).and_then(|g| g.get("dependencies")).and_then(|d| d.as_table());
        if let Some(table) = group {
            tables.push((format!("[tool.poetry.group.{name}.dependencies]"), table, false));
        }
        if name == "dev"
            && let Some(table) = legacy_dev
        {
            tables.push(("[tool.poetry.dev-dependencies]".into(), table, false));
        }
    }
    for (label, table, main) in tables {
        for (package, spec) in table {
            // The interpreter constraint, not a package.
            if main && package == "python" {
                continue;
            }
            match requirements(package, spec, main) {
                Ok(reqs) => out.requirements.extend(reqs),
                Err(problem) => out.problems.push(format!("pyproject.toml {label} {package}: {problem}")),
            }
        }
        out.found.push(format!("pyproject.toml {label}"));
    }
    out
}

/// The requirements one dependency entry stands for: one, none (a local path, an optional main
/// dependency only an extra installs), or one per alternative of a multiple-constraints list.
fn requirements(package: &str, spec: &toml::Value, main: bool) -> Result<Vec<String>, String> {
    match spec {
        toml::Value::String(constraint) => Ok(vec![format!("{package}{}", version_spec(constraint)?)]),
        toml::Value::Table(table) => Ok(from_table(package, table, main)?.into_iter().collect()),
        toml::Value::Array(alternatives) => {
            let mut out = Vec::new();
            for alternative in alternatives {
                let table = alternative.as_table().ok_or("a list entry that is not a table")?;
                out.extend(from_table(package, table, main)?);
            }
            Ok(out)
        }
        other => Err(format!("`{other}` is neither a version constraint nor a table")),
    }
}

/// `{version = "^1.2", extras = ["x"], markers = "…", python = "^3.9"}`, `{git = …}`, `{url = …}`.
fn from_table(package: &str, table: &toml::Table, main: bool) -> Result<Option<String>, String> {
    let text = |key: &str| table.get(key).and_then(toml::Value::as_str);
    if table.contains_key("path") || (main && table.get("optional").and_then(toml::Value::as_bool) == Some(true)) {
        return Ok(None);
    }
    let extras: Vec<&str> =
        table.get("extras").and_then(toml::Value::as_array).into_iter().flatten().filter_map(|e| e.as_str()).collect();
    let mut requirement = package.to_string();
    if !extras.is_empty() {
        requirement.push_str(&format!("[{}]", extras.join(",")));
    }
    if let Some(git) = text("git") {
        let reference =
            ["rev", "tag", "branch"].iter().find_map(|k| text(k)).map(|r| format!("@{r}")).unwrap_or_default();
        let sub = text("subdirectory").map(|s| format!("#subdirectory={s}")).unwrap_or_default();
        let url = if git.starts_with("git+") { git.to_string() } else { format!("git+{git}") };
        requirement.push_str(&format!(" @ {url}{reference}{sub}"));
    } else if let Some(url) = text("url") {
        requirement.push_str(&format!(" @ {url}"));
    } else {
        requirement.push_str(&version_spec(text("version").unwrap_or("*"))?);
    }
    let mut markers: Vec<String> = Vec::new();
    if let Some(python) = text("python") {
        let clauses = clauses(python)?;
        markers.extend(clauses.iter().map(|(op, v)| {
            let variable = if v.split('.').count() > 2 { "python_full_version" } else { "python_version" };
            format!("{variable} {op} \"{v}\"")
        }));
    }
    if let Some(extra) = text("markers") {
        markers.push(if markers.is_empty() { extra.to_string() } else { format!("({extra})") });
    }
    if !markers.is_empty() {
        // A direct reference needs a space before `;`, or the marker is read as part of the URL.
        requirement.push_str(&format!(" ; {}", markers.join(" and ")));
    }
    Ok(Some(requirement))
}

/// A Poetry constraint as a PEP 440 version specifier (`>=1.2,<2`), empty for any version.
fn version_spec(constraint: &str) -> Result<String, String> {
    Ok(clauses(constraint)?.iter().map(|(op, v)| format!("{op}{v}")).collect::<Vec<_>>().join(","))
}

/// The `(operator, version)` clauses a Poetry constraint means, all of which must hold.
fn clauses(constraint: &str) -> Result<Vec<(&'static str, String)>, String> {
    if constraint.contains('|') {
        return Err(format!("`{constraint}` allows either of several ranges (`||`), which a requirement cannot say"));
    }
    // `>= 1.2, < 2` and `>=1.2 <2` both mean `>=1.2,<2`: join operators to their versions first.
    let mut joined = String::new();
    let mut after_operator = false;
    for c in constraint.chars() {
        if c.is_whitespace() && after_operator {
            continue;
        }
        after_operator = matches!(c, '<' | '>' | '=' | '!' | '~' | '^');
        joined.push(c);
    }
    let mut out = Vec::new();
    for token in joined.split([',', ' ', '\t']).filter(|t| !t.is_empty() && *t != "*") {
        const OPERATORS: [(&str, &str); 8] =
            [("~=", "~="), ("==", "=="), ("!=", "!="), (">=", ">="), ("<=", "<="), (">", ">"), ("<", "<"), ("=", "==")];
        if let Some(version) = token.strip_prefix('^') {
            out.push((">=", version.to_string()));
            out.push(("<", bump(version, caret_index(&release(version, constraint)?))?));
        } else if let Some(version) = token.strip_prefix('~').filter(|v| !v.starts_with('=')) {
            let parts = release(version, constraint)?;
            out.push((">=", version.to_string()));
            out.push(("<", bump(version, usize::from(parts.len() > 1))?));
        } else if let Some((op, version)) = OPERATORS.iter().find_map(|(p, op)| token.strip_prefix(p).map(|v| (*op, v)))
        {
            out.push((op, version.to_string()));
        } else {
            out.push(("==", token.to_string()));
        }
    }
    Ok(out)
}

/// The numeric release segments of `version` (`1.2.3b1` → 1, 2, 3).
fn release(version: &str, constraint: &str) -> Result<Vec<u64>, String> {
    let end = version.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(version.len());
    let parts: Result<Vec<u64>, _> = version[..end].trim_end_matches('.').split('.').map(str::parse).collect();
    match parts {
        Ok(parts) if !parts.is_empty() => Ok(parts),
        _ => Err(format!("`{constraint}`: `{version}` is not a version")),
    }
}

/// Which segment a caret bumps: the first that is not zero, else the last given (`^0.0` is
/// `<0.1`, `^0` is `<1`).
fn caret_index(parts: &[u64]) -> usize {
    parts.iter().position(|&p| p != 0).unwrap_or(parts.len().saturating_sub(1))
}

/// `version` with segment `index` raised by one and the ones after it dropped (`1.2.3`, 1 → `1.3`).
fn bump(version: &str, index: usize) -> Result<String, String> {
    let parts = release(version, version)?;
    let mut upper: Vec<u64> = parts.iter().take(index + 1).copied().collect();
    match upper.last_mut() {
        Some(last) => *last += 1,
        None => return Err(format!("`{version}` is not a version")),
    }
    Ok(upper.iter().map(u64::to_string).collect::<Vec<_>>().join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    /// Poetry's own examples (its "Dependency specification" page), as PEP 440 specifiers.
    #[test]
    fn constraints_become_version_specifiers() {
        for (poetry, pep440) in [
            ("^1.2.3", ">=1.2.3,<2"),
            ("^1.2", ">=1.2,<2"),
            ("^1", ">=1,<2"),
            ("^0.2.3", ">=0.2.3,<0.3"),
            ("^0.0.3", ">=0.0.3,<0.0.4"),
            ("^0.0", ">=0.0,<0.1"),
            ("^0", ">=0,<1"),
            ("~1.2.3", ">=1.2.3,<1.3"),
            ("~1.2", ">=1.2,<1.3"),
            ("~1", ">=1,<2"),
            ("~=1.2", "~=1.2"),
            ("*", ""),
            ("", ""),
            ("1.2.*", "==1.2.*"),
            ("1.2.3", "==1.2.3"),
            ("=1.2.3", "==1.2.3"),
            (">= 1.2, < 2.0", ">=1.2,<2.0"),
            (">=1.2 <2.0", ">=1.2,<2.0"),
            ("!=1.5", "!=1.5"),
            ("^2.0.0b1", ">=2.0.0b1,<3"),
        ] {
            assert_eq!(version_spec(poetry).as_deref(), Ok(pep440), "{poetry}");
        }
        assert!(version_spec("^1 || ^2").unwrap_err().contains("`||`"));
        assert!(version_spec("^latest").unwrap_err().contains("`latest` is not a version"));
    }

    #[test]
    fn test_groups_are_read_by_the_rule_of_every_source() {
        let py = table(
            "[tool.poetry]\nname = \"x\"\n\
             [tool.poetry.dependencies]\npython = \"^3.9\"\nrequests = \"^2.31\"\n\
             [tool.poetry.group.test.dependencies]\npytest = \"^8.0\"\n\
             six = { version = \"~1.16\", markers = \"sys_platform != 'win32'\" }\n\
             attrs = { version = \"*\", extras = [\"tests\"], python = \"^3.9\" }\n\
             lib = { path = \"../lib\", develop = true }\n\
             tool = { git = \"https://e.x/tool.git\", tag = \"v1\" }\n\
             [tool.poetry.group.docs.dependencies]\nsphinx = \"*\"\n\
             [tool.poetry.dev-dependencies]\nblack = \"*\"\n",
        );
        let deps = read(Some(&py), false);
        assert_eq!(
            deps.requirements,
            [
                "pytest>=8.0,<9",
                "six>=1.16,<1.17 ; sys_platform != 'win32'",
                "attrs[tests] ; python_version >= \"3.9\" and python_version < \"4\"",
                "tool @ git+https://e.x/tool.git@v1",
            ]
        );
        assert_eq!(deps.found, ["pyproject.toml [tool.poetry.group.test.dependencies]"]);
        // Without a `test` group, `dev` (and Poetry 1.1's dev-dependencies) is the fallback; the
        // main dependencies come too when nothing else installs them.
        let py = table(
            "[tool.poetry.dependencies]\npython = \"^3.9\"\nrequests = \"^2.31\"\n\
             extra = { version = \"^1\", optional = true }\n\
             [tool.poetry.dev-dependencies]\npytest = \"^7\"\n",
        );
        let deps = read(Some(&py), true);
        assert_eq!(deps.requirements, ["requests>=2.31,<3", "pytest>=7,<8"]);
        assert_eq!(
            deps.found,
            ["pyproject.toml [tool.poetry.dependencies]", "pyproject.toml [tool.poetry.dev-dependencies]"]
        );
    }

    #[test]
    fn a_constraint_without_a_requirement_form_is_a_problem_naming_the_package() {
        let py = table("[tool.poetry.group.test.dependencies]\nnumpy = \"^1.26 || ^2.0\"\nsix = 3\n");
        let deps = read(Some(&py), false);
        assert_eq!(
            deps.problems,
            [
                "pyproject.toml [tool.poetry.group.test.dependencies] numpy: `^1.26 || ^2.0` allows either of several \
                 ranges (`||`), which a requirement cannot say",
                "pyproject.toml [tool.poetry.group.test.dependencies] six: `3` is neither a version constraint nor a \
                 table",
            ]
        );
    }
}
