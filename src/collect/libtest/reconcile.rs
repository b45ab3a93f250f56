//! A test binary's own `test result:` counts against the result lines read for it. A child process
//! writing to the inherited output (a tool printing libtest-shaped lines, a nested run) can add
//! lines; the binary's summary says how many of each it really had, so lines beyond it are dropped.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;

use crate::model::CaseStatus;

/// The counts of one `test result: ok. 3 passed; 1 failed; 1 ignored; 0 measured; …` line, as
/// result lines: a bench's `bench:` line (a `measured` count) reads as passed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Tally {
    pub(super) passed: u64,
    pub(super) failed: u64,
    pub(super) ignored: u64,
}

impl Tally {
    /// The counts a summary line gives; `None` when they cannot be read (another wording, a
    /// count too large), in which case nothing is checked against it.
    pub(super) fn parse(line: &str) -> Option<Tally> {
        static SUMMARY: OnceLock<Regex> = OnceLock::new();
        // A literal pattern; it compiles.
        let pattern = SUMMARY.get_or_init(|| {
            Regex::new(r"^test result: \S+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured")
                .expect("valid regex")
        });
        let c = pattern.captures(line)?;
        let n = |i: usize| c[i].parse::<u64>().ok();
        Some(Tally { passed: n(1)?.checked_add(n(4)?)?, failed: n(2)?, ignored: n(3)? })
    }

    fn of(lines: impl Iterator<Item = CaseStatus>) -> Tally {
        let mut tally = Tally::default();
        for status in lines {
            *tally.slot(status) += 1;
        }
        tally
    }

    fn slot(&mut self, status: CaseStatus) -> &mut u64 {
        match status {
            CaseStatus::Passed => &mut self.passed,
            CaseStatus::Skipped => &mut self.ignored,
            _ => &mut self.failed,
        }
    }

    fn get(mut self, status: CaseStatus) -> u64 {
        *self.slot(status)
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} passed, {} failed, {} ignored", self.passed, self.failed, self.ignored)
    }
}

/// Why a result line is not counted as the binary's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Dropped {
    /// The same test has a later result line: libtest prints one per test, after the test ends,
    /// so the earlier one was printed while it ran.
    Repeated,
    /// Not a Rust test path (`tests/ui/x.rs`): another tool's line (trybuild's, say).
    NotATestName,
    /// More lines of this status than the summary counts, and nothing tells which are not the
    /// binary's: the earliest ones go (a child prints before the test that started it ends).
    Surplus,
}

impl Dropped {
    pub(super) fn reason(self) -> &'static str {
        match self {
            Dropped::Repeated => "a test whose own result came later",
            Dropped::NotATestName => "not a Rust test name",
            Dropped::Surplus => "more than its summary counts",
        }
    }
}

/// What checking one run of a binary against its summary found.
#[derive(Debug, PartialEq)]
pub(super) struct Reconciled {
    /// Per line, in order: why it is not counted, or `None` when it is.
    pub(super) dropped: Vec<Option<Dropped>>,
    /// The counts of the lines kept.
    pub(super) kept: Tally,
}

impl Reconciled {
    /// Some line could only be dropped as surplus, not because anything shows it is not the
    /// binary's: the names kept may be wrong, though not the number of passes.
    pub(super) fn guessed(&self) -> bool {
        self.dropped.contains(&Some(Dropped::Surplus))
    }
}

/// Checks the result lines (`name`, `status`, in the order read) of one `running N tests` …
/// `test result:` run against its summary. Lines are dropped only where a status has more than
/// the summary counts: first those shown not to be the binary's (repeated, not a test name;
/// `doc_tests` names are file paths, so that check is off for them), then, for passes and ignores
/// only, the earliest of the rest. A failure line is never dropped on count alone: a failure the
/// summary does not count is shown rather than hidden.
pub(super) fn reconcile(lines: &[(&str, CaseStatus)], summary: Tally, doc_tests: bool) -> Reconciled {
    let mut dropped = vec![None; lines.len()];
    if Tally::of(lines.iter().map(|l| l.1)) == summary {
        return Reconciled { dropped, kept: summary };
    }
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (i, (name, _)) in lines.iter().enumerate() {
        last.insert(name, i);
    }
    for status in [CaseStatus::Passed, CaseStatus::Skipped, CaseStatus::Failed] {
        let want = summary.get(status);
        let of_status: Vec<usize> =
            lines.iter().enumerate().filter(|(_, l)| same(l.1, status)).map(|(i, _)| i).collect();
        let mut have = of_status.len() as u64;
        let mut pass = |why: Dropped, drops: &dyn Fn(usize) -> bool| {
            for &i in &of_status {
                if have <= want {
                    return;
                }
                if dropped[i].is_none() && drops(i) {
                    dropped[i] = Some(why);
                    have -= 1;
                }
            }
        };
        pass(Dropped::Repeated, &|i| last.get(lines[i].0) != Some(&i));
        if !doc_tests {
            pass(Dropped::NotATestName, &|i| !test_shaped(lines[i].0));
        }
        if status != CaseStatus::Failed {
            pass(Dropped::Surplus, &|_| true);
        }
    }
    let kept = Tally::of(lines.iter().zip(&dropped).filter(|(_, d)| d.is_none()).map(|(l, _)| l.1));
    Reconciled { dropped, kept }
}

/// Two statuses count in the same summary column.
fn same(a: CaseStatus, b: CaseStatus) -> bool {
    let mut tally = Tally::default();
    *tally.slot(a) += 1;
    tally.get(b) == 1
}

/// A name libtest gives a `#[test]` function: a module path of Rust identifiers (`r#` allowed).
fn test_shaped(name: &str) -> bool {
    name.split("::").all(|segment| {
        let segment = segment.strip_prefix("r#").unwrap_or(segment);
        let mut chars = segment.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use CaseStatus::{Failed, Passed, Skipped};

    fn tally(passed: u64, failed: u64, ignored: u64) -> Tally {
        Tally { passed, failed, ignored }
    }

    #[test]
    fn reads_summary_counts_with_benches_as_passes() {
        let line = "test result: FAILED. 3 passed; 1 failed; 2 ignored; 4 measured; 0 filtered out; finished in 0.52s";
        assert_eq!(Tally::parse(line), Some(tally(7, 1, 2)));
        assert_eq!(Tally::parse("test result: ok. 1 passed"), None);
        assert_eq!(Tally::parse("test result: ok. 99999999999999999999 passed; 0 failed; 0 ignored; 0 measured"), None);
    }

    #[test]
    fn lines_that_agree_with_the_summary_are_all_kept() {
        let lines = [("a", Passed), ("a", Failed), ("tests/ui/x.rs", Skipped)];
        let r = reconcile(&lines, tally(1, 1, 1), false);
        assert_eq!(r.dropped, vec![None, None, None]);
    }

    #[test]
    fn an_earlier_line_of_a_test_named_again_is_dropped() {
        // A child printed `test t ... ok` while `t` ran; libtest then printed `t`'s real result.
        let lines = [("t", Passed), ("t", Failed)];
        let r = reconcile(&lines, tally(0, 1, 0), false);
        assert_eq!(r.dropped, vec![Some(Dropped::Repeated), None]);
        assert_eq!(r.kept, tally(0, 1, 0));
        assert!(!r.guessed());
    }

    #[test]
    fn lines_that_are_no_test_name_go_before_any_guess() {
        let lines = [("tests/ui/ok.rs", Passed), ("ui", Passed), ("tests/ui/b.rs", Passed)];
        let r = reconcile(&lines, tally(1, 0, 0), false);
        assert_eq!(r.dropped, vec![Some(Dropped::NotATestName), None, Some(Dropped::NotATestName)]);
        assert!(!r.guessed());
        // Doc-tests are named by file: there the check says nothing.
        let doc = [("src/lib.rs - a (line 1)", Passed), ("src/lib.rs - b (line 5)", Passed)];
        let r = reconcile(&doc, tally(1, 0, 0), true);
        assert_eq!(r.dropped, vec![Some(Dropped::Surplus), None]);
    }

    #[test]
    fn surplus_passes_go_earliest_first_and_failures_stay() {
        let lines = [("fake_a", Passed), ("fake_b", Failed), ("real", Passed), ("real_failure", Failed)];
        let r = reconcile(&lines, tally(1, 1, 0), false);
        assert_eq!(r.dropped, vec![Some(Dropped::Surplus), None, None, None]);
        assert_eq!(r.kept, tally(1, 2, 0));
        assert!(r.guessed());
        // Fewer lines than the summary counts: nothing to drop, the difference stays.
        let r = reconcile(&[("a", Passed)], tally(1, 2, 0), false);
        assert_eq!((r.dropped, r.kept), (vec![None], tally(1, 0, 0)));
    }

    #[test]
    fn test_names() {
        for name in ["t", "tests::a_1", "_x::r#try", "модуль::тест"] {
            assert!(test_shaped(name), "{name}");
        }
        for name in ["", "tests/ui/x.rs", "a::", "1a", "a b", "a - should panic"] {
            assert!(!test_shaped(name), "{name}");
        }
    }
}
