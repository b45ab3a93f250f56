//! The cases embedded in `report.html`: compact JSON rows, zlib-compressed, base64-encoded.
//!
//! Rows are arrays, not objects, so 100,000 cases do not repeat 100,000 sets of keys; the page's
//! script names the columns (`COLUMNS` in report.js must match [`CaseRow`]). Base64 has no `<`, so
//! no test name can end the `<script>` element that carries the data. Everything is streamed:
//! JSON into the compressor into the encoder into the page, never held whole.

use std::collections::HashMap;
use std::io::Write;

use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

use crate::compare::Change;
use crate::model::{Case, Run};
use crate::report::links::CodeLinks;

/// Captured output of passing cases kept in the page, in bytes; past it such output is left out
/// (results.json keeps it), because a big green run would otherwise make a page nobody can open.
const PASSING_OUTPUT_BUDGET: usize = 4 * 1024 * 1024;

/// Writes the encoded data of `run` into `out`.
pub(super) fn write_encoded(run: &Run, links: Option<&CodeLinks>, out: &mut dyn Write) -> std::io::Result<()> {
    let base64 = base64::write::EncoderWriter::new(out, &base64::engine::general_purpose::STANDARD);
    // Level 3: most of level 6's ratio on test output at a third of its time.
    let mut zlib = flate2::write::ZlibEncoder::new(base64, flate2::Compression::new(3));
    serde_json::to_writer(&mut zlib, &PageData::of(run, links)).map_err(std::io::Error::other)?;
    let mut base64 = zlib.finish()?;
    base64.finish()?;
    Ok(())
}

/// The top-level object the script reads.
#[derive(Serialize)]
struct PageData<'a> {
    /// Format version of this object, bumped with any change the script must know about.
    v: u32,
    suites: Vec<SuiteRef<'a>>,
    cases: Cases<'a>,
    /// Passing cases whose captured output was left out to keep the page small.
    omitted_output: usize,
    /// Baseline commit (short) when the run was compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'a str>,
}

#[derive(Serialize)]
struct SuiteRef<'a> {
    id: &'a str,
    name: &'a str,
}

struct Cases<'a> {
    run: &'a Run,
    links: Option<&'a CodeLinks>,
    changes: HashMap<(&'a str, &'a str), Change>,
    keep_passing_output: Vec<bool>,
}

impl<'a> PageData<'a> {
    fn of(run: &'a Run, links: Option<&'a CodeLinks>) -> PageData<'a> {
        let changes = run
            .comparison
            .iter()
            .flat_map(|c| c.cases.iter())
            .map(|c| ((c.suite_id.as_str(), c.case_id.as_str()), c.change))
            .collect();
        let mut budget = PASSING_OUTPUT_BUDGET;
        let mut omitted = 0;
        let keep_passing_output = run
            .suites
            .iter()
            .flat_map(|s| s.cases.iter())
            .map(|case| {
                let Some(output) = case.output.as_deref().filter(|_| !case.status.is_failure()) else {
                    return true;
                };
                if output.len() <= budget {
                    budget -= output.len();
                    true
                } else {
                    omitted += 1;
                    false
                }
            })
            .collect();
        PageData {
            v: 1,
            suites: run.suites.iter().map(|s| SuiteRef { id: &s.id, name: &s.name }).collect(),
            cases: Cases { run, links, changes, keep_passing_output },
            omitted_output: omitted,
            baseline: run.comparison.as_ref().and_then(|c| c.baseline.commit.as_deref()),
        }
    }
}

impl Serialize for Cases<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let total = self.run.suites.iter().map(|s| s.cases.len()).sum();
        let mut seq = serializer.serialize_seq(Some(total))?;
        let mut index = 0;
        for (suite_index, suite) in self.run.suites.iter().enumerate() {
            for case in &suite.cases {
                let change = self.changes.get(&(suite.id.as_str(), case.id.as_str())).copied();
                let keep_output = self.keep_passing_output.get(index).copied().unwrap_or(true);
                // Failures only: a link per passing case would grow a 100,000-case page for
                // rows nobody opens to find code.
                let url = self
                    .links
                    .filter(|_| case.status.is_failure())
                    .and_then(|l| l.file_url(suite, case.file.as_deref()?, case.line));
                seq.serialize_element(&CaseRow::new(suite_index, case, change, keep_output, url))?;
                index += 1;
            }
        }
        seq.end()
    }
}

/// One case: `[suite, id, name, classname, file, line, status, duration_ms, message, details,
/// output, extra]`, where `extra` holds the rarely set fields.
#[derive(Serialize)]
struct CaseRow<'a>(
    usize,
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Option<u32>,
    u8,
    Option<f64>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<Extra<'a>>,
);

/// Fields most cases lack; `None` when all are empty, so a plain test costs nothing here.
#[derive(Serialize)]
struct Extra<'a> {
    #[serde(skip_serializing_if = "is_zero")]
    retries: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    critical: bool,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    tags: &'a std::collections::BTreeMap<String, String>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    reasons: &'a [crate::model::Reason],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    attempts: &'a [crate::model::Attempt],
    #[serde(skip_serializing_if = "Option::is_none")]
    change: Option<Change>,
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

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl<'a> CaseRow<'a> {
    fn new(
        suite: usize,
        case: &'a Case,
        change: Option<Change>,
        keep_output: bool,
        url: Option<String>,
    ) -> CaseRow<'a> {
        let output_omitted = !keep_output && case.output.is_some();
        let extra = Extra {
            retries: case.retries,
            score: case.score,
            critical: case.critical,
            tags: &case.tags,
            reasons: &case.reasons,
            attempts: &case.attempts,
            change,
            expectation: case.expectation_source.as_deref(),
            usage: case.usage.as_ref(),
            output_omitted,
            url,
        };
        let empty = extra.retries == 0
            && extra.score.is_none()
            && !extra.critical
            && extra.tags.is_empty()
            && extra.reasons.is_empty()
            && extra.attempts.is_empty()
            && extra.change.is_none()
            && extra.expectation.is_none()
            && extra.usage.is_none()
            && !output_omitted
            && extra.url.is_none();
        CaseRow(
            suite,
            &case.id,
            &case.name,
            case.classname.as_deref(),
            case.file.as_deref(),
            case.line,
            super::status_code(case.status),
            case.duration_ms,
            case.message.as_deref(),
            case.details.as_deref(),
            if keep_output { case.output.as_deref() } else { None },
            (!empty).then_some(extra),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::model::{CaseStatus, Suite, SuiteKind};

    fn decode(bytes: &[u8]) -> serde_json::Value {
        use base64::Engine;
        let compressed = base64::engine::general_purpose::STANDARD.decode(bytes).expect("base64");
        let mut json = String::new();
        flate2::read::ZlibDecoder::new(&compressed[..]).read_to_string(&mut json).expect("zlib");
        serde_json::from_str(&json).expect("json")
    }

    #[test]
    fn rows_round_trip_and_hostile_text_cannot_close_the_script() {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        let mut case = Case { name: "</script><script>alert(1)</script>".into(), ..Case::default() };
        case.id = "abc".into();
        case.status = CaseStatus::Failed;
        case.message = Some("boom".into());
        suite.cases.push(case);
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let mut bytes = Vec::new();
        write_encoded(&run, None, &mut bytes).unwrap();
        assert!(!bytes.contains(&b'<'), "base64 carries no markup");
        let data = decode(&bytes);
        let row = &data["cases"][0];
        assert_eq!(row[1], "abc");
        assert_eq!(row[2], "</script><script>alert(1)</script>");
        assert_eq!(row[6], 0, "failed");
        assert_eq!(row[8], "boom");
        assert!(row[11].is_null(), "no extra fields: {row}");
    }

    #[test]
    fn passing_output_beyond_the_budget_is_left_out_and_counted() {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        for i in 0..3 {
            let mut case = Case { name: format!("t{i}"), status: CaseStatus::Passed, ..Case::default() };
            case.output = Some("x".repeat(PASSING_OUTPUT_BUDGET / 2 + 1));
            suite.cases.push(case);
        }
        let mut failing = Case { name: "f".into(), status: CaseStatus::Failed, ..Case::default() };
        failing.output = Some("y".repeat(PASSING_OUTPUT_BUDGET));
        suite.cases.push(failing);
        let run = Run::assemble(vec![suite], time::OffsetDateTime::UNIX_EPOCH, None, None);
        let mut bytes = Vec::new();
        write_encoded(&run, None, &mut bytes).unwrap();
        let data = decode(&bytes);
        assert_eq!(data["omitted_output"], 2);
        assert!(data["cases"][0][10].is_string());
        assert!(data["cases"][1][10].is_null());
        assert_eq!(data["cases"][1][11]["output_omitted"], true);
        assert!(data["cases"][3][10].is_string(), "a failure's output is always kept");
    }
}
