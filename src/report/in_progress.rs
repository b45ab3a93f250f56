//! The in-progress marker: a file a command writes into its output directory before it starts
//! (running, importing, merging, re-rendering) and removes only once every report it had to write is in place.
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

/// The output directory, held by one command: an exclusive `flock` on the directory itself
/// (no lock file to leave behind), released when this is dropped or the process ends in any
/// way, SIGKILL included, so a lock never outlives its run. The descriptor is close-on-exec:
/// the tests fcorr starts do not inherit it.
#[must_use = "the output directory is held only while this is kept"]
pub(crate) struct Writing {
    _lock: Option<std::fs::File>,
}

/// Marks `out_dir` as being written by `command` (creating the directory) and holds it until
/// the returned [`Writing`] is dropped. Another fcorr writing there already is a usage error
/// (exit 2) naming it: two runs into one directory would leave one run's reports under the
/// other's marker, and the first to finish would remove the marker while the other still
/// writes. When the marker cannot be created, the earlier verdict-bearing reports are removed
/// instead, and the command stops: it could not write its own reports either.
pub(crate) fn begin(out_dir: &Path, command: &str) -> Result<Writing, FcorrError> {
    let marker = out_dir.join(MARKER);
    if out_dir.exists() && !out_dir.is_dir() {
        // Said plainly: the OS says "File exists" or "Not a directory" about the marker, and
        // removing the earlier reports "inside" it only adds warnings.
        return Err(FcorrError::Harness(format!(
            "{}: the output directory (--out) is a file, not a directory: choose another --out; nothing was run",
            out_dir.display()
        )));
    }
    let text = format!(
        "fcorr {command} (pid {}) started writing here at {}; until it finishes, the reports in this \
         directory are incomplete or left from an earlier run. fcorr publish refuses them.\n",
        std::process::id(),
        crate::model::rfc3339(time::OffsetDateTime::now_utc()),
    );
    // Creating the file is what marks the directory (it needs no free blocks); its text only
    // tells people what it is, so a full disk that cannot hold the text still leaves the mark.
    let error = match std::fs::create_dir_all(out_dir) {
        // No directory, so no earlier report in it to remove.
        Err(error) => {
            return Err(FcorrError::Harness(format!(
                "{}: cannot create the output directory ({error}); nothing was run",
                out_dir.display()
            )));
        }
        Ok(()) => {
            // Held before the marker is touched: the marker of a run still writing is its own,
            // and so are its reports, left alone.
            let lock = hold(out_dir, command)?;
            match std::fs::File::create(&marker) {
                Ok(mut file) => {
                    let _ = std::io::Write::write_all(&mut file, text.as_bytes());
                    return Ok(Writing { _lock: lock });
                }
                Err(error) => error,
            }
        }
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

/// Takes the directory's lock without waiting (laptops share an output directory between
/// terminals; CI jobs never do, so waiting would only hide a mistake). A file system that
/// cannot lock (some network mounts) is a warning: the run goes on unguarded.
#[cfg(unix)]
fn hold(out_dir: &Path, command: &str) -> Result<Option<std::fs::File>, FcorrError> {
    use rustix::fs::{FlockOperation, flock};
    let dir = match std::fs::File::open(out_dir) {
        Ok(dir) => dir,
        Err(e) => {
            errln!(
                "fcorr: warning: {}: cannot open the output directory to lock it ({e}); another fcorr writing \
                 here at the same time would not be stopped",
                out_dir.display()
            );
            return Ok(None);
        }
    };
    match flock(&dir, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(dir)),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
            // The holder wrote its marker right after locking: its first sentence names it.
            let marker = std::fs::read_to_string(out_dir.join(MARKER)).unwrap_or_default();
            let holder = writer(&marker).unwrap_or("its marker names no process yet");
            Err(FcorrError::Usage(format!(
                "{}: another fcorr is writing into this output directory ({holder}); fcorr {command} did not \
                 start: wait for it to finish, or give this run another --out",
                out_dir.display()
            )))
        }
        Err(e) => {
            errln!(
                "fcorr: warning: {}: cannot lock the output directory ({e}); another fcorr writing here at the \
                 same time would not be stopped",
                out_dir.display()
            );
            Ok(None)
        }
    }
}

/// No `flock` off Unix: the directory is not locked there.
#[cfg(not(unix))]
fn hold(_out_dir: &Path, _command: &str) -> Result<Option<std::fs::File>, FcorrError> {
    Ok(None)
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

/// The command a marker's text names (its first sentence, `fcorr run (pid 12) started writing
/// here at …`), when it names one.
fn writer(marker: &str) -> Option<&str> {
    match marker.split_once(';') {
        Some((who, _)) if who.starts_with("fcorr ") => Some(who.trim()),
        _ => None,
    }
}

/// The text of `dir`'s marker when it holds one (empty when unreadable): the reports there are
/// not a complete, current run's.
pub(crate) fn marked(dir: &Path) -> Option<String> {
    let marker = dir.join(MARKER);
    marker.exists().then(|| std::fs::read_to_string(&marker).unwrap_or_default())
}

/// Leaves `out_dir` marked once `fcorr report` has re-rendered it from `source`, whose directory
/// was marked (`earlier`, that marker's text), and says so on stderr. Those results may be an
/// earlier run's, left by a run that stopped: re-rendering them completely does not make them
/// the last run's, so `fcorr publish` must go on refusing them. The marker names the stopped
/// run, in place of the one [`begin`] wrote for the re-render.
pub(crate) fn keep(out_dir: &Path, source: &Path, earlier: &str) {
    let who = writer(earlier)
        .map_or_else(|| "its marker names no process".to_string(), |w| format!("{w} and did not finish"));
    let text = format!(
        "fcorr report re-rendered the reports here from {}, which was marked as not written completely ({who}); \
         they may be an earlier run's results. fcorr publish refuses them. The earlier marker said: {}\n",
        source.display(),
        earlier.trim()
    );
    let marker = out_dir.join(MARKER);
    if let Err(e) = std::fs::write(&marker, text) {
        // The marker `begin` wrote is still there, so publishing still refuses the directory.
        errln!("fcorr: warning: {}: cannot say which run left the reports incomplete: {e}", marker.display());
    }
    errln!(
        "fcorr: warning: {}: its directory is marked as not written completely ({who}), so these results may \
         be an earlier run's; the reports re-rendered from it into {} stay marked and fcorr publish refuses \
         them: run the command that writes them again",
        source.display(),
        out_dir.display()
    );
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
