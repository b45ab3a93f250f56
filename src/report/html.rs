//! `report.html`: the summary Markdown rendered with comrak into one self-contained page.
//!
//! GFM extensions on (tables, strikethrough, autolinks, task lists, footnotes, alerts). Raw HTML passes
//! only when it is made of the few structural tags fcorr's templates use (`<details>`,
//! `<summary>`, `<br>`, `<sub>`); any other raw HTML is shown as text, so nothing a test name
//! contains can inject markup. Inline stylesheet, no scripts, no external assets: readable offline.

use std::io::Write;

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

    fn queue_rank(&self) -> u8 {
        1
    }

    fn uses_template_context(&self) -> bool {
        true
    }

    fn write(&self, run: &Run, env: &ReportEnv, out: &mut dyn Write) -> Result<(), String> {
        // The page is not bound by GitHub's summary limit, only by what a browser loads well.
        let markdown = render_within(run, env, SUMMARY_TEMPLATE, Budget::PAGE)?;
        out.write_all(page(run, &markdown).as_bytes()).map_err(|e| e.to_string())
    }
}

/// comrak options used for every rendering: GitHub-flavoured, raw HTML omitted.
///
/// Tests and other callers that only parse use these; the page itself is rendered by [`to_html`],
/// which lets allow-listed raw HTML through.
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
h2,h3,h4{border-bottom:1px solid var(--line);padding-bottom:4px}sub{color:var(--muted)}\
.markdown-alert{padding:2px 1rem;margin:1rem 0;border-left:4px solid #0969da}\
.markdown-alert-warning{border-left-color:#9a6700}.markdown-alert-caution{border-left-color:#cf222e}\
.markdown-alert-title{font-weight:600;margin:6px 0}";

/// The full page around the rendered Markdown.
pub fn page(run: &Run, markdown: &str) -> String {
    let body = to_html(markdown);
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

/// Structural tags the templates emit; raw HTML made only of these (and text) is kept.
fn allowed_tags() -> &'static regex::Regex {
    static TAGS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    // A literal pattern; it compiles.
    TAGS.get_or_init(|| {
        regex::Regex::new(
            r"(?i)</?(?:details|summary|sub|sup|b|strong|em|code|kbd)>|<details open>|<br\s*/?>|<!--[^<>]*-->",
        )
        .expect("valid regex")
    })
}

/// True when `html` is only allowed tags and text (text has no `<` once the tags are removed).
fn is_allowed_html(html: &str) -> bool {
    !allowed_tags().replace_all(html, "").contains('<')
}

/// Renders Markdown to HTML, passing through allow-listed raw HTML and escaping the rest.
pub fn to_html(markdown: &str) -> String {
    use comrak::nodes::NodeValue;
    let mut options = options();
    options.render.r#unsafe = true;
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, markdown, &options);
    for node in root.descendants() {
        let mut ast = node.data.borrow_mut();
        let replacement = match &ast.value {
            NodeValue::HtmlInline(html) if !is_allowed_html(html) => Some(NodeValue::Text(html.clone().into())),
            NodeValue::HtmlBlock(block) if !is_allowed_html(&block.literal) => {
                let mut escaped = block.clone();
                escaped.literal = format!("<p>{}</p>\n", escape_html(block.literal.trim_end()));
                Some(NodeValue::HtmlBlock(escaped))
            }
            _ => None,
        };
        if let Some(value) = replacement {
            ast.value = value;
        }
    }
    let mut html = String::new();
    // Writing into a String cannot fail.
    comrak::format_html(root, &options, &mut html).expect("formatting into a String");
    html
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structural_tags_pass_and_other_html_is_escaped() {
        let md = "<details open><summary>Failures &amp; more</summary>\n\ntext <script>alert(1)</script>\n\n</details>\n\n<img src=x onerror=alert(1)>\n";
        let html = to_html(md);
        assert!(html.contains("<details open><summary>Failures &amp; more</summary>"), "{html}");
        assert!(html.contains("</details>"), "{html}");
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("<img") && html.contains("&lt;img"), "{html}");
    }
}
