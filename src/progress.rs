//! Progress of long work that has no suites to show (an import, a merge): an indicatif bar on an
//! interactive stderr, a heartbeat line on stderr every 30 s elsewhere (a CI log that stays silent
//! for minutes looks hung, and some CI systems kill such jobs). Never on stdout, so `--json`
//! output stays one document; work that ends within [`SHOW_AFTER`] shows nothing.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::text::thousands;

/// Seconds between heartbeat lines when stderr is not a terminal.
const HEARTBEAT: Duration = Duration::from_secs(30);
/// Overrides [`HEARTBEAT`] (seconds, fractions allowed): tests shorten it to see a line.
pub(crate) const HEARTBEAT_ENV: &str = "FCORR_HEARTBEAT_SECS";
/// The bar appears only once the work has run this long: a quick import draws nothing.
const SHOW_AFTER: Duration = Duration::from_millis(500);
/// How often the bar is brought up to date.
const TICK: Duration = Duration::from_millis(100);

/// Bytes of report files read by parsers in this process ([`Counted`]), for the bar.
static BYTES_READ: AtomicU64 = AtomicU64::new(0);

/// A reader that adds what it reads to the bytes shown by the running [`Progress`].
pub(crate) struct Counted<R>(pub(crate) R);

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        BYTES_READ.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Takes back `n` bytes [`Counted`] counted for a read whose work was thrown away (a report
/// read in parts that must be read again whole), so the bar never passes its total.
pub(crate) fn uncount(n: u64) {
    // A load and a store could lose a concurrent reader's count; the update cannot.
    let _ = BYTES_READ.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |read| Some(read.saturating_sub(n)));
}

/// What a stage counts towards its total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Bytes of report files read (counted by [`Counted`]).
    Bytes,
    /// Steps told with [`Progress::step`] (results files read by a merge).
    Files,
}

/// The stage being worked on, as the bar and the heartbeat show it.
struct Stage {
    text: String,
    /// Total and unit, when the stage knows how much there is to do.
    total: Option<(u64, Unit)>,
    /// [`BYTES_READ`] when the stage began.
    bytes_base: u64,
}

struct Shared {
    /// `importing`, `merging`.
    what: &'static str,
    started: Instant,
    stage: Mutex<Stage>,
    steps: AtomicU64,
    cases: AtomicU64,
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl Shared {
    fn stage(&self) -> std::sync::MutexGuard<'_, Stage> {
        // Plain data replaced whole: a panic elsewhere cannot leave it half-written.
        self.stage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `(done, total, unit)` of the current stage, when it has a total.
    fn counts(&self) -> Option<(u64, u64, Unit)> {
        let stage = self.stage();
        let (total, unit) = stage.total?;
        let done = match unit {
            Unit::Bytes => BYTES_READ.load(Ordering::Relaxed).saturating_sub(stage.bytes_base),
            Unit::Files => self.steps.load(Ordering::Relaxed),
        };
        Some((done.min(total), total, unit))
    }

    /// The heartbeat line: `fcorr: still importing (30 s): reading reports, 12.0 of 46.0 MB`.
    fn heartbeat(&self) -> String {
        let mut line =
            format!("fcorr: still {} ({} s): {}", self.what, self.started.elapsed().as_secs(), self.stage().text);
        if let Some((done, total, unit)) = self.counts() {
            line.push_str(&format!(", {}", amount(done, total, unit)));
        }
        let cases = self.cases.load(Ordering::Relaxed);
        if cases > 0 {
            line.push_str(&format!(", {} cases", thousands(cases)));
        }
        line
    }
}

/// `12.0 of 46.0 MB`, `12 of 64 files`.
fn amount(done: u64, total: u64, unit: Unit) -> String {
    match unit {
        Unit::Bytes => format!("{:.1} of {:.1} MB", done as f64 / 1e6, total as f64 / 1e6),
        Unit::Files => format!("{done} of {total} files"),
    }
}

/// Progress of one piece of long work, shown until it is dropped.
pub(crate) struct Progress {
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts showing the progress of `what` (`importing`, `merging`) on stderr: a bar when
    /// `terminal` (an interactive stderr outside CI), heartbeat lines otherwise; nothing when
    /// `quiet`.
    pub(crate) fn start(what: &'static str, terminal: bool, quiet: bool) -> Progress {
        let shared = Arc::new(Shared {
            what,
            started: Instant::now(),
            stage: Mutex::new(Stage { text: String::from("starting"), total: None, bytes_base: 0 }),
            steps: AtomicU64::new(0),
            cases: AtomicU64::new(0),
            stopped: Mutex::new(false),
            wake: Condvar::new(),
        });
        let ticker = (!quiet).then(|| {
            let shared = shared.clone();
            let every = if terminal { None } else { Some(heartbeat_interval()) };
            // A thread that cannot start (no threads left) only means no progress is shown.
            std::thread::Builder::new().name("fcorr-progress".into()).spawn(move || show(&shared, every)).ok()
        });
        Progress { shared, ticker: ticker.flatten() }
    }

    /// A new stage of the work, with how much there is to do in it when known.
    pub(crate) fn stage(&self, text: impl Into<String>, total: Option<(u64, Unit)>) {
        let mut stage = self.shared.stage();
        *stage = Stage { text: text.into(), total, bytes_base: BYTES_READ.load(Ordering::Relaxed) };
        self.shared.steps.store(0, Ordering::Relaxed);
    }

    /// `n` more steps of a [`Unit::Files`] stage done.
    pub(crate) fn step(&self, n: u64) {
        self.shared.steps.fetch_add(n, Ordering::Relaxed);
    }

    /// `n` more cases read (shown next to the stage).
    pub(crate) fn cases(&self, n: u64) {
        self.shared.cases.fetch_add(n, Ordering::Relaxed);
    }
}

impl Drop for Progress {
    /// Stops the display (the bar is cleared) before whatever prints next.
    fn drop(&mut self) {
        *self.shared.stopped.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.shared.wake.notify_all();
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}

/// [`HEARTBEAT`], or [`HEARTBEAT_ENV`] when it holds a positive number of seconds.
pub(crate) fn heartbeat_interval() -> Duration {
    std::env::var(HEARTBEAT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(HEARTBEAT, |s| Duration::from_secs_f64(s.min(86_400.0)))
}

/// The ticker thread: a heartbeat line every `every`, or the bar (`every` = `None`) until stopped.
fn show(shared: &Shared, every: Option<Duration>) {
    let bar = every.is_none().then(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_prefix(shared.what);
        bar
    });
    let mut shown = false;
    let mut stopped = shared.stopped.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        let wait = every.unwrap_or(TICK);
        stopped = shared.wake.wait_timeout(stopped, wait).unwrap_or_else(PoisonError::into_inner).0;
        if *stopped {
            break;
        }
        let Some(bar) = &bar else {
            errln!("{}", shared.heartbeat());
            continue;
        };
        if !shown && shared.started.elapsed() >= SHOW_AFTER {
            shown = true;
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        let counts = shared.counts();
        let style = match counts {
            Some((_, _, Unit::Bytes)) => "{prefix}: {msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} ({elapsed})",
            Some((_, _, Unit::Files)) => "{prefix}: {msg} [{bar:30}] {pos}/{len} files ({elapsed})",
            None => "{prefix}: {spinner} {msg} ({elapsed})",
        };
        // The templates are constants that parse: a failure would only mean the default style.
        if let Ok(style) = ProgressStyle::with_template(style) {
            bar.set_style(style.progress_chars("=> "));
        }
        if let Some((done, total, _)) = counts {
            bar.set_length(total);
            bar.set_position(done);
        }
        let cases = shared.cases.load(Ordering::Relaxed);
        let text = shared.stage().text.clone();
        bar.set_message(if cases > 0 { format!("{text}, {} cases", thousands(cases)) } else { text });
        bar.tick();
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_lines_say_what_how_far_and_how_long() {
        let progress = Progress::start("merging", false, true);
        progress.stage("reading results", Some((64, Unit::Files)));
        progress.step(12);
        progress.cases(1_200_000);
        assert_eq!(
            progress.shared.heartbeat(),
            "fcorr: still merging (0 s): reading results, 12 of 64 files, 1,200,000 cases"
        );
        progress.stage("writing reports", None);
        assert_eq!(progress.shared.heartbeat(), "fcorr: still merging (0 s): writing reports, 1,200,000 cases");
        let progress = Progress::start("importing", false, true);
        progress.stage("reading reports", Some((46_000_000, Unit::Bytes)));
        let mut counted = Counted(&[0u8; 1000][..]);
        std::io::copy(&mut counted, &mut std::io::sink()).unwrap();
        // Other tests may read reports meanwhile: only the start of the line is certain.
        assert!(progress.shared.heartbeat().starts_with("fcorr: still importing (0 s): reading reports, "));
    }
}
