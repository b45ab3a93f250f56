//! Markdown reports rendered from minijinja templates: the job summary and the PR comment.
//!
//! Default templates are embedded in the binary; a templates directory (`--templates`, `[report]
//! templates`) overrides them file by file. Each surface has a byte/char budget: rendering steps
//! down from all cases, to failures only, to the suite table only, then trims (see `budget.rs`).

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior, Value};
use serde::Serialize;

use super::budget::{self, Budget};
use super::lead::Group;
use super::links::CodeLinks;
use super::{ReportEnv, Reporter, filters};
use crate::compare::{CaseChange, Change, Comparison, SuiteDelta};
use crate::errors::RenderError;
use crate::model::{Case, Counts, PhaseKind, PhaseStatus, Run, Suite};

/// Template of the job summary.
pub const SUMMARY_TEMPLATE: &str = "summary.md.j2";
/// Template of the PR comment.
pub const COMMENT_TEMPLATE: &str = "comment.md.j2";

/// Templates compiled into the binary, by name.
const EMBEDDED: &[(&str, &str)] = &[
    (SUMMARY_TEMPLATE, include_str!("../../templates/summary.md.j2")),
    (COMMENT_TEMPLATE, include_str!("../../templates/comment.md.j2")),
    ("macros.md.j2", include_str!("../../templates/macros.md.j2")),
    ("eval.md.j2", include_str!("../../templates/eval.md.j2")),
    ("banks.md.j2", include_str!("../../templates/banks.md.j2")),
    ("history.md.j2", include_str!("../../templates/history.md.j2")),
];

/// The embedded default template of that name.
pub fn embedded_template(name: &str) -> Option<&'static str> {
    EMBEDDED.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

/// Least size a listed case takes in any sensible template; a level that would list more cases
/// than `limit / MIN_CASE_SIZE` cannot fit and is skipped without rendering it.
const MIN_CASE_SIZE: usize = 40;

/// Most cases listed in each history section (flaky, quarantined, still failing).
const HISTORY_LISTED: usize = 50;

/// Room per failure in the short failure list: a failure with a message and a trace excerpt.
const SHORT_LIST_CASE_SIZE: usize = 1_000;

/// How much a rendering shows; reports step down until they fit their budget. Ordered from the
/// most detail to the least.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Detail {
    /// Every case, failures with traces.
    #[default]
    All,
    /// Failing cases only, with their messages.
    Failures,
    /// Suite table and totals only.
    Summary,
}

impl From<crate::config::CommentBody> for Detail {
    fn from(body: crate::config::CommentBody) -> Detail {
        use crate::config::CommentBody;
        match body {
            CommentBody::Full => Detail::All,
            CommentBody::Failures => Detail::Failures,
            CommentBody::Summary => Detail::Summary,
        }
    }
}

/// The job summary (`summary.md`): everything, within 1 MB.
pub struct SummaryMarkdown;

impl Reporter for SummaryMarkdown {
    fn format(&self) -> super::Format {
        super::Format::Summary
    }

    fn file_name(&self) -> &'static str {
        "summary.md"
    }

    fn queue_rank(&self) -> u8 {
        4
    }

    fn uses_template_context(&self) -> bool {
        true
    }

    fn write(&self, run: &Run, env: &ReportEnv, out: &mut dyn Write) -> Result<(), RenderError> {
        let text = render_summary(run, env)?;
        out.write_all(text.as_bytes()).map_err(|source| RenderError::Format { format: "the job summary", source })
    }
}

/// The PR comment body (`comment.md`), within 65,000 characters; the publisher adds its marker.
pub struct CommentMarkdown;

impl Reporter for CommentMarkdown {
    fn format(&self) -> super::Format {
        super::Format::Comment
    }

    fn file_name(&self) -> &'static str {
        "comment.md"
    }

    fn queue_rank(&self) -> u8 {
        5
    }

    fn uses_template_context(&self) -> bool {
        true
    }

    fn write(&self, run: &Run, env: &ReportEnv, out: &mut dyn Write) -> Result<(), RenderError> {
        let text = render_comment(run, env)?;
        out.write_all(text.as_bytes()).map_err(|source| RenderError::Format { format: "the PR comment", source })
    }
}

/// The job summary Markdown within [`Budget::SUMMARY`].
pub fn render_summary(run: &Run, env: &ReportEnv) -> Result<String, RenderError> {
    render_within(run, env, SUMMARY_TEMPLATE, Budget::SUMMARY)
}

/// The PR comment Markdown within [`Budget::COMMENT`].
pub fn render_comment(run: &Run, env: &ReportEnv) -> Result<String, RenderError> {
    render_within(run, env, COMMENT_TEMPLATE, Budget::COMMENT)
}

/// How many cases a suite has: a streamed suite's counts count those on disk too.
fn case_count(suite: &Suite) -> usize {
    match suite.streamed {
        Some(_) => suite.counts.total as usize,
        None => suite.cases.len(),
    }
}

/// Renders `template` at the most detailed level that fits `budget`, else trims the smallest.
pub fn render_within(run: &Run, env: &ReportEnv, template: &str, budget: Budget) -> Result<String, RenderError> {
    let engine = engine(env.templates.as_deref())?;
    let max_cases = budget.limit / MIN_CASE_SIZE;
    let total = run.suites.iter().map(case_count).sum::<usize>();
    // A streamed suite (`--stream`) keeps its failing cases in memory, not every case: list
    // failures at most (what a run of that size gets anyway).
    let streamed = run.suites.iter().any(|s| s.streamed.is_some());
    // With no passing case, leaving passing cases out leaves nothing out: no notice says so.
    let any_passed = run.suites.iter().any(|s| s.counts.passes() > 0);
    let mut last = None;
    // Failures step down twice: as many as could fit at their least size, then a short list
    // (with a count of the rest), so a PR comment on a run with thousands of failures still
    // names the first ones instead of dropping to the suite table.
    let levels = [
        (Detail::All, max_cases),
        (Detail::Failures, max_cases),
        (Detail::Failures, (budget.limit / SHORT_LIST_CASE_SIZE).max(1)),
        (Detail::Summary, 0),
    ];
    for (detail, listed) in levels {
        // The user asked for less in the comment (`comment-body`): start at that level.
        if template == COMMENT_TEMPLATE && detail < env.comment_detail {
            continue;
        }
        // Listing every case cannot fit when there are more than the budget holds at its least
        // size each.
        if detail == Detail::All && (total > max_cases || streamed) {
            continue;
        }
        let notice = match detail {
            // Every case would fit, but a streamed run keeps only its failing ones in memory.
            Detail::Failures if !any_passed => None,
            Detail::Failures if streamed && total <= max_cases => Some(
                "Passing cases are not listed: this run was read in the streaming mode (`--stream`). Every case \
                 is in `results.json`, `junit.xml` and `ctrf.json` among the run's artifacts."
                    .to_string(),
            ),
            _ => notice(detail, &budget),
        };
        // Levels that can step down stop rendering as soon as they outgrow the budget; the last
        // one renders in full so the trim below sees all of it.
        let cap = (detail != Detail::Summary).then_some(budget);
        // Charts go where GitHub draws them; the comment carries one only when asked to.
        let charts = if template == COMMENT_TEMPLATE { env.comment_charts } else { env.summary_charts.unwrap_or(true) };
        // A level whose failure list alone is provably over the budget is not rendered at all
        // (the default job summary only: its lines are known, `listed_floor`).
        let floor =
            (cap.is_some() && template == SUMMARY_TEMPLATE && default_failure_list(env)).then_some(budget.limit);
        let Some(ctx) = context(run, env, detail, notice, &budget, listed, charts, floor) else {
            continue;
        };
        match render_capped(&engine, template, ctx, cap)? {
            Some(text) if budget.fits(&text) => return Ok(text),
            Some(text) => last = Some(text),
            None => {}
        }
    }
    // Summary level always renders (it lists no cases), so `last` is set; fall back defensively.
    let text = last.unwrap_or_default();
    let notice = format!(
        "> [!WARNING]\n> **Report trimmed** to fit GitHub's limit of {}. Every suite and case is in \
         `results.json`, `junit.xml` and `ctrf.json` among the run's artifacts.",
        budget.describe()
    );
    Ok(budget::hard_trim(&text, &budget, &notice))
}

/// Most failures of each group the default job summary lists (`failure_list`'s `max` in
/// `summary.md.j2`).
const SUMMARY_FAILURES_LISTED: usize = 100_000;

/// True when the job summary's failure list comes from the embedded templates (neither
/// `summary.md.j2` nor `macros.md.j2` is overridden), whose lines [`listed_floor`] knows.
fn default_failure_list(env: &ReportEnv) -> bool {
    env.templates
        .as_deref()
        .is_none_or(|dir| [SUMMARY_TEMPLATE, "macros.md.j2"].iter().all(|name| !dir.join(name).is_file()))
}

/// The fewest characters the default job summary's failure list can take for the cases
/// `picked` lists (each in a group), so a level whose list alone is over the budget is known
/// without rendering it. Each line is `- ❌ **suite** › `name` at `file:line`: message`; only
/// what no filter drops is counted: the fixed text, and the printable ASCII (backticks aside)
/// of the suite, name, location and the first 199 characters of the message's first line
/// (`truncate(200)` keeps those). Escaping only adds; a unit test holds the bound to the template.
fn listed_floor(run: &Run, picked: &[Vec<(&Case, Option<Group>)>]) -> usize {
    let visible = |text: &str| text.bytes().filter(|b| b.is_ascii_graphic() && *b != b'`').count();
    let mut per_group: HashMap<Group, usize> = HashMap::new();
    let mut total = 0;
    for (suite, listed) in run.suites.iter().zip(picked) {
        for (case, group) in listed {
            let Some(group) = group else { continue };
            let shown = per_group.entry(*group).or_default();
            if *shown == SUMMARY_FAILURES_LISTED {
                continue;
            }
            *shown += 1;
            // `- `, an icon, ` **`, `** › `, the name's two backticks, the newline.
            total += 14 + visible(&suite.name) + visible(&case.name);
            if let Some(location) = location(case).filter(|l| !l.is_empty()) {
                total += " at ``".len() + visible(&location);
            }
            if let Some(message) = case.message().filter(|m| !m.is_empty()) {
                let first = filters::first_line(message).chars().take(199);
                total += ": ".len() + first.filter(|c| c.is_ascii_graphic() && *c != '`').count();
            }
        }
    }
    total
}

fn notice(detail: Detail, budget: &Budget) -> Option<String> {
    match detail {
        Detail::All => None,
        Detail::Failures => Some(format!(
            "Passing cases are not listed: the full report would exceed {}. Every case is in \
             `results.json`, `junit.xml` and `ctrf.json` among the run's artifacts.",
            budget.describe()
        )),
        Detail::Summary => Some(format!(
            "Only suites and totals are shown: even the failures alone would exceed {}. Every case \
             is in `results.json`, `junit.xml` and `ctrf.json` among the run's artifacts.",
            budget.describe()
        )),
    }
}

/// Renders `template`, or `None` as soon as the output outgrows `cap`.
fn render_capped(
    engine: &Environment<'static>,
    template: &str,
    ctx: Value,
    cap: Option<Budget>,
) -> Result<Option<String>, RenderError> {
    let tmpl = engine.get_template(template).map_err(|e| template_error(template, &e))?;
    #[cfg(test)]
    tests::RENDERS.with(|n| n.set(n.get() + 1));
    let mut out = CappedWriter { bytes: Vec::new(), size: 0, cap, over: false };
    match tmpl.render_captured_to(ctx, &mut out) {
        Ok(_) => String::from_utf8(out.bytes)
            .map(|text| Some(budget::squeeze_blank_lines(&text)))
            .map_err(|e| RenderError::Template(format!("template {template}: {e}"))),
        Err(_) if out.over => Ok(None),
        Err(e) => Err(template_error(template, &e)),
    }
}

/// Collects rendered output and fails the write that takes it past the budget, which stops
/// minijinja mid-template instead of rendering megabytes that are thrown away.
struct CappedWriter {
    bytes: Vec<u8>,
    /// Size so far in the budget's unit.
    size: usize,
    cap: Option<Budget>,
    over: bool,
}

impl Write for CappedWriter {
    fn write(&mut self, chunk: &[u8]) -> std::io::Result<usize> {
        if let Some(cap) = self.cap {
            self.size += match cap.unit {
                budget::Unit::Bytes => chunk.len(),
                // Characters are the bytes that do not continue a UTF-8 sequence.
                budget::Unit::Chars => chunk.iter().filter(|b| (**b & 0xC0) != 0x80).count(),
            };
            if self.size > cap.limit {
                self.over = true;
                return Err(std::io::Error::other("over the size budget"));
            }
        }
        self.bytes.extend_from_slice(chunk);
        Ok(chunk.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn template_error(name: &str, e: &minijinja::Error) -> RenderError {
    let mut text = format!("template {name}: {e}");
    if let Some(detail) = e.detail()
        && !text.contains(detail)
    {
        text.push_str(&format!(" ({detail})"));
    }
    text.push_str(" — fix the template or remove it from the templates directory to use the default");
    RenderError::Template(text)
}

/// A template environment with fcorr's filters, loading from `dir` first, then the embedded set.
pub fn engine(dir: Option<&Path>) -> Result<Environment<'static>, RenderError> {
    if let Some(dir) = dir
        && !dir.is_dir()
    {
        return Err(RenderError::NoTemplates { path: dir.to_path_buf() });
    }
    let mut env = Environment::new();
    // Block tags on their own lines leave no blank lines behind, so templates can be indented.
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
        .map_err(|e| RenderError::Template(format!("template syntax: {e}")))?;
    env.set_syntax(syntax);
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    // Markdown output: escaping is explicit through the `cell`/`code` filters, never automatic.
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    filters::register(&mut env);
    let dir: Option<PathBuf> = dir.map(Path::to_path_buf);
    env.set_loader(move |name| load_template(dir.as_deref(), name));
    Ok(env)
}

fn load_template(dir: Option<&Path>, name: &str) -> Result<Option<String>, minijinja::Error> {
    // Template names are plain relative paths; nothing may escape the templates directory.
    let safe = !name.is_empty() && Path::new(name).components().all(|c| matches!(c, std::path::Component::Normal(_)));
    if let (Some(dir), true) = (dir, safe) {
        let path = dir.join(name);
        if path.is_file() {
            return crate::fsio::read_text(&path, crate::fsio::TEMPLATE)
                .map(Some)
                .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, format!("template {e}")));
        }
    }
    Ok(embedded_template(name).map(str::to_string))
}

/// The run as seen by `run` in templates (everything but the suites).
#[derive(Serialize)]
struct RunView<'a> {
    fcorr_version: &'a str,
    started_at: &'a str,
    finished_at: &'a str,
    duration_ms: u64,
    git: Option<&'a crate::model::GitInfo>,
    config_hash: Option<&'a str>,
    score: Option<f64>,
    /// Empty when nothing was scored (no suite).
    health: &'static str,
    verdict: &'a crate::model::Verdict,
    /// `pass`, `fail`, `usage-error`, `harness-error`.
    outcome: Value,
    /// `PASS`, `FAIL`, `INPUT ERROR`, `HARNESS ERROR`.
    outcome_word: &'static str,
    passed: bool,
    /// fcorr's own warnings (`Run::warnings`), as the terminal printed them.
    warnings: &'a [String],
}

/// Totals with the derived numbers templates need.
#[derive(Serialize)]
struct TotalsView {
    #[serde(flatten)]
    counts: Counts,
    ran: u64,
    passes: u64,
    failures: u64,
    /// Failed and timed out: what the reports show as failed (errors are `error`, shown apart).
    failed_count: u64,
    /// passes / ran × 100; none when nothing ran.
    pass_rate: Option<f64>,
    suites: usize,
    suites_met: usize,
}

impl TotalsView {
    fn of(counts: &Counts, suites: &[Suite]) -> TotalsView {
        TotalsView {
            counts: *counts,
            ran: counts.ran(),
            passes: counts.passes(),
            failures: counts.failures(),
            failed_count: counts.failed_or_timed_out(),
            pass_rate: pass_rate(counts),
            suites: suites.len(),
            suites_met: suites.iter().filter(|s| s.score.met).count(),
        }
    }
}

fn pass_rate(counts: &Counts) -> Option<f64> {
    (counts.ran() > 0).then(|| crate::score::round2(counts.passes() as f64 * 100.0 / counts.ran() as f64))
}

/// One case as seen by templates.
#[derive(Serialize)]
struct CaseView<'a> {
    id: &'a str,
    suite_id: &'a str,
    suite: &'a str,
    name: &'a str,
    classname: Option<&'a str>,
    file: Option<&'a str>,
    line: Option<u32>,
    /// `file:line`, `file`, or none.
    location: Option<String>,
    /// Link to `location` on GitHub at the PR head (`report::links`), when known and in the repository.
    url: Option<String>,
    status: &'static str,
    duration_ms: Option<f64>,
    message: Option<&'a str>,
    details: Option<std::borrow::Cow<'a, str>>,
    retries: u32,
    attempts: &'a [crate::model::Attempt],
    score: Option<f64>,
    critical: bool,
    tags: &'a std::collections::BTreeMap<String, String>,
    reasons: &'a [crate::model::Reason],
    expectation_source: Option<&'a str>,
    usage: Option<&'a crate::model::Usage>,
    quarantined: bool,
    /// `new-failure` or `still-failing` against the baseline; none without one.
    change: Option<&'static str>,
    /// What else this run knows of the case (a red streak, retries, quarantine), with `code spans`.
    note: Option<String>,
    /// The check run holding the case's annotation, when it links to code and one was created.
    annotation_url: Option<&'a str>,
}

/// What a case's view needs beyond the case: links, the baseline's changes and the history.
struct CaseContext<'a> {
    links: Option<&'a CodeLinks>,
    check_run_url: Option<&'a str>,
    changes: HashMap<(&'a str, &'a str), Change>,
    /// Notes from the history sections, by (suite name, case name).
    notes: HashMap<(String, String), String>,
    /// Cases failing in the runs before this one too: their suites' names by case name, so a
    /// case is looked up by borrowed names (every case of the run is, once per report).
    failing_before: HashMap<String, Vec<String>>,
    /// Eval and benchmark cases whose outcome word changed since the baseline: the word before,
    /// by (suite id, case id).
    outcome_before: HashMap<(String, String), String>,
    /// Graded cases whose score changed since the baseline: the score before.
    score_before: HashMap<(&'a str, &'a str), f64>,
}

impl<'a> CaseContext<'a> {
    fn new(
        run: &'a Run,
        env: &'a ReportEnv,
        history: &crate::history::Sections,
        evals: &[Option<crate::report::eval::EvalMetrics>],
    ) -> CaseContext<'a> {
        let mut notes = HashMap::new();
        let mut failing_before: HashMap<String, Vec<String>> = HashMap::new();
        for c in &history.failing {
            let since = match (&c.since_sha, c.before_window) {
                (Some(sha), false) => format!(", since `{sha}`"),
                (Some(sha), true) => format!(", since before `{sha}`"),
                (None, _) => String::new(),
            };
            notes.insert((c.suite.clone(), c.name.clone()), format!("failing for {} runs{since}", c.streak));
            failing_before.entry(c.name.clone()).or_default().push(c.suite.clone());
        }
        for c in &history.flaky_now {
            let retries = if c.retries == 1 { "1 retry".to_string() } else { format!("{} retries", c.retries) };
            let window =
                if c.ran > 1 { format!("; failed {} of the last {} runs", c.failed, c.ran) } else { String::new() };
            let newly = if c.newly { " (newly flaky)" } else { "" };
            notes.insert((c.suite.clone(), c.name.clone()), format!("passed after {retries}{window}{newly}"));
        }
        CaseContext {
            links: env.links.as_ref(),
            check_run_url: env.links.as_ref().and_then(|l| l.check_run_url()).and_then(filters::safe_url),
            changes: super::lead::changes_by_case(run),
            notes,
            failing_before,
            outcome_before: run
                .suites
                .iter()
                .zip(evals)
                .filter_map(|(s, m)| Some((s, m.as_ref()?)))
                .flat_map(|(s, m)| m.flips.iter().map(move |f| ((s.id.clone(), f.case_id.clone()), f.from.clone())))
                .collect(),
            score_before: run
                .comparison
                .iter()
                .flat_map(|c| &c.cases)
                .filter_map(|x| match (x.score_before, x.score_after) {
                    (Some(before), Some(after)) if before != after => {
                        Some(((x.suite_id.as_str(), x.case_id.as_str()), before))
                    }
                    _ => None,
                })
                .collect(),
        }
    }

    fn change(&self, suite: &Suite, case: &Case) -> Option<Change> {
        self.changes.get(&(suite.id.as_str(), case.id.as_str())).copied()
    }

    fn group(&self, suite: &Suite, case: &Case) -> Option<Group> {
        let before = self.failing_before.get(case.name.as_str()).is_some_and(|suites| suites.contains(&suite.name));
        super::lead::group_of(case, self.change(suite, case), before)
    }
}

/// `file:line`, `file`, or none.
fn location(case: &Case) -> Option<String> {
    match (&case.file, case.line) {
        (Some(f), Some(l)) => Some(format!("{f}:{l}")),
        (Some(f), None) => Some(f.to_string()),
        _ => None,
    }
}

/// GitHub link to the case's file and line, when links are on and the file is in the repository.
fn code_url(links: Option<&CodeLinks>, suite: &Suite, case: &Case) -> Option<String> {
    links.and_then(|l| l.file_url(suite, case.file.as_deref()?, case.line))
}

fn case_value(suite: &Suite, case: &Case, ctx: &CaseContext<'_>) -> Value {
    let url = code_url(ctx.links, suite, case);
    let change = ctx.change(suite, case).and_then(|c| match c {
        Change::NewFailure => Some("new-failure"),
        Change::StillFailing => Some("still-failing"),
        _ => None,
    });
    // The maps are keyed by owned names: look only when there is something to find (most runs
    // have no history notes and no eval flips, and every listed case is looked up).
    let owned = |a: &str, b: &str| (a.to_string(), b.to_string());
    let note = (!ctx.notes.is_empty()).then(|| ctx.notes.get(&owned(&suite.name, &case.name))).flatten();
    let mut notes: Vec<String> = note.into_iter().cloned().collect();
    let outcome_before =
        (!ctx.outcome_before.is_empty()).then(|| ctx.outcome_before.get(&owned(&suite.id, &case.id))).flatten();
    if let Some(before) = outcome_before {
        notes.push(format!("was `{before}`"));
    } else if let Some(before) = ctx.score_before.get(&(suite.id.as_str(), case.id.as_str())) {
        notes.push(format!("was {}", filters::format_number(*before)));
    }
    if case.status == crate::model::CaseStatus::Flaky && notes.is_empty() && case.extra().retries > 0 {
        notes.push(format!(
            "passed after {} retr{}",
            case.extra().retries,
            if case.extra().retries == 1 { "y" } else { "ies" }
        ));
    }
    if case.extra().quarantined {
        notes.push("quarantined: reported, not gated".into());
    }
    Value::from(Serde(CaseView {
        id: &case.id,
        suite_id: &suite.id,
        suite: &suite.name,
        name: &case.name,
        classname: case.classname.as_deref(),
        file: case.file.as_deref(),
        line: case.line,
        location: location(case),
        annotation_url: url.as_ref().and(ctx.check_run_url),
        url,
        status: case.status.label(),
        duration_ms: case.duration_ms,
        message: case.message(),
        details: case.details(),
        retries: case.extra().retries,
        attempts: &case.extra().attempts,
        score: case.extra().score,
        critical: case.extra().critical,
        tags: &case.extra().eval().tags,
        reasons: &case.extra().eval().reasons,
        expectation_source: case.extra().eval().expectation_source.as_deref(),
        usage: case.extra().eval().usage.as_ref(),
        quarantined: case.extra().quarantined,
        change,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }))
}

/// One suite as seen by templates; `cases`/`failures` depend on the detail level.
#[derive(Serialize)]
struct SuiteView<'a> {
    id: &'a str,
    name: &'a str,
    kind: Value,
    path: Option<&'a str>,
    /// kebab-case status (`passed`, `build-failed`...).
    status: Value,
    /// Words for the status (`build failed`).
    status_label: &'static str,
    language: Option<&'a str>,
    framework: Option<&'a str>,
    detection: Option<&'a crate::model::Detection>,
    phases: &'a [crate::model::Phase],
    /// Install phase in one word: `ok`, `failed`, `timeout`, `cached`, `skipped`, `error`, or `-`.
    install: &'static str,
    /// Build phase in one word, like `install`.
    build: &'static str,
    /// Test phase in one word, like `install`.
    test: &'static str,
    counts: &'a Counts,
    ran: u64,
    passes: u64,
    failures_count: usize,
    /// Failed and timed out, as `TotalsView::failed_count`.
    failed_count: u64,
    pass_rate: Option<f64>,
    score: &'a crate::model::Score,
    policy: &'static str,
    weight: f64,
    critical: bool,
    duration_ms: u64,
    error: Option<&'a crate::model::SuiteError>,
    diagnostics: &'a [crate::model::Diagnostic],
    /// Members or modules found and not run, with why (`path`, `reason`).
    left_out: &'a [crate::model::LeftOut],
    /// Report files that could not be read (collect errors): the counts may be incomplete.
    report_errors: Vec<&'a str>,
    log_file: Option<&'a str>,
    usage: Option<&'a crate::model::Usage>,
    cases: Vec<Value>,
    failures: Vec<Value>,
    /// Cases of this suite not in `cases` at this detail level.
    cases_omitted: usize,
    delta: Option<&'a SuiteDelta>,
    /// Eval suites: pass rate, reasons, categories, usage, flips (`crate::report::eval`).
    eval: Option<crate::report::eval::EvalMetrics>,
    /// `Python · pytest`, `bank · semantic`, `eval`: what ran it, short.
    runner: String,
    /// Whether the suite passed its gate (`passed`), and why not (`note`: `below 100`…).
    gate: GateView,
    /// The policy beside the score when it is not the one the score column's header names.
    policy_note: Option<&'static str>,
    /// The score column's header (`Score (strict)`), the same for every suite of the run.
    score_header: String,
}

#[derive(Serialize)]
struct GateView {
    passed: bool,
    note: Option<String>,
}

/// What ran a suite, in a few words for a table cell.
fn runner(suite: &Suite) -> String {
    match &suite.detection {
        Some(d) if !d.framework.is_empty() => format!("{} · {}", d.language, d.framework),
        Some(d) => d.language.clone(),
        None => serde_json::to_value(suite.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
    }
}

/// One word for a phase's outcome; `-` when it was not planned.
fn phase_word(suite: &Suite, kind: PhaseKind) -> &'static str {
    match suite.phase(kind) {
        None => "-",
        Some(p) => match p.status {
            PhaseStatus::Passed => "ok",
            PhaseStatus::Failed => "failed",
            PhaseStatus::Timeout => "timeout",
            PhaseStatus::Skipped if p.note.as_deref().is_some_and(|n| n.contains("up to date")) => "cached",
            PhaseStatus::Skipped => "skipped",
            PhaseStatus::Error => "error",
            PhaseStatus::Cancelled => "cancelled",
        },
    }
}

/// A case change with its suite name, for delta lists.
#[derive(Serialize)]
struct ChangeView<'a> {
    #[serde(flatten)]
    change: &'a CaseChange,
    suite: &'a str,
    /// The case now (message, location), when it is in this run.
    message: Option<&'a str>,
    location: Option<String>,
    url: Option<String>,
}

#[derive(Serialize)]
struct BaselineView<'a> {
    source: &'a str,
    commit: Option<&'a str>,
    short_commit: Option<String>,
    url: Option<&'a str>,
    started_at: Option<&'a str>,
    commits_behind: u32,
    fresh: bool,
    stale: bool,
    /// The baseline run's conclusion when it was not `success` (`failure`, `cancelled`…).
    red_conclusion: Option<&'a str>,
}

/// One listed case of the timing lists, with what templates need to show it.
#[derive(Serialize)]
struct TimedView<'a> {
    suite: &'a str,
    name: &'a str,
    location: Option<String>,
    url: Option<String>,
    duration_ms: f64,
    before_ms: Option<f64>,
    change_ms: Option<f64>,
    factor: Option<f64>,
}

#[derive(Serialize)]
struct TimingView<'a> {
    slowest: Vec<TimedView<'a>>,
    slowdowns: Vec<TimedView<'a>>,
    slowdowns_total: usize,
    compared: bool,
    settings: crate::model::TimingSettings,
}

/// The run's timing lists (`results.json` `timing`; computed from the run for older results
/// without one, which then have no slowdowns), resolved to names, locations and links.
fn timing_view<'a>(run: &'a Run, links: Option<&CodeLinks>) -> Option<TimingView<'a>> {
    let computed;
    let timing = match &run.timing {
        Some(t) => t,
        None => {
            computed = crate::timing::timing(run, None, &crate::model::TimingSettings::default());
            &computed
        }
    };
    // "The slowest 10" of a run with 10 tests or fewer is just the run again: only slowdowns then.
    // A streamed suite's cases are on disk: the ones that ran stand for the timed ones.
    let timed: usize = run
        .suites
        .iter()
        .map(|s| match s.streamed {
            Some(_) => s.counts.ran() as usize,
            None => s.cases.iter().filter(|c| crate::timing::ran_ms(c).is_some()).count(),
        })
        .sum();
    let show_slowest = timed > timing.slowest.len();
    if !show_slowest && timing.slowdowns.is_empty() && !timing.compared {
        return None;
    }
    // Listed cases are this run's: names and locations are read from it. The lists are short,
    // the run is not: its cases are scanned once for all of them (a scan per listed case compared
    // a million ids per list on a 100,000-case run, each time a report renders).
    let mut listed: HashMap<(&str, &str), Option<(&'a Suite, &'a Case)>> = timing
        .slowest
        .iter()
        .filter(|_| show_slowest)
        .map(|c| ((c.suite_id.as_str(), c.case_id.as_str()), None))
        .chain(timing.slowdowns.iter().map(|d| ((d.suite_id.as_str(), d.case_id.as_str()), None)))
        .collect();
    let mut suite_ids: HashSet<&str> = listed.keys().map(|(suite, _)| *suite).collect();
    // Only the first suite of an id is looked in, as `find` on the suites did.
    for suite in run.suites.iter().filter(|s| suite_ids.remove(s.id.as_str())) {
        for case in &suite.cases {
            if let Some(slot) = listed.get_mut(&(suite.id.as_str(), case.id.as_str())) {
                // The first case with that id, as a scan finds it.
                slot.get_or_insert((suite, case));
            }
        }
    }
    let find = |suite_id: &str, case_id: &str| listed.get(&(suite_id, case_id)).copied().flatten();
    let row = |(suite, case): (&'a Suite, &'a Case), duration_ms: f64| TimedView {
        suite: &suite.name,
        name: &case.name,
        location: location(case),
        url: code_url(links, suite, case),
        duration_ms,
        before_ms: None,
        change_ms: None,
        factor: None,
    };
    Some(TimingView {
        slowest: timing
            .slowest
            .iter()
            .filter(|_| show_slowest)
            .filter_map(|c| Some(row(find(&c.suite_id, &c.case_id)?, c.duration_ms)))
            .collect(),
        slowdowns: timing
            .slowdowns
            .iter()
            .filter_map(|d| {
                let found = find(&d.suite_id, &d.case_id)?;
                Some(TimedView {
                    before_ms: Some(d.before_ms),
                    change_ms: Some(d.change_ms),
                    factor: d.factor,
                    ..row(found, d.after_ms)
                })
            })
            .collect(),
        slowdowns_total: timing.slowdowns_total,
        compared: timing.compared,
        settings: timing.settings,
    })
}

/// Number of case changes of each kind.
#[derive(Serialize, Default)]
struct ChangeCounts {
    new_failures: usize,
    fixed: usize,
    still_failing: usize,
    added: usize,
    removed: usize,
    flaky: usize,
    newly_skipped: usize,
}

#[derive(Serialize)]
struct ComparisonView<'a> {
    baseline: BaselineView<'a>,
    score_delta: Option<f64>,
    pass_rate_delta: Option<f64>,
    counts_delta: &'a crate::compare::CountsDelta,
    duration_delta_ms: i64,
    suites: &'a [SuiteDelta],
    /// Every change, new failures first (capped like case lists; see `changes_count`).
    changes: Vec<Value>,
    changes_count: usize,
    /// How many changes of each kind there are, listed or not (keys as the lists below).
    change_counts: ChangeCounts,
    new_failures: Vec<Value>,
    fixed: Vec<Value>,
    still_failing: Vec<Value>,
    added: Vec<Value>,
    removed: Vec<Value>,
    flaky: Vec<Value>,
    newly_skipped: Vec<Value>,
    /// What a reader must know before trusting the deltas (`Comparison::cautions`).
    cautions: Vec<String>,
    /// The baseline's suites this run does not have, with their counts there.
    removed_suites: Vec<RemovedSuiteView<'a>>,
    /// Removed cases that failed in the baseline.
    removed_failing: usize,
}

/// A suite of the baseline this run does not have.
#[derive(Serialize)]
struct RemovedSuiteView<'a> {
    name: &'a str,
    tests: i64,
    failing: i64,
    baseline_score: Option<f64>,
}

fn comparison_view<'a>(run: &'a Run, c: &'a Comparison, max: usize, links: Option<&CodeLinks>) -> ComparisonView<'a> {
    let mut changes: Vec<&CaseChange> = c.cases.iter().collect();
    changes.sort_by_key(|x| x.change);
    // Cases by id, built once: a scan per listed change would be quadratic on big runs.
    let cases: std::collections::HashMap<(&str, &str), (&Suite, &Case)> =
        run.suites.iter().flat_map(|s| s.cases.iter().map(move |k| ((s.id.as_str(), k.id.as_str()), (s, k)))).collect();
    let view = |x: &'a CaseChange| {
        let found = cases.get(&(x.suite_id.as_str(), x.case_id.as_str()));
        let suite = found.map(|(s, _)| *s).or_else(|| run.suites.iter().find(|s| s.id == x.suite_id));
        let case = found.map(|(_, k)| *k);
        Value::from(Serde(ChangeView {
            change: x,
            suite: suite.map(|s| s.name.as_str()).unwrap_or(&x.suite_id),
            message: case.and_then(|k| k.message()),
            location: case.and_then(location),
            url: found.and_then(|(s, k)| code_url(links, s, k)),
        }))
    };
    let pick = |kind: Change| -> Vec<Value> {
        changes.iter().filter(|x| x.change == kind).take(max).map(|x| view(x)).collect()
    };
    ComparisonView {
        baseline: BaselineView {
            source: &c.baseline.source,
            commit: c.baseline.commit.as_deref(),
            short_commit: c.baseline.commit.as_deref().map(filters::short_sha),
            url: c.baseline.url.as_deref().and_then(filters::safe_url),
            started_at: c.baseline.started_at.as_deref(),
            commits_behind: c.baseline.commits_behind,
            fresh: c.baseline.is_fresh(),
            stale: !c.baseline.is_fresh(),
            red_conclusion: c.baseline.conclusion.as_deref().filter(|c| *c != "success"),
        },
        score_delta: c.score_delta,
        pass_rate_delta: c.pass_rate_delta,
        counts_delta: &c.counts_delta,
        duration_delta_ms: c.duration_delta_ms,
        suites: &c.suites,
        changes: changes.iter().take(max).map(|x| view(x)).collect(),
        changes_count: changes.len(),
        change_counts: change_counts(&changes),
        new_failures: pick(Change::NewFailure),
        fixed: pick(Change::Fixed),
        still_failing: pick(Change::StillFailing),
        added: pick(Change::Added),
        removed: pick(Change::Removed),
        flaky: pick(Change::Flaky),
        newly_skipped: pick(Change::NewlySkipped),
        cautions: c.cautions(),
        removed_suites: c
            .suites
            .iter()
            .filter(|s| s.removed)
            .map(|s| {
                let (tests, failing) = s.gone_counts();
                RemovedSuiteView { name: &s.name, tests, failing, baseline_score: s.baseline_score }
            })
            .collect(),
        removed_failing: c.removed_failing().count(),
    }
}

fn change_counts(changes: &[&CaseChange]) -> ChangeCounts {
    let mut counts = ChangeCounts::default();
    for x in changes {
        *match x.change {
            Change::NewFailure => &mut counts.new_failures,
            Change::Fixed => &mut counts.fixed,
            Change::StillFailing => &mut counts.still_failing,
            Change::Added => &mut counts.added,
            Change::Removed => &mut counts.removed,
            Change::Flaky => &mut counts.flaky,
            Change::NewlySkipped => &mut counts.newly_skipped,
        } += 1;
    }
    counts
}

/// The template context at one detail level (documented in `docs/templates.md`), listing at
/// most `max` failures (and changes of each kind); `None` when `floor` is given and the lines
/// of the failure list alone would be longer ([`listed_floor`]).
#[allow(clippy::too_many_arguments)] // one call site, each argument a setting of the level
fn context(
    run: &Run,
    env: &ReportEnv,
    detail: Detail,
    notice: Option<String>,
    budget: &Budget,
    max: usize,
    charts: bool,
    floor: Option<usize>,
) -> Option<Value> {
    let history = crate::history::sections(run, max.min(HISTORY_LISTED));
    let mut evals: Vec<_> =
        run.suites.iter().map(|s| crate::report::eval::of(s, run.comparison.as_ref(), max)).collect();
    let cases_ctx = CaseContext::new(run, env, &history, &evals);
    let why = super::lead::why(run);
    // Critical failures are listed under "why it failed" with their case, and only there.
    let in_why: HashSet<(&str, &str)> =
        why.iter().filter_map(|w| w.case).map(|(s, c)| (s.id.as_str(), c.id.as_str())).collect();
    let common = super::lead::common_policy(run);
    let score_header = match common {
        Some(p) => format!("Score ({})", super::lead::policy_words(p)),
        None => "Score".to_string(),
    };
    // Which cases this level lists, decided before any template value is built: a level that
    // cannot fit is then skipped without building one.
    let mut picked: Vec<Vec<(&Case, Option<Group>)>> = Vec::with_capacity(run.suites.len());
    let mut group_totals: Vec<(Group, usize)> = Vec::new();
    let (mut failures_listed, mut flaky_listed) = (0usize, 0usize);
    for suite in &run.suites {
        let mut listed_here = Vec::new();
        for case in &suite.cases {
            let failing = case.status.is_failure();
            let group =
                cases_ctx.group(suite, case).filter(|_| !in_why.contains(&(suite.id.as_str(), case.id.as_str())));
            let listed = match detail {
                Detail::All => true,
                Detail::Failures if failing => failures_listed < max,
                Detail::Failures => group.is_some() && flaky_listed < max,
                Detail::Summary => false,
            };
            if let Some(g) = group {
                match group_totals.iter_mut().find(|(k, _)| *k == g) {
                    Some(entry) => entry.1 += 1,
                    None => group_totals.push((g, 1)),
                }
            }
            if !listed {
                continue;
            }
            flaky_listed += usize::from(group == Some(Group::Flaky));
            failures_listed += usize::from(failing);
            listed_here.push((case, group));
        }
        picked.push(listed_here);
    }
    if let Some(floor) = floor
        && listed_floor(run, &picked) > floor
    {
        return None;
    }
    let mut all_cases = Vec::new();
    let mut all_failures = Vec::new();
    let mut groups: Vec<(Group, Vec<Value>, usize)> =
        group_totals.into_iter().map(|(g, n)| (g, Vec::new(), n)).collect();
    let mut suites = Vec::with_capacity(run.suites.len());
    for ((suite, eval), listed) in run.suites.iter().zip(evals.iter_mut()).zip(picked) {
        let mut cases = Vec::new();
        let mut failures = Vec::new();
        for (case, group) in listed {
            let failing = case.status.is_failure();
            // One value shared by every list that shows the case.
            let value = case_value(suite, case, &cases_ctx);
            if let Some(entry) = group.and_then(|g| groups.iter_mut().find(|(k, _, _)| *k == g)) {
                entry.1.push(value.clone());
            }
            if failing {
                failures.push(value.clone());
            }
            if detail == Detail::All || failing {
                cases.push(value);
            }
        }
        all_cases.extend(cases.iter().cloned());
        all_failures.extend(failures.iter().cloned());
        let delta = run.comparison.as_ref().and_then(|c| c.suites.iter().find(|d| d.suite_id == suite.id));
        let gate = super::lead::suite_gate(run, suite);
        suites.push(Value::from(Serde(SuiteView {
            id: &suite.id,
            name: &suite.name,
            kind: Value::from(Serde(suite.kind)),
            path: suite.path.as_deref(),
            status: Value::from(Serde(suite.status)),
            status_label: suite.status.label(),
            language: suite.detection.as_ref().map(|d| d.language.as_str()),
            framework: suite.detection.as_ref().map(|d| d.framework.as_str()),
            detection: suite.detection.as_ref(),
            phases: &suite.phases,
            install: phase_word(suite, PhaseKind::Install),
            build: phase_word(suite, PhaseKind::Build),
            test: phase_word(suite, PhaseKind::Test),
            counts: &suite.counts,
            ran: suite.counts.ran(),
            passes: suite.counts.passes(),
            failures_count: suite.failures().count(),
            failed_count: suite.counts.failed_or_timed_out(),
            pass_rate: pass_rate(&suite.counts),
            score: &suite.score,
            policy: suite.score.policy.label(),
            weight: suite.weight,
            critical: suite.critical,
            duration_ms: suite.duration_ms,
            error: suite.error.as_ref(),
            diagnostics: &suite.diagnostics,
            left_out: &suite.left_out,
            report_errors: suite
                .diagnostics
                .iter()
                .filter(|d| d.source == "collect" && d.severity == crate::model::Severity::Error)
                .map(|d| d.message.as_str())
                .collect(),
            log_file: suite.log_file.as_deref(),
            usage: suite.usage.as_ref(),
            cases_omitted: case_count(suite) - cases.len(),
            cases,
            failures,
            delta,
            eval: eval.take(),
            runner: runner(suite),
            gate: GateView { passed: gate.passed, note: gate.note },
            policy_note: (Some(suite.score.policy) != common).then(|| super::lead::policy_words(suite.score.policy)),
            score_header: score_header.clone(),
        })));
    }
    groups.sort_by_key(|(g, _, _)| *g);
    let why_values: Vec<Value> = why
        .iter()
        .map(|w| {
            minijinja::context! {
                gate => w.gate.label(),
                icon => if w.gate == crate::model::GateKind::Critical { "🚨" } else { "❌" },
                suite => w.suite,
                message => w.message.as_str(),
                case => w.case.map(|(s, c)| case_value(s, c, &cases_ctx)),
            }
        })
        .collect();
    // Traces to show: critical failures first, then each group's listed failures, in order.
    let traced: Vec<Value> = why_values
        .iter()
        .filter_map(|w| w.get_attr("case").ok().filter(|c| !c.is_none()))
        .chain(groups.iter().filter(|(g, _, _)| *g != Group::Flaky).flat_map(|(_, cases, _)| cases.iter().cloned()))
        .filter(|c| c.get_attr("details").is_ok_and(|d| !d.is_none() && d.is_true()))
        .collect();
    let failure_groups: Vec<Value> = groups
        .into_iter()
        .map(|(g, cases, total)| {
            minijinja::context! {
                kind => g.key(),
                title => g.title(),
                icon => g.icon(),
                total => total,
                cases => cases,
            }
        })
        .collect();
    let outcome_word = match run.verdict.outcome {
        // A pass that nothing judged (`--fail-on none`) must not read like a clean run.
        crate::model::RunOutcome::Pass if run.verdict.gates.is_empty() => "PASS (no gates)",
        crate::model::RunOutcome::Pass => "PASS",
        crate::model::RunOutcome::Fail => "FAIL",
        crate::model::RunOutcome::UsageError => "INPUT ERROR",
        crate::model::RunOutcome::HarnessError => "HARNESS ERROR",
    };
    let run_view = RunView {
        fcorr_version: &run.fcorr_version,
        started_at: &run.started_at,
        finished_at: &run.finished_at,
        duration_ms: run.duration_ms,
        git: run.git.as_ref(),
        config_hash: run.config_hash.as_deref(),
        score: run.score,
        health: run.health.map_or("", |h| h.label()),
        verdict: &run.verdict,
        outcome: Value::from(Serde(run.verdict.outcome)),
        outcome_word,
        passed: run.verdict.outcome == crate::model::RunOutcome::Pass,
        warnings: &run.warnings,
    };
    let failing_total = run.suites.iter().map(|s| s.failures().count()).sum::<usize>();
    let comparison =
        run.comparison.as_ref().map(|c| Value::from(Serde(comparison_view(run, c, max, env.links.as_ref()))));
    Some(minijinja::context! {
        run => Value::from(Serde(run_view)),
        suites => suites,
        cases => all_cases,
        failures_omitted => failing_total - all_failures.len(),
        failures => all_failures,
        totals => Value::from(Serde(TotalsView::of(&run.totals, &run.suites))),
        comparison => comparison,
        banks => crate::report::bank::overview(run).map(|b| Value::from(Serde(b))),
        history => Value::from(Serde(history)),
        why => why_values,
        failure_groups => failure_groups,
        failing_in_why => in_why.len(),
        traced => traced,
        env => minijinja::context! {
            repository => env.repository.as_deref(),
            run_url => env.run_url.as_deref().and_then(filters::safe_url),
            server_url => env.server_url.as_deref().and_then(filters::safe_url),
            check_run_url => env.links.as_ref().and_then(|l| l.check_run_url()).and_then(filters::safe_url),
        },
        timing => timing_view(run, env.links.as_ref()).map(|t| Value::from(Serde(t))),
        detail => Value::from(Serde(detail)),
        notice => notice,
        budget => budget.describe(),
        charts => charts,
        outcome_pie => super::mermaid::outcome_pie(&run.totals),
        trend_chart => super::mermaid::trend_line(run),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseStatus, SuiteKind};

    thread_local! {
        /// Templates rendered on this thread (`render_capped`).
        pub(super) static RENDERS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn run_of(cases: Vec<Case>) -> Run {
        let mut suite = Suite::new("api", "api", SuiteKind::Import);
        suite.cases = cases;
        suite.finalize_cases();
        Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
    }

    fn failing(name: &str, file: Option<&str>, line: Option<u32>, message: Option<&str>, status: CaseStatus) -> Case {
        Case { name: name.into(), file: file.map(Into::into), line, status, ..Case::default() }
            .with_message(message.map(str::to_string))
    }

    /// Errors are counted with errors, never with failures (docs/python.md): in the totals line
    /// of the summary and the comment, and beside the failed count of the suite's row.
    #[test]
    fn errors_are_shown_apart_from_failures() {
        let run = run_of(vec![
            failing("ok", None, None, None, CaseStatus::Passed),
            failing("broken", None, None, Some("assert 1 == 2"), CaseStatus::Failed),
            failing("tests/test_x.py", None, None, Some("could not be collected"), CaseStatus::Error),
        ]);
        let env = ReportEnv::default();
        for md in [render_summary(&run, &env).unwrap(), render_comment(&run, &env).unwrap()] {
            assert!(md.contains("**1** passed, **1** failed, **1** error, 0 skipped"), "{md}");
        }
        let md = render_summary(&run, &env).unwrap();
        assert!(md.contains("| 1 | 1 · 1 error |"), "{md}");
        assert!(md.contains("pie showData title 2 of 3 tests failed or errored"), "{md}");
        let clean = run_of(vec![failing("broken", None, None, None, CaseStatus::Failed)]);
        let md = render_summary(&clean, &env).unwrap();
        assert!(
            md.contains("**0** passed, **1** failed, 0 skipped")
                && !md.contains("** error")
                && !md.contains("· 1 error"),
            "{md}"
        );
    }

    /// Characters of the "Failing tests" section of a default job summary.
    fn failure_section(md: &str) -> usize {
        let start = md.find("### Failing tests").expect("a failure list");
        let rest = &md[start + 3..];
        rest[..rest.find("\n### ").unwrap_or(rest.len())].chars().count()
    }

    #[test]
    fn the_failure_list_floor_never_exceeds_what_the_default_summary_writes() {
        let long = format!("{}\nsecond line", "x y ".repeat(300));
        let names = [
            "plain_name",
            "`ticks` and ``more``",
            "bidi \u{202E}evil\u{202C} name",
            "ctl\u{7}\u{1b}[31mred",
            "@someone | *emph* _u_ [l](x) <b>&amp;",
            "#heading-like",
            " spaced ",
            "é😀 non-ascii",
        ];
        let messages = [None, Some(""), Some("`code` ` span `"), Some(long.as_str()), Some("\n\nstarts blank")];
        let files = [(None, None), (Some(""), Some(3)), (Some("src/a`b.rs"), Some(42)), (Some("t/x.py"), None)];
        let mut all = Vec::new();
        for (i, name) in names.iter().enumerate() {
            for (j, message) in messages.iter().enumerate() {
                let (file, line) = files[(i + j) % files.len()];
                let status = [CaseStatus::Failed, CaseStatus::Error, CaseStatus::Timeout, CaseStatus::Flaky][j % 4];
                let case = failing(&format!("{name} {i}.{j}"), file, line, *message, status);
                all.push(case.clone());
                let run = run_of(vec![case]);
                let md = render_summary(&run, &ReportEnv::default()).unwrap();
                let picked = [run.suites[0].cases.iter().map(|c| (c, Some(Group::Failing))).collect::<Vec<_>>()];
                let floor = listed_floor(&run, &picked);
                assert!(floor <= failure_section(&md), "{floor} over what was written:\n{md}");
            }
        }
        let run = run_of(all);
        let md = render_summary(&run, &ReportEnv::default()).unwrap();
        let groups = |c: &Case| if c.status == CaseStatus::Flaky { Group::Flaky } else { Group::Failing };
        let picked = [run.suites[0].cases.iter().map(|c| (c, Some(groups(c)))).collect::<Vec<_>>()];
        assert!(listed_floor(&run, &picked) <= failure_section(&md), "{md}");
    }

    #[test]
    fn a_failure_list_over_the_budget_is_not_rendered_and_the_summary_is_the_same() {
        // 12,000 failures whose lines alone take more than the summary's 1,000,000 bytes: the
        // level listing them all cannot fit, which is known without rendering it.
        let message = "assert 197 == 907: session mismatch in the parser of the report";
        let cases = (0..12_000)
            .map(|i| {
                let name = format!("test_parse_report_{i:05}");
                failing(&name, Some("tests/pkg/test_worker.py"), Some(i), Some(message), CaseStatus::Failed)
            })
            .collect();
        let run = run_of(cases);
        RENDERS.with(|n| n.set(0));
        let summary = render_summary(&run, &ReportEnv::default()).unwrap();
        assert_eq!(RENDERS.with(|n| n.get()), 1, "only the level that fits is rendered");
        // The same template from a directory is not known to be the default: every level is
        // rendered until one fits, and the summary is the same.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("macros.md.j2"), embedded_template("macros.md.j2").unwrap()).unwrap();
        let env = ReportEnv { templates: Some(dir.path().into()), ..ReportEnv::default() };
        RENDERS.with(|n| n.set(0));
        assert_eq!(render_summary(&run, &env).unwrap(), summary);
        // Every case (12,000 fit the budget at its least size each), then every failure, then 1,000.
        assert_eq!(RENDERS.with(|n| n.get()), 3);
        assert!(summary.contains("- … and 11000 more"), "{}", &summary[..2000]);
    }
}
