//! `ctrf.json`: the run in the Common Test Report Format, validated against the CTRF schema.
//!
//! Every CTRF object rejects unknown fields, so fcorr's own data (scores, policies, reasons) goes
//! under `extra`. With a comparison, top-level `baseline` and `insights` carry the deltas as
//! `{current, baseline, change}`.
//!
//! Tests are serialised straight from the run as they are written, borrowing its strings: a
//! 100,000-case run is never copied into a second document in memory.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{ReportEnv, Reporter};
use crate::compare::Comparison;
use crate::errors::RenderError;
use crate::model::{Case, CaseStatus, Counts, Run, Suite, Text};
use crate::text::cap_text;

/// CTRF specification version written.
pub const SPEC_VERSION: &str = "1.0.0";

/// Longest captured output kept per test.
const OUTPUT_CAP: usize = 16 * 1024;

/// CTRF JSON writer.
pub struct CtrfJson;

impl Reporter for CtrfJson {
    fn format(&self) -> super::Format {
        super::Format::Ctrf
    }

    fn file_name(&self) -> &'static str {
        "ctrf.json"
    }

    fn queue_rank(&self) -> u8 {
        3
    }

    fn write(&self, run: &Run, env: &ReportEnv, out: &mut dyn Write) -> Result<(), RenderError> {
        let document = build(run, env);
        super::buffered(out, |w| {
            super::pretty::to_writer(&mut *w, &document)?;
            w.write_all(b"\n")
        })
        .map_err(|source| RenderError::Format { format: "CTRF JSON", source })
    }
}

/// A CTRF document.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Document<'a> {
    pub report_format: String,
    pub spec_version: String,
    pub report_id: String,
    pub timestamp: String,
    pub generated_by: String,
    pub results: Results<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insights: Option<Insights>,
    pub extra: Value,
}

/// `results`: tool, summary, tests, environment.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Results<'a> {
    pub tool: Tool,
    pub summary: Summary,
    pub tests: Tests<'a>,
    pub environment: Environment,
    pub extra: Value,
}

/// The producing tool.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub extra: Value,
}

/// Aggregated counts and times (ms since the Unix epoch).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub tests: u64,
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub pending: u64,
    pub other: u64,
    pub flaky: u64,
    pub suites: u64,
    pub start: i64,
    pub stop: i64,
    pub duration: u64,
    pub extra: Value,
}

/// Every test of a run, serialised one at a time as the document is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Tests<'a> {
    run: &'a Run,
    /// Baseline changes by (suite id, case id), looked up once per test.
    changes: HashMap<(&'a str, &'a str), crate::compare::Change>,
}

impl Serialize for Tests<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for suite in &self.run.suites {
            let mut cases = suite.every_case();
            for case in &mut cases {
                let change = self.changes.get(&(suite.id.as_str(), case.id.as_str())).copied();
                seq.serialize_element(&test(suite, &case, change))?;
            }
            cases.finish().map_err(serde::ser::Error::custom)?;
            if super::junit::needs_suite_error(suite) {
                seq.serialize_element(&suite_error_test(suite))?;
            }
        }
        seq.end()
    }
}

/// One test.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Test<'a> {
    pub test_id: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub status: &'static str,
    pub raw_status: Cow<'a, str>,
    pub duration: u64,
    pub suite: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Cow<'a, str>>,
    pub retries: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retry_attempts: Vec<RetryAttempt<'a>>,
    pub flaky: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Stdout::is_empty")]
    pub stdout: Stdout<'a>,
    pub extra: TestExtra<'a>,
}

/// `extra` of a test: fcorr's data under one `fcorr` key.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TestExtra<'a> {
    pub fcorr: FcorrTestExtra<'a>,
}

/// fcorr's per-test data; keys in alphabetical order, as earlier versions wrote them.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FcorrTestExtra<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<crate::compare::Change>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub critical: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectation_source: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub reasons: &'a [crate::model::Reason],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    pub suite_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<&'a crate::model::Usage>,
}

/// A test's captured output as CTRF's `stdout`: one string per line, cut to [`OUTPUT_CAP`]. The
/// lines are read in place from the output's packed block as they are written (most passing
/// tests of an import have output: a `Vec` of owned lines was an allocation per line).
#[derive(Debug, Clone, PartialEq)]
pub struct Stdout<'a>(pub Option<&'a Text>);

impl Stdout<'_> {
    /// True when there is no line to write (none, or empty output).
    fn is_empty(&self) -> bool {
        self.0.is_none_or(Text::is_empty)
    }
}

impl Serialize for Stdout<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(output) = self.0 else {
            return serializer.collect_seq(std::iter::empty::<&str>());
        };
        output.with(|output| {
            let kept = match output.len() <= OUTPUT_CAP {
                true => Cow::Borrowed(output),
                false => Cow::Owned(cap_text(output, OUTPUT_CAP)),
            };
            serializer.collect_seq(kept.lines())
        })
    }
}

/// One attempt of a re-run test (1 = first execution).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RetryAttempt<'a> {
    pub attempt: u32,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Cow<'a, str>>,
}

/// Build context.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_name: Option<String>,
    pub os_platform: String,
    pub healthy: bool,
    pub extra: Value,
}

/// The baseline report compared with.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    pub report_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub extra: Value,
}

/// Run metrics now, then, and the change.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Insights {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<MetricDelta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_rate: Option<MetricDelta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaky_rate: Option<MetricDelta>,
    pub average_run_duration: MetricDelta,
    pub runs_analyzed: u32,
    pub extra: Value,
}

/// `{current, baseline, change}`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct MetricDelta {
    pub current: f64,
    pub baseline: f64,
    pub change: f64,
}

impl MetricDelta {
    fn new(current: f64, baseline: f64) -> MetricDelta {
        MetricDelta { current: round4(current), baseline: round4(baseline), change: round4(current - baseline) }
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The CTRF document for a run.
pub fn build<'a>(run: &'a Run, env: &ReportEnv) -> Document<'a> {
    let mut counts = Counts::default();
    for suite in &run.suites {
        match suite.streamed {
            // Streamed: its counts count every case on disk (`cases` holds only the failing ones).
            Some(_) => counts.merge(&suite.counts),
            None => suite.cases.iter().for_each(|case| counts.add(case.status)),
        }
        if super::junit::needs_suite_error(suite) {
            counts.add(CaseStatus::Error);
        }
    }
    let changes = run
        .comparison
        .iter()
        .flat_map(|c| &c.cases)
        .map(|x| ((x.suite_id.as_str(), x.case_id.as_str()), x.change))
        .collect();
    let tests = Tests { run, changes };
    let start = epoch_ms(&run.started_at);
    let stop = epoch_ms(&run.finished_at).max(start);
    let summary = Summary {
        tests: counts.total,
        passed: counts.passed + counts.flaky,
        failed: counts.failures(),
        skipped: counts.skipped,
        pending: 0,
        other: 0,
        flaky: counts.flaky,
        suites: run.suites.len() as u64,
        start,
        stop,
        duration: run.duration_ms,
        extra: json!({ "fcorr": { "error": counts.error, "timeout": counts.timeout } }),
    };
    let git = run.git.clone().unwrap_or_default();
    let environment = Environment {
        repository_name: env.repository.clone(),
        build_url: env.run_url.clone(),
        commit: git.commit.clone(),
        branch_name: git.branch.clone(),
        os_platform: std::env::consts::OS.to_string(),
        healthy: run.verdict.outcome == crate::model::RunOutcome::Pass,
        extra: json!({ "fcorr": { "dirty": git.dirty } }),
    };
    let suites: Vec<Value> = run.suites.iter().map(suite_extra).collect();
    let results = Results {
        tool: Tool {
            name: "fcorr".into(),
            version: run.fcorr_version.clone(),
            extra: json!({ "fcorr": { "frameworks": frameworks(run) } }),
        },
        summary,
        tests,
        environment,
        extra: json!({ "fcorr": { "suites": suites } }),
    };
    let report_id = uuid_from(&[
        "fcorr-report",
        &run.started_at,
        &run.finished_at,
        run.config_hash.as_deref().unwrap_or(""),
        git.commit.as_deref().unwrap_or(""),
    ]);
    Document {
        report_format: "CTRF".into(),
        spec_version: SPEC_VERSION.into(),
        report_id,
        timestamp: run.finished_at.clone(),
        generated_by: format!("fcorr {}", run.fcorr_version),
        baseline: run.comparison.as_ref().map(baseline),
        insights: run.comparison.as_ref().map(|c| insights(run, c)),
        results,
        extra: json!({ "fcorr": {
            "schemaVersion": run.schema_version,
            "score": run.score,
            "health": run.health.map(|h| h.label()),
            "verdict": run.verdict,
            "configHash": run.config_hash,
        } }),
    }
}

fn frameworks(run: &Run) -> Vec<String> {
    let mut names: Vec<String> =
        run.suites.iter().filter_map(|s| s.detection.as_ref().map(|d| d.framework.clone())).collect();
    names.sort();
    names.dedup();
    names
}

fn suite_extra(suite: &Suite) -> Value {
    let mut extra = json!({
        "id": suite.id,
        "name": suite.name,
        "kind": suite.kind,
        "status": suite.status,
        "language": suite.detection.as_ref().map(|d| d.language.clone()),
        "framework": suite.detection.as_ref().map(|d| d.framework.clone()),
        "policy": suite.score.policy,
        "score": suite.score.value,
        "threshold": suite.score.threshold,
        "met": suite.score.met,
        "weight": suite.weight,
        "critical": suite.critical,
        "counts": suite.counts,
        "durationMs": suite.duration_ms,
        "error": suite.error,
    });
    // Only suites that have them (eval and other LLM kinds) carry usage and eval figures.
    if let Some(object) = extra.as_object_mut() {
        if let Some(usage) = &suite.usage {
            object.insert("usage".into(), json!(usage));
        }
        if let Some(metrics) = crate::report::eval::of(suite, None, 0) {
            object.insert("eval".into(), json!(metrics));
        }
    }
    extra
}

/// CTRF's status for ours: errors and timeouts are failures (the raw status keeps the difference),
/// flaky tests passed in the end.
fn ctrf_status(status: CaseStatus) -> &'static str {
    match status {
        CaseStatus::Passed | CaseStatus::Flaky => "passed",
        CaseStatus::Failed | CaseStatus::Error | CaseStatus::Timeout => "failed",
        CaseStatus::Skipped => "skipped",
    }
}

fn test<'a>(suite: &'a Suite, case: &'a Case, change: Option<crate::compare::Change>) -> Test<'a> {
    let mut path = vec![suite.name.as_str()];
    if let Some(class) = &case.classname
        && **class != *suite.name
    {
        path.push(class);
    }
    Test {
        test_id: Cow::Borrowed(&case.id),
        name: Cow::Borrowed(if case.name.is_empty() { &case.id } else { &case.name }),
        status: ctrf_status(case.status),
        raw_status: Cow::Borrowed(case.status.label()),
        duration: case.duration_ms.map(|d| d.max(0.0).round() as u64).unwrap_or(0),
        suite: path,
        file_path: case.file.as_deref(),
        line: case.line,
        message: case.message().map(Cow::Borrowed),
        trace: case.details(),
        retries: case.extra().retries,
        retry_attempts: retry_attempts(case),
        flaky: case.status == CaseStatus::Flaky,
        tags: case.extra().eval().tags.iter().map(|(k, v)| format!("{k}:{v}")).collect(),
        labels: &case.extra().eval().tags,
        stdout: Stdout(case.extra().output.as_ref()),
        extra: TestExtra {
            fcorr: FcorrTestExtra {
                change,
                critical: case.extra().critical,
                expectation_source: case.extra().eval().expectation_source.as_deref(),
                hint: None,
                reasons: &case.extra().eval().reasons,
                score: case.extra().score,
                suite_id: &suite.id,
                synthetic: None,
                usage: case.extra().eval().usage.as_ref(),
            },
        },
    }
}

/// Earlier attempts as 1..n, then the final outcome as n+1.
fn retry_attempts(case: &Case) -> Vec<RetryAttempt<'_>> {
    if case.extra().attempts.is_empty() {
        return Vec::new();
    }
    let attempt = |n: usize, status: CaseStatus, duration_ms: Option<f64>, message, trace| RetryAttempt {
        attempt: n as u32 + 1,
        status: ctrf_status(status),
        duration: duration_ms.map(|d| d.max(0.0).round() as u64),
        message,
        trace,
    };
    let mut out: Vec<RetryAttempt> = case
        .extra()
        .attempts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            attempt(i, a.status, a.duration_ms, a.message.as_deref(), a.details.as_deref().map(Cow::Borrowed))
        })
        .collect();
    out.push(attempt(case.extra().attempts.len(), case.status, case.duration_ms, case.message(), case.details()));
    out
}

/// A failed test standing for a suite that failed outside its tests (see `junit.rs`).
fn suite_error_test(suite: &Suite) -> Test<'_> {
    let message = match &suite.error {
        Some(e) => format!("{}: {}", suite.status.label(), e.message),
        None => suite.status.label().to_string(),
    };
    let trace: Vec<String> = suite
        .diagnostics
        .iter()
        .map(|d| match (&d.file, d.line) {
            (Some(f), Some(l)) => format!("{f}:{l}: {}", d.message),
            (Some(f), None) => format!("{f}: {}", d.message),
            _ => d.message.clone(),
        })
        .collect();
    static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
    Test {
        test_id: Cow::Owned(crate::model::case_id(&suite.id, None, Some(super::junit::SUITE_ERROR_CLASSNAME), "suite")),
        name: Cow::Owned(format!("{} ({})", suite.name, suite.status.label())),
        status: "failed",
        raw_status: Cow::Owned(
            serde_json::to_value(suite.status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
        ),
        duration: suite.duration_ms,
        suite: vec![suite.name.as_str()],
        file_path: None,
        line: None,
        message: Some(Cow::Owned(message)),
        trace: (!trace.is_empty()).then(|| Cow::Owned(trace.join("\n"))),
        retries: 0,
        retry_attempts: Vec::new(),
        flaky: false,
        tags: Vec::new(),
        labels: &NO_LABELS,
        stdout: Stdout(None),
        extra: TestExtra {
            fcorr: FcorrTestExtra {
                change: None,
                critical: false,
                expectation_source: None,
                hint: Some(suite.error.as_ref().and_then(|e| e.hint.as_deref())),
                reasons: &[],
                score: None,
                suite_id: &suite.id,
                synthetic: Some(true),
                usage: None,
            },
        },
    }
}

fn baseline(c: &Comparison) -> Baseline {
    let b = &c.baseline;
    Baseline {
        report_id: uuid_from(&[
            "fcorr-baseline",
            &b.source,
            b.commit.as_deref().unwrap_or(""),
            b.started_at.as_deref().unwrap_or(""),
        ]),
        timestamp: b.started_at.clone().filter(|t| parse_time(t).is_some()),
        source: b.source.clone(),
        build_url: b.url.clone().filter(|u| u.starts_with("https://") || u.starts_with("http://")),
        commit: b.commit.clone(),
        extra: json!({ "fcorr": { "commitsBehind": b.commits_behind, "fresh": b.is_fresh() } }),
    }
}

/// Rates now and in the baseline; the baseline's counts are this run's minus the deltas.
fn insights(run: &Run, c: &Comparison) -> Insights {
    let now = &run.totals;
    let d = &c.counts_delta;
    // Saturating: a stored comparison is input (`fcorr report` of any results.json).
    let then = |n: u64, delta: i64| i64::try_from(n).unwrap_or(i64::MAX).saturating_sub(delta).max(0) as f64;
    let ran_now = now.ran() as f64;
    let ran_then = then(now.total, d.total) - then(now.skipped, d.skipped);
    let rate = |x: f64, of: f64| if of > 0.0 { x / of } else { 0.0 };
    let failures_then = then(now.failed, d.failed) + then(now.error, d.error) + then(now.timeout, d.timeout);
    let passes_then = then(now.passed, d.passed) + then(now.flaky, d.flaky);
    let both = ran_now > 0.0 && ran_then > 0.0;
    let mut changes = BTreeMap::new();
    for x in &c.cases {
        *changes
            .entry(serde_json::to_value(x.change).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default())
            .or_insert(0u64) += 1;
    }
    Insights {
        pass_rate: both.then(|| MetricDelta::new(rate(now.passes() as f64, ran_now), rate(passes_then, ran_then))),
        fail_rate: both.then(|| MetricDelta::new(rate(now.failures() as f64, ran_now), rate(failures_then, ran_then))),
        flaky_rate: both
            .then(|| MetricDelta::new(rate(now.flaky as f64, ran_now), rate(then(now.flaky, d.flaky), ran_then))),
        average_run_duration: MetricDelta::new(
            run.duration_ms as f64,
            i64::try_from(run.duration_ms).unwrap_or(i64::MAX).saturating_sub(c.duration_delta_ms).max(0) as f64,
        ),
        runs_analyzed: 1,
        extra: json!({ "fcorr": {
            "score": match (run.score, c.score_delta) {
                (Some(score), Some(delta)) => json!(MetricDelta::new(score, score - delta)),
                _ => Value::Null,
            },
            "changes": changes,
            "baselineFresh": c.baseline.is_fresh(),
        } }),
    }
}

fn parse_time(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

fn epoch_ms(text: &str) -> i64 {
    parse_time(text).map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64).unwrap_or(0)
}

/// A stable UUID (version 8, RFC 9562) derived from `parts`, so the same run gets the same id.
pub fn uuid_from(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    let digest = hasher.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&digest[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}
