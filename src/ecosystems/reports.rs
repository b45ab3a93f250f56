//! The default collector: the report files a test phase declared (or an import suite names),
//! read with the parsers in `collect` into the cases and evidence a suite is judged on. It lives
//! with the ecosystems, not the parsers, so parsers stay bytes → cases and know no ecosystem.

use std::ops::ControlFlow;
use std::path::Path;

use super::{CollectContext, Collected};
use crate::collect::{
    DECLARED_FAILURES_CASE, DECLARED_TESTS_CASE, ParseOptions, UNREADABLE_CASE, expand_reports, parse_file,
    parse_file_in_batches, report_excludes,
};
use crate::model::{Case, CaseStatus, Diagnostic, ResultsSource, Severity};

/// Default collector: parses every planned report file into cases, each report then located by
/// the ecosystems (see [`read_reports`]).
pub(crate) fn collect_reports(ctx: &CollectContext<'_>) -> Collected {
    read_reports(ctx, None, None, None)
}

/// Collector of an import suite (no command ran): its globs never reach into fcorr's output
/// directory `out_dir`, where the run's other suites write their reports while this one reads
/// them (before any `results.json` there marks it as fcorr's).
pub(crate) fn collect_import(ctx: &CollectContext<'_>, out_dir: &Path) -> Collected {
    read_reports(ctx, Some(out_dir), None, None)
}

/// [`collect_import`], handing the cases to `batch`, located, as a format that can tell they are
/// final reads them (`collect::parse_file_in_batches`); the cases collected are those after the
/// last batch. A file found broken after batches went out is an error diagnostic, as it is
/// without batches, and `ran` stays false when the only file named is such a file: the caller
/// then drops that file's batches. The `[unreadable report]` case of a file that could not be
/// read goes to `unreadable`, never into the cases: only the caller, which reads one file at a
/// time, knows whether other files gave results (see [`read_reports`]).
pub(crate) fn collect_import_in_batches(
    ctx: &CollectContext<'_>,
    out_dir: &Path,
    batch: &mut dyn FnMut(Vec<Case>) -> ControlFlow<()>,
    unreadable: &mut Vec<Case>,
) -> Collected {
    read_reports(ctx, Some(out_dir), Some(batch), Some(unreadable))
}

/// Parses every report file `ctx` names, then has every ecosystem's `locate` fix each one's cases;
/// `import_out` is the output directory of an import suite.
///
/// Every ecosystem, not only the suite's: each fixes only the formats it owns, and a report is not
/// always read by the ecosystem that owns its format (a `command` suite running `cargo test`, an
/// import of `go test -json`), yet its cases need the same files.
fn read_reports(
    ctx: &CollectContext<'_>,
    import_out: Option<&Path>,
    mut batch: Option<&mut dyn FnMut(Vec<Case>) -> ControlFlow<()>>,
    unreadable_out: Option<&mut Vec<Case>>,
) -> Collected {
    let ecosystems = super::ECOSYSTEMS;
    let options = ParseOptions { root: Some(ctx.root.to_path_buf()) };
    let mut collected = Collected::nothing();
    let mut files = Vec::new();
    let mut formats = Vec::new();
    let mut unreadable = Vec::new();
    // Checked with the config (`runners::check_reports`), so an error here is not expected; if
    // one comes, it is said and nothing is left out rather than the suite failing.
    let excludes =
        report_excludes(ctx.reports.iter().map(|spec| spec.pattern.as_str()), ctx.root).unwrap_or_else(|e| {
            collected.diagnostics.push(collect_diagnostic(Severity::Warning, ctx.root, e.to_string()));
            globset::GlobSet::empty()
        });
    let planned: Vec<_> = ctx
        .reports
        .iter()
        .filter(|spec| !spec.pattern.starts_with('!'))
        .map(|spec| {
            let found = expand_reports(&spec.pattern, ctx.root, import_out);
            let matched = found.len();
            let mut paths: Vec<_> = found.into_iter().filter(|path| !excludes.is_match(path)).collect();
            if let Some(started) = ctx.started {
                let stale = leave_out_stale(&mut paths, started);
                if let Some(note) = stale_note(&stale, started, &spec.pattern, ctx) {
                    collected.diagnostics.push(note);
                }
            }
            (spec, matched, paths)
        })
        .collect();
    // Read whole (no batches): every file at once, one per core, then taken in order below.
    let mut read_at_once = match batch {
        Some(_) => Vec::new(),
        None => {
            let files: Vec<_> = planned
                .iter()
                .flat_map(|(spec, _, paths)| paths.iter().map(|path| (path.as_path(), spec.format.as_deref())))
                .collect();
            parse_files(&files, &options)
        }
    }
    .into_iter();
    for (spec, matched, paths) in planned {
        if paths.is_empty() {
            let message = match import_out {
                Some(_) if matched > 0 => {
                    format!("every report file matching {} ({matched}) is excluded by a `!` pattern", spec.pattern)
                }
                Some(_) => format!("no report file matches {}", spec.pattern),
                None => format!("the test command wrote no report at {}", spec.pattern),
            };
            collected.diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                source: "collect".into(),
                message,
                file: None,
                line: None,
                column: None,
            });
        }
        for path in paths {
            let parsed = match batch.as_mut() {
                Some(batch) => {
                    parse_file_in_batches(&path, spec.format.as_deref(), &options, &mut |format, mut part| {
                        for ecosystem in ecosystems {
                            ecosystem.locate(format, &mut part, ctx.root);
                        }
                        batch(part.cases)
                    })
                }
                // One result per file, in order: none is missing.
                None => read_at_once.next().unwrap_or_else(|| parse_file(&path, spec.format.as_deref(), &options)),
            };
            match parsed {
                Ok((format, mut report)) => {
                    // The parser cannot name its file; the case must, or a reader cannot tell
                    // which report lost its failures.
                    for case in report.cases.iter_mut() {
                        if let Some(name) =
                            [DECLARED_FAILURES_CASE, DECLARED_TESTS_CASE].into_iter().find(|n| case.name == *n)
                        {
                            let shown = display_path(&path, ctx.root, ctx.work_dir);
                            case.name = format!("{name} {shown}").into();
                        }
                    }
                    for ecosystem in ecosystems {
                        ecosystem.locate(&format, &mut report, ctx.root);
                    }
                    collected.ran = true;
                    if collected.cases.is_empty() {
                        // One big report: move its cases rather than copy them.
                        collected.cases = report.cases;
                    } else {
                        collected.cases.extend(report.cases);
                    }
                    for error in report.errors {
                        collected.diagnostics.push(collect_diagnostic(Severity::Error, &path, error));
                    }
                    for warning in report.warnings {
                        collected.diagnostics.push(collect_diagnostic(Severity::Warning, &path, warning));
                    }
                    if !formats.contains(&format) {
                        formats.push(format);
                    }
                    files.push(display_path(&path, ctx.root, ctx.work_dir));
                }
                Err(e) => {
                    let shown = display_path(&path, ctx.root, ctx.work_dir);
                    unreadable.push(
                        Case {
                            name: format!("{UNREADABLE_CASE} {shown}").into(),
                            status: CaseStatus::Error,
                            ..Case::default()
                        }
                        .with_message(Some(format!(
                            "{}: its results are unknown (if it is not a test report, leave it out: `!{shown}`)",
                            e.message
                        ))),
                    );
                    collected.diagnostics.push(collect_diagnostic(Severity::Error, &path, e.message));
                }
            }
        }
    }
    // A file that could not be read among files that could: the suite must not pass on the others
    // (its results are unknown), so it gets an error case naming the file, as a report cut short
    // does. With no file read at all the suite is an error already ("no test results found").
    match unreadable_out {
        Some(out) => out.extend(unreadable),
        None if collected.ran => collected.cases.extend(unreadable),
        None => {}
    }
    if !files.is_empty() {
        collected.source = ResultsSource::Report { format: formats.join("+"), files };
    }
    collected
}

/// Parses `files` (each with the format named for it, if any), on as many threads as the machine
/// runs at once and there are files, each thread taking the next file not yet taken; the results
/// in the order of `files`.
fn parse_files(files: &[(&Path, Option<&str>)], options: &ParseOptions) -> Vec<crate::collect::Parsed> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parsed = crate::parallel::in_order(files, threads, |(path, format)| parse_file(path, *format, options));
    // Every slot is filled: a panic in a thread is passed on by the scope. Read again if not.
    parsed
        .into_iter()
        .zip(files)
        .map(|(parsed, (path, format))| parsed.unwrap_or_else(|| parse_file(path, *format, options)))
        .collect()
}

/// How much older than the test phase a report file must be to be called stale: file systems that
/// keep whole (or even) seconds, and a little clock skew, must not make this run's report old.
const STALE_SLACK: std::time::Duration = std::time::Duration::from_secs(2);

/// Takes out of `paths` the files last written before the test phase began (less
/// [`STALE_SLACK`]), and returns them with their times: a report the test command did not write
/// this time (it crashed first, or wrote elsewhere) is an earlier run's, and reading it would
/// report that run's results as this one's. A file dated later than now (plus the slack) was
/// not written by this run either: a date in the future is set on purpose (`touch -d`) or comes
/// from another machine's clock. A file whose time cannot be read stays.
fn leave_out_stale(
    paths: &mut Vec<std::path::PathBuf>,
    started: std::time::SystemTime,
) -> Vec<(std::path::PathBuf, std::time::SystemTime)> {
    let cutoff = started.checked_sub(STALE_SLACK).unwrap_or(started);
    let latest = std::time::SystemTime::now() + STALE_SLACK;
    let mut stale = Vec::new();
    paths.retain(|path| match std::fs::metadata(path).and_then(|m| m.modified()) {
        Ok(modified) if modified < cutoff || modified > latest => {
            stale.push((path.clone(), modified));
            false
        }
        _ => true,
    });
    stale
}

/// The warning naming the report files left out as stale (a few of them, and the newest one's time).
fn stale_note(
    stale: &[(std::path::PathBuf, std::time::SystemTime)],
    started: std::time::SystemTime,
    pattern: &str,
    ctx: &CollectContext<'_>,
) -> Option<Diagnostic> {
    let newest = stale.iter().map(|(_, t)| *t).max()?;
    let ago = |t: std::time::SystemTime| match started.duration_since(t) {
        Ok(before) => format!("{} before", crate::text::format_duration(before.as_secs_f64() * 1000.0)),
        Err(after) => format!("{} after", crate::text::format_duration(after.duration().as_secs_f64() * 1000.0)),
    };
    let one = stale.len() == 1;
    // A benchmark task's copy dates the reports it already held to 1970, so only a fresh write
    // counts: "dated 498872h before" would be true and say nothing.
    let when = if newest == std::time::SystemTime::UNIX_EPOCH {
        format!(
            "{} already in the copy before the test command started (fcorr dates such files 1970, so only a \
             fresh write is read)",
            if one { "it was" } else { "they were" }
        )
    } else {
        format!(
            "dated {} the test command started, so {} left from an earlier run",
            ago(newest),
            if one { "it is" } else { "they are" }
        )
    };
    let shown: Vec<String> = stale.iter().take(3).map(|(p, _)| display_path(p, ctx.root, ctx.work_dir)).collect();
    let more =
        if stale.len() > shown.len() { format!(" and {} more", stale.len() - shown.len()) } else { String::new() };
    Some(Diagnostic {
        severity: Severity::Warning,
        source: "collect".into(),
        message: format!(
            "{}{more} (matching {pattern}) {} not written by this run: {when} and not read; have the test \
             command write its report afresh (or delete it before the run); to read reports that exist \
             before the run, use an import suite (kind = \"import\")",
            shown.join(", "),
            if one { "was" } else { "were" },
        ),
        file: None,
        line: None,
        column: None,
    })
}

fn collect_diagnostic(severity: Severity, path: &Path, message: String) -> Diagnostic {
    Diagnostic {
        severity,
        source: "collect".into(),
        message: format!("{}: {message}", path.display()),
        file: None,
        line: None,
        column: None,
    }
}

fn display_path(path: &Path, root: &Path, work_dir: &Path) -> String {
    path.strip_prefix(work_dir)
        .or_else(|_| path.strip_prefix(root))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| path.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::collect::ReportSpec;
    use crate::ecosystems::Ecosystem;
    use crate::ecosystems::command::CommandRunner;
    use crate::execute::process::{CommandOutcome, Exit};

    /// Report files read at once, one per core, are the files read one after the other, in order:
    /// every fixture report in every format, a broken one, an empty one and one that is none.
    #[test]
    fn a_report_dated_in_the_past_or_the_future_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let now = std::time::SystemTime::now();
        let hour = std::time::Duration::from_secs(3600);
        let mut paths = Vec::new();
        for (name, at) in [("fresh.xml", now), ("old.xml", now - hour), ("future.xml", now + hour)] {
            let path = dir.path().join(name);
            std::fs::write(&path, "").unwrap();
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(at).unwrap();
            paths.push(path);
        }
        let stale = leave_out_stale(&mut paths, now - std::time::Duration::from_secs(1));
        assert_eq!(paths, [dir.path().join("fresh.xml")]);
        assert_eq!(stale.len(), 2);
    }

    #[test]
    fn files_read_at_once_are_the_files_read_in_turn() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports");
        let dir = tempfile::tempdir().unwrap();
        let mut paths: Vec<_> = ignore::WalkBuilder::new(&fixtures)
            .build()
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| e.into_path())
            .collect();
        paths.sort();
        for (name, text) in
            [("broken.xml", "<testsuite><testcase name=\"a\">x & y"), ("empty.xml", ""), ("notes.txt", "hi")]
        {
            std::fs::write(dir.path().join(name), text).unwrap();
            paths.insert(paths.len() / 2, dir.path().join(name));
        }
        assert!(paths.len() > 20, "the report fixtures moved");
        let files: Vec<_> = paths.iter().map(|p| (p.as_path(), None)).collect();
        let options = ParseOptions { root: Some(fixtures.clone()) };
        let in_turn: Vec<_> = files.iter().map(|(path, format)| parse_file(path, *format, &options)).collect();
        assert_eq!(format!("{:?}", parse_files(&files, &options)), format!("{in_turn:?}"));
    }

    /// The file and line of each case a `command` suite at fixture `fixture` collects from a
    /// report holding `text` in `format` (written outside the fixture).
    fn command_suite_locates(fixture: &str, text: &str, format: &str) -> Vec<(Option<String>, Option<u32>)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(fixture);
        let out = tempfile::tempdir().unwrap();
        let report = out.path().join("report.txt");
        std::fs::write(&report, text).unwrap();
        let reports = [ReportSpec::file(&report, format)];
        let outcome =
            CommandOutcome { exit: Exit::Code(1), duration: Duration::ZERO, output: String::new(), stdout_file_cut: 0 };
        let ctx =
            CollectContext { root: &root, work_dir: out.path(), reports: &reports, outcome: &outcome, started: None };
        CommandRunner.collect(&ctx).cases.into_iter().map(|c| (c.file.as_deref().map(String::from), c.line)).collect()
    }

    /// A `command` suite whose command runs `cargo test` or `go test -json`: no Rust or Go suite
    /// reads the output, yet its cases get the files a Rust or Go suite would give them.
    #[test]
    fn a_command_suite_gets_the_owning_ecosystems_locations() {
        let cargo = "     Running unittests src/lib.rs (target/debug/deps/beta_util-1122334455667788)\n\n\
                     running 1 test\ntest tests::capitalizes ... ok\n\n\
                     test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let want = [(Some("crates/beta-util/src/lib.rs".to_string()), None)];
        assert_eq!(command_suite_locates("rust-workspace", cargo, "libtest"), want);

        let go = r#"{"Action":"run","Package":"example.com/fcorr/gomixed/mathx","Test":"TestClamp"}
{"Action":"pass","Package":"example.com/fcorr/gomixed/mathx","Test":"TestClamp","Elapsed":0}
{"Action":"pass","Package":"example.com/fcorr/gomixed/mathx","Elapsed":0.01}
"#;
        let want = [(Some("mathx/mathx_test.go".to_string()), Some(22))];
        assert_eq!(command_suite_locates("go-mixed", go, "go-test-json"), want);
    }
}
