//! `fcorr compare`: compare a saved run with a baseline and print the changes.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use crate::compare::{Change, Comparison};
use crate::errors::FcorrError;

/// Arguments of `fcorr compare`.
#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    #[command(flatten)]
    pub results: super::ResultsArg,
    /// Baseline: a results.json, a directory holding one, or an artifact zip.
    #[arg(long, value_name = "FILE")]
    pub baseline: PathBuf,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// Store the comparison in the results file (so reports and `fcorr publish` show deltas).
    #[arg(long)]
    pub write: bool,
}

fn signed(x: Option<f64>) -> String {
    x.filter(|d| d.is_finite()).map(|d| format!("{d:+.2}")).unwrap_or_else(|| "n/a".into())
}

/// Plain-text rendering of a comparison.
pub fn render(c: &Comparison) -> String {
    let mut out = String::new();
    let commit = c.baseline.commit.as_deref().unwrap_or("unknown commit");
    let _ = writeln!(out, "baseline: {} ({commit})", c.baseline.source);
    let _ = writeln!(
        out,
        "score {}  pass rate {}  tests {:+}  passed {:+}  failed {:+}  skipped {:+}  time {:+} ms",
        signed(c.score_delta),
        signed(c.pass_rate_delta),
        c.counts_delta.total,
        c.counts_delta.passed,
        c.counts_delta.failed + c.counts_delta.error + c.counts_delta.timeout,
        c.counts_delta.skipped,
        c.duration_delta_ms
    );
    for caution in c.cautions() {
        let _ = writeln!(out, "warning: {caution}");
    }
    for s in &c.suites {
        let what = if s.added {
            "added".to_string()
        } else if s.removed {
            let (tests, failing) = s.gone_counts();
            format!("removed ({tests} tests in the baseline, {failing} failing there)")
        } else {
            format!("score {}", signed(s.score_delta))
        };
        let _ = writeln!(out, "  suite {}: {what}", s.name);
    }
    for change in [
        Change::NewFailure,
        Change::Fixed,
        Change::StillFailing,
        Change::Flaky,
        Change::NewlySkipped,
        Change::Added,
        Change::Removed,
    ] {
        let cases: Vec<_> = c.with_change(change).collect();
        if cases.is_empty() {
            continue;
        }
        let label = serde_json::to_value(change).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let _ = writeln!(out, "{label} ({}):", cases.len());
        for case in cases.iter().take(50) {
            let _ = writeln!(out, "  {} [{}]", case.name, case.suite_id);
        }
        if cases.len() > 50 {
            let _ = writeln!(out, "  ... and {} more", cases.len() - 50);
        }
    }
    out
}

/// `fcorr compare`.
pub fn execute(args: CompareArgs) -> Result<i32, FcorrError> {
    let results = args.results.path();
    let mut run = crate::report::load_results(&results)?;
    let base = crate::github::baseline::load_path(&args.baseline).map_err(super::shared::baseline_error)?;
    let comparison = crate::compare::compare(&run, &base.run, base.info);
    if args.json {
        // Plain data always serialises.
        outln_raw!("{}", serde_json::to_string_pretty(&comparison).expect("comparison serialises"));
    } else {
        out!("{}", render(&comparison));
    }
    if args.write {
        // Keeps the list length and thresholds the run was made with.
        let settings = run.timing.as_ref().map(|t| t.settings).unwrap_or_default();
        crate::timing::attach(&mut run, Some(&base.run), &settings);
        run.comparison = Some(comparison);
        let path = if results.is_dir() { results.join("results.json") } else { results.clone() };
        let mut bytes = serde_json::to_vec_pretty(&run).expect("run serialises");
        bytes.push(b'\n');
        crate::report::write_atomic(&path, &bytes)?;
    }
    Ok(0)
}
