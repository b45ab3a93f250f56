//! XML events borrowed straight from the input, read a chunk at a time.
//!
//! quick-xml is fastest on a byte slice: events borrow from it instead of being copied into a
//! buffer one by one, as `read_event_into` on a `BufRead` does (about twice the time on a large
//! JUnit report). Reading the whole file first would add its size to peak memory, so
//! [`read_events`] reads [`CHUNK`] bytes at a time and runs a slice reader over each chunk; what
//! the chunk cuts off is read again, with the next bytes, by the reader of the next chunk.
//!
//! The handler sees the events one reader over the whole input would give, except that text and
//! CDATA longer than half a chunk come as several consecutive pieces (so one huge element costs a
//! chunk of memory, not its size), and that text before invalid UTF-8, or CDATA that never ends,
//! may be handed on before the error:
//! - a markup event (tag, comment, CDATA, declaration) is only returned once its end was seen;
//!   one that the chunk cuts off is an error at the chunk's end, and is read again with more input;
//! - a text event that reaches the end of the chunk may go on in the next bytes: it is read again
//!   (a long one is handed on up to the chunk's end and read on from there);
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
use quick_xml::events::{BytesCData, Event};
use quick_xml::reader::Reader;

/// Bytes read at a time.
pub(super) const CHUNK: usize = 1 << 20;

const BOM: &[u8] = b"\xEF\xBB\xBF";
const CDATA: &[u8] = b"<![CDATA[";
/// Put in front of a chunk that starts with a byte-order mark, so the mark is read as text.
const GUARD: &[u8] = b"<!---->";

/// Why reading stopped, and where.
#[derive(Debug)]
pub(super) struct XmlError {
    pub error: quick_xml::Error,
    /// Byte offset in the input (not counting a leading byte-order mark) of the markup that failed.
    pub position: u64,
}

/// Hands every event of the XML in `input` to `handle`, reading `chunk` bytes at a time.
///
/// An end tag need not match the element it closes (one with no element open is an error); text
/// is not trimmed; `<a/>` is one `Empty` event. An error ends the reading. Text and CDATA longer
/// than a chunk come in pieces (consecutive `Text` or `CData` events) of about a chunk each, so
/// memory never grows with one element's size (a 200 MB `<system-out>`); other events longer than
/// a chunk (a huge tag or comment) are read whole: the buffer grows to hold them.
pub(super) fn read_events<R: Read + ?Sized>(
    input: &mut R,
    chunk: usize,
    handle: impl FnMut(Event<'_>),
) -> Result<(), XmlError> {
    read_events_inside(input, chunk, 0, handle)
}

/// [`read_events`] over input that starts inside `open` elements (a part of a document cut
/// between two events, see `junit::parse_in_parts`): as many end tags as that may close them.
pub(super) fn read_events_inside<R: Read + ?Sized>(
    input: &mut R,
    chunk: usize,
    mut open: usize,
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
    // `open`: elements started and not yet ended.
    let mut first = true;
    // Input position of the `<![CDATA[` whose content is being handed on in pieces, if any.
    let mut in_cdata: Option<u64> = None;
    loop {
        let eof = fill(input, &mut data, &mut end)
            .map_err(|e| XmlError { error: e.into(), position: position + (end - start) as u64 })?;
        if first {
            first = false;
            if data[start..end].starts_with(BOM) {
                start += BOM.len();
            }
        }
        // Readers see input up to a point where a piece of text can end: not inside a character,
        // not between CR and LF (each piece's line ends are normalized on their own).
        let limit = if eof { end } else { start + cut_point(&data[start..end]) };
        // Whether what is left is one event to read again whole, that may need a bigger buffer.
        let mut again = false;
        let consumed = if let Some(at) = in_cdata {
            let piece = &data[start..limit];
            let (content, consumed) = match memchr::memmem::find(piece, b"]]>") {
                Some(k) => {
                    in_cdata = None;
                    (&piece[..k], k + 3)
                }
                None if eof => {
                    let error = quick_xml::Error::Syntax(quick_xml::errors::SyntaxError::UnclosedCData);
                    return Err(XmlError { error, position: at });
                }
                None => {
                    // Keep a `]]` that the next bytes may end with `>`.
                    let k = cut_point(&piece[..piece.len().saturating_sub(2)]);
                    (&piece[..k], k)
                }
            };
            let text = std::str::from_utf8(content).map_err(|e| XmlError { error: e.into(), position: at })?;
            if !text.is_empty() {
                handle(Event::CData(BytesCData::new(text)));
            }
            consumed
        } else {
            let guard = if data[start..limit].starts_with(BOM) {
                start -= GUARD.len();
                data[start..start + GUARD.len()].copy_from_slice(GUARD);
                GUARD.len()
            } else {
                0
            };
            let window = &data[start..limit];
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
                    Ok(event @ Event::Text(_)) if !eof && reader.buffer_position() as usize == window.len() => {
                        if window.len() - before < chunk / 2 {
                            break before;
                        }
                        // Long text: hand this piece on and read on after it. A short one is read
                        // again whole, so what is kept for the next window is less than half a
                        // chunk and the buffer never grows for text.
                        handle(event);
                        break window.len();
                    }
                    Err(quick_xml::Error::Syntax(quick_xml::errors::SyntaxError::UnclosedCData))
                        if !eof && window.len() - before >= chunk / 2 && window[before..].starts_with(CDATA) =>
                    {
                        // Long CDATA: its content comes in pieces, as long text does.
                        in_cdata = Some(position + (before - guard) as u64);
                        break before + CDATA.len();
                    }
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
                    // Cut off by the window's end, maybe: read it again with more input.
                    // quick-xml's syntax errors all mean "the input ended inside this markup"; any
                    // other error that stopped short of the window's end is the document's own.
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
            start += guard;
            again = resume < window.len() && in_cdata.is_none();
            resume - guard
        };
        position += consumed as u64;
        start += consumed;
        // Keep the unhandled bytes, after the guard's room, and make room for at least half a chunk
        // when they are an event to read again whole.
        data.copy_within(start..end, GUARD.len());
        end = GUARD.len() + (end - start);
        start = GUARD.len();
        if again && data.len() - end < chunk.div_ceil(2) {
            data.resize(data.len() * 2, 0);
        }
    }
}

/// Where `bytes` can be cut so that a piece of text ends there: not inside a UTF-8 sequence, and
/// not right after a CR (a CR LF split in two would read as two line ends).
fn cut_point(bytes: &[u8]) -> usize {
    let mut cut = bytes.len();
    for back in 1..=cut.min(3) {
        let lead = bytes[cut - back];
        if lead & 0xC0 == 0x80 {
            continue;
        }
        let width = match lead {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        if width > back {
            cut -= back;
        }
        break;
    }
    if cut > 0 && bytes[cut - 1] == b'\r' {
        cut -= 1;
    }
    cut
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

/// [`read_events`] checked against one quick-xml reader over the whole input, for the unit tests
/// and the `xml_stream` fuzz target: whatever the chunk size, the same events (text and CDATA
/// pieces joined) and the same error, but for the exceptions the module documentation lists.
pub(crate) mod differential {
    use super::*;

    /// An event as text; consecutive text (or CDATA) events are one, since long ones come in pieces.
    pub(super) fn push(events: &mut Vec<String>, event: Event<'_>) {
        let (kind, content) = match &event {
            Event::Text(t) => ("Text: ", t.as_ref()),
            Event::CData(t) => ("CData: ", t.as_ref()),
            _ => return events.push(format!("{event:?}")),
        };
        match events.last_mut() {
            Some(last) if last.starts_with(kind) => last.push_str(content),
            _ => events.push(format!("{kind}{content}")),
        }
    }

    /// Where reading stopped and why. Invalid UTF-8 is placed at the start of the piece of text
    /// it is in: compared by kind only, and its position must not come before the whole-input one.
    #[derive(Debug)]
    pub(super) struct Stop(pub(super) u64, pub(super) quick_xml::Error);

    impl PartialEq for Stop {
        fn eq(&self, whole: &Stop) -> bool {
            match (&self.1, &whole.1) {
                (quick_xml::Error::Encoding(_), quick_xml::Error::Encoding(_)) => self.0 >= whole.0,
                (mine, theirs) => self.0 == whole.0 && mine.to_string() == theirs.to_string(),
            }
        }
    }

    /// Every event as text, and the error with its position, as one whole-input reader sees them.
    pub(super) fn whole(xml: &[u8]) -> (Vec<String>, Option<Stop>) {
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
                Ok(event) => push(&mut events, event),
                Err(error) => {
                    let position = match error {
                        quick_xml::Error::Encoding(_) => before,
                        _ => reader.error_position(),
                    };
                    return (events, Some(Stop(position, error)));
                }
            }
        }
    }

    pub(super) fn chunked(xml: &[u8], chunk: usize) -> (Vec<String>, Option<Stop>) {
        let mut events = Vec::new();
        let result = read_events(&mut &xml[..], chunk, |event| push(&mut events, event));
        (events, result.err().map(|e| Stop(e.position, e.error)))
    }

    /// `Ok` when reading `xml` `chunk` bytes at a time gives what one reader over the whole input
    /// gives; else both, as text.
    pub(crate) fn agrees(xml: &[u8], chunk: usize) -> Result<(), String> {
        let expected = whole(xml);
        let mut got = chunked(xml, chunk);
        if matches!(got.1, Some(Stop(_, quick_xml::Error::Encoding(_)))) && got.0.len() > expected.0.len() {
            // The text (or CDATA) before invalid UTF-8 may come as a piece before the error.
            got.0.pop_if(|last| last.starts_with("Text: ") || last.starts_with("CData: "));
        }
        if got == expected { Ok(()) } else { Err(format!("read in chunks: {got:?}\nread whole: {expected:?}")) }
    }
}

#[cfg(test)]
mod tests {
    use super::differential::{Stop, agrees, chunked, push, whole};
    use super::*;

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
            for chunk in [1, 2, 3, 4, 5, 7, 8, 11, 16, 64, xml.len() + 1] {
                if let Err(difference) = agrees(xml, chunk) {
                    panic!("chunk {chunk} of {}: {difference}", String::from_utf8_lossy(xml));
                }
            }
        }
    }

    #[test]
    fn errors_say_where() {
        // In the text event, at a chunk that holds it whole; in the piece, when the text is cut.
        let xml = b"<a><b>ok</b><c>bad \xFF byte</c></a>";
        assert_eq!(chunked(xml, 64).1.map(|s| s.0), Some(15));
        assert_eq!(chunked(xml, 4).1.map(|s| s.0), Some(19));
        let (events, error) = chunked(b"<a>&amp</a>", 2);
        assert_eq!(events.len(), 1);
        assert!(error.is_some());
    }

    #[test]
    fn a_broken_document_is_not_read_to_its_end() {
        let xml = format!("<a><c>a & b</c>{}</a>", "<b>x</b>".repeat(10_000));
        let mut input = xml.as_bytes();
        let error = read_events(&mut input, 64, |_| {}).err().map(|e| Stop(e.position, e.error));
        assert_eq!(error, whole(xml.as_bytes()).1);
        assert!(error.is_some_and(|e| e.0 == 8));
        assert!(input.len() > xml.len() - 1000, "read {} bytes", xml.len() - input.len());
    }

    #[test]
    fn long_text_and_cdata_come_in_pieces_no_longer_than_a_chunk() {
        let text = "é\r\n€🚀x".repeat(10_000);
        for body in [text.clone(), format!("<![CDATA[{text}]]]]>"), format!("{text}<![CDATA[{text}]]>{text}")] {
            let xml = format!("<a><b>{body}</b></a>");
            let expected = whole(xml.as_bytes());
            let mut longest = 0;
            let mut events = Vec::new();
            let result = read_events(&mut xml.as_bytes(), 1000, |event| {
                longest = longest.max(event.len());
                push(&mut events, event);
            });
            assert_eq!((events, result.err().map(|e| Stop(e.position, e.error))), expected);
            assert!(longest <= 1000, "an event of {longest} bytes in {}", body.starts_with("<!"));
        }
        // A CDATA section that never ends is an error at its start, as for one reader (after its
        // first pieces were handed on).
        let xml = format!("<a><![CDATA[{text}");
        assert_eq!(chunked(xml.as_bytes(), 1000).1, whole(xml.as_bytes()).1);
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
            let result = read_events(&mut Trickle(xml, 0), 16, |event| push(&mut events, event));
            let error = result.err().map(|e| Stop(e.position, e.error));
            assert_eq!((events, error), whole(xml));
        }
    }
}
