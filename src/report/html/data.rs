//! The cases embedded in `report.html`, split so the list shows fast at 100,000 cases: one small
//! *list* block (columns of what the list filters, sorts, groups and searches on) and many
//! *detail* blocks (stack traces, output, rare fields), each inflated only when one of its cases
//! is opened.
//!
//! Every block is zlib-compressed JSON, base64-encoded into `<script type=
//! "application/x-fcorr+base64">`: base64 has no `<`, so no test name can end the element. The
//! list is columns, not rows (arrays of short strings and numbers parse several times faster than
//! objects or mixed arrays), and repeated strings (class, file, tags) are a dictionary plus
//! indices. The page's script (report.js) must match [`List`] and [`DetailRow`].

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use serde::Serialize;

use crate::compare::Change;
use crate::model::{Case, Run, Text};
use crate::report::links::CodeLinks;

/// Captured output of passing cases kept in the page, in bytes; past it such output is left out
/// (results.json keeps it), because a big green run would otherwise make a page nobody can open.
const PASSING_OUTPUT_BUDGET: usize = 4 * 1024 * 1024;

/// A detail block holds about this many bytes of text: inflating it when a case opens takes a
/// few milliseconds, and 100,000 cases make only ~100 blocks.
const DETAIL_BLOCK_BYTES: usize = 256 * 1024;
/// ...and at most this many cases, so blocks of tiny rows stay quick to parse too.
const DETAIL_BLOCK_CASES: usize = 4_000;
/// Per-row JSON overhead assumed when sizing detail blocks (brackets, nulls, an `extra` object).
const DETAIL_ROW_OVERHEAD: usize = 16;
/// Passing and skipped cases per part: the unit that stays in the page or moves to a sibling
/// file. 50,000 cases make a file of a few MB that the page reads in a fraction of a second.
pub(super) const PART_CASES: usize = 50_000;

/// Cases per part: [`PART_CASES`], or `FCORR_HTML_PART_CASES` (a positive number; for tests,
/// which page a few thousand cases into several sibling files).
fn part_cases() -> usize {
    std::env::var("FCORR_HTML_PART_CASES").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(PART_CASES)
}

/// Element id of the index block (run-level fields and the table of parts); part `k`'s list
/// block is `fcorr-p{k}`, its detail block `j` is `fcorr-p{k}-d{j}`.
pub(super) const INDEX_ID: &str = "fcorr-index";

/// What the page embeds, decided once: which cases keep their passing output, which change they
/// show, and how they are cut into parts.
pub(super) struct PageData<'a> {
    run: &'a Run,
    links: Option<&'a CodeLinks>,
    /// Every case in run order (8 bytes a case: a 1,000,000-case page holds these for its whole
    /// writing, beside every other report's writer).
    cases: Vec<&'a Case>,
    /// Index in `cases` of each suite's first case.
    suite_starts: Vec<usize>,
    /// Empty when the run was not compared.
    changes: Vec<Option<Change>>,
    keep_output: Vec<bool>,
    omitted_output: usize,
}

/// One part of the cases, compressed: its list block then its detail blocks, base64 text one
/// after the other in a [`Spool`].
pub(super) struct Encoded {
    spool: Spool,
    /// Length of each block in `spool`: the list block, then the detail blocks.
    lens: Vec<usize>,
    pub(super) n: usize,
    /// Cases per status code (`status_code`).
    pub(super) counts: [usize; 6],
}

/// Where a part's blocks are kept until the page is written: in memory, or (the failures of a
/// big run, which always stay in the page: 44 MB at 1,000,000 cases with 100,000 failures) in an
/// unnamed temporary file, so they are not all held while the rest is compressed and written.
pub(super) enum Spool {
    Memory(Vec<u8>),
    File(std::io::BufWriter<std::fs::File>),
}

impl Spool {
    /// An unnamed temporary file in `dir` (gone when dropped, whatever happens).
    pub(super) fn file_in(dir: &std::path::Path) -> std::io::Result<Spool> {
        Ok(Spool::File(std::io::BufWriter::with_capacity(64 * 1024, tempfile::tempfile_in(dir)?)))
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Spool::Memory(v) => v.write(buf),
            Spool::File(f) => f.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            Spool::Memory(v) => v.write_all(buf),
            Spool::File(f) => f.write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Spool::Memory(_) => Ok(()),
            Spool::File(f) => f.flush(),
        }
    }
}

impl Encoded {
    /// A part read back from its blocks' text (the list block first).
    pub(super) fn of_blocks(blocks: Vec<String>, n: usize, counts: [usize; 6]) -> Encoded {
        let lens = blocks.iter().map(String::len).collect();
        Encoded { spool: Spool::Memory(blocks.concat().into_bytes()), lens, n, counts }
    }

    /// Bytes the part adds to whatever holds it (markup around the blocks included).
    pub(super) fn size(&self) -> usize {
        self.lens.first().copied().unwrap_or(0) + self.lens.iter().skip(1).map(|d| d + 80).sum::<usize>() + 80
    }

    /// How many detail blocks the part has.
    pub(super) fn details(&self) -> usize {
        self.lens.len().saturating_sub(1)
    }

    /// Copies block `i` (0: the list block, `1 + j`: detail block `j`) into `out`.
    pub(super) fn copy_block(&mut self, i: usize, out: &mut dyn Write) -> std::io::Result<()> {
        use std::io::{Read, Seek};
        let start: usize = self.lens[..i].iter().sum();
        let len = self.lens[i];
        match &mut self.spool {
            Spool::Memory(bytes) => out.write_all(&bytes[start..start + len]),
            Spool::File(file) => {
                file.flush()?;
                let file = file.get_mut();
                file.seek(std::io::SeekFrom::Start(start as u64))?;
                let copied = std::io::copy(&mut Read::take(&mut *file, len as u64), out)?;
                if copied == len as u64 {
                    Ok(())
                } else {
                    Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the page's temporary file is short"))
                }
            }
        }
    }
}

impl<'a> PageData<'a> {
    pub(super) fn of(run: &'a Run, links: Option<&'a CodeLinks>) -> PageData<'a> {
        let by_case: HashMap<(&str, &str), Change> = run
            .comparison
            .iter()
            .flat_map(|c| c.cases.iter())
            .map(|c| ((c.suite_id.as_str(), c.case_id.as_str()), c.change))
            .collect();
        let mut suite_starts = Vec::with_capacity(run.suites.len());
        let mut cases: Vec<&Case> = Vec::with_capacity(run.suites.iter().map(|s| s.cases.len()).sum());
        let mut changes = Vec::new();
        for suite in &run.suites {
            suite_starts.push(cases.len());
            cases.extend(suite.cases.iter());
            if run.comparison.is_some() {
                changes.extend(suite.cases.iter().map(|c| by_case.get(&(suite.id.as_str(), c.id.as_str())).copied()));
            }
        }
        let mut budget = PASSING_OUTPUT_BUDGET;
        let mut omitted_output = 0;
        let keep_output: Vec<bool> = cases
            .iter()
            .map(|case| {
                let output = case.output_len();
                if !case.has_output() || case.status.is_failure() {
                    return true;
                }
                if output <= budget {
                    budget -= output;
                    true
                } else {
                    omitted_output += 1;
                    false
                }
            })
            .collect();
        PageData { run, links, cases, suite_starts, changes, keep_output, omitted_output }
    }

    /// Index in `run.suites` of the suite case `i` belongs to.
    fn suite_of(&self, i: usize) -> usize {
        // Suites with no cases share their start with the next one: the last suite starting at or
        // before `i` is the one that holds it.
        self.suite_starts.partition_point(|&start| start <= i).saturating_sub(1)
    }

    fn change(&self, i: usize) -> Option<Change> {
        self.changes.get(i).copied().flatten()
    }

    /// The cases cut into parts, each a list of case indices in run order: part 0 holds every
    /// failing and flaky case (it always stays in the page), the others [`PART_CASES`] of the
    /// rest each ([`part_cases`]; they may move to sibling files when the page would pass its cap).
    /// Indices are `u32` (4 bytes a case, held for the whole writing).
    pub(super) fn parts(&self) -> Vec<Vec<u32>> {
        let kept = |c: &Case| c.status.is_failure() || c.status == crate::model::CaseStatus::Flaky;
        let mut parts = vec![Vec::new()];
        let part_cases = part_cases();
        for (i, case) in self.cases.iter().enumerate() {
            // A run holds far fewer than 2^32 cases: each takes over 100 bytes in memory.
            let i = u32::try_from(i).expect("fewer than 2^32 cases");
            if kept(case) {
                parts[0].push(i);
                continue;
            }
            if parts.len() == 1 || parts.last().is_some_and(|part| part.len() >= part_cases) {
                parts.push(Vec::with_capacity(part_cases.min(self.cases.len())));
            }
            if let Some(part) = parts.last_mut() {
                part.push(i);
            }
        }
        for part in &mut parts {
            part.shrink_to_fit();
        }
        parts
    }

    /// One part's list block and detail blocks, compressed into `spool`.
    pub(super) fn encode(&self, part: &[u32], spool: Spool) -> std::io::Result<Encoded> {
        let mut starts = Vec::new();
        let (mut bytes, mut count) = (0, 0);
        for (k, i) in part.iter().map(|&i| i as usize).enumerate() {
            if k == 0 || bytes >= DETAIL_BLOCK_BYTES || count >= DETAIL_BLOCK_CASES {
                starts.push(k);
                (bytes, count) = (0, 0);
            }
            bytes += DETAIL_ROW_OVERHEAD + detail_size(self.cases[i], self.keep_output[i]);
            count += 1;
        }
        let mut out = Counted { inner: spool, n: 0 };
        let mut lens = Vec::with_capacity(starts.len() + 1);
        let list = self.list(part, &starts);
        out = encoded_with(out, LIST_LEVEL, |json| serde_json::to_writer(json, &list).map_err(std::io::Error::other))?;
        drop(list);
        lens.push(std::mem::take(&mut out.n));
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(part.len());
            let rows = part[start..end].iter().map(|&i| self.detail_row(i as usize));
            out = encoded_with(out, DETAIL_LEVEL, |json| write_detail_rows(json, rows))?;
            lens.push(std::mem::take(&mut out.n));
        }
        let mut counts = [0; 6];
        for &i in part {
            counts[usize::from(super::status_code(self.cases[i as usize].status))] += 1;
        }
        Ok(Encoded { spool: out.inner, lens, n: part.len(), counts })
    }

    /// The index block: run-level fields, and for each part its size, its counts per status and
    /// the sibling file that holds it (`None`: in the page). `token` ties the sibling files to this page.
    pub(super) fn index(&self, token: &str, parts: &[PartRef]) -> std::io::Result<String> {
        encoded(
            &Index {
                v: 4,
                token,
                suites: self.run.suites.iter().map(|s| SuiteRef { id: &s.id, name: &s.name }).collect(),
                omitted_output: self.omitted_output,
                baseline: self.run.comparison.as_ref().and_then(|c| c.baseline.commit.as_deref()),
                parts,
            },
            LIST_LEVEL,
        )
    }

    /// A Bloom filter of a part's case ids, in base64, for the index: a `#case=` link to a case in
    /// a sibling file reads only the files whose filter may hold its id (about 1.5 % of the others
    /// by chance), not every file in turn (~3 s at 1,000,000 cases). Ids are already 16 hex digits
    /// of a hash, so the three probes are digits 0-4, 5-9 and 10-14 of the id, masked to the
    /// filter's size (a power of two, 8 to 16 bits a case, at most 2^20 bits: 128 KiB). `None` when
    /// an id is not of that shape: the page then looks through the file as before.
    pub(super) fn id_filter(&self, part: &[u32]) -> Option<String> {
        use base64::Engine;
        let bits = (part.len() * ID_FILTER_BITS_PER_CASE).next_power_of_two().clamp(64, 1 << 20);
        let mut filter = vec![0u8; bits / 8];
        for &i in part {
            for probe in id_probes(&self.cases[i as usize].id)? {
                let bit = probe & (bits - 1);
                filter[bit / 8] |= 1 << (bit % 8);
            }
        }
        Some(base64::engine::general_purpose::STANDARD.encode(filter))
    }

    fn list<'s>(&'s self, part: &'s [u32], blocks: &'s [usize]) -> List<'s> {
        let cases = || part.iter().map(|&i| (self.suite_of(i as usize), self.cases[i as usize]));
        let tags = cases().map(|(_, c)| {
            (!c.extra().eval().tags.is_empty()).then(|| {
                Cow::Owned(c.extra().eval().tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "))
            })
        });
        List {
            n: part.len(),
            suite: cases().map(|(s, _)| s).collect(),
            id: cases().map(|(_, c)| c.id.as_str()).collect(),
            name: cases().map(|(_, c)| c.name.as_str()).collect(),
            class: Dict::of(cases().map(|(_, c)| c.classname.as_deref())),
            file: Dict::of(cases().map(|(_, c)| c.file.as_deref())),
            line: cases().map(|(_, c)| c.line.unwrap_or(0)).collect(),
            status: cases().map(|(_, c)| super::status_code(c.status)).collect(),
            dur: cases().map(|(_, c)| c.duration_ms.map(|d| (d * 100.0).round() / 100.0)).collect(),
            msg: Sparse::of(cases().map(|(_, c)| c.message())),
            change: Dict::of(part.iter().map(|&i| self.change(i as usize).map(change_word))),
            category: Dict::of(cases().map(|(_, c)| c.category())),
            tags: Dict::of(tags),
            blocks,
        }
    }

    fn detail_row(&self, i: usize) -> Option<DetailRow<'a>> {
        let (suite_index, case) = (self.suite_of(i), self.cases[i]);
        let keep_output = self.keep_output[i];
        // Failures only: a link per passing case would grow a 100,000-case page for rows nobody
        // opens to find code.
        let url = self
            .links
            .filter(|_| case.status.is_failure())
            .and_then(|l| l.file_url(&self.run.suites[suite_index], case.file.as_deref()?, case.line));
        let rare = case.extra();
        let output_omitted = !keep_output && case.has_output();
        let extra = Extra {
            retries: rare.retries,
            score: rare.score,
            critical: rare.critical,
            tags: &rare.eval().tags,
            reasons: &rare.eval().reasons,
            attempts: &rare.attempts,
            expectation: rare.eval().expectation_source.as_deref(),
            usage: rare.eval().usage.as_ref(),
            output_omitted,
            url,
        };
        let output = if keep_output { rare.output.as_ref() } else { None };
        let extra = (!extra.is_empty()).then_some(extra);
        (rare.details.is_some() || output.is_some() || extra.is_some()).then_some(DetailRow(
            rare.details.as_ref(),
            output,
            extra,
        ))
    }
}

/// Bytes a case adds to its detail block, near enough to size blocks.
fn detail_size(case: &Case, keep_output: bool) -> usize {
    let text = |s: &Option<String>| s.as_deref().map_or(0, str::len);
    let rare = case.extra();
    let mut size = case.details_len() + if keep_output { case.output_len() } else { 0 };
    size += rare.eval().reasons.iter().map(|r| 32 + r.message.as_deref().map_or(0, str::len)).sum::<usize>();
    size += rare.attempts.iter().map(|a| 32 + text(&a.message)).sum::<usize>();
    size + rare.eval().tags.iter().map(|(k, v)| k.len() + v.len() + 6).sum::<usize>()
}

fn change_word(change: Change) -> &'static str {
    match change {
        Change::NewFailure => "new-failure",
        Change::Fixed => "fixed",
        Change::StillFailing => "still-failing",
        Change::Added => "added",
        Change::Removed => "removed",
        Change::NewlySkipped => "newly-skipped",
        Change::Flaky => "flaky",
    }
}

/// `<script type="application/x-fcorr+base64" id="ID">` + the [`encoded`] block `text` writes.
pub(super) fn write_block(
    out: &mut dyn Write,
    id: &str,
    text: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    write!(out, "<script type=\"application/x-fcorr+base64\" id=\"{id}\">")?;
    text(out)?;
    out.write_all(b"</script>\n")
}

/// zlib level of the blocks inflated when the page opens (the index and the case lists): level 2
/// (zlib-rs's `deflate_fast`) is within 4 % of level 3's size on them at about half its time.
const LIST_LEVEL: u32 = 2;
/// zlib level of the detail blocks (traces, output), inflated one at a time when a case opens:
/// level 1 makes them a third bigger than level 3 at a quarter of its time. Deflate was the
/// largest part of report.html's writing (issue #27: every writer ≤ 0.15 s of CPU at 100,000
/// cases); docs/benchmarks.md §13 has the sizes and times.
const DETAIL_LEVEL: u32 = 1;

/// zlib(JSON(value)) at `level` in base64, streamed: JSON into the compressor into the encoder,
/// never held uncompressed.
fn encoded(value: &impl Serialize, level: u32) -> std::io::Result<String> {
    let text =
        encoded_with(Vec::new(), level, |json| serde_json::to_writer(json, value).map_err(std::io::Error::other))?;
    // Base64 is ASCII.
    String::from_utf8(text).map_err(std::io::Error::other)
}

/// A writer that counts what passes through it: the length of each block in a [`Spool`].
struct Counted<W> {
    inner: W,
    n: usize,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The buffer [`encoded_with`] hands its `fill`: a concrete type, not a `dyn Write`, so that
/// serde's few-byte writes (each quote, comma, number) are copies into it the compiler inlines
/// rather than a call each.
type Json<'z, W> = std::io::BufWriter<
    &'z mut flate2::write::ZlibEncoder<base64::write::EncoderWriter<'static, base64::engine::GeneralPurpose, W>>,
>;

/// [`encoded`] of the JSON that `fill` writes, appended to `sink`, which is handed back.
fn encoded_with<W: Write>(
    sink: W,
    level: u32,
    fill: impl FnOnce(&mut Json<'_, W>) -> std::io::Result<()>,
) -> std::io::Result<W> {
    let base64 = base64::write::EncoderWriter::new(sink, &base64::engine::general_purpose::STANDARD);
    let mut zlib = flate2::write::ZlibEncoder::new(base64, flate2::Compression::new(level));
    // serde writes a few bytes at a time, and each write into the encoder is a call into the
    // compressor: it gets them 64 KiB at once (the compressed bytes are the same).
    let mut json = std::io::BufWriter::with_capacity(64 * 1024, &mut zlib);
    fill(&mut json)?;
    json.into_inner().map_err(std::io::IntoInnerError::into_error)?;
    zlib.finish()?.finish()
}

/// A detail block's rows as `serde_json::to_writer` writes a `Vec<Option<DetailRow>>`, the
/// traces and output (most of the page's bytes) escaped by [`crate::report::pretty::string`],
/// which skips clean text 16 bytes at a time where serde_json looks at each byte.
fn write_detail_rows<'r, W: Write>(
    w: &mut W,
    rows: impl Iterator<Item = Option<DetailRow<'r>>>,
) -> std::io::Result<()> {
    // Every write as serde makes it (the same pieces in the same sizes): the compressor is fed
    // through the same 64 KiB buffer in the same chunks, so the page's bytes are the same.
    // Read in place from their packed blocks: a 1,000,000-case page holds ~100 MB of them.
    let text = |w: &mut W, text: Option<&Text>| match text {
        Some(text) => text.with(|text| crate::report::pretty::string(w, text)),
        None => w.write_all(b"null"),
    };
    w.write_all(b"[")?;
    for (k, row) in rows.enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        let Some(DetailRow(details, output, extra)) = row else {
            w.write_all(b"null")?;
            continue;
        };
        w.write_all(b"[")?;
        text(w, details)?;
        w.write_all(b",")?;
        text(w, output)?;
        w.write_all(b",")?;
        serde_json::to_writer(&mut *w, &extra).map_err(std::io::Error::other)?;
        w.write_all(b"]")?;
    }
    w.write_all(b"]")
}

/// The index block: what the page needs before any case, and where each part is.
#[derive(Serialize)]
struct Index<'a> {
    /// Format version, bumped with any change the script must know about.
    v: u32,
    /// Sibling files carry it; one from another page is refused.
    token: &'a str,
    suites: Vec<SuiteRef<'a>>,
    /// Passing cases whose captured output was left out to keep the page small.
    omitted_output: usize,
    /// Baseline commit when the run was compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'a str>,
    parts: &'a [PartRef],
}

/// What the index says of one part.
#[derive(Serialize)]
pub(super) struct PartRef {
    pub(super) n: usize,
    /// Cases per status code, so the page counts what it has not loaded.
    pub(super) counts: [usize; 6],
    /// `report-files/page-K.js` when the part is in a sibling file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) file: Option<String>,
    /// The [`PageData::id_filter`] of a part in a sibling file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ids: Option<String>,
}

/// Bits of a part's id filter per case (rounded up to a power of two): with three probes, about
/// 1.5 % of the files that do not hold a linked case are read anyway.
const ID_FILTER_BITS_PER_CASE: usize = 8;

/// The three probes of an id into an id filter (report.js `mayHold` computes the same): hex
/// digits 0-4, 5-9 and 10-14, as numbers. `None` unless the id starts with 16 lower-case hex
/// digits, as every id fcorr makes does (`#n` may follow for a repeated name).
fn id_probes(id: &str) -> Option<[usize; 3]> {
    let hex = id.get(..16).filter(|hex| hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))?;
    let probe = |k: usize| usize::from_str_radix(&hex[5 * k..5 * k + 5], 16).ok();
    Some([probe(0)?, probe(1)?, probe(2)?])
}

/// A part's list block: one entry per case in every column, cases in run order.
#[derive(Serialize)]
struct List<'a> {
    n: usize,
    /// Index into the index block's `suites`.
    suite: Vec<usize>,
    id: Vec<&'a str>,
    name: Vec<&'a str>,
    class: Dict<'a>,
    file: Dict<'a>,
    /// 0 when unknown.
    line: Vec<u32>,
    /// `status_code`.
    status: Vec<u8>,
    /// Milliseconds, to 0.01.
    dur: Vec<Option<f64>>,
    msg: Sparse<'a>,
    /// Change against the baseline (`new-failure`, `fixed`...).
    change: Dict<'a>,
    /// The `category` tag, for grouping.
    category: Dict<'a>,
    /// All tags as `k=v, k=v`, for grouping and search.
    tags: Dict<'a>,
    /// First case (within the part) of each detail block.
    blocks: &'a [usize],
}

#[derive(Serialize)]
struct SuiteRef<'a> {
    id: &'a str,
    name: &'a str,
}

/// A string column most cases leave empty (messages: only failures and skips have one): the
/// indices that have a value and those values, so 90,000 passing cases cost nothing.
#[derive(Serialize)]
struct Sparse<'a> {
    at: Vec<usize>,
    text: Vec<&'a str>,
}

impl<'a> Sparse<'a> {
    fn of(values: impl Iterator<Item = Option<&'a str>>) -> Sparse<'a> {
        let (at, text) = values.enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).unzip();
        Sparse { at, text }
    }
}

/// A dictionary-encoded string column: `idx[i]` indexes `dict`, or is -1 for none; `idx` is
/// empty when no case has a value (most runs have no tags and no baseline changes).
#[derive(Serialize)]
struct Dict<'a> {
    dict: Vec<Cow<'a, str>>,
    idx: Vec<i32>,
}

impl<'a> Dict<'a> {
    fn of<S: Into<Cow<'a, str>> + AsRef<str>>(values: impl Iterator<Item = Option<S>>) -> Dict<'a> {
        let mut seen: HashMap<String, i32> = HashMap::new();
        let mut dict = Vec::new();
        let idx = values
            .map(|value| match value {
                None => -1,
                Some(value) => {
                    if let Some(&i) = seen.get(value.as_ref()) {
                        return i;
                    }
                    // Fewer distinct values than cases, and cases fit i32 (the page indexes
                    // arrays with JS numbers); saturate rather than wrap on absurd input.
                    let i = i32::try_from(dict.len()).unwrap_or(i32::MAX);
                    seen.insert(value.as_ref().to_string(), i);
                    dict.push(value.into());
                    i
                }
            })
            .collect();
        if dict.is_empty() {
            return Dict { dict, idx: Vec::new() };
        }
        Dict { dict, idx }
    }
}

/// One case in a detail block: `[details, output, extra]`, or `null` when all three are empty.
#[derive(Serialize)]
struct DetailRow<'a>(Option<&'a Text>, Option<&'a Text>, Option<Extra<'a>>);

/// Fields most cases lack.
#[derive(Serialize)]
struct Extra<'a> {
    #[serde(skip_serializing_if = "is_zero")]
    retries: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    critical: bool,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    tags: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    reasons: &'a [crate::model::Reason],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    attempts: &'a [crate::model::Attempt],
    #[serde(skip_serializing_if = "Option::is_none")]
    expectation: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a crate::model::Usage>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    output_omitted: bool,
    /// GitHub link to the case's file and line (failures, when links are on).
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

impl Extra<'_> {
    fn is_empty(&self) -> bool {
        self.retries == 0
            && self.score.is_none()
            && !self.critical
            && self.tags.is_empty()
            && self.reasons.is_empty()
            && self.attempts.is_empty()
            && self.expectation.is_none()
            && self.usage.is_none()
            && !self.output_omitted
            && self.url.is_none()
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::model::{CaseStatus, Suite, SuiteKind};

    #[test]
    fn detail_rows_are_written_and_compressed_as_serde_wrote_them() {
        let tags: BTreeMap<String, String> = [("topic".to_string(), "a\"b".to_string())].into();
        let reasons = [crate::model::Reason {
            code: "incorrect".into(),
            expected: Some(serde_json::json!([1.5, "x"])),
            actual: None,
            message: Some("m\n".into()),
        }];
        let extra = || Extra {
            retries: 2,
            score: Some(66.7),
            critical: true,
            tags: &tags,
            reasons: &reasons,
            attempts: &[],
            expectation: Some("data.jsonl"),
            usage: None,
            output_omitted: true,
            url: Some("https://github.com/o/r/blob/x/a.py#L3".into()),
        };
        let long = "Traceback (most recent call last):\n  File \"t.py\", line 3\tin <module>\n\u{1b}[31mé😀\\\u{0}"
            .repeat(900);
        let texts =
            [None, Some(""), Some("plain"), Some(long.as_str()), Some("\u{7f}\u{2028}\"")].map(|t| t.map(Text::from));
        let rows = || {
            (0..300).map(|i| match i % 7 {
                0 => None,
                k => Some(DetailRow(texts[k % 5].as_ref(), texts[(k + i) % 5].as_ref(), (k == 3).then(extra))),
            })
        };
        let mut ours = Vec::new();
        write_detail_rows(&mut ours, rows()).unwrap();
        let reference: Vec<_> = rows().collect();
        assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&reference).unwrap());
        // Fed to the compressor in the same pieces, so the page's blocks are the same bytes.
        let block = encoded_with(Vec::new(), DETAIL_LEVEL, |json| write_detail_rows(json, rows())).unwrap();
        assert_eq!(String::from_utf8(block).unwrap(), encoded(&reference, DETAIL_LEVEL).unwrap());
    }

    /// Every block of a page: element id → decoded JSON.
    fn blocks(page: &[u8]) -> BTreeMap<String, serde_json::Value> {
        use base64::Engine;
        let page = std::str::from_utf8(page).unwrap();
        let mut found = BTreeMap::new();
        for part in page.split("<script type=\"application/x-fcorr+base64\" id=\"").skip(1) {
            let (id, rest) = part.split_once("\">").unwrap();
            let text = &rest[..rest.find("</script>").unwrap()];
            assert!(!text.contains('<'), "base64 carries no markup");
            let compressed = base64::engine::general_purpose::STANDARD.decode(text).expect("base64");
            let mut json = String::new();
            flate2::read::ZlibDecoder::new(&compressed[..]).read_to_string(&mut json).expect("zlib");
            found.insert(id.to_string(), serde_json::from_str(&json).expect("json"));
        }
        found
    }

    fn page(run: &Run) -> BTreeMap<String, serde_json::Value> {
        let mut bytes = Vec::new();
        super::super::write_page(run, &crate::report::ReportEnv::default(), &mut bytes, None).unwrap();
        blocks(&bytes)
    }

    /// Every detail row of part `k`, in order.
    fn detail_rows(blocks: &BTreeMap<String, serde_json::Value>, k: usize) -> Vec<serde_json::Value> {
        (0..)
            .map_while(|j| blocks.get(&format!("fcorr-p{k}-d{j}")))
            .flat_map(|b| b.as_array().unwrap().clone())
            .collect()
    }

    #[test]
    fn columns_round_trip_and_hostile_text_cannot_close_the_script() {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        let mut case = Case { name: "</script><script>alert(1)</script>".into(), ..Case::default() };
        case.id = "abc".into();
        case.status = CaseStatus::Failed;
        case.set_message(Some("boom".into()));
        case.extra_mut().details = Some("trace </script>".into());
        case.classname = Some("C".into());
        suite.cases.push(case.clone());
        case.id = "def".into();
        case.status = CaseStatus::Passed;
        case.set_message(None);
        case.extra_mut().details = None;
        suite.cases.push(case);
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let blocks = page(&run);
        let index = &blocks[INDEX_ID];
        assert_eq!(index["v"], 4);
        // The failure in part 0, the rest after it; both in the page (no cap without a folder).
        assert_eq!(
            index["parts"],
            serde_json::json!([{"n": 1, "counts": [1, 0, 0, 0, 0, 0]}, {"n": 1, "counts": [0, 0, 0, 0, 0, 1]}])
        );
        let (first, rest) = (&blocks["fcorr-p0"], &blocks["fcorr-p1"]);
        assert_eq!((&first["id"], &rest["id"]), (&serde_json::json!(["abc"]), &serde_json::json!(["def"])));
        assert_eq!(first["name"][0], "</script><script>alert(1)</script>");
        assert_eq!((&first["status"], &rest["status"]), (&serde_json::json!([0]), &serde_json::json!([5])));
        assert_eq!(first["msg"], serde_json::json!({"at": [0], "text": ["boom"]}), "only the cases with one");
        assert_eq!(rest["msg"], serde_json::json!({"at": [], "text": []}));
        assert_eq!(first["class"], serde_json::json!({"dict": ["C"], "idx": [0]}));
        assert_eq!(first["file"], serde_json::json!({"dict": [], "idx": []}), "a column nobody has is empty");
        assert_eq!(first["blocks"], serde_json::json!([0]));
        assert_eq!(blocks["fcorr-p0-d0"], serde_json::json!([["trace </script>", null, null]]));
        assert_eq!(blocks["fcorr-p1-d0"], serde_json::json!([null]));
    }

    #[test]
    fn each_case_names_its_suite_when_some_suites_are_empty() {
        let suite = |id: &str, cases: usize| {
            let mut suite = Suite::new(id, id, SuiteKind::Project);
            suite.cases = (0..cases)
                .map(|i| Case { name: format!("{id}{i}").into(), status: CaseStatus::Passed, ..Case::default() })
                .collect();
            suite
        };
        let suites = vec![suite("e", 0), suite("a", 2), suite("f", 0), suite("g", 0), suite("b", 1), suite("h", 0)];
        let run = Run::assemble(suites, time::OffsetDateTime::UNIX_EPOCH, None, None);
        let blocks = page(&run);
        let names: Vec<&str> =
            blocks[INDEX_ID]["suites"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
        let list = &blocks["fcorr-p1"];
        let of_case: Vec<&str> =
            list["suite"].as_array().unwrap().iter().map(|s| names[s.as_u64().unwrap() as usize]).collect();
        assert_eq!(list["name"], serde_json::json!(["a0", "a1", "b0"]));
        assert_eq!(of_case, ["a", "a", "b"]);
    }

    #[test]
    fn big_runs_split_into_detail_blocks_that_cover_every_case_once() {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        for i in 0..(DETAIL_BLOCK_CASES + 10) {
            let mut case = Case { name: format!("t{i}").into(), status: CaseStatus::Failed, ..Case::default() };
            // A few big traces force size-based cuts; the many small rows force count-based ones.
            case.extra_mut().details =
                Some(if i < 8 { "x".repeat(DETAIL_BLOCK_BYTES / 2) } else { format!("trace {i}") }.into());
            suite.cases.push(case);
        }
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let blocks = page(&run);
        let starts: Vec<usize> =
            blocks["fcorr-p0"]["blocks"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        assert!(starts.len() >= 5, "{starts:?}");
        for k in 0..starts.len() {
            let block = blocks[&format!("fcorr-p0-d{k}")].as_array().unwrap();
            let end = starts.get(k + 1).copied().unwrap_or(DETAIL_BLOCK_CASES + 10);
            assert_eq!(block.len(), end - starts[k], "block {k} holds its cases");
        }
        let rows = detail_rows(&blocks, 0);
        assert_eq!(rows.len(), DETAIL_BLOCK_CASES + 10);
        assert_eq!(rows[9][0], "trace 9");
        assert_eq!(rows.last().unwrap()[0], format!("trace {}", DETAIL_BLOCK_CASES + 9));
    }

    #[test]
    fn passing_output_beyond_the_budget_is_left_out_and_counted() {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        for i in 0..3 {
            let mut case = Case { name: format!("t{i}").into(), status: CaseStatus::Passed, ..Case::default() };
            case.extra_mut().output = Some("x".repeat(PASSING_OUTPUT_BUDGET / 2 + 1).into());
            suite.cases.push(case);
        }
        let mut failing = Case { name: "f".into(), status: CaseStatus::Failed, ..Case::default() };
        failing.extra_mut().output = Some("y".repeat(PASSING_OUTPUT_BUDGET).into());
        suite.cases.push(failing);
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let blocks = page(&run);
        assert_eq!(blocks[INDEX_ID]["omitted_output"], 2);
        let passing = detail_rows(&blocks, 1);
        assert!(passing[0][1].is_string());
        assert!(passing[1][1].is_null());
        assert_eq!(passing[1][2]["output_omitted"], true);
        assert!(detail_rows(&blocks, 0)[0][1].is_string(), "a failure's output is always kept");
    }

    #[test]
    fn failing_and_flaky_cases_come_first_and_the_rest_in_parts_of_part_cases() {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        let total = PART_CASES + 5_000;
        for i in 0..total {
            let status = match i % 1000 {
                0 => CaseStatus::Failed,
                1 => CaseStatus::Flaky,
                2 => CaseStatus::Skipped,
                _ => CaseStatus::Passed,
            };
            suite.cases.push(Case { name: format!("t{i}").into(), status, ..Case::default() });
        }
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let data = PageData::of(&run, None);
        let parts = data.parts();
        let kept = (0..total).filter(|i| i % 1000 < 2).count();
        assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [kept, PART_CASES, total - kept - PART_CASES]);
        assert!(parts[0].iter().all(|&i| i % 1000 < 2), "part 0 is the failing and flaky cases");
        let mut all: Vec<u32> = parts.concat();
        all.sort_unstable();
        assert_eq!(all, (0..total as u32).collect::<Vec<_>>(), "every case once");
    }

    #[test]
    fn an_id_filter_holds_every_id_of_its_part_and_few_others() {
        use base64::Engine;
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        suite.cases = (0..20_000)
            .map(|i| Case { name: format!("t{i}").into(), status: CaseStatus::Passed, ..Case::default() })
            .collect();
        suite.finalize_cases();
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let data = PageData::of(&run, None);
        let (mine, others): (Vec<u32>, Vec<u32>) = (0..20_000u32).partition(|i| i % 2 == 0);
        let filter = base64::engine::general_purpose::STANDARD.decode(data.id_filter(&mine).unwrap()).unwrap();
        let bits = filter.len() * 8;
        assert!(bits.is_power_of_two() && bits >= mine.len() * ID_FILTER_BITS_PER_CASE, "{bits} bits");
        let holds = |i: u32| {
            let probes = id_probes(&data.cases[i as usize].id).unwrap();
            probes.iter().all(|p| filter[(p & (bits - 1)) / 8] & (1 << ((p & (bits - 1)) % 8)) != 0)
        };
        assert!(mine.iter().all(|&i| holds(i)), "no id of the part is missed");
        let false_positives = others.iter().filter(|&&i| holds(i)).count();
        assert!(false_positives < others.len() / 20, "{false_positives} of {} other ids pass", others.len());
        // An id of another shape gives no probes (no filter: the page reads the files to find it).
        assert_eq!(id_probes("not a hex id at all"), None);
        assert_eq!(id_probes("0123456789ABCDEF"), None);
        assert_eq!(id_probes("0123456789abcdef#2"), Some([0x01234, 0x56789, 0xabcde]));
    }
}
