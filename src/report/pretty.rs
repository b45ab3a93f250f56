//! serde_json's pretty printing (two-space indent), writing each newline and indent at once;
//! and its string escaping, scanning 16 bytes at a time ([`string`]).
//!
//! `PrettyFormatter` writes an indent as one two-byte write per level, before every key and array
//! value: on the 100,000-case `results.json` and `ctrf.json` (4–6 levels deep) that is tens of
//! millions of calls. The bytes are the same (a test compares them with `to_writer_pretty`).

use std::io::{self, Write};

/// A newline and up to [`MAX_LEVEL`] levels of indent; deeper levels are written in pieces.
const LINE: &[u8] = b",\n                                                                ";
const MAX_LEVEL: usize = (LINE.len() - 2) / 2;

/// serde_json's `PrettyFormatter::new()`, with each line break and indent written in one piece.
#[derive(Default)]
pub(crate) struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    /// `,\n` (or `\n` for the first item) and the indent of the current level.
    fn line<W: ?Sized + Write>(&self, writer: &mut W, first: bool) -> io::Result<()> {
        let start = usize::from(first);
        let mut level = self.level;
        writer.write_all(&LINE[start..2 + 2 * level.min(MAX_LEVEL)])?;
        while level > MAX_LEVEL {
            level -= MAX_LEVEL;
            writer.write_all(&LINE[2..2 + 2 * level.min(MAX_LEVEL)])?;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.line(writer, true)?;
        }
        writer.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.line(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.end_object_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.begin_array_value(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// `serde_json::to_writer_pretty`, through [`Pretty`].
pub(crate) fn to_writer<W: Write, T: ?Sized + serde::Serialize>(writer: W, value: &T) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(writer, Pretty::default()))
}

/// True for the bytes serde_json escapes in a string: quote, backslash, control characters.
fn escaped(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The index of the first byte of `bytes[from..]` to escape, or the length: 16 bytes at a time
/// while none is (a test the compiler turns into a few vector instructions), then byte by byte.
fn next_escape(bytes: &[u8], mut from: usize) -> usize {
    while let Some(chunk) = bytes.get(from..from + 16) {
        if chunk.iter().fold(false, |any, b| any | escaped(*b)) {
            break;
        }
        from += 16;
    }
    from + bytes[from..].iter().position(|b| escaped(*b)).unwrap_or(bytes.len() - from)
}

/// A JSON string as serde_json writes it: `\"`, `\\`, `\b \f \n \r \t`, other control characters
/// as `\u00xx` (lowercase hex), everything else as it is.
pub(crate) fn string<W: ?Sized + Write>(w: &mut W, text: &str) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    w.write_all(b"\"")?;
    let mut start = 0;
    loop {
        let at = next_escape(bytes, start);
        // Only pieces serde_json writes: never an empty one (a full `BufWriter` flushes on it).
        if at > start {
            w.write_all(&bytes[start..at])?;
        }
        let Some(&b) = bytes.get(at) else { break };
        match b {
            b'"' => w.write_all(b"\\\"")?,
            b'\\' => w.write_all(b"\\\\")?,
            b'\n' => w.write_all(b"\\n")?,
            b'\r' => w.write_all(b"\\r")?,
            b'\t' => w.write_all(b"\\t")?,
            0x08 => w.write_all(b"\\b")?,
            0x0c => w.write_all(b"\\f")?,
            _ => w.write_all(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]])?,
        }
        start = at + 1;
    }
    w.write_all(b"\"")
}

#[cfg(test)]
mod tests {
    #[test]
    fn writes_what_serde_json_pretty_writes() {
        let deep =
            (0..40).fold(serde_json::json!("leaf"), |inner, i| serde_json::json!({ format!("k{i}"): [inner, i] }));
        let values = [
            serde_json::json!({}),
            serde_json::json!([]),
            serde_json::json!({"a": [], "b": {}, "c": [1, {"d": null}], "e": "x\n\"y\""}),
            serde_json::json!([[[]], [{}], {"k": [[1, 2], []]}]),
            deep,
        ];
        for value in values {
            let mut ours = Vec::new();
            super::to_writer(&mut ours, &value).unwrap();
            assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string_pretty(&value).unwrap());
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut texts: Vec<String> = (0u32..=0x2FF).filter_map(char::from_u32).map(|c| format!("a{c}b")).collect();
        texts.extend(
            [
                "",
                "plain ascii text that runs over sixteen bytes without anything to escape",
                "\"quoted\" and \\back\\slashed\\",
                "tab\tnewline\ncr\rbell\u{7}esc\u{1b}del\u{7f} \u{2028}\u{2029} é😀",
                "0123456789abcde\"",
                "0123456789abcdef\n0123456789abcdef",
            ]
            .map(str::to_string),
        );
        for text in texts {
            let mut ours = Vec::new();
            super::string(&mut ours, &text).unwrap();
            assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&text).unwrap(), "{text:?}");
        }
    }
}
