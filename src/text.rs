//! Cutting text to a size without splitting a character: the one place for the truncation
//! helpers that reports, parsers, logs and GitHub surfaces share, so every cut says the same
//! thing and none can panic on a multi-byte character. Also the one neutraliser of bidirectional
//! controls, which every escaper for GitHub (Markdown, annotations) applies, and of the controls a
//! terminal acts on ([`for_terminal`]), which everything printed to one applies.

use std::borrow::Cow;

/// True for the characters that reorder how text around them is displayed: the embeddings and
/// overrides (U+202A–U+202E), the isolates (U+2066–U+2069) and the marks (U+200E, U+200F,
/// U+061C). A test named `abc\u{202E}fed` would show on GitHub as `abcdef`.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// `text` with every bidirectional control replaced by a visible `[U+XXXX]`, so a name shows in
/// the order its characters are stored and the reader sees that a control was there ("Trojan
/// Source"). Text without one is returned as it is.
pub(crate) fn neutralise_bidi(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_bidi_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_bidi_control(c) {
            out.push_str(&format!("[U+{:04X}]", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// True for what a terminal acts on instead of showing: C0 controls (ESC starts colour, cursor
/// and title sequences, BEL rings, CR returns over a line) but tab, DEL, and C1 controls (U+009B
/// is a one-character CSI, U+009D an OSC: set the title, write the clipboard with OSC 52).
fn is_terminal_control(c: char) -> bool {
    (c.is_control() && c != '\t') || is_bidi_control(c)
}

/// `text` safe to print to a terminal: every C0 control (but tab, and newline when `newlines`)
/// becomes its visible control picture (ESC `␛`, BEL `␇`, CR `␍`, LF `␊`), DEL `␡`, and every C1
/// control and bidirectional control a visible `[U+XXXX]`, so a test name or message cannot
/// recolour, hide or rewrite the lines around it, set the window title or write the clipboard.
/// fcorr's own colours are added around such text, never passed through it. Text without one
/// is returned as it is.
pub(crate) fn for_terminal(text: &str, newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_terminal_control(c) && !(newlines && c == '\n');
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            // U+2400 to U+241F picture U+0000 to U+001F in order.
            '\0'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c => out.push_str(&format!("[U+{:04X}]", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// What a line of text prints with in front when it would otherwise read as a workflow command.
pub(crate) const NOT_A_COMMAND: &str = "(not a command) ";

/// `text` with every line that the GitHub runner would read as a workflow command (after
/// trimming whitespace, `::name…` or the older `##[name]`) shown behind [`NOT_A_COMMAND`]. The
/// fence (`::stop-commands::`) is the first guard; this one holds even when a test learnt the
/// fence's token (same-user tests can read the runner's temporary directory).
pub(crate) fn defuse_workflow_commands(text: &str) -> Cow<'_, str> {
    let command = |line: &str| {
        let line = line.trim_start();
        line.starts_with("::") || line.starts_with("##[")
    };
    if !text.lines().any(command) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 32);
    for line in text.split_inclusive('\n') {
        if command(line) {
            let indent = line.len() - line.trim_start().len();
            out.push_str(&line[..indent]);
            out.push_str(NOT_A_COMMAND);
            out.push_str(&line[indent..]);
        } else {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

/// `340ms`, `1.2s`, `2m05s`, `1h02m`.
pub(crate) fn format_duration(ms: f64) -> String {
    let ms = ms.max(0.0);
    if ms < 1000.0 {
        format!("{}ms", ms.round() as u64)
    } else if ms < 60_000.0 {
        format!("{:.1}s", ms / 1000.0)
    } else if ms < 3_600_000.0 {
        let s = (ms / 1000.0) as u64;
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        let m = (ms / 60_000.0) as u64;
        format!("{}h{:02}m", m / 60, m % 60)
    }
}

/// The largest byte index `<= max` that is a character boundary of `text`.
/// serde_json's message without the " at line L column C" it ends with, for messages that say
/// where once, in their own words.
pub(crate) fn json_error_text(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())) {
        Some(what) => what.to_string(),
        None => text,
    }
}

/// `line L, column C: message` for a serde_json error: its position said once.
pub(crate) fn json_error_at(e: &serde_json::Error) -> String {
    format!("line {}, column {}: {}", e.line(), e.column(), json_error_text(e))
}

pub(crate) fn floor_boundary(text: &str, max: usize) -> usize {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The smallest byte index `>= min` that is a character boundary of `text`.
pub(crate) fn ceil_boundary(text: &str, min: usize) -> usize {
    let mut start = min.min(text.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    start
}

/// At most `max` bytes of `text` on a character boundary, saying how much was dropped (for
/// captured output and failure details kept in reports).
pub(crate) fn cap_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let end = floor_boundary(text, max);
    format!("{}\n[... {} bytes truncated]", &text[..end], text.len() - end)
}

/// At most `max` bytes of `text` on a character boundary, then `…` when cut (titles and
/// messages with a byte limit).
pub(crate) fn truncate_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{}…", &text[..floor_boundary(text, max)])
}

/// At most `max` characters, ending with `…` when cut; never splits a character.
pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let keep = max.saturating_sub(1);
    let end = text.char_indices().nth(keep).map(|(i, _)| i).unwrap_or(text.len());
    format!("{}…", &text[..end])
}

/// The last `max` bytes of `text`, starting on a line (or at least a character) boundary, with
/// a note of how much came before (a log's tail holds the error).
pub(crate) fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let slice = &text[ceil_boundary(text, text.len() - max)..];
    let slice = slice.find('\n').map(|i| &slice[i + 1..]).unwrap_or(slice);
    format!("[... {} bytes earlier ...]\n{slice}", text.len() - slice.len())
}

/// `1234567` → `1,234,567`: counts people read (limits in reports, progress lines).
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }

    #[test]
    fn lines_that_read_as_workflow_commands_are_shown_behind_a_prefix() {
        let text = "ok\n   ::abc::\n::error::x\r\n\t##[warning]y\nnot ::a command\n::";
        assert_eq!(
            defuse_workflow_commands(text),
            "ok\n   (not a command) ::abc::\n(not a command) ::error::x\r\n\t(not a command) ##[warning]y\nnot ::a command\n(not a command) ::"
        );
        assert!(matches!(defuse_workflow_commands("a::b\nc"), Cow::Borrowed(_)));
    }

    #[test]
    fn bidi_controls_become_visible_and_other_text_is_untouched() {
        assert_eq!(neutralise_bidi("test_\u{202E}gnp.exe"), "test_[U+202E]gnp.exe");
        let all = "\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}\u{2066}\u{2067}\u{2068}\u{2069}\u{200E}\u{200F}\u{061C}";
        assert_eq!(neutralise_bidi(all).matches("[U+").count(), 12);
        assert!(matches!(neutralise_bidi("héllo \u{200D} 😀"), Cow::Borrowed(_)));
    }

    #[test]
    fn terminal_controls_become_visible_and_tabs_and_other_text_are_untouched() {
        let hostile = "\u{202E}RTL\u{7}bell\u{1b}[31mansi\u{1b}]52;c;aGk=\u{7}\u{9b}2J\r\u{7f}\tx\ny";
        assert_eq!(for_terminal(hostile, false), "[U+202E]RTL␇bell␛[31mansi␛]52;c;aGk=␇[U+009B]2J␍␡\tx␊y");
        assert_eq!(for_terminal("a\nb\u{1b}", true), "a\nb␛");
        assert!(matches!(for_terminal("héllo\t😀 \u{200D}", false), Cow::Borrowed(_)));
    }

    #[test]
    fn boundaries_never_split_a_character() {
        assert_eq!(floor_boundary("ééé", 3), 2);
        assert_eq!(floor_boundary("abc", 10), 3);
        assert_eq!(ceil_boundary("ééé", 3), 4);
        assert_eq!(ceil_boundary("abc", 10), 3);
    }

    #[test]
    fn cap_text_respects_char_boundaries() {
        let capped = cap_text("ééé", 3);
        assert_eq!(capped, "é\n[... 4 bytes truncated]");
        assert_eq!(cap_text("short", 10), "short");
    }

    #[test]
    fn truncate_bytes_cuts_on_a_boundary() {
        assert_eq!(truncate_bytes("ééé", 3), "é…");
        assert_eq!(truncate_bytes("abc", 3), "abc");
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_chars("héllo", 10), "héllo");
        assert_eq!(truncate_chars("😀😀😀😀", 3), "😀😀…");
        assert_eq!(truncate_chars("abc", 0), "…");
    }

    #[test]
    fn tail_keeps_whole_lines() {
        let text = "line one\nline two\nline three\n";
        let t = tail(text, 12);
        assert!(t.ends_with("line three\n"), "{t}");
        assert!(!t.contains("two"));
        assert!(tail("ééé", 3).ends_with('é'));
    }
}
