//! Whole files in and out. Inputs a user names (config, datasets, banks, baselines…) are read
//! with a documented size cap, and special files (devices, FIFOs, sockets) are refused before
//! anything is read; files a later run reads (history, caches, results) are written to a
//! temporary file beside them and renamed into place only when complete, so a full disk or a
//! crash leaves the old file or none, never half of one.

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// What one kind of input file is, how large it may be, and what to do about a larger one.
/// The caps are documented in docs/configuration.md ("Input size limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The kind of file, for messages ("configuration file").
    pub what: &'static str,
    /// Largest accepted size in bytes.
    pub cap: u64,
    /// What to do with a larger file.
    pub advice: &'static str,
}

const MIB: u64 = 1024 * 1024;

/// `fcorr.toml`.
pub const CONFIG: Limit =
    Limit { what: "configuration file", cap: 4 * MIB, advice: "a configuration this large is not one; check the path" };
/// `quarantine-file`.
pub const QUARANTINE: Limit = Limit {
    what: "quarantine file",
    cap: 16 * MIB,
    advice: "quarantine test ids or globs, not whole reports; a glob covers many tests",
};
/// Report templates (`--templates`).
pub const TEMPLATE: Limit =
    Limit { what: "template", cap: 4 * MIB, advice: "split it into templates that include each other" };
/// Eval datasets.
pub const DATASET: Limit =
    Limit { what: "dataset", cap: 256 * MIB, advice: "split it into several files, one suite each, or shard it" };
/// Bank files and their history files.
pub const BANK: Limit = Limit { what: "bank file", cap: 256 * MIB, advice: "split the bank into several banks" };
/// Bank rule files (`rules`, `state`).
pub const RULES: Limit = Limit { what: "rules file", cap: 16 * MIB, advice: "split the rules into several files" };
/// Benchmark task files.
pub const TASKS: Limit = Limit {
    what: "task file",
    cap: 256 * MIB,
    advice: "split the tasks into several files in one directory (`path` may name the directory)",
};
/// A saved `results.json` (a baseline, a part to merge, a run to report or compare). fcorr
/// writes ~450 bytes per case (a million cases: 448 MB), and every file it writes must read
/// back: 2 GiB is ~4.5 million cases, past which `--stream` runs and merges write their reports
/// as they go. Files over 64 MiB are parsed as they are read (`report::load_results`), so the
/// cap bounds the run held in memory (~0.75x the file), never the file's text.
pub const RESULTS: Limit = Limit {
    what: "results file",
    cap: 2048 * MIB,
    advice: "keep fewer cases per run (shard the suites, `fcorr merge` the parts) or drop passing tests' output",
};
/// The GitHub event payload (`GITHUB_EVENT_PATH`).
pub const EVENT: Limit = Limit {
    what: "GitHub event file",
    cap: 64 * MIB,
    advice: "GitHub's own payloads are far smaller; check GITHUB_EVENT_PATH",
};
/// An entry of the answer cache (a SUT's answer is at most 16 MiB; JSON escaping can grow it).
pub const ANSWER_CACHE: Limit = Limit {
    what: "answer cache entry",
    cap: 128 * MIB,
    advice: "it was not written by fcorr; delete it (the answer cache is safe to delete)",
};
/// Project files detection and planning read (package.json, go.mod, pyproject.toml…).
pub const PROJECT_FILE: Limit =
    Limit { what: "project file", cap: 4 * MIB, advice: "a manifest this large is not one; check the file" };

/// Why an input file could not be read; `path` names it.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct ReadError {
    pub path: PathBuf,
    #[source]
    pub problem: ReadProblem,
}

/// What is wrong with an input file (the file is named by [`ReadError`] or the caller).
#[derive(Debug, thiserror::Error)]
pub enum ReadProblem {
    /// Opening or reading failed (missing, no permission, an I/O error).
    #[error("cannot read it: {0}")]
    Io(#[source] std::io::Error),
    /// A device, FIFO, socket or directory: reading it could block forever or never end.
    #[error("it is {kind}, not a regular file; fcorr reads a {what} only from a regular file")]
    NotRegular { kind: &'static str, what: &'static str },
    /// Larger than its [`Limit`]; `size` is what the file system says, or at least `cap + 1`.
    #[error("the {} is {} ({size} bytes), over the {} cap for a {}: {}", limit.what, human(*size), human(limit.cap), limit.what, limit.advice)]
    TooLarge { size: u64, limit: Limit },
    /// Not UTF-8 text.
    #[error("it is not UTF-8 text (invalid byte at offset {offset})")]
    NotText { offset: usize },
}

impl ReadProblem {
    /// True when the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadProblem::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// `1.5 GiB`, `256 MiB`, `12 KiB`, `10 bytes`.
fn human(bytes: u64) -> String {
    let units = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in units {
        if bytes >= size {
            let value = bytes as f64 / size as f64;
            let text = format!("{value:.1}");
            return format!("{} {unit}", text.trim_end_matches(".0"));
        }
    }
    format!("{bytes} bytes")
}

/// Opens `path` for reading if it is a regular file (after following symlinks). FIFOs are
/// opened non-blocking so the check itself cannot hang (regular files ignore the flag); the type
/// is taken from the open handle, so a file swapped after a check is still caught. For readers
/// that stream (report parsers).
pub fn open_regular(path: &Path, what: &'static str) -> Result<File, ReadError> {
    let fail = |problem| ReadError { path: path.to_path_buf(), problem };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| fail(ReadProblem::Io(e)))?;
    let kind = file.metadata().map_err(|e| fail(ReadProblem::Io(e)))?.file_type();
    if !kind.is_file() {
        return Err(fail(ReadProblem::NotRegular { kind: kind_name(&kind), what }));
    }
    Ok(file)
}

fn kind_name(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() { "a directory" } else { "not a regular file" }
}

/// The bytes of `path`, at most `limit.cap` of them: special files are refused before reading,
/// a file the file system says is larger is refused before reading, and the read itself stops
/// one byte past the cap (files such as /proc's report size 0).
pub fn read_capped(path: &Path, limit: Limit) -> Result<Vec<u8>, ReadError> {
    let fail = |problem| ReadError { path: path.to_path_buf(), problem };
    let file = open_regular(path, limit.what)?;
    let size = file.metadata().map_err(|e| fail(ReadProblem::Io(e)))?.len();
    if size > limit.cap {
        return Err(fail(ReadProblem::TooLarge { size, limit }));
    }
    // The size hint is bounded by the cap, so a lying size cannot reserve more.
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit.cap + 1).read_to_end(&mut bytes).map_err(|e| fail(ReadProblem::Io(e)))?;
    if bytes.len() as u64 > limit.cap {
        return Err(fail(ReadProblem::TooLarge { size: bytes.len() as u64, limit }));
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text, without a leading byte-order mark (editors on Windows write
/// one; no parser fcorr uses accepts it).
pub fn read_text(path: &Path, limit: Limit) -> Result<String, ReadError> {
    let bytes = read_capped(path, limit)?;
    text_of(bytes).map_err(|problem| ReadError { path: path.to_path_buf(), problem })
}

/// Bytes read with [`read_capped`] as text, as [`read_text`] makes it.
pub fn text_of(bytes: Vec<u8>) -> Result<String, ReadProblem> {
    let text = String::from_utf8(bytes).map_err(|e| ReadProblem::NotText { offset: e.utf8_error().valid_up_to() })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// A file that could not be written, and at which step; nothing new is left behind.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}: {source}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    pub action: WriteStep,
    #[source]
    pub source: std::io::Error,
}

/// The step of an atomic write that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStep {
    /// Creating the directory or the temporary file beside the target.
    Create,
    /// Writing or flushing the content to disk.
    Write,
    /// Renaming the complete file into place.
    MoveIntoPlace,
    /// The target exists and this write never replaces one.
    Exists,
}

impl WriteStep {
    /// The step as a verb phrase: "cannot {verb} PATH".
    pub fn verb(self) -> &'static str {
        match self {
            WriteStep::Create => "create",
            WriteStep::Write => "write",
            WriteStep::MoveIntoPlace => "move into place",
            WriteStep::Exists => "create (it exists already, and is never replaced)",
        }
    }
}

impl fmt::Display for WriteStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.verb())
    }
}

/// How an atomic write treats the target and the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// Replace an existing file (else the write fails with [`WriteStep::Exists`]).
    pub replace: bool,
    /// Flush to disk before the rename, so a crash cannot leave an empty file under the name.
    /// Off only for caches, where a lost entry costs a recomputation.
    pub sync: bool,
}

impl Mode {
    /// Replace the file, durably.
    pub const REPLACE: Mode = Mode { replace: true, sync: true };
    /// Replace the file, whole or not at all, without waiting for the disk: the run's reports
    /// (results.json, junit.xml, ctrf.json, …). Readers still never see half a file (the rename);
    /// what `sync` adds is survival of a machine crash in the second after the run, which also
    /// ends the CI job that would read them, and it cost a 100k-case import a quarter of its wall
    /// time (0.26 s of 1.02 s, writers idling in `fsync`; docs/benchmarks.md §13). Files carried
    /// from run to run (history, dated copies) keep `CREATE_NEW`'s sync.
    pub const REPORT: Mode = Mode { replace: true, sync: false };
    /// Create a new file, never replacing one, durably (history files, dated copies).
    pub const CREATE_NEW: Mode = Mode { replace: false, sync: true };
    /// Replace the file, without waiting for the disk (cache entries).
    pub const CACHE: Mode = Mode { replace: true, sync: false };
}

/// Writes `bytes` to `path` through a temporary file in the same directory.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Mode) -> Result<(), WriteError> {
    write_atomic_with(path, mode, |w| {
        w.write_all(bytes).map_err(|source| WriteError { path: path.to_path_buf(), action: WriteStep::Write, source })
    })
}

/// Streams `fill` into a temporary file beside `path`, then renames it into place; on any
/// failure the temporary file is removed and `path` is left as it was. The file gets the
/// permissions `File::create` would give it (0666 less the umask), not the temporary file's 0600.
pub fn write_atomic_with<E: From<WriteError>>(
    path: &Path,
    mode: Mode,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), E>,
) -> Result<(), E> {
    let fail = |action, source| WriteError { path: path.to_path_buf(), action, source };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let prefix = format!(".{}.", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let tmp = builder.tempfile_in(dir).map_err(|source| fail(WriteStep::Create, source))?;
    let mut writer = BufWriter::with_capacity(256 * 1024, tmp);
    fill(&mut writer)?;
    let tmp = writer.into_inner().map_err(|e| fail(WriteStep::Write, e.into_error()))?;
    if mode.sync {
        tmp.as_file().sync_all().map_err(|source| fail(WriteStep::Write, source))?;
    }
    let persisted = if mode.replace { tmp.persist(path) } else { tmp.persist_noclobber(path) };
    // A failed persist hands the temporary file back; dropping it deletes it.
    persisted.map(drop).map_err(|e| {
        let step = if e.error.kind() == std::io::ErrorKind::AlreadyExists && !mode.replace {
            WriteStep::Exists
        } else {
            WriteStep::MoveIntoPlace
        };
        fail(step, e.error).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: Limit = Limit { what: "test file", cap: 8, advice: "make it smaller" };

    #[test]
    fn reads_within_the_cap_and_refuses_beyond_it_naming_size_cap_and_advice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "12345678").unwrap();
        assert_eq!(read_capped(&path, TINY).unwrap(), b"12345678");
        std::fs::write(&path, "123456789").unwrap();
        let err = read_capped(&path, TINY).unwrap_err().to_string();
        assert!(err.starts_with(&path.display().to_string()), "{err}");
        assert!(err.contains("9 bytes") && err.contains("8 bytes cap") && err.contains("make it smaller"), "{err}");
    }

    #[test]
    fn special_files_are_refused_before_reading_even_a_fifo_with_no_writer() {
        let err = read_capped(Path::new("/dev/zero"), TINY).unwrap_err();
        assert!(matches!(err.problem, ReadProblem::NotRegular { kind: "a character device", .. }), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err = read_capped(dir.path(), TINY).unwrap_err().to_string();
        assert!(err.contains("a directory, not a regular file"), "{err}");
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let err = read_capped(&fifo, TINY).unwrap_err().to_string();
        assert!(err.contains("a FIFO"), "{err}");
    }

    #[test]
    fn files_that_report_no_size_are_cut_at_the_cap() {
        // /proc files say 0 bytes; the read stops one byte past the cap.
        let err = read_capped(Path::new("/proc/self/status"), TINY).unwrap_err();
        assert!(matches!(err.problem, ReadProblem::TooLarge { size: 9, .. }), "{err}");
    }

    #[test]
    fn text_loses_its_byte_order_mark_and_bad_utf8_names_the_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, b"\xef\xbb\xbf{}\n").unwrap();
        assert_eq!(read_text(&path, RESULTS).unwrap(), "{}\n");
        std::fs::write(&path, b"ab\xff").unwrap();
        let err = read_text(&path, RESULTS).unwrap_err().to_string();
        assert!(err.contains("not UTF-8 text (invalid byte at offset 2)"), "{err}");
        assert!(read_text(&dir.path().join("none"), RESULTS).unwrap_err().problem.is_not_found());
    }

    #[test]
    fn an_atomic_write_replaces_or_creates_new_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.json");
        write_atomic(&path, b"one", Mode::CREATE_NEW).unwrap();
        let err = write_atomic(&path, b"two", Mode::CREATE_NEW).unwrap_err();
        assert_eq!(err.action, WriteStep::Exists);
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        write_atomic(&path, b"three", Mode::REPLACE).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"three");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["h.json"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Not the temporary file's 0600: readable like any file fcorr writes.
            assert_ne!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o044, 0);
        }
    }

    #[test]
    fn a_failing_fill_leaves_the_old_file_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, "old").unwrap();
        let result: Result<(), WriteError> = write_atomic_with(&path, Mode::REPLACE, |w| {
            w.write_all(b"half").unwrap();
            Err(WriteError { path: path.clone(), action: WriteStep::Write, source: std::io::Error::other("full") })
        });
        assert!(result.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn sizes_read_like_a_person_would_say_them() {
        assert_eq!(human(256 * MIB), "256 MiB");
        assert_eq!(human(3 * (1 << 29)), "1.5 GiB");
        assert_eq!(human(10), "10 bytes");
    }
}
