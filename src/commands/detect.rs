//! `fcorr detect [PATH]`: which ecosystem and framework a project is, the markers and confidence
//! behind it, and why the winner won. Without a path: each project suite of ./fcorr.toml when
//! there is one, else the current directory.

use std::path::PathBuf;

use clap::Args;

use crate::ecosystems::{self, ProjectFiles};
use crate::errors::FcorrError;

/// Arguments of `fcorr detect`.
#[derive(Debug, Args)]
pub struct DetectArgs {
    /// Project directory (default: the project suites of ./fcorr.toml, else the current directory).
    pub path: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Consider only this runner (python, node, go, rust, java, command).
    #[arg(long)]
    pub runner: Option<String>,
}

/// Runs detection and prints the result; exit 0 when something was detected in every project,
/// 2 otherwise.
pub fn execute(args: DetectArgs) -> Result<i32, FcorrError> {
    let paths = match &args.path {
        Some(path) => vec![path.clone()],
        None => default_paths()?,
    };
    let mut code = 0;
    for path in &paths {
        code = code.max(detect_one(path, &args)?);
    }
    Ok(code)
}

/// The project directories of ./fcorr.toml (or ./.github/fcorr.toml), else `.`.
fn default_paths() -> Result<Vec<PathBuf>, FcorrError> {
    let cwd = std::env::current_dir().map_err(FcorrError::Cwd)?;
    let Some(file) = crate::pipeline::find_config(None, &[], false, &cwd) else { return Ok(vec![PathBuf::from(".")]) };
    let config = crate::config::Config::load(&file, &crate::kinds::KINDS)?;
    let paths: Vec<PathBuf> = config
        .suites
        .iter()
        .filter(|s| s.kind == "project")
        .map(|s| config.base_dir.join(s.path.as_deref().unwrap_or(std::path::Path::new("."))))
        .collect();
    Ok(if paths.is_empty() { vec![PathBuf::from(".")] } else { paths })
}

/// Detection in one directory, printed; 0 when something was detected, 2 otherwise.
fn detect_one(path: &std::path::Path, args: &DetectArgs) -> Result<i32, FcorrError> {
    let files = ProjectFiles::scan(path).map_err(|e| FcorrError::Usage(format!("{}: {e}", path.display())))?;
    let report = ecosystems::detect_best(&files, args.runner.as_deref(), None);
    if args.json {
        let candidates: Vec<serde_json::Value> = report
            .candidates
            .iter()
            .map(|c| serde_json::json!({ "detection": c.detection, "problem": c.problem }))
            .collect();
        let value = serde_json::json!({
            "path": path,
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
                outln!("{}: {} / {} (confidence {:.2})", path.display(), d.language, d.framework, d.confidence);
                if let Some(pm) = &d.package_manager {
                    outln!("  package manager: {pm}");
                }
                outln!("  markers: {}", d.markers.join(", "));
                if let Some(problem) = &best.problem {
                    outln!("  problem: {problem}");
                }
            }
            None => outln!("{}: nothing detected", path.display()),
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
