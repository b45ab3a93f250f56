//! `ctrf.json`: the run in the Common Test Report Format, validated against the CTRF schema.
//!
//! Every CTRF object rejects unknown fields, so fcorr's own data (scores, policies, reasons) goes
//! under `extra`. With a comparison, top-level `baseline` and `insights` carry the deltas as
//! `{current, baseline, change}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{ReportEnv, Reporter};
use crate::collect::cap_text;
use crate::compare::Comparison;
use crate::model::{Attempt, Case, CaseStatus, Counts, Run, Suite};

/// CTRF specification version written.
pub const SPEC_VERSION: &str = "1.0.0";

/// Longest captured output kept per test.
const OUTPUT_CAP: usize = 16 * 1024;

/// CTRF JSON writer.
pub struct CtrfJson;

impl Reporter for CtrfJson {
    fn name(&self) -> &'static str {
        "ctrf"
    }

    fn file_name(&self) -> &'static str {
        "ctrf.json"
    }

    fn render(&self, run: &Run, env: &ReportEnv) -> Result<Vec<u8>, String> {
        let mut bytes = serde_json::to_vec_pretty(&build(run, env)).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// A CTRF document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Document {
    pub report_format: String,
    pub spec_version: String,
    pub report_id: String,
    pub timestamp: String,
    pub generated_by: String,
    pub results: Results,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insights: Option<Insights>,
    pub extra: Value,
}

/// `results`: tool, summary, tests, environment.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Results {
    pub tool: Tool,
    pub summary: Summary,
    pub tests: Vec<Test>,
    pub environment: Environment,
    pub extra: Value,
}

/// The producing tool.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub extra: Value,
}

/// Aggregated counts and times (ms since the Unix epoch).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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

/// One test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Test {
    pub test_id: String,
    pub name: String,
    pub status: String,
    pub raw_status: String,
    pub duration: u64,
    pub suite: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    pub retries: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry_attempts: Vec<RetryAttempt>,
    pub flaky: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stdout: Vec<String>,
    pub extra: Value,
}

/// One attempt of a re-run test (1 = first execution).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetryAttempt {
    pub attempt: u32,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// Build context.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Environment {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_name: Option<String>,
    pub os_platform: String,
    pub healthy: bool,
    pub extra: Value,
}

/// The baseline report compared with.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Baseline {
    pub report_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub extra: Value,
}

/// Run metrics now, then, and the change.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Insights {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<MetricDelta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_rate: Option<MetricDelta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flaky_rate: Option<MetricDelta>,
    pub average_run_duration: MetricDelta,
    pub runs_analyzed: u32,
    pub extra: Value,
}

/// `{current, baseline, change}`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
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
pub fn build(run: &Run, env: &ReportEnv) -> Document {
    let mut tests = Vec::with_capacity(run.totals.total as usize);
    let mut counts = Counts::default();
    for suite in &run.suites {
        for case in &suite.cases {
            counts.add(case.status);
            tests.push(test(run, suite, case));
        }
        if super::junit::needs_suite_error(suite) {
            counts.add(CaseStatus::Error);
            tests.push(suite_error_test(suite));
        }
    }
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
        healthy: run.verdict.outcome == crate::model::Outcome::Pass,
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
            "health": run.health.label(),
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
    json!({
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
    })
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

fn test(run: &Run, suite: &Suite, case: &Case) -> Test {
    let mut path = vec![suite.name.clone()];
    if let Some(class) = &case.classname
        && class != &suite.name
    {
        path.push(class.clone());
    }
    let change = run
        .comparison
        .as_ref()
        .and_then(|c| c.cases.iter().find(|x| x.case_id == case.id && x.suite_id == suite.id))
        .map(|x| x.change);
    let mut extra = serde_json::Map::new();
    extra.insert("suiteId".into(), json!(suite.id));
    if let Some(score) = case.score {
        extra.insert("score".into(), json!(score));
    }
    if case.critical {
        extra.insert("critical".into(), json!(true));
    }
    if !case.reasons.is_empty() {
        extra.insert("reasons".into(), json!(case.reasons));
    }
    if let Some(source) = &case.expectation_source {
        extra.insert("expectationSource".into(), json!(source));
    }
    if let Some(usage) = &case.usage {
        extra.insert("usage".into(), json!(usage));
    }
    if let Some(change) = change {
        extra.insert("change".into(), json!(change));
    }
    Test {
        test_id: case.id.clone(),
        name: if case.name.is_empty() { case.id.clone() } else { case.name.clone() },
        status: ctrf_status(case.status).into(),
        raw_status: case.status.label().into(),
        duration: case.duration_ms.map(|d| d.max(0.0).round() as u64).unwrap_or(0),
        suite: path,
        file_path: case.file.clone(),
        line: case.line,
        message: case.message.clone(),
        trace: case.details.clone(),
        retries: case.retries,
        retry_attempts: retry_attempts(case),
        flaky: case.status == CaseStatus::Flaky,
        tags: case.tags.iter().map(|(k, v)| format!("{k}:{v}")).collect(),
        labels: case.tags.clone(),
        stdout: case
            .output
            .as_deref()
            .map(|o| cap_text(o, OUTPUT_CAP).lines().map(str::to_string).collect())
            .unwrap_or_default(),
        extra: json!({ "fcorr": extra }),
    }
}

/// Earlier attempts as 1..n, then the final outcome as n+1.
fn retry_attempts(case: &Case) -> Vec<RetryAttempt> {
    if case.attempts.is_empty() {
        return Vec::new();
    }
    let attempt = |n: usize, a: &Attempt| RetryAttempt {
        attempt: n as u32 + 1,
        status: ctrf_status(a.status).into(),
        duration: a.duration_ms.map(|d| d.max(0.0).round() as u64),
        message: a.message.clone(),
        trace: a.details.clone(),
    };
    let mut out: Vec<RetryAttempt> = case.attempts.iter().enumerate().map(|(i, a)| attempt(i, a)).collect();
    let last = Attempt {
        status: case.status,
        duration_ms: case.duration_ms,
        message: case.message.clone(),
        details: case.details.clone(),
    };
    out.push(attempt(case.attempts.len(), &last));
    out
}

/// A failed test standing for a suite that failed outside its tests (see `junit.rs`).
fn suite_error_test(suite: &Suite) -> Test {
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
    Test {
        test_id: crate::model::case_id(&suite.id, None, Some(super::junit::SUITE_ERROR_CLASSNAME), "suite"),
        name: format!("{} ({})", suite.name, suite.status.label()),
        status: "failed".into(),
        raw_status: serde_json::to_value(suite.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        duration: suite.duration_ms,
        suite: vec![suite.name.clone()],
        file_path: None,
        line: None,
        message: Some(message),
        trace: (!trace.is_empty()).then(|| trace.join("\n")),
        retries: 0,
        retry_attempts: Vec::new(),
        flaky: false,
        tags: Vec::new(),
        labels: BTreeMap::new(),
        stdout: Vec::new(),
        extra: json!({ "fcorr": { "suiteId": suite.id, "synthetic": true, "hint": suite.error.as_ref().and_then(|e| e.hint.clone()) } }),
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
    let then = |n: u64, delta: i64| (n as i64 - delta).max(0) as f64;
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
            (run.duration_ms as i64 - c.duration_delta_ms).max(0) as f64,
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
