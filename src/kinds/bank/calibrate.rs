//! Calibration: ask a calibrator for each selected test's expectations, show what
//! would change, and record the changes as one new dated history file. History is append-only:
//! a new file is written beside its name and moved there only if the name is free, so an earlier
//! file is never rewritten or replaced, and a failed write (a full disk) leaves no file at all.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::BankError;
use super::expectations::{
    Bank, BankTest, EXPECTATION_FIELDS, Expectations, History, HistoryChange, HistoryFile, Resolved, Source,
    unknown_expectation_key,
};
use crate::fsio::{Mode, WriteError, WriteStep};
use crate::sut::{Sut, SutError, SutRequest};

/// Which tests a calibration asks about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scope {
    /// Every test of the bank.
    Full,
    /// Tests whose expectations name any of these entity ids.
    Affected(Vec<String>),
    /// These tests.
    Single(Vec<String>),
}

impl Scope {
    /// The tests in scope, in bank order; an unknown id under `single` is an error naming the bank.
    pub(crate) fn select<'a>(&self, bank: &'a Bank, history: &History) -> Result<Vec<&'a BankTest>, BankError> {
        match self {
            Scope::Full => Ok(bank.tests.iter().collect()),
            Scope::Affected(entities) => Ok(bank
                .tests
                .iter()
                .filter(|t| {
                    let current = history.resolve(t).expectations;
                    entities.iter().any(|e| current.mentions(e) || t.expectations.mentions(e))
                })
                .collect()),
            Scope::Single(ids) => ids
                .iter()
                .map(|id| {
                    bank.tests.iter().find(|t| &t.test_id == id).ok_or_else(|| {
                        BankError::input(&bank.path, format!("no test `{id}` in this bank (--scope single)"))
                    })
                })
                .collect(),
        }
    }
}

/// What the calibrator answered for one test.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Proposal {
    pub(crate) test_id: String,
    pub(crate) current: Resolved,
    pub(crate) updated: Expectations,
    pub(crate) reasoning: Option<String>,
}

impl Proposal {
    pub(crate) fn changed(&self) -> bool {
        self.updated != self.current.expectations
    }
}

/// The calibrator's answer: `{"updated": {…}, "reasoning": "…"}`, or the expectations
/// themselves with an optional `reasoning`, optionally wrapped in `{"output": …}`.
#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    updated: Option<Expectations>,
    #[serde(default, alias = "opus_reasoning")]
    reasoning: Option<String>,
    #[serde(flatten)]
    inline: Expectations,
}

/// Asks the calibrator about one test. It reads `{"test", "expectations", "source",
/// "added_entities"}` on stdin and prints the updated expectations.
pub(crate) fn ask(
    calibrator: &dyn Sut,
    test: &BankTest,
    current: &Resolved,
    added_entities: &[String],
) -> Result<Proposal, SutError> {
    let request = SutRequest {
        id: test.test_id.clone(),
        prompt: test.prompt.clone().unwrap_or_default(),
        case: serde_json::json!({
            "test": test.raw,
            "expectations": current.expectations,
            "source": current.source.label(),
            "added_entities": added_entities,
        }),
    };
    let answer = calibrator.call(&request)?;
    let unusable = |why: String| SutError::Backend {
        message: format!(
            "the calibrator's answer for {} is unusable ({why}); print {{\"updated\": {{\"expected_primary\": [...], ...}}, \"reasoning\": \"...\"}}",
            test.test_id
        ),
        raw: Some(answer.raw.clone()),
    };
    let mut value = match &answer.output {
        serde_json::Value::String(text) => serde_json::from_str(text).map_err(|e| unusable(e.to_string()))?,
        other => other.clone(),
    };
    if let Some(inner) = value.get("output").cloned() {
        value = inner;
    }
    if !value.is_object() {
        return Err(unusable("not a JSON object".into()));
    }
    // Every key is checked: the typed read ignores unknown ones, so `expected_primry` or
    // `"updated": null` used to be recorded as a test with no expectations, passing 100.
    const REASONING: [&str; 2] = ["reasoning", "opus_reasoning"];
    let unknown = match value.get("updated") {
        Some(updated) if !updated.is_object() => {
            return Err(unusable(format!("`updated` is {updated}, not an object")));
        }
        Some(updated) => {
            let extra =
                value.as_object().and_then(|m| m.keys().find(|k| *k != "updated" && !REASONING.contains(&k.as_str())));
            match extra {
                Some(key) => Some(format!("`{key}` beside `updated`; put every expectation inside `updated`")),
                None => unknown_expectation_key(updated, &[]).map(|u| format!("`updated` has an {u}")),
            }
        }
        None => unknown_expectation_key(&value, &REASONING).map(|u| format!("an {u}")),
    };
    if let Some(why) = unknown {
        return Err(unusable(why));
    }
    // An object naming no expectations would silently clear them all.
    if !value.as_object().is_some_and(|m| m.keys().any(|k| k == "updated" || EXPECTATION_FIELDS.contains(&k.as_str())))
    {
        return Err(unusable("neither `updated` nor `expected_primary`".into()));
    }
    let parsed: Answer = serde_json::from_value(value).map_err(|e| unusable(e.to_string()))?;
    let updated = parsed.updated.unwrap_or(parsed.inline);
    if updated.is_empty() {
        return Err(unusable(
            "it removes every expectation, so the test would check nothing and score 100 whatever the system \
             returns"
                .into(),
        ));
    }
    Ok(Proposal { test_id: test.test_id.clone(), current: current.clone(), updated, reasoning: parsed.reasoning })
}

/// A readable diff of the proposals that change something, then the counts.
pub(crate) fn render_diff(proposals: &[Proposal]) -> String {
    let mut out = String::new();
    for p in proposals.iter().filter(|p| p.changed()) {
        let _ = writeln!(out, "{} (now: {})", p.test_id, p.current.source.label());
        let (before, after) = (&p.current.expectations, &p.updated);
        for (what, old, new) in [
            ("primary", &before.expected_primary, &after.expected_primary),
            ("secondary", &before.expected_secondary, &after.expected_secondary),
            ("not expected", &before.not_expected, &after.not_expected),
        ] {
            for id in new.iter().filter(|id| !old.contains(id)) {
                let _ = writeln!(out, "  + {what}: {id}");
            }
            for id in old.iter().filter(|id| !new.contains(id)) {
                let _ = writeln!(out, "  - {what}: {id}");
            }
        }
        for r in after.rank_check.iter().filter(|r| !before.rank_check.contains(r)) {
            let _ = writeln!(out, "  + rank: {} above {}", r.higher, r.lower);
        }
        for r in before.rank_check.iter().filter(|r| !after.rank_check.contains(r)) {
            let _ = writeln!(out, "  - rank: {} above {}", r.higher, r.lower);
        }
        if let Some(reasoning) = &p.reasoning {
            let _ = writeln!(out, "  reasoning: {reasoning}");
        }
        if matches!(p.current.source, Source::HumanOverride(_)) {
            let _ = writeln!(out, "  note: a human override is in force and still wins over this calibration");
        }
    }
    let changed = proposals.iter().filter(|p| p.changed()).count();
    let _ = writeln!(out, "{changed} changed, {} unchanged", proposals.len() - changed);
    out
}

/// The history file of a calibration: only the changes, plus the counts.
pub(crate) fn history_file(
    proposals: &[Proposal],
    now: time::OffsetDateTime,
    trigger: Option<String>,
    kb_version: Option<String>,
) -> HistoryFile {
    let changes: Vec<HistoryChange> = proposals
        .iter()
        .filter(|p| p.changed())
        .map(|p| HistoryChange {
            test_id: p.test_id.clone(),
            previous: Some(p.current.expectations.clone()),
            updated: Some(p.updated.clone()),
            reasoning: p.reasoning.clone(),
            human_override: None,
        })
        .collect();
    HistoryFile {
        version: now.format(&time::format_description::well_known::Rfc3339).ok(),
        calibration_trigger: trigger,
        kb_version,
        unchanged_count: Some((proposals.len() - changes.len()) as u64),
        changed_count: Some(changes.len() as u64),
        changes,
    }
}

/// Creates a new history file in `dir`: `expectations_YYYY-MM-DD.json`, or with `_HHMMSS` when a
/// file of that date exists (later labels sort as newer). Never opens an existing file, and
/// never leaves a partial one: every later run of the bank reads every history file.
pub(crate) fn write_new(dir: &Path, file: &HistoryFile, now: time::OffsetDateTime) -> Result<PathBuf, BankError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError {
        path: dir.to_path_buf(),
        action: WriteStep::Create,
        source,
    })?;
    let date = format!("{:04}-{:02}-{:02}", now.year(), u8::from(now.month()), now.day());
    let stamp = format!("{date}_{:02}{:02}{:02}", now.hour(), now.minute(), now.second());
    let text = serde_json::to_string_pretty(file)
        .map_err(|e| BankError::Setting(format!("cannot serialise the history file: {e}")))?;
    for label in [date, stamp] {
        let path = dir.join(format!("expectations_{label}.json"));
        match crate::fsio::write_atomic(&path, format!("{text}\n").as_bytes(), Mode::CREATE_NEW) {
            Ok(()) => return Ok(path),
            Err(e) if e.action == WriteStep::Exists => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(BankError::input(dir, "a history file of this date and second exists already; run again in a second"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::bank::expectations::{load_bank, load_history};
    use crate::kinds::bank::test_sut::TableSut;

    fn bank(dir: &Path) -> Bank {
        std::fs::write(
            dir.join("bank.json"),
            r#"{"tests": [
              {"test_id": "V2-1", "prompt": "a", "expected_primary": ["gray_rock"]},
              {"test_id": "V2-2", "prompt": "b", "expected_primary": ["biff"], "not_expected": ["gray_rock"]},
              {"test_id": "V2-3", "prompt": "c", "expected_primary": ["court"]}
            ]}"#,
        )
        .unwrap();
        load_bank(&dir.join("bank.json")).unwrap()
    }

    #[test]
    fn scopes_pick_all_affected_or_named_tests() {
        let dir = tempfile::tempdir().unwrap();
        let bank = bank(dir.path());
        let history = History::default();
        let ids = |scope: Scope| -> Vec<String> {
            scope.select(&bank, &history).unwrap().iter().map(|t| t.test_id.clone()).collect()
        };
        assert_eq!(ids(Scope::Full), ["V2-1", "V2-2", "V2-3"]);
        assert_eq!(ids(Scope::Affected(vec!["gray_rock".into()])), ["V2-1", "V2-2"]);
        assert_eq!(ids(Scope::Single(vec!["V2-3".into()])), ["V2-3"]);
        let err = Scope::Single(vec!["V2-9".into()]).select(&bank, &history).unwrap_err().to_string();
        assert!(err.contains("bank.json") && err.contains("no test `V2-9`"), "{err}");
    }

    #[test]
    fn only_changes_are_recorded_with_counts_and_a_new_file_never_replaces_one() {
        let dir = tempfile::tempdir().unwrap();
        let bank = bank(dir.path());
        let history = load_history(&dir.path().join("history"), &bank).unwrap();
        let sut = TableSut::new(&[
            (
                "V2-1",
                serde_json::json!({"updated": {"expected_primary": ["gray_rock"], "expected_secondary": ["biff"]}, "reasoning": "biff helps"}),
            ),
            ("V2-2", serde_json::json!({"expected_primary": ["biff"], "not_expected": ["gray_rock"]})),
            ("V2-3", serde_json::json!("{\"output\": {\"expected_primary\": [\"court\"]}}")),
        ]);
        let proposals: Vec<Proposal> =
            bank.tests.iter().map(|t| ask(&sut, t, &history.resolve(t), &[]).unwrap()).collect();
        let diff = render_diff(&proposals);
        assert_eq!(
            diff,
            "V2-1 (now: original)\n  + secondary: biff\n  reasoning: biff helps\n1 changed, 2 unchanged\n"
        );
        let now = time::macros::datetime!(2026-11-23 14:05:09 UTC);
        let file = history_file(&proposals, now, Some("kb_entity_added".into()), None);
        assert_eq!((file.changes.len(), file.changed_count, file.unchanged_count), (1, Some(1), Some(2)));
        let hist = dir.path().join("history");
        let first = write_new(&hist, &file, now).unwrap();
        assert!(first.ends_with("expectations_2026-11-23.json"));
        let before = std::fs::read(&first).unwrap();
        let second = write_new(&hist, &file, now).unwrap();
        assert!(second.ends_with("expectations_2026-11-23_140509.json"));
        assert_eq!(std::fs::read(&first).unwrap(), before);
        assert!(write_new(&hist, &file, now).is_err());
        // The written file reads back, and the newer one is the source now.
        let history = load_history(&hist, &bank).unwrap();
        assert_eq!(history.resolve(&bank.tests[0]).source, Source::Calibration("2026-11-23_140509".into()));
    }

    #[test]
    fn unusable_answers_name_the_test_and_the_expected_shape() {
        let dir = tempfile::tempdir().unwrap();
        let bank = bank(dir.path());
        let sut = TableSut::new(&[
            ("V2-1", serde_json::json!("not json")),
            ("V2-2", serde_json::json!([1])),
            ("V2-3", serde_json::json!({"reasoning": "forgot the rest"})),
        ]);
        for test in &bank.tests {
            let err = ask(&sut, test, &History::default().resolve(test), &[]).unwrap_err().to_string();
            assert!(err.contains(&test.test_id) && err.contains("\"updated\""), "{err}");
        }
    }

    #[test]
    fn misspelled_null_or_empty_answers_are_refused_not_recorded_as_no_expectations() {
        let dir = tempfile::tempdir().unwrap();
        let bank = bank(dir.path());
        let test = &bank.tests[0];
        for (answer, why) in [
            // Was recorded as all four lists empty: the next run passed 100.
            (
                serde_json::json!({"updated": {"expected_primry": ["zzz"], "not_expectd": ["a"]}, "reasoning": "typo"}),
                "`updated` has an unknown field `expected_primry`; did you mean `expected_primary`?",
            ),
            (serde_json::json!({"updated": null}), "`updated` is null, not an object"),
            (serde_json::json!({"expected_primary": ["a"], "not_expectd": ["b"]}), "an unknown field `not_expectd`"),
            (
                serde_json::json!({"updated": {"expected_primary": ["a"]}, "not_expected": ["b"]}),
                "`not_expected` beside",
            ),
            (serde_json::json!({"updated": {"expected_primary": [], "not_expected": []}}), "removes every expectation"),
        ] {
            let sut = TableSut::new(&[("V2-1", answer.clone())]);
            let err = ask(&sut, test, &History::default().resolve(test), &[]).unwrap_err().to_string();
            assert!(err.contains("V2-1") && err.contains(why), "{answer}: {err}");
        }
    }
}
