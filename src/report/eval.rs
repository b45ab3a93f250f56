//! What reports show of an eval suite: pass rate, cases per reason and per category, usage, the
//! cases whose outcome flipped since the baseline (`passed → incorrect`), and, when several
//! systems or prompts were asked, the comparison grid. Derived from the suite's cases, so
//! results.json stays the single record and every report agrees with it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compare::{CaseChange, Comparison};
use crate::model::{Case, CaseShape, CaseStatus, Suite, Usage};

/// Category shown for cases that have none.
pub(crate) const NO_CATEGORY: &str = "(none)";

/// An eval suite's figures for reports.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct EvalMetrics {
    /// Cases judged (every case of the suite).
    pub cases: u64,
    /// Cases that passed, flaky ones included (they reached `min-pass`).
    pub passes: u64,
    /// `passes / cases × 100`, two decimals; none when no case was judged.
    pub pass_rate: Option<f64>,
    /// Cases per outcome word (`pass`, `flaky`, `incorrect`, `timeout`...), `pass` first, then
    /// most frequent first.
    pub reasons: Vec<ReasonCount>,
    /// Cases per category (the dataset's `category`), by name.
    pub categories: Vec<CategoryRow>,
    /// Tokens, calls and cost summed over every call.
    pub usage: Option<Usage>,
    /// Cases judged on an answer from the answer cache (`cache = true`), not on a call made now.
    pub cached: u64,
    /// Cases whose outcome word differs from the baseline's, at most the number asked for.
    pub flips: Vec<Flip>,
    /// Every flip, listed or not.
    pub flips_count: usize,
    /// Several systems or prompts side by side: one column per (system, prompt).
    pub grid: Option<Grid>,
}

/// The comparison grid of a suite that asked several systems or through several prompts.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Grid {
    /// One per (system, prompt), in the order they were asked (prompt-major).
    pub columns: Vec<GridColumn>,
    /// Dataset cases whose pass/fail differs between columns, at most the number asked for.
    pub disagreements: Vec<Disagreement>,
    /// Every disagreement, listed or not.
    pub disagreements_count: usize,
    /// Dataset cases asked (rows of the grid).
    pub cases: usize,
    /// What the columns are: `System`, `Prompt` or `System · prompt`.
    pub heading: &'static str,
    /// The heading of the score column, naming the suite's policy: `Score (pass-rate)`.
    pub score_label: String,
}

/// One system through one prompt.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct GridColumn {
    pub sut: Option<String>,
    pub prompt: Option<String>,
    /// `small`, `terse`, or `small · terse` when both vary.
    pub label: String,
    pub cases: u64,
    /// Passed or flaky (reached `min-pass`).
    pub passes: u64,
    pub pass_rate: Option<f64>,
    /// The suite's policy over this column's cases alone (`score_label` names it): for one
    /// prompt, the number `score<N@sut` gates the system on.
    pub score: Option<f64>,
    /// Mean case score 0–100: a case's graded `score`, else 100 when it passed and 0 when not.
    /// Not shown in the grid (the policy's score is); kept for templates.
    pub mean_case_score: Option<f64>,
    /// Cases without a judged answer: the system failed (`backend-error`), gave none in time
    /// (`timeout`), or a grader could not judge (`grader-error`).
    pub errors: u64,
    /// Mean time per answered case, milliseconds (every attempt of a repeated case summed);
    /// failed calls and timeouts are left out (an error is fast, a timeout is the limit); none
    /// when no case was answered.
    pub latency_ms: Option<f64>,
    /// Tokens summed, when the system reported any.
    pub tokens: Option<u64>,
    /// Cost summed (USD), when known.
    pub cost_usd: Option<f64>,
}

impl GridColumn {
    /// The column's figures as shown in the terminal and report.html: passed/asked, pass rate,
    /// score, errors, latency, tokens and cost (`-` where there is none).
    pub(crate) fn cells(&self) -> [String; 7] {
        let num = |v: Option<f64>, suffix: &str| v.map_or_else(|| "-".to_string(), |v| format!("{v}{suffix}"));
        [
            format!("{}/{}", self.passes, self.cases),
            num(self.pass_rate, "%"),
            num(self.score, ""),
            self.errors.to_string(),
            self.latency_ms.map_or_else(|| "-".into(), |ms| format!("{ms:.0} ms")),
            self.tokens.map_or_else(|| "-".into(), |t| t.to_string()),
            self.cost_usd.map_or_else(|| "-".into(), |c| format!("${c:.4}")),
        ]
    }
}

/// A dataset case the columns do not agree on: each column's outcome word (`passed`,
/// `incorrect`…; `-` where the case was not asked).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Disagreement {
    pub case: String,
    pub outcomes: Vec<String>,
}

/// How many cases ended with one reason.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct ReasonCount {
    pub code: String,
    pub count: u64,
}

/// One category's cases.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct CategoryRow {
    pub category: String,
    pub cases: u64,
    pub passes: u64,
    pub failures: u64,
    pub pass_rate: Option<f64>,
}

/// A case whose outcome changed since the baseline.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Flip {
    pub case_id: String,
    pub name: String,
    /// Outcome word in the baseline (`passed`, `incorrect`...); `new` when the case is new.
    pub from: String,
    /// Outcome word now; `removed` when the case is gone.
    pub to: String,
    /// True when the case got worse (passed before, fails now).
    pub regressed: bool,
}

/// The word reports use for a case's outcome: `passed`, `flaky`, else its first reason's code
/// (`incorrect`, `timeout`...), else its status.
pub(crate) fn outcome_word(status: CaseStatus, reason: Option<&str>) -> String {
    match status {
        CaseStatus::Passed => "passed".into(),
        CaseStatus::Flaky => "flaky".into(),
        _ => reason.filter(|r| *r != "pass").unwrap_or(status.label()).to_string(),
    }
}

fn case_word(case: &Case) -> String {
    outcome_word(case.status, case.extra().eval().reasons.first().map(|r| r.code.as_str()))
}

fn rate(passes: u64, cases: u64) -> Option<f64> {
    (cases > 0).then(|| crate::score::round2(passes as f64 * 100.0 / cases as f64))
}

/// The figures of an eval or benchmark suite (pass rate, reasons, usage and cost, flips), listing
/// at most `max_flips` flips; `None` for other kinds.
pub(crate) fn of(suite: &Suite, comparison: Option<&Comparison>, max_flips: usize) -> Option<EvalMetrics> {
    if suite.kind.shape() != CaseShape::Items {
        return None;
    }
    let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
    let mut categories: BTreeMap<&str, CategoryRow> = BTreeMap::new();
    let mut passes = 0;
    for case in &suite.cases {
        let passed = matches!(case.status, CaseStatus::Passed | CaseStatus::Flaky);
        passes += u64::from(passed);
        *reasons.entry(case_word(case)).or_default() += 1;
        let category = case.category().unwrap_or(NO_CATEGORY);
        let row = categories.entry(category).or_insert_with(|| CategoryRow {
            category: category.to_string(),
            cases: 0,
            passes: 0,
            failures: 0,
            pass_rate: None,
        });
        row.cases += 1;
        row.passes += u64::from(passed);
        row.failures += u64::from(case.status.is_failure());
    }
    let mut reasons: Vec<ReasonCount> = reasons.into_iter().map(|(code, count)| ReasonCount { code, count }).collect();
    // `passed` first, then the most frequent; ties by name (the map's order, kept by the stable sort).
    reasons.sort_by_key(|r| (r.code != "passed", std::cmp::Reverse(r.count)));
    let categories = categories
        .into_values()
        .map(|mut row| {
            row.pass_rate = rate(row.passes, row.cases);
            row
        })
        .collect();
    let flips: Vec<Flip> = comparison
        .map(|c| c.cases.iter().filter(|x| x.suite_id == suite.id).filter_map(flip).collect())
        .unwrap_or_default();
    let cases = suite.cases.len() as u64;
    Some(EvalMetrics {
        cases,
        passes,
        pass_rate: rate(passes, cases),
        reasons,
        categories,
        usage: suite.usage.clone(),
        cached: suite.cases.iter().filter(|c| c.extra().eval().cached).count() as u64,
        flips_count: flips.len(),
        flips: flips.into_iter().take(max_flips).collect(),
        grid: grid(suite, max_flips),
    })
}

/// The dataset case a result case was asked for: its name without `@<sut>` and `[<prompt>]`.
fn dataset_id(case: &Case) -> &str {
    let mut name = case.name.as_str();
    if let Some(sut) = &case.extra().eval().sut {
        name = name.strip_suffix(sut.as_str()).and_then(|n| n.strip_suffix('@')).unwrap_or(name);
    }
    if let Some(prompt) = &case.extra().eval().prompt {
        name = name
            .strip_suffix(']')
            .and_then(|n| n.strip_suffix(prompt.as_str()))
            .and_then(|n| n.strip_suffix('['))
            .unwrap_or(name);
    }
    name
}

fn passed(case: &Case) -> bool {
    matches!(case.status, CaseStatus::Passed | CaseStatus::Flaky)
}

/// Cases that got no judged answer: the call failed or timed out, or no grader could judge.
fn unanswered(case: &Case) -> bool {
    matches!(case.status, CaseStatus::Error | CaseStatus::Timeout)
}

/// Whether the system answered the case's call (a grader may still have failed to judge it):
/// its latency means something.
fn answered(case: &Case) -> bool {
    let reason = case.extra().eval().reasons.first().map(|r| r.code.as_str());
    !matches!(reason, Some("backend-error" | "timeout")) && case.status != CaseStatus::Timeout
}

/// The grid of a suite whose cases name more than one (system, prompt); `None` otherwise.
/// Lists at most `max` disagreements.
pub(crate) fn grid(suite: &Suite, max: usize) -> Option<Grid> {
    let cases = &suite.cases;
    // Every case of most suites (every import) has the same (system, prompt), usually none:
    // no grid, found without mapping every case by its dataset id (once per report and terminal).
    fn key(case: &Case) -> (Option<&str>, Option<&str>) {
        (case.extra().eval().sut.as_deref(), case.extra().eval().prompt.as_deref())
    }
    let first = key(cases.first()?);
    if cases.iter().all(|case| key(case) == first) {
        return None;
    }
    let mut keys: Vec<(Option<&str>, Option<&str>)> = Vec::new();
    let mut rows: Vec<&str> = Vec::new();
    let mut row_of: BTreeMap<&str, usize> = BTreeMap::new();
    // (row, column) -> case
    let mut cells: BTreeMap<(usize, usize), &Case> = BTreeMap::new();
    for case in cases {
        let key = key(case);
        let column = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
            keys.push(key);
            keys.len() - 1
        });
        let id = dataset_id(case);
        let row = *row_of.entry(id).or_insert_with(|| {
            rows.push(id);
            rows.len() - 1
        });
        cells.insert((row, column), case);
    }
    if keys.len() < 2 {
        return None;
    }
    let suts_vary = keys.iter().any(|k| k.0 != keys[0].0);
    let prompts_vary = keys.iter().any(|k| k.1 != keys[0].1);
    let columns = keys
        .iter()
        .enumerate()
        .map(|(i, (sut, prompt))| {
            let of: Vec<&Case> = cells.iter().filter(|((_, c), _)| *c == i).map(|(_, case)| *case).collect();
            let n = of.len() as u64;
            let passes = of.iter().filter(|c| passed(c)).count() as u64;
            let mean = |values: Vec<f64>| {
                (!values.is_empty()).then(|| crate::score::round2(values.iter().sum::<f64>() / values.len() as f64))
            };
            let usages: Vec<&Usage> = of.iter().filter_map(|c| c.extra().eval().usage.as_ref()).collect();
            let label = match (suts_vary, prompts_vary) {
                (true, true) => format!("{} · {}", sut.unwrap_or("-"), prompt.unwrap_or("-")),
                (false, true) => prompt.unwrap_or("-").to_string(),
                _ => sut.unwrap_or("-").to_string(),
            };
            let part = crate::score::part_of(suite, |c| key(c) == (*sut, *prompt));
            GridColumn {
                sut: sut.map(str::to_string),
                prompt: prompt.map(str::to_string),
                label,
                cases: n,
                passes,
                pass_rate: rate(passes, n),
                score: (n > 0).then(|| crate::score::round2(part.score.value)),
                mean_case_score: mean(
                    of.iter().map(|c| c.extra().score.unwrap_or(if passed(c) { 100.0 } else { 0.0 })).collect(),
                ),
                errors: of.iter().filter(|c| unanswered(c)).count() as u64,
                latency_ms: mean(of.iter().filter(|c| answered(c)).filter_map(|c| c.duration_ms).collect()),
                tokens: (!usages.is_empty()).then(|| usages.iter().map(|u| u.tokens).sum()),
                cost_usd: usages
                    .iter()
                    .filter_map(|u| u.cost_usd)
                    .reduce(|a, b| a + b)
                    .map(|c| (c * 1e6).round() / 1e6),
            }
        })
        .collect();
    let word = |case: Option<&&Case>| case.map_or_else(|| "-".to_string(), |c| case_word(c));
    let disagreements: Vec<Disagreement> = rows
        .iter()
        .enumerate()
        .filter(|(row, _)| {
            let asked: Vec<bool> = (0..keys.len()).filter_map(|c| cells.get(&(*row, c))).map(|c| passed(c)).collect();
            asked.iter().any(|p| *p) && asked.iter().any(|p| !p)
        })
        .map(|(row, id)| Disagreement {
            case: id.to_string(),
            outcomes: (0..keys.len()).map(|c| word(cells.get(&(row, c)))).collect(),
        })
        .collect();
    Some(Grid {
        columns,
        disagreements_count: disagreements.len(),
        disagreements: disagreements.into_iter().take(max).collect(),
        cases: rows.len(),
        heading: match (suts_vary, prompts_vary) {
            (true, true) => "System · prompt",
            (false, true) => "Prompt",
            _ => "System",
        },
        score_label: format!("Score ({})", suite.score.policy.label()),
    })
}

/// The grid as plain text lines for the terminal: one row per column of the grid (system ·
/// prompt), then the disagreeing cases.
pub(crate) fn grid_lines(grid: &Grid, max_disagreements: usize) -> Vec<String> {
    let score = grid.score_label.to_lowercase();
    let mut table = vec![
        [grid.heading, "passed", "pass rate", score.as_str(), "errors", "latency", "tokens", "cost"]
            .map(str::to_string)
            .to_vec(),
    ];
    for c in &grid.columns {
        let mut row = vec![c.label.clone()];
        row.extend(c.cells());
        table.push(row);
    }
    let widths: Vec<usize> =
        (0..table[0].len()).map(|i| table.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut lines: Vec<String> = table
        .iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, w))| if i == 0 { format!("{cell:<w$}") } else { format!("{cell:>w$}") })
                .collect();
            format!("  {}", cells.join("  ").trim_end())
        })
        .collect();
    if grid.disagreements_count == 0 {
        lines.push(format!("  all {} cases agree across the grid", grid.cases));
    } else {
        let listed: Vec<&str> = grid.disagreements.iter().take(max_disagreements).map(|d| d.case.as_str()).collect();
        let more = grid.disagreements_count.saturating_sub(listed.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        lines.push(format!(
            "  {} of {} cases disagree: {}{more}",
            grid.disagreements_count,
            grid.cases,
            listed.join(", ")
        ));
    }
    lines
}

/// The change as a flip, when the outcome word differs (a still-failing case whose reason went
/// from `incorrect` to `timeout` is a flip; one failing the same way is not).
fn flip(change: &CaseChange) -> Option<Flip> {
    let from = change.before.map(|s| outcome_word(s, change.before_reason.as_deref())).unwrap_or_else(|| "new".into());
    let to = change.after.map(|s| outcome_word(s, change.after_reason.as_deref())).unwrap_or_else(|| "removed".into());
    if from == to {
        return None;
    }
    let passed = |s: Option<CaseStatus>| matches!(s, Some(CaseStatus::Passed | CaseStatus::Flaky));
    Some(Flip {
        case_id: change.case_id.clone(),
        name: change.name.clone(),
        regressed: passed(change.before) && change.after.is_some_and(CaseStatus::is_failure),
        from,
        to,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{BaselineInfo, compare};
    use crate::model::{Reason, Run, SuiteKind};

    fn case(name: &str, status: CaseStatus, reason: &str, category: Option<&str>) -> Case {
        let mut case = Case {
            name: name.into(),
            id: name.into(),
            status,
            extra: crate::model::CaseExtra {
                eval: crate::model::EvalExtra {
                    reasons: vec![Reason { code: reason.into(), expected: None, actual: None, message: None }],
                    ..Default::default()
                }
                .packed(),
                ..Default::default()
            }
            .packed(),
            ..Case::default()
        };
        if let Some(category) = category {
            case.extra_mut().eval_mut().tags.insert("category".into(), category.into());
        }
        case
    }

    fn eval_suite(cases: Vec<Case>) -> Suite {
        let mut suite = Suite::new("shell", "shell", SuiteKind::Eval);
        suite.cases = cases;
        suite
    }

    fn run_of(suite: Suite) -> Run {
        Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
    }

    #[test]
    fn counts_reasons_and_categories() {
        let suite = eval_suite(vec![
            case("a", CaseStatus::Passed, "pass", Some("files")),
            case("b", CaseStatus::Failed, "incorrect", Some("files")),
            case("c", CaseStatus::Failed, "safety-mismatch", Some("danger")),
            case("d", CaseStatus::Timeout, "timeout", None),
            case("e", CaseStatus::Flaky, "incorrect", Some("files")),
            case("f", CaseStatus::Failed, "incorrect", Some("danger")),
        ]);
        let m = of(&suite, None, 10).unwrap();
        assert_eq!((m.cases, m.passes, m.pass_rate), (6, 2, Some(33.33)));
        let reasons: Vec<(&str, u64)> = m.reasons.iter().map(|r| (r.code.as_str(), r.count)).collect();
        assert_eq!(reasons, [("passed", 1), ("incorrect", 2), ("flaky", 1), ("safety-mismatch", 1), ("timeout", 1)]);
        let rows: Vec<(&str, u64, u64, u64)> =
            m.categories.iter().map(|r| (r.category.as_str(), r.cases, r.passes, r.failures)).collect();
        assert_eq!(rows, [(NO_CATEGORY, 1, 0, 1), ("danger", 2, 0, 2), ("files", 3, 2, 1)]);
        assert_eq!(m.categories[2].pass_rate, Some(66.67));
        assert!(m.flips.is_empty());
    }

    #[test]
    fn other_kinds_have_no_eval_figures() {
        let suite = Suite::new("p", "p", SuiteKind::Project);
        assert_eq!(of(&suite, None, 10), None);
    }

    #[test]
    fn flips_name_the_reason_before_and_after() {
        let before = run_of(eval_suite(vec![
            case("a", CaseStatus::Passed, "pass", None),
            case("b", CaseStatus::Failed, "incorrect", None),
            case("c", CaseStatus::Failed, "incorrect", None),
            case("d", CaseStatus::Failed, "incorrect", None),
            case("gone", CaseStatus::Passed, "pass", None),
        ]));
        let after = run_of(eval_suite(vec![
            case("a", CaseStatus::Failed, "incorrect", None),
            case("b", CaseStatus::Passed, "pass", None),
            case("c", CaseStatus::Timeout, "timeout", None),
            case("d", CaseStatus::Failed, "incorrect", None),
            case("new", CaseStatus::Failed, "posix-mismatch", None),
        ]));
        let comparison = compare(&after, &before, BaselineInfo::default());
        let m = of(&after.suites[0], Some(&comparison), 10).unwrap();
        let mut flips: Vec<(String, String, String, bool)> =
            m.flips.iter().map(|f| (f.name.clone(), f.from.clone(), f.to.clone(), f.regressed)).collect();
        flips.sort();
        let expected = [
            ("a", "passed", "incorrect", true),
            ("b", "incorrect", "passed", false),
            ("c", "incorrect", "timeout", false),
            ("gone", "passed", "removed", false),
            ("new", "new", "posix-mismatch", false),
        ];
        let expected: Vec<(String, String, String, bool)> =
            expected.iter().map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), *d)).collect();
        assert_eq!(flips, expected, "d failed the same way both times: not a flip");
        assert_eq!(m.flips_count, 5);
        assert_eq!(of(&after.suites[0], Some(&comparison), 2).unwrap().flips.len(), 2);
    }
}
