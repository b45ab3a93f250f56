//! pytest failures that happen before any test runs, put in words that name the cause: a test
//! module that could not be collected (an error case, with the first import error), and a
//! conftest that could not be imported (pytest exit 4, no report at all).

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use crate::collect;
use crate::model::{Case, CaseStatus, Diagnostic, Severity, SuiteError, SuiteErrorKind};

/// The `message` pytest's JUnit writer gives a module it could not collect.
const COLLECTION_FAILURE: &str = "collection failure";

fn error_line() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    PATTERN.get_or_init(|| Regex::new(r"^E\s+(\w*(?:Error|Exception|Exit)\b.*)$").expect("valid regex"))
}

/// The first `E   ModuleNotFoundError: …` / `E   ImportError: …` line of a traceback, else the
/// first `E   SomeError: …` line.
fn first_error(text: &str) -> Option<String> {
    let errors: Vec<&str> = text
        .lines()
        .filter_map(|l| error_line().captures(l.trim_end()))
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .collect();
    errors
        .iter()
        .find(|e| e.starts_with("ModuleNotFoundError") || e.starts_with("ImportError"))
        .or(errors.first())
        .map(|e| e.trim().to_string())
}

/// Rewrites pytest's "collection failure" error cases: the message says which file could not be
/// collected and why, and the case gets that file and the line of the failing import.
pub(crate) fn explain_collection_errors(cases: &mut [Case], root: &Path) {
    static MODULE: OnceLock<Regex> = OnceLock::new();
    static LOCATION: OnceLock<Regex> = OnceLock::new();
    // The patterns are literals; they compile.
    let module = MODULE.get_or_init(|| {
        Regex::new(r"(?:ImportError while importing test module|while loading conftest) '([^']+)'")
            .expect("valid regex")
    });
    let location = LOCATION.get_or_init(|| Regex::new(r"(?m)^(\S+\.py):(\d+): in <module>").expect("valid regex"));
    for case in cases.iter_mut() {
        if case.status != CaseStatus::Error || case.message() != Some(COLLECTION_FAILURE) {
            continue;
        }
        let details = case.details().unwrap_or_default();
        let file = module
            .captures(&details)
            .map(|c| collect::relativize(&c[1], Some(root)))
            .or_else(|| case.file.as_deref().map(String::from))
            .unwrap_or_else(|| format!("{}.py", case.name.replace('.', "/")));
        let line = location
            .captures_iter(&details)
            .find(|c| c[1] == file || file.ends_with(&format!("/{}", &c[1])))
            .and_then(|c| c[2].parse().ok());
        let why = first_error(&details).unwrap_or_else(|| "see the details".to_string());
        case.set_message(Some(format!("{file} could not be collected: {why}")));
        if case.file.is_none() {
            case.file = Some(file.into());
        }
        if case.line.is_none() {
            case.line = line;
        }
    }
}

/// The `message` pytest's JUnit writer gives a module skipped whole while being collected
/// (`pytest.importorskip` at module level, `pytest.skip(allow_module_level=True)`).
const COLLECTION_SKIP: &str = "collection skipped";

/// Puts pytest's own reason on the modules it skipped whole (its JUnit report says only
/// "collection skipped"; the element's text holds `('path', line, 'Skipped: reason')`), and
/// returns a warning for each one skipped because a module could not be imported: a test
/// dependency fcorr did not install looks exactly like that, and the run would pass without
/// those tests. A warning, not a failure: `importorskip` is also how projects skip tests of
/// optional backends on purpose.
pub(crate) fn explain_collection_skips(
    cases: &mut [Case],
    report: &str,
    root: &Path,
    search: &DependencySearch,
) -> Vec<Diagnostic> {
    static ELEMENT: OnceLock<Regex> = OnceLock::new();
    static LOCATION: OnceLock<Regex> = OnceLock::new();
    static IMPORT: OnceLock<Regex> = OnceLock::new();
    // The patterns are literals; they compile.
    let element = ELEMENT.get_or_init(|| {
        Regex::new(r#"<skipped message="collection skipped"\s*>([^<]*)</skipped>"#).expect("valid regex")
    });
    let location = LOCATION
        .get_or_init(|| Regex::new(r#"(?s)^\('(.*?)', (\d+), (?:'|")Skipped: (.*?)(?:'|")\)$"#).expect("valid regex"));
    let import = IMPORT.get_or_init(|| Regex::new(r"^could not import '([^']+)'").expect("valid regex"));
    let mut warnings = Vec::new();
    for c in element.captures_iter(report) {
        let text = quick_xml::escape::unescape(&c[1]).map(|t| t.into_owned()).unwrap_or_else(|_| c[1].to_string());
        let Some(l) = location.captures(text.trim()) else { continue };
        let file = collect::relativize(&l[1], Some(root));
        let line: Option<u32> = l[2].parse().ok();
        let reason = l[3].to_string();
        let Some(case) = cases.iter_mut().find(|case| {
            case.status == CaseStatus::Skipped
                && case.message() == Some(COLLECTION_SKIP)
                && case.file.as_deref() == Some(file.as_str())
        }) else {
            continue;
        };
        case.set_message(Some(format!("{file} skipped whole: {reason}")));
        if case.line.is_none() {
            case.line = line;
        }
        if let Some(m) = import.captures(&reason) {
            let module = &m[1];
            warnings.push(Diagnostic {
                severity: Severity::Warning,
                source: "collect".into(),
                message: format!(
                    "{file}: every test in it was skipped because `{module}` is not installed ({reason}); if the \
                     tests need it, {}",
                    search.hint(Some(module)).trim_start_matches("install the test dependencies: ")
                ),
                file: Some(file),
                line,
                column: None,
            });
        }
    }
    warnings
}

/// Where fcorr looked for test dependencies and what it installed, for hints.
#[derive(Debug, Clone, Default)]
pub(crate) struct DependencySearch {
    pub looked: Vec<String>,
    pub found: Vec<String>,
}

impl DependencySearch {
    fn hint(&self, module: Option<&str>) -> String {
        let what = match module {
            Some(m) => format!("declare the package that provides `{m}` with the test dependencies"),
            None => "declare the missing package with the test dependencies".to_string(),
        };
        let found = if self.found.is_empty() {
            "found none, so only pytest was installed".to_string()
        } else {
            format!("installed {}", self.found.join(", "))
        };
        format!(
            "install the test dependencies: {what}. fcorr looked in {} and {found}; or set `commands.install` \
             (it runs with the virtualenv first on PATH)",
            self.looked.join(", ")
        )
    }
}

/// The interpreter could not even start the test tool (`…/bin/python: No module named pytest`,
/// what `python -m pytest` prints when pytest is not installed): the suite error quotes it,
/// where a bare "exited with code 1 before reporting any test result" hid it in the log.
pub(crate) fn tool_not_installed(output: &str) -> Option<SuiteError> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN
        .get_or_init(|| Regex::new(r"(?m)^(\S*python[\d.]*): No module named ([\w.]+)\s*$").expect("valid regex"));
    let c = pattern.captures(output)?;
    let module = &c[2];
    Some(SuiteError {
        kind: SuiteErrorKind::ToolMissing,
        message: format!("the test tool is not installed in the virtualenv, so no test ran: `{}`", c[0].trim()),
        hint: Some(format!(
            "a `commands.install` replaces fcorr's install commands, pytest included: have it install `{module}` \
             too (e.g. `pip install {module}`), or declare `{module}` with the test dependencies"
        )),
    })
}

/// pytest exit 4 ("usage error"): most often a conftest.py whose imports fail. Returns the
/// suite error naming the file, the module and where fcorr looked for dependencies.
pub(crate) fn usage_error(output: &str, root: &Path, search: &DependencySearch) -> SuiteError {
    static CONFTEST: OnceLock<Regex> = OnceLock::new();
    static MISSING: OnceLock<Regex> = OnceLock::new();
    // The patterns are literals; they compile.
    let conftest =
        CONFTEST.get_or_init(|| Regex::new(r"ImportError while loading conftest '([^']+)'").expect("valid regex"));
    let missing = MISSING.get_or_init(|| Regex::new(r"No module named '([^']+)'").expect("valid regex"));
    if let Some(c) = conftest.captures(output) {
        let file = collect::relativize(&c[1], Some(root));
        let why = first_error(output).unwrap_or_else(|| "ImportError".to_string());
        let module = missing.captures(&why).map(|m| m[1].to_string());
        return SuiteError {
            kind: SuiteErrorKind::NoResults,
            message: format!("pytest could not import {file} (exit 4), so no test ran: {why}"),
            hint: Some(search.hint(module.as_deref())),
        };
    }
    // Other usage errors (bad option, unreadable config): pytest prints `ERROR: …`.
    let line = output
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("ERROR:") || l.starts_with("error:"))
        .find(|l| !l.contains("usage:"))
        .or_else(|| output.lines().map(str::trim).rev().find(|l| !l.is_empty()))
        .unwrap_or("no message");
    SuiteError {
        kind: SuiteErrorKind::NoResults,
        message: format!("pytest stopped with a usage error (exit 4) before running any test: {line}"),
        hint: Some("check the pytest configuration and any `commands.test` arguments".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLLECT_DETAILS: &str = "ImportError while importing test module '/p/tests/test_render.py'.\n\
        Hint: make sure your test modules/packages have valid Python names.\nTraceback:\n\
        /usr/lib/python3.11/importlib/__init__.py:126: in import_module\n    return _bootstrap._gcd_import(name)\n\
        tests/test_render.py:2: in <module>\n    import missing_renderer\n\
        E   ModuleNotFoundError: No module named 'missing_renderer'";

    #[test]
    fn collection_failure_names_file_line_and_import() {
        let mut cases = vec![
            Case {
                name: "tests.test_render".into(),
                classname: Some(String::new().into()),
                status: CaseStatus::Error,
                extra: crate::model::CaseExtra { details: Some(COLLECT_DETAILS.into()), ..Default::default() }.packed(),
                ..Case::default()
            }
            .with_message(Some(COLLECTION_FAILURE.into())),
        ];
        explain_collection_errors(&mut cases, Path::new("/p"));
        assert_eq!(
            cases[0].message(),
            Some(
                "tests/test_render.py could not be collected: ModuleNotFoundError: No module named 'missing_renderer'"
            )
        );
        assert_eq!((cases[0].file.as_deref(), cases[0].line), (Some("tests/test_render.py"), Some(2)));
        assert_eq!(cases[0].status, CaseStatus::Error);
    }

    #[test]
    fn conftest_import_error_names_module_and_where_fcorr_looked() {
        let out = "ImportError while loading conftest '/p/tests/conftest.py'.\n\
                   tests/conftest.py:2: in <module>\n    import missing_plugin\n\
                   E   ModuleNotFoundError: No module named 'missing_plugin'\n";
        let search = DependencySearch { looked: vec!["pyproject.toml [dependency-groups]".into()], found: vec![] };
        let error = usage_error(out, Path::new("/p"), &search);
        assert_eq!(
            error.message,
            "pytest could not import tests/conftest.py (exit 4), so no test ran: ModuleNotFoundError: No module named \
             'missing_plugin'"
        );
        let hint = error.hint.unwrap();
        assert!(hint.contains("provides `missing_plugin`"), "{hint}");
        assert!(hint.contains("looked in pyproject.toml [dependency-groups]"), "{hint}");
    }

    #[test]
    fn a_module_skipped_whole_keeps_pytests_reason_and_an_import_skip_warns() {
        let report = "<testsuite><testcase classname=\"\" name=\"tests.test_x\" file=\"tests/test_x.py\" time=\"0\">\
            <skipped message=\"collection skipped\">(&apos;/p/tests/test_x.py&apos;, 2, \"Skipped: could not import \
            &apos;six&apos;: No module named &apos;six&apos;\")</skipped></testcase>\
            <testcase classname=\"\" name=\"tests.test_y\" file=\"tests/test_y.py\" time=\"0\">\
            <skipped message=\"collection skipped\">(&apos;/p/tests/test_y.py&apos;, 4, &apos;Skipped: needs a GPU&apos;)</skipped></testcase></testsuite>";
        let skipped = |file: &str| {
            Case { name: file.into(), file: Some(file.into()), status: CaseStatus::Skipped, ..Case::default() }
                .with_message(Some(COLLECTION_SKIP.into()))
        };
        let mut cases = vec![skipped("tests/test_x.py"), skipped("tests/test_y.py")];
        let search = DependencySearch { looked: vec!["tox.ini [testenv] deps and extras".into()], found: vec![] };
        let warnings = explain_collection_skips(&mut cases, report, Path::new("/p"), &search);
        assert_eq!(
            cases[0].message(),
            Some("tests/test_x.py skipped whole: could not import 'six': No module named 'six'")
        );
        assert_eq!(cases[0].line, Some(2));
        assert_eq!(cases[1].message(), Some("tests/test_y.py skipped whole: needs a GPU"));
        assert_eq!(warnings.len(), 1, "a skip for another reason is the project's own choice");
        assert!(
            warnings[0].message.starts_with(
                "tests/test_x.py: every test in it was skipped because `six` is not installed (could not import 'six': \
                 No module named 'six'); if the tests need it, declare the package that provides `six`"
            ),
            "{}",
            warnings[0].message
        );
        assert!(warnings[0].message.contains("looked in tox.ini [testenv] deps"), "{}", warnings[0].message);
        assert_eq!(warnings[0].severity, Severity::Warning);
    }

    #[test]
    fn a_missing_test_tool_is_quoted() {
        let out = "/c/venvs/k/bin/python: No module named pytest\n";
        let error = tool_not_installed(out).unwrap();
        assert_eq!(
            error.message,
            "the test tool is not installed in the virtualenv, so no test ran: `/c/venvs/k/bin/python: No module named pytest`"
        );
        assert_eq!(error.kind, SuiteErrorKind::ToolMissing);
        assert!(error.hint.unwrap().contains("install `pytest`"));
        // A test's own import error is pytest's to report, not this.
        assert!(tool_not_installed("E   ModuleNotFoundError: No module named 'six'\n").is_none());
    }

    #[test]
    fn other_usage_errors_quote_pytest() {
        let out = "ERROR: usage: pytest [options]\nERROR: unrecognized arguments: --bogus\n";
        let error = usage_error(out, Path::new("/p"), &DependencySearch::default());
        assert!(error.message.ends_with("ERROR: unrecognized arguments: --bogus"), "{}", error.message);
    }
}
