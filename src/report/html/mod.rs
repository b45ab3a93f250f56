//! `report.html`: one self-contained, interactive page for people to open.
//!
//! fcorr renders the static parts itself (verdict header, inline SVG charts, suite cards, a
//! no-script list of failures) and embeds every case as zlib-compressed, base64-encoded JSON
//! blocks (see `data`) that a small script inflates with the browser's `DecompressionStream`
//! and shows as a filterable, virtualised list. No network, no CDN; a Content-Security-Policy with hashes of the one style
//! sheet and the one script means nothing else can run, whatever the test data holds.

mod charts;
mod data;

use std::io::Write;

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

    fn write(&self, run: &Run, env: &ReportEnv, out: &mut dyn Write) -> Result<(), RenderError> {
        write_page(run, env, out).map_err(|source| RenderError::Format { format: "the HTML page", source })
    }
}

fn write_page(run: &Run, env: &ReportEnv, out: &mut dyn Write) -> std::io::Result<()> {
    let title = format!("fcorr {} · score {}", verdict_word(run), score_text(run.score));
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        csp = content_security_policy(),
        title = escape(&title),
    )?;
    write_header(run, env, out)?;
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
    out.write_all(b"</footer>\n")?;
    let data = data::PageData::of(run, env.links.as_ref());
    data.write_list(out)?;
    // The script comes before the detail blocks: it starts inflating the list while the parser
    // is still reading the (much bigger) details, which it reads only when a case is opened.
    writeln!(out, "<script>{SCRIPT}</script>")?;
    data.write_details(out)?;
    out.write_all(b"</body>\n</html>\n")?;
    Ok(())
}

/// `default-src 'none'` plus the hashes of the page's own style and script: injected markup can
/// neither run script, load anything nor style itself.
fn content_security_policy() -> String {
    use base64::Engine;
    let hash = |text: &str| base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'",
        hash(STYLE),
        hash(SCRIPT)
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
            let delta = c.score_delta.map(|d| format!(" (score {:+})", super::filters::format_number(d)));
            links.push(format!("compared with <code>{}</code>{}", escape(against), delta.unwrap_or_default()));
        }
        None => links.push("no baseline".into()),
    }
    writeln!(out, "<p class=\"muted\">{}</p>", links.join(" · "))?;
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
    if let Some(grid) = crate::report::eval::grid(&suite.cases, GRID_DISAGREEMENTS) {
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
        "<table class=\"grid\"><thead><tr><th>{}</th><th>Passed</th><th>Pass rate</th><th>Score</th><th>Latency</th><th>Tokens</th><th>Cost</th></tr></thead><tbody>",
        escape(grid.heading)
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
        if let Some(message) = &case.message {
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
        case.message = Some(payload.into());
        suite.cases.push(case);
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let env = ReportEnv { run_url: Some(format!("https://ci.example/run?x={payload}")), ..ReportEnv::default() };
        let mut page = Vec::new();
        write_page(&run, &env, &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        let escaped = "&quot;&#39;&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;";
        // Text (suite card, no-script list), attributes (the slowest table's title) and the URL.
        assert!(page.contains(&format!("<h3>{escaped}</h3>")), "text");
        assert!(page.contains(&format!("title=\"{escaped} › {escaped}\"")), "attribute");
        assert!(page.contains(&format!("<a href=\"https://ci.example/run?x={escaped}\">CI run</a>")), "URL");
        assert!(!page.contains("<img"), "no markup from the data");
    }

    #[test]
    fn csp_hashes_the_shipped_style_and_script() {
        let csp = content_security_policy();
        assert!(csp.starts_with("default-src 'none';"), "{csp}");
        assert_eq!(csp.matches("'sha256-").count(), 2, "{csp}");
        assert!(!csp.contains("unsafe"), "{csp}");
    }
}
