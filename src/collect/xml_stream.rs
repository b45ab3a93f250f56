//! XML events borrowed straight from the input, read a chunk at a time.
//!
//! quick-xml is fastest on a byte slice: events borrow from it instead of being copied into a
//! buffer one by one, as `read_event_into` on a `BufRead` does (about twice the time on a large
//! JUnit report). Reading the whole file first would add its size to peak memory, so
//! [`read_events`] reads [`CHUNK`] bytes at a time and runs a slice reader over each chunk; what
//! the chunk cuts off is read again, with the next bytes, by the reader of the next chunk.
//!
//! The handler sees exactly the events one reader over the whole input would give:
//! - a markup event (tag, comment, CDATA, declaration) is only returned once its end was seen;
//!   one that the chunk cuts off is an error at the chunk's end, and is read again with more input;
//! - a text event that reaches the end of the chunk may go on in the next bytes: it is read again;
//! - a new reader starts where the last one stopped between two events, in the state the
//!   whole-input reader would be in there (about to read text or markup), except that a new reader
//!   drops a leading byte-order mark: a chunk that starts with one gets an empty comment in front,
//!   which is read and not handed on. The file's own byte-order mark is dropped here, as quick-xml
//!   would, and, as in quick-xml, positions do not count it.
//!
//! A reader also remembers its open elements. With `check_end_names` off only their number
//! matters (an end tag with none open is an error), so that is counted here, across readers, and
//! the readers are told to let such end tags through. Nothing else carries over between readers
//! with the configuration used here: empty elements are not expanded, text is not trimmed.

use std::io::{ErrorKind, Read};

use quick_xml::errors::IllFormedError;
use quick_xml::events::Event;
use quick_xml::reader::Reader;

/// Bytes read at a time.
pub const CHUNK: usize = 1 << 20;

const BOM: &[u8] = b"\xEF\xBB\xBF";
/// Put in front of a chunk that starts with a byte-order mark, so the mark is read as text.
const GUARD: &[u8] = b"<!---->";

/// Why reading stopped, and where.
#[derive(Debug)]
pub struct XmlError {
    pub error: quick_xml::Error,
    /// Byte offset in the input (not counting a leading byte-order mark) of the markup that failed.
    pub position: u64,
}

/// Hands every event of the XML in `input` to `handle`, reading `chunk` bytes at a time.
///
/// An end tag need not match the element it closes (one with no element open is an error); text
/// is not trimmed; `<a/>` is one `Empty` event. An error ends the reading. An event longer than a
/// chunk (a huge CDATA section) is read whole: the buffer grows to hold it.
pub fn read_events<R: Read + ?Sized>(
    input: &mut R,
    chunk: usize,
    mut handle: impl FnMut(Event<'_>),
) -> Result<(), XmlError> {
    // The first read must see a whole byte-order mark, if there is one.
    let chunk = chunk.max(BOM.len());
    // `data[start..end]` is read and not yet handled; the first GUARD.len() bytes are kept free for
    // the guard, so it can be put in front of a chunk without moving the chunk.
    let mut data = vec![0u8; GUARD.len() + chunk];
    let mut start = GUARD.len();
    let mut end = start;
    // Input position of `data[start]`.
    let mut position = 0u64;
    // Elements started and not yet ended.
    let mut open = 0usize;
    let mut first = true;
    loop {
        let eof = fill(input, &mut data, &mut end)
            .map_err(|e| XmlError { error: e.into(), position: position + (end - start) as u64 })?;
        if first {
            first = false;
            if data[start..end].starts_with(BOM) {
                start += BOM.len();
            }
        }
        let guard = if data[start..end].starts_with(BOM) {
            start -= GUARD.len();
            data[start..start + GUARD.len()].copy_from_slice(GUARD);
            GUARD.len()
        } else {
            0
        };
        let window = &data[start..end];
        let mut reader = Reader::from_reader(window);
        let config = reader.config_mut();
        config.check_end_names = false;
        config.trim_text(false);
        config.expand_empty_elements = false;
        config.allow_unmatched_ends = true;
        if guard > 0 {
            // The guard comment: complete, so never an error, and not part of the input.
            let _ = reader.read_event();
        }
        // Where in `window` the event that needs more input starts.
        let resume = loop {
            let before = reader.buffer_position() as usize;
            match reader.read_event() {
                Ok(Event::Eof) if eof => return Ok(()),
                Ok(Event::Eof) => break before,
                Ok(Event::Text(_)) if !eof && reader.buffer_position() as usize == window.len() => break before,
                Ok(Event::End(end)) if open == 0 => {
                    // What one reader over the whole input says of it (`allow_unmatched_ends` off).
                    let name = end.name().as_ref().to_string();
                    let error = quick_xml::Error::IllFormed(IllFormedError::UnmatchedEndTag(name));
                    return Err(XmlError { error, position: position + (before - guard) as u64 });
                }
                Ok(event) => {
                    match event {
                        Event::Start(_) => open += 1,
                        Event::End(_) => open -= 1,
                        _ => {}
                    }
                    handle(event)
                }
                // Cut off by the chunk's end, maybe: read it again with more input. quick-xml's
                // syntax errors all mean "the input ended inside this markup"; any other error
                // that stopped short of the chunk's end is the document's own.
                Err(quick_xml::Error::Syntax(_)) if !eof => break before,
                Err(_) if !eof && reader.buffer_position() as usize >= window.len() => break before,
                Err(error) => {
                    // quick-xml does not say where invalid UTF-8 is: the event it was in is.
                    let local = match error {
                        quick_xml::Error::Encoding(_) => before as u64,
                        _ => reader.error_position(),
                    };
                    return Err(XmlError { error, position: position + local.saturating_sub(guard as u64) });
                }
            }
        };
        position += (resume - guard) as u64;
        start += resume;
        // Keep the unhandled bytes, after the guard's room, and make room for at least half a chunk.
        data.copy_within(start..end, GUARD.len());
        end = GUARD.len() + (end - start);
        start = GUARD.len();
        if data.len() - end < chunk.div_ceil(2) {
            data.resize(data.len() * 2, 0);
        }
    }
}

/// Reads until `data` is full or the input ends; true when it ended.
fn fill<R: Read + ?Sized>(input: &mut R, data: &mut [u8], end: &mut usize) -> std::io::Result<bool> {
    while *end < data.len() {
        match input.read(&mut data[*end..]) {
            Ok(0) => return Ok(true),
            Ok(n) => *end += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event as text, and the error with its position, as one whole-input reader sees them.
    fn whole(xml: &[u8]) -> (Vec<String>, Option<String>) {
        let mut reader = Reader::from_reader(xml);
        let config = reader.config_mut();
        config.check_end_names = false;
        config.trim_text(false);
        config.expand_empty_elements = false;
        let mut events = Vec::new();
        loop {
            let before = reader.buffer_position();
            match reader.read_event() {
                Ok(Event::Eof) => return (events, None),
                Ok(event) => events.push(format!("{event:?}")),
                Err(error) => {
                    let position = match error {
                        quick_xml::Error::Encoding(_) => before,
                        _ => reader.error_position(),
                    };
                    return (events, Some(format!("{position}: {error}")));
                }
            }
        }
    }

    fn chunked(xml: &[u8], chunk: usize) -> (Vec<String>, Option<String>) {
        let mut events = Vec::new();
        let result = read_events(&mut &xml[..], chunk, |event| events.push(format!("{event:?}")));
        (events, result.err().map(|e| format!("{}: {}", e.position, e.error)))
    }

    const DOCUMENTS: &[&[u8]] = &[
        b"<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"s\"><testcase name=\"a &amp; b\" x='>'/>\
          <testcase name=\"c\"><failure message=\"m\">line 1\r\nline 2 &lt;x&gt; &#x263A; &custom;\
          </failure><system-out><![CDATA[raw <text> ]]]]></system-out></testcase><!-- a > comment -->\
          <?pi data?></testsuite></testsuites>\n",
        b"\xEF\xBB\xBF<testsuite><testcase name=\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x9A\x80\">\xEF\xBB\xBFtext</testcase>\
          <testcase>\xEF\xBB\xBF</testcase><testcase>\xEF\xBB\xBF&amp;</testcase></testsuite>",
        b"\xEF\xBB\xBF\xEF\xBB\xBF<a>x</a>",
        b"<!DOCTYPE t [<!ENTITY e \"x\">]><t>&e; </t>trailing text",
        // Broken: an unclosed reference, a tag that never ends, invalid UTF-8 in text, an end tag
        // with nothing open, a mismatched one (not an error here).
        b"<a><b>x & y</b></a>",
        b"<a><b>x</b></a></c><d/>",
        b"<a><b>x</c></a>",
        b"<testsuite><testcase name=\"a\" <<<",
        b"<a><b>ok</b><c>bad \xFF byte</c></a>",
        b"<a><b>cut off",
        b"",
    ];

    /// Broken documents longer than a chunk, their error far from its end.
    fn long_broken() -> Vec<Vec<u8>> {
        let body = "<b>x</b>".repeat(40);
        ["<c>bad \u{FFFD} byte</c>", "<c>a & b</c>", "<c>a &amp b</c>", "</c></c></c></c></c>", "<!x>", "<c x=\"1\" y>"]
            .iter()
            .map(|bad| format!("<a>{body}{bad}{body}</a>").replace('\u{FFFD}', "\u{1}").into_bytes())
            .map(|mut doc| {
                // A lone byte that is not UTF-8 where the \u{1} marker is.
                if let Some(at) = doc.iter().position(|&b| b == 1) {
                    doc[at] = 0xFF;
                }
                doc
            })
            .collect()
    }

    #[test]
    fn chunks_of_any_size_give_the_events_of_the_whole_input() {
        let long = long_broken();
        for xml in DOCUMENTS.iter().copied().chain(long.iter().map(Vec::as_slice)) {
            let expected = whole(xml);
            for chunk in [1, 2, 3, 4, 5, 7, 8, 11, 16, 64, xml.len() + 1] {
                assert_eq!(chunked(xml, chunk), expected, "chunk {chunk} of {}", String::from_utf8_lossy(xml));
            }
        }
    }

    #[test]
    fn errors_say_where() {
        let (_, error) = chunked(b"<a><b>ok</b><c>bad \xFF byte</c></a>", 4);
        assert!(error.as_deref().is_some_and(|e| e.starts_with("15: ")), "{error:?}");
        let (events, error) = chunked(b"<a>&amp</a>", 2);
        assert_eq!(events.len(), 1);
        assert!(error.is_some());
    }

    #[test]
    fn a_broken_document_is_not_read_to_its_end() {
        let xml = format!("<a><c>a & b</c>{}</a>", "<b>x</b>".repeat(10_000));
        let mut input = xml.as_bytes();
        let error = read_events(&mut input, 64, |_| {}).err().map(|e| format!("{}: {}", e.position, e.error));
        assert_eq!(error, whole(xml.as_bytes()).1);
        assert!(error.is_some_and(|e| e.starts_with("8: ")));
        assert!(input.len() > xml.len() - 1000, "read {} bytes", xml.len() - input.len());
    }

    /// A reader that hands out a few bytes at a time and is sometimes interrupted.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.1 += 1;
            if self.1.is_multiple_of(3) {
                return Err(std::io::Error::from(ErrorKind::Interrupted));
            }
            let n = buf.len().min(self.0.len()).min(1 + self.1 % 5);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn short_reads_change_nothing() {
        for xml in DOCUMENTS {
            let mut events = Vec::new();
            let result = read_events(&mut Trickle(xml, 0), 16, |event| events.push(format!("{event:?}")));
            let error = result.err().map(|e| format!("{}: {}", e.position, e.error));
            assert_eq!((events, error), whole(xml));
        }
    }
}
