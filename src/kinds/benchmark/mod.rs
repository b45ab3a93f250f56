//! Benchmark task suites (`kind = "benchmark"`, SWE-bench style): per task, a scratch git copy
//! of its repository, an executor (an agent CLI) or a given patch, then the task's tests through
//! the harness engine, graded FAIL_TO_PASS / PASS_TO_PASS. One task is one case.
//!
//! An executor that crashes or times out is that task's error, never the run's.

mod grade;
pub(crate) mod runner;
pub(crate) mod tasks;
mod workspace;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::collect::ReportSpec;
use crate::config::Commands;
use crate::events::NullSink;
use crate::execute::process::{self, CommandSpec, Exit, LogSink};
use crate::execute::{Collected, ExecContext};
use crate::kinds::project::{PhaseTimeouts, Project, ProjectPlan};
use crate::model::{
    Case, CaseStatus, Diagnostic, DiagnosticSource, Reason, ResultsSource, Severity, Suite, SuiteError, SuiteErrorKind,
    SuiteKind, SuiteStatus, Usage,
};
use crate::plan::SuitePlan;
use crate::runners::KindPlan;
use crate::shard::Shard;
use crate::sut::answer;
pub(crate) use tasks::{Task, TaskError, TaskFilter};

/// Dollars per 1,000 tokens when `cost-per-1k` is not set: $0.003.
pub(crate) const DEFAULT_COST_PER_1K: f64 = 0.003;
/// Seconds an executor may take per task when `executor-timeout` is not set.
pub(crate) const DEFAULT_EXECUTOR_TIMEOUT: u64 = 600;
/// Said of test files the executor changed, which were restored before the tests.
const RESTORED: &str =
    "the executor changed the task's test files; they were put back as they are at the base before the tests ran";
/// Said of a base that something changed during the run.
const TAMPERED: &str = "the run's base copy of this repository was changed after it was made (by an executor?); \
                        this task's copy was made from the source instead";
/// Said of report files that were in the copy before its tests ran.
const PLANTED: &str =
    "report files were in the copy before the tests ran, so they are read only if the tests write them again";
/// Bytes of the generated patch kept in the case details (the file has all of it).
pub(crate) const PATCH_CAP: usize = 16 * 1024;

/// The keys of a `kind = "benchmark"` suite (besides the shared `name`, `path`, `policy`...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct BenchmarkConfig {
    /// Tasks file (`.json`, `.jsonl`, `.toml`) or directory, relative to the config file
    /// (default: the suite's `path`).
    pub tasks: Option<PathBuf>,
    /// Shell command run in each task's copy: the task as JSON on stdin and in
    /// `FCORR_TASK_JSON`; it edits the copy or prints a patch. A leading `./` or `../` word is
    /// relative to the config file.
    pub executor: Option<String>,
    /// Seconds per task for the executor (default 600).
    pub executor_timeout: Option<u64>,
    /// Dollars per 1,000 tokens for the cost estimate (default 0.003).
    pub cost_per_1k: Option<f64>,
    /// Tasks run at once (default: the run's `-j`).
    pub jobs: Option<usize>,
    /// Only these task ids.
    pub ids: Vec<String>,
    /// Only tasks with any of these tags.
    pub tags: Vec<String>,
    /// Only tasks of these difficulties.
    pub difficulty: Vec<String>,
    /// Ecosystem for the tasks' tests when a task has no `test_commands` (detected otherwise).
    pub runner: Option<String>,
    /// Install each task copy's dependencies before its tests (default true).
    pub install: Option<bool>,
    /// Seconds for each task's test commands (default 600).
    pub test_timeout: Option<u64>,
    /// Environment for the executor and the tests.
    pub env: BTreeMap<String, String>,
    /// Report files the test commands write, for tasks that name none (globs in the copy).
    pub reports: Vec<String>,
    /// Withheld variables (the secrets fcorr.toml names, fcorr's tokens) the executor may
    /// inherit: an agent that calls a model needs its key. Never the task's tests. Left out of
    /// the serialised form when empty, so configuration hashes stay what they were.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
}

/// A benchmark suite, resolved.
#[derive(Debug, Clone)]
pub(crate) struct BenchmarkPlan {
    /// Absolute tasks file or directory.
    pub tasks: PathBuf,
    /// The executor command, its leading relative program made absolute.
    pub executor: Option<String>,
    pub executor_timeout: Duration,
    pub cost_per_1k: f64,
    pub jobs: Option<usize>,
    pub filter: TaskFilter,
    pub runner: Option<String>,
    pub install: bool,
    pub test_timeout: Duration,
    pub env: Vec<(String, String)>,
    pub reports: Vec<String>,
    /// `pass-env`: withheld variables the executor inherits.
    pub pass_env: Vec<String>,
    /// Keeps only the tasks of one shard (`--shard K/N`), when set.
    pub shard: Option<Shard>,
}

impl BenchmarkConfig {
    /// Resolves paths against `base_dir` (the config file's directory) and applies defaults;
    /// `path` is the suite's own `path`, the default tasks location.
    pub(crate) fn resolve(&self, base_dir: &Path, path: &Path) -> Result<BenchmarkPlan, SettingError> {
        if let Some(price) = self.cost_per_1k
            && (!price.is_finite() || price < 0.0)
        {
            return Err(SettingError::CostPer1k(price));
        }
        if self.jobs == Some(0) {
            return Err(SettingError::NoJobs);
        }
        Ok(BenchmarkPlan {
            tasks: self.tasks.as_ref().map_or_else(|| base_dir.join(path), |t| base_dir.join(t)),
            executor: self.executor.as_deref().map(|e| absolute_program(e, base_dir)),
            executor_timeout: Duration::from_secs(self.executor_timeout.unwrap_or(DEFAULT_EXECUTOR_TIMEOUT)),
            cost_per_1k: self.cost_per_1k.unwrap_or(DEFAULT_COST_PER_1K),
            jobs: self.jobs,
            filter: TaskFilter { ids: self.ids.clone(), tags: self.tags.clone(), difficulty: self.difficulty.clone() },
            runner: self.runner.clone(),
            install: self.install.unwrap_or(true),
            test_timeout: Duration::from_secs(self.test_timeout.unwrap_or(DEFAULT_EXECUTOR_TIMEOUT)),
            env: self.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            reports: self.reports.clone(),
            pass_env: self.pass_env.clone(),
            shard: None,
        })
    }
}

/// A `[suite.benchmark]` setting out of range; [`key`](SettingError::key) names it, so the
/// config check can point at its line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum SettingError {
    #[error("cost-per-1k: {0} is not a non-negative price")]
    CostPer1k(f64),
    #[error("jobs: must be at least 1")]
    NoJobs,
}

impl SettingError {
    /// The config key at fault.
    pub(crate) fn key(&self) -> &'static str {
        match self {
            SettingError::CostPer1k(_) => "cost-per-1k",
            SettingError::NoJobs => "jobs",
        }
    }
}

/// Runs a benchmark suite to an unscored [`Suite`] (the caller scores it). Only the shared
/// settings of `suite` are read (id, name, path, weight, critical).
pub(crate) fn run(suite_plan: &SuitePlan, plan: &BenchmarkPlan, ctx: &ExecContext) -> Suite {
    let mut suite = Suite::new(suite_plan.id.clone(), suite_plan.name.clone(), SuiteKind::Benchmark);
    suite.path = Some(suite_plan.display_path.clone());
    suite.weight = suite_plan.weight;
    suite.critical = suite_plan.critical;
    suite.score.policy = suite_plan.policy;
    suite.score.threshold = suite_plan.threshold;
    let fail = |mut suite: Suite, kind, message: String, hint: Option<&str>| {
        suite.status = SuiteStatus::Error;
        suite.error = Some(SuiteError { kind, message, hint: hint.map(String::from) });
        suite
    };
    let (selected, total) = match select(&suite_plan.id, plan) {
        Ok(tasks) => tasks,
        Err(e) => return fail(suite, SuiteErrorKind::Input, e.to_string(), Some("fix the tasks file")),
    };
    if selected.is_empty() {
        let message =
            format!("no task to run: {} has {total} task(s), none left after the filters", plan.tasks.display());
        // Another shard may hold every task: an empty shard is not an error, just empty.
        if plan.shard.is_some() && total > 0 {
            suite.status = SuiteStatus::NoTests;
            suite.diagnostics.push(notice(message));
            return suite;
        }
        return fail(suite, SuiteErrorKind::Input, message, Some("check `ids`, `tags` and `difficulty`"));
    }

    let bases = workspace::Bases::new(workspace::bases_dir(&ctx.out_dir, &suite_plan.id));
    let runner = TaskRunner { suite: suite_plan, plan, ctx, bases: &bases, warnings: Default::default() };
    let jobs = plan.jobs.unwrap_or(ctx.jobs).clamp(1, selected.len());
    let cases = run_all(&selected, jobs, &runner);
    bases.remove();
    let warnings = runner.warnings.into_inner().unwrap_or_else(|p| p.into_inner());
    if process::is_cancelled() {
        suite.status = SuiteStatus::Cancelled;
    }
    // Ids from the suite id and task id (classname, name), like every other kind's cases, and
    // the status from the guards every kind's cases go through.
    let collected = Collected {
        cases,
        source: ResultsSource::Report {
            format: "benchmark-tasks".into(),
            files: vec![plan.tasks.display().to_string()],
        },
        ran: true,
        ..Collected::nothing()
    };
    crate::execute::apply_collected(&mut suite, collected, None);
    let usage = totals(&suite.cases, plan.cost_per_1k);
    suite.diagnostics.push(notice(crate::score::metrics_line(&suite.cases, &usage, Some(plan.cost_per_1k))));
    suite.usage = Some(usage);
    let warning = |message| Diagnostic { severity: Severity::Warning, ..notice(message) };
    suite.diagnostics.extend(warnings.into_iter().map(warning));
    suite
}

/// The tasks this suite runs (its filters and shard applied) and how many the file has.
pub(crate) fn select(suite_id: &str, plan: &BenchmarkPlan) -> Result<(Vec<Task>, usize), TaskError> {
    let all = tasks::load(&plan.tasks)?;
    let total = all.len();
    let selected =
        all.into_iter().filter(|t| plan.filter.keeps(t) && Shard::keeps_item(plan.shard, suite_id, &t.id)).collect();
    Ok((selected, total))
}

fn notice(message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Notice,
        source: DiagnosticSource::Benchmark,
        message,
        file: None,
        line: None,
        column: None,
    }
}

/// Runs tasks `jobs` at a time; cases come back in task order.
fn run_all(tasks: &[Task], jobs: usize, runner: &TaskRunner<'_>) -> Vec<Case> {
    let slots = crate::parallel::in_order(tasks, jobs, |task| runner.run(task));
    slots
        .into_iter()
        .zip(tasks)
        .map(|(slot, task)| {
            slot.unwrap_or_else(|| {
                let mut case = Case { name: task.id.clone().into(), ..Case::default() };
                case.set_message(Some("the worker running this task stopped unexpectedly".into()));
                case
            })
        })
        .collect()
}

/// Sums tokens and calls; cost = tokens / 1000 × `cost_per_1k`.
fn totals(cases: &[Case], cost_per_1k: f64) -> Usage {
    let mut usage = Usage::default();
    for u in cases.iter().filter_map(|c| c.extra().eval().usage.as_ref()) {
        usage.tokens += u.tokens;
        usage.llm_calls += u.llm_calls;
        if let Some(n) = u.tokens_in {
            usage.tokens_in = Some(usage.tokens_in.unwrap_or(0) + n);
        }
        if let Some(n) = u.tokens_out {
            usage.tokens_out = Some(usage.tokens_out.unwrap_or(0) + n);
        }
    }
    usage.cost_usd = Some(usage.tokens as f64 / 1000.0 * cost_per_1k);
    usage
}

/// `./agent.sh --x` → `/abs/config/dir/agent.sh --x`, so the executor is found from any task copy.
fn absolute_program(command: &str, base_dir: &Path) -> String {
    let (first, rest) = command.split_once(' ').unwrap_or((command, ""));
    if first.starts_with("./") || first.starts_with("../") {
        let program = process::shell_quote(&base_dir.join(first).to_string_lossy());
        if rest.is_empty() { program } else { format!("{program} {rest}") }
    } else {
        command.to_string()
    }
}

struct TaskRunner<'a> {
    suite: &'a SuitePlan,
    plan: &'a BenchmarkPlan,
    ctx: &'a ExecContext,
    /// Each repository's base state, made once and copied for every task.
    bases: &'a workspace::Bases,
    /// What the suite's warnings say about tasks (test files put back, reports left out...).
    warnings: std::sync::Mutex<Vec<String>>,
}

/// The task's test files, relative to the copy: `test_files` and the files `test_patch` touches
/// when the task names any; else the base's files its test commands name as words
/// (`sh test.sh`, `pytest tests/test_x.py`) and its test ids name before `::`
/// (`tests/test_x.py::test_y`). Files only, never a directory, unless `test_files` says so: a
/// command that runs `cd src && make` must not put the executor's fix in `src` back.
fn test_files(task: &Task, scratch: &Path) -> Vec<String> {
    let mut files: Vec<String> = task.test_files.clone();
    if let Some(patch) = &task.test_patch {
        files.extend(patch_paths(patch));
    }
    if files.is_empty() {
        let words = task
            .test_commands
            .iter()
            .flat_map(|c| c.split(|ch: char| ch.is_whitespace() || ";|&<>()'\"`=,".contains(ch)));
        let ids = task.fail_to_pass.iter().chain(&task.pass_to_pass).filter_map(|n| n.split_once("::").map(|p| p.0));
        for word in words.chain(ids) {
            let word = word.trim_start_matches("./");
            let path = Path::new(word);
            let inside = !word.is_empty()
                && path.components().all(|c| matches!(c, std::path::Component::Normal(_)))
                && !path.starts_with(".git");
            if inside && std::fs::symlink_metadata(scratch.join(path)).is_ok_and(|m| m.is_file()) {
                files.push(word.to_string());
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

/// The files a unified diff touches (both sides of a rename), `/dev/null` left out.
fn patch_paths(patch: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for line in patch.lines() {
        let side = |p: &str| {
            let p = p.split('\t').next().unwrap_or(p).trim_end();
            let p = p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p);
            (p != "/dev/null" && !p.is_empty()).then(|| p.to_string())
        };
        if let Some(rest) = line.strip_prefix("--- ").or_else(|| line.strip_prefix("+++ ")) {
            paths.extend(side(rest));
        }
    }
    paths
}

/// What the executor did.
struct Executed {
    usage: Option<Usage>,
    duration: Duration,
    /// A patch it printed instead of editing the copy.
    patch: Option<String>,
    output: String,
    /// Why an answer it seems to have printed on stdout was not used.
    unread: Option<String>,
}

impl TaskRunner<'_> {
    /// A warning about `task` for the suite's diagnostics (the case's details say it too).
    fn warn(&self, task: &Task, message: &str) {
        let mut warnings = self.warnings.lock().unwrap_or_else(|p| p.into_inner());
        warnings.push(format!("task `{}`: {message}", task.id));
    }

    /// `what: files` in the case's notes and the suite's warnings, when there are any files.
    fn flag(&self, task: &Task, notes: &mut Vec<String>, files: &[String], what: &str) {
        if !files.is_empty() {
            let message = format!("{what}: {}", files.join(", "));
            self.warn(task, &message);
            notes.push(message);
        }
    }

    fn run(&self, task: &Task) -> Case {
        let started = Instant::now();
        let mut case =
            Case { name: task.id.clone().into(), classname: Some(self.suite.name.clone().into()), ..Case::default() };
        if let Some(d) = &task.difficulty {
            case.extra_mut().eval_mut().tags.insert("difficulty".into(), d.clone());
        }
        if !task.tags.is_empty() {
            case.extra_mut().eval_mut().tags.insert("tags".into(), task.tags.join(", "));
        }
        // A patch file that is not there is a broken task, not a change that failed to apply: the
        // code it was to change was never tried, so the task cannot have failed.
        if let Some(problem) = task.patch_file.as_ref().and_then(|p| patch_file_problem(&task.base_dir.join(p))) {
            let message = format!("task `{}`: {problem}; fix its `patch_file` (relative to the tasks file)", task.id);
            return error_case(case, "patch-file-missing", message, started);
        }
        let dir = workspace::task_dir(&self.ctx.out_dir, &self.suite.id, &task.id);
        let scratch = dir.join("repo");
        let log = match std::fs::create_dir_all(&dir).and_then(|_| std::fs::File::create(dir.join("task.log"))) {
            // Capped like every suite log: an executor printing 1 GB leaves an 8 MiB log.
            Ok(file) => process::capped_file_log(file),
            Err(e) => {
                return error_case(case, "harness-error", format!("cannot create {}: {e}", dir.display()), started);
            }
        };
        let mut notes = Vec::new();
        match self.bases.prepare(&task.repo, &task.base_dir, task.commit.as_deref(), &scratch, &log) {
            Ok(false) => {}
            Ok(true) => self.flag(task, &mut notes, std::slice::from_ref(&task.repo), TAMPERED),
            Err(e) => return error_case(case, "workspace-error", e.to_string(), started),
        }
        let base = match workspace::head(&scratch, &log) {
            Ok(base) => base,
            Err(e) => return error_case(case, "workspace-error", e.to_string(), started),
        };
        // Read from the fresh copy, before the executor can change what they name.
        let protected = test_files(task, &scratch);

        let mut usage = None;
        let mut work_duration = Duration::ZERO;
        if let Some(patch) = &task.patch_file {
            match workspace::apply_patch(&scratch, &task.base_dir.join(patch), &log) {
                Ok(method) => notes.push(format!("patch {} applied with {method}", patch.display())),
                Err(e) => return failed_case(case, "patch-does-not-apply", e.to_string(), started),
            }
        } else if let Some(executor) = &self.plan.executor {
            let executed = match self.execute(executor, task, &scratch, &dir, &log) {
                Ok(executed) => executed,
                Err((status, code, message, output)) => {
                    let mut case = error_case(case, code, message, started);
                    case.status = status;
                    case.extra_mut().output = Some(output.into());
                    return case;
                }
            };
            usage = executed.usage;
            work_duration = executed.duration;
            case.extra_mut().output = Some(executed.output.into());
            notes.push(format!("executor finished in {:.1}s", executed.duration.as_secs_f64()));
            if let Some(unread) = &executed.unread {
                self.warn(task, unread);
                notes.push(unread.clone());
            }
            if let Some(patch) = executed.patch {
                match workspace::apply_text(&scratch, &dir.join("executor.patch"), &patch, &log) {
                    Ok(method) => notes.push(format!("its patch applied with {method}")),
                    Err(e) => return failed_case(case, "patch-does-not-apply", e.to_string(), started),
                }
            }
        } else {
            let message = "no executor configured and the task has no `patch_file`".to_string();
            return error_case(case, "no-executor", message, started);
        }

        let patch_file = dir.join("generated.patch");
        let generated = match workspace::diff(&scratch, &base, &patch_file, &log) {
            Ok(patch) => patch,
            Err(e) => return error_case(case, "workspace-error", e.to_string(), started),
        };
        // The tests that grade are the task's: an executor that rewrote them to pass (or deleted
        // them) must not be graded by its own version. SWE-bench does the same with `test_patch`.
        match workspace::restore(&scratch, &base, &protected, &dir.join("test-files.txt"), &log) {
            Ok(restored) => self.flag(task, &mut notes, &restored, RESTORED),
            Err(e) => return error_case(case, "workspace-error", e.to_string(), started),
        }
        if let Some(test_patch) = &task.test_patch {
            match workspace::apply_text(&scratch, &dir.join("test.patch"), test_patch, &log) {
                Ok(method) => notes.push(format!("test_patch applied with {method}")),
                // On test files put back as they are at the base, only a broken task fails here.
                Err(e) => return error_case(case, "test-patch-does-not-apply", e.to_string(), started),
            }
        }

        let reports = if task.reports.is_empty() { &self.plan.reports } else { &task.reports };
        match workspace::date_out_reports(&scratch, reports) {
            Ok(planted) => self.flag(task, &mut notes, &planted, PLANTED),
            Err(e) => return error_case(case, "workspace-error", e.to_string(), started),
        }

        let (test_suite, project) = self.test_plan(task, &scratch);
        let tests = crate::kinds::project::run_project(&test_suite, &project, self.ctx, &NullSink);
        let grade = grade::grade(task, &tests);
        // Tests that pass with no change at all cannot tell a fix from no fix: not a pass.
        // (A task with only PASS_TO_PASS tests asks for nothing to break, which no change meets.)
        let asks_a_fix = !task.fail_to_pass.is_empty() || task.pass_to_pass.is_empty();
        if grade.passed && generated.is_empty() && asks_a_fix {
            let message = format!(
                "the change is empty and the task's tests pass anyway ({}): they pass at the base, so the task \
                 proves nothing; check its FAIL_TO_PASS tests",
                grade.summary
            );
            let mut case = error_case(case, "vacuous-pass", message, started);
            notes.push(format!("generated patch: 0 bytes; tests: {}", grade.summary));
            case.extra_mut().details = Some(notes.join("\n").into());
            return case;
        }
        case.status = if grade.passed { CaseStatus::Passed } else { CaseStatus::Failed };
        case.extra_mut().score = Some(grade.ratio * 100.0);
        case.set_message(Some(grade.summary.clone()));
        case.extra_mut().eval_mut().reasons = grade.reasons;
        if !grade.passed && case.extra().eval().reasons.is_empty() {
            case.extra_mut().eval_mut().reasons.push(Reason {
                code: "tests-failed".into(),
                expected: None,
                actual: None,
                message: None,
            });
        }
        notes.push(format!("tests: {}", grade.summary));
        if let Some(log_file) = &tests.log_file {
            notes.push(format!("test log: {log_file}"));
        }
        // Relative to the output directory, like the test log, so it names the file in an artifact.
        let shown = patch_file.strip_prefix(&self.ctx.out_dir).unwrap_or(&patch_file);
        notes.push(format!("generated patch: {} ({} bytes)", shown.display(), generated.len()));
        case.extra_mut().details =
            Some(format!("{}\n\n{}", notes.join("\n"), crate::text::cap_text(&generated, PATCH_CAP)).into());
        let mut usage = usage.unwrap_or_default();
        usage.cost_usd = Some(usage.tokens as f64 / 1000.0 * self.plan.cost_per_1k);
        case.extra_mut().eval_mut().usage = Some(usage);
        case.duration_ms =
            Some(if work_duration.is_zero() { started.elapsed() } else { work_duration }.as_secs_f64() * 1000.0);
        case
    }

    /// Runs the executor in the task's copy.
    #[allow(clippy::type_complexity)]
    fn execute(
        &self,
        executor: &str,
        task: &Task,
        scratch: &Path,
        dir: &Path,
        log: &LogSink,
    ) -> Result<Executed, (CaseStatus, &'static str, String, String)> {
        let task_json = serde_json::to_string(task).unwrap_or_default();
        let usage_file = dir.join("usage.json");
        let _ = std::fs::remove_file(&usage_file);
        // The task always goes in a file too: inline, a task over the kernel's 128 KiB per
        // variable would stop the executor from starting at all.
        let task_file = dir.join("task.json");
        if let Err(e) = std::fs::write(&task_file, &task_json) {
            let message = format!("cannot write {}: {e}", task_file.display());
            return Err((CaseStatus::Error, "harness-error", message, String::new()));
        }
        let mut spec = CommandSpec::shell(executor, scratch);
        spec.env = self.plan.env.clone();
        process::set_small_env(&mut spec.env, "FCORR_TASK_ID", &task.id);
        process::set_small_env(&mut spec.env, "FCORR_TASK_JSON", &task_json);
        spec.env.extend([
            ("FCORR_TASK_FILE".to_string(), task_file.to_string_lossy().into_owned()),
            ("FCORR_TASK_DIR".to_string(), scratch.to_string_lossy().into_owned()),
            ("FCORR_USAGE_FILE".to_string(), usage_file.to_string_lossy().into_owned()),
        ]);
        spec.stdin = Some(task_json.into_bytes());
        spec.pass_env = self.plan.pass_env.clone();
        let stdout_path = dir.join("executor.stdout");
        spec.stdout_file = Some(stdout_path.clone());
        let outcome = process::run(&spec, self.plan.executor_timeout, self.ctx.grace, log);
        let output = answer::cap(&outcome.output);
        match &outcome.exit {
            Exit::Code(0) => {}
            Exit::TimedOut => {
                let message = format!(
                    "the executor did not finish within {}s and was killed",
                    self.plan.executor_timeout.as_secs()
                );
                return Err((CaseStatus::Timeout, "executor-timeout", message, output));
            }
            Exit::Cancelled => return Err((CaseStatus::Error, "cancelled", "cancelled".into(), output)),
            Exit::Code(code) => {
                return Err((
                    CaseStatus::Error,
                    "executor-error",
                    format!("the executor exited with code {code}"),
                    output,
                ));
            }
            Exit::Signal(signal) => {
                let message = format!("the executor was {}", crate::execute::signal_text(*signal));
                return Err((CaseStatus::Error, "executor-error", message, output));
            }
            Exit::SpawnFailed { message, .. } => {
                return Err((CaseStatus::Error, "executor-error", message.clone(), output));
            }
        }
        let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
        let trimmed = stdout.trim();
        let answers = trimmed.starts_with('{') || trimmed.starts_with("diff --git") || trimmed.starts_with("--- ");
        if outcome.stdout_file_cut > 0 && answers {
            // A patch or JSON answer with its middle cut out is not what the executor said:
            // applying or reading it would judge something else.
            let message = format!(
                "the executor printed more on stdout than fcorr keeps ({} bytes cut from the middle); its patch or \
                 answer is incomplete and was not used",
                outcome.stdout_file_cut
            );
            return Err((CaseStatus::Error, "executor-output-cut", message, output));
        }
        let mut executed = Executed { usage: None, duration: outcome.duration, patch: None, output, unread: None };
        if trimmed.starts_with('{') {
            match serde_json::from_str::<Value>(trimmed) {
                Ok(json) => {
                    executed.usage = json.get("usage").and_then(answer::usage_from_json);
                    executed.patch = json.get("patch").and_then(Value::as_str).map(String::from);
                    if let Some(ms) = json.get("duration_ms").and_then(Value::as_f64) {
                        executed.duration = Duration::from_secs_f64(ms.max(0.0) / 1000.0);
                    }
                }
                Err(e) => {
                    executed.unread = Some(format!(
                        "the executor's stdout starts like a JSON answer but is not JSON ({e}): no patch or \
                         usage was read from it"
                    ));
                }
            }
        } else if trimmed.starts_with("diff --git") || trimmed.starts_with("--- ") {
            executed.patch = Some(stdout.clone());
        } else if let Some(at) = ["\ndiff --git ", "\n--- a/", "\n--- "].iter().find_map(|m| trimmed.find(m)) {
            // A patch is applied only when it is the whole answer: text before it may be part of
            // it or not, and guessing would apply something the executor did not mean.
            let lines = trimmed[..at].lines().count();
            executed.unread = Some(format!(
                "the executor's stdout holds a diff after {lines} line(s) of other text: not applied (a patch on \
                 stdout must be all of it, or the `patch` of a JSON answer)"
            ));
        }
        if let Some(usage) = std::fs::read(&usage_file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| answer::usage_from_json(v.get("usage").unwrap_or(&v)))
        {
            executed.usage = Some(usage);
        }
        Ok(executed)
    }

    /// The task's tests as a project suite for the harness engine, so they are detected,
    /// installed, run and their reports parsed exactly like any project's.
    fn test_plan(&self, task: &Task, scratch: &Path) -> (SuitePlan, ProjectPlan) {
        let id = format!("{}/{}", self.suite.id, task.id);
        let mut env = self.plan.env.clone();
        process::set_small_env(&mut env, "FCORR_TASK_ID", &task.id);
        let reports = if task.reports.is_empty() { &self.plan.reports } else { &task.reports };
        let project = ProjectPlan {
            ecosystem: self.plan.runner.clone(),
            framework: None,
            install: self.plan.install,
            timeouts: PhaseTimeouts {
                install: self.plan.test_timeout,
                build: self.plan.test_timeout,
                test: self.plan.test_timeout,
            },
            env,
            commands: Commands { test: test_script(&task.test_commands), ..Commands::default() },
            reports: reports.iter().map(|pattern| ReportSpec { pattern: pattern.clone(), format: None }).collect(),
            copy_from: Vec::new(),
            // A task's tests are the repository's own; fcorr's publishing tokens stay out.
            pass_env: Vec::new(),
            // The task's test commands are run as written, step by step.
            run_script_steps: false,
            // A benchmark task passes or fails on one run of its tests: no retries.
            retries: 0,
            retries_policy: Default::default(),
            rerun_only: None,
            build_script: None,
            workspace: None,
            left_out: Vec::new(),
        };
        let suite = SuitePlan {
            id: id.clone(),
            name: id,
            kind: SuiteKind::Project,
            runner: &Project,
            root: scratch.to_path_buf(),
            display_path: task.repo.clone(),
            policy: self.suite.policy,
            threshold: 100.0,
            weight: 1.0,
            critical: false,
            weights: Default::default(),
            origin: None,
            settings: KindPlan::new(project.clone()),
            quarantine: Vec::new(),
        };
        (suite, project)
    }
}

/// Several test commands as one script that runs them all and fails if any failed. They share
/// one shell, so a `cd` or `export` carries on to the next command (SWE-bench's evaluation
/// scripts rely on that); an `exit` in one ends the script, and the trap makes it fail when an
/// earlier command failed, whatever status that `exit` gave.
fn test_script(commands: &[String]) -> Option<String> {
    match commands {
        [] => None,
        [one] => Some(one.clone()),
        many => {
            let mut script = String::from(
                "fcorr_rc=0\ntrap 'fcorr_st=$?; if [ \"$fcorr_rc\" -ne 0 ] && [ \"$fcorr_st\" -eq 0 ]; then \
                 fcorr_st=1; fi; exit $fcorr_st' EXIT\n",
            );
            for command in many {
                script.push_str(&format!("{{ {command}\n}} || fcorr_rc=1\n"));
            }
            script.push_str("exit $fcorr_rc");
            Some(script)
        }
    }
}

/// Why a task's `patch_file` cannot be applied before anything is tried: it is not there, not a
/// file, or not readable. `None` when it is a file.
fn patch_file_problem(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => None,
        Ok(_) => Some(format!("its patch_file {} is not a file", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("its patch_file {} does not exist", path.display()))
        }
        Err(e) => Some(format!("its patch_file {} cannot be read: {e}", path.display())),
    }
}

fn error_case(mut case: Case, code: &str, message: String, started: Instant) -> Case {
    case.status = CaseStatus::Error;
    case.extra_mut().eval_mut().reasons.push(Reason {
        code: code.into(),
        expected: None,
        actual: None,
        message: Some(message.clone()),
    });
    case.set_message(Some(message));
    case.duration_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    case.extra_mut().score = Some(0.0);
    case
}

fn failed_case(case: Case, code: &str, message: String, started: Instant) -> Case {
    Case { status: CaseStatus::Failed, ..error_case(case, code, message, started) }
}

#[cfg(test)]
mod tests;
