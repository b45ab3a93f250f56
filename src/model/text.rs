//! Long, rare text of a case (failure details, captured output) kept packed in memory.
//!
//! A million-case run can hold over 100 MB of tracebacks: each thread appends the texts it makes
//! to its open block, and a full block is packed with LZ4. A [`Text`] is a 16-byte handle to its
//! block; reading it unpacks the block once per thread (cached), so readers going case by case
//! unpack each block once. A run read only to be rendered again ([`Text::kept_plain`]) keeps its
//! blocks unpacked instead: packing them would only be undone by every report that reads them.

use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Raw bytes a block gathers before it is packed: large enough for LZ4 to find the repeats
/// between tracebacks, small enough to unpack for one text read out of order.
const BLOCK_BYTES: usize = 64 * 1024;

/// Failure details or captured output: text kept in a packed block, read with [`Text::with`].
/// Clones share the block; equality, ordering and serialisation are those of the text.
#[derive(Clone)]
pub struct Text {
    block: Arc<Block>,
    start: u32,
    len: u32,
}

/// Texts appended by one thread: raw while open, LZ4-packed (or kept plain) once full.
struct Block {
    /// Unique for the process, so a cache of unpacked blocks never mistakes a new block for a
    /// freed one at the same address.
    id: u64,
    /// Sealed as it is rather than packed ([`Text::kept_plain`]).
    plain: bool,
    /// The texts while the block is open; emptied once sealed.
    raw: Mutex<String>,
    /// The texts once the block is full.
    sealed: OnceLock<Sealed>,
}

/// A full block's texts.
enum Sealed {
    /// `lz4_flex` with the unpacked size in front.
    Packed(Box<[u8]>),
    /// As they were appended.
    Plain(Box<str>),
}

static NEXT_BLOCK: AtomicU64 = AtomicU64::new(0);

impl Block {
    fn new(capacity: usize) -> Arc<Block> {
        Arc::new(Block {
            id: NEXT_BLOCK.fetch_add(1, Ordering::Relaxed),
            plain: KEEP_PLAIN.try_with(Cell::get).unwrap_or(false),
            raw: Mutex::new(String::with_capacity(capacity)),
            sealed: OnceLock::new(),
        })
    }

    /// Packs the raw texts (or keeps them as they are) and frees them. Under the lock, so a
    /// reader sees either.
    fn seal(&self) {
        let mut raw = self.raw.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.sealed.get().is_none() {
            let sealed = match self.plain {
                true => Sealed::Plain(std::mem::take(&mut *raw).into_boxed_str()),
                false => Sealed::Packed(lz4_flex::compress_prepend_size(raw.as_bytes()).into_boxed_slice()),
            };
            let _ = self.sealed.set(sealed);
            *raw = String::new();
        }
    }
}

/// This thread's open block; sealed when full and when the thread ends.
struct Open(Option<Arc<Block>>);

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(block) = self.0.take() {
            block.seal();
        }
    }
}

std::thread_local! {
    static OPEN: std::cell::RefCell<Open> = const { std::cell::RefCell::new(Open(None)) };
    /// The block this thread unpacked last: readers go case by case, block by block. Shared
    /// (`Rc`) so a reader holds its text while it runs without holding the cache: a text read
    /// inside another's reader still finds the cache free.
    static UNPACKED: std::cell::RefCell<Option<(u64, Rc<String>)>> = const { std::cell::RefCell::new(None) };
    /// Set while [`Text::kept_plain`] runs on this thread: blocks made then are not packed.
    static KEEP_PLAIN: Cell<bool> = const { Cell::new(false) };
}

/// Seals this thread's open block, so the texts appended after this go to a block of the mode
/// then in force.
fn seal_open() {
    let _ = OPEN.try_with(|open| {
        if let Some(block) = open.borrow_mut().0.take() {
            block.seal();
        }
    });
}

impl Text {
    /// Appends `text` to this thread's open block.
    pub fn new(text: &str) -> Text {
        // Offsets are u32: a text past 4 GiB (none is: readers cap them far below) is cut, with
        // a note of what was cut, rather than wrapped.
        let Ok(len) = u32::try_from(text.len()) else {
            return Text::new(&crate::text::cap_text(text, u32::MAX as usize / 2));
        };
        let append = |open: &mut Open| {
            let block = open.0.get_or_insert_with(|| Block::new(BLOCK_BYTES.max(text.len())));
            let mut raw = block.raw.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // Below BLOCK_BYTES: an open block is sealed as soon as it reaches that size.
            let start = raw.len() as u32;
            raw.push_str(text);
            let full = raw.len() >= BLOCK_BYTES;
            drop(raw);
            let handle = Text { block: block.clone(), start, len };
            if full && let Some(block) = open.0.take() {
                block.seal();
            }
            handle
        };
        match OPEN.try_with(|open| append(&mut open.borrow_mut())) {
            Ok(text) => text,
            // The thread is ending (its open block already sealed): a block for this text.
            Err(_) => append(&mut Open(None)),
        }
    }

    /// `text` cut to `max` bytes as [`crate::text::cap_text`] cuts it, with no copy made first
    /// when it fits.
    pub fn capped(text: &str, max: usize) -> Text {
        match text.len() <= max {
            true => Text::new(text),
            false => Text::new(&crate::text::cap_text(text, max)),
        }
    }

    /// Runs `make` with the texts this thread makes kept plain, not packed: for a run read only
    /// to be rendered again (`fcorr report`), where each report would unpack every block again.
    /// Costs the memory the packing saves (about half the texts' bytes, often more).
    pub fn kept_plain<T>(make: impl FnOnce() -> T) -> T {
        /// Puts the mode back (and seals the plain block) however `make` ends.
        struct Restore(bool);
        impl Drop for Restore {
            fn drop(&mut self) {
                seal_open();
                let _ = KEEP_PLAIN.try_with(|plain| plain.set(self.0));
            }
        }
        seal_open();
        let _restore = Restore(KEEP_PLAIN.try_with(|plain| plain.replace(true)).unwrap_or(false));
        make()
    }

    /// Whether the text's block is packed (or will be, once full), not kept plain.
    #[cfg(test)]
    pub(crate) fn packs(&self) -> bool {
        !self.block.plain
    }

    /// Bytes of the text, without unpacking it.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True for an empty text.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The text, unpacked (a copy: [`Text::with`] reads it without one).
    pub fn get(&self) -> Cow<'static, str> {
        Cow::Owned(self.with(str::to_string))
    }

    /// Runs `read` over the text, borrowed from its block (unpacked once per thread and block).
    pub fn with<T>(&self, read: impl FnOnce(&str) -> T) -> T {
        let range = self.start as usize..self.start as usize + self.len as usize;
        let sealed = match self.block.sealed.get() {
            Some(sealed) => sealed,
            None => {
                let raw = self.block.raw.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                // Checked again under the lock: `seal` empties `raw` under it. The text is
                // copied out: `read` might append to this very block, which takes the lock.
                match self.block.sealed.get() {
                    Some(sealed) => sealed,
                    None => {
                        let text = raw.get(range).unwrap_or_default().to_string();
                        drop(raw);
                        return read(&text);
                    }
                }
            }
        };
        let packed = match sealed {
            Sealed::Plain(text) => return read(text.get(range).unwrap_or_default()),
            Sealed::Packed(packed) => packed,
        };
        let unpack = || -> Rc<String> {
            // `seal` packed the bytes of a `String`, which unpack to that UTF-8 text: neither
            // step can fail short of memory corruption.
            let bytes = lz4_flex::decompress_size_prepended(packed).unwrap_or_default();
            Rc::new(String::from_utf8(bytes).unwrap_or_default())
        };
        let cached = UNPACKED.try_with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            match &*cache {
                Some((id, text)) if *id == self.block.id => Some(text.clone()),
                _ => Some(cache.insert((self.block.id, unpack())).1.clone()),
            }
        });
        let block = cached.ok().flatten().unwrap_or_else(unpack);
        read(block.get(range).unwrap_or_default())
    }
}
impl From<&str> for Text {
    fn from(text: &str) -> Text {
        Text::new(text)
    }
}

impl From<String> for Text {
    fn from(text: String) -> Text {
        Text::new(&text)
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Text {
        Text::new(text)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with(|text| f.write_str(text))
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with(|text| std::fmt::Debug::fmt(text, f))
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.len == other.len && self.with(|a| other.with(|b| a == b))
    }
}

impl Eq for Text {}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Text) -> std::cmp::Ordering {
        self.with(|a| other.with(|b| a.cmp(b)))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.len() == other.len() && self.with(|text| text == other)
    }
}

impl serde::Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.with(|text| serializer.serialize_str(text))
    }
}

impl<'de> serde::Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
        let text = Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Text::new(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_read_back_whole_from_open_and_packed_blocks_on_any_thread() {
        // Enough text for several packed blocks, then some in this thread's open block.
        let made: Vec<String> =
            (0..3000).map(|i| format!("Traceback {i}\n  File \"t.py\", line {i}\nAssertionError: ü{i}")).collect();
        let texts: Vec<Text> = made.iter().map(Text::from).collect();
        assert!(matches!(texts[0].block.sealed.get(), Some(Sealed::Packed(_))), "the first block is full and packed");
        assert!(texts.last().unwrap().block.sealed.get().is_none(), "the last block is still open");
        let packed: usize = {
            let mut blocks: Vec<&Arc<Block>> = texts.iter().map(|t| &t.block).collect();
            blocks.dedup_by(|a, b| Arc::ptr_eq(a, b));
            let packed = blocks.iter().filter_map(|b| match b.sealed.get() {
                Some(Sealed::Packed(p)) => Some(p.len()),
                _ => None,
            });
            packed.sum()
        };
        let raw: usize = made.iter().map(String::len).sum();
        assert!(packed * 2 < raw, "packed {packed} of {raw} bytes");
        for (text, made) in texts.iter().zip(&made) {
            assert_eq!((text.get(), text.len()), (Cow::Borrowed(made.as_str()), made.len()));
        }
        // Out of order, and from another thread (its own cache); a block packed while read.
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for i in (0..made.len()).rev().step_by(7) {
                    assert_eq!(texts[i].to_string(), made[i]);
                }
            });
        });
        let open = Text::new("last");
        let sealed_later = open.clone();
        open.block.seal();
        assert_eq!((sealed_later.get(), &*format!("{open:?}")), (Cow::Borrowed("last"), "\"last\""));
    }

    #[test]
    fn texts_compare_order_and_serialise_as_their_text() {
        let (a, b, apple) = (Text::from("apple"), Text::from(String::from("banana")), Text::from("apple"));
        assert!(a < b && a == apple && a != b && a == *"apple");
        assert_eq!((Text::from("").is_empty(), a.len()), (true, 5));
        let json = serde_json::to_string(&vec![a.clone(), b.clone()]).unwrap();
        assert_eq!(json, r#"["apple","banana"]"#);
        let back: Vec<Text> = serde_json::from_str(r#"["apple","b\u00e4nana\n"]"#).unwrap();
        assert_eq!((back[0].get(), back[1].get()), (Cow::Borrowed("apple"), Cow::Borrowed("bänana\n")));
        // Cut as `cap_text` cuts, with nothing copied when the text fits.
        assert_eq!(Text::capped("ééé", 3).get(), crate::text::cap_text("ééé", 3));
        assert_eq!(Text::capped("short", 10).get(), "short");
    }

    #[test]
    fn texts_read_inside_another_texts_reader_come_back_whole() {
        // Two packed blocks: the inner read unpacks the second while the first is being read.
        let made: Vec<String> =
            (0..4000).map(|i| format!("line {i} of a trace that goes on {}", "x".repeat(i % 50))).collect();
        let texts: Vec<Text> = made.iter().map(Text::from).collect();
        let (first, last) = (&texts[0], &texts[texts.len() / 2]);
        assert!(!Arc::ptr_eq(&first.block, &last.block) && last.block.sealed.get().is_some());
        let both = first.with(|a| last.with(|b| format!("{a}|{b}")));
        assert_eq!(both, format!("{}|{}", made[0], made[made.len() / 2]));
        assert_eq!(first.cmp(last), made[0].cmp(&made[made.len() / 2]));
        assert!(*first == Text::new(&made[0]));
    }

    #[test]
    fn texts_kept_plain_are_not_packed_and_read_back_whole() {
        let made: Vec<String> = (0..3000).map(|i| format!("Traceback {i}\nAssertionError: ü{i}")).collect();
        let texts: Vec<Text> = Text::kept_plain(|| made.iter().map(Text::from).collect());
        assert!(matches!(texts[0].block.sealed.get(), Some(Sealed::Plain(_))), "full blocks are kept plain");
        assert!(texts.last().unwrap().block.sealed.get().is_some(), "the last block is sealed when the mode ends");
        for (text, made) in texts.iter().zip(&made) {
            assert_eq!(text.with(str::to_string), *made);
        }
        // Outside the mode, texts are packed again (in a block of their own).
        let after: Vec<Text> = made.iter().map(Text::from).collect();
        assert!(matches!(after[0].block.sealed.get(), Some(Sealed::Packed(_))));
        assert!(!Arc::ptr_eq(&after[0].block, &texts.last().unwrap().block));
    }
}
