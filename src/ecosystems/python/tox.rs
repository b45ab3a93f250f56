//! The test dependencies tox gives its test environments (`[testenv]` and any
//! `[testenv:test]`-like one): `deps` lines, `-r` and `-c` files among them, and `extras`. Only
//! what tox would install in every environment is taken; factor-conditional lines and unknown
//! substitutions are left out.
//!
//! tox reads one configuration, the first of: `tox.ini`, `setup.cfg` with a `[tox:tox]`
//! section, the ini text of `pyproject.toml`'s `[tool.tox] legacy_tox_ini`. The same order here:
//! a project whose tox lives in setup.cfg or pyproject.toml gets what tox would install.

use super::super::ProjectFiles;
use super::deps::choose_test_names;

/// Deepest `{[section]key}` reference followed (tox allows chains; a cycle must not hang).
const MAX_REFERENCE_DEPTH: usize = 8;

/// What tox's configuration declares for the tests.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ToxDeps {
    /// `-r file` lines, relative to the project root.
    pub requirement_files: Vec<String>,
    /// `-c file` lines (constraints: they pin what the other lines install), relative to the root.
    pub constraint_files: Vec<String>,
    /// Plain requirement strings.
    pub requirements: Vec<String>,
    /// `extras = …`: the project's own extras tox installs it with.
    pub extras: Vec<String>,
    /// The sections read, e.g. `tox.ini [testenv]`, `setup.cfg [testenv]`.
    pub sections: Vec<String>,
}

/// Where tox's configuration was found: the file, how it is named in messages, and its ini text.
struct Source {
    /// The file, relative to the project root.
    file: &'static str,
    /// How its sections are named: `tox.ini`, `setup.cfg`, `pyproject.toml [tool.tox] legacy_tox_ini`.
    label: &'static str,
    text: String,
    /// Lines of the file above the ini text's first line (the `legacy_tox_ini` string starts
    /// below its key), so a problem names the file's own line.
    offset: usize,
}

/// The configuration tox itself would read, in its order; `Err` for one that cannot be read.
fn source(files: &ProjectFiles, pyproject: Option<&toml::Table>) -> Result<Option<Source>, ToxError> {
    let read = |file: &'static str| {
        crate::fsio::read_text(&files.root.join(file), crate::fsio::PROJECT_FILE).map_err(|e| ToxError {
            file: file.to_string(),
            line: 1,
            problem: format!("cannot be read ({e}), so its test deps cannot"),
        })
    };
    if files.has("tox.ini") {
        return Ok(Some(Source { file: "tox.ini", label: "tox.ini", text: read("tox.ini")?, offset: 0 }));
    }
    // setup.cfg is tox's only when it has the core section (tox ignores it otherwise), so a
    // setup.cfg that cannot be read is not tox's problem here.
    if let Some(text) = files.has("setup.cfg").then(|| files.read("setup.cfg")).flatten()
        && text.lines().any(|l| l.trim() == "[tox:tox]")
    {
        return Ok(Some(Source { file: "setup.cfg", label: "setup.cfg", text, offset: 0 }));
    }
    let legacy = pyproject.and_then(|t| t.get("tool")?.get("tox")?.get("legacy_tox_ini")?.as_str());
    let Some(ini) = legacy else { return Ok(None) };
    Ok(Some(Source {
        file: "pyproject.toml",
        label: "pyproject.toml [tool.tox] legacy_tox_ini",
        text: ini.to_string(),
        offset: files.read("pyproject.toml").map_or(0, |text| legacy_offset(&text)),
    }))
}

/// The lines of `pyproject.toml` above `legacy_tox_ini`'s first line of text: its key's line,
/// less one when the text starts on that line (TOML drops a newline right after `"""`).
fn legacy_offset(pyproject: &str) -> usize {
    let key = pyproject.lines().enumerate().find(|(_, l)| l.trim_start().starts_with("legacy_tox_ini"));
    let Some((index, line)) = key else { return 0 };
    let opens_alone = ["\"\"\"", "'''"].iter().any(|quotes| line.trim_end().ends_with(quotes));
    if opens_alone { index + 1 } else { index }
}

/// One `key = value` of an ini section: the value's lines (continuations included), each with
/// its 1-based line number in the file.
#[derive(Debug, Clone)]
struct Entry {
    section: String,
    key: String,
    lines: Vec<(usize, String)>,
}

/// configparser's reading, as far as tox needs it: `[section]` headers, `key = value` (or
/// `key: value`), indented continuation lines, whole-line `#`/`;` comments. Never fails: a line
/// that is none of these is ignored, as tox's own parser would reject the file itself.
fn entries(text: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    let mut section = String::new();
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            if let Some(last) = out.last_mut().filter(|e| e.section == section) {
                last.lines.push((number, trimmed.to_string()));
            }
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            section = name.trim().to_string();
            continue;
        }
        let Some(at) = trimmed.find(['=', ':']) else { continue };
        let (key, value) = (trimmed[..at].trim(), trimmed[at + 1..].trim());
        let mut entry = Entry { section: section.clone(), key: key.to_string(), lines: Vec::new() };
        if !value.is_empty() {
            entry.lines.push((number, value.to_string()));
        }
        out.push(entry);
    }
    out
}

fn value<'a>(entries: &'a [Entry], section: &str, key: &str) -> Option<&'a Entry> {
    entries.iter().rev().find(|e| e.section == section && e.key == key)
}

/// The lines of `deps` with `{[section]key}` references replaced by what they name.
fn expand(entries: &[Entry], lines: &[(usize, String)], depth: usize, out: &mut Vec<(usize, String)>) {
    for (number, line) in lines {
        let reference = line.strip_prefix("{[").and_then(|r| r.strip_suffix('}')).and_then(|r| r.split_once(']'));
        match reference {
            Some((section, key)) if depth < MAX_REFERENCE_DEPTH => {
                if let Some(entry) = value(entries, section.trim(), key.trim()) {
                    expand(entries, &entry.lines, depth + 1, out);
                }
            }
            Some(_) => {}
            None => out.push((*number, line.clone())),
        }
    }
}

/// A factor-conditional line (`py38: pytest<8`, `!windows: x`, `{py311,py312}-django: x`):
/// installed only in some environments, so not here.
fn is_conditional(line: &str) -> bool {
    let Some((factors, _)) = line.split_once(':') else { return false };
    !factors.is_empty()
        && factors.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ',' | '!' | '{' | '}'))
}

/// A problem in tox's configuration fcorr cannot install around, with its file and line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file} line {line}: {problem}")]
pub(crate) struct ToxError {
    /// `tox.ini`, `setup.cfg` or `pyproject.toml`, relative to the project root.
    pub file: String,
    pub line: usize,
    pub problem: String,
}

/// Reads the test environments of tox's configuration (see the module). `Ok(None)` without one,
/// or without a `[testenv]`-like section in it.
pub(crate) fn read(files: &ProjectFiles, pyproject: Option<&toml::Table>) -> Result<Option<ToxDeps>, ToxError> {
    let Some(source) = source(files, pyproject)? else { return Ok(None) };
    let entries = entries(&source.text);
    let named: Vec<&str> = entries.iter().filter_map(|e| e.section.strip_prefix("testenv:")).collect();
    let mut sections: Vec<String> = Vec::new();
    if entries.iter().any(|e| e.section == "testenv") {
        sections.push("testenv".into());
    }
    let mut unique: Vec<&str> = Vec::new();
    for name in named {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    // `dev` only when no test-named environment exists, by the rule of every other source.
    sections.extend(choose_test_names(unique).into_iter().map(|n| format!("testenv:{n}")));
    if sections.is_empty() {
        return Ok(None);
    }
    let mut deps = ToxDeps::default();
    for section in &sections {
        deps.sections.push(format!("{} [{section}]", source.label));
        if let Some(entry) = value(&entries, section, "deps") {
            let mut lines = Vec::new();
            expand(&entries, &entry.lines, 0, &mut lines);
            for (number, line) in lines {
                take_line(files, &mut deps, &line).map_err(|problem| ToxError {
                    file: source.file.to_string(),
                    line: source.offset + number,
                    problem,
                })?;
            }
        }
        if let Some(entry) = value(&entries, section, "extras") {
            for extra in entry.lines.iter().flat_map(|(_, l)| l.split(',')).map(str::trim).filter(|e| !e.is_empty()) {
                if !is_conditional(extra) && !extra.contains('{') && !deps.extras.iter().any(|x| x == extra) {
                    deps.extras.push(extra.to_string());
                }
            }
        }
    }
    Ok(Some(deps))
}

/// One `deps` line: a requirement, a `-r` or `-c` file, or something tox-specific that is left
/// out. `Err`: what is wrong with the line (a file it names does not exist).
fn take_line(files: &ProjectFiles, deps: &mut ToxDeps, line: &str) -> Result<(), String> {
    let line = line.split(" #").next().unwrap_or("").trim();
    if line.is_empty() || is_conditional(line) {
        return Ok(());
    }
    let line = line.replace("{toxinidir}/", "").replace("{toxinidir}", ".");
    let named = [("--requirement", "-r"), ("-r", "-r"), ("--constraint", "-c"), ("-c", "-c")]
        .into_iter()
        .find_map(|(flag, short)| line.strip_prefix(flag).map(|rest| (short, rest)));
    if let Some((flag, rest)) = named {
        let path = rest.trim_start_matches('=').trim();
        if path.is_empty() || path.contains('{') {
            return Ok(());
        }
        let path = path.trim_start_matches("./").to_string();
        if !files.has(&path) {
            return Err(format!("deps names `{flag} {path}`, which does not exist (tox could not install it either)"));
        }
        // Constraints are installed as constraints: they pin the versions the other lines get.
        let list = if flag == "-r" { &mut deps.requirement_files } else { &mut deps.constraint_files };
        if !list.contains(&path) {
            list.push(path);
        }
        return Ok(());
    }
    // Editable installs of the project itself (`-e .`, `.`), other installer options, and
    // substitutions fcorr cannot resolve (`{env:X}`, `{posargs}`).
    if line.starts_with('-') || line == "." || line.contains('{') {
        return Ok(());
    }
    if !deps.requirements.contains(&line) {
        deps.requirements.push(line);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::files_of;
    use super::*;

    #[test]
    fn testenv_deps_requirement_files_references_and_extras_are_read() {
        let (_d, files) = files_of(&[
            (
                "tox.ini",
                "[tox]\nenvlist = py311, lint\n\n[base]\ndeps =\n    attrs>=23\n    {[more]deps}\n[more]\ndeps = iniconfig\n\n\
                 [testenv]\n# comment\ndeps =\n    -r{toxinidir}/requirements_dev.txt\n    pytest>=8  # the runner\n    \
                 py38: mock\n    {[base]deps}\n    -c constraints.txt\n    -e .\n    {env:EXTRA_DEP}\nextras = test, cli\n\
                 commands = pytest {posargs}\n\n[testenv:lint]\ndeps = ruff\n",
            ),
            ("requirements_dev.txt", "six\n"),
            ("constraints.txt", "six==1.16.0\n"),
        ]);
        let deps = read(&files, None).unwrap().unwrap();
        assert_eq!(deps.requirement_files, ["requirements_dev.txt"]);
        assert_eq!(deps.constraint_files, ["constraints.txt"]);
        assert_eq!(deps.requirements, ["pytest>=8", "attrs>=23", "iniconfig"]);
        assert_eq!(deps.extras, ["test", "cli"]);
        assert_eq!(deps.sections, ["tox.ini [testenv]"]);
    }

    /// tox's own order: tox.ini, else setup.cfg with `[tox:tox]`, else pyproject.toml's
    /// `legacy_tox_ini`; `-c` files are constraints; a problem names the file and its own line.
    #[test]
    fn setup_cfg_and_legacy_tox_ini_are_read_in_toxs_order() {
        let cfg = "[metadata]\nname = x\n[tox:tox]\nenvlist = py\n[testenv]\ndeps =\n    six\n    \
                   -c{toxinidir}/constraints.txt\n    --constraint=constraints.txt\n";
        let (_d, files) = files_of(&[("setup.cfg", cfg), ("constraints.txt", "six==1.16.0\n")]);
        let deps = read(&files, None).unwrap().unwrap();
        assert_eq!(
            (deps.requirements, deps.constraint_files),
            (vec!["six".to_string()], vec!["constraints.txt".into()])
        );
        assert_eq!(deps.sections, ["setup.cfg [testenv]"]);
        // A setup.cfg without tox's core section is not tox's; tox.ini, when there, wins.
        let (_d, files) = files_of(&[("setup.cfg", "[testenv]\ndeps = six\n")]);
        assert_eq!(read(&files, None).unwrap(), None);
        let (_d, files) = files_of(&[("setup.cfg", cfg), ("tox.ini", "[testenv]\ndeps = attrs\n")]);
        assert_eq!(read(&files, None).unwrap().unwrap().requirements, ["attrs"]);

        let pyproject = "[project]\nname = \"x\"\n\n[tool.tox]\nlegacy_tox_ini = \"\"\"\n[tox]\nenvlist = py\n\n\
                         [testenv]\ndeps =\n    iniconfig\n    -r requirements/missing.txt\n\"\"\"\n";
        let (_d, files) = files_of(&[("pyproject.toml", pyproject)]);
        let table: toml::Table = toml::from_str(pyproject).unwrap();
        let error = read(&files, Some(&table)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "pyproject.toml line 12: deps names `-r requirements/missing.txt`, which does not exist (tox could not \
             install it either)"
        );
        assert_eq!(pyproject.lines().nth(11), Some("    -r requirements/missing.txt"));
        let fixed = pyproject.replace("    -r requirements/missing.txt\n", "");
        let table: toml::Table = toml::from_str(&fixed).unwrap();
        let deps = read(&files, Some(&table)).unwrap().unwrap();
        assert_eq!(deps.requirements, ["iniconfig"]);
        assert_eq!(deps.sections, ["pyproject.toml [tool.tox] legacy_tox_ini [testenv]"]);
    }

    #[test]
    fn a_missing_requirement_file_is_named_with_its_line() {
        let (_d, files) = files_of(&[("tox.ini", "[testenv]\ndeps =\n    pytest\n    -r requirements/test.txt\n")]);
        let error = read(&files, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "tox.ini line 4: deps names `-r requirements/test.txt`, which does not exist (tox could not install it either)"
        );
    }

    #[test]
    fn hostile_files_never_panic() {
        // No [testenv]; a reference cycle; stray continuation lines; a key without value; not UTF-8.
        let (_d, files) = files_of(&[("tox.ini", "[tox]\nenvlist=py\n")]);
        assert_eq!(read(&files, None).unwrap(), None);
        let (_d, files) = files_of(&[(
            "tox.ini",
            "   orphan continuation\n[testenv]\ndeps = {[a]deps}\n[a]\ndeps = {[testenv]deps}\n=\n[\n[testenv:test]\ndeps\n",
        )]);
        let deps = read(&files, None).unwrap().unwrap();
        assert!(deps.requirements.is_empty(), "{deps:?}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tox.ini"), b"[testenv]\ndeps = caf\xe9\n").unwrap();
        let files = ProjectFiles::scan(dir.path()).unwrap();
        let error = read(&files, None).unwrap_err();
        assert!(error.to_string().starts_with("tox.ini line 1: cannot be read ("), "{error}");
    }

    #[test]
    fn factor_conditions_are_told_from_requirements() {
        for conditional in ["py38: mock", "!windows: pywin", "{py311,py312}-django: x", "django42: Django>=4.2"] {
            assert!(is_conditional(conditional), "{conditional}");
        }
        for plain in ["pytest>=8", "six; python_version < \"3\"", "pkg @ https://x/y.whl", "mock"] {
            assert!(!is_conditional(plain), "{plain}");
        }
    }
}
