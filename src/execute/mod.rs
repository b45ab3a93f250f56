//! Execute: the process machinery every suite runner uses (process groups, timeouts, logs,
//! Ctrl-C), where suites run ([`ExecContext`], [`RunContext`]), and the truthfulness guards that
//! turn collected cases into a suite's status ([`apply_collected`]). Which suites run and how a
//! kind runs one is the runners' business (`crate::runners`); nothing here knows a kind.

pub(crate) mod process;

use std::path::PathBuf;
use std::time::Duration;

use crate::events::EventSink;
use crate::model::{
    Case, Diagnostic, LeftOut, ResultsSource, Severity, Suite, SuiteError, SuiteErrorKind, SuiteStatus,
};
use process::{CommandOutcome, Exit};

/// Where virtualenvs and other reusable installs live: `$FCORR_CACHE_DIR`, else the XDG cache.
pub(crate) fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("FCORR_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("fcorr");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".cache").join("fcorr");
    }
    std::env::temp_dir().join("fcorr-cache")
}

/// Where and how suites run.
#[derive(Debug, Clone)]
pub(crate) struct ExecContext {
    /// Absolute output directory (logs, work dirs).
    pub out_dir: PathBuf,
    /// Absolute cache directory (virtualenvs...).
    pub cache_dir: PathBuf,
    pub jobs: usize,
    /// Time between SIGTERM and SIGKILL on timeout.
    pub grace: Duration,
}

/// What a running suite may use: where to write, the event sink, cancellation.
pub(crate) struct RunContext<'a> {
    /// Output and cache directories, parallelism, kill grace period.
    pub exec: &'a ExecContext,
    /// Progress events (phase started/finished...) for the terminal and CI logs.
    pub events: &'a dyn EventSink,
}

impl RunContext<'_> {
    /// True once the user pressed Ctrl-C: stop starting work and return what you have, with
    /// status `cancelled`.
    pub(crate) fn cancelled(&self) -> bool {
        process::is_cancelled()
    }
}

/// Cases and evidence gathered from a test phase.
#[derive(Debug, Clone)]
pub(crate) struct Collected {
    pub cases: Vec<Case>,
    pub source: ResultsSource,
    /// True when the tool demonstrably ran (a report was written, a summary printed), even if it
    /// reported zero tests. Without it, zero cases is an error rather than "no tests".
    pub ran: bool,
    pub diagnostics: Vec<Diagnostic>,
    /// Why no results exist, when the ecosystem can tell better than "no parsable report"
    /// (e.g. pytest could not import a conftest). Used only when no case was collected.
    pub error: Option<SuiteError>,
    /// How many tests the runner said it would run, before running them; a process that then
    /// ends without a report is said to have ended before reporting that many.
    pub announced: Option<Announced>,
    /// Parts of the project the run shows it did not test (a workspace member whose files the
    /// root's framework did not collect), paths relative to the suite's root.
    pub left_out: Vec<LeftOut>,
}

/// A test count a runner printed before running the tests (pytest's `collected 3 items`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Announced {
    pub count: u64,
    /// Where the count comes from, for the message: "pytest: `collected 3 items`".
    pub evidence: String,
}

impl Collected {
    /// Nothing collected and no evidence of a run.
    pub(crate) fn nothing() -> Collected {
        Collected {
            cases: Vec::new(),
            source: ResultsSource::None,
            ran: false,
            diagnostics: Vec::new(),
            error: None,
            announced: None,
            left_out: Vec::new(),
        }
    }
}

/// A directory name safe for any suite (or task) id. An id that is already safe is its own
/// name; one that had to change gets a short hash of the id appended, so ids that clean up to
/// the same text (`fix/add` and `fix_add`) never share a directory or a log.
pub(crate) fn safe_name(id: &str) -> String {
    let cleaned: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .collect();
    let cleaned = cleaned.trim_matches('.');
    let cleaned = if cleaned.is_empty() { "suite" } else { cleaned };
    if cleaned == id {
        return id.to_string();
    }
    format!("{cleaned}-{}", id_hash(id))
}

/// The short hash of an id that [`safe_name`] appends: 8 hex digits of its SHA-256.
pub(crate) fn id_hash(id: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(id.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// A suite's log, `logs/<suite>.log` in the output directory, capped like every suite log (its
/// first and last 4 MiB kept, a marker saying how much was cut between them: a system under
/// test printing 1 GB leaves an 8 MiB log). Returns the sink and the path relative to the
/// output directory, for `Suite::log_file`; the error names the file.
pub(crate) fn suite_log(out_dir: &std::path::Path, suite_id: &str) -> Result<(process::LogSink, String), String> {
    let relative = format!("logs/{}.log", safe_name(suite_id));
    let path = out_dir.join(&relative);
    let file = std::fs::create_dir_all(out_dir.join("logs")).and_then(|_| std::fs::File::create(&path));
    match file {
        Ok(file) => Ok((process::capped_file_log(file), relative)),
        Err(e) => Err(format!("cannot create the suite log {}: {e}", path.display())),
    }
}

/// "killed by signal 11 (SIGSEGV)".
pub(crate) fn signal_text(signal: i32) -> String {
    match process::signal_name(signal) {
        Some(name) => format!("killed by signal {signal} ({name})"),
        None => format!("killed by signal {signal}"),
    }
}

/// The stop signal that interrupted the run, by name (`SIGINT`, `SIGTERM`, `SIGHUP`); `None`
/// while no stop signal came.
pub(crate) fn stop_signal_name() -> Option<String> {
    process::stop_signal()
        .map(|signal| process::signal_name(signal).map_or_else(|| format!("signal {signal}"), str::to_string))
}

/// "fcorr was interrupted by SIGINT": what stopped a command fcorr cancelled, for the phase's
/// note and the message of the test that was running.
pub(crate) fn interrupted_text() -> String {
    match stop_signal_name() {
        Some(name) => format!("fcorr was interrupted by {name}"),
        None => "fcorr was interrupted".to_string(),
    }
}

/// Applies collected cases to a suite and decides its status with the truthfulness guards.
///
/// Zero cases with no evidence the tool ran is an error; a failing exit code with no failing
/// case is an error; zero tests that ran is `no-tests`. None of these can ever pass.
pub(crate) fn apply_collected(suite: &mut Suite, collected: Collected, outcome: Option<&CommandOutcome>) {
    suite.cases = collected.cases;
    suite.results_source = collected.source;
    suite.diagnostics.extend(collected.diagnostics);
    // Named as the suite's own path is written (`packages/a`, `web/packages/a`).
    let base = suite.path.as_deref().map(|p| p.trim_end_matches('/')).filter(|p| !p.is_empty() && *p != ".");
    suite.left_out.extend(collected.left_out.into_iter().map(|l| match base {
        Some(base) => LeftOut { path: format!("{base}/{}", l.path), ..l },
        None => l,
    }));
    suite.finalize_cases();
    if matches!(suite.status, SuiteStatus::Cancelled) {
        return;
    }
    let exit = outcome.map(|o| &o.exit);
    let timed_out = matches!(exit, Some(Exit::TimedOut));
    let exit_code = exit.and_then(Exit::code);
    let counts = suite.counts;

    if timed_out {
        suite.status = SuiteStatus::Timeout;
        return;
    }
    // Death by a signal is a non-zero exit: with no failure parsed, the results cannot be trusted
    // (a report written by an atexit hook before the crash looks complete but proves nothing).
    // Checked before the zero-test rules, so a crash is never shown as "no tests"; a run that
    // produced nothing at all keeps the no-results message below, which names the signal too.
    if let Some(Exit::Signal(signal)) = exit
        && counts.failures() == 0
        && collected.error.is_none()
        && (counts.total > 0 || collected.ran)
    {
        suite.status = SuiteStatus::Error;
        suite.error = Some(SuiteError {
            kind: SuiteErrorKind::NoResults,
            message: format!(
                "the test command was {} and no failing test was reported: results are incomplete \
                 (the runner crashed or was killed, perhaps after writing its report)",
                signal_text(*signal)
            ),
            hint: Some("read the test phase's log tail".into()),
        });
        return;
    }
    if counts.total == 0 {
        if let Some(error) = collected.error {
            suite.status = SuiteStatus::Error;
            suite.error = Some(error);
        } else if collected.ran {
            suite.status = SuiteStatus::NoTests;
        } else {
            suite.status = SuiteStatus::Error;
            if outcome.is_none() {
                // An import: no command ran, so say which files gave nothing and why.
                let why: Vec<&str> =
                    suite.diagnostics.iter().filter(|d| d.source == "collect").map(|d| d.message.as_str()).collect();
                suite.error = Some(SuiteError {
                    kind: SuiteErrorKind::NoResults,
                    message: format!("no test results found in the report files: {}", why.join("; ")),
                    hint: Some("check that each file is a complete report in a format `fcorr import` reads".into()),
                });
                return;
            }
            // Name what happened: a process that ended early, not a tool that "succeeded", and
            // how many tests it had announced when the runner says so before running them.
            let before = match &collected.announced {
                Some(a) => {
                    format!("before reporting {} test{} ({})", a.count, if a.count == 1 { "" } else { "s" }, a.evidence)
                }
                None => "before reporting any test result".to_string(),
            };
            let how = match exit {
                None => "the test command produced no report or summary".to_string(),
                Some(Exit::Code(code)) => format!("the test process exited with code {code} {before}"),
                Some(Exit::Signal(signal)) => format!("the test process was {} {before}", signal_text(*signal)),
                Some(other) => format!("the test command ended: {other}, {before}"),
            };
            // What collection saw (no report at a path, a report left from an earlier run) is the
            // cause the user needs, not only a line among the warnings.
            let seen: Vec<&str> =
                suite.diagnostics.iter().filter(|d| d.source == "collect").map(|d| d.message.as_str()).collect();
            let seen = if seen.is_empty() { String::new() } else { format!(": {}", seen.join("; ")) };
            suite.error = Some(SuiteError {
                kind: SuiteErrorKind::NoResults,
                message: format!("no test results found: {how} (no parsable report or summary was written){seen}"),
                hint: Some(
                    "check the log; if the project uses another test tool, set `commands.test` and `reports`".into(),
                ),
            });
        }
        return;
    }
    if counts.ran() == 0 {
        suite.status = SuiteStatus::NoTests;
        return;
    }
    if counts.failures() > 0 {
        suite.status = SuiteStatus::Failed;
        if exit_code == Some(0) {
            suite.diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                source: crate::model::DiagnosticSource::Collect,
                message: "the test command exited 0 although failures were reported".into(),
                file: None,
                line: None,
                column: None,
            });
        }
        return;
    }
    match exit_code {
        Some(code) if code != 0 => {
            suite.status = SuiteStatus::Error;
            let coverage: Vec<&str> =
                suite.diagnostics.iter().filter(|d| d.source == "coverage").map(|d| d.message.as_str()).collect();
            if !coverage.is_empty() {
                // Every test passed; the tool failed the run on its coverage threshold. Say that.
                suite.error = Some(SuiteError {
                    kind: SuiteErrorKind::NoResults,
                    message: format!(
                        "coverage threshold not met (the test command exited with code {code}; every reported test \
                         passed): {}",
                        coverage.join("; ")
                    ),
                    hint: Some("raise the coverage or change the project's coverage threshold".into()),
                });
                return;
            }
            suite.error = Some(SuiteError {
                kind: SuiteErrorKind::NoResults,
                message: format!(
                    "the test command exited with code {code} but every reported test passed: results are incomplete \
                     (a crash, a file that failed to load, or a failure outside any test)"
                ),
                hint: Some("read the test phase's log tail".into()),
            });
        }
        _ => suite.status = SuiteStatus::Passed,
    }
    if matches!(suite.results_source, ResultsSource::None) {
        suite.results_source = ResultsSource::ConsoleText { pattern: "unknown".into() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseStatus, SuiteKind};

    fn outcome(code: i32) -> CommandOutcome {
        CommandOutcome { exit: Exit::Code(code), duration: Duration::ZERO, output: String::new(), stdout_file_cut: 0 }
    }

    fn collected(statuses: &[CaseStatus], ran: bool) -> Collected {
        Collected {
            cases: statuses
                .iter()
                .enumerate()
                .map(|(i, s)| Case { name: format!("t{i}").into(), status: *s, ..Case::default() })
                .collect(),
            source: ResultsSource::Report { format: "junit".into(), files: vec!["r.xml".into()] },
            ran,
            diagnostics: Vec::new(),
            error: None,
            announced: None,
            left_out: Vec::new(),
        }
    }

    fn status_of(c: Collected, code: i32) -> (SuiteStatus, Option<SuiteErrorKind>) {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        apply_collected(&mut suite, c, Some(&outcome(code)));
        (suite.status, suite.error.map(|e| e.kind))
    }

    #[test]
    fn guards_never_let_missing_results_pass() {
        use CaseStatus::*;
        assert_eq!(status_of(collected(&[], false), 0), (SuiteStatus::Error, Some(SuiteErrorKind::NoResults)));
        assert_eq!(status_of(collected(&[], true), 5), (SuiteStatus::NoTests, None));
        assert_eq!(status_of(collected(&[Passed], true), 1), (SuiteStatus::Error, Some(SuiteErrorKind::NoResults)));
        assert_eq!(status_of(collected(&[Skipped], true), 0), (SuiteStatus::NoTests, None));
        assert_eq!(status_of(collected(&[Passed, Failed], true), 1), (SuiteStatus::Failed, None));
        assert_eq!(status_of(collected(&[Passed], true), 0), (SuiteStatus::Passed, None));
    }

    #[test]
    fn death_by_signal_with_every_test_passed_is_an_error() {
        for signal in [11, 9] {
            let mut suite = Suite::new("s", "s", SuiteKind::Project);
            let killed = CommandOutcome { exit: Exit::Signal(signal), ..outcome(0) };
            apply_collected(&mut suite, collected(&[CaseStatus::Passed], true), Some(&killed));
            assert_eq!(suite.status, SuiteStatus::Error, "signal {signal}");
            assert!(suite.error.unwrap().message.contains(&format!("signal {signal}")));
        }
        // A crash is never "no tests": neither when the tool reported zero tests nor all skipped.
        for (statuses, ran) in [(&[][..], true), (&[CaseStatus::Skipped][..], true)] {
            let mut suite = Suite::new("s", "s", SuiteKind::Project);
            let killed = CommandOutcome { exit: Exit::Signal(11), ..outcome(0) };
            apply_collected(&mut suite, collected(statuses, ran), Some(&killed));
            assert_eq!(suite.status, SuiteStatus::Error, "{statuses:?}");
            assert!(suite.error.unwrap().message.contains("signal 11 (SIGSEGV)"));
        }
        // A failure parsed is the truth the report tells: the suite failed.
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        let killed = CommandOutcome { exit: Exit::Signal(11), ..outcome(0) };
        apply_collected(&mut suite, collected(&[CaseStatus::Passed, CaseStatus::Failed], true), Some(&killed));
        assert_eq!(suite.status, SuiteStatus::Failed);
    }

    #[test]
    fn safe_names() {
        assert_eq!(safe_name("calc-bench_1.x"), "calc-bench_1.x");
        let (slash, under) = (safe_name("fix/add"), safe_name("fix_add"));
        assert!(slash.starts_with("fix_add-") && slash.len() == "fix_add-".len() + 8, "{slash}");
        assert_eq!(under, "fix_add");
        assert_ne!(safe_name("s/1"), safe_name("s 1"));
        assert!(safe_name("sdk/sample one").starts_with("sdk_sample_one-"));
        assert!(safe_name("..").starts_with("suite-"));
        assert_eq!(safe_name("sdk/sample one"), safe_name("sdk/sample one"), "stable");
    }
}
