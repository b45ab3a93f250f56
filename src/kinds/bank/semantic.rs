//! `semantic`: asks the system under test for a ranked list of ids for each prompt and checks
//! primary, secondary, not-expected and rank constraints.

use std::time::Duration;

use super::expectations::BankTest;
use super::{BankError, Mechanism, MechanismSpec, Observation, Registration, ask_for_ids};
use crate::sut::{Sut, SutError};

pub(crate) const REGISTRATION: Registration = Registration {
    name: "semantic",
    prefix: "V2-",
    weight: 0.60,
    // At most one call per 1.25 s: the ranking model throttles callers that go faster.
    rate_limit: Duration::from_millis(1250),
    build,
};

fn build(spec: &MechanismSpec) -> Result<Box<dyn Mechanism>, BankError> {
    if spec.top_k == Some(0) {
        return Err(BankError::Setting("`top-k` must be at least 1".into()));
    }
    Ok(Box::new(Semantic { top_k: spec.top_k }))
}

struct Semantic {
    top_k: Option<usize>,
}

impl Mechanism for Semantic {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn calls_sut(&self) -> bool {
        true
    }

    fn observe(&self, test: &BankTest, sut: Option<&dyn Sut>) -> Result<Observation, SutError> {
        if test.prompt.as_deref().is_none_or(|p| p.trim().is_empty()) {
            return Err(SutError::Backend { message: format!("test {} has no `prompt`", test.test_id), raw: None });
        }
        let mut observed = ask_for_ids(sut, test, REGISTRATION.name)?;
        if let Some(k) = self.top_k
            && observed.actual.len() > k
        {
            // Only the top k count, as a reader of the top k would see them.
            observed.actual.truncate(k);
        }
        Ok(observed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::bank::expectations::load_bank;
    use crate::kinds::bank::scoring::grade;
    use crate::kinds::bank::test_sut::TableSut;

    #[test]
    fn ranked_answers_are_scored_against_the_expectations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(
            &path,
            r#"{"tests": [{"test_id": "V2-1", "prompt": "p", "expected_primary": ["a"], "expected_secondary": ["b"],
               "not_expected": ["x"], "rank_check": [{"higher": "a", "lower": "b"}]}]}"#,
        )
        .unwrap();
        let bank = load_bank(&path).unwrap();
        let test = &bank.tests[0];
        let score = |answer: serde_json::Value, top_k: Option<usize>| {
            let sut = TableSut::new(&[("V2-1", answer)]);
            let m = build(&MechanismSpec { top_k, ..MechanismSpec::default() }).unwrap();
            let observed = m.observe(test, Some(&sut)).unwrap();
            grade(&m.findings(&test.expectations, &observed)).score
        };
        assert_eq!(score(serde_json::json!(["a", "b"]), None), 100);
        assert_eq!(score(serde_json::json!(["b", "a"]), None), 90); // rank violation
        assert_eq!(score(serde_json::json!(["a", "x"]), None), 70); // secondary missing + false positive
        assert_eq!(score(serde_json::json!(["x", "b"]), None), 0); // primary missing
        // With top-k 1, `b` falls outside what counts.
        assert_eq!(score(serde_json::json!(["a", "b"]), Some(1)), 90);
    }

    #[test]
    fn without_a_sut_the_case_cannot_be_observed() {
        let m = build(&MechanismSpec::default()).unwrap();
        let test: BankTest = serde_json::from_value(serde_json::json!({"test_id": "V2-1", "prompt": "p"})).unwrap();
        let err = m.observe(&test, None).unwrap_err().to_string();
        assert!(err.contains("needs a system under test"), "{err}");
    }
}
