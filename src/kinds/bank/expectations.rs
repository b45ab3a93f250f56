//! Versioned expectations: a bank file plus `history/expectations_YYYY-MM-DD*.json`.
//!
//! Per test, a human override (the newest one) beats the newest calibration entry, which beats
//! the bank file's original value; the source is recorded on each case and counted per run.
//! This module only reads history: fcorr never rewrites or deletes a history file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::BankError;
use super::scoring::RankCheck;

/// What a test expects. Mechanism-specific names in bank files (`expected_handlers`,
/// `expected_matches`, `expected_always`, `not_expected_handlers`...) are read as these.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Expectations {
    #[serde(default, alias = "expected_handlers", alias = "expected_matches", alias = "expected_always")]
    pub(crate) expected_primary: Vec<String>,
    #[serde(default)]
    pub(crate) expected_secondary: Vec<String>,
    #[serde(default, alias = "not_expected_handlers", alias = "not_expected_matches")]
    pub(crate) not_expected: Vec<String>,
    #[serde(default)]
    pub(crate) rank_check: Vec<RankCheck>,
}

impl Expectations {
    /// True when no id is expected, wanted, refused or ranked: nothing would be checked.
    pub(crate) fn is_empty(&self) -> bool {
        self.expected_primary.is_empty()
            && self.expected_secondary.is_empty()
            && self.not_expected.is_empty()
            && self.rank_check.is_empty()
    }

    /// Every id the expectations name, for `calibrate --scope affected`.
    pub(crate) fn mentions(&self, id: &str) -> bool {
        self.expected_primary.iter().chain(&self.expected_secondary).chain(&self.not_expected).any(|x| x == id)
            || self.rank_check.iter().any(|r| r.higher == id || r.lower == id)
    }
}

/// One test of a bank file. Fields a mechanism does not use are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct BankTest {
    pub(crate) test_id: String,
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) category: Option<String>,
    #[serde(default)]
    pub(crate) topics: Vec<String>,
    /// The text sent to the system (semantic) or matched against rules (pattern).
    #[serde(default, alias = "text", alias = "message")]
    pub(crate) prompt: Option<String>,
    #[serde(default)]
    pub(crate) user_type: Option<String>,
    #[serde(default)]
    pub(crate) user_state: Option<serde_json::Map<String, serde_json::Value>>,
    /// `crisis`, `negative`, `keyword`... (pattern banks).
    #[serde(default)]
    pub(crate) pattern_type: Option<String>,
    #[serde(default, alias = "critical")]
    pub(crate) is_critical: bool,
    #[serde(flatten)]
    pub(crate) expectations: Expectations,
    /// The test as written, sent to the system under test and to calibrators.
    #[serde(skip)]
    pub(crate) raw: serde_json::Value,
}

/// A bank file: `bank_type`, `version`, `tests[]`.
#[derive(Debug, Clone)]
pub(crate) struct Bank {
    pub(crate) path: PathBuf,
    pub(crate) bank_type: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) tests: Vec<BankTest>,
}

#[derive(Deserialize)]
struct BankFile {
    #[serde(default)]
    bank_type: Option<String>,
    #[serde(default)]
    version: Option<String>,
    tests: Vec<BankTest>,
}

/// Reads a bank file; errors name the file, and the line for malformed JSON.
pub(crate) fn load_bank(path: &Path) -> Result<Bank, BankError> {
    let text = read(path)?;
    let file: BankFile = parse_json(path, &text)?;
    // Parsed a second time untyped to keep each test exactly as written (bank files are small).
    let raw: serde_json::Value = parse_json(path, &text)?;
    let raws = raw.get("tests").and_then(|t| t.as_array()).cloned().unwrap_or_default();
    let mut tests = file.tests;
    let mut seen = HashSet::new();
    for (test, raw) in tests.iter_mut().zip(raws) {
        if test.test_id.trim().is_empty() {
            return Err(BankError::input(path, "a test has an empty `test_id`"));
        }
        if !seen.insert(test.test_id.clone()) {
            return Err(BankError::input(
                path,
                format!("test id `{}` appears twice: ids must be unique", test.test_id),
            ));
        }
        if let Some((field, meant)) = misspelled_field(&raw) {
            return Err(BankError::input(
                path,
                format!(
                    "test `{}`: unknown field `{field}`; did you mean `{meant}`? A misspelled expectation \
                     is never checked, so the test would pass whatever the system does",
                    test.test_id
                ),
            ));
        }
        test.raw = raw;
    }
    Ok(Bank { path: path.to_path_buf(), bank_type: file.bank_type, version: file.version, tests })
}

/// The fields of a test that decide its criticality, besides its expectations
/// ([`EXPECTATION_FIELDS`]), with their aliases.
const CRITICALITY_FIELDS: &[&str] = &["is_critical", "critical", "pattern_type"];

/// A field of `test` that is not one fcorr reads but looks like a deciding field, with the field
/// it is closest to: one or two letters away from one (`expected_primay`, `not_expectd`,
/// `is_critcal`), or a list under a name that starts like an expectation (`expected_primaries`,
/// `not_expected_ids`). Other unknown fields (notes, authors, an `expected_response` text) are
/// bank metadata and stay allowed; a misnamed expectation, though, would silently leave it
/// unchecked and score the test 100.
fn misspelled_field(test: &serde_json::Value) -> Option<(&str, &'static str)> {
    const READ: &[&str] =
        &["test_id", "name", "category", "topics", "prompt", "text", "message", "user_type", "user_state"];
    test.as_object()?.iter().find_map(|(key, value)| {
        let deciding = || EXPECTATION_FIELDS.iter().chain(CRITICALITY_FIELDS);
        if READ.contains(&key.as_str()) || deciding().any(|f| f == key) {
            return None;
        }
        if let Some((_, field)) =
            deciding().map(|field| (strsim::levenshtein(key, field), *field)).filter(|(d, _)| *d <= 2).min()
        {
            return Some((key.as_str(), field));
        }
        let plain = key.to_ascii_lowercase().replace(['_', '-'], "");
        let looks_like_expectation = ["expected", "notexpected", "rankcheck"].iter().any(|p| plain.starts_with(p));
        if looks_like_expectation && value.is_array() {
            return closest_field(key, EXPECTATION_FIELDS).map(|field| (key.as_str(), field));
        }
        None
    })
}

/// The field of `fields` closest to `key` (fewest edits).
pub(crate) fn closest_field(key: &str, fields: &[&'static str]) -> Option<&'static str> {
    fields.iter().min_by_key(|field| strsim::levenshtein(key, field)).copied()
}

/// The first key of the object `value` that is neither an expectation field nor one of `also`,
/// as an error saying which field it is probably meant to be: a misspelled key there would
/// silently leave the expectation empty. `None` when every key is known (or `value` is no object).
pub(crate) fn unknown_expectation_key(value: &serde_json::Value, also: &[&'static str]) -> Option<String> {
    let known: Vec<&'static str> = EXPECTATION_FIELDS.iter().chain(also).copied().collect();
    let key = value.as_object()?.keys().find(|k| !known.contains(&k.as_str()))?;
    Some(match closest_field(key, &known).filter(|f| strsim::levenshtein(key, f) <= 3) {
        Some(meant) => format!("unknown field `{key}`; did you mean `{meant}`?"),
        None => format!("unknown field `{key}` (known: {})", known.join(", ")),
    })
}

/// The names expectations are written under (bank tests, history `updated` and
/// `human_override`, calibrator answers).
pub(crate) const EXPECTATION_FIELDS: &[&str] = &[
    "expected_primary",
    "expected_handlers",
    "expected_matches",
    "expected_always",
    "expected_secondary",
    "not_expected",
    "not_expected_handlers",
    "not_expected_matches",
    "rank_check",
];

/// Where a test's expectations came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Source {
    Original,
    /// A calibration entry in the history file of this date label.
    Calibration(String),
    /// A human override made on this date.
    HumanOverride(String),
}

impl Source {
    /// `original`, `calibration_<date>`, `human_override_<date>` (recorded on the case).
    pub(crate) fn label(&self) -> String {
        match self {
            Source::Original => "original".into(),
            Source::Calibration(date) => format!("calibration_{date}"),
            Source::HumanOverride(date) => format!("human_override_{date}"),
        }
    }

    /// `original`, `calibration` or `human_override` (counted per run).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Source::Original => "original",
            Source::Calibration(_) => "calibration",
            Source::HumanOverride(_) => "human_override",
        }
    }
}

/// A history file: the changes one calibration made, plus any human overrides.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct HistoryFile {
    #[serde(default)]
    pub(crate) version: Option<String>,
    #[serde(default)]
    pub(crate) calibration_trigger: Option<String>,
    #[serde(default)]
    pub(crate) kb_version: Option<String>,
    pub(crate) changes: Vec<HistoryChange>,
    #[serde(default)]
    pub(crate) unchanged_count: Option<u64>,
    #[serde(default)]
    pub(crate) changed_count: Option<u64>,
}

/// One test's change in a history file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HistoryChange {
    pub(crate) test_id: String,
    #[serde(default)]
    pub(crate) previous: Option<Expectations>,
    #[serde(default)]
    pub(crate) updated: Option<Expectations>,
    #[serde(default, alias = "opus_reasoning")]
    pub(crate) reasoning: Option<String>,
    #[serde(default)]
    pub(crate) human_override: Option<HumanOverride>,
}

/// Expectations set by a person; they beat every calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HumanOverride {
    #[serde(flatten)]
    pub(crate) expectations: Expectations,
    #[serde(default)]
    pub(crate) override_date: Option<String>,
    #[serde(default)]
    pub(crate) reason: Option<String>,
}

/// The history files of a bank, newest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    /// (path, date label from the file name, contents), newest first.
    pub(crate) files: Vec<(PathBuf, String, HistoryFile)>,
}

/// The date label of a history file name: `expectations_2025-12-18_b.json` → `2025-12-18_b`.
/// `None` for files that are not history files; an error for a history name without a date.
pub(crate) fn history_label(path: &Path) -> Result<Option<String>, BankError> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return Ok(None) };
    let Some(label) = name.strip_prefix("expectations_").and_then(|n| n.strip_suffix(".json")) else {
        return Ok(None);
    };
    let date = label.get(..10).unwrap_or("");
    let ok = date.len() == 10
        && date.char_indices().all(|(i, c)| if i == 4 || i == 7 { c == '-' } else { c.is_ascii_digit() })
        && time::Date::parse(date, time::macros::format_description!("[year]-[month]-[day]")).is_ok();
    if !ok {
        return Err(BankError::input(
            path,
            "history files are named `expectations_YYYY-MM-DD*.json`; this name has no valid date after `expectations_`",
        ));
    }
    Ok(Some(label.to_string()))
}

/// Reads every `expectations_YYYY-MM-DD*.json` in `dir` (none when `dir` does not exist) and
/// checks each change names a test of `bank`.
pub(crate) fn load_history(dir: &Path, bank: &Bank) -> Result<History, BankError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(History::default()),
        Err(e) => return Err(BankError::input(dir, format!("cannot read the history directory: {e}"))),
    };
    let known: HashSet<&str> = bank.tests.iter().map(|t| t.test_id.as_str()).collect();
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| BankError::input(dir, format!("cannot list it: {e}")))?.path();
        let Some(label) = history_label(&path)? else { continue };
        let text = read(&path)?;
        let file: HistoryFile = parse_json(&path, &text)?;
        // Read a second time untyped: the typed read ignores unknown keys, and a misspelled key
        // in `updated` or `human_override` would replace the test's expectations with none.
        let raw: serde_json::Value = parse_json(&path, &text)?;
        let raws = raw.get("changes").and_then(|c| c.as_array()).cloned().unwrap_or_default();
        let mut ids = HashSet::new();
        for (change, raw) in file.changes.iter().zip(&raws) {
            for (what, also, set) in [
                ("updated", &[][..], change.updated.as_ref()),
                (
                    "human_override",
                    &["override_date", "reason"][..],
                    change.human_override.as_ref().map(|o| &o.expectations),
                ),
            ] {
                let why = match raw.get(what).and_then(|v| unknown_expectation_key(v, also)) {
                    Some(unknown) => format!("has an {unknown}"),
                    None if set.is_some_and(Expectations::is_empty) => {
                        "names no expectation at all, so the test would check nothing and score 100 whatever \
                         the system returns"
                            .to_string()
                    }
                    None => continue,
                };
                return Err(BankError::input(
                    &path,
                    format!("the change for test `{}`: `{what}` {why} (correct it in this file)", change.test_id),
                ));
            }
            if !known.contains(change.test_id.as_str()) {
                return Err(BankError::input(
                    &path,
                    format!(
                        "test id `{}` is not in the bank {}: fix the id, or add the test to the bank",
                        change.test_id,
                        bank.path.display()
                    ),
                ));
            }
            if !ids.insert(change.test_id.as_str()) {
                return Err(BankError::input(
                    &path,
                    format!("test id `{}` has two changes in one file", change.test_id),
                ));
            }
            if change.updated.is_none() && change.human_override.is_none() {
                return Err(BankError::input(
                    &path,
                    format!("the change for `{}` has neither `updated` nor `human_override`", change.test_id),
                ));
            }
        }
        files.push((path, label, file));
    }
    // Labels start with the date, so the newest sorts last; a suffix sorts after the bare date.
    files.sort_by(|a, b| b.1.cmp(&a.1));
    Ok(History { files })
}

/// A test's expectations in force and where they came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolved {
    pub(crate) expectations: Expectations,
    pub(crate) source: Source,
    /// The history file they were read from; `None` for the bank file's original.
    pub(crate) file: Option<PathBuf>,
}

impl History {
    /// Human override (newest) > calibration (newest) > original.
    pub(crate) fn resolve(&self, test: &BankTest) -> Resolved {
        let changes = || self.files.iter().flat_map(|(path, label, f)| f.changes.iter().map(move |c| (path, label, c)));
        let mine = || changes().filter(|(_, _, c)| c.test_id == test.test_id);
        if let Some((path, label, change)) = mine().find(|(_, _, c)| c.human_override.is_some())
            && let Some(o) = &change.human_override
        {
            let date = o.override_date.clone().unwrap_or_else(|| label.clone());
            return Resolved {
                expectations: o.expectations.clone(),
                source: Source::HumanOverride(date),
                file: Some(path.clone()),
            };
        }
        if let Some((path, label, change)) = mine().find(|(_, _, c)| c.updated.is_some())
            && let Some(updated) = &change.updated
        {
            return Resolved {
                expectations: updated.clone(),
                source: Source::Calibration(label.clone()),
                file: Some(path.clone()),
            };
        }
        Resolved { expectations: test.expectations.clone(), source: Source::Original, file: None }
    }
}

/// A bank or history file, within [`crate::fsio::BANK`]'s cap, without a byte-order mark.
fn read(path: &Path) -> Result<String, BankError> {
    crate::fsio::read_text(path, crate::fsio::BANK).map_err(|e| BankError::input(path, e.problem.to_string()))
}

/// Parses JSON, naming the line and column of a syntax or shape error.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, BankError> {
    serde_json::from_str(text).map_err(|e| BankError::input(path, crate::text::json_error_at(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BANK: &str = r#"{
  "bank_type": "SEMANTIC", "version": "2.0",
  "tests": [
    {"test_id": "V2-GR-001", "name": "Gray rock", "topics": ["gray_rock"], "prompt": "she texts me nonstop",
     "expected_primary": ["gray_rock"], "expected_secondary": ["biff_response"],
     "not_expected": ["handler_crisis"], "rank_check": [{"higher": "gray_rock", "lower": "boundary_setting"}]},
    {"test_id": "V2-LOY-001", "prompt": "my son feels guilty", "expected_primary": ["loyalty_binds"]},
    {"test_id": "V2-DOC-001", "prompt": "keep records", "expected_primary": ["documentation_practices"]}
  ]
}"#;

    fn setup(history: &[(&str, &str)]) -> (tempfile::TempDir, Bank) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bank.json"), BANK).unwrap();
        std::fs::create_dir(dir.path().join("history")).unwrap();
        for (name, text) in history {
            std::fs::write(dir.path().join("history").join(name), text).unwrap();
        }
        let bank = load_bank(&dir.path().join("bank.json")).unwrap();
        (dir, bank)
    }

    fn change(id: &str, primary: &str, override_date: Option<&str>) -> String {
        let over = match override_date {
            Some(d) => format!(r#"{{"expected_primary": ["{primary}_human"], "override_date": "{d}"}}"#),
            None => "null".into(),
        };
        format!(
            r#"{{"test_id": "{id}", "previous": {{"expected_primary": ["old"]}},
                "updated": {{"expected_primary": ["{primary}"]}}, "reasoning": "why", "human_override": {over}}}"#
        )
    }

    fn history(changes: &[String]) -> String {
        format!(r#"{{"version": "2025-12-18T14:30:00Z", "changes": [{}]}}"#, changes.join(","))
    }

    fn resolve(dir: &Path, bank: &Bank, id: &str) -> Resolved {
        let h = load_history(&dir.join("history"), bank).unwrap();
        h.resolve(bank.tests.iter().find(|t| t.test_id == id).unwrap())
    }

    #[test]
    fn reads_a_bank_with_its_expectations() {
        let (_dir, bank) = setup(&[]);
        assert_eq!(bank.tests.len(), 3);
        let t = &bank.tests[0];
        assert_eq!(t.expectations.expected_secondary, vec!["biff_response"]);
        assert_eq!(t.expectations.rank_check[0].lower, "boundary_setting");
        assert_eq!(t.raw["name"], "Gray rock");
    }

    #[test]
    fn mechanism_field_names_are_read_as_expectations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(
            &path,
            r#"{"tests": [{"test_id": "STATE-001", "user_state": {"is_first_conversation": true},
                "expected_handlers": ["h1"], "not_expected_handlers": ["h2"], "is_critical": true}]}"#,
        )
        .unwrap();
        let bank = load_bank(&path).unwrap();
        let t = &bank.tests[0];
        assert_eq!(
            (t.expectations.expected_primary.clone(), t.expectations.not_expected.clone()),
            (vec!["h1".to_string()], vec!["h2".to_string()])
        );
        assert!(t.is_critical);
    }

    #[test]
    fn a_misspelled_expectation_is_an_error_and_other_metadata_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bank.json");
        for (field, meant) in [
            ("expected_primay", "expected_primary"),
            ("not_expectd", "not_expected"),
            ("expected_match", "expected_matches"),
            ("is_critcal", "is_critical"),
        ] {
            std::fs::write(&file, format!(r#"{{"tests": [{{"test_id": "T-1", "prompt": "p", "{field}": ["a"]}}]}}"#))
                .unwrap();
            let message = load_bank(&file).unwrap_err().to_string();
            assert!(
                message.contains(&format!("test `T-1`: unknown field `{field}`; did you mean `{meant}`?")),
                "{message}"
            );
        }
        std::fs::write(
            &file,
            r#"{"tests": [{"test_id": "T-1", "prompt": "p", "expected_primary": ["a"], "notes": "x", "expected_response": "calm"}]}"#,
        )
        .unwrap();
        assert_eq!(load_bank(&file).unwrap().tests[0].expectations.expected_primary, vec!["a"]);
        // Three edits away, but a list under an expectation-like name: `expected_primaries` was
        // ignored and the test scored 100 whatever the system returned.
        for (field, meant) in [("expected_primaries", "expected_primary"), ("not_expected_ids", "not_expected")] {
            std::fs::write(&file, format!(r#"{{"tests": [{{"test_id": "T-1", "prompt": "p", "{field}": ["a"]}}]}}"#))
                .unwrap();
            let message = load_bank(&file).unwrap_err().to_string();
            assert!(message.contains(&format!("unknown field `{field}`; did you mean `{meant}`?")), "{message}");
        }
    }

    #[test]
    fn no_history_means_original() {
        let (dir, bank) = setup(&[]);
        let r = resolve(dir.path(), &bank, "V2-GR-001");
        assert_eq!(
            (r.source.label(), r.expectations.expected_primary),
            ("original".to_string(), vec!["gray_rock".to_string()])
        );
        // A bank without a history directory at all.
        let none = load_history(&dir.path().join("nowhere"), &bank).unwrap();
        assert_eq!(none.resolve(&bank.tests[0]).source, Source::Original);
    }

    #[test]
    fn history_beats_original() {
        let (dir, bank) =
            setup(&[("expectations_2025-12-18.json", &history(&[change("V2-LOY-001", "calibrated", None)]))]);
        let r = resolve(dir.path(), &bank, "V2-LOY-001");
        assert_eq!(r.source.label(), "calibration_2025-12-18");
        assert_eq!(r.expectations.expected_primary, vec!["calibrated"]);
        // Tests the history does not mention keep their original.
        assert_eq!(resolve(dir.path(), &bank, "V2-GR-001").source, Source::Original);
    }

    #[test]
    fn newest_history_wins() {
        let (dir, bank) = setup(&[
            ("expectations_2025-12-18.json", &history(&[change("V2-LOY-001", "first", None)])),
            ("expectations_2026-01-05.json", &history(&[change("V2-LOY-001", "newest", None)])),
            ("expectations_2025-12-20.json", &history(&[change("V2-LOY-001", "middle", None)])),
            // Same day, second calibration: sorts after the bare date.
            ("expectations_2025-12-18_2.json", &history(&[change("V2-DOC-001", "second_of_day", None)])),
            ("expectations_2025-12-18.json.bak", "not json at all"),
            ("README.md", "ignored"),
        ]);
        let r = resolve(dir.path(), &bank, "V2-LOY-001");
        assert_eq!(
            (r.source.label(), r.expectations.expected_primary),
            ("calibration_2026-01-05".into(), vec!["newest".to_string()])
        );
        assert_eq!(resolve(dir.path(), &bank, "V2-DOC-001").source.label(), "calibration_2025-12-18_2");
    }

    #[test]
    fn human_override_beats_history_even_a_newer_one() {
        let (dir, bank) = setup(&[
            ("expectations_2025-12-18.json", &history(&[change("V2-LOY-001", "calibrated", Some("2025-12-19"))])),
            ("expectations_2026-01-05.json", &history(&[change("V2-LOY-001", "recalibrated", None)])),
        ]);
        let r = resolve(dir.path(), &bank, "V2-LOY-001");
        assert_eq!(r.source.label(), "human_override_2025-12-19");
        assert_eq!(r.expectations.expected_primary, vec!["calibrated_human"]);
    }

    #[test]
    fn sources_are_counted() {
        let (dir, bank) = setup(&[(
            "expectations_2025-12-18.json",
            &history(&[change("V2-LOY-001", "c", None), change("V2-DOC-001", "c", Some("2025-12-19"))]),
        )]);
        let h = load_history(&dir.path().join("history"), &bank).unwrap();
        let resolved: Vec<Resolved> = bank.tests.iter().map(|t| h.resolve(t)).collect();
        let mut kinds: Vec<&str> = resolved.iter().map(|r| r.source.kind()).collect();
        kinds.sort();
        assert_eq!(kinds, vec!["calibration", "human_override", "original"]);
    }

    #[test]
    fn unknown_test_id_names_the_file() {
        let (dir, bank) = setup(&[("expectations_2025-12-18.json", &history(&[change("V2-NOPE-404", "x", None)]))]);
        let err = load_history(&dir.path().join("history"), &bank).unwrap_err().to_string();
        assert!(err.contains("expectations_2025-12-18.json"), "{err}");
        assert!(err.contains("V2-NOPE-404"), "{err}");
    }

    #[test]
    fn a_misspelled_or_empty_history_change_is_refused() {
        for (change, why) in [
            // `expected_primry` left `updated` with no primary: the test passed 100 on any answer.
            (
                r#"{"test_id": "V2-LOY-001", "updated": {"expected_primry": ["a"]}}"#,
                "`updated` has an unknown field `expected_primry`; did you mean `expected_primary`?",
            ),
            (
                r#"{"test_id": "V2-LOY-001", "human_override": {"not_expectd": ["a"], "reason": "r"}}"#,
                "`human_override` has an unknown field `not_expectd`; did you mean `not_expected`?",
            ),
            (
                r#"{"test_id": "V2-LOY-001", "updated": {"expected_primary": ["a"], "confidence": 0.9}}"#,
                "unknown field `confidence` (known: expected_primary",
            ),
            (r#"{"test_id": "V2-LOY-001", "updated": {"expected_primary": []}}"#, "`updated` names no expectation"),
        ] {
            let (dir, bank) = setup(&[("expectations_2026-01-01.json", &history(&[change.to_string()]))]);
            let err = load_history(&dir.path().join("history"), &bank).unwrap_err().to_string();
            assert!(err.contains("expectations_2026-01-01.json: the change for test `V2-LOY-001`"), "{err}");
            assert!(err.contains(why), "{change}: {err}");
        }
    }

    #[test]
    fn malformed_history_names_file_and_line() {
        let (dir, bank) =
            setup(&[("expectations_2025-12-18.json", "{\n  \"changes\": [\n    {\"test_id\": 5}\n  ]\n}")]);
        let err = load_history(&dir.path().join("history"), &bank).unwrap_err().to_string();
        assert!(err.contains("expectations_2025-12-18.json") && err.contains("line 3"), "{err}");
        let (dir, bank) = setup(&[("expectations_latest.json", "{}")]);
        let err = load_history(&dir.path().join("history"), &bank).unwrap_err().to_string();
        assert!(err.contains("expectations_latest.json") && err.contains("YYYY-MM-DD"), "{err}");
    }

    #[test]
    fn duplicate_test_ids_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(&path, r#"{"tests": [{"test_id": "A"}, {"test_id": "A"}]}"#).unwrap();
        let err = load_bank(&path).unwrap_err().to_string();
        assert!(err.contains("b.json") && err.contains("`A` appears twice"), "{err}");
    }
}
