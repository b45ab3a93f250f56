//! RSpec's `--format json` report (rspec-core's JsonFormatter): `examples[]` with a status of
//! `passed`, `failed` or `pending`, and a `summary` whose `errors_outside_of_examples_count`
//! counts failures no example owns (a spec file that did not load, an `after(:context)` hook
//! that raised), each of which becomes an `error` case so the run cannot pass.

use std::io::BufRead;

use serde::Deserialize;

use super::{DETAILS_CAP, ParseOptions, ParsedReport, ReportParser};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "rspec-json";

/// RSpec JSON results.
pub struct RspecJson;

impl ReportParser for RspecJson {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["rspec"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        text.trim_start_matches('\u{feff}').trim_start().starts_with('{')
            && text.contains("\"examples\"")
            && (text.contains("\"full_description\"")
                || text.contains("\"summary_line\"")
                || text.contains("\"errors_outside_of_examples_count\""))
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        // Through `Repair` for a leading byte-order mark, and escapes as the JSON reports JavaScript writes.
        let mut input = super::json_text::Repair::new(input);
        let report: Report = serde_json::from_reader(&mut input).map_err(|e| {
            let message = format!("not an RSpec JSON report (line {}, column {}): {e}", e.line(), e.column());
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
    version: Option<String>,
    messages: Vec<String>,
    examples: Vec<Example>,
    summary: Option<Summary>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Summary {
    example_count: Option<u64>,
    failure_count: Option<u64>,
    errors_outside_of_examples_count: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Example {
    description: String,
    full_description: String,
    status: String,
    file_path: Option<String>,
    line_number: Option<u32>,
    run_time: Option<f64>,
    pending_message: Option<String>,
    exception: Option<Exception>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Exception {
    class: Option<String>,
    message: Option<String>,
    backtrace: Vec<String>,
}

fn convert(report: Report, options: &ParseOptions) -> ParsedReport {
    let mut parsed = ParsedReport { tool: report.version.map(|v| format!("RSpec {v}")), ..ParsedReport::default() };
    let listed = report.examples.len() as u64;
    for example in report.examples {
        parsed.cases.push(example_case(example, options));
    }
    let summary = report.summary.unwrap_or_default();
    if let Some(count) = summary.example_count
        && count != listed
    {
        parsed.warnings.push(format!("the report says {count} examples but lists {listed}"));
    }
    if let Some(failures) = summary.failure_count.filter(|n| *n > 0)
        && !parsed.cases.iter().any(|c| c.status.is_failure())
    {
        parsed.declared_failures_unreported(&format!("summary.failure_count={failures}"));
    }
    // Errors outside examples: their text is in `messages`, among notes of other kinds.
    let mut texts = report.messages.iter().filter(|m| m.contains("error occurred") || m.contains("Failure/Error"));
    for n in 0..summary.errors_outside_of_examples_count {
        let text = texts.next().map(|m| m.trim().to_string());
        let name = if n == 0 {
            format!("{}]", crate::model::incomplete::OUTSIDE_EXAMPLES_CASE)
        } else {
            format!("{} {}]", crate::model::incomplete::OUTSIDE_EXAMPLES_CASE, n + 1)
        };
        parsed.cases.push(Case {
            name: name.into(),
            status: CaseStatus::Error,
            extra: crate::model::CaseExtra {
                message: Some(
                    text.as_deref()
                        .and_then(first_line)
                        .unwrap_or_else(|| "rspec reported an error outside of any example".into()),
                ),
                details: text.map(|t| crate::model::Text::capped(&t, DETAILS_CAP)),
                ..Default::default()
            }
            .packed(),
            ..Case::default()
        });
    }
    parsed
}

fn example_case(example: Example, options: &ParseOptions) -> Case {
    let file = example.file_path.as_deref().map(|f| options.relative_path(f));
    // `full_description` is the groups' descriptions and the example's, joined by spaces.
    let classname = example
        .full_description
        .strip_suffix(&example.description)
        .map(str::trim_end)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let mut case = Case {
        name: if example.description.is_empty() { "(unnamed)".into() } else { example.description.into() },
        classname: classname.map(Into::into),
        file: file.map(Into::into),
        line: example.line_number,
        duration_ms: example.run_time.filter(|t| t.is_finite() && *t >= 0.0).map(|t| t * 1000.0),
        ..Case::default()
    };
    match example.status.as_str() {
        "passed" => case.status = CaseStatus::Passed,
        "pending" => {
            case.status = CaseStatus::Skipped;
            case.set_message(example.pending_message);
        }
        // A pending example that passed fails with PendingExampleFixedError: rspec counts it
        // as a failure, and so does fcorr.
        "failed" => {
            case.status = CaseStatus::Failed;
            let exception = example.exception.unwrap_or_default();
            let message = exception.message.as_deref().and_then(first_line).or(exception.class.clone());
            case.set_message(match (&exception.class, message) {
                (Some(class), Some(m)) if !class.starts_with("RSpec::") => Some(format!("{class}: {m}")),
                (_, m) => m,
            });
            // Where in the example it failed: the first frame of the spec file inside a block (the
            // example's body), else the first frame of the spec file (the example's own line is
            // where it starts).
            if let Some(spec) = case.file.clone() {
                let in_spec = |frame: &&String| spec_line(frame, &spec).is_some();
                let frame = (exception.backtrace.iter().filter(in_spec).find(|f| f.contains("in `block")))
                    .or_else(|| exception.backtrace.iter().find(in_spec));
                case.line = frame.and_then(|f| spec_line(f, &spec)).or(case.line);
            }
            let text = [exception.class.unwrap_or_default(), exception.message.unwrap_or_default()].join(": ");
            let details = format!("{}\n{}", text.trim(), exception.backtrace.join("\n"));
            case.extra_mut().details = Some(crate::model::Text::capped(details.trim(), DETAILS_CAP));
        }
        other => {
            case.status = CaseStatus::Error;
            case.set_message(Some(format!("unknown RSpec status `{other}`")));
        }
    }
    case
}

/// The line of a backtrace frame (`/abs/spec/calc_spec.rb:35:in ...`) in the spec file `spec`
/// (relative, `spec/calc_spec.rb`).
fn spec_line(frame: &str, spec: &str) -> Option<u32> {
    let (path, rest) = frame.split_once(".rb:")?;
    let path = format!("{path}.rb");
    if !(path == spec || path.ends_with(&format!("/{spec}"))) {
        return None;
    }
    rest.split(':').next()?.parse().ok()
}

fn first_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_lines_come_from_frames_in_the_spec_file() {
        assert_eq!(spec_line("/tmp/calc/spec/calc_spec.rb:35:in `block'", "spec/calc_spec.rb"), Some(35));
        assert_eq!(spec_line("./spec/calc_spec.rb:43", "spec/calc_spec.rb"), Some(43));
        assert_eq!(spec_line("/gems/rspec.rb:3:in `x'", "spec/calc_spec.rb"), None);
    }

    #[test]
    fn a_summary_declaring_failures_with_no_failing_example_is_an_error_case() {
        let lost = r#"{"version":"3.12.0","examples":[{"description":"a","full_description":"a","status":"passed",
            "file_path":"./spec/a_spec.rb","line_number":1}],"summary":{"example_count":1,"failure_count":1}}"#;
        let parsed = RspecJson.parse(&mut lost.as_bytes(), &ParseOptions::default()).unwrap();
        let last = parsed.cases.last().unwrap();
        assert_eq!((last.name.as_str(), last.status), (crate::collect::DECLARED_FAILURES_CASE, CaseStatus::Error));
        assert!(last.message().unwrap().contains("summary.failure_count=1"), "{:?}", last.message());
    }

    #[test]
    fn sniffs_rspec_and_not_jest() {
        assert!(RspecJson.sniff(
            br#"{"version":"3.12.0","examples":[{"id":"./a[1:1]","description":"x","full_description":"A x"}]"#
        ));
        assert!(RspecJson.sniff(
            br#"{"version":"3.12.0","messages":["x"],"examples":[],"summary":{"errors_outside_of_examples_count":1}}"#
        ));
        assert!(!RspecJson.sniff(br#"{"numTotalTests":1,"testResults":[]}"#));
    }
}
