//! `report.html`: the summary Markdown rendered with comrak into one self-contained page.
//!
//! GFM extensions on (tables, strikethrough, autolinks, task lists, footnotes); raw HTML from the
//! Markdown is not passed through (comrak's `unsafe` stays off), so nothing a test name contains
//! can inject markup. Inline stylesheet, no scripts, no external assets: readable offline.

use super::budget::Budget;
use super::markdown::{SUMMARY_TEMPLATE, render_within};
use super::{ReportEnv, Reporter};
use crate::model::Run;

/// Self-contained HTML page.
pub struct HtmlPage;

impl Reporter for HtmlPage {
    fn name(&self) -> &'static str {
        "html"
    }

    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, run: &Run, env: &ReportEnv) -> Result<Vec<u8>, String> {
        // The page is not bound by GitHub's summary limit, only by what a browser loads well.
        let markdown = render_within(run, env, SUMMARY_TEMPLATE, Budget::PAGE)?;
        Ok(page(run, &markdown).into_bytes())
    }
}

/// comrak options used for every rendering: GitHub-flavoured, raw HTML omitted.
pub fn options() -> comrak::Options<'static> {
    let mut options = comrak::Options::default();
    options.extension.table = true;
    options.extension.strikethrough = true;
    options.extension.autolink = true;
    options.extension.tasklist = true;
    options.extension.footnotes = true;
    options.render.r#unsafe = false;
    options
}

const STYLE: &str = "\
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--code:#f6f8fa}\
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--code:#151b23}}\
body{font:15px/1.5 -apple-system,BlinkMacSystemFont,\"Segoe UI\",Helvetica,Arial,sans-serif;color:var(--fg);\
background:var(--bg);max-width:1100px;margin:2rem auto;padding:0 1rem}\
table{border-collapse:collapse;margin:1rem 0;display:block;overflow-x:auto}\
th,td{border:1px solid var(--line);padding:4px 10px;text-align:left}\
th{background:var(--code)}\
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);border-radius:4px}\
code{padding:1px 4px}pre{padding:10px;overflow-x:auto}pre code{padding:0}\
blockquote{margin:0;padding:0 1rem;color:var(--muted);border-left:4px solid var(--line)}\
h2,h3,h4{border-bottom:1px solid var(--line);padding-bottom:4px}sub{color:var(--muted)}";

/// The full page around the rendered Markdown.
pub fn page(run: &Run, markdown: &str) -> String {
    let body = comrak::markdown_to_html(markdown, &options());
    let title = format!(
        "fcorr {} · score {}",
        match run.verdict.outcome {
            crate::model::Outcome::Pass => "PASS",
            crate::model::Outcome::Fail => "FAIL",
            crate::model::Outcome::UsageError => "INPUT ERROR",
            crate::model::Outcome::HarnessError => "HARNESS ERROR",
        },
        run.score.map(super::filters::format_number).unwrap_or_else(|| "-".into())
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        escape_html(&title)
    )
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
