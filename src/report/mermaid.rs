//! Mermaid charts for the Markdown the job summary and PR comment show: GitHub draws a fenced
//! `mermaid` block as a picture, so a run with failures gets a pie of its outcomes at a glance.
//! Labels are fcorr's own words and values are counts: no test data ever reaches the chart.
//! With history, a line chart of score and pass rate over the last runs joins it.

use std::fmt::Write as _;

use super::trend::TrendPoint;
use crate::model::{Counts, Run};

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
    // Errors are never called failures (docs/python.md): the title says both when there are any.
    let how = if totals.error > 0 { "failed or errored" } else { "failed" };
    let mut chart = format!("```mermaid\npie showData title {} of {} tests {how}\n", totals.failures(), totals.total);
    for (label, count) in slices.into_iter().filter(|(_, n)| *n > 0) {
        chart.push_str(&format!("    \"{label}\" : {count}\n"));
    }
    chart.push_str("```");
    Some(chart)
}

/// A fenced Mermaid `xychart-beta` of score and pass rate over the runs in `history.runs`, or
/// `None` without at least two runs that have both. xychart has no legend, so the colours are
/// fixed by an init directive and named in the title. Labels are letters, digits and `-: `
/// (see `trend`), so no quote or bracket can break out of the axis list.
pub(crate) fn trend_line(run: &Run) -> Option<String> {
    let all = super::trend::points(run)?;
    let points: Vec<&TrendPoint> = all.iter().filter(|p| p.score.is_some() && p.pass_rate.is_some()).collect();
    trend_chart(&points)
}

fn trend_chart(points: &[&TrendPoint]) -> Option<String> {
    if points.len() < 2 {
        return None;
    }
    let labels: Vec<String> = points.iter().map(|p| format!("\"{}\"", p.label)).collect();
    let series = |value: fn(&TrendPoint) -> Option<f64>| {
        points.iter().map(|p| super::filters::format_number(value(p).unwrap_or(0.0))).collect::<Vec<_>>().join(", ")
    };
    let mut chart = String::from("```mermaid\n");
    chart.push_str("%%{init: {\"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"#0969da, #1a7f37\"}}}}%%\n");
    // Writing to a String cannot fail.
    let _ = write!(
        chart,
        "xychart-beta\n    title \"Score (blue) and pass rate % (green), last {} runs\"\n    x-axis [{}]\n    \
         y-axis \"%\" 0 --> 100\n    line [{}]\n    line [{}]\n```",
        points.len(),
        labels.join(", "),
        series(|p| p.score),
        series(|p| p.pass_rate),
    );
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

    #[test]
    fn trend_line_of_score_and_pass_rate_over_the_runs() {
        use crate::history::{History, RunPoint};
        let mut run = Run::assemble(vec![], time::OffsetDateTime::UNIX_EPOCH, None, None);
        assert_eq!(trend_line(&run), None, "no history, no trend");
        let point = |sha: &str, score: Option<f64>, rate: Option<f64>| RunPoint {
            sha: Some(sha.into()),
            started_at: "2026-11-23T10:00:00Z".into(),
            score,
            pass_rate: rate,
            ..RunPoint::default()
        };
        run.history = Some(History { runs: vec![point("aaaaaaa1", Some(80.0), Some(0.9))], ..History::default() });
        assert_eq!(trend_line(&run), None, "one run is no trend");
        run.history = Some(History {
            runs: vec![
                point("1f2e3d4c5b6a", Some(75.0), Some(0.8)),
                point("\"] line [1] %%{<script>", Some(50.0), Some(0.5)),
                point("nothing-ran", None, None),
                point("9a8b7c6d", Some(87.5), Some(0.9312)),
            ],
            ..History::default()
        });
        insta::assert_snapshot!("mermaid_trend_line", trend_line(&run).unwrap());
    }
}
