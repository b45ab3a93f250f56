//! `[report] results-folder`: keeps every run in a folder as `results_YYYY-MM-DD-HHMM.json` and
//! `report_YYYY-MM-DD-HHMM.md`, for teams that compare runs by hand. Copies of the
//! files the run wrote; an existing dated file is never replaced.

use std::path::{Path, PathBuf};

use crate::fsio::{Mode, WriteError, WriteStep};

/// Copies `results.json` and `summary.md` from `out_dir` into `folder` under names stamped with
/// `started` (RFC 3339, the run's start). Returns the files written, or what went wrong.
pub(crate) fn keep(out_dir: &Path, folder: &Path, started: &str) -> Result<Vec<PathBuf>, KeepError> {
    let at = time::OffsetDateTime::parse(started, &time::format_description::well_known::Rfc3339)
        .map_err(|source| KeepError::StartTime { started: started.to_string(), source })?;
    let stamp =
        format!("{:04}-{:02}-{:02}-{:02}{:02}", at.year(), u8::from(at.month()), at.day(), at.hour(), at.minute());
    std::fs::create_dir_all(folder).map_err(|source| KeepError::Create { path: folder.to_path_buf(), source })?;
    let mut written = Vec::new();
    for (from, to) in [("results.json", format!("results_{stamp}.json")), ("summary.md", format!("report_{stamp}.md"))]
    {
        let source = out_dir.join(from);
        if !source.is_file() {
            continue;
        }
        let target = folder.join(to);
        let mut input =
            std::fs::File::open(&source).map_err(|e| KeepError::Read { path: source.clone(), source: e })?;
        // Whole or not at all: a later `fcorr compare` may read the copy.
        let copied = crate::fsio::write_atomic_with(&target, Mode::CREATE_NEW, |w| {
            std::io::copy(&mut input, w).map(drop).map_err(|source| WriteError {
                path: target.clone(),
                action: WriteStep::Write,
                source,
            })
        });
        copied.map_err(|e| match e.action {
            WriteStep::Exists => KeepError::Taken { path: target.clone(), source: e.source },
            _ => KeepError::Write { path: target.clone(), source: e.source },
        })?;
        written.push(target);
    }
    Ok(written)
}

/// Why a run could not be kept in the results folder (a warning: the run itself is written).
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeepError {
    #[error("the run's start time `{started}` does not parse: {source}")]
    StartTime { started: String, source: time::error::Parse },
    #[error("cannot create {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    /// The dated file exists (or cannot be created); it is never replaced.
    #[error("{}: {source} (a run of the same minute is kept already; nothing replaced)", path.display())]
    Taken { path: PathBuf, source: std::io::Error },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_kept_under_dated_names_and_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("results.json"), "{}").unwrap();
        std::fs::write(out.join("summary.md"), "# run").unwrap();
        let folder = dir.path().join("results");
        let written = keep(&out, &folder, "2026-11-23T14:05:09Z").unwrap();
        assert_eq!(written, [folder.join("results_2026-11-23-1405.json"), folder.join("report_2026-11-23-1405.md")]);
        assert_eq!(std::fs::read_to_string(&written[1]).unwrap(), "# run");
        std::fs::write(out.join("summary.md"), "# another run").unwrap();
        let err = keep(&out, &folder, "2026-11-23T14:05:59Z").unwrap_err();
        assert!(matches!(&err, KeepError::Taken { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists));
        let err = err.to_string();
        assert!(err.contains("results_2026-11-23-1405.json") && err.contains("nothing replaced"), "{err}");
        assert_eq!(std::fs::read_to_string(&written[1]).unwrap(), "# run");
    }
}
