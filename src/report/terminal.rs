//! Terminal output: live progress while suites run, then the summary table and the verdict.
//!
//! On a TTY progress is drawn with indicatif spinners showing each phase and its command's short
//! form (the full command is in the suite's log). In CI (or when piped) it is one line per suite
//! when it is done, a line for a phase that broke, and when nothing was printed for 30 s a
//! heartbeat line per long phase (elapsed time, last output line or progress): a 2,000-test bank
//! prints a handful of lines, not one per test.
//! The table and verdict are plain functions of the run, fitted to the terminal's width.
//!
//! Every text a test, a tool or a project provides (suite and case names, messages, output lines)
//! goes through [`safe`] before it is printed: a terminal acts on the controls in it (colours,
//! cursor moves, the window title, OSC 52 clipboard writes), so they are shown, not sent. fcorr's
//! own colours are added around the escaped text.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::events::{Event, EventSink, OutputTap};
use crate::model::{PhaseKind, PhaseStatus, Run, RunOutcome, Suite, SuiteStatus};

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

/// `--color`: when the terminal output uses ANSI colors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When stdout is a terminal and `NO_COLOR` is unset or empty.
    Auto,
    Always,
    Never,
}

/// Whether to use ANSI colors: `--color`, then `NO_COLOR`, then whether stdout is a terminal.
pub fn use_color(choice: Option<Color>) -> bool {
    match choice {
        Some(Color::Always) => true,
        Some(Color::Never) => false,
        _ => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal(),
    }
}

/// Passes `--color always|never` on to the progress spinners: indicatif styles them (the suite
/// name in bold) through the `console` crate, which reads only `NO_COLOR` and the terminal.
pub(crate) fn color_progress(choice: Option<Color>) {
    match choice {
        Some(Color::Always) => ::console::set_colors_enabled_stderr(true),
        Some(Color::Never) => ::console::set_colors_enabled_stderr(false),
        Some(Color::Auto) | None => {}
    }
}

/// A spinner shows a phase's last output line once the phase has run this long.
const HEARTBEAT_AFTER: Duration = Duration::from_secs(5);
/// A command's short form shows at most this many columns; the log has it in full.
const SHORT_COMMAND: usize = 48;

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
    /// When plain mode last printed anything.
    last_plain_line: Mutex<Instant>,
    /// Plain (CI) mode prints a heartbeat only after this long without any progress line, and
    /// only for phases running at least as long: a quiet log, not a line per test. The same
    /// interval as an import's heartbeat (30 s; `FCORR_HEARTBEAT_SECS` for tests).
    plain_heartbeat_every: Duration,
}

/// A phase under way.
#[derive(Debug, Clone)]
struct Running {
    phase: PhaseKind,
    /// The command's short form (`python -m pytest …`).
    command: String,
    started: Instant,
    /// Where a suite that reports its own progress is (`[13/20] V2-APP-001 80 · ETA 11s`).
    progress: Option<String>,
}

/// `text` with the controls a terminal acts on made visible, on one line (a newline in a name
/// would start a line fcorr did not write).
fn safe(text: &str) -> String {
    crate::text::for_terminal(text, false).into_owned()
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
            last_plain_line: Mutex::new(Instant::now()),
            plain_heartbeat_every: crate::progress::heartbeat_interval(),
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
                *lock(&self.last_plain_line) = Instant::now();
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{}", crate::console::defused(&crate::text::for_terminal(&text, true)));
            }
            ProgressMode::Tty => {
                let _ = self.multi.println(crate::text::for_terminal(&text, true));
            }
        }
    }

    /// The spinner's message for a running phase: its progress or short command, then (once it
    /// has run a while) its last output line.
    fn spinner_text(&self, id: &str, r: &Running, now: Instant) -> String {
        let what = r.progress.as_deref().unwrap_or(&r.command);
        let last = lock(&self.taps).get(id).map(OutputTap::last_line).unwrap_or_default();
        if now.duration_since(r.started) < HEARTBEAT_AFTER || last.is_empty() || r.progress.is_some() {
            format!("{}: {what}", r.phase.label())
        } else {
            format!("{}: {what} — {last}", r.phase.label())
        }
    }

    /// One heartbeat round: spinners get their last output line; plain mode, after
    /// `plain_heartbeat_every` without a line, prints one line per phase running that long.
    fn beat(&self, now: Instant) {
        let mut running: Vec<(String, Running)> =
            lock(&self.running).iter().map(|(id, r)| (id.clone(), r.clone())).collect();
        running.sort_by(|a, b| a.1.started.cmp(&b.1.started).then_with(|| a.0.cmp(&b.0)));
        match self.mode {
            ProgressMode::Quiet => {}
            ProgressMode::Tty => {
                let bars = lock(&self.bars);
                for (id, r) in &running {
                    if let Some(bar) = bars.get(id) {
                        bar.set_message(self.spinner_text(id, r, now));
                    }
                }
            }
            ProgressMode::Plain => {
                let quiet_since = *lock(&self.last_plain_line);
                for (id, r) in heartbeats(&running, quiet_since, now, self.plain_heartbeat_every) {
                    let last = lock(&self.taps).get(&id).map(OutputTap::last_line).unwrap_or_default();
                    let detail = r.progress.clone().unwrap_or(last);
                    self.line(heartbeat_line(&id, r.phase, now.duration_since(r.started), &detail));
                }
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

/// The phases plain mode reports now: none until the log has been quiet for `every`, then every
/// phase that has run at least that long, oldest first.
fn heartbeats(
    running: &[(String, Running)],
    quiet_since: Instant,
    now: Instant,
    every: Duration,
) -> Vec<(String, Running)> {
    if now.duration_since(quiet_since) < every {
        return Vec::new();
    }
    running.iter().filter(|(_, r)| now.duration_since(r.started) >= every).cloned().collect()
}

/// `[suite] install still running (40s) — last output: added 120 packages in 3s`; for a suite
/// that reports its progress, `— [13/20] V2-APP-001 80 · ETA 11s`.
fn heartbeat_line(suite_id: &str, phase: PhaseKind, elapsed: Duration, detail: &str) -> String {
    let detail = if detail.is_empty() {
        "no output yet".to_string()
    } else if detail.starts_with('[') {
        detail.to_string()
    } else {
        format!("last output: {detail}")
    };
    format!("[{suite_id}] {} still running ({}) — {detail}", phase.label(), duration(elapsed.as_millis() as u64))
}

/// A command as progress shows it: each `&&` part's program by its file name and its first plain
/// words (`/venv/bin/python -m pytest --junitxml=/tmp/x.xml -v` is `python -m pytest …`), at most
/// [`SHORT_COMMAND`] columns. The suite's log has the full command.
pub(crate) fn short_command(command: &str) -> String {
    let part = |text: &str| {
        let mut words = text.split_whitespace();
        let Some(program) = words.next() else { return String::new() };
        let program = program.rsplit(['/', '\\']).next().unwrap_or(program);
        let mut out = program.to_string();
        for (kept, word) in words.by_ref().enumerate() {
            let plain = kept < 2
                && word.len() <= 24
                && !word.starts_with('<')
                && word.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '+' | '@'));
            if !plain {
                out.push_str(" …");
                return out;
            }
            out.push(' ');
            out.push_str(word);
        }
        out
    };
    let parts: Vec<String> = command.split(" && ").map(part).filter(|p| !p.is_empty()).collect();
    fit(&parts.join(" && "), SHORT_COMMAND)
}

impl EventSink for Progress {
    fn emit(&self, event: Event) {
        if self.shared.mode == ProgressMode::Quiet {
            return;
        }
        let tty = self.shared.mode == ProgressMode::Tty;
        match event {
            Event::RunStarted { suites, jobs } => {
                *lock(&self.total) = (0, suites);
                self.line(format!("fcorr: running {suites} suite(s), {jobs} at a time"));
            }
            // Plain mode prints one line per suite, when it is done (and heartbeats).
            Event::SuiteStarted { suite_id, name } if tty => {
                let bar = self.shared.multi.add(ProgressBar::new_spinner());
                // The template is a literal known to be valid.
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {prefix:.bold} {msg} {elapsed}").expect("valid template"),
                );
                bar.set_prefix(safe(&name));
                bar.set_message("detecting");
                bar.enable_steady_tick(Duration::from_millis(120));
                lock(&self.shared.bars).insert(suite_id, bar);
            }
            Event::Detected { suite_id, detection } if tty => {
                self.set_message(&suite_id, format!("{} / {}", detection.language, detection.framework));
            }
            Event::Output { suite_id, tap } => {
                lock(&self.shared.taps).insert(suite_id, tap);
            }
            Event::PhaseStarted { suite_id, phase, command } => {
                let running =
                    Running { phase, command: short_command(&command), started: Instant::now(), progress: None };
                if tty {
                    self.set_message(&suite_id, self.shared.spinner_text(&suite_id, &running, running.started));
                }
                lock(&self.shared.running).insert(suite_id, running);
            }
            Event::CaseProgress { suite_id, text } => {
                let message = {
                    let mut running = lock(&self.shared.running);
                    let r = running.entry(suite_id.clone()).or_insert_with(|| Running {
                        phase: PhaseKind::Test,
                        command: String::new(),
                        started: Instant::now(),
                        progress: None,
                    });
                    r.progress = Some(text);
                    self.shared.spinner_text(&suite_id, r, Instant::now())
                };
                if tty {
                    self.set_message(&suite_id, message);
                }
            }
            Event::PhaseFinished { suite_id, phase } => {
                lock(&self.shared.running).remove(&suite_id);
                // A failing test command is what failing tests do; the suite's line says so.
                let broke = match phase.kind {
                    PhaseKind::Test => matches!(phase.status, PhaseStatus::Timeout | PhaseStatus::Error),
                    _ => matches!(phase.status, PhaseStatus::Failed | PhaseStatus::Timeout | PhaseStatus::Error),
                };
                if broke {
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
                    "[{done}/{total}] {}: {} — score {} ({}) in {}",
                    suite.name,
                    suite.status.label(),
                    suite.score.value,
                    counts_cell(&suite),
                    duration(suite.duration_ms)
                );
                lock(&self.shared.running).remove(&suite.id);
                lock(&self.shared.taps).remove(&suite.id);
                if let Some(bar) = lock(&self.shared.bars).remove(&suite.id) {
                    bar.finish_and_clear();
                }
                self.line(text);
            }
            Event::SuiteStarted { .. } | Event::Detected { .. } => {}
        }
    }
}

impl Progress {
    fn set_message(&self, suite_id: &str, text: String) {
        if let Some(bar) = lock(&self.shared.bars).get(suite_id) {
            bar.set_message(safe(&text));
        }
    }
}

/// The line for a phase that broke (plain mode). A test command that exits 0 is not "ok" yet:
/// whether the suite passed is known only once its results are read, so it says what happened.
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

/// "1 error", "2 errors".
fn errors_words(n: u64) -> String {
    format!("{n} error{}", if n == 1 { "" } else { "s" })
}

/// `passed/failed/skipped`, then what those leave out: `3/1/0 (1 flaky, 2 errors)`. Errors are
/// never counted as failed (docs/python.md); timeouts are, as in JUnit.
fn counts_cell(suite: &Suite) -> String {
    let c = &suite.counts;
    let mut text = format!("{}/{}/{}", c.passes(), c.failed_or_timed_out(), c.skipped);
    let mut notes = Vec::new();
    if c.flaky > 0 {
        notes.push(format!("{} flaky", c.flaky));
    }
    if c.error > 0 {
        notes.push(errors_words(c.error));
    }
    if !notes.is_empty() {
        text.push_str(&format!(" ({})", notes.join(", ")));
    }
    text
}

fn phase_cell(suite: &Suite, kind: PhaseKind) -> String {
    match suite.phase(kind) {
        None => "-".into(),
        Some(p) if is_cached(p) => "cached".into(),
        Some(p) => phase_word(p.status).to_lowercase(),
    }
}

/// A skipped phase whose output was already there (dependencies up to date).
fn is_cached(phase: &crate::model::Phase) -> bool {
    phase.status == PhaseStatus::Skipped && phase.note.as_deref().is_some_and(|n| n.contains("up to date"))
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

/// Width to fit the end-of-run table to: the terminal's when stdout is one, else `COLUMNS` when
/// set (a CI log has no width of its own), else none.
pub fn output_width() -> Option<usize> {
    if std::io::stdout().is_terminal()
        && let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size_of(std::io::stdout())
    {
        return Some(usize::from(w));
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()).filter(|w| *w > 0)
}

/// Columns of the end-of-run table, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Suite,
    Runner,
    Install,
    Build,
    Counts,
    Score,
    Status,
    Time,
}

/// Spaces between columns.
const GAP: usize = 2;
/// A suite name is never cut shorter than this many columns.
const MIN_NAME: usize = 8;

/// Terminal columns `text` takes (CJK two each, combining marks none).
fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` padded with spaces to `width` display columns.
fn pad(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(display_width(text))))
}

/// `text` cut to at most `width` display columns, ending with `…` when cut.
fn fit(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The end-of-run table: suite, what ran it, install, build, passed/failed/skipped, score, status,
/// time; then failures with file:line and the first lines of their messages. With a `width`
/// (the terminal's), columns that do not fit are dropped or shortened in this order: the phase
/// columns, the runner down to its framework, the time, the runner, then suite names are cut;
/// widths are display widths, so a CJK name keeps its row aligned. Phase columns where no
/// suite installed or built anything are never shown.
pub fn render_table(run: &Run, color: bool, width: Option<usize>) -> String {
    let paint = Paint(color);
    let runner = |s: &Suite, short: bool| match &s.detection {
        Some(d) if short => d.framework.clone(),
        Some(d) => format!("{}/{}", d.language, d.framework),
        None => serde_json::to_value(s.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
    };
    let cell = |col: Col, s: &Suite, short: bool| match col {
        Col::Suite => safe(&s.name),
        Col::Runner => safe(&runner(s, short)),
        Col::Install => phase_cell(s, PhaseKind::Install),
        Col::Build => phase_cell(s, PhaseKind::Build),
        Col::Counts => counts_cell(s),
        Col::Score => format!("{}", s.score.value),
        // A suite with failed cases that still meets its policy's threshold (pass-rate 90, a
        // bank's graded mean ≥ 70) passes the gate: saying only `failed` beside PASS reads as a
        // contradiction.
        Col::Status if s.status == SuiteStatus::Failed && s.score.met => "failed, score met".to_string(),
        Col::Status => s.status.label().to_string(),
        Col::Time => duration(s.duration_ms),
    };
    let header = |col: Col| match col {
        Col::Suite => "suite",
        Col::Runner => "runner",
        Col::Install => "install",
        Col::Build => "build",
        Col::Counts => "pass/fail/skip",
        Col::Score => "score",
        Col::Status => "status",
        Col::Time => "time",
    };
    let idle = |kind: PhaseKind| {
        run.suites.iter().all(|s| s.phase(kind).is_none_or(|p| p.status == PhaseStatus::Skipped && !is_cached(p)))
    };
    let mut cols: Vec<Col> =
        [Col::Suite, Col::Runner, Col::Install, Col::Build, Col::Counts, Col::Score, Col::Status, Col::Time]
            .into_iter()
            .filter(|c| match c {
                Col::Install => !idle(PhaseKind::Install),
                Col::Build => !idle(PhaseKind::Build),
                _ => true,
            })
            .collect();
    let mut short_runner = false;
    let col_width = |col: Col, short: bool| {
        run.suites
            .iter()
            .map(|s| display_width(&cell(col, s, short)))
            .chain([display_width(header(col))])
            .max()
            .unwrap_or(0)
    };
    let total = |cols: &[Col], short: bool| {
        cols.iter().map(|c| col_width(*c, short)).sum::<usize>() + GAP * cols.len().saturating_sub(1)
    };
    if let Some(width) = width {
        let all = cols.clone();
        // Each step gives up less than the next; stop at the first that fits.
        for step in 0..5 {
            if total(&cols, short_runner) <= width {
                break;
            }
            match step {
                0 => cols.retain(|c| *c != Col::Install),
                1 => cols.retain(|c| *c != Col::Build),
                2 => short_runner = true,
                3 => cols.retain(|c| *c != Col::Time),
                _ => cols.retain(|c| *c != Col::Runner),
            }
        }
        // A column given up early may fit again once a wider one is gone: most useful first.
        for col in [Col::Time, Col::Build, Col::Install] {
            if all.contains(&col) && !cols.contains(&col) {
                let mut with: Vec<Col> = all.iter().copied().filter(|c| cols.contains(c) || *c == col).collect();
                if total(&with, short_runner) <= width {
                    std::mem::swap(&mut cols, &mut with);
                }
            }
        }
    }
    let mut widths: Vec<usize> = cols.iter().map(|c| col_width(*c, short_runner)).collect();
    if let Some(width) = width {
        let over = total(&cols, short_runner).saturating_sub(width);
        widths[0] = widths[0].saturating_sub(over).max(MIN_NAME.min(widths[0]));
    }
    let mut out = String::new();
    // Critical failures lead every report (a missed crisis must not scroll past under the table).
    let critical: Vec<_> = run
        .suites
        .iter()
        .flat_map(|s| s.cases.iter().filter(|c| c.extra().critical && c.status.is_failure()).map(move |c| (s, c)))
        .collect();
    let line = |text: String| match width {
        Some(w) => fit(&text, w),
        None => text,
    };
    if !critical.is_empty() {
        out.push_str(&paint.code("1;31", &format!("CRITICAL FAILURES ({})", critical.len())));
        out.push('\n');
        for (suite, case) in critical.iter().take(10) {
            let message = safe(first_line(case.message().unwrap_or("")));
            out.push_str(&line(format!("  {} \u{203a} {}: {message}", safe(&suite.name), safe(&case.name))));
            out.push('\n');
        }
        if critical.len() > 10 {
            out.push_str(&format!("  ... and {} more\n", critical.len() - 10));
        }
        out.push('\n');
    }
    let head: Vec<String> = cols.iter().zip(&widths).map(|(c, w)| pad(header(*c), *w)).collect();
    out.push_str(&paint.code("1", head.join(&" ".repeat(GAP)).trim_end()));
    out.push('\n');
    for suite in &run.suites {
        let cells: Vec<String> = cols
            .iter()
            .zip(&widths)
            .map(|(col, w)| {
                let padded = pad(&fit(&cell(*col, suite, short_runner), *w), *w);
                match col {
                    Col::Score => paint.code(if suite.score.met { "32" } else { "31" }, &padded),
                    Col::Status => paint.code(status_color(suite.status), &padded),
                    _ => padded,
                }
            })
            .collect();
        out.push_str(cells.join(&" ".repeat(GAP)).trim_end());
        out.push('\n');
    }

    for suite in &run.suites {
        let mut lines = Vec::new();
        if let Some(error) = &suite.error {
            lines.push(format!("  {} {}", paint.code("31", "error:"), safe(&error.message)));
            if let Some(hint) = &error.hint {
                lines.push(line(format!("  hint: {}", safe(hint))));
            }
        }
        let mut build_diagnostics = suite.diagnostics.iter().filter(|d| d.source == "build").peekable();
        if suite.status == SuiteStatus::BuildFailed && build_diagnostics.peek().is_none() {
            // No file:line was recognised: the failed phase's own error line still says why.
            if let Some(text) = suite.phases.iter().find(|p| p.status == PhaseStatus::Failed).and_then(build_error_line)
            {
                lines.push(line(format!("  {}", safe(text))));
            }
        }
        for d in build_diagnostics.take(10) {
            let location = match (&d.file, d.line) {
                (Some(f), Some(l)) => format!("{f}:{l}: "),
                (Some(f), None) => format!("{f}: "),
                _ => String::new(),
            };
            lines.push(line(safe(&format!("  {location}{}", first_line(&d.message)))));
        }
        // Several systems or prompts: the grid first, so the failures below read against it.
        if suite.kind.shape() == crate::model::CaseShape::Items
            && let Some(grid) = super::eval::grid(suite, GRID_DISAGREEMENTS)
        {
            lines.extend(super::eval::grid_lines(&grid, GRID_DISAGREEMENTS).iter().map(|l| line(safe(l))));
        }
        for case in suite.failures().take(20) {
            let location = match (&case.file, case.line) {
                (Some(f), Some(l)) => format!(" ({}:{l})", safe(f)),
                (Some(f), None) => format!(" ({})", safe(f)),
                _ => String::new(),
            };
            let case_name = safe(&case.name);
            // Cut before painting, so an escape sequence is never cut in half: the name first
            // gets what room there is, the location what is left.
            let label = case.status.label();
            let (name, location) = match width {
                Some(w) => {
                    let room = w.saturating_sub(3 + label.len());
                    let name = fit(&case_name, room);
                    let left = room.saturating_sub(display_width(&name));
                    let location = if left > 4 { fit(&location, left) } else { String::new() };
                    (name, location)
                }
                None => (case_name, location),
            };
            lines.push(format!("  {} {name}{}", paint.code("31", label), paint.code("2", &location)));
            if let Some(message) = case.message().map(std::borrow::Cow::Borrowed).or_else(|| case.details()) {
                for text in message.lines().take(3) {
                    lines.push(line(format!("      {}", safe(text))));
                }
            }
        }
        let hidden = suite.failures().count().saturating_sub(20);
        if hidden > 0 {
            lines.push(format!("  ... and {hidden} more failures (see the reports)"));
        }
        for left in &suite.left_out {
            lines.push(format!("  {} {}: {}", paint.code("33", "not run:"), safe(&left.path), safe(&left.reason)));
        }
        // How the test command departs from the project's own script (steps skipped, a script
        // not replayed) is said here too, not only in results.json.
        let ran_tests = suite.phases.iter().filter(|p| p.kind == PhaseKind::Test && p.status != PhaseStatus::Skipped);
        for note in ran_tests.filter_map(|p| p.note.as_deref()) {
            lines.push(format!("  {} {}", paint.code("2", "note:"), safe(note)));
        }
        if !lines.is_empty() {
            out.push('\n');
            out.push_str(&paint.code("1", &line(safe(&suite.name))));
            out.push('\n');
            for text in lines {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
    out
}

/// Disagreeing cases the terminal names under a comparison grid.
const GRID_DISAGREEMENTS: usize = 10;

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
        RunOutcome::Pass if run.verdict.gates.is_empty() => paint.code("1;33", "PASS (no gates)"),
        RunOutcome::Pass => paint.code("1;32", "PASS"),
        RunOutcome::Fail => paint.code("1;31", "FAIL"),
        RunOutcome::UsageError => paint.code("1;31", "INPUT ERROR"),
        RunOutcome::HarnessError => paint.code("1;31", "HARNESS ERROR"),
    };
    // Nothing scored, nothing to grade: no health word at all rather than a made-up one.
    let health = run.health.map(|h| format!("  health {}", h.label())).unwrap_or_default();
    let mut line = format!(
        "{word}  score {score}{health}  {} passed, {} failed{}, {} skipped  in {}",
        t.passes(),
        t.failed_or_timed_out(),
        match t.error {
            0 => String::new(),
            n => format!(", {}", errors_words(n)),
        },
        t.skipped,
        duration(run.duration_ms)
    );
    if let Some(gone) = run.comparison.as_ref().and_then(gone_since_baseline) {
        line.push_str(&format!("\n  since the baseline: {}", safe(&gone)));
    }
    // A PASS with `regression` skipped for an unrelated baseline reads like a checked one: the
    // verdict says why it was not checked (also when `fcorr report` prints it again).
    if let Some(unrelated) = run.comparison.as_ref().and_then(crate::compare::Comparison::unrelated) {
        line.push_str(&format!("\n  warning: {}", safe(&unrelated)));
    }
    for reason in run.verdict.reasons.iter().take(10) {
        line.push_str(&format!("\n  - [{}] {}", reason.gate, safe(&reason.message)));
    }
    if run.verdict.reasons.len() > 10 {
        line.push_str(&format!("\n  - ... and {} more", run.verdict.reasons.len() - 10));
    }
    line
}

/// The tests and suites of the baseline this run no longer has, in one line (`None` when none
/// is gone): a vanished test shows in no count of this run, so the verdict line says it.
fn gone_since_baseline(c: &crate::compare::Comparison) -> Option<String> {
    let tests = c.with_change(crate::compare::Change::Removed).count();
    let mut parts = Vec::new();
    if tests > 0 {
        let failing = c.removed_failing().count();
        parts.push(format!(
            "{tests} test{} gone{}",
            if tests == 1 { "" } else { "s" },
            if failing > 0 { format!(" ({failing} failing there)") } else { String::new() }
        ));
    }
    for suite in c.suites.iter().filter(|s| s.removed) {
        let (total, failing) = suite.gone_counts();
        parts.push(format!(
            "suite {} gone ({total} test{}{})",
            suite.name,
            if total == 1 { "" } else { "s" },
            if failing > 0 { format!(", {failing} failing there") } else { String::new() }
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
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
                ..Case::default()
            }
            .with_message(Some("assert 1 == 2\nfirst detail\nsecond detail\nfourth line hidden".into())),
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
        let plain = format!("{}{}", render_table(&run, false, None), render_verdict(&run, false));
        assert!(!plain.contains('\x1b'), "{plain}");
        let colored = format!("{}{}", render_table(&run, true, None), render_verdict(&run, true));
        assert!(colored.contains("\x1b[31m"), "{colored}");
        assert_eq!(strip_ansi(&colored), plain);
    }

    #[test]
    fn controls_in_what_tests_provide_are_shown_not_sent_and_fcorr_colours_stay() {
        // ESC (colour, OSC title and clipboard), BEL, CR, C1 CSI, a bidi override, a newline.
        const HOSTILE: &str = "\u{1b}[31m\u{1b}]0;title\u{7}\u{1b}]52;c;aGk=\u{7}\r\u{9b}2J\u{202E}\nx";
        let mut run = run();
        let suite = &mut run.suites[0];
        suite.name = format!("app{HOSTILE}");
        suite.cases[1].name = format!("broken{HOSTILE}").into();
        suite.cases[1].file = Some(format!("f{HOSTILE}.py").into());
        let message = format!("assert {HOSTILE}");
        suite.cases[1] = suite.cases[1].clone().with_message(Some(message));
        suite.error = Some(crate::model::SuiteError {
            kind: crate::model::SuiteErrorKind::Input,
            message: format!("error{HOSTILE}"),
            hint: Some(format!("hint{HOSTILE}")),
        });
        suite.left_out.push(crate::model::LeftOut { path: format!("p{HOSTILE}"), reason: format!("r{HOSTILE}") });
        run.verdict.reasons[0].message = format!("reason{HOSTILE}");
        for width in [None, Some(200)] {
            let plain = format!("{}{}", render_table(&run, false, width), render_verdict(&run, false));
            assert!(!plain.chars().any(|c| c.is_control() && c != '\n' || c == '\u{202E}'), "{plain:?}");
            assert!(plain.contains("broken␛[31m␛]0;title␇␛]52;c;aGk=␇␍[U+009B]2J[U+202E]␊x"), "{plain}");
            for shown in ["app␛", "error␛", "hint␛", "p␛", "r␛", "reason␛", "assert ␛", "f␛"] {
                assert!(plain.contains(shown), "`{shown}` is not in {plain}");
            }
            // With colour, fcorr's own escapes are the only ones: removing them gives the plain text.
            let colored = format!("{}{}", render_table(&run, true, width), render_verdict(&run, true));
            assert_eq!(strip_ansi(&colored), plain);
        }
    }

    #[test]
    fn failures_show_location_and_first_message_lines() {
        let table = render_table(&run(), false, None);
        assert!(table.contains("failed broken (tests/test_app.py:12)"), "{table}");
        assert!(table.contains("      assert 1 == 2\n      first detail\n      second detail\n"), "{table}");
        assert!(!table.contains("fourth line hidden"));
        let verdict = render_verdict(&run(), false);
        assert!(verdict.starts_with("FAIL  score 0  health POOR  1 passed, 1 failed, 0 skipped"), "{verdict}");
    }

    /// An error (a module that could not be collected) is counted with errors, never as failed:
    /// in the table's counts and in the verdict line (docs/python.md).
    #[test]
    fn errors_are_shown_apart_from_failures() {
        let mut run = run();
        run.suites[0].cases[1].status = CaseStatus::Error;
        run.suites[0].finalize_cases();
        run.totals = run.suites[0].counts;
        let table = render_table(&run, false, None);
        assert!(table.contains(" 1/0/0 (1 error) "), "{table}");
        let verdict = render_verdict(&run, false);
        assert!(verdict.contains("  1 passed, 0 failed, 1 error, 0 skipped  "), "{verdict}");
        run.suites[0].cases[0].status = CaseStatus::Error;
        run.suites[0].finalize_cases();
        run.totals = run.suites[0].counts;
        assert!(render_verdict(&run, false).contains("  0 passed, 0 failed, 2 errors, 0 skipped  "));
        assert!(render_table(&run, false, None).contains(" 0/0/0 (2 errors) "));
    }

    /// A suite with a failed case that meets its threshold (pass-rate, a bank's graded mean)
    /// passes the gate; its row says so rather than a bare `failed` beside PASS.
    #[test]
    fn a_failed_suite_that_meets_its_threshold_says_so() {
        let mut run = run();
        run.suites[0].status = SuiteStatus::Failed;
        run.suites[0].score.met = false;
        let table = render_table(&run, false, None);
        assert!(table.contains(" failed ") && !table.contains("score met"), "{table}");
        run.suites[0].score.met = true;
        assert!(render_table(&run, false, None).contains(" failed, score met "));
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
        let table = render_table(&run, false, None);
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
    fn plain_heartbeats_wait_for_30_quiet_seconds_and_name_each_long_phase() {
        let t0 = Instant::now();
        let running = |id: &str, started: Instant| {
            (id.to_string(), Running { phase: PhaseKind::Test, command: "pytest".into(), started, progress: None })
        };
        let now = t0 + Duration::from_secs(100);
        let phases = [running("old", t0), running("new", now - Duration::from_secs(10))];
        let every = Duration::from_secs(30);
        assert!(
            heartbeats(&phases, now - Duration::from_secs(29), now, every).is_empty(),
            "a line 29 s ago: quiet enough"
        );
        let due: Vec<String> =
            heartbeats(&phases, now - Duration::from_secs(30), now, every).into_iter().map(|(id, _)| id).collect();
        assert_eq!(due, ["old"], "only phases running 30 s or more");
        assert_eq!(
            heartbeat_line("app", PhaseKind::Install, Duration::from_secs(42), "added 3 packages"),
            "[app] install still running (42.0s) — last output: added 3 packages"
        );
        assert_eq!(
            heartbeat_line("bank", PhaseKind::Test, Duration::from_secs(95), "[13/20] V2-1 80 · ETA 11s"),
            "[bank] test still running (1m35s) — [13/20] V2-1 80 · ETA 11s"
        );
        assert!(heartbeat_line("app", PhaseKind::Build, Duration::from_secs(12), "").ends_with("no output yet"));
    }

    #[test]
    fn progress_shows_a_short_form_of_each_command() {
        let cases = [
            (
                "/root/.cache/fcorr/venvs/039fb985d661790f/bin/python -m pytest --junitxml=/tmp/out/work/p/pytest.xml -v -p no:cacheprovider",
                "python -m pytest …",
            ),
            ("node --test --test-reporter=spec --test-reporter-destination=stdout", "node --test …"),
            ("go build ./... && go vet -atomic -bool -buildtags ./...", "go build … && go vet -atomic …"),
            ("npm ci", "npm ci"),
            ("/venv/bin/python -I -S -c <inline script, 20 lines> invoice.py", "python -I -S …"),
            ("C:\\tools\\cargo.exe test --no-fail-fast", "cargo.exe test --no-fail-fast"),
        ];
        for (full, short) in cases {
            assert_eq!(short_command(full), short, "{full}");
        }
        assert!(display_width(&short_command(&"a && ".repeat(40))) <= SHORT_COMMAND);
    }

    /// Four suites whose table is 110 columns wide: a CJK name, long runners, phases that ran.
    fn wide_run() -> Run {
        let suite = |name: &str, language: &str, framework: &str, failing: bool| {
            let mut s = Suite::new(name, name, SuiteKind::Project);
            s.detection = Some(crate::model::Detection {
                ecosystem: language.to_lowercase(),
                language: language.into(),
                framework: framework.into(),
                package_manager: None,
                confidence: 0.9,
                markers: vec![],
            });
            let phase = |kind| crate::model::Phase {
                kind,
                command: "x".into(),
                status: PhaseStatus::Passed,
                exit_code: Some(0),
                duration_ms: 10,
                log_tail: String::new(),
                note: None,
            };
            s.phases = vec![phase(PhaseKind::Install), phase(PhaseKind::Build), phase(PhaseKind::Test)];
            s.cases = vec![
                Case {
                    name: format!("{name}::a_test_with_a_rather_long_name_that_goes_on_and_on").into(),
                    file: Some("tests/some/deeply/nested/directory/test_file.py".into()),
                    line: Some(12),
                    status: if failing { CaseStatus::Failed } else { CaseStatus::Passed },
                    ..Case::default()
                }
                .with_message(failing.then(|| format!("AssertionError: {}", "the values differ ".repeat(8)))),
            ];
            s.finalize_cases();
            s.status = if failing { SuiteStatus::Failed } else { SuiteStatus::Passed };
            s.duration_ms = 83_000;
            s.score = crate::score::score_suite(&s, Policy::Strict, 100.0, &crate::config::Weights::default());
            s
        };
        Run::assemble(
            vec![
                suite("python-calculator-service", "Python", "pytest", false),
                suite("数据处理-测试套件", "TypeScript", "vitest --typecheck", true),
                suite("go-stack", "Go", "go test", false),
                suite("rust-wordcount-with-a-long-name", "Rust", "cargo test", false),
            ],
            time::OffsetDateTime::UNIX_EPOCH,
            None,
            None,
        )
    }

    #[test]
    fn the_table_fits_80_columns_and_cjk_names_keep_their_rows_aligned() {
        let run = wide_run();
        let wide = render_table(&run, false, None);
        assert!(wide.lines().any(|l| display_width(l) > 100), "the unfitted table is wide:\n{wide}");
        for width in [80, 60] {
            let table = render_table(&run, false, Some(width));
            for line in table.lines() {
                assert!(display_width(line) <= width, "{} columns at {width}: {line:?}\n{table}", display_width(line));
            }
            let header = table.lines().find(|l| l.starts_with("suite")).unwrap();
            let cjk = table.lines().find(|l| l.starts_with("数据")).unwrap();
            let column = |line: &str, needle: &str| display_width(&line[..line.find(needle).unwrap()]);
            assert_eq!(column(header, "pass/fail/skip"), column(cjk, "0/1/0"), "\n{table}");
            assert_eq!(column(header, "status"), column(cjk, "failed"), "\n{table}");
        }
        // At 80 the phases give way first; the suite names stay whole.
        let table = render_table(&run, false, Some(80));
        assert!(table.lines().next().unwrap().ends_with("status  time"), "time comes back when room is left\n{table}");
        assert!(!table.contains("install") && table.contains("rust-wordcount-with-a-long-name "), "{table}");
    }

    #[test]
    fn phase_columns_show_only_when_a_phase_did_something() {
        let mut run = wide_run();
        assert!(render_table(&run, false, None).starts_with("suite "), "no critical failure first");
        assert!(render_table(&run, false, None).lines().next().unwrap().contains("install  build"));
        for suite in &mut run.suites {
            suite.phases.retain(|p| p.kind == PhaseKind::Test);
        }
        let header = render_table(&run, false, None).lines().next().unwrap().to_string();
        assert!(!header.contains("install") && !header.contains("build"), "{header}");
    }

    #[test]
    fn explicit_color_choice_wins() {
        assert!(use_color(Some(Color::Always)));
        assert!(!use_color(Some(Color::Never)));
    }

    fn strip_ansi(text: &str) -> String {
        let re = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
        re.replace_all(text, "").into_owned()
    }
}
