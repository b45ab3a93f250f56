//! JSON report text as JavaScript (and Dart) write it, made readable by serde_json.
//!
//! `JSON.stringify` writes a string's unpaired UTF-16 surrogate as an escape (`"\ud800"`: a
//! test name cut in the middle of an emoji, a fixture of broken text). That is valid JSON, but
//! serde_json refuses it ("unexpected end of hex escape"), and one such name would lose the whole
//! report: every case, the real failures with them. [`Repair`] streams a report through,
//! rewriting each unpaired `\uD800`–`\uDFFF` escape to `\uFFFD` (U+FFFD, the replacement
//! character, as a lossy decoder shows it) and dropping a leading byte-order mark. The
//! replacement is the same six bytes, so the line and column of any later JSON error stay true;
//! `\\ud800` (an escaped backslash, then text) is left alone. Memory is one chunk of output,
//! however large the report.

use std::borrow::Cow;
use std::io::{BufRead, Read};

/// The escape an unpaired surrogate becomes.
const REPLACEMENT: &[u8; 6] = b"\\ufffd";

/// A reader that hands on JSON text with unpaired surrogate escapes replaced (see the module).
pub(crate) struct Repair<'a> {
    inner: &'a mut dyn BufRead,
    fixer: Fixer,
    /// Output handed on from `fixer.out[pos..]`.
    pos: usize,
    /// The first bytes were looked at for a byte-order mark.
    started: bool,
    /// The input ended and everything held was handed on.
    done: bool,
}

impl<'a> Repair<'a> {
    pub(crate) fn new(inner: &'a mut dyn BufRead) -> Self {
        Repair { inner, fixer: Fixer::default(), pos: 0, started: false, done: false }
    }

    /// The warning for the report, when an escape was replaced: names and messages then hold a
    /// U+FFFD where the writer had half a character, which the reader should know is not fcorr's.
    pub(crate) fn warning(&self) -> Option<String> {
        replaced_warning(self.fixer.replaced)
    }

    /// Reads the next chunk of input into the fixer's output.
    fn refill(&mut self) -> std::io::Result<()> {
        if !self.started {
            self.started = true;
            self.skip_bom()?;
        }
        let chunk = loop {
            match self.inner.fill_buf() {
                Ok(chunk) => break chunk,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if chunk.is_empty() {
            // Whatever is held is no whole escape: the JSON reader says what is wrong with it.
            self.fixer.out.append(&mut self.fixer.held);
            self.done = true;
            return Ok(());
        }
        let take = chunk.len().min(64 * 1024);
        self.fixer.feed(&chunk[..take]);
        self.inner.consume(take);
        Ok(())
    }

    /// Drops a UTF-8 byte-order mark at the start (a report written on Windows); other first
    /// bytes are fed on as they are.
    fn skip_bom(&mut self) -> std::io::Result<()> {
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        let mut head = Vec::with_capacity(BOM.len());
        while head.len() < BOM.len() {
            let mut byte = [0u8];
            if self.inner.read(&mut byte)? == 0 {
                break;
            }
            head.push(byte[0]);
            if !BOM.starts_with(&head) {
                break;
            }
        }
        if head != BOM {
            self.fixer.feed(&head);
        }
        Ok(())
    }
}

impl Read for Repair<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Repair<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        // A chunk may give no output yet (it was all a held escape): read on until some comes.
        while self.pos == self.fixer.out.len() && !self.done {
            self.fixer.out.clear();
            self.pos = 0;
            self.refill()?;
        }
        Ok(&self.fixer.out[self.pos..])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.fixer.out.len());
    }
}

/// One line (or document) of JSON text with its unpaired surrogate escapes replaced, and how many
/// were; the text itself when it has none.
pub(crate) fn repair_str(text: &str) -> (Cow<'_, str>, u64) {
    if !text.contains("\\u") {
        return (Cow::Borrowed(text), 0);
    }
    let mut fixer = Fixer::default();
    fixer.feed(text.as_bytes());
    if fixer.replaced == 0 {
        return (Cow::Borrowed(text), 0);
    }
    fixer.out.append(&mut fixer.held);
    // Only ASCII escapes were rewritten into other ASCII, whole: the text is still UTF-8.
    let repaired = String::from_utf8(fixer.out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    (Cow::Owned(repaired), fixer.replaced)
}

/// The warning for `replaced` unpaired surrogate escapes read as U+FFFD, if any.
pub(crate) fn replaced_warning(replaced: u64) -> Option<String> {
    (replaced > 0).then(|| {
        format!(
            "{replaced} unpaired UTF-16 surrogate escape(s) (`\\ud800`..`\\udfff`: half of a character, as JavaScript \
             writes a broken string) were read as U+FFFD (\u{FFFD}); a test name or message holding one shows \u{FFFD} \
             where the writer's text was broken"
        )
    })
}

/// The rewriting itself, fed bytes in any chunks: `held` is the start of an escape not yet
/// decided (a backslash, `\uXXXX` so far, or a high surrogate and what follows it: at most 12
/// bytes), `out` what is decided.
#[derive(Default)]
struct Fixer {
    out: Vec<u8>,
    held: Vec<u8>,
    replaced: u64,
}

impl Fixer {
    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.held.is_empty() {
                // Most of a report holds no escape at all: copied in one go.
                match memchr::memchr(b'\\', bytes) {
                    None => {
                        self.out.extend_from_slice(bytes);
                        return;
                    }
                    Some(at) => {
                        self.out.extend_from_slice(&bytes[..at]);
                        bytes = &bytes[at..];
                    }
                }
            }
            self.push(bytes[0]);
            bytes = &bytes[1..];
        }
    }

    fn push(&mut self, byte: u8) {
        let held = self.held.len();
        match held {
            0 if byte == b'\\' => self.held.push(byte),
            0 => self.out.push(byte),
            // `\u` starts a code unit; any other escape (`\\`, `\"`, `\n`) is whole with its byte.
            1 if byte == b'u' => self.held.push(byte),
            1 => {
                self.out.extend_from_slice(&[b'\\', byte]);
                self.held.clear();
            }
            2..=5 if byte.is_ascii_hexdigit() => {
                self.held.push(byte);
                if self.held.len() == 6 {
                    self.decide_first();
                }
            }
            // A high surrogate is held: a low one must follow at once, as `\uDC00`..`\uDFFF`.
            6 if byte == b'\\' => self.held.push(byte),
            7 if byte == b'u' => self.held.push(byte),
            8..=11 if byte.is_ascii_hexdigit() => {
                self.held.push(byte);
                if self.held.len() == 12 {
                    self.decide_pair();
                }
            }
            // Not a whole `\uXXXX` (the JSON reader will say so): handed on as it is.
            2..=5 => {
                self.out.append(&mut self.held);
                self.push(byte);
            }
            // The high surrogate held has no low one after it.
            _ => {
                self.replace_first();
                self.push(byte);
            }
        }
    }

    /// `held` is one whole `\uXXXX`.
    fn decide_first(&mut self) {
        match unit(&self.held[2..6]) {
            // High: wait for what follows.
            0xD800..=0xDBFF => {}
            0xDC00..=0xDFFF => {
                self.out.extend_from_slice(REPLACEMENT);
                self.replaced += 1;
                self.held.clear();
            }
            _ => self.out.append(&mut self.held),
        }
    }

    /// `held` is a high surrogate's escape and another `\uXXXX`.
    fn decide_pair(&mut self) {
        if (0xDC00..=0xDFFF).contains(&unit(&self.held[8..12])) {
            self.out.append(&mut self.held);
        } else {
            self.replace_first();
        }
    }

    /// Replaces the high surrogate at the start of `held`, and reads what followed it again.
    fn replace_first(&mut self) {
        let rest = self.held.split_off(6);
        self.held.clear();
        self.out.extend_from_slice(REPLACEMENT);
        self.replaced += 1;
        for byte in rest {
            self.push(byte);
        }
    }
}

/// The code unit four hex digits spell (checked hex digits: never more than 0xFFFF).
fn unit(hex: &[u8]) -> u32 {
    hex.iter().fold(0, |n, &b| n * 16 + char::from(b).to_digit(16).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` read through [`Repair`] from a reader that gives `chunk` bytes at a time.
    fn repaired(text: &str, chunk: usize) -> (String, Option<String>) {
        let mut input = std::io::BufReader::with_capacity(chunk, text.as_bytes());
        let mut repair = Repair::new(&mut input);
        let mut out = String::new();
        repair.read_to_string(&mut out).unwrap();
        (out, repair.warning())
    }

    #[test]
    fn unpaired_surrogates_become_the_replacement_character_and_nothing_else_changes() {
        let cases = [
            (r#"{"a":"x\ud800y"}"#, r#"{"a":"x\ufffdy"}"#, 1),
            (
                r#"["\uDC00", "\ud83d\ude00", "\\ud800", "\\\ud800"]"#,
                r#"["\ufffd", "\ud83d\ude00", "\\ud800", "\\\ufffd"]"#,
                2,
            ),
            // Two highs in a row, a high before a plain escape, a high at the end of a string.
            (
                r#"["\ud800\ud800\udc00", "\ud800\n", "\ud800", "\ud800\u0041"]"#,
                r#"["\ufffd\ud800\udc00", "\ufffd\n", "\ufffd", "\ufffd\u0041"]"#,
                4,
            ),
            ("\u{feff}{\"a\": \"b\u{e9}\\u00e9\"}", "{\"a\": \"b\u{e9}\\u00e9\"}", 0),
            (r#"{"bad": "\u12"}"#, r#"{"bad": "\u12"}"#, 0),
        ];
        for (text, want, count) in cases {
            for chunk in [1, 2, 3, 5, 7, 64] {
                let (out, warning) = repaired(text, chunk);
                assert_eq!(out, want, "{text} in chunks of {chunk}");
                assert_eq!(warning.is_some(), count > 0, "{text}");
            }
            let (line, replaced) = repair_str(text.trim_start_matches('\u{feff}'));
            assert_eq!((line.as_ref(), replaced), (want, count), "{text}");
        }
        let value: serde_json::Value = serde_json::from_str(&repaired(r#"["a\ud800b"]"#, 4).0).unwrap();
        assert_eq!(value[0], "a\u{FFFD}b");
    }
}
