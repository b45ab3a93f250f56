//! Mermaid charts for the Markdown the job summary and PR comment show: GitHub draws a fenced
//! `mermaid` block as a picture, so a run with failures gets a pie of its outcomes at a glance.
//! Labels are fcorr's own words and values are counts: no test data ever reaches the chart.

use crate::model::Counts;

/// A fenced Mermaid pie of outcomes, or `None` when the run has no failures (a pie of one
/// colour says nothing the totals line does not).
pub(crate) fn outcome_pie(totals: &Counts) -> Option<String> {
    if totals.failures() == 0 {
        return None;
    }
    let slices = [
        ("passed", totals.passed),
        ("failed", totals.failed),
        ("errors", totals.error),
        ("timed out", totals.timeout),
        ("flaky", totals.flaky),
        ("skipped", totals.skipped),
    ];
    let mut chart = format!("```mermaid\npie showData title {} of {} tests failed\n", totals.failures(), totals.total);
    for (label, count) in slices.into_iter().filter(|(_, n)| *n > 0) {
        chart.push_str(&format!("    \"{label}\" : {count}\n"));
    }
    chart.push_str("```");
    Some(chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pie_only_for_runs_with_failures_and_only_nonzero_slices() {
        assert_eq!(outcome_pie(&Counts { total: 3, passed: 2, skipped: 1, ..Counts::default() }), None);
        let pie = outcome_pie(&Counts { total: 10, passed: 7, failed: 2, timeout: 1, ..Counts::default() }).unwrap();
        assert_eq!(
            pie,
            "```mermaid\npie showData title 3 of 10 tests failed\n    \"passed\" : 7\n    \"failed\" : 2\n    \"timed out\" : 1\n```"
        );
    }
}
