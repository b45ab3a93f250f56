//! The default collector: the report files a test phase declared (or an import suite names),
//! read with the parsers in `collect` into the cases and evidence a suite is judged on. It lives
//! with the ecosystems, not the parsers, so parsers stay bytes → cases and know no ecosystem.

use std::path::Path;

use super::{CollectContext, Collected};
use crate::collect::{ParseOptions, expand_reports, parse_file};
use crate::model::{Case, Diagnostic, ResultsSource, Severity};

/// Fixes the file and line of one report's cases, given its format and the suite's root.
pub(crate) type Locate<'a> = dyn Fn(&str, &mut [Case], &Path) + 'a;

/// Default collector: parses every planned report file into cases, with no ecosystem's locating.
pub(crate) fn collect_reports(ctx: &CollectContext<'_>) -> Collected {
    read_reports(ctx, None, &|_, _, _| {})
}

/// [`collect_reports`], then `locate` on each report's cases (an ecosystem's own fixing).
pub(crate) fn collect_located(ctx: &CollectContext<'_>, locate: &Locate<'_>) -> Collected {
    read_reports(ctx, None, locate)
}

/// Collector of an import suite (no command ran): its globs never reach into fcorr's output
/// directory `out_dir`, where the run's other suites write their reports while this one reads
/// them (before any `results.json` there marks it as fcorr's).
///
/// No ecosystem ran the tool, so every ecosystem's `locate` sees each report: each fixes only
/// the formats it owns (a `go test -json` import gets its files from the Go modules under root).
pub(crate) fn collect_import(ctx: &CollectContext<'_>, out_dir: &Path) -> Collected {
    let ecosystems = super::registry();
    read_reports(ctx, Some(out_dir), &|format, cases, root| {
        for ecosystem in &ecosystems {
            ecosystem.locate(format, cases, root);
        }
    })
}

/// Parses every report file `ctx` names, then `locate`s each one's cases; `import_out` is the
/// output directory of an import suite.
fn read_reports(ctx: &CollectContext<'_>, import_out: Option<&Path>, locate: &Locate<'_>) -> Collected {
    let options = ParseOptions { root: Some(ctx.root.to_path_buf()) };
    let mut collected = Collected::nothing();
    let mut files = Vec::new();
    let mut formats = Vec::new();
    for spec in ctx.reports {
        let paths = expand_reports(&spec.pattern, ctx.root, import_out);
        if paths.is_empty() {
            let message = match import_out {
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
            match parse_file(&path, spec.format.as_deref(), &options) {
                Ok((format, mut report)) => {
                    locate(&format, &mut report.cases, ctx.root);
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
                Err(e) => collected.diagnostics.push(collect_diagnostic(Severity::Error, &path, e.message)),
            }
        }
    }
    if !files.is_empty() {
        collected.source = ResultsSource::Report { format: formats.join("+"), files };
    }
    collected
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
