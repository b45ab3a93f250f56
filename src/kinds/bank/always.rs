//! `always`: asks the system under test which entities it loads for a user type and state; 100
//! when every expected entity is there, else 0.

use std::time::Duration;

use super::expectations::{BankTest, Expectations};
use super::scoring::Findings;
use super::{BankError, Mechanism, MechanismSpec, Observation, Registration, ask_for_ids};
use crate::sut::{Sut, SutError};

pub(crate) const REGISTRATION: Registration =
    Registration { name: "always", prefix: "ALWAYS-", weight: 0.10, rate_limit: Duration::ZERO, build };

fn build(_spec: &MechanismSpec) -> Result<Box<dyn Mechanism>, BankError> {
    Ok(Box::new(Always))
}

struct Always;

impl Mechanism for Always {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn calls_sut(&self) -> bool {
        true
    }

    fn observe(&self, test: &BankTest, sut: Option<&dyn Sut>) -> Result<Observation, SutError> {
        ask_for_ids(sut, test, REGISTRATION.name)
    }

    /// Only presence counts: anything missing is a hard fail, nothing else is penalised.
    fn findings(&self, expectations: &Expectations, observed: &Observation) -> Findings {
        Findings {
            primary_missing: expectations
                .expected_primary
                .iter()
                .filter(|id| !observed.actual.contains(id))
                .cloned()
                .collect(),
            ..Findings::default()
        }
    }

    /// Only `expected_always` is checked: without it, or with ids the mechanism would ignore
    /// (secondary, not expected, rank), the test would not check what it says.
    fn check(&self, _test: &BankTest, expectations: &Expectations) -> Result<(), String> {
        if expectations.expected_primary.is_empty() {
            return Err("nothing to check: `expected_always` is missing or empty, so it would score 100 whatever \
                        the system loads; list the entities it must load"
                .into());
        }
        if !(expectations.expected_secondary.is_empty()
            && expectations.not_expected.is_empty()
            && expectations.rank_check.is_empty())
        {
            return Err("an `always` test checks only `expected_always`; its secondary, not-expected or rank \
                        expectations would never be checked: remove them"
                .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::bank::scoring::grade;
    use crate::kinds::bank::test_sut::TableSut;

    #[test]
    fn all_present_is_100_anything_missing_is_0() {
        let test: BankTest = serde_json::from_value(serde_json::json!({
            "test_id": "ALWAYS-1", "user_type": "PARENT", "expected_always": ["persona", "guardrails"]
        }))
        .unwrap();
        let m = build(&MechanismSpec::default()).unwrap();
        let score = |answer: serde_json::Value| {
            let sut = TableSut::new(&[("ALWAYS-1", answer)]);
            let observed = m.observe(&test, Some(&sut)).unwrap();
            grade(&m.findings(&test.expectations, &observed))
        };
        assert_eq!(score(serde_json::json!(["guardrails", "persona", "extra"])).score, 100);
        let missing = score(serde_json::json!(["persona"]));
        assert_eq!((missing.score, missing.hard_fail), (0, true));
    }
}
