//! `state`: a rules file of handler conditions evaluated by fcorr against each test's user state
//! (`eq`, `neq`, `gte`, `lte`, `in`, `exists`); expected handlers must trigger, not-expected ones
//! cost −20 each as wrong handlers. Without a rules file the SUT is asked.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::expectations::{BankTest, Expectations, parse_json};
use super::scoring::Findings;
use super::{
    BankError, Mechanism, MechanismSpec, Observation, Registration, ask_for_ids, generic_findings, require_expectations,
};
use crate::sut::{Sut, SutError};

pub(crate) const REGISTRATION: Registration =
    Registration { name: "state", prefix: "STATE-", weight: 0.15, rate_limit: Duration::ZERO, build };

/// One comparison of a user-state field.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq(Value),
    Neq(Value),
    Gte(f64),
    Lte(f64),
    In(Vec<Value>),
    Exists(bool),
}

impl Op {
    /// Missing fields are `null`: `eq null` matches them, numeric comparisons never do.
    fn holds(&self, value: Option<&Value>) -> bool {
        let value = value.unwrap_or(&Value::Null);
        match self {
            Op::Eq(expected) => value == expected,
            Op::Neq(expected) => value != expected,
            Op::Gte(n) => value.as_f64().is_some_and(|v| v >= *n),
            Op::Lte(n) => value.as_f64().is_some_and(|v| v <= *n),
            Op::In(list) => list.contains(value),
            Op::Exists(want) => value.is_null() != *want,
        }
    }
}

/// Handler → every (field, op) that must hold for it to trigger.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    handlers: BTreeMap<String, Vec<(String, Op)>>,
}

impl Rules {
    /// Reads `{"handlers": {name: {field: {op: value}}}}` (or the bare handler map).
    pub(crate) fn load(path: &Path) -> Result<Rules, BankError> {
        let text = crate::fsio::read_text(path, crate::fsio::RULES)
            .map_err(|e| BankError::input(path, format!("the rules file: {}", e.problem)))?;
        let value: Value = parse_json(path, &text)?;
        Rules::from_value(path, &value)
    }

    fn from_value(path: &Path, value: &Value) -> Result<Rules, BankError> {
        let bad = |message: String| Err(BankError::input(path, message));
        let map = match value.get("handlers") {
            Some(handlers) => handlers,
            None => value,
        };
        let Some(map) = map.as_object() else {
            return bad(
                "expected an object of handlers: {\"handlers\": {\"name\": {\"field\": {\"eq\": true}}}}".into()
            );
        };
        let mut handlers = BTreeMap::new();
        for (handler, fields) in map {
            let Some(fields) = fields.as_object() else {
                return bad(format!("handler `{handler}`: expected an object of field conditions"));
            };
            let mut conditions = Vec::new();
            for (field, constraint) in fields {
                let Some(constraint) = constraint.as_object() else {
                    return bad(format!("handler `{handler}`, field `{field}`: expected {{\"op\": value}}"));
                };
                for (op, expected) in constraint {
                    let number = || {
                        expected.as_f64().ok_or_else(|| {
                            BankError::input(
                                path,
                                format!("handler `{handler}`, field `{field}`: `{op}` needs a number"),
                            )
                        })
                    };
                    let op = match op.as_str() {
                        "eq" => Op::Eq(expected.clone()),
                        "neq" => Op::Neq(expected.clone()),
                        "gte" => Op::Gte(number()?),
                        "lte" => Op::Lte(number()?),
                        "in" => match expected.as_array() {
                            Some(list) => Op::In(list.clone()),
                            None => return bad(format!("handler `{handler}`, field `{field}`: `in` needs a list")),
                        },
                        "exists" => match expected.as_bool() {
                            Some(b) => Op::Exists(b),
                            None => {
                                return bad(format!(
                                    "handler `{handler}`, field `{field}`: `exists` needs true or false"
                                ));
                            }
                        },
                        other => {
                            return bad(format!(
                                "handler `{handler}`, field `{field}`: unknown operator `{other}` (known: eq, neq, gte, lte, in, exists)"
                            ));
                        }
                    };
                    conditions.push((field.clone(), op));
                }
            }
            handlers.insert(handler.clone(), conditions);
        }
        Ok(Rules { handlers })
    }

    /// Handlers whose every condition holds for `state`, in name order.
    pub(crate) fn evaluate(&self, state: &serde_json::Map<String, Value>) -> Vec<String> {
        self.handlers
            .iter()
            .filter(|(_, conditions)| conditions.iter().all(|(field, op)| op.holds(state.get(field))))
            .map(|(handler, _)| handler.clone())
            .collect()
    }
}

fn build(spec: &MechanismSpec) -> Result<Box<dyn Mechanism>, BankError> {
    let rules = spec.rules.as_deref().map(Rules::load).transpose()?;
    Ok(Box::new(State { rules }))
}

struct State {
    rules: Option<Rules>,
}

impl Mechanism for State {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn calls_sut(&self) -> bool {
        self.rules.is_none()
    }

    fn observe(&self, test: &BankTest, sut: Option<&dyn Sut>) -> Result<Observation, SutError> {
        let Some(rules) = &self.rules else { return ask_for_ids(sut, test, REGISTRATION.name) };
        let empty = serde_json::Map::new();
        let state = test.user_state.as_ref().unwrap_or(&empty);
        let actual = rules.evaluate(state);
        Ok(Observation { details: serde_json::json!({ "triggered": actual }), actual, ..Observation::default() })
    }

    /// Not-expected handlers are wrong handlers (−20), not false positives; no rank order.
    fn findings(&self, expectations: &Expectations, observed: &Observation) -> Findings {
        let mut findings = generic_findings(expectations, &observed.actual);
        findings.wrong_handlers = std::mem::take(&mut findings.false_positives);
        findings.rank_violations.clear();
        findings
    }

    /// Handlers have no order, so a `rank_check` would never be checked.
    fn check(&self, _test: &BankTest, expectations: &Expectations) -> Result<(), String> {
        if !expectations.rank_check.is_empty() {
            return Err("a `state` test has no rank order: its `rank_check` would never be checked; remove it".into());
        }
        require_expectations(expectations, "`expected_handlers`, `expected_secondary`, `not_expected_handlers`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::bank::scoring::grade;

    /// The handler conditions of `examples/banks/state/state_rules.json`.
    fn example_rules() -> Rules {
        let value = serde_json::json!({"handlers": {
            "handler_first_conversation": {"is_first_conversation": {"eq": true}},
            "handler_returning_user": {"is_first_conversation": {"eq": false}, "days_since_last": {"gte": 7}},
            "handler_post_escalation": {"is_first_conversation": {"eq": false}, "last_rating": {"lte": 2}},
            "handler_celebrating_wins": {"is_first_conversation": {"eq": false}, "last_rating": {"gte": 4}},
            "handler_clinician_mode": {"user_type": {"in": ["CLINICIAN", "PROFESSIONAL"]}},
            "handler_interaction_debrief": {"is_first_conversation": {"eq": false}, "has_pending_debrief": {"eq": true}}
        }});
        Rules::from_value(Path::new("rules.json"), &value).unwrap()
    }

    fn state(v: serde_json::Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn seed_conditions_trigger_the_seed_handlers() {
        let rules = example_rules();
        let table = [
            (
                serde_json::json!({"is_first_conversation": true, "days_since_last": null, "user_type": "PARENT"}),
                vec!["handler_first_conversation"],
            ),
            (serde_json::json!({"is_first_conversation": false, "days_since_last": 7}), vec!["handler_returning_user"]),
            (serde_json::json!({"is_first_conversation": false, "days_since_last": 6}), vec![]),
            // null is not ≥ 7: a missing number never satisfies a comparison.
            (serde_json::json!({"is_first_conversation": false, "days_since_last": null}), vec![]),
            (serde_json::json!({"is_first_conversation": false, "last_rating": 2}), vec!["handler_post_escalation"]),
            (
                serde_json::json!({"is_first_conversation": false, "last_rating": 4, "user_type": "CLINICIAN"}),
                vec!["handler_celebrating_wins", "handler_clinician_mode"],
            ),
            (serde_json::json!({"is_first_conversation": false, "last_rating": 3}), vec![]),
            (
                serde_json::json!({"is_first_conversation": false, "has_pending_debrief": true}),
                vec!["handler_interaction_debrief"],
            ),
        ];
        for (user_state, want) in table {
            assert_eq!(rules.evaluate(&state(user_state.clone())), want, "{user_state}");
        }
    }

    #[test]
    fn neq_and_exists() {
        let rules = Rules::from_value(
            Path::new("r.json"),
            &serde_json::json!({"h": {"user_type": {"neq": "CLINICIAN"}, "email": {"exists": true}}}),
        )
        .unwrap();
        assert_eq!(rules.evaluate(&state(serde_json::json!({"user_type": "PARENT", "email": "a@b"}))), vec!["h"]);
        assert!(rules.evaluate(&state(serde_json::json!({"user_type": "PARENT", "email": null}))).is_empty());
        assert!(rules.evaluate(&state(serde_json::json!({"user_type": "CLINICIAN", "email": "a@b"}))).is_empty());
    }

    #[test]
    fn bad_rules_name_the_handler_and_field() {
        let err = |v: serde_json::Value| Rules::from_value(Path::new("rules.json"), &v).unwrap_err().to_string();
        let e = err(serde_json::json!({"h": {"days": {"gte": "seven"}}}));
        assert!(e.contains("rules.json") && e.contains("`h`") && e.contains("`days`") && e.contains("number"), "{e}");
        let e = err(serde_json::json!({"h": {"days": {"approx": 7}}}));
        assert!(e.contains("unknown operator `approx`"), "{e}");
    }

    #[test]
    fn not_expected_handlers_are_wrong_handlers() {
        let m = State { rules: Some(example_rules()) };
        let test: BankTest = serde_json::from_value(serde_json::json!({
            "test_id": "STATE-1",
            "user_state": {"is_first_conversation": false, "last_rating": 5, "user_type": "PROFESSIONAL"},
            "expected_handlers": ["handler_celebrating_wins"],
            "not_expected_handlers": ["handler_clinician_mode", "handler_post_escalation"]
        }))
        .unwrap();
        let observed = m.observe(&test, None).unwrap();
        let findings = m.findings(&test.expectations, &observed);
        assert_eq!(findings.wrong_handlers, vec!["handler_clinician_mode"]);
        assert!(findings.false_positives.is_empty());
        assert_eq!(grade(&findings).score, 80);
    }
}
