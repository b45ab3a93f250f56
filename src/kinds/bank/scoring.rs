//! 100-point bank scoring: 100 when every primary expectation is met, else a hard
//! fail at 0; per-item penalties stack (−10 missing secondary, −20 false positive, −10 rank-order
//! violation, −20 wrong handler) down to a floor of 0. Every score keeps its itemised breakdown.

use crate::score::interpret;
use serde::{Deserialize, Serialize};

/// One kind of penalty and what it costs per item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Penalty {
    /// An expected secondary item is absent.
    MissingSecondary,
    /// An item that must not appear is present.
    FalsePositive,
    /// Two present items are ranked in the wrong order.
    RankViolation,
    /// A handler that must not load loaded (state banks).
    WrongHandler,
}

impl Penalty {
    /// Points lost per item: 10 for a missing secondary or a rank violation, 20 for a false
    /// positive or a wrong handler.
    pub(crate) fn points(self) -> u32 {
        match self {
            Penalty::MissingSecondary | Penalty::RankViolation => 10,
            Penalty::FalsePositive | Penalty::WrongHandler => 20,
        }
    }

    /// Reason code and words for reports, e.g. `false-positive` / "false positive".
    pub(crate) fn code(self) -> &'static str {
        match self {
            Penalty::MissingSecondary => "missing-secondary",
            Penalty::FalsePositive => "false-positive",
            Penalty::RankViolation => "rank-violation",
            Penalty::WrongHandler => "wrong-handler",
        }
    }

    pub(crate) fn words(self) -> &'static str {
        match self {
            Penalty::MissingSecondary => "missing secondary",
            Penalty::FalsePositive => "false positive",
            Penalty::RankViolation => "rank violation",
            Penalty::WrongHandler => "wrong handler",
        }
    }
}

/// A rank constraint `higher` above `lower` that the answer broke (1-based ranks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RankViolation {
    pub(crate) higher: String,
    pub(crate) lower: String,
    pub(crate) higher_rank: usize,
    pub(crate) lower_rank: usize,
}

/// What a mechanism found when it compared an answer with the expectations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Findings {
    /// Primary items that are absent; any one makes a hard fail.
    pub(crate) primary_missing: Vec<String>,
    pub(crate) secondary_missing: Vec<String>,
    pub(crate) false_positives: Vec<String>,
    pub(crate) rank_violations: Vec<RankViolation>,
    pub(crate) wrong_handlers: Vec<String>,
}

/// One line of a breakdown: which item cost how many points, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Deduction {
    pub(crate) penalty: Penalty,
    /// The item: an id, or `a above b` for a rank violation.
    pub(crate) item: String,
    /// Points lost (positive).
    pub(crate) points: u32,
}

/// A 0–100 score with the deductions that produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Graded {
    pub(crate) score: u32,
    /// A primary expectation was missed: the score is 0 whatever else happened.
    pub(crate) hard_fail: bool,
    /// Deductions in the order they were applied; empty on a hard fail (nothing to deduct from).
    pub(crate) deductions: Vec<Deduction>,
    /// Points the deductions add up to before the floor (may exceed 100).
    pub(crate) deducted: u32,
}

impl Graded {
    /// One line for a case message, e.g. `90 Minor issue (−10: missing secondary biff_response)`.
    pub(crate) fn summary(&self, findings: &Findings) -> String {
        if self.hard_fail {
            return format!("0 Hard fail (primary not found: {})", findings.primary_missing.join(", "));
        }
        if self.deductions.is_empty() {
            return format!("{} {}", self.score, interpret(self.score));
        }
        format!("{} {} ({})", self.score, interpret(self.score), deduction_list(&self.deductions))
    }
}

/// `−20: false positive X; −10: missing secondary Y`, penalties of one kind grouped.
pub(crate) fn deduction_list(deductions: &[Deduction]) -> String {
    let mut parts: Vec<(Penalty, u32, Vec<&str>)> = Vec::new();
    for d in deductions {
        match parts.iter_mut().find(|(p, _, _)| *p == d.penalty) {
            Some((_, points, items)) => {
                *points += d.points;
                items.push(&d.item);
            }
            None => parts.push((d.penalty, d.points, vec![&d.item])),
        }
    }
    parts
        .iter()
        .map(|(penalty, points, items)| format!("\u{2212}{points}: {} {}", penalty.words(), items.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Scores findings: hard fail on any missing primary, else 100 minus stacked penalties, floor 0.
pub(crate) fn grade(findings: &Findings) -> Graded {
    if !findings.primary_missing.is_empty() {
        return Graded { score: 0, hard_fail: true, deductions: Vec::new(), deducted: 0 };
    }
    let mut deductions = Vec::new();
    let mut add = |penalty: Penalty, items: &mut dyn Iterator<Item = String>| {
        for item in items {
            deductions.push(Deduction { penalty, item, points: penalty.points() });
        }
    };
    add(Penalty::MissingSecondary, &mut findings.secondary_missing.iter().cloned());
    add(Penalty::FalsePositive, &mut findings.false_positives.iter().cloned());
    add(
        Penalty::RankViolation,
        &mut findings.rank_violations.iter().map(|v| format!("{} above {}", v.higher, v.lower)),
    );
    add(Penalty::WrongHandler, &mut findings.wrong_handlers.iter().cloned());
    let deducted: u32 = deductions.iter().map(|d| d.points).sum();
    Graded { score: 100u32.saturating_sub(deducted), hard_fail: false, deductions, deducted }
}

/// Rank constraints checked against an ordered answer: a violation only when both items are
/// present and `higher` comes after `lower`.
pub(crate) fn rank_violations(answer: &[String], checks: &[RankCheck]) -> Vec<RankViolation> {
    checks
        .iter()
        .filter_map(|check| {
            let higher = answer.iter().position(|x| *x == check.higher)?;
            let lower = answer.iter().position(|x| *x == check.lower)?;
            (higher > lower).then(|| RankViolation {
                higher: check.higher.clone(),
                lower: check.lower.clone(),
                higher_rank: higher + 1,
                lower_rank: lower + 1,
            })
        })
        .collect()
}

/// `{higher, lower}`: `higher` must rank above `lower` when both are present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RankCheck {
    pub(crate) higher: String,
    pub(crate) lower: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn violation() -> RankViolation {
        RankViolation { higher: "a".into(), lower: "b".into(), higher_rank: 2, lower_rank: 1 }
    }

    #[test]
    fn each_penalty_and_their_combinations_score_as_documented() {
        // (scenario, findings, score, hard fail): one row per penalty and their combinations.
        let table: Vec<(&str, Findings, u32, bool)> = vec![
            ("perfect", Findings::default(), 100, false),
            ("1 secondary miss", Findings { secondary_missing: ids(&["s1"]), ..Findings::default() }, 90, false),
            ("1 false positive", Findings { false_positives: ids(&["x"]), ..Findings::default() }, 80, false),
            (
                "2 secondary + 1 rank violation",
                Findings {
                    secondary_missing: ids(&["s1", "s2"]),
                    rank_violations: vec![violation()],
                    ..Findings::default()
                },
                70,
                false,
            ),
            (
                "1 secondary + 2 false positives",
                Findings { secondary_missing: ids(&["s1"]), false_positives: ids(&["x", "y"]), ..Findings::default() },
                50,
                false,
            ),
            ("primary not found", Findings { primary_missing: ids(&["p"]), ..Findings::default() }, 0, true),
        ];
        for (scenario, findings, score, hard_fail) in table {
            let graded = grade(&findings);
            assert_eq!(graded.score, score, "{scenario}");
            assert_eq!(graded.hard_fail, hard_fail, "{scenario}");
        }
    }

    #[test]
    fn wrong_handlers_cost_twenty_each() {
        let graded = grade(&Findings { wrong_handlers: ids(&["h1", "h2"]), ..Findings::default() });
        assert_eq!(graded.score, 60);
        assert_eq!(graded.deductions.len(), 2);
        assert!(graded.deductions.iter().all(|d| d.penalty == Penalty::WrongHandler && d.points == 20));
    }

    #[test]
    fn penalties_stack_down_to_a_floor_of_zero() {
        // 6 false positives = 120 points: the score floors at 0 but it is not a hard fail.
        let graded = grade(&Findings { false_positives: ids(&["a", "b", "c", "d", "e", "f"]), ..Findings::default() });
        assert_eq!(graded.score, 0);
        assert!(!graded.hard_fail);
        assert_eq!(graded.deducted, 120);
        // Exactly 100 points of penalties: 0, still not a hard fail.
        let every_kind = Findings {
            secondary_missing: ids(&["s"]),
            false_positives: ids(&["f1", "f2"]),
            rank_violations: vec![violation()],
            wrong_handlers: ids(&["w1", "w2"]),
            ..Findings::default()
        };
        let graded = grade(&every_kind);
        assert_eq!((graded.score, graded.deducted, graded.deductions.len()), (0, 100, 6));
        // One point short of the floor.
        let graded = grade(&Findings {
            false_positives: ids(&["a", "b", "c", "d"]),
            secondary_missing: ids(&["s"]),
            ..Findings::default()
        });
        assert_eq!(graded.score, 10);
    }

    #[test]
    fn a_hard_fail_ignores_penalties() {
        let graded =
            grade(&Findings { primary_missing: ids(&["p"]), false_positives: ids(&["x"]), ..Findings::default() });
        assert_eq!((graded.score, graded.hard_fail), (0, true));
        assert!(graded.deductions.is_empty());
    }

    #[test]
    fn breakdown_names_items_and_points() {
        let findings = Findings {
            secondary_missing: ids(&["medium_response_time"]),
            false_positives: ids(&["handler_crisis", "x"]),
            ..Findings::default()
        };
        let graded = grade(&findings);
        assert_eq!(
            graded.summary(&findings),
            "50 Failing (\u{2212}10: missing secondary medium_response_time; \u{2212}40: false positive handler_crisis, x)"
        );
        let hard = Findings { primary_missing: ids(&["gray_rock"]), ..Findings::default() };
        assert_eq!(grade(&hard).summary(&hard), "0 Hard fail (primary not found: gray_rock)");
    }

    #[test]
    fn rank_checks_need_both_items_present_and_out_of_order() {
        let answer = ids(&["gray_rock", "biff_response", "boundary_setting"]);
        let check = |higher: &str, lower: &str| RankCheck { higher: higher.into(), lower: lower.into() };
        assert!(rank_violations(&answer, &[check("gray_rock", "boundary_setting")]).is_empty());
        // Absent item: not a violation, whatever the order.
        assert!(rank_violations(&answer, &[check("missing", "gray_rock")]).is_empty());
        let v = rank_violations(&answer, &[check("boundary_setting", "gray_rock")]);
        assert_eq!(
            v,
            vec![RankViolation {
                higher: "boundary_setting".into(),
                lower: "gray_rock".into(),
                higher_rank: 3,
                lower_rank: 1
            }]
        );
    }
}
