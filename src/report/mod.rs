//! Report: pure renderings of a [`Run`] (with its comparison) into files people and tools read.
//!
//! Each format is one file implementing [`Reporter`], registered in [`reporters`]. Rendering
//! never touches the network or the run; writing is done here, once, for every selected format.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::errors::{FcorrError, RenderError};
use crate::model::Run;

pub use crate::config::Format;

pub(crate) mod bank;
pub mod budget;
pub mod ctrf;
pub(crate) mod eval;
pub(crate) mod filters;
pub mod html;
pub(crate) mod in_progress;
pub(crate) mod json;
pub mod junit;
pub(crate) mod lead;
pub mod links;
pub mod markdown;
pub(crate) mod mermaid;
pub(crate) mod pretty;
pub(crate) mod results_folder;
pub mod terminal;
pub(crate) mod trend;

/// Extra context reports may show (CI links, repository names); all optional.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ReportEnv {
    /// Repository as `owner/name`.
    pub repository: Option<String>,
    /// URL of the CI run that produced the results.
    pub run_url: Option<String>,
    pub server_url: Option<String>,
    /// Directory with user template overrides.
    #[serde(skip)]
    pub templates: Option<PathBuf>,
    /// Mermaid chart in the job summary: on unless `Some(false)` (`[report] charts = false`).
    #[serde(skip)]
    pub summary_charts: Option<bool>,
    /// Mermaid chart in the PR comment too (`[report] comment-charts = true`).
    #[serde(skip)]
    pub comment_charts: bool,
    /// The most detail the PR comment shows (`comment-body`); less when that exceeds the limit.
    #[serde(skip)]
    pub comment_detail: markdown::Detail,
    /// Links from `file:line` to the code on GitHub; `None` outside GitHub (plain text then).
    #[serde(skip)]
    pub links: Option<links::CodeLinks>,
    /// `report.html`'s cap in bytes (`[report] html-max-bytes`); `None`: `FCORR_HTML_MAX_BYTES`
    /// or the default ([`html::DEFAULT_MAX_BYTES`]).
    #[serde(skip)]
    pub html_max_bytes: Option<u64>,
}

/// An output format.
pub trait Reporter: Send + Sync {
    /// The format this reporter writes (never [`Format::All`]).
    fn format(&self) -> Format;

    /// Format name for `--format` (`json`, `junit`, `ctrf`, `summary`, `comment`, `html`).
    fn name(&self) -> &'static str {
        self.format().name()
    }

    /// File name written in the output directory.
    fn file_name(&self) -> &'static str;

    /// Streams the rendering of the run into `out`.
    ///
    /// Formats with large outputs write as they go, so a 100,000-case run is never held in memory
    /// twice; an `Err` names what failed (I/O errors included).
    fn write(&self, run: &Run, env: &ReportEnv, out: &mut dyn Write) -> Result<(), RenderError>;

    /// Writes this format into the directory `dir` and returns the paths written: by default
    /// [`file_name`](Reporter::file_name) through a temporary file and a rename ([`write_atomic_with`]);
    /// a format with files beside its own (report.html's sibling pages) writes those too.
    fn write_into(&self, run: &Run, env: &ReportEnv, dir: &Path) -> Result<Vec<PathBuf>, RenderError> {
        let path = dir.join(self.file_name());
        write_atomic_with(&path, |w| self.write(run, env, w))?;
        Ok(vec![path])
    }

    /// Where this format goes in the writing queue (lower starts first): the slowest formats
    /// first, so the last one to finish is a quick one.
    fn queue_rank(&self) -> u8 {
        u8::MAX
    }

    /// True when rendering builds a template context holding listed cases in memory; at most
    /// one such format renders at a time, so their peaks never add up.
    fn uses_template_context(&self) -> bool {
        false
    }

    /// The rendering as bytes (tests and small outputs).
    fn render(&self, run: &Run, env: &ReportEnv) -> Result<Vec<u8>, RenderError> {
        let mut bytes = Vec::new();
        self.write(run, env, &mut bytes)?;
        Ok(bytes)
    }
}

/// Every file format, in writing order.
pub static REPORTERS: &[&dyn Reporter] = &[
    &json::ResultsJson,
    &junit::JunitXml,
    &ctrf::CtrfJson,
    &markdown::SummaryMarkdown,
    &markdown::CommentMarkdown,
    &html::HtmlPage,
];

/// Writes every selected format into `out`; returns the paths written.
///
/// Formats are written concurrently, one per core, slowest first, each streamed through a
/// buffer into a temporary file that is renamed into place; formats rendered through a template
/// context take turns, so their memory peaks never add up. `results.json` is always written and never waits
/// on another format, so nothing computed is lost if a later format fails; a failing format is
/// reported and the others are still written.
pub fn write_all(run: &Run, env: &ReportEnv, out: &Path, formats: &[Format]) -> (Vec<PathBuf>, Vec<RenderError>) {
    let (written, problems, _) = write_all_timed(run, env, out, formats);
    (written, problems)
}

/// How long each report format took to write, in registration order: wall time, and the CPU
/// time it took (zero where unavailable) — of the thread that wrote it and of any helper threads
/// it started ([`add_helper_cpu`]) — which a busy machine inflates less.
pub type Timings = Vec<(&'static str, Duration, Duration)>;

/// [`write_all_timed`] for commands whose product is these files: any report that could not be
/// written is a harness error (exit 3) naming the path and the OS error, never a warning. Once
/// all are written, the directory's in-progress marker ([`in_progress::begin`]) is removed.
pub fn write_required(
    run: &Run,
    env: &ReportEnv,
    out: &Path,
    formats: &[Format],
) -> Result<(Vec<PathBuf>, Timings), FcorrError> {
    let (written, problems, timings) = write_all_timed(run, env, out, formats);
    if problems.is_empty() {
        // Every report is this run's now; until here the directory was marked as incomplete.
        in_progress::finish(out);
        return Ok((written, timings));
    }
    Err(RenderError::Reports { dir: out.to_path_buf(), problems }.into())
}

/// [`write_all`], also returning how long each format took (for `--timings`).
pub fn write_all_timed(
    run: &Run,
    env: &ReportEnv,
    out: &Path,
    formats: &[Format],
) -> (Vec<PathBuf>, Vec<RenderError>, Timings) {
    write_selected(run, env, out, selected(formats, true))
}

/// [`write_all`] for `fcorr report`, which re-renders a run read from `source` (a
/// `results.json`): that file is not written again when it is the one `out` would get. It holds
/// the run the other reports are rendered from, as it was read; writing it back would only spend
/// the time of serialising it (a third of re-rendering a 100,000-case run) and change its mtime.
/// Returns the paths written and whether `source` was kept.
pub fn rerender(
    run: &Run,
    env: &ReportEnv,
    out: &Path,
    formats: &[Format],
    source: &Path,
) -> (Vec<PathBuf>, Vec<RenderError>, bool) {
    let keep = same_file(source, &out.join(json::ResultsJson.file_name()));
    let (written, problems, _) = write_selected(run, env, out, selected(formats, !keep));
    (written, problems, keep)
}

/// True when both paths name one existing file (a link or another spelling of the path too).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        #[cfg(unix)]
        (Ok(a), Ok(b)) => {
            use std::os::unix::fs::MetadataExt;
            (a.dev(), a.ino()) == (b.dev(), b.ino())
        }
        #[cfg(not(unix))]
        (Ok(_), Ok(_)) => std::fs::canonicalize(a).ok().is_some_and(|a| std::fs::canonicalize(b).ok() == Some(a)),
        _ => false,
    }
}

/// The reporters of `formats` (every one when empty or `all`), `results.json` always when `json`.
fn selected(formats: &[Format], json: bool) -> Vec<&'static dyn Reporter> {
    let all = formats.is_empty() || formats.contains(&Format::All);
    let wanted = |format: Format| match format {
        Format::Json => json,
        other => all || formats.contains(&other),
    };
    REPORTERS.iter().copied().filter(|r| wanted(r.format())).collect()
}

fn write_selected(
    run: &Run,
    env: &ReportEnv,
    out: &Path,
    selected: Vec<&dyn Reporter>,
) -> (Vec<PathBuf>, Vec<RenderError>, Timings) {
    if let Err(source) = std::fs::create_dir_all(out) {
        return (Vec::new(), vec![RenderError::OutDir { path: out.to_path_buf(), source }], Vec::new());
    }
    // Results are kept in registration order so paths and problems read the same on every run.
    type Slot = Mutex<Option<(Result<Vec<PathBuf>, RenderError>, Duration, Duration)>>;
    let outcomes: Vec<Slot> = selected.iter().map(|_| Mutex::new(None)).collect();
    let mut queue: Vec<usize> = (0..selected.len()).collect();
    queue.sort_by_key(|&i| selected[i].queue_rank());
    let next = AtomicUsize::new(0);
    let template_turn = Mutex::new(());
    let work = || {
        while let Some(&i) = queue.get(next.fetch_add(1, Ordering::Relaxed)) {
            let reporter = &selected[i];
            let started = Instant::now();
            let cpu_started = thread_cpu();
            HELPER_CPU.with(|helpers| helpers.set(Duration::ZERO));
            // Held only while rendering; a poisoned lock just means another format panicked.
            let _turn = reporter
                .uses_template_context()
                .then(|| template_turn.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
            let outcome = reporter.write_into(run, env, out);
            let cpu = thread_cpu().saturating_sub(cpu_started) + HELPER_CPU.with(|helpers| helpers.take());
            // Each slot is locked by exactly one worker, once: it cannot be poisoned or contended.
            *outcomes[i].lock().expect("report slot") = Some((outcome, started.elapsed(), cpu));
        }
    };
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(selected.len());
    std::thread::scope(|scope| {
        for _ in 1..workers {
            scope.spawn(work);
        }
        work();
    });
    let mut written = Vec::new();
    let mut problems = Vec::new();
    let mut timings = Vec::new();
    for (reporter, outcome) in selected.iter().zip(outcomes) {
        match outcome.into_inner().ok().flatten() {
            Some((Ok(paths), took, cpu)) => {
                written.extend(paths);
                timings.push((reporter.name(), took, cpu));
            }
            // The error's message adds the path when the cause (a full disk) does not say where.
            Some((Err(e), _, _)) => problems.push(RenderError::Report {
                format: reporter.name(),
                path: out.join(reporter.file_name()),
                source: Box::new(e),
            }),
            None => problems.push(RenderError::Lost { format: reporter.name() }),
        }
    }
    (written, problems, timings)
}

std::thread_local! {
    /// CPU time of the threads the format being written on this thread started for its work
    /// (report.html compresses its parts on helper threads): counted as that format's.
    static HELPER_CPU: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
}

/// Runs `work` on a thread a format's writer started, and returns its result with the CPU time
/// it took there, for [`add_helper_cpu`] on the writer's thread.
pub(crate) fn with_cpu<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    let started = thread_cpu();
    let value = work();
    (value, thread_cpu().saturating_sub(started))
}

/// Counts `cpu`, spent on a helper thread, as CPU of the format this thread is writing: a
/// format's `--timings` CPU is all of its work, not only that of the thread that wrote it.
pub(crate) fn add_helper_cpu(cpu: Duration) {
    let _ = HELPER_CPU.try_with(|helpers| helpers.set(helpers.get() + cpu));
}

/// CPU time of the calling thread so far (zero where unavailable).
#[cfg(unix)]
fn thread_cpu() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes into the timespec we own.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// No per-thread CPU clock off Unix: `--timings` reports zero there.
#[cfg(not(unix))]
fn thread_cpu() -> Duration {
    Duration::ZERO
}

/// Runs `fill` over a buffer of its own in front of `out`, then hands the buffer on.
///
/// serde and quick-xml write a few bytes at a time (each quote, comma, indent apart), and
/// every write into a `&mut dyn Write` is a call the compiler cannot inline: on a 100,000-case
/// run those calls cost more than the JSON escaping. A `BufWriter` of a known type takes them
/// inline and passes on 64 KiB at once. `out` is not flushed: the caller finishes it.
pub(crate) fn buffered<T>(
    out: &mut dyn Write,
    fill: impl FnOnce(&mut std::io::BufWriter<&mut dyn Write>) -> std::io::Result<T>,
) -> std::io::Result<T> {
    let mut buffer = std::io::BufWriter::with_capacity(64 * 1024, out);
    let value = fill(&mut buffer)?;
    buffer.into_inner().map_err(std::io::IntoInnerError::into_error)?;
    Ok(value)
}

/// Writes through a temporary file and a rename, so readers never see half a file; secrets
/// are redacted on the way, as by [`write_atomic_with`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RenderError> {
    write_atomic_with(path, |w| {
        w.write_all(bytes).map_err(|source| RenderError::NotWritten {
            path: path.to_path_buf(),
            action: "write",
            source,
        })
    })
}

/// Streams `fill` into a temporary file beside `path`, then renames it into place; on failure
/// the temporary file is removed and `path` is left as it was ([`crate::fsio::write_atomic_with`]).
/// Secrets are redacted on the way (`crate::secrets`).
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), RenderError>,
) -> Result<(), RenderError> {
    crate::fsio::write_atomic_with(path, crate::fsio::Mode::REPORT, |w| {
        // The last safety net: no secret fcorr holds reaches a file, whatever the text came from.
        let mut writer = crate::secrets::RedactWriter::new(w);
        fill(&mut writer)?;
        writer.finish().map_err(|source| RenderError::NotWritten { path: path.to_path_buf(), action: "write", source })
    })
}

/// A saved `results.json` that cannot be used, and which file it is.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct ResultsError {
    pub path: PathBuf,
    #[source]
    pub problem: ResultsProblem,
}

/// What is wrong with a `results.json` (the file is named by whoever read it).
#[derive(Debug, thiserror::Error)]
pub enum ResultsProblem {
    #[error("no results file here: run `fcorr run` or `fcorr import` first, or give the path of a results.json")]
    Missing(#[source] std::io::Error),
    /// Unreadable, a special file, over [`crate::fsio::RESULTS`]'s cap, or not UTF-8.
    #[error(transparent)]
    Unreadable(crate::fsio::ReadProblem),
    #[error(
        "it is a zip archive, and zips are not supported here: unzip it first (`unzip -d DIR FILE`) and give the folder or its results.json"
    )]
    Zip,
    #[error("line {}, column {}: not an fcorr results file: {}", source.line(), source.column(), crate::text::json_error_text(source))]
    NotResults { source: serde_json::Error },
    #[error("schema version {found} is not supported (this fcorr reads version {})", crate::model::SCHEMA_VERSION)]
    Schema { found: u32 },
    /// A score outside 0–100: fcorr never writes one, so the file was edited or is not fcorr's,
    /// and no delta computed from it would mean anything.
    #[error(
        "{at}: score {} is not a score (fcorr scores run from 0 to 100); the file was not written by fcorr as it is",
        short(*value)
    )]
    BadScore { at: String, value: f64 },
}

impl From<ResultsError> for FcorrError {
    /// A results file given on the command line that cannot be read is an input error (exit 2).
    fn from(e: ResultsError) -> FcorrError {
        let message = e.problem.to_string();
        FcorrError::Input { file: e.path, message, source: Some(Box::new(e.problem)) }
    }
}

/// Results files up to this size are read whole and parsed from their text (serde_json's
/// fastest path); larger ones are parsed as they are read, so the text (~1.4x the model it
/// becomes, 448 MB at a million cases) is never held beside the run.
const READ_WHOLE_BELOW: u64 = 64 * 1024 * 1024;

/// Reads a saved `results.json` (or the one in a directory), within [`crate::fsio::RESULTS`]'s cap.
pub fn load_results(path: &Path) -> Result<Run, ResultsError> {
    load_results_reading_whole_below(path, READ_WHOLE_BELOW)
}

fn load_results_reading_whole_below(path: &Path, whole_below: u64) -> Result<Run, ResultsError> {
    let path = results_path(path)?;
    let fail = |problem| ResultsError { path: path.clone(), problem };
    let (mut reader, size) = open_results(&path).map_err(fail)?;
    if size >= whole_below {
        return checked(read_run(reader, &path)?).map_err(fail);
    }
    // The size is within the cap, and the reader stops there even if the file grows.
    let mut bytes = Vec::with_capacity(size as usize);
    std::io::Read::read_to_end(&mut reader, &mut bytes)
        .map_err(|e| fail(ResultsProblem::Unreadable(crate::fsio::ReadProblem::Io(e))))?;
    let text = crate::fsio::text_of(bytes).map_err(|problem| fail(ResultsProblem::Unreadable(problem)))?;
    parse_results(&text).map_err(fail)
}

/// Reads a saved `results.json` to render it again (`fcorr report`). Its failure details and
/// output are kept plain when the file is read whole: each report reads every text, and packing
/// them would only be undone by each. A file parsed as it is read (over [`READ_WHOLE_BELOW`],
/// ~140,000 cases) packs them as an import does, so re-rendering a million-case run holds about
/// what importing it held, not the texts' full size on top (hundreds of MB).
pub fn load_results_to_render(path: &Path) -> Result<Run, ResultsError> {
    load_results_to_render_below(path, READ_WHOLE_BELOW)
}

fn load_results_to_render_below(path: &Path, whole_below: u64) -> Result<Run, ResultsError> {
    let read_whole = results_path(path)
        .ok()
        .and_then(|file| std::fs::metadata(file).ok())
        .is_none_or(|meta| meta.len() < whole_below);
    match read_whole {
        true => crate::model::Text::kept_plain(|| load_results_reading_whole_below(path, whole_below)),
        false => load_results_reading_whole_below(path, whole_below),
    }
}

/// Reads a saved `results.json` (or the one in a directory) as a baseline: streamed from the
/// file rather than read whole, each case slimmed as it is read ([`crate::model::read_slim`]),
/// with [`load_results`]'s cap and checks. A 45 MB, 100,000-case baseline held whole (its text,
/// then every case's output and traceback) cost ~100 MiB on top of the run it is compared with.
pub fn load_baseline(path: &Path) -> Result<Run, ResultsError> {
    let path = results_path(path)?;
    let (reader, _) = open_results(&path).map_err(|problem| ResultsError { path: path.clone(), problem })?;
    let run = crate::model::read_slim(|| read_run(reader, &path))?;
    checked(slim_capacity(run)).map_err(|problem| ResultsError { path, problem })
}

/// A results file opened to be parsed as it is read: a regular file within
/// [`crate::fsio::RESULTS`]'s cap, not a zip, past a byte-order mark; and its size.
fn open_results(path: &Path) -> Result<(impl std::io::Read + use<>, u64), ResultsProblem> {
    use std::io::{BufRead, Read};
    let limit = crate::fsio::RESULTS;
    let file = crate::fsio::open_regular(path, limit.what).map_err(|e| read_problem(e.problem))?;
    let io = |e| ResultsProblem::Unreadable(crate::fsio::ReadProblem::Io(e));
    let size = file.metadata().map_err(io)?.len();
    if size > limit.cap {
        return Err(ResultsProblem::Unreadable(crate::fsio::ReadProblem::TooLarge { size, limit }));
    }
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, file.take(limit.cap));
    let head = reader.fill_buf().map_err(io)?;
    if is_zip(head) {
        return Err(ResultsProblem::Zip);
    }
    if head.starts_with("\u{feff}".as_bytes()) {
        reader.consume("\u{feff}".len());
    }
    Ok((reader, size))
}

/// Part of a saved `results.json` (`T` names the fields wanted; the rest is skipped), parsed as
/// it is read: a merge learns every part's suite ids before it reads any part whole.
pub(crate) fn read_results_as<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ResultsProblem> {
    let (reader, _) = open_results(path)?;
    serde_json::from_reader(reader).map_err(|source| ResultsProblem::NotResults { source })
}

/// The run in a results file opened by [`open_results`], parsed as it is read.
fn read_run(reader: impl std::io::Read, path: &Path) -> Result<Run, ResultsError> {
    serde_json::from_reader::<_, Run>(reader)
        .map_err(|source| ResultsError { path: path.to_path_buf(), problem: run_problem(source) })
}

/// A read that failed, or a text that is not a run.
fn run_problem(source: serde_json::Error) -> ResultsProblem {
    match source.is_io() {
        true => ResultsProblem::Unreadable(crate::fsio::ReadProblem::Io(source.into())),
        false => ResultsProblem::NotResults { source },
    }
}

/// [`parse_results`] for a baseline's text: each case slimmed as it is read, as by
/// [`load_baseline`].
pub fn parse_baseline(text: &str) -> Result<Run, ResultsProblem> {
    crate::model::read_slim(|| parse_results(text)).map(slim_capacity)
}

/// A baseline's `results.json` parsed as it is read (one inside an artifact's zip), each case
/// slimmed, with [`parse_results`]'s checks: its text is never held whole.
pub fn read_baseline(reader: impl std::io::Read) -> Result<Run, ResultsProblem> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, reader);
    let io = |e| ResultsProblem::Unreadable(crate::fsio::ReadProblem::Io(e));
    if reader.fill_buf().map_err(io)?.starts_with("\u{feff}".as_bytes()) {
        reader.consume("\u{feff}".len());
    }
    let run = crate::model::read_slim(|| serde_json::from_reader::<_, Run>(reader)).map_err(run_problem)?;
    checked(slim_capacity(run))
}

/// Case lists grown by doubling while read, trimmed to their length: a baseline is kept
/// while the run it is compared with is judged.
fn slim_capacity(mut run: Run) -> Run {
    for suite in &mut run.suites {
        suite.cases.shrink_to_fit();
    }
    run
}

/// `path`, or the `results.json` in it when it is a directory; a `.zip` is refused by name.
fn results_path(path: &Path) -> Result<PathBuf, ResultsError> {
    let path = if path.is_dir() { path.join("results.json") } else { path.to_path_buf() };
    match path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip")) {
        true => Err(ResultsError { path, problem: ResultsProblem::Zip }),
        false => Ok(path),
    }
}

/// A zip archive's first bytes (a local file header, or the end record of an empty zip).
fn is_zip(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06")
}

/// A missing file is [`ResultsProblem::Missing`] (with its hint), anything else unreadable.
fn read_problem(problem: crate::fsio::ReadProblem) -> ResultsProblem {
    match problem {
        crate::fsio::ReadProblem::Io(io) if io.kind() == std::io::ErrorKind::NotFound => ResultsProblem::Missing(io),
        other => ResultsProblem::Unreadable(other),
    }
}

/// Reads `results.json` text of the schema version this fcorr writes, whose scores are scores.
pub fn parse_results(text: &str) -> Result<Run, ResultsProblem> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    checked(serde_json::from_str(text).map_err(|source| ResultsProblem::NotResults { source })?)
}

/// `run` when it is of the schema version this fcorr writes and its scores are scores.
fn checked(run: Run) -> Result<Run, ResultsProblem> {
    if run.schema_version != crate::model::SCHEMA_VERSION {
        return Err(ResultsProblem::Schema { found: run.schema_version });
    }
    check_scores(&run)?;
    Ok(run)
}

/// `-1e308` rather than 309 digits; ordinary numbers as they are.
fn short(value: f64) -> String {
    if value.abs() < 1e9 { value.to_string() } else { format!("{value:e}") }
}

/// Every score in 0–100: a baseline's scores become deltas in every report, and a value such
/// as -1e308 would show as an infinite improvement.
fn check_scores(run: &Run) -> Result<(), ResultsProblem> {
    let bad = |at: String, value: f64| Err(ResultsProblem::BadScore { at, value });
    let valid = |x: f64| (0.0..=100.0).contains(&x);
    if let Some(score) = run.score.filter(|s| !valid(*s)) {
        return bad("the run".into(), score);
    }
    for suite in &run.suites {
        if !valid(suite.score.value) {
            return bad(format!("suite `{}`", suite.id), suite.score.value);
        }
        if let Some(case) = suite.cases.iter().find(|c| c.extra().score.is_some_and(|s| !valid(s))) {
            return bad(format!("suite `{}`, case `{}`", suite.id, case.id), case.extra().score.unwrap_or_default());
        }
    }
    Ok(())
}

// Defined with the reports, not the config: configuration knows nothing of rendering.
impl crate::config::ReportConfig {
    /// `env` with the chart settings of `[report]` (templates are resolved by the pipeline).
    pub fn apply_to(&self, env: ReportEnv) -> ReportEnv {
        ReportEnv {
            summary_charts: self.charts,
            comment_charts: self.comment_charts.unwrap_or(false),
            html_max_bytes: self.html_max_bytes.or(env.html_max_bytes),
            ..env
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_but_all_has_one_reporter_in_the_order_listed() {
        use clap::ValueEnum;
        let written: Vec<Format> = REPORTERS.iter().map(|r| r.format()).collect();
        let listed: Vec<Format> = Format::value_variants().iter().copied().filter(|f| *f != Format::All).collect();
        assert_eq!(written, listed);
    }
    use crate::model::{Case, CaseStatus, Suite, SuiteKind};

    fn run() -> Run {
        let mut suite = Suite::new("api", "api", SuiteKind::Import);
        suite.cases = vec![Case { name: "ok".into(), status: CaseStatus::Passed, ..Case::default() }];
        suite.finalize_cases();
        Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        let names = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
        names.filter(|n| n.ends_with(".tmp")).collect()
    }

    #[test]
    fn every_format_is_written_in_registration_order() {
        let dir = tempfile::tempdir().unwrap();
        let (written, problems) = write_all(&run(), &ReportEnv::default(), dir.path(), &[]);
        assert!(problems.is_empty(), "{problems:?}");
        let names: Vec<_> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        let expected: Vec<_> = REPORTERS.iter().map(|r| r.file_name().to_string()).collect();
        assert_eq!(names, expected);
        assert!(leftovers(dir.path()).is_empty());
        let json = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
        assert!(json.ends_with("}\n") && json.contains("\"schema_version\": 1"));
    }

    #[test]
    fn a_formats_cpu_time_counts_the_helper_threads_it_started() {
        /// Writes nothing itself; says a helper thread spent an hour on it.
        struct Helped;
        impl Reporter for Helped {
            fn format(&self) -> Format {
                Format::Summary
            }
            fn file_name(&self) -> &'static str {
                "helped.txt"
            }
            fn write(&self, _: &Run, _: &ReportEnv, _: &mut dyn Write) -> Result<(), RenderError> {
                let ((), cpu) = std::thread::scope(|s| s.spawn(|| with_cpu(|| ())).join().unwrap());
                add_helper_cpu(cpu + Duration::from_secs(3600));
                Ok(())
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let (_, problems, timings) = write_selected(&run(), &ReportEnv::default(), dir.path(), vec![&Helped, &Helped]);
        assert!(problems.is_empty(), "{problems:?}");
        // Counted once per format, on whichever worker wrote it.
        assert!(timings.iter().all(|(_, _, cpu)| cpu.as_secs() == 3600), "{timings:?}");
    }

    #[test]
    fn a_failing_format_is_reported_and_the_others_are_written() {
        let templates = tempfile::tempdir().unwrap();
        std::fs::write(templates.path().join("summary.md.j2"), "{% for x in %}broken").unwrap();
        let env = ReportEnv { templates: Some(templates.path().into()), ..ReportEnv::default() };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("summary.md"), "earlier").unwrap();
        let (written, problems) = write_all(&run(), &env, dir.path(), &[]);
        // Only the summary fails; the HTML page does not use the Markdown templates.
        assert_eq!(problems.len(), 1, "{problems:?}");
        let problem = problems[0].to_string();
        assert!(problem.starts_with("summary report failed: template summary.md.j2"), "{problem}");
        // The template error does not name the file being written, so the message adds it.
        assert!(problem.ends_with(&format!("(writing {})", dir.path().join("summary.md").display())), "{problem}");
        assert_eq!(written.len(), REPORTERS.len() - 1);
        assert_eq!(std::fs::read_to_string(dir.path().join("summary.md")).unwrap(), "earlier", "left as it was");
        assert!(dir.path().join("report.html").exists());
        assert!(leftovers(dir.path()).is_empty(), "temporary files are removed");
    }

    #[test]
    fn an_unwritable_output_directory_is_a_harness_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("a-file");
        std::fs::write(&blocker, "").unwrap();
        let out = blocker.join("out");
        let err = write_required(&run(), &ReportEnv::default(), &out, &[]).unwrap_err();
        assert_eq!(err.exit_code(), 3, "{err}");
        let text = err.to_string();
        let dir_text = out.display().to_string();
        assert!(
            text.starts_with(&format!("reports could not be written to {dir_text}: cannot create {dir_text}: ")),
            "{text}"
        );
    }

    #[test]
    fn a_write_error_names_the_file_once() {
        let path = PathBuf::from("/out/report.html");
        let full = || std::io::Error::from(std::io::ErrorKind::StorageFull);
        let streamed = RenderError::Report {
            format: "html",
            path: path.clone(),
            source: Box::new(RenderError::Format { format: "the HTML page", source: full() }),
        };
        assert!(streamed.to_string().starts_with("html report failed: cannot write the HTML page: "), "{streamed}");
        assert!(streamed.to_string().ends_with(" (writing /out/report.html)"), "{streamed}");
        let flushed = RenderError::Report {
            format: "html",
            path: path.clone(),
            source: Box::new(RenderError::NotWritten { path, action: "write", source: full() }),
        };
        assert_eq!(flushed.to_string().matches("/out/report.html").count(), 1, "{flushed}");
    }

    #[test]
    fn a_results_file_parsed_as_it_is_read_is_refused_or_read_as_one_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_baseline(dir.path()).unwrap_err();
        assert!(matches!(&err.problem, ResultsProblem::Missing(_)), "{err:?}");
        let file = dir.path().join("results.json");
        let mut bad: serde_json::Value = serde_json::to_value(run()).unwrap();
        bad["suites"][0]["score"]["value"] = (-1e308).into();
        let mut old = serde_json::to_value(run()).unwrap();
        old["schema_version"] = 99.into();
        let (old, bad) = (old.to_string(), bad.to_string());
        type Expected = fn(&ResultsProblem) -> bool;
        let cases: [(&[u8], Expected); 4] = [
            (
                b"{\n  \"schema_version\": 1,\n",
                |p| matches!(p, ResultsProblem::NotResults { source } if source.line() == 3),
            ),
            (b"PK\x03\x04 a zip by another name", |p| matches!(p, ResultsProblem::Zip)),
            (old.as_bytes(), |p| matches!(p, ResultsProblem::Schema { found: 99 })),
            (bad.as_bytes(), |p| matches!(p, ResultsProblem::BadScore { .. })),
        ];
        for (text, expected) in cases {
            std::fs::write(&file, text).unwrap();
            // A baseline, and a results file large enough to be parsed as it is read (here: any).
            let (whole, streamed) = (load_results(&file).unwrap_err(), load_baseline(&file).unwrap_err());
            let large = load_results_reading_whole_below(&file, 0).unwrap_err();
            assert!(
                expected(&whole.problem) && expected(&streamed.problem) && expected(&large.problem),
                "{whole:?} / {streamed:?} / {large:?}"
            );
            assert_eq!(whole.to_string(), streamed.to_string());
            assert_eq!(whole.to_string(), large.to_string());
        }
        std::fs::write(&file, format!("\u{feff}{}", serde_json::to_string(&run()).unwrap())).unwrap();
        assert_eq!(load_baseline(&file).unwrap().totals, run().totals, "a byte-order mark is skipped");
        let (whole, large) = (load_results(&file).unwrap(), load_results_reading_whole_below(&file, 0).unwrap());
        assert_eq!(
            serde_json::to_string(&large).unwrap(),
            serde_json::to_string(&whole).unwrap(),
            "parsed as it is read, the run is the run read whole"
        );
    }

    #[test]
    fn a_run_read_to_render_keeps_its_texts_plain_unless_the_file_is_parsed_as_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("results.json");
        let mut run = run();
        run.suites[0].cases[0].status = CaseStatus::Failed;
        run.suites[0].cases[0].extra_mut().details = Some(crate::model::Text::from("Traceback: boom".to_string()));
        std::fs::write(&file, serde_json::to_string(&run).unwrap()).unwrap();
        let packs = |run: &Run| run.suites[0].cases[0].extra().details.as_ref().map(crate::model::Text::packs);
        let small = load_results_to_render(&file).unwrap();
        assert_eq!(packs(&small), Some(false), "a file read whole: texts kept plain for the reports");
        let large = load_results_to_render_below(&file, 0).unwrap();
        assert_eq!(packs(&large), Some(true), "a file parsed as it is read: texts packed, as an import packs them");
        assert_eq!(large.suites[0].cases[0].details().as_deref(), Some("Traceback: boom"));
        assert_eq!(serde_json::to_string(&large).unwrap(), serde_json::to_string(&small).unwrap());
        assert_eq!(packs(&load_results(&file).unwrap()), Some(true), "other readers pack, as before");
    }

    #[test]
    fn unusable_results_files_say_which_file_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_results(dir.path()).unwrap_err();
        assert_eq!(err.path, dir.path().join("results.json"));
        assert!(matches!(&err.problem, ResultsProblem::Missing(e) if e.kind() == std::io::ErrorKind::NotFound));
        std::fs::write(dir.path().join("results.json"), "{\n  \"schema_version\": 1,\n").unwrap();
        let err = load_results(dir.path()).unwrap_err();
        assert!(matches!(&err.problem, ResultsProblem::NotResults { source } if source.line() == 3), "{err:?}");
        let mut run: serde_json::Value =
            serde_json::to_value(Run::assemble(Vec::new(), time::OffsetDateTime::now_utc(), None, None)).unwrap();
        run["schema_version"] = 99.into();
        let err = parse_results(&run.to_string()).unwrap_err();
        assert!(matches!(err, ResultsProblem::Schema { found: 99 }), "{err:?}");
        let message = FcorrError::from(load_results(dir.path()).unwrap_err()).to_string();
        assert!(
            message.starts_with(&format!(
                "{}: line 3, column 0: not an fcorr results file",
                dir.path().join("results.json").display()
            )),
            "{message}"
        );
    }
}
