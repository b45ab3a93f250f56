//! The file-based GitHub surfaces, which need no token: the job summary (`$GITHUB_STEP_SUMMARY`)
//! and step outputs (`$GITHUB_OUTPUT`), plus the size-safe Markdown trimming they share with the
//! comment and the check run.

use std::io::Write;
use std::path::{Path, PathBuf};

/// GitHub's limit on what one step may write to its job summary.
pub(crate) const STEP_SUMMARY_LIMIT: usize = 1024 * 1024;

/// Cuts Markdown to at most `max_bytes` bytes at a line boundary, closing an open code fence
/// and open `<details>` elements and appending `notice`. Text that fits is returned unchanged.
pub(crate) fn fit_markdown(text: &str, max_bytes: usize, notice: &str) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    // Room for the closers we may need and the notice.
    let reserve = notice.len() + 64;
    let budget = max_bytes.saturating_sub(reserve);
    let mut cut = 0;
    for (i, _) in text.match_indices('\n') {
        if i + 1 > budget {
            break;
        }
        cut = i + 1;
    }
    if cut == 0 {
        // One enormous line: cut at a character boundary instead.
        cut = crate::text::floor_boundary(text, budget);
    }
    let mut out = text[..cut].to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let fences = out.lines().filter(|l| l.trim_start().starts_with("```")).count();
    if fences % 2 == 1 {
        out.push_str("```\n");
    }
    let opened = out.matches("<details").count();
    let closed = out.matches("</details>").count();
    for _ in closed..opened {
        out.push_str("</details>\n");
    }
    out.push('\n');
    out.push_str(notice);
    out.push('\n');
    // The closers are bounded by the reserve unless the text opened dozens of <details>.
    if out.len() > max_bytes {
        out.truncate(crate::text::floor_boundary(&out, max_bytes));
    }
    out
}

/// A GitHub file surface that cannot be appended to: which one (`GITHUB_STEP_SUMMARY`,
/// `GITHUB_OUTPUT`), its path, the step that failed and the io error.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {surface} {}: {source}", path.display())]
pub(crate) struct SurfaceError {
    pub(crate) surface: &'static str,
    /// `open` or `write`.
    pub(crate) action: &'static str,
    pub(crate) path: PathBuf,
    pub(crate) source: std::io::Error,
}

impl SurfaceError {
    fn at(surface: &'static str, action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SurfaceError {
        move |source| SurfaceError { surface, action, path: path.to_path_buf(), source }
    }
}

/// Appends Markdown to the job summary file, within GitHub's 1 MiB limit.
pub(crate) fn append_step_summary(path: &Path, markdown: &str) -> Result<(), SurfaceError> {
    // GitHub masks the step log, not the job summary: secrets go before it is written.
    let markdown = crate::secrets::redact(markdown);
    let text = fit_markdown(
        &markdown,
        STEP_SUMMARY_LIMIT,
        "> **Note:** the summary was trimmed to fit GitHub's 1 MiB job-summary limit; the full report is in the fcorr output directory (summary.md, report.html).",
    );
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(SurfaceError::at(
        "GITHUB_STEP_SUMMARY",
        "open",
        path,
    ))?;
    file.write_all(text.as_bytes()).and_then(|_| file.write_all(b"\n")).map_err(SurfaceError::at(
        "GITHUB_STEP_SUMMARY",
        "write",
        path,
    ))
}

/// Appends `name=value` pairs to the outputs file, each as a heredoc with a random delimiter
/// so no value (a path, a message) can end it early or smuggle in another output.
pub(crate) fn write_outputs(path: &Path, outputs: &[(&str, String)]) -> Result<(), SurfaceError> {
    let mut text = String::new();
    for (name, value) in outputs {
        let value = crate::secrets::redact(value);
        let mut delimiter = format!("ghadelimiter_{}", random_token());
        while value.contains(&delimiter) {
            delimiter = format!("ghadelimiter_{}", random_token());
        }
        text.push_str(&format!("{name}<<{delimiter}\n{value}\n{delimiter}\n"));
    }
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(SurfaceError::at(
        "GITHUB_OUTPUT",
        "open",
        path,
    ))?;
    file.write_all(text.as_bytes()).map_err(SurfaceError::at("GITHUB_OUTPUT", "write", path))
}

/// 32 hex characters nobody can predict: from the OS random source, else hashed from the time,
/// the process id and an address (still unguessable by the tool output it guards against).
pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    if from_os.is_err() {
        use sha2::{Digest, Sha256};
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let local = 0u8;
        let seed = format!("{}:{}:{:p}", now.as_nanos(), std::process::id(), &local);
        bytes.copy_from_slice(&Sha256::digest(seed.as_bytes())[..16]);
    }
    hex::encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(fit_markdown("abc\n", 100, "cut"), "abc\n");
    }

    #[test]
    fn trimming_closes_fences_and_details_and_respects_the_limit() {
        let mut text = String::from("# t\n<details><summary>x</summary>\n\n```\n");
        for i in 0..1000 {
            text.push_str(&format!("line {i} é\n"));
        }
        text.push_str("```\n</details>\n");
        let out = fit_markdown(&text, 2000, "NOTICE");
        assert!(out.len() <= 2000);
        assert!(out.ends_with("NOTICE\n"));
        assert_eq!(out.lines().filter(|l| l.starts_with("```")).count() % 2, 0);
        assert_eq!(out.matches("<details").count(), out.matches("</details>").count());
    }

    #[test]
    fn one_long_line_is_cut_on_a_character_boundary() {
        let text = "é".repeat(5000);
        let out = fit_markdown(&text, 1001, "n");
        assert!(out.len() <= 1001);
    }

    #[test]
    fn outputs_use_unique_heredocs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        write_outputs(&path, &[("verdict", "pass".into()), ("x", "a\nb".into())]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap();
        let delimiter = first.strip_prefix("verdict<<").unwrap();
        assert!(delimiter.len() > 20);
        assert!(text.contains("x<<"));
        assert!(text.contains("\na\nb\n"));
        assert_ne!(random_token(), random_token());
    }

    #[test]
    fn an_unwritable_surface_names_itself_its_path_and_the_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("out");
        let err = write_outputs(&path, &[("verdict", "pass".into())]).unwrap_err();
        assert_eq!(err.path, path);
        assert_eq!(err.source.kind(), std::io::ErrorKind::NotFound);
        let text = err.to_string();
        assert!(text.starts_with(&format!("cannot open GITHUB_OUTPUT {}: ", path.display())), "{text}");
        let err = append_step_summary(&path, "# x").unwrap_err();
        assert_eq!((err.surface, err.action), ("GITHUB_STEP_SUMMARY", "open"));
    }
}
