//! Long, rare text of a case (failure details, captured output) kept packed in memory.
//!
//! A million-case run can hold over 100 MB of tracebacks: each thread appends the texts it makes
//! to its open block, and a full block is packed with LZ4. A [`Text`] is a 16-byte handle to its
//! block; reading it unpacks the block once per thread (cached), so readers going case by case
//! unpack each block once.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Raw bytes a block gathers before it is packed: large enough for LZ4 to find the repeats
/// between tracebacks, small enough to unpack for one text read out of order.
const BLOCK_BYTES: usize = 64 * 1024;

/// Failure details or captured output: text kept in a packed block, read with [`Text::get`].
/// Clones share the block; equality, ordering and serialisation are those of the text.
#[derive(Clone)]
pub struct Text {
    block: Arc<Block>,
    start: u32,
    len: u32,
}

/// Texts appended by one thread: raw while open, LZ4-packed once full.
struct Block {
    /// Unique for the process, so a cache of unpacked blocks never mistakes a new block for a
    /// freed one at the same address.
    id: u64,
    /// The texts while the block is open; emptied once packed.
    raw: Mutex<String>,
    /// The packed texts (`lz4_flex` with the unpacked size in front), once full.
    packed: OnceLock<Box<[u8]>>,
}

static NEXT_BLOCK: AtomicU64 = AtomicU64::new(0);

impl Block {
    fn new(capacity: usize) -> Arc<Block> {
        Arc::new(Block {
            id: NEXT_BLOCK.fetch_add(1, Ordering::Relaxed),
            raw: Mutex::new(String::with_capacity(capacity)),
            packed: OnceLock::new(),
        })
    }

    /// Packs the raw texts and frees them. Under the lock, so a reader sees either.
    fn seal(&self) {
        let mut raw = self.raw.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.packed.get().is_none() {
            let _ = self.packed.set(lz4_flex::compress_prepend_size(raw.as_bytes()).into_boxed_slice());
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
    /// The block this thread unpacked last: readers go case by case, block by block.
    static UNPACKED: std::cell::RefCell<Option<(u64, String)>> = const { std::cell::RefCell::new(None) };
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

    /// Bytes of the text, without unpacking it.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True for an empty text.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The text, unpacked (a copy: the unpacked block stays in this thread's cache).
    pub fn get(&self) -> Cow<'static, str> {
        Cow::Owned(self.unpacked())
    }

    /// Runs `read` over the text.
    pub fn with<T>(&self, read: impl FnOnce(&str) -> T) -> T {
        read(&self.unpacked())
    }

    fn unpacked(&self) -> String {
        let range = self.start as usize..self.start as usize + self.len as usize;
        if self.block.packed.get().is_none() {
            let raw = self.block.raw.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // Checked again under the lock: `seal` packs and empties `raw` under it.
            if self.block.packed.get().is_none() {
                return raw.get(range).unwrap_or_default().to_string();
            }
        }
        let unpack = |cache: &mut Option<(u64, String)>| {
            if cache.as_ref().is_none_or(|(id, _)| *id != self.block.id) {
                let packed = self.block.packed.get().map_or(&[][..], |p| &p[..]);
                // `seal` packed the bytes of a `String`, which unpack to that UTF-8 text: neither
                // step can fail short of memory corruption.
                let text = lz4_flex::decompress_size_prepended(packed)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .unwrap_or_default();
                *cache = Some((self.block.id, text));
            }
            cache.as_ref().and_then(|(_, text)| text.get(range.clone())).unwrap_or_default().to_string()
        };
        UNPACKED.try_with(|cache| unpack(&mut cache.borrow_mut())).unwrap_or_else(|_| unpack(&mut None))
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
        self.len == other.len && self.get() == other.get()
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
        self.get().cmp(&other.get())
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
        assert!(texts[0].block.packed.get().is_some(), "the first block is full and packed");
        assert!(texts.last().unwrap().block.packed.get().is_none(), "the last block is still open");
        let packed: usize = {
            let mut blocks: Vec<&Arc<Block>> = texts.iter().map(|t| &t.block).collect();
            blocks.dedup_by(|a, b| Arc::ptr_eq(a, b));
            blocks.iter().filter_map(|b| b.packed.get()).map(|p| p.len()).sum()
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
}
