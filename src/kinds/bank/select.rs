//! Which bank tests a run covers: all, one bank, one test by id (its prefix picks the bank:
//! `V2-` semantic, `STATE-`, `PAT-`, `ALWAYS-`, configurable), or one topic of the semantic banks.

use super::expectations::BankTest;

/// A selection of bank tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Selection {
    #[default]
    All,
    /// Every test of the bank suites with this name or mechanism.
    Bank(String),
    /// One test, by id.
    Test(String),
    /// Tests carrying this topic.
    Topic(String),
}

impl Selection {
    /// Parses `all`, `bank:NAME`, `test:ID`, `topic:NAME`, or a bare test id.
    pub(crate) fn parse(text: &str) -> Selection {
        let text = text.trim();
        match text.split_once(':') {
            _ if text.is_empty() || text == "all" => Selection::All,
            Some(("bank", name)) => Selection::Bank(name.trim().to_string()),
            Some(("test", id)) => Selection::Test(id.trim().to_string()),
            Some(("topic", topic)) => Selection::Topic(topic.trim().to_string()),
            _ => Selection::Test(text.to_string()),
        }
    }

    /// Whether a bank suite (by name and mechanism) can contain selected tests.
    pub(crate) fn covers_bank(&self, suite_name: &str, mechanism: &str, prefixes: &[(String, String)]) -> bool {
        match self {
            Selection::All => true,
            // Only semantic tests carry topics, so `topic:NAME` selects from the semantic bank alone.
            Selection::Topic(_) => mechanism == "semantic",
            Selection::Bank(name) => name == suite_name || name == mechanism,
            Selection::Test(id) => mechanism_for_id(id, prefixes).is_none_or(|m| m == mechanism),
        }
    }

    /// Whether a test is selected.
    pub(crate) fn covers_test(&self, test: &BankTest) -> bool {
        match self {
            Selection::All | Selection::Bank(_) => true,
            Selection::Test(id) => test.test_id == *id,
            Selection::Topic(topic) => test.topics.iter().any(|t| t == topic),
        }
    }
}

/// The mechanism whose prefix starts `id` (the longest one wins), from (mechanism, prefix) pairs.
pub(crate) fn mechanism_for_id<'a>(id: &str, prefixes: &'a [(String, String)]) -> Option<&'a str> {
    prefixes
        .iter()
        .filter(|(_, prefix)| !prefix.is_empty() && id.starts_with(prefix.as_str()))
        .max_by_key(|(_, prefix)| prefix.len())
        .map(|(mechanism, _)| mechanism.as_str())
}

/// The default (mechanism, prefix) pairs of the registered mechanisms.
pub(crate) fn default_prefixes() -> Vec<(String, String)> {
    super::MECHANISMS.iter().map(|m| (m.name.to_string(), m.prefix.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_picks_the_bank() {
        let prefixes = default_prefixes();
        assert_eq!(mechanism_for_id("V2-GR-001", &prefixes), Some("semantic"));
        assert_eq!(mechanism_for_id("STATE-003", &prefixes), Some("state"));
        assert_eq!(mechanism_for_id("PAT-NEG-001", &prefixes), Some("pattern"));
        assert_eq!(mechanism_for_id("ALWAYS-002", &prefixes), Some("always"));
        assert_eq!(mechanism_for_id("X-1", &prefixes), None);
        // Configured prefixes, the longest match winning.
        let custom = vec![("semantic".to_string(), "Q".to_string()), ("pattern".to_string(), "QP-".to_string())];
        assert_eq!(mechanism_for_id("QP-1", &custom), Some("pattern"));
        assert_eq!(mechanism_for_id("Q-1", &custom), Some("semantic"));
    }

    #[test]
    fn selections_parse_and_cover() {
        let prefixes = default_prefixes();
        assert_eq!(Selection::parse("all"), Selection::All);
        assert_eq!(Selection::parse("bank:retrieval"), Selection::Bank("retrieval".into()));
        assert_eq!(Selection::parse("topic:gray_rock"), Selection::Topic("gray_rock".into()));
        let one = Selection::parse("PAT-NEG-001");
        assert_eq!(one, Selection::Test("PAT-NEG-001".into()));
        assert!(one.covers_bank("crisis", "pattern", &prefixes));
        assert!(!one.covers_bank("retrieval", "semantic", &prefixes));
        assert!(Selection::Bank("semantic".into()).covers_bank("retrieval", "semantic", &prefixes));
        let topic = Selection::Topic("gray_rock".into());
        assert!(topic.covers_bank("retrieval", "semantic", &prefixes) && !topic.covers_bank("h", "state", &prefixes));
        let test: BankTest =
            serde_json::from_value(serde_json::json!({"test_id": "V2-1", "topics": ["a", "b"]})).unwrap();
        assert!(Selection::Topic("b".into()).covers_test(&test));
        assert!(!Selection::Topic("c".into()).covers_test(&test));
        assert!(!Selection::Test("V2-2".into()).covers_test(&test));
    }
}
