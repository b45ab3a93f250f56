//! Terminal output: live progress while suites run, then the summary table and the verdict.
//!
//! On a TTY progress is drawn with indicatif spinners; in CI (or when piped) each phase is one
//! plain line, so logs stay readable. The table and verdict are plain functions of the run.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::events::{Event, EventSink};
use crate::model::{Outcome, PhaseKind, PhaseStatus, Run, Suite};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Spinners redrawn in place.
    Tty,
    /// One line per event, for CI logs and pipes.
    Plain,
    /// Nothing (e.g. `--json` on stdout).
    Quiet,
}

impl ProgressMode {
    /// Spinners on an interactive stderr outside CI; plain lines otherwise.
    pub fn detect() -> ProgressMode {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
        if std::io::stderr().is_terminal() && !ci { ProgressMode::Tty } else { ProgressMode::Plain }
    }
}

/// Whether to use ANSI colors: `--color`, then `NO_COLOR`, then whether stdout is a terminal.
pub fn use_color(choice: Option<&str>) -> bool {
    match choice {
        Some("always") => true,
        Some("never") => false,
        _ => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal(),
    }
}

/// Shows progress on stderr.
pub struct Progress {
    mode: ProgressMode,
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
    total: Mutex<(usize, usize)>,
}

impl Progress {
    /// A progress display in the given mode.
    pub fn new(mode: ProgressMode) -> Progress {
        Progress { mode, multi: MultiProgress::new(), bars: Mutex::new(HashMap::new()), total: Mutex::new((0, 0)) }
    }

    fn line(&self, text: String) {
        match self.mode {
            ProgressMode::Quiet => {}
            ProgressMode::Plain => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{text}");
            }
            ProgressMode::Tty => {
                let _ = self.multi.println(text);
            }
        }
    }
}

impl EventSink for Progress {
    fn emit(&self, event: Event) {
        if self.mode == ProgressMode::Quiet {
            return;
        }
        match event {
            Event::RunStarted { suites, jobs } => {
                *self.total.lock().unwrap_or_else(|p| p.into_inner()) = (0, suites);
                self.line(format!("fcorr: running {suites} suite(s), {jobs} at a time"));
            }
            Event::SuiteStarted { suite_id, name } => {
                if self.mode == ProgressMode::Tty {
                    let bar = self.multi.add(ProgressBar::new_spinner());
                    // The template is a literal known to be valid.
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} {prefix:.bold} {msg} {elapsed}")
                            .expect("valid template"),
                    );
                    bar.set_prefix(name);
                    bar.set_message("detecting");
                    bar.enable_steady_tick(Duration::from_millis(120));
                    self.bars.lock().unwrap_or_else(|p| p.into_inner()).insert(suite_id, bar);
                } else {
                    self.line(format!("[{name}] started"));
                }
            }
            Event::Detected { suite_id, detection } => {
                let text = format!(
                    "{} / {} ({})",
                    detection.language,
                    detection.framework,
                    detection.markers.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                );
                self.update(&suite_id, text, "detected");
            }
            Event::PhaseStarted { suite_id, phase, command } => {
                self.update(&suite_id, format!("{}: {command}", phase.label()), "running");
            }
            Event::PhaseFinished { suite_id, phase } => {
                if self.mode == ProgressMode::Plain {
                    let note = phase.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
                    self.line(format!(
                        "[{suite_id}] {} {} in {}{note}",
                        phase.kind.label(),
                        phase_word(phase.status),
                        duration(phase.duration_ms)
                    ));
                }
            }
            Event::SuiteFinished { suite } => {
                let (done, total) = {
                    let mut t = self.total.lock().unwrap_or_else(|p| p.into_inner());
                    t.0 += 1;
                    *t
                };
                let text = format!(
                    "[{done}/{total}] {}: {} — score {} ({})",
                    suite.name,
                    suite.status.label(),
                    suite.score.value,
                    counts_cell(&suite)
                );
                if let Some(bar) = self.bars.lock().unwrap_or_else(|p| p.into_inner()).remove(&suite.id) {
                    bar.finish_and_clear();
                }
                self.line(text);
            }
            Event::Warning { suite_id, message } => {
                let prefix = suite_id.map(|s| format!("[{s}] ")).unwrap_or_default();
                self.line(format!("{prefix}warning: {message}"));
            }
        }
    }
}

impl Progress {
    fn update(&self, suite_id: &str, tty_text: String, plain_word: &str) {
        match self.mode {
            ProgressMode::Tty => {
                if let Some(bar) = self.bars.lock().unwrap_or_else(|p| p.into_inner()).get(suite_id) {
                    bar.set_message(tty_text);
                }
            }
            ProgressMode::Plain => self.line(format!("[{suite_id}] {plain_word}: {tty_text}")),
            ProgressMode::Quiet => {}
        }
    }
}

fn phase_word(status: PhaseStatus) -> &'static str {
    match status {
        PhaseStatus::Passed => "ok",
        PhaseStatus::Failed => "FAILED",
        PhaseStatus::Timeout => "TIMED OUT",
        PhaseStatus::Skipped => "skipped",
        PhaseStatus::Error => "could not start",
        PhaseStatus::Cancelled => "cancelled",
    }
}

/// `1.2s`, `340ms`, `2m05s`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

fn counts_cell(suite: &Suite) -> String {
    let c = &suite.counts;
    let mut text = format!("{}/{}/{}", c.passes(), c.failures(), c.skipped);
    if c.flaky > 0 {
        text.push_str(&format!(" ({} flaky)", c.flaky));
    }
    text
}

fn phase_cell(suite: &Suite, kind: PhaseKind) -> String {
    match suite.phase(kind) {
        None => "-".into(),
        Some(p) => match p.status {
            PhaseStatus::Skipped if p.note.as_deref().is_some_and(|n| n.contains("up to date")) => "cached".into(),
            status => phase_word(status).to_lowercase(),
        },
    }
}

/// ANSI color of a suite status: green passed, yellow nothing to judge, red everything else.
fn status_color(status: crate::model::SuiteStatus) -> &'static str {
    use crate::model::SuiteStatus;
    match status {
        SuiteStatus::Passed => "32",
        SuiteStatus::NoTests | SuiteStatus::Cancelled => "33",
        _ => "31",
    }
}

struct Paint(bool);

impl Paint {
    fn code(&self, code: &str, text: &str) -> String {
        if self.0 && !text.is_empty() { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }
}

/// The end-of-run table: suite, language/framework, install, build, passed/failed/skipped, score,
/// duration; then failures with file:line and the first lines of their messages.
pub fn render_table(run: &Run, color: bool) -> String {
    let paint = Paint(color);
    let header = ["suite", "language/framework", "install", "build", "pass/fail/skip", "score", "status", "time"];
    let rows: Vec<[String; 8]> = run
        .suites
        .iter()
        .map(|s| {
            [
                s.name.clone(),
                s.detection.as_ref().map(|d| format!("{}/{}", d.language, d.framework)).unwrap_or_else(|| "-".into()),
                phase_cell(s, PhaseKind::Install),
                phase_cell(s, PhaseKind::Build),
                counts_cell(s),
                format!("{}", s.score.value),
                s.status.label().to_string(),
                duration(s.duration_ms),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let pad = |text: &str, width: usize| format!("{text}{}", " ".repeat(width.saturating_sub(text.chars().count())));
    let mut out = String::new();
    // Critical failures lead every report (a missed crisis must not scroll past under the table).
    let critical: Vec<_> = run
        .suites
        .iter()
        .flat_map(|s| s.cases.iter().filter(|c| c.critical && c.status.is_failure()).map(move |c| (s, c)))
        .collect();
    if !critical.is_empty() {
        out.push_str(&paint.code("1;31", &format!("CRITICAL FAILURES ({})", critical.len())));
        out.push('\n');
        for (suite, case) in critical.iter().take(10) {
            let message = first_line(case.message.as_deref().unwrap_or(""));
            out.push_str(&format!("  {} \u{203a} {}: {message}\n", suite.name, case.name));
        }
        if critical.len() > 10 {
            out.push_str(&format!("  ... and {} more\n", critical.len() - 10));
        }
        out.push('\n');
    }
    let head: Vec<String> = header.iter().enumerate().map(|(i, h)| pad(h, widths[i])).collect();
    out.push_str(&paint.code("1", head.join("  ").trim_end()));
    out.push('\n');
    for (row, suite) in rows.iter().zip(&run.suites) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let padded = pad(cell, widths[i]);
                match i {
                    5 => paint.code(if suite.score.met { "32" } else { "31" }, &padded),
                    6 => paint.code(status_color(suite.status), &padded),
                    _ => padded,
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }

    for suite in &run.suites {
        let mut lines = Vec::new();
        if let Some(error) = &suite.error {
            lines.push(format!("  {} {}", paint.code("31", "error:"), error.message));
            if let Some(hint) = &error.hint {
                lines.push(format!("  hint: {hint}"));
            }
        }
        for d in suite.diagnostics.iter().filter(|d| d.source == "build").take(10) {
            let location = match (&d.file, d.line) {
                (Some(f), Some(l)) => format!("{f}:{l}: "),
                (Some(f), None) => format!("{f}: "),
                _ => String::new(),
            };
            lines.push(format!("  {location}{}", first_line(&d.message)));
        }
        for case in suite.failures().take(20) {
            let location = match (&case.file, case.line) {
                (Some(f), Some(l)) => format!(" ({f}:{l})"),
                (Some(f), None) => format!(" ({f})"),
                _ => String::new(),
            };
            lines.push(format!(
                "  {} {}{}",
                paint.code("31", case.status.label()),
                case.name,
                paint.code("2", &location)
            ));
            if let Some(message) = case.message.as_deref().or(case.details.as_deref()) {
                for line in message.lines().take(3) {
                    lines.push(format!("      {line}"));
                }
            }
        }
        let hidden = suite.failures().count().saturating_sub(20);
        if hidden > 0 {
            lines.push(format!("  ... and {hidden} more failures (see the reports)"));
        }
        if !lines.is_empty() {
            out.push('\n');
            out.push_str(&paint.code("1", &suite.name));
            out.push('\n');
            for line in lines {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The one-line verdict at the end.
pub fn render_verdict(run: &Run, color: bool) -> String {
    let paint = Paint(color);
    let t = &run.totals;
    let score = run.score.map(|s| format!("{s}")).unwrap_or_else(|| "-".into());
    let word = match run.verdict.outcome {
        // A pass that nothing judged (`--fail-on none`) must not read like a clean run.
        Outcome::Pass if run.verdict.gates.is_empty() => paint.code("1;33", "PASS (no gates)"),
        Outcome::Pass => paint.code("1;32", "PASS"),
        Outcome::Fail => paint.code("1;31", "FAIL"),
        Outcome::UsageError => paint.code("1;31", "INPUT ERROR"),
        Outcome::HarnessError => paint.code("1;31", "HARNESS ERROR"),
    };
    let mut line = format!(
        "{word}  score {score}  health {}  {} passed, {} failed, {} skipped  in {}",
        run.health.label(),
        t.passes(),
        t.failures(),
        t.skipped,
        duration(run.duration_ms)
    );
    for reason in run.verdict.reasons.iter().take(10) {
        line.push_str(&format!("\n  - [{}] {}", reason.gate, reason.message));
    }
    if run.verdict.reasons.len() > 10 {
        line.push_str(&format!("\n  - ... and {} more", run.verdict.reasons.len() - 10));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Case, CaseStatus, Policy, Suite, SuiteKind, SuiteStatus};

    fn run() -> Run {
        let mut suite = Suite::new("app", "app", SuiteKind::Project);
        suite.cases = vec![
            Case { name: "ok".into(), status: CaseStatus::Passed, ..Case::default() },
            Case {
                name: "broken".into(),
                file: Some("tests/test_app.py".into()),
                line: Some(12),
                status: CaseStatus::Failed,
                message: Some("assert 1 == 2\nfirst detail\nsecond detail\nfourth line hidden".into()),
                ..Case::default()
            },
        ];
        suite.finalize_cases();
        suite.status = SuiteStatus::Failed;
        suite.score = crate::score::score_suite(&suite, Policy::Strict, 100.0, &crate::config::Weights::default());
        let mut run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        run.verdict = crate::gate::judge(&run, &[crate::gate::Gate::Strict], 0.0);
        run
    }

    #[test]
    fn no_ansi_without_color_and_ansi_with_it() {
        let run = run();
        let plain = format!("{}{}", render_table(&run, false), render_verdict(&run, false));
        assert!(!plain.contains('\x1b'), "{plain}");
        let colored = format!("{}{}", render_table(&run, true), render_verdict(&run, true));
        assert!(colored.contains("\x1b[31m"), "{colored}");
        assert_eq!(strip_ansi(&colored), plain);
    }

    #[test]
    fn failures_show_location_and_first_message_lines() {
        let table = render_table(&run(), false);
        assert!(table.contains("failed broken (tests/test_app.py:12)"), "{table}");
        assert!(table.contains("      assert 1 == 2\n      first detail\n      second detail\n"), "{table}");
        assert!(!table.contains("fourth line hidden"));
        let verdict = render_verdict(&run(), false);
        assert!(verdict.starts_with("FAIL  score 0  health POOR  1 passed, 1 failed, 0 skipped"), "{verdict}");
    }

    #[test]
    fn explicit_color_choice_wins() {
        assert!(use_color(Some("always")));
        assert!(!use_color(Some("never")));
    }

    fn strip_ansi(text: &str) -> String {
        let re = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
        re.replace_all(text, "").into_owned()
    }
}
