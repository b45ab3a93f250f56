//! Text helpers for Markdown reports, also registered as minijinja filters for templates.
//!
//! Everything a test name or failure message passes through on its way into Markdown: table-cell
//! and inline-code escaping, fenced blocks that cannot be closed early, char-safe truncation,
//! durations and signed deltas with arrows.

use minijinja::{Environment, Value};

use crate::text::truncate_chars;

/// Registers every filter on a template environment.
pub(crate) fn register(env: &mut Environment<'_>) {
    env.add_filter("cell", |v: Value| escape_cell(&text_of(&v)));
    env.add_filter("summary", |v: Value| escape_summary(&text_of(&v)));
    env.add_filter("md", |v: Value| escape_with_code(&text_of(&v), false));
    env.add_filter("md_cell", |v: Value| escape_with_code(&text_of(&v), true));
    env.add_filter("code", |v: Value| inline_code(&text_of(&v), false));
    env.add_filter("code_cell", |v: Value| inline_code(&text_of(&v), true));
    env.add_filter("code_block", |v: Value, info: Option<String>| {
        code_block(&text_of(&v), info.as_deref().unwrap_or(""))
    });
    env.add_filter("truncate", |v: Value, max: usize| truncate_chars(&text_of(&v), max));
    env.add_filter("first_line", |v: Value| first_line(&text_of(&v)).to_string());
    env.add_filter("last_lines", |v: Value, n: usize| last_lines(&text_of(&v), n).to_string());
    env.add_filter("duration", |v: Option<f64>| v.map(format_duration).unwrap_or_else(|| "-".into()));
    env.add_filter("num", |v: Option<f64>| v.map(format_number).unwrap_or_else(|| "-".into()));
    env.add_filter("delta", |v: Option<f64>, unit: Option<String>| {
        v.map(|x| signed_delta(x, unit.as_deref().unwrap_or(""))).unwrap_or_default()
    });
    env.add_filter("duration_delta", |v: Option<f64>| v.map(duration_delta).unwrap_or_default());
    env.add_filter("status_icon", |v: Value| status_icon(&text_of(&v)));
    env.add_filter("short_sha", |v: Value| short_sha(&text_of(&v)));
    env.add_filter("timestamp", |v: Value| timestamp(&text_of(&v)));
    env.add_filter("link", |v: Value, url: Option<String>| link(&text_of(&v), url.as_deref()));
}

/// A link target safe to put in Markdown `[text](url)`: http(s), no spaces, parentheses or angle brackets.
pub(crate) fn safe_url(url: &str) -> Option<&str> {
    let ok = (url.starts_with("https://") || url.starts_with("http://"))
        && !url.chars().any(|c| {
            c.is_whitespace() || c.is_control() || matches!(c, '(' | ')' | '<' | '>' | '"' | '`' | '[' | ']' | '|')
        });
    ok.then_some(url)
}

/// `[text](url)` when `url` is a safe link, else `text` as it is (already escaped Markdown, such
/// as a code span): `{{ c.location|code|link(c.url) }}`.
pub(crate) fn link(text: &str, url: Option<&str>) -> String {
    match url.and_then(safe_url) {
        Some(url) if !text.is_empty() => format!("[{text}]({url})"),
        _ => text.to_string(),
    }
}

/// The text of a template value; none and undefined become empty.
fn text_of(v: &Value) -> String {
    if v.is_none() || v.is_undefined() { String::new() } else { v.to_string() }
}

/// Zero-width joiner put after an `@`, so `@someone` in a test message shows as written but
/// does not ping (or notify) that account.
const NO_PING: char = '\u{200D}';

/// Escapes text for one GFM table cell (or any inline spot: a list item, a heading): pipes,
/// backticks, HTML (so `<script>` and `<!--` stay text), emphasis, link, image and heading
/// markers; newlines become `<br>` so the text stays on its line; `@mentions` do not ping.
pub(crate) fn escape_cell(text: &str) -> String {
    let text = crate::text::neutralise_bidi(text);
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '@' => {
                out.push('@');
                if chars.peek().is_some_and(|n| n.is_alphanumeric()) {
                    out.push(NO_PING);
                }
            }
            // At the start of a line these open a heading or a list (the `p.note` line).
            '#' | '-' | '+' if out.is_empty() => {
                out.push('\\');
                out.push(c);
            }
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push_str("<br>");
                }
            }
            '\n' => out.push_str("<br>"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text in which `backtick spans` are meant as code, as fcorr's own messages write them
/// (``critical case `x` failed``): each span whose closing run matches its opening one (the
/// CommonMark rule) becomes a code span shown verbatim, everything else is escaped as by
/// [`escape_cell`], so an unmatched backtick shows as a backtick and nothing else is Markdown.
pub(crate) fn escape_with_code(text: &str, in_table: bool) -> String {
    code_spans(text)
        .into_iter()
        .map(|span| match span {
            Span::Text(t) => escape_cell(t),
            Span::Code(c) => inline_code(c, in_table),
        })
        .collect()
}

/// A piece of a message: plain text, or the inside of one of its `code spans`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Span<'a> {
    Text(&'a str),
    Code(&'a str),
}

/// `text` cut into plain text and code spans by CommonMark's rule: a run of backticks opens a
/// span that the next run of the same length closes; an opening run with no closing one, or
/// around nothing but spaces, is text.
pub(crate) fn code_spans(text: &str) -> Vec<Span<'_>> {
    let mut spans = Vec::new();
    let mut plain = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
        let body = i + run;
        match closing_run(&text[body..], run) {
            Some(end) if !text[body..body + end].trim().is_empty() => {
                if plain < i {
                    spans.push(Span::Text(&text[plain..i]));
                }
                let code = &text[body..body + end];
                // CommonMark strips one space on each side when both are there.
                let code = match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
                    Some(inner) if !inner.trim().is_empty() => inner,
                    _ => code,
                };
                spans.push(Span::Code(code));
                i = body + end + run;
                plain = i;
            }
            _ => i = body,
        }
    }
    if plain < text.len() {
        spans.push(Span::Text(&text[plain..]));
    }
    spans
}

/// Byte offset in `text` of the first backtick run exactly `len` long.
fn closing_run(text: &str, len: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if run == len {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

/// Text for a line of raw HTML such as `<summary>…</summary>`: one line (every run of whitespace
/// and control characters becomes one space, so a blank line cannot end the HTML block and let
/// the rest render as Markdown), HTML-escaped, and `@mentions` do not ping.
pub(crate) fn escape_summary(text: &str) -> String {
    let text = crate::text::neutralise_bidi(text);
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() || c.is_control() => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '@' => {
                out.push('@');
                if chars.peek().is_some_and(|n| n.is_alphanumeric()) {
                    out.push(NO_PING);
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Inline code span that shows `text` verbatim: the fence is one backtick longer than the
/// longest run inside. Newlines become spaces (a span is one line); in a table cell pipes are
/// escaped, which GFM undoes inside code spans.
pub(crate) fn inline_code(text: &str, in_table: bool) -> String {
    let mut body: String = crate::text::neutralise_bidi(text)
        .chars()
        .map(|c| if c == '\n' || c == '\r' || c.is_control() { ' ' } else { c })
        .collect();
    if in_table {
        body = body.replace('|', "\\|");
    }
    if body.trim().is_empty() {
        // An empty or blank span would render as literal backticks.
        return "` `".into();
    }
    let fence = "`".repeat(longest_run(&body, '`') + 1);
    // Padding keeps a leading/trailing backtick from merging into the fence; GFM strips one space
    // on each side when both are present.
    let pad = body.starts_with('`') || body.ends_with('`') || (body.starts_with(' ') && body.ends_with(' '));
    if pad { format!("{fence} {body} {fence}") } else { format!("{fence}{body}{fence}") }
}

/// Fenced code block whose fence is longer than any backtick run in `text`, so content can never
/// close it early; always ends with a newline.
pub(crate) fn code_block(text: &str, info: &str) -> String {
    let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
    let info: String = info.chars().filter(|c| *c != '`' && !c.is_control()).collect();
    let text = crate::text::neutralise_bidi(text);
    let body = text.trim_end_matches(['\n', '\r']);
    format!("{fence}{info}\n{body}\n{fence}\n")
}

fn longest_run(text: &str, ch: char) -> usize {
    let (mut best, mut current) = (0, 0);
    for c in text.chars() {
        if c == ch {
            current += 1;
            best = best.max(current);
        } else {
            current = 0;
        }
    }
    best
}

/// The first line of a text.
pub(crate) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The last `n` lines of a text (a log's tail holds the error).
pub(crate) fn last_lines(text: &str, n: usize) -> &str {
    let text = text.trim_end_matches(['\n', '\r']);
    if n == 0 {
        return "";
    }
    let mut seen = 0;
    for (i, b) in text.bytes().enumerate().rev() {
        if b == b'\n' {
            seen += 1;
            if seen == n {
                return &text[i + 1..];
            }
        }
    }
    text
}

/// `340ms`, `1.2s`, `2m05s`, `1h02m` (the run's one duration format: `crate::text`).
pub(crate) use crate::text::format_duration;

/// A number with at most two decimals and no trailing zeros: `100`, `85.5`, `33.33`; `n/a`
/// for a number that is not finite (never `inf`: compare keeps deltas finite, this is the net).
pub(crate) fn format_number(x: f64) -> String {
    if !(x * 100.0).is_finite() {
        return "n/a".into();
    }
    let text = format!("{:.2}", (x * 100.0).round() / 100.0);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" { "0".into() } else { text.to_string() }
}

/// A signed change with an arrow: `+1.5 ↑`, `-2 ↓`, `±0`.
pub(crate) fn signed_delta(x: f64, unit: &str) -> String {
    let rounded = (x * 100.0).round() / 100.0;
    if !rounded.is_finite() {
        "n/a".into()
    } else if rounded == 0.0 {
        format!("±0{unit}")
    } else if rounded > 0.0 {
        format!("+{}{unit} ↑", format_number(rounded))
    } else {
        format!("-{}{unit} ↓", format_number(-rounded))
    }
}

/// A signed duration change: `+1.2s ↑`, `-340ms ↓`, `±0`.
pub(crate) fn duration_delta(ms: f64) -> String {
    if ms.round() == 0.0 {
        "±0".into()
    } else if ms > 0.0 {
        format!("+{} ↑", format_duration(ms))
    } else {
        format!("-{} ↓", format_duration(-ms))
    }
}

/// An emoji for a case/suite status or verdict word.
pub(crate) fn status_icon(status: &str) -> String {
    match status {
        "passed" | "pass" | "fixed" => "✅",
        "failed" | "fail" | "new-failure" | "still-failing" => "❌",
        "error" | "harness-error" | "usage-error" | "install-failed" | "build-failed" => "💥",
        "timeout" => "⏱️",
        "skipped" | "newly-skipped" => "⏭️",
        "flaky" => "🔁",
        "no-tests" => "⚠️",
        "cancelled" => "🛑",
        "added" => "🆕",
        "removed" => "➖",
        _ => "❔",
    }
    .to_string()
}

/// The first 7 characters of a commit id (whole text when shorter).
pub(crate) fn short_sha(sha: &str) -> String {
    sha.chars().take(7).collect()
}

/// An RFC 3339 time as people read it, to the second, in UTC: `2026-11-23 01:02:28 UTC`.
/// Text that is not RFC 3339 comes back unchanged.
pub(crate) fn timestamp(text: &str) -> String {
    use time::format_description::well_known::Rfc3339;
    use time::macros::format_description;
    let Ok(at) = time::OffsetDateTime::parse(text, &Rfc3339) else { return text.to_string() };
    let utc = at.to_offset(time::UtcOffset::UTC);
    utc.format(format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC"))
        .unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_text_stays_on_one_html_line_and_does_not_ping() {
        let hostile = "a\n\n# HEADING\n\n![x](https://host/p.png) <img src=x> @octocat";
        assert_eq!(escape_summary(hostile), "a # HEADING ![x](https://host/p.png) &lt;img src=x&gt; @\u{200D}octocat");
    }

    #[test]
    fn timestamps_read_to_the_second_in_utc() {
        assert_eq!(timestamp("2026-11-23T01:02:28.083719292Z"), "2026-11-23 01:02:28 UTC");
        assert_eq!(timestamp("2026-11-23T03:02:28+02:00"), "2026-11-23 01:02:28 UTC");
        assert_eq!(timestamp("yesterday"), "yesterday");
    }

    #[test]
    fn names_with_bidi_controls_show_in_stored_order_everywhere_markdown_puts_them() {
        let name = "test_\u{202E}cod.exe";
        for shown in [escape_cell(name), escape_summary(name), inline_code(name, true), code_block(name, "")] {
            assert!(shown.contains("U+202E") && !shown.contains('\u{202E}'), "{shown}");
        }
    }

    #[test]
    fn numbers_that_are_not_finite_show_as_not_applicable() {
        assert_eq!(signed_delta(f64::INFINITY, ""), "n/a");
        assert_eq!(signed_delta(1e308, ""), "n/a");
        assert_eq!(format_number(f64::NAN), "n/a");
        assert_eq!(signed_delta(-2.5, ""), "-2.5 ↓");
    }

    #[test]
    fn cells_escape_markdown_and_html() {
        assert_eq!(escape_cell("a|b"), "a\\|b");
        assert_eq!(escape_cell("<script>x</script>"), "&lt;script&gt;x&lt;/script&gt;");
        assert_eq!(escape_cell("<!-- hi -->"), "&lt;!-- hi --&gt;");
        assert_eq!(escape_cell("one\ntwo\r\nthree"), "one<br>two<br>three");
        assert_eq!(escape_cell("`x`"), "\\`x\\`");
        assert_eq!(escape_cell("# H"), "\\# H");
        assert_eq!(escape_cell("ping @octocat, mail a@b"), "ping @\u{200D}octocat, mail a@\u{200D}b");
    }

    #[test]
    fn backtick_spans_become_code_and_the_rest_is_escaped() {
        assert_eq!(escape_with_code("critical case `danger` failed", false), "critical case `danger` failed");
        assert_eq!(escape_with_code("expected `ls -a`, got `ls | wc`", true), "expected `ls -a`, got `ls \\| wc`");
        assert_eq!(escape_with_code("`a`b` *x*", false), "`a`b\\` \\*x\\*");
        assert_eq!(escape_with_code("``a`b`` <i>", false), "``a`b`` &lt;i&gt;");
        assert_eq!(escape_with_code("no `close", false), "no \\`close");
        assert_eq!(escape_with_code("`` `` empty", false), "\\`\\` \\`\\` empty");
        assert_eq!(escape_with_code("@team `@team`", false), "@\u{200D}team `@team`");
    }

    #[test]
    fn inline_code_fence_outgrows_backtick_runs() {
        assert_eq!(inline_code("plain", false), "`plain`");
        assert_eq!(inline_code("a``b", false), "```a``b```");
        assert_eq!(inline_code("`x`", false), "`` `x` ``");
        assert_eq!(inline_code("a|b", true), "`a\\|b`");
        assert_eq!(inline_code("", false), "` `");
    }

    #[test]
    fn code_block_cannot_be_closed_by_content() {
        let block = code_block("before\n```\nafter", "text");
        assert!(block.starts_with("````text\n"));
        assert!(block.ends_with("\n````\n"));
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a", 5), "a");
    }

    #[test]
    fn numbers_and_deltas() {
        assert_eq!(format_number(100.0), "100");
        assert_eq!(format_number(85.5), "85.5");
        assert_eq!(format_number(1.0 / 3.0 * 100.0), "33.33");
        assert_eq!(signed_delta(2.5, ""), "+2.5 ↑");
        assert_eq!(signed_delta(-3.0, " pts"), "-3 pts ↓");
        assert_eq!(signed_delta(0.001, ""), "±0");
        assert_eq!(duration_delta(-340.0), "-340ms ↓");
        assert_eq!(format_duration(125_000.0), "2m05s");
    }
}
