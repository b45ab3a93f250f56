//! Grading one task from its test run: with FAIL_TO_PASS / PASS_TO_PASS lists, every listed
//! test must have run and passed (a skipped or missing one fails the task, as in SWE-bench);
//! without them, every test must pass and at least one must have run.

use crate::model::{Case, CaseStatus, Reason, Suite, SuiteStatus};

use super::tasks::Task;

/// Reasons listed per task at most; the summary still counts them all.
const MAX_REASONS: usize = 20;

/// A task's grade.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Grade {
    pub passed: bool,
    /// Share of the graded tests that passed, 0–1.
    pub ratio: f64,
    pub summary: String,
    pub reasons: Vec<Reason>,
}

/// True when `name` (as a task lists it) names `case`: its name, id, `file::name`,
/// `classname::name` or `classname.name`.
fn names(case: &Case, name: &str) -> bool {
    if case.name == name || case.id == name {
        return true;
    }
    let qualified = |prefix: &Option<crate::model::SharedText>| {
        prefix.as_deref().is_some_and(|p| name == format!("{p}::{}", case.name) || name == format!("{p}.{}", case.name))
    };
    qualified(&case.file) || qualified(&case.classname) || node_id(case, name) || django_id(case, name)
}

/// pytest's node id of a test in a class, as SWE-bench ships them: `tests/test_x.py::TestA::test_b`
/// names the case `test_b` of class `tests.test_x.TestA` (or `TestA` in file `tests/test_x.py`).
fn node_id(case: &Case, name: &str) -> bool {
    let parts: Vec<&str> = name.split("::").collect();
    let [file, classes @ .., test] = parts.as_slice() else { return false };
    if classes.is_empty() || *test != &*case.name {
        return false;
    }
    let classes = classes.join(".");
    let module = file.strip_suffix(".py").unwrap_or(file).replace('/', ".");
    case.classname.as_deref().is_some_and(|classname| {
        classname == format!("{module}.{classes}")
            || (case.file.as_deref() == Some(*file)
                && (classname == classes || classname.ends_with(&format!(".{classes}"))))
    })
}

/// Django's test ids: `test_b (module.TestA)`, or `test_b (module.TestA.test_b)` since Django 4.
fn django_id(case: &Case, name: &str) -> bool {
    let Some((test, rest)) = name.split_once(" (") else { return false };
    let Some(class) = rest.strip_suffix(')') else { return false };
    let class = class.strip_suffix(&format!(".{test}")).unwrap_or(class);
    test == &*case.name && case.classname.as_deref() == Some(class)
}

pub(crate) fn grade(task: &Task, tests: &Suite) -> Grade {
    // A run that could not be measured grades nothing: no evidence, no pass.
    if !matches!(tests.status, SuiteStatus::Passed | SuiteStatus::Failed) {
        let why = tests.error.as_ref().map_or_else(|| tests.status.label().to_string(), |e| e.message.clone());
        return Grade {
            passed: false,
            ratio: 0.0,
            summary: format!("the tests could not be measured: {why}"),
            reasons: vec![Reason {
                code: "tests-not-measured".into(),
                expected: None,
                actual: Some(tests.status.label().into()),
                message: Some(why),
            }],
        };
    }
    if task.fail_to_pass.is_empty() && task.pass_to_pass.is_empty() {
        let counts = &tests.counts;
        let ran = counts.ran();
        let passed = tests.status == SuiteStatus::Passed && ran > 0 && counts.failures() == 0;
        let failing: Vec<Reason> = tests
            .cases
            .iter()
            .filter(|c| c.status.is_failure())
            .take(MAX_REASONS)
            .map(|c| reason("test-failed", "passed", c.status.label(), &c.name))
            .collect();
        return Grade {
            passed,
            ratio: if ran > 0 { counts.passes() as f64 / ran as f64 } else { 0.0 },
            summary: format!("{} of {ran} tests passed", counts.passes()),
            reasons: failing,
        };
    }
    let mut passed = [0usize; 2];
    let mut reasons = Vec::new();
    let lists = [("fail-to-pass", &task.fail_to_pass), ("pass-to-pass", &task.pass_to_pass)];
    for (i, (code, list)) in lists.into_iter().enumerate() {
        for name in list {
            // Every test the name matches must pass: the same name in two files, or a test
            // reported twice, must not let a passing one hide a failing one.
            let matched: Vec<&Case> = tests.cases.iter().filter(|c| names(c, name)).collect();
            let failing = matched.iter().find(|c| !matches!(c.status, CaseStatus::Passed | CaseStatus::Flaky));
            match (matched.len(), failing) {
                (0, _) => reasons.push(reason(code, "passed", "not run", name)),
                (_, None) => passed[i] += 1,
                (1, Some(case)) => reasons.push(reason(code, "passed", case.status.label(), name)),
                (n, Some(case)) => {
                    let test = format!("{name} ({n} tests have this name; one is {})", case.status.label());
                    reasons.push(reason(code, "passed", case.status.label(), &test));
                }
            }
        }
    }
    let graded = task.fail_to_pass.len() + task.pass_to_pass.len();
    let ok = passed[0] + passed[1];
    reasons.truncate(MAX_REASONS);
    Grade {
        passed: ok == graded,
        ratio: ok as f64 / graded as f64,
        summary: format!(
            "{ok} of {graded} graded tests passed (FAIL_TO_PASS {}/{}, PASS_TO_PASS {}/{})",
            passed[0],
            task.fail_to_pass.len(),
            passed[1],
            task.pass_to_pass.len()
        ),
        reasons,
    }
}

fn reason(code: &str, expected: &str, actual: &str, test: &str) -> Reason {
    Reason {
        code: code.into(),
        expected: Some(expected.into()),
        actual: Some(actual.into()),
        message: Some(test.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Counts, SuiteKind};

    fn task(f2p: &[&str], p2p: &[&str]) -> Task {
        serde_json::from_value(serde_json::json!({
            "id": "t", "repo": "r",
            "FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p,
        }))
        .unwrap()
    }

    fn suite(cases: &[(&str, CaseStatus)]) -> Suite {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        suite.cases = cases
            .iter()
            .map(|(n, s)| Case {
                name: n.to_string().into(),
                classname: Some("tests.test_calc".into()),
                status: *s,
                ..Case::default()
            })
            .collect();
        suite.counts = Counts::of(&suite.cases);
        suite.status = if suite.counts.failures() == 0 { SuiteStatus::Passed } else { SuiteStatus::Failed };
        suite
    }

    #[test]
    fn f2p_and_p2p_all_passing_is_a_pass_whatever_other_tests_do() {
        let tests = suite(&[
            ("test_add", CaseStatus::Passed),
            ("test_old", CaseStatus::Passed),
            ("test_flaky_net", CaseStatus::Failed),
        ]);
        let grade = grade(&task(&["tests.test_calc::test_add"], &["test_old"]), &tests);
        assert!(grade.passed, "{grade:?}");
        assert_eq!(grade.ratio, 1.0);
        assert!(grade.summary.contains("FAIL_TO_PASS 1/1, PASS_TO_PASS 1/1"), "{}", grade.summary);
    }

    #[test]
    fn a_skipped_or_missing_f2p_test_fails_the_task() {
        let tests = suite(&[("test_add", CaseStatus::Skipped), ("test_old", CaseStatus::Passed)]);
        let grade = grade(&task(&["test_add", "test_gone"], &["test_old"]), &tests);
        assert!(!grade.passed);
        assert!((grade.ratio - 1.0 / 3.0).abs() < 1e-9);
        let actual: Vec<_> = grade.reasons.iter().map(|r| r.actual.clone().unwrap()).collect();
        assert_eq!(actual, [serde_json::json!("skipped"), serde_json::json!("not run")]);
    }

    #[test]
    fn a_broken_p2p_test_fails_the_task() {
        let tests = suite(&[("test_add", CaseStatus::Passed), ("test_old", CaseStatus::Failed)]);
        let grade = grade(&task(&["test_add"], &["tests.test_calc.test_old"]), &tests);
        assert!(!grade.passed);
        assert_eq!(grade.reasons[0].code, "pass-to-pass");
    }

    #[test]
    fn a_name_that_matches_a_failing_test_too_fails_the_task() {
        let tests = suite(&[("test_add", CaseStatus::Passed), ("test_add", CaseStatus::Failed)]);
        let grade = grade(&task(&["test_add"], &[]), &tests);
        assert!(!grade.passed, "{grade:?}");
        assert_eq!(grade.reasons[0].actual, Some(serde_json::json!("failed")));
        let message = grade.reasons[0].message.as_deref().unwrap();
        assert_eq!(message, "test_add (2 tests have this name; one is failed)");
    }

    #[test]
    fn without_lists_every_test_must_pass_and_one_must_run() {
        assert!(grade(&task(&[], &[]), &suite(&[("a", CaseStatus::Passed)])).passed);
        let g = grade(&task(&[], &[]), &suite(&[("a", CaseStatus::Passed), ("b", CaseStatus::Failed)]));
        assert!(!g.passed);
        assert_eq!(g.ratio, 0.5);
        let mut empty = suite(&[]);
        empty.status = SuiteStatus::NoTests;
        let g = grade(&task(&[], &[]), &empty);
        assert!(!g.passed && g.reasons[0].code == "tests-not-measured");
    }
}
