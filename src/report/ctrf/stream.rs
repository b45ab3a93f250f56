//! `ctrf.json` written straight from a [`Document`], byte for byte what serde_json's pretty
//! printer writes for it (the tests hold the two together).
//!
//! Through serde every string of a 100,000-case run was scanned a byte at a time for characters
//! to escape (`format_escaped_str`, the largest self time of `--format ctrf` after the kernel's
//! copy of the file), and every field went through the serializer's calls. Here the tests and the
//! document's frame are written by hand, strings escaped by `pretty::string` (16 clean bytes at
//! a time); the rare and small values (scores, usage, reasons, the run's `extra`) still go
//! through serde, at the depth they sit in the document.

use std::io::{self, Write};

use serde::Serialize;

use super::{Document, FcorrTestExtra, Test};
use crate::report::pretty::{Pretty, string};

/// Writes `document` as serde_json's pretty printer would.
pub(super) fn write_document<W: Write>(w: &mut W, d: &Document<'_>) -> io::Result<()> {
    w.write_all(b"{")?;
    key(w, 1, "reportFormat", true)?;
    string(w, &d.report_format)?;
    key(w, 1, "specVersion", false)?;
    string(w, &d.spec_version)?;
    key(w, 1, "reportId", false)?;
    string(w, &d.report_id)?;
    key(w, 1, "timestamp", false)?;
    string(w, &d.timestamp)?;
    key(w, 1, "generatedBy", false)?;
    string(w, &d.generated_by)?;
    key(w, 1, "results", false)?;
    w.write_all(b"{")?;
    key(w, 2, "tool", true)?;
    value(w, 2, &d.results.tool)?;
    key(w, 2, "summary", false)?;
    value(w, 2, &d.results.summary)?;
    key(w, 2, "tests", false)?;
    w.write_all(b"[")?;
    let mut first = true;
    d.results.tests.each(
        |test| {
            line(w, 3, first)?;
            first = false;
            write_test(w, test)
        },
        |e| e,
    )?;
    close(w, 2, b"]", !first)?;
    key(w, 2, "environment", false)?;
    value(w, 2, &d.results.environment)?;
    key(w, 2, "extra", false)?;
    value(w, 2, &d.results.extra)?;
    close(w, 1, b"}", true)?;
    if let Some(baseline) = &d.baseline {
        key(w, 1, "baseline", false)?;
        value(w, 1, baseline)?;
    }
    if let Some(insights) = &d.insights {
        key(w, 1, "insights", false)?;
        value(w, 1, insights)?;
    }
    key(w, 1, "extra", false)?;
    value(w, 1, &d.extra)?;
    close(w, 0, b"}", true)
}

/// One test object, three levels deep (document, results, tests), in `Test`'s field order.
fn write_test<W: Write>(w: &mut W, t: &Test<'_>) -> io::Result<()> {
    const L: usize = 4;
    w.write_all(b"{")?;
    key(w, L, "testId", true)?;
    string(w, &t.test_id)?;
    key(w, L, "name", false)?;
    string(w, &t.name)?;
    key(w, L, "status", false)?;
    string(w, t.status)?;
    key(w, L, "rawStatus", false)?;
    string(w, &t.raw_status)?;
    key(w, L, "duration", false)?;
    number(w, t.duration)?;
    key(w, L, "suite", false)?;
    strings(w, L, t.suite.iter().copied())?;
    if let Some(path) = t.file_path {
        key(w, L, "filePath", false)?;
        string(w, path)?;
    }
    if let Some(line) = t.line {
        key(w, L, "line", false)?;
        number(w, u64::from(line))?;
    }
    if let Some(message) = &t.message {
        key(w, L, "message", false)?;
        string(w, message)?;
    }
    if let Some(trace) = &t.trace {
        key(w, L, "trace", false)?;
        string(w, trace)?;
    }
    key(w, L, "retries", false)?;
    number(w, u64::from(t.retries))?;
    if !t.retry_attempts.is_empty() {
        key(w, L, "retryAttempts", false)?;
        value(w, L, &t.retry_attempts)?;
    }
    key(w, L, "flaky", false)?;
    w.write_all(if t.flaky { b"true" } else { b"false" })?;
    if !t.tags.is_empty() {
        key(w, L, "tags", false)?;
        strings(w, L, t.tags.iter().map(String::as_str))?;
    }
    if !t.labels.is_empty() {
        key(w, L, "labels", false)?;
        value(w, L, t.labels)?;
    }
    if !t.stdout.is_empty() {
        key(w, L, "stdout", false)?;
        strings(w, L, t.stdout.iter().map(|line| &**line))?;
    }
    key(w, L, "extra", false)?;
    w.write_all(b"{")?;
    key(w, L + 1, "fcorr", true)?;
    write_fcorr(w, L + 2, &t.extra.fcorr)?;
    close(w, L, b"}", true)?;
    close(w, L - 1, b"}", true)
}

/// A test's `extra.fcorr`: keys in alphabetical order, each only when set (as its serde
/// attributes say); the structured ones through serde.
fn write_fcorr<W: Write>(w: &mut W, level: usize, x: &FcorrTestExtra<'_>) -> io::Result<()> {
    w.write_all(b"{")?;
    let mut first = true;
    let mut next = |w: &mut W, name: &str| {
        let was_first = std::mem::replace(&mut first, false);
        key(w, level, name, was_first)
    };
    if let Some(change) = &x.change {
        next(w, "change")?;
        value(w, level, change)?;
    }
    if x.critical {
        next(w, "critical")?;
        w.write_all(b"true")?;
    }
    if let Some(source) = x.expectation_source {
        next(w, "expectationSource")?;
        string(w, source)?;
    }
    if let Some(hint) = &x.hint {
        next(w, "hint")?;
        value(w, level, hint)?;
    }
    if !x.reasons.is_empty() {
        next(w, "reasons")?;
        value(w, level, x.reasons)?;
    }
    if let Some(score) = &x.score {
        next(w, "score")?;
        value(w, level, score)?;
    }
    next(w, "suiteId")?;
    string(w, x.suite_id)?;
    if let Some(synthetic) = &x.synthetic {
        next(w, "synthetic")?;
        value(w, level, synthetic)?;
    }
    if let Some(usage) = x.usage {
        next(w, "usage")?;
        value(w, level, usage)?;
    }
    close(w, level - 1, b"}", true)
}

/// A line break and the indent of `level` (two spaces each), after a comma unless `first`.
fn line<W: Write>(w: &mut W, level: usize, first: bool) -> io::Result<()> {
    const SPACES: &[u8] = b",\n                                ";
    let start = usize::from(first);
    match SPACES.get(start..2 + 2 * level) {
        Some(piece) => w.write_all(piece),
        None => {
            w.write_all(&SPACES[start..2])?;
            (0..level).try_for_each(|_| w.write_all(b"  "))
        }
    }
}

/// `"name": ` on its own line at `level`.
fn key<W: Write>(w: &mut W, level: usize, name: &str, first: bool) -> io::Result<()> {
    line(w, level, first)?;
    string(w, name)?;
    w.write_all(b": ")
}

/// Closes an object or array whose members sat at `level + 1`: on a line of its own at `level`
/// when it had any, right after the opening bracket when not.
fn close<W: Write>(w: &mut W, level: usize, bracket: &[u8], had_members: bool) -> io::Result<()> {
    if had_members {
        line(w, level, true)?;
    }
    w.write_all(bracket)
}

/// An array of strings whose key sits at `level`.
fn strings<'a, W: Write>(w: &mut W, level: usize, items: impl Iterator<Item = &'a str>) -> io::Result<()> {
    w.write_all(b"[")?;
    let mut first = true;
    for item in items {
        line(w, level + 1, first)?;
        first = false;
        string(w, item)?;
    }
    close(w, level, b"]", !first)
}

/// Any value through serde, as deep as its key sits.
fn value<W: Write, T: ?Sized + Serialize>(w: &mut W, level: usize, x: &T) -> io::Result<()> {
    x.serialize(&mut serde_json::Serializer::with_formatter(&mut *w, Pretty::at(level))).map_err(io::Error::from)
}

fn number<W: Write>(w: &mut W, n: u64) -> io::Result<()> {
    write!(w, "{n}")
}
