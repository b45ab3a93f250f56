//! The in-progress marker: a file a command writes into its output directory before it starts
//! (running, importing, merging) and removes only once every report it had to write is in place.
//!
//! Each report is written atomically (temp + rename), but a run that stops part-way (a full
//! disk, SIGTERM, SIGKILL, a crash) leaves the reports it did not write as they were: an earlier
//! run's `results.json` saying PASS would then read as this run's. While the marker is present,
//! the directory's reports are not a complete, current run, and `fcorr publish` refuses them.
//! A marker (written first, removed last) survives every way a run can stop, SIGKILL included,
//! which deleting the old reports first would too, but the marker also keeps the previous
//! results readable for what a run reads from its own output directory (its history).

use std::path::{Path, PathBuf};

use crate::errors::FcorrError;

/// The marker's file name in the output directory. Not a dotfile: `actions/upload-artifact`
/// leaves hidden files out, and a two-stage workflow must carry the marker to `fcorr publish`.
pub(crate) const MARKER: &str = "fcorr-incomplete.txt";

/// The reports that state a verdict: removed when the marker cannot be written, so no earlier
/// verdict is left to be taken for this run's.
const VERDICTS: [&str; 3] = ["results.json", "summary.md", "comment.md"];

/// Marks `out_dir` as being written by `command` (creating the directory). When the marker
/// cannot be created, the earlier verdict-bearing reports are removed instead, and the command
/// stops: it could not write its own reports either.
pub(crate) fn begin(out_dir: &Path, command: &str) -> Result<(), FcorrError> {
    let marker = out_dir.join(MARKER);
    let text = format!(
        "fcorr {command} (pid {}) started writing here at {}; until it finishes, the reports in this \
         directory are incomplete or left from an earlier run. fcorr publish refuses them.\n",
        std::process::id(),
        crate::model::rfc3339(time::OffsetDateTime::now_utc()),
    );
    // Creating the file is what marks the directory (it needs no free blocks); its text only
    // tells people what it is, so a full disk that cannot hold the text still leaves the mark.
    let created = std::fs::create_dir_all(out_dir).and_then(|()| std::fs::File::create(&marker));
    let error = match created {
        Ok(mut file) => {
            let _ = std::io::Write::write_all(&mut file, text.as_bytes());
            return Ok(());
        }
        Err(error) => error,
    };
    for name in VERDICTS {
        // Missing is fine; anything else is named, since that report may now be stale.
        if let Err(e) = std::fs::remove_file(out_dir.join(name))
            && e.kind() != std::io::ErrorKind::NotFound
        {
            errln!("fcorr: warning: {}: cannot remove an earlier report: {e}", out_dir.join(name).display());
        }
    }
    Err(FcorrError::Harness(format!(
        "{}: cannot mark the output directory as being written ({error}); nothing was run",
        marker.display()
    )))
}

/// Removes the marker: every report the command had to write is in place. A marker that cannot
/// be removed is a warning (publishing will refuse the directory, which is the safe side).
pub(crate) fn finish(out_dir: &Path) {
    let marker = out_dir.join(MARKER);
    if let Err(e) = std::fs::remove_file(&marker)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        errln!("fcorr: warning: {}: cannot remove the in-progress marker: {e}", marker.display());
    }
}

/// An error when `dir` holds the marker: its results are not a complete run's.
pub(crate) fn check(dir: &Path) -> Result<(), FcorrError> {
    let marker: PathBuf = dir.join(MARKER);
    if !marker.exists() {
        return Ok(());
    }
    let detail = std::fs::read_to_string(&marker).unwrap_or_default();
    Err(FcorrError::Input {
        file: dir.join("results.json"),
        message: format!(
            "not written completely by the last fcorr run into {} (it stopped or failed before its reports were \
             in place; {} is still there): refusing to publish results that may be an earlier run's. {}",
            dir.display(),
            MARKER,
            detail.trim()
        ),
        source: None,
    })
}
