//! `pattern`: a rules file of case-insensitive regex patterns (with entities and a `critical`
//! flag) and keyword boosts, matched by fcorr against each test's text with details of which rule
//! matched which span. A missed crisis on a critical positive test, or a crisis triggered on a
//! critical negative test, is a critical failure (it makes the run's health CRITICAL).

use std::path::Path;
use std::time::Duration;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use super::expectations::{BankTest, Expectations, parse_json};
use super::scoring::Findings;
use super::{BankError, Mechanism, MechanismSpec, Observation, Registration, ask_for_ids, require_expectations};
use crate::sut::{Sut, SutError};

pub(crate) const REGISTRATION: Registration =
    Registration { name: "pattern", prefix: "PAT-", weight: 0.15, rate_limit: Duration::ZERO, build };

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default, alias = "crisis_patterns")]
    patterns: Vec<PatternRule>,
    #[serde(default)]
    keyword_boosts: Vec<KeywordRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternRule {
    pattern: String,
    entities: Vec<String>,
    #[serde(default, alias = "is_critical")]
    critical: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeywordRule {
    keywords: Vec<String>,
    entity: String,
}

/// Compiled rules: every pattern and keyword as a case-insensitive regex.
pub(crate) struct Rules {
    patterns: Vec<(Regex, Vec<String>, bool)>,
    keywords: Vec<(Vec<(String, Regex)>, String)>,
}

/// One rule that matched, and where.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Match {
    /// `pattern` or `keyword`.
    pub(crate) rule: &'static str,
    /// The regex or keyword as written in the rules file.
    pub(crate) source: String,
    pub(crate) matched_text: String,
    /// Byte offsets of the match in the text.
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) entities: Vec<String>,
    pub(crate) critical: bool,
}

impl Rules {
    pub(crate) fn load(path: &Path) -> Result<Rules, BankError> {
        let text = crate::fsio::read_text(path, crate::fsio::RULES)
            .map_err(|e| BankError::input(path, format!("the rules file: {}", e.problem)))?;
        let file: RulesFile = parse_json(path, &text)?;
        let compile = |source: &str, what: String| {
            RegexBuilder::new(source)
                .case_insensitive(true)
                .build()
                .map_err(|e| BankError::input(path, format!("{what} `{source}` is not a valid regex: {e}")))
        };
        let mut patterns = Vec::new();
        for (i, rule) in file.patterns.into_iter().enumerate() {
            let regex = compile(&rule.pattern, format!("pattern #{}", i + 1))?;
            patterns.push((regex, rule.entities, rule.critical));
        }
        let mut keywords = Vec::new();
        for rule in file.keyword_boosts {
            let mut compiled = Vec::new();
            for keyword in rule.keywords {
                // A keyword matches as a plain substring, in any case.
                let regex = compile(&regex::escape(&keyword), format!("keyword for `{}`", rule.entity))?;
                compiled.push((keyword, regex));
            }
            keywords.push((compiled, rule.entity));
        }
        Ok(Rules { patterns, keywords })
    }

    /// Every rule that matches `text`, patterns first, each keyword rule once (its first keyword).
    pub(crate) fn matches(&self, text: &str) -> Vec<Match> {
        let mut found = Vec::new();
        for (regex, entities, critical) in &self.patterns {
            if let Some(m) = regex.find(text) {
                found.push(Match {
                    rule: "pattern",
                    source: regex.as_str().to_string(),
                    matched_text: m.as_str().to_string(),
                    start: m.start(),
                    end: m.end(),
                    entities: entities.clone(),
                    critical: *critical,
                });
            }
        }
        for (keywords, entity) in &self.keywords {
            if let Some((keyword, m)) = keywords.iter().find_map(|(k, r)| r.find(text).map(|m| (k, m))) {
                found.push(Match {
                    rule: "keyword",
                    source: keyword.clone(),
                    matched_text: m.as_str().to_string(),
                    start: m.start(),
                    end: m.end(),
                    entities: vec![entity.clone()],
                    critical: false,
                });
            }
        }
        found
    }
}

/// Entities of the matches, each once, in match order.
fn entities(matches: &[Match]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in matches.iter().flat_map(|m| &m.entities) {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    out
}

fn build(spec: &MechanismSpec) -> Result<Box<dyn Mechanism>, BankError> {
    let rules = spec.rules.as_deref().map(Rules::load).transpose()?;
    Ok(Box::new(Pattern { rules }))
}

struct Pattern {
    rules: Option<Rules>,
}

impl Mechanism for Pattern {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn calls_sut(&self) -> bool {
        self.rules.is_none()
    }

    fn observe(&self, test: &BankTest, sut: Option<&dyn Sut>) -> Result<Observation, SutError> {
        let Some(rules) = &self.rules else { return ask_for_ids(sut, test, REGISTRATION.name) };
        let Some(text) = test.prompt.as_deref() else {
            return Err(SutError::Backend {
                message: format!("test {} has no `prompt` to match", test.test_id),
                raw: None,
            });
        };
        let matches = rules.matches(text);
        Ok(Observation {
            actual: entities(&matches),
            details: serde_json::json!({ "matches": matches }),
            ..Observation::default()
        })
    }

    /// A critical failure happens only on critical tests: a crisis test that missed its primary,
    /// or a negative test where a not-expected entity matched. `check` has refused every other
    /// critical test, so no critical test is left that could never fail critically.
    fn critical_failure(&self, test: &BankTest, findings: &Findings) -> bool {
        test.is_critical
            && match pattern_type(test) {
                Some(PatternType::Crisis) => !findings.primary_missing.is_empty(),
                Some(PatternType::Negative) => !findings.false_positives.is_empty(),
                _ => false,
            }
    }

    /// `pattern_type` is one of the known ones (in any case: bank files write `bank_type` in
    /// capitals), and a critical test is one whose failure can be critical: a crisis test with
    /// its expected matches, a negative test with the matches it must not trigger.
    fn check(&self, test: &BankTest, expectations: &Expectations) -> Result<(), String> {
        let kind = match (test.pattern_type.as_deref(), pattern_type(test)) {
            (Some(written), None) => {
                return Err(format!(
                    "unknown `pattern_type` `{written}` (known: crisis, negative, keyword, in any case)"
                ));
            }
            (_, kind) => kind,
        };
        match kind {
            _ if !test.is_critical => {}
            Some(PatternType::Crisis) if expectations.expected_primary.is_empty() => {
                return Err("a critical crisis test needs `expected_matches`: a missed crisis is judged on them".into());
            }
            Some(PatternType::Negative) if expectations.not_expected.is_empty() => {
                return Err("a critical negative test needs `not_expected_matches`: a crisis triggered on it is \
                            judged on them"
                    .into());
            }
            Some(PatternType::Crisis | PatternType::Negative) => {}
            Some(PatternType::Keyword) | None => {
                return Err(format!(
                    "is critical, but its `pattern_type` is {}: only a `crisis` or `negative` test can fail \
                     critically; set one of them, or drop `is_critical`",
                    test.pattern_type.as_deref().map_or("missing".to_string(), |t| format!("`{t}`"))
                ));
            }
        }
        require_expectations(expectations, "`expected_matches`, `expected_secondary`, `not_expected_matches`")
    }
}

/// The pattern types that decide criticality (`keyword` tests are scored only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatternType {
    Crisis,
    Negative,
    Keyword,
}

/// A test's `pattern_type`, in any case and without surrounding spaces; `None` when it is
/// missing or unknown (`check` tells the two apart).
fn pattern_type(test: &BankTest) -> Option<PatternType> {
    match test.pattern_type.as_deref()?.trim().to_ascii_lowercase().as_str() {
        "crisis" => Some(PatternType::Crisis),
        "negative" => Some(PatternType::Negative),
        "keyword" => Some(PatternType::Keyword),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::bank::scoring::grade;

    /// A crisis-pattern rules file in the shipped layout (`crisis_patterns`, `keyword_boosts`),
    /// trimmed to what the tests need.
    const EXAMPLE_RULES: &str = r#"{
  "crisis_patterns": [
    {"pattern": "want(s)? to (die|end it|hurt myself|kill myself)", "entities": ["handler_crisis", "rule_crisis_detection"], "is_critical": true},
    {"pattern": "better off (dead|without me)", "entities": ["handler_crisis"], "is_critical": true},
    {"pattern": "(not|don't|dont) feel safe", "entities": ["handler_crisis"], "is_critical": true},
    {"pattern": "being (hit|abused|hurt)", "entities": ["handler_crisis", "domestic_violence"], "is_critical": true}
  ],
  "keyword_boosts": [
    {"keywords": ["gray rock", "grey rock", "gray-rock"], "entity": "gray_rock"},
    {"keywords": ["boundaries", "boundary", "set boundaries"], "entity": "boundary_setting"}
  ]
}"#;

    fn mechanism() -> (tempfile::TempDir, Box<dyn Mechanism>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.json");
        std::fs::write(&path, EXAMPLE_RULES).unwrap();
        let m = build(&MechanismSpec { rules: Some(path), ..MechanismSpec::default() }).unwrap();
        (dir, m)
    }

    fn test(v: serde_json::Value) -> BankTest {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn crisis_phrases_match_with_their_span() {
        let (_d, m) = mechanism();
        let t = test(serde_json::json!({"test_id": "PAT-CRISIS-001", "prompt": "Honestly I WANT TO END IT all",
            "expected_matches": ["handler_crisis"], "expected_secondary": ["rule_crisis_detection"],
            "pattern_type": "crisis", "is_critical": true}));
        let observed = m.observe(&t, None).unwrap();
        assert_eq!(observed.actual, vec!["handler_crisis", "rule_crisis_detection"]);
        let first = &observed.details["matches"][0];
        assert_eq!(first["matched_text"], "WANT TO END IT");
        assert_eq!((first["start"].as_u64(), first["end"].as_u64()), (Some(11), Some(25)));
        let findings = m.findings(&t.expectations, &observed);
        assert_eq!(grade(&findings).score, 100);
        assert!(!m.critical_failure(&t, &findings));
    }

    #[test]
    fn a_missed_crisis_is_a_critical_failure() {
        let (_d, m) = mechanism();
        let t = test(serde_json::json!({"test_id": "PAT-CRISIS-002", "prompt": "i just want to disappear forever",
            "expected_matches": ["handler_crisis"], "pattern_type": "crisis", "is_critical": true}));
        let observed = m.observe(&t, None).unwrap();
        let findings = m.findings(&t.expectations, &observed);
        assert!(grade(&findings).hard_fail);
        assert!(m.critical_failure(&t, &findings));
    }

    #[test]
    fn a_crisis_on_a_negative_test_is_a_critical_failure() {
        let (_d, m) = mechanism();
        // A critical negative test on which handler_crisis matched is a critical failure.
        let t = test(
            serde_json::json!({"test_id": "PAT-NEG-001", "prompt": "my kid is not feel safe at the new school? no, I mean she does not feel safe there",
            "expected_matches": [], "not_expected_matches": ["handler_crisis"], "pattern_type": "negative", "is_critical": true}),
        );
        let observed = m.observe(&t, None).unwrap();
        let findings = m.findings(&t.expectations, &observed);
        assert_eq!(findings.false_positives, vec!["handler_crisis"]);
        assert_eq!(grade(&findings).score, 80);
        assert!(m.critical_failure(&t, &findings));
        // The same false positive on a test not marked critical is only a penalty.
        let mut lenient = t.clone();
        lenient.is_critical = false;
        assert!(!m.critical_failure(&lenient, &findings));
        // A clean negative test.
        let ok = test(serde_json::json!({"test_id": "PAT-NEG-002", "prompt": "she wants to end the call early",
            "not_expected_matches": ["handler_crisis"], "pattern_type": "negative", "is_critical": true}));
        let observed = m.observe(&ok, None).unwrap();
        let findings = m.findings(&ok.expectations, &observed);
        assert_eq!(grade(&findings).score, 100);
        assert!(!m.critical_failure(&ok, &findings));
    }

    #[test]
    fn pattern_types_are_read_in_any_case_and_unknown_ones_are_refused() {
        let (_d, m) = mechanism();
        let missed = |kind: serde_json::Value| {
            let t = test(serde_json::json!({"test_id": "PAT-CRISIS-9", "prompt": "i am going to kill myself tonight",
                "expected_matches": ["handler_crisis"], "pattern_type": kind, "is_critical": true}));
            let observed = m.observe(&t, None).unwrap();
            m.check(&t, &t.expectations).map(|()| m.critical_failure(&t, &m.findings(&t.expectations, &observed)))
        };
        // `CRISIS` and ` Crisis ` were not critical: a missed crisis passed the run at 90.
        for kind in ["crisis", "CRISIS", " Crisis "] {
            assert_eq!(missed(serde_json::json!(kind)), Ok(true), "{kind}");
        }
        let err = missed(serde_json::json!("crises")).unwrap_err();
        assert!(err.contains("unknown `pattern_type` `crises`") && err.contains("crisis, negative, keyword"), "{err}");
        // A critical test whose failure could never be critical is refused, not silently lenient.
        for (kind, why) in [(serde_json::Value::Null, "is missing"), (serde_json::json!("Keyword"), "is `Keyword`")] {
            let err = missed(kind).unwrap_err();
            assert!(err.contains(why) && err.contains("drop `is_critical`"), "{err}");
        }
        let no_matches = test(serde_json::json!({"test_id": "PAT-NEG-9", "prompt": "p", "expected_matches": ["x"],
            "pattern_type": "NEGATIVE", "is_critical": true}));
        let err = m.check(&no_matches, &no_matches.expectations).unwrap_err();
        assert!(err.contains("needs `not_expected_matches`"), "{err}");
        // Not critical: any known type, or none, is fine.
        let plain = test(serde_json::json!({"test_id": "PAT-KW-9", "prompt": "p", "expected_matches": ["x"]}));
        assert_eq!(m.check(&plain, &plain.expectations), Ok(()));
    }

    #[test]
    fn keywords_boost_once_per_rule_in_any_case() {
        let (_d, m) = mechanism();
        let t = test(
            serde_json::json!({"test_id": "PAT-KW-001", "prompt": "How do I Grey Rock and set boundaries? gray rock again",
            "expected_matches": ["gray_rock", "boundary_setting"], "pattern_type": "keyword"}),
        );
        let observed = m.observe(&t, None).unwrap();
        assert_eq!(observed.actual, vec!["gray_rock", "boundary_setting"]);
        let matches = observed.details["matches"].as_array().unwrap();
        assert_eq!(matches.len(), 2);
        // The rule's first keyword that occurs is reported (the rules file's order), not the earliest span.
        assert_eq!(matches[0]["source"], "gray rock");
        assert_eq!(matches[0]["start"].as_u64(), Some(39));
        assert_eq!(matches[1]["source"], "boundaries");
    }

    #[test]
    fn a_bad_regex_names_the_file_and_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.json");
        std::fs::write(&path, r#"{"patterns": [{"pattern": "ok"}, {"pattern": "(unclosed", "entities": []}]}"#)
            .unwrap();
        let err = Rules::load(&path).err().unwrap().to_string();
        assert!(err.contains("rules.json") && err.contains("missing field `entities`"), "{err}");
        std::fs::write(&path, r#"{"patterns": [{"pattern": "(unclosed", "entities": []}]}"#).unwrap();
        let err = Rules::load(&path).err().unwrap().to_string();
        assert!(err.contains("rules.json") && err.contains("pattern #1") && err.contains("(unclosed"), "{err}");
    }
}
