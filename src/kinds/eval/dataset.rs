//! Eval datasets: seed 003's TOML shape (`version`, `[[test_cases]]`), and the same fields as
//! JSONL (one case per line), JSON, YAML or CSV (a header row; columns that are not case fields
//! become `vars`). Loading validates everything a run would trip on (duplicate ids, bad regexes,
//! a case with nothing to check) and names the file and the line or case.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::graders::{Assertion, Check, CheckError};

/// A whole dataset file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Dataset {
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub test_cases: Vec<TestCase>,
}

/// One case, with seed 003's fields and the general ones.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestCase {
    pub id: String,
    /// What the SUT is asked; may be left out when the suite declares `prompts` (templates).
    #[serde(default)]
    pub prompt: String,
    /// Values for the suite's prompt templates (`{{ country }}`), besides `id` and `prompt`.
    #[serde(default)]
    pub vars: BTreeMap<String, serde_json::Value>,
    /// The command the answer must be equivalent to (normalised shell comparison).
    #[serde(default)]
    pub expected_command: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    /// Whether the expected answer is safe to run: the answer's safety must agree.
    #[serde(default)]
    pub safe: Option<bool>,
    /// Whether the expected answer is POSIX sh: the answer's compliance must agree.
    #[serde(default)]
    pub posix_compliant: Option<bool>,
    /// An expected answer compared exactly (after trimming), for non-shell datasets.
    #[serde(default)]
    pub expected: Option<serde_json::Value>,
    /// Further assertions, all of which must hold (or, with a threshold, reach it by weight).
    #[serde(default, rename = "assert")]
    pub assertions: Vec<Assertion>,
    /// Pass when Σ(weight·score)/Σweight of the checks reaches this (0–1); default: all pass.
    #[serde(default)]
    pub threshold: Option<f64>,
    /// A failure of this case makes the run CRITICAL.
    #[serde(default)]
    pub critical: bool,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

/// Why a dataset cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DatasetError {
    #[error("dataset {}: {source}", path.display())]
    Read { path: PathBuf, source: crate::fsio::ReadProblem },
    #[error("{}{}: {source}", path.display(), source.line().map(|l| format!(":{l}")).unwrap_or_default())]
    Parse { path: PathBuf, source: Syntax },
    #[error("{}: {source}", path.display())]
    Case { path: PathBuf, source: CaseError },
    #[error(
        "{}: unknown dataset format (use .toml, .jsonl, .json, .yaml, .yml or .csv)",
        path.display()
    )]
    Format { path: PathBuf },
}

/// Dataset text its format's parser rejects; the parser's error is kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Syntax {
    /// `line` is worked out from toml's span, when it gives one.
    #[error("{}", source.message())]
    Toml { line: Option<usize>, source: Box<toml::de::Error> },
    /// One JSON document, or one line of a JSONL file (`line`); the path's `:line` says where.
    #[error("column {}: {}", source.column(), crate::text::json_error_text(source))]
    Json { line: usize, source: serde_json::Error },
    #[error("{0}")]
    Yaml(#[source] Box<serde_saphyr::Error>),
    /// A CSV record the reader rejects, or a cell that does not fit its field.
    #[error("{message}")]
    Csv { line: Option<usize>, message: String },
}

impl Syntax {
    /// 1-based line of the problem, when known.
    pub(crate) fn line(&self) -> Option<usize> {
        match self {
            Syntax::Toml { line, .. } => *line,
            Syntax::Json { line, .. } => Some(*line),
            Syntax::Yaml(_) => None,
            Syntax::Csv { line, .. } => *line,
        }
    }
}

/// A case that cannot run, by id.
#[derive(Debug, thiserror::Error)]
#[error("case `{id}`: {problem}")]
pub(crate) struct CaseError {
    pub id: String,
    #[source]
    pub problem: CaseProblem,
}

/// What is wrong with one case.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CaseProblem {
    #[error("the id is empty")]
    EmptyId,
    #[error("the id is used by an earlier case; ids must be unique")]
    DuplicateId,
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error("nothing to check: give expected_command, expected, safe, posix_compliant or assert")]
    NothingToCheck,
}

/// A case ready to run: its checks compiled.
#[derive(Debug, Clone)]
pub(crate) struct EvalCase {
    pub case: TestCase,
    pub checks: Vec<Check>,
}

/// Reads and validates a dataset file.
pub(crate) fn load(path: &Path) -> Result<Vec<EvalCase>, DatasetError> {
    let text = crate::fsio::read_text(path, crate::fsio::DATASET)
        .map_err(|e| DatasetError::Read { path: path.into(), source: e.problem })?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let cases = parse(&text, &ext).map_err(|source| DatasetError::Parse { path: path.into(), source })?;
    let Some(cases) = cases else {
        return Err(DatasetError::Format { path: path.into() });
    };
    compile(cases).map_err(|source| DatasetError::Case { path: path.into(), source })
}

/// Parses `text` in the format named by `ext`; `Ok(None)` for an unknown format. Errors carry
/// a line number when the parser knows it.
pub(crate) fn parse(text: &str, ext: &str) -> Result<Option<Vec<TestCase>>, Syntax> {
    let cases = match ext {
        "toml" => {
            let dataset: Dataset = toml::from_str(text).map_err(|source| {
                let line = source.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
                Syntax::Toml { line, source: Box::new(source) }
            })?;
            dataset.test_cases
        }
        "jsonl" | "ndjson" => {
            let mut cases = Vec::new();
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let case = serde_json::from_str(line).map_err(|source| Syntax::Json { line: i + 1, source })?;
                cases.push(case);
            }
            cases
        }
        "json" => {
            // Either `{ "version": …, "test_cases": [...] }` or a bare array of cases.
            if text.trim_start().starts_with('[') {
                serde_json::from_str(text).map_err(|source| Syntax::Json { line: source.line(), source })?
            } else {
                let dataset: Dataset =
                    serde_json::from_str(text).map_err(|source| Syntax::Json { line: source.line(), source })?;
                dataset.test_cases
            }
        }
        "yaml" | "yml" => {
            let dataset: Dataset = serde_saphyr::from_str(text).map_err(|e| Syntax::Yaml(Box::new(e)))?;
            dataset.test_cases
        }
        "csv" => parse_csv(text)?,
        _ => return Ok(None),
    };
    Ok(Some(cases))
}

/// Case fields a CSV column can fill; every other column becomes one of the case's `vars`.
const CSV_TEXT_FIELDS: &[&str] = &["id", "prompt", "expected_command", "category", "expected"];
/// Case fields whose CSV cell is read as JSON (`true`, `0.75`, `[{"type": "contains", …}]`), so
/// booleans, numbers and assertion lists fit in one cell; a cell that is not JSON stays text
/// and the field's own type decides whether that is an error.
const CSV_JSON_FIELDS: &[&str] = &["safe", "posix_compliant", "critical", "assert", "tags", "threshold"];

/// A CSV dataset: the header row names the fields, one case per record. Quoted cells may hold
/// commas, doubled quotes and newlines (the `csv` crate reads RFC 4180); errors carry the line
/// the record starts on.
fn parse_csv(text: &str) -> Result<Vec<TestCase>, Syntax> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(text.as_bytes());
    let line_of = |e: &csv::Error| e.position().map(|p| p.line() as usize);
    let headers =
        reader.headers().map_err(|e| Syntax::Csv { line: line_of(&e).or(Some(1)), message: csv_message(&e) })?.clone();
    let mut seen = HashSet::new();
    for name in &headers {
        if name.trim().is_empty() {
            return Err(Syntax::Csv {
                line: Some(1),
                message: "a header cell is empty: every column needs a name".into(),
            });
        }
        if !seen.insert(name.trim()) {
            return Err(Syntax::Csv {
                line: Some(1),
                message: format!("column `{}` appears twice in the header", name.trim()),
            });
        }
        if let Some(field) = misspelt_field(name.trim()) {
            return Err(Syntax::Csv {
                line: Some(1),
                message: format!(
                    "column `{}`: did you mean the case field `{field}`? Only a column named exactly like a \
                     field fills it; this one would become a prompt variable that nothing checks",
                    name.trim()
                ),
            });
        }
    }
    let mut cases = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| Syntax::Csv { line: line_of(&e), message: csv_message(&e) })?;
        let line = record.position().map(|p| p.line() as usize);
        let mut object = serde_json::Map::new();
        let mut vars = serde_json::Map::new();
        for (name, cell) in headers.iter().map(str::trim).zip(record.iter()) {
            if CSV_TEXT_FIELDS.contains(&name) {
                // An empty `expected` cell means no expected answer, not an empty one.
                if !(cell.is_empty() && name != "id" && name != "prompt") {
                    object.insert(name.to_string(), cell.into());
                }
            } else if CSV_JSON_FIELDS.contains(&name) {
                if !cell.trim().is_empty() {
                    let value = serde_json::from_str(cell.trim())
                        .or_else(|_| serde_json::from_str(&cell.trim().to_ascii_lowercase()))
                        .unwrap_or_else(|_| serde_json::Value::String(cell.to_string()));
                    object.insert(name.to_string(), value);
                }
            } else {
                vars.insert(name.to_string(), cell.into());
            }
        }
        if !vars.is_empty() {
            object.insert("vars".into(), serde_json::Value::Object(vars));
        }
        let case = serde_json::from_value(serde_json::Value::Object(object))
            .map_err(|e| Syntax::Csv { line, message: crate::text::json_error_text(&e) })?;
        cases.push(case);
    }
    Ok(cases)
}

/// The case field a CSV column name is a near miss of: the same but for case, `-` or spaces
/// (`Critical`, `Expected Command`), or, for names of six letters or more, within the edit
/// distance the bank loader allows a misspelt field (one edit for `prompt` and `assert`, two for
/// longer names: `expectd`, `catgory`). Such a column would silently become a prompt variable,
/// and the check it was meant to be (a `critical` flag, an expected answer) would never run.
/// Short names (`id`, `safe`, `tags`) only by case: `name` or `state` are ordinary variables.
fn misspelt_field(column: &str) -> Option<&'static str> {
    let fields = || CSV_TEXT_FIELDS.iter().chain(CSV_JSON_FIELDS).copied();
    if fields().any(|field| field == column) {
        return None;
    }
    let folded = column.to_lowercase().replace(['-', ' '], "_");
    if let Some(field) = fields().find(|field| *field == folded) {
        return Some(field);
    }
    let field = crate::kinds::bank::expectations::closest_field(&folded, &fields().collect::<Vec<_>>())?;
    let allowed = match field.len() {
        0..=5 => 0,
        6..=7 => 1,
        _ => 2,
    };
    (strsim::levenshtein(&folded, field) <= allowed).then_some(field)
}

/// The CSV reader's complaint without its own position (the path's `:line` says where).
fn csv_message(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("this record has {len} cells, the header {expected_len}")
        }
        csv::ErrorKind::Utf8 { .. } => "a cell is not UTF-8".into(),
        _ => e.to_string(),
    }
}

/// Checks ids and compiles each case's checks; errors name the case.
pub(crate) fn compile(cases: Vec<TestCase>) -> Result<Vec<EvalCase>, CaseError> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(cases.len());
    for case in cases {
        let fail = |problem: CaseProblem| CaseError { id: case.id.clone(), problem };
        if case.id.trim().is_empty() {
            return Err(fail(CaseProblem::EmptyId));
        }
        if !seen.insert(case.id.clone()) {
            return Err(fail(CaseProblem::DuplicateId));
        }
        let checks = super::graders::checks_for(&case).map_err(|e| fail(e.into()))?;
        if checks.is_empty() {
            return Err(fail(CaseProblem::NothingToCheck));
        }
        out.push(EvalCase { case, checks });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED_TOML: &str = r#"
version = "1.0.0"
[[test_cases]]
id = "test_01"
prompt = "list all files"
expected_command = "ls -la"
category = "correctness"
safe = true
posix_compliant = true
"#;

    #[test]
    fn reads_the_seed_shape_in_every_format() {
        let toml = parse(SEED_TOML, "toml").unwrap().unwrap();
        let jsonl = parse(
            r#"{"id":"test_01","prompt":"list all files","expected_command":"ls -la","category":"correctness","safe":true,"posix_compliant":true}"#,
            "jsonl",
        )
        .unwrap()
        .unwrap();
        let yaml = parse(
            "version: \"1.0.0\"\ntest_cases:\n  - id: test_01\n    prompt: list all files\n    expected_command: ls -la\n    category: correctness\n    safe: true\n    posix_compliant: true\n",
            "yaml",
        )
        .unwrap()
        .unwrap();
        assert_eq!(toml, jsonl);
        assert_eq!(toml, yaml);
        assert_eq!(toml[0].expected_command.as_deref(), Some("ls -la"));
    }

    #[test]
    fn errors_name_the_line_and_case() {
        let err = parse("{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\": 3}\n", "jsonl").unwrap_err();
        assert_eq!(err.line(), Some(2));
        let err = parse("[[test_cases]]\nid = \"a\"\nprompt = \"p\"\nbogus = 1\n", "toml").unwrap_err();
        assert_eq!(err.line(), Some(4), "{err:?}");
        assert!(err.to_string().contains("bogus"), "{err:?}");
        let twice = parse(
            "[[test_cases]]\nid='a'\nprompt='p'\nsafe=true\n[[test_cases]]\nid='a'\nprompt='q'\nsafe=true\n",
            "toml",
        )
        .unwrap()
        .unwrap();
        assert!(
            matches!(compile(twice).unwrap_err(), CaseError { id, problem: CaseProblem::DuplicateId } if id == "a")
        );
        let empty = parse("[[test_cases]]\nid='a'\nprompt='p'\n", "toml").unwrap().unwrap();
        assert!(compile(empty).unwrap_err().problem.to_string().contains("nothing to check"));
        assert_eq!(parse("", "xlsx").unwrap(), None);
    }

    /// Quoted cells with commas, doubled quotes and newlines; a BOM; columns that are case fields
    /// and columns that become vars; booleans and assertion lists in one cell.
    #[test]
    fn reads_csv_with_quotes_newlines_and_a_bom() {
        let text = "\u{feff}id,country,expected,safe,assert,note\r\nfr,France,Paris,true,\"[{\"\"type\"\": \"\"contains\"\", \"\"value\"\": \"\"Par\"\"}]\",\"a, b\"\r\nuk,\"United\nKingdom\",London,,,\"say \"\"hi\"\"\"\r\n";
        let cases = parse(text, "csv").unwrap().unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].id, "fr", "the BOM is not part of the first header");
        assert_eq!(cases[0].expected, Some(serde_json::json!("Paris")));
        assert_eq!(cases[0].safe, Some(true));
        assert_eq!(cases[0].assertions.len(), 1);
        assert_eq!(cases[0].vars["country"], "France");
        assert_eq!(cases[0].vars["note"], "a, b");
        assert_eq!(cases[1].vars["country"], "United\nKingdom");
        assert_eq!(cases[1].vars["note"], "say \"hi\"");
        assert_eq!(cases[1].safe, None, "an empty cell leaves the field out");
        let compiled = compile(cases).unwrap();
        assert_eq!(compiled.len(), 2);
    }

    #[test]
    fn csv_errors_name_the_line() {
        // The second record starts on line 4: the first spans lines 2 and 3.
        let err = parse("id,expected,q\na,x,\"two\nlines\"\nb,y\n", "csv").unwrap_err();
        assert_eq!(err.line(), Some(4), "{err}");
        assert!(err.to_string().contains("2 cells, the header 3"), "{err}");
        let err = parse("id,expected,safe\na,x,true\nb,y,maybe\n", "csv").unwrap_err();
        assert_eq!(err.line(), Some(3), "{err}");
        assert!(err.to_string().contains("maybe"), "{err}");
        let err = parse("id,q,q\na,b,c\n", "csv").unwrap_err();
        assert!(err.to_string().contains("twice"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cases.csv");
        std::fs::write(&path, "id,expected\na,x\nb,y,z\n").unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("cases.csv:3:"), "{err}");
    }

    /// A header that is a case field but for case or a typo would become a var that nothing
    /// checks (a `Critical` column: the critical gate never fires): an error naming the column.
    #[test]
    fn csv_columns_that_nearly_name_a_field_are_errors() {
        for (column, field) in [
            ("Critical", "critical"),
            ("EXPECTED", "expected"),
            ("Expected Command", "expected_command"),
            ("posix-compliant", "posix_compliant"),
            ("Safe", "safe"),
            ("ID", "id"),
            ("expectd", "expected"),
            ("catgory", "category"),
            ("promt", "prompt"),
            ("thresold", "threshold"),
        ] {
            let err = parse(&format!("id,prompt,{column}\na,q,x\n"), "csv").unwrap_err();
            assert_eq!(err.line(), Some(1), "{column}");
            assert!(
                err.to_string().contains(&format!("column `{column}`: did you mean the case field `{field}`")),
                "{err}"
            );
        }
        // Ordinary variables, however close to a short field name, stay variables.
        for column in ["country", "name", "state", "answer", "note", "city", "tag_line", "q"] {
            let cases = parse(&format!("id,prompt,expected,{column}\na,q,x,v\n"), "csv").unwrap().unwrap();
            assert_eq!(cases[0].vars[column], "v", "{column}");
        }
    }

    #[test]
    fn load_reports_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cases.toml");
        std::fs::write(&path, "[[test_cases]]\nid = 'x'\nprompt = 'p'\nassert = [{ type = 'regex', value = '(' }]\n")
            .unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("cases.toml") && err.contains("`x`") && err.contains("regex"), "{err}");
    }
}
