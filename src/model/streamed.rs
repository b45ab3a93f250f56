//! Suites whose cases live on disk (`fcorr import --stream`, `fcorr merge --stream`): the handle a
//! [`Suite`] keeps to them, and [`Suite::every_case`], the one way a stage reads every case of a
//! suite whether they are in memory or streamed back from the spill file in order.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;

use super::{Case, Suite};

/// Cases written in order somewhere else (the spill file of `crate::spill`), read back on demand.
pub trait CaseStore: Send + Sync {
    /// Every case of this part, in the order written; an `Err` ends the part.
    fn cases(&self) -> Box<dyn Iterator<Item = std::io::Result<Case>> + '_>;
    /// How many cases [`CaseStore::cases`] gives.
    fn count(&self) -> u64;
}

/// Where every case of a streamed suite is: parts read one after the other. The suite's own
/// `cases` then hold only the cases kept in memory for the summaries (failing, flaky, critical,
/// up to a cap), and `counts` count every case.
#[derive(Clone, Default)]
pub struct Streamed {
    pub(crate) parts: Vec<Arc<dyn CaseStore>>,
    /// Failing or flaky cases past the cap: in the parts, not in `Suite::cases`.
    pub(crate) not_kept: u64,
}

impl Streamed {
    /// How many cases the parts hold.
    pub(crate) fn len(&self) -> u64 {
        self.parts.iter().map(|p| p.count()).sum()
    }
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Streamed({} parts, {} cases)", self.parts.len(), self.len())
    }
}

/// Two handles are the same when they name the same parts (what is on disk is not compared).
impl PartialEq for Streamed {
    fn eq(&self, other: &Self) -> bool {
        self.parts.len() == other.parts.len() && self.parts.iter().zip(&other.parts).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// Every case of a suite in order, borrowed from memory or read back from its parts. A part that
/// cannot be read ends the iteration; [`EveryCase::finish`] then returns the error, so a caller
/// that must see every case (a report) fails instead of writing a shorter one.
pub struct EveryCase<'a> {
    memory: std::slice::Iter<'a, Case>,
    parts: std::slice::Iter<'a, Arc<dyn CaseStore>>,
    current: Option<Box<dyn Iterator<Item = std::io::Result<Case>> + 'a>>,
    problem: Option<std::io::Error>,
}

impl<'a> Iterator for EveryCase<'a> {
    type Item = Cow<'a, Case>;

    fn next(&mut self) -> Option<Cow<'a, Case>> {
        if let Some(case) = self.memory.next() {
            return Some(Cow::Borrowed(case));
        }
        while self.problem.is_none() {
            if let Some(part) = &mut self.current {
                match part.next() {
                    Some(Ok(case)) => return Some(Cow::Owned(case)),
                    Some(Err(e)) => self.problem = Some(e),
                    None => self.current = None,
                }
            } else {
                self.current = Some(self.parts.next()?.cases());
            }
        }
        None
    }
}

impl EveryCase<'_> {
    /// `Err` when a part could not be read to its end (the cases given were not all of them).
    pub fn finish(mut self) -> std::io::Result<()> {
        // Whatever the caller left unread is not read: only a problem already met counts.
        self.problem.take().map_or(Ok(()), Err)
    }
}

impl Suite {
    /// Every case of the suite, in order: [`Suite::cases`], or for a streamed suite its parts
    /// on disk (see [`EveryCase::finish`] for read errors).
    pub fn every_case(&self) -> EveryCase<'_> {
        match &self.streamed {
            Some(streamed) => {
                EveryCase { memory: [].iter(), parts: streamed.parts.iter(), current: None, problem: None }
            }
            None => EveryCase { memory: self.cases.iter(), parts: [].iter(), current: None, problem: None },
        }
    }
}

impl Suite {
    /// Appends another part of this suite (a shard's, a file's): its cases in memory, its cases
    /// on disk after this suite's, and its counts (which count both).
    pub(crate) fn append_cases(&mut self, cases: Vec<Case>, streamed: Option<Streamed>, counts: &super::Counts) {
        self.cases.extend(cases);
        if let Some(more) = streamed {
            let parts = self.streamed.get_or_insert_with(Streamed::default);
            parts.parts.extend(more.parts);
            parts.not_kept += more.not_kept;
        }
        self.counts.merge(counts);
    }
}

/// `Run::suites` as written to `results.json`: a streamed suite's `cases` come from its parts.
/// The suite itself is serialised by its derive; only its `cases` field looks at [`NEXT_PARTS`].
pub(super) fn serialize_suites<S: serde::Serializer>(suites: &[Suite], serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(suites.len()))?;
    for suite in suites {
        NEXT_PARTS.with(|next| *next.borrow_mut() = suite.streamed.clone());
        let done = seq.serialize_element(suite);
        NEXT_PARTS.with(|next| next.borrow_mut().take());
        done?;
    }
    seq.end()
}

thread_local! {
    /// The parts of the suite [`serialize_suites`] is writing on this thread, taken by
    /// [`serialize_cases`] (serde hands a field's serializer only the field).
    static NEXT_PARTS: std::cell::RefCell<Option<Streamed>> = const { std::cell::RefCell::new(None) };
}

/// `Suite::cases`: the cases in memory, or, inside [`serialize_suites`] for a streamed suite,
/// every case read back from its parts (an unreadable part fails the serialisation).
pub(super) fn serialize_cases<S: serde::Serializer>(cases: &[Case], serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::{Error, SerializeSeq};
    let Some(streamed) = NEXT_PARTS.with(|next| next.borrow_mut().take()) else {
        return cases.serialize(serializer);
    };
    let mut seq = serializer.serialize_seq(usize::try_from(streamed.len()).ok())?;
    for part in &streamed.parts {
        for case in part.cases() {
            seq.serialize_element(&case.map_err(S::Error::custom)?)?;
        }
    }
    seq.end()
}

/// Case ids of one suite streamed part by part (`fcorr import --stream` of several files, each
/// parsed and given ids on its own): makes each part's ids what one pass over every case in
/// order would give ([`Suite::finalize_cases`]: the second case with an identity gets `#2`...).
/// Holds 8 bytes per distinct case, not the cases.
#[derive(Default)]
pub(crate) struct IdsAcrossParts {
    /// Keys of the cases of earlier parts, sorted.
    seen: Vec<u64>,
    /// How many cases of earlier parts share a key, for keys shared by more than one.
    shared: std::collections::HashMap<u64, u32>,
}

impl IdsAcrossParts {
    /// Renumbers the ids of `cases`, the next part, given every part before it.
    pub(crate) fn next_part(&mut self, cases: &mut [Case]) {
        let mut here: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
        for case in cases.iter_mut() {
            // Ids are the key's 16 hex digits, then `#n` for a repeat (`key_id`).
            let Some(key) = case.id.get(..16).and_then(|hex| u64::from_str_radix(hex, 16).ok()) else { continue };
            let before = match self.seen.binary_search(&key) {
                Ok(_) => self.shared.get(&key).copied().unwrap_or(1),
                Err(_) => 0,
            };
            let n = here.entry(key).or_insert(0);
            *n += 1;
            if before > 0 {
                case.id = super::key_id(key, before + *n);
            }
        }
        let mut new = Vec::new();
        for (key, n) in here {
            match self.seen.binary_search(&key) {
                Ok(_) => *self.shared.entry(key).or_insert(1) += n,
                Err(_) => {
                    if n > 1 {
                        self.shared.insert(key, n);
                    }
                    new.push(key);
                }
            }
        }
        self.seen.extend(new);
        self.seen.sort_unstable();
    }
}
