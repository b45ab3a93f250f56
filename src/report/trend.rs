//! The score and pass-rate trend over the last runs (`history.runs` in results.json), as points
//! both the HTML page's SVG and the Markdown's Mermaid chart draw. Labels are short commits
//! reduced to letters and digits, so nothing in them can be markup or Mermaid syntax.

use crate::model::Run;

/// One run on the trend: a label and its values in percent (0–100).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrendPoint {
    pub label: String,
    pub score: Option<f64>,
    pub pass_rate: Option<f64>,
}

/// The runs to draw, oldest first, or `None` when there is no history or fewer than two runs
/// with a value (one point is not a trend).
pub(crate) fn points(run: &Run) -> Option<Vec<TrendPoint>> {
    let history = run.history.as_ref()?;
    let points: Vec<TrendPoint> = history
        .runs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.score.is_some() || p.pass_rate.is_some())
        .map(|(k, p)| TrendPoint {
            label: label(p.sha.as_deref(), &p.started_at, k),
            score: p.score.map(|s| round1(s.clamp(0.0, 100.0))),
            pass_rate: p.pass_rate.map(|r| round1((r * 100.0).clamp(0.0, 100.0))),
        })
        .collect();
    (points.len() >= 2).then_some(points)
}

/// Seven letters or digits of the commit; else `MM-DD HH:MM` of the start time; else `#k`.
fn label(sha: Option<&str>, started_at: &str, k: usize) -> String {
    let short: String = sha.unwrap_or("").chars().filter(char::is_ascii_alphanumeric).take(7).collect();
    if !short.is_empty() {
        return short;
    }
    // RFC 3339: `2026-11-23T14:05:00Z` → `11-23 14:05`.
    let when: String = started_at
        .chars()
        .skip(5)
        .take(11)
        .map(|c| if c == 'T' { ' ' } else { c })
        .filter(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | ' '))
        .collect();
    if when.len() == 11 { when } else { format!("#{}", k + 1) }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{History, RunPoint};

    pub(crate) fn run_with(points: Vec<RunPoint>) -> Run {
        let mut run = Run::assemble(vec![], time::OffsetDateTime::UNIX_EPOCH, None, None);
        run.history = Some(History { runs: points, ..History::default() });
        run
    }

    #[test]
    fn labels_are_letters_and_digits_or_a_time_and_one_run_is_no_trend() {
        let point = |sha: Option<&str>, at: &str, score| RunPoint {
            sha: sha.map(str::to_string),
            started_at: at.into(),
            score,
            pass_rate: Some(0.5),
            ..RunPoint::default()
        };
        assert_eq!(points(&run_with(vec![point(Some("abc"), "", Some(1.0))])), None);
        let run = run_with(vec![
            point(Some("0123456789abcdef"), "2026-11-23T14:05:00Z", Some(87.25)),
            point(Some("\"]<script>"), "x", None),
            point(None, "2026-11-23T14:05:00Z", Some(120.0)),
            point(None, "garbage", Some(-3.0)),
        ]);
        let got = points(&run).unwrap();
        let labels: Vec<&str> = got.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["0123456", "script", "11-23 14:05", "#4"]);
        assert_eq!(got[0].score, Some(87.3));
        assert_eq!((got[2].score, got[3].score), (Some(100.0), Some(0.0)), "clamped to 0–100");
        assert_eq!(got[1].pass_rate, Some(50.0), "pass rate in percent");
    }
}
