//! Charts for `report.html`, drawn by fcorr as inline SVG: no chart library, nothing to load,
//! a few hundred bytes each. Colours come from the page's style sheet (classes, not inline
//! styles), so the page's Content-Security-Policy needs no `unsafe-inline`.

use std::fmt::Write as _;

use super::escape;
use crate::model::{Counts, Run};

/// Outcome segments in drawing order: (class, label, count).
fn segments(totals: &Counts) -> [(&'static str, &'static str, u64); 6] {
    [
        ("passed", "passed", totals.passed),
        ("failed", "failed", totals.failed),
        ("error", "errors", totals.error),
        ("timeout", "timed out", totals.timeout),
        ("flaky", "flaky", totals.flaky),
        ("skipped", "skipped", totals.skipped),
    ]
}

/// A donut of outcomes with the total in the middle and a legend.
pub(super) fn status_donut(totals: &Counts) -> String {
    const R: f64 = 45.0;
    let circumference = 2.0 * std::f64::consts::PI * R;
    let total: u64 = segments(totals).iter().map(|s| s.2).sum();
    let label: Vec<String> =
        segments(totals).iter().filter(|s| s.2 > 0).map(|(_, name, n)| format!("{n} {name}")).collect();
    let mut svg = format!(
        "<figure class=\"chart\"><figcaption>Outcomes</figcaption><svg viewBox=\"0 0 120 120\" width=\"140\" height=\"140\" role=\"img\" aria-label=\"{}\">\
         <circle class=\"track\" cx=\"60\" cy=\"60\" r=\"{R}\"/>",
        escape(&label.join(", "))
    );
    let mut offset = 0.0;
    for (class, _, n) in segments(totals) {
        if n == 0 || total == 0 {
            continue;
        }
        let length = circumference * n as f64 / total as f64;
        // Written with 2 decimals; `write!` to a String cannot fail.
        let _ = write!(
            svg,
            "<circle class=\"seg s-{class}\" cx=\"60\" cy=\"60\" r=\"{R}\" stroke-dasharray=\"{length:.2} {rest:.2}\" \
             stroke-dashoffset=\"{off:.2}\" transform=\"rotate(-90 60 60)\"/>",
            rest = circumference - length,
            off = -offset,
        );
        offset += length;
    }
    let _ =
        write!(svg, "<text x=\"60\" y=\"58\" class=\"big\">{total}</text><text x=\"60\" y=\"76\">tests</text></svg>");
    svg.push_str("<ul class=\"legend\">");
    for (class, name, n) in segments(totals) {
        if n > 0 {
            let _ = write!(svg, "<li><i class=\"sw s-{class}\"></i>{n} {name}</li>");
        }
    }
    svg.push_str("</ul></figure>\n");
    svg
}

/// Score and pass rate over the last runs (`history.runs`), or nothing without a trend. Each
/// value is a point with a tooltip; a run without a value leaves a gap in its line.
pub(super) fn trend(run: &Run) -> String {
    let Some(points) = super::super::trend::points(run) else { return String::new() };
    const LEFT: f64 = 34.0;
    const WIDTH: f64 = 316.0;
    let n = points.len();
    let x = |k: usize| LEFT + WIDTH * k as f64 / (n - 1).max(1) as f64;
    let y = |v: f64| 110.0 - v;
    let mut svg = format!(
        "<figure class=\"chart wide\"><figcaption>Trend over the last {n} runs</figcaption>\
         <svg class=\"trend\" data-points=\"{n}\" viewBox=\"0 0 360 140\" width=\"360\" height=\"140\" role=\"img\" aria-label=\"{}\">",
        escape(&format!(
            "Score and pass rate over the last {n} runs; this run: score {}, pass rate {}%",
            points[n - 1].score.map(super::super::filters::format_number).unwrap_or_else(|| "-".into()),
            points[n - 1].pass_rate.map(super::super::filters::format_number).unwrap_or_else(|| "-".into()),
        ))
    );
    for v in [0.0, 50.0, 100.0] {
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{x2}\" y1=\"{yv}\" y2=\"{yv}\"/><text x=\"{tx}\" y=\"{ty}\" class=\"small\">{v}</text>",
            x2 = LEFT + WIDTH,
            yv = y(v),
            tx = LEFT - 14.0,
            ty = y(v) + 3.0,
        );
    }
    for (class, name, value) in [
        ("score", "score", (|p: &super::super::trend::TrendPoint| p.score) as fn(&_) -> Option<f64>),
        ("rate", "pass rate %", |p| p.pass_rate),
    ] {
        // One path, broken where a run has no value.
        let mut path = String::new();
        let mut pen_down = false;
        for (k, p) in points.iter().enumerate() {
            match value(p) {
                Some(v) => {
                    let _ = write!(path, "{}{:.1} {:.1} ", if pen_down { "L" } else { "M" }, x(k), y(v));
                    pen_down = true;
                }
                None => pen_down = false,
            }
        }
        let _ = write!(svg, "<path class=\"line {class}\" d=\"{}\"/>", path.trim_end());
        for (k, p) in points.iter().enumerate() {
            if let Some(v) = value(p) {
                let _ = write!(
                    svg,
                    "<circle class=\"pt {class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\"><title>{}: {name} {}</title></circle>",
                    x(k),
                    y(v),
                    escape(&p.label),
                    super::super::filters::format_number(v),
                );
            }
        }
    }
    // At most six labels under the axis, the last run always among them.
    let step = n.div_ceil(6);
    for (k, p) in points.iter().enumerate() {
        if k == n - 1 || (k % step == 0 && k + step < n) {
            let _ = write!(svg, "<text x=\"{:.1}\" y=\"128\" class=\"small\">{}</text>", x(k), escape(&p.label));
        }
    }
    svg.push_str(
        "</svg><ul class=\"legend\"><li><i class=\"sw score\"></i>score</li><li><i class=\"sw rate\"></i>pass rate %</li></ul></figure>\n",
    );
    svg
}

/// Upper bounds (ms) and labels of the duration buckets: each a decade, people read them at once.
const BUCKETS: [(f64, &str); 6] = [
    (10.0, "<10ms"),
    (100.0, "<100ms"),
    (1_000.0, "<1s"),
    (10_000.0, "<10s"),
    (60_000.0, "<1m"),
    (f64::INFINITY, "≥1m"),
];

/// How many cases took how long, in decade buckets.
pub(super) fn duration_histogram(run: &Run) -> String {
    let mut counts = [0u64; BUCKETS.len()];
    for case in run.suites.iter().flat_map(|s| s.cases.iter()) {
        if let Some(ms) = case.duration_ms {
            let bucket = BUCKETS.iter().position(|(max, _)| ms < *max).unwrap_or(BUCKETS.len() - 1);
            counts[bucket] += 1;
        }
    }
    let max = counts.iter().copied().max().unwrap_or(0);
    let label: Vec<String> = BUCKETS.iter().zip(counts).map(|((_, l), n)| format!("{l}: {n}")).collect();
    let mut svg = format!(
        "<figure class=\"chart\"><figcaption>Test durations</figcaption><svg viewBox=\"0 0 240 130\" width=\"240\" height=\"130\" role=\"img\" aria-label=\"{}\">",
        escape(&label.join(", "))
    );
    if max == 0 {
        svg.push_str("<text x=\"120\" y=\"65\">no durations</text>");
    }
    for (i, ((_, name), n)) in BUCKETS.iter().zip(counts).enumerate() {
        let height = if max == 0 { 0.0 } else { 90.0 * n as f64 / max as f64 };
        let x = 8.0 + i as f64 * 38.0;
        let _ = write!(
            svg,
            "<rect class=\"bar\" x=\"{x}\" y=\"{y:.1}\" width=\"30\" height=\"{height:.1}\"><title>{name}: {n}</title></rect>\
             <text x=\"{cx}\" y=\"{ty:.1}\" class=\"small\">{n}</text><text x=\"{cx}\" y=\"124\" class=\"small\">{label}</text>",
            y = 100.0 - height,
            cx = x + 15.0,
            ty = 96.0 - height,
            label = escape(name),
        );
    }
    svg.push_str("</svg></figure>\n");
    svg
}

/// Suites shown in the score chart; the rest are counted.
const SCORE_ROWS: usize = 25;

/// Each suite's score as a bar, with a tick where the baseline's score was.
pub(super) fn suite_scores(run: &Run) -> String {
    let baseline = |id: &str| {
        run.comparison.as_ref().and_then(|c| c.suites.iter().find(|d| d.suite_id == id)).and_then(|d| d.baseline_score)
    };
    let rows = run.suites.len().min(SCORE_ROWS);
    let height = 14 + rows * 18;
    let mut svg = format!(
        "<figure class=\"chart wide\"><figcaption>Score per suite{}</figcaption><svg viewBox=\"0 0 360 {height}\" width=\"360\" height=\"{height}\" role=\"img\" aria-label=\"Score per suite\">",
        if run.comparison.is_some() { " (tick: baseline)" } else { "" }
    );
    for (i, suite) in run.suites.iter().take(SCORE_ROWS).enumerate() {
        let y = 4 + i * 18;
        let value = suite.score.value.clamp(0.0, 100.0);
        let class = if suite.score.met { "ok" } else { "bad" };
        let name: String = suite.name.chars().take(24).collect();
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{ty}\" class=\"small left\">{name}</text><rect class=\"track\" x=\"150\" y=\"{y}\" width=\"160\" height=\"12\"/>\
             <rect class=\"bar {class}\" x=\"150\" y=\"{y}\" width=\"{w:.1}\" height=\"12\"><title>{title}: {value}</title></rect>\
             <text x=\"316\" y=\"{ty}\" class=\"small left\">{value}</text>",
            ty = y + 10,
            name = escape(&name),
            title = escape(&suite.name),
            w = 1.6 * value,
            value = super::super::filters::format_number(value),
        );
        if let Some(before) = baseline(&suite.id) {
            let _ = write!(
                svg,
                "<rect class=\"tick\" x=\"{x:.1}\" y=\"{ty}\" width=\"2\" height=\"16\"><title>baseline {b}</title></rect>",
                x = 150.0 + 1.6 * before.clamp(0.0, 100.0) - 1.0,
                ty = y as f64 - 2.0,
                b = super::super::filters::format_number(before),
            );
        }
    }
    svg.push_str("</svg>");
    if run.suites.len() > SCORE_ROWS {
        let _ = write!(svg, "<p class=\"muted\">… and {} more suites</p>", run.suites.len() - SCORE_ROWS);
    }
    svg.push_str("</figure>\n");
    svg
}

/// The `n` slowest cases with bars relative to the slowest.
pub(super) fn slowest(run: &Run, n: usize) -> String {
    // Only the n slowest are kept while every case is looked at once: collecting every timed
    // case to sort them held 40 bytes a case (42 MB of a 1,000,000-case import's peak). Longest
    // first; among equal times, the earlier in the run.
    let mut timed: Vec<(&str, &str, f64)> = Vec::with_capacity(n + 1);
    for suite in &run.suites {
        for case in &suite.cases {
            let Some(ms) = case.duration_ms else { continue };
            if timed.len() == n && timed.last().is_none_or(|last| ms.total_cmp(&last.2).is_le()) {
                continue;
            }
            let at = timed.partition_point(|t| t.2.total_cmp(&ms).is_ge());
            timed.insert(at, (suite.name.as_str(), case.name.as_str(), ms));
            timed.truncate(n);
        }
    }
    if timed.is_empty() {
        return String::new();
    }
    let max = timed.first().map(|t| t.2).unwrap_or(0.0).max(f64::MIN_POSITIVE);
    let mut html =
        String::from("<figure class=\"chart wide\"><figcaption>Slowest tests</figcaption><table class=\"slow\">");
    for (suite, name, ms) in timed {
        let _ = write!(
            html,
            "<tr><td class=\"name\" title=\"{title}\">{name}</td><td><svg width=\"100\" height=\"8\" aria-hidden=\"true\"><rect class=\"bar\" width=\"{w:.1}\" height=\"8\"/></svg></td><td class=\"num\">{time}</td></tr>",
            title = escape(&format!("{suite} › {name}")),
            name = escape(name),
            w = 100.0 * ms / max,
            time = escape(&super::super::filters::format_duration(ms)),
        );
    }
    html.push_str("</table></figure>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn donut_segments_add_up_to_the_circle() {
        let totals = Counts { total: 4, passed: 2, failed: 1, skipped: 1, ..Counts::default() };
        let svg = status_donut(&totals);
        let lengths: f64 = svg
            .split("stroke-dasharray=\"")
            .skip(1)
            .map(|s| s.split(' ').next().unwrap().parse::<f64>().unwrap())
            .sum();
        assert!((lengths - 2.0 * std::f64::consts::PI * 45.0).abs() < 0.05, "{lengths}");
        assert!(svg.contains("2 passed") && svg.contains("1 failed") && !svg.contains("errors"));
    }

    #[test]
    fn trend_draws_a_point_per_value_and_breaks_lines_at_gaps() {
        use crate::history::{History, RunPoint};
        let mut run = Run::assemble(vec![], time::OffsetDateTime::UNIX_EPOCH, None, None);
        assert_eq!(trend(&run), "", "no history, no chart");
        let point = |sha: &str, score: Option<f64>, rate: Option<f64>| RunPoint {
            sha: Some(sha.into()),
            started_at: String::new(),
            score,
            pass_rate: rate,
            ..RunPoint::default()
        };
        run.history = Some(History {
            runs: vec![
                point("aaaa", Some(100.0), Some(1.0)),
                point("<b>", None, Some(0.5)),
                point("cccc", Some(0.0), Some(0.25)),
            ],
            ..History::default()
        });
        let svg = trend(&run);
        assert!(svg.contains("data-points=\"3\""), "{svg}");
        assert_eq!(svg.matches("class=\"pt score\"").count(), 2);
        assert_eq!(svg.matches("class=\"pt rate\"").count(), 3);
        assert!(svg.contains("d=\"M34.0 10.0 M350.0 110.0\""), "score line broken at the gap: {svg}");
        assert!(svg.contains("d=\"M34.0 10.0 L192.0 60.0 L350.0 85.0\""), "{svg}");
        assert!(!svg.contains("<b>"), "labels are letters and digits: {svg}");
    }

    #[test]
    fn slowest_lists_the_longest_first_and_equal_times_in_run_order() {
        use crate::model::{Case, Suite, SuiteKind};
        let times = [Some(5.0), None, Some(9.0), Some(1.0), Some(9.0), Some(7.0), Some(5.0), Some(2.0)];
        let suites = ["a", "b"]
            .into_iter()
            .map(|id| {
                let mut suite = Suite::new(id, id, SuiteKind::Project);
                for (i, ms) in times.iter().enumerate() {
                    suite.cases.push(Case { name: format!("{id}{i}").into(), duration_ms: *ms, ..Case::default() });
                }
                suite
            })
            .collect();
        let run = Run::assemble(suites, time::OffsetDateTime::UNIX_EPOCH, None, None);
        let names = |html: String| -> Vec<String> {
            html.split("<td class=\"name\" title=\"")
                .skip(1)
                .map(|r| r[r.find('>').unwrap() + 1..r.find('<').unwrap()].to_string())
                .collect()
        };
        assert_eq!(names(slowest(&run, 5)), ["a2", "a4", "b2", "b4", "a5"]);
        assert_eq!(names(slowest(&run, 7)), ["a2", "a4", "b2", "b4", "a5", "b5", "a0"]);
        assert_eq!(names(slowest(&run, 100)).len(), 14, "every timed case when fewer than n");
        assert_eq!(slowest(&run, 0), "");
    }
}
