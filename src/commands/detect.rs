//! `fcorr detect PATH`: which ecosystem and framework a project is, the markers and confidence
//! behind it, and why the winner won.

use std::path::PathBuf;

use clap::Args;

use crate::ecosystems::{self, ProjectFiles};
use crate::errors::FcorrError;

/// Arguments of `fcorr detect`.
#[derive(Debug, Args)]
pub struct DetectArgs {
    /// Project directory.
    pub path: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Consider only this runner (python, node, go, rust, java, command).
    #[arg(long)]
    pub runner: Option<String>,
}

/// Runs detection and prints the result; exit 0 when something was detected, 2 otherwise.
pub fn execute(args: DetectArgs) -> Result<i32, FcorrError> {
    let files =
        ProjectFiles::scan(&args.path).map_err(|e| FcorrError::Usage(format!("{}: {e}", args.path.display())))?;
    let report = ecosystems::detect_best(&files, args.runner.as_deref(), None);
    if args.json {
        let candidates: Vec<serde_json::Value> = report
            .candidates
            .iter()
            .map(|c| serde_json::json!({ "detection": c.detection, "problem": c.problem }))
            .collect();
        let value = serde_json::json!({
            "path": args.path,
            "best": report.best.as_ref().map(|c| &c.detection),
            "problem": report.best.as_ref().and_then(|c| c.problem.clone()),
            "candidates": candidates,
            "explanation": report.explanation,
            "files_scanned": files.files.len(),
            "truncated": report.truncated,
        });
        // A json! value always serialises.
        outln!("{}", serde_json::to_string_pretty(&value).expect("json value"));
    } else {
        match &report.best {
            Some(best) => {
                let d = &best.detection;
                outln!("{}: {} / {} (confidence {:.2})", args.path.display(), d.language, d.framework, d.confidence);
                if let Some(pm) = &d.package_manager {
                    outln!("  package manager: {pm}");
                }
                outln!("  markers: {}", d.markers.join(", "));
                if let Some(problem) = &best.problem {
                    outln!("  problem: {problem}");
                }
            }
            None => outln!("{}: nothing detected", args.path.display()),
        }
        if report.candidates.len() > 1 {
            outln!("  other candidates:");
            for c in report.candidates.iter().skip(1) {
                outln!("    {} / {} ({:.2})", c.detection.language, c.detection.framework, c.detection.confidence);
            }
        }
        outln!("  why: {}", report.explanation);
        if report.truncated {
            outln!("  note: the project has more files than detection lists; only the first were considered");
        }
    }
    Ok(if report.best.is_some() { 0 } else { 2 })
}
