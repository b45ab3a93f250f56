//! The error cases that say a suite's results are incomplete: the runner stopped, a report was
//! cut short, tests it announced never reported. Such a suite cannot be scored on the tests that
//! did report (91 tests lost to a crash must not leave a 90 % pass rate): it scores 0 under every
//! policy, and the gate names the case. Parsers and ecosystems that add such a case use a name
//! from [`INCOMPLETE_RESULTS`] (a path or a package may follow it after a space).

use super::{Case, CaseStatus, Suite};

/// Name of the `error` case a parser adds for a report that stops before its end.
pub const CUT_SHORT_CASE: &str = "[report cut short]";

/// Name of the `error` case a parser adds for a report that declares failures or errors of which
/// it lists none: the failing results are missing, so the suite must not pass on the rest. The
/// collector puts the report's path after it (the parser does not know it).
pub const DECLARED_FAILURES_CASE: &str = "[declared failures not reported]";

/// Name of the `error` case for a report whose exact declared test count is above the tests it
/// lists (jest/vitest `numTotalTests`): results vanished between the runner and the file. Named
/// with the report's path by the collector, like [`DECLARED_FAILURES_CASE`].
pub const DECLARED_TESTS_CASE: &str = "[declared tests not reported]";

/// Start of the name of the `error` case for a report file that could not be read at all (broken,
/// not a report format, unreadable) among files that could: its results are unknown.
pub const UNREADABLE_CASE: &str = "[unreadable report]";

/// Name of the `error` case for an error a test runner caught outside any test while the tests
/// ran (vitest's "Unhandled Errors"): the runner itself warns that the passes may be false
/// positives, so they prove nothing. The runner's file goes in the case's classname.
pub const UNHANDLED_ERROR_CASE: &str = "[unhandled error]";

/// a test binary that stopped before its summary, or failed with no failing result (`libtest`).
pub const TEST_BINARY_CASE: &str = "[test binary]";

/// tests pytest collected and never reported.
pub const TESTS_NOT_REPORTED_CASE: &str = "[tests not reported]";

/// a TAP plan with fewer test points than it announced.
pub const PLANNED_TESTS_CASE: &str = "[planned tests not reported]";

/// a TAP subtest whose points do not meet its plan (its name follows).
pub const SUBTEST_PLAN_CASE: &str = "[subtest plan not met]";

/// TAP test points numbered out of place.
pub const OUT_OF_SEQUENCE_CASE: &str = "[tests out of sequence]";

/// a TAP stream with a second top-level plan.
pub const SECOND_PLAN_CASE: &str = "[more than one plan]";

/// a test JVM that ended mid-class (the class follows).
pub const CRASHED_CASE: &str = "[crashed]";

/// a Go package that passed without running a test (TestMain exited before m.Run).
pub const NO_TEST_RAN_CASE: &str = "[no test ran]";

/// a Maven module with tests and no surefire report (the module follows).
pub const NO_TESTS_RAN_CASE: &str = "[no tests ran]";

/// a Go package whose test binary did not build, a Maven module that did not compile (the
/// package or module follows), or any part of a suite whose build failed while its test command
/// ran the tests of the parts that did build.
pub const BUILD_FAILED_CASE: &str = "[build failed]";

/// a Maven module the reactor SKIPPED because a module it depends on failed: its tests never
/// compiled or ran (the module follows).
pub const SKIPPED_BY_MAVEN_CASE: &str = "[skipped by Maven]";

/// a Go package that failed outside any test.
pub const PACKAGE_FAILED_CASE: &str = "[package failed]";

/// a .NET or Dart run that aborted.
pub const TEST_RUN_CASE: &str = "[test run]";

/// RSpec errors outside examples (a spec file that did not load): `]` or ` N]` follows.
pub const OUTSIDE_EXAMPLES_CASE: &str = "[error outside of examples";

/// Every name above: an `error` case named so (alone, or followed by what it names after a
/// space) says tests the run had did not report, or that the runner itself doubts its passes.
/// Producers use these constants, so the scoring rule and the cases cannot drift apart.
pub const INCOMPLETE_RESULTS: &[&str] = &[
    CUT_SHORT_CASE,
    DECLARED_FAILURES_CASE,
    DECLARED_TESTS_CASE,
    UNREADABLE_CASE,
    UNHANDLED_ERROR_CASE,
    TEST_BINARY_CASE,
    TESTS_NOT_REPORTED_CASE,
    PLANNED_TESTS_CASE,
    SUBTEST_PLAN_CASE,
    OUT_OF_SEQUENCE_CASE,
    SECOND_PLAN_CASE,
    CRASHED_CASE,
    NO_TEST_RAN_CASE,
    NO_TESTS_RAN_CASE,
    BUILD_FAILED_CASE,
    SKIPPED_BY_MAVEN_CASE,
    PACKAGE_FAILED_CASE,
    TEST_RUN_CASE,
    OUTSIDE_EXAMPLES_CASE,
];

impl Case {
    /// True for an `error` case that says results are missing ([`INCOMPLETE_RESULTS`]).
    pub fn marks_incomplete_results(&self) -> bool {
        self.status == CaseStatus::Error
            && INCOMPLETE_RESULTS.iter().any(|marker| match self.name.strip_prefix(marker) {
                Some(rest) if marker.ends_with(']') => rest.is_empty() || rest.starts_with(' '),
                // `[error outside of examples]`, `[error outside of examples 2]`.
                Some(rest) => rest.starts_with(']') || rest.starts_with(' '),
                None => false,
            })
    }
}

/// The first case saying `suite`'s results are incomplete, if any.
pub fn incomplete_results(suite: &Suite) -> Option<&Case> {
    suite.cases.iter().find(|c| c.marks_incomplete_results())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(name: &str) -> Case {
        Case { name: name.into(), status: CaseStatus::Error, ..Case::default() }
    }

    #[test]
    fn markers_match_alone_or_followed_by_what_they_name() {
        for name in [
            "[report cut short]",
            "[declared failures not reported] reports/a.xml",
            "[tests not reported]",
            "[crashed] ex.AppTest",
            "[error outside of examples]",
            "[error outside of examples 2]",
            "[unreadable report] r.xml",
        ] {
            assert!(error(name).marks_incomplete_results(), "{name}");
        }
        for name in ["[report cut short]x", "test_report cut short", "[tests]", "[crashedx]"] {
            assert!(!error(name).marks_incomplete_results(), "{name}");
        }
        let failed = Case { status: CaseStatus::Failed, ..error("[report cut short]") };
        assert!(!failed.marks_incomplete_results(), "only error cases say results are missing");
    }
}
