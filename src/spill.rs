//! The spill file of the streaming mode (`fcorr import --stream`, `fcorr merge --stream`): cases
//! written in order as they arrive, one JSON line each, to an unnamed temporary file in the output
//! directory, and read back in order by every stage that needs every case (`Suite::every_case`).
//! Memory then holds the counts and the failing and flaky cases (up to a cap), not every case.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::model::{Case, CaseStore, Run, Streamed, Suite};

/// Failing and flaky cases kept in memory for the summaries (the terminal, summary.md,
/// report.html, the gate), run-wide; past it they are counted and left in the spill file only.
/// Failing cases marked critical are kept whatever the count: the gate must see each of them; so
/// are the error cases that say results are incomplete (`model::incomplete`), which scoring reads.
pub(crate) const KEEP_CAP: usize = 10_000;

/// A spill file that could not be created, written or read: the streaming mode stops there
/// rather than writing reports that lack cases.
#[derive(Debug, thiserror::Error)]
#[error("the streaming mode's spill file in {}: cannot {action}: {source}", dir.display())]
pub(crate) struct SpillError {
    pub(crate) dir: PathBuf,
    pub(crate) action: &'static str,
    #[source]
    pub(crate) source: std::io::Error,
}

impl SpillError {
    /// A spill file in `dir` that could not be read back.
    pub(crate) fn reading(dir: &Path, source: std::io::Error) -> SpillError {
        SpillError { dir: dir.to_path_buf(), action: "read it back", source }
    }
}

/// The file: unnamed (removed by the system when the last handle closes, even after a kill), so
/// nothing is left behind; read with positional reads, so several reports read it at once.
struct SpillFile {
    file: File,
    dir: PathBuf,
}

/// Writes cases to the spill file in order; each suite's share becomes a [`Part`].
pub(crate) struct Spill {
    file: Arc<SpillFile>,
    out: BufWriter<FileWriter>,
    written: u64,
    kept: usize,
    not_kept: u64,
}

/// `Write` for the shared file (writes happen only before any read).
struct FileWriter(Arc<SpillFile>);

impl Write for FileWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (&self.0.file).write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        (&self.0.file).flush()
    }
}

impl Spill {
    /// A new, empty spill file in `dir` (created if missing).
    pub(crate) fn create_in(dir: &Path) -> Result<Spill, SpillError> {
        let fail = |action, source| SpillError { dir: dir.to_path_buf(), action, source };
        std::fs::create_dir_all(dir).map_err(|e| fail("create the directory", e))?;
        let file = tempfile::tempfile_in(dir).map_err(|e| fail("create it", e))?;
        let file = Arc::new(SpillFile { file, dir: dir.to_path_buf() });
        let out = BufWriter::with_capacity(1 << 20, FileWriter(file.clone()));
        Ok(Spill { file, out, written: 0, kept: 0, not_kept: 0 })
    }

    /// Moves every case of `suite` to the spill file, in order, and keeps in `suite.cases` only
    /// those the summaries list (see [`KEEP_CAP`]); `suite.counts` already count them all.
    /// A suite streamed before gets its cases appended as a further part.
    pub(crate) fn stream_suite(&mut self, suite: &mut Suite) -> Result<(), SpillError> {
        let cases = std::mem::take(&mut suite.cases);
        let count = cases.len() as u64;
        let start = self.written;
        let mut line = Vec::with_capacity(1024);
        let mut kept = Vec::new();
        let mut not_kept = 0;
        for case in &cases {
            line.clear();
            serde_json::to_writer(&mut line, case).map_err(|e| self.fail("encode a case", e.into()))?;
            line.push(b'\n');
            self.out.write_all(&line).map_err(|e| self.fail("write", e))?;
            self.written += line.len() as u64;
        }
        for case in cases {
            let listed = case.status.is_failure() || case.status == crate::model::CaseStatus::Flaky;
            // So are the cases saying results are missing: scoring reads them from memory.
            if (case.extra().critical && case.status.is_failure()) || case.marks_incomplete_results() {
                kept.push(case);
            } else if listed && self.kept < KEEP_CAP {
                self.kept += 1;
                kept.push(case);
            } else if listed {
                not_kept += 1;
            }
        }
        self.not_kept += not_kept;
        // Readers open the file after this: what is buffered must be on disk first.
        self.out.flush().map_err(|e| self.fail("write", e))?;
        let part = Part { file: self.file.clone(), start, end: self.written, count };
        let streamed = suite.streamed.get_or_insert_with(Streamed::default);
        streamed.parts.push(Arc::new(part));
        streamed.not_kept += not_kept;
        suite.cases.extend(kept);
        Ok(())
    }

    /// Where the run-wide count of kept cases stands, for [`Spill::rewind`].
    pub(crate) fn mark(&self) -> Mark {
        Mark { kept: self.kept, not_kept: self.not_kept }
    }

    /// Takes back the cases streamed since `mark` (a file found broken after some of its cases
    /// went out): the caller drops the suites holding their parts, and the count of kept cases
    /// goes back, so that the cap means what it means without them. Their bytes stay in the file,
    /// never read.
    pub(crate) fn rewind(&mut self, mark: Mark) {
        self.kept = mark.kept;
        self.not_kept = mark.not_kept;
    }

    /// Failing or flaky cases left out of memory because of [`KEEP_CAP`], run-wide.
    pub(crate) fn not_kept(&self) -> u64 {
        self.not_kept
    }

    fn fail(&self, action: &'static str, source: std::io::Error) -> SpillError {
        SpillError { dir: self.file.dir.clone(), action, source }
    }
}

/// What [`Spill::mark`] saw.
pub(crate) struct Mark {
    kept: usize,
    not_kept: u64,
}

/// One suite's cases in the spill file: the bytes `start..end`, `count` JSON lines.
struct Part {
    file: Arc<SpillFile>,
    start: u64,
    end: u64,
    count: u64,
}

impl CaseStore for Part {
    fn cases(&self) -> Box<dyn Iterator<Item = std::io::Result<Case>> + '_> {
        let reader = BufReader::with_capacity(256 * 1024, At { file: &self.file.file, at: self.start, end: self.end });
        let dir = &self.file.dir;
        let mut reader = reader;
        let mut line = Vec::new();
        Box::new(std::iter::from_fn(move || {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => None,
                Ok(_) => Some(serde_json::from_slice::<Case>(&line).map_err(|e| {
                    let message =
                        format!("the streaming mode's spill file in {}: a case reads back wrong: {e}", dir.display());
                    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
                })),
                Err(e) => Some(Err(std::io::Error::new(
                    e.kind(),
                    format!("the streaming mode's spill file in {}: cannot read: {e}", dir.display()),
                ))),
            }
        }))
    }

    fn count(&self) -> u64 {
        self.count
    }
}

/// Reads `at..end` of a file by position, leaving the file's own offset alone.
struct At<'f> {
    file: &'f File,
    at: u64,
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = usize::try_from(self.end.saturating_sub(self.at)).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let n = read_at(self.file, &mut buf[..want], self.at)?;
        if n == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the file ends before its cases do"));
        }
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

/// After the timing stage: the slowest cases of each streamed suite join the cases it keeps in
/// memory, in run order, so the summaries can name them as they do for a suite in memory.
pub(crate) fn keep_slowest(run: &mut Run) -> std::io::Result<()> {
    let Some(timing) = run.timing.as_ref() else { return Ok(()) };
    let mut wanted: HashMap<&str, HashSet<&str>> = HashMap::new();
    for slow in &timing.slowest {
        wanted.entry(slow.suite_id.as_str()).or_default().insert(slow.case_id.as_str());
    }
    let mut found: Vec<(usize, Vec<Case>)> = Vec::new();
    for (s, suite) in run.suites.iter().enumerate() {
        let Some(ids) = wanted.get(suite.id.as_str()).filter(|_| suite.streamed.is_some()) else { continue };
        let kept: HashSet<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
        let mut kept_iter = suite.cases.iter();
        let mut cases = Vec::with_capacity(suite.cases.len() + ids.len());
        let mut every = suite.every_case();
        for case in &mut every {
            if kept.contains(case.id.as_str()) {
                // Kept cases are a subsequence of every case, in the same order.
                cases.extend(kept_iter.next().cloned());
            } else if ids.contains(case.id.as_str()) {
                cases.push(case.into_owned());
            }
        }
        every.finish()?;
        found.push((s, cases));
    }
    for (s, cases) in found {
        run.suites[s].cases = cases;
    }
    Ok(())
}
