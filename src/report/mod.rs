//! Report: pure renderings of a [`Run`] (with its comparison) into files people and tools read.
//!
//! Each format is one file implementing [`Reporter`], registered in [`reporters`]. Rendering
//! never touches the network or the run; writing is done here, once, for every selected format.

use std::path::{Path, PathBuf};

use crate::errors::FcorrError;
use crate::model::Run;

pub mod budget;
pub mod ctrf;
pub mod filters;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod terminal;

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
}

/// An output format.
pub trait Reporter: Send + Sync {
    /// Format name for `--format` (`json`, `junit`, `ctrf`, `summary`, `comment`, `html`).
    fn name(&self) -> &'static str;

    /// File name written in the output directory.
    fn file_name(&self) -> &'static str;

    /// Renders the run.
    fn render(&self, run: &Run, env: &ReportEnv) -> Result<Vec<u8>, String>;
}

/// Every file format, in writing order.
pub fn reporters() -> Vec<Box<dyn Reporter>> {
    vec![
        Box::new(json::ResultsJson),
        Box::new(junit::JunitXml),
        Box::new(ctrf::CtrfJson),
        Box::new(markdown::SummaryMarkdown),
        Box::new(markdown::CommentMarkdown),
        Box::new(html::HtmlPage),
    ]
}

/// Names of every format, for help and errors.
pub fn format_names() -> Vec<&'static str> {
    reporters().iter().map(|r| r.name()).collect()
}

/// Checks `--format` values before anything runs.
pub fn validate_formats(formats: &[String]) -> Result<(), FcorrError> {
    let known = format_names();
    for format in formats {
        if format != "all" && !known.contains(&format.as_str()) {
            return Err(FcorrError::Usage(format!("unknown format `{format}` (known: {}, all)", known.join(", "))));
        }
    }
    Ok(())
}

/// Writes every selected format into `out`; returns the paths written.
///
/// `results.json` is always written, first, so nothing computed is lost if a later format fails;
/// a failing format is reported and the others are still written.
pub fn write_all(run: &Run, env: &ReportEnv, out: &Path, formats: &[String]) -> (Vec<PathBuf>, Vec<String>) {
    let mut written = Vec::new();
    let mut problems = Vec::new();
    if let Err(e) = std::fs::create_dir_all(out) {
        problems.push(format!("cannot create {}: {e}", out.display()));
        return (written, problems);
    }
    let all = formats.is_empty() || formats.iter().any(|f| f == "all");
    for reporter in reporters() {
        let wanted = all || reporter.name() == "json" || formats.iter().any(|f| f == reporter.name());
        if !wanted {
            continue;
        }
        let path = out.join(reporter.file_name());
        match reporter.render(run, env) {
            Ok(bytes) => match write_atomic(&path, &bytes) {
                Ok(()) => written.push(path),
                Err(e) => problems.push(format!("cannot write {}: {e}", path.display())),
            },
            Err(e) => problems.push(format!("{} report failed: {e}", reporter.name())),
        }
    }
    (written, problems)
}

/// Writes through a temporary file and a rename, so readers never see half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Reads a saved `results.json`.
pub fn load_results(path: &Path) -> Result<Run, FcorrError> {
    let path = if path.is_dir() { path.join("results.json") } else { path.to_path_buf() };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| FcorrError::Input { file: path.clone(), message: format!("cannot read it: {e}") })?;
    let run: Run = serde_json::from_str(&text).map_err(|e| FcorrError::Input {
        file: path.clone(),
        message: format!("line {}, column {}: not an fcorr results file: {e}", e.line(), e.column()),
    })?;
    if run.schema_version != crate::model::SCHEMA_VERSION {
        return Err(FcorrError::Input {
            file: path,
            message: format!(
                "schema version {} is not supported (this fcorr reads version {})",
                run.schema_version,
                crate::model::SCHEMA_VERSION
            ),
        });
    }
    Ok(run)
}
