//! Visual Studio TRX (`dotnet test --logger trx`, vstest.console, MSTest): `<UnitTestResult>`s
//! with `<ErrorInfo>`, data-driven rows as `<InnerResults>`, class names from the
//! `<TestDefinitions>` that follow the results, and the run's `<ResultSummary>` `<Counters>`.

use std::collections::HashMap;
use std::io::BufRead;

use quick_xml::events::BytesStart;

use super::dotnet::{self, Capture, DotnetReportError, Handler, attr, attrs, count_attr};
use super::{ParseOptions, ParsedReport, ReportParser};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "trx";

/// Visual Studio TRX.
pub struct Trx;

impl ReportParser for Trx {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["vstest", "mstest"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        dotnet::root_element(head) == Some("TestRun")
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse(input, options).map_err(|e| ParseError::new(self.format(), e.to_string()))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Field {
    None,
    StdOut,
    StdErr,
    Message,
    StackTrace,
    RunInfo,
}

/// A `<UnitTestResult>` being read.
struct OpenResult {
    /// Index of its case in the report.
    index: usize,
    /// Has `<InnerResults>`: its rows are the cases, it is only their summary.
    has_inner: bool,
    message: Option<String>,
    trace: Option<String>,
    output: String,
}

struct Reader<'o> {
    options: &'o ParseOptions,
    saw_root: bool,
    report: ParsedReport,
    /// `testId` of each case, to find its class in `<TestDefinitions>`.
    test_ids: Vec<Option<String>>,
    /// Parents of data-driven rows, dropped at the end.
    parents: Vec<usize>,
    /// Results not nested in another (a data-driven test counts once here).
    top_level: usize,
    /// `<UnitTestResult>`s open, outermost first (data-driven rows nest one level).
    open: Vec<OpenResult>,
    /// Stack traces by case index: their location is worked out once the classes are known.
    traces: Vec<(usize, String)>,
    /// testId -> class name, from `<UnitTest id><TestMethod className>`.
    classes: HashMap<String, String>,
    definition: Option<String>,
    in_summary: bool,
    counters_total: Option<u64>,
    counters_failing: u64,
    summary_outcome: Option<String>,
    run_infos: Vec<String>,
    field: Field,
    capture: Capture,
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, DotnetReportError> {
    let mut reader = Reader {
        options,
        saw_root: false,
        report: ParsedReport { tool: Some("TRX".into()), ..ParsedReport::default() },
        test_ids: Vec::new(),
        parents: Vec::new(),
        top_level: 0,
        open: Vec::new(),
        traces: Vec::new(),
        classes: HashMap::new(),
        definition: None,
        in_summary: false,
        counters_total: None,
        counters_failing: 0,
        summary_outcome: None,
        run_infos: Vec::new(),
        field: Field::None,
        capture: Capture::default(),
    };
    let dotnet::Driven { cut, root } = dotnet::drive(input, &mut reader)?;
    if !reader.saw_root {
        return Err(DotnetReportError::NoRoot { root: "TestRun", what: "a TRX", format: NAME, found: root });
    }
    // Keep the results being read (their outcomes are in their start tags).
    while !reader.open.is_empty() {
        reader.finish_result();
    }
    let mut report = reader.finish();
    dotnet::cut_short(&mut report, cut);
    Ok(report)
}

impl Handler for Reader<'_> {
    fn cases_read(&self) -> usize {
        // Finished rows only: not the data-driven parents, not the results still being read.
        self.report.cases.len().saturating_sub(self.parents.len() + self.open.len())
    }

    fn start(&mut self, name: &str, e: &BytesStart<'_>) {
        match name {
            "TestRun" => self.saw_root = true,
            // Unit tests; ordered tests (`TestResultAggregation`, whose rows are their inner
            // results) and the older generic and manual test kinds.
            "UnitTestResult" | "TestResultAggregation" | "GenericTestResult" | "ManualTestResult" => {
                self.start_result(e)
            }
            "InnerResults" => {
                if let Some(parent) = self.open.last_mut() {
                    parent.has_inner = true;
                }
            }
            "StdOut" if !self.in_summary => self.begin(Field::StdOut, false),
            "StdErr" if !self.in_summary => self.begin(Field::StdErr, false),
            "Message" if !self.open.is_empty() => self.begin(Field::Message, true),
            "StackTrace" if !self.open.is_empty() => self.begin(Field::StackTrace, true),
            "UnitTest" | "OrderedTest" | "GenericTest" | "ManualTest" => self.definition = attr(e, "id"),
            "TestMethod" => {
                if let (Some(id), Some(class)) = (self.definition.clone(), attr(e, "className")) {
                    // Older MSTest writes an assembly-qualified name: `Ns.Class, Tests, Version=...`.
                    let class = class.split(',').next().unwrap_or(&class).trim().to_string();
                    self.classes.insert(id, class);
                }
            }
            "ResultSummary" => {
                self.in_summary = true;
                self.summary_outcome = attr(e, "outcome");
            }
            "Counters" if self.in_summary => {
                self.counters_total = count_attr(e, "total");
                self.counters_failing =
                    ["failed", "error", "timeout", "aborted"].iter().map(|k| count_attr(e, k).unwrap_or(0)).sum();
            }
            "Text" if self.in_summary => {
                self.field = Field::RunInfo;
                self.capture.begin(true);
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &str) {
        match name {
            "UnitTestResult" | "TestResultAggregation" | "GenericTestResult" | "ManualTestResult" => {
                self.finish_result()
            }
            "UnitTest" | "OrderedTest" | "GenericTest" | "ManualTest" => self.definition = None,
            "ResultSummary" => self.in_summary = false,
            "StdOut" | "StdErr" | "Message" | "StackTrace" | "Text" => self.end_field(),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        // Kept only between a field's start and end.
        self.capture.push(text);
    }
}

impl Reader<'_> {
    fn begin(&mut self, field: Field, details: bool) {
        if !self.open.is_empty() {
            self.field = field;
            self.capture.begin(details);
        }
    }

    fn end_field(&mut self) {
        let field = std::mem::replace(&mut self.field, Field::None);
        let text = self.capture.take();
        if field == Field::RunInfo {
            self.run_infos.extend(text);
            return;
        }
        let (Some(open), Some(text)) = (self.open.last_mut(), text) else {
            return;
        };
        match field {
            Field::Message => open.message = Some(text),
            Field::StackTrace => open.trace = Some(text),
            Field::StdOut | Field::StdErr => {
                if !open.output.is_empty() {
                    open.output.push('\n');
                }
                open.output.push_str(&text);
            }
            Field::None | Field::RunInfo => {}
        }
    }

    fn start_result(&mut self, e: &BytesStart<'_>) {
        let [outcome, test_name, duration, test_id] = attrs(e, ["outcome", "testName", "duration", "testId"]);
        let (status, note) = trx_status(outcome.as_deref());
        self.top_level += usize::from(self.open.is_empty());
        let case = Case {
            name: test_name.unwrap_or_else(|| "(unnamed)".into()).into(),
            status,
            duration_ms: duration.as_deref().and_then(trx_duration_ms),
            ..Case::default()
        }
        .with_message(note.map(str::to_string));
        self.open.push(OpenResult {
            index: self.report.cases.len(),
            has_inner: false,
            message: None,
            trace: None,
            output: String::new(),
        });
        self.report.cases.push(case);
        self.test_ids.push(test_id);
    }

    fn finish_result(&mut self) {
        if self.field != Field::None {
            self.end_field();
        }
        let Some(open) = self.open.pop() else {
            return;
        };
        if open.has_inner {
            self.parents.push(open.index);
        }
        let Some(case) = self.report.cases.get_mut(open.index) else {
            return;
        };
        let output = (!open.output.is_empty()).then(|| crate::text::cap_text(&open.output, super::OUTPUT_CAP));
        match case.status {
            CaseStatus::Passed => {}
            CaseStatus::Skipped => {
                let reason = open.message.as_deref().and_then(dotnet::first_line);
                let message = dotnet::prefixed(case.take_message(), reason);
                case.set_message(message);
            }
            _ => {
                let message = dotnet::prefixed(case.take_message(), open.message);
                if let Some(trace) = &open.trace {
                    self.traces.push((open.index, trace.clone()));
                }
                dotnet::set_failure(case, message, open.trace, self.options);
                case.extra_mut().output = output.map(Into::into);
            }
        }
    }

    fn finish(self) -> ParsedReport {
        let Reader {
            options,
            mut report,
            test_ids,
            parents,
            top_level,
            traces,
            classes,
            counters_total,
            counters_failing,
            summary_outcome,
            run_infos,
            ..
        } = self;
        for (case, id) in report.cases.iter_mut().zip(&test_ids) {
            if let Some(class) = id.as_ref().and_then(|id| classes.get(id)) {
                case.name = dotnet::short_name(&case.name, Some(class)).into();
                case.classname = Some(class.clone().into());
            }
        }
        // The test's own frame is known only now that its class is.
        for (index, trace) in traces {
            if let Some(case) = report.cases.get_mut(index)
                && let Some((file, line)) = dotnet::stack_location(&trace, options, case.classname.as_deref())
            {
                case.file = Some(file.into());
                case.line = Some(line);
            }
        }
        // A data-driven parent only sums up its rows: the rows are the cases.
        let mut parent = vec![false; report.cases.len()];
        for index in parents {
            parent[index] = true;
        }
        let mut flags = parent.into_iter();
        report.cases.retain(|_| !flags.next().unwrap_or(false));
        // Writers differ on whether `total` counts a data-driven test once or each of its rows:
        // either agrees.
        let rows = report.cases.len();
        let read = if counters_total == Some(top_level as u64) { top_level } else { rows };
        let failing_run = matches!(summary_outcome.as_deref(), Some("Failed" | "Error" | "Aborted" | "Timeout"));
        if failing_run && !report.cases.iter().any(|c| c.status.is_failure()) {
            // A crashed test host: the run failed with no failing result to show for it.
            let outcome = summary_outcome.unwrap_or_default();
            let message = match run_infos.first() {
                Some(info) => format!("the run's outcome is {outcome}: {info}"),
                None => format!("the run's outcome is {outcome} with no failing test result"),
            };
            report.cases.push(
                Case {
                    name: crate::model::incomplete::TEST_RUN_CASE.into(),
                    status: CaseStatus::Error,
                    extra: crate::model::CaseExtra {
                        details: (!run_infos.is_empty()).then(|| run_infos.join("\n").into()),
                        ..Default::default()
                    }
                    .packed(),
                    ..Case::default()
                }
                .with_message(dotnet::first_line(&message)),
            );
        }
        let what = format!("{counters_failing} failed, errored, timed out or aborted tests");
        dotnet::check_declared(&mut report, counters_total, read, Some((counters_failing, what)), None);
        report
    }
}

/// TRX `outcome` to a status, and a note for the message when the outcome says more.
fn trx_status(outcome: Option<&str>) -> (CaseStatus, Option<&'static str>) {
    match outcome.unwrap_or("") {
        "Passed" | "Completed" => (CaseStatus::Passed, None),
        "PassedButRunAborted" => (CaseStatus::Passed, Some("passed, but the run was aborted")),
        "Warning" => (CaseStatus::Passed, Some("warning")),
        "Failed" => (CaseStatus::Failed, None),
        "Error" => (CaseStatus::Error, None),
        "Timeout" => (CaseStatus::Timeout, None),
        "Aborted" => (CaseStatus::Error, Some("aborted")),
        "Disconnected" => (CaseStatus::Error, Some("disconnected")),
        "NotRunnable" => (CaseStatus::Error, Some("not runnable")),
        "Inconclusive" => (CaseStatus::Skipped, Some("inconclusive")),
        "NotExecuted" => (CaseStatus::Skipped, Some("not executed")),
        "InProgress" | "Pending" => (CaseStatus::Error, Some("the result was still pending")),
        _ => (CaseStatus::Error, Some("unknown TRX outcome")),
    }
}

/// `hh:mm:ss.fffffff` (with `d.` before the hours past a day) to milliseconds.
fn trx_duration_ms(value: &str) -> Option<f64> {
    let mut parts = value.trim().split(':');
    let (hours, minutes, seconds) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let hours: f64 = match hours.split_once('.') {
        Some((days, hours)) => days.parse::<f64>().ok()? * 24.0 + hours.parse::<f64>().ok()?,
        None => hours.parse().ok()?,
    };
    let total = (hours * 3600.0 + minutes.parse::<f64>().ok()? * 60.0 + seconds.parse::<f64>().ok()?) * 1000.0;
    (total.is_finite() && total >= 0.0).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table in docs/import.md.
    #[test]
    fn outcomes_map_as_documented() {
        use CaseStatus::*;
        let table = [
            ("Passed", Passed),
            ("Completed", Passed),
            ("PassedButRunAborted", Passed),
            ("Warning", Passed),
            ("Failed", Failed),
            ("Error", Error),
            ("Timeout", Timeout),
            ("Aborted", Error),
            ("Disconnected", Error),
            ("NotRunnable", Error),
            ("Inconclusive", Skipped),
            ("NotExecuted", Skipped),
            ("InProgress", Error),
            ("Pending", Error),
            ("Whatever", Error),
        ];
        for (outcome, want) in table {
            assert_eq!(trx_status(Some(outcome)).0, want, "{outcome}");
        }
        assert_eq!(trx_status(None).0, Error);
    }

    #[test]
    fn durations() {
        assert_eq!(trx_duration_ms("00:00:01.5000000"), Some(1500.0));
        assert_eq!(trx_duration_ms("1.02:00:00"), Some(26.0 * 3_600_000.0));
        assert_eq!(trx_duration_ms("1.5"), None);
    }

    #[test]
    fn a_crashed_host_fails_the_run() {
        let xml = r#"<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>
            <UnitTestResult testId="1" testName="A" outcome="Passed" duration="00:00:00.01"/></Results>
            <ResultSummary outcome="Failed"><Counters total="1" passed="1" failed="0"/><RunInfos><RunInfo outcome="Error">
            <Text>The active test run was aborted. Reason: Test host process crashed</Text></RunInfo></RunInfos></ResultSummary></TestRun>"#;
        let report = Trx.parse(&mut xml.as_bytes(), &ParseOptions::default()).unwrap();
        let last = report.cases.last().unwrap();
        assert_eq!((last.name.as_str(), last.status), ("[test run]", CaseStatus::Error));
        assert!(last.message().unwrap().contains("Test host process crashed"), "{last:?}");
    }
}
