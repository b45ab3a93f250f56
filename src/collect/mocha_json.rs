//! Mocha's `--reporter json` report: `stats` plus `tests`, `passes`, `failures` and `pending` arrays.
//!
//! Mocha's own JSON joins the describe path and title with spaces (`fullTitle`), so the path cannot
//! be recovered; fcorr's bundled mocha reporter writes the same layout plus `titlePath` and `type`,
//! which give ` > `-joined names and tell hook failures (→ `error`) from test failures.

use std::collections::HashSet;
use std::io::BufRead;

use serde::Deserialize;

use super::jest_json::strip_ansi;
use super::{DETAILS_CAP, ParseOptions, ParsedReport, ReportParser};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "mocha-json";

/// Mocha JSON results.
pub struct MochaJson;

impl ReportParser for MochaJson {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["mocha"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        text.trim_start_matches('\u{feff}').trim_start().starts_with('{')
            && text.contains("\"stats\"")
            && text.contains("\"passes\"")
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        // Read through `Repair`: one test name JavaScript broke mid-character must not lose the report.
        let mut input = super::json_text::Repair::new(input);
        let report: Report = serde_json::from_reader(&mut input).map_err(|e| {
            let message = format!("not a mocha JSON report: {}", crate::text::json_error_at(&e));
            ParseError::new(self.format(), message).at_line(e.line() as u64)
        })?;
        let mut parsed = convert(report, options);
        parsed.warnings.extend(input.warning());
        Ok(parsed)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Report {
    stats: Option<Stats>,
    tests: Option<Vec<Test>>,
    passes: Vec<Test>,
    failures: Vec<Test>,
    pending: Vec<Test>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Stats {
    tests: Option<u64>,
    failures: Option<u64>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct Test {
    title: String,
    full_title: String,
    title_path: Option<Vec<String>>,
    file: Option<String>,
    duration: Option<f64>,
    current_retry: Option<u32>,
    #[serde(rename = "type")]
    kind: Option<String>,
    err: Option<Err>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default)]
struct Err {
    message: Option<String>,
    stack: Option<String>,
}

impl Test {
    fn key(&self) -> (String, Option<String>) {
        (self.full_title.clone(), self.file.clone())
    }

    fn has_error(&self) -> bool {
        self.err.as_ref().is_some_and(|e| e.message.is_some() || e.stack.is_some())
    }

    /// Hook failures are not tests: mocha titles them `"before all" hook for "x"`.
    fn is_hook(&self) -> bool {
        self.kind.as_deref() == Some("hook")
            || (self.kind.is_none() && self.title.starts_with('"') && self.title.contains("\" hook"))
    }
}

fn convert(report: Report, options: &ParseOptions) -> ParsedReport {
    let mut parsed = ParsedReport { tool: Some("mocha".into()), ..ParsedReport::default() };
    let failed: HashSet<_> = report.failures.iter().filter(|t| !t.is_hook()).map(Test::key).collect();
    let pending: HashSet<_> = report.pending.iter().map(Test::key).collect();
    // `tests` lists every test that ended; older reports may lack it, then the other arrays make it up.
    let tests = match report.tests {
        Some(tests) => tests,
        None => {
            let mut all: Vec<Test> = report.passes.clone();
            all.extend(report.failures.iter().filter(|t| !t.is_hook()).cloned());
            all.extend(report.pending.iter().cloned());
            all
        }
    };
    let listed = tests.len() as u64;
    for test in &tests {
        let key = test.key();
        let status = if failed.contains(&key) || test.has_error() {
            CaseStatus::Failed
        } else if pending.contains(&key) {
            CaseStatus::Skipped
        } else {
            CaseStatus::Passed
        };
        parsed.cases.push(case(test, status, options));
    }
    for hook in report.failures.iter().filter(|t| t.is_hook()) {
        parsed.cases.push(case(hook, CaseStatus::Error, options));
    }
    let stats = report.stats.unwrap_or_default();
    if let Some(total) = stats.tests
        && total != listed
    {
        parsed.warnings.push(format!("the report's stats say {total} tests but it lists {listed}"));
    }
    if let Some(failures) = stats.failures.filter(|n| *n > 0)
        && !parsed.cases.iter().any(|c| c.status.is_failure())
    {
        parsed.declared_failures_unreported(&format!("stats.failures={failures}"));
    }
    parsed
}

fn case(test: &Test, status: CaseStatus, options: &ParseOptions) -> Case {
    let (name, classname) = match test.title_path.as_deref() {
        Some([parents @ .., last]) if !parents.is_empty() => (test_name(parents, last), Some(parents.join(" > "))),
        Some([only]) => (only.clone(), None),
        _ => {
            // Plain mocha JSON: the describe path is the full title minus the test's own title.
            let parent = test.full_title.strip_suffix(test.title.as_str()).map(str::trim).filter(|p| !p.is_empty());
            let name = if test.full_title.is_empty() { test.title.clone() } else { test.full_title.clone() };
            (name, parent.map(str::to_string))
        }
    };
    let file = test.file.as_deref().filter(|f| !f.is_empty()).map(|f| options.relative_path(f));
    let (message, details, line) = match test.err.as_ref().filter(|_| status.is_failure()) {
        Some(err) => {
            let stack = strip_ansi(err.stack.as_deref().unwrap_or_default());
            let text = strip_ansi(err.message.as_deref().unwrap_or_default());
            let message = stack.lines().chain(text.lines()).map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
            let details = if stack.trim().is_empty() { text.trim().to_string() } else { stack.trim().to_string() };
            let line = file.as_deref().and_then(|f| line_in_stack(&stack, f, test.file.as_deref().unwrap_or(f)));
            (message, (!details.is_empty()).then(|| crate::model::Text::capped(&details, DETAILS_CAP)), line)
        }
        None => (None, None, None),
    };
    let retries = test.current_retry.unwrap_or(0);
    let status = if retries > 0 && status == CaseStatus::Passed { CaseStatus::Flaky } else { status };
    Case {
        name: name.into(),
        classname: classname.map(Into::into),
        file: file.map(Into::into),
        line,
        status,
        duration_ms: test.duration.filter(|d| d.is_finite() && *d >= 0.0),
        extra: crate::model::CaseExtra { details, retries, ..Default::default() }.packed(),
        ..Case::default()
    }
    .with_message(message)
}

fn test_name(parents: &[String], last: &str) -> String {
    format!("{} > {last}", parents.join(" > "))
}

/// The line of the first stack frame in the test's own file (`file:line:col`).
fn line_in_stack(stack: &str, relative: &str, original: &str) -> Option<u32> {
    for frame in stack.lines() {
        for path in [original, relative] {
            if let Some(pos) = frame.find(&format!("{path}:")) {
                let rest = &frame[pos + path.len() + 1..];
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(line) = digits.parse() {
                    return Some(line);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(json: &str) -> ParsedReport {
        MochaJson.parse(&mut json.as_bytes(), &ParseOptions { root: Some("/repo".into()) }).unwrap()
    }

    #[test]
    fn stats_declaring_failures_with_no_failing_test_are_an_error_case() {
        let lost = r#"{"stats":{"tests":1,"passes":1,"failures":1},"tests":[{"title":"a","fullTitle":"a","err":{}}],
            "passes":[{"title":"a","fullTitle":"a","err":{}}],"failures":[],"pending":[]}"#;
        let last = parse_str(lost).cases.pop().unwrap();
        assert_eq!((last.name.as_str(), last.status), (crate::collect::DECLARED_FAILURES_CASE, CaseStatus::Error));
        assert!(last.message().unwrap().contains("stats.failures=1"), "{:?}", last.message());
        assert!(parse_str(PLAIN).cases.iter().all(|c| c.name != crate::collect::DECLARED_FAILURES_CASE));
    }

    const PLAIN: &str = r#"{"stats":{"suites":2,"tests":3,"passes":1,"pending":1,"failures":2},
      "tests":[
        {"title":"adds","fullTitle":"Queue size adds","file":"/repo/test/q.js","duration":1,"currentRetry":0,"err":{}},
        {"title":"drops","fullTitle":"Queue size drops","file":"/repo/test/q.js","duration":2,"currentRetry":0,
         "err":{"message":"1 !== 0\n","stack":"AssertionError [ERR_ASSERTION]: 1 !== 0\n    at Context.<anonymous> (test/q.js:31:14)"}},
        {"title":"later","fullTitle":"Queue size later","file":"/repo/test/q.js","currentRetry":0,"err":{}}],
      "pending":[{"title":"later","fullTitle":"Queue size later","file":"/repo/test/q.js","err":{}}],
      "failures":[
        {"title":"drops","fullTitle":"Queue size drops","file":"/repo/test/q.js","err":{"message":"1 !== 0\n"}},
        {"title":"\"before all\" hook for \"x\"","fullTitle":"Db \"before all\" hook for \"x\"","file":"/repo/test/db.js","err":{"message":"no db"}}],
      "passes":[{"title":"adds","fullTitle":"Queue size adds","file":"/repo/test/q.js","err":{}}]}"#;

    #[test]
    fn plain_mocha_json_statuses_and_hook_errors() {
        let report = parse_str(PLAIN);
        let c = &report.cases;
        let statuses: Vec<_> = c.iter().map(|c| c.status).collect();
        assert_eq!(
            statuses,
            [CaseStatus::Passed, CaseStatus::Failed, CaseStatus::Skipped, CaseStatus::Error],
            "{c:#?}"
        );
        assert_eq!(c[0].name, "Queue size adds");
        assert_eq!(c[0].classname.as_deref(), Some("Queue size"));
        assert_eq!(c[1].file.as_deref(), Some("test/q.js"));
        assert_eq!(c[1].line, Some(31));
        assert_eq!(c[1].message(), Some("AssertionError [ERR_ASSERTION]: 1 !== 0"));
        assert_eq!(c[3].message(), Some("no db"));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn title_path_gives_nested_names_and_retries_give_flaky() {
        let json = r#"{"stats":{"tests":1,"passes":1},"passes":[],"failures":[],"pending":[],"tests":[
          {"title":"t","fullTitle":"A b t","titlePath":["A","b","t"],"file":"/repo/x.js","currentRetry":2,"err":{}}]}"#;
        let c = parse_str(json).cases;
        assert_eq!(c[0].name, "A > b > t");
        assert_eq!(c[0].classname.as_deref(), Some("A > b"));
        assert_eq!((c[0].status, c[0].extra().retries), (CaseStatus::Flaky, 2));
    }

    /// JSON.stringify writes a title with an unpaired surrogate as `\ud800`, which serde_json
    /// refuses: the report is still read, every case kept, the name made lossy and said so.
    #[test]
    fn a_lone_surrogate_in_a_title_keeps_the_whole_report() {
        let json = r#"{"stats":{"tests":2,"passes":1,"failures":1},"pending":[],
          "tests":[{"title":"lone \ud800 in name","fullTitle":"lone \ud800 in name","file":"/repo/t.js","err":{}},
            {"title":"fails for real","fullTitle":"fails for real","file":"/repo/t.js","err":{"message":"real failure"}}],
          "passes":[{"title":"lone \ud800 in name","fullTitle":"lone \ud800 in name","file":"/repo/t.js","err":{}}],
          "failures":[{"title":"fails for real","fullTitle":"fails for real","file":"/repo/t.js","err":{"message":"real failure"}}]}"#;
        let report = parse_str(json);
        let cases: Vec<_> = report.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(cases, [("lone \u{FFFD} in name", CaseStatus::Passed), ("fails for real", CaseStatus::Failed)]);
        // Four escapes: the title and the full title, in `tests` and in `passes`.
        assert!(report.warnings.iter().any(|w| w.starts_with("4 unpaired UTF-16 surrogate")), "{:?}", report.warnings);
        assert!(MochaJson.sniff("\u{feff}{\"stats\":{},\"passes\":[]}".as_bytes()), "a byte-order mark is skipped");
    }

    #[test]
    fn sniff_and_bad_input() {
        assert!(MochaJson.sniff(br#"{"stats":{"suites":3,"tests":5,"passes":3"#));
        assert!(!MochaJson.sniff(br#"{"numTotalTests":1}"#));
        assert!(MochaJson.parse(&mut "[1,2".as_bytes(), &ParseOptions::default()).is_err());
    }
}
