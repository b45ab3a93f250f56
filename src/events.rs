//! Typed events the executor emits while a run is under way.
//!
//! Consumers (the terminal progress display, plain CI lines, tests) implement [`EventSink`];
//! the executor never prints anything itself. [`OutputTap`] lets a consumer read the last line a
//! running phase printed (for the heartbeat on long phases) without the executor pushing lines.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::model::{Detection, Phase, PhaseKind, Suite};

/// Where a command's output is written in full (defined here, with the tap that reads it, so
/// events need nothing from the executor that emits them).
pub(crate) type LogSink = Arc<Mutex<Box<dyn Write + Send>>>;

/// Something that happened during a run.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    /// The run starts with this many suites.
    RunStarted {
        suites: usize,
        jobs: usize,
    },
    SuiteStarted {
        suite_id: String,
        name: String,
    },
    Detected {
        suite_id: String,
        detection: Detection,
    },
    PhaseStarted {
        suite_id: String,
        phase: PhaseKind,
        command: String,
    },
    PhaseFinished {
        suite_id: String,
        phase: Phase,
    },
    /// How far a suite that runs its cases itself has got (`[13/20] V2-APP-001 80 · ETA 11s`):
    /// shown on its spinner, and in plain mode only in heartbeats, never a line per case.
    CaseProgress {
        suite_id: String,
        text: String,
    },
    /// The suite is fully collected and scored.
    SuiteFinished {
        suite: Box<Suite>,
    },
    /// The suite's output log: the last line its running command printed, for heartbeats.
    Output {
        suite_id: String,
        tap: OutputTap,
    },
}

/// Receives events; called from worker threads.
pub(crate) trait EventSink: Send + Sync {
    /// Handles one event.
    fn emit(&self, event: Event);
}

/// Discards every event.
pub(crate) struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: Event) {}
}

/// Longest last line kept (characters); a heartbeat is one line.
const LAST_LINE_MAX: usize = 160;

/// The last complete, non-empty line written to a suite's log, readable from another thread.
#[derive(Debug, Clone, Default)]
pub(crate) struct OutputTap {
    last: Arc<Mutex<String>>,
}

impl OutputTap {
    /// The last line seen, without terminal escapes; empty before any output.
    pub(crate) fn last_line(&self) -> String {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, line: &str) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = line.to_string();
    }
}

/// A writer that forwards everything and remembers the last line in an [`OutputTap`].
struct TapWriter<W> {
    inner: W,
    tap: OutputTap,
    /// Bytes of a line not ended yet (bounded: only its start is ever shown).
    partial: Vec<u8>,
}

impl<W: Write> Write for TapWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        for chunk in buf[..n].split_inclusive(|b| *b == b'\n' || *b == b'\r') {
            let ended = chunk.ends_with(b"\n") || chunk.ends_with(b"\r");
            let body = if ended { &chunk[..chunk.len() - 1] } else { chunk };
            if self.partial.len() < 4 * LAST_LINE_MAX {
                self.partial.extend_from_slice(&body[..body.len().min(4 * LAST_LINE_MAX)]);
            }
            if ended {
                let line = std::mem::take(&mut self.partial);
                if let Some(shown) = shown_line(&line) {
                    self.tap.set(&shown);
                }
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The text of a log line worth showing: escapes stripped, trimmed, cut at [`LAST_LINE_MAX`]
/// characters; `None` for blank lines and fcorr's own `[fcorr: ...]` footers.
fn shown_line(bytes: &[u8]) -> Option<String> {
    let text = strip_ansi_escapes::strip_str(String::from_utf8_lossy(bytes));
    let text = text.trim();
    if text.is_empty() || text.starts_with("[fcorr:") {
        return None;
    }
    let mut shown: String = text.chars().take(LAST_LINE_MAX).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    Some(shown)
}

/// A log sink writing to `inner` (the suite's capped log file) whose last line can be read
/// through the returned tap.
pub(crate) fn tapped_log(inner: LogSink) -> (LogSink, OutputTap) {
    let tap = OutputTap::default();
    let writer = TapWriter { inner: Forward(inner), tap: tap.clone(), partial: Vec::new() };
    (Arc::new(Mutex::new(Box::new(writer))), tap)
}

/// Writes into another log sink.
struct Forward(LogSink);

impl Write for Forward {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // A thread that panicked while writing leaves the log as usable as before: write on.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tap_keeps_the_last_complete_visible_line() {
        let (log, tap) = tapped_log(crate::execute::process::null_log());
        let mut w = log.lock().unwrap();
        assert_eq!(tap.last_line(), "");
        w.write_all(b"$ npm ci  (in /p)\n").unwrap();
        assert_eq!(tap.last_line(), "$ npm ci  (in /p)");
        w.write_all(b"\x1b[32madded 12\x1b[0m pack").unwrap();
        assert_eq!(tap.last_line(), "$ npm ci  (in /p)", "a line is shown once it ends");
        w.write_all(b"ages\n\n   \n").unwrap();
        assert_eq!(tap.last_line(), "added 12 packages", "escapes stripped, blank lines ignored");
        w.write_all(b"progress 10%\rprogress 90%\r[fcorr: Code(0) after 1.0s]\n").unwrap();
        assert_eq!(tap.last_line(), "progress 90%", "carriage returns end a line; fcorr footers are not output");
        w.write_all("é".repeat(400).as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
        assert_eq!(tap.last_line().chars().count(), LAST_LINE_MAX + 1, "cut, with an ellipsis");
    }
}
