//! Terminal output: live progress while suites run, then the summary table and the verdict.
//!
//! On a TTY progress is drawn with indicatif spinners; in CI (or when piped) each phase is one
//! plain line, so logs stay readable. A phase running longer than a few seconds gets a heartbeat
//! (elapsed time and its last output line): on the spinner, or in CI at most one line per 10 s.
//! The table and verdict are plain functions of the run.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::events::{Event, EventSink, OutputTap};
use crate::model::{Outcome, PhaseKind, PhaseStatus, Run, Suite, SuiteStatus};

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

/// A phase shows a heartbeat once it has run this long.
const HEARTBEAT_AFTER: Duration = Duration::from_secs(5);
/// Plain (CI) mode prints at most one heartbeat line per this interval, whatever runs at once.
const PLAIN_HEARTBEAT_EVERY: Duration = Duration::from_secs(10);

/// Shows progress on stderr.
pub struct Progress {
    shared: Arc<Shared>,
    total: Mutex<(usize, usize)>,
}

/// What the event handler and the heartbeat thread both use.
struct Shared {
    mode: ProgressMode,
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
    /// The last output line of each suite's log.
    taps: Mutex<HashMap<String, OutputTap>>,
    /// Phases running now, by suite id.
    running: Mutex<HashMap<String, Running>>,
    /// When plain mode last printed a heartbeat.
    last_plain_beat: Mutex<Option<Instant>>,
}

/// A phase under way.
#[derive(Debug, Clone)]
struct Running {
    phase: PhaseKind,
    command: String,
    started: Instant,
    /// When this phase's last heartbeat was shown (plain mode), for fairness between suites.
    last_beat: Option<Instant>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Display state only: a panic elsewhere leaves it usable.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Progress {
    /// A progress display in the given mode; outside quiet mode a thread shows heartbeats for
    /// long phases until the display is dropped.
    pub fn new(mode: ProgressMode) -> Progress {
        let shared = Arc::new(Shared {
            mode,
            multi: MultiProgress::new(),
            bars: Mutex::new(HashMap::new()),
            taps: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            last_plain_beat: Mutex::new(None),
        });
        if mode != ProgressMode::Quiet {
            let weak = Arc::downgrade(&shared);
            std::thread::spawn(move || heartbeat_loop(weak));
        }
        Progress { shared, total: Mutex::new((0, 0)) }
    }

    fn line(&self, text: String) {
        self.shared.line(text);
    }
}

impl Shared {
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

    /// One heartbeat round: spinners get the elapsed time and last line; plain mode prints one
    /// line for the phase that has waited longest for one, at most once per interval.
    fn beat(&self, now: Instant) {
        let running: Vec<(String, Running)> =
            lock(&self.running).iter().map(|(id, r)| (id.clone(), r.clone())).collect();
        let last_line = |id: &str| lock(&self.taps).get(id).map(OutputTap::last_line).unwrap_or_default();
        match self.mode {
            ProgressMode::Quiet => {}
            ProgressMode::Tty => {
                let bars = lock(&self.bars);
                for (id, r) in running.iter().filter(|(_, r)| now.duration_since(r.started) >= HEARTBEAT_AFTER) {
                    if let Some(bar) = bars.get(id) {
                        let last = last_line(id);
                        let tail = if last.is_empty() { String::new() } else { format!(" — {last}") };
                        bar.set_message(format!("{}: {}{tail}", r.phase.label(), r.command));
                    }
                }
            }
            ProgressMode::Plain => {
                let mut last_beat = lock(&self.last_plain_beat);
                if last_beat.is_some_and(|t| now.duration_since(t) < PLAIN_HEARTBEAT_EVERY) {
                    return;
                }
                let Some((id, r)) = next_heartbeat(&running, now) else { return };
                *last_beat = Some(now);
                if let Some(entry) = lock(&self.running).get_mut(&id) {
                    entry.last_beat = Some(now);
                }
                self.line(heartbeat_line(&id, r.phase, now.duration_since(r.started), &last_line(&id)));
            }
        }
    }
}

/// Wakes every second until the display is gone.
fn heartbeat_loop(shared: Weak<Shared>) {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let Some(shared) = shared.upgrade() else { return };
        shared.beat(Instant::now());
    }
}

/// The running phase to report next in plain mode: among those running longer than
/// [`PLAIN_HEARTBEAT_EVERY`], the one whose last heartbeat is oldest (never shown first).
fn next_heartbeat(running: &[(String, Running)], now: Instant) -> Option<(String, Running)> {
    running
        .iter()
        .filter(|(_, r)| now.duration_since(r.started) >= PLAIN_HEARTBEAT_EVERY)
        .min_by_key(|(id, r)| (r.last_beat, r.started, id.clone()))
        .cloned()
}

/// `[suite] install still running (40s): added 120 packages in 3s`.
fn heartbeat_line(suite_id: &str, phase: PhaseKind, elapsed: Duration, last_line: &str) -> String {
    let last = if last_line.is_empty() { "no output yet".to_string() } else { format!("last output: {last_line}") };
    format!("[{suite_id}] {} still running ({}) — {last}", phase.label(), duration(elapsed.as_millis() as u64))
}

impl EventSink for Progress {
    fn emit(&self, event: Event) {
        if self.shared.mode == ProgressMode::Quiet {
            return;
        }
        match event {
            Event::RunStarted { suites, jobs } => {
                *lock(&self.total) = (0, suites);
                self.line(format!("fcorr: running {suites} suite(s), {jobs} at a time"));
            }
            Event::SuiteStarted { suite_id, name } => {
                if self.shared.mode == ProgressMode::Tty {
                    let bar = self.shared.multi.add(ProgressBar::new_spinner());
                    // The template is a literal known to be valid.
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} {prefix:.bold} {msg} {elapsed}")
                            .expect("valid template"),
                    );
                    bar.set_prefix(name);
                    bar.set_message("detecting");
                    bar.enable_steady_tick(Duration::from_millis(120));
                    lock(&self.shared.bars).insert(suite_id, bar);
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
            Event::Output { suite_id, tap } => {
                lock(&self.shared.taps).insert(suite_id, tap);
            }
            Event::PhaseStarted { suite_id, phase, command } => {
                lock(&self.shared.running).insert(
                    suite_id.clone(),
                    Running { phase, command: command.clone(), started: Instant::now(), last_beat: None },
                );
                self.update(&suite_id, format!("{}: {command}", phase.label()), "running");
            }
            Event::PhaseFinished { suite_id, phase } => {
                lock(&self.shared.running).remove(&suite_id);
                if self.shared.mode == ProgressMode::Plain {
                    self.line(phase_line(&suite_id, &phase));
                }
            }
            Event::SuiteFinished { suite } => {
                let (done, total) = {
                    let mut t = lock(&self.total);
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
                lock(&self.shared.running).remove(&suite.id);
                lock(&self.shared.taps).remove(&suite.id);
                if let Some(bar) = lock(&self.shared.bars).remove(&suite.id) {
                    bar.finish_and_clear();
                }
                self.line(text);
            }
        }
    }
}

impl Progress {
    fn update(&self, suite_id: &str, tty_text: String, plain_word: &str) {
        match self.shared.mode {
            ProgressMode::Tty => {
                if let Some(bar) = lock(&self.shared.bars).get(suite_id) {
                    bar.set_message(tty_text);
                }
            }
            ProgressMode::Plain => self.line(format!("[{suite_id}] {plain_word}: {tty_text}")),
            ProgressMode::Quiet => {}
        }
    }
}

/// The plain line for a finished phase. A test command that exits 0 is not "ok" yet: whether the
/// suite passed is known only once its results are read, so it says what happened.
fn phase_line(suite_id: &str, phase: &crate::model::Phase) -> String {
    let note = phase.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
    let word = match (phase.kind, phase.status) {
        (PhaseKind::Test, PhaseStatus::Passed) => "command exited 0",
        (PhaseKind::Test, PhaseStatus::Failed) => "command failed",
        (_, status) => phase_word(status),
    };
    format!("[{suite_id}] {} {word} in {}{note}", phase.kind.label(), duration(phase.duration_ms))
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
fn status_color(status: SuiteStatus) -> &'static str {
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
        let mut build_diagnostics = suite.diagnostics.iter().filter(|d| d.source == "build").peekable();
        if suite.status == SuiteStatus::BuildFailed && build_diagnostics.peek().is_none() {
            // No file:line was recognised: the failed phase's own error line still says why.
            if let Some(line) = suite.phases.iter().find(|p| p.status == PhaseStatus::Failed).and_then(build_error_line)
            {
                lines.push(format!("  {line}"));
            }
        }
        for d in build_diagnostics.take(10) {
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
        for left in &suite.left_out {
            lines.push(format!("  {} {}: {}", paint.code("33", "not run:"), left.path, left.reason));
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

/// The first line of a failed phase's log that reads as an error, else its last line.
fn build_error_line(phase: &crate::model::Phase) -> Option<&str> {
    let lines = || phase.log_tail.lines().map(str::trim).filter(|l| !l.is_empty());
    lines().find(|l| l.to_ascii_lowercase().contains("error")).or_else(|| lines().next_back())
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
    // Nothing scored, nothing to grade: no health word at all rather than a made-up one.
    let health = run.health.map(|h| format!("  health {}", h.label())).unwrap_or_default();
    let mut line = format!(
        "{word}  score {score}{health}  {} passed, {} failed, {} skipped  in {}",
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
    fn a_build_failure_without_file_and_line_shows_its_error_line() {
        let mut run = run();
        let suite = &mut run.suites[0];
        suite.status = SuiteStatus::BuildFailed;
        suite.phases.push(crate::model::Phase {
            kind: PhaseKind::Build,
            command: "npm run build".into(),
            status: PhaseStatus::Failed,
            exit_code: Some(1),
            duration_ms: 10,
            log_tail: "> app@1.0.0 build\n> node build.js\n\nError: config.json is missing\n    at build.js:3\n".into(),
            note: None,
        });
        let table = render_table(&run, false);
        assert!(table.contains("\napp\n  Error: config.json is missing\n"), "{table}");
    }

    #[test]
    fn a_test_phase_that_exits_0_is_not_called_ok() {
        let phase = crate::model::Phase {
            kind: PhaseKind::Test,
            command: "jest".into(),
            status: PhaseStatus::Passed,
            exit_code: Some(0),
            duration_ms: 1200,
            log_tail: String::new(),
            note: None,
        };
        assert_eq!(phase_line("app", &phase), "[app] test command exited 0 in 1.2s");
        let build = crate::model::Phase { kind: PhaseKind::Build, ..phase };
        assert_eq!(phase_line("app", &build), "[app] build ok in 1.2s");
    }

    #[test]
    fn plain_heartbeats_wait_10s_and_take_turns() {
        let t0 = Instant::now();
        let running = |id: &str, started: Instant, last_beat: Option<Instant>| {
            (id.to_string(), Running { phase: PhaseKind::Install, command: "npm ci".into(), started, last_beat })
        };
        let now = t0 + Duration::from_secs(30);
        let fresh = [running("a", now - Duration::from_secs(9), None)];
        assert!(next_heartbeat(&fresh, now).is_none(), "under 10 s: no heartbeat");
        let two = [
            running("a", t0, Some(now - Duration::from_secs(2))),
            running("b", t0 + Duration::from_secs(1), Some(now - Duration::from_secs(12))),
        ];
        assert_eq!(next_heartbeat(&two, now).unwrap().0, "b", "the one that waited longest");
        let never = [running("a", t0, Some(now)), running("b", t0, None)];
        assert_eq!(next_heartbeat(&never, now).unwrap().0, "b", "never shown goes first");
        assert_eq!(
            heartbeat_line("app", PhaseKind::Install, Duration::from_secs(42), "added 3 packages"),
            "[app] install still running (42.0s) — last output: added 3 packages"
        );
        assert!(heartbeat_line("app", PhaseKind::Build, Duration::from_secs(12), "").ends_with("no output yet"));
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
