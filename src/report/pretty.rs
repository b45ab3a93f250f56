//! serde_json's pretty printing (two-space indent), writing each newline and indent at once.
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
    /// A formatter for a value that sits `level` levels deep in a document written around it.
    pub(crate) fn at(level: usize) -> Pretty {
        Pretty { level, has_value: false }
    }

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
}
