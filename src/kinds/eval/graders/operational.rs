//! Operational checks from what the SUT call recorded: `latency` (milliseconds of the call) and
//! `cost` (US dollars, reported by the system or priced from its tokens), each passing at or
//! under its `threshold`. An answer served from the answer cache had no call to measure: error.

use super::{Answered, CheckError, Grade, Grader, GradingContext, Registration, Spec};

pub(crate) const GRADERS: &[Registration] = &[
    Registration { name: "latency", build: |s| limit(s, Measure::Latency) },
    Registration { name: "cost", build: |s| limit(s, Measure::Cost) },
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Measure {
    Latency,
    Cost,
}

fn limit(spec: &Spec<'_>, measure: Measure) -> Result<Box<dyn Grader>, CheckError> {
    if let Some(key) = spec.fields.keys().next() {
        return Err(CheckError::Fields(format!("unknown field `{key}`: only `threshold` (and `weight`) are taken")));
    }
    let unit = if measure == Measure::Latency { "milliseconds" } else { "US dollars" };
    let limit =
        spec.threshold.ok_or_else(|| CheckError::Fields(format!("needs `threshold`: the most {unit} allowed")))?;
    if limit < 0.0 {
        return Err(CheckError::Fields(format!("threshold {limit} is negative")));
    }
    Ok(Box::new(Limit { measure, limit }))
}

/// The call's latency or cost, at most `limit`.
#[derive(Debug)]
struct Limit {
    measure: Measure,
    limit: f64,
}

impl Grader for Limit {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        if answer.cached {
            return Grade::Error(
                "the answer came from the answer cache: no call to measure (run with --no-cache)".into(),
            );
        }
        let (value, shown) = match self.measure {
            Measure::Latency => {
                let ms = answer.duration.as_secs_f64() * 1000.0;
                (ms, format!("{ms:.0} ms"))
            }
            Measure::Cost => match answer.usage.and_then(|u| u.cost_usd) {
                Some(cost) => (cost, format!("${cost:.6}")),
                None => {
                    return Grade::Error(
                        "the system reported no cost: have it report `cost_usd`, or set `cost-per-1k-in`/`cost-per-1k-out` in [suite.sut]"
                            .into(),
                    );
                }
            },
        };
        let limit = self.limit;
        Grade::check(value <= limit, || match self.measure {
            Measure::Latency => format!("{shown} > {limit} ms"),
            Measure::Cost => format!("{shown} > ${limit}"),
        })
    }

    fn threshold(&self) -> Option<f64> {
        Some(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Judgement, checks_for, judge};
    use super::*;
    use crate::kinds::eval::dataset::TestCase;
    use crate::model::Usage;
    use serde_json::{Value, json};
    use std::time::Duration;

    #[test]
    fn latency_and_cost_from_the_call() {
        let case: TestCase = toml::from_str(
            "id = 'x'\nprompt = 'p'\nassert = [{ type = 'latency', threshold = 500 }, { type = 'cost', threshold = 0.002 }]",
        )
        .unwrap();
        let checks = checks_for(&case).unwrap();
        let output = json!("ok");
        let usage = Usage { cost_usd: Some(0.001), ..Usage::default() };
        let mut answer = Answered::bare(&case, &output);
        answer.duration = Duration::from_millis(120);
        answer.usage = Some(&usage);
        let ctx = GradingContext::default();
        let judged = judge(&checks, &answer, &ctx, None);
        assert_eq!(judged.judgement, Judgement::Pass);
        assert_eq!(judged.assertions[0].threshold, Some(500.0));
        answer.duration = Duration::from_millis(900);
        let slow = judge(&checks, &answer, &ctx, None);
        assert!(slow.judgement.message().unwrap().contains("900 ms > 500 ms"), "{slow:?}");
        answer.usage = None;
        assert_eq!(judge(&checks, &answer, &ctx, None).judgement.code(), "grader-error");
        answer.cached = true;
        assert!(judge(&checks, &answer, &ctx, None).judgement.message().unwrap().contains("answer cache"));
        let case: TestCase = toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'latency' }]").unwrap();
        assert!(checks_for(&case).unwrap_err().to_string().contains("needs `threshold`"));
    }

    #[test]
    fn output_values_are_not_needed() {
        // Only the call is measured; the answer can be any JSON.
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'latency', threshold = 1 }]").unwrap();
        let output = Value::Null;
        assert_eq!(
            judge(&checks_for(&case).unwrap(), &Answered::bare(&case, &output), &GradingContext::default(), None)
                .judgement,
            Judgement::Pass
        );
    }
}
