//! Coverage thresholds: the lines jest, vitest and pytest-cov print when every test passed but
//! the run failed on coverage. Found here so the suite's error names the threshold instead of
//! calling the results incomplete.

use crate::model::{Diagnostic, Severity};

/// jest's `Jest: "global" coverage threshold for lines (90%) not met: 54.54%`, vitest's
/// `ERROR: Coverage for lines (54.54%) does not meet global threshold (90%)` and pytest-cov's
/// `FAIL Required test coverage of 90% not reached. Total coverage: 50.00%`, as diagnostics with
/// source `coverage` (at most ten).
pub(crate) fn threshold_failures(output: &str) -> Vec<Diagnostic> {
    let clean = strip_ansi_escapes::strip_str(output);
    clean
        .lines()
        .map(str::trim)
        .filter(|line| {
            (line.contains("coverage threshold") && line.contains("not met"))
                || (line.contains("Coverage for") && line.contains("does not meet"))
                || (line.starts_with("FAIL Required test coverage of") && line.contains("not reached"))
        })
        .take(10)
        .map(|line| Diagnostic {
            severity: Severity::Error,
            source: "coverage".into(),
            message: line.trim_start_matches("ERROR: ").trim_start_matches("FAIL ").to_string(),
            file: None,
            line: None,
            column: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_threshold_lines_of_jest_vitest_and_pytest_cov_are_found() {
        let out = "Tests: 2 passed\n\u{1b}[31mJest: \"global\" coverage threshold for lines (90%) not met: 54.54%\u{1b}[39m\n\
                   ERROR: Coverage for branches (40%) does not meet global threshold (80%)\nAll files | 54.54\n\
                   FAIL Required test coverage of 90% not reached. Total coverage: 50.00%\n";
        let found: Vec<String> = threshold_failures(out).into_iter().map(|d| d.message).collect();
        assert_eq!(
            found,
            [
                "Jest: \"global\" coverage threshold for lines (90%) not met: 54.54%",
                "Coverage for branches (40%) does not meet global threshold (80%)",
                "Required test coverage of 90% not reached. Total coverage: 50.00%",
            ]
        );
        assert!(threshold_failures("Tests: 1 failed\nFAIL tests/a.test.js").is_empty());
    }
}
