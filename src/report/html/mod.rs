//! `report.html`: one self-contained, interactive page for people to open.
//!
//! fcorr renders the static parts itself (verdict header, inline SVG charts, suite cards, a
//! no-script list of failures) and embeds every case as zlib-compressed, base64-encoded JSON
//! blocks (see `data`) that a small script inflates with the browser's `DecompressionStream`
//! and shows as a filterable, virtualised list. No network, no CDN; a Content-Security-Policy with hashes of the one style
//! sheet and the one script means nothing else can run, whatever the test data holds.

mod charts;
mod data;
mod since_baseline;

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{ReportEnv, Reporter};
use crate::errors::RenderError;
use crate::model::{CaseStatus, PhaseStatus, Run, RunOutcome, Suite};

/// Self-contained HTML page.
pub struct HtmlPage;

/// The page's style sheet and script, kept as real files so they can be read and linted.
const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// Failures listed in the page itself, for readers without JavaScript.
const STATIC_FAILURES: usize = 100;

impl Reporter for HtmlPage {
    fn format(&self) -> crate::report::Format {
        crate::report::Format::Html
    }

    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn queue_rank(&self) -> u8 {
        1
    }

    /// The page alone, every case in it (no folder to page into): see [`HtmlPage::write_into`].
    fn write(&self, run: &Run, env: &ReportEnv, out: &mut dyn Write) -> Result<(), RenderError> {
        write_page(run, env, out, None).map(drop)
    }

    fn write_into(&self, run: &Run, env: &ReportEnv, dir: &Path) -> Result<Vec<PathBuf>, RenderError> {
        HtmlPage::write_into(self, run, env, dir)
    }
}

/// The cap on `report.html` when neither `[report] html-max-bytes` nor `FCORR_HTML_MAX_BYTES`
/// sets one: above it, passing and skipped cases move to sibling files.
pub const DEFAULT_MAX_BYTES: u64 = 25 * 1024 * 1024;

/// Folder beside `report.html` holding the parts paged out of it.
pub const FILES_DIR: &str = "report-files";

/// Where the parts that do not fit go: a folder (a staging folder, renamed into place once the
/// page is written) and the page's cap in bytes.
struct Pager<'p> {
    dir: &'p Path,
    cap: u64,
    /// Where the page keeps, in an unnamed temporary file, the blocks of the failures it holds
    /// until it is written (the page's own folder: the staging folder is renamed, which an open
    /// file in it could stop on some systems).
    scratch: &'p Path,
}

/// The page's cap: `[report] html-max-bytes`, else `FCORR_HTML_MAX_BYTES`, else
/// [`DEFAULT_MAX_BYTES`]; 0 means no cap (one file, however big).
fn max_bytes(env: &ReportEnv) -> Result<u64, RenderError> {
    if let Some(cap) = env.html_max_bytes {
        return Ok(cap);
    }
    match std::env::var("FCORR_HTML_MAX_BYTES") {
        Ok(text) => parse_size(&text).ok_or_else(|| {
            RenderError::Template(format!(
                "FCORR_HTML_MAX_BYTES={text:?} is not a size: give bytes, optionally with K, M or G (KiB, MiB, GiB), or 0 for no cap"
            ))
        }),
        Err(_) => Ok(DEFAULT_MAX_BYTES),
    }
}

/// `123`, `512K`, `25M`, `1G` (binary units, case-insensitive, an optional trailing `B`/`iB`).
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_uppercase();
    let t = t.strip_suffix("IB").or_else(|| t.strip_suffix('B')).unwrap_or(&t);
    let (digits, unit) = match t.char_indices().last() {
        Some((at, c @ ('K' | 'M' | 'G'))) => (&t[..at], Some(c)),
        _ => (t, None),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(match unit {
        Some('K') => 1 << 10,
        Some('M') => 1 << 20,
        Some('G') => 1 << 30,
        _ => 1,
    })
}

impl HtmlPage {
    /// Writes `report.html` into `dir`, and its sibling files into `dir/report-files/` when the
    /// page would pass its cap. The sibling files are written into a staging folder first; once
    /// the page is in place the folder replaces any earlier `report-files/` (or an earlier one
    /// is removed when this page has none), so the page and its files always come from one run.
    pub(crate) fn write_into(&self, run: &Run, env: &ReportEnv, dir: &Path) -> Result<Vec<PathBuf>, RenderError> {
        let cap = max_bytes(env)?;
        let path = dir.join(self.file_name());
        let made = |path: &Path, action| {
            let path = path.to_path_buf();
            move |source| RenderError::NotWritten { path, action, source }
        };
        let staging = tempfile::Builder::new()
            .prefix(".report-files.")
            .suffix(".tmp")
            .tempdir_in(dir)
            .map_err(made(dir, "create a folder in"))?;
        let mut paged = 0;
        super::write_atomic_with(&path, |out| {
            let pager = (cap > 0).then_some(Pager { dir: staging.path(), cap, scratch: dir });
            paged = write_page(run, env, out, pager.as_ref())?;
            Ok(())
        })?;
        let target = dir.join(FILES_DIR);
        // The earlier folder is moved aside (not deleted in place), so a reader never sees it half gone.
        let old = dir.join(format!(".{FILES_DIR}.old.{}", std::process::id()));
        let had_old = match std::fs::rename(&target, &old) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(made(&target, "replace")(e)),
        };
        let mut written = vec![path];
        if paged > 0 {
            std::fs::rename(staging.path(), &target).map_err(made(&target, "move into place"))?;
            written.push(target);
        }
        if had_old {
            // Only fcorr's own earlier pages are in it; a failure leaves a hidden folder, nothing more.
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(written)
    }
}

/// Writes the page into `out`; with a `pager`, the parts beyond its cap go to sibling files in
/// its folder. Returns how many parts went there.
fn write_page(run: &Run, env: &ReportEnv, out: &mut dyn Write, pager: Option<&Pager>) -> Result<usize, RenderError> {
    let io = |source| RenderError::Format { format: "the HTML page", source };
    // The static parts first, into memory: their size counts against the cap, and the head's
    // policy depends on whether parts are paged out.
    let mut body = Vec::new();
    write_body(run, env, &mut body).map_err(io)?;
    let data = data::PageData::of(run, env.links.as_ref());
    let parts = data.parts();
    let token = page_token(run, pager.map(|p| p.cap));
    // Room for the cases: the cap less the static parts, style, script and the index.
    let fixed = body.len() + STYLE.len() + SCRIPT.len() + 2048 + 128 * parts.len();
    let room = pager.map(|p| usize::try_from(p.cap).unwrap_or(usize::MAX).saturating_sub(fixed));
    // Parts in run order. With a pager, each part but the first goes to its sibling file as soon
    // as it is compressed, and is read back only if the page turns out to hold every part: a
    // 1,000,000-case page's ~60 MB of compressed parts are never all in memory at once.
    let mut placed: Vec<Placed> = Vec::with_capacity(parts.len());
    let mut used = 0;
    // Parts are compressed a few at a time on scoped threads (deflate is most of the page's
    // cost), then placed in order.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    for (b, batch) in parts.chunks(workers).enumerate() {
        // Part 0 is the one that always stays in the page: with a pager, into a temporary file.
        let spool = |k: usize| match pager {
            Some(pager) if k == 0 => data::Spool::file_in(pager.scratch),
            _ => Ok(data::Spool::Memory(Vec::new())),
        };
        for (j, encoded) in encode_all(&data, batch, b * workers, spool).into_iter().enumerate() {
            let k = b * workers + j;
            let encoded = encoded.map_err(io)?;
            used += encoded.size();
            match pager {
                // Part 0 (failing and flaky cases) always stays in the page.
                Some(pager) if k > 0 => {
                    let mut encoded = encoded;
                    let (file, path) = write_part(pager, &token, k, &mut encoded)?;
                    let ids = data.id_filter(&batch[j]);
                    placed.push(Placed::File { n: encoded.n, counts: encoded.counts, file, path, ids });
                }
                _ => placed.push(Placed::Page(encoded)),
            }
        }
    }
    // Once the parts pass the cap, every part but the first is in a file: the page holds the
    // failures and the files the rest, not an arbitrary share of it. Under it, the page holds
    // them all and the files are left in the staging folder, which is then deleted.
    let paged = placed.len() > 1 && room.is_some_and(|room| used > room);
    let mut table: Vec<data::PartRef> = Vec::with_capacity(placed.len());
    let mut kept: Vec<data::Encoded> = Vec::new();
    let in_page = |n, counts| data::PartRef { n, counts, file: None, ids: None };
    for part in placed {
        match part {
            Placed::Page(encoded) => {
                table.push(in_page(encoded.n, encoded.counts));
                kept.push(encoded);
            }
            Placed::File { n, counts, file, ids, .. } if paged => {
                table.push(data::PartRef { n, counts, file: Some(file), ids });
            }
            Placed::File { n, counts, path, .. } => {
                // Only under the cap, so what is read back is at most the cap's worth.
                kept.push(read_part(&path, n, counts).map_err(io)?);
                table.push(in_page(n, counts));
            }
        }
    }
    let files = if paged { table.len() - 1 } else { 0 };
    let index = data.index(&token, &table).map_err(io)?;
    let title = format!("fcorr {} · score {}", verdict_word(run), score_text(run.score));
    (|| -> std::io::Result<()> {
        write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
             <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
            csp = content_security_policy(paged),
            title = escape(&title),
        )?;
        out.write_all(&body)?;
        for (k, part) in kept.iter_mut().enumerate() {
            data::write_block(out, &format!("fcorr-p{k}"), |out| part.copy_block(0, out))?;
        }
        data::write_block(out, data::INDEX_ID, |out| out.write_all(index.as_bytes()))?;
        // The script comes before the detail blocks: it starts inflating the list while the
        // parser is still reading the (much bigger) details, which it reads only when a case is opened.
        writeln!(out, "<script>{SCRIPT}</script>")?;
        for (k, part) in kept.iter_mut().enumerate() {
            for j in 0..part.details() {
                data::write_block(out, &format!("fcorr-p{k}-d{j}"), |out| part.copy_block(1 + j, out))?;
            }
        }
        out.write_all(b"</body>\n</html>\n")
    })()
    .map_err(io)?;
    Ok(files)
}

/// A compressed part, in the page's memory or in its sibling file (`report-files/page-K.js`).
enum Placed {
    Page(data::Encoded),
    /// `file` as the page names it, `path` where it is now (the staging folder), `ids` its
    /// [`data::PageData::id_filter`].
    File {
        n: usize,
        counts: [usize; 6],
        file: String,
        path: PathBuf,
        ids: Option<String>,
    },
}

/// Compresses `batch`'s parts (part `first` onwards), each on its own thread but the first, into
/// the spool `spool` gives for its number; results in order.
fn encode_all(
    data: &data::PageData,
    batch: &[Vec<u32>],
    first: usize,
    spool: impl Fn(usize) -> std::io::Result<data::Spool> + Sync,
) -> Vec<std::io::Result<data::Encoded>> {
    let encode = |j: usize, part: &[u32]| data.encode(part, spool(first + j)?);
    std::thread::scope(|scope| {
        let others: Vec<_> = batch
            .iter()
            .enumerate()
            .skip(1)
            .map(|(j, part)| scope.spawn(move || super::with_cpu(|| encode(j, part))))
            .collect();
        let first = batch.first().map(|part| encode(0, part));
        first
            .into_iter()
            .chain(others.into_iter().map(|h| match h.join() {
                Ok((encoded, cpu)) => {
                    super::add_helper_cpu(cpu);
                    encoded
                }
                Err(_) => Err(std::io::Error::other("a thread compressing the page's data panicked")),
            }))
            .collect()
    })
}

/// Writes part `k` as `page-K.js` in the pager's folder; returns the name the page loads it by
/// and the file's path. The file calls the page's `fcorrPart` with the token, the list block and
/// the detail blocks ([`read_part`] reads it back).
fn write_part(
    pager: &Pager,
    token: &str,
    k: usize,
    part: &mut data::Encoded,
) -> Result<(String, PathBuf), RenderError> {
    let name = format!("page-{k}.js");
    let path = pager.dir.join(&name);
    super::write_atomic_with(&path, |w| {
        (|| -> std::io::Result<()> {
            write!(w, "fcorrPart({k},\"{token}\",\"")?;
            part.copy_block(0, w)?;
            w.write_all(b"\",[")?;
            for j in 0..part.details() {
                w.write_all(if j == 0 { b"\"" } else { b",\"" })?;
                part.copy_block(1 + j, w)?;
                w.write_all(b"\"")?;
            }
            w.write_all(b"]);\n")
        })()
        .map_err(|source| RenderError::Format { format: "a sibling file of the HTML page", source })
    })?;
    Ok((format!("{FILES_DIR}/{name}"), path))
}

/// The blocks of a part [`write_part`] wrote, for a page that holds every part after all.
/// Neither the token nor base64 has a `"`, so the quoted strings are, in order: the token, the
/// list block, the detail blocks.
fn read_part(path: &Path, n: usize, counts: [usize; 6]) -> std::io::Result<data::Encoded> {
    let text = std::fs::read_to_string(path)?;
    let blocks: Vec<String> = text.split('"').skip(1).step_by(2).skip(1).map(str::to_string).collect();
    if blocks.is_empty() {
        return Err(std::io::Error::other(format!("{} has no list block", path.display())));
    }
    Ok(data::Encoded::of_blocks(blocks, n, counts))
}

/// Ties sibling files to the page that loads them: the same run rendered with the same cap gives
/// the same token (and the same files), another run or cap another one.
fn page_token(run: &Run, cap: Option<u64>) -> String {
    let mut hash = Sha256::new();
    for part in [&run.started_at, &run.fcorr_version, &run.totals.total.to_string(), &format!("{cap:?}")] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Everything in `<body>` before the data: header, what is gone since the baseline, charts, suite cards, the test list's frame,
/// the no-script failures and the footer.
fn write_body(run: &Run, env: &ReportEnv, out: &mut dyn Write) -> std::io::Result<()> {
    write_header(run, env, out)?;
    since_baseline::write_gone(run, out)?;
    out.write_all(b"<section class=\"charts\" aria-label=\"Charts\">\n")?;
    out.write_all(charts::status_donut(&run.totals).as_bytes())?;
    out.write_all(charts::trend(run).as_bytes())?;
    out.write_all(charts::duration_histogram(run).as_bytes())?;
    out.write_all(charts::suite_scores(run).as_bytes())?;
    out.write_all(charts::slowest(run, 10).as_bytes())?;
    out.write_all(b"</section>\n")?;
    write_suites(run, out)?;
    out.write_all(
        b"<section id=\"tests\" class=\"tests\" aria-label=\"Tests\" hidden>\n\
<div class=\"toolbar\"><div id=\"chips\" class=\"chips\" role=\"group\" aria-label=\"Status\"></div>\
<input id=\"search\" type=\"search\" placeholder=\"Search name, file, message  ( / )\" aria-label=\"Search\" autocomplete=\"off\">\
<label>Sort <select id=\"sort\"><option value=\"status\">status</option><option value=\"duration\">duration</option><option value=\"name\">name</option></select></label>\
<label>Group <select id=\"group\"><option value=\"none\">none</option><option value=\"suite\">suite</option><option value=\"file\">file</option><option value=\"tag\">tag</option><option value=\"category\">category</option></select></label>\
<span class=\"count\"><span id=\"shown-count\">0</span> shown</span></div>\n\
<p id=\"paged\" class=\"paged\" hidden></p>\n\
<div class=\"panes\"><div id=\"list\" class=\"list\" tabindex=\"0\" role=\"listbox\" aria-label=\"Test cases\"><div id=\"spacer\"></div><div id=\"rows\"></div></div>\
<aside id=\"detail\" class=\"detail\" aria-live=\"polite\"><p class=\"muted\">Select a test to see its details.</p></aside></div>\n\
</section>\n",
    )?;
    write_static_failures(run, env, out)?;
    out.write_all(b"<footer class=\"muted\">")?;
    // Readable in UTC as written; the script shows it in the reader's own time zone.
    write!(
        out,
        "fcorr {} · started <time datetime=\"{}\">{}</time>",
        escape(&run.fcorr_version),
        escape(&run.started_at),
        escape(&super::filters::timestamp(&run.started_at))
    )?;
    out.write_all(b"</footer>\n")
}

/// `default-src 'none'` plus the hashes of the page's own style and script: injected markup can
/// neither run script, load anything nor style itself.
/// With sibling files, `'strict-dynamic'` lets that script (and only it: markup the parser
/// meets gets nothing from it) add the `<script src="report-files/page-K.js">` elements that
/// load them; `fetch` cannot read files next to a page opened from disk.
fn content_security_policy(paged: bool) -> String {
    use base64::Engine;
    let hash = |text: &str| base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'{}; img-src data:; base-uri 'none'; form-action 'none'",
        hash(STYLE),
        hash(SCRIPT),
        if paged { " 'strict-dynamic'" } else { "" }
    )
}

fn verdict_word(run: &Run) -> &'static str {
    match run.verdict.outcome {
        // Same words as the terminal and Markdown: a run no gate judged is not a verified pass.
        RunOutcome::Pass if run.verdict.gates.is_empty() => "PASS (no gates)",
        RunOutcome::Pass => "PASS",
        RunOutcome::Fail => "FAIL",
        RunOutcome::UsageError => "INPUT ERROR",
        RunOutcome::HarnessError => "HARNESS ERROR",
    }
}

fn score_text(score: Option<f64>) -> String {
    score.map(super::filters::format_number).unwrap_or_else(|| "-".into())
}

fn write_header(run: &Run, env: &ReportEnv, out: &mut dyn Write) -> std::io::Result<()> {
    let outcome = match run.verdict.outcome {
        RunOutcome::Pass => "pass",
        RunOutcome::Fail => "fail",
        RunOutcome::UsageError | RunOutcome::HarnessError => "error",
    };
    let t = &run.totals;
    write!(
        out,
        "<header class=\"verdict {outcome}\"><h1>fcorr: {} <span class=\"score\">score {}</span> \
         <span class=\"health\">{}</span></h1>\n<p class=\"totals\"><b>{}</b> tests: \
         <span class=\"s-passed\">{} passed</span>, <span class=\"s-failed\">{} failed</span>, \
         <span class=\"s-error\">{} errors</span>, <span class=\"s-timeout\">{} timed out</span>, \
         <span class=\"s-flaky\">{} flaky</span>, <span class=\"s-skipped\">{} skipped</span> · {}</p>\n",
        verdict_word(run),
        escape(&score_text(run.score)),
        run.health.map_or("", |h| h.label()),
        t.total,
        t.passed,
        t.failed,
        t.error,
        t.timeout,
        t.flaky,
        t.skipped,
        escape(&super::filters::format_duration(run.duration_ms as f64)),
    )?;
    let mut links = Vec::new();
    if let Some(url) = env.run_url.as_deref().and_then(safe_url) {
        links.push(format!("<a href=\"{}\">CI run</a>", escape(url)));
    }
    if let Some(git) = &run.git
        && let Some(commit) = &git.commit
    {
        links.push(format!("commit <code>{}</code>", escape(commit.get(..12).unwrap_or(commit))));
    }
    match &run.comparison {
        Some(c) => {
            let against = c.baseline.commit.as_deref().map(|s| s.get(..12).unwrap_or(s)).unwrap_or("a saved run");
            // Signed with its arrow, as in the Markdown reports: a bare "score 12.5" reads as the score.
            let delta = c.score_delta.map(|d| format!(" (score {})", super::filters::signed_delta(d, "")));
            links.push(format!("compared with <code>{}</code>{}", escape(against), delta.unwrap_or_default()));
        }
        None => links.push("no baseline".into()),
    }
    writeln!(out, "<p class=\"muted\">{}</p>", links.join(" · "))?;
    if let Some(c) = &run.comparison {
        since_baseline::write_cautions(c, out)?;
    }
    // Why it failed, as the Markdown reports say it: critical failures first, with their case.
    let why = super::lead::why(run);
    if !why.is_empty() {
        out.write_all(b"<ul class=\"reasons\">")?;
        for item in &why {
            write!(out, "<li><b>{}</b>: ", item.gate.label())?;
            if let Some((suite, case)) = item.case {
                write!(out, "{} › <code>{}</code>: ", escape(&suite.name), escape(&case.name))?;
            } else if let Some(suite) = item.suite {
                write!(out, "{}: ", escape(suite))?;
            }
            out.write_all(with_code(&item.message).as_bytes())?;
            out.write_all(b"</li>")?;
        }
        out.write_all(b"</ul>")?;
    }
    out.write_all(b"</header>\n")
}

fn write_suites(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(b"<section class=\"suites\" aria-label=\"Suites\">\n")?;
    for suite in &run.suites {
        write_suite_card(suite, out)?;
    }
    out.write_all(b"</section>\n")
}

fn write_suite_card(suite: &Suite, out: &mut dyn Write) -> std::io::Result<()> {
    let c = &suite.counts;
    let framework = suite
        .detection
        .as_ref()
        .map(|d| format!("{} / {}", d.language, d.framework))
        .unwrap_or_else(|| kind_name(suite).to_string());
    write!(
        out,
        "<article class=\"card st-{status}\"><h3>{name}</h3><p class=\"muted\">{framework} · {status} · score {score} {policy}</p>\
         <p>{passed} passed, {failed} failed, {error} errors, {skipped} skipped</p>",
        status = suite.status.label(),
        name = escape(&suite.name),
        framework = escape(&framework),
        score = escape(&super::filters::format_number(suite.score.value)),
        policy = suite.score.policy.label(),
        passed = c.passed,
        failed = c.failed + c.timeout,
        error = c.error,
        skipped = c.skipped,
    )?;
    if let Some(error) = &suite.error {
        write!(out, "<p class=\"error\">{}</p>", escape(&error.message))?;
    }
    if !suite.left_out.is_empty() {
        out.write_all(b"<p class=\"left-out\">Not run (found, left out):</p><ul class=\"left-out\">")?;
        for left in &suite.left_out {
            write!(out, "<li><code>{}</code>: {}</li>", escape(&left.path), escape(&left.reason))?;
        }
        out.write_all(b"</ul>")?;
    }
    if let Some(grid) = crate::report::eval::grid(suite, GRID_DISAGREEMENTS) {
        write_grid(&grid, out)?;
    }
    if !suite.phases.is_empty() {
        out.write_all(b"<ul class=\"phases\">")?;
        for phase in &suite.phases {
            let status = match phase.status {
                PhaseStatus::Passed => "passed",
                PhaseStatus::Failed => "failed",
                PhaseStatus::Timeout => "timeout",
                PhaseStatus::Skipped => "skipped",
                PhaseStatus::Error => "error",
                PhaseStatus::Cancelled => "cancelled",
            };
            write!(
                out,
                "<li class=\"ph-{status}\"><details><summary>{kind} <b>{status}</b> {time}</summary><code>{cmd}</code>",
                kind = phase.kind.label(),
                time = escape(&super::filters::format_duration(phase.duration_ms as f64)),
                cmd = escape(&phase.command),
            )?;
            if let Some(note) = &phase.note {
                write!(out, "<p>{}</p>", escape(note))?;
            }
            if !phase.log_tail.is_empty() {
                write!(out, "<pre>{}</pre>", escape(&phase.log_tail))?;
            }
            out.write_all(b"</details></li>")?;
        }
        out.write_all(b"</ul>")?;
    }
    out.write_all(b"</article>\n")
}

/// Disagreeing cases listed under a suite's comparison grid (the rest are counted).
const GRID_DISAGREEMENTS: usize = 50;

/// The comparison grid of an eval suite that asked several systems or through several prompts:
/// one row per (system, prompt) with pass rate, score, latency, tokens and cost, then the cases
/// the rows disagree on with each row's outcome. Static HTML, so it shows without the script.
fn write_grid(grid: &crate::report::eval::Grid, out: &mut dyn Write) -> std::io::Result<()> {
    write!(
        out,
        "<table class=\"grid\"><thead><tr><th>{}</th><th>Passed</th><th>Pass rate</th><th>{}</th><th>Errors</th><th>Latency</th><th>Tokens</th><th>Cost</th></tr></thead><tbody>",
        escape(grid.heading),
        escape(&grid.score_label)
    )?;
    for c in &grid.columns {
        write!(out, "<tr><th scope=\"row\">{}</th>", escape(&c.label))?;
        for cell in c.cells() {
            write!(out, "<td>{}</td>", escape(&cell))?;
        }
        out.write_all(b"</tr>")?;
    }
    out.write_all(b"</tbody></table>")?;
    if grid.disagreements_count == 0 {
        write!(out, "<p class=\"muted\">All {} cases agree across the grid.</p>", grid.cases)?;
        return Ok(());
    }
    write!(
        out,
        "<details class=\"disagree\" open><summary>{} of {} cases disagree</summary><table class=\"grid\"><thead><tr><th>Case</th>",
        grid.disagreements_count, grid.cases
    )?;
    for c in &grid.columns {
        write!(out, "<th>{}</th>", escape(&c.label))?;
    }
    out.write_all(b"</tr></thead><tbody>")?;
    for d in &grid.disagreements {
        write!(out, "<tr><th scope=\"row\"><code>{}</code></th>", escape(&d.case))?;
        for outcome in &d.outcomes {
            write!(out, "<td>{}</td>", escape(outcome))?;
        }
        out.write_all(b"</tr>")?;
    }
    out.write_all(b"</tbody></table>")?;
    let more = grid.disagreements_count.saturating_sub(grid.disagreements.len());
    if more > 0 {
        write!(out, "<p>… and {more} more: see results.json.</p>")?;
    }
    out.write_all(b"</details>")
}

/// The first failures as plain HTML inside `<noscript>`: the page still says what broke when
/// scripts are off (a mail client's preview, a locked-down viewer).
fn write_static_failures(run: &Run, env: &ReportEnv, out: &mut dyn Write) -> std::io::Result<()> {
    let failures: Vec<_> = run
        .suites
        .iter()
        .flat_map(|s| s.cases.iter().map(move |c| (s, c)))
        .filter(|(_, c)| c.status.is_failure())
        .collect();
    out.write_all(b"<noscript><section class=\"static\"><h2>Failures</h2>")?;
    if failures.is_empty() {
        out.write_all(b"<p>No failures.</p>")?;
    }
    out.write_all(b"<ul>")?;
    for (suite, case) in failures.iter().take(STATIC_FAILURES) {
        write!(out, "<li><b>{}</b> › {}", escape(&suite.name), escape(&case.name))?;
        if let Some(file) = &case.file {
            let line = case.line.map(|l| format!(":{l}")).unwrap_or_default();
            let code = format!("<code>{}{}</code>", escape(file), line);
            // Links are percent-encoded http(s) URLs (`report::links`); escaped again for the attribute.
            match env.links.as_ref().and_then(|l| l.file_url(suite, file, case.line)) {
                Some(url) => write!(out, " <a href=\"{}\">{code}</a>", escape(&url))?,
                None => write!(out, " {code}")?,
            }
        }
        if let Some(message) = case.message() {
            write!(out, "<pre>{}</pre>", escape(message))?;
        }
        out.write_all(b"</li>")?;
    }
    out.write_all(b"</ul>")?;
    if failures.len() > STATIC_FAILURES {
        write!(out, "<p>… and {} more: see results.json.</p>", failures.len() - STATIC_FAILURES)?;
    }
    out.write_all(b"<p>Turn on JavaScript for the full, searchable list.</p></section></noscript>\n")
}

/// The suite's kind as `fcorr.toml` spells it.
fn kind_name(suite: &Suite) -> String {
    serde_json::to_value(suite.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Only `http(s)` links are ever written, so a `javascript:` URL in the data stays text.
fn safe_url(url: &str) -> Option<&str> {
    let lower = url.trim_start().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then_some(url)
}

/// A message as HTML text, its `code spans` as `<code>` (fcorr's reasons write names that way).
fn with_code(text: &str) -> String {
    super::filters::code_spans(text)
        .into_iter()
        .map(|span| match span {
            super::filters::Span::Text(t) => escape(t),
            super::filters::Span::Code(c) => format!("<code>{}</code>", escape(c)),
        })
        .collect()
}

/// Escapes text for HTML text and double- or single-quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Status code shared by the embedded data and the page's script.
pub(crate) fn status_code(status: CaseStatus) -> u8 {
    match status {
        CaseStatus::Failed => 0,
        CaseStatus::Error => 1,
        CaseStatus::Timeout => 2,
        CaseStatus::Flaky => 3,
        CaseStatus::Skipped => 4,
        CaseStatus::Passed => 5,
    }
}

/// comrak options matching GitHub's rendering; tests parse fcorr's Markdown with them.
pub fn options() -> comrak::Options<'static> {
    let mut options = comrak::Options::default();
    options.extension.table = true;
    options.extension.strikethrough = true;
    options.extension.autolink = true;
    options.extension.tasklist = true;
    options.extension.footnotes = true;
    // `> [!NOTE]` blocks, as GitHub renders them in summaries and comments.
    options.extension.alerts = true;
    options.render.r#unsafe = false;
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_both_quote_styles() {
        assert_eq!(escape("<a href='x' b=\"y\">&</a>"), "&lt;a href=&#39;x&#39; b=&quot;y&quot;&gt;&amp;&lt;/a&gt;");
    }

    #[test]
    fn only_http_urls_become_links() {
        assert_eq!(safe_url("https://ci/run/1"), Some("https://ci/run/1"));
        assert_eq!(safe_url(" JavaScript:alert(1)"), None);
        assert_eq!(safe_url("data:text/html,x"), None);
    }

    #[test]
    fn test_data_is_escaped_in_text_attributes_and_urls() {
        use crate::model::{Case, CaseStatus, Suite, SuiteKind};
        let payload = "\"'><img src=x onerror=alert(1)>&amp;";
        let mut suite = Suite::new("s", payload, SuiteKind::Project);
        let mut case = Case { name: payload.into(), status: CaseStatus::Failed, ..Case::default() };
        case.duration_ms = Some(5.0);
        case.set_message(Some(payload.into()));
        suite.cases.push(case);
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let env = ReportEnv { run_url: Some(format!("https://ci.example/run?x={payload}")), ..ReportEnv::default() };
        let mut page = Vec::new();
        write_page(&run, &env, &mut page, None).unwrap();
        let page = String::from_utf8(page).unwrap();
        let escaped = "&quot;&#39;&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;";
        // Text (suite card, no-script list), attributes (the slowest table's title) and the URL.
        assert!(page.contains(&format!("<h3>{escaped}</h3>")), "text");
        assert!(page.contains(&format!("title=\"{escaped} › {escaped}\"")), "attribute");
        assert!(page.contains(&format!("<a href=\"https://ci.example/run?x={escaped}\">CI run</a>")), "URL");
        assert!(!page.contains("<img"), "no markup from the data");
    }

    #[test]
    fn sizes_read_as_bytes_with_binary_units() {
        assert_eq!(parse_size("0"), Some(0));
        assert_eq!(parse_size(" 300 "), Some(300));
        assert_eq!(parse_size("512k"), Some(512 * 1024));
        assert_eq!(parse_size("25MB"), Some(25 << 20));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        for bad in ["", "M", "-1", "1.5M", "12 bytes", "99999999999999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    /// A run of `passing` passed cases with some output each, and `failing` failed ones.
    fn run_of(passing: usize, failing: usize) -> Run {
        use crate::model::{Case, CaseStatus, Suite, SuiteKind};
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        for i in 0..passing + failing {
            let status = if i < failing { CaseStatus::Failed } else { CaseStatus::Passed };
            let mut case = Case { name: format!("test_{i}").into(), status, ..Case::default() };
            case.id = format!("id{i}").into();
            case.extra_mut().output =
                Some(format!("output of {i}: {}", i.wrapping_mul(2_654_435_761) % 1_000_003).into());
            suite.cases.push(case);
        }
        Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn past_its_cap_the_page_keeps_failures_and_pages_the_rest_into_sibling_files() {
        let run = run_of(3 * data::PART_CASES / 2, 40);
        let dir = tempfile::tempdir().unwrap();
        let env = ReportEnv { html_max_bytes: Some(64 * 1024), ..ReportEnv::default() };
        let written = HtmlPage.write_into(&run, &env, dir.path()).unwrap();
        assert_eq!(written, [dir.path().join("report.html"), dir.path().join(FILES_DIR)]);
        assert_eq!(names(dir.path()), ["report-files", "report.html"], "no staging folder left behind");
        assert_eq!(names(&dir.path().join(FILES_DIR)), ["page-1.js", "page-2.js"]);
        let page = std::fs::read(dir.path().join("report.html")).unwrap();
        assert!(page.len() <= 64 * 1024, "{} bytes", page.len());
        let text = String::from_utf8_lossy(&page);
        assert!(text.contains("'strict-dynamic'"), "the page may load its sibling files");
        assert!(!text.contains("id=\"fcorr-p1\""), "part 1 is not in the page");
        // The index names the files and counts what they hold; part 0 (the failures) stays.
        let index = data_blocks(&page);
        assert_eq!(index["parts"][0]["counts"][0], 40);
        assert_eq!(index["parts"][0]["file"], serde_json::Value::Null);
        assert_eq!(index["parts"][1]["file"], "report-files/page-1.js");
        assert_eq!(index["parts"][2]["n"], data::PART_CASES / 2);
        let token = index["token"].as_str().unwrap().to_string();
        let sibling = std::fs::read_to_string(dir.path().join("report-files/page-2.js")).unwrap();
        assert!(
            sibling.starts_with(&format!("fcorrPart(2,\"{token}\",\"")) && sibling.ends_with("]);\n"),
            "{}",
            &sibling[..60]
        );

        // Rendered again under no cap: one file, and the earlier sibling files are gone.
        let env = ReportEnv { html_max_bytes: Some(0), ..ReportEnv::default() };
        let written = HtmlPage.write_into(&run, &env, dir.path()).unwrap();
        assert_eq!(written, [dir.path().join("report.html")]);
        assert_eq!(names(dir.path()), ["report.html"]);
        let index = data_blocks(&std::fs::read(dir.path().join("report.html")).unwrap());
        assert!(index["parts"].as_array().unwrap().iter().all(|p| p.get("file").is_none()), "{index}");
    }

    #[test]
    fn a_page_under_its_cap_is_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let written = HtmlPage.write_into(&run_of(500, 5), &ReportEnv::default(), dir.path()).unwrap();
        assert_eq!(written, [dir.path().join("report.html")]);
        assert_eq!(names(dir.path()), ["report.html"]);
        let text = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        assert!(!text.contains("strict-dynamic"), "no script may be added to a page without sibling files");
    }

    #[test]
    fn a_page_whose_parts_went_through_files_is_the_page_written_in_memory() {
        // Two parts past the failures: with a folder, part 0 is kept in a temporary file and parts
        // 1 and 2 go to sibling files as soon as they are compressed, then are read back since
        // the page is under its cap. Without a folder, all of it stays in memory.
        let run = run_of(data::PART_CASES + 10, 40);
        let dir = tempfile::tempdir().unwrap();
        let written = HtmlPage.write_into(&run, &ReportEnv::default(), dir.path()).unwrap();
        assert_eq!(written, [dir.path().join("report.html")]);
        assert_eq!(names(dir.path()), ["report.html"], "no sibling or temporary file left");
        let through_files = std::fs::read(dir.path().join("report.html")).unwrap();
        let mut in_memory = Vec::new();
        HtmlPage.write(&run, &ReportEnv::default(), &mut in_memory).unwrap();
        // Byte for byte but the index block, whose token depends on the cap (none without a folder).
        let without_index = |page: &[u8]| {
            let text = std::str::from_utf8(page).unwrap();
            let start = text.find(&format!("id=\"{}\">", data::INDEX_ID)).unwrap();
            let end = start + text[start..].find("</script>").unwrap();
            format!("{}{}", &text[..start], &text[end..])
        };
        assert_eq!(without_index(&through_files), without_index(&in_memory));
        let index = |page: &[u8]| {
            let mut index = data_blocks(page);
            index["token"] = serde_json::Value::Null;
            index
        };
        assert_eq!(index(&through_files), index(&in_memory));
        assert_eq!(index(&through_files)["parts"].as_array().unwrap().len(), 3);
    }

    /// The page's index block, decoded.
    fn data_blocks(page: &[u8]) -> serde_json::Value {
        use base64::Engine;
        use std::io::Read;
        let page = std::str::from_utf8(page).unwrap();
        let start = page.find(&format!("id=\"{}\">", data::INDEX_ID)).unwrap() + data::INDEX_ID.len() + 6;
        let text = &page[start..start + page[start..].find("</script>").unwrap()];
        let compressed = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
        let mut json = String::new();
        flate2::read::ZlibDecoder::new(&compressed[..]).read_to_string(&mut json).unwrap();
        serde_json::from_str(&json).unwrap()
    }

    /// A run and its baseline: suite `app` kept with one failing test (`gone_fail`) and one
    /// passing test gone, suite `old <b>` (3 tests, 2 failing there) gone altogether.
    fn run_with_vanished() -> Run {
        use crate::model::{Case, CaseStatus, Suite, SuiteKind};
        let suite = |id: &str, cases: &[(&str, CaseStatus)]| {
            let mut suite = Suite::new(id, id, SuiteKind::Import);
            suite.cases = cases
                .iter()
                .map(|(name, status)| Case { name: (*name).into(), status: *status, ..Case::default() })
                .collect();
            suite.finalize_cases();
            suite
        };
        let at = time::OffsetDateTime::UNIX_EPOCH;
        let baseline = Run::assemble(
            vec![
                suite(
                    "app",
                    &[("ok", CaseStatus::Passed), ("gone_fail", CaseStatus::Failed), ("gone_pass", CaseStatus::Passed)],
                ),
                suite(
                    "old <b>",
                    &[("o1", CaseStatus::Failed), ("o2", CaseStatus::Timeout), ("o3", CaseStatus::Passed)],
                ),
            ],
            at,
            None,
            None,
        );
        let mut run = Run::assemble(vec![suite("app", &[("ok", CaseStatus::Passed)])], at, None, None);
        let info = crate::compare::BaselineInfo { source: "file:base".into(), ..Default::default() };
        run.comparison = Some(crate::compare::compare(&run, &baseline, info));
        run
    }

    /// What vanished since the baseline shows in the page, as in the terminal and the Markdown
    /// reports: each suite gone with its tests and failures there, each failing test gone.
    #[test]
    fn what_is_gone_since_the_baseline_is_listed_with_its_baseline_counts() {
        let mut page = Vec::new();
        write_page(&run_with_vanished(), &ReportEnv::default(), &mut page, None).unwrap();
        let page = String::from_utf8(page).unwrap();
        let start = page.find("<section class=\"gone\"").expect("a section for what is gone");
        let end = start + page[start..].find("</section>").expect("the section ends") + "</section>".len();
        insta::assert_snapshot!("html_gone_since_baseline", &page[start..end]);
        // Without a baseline, or with nothing gone, there is no such section.
        let mut page = Vec::new();
        write_page(&run_of(3, 1), &ReportEnv::default(), &mut page, None).unwrap();
        assert!(!String::from_utf8(page).unwrap().contains("class=\"gone\""));
    }

    /// The header's score change is signed either way: `{:+}` on the formatted text did nothing,
    /// so a gain of 12.5 read "score 12.5", as if it were the score.
    #[test]
    fn the_score_change_against_the_baseline_is_signed_both_ways() {
        let mut run = run_with_vanished();
        for (delta, shown) in [(12.5, "(score +12.5 ↑)"), (-3.0, "(score -3 ↓)"), (0.0, "(score ±0)")] {
            if let Some(c) = run.comparison.as_mut() {
                c.score_delta = Some(delta);
            }
            let mut page = Vec::new();
            write_page(&run, &ReportEnv::default(), &mut page, None).unwrap();
            let page = String::from_utf8(page).unwrap();
            assert!(page.contains(&format!("compared with <code>a saved run</code> {shown}")), "{delta}");
        }
    }

    #[test]
    fn csp_hashes_the_shipped_style_and_script() {
        let csp = content_security_policy(false);
        assert!(csp.starts_with("default-src 'none';"), "{csp}");
        assert_eq!(csp.matches("'sha256-").count(), 2, "{csp}");
        assert!(!csp.contains("unsafe"), "{csp}");
    }
}
