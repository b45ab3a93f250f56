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

/// Case ids of one suite streamed part by part (`fcorr import --stream`: each file, and each batch
/// of cases a large file hands out, parsed and given ids on its own): makes each part's ids what
/// one pass over every case in order would give ([`Suite::finalize_cases`]: the second case with
/// an identity gets `#2`...). Holds about 18 bytes per distinct case, not the cases.
///
/// The parts of one file can be taken back ([`IdsAcrossParts::rewind`]) when the file turns out
/// to be broken: the in-memory import takes none of its cases, so neither may the numbering.
#[derive(Default)]
pub(crate) struct IdsAcrossParts {
    /// Keys of the cases of earlier parts. A hash set, not a sorted list: parts come by the
    /// thousand in one large file, and each would cost a pass over every key before it.
    seen: std::collections::HashSet<u64, Keyed>,
    /// How many cases of earlier parts share a key, for keys shared by more than one.
    shared: std::collections::HashMap<u64, u32, Keyed>,
    /// Since the last [`IdsAcrossParts::keep`]: keys added to `seen`, and `shared` entries as
    /// they were before each change, to undo them.
    added: Vec<u64>,
    changed: Vec<(u64, Option<u32>)>,
}

/// Keys are SHA-256 bits already: used as their own hash (see `KeyHasher`).
type Keyed = std::hash::BuildHasherDefault<super::KeyHasher>;

impl IdsAcrossParts {
    /// Renumbers the ids of `cases`, the next part, given every part before it.
    pub(crate) fn next_part(&mut self, cases: &mut [Case]) {
        let mut here: std::collections::HashMap<u64, u32, Keyed> = Default::default();
        for case in cases.iter_mut() {
            // Ids are the key's 16 hex digits, then `#n` for a repeat (`key_id`).
            let Some(key) = case.id.get(..16).and_then(|hex| u64::from_str_radix(hex, 16).ok()) else { continue };
            let before = if self.seen.contains(&key) { self.shared.get(&key).copied().unwrap_or(1) } else { 0 };
            let n = here.entry(key).or_insert(0);
            *n += 1;
            if before > 0 {
                case.id = super::key_id(key, before + *n);
            }
        }
        for (key, n) in here {
            if self.seen.contains(&key) {
                let old = self.shared.get(&key).copied();
                self.changed.push((key, old));
                self.shared.insert(key, old.unwrap_or(1) + n);
            } else {
                self.seen.insert(key);
                self.added.push(key);
                if n > 1 {
                    self.changed.push((key, None));
                    self.shared.insert(key, n);
                }
            }
        }
    }

    /// The parts since the last [`IdsAcrossParts::keep`] stay counted.
    pub(crate) fn keep(&mut self) {
        self.added = Vec::new();
        self.changed = Vec::new();
    }

    /// Forgets the parts since the last [`IdsAcrossParts::keep`], as if they never came.
    pub(crate) fn rewind(&mut self) {
        for (key, old) in self.changed.drain(..).rev() {
            match old {
                Some(n) => self.shared.insert(key, n),
                None => self.shared.remove(&key),
            };
        }
        for key in self.added.drain(..) {
            self.seen.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseStatus, SuiteKind};

    fn part(names: &[&str]) -> Vec<Case> {
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        suite.cases = names
            .iter()
            .map(|n| Case { name: n.to_string().into(), status: CaseStatus::Passed, ..Case::default() })
            .collect();
        suite.finalize_cases();
        suite.cases
    }

    fn ids(cases: &[Case]) -> Vec<String> {
        cases.iter().map(|c| c.id.to_string()).collect()
    }

    /// Parts numbered one after the other give the ids of one pass over all of them; a rewound
    /// part counts for nothing.
    #[test]
    fn parts_are_numbered_as_one_pass_and_a_rewound_part_is_forgotten() {
        let whole = ids(&part(&["a", "b", "a", "c", "a", "b", "c", "c"]));
        let mut across = IdsAcrossParts::default();
        let mut got = Vec::new();
        for names in [&["a", "b"][..], &["a", "c", "a"], &["b", "c", "c"]] {
            let mut cases = part(names);
            across.next_part(&mut cases);
            got.extend(ids(&cases));
            across.keep();
        }
        assert_eq!(got, whole);

        // A broken file's parts, then taken back: the next file is numbered as if it never came.
        let mut across = IdsAcrossParts::default();
        let mut first = part(&["a", "b"]);
        across.next_part(&mut first);
        across.keep();
        for names in [&["a", "x", "x"][..], &["b", "x"]] {
            across.next_part(&mut part(names));
        }
        across.rewind();
        let mut next = part(&["a", "x", "b"]);
        across.next_part(&mut next);
        assert_eq!([ids(&first), ids(&next)].concat(), ids(&part(&["a", "b", "a", "x", "b"])));
    }
}
